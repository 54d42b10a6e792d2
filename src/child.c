/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "caps.h"
#include "child.h"
#include "landlock.h"
#include "error.h"
#include "fdutil.h"
#include "net.h"
#include "ns.h"
#include "policy.h"
#include "sandbox.h"
#include "seccomp.h"
#include "sync.h"
#include "view.h"

_Noreturn static void fail(const struct sr_sandbox *sb, struct sr_error *err) {
  (void)sr_sync_send(sb->sync_fd, SR_SYNC_ERROR, 0, err, -1); /* EOF tells
      the supervisor as much */
  _exit(SR_EXIT_FAILED);
}

/* A "Sig...:\t<hex>" line of /proc/self/status: 1 to 16 hex digits, as
 * the kernel writes a 64-signal set. */
static bool status_sigset(const char *status, const char *key, uint64_t *out) {
  const char *p = strstr(status, key);
  size_t n;

  if (!p)
    return false;
  p += strlen(key);
  p += strspn(p, " \t");
  n = strspn(p, "0123456789abcdef");
  if (n < 1 || n > 16 || p[n] != '\n')
    return false;
  *out = strtoull(p, NULL, 16);
  return true;
}

/* SIG_DFL for sig with rt_sigaction(2) itself: glibc's sigaction() refuses
 * the two real-time signals it keeps for its threads (32 and 33), which a
 * caller can leave ignored all the same (make(1)'s test harness does).  An
 * all-zero kernel sigaction is SIG_DFL with no flags and an empty mask in
 * any field order, on every architecture (at most 64 bytes).  EINVAL, for
 * SIGKILL and SIGSTOP, is no failure: those are never ignored. */
static int default_disposition(int sig) {
  uint64_t ksa[8] = {0};

  if (syscall(SYS_rt_sigaction, sig, ksa, NULL, (size_t)(NSIG - 1) / 8) < 0 &&
      errno != EINVAL)
    return -errno;
  return 0;
}

/* The signals whose disposition is not the default, ignored or caught,
 * inherited from the caller: one read of /proc/self/status, where asking
 * sigaction(2) costs a system call for each of the 64 (bench/README.md).
 * Every signal when procfs does not answer.  A stack buffer, as in
 * seccomp.c's verify_mode. */
static uint64_t altered_signals(void) {
  char status[16384];
  _cleanup_close_ int fd = -1;
  struct statfs sfs;
  uint64_t ign, cgt;
  size_t got = 0;

  fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC ||
      sr_read_full(fd, status, sizeof(status) - 1, &got) < 0)
    return UINT64_MAX;
  status[got] = '\0';
  if (!status_sigset(status, "\nSigIgn:", &ign) ||
      !status_sigset(status, "\nSigCgt:", &cgt))
    return UINT64_MAX;
  return ign | cgt;
}

static int set_rlimit2(int resource, uint64_t soft, uint64_t hard,
                       const char *name, struct sr_error *err) {
  struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
  struct rlimit back;

  if (setrlimit(resource, &rl) < 0)
    return sr_error_layer(err, "rlimits", errno, "setrlimit(%s)", name);
  if (getrlimit(resource, &back) < 0 || back.rlim_cur != soft ||
      back.rlim_max != hard)
    return sr_error_layer(err, "rlimits", 0, "%s did not take", name);
  return 0;
}

static int set_rlimit(int resource, uint64_t value, const char *name,
                      struct sr_error *err) {
  return set_rlimit2(resource, value, value, name, err);
}

/* Soft and hard limit to at most value: what the caller's were if lower. */
static int lower_rlimit(int resource, uint64_t value, const char *name,
                        struct sr_error *err) {
  struct rlimit cur;

  if (getrlimit(resource, &cur) < 0)
    return sr_error_layer(err, "rlimits", errno, "getrlimit(%s)", name);
  return set_rlimit2(resource, cur.rlim_cur < value ? cur.rlim_cur : value,
                     cur.rlim_max < value ? cur.rlim_max : value, name, err);
}

