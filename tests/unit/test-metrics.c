/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The runs index's lines and their Prometheus text (src/metrics.c). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

static struct sr_run_record rec(const char *tenant, const char *skill,
                                enum sr_status status, const char *reason) {
  struct sr_run_record r;

  memset(&r, 0, sizeof(r));
  r.finished_s = 1700000000;
  snprintf(r.tenant, sizeof(r.tenant), "%s", tenant);
  snprintf(r.skill, sizeof(r.skill), "%s", skill);
  r.status = status;
  snprintf(r.reason, sizeof(r.reason), "%s", reason);
  r.duration_ms = 1500;
  r.cpu_usec = 250000;
  r.memory_peak = 3 << 20;
  r.artifacts = 2;
  r.artifact_bytes = 1234;
  r.syscalls_denied = 7;
  return r;
}

static void test_format_parse_round_trip(void **state) {
  struct sr_run_record r = rec("acme", "pdf-tools", SR_STATUS_SUCCEEDED, "");
  struct sr_run_record back;
  char line[SR_RECORD_LINE_MAX + 1];
  int n;

  (void)state;
  n = sr_record_format(&r, line, sizeof(line));
  assert_true(n > 0);
  assert_string_equal(line, "1 1700000000 acme pdf-tools succeeded - 1500 "
                            "250000 3145728 2 1234 7 -\n");
  assert_int_equal(sr_record_parse(line, (size_t)n - 1, &back), 0);
  assert_memory_equal(&r, &back, sizeof(r));

  /* Unknowns are "-" and come back as -1 or "". */
  r = rec("", "", SR_STATUS_REFUSED, "digest_mismatch");
  r.cpu_usec = r.memory_peak = r.artifacts = r.artifact_bytes = -1;
  r.syscalls_denied = -1;
  n = sr_record_format(&r, line, sizeof(line));
  assert_string_equal(line, "1 1700000000 - - refused digest_mismatch 1500 - "
                            "- - - - -\n");
  assert_int_equal(sr_record_parse(line, (size_t)n - 1, &back), 0);
  assert_memory_equal(&r, &back, sizeof(r));

  /* A non-ASCII skill name (NFKC lowercase letters are valid names). */
  r = rec("t", "r\xc3\xa9sum\xc3\xa9", SR_STATUS_FAILED, "");
  n = sr_record_format(&r, line, sizeof(line));
  assert_true(n > 0);
  assert_int_equal(sr_record_parse(line, (size_t)n - 1, &back), 0);
  assert_string_equal(back.skill, "r\xc3\xa9sum\xc3\xa9");
}

static void test_format_refuses_what_cannot_be_a_line(void **state) {
  char line[SR_RECORD_LINE_MAX + 1];
  struct sr_run_record r;

  (void)state;
  r = rec("acme", "two words", SR_STATUS_SUCCEEDED, "");
  assert_int_equal(sr_record_format(&r, line, sizeof(line)), -EINVAL);
  r = rec("acme", "a\nb", SR_STATUS_SUCCEEDED, "");
  assert_int_equal(sr_record_format(&r, line, sizeof(line)), -EINVAL);
  r = rec("bad/tenant", "s", SR_STATUS_SUCCEEDED, "");
  assert_int_equal(sr_record_format(&r, line, sizeof(line)), -EINVAL);
  r = rec("acme", "s", SR_STATUS_REFUSED, "Not A Reason");
  assert_int_equal(sr_record_format(&r, line, sizeof(line)), -EINVAL);
  r = rec("acme", "s", SR__STATUS_MAX, "");
  assert_int_equal(sr_record_format(&r, line, sizeof(line)), -EINVAL);
  r = rec("acme", "s", SR_STATUS_SUCCEEDED, "");
  assert_int_equal(sr_record_format(&r, line, 10), -ENOSPC);
}

