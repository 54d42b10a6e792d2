# SPDX-License-Identifier: GPL-2.0-or-later
#
# skillrun strict profile: for skills from unknown publishers.  Every
# fallback is refused: no cgroup means no run, a SKILL.md that skillrun would
# only warn about is refused, and the limits are tighter than the defaults.
# See skillrun.profile(5).

# Network denied, procfs (CPython and most runtimes read /proc/self),
# /etc/alternatives, localtime and the CA bundle.
include default

strict yes
# Instead of the default `cgroup prefer`: no rlimit fallback.
cgroup require

memory 256M
cpu-seconds 30
timeout 2m
pids 128
log-cap 1M
tmp-size 32M
scratch-size 128M
outputs-size 64M
nofile 256

# Only bundles with a valid signed statement run (skillrun(1), SIGNED
# BUNDLES); which tiers may run is the platform's choice (skillrun.conf).
require-signature yes
