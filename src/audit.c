/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "fdutil.h"
#include "sha256.h"
#include "trust.h"
#include "util.h"

#define SR_AUDIT_ZERO_HASH                                                     \
  "0000000000000000000000000000000000000000000000000000000000000000"
/* Verification caps: an audit file is attacker-reachable input. */
#define SR_AUDIT_MAX_FILE (256u * 1024 * 1024)
#define SR_AUDIT_MAX_LINE (1024u * 1024)
/* Lines kept in memory until {run}/audit.jsonl exists; only a handful of
 * events precede it, so a large backlog means something is wrong. */
#define SR_AUDIT_MAX_BACKLOG (16u * 1024 * 1024)

static const char *const common_keys[] = {
    "schema",    "ts",    "seq",     "event", "execution_id",
    "tenant_id", "skill", "version", "prev",
};

/* json_decrefp comes with jansson >= 2.9 and accepts NULL. */
#define _cleanup_json_ _cleanup_(json_decrefp)

json_t *sr_json_string_lossy(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  _cleanup_free_ char *buf = NULL;
  size_t i = 0, o = 0, skip = 0;
  bool valid = true;

  if (!s)
    return json_null();
  for (i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    if (n == 0) {
      valid = false;
      break;
    }
    i += n;
  }
  if (valid)
    return json_stringn(s, len);

  /* Each input byte becomes at most the three bytes of U+FFFD. */
  if (len > (SIZE_MAX - 1) / 3)
    return NULL;
  buf = malloc(3 * len + 1);
  if (!buf)
    return NULL;
  for (i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    if (n > 0) {
      memcpy(buf + o, p + i, n);
      o += n;
      i += n;
    } else {
      /* buf is counted (json_stringn), never read as a C string.
       * NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
      memcpy(buf + o, "\xef\xbf\xbd", 3);
      o += 3;
      i += skip;
    }
  }
  return json_stringn(buf, o);
}

static bool is_common_key(const char *key) {
  for (size_t i = 0; i < SR_ARRAY_SIZE(common_keys); i++)
    if (!strcmp(key, common_keys[i]))
      return true;
  return false;
}

static json_t *string_or_null(const char *s) {
  return s ? sr_json_string_lossy(s, strlen(s)) : json_null();
}

/* The line for `event` with the current seq/prev; -EINVAL for a bad event
 * name, non-object fields or a field named like a common key. */
static int format_line(const struct sr_audit *a, const char *event,
                       const json_t *fields, const char *ts, char **out,
                       char bad_key[64]) {
  _cleanup_json_ json_t *obj = NULL, *copy = NULL;
  _cleanup_free_ char *text = NULL;
  const char *key;
  json_t *value;
  char *line;
  size_t n;

  if (!event || !*event || !ts)
    return -EINVAL;
  if (fields && !json_is_object(fields))
    return -EINVAL;

  obj = json_object();
  if (!obj)
    return -ENOMEM;
  /* Common keys first, in schema order: json_object_set_new keeps insertion
   * order and JSON_PRESERVE_ORDER writes it. */
  if (json_object_set_new(obj, "schema", json_string(SR_AUDIT_SCHEMA)) < 0 ||
      json_object_set_new(obj, "ts", sr_json_string_lossy(ts, strlen(ts))) <
          0 ||
      json_object_set_new(obj, "seq", json_integer((json_int_t)a->seq)) < 0 ||
      json_object_set_new(obj, "event",
                          sr_json_string_lossy(event, strlen(event))) < 0 ||
      json_object_set_new(obj, "execution_id",
                          string_or_null(a->execution_id)) < 0 ||
      json_object_set_new(obj, "tenant_id", string_or_null(a->tenant_id)) < 0 ||
      json_object_set_new(obj, "skill", string_or_null(a->skill)) < 0 ||
      json_object_set_new(obj, "version", string_or_null(a->version)) < 0 ||
      json_object_set_new(obj, "prev", json_string(a->prev)) < 0)
    return -ENOMEM;

  if (fields) {
    /* A copy, because iterating needs a non-const object and the caller's
     * one must stay untouched. */
    copy = json_deep_copy(fields);
    if (!copy)
      return -ENOMEM;
    json_object_foreach(copy, key, value) {
      if (is_common_key(key)) {
        /* Copied: the key dies with `copy`. */
        if (bad_key)
          snprintf(bad_key, 64, "%s", key);
        return -EINVAL;
      }
      if (json_object_set(obj, key, value) < 0)
        return -ENOMEM;
    }
  }

  /* Compact: jansson escapes every control character inside strings, so
   * the object cannot contain a raw newline and nothing a skill prints
   * can start a new (forged) line. */
  text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
  if (!text)
    return -ENOMEM;
  n = strlen(text);
  if (memchr(text, '\n', n))
    return -EINVAL; /* cannot happen with JSON_COMPACT; never trust it */
  line = malloc(n + 2);
  if (!line)
    return -ENOMEM;
  memcpy(line, text, n);
  line[n] = '\n';
  line[n + 1] = '\0';
  *out = line;
  return 0;
}

char *sr_audit_format(const struct sr_audit *a, const char *event,
                      const json_t *fields, const char *ts) {
  char *line = NULL;

  if (!a)
    return NULL;
  if (format_line(a, event, fields, ts, &line, NULL) < 0)
    return NULL;
  return line;
}

int sr_audit_init(struct sr_audit *a, int fd, bool own_fd,
                  const char *execution_id, const char *tenant_id) {
  char *eid = NULL, *tid = NULL;

  if (!a || fd < 0)
    return -EINVAL;
  /* A NULL id is written as null: a run refused for an invalid id. */
  if ((execution_id && !(eid = strdup(execution_id))) ||
      (tenant_id && !(tid = strdup(tenant_id)))) {
    free(eid);
    free(tid);
    return -ENOMEM;
  }
  *a = (struct sr_audit){
      .fd = fd,
      .own_fd = own_fd,
      .copy_fd = -1,
      .echo_fd = -1,
      .seq = 0,
      .execution_id = eid,
      .tenant_id = tid,
  };
  memcpy(a->prev, SR_AUDIT_ZERO_HASH, sizeof(a->prev));
  return 0;
}

void sr_audit_echo_warnings(struct sr_audit *a, int fd) {
  a->echo_fd = fd;
}

/* Appends s to buf (of len, used so far *n) for a terminal: C0 controls,
 * DEL and the C1 controls' UTF-8 form (C2 80 - C2 9F) as '?'. */
static void echo_append(char *buf, size_t len, size_t *n, const char *s) {
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (*n + 2 >= len)
      return;
    if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
      buf[(*n)++] = '?';
      c++;
    } else {
      buf[(*n)++] = (char)(*c < 0x20 || *c == 0x7f ? '?' : *c);
    }
  }
}

/* A warning event as one line for a person (sr_audit_echo_warnings). */
static void echo_warning(const struct sr_audit *a, const json_t *fields) {
  const char *msg = json_string_value(json_object_get(fields, "message"));
  const char *path = json_string_value(json_object_get(fields, "path"));
  const char *why = json_string_value(json_object_get(fields, "reason"));
  char line[2048];
  size_t n = 0;

  echo_append(line, sizeof(line), &n, "skillrun: warning: ");
  echo_append(line, sizeof(line), &n, msg ? msg : "(no message)");
  if (path) {
    echo_append(line, sizeof(line), &n, ": ");
    echo_append(line, sizeof(line), &n, path);
  }
  if (why) {
    echo_append(line, sizeof(line), &n, " (");
    echo_append(line, sizeof(line), &n, why);
    echo_append(line, sizeof(line), &n, ")");
  }
  line[n++] = '\n';
  /* Best effort: the record is the audit line, already written. */
  (void)sr_write_all(a->echo_fd, line, n);
}

int sr_audit_set_skill(struct sr_audit *a, const char *skill,
                       const char *version) {
  char *s = NULL, *v = NULL;

  if (!a)
    return -EINVAL;
  if ((skill && !(s = strdup(skill))) || (version && !(v = strdup(version)))) {
    free(s);
    return -ENOMEM;
  }
  free(a->skill);
  free(a->version);
  a->skill = s;
  a->version = v;
  return 0;
}

int sr_audit_attach_copy(struct sr_audit *a, int copy_fd,
                         struct sr_error *err) {
  int r;

  if (!a || copy_fd < 0 || a->copy_fd >= 0)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "audit_write",
                        "audit: cannot attach the audit copy");
  if (a->backlog_len > 0) {
    r = sr_write_all(copy_fd, a->backlog, a->backlog_len);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                          "audit: cannot write the run's audit copy");
  }
  free(a->backlog);
  a->backlog = NULL;
  a->backlog_len = 0;
  a->copy_fd = copy_fd;
  return 0;
}

