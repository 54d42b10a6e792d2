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
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "audit.h"
#include "error.h"
#include "fdutil.h"
#include "metrics.h"
#include "reclaim.h"

/* The ledger's text, read once as gc reads it (workspace.c gc_one). */
static char *ledger_read(int ledger, size_t *len) {
  char *buf = NULL;

  assert_int_equal(lseek(ledger, 0, SEEK_SET), 0);
  assert_int_equal(sr_read_fd(ledger, SR_AUDIT_MAX_FILE, &buf, len), 0);
  return buf;
}

/* sr_reclaim_run, sr_reclaim_outputs and sr_reclaim_index_line on the
 * ledger's text as it is now. */
static int reclaim_run(int ledger, int run_fd, const char *tenant,
                       const char *execution, struct sr_error *err) {
  size_t len = 0;
  char *buf = ledger_read(ledger, &len);
  int r = sr_reclaim_run(ledger, &buf, &len, run_fd, tenant, execution,
                         getuid(), getgid(), NULL, NULL, err);

  free(buf);
  return r;
}

static int reclaim_outputs(int ledger, int run_fd, unsigned *removed) {
  size_t len = 0;
  char *buf = ledger_read(ledger, &len);
  int r = sr_reclaim_outputs(buf, len, run_fd, getuid(), removed);

  free(buf);
  return r;
}

static int index_line(int ledger, const char *tenant, const char *execution,
                      char *line, size_t size, int64_t *started) {
  size_t len = 0;
  char *buf = ledger_read(ledger, &len);
  int r =
      sr_reclaim_index_line(buf, len, tenant, execution, line, size, started);

  free(buf);
  return r;
}

/* A run directory made in dir (a mkdtemp template) holding audit.jsonl
 * with text: the directory's descriptor, the ledger's in *ledger. */
static int run_dir_with_ledger(char *dir, const char *text, int *ledger) {
  int run_fd;

  assert_non_null(mkdtemp(dir));
  run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(run_fd >= 0);
  /* Read-write for appending, as gc opens it. */
  *ledger = openat(run_fd, "audit.jsonl",
                   O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  assert_true(*ledger >= 0);
  assert_int_equal(write(*ledger, text, strlen(text)), (ssize_t)strlen(text));
  return run_fd;
}

static void run_dir_remove(const char *dir, int run_fd, int ledger) {
  close(ledger);
  assert_int_equal(unlinkat(run_fd, "audit.jsonl", 0), 0);
  close(run_fd);
  assert_int_equal(rmdir(dir), 0);
}

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
  r = reclaim_run(ledger, run_fd, "default", "e1", &err);
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

/* A metadata.json.tmp the dead run left (here a link out of the run
 * directory): replaced, never followed, and gone afterwards; the file
 * written is one JSON document and a newline. */
static void test_stale_temp(void **state) {
  char dir[] = "/tmp/test-reclaim.XXXXXX",
       out[] = "/tmp/test-reclaim-out.XXXXXX";
  char path[4096], buf[16];
  struct sr_error err = {0};
  struct stat st;
  json_error_t jerr;
  json_t *meta;
  int run_fd, ledger, fd;
  ssize_t n;

  (void)state;
  assert_non_null(mkdtemp(dir));
  assert_non_null(mkdtemp(out));
  snprintf(path, sizeof(path), "%s/victim", out);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "keep", 4), 4);
  close(fd);
  run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(run_fd >= 0);
  assert_int_equal(symlinkat(path, run_fd, "metadata.json.tmp"), 0);
  ledger = openat(run_fd, "audit.jsonl", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  assert_true(ledger >= 0);

  assert_int_equal(reclaim_run(ledger, run_fd, "default", "e2", &err), 1);
  assert_int_equal(
      fstatat(run_fd, "metadata.json.tmp", &st, AT_SYMLINK_NOFOLLOW), -1);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  n = read(fd, buf, sizeof(buf));
  close(fd);
  assert_int_equal(n, 4);
  assert_memory_equal(buf, "keep", 4);

  snprintf(path, sizeof(path), "%s/metadata.json", dir);
  meta = json_load_file(path, 0, &jerr);
  assert_non_null(meta);
  json_decref(meta);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  assert_int_equal(fstat(fd, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0600);
  assert_int_equal(pread(fd, buf, 2, st.st_size - 2), 2);
  close(fd);
  assert_true(buf[0] == '}' && buf[1] == '\n');

  assert_int_equal(unlinkat(run_fd, "metadata.json", 0), 0);
  assert_int_equal(unlinkat(run_fd, "audit.jsonl", 0), 0);
  close(ledger);
  close(run_fd);
  assert_int_equal(rmdir(dir), 0);
  snprintf(path, sizeof(path), "%s/victim", out);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(out), 0);
}

