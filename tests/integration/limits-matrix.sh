#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole-run limits, one matrix of hostile skills (tests/hog.c) in every
# mode this host offers (skillrun(1) LIMITS):
#   cgroup      root with the default profile: the host's cgroup, v2 where it
#               has the controllers, else the v1 hierarchies (this host
#               class: hybrid, so cgroup1)
#   sup-root    root with `cgroup off`: the supervisor's sampler
#   sup-user    uid 65534, for whom no cgroup is writable here: the sampler
# The VM tier runs the same skills under cgroup v2 (tests/vm/).
#
# Each hostile run must be stopped by the limit it attacks, not by the wall
# clock: exit 137, the status naming the limit, limit_exceeded, and the
# run's figures within 10% of the limit.  The sampler cannot promise that
# for memory that grows at full speed (what grows between two samples is
# not seen): those runs must still be stopped and named, within 50%, and a
# paced one (a few hundred MB/s) within 10%.
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
[ "$(id -u)" -eq 0 ] || skip_all "needs root to run as root and as uid $NOBODY"
: "${HOG:?HOG must name the built tests/hog (make check sets it)}"

T=$(tmpdir)
B=$T/hog-skill
mkbundle "$B" "Tries to take more than the run's limits allow."
cp "$HOG" "$B/hog"
chmod -R a+rX "$T"
printf 'include default\ncgroup off\n' >"$T/off.profile"
printf 'include default\nmemory-rlimit yes\n' >"$T/as.profile"
chmod 644 "$T/off.profile" "$T/as.profile"
WR=$(tmpdir)
WU=$(user_workspace)
MiB=1048576

n=0
# run MODE [OPTION...] -- COMMAND...: one run; sets $rc, $A (audit), $E
# (skillrun's stderr), $O (the skill's stdout), $secs (wall seconds).
run() {
  local mode=$1 w pre=() prof=()
  shift
  n=$((n + 1))
  case $mode in
  cgroup) w=$WR ;;
  sup-root) w=$WR prof=(-p "$T/off.profile") ;;
  sup-user) w=$WU pre=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --) ;;
  esac
  A=$w/a.$n
  E=$w/e.$n
  local t0=$SECONDS
  "${pre[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "m$n" \
    --audit-file "$A" --timeout 60s "${prof[@]}" "$B" "$@" >/dev/null 2>"$E"
  rc=$?
  secs=$((SECONDS - t0))
  O=$w/default/m$n/logs/stdout.log
  [ -f "$O" ] || O=/dev/null
}
done_f() { field "$A" execution_completed "$1"; }
# le X Y: X <= Y (integers; empty is false)
le() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -le "$2" ]; }
ge() { [ -n "$1" ] && [ -n "$2" ] && [ "$1" -ge "$2" ]; }

# stopped LABEL STATUS LIMIT: the run was ended by limit LIMIT.
stopped() {
  local label=$1 status=$2 limit=$3
  is "$label: exit 137" "$rc" 137
  [ "$rc" = 137 ] || diag "stderr: $(head -c 300 "$E")"
  is "$label: status $status" "$(done_f .status)" "$status"
  is "$label: limit_exceeded $limit" "$(field "$A" limit_exceeded .limit)" "$limit"
  check "$label: ended by the limit, not the wall clock (${secs}s)" [ "$secs" -lt 30 ]
}

modes=()
for mode in cgroup sup-root sup-user; do
  run "$mode" -- /bin/true
  by=$(field "$A" policy_resolved '.policy.limits.memory.enforced_by')
  case $mode:$by in
  cgroup:cgroup1 | cgroup:cgroup2 | sup-*:supervisor) modes+=("$mode:$by") ;;
  cgroup:*) diag "SKIP cgroup mode: root gets no cgroup on this host ($by): $(field "$A" warning .reason)" ;;
  sup-user:*) diag "SKIP sup-user mode: uid $NOBODY gets $by here, not the sampler" ;;
  *) fail "$mode: memory enforced_by $by" ;;
  esac
done
check "the matrix runs in at least the two supervisor modes (${modes[*]})" [ "${#modes[@]}" -ge 2 ]

