#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the caller's hard rlimits: an orchestrator that
# starts skillrun under a hard limit of its own below the policy's (ulimit
# -Ht, a systemd unit's LimitCPU=, a batch system's CPU-time limit; ulimit
# -Hu without a cgroup; ulimit -Hv under memory-rlimit yes) used to get
# layer_failed "setrlimit(RLIMIT_CPU): Operation not permitted" (exit 125)
# on every run: the sandbox cannot raise a hard limit it inherits.  Now the
# policy's value is lowered to fit, with a warning (as nofile always was),
# the run goes on within the caller's limit, and the record says what the
# kernel holds.  A hard ulimit -Hu held the skill even with a cgroup (its
# processes are an unprivileged user's), while the record said pids 512:
# now lowered to one below it there too, so that pids.max holds the tree
# (a tree that merely reached the caller's limit was once taken for a
# refused fork).  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

printf 'memory-rlimit yes\n' >"$T/as.profile"
chmod 644 "$T/as.profile"

# warned TEXT: a policy warning of the last run says TEXT.
warned() { "$JQ" -r 'select(.event == "warning") | .message' "$AUDIT" | grep -qF -- "$1"; }
one_line_naming() { [ "$(wc -l <"$ERR")" = 1 ] && grep -q -- "$1" "$ERR"; }
limit() { field "$AUDIT" policy_resolved ".policy.limits[\"$1\"].value"; }

# skillrun under a hard process limit of 2, set as the user it runs as.
printf '#!/bin/bash\nulimit -u 2 && exec %q "$@"\n' "$SKILLRUN" >"$T/skillrun-u2"
chmod 755 "$T/skillrun-u2"

