/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "denials.h"
#include "error.h"
#include "logpump.h"
#include "proxy.h"
#include "stdinpump.h"
#include "sampler.h"
#include "sockq.h"

struct sr_outcome;

struct sr_audit;
struct sr_cgroup;
struct sr_enforcement;
struct sr_netallow;
struct sr_nethosts;
struct sr_policy;
struct sr_seccomp;
struct sr_workspace;

/*
 * Everything the supervisor needs to launch and watch one sandbox, resolved
 * by the pipeline's prepare stage: no argv, no choice left to make.
 */
struct sr_launch {
  const struct sr_policy *policy;
  const struct sr_enforcement *enf;
  const struct sr_seccomp *seccomp;
  const struct sr_cgroup *cgroup; /* the run's cgroup (active or not);
                                   * without one the supervisor samples
                                   * the tree (sampler.h) */
  struct sr_workspace *ws;        /* staging paths; logs and outputs */
  struct sr_audit *audit;
  char *const *argv; /* the command (argv[0] as given) */
  char *const *envp; /* the skill's environment, built from scratch */
  uid_t host_uid;    /* the sandbox user's ids on the host */
  gid_t host_gid;
  bool log_passthrough; /* copy kept log bytes to skillrun's stderr */
  bool forward_stdin;   /* --stdin: the caller's stdin to the skill's */
  /* Network allowlist: the effective list (NULL in any other mode) and the
   * names of skillrun.conf's network-hosts (NULL: the proxy asks DNS). */
  const struct sr_netallow *net_allow;
  const struct sr_nethosts *net_hosts;
  /* Called once init is released, while it builds the mounts, so that the
   * records that need not come before the clone do not delay it
   * (policy_resolved); its error ends the launch.  May be NULL. */
  int (*while_mounting)(void *ctx, struct sr_error *err);
  void *while_mounting_ctx;
  /* Called once, when the skill has started (after its state_changed event),
   * for work no record waits for: nothing of the launch is left to slow
   * down then, where while_mounting would take the CPU from init's mounts
   * on a host that packs a run onto one CPU (bench/README.md).  Its
   * context is while_mounting_ctx's.  May be NULL. */
  void (*while_running)(void *ctx);
};

/* At most this many network_connect events per run; the rest are counted
 * in network_summary. */
#define SR_NET_EVENTS_MAX 1000

/* What the egress proxy's records said (network_summary). */
struct sr_net_stats {
  uint64_t connections, denied, bytes_out, bytes_in;
  uint64_t events, suppressed; /* network_connect written, and not */
  uint64_t records_dropped;    /* by the proxy (its SUMMARY) */
  bool summary;                /* the proxy sent its SUMMARY */
};

/* The sandbox's init, as the supervisor holds it. */
struct sr_init_proc {
  pid_t pid;   /* 0 before the clone */
  int pidfd;   /* -1 without (old kernel) */
  bool exited; /* reaped */
  /* Its resource usage when reaped: its own and that of every process it
   * reaped, which in a pid namespace is every process of the sandbox. */
  struct rusage ru;
  bool have_ru;
};

/*
 * The host side of a launched sandbox: init, the sync socket, the log
 * pipes, the signal and timer fds, and what the event loop has seen.
 */