static void test_parse_refuses_hostile_lines(void **state) {
  static const char *const bad[] = {
      "",
      "1 1700000000 acme s succeeded - 1 2 3 4 5",        /* 11 fields */
      "1 1700000000 acme s succeeded - 1 2 3 4 5 6 e 7",  /* 14 */
      "1 1700000000 acme s succeeded - 1 2 3 4 5 6 ../x", /* id */
      "1 1700000000 acme s succeeded - 1 2 3 4 5 6 e ",   /* trailing */
      "2 1700000000 acme s succeeded - 1 2 3 4 5 6",      /* version */
      "1 1700000000 acme s  succeeded - 1 2 3 4 5 6",     /* two spaces */
      "1 1700000000 acme s succeeded - 1 2 3 4 5 6 ",     /* trailing */
      "1 1700000000 ../x s succeeded - 1 2 3 4 5 6",      /* tenant */
      "1 1700000000 acme s\"x succeeded - 1 2 3 4 5 6",   /* quote */
      "1 1700000000 acme s\\x succeeded - 1 2 3 4 5 6",   /* backslash */
      "1 1700000000 acme s\x01 succeeded - 1 2 3 4 5 6",  /* control */
      "1 1700000000 acme \xc3 succeeded - 1 2 3 4 5 6",   /* bad UTF-8 */
      "1 1700000000 acme s won - 1 2 3 4 5 6",            /* status */
      "1 1700000000 acme s refused BAD 1 2 3 4 5 6",      /* reason */
      "1 1700000000 acme s succeeded - -1 2 3 4 5 6",     /* sign */
      "1 1700000000 acme s succeeded - 1x 2 3 4 5 6",     /* suffix */
      "1 1700000000 acme s succeeded - 99999999999999999999 2 3 4 5 6",
      "1 - acme s succeeded - 1 2 3 4 5 6", /* finished unknown */
  };
  struct sr_run_record r;
  char nul[] = "1 1700000000 acme s succeeded - 1 2 3 4 5 6";

  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_int_equal(sr_record_parse(bad[i], strlen(bad[i]), &r), -EINVAL);
  nul[15] = '\0'; /* a NUL inside the line */
  assert_int_equal(sr_record_parse(nul, sizeof(nul) - 1, &r), -EINVAL);
  /* Longer than any record can be. */
  {
    char *big = malloc(SR_RECORD_LINE_MAX + 2);
    assert_non_null(big);
    memset(big, 'a', SR_RECORD_LINE_MAX + 1);
    assert_int_equal(sr_record_parse(big, SR_RECORD_LINE_MAX + 1, &r), -EINVAL);
    free(big);
  }
}

/* The execution id, a 13th field: optional, as older lines lack it. */
static void test_execution_id(void **state) {
  static const char old[] = "1 1700000000 acme s succeeded - 1 2 3 4 5 6";
  static const char new[] = "1 1700000100 acme s succeeded - 1 2 3 4 5 6 e1";
  static const char idless[] =
      "1 1700000200 acme - refused invalid_id 0 - - - - - -";
  struct sr_run_record r = {0};
  char line[SR_RECORD_LINE_MAX + 1];
  struct sr_index_ids *ids;
  int n;

  (void)state;
  assert_int_equal(sr_record_parse(old, strlen(old), &r), 0);
  assert_string_equal(r.execution, "");
  assert_int_equal(sr_record_parse(new, strlen(new), &r), 0);
  assert_string_equal(r.execution, "e1");
  n = sr_record_format(&r, line, sizeof(line));
  assert_int_equal(n, (int)strlen(new) + 1);
  assert_memory_equal(line, new, strlen(new));

  ids = sr_index_ids_new();
  assert_non_null(ids);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e1", 1700000000), 0);
  assert_int_equal(sr_index_ids_add_line(ids, new, strlen(new)), 0);
  assert_int_equal(sr_index_ids_add_line(ids, "junk", 4), 0);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e1", 1700000000), 1);
  assert_int_equal(sr_index_ids_find(ids, "other", "e1", 1700000000), 0);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000000), 0);
  /* An older line, ended at 1700000000: perhaps any run that started by
   * then, not one that started later. */
  assert_int_equal(sr_index_ids_add_line(ids, old, strlen(old)), 0);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000000), -1);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000001), 0);
  /* A run of this version's refused for an invalid --execution-id: "-",
   * no dead run's line, and not an older line either. */
  assert_int_equal(sr_index_ids_add_line(ids, idless, strlen(idless)), 0);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000001), 0);
  /* Lines passed over (gc's window): any run may be among them until a
   * line is read, then those that began by its end. */
  sr_index_ids_skip(ids);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000300), -1);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e1", 1700000300), 1);
  assert_int_equal(sr_index_ids_add_line(ids, idless, strlen(idless)), 0);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000200), -1);
  assert_int_equal(sr_index_ids_find(ids, "acme", "e2", 1700000201), 0);
  /* A run refused because e3 was another run's: its line names e3, yet
   * e3's own run (live, then killed) is still to be counted; another
   * refusal of e3 is its own. */
  {
    static const char replayed[] =
        "1 1700000300 acme s refused execution_replayed 1 - - - - - e3";
    static const char abandoned[] =
        "1 1700000300 acme s refused execution_abandoned 1 - - - - - e3";
    static const char other[] =
        "1 1700000300 acme s refused policy_denied 1 - - - - - e4";

    assert_int_equal(sr_index_ids_add_line(ids, replayed, strlen(replayed)), 0);
    assert_int_equal(sr_index_ids_add_line(ids, abandoned, strlen(abandoned)),
                     0);
    assert_int_equal(sr_index_ids_find(ids, "acme", "e3", 1700000201), 0);
    assert_int_equal(sr_index_ids_add_line(ids, other, strlen(other)), 0);
    assert_int_equal(sr_index_ids_find(ids, "acme", "e4", 1700000201), 1);
  }
  sr_index_ids_free(ids);
}

