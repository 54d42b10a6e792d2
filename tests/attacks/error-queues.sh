#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, memory held on sockets' error queues.  What the
# kernel queues on a socket's error queue (sock_queue_err_skb) is charged
# to the socket's receive buffer alone, to no memory cgroup, and the
# supervisor does not see it either.  A skill filled one socket after
# another, each with the largest receive buffer the host allows: local
# errors (IP_RECVERR, IPV6_RECVERR: every sendto of a datagram too large
# for UDP queues one) held 2 GB on 240 sockets under --memory 64M in a run
# that succeeded; TX timestamps over lo (SO_TIMESTAMPING, or asked per
# message in a control message, on UDP or on a loopback TCP connection)
# each queue a clone of the datagram or write, data and all: 40 sockets
# held 275 MB.  The filter now refuses setsockopt IP_RECVERR, IPV6_RECVERR
# and SO_TIMESTAMPING (EPERM), and the sandbox's network namespace has
# net.core.tstamp_allow_data=0, so that the kernel drops the TX timestamps
# that would carry data, those asked per message included.  That sysctl
# is per network namespace only since Linux 6.13: before, it is the
# host's, and the per-message cases (tscmsg, tcpts) are only reported.
# MSG_ZEROCOPY's completion notices are option memory on the error queue,
# charged to no cgroup either: kept from merging (a send that fails takes
# its id back, and raced against good ones makes the ids repeat), they
# held 446 MiB on 3600 UDP sockets under --memory 64M; SO_ZEROCOPY, without
# which the kernel ignores MSG_ZEROCOPY, is refused now.
# Every case must be blocked or its run stopped as oom, in every mode.
# Ordinary UDP on lo (a datagram sent and received) still works.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

no_attacker_left() { [ -z "$(test_pids '^/workspace/inputs/bundle/attacker')" ]; }

# The file exists in a fresh network namespace only where the sysctl is
# that namespace's own.
pernet=no
unshare -Urn test -e /proc/sys/net/core/tstamp_allow_data 2>/dev/null && pernet=yes

memory_runs

for run in "${runs[@]}"; do
  run_mode "$run"

  # 128 MiB on error queues against 64 MiB, one case a run (zerocopy: 96
  # MiB, some 770 sockets of 128 KiB, within one process's descriptors).
  for c in errq:128 errq6:128 tsopt:128 tscmsg:128 tcpts:128 zerocopy:96; do
    attack "$mode" "${opts[@]}" --memory 64M --timeout 60s -- "$c"
    by=$(field "$AUDIT" policy_resolved '.policy.limits.memory.enforced_by')
    status=$(field "$AUDIT" execution_completed .status)
    line=$(result "$c")
    c=${c%%:*}
    case "$c:$pernet:$line" in
    tscmsg:no:ESCAPED* | tcpts:no:ESCAPED*)
      diag "$run: $by: $c: net.core.tstamp_allow_data is the host's before" \
        "Linux 6.13 (this is $(uname -r)), the sandbox cannot refuse TX" \
        "timestamps asked per message: ${line#ESCAPED:}"
      ;;
    *:ESCAPED*)
      fail "$run: $by: $c: nothing held on error queues past the limit"
      diag "  got: '$line' (skillrun exit $rc, status $status)"
      ;;
    *:BLOCKED:*) pass "$run: $by: $c: ${line#BLOCKED:}" ;;
    *)
      is "$run: $by: $c: no report, the run was stopped as oom (exit $rc)" \
        "$status" oom
      ;;
    esac
    check "$run: $by: $c: the audit stream verifies" audit_ok "$AUDIT"
    check "$run: $by: $c: no process of the run is left" no_attacker_left
  done

  # Not an attack: a datagram sent and received on the sandbox's lo.
  skill "$mode" "${opts[@]}" --timeout 30s -- /usr/bin/python3 -c '
import socket
a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
a.bind(("127.0.0.1", 0))
a.settimeout(10)
b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
b.sendto(b"udp-on-lo", a.getsockname())
print(a.recv(64).decode())'
  run_ok "$run" "UDP on lo"
  is "$run: ... the datagram arrived" "$(cat "$OUT" 2>/dev/null)" udp-on-lo
done
finish
