/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox filesystem.  Technique (bubblewrap's, written afresh, but
 * private where bubblewrap makes / a slave: no host mount made later
 * reaches the view): make / private recursively, mount a scratch tmpfs on
 * /tmp, pivot into it so the host root sits at /oldroot, build the new
 * root in /newroot from clones of host trees (open_tree + mount_setattr +
 * move_mount, so read-only holds recursively), pivot into /newroot, detach
 * everything else, remount the new root read-only and read the table
 * back.
 *
 * What is built, in which order, is the view table (view.c): this file has
 * one builder per entry type and walks the table.
 *
 * Host paths are resolved with openat2(RESOLVE_IN_ROOT) against the old
 * root, so a symlink in a profile path resolves as if the host root were /
 * and never escapes it; paths inside the new root are created and opened
 * with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "fdutil.h"
#include "mount.h"
#include "policy.h"
#include "util.h"
#include "view.h"

/* Where the intermediate tmpfs goes.  Private to this mount namespace once
 * / is private, so the host never sees it. */
#define BASE_DIR "/tmp"
#define NEWROOT "/newroot"
#define OLDROOT "/oldroot"

/* The new root only holds directories, symlinks and the small synthesized
 * /etc files; everything large is a mount on top of it. */
#define ROOT_TMPFS_OPTS "size=16m,nr_inodes=4096,mode=0755"
#define DEV_TMPFS_OPTS "size=64k,nr_inodes=256,mode=0755"
#define INPUTS_TMPFS_OPTS "size=64k,nr_inodes=4096,mode=0755"
#define MASK_TMPFS_OPTS "size=4k,nr_inodes=8,mode=0555"

#define RESOLVE_HOST (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)
#define RESOLVE_NEW                                                            \
  (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

#define ATTR_RO_BIND (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define ATTR_RO_BIND_NOEXEC (ATTR_RO_BIND | MOUNT_ATTR_NOEXEC)
/* Device nodes bound from the host: they must stay devices (no nodev). */
#define ATTR_DEV_BIND (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)

/* What a profile's bind-ro source must resolve to: neither the host's
 * root nor in its /proc or /dev (policy.c refuses these as written; a link
 * could lead there), and at or below one of skillrun.conf's paths
 * (permitted; NULL: anywhere). */
struct sr_bind_bound {
  const char *key;
  const struct sr_strv *permitted;
};

struct ctx {
  const struct sr_mount_plan *plan;
  const struct sr_policy *pol;
  int host_fd;     /* O_PATH of the host root (at /oldroot) */
  int root_fd;     /* O_PATH of the new root (at /newroot) */
  unsigned masked; /* the proc_masked entries build_proc masked, a bit each */
  struct sr_error *err;
};

/* The device nodes bound from the host, and the devices they must be.
 * Each is the host's own inode, which inotify(7) watches from inside see
 * every host process use (skillrun(1) SECURITY).  Not /dev/tty: a skill
 * watching it counted the bytes a host user typed into a password prompt
 * that reads /dev/tty a byte at a time (ssh, sudo).  The skill's session
 * has no terminal; one it makes itself is a node of its own /dev/pts. */
static const struct {
  const char *name;
  unsigned major, minor;
} dev_nodes[] = {
    {"null", 1, 3},   {"zero", 1, 5},    {"full", 1, 7},
    {"random", 1, 8}, {"urandom", 1, 9},
};

/* Top-level /proc entries hidden from the skill: files get /dev/null bound
 * over them, directories one empty read-only tmpfs (the first mounted, the
 * others bound from it).  The list follows the
 * runc/crun defaults plus the kernel-memory and key views.  interrupts:
 * every CPU's count of every interrupt on the host, the thermal event
 * interrupts among them, which a skill polls to watch the host's other
 * work (the thermal side channel, GHSA-6fw5-f8r9-fgfm; Docker, Podman,
 * CRI-O and Kubernetes mask it since 2025). */
static const char *const proc_masked[] = {
    "kcore",       "keys",       "key-users",  "timer_list",    "timer_stats",
    "sched_debug", "kallsyms",   "kmsg",       "latency_stats", "config.gz",
    "vmallocinfo", "kpagecount", "kpageflags", "kpagecgroup",   "interrupts",
    "acpi",        "asound",     "scsi",       "driver",
};
_Static_assert(SR_ARRAY_SIZE(proc_masked) <= 32,
               "verify_mountinfo keeps a bit per masked entry");
/* Bound onto themselves read-only.  sysrq-trigger is here rather than in
 * the mask list: a /dev/null over it would make writes "succeed".
 * pressure: the host's PSI figures stay readable, but its files are
 * 0666 and a write arms a trigger on the host's (not the run's) pressure,
 * kernel memory and a check on every update for each open file, 1000 of
 * them per process; nothing a skill does needs that. */
static const char *const proc_readonly[] = {"sys", "bus",           "irq",
                                            "fs",  "sysrq-trigger", "pressure"};

static int sys_openat2(int dirfd, const char *path, uint64_t flags,
                       uint64_t resolve) {
  struct open_how how = {
      .flags = flags | O_CLOEXEC,
      .resolve = resolve,
  };

  for (int i = 0; i < 16; i++) {
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd >= 0)
      return (int)fd;
    /* openat2(2): EAGAIN when a concurrent rename or mount raced the
     * RESOLVE_IN_ROOT/BENEATH check; retrying is the documented answer. */
    if (errno != EAGAIN && errno != EINTR)
      return -errno;
  }
  return -EAGAIN;
}

static int mount_err(struct ctx *c, int r, const char *what,
                     const char *where) {
  return sr_error_layer(c->err, "mount", -r, "mount %s on %s", what, where);
}

/*
 * Opens the leaf name below dir as make_path returns it, creating it first:
 * a mount point is new far more often than not, so creating before looking
 * saves a failed lookup.  A new empty regular file is returned as the
 * descriptor that created it (O_EXCL: never a link's target); a directory,
 * or a leaf that was already there, is opened O_PATH without following
 * any link.  A file's descriptor is a writer on dir's mount: close it
 * before that mount is made read-only (MOUNT_ATTR_RDONLY fails with EBUSY
 * while a writer is open).
 */
static int make_leaf(int dir, const char *name, bool is_dir) {
  if (!is_dir) {
    int fd = openat(dir, name,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0)
      return fd;
    if (errno != EEXIST)
      return -errno;
  } else if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST) {
    return -errno;
  }
  return sys_openat2(dir, name, O_PATH | (is_dir ? O_DIRECTORY : 0),
                     RESOLVE_NEW);
}

/*
 * Creates path (absolute, inside root_fd) and its parents without
 * following any symlink, and returns an fd of it (O_PATH, or for a file it
 * created the descriptor that created it).  The leaf is a directory when
 * dir, else an empty regular file; an existing leaf is kept.
 */
static int make_path(int root_fd, const char *path, bool dir, int *ret_fd) {
  char copy[PATH_MAX];            /* not the heap: sr_read_file_into says why */
  _cleanup_close_ int owned = -1; /* cur, once it is not root_fd */
  int cur = root_fd;
  char *save = NULL, *comp, *next;
  size_t len = strlen(path);

  if (len >= sizeof(copy))
    return -ENAMETOOLONG;
  memcpy(copy, path, len + 1);
  comp = strtok_r(copy, "/", &save);
  if (!comp)
    return -EINVAL; /* the root itself is never a mount target here */
  for (; comp; comp = next) {
    int fd;

    next = strtok_r(NULL, "/", &save);
    if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0)
      return -EINVAL;
    if (!next) {
      fd = make_leaf(cur, comp, dir);
    } else {
      fd = sys_openat2(cur, comp, O_PATH | O_DIRECTORY, RESOLVE_NEW);
      if (fd == -ENOENT) {
        if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
          return -errno;
        fd = sys_openat2(cur, comp, O_PATH | O_DIRECTORY, RESOLVE_NEW);
      }
    }
    if (fd < 0)
      return fd;
    safe_close(owned);
    owned = cur = fd;
  }
  *ret_fd = TAKE_FD(owned);
  return 0;
}

