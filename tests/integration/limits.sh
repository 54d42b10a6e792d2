#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What holds the whole-run limits on this host, and that the audit says so
# (skillrun(1) LIMITS): as root a cgroup (v2 with controllers, else the v1
# hierarchies: this host class is hybrid), as uid 65534 and under
# `cgroup off` the supervisor's sampler with RLIMIT_NPROC; `cgroup
# require` takes v2 or v1 and refuses the sampler; cgroup v1 leaves carry
# the limits, are gone after the run and are collected by --gc.  Logs are
# capped.  The hostile skills are limits-matrix.sh's; the cgroup v2 side
# is also the VM tier's (make check-vm).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/limits-skill
mkbundle "$B"
chmod -R a+rX "$T"
printf 'include default\ncgroup require\n' >"$T/require.profile"
printf 'include default\ncgroup off\n' >"$T/off.profile"
chmod 644 "$T/require.profile" "$T/off.profile"

# What root gets here: cgroup2 where the v2 root has the memory controller,
# else cgroup1 where the v1 memory hierarchy is mounted.
root_cg=none
if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
  root_cg=cgroup2
elif awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
  $(i + 1) == "cgroup" && $NF ~ /(^|,)memory(,|$)/ {f = 1} END {exit !f}' \
  /proc/self/mountinfo; then
  root_cg=cgroup1
fi
diag "root's cgroup here: $root_cg"

# Root's runs twice: with the cgroup root gets here, and with `cgroup off`.
modes=()
for m in $MODES; do
  if [ $m = root ]; then modes+=(root off); else modes+=(user); fi
