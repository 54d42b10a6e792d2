#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the network allowlist: a hostile skill in an
# allowlist run (tests/attacks/egress-probe.py) tries to reach a host not on
# the list (CONNECT, absolute-form HTTP, SOCKS5, with every spelling trick),
# the host's 127.0.0.1 and its own addresses (through the proxy and
# directly), the host's abstract unix socket, private, loopback and
# link-local addresses behind names on the list (fixed; in AAAA answers:
# ::1, IPv4-mapped and NAT64 forms of 127.0.0.1, the host's own IPv6
# address, NAT64 and SIIT forms of the host's own IPv4 address; and by DNS
# rebinding with TTL-0 answers that change between
# queries or mix a private address with a public one), and floods the proxy (connections,
# half-sent requests, more refusals than the run's event cap).  As root and
# as an unprivileged user; every attempt BLOCKED, the host-side bait heard
# nothing, the audit is bounded and complete, and nothing is left behind.
#
# No internet: like tests/integration/network.sh it builds its own network
# in private network and mount namespaces (root only): a "server"
# namespace behind a veth with 11.0.0.2 (the listed server, "public") and
# 11.0.0.3 (a server not on the list, "evil"); on this side 127.0.0.1,
# 11.0.0.1, 10.9.9.9 and 169.254.169.254 with an HTTP server on all of
# them ("hostside": any request it logs is an escape), 2600::1 (a
# public-class IPv6 address of the host's own), the bait of
# tests/attacks/listener.py, and a DNS server the proxy asks.
set -u
. "$(dirname "$0")/../integration/netns.sh"
private_netns "the test builds its own network in private namespaces" \
  unshare nsenter ip python3 -- "$@"
. "$(dirname "$0")/../integration/lib.sh"
sandbox_possible || skip_all "user namespaces are not available"

PROBE=$TOP_SRCDIR/tests/attacks/egress-probe.py
HELPER=$TOP_SRCDIR/tests/integration/network-helper.py
PY=$("$PYTHON3" -c 'import sys; print(sys.executable)')
W=$(tmpdir)

# ---------------------------------------------------------------- network
server_netns 11.0.0.2 11.0.0.3
ip addr add 10.9.9.9/32 dev lo && ip addr add 169.254.169.254/32 dev lo &&
  ip -6 addr add 2600::1/128 dev lo nodad || die "lo"

for site in public evil hostside; do
  mkdir -p "$W/www-$site"
  echo "$site" >"$W/www-$site/who"
done
chmod -R a+rX "$W"
"${srvns[@]}" "$PY" -m http.server --bind 11.0.0.2 --directory "$W/www-public" 8080 \
  >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
"${srvns[@]}" "$PY" -m http.server --bind 11.0.0.3 --directory "$W/www-evil" 8080 \
  >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
# This side's server answers on every address here; it logs each request.
"$PY" -m http.server --bind 0.0.0.0 --directory "$W/www-hostside" 8080 \
  >"$W/hostside.log" 2>&1 &
bg_pids+=($!)
ABSTRACT=skillrun-egress-$$
"$PYTHON3" "$TOP_SRCDIR/tests/attacks/listener.py" "$W/port" "$W/bait.log" \
  "$W/bait.sock" "$ABSTRACT" &
bg_pids+=($!)
"$PY" "$HELPER" dns 127.0.0.1 53 --log="$W/dns.log" public.test=11.0.0.2 evil.test=11.0.0.3 \
  public.test.evil.test=11.0.0.3 loop.test=127.0.0.1 self.test=11.0.0.1 \
  private.test=10.9.9.9 meta.test=169.254.169.254 \
  rebind.test=11.0.0.2,127.0.0.1 rebind2.test=10.9.9.9,11.0.0.2 \
  mixed.test=127.0.0.1+11.0.0.2 v6loop.test=::1 \
  v6mapped.test=::ffff:127.0.0.1 nat64.test=64:ff9b::7f00:1 \
  v6self.test=2600::1 nat64self.test=64:ff9b::b00:1 \
  siitself.test=::ffff:0:b00:1 >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
for _ in $(seq 50); do [ -s "$W/port" ] && break; sleep 0.1; done
[ -s "$W/port" ] || die "the bait did not start"
PORT=$(cat "$W/port")
wait_ports "11.0.0.2 8080" "11.0.0.3 8080" "127.0.0.1 8080"
test_resolver "$W"
is "control: the DNS server answers on the host side" \
  "$(getent ahostsv4 evil.test | awk '{print $1; exit}')" 11.0.0.3
is "control: the host-side server answers on 10.9.9.9" \
  "$(curl -s --noproxy '*' http://10.9.9.9:8080/who)" hostside
