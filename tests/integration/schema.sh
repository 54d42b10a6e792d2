#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The JSON Schemas of schema/ (skillrun(1) SCHEMAS): they are valid and hang
# together; the validator that finish runs in every script rejects an
# unknown event, an unknown key and a wrong type, and says so as a TAP
# failure naming FILE:LINE; and runs that make the events and keys the other
# tests rarely produce (their lines are validated by finish like all others).
. "$(dirname "$0")/lib.sh"

sandbox_possible || skip_all "user namespaces are not available"

CHECK=$TOP_SRCDIR/tests/schema-check.py
schema() { "$PYTHON3" "$CHECK" "$@"; }
# quiet CMD...: CMD with its output dropped (check wants only its status).
quiet() { "$@" >/dev/null 2>&1; }

check "the schemas are valid draft 2020-12; events, dispatch and \$defs agree" \
  quiet schema --self-check

T=$(tmpdir)
W=$(tmpdir)
B=$T/schema-skill
mkbundle "$B"
echo "some input" >"$T/in.txt"
chmod -R a+rX "$T"

n=0
# r ARGS...: one run with a fresh execution id; its audit in $T/a.$n.
r() {
  n=$((n + 1))
  A=$T/a.$n
  "$SKILLRUN" --workspace-root "$W" --execution-id "s$n" --audit-file "$A" "$@" \
    >/dev/null 2>"$T/err.$n"
}

# ------------------------------------------------------------ metadata.json
r -i "$T/in.txt" "$B" -- /bin/cp /workspace/metadata.json /workspace/outputs/seen.json
is "a run that copies /workspace/metadata.json exits 0" "$?" 0
GOOD=$A
run=$W/default/s$n
check "the sandbox's metadata.json is valid (\$defs/sandbox)" \
  quiet schema --metadata --sandbox "$run/outputs/seen.json"
is "... with result null" "$("$JQ" -c .result "$run/outputs/seen.json")" null
out=$(schema --metadata --final "$run/metadata.json" "$run/outputs/seen.json")
check "the run directory's metadata.json is valid (\$defs/final)" \
  not grep -q "^$run/metadata.json:" <<<"$out"
check "... and the sandbox's copy is not a final one (no result)" \
  grep -q "^$run/outputs/seen.json:1: metadata: result: None is not of type 'object'" <<<"$out"

# ------------------------------------------------- the validator can fail
# Lines made invalid on purpose, kept away from finish's scan.
X=$(tmpdir)
SCHEMA_SKIP+=("$X")
cp "$GOOD" "$X/good.jsonl"
line_of() { grep -n "\"event\":\"$2\"" "$1" | head -n 1 | cut -d: -f1; }
L_IN=$(line_of "$GOOD" input_staged)
L_END=$(line_of "$GOOD" execution_completed)
sed "${L_IN}s/\"event\":\"input_staged\"/\"event\":\"network_connected\"/" "$GOOD" >"$X/event.jsonl"
sed "${L_END}s/\"status\":/\"surprise\":1,\"status\":/" "$GOOD" >"$X/key.jsonl"
sed "${L_END}s/\"exit_code\":0,/\"exit_code\":\"0\",/" "$GOOD" >"$X/type.jsonl"
# A status and an exit status that do not go together (skillrun(1) EXIT
# STATUS): succeeded is 0.
sed "${L_END}s/\"exit_code\":0,/\"exit_code\":3,/" "$GOOD" >"$X/status.jsonl"
printf '%s\n' '{"schema":"skillrun.audit/1","event":"execution_started"' >"$X/cut.jsonl"
"$JQ" '.result.surprise = 1' "$run/metadata.json" >"$X/meta-key.json"
"$JQ" '.limits.memory = "512M"' "$run/metadata.json" >"$X/meta-type.json"
# One validator per kind of file, as finish runs it.
audit_out=$(schema --audit "$X"/{good,event,key,type,status,cut}.jsonl)
audit_rc=$?
meta_out=$(schema --metadata "$X"/meta-{key,type}.json)
meta_rc=$?
is "the validator exits 1 on invalid audit lines" "$audit_rc" 1
is "... and on invalid metadata.json" "$meta_rc" 1
# reported OUTPUT TEXT REGEX: a problem line of OUTPUT matches REGEX.
reported() {
  if grep -Eq "$3" <<<"$1"; then pass "$2"; else
    fail "$2"
    while IFS= read -r l; do diag "  $l"; done <<<"$1"
  fi
}
check "the unchanged audit validates (the control for what follows)" \
  not grep -q "^$X/good.jsonl:" <<<"$audit_out"
reported "$audit_out" "an unknown event is rejected, naming FILE:LINE" \
  "^$X/event.jsonl:$L_IN: network_connected: event: 'network_connected' is not one of"
