/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"

static int vset(struct sr_error *e, int exit_code, int err, const char *layer,
                const char *reason, const char *fmt, va_list ap) {
  int r = err > 0 ? -err : -EINVAL;

  if (!e || e->exit_code != 0)
    return r;
  e->exit_code = exit_code;
  e->err = err;
  snprintf(e->layer, sizeof(e->layer), "%s", layer ? layer : "");
  snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
  vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
  if (err > 0) {
    size_t n = strlen(e->msg);
    snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(err));
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
  char *out = s;

  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
      *out++ = '?';
      c++;
    } else {
      *out++ = (char)(*c < 0x20 || *c == 0x7f ? '?' : *c);
    }
  }
  *out = '\0';
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
