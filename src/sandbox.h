/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "mount.h"

struct sr_enforcement;
struct sr_policy;
struct sr_seccomp;

/*
 * Everything the sandbox side (init and the skill's process) needs, filled
 * by the supervisor before clone.  clone without CLONE_VM gives the new
 * process its own copy of this and of all it points to, so nothing the
 * sandbox side does reaches back into the supervisor.
 */
struct sr_sandbox {
  const struct sr_policy *policy;
  const struct sr_enforcement *enf; /* which limits rlimits enforce */
  const struct sr_seccomp *seccomp;
  struct sr_mount_plan mount;
  char *const *argv; /* the command, argv[0] as given */
  char *const *envp; /* built from scratch */
  int sync_fd;       /* init's end of the sync socket */
  int stdout_w;      /* log pipes, write ends */
  int stderr_w;
  int stdin_r; /* --stdin: the pipe's read end, else -1 (/dev/null) */
  bool new_netns;
  /* Network allowlist: init makes the egress proxy's listeners on this
   * port of lo and waits for the supervisor's proxy; 0: none. */
  uint16_t proxy_port;
};
