/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The supervisor: launches the sandbox's init and watches it (the launch
 * and supervise stages of the pipeline, doc/architecture.md).  It runs in
 * the host's namespaces with the caller's ids; the sandbox side is init.c
 * and child.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit.h"
#include "cgroup.h"
#include "fdutil.h"
#include "init.h"
#include "net.h"
#include "netallow.h"
#include "ns.h"
#include "policy.h"
#include "sampler.h"
#include "proxyproto.h"
#include "sandbox.h"
#include "seccomp.h"
#include "status.h"
#include "supervisor.h"
#include "sync.h"
#include "util.h"
#include "workspace.h"

/* How long init may take to exit after reporting the skill's status. */
#define INIT_EXIT_GRACE_MS 5000
/* How long the egress proxy may take to close its connections and report
 * them once the skill has ended, before it is killed. */
#define PROXY_STOP_MS 2000

void sr_supervisor_init(struct sr_supervisor *s) {
  memset(s, 0, sizeof(*s));
  s->init.pidfd = -1;
  s->sync_fd = s->signal_fd = s->timeout_fd = s->grace_fd = s->sample_fd = -1;
  s->outputs_fd = s->log_wake_fd = -1;
  sr_sampler_init(&s->sampler);
  sr_sockq_init(&s->sockq);
  s->cpu_counter_fd = -1;
  s->proxy_listen[0] = s->proxy_listen[1] = -1;
  s->proxy = (struct sr_proxy)SR_PROXY_NULL;
  sr_logpump_init(&s->logs, -1, -1, -1, -1, 0, -1);
  sr_stdinpump_init(&s->stdin_pump);
  sr_denials_init(&s->denials);
}

static int arm_timer(int fd, uint64_t ms, uint64_t interval_ms) {
  struct itimerspec its = {0};

  its.it_value.tv_sec = (time_t)(ms / 1000);
  its.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
  if (ms == 0)
    its.it_value.tv_nsec = 1; /* 0 would disarm */
  its.it_interval.tv_sec = (time_t)(interval_ms / 1000);
  its.it_interval.tv_nsec = (long)(interval_ms % 1000) * 1000000L;
  return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* Not reaped yet, so the pid cannot have been reused even without a
 * pidfd. */
static void signal_init(struct sr_init_proc *in, int sig) {
  if (in->pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, in->pidfd, sig, NULL, 0);
  else
    (void)kill(in->pid, sig);
}

/* Reaps init if it has exited; true when it has.  The raw waitid(2)
 * returns init's rusage, which glibc's wrapper drops. */
static bool reap_init(struct sr_init_proc *in, bool block) {
  siginfo_t si;
  struct rusage ru;
  int flags = WEXITED | (block ? 0 : WNOHANG);
  long r;

  memset(&si, 0, sizeof(si));
  memset(&ru, 0, sizeof(ru));
  do {
    if (in->pidfd >= 0)
      r = syscall(SYS_waitid, P_PIDFD, in->pidfd, &si, flags, &ru);
    else
      r = syscall(SYS_waitid, P_PID, in->pid, &si, flags, &ru);
  } while (r < 0 && errno == EINTR);
  if (r == 0 && si.si_pid != 0) {
    in->ru = ru;
    in->have_ru = true;
  }
  if ((r == 0 && si.si_pid != 0) || (r < 0 && errno == ECHILD))
    in->exited = true;
  return in->exited;
}

void sr_supervisor_reap(struct sr_supervisor *s) {
  struct sr_init_proc *in = &s->init;

  if (in->pid <= 0) /* no sandbox was made */
    return;
  if (in->exited) {
    in->pidfd = safe_close(in->pidfd);
    return;
  }
  if (in->pidfd >= 0) {
    struct pollfd pfd = {.fd = in->pidfd, .events = POLLIN};
    int n;
    do
      n = poll(&pfd, 1, INIT_EXIT_GRACE_MS);
    while (n < 0 && errno == EINTR);
    if (n == 0)
      signal_init(in, SIGKILL);
  } else if (!reap_init(in, false)) {
    /* No pidfd (old kernel): no bounded wait without one, and init has
     * nothing left to do that is worth waiting for. */
    signal_init(in, SIGKILL);
  }
  (void)reap_init(in, true);
  in->pidfd = safe_close(in->pidfd);
}

/*
 * As pid 1 of its pid namespace (the entrypoint of a container: docker, a
 * pod, unshare --pid --fork), skillrun is the one every orphan there is
 * handed to: what docker exec left behind, a process the caller's wrapper
 * forked before it exec'd skillrun.  Each stayed a zombie, holding its
 * pid, until the run ended.  They are reaped while the run runs now,
 * without ever taking the status of skillrun's own children, which their
 * owners wait for by pid: a look first (WNOWAIT) says whose the zombie
 * is.  One of its own (init, the egress proxy, the only children alive
 * while the loop runs: the libmagic and key-parsing children come and go
 * before it) ends the round, as every look would find it first; its
 * owner reaps it, and the round is tried again after the next events.
 */
static bool own_child(const struct sr_supervisor *s, pid_t pid) {
  return (!s->init.exited && pid == s->init.pid) ||
         (s->proxy.pid > 0 && pid == s->proxy.pid);
}

static void reap_strangers(struct sr_supervisor *s) {
  for (;;) {
    siginfo_t si;

    memset(&si, 0, sizeof(si));
    if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0) {
      if (errno == EINTR)
        continue;
      break; /* ECHILD: no child at all */
    }
    if (si.si_pid == 0)
      break; /* none has exited */
    if (own_child(s, si.si_pid))
      return; /* still due */
    /* A stranger: none but this thread reaps, so the pid is still its. */
    if (waitid(P_PID, (id_t)si.si_pid, &si, WEXITED | WNOHANG) < 0 &&
        errno != EINTR)
      break;
  }
  s->strangers_due = false;
}

/* Killing pid 1 of the namespace kills every other process of it
 * (pid_namespaces(7)); cgroup v2's cgroup.kill does the same at once, from
 * the other side.  cgroup v1 has no such file: its leaves hold nothing but
 * the namespace, which init's death empties (destroy waits for that). */
static void kill_tree(struct sr_supervisor *s) {
  if (s->spec && s->spec->cgroup->active &&
      s->spec->cgroup->version == SR_CGV_2)
    (void)sr_cgroup_kill(s->spec->cgroup); /* and pid 1 below, regardless */
  /* pid 1 of the namespace: its death takes every process of it along. */
  if (s->init.pid > 0 && !s->init.exited)
    signal_init(&s->init, SIGKILL);
  s->tree_killed = true;
}

/* Fail closed: nothing of the run may outlive a failure. */
static void kill_and_reap(struct sr_supervisor *s) {
  kill_tree(s);
  if (s->init.pid > 0 && !s->init.exited)
    (void)reap_init(&s->init, true);
}

static void restore_signals(struct sr_supervisor *s) {
  if (s->mask_blocked)
    (void)sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
  s->mask_blocked = false;
}

void sr_supervisor_done(struct sr_supervisor *s) {
  /* Nothing of the run outlives it: the proxy neither (a stop that comes
   * here has no one left to report to). */
  (void)sr_proxy_stop(&s->proxy, 0, NULL, NULL);
  for (size_t i = 0; i < SR_ARRAY_SIZE(s->proxy_listen); i++)
    s->proxy_listen[i] = safe_close(s->proxy_listen[i]);
  sr_supervisor_reap(s);
  /* Init reaped: every task of the tree has exited and added its time. */
  if (s->cpu_counter_fd >= 0)
    (void)sr_sampler_cpu_counter_read(s->cpu_counter_fd, &s->cpu_counted);
  s->cpu_counter_fd = safe_close(s->cpu_counter_fd);
  restore_signals(s);
  sr_logpump_done(&s->logs);
  sr_stdinpump_done(&s->stdin_pump);
  s->sync_fd = safe_close(s->sync_fd);
  s->signal_fd = safe_close(s->signal_fd);
  s->timeout_fd = safe_close(s->timeout_fd);
  s->grace_fd = safe_close(s->grace_fd);
  s->sample_fd = safe_close(s->sample_fd);
  s->log_wake_fd = safe_close(s->log_wake_fd);
  sr_sampler_close(&s->sampler);
  s->sampling = false;
  sr_sockq_close(&s->sockq);
  s->sockq_open = false;
  s->outputs_fd = safe_close(s->outputs_fd);
  sr_denials_done(&s->denials);
}

