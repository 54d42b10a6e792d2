#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, what the egress proxy holds for a skill outside
# the run's limits.  The proxy's memory is not the run's cgroup's.
# - Socket buffers: a skill that opened tunnels to a sender and never read
#   (its own receive buffer set small) had the sender's data pile up in
#   the proxy's two sockets of each tunnel, which the kernel's autotuning
#   grew to some 3.7 and 3.9 MiB: 64 tunnels held 490 MiB of the host's
#   memory in a run with a 64 MiB limit, which ended succeeded with a
#   memory peak of 5 MB.  The proxy's sockets now have fixed buffers.
# - Connections after the run: the proxy closed a tunnel whose peer had
#   not taken what the skill sent, and the kernel went on delivering it
#   (and kept the connection) for minutes after skillrun had returned.
#   A tunnel the run's end cuts is now reset, and so is one that does not
#   end in order (here: the proxy's idle timeout, through the test's
#   driver of the proxy, tests/proxy-driver); one the egress budget cuts
#   is half closed (what it queued is within the budget and still goes)
#   and reset at the run's end.  A tunnel the proxy holds when skillrun is
#   killed (SIGKILL: the proxy dies with it, without its shutdown) is
#   reset too: it was closed in order, and its queue went on for minutes.
# As root and as an unprivileged user, in private network namespaces
# (root only), like egress.sh.
set -u
. "$(dirname "$0")/../integration/netns.sh"
private_netns "the test builds its own network in private namespaces" \
  unshare nsenter ip ss python3 -- "$@"
. "$(dirname "$0")/../integration/lib.sh"
sandbox_possible || skip_all "user namespaces are not available"

PY=$("$PYTHON3" -c 'import sys; print(sys.executable)')
W=$(tmpdir)
server_netns 11.0.0.2

# The sender (7001: writes zeros to whoever connects, until they go) and
# the sink (7002: takes connections and never reads from them).
cat >"$W/servers.py" <<'EOF'
import socket, sys, threading

def flood(c):
    try:
        while True:
            c.sendall(b"\0" * 65536)
    except OSError:
        pass

def sink(c):
    threading.Event().wait()

def serve(port, fn):
    lsock = socket.socket()
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind(("11.0.0.2", port))
    lsock.listen(64)
    while True:
        c, _ = lsock.accept()
        threading.Thread(target=fn, args=(c,), daemon=True).start()

threading.Thread(target=serve, args=(7001, flood), daemon=True).start()
serve(7002, sink)
EOF
"${srvns[@]}" "$PY" "$W/servers.py" >"$W/servers.log" 2>&1 &
bg_pids+=($!)
wait_ports "11.0.0.2 7001" "11.0.0.2 7002"

printf '11.0.0.2 flood.test sink.test\n' >"$W/hosts"
printf 'network-hosts %s\n' "$W/hosts" >"$W/skillrun.conf"
cat >"$W/allow.profile" <<'EOF'
include default
network allowlist
network-allow flood.test:7001 sink.test:7002
EOF
# Less than the sink's connection takes before it stalls (the sink's
# receive buffer and the proxy's: some 1 MB).
{ cat "$W/allow.profile" && echo 'net-egress 200000'; } >"$W/cut.profile"

B=$W/buffers-skill
mkdir -p "$B"
cat >"$B/SKILL.md" <<'EOF'
---
name: buffers-skill
description: Leaves what it is sent in the egress proxy.
metadata:
  sandbox.network: allowlist
  sandbox.network-allow: "flood.test:7001 sink.test:7002"
---
EOF
cat >"$B/hold.py" <<'EOF'
import socket, sys, time

def tunnel(host, port, rcvbuf=0):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", 3128))
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" %
              (host, port, host, port))
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            sys.exit("the proxy closed the tunnel")
        head += b
    if b" 200" not in head.split(b"\r\n")[0]:
        sys.exit("refused: %r" % head)
    return s

