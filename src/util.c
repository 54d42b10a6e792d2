/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "util.h"

#define SR_U64_LIMIT (UINT64_C(1) << 62)

int sr_parse_uint(const char *s, uint64_t max, uint64_t *out) {
  uint64_t v = 0;

  if (!s || !*s)
    return -EINVAL;
  for (const char *c = s; *c; c++) {
    if (*c < '0' || *c > '9')
      return -EINVAL;
    if (v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
      return -ERANGE;
    v = v * 10 + (uint64_t)(*c - '0');
  }
  if (v > max)
    return -ERANGE;
  *out = v;
  return 0;
}

/* Splits "123abc" into the number and the suffix. */
static int split_number(const char *s, uint64_t *num, const char **suffix) {
  uint64_t v = 0;
  const char *c = s;

  if (!s || !(*c >= '0' && *c <= '9'))
    return -EINVAL;
  for (; *c >= '0' && *c <= '9'; c++) {
    if (v > (SR_U64_LIMIT - (uint64_t)(*c - '0')) / 10)
      return -ERANGE;
    v = v * 10 + (uint64_t)(*c - '0');
  }
  *num = v;
  *suffix = c;
  return 0;
}

int sr_parse_size(const char *s, uint64_t *out) {
  static const struct {
    const char *suffix;
    unsigned shift;
  } units[] = {
      {"", 0},    {"b", 0},    {"k", 10},  {"ki", 10},  {"kb", 10}, {"kib", 10},
      {"m", 20},  {"mi", 20},  {"mb", 20}, {"mib", 20}, {"g", 30},  {"gi", 30},
      {"gb", 30}, {"gib", 30}, {"t", 40},  {"ti", 40},  {"tb", 40}, {"tib", 40},
  };
  const char *suffix;
  uint64_t v;
  int r;

  r = split_number(s, &v, &suffix);
  if (r < 0)
    return r;
  for (size_t i = 0; i < SR_ARRAY_SIZE(units); i++) {
    if (strcasecmp(suffix, units[i].suffix) != 0)
      continue;
    if (v > (SR_U64_LIMIT >> units[i].shift))
      return -ERANGE;
    *out = v << units[i].shift;
    return 0;
  }
  return -EINVAL;
}

int sr_parse_duration_ms(const char *s, uint64_t *out) {
  static const struct {
    const char *suffix;
    uint64_t ms;
  } units[] = {
      {"", 1000},     {"s", 1000},    {"ms", 1},     {"m", 60000},
      {"min", 60000}, {"h", 3600000}, {"sec", 1000},
  };
  const char *suffix;
  uint64_t v;
  int r;

  r = split_number(s, &v, &suffix);
  if (r < 0)
    return r;
  for (size_t i = 0; i < SR_ARRAY_SIZE(units); i++) {
    if (strcmp(suffix, units[i].suffix) != 0)
      continue;
    if (v > SR_U64_LIMIT / units[i].ms)
      return -ERANGE;
    *out = v * units[i].ms;
    return 0;
  }
  return -EINVAL;
}

int sr_parse_bool(const char *s, bool *out) {
  if (!s)
    return -EINVAL;
  if (!strcmp(s, "yes") || !strcmp(s, "true") || !strcmp(s, "1")) {
    *out = true;
    return 0;
  }
  if (!strcmp(s, "no") || !strcmp(s, "false") || !strcmp(s, "0")) {
    *out = false;
    return 0;
  }
  return -EINVAL;
}

void sr_format_size(uint64_t bytes, char *buf, size_t len) {
  static const char *const names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  unsigned i = 0;

  /* Exact when the value is a whole number of the unit, else one decimal. */
  while (i + 1 < SR_ARRAY_SIZE(names) &&
         bytes >= (UINT64_C(1) << (10 * (i + 1))))
    i++;
  if (i == 0 || bytes % (UINT64_C(1) << (10 * i)) == 0)
    snprintf(buf, len, "%" PRIu64 "%s", bytes >> (10 * i), names[i]);
  else
    snprintf(buf, len, "%.1f%s",
             (double)bytes / (double)(UINT64_C(1) << (10 * i)), names[i]);
}

void sr_format_duration_ms(uint64_t ms, char *buf, size_t len) {
  if (ms % 3600000 == 0 && ms >= 3600000)
    snprintf(buf, len, "%" PRIu64 "h", ms / 3600000);
  else if (ms % 60000 == 0 && ms >= 60000)
    snprintf(buf, len, "%" PRIu64 "m", ms / 60000);
  else if (ms % 1000 == 0)
    snprintf(buf, len, "%" PRIu64 "s", ms / 1000);
  else
    snprintf(buf, len, "%" PRIu64 "ms", ms);
}

bool sr_valid_id(const char *s) {
  size_t n;

  if (!s || !isalnum((unsigned char)s[0]))
    return false;
  n = strlen(s);
  if (n > 64)
    return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (!(isalnum(c) && c < 0x80) && c != '.' && c != '_' && c != '-')
      return false;
  }
  return strstr(s, "..") == NULL;
}

