/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The cgroup v1 backend (cgroup.h): hybrid and legacy hosts, where the v2
 * hierarchy has no memory controller.  One leaf per run in each of the
 * memory, pids and cpuacct hierarchies, "<mount>/skillrun/run-<name>":
 * the limits written and read back, the sandbox's init written to every
 * cgroup.procs before it is released (CLONE_INTO_CGROUP is v2 only), CPU
 * time from cpuacct.usage, OOM kills from memory.oom_control, the tree
 * killed by pid (v1 has no cgroup.kill), the leaves removed after.
 *
 * Only skillrun's own `skillrun` subtrees are ever written: root creates
 * them, an ordinary user can use them only when an administrator made them
 * writable.  Nothing else of the host's cgroups is touched.
 *
 * Kernel reference: Documentation/admin-guide/cgroup-v1/{cgroups,memory,
 * pids,cpuacct}.rst.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "cgroup.h"
#include "error.h"
#include "fdutil.h"
#include "policy.h"
#include "util.h"

#define SUBTREE "skillrun"
#define V1_BASE "/sys/fs/cgroup"
#define MOUNTINFO_MAX (4 * 1024 * 1024)

/* Each hierarchy's mount point, from /proc/self/mountinfo ("cgroup"
 * file systems whose super options name the controller; cpuacct is
 * usually mounted together with cpu). */
static int scan_v1_mounts(char *mnt[SR__CG1_MAX]) {
  _cleanup_free_ char *buf = NULL;
  char *save = NULL;
  int r;

  r = sr_read_file_at(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, &buf,
                      NULL);
  if (r < 0)
    return r;
  for (char *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *mntpt, *fstype, *opts;
    struct statfs sfs;

    if (sr_cg_mountinfo_split(line, &mntpt, &fstype) < 0)
      continue;
    if (strncmp(fstype, "cgroup ", 7) != 0)
      continue;
    opts = strchr(fstype + 7, ' '); /* after the source */
    if (!opts)
      continue;
    opts++;
    for (int c = 0; c < SR__CG1_MAX; c++) {
      const char *want = sr_cg1_ctrl_name((enum sr_cg1_ctrl)c);
      size_t wl = strlen(want);
      bool has = false;
      char *d;

      if (mnt[c])
        continue;
      for (const char *o = opts; *o;) {
        size_t n = strcspn(o, ",");
        if (n == wl && !strncmp(o, want, wl))
          has = true;
        o += n;
        o += *o == ',';
      }
      if (!has)
        continue;
      /* A mount hidden under a later one is listed too, but opening its
       * path gives the one on top. */
      if (statfs(mntpt, &sfs) < 0 || sfs.f_type != CGROUP_SUPER_MAGIC)
        continue;
      d = strdup(mntpt);
      if (!d)
        return -ENOMEM;
      mnt[c] = d;
    }
  }
  return 0;
}

/* A file of the controller's that its hierarchy's root has (pids has
 * none there: pids.max of the skillrun subtree, which the first run
 * makes), and where systemd mounts it besides /sys/fs/cgroup/NAME. */
static const struct {
  const char *marker;
  const char *also;
} v1_fast[SR__CG1_MAX] = {
    [SR_CG1_MEMORY] = {"memory.limit_in_bytes", NULL},
    [SR_CG1_PIDS] = {SUBTREE "/pids.max", NULL},
    [SR_CG1_CPUACCT] = {"cpuacct.usage", "cpu,cpuacct"},
};

/* BASE/DIR when it is a directory (not a symlink) of a cgroup v1 file
 * system holding MARKER: the controller is bound to that hierarchy, since
 * nothing but the kernel makes files in cgroupfs.  -errno otherwise. */
