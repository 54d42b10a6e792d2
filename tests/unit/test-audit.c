/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "audit.h"
#include "fdutil.h"
#include "util.h"

#define TS "2025-01-02T03:04:05.678901Z"
#define EID "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
#define ZERO64                                                                 \
  "0000000000000000000000000000000000000000000000000000000000000000"

static int new_memfd(void) {
  int fd = memfd_create("audit-test", MFD_CLOEXEC);
  assert_true(fd >= 0);
  return fd;
}

/* Whole content of an fd from offset 0 (NUL-terminated, malloc'd). */
static char *slurp(int fd, size_t *len) {
  char *buf = NULL;
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_read_fd(fd, 64 << 20, &buf, len), 0);
  return buf;
}

static int memfd_with(const char *data, size_t len) {
  int fd = new_memfd();
  assert_int_equal(sr_write_all(fd, data, len), 0);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  return fd;
}

static void sha256_hex_test(const char *data, size_t len, char out[65]) {
  unsigned char md[32];
  unsigned int n = 0;
  assert_int_equal(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL), 1);
  sr_hex(md, n, out);
}

static void audit_on(struct sr_audit *a, int fd) {
  assert_int_equal(sr_audit_init(a, fd, false, EID, "acme"), 0);
  a->fixed_ts = TS;
}

static void emit_ok(struct sr_audit *a, const char *event, json_t *fields) {
  struct sr_error err = {0};
  assert_int_equal(sr_audit_emit(a, event, fields, &err), 0);
  assert_false(sr_error_is_set(&err));
}

/* ------------------------------------------------------------ formatting */

static void test_format_common_keys(void **state) {
  struct sr_audit a;
  json_t *fields, *parsed;
  const char *key;
  json_t *value;
  char *line;
  static const char *const order[] = {
      "schema", "ts",      "seq",  "event",  "execution_id", "tenant_id",
      "skill",  "version", "prev", "digest", "files"};
  size_t i = 0;

  (void)state;
  assert_int_equal(sr_audit_init(&a, 1, false, EID, "acme"), 0);
  fields = json_pack("{s:s, s:i}", "digest", "sha256:00", "files", 3);
  line = sr_audit_format(&a, "bundle_verified", fields, TS);
  assert_non_null(line);
  assert_string_equal(
      line, "{\"schema\":\"skillrun.audit/1\",\"ts\":\"" TS "\",\"seq\":0,"
            "\"event\":\"bundle_verified\",\"execution_id\":\"" EID "\","
            "\"tenant_id\":\"acme\",\"skill\":null,\"version\":null,"
            "\"prev\":\"" ZERO64 "\",\"digest\":\"sha256:00\",\"files\":3}\n");
  /* Also through a parser: the order is what a consumer iterates. */
  parsed = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
  assert_non_null(parsed);
  json_object_foreach(parsed, key, value) {
    assert_true(i < SR_ARRAY_SIZE(order));
    assert_string_equal(key, order[i++]);
  }
  assert_int_equal(i, SR_ARRAY_SIZE(order));
  json_decref(parsed);
  free(line);

  /* skill/version appear once set; the caller's fields are not consumed. */
  assert_int_equal(sr_audit_set_skill(&a, "pdf-tools", "1.2.0"), 0);
  line = sr_audit_format(&a, "x", fields, TS);
  assert_non_null(
      strstr(line, "\"skill\":\"pdf-tools\",\"version\":\"1.2.0\""));
  free(line);
  assert_int_equal(json_object_size(fields), 2);
  /* ... nor changed: its values are shared with the line's object, not
   * copied, and every reference taken is given back. */
  {
    json_t *nested = json_pack("{s:[i,i]}", "n", 1, 2);
    json_t *before = json_deep_copy(fields);
    assert_int_equal(json_object_set_new(fields, "nested", nested), 0);
    assert_int_equal(json_object_set(before, "nested", nested), 0);
    assert_int_equal(nested->refcount, 2);
    line = sr_audit_format(&a, "x", fields, TS);
    assert_non_null(strstr(line, "\"nested\":{\"n\":[1,2]}"));
    free(line);
    assert_int_equal(fields->refcount, 1);
    assert_int_equal(nested->refcount, 2);
    assert_true(json_equal(fields, before));
    json_decref(before);
  }
  json_decref(fields);

  /* Bad input gives NULL, not a half line. */
  assert_null(sr_audit_format(&a, "", NULL, TS));
  fields = json_pack("{s:i}", "prev", 1);
  assert_null(sr_audit_format(&a, "x", fields, TS));
  json_decref(fields);
  fields = json_pack("[i]", 1);
  assert_null(sr_audit_format(&a, "x", fields, TS));
  json_decref(fields);
  sr_audit_done(&a);
}

/* Warnings also go to a person, one line each, controls made harmless. */
static void test_echo_warnings(void **state) {
  _cleanup_close_ int fd = new_memfd(), echo = new_memfd();
  _cleanup_free_ char *buf = NULL;
  struct sr_audit a;
  size_t len = 0;

  (void)state;
  audit_on(&a, fd);
  emit_ok(&a, "warning",
          json_pack("{s:s, s:s}", "source", "policy", "message",
                    "network stays denied"));
  sr_audit_echo_warnings(&a, echo);
  emit_ok(&a, "warning",
          json_pack("{s:s, s:s}", "source", "policy", "message",
                    "network stays denied"));
  emit_ok(&a, "warning",
          json_pack("{s:s, s:s}", "message", "output skipped", "path",
                    "evil\x1b[2J\nname\xc2\x9b"
                    "1m caf\xc3\xa9"));
  emit_ok(&a, "warning",
          json_pack("{s:s, s:s}", "message", "rlimits", "reason",
                    "no memory controller"));
  emit_ok(&a, "bundle_verified", json_pack("{s:s}", "digest", "sha256:00"));
  sr_audit_echo_warnings(&a, -1);
  emit_ok(&a, "warning",
          json_pack("{s:s, s:s}", "source", "conf", "message", "not echoed"));
  buf = slurp(echo, &len);
  assert_string_equal(buf,
                      "skillrun: warning: network stays denied\n"
                      "skillrun: warning: output skipped: "
                      "evil?[2J?name?1m caf\xc3\xa9\n"
                      "skillrun: warning: rlimits (no memory controller)\n");
  sr_audit_done(&a);
}

