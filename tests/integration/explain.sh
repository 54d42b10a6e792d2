#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --explain: the resolved policy as one JSON document; layering and clamping
# seen from the command line; nothing runs and nothing is written.
. "$(dirname "$0")/lib.sh"

T=$(tmpdir)
W=$T/ws
B=$T/explain-skill
mkbundle "$B"
cat >"$B/SKILL.md" <<'EOS'
---
name: explain-skill
description: Lowers some limits.
metadata:
  sandbox.memory: 128M
  sandbox.timeout: 20s
  sandbox.network: allow
---
EOS

out=$("$SKILLRUN" --workspace-root "$W" --explain "$B")
is "--explain exits 0" "$?" 0
check "--explain prints one JSON document" "$JQ" -e . <<<"$out"
is "memory lowered by the manifest" "$(jq -r .limits.memory.value <<<"$out")" $((128 * 1024 * 1024))
is "memory's source is the manifest" "$(jq -r .limits.memory.source <<<"$out")" manifest
is "cpu-seconds keeps the platform default 60" "$(jq -r '.limits["cpu-seconds"].value' <<<"$out")" 60
is "log-cap is 10 MiB" "$(jq -r '.limits["log-cap"].value' <<<"$out")" $((10 * 1024 * 1024))
is "network stays denied: the default profile does not permit it" \
  "$(jq -r .network.mode <<<"$out")" deny
is "the bundle digest is named" "$(jq -r .bundle.digest <<<"$out")" \
  "$("$SKILLRUN" --digest "$B" | cut -d' ' -f1)"
check "nothing was written under the workspace root" [ ! -e "$W" ]

out=$("$SKILLRUN" --explain --memory 64M --timeout 5s "$B")
is "a flag lowers further" "$(jq -r .limits.memory.value <<<"$out")" $((64 * 1024 * 1024))
is "the flag is the source" "$(jq -r .limits.memory.source <<<"$out")" flag
is "timeout lowered by the flag" "$(jq -r .limits.timeout.value <<<"$out")" 5000

out=$("$SKILLRUN" --explain --memory 4G "$B")
is "a flag cannot raise: clamped to the manifest's 128M" \
  "$(jq -r .limits.memory.value <<<"$out")" $((128 * 1024 * 1024))
check "the clamp is reported as a warning" grep -q 'memory' <<<"$(jq -r '.warnings[]' <<<"$out")"

P=$T/netok.profile
printf 'include default\nnetwork allow\n' >"$P"
out=$("$SKILLRUN" --explain -p "$P" "$B")
is "profile permits + manifest asks: network host (allow is its old name)" \
  "$(jq -r .network.mode <<<"$out")" host
out=$("$SKILLRUN" --explain -p "$P" --network deny "$B")
is "--network deny wins" "$(jq -r .network.mode <<<"$out")" deny

# The allowlist: the request (sandbox.network-allow, WebFetch tools) within
# the profile's list, each entry with where it came from.
AB=$T/allow-skill
mkbundle "$AB"
cat >"$AB/SKILL.md" <<'EOS'
---
name: allow-skill
description: Names its destinations.
allowed-tools: Read WebFetch(domain:docs.test)
metadata:
  sandbox.network: allowlist
  sandbox.network-allow: "api.test *.files.test:8443 evil.test"
