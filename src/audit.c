/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "fdutil.h"
#include "sha256.h"
#include "status.h"
#include "trust.h"
#include "util.h"

#define SR_AUDIT_ZERO_HASH                                                     \
  "0000000000000000000000000000000000000000000000000000000000000000"
/* Lines kept in memory until {run}/audit.jsonl exists; only a handful of
 * events precede it, so a large backlog means something is wrong. */
#define SR_AUDIT_MAX_BACKLOG (16u * 1024 * 1024)

static const char *const common_keys[] = {
    "schema",    "ts",    "seq",     "event", "execution_id",
    "tenant_id", "skill", "version", "prev",
};

/* json_decrefp comes with jansson >= 2.9 and accepts NULL. */
#define _cleanup_json_ _cleanup_(json_decrefp)

/* Formatted into a buffer of ours, never through jansson's own growing
 * one (json_dumps), which drops a key it cannot write when memory runs
 * out and goes on.  One pass into a buffer of a usual line's size, a
 * second only for a longer one (policy_resolved, an artifact list):
 * json_dumpb always returns the whole length. */
#define SR_JSON_DUMP_GUESS 8192u

/* How long text[0..n) is with each character that misleads a reader
 * (sr_name_misleads: DEL, a C1 control, a bidirectional formatting or
 * line separator character) written as \uHHHH, into out when it is not
 * NULL.  Outside strings a JSON text is ASCII, and jansson writes the C0
 * controls escaped already, so only string contents change, and not in
 * what a JSON reader takes from them. */
static size_t escape_misleading(const char *text, size_t n, char *out) {
  const unsigned char *p = (const unsigned char *)text;
  size_t o = 0;

  for (size_t i = 0; i < n;) {
    size_t k = 1, skip = 1;
    bool escape = false;

    if (p[i] >= 0x7f) {
      /* jansson writes UTF-8 only; anything else is copied as it is. */
      k = sr_utf8_seq(p + i, n - i, &skip);
      escape = k > 0 && sr_name_misleads(text + i, k);
      if (k == 0)
        k = skip;
    }
    if (escape) {
      if (out)
        snprintf(out + o, 7, "\\u%04" PRIx32, sr_utf8_code_point(p + i, k));
      o += 6;
    } else {
      if (out)
        memcpy(out + o, text + i, k);
      o += k;
    }
    i += k;
  }
  return o;
}

