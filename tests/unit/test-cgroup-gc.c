/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --gc's test of a leaf (sr_cg_gc_candidate, src/cgroup.c), on plain
 * directories: flock(2) and ctime behave there as on a cgroup's.  Every
 * run collects stale leaves before it makes and locks its own, so a young
 * leaf must never be locked by the collector, or the run that made it
 * fails its own lock. */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/file.h>
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

static void test_old_leaf(void **state) {
  char path[] = "/tmp/sr-cg-gc.XXXXXX";
  int fd = make_dir(path), live;

  (void)state;
  sleep(SR_CG_GC_MIN_AGE_SEC + 1);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_young_leaf_is_left_unlocked),
      cmocka_unit_test(test_old_leaf),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
