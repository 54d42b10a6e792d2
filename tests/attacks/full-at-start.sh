#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a run that starts with no room in its
# workspace root (a full disk, a quota: a fault, or a neighbour filling
# a shared file system).  The run fails (125, audit_write) and its stream
# says so; what it left in the root disagreed with that:
# - with up to 12 KiB free, its run directory held an empty audit.jsonl
#   and its marker, which gc then closed as abandoned (a chain of its
#   own, skill null), the id refused ever after as one "whose supervisor
#   died";
# - with 16 KiB, execution_started had no room beside the final events'
#   and went nowhere: stream and audit.jsonl began with the error.
# Now a run with nothing on its record leaves no run directory and no
# marker (execution_started names no run_dir; the id may run again once
# there is room), and one with a record has it whole from
# execution_started on, with its metadata.json.  A tmpfs of 256 KiB of its
# own (in a mount namespace of its own), filled to leave 0 to 28 KiB.  As
# root and as the unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

full_tmpfs_start

cat >"$T/sweep.sh" <<'EOS'
# sweep.sh MOUNTPOINT BUNDLE MODE UID: one line per amount of free room:
# FREE RC FIRST-EVENT RUN_DIR DIR LEDGER METADATA MARKERS GC-RC AGAIN-RC
set -u
mnt=$1 bundle=$2 mode=$3 uid=$4
if [ "$mode" = user ]; then
  pre=(setpriv --reuid="$uid" --regid="$uid" --clear-groups -- env -u XDG_RUNTIME_DIR)
else
  pre=(env)
fi
mount -t tmpfs -o "size=256k,mode=0755,uid=$uid,gid=$uid" full "$mnt" || exit 1
for free in $(seq 0 4 28); do
  id=f$free
  rm -f "$mnt/fill"
  avail=$(df -B1 --output=avail "$mnt" | tail -n 1)
  fallocate -l $((avail - free * 1024)) "$mnt/fill" || exit 1
  "${pre[@]}" "$SKILLRUN" --workspace-root "$mnt" --execution-id "$id" "$bundle" \
    -- /bin/true >"$mnt.a" 2>/dev/null
  rc=$?
  first=$("$JQ" -r 'select(.seq == 0) | .event' "$mnt.a" 2>/dev/null)
  rundir=$("$JQ" -r 'select(.event == "execution_started") | .run_dir' "$mnt.a" 2>/dev/null)
  dir=absent ledger=- meta=-
  if [ -d "$mnt/default/$id" ]; then
    dir=present
    ledger=$("$JQ" -r 'select(.event == "execution_completed") | .status' \
      "$mnt/default/$id/audit.jsonl" 2>/dev/null)
    "$SKILLRUN" --verify-audit "$mnt/default/$id/audit.jsonl" >/dev/null 2>&1 || ledger=broken
    meta=$("$JQ" -r .result.status "$mnt/default/$id/metadata.json" 2>/dev/null)
  fi
  markers=$(find "$mnt/.active" -name "default:$id" 2>/dev/null | wc -l)
  rm -f "$mnt/fill"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$mnt" >/dev/null 2>&1
  gc=$?
  # The same id, with room: it runs unless it is on the record.
  "${pre[@]}" "$SKILLRUN" --workspace-root "$mnt" --execution-id "$id" "$bundle" \
    -- /bin/true >/dev/null 2>&1
  again=$?
  [ "$rundir" = "$mnt/default/$id" ] && rundir=this
  echo "$free $rc ${first:--} ${rundir:--} $dir ${ledger:--} ${meta:--} $markers $gc $again"
  "${pre[@]}" rm -rf "$mnt/default/$id"
done
umount "$mnt"
EOS

for mode in $MODES; do
  out=$(sweep_own_tmpfs "$mode" "$T/sweep.sh")
  diag "$mode: free KiB, rc, first event, run_dir, run directory, ledger, metadata, markers, gc, again:"
  while read -r line; do diag "  $line"; done <<<"$out"
  is "$mode: eight amounts of free room tried" "$(grep -c '^[0-9]' <<<"$out")" 8
  while read -r free rc first rundir dir ledger meta markers gc again; do
    [[ $free == [0-9]* ]] || continue
    want=error
    [ "$rc" = 0 ] && want=succeeded
    check "$mode, ${free} KiB free: the run fails (125) or, with room enough, succeeds ($rc)" \
      [ "$rc" = 125 -o "$rc" = 0 ]
    is "$mode, ${free} KiB free: ... its stream begins with execution_started" "$first" execution_started
    if [ "$dir" = present ]; then
      is "$mode, ${free} KiB free: ... which names its run directory" "$rundir" this
      is "$mode, ${free} KiB free: ... whose audit.jsonl is whole and says $want" "$ledger" "$want"
      is "$mode, ${free} KiB free: ... as its metadata.json does" "$meta" "$want"
      is "$mode, ${free} KiB free: ... the id is taken for good" "$again" 123
    else
      is "$mode, ${free} KiB free: ... which names no run directory (none is left)" "$rundir" null
      is "$mode, ${free} KiB free: ... and the id runs once there is room" "$again" 0
    fi
    is "$mode, ${free} KiB free: ... no marker is left for gc" "$markers" 0
    is "$mode, ${free} KiB free: ... and gc has nothing to fail on" "$gc" 0
  done <<<"$out"
done

finish
