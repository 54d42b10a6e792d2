#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A CPU budget spent by children the skill has the kernel reap for it
# (SIGCHLD ignored: their CPU time is added to no parent's, so not to the
# tree's that init reports) while skillrun is stopped, before the skill
# exits 0: the run's figure (the cgroup's, or without one the supervisor's
# counter of the tree) is over the budget, and that is cpu_exceeded (137),
# not a success with a cpu_usec over the budget (skillrun(1) EXIT
# STATUS).  As root with a cgroup, as an unprivileged user and as root
# with `cgroup off` (the supervisor's sampler and counter).
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/cpu-autoreap
mkbundle "$B" "Spins in children the kernel reaps, while skillrun is stopped."
printf 'include default\ncgroup off\n' >"$T/off.profile"
chmod 644 "$T/off.profile"
chmod -R a+rX "$T"

runs=()
for mode in $MODES; do
  runs+=("$mode:default")
  [ "$mode" = root ] && runs+=("root:$T/off.profile")
done

for r in "${runs[@]}"; do
  mode=${r%%:*} profile=${r#*:}
  label=$mode
  [ "$profile" = default ] || label="$mode (cgroup off)"
  W=$(mode_workspace "$mode")
  if [ "$mode" = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  id=autoreap
  # Two children of 0.75 s each: none reaches the per-process backstop.
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" -p "$profile" \
    --cpu-seconds 1 --timeout 60s "$B" -- /usr/bin/python3 -c '
import os, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
for _ in range(2):
    if os.fork() == 0:
        while time.process_time() < 0.75:
            pass
        os._exit(0)
time.sleep(2.5)' >"$W/a.$id" 2>"$W/e.$id" &
  pid=$!
  wait_running "$W/a.$id"
  kill -STOP $pid
  sleep 3.5
  kill -CONT $pid
  wait $pid
  rc=$?
  cpu=$(field "$W/a.$id" execution_completed .cpu_usec)
  diag "$label: $(field "$W/a.$id" execution_completed '[.status, .skill_exit_code, .cpu_usec] | @tsv')"
  if [ "${cpu:-0}" -lt 1000000 ]; then
    # Nothing counted the children: nothing to hold the run to.
    pass "# SKIP $label: the run's figure ($cpu) did not count the children"
    continue
  fi
  is "$label: a budget spent by children the kernel reaped: exit 137" "$rc" 137
  is "$label: ... status cpu_exceeded" \
    "$(field "$W/a.$id" execution_completed .status)" cpu_exceeded
  is "$label: ... a limit_exceeded event names cpu" \
    "$(field "$W/a.$id" limit_exceeded .limit)" cpu
  check "$label: ... the audit stream verifies" audit_ok "$W/a.$id"
  closed_ok "$label" "$W/default/$id" cpu_exceeded
done
finish
