/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "error.h"

#define SR_AUDIT_SCHEMA "skillrun.audit/1"

/*
 * The audit stream: one JSON object per line, hash-chained (`prev` is the
 * hex SHA-256 of the previous line's bytes including its '\n'; 64 zeros for
 * the first).  A failed write is fatal: sr_audit_emit returns -errno and
 * the caller stops the run.
 */
struct sr_audit {
  int fd; /* primary sink (stdout, --audit-fd, --audit-file) */
  bool own_fd;
  int copy_fd; /* {run}/audit.jsonl once it exists, else -1 */
  uint64_t seq;
  char prev[65];
  char *execution_id;
  char *tenant_id;
  char *skill; /* NULL until known: written as JSON null */
  char *version;
  char *backlog; /* lines emitted before copy_fd existed */
  size_t backlog_len;
  int echo_fd; /* -1, or where each warning is also written as one line */
  /* Test hook: when non-NULL, used instead of the clock. */
  const char *fixed_ts;
};

/* Initialises with the primary fd (not owned unless own_fd).  A NULL id is
 * written as null (a run refused for an invalid id). */
int sr_audit_init(struct sr_audit *a, int fd, bool own_fd,
                  const char *execution_id, const char *tenant_id);
/* From now on each `warning` event is also written to fd as one line,
 * "skillrun: warning: MESSAGE[: PATH][ (REASON)]", control characters
 * shown as '?' (skillrun(1): with --verbose, or when stderr is a
 * terminal).  -1 stops it. */
void sr_audit_echo_warnings(struct sr_audit *a, int fd);
/* Sets skill name and version for every later event. */
int sr_audit_set_skill(struct sr_audit *a, const char *skill,
                       const char *version);
/* From now on also write to copy_fd; the backlog is written first.  On
 * success copy_fd is owned by `a` (closed by sr_audit_done); on failure the
 * caller keeps it. */
int sr_audit_attach_copy(struct sr_audit *a, int copy_fd, struct sr_error *err);

/*
 * Emits one event.  `fields` is stolen; its keys are added after the common
 * ones (a field may not override a common key).  NULL fields (a json_pack
 * that failed) are an error, reason audit_field: no event is ever written
 * without its fields.  An event without fields takes json_object().
 */
int sr_audit_emit(struct sr_audit *a, const char *event, json_t *fields,
                  struct sr_error *err);

/* Formats one line (common keys + fields) without writing it: pure, used by
 * sr_audit_emit and the unit tests.  Returns malloc'd line ending in '\n'. */
char *sr_audit_format(const struct sr_audit *a, const char *event,
                      const json_t *fields, const char *ts);

/*
 * Checks a whole audit file: every line parses, has the schema and common
 * keys with the right types, seq counts 0,1,2..., prev chains.  On success
 * head_hex receives the SHA-256 of the last line.  On failure returns
 * -EBADMSG with err naming "FILE:LINE: what is wrong" (exit 1 in main).
 */
int sr_audit_verify_fd(int fd, const char *display_name, char head_hex[65],
                       uint64_t *n_lines, struct sr_error *err);

/*
 * Audit anchoring (skillrun(1) "AUDIT ANCHORING").  The event gets, as its
 * last member, "anchor":{"alg":"ed25519","key_id":HEX16,"signature":B64}
 * where the signature is Ed25519 over the text
 *   "skillrun-audit-anchor/1 " HEAD "\n"
 * and HEAD is the hex SHA-256 of the line as it would be without its anchor
 * member (with its '\n'); that line's `prev` chains every earlier line, so
 * the anchor covers the whole ledger.  key is a private sr_trust_key.
 */
struct sr_trust_key;
int sr_audit_emit_anchored(struct sr_audit *a, const char *event,
                           json_t *fields, const struct sr_trust_key *key,
                           struct sr_error *err);
/*
 * sr_audit_verify_fd, and then: the last line is execution_completed, carries
 * an anchor by `key` (public), and the anchor verifies.  Anything else:
 * -EBADMSG, "FILE:LINE: ..." (a removed last line shows as "not anchored").
 */
int sr_audit_verify_anchored_fd(int fd, const char *display_name,
                                const struct sr_trust_key *key,
                                char head_hex[65], uint64_t *n_lines,
                                struct sr_error *err);

void sr_audit_done(struct sr_audit *a);
#define _cleanup_audit_ _cleanup_(sr_audit_done)

/*
 * A JSON string from bytes that may not be valid UTF-8 (skill output,
 * file names): each ill-formed subsequence becomes U+FFFD, so jansson
 * accepts it and the event is still written.  NULL s gives JSON null;
 * returns NULL only on ENOMEM.
 */
json_t *sr_json_string_lossy(const char *s, size_t len);
