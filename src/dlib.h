/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

#include "error.h"

/*
 * Libraries opened with dlopen(3) when a run first needs them, rather than
 * mapped at every start: libcrypto for keys (ossl.h), libseccomp for
 * filters a profile changes (seccomp.c) and for the one libmagic runs
 * under (magic.c), libunistring for non-ASCII manifest text (text.h),
 * libmagic for the type of an input a skill declares types for
 * (magic.h), libsystemd for a delegated cgroup scope
 * from the caller's systemd user manager (cgroup-systemd.c).  Each
 * mapped library costs a sandboxed launch 0.1 - 0.2 ms (it is forked twice and
 * unmapped three times), libcrypto alone about 1.7 ms (bench/README.md).
 *
 * A library is opened once with RTLD_NOW and never closed.  A user of this
 * file declares the functions it needs in an X-macro list and gets a struct
 * of pointers typed from the library's own headers, so that a prototype
 * change is a compile error rather than a wrong call:
 *
 *   #define FOO_FUNCTIONS(X) X(foo_open) X(foo_close)
 *   struct foo { FOO_FUNCTIONS(SR_DLIB_MEMBER) };
 *
 * and fills it with SR_DLIB_RESOLVE.  Packages must depend on these
 * libraries by hand: the ELF dynamic section does not name them; the
 * .note.dlopen section of the binary does (SR_DLOPEN_NOTE, the format of
 * https://systemd.io/ELF_DLOPEN_METADATA/).
 */

/* NOLINTBEGIN(bugprone-macro-parentheses): names, not expressions */
#define SR_DLIB_MEMBER(name) __typeof__(&name) name;

/* The handle of soname, or NULL with err set (exit 125, reason
 * "library_unavailable"): "cannot load SONAME, needed for NEEDED_FOR". */
void *sr_dlib_open(const char *soname, const char *needed_for,
                   struct sr_error *err);
/* The address of name in h, or NULL with err set. */
void *sr_dlib_sym(void *h, const char *soname, const char *name,
                  struct sr_error *err);

/* Inside SR_DLIB_LOADER's function: resolves one X-macro name into the
 * struct variable `s`. */
#define SR_DLIB_RESOLVE(name)                                                  \
  s.name = (__typeof__(s.name))sr_dlib_sym(h, soname, #name, err);             \
  if (!s.name)                                                                 \
    return -ENOENT;

/* Defines `static int fn(const char *needed_for, struct sr_error *err)`,
 * which opens soname_ once and fills `var` (a struct of SR_DLIB_MEMBERs)
 * with the functions and objects that the X-macro `list` names: 0, or
 * -ENOENT with err set.  `var` is written only when every one resolved. */
#define SR_DLIB_LOADER(fn, var, list, soname_)                                 \
  static int fn(const char *needed_for, struct sr_error *err) {                \
    static const char soname[] = soname_;                                      \
    static bool loaded;                                                        \
    __typeof__(var) s;                                                         \
    void *h;                                                                   \
                                                                               \
    if (loaded)                                                                \
      return 0;                                                                \
    h = sr_dlib_open(soname, needed_for, err);                                 \
    if (!h)                                                                    \
      return -ENOENT;                                                          \
    list(SR_DLIB_RESOLVE) var = s;                                             \
    loaded = true;                                                             \
    return 0;                                                                  \
  }

/* One FDO dlopen metadata note (type NT_FDO_DLOPEN_METADATA). */
#define SR_DLOPEN_NOTE(id, feature, description, soname)                       \
  SR_DLOPEN_NOTE_(id, "[{\"feature\":\"" feature                               \
                      "\",\"description\":\"" description                      \
                      "\",\"priority\":\"required\","                          \
                      "\"soname\":[\"" soname "\"]}]")
#define SR_DLOPEN_NOTE_(id, json)                                              \
  __attribute__((used, section(".note.dlopen"),                                \
                 aligned(4))) static const struct {                            \
    unsigned int namesz, descsz, type;                                         \
    char name[4];                                                              \
    char desc[(sizeof(json) + 3) & ~(unsigned)3];                              \
  } id = {4, sizeof(json), 0x407c0c0aU, "FDO", json}
/* NOLINTEND(bugprone-macro-parentheses) */
