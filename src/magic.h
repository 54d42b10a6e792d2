/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/*
 * The content type of an input (skillrun-skill(5) sandbox.inputs-types),
 * through libmagic, which is opened with dlopen (dlib.h) only when a run
 * checks a type: most runs declare none, and a mapped libmagic with its
 * database costs every launch.  libmagic is shown a buffer (at most
 * SR_MAGIC_BYTES from the start of the staged copy), never a path: it
 * opens no file of the caller's, follows no link, and reads no more than
 * that, and it never decompresses (no helper processes).  It runs in a
 * child of its own under a seccomp filter (magic.c), since it parses
 * bytes chosen by whoever handed over the input: a libmagic that
 * misbehaves can lie about the type, not reach the supervisor.  Its
 * database is libmagic's default, which honours $MAGIC and ~/.magic.mgc:
 * settings of the caller's, who chooses the libraries skillrun loads just
 * as well.
 */
#define SR_MAGIC_BYTES (1024 * 1024)

struct sr_magic_type {
  char mime[128]; /* "application/pdf"; "application/octet-stream" unknown */
  /* The file name extensions libmagic gives the format, '/'-separated
   * ("jpeg/jpg/jpe/jfif"); "" when it names none. */
  char exts[256];
};

/* The child that types a run's inputs, started by the first
 * sr_magic_type_of and ended by sr_magic_typer_done (or by a failure). */
struct sr_magic_typer {
  pid_t pid;  /* 0: none */
  int fd;     /* its socket; -1: none */
  int status; /* its wait status, once reaped */
};
#define SR_MAGIC_TYPER_INIT                                                    \
  { .pid = 0, .fd = -1, .status = 0 }

/* What libmagic makes of buf[0..len), in t's child.  A libmagic, database
 * or libseccomp that cannot be loaded: exit 125, reason
 * "library_unavailable", naming what needed it (`needed_for`); a libmagic
 * that fails, crashes, hangs or answers nonsense: exit 125, reason
 * "inputs". */
int sr_magic_type_of(struct sr_magic_typer *t, const void *buf, size_t len,
                     const char *needed_for, struct sr_magic_type *out,
                     struct sr_error *err);
/* Ends t's child, if any. */
void sr_magic_typer_done(struct sr_magic_typer *t);

/* magic_version() of the library, or -1 when it cannot be loaded
 * (--version). */
int sr_magic_lib_version(void);
