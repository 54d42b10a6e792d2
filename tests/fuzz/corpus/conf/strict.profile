# SPDX-License-Identifier: GPL-2.0-or-later
#
# skillrun strict profile: for skills from unknown publishers.  Every
# fallback is refused: no cgroup means no run, a SKILL.md that skillrun would
# only warn about is refused, and the limits are tighter than the defaults.
# See skillrun.profile(5).
#
# It does not include the default profile (scalar keys may appear only once
# per profile), so the shared settings are repeated here.

strict yes
network deny
cgroup require
# Kept as procfs: CPython and most runtimes read /proc/self.
proc procfs

memory 256M
cpu-seconds 30
timeout 2m
pids 128
log-cap 1M
tmp-size 32M
scratch-size 128M
outputs-size 64M
nofile 256

bind-ro-try /etc/alternatives
etc-file-try localtime
etc-file-try ssl/certs/ca-certificates.crt