char *sr_json_dump(const json_t *j, size_t flags, size_t extra, size_t *len) {
  size_t cap = SR_JSON_DUMP_GUESS, n;
  char *buf, *grown;

  if (extra > SIZE_MAX - cap - 1)
    return NULL;
  buf = malloc(cap + extra + 1);
  if (!buf)
    return NULL;
  n = json_dumpb(j, buf, cap, flags);
  if (n > cap) {
    grown = n <= SIZE_MAX - extra - 1 ? realloc(buf, n + extra + 1) : NULL;
    if (!grown) {
      free(buf);
      return NULL;
    }
    buf = grown;
    if (json_dumpb(j, buf, n, flags) != n)
      n = 0;
  }
  if (n == 0) {
    free(buf);
    return NULL;
  }
  /* Pure ASCII, as nearly every line is: nothing to escape. */
  for (size_t i = 0; i < n; i++) {
    size_t m;

    if ((unsigned char)buf[i] < 0x7f)
      continue;
    m = escape_misleading(buf, n, NULL);
    if (m != n) {
      grown = m <= SIZE_MAX - extra - 1 ? malloc(m + extra + 1) : NULL;
      if (!grown) {
        free(buf);
        return NULL;
      }
      escape_misleading(buf, n, grown);
      free(buf);
      buf = grown;
      n = m;
    }
    break;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

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

json_t *sr_json_text(const char *s) {
  return s ? sr_json_string_lossy(s, strlen(s)) : json_null();
}

/* The line for `event` with the current seq/prev; -EINVAL for a bad event
 * name, non-object fields or a field named like a common key. */
static int format_line(const struct sr_audit *a, const char *event,
                       const json_t *fields, const char *ts, char **out,
                       char bad_key[64]) {
  _cleanup_json_ json_t *obj = NULL;
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
      json_object_set_new(obj, "execution_id", sr_json_text(a->execution_id)) <
          0 ||
      json_object_set_new(obj, "tenant_id", sr_json_text(a->tenant_id)) < 0 ||
      json_object_set_new(obj, "skill", sr_json_text(a->skill)) < 0 ||
      json_object_set_new(obj, "version", sr_json_text(a->version)) < 0 ||
      json_object_set_new(obj, "prev", json_string(a->prev)) < 0)
    return -ENOMEM;

  if (fields) {
    /* jansson's iteration wants a non-const object but only reads it; the
     * values are shared with `obj` (a reference each, dropped with it), not
     * copied: a deep copy of policy_resolved's fields cost 0.1 ms a run. */
    json_t *f = (json_t *)fields;

    json_object_foreach(f, key, value) {
      if (is_common_key(key)) {
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
  text = sr_json_dump(obj, JSON_COMPACT | JSON_PRESERVE_ORDER, 1, &n);
  if (!text)
    return -ENOMEM;
  if (memchr(text, '\n', n) || strlen(text) != n)
    return -EINVAL; /* cannot happen with JSON_COMPACT; never trust it */
  line = TAKE_PTR(text);
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
  if (!own_fd) {
    int t = sr_tty_reopen_nonblock(fd);

    if (t >= 0) {
      fd = t;
      own_fd = true;
    }
  }
  *a = (struct sr_audit){
      .fd = fd,
      .own_fd = own_fd,
      .copy_fd = -1,
      .echo_fd = -1,
      .seq = 0,
      .execution_id = eid,
      .tenant_id = tid,
      .stall_ms = SR_AUDIT_STALL_MS,
      .echo_stall_ms = SR_AUDIT_STALL_MS,
  };
  memcpy(a->prev, SR_AUDIT_ZERO_HASH, sizeof(a->prev));
  return 0;
}

void sr_audit_echo_warnings(struct sr_audit *a, int fd) {
  int t = fd >= 0 ? sr_tty_reopen_nonblock(fd) : -1;

  if (a->echo_own_fd)
    safe_close(a->echo_fd);
  a->echo_fd = t >= 0 ? t : fd;
  a->echo_own_fd = t >= 0;
  a->echo_type = 0;
}

/* A warning event as one line for a person (sr_audit_echo_warnings). */
static void echo_warning(struct sr_audit *a, const json_t *fields) {
  const char *msg = json_string_value(json_object_get(fields, "message"));
  const char *path = json_string_value(json_object_get(fields, "path"));
  const char *why = json_string_value(json_object_get(fields, "reason"));
  char line[2048];
  int n;

  n = snprintf(line, sizeof(line) - 1, "skillrun: warning: %s%s%s%s%s%s",
               msg ? msg : "(no message)", path ? ": " : "", path ? path : "",
               why ? " (" : "", why ? why : "", why ? ")" : "");
  if (n < 0)
    return;
  sr_error_for_terminal(line);
  n = (int)strlen(line);
  line[n++] = '\n';
  /* Best effort: the record is the audit line, already written.  A
   * reader that stalls gets no more (a blocking write there held the
   * supervisor, its wall clock and sampler too). */
  if (sr_write_bounded_cancellable(a->echo_fd, &a->echo_type, line, (size_t)n,
                                   &a->echo_stall_ms) < 0)
    sr_audit_echo_warnings(a, -1);
}

/* What the copy keeps free for the final events: their own room, their
 * two lines' common keys (the skill's name and version escaped), and the
 * caller's (sr_audit_keep_room). */
static uint64_t keep_room(const struct sr_audit *a) {
  const uint64_t keys =
      (a->skill ? strlen(a->skill) : 0) + (a->version ? strlen(a->version) : 0);

  return SR_AUDIT_FINAL_RESERVE + 2 * 6 * keys + a->keep_extra;
}

/*
 * What to reserve when the copy needs need bytes more: whole
 * SR_AUDIT_RESERVE_STEPs keep the calls few, but their slack past the need
 * takes no more than a SR_AUDIT_SLACK_SHARE-th of the room the file system
 * has left, nor any of what the need itself leaves.  A whole step taken
 * whenever it fitted held the last 64 KiB of a nearly full file system
 * that the run's logs, outputs and records needed, where less room, too
 * little for a step, left them what they needed: a run failed with more
 * room where it succeeded with less.  And a step that does not fit is not
 * asked for: ext4 keeps what a failed fallocate(2) allocated, and the
 * whole rest of the file system went with it.  Where the room is not
 * known (a memfd's tmpfs has no size), whole steps.
 */
static uint64_t reserve_ask(int fd, uint64_t need) {
  uint64_t more = SR_AUDIT_RESERVE_STEP, room, slack;

  while (more < need)
    more += SR_AUDIT_RESERVE_STEP;
  room = sr_fd_room(fd);
  if (room == UINT64_MAX)
    return more;
  if (need >= room)
    return need;
  slack = more - need;
  if (slack > room / SR_AUDIT_SLACK_SHARE)
    slack = room / SR_AUDIT_SLACK_SHARE;
  if (slack > room - need)
    slack = room - need;
  return need + slack;
}

/* Reservation up to end bytes of the copy (0, -ENOSPC, or -EFBIG past the
 * file-size limit). */
static int reserve_to(struct sr_audit *a, uint64_t end) {
  uint64_t need, more;
  int r;

  if (end <= a->copy_reserved)
    return 0;
  need = end - a->copy_reserved;
  more = reserve_ask(a->copy_fd, need);
  /* A nearly full file system may still hold what is needed. */
  r = sr_fd_reserve(a->copy_fd, a->copy_reserved, more);
  if (r < 0 && more > need) {
    more = need;
    r = sr_fd_reserve(a->copy_fd, a->copy_reserved, more);
  }
  if (r < 0)
    return r == -EFBIG ? r : -ENOSPC;
  a->copy_reserved += more;
  return 0;
}

int sr_audit_set_skill(struct sr_audit *a, const char *skill,
                       const char *version) {
  char *s = NULL, *v = NULL, *old_s, *old_v;

  if (!a)
    return -EINVAL;
  if ((skill && !(s = strdup(skill))) || (version && !(v = strdup(version)))) {
    free(s);
    return -ENOMEM;
  }
  old_s = a->skill;
  old_v = a->version;
  a->skill = s;
  a->version = v;
  /* Both final lines carry them: the copy keeps room for them from now
   * on (keep_room), or they are not set, and the final events still fit
   * the room kept for them so far. */
  if (a->copy_fd >= 0 && !a->copy_failed && a->copy_reserved && !a->closing &&
      reserve_to(a, a->copy_len + keep_room(a)) < 0) {
    a->skill = old_s;
    a->version = old_v;
    free(s);
    free(v);
    return -ENOSPC;
  }
  free(old_s);
  free(old_v);
  return 0;
}

int sr_audit_keep_room(struct sr_audit *a, uint64_t extra) {
  const uint64_t before = a->keep_extra;
  int r;

  if (extra <= before)
    return 0;
  a->keep_extra = extra;
  /* Without a reservation (none yet, or a file system that has none)
   * there is nothing to grow: the copy takes what the disk gives. */
  if (a->copy_fd < 0 || a->copy_failed || !a->copy_reserved || a->closing)
    return 0;
  r = reserve_to(a, a->copy_len + keep_room(a));
  if (r < 0) {
    a->keep_extra = before;
    return r;
  }
  return 0;
}

int sr_audit_attach_copy(struct sr_audit *a, int copy_fd,
                         struct sr_error *err) {
  uint64_t need, reserve;
  int r;

  if (!a || copy_fd < 0 || a->copy_fd >= 0)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "audit_write",
                        "audit: cannot attach the audit copy");
  need = a->backlog_len + keep_room(a);
  reserve = reserve_ask(copy_fd, need);
  /* Where the file system cannot reserve, a full one may cut the copy
   * short like any other file.  One that can but is too full for even
   * the final events' room stops the run before it starts: the copy is
   * never written without that room where it could have had it. */
  r = sr_fd_reserve(copy_fd, 0, reserve);
  if ((r == -ENOSPC || r == -EDQUOT || r == -EFBIG) && reserve > need) {
    reserve = need;
    r = sr_fd_reserve(copy_fd, 0, reserve);
  }
  if (r == -ENOSPC || r == -EDQUOT || r == -EFBIG) {
    (void)sr_fd_unreserve(copy_fd, 0, reserve);
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: no room left in the run's audit.jsonl for "
                        "its final events (%s)",
                        r == -EFBIG ? "the file-size limit, ulimit -f"
                                    : "its file system is full");
  }
  a->copy_reserved = r >= 0 ? reserve : 0;
  if (a->backlog_len > 0) {
    r = sr_write_all(copy_fd, a->backlog, a->backlog_len);
    if (r < 0) {
      if (a->copy_reserved)
        (void)sr_fd_unreserve(copy_fd, 0, a->copy_reserved);
      a->copy_reserved = 0;
      return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                          "audit: cannot write the run's audit copy");
    }
  }
  a->copy_len = a->backlog_len;
  free(a->backlog);
  a->backlog = NULL;
  a->backlog_len = 0;
  a->copy_fd = copy_fd;
  return 0;
}

bool sr_audit_drop_empty_copy(struct sr_audit *a) {
  if (!a || a->copy_fd < 0 || a->copy_len > 0)
    return false;
  if (a->copy_reserved)
    (void)sr_fd_unreserve(a->copy_fd, 0, a->copy_reserved);
  a->copy_reserved = 0;
  a->copy_fd = safe_close(a->copy_fd);
  a->copy_failed = true; /* no backlog for a copy that never comes */
  return true;
}

void sr_audit_closing(struct sr_audit *a) {
  if (a)
    a->closing = true;
}

void sr_audit_release_room(struct sr_audit *a) {
  if (!a || a->copy_fd < 0 || a->copy_reserved <= a->copy_len)
    return;
  (void)sr_fd_unreserve(a->copy_fd, a->copy_len,
                        a->copy_reserved - a->copy_len);
  a->copy_reserved = 0; /* later lines, if any, as to any file */
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

/* Room in the run's copy for a line of n bytes: an ordinary event that
 * would eat into the room kept for the final ones, when the file system
 * gives no more, is refused (-ENOSPC).  The caller then writes it to
 * neither sink, so that both keep one chain and the final events, which
 * may use that room, still reach the copy (a full file system takes them). */
static int copy_room(struct sr_audit *a, size_t n) {
  if (a->copy_fd < 0 || a->copy_failed || !a->copy_reserved)
    return 0;
  /* A final event takes what is reserved, and more where the disk gives
   * it; an ordinary one leaves keep_room free. */
  if (a->closing) {
    (void)reserve_to(a, a->copy_len + n);
    return 0;
  }
  return reserve_to(a, a->copy_len + n + keep_room(a));
}

static int copy_write(struct sr_audit *a, const char *line, size_t n) {
  int r = sr_write_all(a->copy_fd, line, n);

  if (r >= 0) {
    a->copy_len += n;
    return r;
  }
  /* Never a torn line: the copy ends with its last whole one (the room
   * reserved past it goes with the truncation, and the copy is written
   * no more; should the truncation fail, nothing is punched later over
   * what the write left). */
  (void)!ftruncate(a->copy_fd, (off_t)a->copy_len); /* the write's error */
  a->copy_reserved = 0;
  return r;
}

/* Writes a formatted line to every sink that still works, the run's copy
 * first, and chains the next one to it when one of them took it. */
static int write_line(struct sr_audit *a, const char *name, const char *line,
                      struct sr_error *err) {
  /* False positive: line is set whenever format_checked() returned 0; its
   * error paths return sr_error_set(), always < 0 (error.c), which the
   * analyzer cannot see from this file.
   * NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker) */
  size_t n = strlen(line);
  bool taken = false, stream_cancelled = false;
  char next_prev[sizeof(a->prev)];
  int r, failed = 0;

  if (n - 1 > SR_AUDIT_MAX_LINE)
    return sr_error_set(err, SR_EXIT_FAILED, EFBIG, "audit_write",
                        "audit: event '%s' not written: its line would be "
                        "longer than the %u MiB --verify-audit reads of one",
                        name, SR_AUDIT_MAX_LINE >> 20);
  if (!a->closing && a->record_len + n > SR_AUDIT_MAX_ORDINARY)
    return sr_error_set(err, SR_EXIT_FAILED, EFBIG, "audit_write",
                        "audit: the run's record has reached its %u MiB: "
                        "event '%s' not written",
                        SR_AUDIT_MAX_ORDINARY >> 20, name);
  /* The next line's prev, before this one goes anywhere: a line on the
   * record that could not be chained (EVP allocates: out of memory) would
   * have the next repeat its seq and prev, and a caller that tries again
   * when nothing was written (emit_completed) write it twice. */
  r = sr_sha256_hex(line, n, next_prev);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: cannot hash event '%s'", name);
  r = copy_room(a, n);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                        "audit: no room left in the run's audit.jsonl for "
                        "event '%s' (%s)",
                        name,
                        r == -EFBIG ? "the file-size limit, ulimit -f"
                                    : "its file system is full");
  if (!a->copy_failed) {
    r = a->copy_fd >= 0 ? copy_write(a, line, n) : backlog_append(a, line, n);
    if (r < 0) {
      a->copy_failed = true;
      failed = sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                            "audit: cannot write event '%s' to the run's "
                            "audit.jsonl",
                            name);
    } else {
      taken = true;
    }
  }
  if (!a->fd_failed) {
    /* The final events of a run that is not cancelled (sr_audit_closing)
     * wait out the stall's budget: a signal now would cancel nothing, and
     * giving the stream up for it would cut its terminal record, the
     * run's outcome already decided. */
    r = a->closing && !a->cancelling
            ? sr_write_bounded(a->fd, &a->fd_type, line, n, &a->stall_ms)
            : sr_write_bounded_cancellable(a->fd, &a->fd_type, line, n,
                                           &a->stall_ms);
    if (r < 0) {
      a->fd_failed = true;
      /* The caller cancels the run while the stream's reader takes
       * nothing (an orchestrator shutting down stops reading, then sends
       * SIGTERM): the stream is given up, its last line perhaps cut, and
       * the record goes on in the run's audit.jsonl.  A signal that came
       * during the stall is still pending and ends the run as cancelled,
       * not after the rest of the stall's budget; one already taken
       * (a->cancelling) keeps the run cancelled, whatever became of the
       * stream (a reader that stalls or has gone).  Not an error of the
       * run's: the caller asked for its end. */
      if ((r == -ECANCELED || a->cancelling) && taken)
        stream_cancelled = true;
      else if (r == -ETIMEDOUT)
        r = sr_error_set(err, SR_EXIT_FAILED, 0, "audit_write",
                         "audit: the audit stream's reader left event '%s' "
                         "untaken for %u s",
                         name, SR_AUDIT_STALL_MS / 1000);
      else
        r = sr_error_set(err, SR_EXIT_FAILED, -r, "audit_write",
                         "audit: cannot write event '%s' to the audit stream",
                         name);
      if (!failed && !stream_cancelled)
        failed = r;
    } else {
      taken = true;
    }
  }
  if (!taken)
    return failed < 0 ? failed
                      : sr_error_set(err, SR_EXIT_FAILED, EIO, "audit_write",
                                     "audit: cannot write event '%s'", name);
  /* The line is on the record: chain the next one to it. */
  a->record_len += n;
  memcpy(a->prev, next_prev, sizeof(a->prev));
  a->seq++;
  return failed;
}

