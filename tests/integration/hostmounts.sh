#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A host with many mounts (container hosts, snaps): 300 extra tmpfs mounts
# in a private mount namespace of the test's, and runs there as root and as
# the unprivileged user.  Each run succeeds, its audit verifies, and the
# sandbox's mount table is the same as on the host without them: none of
# those mounts (outside every path the view binds) reaches the skill, and
# init's own check of the table
# (src/mount.c, verify_mountinfo) passes on it.  That check reads the
# table once the host's mounts have left init's namespace; this test is
# what shows that the reorder keeps it working where the host's table is
# long.  Timings stay in bench/.
# TAP; needs SKILLRUN.  Root only: the mounts are made with unshare -m.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "needs root: it mounts 300 tmpfs in a private mount namespace (unshare -m)"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
N=300
T=$(tmpdir)
B=$T/mounts-skill
mkbundle "$B"

# run MODE WS OUT: one run printing the sandbox's mount table.
run() {
  in_mode "$1" "$SKILLRUN" --workspace-root "$2" "$B" -- /bin/cat /proc/self/mountinfo >"$3"
}
# table WS AUDIT: the mount points the skill saw, one per line.
table() {
  awk '{ print $5 }' "$(field "$2" execution_started .run_dir)/logs/stdout.log"
}

for mode in $MODES; do
  W=$(mode_workspace "$mode")
  run "$mode" "$W" "$T/$mode-plain.jsonl"
  is "$mode: a run without the extra mounts succeeds" "$?" 0
  table "$W" "$T/$mode-plain.jsonl" >"$T/$mode-plain.table"
  check "$mode: ... and its skill saw a mount table" test -s "$T/$mode-plain.table"
done

# The mounts live and die with this namespace: nothing is left on the host.
mkdir "$T/m"
for mode in $MODES; do mode_workspace "$mode" >"$T/$mode.ws"; done
# shellcheck disable=SC2016 # expanded by the inner shell, from its environment
SKILLRUN=$SKILLRUN B=$B T=$T N=$N MODES=$MODES AS_USER_WORDS="${AS_USER[*]}" \
  unshare -m --propagation private bash -c '
  for i in $(seq "$N"); do
    mkdir -p "$T/m/$i" && mount -t tmpfs -o size=4k "hostmount-$i" "$T/m/$i" || exit 9
  done
  grep -c " hostmount-" /proc/self/mountinfo >"$T/host.count"
  for mode in $MODES; do
    pre=()
    [ "$mode" = user ] && read -r -a pre <<<"$AS_USER_WORDS"
    "${pre[@]}" "$SKILLRUN" --workspace-root "$(cat "$T/$mode.ws")" "$B" -- \
      /bin/cat /proc/self/mountinfo >"$T/$mode-many.jsonl"
    echo $? >"$T/$mode-many.rc"
  done
'
is "the namespace has the $N extra mounts" "$(cat "$T/host.count" 2>/dev/null)" "$N"
for mode in $MODES; do
  A=$T/$mode-many.jsonl
  is "$mode: with $N more host mounts the run succeeds" "$(cat "$T/$mode-many.rc" 2>/dev/null)" 0
  is "$mode: ... its record says succeeded" "$(field "$A" execution_completed .status)" succeeded
  check "$mode: ... its audit verifies" audit_ok "$A"
  table "$(cat "$T/$mode.ws")" "$A" >"$T/$mode-many.table"
  check "$mode: ... none of them reaches the skill" not grep -q "^$T/m/" "$T/$mode-many.table"
  check "$mode: ... the sandbox's mount table is the one without them" \
    cmp -s "$T/$mode-plain.table" "$T/$mode-many.table"
done
skip_modes
finish