bool sr_valid_hex(const char *s, size_t len) {
  if (!s || strlen(s) != len)
    return false;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

bool sr_has_control_chars(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
      return true;
  return false;
}

size_t sr_utf8_seq(const unsigned char *p, size_t n, size_t *skip) {
  unsigned char c = p[0], lo = 0x80, hi = 0xbf;
  size_t need;

  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    need = 1;
  else if (c == 0xe0)
    need = 2, lo = 0xa0;
  else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef)
    need = 2;
  else if (c == 0xed) /* no UTF-16 surrogates */
    need = 2, hi = 0x9f;
  else if (c == 0xf0)
    need = 3, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3)
    need = 3;
  else if (c == 0xf4) /* nothing above U+10FFFF */
    need = 3, hi = 0x8f;
  else {
    *skip = 1;
    return 0;
  }
  for (size_t i = 1; i <= need; i++) {
    if (i >= n || p[i] < lo || p[i] > hi) {
      *skip = i;
      return 0;
    }
    lo = 0x80;
    hi = 0xbf;
  }
  return need + 1;
}

size_t sr_utf8_cut(const char *s, size_t len, size_t max) {
  if (len <= max)
    return len;
  while (max > 0 && ((unsigned char)s[max] & 0xc0) == 0x80)
    max--;
  return max;
}

bool sr_utf8_valid(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t skip;

  for (size_t i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    if (n == 0)
      return false;
    i += n;
  }
  return true;
}

/* The code point of the well-formed sequence p[0..n). */
uint32_t sr_utf8_code_point(const unsigned char *p, size_t n) {
  static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
  uint32_t cp = p[0] & lead_mask[n];

  for (size_t i = 1; i < n; i++)
    cp = (cp << 6) | (p[i] & 0x3f);
  return cp;
}

bool sr_valid_utf8_text(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t skip;

  for (size_t i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    uint32_t cp;

    if (n == 0)
      return false;
    cp = sr_utf8_code_point(p + i, n);
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
      return false;
    i += n;
  }
  return true;
}