static bool by_rlimit(const struct sr_enforcement *enf, enum sr_limit_id id) {
  return enf->by[id] == SR_ENF_RLIMIT;
}

static int apply_rlimits(const struct sr_policy *p,
                         const struct sr_enforcement *enf,
                         struct sr_error *err) {
  int r;

  r = set_rlimit(RLIMIT_NOFILE, p->limits[SR_LIM_NOFILE].value, "RLIMIT_NOFILE",
                 err);
  if (r >= 0)
    r = set_rlimit(RLIMIT_CORE, 0, "RLIMIT_CORE", err);
  /* No way to a real-time policy or a higher priority (the seccomp filter
   * allows sched_setscheduler(2) and setpriority(2)): a caller's ulimit -r,
   * which pam_limits gives audio users, would let a skill's spinning
   * SCHED_FIFO threads starve the host's CPUs, the supervisor with them. */
  if (r >= 0)
    r = set_rlimit(RLIMIT_RTPRIO, 0, "RLIMIT_RTPRIO", err);
  if (r >= 0)
    r = set_rlimit(RLIMIT_NICE, 0, "RLIMIT_NICE", err);
  /* Queued signals (rt_sigqueueinfo, POSIX timers) are counted per user
   * and namespace, and an ordinary caller's skill is the caller's host
   * uid: each one it queues is also charged to the caller's uid, whose own
   * sigqueue(3) and timer_create(2) then failed with EAGAIN while a skill
   * held its inherited limit.  Lowered, never raised. */
  if (r >= 0)
    r = lower_rlimit(RLIMIT_SIGPENDING, SR_SIGPENDING_MAX, "RLIMIT_SIGPENDING",
                     err);
  /* Address space, only where the profile asks (`memory-rlimit yes`): V8,
   * Go and JVM runtimes reserve far more than they use and do not start
   * under it; the whole run's memory is the cgroup's or the sampler's. */
  if (r >= 0 && p->memory_rlimit)
    r = set_rlimit(RLIMIT_AS, p->limits[SR_LIM_MEMORY].value, "RLIMIT_AS", err);
  /* Without a cgroup, the kernel's hold on the pids limit: RLIMIT_NPROC
   * counts the sandbox user's tasks in the sandbox's own user namespace
   * (Linux 5.14+), the whole tree and nothing else. */
  if (r >= 0 && by_rlimit(enf, SR_LIM_PIDS))
    r = set_rlimit(RLIMIT_NPROC, p->limits[SR_LIM_PIDS].value, "RLIMIT_NPROC",
                   err);
  /* CPU: the supervisor enforces the whole-tree budget (from the cgroup or
   * its sampler); this is a per-process backstop one second later.  When
   * an rlimit is the enforcer, the soft limit's SIGXCPU is the kill (so
   * the supervisor can tell it from other deaths), the hard one a second
   * later the backstop. */
  if (r >= 0 && enf->by[SR_LIM_CPU_SECONDS] != SR_ENF_NONE) {
    uint64_t cpu = p->limits[SR_LIM_CPU_SECONDS].value;
    if (by_rlimit(enf, SR_LIM_CPU_SECONDS))
      r = set_rlimit2(RLIMIT_CPU, cpu, cpu + 1, "RLIMIT_CPU", err);
    else
      r = set_rlimit(RLIMIT_CPU, cpu + 1, "RLIMIT_CPU", err);
  }
  return r;
}

/* The caller's personality flags are not the skill's: setarch -R
 * (ADDR_NO_RANDOMIZE) would run it without address space randomization,
 * -X (READ_IMPLIES_EXEC, which x86-64 drops at exec but arm64 keeps) with
 * every readable mapping executable, -L in the legacy layout; the seccomp
 * filter refuses the skill each of these (personality(2) with 0 or the
 * query only).  The execution domain (the low byte: linux32's PER_LINUX32)
 * is kept, as is what uname(2) says. */