if sys.argv[1] == "flood":
    tunnels = [tunnel(b"flood.test", 7001, 4096) for _ in range(int(sys.argv[2]))]
    time.sleep(3)
    # The proxy's ends of the tunnels are in this network namespace: the
    # sockets on 127.0.0.1:3128 (hex 0C38); tx_queue, bytes not yet taken.
    worst = 0
    with open("/proc/net/tcp") as f:
        for line in f.read().splitlines()[1:]:
            fields = line.split()
            if fields[1].endswith(":0C38"):
                worst = max(worst, int(fields[4].split(":")[0], 16))
    print("proxy_send_queue_max=%d" % worst, flush=True)
    print("holding", flush=True)
    time.sleep(float(sys.argv[3]))
else:
    s = tunnel(b"sink.test", 7002)
    s.settimeout(2)
    sent = 0
    try:
        while True:
            sent += s.send(b"x" * 65536)
    except OSError:  # a timeout, or the tunnel cut
        pass
    print("sent=%d" % sent, flush=True)
    if sys.argv[2:]:
        time.sleep(float(sys.argv[2]))
EOF
chmod -R a+rX "$W"
WS_root=$(tmpdir)
WS_user=$(user_workspace)
KIB=1024

# run MODE ID ARG...: hold.py ARG... in a run, in the background; $pid, $A,
# $OUT.
start() {
  local mode=$1 id=$2 w
  shift 2
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  A=$w/$id.audit
  OUT=$w/default/$id/logs/stdout.log
  in_mode "$mode" "$SKILLRUN" --conf "$W/skillrun.conf" -p "$W/${PROFILE:-allow}.profile" \
    --workspace-root "$w" --execution-id "$id" --audit-file "$A" "$B" \
    -- python3 /workspace/inputs/bundle/hold.py "$@" >"$w/$id.stdout" 2>"$w/$id.err" &
  pid=$!
}
result() { awk -v k="$1=" 'index($0, k) == 1 { print substr($0, length(k) + 1); exit }' "$OUT"; }
# The largest receive queue of this side's connections to PORT (the
# proxy's sockets to the origin), in bytes.
origin_recv_max() {
  ss -tnH state established "( dport = :$1 )" | awk 'BEGIN { m = 0 } $1 > m { m = $1 } END { print m }'
}

# This side's sockets to the sink that $before (its local addresses then)
# does not list.
new_to_sink() {
  ss -tnH '( dport = :7002 )' | awk -v before="$before" '
    BEGIN { n = split(before, b, "\n"); for (i = 1; i <= n; i++) old[b[i]] = 1 }
    !($4 in old)'
}