/* ------------------------------------------------------------ launch */

/* Signals arrive on a signalfd from now on; the timers are made here and
 * armed once the sandbox is released. */
static int open_event_fds(struct sr_supervisor *s, struct sr_error *err) {
  sigset_t mask;

  sr_cancel_set(&mask);
  sigaddset(&mask, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &mask, &s->old_mask) < 0)
    return sr_error_layer(err, "signals", errno, "sigprocmask");
  s->mask_blocked = true;
  s->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  s->timeout_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  s->grace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  s->sample_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (s->signal_fd < 0 || s->timeout_fd < 0 || s->grace_fd < 0 ||
      s->sample_fd < 0)
    return sr_error_layer(err, "signals", errno, "signalfd/timerfd");
  return 0;
}

/* What the sandbox side is built from; copied into init by the clone.  The
 * cgroup v1 files init joins are opened here; the caller closes its copies
 * once init is cloned (close_joins). */
static int fill_sandbox(struct sr_sandbox *sb, const struct sr_launch *spec,
                        int sync_fd, int stdout_w, int stderr_w, int stdin_r,
                        struct sr_error *err) {
  const struct sr_policy *p = spec->policy;
  int n;

  memset(sb, 0, sizeof(*sb));
  for (size_t i = 0; i < SR_SANDBOX_CG_JOIN_MAX; i++)
    sb->cg_join_fd[i] = -1;
  n = sr_cgroup_open_join(spec->cgroup, sb->cg_join_fd, sb->cg_join_path,
                          SR_SANDBOX_CG_JOIN_MAX, err);
  if (n < 0)
    return n;
  sb->n_cg_join = (size_t)n;
  sb->policy = p;
  sb->enf = spec->enf;
  sb->seccomp = spec->seccomp;
  sb->mount.policy = p;
  sb->mount.bundle_dir = spec->ws->bundle_path;
  sb->mount.inputs_dir = spec->ws->inputs_path;
  sb->mount.metadata_file = spec->ws->metadata_path;
  /* Inherited by init, which binds only what is still these objects. */
  sb->mount.bundle_fd = spec->ws->bundle_fd;
  sb->mount.inputs_fd = spec->ws->inputs_fd;
  sb->mount.metadata_fd = spec->ws->metadata_fd;
  sb->mount.uid = SR_SANDBOX_UID;
  sb->mount.gid = SR_SANDBOX_GID;
  sb->mount.user_name = "skill";
  sb->mount.home = "/workspace/scratch";
  sb->argv = spec->argv;
  sb->envp = spec->envp;
  sb->sync_fd = sync_fd;
  sb->stdout_w = stdout_w;
  sb->stderr_w = stderr_w;
  sb->stdin_r = stdin_r;
  sb->new_netns = p->network != SR_NET_HOST;
  sb->proxy_port = spec->net_allow ? SR_PROXY_PORT : 0;
  /* strict: a kernel that cannot drop them in the namespace will do
   * where the host drops them everywhere (net.c). */
  sb->tstamp_required =
      sb->new_netns && p->strict && sr_net_host_tstamp_allow_data() != 0;
  return 0;
}

static void close_joins(struct sr_sandbox *sb) {
  for (size_t i = 0; i < sb->n_cg_join; i++)
    sb->cg_join_fd[i] = safe_close(sb->cg_join_fd[i]);
  sb->n_cg_join = 0;
}

/* Clones init; in the child this never returns.  The write ends are
 * closed in the parent afterwards, whatever happened. */
static int clone_init(struct sr_supervisor *s, int sync_child, int out_w,
                      int err_w, int out_r, int err_r, int in_r, int in_w,
                      struct sr_error *err) {
  _cleanup_(close_joins) struct sr_sandbox sb = {.n_cg_join = 0};
  unsigned long long flags;
  pid_t pid;
  int r;

  r = fill_sandbox(&sb, s->spec, sync_child, out_w, err_w, in_r, err);
  if (r < 0)
    return r;
  flags =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (sb.new_netns && !sr_sandbox_child_netns(&sb))
    flags |= CLONE_NEWNET;
  fflush(NULL); /* nothing buffered may be written twice */
  pid = sr_ns_clone(flags, sr_cgroup_clone_fd(s->spec->cgroup), &s->init.pidfd,
                    err);
  if (pid < 0)
    return pid;
  if (pid == 0) {
    safe_close(s->sync_fd);
    safe_close(out_r);
    safe_close(err_r);
    safe_close(in_w);
    sr_init_main(&sb);
  }
  s->init.pid = pid;
  return 0;
}

/* After the clone: maps, release, the records made while init mounts,
 * timers armed. */
static int release_init(struct sr_supervisor *s, struct sr_error *err) {
  const struct sr_launch *spec = s->spec;
  const struct sr_policy *p = spec->policy;
  int r;

  r = sr_ns_write_maps(s->init.pid, SR_SANDBOX_UID, spec->host_uid,
                       SR_SANDBOX_GID, spec->host_gid, err);
  /* cgroup v1: init joins the leaves itself after GO (fill_sandbox opened
   * their files), before it forks anything: every process of the sandbox
   * is born in them. */
  if (r >= 0 && sr_sync_send(s->sync_fd, SR_SYNC_GO, 0, NULL, -1) < 0)
    r = sr_error_layer(err, "sync", errno, "cannot release the sandbox");
  /* Init's mounts, not the records below, are the launch's critical path
   * (the records have until the mounts are done).  Where the scheduler
   * put init on this CPU, as a VM that packs its vCPUs does, it would
   * wait for them: 0.3 ms a launch there (bench/README.md).  With nothing
   * else to run here this returns at once. */
  if (r >= 0)
    (void)sched_yield();
  if (r >= 0 && spec->while_mounting)
    r = spec->while_mounting(spec->while_mounting_ctx, err);
  /* The log files are opened once the sandbox is being built: on the
   * workspace's file system a new file costs 0.01 - 0.2 ms, and the
   * supervisor has nothing else to do while init mounts. */
  if (r >= 0)
    r = sr_workspace_open_logs(spec->ws, &s->logs.out_fd[0], &s->logs.out_fd[1],
                               err);
  if (r >= 0)
    r = sr_workspace_make_outputs(spec->ws, err);
  if (r >= 0) {
    s->deadline_ns =
        sr_now_mono_ns() + p->limits[SR_LIM_TIMEOUT].value * 1000000ull;
    r = arm_timer(s->timeout_fd, p->limits[SR_LIM_TIMEOUT].value, 0);
  }
  /* A cgroup counts from init's birth; the sampler starts with the skill
   * (on_sync), so that it never delays the launch. */
  if (r >= 0 && spec->cgroup->active) {
    s->sample_ms = SR_SAMPLER_INTERVAL_MS;
    r = arm_timer(s->sample_fd, s->sample_ms, s->sample_ms);
  }
  /* Only now may init let the skill go: a reader of the audit stream that
   * stalls policy_resolved's write (for up to SR_AUDIT_STALL_MS) must not
   * leave a skill running without its timers, or one the record then says
   * never ran.  Init's mounts take longer than all of the above. */
  if (r >= 0) {
    int q = sr_sync_send(s->sync_fd, SR_SYNC_RECORDED, 0, NULL, -1);
    /* Init gone already (EPIPE, ECONNRESET): it failed after GO and its
     * own error, queued on the socket, is what the event loop reports;
     * nothing of the skill's can run without it. */
    if (q < 0 && q != -EPIPE && q != -ECONNRESET)
      r = sr_error_layer(err, "sync", -q, "cannot release the sandbox");
  }
  return r;
}

