/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the tools around the pipeline (--gc, --metrics) take from the
 * platform's configuration, as a run takes it (run.c). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"
#include "fdutil.h"
#include "conf.h"
#include "macro.h"
#include "paths.h"
#include "policy.h"
#include "trust.h"
#include "workspace.h"

#define DEFAULT_CONF SR_SYSCONFDIR "/skillrun/skillrun.conf"

int sr_cmd_platform(const struct sr_args *a, char **root,
                    struct sr_trust_key **key, struct sr_error *err) {
  struct sr_conf conf = {0};
  struct sr_policy p;
  int r;

  if (root)
    *root = NULL;
  if (key)
    *key = NULL;
  r = sr_policy_init(&p);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "policy", "policy");
  /* An unsafe or (when named) missing skillrun.conf is an error, as for a
   * run. */
  r = sr_conf_load_platform(a->conf ? a->conf : DEFAULT_CONF, a->conf != NULL,
                            &conf, err);
  if (r >= 0)
    r = sr_policy_apply_conf(&p, &conf, err);
  if (r >= 0)
    sr_root_mode_ids(p.uid_pool_base, p.uid_pool_size);
  if (!root) {
    /* The key alone (a run stopped before it loaded it, run.c). */
  } else if (r >= 0 && (a->workspace_root || p.workspace_root)) {
    *root = strdup(a->workspace_root ? a->workspace_root : p.workspace_root);
    if (!*root)
      r = sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "oom");
  } else if (r >= 0) {
    r = sr_workspace_default_root(root, err);
  }
  if (r >= 0 && key && p.audit_key)
    r = sr_trust_key_load_platform(p.audit_key, true, key, err);
  sr_conf_done(&conf);
  sr_policy_done(&p);
  if (r < 0 && root) {
    free(*root);
    *root = NULL;
  }
  return r;
}