reported "$audit_out" "an unknown key is rejected, naming FILE:LINE" \
  "^$X/key.jsonl:$L_END: execution_completed: .*'surprise' was unexpected"
reported "$audit_out" "a wrong type is rejected, naming FILE:LINE" \
  "^$X/type.jsonl:$L_END: execution_completed: exit_code: '0' is not of type 'integer'"
reported "$audit_out" "a line that is not JSON is rejected" "^$X/cut.jsonl:1: not JSON"
reported "$audit_out" "status succeeded with exit_code 3 is rejected, naming FILE:LINE" \
  "^$X/status.jsonl:$L_END: execution_completed: exit_code: 0 was expected"
reported "$meta_out" "metadata.json: an unknown key is rejected" \
  "^$X/meta-key.json:1: metadata: result: .*'surprise' was unexpected"
reported "$meta_out" "metadata.json: a wrong type is rejected" \
  "^$X/meta-type.json:1: metadata: limits/memory: '512M' is not of type 'integer'"

# What finish does with them: a `not ok` per problem, naming FILE:LINE.
tap=$(
  _test_root=$X
  SCHEMA_SKIP=()
  _tap_n=0
  schema_check
)
for f in "event.jsonl:$L_IN" "key.jsonl:$L_END" "type.jsonl:$L_END" \
  "status.jsonl:$L_END" meta-key.json:1 meta-type.json:1 cut.jsonl:1; do
  check "finish's schema check fails on $f" \
    grep -Eq "^not ok [0-9]+ - schema: $X/$f: " <<<"$tap"
done
check "... and passes nothing" not grep -q '^ok' <<<"$tap"

