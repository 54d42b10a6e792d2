/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_sandbox;

/* Pid 1 of the new pid namespace: builds the sandbox, starts the skill,
 * reaps everything, forwards signals, reports the skill's status. */
_Noreturn void sr_init_main(const struct sr_sandbox *sb);
