/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct sr_error;
struct sr_policy;

/* One cgroup v2 leaf per run. */
struct sr_cgroup {
  bool active; /* a leaf exists and holds the limits */
  int leaf_fd; /* O_DIRECTORY|O_CLOEXEC fd of the leaf (CLONE_INTO_CGROUP) */
  char *leaf_path;        /* absolute path under /sys/fs/cgroup */
  char *parent_path;      /* the subtree the leaf was created in */
  bool memory, pids, cpu; /* controllers enabled for the leaf */
};

struct sr_cgroup_stats {
  uint64_t cpu_usec;     /* cpu.stat usage_usec */
  uint64_t memory_peak;  /* memory.peak (0 when the kernel lacks it) */
  uint64_t pids_peak;    /* pids.peak (0 when the kernel lacks it) */
  uint64_t oom_kill;     /* memory.events oom_kill */
  uint64_t pids_max_hit; /* pids.events max */
};

/*
 * Finds a writable cgroup v2 subtree (parent_override, else a `skillrun`
 * subtree as root, else a delegated subtree from /proc/self/cgroup), creates
 * the leaf "run-<name>" (name: an id, sr_valid_id), enables controllers,
 * writes memory.max, memory.swap.max=0, memory.oom.group=1, pids.max, and
 * reads them back.  A parent_override that cannot be used is an error in
 * every mode.  When no usable leaf can be made: `require` -> error (layer
 * "cgroup"); otherwise returns 0 with cg->active false and *why set
 * (malloc'd) for the warning, and the caller picks the fallbacks.  p->cgroup
 * SR_CGROUP_OFF: no leaf, *why says so.
 */
int sr_cgroup_setup(struct sr_cgroup *cg, const struct sr_policy *p,
                    bool require, const char *parent_override, const char *name,
                    char **why, struct sr_error *err);

int sr_cgroup_cpu_usec(const struct sr_cgroup *cg, uint64_t *usec);
int sr_cgroup_stats(const struct sr_cgroup *cg, struct sr_cgroup_stats *st);
/* cgroup.kill (or SIGKILL of every pid in cgroup.procs on old kernels). */
int sr_cgroup_kill(const struct sr_cgroup *cg);
/* Waits until empty and removes the leaf.  Safe to call when inactive. */
int sr_cgroup_remove(struct sr_cgroup *cg);
/* sr_cgroup_remove (best effort: a leaf still busy is left to --gc), then
 * closes and frees everything.  Safe on an empty record. */
void sr_cgroup_done(struct sr_cgroup *cg);
#define _cleanup_cgroup_ _cleanup_(sr_cgroup_done)

/* Removes leftover leaves of dead runs below the skillrun subtree (--gc). */
int sr_cgroup_gc(const char *parent_override, struct sr_error *err);
