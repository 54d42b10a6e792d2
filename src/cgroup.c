/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run's cgroup (cgroup.h), and its cgroup v2 backend: find a subtree
 * we may write, create one leaf per run, write the limits and read every
 * one of them back, report usage, kill, remove.  Without a usable v2 leaf
 * the v1 backend (cgroup1.c) is tried; the functions of cgroup.h dispatch
 * on cg->version.
 *
 * Kernel reference: Documentation/admin-guide/cgroup-v2.rst (sections
 * "No Internal Process Constraint", "Delegation", "Core Interface Files").
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"
#include "cgroup.h"
#include "error.h"
#include "fdutil.h"
#include "policy.h"
#include "util.h"

#define CG_FILE_MAX (64 * 1024)
#define MOUNTINFO_MAX (4 * 1024 * 1024)
#define LEAF_PREFIX SR_CG_LEAF_PREFIX
/* Where the supervisor moves itself when it must enable controllers on the
 * cgroup it runs in ("no internal processes", cgroup-v2.rst). */
#define SUPERVISOR_LEAF "supervisor"
#define DESTROY_WAIT_MS SR_CG_DESTROY_WAIT_MS

static const char *const hybrid_v2_mount = "/sys/fs/cgroup/unified";

char *sr_cg_xasprintf(const char *fmt, ...) {
  va_list ap;
  char *s = NULL;
  int n;

  va_start(ap, fmt);
  n = vasprintf(&s, fmt, ap);
  va_end(ap);
  return n < 0 ? NULL : s;
}

int sr_cg_read_at(int dfd, const char *file, char **out) {
  return sr_read_pseudo_file_at(dfd, file, CG_FILE_MAX, out);
}

/* "N\n" or "max\n" (UINT64_MAX). */
static int parse_u64_value(const char *s, uint64_t *v) {
  char buf[32];
  size_t n = strcspn(s, "\n");

  if (n == 0 || n >= sizeof(buf))
    return -EINVAL;
  memcpy(buf, s, n);
  buf[n] = '\0';
  if (!strcmp(buf, "max")) {
    *v = UINT64_MAX;
    return 0;
  }
  return sr_parse_uint(buf, UINT64_MAX, v);
}

int sr_cg_read_u64_at(int dfd, const char *file, uint64_t *v) {
  _cleanup_free_ char *s = NULL;
  int r = sr_cg_read_at(dfd, file, &s);

  if (r < 0)
    return r;
  return parse_u64_value(s, v);
}

int sr_cg_read_key_u64_at(int dfd, const char *file, const char *key,
                          uint64_t *v) {
  _cleanup_free_ char *s = NULL;
  size_t klen = strlen(key);
  int r = sr_cg_read_at(dfd, file, &s);

  if (r < 0)
    return r;
  for (const char *l = s; *l;) {
    const char *nl = strchr(l, '\n');
    if (!strncmp(l, key, klen) && l[klen] == ' ')
      return parse_u64_value(l + klen + 1, v);
    if (!nl)
      break;
    l = nl + 1;
  }
  return -ENOENT;
}

/* Is `word` one of the space-separated words of `list`? */
static bool has_word(const char *list, const char *word) {
  size_t wl = strlen(word);

  for (const char *p = list; *p;) {
    size_t n;
    p += strspn(p, " \n");
    n = strcspn(p, " \n");
    if (n == wl && !strncmp(p, word, wl))
      return true;
    p += n;
  }
  return false;
}

void sr_cg_unescape_octal(char *s) {
  char *w = s;

  for (char *r = s; *r;) {
    if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
        r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
      *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
      r += 4;
    } else {
      *w++ = *r++;
    }
  }
  *w = '\0';
}

int sr_cg_mountinfo_split(char *line, char **mountpoint, char **fstype) {
  char *fields[6] = {0}, *sep, *p = line;

  /* id parent maj:min root mountpoint options [optional...] - fstype
   * source super-options */
  for (size_t i = 0; i < SR_ARRAY_SIZE(fields) && p; i++) {
    fields[i] = p;
    p = strchr(p, ' ');
    if (p)
      *p++ = '\0';
  }
  if (!p || !fields[4])
    return -EINVAL;
  sep = strstr(p, "- ");
  if (sep != p && !(sep = strstr(p, " - ")))
    return -EINVAL;
  sr_cg_unescape_octal(fields[4]);
  *mountpoint = fields[4];
  *fstype = sep + (sep == p ? 2 : 3);
  return 0;
}

/*
 * The cgroup2 mount point: /sys/fs/cgroup (unified) is preferred, then
 * /sys/fs/cgroup/unified (hybrid), then the first one found.  *hybrid is
 * set when cgroup v1 hierarchies are mounted too.  -ENOENT when none.
 */
