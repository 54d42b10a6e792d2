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
 * Length of the well-formed UTF-8 sequence at p (n > 0 bytes available,
 * Unicode table 3-7: no overlong forms, no surrogates, nothing above
 * U+10FFFF), or 0 with *skip set to the length of its maximal ill-formed
 * subpart (Unicode's "best practice": each such subpart is one error).  A
 * sequence cut short by the end of the buffer is ill-formed here.
 */
size_t sr_utf8_seq(const unsigned char *p, size_t n, size_t *skip);
/* Whether s[0..len) is well-formed UTF-8. */
bool sr_utf8_valid(const char *s, size_t len);
/* How many of the len bytes of s to keep for at most max: len, or max
 * moved back to the start of the UTF-8 sequence it falls in. */
size_t sr_utf8_cut(const char *s, size_t len, size_t max);
/* The code point of the well-formed UTF-8 sequence p[0..n) (sr_utf8_seq). */
uint32_t sr_utf8_code_point(const unsigned char *p, size_t n);

/*
 * A file name for the record: when it is not valid UTF-8, or holds a C0 or
 * C1 control, DEL, a bidirectional formatting character (U+061C,
 * U+200E, U+200F, U+202A..U+202E, U+2066..U+2069: they reorder what a
 * terminal or a listing shows) or a line separator (U+2028, U+2029: some
 * readers end a line there), or a backslash, it needs escaping
 * (sr_name_escape).
 */
bool sr_name_needs_escape(const char *s, size_t len);
/* Whether such a name holds a control, a bidirectional formatting
 * character or a line separator; of the bytes that are not UTF-8, one of
 * 0x80 - 0x9f, which a terminal of 8-bit characters reads as a C1 control
 * (0x9b as ESC [), as sr_error_for_terminal shows it. */
bool sr_name_misleads(const char *s, size_t len);
/* Where the first such character of s[0..len) is, and its code point in
 * *cp (a byte that is not UTF-8: the byte); len when there is none. */
size_t sr_name_misleading_at(const char *s, size_t len, uint32_t *cp);
/*
 * The display form of such a name, NUL-terminated and malloc'd (NULL on
 * ENOMEM): each byte that is not part of well-formed UTF-8, each C0 control,
 * DEL and the backslash as \xHH; each C1 control, bidirectional formatting
 * character and line separator as \uHHHH; everything else as is.  Two
 * names never share a display form (the backslash of an escape is never
 * the name's own), though the record still carries the raw bytes beside
 * it (base64).
 */
char *sr_name_escape(const char *s, size_t len);

/*
 * Bytes written to a terminal (--log-passthrough), escaped as a stream:
 * '\n' and '\t' pass; every other C0 control (ESC, CR, BEL...), DEL and
 * each byte that is not part of well-formed UTF-8 become \xHH, each C1
 * control (U+0080..U+009F, which 8-bit terminals read as CSI, OSC...),
 * bidirectional formatting character and line separator (as for a name,
 * above) \uHHHH.  A sequence cut by the end of one chunk is held (at most 3
 * bytes) until the next; sr_term_escape_flush writes what is held.
 */
struct sr_term_escape {
  unsigned char held[4];
  size_t n_held;
};
/* Room out needs for n bytes of input: every byte may become 6. */
#define SR_TERM_ESCAPE_MAX(n) (6 * ((n) + 4))
/* Escapes in[0..n) into out (at least SR_TERM_ESCAPE_MAX(n) bytes, not
 * NUL-terminated); returns the bytes written. */
size_t sr_term_escape(struct sr_term_escape *st, const char *in, size_t n,
                      char *out);
size_t sr_term_escape_flush(struct sr_term_escape *st, char *out);

/* s[0..len) is well-formed UTF-8 (no overlong form, surrogate or code point
 * above U+10FFFF) without control characters (C0, DEL, C1). */
bool sr_valid_utf8_text(const char *s, size_t len);

/* --label KEY=VALUE (skillrun(1)): at most SR_LABELS_MAX of them, keys
 * [a-z][a-z0-9_.-]{0,62}, values of at most SR_LABEL_VALUE_MAX bytes of
 * UTF-8 text (sr_valid_utf8_text), possibly empty. */
#define SR_LABELS_MAX 32
#define SR_LABEL_KEY_MAX 63
#define SR_LABEL_VALUE_MAX 512
bool sr_valid_label_key(const char *s);
bool sr_valid_label_value(const char *s);
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

/*
 * Makes room for index i in the array *v of *cap elements of size sz:
 * `first` (> 0) elements at first, then doubling until i fits; the new
 * elements are zeroed.  0, or -ENOMEM (also when the size would
 * overflow) with *v and *cap untouched.
 */
int sr_grow_array(void **v, size_t *cap, size_t i, size_t sz, size_t first);

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
