/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/*
 * The sandbox as the skill sees it (DESIGN.md "The sandbox as the skill
 * sees it", skillrun(1)), described once: mount.c walks sr_view[] to build
 * the root, policy.c renders it for --explain and the policy_resolved
 * event, and the profile parser and mount.c refuse a bind onto anything it
 * builds (sr_view_claims).  Pure: no syscalls; it knows nothing of the
 * policy (what depends on one, /proc's kind, takes it as an argument).
 */

/* Paths of the view that other code names (the SKILLRUN_* variables name
 * them to the skill). */
#define SR_VIEW_SKILLS "/workspace/skills"        /* the bundle: SKILLS/NAME */
#define SR_VIEW_BUNDLE "/workspace/inputs/bundle" /* its old path: a link */
#define SR_VIEW_INPUTS "/workspace/inputs"
#define SR_VIEW_SCRATCH "/workspace/scratch"
#define SR_VIEW_OUTPUTS "/workspace/outputs"

/*
 * The bundle's directory in the sandbox, which carries the skill's name
 * (a packager run in it names its output after it) and is the skill's
 * working directory: SR_VIEW_SKILLS "/" name.  A name that is no single
 * path component of at most 255 bytes (64 characters outside the BMP can
 * be 256) gets SR_VIEW_SKILLS "/bundle" instead, as does a NULL one.
 * Returns 0, or -ENAMETOOLONG when buf is too small.
 */
#define SR_VIEW_SKILL_DIR_MAX (sizeof(SR_VIEW_SKILLS) + 256)
int sr_view_skill_dir(const char *name, char *buf, size_t len);

/* How an entry is built (mount.c has one builder per type). */
enum sr_view_type {
  SR_VIEW_ROOT,            /* the root tmpfs; read-only once entered */
  SR_VIEW_BIND,            /* read-only bind of `source` */
  SR_VIEW_BIND_OR_SYMLINK, /* the host's symlink recreated, or its directory
                            * bound read-only; skipped when the host has
                            * none */
  SR_VIEW_ETC,             /* a directory of files written by skillrun plus
                            * host files bound in (sr_view_etc, the policy's
                            * etc-file lines) */
  SR_VIEW_PROFILE_BINDS,   /* the policy's bind-ro/bind-ro-try lines */
  SR_VIEW_DEV,             /* tmpfs: host device nodes, pts, shm; sealed */
  SR_VIEW_PROC,            /* procfs with masks, or with `proc tmpfs` an
                            * empty read-only tmpfs */
  SR_VIEW_TMPFS,           /* a tmpfs of size_limit bytes, mode `mode` */
  SR_VIEW_DIR,             /* a directory of the root tmpfs */
  SR_VIEW_STAGED_INPUTS,   /* a small tmpfs: each staged input file bound
                            * read-only (after the entries inside it), then
                            * the tmpfs sealed read-only */
  SR_VIEW_SYMLINK,         /* a symbolic link to the bundle's directory */
};

/* Where a bind's content comes from. */
enum sr_view_source {
  SR_VIEW_SRC_NONE = 0, /* built in place */
  SR_VIEW_SRC_HOST,     /* the host path `host` */
  SR_VIEW_SRC_INPUTS,   /* the run's staged --input files */
  SR_VIEW_SRC_BUNDLE,   /* the verified staging copy of the bundle */
  SR_VIEW_SRC_METADATA, /* the run's metadata.json */
};

/* What a profile bind may not land on. */
enum sr_view_reserve {
  SR_VIEW_RESERVE_NONE = 0,
  SR_VIEW_RESERVE_AT,   /* the destination itself (binds below it are fine) */
  SR_VIEW_RESERVE_TREE, /* the destination and everything below it */
};

/* Pointers first, then the enums, then the flags: no padding between. */
struct sr_view_entry {
  const char *dst;        /* sandbox path; NULL for SR_VIEW_PROFILE_BINDS */
  const char *host;       /* SR_VIEW_SRC_HOST: absolute host path */
  const char *size_limit; /* the limit (policy.h) that sizes it, or NULL */
  /* SR_VIEW_TMPFS: the limit that caps its inodes (entries below its
   * root); NULL: one inode per 4 KiB of its size (mount.c). */
  const char *inode_limit;
  enum sr_view_type type;
  enum sr_view_source source;
  unsigned mode; /* SR_VIEW_TMPFS: mode of its root */
  enum sr_view_reserve reserve;
  bool ro;        /* as --explain states it (see sr_view_ro) */
  bool optional;  /* as --explain states it: a missing source is skipped */
  bool noexec;    /* binds: mounted noexec too */
  bool owned;     /* SR_VIEW_TMPFS: owned by the sandbox user */
  bool per_skill; /* dst is the bundle's directory (sr_view_skill_dir), below
                   * the `dst` given */
  bool listed;    /* rendered by sr_view_to_json */
  /* SR_VIEW_TMPFS: harvested, its limits enforced to the byte and the
   * entry by the harvest; the tmpfs holds a page and an inode more, so
   * that a skill that writes exactly the limits does not fill it. */
  bool harvested;
};

/* In build order: an entry comes after the entries it is inside. */
extern const struct sr_view_entry sr_view[];
extern const size_t sr_view_len;

/* The files skillrun itself puts in /etc, in the order it does. */
enum sr_view_etc_file {
  SR_ETC_PASSWD,
  SR_ETC_GROUP,
  SR_ETC_HOSTS,
  SR_ETC_HOSTNAME,
  SR_ETC_NSSWITCH,
  SR_ETC_LD_SO_CACHE,
  SR_ETC_RESOLV_CONF,
  SR__ETC_MAX
};
enum sr_view_etc_kind {
  SR_VIEW_ETC_WRITTEN,         /* written by skillrun */
  SR_VIEW_ETC_HOST,            /* the host's, bound read-only when present */
  SR_VIEW_ETC_IF_HOST_NETWORK, /* the same, only when the sandbox shares
                                * the host's network (`network host`);
                                * after the policy's etc-file lines */
};
struct sr_view_etc {
  const char *name; /* below /etc */
  enum sr_view_etc_kind kind;
};
extern const struct sr_view_etc sr_view_etc[SR__ETC_MAX];

/* The type name --explain shows ("tmpfs", "bind", "procfs"...), whether
 * the entry is read-only (/proc depends on the profile's `proc`: tmpfs or
 * procfs) and what its source is called ("/usr", "(staged inputs)"; NULL
 * for one built in place). */
const char *sr_view_type_name(const struct sr_view_entry *e, bool proc_tmpfs);
bool sr_view_ro(const struct sr_view_entry *e, bool proc_tmpfs);
const char *sr_view_source_name(const struct sr_view_entry *e);

/*
 * Whether a bind may land on dst (a valid absolute path), from the view's
 * reservations: SR_VIEW_RESERVE_NONE when it may; SR_VIEW_RESERVE_AT when
 * dst is something skillrun builds itself (an entry, or a file it puts in
 * /etc); SR_VIEW_RESERVE_TREE when dst is inside a tree skillrun builds in
 * full, *ret_tree (when not NULL) naming that tree.
 */
enum sr_view_reserve sr_view_claims(const char *dst, const char **ret_tree);
/* Whether an etc-file line may name /etc path (a valid absolute path below
 * /etc): not a file skillrun writes or always binds itself, nor anything
 * below one. */
bool sr_view_etc_claims(const char *path);
