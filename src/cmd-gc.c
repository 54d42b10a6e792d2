/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --gc: remove what runs whose supervisor died left behind (skillrun(1)). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cli.h"
#include "cmd.h"
#include "macro.h"
#include "workspace.h"

int sr_cmd_gc(const struct sr_args *a) {
  _cleanup_free_ char *root = NULL;
  struct sr_error err = {0};
  unsigned n = 0;

  if (a->workspace_root)
    root = strdup(a->workspace_root);
  else if (sr_workspace_default_root(&root, &err) < 0) {
    sr_log_error("%s", err.msg);
    fprintf(stderr, "Try 'skillrun --help' for more information.\n");
    return SR_EXIT_FAILED;
  }
  if (!root)
    return SR_EXIT_FAILED;
  if (sr_workspace_gc(root, NULL, true, &n, &err) < 0 ||
      sr_cgroup_gc(a->cgroup_parent, &err) < 0) {
    sr_log_error("%s", err.msg);
    return SR_EXIT_FAILED;
  }
  printf("gc: %u dead run(s) cleaned under %s\n", n, root);
  return 0;
}
