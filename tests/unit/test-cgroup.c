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
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup-internal.h"
#include "cgroup.h"

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
    skip(); /* a cgroup v2 host: the VM tier's */
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mountinfo_split),
      cmocka_unit_test(test_mountinfo_split_malformed),
      cmocka_unit_test(test_v1_fast_matches_scan),
      cmocka_unit_test(test_v1_fast_rejects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
