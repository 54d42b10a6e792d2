/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdutil.h"
#include "init.h"
#include "logpump.h"
#include "ns.h"
#include "sha256.h"
#include "supervisor.h"

#define CPU_POLL_MS 100
/* How long init may take to exit after reporting the skill's status. */
#define INIT_EXIT_GRACE_MS 5000

/* The leaf is named "TENANT.EXECUTION" (an id itself, so cgroupfs and
 * --gc can parse it); an id pair too long for that is shortened with a
 * hash of both.  A clash only makes the second run fail to create its leaf:
 * closed, not open. */
static int leaf_name(const char *tenant, const char *exec, char **out) {
  char hex[SR_SHA256_HEX_LEN + 1];
  _cleanup_free_ char *both = NULL;

  if (strlen(tenant) + 1 + strlen(exec) <= 64)
    return asprintf(out, "%s.%s", tenant, exec) < 0 ? -ENOMEM : 0;
  if (asprintf(&both, "%s:%s", tenant, exec) < 0)
    return -ENOMEM;
  if (sr_sha256_hex(both, strlen(both), hex) < 0)
    return -EIO;
  return asprintf(out, "%.40s.%.16s", exec, hex) < 0 ? -ENOMEM : 0;
}

/*
 * Picks the host ids of the sandbox user: the caller's own as an ordinary
 * user, a free uid-pool slot as root (waiting a bounded time when all are
 * taken).
 */
static int pick_host_ids(struct sr_run *run, struct sr_error *err) {
  const unsigned base = run->policy->uid_pool_base;
  const unsigned size = run->policy->uid_pool_size;
  _cleanup_close_ int dir = -1;
  uint64_t deadline;
  unsigned start;

  run->uidpool_fd = -1;
  if (geteuid() != 0) {
    run->host_uid = getuid();
    run->host_gid = getgid();
    return 0;
  }
  if (mkdir("/run/skillrun", 0700) < 0 && errno != EEXIST)
    return sr_error_layer(err, "uid-pool", errno,
                          "cannot create /run/skillrun");
  if (mkdir(SR_UID_POOL_DIR, 0700) < 0 && errno != EEXIST)
    return sr_error_layer(err, "uid-pool", errno, "cannot create %s",
                          SR_UID_POOL_DIR);
  dir = open(SR_UID_POOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0)
    return sr_error_layer(err, "uid-pool", errno, "cannot open %s",
                          SR_UID_POOL_DIR);
  /* Start at a pid-derived slot so concurrent runs rarely contend. */
  start = (unsigned)getpid() % size;
  deadline = sr_now_mono_ms() + SR_UID_POOL_WAIT_MS;
  for (;;) {
    for (unsigned i = 0; i < size; i++) {
      unsigned id = base + (start + i) % size;
      char name[16];
      int fd;

      snprintf(name, sizeof(name), "%u", id);
      fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return sr_error_layer(err, "uid-pool", errno, "cannot open %s/%s",
                              SR_UID_POOL_DIR, name);
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        run->uidpool_fd = fd;
        run->host_uid = id;
        run->host_gid = id;
        return 0;
      }
      safe_close(fd);
    }
    if (sr_now_mono_ms() >= deadline)
      return sr_error_layer(err, "uid-pool", EAGAIN,
                            "all %u uid-pool slots (%u-%u) are in use for "
                            "%d s; try again when runs have finished",
                            size, base, base + size - 1,
                            SR_UID_POOL_WAIT_MS / 1000);
    usleep(100 * 1000);
  }
}

