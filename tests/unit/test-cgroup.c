/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the two cgroup backends share for finding their mounts: a line of
 * /proc/self/mountinfo split, its mount point's escapes decoded
 * (src/cgroup.c, cgroup-internal.h); the cgroup v1 hierarchies found
 * without mountinfo (src/cgroup1.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup-internal.h"
#include "cgroup.h"
#include "error.h"
#include "fdutil.h"
#include "policy.h"

static void test_mountinfo_split(void **state) {
  char v2[] = "35 24 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev shared:9 "
              "- cgroup2 cgroup2 rw,nsdelegate";
  char v1[] = "36 24 0:31 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup "
              "rw,memory";
  char escaped[] = "40 24 0:33 / /mnt/a\\040b\\134c rw - cgroup2 none rw";
  /* An option that ends in '-' is no separator. */
  char dash[] = "41 24 0:34 / /x rw,opt- master:3 - tmpfs tmpfs rw";
  char *mnt = NULL, *fstype = NULL;
  (void)state;

  assert_int_equal(sr_cg_mountinfo_split(v2, &mnt, &fstype), 0);
  assert_string_equal(mnt, "/sys/fs/cgroup/unified");
  assert_string_equal(fstype, "cgroup2 cgroup2 rw,nsdelegate");
  assert_int_equal(sr_cg_mountinfo_split(v1, &mnt, &fstype), 0);
  assert_string_equal(mnt, "/sys/fs/cgroup/memory");
  assert_string_equal(fstype, "cgroup cgroup rw,memory");
  assert_int_equal(sr_cg_mountinfo_split(escaped, &mnt, &fstype), 0);
  assert_string_equal(mnt, "/mnt/a b\\c");
  assert_string_equal(fstype, "cgroup2 none rw");
  assert_int_equal(sr_cg_mountinfo_split(dash, &mnt, &fstype), 0);
  assert_string_equal(mnt, "/x");
  assert_string_equal(fstype, "tmpfs tmpfs rw");
}

static void test_mountinfo_split_malformed(void **state) {
  const char *const bad[] = {
      "",
      "35 24 0:30 / /sys/fs/cgroup",
      "35 24 0:30 / /sys/fs/cgroup rw",
      "35 24 0:30 / /sys/fs/cgroup rw shared:9 cgroup2 cgroup2 rw",
  };
  (void)state;

  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char line[128];
    char *mnt = NULL, *fstype = NULL;

    snprintf(line, sizeof(line), "%s", bad[i]);
    assert_int_equal(sr_cg_mountinfo_split(line, &mnt, &fstype), -EINVAL);
    assert_null(mnt);
    assert_null(fstype);
  }
}

static void free_mounts(char *mnt[SR__CG1_MAX]) {
  for (int c = 0; c < SR__CG1_MAX; c++) {
    free(mnt[c]);
    mnt[c] = NULL;
  }
}

static void assert_none(char *mnt[SR__CG1_MAX]) {
  for (int c = 0; c < SR__CG1_MAX; c++)
    assert_null(mnt[c]);
}

/* Where the host mounts cgroup v1 (this test's CI host does), the
 * hierarchies found by statfs under /sys/fs/cgroup are the ones mountinfo
 * names: the same file system for each, so the same leaves.  The pids
 * hierarchy is known by its skillrun subtree: as root the test makes it
 * when no run has yet (and removes it after); otherwise the fast path must
 * say it found nothing. */
static void test_v1_fast_matches_scan(void **state) {
  char *fast[SR__CG1_MAX], *scan[SR__CG1_MAX];
  char sub[4096];
  bool made = false;
  int r;
  (void)state;

  assert_int_equal(sr_cg1_mounts_scan(scan), 0);
  if (!scan[SR_CG1_MEMORY] || !scan[SR_CG1_PIDS] || !scan[SR_CG1_CPUACCT]) {
    free_mounts(scan);
    /* A cgroup v2 host (the VM tier's).  Not skip(): see v1_setup. */
    print_message("# no cgroup v1 hierarchies here: not exercised\n");
    return;
  }
  snprintf(sub, sizeof(sub), "%s/skillrun", scan[SR_CG1_PIDS]);
  if (geteuid() == 0 && access(sub, F_OK) < 0)
    made = mkdir(sub, 0755) == 0;
  r = sr_cg1_mounts_fast("/sys/fs/cgroup", fast);
  if (access(sub, F_OK) < 0) {
    assert_int_equal(r, -ENOENT);
    assert_none(fast);
  } else {
    assert_int_equal(r, 0);
    for (int c = 0; c < SR__CG1_MAX; c++) {
      struct stat a, b;

      if (!fast[c] || !scan[c]) {
        fail_msg("no mount point for controller %d", c);
        continue;
      }
      assert_int_equal(stat(fast[c], &a), 0);
      assert_int_equal(stat(scan[c], &b), 0);
      assert_int_equal(a.st_dev, b.st_dev);
    }
  }
  if (made)
    assert_int_equal(rmdir(sub), 0);
  free_mounts(fast);
  free_mounts(scan);
}

