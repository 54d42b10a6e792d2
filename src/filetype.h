/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "limit.h"
#include "util.h"

/*
 * Declared input types (skillrun-skill(5) sandbox.inputs-types,
 * skillrun.profile(5) inputs-types): a list of entries, each a MIME type
 * ("application/pdf"; a subtype "*" matches every subtype) or a file name
 * extension (".docx").  A list accepts a file when one of its entries does:
 *   - a MIME type, when the content is of that type (libmagic's MIME type
 *     of the staged copy's first bytes);
 *   - an extension, when the name under /workspace/inputs ends in it AND
 *     libmagic names it among the extensions of the content's format: a
 *     ".pdf" entry does not take a text file named x.pdf, and content
 *     libmagic names no extension for (plain text, CSV, JSON, ZIP) never
 *     matches an extension: declare such types by MIME type.
 * Every layer's list must accept a file (the effective set is their
 * intersection).  Comparisons are ASCII case-insensitive; entries are kept
 * lowercased.  Pure.
 */
#define SR_TYPES_MAX 64       /* entries in one list */
#define SR_TYPE_ENTRY_MAX 127 /* bytes in one entry */

/* One layer's list, as the policy keeps it. */
struct sr_type_list {
  struct sr_strv entries; /* lowercased, each valid, no duplicates */
  enum sr_source source;  /* conf, profile or manifest */
  char *where;            /* "SKILL.md:7", "t.profile:3", for messages */
};

/* One entry: 0, or -EINVAL with *why (a static string). */
int sr_type_entry_check(const char *entry, const char **why);

/* Appends entry, lowercased, to list unless it is there: 0, -EINVAL with
 * *why (invalid, or more than SR_TYPES_MAX), -ENOMEM. */
int sr_type_list_add(struct sr_strv *list, const char *entry, const char **why);

/* A SKILL.md value: entries separated by blanks or commas, at least one.
 * 0, -EINVAL with *why and *bad (the offending entry, in bad_buf), or
 * -ENOMEM.  *out is untouched on failure. */
int sr_type_list_parse(const char *text, struct sr_strv *out, const char **why,
                       char *bad_buf, size_t bad_len);

/* Whether `entries` accepts a file named `name` whose content libmagic
 * calls `mime`, with the format's extensions `exts` ('/'-separated, "" for
 * none). */
bool sr_type_list_accepts(const struct sr_strv *entries, const char *name,
                          const char *mime, const char *exts);
