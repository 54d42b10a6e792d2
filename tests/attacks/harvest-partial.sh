#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a harvest cut short: a supervisor killed
# (SIGKILL) while it copied an output into the run directory left the
# partly copied file in outputs/ under its real name, with no
# artifact_committed event for it, and --gc, which closes the run from its
# ledger, left it there: whoever lists outputs/ saw a truncated file that
# looks like an artifact (18 of 30 MiB, seen).  Now a file is copied
# unnamed and gets its name only once whole, and gc removes from outputs/
# whatever the ledger does not commit: after the kill and --gc, outputs/
# holds exactly the files of the artifact_committed events, each with the
# size and digest its event gives.  A tree the harvest was filling keeps
# its directories (a run that ends by itself keeps its directories too:
# they get no event), never an uncommitted file; gc follows no symbolic
# link.  As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"
skip_modes

T=$(tmpdir)
B=$T/partial-skill
mkbundle "$B" "Leaves big outputs, some in a tree."
chmod -R a+rX "$T"

BIG=31457280 # 30 MiB
outputs='
  cd /workspace/outputs || exit 1
  mkdir -p tree/a/b || exit 1
  for i in 1 2 3; do
    head -c 30M /dev/zero >"big$i" || exit 1
    head -c 30M /dev/zero >"tree/a/b/big$i" || exit 1
  done
  printf x >tree/small
'
# committed RUN: the committed paths with their sizes and digests, sorted.
committed() {
  "$JQ" -r 'select(.event == "artifact_committed") | "\(.path) \(.size) \(.sha256)"' \
    "$1/audit.jsonl" | LC_ALL=C sort
}
# present RUN: every file in outputs/, hidden ones too, as committed() says.
present() {
  (cd "$1/outputs" && find . -type f -printf '%P\n' | LC_ALL=C sort |
    while IFS= read -r f; do
      echo "$f $(stat -c %s -- "$f") $(sha256sum -- "$f" | cut -d' ' -f1)"
    done)
}
# cut RUN: the files under a name the skill gave that are not whole.
cut_short() {
  (cd "$1/outputs" && find . -type f -printf '%P %s\n' |
    while read -r f s; do
      case $f in
      big* | */big*) [ "$s" = $BIG ] || echo "$f: $s bytes of $BIG" ;;
      tree/small) [ "$s" = 1 ] || echo "$f: $s bytes of 1" ;;
      esac
    done)
}

for mode in $MODES; do
  W=$(mode_workspace $mode)
  if [ $mode = user ]; then pre=("${AS_USER[@]}"); else pre=(env); fi
  id=killed-$mode
  R=$W/default/$id
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
    -- /bin/sh -c "$outputs" >"$T/$id.audit" 2>"$T/$id.err" &
  pid=$!
  # Killed right after the first file is committed: the harvest is then
  # copying the next one.
  for _ in $(seq 3000); do
    grep -q '"artifact_committed"' "$T/$id.audit" 2>/dev/null && break
    sleep 0.005
  done
  kill -KILL "$pid"
  wait "$pid"
  is "$mode: the supervisor was killed during the harvest" "$?" 137
  n=$(committed "$R" | wc -l)
  check "$mode: ... after some files were committed, before all ($n of 7)" \
    [ "$n" -ge 1 -a "$n" -lt 7 ]
  short=$(cut_short "$R")
  is "$mode: ... no file is in outputs/ under its name before it is whole" \
    "$short" ""

  # What other kills leave, which gc removes too: the hidden name of a
  # copy where the file system has no O_TMPFILE, and a whole file named
  # just before its event.  And a link to the owner's files elsewhere,
  # which gc must not follow.
  bait=$W/bait
  in_mode $mode sh -c "
    head -c 1000 /dev/zero >'$R/outputs/.skillrun-partial.0123456789abcdef' &&
    mkdir -p '$R/outputs/tree/a/b' && printf x >'$R/outputs/tree/a/b/named' &&
    mkdir '$bait' && printf x >'$bait/keep' && ln -s '$bait' '$R/outputs/link'"
  "${pre[@]}" "$SKILLRUN" --gc --workspace-root "$W" >"$T/$id.gc" 2>&1
  is "$mode: gc closes the run" "$?" 0
  closed_ok "$mode" "$R" abandoned
  is "$mode: outputs/ holds exactly the committed files, whole" \
    "$(present "$R")" "$(committed "$R")"
  check "$mode: ... gc followed no link (the owner's file it leads to stays)" \
    [ -f "$bait/keep" -a -L "$R/outputs/link" ]
  check "$mode: ... and says what it removed: $(grep uncommitted "$T/$id.gc")" \
    grep -q "^removed [0-9]* uncommitted outputs of default/$id\$" "$T/$id.gc"
  is "$mode: metadata.json lists the committed files" \
    "$("$JQ" -r '.result.artifacts.list[].path' "$R/metadata.json" | LC_ALL=C sort)" \
    "$(committed "$R" | cut -d' ' -f1)"

  # Left to finish, the same skill's outputs are all there.
  id=whole-$mode
  R=$W/default/$id
  "${pre[@]}" "$SKILLRUN" --workspace-root "$W" --execution-id "$id" "$B" \
    -- /bin/sh -c "$outputs" >"$T/$id.audit" 2>"$T/$id.err"
  is "$mode: left to finish, the run succeeds" "$?" 0
  is "$mode: ... and commits its 7 files" "$(committed "$R" | wc -l)" 7
  is "$mode: ... which outputs/ holds, whole, with their tree" \
    "$(present "$R")" "$(committed "$R")"
  is "$mode: ... no other file" "$(find "$R/outputs" -mindepth 1 ! -type d | wc -l)" 7
  is "$mode: ... the harvested modes" \
    "$(stat -c '%a %U' "$R/outputs/big1" "$R/outputs/tree/a")" \
    "$(u=$(id -un "$(if [ $mode = user ]; then echo "$USER_UID"; else echo 0; fi)")
      printf '644 %s\n755 %s' "$u" "$u")"
done
finish
