/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_error;
struct sr_policy;

/* Which kind of cgroup holds the run. */
enum sr_cgroup_version {
  SR_CGV_NONE = 0, /* none: the supervisor samples the tree (sampler.h) */
  SR_CGV_2,        /* one cgroup v2 leaf */
  SR_CGV_1,        /* one leaf in each cgroup v1 hierarchy below */
};

/* The cgroup v1 hierarchies a run gets a leaf in. */
enum sr_cg1_ctrl {
  SR_CG1_MEMORY = 0, /* memory.limit_in_bytes (+ memsw), OOM kills */
  SR_CG1_PIDS,       /* pids.max */
  SR_CG1_CPUACCT,    /* cpuacct.usage, the CPU-seconds budget's clock */
  SR__CG1_MAX
};
/* "memory", "pids", "cpuacct". */
const char *sr_cg1_ctrl_name(enum sr_cg1_ctrl c);

/* The transient scope an ordinary caller's systemd user manager gave the
 * run (cgroup-systemd.c), or why there is none. */
struct sr_cgroup_scope {
  char *unit;        /* "skillrun-….scope"; NULL when none was obtained */
  char *path;        /* its cgroup directory */
  char *controllers; /* its cgroup.controllers: what was delegated */
  char *why;         /* NULL when the leaf is in the scope; else why not:
                      * "not asked: …" or what went wrong */
};

/* One cgroup per run: a v2 leaf, or a leaf per v1 hierarchy. */
struct sr_cgroup {
  bool active; /* a leaf exists and holds the limits */
  enum sr_cgroup_version version;
  int leaf_fd;            /* v2: O_DIRECTORY|O_CLOEXEC fd of the leaf
                           * (CLONE_INTO_CGROUP); -1 for v1 */
  char *leaf_path;        /* v2: the leaf; v1: the memory hierarchy's */
  char *parent_path;      /* the subtree the (v2) leaf was created in */
  bool memory, pids, cpu; /* controllers enabled for the leaf */
  /* v1: each hierarchy's leaf, locked for --gc while the run lives. */
  int v1_fd[SR__CG1_MAX];
  char *v1_path[SR__CG1_MAX];
  /* v1: each hierarchy's skillrun subtree, where the leaf was made: the
   * other runs' leaves are collected there while the run lives. */
  int v1_sub_fd[SR__CG1_MAX];
  bool memsw; /* v1 swap accounting: memory.memsw.limit_in_bytes set */
  /* v1: memory.kmem.tcp.limit_in_bytes set (socket buffers counted). */
  bool sock;
  uint64_t v1_memory_limit; /* v1: memory.limit_in_bytes as written */
  uint64_t v2_memory_limit; /* v2: memory.max as written */
  /* v2: the lowest memory.max (pids.max) of the cgroups that hold the
   * leaf (the subtree it was made in and those above it, up to the
   * mount's root), UINT64_MAX when none has one; *_at names that cgroup.
   * The leaf's limit is the run's or this, whichever is lower, and the
   * run's record is lowered to it (run-prepare.c).  Kept until
   * sr_cgroup_done. */
  uint64_t outer_memory, outer_pids;
  char *outer_memory_at, *outer_pids_at;
  struct sr_cgroup_scope scope; /* kept until sr_cgroup_done */
};

/* What the supervisor reads at every tick of its loop. */
struct sr_cgroup_counters {
  uint64_t cpu_usec;     /* v2 cpu.stat usage_usec; v1 cpuacct.usage */
  uint64_t oom_kill;     /* processes the kernel OOM-killed in the leaf */
  uint64_t pids_max_hit; /* forks refused at pids.max (pids.events max) */
  uint64_t pids_current; /* tasks now (pids.current) */
  /* The run's memory, with what the kernel charges to no cgroup (the
   * caller's `uncharged`) and under v1 its socket buffers, which v1
   * counts apart (memory.kmem.tcp), when that is above the memory limit;
   * else 0. */
  uint64_t memory_over;
};

struct sr_cgroup_stats {
  uint64_t cpu_usec;     /* as in the counters */
  uint64_t memory_peak;  /* v2 memory.peak, v1 memory.max_usage_in_bytes
                          * (0 when the kernel lacks it) */
  uint64_t pids_peak;    /* pids.peak (0 when the kernel lacks it) */
  uint64_t oom_kill;     /* v2 memory.events, v1 memory.oom_control */
  uint64_t pids_max_hit; /* pids.events max */
};

/* An empty record (fds -1), safe to pass to sr_cgroup_done. */
void sr_cgroup_init(struct sr_cgroup *cg);

/*
 * Sets up the run's cgroup, named "run-<name>" (name: an id,
 * sr_valid_id), and writes its limits, reading every one back.
 *
 * cgroup v2 first: a writable subtree (parent_override, else a `skillrun`
 * subtree as root, else a delegated subtree from /proc/self/cgroup), the
 * leaf with controllers enabled, memory.max, memory.swap.max=0,
 * memory.oom.group=1, pids.max.  A parent_override that cannot be used is
 * an error in every mode.
 *
 * Without a usable v2 leaf and without parent_override, cgroup v1: a leaf
 * in each of the memory, pids and cpuacct hierarchies below their
 * `skillrun` subtree, which root creates and an ordinary user must have
 * been given (writable); memory.limit_in_bytes and, with swap accounting,
 * memory.memsw.limit_in_bytes, pids.max.  The sandbox's init joins them
 * itself through the files sr_cgroup_open_join opens, before it forks
 * anything.
 *
 * When neither can be had: `require` -> error (layer "cgroup"); otherwise
 * returns 0 with cg->active false and *why set (malloc'd) for the warning,
 * and the caller picks the fallbacks.  p->cgroup SR_CGROUP_OFF: no leaf,
 * *why says so.
 */