/* The flags that must be visible on a mount for attr to have taken. */
static int check_statvfs_fd(int fd, uint64_t attr) {
  struct statvfs sv;
  unsigned long want = 0;

  if (fstatvfs(fd, &sv) < 0)
    return -errno;
  if (attr & MOUNT_ATTR_RDONLY)
    want |= ST_RDONLY;
  if (attr & MOUNT_ATTR_NOSUID)
    want |= ST_NOSUID;
  if (attr & MOUNT_ATTR_NODEV)
    want |= ST_NODEV;
  if (attr & MOUNT_ATTR_NOEXEC)
    want |= ST_NOEXEC;
  return (sv.f_flag & want) == want ? 0 : -EPERM;
}

/*
 * Clones the mount tree at src_name below src_dir (recursively: a
 * non-recursive clone of a tree with locked submounts is refused in a user
 * namespace, and read-only must hold for submounts too), applies attr to
 * every mount of the clone (none when 0: a clone keeps its source's flags)
 * and attaches it on dst_name below dst_dir.  A name "" is the descriptor
 * itself; a name is one component, and a symlink there is not followed.
 * Returns the attached tree's descriptor, or -errno.
 *
 * The flags are read back by the caller (bind_fd), or, for the trees that
 * nothing but the builders may mount in (/dev and /proc, reserved in
 * view.c), by verify_mountinfo alone, which holds every mount there to
 * nosuid and noexec and all but the devices to read-only and nodev.
 */
static int clone_at(int src_dir, const char *src_name, int dst_dir,
                    const char *dst_name, uint64_t attr) {
  _cleanup_close_ int tree = -1;
  struct mount_attr ma = {.attr_set = attr};

  tree = open_tree(
      src_dir, src_name,
      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE |
          (*src_name ? AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT : AT_EMPTY_PATH));
  if (tree < 0)
    return -errno;
  if (attr && mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma,
                            sizeof(ma)) < 0)
    return -errno;
  /* Without MOVE_MOUNT_T_SYMLINKS a link at dst_name is not followed. */
  if (move_mount(tree, "", dst_dir, dst_name,
                 MOVE_MOUNT_F_EMPTY_PATH |
                     (*dst_name ? 0 : MOVE_MOUNT_T_EMPTY_PATH)) < 0)
    return -errno;
  return TAKE_FD(tree);
}

/* clone_at of the descriptors themselves. */
static int clone_onto(int src_fd, int dst_fd, uint64_t attr) {
  return clone_at(src_fd, "", dst_fd, "", attr);
}

/* clone_onto, then the flags of the attached mount read back: what the
 * skill will see. */
static int bind_fd(int src_fd, int dst_fd, uint64_t attr) {
  _cleanup_close_ int tree = clone_onto(src_fd, dst_fd, attr);

  if (tree < 0)
    return tree;
  return check_statvfs_fd(tree, attr);
}

/* Where fd, opened below the host root, is on the host: the readlink of
 * its /proc/self/fd entry (through the host's procfs, still at
 * /oldroot/proc) less the /oldroot prefix.  What the kernel resolved, every
 * symbolic link followed, not what a profile wrote.  0 or -errno (-EXDEV:
 * not reachable from the host root, or deleted). */
static int host_path_of(struct ctx *c, int fd, char *buf, size_t len) {
  char link[64], got[PATH_MAX];
  const char *rest;
  ssize_t n;

  snprintf(link, sizeof(link), "proc/self/fd/%d", fd);
  n = readlinkat(c->host_fd, link, got, sizeof(got));
  if (n < 0)
    return -errno;
  /* Truncated, it could end mid-component inside a permitted path. */
  if ((size_t)n >= sizeof(got))
    return -ENAMETOOLONG;
  got[n] = '\0';
  if (strncmp(got, OLDROOT, strlen(OLDROOT)) != 0)
    return -EXDEV;
  rest = got + strlen(OLDROOT);
  if (*rest == '\0')
    rest = "/";
  if (*rest != '/' || !sr_valid_abs_path(rest))
    return -EXDEV;
  if ((size_t)snprintf(buf, len, "%s", rest) >= len)
    return -ENAMETOOLONG;
  return 0;
}

/*
 * Whether sfd, a bind source opened from the host root, is where b admits:
 * at or below one of skillrun.conf's permitted paths once both are
 * resolved the same way
 * (a permitted /lib admits what /lib/x reaches on a merged-/usr host, where
 * /lib is a link to usr/lib).  policy.c checked the paths as the profile
 * wrote them; a symbolic link below a permitted path (or any component of
 * the source) may lead elsewhere, and this checks the descriptor that is
 * bound, so nothing can change between the check and the bind.  0, or
 * -errno with the error set.
 */
static int check_conf_bound(struct ctx *c, int sfd, const char *src,
                            const struct sr_bind_bound *b) {
  char got[PATH_MAX], allowed[PATH_MAX];
  struct stat st;
  int r;

  r = host_path_of(c, sfd, got, sizeof(got));
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r,
                          "%s %s: cannot tell where it resolves on the host",
                          b->key, src);
  /* A deleted file's link reads "PATH (deleted)": no path to check. */
  if (fstat(sfd, &st) < 0)
    return sr_error_layer(c->err, "mount", errno, "stat %s", src);
  if (st.st_nlink == 0)
    return sr_error_layer(c->err, "mount", EXDEV, "%s %s: deleted", b->key,
                          src);
  if (!strcmp(got, "/") || sr_path_at_or_below(got, "/proc") ||
      sr_path_at_or_below(got, "/dev"))
    return sr_error_layer(c->err, "mount", EPERM,
                          "%s %s resolves to %s, which may not be bound into "
                          "the sandbox",
                          b->key, src, got);
  if (!b->permitted)
    return 0;
  for (size_t i = 0; i < b->permitted->n; i++) {
    _cleanup_close_ int pfd =
        sys_openat2(c->host_fd, b->permitted->v[i], O_PATH, RESOLVE_HOST);

    if (pfd < 0)
      continue; /* absent on this host: admits nothing */
    if (host_path_of(c, pfd, allowed, sizeof(allowed)) < 0)
      continue;
    if (sr_path_at_or_below(got, allowed))
      return 0;
  }
  return sr_error_layer(c->err, "mount", EPERM,
                        "%s %s resolves to %s, outside skillrun.conf's %s",
                        b->key, src, got, b->key);
}

/* Binds host path src (resolved inside the host root) on sandbox path dst,
 * creating dst like src (directory or file); with bound, only where the
 * source resolves within it (check_conf_bound).  Returns 0, or 1 with no error
 * set when src does not exist (callers implement -try), or -errno with the
 * error set. */
static int bind_host(struct ctx *c, const char *src, const char *dst,
                     uint64_t attr, const struct sr_bind_bound *bound) {
  _cleanup_close_ int sfd = -1, dfd = -1;
  struct stat st;
  int r;

  if (!sr_valid_abs_path(src))
    return sr_error_layer(c->err, "mount", EINVAL,
                          "bind source %s: not a clean absolute path", src);
  if (!sr_valid_abs_path(dst))
    return sr_error_layer(c->err, "mount", EINVAL,
                          "bind target %s: not a clean absolute path", dst);
  sfd = sys_openat2(c->host_fd, src, O_PATH, RESOLVE_HOST);
  if (sfd == -ENOENT)
    return 1; /* no error set: the caller decides (-try) */
  if (sfd < 0)
    return sr_error_layer(c->err, "mount", -sfd, "open bind source %s", src);
  if (bound) {
    r = check_conf_bound(c, sfd, src, bound);
    if (r < 0)
      return r;
  }
  if (fstat(sfd, &st) < 0)
    return sr_error_layer(c->err, "mount", errno, "stat bind source %s", src);
  r = make_path(c->root_fd, dst, S_ISDIR(st.st_mode), &dfd);
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "create mount point %s", dst);
  r = bind_fd(sfd, dfd, attr);
  if (r < 0)
    return mount_err(c, r, src, dst);
  return 0;
}

