/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "macro.h"

/*
 * Exit statuses (skillrun(1), DESIGN.md section 4).  The skill's own status
 * passes through unchanged; these are what skillrun itself reports.
 */
enum {
  SR_EXIT_OK = 0,
  SR_EXIT_REFUSED = 123, /* integrity, signature, tier or policy: nothing ran */
  SR_EXIT_TIMEOUT = 124, /* wall-clock timeout: the whole tree was killed */
  SR_EXIT_FAILED = 125,  /* usage, configuration, or a sandbox layer */
  SR_EXIT_NOEXEC = 126,  /* command found but not executable */
  SR_EXIT_NOTFOUND = 127, /* command not found */
};

/*
 * One error object carried up to main.c, which alone prints it and picks the
 * exit status.  Fixed-size so that the sandboxed child can send it to the
 * supervisor over the sync socket as plain bytes.
 */
struct sr_error {
  int exit_code;   /* SR_EXIT_*; 0 while no error is set */
  int err;         /* errno value (positive) or 0 */
  char layer[32];  /* layer that failed ("mount", "seccomp"...), "" if none */
  char reason[48]; /* machine-readable reason for the audit stream */
  char msg[1024];  /* one human line: "SKILL.md:3: name: must be lowercase" */
};

/*
 * Record an error (the first one wins: a later call does not overwrite an
 * error already set, so the root cause survives).  When err != 0 the text
 * ": strerror(err)" is appended.  Returns -err, or -EINVAL when err is 0,
 * so callers can write `return sr_error_set(...)`.
 */
int sr_error_set(struct sr_error *e, int exit_code, int err, const char *reason,
                 const char *fmt, ...) _printf_(5, 6);

/* Same, and names the sandbox layer that failed (for layer_failed events). */
int sr_error_layer(struct sr_error *e, const char *layer, int err,
                   const char *fmt, ...) _printf_(4, 5);

static inline int sr_error_is_set(const struct sr_error *e) {
  return e && e->exit_code != 0;
}

/* Forget an error (used when an error is handled, e.g. a -try path). */
void sr_error_clear(struct sr_error *e);

/* "skillrun: <msg>\n" on stderr. */
void sr_log_error(const char *fmt, ...) _printf_(1, 2);
void sr_log_warning(const char *fmt, ...) _printf_(1, 2);

/* s made safe for one line of a terminal, in place: each C0 control
 * (newline too), DEL, C1 control (in its UTF-8 form, C2 80 - C2 9F, or
 * as a byte 0x80 - 0x9f that is not UTF-8, which a terminal of 8-bit
 * characters reads as one), bidirectional formatting character and line
 * separator (sr_name_misleads) becomes one '?', so that no text
 * quoted in a diagnostic can move the cursor, start an escape sequence,
 * reorder what follows it or begin a line of its own.  Other bytes that
 * are not UTF-8 are left as they are. */
void sr_error_for_terminal(char *s);