static char *render(struct sr_metrics *m) {
  size_t len = 0;
  char *t = sr_metrics_render(m, &len);

  assert_non_null(t);
  assert_int_equal(strlen(t), len);
  return t;
}

static void test_render_counts(void **state) {
  struct sr_metrics *m = sr_metrics_new();
  struct sr_run_record r;
  char *t;

  (void)state;
  assert_non_null(m);
  r = rec("acme", "pdf", SR_STATUS_SUCCEEDED, "");
  assert_int_equal(sr_metrics_add(m, &r), 0);
  assert_int_equal(sr_metrics_add(m, &r), 0);
  r = rec("acme", "pdf", SR_STATUS_TIMEOUT, "");
  r.duration_ms = 60000;
  r.cpu_usec = -1;
  r.memory_peak = -1;
  assert_int_equal(sr_metrics_add(m, &r), 0);
  r = rec("acme", "", SR_STATUS_REFUSED, "digest_mismatch");
  assert_int_equal(sr_metrics_add(m, &r), 0);
  r = rec("other", "x", SR_STATUS_ERROR, "config_invalid");
  assert_int_equal(sr_metrics_add(m, &r), 0);
  sr_metrics_set_reader(m, 3, 2);
  t = render(m);

  assert_non_null(
      strstr(t, "skillrun_runs_total{tenant=\"acme\",skill=\"pdf\",status="
                "\"succeeded\"} 2\n"));
  assert_non_null(
      strstr(t, "skillrun_runs_total{tenant=\"acme\",skill=\"pdf\",status="
                "\"timeout\"} 1\n"));
  assert_non_null(
      strstr(t, "skillrun_runs_total{tenant=\"acme\",skill=\"\",status="
                "\"refused\"} 1\n"));
  assert_non_null(strstr(t, "skillrun_refusals_total{tenant=\"acme\",reason="
                            "\"digest_mismatch\"} 1\n"));
  assert_non_null(strstr(t, "skillrun_errors_total{tenant=\"other\",reason="
                            "\"config_invalid\"} 1\n"));
  assert_null(strstr(t, "skillrun_refusals_total{tenant=\"other\""));
  /* Histograms count only runs that ran; buckets are cumulative. */
  assert_non_null(strstr(t, "skillrun_run_duration_seconds_bucket{tenant="
                            "\"acme\",le=\"2.5\"} 2\n"));
  assert_non_null(strstr(t, "skillrun_run_duration_seconds_bucket{tenant="
                            "\"acme\",le=\"+Inf\"} 3\n"));
  assert_non_null(strstr(t, "skillrun_run_duration_seconds_sum{tenant="
                            "\"acme\"} 63.000\n"));
  assert_non_null(strstr(t, "skillrun_run_duration_seconds_count{tenant="
                            "\"acme\"} 3\n"));
  assert_non_null(
      strstr(t, "skillrun_run_cpu_seconds_count{tenant=\"acme\"} 2\n"));
  assert_non_null(strstr(t, "skillrun_run_memory_peak_bytes_bucket{tenant="
                            "\"acme\",le=\"4194304\"} 2\n"));
  assert_null(strstr(t, "skillrun_run_duration_seconds_count{tenant="
                        "\"other\"}"));
  /* Sums over every run of the tenant. */
  assert_non_null(strstr(t, "skillrun_artifact_bytes_total{tenant=\"acme\"} "
                            "4936\n"));
  assert_non_null(strstr(t, "skillrun_syscalls_denied_total{tenant=\"acme\"} "
                            "28\n"));
  assert_non_null(strstr(t, "skillrun_runs_in_progress 2\n"));
  assert_non_null(strstr(t, "skillrun_metrics_index_records 5\n"));
  assert_non_null(strstr(t, "skillrun_metrics_index_skipped 3\n"));
  assert_non_null(strstr(t, "# TYPE skillrun_runs_total counter\n"));
  assert_non_null(strstr(t, "# TYPE skillrun_run_cpu_seconds histogram\n"));
  free(t);
  sr_metrics_free(m);
}

