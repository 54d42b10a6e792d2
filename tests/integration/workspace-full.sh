#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A workspace root on a nearly full file system: whether a small run fits
# only grows with the room there is.  audit.jsonl's reservation used to
# round up to a whole 64 KiB step whenever the file system had it, so a
# tmpfs with 64 KiB free lost it all to the record's slack and the skill's
# log could not be written (125), where 40 KiB free was enough; on ext4 a
# step that did not fit was left half allocated (fallocate(2) keeps what it
# got), and 32 to 64 KiB free failed the same way.  A tmpfs of 256 KiB of
# its own (in a mount namespace of its own, unmounted at the end), filled
# to leave 32 to 160 KiB, 8 KiB apart: once a run succeeds, every run with
# more room does too.  As root and as the unprivileged user.
. "$(dirname "$0")/lib.sh"

full_tmpfs_start

# sweep.sh MOUNTPOINT BUNDLE MODE UID SIZE FROM STEP TO KIND: a tmpfs of
# SIZE KiB filled to leave FROM, FROM + STEP, ... TO KiB free; one line per
# amount of free room, "FREE RC WHAT".  KIND "small": a run that writes a
# line to each log and one output, WHAT the error's reason; "many": a run
# of 200 outputs, WHAT "listed/files" of its execution_completed.
cat >"$T/sweep.sh" <<'EOS'
set -u
mnt=$1 bundle=$2 mode=$3 uid=$4 size=$5 from=$6 step=$7 to=$8 kind=$9
if [ "$kind" = many ]; then
  skill='n=0; while [ $n -lt 200 ]; do n=$((n + 1));
           : >"$SKILLRUN_OUTPUTS/$(printf %0150d $n)"; done'
  what='select(.event == "execution_completed") |
        "\(.artifacts.list | length)/\(.artifacts.files)"'
else
  skill='echo hello; echo world >&2; echo out >"$SKILLRUN_OUTPUTS/o"'
  what='select(.event == "error") | .reason'
fi
if [ "$mode" = user ]; then
  pre=(setpriv --reuid="$uid" --regid="$uid" --clear-groups -- env -u XDG_RUNTIME_DIR)
else
  pre=(env)
fi
for free in $(seq "$from" "$step" "$to"); do
  mount -t tmpfs -o "size=${size}k,mode=0755,uid=$uid,gid=$uid" full "$mnt" || exit 1
  head -c $(((size - free) * 1024)) /dev/zero >"$mnt/fill"
  "${pre[@]}" "$SKILLRUN" --workspace-root "$mnt" --execution-id "$kind$free" "$bundle" \
    -- /bin/sh -c "$skill" >"$mnt.a" 2>/dev/null
  rc=$?
  got=$("$JQ" -r "$what" "$mnt.a" 2>/dev/null | head -n 1)
  echo "$free $rc ${got:--}"
  umount "$mnt" || exit 1
done
EOS

# A run of many outputs, whose final events list them: 200
# empty files of 150-byte names, a record of some 230 KB (the run's
# audit.jsonl 160 KB, metadata.json 65 KB), on a tmpfs of 1 MiB filled to
# leave 192 to 352 KiB.  The room kept for the list was that of the
# longest JSON each entry could have (seven bytes a path byte): 2.5 KB an
# entry, and no run succeeded with less than 616 KiB free, the
# artifact_committed events finding no room for themselves (125).
for mode in $MODES; do
  out=$(sweep_own_tmpfs "$mode" "$T/sweep.sh" 1024 192 32 352 many)
  diag "$mode: 200 outputs: free KiB, exit status, listed/files:"
  while read -r line; do diag "  $line"; done <<<"$out"
  first=$(awk '$2 == 0 { print $1; exit }' <<<"$out")
  check "$mode: a run of 200 outputs fits in 320 KiB, all listed" \
    grep -q '^320 0 200/200$' <<<"$out"
  is "$mode: past the first run of them that fits ($first KiB), every one with more room fits" \
    "$(awk -v f="${first:-999}" '$1 >= f && $2 != 0' <<<"$out")" ""
done

for mode in $MODES; do
  out=$(sweep_own_tmpfs "$mode" "$T/sweep.sh" 256 32 8 160 small)
  diag "$mode: free KiB, exit status, error reason:"
  while read -r line; do diag "  $line"; done <<<"$out"
  first=$(awk '$2 == 0 { print $1; exit }' <<<"$out")
  check "$mode: a run fits in 160 KiB of free room" grep -q '^160 0 ' <<<"$out"
  is "$mode: past the first run that fits ($first KiB), every one with more room fits" \
    "$(awk -v f="${first:-999}" '$1 >= f && $2 != 0' <<<"$out")" ""
done

finish
