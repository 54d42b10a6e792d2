#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the execution capability's network field
# (skillrun(1) EXECUTION CAPABILITIES): `network: allowlist ENTRY...` keeps
# only the entries of the effective list within ENTRY...; a capability can
# only narrow.
#
# 1. An address range that skillrun.conf permits (network-allow
#    127.0.0.1/32:PORT, to let a listed name reach an internal address)
#    stayed on the effective list as a destination of its own: a skill whose
#    capability names only a.test connected through the proxy to
#    127.0.0.1:PORT, the host's bait, by address.  Now such a range only
#    unblocks the addresses the names on the list resolve to (a.test, mapped
#    to 127.0.0.1 by network-hosts, still gets through).
# 2. `network: allowlist ` with a trailing blank (a control plane that
#    joined an empty list) narrowed nothing, while two blanks narrowed to
#    nothing: two spellings, two meanings.  Now any blank that separates no
#    two entries is capability_invalid.
# 3. An id line (tenant, execution, placement) was copied with its NUL
#    bytes and then read as a C string: a token the control plane signed
#    for execution "VICTIM\0mine" (a name it took as distinct, as every
#    language but C does) started execution VICTIM, using up the victim's
#    execution id.  Now a NUL anywhere in the payload's lines is
#    capability_invalid.
. "$(dirname "$0")/../integration/lib.sh"
command -v openssl >/dev/null || skip_all "openssl command line not found"
# The capability key comes from a root-owned skillrun.conf.
[ "$(id -u)" -eq 0 ] || skip_all "needs root: the capability key comes from a root-owned skillrun.conf"
. "$(dirname "$0")/common.sh"

"$PYTHON3" "$TOP_SRCDIR/tests/attacks/listener.py" "$T/port" "$T/bait.log" \
  "$T/bait.sock" "skillrun-capability-$$" &
bg_pids+=($!)
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
[ -s "$T/port" ] || die "the bait did not start"
PORT=$(cat "$T/port")

openssl genpkey -algorithm ed25519 -out "$T/control.key" 2>/dev/null &&
  openssl pkey -in "$T/control.key" -pubout -out "$T/control.pub" || die "keys"
printf '127.0.0.1 a.test\n' >"$T/hosts"
cat >"$T/skillrun.conf" <<EOF
capability-key $T/control.pub
network allowlist
network-allow a.test:$PORT 127.0.0.1/32:$PORT
network-hosts $T/hosts
EOF
printf 'include default\nnetwork allowlist\n' >"$T/allow.profile"
N=$T/net-skill
mkdir -p "$N"
printf -- '---\nname: net-skill\ndescription: Names a.test.\nmetadata:\n  sandbox.network: allowlist\n  sandbox.network-allow: "a.test:%s"\n---\n' \
  "$PORT" >"$N/SKILL.md"
cat >"$N/probe.py" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (sys.argv[1], sys.argv[1])).encode())
head = s.recv(4096).split(b"\r\n")[0].decode("latin-1")
print(("OPEN " if " 200 " in head + " " else "BLOCKED ") + head)
EOF
chmod 644 "$T/control.key" "$T/control.pub" "$T/hosts" "$T/skillrun.conf"
chmod -R a+rX "$T"
D=$("$SKILLRUN" --digest "$N" | cut -d' ' -f1)

b64url() { base64 -w0 | tr '+/' '-_' | tr -d '='; }
# mint OUT EXEC NETWORK: a token for tenant default, valid for a minute.
mint() {
  local now
  now=$(date +%s)
  printf 'skillrun-capability/1\ntenant: default\nexecution: %s\ndigest: %s\nnetwork: %s\nissued: %s\nexpires: %s\n' \
    "$2" "$D" "$3" "$now" $((now + 60)) >"$1.payload"
  openssl pkeyutl -sign -inkey "$T/control.key" -rawin -in "$1.payload" -out "$1.sig"
  echo "$(b64url <"$1.payload").$(b64url <"$1.sig")" >"$1"
  chmod 644 "$1"
}