int sr_supervisor_launch(struct sr_supervisor *s, const struct sr_launch *spec,
                         struct sr_error *err) {
  _cleanup_close_ int sync_child = -1, out_r = -1, out_w = -1;
  _cleanup_close_ int err_r = -1, err_w = -1, in_r = -1, in_w = -1;
  int sv[2], pp[2], r;

  s->spec = spec;
  s->start_ms = sr_now_mono_ms();
  r = sr_ns_check_proc(err);
  if (r < 0)
    return r;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_layer(err, "sync", errno, "socketpair");
  s->sync_fd = sv[0];
  sync_child = sv[1];
  if (pipe2(pp, O_CLOEXEC) < 0)
    return sr_error_layer(err, "logs", errno, "pipe");
  out_r = pp[0];
  out_w = pp[1];
  if (pipe2(pp, O_CLOEXEC) < 0)
    return sr_error_layer(err, "logs", errno, "pipe");
  err_r = pp[0];
  err_w = pp[1];
  if (spec->forward_stdin) {
    if (pipe2(pp, O_CLOEXEC) < 0)
      return sr_error_layer(err, "fds", errno, "pipe");
    in_r = pp[0];
    in_w = pp[1];
  }
  sr_logpump_init(&s->logs, -1, -1, -1, -1,
                  spec->policy->limits[SR_LIM_LOG_CAP].value,
                  spec->log_passthrough ? STDERR_FILENO : -1);
  r = open_event_fds(s, err);
  if (r < 0)
    return r;
  /* Orphans that ended before SIGCHLD was blocked sent none that stayed
   * pending: the loop's first round looks for them. */
  s->pid1 = s->strangers_due = getpid() == 1;
  /* As root, leave root's supplementary groups behind before the sandbox
   * inherits them (an ordinary caller cannot, see skillrun(1)). */
  if (sr_root_mode() && setgroups(0, NULL) < 0)
    return sr_error_layer(err, "userns", errno, "setgroups");

  r = clone_init(s, sync_child, out_w, err_w, out_r, err_r, in_r, in_w, err);
  if (r < 0)
    return r;
  /* Without a cgroup: the kernel's count of the tree's CPU time, opened
   * while init waits for GO, so that it is inherited by every process of
   * the sandbox (a child reaped by the kernel itself, its parent ignoring
   * SIGCHLD, leaves no trace in any process's times the sampler reads). */
  if (!spec->cgroup->active) {
    int fd = sr_sampler_cpu_counter_open(s->init.pid);
    s->cpu_counter_fd = fd < 0 ? -1 : fd;
  }
  /* The -1 stored keeps the _cleanup_close_ handlers from closing again;
   * clang 14's dead-store check does not model those handlers.
   * NOLINTBEGIN(clang-analyzer-deadcode.DeadStores) */
  sync_child = safe_close(sync_child);
  out_w = safe_close(out_w);
  err_w = safe_close(err_w);
  in_r = safe_close(in_r);
  /* NOLINTEND(clang-analyzer-deadcode.DeadStores) */
  if (fcntl(out_r, F_SETFL, O_NONBLOCK) < 0 ||
      fcntl(err_r, F_SETFL, O_NONBLOCK) < 0 ||
      fcntl(s->sync_fd, F_SETFL, O_NONBLOCK) < 0)
    r = sr_error_layer(err, "logs", errno, "O_NONBLOCK");
  else if (in_w >= 0 &&
           (r = sr_stdinpump_start(&s->stdin_pump, STDIN_FILENO, in_w)) < 0)
    r = sr_error_layer(err, "fds", -r, "--stdin");
  else
    r = release_init(s, err);
  if (s->stdin_pump.out_fd == in_w)
    (void)TAKE_FD(in_w); /* the pump's now */
  if (r < 0) {
    kill_and_reap(s);
    return r;
  }
  s->logs.in_fd[0] = TAKE_FD(out_r);
  s->logs.in_fd[1] = TAKE_FD(err_r);
  return 0;
}

/* ------------------------------------------------------------ supervise */

static int emit_limit(struct sr_supervisor *s, const char *limit,
                      uint64_t value, struct sr_error *err) {
  return sr_audit_emit(
      s->spec->audit, "limit_exceeded",
      json_pack("{s:s, s:I}", "limit", limit, "limit_value", (json_int_t)value),
      err);
}

/* The sampler starts once the skill runs: its first tick comes
 * SR_SAMPLER_MIN_MS after init said the skill started, and opens the
 * sampler then (the sandbox's mounts exist), so that nothing of it delays
 * the launch, and a skill over by then (/bin/true) costs it nothing. */
static int start_sampling(struct sr_supervisor *s, struct sr_error *err) {
  int r;

  if (s->spec->cgroup->active || s->sample_ms)
    return 0;
  s->sample_ms = SR_SAMPLER_MIN_MS;
  r = arm_timer(s->sample_fd, s->sample_ms, s->sample_ms);
  if (r < 0)
    return sr_error_layer(err, "supervisor", -r, "sampler timer");
  return 0;
}

/* The first tick: the sampler itself. */
static int open_sampler(struct sr_supervisor *s, struct sr_error *err) {
  int r = sr_sampler_open(&s->sampler, s->init.pid, err);

  if (r < 0 && sr_sampler_exiting(s->init.pid)) {
    /* The skill is over and init tears the sandbox down: its rusage will
     * have the figures. */
    sr_error_clear(err);
    sr_sampler_close(&s->sampler);
    s->sampler_gone = true;
    return 0;
  }
  if (r < 0) {
    kill_tree(s); /* nothing can limit it: stop it */
    return r;
  }
  s->sampling = true;
  s->last_sample_ms = sr_now_mono_ms();
  s->last_memory = 0;
  return 0;
}

/* ------------------------------------------------------------ egress proxy */

/* A warning about the network (source "network"). */
static int net_warning(struct sr_supervisor *s, const char *msg,
                       struct sr_error *err) {
  return sr_audit_emit(s->spec->audit, "warning",
                       json_pack("{s:s, s:o}", "source", "network", "message",
                                 sr_json_text(msg)),
                       err);
}

static int emit_connection(struct sr_supervisor *s,
                           const struct sr_proxy_event *ev,
                           struct sr_error *err) {
  struct sr_net_stats *n = &s->net;
  json_t *f;

  n->connections++;
  n->denied += !ev->allowed;
  n->bytes_out += ev->bytes_out;
  n->bytes_in += ev->bytes_in;
  /* A skill that opens connections in a loop must not flood the record:
   * past the cap they are only counted. */
  if (n->events >= SR_NET_EVENTS_MAX) {
    n->suppressed++;
    return 0;
  }
  n->events++;
  f = sr_proxy_event_json(ev);
  if (!f)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "audit",
                        "network_connect");
  return sr_audit_emit(s->spec->audit, "network_connect", f, err);
}

static int on_proxy_event(struct sr_supervisor *s,
                          const struct sr_proxy_event *ev,
                          struct sr_error *err) {
  char msg[SR_PROXY_TEXT_MAX + 64];

  switch (ev->type) {
  case SR_PROXY_REC_CONNECTION:
    return emit_connection(s, ev, err);
  case SR_PROXY_REC_EGRESS_LIMIT:
    return emit_limit(s, "egress", ev->limit, err);
  case SR_PROXY_REC_SUMMARY:
    /* The proxy's own totals also count what its records could not say. */
    s->net.summary = true;
    s->net.connections = ev->connections;
    s->net.denied = ev->denied;
    s->net.bytes_out = ev->total_out;
    s->net.bytes_in = ev->total_in;
    s->net.records_dropped = ev->dropped;
    return 0;
  case SR_PROXY_REC_FATAL:
    snprintf(msg, sizeof(msg), "the egress proxy stopped: %s", ev->message);
    return net_warning(s, msg, err);
  default:
    return 0;
  }
}

/* sr_proxy_stop's callback: the records still to come. */
static void proxy_record(const struct sr_proxy_event *ev, void *data) {
  struct sr_supervisor *s = data;

  if (!sr_error_is_set(&s->net_err))
    (void)on_proxy_event(s, ev, &s->net_err);
}

/* The proxy ended, or said something that does not decode, while the
 * skill runs: it is stopped (its listeners close with it, so the
 * sandbox's connections are refused from now on) and the run goes on. */
