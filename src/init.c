/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "error.h"
#include "fdutil.h"
#include "init.h"
#include "mount.h"
#include "net.h"
#include "ns.h"
#include "policy.h"
#include "sandbox.h"
#include "sync.h"

_Noreturn static void fail(const struct sr_sandbox *sb, struct sr_error *err) {
  if (!sr_error_is_set(err))
    sr_error_layer(err, "init", 0, "sandbox setup failed");
  (void)sr_sync_send(sb->sync_fd, SR_SYNC_ERROR, 0, err, -1); /* if this
      fails the supervisor sees EOF without READY: also a failure */
  _exit(SR_EXIT_FAILED);
}

/*
 * As root, the sandbox's creator is host uid 0, which is not mapped inside:
 * become the mapped sandbox user while keeping the namespace capabilities
 * needed to build the mounts.  For an ordinary caller this is a no-op.
 */
static int become_sandbox_user(struct sr_error *err) {
  cap_t caps;

  if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return sr_error_layer(err, "userns", errno, "PR_SET_KEEPCAPS");
  if (setresgid(SR_SANDBOX_GID, SR_SANDBOX_GID, SR_SANDBOX_GID) < 0)
    return sr_error_layer(err, "userns", errno, "setresgid(%d)",
                          SR_SANDBOX_GID);
  if (setresuid(SR_SANDBOX_UID, SR_SANDBOX_UID, SR_SANDBOX_UID) < 0)
    return sr_error_layer(err, "userns", errno, "setresuid(%d)",
                          SR_SANDBOX_UID);
  if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
    return sr_error_layer(err, "userns", errno, "PR_SET_KEEPCAPS");
  /* A uid change clears the effective set: raise it again from permitted. */
  caps = cap_get_proc();
  if (!caps)
    return sr_error_layer(err, "userns", errno, "cap_get_proc");
  for (cap_value_t c = 0; c <= CAP_LAST_CAP; c++) {
    cap_flag_value_t v = CAP_CLEAR;
    if (cap_get_flag(caps, c, CAP_PERMITTED, &v) == 0 && v == CAP_SET)
      (void)cap_set_flag(caps, CAP_EFFECTIVE, 1, &c, CAP_SET);
  }
  if (cap_set_proc(caps) < 0) {
    int e = errno;
    cap_free(caps);
    return sr_error_layer(err, "userns", e, "cap_set_proc");
  }
  cap_free(caps);
  if (getuid() != SR_SANDBOX_UID || getgid() != SR_SANDBOX_GID)
    return sr_error_layer(err, "userns", 0, "sandbox ids did not take");
  return 0;
}

/*
 * A caller protected from the OOM killer (systemd's OOMScoreAdjust=-1000,
 * choom -n) is not the skill: under oom_score_adj -1000 the memory
 * cgroup's OOM killer finds no process of the run to kill, and a run at
 * its memory limit stalls until its timeout (status timeout, not oom); a
 * negative value also has the host's OOM killer pick other processes
 * first.  Init, and the skill it forks, start at 0 at least (raising it
 * takes no privilege); a caller's positive value is kept.  Read in the
 * host's /proc, before the switch to the sandbox user (until then init's
 * /proc files are its caller's).  A skill may still go back down to the
 * caller's oom_score_adj_min, which only a writer with CAP_SYS_RESOURCE
 * in the host's user namespace can raise (proc(5)).
 */
static int raise_oom_score_adj(struct sr_error *err) {
  _cleanup_close_ int fd = -1;
  char buf[16];
  size_t got = 0;
  int r;

  /* Opened for writing only when it must be written: the common case
   * needs no write access to init's /proc files. */
  fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return sr_error_layer(err, "init", errno, "open /proc/self/oom_score_adj");
  r = sr_read_full(fd, buf, sizeof(buf) - 1, &got);
  if (r < 0)
    return sr_error_layer(err, "init", -r, "read /proc/self/oom_score_adj");
  buf[got] = '\0';
  if (buf[0] != '-')
    return 0;
  safe_close(fd);
  fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || write(fd, "0", 1) != 1)
    return sr_error_layer(err, "init", errno,
                          "cannot raise oom_score_adj %.*s to 0",
                          (int)strcspn(buf, "\n"), buf);
  return 0;
}