/* The outputs of a run killed mid-harvest: every file its ledger's
 * complete artifact_committed lines name stays (a name that is not UTF-8
 * by its path_base64), every other file goes (the one of a line the kill
 * cut off too), directories stay, and no link is followed. */
static void test_uncommitted_outputs(void **state) {
  static const char ledger_text[] =
      "{\"event\":\"execution_started\"}\n"
      "{\"event\":\"artifact_committed\",\"path\":\"a\"}\n"
      "{\"event\":\"artifact_committed\",\"path\":\"tree/b\"}\n"
      "{\"event\":\"artifact_committed\",\"path\":\"tree/caf\\\\xe9\","
      "\"path_base64\":\"dHJlZS9jYWbp\"}\n"
      "{\"event\":\"warning\",\"path\":\"tree/c\"}\n"
      "{\"event\":\"artifact_committed\",\"path\":\"torn\"";
  static const char *const kept[] = {"a", "tree/b", "tree/caf\xe9"};
  static const char *const gone[] = {"tree/c", "torn", "tree/caf\\xe9",
                                     ".skillrun-partial.0123456789abcdef",
                                     "tree/deeper/d"};
  char dir[] = "/tmp/test-reclaim.XXXXXX",
       out[] = "/tmp/test-reclaim-out.XXXXXX";
  char path[4096];
  struct stat st;
  unsigned removed = 99;
  int run_fd, ledger, fd;

  (void)state;
  assert_non_null(mkdtemp(dir));
  assert_non_null(mkdtemp(out));
  snprintf(path, sizeof(path), "%s/victim", out);
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  close(fd);
  run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(run_fd >= 0);
  ledger = openat(run_fd, "audit.jsonl", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  assert_true(ledger >= 0);
  assert_int_equal(write(ledger, ledger_text, sizeof(ledger_text) - 1),
                   (ssize_t)(sizeof(ledger_text) - 1));
  /* No outputs/ (a run killed before it was made): nothing to do. */
  assert_int_equal(reclaim_outputs(ledger, run_fd, &removed), 0);
  assert_int_equal(removed, 0);

  assert_int_equal(mkdirat(run_fd, "outputs", 0700), 0);
  assert_int_equal(mkdirat(run_fd, "outputs/tree", 0700), 0);
  assert_int_equal(mkdirat(run_fd, "outputs/tree/deeper", 0700), 0);
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "outputs/%s", kept[i]);
    fd = openat(run_fd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
  }
  for (size_t i = 0; i < 5; i++) {
    snprintf(path, sizeof(path), "outputs/%s", gone[i]);
    fd = openat(run_fd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
  }
  assert_int_equal(symlinkat(out, run_fd, "outputs/tree/link"), 0);

  assert_int_equal(reclaim_outputs(ledger, run_fd, &removed), 0);
  assert_int_equal(removed, 5);
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "outputs/%s", kept[i]);
    assert_int_equal(fstatat(run_fd, path, &st, AT_SYMLINK_NOFOLLOW), 0);
  }
  for (size_t i = 0; i < 5; i++) {
    snprintf(path, sizeof(path), "outputs/%s", gone[i]);
    assert_int_equal(fstatat(run_fd, path, &st, AT_SYMLINK_NOFOLLOW), -1);
  }
  assert_int_equal(
      fstatat(run_fd, "outputs/tree/deeper", &st, AT_SYMLINK_NOFOLLOW), 0);
  assert_int_equal(
      fstatat(run_fd, "outputs/tree/link", &st, AT_SYMLINK_NOFOLLOW), 0);
  snprintf(path, sizeof(path), "%s/victim", out);
  assert_int_equal(stat(path, &st), 0);

  /* Again: nothing more goes. */
  assert_int_equal(reclaim_outputs(ledger, run_fd, &removed), 0);
  assert_int_equal(removed, 0);

  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(out), 0);
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "outputs/%s", kept[i]);
    assert_int_equal(unlinkat(run_fd, path, 0), 0);
  }
  assert_int_equal(unlinkat(run_fd, "outputs/tree/link", 0), 0);
  assert_int_equal(unlinkat(run_fd, "outputs/tree/deeper", AT_REMOVEDIR), 0);
  assert_int_equal(unlinkat(run_fd, "outputs/tree", AT_REMOVEDIR), 0);
  assert_int_equal(unlinkat(run_fd, "outputs", AT_REMOVEDIR), 0);
  assert_int_equal(unlinkat(run_fd, "audit.jsonl", 0), 0);
  close(ledger);
  close(run_fd);
  assert_int_equal(rmdir(dir), 0);
}

