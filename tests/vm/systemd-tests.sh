#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The systemd VM's tests (build-systemd-image.sh, run.sh VM_IMAGE=systemd):
# skillrun as an ordinary user (tester, uid 1000, lingering: logind started
# its user manager at boot) in a login session (su -l, as ssh would make
# one), whose cgroup v2 is not delegated.  skillrun must get a transient
# scope with Delegate=yes from the user manager, hold the limits there
# (enforced_by cgroup2, the scope named in policy_resolved), stop each
# hostile skill within 10% of its limit, and leave no scope behind; with
# no manager reachable it falls back (prefer) or fails closed (require).
#   systemd-tests.sh root   the unit's entry: checks the boot, runs the
#                           user part in a login session, powers off
#   systemd-tests.sh user   the tests, as tester
# Every line for run.sh is printed with the "VMTAP: " prefix.
set -u

say() { echo "VMTAP: $*"; }
ok() { say "ok - systemd: $*"; }
not_ok() { say "not ok - systemd: $*"; }
diag() { say "# $*"; }
check() { # check DESCRIPTION COMMAND...
  d=$1
  shift
  if "$@"; then ok "$d"; else not_ok "$d"; fi
}

if [ "${1:-}" = root ]; then
  exec </dev/null
  diag "systemd up at $(cut -d' ' -f1 /proc/uptime) s of kernel uptime, $(uname -r), $(systemctl --version | head -n 1)"
  check "tester's user manager runs (user@1000.service, lingering)" \
    systemctl is-active --quiet user@1000.service
  check "its private socket exists" test -S /run/user/1000/systemd/private
  diag "user@1000 delegates: $(cat /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/cgroup.controllers 2>/dev/null)"
  B=/tmp/vm-bundle
  mkdir -p "$B"
  cp /usr/libexec/skillrun-vm/hog "$B/hog"
  cat >"$B/SKILL.md" <<'EOF'
---
name: vm-systemd-test
description: Exercises skillrun's delegated systemd scope in the VM tier.
---
Runs the command given after `--`.
EOF
  chmod -R a+rX "$B"
  # A login session, as ssh or a console login makes one (pam_systemd).
  timeout 600 su -l tester -c '/usr/libexec/skillrun-vm/systemd-tests.sh user'
  rc=$?
  check "the tests as tester ran to the end (exit $rc)" [ "$rc" = 0 ]
  # tester's skillrun in a system service with a limit of its own (an
  # administrator's MemoryMax=, root's cgroup, not delegated): a scope
  # from the user manager would be outside that limit, so none is asked
  # for; prefer falls back inside the service, require fails closed.
  W=/tmp/vm-limited
  mkdir -p "$W"
  chown tester "$W"
  chmod 700 "$W"
  printf 'include default\ncgroup require\n' >"$W/require.profile"
  chmod 644 "$W/require.profile"
  limited() { # limited ID [skillrun options]: exit status in $rc
    lid=$1
    shift
    systemd-run --quiet --wait --collect --uid=tester -p MemoryMax=64M \
      -p StandardOutput=null -p StandardError=file:"$W/$lid.err" \
      --setenv=XDG_RUNTIME_DIR=/run/user/1000 \
      /usr/bin/skillrun --workspace-root "$W" --execution-id "$lid" \
      --audit-file "$W/$lid.audit" "$@" "$B" -- /bin/true
    rc=$?
  }
  limited lim
  lunit=$(jq -r 'select(.event=="policy_resolved") | .systemd_scope.unit // "null"' "$W/lim.audit" 2>/dev/null)
  lwhy=$(jq -r 'select(.event=="policy_resolved") | .systemd_scope.reason // "null"' "$W/lim.audit" 2>/dev/null)
  diag "limited: exit $rc, scope $lunit, reason: $lwhy; stderr: $(head -c 300 "$W/lim.err" | tr '\n' ' ')"
  check "limited: cgroup prefer runs (exit $rc)" [ "$rc" = 0 ]
  check "limited: no scope outside the service's MemoryMax= ($lunit)" [ "$lunit" = null ]
  check "limited: the reason names memory.max" \
    sh -c 'case "$1" in *"memory.max 67108864"*) exit 0 ;; esac; exit 1' - "$lwhy"
  limited lim-req -p "$W/require.profile"
  check "limited: cgroup require fails closed (exit $rc, want 125)" [ "$rc" = 125 ]
  left=$(find /sys/fs/cgroup -name 'skillrun-*.scope' 2>/dev/null)
  check "no skillrun scope is left anywhere${left:+: $left}" [ -z "$left" ]
  say "# done at $(cut -d' ' -f1 /proc/uptime) s of kernel uptime"
  echo "VMTAP-DONE"
  sync
  systemctl poweroff --force --force
  exit 0
