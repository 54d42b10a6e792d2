#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs after every other test (Makefile.am orders it): nothing this run of
# the suite created may remain: no process of its tests or of the sandboxes
# they ran, no mount of its data, no test directory, no tmpfs staging, no
# uid-pool slot held, no cgroup leaf of its runs.
#
# Only this suite's objects count, so that the check holds while other
# skillrun runs, or another checkout's `make check`, are active on the host:
# the suite's processes carry their test's root in their environment, or
# descend from one that does (lib.sh _pid_root); its data lives below
# $SUITE; its workspace roots and runs are in $SUITE/ledger (lib.sh
# _ledger_runs), and tmpfs staging is named after the workspace root's
# hash, a cgroup leaf after the run (src/workspace.c tmpfs_staging_name,
# src/supervisor.c leaf_name).  leaks-selftest.sh shows a planted leak of
# the suite's own is caught and a concurrent foreign run is not reported.
. "$(dirname "$0")/lib.sh"

ledger=$SUITE/ledger
# Our own children carry our test root: not leaks.
export -n SKILLRUN_TEST_ROOT

declare -A roots=() runs=() bases=()
if [ -f "$ledger" ]; then
  while read -r kind a b; do
    case $kind in
    root) roots[$a]=$b ;;
    run) runs["$a:$b"]=1 ;; # ids may contain dots, never colons
    base) bases[$a]=1 ;;
    esac
  done <"$ledger"
fi

# ours PID: whether PID belongs to this suite (and is not this script's).
ours() {
  _pid_root "$1"
  case $_root in
  "$_test_root") return 1 ;;
  "$SUITE/"*) return 0 ;;
  esac
  return 1
}
# describe PID: "[PID] COMMAND LINE" for a report.
describe() {
  local -a w=()
  mapfile -d '' -t w 2>/dev/null <"/proc/$1/cmdline"
  echo "[$1] ${w[*]:0:12}"
}

procs=""
for d in /proc/[0-9]*; do
  p=${d#/proc/}
  [ "$p" = $$ ] && continue
  ours "$p" && procs="$procs$(describe "$p")"$'\n'
done
is "no process of the suite's tests or of their sandboxes is left" "${procs%$'\n'}" ""

# Host mounts of the suite's data or of its staging; or at /workspace, which
# only exists inside a sandbox.
mounts=""
while read -r _ _ _ root point _; do
  hit=0
  case "$root $point" in *"$SUITE/"* | *" /workspace" | *" /workspace/"*) hit=1 ;; esac
  for h in "${!roots[@]}"; do
    case $root$point in *"/$h-"*) hit=1 ;; esac
  done
  [ $hit = 1 ] && mounts="$mounts $point"
done </proc/self/mountinfo
is "no mount of the suite's data is left on the host" "$mounts" ""

# Test directories: the suite's directory holds nothing but the ledger and
# this script's own root; directories the tests made elsewhere (on a tmpfs,
# say) are in the ledger too.
dirs=$(find "$SUITE" -mindepth 1 -maxdepth 1 ! -name ledger ! -path "$_test_root" 2>/dev/null)
if [ -f "$ledger" ]; then
  while read -r kind a _; do
    [ "$kind" = dir ] && [ -e "$a" ] && dirs="$dirs $a"
  done <"$ledger"
fi
is "no test directory is left" "$dirs" ""

# Staging on tmpfs (workspace.h): "<16 hex of the root's sha256>-<tenant>:
# <execution>" in the bases of every uid the suite ran as.
staging=""
for base in /dev/shm/skillrun-[0-9]* /run/skillrun-staging "${XDG_RUNTIME_DIR:-/nonexistent}/skillrun"; do
  [ -d "$base" ] || continue
  for s in "$base"/*-*; do
    [ -e "$s" ] || continue
    n=${s##*/}
    [ -n "${roots[${n%%-*}]+x}" ] && staging="$staging $s (workspace root ${roots[${n%%-*}]})"
  done
  # The bases themselves are skillrun's to recreate on demand: those the
  # suite made go when empty (rmdir leaves one in use alone).
  [ -n "${bases[$base]+x}" ] || rmdir "$base" 2>/dev/null
done
is "no staging directory of the suite's runs is left on tmpfs" "$staging" ""

