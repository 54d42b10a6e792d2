# SPDX-License-Identifier: GPL-2.0-or-later
# Shared setup for the attack regression suite: sourced by every
# tests/attacks/*.sh after tests/integration/lib.sh.  Builds a bundle that
# carries tests/attacks/attacker, runs it through the real skillrun as root
# and as the unprivileged test user (lib.sh $MODES), and checks the
# attacker's report.
# shellcheck shell=bash

: "${ATTACKER:?ATTACKER must name the built attacker (make check sets it)}"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/attack-skill
mkbundle "$B" "Tries known sandbox escapes and reports each outcome."
cp "$ATTACKER" "$B/attacker"
chmod 755 "$B/attacker"
mkdir -p "$B/scripts"
printf '#!/bin/sh\necho hi\n' >"$B/scripts/run.sh"
chmod -R a+rX "$T"

# A file on the host the sandbox must neither see nor change.
MARKER=$T/host-marker
echo "host marker $$" >"$MARKER"
chmod 644 "$MARKER"
# Size, mtime, inode, mode and content; not ctime, which the test's own
# `chmod -R` of its directory updates.
marker_stamp() { stat -c '%s %Y %i %a' "$MARKER" && cat "$MARKER"; }
MARKER_STAMP=$(marker_stamp)

WS_root=$(tmpdir)
WS_user=$(user_workspace)
_run_n=0

# skill MODE [SKILLRUN-OPTION...] -- COMMAND...: one run of the bundle
# with COMMAND, as MODE's user.  Sets $rc, $RUN_ID, $OUT (the skill's
# stdout.log, absent when the run made none), $AUDIT, $ERR (skillrun's
# stderr) and $STDOUT (skillrun's own stdout).  The caller's environment
# and fds pass through: the tests plant bait in them, and in the state
# $CALLER leaves: a command run as the test's own user (before the switch
# to MODE's, so that it need not be readable by that user) that then runs
# skillrun (empty: none).
CALLER=()
skill() {
  local mode=$1 opts=() w as=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    opts+=("$1")
    shift
  done
  shift
  _run_n=$((_run_n + 1))
  if [ "$mode" = user ]; then
    w=$WS_user
    as=("${AS_USER[@]}")
  else w=$WS_root; fi
  RUN_ID=a$_run_n
  AUDIT=$w/$RUN_ID.audit
  ERR=$w/$RUN_ID.err
  STDOUT=$w/$RUN_ID.stdout
  OUT=$w/default/$RUN_ID/logs/stdout.log
  "${CALLER[@]}" "${as[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$RUN_ID" \
    --audit-file "$AUDIT" "${opts[@]}" "$B" -- "$@" >"$STDOUT" 2>"$ERR"
  rc=$?
}

# attack MODE [SKILLRUN-OPTION...] -- CASE...: skill, running the attacker
# with the given cases; $OUT is then always a file (empty without a log).
attack() {
  local head=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do
    head+=("$1")
    shift
  done
  shift
  skill "${head[@]}" -- /workspace/inputs/bundle/attacker "$@"
  if [ ! -f "$OUT" ]; then
    OUT=${AUDIT%.audit}.nolog
    : >"$OUT"
  fi
}

# result CASE: the attacker's line for CASE, without the "CASE=" key.
result() { awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' "$OUT"; }

# blocked MODE CASE...: each case reported BLOCKED.
blocked() {
  local mode=$1 c line
  shift
  for c; do
    line=$(result "$c")
    case "$line" in
    BLOCKED:*) pass "$mode: $c: ${line#BLOCKED:}" ;;
    *)
      fail "$mode: $c is blocked"
      diag "  got: '${line:-no report}' (skillrun exit $rc)"
      ;;
    esac
  done
}

