#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the artifact list of a run closed by gc: a
# supervisor killed during the harvest leaves its run to gc, which writes
# metadata.json from the ledger.  Its artifact list dropped path_base64,
# so an output whose name is not UTF-8 was listed by its escaped display
# name alone ("caf\xe9"), which is also the plain name of another file a
# skill may leave beside it: the list no longer said which file it meant.
# Now each entry is the artifact_committed event's, as in a run that ended
# by itself.  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/abandon-skill
mkbundle "$B" "Leaves outputs named in Latin-1 among big ones."
chmod -R a+rX "$T"

# Two names in Latin-1, one made first and one last, with big files
# between them: whichever order the harvest takes, one is committed while
# the big ones are still to be copied, and the supervisor is killed then.
outputs='
  cd /workspace/outputs || exit 1
  printf 1 >"$(printf "caf\351-1")"
  for i in 1 2 3 4 5 6; do head -c 30M /dev/zero >"big$i" || exit 1; done
  printf "%s" "literal" >"caf\\xe9-2"
  printf 2 >"$(printf "caf\351-2")"
'
# The list entries of metadata.json and the ledger's artifact_committed
# events, each with its keys sorted, one a line.
listed() { "$JQ" -c '.result.artifacts.list[] | to_entries | sort_by(.key) | from_entries' "$1"; }
committed() {
  "$JQ" -c 'select(.event == "artifact_committed")
    | {path, path_base64, size, sha256, mode}
    | with_entries(select(.value != null)) | to_entries | sort_by(.key) | from_entries' "$1"
}

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  id=killed-$mode
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
    -- /bin/sh -c "$outputs" >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  for _ in $(seq 3000); do
    grep -q '"path_base64"' "$T/$id.audit" 2>/dev/null && break
    sleep 0.01
  done
  kill -KILL "$pid"
  wait "$pid"
  is "$mode: the supervisor was killed during the harvest" "$?" 137
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$T/$id.gc" 2>&1
  is "$mode: gc closes the run" "$?" 0
  R=$W/default/$id
  closed_ok "$mode" "$R" abandoned
  check "$mode: ... an artifact with a name that is not UTF-8 was committed" \
    grep -q '"path_base64"' "$R/audit.jsonl"
  is "$mode: metadata.json lists each artifact as its artifact_committed event has it" \
    "$(listed "$R/metadata.json")" "$(committed "$R/audit.jsonl")"

  # The same skill, left to finish: the list is the same shape.
  id=whole-$mode
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
    -- /bin/sh -c "$outputs" >"$T/$id.audit" 2>"$T/$id.err"
  is "$mode: left to finish, the run succeeds" "$?" 0
  is "$mode: ... and metadata.json lists its artifacts as their events" \
    "$(listed "$W/default/$id/metadata.json")" "$(committed "$W/default/$id/audit.jsonl")"
done
finish
