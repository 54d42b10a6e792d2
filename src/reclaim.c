/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Closing the record of a run whose supervisor died (skillrun(1), --gc):
 * its ledger's chain continued with execution_completed "abandoned", and
 * its metadata.json, both from what the ledger itself holds.  Called by
 * sr_workspace_gc, from --gc and from the start of every run.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "error.h"
#include "fdutil.h"
#include "metafile.h"
#include "metrics.h"
#include "reclaim.h"
#include "trust.h"
#include "util.h"

/* The room a dead run reserved past its ledger's end (at most what
 * sr_audit reserves ahead) is given back in one punch this long. */
#define RESERVE_PUNCH (64ull << 20)

/* What gc reads of a metadata.json to tell whether it is whole: well past
 * the artifact list's bound (SR_ARTIFACT_LIST_MAX) and a record's inputs
 * and labels. */
#define METADATA_READ_MAX (16u << 20)

static json_t *get_path(json_t *o, const char *a, const char *b) {
  return json_object_get(json_object_get(o, a), b);
}

/* json_object_set_new for a value that may be NULL (out of memory): the
 * key gets null, and the schema check catches it. */
static void set(json_t *o, const char *key, json_t *v) {
  json_object_set_new(o, key, v ? v : json_null());
}

static json_t *copy_or_null(json_t *v) {
  return v ? json_deep_copy(v) : json_null();
}

/* What the ledger's complete lines say: the run's metadata.json, with
 * what it does not say as null (skillrun(1) METADATA). */
