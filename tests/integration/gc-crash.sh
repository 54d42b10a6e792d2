#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --gc after a crash or a power cut (skillrun(1) --gc, METADATA): skillrun
# syncs nothing, so a run that ended just before the machine went down can
# leave its marker in .active (its unlink lost) beside files whose data
# was lost: a metadata.json empty, zero-filled or cut short, an
# audit.jsonl whose execution_completed lost its newline or is followed by
# zeros (a file system that wrote the size, not the data).  gc must not
# keep the broken metadata.json (it used to: "present" was enough), must
# not call a run abandoned whose execution_completed is whole (it used to
# cut that line off and close the run as abandoned, with a second line in
# the runs index), and must close a run that really was cut short as
# abandoned, with what it discarded.
# Each run is counted exactly once in the runs index (skillrun(1)
# METRICS): a run whose last audit line a crash tore mid-way, while its
# index line survived, used to be counted a second time by gc (as
# abandoned), and one killed after its last audit line but before its
# index line never; now each index line has the run's execution id, and gc
# counts a dead run only when no line has its id.  A directory its owner
# put in place of its metadata.json (or metadata.json.tmp) used to make gc
# exit 125 for good; now the run is closed without it, and gc says so.
set -u
# shellcheck source=lib.sh
. "$TOP_SRCDIR/tests/integration/lib.sh"

sandbox_possible || skip_all "no user namespaces here"
skip_modes

T=$(tmpdir)
B=$T/crash-skill
mkbundle "$B"
chmod -R a+rX "$T"

index_lines() { wc -l <"$1/.metrics/runs.log"; }

# finished W ID: a run that ended (succeeded), then "crashed" before its
# marker was removed: the marker is linked back into .active, as the run
# had it (a second link to its audit.jsonl).
finished() {
  "${pre[@]}" "$SKILLRUN" --workspace-root "$1" --execution-id "$2" "$B" \
    -- /bin/true >"$1.$2.audit" 2>"$1.$2.err" ||
    diag "run $2 failed: $(cat "$1.$2.err")"
  "${pre[@]}" ln "$1/default/$2/audit.jsonl" "$1/.active/default:$2"
}

# gc W: --gc over W; its exit status in $rc.
gc() {
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$1" >"$1.gc.out" 2>&1
  rc=$?
}

