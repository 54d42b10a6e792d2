#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a CPU budget spent while skillrun is stopped:
# a terminal's job control (Ctrl-Z, SIGTSTP) or SIGSTOP stops skillrun but
# not the skill (skillrun(1) EXIT STATUS).  A skill that spins in one
# process meanwhile runs into the per-process backstop, RLIMIT_CPU a
# second past the budget (src/child.c), whose SIGKILL ends it before the
# supervisor, once resumed, looks again.  That is the CPU budget stopping
# the run (137, status cpu_exceeded, a limit_exceeded event naming cpu),
# not a skill killed by a signal: the run was recorded as status killed,
# signal 9, with no limit_exceeded, its cpu_usec over the budget.  So is
# a skill that spends its budget meanwhile and then exits 0 before the
# backstop (or within a tick of the budget): it was recorded as succeeded,
# exit 0, cpu_usec over the budget, or as cpu_exceeded, as the supervisor's
# first look once resumed happened to be its tick or the skill's end; and
# so is one whose budget a process it left behind spent (the cgroup's
# figure over the budget, the skill's own not).  As
# root with a cgroup, as an unprivileged user and as root with `cgroup
# off` (the supervisor's sampler).
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/cpu-backstop
mkbundle "$B" "Spins in one process while skillrun is stopped."
printf 'include default\ncgroup off\n' >"$T/off.profile"
chmod 644 "$T/off.profile"
chmod -R a+rX "$T"

# spent_then_resume ID PID: once the run ID's skill has spent its 1.5 s
# and exited, which a loaded host may take well over the seconds of CPU (a
# fixed sleep let the supervisor resume before, and the skill was killed
# at its budget, not ended by itself): skillrun PID resumed.  The skill's
# end is seen as its init's: init exits once the skill's tree has, and
# stays a zombie while skillrun is stopped.  (outputs/spent is no sign
# on the host: the outputs are a tmpfs in the sandbox until the harvest,
# so waiting for it ran out its 60 s every time.)
spent_then_resume() {
  local i kid done_
  for ((i = 0; i < 600; i++)); do
    done_=
    for kid in $(cat "/proc/$2/task/$2/children" 2>/dev/null); do
      done_=yes
      [ "$(awk '{ print $3 }' "/proc/$kid/stat" 2>/dev/null)" = Z ] || { done_=; break; }
    done
    [ -n "$done_" ] && break
    sleep 0.1
  done
  sleep 0.5
  kill -CONT "$2"
}

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
  id=backstop
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" -p "$profile" \
    --cpu-seconds 1 --timeout 60s "$B" -- /bin/sh -c 'while :; do :; done' \
    >"$W/a.$id" 2>"$W/e.$id" &
  pid=$!
  wait_running "$W/a.$id"
  # Stopped (as by Ctrl-Z, but SIGSTOP: the kernel discards a SIGTSTP for
  # an orphaned process group, as the suite's may be, and this case then
  # tested the budget's ordinary kill), the skill spins on past its budget
  # and the backstop's second.
  kill -STOP $pid
  for _ in $(seq 50); do
    st=$(awk '{ print $3 }' /proc/$pid/stat)
    [ "$st" = T ] && break
    sleep 0.1
  done
  is "$label: skillrun is stopped" "$st" T
  sleep 4
  kill -CONT $pid
  wait $pid
  rc=$?
  diag "$label: $(field "$W/a.$id" execution_completed '[.status, .signal, .cpu_usec] | @tsv')"
  is "$label: a budget spent while skillrun was stopped: exit 137" "$rc" 137
  is "$label: ... status cpu_exceeded" \
    "$(field "$W/a.$id" execution_completed .status)" cpu_exceeded
  is "$label: ... a limit_exceeded event names cpu" \
    "$(field "$W/a.$id" limit_exceeded .limit)" cpu
  check "$label: ... cpu_usec counts the budget spent" \
    [ "$(field "$W/a.$id" execution_completed .cpu_usec)" -ge 1000000 ]
  check "$label: ... the audit stream verifies" audit_ok "$W/a.$id"
  closed_ok "$label" "$W/default/$id" cpu_exceeded
  is "$label: no process of the run is left" \
    "$(test_pids "execution-id $id" | wc -l)" 0

  # A skill that spends its budget while skillrun is stopped, and then
  # exits 0 by itself before the backstop's second: the budget stopped it
  # all the same.
  id=overshoot
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" -p "$profile" \
    --cpu-seconds 1 --timeout 60s "$B" -- /usr/bin/python3 -c '
import time
while time.process_time() < 1.5:
    pass
open("/workspace/outputs/spent", "w").close()' >"$W/a.$id" 2>"$W/e.$id" &
  pid=$!
  wait_running "$W/a.$id"
  # SIGSTOP, which always stops, not Ctrl-Z's SIGTSTP, which the kernel
  # discards for an orphaned process group: skillrun must be stopped for
  # this case to mean anything (its tick would kill the skill at the
  # budget, and the skill's own exit status would be lost).
  kill -STOP $pid
  spent_then_resume "$id" $pid
  wait $pid
  rc=$?
  diag "$label: $(field "$W/a.$id" execution_completed '[.status, .skill_exit_code, .cpu_usec] | @tsv')"
  is "$label: a budget spent before the skill exited 0 by itself: exit 137" "$rc" 137
  is "$label: ... status cpu_exceeded" \
    "$(field "$W/a.$id" execution_completed .status)" cpu_exceeded
  is "$label: ... the skill's own exit status is kept" \
    "$(field "$W/a.$id" execution_completed .skill_exit_code)" 0
  is "$label: ... a limit_exceeded event names cpu" \
    "$(field "$W/a.$id" limit_exceeded .limit)" cpu
  check "$label: ... the audit stream verifies" audit_ok "$W/a.$id"
  closed_ok "$label" "$W/default/$id" cpu_exceeded

  # The same budget spent by a process the skill left behind (its own CPU
  # time stays small), which ends before the skill does: the cgroup's
  # figure, or the supervisor's, says so.
  id=orphan
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" -p "$profile" \
    --cpu-seconds 1 --timeout 60s "$B" -- /bin/sh -c '( /usr/bin/python3 -c "
import time
while time.process_time() < 1.5:
    pass
open(\"/workspace/outputs/spent\", \"w\").close()" & )
while [ ! -e /workspace/outputs/spent ]; do sleep 0.1; done' >"$W/a.$id" 2>"$W/e.$id" &
  pid=$!
  wait_running "$W/a.$id"
  kill -STOP $pid
  spent_then_resume "$id" $pid
  wait $pid
  rc=$?
  diag "$label: $(field "$W/a.$id" execution_completed '[.status, .skill_exit_code, .cpu_usec] | @tsv')"
  is "$label: a budget a left-behind process spent: exit 137" "$rc" 137
  is "$label: ... status cpu_exceeded" \
    "$(field "$W/a.$id" execution_completed .status)" cpu_exceeded
  is "$label: ... a limit_exceeded event names cpu" \
    "$(field "$W/a.$id" limit_exceeded .limit)" cpu
  closed_ok "$label" "$W/default/$id" cpu_exceeded
done
finish
