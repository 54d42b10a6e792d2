/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "error.h"

#define SR_AUDIT_SCHEMA "skillrun.audit/1"
/* The largest audit file --verify-audit and gc read. */
#define SR_AUDIT_MAX_FILE (256u * 1024 * 1024)
/* The longest line --verify-audit reads (without its '\n'): an event
 * whose line would be longer fails (on neither sink), as one past
 * SR_AUDIT_MAX_ORDINARY does, so that an untouched ledger never reads as
 * tampered. */
#define SR_AUDIT_MAX_LINE (1024u * 1024)

/*
 * The audit stream: one JSON object per line, hash-chained (`prev` is the
 * hex SHA-256 of the previous line's bytes including its '\n'; 64 zeros for
 * the first).  Each line goes to the run's copy first (its audit.jsonl, or
 * the backlog until that exists), then to the primary sink.  A sink that
 * fails is written no more (its chain ends there, incomplete) and the other
 * one goes on: sr_audit_emit returns that first failure as -errno, so the
 * caller stops the run, and later events (the failure's, the final one)
 * still reach the sink that works.  Only when neither takes a line is it
 * not on the record (the chain does not advance): that is also what
 * happens to an ordinary event that would take the room the run's copy
 * keeps for the final ones on a full file system (it fails, and the run
 * stops, with both sinks still on one chain).
 */
/* The time the primary sink's reader may keep a run waiting, in all
 * (skillrun(1) AUDIT EVENTS): then the sink counts as failed. */
#define SR_AUDIT_STALL_MS 5000
/* The run's copy keeps room reserved ahead of its end, so that a full
 * file system still takes the failure's event and the final one:
 * SR_AUDIT_FINAL_RESERVE, plus the common keys of those two lines (the
 * skill's name and version escaped, six bytes a byte at most), plus what
 * the caller asks for (sr_audit_keep_room: execution_completed's artifact
 * list, up to 256 KiB, and the run's metadata.json).  Reserved
 * SR_AUDIT_RESERVE_STEP at a time where the file system has room to spare
 * (SR_AUDIT_SLACK_SHARE). */
#define SR_AUDIT_RESERVE_STEP (64u * 1024)
#define SR_AUDIT_FINAL_RESERVE (16u * 1024)
/* The most of the room a file system has left that a step's slack past
 * what the copy needs may take (audit.c, reserve_ask). */
#define SR_AUDIT_SLACK_SHARE 16u
/* The longest final events: the list's 256 KiB and two lines' common keys
 * with a version of 4096 bytes, with room to spare. */
#define SR_AUDIT_FINAL_MAX (320u * 1024)
/* The record's ordinary events stop short of SR_AUDIT_MAX_FILE by the
 * final ones' room: one that would pass this fails (on neither sink), so
 * that --verify-audit and gc always read a whole ledger. */
#define SR_AUDIT_MAX_ORDINARY (SR_AUDIT_MAX_FILE - SR_AUDIT_FINAL_MAX)
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
  int echo_fd;      /* -1, or where each warning is also written as one line */
  bool echo_own_fd; /* echo_fd is a terminal opened again, ours to close */
  bool fd_failed, copy_failed; /* a sink that failed is written no more */
  /* The run is being cancelled (sr_audit_cancelling): a stream that
   * stalls is given up, not the run's error. */
  bool cancelling;
  /* fd's and echo_fd's S_IFMT, once written (sr_write_bounded) */
  mode_t fd_type, echo_type;
  /* What is left of SR_AUDIT_STALL_MS, for fd and for echo_fd. */
  uint64_t stall_ms, echo_stall_ms;
  /* The copy's length and the end of the room reserved for it (0: none,
   * the file system cannot reserve); closing: the final events, which may
   * use the room the others leave (keep_room in audit.c). */
  uint64_t copy_len, copy_reserved;
  bool closing;
  uint64_t keep_extra; /* sr_audit_keep_room's, beyond the final events' */
  uint64_t record_len; /* the bytes of the lines on the record */
  /* Test hook: when non-NULL, used instead of the clock. */
  const char *fixed_ts;
};

/* Initialises with the primary fd (not owned unless own_fd).  A terminal
 * that is not owned is written through its own non-blocking open file
 * (sr_tty_reopen_nonblock), so that a reader that stalls holds no write
 * past SR_AUDIT_STALL_MS.  A NULL id is written as null (a run refused for
 * an invalid id). */
int sr_audit_init(struct sr_audit *a, int fd, bool own_fd,
                  const char *execution_id, const char *tenant_id);
/* From now on each `warning` event is also written to fd as one line,
 * "skillrun: warning: MESSAGE[: PATH][ (REASON)]", control characters
 * shown as '?' (skillrun(1): with --verbose, or when stderr is a
 * terminal).  -1 stops it.  Best effort: the writes are bounded as the
 * primary fd's (a terminal through its own open file), and the first that
 * fails stops the copy; the record has every warning. */