/* A run refused for an invalid id names it null, on every line alike. */
static void test_null_ids(void **state) {
  _cleanup_close_ int fd = new_memfd(), mixed = -1;
  _cleanup_free_ char *buf = NULL, *bad = NULL;
  struct sr_error err = {0};
  struct sr_audit a;
  char head[65];
  uint64_t n = 0;
  size_t len = 0;

  (void)state;
  assert_int_equal(sr_audit_init(&a, fd, false, NULL, NULL), 0);
  a.fixed_ts = TS;
  emit_ok(&a, "execution_started", json_object());
  /* Not execution_completed: nothing may follow that one. */
  emit_ok(&a, "state_changed", json_object());
  sr_audit_done(&a);
  buf = slurp(fd, &len);
  assert_non_null(strstr(buf, "\"execution_id\":null,\"tenant_id\":null"));
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_verify_fd(fd, "null.jsonl", head, &n, &err), 0);
  assert_int_equal(n, 2);
  /* null on one line and a string on the next does not chain. */
  assert_int_equal(sr_audit_init(&a, fd, false, EID, NULL), 0);
  a.fixed_ts = TS;
  memcpy(a.prev, head, sizeof(a.prev));
  a.seq = 2;
  emit_ok(&a, "x", json_object());
  sr_audit_done(&a);
  bad = slurp(fd, &len);
  mixed = memfd_with(bad, len);
  assert_int_equal(sr_audit_verify_fd(mixed, "m.jsonl", head, &n, &err),
                   -EBADMSG);
  assert_non_null(strstr(err.msg, "m.jsonl:3: execution_id differs"));
}

/* The line of a warning whose message is `text` (malloc'd, *len its
 * length), which a JSON reader decodes back to `text`. */
static char *message_line(const char *text, size_t *len) {
  _cleanup_close_ int fd = new_memfd();
  struct sr_audit a;
  json_t *obj;
  char *buf;

  audit_on(&a, fd);
  emit_ok(&a, "warning", json_pack("{s:s}", "message", text));
  buf = slurp(fd, len);
  obj = json_loadb(buf, *len, 0, NULL);
  assert_non_null(obj);
  assert_string_equal(json_string_value(json_object_get(obj, "message")), text);
  assert_string_equal(json_string_value(json_object_get(obj, "event")),
                      "warning");
  json_decref(obj);
  sr_audit_done(&a);
  return buf;
}

static void test_escaping_forged_line(void **state) {
  static const char evil[] = "x\n{\"event\":\"forged\"}\r\n\x1b[2J\"\\ end";
  size_t len;
  _cleanup_free_ char *buf = message_line(evil, &len);

  (void)state;
  /* Exactly one line: the only '\n' is the terminator. */
  assert_true(len > 0);
  assert_ptr_equal(memchr(buf, '\n', len), buf + len - 1);
  assert_null(memchr(buf, '\r', len));
  assert_null(memchr(buf, '\x1b', len));
}

/* A character that misleads a reader (DEL, a C1 control, a bidirectional
 * formatting or line separator character) is written as \uHHHH in every
 * JSON text (the audit line here, metadata.json alike): no raw one reaches
 * a terminal or a splitlines() reader, and a JSON reader decodes the same
 * string (message_line).  Other text stays as it is. */
static void test_escaping_misleading(void **state) {
  static const char text[] = "a\x7f b\xc2\x85 c\xc2\x9b d\xe2\x80\xae "
                             "e\xe2\x80\xa8 f\xe2\x81\xa6 g\xd8\x9c "
                             "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\x92";
  size_t len;
  _cleanup_free_ char *buf = message_line(text, &len);

  (void)state;
  assert_non_null(strstr(buf, "\"a\\u007f b\\u0085 c\\u009b d\\u202e "
                              "e\\u2028 f\\u2066 g\\u061c "
                              "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\x92\""));
}

static void check_lossy(const char *in, size_t len, const char *want,
                        size_t want_len) {
  json_t *j = sr_json_string_lossy(in, len);
  assert_non_null(j);
  assert_true(json_is_string(j));
  assert_int_equal(json_string_length(j), want_len);
  assert_memory_equal(json_string_value(j), want, want_len);
  json_decref(j);
}

#define LOSSY(in, want) check_lossy(in, sizeof(in) - 1, want, sizeof(want) - 1)
#define FFFD "\xef\xbf\xbd"

static void test_lossy_utf8(void **state) {
  _cleanup_close_ int fd = new_memfd();
  _cleanup_free_ char *buf = NULL;
  struct sr_audit a;
  struct sr_error err = {0};
  char head[65];
  uint64_t n = 0;
  size_t len;
  json_t *j;

  (void)state;
  LOSSY("plain", "plain");
  LOSSY("na\xc3\xafve \xe6\x97\xa5 \xf0\x9f\x98\x80", /* valid stays */
        "na\xc3\xafve \xe6\x97\xa5 \xf0\x9f\x98\x80");
  LOSSY("a\xff"
        "b",
        "a" FFFD "b");
  LOSSY("\xc0\xaf", FFFD FFFD);                   /* overlong '/' */
  LOSSY("\xed\xa0\x80", FFFD FFFD FFFD);          /* UTF-16 surrogate */
  LOSSY("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD); /* above U+10FFFF */
  LOSSY("x\xe2\x82", "x" FFFD);                   /* cut-off sequence: one */
  LOSSY("\xe2\x82x", FFFD "x");
  LOSSY("\xf0\x9f\x98", FFFD);
  LOSSY("\x80\x80", FFFD FFFD); /* stray continuation bytes */
  LOSSY("a\0b", "a\0b");        /* NUL is valid UTF-8: kept */
  j = sr_json_string_lossy(NULL, 0);
  assert_true(json_is_null(j));
  json_decref(j);
  /* jansson itself would refuse the raw bytes: the helper is needed. */
  assert_null(json_string("a\xff"));

  /* Through emit and verify. */
  audit_on(&a, fd);
  emit_ok(&a, "warning",
          json_pack("{s:o}", "message", sr_json_string_lossy("\xff\xfe", 2)));
  buf = slurp(fd, &len);
  assert_non_null(strstr(buf, "\"message\":\"" FFFD FFFD "\""));
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_verify_fd(fd, "x", head, &n, &err), 0);
  assert_int_equal(n, 1);
  sr_audit_done(&a);
}

/* ------------------------------------------------------------- the chain */

static void test_chain_and_verify(void **state) {
  _cleanup_close_ int fd = new_memfd();
  _cleanup_free_ char *buf = NULL;
  char prev[65] = ZERO64, head[65] = "", line_hash[65];
  struct sr_error err = {0};
  struct sr_audit a;
  uint64_t n = 0;
  size_t len, off = 0;

  (void)state;
  audit_on(&a, fd);
  a.fixed_ts = NULL; /* the real clock must produce a valid ts too */
  for (int i = 0; i < 5; i++)
    emit_ok(&a, "state_changed", json_pack("{s:i}", "i", i));
  assert_int_equal(a.seq, 5);

  buf = slurp(fd, &len);
  for (int i = 0; i < 5; i++) {
    char *nl = memchr(buf + off, '\n', len - off);
    json_t *obj;

    assert_non_null(nl);
    obj = json_loadb(buf + off, (size_t)(nl - buf - off), 0, NULL);
    assert_non_null(obj);
    assert_int_equal(json_integer_value(json_object_get(obj, "seq")), i);
    assert_string_equal(json_string_value(json_object_get(obj, "prev")), prev);
    json_decref(obj);
    sha256_hex_test(buf + off, (size_t)(nl + 1 - buf - off), prev);
    off = (size_t)(nl + 1 - buf);
  }
  assert_int_equal(off, len);
  assert_string_equal(a.prev, prev);

  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_verify_fd(fd, "chain", head, &n, &err), 0);
  assert_int_equal(n, 5);
  sha256_hex_test(memrchr(buf, '\n', len - 1) + 1,
                  len - (size_t)((char *)memrchr(buf, '\n', len - 1) + 1 - buf),
                  line_hash);
  assert_string_equal(head, line_hash);
  assert_string_equal(head, a.prev);
  sr_audit_done(&a);
}

