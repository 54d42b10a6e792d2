/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "init.h"

/*
 * The skill process: narrows privileges in a fixed order (session, fds 0-2,
 * ids, capabilities, no_new_privs, other fds, rlimits, seccomp) and execs the
 * command.  Any failure is sent to the supervisor over the sync socket.
 */
_Noreturn void sr_child_exec(const struct sr_sandbox *sb);
