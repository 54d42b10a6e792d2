/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

struct sr_error;

/*
 * Landlock, the layer under the mounts (skillrun(1) SECURITY): the skill
 * may write only where the sandbox view is writable, and with ABI 6 its
 * abstract unix sockets and signals are scoped to the sandbox.
 */

/* The Landlock ABI version the kernel offers: 0 without Landlock (not
 * built, disabled at boot, or too old). */
int sr_landlock_abi(void);
/* The first ABI with scoping of abstract unix sockets and signals (Linux
 * 6.12): what `strict` requires. */
#define SR_LANDLOCK_ABI_SCOPE 6

/* What a ruleset of ABI abi handles and scopes (bits of the kernel's
 * uapi; 0 when abi is 0). */
uint64_t sr_landlock_handled_fs(int abi);
uint64_t sr_landlock_scoped(int abi);

/* The rules, in the sandbox view: each path (a directory) and what may be
 * written below it.  The tmpfs entries of the view come first, then
 * /dev/shm, then /dev and /proc (existing files only: device nodes,
 * /proc/self/...). */
struct sr_landlock_rule {
  const char *path;
  uint64_t access; /* before masking with sr_landlock_handled_fs */
};
/* Fills rules (room for max) and returns how many; 0 if max is too small. */
size_t sr_landlock_rules(struct sr_landlock_rule *rules, size_t max);
#define SR_LANDLOCK_RULES_MAX 16

/* The names of the rights in mask, and of the scopes, for the record:
 * "write_file", "make_reg"... (NULL-terminated list in names, at most max
 * - 1 of them). */
size_t sr_landlock_fs_names(uint64_t mask, const char **names, size_t max);
size_t sr_landlock_scope_names(uint64_t mask, const char **names, size_t max);

/*
 * Confines the calling process and its future children, in the sandbox's
 * root: a ruleset of ABI abi (handled rights and scopes as above) with the
 * rules of sr_landlock_rules, then landlock_restrict_self.  Needs
 * no_new_privs.  abi 0: nothing.  Failure: sr_error_layer("landlock").
 */
int sr_landlock_apply(int abi, struct sr_error *err);