/* An event whose line --verify-audit could not read (longer than
 * SR_AUDIT_MAX_LINE) reaches neither sink; the longest one it reads is
 * written, and the ledger verifies. */
static void test_line_max(void **state) {
  _cleanup_close_ int fd = new_memfd(), copy = new_memfd();
  _cleanup_free_ char *pad = NULL, *line = NULL, *buf = NULL;
  struct sr_error err = {0};
  struct sr_audit a;
  json_t *small;
  size_t base, len;
  uint64_t n = 0;
  char head[65];

  (void)state;
  audit_on(&a, fd);
  assert_int_equal(sr_audit_attach_copy(&a, copy, &err), 0);
  copy = -1; /* a's now */
  small = json_pack("{s:s}", "m", "");
  assert_non_null(small);
  line = sr_audit_format(&a, "warning", small, TS); /* does not take it */
  json_decref(small);
  assert_non_null(line);
  base = strlen(line) - 1; /* without its '\n' */
  pad = malloc(SR_AUDIT_MAX_LINE);
  assert_non_null(pad);
  memset(pad, 'x', SR_AUDIT_MAX_LINE);
  assert_int_equal(
      sr_audit_emit(&a, "warning",
                    json_pack("{s:s#}", "m", pad, SR_AUDIT_MAX_LINE - base + 1),
                    &err),
      -EFBIG);
  assert_string_equal(err.reason, "audit_write");
  assert_int_equal(a.seq, 0);
  assert_true(sr_audit_primary_ok(&a) && sr_audit_copy_ok(&a));
  assert_int_equal(lseek(fd, 0, SEEK_END), 0);
  assert_int_equal(lseek(a.copy_fd, 0, SEEK_END), 0);
  err = (struct sr_error){0};
  emit_ok(&a, "warning",
          json_pack("{s:s#}", "m", pad, SR_AUDIT_MAX_LINE - base));
  emit_ok(&a, "execution_completed", json_object());
  buf = slurp(fd, &len);
  assert_int_equal((char *)memchr(buf, '\n', len) - buf, SR_AUDIT_MAX_LINE);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_verify_fd(fd, "max", head, &n, &err), 0);
  assert_int_equal(n, 2);
  sr_audit_done(&a);
}

static void test_backlog_then_copy(void **state) {
  _cleanup_close_ int fd = new_memfd();
  int copy = new_memfd(), copy_dup;
  _cleanup_free_ char *p = NULL, *c = NULL;
  struct sr_error err = {0};
  struct sr_audit a;
  size_t plen, clen;

  (void)state;
  audit_on(&a, fd);
  emit_ok(&a, "execution_started", json_object());
  emit_ok(&a, "bundle_verified", json_object());
  assert_true(a.backlog_len > 0);
  assert_int_equal(sr_audit_attach_copy(&a, copy, &err), 0);
  assert_int_equal(a.backlog_len, 0);
  emit_ok(&a, "execution_completed", json_pack("{s:s}", "status", "ok"));
  /* The copy is owned by the audit now; read it through a duplicate. */
  copy_dup = fcntl(copy, F_DUPFD_CLOEXEC, 3);
  assert_true(copy_dup >= 0);
  sr_audit_done(&a);
  assert_int_equal(fcntl(copy, F_GETFD), -1); /* closed by sr_audit_done */
  p = slurp(fd, &plen);
  c = slurp(copy_dup, &clen);
  close(copy_dup);
  assert_int_equal(plen, clen);
  assert_memory_equal(p, c, plen);
  assert_int_equal(fcntl(fd, F_GETFD) >= 0, 1); /* not owned: still open */
}

/* --------------------------------------------------------- rejected input */

static void test_common_key_rejected(void **state) {
  static const char *const keys[] = {"schema", "ts",           "seq",
                                     "event",  "execution_id", "tenant_id",
                                     "skill",  "version",      "prev"};
  _cleanup_close_ int fd = new_memfd();
  struct sr_audit a;

  (void)state;
  audit_on(&a, fd);
  for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++) {
    struct sr_error err = {0};
    json_t *f = json_pack("{s:s, s:i}", "ok", "fine", keys[i], 1);
    assert_int_equal(sr_audit_emit(&a, "warning", f, &err), -EINVAL);
    assert_int_equal(err.exit_code, SR_EXIT_FAILED);
    assert_string_equal(err.reason, "audit_field");
    assert_non_null(strstr(err.msg, keys[i]));
  }
  {
    struct sr_error err = {0};
    assert_int_equal(sr_audit_emit(&a, "", json_object(), &err), -EINVAL);
  }
  {
    /* Fields a json_pack could not build (here: a string that is not
     * UTF-8) are never replaced by an event without them. */
    struct sr_error err = {0};
    json_t *f = json_pack("{s:s}", "path", "caf\xe9");
    assert_null(f);
    assert_true(sr_audit_emit(&a, "artifact_committed", f, &err) < 0);
    assert_string_equal(err.reason, "audit_field");
    assert_non_null(strstr(err.msg, "artifact_committed"));
    memset(&err, 0, sizeof(err));
    assert_true(sr_audit_emit_anchored(&a, "execution_completed", NULL, NULL,
                                       &err) < 0);
    assert_string_equal(err.reason, "audit_field");
  }
  /* Nothing written, chain untouched. */
  assert_int_equal(lseek(fd, 0, SEEK_END), 0);
  assert_int_equal(a.seq, 0);
  assert_string_equal(a.prev, ZERO64);
  sr_audit_done(&a);
}