static int backlog_append(struct sr_audit *a, const char *line, size_t n) {
  char *b;

  if (a->backlog_len + n > SR_AUDIT_MAX_BACKLOG)
    return -ENOBUFS;
  b = realloc(a->backlog, a->backlog_len + n + 1);
  if (!b)
    return -ENOMEM;
  memcpy(b + a->backlog_len, line, n);
  a->backlog_len += n;
  b[a->backlog_len] = '\0';
  a->backlog = b;
  return 0;
}

/* format_line with its errors turned into sr_error. */
static int format_checked(const struct sr_audit *a, const char *event,
                          const json_t *fields, const char *ts, char **line,
                          struct sr_error *err) {
  const char *name = event ? event : "(null)";
  char bad_key[64] = "";
  int r;

  r = format_line(a, event, fields, ts, line, bad_key);
  if (r == -EINVAL && bad_key[0])
    return sr_error_set(err, SR_EXIT_FAILED, 0, "audit_field",
                        "audit: event '%s': field '%s' is a common key", name,
                        bad_key);
  if (r == -EINVAL)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "audit_field",
                        "audit: event '%s': invalid event or fields", name);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: cannot format event '%s'", name);
  return 0;
}

static void event_ts(const struct sr_audit *a, char ts[32]) {
  if (a->fixed_ts)
    snprintf(ts, 32, "%s", a->fixed_ts);
  else
    sr_now_rfc3339(ts);
}

