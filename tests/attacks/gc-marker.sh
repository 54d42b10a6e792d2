#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, run markers (issue 14 item 2): whoever can write
# a workspace's .active directory must not make gc (--gc, or the next
# run's clean-up) remove a live run's staging or close its record.  gc acts
# on a marker only when it is provably the run's own: the very file of
# that run's audit.jsonl, with no other link, owned by the run directory's
# owner.  Each planted marker below (a file of its own over a live run's
# marker, a link to another run's ledger, a symlink to the live run's
# ledger, a FIFO) is left alone, and the live run ends as it would have.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/marker-skill
mkbundle "$B"
chmod -R a+rX "$T"

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id old "$B" -- /bin/true >/dev/null 2>&1
  is "$mode: a finished run to link to" "$?" 0

  for plant in file link symlink fifo; do
    id=live-$plant
    "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
      -- /bin/sh -c 'sleep 2; cat /workspace/inputs/bundle/SKILL.md >/dev/null' >"$W/a.$id" 2>/dev/null &
    pid=$!
    for _ in $(seq 200); do grep -q '"state":"running"' "$W/a.$id" 2>/dev/null && break; sleep 0.05; done
    staging=$(field "$W/a.$id" bundle_verified .staging)
    m=$W/.active/default:$id
    # The planter works as the run's own uid: it owns .active.
    case $plant in
    file) "${pre[@]}" sh -c 'echo planted >"$1.new" && mv -f "$1.new" "$1"' sh "$m" ;;
    link) "${pre[@]}" sh -c 'ln -f "$2" "$1.new" && mv -f "$1.new" "$1"' sh "$m" "$W/default/old/audit.jsonl" ;;
    symlink) "${pre[@]}" sh -c 'ln -sf "$2" "$1.new" && mv -f "$1.new" "$1"' sh "$m" "$W/default/$id/audit.jsonl" ;;
    fifo) "${pre[@]}" sh -c 'mkfifo "$1.new" && mv -f "$1.new" "$1"' sh "$m" ;;
    esac
    t0=$(date +%s%N)
    "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.$id" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    is "$mode, $plant: gc exits 0" "$rc" 0
    check "$mode, $plant: ... promptly (${ms} ms)" [ "$ms" -lt 3000 ]
    check "$mode, $plant: ... and leaves the live run's staging alone" [ -d "$staging/bundle" ]
    check "$mode, $plant: ... and its record open" \
      not grep -q abandoned "$W/default/$id/audit.jsonl"
    wait $pid
    is "$mode, $plant: the live run succeeds" "$?" 0
    is "$mode, $plant: ... its ledger ends succeeded" \
      "$(tail -n 1 "$W/default/$id/audit.jsonl" | "$JQ" -r .status)" succeeded
    check "$mode, $plant: ... and verifies" audit_ok "$W/default/$id/audit.jsonl"
    is "$mode, $plant: the finished run's record is untouched" \
      "$(tail -n 1 "$W/default/old/audit.jsonl" | "$JQ" -r .status)" succeeded
  done
  # A marker without a run directory, and one with a bad name: left alone
  # as well (gc cannot prove whose they are).
  "${pre[@]}" sh -c 'echo x >"$1/.active/default:ghost"; echo x >"$1/.active/no-colon"' sh "$W"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.ghost" 2>&1
  is "$mode: markers of no run: gc exits 0 and cleans nothing" "$?:$(tail -n 1 "$W/gc.ghost")" \
    "0:gc: 0 dead run(s) cleaned under $(realpath "$W")"
  # A dead run whose ledger is larger than skillrun writes one: a sparse
  # file of 1 GiB costs its maker nothing, and gc read 256 MiB of it at
  # every pass, then failed (125) and kept it for the next.  Left alone,
  # unread.
  "${pre[@]}" sh -c 'mkdir "$1/default/huge" && truncate -s 1G "$1/default/huge/audit.jsonl" &&
    ln "$1/default/huge/audit.jsonl" "$1/.active/default:huge"' sh "$W"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$W/gc.huge" 2>&1
  is "$mode: a 1 GiB sparse ledger: gc exits 0 and cleans nothing" "$?:$(tail -n 1 "$W/gc.huge")" \
    "0:gc: 0 dead run(s) cleaned under $(realpath "$W")"
  check "$mode: ... says why it left it alone" grep -q "default:huge alone: its audit.jsonl is larger" "$W/gc.huge"
  is "$mode: ... and leaves it as it was" "$(stat -c %s "$W/default/huge/audit.jsonl")" 1073741824
  rm -rf "$W/default/huge" "$W/.active/default:huge"
done

finish
