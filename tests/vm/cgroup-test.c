/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup-test: exercises src/cgroup.c on a kernel with full cgroup v2 (the
 * VM tier), without the rest of skillrun.  Children are born in the leaf
 * with clone3(CLONE_INTO_CGROUP), as the supervisor does.  Prints TAP lines
 * ("ok - ...", "not ok - ...", "# ..."); exit status 1 when one failed.
 *
 *   cgroup-test [--cgroup-parent PATH] [--tag NAME]
 *   cgroup-test --expect-unavailable      (hosts without a usable v2 tree)
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "error.h"
#include "fdutil.h"
#include "policy.h"
#include "util.h"

#define MIB (1024ULL * 1024ULL)

static int failures;
static const char *tag = "root";
static const char *parent_override;

static void tap(bool ok, const char *fmt, ...) _printf_(2, 3);
static void tap(bool ok, const char *fmt, ...) {
  va_list ap;

  printf("%s - %s: ", ok ? "ok" : "not ok", tag);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  if (!ok)
    failures++;
}

static void diag(const char *fmt, ...) _printf_(1, 2);
static void diag(const char *fmt, ...) {
  va_list ap;

  printf("# %s: ", tag);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

static void policy_init(struct sr_policy *p, enum sr_cgroup_mode mode,
                        uint64_t mem, uint64_t pids) {
  memset(p, 0, sizeof(*p));
  p->cgroup = mode;
  p->limits[SR_LIM_MEMORY].value = mem;
  p->limits[SR_LIM_PIDS].value = pids;
  p->limits[SR_LIM_CPU_SECONDS].value = 60;
}

static void make_id(char *buf, size_t len, const char *what) {
  snprintf(buf, len, "t%d-%s-%s", (int)getpid(), tag, what);
}

/* Reads <dir>/<file> as an integer ("max" = -1). */
static long long read_ll(const char *dir, const char *file) {
  char path[512], buf[64] = "";
  _cleanup_close_ int fd = -1;
  size_t got = 0;

  snprintf(path, sizeof(path), "%s/%s", dir, file);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || sr_read_full(fd, buf, sizeof(buf) - 1, &got) < 0)
    return -2;
  buf[got] = '\0';
  if (!strncmp(buf, "max", 3))
    return -1;
  return strtoll(buf, NULL, 10);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

typedef int (*child_fn)(void *arg);

/* clone3 into the leaf, as the supervisor does; the child runs fn. */
static pid_t spawn_in(int leaf_fd, uint64_t extra_flags, child_fn fn,
                      void *arg) {
  struct clone_args ca;
  long pid;

  memset(&ca, 0, sizeof(ca));
  ca.flags = CLONE_INTO_CGROUP | extra_flags;
  ca.exit_signal = SIGCHLD;
  ca.cgroup = (uint64_t)leaf_fd;
  fflush(stdout);
  pid = syscall(SYS_clone3, &ca, sizeof(ca));
  if (pid == 0)
    _exit(fn(arg));
  return (pid_t)pid;
}

static int wait_status(pid_t pid) {
  int st = 0;
  while (waitpid(pid, &st, 0) < 0) {
    if (errno != EINTR)
      return -1;
  }
  return st;
}

/* The CPU time the supervisor polls (sr_cgroup_poll's counters). */
static int cpu_usec_of(const struct sr_cgroup *cg, uint64_t *usec) {
  struct sr_cgroup_counters c;
  int r = sr_cgroup_poll(cg, 0, &c);

  if (r == 0)
    *usec = c.cpu_usec;
  return r;
}

/* Reaps the grandchildren we inherited as a subreaper. */
static void reap_orphans(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0)
    ;
}

static int setup(struct sr_cgroup *cg, struct sr_policy *p, const char *what) {
  struct sr_error err = {0};
  char id[96];
  char *why = NULL;
  int r;

  make_id(id, sizeof(id), what);
  r = sr_cgroup_setup(cg, p, p->cgroup == SR_CGROUP_REQUIRE, parent_override,
                      id, &why, &err);
  if (r < 0 || !cg->active) {
    tap(false, "%s: sr_cgroup_setup: r=%d layer=%s msg=%s why=%s", what, r,
        err.layer, err.msg, why ? why : "-");
    free(why);
    return -1;
  }
  free(why);
  return 0;
}