static int proxy_lost(struct sr_supervisor *s, int why, struct sr_error *err) {
  char msg[160];

  (void)sr_proxy_stop(&s->proxy, 0, proxy_record, s);
  if (sr_error_is_set(&s->net_err)) {
    *err = s->net_err;
    return -EIO;
  }
  snprintf(msg, sizeof(msg),
           "the egress proxy ended during the run (%s); the sandbox's "
           "connections are refused from now on",
           why == -EPIPE ? "it exited" : strerrorname_np(-why));
  return net_warning(s, msg, err);
}

static int on_proxy(struct sr_supervisor *s, struct sr_error *err) {
  for (;;) {
    struct sr_proxy_event ev = {0};
    int r = sr_proxy_recv(s->proxy.record_fd, &ev);

    if (r == -EAGAIN)
      return 0;
    if (r < 0)
      return proxy_lost(s, r, err);
    r = on_proxy_event(s, &ev, err);
    if (r < 0)
      return r;
  }
}

/* A socket init says is a listener of the proxy: a listening TCP socket. */
static bool is_listener(int fd) {
  int v = 0, dom = 0;
  socklen_t len = sizeof(v), dlen = sizeof(dom);

  return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v == 1 &&
         getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dlen) == 0 &&
         (dom == AF_INET || dom == AF_INET6);
}

/*
 * A listener from init; after the last one (value 0), the proxy is started
 * on them and init is told to release the skill.  The proxy keeps its own
 * copies of the listeners: the supervisor closes its.
 */
static int on_proxy_listener(struct sr_supervisor *s, int32_t more, int *passed,
                             struct sr_error *err) {
  const struct sr_launch *spec = s->spec;
  const struct sr_policy *p = spec->policy;
  struct sr_proxy_config cfg;
  int r;

  if (!spec->net_allow || s->proxy_spawned || *passed < 0 ||
      s->n_proxy_listen >= SR_ARRAY_SIZE(s->proxy_listen) || more < 0 ||
      (size_t)more >= SR_ARRAY_SIZE(s->proxy_listen) - s->n_proxy_listen ||
      !is_listener(*passed))
    return sr_error_layer(err, "proxy", EPROTO,
                          "unexpected egress proxy listener from the sandbox");
  s->proxy_listen[s->n_proxy_listen++] = TAKE_FD(*passed);
  if (more > 0)
    return 0;
  memset(&cfg, 0, sizeof(cfg));
  cfg.allow = spec->net_allow;
  cfg.hosts = spec->net_hosts;
  cfg.listen_fds = s->proxy_listen;
  cfg.n_listen = s->n_proxy_listen;
  /* The table's largest cap is the proxy's (limit.c). */
  cfg.max_connections =
      p->limits[SR_LIM_NET_CONNECTIONS].value < SR_PROXY_MAX_CONNECTIONS
          ? (unsigned)p->limits[SR_LIM_NET_CONNECTIONS].value
          : SR_PROXY_MAX_CONNECTIONS;
  cfg.max_egress_bytes = p->limits[SR_LIM_NET_EGRESS].value;
  /* As root, the sandbox user's host ids (the run's uid-pool slot): the
   * proxy holds nothing of root's. */
  cfg.uid = sr_root_mode() ? spec->host_uid : (uid_t)-1;
  cfg.gid = sr_root_mode() ? spec->host_gid : (gid_t)-1;
  r = sr_proxy_spawn(&cfg, &s->proxy, err);
  for (size_t i = 0; i < s->n_proxy_listen; i++)
    s->proxy_listen[i] = safe_close(s->proxy_listen[i]);
  if (r < 0)
    return r;
  s->proxy_spawned = true;
  if (sr_sync_send(s->sync_fd, SR_SYNC_PROXY_READY, 0, NULL, -1) < 0)
    return sr_error_layer(err, "sync", errno, "cannot release the sandbox");
  return 0;
}

/* After the skill: the proxy closes what is open and reports it, then the
 * totals (network_summary).  Before the run is collected. */
static int stop_proxy(struct sr_supervisor *s, struct sr_error *err) {
  const struct sr_net_stats *n = &s->net;

  if (!s->proxy_spawned)
    return 0;
  s->proxy_spawned = false;
  (void)sr_proxy_stop(&s->proxy, PROXY_STOP_MS, proxy_record, s);
  if (sr_error_is_set(&s->net_err)) {
    *err = s->net_err;
    return -EIO;
  }
  return sr_audit_emit(
      s->spec->audit, "network_summary",
      json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:b}", "connections",
                (json_int_t)n->connections, "denied", (json_int_t)n->denied,
                "bytes_out", (json_int_t)n->bytes_out, "bytes_in",
                (json_int_t)n->bytes_in, "records_dropped",
                (json_int_t)n->records_dropped, "events_suppressed",
                (json_int_t)n->suppressed, "complete", n->summary),
      err);
}

/* The skill's process could not have the filter with its listener (a
 * filter above skillrun has one: a task may have only one) and loaded the
 * same allowlist answering refusals itself. */
static int emit_seccomp_plain(struct sr_supervisor *s, struct sr_error *err) {
  char msg[256];

  snprintf(msg, sizeof(msg),
           "a seccomp filter above skillrun already has a listener: "
           "refused system calls are answered by the filter itself "
           "(EPERM, or ENOSYS) without being reported "
           "(filter loaded: %s)",
           sr_seccomp_plain_digest(s->spec->seccomp));
  return sr_audit_emit(s->spec->audit, "warning",
                       json_pack("{s:s, s:s}", "reason",
                                 "seccomp_listener_busy", "message", msg),
                       err);
}

/*
 * The CPU budget spent by the time the skill ended.  The supervisor's tick
 * sees the budget run out (every 50 ms) unless the skill ends first:
 * within a tick of it, or while the supervisor could not look (skillrun
 * stopped by job control, Ctrl-Z, or SIGSTOP while the skill ran on, or
 * not scheduled), when the per-process backstop, RLIMIT_CPU a second past
 * the budget (child.c), may have killed it with SIGKILL.  A skill whose
 * tree had spent the budget (the CPU time init reaped: the skill's, and
 * that of processes it left behind; without a cgroup, or the kernel's
 * count of the tree, which also has the children nobody reaped) was
 * stopped by the budget,
 * however late this is seen and whatever it did after: not killed by some
 * signal, nor a success with a CPU time over its budget (skillrun(1) EXIT
 * STATUS: 137).
 */
static int on_skill_exited(struct sr_supervisor *s, uint64_t cpu_usec,
                           struct sr_error *err) {
  const struct sr_policy *p = s->spec->policy;
  const uint64_t budget = p->limits[SR_LIM_CPU_SECONDS].value;

  if (s->spec->enf->by[SR_LIM_CPU_SECONDS] == SR_ENF_NONE)
    return 0;
  /* Without a cgroup, also the kernel's count of the tree: a child the
   * kernel reaped itself (its parent ignoring SIGCHLD) added its time to
   * no parent's, so not to what init reaped.  Init has reaped the rest:
   * every task of the tree has exited and added its count. */
  if (s->cpu_counter_fd >= 0) {
    uint64_t counted;
    if (sr_sampler_cpu_counter_read(s->cpu_counter_fd, &counted) == 0 &&
        counted > cpu_usec)
      cpu_usec = counted;
  }
  /* A deadline passed before the end is the wall clock's (on_timeout). */
  if (s->timed_out || s->exited_ns > s->deadline_ns || s->cpu_exceeded ||
      s->memory_exceeded || s->pids_exceeded || cpu_usec < budget * 1000000ULL)
    return 0;
  s->cpu_exceeded = true;
  return sr_audit_emit(s->spec->audit, "limit_exceeded",
                       json_pack("{s:s, s:I, s:I}", "limit", "cpu",
                                 "limit_value", (json_int_t)budget, "observed",
                                 (json_int_t)(cpu_usec / 1000000ULL)),
                       err);
}

