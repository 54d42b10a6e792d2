/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

struct sr_error;
struct sr_policy;

/*
 * What the run gives the sandbox view (view.h) to build from.  Host paths
 * are absolute.  The run's own objects come with the supervisor's
 * descriptor of each, inherited through the clone; init binds only what
 * sr_mount_pin found at the path to be that very object (a descriptor from
 * the host's mount namespace cannot be bound from the sandbox's, so the
 * path is resolved again and its device and inode compared).
 */
struct sr_mount_plan {
  const struct sr_policy *policy;
  const char *bundle_dir;    /* verified staging copy -> the skill's directory,
                                /workspace/skills/NAME (ro; policy->skill_dir) */
  const char *inputs_dir;    /* staged --input files -> /workspace/inputs/NAME
                                (ro); may be NULL */
  const char *metadata_file; /* -> /workspace/metadata.json (ro); may be NULL */
  int bundle_fd;   /* the supervisor's fd of bundle_dir, then init's */
  int inputs_fd;   /* ... of inputs_dir (O_RDONLY|O_DIRECTORY), or -1 */
  int metadata_fd; /* ... of metadata_file (O_PATH), or -1 */
  uid_t uid;       /* inside ids, 1000 */
  gid_t gid;
  const char *user_name; /* "skill": passwd/group entry */
  const char *home;      /* "/workspace/scratch" */
};

/*
 * Pins the run's objects (bundle, inputs, metadata.json) before anything
 * is mounted: opens each path of the plan anew and keeps the result only
 * when it is the object the supervisor's descriptor names (same device and
 * inode), replacing that descriptor in the plan; any other object (the run
 * directory renamed after verification and a new one put in its place) is
 * a "mount" layer failure.  init calls it while it still has the caller's
 * file-system ids (the staging directories are 0700: the sandbox user
 * could not look the paths up), sr_mount_build binds the pinned fds and
 * closes them.
 */
int sr_mount_pin(struct sr_mount_plan *plan, struct sr_error *err);

/*
 * Builds the sandbox root and enters it.  Runs in pid 1 of the new pid
 * namespace, inside the new user and mount namespaces, with full
 * capabilities there.  Order: / MS_PRIVATE|MS_REC; the entries of the view
 * (view.h) in table order, from the tmpfs root to metadata.json (each
 * mount's flags read back with statvfs); pivot_root; the base and the old
 * root detached in one lazy unmount; root remounted read-only; cwd "/";
 * every mount's flags and propagation read back from mountinfo.  Any
 * failure: sr_error_layer("mount",
 * ...). *ret_outputs_fd receives an O_DIRECTORY|O_CLOEXEC fd of the
 * /workspace/outputs tmpfs: init passes it to the supervisor (SCM_RIGHTS),
 * which harvests from it after every process of the run is dead (the fd
 * keeps the detached tmpfs alive).
 */
int sr_mount_build(struct sr_mount_plan *plan, int *ret_outputs_fd,
                   struct sr_error *err);