static void test_write_failures(void **state) {
  _cleanup_close_ int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
  _cleanup_close_ int ok = new_memfd();
  struct sr_error err = {0};
  struct sr_audit a;
  int pipefd[2];

  (void)state;
  /* A closed reader: -EPIPE (SIGPIPE is main's business, ignored here).
   * The line is on the record all the same, in the backlog that becomes
   * the run's audit.jsonl: the chain goes on, the sink is written no more
   * and later events (the failure's, the final one) succeed. */
  assert_int_not_equal(signal(SIGPIPE, SIG_IGN), SIG_ERR);
  assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
  close(pipefd[0]);
  assert_int_equal(sr_audit_init(&a, pipefd[1], true, EID, "acme"), 0);
  assert_int_equal(sr_audit_emit(&a, "execution_started", json_object(), &err),
                   -EPIPE);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_int_equal(err.err, EPIPE);
  assert_string_equal(err.reason, "audit_write");
  assert_non_null(strstr(err.msg, "execution_started"));
  assert_non_null(strstr(err.msg, "audit stream"));
  assert_false(sr_audit_primary_ok(&a));
  assert_int_equal(a.seq, 1);
  assert_non_null(strstr(a.backlog, "execution_started"));
  emit_ok(&a, "error", json_object());
  assert_int_equal(a.seq, 2);
  sr_audit_done(&a); /* owned: closes pipefd[1] */
  assert_int_equal(fcntl(pipefd[1], F_GETFD), -1);

  /* A full device as the primary and as the copy: on no record, no chain. */
  assert_true(full >= 0);
  memset(&err, 0, sizeof(err));
  assert_int_equal(sr_audit_init(&a, full, false, EID, "acme"), 0);
  a.copy_fd = fcntl(full, F_DUPFD_CLOEXEC, 3);
  assert_true(a.copy_fd >= 0);
  assert_int_equal(sr_audit_emit(&a, "execution_started", json_object(), &err),
                   -ENOSPC);
  assert_string_equal(err.reason, "audit_write");
  assert_non_null(strstr(err.msg, "audit.jsonl")); /* the first failure */
  assert_int_equal(a.seq, 0);
  assert_string_equal(a.prev, ZERO64);
  memset(&err, 0, sizeof(err));
  assert_int_equal(sr_audit_emit(&a, "error", json_object(), &err), -EIO);
  assert_int_equal(a.seq, 0);
  sr_audit_done(&a);

  /* The run's copy failing stops the run too, after the primary has the
   * line. */
  memset(&err, 0, sizeof(err));
  audit_on(&a, ok);
  emit_ok(&a, "execution_started", json_object());
  assert_int_equal(sr_audit_attach_copy(&a, full, &err), -ENOSPC);
  assert_string_equal(err.reason, "audit_write");
  assert_int_equal(a.copy_fd, -1); /* caller keeps its fd on failure */
  memset(&err, 0, sizeof(err));
  a.copy_fd = fcntl(full, F_DUPFD_CLOEXEC, 3);
  assert_true(a.copy_fd >= 0);
  assert_int_equal(sr_audit_emit(&a, "bundle_verified", json_object(), &err),
                   -ENOSPC);
  assert_string_equal(err.reason, "audit_write");
  assert_int_equal(a.seq, 2);
  assert_false(sr_audit_copy_ok(&a));
  emit_ok(&a, "execution_completed", json_object());
  assert_int_equal(a.seq, 3);
  sr_audit_done(&a);
}

/* The run's copy is written before the primary sink: a reader that went
 * away costs the stream, never the run directory's record, whose chain
 * goes on to the final event and verifies. */
