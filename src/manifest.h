/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "limit.h"
#include "netallow.h"
#include "util.h"

#define SR_MANIFEST_MAX_BYTES (1024 * 1024)

struct sr_kv {
  char *key;
  char *value;
  unsigned line;
};

/* A sandbox.* limit declared in metadata: value in bytes / ms / count. */
struct sr_manifest_limit {
  bool set;
  uint64_t value;
  unsigned line; /* SKILL.md line, for messages */
};

/* Bytes of a skill's name as written (after the white space around it is
 * removed): 64 characters of 4 bytes, all a name in NFKC form can take; a
 * decomposed one (Hangul jamo, combining marks) could be longer than the
 * runs index and the audit's skill field hold (SR_RECORD_SKILL_MAX). */
#define SR_MANIFEST_NAME_MAX_BYTES 256

/*
 * SKILL.md front matter as skillrun reads it (skillrun-skill(5)).  All
 * strings are UTF-8 as written (name is kept as written; validation uses its
 * NFKC form).
 */
struct sr_manifest {
  char *name;          /* required, 1-64 (NFKC), 256 bytes as written */
  char *description;   /* required, 1-1024 */
  char *license;       /* optional */
  char *compatibility; /* optional, 1-500 */
  char *version;       /* metadata.version, optional */
  struct sr_strv
      allowed_tools; /* "allowed-tools": string (split on spaces) or list */
  struct sr_kv *metadata; /* every metadata entry, in order */
  size_t n_metadata;

  /* skillrun's own declarations (metadata keys with the "sandbox." prefix) */
  struct sr_strv
      entrypoint; /* sandbox.entrypoint split on blanks; empty if absent */
  unsigned entrypoint_line;
  enum sr_network_mode network; /* sandbox.network; SR_NET_UNSET: absent */
  unsigned network_line;
  /* sandbox.inputs-types: what --input files it accepts (filetype.h);
   * empty if absent. */
  struct sr_strv inputs_types;
  unsigned inputs_types_line;
  /* The destinations the skill asks for: sandbox.network-allow (origin
   * manifest) and allowed-tools WebFetch(domain:NAME) (origin
   * allowed-tools), each with "SKILL.md:LINE" as where; names only. */
  struct sr_netallow network_allow;
  unsigned network_allow_line; /* sandbox.network-allow; 0: absent */
  /* sandbox.<name> of the limits SKILL.md may set (sr_limit_defs),
   * indexed by enum sr_limit_id. */
  struct sr_manifest_limit limits[SR__LIM_MAX];

  /* Places where skillrun is more lenient than the reference validator
   * ("SKILL.md:4: unknown top-level key 'tags'"); each becomes a `warning`
   * event, and a refusal under a strict profile. */
  struct sr_strv warnings;
};

/*
 * Parses and validates SKILL.md.  `buf` is the whole file (at most
 * SR_MANIFEST_MAX_BYTES), `dirname` the bundle directory's base name (for
 * the name-matches-directory rule; NULL skips it).  Errors: exit 123,
 * reason "manifest_invalid", message "SKILL.md:LINE: <rule broken>".
 * *out is untouched on failure.
 */
int sr_manifest_parse(const char *buf, size_t len, const char *dirname,
                      struct sr_manifest *out, struct sr_error *err);

/* Reads SKILL.md from a directory fd (the verified staging copy). */
int sr_manifest_load_at(int dirfd, const char *dirname, struct sr_manifest *out,
                        struct sr_error *err);

void sr_manifest_done(struct sr_manifest *m);
#define _cleanup_manifest_ _cleanup_(sr_manifest_done)