check "control: the bait's abstract socket answers on the host side" \
  "$PYTHON3" -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('\0$ABSTRACT')"
sleep 0.2
: >"$W/bait.log"
: >"$W/hostside.log"
: >"$W/dns.log"

# ---------------------------------------------------------------- policy
# No network-hosts: the proxy resolves with DNS, which the test controls.
: >"$W/skillrun.conf"
chmod 644 "$W/skillrun.conf"
cat >"$W/allow.profile" <<'EOF'
include default
network allowlist
network-allow public.test:8080 loop.test:8080 self.test:8080
network-allow private.test:8080 meta.test:8080 rebind.test:8080
network-allow rebind2.test:8080 mixed.test:8080
network-allow v6loop.test:8080 v6mapped.test:8080 nat64.test:8080
network-allow v6self.test:8080 nat64self.test:8080 siitself.test:8080
EOF
{
  cat "$W/allow.profile"
  echo "net-egress 0"
} >"$W/spent.profile"
# Room for four lookups of the probe's 46-byte names, two questions each
# (4 * 2 * 46 = 368).
{
  cat "$W/allow.profile"
  echo "network-allow *.leak.test:8080"
  echo "net-egress 400"
} >"$W/leak.profile"
B=$W/egress-skill
mkdir -p "$B/scripts"
cat >"$B/SKILL.md" <<'EOF'
---
name: egress-skill
description: Tries to get past the egress proxy.
metadata:
  sandbox.network: allowlist
  sandbox.network-allow: "public.test:8080 loop.test:8080 self.test:8080 private.test:8080 meta.test:8080 rebind.test:8080 rebind2.test:8080 mixed.test:8080 v6loop.test:8080 v6mapped.test:8080 nat64.test:8080 v6self.test:8080 nat64self.test:8080 siitself.test:8080 *.leak.test:8080"
  sandbox.net-connections: "4"
---
EOF
cp "$PROBE" "$B/scripts/"
chmod -R a+rX "$W"
WS_root=$(tmpdir)
WS_user=$(user_workspace)

# run MODE ID CMD...: one run; sets rc, A, OUT, KIDS (skillrun's children
# seen while it ran).
run() {
  local mode=$1 id=$2 w k pid
  shift 2
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  A=$w/$id.audit
  OUT=$w/default/$id/logs/stdout.log
  local cmd=("$SKILLRUN" --conf "$W/skillrun.conf" -p "$W/${PROFILE:-allow}.profile"
    --workspace-root "$w" --execution-id "$id" --audit-file "$A" "$B" -- "$@")
  if [ "$mode" = user ]; then
    cmd=("${AS_USER[@]}" "${cmd[@]}")
  fi
  "${cmd[@]}" >"$w/$id.stdout" 2>"$w/$id.err" &
  pid=$!
  KIDS=" "
  while kill -0 "$pid" 2>/dev/null; do
    for k in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
      case $KIDS in *" $k "*) ;; *) KIDS="$KIDS$k " ;; esac
    done
    sleep 0.05
  done
  wait "$pid"
  rc=$?
  [ "$rc" -eq 0 ] || sed 's/^/# /' "$w/$id.err" | head -n 10
  [ -f "$OUT" ] || OUT=/dev/null
}
result() { awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' "$OUT"; }
verdict() { # MODE VERDICT CASE...: each case's line starts with VERDICT
  local mode=$1 want=$2 c line
  shift 2
  for c; do
    line=$(result "$c")
    case "$line" in
    "$want":*) pass "$mode: $c: ${line#*:}" ;;
    *)
      fail "$mode: $c is $want"
      diag "  got: '${line:-no report}' (skillrun exit $rc)"
      ;;
    esac
  done
}
gone() {
  local k
  for k in $KIDS; do [ -e "/proc/$k" ] && return 1; done
  return 0
}
conn() { "$JQ" -c "select(.event == \"network_connect\" and ($1))" "$A"; }

reach_cases=(not_listed listed_name_other_port listed_address_as_literal
  suffix_of_listed userinfo trailing_garbage not_listed_absolute
  absolute_userinfo not_listed_socks listed_address_socks_ipv4
  host_lo_literal host_lo_localhost host_lo_v6 host_lo_v4mapped
  host_lo_decimal host_lo_hex host_lo_short host_any host_own_address
  proxy_itself listed_name_to_loopback listed_name_to_host_address
  listed_name_to_private listed_name_to_metadata host_lo_socks_ipv4
  host_lo_socks_ipv6 host_lo_socks_name listed_name_to_loopback_socks
  direct_host_lo direct_host_address direct_public abstract
  listed_name_to_v6_loopback listed_name_to_v4mapped_loopback
  listed_name_to_nat64_loopback listed_name_to_host_v6_address
  listed_name_to_host_nat64 listed_name_to_host_siit
  rebinding_rebind rebinding_rebind2 rebinding_mixed)