for mode in $MODES; do
  W=$(mode_workspace "$mode")
  if [ "$mode" = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi

  # ---------------------------------- metadata.json lost in the crash
  for how in empty zeros cut; do
    finished "$W" "meta-$how"
    m=$W/default/meta-$how/metadata.json
    size=$(stat -c %s "$m")
    case $how in
    empty) "${pre[@]}" truncate -s 0 "$m" ;;
    zeros) "${pre[@]}" truncate -s 0 "$m" && "${pre[@]}" truncate -s "$size" "$m" ;;
    cut) "${pre[@]}" truncate -s $((size / 2)) "$m" ;;
    esac
  done
  n=$(index_lines "$W")
  gc "$W"
  is "$mode: --gc after the crash exits 0" "$rc" 0
  for how in empty zeros cut; do
    closed_ok "$mode: metadata.json $how" "$W/default/meta-$how" succeeded
  done
  is "$mode: ... no marker left" "$(ls -A "$W/.active")" ""
  is "$mode: ... and no run counted again" "$(index_lines "$W")" "$n"

  # ---------------- execution_completed whole but for its newline
  for how in newline zeros; do
    finished "$W" "nl-$how"
    L=$W/default/nl-$how/audit.jsonl
    size=$(stat -c %s "$L")
    "${pre[@]}" truncate -s $((size - 1)) "$L"
    [ $how = newline ] || "${pre[@]}" truncate -s $((size + 300)) "$L"
  done
  n=$(index_lines "$W")
  gc "$W"
  is "$mode: --gc after the crash exits 0" "$rc" 0
  for how in newline zeros; do
    closed_ok "$mode: execution_completed without its newline ($how)" \
      "$W/default/nl-$how" succeeded
    is "$mode: ... the run's own line, once" \
      "$(grep -c '"event":"execution_completed"' "$W/default/nl-$how/audit.jsonl")" 1
    check "$mode: ... byte for byte as the stream had it" \
      cmp -s "$W/default/nl-$how/audit.jsonl" "$W.nl-$how.audit"
  done
  is "$mode: ... no marker left" "$(ls -A "$W/.active")" ""
  is "$mode: ... and no run counted again" "$(index_lines "$W")" "$n"

  # --------------- a run that really lost its end: closed as abandoned
  finished "$W" lost
  L=$W/default/lost/audit.jsonl
  size=$(stat -c %s "$L")
  cut=$(tail -n 2 "$L" | wc -c)
  "${pre[@]}" truncate -s $((size - cut)) "$L"
  "${pre[@]}" truncate -s "$size" "$L"
  n=$(index_lines "$W")
  gc "$W"
  is "$mode: a ledger whose last 2 lines are zeros: --gc exits 0" "$rc" 0
  closed_ok "$mode: ... it" "$W/default/lost" abandoned
  is "$mode: ... saying what it discarded" \
    "$(tail -n 1 "$L" | "$JQ" -r .discarded_bytes)" "$cut"
  is "$mode: ... not counted again: its own line has its id" \
    "$(index_lines "$W")" "$n"
  is "$mode: ... which is there once" "$(grep -c ' lost$' "$W/.metrics/runs.log")" 1

  # ------------------ the last audit line torn mid-way, index line kept
  finished "$W" torn
  L=$W/default/torn/audit.jsonl
  size=$(stat -c %s "$L")
  "${pre[@]}" truncate -s $((size - 40)) "$L"
  n=$(index_lines "$W")
  gc "$W"
  is "$mode: execution_completed torn mid-line: --gc exits 0" "$rc" 0
  closed_ok "$mode: ... it" "$W/default/torn" abandoned
  is "$mode: ... and the run is not counted a second time" \
    "$(index_lines "$W")" "$n"
  is "$mode: ... its own line stays its only one" \
    "$(grep -c ' torn$' "$W/.metrics/runs.log")" 1

  # ------------- killed between metadata.json and its index line
  finished "$W" uncounted
  # The run's index line, as if never written (its supervisor killed
  # just before).
  "${pre[@]}" sed -i '/ uncounted$/d' "$W/.metrics/runs.log"
  n=$(index_lines "$W")
  gc "$W"
  is "$mode: a run killed before its index line: --gc exits 0" "$rc" 0
  closed_ok "$mode: ... its record as it was" "$W/default/uncounted" succeeded
  is "$mode: ... counted now, once" "$(index_lines "$W")" $((n + 1))
  is "$mode: ... with its own status and id" \
    "$(tail -n 1 "$W/.metrics/runs.log" | cut -d' ' -f 3,5,13)" \
    "default succeeded uncounted"
  check "$mode: ... and gc says so" grep -q "counted default/uncounted" "$W.gc.out"

  # ... also when a run refused for an invalid --execution-id ended after
  # it began: that run's line has no id to give, and must not be taken
  # for an older version's line, which would leave the dead run uncounted.
  finished "$W" uncounted2
  "${pre[@]}" sed -i '/ uncounted2$/d' "$W/.metrics/runs.log"
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id 'bad id!' "$B" \
    -- /bin/true >/dev/null 2>&1
  is "$mode: a refusal for an invalid --execution-id: 123" "$?" 123
  n=$(index_lines "$W")
  gc "$W"
  is "$mode: ... then gc counts the run killed before its line, once" \
    "$(index_lines "$W")" $((n + 1))
  is "$mode: ... with its own id" "$(grep -c ' uncounted2$' "$W/.metrics/runs.log")" 1

  # --------------- a directory in place of metadata.json (.tmp)
  for what in metadata.json metadata.json.tmp; do
    id=dir-${what//./-}
    finished "$W" "$id"
    D=$W/default/$id
    L=$D/audit.jsonl
    # The run lost its end too, so that gc must write metadata.json.
    size=$(stat -c %s "$L")
    "${pre[@]}" truncate -s $((size - 40)) "$L"
    "${pre[@]}" rm -f "$D/$what"
    "${pre[@]}" mkdir -p "$D/$what/sub"
    gc "$W"
    is "$mode: a directory as $what: --gc exits 0" "$rc" 0
    is "$mode: ... the ledger is closed" "$(last "$L")" \
      "execution_completed	abandoned"
    check "$mode: ... which verifies" audit_ok "$L"
    is "$mode: ... no marker left" "$(ls -A "$W/.active")" ""
    check "$mode: ... gc says what it could not replace" \
      grep -q "closed default/$id without its metadata.json" "$W.gc.out"
    "${pre[@]}" rm -rf "$D/$what"
  done

  # A new run in the same workspace root after all that.
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id after "$B" \
    -- /bin/true >"$W.after.audit" 2>"$W.after.err"
  is "$mode: a new run afterwards succeeds" "$?" 0
  closed_ok "$mode: ... its record" "$W/default/after" succeeded
done

finish