bool sr_audit_reader_gone(struct sr_audit *a, short revents) {
  if (a->fd_failed || !(revents & (POLLERR | POLLHUP | POLLNVAL)))
    return false;
  a->fd_failed = true;
  return true;
}

int sr_audit_stream_lost(const struct sr_audit *a, struct sr_error *err) {
  if (a->cancelling)
    return 0;
  return sr_error_set(err, SR_EXIT_FAILED, EPIPE, "audit_write",
                      "audit: the audit stream's reader is gone: the run "
                      "cannot go on writing to the audit stream");
}

int sr_audit_emit(struct sr_audit *a, const char *event, json_t *fields,
                  struct sr_error *err) {
  return sr_audit_emit_within(a, event, fields, UINT64_MAX, err);
}

int sr_audit_emit_within(struct sr_audit *a, const char *event, json_t *fields,
                         uint64_t end, struct sr_error *err) {
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
  if (end != UINT64_MAX && a->record_len + strlen(line) > end)
    return SR_AUDIT_PAST_END;
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
  sr_audit_echo_warnings(a, -1);
  /* The room no line took goes back to the file system. */
  if (a->copy_fd >= 0 && a->copy_reserved > a->copy_len)
    (void)sr_fd_unreserve(a->copy_fd, a->copy_len,
                          a->copy_reserved - a->copy_len);
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

/* A ledger that breaks (--verify-audit's "tampered", exit 1): -EBADMSG. */
#define BAD(...)                                                               \
  (sr_error_set(err, 1, 0, "audit_invalid", "%s:%" PRIu64 ": " __VA_ARGS__),   \
   -EBADMSG)
/* A ledger that stops short ("incomplete", exit 2): -ENODATA. */
#define SHORT(...)                                                             \
  (sr_error_set(err, 2, 0, "audit_incomplete",                                 \
                "%s:%" PRIu64 ": " __VA_ARGS__),                               \
   -ENODATA)

/* Checks one line (without its '\n'); expected_prev and first_eid chain. */
static int verify_line(const char *name, uint64_t lineno, const char *line,
                       size_t len, const char *expected_prev,
                       json_t **first_eid, bool *completed,
                       struct sr_error *err) {
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
  *completed = jstr_eq(v, "execution_completed", strlen("execution_completed"));

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

/* What verify_buffer found: the chain of the complete lines. */
struct chain {
  char head[65];    /* SHA-256 of the last complete line */
  uint64_t lines;   /* complete lines */
  const char *last; /* the last complete line (without '\n'), or NULL */
  size_t last_len;
  bool completed; /* it is execution_completed */
};

/* Verifies a whole buffer: 0, -EBADMSG (broken) or -ENODATA (cut short);
 * c describes the complete lines that verify either way. */
static int verify_buffer(const char *buf, size_t len, const char *name,
                         struct chain *c, struct sr_error *err) {
  _cleanup_json_ json_t *first_eid = NULL;
  size_t pos = 0;
  int r;

  memset(c, 0, sizeof(*c));
  memcpy(c->head, SR_AUDIT_ZERO_HASH, sizeof(c->head));
  if (len == 0)
    return SHORT("no events (empty file)", name, (uint64_t)1);

  while (pos < len) {
    const char *line = buf + pos;
    const char *nl = memchr(line, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - line) : len - pos;
    uint64_t lineno = c->lines + 1;
    bool completed = false;

    if (n > SR_AUDIT_MAX_LINE)
      return BAD("line longer than %u bytes", name, lineno, SR_AUDIT_MAX_LINE);
    /* Before the cut-off check: nothing is written after the final event,
     * so even part of a line there was added, not cut short. */
    if (c->completed)
      return BAD("an event after execution_completed", name, lineno);
    /* Checked before parsing: sr_audit_emit writes a line and its '\n' in
     * one write, so a last line without one was cut off (a writer that
     * died in the middle, a full disk, a copy cut short). */
    if (!nl)
      return SHORT("the last line is cut off (no newline at the end)", name,
                   lineno);
    r = verify_line(name, lineno, line, n, c->head, &first_eid, &completed,
                    err);
    if (r < 0)
      return r;
    r = sr_sha256_hex(line, n + 1, c->head);
    if (r < 0)
      return sr_error_set(err, 1, -r, "audit_read", "%s:%" PRIu64 ": hash",
                          name, lineno);
    c->last = line;
    c->last_len = n;
    c->completed = completed;
    c->lines = lineno;
    pos += n + 1;
  }
  return 0;
}

static int read_audit(int fd, const char *name, char **buf, size_t *len,
                      struct sr_error *err) {
  int r = sr_read_fd(fd, SR_AUDIT_MAX_FILE, buf, len);
  if (r == -EFBIG)
    return BAD("file larger than %u MiB", name, (uint64_t)1,
               SR_AUDIT_MAX_FILE / 1024 / 1024);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_read",
                        "%s: cannot read", name);
  return 0;
}

int sr_audit_verify_fd(int fd, const char *display_name, char head_hex[65],
                       uint64_t *n_lines, struct sr_error *err) {
  _cleanup_free_ char *buf = NULL;
  const char *name = display_name ? display_name : "audit";
  struct chain c;
  size_t len = 0;
  int r;

  r = read_audit(fd, name, &buf, &len, err);
  if (r < 0)
    return r;
  r = verify_buffer(buf, len, name, &c, err);
  if (r < 0)
    return r;
  if (head_hex)
    memcpy(head_hex, c.head, 65);
  if (n_lines)
    *n_lines = c.lines;
  return 0;
}

/* The anchor of the last line (execution_completed), by key. */
static int check_anchor(const struct chain *c, const char *name,
                        const struct sr_trust_key *key, struct sr_error *err) {
  _cleanup_free_ char *plain = NULL;
  _cleanup_json_ json_t *obj = NULL;
  const uint64_t lineno = c->lines;
  const char *p, *id, *b64, *last = c->last;
  const size_t last_len = c->last_len;
  unsigned char sig[SR_SIG_BYTES];
  char msg[sizeof(ANCHOR_DOMAIN) + 65], key_id[SR_KEY_ID_LEN + 1];
  size_t got = 0, tail, cut;
  int r;

  obj = json_loadb(last, last_len, JSON_REJECT_DUPLICATES, NULL);
  if (!obj || !json_object_get(obj, "anchor"))
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
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "audit_read", "%s", name);
  memcpy(plain, last, cut);
  memcpy(plain + cut, "}\n", 3);
  r = anchor_message(plain, cut + 2, msg);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit_read", "%s: hash",
                        name);
  if (sr_trust_verify(key, msg, strlen(msg), sig) < 0)
    return BAD("anchor signature does not verify: the ledger was edited, "
               "reordered or rewritten",
               name, lineno);
  return 0;
}