/* Writes a formatted line to every sink and chains the next one to it. */
static int write_line(struct sr_audit *a, const char *name, const char *line,
                      struct sr_error *err) {
  /* False positive: line is set whenever format_checked() returned 0; its
   * error paths return sr_error_set(), always < 0 (error.c), which the
   * analyzer cannot see from this file.
   * NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
  size_t n = strlen(line);
  int r;

  r = sr_write_all(a->fd, line, n);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: cannot write event '%s'", name);
  /* The line is on the record: chain the next one to it. */
  r = sr_sha256_hex(line, n, a->prev);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: cannot hash event '%s'", name);
  a->seq++;

  if (a->copy_fd >= 0)
    r = sr_write_all(a->copy_fd, line, n);
  else
    r = backlog_append(a, line, n);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: cannot write event '%s' to the run's copy",
                        name);
  return 0;
}

int sr_audit_emit(struct sr_audit *a, const char *event, json_t *fields,
                  struct sr_error *err) {
  _cleanup_json_ json_t *owned = fields; /* stolen on every path */
  _cleanup_free_ char *line = NULL;
  const char *name = event ? event : "(null)";
  char ts[32];
  int r;

  if (!a || a->fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, EBADF, "audit_write",
                        "audit: cannot write event '%s'", name);
  /* Fail closed: NULL is what json_pack() returns when it could not build
   * the fields (out of memory, or a string that is not UTF-8).  An event
   * without them would say less than happened. */
  if (!owned)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "audit_field",
                        "audit: event '%s': its fields could not be built",
                        name);
  event_ts(a, ts);
  r = format_checked(a, event, owned, ts, &line, err);
  if (r < 0)
    return r;
  r = write_line(a, name, line, err);
  if (r >= 0 && a->echo_fd >= 0 && !strcmp(name, "warning"))
    echo_warning(a, owned);
  return r;
}

#define ANCHOR_DOMAIN "skillrun-audit-anchor/1 "
#define ANCHOR_PREFIX ",\"anchor\":{\"alg\":\"ed25519\",\"key_id\":\""
#define ANCHOR_MIDDLE "\",\"signature\":\""
#define ANCHOR_SIG_B64 88

/* The message an anchor signs, for the line without its anchor. */
static int anchor_message(const char *unsigned_line, size_t n,
                          char msg[sizeof(ANCHOR_DOMAIN) + 65]) {
  char head[65];
  int r = sr_sha256_hex(unsigned_line, n, head);
  if (r < 0)
    return r;
  snprintf(msg, sizeof(ANCHOR_DOMAIN) + 65, ANCHOR_DOMAIN "%s\n", head);
  return 0;
}

