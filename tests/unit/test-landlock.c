/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Landlock ruleset's shape (src/landlock.h): what each ABI handles
 * and scopes, and the rules taken from the sandbox view.  No system call:
 * tests/attacks/landlock.sh applies it on this kernel. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "landlock.h"
#include "macro.h"

static char joined[512];
static const char *join_fs(uint64_t mask) {
  const char *names[32];
  size_t n = sr_landlock_fs_names(mask, names, SR_ARRAY_SIZE(names));

  joined[0] = '\0';
  for (size_t i = 0; i < n; i++) {
    if (i)
      strcat(joined, " ");
    strcat(joined, names[i]);
  }
  assert_null(names[n]);
  return joined;
}

static void test_abi(void **state) {
  const char *names[4];

  (void)state;
  /* Without Landlock: nothing is handled, nothing scoped. */
  assert_int_equal(sr_landlock_handled_fs(0), 0);
  assert_int_equal(sr_landlock_scoped(0), 0);
  /* ABI 1: every write but refer (ABI 2) and truncate (ABI 3). */
  assert_string_equal(join_fs(sr_landlock_handled_fs(1)),
                      "write_file remove_dir remove_file make_char make_dir "
                      "make_reg make_sock make_fifo make_block make_sym");
  assert_true(sr_landlock_handled_fs(2) & ~sr_landlock_handled_fs(1));
  assert_string_equal(
      join_fs(sr_landlock_handled_fs(3) & ~sr_landlock_handled_fs(2)),
      "truncate");
  assert_int_equal(sr_landlock_handled_fs(7), sr_landlock_handled_fs(3));
  /* Scoping from ABI 6 only, both scopes. */
  assert_int_equal(sr_landlock_scoped(5), 0);
  assert_int_equal(sr_landlock_scope_names(sr_landlock_scoped(6), names,
                                           SR_ARRAY_SIZE(names)),
                   2);
  assert_string_equal(names[0], "abstract_unix_socket");
  assert_string_equal(names[1], "signal");
  assert_null(names[2]);
}

static void test_rules(void **state) {
  struct sr_landlock_rule rules[SR_LANDLOCK_RULES_MAX];
  size_t n = sr_landlock_rules(rules, SR_ARRAY_SIZE(rules));
  const uint64_t all = sr_landlock_handled_fs(7);

  (void)state;
  assert_int_equal(n, 6);
  assert_string_equal(rules[0].path, "/tmp");
  assert_string_equal(rules[1].path, "/workspace/scratch");
  assert_string_equal(rules[2].path, "/workspace/outputs");
  assert_string_equal(rules[3].path, "/dev/shm");
  /* No device nodes anywhere, even where everything else is allowed. */
  for (size_t i = 0; i < 4; i++)
    assert_string_equal(join_fs(rules[i].access & all),
                        "write_file remove_dir remove_file make_dir make_reg "
                        "make_sock make_fifo make_sym refer truncate");
  /* /dev and /proc: their existing files only. */
  assert_string_equal(rules[4].path, "/dev");
  assert_string_equal(rules[5].path, "/proc");
  assert_string_equal(join_fs(rules[4].access & all), "write_file truncate");
  assert_string_equal(join_fs(rules[5].access & all), "write_file truncate");
  /* Too little room: none, never a ruleset missing a rule. */
  assert_int_equal(sr_landlock_rules(rules, 3), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_abi),
      cmocka_unit_test(test_rules),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("landlock", tests, NULL, NULL);
}
