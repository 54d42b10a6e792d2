/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_error;
struct sr_sandbox;

/* The Landlock ABI version the kernel offers: 0 without Landlock (not
 * built, disabled at boot, or too old). */
int sr_landlock_abi(void);
/* The first ABI with scoping of abstract unix sockets (Linux 6.12). */
#define SR_LANDLOCK_ABI_SCOPE 6

/*
 * Confines the calling process and its future children to a Landlock
 * domain that handles no file or network access but scopes abstract unix
 * sockets: a connect to one made outside the domain (the host's, in a run
 * that shares the host's network namespace) fails with EPERM.  Needs
 * no_new_privs.  Failure: sr_error_layer("landlock", ...).
 */
int sr_landlock_scope_abstract_unix(struct sr_error *err);

/*
 * The skill process, forked by init before init builds the mounts, so the
 * two run side by side.  First what needs no file system: signals, session,
 * stdout/stderr, ids, capabilities, no_new_privs, other fds, rlimits.  Then
 * it waits for init's byte on go_fd (the root, /dev, /proc, network and
 * hostname are in place; EOF means init failed and has reported it), and
 * finishes inside the sandbox's root: stdin, cwd, seccomp, exec.  Any
 * failure is sent to the supervisor over the sync socket.
 */
_Noreturn void sr_child_exec(const struct sr_sandbox *sb, int go_fd);