static int find_cgroup2_mount(char **out, bool *hybrid) {
  _cleanup_free_ char *buf = NULL;
  _cleanup_free_ char *best = NULL;
  int best_rank = 0;
  char *save = NULL;
  struct statfs sfs;
  int r;

  /* The two usual layouts are answered by statfs(2) alone (it looks at
   * the mount on top, which is what opening the path gives); reading
   * mountinfo, which grows with the host's mount table, costs 0.1 ms a
   * run.  The scan below stays for unusual mount points. */
  *hybrid = false;
  if (statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC)
    return (*out = strdup("/sys/fs/cgroup")) ? 0 : -ENOMEM;
  if (statfs(hybrid_v2_mount, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC) {
    *hybrid = true; /* systemd's hybrid layout: v1 hierarchies beside it */
    return (*out = strdup(hybrid_v2_mount)) ? 0 : -ENOMEM;
  }
  r = sr_read_file_at(AT_FDCWD, "/proc/self/mountinfo", MOUNTINFO_MAX, &buf,
                      NULL);
  if (r < 0)
    return r;
  for (char *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *mnt, *fstype;
    int rank;

    if (sr_cg_mountinfo_split(line, &mnt, &fstype) < 0)
      continue;
    if (!strncmp(fstype, "cgroup ", 7)) {
      *hybrid = true;
      continue;
    }
    if (strncmp(fstype, "cgroup2 ", 8) != 0)
      continue;
    /* A mount hidden under a later one (a tmpfs over /sys/fs/cgroup) is
     * listed too, but opening its path gives the one on top. */
    if (statfs(mnt, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
      continue;
    rank = !strcmp(mnt, "/sys/fs/cgroup")  ? 3
           : !strcmp(mnt, hybrid_v2_mount) ? 2
                                           : 1;
    if (rank > best_rank) {
      char *d = strdup(mnt);
      if (!d)
        return -ENOMEM;
      free(best);
      best = d;
      best_rank = rank;
    }
  }
  if (!best)
    return -ENOENT;
  *out = TAKE_PTR(best);
  return 0;
}

/* Our own cgroup v2 path ("0::/a/b" in /proc/self/cgroup), "/a/b". */
static int own_cgroup_path(char **out) {
  _cleanup_free_ char *buf = NULL;
  char *save = NULL;
  int r =
      sr_read_file_at(AT_FDCWD, "/proc/self/cgroup", CG_FILE_MAX, &buf, NULL);

  if (r < 0)
    return r;
  for (char *line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "0::", 3)) {
      char *d = strdup(line + 3);
      if (!d)
        return -ENOMEM;
      *out = d;
      return 0;
    }
  }
  return -ENOENT;
}

int sr_cg_open_dir_at(int dfd, const char *path) {
  int fd = openat(dfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int sr_cg_subtree_private(int fd, const char *path, char **reason) {
  struct stat st;

  if (fstat(fd, &st) < 0) {
    int r = -errno;
    *reason = sr_cg_xasprintf("stat %s: %s", path, strerror(-r));
    return r;
  }
  if (st.st_uid == geteuid() && !(st.st_mode & (S_IWGRP | S_IWOTH)))
    return 0;
  *reason =
      sr_cg_xasprintf("%s is uid %u's, mode %04o: it must be uid %u's "
                      "and writable by it alone (whoever else may "
                      "write it sets the limits of the runs below it)",
                      path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
                      (unsigned)geteuid());
  return -EPERM;
}

static int is_cgroup2_fd(int fd) {
  struct statfs sfs;

  if (fstatfs(fd, &sfs) < 0)
    return -errno;
  return sfs.f_type == CGROUP2_SUPER_MAGIC ? 1 : 0;
}

/* True when cgroup.procs of dfd lists no process but ours. */
static int only_self_inside(int dfd) {
  _cleanup_free_ char *s = NULL;
  char self[32];
  int r = sr_cg_read_at(dfd, "cgroup.procs", &s);

  if (r < 0)
    return r;
  snprintf(self, sizeof(self), "%d", (int)getpid());
  for (char *p = s; *p;) {
    size_t n = strcspn(p, "\n");
    if (n > 0 && (n != strlen(self) || strncmp(p, self, n) != 0))
      return 0;
    p += n;
    p += strspn(p, "\n");
  }
  return 1;
}

static int move_self_to_supervisor_leaf(int dfd) {
  char pid[32];
  int r = 0;

  snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
  /* --gc may remove an empty supervisor leaf between mkdir and the move. */
  for (int attempt = 0; attempt < 3; attempt++) {
    _cleanup_close_ int sfd = -1;

    if (mkdirat(dfd, SUPERVISOR_LEAF, SR_CG_LEAF_MODE) < 0 && errno != EEXIST)
      return -errno;
    sfd = sr_cg_open_dir_at(dfd, SUPERVISOR_LEAF);
    if (sfd == -ENOENT) {
      r = sfd;
      continue;
    }
    if (sfd < 0)
      return sfd;
    r = sr_write_file_at(sfd, "cgroup.procs", pid);
    if (r != -ENOENT && r != -ENODEV)
      return r;
  }
  return r;
}

/*
 * Makes sure that children of the cgroup at dfd get the memory and pids
 * controllers (and cpu when the kernel offers it).  When the cgroup holds
 * our own process and nothing else, we move ourselves into a leaf first,
 * as container runtimes do.  On failure *reason says why (malloc'd).
 */
static int enable_controllers(int dfd, const char *path, bool may_move_self,
                              bool *cpu, char **reason) {
  _cleanup_free_ char *avail = NULL;
  _cleanup_free_ char *enabled = NULL;
  char req[32] = "";
  int r;

  *cpu = false;
  r = sr_cg_read_at(dfd, "cgroup.controllers", &avail);
  if (r < 0) {
    *reason = sr_cg_xasprintf("cannot read %s/cgroup.controllers: %s", path,
                              strerror(-r));
    return r;
  }
  if (!has_word(avail, "memory") || !has_word(avail, "pids")) {
    *reason =
        sr_cg_xasprintf("cgroup v2 has no %s controller at %s",
                        has_word(avail, "memory") ? "pids" : "memory", path);
    return -EOPNOTSUPP;
  }
  r = sr_cg_read_at(dfd, "cgroup.subtree_control", &enabled);
  if (r < 0) {
    *reason = sr_cg_xasprintf("cannot read %s/cgroup.subtree_control: %s", path,
                              strerror(-r));
    return r;
  }
  snprintf(req, sizeof(req), "%s%s",
           has_word(enabled, "memory") ? "" : "+memory ",
           has_word(enabled, "pids") ? "" : "+pids ");
  if (req[0]) {
    r = sr_write_file_at(dfd, "cgroup.subtree_control", req);
    if (r == -EBUSY && may_move_self) {
      int q = only_self_inside(dfd);
      if (q < 0)
        r = q;
      else if (q == 0)
        *reason = sr_cg_xasprintf("cannot enable controllers in %s: other "
                                  "processes run in it (no internal processes "
                                  "rule); give a delegated subtree with "
                                  "--cgroup-parent",
                                  path);
      else {
        r = move_self_to_supervisor_leaf(dfd);
        if (r >= 0)
          r = sr_write_file_at(dfd, "cgroup.subtree_control", req);
      }
    }
    if (r < 0) {
      if (!*reason)
        *reason =
            sr_cg_xasprintf("cannot enable %sin %s/cgroup.subtree_control: %s",
                            req, path, strerror(-r));
      return r;
    }
  }
  /* cpu is optional: the CPU-seconds budget is read from cpu.stat, which
   * every cgroup has; the controller only adds pressure/weight files. */
  if (has_word(avail, "cpu")) {
    if (has_word(enabled, "cpu") ||
        sr_write_file_at(dfd, "cgroup.subtree_control", "+cpu") >= 0)
      *cpu = true;
  }

  /* Read back. */
  free(enabled);
  enabled = NULL;
  r = sr_cg_read_at(dfd, "cgroup.subtree_control", &enabled);
  if (r < 0) {
    *reason = sr_cg_xasprintf("cannot read back %s/cgroup.subtree_control: %s",
                              path, strerror(-r));
    return r;
  }
  if (!has_word(enabled, "memory") || !has_word(enabled, "pids")) {
    *reason = sr_cg_xasprintf("%s/cgroup.subtree_control reads \"%.*s\" after "
                              "enabling memory and pids",
                              path, (int)strcspn(enabled, "\n"), enabled);
    return -EIO;
  }
  *cpu = has_word(enabled, "cpu");
  return 0;
}

static const char *path_basename(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

const char *sr_cgroup_leaf_name(const struct sr_cgroup *cg) {
  return cg->active && cg->leaf_path ? path_basename(cg->leaf_path) : NULL;
}

/* Can the caller use the cgroup at dfd as a delegated subtree? */
static bool delegated_to_us(int dfd) {
  struct stat st;

  if (fstat(dfd, &st) < 0 || st.st_uid != geteuid())
    return false;
  return faccessat(dfd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
         faccessat(dfd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
}

/* scope->why becomes `why` (a sr_cg_xasprintf result: NULL is -ENOMEM). */
static int scope_fail(struct sr_cgroup_scope *scope, int r, char *why) {
  free(scope->why);
  scope->why = why;
  return why ? r : -ENOMEM;
}

static int caller_cgroup_unlimited(int mfd, const char *mnt, uint64_t run_pids,
                                   const char *manager, char **reason);

/* What may_leave_for_scope needs to know. */
struct leave_check {
  int mfd;
  const char *mnt;
  uint64_t run_pids;
};

/* sr_cg_systemd_scope's check: the limits of the caller's cgroups that a
 * scope below the manager's would leave (as root's top-level subtree). */
static int may_leave_for_scope(const char *manager, void *arg, char **reason) {
  const struct leave_check *c = arg;

  return caller_cgroup_unlimited(c->mfd, c->mnt, c->run_pids, manager, reason);
}

/*
 * An ordinary caller whose cgroup is not delegated: a transient scope
 * from its systemd user manager (cgroup-systemd.c), unless a limit of the
 * caller's cgroup would be left behind (the scope goes below the
 * manager's cgroup; run_pids as for caller_cgroup_unlimited), checked
 * like any delegated subtree: the supervisor must now be in it, and it
 * must be ours to write.  On success *fd and *path (replaced) are the
 * scope's and scope->unit, path and controllers are set; otherwise
 * scope->why says why (-errno; -ENOMEM alone leaves it unset).
 */
static int enter_systemd_scope(int mfd, const char *mnt, uint64_t run_pids,
                               const char *name, struct sr_cgroup_scope *scope,
                               int *fd, char **path) {
  struct leave_check check = {mfd, mnt, run_pids};
  _cleanup_free_ char *unit = NULL, *desc = NULL, *why = NULL;
  _cleanup_free_ char *own = NULL, *spath = NULL, *ctl = NULL;
  _cleanup_close_ int sfd = -1;
  int r;

  /* The supervisor's pid makes the name unique on the manager even for
   * two runs of one execution id (the second then fails at its leaf). */
  unit = sr_cg_xasprintf("skillrun-%s-%d.scope", name, (int)getpid());
  desc = sr_cg_xasprintf("skillrun run %s", name);
  if (!unit || !desc)
    return -ENOMEM;
  r = sr_cg_systemd_scope(unit, desc, may_leave_for_scope, &check, &why);
  if (r < 0)
    return scope_fail(scope, r, TAKE_PTR(why));
  /* From here the supervisor may be in the scope even if it goes unused:
   * the record names it. */
  scope->unit = TAKE_PTR(unit);
  r = own_cgroup_path(&own);
  if (r < 0)
    return scope_fail(scope, r,
                      sr_cg_xasprintf("%s started, but /proc/self/cgroup: %s",
                                      scope->unit, strerror(-r)));
  if (strcmp(path_basename(own), scope->unit) != 0)
    return scope_fail(scope, -ESRCH,
                      sr_cg_xasprintf("%s started, but the supervisor is in %s",
                                      scope->unit, own));
  spath = sr_cg_xasprintf("%s%s", strcmp(mnt, "/") != 0 ? mnt : "", own);
  if (!spath)
    return -ENOMEM;
  sfd = sr_cg_open_dir_at(AT_FDCWD, spath);
  if (sfd < 0)
    return scope_fail(scope, sfd,
                      sr_cg_xasprintf("open %s: %s", spath, strerror(-sfd)));
  if (!delegated_to_us(sfd))
    return scope_fail(scope, -EACCES,
                      sr_cg_xasprintf("%s is not delegated to uid %u", spath,
                                      (unsigned)geteuid()));
  r = sr_cg_read_at(sfd, "cgroup.controllers", &ctl);
  if (r < 0)
    return scope_fail(
        scope, r,
        sr_cg_xasprintf("read %s/cgroup.controllers: %s", spath, strerror(-r)));
  ctl[strcspn(ctl, "\n")] = '\0';
  scope->path = strdup(spath);
  scope->controllers = TAKE_PTR(ctl);
  if (!scope->path)
    return -ENOMEM;
  safe_close(*fd);
  *fd = TAKE_FD(sfd);
  free(*path);
  *path = TAKE_PTR(spath);
  return 0;
}

/* The limit files a scheduler sets on a cgroup v2 (systemd's MemoryMax=,
 * MemoryHigh=, MemorySwapMax=, TasksMax=, CPUQuota=, AllowedCPUs=,
 * AllowedMemoryNodes=, IO*BandwidthMax=/IO*IOPSMax=; Slurm's
 * ConstrainCores=; a container's).  "max" and an empty file (no cpuset of
 * its own, no io.max rule) are none.  pids.max counts only below
 * skillrun's pids cap (builtin or skillrun.conf; not the run's value,
 * which the caller lowers with --pids: asking for less must not move a
 * run out of the caller's pids.max): systemd gives every unit and slice
 * one by default (DefaultTasksMax=, 15% of the kernel's pid limit; a
 * user's slice 33%), a safety net far above it.  A cpuset counts only
 * where it is narrower than the root cgroup's (a leaf outside it could
 * widen its affinity with sched_setaffinity(2) to every CPU). */
static const char *const outer_limit_files[] = {
    "memory.max", "memory.high", "memory.swap.max", "pids.max",
    "cpu.max",    "cpuset.cpus", "cpuset.mems",     "io.max",
};

/* Is the cpuset file's value v (cpuset.cpus or cpuset.mems) all that the
 * root cgroup at mfd has (its .effective), so no limit at all? */
static bool cpuset_is_whole(int mfd, const char *file, const char *v) {
  _cleanup_free_ char *root = NULL;
  char eff[32];

  snprintf(eff, sizeof(eff), "%s.effective", file);
  if (sr_cg_read_at(mfd, eff, &root) < 0)
    return false;
  root[strcspn(root, "\n")] = '\0';
  return strcmp(root, v) == 0;
}

/* Is the cgroup `p` the cgroup `q` or one above it? */
static bool cgroup_at_or_above(const char *p, const char *q) {
  size_t n = strlen(p);

  return strncmp(p, q, n) == 0 && (q[n] == '\0' || q[n] == '/');
}

/*
 * Root's subtree is <mount>/skillrun, at the top of the hierarchy: outside
 * the cgroup the caller runs in.  When that cgroup or one above it (below
 * the root cgroup, which has none) has a limit, a leaf there would escape
 * it, and every limit can only be lowered.  Root cannot nest below its
 * own cgroup either (it holds the supervisor: the no-internal-processes
 * rule), nor take over a cgroup that is not delegated.  An ordinary
 * caller's scope goes below its user manager's cgroup, `manager`: only
 * the caller's cgroups that are not at or above that one are left (NULL:
 * all of them).  0 when there is no such limit; otherwise -errno with
 * *reason naming the cgroup, the limit and the way out (a delegated
 * --cgroup-parent).
 */
static int caller_cgroup_unlimited(int mfd, const char *mnt, uint64_t run_pids,
                                   const char *manager, char **reason) {
  const char *m = strcmp(mnt, "/") != 0 ? mnt : "";
  _cleanup_free_ char *own = NULL;
  bool first = true;
  int r = own_cgroup_path(&own);

  if (r < 0) {
    *reason = sr_cg_xasprintf("cannot tell the cgroup v2 skillrun runs in "
                              "from /proc/self/cgroup: %s",
                              strerror(-r));
    return r;
  }
  /* "/../x": outside our cgroup namespace, no place below the mount. */
  if (own[0] != '/' || strstr(own, "/..") || strstr(own, "/./")) {
    *reason = sr_cg_xasprintf("the cgroup v2 skillrun runs in, %s, is not "
                              "below %s",
                              own, mnt);
    return -EXDEV;
  }
  for (size_t len = strlen(own); len > 1; first = false) {
    _cleanup_close_ int fd = -1;

    own[len] = '\0';
    if (manager && cgroup_at_or_above(own, manager))
      break; /* it and those above hold the scope too */
    fd = sr_cg_open_dir_at(mfd, own + 1);
    if (fd < 0) {
      *reason = sr_cg_xasprintf("cannot open %s%s: %s", m, own, strerror(-fd));
      return fd;
    }
    for (size_t i = 0;
         i < sizeof(outer_limit_files) / sizeof(*outer_limit_files); i++) {
      _cleanup_free_ char *v = NULL;
      uint64_t n;

      r = sr_cg_read_at(fd, outer_limit_files[i], &v);
      if (r == -ENOENT)
        continue; /* the controller is not enabled here: no limit */
      if (r < 0) {
        *reason = sr_cg_xasprintf("cannot read %s%s/%s: %s", m, own,
                                  outer_limit_files[i], strerror(-r));
        return r;
      }
      v[strcspn(v, "\n")] = '\0';
      if (!v[0] || strcmp(v, "max") == 0 || strncmp(v, "max ", 4) == 0)
        continue;
      if (!strncmp(outer_limit_files[i], "cpuset.", 7) &&
          cpuset_is_whole(mfd, outer_limit_files[i], v))
        continue;
      if (!strcmp(outer_limit_files[i], "pids.max") &&
          parse_u64_value(v, &n) == 0 && n >= run_pids)
        continue;
      if (manager)
        *reason = sr_cg_xasprintf(
            "%s%s, %s skillrun runs in, has %s %s: a scope of the user "
            "manager, below %s%s, would be outside that limit; give a "
            "cgroup delegated below it with --cgroup-parent (systemd: "
            "Delegate=yes)",
            m, own, first ? "the cgroup" : "above the cgroup",
            outer_limit_files[i], v, m, manager);
      else
        *reason = sr_cg_xasprintf(
            "%s%s, %s skillrun runs in, has %s %s: a leaf below %s/skillrun "
            "would be outside that limit; give a cgroup delegated below it "
            "with --cgroup-parent (systemd: Delegate=yes)",
            m, own, first ? "the cgroup" : "above the cgroup",
            outer_limit_files[i], v, m);
      return -EPERM;
    }
    while (len > 1 && own[len - 1] != '/')
      len--;
    if (len > 1)
      len--; /* the slash before the last name */
  }
  return 0;
}

/*
 * Finds the subtree that will hold the leaf (parent_override, else
 * <mount>/skillrun as root, else our own delegated cgroup).  When
 * `prepare`, creates what is missing and enables controllers; run_pids
 * (skillrun's pids cap) then says which pids.max above the caller keeps
 * root from the top-level subtree (caller_cgroup_unlimited).
 * Returns 0 with *out_fd and *out_path set; or -errno and either *reason (the
 * cgroup layer is unavailable: `prefer` falls back) or err (a hard failure).
 */
static int find_parent(const char *override, bool prepare, uint64_t run_pids,
                       int *out_fd, char **out_path, bool *cpu, char **reason,
                       const char *name, struct sr_cgroup_scope *scope,
                       struct sr_error *err) {
  _cleanup_free_ char *mnt = NULL;
  _cleanup_free_ char *path = NULL;
  _cleanup_close_ int mfd = -1;
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *avail = NULL;
  bool hybrid = false;
  int r;

  *cpu = false;
  if (override) {
    if (override[0] != '/')
      return sr_error_layer(err, "cgroup", EINVAL,
                            "--cgroup-parent %s: not an absolute path",
                            override);
    fd = sr_cg_open_dir_at(AT_FDCWD, override);
    if (fd < 0)
      return sr_error_layer(err, "cgroup", -fd, "--cgroup-parent %s", override);
    r = is_cgroup2_fd(fd);
    if (r <= 0)
      return sr_error_layer(err, "cgroup", r < 0 ? -r : ENOTDIR,
                            "--cgroup-parent %s: not a cgroup v2 directory",
                            override);
    path = strdup(override);
    if (!path)
      return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
    if (prepare) {
      _cleanup_free_ char *why = NULL;
      r = enable_controllers(fd, path, true, cpu, &why);
      if (r < 0)
        return sr_error_layer(err, "cgroup", 0, "--cgroup-parent: %s",
                              why ? why : strerror(-r));
    }
    *out_fd = TAKE_FD(fd);
    *out_path = TAKE_PTR(path);
    return 0;
  }

  r = find_cgroup2_mount(&mnt, &hybrid);
  if (r == -ENOENT) {
    *reason = sr_cg_xasprintf("no cgroup v2 hierarchy is mounted");
    return r;
  }
  if (r < 0)
    return sr_error_layer(err, "cgroup", -r, "read /proc/self/mountinfo");
  mfd = sr_cg_open_dir_at(AT_FDCWD, mnt);
  if (mfd < 0) {
    *reason = sr_cg_xasprintf("cannot open %s: %s", mnt, strerror(-mfd));
    return mfd;
  }
  /* Nothing below the mount can have a controller its root lacks: this is
   * the answer on hybrid hosts, whose v2 tree has no memory controller. */
  r = sr_cg_read_at(mfd, "cgroup.controllers", &avail);
  if (r < 0) {
    *reason = sr_cg_xasprintf("cannot read %s/cgroup.controllers: %s", mnt,
                              strerror(-r));
    return r;
  }
  if (!has_word(avail, "memory") || !has_word(avail, "pids")) {
    *reason = sr_cg_xasprintf("cgroup v2 has no %s controller at %s%s",
                              has_word(avail, "memory") ? "pids" : "memory",
                              mnt, hybrid ? " (hybrid layout)" : "");
    return -EOPNOTSUPP;
  }

  if (sr_root_mode()) {
    bool root_cpu;
    if (prepare) {
      /* A caller's cgroup with limits stays the outer bound: no leaf
       * beside it (--gc still collects the subtree). */
      r = caller_cgroup_unlimited(mfd, mnt, run_pids, NULL, reason);
      if (r < 0)
        return r;
      /* The root cgroup is exempt from the no-internal-processes rule. */
      r = enable_controllers(mfd, mnt, false, &root_cpu, reason);
      if (r < 0)
        return r;
      if (mkdirat(mfd, "skillrun", 0755) < 0 && errno != EEXIST) {
        r = -errno;
        *reason = sr_cg_xasprintf("mkdir %s/skillrun: %s", mnt, strerror(-r));
        return r;
      }
    }
    path = sr_cg_xasprintf("%s/skillrun", strcmp(mnt, "/") ? mnt : "");
    if (!path)
      return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
    fd = sr_cg_open_dir_at(mfd, "skillrun");
    if (fd < 0) {
      *reason = sr_cg_xasprintf("open %s: %s", path, strerror(-fd));
      return fd;
    }
    if (prepare) {
      /* --gc still collects a dead run's leaves there. */
      r = sr_cg_subtree_private(fd, path, reason);
      if (r < 0)
        return r;
      r = enable_controllers(fd, path, false, cpu, reason);
      if (r < 0)
        return r;
    }
  } else {
    _cleanup_free_ char *own = NULL;

    r = own_cgroup_path(&own);
    if (r < 0) {
      *reason = sr_cg_xasprintf("no cgroup v2 entry in /proc/self/cgroup");
      return r;
    }
    /* A supervisor that already moved itself uses the subtree above. */
    if (!strcmp(path_basename(own), SUPERVISOR_LEAF) && strlen(own) > 1)
      own[strlen(own) - strlen(SUPERVISOR_LEAF) - 1] = '\0';
    path = sr_cg_xasprintf("%s%s", strcmp(mnt, "/") != 0 ? mnt : "",
                           strcmp(own, "/") != 0 && own[0] ? own : "");
    if (!path)
      return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
    fd = sr_cg_open_dir_at(AT_FDCWD, path);
    if (fd < 0) {
      *reason = sr_cg_xasprintf("open %s: %s", path, strerror(-fd));
      return fd;
    }
    if (!delegated_to_us(fd) && prepare && scope) {
      /* Not delegated (a login session's scope): ask the user manager
       * for one that is, with the supervisor in it. */
      r = enter_systemd_scope(mfd, mnt, run_pids, name, scope, &fd, &path);
      if (r < 0 && r != -ENOMEM) {
        *reason = sr_cg_xasprintf("no delegated cgroup v2 subtree: %s is not "
                                  "delegated to uid %u, and no systemd scope: "
                                  "%s",
                                  path, (unsigned)geteuid(), scope->why);
        return -EACCES;
      }
      if (r < 0)
        return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
    } else if (!delegated_to_us(fd)) {
      *reason = sr_cg_xasprintf("no delegated cgroup v2 subtree: %s is not "
                                "delegated to uid %u (use --cgroup-parent)",
                                path, (unsigned)geteuid());
      return -EACCES;
    }
    if (prepare) {
      r = enable_controllers(fd, path, true, cpu, reason);
      if (r < 0)
        return r;
    }
  }
  *out_fd = TAKE_FD(fd);
  *out_path = TAKE_PTR(path);
  return 0;
}

int sr_cg_write_checked(int lfd, const char *leaf_path, const char *file,
                        uint64_t value, struct sr_error *err) {
  char buf[32], back[64];
  const char *step;
  uint64_t got = 0;
  int r;

  snprintf(buf, sizeof(buf), "%" PRIu64 "\n", value);
  /* One descriptor for both: two system calls fewer a limit. */
  r = sr_write_read_back_at(lfd, file, buf, back, sizeof(back), &step);
  if (r >= 0)
    r = parse_u64_value(back, &got);
  if (r < 0)
    return sr_error_layer(err, "cgroup", -r, "%s %s/%s", step, leaf_path, file);
  if (got != value)
    return sr_error_layer(err, "cgroup", EIO,
                          "%s/%s reads %" PRIu64 " after writing %" PRIu64,
                          leaf_path, file, got, value);
  return 0;
}

bool sr_cg_no_swap_configured(void) {
  _cleanup_free_ char *s = NULL;
  char *nl;

  if (sr_read_file_at(AT_FDCWD, "/proc/swaps", CG_FILE_MAX, &s, NULL) < 0)
    return false;
  nl = strchr(s, '\n'); /* header line */
  return nl && nl[1] == '\0';
}

uint64_t sr_cg_page_round(uint64_t bytes) {
  long page = sysconf(_SC_PAGESIZE);

  if (page <= 0)
    page = 4096;
  return bytes - bytes % (uint64_t)page;
}

static int write_limits(struct sr_cgroup *cg, const struct sr_policy *p,
                        struct sr_error *err) {
  _cleanup_free_ char *ctl = NULL;
  uint64_t mem = sr_cg_page_round(p->limits[SR_LIM_MEMORY].value);
  uint64_t pids = p->limits[SR_LIM_PIDS].value;
  int r;

  r = sr_cg_read_at(cg->leaf_fd, "cgroup.controllers", &ctl);
  if (r < 0)
    return sr_error_layer(err, "cgroup", -r, "read %s/cgroup.controllers",
                          cg->leaf_path);
  if (!has_word(ctl, "memory") || !has_word(ctl, "pids"))
    return sr_error_layer(err, "cgroup", EIO,
                          "%s lacks the memory or pids controller",
                          cg->leaf_path);
  cg->memory = cg->pids = true;
  cg->cpu = has_word(ctl, "cpu");

  /* A cgroup above with less holds the run to that all the same: the
   * leaf's own limit says so, and its OOM kill is the run's own. */
  if (cg->outer_memory < mem)
    mem = sr_cg_page_round(cg->outer_memory);
  if (cg->outer_pids < pids)
    pids = cg->outer_pids;
  if (mem == 0)
    return sr_error_layer(err, "cgroup", EINVAL, "memory limit below one page");
  if (pids == 0)
    return sr_error_layer(err, "cgroup", EINVAL, "pids limit is 0");

  r = sr_cg_write_checked(cg->leaf_fd, cg->leaf_path, "memory.max", mem, err);
  if (r < 0)
    return r;
  cg->v2_memory_limit = mem;
  /* Swap would let a run exceed memory.max; without swap accounting
   * (no memory.swap.max) that is only acceptable when there is no swap. */
  r = sr_write_file_at(cg->leaf_fd, "memory.swap.max", "0\n");
  if (r == -ENOENT) {
    if (!sr_cg_no_swap_configured())
      return sr_error_layer(err, "cgroup", ENOENT,
                            "swap is enabled but the kernel has no "
                            "memory.swap.max (swap accounting is off)");
  } else {
    r = sr_cg_write_checked(cg->leaf_fd, cg->leaf_path, "memory.swap.max", 0,
                            err);
    if (r < 0)
      return r;
  }
  /* Kill the whole run on OOM, not one process of it. */
  r = sr_cg_write_checked(cg->leaf_fd, cg->leaf_path, "memory.oom.group", 1,
                          err);
  if (r < 0)
    return r;
  r = sr_cg_write_checked(cg->leaf_fd, cg->leaf_path, "pids.max", pids, err);
  if (r < 0)
    return r;
  return 0;
}

const char *sr_cg1_ctrl_name(enum sr_cg1_ctrl c) {
  static const char *const names[SR__CG1_MAX] = {
      [SR_CG1_MEMORY] = "memory",
      [SR_CG1_PIDS] = "pids",
      [SR_CG1_CPUACCT] = "cpuacct",
  };
  return (unsigned)c < SR__CG1_MAX ? names[c] : "?";
}

void sr_cgroup_init(struct sr_cgroup *cg) {
  memset(cg, 0, sizeof(*cg));
  cg->leaf_fd = -1;
  cg->outer_memory = cg->outer_pids = UINT64_MAX;
  for (int i = 0; i < SR__CG1_MAX; i++)
    cg->v1_fd[i] = cg->v1_sub_fd[i] = -1;
}

static void cgroup_reset(struct sr_cgroup *cg) {
  cg->leaf_fd = safe_close(cg->leaf_fd);
  free(cg->leaf_path);
  free(cg->parent_path);
  cg->leaf_path = cg->parent_path = NULL;
  sr_cg1_reset(cg);
  cg->active = cg->memory = cg->pids = cg->cpu = false;
  cg->version = SR_CGV_NONE;
}

/* scope->why when the user manager was not asked (find_parent asks only
 * an ordinary caller on a cgroup v2 host whose cgroup is not delegated):
 * which of those did not hold.  -ENOMEM, or 0. */
static int scope_not_asked(struct sr_cgroup_scope *scope, const char *override,
                           bool v2_found, const char *v2_reason) {
  if (scope->unit || scope->why)
    return 0; /* asked: the scope, or why it failed, is on the record */
  if (override)
    scope->why = strdup("not asked: --cgroup-parent names the subtree");
  else if (sr_root_mode())
    scope->why = strdup("not asked: root uses the hierarchy's skillrun "
                        "subtree itself");
  else if (v2_found)
    scope->why = strdup("not asked: the caller's cgroup v2 is delegated");
  else
    scope->why = sr_cg_xasprintf("not asked: %s", v2_reason);
  return scope->why ? 0 : -ENOMEM;
}

/*
 * The lowest `file` (memory.max, pids.max) of the cgroup v2 at `path` and
 * of those above it, as far as the mount shows them (the hierarchy's root
 * has none; a cgroup namespace's root is a container's cgroup, whose limit
 * counts: tests/vm/cgroup-test.c; above it is no cgroup2): *v, UINT64_MAX when
 * none has one, and *at (malloc'd), the cgroup that has it.  A delegated
 * subtree's, a user slice's MemoryMax= or TasksMax=, --cgroup-parent's:
 * the run's leaf below them cannot use more, whatever its own limit says.
 * A file that cannot be read counts as no limit.  `path` is resolved
 * first: through a symlink (--cgroup-parent /run/x -> a cgroup) the walk
 * would stop at /run, short of the cgroups above, and through a ".." it
 * would read cgroups that do not hold the leaf.
 */
static int outer_limit(const char *path, const char *file, uint64_t *v,
                       char **at) {
  _cleanup_free_ char *p = realpath(path, NULL);

  *v = UINT64_MAX;
  if (!p)
    return -errno;
  for (;;) {
    _cleanup_close_ int fd = sr_cg_open_dir_at(AT_FDCWD, p);
    uint64_t m;
    char *slash;

    if (fd < 0 || is_cgroup2_fd(fd) != 1)
      break; /* above the mount */
    if (sr_cg_read_u64_at(fd, file, &m) == 0 && m < *v) {
      char *d = strdup(p);
      if (!d)
        return -ENOMEM;
      free(*at);
      *at = d;
      *v = m;
    }
    slash = strrchr(p, '/');
    if (!slash || slash == p)
      break;
    *slash = '\0';
  }
  return 0;
}

/* The v2 leaf below the subtree find_parent chose. */
static int setup_v2(struct sr_cgroup *cg, const struct sr_policy *p, int pfd,
                    char *parent_path, const char *leaf, struct sr_error *err) {
  int r;

  if (mkdirat(pfd, leaf, SR_CG_LEAF_MODE) < 0)
    return sr_error_layer(err, "cgroup", errno, "mkdir %s/%s", parent_path,
                          leaf);
  cg->leaf_fd = sr_cg_open_dir_at(pfd, leaf);
  cg->leaf_path = sr_cg_xasprintf("%s/%s", parent_path, leaf);
  if (cg->leaf_fd < 0 || !cg->leaf_path) {
    r = cg->leaf_fd < 0 ? cg->leaf_fd : -ENOMEM;
    r = sr_error_layer(err, "cgroup", -r, "open %s/%s", parent_path, leaf);
    goto fail;
  }
  /* The lock marks the leaf live for --gc for as long as the run exists. */
  if (flock(cg->leaf_fd, LOCK_EX | LOCK_NB) < 0) {
    r = sr_error_layer(err, "cgroup", errno, "lock %s", cg->leaf_path);
    goto fail;
  }
  r = outer_limit(parent_path, "memory.max", &cg->outer_memory,
                  &cg->outer_memory_at);
  if (r >= 0)
    r = outer_limit(parent_path, "pids.max", &cg->outer_pids,
                    &cg->outer_pids_at);
  if (r < 0) {
    r = sr_error_layer(err, "cgroup", -r, "the cgroups above %s", parent_path);
    goto fail;
  }
  r = write_limits(cg, p, err);
  if (r < 0)
    goto fail;
  cg->parent_path = parent_path;
  cg->version = SR_CGV_2;
  cg->active = true;
  return 0;

fail:
  /* The leaf is empty: nothing was started in it yet. */
  (void)unlinkat(pfd, leaf, AT_REMOVEDIR); /* best effort; r says why */
  free(parent_path);
  cgroup_reset(cg);
  return r;
}

int sr_cgroup_setup(struct sr_cgroup *cg, const struct sr_policy *p,
                    bool require, const char *parent_override, const char *name,
                    char **why, struct sr_error *err) {
  _cleanup_free_ char *reason = NULL;
  _cleanup_free_ char *reason1 = NULL;
  _cleanup_free_ char *parent_path = NULL;
  _cleanup_close_ int pfd = -1;
  char leaf[sizeof(LEAF_PREFIX) + 64];
  bool cpu = false;
  int r;

  sr_cgroup_init(cg);
  if (why)
    *why = NULL;

  if (p->cgroup == SR_CGROUP_OFF) {
    if ((why && !(*why = strdup("cgroup off in the policy"))) ||
        !(cg->scope.why = strdup("not asked: cgroup off in the policy")))
      return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
    return 0;
  }
  if (!name || !sr_valid_id(name) || strlen(name) > 64)
    return sr_error_layer(err, "cgroup", EINVAL, "invalid cgroup leaf name");
  snprintf(leaf, sizeof(leaf), LEAF_PREFIX "%s", name);

  r = find_parent(parent_override, true, p->limits[SR_LIM_PIDS].cap, &pfd,
                  &parent_path, &cpu, &reason, name, &cg->scope, err);
  if ((r >= 0 || reason) &&
      scope_not_asked(&cg->scope, parent_override, r >= 0, reason) < 0)
    return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
  if (r >= 0)
    return setup_v2(cg, p, pfd, TAKE_PTR(parent_path), leaf, err);
  if (!reason) /* err is set: a hard failure */
    return r;
  /* No v2 leaf: the v1 hierarchies (hybrid and legacy hosts).  An
   * explicit --cgroup-parent is v2 and never gets here. */
  r = sr_cg1_setup(cg, p, leaf, &reason1, err);
  if (r >= 0)
    return 0;
  if (!reason1)
    return r;
  if (require)
    return sr_error_layer(err, "cgroup", 0,
                          "cgroup require: no usable cgroup: v2: %s; v1: %s",
                          reason, reason1);
  if (why) {
    *why = sr_cg_xasprintf("v2: %s; v1: %s", reason, reason1);
    if (!*why)
      return sr_error_layer(err, "cgroup", ENOMEM, "cgroup");
  }
  return 0;
}

int sr_cgroup_clone_fd(const struct sr_cgroup *cg) {
  return cg->active && cg->version == SR_CGV_2 ? cg->leaf_fd : -1;
}

int sr_cgroup_open_join(const struct sr_cgroup *cg, int *fds,
                        const char **paths, size_t max, struct sr_error *err) {
  if (!cg->active || cg->version != SR_CGV_1)
    return 0;
  return sr_cg1_open_join(cg, fds, paths, max, err);
}

/* v2: memory.current less the page cache of files (which the kernel
 * reclaims at memory.max) with the uncharged bytes, when that passes
 * memory.max; else 0. */
static int v2_memory_over(const struct sr_cgroup *cg, uint64_t uncharged,
                          uint64_t *over) {
  uint64_t current = 0, file = 0, held;
  int r;

  *over = 0;
  if (uncharged == 0 || cg->v2_memory_limit == 0)
    return 0;
  r = sr_cg_read_u64_at(cg->leaf_fd, "memory.current", &current);
  if (r >= 0)
    r = sr_cg_read_key_u64_at(cg->leaf_fd, "memory.stat", "file", &file);
  if (r < 0)
    return r;
  held = (current > file ? current - file : 0) + uncharged;
  if (held > cg->v2_memory_limit)
    *over = held;
  return 0;
}

int sr_cgroup_poll(const struct sr_cgroup *cg, uint64_t uncharged,
                   struct sr_cgroup_counters *c) {
  struct sr_cgroup_counters n = {0};
  int r;

  if (!cg->active)
    return -ENODEV;
  if (cg->version == SR_CGV_1)
    return sr_cg1_poll(cg, uncharged, c);
  r = sr_cg_read_key_u64_at(cg->leaf_fd, "cpu.stat", "usage_usec", &n.cpu_usec);
  if (r >= 0)
    r = sr_cg_read_key_u64_at(cg->leaf_fd, "memory.events", "oom_kill",
                              &n.oom_kill);
  if (r >= 0)
    r = sr_cg_read_key_u64_at(cg->leaf_fd, "pids.events", "max",
                              &n.pids_max_hit);
  if (r >= 0)
    r = sr_cg_read_u64_at(cg->leaf_fd, "pids.current", &n.pids_current);
  if (r >= 0)
    r = v2_memory_over(cg, uncharged, &n.memory_over);
  if (r < 0)
    return r;
  *c = n;
  return 0;
}

int sr_cgroup_stats(const struct sr_cgroup *cg, struct sr_cgroup_stats *st) {
  struct sr_cgroup_stats s = {0};
  int r;

  if (!cg->active)
    return -ENODEV;
  if (cg->version == SR_CGV_1)
    return sr_cg1_stats(cg, st);
  r = sr_cg_read_key_u64_at(cg->leaf_fd, "cpu.stat", "usage_usec", &s.cpu_usec);
  if (r < 0)
    return r;
  r = sr_cg_read_key_u64_at(cg->leaf_fd, "memory.events", "oom_kill",
                            &s.oom_kill);
  if (r < 0)
    return r;
  r = sr_cg_read_key_u64_at(cg->leaf_fd, "pids.events", "max", &s.pids_max_hit);
  if (r < 0)
    return r;
  /* memory.peak is 5.19+, pids.peak 6.1+: 0 when absent (cgroup.h). */
  r = sr_cg_read_u64_at(cg->leaf_fd, "memory.peak", &s.memory_peak);
  if (r < 0 && r != -ENOENT)
    return r;
  r = sr_cg_read_u64_at(cg->leaf_fd, "pids.peak", &s.pids_peak);
  if (r < 0 && r != -ENOENT)
    return r;
  *st = s;
  return 0;
}

/* The pids cgroup.procs of lfd lists, into v (at most n); how many. */
static size_t listed_pids(const char *s, pid_t *v, size_t n) {
  size_t k = 0;

  for (const char *p = s; *p && k < n;) {
    uint64_t pid;
    size_t len = strcspn(p, "\n");
    char buf[24];

    if (len > 0 && len < sizeof(buf)) {
      memcpy(buf, p, len);
      buf[len] = '\0';
      if (sr_parse_uint(buf, INT32_MAX, &pid) == 0 && pid > 0)
        v[k++] = (pid_t)pid;
    }
    p += len;
    p += strspn(p, "\n");
  }
  return k;
}

static bool pid_in(const pid_t *v, size_t n, pid_t pid) {
  for (size_t i = 0; i < n; i++)
    if (v[i] == pid)
      return true;
  return false;
}

/*
 * A listed pid may exit and be reused by a process outside the leaf
 * between the read and the kill: each is pinned with a pidfd first, and
 * signalled only if the leaf still lists it after that (a pidfd of a
 * process that has since died signals nothing).  Up to 4096 per round;
 * sr_cg_kill_listed repeats until the leaf is empty.
 */
static int kill_round(int lfd, bool *empty) {
  enum { MAX_ROUND = 4096 };
  _cleanup_free_ char *before = NULL, *after = NULL;
  _cleanup_free_ pid_t *v = NULL, *w = NULL;
  _cleanup_free_ int *fds = NULL;
  size_t n, m;
  int r = sr_cg_read_at(lfd, "cgroup.procs", &before);

  if (r < 0)
    return r;
  v = calloc(MAX_ROUND, sizeof(*v));
  w = calloc(MAX_ROUND, sizeof(*w));
  fds = calloc(MAX_ROUND, sizeof(*fds));
  if (!v || !w || !fds)
    return -ENOMEM;
  n = listed_pids(before, v, MAX_ROUND);
  *empty = n == 0;
  for (size_t i = 0; i < n; i++)
    fds[i] = (int)syscall(SYS_pidfd_open, v[i], 0);
  r = sr_cg_read_at(lfd, "cgroup.procs", &after);
  m = r < 0 ? 0 : listed_pids(after, w, MAX_ROUND);
  for (size_t i = 0; i < n; i++) {
    if (fds[i] < 0)
      continue; /* gone already, or no pidfd_open: never by bare pid */
    if (pid_in(w, m, v[i]) &&
        syscall(SYS_pidfd_send_signal, fds[i], SIGKILL, NULL, 0) < 0 &&
        errno != ESRCH && r >= 0)
      r = -errno;
    safe_close(fds[i]);
  }
  return r < 0 ? r : 0;
}

int sr_cg_kill_listed(int lfd) {
  /* A process that forks meanwhile shows up in the next read. */
  for (int i = 0; i < 100; i++) {
    bool empty = false;
    int r = kill_round(lfd, &empty);
    if (r < 0 || empty)
      return r;
    (void)usleep(10000); /* EINTR only shortens the pause */
  }
  return -EBUSY;
}

int sr_cg_rmdir_at(int dfd, const char *path) {
  /* An emptied cgroup can refuse rmdir for a moment (EBUSY): populated 0
   * can precede the last css release. */
  for (int i = 0;; i++) {
    if (unlinkat(dfd, path, AT_REMOVEDIR) == 0 || errno == ENOENT)
      return 0;
    if (errno != EBUSY || i >= 100)
      return -errno;
    (void)usleep(10000); /* EINTR only shortens the pause */
  }
}

int sr_cgroup_kill(const struct sr_cgroup *cg) {
  int r;

  if (!cg->active)
    return -ENODEV;
  if (cg->version == SR_CGV_1)
    return sr_cg1_kill(cg);
  r = sr_write_file_at(cg->leaf_fd, "cgroup.kill", "1\n");
  if (r != -ENOENT)
    return r;
  /* Before 5.14: kill what is listed until nothing is left. */
  return sr_cg_kill_listed(cg->leaf_fd);
}

/* 0 once cgroup.events reads "populated 0", -EBUSY after timeout_ms. */
static int wait_unpopulated(int lfd, unsigned timeout_ms) {
  uint64_t start = sr_now_mono_ms();

  for (;;) {
    uint64_t populated = 1;
    int r =
        sr_cg_read_key_u64_at(lfd, "cgroup.events", "populated", &populated);
    if (r < 0)
      return r;
    if (populated == 0)
      return 0;
    if (sr_now_mono_ms() - start >= timeout_ms)
      return -EBUSY;
    (void)usleep(10000); /* EINTR only shortens the pause */
  }
}

static int destroy_v2(struct sr_cgroup *cg) {
  _cleanup_close_ int pfd = -1;
  int r;

  if (cg->leaf_fd < 0 || !cg->leaf_path || !cg->parent_path)
    return 0;
  /* Every process of the run is usually reaped by now: an empty leaf goes
   * at the first rmdir, and only a busy one (EBUSY) waits and is killed. */
  if (unlinkat(AT_FDCWD, cg->leaf_path, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  r = wait_unpopulated(cg->leaf_fd, DESTROY_WAIT_MS);
  if (r == -EBUSY) {
    r = sr_cgroup_kill(cg);
    if (r < 0)
      return r;
    r = wait_unpopulated(cg->leaf_fd, DESTROY_WAIT_MS);
  }
  if (r < 0)
    return r;

  pfd = sr_cg_open_dir_at(AT_FDCWD, cg->parent_path);
  if (pfd < 0)
    return pfd;
  return sr_cg_rmdir_at(pfd, path_basename(cg->leaf_path));
}

int sr_cgroup_remove(struct sr_cgroup *cg) {
  int r = 0;

  if (cg->active && cg->version == SR_CGV_1)
    r = sr_cg1_remove(cg);
  else if (cg->active)
    r = destroy_v2(cg);
  if (r < 0)
    return r; /* cg kept intact: the caller may retry, --gc later */
  cgroup_reset(cg);
  return 0;
}

int sr_cgroup_release(struct sr_cgroup *cg) {
  int r = sr_cgroup_remove(cg);

  /* A leaf that cannot be removed now is left to --gc (its lock goes with
   * the fd), with its fds and paths released here: no second removal
   * waits for it again (up to twice SR_CG_DESTROY_WAIT_MS and the rmdir
   * retries) before the run's final records. */
  cgroup_reset(cg);
  return r;
}

void sr_cgroup_done(struct sr_cgroup *cg) {
  /* The scope itself goes with the supervisor: its manager collects it
   * once it is empty. */
  (void)sr_cgroup_release(cg);
  free(cg->scope.unit);
  free(cg->scope.path);
  free(cg->scope.controllers);
  free(cg->scope.why);
  memset(&cg->scope, 0, sizeof(cg->scope));
  free(cg->outer_memory_at);
  free(cg->outer_pids_at);
  cg->outer_memory_at = cg->outer_pids_at = NULL;
  cg->outer_memory = cg->outer_pids = UINT64_MAX;
}

/* Made less than SR_CG_GC_MIN_AGE_SEC ago (by its ctime). */
static bool young(const struct stat *st) {
  struct timespec now;

  /* CLOCK_REALTIME cannot fail with a valid clock and pointer. */
  (void)clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec - st->st_ctim.tv_sec < SR_CG_GC_MIN_AGE_SEC;
}

/* Nothing to collect at dfd/name, as one fstatat(2) shows without
 * opening it: gone, or a directory younger than SR_CG_GC_MIN_AGE_SEC
 * (sr_cg_gc_candidate checks the age again on the one it opens). */
bool sr_cg_gc_skip_at(int dfd, const char *name) {
  struct stat st;

  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT;
  return S_ISDIR(st.st_mode) && young(&st);
}

int sr_cg_gc_candidate(int fd) {
  struct stat st;

  /* The age first: a young leaf may be one a starting run has just made
   * and not yet locked, and every run collects once its skill has started
   * (and --gc at any time); a lock taken here then made that run fail its flock
   * (EWOULDBLOCK), as 64 runs started at once showed (bench/concurrent). */
  if (fstat(fd, &st) < 0)
    return -errno;
  if (young(&st))
    return 0;
  if (flock(fd, LOCK_EX | LOCK_NB) < 0)
    return errno == EWOULDBLOCK ? 0 : -errno; /* a live run holds it */
  return 1;
}

/* Removes the empty, unlocked, not-too-young leaf `name` below pfd. */
static int gc_one(int pfd, const char *name) {
  _cleanup_close_ int fd = -1;
  uint64_t populated = 1;
  int r;

  fd = sr_cg_open_dir_at(pfd, name);
  if (fd < 0)
    return fd == -ENOENT ? 0 : fd;
  r = sr_cg_gc_candidate(fd);
  if (r <= 0)
    return r;
  r = sr_cg_read_key_u64_at(fd, "cgroup.events", "populated", &populated);
  if (r < 0)
    return r;
  if (populated)
    return 0;
  /* rmdir refuses a populated cgroup (EBUSY), so a run that started in
   * it after our check is never disturbed. */
  if (unlinkat(pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT &&
      errno != EBUSY)
    return -errno;
  return 0;
}

/* One entry: skipped as sr_cg_gc_skip_at says, else collected; the first
 * error is kept in *ret. */
static void gc_entry(int sfd, const char *path, const char *name,
                     int (*one)(int, const char *), int *ret,
                     struct sr_error *err) {
  int r;

  if (sr_cg_gc_skip_at(sfd, name))
    return;
  r = one(sfd, name);
  if (r < 0 && *ret == 0)
    *ret = sr_error_layer(err, "cgroup", -r, "--gc: %s/%s", path, name);
}

/* sfd has no child directory, or only own (sr_cg_gc_dir).  A file system
 * that does not count children in the link count (1) is read. */
static bool nothing_below(int sfd, const char *own) {
  struct stat st;

  if (fstat(sfd, &st) < 0 || !S_ISDIR(st.st_mode))
    return false;
  if (st.st_nlink == 2)
    return true;
  return st.st_nlink == 3 && own &&
         fstatat(sfd, own, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR(st.st_mode);
}

int sr_cg_gc_dir(int sfd, const char *path, const char *own,
                 bool (*want)(const char *), int (*one)(int, const char *),
                 unsigned max, struct sr_error *err) {
  struct sr_name_sample pick = {0};
  struct dirent *de;
  DIR *d;
  int r, dfd, ret = 0;

  if (max && nothing_below(sfd, own))
    return 0;
  if (max && sr_name_sample_init(&pick, max) < 0)
    return sr_error_layer(err, "cgroup", ENOMEM, "--gc: %s", path);
  dfd = fcntl(sfd, F_DUPFD_CLOEXEC, 3);
  d = dfd >= 0 ? fdopendir(dfd) : NULL;
  if (!d) {
    r = errno;
    safe_close(dfd);
    sr_name_sample_done(&pick);
    return sr_error_layer(err, "cgroup", r, "--gc: %s", path);
  }
  /* The duplicate shares sfd's offset: from the start, every time. */
  rewinddir(d);
  while ((errno = 0, de = readdir(d))) {
    if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
      continue;
    if (!want(de->d_name))
      continue;
    if (max) {
      sr_name_sample_offer(&pick, de->d_name);
      continue;
    }
    gc_entry(sfd, path, de->d_name, one, &ret, err);
  }
  if (errno != 0 && ret == 0)
    ret = sr_error_layer(err, "cgroup", errno, "--gc: read %s", path);
  closedir(d);
  for (unsigned i = 0; max && i < sr_name_sample_count(&pick); i++)
    gc_entry(sfd, path, sr_name_sample_get(&pick, i), one, &ret, err);
  sr_name_sample_done(&pick);
  return ret;
}

static bool want_v2(const char *name) {
  return strncmp(name, LEAF_PREFIX, strlen(LEAF_PREFIX)) == 0 ||
         strcmp(name, SUPERVISOR_LEAF) == 0;
}

static int gc_v2(const char *parent_override, unsigned max, const char *own,
                 struct sr_error *err) {
  _cleanup_free_ char *reason = NULL;
  _cleanup_free_ char *path = NULL;
  _cleanup_close_ int pfd = -1;
  bool cpu;
  int r;

  r = find_parent(parent_override, false, 0, &pfd, &path, &cpu, &reason, NULL,
                  NULL, err);
  if (r < 0)
    return reason ? 0 : r; /* no cgroup subtree: nothing to collect */
  return sr_cg_gc_dir(pfd, path, own, want_v2, gc_one, max, err);
}

int sr_cgroup_gc(const char *parent_override, unsigned max, const char *own,
                 struct sr_error *err) {
  int r = gc_v2(parent_override, max, own, err), r1;

  /* An explicit parent is v2 and the only place to look. */
  if (parent_override)
    return r;
  r1 = sr_cg1_gc(max, own, r < 0 ? NULL : err);
  return r < 0 ? r : r1;
}

int sr_cgroup_gc_beside(const struct sr_cgroup *cg, const char *parent_override,
                        unsigned max, struct sr_error *err) {
  if (cg->active && cg->version == SR_CGV_1)
    return sr_cg1_gc_beside(cg, max, err);
  return sr_cgroup_gc(parent_override, max, sr_cgroup_leaf_name(cg), err);
}
