/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

/*
 * The look-alike form of a SKILL.md key (skillrun-skill(5)): what a key
 * reads as on screen, so that one spelt with an invisible character or with
 * letters of another script is told to be skillrun's ("sandbox.memory")
 * rather than kept as a mere metadata key, its limit lost.
 *
 * From s[0..len) (valid UTF-8, NFKC form when it could be made), it drops
 * the Default_Ignorable_Code_Point characters (zero-width space and
 * joiners, word joiner, soft hyphen, byte order mark, variation
 * selectors, bidirectional controls...) and ASCII white space, turns the
 * characters Unicode's confusables.txt (UTS #39) gives as look-alikes of
 * the letters, '.' and '-' of skillrun's key names into those, and ASCII
 * letters into lowercase.  Anything else is kept as it is.  NULL on ENOMEM.
 */
char *sr_lookalike_form(const char *s, size_t len);

/* The length in bytes of the character s starts with when it is
 * punctuation outside ASCII (a dot, stop or middle dot of another script
 * or of a CJK input method: U+3002, U+FF61, U+00B7, U+2027, U+066B,
 * U+1803...), else 0. */
size_t sr_lookalike_punctuation(const char *s);

/* The first code point of s (NUL-terminated UTF-8) that is not ASCII, for
 * a message to name ("U+200B"); 0 when there is none. */
uint32_t sr_lookalike_first_non_ascii(const char *s);
