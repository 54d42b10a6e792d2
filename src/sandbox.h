/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "mount.h"

struct sr_enforcement;
struct sr_policy;
struct sr_seccomp;

/* The most cgroup v1 leaves init joins (memory, pids, cpuacct). */
#define SR_SANDBOX_CG_JOIN_MAX 4
/* The skill's RLIMIT_SIGPENDING at most (child.c; skillrun(1), SECURITY). */
#define SR_SIGPENDING_MAX 1024

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
  /* strict, and the host's net.core.tstamp_allow_data is not 0: a kernel
   * that cannot set it in the namespace is an error (net.h). */
  bool tstamp_required;
  /* cgroup v1: each leaf's `tasks` file, opened by the supervisor, which
   * init writes itself into before it forks anything (sr_cgroup_open_join),
   * and the leaf's path for messages; n_cg_join 0 otherwise. */
  int cg_join_fd[SR_SANDBOX_CG_JOIN_MAX];
  const char *cg_join_path[SR_SANDBOX_CG_JOIN_MAX];
  size_t n_cg_join;
  /* Network allowlist: init makes the egress proxy's listeners on this
   * port of lo and waits for the supervisor's proxy; 0: none. */
  uint16_t proxy_port;
};

/* Who makes the sandbox's network namespace: without the egress proxy,
 * the skill's process, while init builds the mounts (unshare(2), then init
 * joins it); with the proxy, clone(2) (init makes the listeners in it
 * before anything else runs). */
static inline bool sr_sandbox_child_netns(const struct sr_sandbox *sb) {
  return sb->new_netns && !sb->proxy_port;
}