int sr_supervisor_prepare(struct sr_run *run, struct sr_error *err) {
  const struct sr_policy *p = run->policy;
  struct sr_enforcement *enf = &run->enf;
  _cleanup_free_ char *why = NULL;
  _cleanup_free_ char *name = NULL;
  int r;

  memset(&run->cgroup, 0, sizeof(run->cgroup));
  run->cgroup.leaf_fd = -1;
  r = pick_host_ids(run, err);
  if (r < 0)
    return r;
  if (p->cgroup != SR_CGROUP_OFF) {
    /* Leaves of runs whose supervisor was killed are removed by the next
     * run (gc skips locked, populated and young leaves); a failure here
     * must not stop this run. */
    (void)sr_cgroup_gc(run->args->cgroup_parent, NULL);
    r = leaf_name(run->tenant, run->execution_id, &name);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "cgroup", "cgroup");
    /* `strict` refuses every fallback (skillrun.profile(5)). */
    r = sr_cgroup_setup(&run->cgroup, p,
                        p->cgroup == SR_CGROUP_REQUIRE || p->strict,
                        run->args->cgroup_parent, name, &why, err);
    if (r < 0)
      return r;
  }
  if (run->cgroup.active) {
    /* cpu.stat usage_usec polled by the supervisor, then cgroup.kill. */
    enf->by[SR_LIM_MEMORY] = SR_ENF_CGROUP2;
    enf->by[SR_LIM_PIDS] = SR_ENF_CGROUP2;
    enf->by[SR_LIM_CPU_SECONDS] = SR_ENF_CGROUP2;
  } else {
    if (p->cgroup == SR_CGROUP_REQUIRE)
      return sr_error_layer(err, "cgroup", 0,
                            "no usable cgroup v2 leaf (%s) and the profile "
                            "requires one (cgroup require)",
                            why ? why : "unavailable");
    /* The weaker mechanism, named as such: per-process rlimits. */
    enf->by[SR_LIM_MEMORY] = SR_ENF_RLIMIT;
    enf->by[SR_LIM_PIDS] = SR_ENF_RLIMIT;
    enf->by[SR_LIM_CPU_SECONDS] = SR_ENF_RLIMIT;
    r = sr_audit_emit(
        run->audit, "warning",
        json_pack("{s:s, s:s}", "message",
                  "no cgroup v2 leaf: memory (RLIMIT_AS), pids (RLIMIT_NPROC) "
                  "and CPU (RLIMIT_CPU) are enforced per process with rlimits",
                  "reason",
                  p->cgroup == SR_CGROUP_OFF ? "cgroup off in the profile"
                                             : (why ? why : "unavailable")),
        err);
    if (r < 0)
      return r;
  }
  enf->by[SR_LIM_TIMEOUT] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_LOG_CAP] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_KILL_GRACE] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_INPUTS_SIZE] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_TMP_SIZE] = SR_ENF_TMPFS;
  enf->by[SR_LIM_SCRATCH_SIZE] = SR_ENF_TMPFS;
  enf->by[SR_LIM_OUTPUTS_SIZE] = SR_ENF_TMPFS;
  enf->by[SR_LIM_NOFILE] = SR_ENF_RLIMIT;
  return 0;
}

