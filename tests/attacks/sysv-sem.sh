#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, memory held in System V semaphores: an array
# of 32000 semaphores is 2 MiB of kernel memory that needs no mapping, no
# descriptor and no process to be held (it lives in the run's IPC
# namespace), and a namespace takes 32000 of them, 61 GiB.  The
# supervisor's sampler sees none of it: 512 MiB held that way went
# through a 64 MiB limit, status succeeded, memory_peak 344 KB.  Where the
# supervisor samples the run (an unprivileged user here, or root with
# `cgroup off`) semget is refused with ENOSYS, as shmget is; with a cgroup
# the kernel charges the arrays and the run is stopped as oom.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }

printf 'include default\nseccomp-allow msgget msgsnd\n' >"$T/msg.profile"
printf 'include default\ncgroup off\nseccomp-allow msgget msgsnd\n' >"$T/msg-off.profile"
chmod 644 "$T/msg.profile" "$T/msg-off.profile"

memory_runs

for run in "${runs[@]}"; do
  run_mode "$run"

  # 256 MiB of semaphores against 64 MiB.
  attack "$mode" "${opts[@]}" --memory 64M --timeout 30s -- semhog:256
  by=$(field "$AUDIT" policy_resolved '.policy.limits.memory.enforced_by')
  line=$(result semhog:256)
  if [ "$by" = supervisor ]; then
    is "$run: sampled: the semaphore hog's run exits 0" "$rc" 0
    check "$run: sampled: ... its semget answered ENOSYS (${line:-no report})" \
      [ "$line" = "BLOCKED:semget:ENOSYS after 0 MiB" ]
    is "$run: sampled: ... policy_resolved names semget among the refused calls" \
      "$(field "$AUDIT" policy_resolved '.sampler.refused_syscalls | index("semget") != null')" true
    if [ "$(field "$AUDIT" policy_resolved .seccomp.denials_reported)" = true ]; then
      is "$run: sampled: ... the refused semget is reported" \
        "$(field "$AUDIT" syscall_denied 'select(.syscall == "semget") | .count')" 1
    fi
  else
    is "$run: $by: the semaphore hog ends the run (137)" "$rc" 137
    is "$run: $by: ... status oom" "$(field "$AUDIT" execution_completed .status)" oom
    is "$run: $by: ... limit_exceeded memory" "$(field "$AUDIT" limit_exceeded .limit)" memory
    check "$run: $by: ... the hog never held its 256 MiB (${line:-no report})" \
      [ "${line#ESCAPED}" = "$line" ]
  fi
  check "$run: ... the audit stream verifies" audit_ok "$AUDIT"
  check "$run: no process of the run is left" no_attacker_left

  # Message queues, which a caller's profile may let in (seccomp-allow
  # msgget msgsnd): each queued message, empty ones too, is kernel memory
  # the sampler cannot see either.  200 queues held 229 MB of slab under
  # a 64 MiB limit, status succeeded.  Sampled, msgget stays refused
  # (ENOSYS) whatever the profile says; a cgroup charges the messages.
  opts=(-p "$T/msg.profile")
  [ "$run" = root-off ] && opts=(-p "$T/msg-off.profile")
  attack "$mode" "${opts[@]}" --memory 64M --timeout 30s -- msghog:200
  by=$(field "$AUDIT" policy_resolved '.policy.limits.memory.enforced_by')
  line=$(result msghog:200)
  if [ "$by" = supervisor ]; then
    is "$run: sampled: the message-queue hog's run exits 0" "$rc" 0
    check "$run: sampled: ... its msgget answered ENOSYS, the profile's allow notwithstanding (${line:-no report})" \
      [ "$line" = "BLOCKED:msgget:ENOSYS after 0 queues" ]
  else
    is "$run: $by: the message-queue hog ends the run as oom" \
      "$(field "$AUDIT" execution_completed .status)" oom
    check "$run: $by: ... it never held its 200 queues (${line:-no report})" \
      [ "${line#ESCAPED}" = "$line" ]
  fi
  check "$run: ... the audit stream verifies" audit_ok "$AUDIT"
done
finish
