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

B=$T/no-front-matter
mkdir -p "$B"
echo "# just markdown" >"$B/SKILL.md"
refuse "no front matter" "$B"

B=$T/pinned-skill
mkbundle "$B"
digest=$("$SKILLRUN" --digest "$B" | cut -d' ' -f1)
echo tampered >>"$B/SKILL.md"
refuse "one changed byte against --expect-sha256" "$B" --expect-sha256 "$digest"
is "pinned: reason digest_mismatch" "$(field "$T/a.$n" bundle_rejected .reason)" digest_mismatch
is "pinned: expected digest in the event" "$(field "$T/a.$n" bundle_rejected .expected)" "${digest#sha256:}"

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
finish