int sr_cgroup_setup(struct sr_cgroup *cg, const struct sr_policy *p,
                    bool require, const char *parent_override, const char *name,
                    char **why, struct sr_error *err);

/* The fd for CLONE_INTO_CGROUP: the v2 leaf, -1 otherwise. */
int sr_cgroup_clone_fd(const struct sr_cgroup *cg);
/*
 * cgroup v1 (CLONE_INTO_CGROUP is v2 only): each leaf's `tasks` file,
 * opened read-write, in fds[0..n) and its leaf's path in paths[0..n);
 * returns n (at most max), 0 for v2 (init is born in the leaf) and without
 * a cgroup.  init writes "0" to each, which moves only the writing thread:
 * the kernel then skips the global threadgroup lock, whose taking waits
 * for an RCU grace period (cgroup_procs_write_start() in
 * kernel/cgroup/cgroup.c), milliseconds on a busy machine when the
 * supervisor wrote init's pid into cgroup.procs.  The kernel checks the
 * opener's credentials (the file's), so the fds are as powerful as the
 * supervisor: init closes them before it forks.  Layer "cgroup".
 */
int sr_cgroup_open_join(const struct sr_cgroup *cg, int *fds,
                        const char **paths, size_t max, struct sr_error *err);
/* The counters the supervisor polls (one read per file).  uncharged:
 * bytes the kernel holds for the run and charges to no cgroup (sockq.h),
 * counted with its memory against the limit. */
int sr_cgroup_poll(const struct sr_cgroup *cg, uint64_t uncharged,
                   struct sr_cgroup_counters *c);
/* The run's figures, once it has ended. */
int sr_cgroup_stats(const struct sr_cgroup *cg, struct sr_cgroup_stats *st);
/* v2 cgroup.kill (or SIGKILL of every pid in cgroup.procs on old
 * kernels); v1 SIGKILL of every pid listed until none is left. */
int sr_cgroup_kill(const struct sr_cgroup *cg);
/* Removes the leaves: at once when they are empty (rmdir says EBUSY
 * otherwise); else waits until empty, killing what is left after a while.
 * 0 and cg reset, or -errno with cg kept (the caller may retry; --gc
 * later; on v1 the leaves found empty may be gone already).  Safe to
 * call when inactive. */
int sr_cgroup_remove(struct sr_cgroup *cg);
/* sr_cgroup_remove once, then cg reset whether or not it worked (a leaf
 * still busy is left to --gc): 0 or its -errno.  Safe when inactive. */
int sr_cgroup_release(struct sr_cgroup *cg);
/* The leaf's name (the same in every v1 hierarchy), or NULL without one. */
const char *sr_cgroup_leaf_name(const struct sr_cgroup *cg);

/* sr_cgroup_release (best effort: a leaf still busy is left to --gc), then
 * closes and frees everything.  Safe on an empty record. */
void sr_cgroup_done(struct sr_cgroup *cg);
#define _cleanup_cgroup_ _cleanup_(sr_cgroup_done)

/* Whether libsystemd (opened with dlopen(3) for a delegated scope from
 * the caller's systemd user manager) can be loaded, for --version. */
bool sr_cgroup_systemd_lib_loadable(void);

/* How many leaves per cgroup directory a run's launch looks at
 * (sr_cgroup_gc). */
#define SR_CGROUP_GC_LAUNCH_MAX 8
/* Removes leftover leaves of dead runs below the skillrun subtrees (v2,
 * or parent_override, and every v1 hierarchy): every one with max 0
 * (--gc), else at most max of the leaves of each directory, picked at
 * random, young and live ones included (a run's launch; cgroup-internal.h,
 * sr_cg_gc_dir), where own (NULL, or the launch's own leaf's name) is not
 * the only leaf.  A failure in one place does not stop the others; the
 * first is returned.  The age is a leaf's ctime, which cgroupfs stamps
 * when the leaf's inode is loaded: a leaf nothing has looked at since is
 * young at its first look. */
int sr_cgroup_gc(const char *parent_override, unsigned max, const char *own,
                 struct sr_error *err);
/* sr_cgroup_gc with max for a launch, beside the run's own leaves in cg:
 * on cgroup v1, in the subtrees cg's leaves were made in moments ago,
 * through the descriptors kept from then (no mount is looked up again,
 * and v2, which had nothing to offer the run, is not looked at); with a
 * v2 leaf or none, sr_cgroup_gc(parent_override, max, the leaf's name). */
int sr_cgroup_gc_beside(const struct sr_cgroup *cg, const char *parent_override,
                        unsigned max, struct sr_error *err);