skip_modes
for mode in $MODES; do
: >"$W/dns.log"
  run $mode "$mode-reach" python3 /workspace/inputs/bundle/scripts/egress-probe.py \
    probe "$PORT" "$ABSTRACT"
  is "$mode reach: the run succeeds" "$rc" 0
  verdict $mode OK control
  verdict $mode BLOCKED "${reach_cases[@]}"
  sleep 0.2
  is "$mode reach: the host's 127.0.0.1 bait and abstract socket heard nothing" \
    "$(cat "$W/bait.log")" ""
  is "$mode reach: no request reached a host-side address (127.0.0.1, 11.0.0.1, 10.9.9.9, 169.254.169.254)" \
    "$(grep -c '"GET ' "$W/hostside.log")" 0
  # mixed.test's answer holds 127.0.0.1 beside 11.0.0.2: the proxy skips
  # the blocked address and connects to the other, so it is never refused.
  is "$mode reach: the listed names' private answers are audited blocked_address" \
    "$(conn '.decision == "denied" and .reason == "blocked_address"' | "$JQ" -r .host | sort -u | tr '\n' ' ')" \
    "loop.test meta.test nat64.test nat64self.test private.test rebind.test rebind2.test self.test siitself.test v6loop.test v6mapped.test v6self.test "
  is "$mode reach: the host's own IPv6 address behind a listed name is audited as the host's" \
    "$(conn '.host == "v6self.test"' | "$JQ" -r .address_class | sort -u)" host
  # 64:ff9b::b00:1 and ::ffff:0:b00:1 carry 11.0.0.1, the host's own: a
  # NAT64 or SIIT gateway turns them into it.  They used to be judged as
  # the public 11.0.0.1 without being compared with the host's addresses,
  # and were let through (here connect_failed: this network has no
  # gateway).
  is "$mode reach: the host's own IPv4 address in NAT64 and SIIT form is audited as the host's" \
    "$(conn '.host == "nat64self.test" or .host == "siitself.test"' | "$JQ" -r '.address_class + " " + .reason' | sort -u)" \
    "host blocked_address"
  is "$mode reach: every allowed connection went to the listed server's address" \
    "$(conn '.decision == "allowed"' | "$JQ" -r .address | sort -u)" 11.0.0.2
  # A name the list does not hold is refused before any lookup: asking
  # DNS for it would carry the skill's data out.
  is "$mode reach: the proxy asked DNS only for listed names" \
    "$(sort -u "$W/dns.log" | grep -vxE '(public|loop|self|private|meta|rebind|rebind2|mixed|v6loop|v6mapped|nat64|v6self|nat64self|siitself)\.test' | tr '\n' ' ')" ""
  check "$mode reach: the audit verifies" audit_ok "$A"
  check "$mode reach: nothing of the run is left" gone

  run $mode "$mode-flood" python3 /workspace/inputs/bundle/scripts/egress-probe.py flood
  is "$mode flood: the run succeeds" "$rc" 0
  verdict $mode BLOCKED connections slowloris refusals
  verdict $mode OK after
  sum=$("$JQ" -c 'select(.event == "network_summary")' "$A")
  is "$mode flood: network_connect events stop at 1000" "$(conn true | wc -l)" 1000
  check "$mode flood: network_summary counts the rest (events_suppressed > 0, complete)" \
    "$JQ" -e '.events_suppressed > 0 and .complete == true and .connections >= 1200' <<<"${sum:-null}"
  is "$mode flood: ... and every connection is either written or suppressed" \
    "$("$JQ" -r '.connections - .events_suppressed' <<<"${sum:-null}")" 1000
  check "$mode flood: the refusals over net-connections are audited connection_limit" \
    test -n "$(conn '.reason == "connection_limit"')"
  check "$mode flood: the half-sent requests are audited handshake_timeout" \
    test -n "$(conn '.reason == "handshake_timeout"')"
  check "$mode flood: the audit verifies" audit_ok "$A"
  check "$mode flood: nothing of the run is left" gone

  # net-egress 0: the budget is spent before the first byte.  A request
  # that came with no bytes used to be let through (and its name
  # resolved): a tunnel reached the destination, which the skill could
  # then only listen to, and signal by opening connections.
  PROFILE=spent run $mode "$mode-spent" \
    python3 /workspace/inputs/bundle/scripts/egress-probe.py spent
  is "$mode spent: the run succeeds" "$rc" 0
  verdict $mode BLOCKED spent_connect spent_tunnel spent_socks
  is "$mode spent: every connection is audited denied egress_limit, none resolved" \
    "$(conn true | "$JQ" -r '.decision + " " + .reason + " " + (.address // "none")' | sort -u)" \
    "denied egress_limit none"
  check "$mode spent: the audit verifies" audit_ok "$A"

  # The names the proxy looks up for the skill carry its data out to
  # whoever serves the zone, answer or not: under *.leak.test every
  # label is the skill's.  Each lookup used to be free, without limit
  # (here all 50 reached the DNS server); the name's bytes now count
  # against net-egress, once for each question (A and AAAA; the proxy
  # charged one, and twice the bytes left), and a name that does not fit
  # is not looked up.
  : >"$W/dns.log"
  PROFILE=leak run $mode "$mode-names" \
    python3 /workspace/inputs/bundle/scripts/egress-probe.py names 50
  is "$mode names: the run succeeds" "$rc" 0
  verdict $mode DONE names
  is "$mode names: DNS heard four of the 50 names (net-egress 400, 46 bytes each)" \
    "$(grep -c '\.leak\.test$' <(sort -u "$W/dns.log"))" 4
  asked=$(awk '/\.leak\.test$/ { n += length($0) } END { print n + 0 }' "$W/dns.log")
  check "$mode names: ... and the names in its questions come to at most net-egress ($asked bytes)" \
    [ "$asked" -le 400 ]
  is "$mode names: the rest are audited denied egress_limit, not looked up" \
    "$(conn '.host | endswith(".leak.test")' | "$JQ" -r '.decision + " " + .reason' | sort | uniq -c | awk '{print $1, $2, $3}' | tr '\n' ',')" \
    "4 allowed resolve_failed,46 denied egress_limit,"
  check "$mode names: the audit verifies" audit_ok "$A"
  check "$mode names: nothing of the run is left" gone
