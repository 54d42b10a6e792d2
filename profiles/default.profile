# SPDX-License-Identifier: GPL-2.0-or-later
#
# skillrun default profile: what a careful bubblewrap user gives an
# untrusted script.  It is compiled into skillrun, so `-p default` (or no
# -p at all) always means exactly this file.  See skillrun.profile(5).
#
# Limits are not set here: the platform caps apply as they are (built-in, or
# lowered/raised by the administrator in skillrun.conf).  A profile can only
# lower them.  The built-in caps are:
#   memory 512MiB        cpu-seconds 60       timeout 5m       pids 512
#   log-cap 10MiB        tmp-size 64MiB       scratch-size 256MiB
#   outputs-size 256MiB  outputs-files 10000  inputs-size 256MiB
#   inputs-max-size 1TiB nofile 1024          kill-grace 5s

# No network: the sandbox has only a loopback interface.  A profile must say
# `network allowlist` (with `network-allow` lines) or `network host` before
# a skill's SKILL.md may ask for that (skillrun.profile(5), NETWORK).
network deny

# No `cgroup` line: the mode is skillrun.conf's `cgroup`, else the built-in
# `cgroup prefer`: a cgroup for memory, CPU-seconds and pids when one can be
# created, otherwise rlimits and the supervisor (recorded in the audit
# stream as "enforced_by").  Saying `cgroup prefer` here would be raised,
# with a warning on every run, under an administrator's `cgroup require`.

# A fresh procfs of the sandbox's pid namespace, with sensitive paths masked.
proc procfs

# Debian's /usr/bin alternatives (python3, awk, editor...) are symlinks that
# go through /etc/alternatives.
bind-ro-try /etc/alternatives

# Host files copied into the synthesized /etc (passwd, group, hosts and
# nsswitch.conf are written by skillrun itself).
etc-file-try localtime
etc-file-try ssl/certs/ca-certificates.crt