static json_t *metadata_from_ledger(const char *buf, size_t len,
                                    const char *tenant, const char *execution) {
  json_t *skill_name = NULL, *skill_version = NULL, *started = NULL;
  json_t *labels = NULL, *first_ts = NULL;
  json_t *verified = NULL, *policy = NULL, *completed = NULL;
  json_t *inputs = json_array(), *meta, *limits = NULL, *res;
  const char *end = buf + len;
  json_t *list = json_array();
  json_int_t files = 0, bytes = 0;
  size_t list_bytes = 0;
  bool truncated = false;

  for (const char *p = buf; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    json_t *o = json_loadb(p, n, 0, NULL);
    const char *ev = json_string_value(json_object_get(o, "event"));

    p += n + 1;
    if (!ev) {
      json_decref(o);
      continue;
    }
    if (!first_ts && json_is_string(json_object_get(o, "ts")))
      first_ts = json_incref(json_object_get(o, "ts"));
    if (json_is_string(json_object_get(o, "skill"))) {
      json_decref(skill_name);
      json_decref(skill_version);
      skill_name = json_incref(json_object_get(o, "skill"));
      skill_version = json_incref(json_object_get(o, "version"));
    }
    if (!strcmp(ev, "execution_started") && !started) {
      started = json_incref(json_object_get(o, "ts"));
      labels = json_incref(json_object_get(o, "labels"));
    } else if (!strcmp(ev, "bundle_verified") && !verified)
      verified = json_incref(o);
    else if (!strcmp(ev, "policy_resolved") && !policy)
      policy = json_incref(get_path(o, "policy", "limits") ? o : NULL);
    else if (!strcmp(ev, "input_staged") && inputs)
      json_array_append_new(inputs,
                            json_pack("{s:O?, s:O?, s:O?}", "name",
                                      json_object_get(o, "name"), "size",
                                      json_object_get(o, "size"), "sha256",
                                      json_object_get(o, "sha256")));
    else if (!strcmp(ev, "artifact_committed")) {
      json_t *path = json_object_get(o, "path");
      /* The entry as the event has it: an escaped path keeps its raw
       * bytes, which alone tell it from a plain name shown the same. */
      json_t *a = json_pack("{s:O, s:O*, s:O, s:O, s:O}", "path", path,
                            "path_base64", json_object_get(o, "path_base64"),
                            "size", json_object_get(o, "size"), "sha256",
                            json_object_get(o, "sha256"), "mode",
                            json_object_get(o, "mode"));
      files++;
      bytes += json_integer_value(json_object_get(o, "size"));
      /* The list's bound, as the harvest's, on the shown path, at least
       * as long as its bytes. */
      list_bytes += SR_ARTIFACT_ENTRY_MAX(json_string_length(path));
      if (!a || list_bytes > SR_ARTIFACT_LIST_MAX)
        truncated = true;
      if (a && !truncated && list)
        json_array_append_new(list, a);
      else
        json_decref(a);
    } else if (!strcmp(ev, "execution_completed")) {
      json_decref(completed);
      completed = json_incref(o);
    }
    json_decref(o);
  }

  /* A run killed before execution_started began no later than its
   * first record: started_at is a timestamp in every metadata.json
   * (schema/metadata.schema.json). */
  if (!started)
    started = json_incref(first_ts);
  json_decref(first_ts);
  if (policy) {
    const char *key;
    json_t *v;
    limits = json_object();
    json_object_foreach(
        json_object_get(json_object_get(policy, "policy"), "limits"), key, v) {
      if (limits)
        set(limits, key, copy_or_null(json_object_get(v, "value")));
    }
  }
  res = json_object();
  if (res) {
    set(res, "status",
        completed ? copy_or_null(json_object_get(completed, "status"))
                  : json_string("abandoned"));
    set(res, "exit_code",
        completed ? copy_or_null(json_object_get(completed, "exit_code"))
                  : json_null());
    /* The sandbox's time is not in the ledger. */
    set(res, "duration_ms", json_null());
    set(res, "finished_at", copy_or_null(json_object_get(completed, "ts")));
    set(res, "artifacts",
        json_pack("{s:I, s:I, s:o, s:b}", "files", files, "bytes", bytes,
                  "list", list ? list : json_array(), "truncated", truncated));
    list = NULL;
  }
  meta = json_object();
  if (meta) {
    json_t *skill = json_object();
    set(meta, "schema", json_string("skillrun.metadata/1"));
    set(meta, "execution_id", json_string(execution));
    set(meta, "tenant_id", json_string(tenant));
    if (skill) {
      set(skill, "name", copy_or_null(skill_name));
      set(skill, "version", copy_or_null(skill_version));
      set(skill, "digest", copy_or_null(json_object_get(verified, "digest")));
      set(skill, "allowed_tools", json_null()); /* not in the ledger */
    }
    set(meta, "skill", skill);
    set(meta, "limits", limits ? limits : json_null());
    set(meta, "network",
        copy_or_null(
            get_path(json_object_get(policy, "policy"), "network", "mode")));
    set(meta, "inputs", inputs ? inputs : json_array());
    set(meta, "started_at", copy_or_null(started));
    set(meta, "result", res);
    set(meta, "trust",
        verified ? json_pack("{s:O, s:O, s:O}", "tier",
                             json_object_get(verified, "tier"), "key_id",
                             json_object_get(verified, "key_id"), "signed_at",
                             json_object_get(verified, "signed_at"))
                 : json_null());
    /* The --label pairs, as execution_started recorded them. */
    set(meta, "labels",
        json_is_object(labels) ? json_incref(labels) : json_object());
  } else {
    json_decref(inputs);
    json_decref(limits);
    json_decref(res);
  }
  json_decref(list);
  json_decref(skill_name);
  json_decref(skill_version);
  json_decref(started);
  json_decref(labels);
  json_decref(verified);
  json_decref(policy);
  json_decref(completed);
  return meta;
}

/* The event of the last complete line, for execution_completed's
 * last_event: where the run was when its supervisor died. */
static json_t *last_event(const char *buf, size_t complete) {
  const char *start;
  json_t *o, *ev;

  if (complete == 0)
    return json_null();
  start = complete > 1 ? memrchr(buf, '\n', complete - 1) : NULL;
  start = start ? start + 1 : buf;
  o = json_loadb(start, (size_t)(buf + complete - 1 - start), 0, NULL);
  ev = json_incref(json_object_get(o, "event"));
  json_decref(o);
  return ev && json_is_string(ev) ? ev : (json_decref(ev), json_null());
}

/* Whether the run directory's metadata.json is one a run or gc wrote
 * whole: a regular file holding a JSON object with its result.  A crash
 * or power cut after its rename can leave it empty, zero-filled or cut
 * short (nothing fsyncs it), and gc then writes it again from the ledger.
 * One too large to judge is kept; a FIFO planted under its name is not
 * waited for. */