static void destroy_and_check(struct sr_cgroup *cg, const char *what) {
  char *path = cg->leaf_path ? strdup(cg->leaf_path) : NULL;
  int r = sr_cgroup_remove(cg);

  tap(r == 0 && path && !exists(path) && cg->leaf_fd < 0 && !cg->active,
      "%s: sr_cgroup_remove removes the leaf (r=%d)", what, r);
  free(path);
}

/* ---------------------------------------------------------------- tests */

static void test_setup_readback(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  char want[128];
  long page = sysconf(_SC_PAGESIZE);

  /* Not a page multiple on purpose: setup must round down. */
  policy_init(&p, SR_CGROUP_REQUIRE, 32 * MIB + 100, 16);
  if (setup(&cg, &p, "readback") < 0)
    return;
  make_id(want, sizeof(want), "readback");
  tap(!strncmp(strrchr(cg.leaf_path, '/') + 1, "run-", 4) &&
          !strcmp(strrchr(cg.leaf_path, '/') + 5, want) &&
          exists(cg.leaf_path) && cg.leaf_fd >= 0 && cg.memory && cg.pids,
      "leaf %s exists, named run-<id>", cg.leaf_path);
  diag("parent %s, cpu controller %s", cg.parent_path, cg.cpu ? "yes" : "no");
  tap(read_ll(cg.leaf_path, "memory.max") ==
          (long long)((32 * MIB + 100) / (uint64_t)page * (uint64_t)page),
      "memory.max reads back %lld (32MiB+100 rounded down to pages)",
      read_ll(cg.leaf_path, "memory.max"));
  tap(read_ll(cg.leaf_path, "memory.swap.max") == 0,
      "memory.swap.max reads back 0");
  tap(read_ll(cg.leaf_path, "memory.oom.group") == 1,
      "memory.oom.group reads back 1");
  tap(read_ll(cg.leaf_path, "pids.max") == 16, "pids.max reads back 16");
  destroy_and_check(&cg, "readback");
}

static int child_memory_hog(void *arg) {
  (void)arg;
  for (int i = 0; i < 512; i++) {
    char *m = malloc(MIB);
    if (!m)
      return 3;
    memset(m, i + 1, MIB); /* touch every page */
  }
  return 0; /* 512 MiB survived a 32 MiB limit: the test fails */
}

static void test_oom(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  struct sr_cgroup_stats st = {0};
  pid_t pid;
  int status, r;

  policy_init(&p, SR_CGROUP_REQUIRE, 32 * MIB, 16);
  if (setup(&cg, &p, "oom") < 0)
    return;
  pid = spawn_in(cg.leaf_fd, 0, child_memory_hog, NULL);
  if (pid < 0) {
    tap(false, "oom: clone3(CLONE_INTO_CGROUP): %s", strerror(errno));
    sr_cgroup_remove(&cg);
    return;
  }
  status = wait_status(pid);
  tap(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
      "oom: memory hog killed by SIGKILL (status 0x%x)", status);
  r = sr_cgroup_stats(&cg, &st);
  tap(r == 0 && st.oom_kill >= 1,
      "oom: memory.events oom_kill=%llu recorded (r=%d)",
      (unsigned long long)st.oom_kill, r);
  tap(r == 0 && st.memory_peak > 0 && st.memory_peak <= 32 * MIB,
      "oom: memory.peak %llu within 32MiB", (unsigned long long)st.memory_peak);
  tap(kill(getpid(), 0) == 0, "oom: the supervisor outside the leaf lives");
  destroy_and_check(&cg, "oom");
}

static int child_fork_bomb(void *arg) {
  int wfd = *(int *)arg;
  int n = 0, e = 0;
  char msg[64];

  for (int i = 0; i < 1000; i++) {
    pid_t c = fork();
    if (c == 0) {
      pause();
      _exit(0);
    }
    if (c < 0) {
      e = errno;
      break;
    }
    n++;
  }
  snprintf(msg, sizeof(msg), "%d %d\n", n, e);
  if (sr_write_all(wfd, msg, strlen(msg)) < 0)
    return 2;
  pause(); /* keep the tree until the test kills the leaf */
  return 0;
}