static const char *const names[] = {"memory", "pids", "cpuacct"};

/* The files, then their directories deepest first (FILES as made below). */
static void remove_tree(const char *base, const char *const *files, size_t n,
                        bool base_too) {
  char p[4096];

  for (size_t i = 0; i < n; i++) {
    snprintf(p, sizeof(p), "%s/%s", base, files[i]);
    assert_int_equal(unlink(p), 0);
    for (char *slash = strrchr(p, '/'); slash && slash > p + strlen(base);
         slash = strrchr(p, '/')) {
      *slash = '\0';
      (void)rmdir(p); /* shared by no other file here */
    }
  }
  if (base_too)
    assert_int_equal(rmdir(base), 0);
}

/* What looks like the usual layout but is not cgroupfs, or reaches it only
 * through symlinks, is not taken: the scan of mountinfo decides. */
static void test_v1_fast_rejects(void **state) {
  char base[] = "/tmp/sr-cg1-fast.XXXXXX", p[4096];
  char *mnt[SR__CG1_MAX];
  static const char *const files[] = {"memory/memory.limit_in_bytes",
                                      "pids/skillrun/pids.max",
                                      "cpuacct/cpuacct.usage"};
  (void)state;

  assert_non_null(mkdtemp(base));
  /* Directories and files of the right names on an ordinary file system. */
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    char *slash;
    int fd;

    snprintf(p, sizeof(p), "%s/%s", base, files[i]);
    for (slash = strchr(p + strlen(base) + 1, '/'); slash;
         slash = strchr(slash + 1, '/')) {
      *slash = '\0';
      (void)mkdir(p, 0755);
      *slash = '/';
    }
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    close(fd);
  }
  assert_int_equal(sr_cg1_mounts_fast(base, mnt), -ENOENT);
  assert_none(mnt);
  /* Symlinks to the real hierarchies (where the host has them). */
  remove_tree(base, files, sizeof(files) / sizeof(files[0]), false);
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    char target[64];

    snprintf(p, sizeof(p), "%s/%s", base, names[i]);
    snprintf(target, sizeof(target), "/sys/fs/cgroup/%s", names[i]);
    assert_int_equal(symlink(target, p), 0);
  }
  assert_int_equal(sr_cg1_mounts_fast(base, mnt), -ENOENT);
  assert_none(mnt);
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    snprintf(p, sizeof(p), "%s/%s", base, names[i]);
    assert_int_equal(unlink(p), 0);
  }
  assert_int_equal(rmdir(base), 0);
}

/* sr_cg_read_at reads a short file with one read(2) and leaves longer ones
 * to the general reader: every size around that boundary reads back whole;
 * what is not a regular file is refused without waiting. */
