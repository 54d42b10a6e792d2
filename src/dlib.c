/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dlfcn.h>

#include "dlib.h"

void *sr_dlib_open(const char *soname, const char *needed_for,
                   struct sr_error *err) {
  /* Already mapped when a build links the library at start-up. */
  void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);

  if (!h)
    sr_error_set(err, SR_EXIT_FAILED, 0, "library_unavailable",
                 "cannot load %s, needed for %s (%s): install it", soname,
                 needed_for, dlerror());
  return h;
}

void *sr_dlib_sym(void *h, const char *soname, const char *name,
                  struct sr_error *err) {
  void *p = dlsym(h, name);

  if (!p)
    sr_error_set(err, SR_EXIT_FAILED, 0, "library_unavailable",
                 "%s has no %s: not the version skillrun was built for", soname,
                 name);
  return p;
}