for mode in $MODES; do
  # A hard CPU-time limit of 30 s: the sandbox's per-process backstop is
  # one second above the budget, so the budget becomes 29 s.
  CALLER=(bash -c 'ulimit -t 30 && exec "$@"' -)
  skill $mode -- /bin/sh -c 'ulimit -Ht'
  run_ok $mode "ulimit -Ht 30"
  is "$mode: ... the skill runs under the caller's hard limit" "$(cat "$OUT" 2>/dev/null)" 30
  is "$mode: ... cpu-seconds on the record is 29" "$(limit cpu-seconds)" 29
  check "$mode: ... and a warning says so" warned "cpu-seconds 60 lowered to 29"

  # Too little to run at all: a clear error, not a failed layer.
  CALLER=(bash -c 'ulimit -t 1 && exec "$@"' -)
  skill $mode -- /bin/true
  is "$mode: ulimit -Ht 1: exit 125" "$rc" 125
  is "$mode: ... reason resources" "$(field "$AUDIT" error .reason)" resources
  check "$mode: ... one line on stderr naming ulimit -Ht" one_line_naming 'ulimit -Ht'
  check "$mode: ... the audit verifies" audit_ok "$AUDIT"

  # memory-rlimit yes sets RLIMIT_AS to the memory limit.  A sanitizer
  # build reserves terabytes of address space and cannot start under any
  # such limit.
  CALLER=(bash -c 'ulimit -v 400000 && exec "$@"' -)
  if "${CALLER[@]}" "$SKILLRUN" --version >/dev/null 2>&1; then
    skill $mode -p "$T/as.profile" -- /bin/sh -c 'ulimit -Hv'
    run_ok $mode "ulimit -Hv 400000 under memory-rlimit yes"
    is "$mode: ... the skill's address space is the caller's" "$(cat "$OUT" 2>/dev/null)" 400000
    is "$mode: ... memory on the record is 400000 KiB" "$(limit memory)" $((400000 * 1024))
    check "$mode: ... and a warning says so" warned "memory 512MiB lowered to"
  else
    pass "# SKIP $mode: this skillrun cannot start under ulimit -v 400000 (a sanitizer build)"
  fi

  # A hard process limit of 100: the skill inherits it, whatever holds pids
  # (without a cgroup, RLIMIT_NPROC itself; with one, the skill's processes
  # are an unprivileged user's, which it binds even when the caller is
  # root).  With a cgroup, the record used to say pids 512 with no warning,
  # and a skill that ran into the caller's limit failed on its own.
  CALLER=(bash -c 'ulimit -u 100 && exec "$@"' -)
  skill $mode -- /bin/sh -c 'grep "Max processes" /proc/self/limits'
  run_ok $mode "ulimit -Hu 100"
  # pids is one below it, so that with a cgroup pids.max, not the
  # caller's limit, refuses the fork past pids.
  is "$mode: ... pids on the record is 99" "$(limit pids)" 99
  if [ "$(field "$AUDIT" policy_resolved '.policy.limits.pids.enforced_by')" = rlimit ]; then
    check "$mode: ... the skill's RLIMIT_NPROC is pids" grep -q ' 99 *99 ' "$OUT"
  else
    check "$mode: ... the skill's RLIMIT_NPROC is the caller's" grep -q ' 100 *100 ' "$OUT"
  fi
  check "$mode: ... and a warning says so" warned "pids 512 lowered to 99: one below skillrun's own hard limit (ulimit -Hu, 100)"

  # A skill that runs into it under a cgroup: pids.max refuses the fork
  # past pids before the caller's limit does, and the run ends
  # pids_exceeded.  Without a cgroup the caller's hard limit also counts
  # the user's other processes on the host, which this test does not
  # control.
  if [ "$(field "$AUDIT" policy_resolved '.policy.limits.pids.enforced_by')" != rlimit ]; then
    CALLER=(bash -c 'ulimit -u 12 && exec "$@"' -)
    skill $mode -- /bin/bash -c 'for i in $(seq 30); do sleep 5 & done; wait'
    is "$mode: ulimit -Hu 12, a skill starting 30 processes: exit 137" "$rc" 137
    is "$mode: ... status pids_exceeded" "$(field "$AUDIT" execution_completed .status)" pids_exceeded
    is "$mode: ... at the limit on the record" "$(field "$AUDIT" limit_exceeded .limit_value)" "$(limit pids)"
    # One whose tree merely reaches pids (skillrun-init, bash and its
    # sleeps): no fork is refused, and pids.max lets a tree reach pids.
    # pids used to be the caller's limit itself, and the supervisor took
    # the tree at it for a refused fork: pids_exceeded, 137.
    pids=$(limit pids)
    skill $mode -- /bin/bash -c "for ((i = 2; i < $pids; i++)); do sleep 2 & done; wait; echo reached"
    is "$mode: ulimit -Hu 12, a skill whose tree reaches pids ($pids): exit 0" "$rc" 0
    is "$mode: ... it ran to its end" "$(cat "$OUT" 2>/dev/null)" reached
    is "$mode: ... its pids_peak is pids" "$(field "$AUDIT" execution_completed .pids_peak)" "$pids"
  else
    pass "# SKIP $mode: RLIMIT_NPROC holds pids (resources.sh tests it)"
    pass "# SKIP $mode: RLIMIT_NPROC holds pids (resources.sh tests it)"
    pass "# SKIP $mode: RLIMIT_NPROC holds pids (resources.sh tests it)"
    pass "# SKIP $mode: RLIMIT_NPROC holds pids (resources.sh tests it)"
    pass "# SKIP $mode: RLIMIT_NPROC holds pids (resources.sh tests it)"
    pass "# SKIP $mode: RLIMIT_NPROC holds pids (resources.sh tests it)"
  fi

  # Less than a run needs: a clear error, not a skill that cannot fork.
  # The limit is set once the test runs as MODE's user (a wrapper around
  # skillrun): set before setpriv's switch, the switch itself would fail
  # whenever that user already has two processes (another test's runs as
  # uid 65534), as the kernel checks it on the switch and the exec.
  CALLER=()
  real=$SKILLRUN
  SKILLRUN=$T/skillrun-u2
  skill $mode -- /bin/true
  SKILLRUN=$real
  if [ "$mode" = user ] && grep -qa __asan_init "$SKILLRUN"; then
    # A sanitizer build's leak check starts a task at exit, which the
    # user's other processes under ulimit -Hu 2 may leave no room for
    # (LeakSanitizer's fatal error, exit 1, more lines).
    pass "# SKIP $mode: ulimit -Hu 2 leaves a sanitizer build's leak check no task"
    is "$mode: ... reason resources" "$(field "$AUDIT" error .reason)" resources
    pass "# SKIP $mode: ulimit -Hu 2 leaves a sanitizer build's leak check no task"
  else
    is "$mode: ulimit -Hu 2: exit 125" "$rc" 125
    is "$mode: ... reason resources" "$(field "$AUDIT" error .reason)" resources
    check "$mode: ... one line on stderr naming ulimit -Hu" one_line_naming 'ulimit -Hu'
  fi
  check "$mode: ... the audit verifies" audit_ok "$AUDIT"

  # A soft process limit below pids (ulimit -Su 8): the sandbox's user
  # namespace kept it, taken when it was made, as a limit on its user's
  # tasks that the skill's RLIMIT_NPROC of 512 does not lift; the skill
  # could not start 20 processes while the record said 512.
  CALLER=(bash -c 'ulimit -Su 8 && exec "$@"' -)
  skill $mode -- /bin/sh -c 'for i in $(seq 20); do sleep 1 & done; wait; echo started'
  if [ "$(field "$AUDIT" policy_resolved '.policy.limits.pids.enforced_by')" = rlimit ]; then
    run_ok $mode "ulimit -Su 8"
    is "$mode: ... the skill starts 20 processes, as pids $(limit pids) on the record allows" \
      "$(cat "$OUT" 2>/dev/null)" started
  else
    pass "# SKIP $mode: a cgroup holds pids, RLIMIT_NPROC is not set"
    pass "# SKIP $mode: a cgroup holds pids, RLIMIT_NPROC is not set"
    pass "# SKIP $mode: a cgroup holds pids, RLIMIT_NPROC is not set"
  fi
  CALLER=()
done
finish
