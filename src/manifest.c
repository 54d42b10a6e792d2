/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SKILL.md front matter -> struct sr_manifest (skillrun-skill(5)).
 *
 * The verdict follows the reference validator (`skills-ref validate`, which
 * loads the front matter with strictyaml): every scalar is a string (no
 * implicit typing), duplicate keys, anchors, aliases and tags are refused.
 * Where skillrun is more lenient than the reference (unknown top-level key,
 * name differing from the directory, flow-style collections) it records a
 * warning instead; where the reference accepts something odd (a non-string
 * license or metadata value, allowed-tools as a mapping) skillrun accepts it
 * too, ignores it and warns.
 *
 * The parser sees untrusted input and has a fuzz target: the input is
 * capped, the YAML is read with libyaml's event API into a small tree whose
 * depth, node count and collection sizes are bounded, so nothing below
 * recurses more than SR_YAML_MAX_DEPTH levels.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yaml.h>

#include "fdutil.h"
#include "filetype.h"
#include "lookalike.h"
#include "manifest.h"
#include "text.h"

#define SR_YAML_MAX_DEPTH 8      /* nested collections */
#define SR_YAML_MAX_NODES 16384  /* scalars and collections, in all */
#define SR_YAML_MAX_ITEMS 1024   /* entries of one mapping or sequence */
#define SR_YAML_MAX_SCALAR 65536 /* bytes of any one scalar as parsed */
#define SR_MAX_KEY 256           /* bytes of a mapping key */
#define SR_MAX_STRING 4096       /* bytes of a stored value */
#define SR_MAX_NAME 64           /* characters (code points), after NFKC */
#define SR_MAX_DESCRIPTION 1024  /* characters */
#define SR_MAX_COMPATIBILITY 500 /* characters */
#define SR_MAX_METADATA 256      /* metadata entries */
#define SR_MAX_TOOLS 256         /* allowed-tools entries */
#define SR_MAX_ENTRYPOINT 256    /* sandbox.entrypoint words */

/* The front matter text starts on the second line of SKILL.md, and libyaml
 * marks are 0-based. */
#define SR_FM_FIRST_LINE 2u

#define REASON "manifest_invalid"

enum node_kind { NODE_SCALAR, NODE_SEQUENCE, NODE_MAPPING };

struct node {
  enum node_kind kind;
  unsigned line; /* SKILL.md line (1-based) */
  bool flow;     /* "[...]" or "{...}" */
  char *str;     /* NODE_SCALAR: NUL-free, NUL-terminated */
  size_t len;
  struct node **items; /* sequence items; mapping: key, value, key, ... */
  size_t n, cap;
};

static void node_free(struct node *n) {
  if (!n)
    return;
  /* Depth is bounded by SR_YAML_MAX_DEPTH, so this recursion is too. */
  for (size_t i = 0; i < n->n; i++)
    node_free(n->items[i]);
  free(n->items);
  free(n->str);
  free(n);
}
SR_DEFINE_CLEANUP(struct node *, node_free)

static int oom(struct sr_error *err) {
  return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "SKILL.md: parsing");
}

/* A value made safe to quote in a one-line message: control characters
 * become '?', long values are cut. */
static const char *shown(const char *s, char *buf, size_t size) {
  size_t i = 0, max = size > 4 ? size - 4 : 0;

  for (; i < max && s[i]; i++) {
    buf[i] = s[i];
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
      buf[i] = '?';
  }
  if (s[i] && size >= 4) {
    /* Do not cut a UTF-8 sequence in half. */
    i = sr_utf8_cut(s, i + 1, i);
    memcpy(buf + i, "...", 3);
    i += 3;
  }
  if (size > 0)
    buf[i < size ? i : size - 1] = '\0';
  return buf;
}
#define SHOWN(s) shown((s), (char[80]){0}, 80)
/* A character sr_name_misleads names, for a message: its code point and
 * where it is (the text itself may not be shown). */
#define MISLEADS                                                               \
  "U+%04" PRIX32 " at byte %zu, a control, bidirectional formatting or "       \
  "line separator character"

static int add_warning(struct sr_manifest *m, struct sr_error *err,
                       const char *fmt, ...) _printf_(3, 4);