/* Past the bounds, tenants and skills are counted under _other: the
 * output's size does not follow what callers chose to name. */
static void test_cardinality_is_bounded(void **state) {
  struct sr_metrics *m = sr_metrics_new();
  struct sr_run_record r;
  char name[64], *t, *p;
  size_t series = 0;

  (void)state;
  for (int i = 0; i < SR_METRICS_TENANTS_MAX + 50; i++) {
    snprintf(name, sizeof(name), "tenant-%d", i);
    r = rec(name, "s", SR_STATUS_SUCCEEDED, "");
    assert_int_equal(sr_metrics_add(m, &r), 0);
  }
  for (int i = 0; i < SR_METRICS_SKILLS_MAX + 50; i++) {
    snprintf(name, sizeof(name), "skill-%d", i);
    r = rec("tenant-0", name, SR_STATUS_FAILED, "");
    assert_int_equal(sr_metrics_add(m, &r), 0);
  }
  t = render(m);
  assert_non_null(
      strstr(t, "skillrun_runs_total{tenant=\"_other\",skill=\"s\",status="
                "\"succeeded\"} 50\n"));
  assert_non_null(
      strstr(t, "skillrun_runs_total{tenant=\"tenant-0\",skill=\"_other\","
                "status=\"failed\"} "));
  for (p = t; (p = strstr(p, "\nskillrun_runs_total{")); p++)
    series++;
  assert_true(series <= SR_METRICS_SKILLS_MAX + SR_METRICS_TENANTS_MAX + 2);
  assert_non_null(strstr(t, "skillrun_metrics_folded "));
  assert_null(strstr(t, "skillrun_metrics_folded 0\n"));
  free(t);
  sr_metrics_free(m);
}

static void test_empty(void **state) {
  struct sr_metrics *m = sr_metrics_new();
  char *t;

  (void)state;
  t = render(m);
  assert_non_null(strstr(t, "skillrun_metrics_index_records 0\n"));
  /* Unknown, so not a zero that would lie. */
  assert_null(strstr(t, "skillrun_runs_in_progress "));
  free(t);
  sr_metrics_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_parse_round_trip),
      cmocka_unit_test(test_format_refuses_what_cannot_be_a_line),
      cmocka_unit_test(test_parse_refuses_hostile_lines),
      cmocka_unit_test(test_execution_id),
      cmocka_unit_test(test_render_counts),
      cmocka_unit_test(test_cardinality_is_bounded),
      cmocka_unit_test(test_empty),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
