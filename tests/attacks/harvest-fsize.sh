#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the harvest under the caller's file-size limit.
# A caller with a soft ulimit -f (SIGXFSZ ignored, so a write past it fails
# with EFBIG) whose skill raised its own soft limit and left an output
# larger than that: the harvest's copy failed with EFBIG, which it took for
# outputs-size, so the run "succeeded" with a limit_exceeded event naming
# outputs-size (256 MiB) at a 5 MB file, the output dropped and the rest
# of the harvest stopped.  Now only a source longer than outputs-size is
# that cap; a copy the host refuses is a failed harvest, as on a full disk:
# one line naming the file, exit 125, the run closed as an error, nothing
# cut short left in outputs/.  The same for the copies made before the
# run: a bundle holding a 5 MB file was refused as changed while it was
# read (123, bundle_rejected bundle_changed: the integrity alarm, false),
# and a 5 MB --input as over inputs-max-size (123, input_rejected
# input_too_large), though neither was; each is now exit 125, status error,
# its message naming the file-size limit.  As root and as an unprivileged
# user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# 4 MiB (more than the bundle, whose copy it also holds), soft only: the
# skill may raise its own to the hard limit.
CALLER=(bash -c 'ulimit -S -f 4096 && exec "$@"' -)
for mode in $MODES; do
  skill $mode -- /bin/sh -c '
    ulimit -f unlimited || exit 1
    head -c 5000000 /dev/zero >/workspace/outputs/big || exit 1
  '
  is "$mode: an output past the caller's ulimit -f: skillrun exits 125" "$rc" 125
  check "$mode: ... audit verifies" audit_ok "$AUDIT"
  check "$mode: ... one line names the output and why" \
    sh -c "[ \"\$(wc -l <'$ERR')\" = 1 ] && grep -q 'outputs/big.*File too large' '$ERR'"
  is "$mode: ... not taken for outputs-size" \
    "$("$JQ" -r 'select(.event == "limit_exceeded") | .key' "$AUDIT")" ""
  r=$(dirname "$(dirname "$OUT")")
  check "$mode: ... nothing cut short is left in outputs/" test ! -e "$r/outputs/big"
  is "$mode: ... the run is closed as an error" \
    "$(last "$AUDIT") $(meta_status "$r")" "$(printf 'execution_completed\terror') error"
done

# A bundle with a file past the limit, and an input past it.
BIG=$T/big-bundle
mkbundle "$BIG" "Carries a file larger than its caller's ulimit -f."
mkdir -p "$BIG/scripts"
head -c 5000000 /dev/zero >"$BIG/scripts/blob"
head -c 5000000 /dev/zero >"$T/big-input"
chmod -R a+rX "$BIG" "$T/big-input"
# refused_as_error MODE WHAT REASON TEXT: the run's checks.
refused_as_error() {
  is "$1: $2 past the caller's ulimit -f: skillrun exits 125" "$rc" 125
  check "$1: ... audit verifies" audit_ok "$AUDIT"
  check "$1: ... one line names $2 and the file-size limit ($(head -n 1 "$ERR"))" \
    sh -c "[ \"\$(wc -l <'$ERR')\" = 1 ] && grep -q '$4.*(the file-size limit, ulimit -f): File too large' '$ERR'"
  is "$1: ... not refused as the caller's (bundle_rejected, input_rejected)" \
    "$("$JQ" -r 'select(.event | test("rejected")) | .reason' "$AUDIT")" ""
  is "$1: ... an error event, reason $3" "$(field "$AUDIT" error .reason)" "$3"
  is "$1: ... the run is closed as an error" "$(last "$AUDIT")" \
    "$(printf 'execution_completed\terror')"
}
for mode in $MODES; do
  b=$B
  B=$BIG
  skill $mode -- /bin/true
  B=$b
  refused_as_error $mode "a bundle's file" bundle_copy "bundle $BIG: scripts/blob"
  skill $mode -i "$T/big-input" -- /bin/true
  refused_as_error $mode "an input" inputs "input $T/big-input"
done

# Many outputs under a file-size limit that audit.jsonl's room for the
# artifact list runs into: 100 empty files with 150-byte names, whose
# list would need some 60 KiB of room there, under ulimit -f 100 KiB.
# The list stops after some entry, truncated true, or the events run out
# of room first; then the harvest fails (125, audit_write), or, with a
# few entries left, the run succeeds with the list cut.  Either way
# metadata.json is whole and says what was committed: every
# artifact_committed counted, its list the first of them (all of them
# unless truncated), as execution_completed's where that has one
# (skillrun(1), AUDIT EVENTS and FILES; not an empty list).
# A bundle of its own: the attacker's is larger than that.
MANY=$T/many-bundle
mkbundle "$MANY" "Writes many outputs."
chmod -R a+rX "$MANY"
b=$B
B=$MANY
CALLER=(bash -c 'ulimit -S -f 100 && exec "$@"' -)
for mode in $MODES; do
  skill $mode -- /bin/sh -c '
    n=0; while [ $n -lt 100 ]; do
      n=$((n + 1)); : >/workspace/outputs/$(printf "%0150d" $n) || exit 1
    done
  '
  r=$(dirname "$(dirname "$OUT")")
  check "$mode: 100 outputs, their list past ulimit -f: skillrun exits 0 or 125 ($rc)" \
    test "$rc" = 0 -o "$rc" = 125
  check "$mode: ... audit verifies" audit_ok "$AUDIT"
  c=$(grep -c '"artifact_committed"' "$AUDIT")
  n=$("$JQ" '.result.artifacts.list | length' "$r/metadata.json")
  is "$mode: ... metadata.json counts the $c artifact_committed, lists $n of them, truncated if fewer" \
    "$("$JQ" -r '.result.artifacts | [.files, (.list | length > 0), .truncated == (.list | length < $c)] | @tsv' --argjson c "$c" "$r/metadata.json")" \
    "$c	true	true"
  committed=$("$JQ" -c 'select(.event == "artifact_committed") | {path, size, sha256, mode}' "$AUDIT" | head -n "${n:-0}" | "$JQ" -cs .)
  is "$mode: ... its list is the first $n artifact_committed" \
    "$("$JQ" -c .result.artifacts.list "$r/metadata.json")" "$committed"
  if [ "$rc" = 0 ]; then
    is "$mode: ... execution_completed has the same artifacts" \
      "$(field "$AUDIT" execution_completed '.artifacts | tojson')" \
      "$("$JQ" -c .result.artifacts "$r/metadata.json")"
  else
    is "$mode: ... the run is closed as an error, audit_write" \
      "$(last "$AUDIT") $(field "$AUDIT" error .reason)" \
      "$(printf 'execution_completed\terror') audit_write"
  fi
done
B=$b
CALLER=()
finish