/* mount(2) of a fresh filesystem on a sandbox path under /newroot. */
static int mount_fs(struct ctx *c, const char *type, const char *where,
                    unsigned long flags, const char *opts) {
  char path[PATH_MAX];

  if (snprintf(path, sizeof(path), NEWROOT "%s", where) >= (int)sizeof(path))
    return sr_error_layer(c->err, "mount", ENAMETOOLONG, "mount %s on %s", type,
                          where);
  if (mount(type, path, type, flags, opts) < 0)
    return sr_error_layer(c->err, "mount", errno, "mount %s on %s", type,
                          where);
  return 0;
}

/*
 * A tmpfs of `size` bytes and `inodes` inodes.  Every tmpfs skillrun mounts
 * has both caps: empty files and directories cost no blocks but about 1 KiB
 * of unreclaimable kernel memory each, so a size cap alone lets a skill pin
 * gigabytes of the host's memory.  inodes 0: one per SR_TMPFS_BYTES_PER_INODE
 * bytes of the size, at least SR_TMPFS_MIN_INODES (as many empty files as
 * files of one page would fit).
 */
#define SR_TMPFS_BYTES_PER_INODE 4096
#define SR_TMPFS_MIN_INODES 1024
static int mount_sized_tmpfs(struct ctx *c, const char *where, uint64_t size,
                             uint64_t inodes, const char *mode, bool owned) {
  char opts[160];

  /* tmpfs treats size=0 and nr_inodes=0 as "no limit": never let that
   * through. */
  if (size == 0)
    return sr_error_layer(c->err, "mount", EINVAL,
                          "mount tmpfs on %s: size 0 would be unlimited",
                          where);
  if (inodes == 0) {
    inodes = size / SR_TMPFS_BYTES_PER_INODE;
    if (inodes < SR_TMPFS_MIN_INODES)
      inodes = SR_TMPFS_MIN_INODES;
  }
  if (owned)
    snprintf(opts, sizeof(opts),
             "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=%s,uid=%u,gid=%u",
             size, inodes, mode, (unsigned)c->plan->uid,
             (unsigned)c->plan->gid);
  else
    snprintf(opts, sizeof(opts),
             "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=%s", size, inodes,
             mode);
  return mount_fs(c, "tmpfs", where, MS_NOSUID | MS_NODEV, opts);
}

/* Sets attr on the single mount at sandbox path where (not recursive). */
static int setattr_path(struct ctx *c, const char *where, uint64_t attr) {
  _cleanup_close_ int fd = -1;
  struct mount_attr ma = {.attr_set = attr};

  fd = sys_openat2(c->root_fd, where[0] == '/' ? where + 1 : where,
                   O_PATH | O_DIRECTORY, RESOLVE_NEW);
  if (fd < 0)
    return sr_error_layer(c->err, "mount", -fd, "open %s", where);
  if (mount_setattr(fd, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0)
    return sr_error_layer(c->err, "mount", errno, "remount %s read-only",
                          where);
  /* Read back by verify_mountinfo: neither mount (/dev, the inputs'
   * tmpfs) is one it lets stay writable. */
  return 0;
}

static int write_new_file(struct ctx *c, int dirfd, const char *name,
                          const char *content) {
  _cleanup_close_ int fd = -1;
  int r;

  fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              0644);
  if (fd < 0)
    return sr_error_layer(c->err, "mount", errno, "create /etc/%s", name);
  r = sr_write_all(fd, content, strlen(content));
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "write /etc/%s", name);
  return 0;
}

/* ------------------------------------------------------------ pinning */

static bool same_object(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
         (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

/* *fd (the supervisor's) replaced by the object at path when it is the
 * same one; flags: how to open it.  No path or no fd: nothing to pin. */
static int pin_one(int *fd, const char *path, int flags, const char *what,
                   struct sr_error *err) {
  struct stat want, got;
  int own;

  if (*fd < 0 || !path)
    return 0;
  if (fstat(*fd, &want) < 0)
    return sr_error_layer(err, "mount", errno, "%s: stat the staged copy",
                          what);
  own = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
  if (own < 0)
    return sr_error_layer(err, "mount", errno, "open %s %s", what, path);
  if (fstat(own, &got) < 0 || !same_object(&want, &got)) {
    safe_close(own);
    return sr_error_layer(err, "mount", 0,
                          "%s %s is not what skillrun staged and verified "
                          "(replaced after verification): refusing to mount "
                          "it",
                          what, path);
  }
  *fd = own; /* the inherited one is closed with the supervisor's others */
  return 0;
}

int sr_mount_pin(struct sr_mount_plan *plan, struct sr_error *err) {
  int r;

  if (plan->bundle_fd < 0 || !plan->bundle_dir)
    return sr_error_layer(err, "mount", EINVAL, "no staged bundle");
  r = pin_one(&plan->bundle_fd, plan->bundle_dir, O_PATH | O_DIRECTORY,
              "the bundle", err);
  if (r >= 0)
    r = pin_one(&plan->inputs_fd, plan->inputs_dir, O_RDONLY | O_DIRECTORY,
                "the staged inputs", err);
  if (r >= 0)
    r = pin_one(&plan->metadata_fd, plan->metadata_file, O_PATH, "metadata",
                err);
  return r;
}

static void plan_unpin(struct sr_mount_plan *plan) {
  plan->bundle_fd = safe_close(plan->bundle_fd);
  plan->inputs_fd = safe_close(plan->inputs_fd);
  plan->metadata_fd = safe_close(plan->metadata_fd);
}

/* After the bind: what the skill will see at dst is the pinned object. */
static int check_bound(struct ctx *c, int src_fd, const char *dst,
                       const char *what) {
  _cleanup_close_ int fd = -1;
  struct stat want, got;

  fd = sys_openat2(c->root_fd, dst + 1, O_PATH, RESOLVE_NEW);
  if (fd < 0)
    return sr_error_layer(c->err, "mount", -fd, "open %s", dst);
  if (fstat(src_fd, &want) < 0 || fstat(fd, &got) < 0)
    return sr_error_layer(c->err, "mount", errno, "stat %s", dst);
  if (!same_object(&want, &got))
    return sr_error_layer(c->err, "mount", 0,
                          "%s on %s is not the staged object", what, dst);
  return 0;
}

/* ------------------------------------------------------------- builders */

static int build_root(struct ctx *c, const struct sr_view_entry *e) {
  if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, ROOT_TMPFS_OPTS) <
      0)
    return sr_error_layer(c->err, "mount", errno,
                          "mount tmpfs on %s (new root)", e->dst);
  c->root_fd = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (c->root_fd < 0)
    return sr_error_layer(c->err, "mount", errno, "open %s", NEWROOT);
  return 0;
}

/* The bundle's directory in the sandbox (view.h), named after the skill. */
static const char *skill_dir(const struct ctx *c) {
  return c->pol->skill_dir ? c->pol->skill_dir : SR_VIEW_SKILLS "/bundle";
}

/* The run's own object, pinned by sr_mount_pin, bound on dst by its fd and
 * checked there once bound. */
static int bind_pinned(struct ctx *c, int src_fd, const char *dst, bool noexec,
                       const char *what) {
  _cleanup_close_ int dfd = -1;
  struct stat st;
  int r;

  if (fstat(src_fd, &st) < 0)
    return sr_error_layer(c->err, "mount", errno, "stat %s", what);
  r = make_path(c->root_fd, dst, S_ISDIR(st.st_mode), &dfd);
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "create mount point %s", dst);
  r = bind_fd(src_fd, dfd, noexec ? ATTR_RO_BIND_NOEXEC : ATTR_RO_BIND);
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "mount %s on %s", what, dst);
  return check_bound(c, src_fd, dst, what);
}

