#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, process attributes the caller leaves skillrun
# that the skill must not keep.
#
# Personality flags (setarch -R: ADDR_NO_RANDOMIZE; -L: the legacy
# layout): the skill ran without address space randomization, which its
# seccomp filter refuses it (personality(2) with 0 or the query only).
# Now they are cleared; the execution domain (setarch linux32) is kept.
#
# oom_score_adj -1000 (systemd's OOMScoreAdjust=, choom -n): the memory
# cgroup's OOM killer found no process of the run to kill, and a run over
# its memory limit stalled until its timeout, recorded timeout, not oom.
# Now the sandbox starts at 0 at least; a positive value is kept.  Setting
# a negative value takes CAP_SYS_RESOURCE, which a container's root may
# lack: those cases are skipped then, saying so.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

command -v setarch >/dev/null && command -v choom >/dev/null ||
  skip_all "setarch and choom (util-linux) are needed"
arch=$(uname -m)

for mode in $MODES; do
  CALLER=(setarch "$arch" -R -L)
  skill "$mode" -- /bin/cat /proc/self/personality
  run_ok "$mode" "under setarch -R -L"
  is "$mode: ... the skill runs with no personality flag" "$(cat "$OUT" 2>/dev/null)" 00000000

  if setarch linux32 true 2>/dev/null; then
    CALLER=(setarch linux32 -R)
    skill "$mode" -- /bin/cat /proc/self/personality
    run_ok "$mode" "under setarch linux32 -R"
    is "$mode: ... the skill keeps linux32's execution domain, not -R" \
      "$(cat "$OUT" 2>/dev/null)" 00000008
  else
    pass "# SKIP $mode: setarch linux32 is not available on $arch"
    pass "# SKIP $mode: setarch linux32 is not available on $arch"
  fi

  # A positive value is the caller's to give: the run is killed first.
  CALLER=(choom -n 300 --)
  skill "$mode" -- /bin/cat /proc/self/oom_score_adj
  run_ok "$mode" "under choom -n 300"
  is "$mode: ... the skill's oom_score_adj is the caller's" "$(cat "$OUT" 2>/dev/null)" 300

  if choom -n -1000 -- true 2>/dev/null; then
    CALLER=(choom -n -1000 --)
    skill "$mode" -- /bin/cat /proc/self/oom_score_adj /proc/1/oom_score_adj
    run_ok "$mode" "under choom -n -1000"
    is "$mode: ... the skill and its init are at 0" "$(cat "$OUT" 2>/dev/null | tr '\n' ' ')" "0 0 "

    # Over its memory limit: stopped as oom, long before the timeout.
    t0=$(date +%s)
    attack "$mode" --memory 64M --timeout 60s -- memhog:1024
    if [ "$(field "$AUDIT" policy_resolved '.policy.limits.memory.enforced_by')" = supervisor ]; then
      pass "# SKIP $mode: no cgroup holds the memory limit (the supervisor does)"
    elif [ "$rc" -eq 0 ]; then
      pass "$mode: ... a memory hog is refused its allocations within the limit"
    else
      is "$mode: ... a memory hog is stopped as oom" \
        "$(field "$AUDIT" execution_completed .status)" oom
    fi
    check "$mode: ... and the run ended well before its timeout" [ $(($(date +%s) - t0)) -lt 30 ]
  else
    for _ in 1 2 3 4; do
      pass "# SKIP $mode: choom -n -1000 is not allowed here (no CAP_SYS_RESOURCE)"
    done
  fi
done
CALLER=()
host_unchanged caller-procattr
finish
