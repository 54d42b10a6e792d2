#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, CPU time the kernel reaps away: a skill that
# ignores SIGCHLD has its children reaped by the kernel as they exit, and
# their CPU time is then in no process's times (not in its parent's
# cutime, not in init's rusage).  The supervisor's sampler, which sums
# those times, saw a worker only while it lived: rounds of short workers
# spent 12 CPU-seconds against a budget of 3, and the run "succeeded"
# with cpu_usec 0.4 s.  Where the kernel lets the supervisor count the
# tree's CPU time (a task-clock perf event on init, inherited by every
# process: policy_resolved.sampler.cpu_counter), the budget holds; with a
# cgroup, cpuacct.usage or cpu.stat count every task anyway.  As root and
# as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }

for mode in $MODES; do
  t0=$(date +%s)
  attack $mode --cpu-seconds 1 --timeout 60s -- cpureap:6
  counter=$(field "$AUDIT" policy_resolved '.sampler.cpu_counter // "cgroup"')
  if [ "$counter" = false ]; then
    # perf_event_open(2) refused (kernel.perf_event_paranoid above 2):
    # the documented gap (skillrun(1) LIMITS).
    diag "$mode: no CPU counter on this host: $(result cpureap:6)"
    pass "$mode: # SKIP no CPU counter (kernel.perf_event_paranoid)"
  else
    is "$mode: workers reaped by the kernel end the run at the CPU budget (137)" "$rc" 137
    is "$mode: ... status cpu_exceeded" \
      "$(field "$AUDIT" execution_completed .status)" cpu_exceeded
    check "$mode: ... the attacker never spent its 6 CPU-seconds ($(result cpureap:6))" \
      [ -z "$(result cpureap:6)" ]
    check "$mode: ... cpu_usec counts the budget spent" \
      [ "$(field "$AUDIT" execution_completed .cpu_usec)" -ge 1000000 ]
  fi
  check "$mode: ... ended well before the 6 CPU-seconds took their wall time" \
    [ $(($(date +%s) - t0)) -lt 20 ]
  check "$mode: ... the audit stream verifies" audit_ok "$AUDIT"
  check "$mode: no process of the run is left" no_attacker_left
done
finish