static void test_read_at_sizes(void **state) {
  static const size_t sizes[] = {0,    1,    9,    100,   2046,
                                 2047, 2048, 2049, 4095,  4096,
                                 4097, 5000, 8192, 65535, 65536};
  char base[] = "/tmp/sr-cg-read.XXXXXX", p[4096];
  char *want, *got = NULL;
  int dfd;
  (void)state;

  assert_non_null(mkdtemp(base));
  dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(dfd >= 0);
  want = malloc(65537);
  assert_non_null(want);
  for (size_t i = 0; i < 65537; i++)
    want[i] = i % 8 == 7 ? '\n' : (char)('0' + i % 10);
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    int fd = openat(dfd, "f", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, want, sizes[i]), (ssize_t)sizes[i]);
    close(fd);
    assert_int_equal(sr_cg_read_at(dfd, "f", &got), 0);
    assert_int_equal(strlen(got), sizes[i]);
    assert_memory_equal(got, want, sizes[i]);
    free(got);
    got = NULL;
  }
  /* Over the cap (64 KiB). */
  {
    int fd = openat(dfd, "f", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, want, 65537), 65537);
    close(fd);
    assert_int_equal(sr_cg_read_at(dfd, "f", &got), -EFBIG);
  }
  /* A FIFO (no writer: an empty read) and a directory are refused; a
   * symlink is not followed. */
  assert_int_equal(mkfifoat(dfd, "fifo", 0600), 0);
  assert_int_equal(sr_cg_read_at(dfd, "fifo", &got), -EINVAL);
  assert_int_equal(mkdirat(dfd, "dir", 0700), 0);
  assert_int_equal(sr_cg_read_at(dfd, "dir", &got), -EISDIR);
  assert_int_equal(symlinkat("f", dfd, "link"), 0);
  assert_int_equal(sr_cg_read_at(dfd, "link", &got), -ELOOP);
  assert_int_equal(sr_cg_read_at(dfd, "missing", &got), -ENOENT);
  assert_null(got);
  for (size_t i = 0; i < 4; i++) {
    static const char *const n[] = {"f", "fifo", "link", "dir"};
    snprintf(p, sizeof(p), "%s/%s", base, n[i]);
    assert_int_equal(i == 3 ? rmdir(p) : unlink(p), 0);
  }
  close(dfd);
  assert_int_equal(rmdir(base), 0);
  free(want);
}

static bool v1_leaves_exist(const struct sr_cgroup *cg, char **paths) {
  bool any = false;

  for (int c = 0; c < SR__CG1_MAX; c++)
    any = any || access(paths[c], F_OK) == 0;
  (void)cg;
  return any;
}

/* A cgroup v1 leaf for this test (as root, on a host with the v1
 * hierarchies, like this one's CI host).  False, with a TAP comment saying
 * why, elsewhere: not cmocka's skip(), whose "not ok # SKIP" tap-driver.sh
 * counts as a failure. */
static bool v1_setup(struct sr_cgroup *cg, const char *what, char **paths) {
  struct sr_policy p;
  struct sr_error err = {0};
  char id[96], *why = NULL;
  int r;

  if (geteuid() != 0) {
    print_message("# %s: needs root (cgroup v1 leaves): not exercised\n", what);
    return false;
  }
  memset(&p, 0, sizeof(p));
  p.cgroup = SR_CGROUP_PREFER;
  p.limits[SR_LIM_MEMORY].value = 64 << 20;
  p.limits[SR_LIM_PIDS].value = 16;
  p.limits[SR_LIM_CPU_SECONDS].value = 60;
  snprintf(id, sizeof(id), "t%d-unit-%s", (int)getpid(), what);
  r = sr_cgroup_setup(cg, &p, false, NULL, id, &why, &err);
  free(why);
  assert_int_equal(r, 0);
  if (!cg->active || cg->version != SR_CGV_1) {
    sr_cgroup_done(cg);
    print_message("# %s: no cgroup v1 here (the VM tier tests v2's "
                  "removal): not exercised\n",
                  what);
    return false;
  }
  for (int c = 0; c < SR__CG1_MAX; c++) {
    paths[c] = strdup(cg->v1_path[c]);
    assert_non_null(paths[c]);
  }
  assert_true(v1_leaves_exist(cg, paths));
  return true;
}

/* An empty set of v1 leaves goes at the first rmdir. */
static void test_v1_remove_empty(void **state) {
  struct sr_cgroup cg;
  char *paths[SR__CG1_MAX];
  (void)state;

  if (!v1_setup(&cg, "empty", paths))
    return;
  assert_int_equal(sr_cgroup_remove(&cg), 0);
  assert_false(cg.active);
  assert_false(v1_leaves_exist(&cg, paths));
  for (int c = 0; c < SR__CG1_MAX; c++)
    free(paths[c]);
  sr_cgroup_done(&cg);
}

/* Forks n children that join the v1 leaves in `mask` (bits of enum
 * sr_cg1_ctrl) and wait; returns when all have joined. */
