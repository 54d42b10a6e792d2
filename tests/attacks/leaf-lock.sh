#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, another local user against root's cgroup
# leaves and subtree.
#
# A run's leaf carries its flock(2), which --gc reads as "a live run holds
# it".  Leaves were made 0755 and locked after the mkdir: any user could
# open a new leaf (inotify on the subtree says when) and take the lock
# first, and 4 runs of 5 failed (125, layer_failed cgroup, "lock ...:
# Resource temporarily unavailable"); or take a dead run's lock and keep
# its leaves from --gc for as long as they liked.  Leaves are now 0700:
# no other user opens one.
#
# Root also used a v1 `skillrun` subtree whatever its owner: one an
# administrator had chowned to a user (as skillrun(1) suggests for that
# user's runs) let that user lower its memory.limit_in_bytes, and root's
# run was killed at 4 MiB while its record said its 64 MiB limit was
# exceeded.  A subtree another user may write is now not used: `prefer`
# samples instead and says why, `require` fails.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "needs root: the attacker is another user than root's runs"
. "$(dirname "$0")/common.sh"

# The three v1 leaves of a run from its memory leaf, or the one v2 leaf.
leaves_of() {
  case $1 in
  */memory/*) for c in memory pids cpuacct; do echo "${1/\/memory\//\/$c\/}"; done ;;
  *) echo "$1" ;;
  esac
}
# Opens DIR read-only as the other user: 0 when it could.
user_opens() { as_user sh -c 'exec 9<"$1"' - "$1" 2>/dev/null; }

W=$WS_root
"$SKILLRUN" --workspace-root "$W" --execution-id live "$B" -- /bin/sleep 60 \
  >"$T/live.out" 2>"$T/live.err" &
sup=$!
bg_pids+=("$sup")
wait_running "$T/live.out"
leaf=$(field "$T/live.out" policy_resolved .cgroup)
if [ -z "$leaf" ] || [ "$leaf" = null ]; then
  kill "$sup"
  wait "$sup"
  skip_all "root's runs get no cgroup leaf here ($(field "$T/live.out" warning .message))"
fi
mapfile -t LEAVES < <(leaves_of "$leaf")
diag "leaves: ${LEAVES[*]}"
check "the other user can open the subtree (so the checks below can fail)" \
  user_opens "$(dirname "$leaf")"
for l in "${LEAVES[@]}"; do
  is "a live run's leaf ${l##*/skillrun/} is mode 700" "$(stat -c %a "$l")" 700
  check "... which the other user cannot open (and so not lock)" not user_opens "$l"
done

# The supervisor killed: its leaves stay, for --gc.  The other user tries
# to hold their locks.
kill -KILL "$sup"
wait "$sup" 2>/dev/null
for l in "${LEAVES[@]}"; do
  tasks=$l/cgroup.procs
  [ -f "$tasks" ] || tasks=$l/tasks
  for _ in $(seq 200); do
    [ -s "$tasks" ] || break
    sleep 0.05
  done
done
holders=()
for l in "${LEAVES[@]}"; do
  # Not as_user: $! must be the holder itself, whose end frees the lock.
  "${AS_USER[@]}" sh -c 'exec 9<"$1" && flock -n 9 && echo held && exec sleep 60' - "$l" \
    >"$T/held.${l##*/}.${#holders[@]}" 2>/dev/null &
  holders+=("$!")
  bg_pids+=("$!")
done
sleep 0.5
is "the other user holds none of the dead run's leaves" "$(cat "$T"/held.* | wc -l)" 0
sleep 2 # past SR_CG_GC_MIN_AGE_SEC
"$SKILLRUN" --gc --workspace-root "$W" >"$T/gc.out" 2>&1
is "root's --gc closes the dead run" "$?:$(tail -n 1 "$T/gc.out")" \
  "0:gc: 1 dead run(s) cleaned under $(realpath "$W")"
for l in "${LEAVES[@]}"; do
  check "... and removes its leaf ${l##*/skillrun/}" not test -e "$l"
done
kill "${holders[@]}" 2>/dev/null
wait "${holders[@]}" 2>/dev/null
for l in "${LEAVES[@]}"; do
  [ ! -d "$l" ] || rmdir "$l" || diag "could not remove $l"
done

# A v1 subtree another user may write.  Played below an outer cgroup of
# the test's (with limits, so that root's subtree is made below it, not
# beside every other run's at the mount point).
V1=/sys/fs/cgroup
case $leaf in
*/memory/*) ;;
*)
  pass "# SKIP a v1 subtree of another user's: no cgroup v1 here (the VM tier covers cgroup v2)"
  finish
  exit 0
  ;;
esac
OUTER=skillrun-test-leaflock.$$
trap _outer_cleanup EXIT
mk_outer
echo $((1 << 30)) >"$V1/memory/$OUTER/memory.limit_in_bytes"
echo 1000 >"$V1/pids/$OUTER/pids.max"
outer_caller
SUB=$V1/memory/$OUTER/skillrun
printf 'include default\ncgroup require\n' >"$T/require.profile"
chmod 644 "$T/require.profile"

skill root -- /bin/true
is "root's run below the outer cgroup exits 0" "$rc" 0
is "... in a leaf of the subtree root made there" \
  "$(field "$AUDIT" policy_resolved .cgroup | sed 's,/run-[^/]*$,,')" "$SUB"
for how in "chown $NOBODY" "chmod 775" "chmod 757"; do
  chown 0 "$SUB" && chmod 755 "$SUB"
  $how "$SUB"
  skill root -- /bin/true
  is "$how of the subtree: root's run exits 0" "$rc" 0
  is "... with no leaf there" "$(field "$AUDIT" policy_resolved .cgroup)" null
  is "... sampled instead" "$(field "$AUDIT" policy_resolved .policy.limits.memory.enforced_by)" supervisor
  check "... and a warning that says why" grep -qF "$SUB is uid" "$AUDIT"
  skill root -p "$T/require.profile" -- /bin/true
  is "... cgroup require: refused (125)" "$rc" 125
  is "... layer_failed, layer cgroup" "$(field "$AUDIT" layer_failed .layer)" cgroup
done
chown 0 "$SUB" && chmod 755 "$SUB"
skill root -- /bin/true
is "root's own subtree again: a leaf there" \
  "$(field "$AUDIT" policy_resolved .cgroup | sed 's,/run-[^/]*$,,')" "$SUB"
CALLER=()

finish
