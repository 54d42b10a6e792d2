#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Refusals before anything runs: bad SKILL.md, tampering, a pinned digest,
# replayed execution ids.  Each gives the documented exit status, one line on
# stderr, and the matching audit events.
. "$(dirname "$0")/lib.sh"

T=$(tmpdir)
W=$T/ws
n=0
refuse() { # NAME BUNDLE [ARGS...]: expect exit 123
  local name=$1 b=$2
  shift 2
  n=$((n + 1))
  "$SKILLRUN" --workspace-root "$W" --execution-id "m$n" --audit-file "$T/a.$n" "$@" "$b" \
    -- /bin/true 2>"$T/err.$n"
  is "$name: exit 123" "$?" 123
  is "$name: one line on stderr" "$(wc -l <"$T/err.$n")" 1
  is "$name: bundle_rejected in the audit" "$(event "$T/a.$n" bundle_rejected | "$JQ" -r .event)" bundle_rejected
  is "$name: execution_completed refused" "$(field "$T/a.$n" execution_completed .status)" refused
  check "$name: the audit verifies" audit_ok "$T/a.$n"
  check "$name: nothing ran (no logs written)" [ ! -s "$W/default/m$n/logs/stdout.log" ]
}

B=$T/bad-name
mkbundle "$B"
sed -i 's/^name: .*/name: Bad-Name/' "$B/SKILL.md"
refuse "uppercase name" "$B"
check "uppercase name: stderr names SKILL.md:2" grep -q "SKILL.md:2:" "$T/err.$n"
# In an orchestrator's log of many runs: which bundle's SKILL.md.
check "uppercase name: ... of the bundle, on stderr" \
  grep -qF "skillrun: bundle $(realpath "$B"): SKILL.md:2: name 'Bad-Name'" "$T/err.$n"
check "uppercase name: ... and in the audit" \
  test "$(field "$T/a.$n" bundle_rejected .message)" = "$(sed 's/^skillrun: //' "$T/err.$n")"

# A name of 64 characters in NFKC form, but 576 bytes as written (each
# Hangul syllable decomposed into three jamo): past the 256 bytes the runs
# index holds, where it used to be recorded as "-" (or cut short, as
# another skill's name); refused, naming its bytes.
B=$T/jamo-skill
mkbundle "$B"
jamo=$(printf '\341\204\200\341\205\241\341\206\250%.0s' $(seq 64))
sed -i "s/^name: .*/name: $jamo/" "$B/SKILL.md"
refuse "a 576-byte name of 64 characters" "$B"
is "... which stderr names" "$(sed 's/^skillrun: bundle [^:]*: //' "$T/err.$n")" \
  "SKILL.md:2: name is 576 bytes long as written; at most 256 (use fewer characters, or ones NFKC would make of them)"
is "... reason manifest_invalid" "$(field "$T/a.$n" bundle_rejected .reason)" manifest_invalid
is "... counted in the runs index as refused before the skill was known" \
  "$(awk -v id="m$n" '$NF == id { print $4, $5, $6 }' "$W/.metrics/runs.log")" \
  "- refused manifest_invalid"
# The same name composed (64 syllables, 192 bytes) runs, and is counted
# under its whole name.
syll=$(printf '\352\260\201%.0s' $(seq 64))
sed -i "s/^name: .*/name: $syll/" "$B/SKILL.md"
n=$((n + 1))
"$SKILLRUN" --workspace-root "$W" --execution-id "m$n" --audit-file "$T/a.$n" "$B" -- /bin/true 2>"$T/err.$n"
is "the same name composed (192 bytes) runs" "$?" 0
is "... and is counted under it, whole" \
  "$(awk -v id="m$n" '$NF == id { print $4 }' "$W/.metrics/runs.log")" "$syll"

B=$T/typo-skill
mkbundle "$B"
cat >"$B/SKILL.md" <<'EOS'
---
name: typo-skill
description: Has a typo in a sandbox key.
metadata:
  sandbox.memroy: 64M