fi

# ---------------------------------------------------------------- user
B=/tmp/vm-bundle
WS=$HOME/ws
mkdir -p "$WS"
chmod 700 "$WS"
MiB=1048576

own=$(sed -n 's/^0:://p' /proc/self/cgroup)
diag "tester's session: cgroup $own, XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-unset}"
# The premise: the session's cgroup is not the user's to write.
check "tester's own cgroup ($own) is not delegated to it" \
  [ ! -w "/sys/fs/cgroup$own/cgroup.subtree_control" ]

# pr AUDIT JQ-FILTER: a field of policy_resolved.
pr() { jq -r "select(.event==\"policy_resolved\") | $2" "$1" 2>/dev/null | tail -n 1; }
# done_ AUDIT FIELD: a field of execution_completed.
done_() { jq -r "select(.event==\"execution_completed\") | .$2 // empty" "$1" 2>/dev/null | tail -n 1; }
has_event() { # has_event AUDIT EVENT [REGEX]
  grep "\"event\": *\"$2\"" "$1" | grep -q -- "${3:-.}"
}
# gone PATH UNIT: within 5 s the scope's cgroup is gone and the manager no
# longer has the unit (CollectMode=inactive-or-failed).
gone() {
  i=0
  while [ $i -lt 50 ] && [ -e "$1" ]; do
    sleep 0.1
    i=$((i + 1))
  done
  while [ $i -lt 50 ] && [ "$(systemctl --user show -P LoadState "$2" 2>/dev/null)" = loaded ]; do
    sleep 0.1
    i=$((i + 1))
  done
  [ $i -lt 50 ]
}