struct sr_supervisor {
  const struct sr_launch *spec;
  struct sr_init_proc init;
  int sync_fd;        /* the supervisor's end of the sync socket */
  int signal_fd;      /* SIGCHLD and sr_cancel_set()'s signals */
  int timeout_fd;     /* wall clock */
  int grace_fd;       /* SIGTERM -> SIGKILL: cancellation, timeout */
  int sample_fd;      /* the tick: the cgroup's counters, or the sampler */
  int log_wake_fd;    /* the end of a log stream's rest (on_log) */
  int cpu_counter_fd; /* without a cgroup, the tree's CPU time (sampler.h) */
  unsigned sample_ms; /* its interval now */
  uint64_t last_sample_ms, last_memory; /* the sampler's previous sample */
  uint64_t memory_rate;      /* bytes/ms the tree's memory grows (sampler) */
  struct sr_sampler sampler; /* without a cgroup, from the skill's start */
  bool sampling;             /* the sampler is open */
  bool sampler_gone;         /* the tree ended before it could be opened */
  bool log_resting[2];       /* a log stream not polled until log_wake_fd */
  bool pass_warned;          /* --log-passthrough's stop is on the record */
  uint64_t pids_seen;        /* the most pids the cgroup's counters showed */
  uint64_t cpu_counted;      /* cpu_counter_fd's figure once init is reaped */
  struct sr_logpump logs;
  /* Log wakeups, rationed (on_log): a stream resting is not polled until
   * log_wake_fd (made at the first rest) fires. */
  uint64_t log_last_ns[2];
  struct sr_stdinpump stdin_pump; /* --stdin; inactive without */
  char stdin_sha256[65];          /* of the bytes forwarded, once done */
  bool stdin_complete;            /* forwarded to its end */
  sigset_t old_mask;
  bool mask_blocked;
  /* pid 1 of its pid namespace (a container's entrypoint): the orphans
   * there are its to reap (reap_strangers), due after each SIGCHLD. */
  bool pid1, strangers_due;
  uint64_t start_ms;
  /* What the loop saw. */
  bool ready;       /* init reported the skill started */
  bool have_status; /* init reported the skill's wait status */
  bool sync_eof;
  int wait_status;
  uint64_t exited_ns;   /* when init reaped the skill (CLOCK_MONOTONIC) */
  uint64_t deadline_ns; /* the wall clock's end, on the same clock */
  int exec_errno;
  char exec_msg[1024];       /* why, as the skill's process saw it (one line) */
  struct sr_error setup_err; /* a layer init or the child could not build */
  bool timed_out, cpu_exceeded, memory_exceeded, pids_exceeded, tree_killed;
  bool seccomp_plain; /* the kernel refused the listener: not reported */
  int cancel_sig;
  int outputs_fd; /* the sandbox's outputs tmpfs, handed over by init */
  /* The egress proxy of an allowlist run: its listeners as init passes
   * them, then the process; stopped before the run is collected. */
  int proxy_listen[2];
  size_t n_proxy_listen;
  struct sr_proxy proxy;
  bool proxy_spawned;
  struct sr_net_stats net;
  struct sr_error net_err; /* an audit write that failed in a callback */
  /* Refused system calls, from the seccomp filter's listener (handed over
   * by the skill's process before exec); reported when the loop ends. */
  struct sr_denials denials;
  /* Bytes queued on connections no process accepted (sockq.h): counted
   * with the run's memory at each tick once the skill has started, in a
   * network namespace of the run's own. */
  struct sr_sockq sockq;
  bool sockq_open;
  /* The audit stream's reader went: when the run stops for it, unless a
   * cancellation comes first (monotonic ms; 0: it has not gone). */
  uint64_t audit_gone_ms;
};

/* An empty supervisor (fds -1), safe to pass to sr_supervisor_done. */
void sr_supervisor_init(struct sr_supervisor *s);

/*
 * Launch: the sync socket and log pipes, signals blocked into a signalfd,
 * timers; clones init into the new namespaces (born in the cgroup leaf
 * when there is one), writes its uid/gid maps and releases it; creates the
 * log files and outputs/ while init builds the sandbox; arms the timers.
 * On failure the tree is killed and reaped.
 */
int sr_supervisor_launch(struct sr_supervisor *s, const struct sr_launch *spec,
                         struct sr_error *err);

/*
 * Supervise: the event loop.  Pumps the logs (cap), forwards cancellation
 * and enforces the wall clock (both: SIGTERM to the whole tree, then
 * SIGKILL after kill-grace; a skill that init reaped before the deadline
 * is never a timeout, however late the supervisor sees its timer), the
 * CPU budget, and returns when the logs and the sync socket are at EOF and
 * init has reported the skill's status or exited.  A layer that failed in
 * the sandbox is returned as the error.  On failure the tree is killed and
 * reaped.
 */
int sr_supervisor_run(struct sr_supervisor *s, struct sr_error *err);

/* What happened, for sr_verdict_of (after sr_supervisor_run). */
void sr_supervisor_outcome(const struct sr_supervisor *s, struct sr_outcome *o);

/* The run's figures without a cgroup (after sr_supervisor_reap): the
 * sampler's peaks, and the CPU time of the whole tree: the kernel's CPU
 * counter where there is one, else init's rusage, exact when init reaped
 * everything itself (the skill ended) and no parent left its children to
 * the kernel (SIGCHLD ignored), else (the supervisor killed the tree,
 * whose last processes the kernel reaps without accounting) the last
 * sample; the largest of those there are.  A run over before its first
 * sample reports the largest process's resident set (rusage) and 2
 * tasks. */
void sr_supervisor_sampled(const struct sr_supervisor *s, uint64_t *cpu_usec,
                           uint64_t *memory_peak, uint64_t *pids_peak);

/* Waits for the sandbox's init to exit (at most a few seconds, then kills
 * it) and reaps it: nothing of the run is alive afterwards.  Harvest and
 * the final records overlap init's own exit (the teardown of its mount
 * namespace), so this comes after them. */
void sr_supervisor_reap(struct sr_supervisor *s);

/* sr_supervisor_reap, then closes every fd and restores the signal mask. */
void sr_supervisor_done(struct sr_supervisor *s);
#define _cleanup_supervisor_ _cleanup_(sr_supervisor_done)