/*
 * Network allowlist: the egress proxy's listeners, made here in the
 * sandbox's own network namespace (lo is up), passed to the supervisor,
 * whose proxy accepts on them from the host's namespace.  The skill is
 * released only once the supervisor says its proxy serves them, so a
 * proxy that cannot start means no skill, not a skill without a network.
 */
static int start_proxy(const struct sr_sandbox *sb, struct sr_error *err) {
  static const int families[] = {AF_INET, AF_INET6};
  int fds[2] = {-1, -1};
  struct sr_sync_msg m;
  size_t n = 0;
  int r = 0;

  for (size_t i = 0; r >= 0 && i < SR_ARRAY_SIZE(families); i++) {
    r = sr_net_listen_loopback(families[i], sb->proxy_port, &fds[n], NULL, err);
    if (r >= 0)
      n++;
    else if (families[i] == AF_INET6 &&
             (r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT)) {
      sr_error_clear(err); /* no ::1 here: IPv4 only */
      r = 0;
    }
  }
  for (size_t i = 0; r >= 0 && i < n; i++)
    if (sr_sync_send(sb->sync_fd, SR_SYNC_PROXY_LISTENER, (int32_t)(n - 1 - i),
                     NULL, fds[i]) < 0)
      r = sr_error_layer(err, "proxy", errno, "passing the listener");
  for (size_t i = 0; i < n; i++)
    safe_close(fds[i]);
  if (r < 0)
    return r;
  /* EOF: the supervisor could not start the proxy and says why itself. */
  if (sr_sync_recv(sb->sync_fd, &m, NULL) < 0 || m.type != SR_SYNC_PROXY_READY)
    _exit(SR_EXIT_FAILED);
  return 0;
}

/*
 * Waits for the skill's process to say it has narrowed itself, and joins
 * the network namespace it made (sr_sandbox_child_netns): init, pid 1 of
 * the sandbox, is in it before the skill may run, and never again in the
 * host's (which it was born in).  1 done; 0 the process is gone (EOF: it
 * has reported why, or its exit status tells); -errno with err set.
 */
static int skill_narrowed(const struct sr_sandbox *sb, int go,
                          struct sr_error *err) {
  _cleanup_close_ int nsfd = -1;
  struct sr_sync_msg m;
  int r;

  r = sr_sync_recv(go, &m, &nsfd);
  if (r == -EPIPE)
    return 0;
  if (r < 0 || m.type != SR_SYNC_NARROWED)
    return sr_error_layer(err, "init", r < 0 ? -r : EBADMSG,
                          "the skill's process's message");
  if (!sr_sandbox_child_netns(sb))
    return nsfd < 0 ? 1
                    : sr_error_layer(err, "network", EBADMSG,
                                     "unexpected network namespace");
  if (nsfd < 0)
    return sr_error_layer(err, "network", EBADMSG,
                          "no network namespace from the skill's process");
  /* setns(2) wants CAP_SYS_ADMIN over the namespace's owner (and in
   * init's own user namespace), which init holds only in the sandbox's
   * user namespace (always new) and any below it: the host's namespace,
   * or whichever init was born in, is refused (EPERM). */
  if (setns(nsfd, CLONE_NEWNET) < 0)
    return sr_error_layer(err, "network", errno, "setns(CLONE_NEWNET)");
  return 1;
}

/*
 * cgroup v1: init writes itself into each leaf through the `tasks` files
 * the supervisor opened (sr_cgroup_open_join says why not cgroup.procs),
 * reads each back (it lists the leaf's tasks as this pid namespace sees
 * them: init alone, as 1, since nothing is forked yet), and closes them.
 */
