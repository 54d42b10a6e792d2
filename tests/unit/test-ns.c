/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The hint for a sandbox that AppArmor denies every capability
 * (sr_ns_explain_apparmor, src/ns.c), given a directory that stands in for
 * /proc/sys/kernel: this host need not have AppArmor.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "ns.h"

static const char knob[] = "apparmor_restrict_unprivileged_userns";

static char dir[] = "/tmp/test-ns.XXXXXX";

/* A fake /proc/sys/kernel whose knob reads value (NULL: no such file). */
static int fake_kernel(const char *value) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(fd >= 0);
  (void)unlinkat(fd, knob, 0);
  if (value) {
    int f = openat(fd, knob, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    assert_true(f >= 0);
    assert_int_equal(write(f, value, strlen(value)), (ssize_t)strlen(value));
    close(f);
  }
  return fd;
}

static void mount_failed(struct sr_error *err, int e) {
  sr_error_clear(err);
  sr_error_layer(err, "mount", e, "mount proc on /proc");
}

static void test_restricted_user_gets_the_hint(void **state) {
  struct sr_error err;
  int fd = fake_kernel("1\n");

  (void)state;
  mount_failed(&err, EPERM);
  assert_true(sr_ns_explain_apparmor(&err, fd, 1000));
  assert_non_null(strstr(err.msg, "mount proc on /proc: "));
  assert_non_null(strstr(err.msg,
                         "AppArmor restricts unprivileged user namespaces here "
                         "(kernel.apparmor_restrict_unprivileged_userns=1)"));
  assert_non_null(strstr(err.msg, "or run as root"));
  /* The audit's layer, reason and errno are the failure's own. */
  assert_string_equal(err.layer, "mount");
  assert_string_equal(err.reason, "layer_failed");
  assert_int_equal(err.err, EPERM);
  assert_null(strchr(err.msg, '\n'));

  mount_failed(&err, EACCES);
  assert_true(sr_ns_explain_apparmor(&err, fd, 1000));
  close(fd);
}

static void test_no_hint_otherwise(void **state) {
  struct sr_error err;
  char before[sizeof(err.msg)];
  int fd;

  (void)state;
  /* Root is not restricted. */
  fd = fake_kernel("1\n");
  mount_failed(&err, EPERM);
  memcpy(before, err.msg, sizeof(before));
  assert_false(sr_ns_explain_apparmor(&err, fd, 0));
  assert_string_equal(err.msg, before);
  /* Another errno is another cause. */
  mount_failed(&err, ENOENT);
  assert_false(sr_ns_explain_apparmor(&err, fd, 1000));
  /* A host-side layer has causes of its own. */
  sr_error_clear(&err);
  sr_error_layer(&err, "cgroup", EACCES, "create the leaf");
  assert_false(sr_ns_explain_apparmor(&err, fd, 1000));
  /* An error that is no layer's. */
  sr_error_clear(&err);
  sr_error_set(&err, 125, EPERM, "usage", "open the bundle");
  assert_false(sr_ns_explain_apparmor(&err, fd, 1000));
  close(fd);

  /* Not restricted, or no such knob (no AppArmor), or no /proc/sys. */
  fd = fake_kernel("0\n");
  mount_failed(&err, EPERM);
  assert_false(sr_ns_explain_apparmor(&err, fd, 1000));
  close(fd);
  fd = fake_kernel(NULL);
  assert_false(sr_ns_explain_apparmor(&err, fd, 1000));
  close(fd);
  assert_false(sr_ns_explain_apparmor(&err, -1, 1000));
  assert_string_equal(err.msg, "mount proc on /proc: Operation not permitted");
}

static void test_long_message_keeps_the_hint(void **state) {
  struct sr_error err;
  char path[2000];
  int fd = fake_kernel("1");

  (void)state;
  memset(path, 'a', sizeof(path) - 1);
  path[sizeof(path) - 1] = '\0';
  sr_error_clear(&err);
  sr_error_layer(&err, "network", EPERM, "bring up %s", path);
  assert_true(sr_ns_explain_apparmor(&err, fd, 1000));
  assert_true(strlen(err.msg) < sizeof(err.msg));
  assert_non_null(strstr(err.msg, "install skillrun's AppArmor profile"));
  close(fd);
}

static int setup(void **state) {
  (void)state;
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

  (void)state;
  if (fd >= 0) {
    (void)unlinkat(fd, knob, 0); /* absent after the last case */
    close(fd);
  }
  return rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_restricted_user_gets_the_hint),
      cmocka_unit_test(test_no_hint_otherwise),
      cmocka_unit_test(test_long_message_keeps_the_hint),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
