/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the two cgroup backends share for finding their mounts: a line of
 * /proc/self/mountinfo split, its mount point's escapes decoded
 * (src/cgroup.c, cgroup-internal.h). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup-internal.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mountinfo_split),
      cmocka_unit_test(test_mountinfo_split_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
