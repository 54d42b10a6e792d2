/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "util.h"
#include "view.h"

/*
 * Build order, which is also the order --explain lists what skillrun
 * builds (the policy's binds come last there).  Where a field disagrees
 * with what mount.c does, the field is what --explain has always printed
 * and the comment says what is built; changing either is a change of
 * behaviour, left for its own step.
 */
const struct sr_view_entry sr_view[] = {
    {.dst = "/",
     .type = SR_VIEW_ROOT,
     .ro = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    {.dst = "/usr",
     .type = SR_VIEW_BIND,
     .source = SR_VIEW_SRC_HOST,
     .host = "/usr",
     .ro = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    /* Merged-/usr candidates.  Each is skipped when the host has none,
     * whatever `optional` says: --explain has always called only /lib64
     * optional. */
    {.dst = "/bin",
     .type = SR_VIEW_BIND_OR_SYMLINK,
     .source = SR_VIEW_SRC_HOST,
     .host = "/bin",
     .ro = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    {.dst = "/lib",
     .type = SR_VIEW_BIND_OR_SYMLINK,
     .source = SR_VIEW_SRC_HOST,
     .host = "/lib",
     .ro = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    {.dst = "/lib64",
     .type = SR_VIEW_BIND_OR_SYMLINK,
     .source = SR_VIEW_SRC_HOST,
     .host = "/lib64",
     .ro = true,
     .optional = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    {.dst = "/sbin",
     .type = SR_VIEW_BIND_OR_SYMLINK,
     .source = SR_VIEW_SRC_HOST,
     .host = "/sbin",
     .ro = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    /* Built like the four above, never listed by --explain. */
    {.dst = "/lib32",
     .type = SR_VIEW_BIND_OR_SYMLINK,
     .source = SR_VIEW_SRC_HOST,
     .host = "/lib32",
     .ro = true,
     .optional = true,
     .reserve = SR_VIEW_RESERVE_AT},
    {.dst = "/libx32",
     .type = SR_VIEW_BIND_OR_SYMLINK,
     .source = SR_VIEW_SRC_HOST,
     .host = "/libx32",
     .ro = true,
     .optional = true,
     .reserve = SR_VIEW_RESERVE_AT},
    /* A directory of the read-only root: binds below it are allowed (the
     * default profile's /etc/alternatives), onto it or onto one of the files
     * of sr_view_etc are not. */
    {.dst = "/etc",
     .type = SR_VIEW_ETC,
     .ro = true,
     .reserve = SR_VIEW_RESERVE_AT,
     .listed = true},
    /* After /etc, so that a bind may land below it; listed last. */
    {.type = SR_VIEW_PROFILE_BINDS, .ro = true, .listed = true},
    /* Sealed read-only once populated; its pts and shm stay writable. */
    {.dst = "/dev",
     .type = SR_VIEW_DEV,
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    {.dst = "/proc",
     .type = SR_VIEW_PROC,
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    {.dst = "/tmp",
     .type = SR_VIEW_TMPFS,
     .mode = 01777,
     .size_limit = "tmp-size",
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    /* The run's own tree: nothing may be bound anywhere in it. */
    {.dst = "/workspace", .type = SR_VIEW_DIR, .reserve = SR_VIEW_RESERVE_TREE},
    /* A tmpfs holding a read-only bind per staged file, listed as one
     * bind. */
    {.dst = "/workspace/inputs",
     .type = SR_VIEW_STAGED_INPUTS,
     .source = SR_VIEW_SRC_INPUTS,
     .ro = true,
     .noexec = true,
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    /* The bundle's path before it was named after the skill, kept for
     * the skills that use it. */
    {.dst = SR_VIEW_BUNDLE,
     .type = SR_VIEW_SYMLINK,
     .source = SR_VIEW_SRC_BUNDLE,
     .ro = true,
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    {.dst = SR_VIEW_SKILLS,
     .type = SR_VIEW_BIND,
     .source = SR_VIEW_SRC_BUNDLE,
     .ro = true,
     .reserve = SR_VIEW_RESERVE_TREE,
     .per_skill = true,
     .listed = true},
    {.dst = SR_VIEW_SCRATCH,
     .type = SR_VIEW_TMPFS,
     .owned = true,
     .mode = 0700,
     .size_limit = "scratch-size",
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    {.dst = SR_VIEW_OUTPUTS,
     .type = SR_VIEW_TMPFS,
     .owned = true,
     .mode = 0755,
     .size_limit = "outputs-size",
     .inode_limit = "outputs-files",
     .harvested = true,
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
    {.dst = "/workspace/metadata.json",
     .type = SR_VIEW_BIND,
     .source = SR_VIEW_SRC_METADATA,
     .ro = true,
     .noexec = true,
     .reserve = SR_VIEW_RESERVE_TREE,
     .listed = true},
};
const size_t sr_view_len = SR_ARRAY_SIZE(sr_view);

const struct sr_view_etc sr_view_etc[SR__ETC_MAX] = {
    [SR_ETC_PASSWD] = {"passwd", SR_VIEW_ETC_WRITTEN},
    [SR_ETC_GROUP] = {"group", SR_VIEW_ETC_WRITTEN},
    [SR_ETC_HOSTS] = {"hosts", SR_VIEW_ETC_WRITTEN},
    [SR_ETC_HOSTNAME] = {"hostname", SR_VIEW_ETC_WRITTEN},
    [SR_ETC_NSSWITCH] = {"nsswitch.conf", SR_VIEW_ETC_WRITTEN},
    [SR_ETC_LD_SO_CACHE] = {"ld.so.cache", SR_VIEW_ETC_HOST},
    /* The host's file, as an etc-file line would bind it: a profile may
     * name it too. */
    [SR_ETC_RESOLV_CONF] = {"resolv.conf", SR_VIEW_ETC_IF_HOST_NETWORK},
};

/* Not in the view: the names mount.c gives the host root and the new root
 * in its intermediate tmpfs.  A bind made below the new root never meets
 * them, but mount.c has always refused them; they stay refused. */
static const char *const builder_trees[] = {"/oldroot", "/newroot"};

const char *sr_view_type_name(const struct sr_view_entry *e, bool proc_tmpfs) {
  switch (e->type) {
  case SR_VIEW_BIND:
  case SR_VIEW_PROFILE_BINDS:
  case SR_VIEW_STAGED_INPUTS:
    return "bind";
  case SR_VIEW_BIND_OR_SYMLINK:
    return "bind-or-symlink";
  case SR_VIEW_ETC:
    return "synthesized";
  case SR_VIEW_PROC:
    return proc_tmpfs ? "tmpfs" : "procfs";
  case SR_VIEW_DIR:
    return "directory";
  case SR_VIEW_SYMLINK:
    return "symlink";
  case SR_VIEW_ROOT:
  case SR_VIEW_DEV:
  case SR_VIEW_TMPFS:
    break;
  }
  return "tmpfs";
}

bool sr_view_ro(const struct sr_view_entry *e, bool proc_tmpfs) {
  if (e->type == SR_VIEW_PROC)
    return proc_tmpfs;
  return e->ro;
}

/* An /etc file skillrun writes or always binds: neither a bind nor an
 * etc-file line may replace it. */
static bool etc_file_claimed(const char *path, bool or_below) {
  for (size_t i = 0; i < SR__ETC_MAX; i++) {
    char own[64];

    if (sr_view_etc[i].kind == SR_VIEW_ETC_IF_HOST_NETWORK)
      continue;
    snprintf(own, sizeof(own), "/etc/%s", sr_view_etc[i].name);
    if (or_below ? sr_path_at_or_below(path, own) : !strcmp(path, own))
      return true;
  }
  return false;
}

enum sr_view_reserve sr_view_claims(const char *dst, const char **ret_tree) {
  for (size_t i = 0; i < sr_view_len; i++) {
    const struct sr_view_entry *e = &sr_view[i];

    if (!e->dst)
      continue;
    if (e->reserve == SR_VIEW_RESERVE_TREE &&
        sr_path_at_or_below(dst, e->dst)) {
      if (ret_tree)
        *ret_tree = e->dst;
      return SR_VIEW_RESERVE_TREE;
    }
    if (e->reserve == SR_VIEW_RESERVE_AT && !strcmp(dst, e->dst))
      return SR_VIEW_RESERVE_AT;
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(builder_trees); i++)
    if (sr_path_at_or_below(dst, builder_trees[i])) {
      if (ret_tree)
        *ret_tree = builder_trees[i];
      return SR_VIEW_RESERVE_TREE;
    }
  return etc_file_claimed(dst, false) ? SR_VIEW_RESERVE_AT
                                      : SR_VIEW_RESERVE_NONE;
}

bool sr_view_etc_claims(const char *path) {
  return etc_file_claimed(path, true);
}

int sr_view_skill_dir(const char *name, char *buf, size_t len) {
  int n;

  if (!name || !sr_valid_filename(name))
    name = "bundle";
  n = snprintf(buf, len, "%s/%s", SR_VIEW_SKILLS, name);
  return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *sr_view_source_name(const struct sr_view_entry *e) {
  switch (e->source) {
  case SR_VIEW_SRC_HOST:
    return e->host;
  case SR_VIEW_SRC_INPUTS:
    return "(staged inputs)";
  case SR_VIEW_SRC_BUNDLE:
    return "(verified bundle copy)";
  case SR_VIEW_SRC_METADATA:
    return "(metadata.json)";
  case SR_VIEW_SRC_NONE:
    break;
  }
  return NULL;
}
