#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Metrics (skillrun(1) METRICS): every run that ends adds a line to
# {root}/.metrics/runs.log; --metrics prints the Prometheus text of it,
# which promtool accepts, counting runs by tenant, skill and status,
# refusals by reason, and the figures; an index someone else could
# have written is refused, a malformed line skipped and counted.
set -u
# shellcheck source=lib.sh
. "$TOP_SRCDIR/tests/integration/lib.sh"

sandbox_possible || skip_all "no user namespaces here"

T=$(tmpdir)
B="$T/metrics-skill"
mkbundle "$B" "Writes an artifact."
chmod -R a+rX "$B"

# run ROOT ID [OPTION...] -- COMMAND...: leaves $rc, $audit, $err.
run() { run_in "$T" "$@"; }

# metrics ROOT: --metrics into $T/metrics.prom; $rc.
metrics() {
  "$SKILLRUN" --metrics --workspace-root "$1" >"$T/metrics.prom" 2>"$T/metrics.err"
  rc=$?
}
sample() { grep -F -x -- "$1" "$T/metrics.prom"; }

# ---------------------------------------------------------------- index
R=$(tmpdir)
mkdir "$R/runs"
R="$R/runs"
chmod 755 "$R"
mkdir -p "$B/scripts"
printf '#!/bin/sh\nprintf report >/workspace/outputs/report.txt\n' >"$B/scripts/out.sh"
chmod -R a+rX "$B"
chmod 755 "$B/scripts/out.sh"
run "$R" ok1 --tenant acme --label trace_id=4bf92f3577b34da6 "$B" -- /workspace/inputs/bundle/scripts/out.sh
is "ok run exits 0" "$rc" 0
run "$R" ok2 --tenant acme "$B" -- /workspace/inputs/bundle/scripts/out.sh
run "$R" fail1 --tenant acme "$B" -- sh -c 'exit 3'
is "failing run exits 3" "$rc" 3
run "$R" missing --tenant acme "$B" -- /no/such/program
is "missing program exits 127" "$rc" 127
run "$R" slow --tenant beta --timeout 1s "$B" -- sleep 30
is "timeout exits 124" "$rc" 124
run "$R" refused --tenant beta --expect-sha256 \
  0000000000000000000000000000000000000000000000000000000000000000 "$B" -- true
is "digest mismatch exits 123" "$rc" 123
run "$R" denied --tenant beta "$B" -- sh -c 'unshare -U true; true'
is "a run with a refused system call exits 0" "$rc" 0

idx="$R/.metrics/runs.log"
check "the index exists" test -f "$idx"
is "one line per run" "$(wc -l <"$idx")" 7
is "the index is the caller's alone (0600 in a 0700 directory)" \
  "$(stat -c %a "$R/.metrics" "$idx" | tr '\n' ' ')" "700 600 "

metrics "$R"
is "--metrics exits 0" "$rc" 0
check "--metrics writes nothing to stderr" test ! -s "$T/metrics.err"
check "runs by tenant, skill and status: acme succeeded 2" \
  sample 'skillrun_runs_total{tenant="acme",skill="metrics-skill",status="succeeded"} 2'
check "... acme failed 2 (exit 3 and 127)" \
  sample 'skillrun_runs_total{tenant="acme",skill="metrics-skill",status="failed"} 2'
check "... beta timeout 1" \
  sample 'skillrun_runs_total{tenant="beta",skill="metrics-skill",status="timeout"} 1'
check "... beta refused 1, before the skill was known" \
  sample 'skillrun_runs_total{tenant="beta",skill="",status="refused"} 1'
check "refusals by reason" \
  sample 'skillrun_refusals_total{tenant="beta",reason="digest_mismatch"} 1'
check "artifacts: 2 files" sample 'skillrun_artifacts_total{tenant="acme"} 2'
check "artifact bytes: 2 x 6" sample 'skillrun_artifact_bytes_total{tenant="acme"} 12'
check "duration histogram: 4 acme runs" \
  sample 'skillrun_run_duration_seconds_count{tenant="acme"} 4'
check "... and its +Inf bucket" \
  sample 'skillrun_run_duration_seconds_bucket{tenant="acme",le="+Inf"} 4'
check "... the timeout's second is in beta's sum" \
  awk '$1 == "skillrun_run_duration_seconds_sum{tenant=\"beta\"}" && $2 >= 1 { ok = 1 }
       END { exit !ok }' "$T/metrics.prom"
check "refused system calls are summed" \
  grep -Eq '^skillrun_syscalls_denied_total\{tenant="beta"\} [1-9]' "$T/metrics.prom"