/* The outputs of a run that closed its own ledger (its marker kept for
 * gc's other work: a metadata.json it could not write) are its caller's:
 * a file the caller put there, or renamed, stays; also when the closing
 * line lost its newline (and gained zeros) in a crash. */
static void test_closed_outputs_kept(void **state) {
#define COMMITTED "{\"event\":\"artifact_committed\",\"path\":\"a\"}\n"
#define COMPLETED "{\"event\":\"execution_completed\",\"status\":\"succeeded\"}"
#define LEDGER(s)                                                              \
  { s, sizeof(s) - 1 }
  static const struct {
    const char *text;
    size_t len;
  } ledgers[] = {
      LEDGER(COMMITTED COMPLETED "\n"),
      LEDGER(COMMITTED COMPLETED),
      LEDGER(COMMITTED COMPLETED "\0\0"),
  };
#undef LEDGER
#undef COMPLETED
#undef COMMITTED
  struct stat st;

  (void)state;
  for (size_t i = 0; i < sizeof(ledgers) / sizeof(*ledgers); i++) {
    char dir[] = "/tmp/test-reclaim.XXXXXX";
    unsigned removed = 99;
    int run_fd, ledger, fd;

    assert_non_null(mkdtemp(dir));
    run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(run_fd >= 0);
    ledger = openat(run_fd, "audit.jsonl", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(ledger >= 0);
    assert_int_equal(write(ledger, ledgers[i].text, ledgers[i].len),
                     (ssize_t)ledgers[i].len);
    assert_int_equal(mkdirat(run_fd, "outputs", 0700), 0);
    fd = openat(run_fd, "outputs/a.processed",
                O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);

    assert_int_equal(reclaim_outputs(ledger, run_fd, &removed), 0);
    assert_int_equal(removed, 0);
    assert_int_equal(
        fstatat(run_fd, "outputs/a.processed", &st, AT_SYMLINK_NOFOLLOW), 0);

    assert_int_equal(unlinkat(run_fd, "outputs/a.processed", 0), 0);
    assert_int_equal(unlinkat(run_fd, "outputs", AT_REMOVEDIR), 0);
    run_dir_remove(dir, run_fd, ledger);
  }
}

/* The runs index line of a run closed as abandoned: its tenant, the
 * skill its ledger names, status abandoned, the artifacts its ledger
 * commits (a cut-off line is not one), and "-" for the rest. */
static void test_index_line(void **state) {
  static const char ledger_text[] =
      "{\"event\":\"execution_started\",\"ts\":\"2026-01-01T00:00:00Z\","
      "\"skill\":\"hello\",\"version\":null}\n"
      "{\"event\":\"artifact_committed\",\"skill\":\"hello\","
      "\"path\":\"a.txt\",\"size\":5,\"sha256\":\"x\",\"mode\":\"0644\"}\n"
      "{\"event\":\"artifact_committed\",\"skill\":\"hello\","
      "\"path\":\"b.txt\",\"size\":7,\"sha256\":\"x\",\"mode\":\"0644\"}\n"
      "{\"event\":\"artifact_committed\",\"skill\":\"hello\","
      "\"path\":\"c.txt\",\"size\":100,\"sh";
  char dir[] = "/tmp/test-reclaim.XXXXXX";
  char line[SR_RECORD_LINE_MAX + 1];
  struct sr_run_record rec;
  int64_t started;
  int run_fd, ledger, n;

  (void)state;
  run_fd = run_dir_with_ledger(dir, ledger_text, &ledger);

  n = index_line(ledger, "acme", "e3", line, sizeof(line), &started);
  assert_true(n > 0 && line[n - 1] == '\n');
  assert_int_equal(started, 1767225600); /* 2026-01-01T00:00:00Z */
  assert_int_equal(sr_record_parse(line, (size_t)n - 1, &rec), 0);
  assert_string_equal(rec.execution, "e3");
  assert_string_equal(rec.tenant, "acme");
  assert_string_equal(rec.skill, "hello");
  assert_int_equal(rec.status, SR_STATUS_ABANDONED);
  assert_string_equal(rec.reason, "");
  assert_int_equal(rec.artifacts, 2);
  assert_int_equal(rec.artifact_bytes, 12);
  assert_int_equal(rec.duration_ms, -1);
  assert_int_equal(rec.cpu_usec, -1);
  assert_int_equal(rec.memory_peak, -1);
  assert_int_equal(rec.syscalls_denied, -1);

  run_dir_remove(dir, run_fd, ledger);
}

/* The line of a run that closed its own ledger (killed before its index
 * line): what its execution_completed says, and its failure's reason. */
static void test_index_line_closed(void **state) {
  static const char ledger_text[] =
      "{\"event\":\"execution_started\",\"ts\":\"2026-01-01T00:00:00.250Z\","
      "\"skill\":\"hello\",\"version\":null}\n"
      "{\"event\":\"bundle_rejected\",\"reason\":\"digest_mismatch\"}\n"
      "{\"event\":\"execution_completed\",\"ts\":\"2026-01-01T00:00:09.900Z\","
      "\"status\":\"refused\",\"exit_code\":123,\"duration_ms\":42}\n";
  char dir[] = "/tmp/test-reclaim.XXXXXX";
  char line[SR_RECORD_LINE_MAX + 1];
  struct sr_run_record rec;
  int64_t started;
  int run_fd, ledger, n;

  (void)state;
  run_fd = run_dir_with_ledger(dir, ledger_text, &ledger);
  n = index_line(ledger, "acme", "e4", line, sizeof(line), &started);
  assert_true(n > 0);
  assert_int_equal(started, 1767225600);
  assert_int_equal(sr_record_parse(line, (size_t)n - 1, &rec), 0);
  assert_int_equal(rec.status, SR_STATUS_REFUSED);
  assert_string_equal(rec.reason, "digest_mismatch");
  assert_string_equal(rec.execution, "e4");
  assert_int_equal(rec.finished_s, 1767225609);
  assert_int_equal(rec.duration_ms, 42);
  assert_int_equal(rec.cpu_usec, -1);
  assert_int_equal(rec.artifacts, -1);
  run_dir_remove(dir, run_fd, ledger);
}

/* gc reads a dead run's ledger once: what sr_reclaim_run writes (its
 * newline, a torn line cut, execution_completed) is in the text it hands
 * back, which is then the ledger's bytes exactly, for the index line.
 * 1 when it appended. */
static int reclaim_follows(const char *text, char **closed,
                           size_t *closed_len) {
  char dir[] = "/tmp/test-reclaim.XXXXXX";
  char line[SR_RECORD_LINE_MAX + 1];
  struct sr_error err = {0};
  struct sr_run_record rec;
  char *buf, *now;
  size_t len = 0, now_len = 0;
  int64_t started;
  int run_fd, ledger, n, r;

  run_fd = run_dir_with_ledger(dir, text, &ledger);
  buf = ledger_read(ledger, &len);
  r = sr_reclaim_run(ledger, &buf, &len, run_fd, "acme", "e5", getuid(),
                     getgid(), NULL, NULL, &err);
  assert_true(r >= 0);
  now = ledger_read(ledger, &now_len);
  assert_int_equal(len, now_len);
  assert_memory_equal(buf, now, len);
  assert_int_equal(buf[len], '\0');
  n = sr_reclaim_index_line(buf, len, "acme", "e5", line, sizeof(line),
                            &started);
  assert_true(n > 0);
  assert_int_equal(sr_record_parse(line, (size_t)n - 1, &rec), 0);
  assert_int_equal(rec.status, SR_STATUS_ABANDONED);
  assert_int_equal(started, 1767225600);
  free(now);
  *closed = buf;
  *closed_len = len;
  (void)unlinkat(run_fd, "metadata.json", 0);
  run_dir_remove(dir, run_fd, ledger);
  return r;
}

static void test_text_follows_ledger(void **state) {
  static const char started[] =
      "{\"event\":\"execution_started\",\"ts\":\"2026-01-01T00:00:00.250Z\","
      "\"skill\":\"hello\",\"version\":null}\n";
  char text[1024], *closed;
  size_t len;

  (void)state;
  /* Open, with a torn last line: cut, then closed. */
  snprintf(text, sizeof(text), "%s{\"event\":\"sta", started);
  assert_int_equal(reclaim_follows(text, &closed, &len), 1);
  free(closed);
  /* Open, whole: closed. */
  assert_int_equal(reclaim_follows(started, &closed, &len), 1);
  /* Closed but for its last newline (a crash cut it): the newline back,
   * nothing appended. */
  assert_true(len > 1 && len < sizeof(text) && closed[len - 1] == '\n');
  memcpy(text, closed, len - 1);
  text[len - 1] = '\0';
  free(closed);
  assert_int_equal(reclaim_follows(text, &closed, &len), 0);
  assert_int_equal(closed[len - 1], '\n');
  free(closed);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_index_line_closed),
      cmocka_unit_test(test_empty_ledger),
      cmocka_unit_test(test_stale_temp),
      cmocka_unit_test(test_uncommitted_outputs),
      cmocka_unit_test(test_closed_outputs_kept),
      cmocka_unit_test(test_index_line),
      cmocka_unit_test(test_text_follows_ledger),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