static int reset_personality(struct sr_error *err) {
  int pers = personality(0xffffffff);

  if (pers < 0)
    return sr_error_layer(err, "child", errno, "personality");
  if ((pers & ~PER_MASK) == 0)
    return 0;
  if (personality((unsigned long)(pers & PER_MASK)) < 0 ||
      (pers = personality(0xffffffff)) < 0)
    return sr_error_layer(err, "child", errno, "personality");
  if (pers & ~PER_MASK)
    return sr_error_layer(err, "child", 0, "personality flags 0x%x remain",
                          (unsigned)(pers & ~PER_MASK));
  return 0;
}

/* Runs argv: a name without '/' is looked up in the sandbox PATH; a relative
 * path is relative to the bundle (the working directory too).  Returns the
 * errno of the failure. */
static int exec_command(const char *bundle, char *const *argv,
                        char *const *envp) {
  const char *cmd = argv[0];
  const char *path = NULL;
  char buf[PATH_MAX];
  int saved = ENOENT;

  for (char *const *e = envp; *e; e++)
    if (!strncmp(*e, "PATH=", 5))
      path = *e + 5;
  if (strchr(cmd, '/')) {
    if (cmd[0] != '/') {
      if (snprintf(buf, sizeof(buf), "%s/%s", bundle, cmd) >= (int)sizeof(buf))
        return ENAMETOOLONG;
      cmd = buf;
    }
    execve(cmd, argv, envp);
    return errno;
  }
  for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
    const char *end = strchrnul(p, ':');
    size_t n = (size_t)(end - p);
    if (n > 0 && n + strlen(cmd) + 2 < sizeof(buf)) {
      memcpy(buf, p, n);
      buf[n] = '/';
      memcpy(buf + n + 1, cmd, strlen(cmd) + 1); /* fits: checked above */
      execve(buf, argv, envp);
      /* Keep looking after ENOENT; remember that something was found. */
      if (errno != ENOENT && errno != ENOTDIR)
        saved = errno;
    }
    p = *end ? end + 1 : end;
  }
  return saved;
}

/* s for one line of the caller's terminal: anything but printable ASCII
 * (control characters, and bytes a terminal could take for C1 controls)
 * as '?', at most len - 1 bytes. */
static void printable(const char *s, char *out, size_t len) {
  size_t i;

  for (i = 0; i + 1 < len && s[i]; i++)
    out[i] = (char)((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f
                        ? '?'
                        : s[i]);
  out[i] = '\0';
}

/*
 * The interpreter to suggest for a script without its execute bit: the
 * program its #! line names (the word after env or env -S), else one for its
 * extension (a Python script is the common case), else sh.
 */
static void script_interpreter(const char *path, char *out, size_t size) {
  static const struct {
    const char *ext, *interp;
  } by_ext[] = {{".py", "python3"},
                {".pl", "perl"},
                {".rb", "ruby"},
                {".js", "node"},
                {".bash", "bash"}};
  /* As much of the #! line as the kernel reads (BINPRM_BUF_SIZE). */
  char head[257], word[32] = "";
  const char *p, *dot;
  ssize_t n = -1;
  int fd;

  snprintf(out, size, "sh");
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd >= 0) {
    n = read(fd, head, sizeof(head) - 1);
    close(fd);
  }
  head[n > 0 ? n : 0] = '\0';
  if (n > 2 && head[0] == '#' && head[1] == '!') {
    p = head + 2 + strspn(head + 2, " \t");
    for (int i = 0; i < 3; i++) {
      size_t len = strcspn(p, " \t\r\n");
      const char *base = memrchr(p, '/', len);
      /* A word the read cut off (a #! line longer than head) is not
       * named: its end is not known. */
      bool cut = p[len] == '\0' && (size_t)n == sizeof(head) - 1;
      base = base ? base + 1 : p;
      len -= (size_t)(base - p);
      if (!len || len >= sizeof(word) || cut)
        break;
      memcpy(word, base, len);
      word[len] = '\0';
      /* "env PROGRAM", "env -S PROGRAM ARGS...": PROGRAM. */
      if (strcmp(word, "env") != 0 && (i == 0 || strcmp(word, "-S") != 0))
        break;
      word[0] = '\0';
      p = base + len + strspn(base + len, " \t");
    }
    /* Only a plain name is suggested: no option or odd byte. */
    if (word[0] && word[0] != '-' &&
        strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._+-") == strlen(word)) {
      snprintf(out, size, "%s", word);
      return;
    }
  }
  dot = strrchr(path, '.');
  if (dot && !strchr(dot, '/'))
    for (size_t i = 0; i < SR_ARRAY_SIZE(by_ext); i++)
      if (!strcmp(dot, by_ext[i].ext)) {
        snprintf(out, size, "%s", by_ext[i].interp);
        return;
      }
}