---
EOS
AP=$T/allow.profile
printf 'include default\nnetwork allowlist\nnetwork-allow api.test docs.test\nnetwork-allow x.files.test:8443 10.0.0.0/8:443\n' >"$AP"
out=$("$SKILLRUN" --explain -p "$AP" "$AB")
is "allowlist: the mode" "$(jq -r .network.mode <<<"$out")" allowlist
is "allowlist: each entry, who asked for it and what permitted it" \
  "$(jq -r '.network.allow[] | "\(.entry) \(.origin) \(.where) \(.permitted_by.where // "-") \(.narrowed)"' <<<"$out")" \
  "docs.test:443 allowed-tools SKILL.md:4 allow.profile:3 false
api.test:443 manifest SKILL.md:7 allow.profile:3 false
x.files.test:8443 manifest SKILL.md:7 allow.profile:4 true
10.0.0.0/8:443 profile allow.profile:4 - false"
is "allowlist: what the profile permits" \
  "$(jq -r '[.network.permitted_allow[].entry] | join(" ")' <<<"$out")" \
  "api.test:443 docs.test:443 x.files.test:8443 10.0.0.0/8:443"
check "allowlist: what falls outside is dropped with a warning" \
  grep -qx 'SKILL.md:7: sandbox.network-allow evil.test:443 is not permitted by the profile or skillrun.conf; dropped' \
  <<<"$(jq -r '.warnings[]' <<<"$out")"
out=$("$SKILLRUN" --explain -p "$AP" --network deny "$AB")
is "allowlist: --network deny empties it" "$(jq -c '[.network.mode, .network.allow]' <<<"$out")" '["deny",[]]'
{ cat "$AP" && echo 'strict yes'; } >"$T/allow-strict.profile"
"$SKILLRUN" --explain -p "$T/allow-strict.profile" "$AB" >/dev/null 2>"$T/strict.err"
is "allowlist: under a strict profile an entry outside is a refusal (exit 123)" "$?" 123
is "... naming the entry and where it was asked" "$(cat "$T/strict.err")" \
  "skillrun: bundle $(realpath "$AB"): SKILL.md:7: sandbox.network-allow evil.test:443 is not permitted by the profile or skillrun.conf (refused by strict profile)"

C=$T/skillrun.conf
printf 'memory 32M\n' >"$C"
# skillrun.conf counts only when root owns it.
if needs_root "skillrun.conf lowering the platform caps"; then
  out=$("$SKILLRUN" --conf "$C" --explain "$B")
  is "a root-owned conf lowers the platform cap" "$(jq -r .limits.memory.cap <<<"$out")" $((32 * 1024 * 1024))
  is "... and the manifest's larger value is clamped" "$(jq -r .limits.memory.value <<<"$out")" $((32 * 1024 * 1024))
  chmod g+w "$C"
  "$SKILLRUN" --conf "$C" --explain "$B" >/dev/null 2>"$T/err"
  is "a group-writable conf is not ignored: it stops --explain (125)" "$?" 125
  check "... saying why" grep -q "is not root's alone" "$T/err"
fi

printf 'include default\nmemroy 1G\n' >"$T/typo.profile"
"$SKILLRUN" --explain -p "$T/typo.profile" "$B" >/dev/null 2>"$T/err"
is "an unknown profile key exits 125" "$?" 125
check "... naming file:line" grep -q "typo.profile:2:" "$T/err"
is "... in one line" "$(wc -l <"$T/err")" 1

"$SKILLRUN" --explain -p strict "$B" >/dev/null 2>"$T/err"
is "strict profile found by name (SKILLRUN_PROFILE_PATH or installed)" "$?" 0

# The document against its contract (skillrun(1) --explain, AUDIT EVENTS
# policy_resolved): without bundle and run it is a policy_resolved's policy,
# so it validates as audit.schema.json's $defs/policy; a profile that sets
# the network and the environment makes those parts more than defaults.
printf 'include default\nnetwork allowlist\nnetwork-allow example.com:443\nsetenv FOO bar\n' \
  >"$T/contract.profile"
out=$("$SKILLRUN" --explain -p "$T/contract.profile" --timeout 5s "$B" -- /bin/true)
is "--explain with a profile exits 0" "$?" 0
"$JQ" 'del(.bundle, .run)' <<<"$out" >"$T/explain.policy.json"
valid_policy() { # FILE: it validates as $defs/policy (problems on stdout)
  "$PYTHON3" -c '
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
schema = {k: v for k, v in schema.items()
          if k not in ("$schema", "allOf", "unevaluatedProperties")}
schema.update({"$ref": "#/$defs/policy", "properties": {}, "required": []})
errors = list(Draft202012Validator(schema).iter_errors(json.load(open(sys.argv[2]))))
for e in errors:
    print("/".join(map(str, e.absolute_path)) + ": " + e.message[:200])
sys.exit(1 if errors else 0)
' "$TOP_SRCDIR/schema/audit.schema.json" "$1"
}
problems=$(valid_policy "$T/explain.policy.json")
is "--explain without bundle and run validates as audit.schema.json's \$defs/policy" \
  "$?/$problems" "0/"
# The validator is not vacuous: a limit with a wrong type fails.
"$JQ" '.limits.memory.value = "512M"' "$T/explain.policy.json" >"$T/explain.bad.json"
check "... and a limit whose value is a string does not" not valid_policy "$T/explain.bad.json"
# What enforces a limit is decided by a run's prepare stage: --explain,
# which builds nothing, says null for every one, as skillrun(1) says.
is "--explain: every limit's enforced_by is null" \
  "$("$JQ" -r '[.limits[].enforced_by | select(. != null)] | length' <<<"$out")" 0
sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$TOP_BUILDDIR/man/skillrun.1" |
  sed -n '/^\.B \\-\\-explain$/,/^\.TP$/p' | sed 's/\\%//g' >"$T/man.explain"
check "skillrun(1) --explain says enforced_by is null there" \
  grep -q '^is null here' "$T/man.explain"
check "... and does not promise which mechanism enforces each limit" \
  not grep -qi 'which mechanism enforces it' "$T/man.explain"
finish