static bool is_bidi_control(uint32_t cp) {
  return cp == 0x061c || cp == 0x200e || cp == 0x200f ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* A character that reads as a control where it is shown: a bidirectional
 * formatting character (it reorders what follows), or LINE SEPARATOR and
 * PARAGRAPH SEPARATOR, which JavaScript before ES2019 and Python's
 * str.splitlines() take for the end of a line (a JSON line, a listing). */
static bool is_format_control(uint32_t cp) {
  return is_bidi_control(cp) || cp == 0x2028 || cp == 0x2029;
}

/* How the character at p (its sequence n bytes, 0 when ill-formed) is
 * written in a name's display form: 0 as is, 'x' as \xHH per byte, 'u'
 * as \uHHHH. */
static char name_escape_kind(const unsigned char *p, size_t n) {
  uint32_t cp;

  if (n == 0)
    return 'x';
  cp = sr_utf8_code_point(p, n);
  if (cp < 0x20 || cp == 0x7f)
    return 'x';
  if ((cp >= 0x80 && cp <= 0x9f) || is_format_control(cp))
    return 'u';
  return 0;
}

bool sr_name_needs_escape(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t skip = 1;

  for (size_t i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    /* A backslash is escaped too: the display form is one-to-one. */
    if (p[i] == '\\' || name_escape_kind(p + i, n))
      return true;
    i += n;
  }
  return false;
}

size_t sr_name_misleading_at(const char *s, size_t len, uint32_t *cp) {
  const unsigned char *p = (const unsigned char *)s;
  size_t skip = 1;

  for (size_t i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    if (n > 0 ? name_escape_kind(p + i, n) != 0
              : p[i] >= 0x80 && p[i] <= 0x9f) {
      *cp = n > 0 ? sr_utf8_code_point(p + i, n) : p[i];
      return i;
    }
    i += n > 0 ? n : 1;
  }
  return len;
}

bool sr_name_misleads(const char *s, size_t len) {
  uint32_t cp;

  return sr_name_misleading_at(s, len, &cp) < len;
}

char *sr_name_escape(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  size_t skip = 1, o = 0;
  char *out;

  /* Each input byte becomes at most 4 bytes (\xHH), a 2-byte C1 control
   * 6 (\uHHHH), a 3-byte bidi control or line separator 6. */
  if (len > (SIZE_MAX - 1) / 4)
    return NULL;
  out = malloc(4 * len + 1);
  if (!out)
    return NULL;
  for (size_t i = 0; i < len;) {
    size_t n = sr_utf8_seq(p + i, len - i, &skip);
    /* The backslash that starts every escape is itself one (\x5c), so
     * that a name spelling "\xff" is not shown as the byte 0xff is. */
    switch (p[i] == '\\' ? 'x' : name_escape_kind(p + i, n)) {
    case 'x':
      o += (size_t)sprintf(out + o, "\\x%02x", p[i]);
      i += 1;
      break;
    case 'u':
      o += (size_t)sprintf(out + o, "\\u%04x",
                           (unsigned)sr_utf8_code_point(p + i, n));
      i += n;
      break;
    default:
      memcpy(out + o, p + i, n);
      o += n;
      i += n;
      break;
    }
  }
  out[o] = '\0';
  return out;
}

/* One character of a terminal stream (n > 0 bytes, 0 when ill-formed: one
 * byte), escaped into out; returns the bytes written. */
static size_t term_escape_one(const unsigned char *p, size_t n, char *out) {
  uint32_t cp;

  if (n == 0)
    return (size_t)sprintf(out, "\\x%02x", p[0]);
  cp = sr_utf8_code_point(p, n);
  if (cp == '\n' || cp == '\t')
    out[0] = (char)cp;
  else if (cp < 0x20 || cp == 0x7f)
    return (size_t)sprintf(out, "\\x%02x", (unsigned)cp);
  else if ((cp >= 0x80 && cp <= 0x9f) || is_format_control(cp))
    return (size_t)sprintf(out, "\\u%04x", (unsigned)cp);
  else
    memcpy(out, p, n);
  return n;
}

/* Whether p[0..n) could still become a well-formed sequence with more
 * bytes: a lead byte and valid continuation bytes so far. */
static bool utf8_incomplete(const unsigned char *p, size_t n, size_t skip) {
  return skip == n && n < 4 && p[0] >= 0xc2 && p[0] <= 0xf4;
}

size_t sr_term_escape(struct sr_term_escape *st, const char *in, size_t n,
                      char *out) {
  const unsigned char *p = (const unsigned char *)in;
  size_t o = 0, i = 0, skip = 1;

  /* Complete what the last chunk left held, one byte at a time. */
  while (st->n_held > 0 && i < n) {
    size_t k;
    st->held[st->n_held++] = p[i++];
    k = sr_utf8_seq(st->held, st->n_held, &skip);
    if (k == 0 && utf8_incomplete(st->held, st->n_held, skip))
      continue;
    if (k > 0) {
      o += term_escape_one(st->held, k, out + o);
      st->n_held = 0;
    } else {
      /* The held bytes are ill-formed: escape what is, and go on with
       * the rest as new input. */
      unsigned char rest[4];
      size_t nrest = st->n_held - skip;
      for (size_t j = 0; j < skip; j++)
        o += term_escape_one(st->held + j, 0, out + o);
      memcpy(rest, st->held + skip, nrest);
      st->n_held = 0;
      o += sr_term_escape(st, (const char *)rest, nrest, out + o);
    }
  }
  while (i < n) {
    size_t k = sr_utf8_seq(p + i, n - i, &skip);
    if (k == 0 && i + skip == n && utf8_incomplete(p + i, n - i, skip)) {
      memcpy(st->held, p + i, n - i);
      st->n_held = n - i;
      break;
    }
    if (k == 0) {
      o += term_escape_one(p + i, 0, out + o);
      i += 1;
      continue;
    }
    o += term_escape_one(p + i, k, out + o);
    i += k;
  }
  return o;
}

size_t sr_term_escape_flush(struct sr_term_escape *st, char *out) {
  size_t o = 0;

  for (size_t j = 0; j < st->n_held; j++)
    o += term_escape_one(st->held + j, 0, out + o);
  st->n_held = 0;
  return o;
}

bool sr_valid_label_key(const char *s) {
  size_t n;

  if (!s || !(s[0] >= 'a' && s[0] <= 'z'))
    return false;
  n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_.-");
  return n <= SR_LABEL_KEY_MAX && s[n] == '\0';
}

bool sr_valid_label_value(const char *s) {
  size_t n = s ? strlen(s) : SIZE_MAX;

  /* As an input's name: no character that reorders or splits the line
   * that shows it (an audit line in a terminal, a listing). */
  return n <= SR_LABEL_VALUE_MAX && sr_valid_utf8_text(s, n) &&
         !sr_name_misleads(s, n);
}

bool sr_valid_filename(const char *s) {
  size_t n;

  if (!s || !*s || !strcmp(s, ".") || !strcmp(s, ".."))
    return false;
  n = strlen(s);
  return n <= 255 && !strchr(s, '/') && !sr_has_control_chars(s);
}

bool sr_valid_abs_path(const char *s) {
  size_t len;

  if (!s || s[0] != '/')
    return false;
  len = strlen(s);
  if (len >= PATH_MAX || sr_has_control_chars(s))
    return false;
  if (len == 1)
    return true;
  for (const char *c = s; *c;) {
    const char *e;
    size_t n;

    c++; /* the '/' */
    e = strchrnul(c, '/');
    n = (size_t)(e - c);
    if (n == 0 || n > 255 || (n == 1 && c[0] == '.') ||
        (n == 2 && c[0] == '.' && c[1] == '.'))
      return false;
    c = e;
  }
  return true;
}

bool sr_path_at_or_below(const char *path, const char *dir) {
  size_t n = strlen(dir);

  if (n == 1 && dir[0] == '/')
    return path[0] == '/';
  return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

#define SR_EDIT_MAX 64

size_t sr_edit_distance(const char *a, const char *b) {
  /* Three rows of the dynamic programme: two back for transpositions. */
  size_t rows[3][SR_EDIT_MAX + 1];
  size_t la = strlen(a), lb = strlen(b);

  if (la > SR_EDIT_MAX || lb > SR_EDIT_MAX)
    return SIZE_MAX;
  for (size_t j = 0; j <= lb; j++)
    rows[0][j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t *cur = rows[i % 3], *up = rows[(i - 1) % 3],
           *up2 = rows[(i + 1) % 3];

    cur[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t d = up[j] + 1; /* deletion */

      if (cur[j - 1] + 1 < d)
        d = cur[j - 1] + 1; /* insertion */
      if (up[j - 1] + cost < d)
        d = up[j - 1] + cost; /* substitution */
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
          up2[j - 2] + 1 < d)
        d = up2[j - 2] + 1; /* transposition */
      cur[j] = d;
    }
  }
  return rows[la % 3][lb];
}

void sr_nearest_init(struct sr_nearest *n, const char *typed) {
  n->typed = typed;
  n->best = NULL;
  n->dist = SIZE_MAX;
}

void sr_nearest_offer(struct sr_nearest *n, const char *known) {
  size_t len = strlen(n->typed);
  size_t allowed = len <= 3 ? 1 : len <= 8 ? 2 : 3;
  size_t d = sr_edit_distance(n->typed, known);

  /* The first of equally near names wins: callers offer in table order. */
  if (d > 0 && d <= allowed && d < n->dist) {
    n->best = known;
    n->dist = d;
  }
}

const char *sr_printable(const char *s, char *buf, size_t len) {
  size_t i = 0;

  if (len < 4) {
    if (len)
      buf[0] = '\0';
    return buf;
  }
  for (; s && s[i] && i < len - 1; i++) {
    buf[i] = s[i];
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      buf[i] = '?';
    /* A C1 control in UTF-8 (U+0080-U+009F): both bytes. */
    if ((unsigned char)s[i] == 0xc2 && (unsigned char)s[i + 1] >= 0x80 &&
        (unsigned char)s[i + 1] <= 0x9f) {
      buf[i] = '?';
      if (i + 1 < len - 1)
        buf[++i] = '?';
    }
  }
  if (s && s[i]) {
    i = len - 4;
    memcpy(buf + i, "...", 3);
    i += 3;
  }
  buf[i] = '\0';
  return buf;
}

int sr_input_name_check(const char *name, const char **why) {
  const char *slash;
  size_t n;

  *why = NULL;
  if (!name || !*name)
    *why = "the name is empty";
  else if (name[0] == '/')
    *why = "an absolute name: names are relative to /workspace/inputs";
  else if (!sr_utf8_valid(name, strlen(name)))
    *why = "the name is not UTF-8 text (give one as PATH:NAME)";
  /* C0, DEL, and (valid UTF-8 by now) C1 */
  else if (sr_has_control_chars(name) ||
           !sr_valid_utf8_text(name, strlen(name)))
    *why = "a control character in the name";
  /* A bidirectional formatting character (U+202E...) makes the name read
   * otherwise than it is wherever it is shown, a line separator (U+2028,
   * U+2029) splits the line that shows it for some readers: refused, as
   * the harvest skips an output so named.  An input's name may be an end
   * user's upload's. */
  else if (sr_name_misleads(name, strlen(name)))
    *why = "a bidirectional formatting or line separator character in the "
           "name";
  if (*why)
    return -EINVAL;
  /* Component by component: at most two, each a plain file name. */
  for (const char *c = name, *end;; c = end + 1) {
    end = strchrnul(c, '/');
    n = (size_t)(end - c);
    if (n == 0)
      *why = "an empty component ('//' or a trailing '/')";
    else if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
      *why = "a '.' or '..' component";
    else if (n > 255)
      *why = "a component longer than 255 bytes";
    if (*why)
      return -EINVAL;
    if (!*end)
      break;
  }
  slash = strchr(name, '/');
  if (slash && strchr(slash + 1, '/')) {
    *why = "more than one directory level (at most DIR/NAME)";
    return -EINVAL;
  }
  /* The one entry of the sandbox view inside /workspace/inputs
   * (SR_VIEW_BUNDLE in view.h, which builds on this file). */
  n = slash ? (size_t)(slash - name) : strlen(name);
  if (n == strlen("bundle") && !strncmp(name, "bundle", n)) {
    *why = "'bundle' is reserved: /workspace/inputs/bundle is the "
           "bundle's old path";
    return -EINVAL;
  }
  return 0;
}

void sr_hex(const unsigned char *in, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";

  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[in[i] >> 4];
    out[2 * i + 1] = digits[in[i] & 0xf];
  }
  out[2 * n] = '\0';
}

