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
# - --verify-audit on a whole ledger with part of a line added after its
#   execution_completed said "incomplete" (exit 2: the run may still be
#   going), as if the ledger had been cut short; nothing may follow
#   execution_completed, so it is "tampered" (exit 1), as a whole line
#   there already was.
# - The runs index (--metrics) shared by every tenant of a workspace root:
#   one run whose line was cut short (a full file system, a file-size
#   limit) left a line without its newline, and the next run's line, a
#   tenant's of its own, was appended to it: both became one malformed
#   line, and the other tenant's run was never counted.  Now a line that
#   does not fit is taken back, and a line always starts on a line of its
#   own.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root (runs and a runs index of root's)"
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
# A FIFO whose writer has written the whole ledger and gone before
# skillrun reads it (the data waits in the FIFO while another reader, an
# orchestrator, holds it open; or `cat ledger >fifo &` that finishes
# between skillrun's two opens).  skillrun opened the FIFO again to wait
# for a writer, and with the writer gone that open waited for another,
# for ever; now the ledger is read, as cat(1) reads it.
out=$("$PYTHON3" - "$T/fifo" "$L" "$SKILLRUN" <<'EOF2'
import os, subprocess, sys
fifo, ledger, skillrun = sys.argv[1:4]
held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
w = os.open(fifo, os.O_WRONLY)
with open(ledger, "rb") as f:
    os.write(w, f.read())
os.close(w)
try:
    p = subprocess.run(["timeout", "10", skillrun, "--verify-audit", fifo],
                       capture_output=True, text=True)
    print(p.returncode, (p.stdout + p.stderr).split(",")[0].strip())
finally:
    os.close(held)
EOF2
)
is "--verify-audit FIFO whose writer wrote the ledger and left: ok, no hang" \
  "$out" "0 ok: $n events"

# Part of a line after a whole ledger: written after its end, so added to
# it (skillrun never writes after execution_completed), not cut short.
{ cat "$L"; printf '{"schema":"skillrun.audit/1","seq":%s,"event":"warn' "$n"; } >"$T/added"
out=$("$SKILLRUN" --verify-audit "$T/added" 2>&1)
is "--verify-audit, part of a line after execution_completed: tampered (exit $?)" \
  "$out" "skillrun: tampered: $T/added:$((n + 1)): an event after execution_completed"
rm -f "$T/added" # not a ledger for the schema check (finish)

# ------------------------------------------ a torn line in the runs index
# Tenant a's run, under a file-size limit the index has a few bytes left
# in, then tenant b's: b's run is counted, and a's line is not half there.
INDEX=$WS_root/.metrics/runs.log
"$PYTHON3" - "$INDEX" <<'EOF'
import os, sys
p = sys.argv[1]
size, limit = os.path.getsize(p), 1024 * 1024
with open(p, "a") as f:
    while size < limit - 40:
        n = min(1000, limit - 40 - size)
        f.write("#" * (n - 1) + "\n")
        size += n
EOF
before=$("$SKILLRUN" --metrics --workspace-root "$WS_root" | grep '^skillrun_metrics_index_[a-z]* ')
# 1 MiB: the bundle's attacker binary (some 200 KiB) must still be
# copied under the limit.
CALLER=(bash -c 'ulimit -f 1024; exec "$@"' -)
skill root --tenant a -- /bin/true
CALLER=()
is "tenant a's run, its index line past the file-size limit: exit 0" "$rc" 0
check "... it warns that the run is not in the index" \
  grep -q "cannot add the run to the runs index" "$ERR"
is "... the index still ends with a whole line" "$(tail -c 1 "$INDEX" | od -An -tx1 | tr -d ' ')" 0a
skill root --tenant b -- /bin/true
is "tenant b's run: exit 0" "$rc" 0
metrics=$("$SKILLRUN" --metrics --workspace-root "$WS_root")
is "--metrics counts tenant b's run" \
  "$(grep '^skillrun_runs_total{tenant="b"' <<<"$metrics")" \
  'skillrun_runs_total{tenant="b",skill="attack-skill",status="succeeded"} 1'
is "... and skips no more lines than before" \
  "$(grep '^skillrun_metrics_index_skipped ' <<<"$metrics")" \
  "$(grep '^skillrun_metrics_index_skipped ' <<<"$before")"

# An index that already ends without a newline (a line cut short by an
# older skillrun, a crash): the next run's line starts a line of its own.
printf '1 1700000000 c attack-skill succ' >>"$INDEX"
skill root --tenant d -- /bin/true
is "tenant d's run after a torn line: exit 0" "$rc" 0
metrics=$("$SKILLRUN" --metrics --workspace-root "$WS_root")
is "--metrics counts tenant d's run" \
  "$(grep '^skillrun_runs_total{tenant="d"' <<<"$metrics")" \
  'skillrun_runs_total{tenant="d",skill="attack-skill",status="succeeded"} 1'
skipped_before=$(grep '^skillrun_metrics_index_skipped ' <<<"$before")
is "... and skips only the torn line" \
  "$(grep '^skillrun_metrics_index_skipped ' <<<"$metrics")" \
  "skillrun_metrics_index_skipped $((${skipped_before##* } + 1))"

finish
