#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a cancellation signal that comes before the
# run starts (an orchestrator that cancels at once, a Ctrl-C to a shell's
# background job).  skillrun blocked its cancellation signals only at the
# run's first stage (run.c, sr_stage_start): one that came while main()
# ran before it was lost when skillrun was started with it ignored (a
# shell starts a background command with SIGINT ignored), and the run went
# on to its end, although skillrun(1) says SIGINT and SIGTERM "cancel
# whatever their disposition".  Now main() blocks them before anything
# else.  strace holds skillrun 3 s in its first getrandom(2), the first
# thing main() does after that block, and the signal comes meanwhile.
# The window before main() (the kernel's execve and the dynamic loader,
# about a millisecond) remains: skillrun(1) EXIT STATUS says so.  Also:
# commands that are not a run still end at once on SIGTERM.  As root and
# as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
STRACE=$(command -v strace || true)
[ -n "$STRACE" ] || skip_all "strace(1) is not installed (Debian: strace)"
"$STRACE" -qq -o /dev/null true 2>/dev/null || skip_all "strace cannot trace here (ptrace refused)"
skip_modes

T=$(tmpdir)
B=$T/early-signals
mkbundle "$B" "Sleeps while skillrun gets a signal before its run starts."
chmod -R a+rX "$T"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  for sig in INT TERM; do
    n=$(kill -l $sig)
    id=early-$sig
    # Both ignored, as a background job of a script that also ignores
    # SIGTERM starts them.  LeakSanitizer cannot stop the world under
    # ptrace (group-signals.sh).
    (
      trap '' INT TERM
      exec env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        $([ $mode = user ] && echo "${AS_USER[@]}") \
        "$STRACE" -qq -o /dev/null -e trace=getrandom \
        -e inject=getrandom:delay_enter=3000000:when=1 \
        "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
        -- /bin/sleep 2 >"$W/a.$id" 2>"$W/e.$id"
    ) &
    pid=$!
    sr=
    for _ in $(seq 250); do
      sr=$(test_pids "^$SKILLRUN .*execution-id $id" | head -n 1)
      [ -n "$sr" ] && break
      sleep 0.02
    done
    check "$mode: SIG$sig: (skillrun started)" test -n "$sr"
    sleep 1 # inside the 3 s getrandom(2)
    [ -n "$sr" ] && kill -$sig "$sr"
    wait $pid
    rc=$?
    is "$mode: SIG$sig (ignored by the caller) before the run starts: exit $((128 + n))" \
      "$rc" "$((128 + n))"
    is "$mode: ... the stream ends cancelled" "$(last "$W/a.$id")" "execution_completed	cancelled"
    check "$mode: ... and verifies" audit_ok "$W/a.$id"
  done
  is "$mode: no process of the runs is left" "$(test_pids 'sleep 2' | wc -l)" 0
done

# Not a run: --verify-audit waiting on a FIFO that never ends ends at once
# on SIGTERM and SIGINT (at its default: a background job starts with it
# ignored), as it did before main() blocked them.
for sig in TERM INT; do
  mkfifo "$T/fifo-$sig"
  exec 8<>"$T/fifo-$sig"
  env --default-signal=INT "$SKILLRUN" --verify-audit /dev/stdin <"$T/fifo-$sig" >/dev/null 2>&1 &
  pid=$!
  sleep 0.5
  kill -$sig $pid
  t0=$(date +%s%N)
  for _ in $(seq 100); do
    kill -0 $pid 2>/dev/null || break
    sleep 0.02
  done
  t1=$(date +%s%N)
  check "--verify-audit waiting on a FIFO ends within 2 s of SIG$sig" \
    test $(((t1 - t0) / 1000000)) -lt 2000
  kill -KILL $pid 2>/dev/null
  wait $pid 2>/dev/null
  exec 8>&-
done

finish
