#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, refused calls as a CPU lever: every call the
# seccomp filter refuses waits for the supervisor (SECCOMP_RET_USER_NOTIF),
# which runs outside the run's cgroup and CPU budget.  A skill refused in
# a tight loop from 4 processes used to make the supervisor spend about as
# much CPU answering as the skill spent asking.  Now the answers are
# rationed (src/denials.h, SR_DENIALS_BURST): past the budget the callers
# wait in the kernel, the supervisor's CPU stays a small fraction of the
# wall clock, the run still ends at its wall clock, every refusal is still
# answered EPERM and counted, and the throttling is recorded (warning,
# reason seccomp_throttled); SIGTERM and a limit's kill end a run whose
# callers wait.  As root and as uid 65534.
set -u
: "${TRY_SYSCALL:?TRY_SYSCALL must name the built probe (make check sets it)}"
: "${HOG:?HOG must name the built hog (make check sets it)}"
# shellcheck source=../integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"

T=$(tmpdir)
B="$T/flood-skill"
mkbundle "$B" "Refused system calls in a tight loop."
cp "$TRY_SYSCALL" "$B/try-syscall"
cp "$HOG" "$B/hog"
skip_modes

for who in $MODES; do
  w=$(mode_workspace "$who")
  if [ "$who" = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi

  # 1. Four processes refused non-stop until the wall clock (3 s) ends
  # the run.  The supervisor is skillrun's own process (init is its
  # clone): its CPU is sampled until it exits.
  id=flood-$who
  start=$(date +%s%N)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --timeout 3s "$B" -- sh -c 'cd /workspace/inputs/bundle &&
      for i in 1 2 3 4; do ./try-syscall unshare 4000000000 & done; wait' \
    >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  cpu_ms=$(cpu_ms_until_exit "$pid")
  wait "$pid"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  diag "$who: supervisor CPU ${cpu_ms} ms over ${wall_ms} ms of wall clock"
  is "$who: the flood ends at its wall clock (exit 124)" "$rc" 124
  check "$who: ... within 3 s and the kill grace, not held up by waiting callers (${wall_ms} ms)" \
    test "$wall_ms" -lt 15000
  # Before the budget the supervisor spent ~100% of a CPU here: a quarter
  # of the wall clock is a generous bound that still fails clearly.
  check "$who: the supervisor's CPU is bounded (${cpu_ms} ms <= 25% of ${wall_ms} ms)" \
    test $((cpu_ms * 4)) -le "$wall_ms"
  check "$who: the audit verifies" audit_ok "$T/$id.audit"
  is "$who: the throttling is recorded" \
    "$("$JQ" -r 'select(.event == "warning" and .reason == "seccomp_throttled") | "\(.burst) \(.rate)"' "$T/$id.audit" | head -n 1)" \
    "256 200"
  check "$who: the refusals are still reported (syscall_denied unshare)" \
    test "$("$JQ" -r 'select(.event == "syscall_denied" and .syscall == "unshare") | .count' "$T/$id.audit")" -gt 256

  # 2. The counts stay exact and every refusal is answered: 4 x 200
  # refusals go beyond the burst, each caller gets EPERM and the audit
  # counts all 800.
  id=counted-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --timeout 60s "$B" -- sh -c 'cd /workspace/inputs/bundle &&
      for i in 1 2 3 4; do ./try-syscall unshare 200 & done; wait' \
    >"$T/$id.audit" 2>"$T/$id.err"
  rc=$?
  is "$who: a throttled run exits 0" "$rc" 0
  out="$w/default/$id/logs/stdout.log"
  is "$who: ... every caller got EPERM" "$(grep -cx 'unshare=EPERM' "$out" 2>/dev/null)" 4
  is "$who: ... syscall_denied counts every refusal" \
    "$("$JQ" -r 'select(.event == "syscall_denied" and .syscall == "unshare") | .count' "$T/$id.audit")" 800
  is "$who: ... and records the throttling once" \
    "$("$JQ" -c 'select(.event == "warning" and .reason == "seccomp_throttled")' "$T/$id.audit" | wc -l)" 1
  check "$who: ... the audit verifies" audit_ok "$T/$id.audit"

  # 3. Cancellation while callers wait: SIGTERM ends the run.
  id=cancel-$who
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --timeout 60s "$B" -- sh -c 'cd /workspace/inputs/bundle &&
      for i in 1 2 3 4; do ./try-syscall unshare 4000000000 & done; wait' \
    >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  sleep 2
  start=$(date +%s%N)
  kill -TERM "$pid"
  wait "$pid"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  is "$who: SIGTERM cancels a throttled run (128+15)" "$rc" 143
  ended_promptly "$who" "$wall_ms" "$T/$id.audit" cancelled

  # 4. A limit's kill while callers wait: a spinning process beside the
  # flood exhausts --cpu-seconds.
  id=limit-$who
  start=$(date +%s%N)
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$id" \
    --timeout 60s --cpu-seconds 2 "$B" -- sh -c 'cd /workspace/inputs/bundle &&
      for i in 1 2 3 4; do ./try-syscall unshare 4000000000 & done; ./hog cpu 1' \
    >"$T/$id.audit" 2>"$T/$id.err"
  rc=$?
  wall_ms=$((($(date +%s%N) - start) / 1000000))
  is "$who: the CPU limit kills a throttled run (137)" "$rc" 137
  check "$who: ... promptly (${wall_ms} ms)" test "$wall_ms" -lt 20000
  is "$who: ... its terminal record says cpu_exceeded" \
    "$(field "$T/$id.audit" execution_completed .status)" cpu_exceeded
  check "$who: ... the audit verifies" audit_ok "$T/$id.audit"
  check "$who: no process of the runs is left" \
    not pgrep -f "^./(try-syscall unshare|hog cpu)"
done
finish