skip_modes
for mode in $MODES; do
  start "$mode" "$mode-flood" flood 8 6
  wait_for "$OUT" holding
  worst=$(origin_recv_max 7001)
  tunnels=$(ss -tnH state established '( dport = :7001 )' | wc -l)
  is "$mode: a skill that never reads its 8 tunnels from a sender holds them" "$tunnels" 8
  check "$mode: ... and the proxy's socket to the sender queues at most 1 MiB ($((worst / KIB)) KiB)" \
    [ "$worst" -le $((1024 * KIB)) ]
  sq=$(result proxy_send_queue_max)
  check "$mode: ... so does its socket to the skill (${sq:-no report} bytes)" \
    [ "${sq:-$((2048 * KIB))}" -le $((1024 * KIB)) ]
  wait "$pid"
  is "$mode: ... the run succeeds" "$?" 0

  # The sockets to the sink before the run (wait_ports' own, in FIN-WAIT-2
  # until the kernel gives up on it: the sink never closes).
  before=$(ss -tnH '( dport = :7002 )' | awk '{ print $4 }')
  for cut in shutdown egress_limit; do
    PROFILE=allow
    [ "$cut" = egress_limit ] && PROFILE=cut
    start "$mode" "$mode-sink-$cut" sink
    wait "$pid"
    is "$mode, $cut: a skill that sends to a peer that never reads: the run succeeds" "$?" 0
    sent=$(result sent)
    check "$mode, $cut: ... having sent what the buffers took (${sent:-no report} bytes)" \
      [ "${sent:-0}" -gt 0 ]
    left=$("${srvns[@]}" ss -tnH state established '( sport = :7002 )' | wc -l)
    is "$mode, $cut: ... once skillrun has returned, the peer's connection is gone (reset)" "$left" 0
    mine=$(new_to_sink)
    is "$mode, $cut: ... and so is the proxy's (no socket to the peer in any state)" "$mine" ""
    is "$mode, $cut: ... the record says what cut it" \
      "$("$JQ" -r 'select(.event == "network_connect") | .reason' "$A")" "$cut"
  done
  PROFILE=allow

  # skillrun killed (SIGKILL: the OOM killer, a scheduler's last word)
  # while the skill's tunnel to the sink holds what the peer has not
  # taken: the proxy dies with it (PR_SET_PDEATHSIG), without its
  # shutdown, and its socket to the peer must reset all the same.
  start "$mode" "$mode-sink-killed" sink 60
  wait_for "$OUT" "sent="
  sup=$pid
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = skillrun ] ||
    read -r sup _ <<<"$(cat "/proc/$pid/task/$pid/children" 2>/dev/null)"
  kill -KILL "${sup:-$pid}"
  wait "$pid"
  for _ in $(seq 100); do
    [ -z "$(new_to_sink)" ] && break
    sleep 0.05
  done
  mine=$(new_to_sink)
  is "$mode, killed: once skillrun is gone, the proxy's socket to the peer is too" "$mine" ""
  left=$("${srvns[@]}" ss -tnH state established '( sport = :7002 )' | wc -l)
  is "$mode, killed: ... and the peer's connection (reset)" "$left" 0
  if [ "$mode" = user ]; then w=$WS_user; else w=$WS_root; fi
  in_mode "$mode" "$SKILLRUN" --gc --workspace-root "$w" >"$w/gc.out" 2>&1
  is "$mode, killed: --gc then closes the run" "$?" 0
  closed_ok "$mode, killed" "$w/default/$mode-sink-killed" abandoned
done

# The proxy alone (the test's driver, its listener in a namespace of its
# own), with an idle timeout of 1 s: a tunnel stalled by the sink is cut
# while the proxy goes on serving, and must not stay behind.
before=$(ss -tnH '( dport = :7002 )' | awk '{ print $4 }')
rm -f "$W/idle.info"
"$PROXY_DRIVER" serve --sandbox-netns --hosts "$W/hosts" --idle-ms 1000 \
  --uid "$NOBODY" --gid "$NOBODY" --allow sink.test:7002 --records "$W/idle.rec" --info "$W/idle.info" 2>"$W/idle.err" &
driver=$!
bg_pids+=("$driver")
for _ in $(seq 100); do
  [ -f "$W/idle.info" ] && break
  sleep 0.05
done
NS=$(sed -n 's/^netns_pid=//p' "$W/idle.info" 2>/dev/null)
if [ -z "$NS" ]; then
  fail "the proxy's driver did not start: $(cat "$W/idle.err")"
else
  # hold.py's sink through that proxy, then 3 s more with the tunnel open.
  nsenter --net="/proc/$NS/ns/net" -- "$PY" "$B/hold.py" sink 3 >"$W/idle.out" 2>&1
  is "idle timeout: the client's tunnel took data, then stalled" \
    "$(grep -c '^sent=[1-9]' "$W/idle.out")" 1
  left=$("${srvns[@]}" ss -tnH state established '( sport = :7002 )' | wc -l)
  is "idle timeout: ... the peer's connection is gone (reset) while the proxy serves on" "$left" 0
  mine=$(new_to_sink)
  is "idle timeout: ... and so is the proxy's" "$mine" ""
  kill -TERM "$driver"
  wait "$driver"
  is "idle timeout: ... the record says the idle timeout cut it" \
    "$("$JQ" -r 'select(.event == "network_connect") | .reason' "$W/idle.rec")" idle_timeout
fi

finish
