#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Signed bundles, trust tiers, execution capabilities and audit anchoring
# (skillrun(1) SIGNED BUNDLES, EXECUTION CAPABILITIES, AUDIT ANCHORING).
# Keys are made here with `openssl genpkey -algorithm ed25519`; statements
# and tokens are made both with skillrun --sign and with the openssl command
# lines the man page documents.
. "$TOP_SRCDIR/tests/integration/lib.sh"

command -v openssl >/dev/null || skip_all "openssl command line not found"
# Trust keys live in skillrun.conf, which is honoured only when root owns it.
[ "$(id -u)" -eq 0 ] || skip_all "needs root: trust keys come from a root-owned skillrun.conf"
sandbox_possible || skip_all "cannot build a sandbox here"

T=$(tmpdir)
WS=$T/ws
mkdir -p "$WS"
for k in official community control audit other acme globex; do
  openssl genpkey -algorithm ed25519 -out "$T/$k.key" 2>/dev/null
  openssl pkey -in "$T/$k.key" -pubout -out "$T/$k.pub" 2>/dev/null
done
chmod 644 "$T"/*.key "$T"/*.pub # root's alone, whatever the umask (skillrun.conf keys)
# The publishers' and the control plane's private keys are root's alone
# (--sign refuses one that others can read); the audit-key every caller
# of a run reads.
chmod 600 "$T"/*.key
chmod 644 "$T/audit.key"

conf() { # conf NAME LINES...: a root-owned conf file
  printf '%s\n' "${@:2}" >"$T/$1"
  chmod 644 "$T/$1"
  echo "$T/$1"
}
BASE=(
  "trust-key official $T/official.pub"
  "trust-key community $T/community.pub"
  "capability-key $T/control.pub"
  "audit-key $T/audit.key"
)
CONF=$(conf base.conf "${BASE[@]}")
CONF_TIERS=$(conf tiers.conf "${BASE[@]}" "tiers official verified")
CONF_CAP=$(conf cap.conf "${BASE[@]}" "require-capability yes")

newbundle() { # newbundle NAME: a skill with metadata.version
  local d=$T/$1
  mkdir -p "$d"
  printf -- '---\nname: %s\ndescription: A test skill.\nmetadata:\n  version: "1.2"\n---\n# %s\n' \
    "$1" "$1" >"$d/SKILL.md"
  echo "$d"
}

n_audit=0
# The unprivileged user's workspace and audit files (the conf and the keys
# are root's, readable by everyone: trust does not depend on the caller).
UWS=$(user_workspace)
UA=$(user_workspace)
# run CONF ARGS...: runs skillrun with an audit file; sets rc and A.  With
# RUN_AS_USER=1, as the unprivileged test user.
run() {
  local c=$1
  shift
  n_audit=$((n_audit + 1))
  if [ "${RUN_AS_USER:-0}" = 1 ]; then
    A=$UA/audit.$n_audit.jsonl
    as_user "$SKILLRUN" --conf "$c" --workspace-root "$UWS" --audit-file "$A" "$@" \
      >"$T/out" 2>"$T/err"
  else
    A=$T/audit.$n_audit.jsonl
    "$SKILLRUN" --conf "$c" --workspace-root "$WS" --audit-file "$A" "$@" \
      >"$T/out" 2>"$T/err"
  fi
  rc=$?
}
# explain CONF ARGS...: skillrun --explain, which takes no audit file; sets rc.
explain() {
  local c=$1
  shift
  "$SKILLRUN" --conf "$c" --workspace-root "$WS" --explain "$@" >"$T/out" 2>"$T/err"
  rc=$?
}
# refused TEXT REASON CONF ARGS...: exit 123, bundle_rejected with REASON,
# and a valid chain whose execution_completed says refused.
refused() {
  local text=$1 reason=$2
  shift 2
  run "$@"
  local got
  got=$(field "$A" bundle_rejected .reason)
  if [ "$rc" -eq 123 ] && [ "$got" = "$reason" ] && audit_ok "$A" &&
    [ "$(field "$A" execution_completed .status)" = refused ]; then
    pass "$text: refused ($reason)"
  else
    fail "$text: refused ($reason)"
    diag "exit $rc, reason '$got'; stderr: $(cat "$T/err")"
  fi
}

# ------------------------------------------------------------ statements
B=$(newbundle hello)
"$SKILLRUN" --sign "$T/official.key" --tier official --signature "$T/st-hello.sig" "$B" >"$T/out" 2>"$T/err"
check "--sign writes a statement" test $? -eq 0 -a -s "$T/st-hello.sig"
OFF_ID=$(openssl pkey -pubin -in "$T/official.pub" -outform DER | sha256sum | cut -c1-16)
is "the statement names the key id (SHA-256 of the DER public key)" \
  "$(sed -n 's/^key-id: //p' "$T/st-hello.sig")" "$OFF_ID"
"$SKILLRUN" --sign "$T/official.key" --tier official --signature "$T/st-hello.sig" "$B" 2>/dev/null
check "--sign never overwrites an existing statement" test $? -ne 0
# Its report cannot be written (stdout on a full disk): a failure that
# says so, and no statement left behind that a retry would not overwrite.
"$SKILLRUN" --sign "$T/official.key" --tier official --signature "$T/full.sig" "$B" \
  >/dev/full 2>"$T/err"
is "--sign with an unwritable stdout fails (125)" "$?" 125
check "... saying so" grep -q "cannot write to standard output: .*; $T/full.sig not kept" "$T/err"
check "... and leaves no statement" test ! -e "$T/full.sig"
# Killed while it writes the statement (a scheduler's SIGKILL, the OOM
# killer; strace kills it at the statement's write(2), the first of the
# process's own): no partial statement is left at the name, where a retry
# would not overwrite it and a run would refuse an unreadable BUNDLE.sig.
# Before the fix an empty file was left.
if command -v strace >/dev/null &&
  strace -o /dev/null true 2>/dev/null; then
  # (In a subshell of its own, whose report of the kill goes nowhere.)
  (strace -o /dev/null -e trace=write -e inject=write:signal=KILL:when=1 \
    "$SKILLRUN" --sign "$T/official.key" --tier official --signature "$T/killed.sig" "$B" \
    >/dev/null
  exit $?) 2>/dev/null
  is "--sign killed at the statement's write: killed (137)" "$?" 137
  check "... and no partial statement left" test ! -e "$T/killed.sig"
  "$SKILLRUN" --sign "$T/official.key" --tier official --signature "$T/killed.sig" "$B" >/dev/null
  check "... so that signing again makes it" test $? -eq 0 -a -s "$T/killed.sig"
else
  pass "# SKIP --sign killed at the statement's write: needs strace and ptrace"
fi
# A statement written inside the bundle it signs changes the bundle's
# digest and could never verify: refused, saying so, nothing made.
"$SKILLRUN" --sign "$T/official.key" --tier official --signature "$B/inside.sig" "$B" \
  >/dev/null 2>"$T/err"
is "--sign into the bundle it signs fails (125)" "$?" 125
check "... saying why" grep -q "inside the bundle it signs" "$T/err"
check "... and makes nothing there" test ! -e "$B/inside.sig"
# An encrypted private key: refused, saying so; never a passphrase prompt
# on the caller's terminal (OpenSSL's default), which stopped --sign (and a
# run's audit-key) until someone typed.
openssl genpkey -algorithm ed25519 -aes256 -pass pass:secret -out "$T/enc.key" 2>/dev/null
chmod 600 "$T/enc.key"
"$SKILLRUN" --sign "$T/enc.key" --tier official --signature "$T/enc.sig" "$B" </dev/null >/dev/null 2>"$T/err"
is "--sign with an encrypted key fails (125)" "$?" 125
check "... saying it is encrypted" grep -q "enc.key: an encrypted private key" "$T/err"
if command -v script >/dev/null 2>&1; then
  timeout 20 script -qec "'$SKILLRUN' --sign '$T/enc.key' --tier official --signature '$T/enc2.sig' '$B'" \
    /dev/null </dev/null >"$T/tty.out" 2>&1
  is "... on a terminal too: no prompt, 125 at once (not a timeout)" "$?" 125
  check "... nothing asked for" not grep -qi "pass phrase" "$T/tty.out"
else
  pass "# SKIP on a terminal: script(1) (bsdutils) is not installed"
fi

run "$CONF" --signature "$T/st-hello.sig" "$B" -- /bin/true
is "a valid official signature runs" "$rc" 0
is "bundle_verified: tier" "$(field "$A" bundle_verified .tier)" official
is "bundle_verified: key_id" "$(field "$A" bundle_verified .key_id)" "$OFF_ID"
run_dir=$WS/default/$(head -n1 "$A" | "$JQ" -r .execution_id)
is "metadata.json: trust" \
  "$("$JQ" -r '.trust.tier + " " + .trust.key_id' "$run_dir/metadata.json")" \
  "official $OFF_ID"

# BUNDLE.sig beside the bundle is picked up without --signature.
cp "$T/st-hello.sig" "$B.sig"
explain "$CONF" "$B"
is "BUNDLE.sig is used by default (--explain shows the tier)" \
  "$("$JQ" -r .bundle.trust.tier "$T/out")" official
rm -f "$B.sig"
# Through a symbolic link to the bundle, BUNDLE.sig is the one beside the
# directory it resolves to; a refusal names that file, not LINK.sig (which
# is not looked at).
ln -s "$B" "$T/hello-link"
cp "$T/st-hello.sig" "$T/hello-link.sig"
refused "unsigned through a link under strict.profile" signature_required "$CONF" -p strict "$T/hello-link" -- /bin/true
check "... the refusal names the file looked for" grep -q "no $B.sig)" "$T/err"
cp "$T/st-hello.sig" "$B.sig"
explain "$CONF" "$T/hello-link"
is "... and that file is used when it exists" "$("$JQ" -r .bundle.trust.tier "$T/out")" official
rm -f "$B.sig" "$T/hello-link" "$T/hello-link.sig"

# The statement made with the openssl command line, as skillrun(1) shows.
d=$("$SKILLRUN" --digest "$B" | cut -d' ' -f1)
printf 'skillrun-statement/1\nname: hello\nversion: 1.2\n' >"$T/st"
printf 'digest: %s\ntier: official\nkey-id: %s\ntime: %s\n' \
  "$d" "$OFF_ID" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$T/st"
openssl pkeyutl -sign -inkey "$T/official.key" -rawin -in "$T/st" -out "$T/st.sig"
{ cat "$T/st"; printf 'signature: %s\n' "$(base64 -w0 "$T/st.sig")"; } >"$T/cli.sig"
explain "$CONF" --signature "$T/cli.sig" "$B"
is "a statement signed with the openssl CLI verifies" "$rc:$("$JQ" -r .bundle.trust.tier "$T/out")" "0:official"

# One flipped byte: in the bundle, the statement, the signature.
B2=$(newbundle flip)
"$SKILLRUN" --sign "$T/official.key" --tier official --signature "$T/flip.sig" "$B2" >/dev/null
echo x >>"$B2/SKILL.md"
refused "one byte added to the bundle" digest_mismatch "$CONF" --signature "$T/flip.sig" "$B2" -- /bin/true
sed 's/^version: 1.2$/version: 1.3/' "$T/st-hello.sig" >"$T/edited.sig"
refused "one byte changed in the statement" signature_invalid "$CONF" --signature "$T/edited.sig" "$B" -- /bin/true
"$PYTHON3" - "$T/st-hello.sig" "$T/badsig.sig" <<'EOF'
import base64, sys
lines = open(sys.argv[1]).read().splitlines(True)
sig = bytearray(base64.b64decode(lines[-1].split(": ")[1]))
sig[10] ^= 1
lines[-1] = "signature: " + base64.b64encode(bytes(sig)).decode() + "\n"
open(sys.argv[2], "w").write("".join(lines))
EOF
refused "one bit flipped in the signature" signature_invalid "$CONF" --signature "$T/badsig.sig" "$B" -- /bin/true

# Keys and tiers.
"$SKILLRUN" --sign "$T/community.key" --tier official --signature "$T/c-off.sig" "$B" >/dev/null
refused "a community key signing an official statement" tier_key_mismatch "$CONF" --signature "$T/c-off.sig" "$B" -- /bin/true
"$SKILLRUN" --sign "$T/other.key" --tier official --signature "$T/other.sig" "$B" >/dev/null
refused "a key nobody trusts" unknown_key "$CONF" --signature "$T/other.sig" "$B" -- /bin/true
"$SKILLRUN" --sign "$T/community.key" --tier community --signature "$T/comm.sig" "$B" >/dev/null
run "$CONF" --signature "$T/comm.sig" "$B" -- /bin/true
is "a community statement runs where community is allowed" "$rc:$(field "$A" bundle_verified .tier)" "0:community"
refused "a tier the conf does not allow" tier_not_allowed "$CONF_TIERS" --signature "$T/comm.sig" "$B" -- /bin/true
printf 'include default\ntiers official\n' >"$T/offonly.profile"
refused "a tier the profile does not allow" tier_not_allowed "$CONF" -p "$T/offonly.profile" --signature "$T/comm.sig" "$B" -- /bin/true
B3=$(newbundle other-name)
refused "a statement for another skill" digest_mismatch "$CONF" --signature "$T/st-hello.sig" "$B3" -- /bin/true

# Unsigned bundles.
run "$CONF" "$B" -- /bin/true
is "unsigned runs under the default profile, as tier unsigned" "$rc:$(field "$A" bundle_verified .tier)" "0:unsigned"
refused "unsigned under strict.profile" signature_required "$CONF" -p strict "$B" -- /bin/true

# ------------------------------------------------------------ tenant tier
# A tenant's key is trusted for that tenant only, and its statements name
# the tenant they are published for.
CONF_TENANT=$(conf tenant.conf "${BASE[@]}" "trust-key tenant:acme $T/acme.pub" \
  "trust-key tenant:globex $T/globex.pub")
TB=$(newbundle tenant-skill)
"$SKILLRUN" --sign "$T/acme.key" --tier tenant --tenant acme --signature "$T/acme.sig" "$TB" \
  >"$T/out" 2>"$T/err"
check "--sign --tier tenant --tenant acme writes a statement" test $? -eq 0 -a -s "$T/acme.sig"
is "... whose tenant line follows the tier line" \
  "$(grep -A1 '^tier: ' "$T/acme.sig" | tr '\n' ' ')" "tier: tenant tenant: acme "
"$SKILLRUN" --sign "$T/acme.key" --tier tenant --signature "$T/none.sig" "$TB" >/dev/null 2>"$T/err"
is "--sign --tier tenant without --tenant is a usage error" "$?" 125
check "... and writes nothing" test ! -e "$T/none.sig"
for who in $MODES; do
  [ $who = user ] && RUN_AS_USER=1
  run "$CONF_TENANT" --tenant acme --signature "$T/acme.sig" "$TB" -- /bin/true
  is "$who: acme's bundle runs for acme" "$rc:$(field "$A" bundle_verified .tier)" "0:tenant"
  refused "$who: acme's bundle run for globex" tenant_mismatch "$CONF_TENANT" --tenant globex \
    --signature "$T/acme.sig" "$TB" -- /bin/true
  check "$who: ... the refusal names both tenants" \
    grep -q "published for tenant 'acme', not for tenant 'globex'" "$T/err"
  refused "$who: acme's bundle run for the default tenant" tenant_mismatch "$CONF_TENANT" \
    --signature "$T/acme.sig" "$TB" -- /bin/true
  unset RUN_AS_USER
done
"$SKILLRUN" --sign "$T/acme.key" --tier tenant --tenant globex --signature "$T/acme-for-globex.sig" "$TB" >/dev/null
refused "acme's key vouching for globex" tier_key_mismatch "$CONF_TENANT" --tenant globex \
  --signature "$T/acme-for-globex.sig" "$TB" -- /bin/true
check "... the refusal says whose key it is" grep -q "trusted for tier tenant for tenant acme" "$T/err"
refused "a tenant key where no tenant key is trusted" unknown_key "$CONF" --tenant acme \
  --signature "$T/acme.sig" "$TB" -- /bin/true
# A tenant-tier statement without a tenant line, properly signed: refused.
ACME_ID=$(openssl pkey -pubin -in "$T/acme.pub" -outform DER | sha256sum | cut -c1-16)
td=$("$SKILLRUN" --digest "$TB" | cut -d' ' -f1)
printf 'skillrun-statement/1\nname: tenant-skill\nversion: 1.2\ndigest: %s\ntier: tenant\n' "$td" >"$T/nt"
printf 'key-id: %s\ntime: %s\n' "$ACME_ID" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$T/nt"
openssl pkeyutl -sign -inkey "$T/acme.key" -rawin -in "$T/nt" -out "$T/nt.sig"
{ cat "$T/nt"; printf 'signature: %s\n' "$(base64 -w0 "$T/nt.sig")"; } >"$T/notenant.sig"
refused "a tenant-tier statement without a tenant" statement_invalid "$CONF_TENANT" --tenant acme \
  --signature "$T/notenant.sig" "$TB" -- /bin/true
# The same with the tenant line, made with the openssl command line as
# skillrun(1) shows: it runs.
sed 's/^tier: tenant$/tier: tenant\ntenant: acme/' "$T/nt" >"$T/wt"
openssl pkeyutl -sign -inkey "$T/acme.key" -rawin -in "$T/wt" -out "$T/wt.sig"
{ cat "$T/wt"; printf 'signature: %s\n' "$(base64 -w0 "$T/wt.sig")"; } >"$T/cli-tenant.sig"
run "$CONF_TENANT" --tenant acme --signature "$T/cli-tenant.sig" "$TB" -- /bin/true
is "a tenant statement signed with the openssl CLI runs for its tenant" "$rc" 0
# A tenant line in another tier's statement is refused, signed or not.
sed 's/^tier: tenant$/tier: community/' "$T/wt" >"$T/ct"
openssl pkeyutl -sign -inkey "$T/community.key" -rawin -in "$T/ct" -out "$T/ct.sig"
{ cat "$T/ct"; printf 'signature: %s\n' "$(base64 -w0 "$T/ct.sig")"; } >"$T/comm-tenant.sig"
refused "a tenant line in a community statement" statement_invalid "$CONF_TENANT" --tenant acme \
  --signature "$T/comm-tenant.sig" "$TB" -- /bin/true
# skillrun.conf: a tenant-tier key names its tenant.
CONF_BADT=$(conf badt.conf "trust-key tenant $T/acme.pub")
run "$CONF_BADT" --tenant acme "$TB" -- /bin/true
is "trust-key tenant without :ID is a configuration error" "$rc" 125
check "... naming file:line" grep -q "badt.conf:1: trust-key: a key of tier tenant is trusted for one tenant" "$T/err"

# ---------------------------------------------------------- capabilities
b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
mint() { # mint OUT TENANT EXEC DIGEST ISSUED EXPIRES [KEY [PLACEMENT]]
  printf 'skillrun-capability/1\ntenant: %s\nexecution: %s\n' "$2" "$3" >"$T/cap"
  printf 'digest: %s\nnetwork: %s\nissued: %s\nexpires: %s\n' "$4" "${CAP_NET:-deny}" "$5" "$6" >>"$T/cap"
  [ -z "${8:-}" ] || printf 'placement: %s\n' "$8" >>"$T/cap"
  openssl pkeyutl -sign -inkey "${7:-$T/control.key}" -rawin -in "$T/cap" -out "$T/cap.sig"
  echo "$(b64url <"$T/cap").$(b64url <"$T/cap.sig")" >"$1"
}
now=$(date +%s)
mint "$T/ok.cap" acme run-1 "$d" "$now" $((now + 60))
run "$CONF_CAP" --tenant acme --execution-id run-1 --capability "$T/ok.cap" "$B" -- /bin/true
is "a valid capability runs" "$rc:$(field "$A" bundle_verified .capability)" "0:true"
refused "the same capability replayed" execution_replayed "$CONF_CAP" --tenant acme --execution-id run-1 --capability "$T/ok.cap" "$B" -- /bin/true
refused "no capability where one is required" capability_required "$CONF_CAP" --tenant acme --execution-id run-1b "$B" -- /bin/true
mint "$T/x.cap" acme run-2 "$d" $((now - 200)) $((now - 100))
refused "an expired capability" capability_expired "$CONF_CAP" --tenant acme --execution-id run-2 --capability "$T/x.cap" "$B" -- /bin/true
mint "$T/x.cap" acme run-3 "$d" $((now + 100)) $((now + 160))
refused "a capability not yet valid" capability_not_yet_valid "$CONF_CAP" --tenant acme --execution-id run-3 --capability "$T/x.cap" "$B" -- /bin/true
mint "$T/x.cap" acme run-4 "$d" "$now" $((now + 121))
refused "a capability living over 120s" capability_lifetime "$CONF_CAP" --tenant acme --execution-id run-4 --capability "$T/x.cap" "$B" -- /bin/true
mint "$T/x.cap" other run-5 "$d" "$now" $((now + 60))
refused "a capability for another tenant" capability_tenant "$CONF_CAP" --tenant acme --execution-id run-5 --capability "$T/x.cap" "$B" -- /bin/true
mint "$T/x.cap" acme run-6 "$d" "$now" $((now + 60))
refused "a capability for another execution" capability_execution "$CONF_CAP" --tenant acme --execution-id run-7 --capability "$T/x.cap" "$B" -- /bin/true
mint "$T/x.cap" acme run-8 "sha256:$(printf '%064d' 0)" "$now" $((now + 60))
refused "a capability for another digest" capability_digest "$CONF_CAP" --tenant acme --execution-id run-8 --capability "$T/x.cap" "$B" -- /bin/true
mint "$T/x.cap" acme run-9 "$d" "$now" $((now + 60)) "$T/other.key"
refused "a capability signed by another key" capability_signature "$CONF_CAP" --tenant acme --execution-id run-9 --capability "$T/x.cap" "$B" -- /bin/true
REF_A=$A
check "a refused capability leaves no run directory" test ! -e "$WS/acme/run-9"
mint "$T/fd.cap" acme run-10 "$d" "$now" $((now + 60))
run "$CONF_CAP" --tenant acme --execution-id run-10 --capability-fd 7 "$B" -- /bin/true 7<"$T/fd.cap"
is "a capability read from a file descriptor runs" "$rc" 0

# Placement: a token names the host it may start on; another host, with
# its own workspace root, refuses it (the replay the run directory alone
# cannot stop).
CONF_W7=$(conf w7.conf "${BASE[@]}" "require-capability yes" "placement-id worker-7")
CONF_W8=$(conf w8.conf "${BASE[@]}" "require-capability yes" "placement-id worker-8")
CONF_W7R=$(conf w7r.conf "${BASE[@]}" "require-capability yes" "placement-id worker-7" \
  "require-placement yes")
CK=$T/control.key
for who in $MODES; do
  [ $who = user ] && RUN_AS_USER=1
  mint "$T/p.cap" acme "p-$who-1" "$d" "$now" $((now + 60)) "$CK" worker-7
  run "$CONF_W7" --tenant acme --execution-id "p-$who-1" --capability "$T/p.cap" "$B" -- /bin/true
  is "$who: a token for this placement runs" "$rc" 0
  refused "$who: the same token on another placement" capability_placement "$CONF_W8" \
    --tenant acme --execution-id "p-$who-1" --capability "$T/p.cap" "$B" -- /bin/true
  check "$who: ... the refusal names both placements" \
    grep -q "issued for placement 'worker-7', not 'worker-8'" "$T/err"
  refused "$who: a placement token where this host names none" capability_placement "$CONF_CAP" \
    --tenant acme --execution-id "p-$who-1" --capability "$T/p.cap" "$B" -- /bin/true
  mint "$T/np.cap" acme "p-$who-2" "$d" "$now" $((now + 60))
  run "$CONF_W7" --tenant acme --execution-id "p-$who-2" --capability "$T/np.cap" "$B" -- /bin/true
  is "$who: a token without a placement runs where none is required" "$rc" 0
  mint "$T/np.cap" acme "p-$who-3" "$d" "$now" $((now + 60))
  refused "$who: a token without a placement where one is required" capability_placement \
    "$CONF_W7R" --tenant acme --execution-id "p-$who-3" --capability "$T/np.cap" "$B" -- /bin/true
  check "$who: ... and the run directory was not created" test ! -e "$UWS/acme/p-$who-3" -a ! -e "$WS/acme/p-$who-3"
  mint "$T/p.cap" acme "p-$who-4" "$d" "$now" $((now + 60)) "$CK" worker-7
  run "$CONF_W7R" --tenant acme --execution-id "p-$who-4" --capability "$T/p.cap" "$B" -- /bin/true
  is "$who: a token for this placement runs where one is required" "$rc" 0
  unset RUN_AS_USER
done
mint "$T/p.cap" acme p-5 "$d" "$now" $((now + 60)) "$CK" "bad/id"
refused "a placement that is not an id" capability_invalid "$CONF_W7" --tenant acme \
  --execution-id p-5 --capability "$T/p.cap" "$B" -- /bin/true
CONF_BADP=$(conf badp.conf "${BASE[@]}" "require-placement yes")
run "$CONF_BADP" "$B" -- /bin/true
is "require-placement yes without placement-id is a configuration error" "$rc" 125

# A capability's `network: allowlist ENTRY...` narrows the effective list
# of an allowlist run: only the entries within it stay, each dropped one is
# a warning.
NB=$T/net-skill
mkdir -p "$NB"
printf -- '---\nname: net-skill\ndescription: Names destinations.\nmetadata:\n  sandbox.network: allowlist\n  sandbox.network-allow: "a.test b.test:8443"\n---\n' >"$NB/SKILL.md"
printf 'include default\nnetwork allowlist\n' >"$T/allowlist.profile"
nd=$("$SKILLRUN" --digest "$NB" | cut -d' ' -f1)
CAP_NET="allowlist a.test *.c.test" mint "$T/net.cap" acme run-11 "$nd" "$now" $((now + 60))
run "$CONF_CAP" -p "$T/allowlist.profile" --tenant acme --execution-id run-11 --capability "$T/net.cap" "$NB" -- /bin/true
is "a capability's allowlist narrows the effective list" \
  "$rc $(field "$A" policy_resolved '[.policy.network.mode, [.policy.network.allow[].entry]]' | "$JQ" -c .)" \
  '0 ["allowlist",["a.test:443"]]'
check "... and says what it dropped" grep -q 'b.test:8443 is not permitted by the execution capability; dropped' \
  <<<"$("$JQ" -r 'select(.event == "warning") | .message' "$A")"
CAP_NET="allowlist a.test bad/entry" mint "$T/net.cap" acme run-12 "$nd" "$now" $((now + 60))
refused "a capability allowlist entry that does not parse" capability_invalid "$CONF_CAP" \
  -p "$T/allowlist.profile" --tenant acme --execution-id run-12 --capability "$T/net.cap" "$NB" -- /bin/true

# ------------------------------------------------------ audit anchoring
run "$CONF" --signature "$T/st-hello.sig" "$B" -- /bin/true
L=$A
"$SKILLRUN" --verify-audit "$L" --audit-key "$T/audit.pub" >"$T/out" 2>"$T/err"
check "an anchored ledger verifies with the audit public key" test $? -eq 0
"$SKILLRUN" --verify-audit "$L" --audit-key "$T/official.pub" >/dev/null 2>&1
check "... and not with another key" test $? -ne 0
head -n -1 "$L" >"$T/trunc.jsonl"
"$SKILLRUN" --verify-audit "$T/trunc.jsonl" >/dev/null 2>&1
rc_plain=$?
"$SKILLRUN" --verify-audit "$T/trunc.jsonl" --audit-key "$T/audit.pub" >/dev/null 2>&1
is "the last line removed: incomplete (exit 2), with the key or without" \
  "$rc_plain $?" "2 2"
# Remove a middle line and re-chain everything: only the anchor notices.
"$PYTHON3" - "$L" "$T/rechained.jsonl" 2 edit <<'EOF'
import hashlib, json, sys
lines = open(sys.argv[1], "rb").read().splitlines(True)
del lines[int(sys.argv[3])]
prev, out = "0" * 64, []
for i, raw in enumerate(lines):
    # Rewrite prev and seq textually so the anchor layout stays intact.
    o = json.loads(raw)
    text = raw.decode().replace('"prev":"%s"' % o["prev"], '"prev":"%s"' % prev)
    text = text.replace('"seq":%d,' % o["seq"], '"seq":%d,' % i)
    out.append(text.encode())
    prev = hashlib.sha256(out[-1]).hexdigest()
open(sys.argv[2], "wb").write(b"".join(out))
EOF
"$SKILLRUN" --verify-audit "$T/rechained.jsonl" >/dev/null 2>&1
rc_plain=$?
"$SKILLRUN" --verify-audit "$T/rechained.jsonl" --audit-key "$T/audit.pub" >/dev/null 2>"$T/err"
check "a middle line removed and the chain rebuilt: only the anchor fails" \
  test "$rc_plain" -eq 0 -a $? -ne 0
# A forger's whole edit, one the schema accepts: status and exit code.
sed '$s/"status":"succeeded"/"status":"failed"/; $s/"exit_code":0,/"exit_code":1,/' "$L" >"$T/edited.jsonl"
"$SKILLRUN" --verify-audit "$T/edited.jsonl" >/dev/null 2>&1
rc_plain=$?
"$SKILLRUN" --verify-audit "$T/edited.jsonl" --audit-key "$T/audit.pub" >/dev/null 2>&1
is "the final line edited: only the anchor sees it (tampered, exit 1)" \
  "$rc_plain $?" "0 1"
sed '2s/"tier":"official"/"tier":"verified"/' "$L" >"$T/edited2.jsonl"
"$SKILLRUN" --verify-audit "$T/edited2.jsonl" --audit-key "$T/audit.pub" >/dev/null 2>&1
check "an earlier line edited: verification fails" test $? -ne 0
is "a refusal's execution_completed is anchored too" \
  "$(field "$REF_A" execution_completed '.anchor.alg')" ed25519
# So is that of a run stopped before its profile was read (an invalid
# id, a profile that cannot be used): these ended unanchored, so that
# --verify-audit --audit-key called an untouched ledger tampered.
for how in "--execution-id bad!id" "--tenant bad!tenant" "--profile $T/no-such.profile"; do
  # shellcheck disable=SC2086 # $how is an option and its value
  run "$CONF" $how "$B" -- /bin/true
  "$SKILLRUN" --verify-audit "$A" --audit-key "$T/audit.pub" >"$T/v.out" 2>&1
  vrc=$?
  is "${how%% *} stopped the run ($rc): its untouched ledger verifies with the audit key ($(head -n 1 "$T/v.out"))" \
    "$vrc" 0
done
# Nor root refused for want of CAP_SETUID (a container's bounding set):
# the check came before the key was loaded, and the run's untouched
# ledger ended unanchored, "tampered" to --verify-audit --audit-key.
if command -v setpriv >/dev/null; then
  A=$T/audit.nocap.jsonl
  setpriv --bounding-set=-setuid "$SKILLRUN" --conf "$CONF" --workspace-root "$WS" \
    --audit-file "$A" "$B" -- /bin/true >"$T/out" 2>"$T/err"
  rc=$?
  check "root without CAP_SETUID is refused (125), saying so" \
    test "$rc" -eq 125 -a -n "$(grep 'root without CAP_SETUID' "$T/err")"
  "$SKILLRUN" --verify-audit "$A" --audit-key "$T/audit.pub" >"$T/v.out" 2>&1
  vrc=$?
  is "... its untouched ledger verifies with the audit key ($(head -n 1 "$T/v.out"))" "$vrc" 0
fi

# A run whose supervisor was killed: --gc closes its record as abandoned
# with the key skillrun.conf names, as the run itself would have.
"$SKILLRUN" --conf "$CONF" --workspace-root "$WS" --execution-id killed-1 \
  --signature "$T/st-hello.sig" "$B" -- /bin/sleep 30 >"$T/killed.out" 2>&1 &
sup=$!
for _ in $(seq 100); do
  grep -q '"state":"running"' "$WS/default/killed-1/audit.jsonl" 2>/dev/null && break
  sleep 0.1
done
kill -KILL "$sup"
wait "$sup" 2>/dev/null
# Its cgroup leaf goes too once it is 2 s old (gc spares younger ones).
sleep 2.1
"$SKILLRUN" --gc --conf "$CONF" --workspace-root "$WS" >"$T/gc.out" 2>&1
rc=$?
is "--gc with skillrun.conf exits 0 ($(head -n 1 "$T/gc.out"))" "$rc" 0
K=$WS/default/killed-1/audit.jsonl
is "... the killed run's record ends abandoned" "$(tail -n 1 "$K" | "$JQ" -r .status)" abandoned
"$SKILLRUN" --verify-audit "$K" --audit-key "$T/audit.pub" >"$T/v.out" 2>&1
rc=$?
is "... anchored with skillrun.conf's key: it verifies with the audit public key ($(head -n 1 "$T/v.out"))" "$rc" 0

# ------------------------------------------------- libcrypto only for keys
# Where SHA-256 is linked in (configure --enable-static-sha256, the default
# where libcrypto.a exists), the shared libcrypto is opened only when a key
# is needed (src/ossl.h).
soname=$("$SKILLRUN" --version | sed -n 's/^OpenSSL .*SHA-256 linked in; keys: \(libcrypto\.so\.[0-9]*\) .*/\1/p')
if [ -n "$soname" ]; then
  P=$(newbundle plain)
  CONF_NOKEY=$(conf nokey.conf "# no keys")
  LD_DEBUG=files "$SKILLRUN" --conf "$CONF_NOKEY" --workspace-root "$WS" "$P" -- /bin/true \
    >/dev/null 2>"$T/ld"
  rc=$?
  check "a run without keys exits 0 (got $rc)" test "$rc" -eq 0
  check "a run without keys never maps $soname" not grep -q "file=$soname" "$T/ld"
  LD_DEBUG=files run "$CONF" "$P" -- /bin/true 2>/dev/null
  cp "$T/err" "$T/ld"
  check "a run with an audit key exits 0 (got $rc)" test "$rc" -eq 0
  check "a run with an audit key opens $soname" grep -q "file=$soname .*dynamically loaded" "$T/ld"
  # A libcrypto that does not load: runs without keys do not care; a run
  # that needs a key stops with 125 and says what to install.
  mkdir "$T/badlib"
  echo "not a library" >"$T/badlib/$soname"
  LD_LIBRARY_PATH=$T/badlib "$SKILLRUN" --conf "$CONF_NOKEY" --workspace-root "$WS" "$P" -- /bin/true \
    >/dev/null 2>"$T/err"
  rc=$?
  check "a broken $soname: a run without keys still exits 0 (got $rc)" test "$rc" -eq 0
  LD_LIBRARY_PATH=$T/badlib run "$CONF" "$P" -- /bin/true
  is "a broken $soname: a run with an audit key exits 125" "$rc" 125
  is "... with one line on stderr" "$(wc -l <"$T/err")" 1
  check "... naming the library and what to install" \
    grep -q "cannot load $soname, needed for Ed25519 keys (.*): install it" "$T/err"
  is "... and the reason in the audit stream" \
    "$(field "$A" error .reason)" library_unavailable
  check "... whose chain still verifies" audit_ok "$A"
else
  pass "# SKIP libcrypto on demand: this build links libcrypto at start-up"
fi

finish