# run ID [skillrun options] BUNDLE -- command...: audit in $WS/ID.audit,
# exit status in $rc.
run() {
  id=$1
  shift
  skillrun --workspace-root "$WS" --execution-id "$id" \
    --audit-file "$WS/$id.audit" --timeout 120s "$@" \
    >"$WS/$id.out" 2>"$WS/$id.err"
  rc=$?
  diag "$id: exit $rc, $(done_ "$WS/$id.audit" status); stderr: $(head -c 300 "$WS/$id.err" | tr '\n' ' ')"
}
# scoped ID: the run had its leaf below a scope that is gone now.
scoped() {
  a=$WS/$1.audit
  # One jq for all the fields (each start costs under TCG).
  f=$(jq -r 'select(.event=="policy_resolved") | [.systemd_scope.unit,
      .systemd_scope.path, .cgroup, .systemd_scope.reason,
      (.systemd_scope.controllers // [] | join(" ")),
      ([.policy.limits.memory.enforced_by, .policy.limits.pids.enforced_by,
        .policy.limits["cpu-seconds"].enforced_by] | join(","))]
      | map(. // "null") | join("|")' "$a" 2>/dev/null | tail -n 1)
  IFS='|' read -r unit spath leaf reason ctl enf <<EOF
$f
EOF
  diag "$1: scope $unit at $spath (controllers: $ctl), leaf $leaf; reason $reason"
  check "$1: policy_resolved names the scope (${unit:-none})" \
    sh -c 'case "$1" in skillrun-*.scope) exit 0 ;; esac; exit 1' - "$unit"
  check "$1: ... with no reason against it" [ "$reason" = null ]
  check "$1: ... the run's leaf is below the scope" \
    sh -c '[ -n "$2" ] && [ "${1%/run-*}" = "$2" ]' - "$leaf" "$spath"
  check "$1: memory, pids and cpu-seconds enforced_by cgroup2" \
    [ "$enf" = cgroup2,cgroup2,cgroup2 ]
  check "$1: the scope is gone once skillrun returned" gone "$spath" "$unit"
}

# ---------------------------------------------------------------- plain
run plain "$B" -- /bin/sh -c 'cat /proc/self/cgroup'
check "plain: exit 0" [ "$rc" = 0 ]
diag "plain: warnings: $(jq -r 'select(.event=="warning") | .message' "$WS/plain.audit" | tr '\n' ' ')"
check "plain: no fallback warning (\"no cgroup\")" \
  sh -c '! jq -r "select(.event==\"warning\") | .message" "$1" | grep -q "no cgroup"' - "$WS/plain.audit"
scoped plain
check "plain: measured_by cgroup2" [ "$(done_ "$WS/plain.audit" measured_by)" = cgroup2 ]

# While a run lives its scope is delegated and holds the supervisor.  The
# skill waits for a line on its stdin (a FIFO held open here), so it lives
# for as long as the checks take, however slow the VM.
mkfifo "$WS/live.fifo"
skillrun --workspace-root "$WS" --execution-id live --audit-file "$WS/live.audit" \
  --stdin "$B" -- /bin/sh -c 'read line' <"$WS/live.fifo" >/dev/null 2>&1 &
srpid=$!
exec 3>"$WS/live.fifo"
i=0
while [ $i -lt 300 ] && [ -z "$(jq -c 'select(.state == "running")' "$WS/live.audit" 2>/dev/null)" ]; do
  sleep 0.1
  i=$((i + 1))
done
lunit=$(pr "$WS/live.audit" .systemd_scope.unit)
lpath=$(pr "$WS/live.audit" .systemd_scope.path)
diag "live: after $i polls: scope $lunit, Delegate=$(systemctl --user show -P Delegate "$lunit" 2>&1), supervisor in $(cat "/proc/$srpid/cgroup" 2>&1)"
check "live: the manager has the scope, Delegate=yes" \
  [ "$(systemctl --user show -P Delegate "$lunit" 2>/dev/null)" = yes ]
check "live: the supervisor is in the scope's supervisor leaf" \
  grep -qx "0::${lpath#/sys/fs/cgroup}/supervisor" "/proc/$srpid/cgroup"
echo done >&3
exec 3>&-
wait "$srpid"
check "live: exit 0" [ "$?" = 0 ]
check "live: the scope is gone once skillrun returned" gone "$lpath" "$lunit"

# skillrun SIGKILLed while its skill runs: the skill dies with the
# sandbox, and the manager collects the scope, leaf and all.
skillrun --workspace-root "$WS" --execution-id killed --audit-file "$WS/killed.audit" \
  "$B" -- /bin/sh -c 'sleep 600 & sleep 600' >/dev/null 2>&1 &
srpid=$!
i=0
while [ $i -lt 300 ] && [ -z "$(jq -c 'select(.state == "running")' "$WS/killed.audit" 2>/dev/null)" ]; do
  sleep 0.1
  i=$((i + 1))
done
kunit=$(pr "$WS/killed.audit" .systemd_scope.unit)
kpath=$(pr "$WS/killed.audit" .systemd_scope.path)
kill -KILL "$srpid"
wait "$srpid" 2>/dev/null
# (Its audit ends where skillrun was killed: not for --verify-audit below.)
rm -f "$WS/killed.audit"
check "killed: the scope ($kunit) is gone after skillrun's SIGKILL" gone "$kpath" "$kunit"
check "killed: no sleep 600 of the skill is left" sh -c '
  for f in /proc/[0-9]*/cmdline; do
    [ "$(tr "\0" " " <"$f" 2>/dev/null)" != "sleep 600 " ] || exit 1
  done'

# ---------------------------------------------------------------- hostile
# hostile ID STATUS LIMIT OPTION... -- COMMAND...
hostile() {
  id=$1 want=$2 limit=$3
  shift 3
  run "$id" "$@"
  check "$id: exit 137" [ "$rc" = 137 ]
  check "$id: status $want" [ "$(done_ "$WS/$id.audit" status)" = "$want" ]
  check "$id: limit_exceeded $limit" has_event "$WS/$id.audit" limit_exceeded "\"$limit\""
  check "$id: measured_by cgroup2" [ "$(done_ "$WS/$id.audit" measured_by)" = cgroup2 ]
  scoped "$id"
}
figure() { v=$(done_ "$1" "$2"); echo "${v:-0}"; }

hostile mx-mem oom memory --memory 64M "$B" -- ./hog mem 6 400
check "mx-mem: memory split over 6 processes: memory_peak within 10% of 64 MiB" \
  [ "$(figure "$WS/mx-mem.audit" memory_peak)" -le $((64 * MiB * 11 / 10)) ]
hostile mx-memfd oom memory --memory 48M "$B" -- ./hog memfd 400
check "mx-memfd: a memfd grown by write(): memory_peak within 10% of 48 MiB" \
  [ "$(figure "$WS/mx-memfd.audit" memory_peak)" -le $((48 * MiB * 11 / 10)) ]
hostile mx-cpu cpu_exceeded cpu --cpu-seconds 2 "$B" -- ./hog cpu 3
usec=$(figure "$WS/mx-cpu.audit" cpu_usec)
check "mx-cpu: CPU over 3 processes: cpu_usec $usec within 10% above 2 s" \
  sh -c '[ "$1" -ge 2000000 ] && [ "$1" -le 2200000 ]' - "$usec"
hostile mx-fork pids_exceeded pids --pids 32 "$B" -- ./hog forkbomb
check "mx-fork: fork bomb: pids_peak $(figure "$WS/mx-fork.audit" pids_peak) at most 32" \
  [ "$(figure "$WS/mx-fork.audit" pids_peak)" -le 32 ]
# (16 MiB: under TCG a flood up to 64 MiB of inodes takes minutes; the
# busybox tier runs it at 64 MiB.)
run mx-inodes --memory 16M "$B" -- ./hog inodes 4000000
check "mx-inodes: an inode flood on scratch is stopped by the memory limit or the inode cap" \
  sh -c '[ "$1" = 137 ] || grep -q "stopped at .*ENOSPC" "$2"' - "$rc" \
  "$WS/default/mx-inodes/logs/stdout.log"
scoped mx-inodes
# Node.js under the default limits: V8 reserves far more address space
# than 512 MiB, which an RLIMIT_AS would refuse (exit 133).
run mx-node "$B" -- node -e 'process.exit(0)'
check "mx-node: node -e starts under the default limits (exit 0)" [ "$rc" = 0 ]
scoped mx-node

# ---------------------------------------------------------------- require
printf 'include default\ncgroup require\n' >"$WS/require.profile"
run req -p "$WS/require.profile" "$B" -- /bin/true
check "require: met by the scope, exit 0" [ "$rc" = 0 ]
scoped req

# ---------------------------------------------------------------- no manager
# The manager unreachable (an empty runtime directory, no session bus):
# prefer falls back to the supervisor and says why; require fails closed.
mkdir -p "$WS/empty-rt"
nomgr() {
  env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR="$WS/empty-rt" "$@"
}
nomgr skillrun --workspace-root "$WS" --execution-id nomgr \
  --audit-file "$WS/nomgr.audit" "$B" -- /bin/true >/dev/null 2>"$WS/nomgr.err"
rc=$?
check "no manager: cgroup prefer runs (exit $rc)" [ "$rc" = 0 ]
why=$(pr "$WS/nomgr.audit" .systemd_scope.reason)
diag "no manager: reason: $why"
check "no manager: systemd_scope has no unit" [ "$(pr "$WS/nomgr.audit" .systemd_scope.unit)" = null ]
check "no manager: the reason says no manager answered" \
  sh -c 'case "$1" in *"no systemd user manager reachable"*) exit 0 ;; esac; exit 1' - "$why"
check "no manager: memory enforced_by supervisor" \
  [ "$(pr "$WS/nomgr.audit" .policy.limits.memory.enforced_by)" = supervisor ]
check "no manager: the fallback's warning carries the reason" \
  has_event "$WS/nomgr.audit" warning "no systemd user manager reachable"
nomgr skillrun --workspace-root "$WS" --execution-id nomgr-req \
  --audit-file "$WS/nomgr-req.audit" -p "$WS/require.profile" "$B" -- /bin/true \
  >/dev/null 2>"$WS/nomgr-req.err"
rc=$?
check "no manager: cgroup require fails closed (exit $rc, want 125)" [ "$rc" = 125 ]
check "no manager: ... layer_failed cgroup" has_event "$WS/nomgr-req.audit" layer_failed '"cgroup"'

for f in "$WS"/*.audit; do
  skillrun --verify-audit "$f" >/dev/null 2>&1 || not_ok "audit verifies: $f"
done
exit 0