static bool metadata_whole(int run_fd) {
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *buf = NULL;
  struct stat st;
  size_t len = 0;
  json_t *meta;
  bool whole;
  int r;

  fd = openat(run_fd, "metadata.json",
              O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return errno != ENOENT && errno != ELOOP;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
    return false;
  r = sr_read_fd(fd, METADATA_READ_MAX, &buf, &len);
  if (r < 0)
    return r == -EFBIG || r == -ENOMEM;
  meta = json_loadb(buf, len, 0, NULL);
  whole =
      json_is_object(meta) && json_is_object(json_object_get(meta, "result"));
  json_decref(meta);
  return whole;
}

/* The ledger's bytes from `keep` on read back into *buf (whose first keep
 * bytes are still the ledger's), after this gc wrote there: the buffer is
 * then the ledger as it is now, for its metadata.json and index line. */
static int read_back(int ledger, size_t keep, char **buf, size_t *len) {
  _cleanup_free_ char *tail = NULL;
  size_t tail_len = 0;
  char *grown;
  int r;

  if (lseek(ledger, (off_t)keep, SEEK_SET) < 0)
    return -errno;
  r = sr_read_fd(ledger, SR_AUDIT_MAX_FILE - keep, &tail, &tail_len);
  if (r < 0)
    return r;
  grown = realloc(*buf, keep + tail_len + 1);
  if (!grown)
    return -ENOMEM;
  memcpy(grown + keep, tail, tail_len + 1); /* with its '\0' */
  *buf = grown;
  *len = keep + tail_len;
  return 0;
}

int sr_reclaim_run(int ledger, char **ledger_buf, size_t *ledger_len,
                   int run_fd, const char *tenant, const char *execution,
                   uid_t owner, gid_t group, const struct sr_trust_key *key,
                   bool *appended_out, struct sr_error *err) {
  _cleanup_(sr_audit_done) struct sr_audit a = {.fd = -1, .copy_fd = -1};
  const char *buf = *ledger_buf;
  size_t len = *ledger_len, complete = 0, final_len = 0;
  bool closed = false;
  struct stat st;
  json_t *meta;
  int r, appended = 0;

  if (appended_out)
    *appended_out = false;
  r = sr_audit_resume(&a, ledger, execution, tenant, buf, len, &complete,
                      &final_len, &closed);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "gc", "audit.jsonl");
  /* A line cut off mid-way (a write the kill interrupted) was never on
   * the record: the chain goes on from the last complete one.  The run's
   * own execution_completed, whole but for its newline (a crash cut the
   * file there), stays, with its newline. */
  if (complete + final_len < len &&
      ftruncate(ledger, (off_t)(complete + final_len)) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "gc",
                        "cannot cut the torn last line of audit.jsonl");
  if (final_len > 0) {
    r = sr_write_all(ledger, "\n", 1);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "gc",
                          "cannot end the last line of audit.jsonl");
  }
  if (!closed) {
    json_t *f = json_pack("{s:s, s:n, s:n, s:o, s:I}", "status", "abandoned",
                          "exit_code", "duration_ms", "last_event",
                          last_event(buf, complete), "discarded_bytes",
                          (json_int_t)(len - complete));
    r = sr_audit_emit_anchored(&a, "execution_completed", f, key, err);
    if (r < 0)
      return r;
    appended = 1;
    if (appended_out)
      *appended_out = true;
  }
  /* The room the dead run reserved ahead of its ledger's end. */
  if (fstat(ledger, &st) == 0)
    (void)sr_fd_unreserve(ledger, (uint64_t)st.st_size, RESERVE_PUNCH);
  /* The ledger as it is now, with its last line: what was read of it up
   * to its last whole line, and what this call wrote after that. */
  if (appended || final_len > 0 || complete < len) {
    r = read_back(ledger, complete + final_len, ledger_buf, ledger_len);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "gc",
                          "cannot read audit.jsonl");
  }

  /* A metadata.json stays when the ledger was already closed.  When this
   * call closed it, one written by the run's collect (killed before its
   * final event) says what the ledger does not: it is replaced, so that
   * both say abandoned. */
  if (!appended && metadata_whole(run_fd))
    return appended;
  meta = metadata_from_ledger(*ledger_buf, *ledger_len, tenant, execution);
  if (!meta)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "gc", "metadata");
  r = sr_metafile_replace_at(run_fd, meta, owner, group, err);
  json_decref(meta);
  return r < 0 ? r : appended;
}