void sr_supervisor_cleanup(struct sr_run *run) {
  /* Nothing of the run may be alive when this returns. */
  sr_supervisor_reap(run);
  /* A leaf that cannot be removed now is left to --gc, with its fd and
   * paths released here. */
  (void)sr_cgroup_destroy(&run->cgroup);
  run->cgroup.leaf_fd = safe_close(run->cgroup.leaf_fd);
  free(run->cgroup.leaf_path);
  free(run->cgroup.parent_path);
  run->cgroup.leaf_path = run->cgroup.parent_path = NULL;
  /* Closing the lock frees the slot. */
  run->uidpool_fd = safe_close(run->uidpool_fd);
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

struct loop {
  struct sr_run *run;
  struct sr_error *err;
  struct sr_init_proc *init; /* &run->init */
  bool ready, have_status, sync_eof;
  int status;
  int exec_errno;
  struct sr_error setup_err;
  bool timed_out, cpu_exceeded, tree_killed;
  int cancel_sig;
  int outputs_fd;
};

/* Not reaped yet, so the pid cannot have been reused even without a
 * pidfd. */
static void signal_init(struct sr_init_proc *in, int sig) {
  if (in->pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, in->pidfd, sig, NULL, 0);
  else
    (void)kill(in->pid, sig);
}

/* Reaps init if it has exited; true when it has. */
static bool reap_init(struct sr_init_proc *in, bool block) {
  siginfo_t si;
  int flags = WEXITED | (block ? 0 : WNOHANG);
  int r;

  memset(&si, 0, sizeof(si));
  do {
    if (in->pidfd >= 0)
      r = waitid((idtype_t)P_PIDFD, (id_t)in->pidfd, &si, flags);
    else
      r = waitid(P_PID, (id_t)in->pid, &si, flags);
  } while (r < 0 && errno == EINTR);
  if ((r == 0 && si.si_pid != 0) || (r < 0 && errno == ECHILD))
    in->exited = true;
  return in->exited;
}

void sr_supervisor_reap(struct sr_run *run) {
  struct sr_init_proc *in = &run->init;

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

static void kill_tree(struct loop *l) {
  if (l->run->cgroup.active)
    (void)sr_cgroup_kill(&l->run->cgroup); /* and pid 1 below, regardless */
  /* pid 1 of the namespace: its death takes every process of it along. */
  if (!l->init->exited)
    signal_init(l->init, SIGKILL);
  l->tree_killed = true;
}

static int emit_limit(struct loop *l, const char *limit, uint64_t value) {
  return sr_audit_emit(
      l->run->audit, "limit_exceeded",
      json_pack("{s:s, s:I}", "limit", limit, "limit_value", (json_int_t)value),
      l->err);
}

static int on_sync(struct loop *l, int fd) {
  struct sr_sync_msg m;
  int passed = -1;
  int r = sr_sync_recv(fd, &m, &passed);

  if (r == -EPIPE || r == -ECONNRESET) {
    l->sync_eof = true;
    return 0;
  }
  if (r == -EAGAIN)
    return 0;
  if (r < 0)
    return sr_error_set(l->err, SR_EXIT_FAILED, -r, "sync",
                        "sync socket with the sandbox");
  switch (m.type) {
  case SR_SYNC_ERROR:
    if (!sr_error_is_set(&l->setup_err))
      l->setup_err = m.err;
    break;
  case SR_SYNC_READY:
    l->ready = true;
    if (passed >= 0 && l->outputs_fd < 0)
      l->outputs_fd = TAKE_FD(passed);
    r = sr_audit_emit(
        l->run->audit, "state_changed",
        json_pack("{s:s, s:i}", "state", "running", "pid_in_sandbox", m.value),
        l->err);
    if (r < 0)
      return r;
    break;
  case SR_SYNC_EXEC_FAILED:
    l->exec_errno = m.value;
    break;
  case SR_SYNC_EXITED:
    l->have_status = true;
    l->status = m.value;
    break;
  default:
    break;
  }
  safe_close(passed);
  return 0;
}

static int on_signal(struct loop *l, int sfd, int grace_fd) {
  struct signalfd_siginfo si;
  ssize_t n = read(sfd, &si, sizeof(si));

  if (n != (ssize_t)sizeof(si))
    return 0;
  if (si.ssi_signo == SIGCHLD) {
    if (l->init->pidfd < 0)
      (void)reap_init(l->init, false); /* with a pidfd, its POLLIN tells */
    return 0;
  }
  if (l->cancel_sig == 0) {
    const struct sr_policy *p = l->run->policy;
    int r;

    l->cancel_sig = (int)si.ssi_signo;
    r = sr_audit_emit(l->run->audit, "state_changed",
                      json_pack("{s:s, s:i}", "state", "cancelling", "signal",
                                (int)si.ssi_signo),
                      l->err);
    if (r < 0)
      return r;
    /* init forwards SIGTERM to the skill's process group; after the grace
     * period the whole tree is killed. */
    if (!l->init->exited)
      signal_init(l->init, SIGTERM);
    r = arm_timer(grace_fd, p->limits[SR_LIM_KILL_GRACE].value, 0);
    if (r < 0)
      return sr_error_set(l->err, SR_EXIT_FAILED, -r, "timer", "grace timer");
  } else {
    kill_tree(l); /* a second signal: stop waiting */
  }
  return 0;
}

static void drain_timer(int fd) {
  uint64_t ticks;
  ssize_t n = read(fd, &ticks, sizeof(ticks));
  (void)n; /* nothing to do on EAGAIN */
}

static int run_loop(struct loop *l, struct sr_logpump *lp, int sync_fd, int sfd,
                    int timeout_fd, int grace_fd, int cpu_fd) {
  const struct sr_policy *p = l->run->policy;
  uint64_t cpu_budget_usec = p->limits[SR_LIM_CPU_SECONDS].value * 1000000ULL;
  int r;

  for (;;) {
    struct pollfd pfd[8];
    int n = 0, i_sync = -1, i_sig, i_out = -1, i_err = -1, i_pid = -1;
    int i_timeout, i_grace, i_cpu = -1;

    /* Done when the logs and the sync socket are at EOF (every message
     * read: the status may still be queued when init has exited) and init
     * has either exited or said the skill's status: it sends that only
     * after killing and reaping everything else in its namespace, so what
     * is left of it is its own exit (the namespaces' teardown, a grace
     * period or more), which sr_supervise overlaps with the harvest and
     * then waits for. */
    if ((l->init->exited || l->have_status) && l->sync_eof &&
        lp->in_fd[0] < 0 && lp->in_fd[1] < 0)
      return 0;
    if (!l->sync_eof) {
      i_sync = n;
      pfd[n++] = (struct pollfd){.fd = sync_fd, .events = POLLIN};
    }
    i_sig = n;
    pfd[n++] = (struct pollfd){.fd = sfd, .events = POLLIN};
    if (lp->in_fd[0] >= 0) {
      i_out = n;
      pfd[n++] = (struct pollfd){.fd = lp->in_fd[0], .events = POLLIN};
    }
    if (lp->in_fd[1] >= 0) {
      i_err = n;
      pfd[n++] = (struct pollfd){.fd = lp->in_fd[1], .events = POLLIN};
    }
    if (!l->init->exited && l->init->pidfd >= 0) {
      i_pid = n;
      pfd[n++] = (struct pollfd){.fd = l->init->pidfd, .events = POLLIN};
    }
    i_timeout = n;
    pfd[n++] = (struct pollfd){.fd = timeout_fd, .events = POLLIN};
    i_grace = n;
    pfd[n++] = (struct pollfd){.fd = grace_fd, .events = POLLIN};
    if (cpu_fd >= 0) {
      i_cpu = n;
      pfd[n++] = (struct pollfd){.fd = cpu_fd, .events = POLLIN};
    }

    if (poll(pfd, (nfds_t)n, -1) < 0) {
      if (errno == EINTR)
        continue;
      return sr_error_set(l->err, SR_EXIT_FAILED, errno, "poll", "poll");
    }
    if (i_sync >= 0 && pfd[i_sync].revents) {
      r = on_sync(l, sync_fd);
      if (r < 0)
        return r;
    }
    for (int s = 0; s < 2; s++) {
      int i = s == 0 ? i_out : i_err;
      bool hit = false;
      if (i < 0 || !pfd[i].revents)
        continue;
      r = sr_logpump_drain(lp, s, &hit);
      if (r < 0)
        return sr_error_set(l->err, SR_EXIT_FAILED, -r, "logs",
                            "cannot write the skill's log");
      if (hit) {
        r = sr_audit_emit(l->run->audit, "log_truncated",
                          json_pack("{s:s, s:I}", "stream",
                                    s == 0 ? "stdout" : "stderr", "cap",
                                    (json_int_t)lp->cap),
                          l->err);
        if (r >= 0)
          r = emit_limit(l, "log", lp->cap);
        if (r < 0)
          return r;
      }
    }
    if (pfd[i_sig].revents) {
      r = on_signal(l, sfd, grace_fd);
      if (r < 0)
        return r;
    }
    if (pfd[i_timeout].revents) {
      drain_timer(timeout_fd);
      if (!l->init->exited && !l->timed_out) {
        l->timed_out = true;
        kill_tree(l);
        r = emit_limit(l, "wall", p->limits[SR_LIM_TIMEOUT].value);
        if (r < 0)
          return r;
      }
    }
    if (pfd[i_grace].revents) {
      drain_timer(grace_fd);
      if (!l->init->exited)
        kill_tree(l);
    }
    if (i_cpu >= 0 && pfd[i_cpu].revents) {
      uint64_t usec = 0;
      drain_timer(cpu_fd);
      if (!l->init->exited && !l->cpu_exceeded &&
          sr_cgroup_cpu_usec(&l->run->cgroup, &usec) >= 0 &&
          usec >= cpu_budget_usec) {
        l->cpu_exceeded = true;
        kill_tree(l);
        r = emit_limit(l, "cpu", p->limits[SR_LIM_CPU_SECONDS].value);
        if (r < 0)
          return r;
      }
    }
    if (i_pid >= 0 && pfd[i_pid].revents)
      (void)reap_init(l->init, false);
  }
}

static void fill_result(struct loop *l, struct sr_result *res) {
  if (l->timed_out) {
    res->status = "timeout";
    res->exit_code = SR_EXIT_TIMEOUT;
  } else if (l->cpu_exceeded) {
    res->status = "cpu_exceeded";
    res->exit_code = 128 + SIGKILL;
  } else if (res->have_cgroup_stats && res->cg.oom_kill > 0 &&
             (!l->have_status || !WIFEXITED(l->status))) {
    res->status = "oom";
    res->exit_code = 128 + SIGKILL;
  } else if (l->exec_errno) {
    res->status = "failed";
    res->exec_errno = l->exec_errno;
    res->exit_code = (l->exec_errno == ENOENT || l->exec_errno == ENOTDIR)
                         ? SR_EXIT_NOTFOUND
                         : SR_EXIT_NOEXEC;
  } else if (l->have_status && WIFEXITED(l->status)) {
    res->skill_exit = WEXITSTATUS(l->status);
    res->exit_code = res->skill_exit;
    res->status = res->skill_exit == 0 ? "succeeded" : "failed";
  } else if (l->have_status && WIFSIGNALED(l->status) &&
             WTERMSIG(l->status) == SIGXCPU &&
             l->run->enf.by[SR_LIM_CPU_SECONDS] == SR_ENF_RLIMIT) {
    /* The rlimit fallback's CPU kill: the same outcome as the cgroup
     * budget, reported the same way (DESIGN.md: CPU-cap kills are 137). */
    res->signal = SIGXCPU;
    res->exit_code = 128 + SIGKILL;
    res->status = "cpu_exceeded";
    l->cpu_exceeded = true;
  } else if (l->have_status && WIFSIGNALED(l->status)) {
    res->signal = WTERMSIG(l->status);
    res->exit_code = 128 + res->signal;
    res->status = "killed";
  } else {
    /* init died without reporting: only our own kill does that. */
    res->status = l->cancel_sig ? "cancelled" : "killed";
    res->signal = SIGKILL;
    res->exit_code = 128 + SIGKILL;
  }
  if (l->cancel_sig && !l->timed_out && !l->cpu_exceeded) {
    res->status = "cancelled";
    if (!l->have_status)
      res->exit_code = 128 + l->cancel_sig;
  }
}

int sr_supervise(struct sr_run *run, struct sr_result *res,
                 struct sr_error *err) {
  const struct sr_policy *p = run->policy;
  _cleanup_close_ int sync0 = -1, sync1 = -1, out_r = -1, out_w = -1;
  _cleanup_close_ int err_r = -1, err_w = -1, sfd = -1, timeout_fd = -1;
  _cleanup_close_ int grace_fd = -1, cpu_fd = -1;
  struct sr_logpump lp;
  struct sr_sandbox sb;
  struct loop l;
  sigset_t mask, oldmask;
  unsigned long long flags;
  uint64_t start = sr_now_mono_ms();
  int sv[2], pp[2], r;
  pid_t pid;

  memset(res, 0, sizeof(*res));
  res->skill_exit = -1;
  memset(&l, 0, sizeof(l));
  l.run = run;
  l.err = err;
  l.outputs_fd = -1;
  l.init = &run->init;
  run->init = (struct sr_init_proc){.pid = 0, .pidfd = -1, .exited = false};

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_layer(err, "sync", errno, "socketpair");
  sync0 = sv[0];
  sync1 = sv[1];
  if (pipe2(pp, O_CLOEXEC) < 0)
    return sr_error_layer(err, "logs", errno, "pipe");
  out_r = pp[0];
  out_w = pp[1];
  if (pipe2(pp, O_CLOEXEC) < 0)
    return sr_error_layer(err, "logs", errno, "pipe");
  err_r = pp[0];
  err_w = pp[1];
  /* The log files are opened once the sandbox is being built: on the
   * workspace's file system a new file costs 0.01 - 0.2 ms, and the
   * supervisor has nothing else to do while init mounts. */
  sr_logpump_init(&lp, -1, -1, -1, -1, p->limits[SR_LIM_LOG_CAP].value,
                  run->args->log_passthrough ? STDERR_FILENO : -1);

  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  if (sigprocmask(SIG_BLOCK, &mask, &oldmask) < 0) {
    sr_logpump_close(&lp);
    return sr_error_layer(err, "signals", errno, "sigprocmask");
  }
  sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  timeout_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  grace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (run->cgroup.active)
    cpu_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (sfd < 0 || timeout_fd < 0 || grace_fd < 0 ||
      (run->cgroup.active && cpu_fd < 0)) {
    sr_logpump_close(&lp);
    return sr_error_layer(err, "signals", errno, "signalfd/timerfd");
  }

  /* As root, leave root's supplementary groups behind before the sandbox
   * inherits them (an ordinary caller cannot, see skillrun(1)). */
  if (geteuid() == 0 && setgroups(0, NULL) < 0) {
    sr_logpump_close(&lp);
    return sr_error_layer(err, "userns", errno, "setgroups");
  }

  memset(&sb, 0, sizeof(sb));
  sb.policy = p;
  sb.enf = &run->enf;
  sb.seccomp = run->seccomp;
  sb.mount.policy = p;
  sb.mount.bundle_dir = run->ws->bundle_path;
  sb.mount.inputs_dir = run->ws->inputs_path;
  sb.mount.metadata_file = run->ws->metadata_path;
  sb.mount.uid = SR_SANDBOX_UID;
  sb.mount.gid = SR_SANDBOX_GID;
  sb.mount.user_name = "skill";
  sb.mount.home = "/workspace/scratch";
  sb.argv = run->argv;
  sb.envp = run->envp;
  sb.sync_fd = sync1;
  sb.stdout_w = out_w;
  sb.stderr_w = err_w;
  sb.new_netns = !p->network_allow;

  flags =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (!p->network_allow)
    flags |= CLONE_NEWNET;
  fflush(NULL); /* nothing buffered may be written twice */
  pid = sr_ns_clone(flags, run->cgroup.active ? run->cgroup.leaf_fd : -1,
                    &run->init.pidfd, err);
  if (pid < 0) {
    sr_logpump_close(&lp);
    return pid;
  }
  if (pid == 0) {
    safe_close(sync0);
    safe_close(out_r);
    safe_close(err_r);
    sr_init_main(&sb);
  }
  run->init.pid = pid;
  /* The -1 stored keeps the _cleanup_close_ handlers from closing again;
   * clang 14's dead-store check does not model those handlers.
   * NOLINTBEGIN(clang-analyzer-deadcode.DeadStores) */
  sync1 = safe_close(sync1);
  out_w = safe_close(out_w);
  err_w = safe_close(err_w);
  /* NOLINTEND(clang-analyzer-deadcode.DeadStores) */
  if (fcntl(out_r, F_SETFL, O_NONBLOCK) < 0 ||
      fcntl(err_r, F_SETFL, O_NONBLOCK) < 0 ||
      fcntl(sync0, F_SETFL, O_NONBLOCK) < 0)
    r = sr_error_layer(err, "logs", errno, "O_NONBLOCK");
  else
    r = sr_ns_write_maps(pid, SR_SANDBOX_UID, run->host_uid, SR_SANDBOX_GID,
                         run->host_gid, err);
  if (r >= 0 && sr_sync_send(sync0, SR_SYNC_GO, 0, NULL, -1) < 0)
    r = sr_error_layer(err, "sync", errno, "cannot release the sandbox");
  if (r >= 0)
    r = sr_workspace_open_logs(run->ws, &lp.out_fd[0], &lp.out_fd[1], err);
  if (r >= 0)
    r = sr_workspace_make_outputs(run->ws, err);
  if (r >= 0)
    r = arm_timer(timeout_fd, p->limits[SR_LIM_TIMEOUT].value, 0);
  if (r >= 0 && cpu_fd >= 0)
    r = arm_timer(cpu_fd, CPU_POLL_MS, CPU_POLL_MS);
  if (r >= 0) {
    lp.in_fd[0] = TAKE_FD(out_r);
    lp.in_fd[1] = TAKE_FD(err_r);
    r = run_loop(&l, &lp, sync0, sfd, timeout_fd, grace_fd, cpu_fd);
  }
  if (r < 0) {
    /* Fail closed: nothing of the run may outlive this function. */
    kill_tree(&l);
    if (!run->init.exited)
      (void)reap_init(&run->init, true);
  }
  (void)sigprocmask(SIG_SETMASK, &oldmask, NULL);
  res->duration_ms = sr_now_mono_ms() - start;
  for (int s = 0; s < 2; s++) {
    res->log_kept[s] = lp.kept[s];
    res->log_dropped[s] = lp.dropped[s];
  }
  sr_logpump_close(&lp);
  if (run->cgroup.active && sr_cgroup_stats(&run->cgroup, &res->cg) >= 0)
    res->have_cgroup_stats = true;

  if (r >= 0 && sr_error_is_set(&l.setup_err)) {
    *err = l.setup_err;
    r = -EIO;
  } else if (r >= 0 && !l.ready && !l.tree_killed) {
    r = sr_error_layer(err, "init", 0,
                       "the sandbox's init exited before starting the skill");
  }
  if (r >= 0) {
    bool cpu_before = l.cpu_exceeded;
    fill_result(&l, res);
    if (!cpu_before && l.cpu_exceeded)
      r = emit_limit(&l, "cpu", p->limits[SR_LIM_CPU_SECONDS].value);
    if (r >= 0 && res->have_cgroup_stats && res->cg.oom_kill > 0)
      r = emit_limit(&l, "memory", p->limits[SR_LIM_MEMORY].value);
    if (r >= 0 && res->have_cgroup_stats && res->cg.pids_max_hit > 0)
      r = emit_limit(&l, "pids", p->limits[SR_LIM_PIDS].value);
    if (r >= 0)
      r = sr_audit_emit(run->audit, "state_changed",
                        json_pack("{s:s}", "state", "collecting"), err);
    if (r >= 0)
      r = sr_workspace_harvest(run->ws, l.outputs_fd,
                               p->limits[SR_LIM_OUTPUTS_SIZE].value, run->audit,
                               &res->artifacts, &res->artifact_bytes, err);
  }
  safe_close(l.outputs_fd);
  /* On success init may still be exiting (tearing down its mount
   * namespace); sr_supervisor_reap waits for it, after the caller has
   * written its records meanwhile. */
  return r;
}