void sr_audit_echo_warnings(struct sr_audit *a, int fd);
/* Sets skill name and version for every later event, and reserves room
 * for them in the final events (as sr_audit_keep_room): -ENOSPC, and
 * nothing set, when the copy's file system has no room left for that. */
int sr_audit_set_skill(struct sr_audit *a, const char *skill,
                       const char *version);
/* From now on also write to copy_fd (a new, empty file); room is reserved
 * in it (where the file system can) and the backlog is written first.  On
 * success copy_fd is owned by `a` (closed by sr_audit_done); on failure the
 * caller keeps it. */
int sr_audit_attach_copy(struct sr_audit *a, int copy_fd, struct sr_error *err);
/* The attached copy, while it has taken no line, given up (its room
 * returned, its fd closed): the run has nothing on its record there.
 * False, and nothing done, once it holds a line. */
bool sr_audit_drop_empty_copy(struct sr_audit *a);
/* The room the copy keeps for the final events, beyond their own lines,
 * becomes `extra` bytes (the run's: the artifact list execution_completed
 * will carry, and metadata.json, written in this room once it is given
 * back): reserved now, where the file system reserves.  -ENOSPC when it
 * cannot be, -EFBIG when that is the file-size limit's doing (the caller
 * keeps the final events as they were: the list stops growing); 0
 * otherwise. */
int sr_audit_keep_room(struct sr_audit *a, uint64_t extra);
/* The run's final events come next: they may use the reserved room that
 * other events leave alone. */
void sr_audit_closing(struct sr_audit *a);
/* The run's final event is on the record: the room the copy kept reserved
 * goes back to the file system (on a full one, for metadata.json). */
void sr_audit_release_room(struct sr_audit *a);
/* The caller cancelled the run (a cancellation signal taken): from now on
 * a stream whose reader stalls is given up when its budget is spent, and
 * the run goes on to end as cancelled; a reader gone at shutdown must not
 * turn the caller's cancellation into an error of the run's.  (A signal
 * that arrives during a stall ends the wait at once, not taken yet:
 * sr_write_bounded_cancellable.) */
static inline void sr_audit_cancelling(struct sr_audit *a) {
  a->cancelling = true;
}
/* While the run waits on other things, the primary sink's reader may go
 * (an orchestrator's worker that died): poll(2) the fd this returns with
 * no events asked, and a pipe whose readers are all gone reports
 * POLLERR, a socket whose peer closed or a terminal hung up POLLHUP; a
 * file reports neither.  -1 once the sink has failed. */
static inline int sr_audit_watch_fd(const struct sr_audit *a) {
  return a->fd_failed ? -1 : a->fd;
}
/* That poll said revents: true when they say the reader is gone (POLLERR,
 * POLLHUP), and the stream is then given up (written no more).  Whether
 * that stops the run is sr_audit_stream_lost's to say. */
bool sr_audit_reader_gone(struct sr_audit *a, short revents);
/* The stream's reader went (sr_audit_reader_gone) a moment ago: 0 when the
 * run is being cancelled (an orchestrator shutting down closes its end,
 * then sends its signal: SR_AUDIT_GONE_GRACE_MS are given to that signal),
 * else the run must stop, with the audit_write error a write that failed
 * would have set at the next event. */
#define SR_AUDIT_GONE_GRACE_MS 1000
int sr_audit_stream_lost(const struct sr_audit *a, struct sr_error *err);
/* Whether the line of the last event reached the primary sink / the run's
 * copy (or its backlog). */
static inline bool sr_audit_primary_ok(const struct sr_audit *a) {
  return !a->fd_failed;
}
static inline bool sr_audit_copy_ok(const struct sr_audit *a) {
  return !a->copy_failed;
}

/*
 * Emits one event.  `fields` is stolen; its keys are added after the common
 * ones (a field may not override a common key).  NULL fields (a json_pack
 * that failed) are an error, reason audit_field: no event is ever written
 * without its fields.  An event without fields takes json_object().
 */
int sr_audit_emit(struct sr_audit *a, const char *event, json_t *fields,
                  struct sr_error *err);
/* sr_audit_emit, unless the line would take the record past `end` bytes
 * (sr_audit_record_len): then SR_AUDIT_PAST_END, nothing written and err
 * untouched, for a caller that stops at a bound of its own (the
 * harvest's). */
#define SR_AUDIT_PAST_END 1
int sr_audit_emit_within(struct sr_audit *a, const char *event, json_t *fields,
                         uint64_t end, struct sr_error *err);
static inline uint64_t sr_audit_record_len(const struct sr_audit *a) {
  return a->record_len;
}

