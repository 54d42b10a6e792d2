/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define SR_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Take ownership of a pointer or fd out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                            \
  ({                                                                           \
    __typeof__(p) _p_ = (p);                                                   \
    (p) = NULL;                                                                \
    _p_;                                                                       \
  })
#define TAKE_FD(fd)                                                            \
  ({                                                                           \
    int _fd_ = (fd);                                                           \
    (fd) = -1;                                                                 \
    _fd_;                                                                      \
  })

static inline void sr_freep(void *p) {
  free(*(void **)p);
}
#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(sr_freep)

/* Declares name##p(type *) calling func(*p) when *p is not NULL.  `type`
 * is a type in a declaration, where parentheses are not allowed.
 * NOLINTBEGIN(bugprone-macro-parentheses) */
#define SR_DEFINE_CLEANUP(type, func)                                          \
  static inline void func##p(type *p) {                                        \
    if (*p)                                                                    \
      func(*p);                                                                \
  }
/* NOLINTEND(bugprone-macro-parentheses) */

#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _warn_unused_ __attribute__((warn_unused_result))

/*
 * GCC 12's -fanalyzer reports a string stored into an array grown with
 * realloc, reached through a pointer the caller passed (a struct of the
 * caller's own), as leaked when the function returns, though the array
 * owns it and its owner's _done() releases it (a 20-line program with that
 * shape shows it).  Only functions with that shape are wrapped; clang's
 * analyzer and valgrind still check them.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define SR_ANALYZER_STORED_LEAK_BEGIN                                          \
  _Pragma("GCC diagnostic push")                                               \
      _Pragma("GCC diagnostic ignored \"-Wanalyzer-malloc-leak\"")
#define SR_ANALYZER_STORED_LEAK_END _Pragma("GCC diagnostic pop")
#else
#define SR_ANALYZER_STORED_LEAK_BEGIN
#define SR_ANALYZER_STORED_LEAK_END
#endif