/* A figure of execution_completed: -1 when it is not a count. */
static int64_t figure(json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);

  return json_is_integer(v) && json_integer_value(v) >= 0
             ? (int64_t)json_integer_value(v)
             : -1;
}

/* Seconds since the epoch of a record's ts ("YYYY-MM-DDTHH:MM:SS.mmmZ"
 * as sr_now_rfc3339 writes it), or -1. */
static int64_t ts_seconds(json_t *o) {
  const char *ts = json_string_value(json_object_get(o, "ts"));
  char whole[21];
  int64_t t;

  if (!ts || strlen(ts) < 19)
    return -1;
  memcpy(whole, ts, 19);
  whole[19] = 'Z';
  whole[20] = '\0';
  return sr_parse_rfc3339_seconds(whole, 20, &t) < 0 ? -1 : t;
}

/* What the ledger's complete lines say for the run's index line: its last
 * execution_completed (the run's own, or gc's abandoned), and the reason
 * of the failure event just before it. */
static void record_from_ledger(const char *buf, size_t len,
                               struct sr_run_record *rec, int64_t *started_s) {
  const char *end = buf + len;
  json_t *prev = NULL;

  for (const char *p = buf; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    json_t *o;
    const char *ev;

    if (!nl)
      break;
    o = json_loadb(p, (size_t)(nl - p), 0, NULL);
    p = nl + 1;
    ev = json_string_value(json_object_get(o, "event"));
    if (!ev) {
      json_decref(o);
      continue;
    }
    if (*started_s < 0)
      *started_s = ts_seconds(o);
    if (!strcmp(ev, "execution_completed")) {
      const char *st = json_string_value(json_object_get(o, "status"));
      const char *why =
          json_string_value(json_object_get(prev, "event")) &&
                  !strcmp(json_string_value(json_object_get(prev, "event")),
                          "layer_failed")
              ? "layer_failed"
              : json_string_value(json_object_get(prev, "reason"));
      json_t *art = json_object_get(o, "artifacts");
      int64_t t = ts_seconds(o);

      rec->status = SR_STATUS_ABANDONED;
      for (int i = 0; st && i < SR__STATUS_MAX; i++)
        if (!strcmp(st, sr_status_name((enum sr_status)i)))
          rec->status = (enum sr_status)i;
      rec->reason[0] = '\0';
      if (why &&
          (rec->status == SR_STATUS_REFUSED || rec->status == SR_STATUS_ERROR))
        snprintf(rec->reason, sizeof(rec->reason), "%s", why);
      /* A closed run's own figures; abandoned has them null. */
      rec->duration_ms = figure(o, "duration_ms");
      rec->cpu_usec = figure(o, "cpu_usec");
      rec->memory_peak = figure(o, "memory_peak");
      rec->syscalls_denied = figure(o, "syscalls_denied");
      rec->artifacts = json_is_object(art) ? 0 : -1;
      if (t >= 0)
        rec->finished_s = (uint64_t)t;
    }
    json_decref(prev);
    prev = o;
  }
  json_decref(prev);
}