/* One message from init; 1 when there may be more. */
static int sync_one(struct sr_supervisor *s, struct sr_error *err) {
  struct sr_sync_msg m;
  int passed = -1;
  bool first;
  int r = sr_sync_recv(s->sync_fd, &m, &passed);

  if (r == -EPIPE || r == -ECONNRESET) {
    s->sync_eof = true;
    return 0;
  }
  if (r == -EAGAIN)
    return 0;
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "sync",
                        "sync socket with the sandbox");
  switch (m.type) {
  case SR_SYNC_ERROR:
    if (!sr_error_is_set(&s->setup_err))
      s->setup_err = m.err;
    break;
  case SR_SYNC_READY:
    first = !s->ready;
    s->ready = true;
    if (passed >= 0 && s->outputs_fd < 0)
      s->outputs_fd = TAKE_FD(passed);
    r = start_sampling(s, err);
    if (r < 0)
      return r;
    r = sr_audit_emit(
        s->spec->audit, "state_changed",
        json_pack("{s:s, s:i}", "state", "running", "pid_in_sandbox", m.value),
        err);
    if (r < 0)
      return r;
    if (first && s->spec->while_running)
      s->spec->while_running(s->spec->while_mounting_ctx);
    break;
  case SR_SYNC_EXEC_FAILED:
    s->exec_errno = m.value;
    /* The skill's process wrote it, so it is only shown, as one line. */
    snprintf(s->exec_msg, sizeof(s->exec_msg), "%s", m.err.msg);
    s->exec_msg[strcspn(s->exec_msg, "\n\r")] = '\0';
    break;
  case SR_SYNC_EXITED:
    s->have_status = true;
    s->wait_status = m.value;
    s->exited_ns = m.mono_ns;
    r = on_skill_exited(s, m.cpu_usec, err);
    if (r < 0)
      return r;
    break;
  case SR_SYNC_PROXY_LISTENER:
    r = on_proxy_listener(s, m.value, &passed, err);
    if (r < 0) {
      safe_close(passed);
      return r;
    }
    break;
  case SR_SYNC_SECCOMP_LISTENER:
    /* Without it refused calls would answer ENOSYS unreported (still
     * refused), and a run that reports refusals does not go on silently
     * without. */
    r = passed >= 0
            ? sr_denials_attach(&s->denials, TAKE_FD(passed), s->spec->seccomp)
            : -EBADMSG;
    if (r < 0)
      return sr_error_layer(err, "seccomp", -r,
                            "cannot take the seccomp listener");
    break;
  case SR_SYNC_WARNING:
    m.err.msg[sizeof(m.err.msg) - 1] = '\0';
    m.err.layer[sizeof(m.err.layer) - 1] = '\0';
    r = sr_audit_emit(s->spec->audit, "warning",
                      json_pack("{s:s, s:o}", "reason",
                                m.err.layer[0] ? m.err.layer : "init",
                                "message", sr_json_text(m.err.msg)),
                      err);
    if (r < 0)
      return r;
    break;
  case SR_SYNC_SECCOMP_PLAIN:
    s->seccomp_plain = true;
    r = emit_seccomp_plain(s, err);
    if (r < 0)
      return r;
    break;
  default:
    break;
  }
  safe_close(passed);
  return 1;
}

/* Every message queued: a supervisor that was stopped finds the skill's
 * exit behind its start, and must see both before its timers. */
static int on_sync(struct sr_supervisor *s, struct sr_error *err) {
  int r = 0;

  while (!s->sync_eof && (r = sync_one(s, err)) > 0)
    ;
  return s->sync_eof ? 0 : r;
}

/* SIGTERM to the tree (init sends it to every process of the sandbox),
 * and SIGKILL after kill-grace (EV_GRACE). */
static int terminate_tree(struct sr_supervisor *s, struct sr_error *err) {
  int r;

  if (s->init.exited)
    return 0;
  signal_init(&s->init, SIGTERM);
  r = arm_timer(s->grace_fd, s->spec->policy->limits[SR_LIM_KILL_GRACE].value,
                0);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "timer", "grace timer");
  return 0;
}

static int on_signal(struct sr_supervisor *s, struct sr_error *err) {
  struct signalfd_siginfo si;
  ssize_t n = read(s->signal_fd, &si, sizeof(si));
  int r;

  if (n != (ssize_t)sizeof(si))
    return 0;
  if (si.ssi_signo == SIGCHLD) {
    s->strangers_due = s->pid1;
    if (s->init.pidfd < 0)
      (void)reap_init(&s->init, false); /* with a pidfd, its POLLIN tells */
    return 0;
  }
  /* The same signal again (a second Ctrl-C) stops waiting.  Another one
   * meanwhile does not cut kill-grace short: a service manager sends
   * SIGHUP right behind SIGTERM (systemd's SendSIGHUP=, a login
   * session's scope), and a skill's cleanup after SIGTERM is its due. */
  if (s->cancel_sig != 0) {
    if ((int)si.ssi_signo == s->cancel_sig)
      kill_tree(s);
    return 0;
  }
  s->cancel_sig = (int)si.ssi_signo;
  sr_audit_cancelling(s->spec->audit);
  /* The skill gets its SIGTERM first: a stream whose reader stalls holds
   * the record's line, not the skill's kill-grace.  A timeout already on
   * its way to SIGKILL keeps its grace period. */
  if (!s->timed_out) {
    r = terminate_tree(s, err);
    if (r < 0)
      return r;
  }
  return sr_audit_emit(s->spec->audit, "state_changed",
                       json_pack("{s:s, s:i}", "state", "cancelling", "signal",
                                 (int)si.ssi_signo),
                       err);
}

static void drain_timer(int fd) {
  uint64_t ticks;
  ssize_t n = read(fd, &ticks, sizeof(ticks));
  (void)n; /* nothing to do on EAGAIN */
}

/*
 * Past the cap, the pipes go to init, which drains and counts them inside
 * the run's cgroup (init.c): a flood's discarding costs the run, not the
 * supervisor.  Best effort: a stream not handed over is drained here as
 * before.  Not once init has reported the skill's exit (it drains no
 * more) or is gone.
 */
static void hand_logs_to_init(struct sr_supervisor *s) {
  _cleanup_close_ int fd = -1;

  if (s->init.exited || s->have_status || s->sync_eof)
    return;
  fd = sr_logpump_share_counts(&s->logs);
  if (fd < 0 ||
      sr_sync_send(s->sync_fd, SR_SYNC_DISCARD_COUNTS, 0, NULL, fd) < 0)
    return;
  for (int st = 0; st < 2; st++)
    if (s->logs.in_fd[st] >= 0 && sr_sync_send(s->sync_fd, SR_SYNC_DISCARD, st,
                                               NULL, s->logs.in_fd[st]) == 0)
      sr_logpump_hand(&s->logs, st);
}

/*
 * Log wakeups, rationed: a stream that brought less than LOG_REST_BYTES
 * within LOG_REST_MS of its previous wakeup is not polled for LOG_REST_MS.
 * A skill writing one byte per write(2) (or one O_DIRECT packet, which
 * each read(2) returns alone) woke the supervisor once per write, outside
 * the run's cgroup and CPU budget: as much CPU as the skill spent.  Now
 * such a writer finds the pipe full and waits; a writer of lines now and
 * then never rests, and one that writes in bulk brings more per wakeup.
 */
#define LOG_REST_BYTES 4096
#define LOG_REST_MS 2

static uint64_t log_moved(const struct sr_logpump *lp, int stream) {
  return lp->kept[stream] + lp->dropped[stream];
}

static void ration_log_wakeups(struct sr_supervisor *s, int stream,
                               uint64_t moved) {
  uint64_t now = sr_now_mono_ns();
  bool soon = now - s->log_last_ns[stream] < LOG_REST_MS * 1000000ull;

  s->log_last_ns[stream] = now;
  if (moved >= LOG_REST_BYTES || !soon || s->logs.in_fd[stream] < 0)
    return;
  /* Best effort: without the timer the stream is polled as before. */
  if (s->log_wake_fd < 0)
    s->log_wake_fd =
        timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (s->log_wake_fd >= 0 && arm_timer(s->log_wake_fd, LOG_REST_MS, 0) == 0)
    s->log_resting[stream] = true;
}