static int build_bind(struct ctx *c, const struct sr_view_entry *e) {
  const struct sr_mount_plan *p = c->plan;
  const char *dst = e->per_skill ? skill_dir(c) : e->dst;
  int r;

  switch (e->source) {
  case SR_VIEW_SRC_HOST:
    break;
  case SR_VIEW_SRC_BUNDLE:
    if (p->bundle_fd < 0)
      return sr_error_layer(c->err, "mount", EINVAL, "no bundle directory");
    return bind_pinned(c, p->bundle_fd, dst, e->noexec, "the bundle");
  case SR_VIEW_SRC_METADATA:
    if (p->metadata_fd < 0)
      return 0; /* a run without one */
    return bind_pinned(c, p->metadata_fd, dst, e->noexec, "metadata.json");
  case SR_VIEW_SRC_INPUTS:
  case SR_VIEW_SRC_NONE:
    return sr_error_layer(c->err, "mount", EINVAL, "%s: no source", dst);
  }
  r = bind_host(c, e->host, dst, e->noexec ? ATTR_RO_BIND_NOEXEC : ATTR_RO_BIND,
                NULL);
  if (r > 0 && e->optional)
    return 0;
  if (r > 0)
    return sr_error_layer(c->err, "mount", ENOENT, "bind %s: host has none",
                          dst);
  return r;
}

/* A link to the bundle's directory, in a directory built before it (the
 * staged inputs' tmpfs, sealed afterwards). */
static int build_symlink(struct ctx *c, const struct sr_view_entry *e) {
  if (!sr_valid_abs_path(e->dst) || !sr_valid_abs_path(skill_dir(c)))
    return sr_error_layer(c->err, "mount", EINVAL, "symlink %s", e->dst);
  if (symlinkat(skill_dir(c), c->root_fd, e->dst + 1) < 0)
    return sr_error_layer(c->err, "mount", errno, "symlink %s -> %s", e->dst,
                          skill_dir(c));
  return 0;
}

/* The host's symlink (merged /usr) is recreated as it is; a directory is
 * bound read-only; nothing, or anything else, is skipped. */
static int build_bind_or_symlink(struct ctx *c, const struct sr_view_entry *e) {
  const char *name = e->host + 1; /* relative to the host root */
  char target[PATH_MAX];
  struct stat st;
  ssize_t n;
  int r;

  if (fstatat(c->host_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
    if (errno == ENOENT)
      return 0;
    return sr_error_layer(c->err, "mount", errno, "stat host %s", e->host);
  }
  if (S_ISLNK(st.st_mode)) {
    n = readlinkat(c->host_fd, name, target, sizeof(target) - 1);
    if (n < 0)
      return sr_error_layer(c->err, "mount", errno, "readlink host %s",
                            e->host);
    target[n] = '\0';
    if (symlinkat(target, c->root_fd, e->dst + 1) < 0)
      return sr_error_layer(c->err, "mount", errno, "symlink %s -> %s", e->dst,
                            target);
  } else if (S_ISDIR(st.st_mode)) {
    r = bind_host(c, e->host, e->dst, ATTR_RO_BIND, NULL);
    if (r > 0)
      return sr_error_layer(c->err, "mount", ENOENT, "bind %s", e->dst);
    if (r < 0)
      return r;
  }
  return 0;
}

/* "resolv.conf", "/etc/resolv.conf" or "ssl/certs" -> "/etc/NAME". */
static int etc_path(const char *name, char *out, size_t len) {
  if (strncmp(name, "/etc/", 5) == 0)
    name += 5;
  while (*name == '/')
    name++;
  if (!*name || (size_t)snprintf(out, len, "/etc/%s", name) >= len)
    return -EINVAL;
  return sr_valid_abs_path(out) ? 0 : -EINVAL;
}

/* An /etc file of the host's on itself.  A profile's stays within
 * skillrun.conf's etc-file as written (policy.c): /etc and the links in it
 * are root's, and lead where root made them lead (/etc/localtime into
 * /usr/share/zoneinfo, Fedora's CA bundle into /etc/pki). */
static int bind_etc_file(struct ctx *c, const char *name, bool optional) {
  char path[PATH_MAX];
  int r;

  if (etc_path(name, path, sizeof(path)) < 0)
    return sr_error_layer(c->err, "mount", EINVAL, "etc-file %s: bad name",
                          name);
  r = bind_host(c, path, path, ATTR_RO_BIND_NOEXEC, NULL);
  if (r > 0 && optional)
    return 0;
  if (r > 0)
    return sr_error_layer(c->err, "mount", ENOENT, "etc-file %s", path);
  return r;
}

/* The content of a file of sr_view_etc that skillrun writes. */
static void etc_content(struct ctx *c, enum sr_view_etc_file f, char *buf,
                        size_t len) {
  const struct sr_mount_plan *p = c->plan;
  const char *host = c->pol->hostname ? c->pol->hostname : "skillrun";
  const char *user = p->user_name ? p->user_name : "skill";
  const char *home = p->home ? p->home : SR_VIEW_SCRATCH;

  switch (f) {
  case SR_ETC_PASSWD:
    snprintf(buf, len,
             "root:x:0:0:root:/root:/usr/sbin/nologin\n"
             "%s:x:%u:%u:%s:%s:/bin/sh\n"
             "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
             user, (unsigned)p->uid, (unsigned)p->gid, user, home);
    return;
  case SR_ETC_GROUP:
    snprintf(buf, len, "root:x:0:\n%s:x:%u:\nnogroup:x:65534:\n", user,
             (unsigned)p->gid);
    return;
  case SR_ETC_HOSTS:
    snprintf(buf, len,
             "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost "
             "ip6-loopback\n127.0.1.1\t%s\n",
             host);
    return;
  case SR_ETC_HOSTNAME:
    snprintf(buf, len, "%s\n", host);
    return;
  case SR_ETC_NSSWITCH:
    /* DNS only where there is a resolver to ask: with the host's network
     * (and its resolv.conf, SR_VIEW_ETC_IF_HOST_NETWORK).  Otherwise names
     * resolve from /etc/hosts at once, and an allowlist run's proxy
     * resolves the names it is asked for on the host side. */
    snprintf(buf, len, "passwd: files\ngroup: files\nhosts: files%s\n",
             c->pol->network == SR_NET_HOST ? " dns" : "");
    return;
  case SR_ETC_LD_SO_CACHE:
  case SR_ETC_RESOLV_CONF:
  case SR__ETC_MAX:
    break;
  }
  buf[0] = '\0';
}

/* The files of sr_view_etc of one kind, in table order. */
static int build_etc_files(struct ctx *c, int etc, enum sr_view_etc_kind kind) {
  char buf[1024];
  int r = 0;

  for (int f = 0; r >= 0 && f < SR__ETC_MAX; f++) {
    if (sr_view_etc[f].kind != kind)
      continue;
    if (kind == SR_VIEW_ETC_WRITTEN) {
      etc_content(c, f, buf, sizeof(buf));
      r = write_new_file(c, etc, sr_view_etc[f].name, buf);
    } else {
      r = bind_etc_file(c, sr_view_etc[f].name, true);
    }
  }
  return r;
}

static int build_etc(struct ctx *c, const struct sr_view_entry *e) {
  _cleanup_close_ int etc = -1;
  int r;

  if (mkdirat(c->root_fd, e->dst + 1, 0755) < 0)
    return sr_error_layer(c->err, "mount", errno, "mkdir %s", e->dst);
  etc = sys_openat2(c->root_fd, e->dst + 1, O_PATH | O_DIRECTORY, RESOLVE_NEW);
  if (etc < 0)
    return sr_error_layer(c->err, "mount", -etc, "open %s", e->dst);

  r = build_etc_files(c, etc, SR_VIEW_ETC_WRITTEN);
  if (r >= 0)
    r = build_etc_files(c, etc, SR_VIEW_ETC_HOST);
  for (size_t i = 0; r >= 0 && i < c->pol->etc_files.n; i++)
    r = bind_etc_file(c, c->pol->etc_files.v[i], false);
  for (size_t i = 0; r >= 0 && i < c->pol->etc_files_try.n; i++)
    r = bind_etc_file(c, c->pol->etc_files_try.v[i], true);
  if (r >= 0 && c->pol->network == SR_NET_HOST)
    r = build_etc_files(c, etc, SR_VIEW_ETC_IF_HOST_NETWORK);
  return r < 0 ? r : 0;
}

static int build_profile_binds(struct ctx *c, const struct sr_view_entry *e) {
  const struct sr_bind_bound bound = {
      "bind-ro", c->pol->binds_bounded ? &c->pol->binds_permitted : NULL};

  (void)e;
  for (size_t i = 0; i < c->pol->n_binds; i++) {
    const struct sr_bind *b = &c->pol->binds[i];
    int r;

    /* The profile parser refused these already (view.c's reservations,
     * with file:line); checked again before anything is mounted. */
    if (!b->src || !b->dst || !sr_valid_abs_path(b->dst) ||
        sr_view_claims(b->dst, NULL) != SR_VIEW_RESERVE_NONE)
      return sr_error_layer(
          c->err, "mount", EINVAL, "%s:%u: bind target %s is reserved",
          b->file ? b->file : "profile", b->line, b->dst ? b->dst : "(null)");
    r = bind_host(c, b->src, b->dst, ATTR_RO_BIND, &bound);
    if (r > 0 && b->optional)
      continue;
    if (r > 0)
      return sr_error_layer(c->err, "mount", ENOENT,
                            "%s:%u: bind source %s (use bind-ro-try for an "
                            "optional path)",
                            b->file ? b->file : "profile", b->line, b->src);
    if (r < 0)
      return r;
  }
  return 0;
}

/* The terminals a sandbox may have open at once (its devpts' max=). */
#define PTY_MAX "32"

static int build_dev(struct ctx *c, const struct sr_view_entry *e) {
  static const struct {
    const char *name, *target;
  } links[] = {
      {"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"},
      {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
      {"ptmx", "pts/ptmx"},
  };
  _cleanup_close_ int dev = -1;
  int r;

  (void)e; /* /dev: the node paths below are spelled out */
  if (mkdirat(c->root_fd, "dev", 0755) < 0)
    return sr_error_layer(c->err, "mount", errno, "mkdir /dev");
  /* nodev too: it holds no device of its own (the nodes are binds, each
   * a mount with its own flags), so the table check holds it to nodev
   * like every mount that is not a device's. */
  r = mount_fs(c, "tmpfs", "/dev", MS_NOSUID | MS_NODEV | MS_NOEXEC,
               DEV_TMPFS_OPTS);
  if (r < 0)
    return r;
  dev = sys_openat2(c->root_fd, "dev", O_PATH | O_DIRECTORY, RESOLVE_NEW);
  if (dev < 0)
    return sr_error_layer(c->err, "mount", -dev, "open /dev");

  for (size_t i = 0; i < SR_ARRAY_SIZE(dev_nodes); i++) {
    char path[32];
    _cleanup_close_ int sfd = -1, dfd = -1;
    struct stat st;

    snprintf(path, sizeof(path), "/dev/%s", dev_nodes[i].name);
    /* mknod is refused in a user namespace: bind the host's node. */
    sfd = sys_openat2(c->host_fd, path, O_PATH, RESOLVE_HOST);
    if (sfd < 0)
      return sr_error_layer(c->err, "mount", -sfd, "open host %s", path);
    if (fstat(sfd, &st) < 0)
      return sr_error_layer(c->err, "mount", errno, "stat host %s", path);
    if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != dev_nodes[i].major ||
        minor(st.st_rdev) != dev_nodes[i].minor)
      return sr_error_layer(c->err, "mount", ENODEV,
                            "host %s is not the character device %u:%u", path,
                            dev_nodes[i].major, dev_nodes[i].minor);
    dfd = make_leaf(dev, dev_nodes[i].name, false);
    if (dfd < 0)
      return sr_error_layer(c->err, "mount", -dfd, "create %s", path);
    r = clone_onto(sfd, dfd, ATTR_DEV_BIND);
    if (r < 0)
      return mount_err(c, r, path, path);
    safe_close(r);
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(links); i++)
    if (symlinkat(links[i].target, dev, links[i].name) < 0)
      return sr_error_layer(c->err, "mount", errno, "symlink /dev/%s",
                            links[i].name);

  if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 01777) < 0)
    return sr_error_layer(c->err, "mount", errno, "mkdir /dev/pts, /dev/shm");
  /* No gid= option: gid 5 (tty) is not mapped in the user namespace.
   * max=: the host's terminals (kernel.pty.max less its reserve, 3072 by
   * default) are shared by every devpts instance, and each holds kernel
   * memory no limit of the run counts; a skill that opened them all left
   * the host's users and containers none. */
  r = mount_fs(c, "devpts", "/dev/pts", MS_NOSUID | MS_NOEXEC,
               "newinstance,ptmxmode=0666,mode=0620,max=" PTY_MAX);
  if (r < 0)
    return r;
  /* noexec would break libraries that map shm executable; keep it off. */
  r = mount_sized_tmpfs(c, "/dev/shm", c->pol->limits[SR_LIM_TMP_SIZE].value, 0,
                        "1777", false);
  if (r < 0)
    return r;
  /* Populated: nothing more may appear in /dev itself. */
  return setattr_path(
      c, "/dev", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
}

