#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, what reads a run's record after it:
# - --verify-audit on a pipe or a FIFO (an orchestrator's `--verify-audit
#   /dev/stdin` or `<(fetch ledger)`): the file was opened non-blocking
#   (so that opening a FIFO never hangs) and read so, and a writer a
#   moment late got a complete ledger the verdict "incomplete: no events
#   (empty file)" (exit 2, a FIFO) or "cannot read: Resource temporarily
#   unavailable" (exit 125, a pipe).  Now a pipe or FIFO is read to its
#   end, as any reader would.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (a run of root's)"
. "$(dirname "$0")/common.sh"

# ------------------------------------------------ --verify-audit on a pipe
skill root -- /bin/true
run_ok root "a run whose ledger is read through a pipe and a FIFO"
L=$WS_root/default/$RUN_ID/audit.jsonl
n=$(wc -l <"$L")

out=$( (sleep 1; cat "$L") | "$SKILLRUN" --verify-audit /dev/stdin 2>&1)
is "--verify-audit /dev/stdin, a writer a second late: ok (exit $?)" \
  "${out%%,*}" "ok: $n events"
out=$("$SKILLRUN" --verify-audit <(sleep 1; cat "$L") 2>&1)
is "--verify-audit <(...), a writer a second late: ok (exit $?)" \
  "${out%%,*}" "ok: $n events"
# The writers give up after 10 s: one waiting for a reader that is gone
# must not outlive the test.
late_writer() { (sleep 1; timeout 10 sh -c "$1"' >"$2"' - "$2" "$T/fifo") & }
mkfifo "$T/fifo"
late_writer 'cat "$1"' "$L"
out=$(timeout 20 "$SKILLRUN" --verify-audit "$T/fifo" 2>&1)
is "--verify-audit FIFO, opened by its writer a second late: ok (exit $?)" \
  "${out%%,*}" "ok: $n events"
wait
late_writer 'head -n 2 "$1"' "$L"
out=$(timeout 20 "$SKILLRUN" --verify-audit "$T/fifo" 2>&1)
is "--verify-audit FIFO with two lines: incomplete (exit $?)" \
  "${out%%: the last event*}" "skillrun: incomplete: $T/fifo:2"
wait

finish