# ------------------------------------------------------------ skillrun(1)
# Made from skillrun.1.in with this build's directories (Makefile.am).
MAN1=$TOP_BUILDDIR/man/skillrun.1
SCHEMA=$TOP_SRCDIR/schema/audit.schema.json
# The AUDIT EVENTS section as text: no \% (no-hyphenation) or \- escapes.
sed -n '/^\.SH AUDIT EVENTS/,/^\.SH METADATA/p' "$MAN1" | sed 's/\\%//g; s/\\-/-/g' >"$T/events.man"
# Its event list: each ".TP" + ".B NAME" after "Each event adds".
man_events=$(awk '/^Each event adds/ {on = 1} /^\.SS/ {on = 0}
  on && prev == ".TP" && /^\.B [a-z_]+$/ {print $2} {prev = $0}' "$T/events.man" | sort)
is "skillrun(1) describes exactly the events of the schema" \
  "$man_events" "$("$JQ" -r '.properties.event.enum[]' "$SCHEMA" | sort)"
missing=
for word in $("$JQ" -r '.["$defs"] | .refusal_reason.enum[], .layer_failed.properties.layer.enum[],
    .execution_completed.properties.status.enum[], .limit_exceeded.properties.limit.enum[],
    .state_changed.properties.state.enum[]' "$SCHEMA"); do
  grep -qw -- "$word" "$T/events.man" || missing="$missing $word"
done
is "skillrun(1) names every refusal reason, layer, status, limit and state" "$missing" ""
# The example of "Schemas", run as printed but for the installed path
# (this build's datadir, which the page names).
sed -n '/^\.SS Schemas/,/^\.SH/p' "$MAN1" | sed -n '/^\.EX/,/^\.EE/p' | sed '1d;$d' |
  sed 's/\\-/-/g' | sed "s|\"/[^\"]*/skillrun/schema/|\"$TOP_SRCDIR/schema/|" >"$T/example.py"
check "the man page's validator example is there" grep -q Draft202012Validator "$T/example.py"
check "... accepts a run's audit stream" quiet "$PYTHON3" "$T/example.py" <"$GOOD"
check "... and rejects an unknown event" not quiet "$PYTHON3" "$T/example.py" <"$X/event.jsonl"

# --------------------------------------- events and keys other tests miss
# sources FILE: the sources of its warnings that have one.
sources() { "$JQ" -r 'select(.event == "warning" and has("source")) | .source' "$1" | sort -u; }
# A limit above the platform cap: a policy warning.
r --memory 4G "$B" -- /bin/true
is "a limit above the cap: warning from the policy" "$(sources "$A")" policy
# A skillrun.conf that is not root's alone: an error, never ignored.
printf 'memory 256M\n' >"$T/lax.conf"
[ "$(id -u)" -ne 0 ] || chown "$NOBODY" "$T/lax.conf"
r --conf "$T/lax.conf" "$B" -- /bin/true
is "an unsafe skillrun.conf: error config_invalid" "$(field "$A" error .reason)" config_invalid
# Nothing to run: an error event.
r "$B"
is "no command and no entrypoint: error usage" "$(field "$A" error .reason)" usage
# Refusals of inputs (tests/integration/inputs.sh has the rest).
r -i /:root "$B" -- /bin/true
is "an input that is a directory: input_rejected input_invalid" \
  "$(field "$A" input_rejected '"\(.reason) \(.rule)"')" "input_invalid regular-file"
r -i "$T/no-such-input" "$B" -- /bin/true
is "an input that does not exist: the same refusal" \
  "$(field "$A" input_rejected '"\(.reason) \(.rule)"')" "input_invalid regular-file"
printf 'inputs-size 1\n' >"$T/tiny-inputs.profile"
r -p "$T/tiny-inputs.profile" -i "$T/in.txt" "$B" -- /bin/true
is "inputs over inputs-size: input_rejected input_too_large" \
  "$(field "$A" input_rejected '"\(.reason) \(.rule) \(.limit) \(.source)"')" \
  "input_too_large inputs-size 1 profile"
r -i "$T/in.txt:../x" "$B" -- /bin/true
is "a hostile input name: input_rejected input_name" \
  "$(field "$A" input_rejected '"\(.reason) \(.rule) \(.name)"')" "input_name name ../x"
# A pinned digest that does not match: expected and actual.
r --expect-sha256 "$(printf '%064d' 0)" "$B" -- /bin/true
is "a digest mismatch names expected and actual" \
  "$(event "$A" bundle_rejected | "$JQ" -r '[.reason, .expected, (.actual | startswith("sha256:"))] | @tsv')" \
  "digest_mismatch	sha256:$(printf '%064d' 0)	true"
# Outputs over outputs-size at harvest: hard links count once on the tmpfs,
# once per name in the harvest.
printf 'outputs-size 1M\n' >"$T/small-outputs.profile"
r -p "$T/small-outputs.profile" "$B" -- /bin/sh -c \
  'head -c 700000 /dev/zero >/workspace/outputs/a && ln /workspace/outputs/a /workspace/outputs/b'
is "outputs over outputs-size: limit_exceeded output" \
  "$(event "$A" limit_exceeded | "$JQ" -r '[.limit, .cap, .files] | @tsv')" "output	1048576	1"
# Network allowed by every layer ("allow", the old name of host):
# metadata.json says host.
N=$T/net-skill
mkdir -p "$N"
printf -- '---\nname: net-skill\ndescription: Asks for the network.\nmetadata:\n  sandbox.network: allow\n---\n' \
  >"$N/SKILL.md"
chmod -R a+rX "$N"
printf 'network allow\n' >"$T/net.profile"
r -p "$T/net.profile" --network allow "$N" -- /bin/true
is "network allowed: metadata.json network host" "$("$JQ" -r .network "$W/default/s$n/metadata.json")" host
# A skill that exits 3 (status failed).
r "$B" -- /bin/sh -c 'exit 3'
is "a skill that exits 3: status failed" "$(field "$A" execution_completed .status)" failed

# ------------------------------------ skillrun(1) against what runs write
# execution_completed: the statuses skillrun(1) says come without the
# skill's outcome ("Unless the run was S, S or S, also skill_exit_code")
# are exactly those of this script's runs that have no skill_exit_code.
line=$(grep -m 1 -E '^Unless (the run was|its status is) .*, also$' "$T/events.man")
no_outcome=$(sed -E 's/^Unless (the run was|its status is) //; s/ \(.*//; s/, also$//
  s/,? or /, /g' <<<"$line" | tr ',' '\n' | tr -d ' ' | grep . | sort -u)
check "skillrun(1) says which statuses have no skill_exit_code" test -n "$no_outcome"
for a in "$T"/a.*; do
  st=$(field "$a" execution_completed .status)
  has=$(field "$a" execution_completed 'has("skill_exit_code")')
  [ -n "$st" ] || continue
  if grep -qxF -- "$st" <<<"$no_outcome"; then want=false; else want=true; fi
  is "status $st (${a##*/}): skill_exit_code present as skillrun(1) says" "$has" "$want"
done
# METADATA: the values of network it names are metadata.schema.json's.
man_net=$(sed -n '/^\.SH METADATA/,/^\.SH /p' "$MAN1" | sed -n '/^\.B network$/{n;/^\.RB (/p;}' |
  sed 's/^\.RB //; s/[(),"]/ /g' | tr ' ' '\n' | grep -vx -e '' -e or | sort)
is "skillrun(1) METADATA names the network values of metadata.schema.json" \
  "$man_net" "$("$JQ" -r '.properties.network.oneOf[0].enum[]' "$TOP_SRCDIR/schema/metadata.schema.json" | sort)"

finish