/*
 * Why argv[0] could not be executed, as one line a person can act on (the
 * supervisor prints it; exec_error has the errno): the path tried, and for
 * a file that exists, what is wrong with it.  Runs after exec failed, under
 * the seccomp filter, which allows stat, open and read.
 */
static void exec_failure(const char *bundle, const char *cmd, int e,
                         struct sr_error *out) {
  char shown[256], path[PATH_MAX], detail[448] = "", head[256];
  struct stat st;
  ssize_t n;
  int fd;

  printable(cmd, shown, sizeof(shown));
  if (!strchr(cmd, '/')) {
    bool own = snprintf(path, sizeof(path), "%s/%s", bundle, cmd) <
                   (int)sizeof(path) &&
               stat(path, &st) == 0;
    /* A name without a slash is looked up in PATH, as a shell does, not
     * in the working directory: say so when the skill has that file. */
    snprintf(detail, sizeof(detail), "%s%s%s",
             e == ENOENT || e == ENOTDIR
                 ? "not found in PATH"
                 : "found in PATH, but it cannot be executed",
             own ? "; the skill's own file is './" : "", own ? shown : "");
    if (own)
      strncat(detail, "'", sizeof(detail) - strlen(detail) - 1);
  } else {
    if (cmd[0] != '/')
      snprintf(path, sizeof(path), "%s/%s", bundle, cmd);
    else
      snprintf(path, sizeof(path), "%s", cmd);
    if (stat(path, &st) < 0) {
      detail[0] = '\0'; /* strerror says it */
    } else if (!S_ISREG(st.st_mode)) {
      snprintf(detail, sizeof(detail), "not a regular file");
    } else if (e == EACCES && !(st.st_mode & 0111)) {
      char interp[32];
      script_interpreter(path, interp, sizeof(interp));
      snprintf(detail, sizeof(detail),
               "not executable (mode %04o): run it with its interpreter, "
               "such as '%s %s'",
               (unsigned)(st.st_mode & 07777), interp, shown);
    } else if (e == EACCES) {
      snprintf(detail, sizeof(detail),
               "on a mount that does not allow execution (noexec)");
    } else if (e == ENOEXEC) {
      snprintf(detail, sizeof(detail),
               "not an executable format (a script needs a #! line)");
    } else if (e == ENOENT &&
               (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) >= 0) {
      /* The file is there: what is missing is what it names. */
      n = read(fd, head, sizeof(head) - 1);
      close(fd);
      head[n > 0 ? n : 0] = '\0';
      if (n > 2 && head[0] == '#' && head[1] == '!') {
        char interp[200];
        size_t k = strspn(head + 2, " \t");
        printable(head + 2 + k, interp, sizeof(interp));
        interp[strcspn(interp, " \t?")] = '\0';
        snprintf(detail, sizeof(detail),
                 "bad interpreter: '%s' (its #! line) is not in the sandbox",
                 interp);
      } else {
        snprintf(detail, sizeof(detail),
                 "its ELF interpreter (the dynamic loader) or a library is "
                 "not in the sandbox");
      }
    }
  }
  memset(out, 0, sizeof(*out));
  out->exit_code =
      e == ENOENT || e == ENOTDIR ? SR_EXIT_NOTFOUND : SR_EXIT_NOEXEC;
  out->err = e;
  snprintf(out->reason, sizeof(out->reason), "exec");
  snprintf(out->msg, sizeof(out->msg), "cannot execute '%s': %s%s%s", shown,
           detail, *detail ? ": " : "", strerror(e));
}