static void test_copy_outlives_primary(void **state) {
  _cleanup_close_ int copy = new_memfd();
  _cleanup_free_ char *buf = NULL;
  struct sr_audit_check c;
  struct sr_error err = {0};
  struct sr_audit a;
  int pipefd[2], copy_dup;
  size_t len;

  (void)state;
  assert_int_not_equal(signal(SIGPIPE, SIG_IGN), SIG_ERR);
  assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
  assert_int_equal(sr_audit_init(&a, pipefd[1], true, EID, "acme"), 0);
  a.fixed_ts = TS;
  emit_ok(&a, "execution_started", json_object());
  copy_dup = fcntl(copy, F_DUPFD_CLOEXEC, 3);
  assert_int_equal(sr_audit_attach_copy(&a, copy_dup, &err), 0);
  close(pipefd[0]);
  assert_int_equal(sr_audit_emit(&a, "bundle_verified", json_object(), &err),
                   -EPIPE);
  sr_audit_closing(&a);
  emit_ok(&a, "error", json_pack("{s:s}", "reason", "audit_write"));
  emit_ok(&a, "execution_completed", json_pack("{s:s}", "status", "error"));
  sr_audit_done(&a);
  buf = slurp(copy, &len);
  assert_non_null(strstr(buf, "\"event\":\"bundle_verified\""));
  assert_int_equal(lseek(copy, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_check_fd(copy, "copy", NULL, &c, &err), 0);
  assert_int_equal(c.verdict, SR_AUDIT_OK);
  assert_int_equal(c.lines, 4);
}

/* A primary sink whose reader stops reading keeps the run waiting at most
 * the stall budget, in all; the copy gets every line. */
static void test_primary_stall_budget(void **state) {
  _cleanup_close_ int copy = new_memfd();
  struct sr_error err = {0};
  struct sr_audit a;
  char big[3000];
  uint64_t t0, spent;
  int pipefd[2], r = 0, copy_dup, n = 0;

  (void)state;
  memset(big, 'x', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
  assert_int_equal(sr_audit_init(&a, pipefd[1], true, EID, "acme"), 0);
  a.stall_ms = 300;
  copy_dup = fcntl(copy, F_DUPFD_CLOEXEC, 3);
  assert_int_equal(sr_audit_attach_copy(&a, copy_dup, &err), 0);
  t0 = sr_now_mono_ms();
  /* 64 KiB of pipe buffer, then the wait. */
  while (n < 100 &&
         (r = sr_audit_emit(&a, "warning", json_pack("{s:s}", "message", big),
                            &err)) == 0)
    n++;
  spent = sr_now_mono_ms() - t0;
  assert_int_equal(r, -EINVAL); /* sr_error_set without an errno */
  assert_string_equal(err.reason, "audit_write");
  assert_non_null(strstr(err.msg, "untaken"));
  assert_true(n > 5 && n < 100);
  assert_true(spent >= 250 && spent < 2000);
  /* The copy has the line that timed out, and what follows at once. */
  t0 = sr_now_mono_ms();
  emit_ok(&a, "execution_completed", json_object());
  assert_true(sr_now_mono_ms() - t0 < 100);
  assert_int_equal(a.seq, (uint64_t)n + 2);
  assert_int_equal(a.copy_len, (uint64_t)lseek(copy, 0, SEEK_END));
  close(pipefd[0]);
  sr_audit_done(&a);
}

/* A pipe whose reader is gone says so to poll(2) with no events asked: the
 * stream is given up, and losing it is the run's error (audit_write),
 * unless the run is being cancelled; a file never says so; the copy goes
 * on. */
static void test_reader_gone(void **state) {
  _cleanup_close_ int copy = new_memfd(), file = new_memfd();
  struct sr_error err = {0};
  struct sr_audit a, f;
  struct pollfd p;
  int pipefd[2];

  (void)state;
  for (int cancelling = 0; cancelling < 2; cancelling++) {
    assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
    assert_int_equal(sr_audit_init(&a, pipefd[1], true, EID, "acme"), 0);
    assert_int_equal(
        sr_audit_attach_copy(&a, fcntl(copy, F_DUPFD_CLOEXEC, 3), &err), 0);
    emit_ok(&a, "execution_started", json_object());
    p = (struct pollfd){.fd = sr_audit_watch_fd(&a)};
    assert_int_equal(p.fd, pipefd[1]);
    assert_int_equal(poll(&p, 1, 0), 0); /* a reader: nothing to say */
    assert_false(sr_audit_reader_gone(&a, p.revents));
    close(pipefd[0]);
    assert_int_equal(poll(&p, 1, 0), 1);
    assert_true(p.revents & POLLERR);
    assert_true(sr_audit_reader_gone(&a, p.revents));
    assert_false(sr_audit_primary_ok(&a));
    assert_int_equal(sr_audit_watch_fd(&a), -1);
    /* Said once: the stream is no longer watched nor written. */
    assert_false(sr_audit_reader_gone(&a, p.revents));
    if (cancelling)
      sr_audit_cancelling(&a);
    memset(&err, 0, sizeof(err));
    if (cancelling) {
      assert_int_equal(sr_audit_stream_lost(&a, &err), 0);
    } else {
      assert_int_equal(sr_audit_stream_lost(&a, &err), -EPIPE);
      assert_string_equal(err.reason, "audit_write");
      assert_non_null(strstr(err.msg, "reader is gone"));
    }
    emit_ok(&a, "execution_completed", json_object());
    sr_audit_done(&a);
    assert_int_equal(ftruncate(copy, 0), 0);
  }
  audit_on(&f, file);
  p = (struct pollfd){.fd = sr_audit_watch_fd(&f)};
  assert_int_equal(poll(&p, 1, 0), 0);
  sr_audit_done(&f);
}

/* Room is reserved in the copy ahead of its end (a full file system still
 * takes the final events; the integration tests fill one), more as the
 * copy grows, and what is left is given back at the end. */
static void test_copy_reserve(void **state) {
  _cleanup_close_ int primary = new_memfd(), copy = new_memfd();
  struct sr_error err = {0};
  struct sr_audit a;
  struct stat st;
  char text[1000];

  (void)state;
  memset(text, 'r', sizeof(text) - 1);
  text[sizeof(text) - 1] = '\0';
  audit_on(&a, primary);
  emit_ok(&a, "execution_started", json_object());
  assert_int_equal(
      sr_audit_attach_copy(&a, fcntl(copy, F_DUPFD_CLOEXEC, 3), &err), 0);
  if (a.copy_reserved == 0) {
    sr_audit_done(&a);
    skip(); /* a file system that cannot reserve */
  }
  assert_true(a.copy_reserved >= SR_AUDIT_RESERVE_STEP);
  assert_int_equal(fstat(copy, &st), 0);
  assert_true((uint64_t)st.st_blocks * 512 >= SR_AUDIT_RESERVE_STEP);
  for (int i = 0; i < 200; i++) {
    emit_ok(&a, "warning", json_pack("{s:s}", "message", text));
    assert_true(a.copy_reserved >= a.copy_len + SR_AUDIT_FINAL_RESERVE);
  }
  assert_true(a.copy_len > 2 * SR_AUDIT_RESERVE_STEP);
  sr_audit_done(&a);
  assert_int_equal(fstat(copy, &st), 0);
  assert_true((uint64_t)st.st_blocks * 512 <
              (uint64_t)st.st_size + SR_AUDIT_FINAL_RESERVE);
}

/* The skill's name and version, set once the manifest is read (after the
 * copy is attached), go into both final lines: the room for them is
 * reserved then, so that a full file system still takes the final events
 * whole. */
static void test_copy_reserve_skill(void **state) {
  _cleanup_close_ int primary = new_memfd(), copy = new_memfd();
  struct sr_error err = {0};
  struct sr_audit a;
  char version[4097];

  (void)state;
  memset(version, '\x01', sizeof(version) - 1);
  version[sizeof(version) - 1] = '\0';
  audit_on(&a, primary);
  assert_int_equal(
      sr_audit_attach_copy(&a, fcntl(copy, F_DUPFD_CLOEXEC, 3), &err), 0);
  if (a.copy_reserved == 0) {
    sr_audit_done(&a);
    skip(); /* a file system that cannot reserve */
  }
  emit_ok(&a, "execution_started", json_object());
  assert_int_equal(sr_audit_set_skill(&a, "pdf-tools", version), 0);
  assert_true(a.copy_reserved >= a.copy_len + SR_AUDIT_FINAL_RESERVE +
                                     2 * 6 * (strlen("pdf-tools") + 4096));
  sr_audit_done(&a);
}

/* ----------------------------------------------------------- verification */

/* Six good lines as sr_audit_emit writes them. */
static char *good_stream(size_t *len) {
  _cleanup_close_ int fd = new_memfd();
  struct sr_audit a;
  char *buf;

  audit_on(&a, fd);
  emit_ok(&a, "execution_started", json_object());
  assert_int_equal(sr_audit_set_skill(&a, "pdf-tools", NULL), 0);
  emit_ok(&a, "bundle_verified", json_pack("{s:s}", "digest", "sha256:ab"));
  emit_ok(&a, "policy_resolved", json_pack("{s:s}", "network", "deny"));
  emit_ok(&a, "warning", json_pack("{s:s}", "message", "hello"));
  emit_ok(&a, "state_changed", json_pack("{s:s}", "to", "running"));
  emit_ok(&a, "execution_completed", json_pack("{s:i}", "exit_code", 0));
  buf = slurp(fd, len);
  sr_audit_done(&a);
  return buf;
}

/* Start of line n (1-based) in buf. */
static char *line_at(char *buf, unsigned n) {
  while (--n > 0) {
    buf = strchr(buf, '\n');
    assert_non_null(buf);
    buf++;
  }
  return buf;
}

static size_t line_len(const char *l) {
  return (size_t)(strchr(l, '\n') - l) + 1;
}

/* Verifies data and expects rc (-EBADMSG broken, -ENODATA cut short)
 * naming NAME:line. */
static void expect_rc(int rc, const char *data, size_t len, unsigned line,
                      const char *what) {
  _cleanup_close_ int fd = memfd_with(data, len);
  struct sr_error err = {0};
  char head[65] = "untouched";
  uint64_t n = 424242;
  char prefix[64];

  assert_int_equal(sr_audit_verify_fd(fd, "t.jsonl", head, &n, &err), rc);
  snprintf(prefix, sizeof(prefix), "t.jsonl:%u: ", line);
  if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
    fail_msg("want '%s...', got '%s'", prefix, err.msg);
  if (what && !strstr(err.msg, what))
    fail_msg("want '%s' in '%s'", what, err.msg);
  assert_int_equal(err.exit_code, rc == -EBADMSG ? 1 : 2);
  assert_string_equal(err.reason,
                      rc == -EBADMSG ? "audit_invalid" : "audit_incomplete");
  assert_string_equal(head, "untouched");
  assert_int_equal(n, 424242);
}

static void expect_bad(const char *data, size_t len, unsigned line,
                       const char *what) {
  expect_rc(-EBADMSG, data, len, line, what);
}

static void test_verify_good_and_bad(void **state) {
  _cleanup_free_ char *good = NULL;
  char *buf, *l2, *l3;
  size_t len, n2, n3;

  (void)state;
  good = good_stream(&len);
  {
    _cleanup_close_ int fd = memfd_with(good, len);
    struct sr_error err = {0};
    char head[65];
    uint64_t n = 0;
    assert_int_equal(sr_audit_verify_fd(fd, "t.jsonl", head, &n, &err), 0);
    assert_int_equal(n, 6);
  }

  buf = malloc(len + 64);
  assert_non_null(buf);

  /* A removed line: the next one has the wrong seq. */
  l2 = line_at(good, 2);
  n2 = line_len(l2);
  memcpy(buf, good, (size_t)(l2 - good));
  memcpy(buf + (l2 - good), l2 + n2, len - (size_t)(l2 - good) - n2);
  expect_bad(buf, len - n2, 2, "seq is 2, expected 1");

  /* One edited byte (inside a value of line 4): line 5's prev breaks. */
  memcpy(buf, good, len);
  *strstr(line_at(buf, 4), "hello") = 'j';
  expect_bad(buf, len, 5, "prev does not match");

  /* A reordered pair. */
  l2 = line_at(good, 2);
  l3 = line_at(good, 3);
  n2 = line_len(l2);
  n3 = line_len(l3);
  memcpy(buf, good, len);
  memcpy(buf + (l2 - good), l3, n3);
  memcpy(buf + (l2 - good) + n3, l2, n2);
  expect_bad(buf, len, 2, "seq");

  /* A broken seq. */
  memcpy(buf, good, len);
  memcpy(strstr(line_at(buf, 4), "\"seq\":3"), "\"seq\":9", 7);
  expect_bad(buf, len, 4, "seq is 9, expected 3");

  /* A wrong schema on the first line. */
  memcpy(buf, good, len);
  memcpy(strstr(buf, "audit/1"), "audit/2", 7);
  expect_bad(buf, len, 1, "schema");

  /* Truncated last line, and a complete one without its newline: cut
   * short, not broken. */
  expect_rc(-ENODATA, good, len - 10, 6, "cut off");
  expect_rc(-ENODATA, good, len - 1, 6, "cut off");
  /* But nothing, not even part of a line, follows execution_completed:
   * a whole ledger with bytes after it was added to, not cut short. */
  memcpy(buf, good, len);
  memcpy(buf + len, "{\"x\":", 5);
  expect_bad(buf, len + 5, 7, "after execution_completed");

  /* Empty file (cut short too), a blank line, garbage. */
  expect_rc(-ENODATA, "", 0, 1, "no events");
  memcpy(buf, good, (size_t)(l2 - good));
  buf[l2 - good] = '\n';
  memcpy(buf + (l2 - good) + 1, l2, len - (size_t)(l2 - good));
  expect_bad(buf, len + 1, 2, "empty line");
  expect_bad("[1,2]\n", 6, 1, "not a JSON object");
  expect_bad("{\"a\":\x1b[31m}\n", 12, 1, "invalid JSON");

  free(buf);
}

/* One line with a correct zero prev, common keys overridable by `extra`
 * text placed after "schema" (for type checks on line 1). */
static void expect_bad_first(const char *ts, const char *middle,
                             const char *what) {
  char line[1024];
  int n = snprintf(line, sizeof(line),
                   "{\"schema\":\"skillrun.audit/1\",\"ts\":\"%s\",\"seq\":0,"
                   "%s,\"prev\":\"" ZERO64 "\"}\n",
                   ts, middle);
  assert_true(n > 0 && (size_t)n < sizeof(line));
  expect_bad(line, (size_t)n, 1, what);
}

static void test_verify_common_key_types(void **state) {
  static const char ok_mid[] =
      "\"event\":\"e\",\"execution_id\":\"x\",\"tenant_id\":\"t\","
      "\"skill\":null,\"version\":\"1\"";
  char line[1024];
  int n;

  (void)state;
  /* The hand-made line itself is valid... */
  n = snprintf(line, sizeof(line),
               "{\"schema\":\"skillrun.audit/1\",\"ts\":\"" TS "\",\"seq\":0,"
               "%s,\"prev\":\"" ZERO64 "\"}\n",
               ok_mid);
  {
    _cleanup_close_ int fd = memfd_with(line, (size_t)n);
    struct sr_error err = {0};
    char head[65];
    uint64_t cnt = 0;
    assert_int_equal(sr_audit_verify_fd(fd, "t.jsonl", head, &cnt, &err), 0);
    assert_int_equal(cnt, 1);
  }
  /* ...and each broken variant is not. */
  expect_bad_first("2025-01-02T03:04:05Z", ok_mid, "ts");
  expect_bad_first("2025-13-02T03:04:05.000000Z", ok_mid, "ts");
  expect_bad_first("2025-01-02 03:04:05.000000Z", ok_mid, "ts");
  expect_bad_first(TS,
                   "\"event\":\"\",\"execution_id\":\"x\",\"tenant_id\":\"t\","
                   "\"skill\":null,\"version\":null",
                   "event");
  expect_bad_first(TS,
                   "\"event\":\"e\",\"execution_id\":1,\"tenant_id\":\"t\","
                   "\"skill\":null,\"version\":null",
                   "execution_id");
  expect_bad_first(TS,
                   "\"event\":\"e\",\"execution_id\":\"x\","
                   "\"skill\":null,\"version\":null",
                   "tenant_id");
  expect_bad_first(TS,
                   "\"event\":\"e\",\"execution_id\":\"x\",\"tenant_id\":\"t\","
                   "\"skill\":3,\"version\":null",
                   "skill");
  expect_bad_first(TS,
                   "\"event\":\"e\",\"execution_id\":\"x\",\"tenant_id\":\"t\","
                   "\"skill\":null",
                   "version");
  expect_bad_first(TS,
                   "\"event\":\"e\",\"event\":\"f\",\"execution_id\":\"x\","
                   "\"tenant_id\":\"t\",\"skill\":null,\"version\":null",
                   "invalid JSON");
}

static void test_verify_execution_id_constant(void **state) {
  _cleanup_close_ int fd = new_memfd();
  _cleanup_free_ char *buf = NULL;
  struct sr_audit a, b;
  size_t len;

  (void)state;
  audit_on(&a, fd);
  emit_ok(&a, "execution_started", json_object());
  emit_ok(&a, "warning", json_object());
  /* A second stream that continues the chain under another id. */
  assert_int_equal(sr_audit_init(&b, fd, false, "another-id", "acme"), 0);
  b.fixed_ts = TS;
  b.seq = a.seq;
  memcpy(b.prev, a.prev, sizeof(b.prev));
  emit_ok(&b, "execution_completed", json_object());
  buf = slurp(fd, &len);
  expect_bad(buf, len, 3, "execution_id");
  sr_audit_done(&a);
  sr_audit_done(&b);
}

/* -------------------------------------------------- fixtures (gen.py) */

static char *fixture(const char *name, size_t *len) {
  const char *dir = getenv("TESTDATA");
  char path[4096];
  char *buf = NULL;

  if (!dir)
    skip(); /* set by `make check` (AM_TESTS_ENVIRONMENT) */
  snprintf(path, sizeof(path), "%s/audit/%s", dir, name);
  if (sr_read_file_at(AT_FDCWD, path, 1 << 20, &buf, len) < 0)
    fail_msg("cannot read %s", path);
  return buf;
}

/* good.jsonl was written by gen.py, an independent implementation: the C
 * emitter must produce the same bytes from the same events. */
static void test_fixture_good_matches_emitter(void **state) {
  _cleanup_close_ int fd = new_memfd();
  _cleanup_free_ char *want = NULL, *got = NULL;
  struct sr_error err = {0};
  struct sr_audit a;
  char head[65], last[65];
  uint64_t n = 0;
  size_t want_len, got_len;
  const char *lastline;

  (void)state;
  want = fixture("good.jsonl", &want_len);
  audit_on(&a, fd);
  emit_ok(&a, "execution_started",
          json_pack("{s:[s,s,s,s,s,s,s], s:i}", "argv", "skillrun", "--tenant",
                    "acme", "pdf-tools", "--", "python3", "x.py", "uid", 1000));
  assert_int_equal(sr_audit_set_skill(&a, "pdf-tools", "1.2.0"), 0);
  emit_ok(&a, "bundle_verified",
          json_pack("{s:s, s:i, s:i, s:i}", "digest",
                    "sha256:abababababababababababababababababababababababab"
                    "abababababababab",
                    "files", 3, "dirs", 1, "bytes", 2048));
  emit_ok(&a, "policy_resolved",
          json_pack("{s:{s:{s:I, s:s}, s:{s:i, s:s}}, s:s}", "limits", "memory",
                    "value", (json_int_t)536870912, "enforced_by", "cgroup",
                    "cpu_seconds", "value", 60, "enforced_by", "cgroup",
                    "network", "deny"));
  emit_ok(&a, "warning",
          json_pack("{s:s}", "message",
                    "SKILL.md:4: unknown top-level key 'tags'"));
  emit_ok(&a, "warning",
          json_pack("{s:s}", "message",
                    "na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac\t\"quoted\"\n"
                    "{\"event\":\"forged\"}"));
  emit_ok(&a, "artifact_committed",
          json_pack("{s:s, s:i, s:s}", "path", "outputs/report.pdf", "size",
                    1234, "sha256",
                    "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
                    "cdcdcdcd"));
  emit_ok(&a, "execution_completed",
          json_pack("{s:s, s:i, s:n, s:i}", "status", "succeeded", "exit_code",
                    0, "signal", "duration_ms", 1520));
  got = slurp(fd, &got_len);
  assert_int_equal(got_len, want_len);
  assert_string_equal(got, want);

  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_verify_fd(fd, "good.jsonl", head, &n, &err), 0);
  assert_int_equal(n, 7);
  lastline = (const char *)memrchr(want, '\n', want_len - 1) + 1;
  sha256_hex_test(lastline, want_len - (size_t)(lastline - want), last);
  assert_string_equal(head, last);
  assert_string_equal(head, a.prev);
  sr_audit_done(&a);
}

/* Each fixture of a list, verified: the verdict and the line named. */
static unsigned check_fixture_list(const char *list_name,
                                   enum sr_audit_verdict want_verdict) {
  _cleanup_free_ char *list = NULL;
  char *save = NULL, *line;
  size_t len;
  unsigned count = 0;

  list = fixture(list_name, &len);
  for (line = strtok_r(list, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    _cleanup_free_ char *data = NULL;
    char name[256];
    unsigned want;
    size_t dlen;

    if (line[0] == '#')
      continue;
    assert_int_equal(sscanf(line, "%255s %u", name, &want), 2);
    data = fixture(name, &dlen);
    {
      _cleanup_close_ int fd = memfd_with(data, dlen);
      struct sr_error err = {0};
      struct sr_audit_check c;
      char prefix[300];

      assert_int_equal(sr_audit_check_fd(fd, name, NULL, &c, &err), 0);
      if (c.verdict != want_verdict)
        fail_msg("%s: verdict %d, want %d (%s)", name, c.verdict, want_verdict,
                 err.msg);
      snprintf(prefix, sizeof(prefix), "%s:%u: ", name, want);
      if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
        fail_msg("%s: want '%s...', got '%s'", name, prefix, err.msg);
    }
    count++;
  }
  return count;
}

static void test_fixtures_bad(void **state) {
  (void)state;
  assert_true(check_fixture_list("bad.list", SR_AUDIT_TAMPERED) >= 10);
  assert_true(check_fixture_list("incomplete.list", SR_AUDIT_INCOMPLETE) >= 4);
}

/* The whole check of the good fixture: complete, nothing to say. */
static void test_check_good(void **state) {
  _cleanup_free_ char *data = NULL;
  _cleanup_close_ int fd = -1;
  struct sr_error err = {0};
  struct sr_audit_check c;
  size_t len;

  (void)state;
  data = fixture("good.jsonl", &len);
  fd = memfd_with(data, len);
  assert_int_equal(sr_audit_check_fd(fd, "good.jsonl", NULL, &c, &err), 0);
  assert_int_equal(c.verdict, SR_AUDIT_OK);
  assert_int_equal(c.lines, 7);
  assert_false(c.anchored);
  assert_false(sr_error_is_set(&err));
}

/* Resumes the ledger buf[0..n) of run id, which must not read as closed
 * and have no final line to give its newline back: its complete part. */
static size_t resume_open(int fd, const char *id, const char *buf, size_t n) {
  struct sr_audit a;
  size_t complete, final_len = 1;
  bool closed = true;

  assert_int_equal(sr_audit_resume(&a, fd, id, "acme", buf, n, &complete,
                                   &final_len, &closed),
                   0);
  assert_false(closed);
  assert_int_equal(final_len, 0);
  sr_audit_done(&a);
  return complete;
}

/* A ledger whose writer died: the chain continues where its last complete
 * line ends, a torn line after it is left for the caller to cut off. */
static void test_resume(void **state) {
  _cleanup_free_ char *data = NULL, *buf = NULL;
  _cleanup_close_ int fd = new_memfd();
  struct sr_error err = {0};
  struct sr_audit_check c;
  struct sr_audit a;
  size_t len, complete, final_len, blen;
  bool closed = true;
  const char *cut;
  char *zeroed;

  (void)state;
  data = fixture("good.jsonl", &len);
  /* Up to the middle of line 6, as a kill during a write leaves it. */
  cut = line_at(data, 6) + 30;
  assert_int_equal(sr_write_all(fd, data, (size_t)(cut - data)), 0);
  assert_int_equal(sr_audit_resume(&a, fd, EID, "acme", data,
                                   (size_t)(cut - data), &complete, &final_len,
                                   &closed),
                   0);
  assert_int_equal(complete, (size_t)(line_at(data, 6) - data));
  assert_int_equal(final_len, 0);
  assert_false(closed);
  assert_int_equal(a.seq, 5);
  assert_string_equal(a.skill, "pdf-tools");
  assert_int_equal(ftruncate(fd, (off_t)complete), 0);
  assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)complete);
  a.fixed_ts = TS;
  emit_ok(&a, "execution_completed",
          json_pack("{s:s, s:n}", "status", "abandoned", "exit_code"));
  sr_audit_done(&a);
  buf = slurp(fd, &blen);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_audit_check_fd(fd, "resumed", NULL, &c, &err), 0);
  assert_int_equal(c.verdict, SR_AUDIT_OK);
  assert_int_equal(c.lines, 6);

  /* A closed ledger says so. */
  assert_int_equal(sr_audit_resume(&a, fd, EID, "acme", data, len, &complete,
                                   &final_len, &closed),
                   0);
  assert_true(closed);
  assert_int_equal(complete, len);
  assert_int_equal(final_len, 0);
  assert_int_equal(a.seq, 7);
  sr_audit_done(&a);

  /* Its execution_completed cut off only at its newline, or followed by
   * the zeros a crash leaves where it lost the data: whole, and closed. */
  zeroed = malloc(len + 100);
  assert_non_null(zeroed);
  memcpy(zeroed, data, len - 1);
  memset(zeroed + len - 1, 0, 101);
  for (size_t n = len - 1; n <= len + 99; n += 50) {
    assert_int_equal(sr_audit_resume(&a, fd, EID, "acme", zeroed, n, &complete,
                                     &final_len, &closed),
                     0);
    assert_true(closed);
    assert_int_equal(complete, (size_t)(line_at(data, 7) - data));
    assert_int_equal(final_len, len - 1 - complete);
    sr_audit_done(&a);
  }
  /* Not when a byte of it is lost, nor for another run's. */
  (void)resume_open(fd, EID, zeroed, len - 2);
  (void)resume_open(fd, "another-run", zeroed, len - 1);
  /* Nor for a line whose seq, or whose prev alone, does not follow. */
  for (int k = 0; k < 2; k++) {
    char *l7 = line_at(zeroed, 7);
    char *at = strstr(l7, k ? "\"prev\":\"" : "\"seq\":6");

    assert_non_null(at);
    at += k ? strlen("\"prev\":\"") : strlen("\"seq\":");
    *at = *at == '0' ? '1' : (char)(*at == '6' ? '7' : '0');
    (void)resume_open(fd, EID, zeroed, len - 1);
    memcpy(zeroed, data, len - 1);
  }
  /* Nor for another event that lost its newline: that one was not the
   * run's last, and goes. */
  assert_int_equal(
      resume_open(fd, EID, data, (size_t)(line_at(data, 7) - data) - 1),
      (size_t)(line_at(data, 6) - data));
  free(zeroed);
}