---
EOS
refuse "unknown sandbox key" "$B"
check "unknown sandbox key: stderr names SKILL.md:5" grep -q "SKILL.md:5:" "$T/err.$n"
is "unknown sandbox key: reason manifest_invalid" "$(field "$T/a.$n" bundle_rejected .reason)" manifest_invalid

# A limit declared where skillrun does not read it would be lost: the skill
# would run with more memory than its author asked for.  Refused, naming
# the line, rather than a warning (or nothing at all) and the run.
lost() { # NAME LINE YAML...: a bundle whose front matter ends with YAML
  local name=$1 line=$2
  shift 2
  B=$T/lost-$n
  mkbundle "$B"
  printf -- '---\nname: lost-%s\ndescription: Declares a limit where it is lost.\n' "$n" >"$B/SKILL.md"
  printf '%s\n' "$@" --- >>"$B/SKILL.md"
  refuse "$name" "$B"
  check "$name: stderr names SKILL.md:$line" grep -q "SKILL.md:$line: " "$T/err.$n"
  is "$name: reason manifest_invalid" "$(field "$T/a.$n" bundle_rejected .reason)" manifest_invalid
}
lost "a top-level sandbox.memory" 4 "sandbox.memory: 64M"
lost "a top-level sandbox: mapping" 4 "sandbox:" "  memory: 64M"
lost "Metadata: in another case" 4 "Metadata:" "  sandbox.memory: 64M"
lost "Sandbox.memory in metadata" 5 "metadata:" "  Sandbox.memory: 64M"
lost "SANDBOX.TIMEOUT in metadata" 6 "metadata:" "  author: me" "  SANDBOX.TIMEOUT: 5s"
# ... or in any other spelling that reads the same: a quoted blank, a
# full-width letter (an input method's), a top-level "metadata " key.
lost "' sandbox.memory' in metadata" 5 "metadata:" "  \" sandbox.memory\": 64M"
lost "'sandbox .memory' in metadata" 5 "metadata:" "  \"sandbox .memory\": 64M"
lost "a full-width 'ｓandbox.memory' in metadata" 5 "metadata:" "  ｓandbox.memory: 64M"
lost "a top-level 'metadata ' key" 4 "\"metadata \":" "  sandbox.memory: 64M"
check "... stderr says which key to write" grep -q "write .*'metadata:'" "$T/err.$n"
# ... or with an invisible character in it, or a letter of another script
# that looks like the ASCII one (what a copy from a chat or a web page
# brings along, or what slips a limit past a reviewer's eye).
lost "a zero-width space in 'sandbox.memory'" 5 "metadata:" $'  sandbox\xe2\x80\x8b.memory: 64M'
check "... stderr says which key to write" grep -q "(write 'sandbox.memory')" "$T/err.$n"
check "... and names the character" grep -q "U+200B" "$T/err.$n"
lost "a soft hyphen in 'sandbox.memory'" 5 "metadata:" $'  sand\xc2\xadbox.memory: 64M'
lost "a Cyrillic 'a' in 'sandbox.memory'" 5 "metadata:" $'  s\xd0\xb0ndbox.memory: 64M'
lost "a Greek omicron in a top-level 'sandbox.memory'" 4 $'sandb\xce\xbfx.memory: 64M'
# ... or with a dot that is not '.' nor one of its look-alikes in UTS #39
# (an ideographic full stop, what a Chinese or Japanese input method
# types; a middle dot; a hyphenation point; an Arabic decimal separator).
lost "an ideographic full stop in 'sandbox.memory'" 5 "metadata:" $'  sandbox\xe3\x80\x82memory: 64M'
check "... stderr says which key to write" grep -q "(write 'sandbox.memory')" "$T/err.$n"
check "... and names the character" grep -q "U+3002" "$T/err.$n"
lost "a middle dot in 'sandbox.timeout'" 5 "metadata:" $'  sandbox\xc2\xb7timeout: 5s'
lost "a hyphenation point in a top-level 'sandbox.memory'" 4 $'sandbox\xe2\x80\xa7memory: 64M'
lost "a half-width ideographic full stop and a typo" 5 "metadata:" $'  sandbox\xef\xbd\xa1memroy: 64M'
check "... stderr offers the key" grep -q "did you mean 'sandbox.memory'" "$T/err.$n"
lost "an Arabic decimal separator in 'sandbox.pids'" 5 "metadata:" $'  sandbox\xd9\xabpids: 8'
# A letter or a symbol that is not punctuation after "sandbox" (a word of
# another script, an emoji) is a metadata key like "sandboxish", kept.
B=$T/sandbox-word
mkbundle "$B"
printf -- '---\nname: sandbox-word\ndescription: d\nmetadata:\n  %s: x\n  %s: y\n---\n' \
  $'sandbox\xe7\x92\xb0\xe5\xa2\x83' $'sandbox\xf0\x9f\x94\x92' >"$B/SKILL.md"