# run_ok MODE TEXT: the run itself ended normally and its audit verifies.
run_ok() {
  if [ "$rc" -eq 0 ]; then pass "$1: $2: skillrun exits 0"; else
    fail "$1: $2: skillrun exits 0"
    diag "  exit $rc; stderr:"
    sed 's/^/#   /' "$ERR" | head -n 20
    diag "  last audit event: $(tail -n 1 "$AUDIT" 2>/dev/null | cut -c1-600)"
  fi
  check "$1: $2: the audit stream verifies" audit_ok "$AUDIT"
}

# Whether group 0 is root's private group here: no member, nobody else's
# primary group.
root_group_private() {
  [ -z "$(getent group 0 | cut -d: -f4)" ] &&
    [ "$(getent passwd | awk -F: '$4 == 0 && $3 != 0' | wc -l)" -eq 0 ]
}

# host_unchanged TEXT: the marker and host /tmp, /dev/shm are untouched.
host_unchanged() {
  is "$1: the host marker is unchanged" "$(marker_stamp)" "$MARKER_STAMP"
  local planted
  planted=$(ls -d /tmp/attack-* /dev/shm/attack-* /var/tmp/attack-* /run/attack-* \
    "$T"/attack-pwned* 2>/dev/null)
  is "$1: no attacker file appeared on the host" "$planted" ""
}

# try_conf PREFIX MODE CONF BUNDLE [ARGS...]: one run with --conf CONF
# (as root, or as uid $NOBODY for MODE user) whose skill leaves
# outputs/ran; execution ids PREFIX1, PREFIX2...; sets $rc, $AUDIT, $ERR
# and $RAN (yes when the skill ran).
_try_conf_n=0
try_conf() {
  local id=$1$((_try_conf_n += 1)) mode=$2 c=$3 b=$4 w pre=()
  shift 4
  if [ "$mode" = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(env); fi
  AUDIT=$w/$id.audit ERR=$w/$id.err
  timeout 60 "${pre[@]}" "$SKILLRUN" --conf "$c" --workspace-root "$w" --execution-id "$id" \
    --audit-file "$AUDIT" "$@" "$b" -- /bin/sh -c ': >/workspace/outputs/ran' >/dev/null 2>"$ERR"
  rc=$?
  RAN=no
  [ -e "$w/default/$id/outputs/ran" ] && RAN=yes
}

# memory_runs: $runs, the runs of an attack on a run's memory: each of
# $MODES, and root-off, root with `cgroup off` (the supervisor's sampler,
# as root), whose profile is $T/off.profile.  run_mode RUN [PROFILE]: $mode
# and $opts for one (-p PROFILE, $T/off.profile by default, for root-off).
memory_runs() {
  local m
  printf 'include default\ncgroup off\n' >"$T/off.profile"
  chmod 644 "$T/off.profile"
  runs=()
  for m in $MODES; do
    runs+=("$m")
    [ "$m" = root ] && runs+=(root-off)
  done
}
run_mode() {
  mode=${1%-off} opts=()
  [ "$1" = root-off ] && opts=(-p "${2:-$T/off.profile}")
}

# The cgroup v1 memory and pids cgroups $V1/{memory,pids}/$OUTER a test
# makes to start skillrun in, as a scheduler would (the test sets V1 and
# OUTER): mk_outer makes them, rm_outer removes them and whatever a run
# left in them (nothing runs there by then), _outer_cleanup is the test's
# EXIT trap, and outer_caller sets CALLER to start skillrun in them.
mk_outer() {
  mkdir "$V1/memory/$OUTER" "$V1/pids/$OUTER" || die "cannot make $OUTER"
}
rm_outer() {
  local h
  for h in memory pids; do
    [ -d "$V1/$h/$OUTER" ] || continue
    find "$V1/$h/$OUTER" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
    rmdir "$V1/$h/$OUTER" || diag "could not remove $V1/$h/$OUTER"
  done
}
_outer_cleanup() {
  rm_outer
  cleanup
}
outer_caller() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  CALLER=(sh -c 'for h in memory pids; do echo $$ >"$0/$h/$1/cgroup.procs" || exit 99; done; shift; exec "$@"' "$V1" "$OUTER")
}