/* jansson's fail_at-th allocation fails (0: none), the others not. */
static unsigned long alloc_count, fail_at;
static void *failing_malloc(size_t n) {
  return fail_at && ++alloc_count == fail_at ? NULL : malloc(n);
}

/* Out of memory while a line (or metadata.json) is written: no text at
 * all, never one cut short.  jansson ignores a failure to write an
 * object's key, which json_dumps's growing buffer met: a line with
 * ",":" where ","ts":" belonged, on both copies of the record. */
static void test_format_out_of_memory(void **state) {
  struct sr_audit a;
  json_t *fields;
  size_t whole = 0, failed = 0;

  (void)state;
  assert_int_equal(sr_audit_init(&a, 1, false, EID, "acme"), 0);
  fields = json_pack("{s:s, s:i, s:{s:s, s:[s, s]}}", "digest", "sha256:00",
                     "files", 3, "nested", "key", "value", "list", "a", "b");
  assert_non_null(fields);
  for (unsigned long n = 1; n < 200; n++) {
    char *line, *text;
    size_t len = 0;
    json_t *parsed;

    alloc_count = 0;
    fail_at = n;
    json_set_alloc_funcs(failing_malloc, free);
    line = sr_audit_format(&a, "bundle_verified", fields, TS);
    alloc_count = 0;
    text = sr_json_dump(fields, JSON_INDENT(2) | JSON_PRESERVE_ORDER, 1, &len);
    fail_at = 0;
    json_set_alloc_funcs(malloc, free);
    if (line) {
      parsed = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
      if (!parsed)
        fail_msg("allocation %lu failing gave a broken line: %s", n, line);
      json_decref(parsed);
      whole++;
    } else {
      failed++;
    }
    if (text) {
      parsed = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
      if (!parsed || strlen(text) != len)
        fail_msg("allocation %lu failing gave a broken text: %s", n, text);
      json_decref(parsed);
    }
    free(line);
    free(text);
  }
  /* Both outcomes were met: the sweep reached past the last allocation. */
  assert_true(whole > 0 && failed > 0);
  json_decref(fields);
  sr_audit_done(&a);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_format_common_keys),
      cmocka_unit_test(test_format_out_of_memory),
      cmocka_unit_test(test_escaping_forged_line),
      cmocka_unit_test(test_escaping_misleading),
      cmocka_unit_test(test_echo_warnings),
      cmocka_unit_test(test_null_ids),
      cmocka_unit_test(test_lossy_utf8),
      cmocka_unit_test(test_chain_and_verify),
      cmocka_unit_test(test_line_max),
      cmocka_unit_test(test_backlog_then_copy),
      cmocka_unit_test(test_common_key_rejected),
      cmocka_unit_test(test_write_failures),
      cmocka_unit_test(test_copy_outlives_primary),
      cmocka_unit_test(test_primary_stall_budget),
      cmocka_unit_test(test_reader_gone),
      cmocka_unit_test(test_copy_reserve),
      cmocka_unit_test(test_copy_reserve_skill),
      cmocka_unit_test(test_verify_good_and_bad),
      cmocka_unit_test(test_verify_common_key_types),
      cmocka_unit_test(test_verify_execution_id_constant),
      cmocka_unit_test(test_fixture_good_matches_emitter),
      cmocka_unit_test(test_fixtures_bad),
      cmocka_unit_test(test_check_good),
      cmocka_unit_test(test_resume),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("audit", tests, NULL, NULL);
}
