#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The three network modes through real runs, as root and as the suite's
# ordinary user (uid 65534 unless SKILLRUN_TEST_USER says otherwise):
#
#   allowlist  curl, Python's urllib, HTTP CONNECT, SOCKS5 and `pip
#              download` reach what the skill names and the profile permits
#              through the egress proxy; a name not on the list is refused
#              (403, SOCKS error) and audited; a name that resolves to
#              127.0.0.1 or to the host's own address is refused unless a
#              profile range permits it; a direct connection fails
#              (ENETUNREACH); what the manifest asks beyond the profile is
#              dropped; net-connections and net-egress hold (a connection
#              the skill closed makes room at once); the proxy runs
#              without privileges and is gone when the run is; a hosts file
#              another user owns stops the run before the skill starts.
#   host       names resolve through DNS (a test DNS server), a warning is
#              written, and the host's abstract unix socket stays closed.
#   deny       no proxy, no DNS, ENETUNREACH.
#
# No internet: the test builds its own network in a private network and
# mount namespace (which needs root): lo with HTTP on 127.0.0.1:8080 and a
# DNS server on 127.0.0.1:53 (the namespace's /etc/resolv.conf points at
# it), and a veth to a "server" namespace at 11.0.0.2 (HTTP :8080, an echo
# :7007: a public-class address that is not the proxy's own).  Names come
# from a hosts file named by a test skillrun.conf (network-hosts), except
# dns-only.test, which only the DNS server knows.
set -u
. "$(dirname "$0")/netns.sh"
private_netns "the test builds its own network (a veth, a DNS server on port 53) in private namespaces" \
  unshare nsenter ip curl python3 getent -- "$@"
. "$(dirname "$0")/lib.sh"
# The sandbox's python3 is the system's (the default profile binds /usr),
# which may not be the $PYTHON3 of the tests.
/usr/bin/python3 -m pip --version >/dev/null 2>&1 ||
  skip_all "python3-pip is not installed (/usr/bin/python3 -m pip)"

HELPER=$TOP_SRCDIR/tests/integration/network-helper.py
CLIENT=$TOP_SRCDIR/tests/integration/proxy-client.py
PY=$("$PYTHON3" -c 'import sys; print(sys.executable)')
W=$(tmpdir)

# ---------------------------------------------------------------- network
server_netns 11.0.0.2

mkdir -p "$W/www11" "$W/www127"
echo "hello from 11.0.0.2" >"$W/www11/hello.txt"
echo "hello from 127.0.0.1" >"$W/www127/hello.txt"
WHEEL_SHA=$("$PY" "$HELPER" wheel-index "$W/www11" tinypkg 0.1) || die "wheel"
chmod -R a+rX "$W"

"${srvns[@]}" "$PY" -m http.server --bind 11.0.0.2 --directory "$W/www11" 8080 \
  >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
"${srvns[@]}" "$PY" "$CLIENT" echo 11.0.0.2 7007 >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
"$PY" -m http.server --bind 127.0.0.1 --directory "$W/www127" 8080 \
  >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
"$PY" "$HELPER" dns 127.0.0.1 53 dns-only.test=11.0.0.2 >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
ABSTRACT=skillrun-net-$$
: >"$W/abstract.log"
"$PY" "$HELPER" abstract-listen "$ABSTRACT" "$W/abstract.log" >>"$W/servers.log" 2>&1 &
bg_pids+=($!)
wait_ports "11.0.0.2 8080" "11.0.0.2 7007" "127.0.0.1 8080"
# This namespace's resolver is the test's DNS server.
test_resolver "$W"
is "control: the test DNS server answers on the host side" \
  "$(getent hosts dns-only.test | awk '{print $1}')" 11.0.0.2
check "control: the abstract socket answers on the host side" \
  test "$("$PY" "$HELPER" abstract "$ABSTRACT")" = connected
: >"$W/abstract.log"

# The platform: a root-owned skillrun.conf naming a root-owned hosts file.
cat >"$W/hosts" <<EOF
# the test's names (network-hosts)
11.0.0.2 allowed.test other.test pypi.test
127.0.0.1 loop.test
11.0.0.1 self.test
EOF
printf 'network-hosts %s\n' "$W/hosts" >"$W/skillrun.conf"
chown root:root "$W/hosts" "$W/skillrun.conf"
chmod 644 "$W/hosts" "$W/skillrun.conf"
CONF=$W/skillrun.conf

