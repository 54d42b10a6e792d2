/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The runs index's lines and the Prometheus text made from them
 * (metrics.h).  Pure: no system calls.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "metrics.h"
#include "util.h"

#define RECORD_VERSION "1"
#define N_FIELDS 12
#define OTHER "_other"

/* ------------------------------------------------------------ lines */

/* A reason: [a-z][a-z0-9_]{0,63}, as the code writes them. */
static bool valid_reason(const char *s) {
  size_t n;

  if (!(s[0] >= 'a' && s[0] <= 'z'))
    return false;
  n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
  return n <= 64 && s[n] == '\0';
}

/* A skill name as the index holds it: UTF-8 text without controls, and
 * without what would need quoting here or in Prometheus' text (space,
 * '"', '\'); a valid manifest name never has any. */
static bool valid_skill(const char *s) {
  size_t n = strlen(s);

  return n > 0 && n <= SR_RECORD_SKILL_MAX && !strpbrk(s, " \"\\") &&
         sr_valid_utf8_text(s, n);
}

static bool valid_status(enum sr_status s) {
  return (unsigned)s < SR__STATUS_MAX;
}

static void put_num(char *buf, size_t len, int64_t v) {
  if (v < 0)
    snprintf(buf, len, "-");
  else
    snprintf(buf, len, "%" PRId64, v);
}

int sr_record_format(const struct sr_run_record *r, char *buf, size_t len) {
  char n[6][24];
  const int64_t v[6] = {r->duration_ms, r->cpu_usec,       r->memory_peak,
                        r->artifacts,   r->artifact_bytes, r->syscalls_denied};
  int w;

  if ((r->tenant[0] && !sr_valid_id(r->tenant)) ||
      (r->skill[0] && !valid_skill(r->skill)) || !valid_status(r->status) ||
      (r->reason[0] && !valid_reason(r->reason)) ||
      (r->execution[0] && !sr_valid_id(r->execution)))
    return -EINVAL;
  for (size_t i = 0; i < SR_ARRAY_SIZE(v); i++)
    put_num(n[i], sizeof(n[i]), v[i]);
  w = snprintf(buf, len,
               RECORD_VERSION " %" PRIu64 " %s %s %s %s %s %s %s %s %s %s %s\n",
               r->finished_s, r->tenant[0] ? r->tenant : "-",
               r->skill[0] ? r->skill : "-", sr_status_name(r->status),
               r->reason[0] ? r->reason : "-", n[0], n[1], n[2], n[3], n[4],
               n[5], r->execution[0] ? r->execution : "-");
  if (w < 0 || (size_t)w >= len || (size_t)w > SR_RECORD_LINE_MAX)
    return -ENOSPC;
  return w;
}

/* A decimal number of at most 19 digits (no sign), or "-" for -1. */
static int parse_num(const char *s, int64_t *out) {
  uint64_t v;

  if (!strcmp(s, "-")) {
    *out = -1;
    return 0;
  }
  if (strlen(s) > 19 || sr_parse_uint(s, INT64_MAX, &v) < 0)
    return -EINVAL;
  *out = (int64_t)v;
  return 0;
}

static int parse_status(const char *s, enum sr_status *out) {
  for (int i = 0; i < SR__STATUS_MAX; i++)
    if (!strcmp(s, sr_status_name((enum sr_status)i))) {
      *out = (enum sr_status)i;
      return 0;
    }
  return -EINVAL;
}

/* "-" or a field that passes `valid`, copied into out (size n). */
static int parse_text(const char *s, bool (*valid)(const char *), char *out,
                      size_t n) {
  if (!strcmp(s, "-")) {
    out[0] = '\0';
    return 0;
  }
  if (!valid(s) || strlen(s) >= n)
    return -EINVAL;
  memcpy(out, s, strlen(s) + 1);
  return 0;
}