/* Formats one line (common keys + fields) without writing it: pure, used by
 * sr_audit_emit and the unit tests.  Returns malloc'd line ending in '\n'. */
char *sr_audit_format(const struct sr_audit *a, const char *event,
                      const json_t *fields, const char *ts);

/*
 * Checks the chain of an audit file: every complete line parses, has the
 * schema and common keys with the right types, seq counts 0,1,2..., prev
 * chains, every line names the first line's execution_id, nothing follows
 * an execution_completed.  0 (head_hex: the SHA-256 of the last line),
 * -EBADMSG when it breaks ("FILE:LINE: what is wrong"), -ENODATA when it
 * is empty or its last line is cut off, another -errno when it cannot be
 * read.
 */
int sr_audit_verify_fd(int fd, const char *display_name, char head_hex[65],
                       uint64_t *n_lines, struct sr_error *err);

/* --verify-audit's verdict (skillrun(1) EXIT STATUS). */
enum sr_audit_verdict {
  SR_AUDIT_OK = 0,     /* the chain holds and ends with execution_completed
                        * (and its anchor verifies, with a key) */
  SR_AUDIT_INCOMPLETE, /* it holds but stops short: no final
                        * execution_completed, or a last line cut off */
  SR_AUDIT_TAMPERED,   /* it breaks, or the anchor does not verify */
};
struct sr_audit_check {
  enum sr_audit_verdict verdict;
  uint64_t lines; /* complete lines that verify */
  char head[65];  /* the SHA-256 of the last of them */
  bool anchored;  /* a key was given and the anchor verifies */
  /* The run the ledger is of, when OK: its ids, or "" for one that is
   * null or not an id (sr_valid_id). */
  char tenant_id[65];
  char execution_id[65];
  /* How it ended, as its execution_completed says: the status ("" for
   * one that is not a status skillrun writes) and the exit status, -1
   * for null (abandoned) or one that is not 0 - 255. */
  char status[16];
  int exit_code;
};
/*
 * The whole check: the chain, then whether it is complete, then with key
 * (public) the anchor of its execution_completed.  0 with out set (err
 * says why when the verdict is not OK), or -errno when the file cannot be
 * read.
 */
struct sr_trust_key;
int sr_audit_check_fd(int fd, const char *display_name,
                      const struct sr_trust_key *key,
                      struct sr_audit_check *out, struct sr_error *err);

/*
 * Continues the chain of a ledger whose writer died (skillrun --gc): `a` is
 * made to write to fd (the ledger, open for appending, not owned) with the
 * seq and prev that follow the last complete line of buf (the ledger's
 * bytes) and the skill of that line.  *complete_len: the bytes up to and
 * including the last '\n' (what follows was cut off mid-line);
 * *closed: that last line is already execution_completed.  *final_len:
 * 0, or the length of the execution_completed line that follows
 * *complete_len whole and chaining on, but without its '\n' (a crash can
 * cut a file there, or leave zeros after it): *closed is then true, and
 * the ledger is whole once that '\n' is written after it (`a` is not
 * advanced past it: nothing may follow it).  0 or -errno.
 */
int sr_audit_resume(struct sr_audit *a, int fd, const char *execution_id,
                    const char *tenant_id, const char *buf, size_t len,
                    size_t *complete_len, size_t *final_len, bool *closed);

/*
 * Audit anchoring (skillrun(1) "AUDIT ANCHORING").  The event gets, as its
 * last member, "anchor":{"alg":"ed25519","key_id":HEX16,"signature":B64}
 * where the signature is Ed25519 over the text
 *   "skillrun-audit-anchor/1 " HEAD "\n"
 * and HEAD is the hex SHA-256 of the line as it would be without its anchor
 * member (with its '\n'); that line's `prev` chains every earlier line, so
 * the anchor covers the whole ledger.  key is a private sr_trust_key.
 */
int sr_audit_emit_anchored(struct sr_audit *a, const char *event,
                           json_t *fields, const struct sr_trust_key *key,
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
/* The same for a C string, or JSON null for NULL: every message that may
 * quote what someone else wrote (a bundle's names, a manifest's text, a
 * path), which json_pack's "s" would refuse when it is not UTF-8. */
json_t *sr_json_text(const char *s);

/*
 * json_dumps(j, flags) with room for `extra` more bytes after the text
 * (*len: its length), or NULL.  Unlike json_dumps, never a text cut short:
 * jansson ignores a failure to write an object's key (dump.c), which
 * json_dumps's growing buffer meets when out of memory ("{"a":1,":2}").
 * Here the text is written twice into a buffer of the size the first pass
 * counted, and a second pass of another size is an error.
 */
char *sr_json_dump(const json_t *j, size_t flags, size_t extra, size_t *len);
