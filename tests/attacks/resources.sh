#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, resource abuse: fork bomb, memory hog, disk fill
# of every writable tmpfs, log flood, CPU spin, fd exhaustion and huge argv.
# Whatever holds the whole-run limits here (a cgroup as root, the
# supervisor's sampler and RLIMIT_NPROC as an unprivileged user; see
# tests/integration/limits-matrix.sh): the fork bomb ends the run at the
# pids limit, the hog is stopped as oom, tmpfs caps answer ENOSPC, the log
# cap holds, the CPU budget ends a spinner.  As root and as an
# unprivileged user, with short limits to stay fast.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# number_after TEXT WORD: the integer after "WORD " in TEXT.
number_after() { sed -n "s/.*$2 \([0-9][0-9]*\).*/\1/p" <<<"$1"; }
no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }

for mode in $MODES; do
  # Fork bomb (the classic ":(){ :|:& };:"), contained by the pids limit.
  t0=$(date +%s)
  attack $mode --pids 32 --timeout 30s -- forkbomb:100000
  by=$(field "$AUDIT" policy_resolved '.policy.limits.pids.enforced_by')
  st=$(field "$AUDIT" execution_completed .status)
  if [ "$by" = rlimit ] && [ "$rc" = 0 ]; then
    # The supervisor's sampler ends the run when it sees the tree at the
    # limit; this attacker gives up at the first refused fork and exits,
    # which can be before the next sample: RLIMIT_NPROC refused the fork
    # all the same (skillrun(1) LIMITS).
    blocked $mode forkbomb:100000
    diag "$mode: the attacker gave up before a sample saw the limit"
  else
    is "$mode: the fork bomb ends the run at the pids limit (137)" "$rc" 137
    is "$mode: ... status pids_exceeded" "$st" pids_exceeded
  fi
  check "$mode: ... pids_peak within the limit" \
    [ "$(field "$AUDIT" execution_completed .pids_peak)" -le 32 ]
  check "$mode: ... the audit stream verifies" audit_ok "$AUDIT"
  # The attacker may report the refused fork before the run is stopped.
  forks=$(number_after "$(result forkbomb:100000)" after)
  check "$mode: ... no more forks than the limit (${forks:-not reported})" \
    [ "${forks:-0}" -le 32 ]
  check "$mode: the fork-bomb run ended quickly" [ $(($(date +%s) - t0)) -lt 15 ]
  check "$mode: no process of the fork bomb is left" no_attacker_left
  check "$mode: the audit records how pids were enforced" \
    sh -c "'$JQ' -e 'select(.event == \"policy_resolved\")' '$AUDIT' | grep -q enforced_by"

  # Memory hog: 1 GiB against a 64 MiB limit.
  attack $mode --memory 64M -- memhog:1024
  if [ "$rc" -eq 0 ]; then
    blocked $mode memhog:1024
    mib=$(number_after "$(result memhog:1024)" after)
    check "$mode: the hog got no more than the 64 MiB limit ($mib MiB)" [ "${mib:-999}" -le 64 ]
  else
    # A cgroup OOM kill is the other legitimate outcome.
    is "$mode: memory hog killed as OOM" "$(field "$AUDIT" execution_completed .status)" oom
  fi

  # Disk fill: 2 GiB into each writable tmpfs; each stops at its cap.
  attack $mode -- diskfill:/workspace/scratch:2048 diskfill:/tmp:2048 \
    diskfill:/dev/shm:2048 diskfill:/workspace/outputs:2048
  run_ok $mode "disk fill"
  blocked $mode diskfill:/workspace/scratch:2048 diskfill:/tmp:2048 \
    diskfill:/dev/shm:2048 diskfill:/workspace/outputs:2048
  for c in scratch:256 tmp:64 shm:64 outputs:256; do
    d=${c%%:*} cap=${c##*:}
    line=$(grep -m1 "^diskfill:[^:]*$d:" "$OUT")
    got=$(number_after "$line" after)
    case "$line" in *ENOSPC*) e=1 ;; *) e=0 ;; esac
    check "$mode: $d fill hit ENOSPC at or below $cap MiB ($got MiB)" \
      [ "$e" = 1 ] && [ "${got:-999}" -le "$cap" ]
  done

  # Log flood: 64 MiB of stdout against a 1 MiB cap.
  t0=$(date +%s)
  attack $mode --log-cap 1M --timeout 30s -- logflood:64
  check "$mode: the log flood run was not a timeout" [ "$rc" -ne 124 ]
  w=$(dirname "$(dirname "$OUT")")
  kept=$(($(stat -c %s "$w/logs/stdout.log" 2>/dev/null || echo 0) + $(stat -c %s "$w/logs/stderr.log" 2>/dev/null || echo 0)))
  # The cap counts the skill's bytes; skillrun appends one short marker line.
  check "$mode: the logs kept at most 1 MiB plus the marker ($kept bytes)" \
    [ "$kept" -le $((1048576 + 160)) ]
  is "$mode: the audit says 1 MiB was kept" \
    "$(field "$AUDIT" execution_completed '.logs.stdout.kept + .logs.stderr.kept')" 1048576
  check "$mode: the log flood is on the record" \
    sh -c "grep -q -e '\"log_truncated\"' -e '\"limit\":\"log\"' '$AUDIT'"
  check "$mode: the audit of the flood verifies" audit_ok "$AUDIT"

  # CPU spin: one CPU-second, then the budget ends it.
  t0=$(date +%s)
  attack $mode --cpu-seconds 1 --timeout 30s -- cpuspin
  check "$mode: the spinner did not run to the wall-clock timeout (exit $rc)" \
    [ "$rc" -ne 124 ] && [ "$rc" -ne 0 ]
  is "$mode: the spinner's run is cpu_exceeded" "$(field "$AUDIT" execution_completed .status)" cpu_exceeded
  check "$mode: the spinner ended within seconds" [ $(($(date +%s) - t0)) -lt 10 ]

  # fd exhaustion and huge argv.
  attack $mode -- nofile:1024 argv
  run_ok $mode "fd exhaustion and huge argv"
  blocked $mode nofile:1024 argv
  check "$mode: nothing of any run is left" no_attacker_left
  host_unchanged $mode
done
finish