int sr_audit_emit_anchored(struct sr_audit *a, const char *event,
                           json_t *fields, const struct sr_trust_key *key,
                           struct sr_error *err) {
  _cleanup_json_ json_t *owned = fields;
  _cleanup_free_ char *plain = NULL, *line = NULL;
  const char *name = event ? event : "(null)";
  unsigned char sig[SR_SIG_BYTES];
  char msg[sizeof(ANCHOR_DOMAIN) + 65], b64[ANCHOR_SIG_B64 + 1], ts[32];
  size_t n;
  int r;

  if (!key)
    return sr_audit_emit(a, event, TAKE_PTR(owned), err);
  if (!owned)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "audit_field",
                        "audit: event '%s': its fields could not be built",
                        name);
  if (!a || a->fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, EBADF, "audit_write",
                        "audit: cannot write event '%s'", name);
  if (json_object_get(owned, "anchor"))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "audit_field",
                        "audit: event '%s' already has an anchor", name);
  /* One timestamp for both renderings: they must differ only by the
   * anchor member. */
  event_ts(a, ts);
  r = format_checked(a, event, owned, ts, &plain, err);
  if (r < 0)
    return r;
  /* format_checked() returned 0, so plain is set (see write_line()).
   * NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
  n = strlen(plain);
  r = anchor_message(plain, n, msg);
  if (r >= 0)
    r = sr_trust_sign(key, msg, strlen(msg), sig);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_anchor",
                        "audit: cannot sign the anchor of event '%s'", name);
  sr_base64_encode(sig, sizeof(sig), false, b64);
  if (json_object_set_new(owned, "anchor",
                          json_pack("{s:s, s:s, s:s}", "alg", "ed25519",
                                    "key_id", sr_trust_key_id(key), "signature",
                                    b64)) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "audit_write",
                        "audit: event '%s'", name);
  r = format_checked(a, event, owned, ts, &line, err);
  if (r < 0)
    return r;
  /* The verifier strips the anchor textually: check here that the line
   * really is the plain one plus the anchor as its last member.  (line is
   * set: format_checked() returned 0, see write_line().)
   * NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
  if (strlen(line) != n - 2 + strlen(ANCHOR_PREFIX) + SR_KEY_ID_LEN +
                          strlen(ANCHOR_MIDDLE) + ANCHOR_SIG_B64 + 4 ||
      memcmp(line, plain, n - 2) != 0)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "audit_anchor",
                        "audit: event '%s': unexpected anchor layout", name);
  return write_line(a, name, line, err);
}

void sr_audit_done(struct sr_audit *a) {
  if (!a)
    return;
  if (a->own_fd)
    safe_close(a->fd);
  safe_close(a->copy_fd);
  a->fd = a->copy_fd = -1;
  a->own_fd = false;
  free(a->execution_id);
  free(a->tenant_id);
  free(a->skill);
  free(a->version);
  free(a->backlog);
  a->execution_id = a->tenant_id = a->skill = a->version = a->backlog = NULL;
  a->backlog_len = 0;
}

/* ---------------------------------------------------------------- verify */

static bool digits_in(const char *s, int lo, int hi) {
  int v;

  if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
    return false;
  v = (s[0] - '0') * 10 + (s[1] - '0');
  return v >= lo && v <= hi;
}

/* YYYY-MM-DDTHH:MM:SS.ffffffZ, as sr_now_rfc3339 writes it. */
static bool ts_ok(const char *s, size_t len) {
  static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";

  if (len != sizeof(shape) - 1)
    return false;
  for (size_t i = 0; i < len; i++) {
    if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
      return false;
  }
  return digits_in(s + 5, 1, 12) && digits_in(s + 8, 1, 31) &&
         digits_in(s + 11, 0, 23) && digits_in(s + 14, 0, 59) &&
         digits_in(s + 17, 0, 60);
}

static bool jstr_eq(const json_t *j, const char *s, size_t len) {
  return json_string_length(j) == len && !memcmp(json_string_value(j), s, len);
}

/* Verification errors: exit 1 in main, always -EBADMSG. */
#define BAD(...)                                                               \
  (sr_error_set(err, 1, 0, "audit_invalid", "%s:%" PRIu64 ": " __VA_ARGS__),   \
   -EBADMSG)

