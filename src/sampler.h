/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/*
 * The supervisor's own accounting of the sandbox's process tree, where no
 * cgroup can be had (skillrun(1) LIMITS, "supervisor"): every process below
 * the sandbox's init, found through /proc/PID/task/TID/children, sampled at
 * an interval of at most SR_SAMPLER_INTERVAL_MS.  It is not a kernel limit:
 * what happens between two samples is not seen, and the memory it counts
 * is what it can see (below).
 *
 *  cpu_usec  utime+stime+cutime+cstime of every live process of the tree:
 *            each process's own time (all its threads), plus what it has
 *            reaped, so processes that exited and were waited for count
 *            once, in their reaper (init reaps every orphan).  A child
 *            the kernel reaps itself (its parent ignores SIGCHLD or set
 *            SA_NOCLDWAIT) takes its time with it: with the CPU counter
 *            below, the larger of the two figures.
 *  memory    resident anonymous memory of every process (statm resident -
 *            shared: private pages, not the shared library pages that the
 *            host's page cache holds anyway; a page shared copy-on-write
 *            by forked processes counts in each, an overcount; a process
 *            whose main thread has exited, through a live thread: the
 *            leader's own statm and maps are empty)
 *            + the blocks and inodes in use on the sandbox's writable tmpfs
 *            mounts (/tmp, /dev/shm, /workspace/scratch, /workspace/outputs:
 *            every file once, mapped or not, open, deleted or passed
 *            around), each inode as SR_SAMPLER_INODE_BYTES
 *            + shared memory of the kernel's internal mount that processes
 *            map (MAP_SHARED of /dev/zero; MAP_SHARED|MAP_ANONYMOUS and
 *            System V where a filter does not refuse them), each object
 *            once at the size of its largest mapping: what is mapped,
 *            resident or not, and nothing of the object outside every
 *            mapping.  Such an object keeps every page while any page of
 *            it is mapped, so it can hold far more than that: this mode
 *            refuses what it cannot bound (sr_seccomp_refuse_unsampled):
 *            memfd_create, shmget, semget and msgget, whose objects
 *            need no mapping to hold memory (a semaphore array or a
 *            message queue: kernel memory in the IPC namespace, some 60
 *            GiB of them in all), and
 *            shared anonymous mmap.
 *  pids      tasks (threads) of the tree, zombies included.
 *
 * Not seen: the page cache of files read, kernel memory (socket buffers,
 * pipes, page tables), swap, memory held between two samples, and the
 * pages of a MAP_SHARED mapping of /dev/zero beyond what is still mapped
 * (mapped, filled and unmapped but for one page, again and again: any
 * amount).  The filter sees a descriptor, not the file behind it, so it
 * cannot refuse that mapping without refusing every shared mapping of a
 * file; /proc/PID/map_files, which would give the object's size, needs
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE in the initial user namespace.
 * Hostile code needs a cgroup (`cgroup require`, or a delegated one:
 * skillrun(1) LIMITS).
 */

#define SR_SAMPLER_INTERVAL_MS 50
/* While memory grows towards the limit the supervisor samples sooner: the
 * next sample comes when a quarter of the headroom would be used at the
 * growth seen, but never sooner than this (and the first one this soon
 * after the skill starts). */
#define SR_SAMPLER_MIN_MS 2
/* What an inode of the sandbox's tmpfs costs the kernel (the tmpfs inode
 * and its dentry, about 1 KiB on x86_64): with a cgroup those slabs are
 * charged to the run. */
#define SR_SAMPLER_INODE_BYTES 1024

struct sr_sample {
  uint64_t cpu_usec;
  uint64_t memory; /* bytes */
  uint64_t pids;   /* tasks */
};

struct sr_sampler_proc; /* one process of the last sample (sampler.c) */
struct sr_sampler_shm;

#define SR_SAMPLER_TMPFS_MAX 8

struct sr_sampler {
  pid_t init_pid; /* host pid of the sandbox's init: not reaped while in use */
  int proc_fd;    /* /proc, O_PATH */
  int tmpfs_fd[SR_SAMPLER_TMPFS_MAX];
  dev_t shm_dev; /* st_dev of the kernel's internal shmem mount */
  long page_size, clk_tck;
  uint64_t seq;                  /* samples taken */
  struct sr_sample peak;         /* the largest of each figure seen */
  struct sr_sampler_proc *procs; /* the last sample's processes, by pid */
  size_t n_procs, cap_procs;
  struct sr_sampler_proc *next; /* being built */
  size_t n_next, cap_next;
  pid_t *stack; /* the walk */
  size_t cap_stack;
  struct sr_sampler_shm *shm; /* this sample's shmem objects */
  size_t n_shm, cap_shm;
  char *buf; /* reads */
  size_t buf_len;
  uint64_t now_ms;     /* this sample's time (CLOCK_MONOTONIC) */
  uint64_t maps_total; /* the last sample's processes' maps, in bytes */
};

/* An empty sampler (fds -1), safe to pass to sr_sampler_close. */
void sr_sampler_init(struct sr_sampler *s);

/*
 * Starts sampling the tree of init_pid, once the sandbox is built (its
 * tmpfs mounts are opened through /proc/PID/root).  Layer "supervisor".
 */
int sr_sampler_open(struct sr_sampler *s, pid_t init_pid, struct sr_error *err);

/* One sample of the whole tree; updates s->peak.  0 or -errno (/proc
 * unreadable: the caller stops the run, it can no longer see it). */
int sr_sampler_sample(struct sr_sampler *s, struct sr_sample *out);

void sr_sampler_close(struct sr_sampler *s);

/* Whether pid is exiting or gone: then there is nothing left to sample,
 * and a sample that failed is no failure. */
bool sr_sampler_exiting(pid_t pid);

/*
 * The kernel's count of the CPU time of the whole tree, where it lets the
 * caller have one: a task-clock counter (perf_event_open(2), counting
 * only, user-space only as kernel.perf_event_paranoid 2 asks, which the
 * task clock ignores: it counts the time on a CPU, in the kernel too) on
 * pid, inherited by every task it forks from then on and summed as each
 * one exits, however it is reaped.  Opened on the sandbox's init before it
 * forks anything.  The fd, or -errno (no perf events, paranoid above 2, a
 * seccomp filter above skillrun's): the tree's times alone then.
 */
int sr_sampler_cpu_counter_open(pid_t pid);

/* The counter's figure now, in microseconds; 0 or -errno. */
int sr_sampler_cpu_counter_read(int fd, uint64_t *cpu_usec);