"$SKILLRUN" --workspace-root "$W" --audit-file "$T/word.audit" "$B" -- /bin/true 2>"$T/word.err"
is "'sandbox' and a CJK word, or an emoji, in metadata: kept, the run succeeds" "$?" 0
is "... with nothing on stderr" "$(cat "$T/word.err")" ""
# YAML 1.1 ends a line, and so a comment, at a LINE SEPARATOR; an editor,
# grep and the reference validator do not: what follows it on the line
# would be read as a key nobody sees as one.
lost "a LINE SEPARATOR in a comment" 5 "metadata:" $'  author: me # see\xe2\x80\xa8  sandbox.memory: 64M'
check "... stderr names it" grep -q "LINE SEPARATOR (U+2028)" "$T/err.$n"

B=$T/no-front-matter
mkdir -p "$B"
echo "# just markdown" >"$B/SKILL.md"
refuse "no front matter" "$B"

B=$T/utf32-skill
mkdir -p "$B"
printf '\000\000\376\377\000\000\000-\000\000\000-\000\000\000-\000\000\000\n' >"$B/SKILL.md"
refuse "a UTF-32 SKILL.md" "$B"
check "UTF-32: stderr says UTF-32" grep -q "the file is UTF-32 (it starts with a byte order mark)" "$T/err.$n"

# A description over the specification's 1,024 characters (Anthropic's own
# claude-api skill has 1,068) runs, with a warning; strict refuses it.
B=$T/long-skill
mkbundle "$B" "$(printf 'word %.0s' $(seq 214))"
n=$((n + 1))
"$SKILLRUN" --workspace-root "$W" --execution-id "m$n" --audit-file "$T/a.$n" "$B" -- /bin/true 2>"$T/err.$n"
is "a 1,069-character description: the run goes on" "$?" 0
check "... with a manifest warning naming SKILL.md:3" \
  grep -q '"source":"manifest","message":"SKILL.md:3: description is 1069 characters long' "$T/a.$n"
printf 'include default\nstrict yes\n' >"$T/strict-only.profile"
refuse "a 1,069-character description under strict" "$B" -p "$T/strict-only.profile"
is "... reason manifest_strict" "$(field "$T/a.$n" bundle_rejected .reason)" manifest_strict

B=$T/pinned-skill
mkbundle "$B"
digest=$("$SKILLRUN" --digest "$B" | cut -d' ' -f1)
echo tampered >>"$B/SKILL.md"
refuse "one changed byte against --expect-sha256" "$B" --expect-sha256 "$digest"
is "pinned: reason digest_mismatch" "$(field "$T/a.$n" bundle_rejected .reason)" digest_mismatch
is "pinned: expected digest in the event, as sha256:HEX" "$(field "$T/a.$n" bundle_rejected .expected)" "$digest"
# The same form when the flag had no prefix.
refuse "one changed byte against --expect-sha256 HEX" "$B" --expect-sha256 "${digest#sha256:}"
is "pinned without the prefix: expected is still sha256:HEX" "$(field "$T/a.$n" bundle_rejected .expected)" "$digest"

B=$T/link-skill
mkbundle "$B"
ln -s /etc/passwd "$B/passwd"
refuse "symlink in the bundle" "$B"
check "symlink: the path is named" grep -q "passwd" "$T/err.$n"

B=$T/strict-skill
mkbundle "$B"
sed -i 's/^description:/tags: x\ndescription:/' "$B/SKILL.md"
refuse "unknown top-level key under strict" "$B" -p strict