/* The ids the last line names (every line names the same, verify_line),
 * when they are ids, and the status and exit status it ends the run with,
 * when they are ones skillrun writes: a ledger's text is anyone's who
 * could write it. */
static void ids_of(const char *line, size_t len, struct sr_audit_check *out) {
  _cleanup_json_ json_t *obj = json_loadb(line, len, 0, NULL);
  const char *t = json_string_value(json_object_get(obj, "tenant_id"));
  const char *e = json_string_value(json_object_get(obj, "execution_id"));
  const char *st = json_string_value(json_object_get(obj, "status"));
  const json_t *x = json_object_get(obj, "exit_code");

  if (t && sr_valid_id(t))
    snprintf(out->tenant_id, sizeof(out->tenant_id), "%s", t);
  if (e && sr_valid_id(e))
    snprintf(out->execution_id, sizeof(out->execution_id), "%s", e);
  for (int i = 0; st && i < SR__STATUS_MAX; i++)
    if (!strcmp(st, sr_status_name((enum sr_status)i)))
      snprintf(out->status, sizeof(out->status), "%s", st);
  out->exit_code = -1;
  if (json_is_integer(x) && json_integer_value(x) >= 0 &&
      json_integer_value(x) <= 255)
    out->exit_code = (int)json_integer_value(x);
}

