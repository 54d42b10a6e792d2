/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_error;
struct sr_net_sysctl;
struct sr_sandbox;

/*
 * The skill process, forked by init before init builds the mounts, so the
 * two run side by side.  First what needs no file system: signals, session,
 * stdout/stderr, ids, lo (without the egress proxy), capabilities,
 * no_new_privs, other fds, rlimits.  Then it sends a byte on go_fd (a
 * stream socket: init reports the sandbox ready only after it) and waits
 * for init's byte there (the root, /dev, /proc, network and hostname are
 * in place; EOF means init failed and has reported it), and
 * finishes inside the sandbox's root: stdin, cwd, seccomp, exec.  Any
 * failure is sent to the supervisor over the sync socket.  sysctl: how
 * the network namespace it makes gets its sysctls (net.h; fd -1: no
 * /proc/sys could be written, init has warned).
 */
_Noreturn void sr_child_exec(const struct sr_sandbox *sb, int go_fd,
                             const struct sr_net_sysctl *sysctl);
