/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --gc: remove what runs whose supervisor died left behind (skillrun(1)). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "cli.h"
#include "cmd.h"
#include "macro.h"
#include "trust.h"
#include "workspace.h"

int sr_cmd_gc(const struct sr_args *a) {
  _cleanup_free_ char *root = NULL;
  struct sr_trust_key *key = NULL;
  struct sr_error err = {0};
  unsigned n = 0, failed = 0;
  int r;

  /* The root and the anchoring key a run would use: the records gc
   * closes are anchored like the run's own final event. */
  if (sr_cmd_platform(a, &root, &key, &err) < 0) {
    sr_log_error("%s", err.msg);
    return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  }
  r = sr_workspace_gc(root, key, true, 0, NULL, &n, &failed, &err);
  if (r >= 0)
    r = sr_cgroup_gc(a->cgroup_parent, 0, NULL, &err);
  sr_trust_key_free(key);
  if (r < 0) {
    sr_log_error("%s", err.msg);
    return SR_EXIT_FAILED;
  }
  printf("gc: %u dead run(s) cleaned under %s\n", n, root);
  /* Like systemd-tmpfiles: what it could not do is a failure, after
   * doing the rest. */
  if (failed) {
    sr_log_error("%u dead run(s) under %s could not be closed (see above)",
                 failed, root);
    return SR_EXIT_FAILED;
  }
  return 0;
}
