#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, a bundle's author writing characters that
# mislead a reader into the text of SKILL.md that reaches the record: a C1
# control (U+0085 NEL, U+009B, which 8-bit terminals read as ESC [), a
# bidirectional override (U+202E) and LINE SEPARATOR (U+2028), which
# Python's str.splitlines() and JavaScript before ES2019 take for the end
# of a line.
# - metadata.version, which every audit line and metadata.json carry:
#   the run succeeded with them raw in all of its lines (a stream of 7
#   lines read as 19 by splitlines, 18 of them not JSON).  Now refused
#   (123, manifest_invalid), as --label refuses such a value.
# - allowed-tools, which metadata.json lists: now ignored with a warning,
#   as an allowed-tools of the wrong shape is.
# - a manifest error quoting what SKILL.md says (sandbox.network-allow):
#   the bundle_rejected message carried them raw.  Every JSON text skillrun
#   writes now has each such character as \uHHHH: no raw one reaches a
#   reader, and what a JSON reader decodes is the same text.
# - --explain's JSON, which printed an entrypoint's characters raw to the
#   terminal of the operator reviewing the bundle.
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

# YAML escapes, written by printf as \u202e...: the characters are the
# YAML parser's to make.
SPECIALS='\\u202e\\x85\\u2028\\x9b'
# mkskill NAME FRONT-MATTER-LINES: a bundle whose SKILL.md has them.
mkskill() {
  mkdir -p "$T/$1"
  printf -- "---\nname: $1\ndescription: d\n$2---\nbody\n" >"$T/$1/SKILL.md"
  chmod -R a+rX "$T/$1"
}
mkskill version "metadata:\n  version: \"1$SPECIALS\"\n"
mkskill tools "allowed-tools: \"Read a$SPECIALS b\"\n"
mkskill netallow "metadata:\n  sandbox.network-allow: \"ex${SPECIALS}ample.com:443\"\n"
mkskill entry "metadata:\n  sandbox.entrypoint: \"scripts/run${SPECIALS}.sh\"\n"
# A block scalar ends in a newline: a control character, named.
mkskill block "metadata:\n  version: |\n    1.0.0\n"

# plain FILE...: no DEL, C1 control, bidirectional formatting or line
# separator character in the files, whose lines each are one JSON text.
plain() {
  "$PYTHON3" - "$@" <<'PY'
import json, sys
bad = set(range(0x7f, 0xa0)) | {0x61c, 0x200e, 0x200f, 0x2028, 0x2029} \
    | set(range(0x202a, 0x202f)) | set(range(0x2066, 0x206a))
for name in sys.argv[1:]:
    text = open(name, encoding="utf-8").read()
    found = sorted({hex(ord(c)) for c in text if ord(c) in bad})
    if found:
        sys.exit("%s: %s" % (name, " ".join(found)))
    if name.endswith(".jsonl") or name.endswith(".audit"):
        for line in text.splitlines():
            json.loads(line)
PY
}

# run_of MODE BUNDLE: one run of /bin/true; sets rc, AUDIT, ERR, RUN_DIR.
run_of() {
  local w as=()
  if [ "$1" = user ]; then w=$WS_user as=("${AS_USER[@]}"); else w=$WS_root; fi
  _run_n=$((_run_n + 1))
  RUN_ID=m$_run_n AUDIT=$w/m$_run_n.audit ERR=$w/m$_run_n.err RUN_DIR=$w/default/m$_run_n
  "${as[@]}" "$SKILLRUN" --workspace-root "$w" --execution-id "$RUN_ID" \
    --audit-file "$AUDIT" "$T/$2" -- /bin/true >/dev/null 2>"$ERR"
  rc=$?
}

last_event() { tail -n 1 "$AUDIT" | "$JQ" -r '.event + " " + .status'; }

for mode in $MODES; do
  run_of "$mode" version
  is "$mode: a version with misleading characters is refused (123)" "$rc" 123
  is "$mode: ... as an invalid manifest" \
    "$("$JQ" -r 'select(.event == "bundle_rejected") | .reason' "$AUDIT")" manifest_invalid
  check "$mode: ... named on one line of stderr, at its line" \
    sh -c "[ \$(wc -l <'$ERR') = 1 ] && grep -q 'SKILL.md:5: metadata version holds U+202E at byte 2' '$ERR'"
  is "$mode: ... and the record ends" "$(last_event)" "execution_completed refused"
  check "$mode: ... no misleading character in the stream" plain "$AUDIT"
  check "$mode: ... which verifies" audit_ok "$AUDIT"

  run_of "$mode" block
  is "$mode: a version written as a block scalar (a newline at its end) is refused (123)" "$rc" 123
  check "$mode: ... the message names the character and where it is" \
    grep -q 'SKILL.md:5: metadata version holds U+000A at byte 6, a control' "$ERR"

  run_of "$mode" tools
  is "$mode: allowed-tools with misleading characters: the run succeeds" "$rc" 0
  is "$mode: ... the list is ignored" "$("$JQ" -c .skill.allowed_tools "$RUN_DIR/metadata.json")" "[]"
  check "$mode: ... with a warning" \
    grep -q '"event":"warning".*allowed-tools entry 2 holds U+202E at byte 2' "$AUDIT"
  check "$mode: ... no misleading character in the stream, audit.jsonl or metadata.json" \
    plain "$AUDIT" "$RUN_DIR/audit.jsonl" "$RUN_DIR/metadata.json"

  run_of "$mode" netallow
  is "$mode: a network-allow host with misleading characters is refused (123)" "$rc" 123
  check "$mode: ... no misleading character in the stream" plain "$AUDIT"
  is "$mode: ... whose message, decoded, is what SKILL.md says" \
    "$("$JQ" -r 'select(.event == "bundle_rejected") | .message | contains("ex\u202e\u0085\u2028\u009bample.com")' "$AUDIT")" true
  check "$mode: ... on one line of stderr, the characters shown as '?'" \
    sh -c "[ \$(wc -l <'$ERR') = 1 ] && grep -q \"'ex????ample.com:443'\" '$ERR'"
  check "$mode: ... and the stream verifies" audit_ok "$AUDIT"
done

# --explain, which an operator runs to review a bundle, prints its JSON
# (it was written with json_dumpf, the characters raw).
"$SKILLRUN" --explain "$T/entry" >"$T/explain.json" 2>"$T/explain.err"
is "--explain of an entrypoint with misleading characters: exit 0" "$?" 0
check "... no misleading character in what it prints" plain "$T/explain.json"
is "... the entrypoint, decoded, is what SKILL.md says" \
  "$("$JQ" -r '.run.command[0] == "scripts/run\u202e\u0085\u2028\u009b.sh"' "$T/explain.json")" true
finish
