#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, shared memory held behind one mapped page: a
# skill maps 64 MiB of shared anonymous memory, fills it, unmaps all but
# its first page, and again.  The kernel keeps every page of each object
# while one page of it is mapped; the supervisor's sampler counted each
# object at the size still mapped, and 2 GiB went through a 256 MiB limit
# with memory_peak ~67 MB.  Where the supervisor samples the run (an
# unprivileged user here, or root with `cgroup off`) the filter refuses
# shared anonymous mappings (ENOSYS, like memfd_create and shmget); with a
# cgroup the kernel charges the pages and the run is stopped as oom.
# The same through a MAP_SHARED mapping of /dev/zero is the sampler's
# known gap (skillrun(1) LIMITS): only reported here, except under a
# cgroup, which must stop it.  And what ordinary programs do still works
# in the sampled mode.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }

memory_runs

for run in "${runs[@]}"; do
  run_mode "$run"

  # Shared anonymous memory: 2 GiB against 256 MiB.
  attack "$mode" "${opts[@]}" --memory 256M --timeout 60s -- shmhog:anon:2048
  by=$(field "$AUDIT" policy_resolved '.policy.limits.memory.enforced_by')
  st=$(field "$AUDIT" execution_completed .status)
  line=$(result shmhog:anon:2048)
  if [ "$by" = supervisor ]; then
    is "$run: sampled: the shared anonymous hog's run exits 0" "$rc" 0
    blocked "$run" shmhog:anon:2048
    check "$run: sampled: ... its mapping answered ENOSYS ($line)" \
      grep -q '^shmhog:anon:2048=BLOCKED:mmap(MAP_SHARED|MAP_ANONYMOUS):ENOSYS after 0 MiB' "$OUT"
    is "$run: sampled: ... policy_resolved names mmap among the refused calls" \
      "$(field "$AUDIT" policy_resolved '.sampler.refused_syscalls | index("mmap") != null')" true
    if [ "$(field "$AUDIT" policy_resolved .seccomp.denials_reported)" = true ]; then
      is "$run: sampled: ... the refused mmap is reported" \
        "$(field "$AUDIT" syscall_denied 'select(.syscall == "mmap") | .count')" 1
    fi
    check "$run: sampled: ... memory_peak within the limit" \
      [ "$(field "$AUDIT" execution_completed .memory_peak)" -le $((256 << 20)) ]
  else
    is "$run: $by: the shared anonymous hog ends the run (137)" "$rc" 137
    is "$run: $by: ... status oom" "$st" oom
    check "$run: $by: ... the hog never held its 2 GiB ($line)" [ -z "$line" ]
  fi
  check "$run: ... the audit stream verifies" audit_ok "$AUDIT"

  # The same through /dev/zero: the kernel makes the same kind of object,
  # but the filter cannot see which file a descriptor is.
  attack "$mode" "${opts[@]}" --memory 256M --timeout 60s -- shmhog:zero:2048
  by=$(field "$AUDIT" policy_resolved '.policy.limits.memory.enforced_by')
  line=$(result shmhog:zero:2048)
  if [ "$by" = supervisor ]; then
    # skillrun(1) LIMITS: the sampler's known gap; a cgroup closes it.
    diag "$run: sampled: MAP_SHARED of /dev/zero (known gap, skillrun(1) LIMITS):" \
      "exit $rc, status $(field "$AUDIT" execution_completed .status)," \
      "memory_peak $(field "$AUDIT" execution_completed .memory_peak): ${line:-no report}"
  else
    is "$run: $by: the /dev/zero hog ends the run (137)" "$rc" 137
    is "$run: $by: ... status oom" "$(field "$AUDIT" execution_completed .status)" oom
    check "$run: $by: ... the hog never held its 2 GiB ($line)" [ -z "$line" ]
  fi
  check "$run: ... the audit stream verifies" audit_ok "$AUDIT"

  # What ordinary programs do: the dynamic loader, a shell, fork and
  # posix_spawn, a sort that spills to /tmp, Python's subprocess and
  # multiprocessing (its shared memory is a file in /dev/shm).
  skill "$mode" "${opts[@]}" --memory 256M --timeout 60s -- sh -c '
    seq 1 400000 | sort -r >/tmp/big && sort -n -S 1M -T /tmp /tmp/big | tail -n 1 &&
    python3 -c "
import mmap, multiprocessing as mp, subprocess
subprocess.run([\"true\"], check=True)
print(subprocess.run([\"sh\", \"-c\", \"echo spawned\"], capture_output=True, check=True).stdout.decode().strip())
m = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE)
m[0:2] = b\"ok\"
v = mp.Array(\"i\", 4)
v[0] = 7
print(\"python\", m[0:2].decode(), v[0])
"'
  run_ok "$run" "ordinary programs"
  is "$run: ... their output" "$(cat "$OUT" 2>/dev/null)" "$(printf '400000\nspawned\npython ok 7')"
  check "$run: no process of the run is left" no_attacker_left
done
finish