/* Checks one line (without its '\n'); expected_prev and first_eid chain. */
static int verify_line(const char *name, uint64_t lineno, const char *line,
                       size_t len, const char *expected_prev,
                       json_t **first_eid, struct sr_error *err) {
  _cleanup_json_ json_t *obj = NULL;
  json_error_t jerr;
  json_t *v;

  if (len == 0)
    return BAD("empty line", name, lineno);
  /* Duplicate keys are refused: a reader that keeps the last "event" would
   * see another event than one that keeps the first. */
  obj = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
  if (!obj) {
    /* jansson quotes the input near the error: keep terminal control
     * sequences from the file out of the message main prints. */
    for (char *c = jerr.text; *c; c++)
      if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
        *c = '?';
    return BAD("invalid JSON at column %d: %s", name, lineno, jerr.column,
               jerr.text);
  }
  if (!json_is_object(obj))
    return BAD("not a JSON object", name, lineno);

  v = json_object_get(obj, "schema");
  if (!json_is_string(v) ||
      !jstr_eq(v, SR_AUDIT_SCHEMA, strlen(SR_AUDIT_SCHEMA)))
    return BAD("schema is not \"" SR_AUDIT_SCHEMA "\"", name, lineno);

  v = json_object_get(obj, "ts");
  if (!json_is_string(v) || !ts_ok(json_string_value(v), json_string_length(v)))
    return BAD("ts is not an RFC 3339 UTC time with microseconds", name,
               lineno);

  v = json_object_get(obj, "seq");
  if (!json_is_integer(v))
    return BAD("seq is missing or not an integer", name, lineno);
  if (json_integer_value(v) < 0 ||
      (uint64_t)json_integer_value(v) != lineno - 1)
    return BAD("seq is %" JSON_INTEGER_FORMAT ", expected %" PRIu64, name,
               lineno, json_integer_value(v), lineno - 1);

  v = json_object_get(obj, "event");
  if (!json_is_string(v) || json_string_length(v) == 0)
    return BAD("event is missing or not a non-empty string", name, lineno);

  /* null: a run refused for an invalid id (skillrun(1), AUDIT EVENTS). */
  v = json_object_get(obj, "execution_id");
  if (!json_is_string(v) && !json_is_null(v))
    return BAD("execution_id is missing or neither a string nor null", name,
               lineno);
  if (!*first_eid)
    *first_eid = json_incref(v);
  else if (!json_equal(v, *first_eid))
    return BAD("execution_id differs from the first line's", name, lineno);

  v = json_object_get(obj, "tenant_id");
  if (!json_is_string(v) && !json_is_null(v))
    return BAD("tenant_id is missing or neither a string nor null", name,
               lineno);

  v = json_object_get(obj, "skill");
  if (!json_is_string(v) && !json_is_null(v))
    return BAD("skill is missing or neither a string nor null", name, lineno);
  v = json_object_get(obj, "version");
  if (!json_is_string(v) && !json_is_null(v))
    return BAD("version is missing or neither a string nor null", name, lineno);

  v = json_object_get(obj, "prev");
  if (!json_is_string(v))
    return BAD("prev is missing or not a string", name, lineno);
  if (!jstr_eq(v, expected_prev, 64))
    return BAD("prev does not match the hash of the previous line "
               "(line removed, inserted, reordered or edited)",
               name, lineno);
  return 0;
}

/* Verifies a whole buffer; *last / *last_len: the last line (no '\n'). */
static int verify_buffer(const char *buf, size_t len, const char *name,
                         char head_hex[65], uint64_t *n_lines,
                         const char **last, size_t *last_len,
                         struct sr_error *err) {
  _cleanup_json_ json_t *first_eid = NULL;
  char prev[65] = SR_AUDIT_ZERO_HASH;
  uint64_t lineno = 0;
  size_t pos = 0;
  int r;

  if (len == 0)
    return BAD("no events (empty file)", name, (uint64_t)1);

  while (pos < len) {
    const char *line = buf + pos;
    const char *nl = memchr(line, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - line) : len - pos;

    lineno++;
    if (n > SR_AUDIT_MAX_LINE)
      return BAD("line longer than %u bytes", name, lineno, SR_AUDIT_MAX_LINE);
    /* Checked before parsing: a cut-off last line is the likelier story
     * than a JSON error, and a complete object without '\n' was never
     * written by sr_audit_emit. */
    if (!nl)
      return BAD("truncated last line (no newline at end of file)", name,
                 lineno);
    r = verify_line(name, lineno, line, n, prev, &first_eid, err);
    if (r < 0)
      return r;
    *last = line;
    *last_len = n;
    r = sr_sha256_hex(line, n + 1, prev);
    if (r < 0)
      return sr_error_set(err, 1, -r, "audit_read", "%s:%" PRIu64 ": hash",
                          name, lineno);
    pos += n + 1;
  }

  if (head_hex)
    memcpy(head_hex, prev, 65);
  if (n_lines)
    *n_lines = lineno;
  return 0;
}

static int read_audit(int fd, const char *name, char **buf, size_t *len,
                      struct sr_error *err) {
  int r = sr_read_fd(fd, SR_AUDIT_MAX_FILE, buf, len);
  if (r == -EFBIG)
    return BAD("file larger than %u MiB", name, (uint64_t)1,
               SR_AUDIT_MAX_FILE / 1024 / 1024);
  if (r < 0)
    return sr_error_set(err, 1, -r, "audit_read", "%s: cannot read", name);
  return 0;
}