static int v1_fast_one(const char *base, const char *dir, const char *marker,
                       char **out) {
  _cleanup_close_ int fd = -1;
  struct statfs sfs;
  struct stat st;

  if (asprintf(out, "%s/%s", base, dir) < 0) {
    *out = NULL;
    return -ENOMEM;
  }
  fd = open(*out, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstatfs(fd, &sfs) < 0 || sfs.f_type != CGROUP_SUPER_MAGIC ||
      fstatat(fd, marker, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
      !S_ISREG(st.st_mode)) {
    free(*out);
    *out = NULL;
    return -ENOENT;
  }
  return 0;
}

int sr_cg1_mounts_fast(const char *base, char *mnt[]) {
  int r = 0;

  for (int c = 0; c < SR__CG1_MAX; c++)
    mnt[c] = NULL;
  for (int c = 0; r >= 0 && c < SR__CG1_MAX; c++) {
    r = v1_fast_one(base, sr_cg1_ctrl_name((enum sr_cg1_ctrl)c),
                    v1_fast[c].marker, &mnt[c]);
    if (r == -ENOENT && v1_fast[c].also)
      r = v1_fast_one(base, v1_fast[c].also, v1_fast[c].marker, &mnt[c]);
  }
  if (r < 0)
    for (int c = 0; c < SR__CG1_MAX; c++) {
      free(mnt[c]);
      mnt[c] = NULL;
    }
  return r;
}

int sr_cg1_mounts_scan(char *mnt[]) {
  for (int c = 0; c < SR__CG1_MAX; c++)
    mnt[c] = NULL;
  return scan_v1_mounts(mnt);
}

/* The mount points, found once per process: a run looks them up twice
 * (its own leaves, and the gc after its launch).  The usual layout is
 * answered by statfs(2) and one file per hierarchy; mountinfo, which
 * grows with the host's mount table (1.5 ms a run with 500 mounts), is
 * read only when that finds less than all three. */
static int find_v1_mounts(char *mnt[SR__CG1_MAX]) {
  static char *cache[SR__CG1_MAX];
  static bool cached;

  if (!cached && sr_cg1_mounts_fast(V1_BASE, cache) == 0)
    cached = true;
  if (!cached) {
    int r = sr_cg1_mounts_scan(cache);
    if (r < 0) {
      for (int c = 0; c < SR__CG1_MAX; c++) {
        free(cache[c]);
        cache[c] = NULL;
      }
      return r;
    }
    cached = true;
  }
  for (int c = 0; c < SR__CG1_MAX; c++) {
    mnt[c] = NULL;
    if (cache[c] && !(mnt[c] = strdup(cache[c]))) {
      /* Emptied too: the callers free mnt[] on every path. */
      for (int k = 0; k < c; k++) {
        free(mnt[k]);
        mnt[k] = NULL;
      }
      return -ENOMEM;
    }
  }
  return 0;
}

void sr_cg1_reset(struct sr_cgroup *cg) {
  for (int c = 0; c < SR__CG1_MAX; c++) {
    cg->v1_fd[c] = safe_close(cg->v1_fd[c]);
    cg->v1_sub_fd[c] = safe_close(cg->v1_sub_fd[c]);
    free(cg->v1_path[c]);
    cg->v1_path[c] = NULL;
  }
  cg->memsw = false;
  cg->sock = false;
  cg->v1_memory_limit = 0;
}

/* The caller's own cgroup in each hierarchy, from /proc/self/cgroup
 * ("4:memory:/a/b", "2:cpu,cpuacct:/"): "/a/b" in own[c], malloc'd, or
 * -errno.  A path that climbs ("/../x", as a cgroup namespace shows its
 * outside) names no place below the mount: -EXDEV. */
static int read_own_v1(char *own[SR__CG1_MAX]) {
  _cleanup_free_ char *buf = NULL;
  char *save = NULL;
  int r =
      sr_read_pseudo_file_at(AT_FDCWD, "/proc/self/cgroup", 64 * 1024, &buf);

  for (int c = 0; c < SR__CG1_MAX; c++)
    own[c] = NULL;
  /* Not strtok_r(NULL) on a failed read: it would resume from save,
   * which is NULL then (SIGSEGV). */
  for (char *line = r < 0 ? NULL : strtok_r(buf, "\n", &save); r >= 0 && line;
       line = strtok_r(NULL, "\n", &save)) {
    char *ctrls = strchr(line, ':');
    char *path = ctrls ? strchr(ctrls + 1, ':') : NULL;

    if (!path)
      continue;
    *path++ = '\0';
    for (int c = 0; r >= 0 && c < SR__CG1_MAX; c++) {
      const char *want = sr_cg1_ctrl_name((enum sr_cg1_ctrl)c);
      size_t wl = strlen(want);
      bool has = false;

      for (const char *o = ctrls + 1; *o;) {
        size_t n = strcspn(o, ",");
        has = has || (n == wl && !strncmp(o, want, wl));
        o += n;
        o += *o == ',';
      }
      if (!has || own[c])
        continue;
      if (path[0] != '/' || strstr(path, "/..") || strstr(path, "/./"))
        r = -EXDEV;
      else if (!(own[c] = strdup(path)))
        r = -ENOMEM;
    }
  }
  for (int c = 0; r >= 0 && c < SR__CG1_MAX; c++)
    if (!own[c])
      r = -ENOENT;
  if (r < 0)
    for (int c = 0; c < SR__CG1_MAX; c++) {
      free(own[c]);
      own[c] = NULL;
    }
  return r < 0 ? r : 0;
}

/* "unlimited" in the v1 memory controller: LONG_MAX in whole pages. */
static uint64_t v1_memory_unlimited(void) {
  long pg = sysconf(_SC_PAGESIZE);
  uint64_t page = pg > 0 ? (uint64_t)pg : 4096;

  return (uint64_t)INT64_MAX / page * page;
}

/* Whether a pids.max or cpu.cfs_quota_us value limits what a run's leaf
 * beside its cgroup could take.  A quota other than -1 does; a pids.max
 * only below skillrun's pids cap (run_pids: builtin or skillrun.conf,
 * never the caller's --pids, which would let a caller move its runs out
 * of its own pids.max by asking for less): systemd's default TasksMax=
 * on every unit and slice is a safety net far above it (as for cgroup
 * v2, caller_cgroup_unlimited). */
static bool v1_value_limits(enum sr_cg1_ctrl c, const char *s,
                            uint64_t run_pids) {
  uint64_t n;

  if (c != SR_CG1_PIDS)
    return strcmp(s, "-1") != 0;
  if (!strcmp(s, "max"))
    return false;
  return sr_parse_uint(s, UINT64_MAX, &n) < 0 || n < run_pids;
}

/* 1 when the cgroup at `own` below the mount mfd, or one above it, limits
 * controller c (memory or memory+swap, pids.max, a CFS quota where cpu
 * shares cpuacct's hierarchy), 0 when none does, -errno.  A run's leaf
 * anywhere else in that hierarchy would be outside those limits. */
static int v1_own_limited(enum sr_cg1_ctrl c, int mfd, const char *own,
                          uint64_t run_pids) {
  _cleanup_free_ char *p = strdup(own);
  const uint64_t unlimited = v1_memory_unlimited();

  if (!p)
    return -ENOMEM;
  if (c == SR_CG1_MEMORY) {
    /* memory.stat sums up the ancestors' limits already. */
    _cleanup_close_ int fd = sr_cg_open_dir_at(mfd, p[1] ? p + 1 : ".");
    uint64_t v = 0;
    int r;

    if (fd < 0)
      return fd;
    r = sr_cg_read_key_u64_at(fd, "memory.stat", "hierarchical_memory_limit",
                              &v);
    if (r < 0)
      return r;
    if (v < unlimited)
      return 1;
    r = sr_cg_read_key_u64_at(fd, "memory.stat", "hierarchical_memsw_limit",
                              &v);
    if (r == -ENOENT)
      return 0; /* no swap accounting */
    return r < 0 ? r : v < unlimited;
  }
  /* pids and cpu keep theirs level by level: walk up to the mount,
   * whose root cgroup has no limit. */
  for (;;) {
    const char *file = c == SR_CG1_PIDS ? "pids.max" : "cpu.cfs_quota_us";
    _cleanup_close_ int fd = sr_cg_open_dir_at(mfd, p + 1);
    _cleanup_free_ char *s = NULL;
    char *slash;
    int r;

    if (fd < 0)
      return fd;
    r = sr_cg_read_at(fd, file, &s);
    if (r == -ENOENT && c == SR_CG1_CPUACCT)
      return 0; /* cpu is mounted elsewhere: no quota here */
    if (r < 0)
      return r;
    s[strcspn(s, "\n")] = '\0';
    if (v1_value_limits(c, s, run_pids))
      return 1;
    slash = strrchr(p, '/');
    if (!slash || slash == p)
      return 0;
    *slash = '\0';
  }
}

/* Whether the cgroup dfd lists this process in its cgroup.procs: 1, 0,
 * or -errno. */
static int v1_lists_me(int dfd) {
  _cleanup_free_ char *buf = NULL;
  char *save = NULL;
  int r = sr_read_pseudo_file_at(dfd, "cgroup.procs", 16 * 1024 * 1024, &buf);

  if (r < 0)
    return r;
  for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
    if (strtol(l, NULL, 10) == (long)getpid())
      return 1;
  return 0;
}

/* The caller's cgroup below the mount mfd.  /proc/self/cgroup gives it
 * from the hierarchy's root (own), but a mount may show only part of the
 * hierarchy: a container's cgroups bind-mounted from /docker/ID (its
 * mountinfo root), whose top is the container's cgroup.  Here the caller's
 * cgroup is own's longest tail at a '/' (own itself first, the mount's top
 * "/" last) whose cgroup.procs lists this process; *rel points into own,
 * or is "/".  -ENOENT when none does: the caller's cgroup is not below
 * this mount. */
static int own_below_mount(int mfd, const char *own, const char **rel) {
  for (const char *t = own;;) {
    _cleanup_close_ int fd = sr_cg_open_dir_at(mfd, t[1] ? t + 1 : ".");
    int r = fd < 0 ? fd : v1_lists_me(fd);

    if (r < 0 && r != -ENOENT)
      return r;
    if (r > 0) {
      *rel = t[1] ? t : "/";
      return 0;
    }
    if (!t[1])
      return -ENOENT;
    t = strchr(t + 1, '/');
    if (!t)
      t = "/";
  }
}

/* Where the skillrun subtree of hierarchy c goes: below the caller's own
 * cgroup when that cgroup or one above it limits the controller (so a
 * scheduler's limits stay the outer bound of every run), below the
 * mount point otherwise.  *base is malloc'd; -errno with *reason. */
static int subtree_base(enum sr_cg1_ctrl c, const char *mnt, const char *own,
                        uint64_t run_pids, char **base, char **reason) {
  const char *rel = own;
  int r = 0;

  if (own[1]) {
    _cleanup_close_ int mfd = sr_cg_open_dir_at(AT_FDCWD, mnt);

    r = mfd < 0 ? mfd : own_below_mount(mfd, own, &rel);
    if (r == -ENOENT) {
      *reason = sr_cg_xasprintf("the cgroup skillrun runs in (%s) is not "
                                "below %s",
                                own, mnt);
      return r;
    }
    if (r >= 0 && rel[1])
      r = v1_own_limited(c, mfd, rel, run_pids);
    if (r < 0) {
      *reason = sr_cg_xasprintf("cannot read the limits of %s%s: %s", mnt, own,
                                strerror(-r));
      return r;
    }
  }
  *base = r > 0 ? sr_cg_xasprintf("%s%s", mnt, rel) : strdup(mnt);
  if (!*base) {
    *reason = sr_cg_xasprintf("out of memory");
    return -ENOMEM;
  }
  return 0;
}

/* <mnt>/skillrun, opened (the mount point is root's and found by path;
 * the subtree must not be a symlink): the fd or -errno. */
static int open_subtree_fd(const char *mnt) {
  char path[PATH_MAX];
  int fd;

  if (snprintf(path, sizeof(path), "%s/" SUBTREE, mnt) >= (int)sizeof(path))
    return -ENAMETOOLONG;
  fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* Opens (root: creates, the first time) <mnt>/skillrun: the fd, or -errno
 * with *reason. */
static int open_subtree(const char *mnt, char **reason) {
  _cleanup_free_ char *path = NULL;
  int fd, r;

  fd = open_subtree_fd(mnt);
  if (fd == -ENOENT && sr_root_mode()) {
    _cleanup_close_ int mfd = sr_cg_open_dir_at(AT_FDCWD, mnt);

    if (mfd < 0) {
      *reason = sr_cg_xasprintf("cannot open %s: %s", mnt, strerror(-mfd));
      return mfd;
    }
    if (mkdirat(mfd, SUBTREE, 0755) < 0 && errno != EEXIST) {
      r = -errno;
      *reason = sr_cg_xasprintf("mkdir %s/" SUBTREE ": %s", mnt, strerror(-r));
      return r;
    }
    /* The directory just made, in the mount point just opened. */
    fd = openat(mfd, SUBTREE, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      fd = -errno;
  }
  if (fd < 0) {
    r = fd;
    *reason =
        r == -ENOENT
            ? sr_cg_xasprintf("%s/" SUBTREE " does not exist (root "
                              "creates it; an administrator may create "
                              "it for uid %u and chown it)",
                              mnt, (unsigned)geteuid())
            : sr_cg_xasprintf("open %s/" SUBTREE ": %s", mnt, strerror(-r));
    return r;
  }
  /* Whoever else may write it sets the limits of the runs below it: root
   * must not use one an administrator gave a user, nor a user one shared
   * with others.  A leaf is made in it and our pids written to the leaf's
   * files. */
  path = sr_cg_xasprintf("%s/" SUBTREE, mnt);
  r = path ? sr_cg_subtree_private(fd, path, reason) : -ENOMEM;
  if (r == 0 && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) < 0) {
    r = -errno;
    *reason = sr_cg_xasprintf("%s is not writable by uid %u", path,
                              (unsigned)geteuid());
  }
  if (r < 0) {
    if (!path)
      *reason = sr_cg_xasprintf("out of memory");
    safe_close(fd);
    return r;
  }
  return fd;
}

static int write_limits(struct sr_cgroup *cg, const struct sr_policy *p,
                        struct sr_error *err) {
  const int mfd = cg->v1_fd[SR_CG1_MEMORY];
  const char *mpath = cg->v1_path[SR_CG1_MEMORY];
  uint64_t mem = sr_cg_page_round(p->limits[SR_LIM_MEMORY].value);
  uint64_t pids = p->limits[SR_LIM_PIDS].value;
  int r;

  if (mem == 0)
    return sr_error_layer(err, "cgroup", EINVAL, "memory limit below one page");
  if (pids == 0)
    return sr_error_layer(err, "cgroup", EINVAL, "pids limit is 0");
  /* Lowering from "unlimited": memory first, then memory+swap, which may
   * never be below it (cgroup-v1/memory.rst 2.5). */
  r = sr_cg_write_checked(mfd, mpath, "memory.limit_in_bytes", mem, err);
  if (r < 0)
    return r;
  /* Swap would let a run exceed the limit; without swap accounting (no
   * memsw files) that is only acceptable when there is no swap. */
  if (faccessat(mfd, "memory.memsw.limit_in_bytes", F_OK, 0) == 0) {
    r = sr_cg_write_checked(mfd, mpath, "memory.memsw.limit_in_bytes", mem,
                            err);
    if (r < 0)
      return r;
    cg->memsw = true;
  } else if (!sr_cg_no_swap_configured()) {
    return sr_error_layer(err, "cgroup", ENOENT,
                          "swap is enabled but %s has no "
                          "memory.memsw.limit_in_bytes (swap accounting is "
                          "off)",
                          mpath);
  }
  cg->v1_memory_limit = mem;
  /* Socket buffers: v1 charges them to a counter of their own, and only
   * in a cgroup whose memory.kmem.tcp.limit_in_bytes was set before the
   * sockets were made; otherwise nothing bounds them (a skill held 600
   * MiB in loopback TCP buffers under a 64 MiB limit).  The kernel holds
   * them to the limit; the supervisor stops the run when they and the
   * rest of its memory together pass it (read_counters). */
  if (faccessat(mfd, "memory.kmem.tcp.limit_in_bytes", F_OK, 0) == 0) {
    r = sr_cg_write_checked(mfd, mpath, "memory.kmem.tcp.limit_in_bytes", mem,
                            err);
    if (r < 0)
      return r;
    cg->sock = true;
  }
  return sr_cg_write_checked(cg->v1_fd[SR_CG1_PIDS], cg->v1_path[SR_CG1_PIDS],
                             "pids.max", pids, err);
}

/* Removes the leaves made so far (all empty: nothing runs in them yet). */
static void undo_leaves(struct sr_cgroup *cg, const int *sub,
                        const char *leaf) {
  for (int c = 0; c < SR__CG1_MAX; c++)
    if (cg->v1_fd[c] >= 0 && sub[c] >= 0)
      (void)unlinkat(sub[c], leaf, AT_REMOVEDIR); /* best effort */
  sr_cg1_reset(cg);
}

int sr_cg1_setup(struct sr_cgroup *cg, const struct sr_policy *p,
                 const char *leaf, char **reason, struct sr_error *err) {
  char *mnt[SR__CG1_MAX] = {0}, *own[SR__CG1_MAX] = {0};
  int sub[SR__CG1_MAX] = {-1, -1, -1};
  int r;

  r = find_v1_mounts(mnt);
  if (r < 0) {
    *reason =
        sr_cg_xasprintf("cannot read /proc/self/mountinfo: %s", strerror(-r));
    goto out;
  }
  for (int c = 0; c < SR__CG1_MAX; c++)
    if (!mnt[c]) {
      *reason = sr_cg_xasprintf("no cgroup v1 %s hierarchy is mounted",
                                sr_cg1_ctrl_name((enum sr_cg1_ctrl)c));
      r = -ENOENT;
      goto out;
    }
  r = read_own_v1(own);
  if (r < 0) {
    *reason = sr_cg_xasprintf("cannot tell the cgroups skillrun runs in "
                              "from /proc/self/cgroup: %s",
                              strerror(-r));
    goto out;
  }
  for (int c = 0; c < SR__CG1_MAX; c++) {
    char *base = NULL;

    /* The pids cap, not the run's value: a caller who lowers --pids to
     * an outer pids.max must not take the leaf out of it. */
    r = subtree_base((enum sr_cg1_ctrl)c, mnt[c], own[c],
                     p->limits[SR_LIM_PIDS].cap, &base, reason);
    if (r < 0)
      goto out;
    free(mnt[c]);
    mnt[c] = base;
    sub[c] = open_subtree(mnt[c], reason);
    if (sub[c] < 0) {
      r = sub[c];
      goto out;
    }
  }

  for (int c = 0; c < SR__CG1_MAX; c++) {
    cg->v1_path[c] = sr_cg_xasprintf("%s/" SUBTREE "/%s", mnt[c], leaf);
    if (!cg->v1_path[c]) {
      r = sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
      goto fail;
    }
    if (mkdirat(sub[c], leaf, SR_CG_LEAF_MODE) < 0) {
      r = sr_error_layer(err, "cgroup", errno, "mkdir %s", cg->v1_path[c]);
      goto fail;
    }
    cg->v1_fd[c] = sr_cg_open_dir_at(sub[c], leaf);
    if (cg->v1_fd[c] < 0) {
      r = sr_error_layer(err, "cgroup", -cg->v1_fd[c], "open %s",
                         cg->v1_path[c]);
      (void)unlinkat(sub[c], leaf, AT_REMOVEDIR); /* best effort */
      goto fail;
    }
    /* The lock marks the leaf live for --gc while the run exists. */
    if (flock(cg->v1_fd[c], LOCK_EX | LOCK_NB) < 0) {
      r = sr_error_layer(err, "cgroup", errno, "lock %s", cg->v1_path[c]);
      goto fail;
    }
  }
  r = write_limits(cg, p, err);
  if (r < 0)
    goto fail;
  cg->leaf_path = strdup(cg->v1_path[SR_CG1_MEMORY]);
  if (!cg->leaf_path) {
    r = sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
    goto fail;
  }
  cg->version = SR_CGV_1;
  cg->active = cg->memory = cg->pids = cg->cpu = true;
  /* Kept for the collection of the other runs' leaves (gc_beside). */
  for (int c = 0; c < SR__CG1_MAX; c++)
    cg->v1_sub_fd[c] = TAKE_FD(sub[c]);
  r = 0;
  goto out;

fail:
  undo_leaves(cg, sub, leaf);
out:
  for (int c = 0; c < SR__CG1_MAX; c++) {
    free(mnt[c]);
    free(own[c]);
    safe_close(sub[c]);
  }
  return r;
}

int sr_cg1_open_join(const struct sr_cgroup *cg, int *fds, const char **paths,
                     size_t max, struct sr_error *err) {
  if (max < SR__CG1_MAX)
    return sr_error_layer(err, "cgroup", E2BIG, "cgroup v1: %d leaves to join",
                          SR__CG1_MAX);
  for (int c = 0; c < SR__CG1_MAX; c++) {
    fds[c] = openat(cg->v1_fd[c], "tasks",
                    O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fds[c] < 0) {
      int e = errno;
      for (int i = 0; i < c; i++)
        fds[i] = safe_close(fds[i]);
      return sr_error_layer(err, "cgroup", e, "open %s/tasks", cg->v1_path[c]);
    }
    paths[c] = cg->v1_path[c];
  }
  return SR__CG1_MAX;
}

/* memory.oom_control's oom_kill is 4.13+: 0 without it. */
static int read_oom_kill(const struct sr_cgroup *cg, uint64_t *v) {
  int r = sr_cg_read_key_u64_at(cg->v1_fd[SR_CG1_MEMORY], "memory.oom_control",
                                "oom_kill", v);
  if (r == -ENOENT) {
    *v = 0;
    return 0;
  }
  return r;
}

/*
 * Whether the kernel made room for the socket buffers (sock bytes) within
 * the memory limit: it is asked to by a memory.limit_in_bytes lowered by
 * them, which it reclaims down to or refuses with EBUSY, and the limit is
 * then set back.  0 when it did, 1 when it refused, or -errno.  Refused,
 * it may still have freed kernel objects: memcg reclaim does not count
 * those as reclaimed, and gives up when nothing else was.
 */
static int sock_room(const struct sr_cgroup *cg, uint64_t sock) {
  const int mfd = cg->v1_fd[SR_CG1_MEMORY];
  const uint64_t limit = cg->v1_memory_limit;
  char buf[32];
  int r;

  if (sock >= limit)
    return 1;
  snprintf(buf, sizeof(buf), "%" PRIu64 "\n", sr_cg_page_round(limit - sock));
  r = sr_write_file_at(mfd, "memory.limit_in_bytes", buf);
  if (r == -EBUSY)
    return 1;
  if (r < 0)
    return r;
  snprintf(buf, sizeof(buf), "%" PRIu64 "\n", limit);
  return sr_write_file_at(mfd, "memory.limit_in_bytes", buf);
}

/* The run's socket buffers (memory.kmem.tcp.usage_in_bytes) with what the
 * kernel holds for it uncharged (sr_cgroup_poll), and when that is not 0,
 * its memory with them: memory.usage_in_bytes less the page cache of
 * files, which the kernel reclaims at the limit, plus sock. */
static int read_held(const struct sr_cgroup *cg, uint64_t uncharged,
                     uint64_t *sock, uint64_t *held) {
  const int mfd = cg->v1_fd[SR_CG1_MEMORY];
  uint64_t usage = 0, active = 0, inactive = 0;
  int r;

  *sock = *held = 0;
  if (cg->sock) {
    r = sr_cg_read_u64_at(mfd, "memory.kmem.tcp.usage_in_bytes", sock);
    if (r < 0)
      return r;
  }
  *sock += uncharged;
  if (*sock == 0)
    return 0;
  r = sr_cg_read_u64_at(mfd, "memory.usage_in_bytes", &usage);
  if (r >= 0)
    r = sr_cg_read_key_u64_at(mfd, "memory.stat", "total_active_file", &active);
  if (r >= 0)
    r = sr_cg_read_key_u64_at(mfd, "memory.stat", "total_inactive_file",
                              &inactive);
  if (r < 0)
    return r;
  *held = (usage > active + inactive ? usage - active - inactive : 0) + *sock;
  return 0;
}

/*
 * The run's memory with its socket buffers (read_held), when that passes
 * the limit; else 0.  Read only while the run holds socket buffers, or
 * memory the kernel charges to no cgroup (uncharged), which is asked room
 * for as they are.  The
 * usage also has what v1 does not break down, kernel objects the kernel
 * reclaims at the limit too (the dentries of names looked up: a run that
 * had looked up a million names, holding 4 MiB in a socket and a few of
 * its own, was stopped as oom under 64 MiB).  So past the limit the
 * kernel is asked to make room (sock_room), SOCK_ROOM_TRIES times, and
 * only a run whose memory it cannot reclaim is over.  A refusal says
 * little: memcg reclaim counts no freed slab, and the kernel refused 192
 * asks of 194 in runs of that skill, though the memory was at 1-22 MiB
 * once each returned.  It uncharges the dentries it shrank only after an
 * RCU grace period, an ask took up to 3 s on a loaded machine, and the
 * skill goes on allocating meanwhile: one reading just after each refusal
 * stopped that run as oom (once in CI's loaded sanitizer stage, 1 run
 * in about 160 here).  So after a refusal the memory is read every
 * SOCK_ROOM_STEP_MS for up to SOCK_ROOM_SETTLE_MS, and it is not over once
 * it stayed within the limit for SOCK_ROOM_STAY_MS: reclaimed memory stays
 * reclaimed (that skill's was at 5 MiB 5 ms after each refusal, and rose
 * again by 2-3 MiB a tick).  Any one reading within the limit used to do,
 * and a skill that let go of its memory for 10 ms in every 50 always had
 * one: it held 50 MiB of socket buffers and 50 MiB of memory in a run of
 * 64 MiB.  What is over is the highest reading of the last try.
 */
#define SOCK_ROOM_TRIES 3
#define SOCK_ROOM_SETTLE_MS 80
#define SOCK_ROOM_STAY_MS 25
#define SOCK_ROOM_STEP_MS 5
static int read_memory_over(const struct sr_cgroup *cg, uint64_t uncharged,
                            uint64_t *over) {
  const uint64_t limit = cg->v1_memory_limit;
  uint64_t sock, held, peak = 0;
  int r;

  *over = 0;
  if (!cg->sock && uncharged == 0)
    return 0;
  for (int i = 0;; i++) {
    r = read_held(cg, uncharged, &sock, &held);
    if (r < 0 || held <= limit)
      return r;
    if (i == SOCK_ROOM_TRIES)
      break;
    r = sock_room(cg, sock);
    if (r <= 0)
      return r;
    peak = held;
    /* No wait where the socket buffers alone pass the limit: no reclaim
     * brings the run within it. */
    for (int ms = 0, within = 0; sock < limit && ms < SOCK_ROOM_SETTLE_MS;
         ms += SOCK_ROOM_STEP_MS) {
      (void)nanosleep(&(struct timespec){0, SOCK_ROOM_STEP_MS * 1000000L},
                      NULL);
      r = read_held(cg, uncharged, &sock, &held);
      if (r < 0)
        return r;
      within = held <= limit ? within + SOCK_ROOM_STEP_MS : 0;
      if (within >= SOCK_ROOM_STAY_MS)
        return 0;
      peak = held > peak ? held : peak;
    }
  }
  *over = peak > held ? peak : held;
  return 0;
}

/* The counters; pids.current and the memory with socket buffers only when
 * `current` (the final statistics have no use for them). */
static int read_counters(const struct sr_cgroup *cg, bool current,
                         uint64_t uncharged, struct sr_cgroup_counters *c) {
  struct sr_cgroup_counters n = {0};
  uint64_t ns = 0;
  int r;

  r = sr_cg_read_u64_at(cg->v1_fd[SR_CG1_CPUACCT], "cpuacct.usage", &ns);
  if (r >= 0)
    r = read_oom_kill(cg, &n.oom_kill);
  if (r >= 0)
    r = sr_cg_read_key_u64_at(cg->v1_fd[SR_CG1_PIDS], "pids.events", "max",
                              &n.pids_max_hit);
  if (r >= 0 && current)
    r = sr_cg_read_u64_at(cg->v1_fd[SR_CG1_PIDS], "pids.current",
                          &n.pids_current);
  if (r >= 0 && current)
    r = read_memory_over(cg, uncharged, &n.memory_over);
  if (r < 0)
    return r;
  n.cpu_usec = ns / 1000;
  *c = n;
  return 0;
}

int sr_cg1_poll(const struct sr_cgroup *cg, uint64_t uncharged,
                struct sr_cgroup_counters *c) {
  return read_counters(cg, true, uncharged, c);
}

int sr_cg1_stats(const struct sr_cgroup *cg, struct sr_cgroup_stats *st) {
  struct sr_cgroup_counters n;
  struct sr_cgroup_stats s = {0};
  int r = read_counters(cg, false, 0, &n);

  if (r < 0)
    return r;
  s.cpu_usec = n.cpu_usec;
  s.oom_kill = n.oom_kill;
  s.pids_max_hit = n.pids_max_hit;
  r = sr_cg_read_u64_at(cg->v1_fd[SR_CG1_MEMORY], "memory.max_usage_in_bytes",
                        &s.memory_peak);
  if (r < 0)
    return r;
  /* pids.peak is 6.1+ (v1 and v2): 0 when absent (cgroup.h). */
  r = sr_cg_read_u64_at(cg->v1_fd[SR_CG1_PIDS], "pids.peak", &s.pids_peak);
  if (r < 0 && r != -ENOENT)
    return r;
  *st = s;
  return 0;
}

/* v1 has no cgroup.kill: kill what the pids leaf lists until nothing is
 * left; pids.max bounds how many can fork meanwhile. */
int sr_cg1_kill(const struct sr_cgroup *cg) {
  return sr_cg_kill_listed(cg->v1_fd[SR_CG1_PIDS]);
}

/* 0 once every leaf not gone has an empty cgroup.procs, -EBUSY after
 * timeout_ms. */
static int wait_empty(const struct sr_cgroup *cg, const bool *gone,
                      unsigned timeout_ms) {
  uint64_t start = sr_now_mono_ms();

  for (;;) {
    bool all = true;
    for (int c = 0; c < SR__CG1_MAX && all; c++) {
      _cleanup_free_ char *s = NULL;
      int r;

      if (gone[c])
        continue;
      r = sr_cg_read_at(cg->v1_fd[c], "cgroup.procs", &s);
      if (r < 0)
        return r;
      all = s[strspn(s, "\n")] == '\0';
    }
    if (all)
      return 0;
    if (sr_now_mono_ms() - start >= timeout_ms)
      return -EBUSY;
    (void)usleep(10000); /* EINTR only shortens the pause */
  }
}

int sr_cg1_remove(struct sr_cgroup *cg) {
  bool gone[SR__CG1_MAX] = {false}, all = true;
  int r, ret = 0;

  /* Every process of the run is usually reaped by now: an empty leaf goes
   * at the first rmdir, and only busy ones (EBUSY) wait and are killed. */
  for (int c = 0; c < SR__CG1_MAX; c++) {
    gone[c] = !cg->v1_path[c] ||
              unlinkat(AT_FDCWD, cg->v1_path[c], AT_REMOVEDIR) == 0 ||
              errno == ENOENT;
    all = all && gone[c];
  }
  if (all)
    return 0;
  r = wait_empty(cg, gone, SR_CG_DESTROY_WAIT_MS);
  if (r == -EBUSY) {
    /* Through every leaf still there: one already removed cannot list. */
    r = 0;
    for (int c = 0; c < SR__CG1_MAX && r >= 0; c++)
      if (!gone[c])
        r = sr_cg_kill_listed(cg->v1_fd[c]);
    if (r >= 0)
      r = wait_empty(cg, gone, SR_CG_DESTROY_WAIT_MS);
  }
  if (r < 0)
    return r;
  for (int c = 0; c < SR__CG1_MAX; c++) {
    if (gone[c])
      continue;
    r = sr_cg_rmdir_at(AT_FDCWD, cg->v1_path[c]);
    if (r < 0 && ret == 0)
      ret = r;
  }
  return ret;
}

/* Removes the unlocked, empty, not-too-young leaf `name` below sfd. */
static int gc_one(int sfd, const char *name) {
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *procs = NULL;
  int r;

  fd = sr_cg_open_dir_at(sfd, name);
  if (fd < 0)
    return fd == -ENOENT ? 0 : fd;
  r = sr_cg_gc_candidate(fd);
  if (r <= 0)
    return r;
  r = sr_cg_read_at(fd, "cgroup.procs", &procs);
  if (r < 0)
    return r;
  if (procs[strspn(procs, "\n")] != '\0')
    return 0;
  /* rmdir refuses a cgroup with tasks (EBUSY). */
  if (unlinkat(sfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT &&
      errno != EBUSY)
    return -errno;
  return 0;
}

static bool want_v1(const char *name) {
  return strncmp(name, SR_CG_LEAF_PREFIX, strlen(SR_CG_LEAF_PREFIX)) == 0;
}

int sr_cg1_gc_beside(const struct sr_cgroup *cg, unsigned max,
                     struct sr_error *err) {
  const char *own = sr_cgroup_leaf_name(cg);
  int r, ret = 0;

  for (int c = 0; c < SR__CG1_MAX; c++) {
    _cleanup_free_ char *path = NULL;
    const char *slash;

    if (cg->v1_sub_fd[c] < 0 || !cg->v1_path[c])
      continue;
    /* "<mount>/skillrun/<leaf>": the subtree's path, for messages. */
    slash = strrchr(cg->v1_path[c], '/');
    path = slash ? strndup(cg->v1_path[c], (size_t)(slash - cg->v1_path[c]))
                 : NULL;
    if (!path) {
      ret = ret ? ret : sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
      continue;
    }
    r = sr_cg_gc_dir(cg->v1_sub_fd[c], path, own, want_v1, gc_one, max, err);
    if (r < 0 && ret == 0)
      ret = r;
  }
  return ret;
}

/* sr_cg1_gc in the subtree below base, when there is one ours to
 * collect. */
static int gc_subtree(const char *base, unsigned max, const char *own,
                      struct sr_error *err) {
  _cleanup_free_ char *path = NULL;
  _cleanup_close_ int sfd = open_subtree_fd(base);

  if (sfd == -ENOENT || sfd == -EACCES)
    return 0; /* no subtree, or not ours to collect */
  if (sfd >= 0 && faccessat(sfd, ".", W_OK, AT_EACCESS) < 0)
    return 0; /* root's (an ordinary user's --gc) */
  path = sr_cg_xasprintf("%s/" SUBTREE, base);
  if (sfd < 0 || !path)
    return sr_error_layer(err, "cgroup", sfd < 0 ? -sfd : ENOMEM,
                          "--gc: %s/" SUBTREE, base);
  return sr_cg_gc_dir(sfd, path, own, want_v1, gc_one, max, err);
}

int sr_cg1_gc(unsigned max, const char *own, struct sr_error *err) {
  char *mnt[SR__CG1_MAX] = {0}, *self[SR__CG1_MAX] = {0};
  bool have_self;
  int r, ret = 0;

  r = find_v1_mounts(mnt);
  if (r < 0)
    ret = sr_error_layer(err, "cgroup", -r, "--gc: /proc/self/mountinfo");
  have_self = read_own_v1(self) == 0;
  for (int c = 0; r >= 0 && c < SR__CG1_MAX; c++) {
    _cleanup_free_ char *nested = NULL;

    if (!mnt[c])
      continue; /* not mounted: nothing of ours there */
    r = gc_subtree(mnt[c], max, own, err);
    if (r < 0 && ret == 0)
      ret = r;
    /* Runs made here below our own cgroup when it had limits
     * (subtree_base); whether it has them now does not matter. */
    if (have_self && self[c][1]) {
      _cleanup_close_ int mfd = sr_cg_open_dir_at(AT_FDCWD, mnt[c]);
      const char *rel = "/";

      /* Not below this mount, or its top, collected above: nothing. */
      if (mfd >= 0 && own_below_mount(mfd, self[c], &rel) == 0 && rel[1]) {
        nested = sr_cg_xasprintf("%s%s", mnt[c], rel);
        r = nested ? gc_subtree(nested, max, own, err)
                   : sr_error_layer(err, "cgroup", ENOMEM, "--gc");
        if (r < 0 && ret == 0)
          ret = r;
      }
    }
    r = 0;
  }
  for (int c = 0; c < SR__CG1_MAX; c++) {
    free(mnt[c]);
    free(self[c]);
  }
  return ret;
}