/* --log-passthrough stopped (logpump.c, pass_write): said once, on the
 * record; the caller's standard error is what failed. */
static int passthrough_stopped(struct sr_supervisor *s, struct sr_error *err) {
  char msg[200];

  if (s->logs.pass_err == 0 || s->pass_warned)
    return 0;
  s->pass_warned = true;
  /* Nor are warnings copied there any more: that write would wait for
   * the very reader that stalled (the record keeps them). */
  sr_audit_echo_warnings(s->spec->audit, -1);
  if (s->logs.pass_err == ETIMEDOUT)
    snprintf(msg, sizeof(msg),
             "--log-passthrough stopped: standard error took none of the "
             "skill's output for %d s in all (the logs keep it)",
             SR_LOG_PASS_STALL_MS / 1000);
  else if (s->logs.pass_err == ECANCELED)
    snprintf(msg, sizeof(msg),
             "--log-passthrough stopped: the run was cancelled while "
             "standard error took none of the skill's output (the logs "
             "keep it)");
  else
    snprintf(msg, sizeof(msg),
             "--log-passthrough stopped: cannot write to standard error "
             "(%s; the logs keep the skill's output)",
             strerrorname_np(s->logs.pass_err) ?: "unknown error");
  return sr_audit_emit(
      s->spec->audit, "warning",
      json_pack("{s:s, s:s}", "reason", "passthrough_stopped", "message", msg),
      err);
}

/* --stdin: reading the caller's input failed (ECONNRESET from a socket
 * whose writer reset it, EIO from a terminal that hung up): the skill saw
 * the end of its input there, but it was not the input's end.  Said on
 * the record, with the errno; execution_completed's stdin says complete
 * false (skillrun(1), --stdin). */
static int stdin_read_failed(struct sr_supervisor *s, int e,
                             struct sr_error *err) {
  char msg[200];
  const char *name = strerrorname_np(e);

  snprintf(msg, sizeof(msg),
           "--stdin: cannot read standard input (%s) after %llu bytes: the "
           "skill's input ends there, not at the input's end",
           name ?: "unknown error", (unsigned long long)s->stdin_pump.bytes);
  return sr_audit_emit(s->spec->audit, "warning",
                       json_pack("{s:s, s:s, s:o}", "reason",
                                 "stdin_read_failed", "message", msg, "errno",
                                 name ? json_string(name) : json_null()),
                       err);
}

static int on_log(struct sr_supervisor *s, int stream, struct sr_error *err) {
  bool hit = false;
  uint64_t before = log_moved(&s->logs, stream);
  int r = sr_logpump_drain(&s->logs, stream, &hit);

  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "logs",
                        "cannot write the skill's log");
  r = passthrough_stopped(s, err);
  if (r < 0)
    return r;
  ration_log_wakeups(s, stream, log_moved(&s->logs, stream) - before);
  if (!hit)
    return 0;
  hand_logs_to_init(s);
  r = sr_audit_emit(s->spec->audit, "log_truncated",
                    json_pack("{s:s, s:I}", "stream",
                              stream == SR_STREAM_STDOUT ? "stdout" : "stderr",
                              "cap", (json_int_t)s->logs.cap),
                    err);
  return r < 0 ? r : emit_limit(s, "log", s->logs.cap, err);
}

static int on_timeout(struct sr_supervisor *s, struct sr_error *err) {
  int r;

  drain_timer(s->timeout_fd);
  /* A cancellation already on its way to SIGKILL stopped the run first:
   * it keeps its status and its grace period. */
  if (s->init.exited || s->timed_out || s->cancel_sig != 0)
    return 0;
  /* What init said before the deadline counts, however late this wakeup
   * (a supervisor stopped with SIGSTOP, descheduled, suspended). */
  r = on_sync(s, err);
  if (r < 0)
    return r;
  if (s->have_status && s->exited_ns <= s->deadline_ns)
    return 0;
  s->timed_out = true;
  r = emit_limit(s, "wall", s->spec->policy->limits[SR_LIM_TIMEOUT].value, err);
  if (r < 0)
    return r;
  return s->have_status ? 0 : terminate_tree(s, err);
}

/* A memory, CPU or pids limit reached: the whole tree is killed at once
 * and the limit recorded with what was seen, when that is a figure
 * (UNSEEN: the kernel acted, an OOM kill); the first one only: after the
 * kill the tree is going away. */
#define UNSEEN UINT64_MAX
static int limit_reached(struct sr_supervisor *s, enum sr_limit_id id,
                         uint64_t observed, struct sr_error *err) {
  static const char *const names[SR__LIM_MAX] = {
      [SR_LIM_MEMORY] = "memory",
      [SR_LIM_CPU_SECONDS] = "cpu",
      [SR_LIM_PIDS] = "pids",
  };
  const struct sr_policy *p = s->spec->policy;

  if (s->cpu_exceeded || s->memory_exceeded || s->pids_exceeded)
    return 0;
  if (id == SR_LIM_CPU_SECONDS)
    s->cpu_exceeded = true;
  else if (id == SR_LIM_MEMORY)
    s->memory_exceeded = true;
  else
    s->pids_exceeded = true;
  kill_tree(s);
  return sr_audit_emit(
      s->spec->audit, "limit_exceeded",
      observed == UNSEEN
          ? json_pack("{s:s, s:I}", "limit", names[id], "limit_value",
                      (json_int_t)p->limits[id].value)
          : json_pack("{s:s, s:I, s:I}", "limit", names[id], "limit_value",
                      (json_int_t)p->limits[id].value, "observed",
                      (json_int_t)observed),
      err);
}

/*
 * The bytes queued on TCP connections of the run's network namespace that
 * no process accepted (sockq.h) into *bytes: 0 before the skill started
 * (init may not have joined the namespace yet) and in the host's network;
 * `fresh`: read now, whatever the backoff.  Files that cannot be opened or
 * read leave the run unlimited: an error, which stops it, unless init is
 * on its way out.
 */
static int tick_sockq(struct sr_supervisor *s, bool fresh, uint64_t *bytes,
                      struct sr_error *err) {
  int r;

  *bytes = 0;
  if (!s->ready || s->spec->policy->network == SR_NET_HOST)
    return 0;
  if (!s->sockq_open) {
    r = sr_sockq_open(&s->sockq, s->init.pid);
    if (r >= 0)
      s->sockq_open = true;
  } else {
    r = 0;
  }
  if (r >= 0)
    r = sr_sockq_read(&s->sockq, fresh, bytes);
  if (r < 0 && sr_sampler_exiting(s->init.pid))
    return 0;
  if (r < 0) {
    kill_tree(s);
    return sr_error_layer(err, "supervisor", -r,
                          "cannot read the sandbox's TCP connections");
  }
  return 0;
}

/* The cgroup's counters: the CPU budget is the supervisor's to enforce;
 * an OOM kill or a fork refused at pids.max ends the run (cgroup v1 kills
 * one process on OOM, v2 the whole leaf; either way the rest goes). */
static int tick_cgroup(struct sr_supervisor *s, struct sr_error *err) {
  const struct sr_policy *p = s->spec->policy;
  struct sr_cgroup_counters c;
  uint64_t unheld;
  int r = tick_sockq(s, false, &unheld, err);

  if (r < 0)
    return r;
  if (sr_cgroup_poll(s->spec->cgroup, unheld, &c) < 0)
    return 0; /* read again at the next tick; collect has the last word */
  /* Over with an earlier reading of the queues: the skill may have
   * accepted them since, and the cgroup charged them; read them again
   * before the run is stopped on the figure. */
  if (c.memory_over > 0 && s->sockq.stale) {
    r = tick_sockq(s, true, &unheld, err);
    if (r < 0)
      return r;
    if (sr_cgroup_poll(s->spec->cgroup, unheld, &c) < 0)
      return 0;
  }
  if (c.pids_current > s->pids_seen)
    s->pids_seen = c.pids_current;
  if (c.cpu_usec >= p->limits[SR_LIM_CPU_SECONDS].value * 1000000ULL)
    return limit_reached(s, SR_LIM_CPU_SECONDS, c.cpu_usec / 1000000ULL, err);
  if (c.oom_kill > 0)
    return limit_reached(s, SR_LIM_MEMORY, UNSEEN, err);
  if (c.memory_over > 0)
    return limit_reached(s, SR_LIM_MEMORY, c.memory_over, err);
  if (c.pids_max_hit > 0)
    return limit_reached(s, SR_LIM_PIDS, c.pids_current, err);
  return 0;
}