int sr_audit_verify_fd(int fd, const char *display_name, char head_hex[65],
                       uint64_t *n_lines, struct sr_error *err) {
  _cleanup_free_ char *buf = NULL;
  const char *name = display_name ? display_name : "audit";
  const char *last = NULL;
  size_t len = 0, last_len = 0;
  int r;

  r = read_audit(fd, name, &buf, &len, err);
  if (r < 0)
    return r;
  return verify_buffer(buf, len, name, head_hex, n_lines, &last, &last_len,
                       err);
}

int sr_audit_verify_anchored_fd(int fd, const char *display_name,
                                const struct sr_trust_key *key,
                                char head_hex[65], uint64_t *n_lines,
                                struct sr_error *err) {
  _cleanup_free_ char *buf = NULL, *plain = NULL;
  _cleanup_json_ json_t *obj = NULL;
  const char *name = display_name ? display_name : "audit";
  const char *last = NULL, *p, *id, *b64;
  size_t len = 0, last_len = 0, cut;
  uint64_t lineno = 0;
  unsigned char sig[SR_SIG_BYTES];
  char msg[sizeof(ANCHOR_DOMAIN) + 65], key_id[SR_KEY_ID_LEN + 1];
  size_t got = 0, tail;
  int r;

  r = read_audit(fd, name, &buf, &len, err);
  if (r < 0)
    return r;
  r = verify_buffer(buf, len, name, head_hex, &lineno, &last, &last_len, err);
  if (r < 0)
    return r;
  if (n_lines)
    *n_lines = lineno;

  obj = json_loadb(last, last_len, JSON_REJECT_DUPLICATES, NULL);
  if (!obj || !jstr_eq(json_object_get(obj, "event"), "execution_completed",
                       strlen("execution_completed")))
    return BAD("not anchored: the last event is not execution_completed "
               "(ledger truncated?)",
               name, lineno);
  if (!json_object_get(obj, "anchor"))
    return BAD("not anchored: execution_completed has no anchor", name, lineno);

  /* The anchor is the last member, in exactly the layout emit writes. */
  tail = strlen(ANCHOR_PREFIX) + SR_KEY_ID_LEN + strlen(ANCHOR_MIDDLE) +
         ANCHOR_SIG_B64 + 3;
  if (last_len < tail + 2)
    return BAD("anchor is not the last member in the canonical layout", name,
               lineno);
  cut = last_len - tail;
  p = last + cut;
  id = p + strlen(ANCHOR_PREFIX);
  b64 = id + SR_KEY_ID_LEN + strlen(ANCHOR_MIDDLE);
  if (memcmp(p, ANCHOR_PREFIX, strlen(ANCHOR_PREFIX)) != 0 ||
      memcmp(id + SR_KEY_ID_LEN, ANCHOR_MIDDLE, strlen(ANCHOR_MIDDLE)) != 0 ||
      memcmp(b64 + ANCHOR_SIG_B64, "\"}}", 3) != 0)
    return BAD("anchor is not the last member in the canonical layout", name,
               lineno);
  memcpy(key_id, id, SR_KEY_ID_LEN);
  key_id[SR_KEY_ID_LEN] = '\0';
  if (strcmp(key_id, sr_trust_key_id(key)) != 0)
    return BAD("anchored by key %s, not by the given key %s", name, lineno,
               key_id, sr_trust_key_id(key));
  if (sr_base64_decode(b64, ANCHOR_SIG_B64, false, sig, sizeof(sig), &got) <
          0 ||
      got != SR_SIG_BYTES)
    return BAD("anchor signature is not base64 of 64 bytes", name, lineno);

  /* The line as it was before the anchor was added: "...}" "\n". */
  plain = malloc(cut + 3);
  if (!plain)
    return sr_error_set(err, 1, ENOMEM, "audit_read", "%s", name);
  memcpy(plain, last, cut);
  memcpy(plain + cut, "}\n", 3);
  r = anchor_message(plain, cut + 2, msg);
  if (r < 0)
    return sr_error_set(err, 1, -r, "audit_read", "%s: hash", name);
  if (sr_trust_verify(key, msg, strlen(msg), sig) < 0)
    return BAD("anchor signature does not verify: the ledger was edited, "
               "reordered or rewritten",
               name, lineno);
  return 0;
}
