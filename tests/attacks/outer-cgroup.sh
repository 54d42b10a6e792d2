#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the caller's cgroup as the outer bound on a
# cgroup v1 host.  A scheduler puts skillrun in v1 memory and pids
# cgroups with limits (a systemd unit's MemoryLimit= on a hybrid host, a
# Slurm step, a container).  A skill must get no more memory and no more
# processes than that caller was given, whatever skillrun's own caps say:
# the run's leaves go below the caller's cgroup, never beside it.  Before
# the fix root made them below <mount>/skillrun, outside the caller's
# cgroup, and a skill whose caller had 64 MiB held 200 MiB.  As root,
# which makes the caller's cgroups; the ordinary user's runs are started
# in them too.
. "$(dirname "$0")/../integration/lib.sh"
# Whole-file skips come before common.sh, whose per-mode skips would
# already have printed a test.
V1=/sys/fs/cgroup
[ -f "$V1/memory/memory.limit_in_bytes" ] && [ -d "$V1/pids" ] ||
  skip_all "no cgroup v1 memory and pids hierarchies here (the VM tier covers cgroup v2)"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to make the caller's cgroups"
. "$(dirname "$0")/common.sh"

OUTER=skillrun-test-outer.$$
trap _outer_cleanup EXIT

# skillrun starts in the outer cgroups, as a scheduler would start it.
outer_caller

no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }
# closed: the run's directory ends with the status the stream ends with.
closed() {
  closed_ok "$1" "$(dirname "$AUDIT")/default/$RUN_ID" \
    "$(field "$AUDIT" execution_completed .status)"
}
leaves_in() { find "$V1/$1/$OUTER" -mindepth 2 -maxdepth 2 -type d -name 'run-*' | wc -l; }