int sr_reclaim_index_line(const char *buf, size_t len, const char *tenant,
                          const char *execution, char *line, size_t size,
                          int64_t *started_s) {
  struct sr_run_record rec = {0};
  json_t *meta, *files, *bytes;
  const char *skill;
  int r;

  *started_s = -1;
  meta = metadata_from_ledger(buf, len, tenant, execution);
  if (!meta)
    return -ENOMEM;
  rec.finished_s = (uint64_t)time(NULL);
  if (sr_valid_id(tenant))
    snprintf(rec.tenant, sizeof(rec.tenant), "%s", tenant);
  if (sr_valid_id(execution))
    snprintf(rec.execution, sizeof(rec.execution), "%s", execution);
  skill = json_string_value(get_path(meta, "skill", "name"));
  /* Whole or not at all (as one the index cannot hold, below): a name
   * cut short would count the run under another skill. */
  if (skill && strlen(skill) < sizeof(rec.skill))
    memcpy(rec.skill, skill, strlen(skill) + 1);
  rec.status = SR_STATUS_ABANDONED;
  rec.duration_ms = rec.cpu_usec = rec.memory_peak = rec.syscalls_denied = -1;
  rec.artifacts = 0;
  record_from_ledger(buf, len, &rec, started_s);
  /* Only the committed artifacts are known of an abandoned run (the rest
   * died with the supervisor); they are all a closed run harvested. */
  files = get_path(json_object_get(meta, "result"), "artifacts", "files");
  bytes = get_path(json_object_get(meta, "result"), "artifacts", "bytes");
  if (rec.artifacts == 0 || rec.status == SR_STATUS_ABANDONED) {
    rec.artifacts = json_is_integer(files) ? json_integer_value(files) : -1;
    rec.artifact_bytes =
        json_is_integer(bytes) ? json_integer_value(bytes) : -1;
  } else {
    rec.artifact_bytes = -1;
  }
  json_decref(meta);
  r = sr_record_format(&rec, line, size);
  if (r == -EINVAL) {
    /* A name or reason the index cannot hold: the run counted without. */
    rec.skill[0] = rec.reason[0] = '\0';
    r = sr_record_format(&rec, line, size);
  }
  return r;
}

/* ------------------------------------------------------------ outputs */

/* Deeper than any directory the harvest makes (HARVEST_MAX_DEPTH, 32):
 * what lies below was not the harvest's. */
#define PRUNE_MAX_DEPTH 40

/* The paths the ledger's artifact_committed events commit, as raw bytes
 * (path_base64 when the event has it, path otherwise), sorted. */
struct committed {
  char **v;
  size_t n, cap;
};

static void committed_done(struct committed *c) {
  for (size_t i = 0; i < c->n; i++)
    free(c->v[i]);
  free(c->v);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The raw path of one event: a string, or NULL (none, or bytes that no
 * file name has: a NUL). */
static char *event_path(json_t *o, int *r) {
  const char *b64 = json_string_value(json_object_get(o, "path_base64"));
  json_t *path = json_object_get(o, "path");
  char *out;

  *r = 0;
  if (b64) {
    size_t n = strlen(b64), got = 0;

    out = malloc(n / 4 * 3 + 4);
    if (!out) {
      *r = -ENOMEM;
      return NULL;
    }
    if (sr_base64_decode(b64, n, false, (unsigned char *)out, n / 4 * 3 + 3,
                         &got) < 0 ||
        memchr(out, '\0', got)) {
      free(out);
      return NULL;
    }
    out[got] = '\0';
    return out;
  }
  if (!json_is_string(path) ||
      strlen(json_string_value(path)) != json_string_length(path))
    return NULL;
  out = strdup(json_string_value(path));
  if (!out)
    *r = -ENOMEM;
  return out;
}

/* The path of an artifact_committed event, added to c (an event without
 * one adds nothing): 0 or -ENOMEM.  c owns it (committed_done). */
SR_ANALYZER_STORED_LEAK_BEGIN
static int committed_add(struct committed *c, json_t *o) {
  char *path;
  int r;

  if (c->n == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    char **v = realloc(c->v, cap * sizeof(*v));

    if (!v)
      return -ENOMEM;
    c->v = v;
    c->cap = cap;
  }
  path = event_path(o, &r);
  if (path)
    c->v[c->n++] = path;
  return r;
}
SR_ANALYZER_STORED_LEAK_END

/* Whether the event of o is `name`. */
static bool event_is(json_t *o, const char *name) {
  const char *ev = json_string_value(json_object_get(o, "event"));

  return ev && !strcmp(ev, name);
}

/* Only complete lines: one the kill cut off was never on the record.
 * *closed: the ledger has its execution_completed (the last line may have
 * lost its newline, as after a crash: sr_reclaim_run keeps it). */
static int committed_from_ledger(const char *buf, size_t len,
                                 struct committed *c, bool *closed) {
  const char *end = buf + len;

  *closed = false;
  for (const char *p = buf; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    json_t *o;
    int r;

    if (!nl) {
      /* Followed by what a crash leaves (zeros): the value alone. */
      o = json_loadb(p, (size_t)(end - p), JSON_DISABLE_EOF_CHECK, NULL);
      if (event_is(o, "execution_completed"))
        *closed = true;
      json_decref(o);
      break;
    }
    o = json_loadb(p, (size_t)(nl - p), 0, NULL);
    p = nl + 1;
    if (!o)
      continue;
    if (event_is(o, "execution_completed"))
      *closed = true;
    if (!event_is(o, "artifact_committed")) {
      json_decref(o);
      continue;
    }
    r = committed_add(c, o);
    json_decref(o);
    if (r < 0)
      return r;
  }
  if (c->n)
    qsort(c->v, c->n, sizeof(*c->v), cmp_str);
  return 0;
}

static bool is_committed(const struct committed *c, const char *rel) {
  return c->n && bsearch(&rel, c->v, c->n, sizeof(*c->v), cmp_str);
}

static int prune_dir(int dir, dev_t dev, uid_t owner, const char *prefix,
                     unsigned depth, const struct committed *c,
                     unsigned *removed);

/* One entry of a directory prune_dir walks: a file of owner's that the
 * record does not commit goes, a directory of owner's is walked.  0 for
 * anything left alone, or -errno. */
static int prune_entry(int dir, const char *name, dev_t dev, uid_t owner,
                       const char *prefix, unsigned depth,
                       const struct committed *c, unsigned *removed) {
  _cleanup_free_ char *rel = NULL;
  _cleanup_close_ int sub = -1;
  struct stat st, dst;

  if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_uid != owner ||
      st.st_dev != dev)
    return 0;
  if (asprintf(&rel, "%s%s", prefix, name) < 0) {
    rel = NULL;
    return -ENOMEM;
  }
  if (S_ISREG(st.st_mode)) {
    if (!is_committed(c, rel) && unlinkat(dir, name, 0) == 0)
      (*removed)++;
    return 0;
  }
  if (!S_ISDIR(st.st_mode) || depth >= PRUNE_MAX_DEPTH)
    return 0;
  sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (sub < 0 || fstat(sub, &dst) < 0 || dst.st_dev != st.st_dev ||
      dst.st_ino != st.st_ino)
    return 0;
  free(rel);
  if (asprintf(&rel, "%s%s/", prefix, name) < 0) {
    rel = NULL;
    return -ENOMEM;
  }
  return prune_dir(sub, dev, owner, rel, depth + 1, c, removed);
}

