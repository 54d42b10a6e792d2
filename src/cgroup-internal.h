/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * What the two cgroup backends share: reading and writing cgroupfs files,
 * and the v1 backend's entry points.  Only cgroup.c (v2, and the interface
 * of cgroup.h) and cgroup1.c include this.  It sits below cgroup.h and
 * does not include it: the structures it names are only pointed to.
 */
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

struct sr_cgroup;
struct sr_cgroup_counters;
struct sr_cgroup_stats;
struct sr_error;
struct sr_policy;

#define SR_CG_LEAF_PREFIX "run-"
/* A run's leaf is made so: no other user may open it, and so none may
 * take its lock (the mark --gc reads as a live run's) between its mkdir
 * and the run's own flock, failing the run, or hold a dead run's lock for
 * good, keeping it from --gc (tests/attacks/leaf-lock.sh). */
#define SR_CG_LEAF_MODE 0700
/* A leaf younger than this is never collected by --gc: its run may be
 * between mkdir and flock. */
#define SR_CG_GC_MIN_AGE_SEC 2
/* How long destroy waits for a killed leaf to empty. */
#define SR_CG_DESTROY_WAIT_MS 2000

char *sr_cg_xasprintf(const char *fmt, ...) _printf_(1, 2);
/* A cgroupfs file, whole (capped), NUL-terminated, malloc'd. */
int sr_cg_read_at(int dfd, const char *file, char **out);
/* "N\n" or "max\n" (UINT64_MAX). */
int sr_cg_read_u64_at(int dfd, const char *file, uint64_t *v);
/* A flat keyed file ("key value\n" lines: cpu.stat, memory.events,
 * memory.oom_control...); -ENOENT when the key is missing. */
int sr_cg_read_key_u64_at(int dfd, const char *file, const char *key,
                          uint64_t *v);
/* Writes a value and reads it back; a mismatch is a failed layer. */
int sr_cg_write_checked(int lfd, const char *leaf_path, const char *file,
                        uint64_t value, struct sr_error *err);
/* O_DIRECTORY|O_CLOEXEC open relative to dfd: the fd or -errno. */
int sr_cg_open_dir_at(int dfd, const char *path);
/* 0 when the skillrun subtree at fd (path for messages) is the caller's
 * and writable by no one else; otherwise -errno with *reason (malloc'd):
 * whoever may write it sets the limits of every run made below it. */
int sr_cg_subtree_private(int fd, const char *path, char **reason);
/* SIGKILLs every pid cgroup.procs of lfd lists until it lists none: 0,
 * or -EBUSY when it still lists some after 100 rounds (10 ms apart). */
int sr_cg_kill_listed(int lfd);
/* Removes the emptied leaf at path (relative to dfd), retrying for a
 * moment while the kernel says EBUSY; an absent leaf is removed. */
int sr_cg_rmdir_at(int dfd, const char *path);
/* Decodes the \ooo escapes of /proc/self/mountinfo in place. */
void sr_cg_unescape_octal(char *s);
/* Splits a line of /proc/self/mountinfo in place: *mountpoint (its \ooo
 * escapes decoded) and *fstype, what follows the " - " separator (the
 * file system type, the source, the super options).  -EINVAL when the
 * line does not have that shape. */
int sr_cg_mountinfo_split(char *line, char **mountpoint, char **fstype);
/* True when /proc/swaps lists no swap device. */
bool sr_cg_no_swap_configured(void);
/* The memory limit rounded down to whole pages (the kernels keep pages
 * and round down; rounding first lets the read-back compare equal). */
uint64_t sr_cg_page_round(uint64_t bytes);
/* Is the directory at fd older than SR_CG_GC_MIN_AGE_SEC, and unlocked?
 * A younger one is never locked here (a starting run locks its new leaf
 * after making it).  It stays locked by the caller when 1 is returned.
 * 1, 0 or -errno. */
int sr_cg_gc_candidate(int fd);
/* True when there is nothing to collect at dfd/name for a reason one
 * fstatat(2) shows without opening it: gone, or a directory younger than
 * SR_CG_GC_MIN_AGE_SEC (the leaves of the runs starting beside this one;
 * sr_cg_gc_candidate checks the age again on the one it opens). */