static void test_fork_bomb(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  struct sr_cgroup_stats st = {0};
  int pfd[2], n = -1, e = -1, status, r;
  char buf[64] = "";
  size_t got = 0;
  pid_t pid;

  policy_init(&p, SR_CGROUP_REQUIRE, 64 * MIB, 16);
  if (setup(&cg, &p, "forkbomb") < 0)
    return;
  if (pipe2(pfd, O_CLOEXEC) < 0) {
    tap(false, "forkbomb: pipe2: %s", strerror(errno));
    sr_cgroup_remove(&cg);
    return;
  }
  pid = spawn_in(cg.leaf_fd, 0, child_fork_bomb, &pfd[1]);
  safe_close(pfd[1]);
  if (pid < 0) {
    tap(false, "forkbomb: clone3: %s", strerror(errno));
    safe_close(pfd[0]);
    sr_cgroup_remove(&cg);
    return;
  }
  /* One line, not EOF: the sleeping grandchildren keep the pipe open. */
  r = 0;
  while (got < sizeof(buf) - 1 && !memchr(buf, '\n', got)) {
    ssize_t k = read(pfd[0], buf + got, sizeof(buf) - 1 - got);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      r = k < 0 ? -errno : -EPIPE;
      break;
    }
    got += (size_t)k;
  }
  safe_close(pfd[0]);
  if (r == 0 && sscanf(buf, "%d %d", &n, &e) != 2)
    n = e = -1;
  tap(n >= 0 && n <= 15 && e == EAGAIN,
      "forkbomb: fork fails with EAGAIN after %d children (pids.max 16)", n);
  r = sr_cgroup_stats(&cg, &st);
  tap(r == 0 && st.pids_max_hit >= 1 && st.pids_peak <= 16,
      "forkbomb: pids.events max=%llu, pids.peak=%llu",
      (unsigned long long)st.pids_max_hit, (unsigned long long)st.pids_peak);
  r = sr_cgroup_kill(&cg);
  status = wait_status(pid);
  tap(r == 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
      "forkbomb: sr_cgroup_kill kills the tree (r=%d status 0x%x)", r, status);
  destroy_and_check(&cg, "forkbomb");
  reap_orphans();
}

static int child_cpu_burner(void *arg) {
  (void)arg;
  /* Three processes spin: the budget is for the whole tree. */
  for (int i = 0; i < 2; i++)
    if (fork() < 0)
      return 2;
  for (volatile unsigned long x = 0;; x++)
    ;
  return 0;
}

static void test_cpu_budget(void) {
  const uint64_t budget_usec = 1000000; /* 1 CPU-second */
  struct sr_cgroup cg;
  struct sr_policy p;
  struct sr_cgroup_stats st = {0};
  uint64_t usec = 0, start, wall;
  pid_t pid;
  int status, r;

  policy_init(&p, SR_CGROUP_REQUIRE, 64 * MIB, 16);
  if (setup(&cg, &p, "cpu") < 0)
    return;
  r = cpu_usec_of(&cg, &usec);
  tap(r == 0 && usec == 0, "cpu: usage_usec starts at 0 (r=%d, %llu)", r,
      (unsigned long long)usec);
  start = sr_now_mono_ms();
  pid = spawn_in(cg.leaf_fd, 0, child_cpu_burner, NULL);
  if (pid < 0) {
    tap(false, "cpu: clone3: %s", strerror(errno));
    sr_cgroup_remove(&cg);
    return;
  }
  /* The supervisor's poll loop, in miniature. */
  while ((r = cpu_usec_of(&cg, &usec)) == 0 && usec < budget_usec &&
         sr_now_mono_ms() - start < 60000)
    usleep(50000);
  wall = sr_now_mono_ms() - start;
  tap(r == 0 && usec >= budget_usec,
      "cpu: usage_usec grows to %llu under the burner (%llu ms wall)",
      (unsigned long long)usec, (unsigned long long)wall);
  r = sr_cgroup_kill(&cg);
  status = wait_status(pid);
  tap(r == 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
      "cpu: budget spent, cgroup.kill stops the burner (status 0x%x)", status);
  r = sr_cgroup_stats(&cg, &st);
  tap(r == 0 && st.cpu_usec >= usec, "cpu: stats cpu_usec %llu >= polled %llu",
      (unsigned long long)st.cpu_usec, (unsigned long long)usec);
  destroy_and_check(&cg, "cpu");
  reap_orphans();
}