check "no run in progress" sample 'skillrun_runs_in_progress 0'
check "labels never become Prometheus labels" not grep -q 'trace_id\|4bf92f' "$T/metrics.prom"
check "7 records, none skipped" \
  sh -c 'grep -qx "skillrun_metrics_index_records 7" "$1" &&
         grep -qx "skillrun_metrics_index_skipped 0" "$1"' - "$T/metrics.prom"
if command -v promtool >/dev/null 2>&1; then
  check "promtool check metrics accepts the output" \
    sh -c 'promtool check metrics <"$1" >"$1.lint" 2>&1' - "$T/metrics.prom"
else
  pass "# SKIP promtool not installed (Debian package prometheus)"
fi

# A run in progress is counted while its supervisor lives.
"$SKILLRUN" --workspace-root "$R" --execution-id live "$B" -- sleep 30 \
  >"$T/live.audit" 2>"$T/live.err" &
live=$!
for _ in $(seq 100); do
  grep -q '"state":"running"' "$T/live.audit" 2>/dev/null && break
  sleep 0.1
done
metrics "$R"
check "a live run is in progress" sample 'skillrun_runs_in_progress 1'
kill -TERM "$live"
wait "$live"
metrics "$R"
check "... and no longer once it is over" sample 'skillrun_runs_in_progress 0'
check "... its cancellation is counted" \
  sample 'skillrun_runs_total{tenant="default",skill="metrics-skill",status="cancelled"} 1'

# An unprivileged user's own root (lib.sh $MODES: the test user, or
# whoever runs the tests when that is not root).
if [[ " $MODES " == *" user "* ]]; then
  U=$(user_workspace)
  as_user "$SKILLRUN" --workspace-root "$U" --tenant u "$B" -- true >/dev/null 2>&1
  as_user "$SKILLRUN" --metrics --workspace-root "$U" >"$T/user.prom" 2>&1
  is "as uid $USER_UID: --metrics exits 0" "$?" 0
  check "as uid $USER_UID: its run is counted" grep -qx \
    'skillrun_runs_total{tenant="u",skill="metrics-skill",status="succeeded"} 1' \
    "$T/user.prom"
  check "as uid $USER_UID: its index is its own" \
    test "$(stat -c %u "$U/.metrics/runs.log")" = "$USER_UID"
else
  skip_modes
fi

# A root without runs or without an index: zeros, not an error.
E=$(tmpdir)
metrics "$E"
is "an empty root: exit 0" "$rc" 0
check "... zero records" sample 'skillrun_metrics_index_records 0'
metrics "$E/absent"
is "a missing root: exit 0" "$rc" 0

# Each line ends with its run's execution id, which gc looks for before it
# counts a dead run (skillrun(1) METRICS): the lines of older versions,
# without it, are still read (below).
check "each line names its run's execution id" grep -q ' ok1$' "$idx"
is "... every one" "$(awk '{print NF}' "$idx" | sort -u)" 13

# ------------------------------------------------- a reader that stops
# A reader that stops early (| head) is not an error of skillrun's: no
# "Broken pipe", exit 0, as coreutils end quietly on SIGPIPE; a write that
# really fails (/dev/full) still is one.  500 tenants make the text far
# larger than a pipe holds (in lines without ids, as older versions wrote).
P=$(tmpdir)
mkdir -m 700 "$P/.metrics"
for i in $(seq 1 500); do
  echo "1 1700000000 t$i s$i succeeded - 1500 1000 1048576 1 10 0"
done >"$P/.metrics/runs.log"
chmod 600 "$P/.metrics/runs.log"
metrics "$P"
check "a large text (500 tenants) is larger than a pipe holds" \
  test "$(wc -c <"$T/metrics.prom")" -gt 1000000
"$SKILLRUN" --metrics --workspace-root "$P" 2>"$T/pipe.err" | head -n 1 >"$T/pipe.out"
is "--metrics | head -n 1: exits 0" "${PIPESTATUS[0]}" 0
is "... says nothing on stderr" "$(cat "$T/pipe.err")" ""
is "... and head got the first line" "$(cat "$T/pipe.out")" \
  "# HELP skillrun_runs_total Runs that ended, by tenant, skill and status (skill is empty when the run ended before its SKILL.md was read)."
if [ -w /dev/full ]; then
  "$SKILLRUN" --metrics --workspace-root "$P" >/dev/full 2>"$T/full.err"
  is "--metrics >/dev/full: exits 125" "$?" 125
  check "... saying why" grep -q 'cannot write the metrics: No space left on device' "$T/full.err"
fi