static int join_cgroup(const struct sr_sandbox *sb, struct sr_error *err) {
  int r = 0;

  for (size_t i = 0; i < sb->n_cg_join; i++) {
    const int fd = sb->cg_join_fd[i];
    char buf[64];
    ssize_t n;

    if (r < 0) {
      safe_close(fd);
      continue;
    }
    if (write(fd, "0", 1) != 1) {
      r = sr_error_layer(err, "cgroup", errno, "join %s/tasks",
                         sb->cg_join_path[i]);
    } else {
      n = pread(fd, buf, sizeof(buf) - 1, 0);
      if (n < 0)
        r = sr_error_layer(err, "cgroup", errno, "read %s/tasks",
                           sb->cg_join_path[i]);
      else if (buf[n] = '\0', strcmp(buf, "1\n") != 0)
        r = sr_error_layer(err, "cgroup", EIO,
                           "%s/tasks does not list the sandbox's init alone "
                           "after it joined",
                           sb->cg_join_path[i]);
    }
    safe_close(fd);
  }
  return r;
}

/*
 * The run's user namespace's own limits (/proc/sys/user, user_namespaces(7)):
 * what the skill charges in its namespace (Linux 5.14's ucounts) is charged
 * above it to the namespace's owner, the caller's uid (root's for a run
 * root started, whatever its pool uid).  Unbounded, a skill held the 128
 * inotify instances fs.inotify.max_user_instances gives a uid, and the
 * caller's own inotify_init(2) on the host failed with EMFILE for as long
 * as the run lived.  init holds CAP_SYS_RESOURCE in the namespace, which
 * lets it lower these for the namespace (the run) alone.  The namespace
 * counts (max_*_namespaces) are left: the seccomp filter refuses every
 * new namespace (its namespaces group, which no profile may allow).
 */
struct userns_limit {
  const char *name;
  const char *value;
};
static const struct userns_limit userns_limits[] = {
    {"max_inotify_instances", "16"},
    {"max_inotify_watches", "4096"},
    {"max_fanotify_groups", "0"},
    {"max_fanotify_marks", "0"},
};

/* Writes value into dir's name and reads it back; -ENOENT: not in this
 * kernel. */
static int write_limit(int dir, const char *name, const char *value,
                       struct sr_error *err) {
  char back[32];
  const char *step;
  int r;

  r = sr_write_read_back_at(dir, name, value, back, sizeof(back), &step);
  if (r == -ENOENT)
    return r;
  if (r < 0)
    return sr_error_layer(err, "userns", -r, "cannot %s /proc/sys/user/%s",
                          step, name);
  if (strtoul(back, NULL, 10) != strtoul(value, NULL, 10))
    return sr_error_layer(err, "userns", 0,
                          "/proc/sys/user/%s reads %.*s, not %s", name,
                          (int)strcspn(back, "\n"), back, value);
  return 0;
}

/* The namespace's /proc/sys, for the user namespace's limits below and
 * the network namespace's net.core.tstamp_allow_data (net.c): through the
 * procfs init still sees (the host's), or, where that is read-only (a
 * container's /proc/sys) or hidden under another mount, a procfs of the
 * sandbox's own, made and never attached (an open descriptor keeps it).
 * -EROFS: neither can be written here (err says why). */
static bool is_procfs(int fd) {
  struct statfs sfs;

  return fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
}

/* Whether the host's /proc/sys (fd) will do: procfs's, and so is its
 * user directory, whose files init may write; with a network namespace of
 * the sandbox's, so is net/core, on a mount not read-only (whether init
 * may write the namespace's file can only be asked in the namespace). */