static int add_warning(struct sr_manifest *m, struct sr_error *err,
                       const char *fmt, ...) {
  char line[512];
  va_list ap;

  va_start(ap, fmt);
  /* False positive: va_start() just above initialised ap; clang 14's
   * valist checker reports this call all the same.
   * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (sr_strv_push(&m->warnings, line) < 0)
    return oom(err);
  return 0;
}

#define INVALID(err, line, fmt, ...)                                           \
  sr_error_set((err), SR_EXIT_REFUSED, 0, REASON, "SKILL.md:%u: " fmt,         \
               (unsigned)(line), ##__VA_ARGS__)

/* ------------------------------------------------------------ front matter */

/* True when [p, end) starts with a line that is "---" (trailing blanks and
 * a CR allowed); *next is set to the start of the following line. */
static bool dash_line(const char *p, const char *end, const char **next) {
  const char *eol = memchr(p, '\n', (size_t)(end - p));
  const char *q = eol ? eol : end;

  *next = eol ? eol + 1 : end;
  if (q > p && q[-1] == '\r')
    q--;
  while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
    q--;
  return q - p == 3 && memcmp(p, "---", 3) == 0;
}

static int find_front_matter(const char *buf, size_t len, const char **fm,
                             size_t *fm_len, struct sr_error *err) {
  const char *end, *p, *next;

  /* Editors on other systems may start the file with a byte order mark,
   * invisible to the author: "must start with '---'" would not say why. */
  if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
    return INVALID(err, 1,
                   "no YAML front matter: the file starts with a UTF-8 byte "
                   "order mark before its '---' line; save it without one");
  /* UTF-32LE's mark starts with UTF-16LE's: looked for first. */
  if (len >= 4 &&
      (!memcmp(buf, "\xff\xfe\0\0", 4) || !memcmp(buf, "\0\0\xfe\xff", 4)))
    return INVALID(err, 1,
                   "no YAML front matter: the file is UTF-32 (it starts with "
                   "a byte order mark); save it as UTF-8");
  if (len >= 2 && (!memcmp(buf, "\xff\xfe", 2) || !memcmp(buf, "\xfe\xff", 2)))
    return INVALID(err, 1,
                   "no YAML front matter: the file is UTF-16 (it starts with "
                   "a byte order mark); save it as UTF-8");
  end = buf + len;
  if (len == 0 || !dash_line(buf, end, &p))
    return INVALID(err, 1,
                   "no YAML front matter: the file must start with a '---' "
                   "line, then 'key: value' lines, then a '---' line");
  for (const char *line = p; line < end; line = next)
    if (dash_line(line, end, &next)) {
      *fm = p;
      *fm_len = (size_t)(line - p);
      return 0;
    }
  return INVALID(err, 1,
                 "the front matter opened by '---' is never closed: add a "
                 "'---' line after the last key");
}

/*
 * libyaml (YAML 1.1) also ends a line at a carriage return without a line
 * feed, NEL (U+0085), LINE SEPARATOR (U+2028) and PARAGRAPH SEPARATOR
 * (U+2029); editors, grep -n and the reference validator's YAML 1.2 (for
 * the last three) do not.  In the front matter such a character would make
 * skillrun read a structure other than the one its reader sees (a "comment"
 * whose rest is a key) and every line number after it one off: refused, on
 * the line grep -n shows.  In a double-quoted value they can be written as
 * escapes ("\r", "\N", "\L", "\P").
 */
static int check_line_breaks(const char *fm, size_t fm_len,
                             struct sr_error *err) {
  unsigned line = SR_FM_FIRST_LINE;

  for (size_t i = 0; i < fm_len; i++) {
    const char *what = NULL;

    if (fm[i] == '\n')
      line++;
    else if (fm[i] == '\r' && (i + 1 == fm_len || fm[i + 1] != '\n'))
      what = "a carriage return (CR) not followed by a line feed";
    else if (fm_len - i >= 2 && !memcmp(fm + i, "\xc2\x85", 2))
      what = "a NEXT LINE character (U+0085)";
    else if (fm_len - i >= 3 && !memcmp(fm + i, "\xe2\x80\xa8", 3))
      what = "a LINE SEPARATOR (U+2028)";
    else if (fm_len - i >= 3 && !memcmp(fm + i, "\xe2\x80\xa9", 3))
      what = "a PARAGRAPH SEPARATOR (U+2029)";
    if (what)
      return INVALID(err, line,
                     "%s in the front matter: YAML reads it as a line break, "
                     "editors and grep do not; end lines with LF (or CRLF) "
                     "only",
                     what);
  }
  return 0;
}

/* ------------------------------------------------------------ YAML -> tree */

struct builder {
  struct node *root;
  struct node *stack[SR_YAML_MAX_DEPTH + 1];
  unsigned depth;
  size_t nodes;
  unsigned documents;
  struct sr_error *err;
};

static int node_new(struct builder *b, enum node_kind kind, size_t mark_line,
                    struct node **out) {
  struct node *n;

  /* The failures return -EINVAL and -ENOMEM, what INVALID() and oom() return,
   * spelled out: the static analyzers cannot see into sr_error_set(), so
   * they would otherwise take a failure for success and *out for set. */
  if (++b->nodes > SR_YAML_MAX_NODES) {
    (void)INVALID(b->err, SR_FM_FIRST_LINE + mark_line,
                  "front matter has more than %d YAML nodes",
                  SR_YAML_MAX_NODES);
    return -EINVAL;
  }
  n = calloc(1, sizeof(*n));
  if (!n) {
    (void)oom(b->err);
    return -ENOMEM;
  }
  n->kind = kind;
  n->line = SR_FM_FIRST_LINE + (unsigned)mark_line;
  *out = n;
  return 0;
}

/* Hands `n` to its parent (or makes it the root); frees it on failure. */
static int attach(struct builder *b, struct node *n) {
  struct node *parent;

  if (b->depth == 0) {
    if (b->root) {
      unsigned line = n->line; /* read before n is freed */
      node_free(n);
      return INVALID(b->err, line, "more than one YAML node at the top");
    }
    b->root = n;
    return 0;
  }
  parent = b->stack[b->depth - 1];
  if (parent->n >= (parent->kind == NODE_MAPPING ? 2 * SR_YAML_MAX_ITEMS
                                                 : SR_YAML_MAX_ITEMS)) {
    unsigned line = n->line;
    node_free(n);
    return INVALID(b->err, line, "a mapping or list has more than %d entries",
                   SR_YAML_MAX_ITEMS);
  }
  if (parent->n == parent->cap) {
    size_t cap = parent->cap ? parent->cap * 2 : 8;
    /* An array of pointers: sizeof(*items) is the pointer size on purpose.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    struct node **items = realloc(parent->items, cap * sizeof(*items));
    if (!items) {
      node_free(n);
      return oom(b->err);
    }
    parent->items = items;
    parent->cap = cap;
  }
  parent->items[parent->n++] = n;
  return 0;
}

/* strictyaml refuses anchors, aliases and tags; so do we (aliases would
 * also let a small file describe a huge tree). */
static int check_props(struct builder *b, const yaml_event_t *ev,
                       const yaml_char_t *anchor, const yaml_char_t *tag) {
  unsigned line = SR_FM_FIRST_LINE + (unsigned)ev->start_mark.line;

  if (anchor)
    return INVALID(b->err, line,
                   "YAML anchors and aliases ('&', '*') are not allowed; "
                   "write the value out");
  if (tag)
    return INVALID(b->err, line,
                   "YAML tags ('!') are not allowed; every value is a string");
  return 0;
}

static int on_event(struct builder *b, const yaml_event_t *ev) {
  struct node *n = NULL;
  size_t mark = ev->start_mark.line;
  int r;

  switch (ev->type) {
  case YAML_DOCUMENT_START_EVENT:
    if (++b->documents > 1)
      return INVALID(b->err, SR_FM_FIRST_LINE + mark,
                     "more than one YAML document in the front matter");
    return 0;
  case YAML_ALIAS_EVENT:
    return INVALID(b->err, SR_FM_FIRST_LINE + mark,
                   "YAML anchors and aliases ('&', '*') are not allowed; "
                   "write the value out");
  case YAML_SCALAR_EVENT:
    r = check_props(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag);
    if (r < 0)
      return r;
    if (ev->data.scalar.length > SR_YAML_MAX_SCALAR)
      return INVALID(b->err, SR_FM_FIRST_LINE + mark,
                     "a value is longer than %d bytes", SR_YAML_MAX_SCALAR);
    if (memchr(ev->data.scalar.value, '\0', ev->data.scalar.length))
      return INVALID(b->err, SR_FM_FIRST_LINE + mark,
                     "a value contains a NUL character");
    r = node_new(b, NODE_SCALAR, mark, &n);
    if (r < 0)
      return r;
    n->len = ev->data.scalar.length;
    n->str = strndup((const char *)ev->data.scalar.value, n->len);
    if (!n->str) {
      node_free(n);
      return oom(b->err);
    }
    return attach(b, n);
  case YAML_SEQUENCE_START_EVENT:
  case YAML_MAPPING_START_EVENT: {
    bool seq = ev->type == YAML_SEQUENCE_START_EVENT;

    r = seq ? check_props(b, ev, ev->data.sequence_start.anchor,
                          ev->data.sequence_start.tag)
            : check_props(b, ev, ev->data.mapping_start.anchor,
                          ev->data.mapping_start.tag);
    if (r < 0)
      return r;
    if (b->depth >= SR_YAML_MAX_DEPTH)
      return INVALID(b->err, SR_FM_FIRST_LINE + mark,
                     "YAML nested more than %d levels deep", SR_YAML_MAX_DEPTH);
    r = node_new(b, seq ? NODE_SEQUENCE : NODE_MAPPING, mark, &n);
    if (r < 0)
      return r;
    n->flow = seq ? ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE
                  : ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE;
    r = attach(b, n);
    if (r < 0)
      return r;
    b->stack[b->depth++] = n;
    return 0;
  }
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    if (b->depth > 0)
      b->depth--;
    return 0;
  default:
    return 0;
  }
}

static unsigned line_of_offset(const char *fm, size_t fm_len, size_t off) {
  unsigned line = SR_FM_FIRST_LINE;

  for (size_t i = 0; i < off && i < fm_len; i++)
    if (fm[i] == '\n')
      line++;
  return line;
}

static int parse_yaml(const char *fm, size_t fm_len, struct node **out,
                      struct sr_error *err) {
  struct builder b = {.err = err};
  yaml_parser_t parser;
  int r = 0;

  if (!yaml_parser_initialize(&parser))
    return oom(err);
  yaml_parser_set_input_string(&parser, (const unsigned char *)fm, fm_len);
  /* The file is UTF-8; do not let a BOM inside it switch encodings. */
  yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING);
  for (;;) {
    yaml_event_t ev;
    bool end;

    if (!yaml_parser_parse(&parser, &ev)) {
      const char *problem = parser.problem ? parser.problem : "unknown error";
      unsigned line;

      if (parser.error == YAML_MEMORY_ERROR)
        r = oom(err);
      else {
        bool ctx = parser.error == YAML_SCANNER_ERROR && parser.context;

        /* A scanner error's context mark is where the broken token began
         * (an unclosed quote), more useful than where the scan gave up. */
        if (parser.error == YAML_READER_ERROR)
          line = line_of_offset(fm, fm_len, parser.problem_offset);
        else if (ctx)
          line = SR_FM_FIRST_LINE + (unsigned)parser.context_mark.line;
        else
          line = SR_FM_FIRST_LINE + (unsigned)parser.problem_mark.line;
        r = INVALID(err, line, "YAML syntax error: %s%s%s", problem,
                    ctx ? " " : "", ctx ? parser.context : "");
      }
      break;
    }
    end = ev.type == YAML_STREAM_END_EVENT;
    r = on_event(&b, &ev);
    yaml_event_delete(&ev);
    if (r < 0 || end)
      break;
  }
  yaml_parser_delete(&parser);
  if (r < 0) {
    node_free(b.root);
    return r;
  }
  *out = b.root;
  return 0;
}

/* ------------------------------------------------------------ tree checks */

/* Keys are strings, bounded and unique in every mapping (strictyaml
 * refuses duplicates at any level); notes the first flow collection. */
static int check_tree(const struct node *n, unsigned *flow_line,
                      struct sr_error *err) {
  if (n->kind == NODE_SCALAR)
    return 0;
  if (n->flow && *flow_line == 0)
    *flow_line = n->line;
  for (size_t i = 0; i < n->n; i++) {
    const struct node *c = n->items[i];
    int r;

    if (n->kind == NODE_MAPPING && i % 2 == 0) {
      if (c->kind != NODE_SCALAR)
        return INVALID(err, c->line, "mapping keys must be plain strings");
      if (c->len > SR_MAX_KEY)
        return INVALID(err, c->line, "key longer than %d bytes", SR_MAX_KEY);
      for (size_t j = 0; j < i; j += 2)
        if (!strcmp(n->items[j]->str, c->str))
          return INVALID(err, c->line, "duplicate key '%s' (first on line %u)",
                         SHOWN(c->str), n->items[j]->line);
      continue;
    }
    r = check_tree(c, flow_line, err); /* bounded by SR_YAML_MAX_DEPTH */
    if (r < 0)
      return r;
  }
  return 0;
}

/* ------------------------------------------------------------ keys */

/* Loads what text that is not ASCII needs (text.h), or says why not. */
static int prepare_text(const struct node *v, const char *what,
                        struct sr_error *err) {
  char needed_for[64];

  snprintf(needed_for, sizeof(needed_for), "SKILL.md:%u: a non-ASCII %s",
           v->line, what);
  return sr_text_prepare(v->str, v->len, needed_for, err);
}

static int check_name(struct sr_manifest *m, const struct node *v,
                      struct sr_error *err) {
  _cleanup_free_ char *norm = NULL;
  size_t start, len, nlen = 0;
  enum sr_text_name chars;
  int r;

  if (v->kind != NODE_SCALAR)
    return INVALID(err, v->line, "name must be a string");
  r = prepare_text(v, "name", err);
  if (r < 0)
    return r;
  sr_text_strip(v->str, v->len, &start, &len);
  if (len == 0)
    return INVALID(err, v->line,
                   "name is empty: use lowercase letters, digits and hyphens");
  /* The reference checks the NFKC form of the stripped name. */
  norm = sr_text_nfkc(v->str + start, len, &nlen);
  if (!norm)
    return oom(err); /* libyaml guarantees UTF-8, so this is ENOMEM */
  if (sr_text_chars(norm, nlen) > SR_MAX_NAME)
    return INVALID(err, v->line, "name is %zu characters long; at most %d",
                   sr_text_chars(norm, nlen), SR_MAX_NAME);
  /* Recorded as written (the runs index, the audit's skill): its bytes
   * are bounded too, as NFKC would have them, not as decomposed. */
  if (len > SR_MANIFEST_NAME_MAX_BYTES)
    return INVALID(err, v->line,
                   "name is %zu bytes long as written; at most %d (use "
                   "fewer characters, or ones NFKC would make of them)",
                   len, SR_MANIFEST_NAME_MAX_BYTES);
  chars = sr_text_name_chars(norm, nlen);
  if (chars == SR_TEXT_NAME_NO_MEMORY)
    return oom(err);
  if (chars == SR_TEXT_NAME_NOT_LOWER)
    return INVALID(err, v->line,
                   "name '%s' must be lowercase (letters, digits, hyphens)",
                   SHOWN(norm));
  if (norm[0] == '-' || norm[nlen - 1] == '-')
    return INVALID(err, v->line,
                   "name '%s' must not start or end with a hyphen",
                   SHOWN(norm));
  if (strstr(norm, "--"))
    return INVALID(err, v->line,
                   "name '%s' must not contain two hyphens in a row",
                   SHOWN(norm));
  if (chars == SR_TEXT_NAME_BAD_CHAR)
    return INVALID(err, v->line,
                   "name '%s' may contain only letters, digits and "
                   "hyphens",
                   SHOWN(norm));
  m->name = strndup(v->str + start, len);
  if (!m->name)
    return oom(err);
  return 0;
}

static int check_description(struct sr_manifest *m, const struct node *v,
                             struct sr_error *err) {
  size_t start, len, n;
  int r;

  if (v->kind != NODE_SCALAR)
    return INVALID(err, v->line, "description must be a string");
  r = prepare_text(v, "description", err);
  if (r < 0)
    return r;
  sr_text_strip(v->str, v->len, &start, &len);
  if (len == 0)
    return INVALID(err, v->line,
                   "description is empty: say what the skill does and when "
                   "to use it");
  n = sr_text_chars(v->str, v->len);
  /* The specification's limit, which published skills pass (Anthropic's
   * claude-api has 1,068): accepted with a warning, refused by strict. */
  if (n > SR_MAX_DESCRIPTION) {
    r = add_warning(m, err,
                    "SKILL.md:%u: description is %zu characters long; the "
                    "specification allows at most %d",
                    v->line, n, SR_MAX_DESCRIPTION);
    if (r < 0)
      return r;
  }
  m->description = strdup(v->str);
  if (!m->description)
    return oom(err);
  return 0;
}

static int check_compatibility(struct sr_manifest *m, const struct node *v,
                               struct sr_error *err) {
  size_t n;
  int r;

  if (v->kind != NODE_SCALAR)
    return INVALID(err, v->line, "compatibility must be a string");
  r = prepare_text(v, "compatibility", err);
  if (r < 0)
    return r;
  /* The reference accepts an empty value, so do we. */
  n = sr_text_chars(v->str, v->len);
  if (n > SR_MAX_COMPATIBILITY)
    return INVALID(err, v->line,
                   "compatibility is %zu characters long; at most %d", n,
                   SR_MAX_COMPATIBILITY);
  m->compatibility = strdup(v->str);
  if (!m->compatibility)
    return oom(err);
  return 0;
}

static int check_license(struct sr_manifest *m, const struct node *v,
                         struct sr_error *err) {
  if (v->kind != NODE_SCALAR)
    /* The reference does not look at license at all. */
    return add_warning(m, err, "SKILL.md:%u: license is not a string (ignored)",
                       v->line);
  if (v->len > SR_MAX_STRING)
    return INVALID(err, v->line, "license longer than %d bytes", SR_MAX_STRING);
  m->license = strdup(v->str);
  if (!m->license)
    return oom(err);
  return 0;
}

static bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Splits s on blanks into sv; no quoting, no escapes. */
static int split_words(const char *s, struct sr_strv *sv, size_t max,
                       bool *too_many) {
  *too_many = false;
  for (const char *p = s; *p;) {
    _cleanup_free_ char *word = NULL;
    size_t n = 0;
    int r;

    while (*p && is_blank(*p))
      p++;
    while (p[n] && !is_blank(p[n]))
      n++;
    if (n == 0)
      break;
    if (sv->n >= max) {
      *too_many = true;
      return 0;
    }
    word = strndup(p, n);
    if (!word)
      return -ENOMEM;
    r = sr_strv_push(sv, word);
    if (r < 0)
      return r;
    p += n;
  }
  return 0;
}

/* The reference on its main branch does not check allowed-tools at all
 * (the specification says "space-separated string"; a list of strings is
 * the proposed extension), so any other shape is ignored with a warning. */
static int not_tools(struct sr_manifest *m, const struct node *v,
                     struct sr_error *err) {
  sr_strv_done(&m->allowed_tools);
  return add_warning(m, err,
                     "SKILL.md:%u: allowed-tools is not a space-separated "
                     "string or a list of strings (ignored)",
                     v->line);
}

/* A WebFetch(domain:NAME) tool joins the destinations the skill asks for
 * (skillrun-skill(5) "NETWORK").  allowed-tools is the specification's
 * field, not skillrun's: a malformed one is a warning, not a refusal. */
static int tools_network(struct sr_manifest *m, const struct node *v,
                         struct sr_error *err) {
  for (size_t i = 0; i < m->allowed_tools.n; i++) {
    const char *tool = m->allowed_tools.v[i];
    /* A list's items are the strings, in order; a string has one line. */
    unsigned line =
        v->kind == NODE_SEQUENCE && i < v->n ? v->items[i]->line : v->line;
    struct sr_netallow_entry e;
    char why[256], where[32];
    int r;

    snprintf(where, sizeof(where), "SKILL.md:%u", line);
    r = sr_netallow_parse_tool(tool, &e, why, sizeof(why));
    if (r == 0)
      continue;
    if (r < 0) {
      r = add_warning(m, err, "SKILL.md:%u: allowed-tools '%s': %s (ignored)",
                      line, SHOWN(tool), why);
      if (r < 0)
        return r;
      continue;
    }
    (void)snprintf(e.where, sizeof(e.where), "%s", where);
    memcpy(e.bound_where, e.where, sizeof(e.where));
    r = sr_netallow_add(&m->network_allow, &e);
    if (r == -E2BIG)
      return INVALID(err, line, "more than %d network destinations",
                     SR_NETALLOW_MAX);
    if (r < 0)
      return oom(err);
  }
  return 0;
}

static int check_allowed_tools(struct sr_manifest *m, const struct node *v,
                               struct sr_error *err) {
  bool too_many = false;

  if (v->kind == NODE_MAPPING)
    return not_tools(m, v, err);
  if (v->kind == NODE_SCALAR) {
    if (v->len > SR_MAX_STRING)
      return INVALID(err, v->line, "allowed-tools longer than %d bytes",
                     SR_MAX_STRING);
    if (split_words(v->str, &m->allowed_tools, SR_MAX_TOOLS, &too_many) < 0)
      return oom(err);
  } else {
    for (size_t i = 0; i < v->n; i++) {
      const struct node *t = v->items[i];

      if (t->kind != NODE_SCALAR)
        return not_tools(m, t, err);
      if (t->len > SR_MAX_STRING)
        return INVALID(err, t->line, "allowed-tools entry longer than %d bytes",
                       SR_MAX_STRING);
      if (m->allowed_tools.n >= SR_MAX_TOOLS) {
        too_many = true;
        break;
      }
      if (sr_strv_push(&m->allowed_tools, t->str) < 0)
        return oom(err);
    }
  }
  if (too_many)
    return INVALID(err, v->line, "allowed-tools has more than %d entries",
                   SR_MAX_TOOLS);
  /* The list is in metadata.json: a misleading entry is as malformed as
   * a wrong shape (its WebFetch destinations are not asked for either). */
  for (size_t i = 0; i < m->allowed_tools.n; i++) {
    const char *tool = m->allowed_tools.v[i];
    const size_t len = strlen(tool);
    uint32_t cp;
    size_t at = sr_name_misleading_at(tool, len, &cp);

    if (at < len) {
      sr_strv_done(&m->allowed_tools);
      return add_warning(m, err,
                         "SKILL.md:%u: allowed-tools entry %zu holds " MISLEADS
                         " (the list is ignored)",
                         v->line, i + 1, cp, at + 1);
    }
  }
  return tools_network(m, v, err);
}

/* "sandbox.entrypoint, sandbox.network, sandbox.memory, ...": the keys
 * skillrun reads, for the unknown-key error. */
/* skillrun's sandbox keys that are not limits, without "sandbox.". */
static const char *const sandbox_own_keys[] = {"entrypoint", "network",
                                               "network-allow", "inputs-types"};

static void sandbox_keys(char *buf, size_t len) {
  size_t used;

  buf[0] = '\0';
  for (size_t i = 0; i < SR_ARRAY_SIZE(sandbox_own_keys); i++) {
    used = strlen(buf);
    snprintf(buf + used, len - used, "%ssandbox.%s", i ? ", " : "",
             sandbox_own_keys[i]);
  }
  for (int id = 0; id < SR__LIM_MAX; id++) {
    if (!sr_limit_settable(id, SR_SRC_MANIFEST))
      continue;
    used = strlen(buf);
    snprintf(buf + used, len - used, ", sandbox.%s", sr_limit_defs[id].name);
  }
}

/* "sandbox.<name>" of a limit: the value in bytes / ms / count.  Zero only
 * where the limit's minimum is 0. */
static int set_limit(struct sr_manifest *m, enum sr_limit_id id,
                     const struct node *v, struct sr_error *err) {
  const struct sr_limit_def *d = &sr_limit_defs[id];
  const char *above = d->min > 0 ? " above 0" : "";
  uint64_t n = 0;
  int r = sr_limit_parse(d->kind, v->str, SR_LIMIT_MANIFEST_COUNT_MAX, &n);

  if (r == 0 && (n > 0 || d->min == 0)) {
    m->limits[id] = (struct sr_manifest_limit){true, n, v->line};
    return 0;
  }
  /* Well formed, but more than any limit could be: "use a size" would
   * send the author looking for a typo. */
  if (r == -ERANGE)
    return INVALID(err, v->line,
                   "sandbox.%s is '%s': too large to be a limit; declare what "
                   "the skill needs, e.g. %s",
                   d->name, SHOWN(v->str), d->example);
  switch (d->kind) {
  case SR_KIND_SIZE:
    return INVALID(err, v->line,
                   "sandbox.%s is '%s': use a size%s with an optional K, M, G "
                   "or T suffix, e.g. %s",
                   d->name, SHOWN(v->str), above, d->example);
  case SR_KIND_DURATION:
    return INVALID(err, v->line,
                   "sandbox.%s is '%s': use a duration%s with an optional ms, "
                   "s, m or h suffix, e.g. %s",
                   d->name, SHOWN(v->str), above, d->example);
  case SR_KIND_COUNT:
    break;
  }
  return INVALID(err, v->line,
                 "sandbox.%s is '%s': use a whole number%s%s%s, e.g. %s",
                 d->name, SHOWN(v->str), d->counted ? " of " : "",
                 d->counted ? d->counted : "", above, d->example);
}

/* " (it holds U+0430, not ASCII)" when key is not all ASCII: the reason a
 * key that reads as another was not taken for it, which the eye cannot
 * see.  "" otherwise. */
static const char *non_ascii_note(const char *key, char *buf, size_t size) {
  uint32_t c = sr_lookalike_first_non_ascii(key);

  if (c == 0)
    return "";
  snprintf(buf, size, " (it holds U+%04X, not ASCII)", (unsigned)c);
  return buf;
}
#define NON_ASCII_NOTE(k) non_ascii_note((k), (char[48]){0}, 48)

/*
 * The form in which a key is told to be skillrun's: NFKC (for a key that
 * is not ASCII, when libunistring can be loaded: full-width letters, a
 * no-break space), then its look-alike form (lookalike.h: without white
 * space or invisible characters, letters of other scripts that look like
 * ASCII ones read as those, in lowercase ASCII).  So a key written
 * " sandbox.memory", "Sandbox.memory", with a zero-width space, in
 * full-width letters or with a Cyrillic 'a' is refused rather than kept as
 * metadata, its limit lost.  NULL on ENOMEM.
 */
static char *key_form(const char *key) {
  _cleanup_free_ char *nfkc = NULL;
  struct sr_error ignored = {0};
  const char *s = key;
  size_t len = strlen(key), n = 0;

  if (sr_text_prepare(key, len, "a metadata key", &ignored) == 0 &&
      (nfkc = sr_text_nfkc(key, len, &n)) != NULL) {
    s = nfkc;
    len = n;
  }
  sr_error_clear(&ignored);
  return sr_lookalike_form(s, len);
}

/* What follows "sandbox" and its dot in a key_form read as skillrun's
 * (is_sandbox_form), or NULL: the dot may be punctuation outside ASCII,
 * for the dots UTS #39 does not give as look-alikes of '.' (an
 * ideographic full stop, a middle dot, a hyphenation point): a key
 * "sandbox\u3002memory" reads as skillrun's, and is refused as an unknown
 * one rather than kept as metadata, its limit lost.  A letter there
 * ("sandbox\u74b0\u5883", a word of another script) is metadata. */
static const char *sandbox_form_rest(const char *form) {
  size_t n;

  if (strncmp(form, "sandbox", 7) != 0)
    return NULL;
  if (form[7] == '.')
    return form + 8;
  n = sr_lookalike_punctuation(form + 7);
  return n ? form + 7 + n : NULL;
}

/* "sandbox" and "sandbox.*" (in the form of key_form): skillrun's. */
static bool is_sandbox_form(const char *form) {
  return !strcmp(form, "sandbox") || sandbox_form_rest(form) != NULL;
}

/* One of the keys apply_sandbox_key reads. */
static bool is_known_sandbox_key(const char *key) {
  int id;

  if (strncmp(key, "sandbox.", 8) != 0)
    return false;
  for (size_t i = 0; i < SR_ARRAY_SIZE(sandbox_own_keys); i++)
    if (!strcmp(key + 8, sandbox_own_keys[i]))
      return true;
  id = sr_limit_by_name(key + 8);
  return id >= 0 && sr_limit_settable(id, SR_SRC_MANIFEST);
}

/* skillrun's own declarations: string values of metadata "sandbox.*";
 * form is the key's key_form. */
static int apply_sandbox_key(struct sr_manifest *m, const struct node *k,
                             const char *form, const struct node *v,
                             struct sr_error *err) {
  const char *key = k->str, *s = v->str, *rest = sandbox_form_rest(form);
  _cleanup_free_ char *dotted = NULL;
  char known[512];
  int id;

  /* Another spelling of a key skillrun reads: said so.  Another spelling
   * of one it does not read is an unknown key, below. */
  if (rest && asprintf(&dotted, "sandbox.%s", rest) < 0)
    return oom(err);
  if (dotted && strcmp(key, dotted) != 0 && is_known_sandbox_key(dotted))
    return INVALID(err, k->line,
                   "metadata key '%s'%s: skillrun's sandbox keys are "
                   "lowercase ASCII without blanks (write '%s')",
                   SHOWN(key), NON_ASCII_NOTE(key), SHOWN(dotted));
  if (!strcmp(key, "sandbox.entrypoint")) {
    bool too_many;

    if (split_words(s, &m->entrypoint, SR_MAX_ENTRYPOINT, &too_many) < 0)
      return oom(err);
    if (too_many)
      return INVALID(err, v->line, "sandbox.entrypoint has more than %d words",
                     SR_MAX_ENTRYPOINT);
    if (m->entrypoint.n == 0)
      return INVALID(err, v->line,
                     "sandbox.entrypoint is empty: give the command to run, "
                     "words separated by blanks (no shell, no quoting)");
    m->entrypoint_line = v->line;
    return 0;
  }
  if (!strcmp(key, "sandbox.network")) {
    if (sr_network_mode_from_name(s, &m->network) < 0)
      return INVALID(err, v->line,
                     "sandbox.network is '%s': use 'deny', 'allowlist' or "
                     "'host' ('allow' is 'host')",
                     SHOWN(s));
    m->network_line = v->line;
    return 0;
  }
  if (!strcmp(key, "sandbox.inputs-types")) {
    const char *why;
    char bad[SR_TYPE_ENTRY_MAX + 8];
    int r = sr_type_list_parse(s, &m->inputs_types, &why, bad, sizeof(bad));

    if (r == -ENOMEM)
      return oom(err);
    if (r < 0 && bad[0])
      return INVALID(err, v->line, "sandbox.inputs-types: '%s': %s", SHOWN(bad),
                     why);
    if (r < 0)
      return INVALID(err, v->line, "sandbox.inputs-types: %s", why);
    m->inputs_types_line = v->line;
    return 0;
  }
  if (!strcmp(key, "sandbox.network-allow")) {
    char why[256], where[32];
    int r;

    snprintf(where, sizeof(where), "SKILL.md:%u", v->line);
    /* Names only: an address or a range is the platform's to permit. */
    r = sr_netallow_parse_list(s, 0, SR_NETALLOW_ORIGIN_MANIFEST, where,
                               &m->network_allow, why, sizeof(why));
    if (r == -EINVAL)
      return INVALID(err, v->line, "sandbox.network-allow: %s", why);
    if (r == -E2BIG)
      return INVALID(err, v->line,
                     "sandbox.network-allow has more than %d destinations",
                     SR_NETALLOW_MAX);
    if (r < 0)
      return oom(err);
    m->network_allow_line = v->line;
    return 0;
  }
  /* is_sandbox_form also lets a bare "sandbox" through. */
  id = strncmp(key, "sandbox.", strlen("sandbox.")) == 0
           ? sr_limit_by_name(key + strlen("sandbox."))
           : -1;
  if (id >= 0 && sr_limit_settable(id, SR_SRC_MANIFEST))
    return set_limit(m, id, v, err);
  /* A typo must not silently drop a limit. */
  if (sandbox_form_rest(form)) {
    struct sr_nearest near;

    sr_nearest_init(&near, sandbox_form_rest(form));
    for (size_t i = 0; i < SR_ARRAY_SIZE(sandbox_own_keys); i++)
      sr_nearest_offer(&near, sandbox_own_keys[i]);
    for (id = 0; id < SR__LIM_MAX; id++)
      if (sr_limit_settable(id, SR_SRC_MANIFEST))
        sr_nearest_offer(&near, sr_limit_defs[id].name);
    if (near.best)
      return INVALID(err, k->line,
                     "unknown sandbox key '%s'%s in metadata (did you "
                     "mean 'sandbox.%s'?)",
                     SHOWN(key), NON_ASCII_NOTE(key), near.best);
  }
  sandbox_keys(known, sizeof(known));
  return INVALID(err, k->line,
                 "unknown sandbox key '%s'%s in metadata (known: %s)",
                 SHOWN(key), NON_ASCII_NOTE(key), known);
}

static int check_metadata(struct sr_manifest *m, const struct node *v,
                          struct sr_error *err) {
  size_t n_entries;

  if (v->kind == NODE_SCALAR && v->len == 0)
    return 0; /* "metadata:" with nothing after it */
  if (v->kind != NODE_MAPPING)
    /* The reference passes this through unchecked. */
    return add_warning(m, err,
                       "SKILL.md:%u: metadata is not a mapping of "
                       "'key: value' lines (ignored)",
                       v->line);
  n_entries = v->n / 2;
  if (n_entries > SR_MAX_METADATA)
    return INVALID(err, v->items[2 * SR_MAX_METADATA]->line,
                   "metadata has more than %d entries", SR_MAX_METADATA);
  m->metadata = calloc(n_entries ? n_entries : 1, sizeof(*m->metadata));
  if (!m->metadata)
    return oom(err);
  for (size_t i = 0; i + 1 < v->n; i += 2) {
    const struct node *k = v->items[i], *val = v->items[i + 1];
    _cleanup_free_ char *form = key_form(k->str);
    struct sr_kv *kv;
    int r;

    if (!form)
      return oom(err);
    if (val->kind != NODE_SCALAR) {
      if (is_sandbox_form(form))
        return INVALID(err, k->line,
                       "metadata '%s' must be a string value; write flat "
                       "keys such as 'sandbox.memory: 256M'",
                       SHOWN(k->str));
      /* The reference turns it into its Python repr and accepts it. */
      r = add_warning(m, err,
                      "SKILL.md:%u: metadata '%s' is not a string (ignored; "
                      "the specification wants string values)",
                      k->line, SHOWN(k->str));
      if (r < 0)
        return r;
      continue;
    }
    if (val->len > SR_MAX_STRING)
      return INVALID(err, val->line, "metadata '%s' longer than %d bytes",
                     SHOWN(k->str), SR_MAX_STRING);
    kv = &m->metadata[m->n_metadata];
    kv->key = strdup(k->str);
    kv->value = strdup(val->str);
    kv->line = k->line;
    m->n_metadata++; /* counted now so that sr_manifest_done frees it */
    if (!kv->key || !kv->value)
      return oom(err);
    if (!strcmp(k->str, "version")) {
      /* The version is in every audit line and metadata.json: held to
       * what --label holds a caller's values to. */
      uint32_t cp;
      size_t at = sr_name_misleading_at(val->str, val->len, &cp);

      if (at < val->len)
        return INVALID(err, val->line, "metadata version holds " MISLEADS, cp,
                       at + 1);
      m->version = strdup(val->str);
      if (!m->version)
        return oom(err);
    } else if (is_sandbox_form(form)) {
      r = apply_sandbox_key(m, k, form, val, err);
      if (r < 0)
        return r;
    }
  }
  return 0;
}

static int check_name_matches_dir(struct sr_manifest *m, unsigned line,
                                  const char *dirname, struct sr_error *err) {
  _cleanup_free_ char *a = NULL, *b = NULL;
  size_t alen = 0, blen = 0;

  /* The reference compares NFKC forms of both.  The name is prepared
   * already; a directory name that cannot be is only a warning's worth. */
  if (sr_text_prepare(dirname, strlen(dirname), "a non-ASCII directory name",
                      err) < 0)
    sr_error_clear(err);
  a = sr_text_nfkc(m->name, strlen(m->name), &alen);
  b = sr_text_nfkc(dirname, strlen(dirname), &blen);
  if (a && b && alen == blen && memcmp(a, b, alen) == 0)
    return 0;
  return add_warning(m, err,
                     "SKILL.md:%u: name '%s' differs from the bundle "
                     "directory name '%s' (the reference validator rejects "
                     "it)",
                     line, SHOWN(m->name), SHOWN(dirname));
}

/* Destinations beside a mode that has no use for them. */
static int check_network(struct sr_manifest *m, struct sr_error *err) {
  if (m->network_allow_line == 0 ||
      (m->network != SR_NET_DENY && m->network != SR_NET_HOST))
    return 0;
  return add_warning(m, err,
                     "SKILL.md:%u: sandbox.network-allow has no effect with "
                     "sandbox.network %s (ignored)",
                     m->network_allow_line, sr_network_mode_name(m->network));
}

static int check_top(struct sr_manifest *m, const struct node *root,
                     const char *dirname, struct sr_error *err) {
  const struct node *name = NULL, *description = NULL;
  unsigned flow_line = 0;
  int r;

  if (root->kind != NODE_MAPPING)
    return INVALID(err, root->line,
                   "the front matter must be a YAML mapping of 'key: value' "
                   "lines");
  r = check_tree(root, &flow_line, err);
  if (r < 0)
    return r;

  for (size_t i = 0; i + 1 < root->n; i += 2) {
    const struct node *k = root->items[i], *v = root->items[i + 1];
    const char *key = k->str;
    _cleanup_free_ char *form = NULL;

    if (!strcmp(key, "name")) {
      name = v;
      r = check_name(m, v, err);
    } else if (!strcmp(key, "description")) {
      description = v;
      r = check_description(m, v, err);
    } else if (!strcmp(key, "license"))
      r = check_license(m, v, err);
    else if (!strcmp(key, "compatibility"))
      r = check_compatibility(m, v, err);
    else if (!strcmp(key, "metadata"))
      r = check_metadata(m, v, err);
    else if (!strcmp(key, "allowed-tools"))
      r = check_allowed_tools(m, v, err);
    else if (!(form = key_form(key)))
      return oom(err);
    else if (is_sandbox_form(form) || !strcmp(form, "metadata"))
      /* Not a mere unknown key: the declarations it holds would be lost
       * (a limit the skill lowers, its entrypoint). */
      return INVALID(err, k->line,
                     "'%s'%s is not a top-level key: write skillrun's "
                     "declarations under 'metadata:' (lowercase ASCII), one "
                     "per line, indented, such as 'sandbox.memory: 256M'",
                     SHOWN(key), NON_ASCII_NOTE(key));
    else
      r = add_warning(m, err,
                      "SKILL.md:%u: unknown top-level key '%s' (the "
                      "reference validator rejects it)",
                      k->line, SHOWN(key));
    if (r < 0)
      return r;
  }
  if (!name)
    return INVALID(err, 1,
                   "missing required key 'name' (lowercase letters, digits "
                   "and hyphens, at most %d characters)",
                   SR_MAX_NAME);
  if (!description)
    return INVALID(err, 1,
                   "missing required key 'description' (what the skill does, "
                   "at most %d characters)",
                   SR_MAX_DESCRIPTION);
  if (flow_line) {
    r = add_warning(m, err,
                    "SKILL.md:%u: flow-style YAML ('[...]' or '{...}') (the "
                    "reference validator rejects it; write one item per "
                    "line)",
                    flow_line);
    if (r < 0)
      return r;
  }
  r = check_network(m, err);
  if (r < 0)
    return r;
  if (dirname)
    return check_name_matches_dir(m, name->line, dirname, err);
  return 0;
}

/* ------------------------------------------------------------ API */

int sr_manifest_parse(const char *buf, size_t len, const char *dirname,
                      struct sr_manifest *out, struct sr_error *err) {
  _cleanup_(node_freep) struct node *root = NULL;
  struct sr_manifest m = {0};
  const char *fm = NULL;
  size_t fm_len = 0;
  int r;

  if (!buf && len > 0)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "manifest_invalid",
                        "SKILL.md: no buffer");
  if (len > SR_MANIFEST_MAX_BYTES)
    return INVALID(err, 1, "file is larger than %d bytes (1 MiB)",
                   SR_MANIFEST_MAX_BYTES);
  r = find_front_matter(buf ? buf : "", len, &fm, &fm_len, err);
  if (r < 0)
    return r;
  r = check_line_breaks(fm, fm_len, err);
  if (r < 0)
    return r;
  r = parse_yaml(fm, fm_len, &root, err);
  if (r < 0)
    return r;
  if (!root)
    return INVALID(err, SR_FM_FIRST_LINE,
                   "the front matter is empty: it needs at least 'name' and "
                   "'description'");
  r = check_top(&m, root, dirname, err);
  if (r < 0) {
    sr_manifest_done(&m);
    return r;
  }
  *out = m;
  return 0;
}

int sr_manifest_load_at(int dirfd, const char *dirname, struct sr_manifest *out,
                        struct sr_error *err) {
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  int r;

  r = sr_read_file_at(dirfd, "SKILL.md", SR_MANIFEST_MAX_BYTES, &buf, &len);
  if (r == -ENOENT)
    return sr_error_set(err, SR_EXIT_REFUSED, ENOENT, REASON,
                        "SKILL.md: a skill bundle needs a SKILL.md file at "
                        "its root");
  if (r == -EFBIG)
    return INVALID(err, 1, "file is larger than %d bytes (1 MiB)",
                   SR_MANIFEST_MAX_BYTES);
  if (r == -EINVAL || r == -ELOOP)
    /* sr_read_file_at: not a regular file (O_NOFOLLOW: a symlink). */
    return sr_error_set(err, SR_EXIT_REFUSED, 0, REASON,
                        "SKILL.md: must be a regular file");
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "manifest_read",
                        "SKILL.md: read");
  return sr_manifest_parse(buf, len, dirname, out, err);
}

void sr_manifest_done(struct sr_manifest *m) {
  if (!m)
    return;
  free(m->name);
  free(m->description);
  free(m->license);
  free(m->compatibility);
  free(m->version);
  sr_strv_done(&m->allowed_tools);
  for (size_t i = 0; i < m->n_metadata; i++) {
    free(m->metadata[i].key);
    free(m->metadata[i].value);
  }
  free(m->metadata);
  sr_strv_done(&m->entrypoint);
  sr_strv_done(&m->inputs_types);
  sr_netallow_done(&m->network_allow);
  sr_strv_done(&m->warnings);
  *m = (struct sr_manifest){0};
}