int sr_audit_check_fd(int fd, const char *display_name,
                      const struct sr_trust_key *key,
                      struct sr_audit_check *out, struct sr_error *err) {
  _cleanup_free_ char *buf = NULL;
  const char *name = display_name ? display_name : "audit";
  struct chain c;
  size_t len = 0;
  int r;

  memset(out, 0, sizeof(*out));
  r = read_audit(fd, name, &buf, &len, err);
  if (r == -EBADMSG) {
    out->verdict = SR_AUDIT_TAMPERED;
    return 0;
  }
  if (r < 0)
    return r;
  r = verify_buffer(buf, len, name, &c, err);
  memcpy(out->head, c.head, sizeof(out->head));
  out->lines = c.lines;
  if (r == -EBADMSG || r == -ENODATA) {
    out->verdict = r == -EBADMSG ? SR_AUDIT_TAMPERED : SR_AUDIT_INCOMPLETE;
    return 0;
  }
  if (r < 0)
    return r;
  if (!c.completed) {
    (void)SHORT("the last event is not execution_completed: the run is "
                "still going, its supervisor died and skillrun --gc has not "
                "closed it yet, or the ledger was cut at a line boundary",
                name, c.lines);
    out->verdict = SR_AUDIT_INCOMPLETE;
    return 0;
  }
  if (key) {
    r = check_anchor(&c, name, key, err);
    if (r == -EBADMSG) {
      out->verdict = SR_AUDIT_TAMPERED;
      return 0;
    }
    if (r < 0)
      return r;
    out->anchored = true;
  }
  ids_of(c.last, c.last_len, out);
  out->verdict = SR_AUDIT_OK;
  return 0;
}