int sr_record_parse(const char *line, size_t len, struct sr_run_record *r) {
  char buf[SR_RECORD_LINE_MAX + 1];
  char *f[N_FIELDS + 2], *p;
  size_t nf = 0;
  int64_t v[7];
  int q = 0;

  if (len == 0 || len > SR_RECORD_LINE_MAX || memchr(line, '\0', len))
    return -EINVAL;
  memcpy(buf, line, len);
  buf[len] = '\0';
  /* Exactly one space between fields: split without strtok's merging. */
  /* The execution id, last, is optional: older lines do not have it. */
  for (p = buf; nf <= N_FIELDS + 1;) {
    char *sp = strchr(p, ' ');
    f[nf++] = p;
    if (!sp)
      break;
    *sp = '\0';
    p = sp + 1;
  }
  if ((nf != N_FIELDS && nf != N_FIELDS + 1) ||
      strcmp(f[0], RECORD_VERSION) != 0)
    return -EINVAL;
  memset(r, 0, sizeof(*r));
  if (nf == N_FIELDS + 1)
    q |= parse_text(f[N_FIELDS], sr_valid_id, r->execution,
                    sizeof(r->execution));
  q |= parse_num(f[1], &v[0]);
  q |= parse_text(f[2], sr_valid_id, r->tenant, sizeof(r->tenant));
  q |= parse_text(f[3], valid_skill, r->skill, sizeof(r->skill));
  q |= parse_status(f[4], &r->status);
  q |= parse_text(f[5], valid_reason, r->reason, sizeof(r->reason));
  for (int i = 0; i < 6; i++)
    q |= parse_num(f[6 + i], &v[1 + i]);
  if (q != 0 || v[0] < 0)
    return -EINVAL;
  r->finished_s = (uint64_t)v[0];
  r->duration_ms = v[1];
  r->cpu_usec = v[2];
  r->memory_peak = v[3];
  r->artifacts = v[4];
  r->artifact_bytes = v[5];
  r->syscalls_denied = v[6];
  return 0;
}

/* ------------------------------------------------------------ reading */

#define INDEX_READ_CHUNK (256 * 1024)

int sr_index_each_line(int fd, off_t *off, off_t end, bool mid_line,
                       int (*line)(void *ctx, const char *p, size_t len),
                       void *ctx) {
  _cleanup_free_ char *buf = malloc(INDEX_READ_CHUNK);
  bool junk = mid_line; /* drop up to the next newline */
  size_t have = 0;
  int r;

  if (!buf)
    return -ENOMEM;
  for (;;) {
    off_t pos = *off + (off_t)have, data;
    size_t want = INDEX_READ_CHUNK - have;
    char *p = buf, *stop, *nl;
    ssize_t n;

    if (end >= 0 && pos >= end)
      return 0;
    /* A hole is no line (its owner's sparse file costs them nothing, a
     * reader its size in zeros): passed over, with the line it cuts. */
    data = lseek(fd, pos, SEEK_DATA);
    if (data < 0 && errno == ENXIO)
      return 0;
    if (data > pos) {
      if (have > 0 || !junk)
        r = line(ctx, NULL, 0);
      else
        r = 0;
      if (r < 0)
        return r;
      *off = data;
      have = 0;
      junk = true;
      continue;
    }
    if (end >= 0 && (off_t)want > end - pos)
      want = (size_t)(end - pos);
    n = pread(fd, buf + have, want, pos);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    if (n == 0)
      return 0;
    stop = buf + have + n;
    while ((nl = memchr(p, '\n', (size_t)(stop - p)))) {
      if (junk)
        junk = false;
      else if ((r = line(ctx, p, (size_t)(nl - p))) < 0)
        return r;
      p = nl + 1;
    }
    *off += p - buf;
    have = (size_t)(stop - p);
    if (have > SR_RECORD_LINE_MAX) {
      /* Too long to be a record: passed over up to its newline. */
      if (!junk && (r = line(ctx, NULL, 0)) < 0)
        return r;
      junk = true;
      *off += (off_t)have;
      have = 0;
    } else {
      memmove(buf, p, have);
    }
  }
}

/* ------------------------------------------------------------ a string map */

/* Keys to dense indexes 0..n-1, in order of insertion (so the output is in
 * the order runs first appeared, stable from one scrape to the next). */