static int child_cgroupns(void *arg) {
  char buf[256] = "";
  size_t got = 0;
  int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);

  (void)arg;
  if (fd < 0 || sr_read_full(fd, buf, sizeof(buf) - 1, &got) < 0)
    return 2;
  buf[got] = '\0';
  if (strcmp(buf, "0::/\n") != 0) {
    printf("# child reads /proc/self/cgroup = %s", buf);
    fflush(stdout);
    return 1;
  }
  return 0;
}

static void test_cgroupns(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  uint64_t flags = CLONE_NEWCGROUP;
  pid_t pid;
  int status;

  /* Unprivileged, the cgroup namespace needs its own user namespace. */
  if (geteuid() != 0)
    flags |= CLONE_NEWUSER;
  policy_init(&p, SR_CGROUP_REQUIRE, 64 * MIB, 16);
  if (setup(&cg, &p, "cgns") < 0)
    return;
  pid = spawn_in(cg.leaf_fd, flags, child_cgroupns, NULL);
  status = pid < 0 ? -1 : wait_status(pid);
  tap(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
      "cgns: born in the leaf with CLONE_NEWCGROUP, /proc/self/cgroup is "
      "0::/ (status 0x%x)",
      status);
  destroy_and_check(&cg, "cgns");
}

/* Writes s to path: 0 or -errno. */
static int put(const char *path, const char *s) {
  _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  return write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -errno;
}

#define CTR "/sys/fs/cgroup/vm-ctr"

/* In CTR/init, in a cgroup namespace and a mount namespace of its own
 * with cgroup2 mounted again at /sys/fs/cgroup, as a container runtime
 * does: the mount's root is CTR, with its memory.max of 48 MiB.  The
 * run's leaf goes below that root's skillrun subtree, and the walk up
 * from it (outer_limit) reads the container's memory.max: 0 when the
 * leaf's memory.max and cg.outer_memory are 48 MiB for a run of 256. */
static int child_container(void *arg) {
  struct sr_cgroup cg;
  struct sr_policy p;
  long long leaf_max;
  int ret;

  (void)arg;
  /* The namespace's root is the cgroup it is made in, CTR; its processes
   * then go below it (the no-internal-processes rule), as a runtime's. */
  ret = put(CTR "/cgroup.procs", "0\n");
  if (ret < 0 || unshare(CLONE_NEWCGROUP | CLONE_NEWNS) < 0 ||
      (ret = put(CTR "/init/cgroup.procs", "0\n")) < 0) {
    printf("# container: enter %s: %s\n", CTR,
           strerror(ret < 0 ? -ret : errno));
    fflush(stdout);
    return 2;
  }
  /* The new mount namespace's mounts private first (the initramfs's may
   * be shared), so that the container's cgroup2 stays its own. */
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      umount2("/sys/fs/cgroup", MNT_DETACH) < 0 ||
      mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL) < 0) {
    printf("# container: cgroup2 at /sys/fs/cgroup: %s\n", strerror(errno));
    fflush(stdout);
    return 2;
  }
  policy_init(&p, SR_CGROUP_REQUIRE, 256 * MIB, 16);
  if (setup(&cg, &p, "container") < 0) {
    fflush(stdout);
    return 3;
  }
  leaf_max = read_ll(cg.leaf_path, "memory.max");
  printf("# container: leaf %s, memory.max %lld, outer %llu at %s\n",
         cg.leaf_path, leaf_max, (unsigned long long)cg.outer_memory,
         cg.outer_memory_at ? cg.outer_memory_at : "-");
  ret = 4;
  if (leaf_max == (long long)(48 * MIB) && cg.outer_memory == 48 * MIB)
    ret = 0;
  if (sr_cgroup_remove(&cg) < 0)
    ret = 5;
  sr_cgroup_done(&cg);
  fflush(stdout);
  return ret;
}

