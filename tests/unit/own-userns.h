/* SPDX-License-Identifier: GPL-2.0-or-later */
/* For the unit tests that run skillrun's code in namespaces of a child's
 * own (test-net, test-mount). */
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "fdutil.h"

/* unshare(CLONE_NEWUSER | flags) in the calling (child) process, with the
 * caller's uid and gid mapped to root in the new user namespace, so that it
 * may make more namespaces and mounts.  0; -1 when there are no user
 * namespaces here (the test says so and exercises nothing); -2 when the
 * maps are refused (a failure). */
static inline int unit_own_userns(int flags) {
  char map[64];
  uid_t uid = getuid(); /* before the unshare: the overflow id after */
  gid_t gid = getgid();

  if (unshare(CLONE_NEWUSER | flags) < 0)
    return -1;
  snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
  if (sr_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny") < 0 ||
      sr_write_file_at(AT_FDCWD, "/proc/self/uid_map", map) < 0)
    return -2;
  snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
  if (sr_write_file_at(AT_FDCWD, "/proc/self/gid_map", map) < 0)
    return -2;
  return 0;
}
