/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --gc's test of a leaf (sr_cg_gc_skip_at, sr_cg_gc_candidate,
 * sr_cg_gc_dir: src/cgroup.c), on plain directories: flock(2) behaves
 * there as on a cgroup's, and ctime as on a cgroup whose inode stays
 * loaded (cgroupfs stamps it when the inode is loaded, not when the
 * leaf is made: cgroup.h).  Runs collect stale leaves while others may
 * be between making and locking theirs, so a young leaf must never be
 * locked by the collector, or the run that made it fails its own lock. */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup-internal.h"

/* A fresh directory, its path in buf, and an fd of it. */
static int make_dir(char *buf) {
  int fd;

  assert_non_null(mkdtemp(buf));
  fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(fd >= 0);
  return fd;
}

/* Whether the file system of the directory at fd counts its child
 * directories in its link count, as cgroupfs does (sr_cg_gc_dir relies on
 * it; btrfs and some FUSE file systems do not). */
static bool counts_children(int fd) {
  struct stat before, after;
  bool yes;

  assert_int_equal(fstat(fd, &before), 0);
  assert_int_equal(mkdirat(fd, "probe", 0700), 0);
  assert_int_equal(fstat(fd, &after), 0);
  yes = before.st_nlink == 2 && after.st_nlink == 3;
  assert_int_equal(unlinkat(fd, "probe", AT_REMOVEDIR), 0);
  return yes;
}

/* Whether another open file description can take the lock now. */
static int lockable(const char *path) {
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ok;

  assert_true(fd >= 0);
  ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);
  return ok;
}

static void test_young_leaf_is_left_unlocked(void **state) {
  char path[] = "/tmp/sr-cg-gc.XXXXXX";
  int fd = make_dir(path);

  (void)state;
  assert_int_equal(sr_cg_gc_candidate(fd), 0);
  /* The run that made it can still lock it. */
  assert_true(lockable(path));
  close(fd);
  rmdir(path);
}

/* The collector's first look, one fstatat(2) before it opens anything:
 * a young directory or a name gone is skipped. */
static void test_skip_without_opening(void **state) {
  char path[] = "/tmp/sr-cg-gc.XXXXXX";
  char file[sizeof(path) + 2];
  int fd = make_dir(path), f;

  (void)state;
  assert_true(sr_cg_gc_skip_at(AT_FDCWD, path));
  /* Not a directory: left to the full check, which reports it. */
  snprintf(file, sizeof(file), "%s/f", path);
  f = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  assert_true(f >= 0);
  close(f);
  assert_false(sr_cg_gc_skip_at(AT_FDCWD, file));
  unlink(file);
  close(fd);
  rmdir(path);
  assert_true(sr_cg_gc_skip_at(AT_FDCWD, path));
}

static void test_old_leaf(void **state) {
  char path[] = "/tmp/sr-cg-gc.XXXXXX";
  int fd = make_dir(path), live;

  (void)state;
  sleep(SR_CG_GC_MIN_AGE_SEC + 1);
  /* Old enough to be looked at. */
  assert_false(sr_cg_gc_skip_at(AT_FDCWD, path));
  /* Locked by a live run: not a candidate. */
  live = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(live >= 0);
  assert_int_equal(flock(live, LOCK_EX | LOCK_NB), 0);
  assert_int_equal(sr_cg_gc_candidate(fd), 0);
  close(live);
  /* Unlocked: a candidate, and held locked by the collector. */
  assert_int_equal(sr_cg_gc_candidate(fd), 1);
  assert_false(lockable(path));
  close(fd);
  rmdir(path);
}

/* sr_cg_gc_dir's callback: counts the names it is given. */
static unsigned called[6];

static int count_one(int sfd, const char *name) {
  (void)sfd;
  if (name[0] == 'L' && name[1] >= '0' && name[1] <= '5' && !name[2])
    called[name[1] - '0']++;
  return 0;
}

static bool want_l(const char *name) {
  return name[0] == 'L';
}

/* --gc looks at every old leaf; a launch at no more than its budget of
 * leaves, picked at random: the budget caps it whatever the number of
 * leaves, and over launches none is left out. */