done

# host mode: the host's abstract socket stays closed where Landlock can
# scope it (enforced_by landlock-scope); tests/integration/network.sh checks
# the rest of host mode.
HB=$W/host-skill
mkdir -p "$HB"
printf -- '---\nname: host-skill\ndescription: Shares the host network.\nmetadata:\n  sandbox.network: host\n---\n' \
  >"$HB/SKILL.md"
printf 'include default\nnetwork host\n' >"$W/host.profile"
chmod -R a+rX "$HB" "$W/host.profile"
: >"$W/bait.log"
for mode in $MODES; do
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  A=$w/$mode-host.audit
  OUT=$w/default/$mode-host/logs/stdout.log
  cmd=("$SKILLRUN" --conf "$W/skillrun.conf" -p "$W/host.profile"
    --workspace-root "$w" --execution-id "$mode-host" --audit-file "$A" "$HB"
    -- python3 -c "import socket
s = socket.socket(socket.AF_UNIX)
try:
    s.connect('\0$ABSTRACT')
    print('abstract=OPEN:connected')
except OSError as e:
    print('abstract=BLOCKED:errno %d' % e.errno)")
  if [ "$mode" = user ]; then
    cmd=("${AS_USER[@]}" "${cmd[@]}")
  fi
  "${cmd[@]}" >/dev/null 2>"$w/$mode-host.err"
  rc=$?
  by=$(field "$A" policy_resolved .policy.network.enforced_by)
  if [ "$by" = landlock-scope ]; then
    is "$mode host: the run succeeds" "$rc" 0
    verdict "$mode host" BLOCKED abstract
  else
    pass "# SKIP $mode host: this kernel cannot scope abstract sockets (enforced_by $by)"
  fi
done
sleep 0.2
is "host: the bait's abstract socket heard nothing" "$(cat "$W/bait.log")" ""

# A range that holds every IPv4 address, written as IPv6, is refused like
# 0.0.0.0/0: [::ffff:0:0]/96 used to be accepted, and the proxy then
# connected a skill to the host's 127.0.0.1 (and --explain printed it as
# 0.0.0.0/0).
n=0
for range in '[::ffff:0:0]/96' '[::]/80' '[64:ff9b::]/96'; do
  n=$((n + 1))
  printf 'include default\nnetwork allowlist\nnetwork-allow %s:8080\n' "$range" >"$W/v4all.profile"
  chmod 644 "$W/v4all.profile"
  "$SKILLRUN" --conf "$W/skillrun.conf" -p "$W/v4all.profile" --workspace-root "$WS_root" \
    --audit-file "$W/v4all$n.audit" "$HB" -- /bin/true >/dev/null 2>"$W/v4all.err"
  rc=$?
  is "network-allow $range: refused (125)" "$rc" 125
  check "... with the profile's file:line and why" \
    grep -q "v4all.profile:3: network-allow: .*would permit every IPv4 address" "$W/v4all.err"
  is "... and recorded" "$(field "$W/v4all$n.audit" error .reason)" config_invalid
done
finish
