/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <magic.h>

#include "dlib.h"
#include "magic.h"

#define SR_MAGIC_FUNCTIONS(X)                                                  \
  X(magic_open)                                                                \
  X(magic_load)                                                                \
  X(magic_buffer)                                                              \
  X(magic_setflags)                                                            \
  X(magic_setparam)                                                            \
  X(magic_error)                                                               \
  X(magic_version)
static struct { SR_MAGIC_FUNCTIONS(SR_DLIB_MEMBER) } mg;

SR_DLOPEN_NOTE(sr_magic_note, "magic",
               "the content type of --input files a skill declares types for",
               SR_LIBMAGIC_SONAME);

SR_DLIB_LOADER(load, mg, SR_MAGIC_FUNCTIONS, SR_LIBMAGIC_SONAME)

/* Never look inside compressed data: that would start helper processes
 * and read more than the buffer says. */
#define BASE_FLAGS (MAGIC_NO_CHECK_COMPRESS | MAGIC_NO_CHECK_TAR)

/* The cookie, opened and its database loaded once. */
static magic_t cookie(const char *needed_for, struct sr_error *err) {
  static magic_t m;
  size_t bytes = SR_MAGIC_BYTES;

  if (m)
    return m;
  if (load(needed_for, err) < 0)
    return NULL;
  m = mg.magic_open(BASE_FLAGS);
  if (!m) {
    sr_error_set(err, SR_EXIT_FAILED, errno, "library_unavailable",
                 "%s: magic_open failed, needed for %s", SR_LIBMAGIC_SONAME,
                 needed_for);
    return NULL;
  }
  /* The default database (a file of the system's, not the caller's). */
  if (mg.magic_load(m, NULL) != 0 ||
      mg.magic_setparam(m, MAGIC_PARAM_BYTES_MAX, &bytes) != 0) {
    const char *e = mg.magic_error(m);
    sr_error_set(err, SR_EXIT_FAILED, 0, "library_unavailable",
                 "%s cannot load its database (%s), needed for %s: install "
                 "it",
                 SR_LIBMAGIC_SONAME, e ? e : "unknown error", needed_for);
    /* The cookie stays unused: the next call fails the same way. */
    return NULL;
  }
  return m;
}

/* One answer of libmagic under `flags`, copied into dst. */
static int ask(magic_t m, int flags, const void *buf, size_t len, char *dst,
               size_t dst_len, struct sr_error *err) {
  const char *s;

  if (mg.magic_setflags(m, BASE_FLAGS | flags) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "inputs",
                        "%s: flags not supported", SR_LIBMAGIC_SONAME);
  s = mg.magic_buffer(m, buf, len);
  if (!s) {
    const char *e = mg.magic_error(m);
    return sr_error_set(err, SR_EXIT_FAILED, 0, "inputs",
                        "%s cannot type an input: %s", SR_LIBMAGIC_SONAME,
                        e ? e : "unknown error");
  }
  snprintf(dst, dst_len, "%s", s);
  return 0;
}

int sr_magic_type_of(const void *buf, size_t len, const char *needed_for,
                     struct sr_magic_type *out, struct sr_error *err) {
  magic_t m = cookie(needed_for, err);
  struct sr_magic_type t;
  int r;

  if (!m)
    return -ENOENT;
  if (len > SR_MAGIC_BYTES)
    len = SR_MAGIC_BYTES;
  memset(&t, 0, sizeof(t));
  r = ask(m, MAGIC_MIME_TYPE, buf, len, t.mime, sizeof(t.mime), err);
  if (r >= 0)
    r = ask(m, MAGIC_EXTENSION, buf, len, t.exts, sizeof(t.exts), err);
  if (r < 0)
    return r;
  /* "???": libmagic knows no extension for the format. */
  if (!strcmp(t.exts, "???"))
    t.exts[0] = '\0';
  *out = t;
  return 0;
}

int sr_magic_lib_version(void) {
  struct sr_error e = {0};

  return load("--version", &e) == 0 ? mg.magic_version() : -1;
}
