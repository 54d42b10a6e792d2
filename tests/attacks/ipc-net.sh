#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, IPC and network classes: abstract and path unix
# sockets of the host, SysV shared memory, message queues and semaphores and
# a POSIX message queue created on the host, and network reach with the
# network denied (the host's 127.0.0.1, its LAN address, the Internet), and
# socket protocols beyond TCP and UDP (UDP-Lite, MPTCP, SCTP: issue 14,
# item 8; netlink, whose queued replies held gigabytes no cgroup saw),
# huge pages (hugetlb: mmap, memfd_create, shmget), which no memory
# cgroup here charges either, and multicast group memberships on lo (a
# record on the socket and one on the device for each, uncharged too),
# and IPv6 flow labels (4096 for the whole host: a skill took 3072,
# lingering past its sockets, and no other user could make one).
# As root and as an unprivileged user; every case BLOCKED, the host
# listeners got nothing and the host IPC objects are untouched.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

KEY=$((0x5a000000 + ($$ & 0xffff)))
MQ=/skillrun-attack-$$
ABSTRACT=skillrun-attack-$$
LISTENER_PID=
cleanup_bait() {
  [ -n "$LISTENER_PID" ] && kill "$LISTENER_PID" 2>/dev/null && wait "$LISTENER_PID" 2>/dev/null
  "$ATTACKER" host-ipc remove "$KEY" >/dev/null 2>&1
  "$ATTACKER" host-mq remove "$MQ" >/dev/null 2>&1
  cleanup
}
trap cleanup_bait EXIT

IPC_IDS=$("$ATTACKER" host-ipc create "$KEY") || skip_all "cannot create host SysV IPC bait"
"$ATTACKER" host-mq create "$MQ" || skip_all "cannot create the host mqueue bait"
# The unprivileged run must be denied by the namespaces, not by modes.
chmod 666 "/dev/mqueue$MQ" 2>/dev/null

"$PYTHON3" "$TOP_SRCDIR/tests/attacks/listener.py" "$T/port" "$T/connections" \
  "$T/host.sock" "$ABSTRACT" &
LISTENER_PID=$!
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
[ -s "$T/port" ] || skip_all "the host listener did not start"
PORT=$(cat "$T/port")
: >"$T/connections"

# The host's first non-loopback IPv4 address, when it has one.
HOST_IP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ sub(/\/.*/, "", $4); print $4; exit }')

cases=(
  "abstract:$ABSTRACT" abstract:/tmp/.X11-unix/X0 "unix_path:$T/host.sock"
  unix_path:/run/dbus/system_bus_socket unix_path:/var/run/docker.sock
  unix_path:/run/systemd/private unix_path:/run/containerd/containerd.sock
  "tcp:127.0.0.1:$PORT" tcp:1.1.1.1:53 tcp:10.0.2.2:22 raw sockproto hugetlb
  mcast flowlabel "sysv:$IPC_IDS" "mq:$MQ"
)
[ -n "$HOST_IP" ] && cases+=("tcp:$HOST_IP:$PORT")

# Make sure the bait really answers from the host side.
check "the host abstract socket listener answers on the host" \
  "$PYTHON3" -c "import socket; s=socket.socket(socket.AF_UNIX); s.connect('\0$ABSTRACT')"
check "the host TCP listener answers on the host" \
  "$PYTHON3" -c "import socket; socket.create_connection(('127.0.0.1', $PORT))"
sleep 0.2
: >"$T/connections"

for mode in $MODES; do
  attack $mode -- "${cases[@]}"
  run_ok $mode "IPC and network attacks"
  blocked $mode "${cases[@]}"
  sleep 0.2 # a datagram that got through would be logged by now
  is "$mode: the host listeners got no connection or datagram" "$(cat "$T/connections")" ""
  check "$mode: the host SysV shm, queue and semaphore are untouched" \
    "$ATTACKER" host-ipc check "$KEY"
  check "$mode: the host POSIX mqueue is untouched" "$ATTACKER" host-mq check "$MQ"
  host_unchanged $mode
done

# --network deny is the default; say it explicitly too.
attack "$ANY_MODE" --network deny -- "tcp:127.0.0.1:$PORT" raw
blocked "$ANY_MODE, --network deny" "tcp:127.0.0.1:$PORT" raw
finish
