/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "error.h"

/*
 * The line format shared by profiles and skillrun.conf (skillrun.profile(5)):
 *   key value...     words separated by blanks; "double quotes" group
 *   # comment        whole-line or after a word
 *   include NAME     another profile, resolved like -p NAME (a relative
 *                    path from the including file's directory); cycles
 *                    and depth > 8 are errors
 * conf.c knows the syntax only; policy.c knows the keys (the limit keys
 * come from the limit table, limit.h).
 */
struct sr_conf_line {
  char *file; /* display name of the file ("strict.profile", a path) */
  unsigned line;
  char *key;
  char **args; /* NULL-terminated */
  size_t n_args;
};

struct sr_conf {
  struct sr_conf_line *lines;
  size_t n_lines;
  char *name; /* display name of the top-level file (sr_policy.profile) */
};

#define SR_CONF_MAX_BYTES (256 * 1024)
#define SR_CONF_MAX_LINE 4096
#define SR_CONF_MAX_INCLUDE_DEPTH 8

/* Parses a buffer; `include` lines are resolved as in sr_conf_load_profile
 * (a relative path, with no file to be relative to, from the working
 * directory) and expanded in place. Errors are "file:line: message" (exit
 * 125). */
int sr_conf_parse_buffer(const char *buf, size_t len, const char *display_name,
                         struct sr_conf *out, struct sr_error *err);
/* Opens and parses a file, not checked as a profile is (its includes
 * are). */
int sr_conf_parse_file(const char *path, struct sr_conf *out,
                       struct sr_error *err);

/*
 * Platform configuration: honoured only when owned by root and not group- or
 * world-writable (checked with fstat on the opened fd); one that is not is
 * an error (exit 125), never ignored.  path NULL: the default path, which
 * may be absent (*out stays empty).  named: the caller named the file
 * (--conf), which must then exist.
 */
int sr_conf_load_platform(const char *path, bool named, struct sr_conf *out,
                          struct sr_error *err);

/*
 * Loads a profile by NAME or PATH.  A value containing '/' is a path used as
 * is (an include's relative one from the including file's directory);
 * otherwise NAME.profile is searched in /etc/skillrun/profiles,
 * $XDG_CONFIG_HOME/skillrun/profiles (~/.config when unset),
 * SR_DATADIR/skillrun/profiles, first match wins.  NULL and the name
 * "default" mean the embedded default profile (so it cannot drift from the
 * binary; administrators lower limits in skillrun.conf instead).
 * *resolved is set to the display name of what was loaded.  Every profile
 * read from a file, by name or by path, must be the caller's or root's,
 * writable by nobody else, in directories nobody else may write.
 */
int sr_conf_load_profile(const char *name_or_path, struct sr_conf *out,
                         char **resolved, struct sr_error *err);

void sr_conf_done(struct sr_conf *c);
#define _cleanup_conf_ _cleanup_(sr_conf_done)

/* The embedded default profile (generated from profiles/default.profile). */
extern const char sr_default_profile[];