# lockkey PATH: "MAJOR:MINOR:INODE" (hex, hex, decimal), as proc(5)
# /proc/locks names the file; holders KEY PATH: the pids holding a lock on it.
lockkey() { stat -L -c '%Hd %Ld %i' "$1" 2>/dev/null | { read -r ma mi ino && printf '%02x:%02x:%s' "$ma" "$mi" "$ino"; }; }
# The pid there is the one that took the lock; when it is gone (flock(1)
# locks a descriptor its caller keeps), the holders are the processes that
# have PATH open.
holders() { # KEY PATH
  local p
  for p in $(awk -v k="$1" '$6 == k { print $5 } $7 == k { print $6 }' /proc/locks); do
    if [ -d "/proc/$p" ]; then echo "$p"; else
      find /proc/[0-9]*/fd -lname "$2" 2>/dev/null | cut -d/ -f3 | sort -u
    fi
  done
}

# uid-pool slots (root runs): a slot is held while a run's supervisor has
# it locked; one held by a process of the suite's is the suite's leak.
held=""
for f in /run/skillrun/uid-pool/*; do
  [ -f "$f" ] || continue
  k=$(lockkey "$f")
  for p in $(holders "$k" "$f"); do
    ours "$p" && held="$held ${f##*/}(pid $p)"
  done
done
is "no uid-pool slot is held by the suite" "$held" ""

# cgroup leaves "run-<tenant>.<execution>.<root>" (host.c leaf_name: a
# dotted tenant's or a long pair's is hashed; root:
# 8 hex digits of the workspace root's SHA-256) named after one of the
# suite's runs.  A live run keeps its leaf locked: one locked by someone
# else's process is theirs (another suite may use the same ids).  An
# unlocked one is a leak, ours when no one else removes it within a second
# (a run unlocks its leaf just before removing it).
leaf_of() { # TENANT EXECUTION: the leaf's name without its ".<root>"
  if [ "${1#*.}" = "$1" ] && [ $((${#1} + 1 + ${#2})) -le 55 ]; then echo "run-$1.$2"; else
    echo "run-${2:0:38}.$(printf '%s:%s' "$1" "$2" | sha256sum | cut -c1-16)"
  fi
}
declare -A leafnames=()
for r in "${!runs[@]}"; do leafnames[$(leaf_of "${r%%:*}" "${r#*:}")]=1; done
# cgroup v2 (unified or hybrid), and the skillrun subtree of every cgroup
# v1 hierarchy skillrun uses (memory, pids, cpuacct; wherever mounted;
# mountinfo: the file system type follows the "-" field).
v1=$(awk '{ for (i = 7; i < NF; i++) if ($i == "-") break }
  $(i + 1) == "cgroup" && $NF ~ /(^|,)(memory|pids|cpuacct)(,|$)/ {print $5 "/skillrun"}' \
  /proc/self/mountinfo)
cgroup_dirs=${LEAKS_CGROUP_DIRS:-/sys/fs/cgroup/skillrun /sys/fs/cgroup/unified/skillrun $v1}
if [ -z "${LEAKS_CGROUP_DIRS:-}" ] && [ "$(id -u)" -ne 0 ]; then
  # An ordinary user's runs make their leaves in their own delegated cgroup.
  own=$(sed -n 's/^0::\(.*\)/\1/p' /proc/self/cgroup)
  for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do cgroup_dirs="$cgroup_dirs $m$own"; done
fi
leaf_leaks() {
  local dir l n p k mine out=""
  for dir in $cgroup_dirs; do
    for l in "$dir"/run-*; do
      n=${l##*/}
      [ -d "$l" ] && [[ $n =~ \.[0-9a-f]{8}$ ]] && [ -n "${leafnames[${n%.*}]+x}" ] || continue
      k=$(lockkey "$l")
      mine=maybe
      for p in $(holders "$k" "$l"); do
        if ours "$p"; then mine=yes; elif [ $mine = maybe ]; then mine=no; fi
      done
      [ $mine = no ] || out="$out $l"
    done
  done
  echo "$out"
}
leaves=$(leaf_leaks)
[ -n "$leaves" ] && sleep 1 && leaves=$(leaf_leaks)
is "no cgroup leaf of the suite's runs is left" "$leaves" ""

# The suite's directory goes with this script's root when all is clean.
if [ "$_tap_failed" -eq 0 ] && [ "$_suite_private" = 0 ]; then
  trap 'cleanup; rm -f "$ledger"; rmdir "$SUITE" 2>/dev/null' EXIT
fi
finish
