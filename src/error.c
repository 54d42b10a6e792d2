/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "util.h"

/* What of a message too long for msg stays before the cut (the rest is
 * its end). */
#define MSG_HEAD 192

/* text (len bytes) into msg, whole when it fits; otherwise its start and
 * its end around "...", each cut where a character begins.  Its end is
 * what the message is about ("x.profile:2: unknown key 'k'", ": File name
 * too long"), after a path that may be as long as PATH_MAX: cut at the
 * end, a long path left nothing of it. */
static void set_msg(struct sr_error *e, const char *text, size_t len) {
  const size_t cap = sizeof(e->msg) - 1;
  size_t head = MSG_HEAD, tail;

  if (len <= cap) {
    memcpy(e->msg, text, len);
    e->msg[len] = '\0';
    return;
  }
  while (head > 0 && ((unsigned char)text[head] & 0xc0) == 0x80)
    head--;
  tail = len - (cap - head - 3);
  while (tail < len && ((unsigned char)text[tail] & 0xc0) == 0x80)
    tail++;
  memcpy(e->msg, text, head);
  memcpy(e->msg + head, "...", 3);
  memcpy(e->msg + head + 3, text + tail, len - tail);
  e->msg[head + 3 + len - tail] = '\0';
}

static int vset(struct sr_error *e, int exit_code, int err, const char *layer,
                const char *reason, const char *fmt, va_list ap) {
  int r = err > 0 ? -err : -EINVAL;
  _cleanup_free_ char *text = NULL, *whole = NULL;
  va_list copy;
  int n;

  if (!e || e->exit_code != 0)
    return r;
  e->exit_code = exit_code;
  e->err = err;
  snprintf(e->layer, sizeof(e->layer), "%s", layer ? layer : "");
  snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
  va_copy(copy, ap);
  n = vasprintf(&text, fmt, copy);
  va_end(copy);
  if (n < 0)
    text = NULL; /* undefined after a failure */
  if (n >= 0 && err <= 0) {
    set_msg(e, text, (size_t)n);
  } else if (n >= 0 &&
             (n = asprintf(&whole, "%s: %s", text, strerror(err))) >= 0) {
    set_msg(e, whole, (size_t)n);
  } else {
    /* No memory for the whole text: as much of it as msg holds. */
    size_t m;

    if (text)
      set_msg(e, text, strlen(text));
    else
      vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    m = strlen(e->msg);
    if (err > 0)
      snprintf(e->msg + m, sizeof(e->msg) - m, ": %s", strerror(err));
  }
  return r;
}

int sr_error_set(struct sr_error *e, int exit_code, int err, const char *reason,
                 const char *fmt, ...) {
  va_list ap;
  int r;

  va_start(ap, fmt);
  r = vset(e, exit_code, err, NULL, reason, fmt, ap);
  va_end(ap);
  return r;
}

int sr_error_layer(struct sr_error *e, const char *layer, int err,
                   const char *fmt, ...) {
  va_list ap;
  int r;

  va_start(ap, fmt);
  r = vset(e, SR_EXIT_FAILED, err, layer, "layer_failed", fmt, ap);
  va_end(ap);
  return r;
}

void sr_error_clear(struct sr_error *e) {
  if (e)
    memset(e, 0, sizeof(*e));
}

void sr_error_for_terminal(char *s) {
  const unsigned char *in = (const unsigned char *)s;
  size_t len = strlen(s), skip, o = 0;

  for (size_t i = 0; i < len;) {
    size_t n = sr_utf8_seq(in + i, len - i, &skip);

    if (n == 0) {
      /* A byte that is not UTF-8: one of 0x80 - 0x9f is a C1 control on
       * a terminal of 8-bit characters (0x9b starts an escape sequence
       * there, as ESC [ does). */
      s[o++] = (char)(in[i] >= 0x80 && in[i] <= 0x9f ? '?' : in[i]);
      i++;
    } else if (sr_name_misleads(s + i, n)) {
      s[o++] = '?';
      i += n;
    } else {
      memmove(s + o, in + i, n);
      o += n;
      i += n;
    }
  }
  s[o] = '\0';
}

static void vlog(const char *prefix, const char *fmt, va_list ap) {
  char line[2048];

  vsnprintf(line, sizeof(line), fmt, ap);
  /* One line, whatever a message quotes: a path the caller gave (a
   * bundle, --conf, --verify-audit...) may hold a newline or a terminal
   * escape, shown as '?' like the option values of cli.c. */
  sr_error_for_terminal(line);
  /* One write, so lines from concurrent runs do not interleave. */
  fprintf(stderr, "skillrun: %s%s\n", prefix, line);
}

void sr_log_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog("", fmt, ap);
  va_end(ap);
}

void sr_log_warning(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vlog("warning: ", fmt, ap);
  va_end(ap);
}
