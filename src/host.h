/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"

struct sr_enforcement;
struct sr_error;
struct sr_policy;

/*
 * What the host holds for one run while it lives: the sandbox user's host
 * ids (a locked uid-pool slot when skillrun runs as root) and the run's
 * cgroup leaf.  Acquired by the prepare stage, which also decides from them
 * what enforces each limit; released when nothing of the run is alive.
 */
struct sr_host {
  uid_t uid; /* the sandbox user's id on the host */
  gid_t gid;
  int uidpool_fd; /* locked uid-pool slot (root), -1 otherwise */
  struct sr_cgroup cgroup;
  /* The other runs' stale leaves are still to be collected (sr_host_gc),
   * below this parent (NULL: the default one). */
  bool gc_due;
  const char *gc_parent;
};

/* An empty record (fds -1), safe to pass to sr_host_done. */
void sr_host_init(struct sr_host *h);

/*
 * Picks the host ids (the caller's own as an ordinary user, a free uid-pool
 * slot as root, waiting a bounded time when all are taken), sets up the
 * cgroup leaf "TENANT.EXECUTION.ROOT" (v2, else v1; ROOT: 8 hex digits of
 * the workspace root's SHA-256) as the policy asks (`cgroup
 * require` or `strict`: no cgroup is an error, layer "cgroup"), and fills
 * *enf with what enforces each limit.  When no cgroup holds the memory,
 * pids and CPU limits (the supervisor's sampler and RLIMIT_NPROC do),
 * *fallback_why is set (malloc'd) to the reason, for the warning the
 * caller records; NULL when a cgroup enforces them.
 */
int sr_host_acquire(struct sr_host *h, const struct sr_policy *p,
                    const char *cgroup_parent, const char *root,
                    const char *tenant, const char *execution,
                    struct sr_enforcement *enf, char **fallback_why,
                    struct sr_error *err);

/*
 * Removes the leaves left by runs whose supervisor was killed (gc skips
 * locked, populated and young leaves): once per run whose policy asks for
 * a cgroup, the first time it is called.  The supervisor calls it once the
 * skill has started (sr_launch.while_running), off the way to it;
 * sr_host_done, for a run that did not get that far.  A failure is not
 * the run's.
 */
void sr_host_gc(struct sr_host *h);

/* Removes the cgroup leaf (left to --gc when it cannot be removed now),
 * collects the stale leaves if the launch did not (sr_host_gc), and frees
 * the uid-pool slot.  Nothing of the run may be alive. */
void sr_host_done(struct sr_host *h);
#define _cleanup_host_ _cleanup_(sr_host_done)