struct strmap {
  char **keys;
  size_t n, cap;
  uint32_t *slots; /* index + 1; 0 = empty */
  size_t n_slots;  /* a power of two, at least twice n */
};

static uint64_t hash(const char *s) {
  uint64_t h = 1469598103934665603ULL; /* FNV-1a */

  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

static void strmap_done(struct strmap *m) {
  for (size_t i = 0; i < m->n; i++)
    free(m->keys[i]);
  free(m->keys);
  free(m->slots);
}

static size_t *slot_of(const struct strmap *m, const char *key, size_t *slot) {
  size_t mask = m->n_slots - 1;

  for (size_t i = hash(key) & mask;; i = (i + 1) & mask)
    if (!m->slots[i] || !strcmp(m->keys[m->slots[i] - 1], key)) {
      *slot = i;
      return slot;
    }
}

static int strmap_grow(struct strmap *m) {
  size_t n = m->n_slots ? m->n_slots * 2 : 64;
  uint32_t *old = m->slots;
  size_t old_n = m->n_slots;

  m->slots = calloc(n, sizeof(*m->slots));
  if (!m->slots) {
    m->slots = old;
    return -ENOMEM;
  }
  m->n_slots = n;
  for (size_t i = 0; i < old_n; i++)
    if (old[i]) {
      size_t s;
      slot_of(m, m->keys[old[i] - 1], &s);
      m->slots[s] = old[i];
    }
  free(old);
  return 0;
}

/* The index of key, inserted when absent and fewer than max are known;
 * -1 when absent and full, -ENOMEM. */
static long strmap_get(struct strmap *m, const char *key, size_t max) {
  size_t s;

  if (m->n_slots && (slot_of(m, key, &s), m->slots[s]))
    return (long)m->slots[s] - 1;
  if (m->n >= max)
    return -1;
  if ((m->n + 1) * 2 > m->n_slots && strmap_grow(m) < 0)
    return -ENOMEM;
  if (m->n == m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 16;
    char **k = realloc(m->keys, cap * sizeof(*k));
    if (!k)
      return -ENOMEM;
    m->keys = k;
    m->cap = cap;
  }
  m->keys[m->n] = strdup(key);
  if (!m->keys[m->n])
    return -ENOMEM;
  slot_of(m, key, &s);
  m->slots[s] = (uint32_t)(m->n + 1);
  return (long)m->n++;
}

/* ------------------------------------------------------------ counted runs */

/*
 * A balanced tree (tsearch(3)), not the hashed string map: the index is its
 * owner's to write, and with a hash they know (an unkeyed one) a user
 * could write ids that all share one slot, so that root's gc, reading that
 * index, spent minutes probing (quadratic in the lines).  A tree's lookups
 * are O(log n) whatever the keys.
 */
struct sr_index_ids {
  void *ids;           /* "tenant\037execution", tsearch(3) */
  int64_t legacy_last; /* the latest end of a line without an id; -1 */
  bool skipped;        /* lines were passed over, and no line read since */
};

static int key_cmp(const void *a, const void *b) {
  return strcmp(a, b);
}

struct sr_index_ids *sr_index_ids_new(void) {
  struct sr_index_ids *s = calloc(1, sizeof(*s));

  if (s)
    s->legacy_last = -1;
  return s;
}

void sr_index_ids_free(struct sr_index_ids *s) {
  if (!s)
    return;
  tdestroy(s->ids, free);
  free(s);
}

/* The fields of a line sr_record_parse read (one space apart). */
static size_t fields(const char *line, size_t len) {
  size_t n = 1;

  for (size_t i = 0; i < len; i++)
    n += line[i] == ' ';
  return n;
}

int sr_index_ids_add_line(struct sr_index_ids *s, const char *line,
                          size_t len) {
  struct sr_run_record rec;
  char key[65 + 1 + 65], *dup;

  if (sr_record_parse(line, len, &rec) < 0)
    return 0;
  /* The lines passed over ended by this one's end, about: any of them
   * may be the line of a run that began by then. */
  if (s->skipped) {
    s->skipped = false;
    if ((int64_t)rec.finished_s > s->legacy_last)
      s->legacy_last = (int64_t)rec.finished_s;
  }
  if (!rec.execution[0]) {
    /* "-": a run of this version's without a valid id (an invalid
     * --execution-id), which no dead run can be. */
    if (fields(line, len) == N_FIELDS + 1)
      return 0;
    if ((int64_t)rec.finished_s > s->legacy_last)
      s->legacy_last = (int64_t)rec.finished_s;
    return 0;
  }
  /* A run refused because its id was another's (live, done or
   * abandoned): the line names that id, yet is not that run's; taken for
   * it, a live run killed later would never be counted. */
  if (rec.status == SR_STATUS_REFUSED &&
      (!strcmp(rec.reason, "execution_replayed") ||
       !strcmp(rec.reason, "execution_abandoned")))
    return 0;
  snprintf(key, sizeof(key), "%s\037%s", rec.tenant, rec.execution);
  if (tfind(key, &s->ids, key_cmp))
    return 0;
  dup = strdup(key);
  if (!dup || !tsearch(dup, &s->ids, key_cmp)) {
    free(dup);
    return -ENOMEM;
  }
  return 0;
}

int sr_index_ids_find(const struct sr_index_ids *s, const char *tenant,
                      const char *execution, int64_t started_s) {
  char key[65 + 1 + 65];

  snprintf(key, sizeof(key), "%s\037%s", tenant, execution);
  if (tfind(key, &s->ids, key_cmp))
    return 1;
  if (s->skipped)
    return -1;
  return s->legacy_last >= started_s ? -1 : 0;
}

void sr_index_ids_skip(struct sr_index_ids *s) {
  s->skipped = true;
}

/* ------------------------------------------------------------ aggregation */

/* Histogram bounds (the le labels); +Inf is implicit. */
static const double duration_bounds[] = {0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,
                                         10,   30,  60,   120, 300, 900, 3600};
static const double cpu_bounds[] = {0.01, 0.05, 0.1, 0.25, 0.5, 1,
                                    2.5,  5,    10,  30,   60,  300};
static const double memory_bounds[] = {1048576.0,    4194304.0,    16777216.0,
                                       67108864.0,   134217728.0,  268435456.0,
                                       536870912.0,  1073741824.0, 2147483648.0,
                                       4294967296.0, 8589934592.0};
#define MAX_BOUNDS 16

struct histogram {
  uint64_t bucket[MAX_BOUNDS]; /* not cumulative: rendered cumulative */
  uint64_t count;
  double sum;
};

static void observe(struct histogram *h, const double *bounds, size_t n,
                    double v) {
  size_t i = 0;

  while (i < n && v > bounds[i])
    i++;
  if (i < n)
    h->bucket[i]++;
  h->count++;
  h->sum += v;
}

/* Per tenant: what is summed or observed over its runs. */
struct tenant {
  struct histogram duration, cpu, memory;
  uint64_t artifacts, artifact_bytes, syscalls_denied;
};

/* (tenant, skill, status) and (tenant, kind, reason) series. */
struct series {
  size_t tenant;
  uint64_t n;
};

struct sr_metrics {
  struct strmap tenants; /* names; OTHER once full */
  struct tenant *t;
  size_t t_cap;
  struct strmap pairs; /* "tenant\037skill", bounded */
  struct strmap runs;  /* "tenant\037skill\037status", skill OTHER once
                        * pairs is full */
  struct series *r;
  size_t r_cap;
  struct strmap reasons; /* "tenant\037kind\037reason" */
  struct series *q;
  size_t q_cap;
  uint64_t records, folded, skipped;
  int64_t in_progress;
};

struct sr_metrics *sr_metrics_new(void) {
  struct sr_metrics *m = calloc(1, sizeof(*m));

  if (m)
    m->in_progress = -1;
  return m;
}

void sr_metrics_free(struct sr_metrics *m) {
  if (!m)
    return;
  strmap_done(&m->tenants);
  strmap_done(&m->pairs);
  strmap_done(&m->runs);
  strmap_done(&m->reasons);
  free(m->t);
  free(m->r);
  free(m->q);
  free(m);
}

void sr_metrics_set_reader(struct sr_metrics *m, uint64_t skipped_lines,
                           int64_t in_progress) {
  m->skipped = skipped_lines;
  m->in_progress = in_progress;
}

/* The index of key in map, or of its OTHER form (made by other(), which
 * never fails to find room: the bound leaves one). */
static long get_or_other(struct strmap *map, const char *key, size_t max,
                         const char *other_key, bool *folded) {
  long i = strmap_get(map, key, max);

  if (i == -1) {
    *folded = true;
    i = strmap_get(map, other_key, max + 1);
  }
  return i;
}

int sr_metrics_add(struct sr_metrics *m, const struct sr_run_record *r) {
  const char *status = sr_status_name(r->status);
  const bool ran =
      r->status != SR_STATUS_REFUSED && r->status != SR_STATUS_ERROR;
  bool folded = false;
  char key[65 + SR_RECORD_SKILL_MAX + 80], other[sizeof(key)];
  long ti, i;
  struct tenant *t;

  ti = get_or_other(&m->tenants, r->tenant, SR_METRICS_TENANTS_MAX, OTHER,
                    &folded);
  if (ti < 0 || sr_grow_array((void **)&m->t, &m->t_cap, (size_t)ti,
                              sizeof(*m->t), 16) < 0)
    return -ENOMEM;
  t = &m->t[ti];
  /* The skill, or OTHER once there are as many tenant and skill pairs
   * as the bound: the statuses of a pair then stay within its bound. */
  snprintf(key, sizeof(key), "%s\037%s", m->tenants.keys[ti], r->skill);
  i = strmap_get(&m->pairs, key, SR_METRICS_SKILLS_MAX);
  if (i == -ENOMEM)
    return -ENOMEM;
  if (i == -1)
    folded = true;
  snprintf(key, sizeof(key), "%s\037%s\037%s", m->tenants.keys[ti],
           i == -1 ? OTHER : r->skill, status);
  i = strmap_get(&m->runs, key, SIZE_MAX);
  if (i < 0 || sr_grow_array((void **)&m->r, &m->r_cap, (size_t)i,
                             sizeof(*m->r), 16) < 0)
    return -ENOMEM;
  m->r[i].tenant = (size_t)ti;
  m->r[i].n++;
  if (r->reason[0] && !ran) {
    snprintf(key, sizeof(key), "%s\037%s\037%s", m->tenants.keys[ti], status,
             r->reason);
    snprintf(other, sizeof(other), "%s\037%s\037" OTHER, m->tenants.keys[ti],
             status);
    i = get_or_other(&m->reasons, key, SR_METRICS_REASONS_MAX, other, &folded);
    if (i < 0 || sr_grow_array((void **)&m->q, &m->q_cap, (size_t)i,
                               sizeof(*m->q), 16) < 0)
      return -ENOMEM;
    m->q[i].tenant = (size_t)ti;
    m->q[i].n++;
  }
  if (ran) {
    if (r->duration_ms >= 0)
      observe(&t->duration, duration_bounds, SR_ARRAY_SIZE(duration_bounds),
              (double)r->duration_ms / 1e3);
    if (r->cpu_usec >= 0)
      observe(&t->cpu, cpu_bounds, SR_ARRAY_SIZE(cpu_bounds),
              (double)r->cpu_usec / 1e6);
    if (r->memory_peak >= 0)
      observe(&t->memory, memory_bounds, SR_ARRAY_SIZE(memory_bounds),
              (double)r->memory_peak);
  }
  if (r->artifacts > 0)
    t->artifacts += (uint64_t)r->artifacts;
  if (r->artifact_bytes > 0)
    t->artifact_bytes += (uint64_t)r->artifact_bytes;
  if (r->syscalls_denied > 0)
    t->syscalls_denied += (uint64_t)r->syscalls_denied;
  m->records++;
  if (folded)
    m->folded++;
  return 0;
}

/* ------------------------------------------------------------ rendering */

struct out {
  char *p;
  size_t n, cap;
  bool failed;
};

static void put(struct out *o, const char *fmt, ...) _printf_(2, 3);
static void put(struct out *o, const char *fmt, ...) {
  va_list ap;
  int w;

  if (o->failed)
    return;
  for (;;) {
    va_start(ap, fmt);
    /* False positive: va_start() just above initialised ap (as in cli.c's
     * usage_error).
     * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
    w = vsnprintf(o->p ? o->p + o->n : NULL, o->p ? o->cap - o->n : 0, fmt, ap);
    va_end(ap);
    if (w < 0) {
      o->failed = true;
      return;
    }
    if (o->p && (size_t)w < o->cap - o->n) {
      o->n += (size_t)w;
      return;
    }
    {
      size_t cap = o->cap ? o->cap : 4096;
      char *p;
      while (cap < o->n + (size_t)w + 1)
        cap *= 2;
      p = realloc(o->p, cap);
      if (!p) {
        o->failed = true;
        return;
      }
      o->p = p;
      o->cap = cap;
    }
  }
}

/* A label value: Prometheus escapes backslash, double quote and newline;
 * the index holds none of them, but the text must not depend on that. */
static void put_value(struct out *o, const char *s) {
  for (; *s; s++) {
    if (*s == '\\' || *s == '"')
      put(o, "\\%c", *s);
    else if (*s == '\n')
      put(o, "\\n");
    else
      put(o, "%c", *s);
  }
}

static void family(struct out *o, const char *name, const char *type,
                   const char *help) {
  put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The i-th of the key's \037-separated parts. */
static const char *part(const char *key, int i, char *buf, size_t len) {
  const char *p = key, *end;

  for (; i > 0 && p; i--) {
    p = strchr(p, '\037');
    if (p)
      p++;
  }
  if (!p)
    return "";
  end = strchr(p, '\037');
  snprintf(buf, len, "%.*s", (int)(end ? (size_t)(end - p) : strlen(p)), p);
  return buf;
}

static void render_series(struct out *o, const struct strmap *map,
                          const struct series *v, const char *name,
                          const char *l1, const char *l2,
                          const char *status_only) {
  char a[SR_RECORD_SKILL_MAX + 1], b[80], c[80];

  for (size_t i = 0; i < map->n; i++) {
    const char *k = map->keys[i];
    if (status_only && strcmp(part(k, 1, b, sizeof(b)), status_only) != 0)
      continue;
    put(o, "%s{tenant=\"", name);
    put_value(o, part(k, 0, c, sizeof(c)));
    if (status_only) {
      put(o, "\",%s=\"", l1);
      put_value(o, part(k, 2, a, sizeof(a)));
    } else {
      put(o, "\",%s=\"", l1);
      put_value(o, part(k, 1, a, sizeof(a)));
      put(o, "\",%s=\"", l2);
      put_value(o, part(k, 2, b, sizeof(b)));
    }
    put(o, "\"} %" PRIu64 "\n", v[i].n);
  }
}

static void render_histogram(struct out *o, const struct sr_metrics *m,
                             const char *name, const char *help, size_t offset,
                             const double *bounds, size_t n,
                             const char *sum_fmt) {
  family(o, name, "histogram", help);
  for (size_t ti = 0; ti < m->tenants.n; ti++) {
    const struct histogram *h =
        (const struct histogram *)((const char *)&m->t[ti] + offset);
    uint64_t cum = 0;

    if (h->count == 0)
      continue;
    for (size_t i = 0; i < n; i++) {
      cum += h->bucket[i];
      put(o, "%s_bucket{tenant=\"", name);
      put_value(o, m->tenants.keys[ti]);
      put(o, "\",le=\"%.15g\"} %" PRIu64 "\n", bounds[i], cum);
    }
    put(o, "%s_bucket{tenant=\"", name);
    put_value(o, m->tenants.keys[ti]);
    put(o, "\",le=\"+Inf\"} %" PRIu64 "\n", h->count);
    put(o, "%s_sum{tenant=\"", name);
    put_value(o, m->tenants.keys[ti]);
    put(o, "\"} ");
    put(o, sum_fmt, h->sum);
    put(o, "\n%s_count{tenant=\"", name);
    put_value(o, m->tenants.keys[ti]);
    put(o, "\"} %" PRIu64 "\n", h->count);
  }
}

static void render_tenant_counter(struct out *o, const struct sr_metrics *m,
                                  const char *name, const char *help,
                                  size_t offset) {
  family(o, name, "counter", help);
  for (size_t ti = 0; ti < m->tenants.n; ti++) {
    put(o, "%s{tenant=\"", name);
    put_value(o, m->tenants.keys[ti]);
    put(o, "\"} %" PRIu64 "\n",
        *(const uint64_t *)((const char *)&m->t[ti] + offset));
  }
}

char *sr_metrics_render(const struct sr_metrics *m, size_t *len) {
  struct out o = {0};

  family(&o, "skillrun_runs_total", "counter",
         "Runs that ended, by tenant, skill and status (skill is empty when "
         "the run ended before its SKILL.md was read).");
  render_series(&o, &m->runs, m->r, "skillrun_runs_total", "skill", "status",
                NULL);
  family(&o, "skillrun_refusals_total", "counter",
         "Runs refused (exit 123), by tenant and reason.");
  render_series(&o, &m->reasons, m->q, "skillrun_refusals_total", "reason",
                NULL, "refused");
  family(&o, "skillrun_errors_total", "counter",
         "Runs that skillrun could not carry out (exit 125), by tenant and "
         "reason.");
  render_series(&o, &m->reasons, m->q, "skillrun_errors_total", "reason", NULL,
                "error");
  render_histogram(&o, m, "skillrun_run_duration_seconds",
                   "Wall-clock time of runs that started their sandbox.",
                   offsetof(struct tenant, duration), duration_bounds,
                   SR_ARRAY_SIZE(duration_bounds), "%.3f");
  render_histogram(&o, m, "skillrun_run_cpu_seconds",
                   "CPU time of runs that started their sandbox.",
                   offsetof(struct tenant, cpu), cpu_bounds,
                   SR_ARRAY_SIZE(cpu_bounds), "%.6f");
  render_histogram(&o, m, "skillrun_run_memory_peak_bytes",
                   "Peak memory of runs that started their sandbox.",
                   offsetof(struct tenant, memory), memory_bounds,
                   SR_ARRAY_SIZE(memory_bounds), "%.0f");
  render_tenant_counter(&o, m, "skillrun_artifacts_total",
                        "Files harvested from /workspace/outputs.",
                        offsetof(struct tenant, artifacts));
  render_tenant_counter(&o, m, "skillrun_artifact_bytes_total",
                        "Bytes of the files harvested.",
                        offsetof(struct tenant, artifact_bytes));
  render_tenant_counter(&o, m, "skillrun_syscalls_denied_total",
                        "System calls the seccomp filter refused.",
                        offsetof(struct tenant, syscalls_denied));
  if (m->in_progress >= 0) {
    family(&o, "skillrun_runs_in_progress", "gauge",
           "Runs whose supervisor is alive now.");
    put(&o, "skillrun_runs_in_progress %" PRId64 "\n", m->in_progress);
  }
  family(&o, "skillrun_metrics_index_records", "gauge",
         "Lines of the runs index counted.");
  put(&o, "skillrun_metrics_index_records %" PRIu64 "\n", m->records);
  family(&o, "skillrun_metrics_index_skipped", "gauge",
         "Lines of the runs index skipped: malformed or too long.");
  put(&o, "skillrun_metrics_index_skipped %" PRIu64 "\n", m->skipped);
  family(&o, "skillrun_metrics_folded", "gauge",
         "Runs counted under tenant, skill or reason _other: past the "
         "cardinality bounds.");
  put(&o, "skillrun_metrics_folded %" PRIu64 "\n", m->folded);
  if (o.failed) {
    free(o.p);
    return NULL;
  }
  if (!o.p) /* nothing written cannot happen: the families always are */
    return NULL;
  *len = o.n;
  return o.p;
}