cat >"$W/allow.profile" <<'EOF'
include default
network allowlist
network-allow allowed.test:8080 allowed.test:7007 pypi.test:8080
network-allow dns-only.test:8080 loop.test:8080 self.test:7007
EOF
{ cat "$W/allow.profile" && echo 'network-allow 127.0.0.0/8:8080'; } >"$W/loop.profile"
printf 'include default\nnetwork host\n' >"$W/host.profile"

# ---------------------------------------------------------------- bundles
# net-skill asks for more than allow.profile permits (other.test:8080,
# extra.test:443) and for allowed.test:7007 through a WebFetch tool.
NB=$W/net-skill
mkdir -p "$NB/scripts"
cat >"$NB/SKILL.md" <<'EOF'
---
name: net-skill
description: Reaches the network through the egress proxy.
allowed-tools: Read WebFetch(domain:allowed.test:7007)
metadata:
  sandbox.network: allowlist
  sandbox.network-allow: "allowed.test:8080 pypi.test:8080 dns-only.test:8080 loop.test:8080 self.test:7007 other.test:8080 extra.test"
---
EOF
cp "$CLIENT" "$HELPER" "$NB/scripts/"
cat >"$NB/scripts/probe.sh" <<'EOF'
#!/bin/sh
# One line per probe: KEY=RESULT.
S=/workspace/inputs/bundle/scripts
say() { printf '%s=%s\n' "$1" "$2"; }
say curl "$(curl -sS --max-time 15 http://allowed.test:8080/hello.txt 2>&1)"
say urllib "$(python3 $S/proxy-client.py urllib http://allowed.test:8080/hello.txt 2>&1)"
say connect "$(python3 $S/proxy-client.py connect-echo 3128 allowed.test 7007 ping 2>&1)"
say socks "$(python3 $S/proxy-client.py socks 3128 3 allowed.test 7007 2>&1 | tr '\n' ' ')"
say dns "$(curl -sS --max-time 15 http://dns-only.test:8080/hello.txt 2>&1)"
say other "$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 http://other.test:8080/hello.txt)"
say other_urllib "$(python3 $S/proxy-client.py urllib http://other.test:8080/hello.txt 2>&1)"
say other_socks "$(python3 $S/proxy-client.py socks 3128 3 other.test 8080 2>&1 | tr '\n' ' ')"
say loop "$(curl -s -o /dev/null -w '%{http_code}' --max-time 15 http://loop.test:8080/hello.txt)"
say self "$(python3 $S/proxy-client.py connect-status 3128 self.test 7007 2>&1)"
say direct "$(python3 $S/network-helper.py direct 11.0.0.2 8080)"
say pip "$(PIP_DISABLE_PIP_VERSION_CHECK=1 python3 -m pip download --no-deps \
  --no-cache-dir --index-url http://pypi.test:8080/simple/ \
  --trusted-host pypi.test -d /workspace/outputs tinypkg \
  >/workspace/scratch/pip.log 2>&1; echo $?)"
cat /workspace/scratch/pip.log >&2
say nsswitch "$(grep '^hosts:' /etc/nsswitch.conf)"
say proxy_env "$(env | grep -ciE '^(http|https|all|no)_proxy=')"
EOF
cat >"$NB/scripts/host.sh" <<'EOF'
#!/bin/sh
S=/workspace/inputs/bundle/scripts
say() { printf '%s=%s\n' "$1" "$2"; }
say abstract "$(python3 $S/network-helper.py abstract "$1")"
say getent "$(getent hosts dns-only.test | tr -s ' ')"
say nsswitch "$(grep '^hosts:' /etc/nsswitch.conf)"
say resolv "$(cat /etc/resolv.conf)"
say direct "$(python3 $S/network-helper.py direct 11.0.0.2 8080)"
say proxy_env "$(env | grep -ciE '^(http|https|all|no)_proxy=')"
EOF
cat >"$NB/scripts/limits.sh" <<'EOF'
#!/bin/sh
# net-connections 1: a second connection while one is held; net-egress
# 64K: a larger upload is cut, and the next connection refused.
C=/workspace/inputs/bundle/scripts/proxy-client.py
say() { printf '%s=%s\n' "$1" "$2"; }
python3 $C hold 3128 allowed.test 7007 /workspace/scratch/held &
held=$!
for _ in $(seq 100); do [ -s /workspace/scratch/held ] && break; sleep 0.05; done
say held "$(cat /workspace/scratch/held)"
say second "$(python3 $C connect-status 3128 allowed.test 7007 2>&1)"
kill $held; wait $held 2>/dev/null
# The tunnel counts until the echo server has closed its side too: a
# connection refused 503 meanwhile is tried again (5 s at most).
for _ in $(seq 50); do
  egress=$(python3 $C egress 3128 allowed.test 7007 1048576 2>&1)
  case $egress in "refused 503"*) sleep 0.1 ;; *) break ;; esac
