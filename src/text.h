/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/*
 * The text rules of SKILL.md (skillrun-skill(5)), as the reference validator
 * applies them with Python's str methods: strip(), len() in code points,
 * NFKC, lower(), isalnum().
 *
 * Text that is all ASCII is handled here; anything else through
 * libunistring, which is opened with dlopen (dlib.h) the first time such
 * text is seen: most manifests are ASCII, and a mapped libunistring (1.9 MB)
 * costs every sandboxed launch 0.1 - 0.2 ms.  test-text checks the ASCII
 * rules against libunistring's for every ASCII character.
 *
 * sr_text_prepare must have succeeded for a text before the other functions
 * see it; for a text they cannot handle otherwise they answer as for an
 * invalid one (no strip, SIZE_MAX characters, NULL).
 */

/* 0 when s[0..len) is ASCII or libunistring is loaded; else exit 125,
 * reason "library_unavailable", naming what needed it (`what`, e.g.
 * "SKILL.md:2: a non-ASCII name"). */
int sr_text_prepare(const char *s, size_t len, const char *what,
                    struct sr_error *err);

/* Bounds of s without leading and trailing white space (Python strip()). */
void sr_text_strip(const char *s, size_t len, size_t *start, size_t *slen);
/* Code points in s (valid UTF-8). */
size_t sr_text_chars(const char *s, size_t len);
/* NFKC form, NUL-terminated, or NULL (invalid UTF-8, ENOMEM). */
char *sr_text_nfkc(const char *s, size_t len, size_t *out_len);

enum sr_text_name {
  SR_TEXT_NAME_OK,
  SR_TEXT_NAME_NOT_LOWER, /* lower() would change it */
  SR_TEXT_NAME_BAD_CHAR,  /* not a letter, digit or hyphen */
  SR_TEXT_NAME_NO_MEMORY,
};
/* The characters of an NFKC name: lowercase letters, digits, hyphens. */
enum sr_text_name sr_text_name_chars(const char *norm, size_t len);

/* libunistring's version, (major << 16) | (minor << 8) | subminor (opening
 * it), or -1 when it cannot be loaded. */
int sr_text_lib_version(void);

/* The ASCII rules (public for test-text): Python's isspace(), isalnum()
 * and lower() of one ASCII character. */
bool sr_text_ascii_isspace(unsigned char c);
bool sr_text_ascii_isalnum(unsigned char c);
unsigned char sr_text_ascii_lower(unsigned char c);
