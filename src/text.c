/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <unicase.h>
#include <unictype.h>
#include <uninorm.h>
#include <unistr.h>
#include <unistring/version.h>

#include "dlib.h"
#include "text.h"

/* u8_mbtouc may be an inline in unistr.h; the library exports it too. */
#define SR_UNI_SYMBOLS(X)                                                      \
  X(u8_mbtouc)                                                                 \
  X(u8_mbsnlen)                                                                \
  X(u8_check)                                                                  \
  X(u8_normalize)                                                              \
  X(u8_tolower)                                                                \
  X(uc_bidi_class)                                                             \
  X(uc_is_general_category)                                                    \
  X(UC_CATEGORY_Zs)                                                            \
  X(UC_CATEGORY_L)                                                             \
  X(UC_CATEGORY_N)                                                             \
  X(uninorm_nfkc)                                                              \
  X(_libunistring_version)
static struct { SR_UNI_SYMBOLS(SR_DLIB_MEMBER) } uni;

SR_DLOPEN_NOTE(sr_uni_note, "unicode",
               "non-ASCII names and descriptions in SKILL.md",
               SR_LIBUNISTRING_SONAME);

static bool ascii(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)s[i] >= 0x80)
      return false;
  return true;
}

SR_DLIB_LOADER(load, uni, SR_UNI_SYMBOLS, SR_LIBUNISTRING_SONAME)

/* `uni` is filled only when every symbol resolved. */
static bool uni_loaded(void) {
  return uni.u8_mbtouc != NULL;
}

int sr_text_lib_version(void) {
  struct sr_error e = {0};

  return load("--version", &e) == 0 ? *uni._libunistring_version : -1;
}

int sr_text_prepare(const char *s, size_t len, const char *what,
                    struct sr_error *err) {
  return ascii(s, len) ? 0 : load(what, err);
}

bool sr_text_ascii_isspace(unsigned char c) {
  /* \t \n \v \f \r, the separators \x1c-\x1f (bidi class B or S), space */
  return (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20);
}

bool sr_text_ascii_isalnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

unsigned char sr_text_ascii_lower(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

/* Python's str.isspace(): general category Zs, or bidirectional class WS,
 * B or S. */
static bool uni_isspace(ucs4_t c) {
  int bidi = uni.uc_bidi_class(c);

  return uni.uc_is_general_category(c, *uni.UC_CATEGORY_Zs) ||
         bidi == UC_BIDI_WS || bidi == UC_BIDI_B || bidi == UC_BIDI_S;
}

void sr_text_strip(const char *s, size_t len, size_t *start, size_t *slen) {
  const uint8_t *u = (const uint8_t *)s;
  size_t i = 0, first = len, last = 0;
  bool a = ascii(s, len);

  if (!a && !uni_loaded()) {
    *start = 0;
    *slen = len;
    return;
  }
  while (i < len) {
    ucs4_t c = u[i];
    int k = 1;

    if (!a) {
      k = uni.u8_mbtouc(&c, u + i, len - i);
      if (k <= 0)
        k = 1;
    }
    if (a ? !sr_text_ascii_isspace((unsigned char)c) : !uni_isspace(c)) {
      if (first == len)
        first = i;
      last = i + (size_t)k;
    }
    i += (size_t)k;
  }
  *start = first == len ? 0 : first;
  *slen = first == len ? 0 : last - first;
}

size_t sr_text_chars(const char *s, size_t len) {
  if (ascii(s, len))
    return len;
  return uni_loaded() ? uni.u8_mbsnlen((const uint8_t *)s, len) : SIZE_MAX;
}

char *sr_text_nfkc(const char *s, size_t len, size_t *out_len) {
  uint8_t *r, *t;
  size_t n = 0;

  /* NFKC leaves every ASCII character as it is. */
  if (ascii(s, len)) {
    t = malloc(len + 1);
    if (!t)
      return NULL;
    memcpy(t, s, len);
    t[len] = '\0';
    *out_len = len;
    return (char *)t;
  }
  if (!uni_loaded() || uni.u8_check((const uint8_t *)s, len))
    return NULL;
  r = uni.u8_normalize(uni.uninorm_nfkc, (const uint8_t *)s, len, NULL, &n);
  if (!r)
    return NULL;
  t = realloc(r, n + 1);
  if (!t) {
    free(r);
    return NULL;
  }
  t[n] = '\0';
  *out_len = n;
  return (char *)t;
}

enum sr_text_name sr_text_name_chars(const char *norm, size_t len) {
  uint8_t *lower;
  size_t llen = 0;
  bool same;

  if (ascii(norm, len)) {
    for (size_t i = 0; i < len; i++)
      if (sr_text_ascii_lower((unsigned char)norm[i]) != (unsigned char)norm[i])
        return SR_TEXT_NAME_NOT_LOWER;
    for (size_t i = 0; i < len; i++)
      if (norm[i] != '-' && !sr_text_ascii_isalnum((unsigned char)norm[i]))
        return SR_TEXT_NAME_BAD_CHAR;
    return SR_TEXT_NAME_OK;
  }
  if (!uni_loaded())
    return SR_TEXT_NAME_BAD_CHAR;
  lower = uni.u8_tolower((const uint8_t *)norm, len, NULL, NULL, NULL, &llen);
  if (!lower)
    return SR_TEXT_NAME_NO_MEMORY;
  same = llen == len && memcmp(lower, norm, len) == 0;
  free(lower);
  if (!same)
    return SR_TEXT_NAME_NOT_LOWER;
  for (size_t i = 0; i < len;) {
    ucs4_t c;
    int k = uni.u8_mbtouc(&c, (const uint8_t *)norm + i, len - i);

    /* Python's isalnum(): a letter (L*) or a number (N*). */
    if (c != '-' && !uni.uc_is_general_category(c, *uni.UC_CATEGORY_L) &&
        !uni.uc_is_general_category(c, *uni.UC_CATEGORY_N))
      return SR_TEXT_NAME_BAD_CHAR;
    i += k > 0 ? (size_t)k : 1;
  }
  return SR_TEXT_NAME_OK;
}