static int build_proc(struct ctx *c, const struct sr_view_entry *e) {
  /* mask: the empty tmpfs over the first masked directory; file_mask: the
   * /dev/null bound over the first masked file.  Each later mask is a
   * clone of one of them, flags and all. */
  _cleanup_close_ int proc = -1, null = -1, mask = -1, file_mask = -1;
  int r;

  (void)e; /* /proc: the masked paths below are spelled out */
  if (mkdirat(c->root_fd, "proc", 0555) < 0)
    return sr_error_layer(c->err, "mount", errno, "mkdir /proc");
  if (c->pol->proc == SR_PROC_TMPFS)
    return mount_fs(c, "tmpfs", "/proc",
                    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                    MASK_TMPFS_OPTS);

  /* proc(5): a procfs instance shows the pid namespace of the mounter;
   * init is pid 1 of the new one. */
  r = mount_fs(c, "proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
  if (r < 0)
    return r;
  proc = sys_openat2(c->root_fd, "proc", O_PATH | O_DIRECTORY, RESOLVE_NEW);
  if (proc < 0)
    return sr_error_layer(c->err, "mount", -proc, "open /proc");
  null = sys_openat2(c->root_fd, "dev/null", O_PATH, RESOLVE_NEW);
  if (null < 0)
    return sr_error_layer(c->err, "mount", -null, "open /dev/null");

  /* By name below /proc: its top-level entries are the kernel's, and
   * neither clone_at nor fstatat follows a link. */
  for (size_t i = 0; i < SR_ARRAY_SIZE(proc_readonly); i++) {
    const char *name = proc_readonly[i];

    r = clone_at(proc, name, proc, name, ATTR_RO_BIND_NOEXEC);
    if (r == -ENOENT && faccessat(proc, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
        errno == ENOENT)
      continue; /* not in this kernel's /proc */
    if (r < 0)
      return sr_error_layer(c->err, "mount", -r,
                            "mount /proc/%s read-only on /proc/%s", name, name);
    safe_close(r);
  }

  for (size_t i = 0; i < SR_ARRAY_SIZE(proc_masked); i++) {
    const char *name = proc_masked[i];
    struct stat st;

    if (fstatat(proc, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
      if (errno == ENOENT)
        continue;
      return sr_error_layer(c->err, "mount", errno, "stat /proc/%s", name);
    }
    if (S_ISDIR(st.st_mode) && mask >= 0) {
      /* One empty tmpfs for every masked directory: each more is a bind
       * of the first, not another superblock to make and tear down. */
      r = clone_at(mask, "", proc, name, 0);
      if (r < 0)
        return sr_error_layer(c->err, "mount", -r,
                              "mount the empty tmpfs on /proc/%s", name);
      safe_close(r);
    } else if (S_ISDIR(st.st_mode)) {
      char where[64];
      snprintf(where, sizeof(where), "/proc/%s", name);
      r = mount_fs(c, "tmpfs", where,
                   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   MASK_TMPFS_OPTS);
      if (r < 0)
        return r;
      mask = openat(proc, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (mask < 0)
        return sr_error_layer(c->err, "mount", errno, "open /proc/%s", name);
    } else if (file_mask >= 0) {
      r = clone_at(file_mask, "", proc, name, 0);
      if (r < 0)
        return sr_error_layer(c->err, "mount", -r,
                              "mount /dev/null on /proc/%s", name);
      safe_close(r);
    } else {
      file_mask = clone_at(null, "", proc, name,
                           ATTR_RO_BIND_NOEXEC & ~MOUNT_ATTR_NODEV);
      if (file_mask < 0)
        return sr_error_layer(c->err, "mount", -file_mask,
                              "mount /dev/null on /proc/%s", name);
    }
    c->masked |= 1u << i; /* verify_mountinfo looks for it */
  }
  return 0;
}

static int build_tmpfs(struct ctx *c, const struct sr_view_entry *e) {
  _cleanup_close_ int fd = -1;
  int id = sr_limit_by_name(e->size_limit);
  int ino = e->inode_limit ? sr_limit_by_name(e->inode_limit) : -1;
  uint64_t inodes = 0, size;
  char mode[8];
  int r;

  if (id < 0)
    return sr_error_layer(c->err, "mount", EINVAL, "%s: no size limit", e->dst);
  if (e->inode_limit && ino < 0)
    return sr_error_layer(c->err, "mount", EINVAL, "%s: no inode limit",
                          e->dst);
  size = c->pol->limits[id].value;
  /* The limit counts entries below the root; the root is an inode too. */
  if (ino >= 0)
    inodes = c->pol->limits[ino].value + 1;
  /* "At most" the limits: a skill that writes exactly outputs-size bytes
   * or outputs-files entries must not fill the tmpfs (the harvest would
   * report ENOSPC it never met).  One over is the harvest's to refuse. */
  if (e->harvested) {
    size += (uint64_t)sysconf(_SC_PAGESIZE); /* tmpfs counts pages */
    if (inodes)
      inodes++;
  }
  r = make_path(c->root_fd, e->dst, true, &fd);
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "mkdir %s", e->dst);
  snprintf(mode, sizeof(mode), "%04o", e->mode);
  return mount_sized_tmpfs(c, e->dst, size, inodes, mode, e->owned);
}

static int build_dir(struct ctx *c, const struct sr_view_entry *e) {
  _cleanup_close_ int fd = -1;
  int r;

  r = make_path(c->root_fd, e->dst, true, &fd);
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "mkdir %s", e->dst);
  return 0;
}

/* The tmpfs only: the entries inside it (the bundle) come next, then
 * finish_staged_inputs. */
static int build_staged_inputs(struct ctx *c, const struct sr_view_entry *e) {
  _cleanup_close_ int fd = -1;
  int r;

  r = make_path(c->root_fd, e->dst, true, &fd);
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "mkdir %s", e->dst);
  return mount_fs(c, "tmpfs", e->dst, MS_NOSUID | MS_NODEV, INPUTS_TMPFS_OPTS);
}

/*
 * Binds the staged inputs below src (a directory of the staging area) on
 * the inputs tmpfs below dst (dst_name, "/workspace/inputs" and on, for
 * messages), one read-only bind per regular file.  The staging area holds
 * the inputs as NAME or DIR/NAME (workspace.c): at depth 0 a directory is
 * made in the tmpfs and its files bound in turn; nothing deeper, nothing
 * but regular files and those directories, is ever bound, and no link is
 * followed.
 */
static int bind_staged_inputs(struct ctx *c, int src, int dst,
                              const char *dst_name, uint64_t attr,
                              unsigned depth) {
  _cleanup_(sr_closedirp) DIR *d = NULL;
  struct dirent *de;
  int dfd_raw, r;

  dfd_raw = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd_raw < 0)
    return sr_error_layer(c->err, "mount", errno, "open inputs for %s",
                          dst_name);
  d = fdopendir(dfd_raw);
  if (!d) {
    safe_close(dfd_raw);
    return sr_error_layer(c->err, "mount", errno, "opendir inputs for %s",
                          dst_name);
  }
  for (errno = 0; (de = readdir(d)); errno = 0) {
    _cleanup_close_ int ifd = -1, tfd = -1;
    struct stat st;

    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    /* Never follow a link: the entry itself must be a regular file (or,
     * at the top, a directory of them). */
    ifd = sys_openat2(src, de->d_name, O_PATH | O_NOFOLLOW,
                      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                          RESOLVE_NO_MAGICLINKS);
    if (ifd == -ELOOP)
      continue;
    if (ifd < 0)
      return sr_error_layer(c->err, "mount", -ifd, "open input %s", de->d_name);
    if (fstat(ifd, &st) < 0)
      return sr_error_layer(c->err, "mount", errno, "stat input %s",
                            de->d_name);
    if (S_ISDIR(st.st_mode) && depth == 0) {
      _cleanup_close_ int sub_src = -1, sub_dst = -1;
      char sub[PATH_MAX];

      snprintf(sub, sizeof(sub), "%s/%s", dst_name, de->d_name);
      sub_src = sys_openat2(src, de->d_name, O_RDONLY | O_DIRECTORY,
                            RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
                                RESOLVE_NO_MAGICLINKS);
      if (sub_src < 0)
        return sr_error_layer(c->err, "mount", -sub_src, "open input %s",
                              de->d_name);
      if (mkdirat(dst, de->d_name, 0755) < 0)
        return sr_error_layer(c->err, "mount", errno, "mkdir %s", sub);
      sub_dst = sys_openat2(dst, de->d_name, O_PATH | O_DIRECTORY, RESOLVE_NEW);
      if (sub_dst < 0)
        return sr_error_layer(c->err, "mount", -sub_dst, "open %s", sub);
      r = bind_staged_inputs(c, sub_src, sub_dst, sub, attr, depth + 1);
      if (r < 0)
        return r;
      continue;
    }
    if (!S_ISREG(st.st_mode))
      continue;
    tfd = openat(dst, de->d_name,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (tfd < 0)
      return sr_error_layer(c->err, "mount", errno, "create %s/%s", dst_name,
                            de->d_name);
    safe_close(tfd);
    tfd = openat(dst, de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (tfd < 0)
      return sr_error_layer(c->err, "mount", errno, "open %s/%s", dst_name,
                            de->d_name);
    r = bind_fd(ifd, tfd, attr);
    if (r < 0)
      return sr_error_layer(c->err, "mount", -r, "mount input %s on %s/%s",
                            de->d_name, dst_name, de->d_name);
  }
  if (errno != 0)
    return sr_error_layer(c->err, "mount", errno, "readdir inputs for %s",
                          dst_name);
  return 0;
}

/* The staged inputs bound read-only under their names, then the tmpfs
 * sealed. */
static int finish_staged_inputs(struct ctx *c, const struct sr_view_entry *e) {
  const struct sr_mount_plan *p = c->plan;
  _cleanup_close_ int inputs = -1, src = -1;
  int r;

  if (p->inputs_fd >= 0) {
    inputs =
        sys_openat2(c->root_fd, e->dst + 1, O_PATH | O_DIRECTORY, RESOLVE_NEW);
    if (inputs < 0)
      return sr_error_layer(c->err, "mount", -inputs, "open %s", e->dst);
    /* The directory sr_mount_pin checked; the files below it are opened
     * relative to it (the sandbox user owns it, workspace.h). */
    src = fcntl(p->inputs_fd, F_DUPFD_CLOEXEC, 3);
    if (src < 0)
      return sr_error_layer(c->err, "mount", errno, "dup");
    r = bind_staged_inputs(c, src, inputs, e->dst,
                           e->noexec ? ATTR_RO_BIND_NOEXEC : ATTR_RO_BIND, 0);
    if (r < 0)
      return r;
  }
  return setattr_path(c, e->dst,
                      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
}

static int build_entry(struct ctx *c, const struct sr_view_entry *e) {
  switch (e->type) {
  case SR_VIEW_ROOT:
    return build_root(c, e);
  case SR_VIEW_BIND:
    return build_bind(c, e);
  case SR_VIEW_BIND_OR_SYMLINK:
    return build_bind_or_symlink(c, e);
  case SR_VIEW_ETC:
    return build_etc(c, e);
  case SR_VIEW_PROFILE_BINDS:
    return build_profile_binds(c, e);
  case SR_VIEW_DEV:
    return build_dev(c, e);
  case SR_VIEW_PROC:
    return build_proc(c, e);
  case SR_VIEW_TMPFS:
    return build_tmpfs(c, e);
  case SR_VIEW_DIR:
    return build_dir(c, e);
  case SR_VIEW_STAGED_INPUTS:
    return build_staged_inputs(c, e);
  case SR_VIEW_SYMLINK:
    return build_symlink(c, e);
  }
  return sr_error_layer(c->err, "mount", EINVAL, "%s: unknown view entry",
                        e->dst ? e->dst : "(binds)");
}

/* Whether an entry has a step that waits for the entries inside it. */
static bool has_finish(const struct sr_view_entry *e) {
  return e->type == SR_VIEW_STAGED_INPUTS;
}

static int finish_entry(struct ctx *c, const struct sr_view_entry *e) {
  if (e->type == SR_VIEW_STAGED_INPUTS)
    return finish_staged_inputs(c, e);
  return 0;
}

static bool inside(const struct sr_view_entry *e,
                   const struct sr_view_entry *outer) {
  return e->dst && strcmp(e->dst, outer->dst) != 0 &&
         sr_path_at_or_below(e->dst, outer->dst);
}

/*
 * Every entry of the view in table order.  An entry with a finishing step
 * gets it once the entries inside it are built: the staged inputs are
 * bound, and their tmpfs sealed, after the bundle is mounted in it.
 */
static int build_view(struct ctx *c) {
  const struct sr_view_entry *open[4]; /* waiting to finish, innermost last */
  size_t n_open = 0;
  int r;

  for (size_t i = 0; i <= sr_view_len; i++) {
    const struct sr_view_entry *e = i < sr_view_len ? &sr_view[i] : NULL;

    while (n_open > 0 && (!e || !inside(e, open[n_open - 1]))) {
      const struct sr_view_entry *done = open[--n_open];
      r = finish_entry(c, done);
      if (r < 0)
        return r;
    }
    if (!e)
      break;
    r = build_entry(c, e);
    if (r < 0)
      return r;
    if (has_finish(e)) {
      if (n_open == SR_ARRAY_SIZE(open))
        return sr_error_layer(c->err, "mount", E2BIG, "view nested too deep");
      open[n_open++] = e;
    }
  }
  return 0;
}

/* ---------------------------------------------------------- verification */

/* mountinfo(5) escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s) {
  char *o = s;

  for (; *s; s++) {
    if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
        s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
      *o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
      s += 3;
    } else {
      *o++ = *s;
    }
  }
  *o = '\0';
}

static bool has_opt(const char *opts, const char *opt) {
  size_t n = strlen(opt);

  for (const char *s = opts; s;) {
    if (strncmp(s, opt, n) == 0 && (s[n] == ',' || s[n] == '\0'))
      return true;
    s = strchr(s, ',');
    if (s)
      s++;
  }
  return false;
}

static int list_index(const char *p, const char *const *list, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(p, list[i]) == 0)
      return (int)i;
  return -1;
}

static bool in_list(const char *p, const char *const *list, size_t n) {
  return list_index(p, list, n) >= 0;
}

/* Whether path (in the new root) is the null device: what a masked /proc
 * file is once /dev/null is bound over it. */
static bool is_dev_null(const char *path) {
  struct stat st;

  return fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

/* Whether a mount whose source fields (major:minor of the file system,
 * root within it) are dev and root is the mount null_src describes ("DEV
 * ROOT" of a mask is_dev_null passed): the same object, the null device,
 * without another stat.  This holds because nothing but init mounts in
 * this namespace while it checks the table (only init and the skill's
 * process, not yet exec'd, are in it, and every mount is private), and
 * every file mask is a clone of the first: the table's lines are built
 * one by one and a long table is read in several read(2) calls, so it is
 * not one moment's.  A deleted root, shown by its old name, is never
 * taken for the same.  (Each masked entry is mounted once,
 * verify_mountinfo checks, so the stat of the first one's path was of
 * that mount.) */
static bool same_null(const char *null_src, const char *dev, const char *root) {
  static const char deleted[] = "//deleted";
  size_t n = strlen(dev), rn = strlen(root);

  if (rn >= sizeof(deleted) - 1 &&
      strcmp(root + rn - (sizeof(deleted) - 1), deleted) == 0)
    return false;
  return null_src[0] && strncmp(null_src, dev, n) == 0 && null_src[n] == ' ' &&
         strcmp(null_src + n + 1, root) == 0;
}

/*
 * Reads back every mount of the namespace from mountinfo, once the new root
 * is entered and the rest detached, so that the table holds the sandbox's
 * mounts only: all private; all nosuid; all read-only (the root too) except
 * the writable tmpfs and device mounts; all nodev except the device mounts
 * and /dev/null over the masked /proc files; all noexec in /dev (but
 * /dev/shm) and /proc.  Catches a submount that a recursive attribute
 * missed, and is the only read-back of the mounts in /dev and /proc and of
 * the remounts (setattr_path).
 */
static int verify_mountinfo(struct ctx *c, int proc_fd) {
  static const char *const writable[] = {
      "/dev/null",    "/dev/zero",          "/dev/full",          "/dev/random",
      "/dev/urandom", "/dev/pts",           "/dev/shm",           "/tmp",
      "/proc",        "/workspace/scratch", "/workspace/outputs",
  };
  static const char *const devices[] = {
      "/dev/null",   "/dev/zero",    "/dev/full",
      "/dev/random", "/dev/urandom", "/dev/pts",
  };
  _cleanup_free_ char *heap = NULL;
  char small[16384]; /* some 100 lines; not the heap: sr_read_file_into */
  char *buf = small;
  char null_src[128] = ""; /* the first device mask's source (same_null) */
  unsigned found = 0, masked_seen = 0; /* bits by proc_masked index */
  int k;
  char *line, *save = NULL;
  size_t len = 0;
  int r;

  r = sr_read_file_into(proc_fd, "self/mountinfo", small, sizeof(small), &len);
  if (r == -EFBIG) {
    r = sr_read_file_at(proc_fd, "self/mountinfo", 4 << 20, &heap, &len);
    buf = heap;
  }
  if (r < 0)
    return sr_error_layer(c->err, "mount", -r, "read mountinfo");
  /* Every line is checked, or the run fails: a NUL byte would end the
   * lines strtok_r sees there (mountinfo never holds one; never trust
   * it), and a table that does not end in a newline was cut short. */
  if (len == 0 || memchr(buf, '\0', len) || buf[len - 1] != '\n')
    return sr_error_layer(c->err, "mount", EIO,
                          "read mountinfo: not a whole table");
  for (line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *f[6], *s = line, *mp;
    size_t nf = 0;

    while (nf < SR_ARRAY_SIZE(f) && (f[nf] = strsep(&s, " ")))
      nf++;
    if (nf < 6 || !s)
      return sr_error_layer(c->err, "mount", EIO, "bad mountinfo line");
    mp = f[4];
    unescape_octal(mp);
    found++;
    /* Optional fields (shared:N, master:N, unbindable) come before the
     * "-": a mount with none is private, and no later host mount reaches
     * it. */
    if (strncmp(s, "- ", 2) != 0) {
      const char *end = strstr(s, " - ");
      return sr_error_layer(c->err, "mount", EPERM,
                            "verify %s: takes part in mount propagation (%.*s)",
                            mp, end ? (int)(end - s) : (int)strlen(s), s);
    }
    /* A procfs shows every process of the pid namespace that mounted it.
     * The skill's is the builders' at /proc; another came with a host
     * tree a profile binds, with every mount below it (a build chroot's
     * /proc is the host's), or is that tree: neither path is below
     * /proc, where a profile may not bind. */
    if (strncmp(s + 2, "proc ", 5) == 0 && !sr_path_at_or_below(mp, "/proc"))
      return sr_error_layer(c->err, "mount", EPERM,
                            "verify %s: a procfs, and the only one a skill "
                            "may see is its own at /proc",
                            mp);
    /* f[5] holds the per-mount options: what the skill is held to. */
    if (!has_opt(f[5], "nosuid"))
      return sr_error_layer(c->err, "mount", EPERM,
                            "verify %s: not nosuid (%s)", mp, f[5]);
    if (!in_list(mp, writable, SR_ARRAY_SIZE(writable)) && !has_opt(f[5], "ro"))
      return sr_error_layer(c->err, "mount", EPERM,
                            "verify %s: not read-only (%s)", mp, f[5]);
    /* Only the builders mount in /dev and /proc (view.c reserves both):
     * all noexec there but /dev/shm.  Their binds are read back here
     * only (clone_onto). */
    if ((sr_path_at_or_below(mp, "/proc") || sr_path_at_or_below(mp, "/dev")) &&
        strcmp(mp, "/dev/shm") != 0 && !has_opt(f[5], "noexec"))
      return sr_error_layer(c->err, "mount", EPERM,
                            "verify %s: not noexec (%s)", mp, f[5]);
    /* The masks over /proc entries: nodev unless the mount is /dev/null
     * itself, bound over a file (it stays a device). */
    if (strncmp(mp, "/proc/", 6) == 0 &&
        (k = list_index(mp + 6, proc_masked, SR_ARRAY_SIZE(proc_masked))) >=
            0) {
      /* One mount on each: the path that is_dev_null looks at is then
       * the mount of this line. */
      if (masked_seen & (1u << k))
        return sr_error_layer(c->err, "mount", EPERM,
                              "verify %s: masked more than once", mp);
      masked_seen |= 1u << k;
      if (!has_opt(f[5], "nodev") && !same_null(null_src, f[2], f[3]) &&
          !is_dev_null(mp))
        return sr_error_layer(c->err, "mount", EPERM,
                              "verify %s: not nodev (%s)", mp, f[5]);
      if (!has_opt(f[5], "nodev") && !null_src[0]) {
        int n = snprintf(null_src, sizeof(null_src), "%s %s", f[2], f[3]);
        if (n < 0 || (size_t)n >= sizeof(null_src))
          null_src[0] = '\0'; /* cut short: every mask is looked at */
      }
      continue;
    }
    if (!in_list(mp, devices, SR_ARRAY_SIZE(devices)) &&
        !has_opt(f[5], "nodev"))
      return sr_error_layer(c->err, "mount", EPERM, "verify %s: not nodev (%s)",
                            mp, f[5]);
  }
  if (found < 5)
    return sr_error_layer(c->err, "mount", EIO,
                          "verify: only %u mounts under the new root", found);
  /* Each mask made is in the table: its flags above are not all that is
   * checked of it. */
  for (size_t i = 0; i < SR_ARRAY_SIZE(proc_masked); i++)
    if ((c->masked & ~masked_seen) & (1u << i))
      return sr_error_layer(c->err, "mount", EPERM,
                            "verify /proc/%s: its mask is not mounted",
                            proc_masked[i]);
  return 0;
}

/* ------------------------------------------------------------- the build */

static void restore_umask(mode_t *m) {
  umask(*m);
}

static int enter_base(struct sr_error *err) {
  /* Private, recursively, before anything is cloned: the host never sees a
   * sandbox mount, and the view's clones of host trees (private like their
   * sources) receive nothing the host mounts under them later.  A slave
   * clone would: a host mount under a bound shared path would appear in the
   * running sandbox with the host's flags, not ro, nosuid, nodev. */
  if (mount(NULL, "/", NULL, MS_PRIVATE | MS_REC, NULL) < 0)
    return sr_error_layer(err, "mount", errno, "mount MS_PRIVATE|MS_REC on /");
  if (mount("tmpfs", BASE_DIR, "tmpfs", MS_NOSUID | MS_NODEV,
            "size=64k,nr_inodes=16,mode=0755") < 0)
    return sr_error_layer(err, "mount", errno, "mount tmpfs on %s (base)",
                          BASE_DIR);
  if (chdir(BASE_DIR) < 0)
    return sr_error_layer(err, "mount", errno, "chdir %s", BASE_DIR);
  if (mkdir("newroot", 0755) < 0 || mkdir("oldroot", 0755) < 0)
    return sr_error_layer(err, "mount", errno, "mkdir base directories");
  if (syscall(SYS_pivot_root, ".", "oldroot") < 0)
    return sr_error_layer(err, "mount", errno, "pivot_root %s", BASE_DIR);
  if (chdir("/") < 0)
    return sr_error_layer(err, "mount", errno, "chdir /");
  return 0;
}

/* pivot_root(2) "." "." idiom: the base tmpfs ends up stacked on the new
 * root and is detached through an fd opened before, and with it the host's
 * tree below /oldroot: one lazy unmount (each costs the kernel an expedited
 * RCU grace period), private since enter_base, so it travels nowhere.
 * What of the host is still open (the host's procfs) stays usable through
 * its fd. */
static int enter_newroot(struct sr_error *err) {
  _cleanup_close_ int base = -1;
  struct statvfs sv;

  base = open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (base < 0)
    return sr_error_layer(err, "mount", errno, "open base root");
  if (chdir(NEWROOT) < 0)
    return sr_error_layer(err, "mount", errno, "chdir %s", NEWROOT);
  if (syscall(SYS_pivot_root, ".", ".") < 0)
    return sr_error_layer(err, "mount", errno, "pivot_root %s", NEWROOT);
  if (fchdir(base) < 0)
    return sr_error_layer(err, "mount", errno, "fchdir base");
  if (umount2(".", MNT_DETACH) < 0)
    return sr_error_layer(err, "mount", errno,
                          "detach the base tmpfs and the host root");
  if (chdir("/") < 0)
    return sr_error_layer(err, "mount", errno, "chdir /");

  {
    struct mount_attr ma = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount_setattr(AT_FDCWD, "/", 0, &ma, sizeof(ma)) < 0)
      return sr_error_layer(err, "mount", errno, "remount / read-only");
  }
  if (statvfs("/", &sv) < 0)
    return sr_error_layer(err, "mount", errno, "statvfs /");
  if ((sv.f_flag & (ST_RDONLY | ST_NOSUID | ST_NODEV)) !=
      (ST_RDONLY | ST_NOSUID | ST_NODEV))
    return sr_error_layer(err, "mount", EPERM,
                          "verify /: not read-only, nosuid, nodev");
  return 0;
}

static void ctx_done(struct ctx *c) {
  c->host_fd = safe_close(c->host_fd);
  c->root_fd = safe_close(c->root_fd);
}

int sr_mount_build(struct sr_mount_plan *plan, int *ret_outputs_fd,
                   struct sr_error *err) {
  _cleanup_close_ int outputs = -1;
  int proc;
  _cleanup_(restore_umask) _unused_ mode_t old_umask = umask(022);
  _cleanup_(ctx_done) struct ctx c = {
      .plan = plan, .err = err, .host_fd = -1, .root_fd = -1};
  int r;

  if (!plan || !plan->policy || !ret_outputs_fd)
    return sr_error_layer(err, "mount", EINVAL, "mount: no plan");
  c.pol = plan->policy;

  r = enter_base(err);
  if (r < 0)
    return r;
  c.host_fd = open(OLDROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (c.host_fd < 0)
    return sr_error_layer(err, "mount", errno, "open %s", OLDROOT);
  r = build_view(&c);
  if (r < 0)
    return r;
  outputs = openat(c.root_fd, &SR_VIEW_OUTPUTS[1],
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (outputs < 0)
    return sr_error_layer(err, "mount", errno, "open %s", SR_VIEW_OUTPUTS);
  /* The check reads the namespace back once the host's mounts have left
   * it: mountinfo then lists the sandbox's mounts only, and costs the same
   * however many mounts the host has.  Through the host's procfs: the view
   * may have none (proc tmpfs).  Closed right after the check. */
  proc =
      openat(c.host_fd, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (proc < 0)
    return sr_error_layer(err, "mount", errno, "open the host's /proc");

  ctx_done(&c); /* nothing else of the old root may stay open */
  plan_unpin(plan);
  r = enter_newroot(err);
  if (r >= 0)
    r = verify_mountinfo(&c, proc);
  safe_close(proc);
  if (r < 0)
    return r;
  *ret_outputs_fd = TAKE_FD(outputs);
  return 0;
}