for mb in "${modes[@]}"; do
  mode=${mb%%:*} by=${mb#*:}
  sup=false
  [ "$by" = supervisor ] && sup=true
  L="$mode ($by)"

  # -------------------------------------------------------------- memory
  # Six processes of 400 MiB each, 1 MiB every 40 ms: the tree passes
  # 64 MiB although no process comes near it.
  run "$mode" --memory 64M -- ./hog mem 6 400 40
  stopped "$L: memory split over 6 processes" oom memory
  peak=$(done_f .memory_peak)
  check "$L: ... memory_peak $peak within 10% of 64 MiB" le "$peak" $((64 * MiB * 11 / 10))
  if $sup; then
    check "$L: ... the sampler saw the limit passed" \
      ge "$(field "$A" limit_exceeded .observed)" $((64 * MiB))
  else
    is "$L: ... the kernel counted an OOM kill" "$(done_f '.oom_kill > 0')" true
  fi

  # The same at full speed.
  run "$mode" --memory 64M -- ./hog mem 6 400
  stopped "$L: memory split over 6 processes, full speed" oom memory
  peak=$(done_f .memory_peak)
  if $sup; then
    check "$L: ... memory_peak $peak within 50% of 64 MiB" le "$peak" $((64 * MiB * 3 / 2))
  else
    check "$L: ... memory_peak $peak within 64 MiB" le "$peak" $((64 * MiB))
  fi

  # A memfd grown with write(): never mapped, so in no process's RSS.
  run "$mode" --memory 48M -- ./hog memfd 400 5
  stopped "$L: memfd grown by write()" oom memory
  peak=$(done_f .memory_peak)
  check "$L: ... memory_peak $peak within 10% of 48 MiB" le "$peak" $((48 * MiB * 11 / 10))
  if $sup; then
    # The sampler cannot see a memfd (an fd can sit in a socket buffer);
    # it is refused, and the fallback a program takes, a file in /dev/shm,
    # is counted.
    check "$L: ... memfd_create refused with ENOSYS" grep -qx 'memfd_create=ENOSYS' "$O"
    is "$L: ... policy_resolved names the refused calls" \
      "$(field "$A" policy_resolved '.sampler.refused_syscalls | join(" ")')" "memfd_create shmget semget msgget mmap"
  else
    check "$L: ... memfd_create allowed under a cgroup" not grep -q 'memfd_create=' "$O"
  fi

  # Shared memory the parent touched and unmapped, held by a child that
  # never touched it: resident in no process; then private memory.
  run "$mode" --memory 64M -- ./hog shmfork 40 50
  stopped "$L: shared memory held by an untouched mapping" oom memory
  check "$L: ... the child held it" grep -q 'shmfork: 40 MiB held by' "$O"
  if $sup; then
    # Refused where the sampler counts the memory (a shared anonymous
    # object keeps pages it cannot see once a mapping shrinks): the hog's
    # fallback, a file in /dev/shm, is counted.
    check "$L: ... its shared anonymous mapping refused with ENOSYS" \
      grep -qx 'mmap(MAP_SHARED|MAP_ANONYMOUS)=ENOSYS' "$O"
  else
    check "$L: ... shared anonymous mappings allowed under a cgroup" \
      not grep -q 'mmap(MAP_SHARED|MAP_ANONYMOUS)=' "$O"
  fi

  # -------------------------------------------------------------- cpu
  for c in "cpu 3:CPU split over 3 processes" "cputhreads 3:CPU split over 3 threads" \
    "cpushort:CPU in processes that live 20 ms each"; do
    # shellcheck disable=SC2086
    run "$mode" --cpu-seconds 2 -- ./hog ${c%%:*}
    stopped "$L: ${c#*:}" cpu_exceeded cpu
    usec=$(done_f .cpu_usec)
    check "$L: ... cpu_usec $usec within 10% above 2 s" \
      sh -c '[ "$1" -ge 2000000 ] && [ "$1" -le 2200000 ]' - "${usec:-0}"
  done

  # -------------------------------------------------------------- pids
  run "$mode" --pids 32 -- ./hog forkbomb
  stopped "$L: fork bomb" pids_exceeded pids
  ppeak=$(done_f .pids_peak)
  check "$L: ... pids_peak $ppeak at most 32" le "$ppeak" 32
  check "$L: ... and near it" ge "$ppeak" 29

  # -------------------------------------------------------------- inodes
  # Empty files on scratch: no data blocks, but kernel memory for each
  # inode and dentry.  What stops it: a cgroup charges those to the run,
  # the sampler counts each inode; a tmpfs inode cap (nr_inodes) stops it
  # sooner where the mount has one.
  run "$mode" --memory 64M -- ./hog inodes 4000000
  st=$(done_f .status)
  diag "$L: inode flood: $st, exit $rc, $(head -n 1 "$O" 2>/dev/null)"
  check "$L: inode flood stopped by the memory limit or the inode cap ($st)" \
    sh -c '[ "$1" = oom ] || grep -q "stopped at .*ENOSPC" "$2"' - "$st" "$O"
  check "$L: ... not by the wall clock (${secs}s)" [ "$secs" -lt 30 ]

  # -------------------------------------------------------------- runtimes
  if [ -x /usr/bin/node ]; then
    run "$mode" -- /usr/bin/node -e 'console.log("node ok")'
    is "$L: node -e under the default limits exits 0 ($(head -c 200 "$O"))" "$rc" 0
    check "$L: ... and printed" grep -qx 'node ok' "$O"
  else
    diag "SKIP $L: node: /usr/bin/node is not installed (apt-get install nodejs)"
  fi

  # -------------------------------------------------------------- figures
  run "$mode" -- /bin/sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; echo done'
  is "$L: a quiet run succeeds" "$(done_f .status)" succeeded
  for f in cpu_usec memory_peak pids_peak; do
    check "$L: ... $f is a number ($(done_f ".$f"))" ge "$(done_f ".$f")" 1
  done
  is "$L: ... measured_by $by" "$(done_f .measured_by)" "$by"
done

# RLIMIT_AS, opt-in: a process that maps more than the limit is refused
# the mapping itself (the skill sees ENOMEM and decides); the policy says so.
run cgroup -p "$T/as.profile" --memory 64M -- ./hog mem 1 100
is "memory-rlimit yes: policy_resolved says so" "$(field "$A" policy_resolved .policy.memory_rlimit)" true
check "memory-rlimit yes: the mapping is refused with ENOMEM" grep -q 'ENOMEM' "$O"

check_run_audits root "$WR" m
check_run_audits "uid $NOBODY" "$WU" m
finish
