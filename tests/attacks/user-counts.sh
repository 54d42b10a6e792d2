#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, per-user kernel counts a skill shares with its
# caller.  An ordinary caller's skill is the caller's host uid, seen
# through the run's user namespace, and since Linux 5.14 what it charges
# there (ucounts) is charged to that uid above as well.  A skill held the
# 128 inotify instances fs.inotify.max_user_instances gives a uid, and
# while it slept the caller's own inotify_init(2) on the host failed with
# EMFILE; one that queued real-time signals to itself up to its
# RLIMIT_SIGPENDING (inherited from the caller) left the caller no queued
# signal and no POSIX timer (EAGAIN).  init now lowers the namespace's
# /proc/sys/user limits (16 inotify instances) and the skill's
# RLIMIT_SIGPENDING; the caller's own calls keep working while the hog
# lives.  Root's runs, whose skill is a pool uid, were no better: above
# the run's namespace the counts are its owner's, root's, and root's own
# inotify_init1 and sigqueue failed the same way.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

at_most_1024() { [ "${1#*:}" = EAGAIN ] && [ "${1%%:*}" -le 1024 ] 2>/dev/null; }
no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }

# hog MODE CASE KEY: CASE (which prints KEY=N:ERRNO, then holds 8 s) in a
# run in the background; once it holds, the mode's user calls
# host-counts on the host.  Sets $held and $host_rc, $host_out.
hog() {
  local mode=$1 case=$2 key=$3 w id out i
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  id=a$((_run_n + 1))
  out=$w/default/$id/logs/stdout.log
  attack "$mode" --timeout 60s -- "$case:8" &
  local pid=$!
  held=
  for i in $(seq 1 300); do
    held=$(awk -v k="$key=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' \
      "$out" 2>/dev/null)
    [ -n "$held" ] && break
    sleep 0.1
  done
  if [ "$mode" = user ]; then
    host_out=$(as_user "$ATTACKER" host-counts 2>&1)
  else
    host_out=$("$ATTACKER" host-counts 2>&1)
  fi
  host_rc=$?
  wait "$pid"
  _run_n=$((_run_n + 1))
}

for mode in $MODES; do
  hog "$mode" inotifyhog inotify_held
  is "$mode: the skill gets 16 inotify instances, then EMFILE" "$held" 16:EMFILE
  check "$mode: ... meanwhile the caller's own inotify_init1 and sigqueue work (${host_out:-ok})" \
    [ "$host_rc" -eq 0 ]

  hog "$mode" sigqhog sigq_held
  check "$mode: the skill queues at most 1024 signals, then EAGAIN (${held:-no report})" \
    at_most_1024 "$held"
  check "$mode: ... meanwhile the caller's own inotify_init1 and sigqueue work (${host_out:-ok})" \
    [ "$host_rc" -eq 0 ]
  check "$mode: no process of the run is left" no_attacker_left
done

# Where /proc/sys is read-only and the kernel makes no procfs for the
# sandbox (a container's: Docker binds /proc/sys read-only and masks
# /proc entries), the limits cannot be set: the run goes on, as without
# Landlock, saying so in a warning; a strict profile refuses to run.
# Played with a mount namespace whose /proc/sys is bound read-only and a
# profile with `proc tmpfs` (as containers need).  So is a read-only
# /proc/sys/net alone, where the network namespace's tstamp_allow_data is
# set: that failed every run, strict or not.
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
  printf 'include default\nproc tmpfs\n' >"$T/ro-proc.profile"
  printf 'include default\nproc tmpfs\nstrict yes\n' >"$T/ro-strict.profile"
  chmod 644 "$T/ro-proc.profile" "$T/ro-strict.profile"
  for ro in /proc/sys /proc/sys/net; do
    CALLER=(unshare -m --propagation private sh -c
      "mount --bind $ro $ro && mount -o remount,bind,ro $ro"' && exec "$@"' sh)
    for mode in $MODES; do
      skill "$mode" -p "$T/ro-proc.profile" -- /bin/true
      is "$mode: read-only $ro: the run goes on" "$rc" 0
      is "$mode: ... with a warning saying the limits are not set" \
        "$(field "$AUDIT" warning .reason)" userns
      check "$mode: ... which says why" grep -q "inotify and fanotify limits are not set" "$AUDIT"
      check "$mode: ... and that the network namespace keeps tstamp_allow_data" \
        grep -q "nor net.core.tstamp_allow_data" "$AUDIT"
      # A strict run as uid 65534 stops earlier here: no cgroup.
      [ "$mode" = root ] || continue
      skill "$mode" -p "$T/ro-strict.profile" -- /bin/true
      is "$mode: ... a strict profile refuses (125)" "$rc" 125
      is "$mode: ... layer_failed, layer userns" "$(field "$AUDIT" layer_failed .layer)" userns
      is "$mode: ... and the run ends with execution_completed" \
        "$(field "$AUDIT" execution_completed .exit_code)" 125
    done
  done
  # /proc/sys, or /proc/sys/user, hidden under an empty tmpfs: not a
  # kernel without the files (user namespaces have them since Linux 4.9).
  # The run went on with no limit and no warning, strict or not.  So is
  # /proc/sys/net hidden, which failed every run.
  for mask in 'mount -t tmpfs -o ro,mode=555 sr-mask /proc/sys' \
    'mount -t tmpfs -o mode=755 sr-mask /proc/sys/user' \
    'mount -t tmpfs -o mode=755 sr-mask /proc/sys/net'; do
    CALLER=(unshare -m --propagation private sh -c "$mask"' && exec "$@"' sh)
    what=${mask##* }
    for mode in $MODES; do
      skill "$mode" -p "$T/ro-proc.profile" -- /bin/true
      is "$mode: $what masked: the run goes on" "$rc" 0
      is "$mode: ... with a warning saying the limits are not set" \
        "$("$JQ" -r 'select(.event == "warning" and .reason == "userns") | .reason' "$AUDIT")" userns
      [ "$mode" = root ] || continue
      skill "$mode" -p "$T/ro-strict.profile" -- /bin/true
      is "$mode: ... a strict profile refuses (125)" "$rc" 125
      is "$mode: ... layer_failed, layer userns" "$(field "$AUDIT" layer_failed .layer)" userns
    done
  done
  # A /proc with no /proc/sys at all: systemd's ProcSubset=pid, a service
  # unit's hardening, mounts it with subset=pid.  The kernel has the
  # files (a procfs of the sandbox's own shows them) and the limits hold;
  # they were skipped as if it had none, and the skill held all 128.
  if unshare -m --propagation private sh -c 'mount -t proc -o subset=pid proc /proc && [ ! -e /proc/sys ]' 2>/dev/null; then
    CALLER=(unshare -m --propagation private sh -c 'mount -t proc -o subset=pid proc /proc && exec "$@"' sh)
    for mode in $MODES; do
      attack "$mode" -- inotifyhog:0
      is "$mode: /proc with subset=pid: the run goes on" "$rc" 0
      is "$mode: ... the skill gets 16 inotify instances, then EMFILE" "$(result inotify_held)" 16:EMFILE
    done
  else
    pass "# SKIP /proc with subset=pid: this kernel has no such mount option (Linux 5.8)"
  fi
  CALLER=()
  skill root -p "$T/ro-proc.profile" -- /bin/true
  is "with /proc/sys writable no such warning" "$rc:$(field "$AUDIT" warning .reason)" "0:"
else
  pass "# SKIP read-only /proc/sys: playing a container's takes root (unshare -m)"
fi
finish