static void test_gc_dir_budget(void **state) {
  char path[] = "/tmp/sr-cg-gc.XXXXXX";
  char sub[sizeof(path) + 4];
  int fd = make_dir(path);
  unsigned total;

  (void)state;
  if (!counts_children(fd)) {
    close(fd);
    rmdir(path);
    print_message("# /tmp does not count child directories as cgroupfs "
                  "does: not exercised\n");
    return;
  }
  for (int i = 0; i < 5; i++) {
    snprintf(sub, sizeof(sub), "%s/L%d", path, i);
    assert_int_equal(mkdir(sub, 0755), 0);
  }
  sleep(SR_CG_GC_MIN_AGE_SEC + 1);
  /* Young, and not what `want` takes: never given to the callback. */
  snprintf(sub, sizeof(sub), "%s/L5", path);
  assert_int_equal(mkdir(sub, 0755), 0);
  snprintf(sub, sizeof(sub), "%s/x0", path);
  assert_int_equal(mkdir(sub, 0755), 0);

  memset(called, 0, sizeof(called));
  assert_int_equal(sr_cg_gc_dir(fd, path, NULL, want_l, count_one, 0, NULL), 0);
  for (int i = 0; i < 5; i++)
    assert_int_equal(called[i], 1);
  assert_int_equal(called[5], 0);

  /* A budget above the number of old leaves: every one. */
  memset(called, 0, sizeof(called));
  assert_int_equal(sr_cg_gc_dir(fd, path, NULL, want_l, count_one, 8, NULL), 0);
  for (int i = 0; i < 5; i++)
    assert_int_equal(called[i], 1);

  /* Below it: the budget picks among the six (the young one is then
   * skipped), each leaf at most once, and over 200 launches every old one
   * at least once (a miss: (4/6)^200). */
  memset(called, 0, sizeof(called));
  snprintf(sub, sizeof(sub), "%s/L5", path);
  for (int k = 0; k < 200; k++) {
    unsigned before[5];
    /* Made anew each time: young whatever the time the loop takes. */
    assert_int_equal(rmdir(sub), 0);
    assert_int_equal(mkdir(sub, 0755), 0);
    memcpy(before, called, sizeof(before));
    assert_int_equal(sr_cg_gc_dir(fd, path, NULL, want_l, count_one, 2, NULL),
                     0);
    total = 0;
    for (int i = 0; i < 5; i++) {
      assert_true(called[i] - before[i] <= 1);
      total += called[i] - before[i];
    }
    assert_true(total == 1 || total == 2);
  }
  for (int i = 0; i < 5; i++)
    assert_true(called[i] > 0);
  assert_int_equal(called[5], 0);

  for (int i = 0; i < 6; i++) {
    snprintf(sub, sizeof(sub), "%s/L%d", path, i);
    rmdir(sub);
  }
  snprintf(sub, sizeof(sub), "%s/x0", path);
  rmdir(sub);
  close(fd);
  rmdir(path);
}

/* A launch does not read a directory whose only child is its own leaf
 * (the link count says so), but does read one with any other child; --gc
 * reads it either way. */
static void test_gc_dir_own_leaf(void **state) {
  char path[] = "/tmp/sr-cg-gc.XXXXXX", other[] = "/tmp/sr-cg-gc.XXXXXX";
  char sub[sizeof(path) + 4];
  int fd = make_dir(path), ofd = make_dir(other);

  (void)state;
  if (!counts_children(fd)) {
    close(fd);
    close(ofd);
    rmdir(path);
    rmdir(other);
    print_message("# /tmp does not count child directories as cgroupfs "
                  "does: not exercised\n");
    return;
  }
  /* An empty directory: nothing given to the callback. */
  memset(called, 0, sizeof(called));
  assert_int_equal(sr_cg_gc_dir(fd, path, NULL, want_l, count_one, 8, NULL), 0);
  snprintf(sub, sizeof(sub), "%s/L0", path);
  assert_int_equal(mkdir(sub, 0755), 0);
  snprintf(sub, sizeof(sub), "%s/L1", other);
  assert_int_equal(mkdir(sub, 0755), 0);
  sleep(SR_CG_GC_MIN_AGE_SEC + 1);

  memset(called, 0, sizeof(called));
  assert_int_equal(sr_cg_gc_dir(fd, path, "L0", want_l, count_one, 8, NULL), 0);
  assert_int_equal(called[0], 0); /* only its own: not read */
  assert_int_equal(sr_cg_gc_dir(fd, path, NULL, want_l, count_one, 8, NULL), 0);
  assert_int_equal(called[0], 1); /* no own leaf: L0 is another run's */
  assert_int_equal(sr_cg_gc_dir(fd, path, "L1", want_l, count_one, 8, NULL), 0);
  assert_int_equal(called[0], 2); /* its own is not there: L0 is not it */
  assert_int_equal(sr_cg_gc_dir(fd, path, "L0", want_l, count_one, 0, NULL), 0);
  assert_int_equal(called[0], 3); /* --gc reads every directory */

  /* A second child, even one `want` does not take: read. */
  snprintf(sub, sizeof(sub), "%s/x0", path);
  assert_int_equal(mkdir(sub, 0755), 0);
  assert_int_equal(sr_cg_gc_dir(fd, path, "L0", want_l, count_one, 8, NULL), 0);
  assert_int_equal(called[0], 4);
  assert_int_equal(rmdir(sub), 0);

  /* Its own name as a file beside one child directory: the child is not
   * its leaf, read. */
  snprintf(sub, sizeof(sub), "%s/L0", other);
  close(open(sub, O_WRONLY | O_CREAT | O_EXCL, 0600));
  assert_int_equal(sr_cg_gc_dir(ofd, other, "L0", want_l, count_one, 8, NULL),
                   0);
  assert_int_equal(called[1], 1);
  assert_int_equal(unlink(sub), 0);

  snprintf(sub, sizeof(sub), "%s/L0", path);
  rmdir(sub);
  snprintf(sub, sizeof(sub), "%s/L1", other);
  rmdir(sub);
  close(fd);
  close(ofd);
  rmdir(path);
  rmdir(other);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_young_leaf_is_left_unlocked),
      cmocka_unit_test(test_skip_without_opening),
      cmocka_unit_test(test_old_leaf),
      cmocka_unit_test(test_gc_dir_budget),
      cmocka_unit_test(test_gc_dir_own_leaf),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