static bool host_sysctls_usable(const struct sr_sandbox *sb, int fd) {
  _cleanup_close_ int user = -1, core = -1;
  struct statvfs vfs;

  if (!is_procfs(fd))
    return false;
  if (sb->new_netns) {
    core =
        openat(fd, "net/core", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (core < 0 || !is_procfs(core) || fstatvfs(core, &vfs) < 0 ||
        (vfs.f_flag & ST_RDONLY))
      return false;
  }
  user = openat(fd, "user", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (user < 0 || !is_procfs(user))
    return false;
  if (faccessat(user, "max_inotify_instances", W_OK, AT_EACCESS) == 0)
    return true;
  return errno == ENOENT; /* not this one: each is looked for */
}

static int open_sysctls(const struct sr_sandbox *sb, struct sr_error *err) {
  int fd, fs, mnt;

  /* Not there, or not a procfs's: a /proc/sys masked with an empty tmpfs
   * read as a kernel without the files, and the run went on with no limit
   * and no warning, strict or not. */
  fd = open("/proc/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && host_sysctls_usable(sb, fd))
    return fd;
  safe_close(fd);
  fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
  if (fs >= 0 &&
      (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
       (mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                           MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                               MOUNT_ATTR_NOEXEC)) < 0)) {
    int e = errno;
    safe_close(fs);
    fs = -1;
    errno = e;
  }
  if (fs < 0) {
    sr_error_layer(err, "userns", errno,
                   "the run's inotify and fanotify limits are not set%s: "
                   "/proc/sys is read-only or hidden here and no procfs of "
                   "the sandbox's own can be made (a container's), so a "
                   "skill may hold its caller's inotify instances%s",
                   sb->new_netns ? ", nor net.core.tstamp_allow_data" : "",
                   sb->new_netns ? ", and memory past its limit on sockets' "
                                   "error queues"
                                 : "");
    return -EROFS;
  }
  safe_close(fs);
  fd = openat(mnt, "sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    fd = sr_error_layer(err, "userns", errno, "open /proc/sys");
  safe_close(mnt);
  return fd;
}

/* The limits above, through sysctls (open_sysctls).  Where they cannot be
 * set at all (-EROFS: a container's read-only /proc/sys), the run goes on
 * with a warning, as it does without Landlock, unless the profile says
 * strict. */
static int limit_userns(const struct sr_sandbox *sb, int sysctls,
                        struct sr_error *err) {
  _cleanup_close_ int dir = -1;

  if (sysctls == -EROFS && !sb->policy->strict) {
    (void)sr_sync_send(sb->sync_fd, SR_SYNC_WARNING, 0, err, -1);
    sr_error_clear(err);
    return 0;
  }
  if (sysctls < 0)
    return sysctls;
  /* None in the kernel (as a procfs of the sandbox's own, not a mask,
   * says where the host's had none). */
  dir = openat(sysctls, "user", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0 && errno == ENOENT)
    return 0;
  if (dir < 0)
    return sr_error_layer(err, "userns", errno, "open /proc/sys/user");
  for (size_t i = 0; i < SR_ARRAY_SIZE(userns_limits); i++) {
    int r =
        write_limit(dir, userns_limits[i].name, userns_limits[i].value, err);
    if (r < 0 && r != -ENOENT)
      return r;
  }
  return 0;
}

/*
 * init is in a session and process group of its own (sr_init_main), so a
 * signal to the caller's process group (Ctrl-C, a hangup, timeout(1))
 * reaches the supervisor alone, which cancels the run.  What init gets is
 * the supervisor's SIGTERM (a timeout, a cancellation: kill-grace runs
 * from now), or a signal sent to init itself (pkill -INT skillrun matches
 * it: its comm is skillrun's; the skill may signal its pid 1).  SIGTERM
 * goes to the whole tree, every process of the namespace but init,
 * daemons in sessions of their own too, so that each may clean up before
 * the SIGKILL.  Any other is dropped: passed on, a raw SIGINT or SIGHUP
 * ended the skill before the supervisor's SIGTERM, and its cleanup with
 * it (skillrun(1) EXIT STATUS: a cancellation is SIGTERM and kill-grace).
 */
static void forward(int sig) {
  if (sig == SIGTERM)
    (void)kill(-1, sig);
}

/*
 * Past the log cap the supervisor hands the skill's stdout and stderr
 * pipes to init (SR_SYNC_DISCARD), which drains them into /dev/null from
 * inside the run's cgroup: a flood's discarding is then charged to the run
 * (its cpu-seconds and CPU share), not to the supervisor outside it.  The
 * byte counts go to a page the supervisor shares (SR_SYNC_DISCARD_COUNTS),
 * stored after each splice; a SIGKILL between a splice and its count
 * (the tree killed mid-flood) loses at most DISCARD_CHUNK bytes of it.
 * init never drains after it has reported the skill's exit: the supervisor
 * takes the pipes back then (or when init is gone) and reads the rest.
 */
#define DISCARD_CHUNK (64 * 1024)
struct discard {
  int fd[2];
  uint64_t *count;   /* [2] in the shared page; NULL until it came */
  uint64_t local[2]; /* where it could not be mapped: drained, not told */
  bool sync_gone;    /* the supervisor's end hung up: not polled again */
};

static void discard_message(struct discard *d, int sync_fd) {
  struct sr_sync_msg m;
  int passed = -1;
  int r = sr_sync_recv(sync_fd, &m, &passed);

  if (r < 0) {
    d->sync_gone = r != -EINTR && r != -EAGAIN;
    return;
  }
  if (m.type == SR_SYNC_DISCARD_COUNTS && passed >= 0 && !d->count) {
    void *p = mmap(NULL, SR_DISCARD_COUNTS_SIZE, PROT_READ | PROT_WRITE,
                   MAP_SHARED, passed, 0);
    /* The supervisor stops reading the pipes it hands over: they are
     * drained here whatever happens, counted or not. */
    d->count = p == MAP_FAILED ? d->local : p;
  } else if (m.type == SR_SYNC_DISCARD && passed >= 0 && d->count &&
             (m.value == 0 || m.value == 1) && d->fd[m.value] < 0) {
    d->fd[m.value] = TAKE_FD(passed);
  }
  safe_close(passed);
}

/* What stream s's pipe holds now, into /dev/null (init's stdout), counted.
 * read() where splice fails, so that a handed pipe is always drained;
 * its end (all writers gone) closes it. */
static void discard_some(struct discard *d, int s) {
  static char buf[DISCARD_CHUNK];

  for (int round = 0; round < 16 && d->fd[s] >= 0; round++) {
    ssize_t n = splice(d->fd[s], NULL, STDOUT_FILENO, NULL, DISCARD_CHUNK,
                       SPLICE_F_NONBLOCK);
    if (n < 0 && errno != EINTR && errno != EAGAIN)
      n = read(d->fd[s], buf, sizeof(buf));
    if (n > 0) {
      __atomic_store_n(&d->count[s], d->count[s] + (uint64_t)n,
                       __ATOMIC_RELEASE);
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      return;
    d->fd[s] = safe_close(d->fd[s]);
  }
}

/* User plus system CPU time of a rusage, in microseconds. */
static uint64_t rusage_usec(const struct rusage *ru) {
  return (uint64_t)ru->ru_utime.tv_sec * 1000000ULL +
         (uint64_t)ru->ru_utime.tv_usec +
         (uint64_t)ru->ru_stime.tv_sec * 1000000ULL +
         (uint64_t)ru->ru_stime.tv_usec;
}

/* Until the skill has exited: signals (by signalfd, blocked since before
 * the clone, so none is lost), the supervisor's discard hand-over and the
 * handed pipes.  Returns the skill's wait status; *reaped_ns when, and
 * *cpu_usec the CPU time it spent (its rusage). */
static int wait_skill(const struct sr_sandbox *sb, int sigfd, pid_t skill,
                      uint64_t *reaped_ns, uint64_t *cpu_usec) {
  struct discard d = {.fd = {-1, -1}};
  int status = 0;

  for (;;) {
    struct pollfd p[4] = {
        {.fd = sigfd, .events = POLLIN},
        {.fd = d.sync_gone ? -1 : sb->sync_fd, .events = POLLIN},
        {.fd = d.fd[0], .events = POLLIN},
        {.fd = d.fd[1], .events = POLLIN},
    };
    struct signalfd_siginfo si;

    if (poll(p, 4, -1) < 0)
      continue; /* EINTR */
    if (p[1].revents & POLLIN)
      discard_message(&d, sb->sync_fd);
    else if (p[1].revents & (POLLHUP | POLLERR))
      d.sync_gone = true;
    for (int s = 0; s < 2; s++)
      if (p[2 + s].revents)
        discard_some(&d, s);
    if (!(p[0].revents & POLLIN) || read(sigfd, &si, sizeof(si)) != sizeof(si))
      continue;
    if (si.ssi_signo != SIGCHLD) {
      forward((int)si.ssi_signo);
      continue;
    }
    for (;;) {
      int st;
      struct rusage ru;
      pid_t pid = wait4(-1, &st, WNOHANG, &ru);
      if (pid <= 0)
        break;
      if (pid == skill) {
        status = st;
        *reaped_ns = sr_now_mono_ns();
        *cpu_usec = rusage_usec(&ru);
        skill = 0;
      }
    }
    if (skill == 0)
      return status;
  }
}

/*
 * init is a clone of the supervisor, without exec: its argument and
 * environment areas are the supervisor's, and /proc/1/cmdline would show
 * the skill the caller's command line (workspace root, tenant, ids, paths)
 * for as long as the run lasts.  Both areas are overwritten in place (the
 * kernel reads /proc/PID/cmdline and environ from them): the command line
 * becomes "skillrun-init" (its comm stays "skillrun").  Nothing in init
 * reads argv or its environment.
 */
static int scrub_args(struct sr_error *err) {
  static const char name[] = "skillrun-init";
  char stat[4097]; /* not the heap: sr_read_file_into says why */
  unsigned long v[4];
  char *p;
  int r;

  r = sr_read_file_into(AT_FDCWD, "/proc/self/stat", stat, sizeof(stat), NULL);
  if (r < 0)
    return sr_error_layer(err, "init", -r, "read /proc/self/stat");
  /* proc(5): after the command's closing parenthesis come field 3 (state)
   * and on; arg_start, arg_end, env_start and env_end are 48-51. */
  p = strrchr(stat, ')');
  for (int field = 2; p && field < 48; field++)
    p = strchr(p + 1, ' ');
  for (int i = 0; p && i < 4; i++) {
    char *end;
    errno = 0;
    v[i] = strtoul(p + 1, &end, 10);
    p = errno || end == p + 1 || (*end != ' ' && *end != '\n') ? NULL : end;
  }
  if (!p || v[1] <= v[0] || v[3] < v[2])
    return sr_error_layer(err, "init", EIO,
                          "cannot find the argument area in /proc/self/stat");
  memset((void *)v[0], 0, v[1] - v[0]);
  memcpy((void *)v[0], name,
         v[1] - v[0] > sizeof(name) ? sizeof(name) : v[1] - v[0] - 1);
  memset((void *)v[2], 0, v[3] - v[2]);
  return 0;
}

_Noreturn void sr_init_main(const struct sr_sandbox *sb) {
  struct sr_mount_plan plan = sb->mount;
  struct sr_error err, oom_err;
  struct sr_sync_msg m;
  sigset_t mask;
  int outputs_fd = -1, oom, sess;
  struct sr_net_sysctl sysctl;
  int go[2];
  pid_t skill;
  int status, sigfd;
  uint64_t reaped_ns = 0, cpu_usec = 0;
  struct rusage tree;

  /* First of all, out of the caller's session and process group: a
   * signal to that group (Ctrl-C at a terminal, a hangup, kill -INT -PGID,
   * timeout(1)) must reach the supervisor alone, whose cancellation gives
   * the skill SIGTERM and its kill-grace (skillrun(1) EXIT STATUS).  In the
   * caller's group, init got it too and passed it on to the skill as it
   * was, and the skill's process, forked from init, got it itself before
   * its own setsid(2): blocked signals are unblocked there (child.c), and
   * it died of it, the run an error of init's instead of cancelled.  A
   * process forked from here is never in the caller's group.  Nothing in
   * init needs the caller's session: its stdio is /dev/null below, and
   * the caller's terminal is none of its.  A clone is no process group's
   * leader, so this cannot fail but for a kernel's refusal, told after
   * GO. */
  sess = setsid() < 0 ? -errno : 0;
  memset(&err, 0, sizeof(err));
  memset(&oom_err, 0, sizeof(oom_err));
  /* Die with the supervisor.  If it died before this line, the GO message
   * below never comes and recv sees EOF. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit(SR_EXIT_FAILED);
  /* While the supervisor writes the maps; its failure is told after GO. */
  oom = raise_oom_score_adj(&oom_err);
  if (sr_sync_recv(sb->sync_fd, &m, NULL) < 0 || m.type != SR_SYNC_GO)
    _exit(SR_EXIT_FAILED);
  if (sess < 0) {
    sr_error_layer(&err, "session", -sess, "setsid");
    fail(sb, &err);
  }
  if (oom < 0)
    fail(sb, &oom_err);
  /* Before anything is forked; after GO, so that a failure reaches the
   * supervisor's event loop as init's own error. */
  if (join_cgroup(sb, &err) < 0)
    fail(sb, &err);
  /* The run's staged objects, by identity: whatever is at their paths now
   * must be what the supervisor's descriptors name.  Still with the
   * caller's file-system ids, which own the 0700 directories on the way. */
  if (sr_mount_pin(&plan, &err) < 0)
    fail(sb, &err);
  /* Keep nothing of the supervisor's: not the audit stream, not the log
   * files, not the caller's terminal (a pipe held here would also keep the
   * caller waiting after the supervisor is gone). */
  {
    int keep[7] = {sb->sync_fd,    sb->stdout_w,   sb->stderr_w,
                   plan.bundle_fd, plan.inputs_fd, plan.metadata_fd,
                   sb->stdin_r};
    int nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (nullfd < 0 || dup2(nullfd, 0) < 0 || dup2(nullfd, 1) < 0 ||
        dup2(nullfd, 2) < 0 ||
        sr_close_all_fds_except(3, keep, sb->stdin_r >= 0 ? 7 : 6) < 0) {
      sr_error_layer(&err, "fds", errno, "cannot close the supervisor's fds");
      fail(sb, &err);
    }
  }
  if (scrub_args(&err) < 0)
    fail(sb, &err);

  if (become_sandbox_user(&err) < 0)
    fail(sb, &err);
  /* A change of euid clears the parent-death signal (prctl(2)): arm it
   * again, then make sure the supervisor did not die in between (its end
   * of the sync socket would have hung up). */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    _exit(SR_EXIT_FAILED);
  {
    struct pollfd p = {.fd = sb->sync_fd, .events = POLLIN};
    if (poll(&p, 1, 0) < 0 || (p.revents & (POLLHUP | POLLERR)))
      _exit(SR_EXIT_FAILED);
  }
  /* Rooted at the run's cgroup (we were born in it), so the skill reads
   * 0::/ in /proc/self/cgroup. */
  if (unshare(CLONE_NEWCGROUP) < 0) {
    sr_error_layer(&err, "cgroupns", errno, "unshare(CLONE_NEWCGROUP)");
    fail(sb, &err);
  }
  /* Signals stay blocked (the supervisor blocked them before clone) and are
   * read from a signalfd, so none is lost between fork and the loop. */
  sr_cancel_set(&mask);
  sigaddset(&mask, SIGCHLD);
  if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0) {
    sr_error_layer(&err, "init", errno, "sigprocmask");
    fail(sb, &err);
  }
  sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sigfd < 0) {
    sr_error_layer(&err, "init", errno, "signalfd");
    fail(sb, &err);
  }

  /* The skill's process is forked now and narrows itself while the mounts
   * are built.  On the go socket it says when it is done
   * (SR_SYNC_NARROWED, with the network namespace it made), and execs
   * nothing before init's SR_SYNC_GO, sent once everything below is in
   * place.  If init fails first, the socket's EOF and the pid
   * namespace's end take it along. */
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) < 0) {
    sr_error_layer(&err, "init", errno, "socketpair");
    fail(sb, &err);
  }
  /* Before the mounts, while the host's /proc is init's; before the fork,
   * for the skill's process makes the network namespace and sets its
   * sysctl (net.c; it closes the descriptor with the rest before exec).
   * An error is told by limit_userns, after the fork. */
  sysctl.fd = open_sysctls(sb, &err);
  sysctl.tstamp_required = sb->tstamp_required;
  skill = fork();
  if (skill < 0) {
    sr_error_layer(&err, "init", errno, "fork");
    fail(sb, &err);
  }
  if (skill == 0) {
    safe_close(go[1]);
    sr_child_exec(sb, go[0], &sysctl);
  }
  safe_close(go[0]);
  if (limit_userns(sb, sysctl.fd, &err) < 0)
    fail(sb, &err);
  safe_close(sb->stdout_w);
  safe_close(sb->stderr_w);
  safe_close(sb->stdin_r); /* the skill's alone: its end's close is EOF */

  if (sr_mount_build(&plan, &outputs_fd, &err) < 0)
    fail(sb, &err);
  /* Nothing of the skill's runs before the supervisor has recorded the
   * policy and armed the run's timers (EOF: it failed, and says why). */
  {
    struct sr_sync_msg m;
    if (sr_sync_recv(sb->sync_fd, &m, NULL) < 0 || m.type != SR_SYNC_RECORDED)
      _exit(SR_EXIT_FAILED);
  }
  /* Without the proxy the skill's process makes the network namespace and
   * brings its lo up while the mounts are built (child.c; init joins it
   * below); with it, clone made it, and the listeners need lo up first. */
  if (sb->new_netns && sb->proxy_port &&
      (sr_net_sandbox_up(&sysctl, &err) < 0 || start_proxy(sb, &err) < 0))
    fail(sb, &err);
  safe_close(sysctl.fd); /* the skill's process has its copy */
  if (sethostname(sb->policy->hostname, strlen(sb->policy->hostname)) < 0) {
    sr_error_layer(&err, "uts", errno, "sethostname");
    fail(sb, &err);
  }

  /* Not READY (not running, to the supervisor) before the skill's process
   * has narrowed itself: had it failed, it has reported why and exited,
   * and its report is the run's error. */
  switch (skill_narrowed(sb, go[1], &err)) {
  case 1:
    break;
  case 0:
    _exit(SR_EXIT_FAILED);
  default:
    fail(sb, &err);
  }
  /* EPIPE (SIGPIPE is ignored) only if the skill's process is gone
   * already; its own report, or its exit status, tells why. */
  (void)sr_sync_send(go[1], SR_SYNC_GO, 0, NULL, -1);
  safe_close(go[1]);
  if (sr_sync_send(sb->sync_fd, SR_SYNC_READY, skill, NULL, outputs_fd) < 0)
    _exit(SR_EXIT_FAILED); /* the supervisor is gone: PDEATHSIG follows */
  safe_close(outputs_fd);

  status = wait_skill(sb, sigfd, skill, &reaped_ns, &cpu_usec);
  /* The skill is gone: nothing it started may outlive it. */
  (void)kill(-1, SIGKILL);
  while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
    ;
  /* The whole tree's CPU time, now that all of it is reaped: also what a
   * process the skill left behind spent, which the skill's own rusage
   * does not hold and the supervisor's last look may have missed (it
   * checks this against the budget). */
  if (getrusage(RUSAGE_CHILDREN, &tree) == 0 && rusage_usec(&tree) > cpu_usec)
    cpu_usec = rusage_usec(&tree);
  (void)sr_sync_send_exited(sb->sync_fd, status, reaped_ns, cpu_usec);
  /* Closed here, not by _exit: the kernel releases an exiting task's files
   * only after it has torn down its namespaces, and the supervisor, which
   * waits for this EOF, can harvest meanwhile (it still waits for our exit
   * before it returns). */
  safe_close(sb->sync_fd);
  _exit(0);
}
