/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_error;

/*
 * Drops every capability of the calling process (libcap): locks the
 * securebits (NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE,
 * each with its _LOCKED bit) while CAP_SETPCAP is still held, empties the
 * bounding set, clears ambient, then sets permitted, effective and
 * inheritable to empty.  Then reads the sets and the securebits back
 * (cap_get_proc, PR_GET_SECUREBITS; caps.c says why not the bounding and
 * ambient sets one by one) and fails if anything is left.  Failure:
 * sr_error_layer("capabilities", ...).
 */
int sr_caps_drop_all(struct sr_error *err);

/*
 * As root (euid 0): 0 when the effective set holds CAP_SETUID and
 * CAP_SETGID, which root's id maps and its leaving of its supplementary
 * groups need; else an error (reason resources) saying so, rather than a
 * failed write of uid_map later.  0 for an ordinary caller.
 */
int sr_caps_check_root(struct sr_error *err);

/* Sets no_new_privs and reads it back.  Failure: layer "no_new_privs". */
int sr_set_no_new_privs(struct sr_error *err);

/*
 * A real-time policy inherited from the caller (chrt -f skillrun ...) is
 * the supervisor's, not the skill's, nor that of a helper doing the
 * skill's bidding (the egress proxy): they run under the default policy,
 * at the caller's nice value.  So is the real-time I/O class (ionice -c 1,
 * which the skill could not take itself: it takes CAP_SYS_NICE), under
 * which their reads and writes would go before the host's: they get the
 * class their nice value gives.  Lowering one's own policy or I/O class
 * needs no privilege.  Failure: layer "rlimits".
 */
int sr_drop_realtime(struct sr_error *err);