done
say egress "$egress"
sleep 0.2
say after "$(python3 $C connect-status 3128 allowed.test 7007 2>&1)"
EOF
chmod 755 "$NB"/scripts/*.sh
LB=$W/limits-skill
mkdir -p "$LB"
cp -r "$NB/scripts" "$LB/"
cat >"$LB/SKILL.md" <<'EOF'
---
name: limits-skill
description: Lowers the egress proxy's limits.
metadata:
  sandbox.network-allow: "allowed.test:7007"
  sandbox.net-connections: "1"
  sandbox.net-egress: 64K
---
EOF
# net-connections 4 and four threads, each opening a connection the list
# refuses once the one before is closed: never more than four open at
# once.  The proxy read the listener before the closes that came ahead of
# it, so one in twenty-five was refused connection-limit.
CB=$W/closes-skill
mkdir -p "$CB/scripts"
cp "$CLIENT" "$CB/scripts/"
cat >"$CB/scripts/closes.sh" <<'EOF'
#!/bin/sh
C=/workspace/inputs/bundle/scripts/proxy-client.py
printf 'closes=%s\n' "$(python3 $C closes 3128 other.test 8080 4 300 2>&1)"
printf 'after=%s\n' "$(python3 $C connect-status 3128 allowed.test 7007 2>&1)"
EOF
chmod 755 "$CB/scripts/closes.sh"
cat >"$CB/SKILL.md" <<'EOF'
---
name: closes-skill
description: Closes each connection before it opens the next.
metadata:
  sandbox.network-allow: "allowed.test:7007 other.test:8080"
  sandbox.net-connections: "4"
---
EOF
HB=$W/host-skill
mkdir -p "$HB"
cp -r "$NB/scripts" "$HB/"
printf -- '---\nname: host-skill\ndescription: Shares the host network.\nmetadata:\n  sandbox.network: host\n---\n' \
  >"$HB/SKILL.md"
chmod -R a+rX "$W"

WS_root=$(tmpdir)
WS_user=$(user_workspace)

# run MODE ID PROFILE BUNDLE [CONF] -- CMD...: one run in the background,
# watched: sets rc, A (audit), OUT (the skill's stdout.log), ERR; KIDS (the
# supervisor's children seen during the run), PROXY (the one among them in
# this network namespace: the egress proxy) and PROXY_STATUS (its
# /proc/PID/status while it ran).
run() {
  local mode=$1 id=$2 prof=$3 bundle=$4 conf=$CONF w pid k
  shift 4
  if [ "$1" != -- ]; then
    conf=$1
    shift
  fi
  shift
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  A=$w/$id.audit
  ERR=$w/$id.err
  OUT=$w/default/$id/logs/stdout.log
  local cmd=("$SKILLRUN" --conf "$conf" -p "$prof" --workspace-root "$w"
    --execution-id "$id" --audit-file "$A" "$bundle" -- "$@")
  # AS_USER, a plain command, not the as_user function: a function in the
  # background is a subshell, and the watch below wants skillrun's own
  # children.
  if [ "$mode" = user ]; then
    cmd=("${AS_USER[@]}" "${cmd[@]}")
  fi
  "${cmd[@]}" >"$w/$id.stdout" 2>"$ERR" &
  pid=$!
  KIDS=" "
  PROXY=
  PROXY_STATUS=
  local me st
  me=$(readlink /proc/self/ns/net)
  while kill -0 "$pid" 2>/dev/null; do
    for k in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
      case $KIDS in *" $k "*) continue ;; esac
      KIDS="$KIDS$k "
      if [ -z "$PROXY" ] && [ "$(readlink "/proc/$k/ns/net" 2>/dev/null)" = "$me" ]; then
        PROXY=$k
      fi
    done
    # The last look while it lives: well past its privilege drop, which
    # follows the fork by a moment.
    if [ -n "$PROXY" ]; then
      st=$(cat "/proc/$PROXY/status" 2>/dev/null) && [ -n "$st" ] && PROXY_STATUS=$st
    fi
    sleep 0.01
  done
  wait "$pid"
  rc=$?
  [ -f "$OUT" ] || OUT=/dev/null
}
# val KEY: the skill's line KEY=..., without the key.
val() { sed -n "s/^$1=//p" "$OUT" | head -n 1; }
# conn JQ-FILTER: the network_connect events that match, compact.
conn() { "$JQ" -c "select(.event == \"network_connect\" and ($1))" "$A"; }
connf() { conn "$1" | head -n 1 | "$JQ" -r "$2"; }
# gone: none of the run's processes is left.
gone() {
  local k
  for k in $KIDS; do [ -e "/proc/$k" ] && return 1; done
  return 0
}
status_field() { awk -v k="$1:" '$1 == k {print $2}' <<<"$PROXY_STATUS"; }

skip_modes
for mode in $MODES; do
  # ------------------------------------------------------------ allowlist
  run $mode "$mode-allow" "$W/allow.profile" "$NB" -- /workspace/inputs/bundle/scripts/probe.sh
  is "$mode allowlist: the run succeeds" "$rc" 0
  [ "$rc" -eq 0 ] || sed 's/^/# /' "$ERR" | head -n 20
  is "$mode allowlist: curl reaches an allowlisted name" "$(val curl)" "hello from 11.0.0.2"
  is "$mode allowlist: so does Python's urllib" "$(val urllib)" "hello from 11.0.0.2"
  is "$mode allowlist: HTTP CONNECT to the raw echo (a WebFetch tool's entry)" "$(val connect)" ping
  is "$mode allowlist: SOCKS5 with the name resolved by the proxy" "$(val socks)" "0 ping "
  is "$mode allowlist: a name only DNS knows, resolved on the host side" "$(val dns)" "hello from 11.0.0.2"
  is "$mode allowlist: a name not on the list: curl gets 403" "$(val other)" 403
  is "$mode allowlist: ... urllib gets 403 blocked-by-allowlist" "$(val other_urllib)" "HTTP 403 blocked-by-allowlist"
  is "$mode allowlist: ... SOCKS5 gets reply 2 (not allowed)" "$(val other_socks)" "2 "
  is "$mode allowlist: a name that resolves to 127.0.0.1 is refused" "$(val loop)" 403
  is "$mode allowlist: a name that resolves to the host's own address is refused" \
    "$(val self)" "403 blocked-address"
  is "$mode allowlist: a direct connection fails" "$(val direct)" ENETUNREACH
  is "$mode allowlist: pip download from the local index works" "$(val pip)" 0
  [ "$(val pip)" = 0 ] || sed -n '/pip/,$p' "$(dirname "$OUT")/stderr.log" | head -n 20 | sed 's/^/# /'
  is "$mode allowlist: ... the wheel is an artifact with the index's hash" \
    "$("$JQ" -r 'select(.event == "artifact_committed") | "\(.path) \(.sha256)"' "$A")" \
    "tinypkg-0.1-py3-none-any.whl $WHEEL_SHA"
  is "$mode allowlist: no DNS in the sandbox (hosts: files)" "$(val nsswitch)" "hosts: files"
  is "$mode allowlist: the 8 proxy variables are set" "$(val proxy_env)" 8

  pol=$(event "$A" policy_resolved)
  is "$mode allowlist: policy_resolved: mode allowlist, enforced by the proxy" \
    "$("$JQ" -r '.policy.network | "\(.mode) \(.enforced_by)"' <<<"$pol")" "allowlist proxy"
  is "$mode allowlist: ... net-connections and net-egress enforced by the proxy" \
    "$("$JQ" -r '.policy.limits | "\(.["net-connections"].enforced_by) \(.["net-egress"].enforced_by)"' <<<"$pol")" \
    "proxy proxy"
  is "$mode allowlist: the effective list is the request within the profile's" \
    "$("$JQ" -r '[.policy.network.allow[] | "\(.entry)/\(.origin)"] | join(" ")' <<<"$pol")" \
    "allowed.test:7007/allowed-tools allowed.test:8080/manifest pypi.test:8080/manifest dns-only.test:8080/manifest loop.test:8080/manifest self.test:7007/manifest"
  is "$mode allowlist: what falls outside is dropped with a warning each" \
    "$("$JQ" -r 'select(.event == "warning" and .source == "policy") | .message' "$A" | grep -c 'is not permitted by the profile or skillrun.conf; dropped')" 2
  is "$mode allowlist: the hosts file is on the record" \
    "$("$JQ" -r .policy.network.hosts_file <<<"$pol")" "$W/hosts"

  is "$mode allowlist: audited: the allowlisted fetch, its address and bytes" \
    "$(connf '.host == "allowed.test" and .port == 8080 and .protocol == "http"' \
      '"\(.decision) \(.reason) \(.address) \(.address_class) \(.bytes_in > 0)"')" \
    "allowed closed 11.0.0.2 public true"
  is "$mode allowlist: audited: the name not on the list" \
    "$(conn '.host == "other.test"' | "$JQ" -r '"\(.decision) \(.reason)"' | sort -u)" \
    "denied not_allowlisted"
  is "$mode allowlist: audited: 127.0.0.1 refused, with its class" \
    "$(connf '.host == "loop.test"' '"\(.decision) \(.reason) \(.address) \(.address_class)"')" \
    "denied blocked_address 127.0.0.1 loopback"
  is "$mode allowlist: audited: the host's own address refused" \
    "$(connf '.host == "self.test"' '"\(.decision) \(.reason) \(.address) \(.address_class)"')" \
    "denied blocked_address 11.0.0.1 host"
  check "$mode allowlist: audited: pip's requests to the index" \
    test "$(conn '.host == "pypi.test" and .decision == "allowed"' | wc -l)" -ge 2
  sum=$(event "$A" network_summary)
  is "$mode allowlist: network_summary counts every connection, complete" \
    "$("$JQ" -r '"\(.connections) \(.denied) \(.events_suppressed) \(.complete)"' <<<"$sum")" \
    "$(conn true | wc -l) $(conn '.decision == "denied"' | wc -l) 0 true"
  is "$mode allowlist: ... before the run is collected" \
    "$("$JQ" -r 'select(.event == "network_summary" or (.event == "state_changed" and .state == "collecting")) | .event' "$A" | tr '\n' ' ')" \
    "network_summary state_changed "

  check "$mode allowlist: the proxy process was seen" test -n "$PROXY"
  if [ "$mode" = root ]; then want_uid=$("$JQ" -r .sandbox_ids.uid <<<"$pol"); else want_uid=$USER_UID; fi
  is "$mode allowlist: the proxy ran as uid $want_uid (the sandbox user's host id)" \
    "$(awk '$1 == "Uid:" {print $2 $3 $4 $5}' <<<"$PROXY_STATUS")" "$want_uid$want_uid$want_uid$want_uid"
  is "$mode allowlist: ... with no capability and no_new_privs" \
    "$(status_field CapEff) $(status_field CapPrm) $(status_field NoNewPrivs)" \
    "0000000000000000 0000000000000000 1"
  check "$mode allowlist: nothing of the run is left: not the proxy, not init" gone

  # --------------------------------------------- a range unblocks 127.0.0.1
  run $mode "$mode-loop" "$W/loop.profile" "$NB" -- curl -sS --max-time 15 http://loop.test:8080/hello.txt
  is "$mode allowlist: with 127.0.0.0/8:8080 in the profile, 127.0.0.1 answers" \
    "$rc $(cat "$OUT")" "0 hello from 127.0.0.1"
  is "$mode allowlist: ... audited as allowed, loopback" \
    "$(connf '.host == "loop.test"' '"\(.decision) \(.address_class)"')" "allowed loopback"

  # ------------------------------------------------------------ limits
  run $mode "$mode-limits" "$W/allow.profile" "$LB" -- /workspace/inputs/bundle/scripts/limits.sh
  is "$mode limits: the run succeeds" "$rc" 0
  is "$mode limits: one connection held" "$(val held)" ok
  is "$mode limits: net-connections 1 refuses a second (503, the proxy is busy)" \
    "$(val second)" "503 connection-limit"
  is "$mode limits: net-egress 64K cuts a 1 MiB upload at exactly 64K" \
    "$(connf '.reason == "egress_limit" and .decision == "allowed"' '"\(.bytes_out)"')" 65536
  is "$mode limits: ... and refuses the next connection" "$(val after)" "403 egress-limit"
  is "$mode limits: limit_exceeded egress, at the manifest's 64K" \
    "$("$JQ" -r 'select(.event == "limit_exceeded") | "\(.limit) \(.limit_value)"' "$A")" "egress 65536"
  is "$mode limits: the manifest set both" \
    "$(event "$A" policy_resolved | "$JQ" -r '.policy.limits | "\(.["net-connections"].value)/\(.["net-connections"].source) \(.["net-egress"].value)/\(.["net-egress"].source)"')" \
    "1/manifest 65536/manifest"
  check "$mode limits: audited: connection_limit" test -n "$(conn '.reason == "connection_limit"')"
  check "$mode limits: audited: egress_limit" test -n "$(conn '.reason == "egress_limit"')"
  check "$mode limits: nothing of the run is left" gone

  run $mode "$mode-closes" "$W/allow.profile" "$CB" -- /workspace/inputs/bundle/scripts/closes.sh
  is "$mode closes: the run succeeds" "$rc" 0
  is "$mode closes: a connection the skill closed does not count against net-connections 4 (4 threads, 1,200 refusals in turn)" \
    "$(val closes)" "403*1200"
  is "$mode closes: ... and the listed one after them is let through" "$(val after)" "200 -"

  # ------------------------------------------------------------ host
  run $mode "$mode-host" "$W/host.profile" "$HB" -- /workspace/inputs/bundle/scripts/host.sh "$ABSTRACT"
  is "$mode host: the run succeeds" "$rc" 0
  is "$mode host: the host's abstract unix socket stays closed" "$(val abstract)" EPERM
  is "$mode host: ... and heard nothing" "$(cat "$W/abstract.log")" ""
  is "$mode host: DNS resolves (the test's DNS server, through the host's resolv.conf)" \
    "$(val getent)" "11.0.0.2 dns-only.test"
  is "$mode host: nsswitch asks DNS" "$(val nsswitch)" "hosts: files dns"
  is "$mode host: the host's resolv.conf is bound in" "$(val resolv)" "nameserver 127.0.0.1"
  is "$mode host: the host's network is reached directly" "$(val direct)" connected
  is "$mode host: no proxy variables" "$(val proxy_env)" 0
  is "$mode host: policy_resolved: host, the abstract sockets scoped by Landlock" \
    "$(event "$A" policy_resolved | "$JQ" -r '.policy.network | "\(.mode) \(.enforced_by)"')" "host landlock-scope"
  check "$mode host: every host run writes a warning that says so" \
    grep -q "network host: the sandbox shares the host's network namespace" \
    <<<"$("$JQ" -r 'select(.event == "warning" and .source == "network") | .message' "$A")"
  is "$mode host: no proxy, no network events" "$(conn true; event "$A" network_summary)" ""

  # ------------------------------------------------------------ deny
  run $mode "$mode-deny" default "$NB" -- /workspace/inputs/bundle/scripts/host.sh "$ABSTRACT"
  is "$mode deny: the run succeeds" "$rc" 0
  is "$mode deny: the skill's request is not granted by the default profile" \
    "$(event "$A" policy_resolved | "$JQ" -r '.policy.network | "\(.mode) \(.enforced_by) \(.allow | length)"')" \
    "deny netns 0"
  is "$mode deny: a direct connection fails" "$(val direct)" ENETUNREACH
  is "$mode deny: no DNS" "$(val getent) $(val nsswitch)" " hosts: files"
  is "$mode deny: no proxy variables" "$(val proxy_env)" 0
  is "$mode deny: no proxy, no network events" "$(conn true; event "$A" network_summary)" ""
done

# ------------------------------------------------------------ fail closed
# A hosts file that another user could rewrite would route the skill's
# connections: the run stops before the skill starts, for both callers.
cp "$W/hosts" "$W/hosts.nobody"
chown "$NOBODY" "$W/hosts.nobody"
printf 'network-hosts %s\n' "$W/hosts.nobody" >"$W/bad.conf"
chmod 644 "$W/bad.conf"
for mode in $MODES; do
  run $mode "$mode-badhosts" "$W/allow.profile" "$NB" "$W/bad.conf" -- /bin/echo ran
  is "$mode: a hosts file owned by uid $NOBODY stops the run (exit 125)" "$rc" 125
  is "$mode: ... config_invalid, naming it" \
    "$(event "$A" error | "$JQ" -r '"\(.reason) \(.message | contains("hosts.nobody"))"')" "config_invalid true"
  is "$mode: ... before the skill ran" "$(cat "$OUT")" ""
done

# Every run's audit verifies, and its run directory's copy is the same.
for f in "$WS_root"/*.audit "$WS_user"/*.audit; do
  id=$(basename "$f" .audit)
  check "$id: the audit stream verifies" audit_ok "$f"
  copy=$(dirname "$f")/default/$id/audit.jsonl
  [ -f "$copy" ] && check "$id: the run directory's audit.jsonl is the same" cmp -s "$f" "$copy"
done
finish