# Replay: the same execution id cannot run twice, and the first is intact.
B=$T/replay-skill
mkbundle "$B"
"$SKILLRUN" --workspace-root "$W" --execution-id replay --audit-file "$T/r1" "$B" -- /bin/true \
  >/dev/null 2>&1
first=$(cat "$W/default/replay/audit.jsonl" 2>/dev/null | sha256sum)
"$SKILLRUN" --workspace-root "$W" --execution-id replay --audit-file "$T/r2" "$B" -- /bin/true \
  2>"$T/err.r"
is "replayed execution id: exit 123" "$?" 123
is "replayed: reason execution_replayed" "$(field "$T/r2" bundle_rejected .reason)" execution_replayed
is "replayed: the first run's record is untouched" \
  "$(cat "$W/default/replay/audit.jsonl" 2>/dev/null | sha256sum)" "$first"

"$SKILLRUN" --workspace-root "$W" --tenant '../etc' "$B" -- /bin/true 2>"$T/err.t"
is "a tenant id with .. is refused with 123" "$?" 123
check "... before any file is touched" [ ! -e "$T/etc" ]
# libunistring is opened only for manifest text that is not ASCII
# (src/text.h).
soname=$("$SKILLRUN" --version |
  sed -n 's/^libunistring [0-9.]* (\(libunistring\.so\.[0-9]*\),.*/\1/p')
check "--version names the libunistring it opens ($soname)" test -n "$soname"
B=$T/ascii-skill
mkbundle "$B"
LD_DEBUG=files "$SKILLRUN" --workspace-root "$W" --execution-id u1 "$B" -- /bin/true \
  >/dev/null 2>"$T/ld.u1"
is "an ASCII manifest: exit 0" "$?" 0
check "an ASCII manifest never maps libunistring" not grep -q "file=libunistring" "$T/ld.u1"
B=$T/cafe-skill
mkbundle "$B" "Makes café au lait."
LD_DEBUG=files "$SKILLRUN" --workspace-root "$W" --execution-id u2 "$B" -- /bin/true \
  >/dev/null 2>"$T/ld.u2"
is "a non-ASCII description: exit 0" "$?" 0
check "a non-ASCII description opens $soname" grep -q "file=$soname" "$T/ld.u2"
mkdir "$T/badlib"
echo "not a library" >"$T/badlib/$soname"
LD_LIBRARY_PATH=$T/badlib "$SKILLRUN" --workspace-root "$W" --execution-id u3 \
  "$T/ascii-skill" -- /bin/true >/dev/null 2>&1
is "a broken $soname: an ASCII manifest still runs" "$?" 0
LD_LIBRARY_PATH=$T/badlib "$SKILLRUN" --workspace-root "$W" --execution-id u4 \
  --audit-file "$T/a.u4" "$B" -- /bin/true 2>"$T/err.u4"
is "a broken $soname: a non-ASCII description exits 125" "$?" 125
is "... with one line on stderr" "$(wc -l <"$T/err.u4")" 1
check "... naming SKILL.md:line, the library and what to do" \
  grep -q "cannot load $soname, needed for SKILL.md:3: a non-ASCII description (.*): install it" "$T/err.u4"
is "... and the reason in the audit stream" \
  "$(field "$T/a.u4" error .reason)" library_unavailable
check "... whose chain verifies" audit_ok "$T/a.u4"
# A look-alike sandbox key is told without the library too.
B=$T/lookalike-skill
mkbundle "$B"
printf -- '---\nname: lookalike-skill\ndescription: d\nmetadata:\n  s\xd0\xb0ndbox.memory: 64M\n---\n' \
  >"$B/SKILL.md"
LD_LIBRARY_PATH=$T/badlib "$SKILLRUN" --workspace-root "$W" --execution-id u5 \
  --audit-file "$T/a.u5" "$B" -- /bin/true 2>"$T/err.u5"
is "a broken $soname: a Cyrillic 'a' in 'sandbox.memory' exits 123" "$?" 123
check "... naming SKILL.md:5 and the key to write" \
  grep -q "SKILL.md:5: .*(write 'sandbox.memory')" "$T/err.u5"
finish