static void spawn_joined(struct sr_cgroup *cg, unsigned mask, pid_t *pids,
                         size_t n) {
  const char *jpaths[SR__CG1_MAX];
  int fds[SR__CG1_MAX], sync[2];
  struct sr_error err = {0};

  assert_int_equal(sr_cgroup_open_join(cg, fds, jpaths, SR__CG1_MAX, &err),
                   SR__CG1_MAX);
  assert_int_equal(pipe2(sync, O_CLOEXEC), 0);
  for (size_t i = 0; i < n; i++) {
    pids[i] = fork();
    assert_true(pids[i] >= 0);
    if (pids[i] == 0) {
      for (int c = 0; c < SR__CG1_MAX; c++)
        if ((mask & (1u << c)) && write(fds[c], "0", 1) != 1)
          _exit(2);
      if (write(sync[1], "j", 1) != 1)
        _exit(3);
      for (;;)
        pause();
    }
  }
  for (int c = 0; c < SR__CG1_MAX; c++)
    close(fds[c]);
  close(sync[1]);
  for (size_t i = 0; i < n; i++) {
    char c1;
    assert_int_equal(read(sync[0], &c1, 1), 1);
  }
  close(sync[0]);
}

static void assert_killed(pid_t pid) {
  int status = 0;

  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* One process in the v1 leaves of `mask`, then sr_cgroup_remove: it is
 * killed and every leaf removed. */
static void remove_with_process(const char *what, unsigned mask) {
  struct sr_cgroup cg;
  char *paths[SR__CG1_MAX];
  pid_t pid;

  if (!v1_setup(&cg, what, paths))
    return;
  spawn_joined(&cg, mask, &pid, 1);
  assert_int_equal(sr_cgroup_remove(&cg), 0);
  assert_killed(pid);
  assert_false(v1_leaves_exist(&cg, paths));
  for (int c = 0; c < SR__CG1_MAX; c++)
    free(paths[c]);
  sr_cgroup_done(&cg);
}

/* A process still in the leaves (the rmdir says EBUSY). */
static void test_v1_remove_populated(void **state) {
  (void)state;
  remove_with_process("busy", (1u << SR__CG1_MAX) - 1);
}

/* A process in some leaves only (the pids leaf, found empty, goes at the
 * first rmdir): it is killed through a leaf it is in. */
static void test_v1_remove_partly(void **state) {
  (void)state;
  remove_with_process("partly", (1u << SR_CG1_MEMORY) | (1u << SR_CG1_CPUACCT));
}

/* What sr_cg_read_at relies on, on real cgroupfs: a cgroup.procs longer
 * than half a page, and longer than a page, reads back whole (the same
 * text as the general reader, one line per process). */
static void test_v1_read_long_procs(void **state) {
  enum { N = 700 }; /* about 2.8 KiB of pids at first, over 4 KiB later */
  static pid_t pids[N];
  struct sr_cgroup cg;
  char *paths[SR__CG1_MAX];
  (void)state;

  if (!v1_setup(&cg, "long", paths))
    return;
  for (size_t done = 0, step = 300; done < N; done += step) {
    char *fast = NULL, *full = NULL;
    size_t lines = 0;

    if (step > N - done)
      step = N - done;
    spawn_joined(&cg, 1u << SR_CG1_MEMORY, pids + done, step);
    assert_int_equal(
        sr_cg_read_at(cg.v1_fd[SR_CG1_MEMORY], "cgroup.procs", &fast), 0);
    assert_int_equal(sr_read_file_at(cg.v1_fd[SR_CG1_MEMORY], "cgroup.procs",
                                     1 << 20, &full, NULL),
                     0);
    assert_string_equal(fast, full);
    for (const char *p = fast; *p; p++)
      lines += *p == '\n';
    assert_int_equal(lines, done + step);
    free(fast);
    free(full);
  }
  for (size_t i = 0; i < N; i++)
    kill(pids[i], SIGKILL);
  for (size_t i = 0; i < N; i++)
    assert_killed(pids[i]);
  assert_int_equal(sr_cgroup_remove(&cg), 0);
  assert_false(v1_leaves_exist(&cg, paths));
  for (int c = 0; c < SR__CG1_MAX; c++)
    free(paths[c]);
  sr_cgroup_done(&cg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mountinfo_split),
      cmocka_unit_test(test_mountinfo_split_malformed),
      cmocka_unit_test(test_v1_fast_matches_scan),
      cmocka_unit_test(test_v1_fast_rejects),
      cmocka_unit_test(test_read_at_sizes),
      cmocka_unit_test(test_v1_remove_empty),
      cmocka_unit_test(test_v1_remove_populated),
      cmocka_unit_test(test_v1_remove_partly),
      cmocka_unit_test(test_v1_read_long_procs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