bool sr_cg_gc_skip_at(int dfd, const char *name);
/*
 * Collects below the directory at sfd (path for messages) the entries
 * `want` accepts, with one(sfd, name), skipping what sr_cg_gc_skip_at
 * skips.  max 0 (--gc): every one.  Otherwise (a run's launch) at most max
 * of them, picked at random when there are more, so that a launch's cost
 * does not grow with the number of runs alive beside it (each would be
 * looked at, opened and tried for its lock); a stale leaf among n leaves
 * is looked at by a launch with a chance of max/n.  A launch does not read
 * a directory whose only child directory, if any, is `own` (the caller's
 * live leaf there, or NULL): cgroupfs counts a directory's children in its
 * link count (2 + one per child), so one fstat(2) says there is nothing
 * to collect.  sfd must therefore be a cgroupfs directory (every caller's
 * is: the v2 parent is checked to be cgroup2, the v1 mounts are found by
 * their file-system type); a link count of 1 (btrfs) is read anyway.  The first
 * error is reported (err may be NULL), the rest are still tried.
 */
int sr_cg_gc_dir(int sfd, const char *path, const char *own,
                 bool (*want)(const char *), int (*one)(int, const char *),
                 unsigned max, struct sr_error *err);

/* ---- systemd (cgroup-systemd.c): asks the caller's systemd user manager
 * for the transient scope `unit` (Delegate=yes, collected once empty)
 * holding the calling process, and waits (bounded) for its job.  Before
 * asking, may_leave(the manager's own cgroup, arg, reason) says whether
 * the process may leave its cgroup for one below the manager's (0), or
 * not (-errno with *reason set).  0 once the process is in the scope;
 * -errno with *reason set (malloc'd) when libsystemd, the manager, the
 * job or may_leave fails. */
int sr_cg_systemd_scope(const char *unit, const char *description,
                        int (*may_leave)(const char *, void *, char **),
                        void *arg, char **reason);

/* ---- cgroup v1 (cgroup1.c): one leaf in each of the memory, pids and
 * cpuacct hierarchies, "<mount>/skillrun/run-<name>".  Unavailable (not
 * mounted, not writable): -errno with *reason set (malloc'd); a hard
 * failure (limits that do not take): -errno with err set. */
int sr_cg1_setup(struct sr_cgroup *cg, const struct sr_policy *p,
                 const char *leaf, char **reason, struct sr_error *err);
int sr_cg1_open_join(const struct sr_cgroup *cg, int *fds, const char **paths,
                     size_t max, struct sr_error *err);
int sr_cg1_poll(const struct sr_cgroup *cg, uint64_t uncharged,
                struct sr_cgroup_counters *c);
int sr_cg1_stats(const struct sr_cgroup *cg, struct sr_cgroup_stats *st);
int sr_cg1_kill(const struct sr_cgroup *cg);
/* 0 once every leaf is removed; cg keeps what is left otherwise. */
int sr_cg1_remove(struct sr_cgroup *cg);
void sr_cg1_reset(struct sr_cgroup *cg);
int sr_cg1_gc(unsigned max, const char *own, struct sr_error *err);
/* sr_cg1_gc in cg's subtrees (v1_sub_fd), beside cg's own leaves. */
int sr_cg1_gc_beside(const struct sr_cgroup *cg, unsigned max,
                     struct sr_error *err);
/* The memory, pids and cpuacct hierarchies' mount points (malloc'd, by
 * enum sr_cg1_ctrl, SR__CG1_MAX of them).  _fast: the usual layout under BASE
 * (/sys/fs/cgroup), by statfs and one file per hierarchy; 0 only when it
 * found all three, -ENOENT otherwise, with nothing set.  _scan: from
 * /proc/self/mountinfo; those not mounted stay NULL. */
int sr_cg1_mounts_fast(const char *base, char *mnt[]);
int sr_cg1_mounts_scan(char *mnt[]);