/* The next interval: a quarter of the memory headroom at the growth rate,
 * at most twice the last one, between SR_SAMPLER_MIN_MS and
 * SR_SAMPLER_INTERVAL_MS.  The rate is the growth seen, remembered at half
 * weight per sample: a skill that grows in bursts stays watched closely
 * between them.  What grows between two samples is not seen, so a skill
 * is sampled often from its start and while it grows fast, and backs off
 * to the interval while it does not. */
static unsigned next_interval(struct sr_supervisor *s, uint64_t memory,
                              uint64_t limit) {
  uint64_t now = sr_now_mono_ms();
  uint64_t dt = now > s->last_sample_ms ? now - s->last_sample_ms : 1;
  uint64_t grown = memory > s->last_memory ? memory - s->last_memory : 0;
  uint64_t headroom = limit > memory ? limit - memory : 0;
  uint64_t ms = (uint64_t)s->sample_ms * 2;

  s->last_sample_ms = now;
  s->last_memory = memory;
  s->memory_rate /= 2;
  if (grown / dt > s->memory_rate)
    s->memory_rate = grown / dt;
  if (s->memory_rate > 0 && headroom / 4 / s->memory_rate < ms)
    ms = headroom / 4 / s->memory_rate;
  if (ms < SR_SAMPLER_MIN_MS)
    return SR_SAMPLER_MIN_MS;
  return ms > SR_SAMPLER_INTERVAL_MS ? SR_SAMPLER_INTERVAL_MS : (unsigned)ms;
}

/* The sampler's figures against the limits. */
static int tick_sampler(struct sr_supervisor *s, struct sr_error *err) {
  const struct sr_policy *p = s->spec->policy;
  const uint64_t mem = p->limits[SR_LIM_MEMORY].value;
  struct sr_sample x;
  uint64_t unheld;
  unsigned want;
  int r = sr_sampler_sample(&s->sampler, &x);

  if (r < 0 && sr_sampler_exiting(s->init.pid))
    return 0; /* the tree is going: its init's last message follows */
  if (r < 0) {
    /* A tree it can no longer see is a tree nothing limits: stop it. */
    kill_tree(s);
    return sr_error_layer(err, "supervisor", -r,
                          "cannot sample the sandbox's processes");
  }
  if (s->cpu_counter_fd >= 0) {
    uint64_t counted;
    /* A counter that cannot be read is the tree's times alone. */
    if (sr_sampler_cpu_counter_read(s->cpu_counter_fd, &counted) == 0 &&
        counted > x.cpu_usec)
      x.cpu_usec = counted;
  }
  r = tick_sockq(s, false, &unheld, err);
  if (r >= 0 && x.memory + unheld > mem && s->sockq.stale)
    r = tick_sockq(s, true, &unheld, err); /* as in tick_cgroup */
  if (r < 0)
    return r;
  x.memory += unheld;
  if (x.cpu_usec >= p->limits[SR_LIM_CPU_SECONDS].value * 1000000ULL)
    return limit_reached(s, SR_LIM_CPU_SECONDS, x.cpu_usec / 1000000ULL, err);
  if (x.memory > mem)
    return limit_reached(s, SR_LIM_MEMORY, x.memory, err);
  /* RLIMIT_NPROC lets the tree reach the limit, never pass it: reaching
   * it is the fork that would have failed (skillrun(1) LIMITS). */
  if (x.pids >= p->limits[SR_LIM_PIDS].value)
    return limit_reached(s, SR_LIM_PIDS, x.pids, err);
  want = next_interval(s, x.memory, mem);
  if (want != s->sample_ms) {
    s->sample_ms = want;
    r = arm_timer(s->sample_fd, want, want);
    if (r < 0)
      return sr_error_layer(err, "supervisor", -r, "sampler timer");
  }
  return 0;
}

static int on_sample(struct sr_supervisor *s, struct sr_error *err) {
  drain_timer(s->sample_fd);
  /* After init reported the skill's status the tree is gone or going. */
  if (s->init.exited || s->have_status || s->tree_killed || s->sampler_gone)
    return 0;
  if (s->spec->cgroup->active)
    return tick_cgroup(s, err);
  if (!s->sampling) {
    int r = open_sampler(s, err);
    if (r < 0 || !s->sampling)
      return r;
  }
  return tick_sampler(s, err);
}

/*
 * Done when the logs and the sync socket are at EOF (every message read:
 * the status may still be queued when init has exited) and init has either
 * exited or said the skill's status: it sends that only after killing and
 * reaping everything else in its namespace, so what is left of it is its
 * own exit (the namespaces' teardown, a grace period or more), which the
 * collect stage overlaps with the harvest and then waits for.
 */
static bool loop_done(const struct sr_supervisor *s) {
  return (s->init.exited || s->have_status) && s->sync_eof &&
         s->logs.in_fd[0] < 0 && s->logs.in_fd[1] < 0;
}

/* In the order they are handled within one wakeup: the sync socket before
 * the logs, the signals before the timers, init's exit last, so that a
 * deadline that passed is seen before the exit that came with it. */
enum {
  EV_SYNC,
  EV_OUT,
  EV_ERR,
  EV_LOG_WAKE,
  EV_STDIN_IN,
  EV_STDIN_OUT,
  EV_PROXY,
  EV_SIGNAL,
  EV_TIMEOUT,
  EV_GRACE,
  EV_SAMPLE,
  EV_DENIALS,
  EV_DENIALS_WAKE,
  EV_PIDFD,
  EV_AUDIT,
  EV__MAX
};

/* The fds to wait on now, in handling order; kind[i] says what pfd[i] is. */
static int poll_set(const struct sr_supervisor *s, struct pollfd *pfd,
                    int *kind) {
  int n = 0;

#define ADD(k, f)                                                              \
  do {                                                                         \
    pfd[n] = (struct pollfd){.fd = (f), .events = POLLIN};                     \
    kind[n++] = (k);                                                           \
  } while (0)
  if (!s->sync_eof)
    ADD(EV_SYNC, s->sync_fd);
  if (sr_logpump_poll_fd(&s->logs, 0) >= 0 && !s->log_resting[0])
    ADD(EV_OUT, sr_logpump_poll_fd(&s->logs, 0));
  if (sr_logpump_poll_fd(&s->logs, 1) >= 0 && !s->log_resting[1])
    ADD(EV_ERR, sr_logpump_poll_fd(&s->logs, 1));
  if (s->log_resting[0] || s->log_resting[1])
    ADD(EV_LOG_WAKE, s->log_wake_fd);
  if (sr_stdinpump_read_fd(&s->stdin_pump) >= 0)
    ADD(EV_STDIN_IN, sr_stdinpump_read_fd(&s->stdin_pump));
  if (sr_stdinpump_write_fd(&s->stdin_pump) >= 0) {
    pfd[n] = (struct pollfd){.fd = sr_stdinpump_write_fd(&s->stdin_pump),
                             .events = POLLOUT};
    kind[n++] = EV_STDIN_OUT;
  }
  if (s->proxy.record_fd >= 0)
    ADD(EV_PROXY, s->proxy.record_fd);
  ADD(EV_SIGNAL, s->signal_fd);
  ADD(EV_TIMEOUT, s->timeout_fd);
  ADD(EV_GRACE, s->grace_fd);
  ADD(EV_SAMPLE, s->sample_fd);
  /* Paused (the refused calls' budget ran out): its callers wait, blocked
   * in the kernel, until wake_fd fires. */
  if (sr_denials_listen_fd(&s->denials) >= 0)
    ADD(EV_DENIALS, sr_denials_listen_fd(&s->denials));
  if (sr_denials_wake_fd(&s->denials) >= 0)
    ADD(EV_DENIALS_WAKE, sr_denials_wake_fd(&s->denials));
  if (!s->init.exited && s->init.pidfd >= 0)
    ADD(EV_PIDFD, s->init.pidfd);
  /* No events: only its reader's departure (POLLERR, POLLHUP), which
   * stops the run now (audit_gone_due) rather than at its next event,
   * perhaps the last. */
  if (sr_audit_watch_fd(s->spec->audit) >= 0) {
    pfd[n] = (struct pollfd){.fd = sr_audit_watch_fd(s->spec->audit)};
    kind[n++] = EV_AUDIT;
  }
#undef ADD
  return n;
}

