#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, trust files (issue 14, item 5): BUNDLE.sig,
# --signature, --capability, --conf, profiles and --input sources are
# opened with O_NOFOLLOW|O_NONBLOCK and must be regular files of bounded
# size.  Whoever owns the directory a bundle sits in can plant a FIFO named
# BUNDLE.sig; before the fix it hung a root run forever, before any timer
# was armed.  Each planted FIFO, device, symbolic link or oversized file
# must be refused within seconds with a message that says what it is, as
# root and as an unprivileged user.
# --capability-fd is the caller's own descriptor, read to its end: a pipe
# whose writer never writes (or never closes) used to hold skillrun in
# read(2) with its cancellation signals blocked, so SIGTERM did nothing
# and only SIGKILL ended it, without a record.  Now the wait ends with the
# first cancellation signal: exit 128+N, its execution_completed.
. "$(dirname "$0")/../integration/lib.sh"
# It plays the caller as root and as uid 65534 against another local user
# (files chowned, setpriv): only root can set that up.
[ "$(id -u)" -eq 0 ] || skip_all "needs root to play root, uid $NOBODY and another local user"
. "$(dirname "$0")/common.sh"

S=$T/sig-skill
mkbundle "$S"
mkfifo "$S.sig" # BUNDLE.sig, planted beside the bundle
mkdir -p "$T/bait"
mkfifo "$T/bait/fifo"
printf 'memory 64M\n' >"$T/bait/real.profile"
ln -s "$T/bait/real.profile" "$T/bait/link.profile"
ln -s /etc/passwd "$T/bait/link"
head -c $((20 << 20)) /dev/zero >"$T/bait/huge"
chmod -R a+rX "$T"

# quick MODE LABEL WANT-RC WANT-TEXT SKILLRUN-ARGS...: the run ends with
# WANT-RC within 5 seconds (a hang is cut at 20), and skillrun's stderr
# says WANT-TEXT.
n=0
quick() {
  local mode=$1 label=$2 want=$3 text=$4 w pre=() t0 rc el
  shift 4
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --); else
    w=$WS_root pre=(env); fi
  t0=$(date +%s%N)
  timeout 20 "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "t$n" \
    --audit-file "$w/t$n.audit" "$@" >/dev/null 2>"$w/t$n.err"
  rc=$?
  el=$((($(date +%s%N) - t0) / 1000000))
  is "$mode: $label: exit $want" "$rc" "$want"
  check "$mode: ... within 5 s (took $el ms)" [ "$el" -lt 5000 ]
  if grep -q -- "$text" "$w/t$n.err"; then pass "$mode: ... saying '$text'"; else
    fail "$mode: ... saying '$text'"
    diag "  stderr: $(head -c 300 "$w/t$n.err")"
  fi
  AUDIT=$w/t$n.audit
}

for mode in root user; do
  quick $mode "a FIFO named BUNDLE.sig" 123 "is a FIFO, not a regular file" \
    "$S" -- /bin/true
  is "$mode: ... recorded as statement_invalid" \
    "$(field "$AUDIT" bundle_rejected .reason)" statement_invalid
  check "$mode: ... and the run has its terminal record" \
    test "$(field "$AUDIT" execution_completed .status)" = refused
  quick $mode "--signature FIFO" 123 "is a FIFO" --signature "$T/bait/fifo" "$B" -- /bin/true
  quick $mode "--signature /dev/zero" 123 "is a character device" \
    --signature /dev/zero "$B" -- /bin/true
  quick $mode "--signature a 20 MiB file" 123 "is too large" \
    --signature "$T/bait/huge" "$B" -- /bin/true
  quick $mode "--signature a symbolic link" 123 "is a symbolic link" \
    --signature "$T/bait/link" "$B" -- /bin/true
  quick $mode "--capability FIFO" 123 "is a FIFO" --capability "$T/bait/fifo" "$B" -- /bin/true
  quick $mode "--capability a symbolic link" 123 "is a symbolic link" \
    --capability "$T/bait/link" "$B" -- /bin/true
  quick $mode "--conf FIFO" 125 "is a FIFO" --conf "$T/bait/fifo" "$B" -- /bin/true
  quick $mode "--conf /dev/zero" 125 "is a character device" --conf /dev/zero "$B" -- /bin/true
  quick $mode "-p FIFO" 125 "is a FIFO" -p "$T/bait/fifo" "$B" -- /bin/true
  quick $mode "-p a symbolic link" 125 "is a symbolic link" \
    -p "$T/bait/link.profile" "$B" -- /bin/true
  quick $mode "--input FIFO" 123 "is a FIFO" -i "$T/bait/fifo" "$B" -- /bin/true
  quick $mode "--input /dev/zero" 123 "is a character device" -i /dev/zero:z "$B" -- /bin/true
  quick $mode "--input a symbolic link" 123 "is a symbolic link" -i "$T/bait/link" "$B" -- /bin/true

  # The token's pipe: a FIFO held open for reading and writing by the
  # caller, so it never has data nor an end.  SIGTERM once skillrun waits
  # on it (poll, or read(2) before the fix), timed from the signal: a slow
  # start under a loaded sanitizer build is not the wait this is about.
  # A hang is cut by timeout's SIGTERM at 20 s, then SIGKILL (137).
  n=$((n + 1))
  w=$WS_root pre=(env)
  [ $mode = user ] && w=$WS_user pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)
  timeout --preserve-status -k 5 20 "${pre[@]}" "$SKILLRUN" --workspace-root "$w" \
    --execution-id "t$n" --audit-file "$w/t$n.audit" --capability-fd 3 "$B" -- /bin/true \
    >/dev/null 2>"$w/t$n.err" 3<>"$T/bait/fifo" &
  tpid=$!
  spid=
  for _ in $(seq 1000); do
    spid=$(cat "/proc/$tpid/task/$tpid/children" 2>/dev/null) spid=${spid%% *}
    [ -n "$spid" ] && case $(cat "/proc/$spid/wchan" 2>/dev/null) in *poll* | pipe_read) break ;; esac
    sleep 0.01
  done
  t0=$(date +%s%N)
  [ -n "$spid" ] && kill -TERM "$spid"
  wait $tpid
  rc=$?
  el=$((($(date +%s%N) - t0) / 1000000))
  is "$mode: --capability-fd of a pipe that never delivers: SIGTERM cancels the run (143)" "$rc" 143
  check "$mode: ... at once (took $el ms after the signal)" [ "$el" -lt 5000 ]
  is "$mode: ... saying so on one line" "$(cat "$w/t$n.err")" "skillrun: cancelled by signal 15 (TERM)"
  is "$mode: ... and the run has its terminal record" \
    "$(field "$w/t$n.audit" execution_completed .status)" cancelled
  check "$mode: ... whose chain verifies" audit_ok "$w/t$n.audit"
  check "$mode: ... and no run directory" test ! -e "$w/default/t$n"
  quick $mode "--capability-fd of /dev/zero" 123 "cannot read the capability" \
    --capability-fd 3 "$B" -- /bin/true 3</dev/zero
  is "$mode: ... recorded as capability_invalid" \
    "$(field "$AUDIT" bundle_rejected .reason)" capability_invalid
  quick $mode "--capability-fd of a directory" 123 "cannot read the capability" \
    --capability-fd 3 "$B" -- /bin/true 3<"$T/bait"
done
host_unchanged trustfiles
finish
