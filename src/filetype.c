/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Declared input types (filetype.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "filetype.h"

/* RFC 6838 restricted-name characters, lowercase (entries are lowercased
 * before they are checked). */
static bool mime_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         strchr("!#$&^_.+-", c) != NULL;
}

static bool mime_name(const char *s, size_t n) {
  if (n == 0 || n > SR_TYPE_ENTRY_MAX ||
      !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
    return false;
  for (size_t i = 0; i < n; i++)
    if (!mime_char(s[i]))
      return false;
  return true;
}

static bool ext_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '+' || c == '-';
}

int sr_type_entry_check(const char *e, const char **why) {
  const char *slash;
  size_t n = e ? strlen(e) : 0;

  *why = NULL;
  if (n == 0 || n > SR_TYPE_ENTRY_MAX) {
    *why = "an entry is 1 to 127 bytes";
    return -EINVAL;
  }
  for (size_t i = 0; i < n; i++)
    if (e[i] >= 'A' && e[i] <= 'Z') {
      *why = "entries are lowercase";
      return -EINVAL;
    }
  if (e[0] == '.') {
    if (n < 2 || n > 33) {
      *why = "an extension is '.' and 1 to 32 characters";
      return -EINVAL;
    }
    for (size_t i = 1; i < n; i++)
      if (!ext_char(e[i])) {
        *why = "an extension is '.' and letters, digits, '_', '+' or '-' "
               "(one extension, such as .docx; no inner '.')";
        return -EINVAL;
      }
    return 0;
  }
  slash = strchr(e, '/');
  if (!slash || !mime_name(e, (size_t)(slash - e)) ||
      !(mime_name(slash + 1, strlen(slash + 1)) || !strcmp(slash + 1, "*"))) {
    *why = "neither a MIME type (type/subtype or type/*) nor an extension "
           "(.ext)";
    return -EINVAL;
  }
  return 0;
}

int sr_type_list_add(struct sr_strv *list, const char *entry,
                     const char **why) {
  char lower[SR_TYPE_ENTRY_MAX + 1] = {0};
  size_t n = strlen(entry);
  int r;

  if (n > SR_TYPE_ENTRY_MAX) {
    *why = "an entry is 1 to 127 bytes";
    return -EINVAL;
  }
  memcpy(lower, entry, n + 1);
  for (size_t i = 0; i < n; i++)
    if (lower[i] >= 'A' && lower[i] <= 'Z')
      lower[i] = (char)(lower[i] - 'A' + 'a');
  r = sr_type_entry_check(lower, why);
  if (r < 0)
    return r;
  if (sr_strv_contains(list, lower))
    return 0;
  if (list->n >= SR_TYPES_MAX) {
    *why = "more than 64 entries";
    return -EINVAL;
  }
  return sr_strv_push(list, lower);
}

int sr_type_list_parse(const char *text, struct sr_strv *out, const char **why,
                       char *bad_buf, size_t bad_len) {
  struct sr_strv list = {0};
  const char *s = text ? text : "";
  int r = 0;

  *why = NULL;
  if (bad_len)
    bad_buf[0] = '\0';
  while (*s) {
    char word[SR_TYPE_ENTRY_MAX + 2];
    size_t n = strcspn(s, " \t,");

    if (n == 0) {
      s++;
      continue;
    }
    if (n > SR_TYPE_ENTRY_MAX) {
      *why = "an entry is 1 to 127 bytes";
      snprintf(bad_buf, bad_len, "%.*s...", 32, s);
      r = -EINVAL;
      break;
    }
    memcpy(word, s, n);
    word[n] = '\0';
    r = sr_type_list_add(&list, word, why);
    if (r < 0) {
      snprintf(bad_buf, bad_len, "%s", word);
      break;
    }
    s += n;
  }
  if (r >= 0 && list.n == 0) {
    *why = "no entry: give MIME types and .extensions, separated by blanks";
    r = -EINVAL;
  }
  if (r < 0) {
    sr_strv_done(&list);
    return r;
  }
  *out = list;
  return 0;
}

/* The extension of the last component of name, or NULL ("x.tar.gz": "gz";
 * ".profile", "x.", "x": none). */
static const char *name_extension(const char *name) {
  const char *base = strrchr(name, '/');
  const char *dot;

  base = base ? base + 1 : name;
  dot = strrchr(base, '.');
  if (!dot || dot == base || !dot[1])
    return NULL;
  return dot + 1;
}

/* Whether ext is one of the '/'-separated list. */
static bool in_ext_list(const char *list, const char *ext) {
  size_t n = strlen(ext);

  for (const char *s = list; *s;) {
    size_t k = strcspn(s, "/");
    if (k == n && !strncasecmp(s, ext, n))
      return true;
    s += k;
    if (*s)
      s++;
  }
  return false;
}

static bool mime_matches(const char *entry, const char *mime) {
  size_t n = strlen(entry);

  if (n >= 2 && !strcmp(entry + n - 2, "/*"))
    return !strncasecmp(mime, entry, n - 1); /* "image/" */
  return !strcasecmp(entry, mime);
}

bool sr_type_list_accepts(const struct sr_strv *entries, const char *name,
                          const char *mime, const char *exts) {
  const char *ext = name_extension(name);

  for (size_t i = 0; i < entries->n; i++) {
    const char *e = entries->v[i];

    if (e[0] == '.') {
      /* The name says it, and the content does not contradict it. */
      if (ext && !strcasecmp(ext, e + 1) && exts && in_ext_list(exts, ext))
        return true;
    } else if (mime && mime_matches(e, mime)) {
      return true;
    }
  }
  return false;
}