/* Tells init this process is narrowed (SR_SYNC_NARROWED, with the network
 * namespace it made, if any), then waits for init's SR_SYNC_GO: 0 once it
 * came, -1 on EOF or an error (init failed). */
static int wait_for_init(int go_fd, int netns_fd) {
  struct sr_sync_msg m;

  if (sr_sync_send(go_fd, SR_SYNC_NARROWED, 0, NULL, netns_fd) < 0 ||
      sr_sync_recv(go_fd, &m, NULL) < 0)
    return -1;
  return m.type == SR_SYNC_GO ? 0 : -1;
}

_Noreturn void sr_child_exec(const struct sr_sandbox *sb, int go_fd,
                             const struct sr_net_sysctl *sysctl) {
  const struct sr_policy *p = sb->policy;
  const char *bundle = p->skill_dir ? p->skill_dir : SR_VIEW_SKILLS "/bundle";
  struct sr_error err;
  sigset_t all;
  uint64_t altered;
  int keep[3];
  int nullfd, e, listener = -1, netns_fd = -1;
  bool fell_back = false;

  memset(&err, 0, sizeof(err));
  /* The root and cwd follow init's pivot_root(2)s only where they point at
   * the old root: make the cwd do so too. */
  if (chdir("/") < 0) {
    sr_error_layer(&err, "child", errno, "chdir /");
    fail(sb, &err);
  }
  /* Signals: default dispositions, nothing blocked, as a fresh process.
   * Only those not at the default are reset (execve(2) would reset a
   * caught one, but not an ignored one, such as the caller's SIGHUP under
   * nohup or skillrun's own SIGPIPE).  Above 64 (MIPS has 128), each. */
  altered = altered_signals();
  for (int s = 1; s < NSIG; s++) {
    if (s <= 64 && !(altered & (UINT64_C(1) << (s - 1))))
      continue;
    e = default_disposition(s);
    if (e < 0) {
      sr_error_layer(&err, "child", -e, "signal %d to its default", s);
      fail(sb, &err);
    }
  }
  sigemptyset(&all);
  if (sigprocmask(SIG_SETMASK, &all, NULL) < 0) {
    sr_error_layer(&err, "child", errno, "sigprocmask");
    fail(sb, &err);
  }

  /* A new session: no controlling terminal, so TIOCSTI cannot reach the
   * caller's terminal.  (This process was forked in init's session, not
   * the caller's: sr_init_main left it first, so no signal to the
   * caller's process group reaches the skill, before this or after.) */
  if (setsid() < 0) {
    sr_error_layer(&err, "session", errno, "setsid");
    fail(sb, &err);
  }
  if (dup2(sb->stdout_w, 1) < 0 || dup2(sb->stderr_w, 2) < 0) {
    sr_error_layer(&err, "fds", errno, "cannot set up stdout/stderr");
    fail(sb, &err);
  }
  /* --stdin: the pipe the supervisor feeds (else /dev/null, below). */
  if (sb->stdin_r >= 0 && dup2(sb->stdin_r, 0) < 0) {
    sr_error_layer(&err, "fds", errno, "cannot set up stdin");
    fail(sb, &err);
  }
  if (getuid() != SR_SANDBOX_UID || geteuid() != SR_SANDBOX_UID ||
      getgid() != SR_SANDBOX_GID || getegid() != SR_SANDBOX_GID) {
    sr_error_layer(&err, "ids", 0, "the skill is not running as %d:%d",
                   SR_SANDBOX_UID, SR_SANDBOX_GID);
    fail(sb, &err);
  }
  /* The sandbox's network namespace and its lo, made here while init
   * builds the mounts (init joins it before the skill may run): the last
   * use of the capabilities this process inherited.  (With the egress
   * proxy, clone made it, and init brings lo up before making the proxy's
   * listeners.) */
  if (sr_sandbox_child_netns(sb) &&
      sr_net_unshare_sandbox(sysctl, &netns_fd, &err) < 0)
    fail(sb, &err);
  if (sr_caps_drop_all(&err) < 0)
    fail(sb, &err);
  if (sr_set_no_new_privs(&err) < 0)
    fail(sb, &err);
  /* Only 0-2 survive exec: the sync socket is O_CLOEXEC and is still
   * needed to report an exec failure; go_fd is O_CLOEXEC too. */
  keep[0] = sb->sync_fd;
  keep[1] = go_fd;
  keep[2] = netns_fd;
  e = sr_close_all_fds_except(3, keep, netns_fd >= 0 ? 3 : 2);
  if (e < 0) {
    sr_error_layer(&err, "fds", -e, "close_range");
    fail(sb, &err);
  }
  if (apply_rlimits(p, sb->enf, &err) < 0 || sr_drop_realtime(&err) < 0 ||
      reset_personality(&err) < 0)
    fail(sb, &err);

  /* Inside the sandbox's root from here on. */
  if (wait_for_init(go_fd, netns_fd) < 0)
    _exit(SR_EXIT_FAILED);
  safe_close(go_fd);
  safe_close(netns_fd);
  /* Until now fd 0 was init's, opened on the host before the mounts. */
  if (sb->stdin_r < 0) {
    nullfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nullfd < 0 || dup2(nullfd, 0) < 0) {
      sr_error_layer(&err, "fds", errno, "cannot set up stdin");
      fail(sb, &err);
    }
    safe_close(nullfd);
  }
  /* The skill's own directory (skillrun(1), THE SANDBOX): the paths a
   * SKILL.md body gives, relative to the skill, work as written. */
  if (chdir(bundle) < 0) {
    sr_error_layer(&err, "mount", errno, "chdir %s", bundle);
    fail(sb, &err);
  }
  /* Landlock in the sandbox's root (its rules name the view's paths), after
   * no_new_privs, which it requires of an unprivileged caller; a domain
   * cannot be left, so nothing later undoes it. */
  if (sr_landlock_apply(sb->enf->landlock_abi, &err) < 0)
    fail(sb, &err);
  /* Last, so that nothing above runs under the filter's constraints. */
  if (sr_seccomp_load(sb->seccomp, &listener, &fell_back, &err) < 0)
    fail(sb, &err);
  /* The listener goes to the supervisor, which answers every refused call
   * with EPERM; the skill must never hold it (it could answer its own
   * refused calls), so it is closed here, before anything of the skill's
   * runs.  Until the supervisor reads it, a refused call waits. */
  if (listener >= 0) {
    e = sr_sync_send(sb->sync_fd, SR_SYNC_SECCOMP_LISTENER, 0, NULL, listener);
    safe_close(listener);
    if (e < 0) {
      sr_error_layer(&err, "seccomp", -e, "cannot hand over the listener");
      fail(sb, &err);
    }
  } else if (fell_back && (e = sr_sync_send(sb->sync_fd, SR_SYNC_SECCOMP_PLAIN,
                                            0, NULL, -1)) < 0) {
    sr_error_layer(&err, "seccomp", -e, "sync");
    fail(sb, &err);
  }

  e = exec_command(bundle, sb->argv, sb->envp);
  exec_failure(bundle, sb->argv[0], e, &err);
  (void)sr_sync_send(sb->sync_fd, SR_SYNC_EXEC_FAILED, e, &err, -1);
  _exit(e == ENOENT || e == ENOTDIR ? SR_EXIT_NOTFOUND : SR_EXIT_NOEXEC);
}