/* Whether what follows the last '\n' of a dead run's ledger (tail, n
 * bytes) is its final line whole but for its newline, and at most the
 * zeros of a tail whose data a crash lost (a file system that wrote the
 * size, not the bytes): an execution_completed that chains on.  Its
 * length without the zeros, or 0. */
static size_t whole_final_line(const struct sr_audit *a, const char *tail,
                               size_t n) {
  _cleanup_json_ json_t *eid = NULL;
  struct sr_error err = {0};
  bool completed = false;

  while (n > 0 && tail[n - 1] == '\0')
    n--;
  if (n == 0 || n > SR_AUDIT_MAX_LINE || memchr(tail, '\0', n))
    return 0;
  eid = a->execution_id ? json_string(a->execution_id) : json_null();
  if (!eid || verify_line("audit.jsonl", a->seq + 1, tail, n, a->prev, &eid,
                          &completed, &err) < 0)
    return 0;
  return completed ? n : 0;
}

int sr_audit_resume(struct sr_audit *a, int fd, const char *execution_id,
                    const char *tenant_id, const char *buf, size_t len,
                    size_t *complete_len, size_t *final_len, bool *closed) {
  _cleanup_json_ json_t *last = NULL;
  const char *end = len ? memrchr(buf, '\n', len) : NULL;
  const char *start;
  uint64_t lines = 0;
  int r;

  r = sr_audit_init(a, fd, false, execution_id, tenant_id);
  if (r < 0)
    return r;
  *complete_len = end ? (size_t)(end - buf) + 1 : 0;
  *final_len = 0;
  *closed = false;
  if (end) {
    for (const char *p = buf; p <= end; p++)
      if (*p == '\n')
        lines++;
    start = end > buf ? memrchr(buf, '\n', (size_t)(end - buf)) : NULL;
    start = start ? start + 1 : buf;
    r = sr_sha256_hex(start, (size_t)(end - start) + 1, a->prev);
    if (r < 0) {
      sr_audit_done(a);
      return r;
    }
    a->seq = lines;
    /* The last line names the skill, as the next one must; a line that is
     * not JSON leaves them null (verification shows the break anyway). */
    last = json_loadb(start, (size_t)(end - start), 0, NULL);
    if (json_is_object(last)) {
      const json_t *skill = json_object_get(last, "skill");
      const json_t *version = json_object_get(last, "version");
      r = sr_audit_set_skill(a, json_string_value(skill),
                             json_string_value(version));
      if (r < 0) {
        sr_audit_done(a);
        return r;
      }
      *closed = jstr_eq(json_object_get(last, "event"), "execution_completed",
                        strlen("execution_completed"));
    }
  }
  /* The run's own final line, cut off only at its newline: the run ended
   * (its metadata.json and its line in the runs index may say so), and
   * that line is on the record once its newline is back. */
  if (!*closed && *complete_len < len) {
    *final_len = whole_final_line(a, buf + *complete_len, len - *complete_len);
    *closed = *final_len > 0;
  }
  return 0;
}
