#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the signals beside skillrun(1)'s usual list
# whose default action also ends a process: SIGABRT, SIGSEGV, SIGBUS,
# SIGILL, SIGFPE, SIGTRAP and SIGSYS sent with kill(2), SIGSTKFLT and the
# real-time signals (an orchestrator's stop signal is configurable:
# docker's STOPSIGNAL, systemd's KillSignal=, `timeout -s`).  Each killed
# skillrun while the skill ran: no execution_completed in the stream or in
# audit.jsonl, no metadata.json, the run left to --gc, and an exit status
# of 128 + N that the EXIT STATUS table gives to a skill killed by that
# signal (139: "the skill segfaulted"), though SIGKILL alone may leave a
# run unrecorded.  Now each cancels the run as SIGTERM does: 128 + N with
# status cancelled, whole records, nothing of the run left.  As root and
# as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/other-signals
mkbundle "$B" "Sleeps while skillrun gets a signal."
chmod -R a+rX "$T"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  for sig in ABRT SEGV BUS ILL FPE TRAP SYS STKFLT RTMIN RTMIN+3 RTMAX; do
    n=$(kill -l "$sig")
    id=sig-$n
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
      -- /bin/sleep 30 >"$W/a.$id" 2>"$W/e.$id" &
    pid=$!
    wait_running "$W/a.$id"
    kill -"$sig" $pid
    wait $pid
    is "$mode: SIG$sig to skillrun while the skill runs: exit $((128 + n))" "$?" "$((128 + n))"
    is "$mode: ... the stream ends cancelled" "$(last "$W/a.$id")" "execution_completed	cancelled"
    check "$mode: ... and verifies" audit_ok "$W/a.$id"
    is "$mode: ... state_changed cancelling names SIG$sig" \
      "$("$JQ" -r 'select(.state == "cancelling") | .signal' "$W/a.$id")" "$n"
    closed_ok "$mode: SIG$sig" "$W/default/$id" cancelled
  done
  is "$mode: no process of the runs is left" "$(test_pids 'sleep 30' | wc -l)" 0
done

finish
