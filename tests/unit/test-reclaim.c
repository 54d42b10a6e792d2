/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A dead run's record closed by gc (src/reclaim.h): the ledger gets its
 * execution_completed "abandoned", and the run directory a metadata.json
 * that the schema accepts even when the run died before its first event
 * (tests/integration/faults.sh kills runs at random moments; this is the
 * one moment that must give the same answer every time). */
#include "config.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "error.h"
#include "reclaim.h"

static void test_empty_ledger(void **state) {
  char dir[] = "/tmp/test-reclaim.XXXXXX";
  struct sr_error err = {0};
  json_t *meta, *last = NULL;
  json_error_t jerr;
  char line[4096];
  FILE *f;
  int run_fd, ledger, r;

  (void)state;
  assert_non_null(mkdtemp(dir));
  run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(run_fd >= 0);
  ledger = openat(run_fd, "audit.jsonl", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  assert_true(ledger >= 0);

  /* Killed after its marker was linked and before execution_started. */
  r = sr_reclaim_run(ledger, run_fd, "default", "e1", getuid(), getgid(), NULL,
                     &err);
  assert_int_equal(r, 1);

  /* The one line gc wrote is the record's only timestamp. */
  assert_int_equal(lseek(ledger, 0, SEEK_SET), 0);
  f = fdopen(ledger, "r");
  assert_non_null(f);
  while (fgets(line, sizeof(line), f)) {
    json_decref(last);
    last = json_loads(line, 0, &jerr);
    assert_non_null(last);
  }
  fclose(f);
  assert_non_null(last);
  assert_string_equal(json_string_value(json_object_get(last, "event")),
                      "execution_completed");

  meta = json_load_file(
      (snprintf(line, sizeof(line), "%s/metadata.json", dir), line), 0, &jerr);
  assert_non_null(meta);
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(meta, "result"), "status")),
                      "abandoned");
  /* A timestamp, never null: the schema requires one. */
  assert_true(json_is_string(json_object_get(meta, "started_at")));
  assert_string_equal(json_string_value(json_object_get(meta, "started_at")),
                      json_string_value(json_object_get(last, "ts")));
  json_decref(meta);
  json_decref(last);

  assert_int_equal(unlinkat(run_fd, "metadata.json", 0), 0);
  assert_int_equal(unlinkat(run_fd, "audit.jsonl", 0), 0);
  close(run_fd);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_empty_ledger),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