for mode in $MODES; do
  mk_outer
  echo $((64 << 20)) >"$V1/memory/$OUTER/memory.limit_in_bytes"
  [ -f "$V1/memory/$OUTER/memory.memsw.limit_in_bytes" ] &&
    echo $((64 << 20)) >"$V1/memory/$OUTER/memory.memsw.limit_in_bytes"
  echo 40 >"$V1/pids/$OUTER/pids.max"

  # 200 MiB against the caller's 64 and skillrun's own 512.
  attack $mode -- memhog:200
  line=$(result memhog:200)
  st=$(field "$AUDIT" execution_completed .status)
  # The run's own cgroup reports oom; without one (the user here) the
  # kernel's OOM killer of the caller's cgroup kills the skill.
  case "$line:$st" in
  BLOCKED:*:* | :oom | :killed)
    pass "$mode: the skill gets no more memory than its caller's cgroup allows (${line:-no report}, $st)"
    ;;
  *)
    fail "$mode: the skill gets no more memory than its caller's cgroup allows"
    diag "  got: '${line:-no report}' (skillrun exit $rc, status '$st')"
    ;;
  esac
  if [ "$mode" = root ]; then
    is "$mode: ... the run ends as oom (137)" "$rc" 137
    is "$mode: ... status oom" "$(field "$AUDIT" execution_completed .status)" oom
    cg=$(field "$AUDIT" policy_resolved .cgroup)
    check "$mode: ... its memory leaf is below the caller's cgroup ($cg)" \
      [ "${cg#"$V1/memory/$OUTER/skillrun/run-"}" != "$cg" ]
  fi
  closed "$mode: ... the run is closed"

  # Processes: 200 against the caller's 40.
  attack $mode --pids 128 -- forkbomb:200
  forks=$(sed -n 's/.* after \([0-9][0-9]*\).*/\1/p' <<<"$(result forkbomb:200)")
  peak=$(field "$AUDIT" execution_completed .pids_peak)
  check "$mode: the skill forks no more than its caller's cgroup allows (${forks:-no report} forks, peak $peak)" \
    test "${forks:-999}" -le 40 -a "${peak:-999}" -le 40
  closed "$mode: ... the run is closed"
  check "$mode: ... no process of the run is left" no_attacker_left
  rm_outer

  # A caller's cgroup without limits changes nothing: the leaves go below
  # the hierarchy's own skillrun subtree, as before.
  # So does a pids.max above the run's pids limit: systemd's default
  # TasksMax= on every unit and slice.
  if [ "$mode" = root ]; then
    mk_outer
    echo 100000 >"$V1/pids/$OUTER/pids.max"
    skill $mode -- true
    is "$mode: an unlimited caller's cgroup: the run succeeds" "$rc" 0
    is "$mode: ... and nothing is made below that cgroup" \
      "$(leaves_in memory)$(leaves_in pids)$(ls -d "$V1/memory/$OUTER/skillrun" "$V1/pids/$OUTER/skillrun" 2>/dev/null | wc -l)" 000
    cg=$(field "$AUDIT" policy_resolved .cgroup)
    check "$mode: ... the leaf is below $V1/memory/skillrun ($cg)" \
      [ "${cg#"$V1/memory/skillrun/run-"}" != "$cg" ]
    rm_outer

    # A run that lowers --pids to the caller's pids.max or below does not
    # take its leaf out of the caller's cgroup: what counts is skillrun's
    # own cap (512 here), which the caller cannot lower.  Before, 40 >=
    # --pids 32 put the leaf in $V1/pids/skillrun, beside the caller's
    # cgroup: the caller's tasks and each such run's 32 all counted
    # apart, so a few concurrent runs passed the caller's 40.
    mk_outer
    echo 40 >"$V1/pids/$OUTER/pids.max"
    attack $mode --pids 32 -- forkbomb:200
    check "$mode: --pids 32 under a caller's pids.max 40: the pids leaf is made inside the caller's cgroup" \
      [ -d "$V1/pids/$OUTER/skillrun" ]
    closed "$mode: ... the run is closed"
    rm_outer

    # A container's view (Docker with the host's cgroup namespace on a v1
    # host): the caller's cgroups bind-mounted over the hierarchies, so
    # the mounts' top is the caller's cgroup while /proc/self/cgroup still
    # names it from the hierarchy's root (/$OUTER).  The leaves go below
    # the mounts' top, inside the caller's limits; before, skillrun looked
    # for <mount>/$OUTER, which is not there, and ran without a cgroup.
    mk_outer
    echo $((64 << 20)) >"$V1/memory/$OUTER/memory.limit_in_bytes"
    [ -f "$V1/memory/$OUTER/memory.memsw.limit_in_bytes" ] &&
      echo $((64 << 20)) >"$V1/memory/$OUTER/memory.memsw.limit_in_bytes"
    echo 40 >"$V1/pids/$OUTER/pids.max"
    saved=("${CALLER[@]}")
    # shellcheck disable=SC2016 # expanded by the inner shell
    CALLER=(unshare -m --propagation private sh -c 'for h in memory pids; do echo $$ >"$0/$h/$1/cgroup.procs" && mount --bind "$0/$h/$1" "$0/$h" || exit 99; done; shift; exec "$@"' "$V1" "$OUTER")
    attack $mode -- memhog:200
    CALLER=("${saved[@]}")
    cg=$(field "$AUDIT" policy_resolved .cgroup)
    is "$mode: caller's cgroups bind-mounted as the mounts' top: the run ends as oom (137)" "$rc" 137
    is "$mode: ... status oom" "$(field "$AUDIT" execution_completed .status)" oom
    check "$mode: ... it had a cgroup v1 leaf below the mount's top ($cg)" \
      [ "${cg#"$V1/memory/skillrun/run-"}" != "$cg" ]
    check "$mode: ... made inside the caller's cgroup" \
      [ -d "$V1/memory/$OUTER/skillrun" ]
    closed "$mode: ... the run is closed"
    rm_outer
  fi
done
finish
