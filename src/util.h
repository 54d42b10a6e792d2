/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pure helpers: no syscalls (the clocks and sr_random_uuid, which make
 * some, are in fdutil.h). */

/*
 * Sizes: "512M", "10MiB", "1G", "4096", "64k".  Suffixes K/M/G/T (binary,
 * case-insensitive, optional "i" and "B").  0 .. 2^62.  Returns 0 or -EINVAL/
 * -ERANGE; *out untouched on failure.
 */
int sr_parse_size(const char *s, uint64_t *out);
/* Durations: "30s", "5m", "1h", "250ms", "90" (seconds).  Result in ms. */
int sr_parse_duration_ms(const char *s, uint64_t *out);
/* Decimal unsigned integer, no sign, no suffix, <= max. */
int sr_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* "yes"/"no"/"true"/"false"/"1"/"0". */
int sr_parse_bool(const char *s, bool *out);

/* Human form used in messages and --explain ("512MiB", "1.5GiB", "300B"). */
void sr_format_size(uint64_t bytes, char *buf, size_t len);
/* "30s", "1500ms", "5m". */
void sr_format_duration_ms(uint64_t ms, char *buf, size_t len);

/* Tenant and execution ids: [A-Za-z0-9][A-Za-z0-9._-]{0,63}, no "..". */
bool sr_valid_id(const char *s);
/* Lowercase hex, exactly `len` hex digits. */
bool sr_valid_hex(const char *s, size_t len);
/* A single path component: non-empty, not "." or "..", no '/', no control
 * characters, at most 255 bytes. */
bool sr_valid_filename(const char *s);
/* True when s contains a byte < 0x20 or 0x7f. */
bool sr_has_control_chars(const char *s);
/*
 * The one check of an absolute path that names something on the host or in
 * the sandbox (profile binds and /etc files, staged objects, conf paths):
 * starts with '/'; no empty, "." or ".." component, so no "//" and no
 * trailing '/' ("/" itself excepted); no component over 255 bytes; shorter
 * than PATH_MAX; no control characters.
 */
bool sr_valid_abs_path(const char *s);
/* path is dir or below it, component-wise ("/tmpdata" is not below "/tmp");
 * both valid as above. */
bool sr_path_at_or_below(const char *path, const char *dir);
/* s made safe to print in one message line: control characters become
 * '?', and a value longer than len - 4 bytes is cut with "...".  Returns
 * buf. */
const char *sr_printable(const char *s, char *buf, size_t len);
/*
 * A name under /workspace/inputs (skillrun(1) --input): one file name, or
 * one directory and a file name ("materials/doc.pdf"), each a valid file
 * name; never absolute, never an empty, "." or ".." component, never the
 * reserved "bundle" (the bundle's mount point) as the first component.
 * 0, or -EINVAL with *why naming the rule broken (a static string).
 */
int sr_input_name_check(const char *name, const char **why);

/*
 * "Did you mean": the known name closest to what was typed, by optimal
 * string alignment distance (insertions, deletions, substitutions and
 * transpositions of neighbours each cost 1, so "memroy" is 1 from
 * "memory").  Offer every known name; `best` is NULL unless one is near
 * enough to be a likely typo: at most 1 edit for names of up to 3 bytes, 2
 * up to 8, 3 beyond.  Names over 64 bytes are never near.
 */
struct sr_nearest {
  const char *typed;
  const char *best; /* the offered pointer itself, not a copy */
  size_t dist;
};
void sr_nearest_init(struct sr_nearest *n, const char *typed);
void sr_nearest_offer(struct sr_nearest *n, const char *known);
/* The distance itself (SIZE_MAX when a string is over 64 bytes). */
size_t sr_edit_distance(const char *a, const char *b);

/* Lowercase hex of n bytes into out (2n+1 bytes). */
void sr_hex(const unsigned char *in, size_t n, char *out);

/* strndup that takes NULL (and returns it); NULL on ENOMEM too. */
char *sr_strndup_safe(const char *s, size_t max);

/* Dynamic array of strings, NULL-terminated once not empty (v is NULL
 * while n is 0). */
struct sr_strv {
  char **v;
  size_t n;
};
int sr_strv_push(struct sr_strv *sv, const char *s); /* copies s */
bool sr_strv_contains(const struct sr_strv *sv, const char *s);
void sr_strv_done(struct sr_strv *sv);
#define _cleanup_strv_ _cleanup_(sr_strv_done)