static void test_container(void) {
  pid_t pid;
  int status;

  /* Root finding its own subtree only: a container runtime's. */
  if (geteuid() != 0 || parent_override)
    return;
  if (mkdir(CTR, 0755) < 0 || mkdir(CTR "/init", 0755) < 0 ||
      put(CTR "/memory.max", "48M\n") < 0) {
    tap(false, "container: make %s with memory.max 48M: %s", CTR,
        strerror(errno));
  } else {
    fflush(stdout);
    pid = fork();
    if (pid == 0)
      _exit(child_container(NULL));
    status = pid < 0 ? -1 : wait_status(pid);
    tap(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "container: root in a cgroup namespace whose root has memory.max "
        "48M: the leaf's and the run's memory are 48 MiB (status 0x%x)",
        status);
  }
  (void)rmdir(CTR "/skillrun");
  (void)rmdir(CTR "/init");
  (void)rmdir(CTR);
  tap(!exists(CTR), "container: %s removed", CTR);
}

static int child_sleeper(void *arg) {
  int leaf_fd = *(int *)arg;

  /* Drop our copy of the leaf fd (and its --gc lock) when asked to. */
  if (leaf_fd >= 0)
    safe_close(leaf_fd);
  pause();
  return 0;
}

static void test_destroy_populated(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  int keep = -1, status, r;
  char *path;
  pid_t pid;

  policy_init(&p, SR_CGROUP_REQUIRE, 64 * MIB, 16);
  if (setup(&cg, &p, "busy") < 0)
    return;
  pid = spawn_in(cg.leaf_fd, 0, child_sleeper, &keep);
  path = strdup(cg.leaf_path);
  r = sr_cgroup_remove(&cg);
  status = wait_status(pid);
  tap(r == 0 && path && !exists(path) && WIFSIGNALED(status) &&
          WTERMSIG(status) == SIGKILL,
      "busy: destroy of a populated leaf kills what is left and removes it "
      "(r=%d status 0x%x)",
      r, status);
  free(path);
}

/* A supervisor killed with SIGKILL: its fd (and lock) are gone, the leaf
 * stays behind. */
static char *abandon(struct sr_cgroup *cg) {
  char *path = TAKE_PTR(cg->leaf_path);
  safe_close(cg->leaf_fd);
  cg->leaf_fd = -1;
  free(cg->parent_path);
  cg->parent_path = NULL;
  cg->active = false;
  return path;
}

static void test_gc(void) {
  struct sr_cgroup dead, live, busy;
  struct sr_policy p;
  struct sr_error err = {0};
  char *dead_path = NULL, *busy_path = NULL;
  int busy_fd, status, r;
  pid_t pid = -1;

  policy_init(&p, SR_CGROUP_REQUIRE, 64 * MIB, 16);
  /* The sleeper first, so that it holds no copy of the other leaves' fds
   * (and their locks). */
  if (setup(&busy, &p, "gc-busy") < 0)
    return;
  busy_fd = busy.leaf_fd;
  pid = spawn_in(busy.leaf_fd, 0, child_sleeper, &busy_fd);
  if (setup(&dead, &p, "gc-dead") < 0) {
    sr_cgroup_remove(&busy);
    return;
  }
  if (setup(&live, &p, "gc-live") < 0) {
    sr_cgroup_remove(&dead);
    sr_cgroup_remove(&busy);
    return;
  }
  dead_path = abandon(&dead);
  busy_path = abandon(&busy);

  r = sr_cgroup_gc(parent_override, 0, NULL, &err);
  tap(r == 0 && exists(dead_path),
      "gc: a just-abandoned leaf is left alone (too young) (r=%d %s)", r,
      err.msg);
  sleep(3);
  /* As a run's launch does: with fewer leaves than its budget, it looks
   * at every one. */
  r = sr_cgroup_gc(parent_override, SR_CGROUP_GC_LAUNCH_MAX, NULL, &err);
  tap(r == 0 && !exists(dead_path),
      "gc: an empty, unlocked leaf is removed by a launch (r=%d %s)", r,
      err.msg);
  tap(exists(live.leaf_path), "gc: a live run's (locked) leaf is kept");
  tap(exists(busy_path), "gc: a populated leaf is kept");

  /* Clean up: kill the sleeper through a fresh fd, then gc again. */
  if (pid > 0) {
    char kill_path[512];
    snprintf(kill_path, sizeof(kill_path), "%s/cgroup.kill", busy_path);
    r = sr_write_file_at(AT_FDCWD, kill_path, "1\n");
    status = wait_status(pid);
    (void)status;
  }
  sleep(1);
  r = sr_cgroup_gc(parent_override, 0, NULL, &err);
  tap(r == 0 && !exists(busy_path),
      "gc: the leaf is removed once its processes are gone (r=%d)", r);
  destroy_and_check(&live, "gc-live");
  free(dead_path);
  free(busy_path);
}

