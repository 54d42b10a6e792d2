# SPDX-License-Identifier: GPL-2.0-or-later
"""ignore-signals.py COMMAND...: run COMMAND with signals ignored and blocked.

A caller's signal state that execve(2) keeps: SIGHUP, SIGTERM and SIGUSR1
ignored, and on x86-64 also the real-time signals 32, 33, 34 and 64
(glibc's sigaction() refuses 32 and 33, which it keeps for its threads;
rt_sigaction(2) does not), SIGUSR2 and SIGRTMIN+2 blocked.  Python also
ignores SIGPIPE and SIGXFSZ itself.  The attack suite's caller, whose
state the skill must not inherit (attacker.c, case signals).
"""
import ctypes
import os
import platform
import signal
import sys

for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGUSR1):
    signal.signal(sig, signal.SIG_IGN)
if platform.machine() == "x86_64":
    libc = ctypes.CDLL(None, use_errno=True)
    act = ctypes.create_string_buffer(64)  # a kernel sigaction, zeroed
    act[0:8] = (1).to_bytes(8, "little")  # SIG_IGN; no flags, empty mask
    for sig in (32, 33, 34, 64):
        if libc.syscall(13, sig, act, None, 8) != 0:  # rt_sigaction
            sys.exit("rt_sigaction %d: %s" % (sig, os.strerror(ctypes.get_errno())))
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2, signal.SIGRTMIN + 2})
os.execvp(sys.argv[1], sys.argv[1:])
