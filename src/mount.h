/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

struct sr_error;
struct sr_policy;

/* What the run gives the sandbox view (view.h) to build from.  Host paths
 * are absolute. */
struct sr_mount_plan {
  const struct sr_policy *policy;
  const char *bundle_dir;    /* verified staging copy -> the skill's directory,
                                /workspace/skills/NAME (ro; policy->skill_dir) */
  const char *inputs_dir;    /* staged --input files -> /workspace/inputs/NAME
                                (ro); may be NULL */
  const char *metadata_file; /* -> /workspace/metadata.json (ro); may be NULL */
  uid_t uid;                 /* inside ids, 1000 */
  gid_t gid;
  const char *user_name; /* "skill": passwd/group entry */
  const char *home;      /* "/workspace/scratch" */
};

/*
 * Builds the sandbox root and enters it.  Runs in pid 1 of the new pid
 * namespace, inside the new user and mount namespaces, with full
 * capabilities there.  Order: / MS_SLAVE|MS_REC; the entries of the view
 * (view.h) in table order, from the tmpfs root to metadata.json; every
 * mount's flags read back (statvfs, mountinfo); pivot_root; old root detached;
 * root remounted read-only; cwd "/".  Any failure: sr_error_layer("mount",
 * ...). *ret_outputs_fd receives an O_DIRECTORY|O_CLOEXEC fd of the
 * /workspace/outputs tmpfs: init passes it to the supervisor (SCM_RIGHTS),
 * which harvests from it after every process of the run is dead (the fd
 * keeps the detached tmpfs alive).
 */
int sr_mount_build(const struct sr_mount_plan *plan, int *ret_outputs_fd,
                   struct sr_error *err);
