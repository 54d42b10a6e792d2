#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Attack regression suite, the host's terminals: every devpts instance
# draws on one host-wide count (kernel.pty.max less kernel.pty.reserve,
# 3072 by default), and each terminal holds kernel memory that no limit of
# the run counts.  A skill could open them all and leave the host's users
# and containers none (500 pairs also held 22 MB of unreclaimable kernel
# memory under a 64 MiB limit).  The sandbox's devpts now has max=32.  The
# skill tries 200 (no more, so that the test cannot take the host's all).
# As root and as an unprivileged user.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/common.sh"

before=$(cat /proc/sys/kernel/pty/nr)
for mode in $MODES; do
  skill "$mode" -- python3 -c '
import errno, os
fds, err = [], "none"
try:
    while len(fds) < 200:
        fds.append(os.openpty())
except OSError as e:
    err = errno.errorcode.get(e.errno, str(e.errno))
print("ptys=%d err=%s" % (len(fds), err))'
  run_ok "$mode" "the pty opener"
  is "$mode: the skill gets 32 terminals, then ENOSPC" "$(tail -n 1 "$OUT" 2>/dev/null)" \
    "ptys=32 err=ENOSPC"
done
# The skill's terminals closed with its sandbox (a slack of a few for
# other users' sessions opened meanwhile).
after=$(cat /proc/sys/kernel/pty/nr)
check "the host's terminals in use: $before before, $after after" test "$after" -le $((before + 4))
host_unchanged pty-cap
finish