static int on_event(struct sr_supervisor *s, int kind, short revents,
                    struct sr_error *err) {
  switch (kind) {
  case EV_SYNC:
    return on_sync(s, err);
  case EV_SIGNAL:
    return on_signal(s, err);
  case EV_OUT:
    return on_log(s, SR_STREAM_STDOUT, err);
  case EV_ERR:
    return on_log(s, SR_STREAM_STDERR, err);
  case EV_LOG_WAKE:
    drain_timer(s->log_wake_fd);
    s->log_resting[0] = s->log_resting[1] = false;
    return 0;
  case EV_STDIN_IN: {
    int e = sr_stdinpump_on_readable(&s->stdin_pump);

    return e ? stdin_read_failed(s, e, err) : 0;
  }
  case EV_STDIN_OUT:
    sr_stdinpump_on_writable(&s->stdin_pump);
    return 0;
  case EV_PROXY:
    return on_proxy(s, err);
  case EV_PIDFD:
    (void)reap_init(&s->init, false);
    return 0;
  case EV_TIMEOUT:
    return on_timeout(s, err);
  case EV_GRACE:
    drain_timer(s->grace_fd);
    if (!s->init.exited)
      kill_tree(s);
    return 0;
  case EV_SAMPLE:
    return on_sample(s, err);
  case EV_DENIALS:
    sr_denials_handle(&s->denials, revents);
    return 0;
  case EV_DENIALS_WAKE:
    sr_denials_wake(&s->denials);
    return 0;
  case EV_AUDIT:
    if (sr_audit_reader_gone(s->spec->audit, revents))
      s->audit_gone_ms = sr_now_mono_ms() + SR_AUDIT_GONE_GRACE_MS;
    return 0;
  default:
    return 0;
  }
}

/*
 * The audit stream's reader went: a cancellation that comes within
 * SR_AUDIT_GONE_GRACE_MS (an orchestrator shutting down closes its end,
 * then signals) makes it the caller's, the run cancelled; otherwise, once
 * that time is up (or the loop ends: `now`), the run stops for the stream
 * it lost.  The milliseconds left to wait in *wait_ms (-1: none).
 */
static int audit_gone_due(struct sr_supervisor *s, bool now, int *wait_ms,
                          struct sr_error *err) {
  uint64_t t = sr_now_mono_ms();

  *wait_ms = -1;
  if (!s->audit_gone_ms)
    return 0;
  if (s->spec->audit->cancelling) {
    s->audit_gone_ms = 0;
    return 0;
  }
  if (!now && t < s->audit_gone_ms) {
    *wait_ms = (int)(s->audit_gone_ms - t);
    return 0;
  }
  s->audit_gone_ms = 0;
  return sr_audit_stream_lost(s->spec->audit, err);
}

static int event_loop(struct sr_supervisor *s, struct sr_error *err) {
  while (!loop_done(s)) {
    struct pollfd pfd[EV__MAX];
    int kind[EV__MAX];
    int n, wait_ms, r;

    if (s->strangers_due)
      reap_strangers(s);
    /* init drains the handed log pipes no more: the rest is read here. */
    if (s->init.exited || s->have_status)
      sr_logpump_take_back(&s->logs);
    r = audit_gone_due(s, false, &wait_ms, err);
    if (r < 0)
      return r;
    n = poll_set(s, pfd, kind);

    if (poll(pfd, (nfds_t)n, wait_ms) < 0) {
      if (errno == EINTR)
        continue;
      return sr_error_set(err, SR_EXIT_FAILED, errno, "poll", "poll");
    }
    for (int i = 0; i < n; i++) {
      if (!pfd[i].revents)
        continue;
      r = on_event(s, kind[i], pfd[i].revents, err);
      if (r < 0)
        return r;
    }
  }
  /* The skill ended within the grace: the stream is lost all the same. */
  return audit_gone_due(s, true, &(int){0}, err);
}

int sr_supervisor_run(struct sr_supervisor *s, struct sr_error *err) {
  int r = event_loop(s, err);

  if (r < 0)
    kill_and_reap(s);
  /* The proxy outlives the skill only to report its last connections; a
   * failure's own error is the one reported. */
  if (r >= 0) {
    r = stop_proxy(s, err);
  } else {
    struct sr_error ignored = {0};
    (void)stop_proxy(s, &ignored);
  }
  restore_signals(s);
  /* Whatever of --stdin was not forwarded stays unread. */
  if (s->stdin_pump.buf) {
    s->stdin_complete = sr_stdinpump_complete(&s->stdin_pump);
    if (sr_stdinpump_finish(&s->stdin_pump, s->stdin_sha256) < 0 && r >= 0)
      r = sr_error_set(err, SR_EXIT_FAILED, EIO, "stdin", "--stdin: hash");
  }
  /* The log files are complete; their figures stay in s->logs. */
  for (int i = 0; i < 2; i++) {
    s->logs.in_fd[i] = safe_close(s->logs.in_fd[i]);
    s->logs.out_fd[i] = safe_close(s->logs.out_fd[i]);
  }
  if (r < 0)
    return r;
  /* Counted while the skill ran, reported once it is over. */
  r = sr_denials_emit(&s->denials, s->spec->audit, err);
  sr_denials_done(&s->denials);
  if (r < 0)
    return r;
  if (sr_error_is_set(&s->setup_err)) {
    *err = s->setup_err;
    return -EIO;
  }
  if (!s->ready && !s->tree_killed)
    return sr_error_layer(err, "init", 0,
                          "the sandbox's init exited before starting the "
                          "skill");
  return 0;
}

void sr_supervisor_outcome(const struct sr_supervisor *s,
                           struct sr_outcome *o) {
  memset(o, 0, sizeof(*o));
  o->started = s->ready;
  o->have_status = s->have_status;
  o->wait_status = s->wait_status;
  o->exec_errno = s->exec_errno;
  o->timed_out = s->timed_out;
  o->cpu_exceeded = s->cpu_exceeded;
  o->memory_exceeded = s->memory_exceeded;
  o->pids_exceeded = s->pids_exceeded;
  o->cancel_sig = s->cancel_sig;
  o->cpu_by_rlimit = s->spec->enf->by[SR_LIM_CPU_SECONDS] == SR_ENF_RLIMIT;
}

void sr_supervisor_sampled(const struct sr_supervisor *s, uint64_t *cpu_usec,
                           uint64_t *memory_peak, uint64_t *pids_peak) {
  uint64_t cpu = s->sampler.peak.cpu_usec;

  if (s->init.have_ru) {
    const struct rusage *ru = &s->init.ru;
    uint64_t u = (uint64_t)ru->ru_utime.tv_sec * 1000000ULL +
                 (uint64_t)ru->ru_utime.tv_usec +
                 (uint64_t)ru->ru_stime.tv_sec * 1000000ULL +
                 (uint64_t)ru->ru_stime.tv_usec;
    if (u > cpu)
      cpu = u;
  }
  if (s->cpu_counted > cpu)
    cpu = s->cpu_counted;
  *cpu_usec = cpu;
  *memory_peak = s->sampler.peak.memory;
  *pids_peak = s->sampler.peak.pids;
  if (s->sampler.seq == 0) {
    /* Over before the first sample: the largest process's resident set,
     * and the two processes there always were (init, the skill's). */
    if (s->init.have_ru && s->init.ru.ru_maxrss > 0)
      *memory_peak = (uint64_t)s->init.ru.ru_maxrss * 1024;
    *pids_peak = 2;
  }
}