static void test_bad_parent(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  struct sr_error err = {0};
  char *why = NULL;
  int r;

  policy_init(&p, SR_CGROUP_PREFER, 64 * MIB, 16);
  r = sr_cgroup_setup(&cg, &p, false, "/proc", "bad-parent", &why, &err);
  tap(r < 0 && !cg.active && !strcmp(err.layer, "cgroup"),
      "a --cgroup-parent that is not cgroup v2 fails, even with prefer "
      "(%s)",
      err.msg);
  free(why);
}

/* Hosts without a usable v2 tree (the hybrid development machines). */
static void test_unavailable(void) {
  struct sr_cgroup cg;
  struct sr_policy p;
  struct sr_error err = {0};
  char *why = NULL;
  int r;

  policy_init(&p, SR_CGROUP_PREFER, 64 * MIB, 16);
  r = sr_cgroup_setup(&cg, &p, false, NULL, "unavail", &why, &err);
  tap(r == 0 && !cg.active && cg.leaf_fd < 0 && why,
      "prefer falls back: active false (why: %s)", why ? why : "(null)");
  free(why);
  why = NULL;

  policy_init(&p, SR_CGROUP_REQUIRE, 64 * MIB, 16);
  r = sr_cgroup_setup(&cg, &p, true, NULL, "unavail", &why, &err);
  tap(r < 0 && !cg.active && !strcmp(err.layer, "cgroup") &&
          err.exit_code == SR_EXIT_FAILED,
      "require fails in layer cgroup, exit 125 (%s)", err.msg);
  free(why);
  why = NULL;
  sr_error_clear(&err);

  policy_init(&p, SR_CGROUP_OFF, 64 * MIB, 16);
  r = sr_cgroup_setup(&cg, &p, false, NULL, "unavail", &why, &err);
  tap(r == 0 && !cg.active && why, "cgroup off: no leaf (%s)",
      why ? why : "(null)");
  free(why);
  tap(sr_cgroup_remove(&cg) == 0, "destroy of an inactive cgroup is a no-op");
  tap(sr_cgroup_gc(NULL, 0, NULL, &err) == 0, "gc with no subtree is a no-op");
}

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"cgroup-parent", required_argument, NULL, 'P'},
      {"tag", required_argument, NULL, 't'},
      {"expect-unavailable", no_argument, NULL, 'U'},
      {0},
  };
  bool unavailable = false;
  int c;

  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
    case 'P':
      parent_override = optarg;
      break;
    case 't':
      tag = optarg;
      break;
    case 'U':
      unavailable = true;
      break;
    default:
      return 2;
    }
  }
  if (unavailable) {
    test_unavailable();
    return failures ? 1 : 0;
  }
  /* Grandchildren of fork bombs and burners are reparented to us. */
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
    tap(false, "prctl(PR_SET_CHILD_SUBREAPER): %s", strerror(errno));
    return 1;
  }
  diag("uid %u, cgroup parent %s", (unsigned)geteuid(),
       parent_override ? parent_override : "(discovered)");
  test_setup_readback();
  test_oom();
  test_fork_bomb();
  test_cpu_budget();
  test_cgroupns();
  test_container();
  test_destroy_populated();
  test_gc();
  test_bad_parent();
  return failures ? 1 : 0;
}