char *sr_strndup_safe(const char *s, size_t max) {
  return s ? strndup(s, max) : NULL;
}

int sr_grow_array(void **v, size_t *cap, size_t i, size_t sz, size_t first) {
  size_t n;
  char *p;

  if (i < *cap)
    return 0;
  /* A full array doubles at least once. */
  for (n = *cap ? *cap : first; n <= i || n == *cap; n *= 2)
    if (n == 0 || n > SIZE_MAX / 2)
      return -ENOMEM;
  /* Checked here, not left to reallocarray(): a sanitizer's allocator
   * aborts on a size that overflows instead of returning NULL. */
  if (sz == 0 || n > SIZE_MAX / sz)
    return -ENOMEM;
  p = reallocarray(*v, n, sz);
  if (!p)
    return -ENOMEM;
  memset(p + *cap * sz, 0, (n - *cap) * sz);
  *v = p;
  *cap = n;
  return 0;
}

int sr_strv_push(struct sr_strv *sv, const char *s) {
  char **v;
  char *copy;

  copy = strdup(s);
  if (!copy)
    return -ENOMEM;
  v = realloc(sv->v, (sv->n + 2) * sizeof(char *));
  if (!v) {
    free(copy);
    return -ENOMEM;
  }
  v[sv->n++] = copy;
  v[sv->n] = NULL;
  sv->v = v;
  return 0;
}

bool sr_strv_contains(const struct sr_strv *sv, const char *s) {
  for (size_t i = 0; i < sv->n; i++)
    if (!strcmp(sv->v[i], s))
      return true;
  return false;
}

void sr_strv_done(struct sr_strv *sv) {
  for (size_t i = 0; i < sv->n; i++)
    free(sv->v[i]);
  free(sv->v);
  sv->v = NULL;
  sv->n = 0;
}