done
for mode in "${modes[@]}"; do
  pre=(env)
  prof=()
  case $mode in
  root) W=$(tmpdir) want=$root_cg ;;
  off) W=$(tmpdir) want=supervisor prof=(-p "$T/off.profile") ;;
  user)
    W=$(mode_workspace user) want=supervisor
    pre=("${AS_USER[@]}")
    ;;
  esac
  [ "$want" = none ] && want=supervisor
  n=0
  r() { n=$((n + 1)); "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "l$n" --audit-file "$W/a.$n" "${prof[@]}" "$B" "$@" 2>"$W/err.$n"; }

  r --memory 64M -- /usr/bin/python3 -c 'b = bytearray(256 * 1024 * 1024); b[::4096] = b"x" * (256 * 256); print("allocated", len(b))'
  rc=$?
  is "$mode: a 256 MiB allocation under --memory 64M is stopped with 137" "$rc" 137
  is "$mode: ... status oom" "$(field "$W/a.$n" execution_completed .status)" oom
  is "$mode: ... limit_exceeded memory" "$(field "$W/a.$n" limit_exceeded .limit)" memory
  check "$mode: ... it never got the memory" not grep -q 'allocated 268435456' "$W/default/l$n/logs/stdout.log"
  is "$mode: memory enforced_by $want" \
    "$(field "$W/a.$n" policy_resolved '.policy.limits.memory.enforced_by')" "$want"
  is "$mode: ... and cpu-seconds" \
    "$(field "$W/a.$n" policy_resolved '.policy.limits["cpu-seconds"].enforced_by')" "$want"
  is "$mode: ... the figures measured_by $want" \
    "$(field "$W/a.$n" execution_completed .measured_by)" "$want"
  if [ "$want" = supervisor ]; then
    is "$mode: ... pids by RLIMIT_NPROC" \
      "$(field "$W/a.$n" policy_resolved '.policy.limits.pids.enforced_by')" rlimit
    is "$mode: ... policy_resolved states the sampling interval" \
      "$(field "$W/a.$n" policy_resolved .sampler.interval_ms)" 50
    is "$mode: ... no cgroup" "$(field "$W/a.$n" policy_resolved .cgroup)" null
    check "$mode: ... a warning says it is no kernel limit" \
      grep -q "not a kernel limit" <(field "$W/a.$n" warning .message)
    check "$mode: ... and why there is no cgroup" \
      test -n "$(field "$W/a.$n" warning .reason)"
  else
    is "$mode: ... pids by the cgroup" \
      "$(field "$W/a.$n" policy_resolved '.policy.limits.pids.enforced_by')" "$want"
    is "$mode: ... no sampler" "$(field "$W/a.$n" policy_resolved .sampler)" null
  fi
  # RLIMIT_AS is opt-in now: the default sets none.
  is "$mode: memory_rlimit is off by default" \
    "$(field "$W/a.$n" policy_resolved .policy.memory_rlimit)" false

  r --cpu-seconds 1 -- /bin/sh -c 'while :; do :; done'
  is "$mode: a CPU burner is stopped at --cpu-seconds 1 with 137" "$?" 137
  is "$mode: ... status cpu_exceeded" "$(field "$W/a.$n" execution_completed .status)" cpu_exceeded
  is "$mode: ... limit_exceeded cpu" "$(field "$W/a.$n" limit_exceeded .limit)" cpu

  # (`off` is a profile of its own: require is the other two modes' test.)
  [ "$mode" = off ] || r -p "$T/require.profile" -- /bin/true
  rc=$?
  if [ "$mode" = off ]; then
    :
  elif [ "$want" = supervisor ]; then
    is "$mode: cgroup require without a cgroup exits 125" "$rc" 125
    is "$mode: ... layer_failed names the cgroup layer" "$(field "$W/a.$n" layer_failed .layer)" cgroup
    check "$mode: ... and nothing ran" [ ! -s "$W/default/l$n/logs/stdout.log" ]
  else
    is "$mode: cgroup require is met by $want" "$rc" 0
  fi

  r --log-cap 1K -- /bin/sh -c 'i=0; while [ $i -lt 2000 ]; do echo "line $i of output"; i=$((i+1)); done; echo done >&2'
  is "$mode: a chatty skill still exits 0" "$?" 0
  kept=$(field "$W/a.$n" execution_completed '.logs.stdout.kept + .logs.stderr.kept')
  is "$mode: exactly the 1 KiB cap is kept" "$kept" 1024
  check "$mode: the rest is counted as dropped" [ "$(field "$W/a.$n" execution_completed .logs.stdout.dropped)" -gt 30000 ]
  is "$mode: log_truncated emitted" "$(field "$W/a.$n" log_truncated .stream)" stdout
  check "$mode: the truncation marker is in the log" grep -q "log cap of 1024 bytes reached" "$W/default/l$n/logs/stdout.log"

  check_run_audits "$mode" "$W" l
done

# ------------------------------------------------------------ cgroup v1
# leaves_when_running AUDIT: the run's three cgroup leaves from
# policy_resolved, one a line, once the run is running (nothing after 5 s).
leaves_when_running() {
  local l=() _
  for _ in $(seq 100); do
    mapfile -t l < <(field "$1" policy_resolved '.cgroup_leaves[]' 2>/dev/null)
    if [ "${#l[@]}" -eq 3 ] && [ -n "$("$JQ" -c 'select(.state == "running")' "$1" 2>/dev/null)" ]; then
      printf '%s\n' "${l[@]}"
      return
    fi
    sleep 0.05
  done
}

if [ "$(id -u)" -eq 0 ] && [ "$root_cg" = cgroup1 ]; then
  W=$(tmpdir)
  "$SKILLRUN" --workspace-root "$W" --execution-id v1 --audit-file "$W/v1.audit" \
    --memory 48M --pids 40 "$B" -- /bin/sh -c 'cat /proc/self/cgroup; sleep 2' \
    2>"$W/v1.err" &
  sr=$!
  mapfile -t leaves < <(leaves_when_running "$W/v1.audit")
  is "cgroup1: a leaf in each of the memory, pids and cpuacct hierarchies" \
    "$(printf '%s\n' "${leaves[@]}" | sed -E 's|^/sys/fs/cgroup/([^/]*)/skillrun/run-default\.v1\.[0-9a-f]{8}$|\1|' | sort | tr '\n' ' ')" \
    "cpuacct memory pids "
  mem=${leaves[0]}
  is "cgroup1: memory.limit_in_bytes holds --memory" "$(cat "$mem/memory.limit_in_bytes" 2>/dev/null)" $((48 * 1048576))
  if [ -e "$mem/memory.memsw.limit_in_bytes" ]; then
    is "cgroup1: ... and memory.memsw.limit_in_bytes (no swap beyond it)" \
      "$(cat "$mem/memory.memsw.limit_in_bytes")" $((48 * 1048576))
  fi
  is "cgroup1: pids.max holds --pids" "$(cat "${leaves[1]}/pids.max" 2>/dev/null)" 40
  check "cgroup1: the sandbox's processes are in the leaves" \
    test -n "$(cat "${leaves[2]}/cgroup.procs" 2>/dev/null)"
  wait "$sr"
  is "cgroup1: the run exits 0" "$?" 0
  check "cgroup1: the skill sees its cgroup as / (cgroup namespace)" \
    grep -qx '[0-9]*:memory:/' "$W/default/v1/logs/stdout.log"
  gone=0
  for l in "${leaves[@]}"; do [ -e "$l" ] || gone=$((gone + 1)); done
  is "cgroup1: every leaf is removed after the run" "$gone" 3

  # Two workspace roots (two workers, two test suites) running the same
  # execution id at once: each run has its own leaves.
  W2=$(tmpdir) W3=$(tmpdir)
  pids=()
  for w in "$W2" "$W3"; do
    "$SKILLRUN" --workspace-root "$w" --execution-id same --audit-file "$w/a" \
      "$B" -- /bin/sleep 1 2>"$w/err" &
    pids+=($!)
  done
  wait "${pids[0]}"
  rc2=$?
  wait "${pids[1]}"
  rc3=$?
  is "cgroup1: one execution id in two workspace roots at once: both run ($(head -n 1 "$W2/err") $(head -n 1 "$W3/err"))" \
    "$rc2 $rc3" "0 0"
  l2=$(field "$W2/a" policy_resolved '.cgroup_leaves[0]')
  l3=$(field "$W3/a" policy_resolved '.cgroup_leaves[0]')
  check "cgroup1: ... in leaves of their own ($l2, $l3)" \
    test -n "$l2" -a -n "$l3" -a "$l2" != "$l3"

  # A leaf left by a run whose supervisor died: --gc removes it once it is
  # older than 2 s (a young one may be a run between mkdir and flock).
  stale=()
  for c in memory pids cpuacct; do
    d=/sys/fs/cgroup/$c/skillrun/run-stale-limits-$$
    mkdir -p "$d" && stale+=("$d")
    stat "$d" >/dev/null 2>&1 # kernfs stamps ctime at the first lookup
  done
  sleep 3
  "$SKILLRUN" --gc --workspace-root "$W" >/dev/null 2>"$W/gc.err"
  rc=$?
  is "cgroup1: --gc exits 0 ($(head -n 1 "$W/gc.err"))" "$rc" 0
  left=0
  for d in "${stale[@]}"; do [ -e "$d" ] && left=$((left + 1)) && rmdir "$d"; done
  is "cgroup1: --gc removed the stale leaf in every hierarchy" "$left" 0

  # ... and so does a run, as its sandbox is launched (sr_host_gc): the stale
  # leaf is gone while the skill still runs, the run's own leaves (locked,
  # populated) are there until its end.  (Another suite's run could also
  # have collected it: each of them does.)
  stale=()
  for c in memory pids cpuacct; do
    d=/sys/fs/cgroup/$c/skillrun/run-stale-next-$$
    mkdir -p "$d" && stale+=("$d")
    stat "$d" >/dev/null 2>&1
  done
  sleep 3
  "$SKILLRUN" --workspace-root "$W" --execution-id next --audit-file "$W/next.a" \
    "$B" -- /bin/sleep 2 >/dev/null 2>"$W/next.err" &
  sr=$!
  mapfile -t own < <(leaves_when_running "$W/next.a")
  # The collection follows the "running" record (sr_launch.while_running):
  # give it until the skill's 2 s are half over.
  for _ in $(seq 20); do
    left=0
    for d in "${stale[@]}"; do [ -e "$d" ] && left=$((left + 1)); done
    [ "$left" -eq 0 ] && break
    sleep 0.05
  done
  mine=0
  for d in "${own[@]}"; do [ -d "$d" ] && mine=$((mine + 1)); done
  is "cgroup1: a running run has removed the stale leaf in every hierarchy" "$left" 0
  is "cgroup1: ... and kept its own three leaves" "$mine" 3
  wait "$sr"
  rc=$?
  is "cgroup1: ... the run exits 0 ($(head -n 1 "$W/next.err"))" "$rc" 0
  mine=0
  for d in "${own[@]}"; do [ -e "$d" ] && mine=$((mine + 1)); done
  is "cgroup1: ... and its own leaves are gone after it" "$mine" 0
  for d in "${stale[@]}"; do [ -e "$d" ] && rmdir "$d"; done

  # A leaf that cannot be removed: a cgroup made below the run's pids leaf
  # while it runs.  The record names that leaf (before the fix it named
  # the memory leaf, which was gone), and execution_completed follows the
  # warning at once (before the fix the same leaf was waited for a second
  # time, 1 s of rmdir retries, between the two).
  "$SKILLRUN" --workspace-root "$W" --execution-id left --audit-file "$W/left.a" \
    "$B" -- /bin/sleep 2 >/dev/null 2>"$W/left.err" &
  sr=$!
  mapfile -t own < <(leaves_when_running "$W/left.a")
  pl=$(printf '%s\n' "${own[@]}" | grep '^/sys/fs/cgroup/pids/')
  [ -n "$pl" ] && mkdir "$pl/admin"
  wait "$sr"
  rc=$?
  is "cgroup1: a pids leaf with a cgroup below it: the run exits 0 ($(head -n 1 "$W/left.err"))" "$rc" 0
  msg=$("$JQ" -r 'select(.event == "warning" and .reason == "cgroup_left") | .message' "$W/left.a")
  want=
  [ -z "$pl" ] || want="the run's cgroup $pl could not be removed"
  starts_with() { [ -n "$2" ] && [[ $1 == "$2"* ]]; }
  check "cgroup1: ... the cgroup_left warning names that leaf alone (${msg:0:120})" \
    starts_with "$msg" "$want"
  gap=$("$JQ" -rs '[.[] | select((.event == "warning" and .reason == "cgroup_left") or
      .event == "execution_completed") | .ts[11:-1] | split(":") | map(tonumber) |
      .[0] * 3600 + .[1] * 60 + .[2]] | if length == 2 then .[1] - .[0] else "none" end' "$W/left.a")
  check "cgroup1: ... execution_completed follows it within 0.5 s ($gap s), not after a second wait" \
    awk -v g="$gap" 'BEGIN { exit !(g != "none" && g + 0 < 0.5) }'
  [ -n "$pl" ] && rmdir "$pl/admin" "$pl"
else
  diag "SKIP cgroup1 checks: not root, or root gets $root_cg here"
fi
finish