# cap MODE EXEC NETWORK [COMMAND...]: runs the skill with a fresh token;
# sets rc, AUDIT, ERR and OUT (the skill's stdout, "" without one).
n=0
cap() {
  local mode=$1 id=$2 net=$3 w pre=()
  shift 3
  n=$((n + 1))
  if [ "$mode" = user ]; then w=$WS_user pre=("${AS_USER[@]}"); else w=$WS_root; fi
  mint "$T/c$n.cap" "$id" "$net"
  AUDIT=$w/$id.audit ERR=$w/$id.err
  "${pre[@]}" "$SKILLRUN" --conf "$T/skillrun.conf" -p "$T/allow.profile" \
    --workspace-root "$w" --execution-id "$id" --audit-file "$AUDIT" \
    --capability "$T/c$n.cap" "$N" -- "$@" >/dev/null 2>"$ERR"
  rc=$?
  OUT=$(cat "$w/default/$id/logs/stdout.log" 2>/dev/null)
}

for mode in $MODES; do
  : >"$T/bait.log"
  cap "$mode" "$mode-range" "allowlist a.test:$PORT" \
    python3 /workspace/skills/net-skill/probe.py "127.0.0.1:$PORT"
  is "$mode: a capability naming a.test: the skill runs" "$rc" 0
  is "$mode: ... its CONNECT to a conf range's address is refused" "${OUT%% *}" BLOCKED
  is "$mode: ... and the host's bait heard nothing" "$(cat "$T/bait.log")" ""
  check "$mode: ... the range is not on the effective list" \
    test "$(field "$AUDIT" policy_resolved '[.policy.network.allow[].entry] | join(" ")')" = "a.test:$PORT"
  check "$mode: ... a warning says the range only unblocks the listed names" \
    grep -q "127.0.0.1:$PORT is not permitted by the execution capability as a destination" \
    <<<"$("$JQ" -r 'select(.event == "warning") | .message' "$AUDIT")"
  check "$mode: ... and the audit verifies" audit_ok "$AUDIT"

  # Control: the range still lets the listed name reach its address.
  cap "$mode" "$mode-name" "allowlist a.test:$PORT" \
    python3 /workspace/skills/net-skill/probe.py "a.test:$PORT"
  is "$mode: control: a.test (network-hosts: 127.0.0.1) still gets through" \
    "$rc ${OUT%% *}" "0 OPEN"

  for net in "allowlist " "allowlist  a.test:$PORT" "allowlist a.test:$PORT " \
    "allowlist a.test:$PORT  b.test"; do
    cap "$mode" "$mode-blank-$n" "$net" /bin/true
    is "$mode: network '$net' (a stray blank) is refused" \
      "$rc $(field "$AUDIT" bundle_rejected .reason)" "123 capability_invalid"
  done

  # 3: the payload says execution "$mode-victim\0mine"; the run is
  # started as $mode-victim, the id the victim's own token names.
  w=$WS_root pre=()
  [ "$mode" = user ] && w=$WS_user pre=("${AS_USER[@]}")
  now=$(date +%s)
  printf 'skillrun-capability/1\ntenant: default\nexecution: %s\0mine\ndigest: %s\nnetwork: deny\nissued: %s\nexpires: %s\n' \
    "$mode-victim" "$D" "$now" $((now + 60)) >"$T/nul.payload"
  openssl pkeyutl -sign -inkey "$T/control.key" -rawin -in "$T/nul.payload" -out "$T/nul.sig"
  echo "$(b64url <"$T/nul.payload").$(b64url <"$T/nul.sig")" >"$T/nul.cap"
  chmod 644 "$T/nul.cap"
  AUDIT=$w/$mode-victim.audit
  "${pre[@]}" "$SKILLRUN" --conf "$T/skillrun.conf" -p "$T/allow.profile" \
    --workspace-root "$w" --execution-id "$mode-victim" --audit-file "$AUDIT" \
    --capability "$T/nul.cap" "$N" -- /bin/true >/dev/null 2>&1
  is "$mode: a token for execution '$mode-victim\\0mine' does not start $mode-victim" \
    "$? $(field "$AUDIT" bundle_rejected .reason)" "123 capability_invalid"
  check "$mode: ... and the victim's execution id is not used up" \
    test ! -e "$w/default/$mode-victim"
done
host_unchanged capability
finish