# ---------------------------------------------------------------- hostile
H=$(tmpdir)
mkdir -m 700 "$H/.metrics"
cp "$idx" "$H/.metrics/runs.log"
good=$(($(wc -l <"$idx") + 1))
chmod 600 "$H/.metrics/runs.log"
{
  echo 'garbage'
  echo '1 1700000000 acme x"y succeeded - 1 - - 0 0 0'
  echo '1 1700000000 acme s won - 1 - - 0 0 0'
  head -c 5000 /dev/zero | tr '\0' 'a'
  echo
  echo '1 1700000000 acme other-skill succeeded - 1 - - 0 0 0'
  printf '1 1700000000 acme partial succeeded - 1 - - 0 0 0'
} >>"$H/.metrics/runs.log"
metrics "$H"
is "malformed lines: --metrics still exits 0" "$rc" 0
check "... and counts the good ones ($good, not the unterminated last)" \
  sample "skillrun_metrics_index_records $good"
check "... and the bad ones (4)" sample 'skillrun_metrics_index_skipped 4'
check "... a forged quote never reaches the output" not grep -q 'x"y\|x\\"y' "$T/metrics.prom"
if command -v promtool >/dev/null 2>&1; then
  check "... promtool still accepts it" \
    sh -c 'promtool check metrics <"$1" >/dev/null 2>&1' - "$T/metrics.prom"
fi
chmod 620 "$H/.metrics/runs.log"
metrics "$H"
is "a group-writable index is refused (125)" "$rc" 125
check "... naming it" grep -q 'runs.log: not a regular file' "$T/metrics.err"
chmod 600 "$H/.metrics/runs.log"
if needs_root "an index of another user (not the root's owner) is refused"; then
  chown "$NOBODY" "$H/.metrics/runs.log"
  metrics "$H"
  is "an index of another user (not the root's owner) is refused (125)" "$rc" 125
  chown 0 "$H/.metrics/runs.log"
fi
mv "$H/.metrics/runs.log" "$H/.metrics/real.log"
ln -s real.log "$H/.metrics/runs.log"
metrics "$H"
is "a symlinked index is refused (125)" "$rc" 125
rm "$H/.metrics/runs.log"
mkfifo -m 600 "$H/.metrics/runs.log"
timeout 10 "$SKILLRUN" --metrics --workspace-root "$H" >/dev/null 2>&1
is "a FIFO for an index is refused without hanging (125)" "$?" 125
# A run does not write into an index it cannot trust, and still succeeds.
rm "$H/.metrics/runs.log"
mv "$H/.metrics/real.log" "$H/.metrics/runs.log"
chmod 0777 "$H/.metrics"
before=$(wc -l <"$H/.metrics/runs.log")
run "$H" untrusted "$B" -- true
is "a run under an untrusted index exits 0" "$rc" 0
check "... warns on stderr" grep -q 'cannot add the run to the runs index' "$err"
is "... and does not write to it" "$(wc -l <"$H/.metrics/runs.log")" "$before"

# A process of the caller's that holds the index's lock (stopped, stuck)
# does not hold the run's end past its record: the run waits 5 s at most,
# then ends without its line and says so (skillrun(1) METRICS).  It waited
# for good, its cancellation signals blocked.
chmod 0700 "$H/.metrics"
hold_lock "$H/.metrics/runs.log"
check "a process of the caller's holds the index's lock" not flock -n "$H/.metrics/runs.log" true
# Lines of this section's runs (an earlier check left the file's last
# line without its newline, which the next line's write gives it).
lines() { grep -c ' default metrics-skill ' "$H/.metrics/runs.log"; }
before=$(lines)
t0=$(date +%s%N)
rc=0
timeout 30 "$SKILLRUN" --workspace-root "$H" --execution-id held "$B" -- true >"$T/held.audit" 2>"$T/held.err" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "a run beside the held lock exits 0" "$rc" 0
check "... within 10 s (${ms} ms)" [ "$ms" -lt 10000 ]
check "... at least the 5 s it waits (${ms} ms)" [ "$ms" -ge 5000 ]
check "... saying the lock was held" grep -q 'runs index (--metrics): another process held its lock for 5 s' "$T/held.err"
is "... its record complete" "$("$JQ" -r 'select(.event == "execution_completed") | .status' "$T/held.audit")" succeeded
is "... and no line added" "$(lines)" "$before"
kill "$holder"
wait "$holder" 2>/dev/null
check "the holder is gone, and its lock with it" flock -n "$H/.metrics/runs.log" true
run "$H" after "$B" -- true
is "the next run adds its line" "$(lines)" "$((before + 1))"

finish