/* Below dir (outputs/, or a directory in it at depth): every regular file
 * of owner's that the record does not commit goes.  Only the owner's
 * directories on the run directory's file system are entered, never
 * through a symbolic link; anything else is left alone. */
static int prune_dir(int dir, dev_t dev, uid_t owner, const char *prefix,
                     unsigned depth, const struct committed *c,
                     unsigned *removed) {
  _cleanup_free_ struct sr_dir *d = malloc(sizeof(*d));
  const char *name;
  unsigned char type;
  int n = 0, r = 0;

  if (!d)
    return -ENOMEM;
  sr_dir_init(d, dir);
  while (r >= 0 && (n = sr_dir_next(d, &name, &type)) > 0)
    r = prune_entry(dir, name, dev, owner, prefix, depth, c, removed);
  return r < 0 ? r : n < 0 ? n : 0;
}

int sr_reclaim_outputs(const char *buf, size_t len, int run_fd, uid_t owner,
                       unsigned *removed) {
  _cleanup_close_ int out = -1;
  struct committed c = {0};
  struct stat st;
  bool closed = false;
  int r;

  *removed = 0;
  out = openat(run_fd, "outputs",
               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (out < 0)
    return errno == ENOENT ? 0 : -errno;
  if (fstat(out, &st) < 0)
    return -errno;
  if (st.st_uid != owner)
    return 0;
  r = committed_from_ledger(buf, len, &c, &closed);
  /* A closed record's outputs/ is its caller's: the run (or the gc that
   * closed it, which pruned first) harvested all it ever will, and the
   * marker of a run that ended by itself may stay for gc's other work (a
   * metadata.json or a tmpfs staging copy the run could not see to). */
  if (r >= 0 && !closed)
    r = prune_dir(out, st.st_dev, owner, "", 0, &c, removed);
  committed_done(&c);
  return r;
}
