/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "fdutil.h"
#include "host.h"
#include "ns.h"
#include "policy.h"
#include "sha256.h"
#include "util.h"

void sr_host_init(struct sr_host *h) {
  memset(h, 0, sizeof(*h));
  h->uidpool_fd = -1;
  sr_cgroup_init(&h->cgroup);
}

/* The leaf is named "TENANT.EXECUTION.ROOT" (an id itself, as cgroupfs
 * and --gc need), ROOT the first 8 hex digits of the workspace root's
 * SHA-256: two workspace roots on one host (two workers, two test suites)
 * may run the same execution ids at once.  Ids may hold dots, so the
 * plain name is used only for a tenant without one: tenant "a" running
 * "b.c" and tenant "a.b" running "c" would otherwise share a leaf, and
 * the second to start would fail.  Any other pair, and one too long,
 * is named by the execution id's first 38 characters and a hash of both
 * (ids hold no ':').  A clash that remains only makes the second run fail
 * to create its leaf: closed, not open. */
#define SR_LEAF_BASE_MAX 55 /* 64 less ".ROOT" */
static int leaf_name(const char *root, const char *tenant, const char *exec,
                     char **out) {
  char hex[SR_SHA256_HEX_LEN + 1], root_hex[SR_SHA256_HEX_LEN + 1];
  _cleanup_free_ char *both = NULL;

  if (sr_sha256_hex(root, strlen(root), root_hex) < 0)
    return -EIO;
  if (!strchr(tenant, '.') &&
      strlen(tenant) + 1 + strlen(exec) <= SR_LEAF_BASE_MAX)
    return asprintf(out, "%s.%s.%.8s", tenant, exec, root_hex) < 0 ? -ENOMEM
                                                                   : 0;
  if (asprintf(&both, "%s:%s", tenant, exec) < 0)
    return -ENOMEM;
  if (sr_sha256_hex(both, strlen(both), hex) < 0)
    return -EIO;
  return asprintf(out, "%.38s.%.16s.%.8s", exec, hex, root_hex) < 0 ? -ENOMEM
                                                                    : 0;
}

/*
 * The uid pool's host ids must be nobody else's: a subordinate range in
 * /etc/subuid or /etc/subgid that covers them (useradd hands out 65536 a
 * user from 100000, so the 11th user's covers the default pool) lets
 * that user's rootless containers run as the very uid of a root run's
 * sandbox, and signal, trace or read it.  Fails closed with what to do;
 * a file that does not exist holds no range.
 */
#define SUBID_FILE_MAX (16 * 1024 * 1024)

/* A field of a subordinate range as shadow reads it (getulong: strtoul
 * with base 0, so 0x hex, 0 octal, blanks and a sign too, up to 2^64-1):
 * every range newuidmap honours must be seen here. */
static bool subid_number(const char *s, uint64_t *out) {
  unsigned long long v;
  char *end;

  if (!*s)
    return false;
  errno = 0;
  v = strtoull(s, &end, 0);
  if (*end || errno == ERANGE)
    return false;
  *out = v;
  return true;
}

static int pool_clear_of_subids(const char *file, unsigned base, unsigned size,
                                struct sr_error *err) {
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  unsigned lineno = 0;
  int r = sr_read_file_at(AT_FDCWD, file, SUBID_FILE_MAX, &buf, &len);

  if (r == -ENOENT)
    return 0;
  if (r < 0)
    return sr_error_layer(err, "uid-pool", -r, "cannot read %s", file);
  /* Line by line over the whole file: a NUL ends a line's text (as for
   * shadow's fgets), not the file.  The first three fields are a range,
   * more are ignored, as shadow does. */
  for (char *line = buf, *nl; line < buf + len; line = nl + 1) {
    char *start, *count, *end;
    uint64_t first, n, last;

    nl = memchr(line, '\n', (size_t)(buf + len - line));
    if (!nl)
      nl = buf + len; /* the last line, without its newline */
    *nl = '\0';
    lineno++;
    start = strchr(line, ':');
    count = start ? strchr(start + 1, ':') : NULL;
    if (!count || line[0] == '#' || start == line)
      continue;
    *start++ = '\0';
    *count++ = '\0';
    end = strchr(count, ':');
    if (end)
      *end = '\0';
    if (!subid_number(start, &first) || !subid_number(count, &n) || n == 0)
      continue; /* not a range: shadow's tools ignore it too */
    last = n - 1 > UINT64_MAX - first ? UINT64_MAX : first + n - 1;
    if (first <= (uint64_t)base + size - 1 && base <= last)
      return sr_error_layer(
          err, "uid-pool", 0,
          "the uid pool %u-%u overlaps %s's subordinate ids %" PRIu64
          "-%" PRIu64 " (%s:%u): give skillrun.conf a uid-pool no user, group "
          "or subordinate range uses",
          base, base + size - 1, line, first, last, file, lineno);
  }
  return 0;
}

/* Whether host id `id` is a user's or a group's (NSS): such a slot is
 * never taken, as systemd skips them for DynamicUser=.  Asked once per
 * id and run (known[] remembers: 0 not yet, 1 free, 2 taken), not on
 * every pass of the wait for a free slot: with LDAP or SSSD each answer
 * may be a round trip, and a pool has up to 65536 ids. */
static bool id_in_use(unsigned id, unsigned char *known) {
  if (!*known)
    *known = getpwuid((uid_t)id) || getgrgid((gid_t)id) ? 2 : 1;
  return *known == 2;
}

/* Whether the super options of the proc mount `proc` is (a line of
 * /proc/self/mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - TYPE
 * SOURCE SUPER") hide processes: hidepid=1, 2, noaccess or invisible
 * (1), but not from its gid= (*gid, root's group when not given, as the
 * initial user namespace numbers it); hidepid=ptraceable (2), from its
 * gid= too (proc(5): has_pid_permissions tests it before the gid);
 * hidepid=0 and off do not (0).  Its mount is found by its id
 * (statx, Linux 5.8+), else as the last proc mounted on /proc.  -errno
 * when it cannot tell. */
static int proc_hides_pids(int proc, gid_t *gid) {
  _cleanup_free_ char *info = NULL;
  struct statx stx;
  const char *line, *found = NULL;
  bool by_id;
  int hides = 0;

  if (statx(proc, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0)
    stx.stx_mask = 0;
  by_id = stx.stx_mask & STATX_MNT_ID;
  if (sr_read_file_at(proc, "self/mountinfo", 16 << 20, &info, NULL) < 0)
    return -EIO;
  for (line = info; line && *line;
       line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    const char *sep = strstr(line, " - ");
    const char *eol = strchrnul(line, '\n');
    char point[8];

    if (!sep || sep > eol || strncmp(sep, " - proc ", 8) != 0)
      continue;
    if (by_id) {
      if (strtoull(line, NULL, 10) == stx.stx_mnt_id)
        found = sep;
    } else if (sscanf(line, "%*s %*s %*s %*s %7s", point) == 1 &&
               strcmp(point, "/proc") == 0) {
      found = sep;
    }
  }
  if (!found)
    return -ENOENT;
  *gid = 0;
  /* " - proc SOURCE SUPER": the third field on. */
  found = strchr(found + 8, ' ');
  if (!found)
    return -EIO;
  for (const char *o = found + 1; *o && *o != '\n';) {
    size_t len = strcspn(o, ",\n");

    if (strncmp(o, "hidepid=", 8) == 0 &&
        ((len == 18 && strncmp(o + 8, "ptraceable", 10) == 0) ||
         (len == 9 && o[8] == '4')))
      hides = 2;
    else if (strncmp(o, "hidepid=", 8) == 0 && !(len == 9 && o[8] == '0') &&
             !(len == 11 && strncmp(o + 8, "off", 3) == 0))
      hides = 1;
    else if (strncmp(o, "gid=", 4) == 0)
      *gid = (gid_t)strtoul(o + 4, NULL, 10);
    o += len;
    if (*o == ',')
      o++;
  }
  return hides;
}

/* Whether gid is the process's file-system gid (its effective one:
 * skillrun does not set it apart) or one of its groups: in_group_p. */
static bool in_group(gid_t gid) {
  _cleanup_free_ gid_t *groups = NULL;
  int n;

  if (getegid() == gid)
    return true;
  n = getgroups(0, NULL);
  if (n <= 0 || !(groups = calloc((size_t)n, sizeof(*groups))))
    return false;
  n = getgroups(n, groups);
  for (int i = 0; i < n; i++)
    if (groups[i] == gid)
      return true;
  return false;
}

/* Whether this /proc lists every process of skillrun's pid namespace to
 * it: it is that namespace's (its "self" is this process), and hides none
 * (no hidepid) or not from this process (a member of its gid=, or
 * CAP_SYS_PTRACE: proc(5)).  Root without CAP_SYS_PTRACE under
 * "hidepid=2,gid=proc", or root with another group under systemd's
 * ProtectProc=invisible, or under hidepid=ptraceable (ProtectProc=
 * ptraceable) whatever its groups, or a /proc of another pid namespace,
 * lists fewer.  The gid= is read as the initial user namespace numbers
 * it, this process's groups as its own does: in another user namespace
 * they are not compared.  1 when it does, 0 when it may not, -errno. */
static int proc_lists_all(int proc) {
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct caps[_LINUX_CAPABILITY_U32S_3];
  char self[24], link[24];
  gid_t gid;
  ssize_t n;
  int r;

  n = readlinkat(proc, "self", link, sizeof(link) - 1);
  if (n < 0)
    return errno == ENOENT ? 0 : -errno;
  link[n] = '\0';
  (void)snprintf(self, sizeof(self), "%d", (int)getpid());
  if (strcmp(self, link) != 0)
    return 0;
  r = proc_hides_pids(proc, &gid);
  if (r <= 0)
    return r < 0 ? r : 1;
  if (r == 1 && sr_userns_initial() && in_group(gid))
    return 1;
  if (syscall(SYS_capget, &hdr, caps) < 0)
    return -errno;
  return !!(caps[CAP_SYS_PTRACE / 32].effective &
            (1U << (CAP_SYS_PTRACE % 32)));
}

/* Whether a live process on the host (the pid namespace skillrun runs
 * in; zombies aside) has host id `id` among its uids or gids: 0 when
 * none, 1 when one does or when /proc cannot tell (it hides processes,
 * or one's status cannot be read: the slot counts as taken, closed, not
 * open), -errno when /proc cannot be read. */
static int id_has_processes(unsigned id) {
  _cleanup_(sr_closedirp) DIR *proc = opendir("/proc");
  struct dirent *de;
  int r;

  if (!proc)
    return -errno;
  r = proc_lists_all(dirfd(proc));
  if (r <= 0)
    return r < 0 ? r : 1;
  while ((errno = 0, de = readdir(proc))) {
    char path[sizeof(de->d_name) + 8], buf[4096], *p;
    _cleanup_close_ int fd = -1;
    ssize_t n;
    bool live = true, has = false;

    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    (void)snprintf(path, sizeof(path), "%s/status", de->d_name);
    fd = openat(dirfd(proc), path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ESRCH))
      continue; /* gone meanwhile */
    if (fd < 0)
      return 1; /* hidden (hidepid=noaccess, a security module) */
    n = read(fd, buf, sizeof(buf) - 1);
    if (n == 0 || (n < 0 && errno == ESRCH))
      continue;
    if (n < 0)
      return 1;
    buf[n] = '\0';
    /* "State:\tZ (zombie)", then "Uid:" and "Gid:", each with the real,
     * effective, saved and file-system ids. */
    p = strstr(buf, "\nState:\t");
    if (p && (p[8] == 'Z' || p[8] == 'X'))
      live = false;
    for (int k = 0; k < 2 && live && !has; k++) {
      p = strstr(buf, k == 0 ? "\nUid:" : "\nGid:");
      if (!p)
        continue;
      p += 5;
      for (int f = 0; f < 4; f++) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
          break;
        if (v == id)
          has = true;
        p = end;
      }
    }
    if (has)
      return 1;
  }
  return errno > 0 ? -errno : 0;
}

/* A slot whose lock was just taken: 0 when it is the run's now (marked
 * as in use), 1 when the last run under its id may still be alive (the
 * slot counts as taken: the next pass asks again), -errno.  The lock is
 * the supervisor's only, and a supervisor killed (SIGKILL) drops it as it
 * dies, a moment before its sandbox's init and proxy get their death
 * signal and init's pid namespace is killed in turn (longer for a task in
 * uninterruptible sleep).  So a run marks its slot's file (its pid, not
 * empty) and empties it once its sandbox is gone (sr_host_done); a file
 * found not empty is a run that ended without its clean-up, and its slot
 * is free only once no process runs as the id: /proc is read then, and
 * only then (a launch does not pay for the scan). */
static int slot_take(int fd, unsigned id) {
  struct stat st;
  char mark[24];
  int n, r;

  if (fstat(fd, &st) < 0)
    return -errno;
  /* Root's own file, made here: not a FIFO, nor a hard link to another
   * file of root's (left from a time the directory was not root's). */
  if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_nlink != 1)
    return -EPERM;
  if (st.st_size > 0) {
    r = id_has_processes(id);
    if (r != 0)
      return r;
  }
  /* The pid, for whoever looks; a full file system (a tmpfs /run has no
   * page for it) still takes a size without data: the mark is that the
   * file is not empty.  Stale digits of a longer pid are cut off. */
  n = snprintf(mark, sizeof(mark), "%d\n", (int)getpid());
  errno = 0;
  if (pwrite(fd, mark, (size_t)n, 0) == n) {
    if (st.st_size > n)
      (void)!ftruncate(fd, n);
    return 0;
  }
  if (errno != 0 && errno != ENOSPC && errno != EDQUOT)
    return -errno;
  if (ftruncate(fd, st.st_size > 0 ? st.st_size : 1) < 0)
    return -errno;
  return 0;
}

/* Whether a directory of the pool (st, named path) is root's and
 * writable by nobody else: 0, or -EPERM with *fault saying why. */
static int pool_dir_fault(const struct stat *st, const char *path,
                          struct sr_dir_fault *fault) {
  memset(fault, 0, sizeof(*fault));
  if (!S_ISDIR(st->st_mode) || st->st_uid != 0)
    fault->why = SR_DIR_OWNER;
  else if (st->st_mode & S_IWOTH)
    fault->why = SR_DIR_OTHERS;
  else if (st->st_mode & S_IWGRP)
    fault->why = SR_DIR_GROUP;
  else
    return 0;
  fault->uid = st->st_uid;
  fault->mode = st->st_mode;
  (void)snprintf(fault->path, sizeof(fault->path), "%s", path);
  return -EPERM;
}

/* The caller's own ids as an ordinary user; as root a free uid-pool slot,
 * waiting a bounded time when all are taken. */
static int pick_host_ids(struct sr_host *h, const struct sr_policy *p,
                         struct sr_error *err) {
  const unsigned base = p->uid_pool_base;
  const unsigned size = p->uid_pool_size;
  _cleanup_close_ int dir = -1;
  _cleanup_free_ unsigned char *known = NULL;
  struct sr_dir_fault fault;
  struct stat st, up;
  char why[PATH_MAX + 256];
  uint64_t deadline;
  unsigned start;
  int r;

  /* Root of a user namespace that does not map the uid pool runs as an
   * ordinary caller, its sandbox user mapped to its own id: not when that
   * id is root's outside the namespace as well, whose files the skill
   * would own. */
  if (!sr_root_mode() && geteuid() == 0 && sr_userns_root_outside_too())
    return sr_error_layer(err, "uid-pool", 0,
                          "uid 0 of this user namespace is uid 0 outside it, "
                          "and the namespace does not map the uid pool "
                          "%u-%u: map those ids (uid_map and gid_map), or "
                          "run skillrun outside the user namespace",
                          base, base + size - 1);
  if (!sr_root_mode()) {
    h->uid = getuid();
    h->gid = getgid();
    return 0;
  }
  /* Made by the first run as root after each boot (/run is a tmpfs). */
  dir = open(SR_UID_POOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0 && errno == ENOENT) {
    if (mkdir("/run/skillrun", 0700) < 0 && errno != EEXIST)
      return sr_error_layer(err, "uid-pool", errno,
                            "cannot create /run/skillrun");
    if (mkdir(SR_UID_POOL_DIR, 0700) < 0 && errno != EEXIST)
      return sr_error_layer(err, "uid-pool", errno, "cannot create %s",
                            SR_UID_POOL_DIR);
    dir =
        open(SR_UID_POOL_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (dir < 0)
    return sr_error_layer(err, "uid-pool", errno, "cannot open %s",
                          SR_UID_POOL_DIR);
  /* Root's alone: a pool directory another user made before root's first
   * run after a boot (or can write) lets them unlink a live run's slot
   * file, and the next run shares its ids; hold every slot's lock; or plant
   * a FIFO or a hard link as a slot file.  The two directories skillrun
   * makes are checked, the pool's by descriptor, /run/skillrun by name,
   * which nobody but root can change while it is root's and /run root's
   * (the system's, as /: two system calls, not sr_check_dir_chain's
   * fourteen, on every root launch). */
  if (fstatat(AT_FDCWD, "/run/skillrun", &up, AT_SYMLINK_NOFOLLOW) < 0 ||
      fstat(dir, &st) < 0)
    return sr_error_layer(err, "uid-pool", errno, "cannot check %s",
                          SR_UID_POOL_DIR);
  r = pool_dir_fault(&st, SR_UID_POOL_DIR, &fault);
  if (r == 0)
    r = pool_dir_fault(&up, "/run/skillrun", &fault);
  if (r < 0)
    return sr_error_layer(err, "uid-pool", 0,
                          "the uid pool's slot file %s/%u %s", SR_UID_POOL_DIR,
                          base, sr_dir_fault_why(&fault, why, sizeof(why)));
  r = pool_clear_of_subids("/etc/subuid", base, size, err);
  if (r >= 0)
    r = pool_clear_of_subids("/etc/subgid", base, size, err);
  if (r < 0)
    return r;
  known = calloc(size, 1);
  if (!known)
    return sr_error_layer(err, "uid-pool", ENOMEM, "uid pool");
  /* Start at a pid-derived slot so concurrent runs rarely contend. */
  start = (unsigned)getpid() % size;
  deadline = sr_now_mono_ms() + SR_UID_POOL_WAIT_MS;
  for (;;) {
    unsigned in_use = 0;

    for (unsigned i = 0; i < size; i++) {
      unsigned slot = (start + i) % size, id = base + slot;
      char name[16];
      int fd;

      if (id_in_use(id, &known[slot])) {
        in_use++;
        continue;
      }
      snprintf(name, sizeof(name), "%u", id);
      fd = openat(dir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return sr_error_layer(err, "uid-pool", errno, "cannot open %s/%s",
                              SR_UID_POOL_DIR, name);
      if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        r = slot_take(fd, id);
        if (r != 0) {
          safe_close(fd);
          if (r < 0)
            return sr_error_layer(err, "uid-pool", -r,
                                  "cannot check or mark uid-pool slot %s/%s",
                                  SR_UID_POOL_DIR, name);
          continue;
        }
        h->uidpool_fd = fd;
        h->uid = id;
        h->gid = id;
        return 0;
      }
      safe_close(fd);
    }
    if (in_use == size)
      return sr_error_layer(err, "uid-pool", 0,
                            "every id of the uid pool %u-%u is a user's or "
                            "a group's: give skillrun.conf a uid-pool no "
                            "user, group or subordinate range uses",
                            base, base + size - 1);
    if (sr_now_mono_ms() >= deadline)
      return sr_error_layer(err, "uid-pool", EAGAIN,
                            "all %u uid-pool slots (%u-%u) are in use for "
                            "%d s; try again when runs have finished",
                            size, base, base + size - 1,
                            SR_UID_POOL_WAIT_MS / 1000);
    /* A cancellation ends the wait (skillrun(1) EXIT STATUS): the slots
     * are tried again every 100 ms, a pending signal looked for every
     * 10 ms.  It used to be noticed only once a slot was free, up to the
     * whole wait later, and the run ended as an error (125). */
    for (int i = 0; i < 10; i++) {
      if (sr_cancel_pending())
        return sr_error_set(err, SR_EXIT_FAILED, ECANCELED, "cancelled",
                            "cancelled while waiting for a uid-pool slot");
      usleep(10 * 1000);
    }
  }
}

/* Memory, CPU-seconds and pids: by the run's cgroup, or without one by the
 * supervisor's sampler of the tree (sampler.h) and RLIMIT_NPROC, which
 * counts the sandbox user's tasks in its own user namespace (Linux 5.14+),
 * so the kernel itself holds the pids limit for the whole tree. */
static void whole_run_limits(const struct sr_cgroup *cg,
                             struct sr_enforcement *enf) {
  enum sr_enforcer by = !cg->active               ? SR_ENF_SUPERVISOR
                        : cg->version == SR_CGV_1 ? SR_ENF_CGROUP1
                                                  : SR_ENF_CGROUP2;

  enf->by[SR_LIM_MEMORY] = by;
  enf->by[SR_LIM_CPU_SECONDS] = by;
  enf->by[SR_LIM_PIDS] = cg->active ? by : SR_ENF_RLIMIT;
}

int sr_host_acquire(struct sr_host *h, const struct sr_policy *p,
                    const char *cgroup_parent, const char *root,
                    const char *tenant, const char *execution,
                    struct sr_enforcement *enf, char **fallback_why,
                    struct sr_error *err) {
  _cleanup_free_ char *why = NULL;
  _cleanup_free_ char *name = NULL;
  const char *parent = cgroup_parent;
  int r;

  *fallback_why = NULL;
  memset(enf, 0, sizeof(*enf));
  r = pick_host_ids(h, p, err);
  if (r < 0)
    return r;
  if (p->cgroup != SR_CGROUP_OFF) {
    /* Leaves of runs whose supervisor was killed are removed by this run
     * as it launches (sr_host_gc), not on the way to the clone. */
    h->gc_due = true;
    h->gc_parent = cgroup_parent;
    r = leaf_name(root, tenant, execution, &name);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "cgroup", "cgroup");
    /* An ordinary caller whose cgroup v2 is not delegated gets a scope
     * from its systemd user manager, the leaf below it (cgroup.c).
     * `strict` refuses every fallback (skillrun.profile(5)). */
    r = sr_cgroup_setup(&h->cgroup, p,
                        p->cgroup == SR_CGROUP_REQUIRE || p->strict, parent,
                        name, &why, err);
    if (r < 0)
      return r;
  } else if (!(h->cgroup.scope.why =
                   strdup("not asked: cgroup off in the policy"))) {
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "cgroup", "cgroup");
  }
  if (!h->cgroup.active) {
    /* `require` means kernel limits for the whole tree: cgroup v2 or v1. */
    if (p->cgroup == SR_CGROUP_REQUIRE)
      return sr_error_layer(err, "cgroup", 0,
                            "no usable cgroup (%s) and the profile requires "
                            "one (cgroup require)",
                            why ? why : "unavailable");
    *fallback_why =
        strdup(p->cgroup == SR_CGROUP_OFF ? "cgroup off in the profile"
                                          : (why ? why : "unavailable"));
    if (!*fallback_why)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "cgroup", "cgroup");
  }
  whole_run_limits(&h->cgroup, enf);
  enf->by[SR_LIM_TIMEOUT] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_LOG_CAP] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_KILL_GRACE] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_INPUTS_SIZE] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_INPUTS_MAX_SIZE] = SR_ENF_SUPERVISOR;
  enf->by[SR_LIM_TMP_SIZE] = SR_ENF_TMPFS;
  enf->by[SR_LIM_SCRATCH_SIZE] = SR_ENF_TMPFS;
  enf->by[SR_LIM_OUTPUTS_SIZE] = SR_ENF_TMPFS;
  enf->by[SR_LIM_OUTPUTS_FILES] = SR_ENF_TMPFS;
  enf->by[SR_LIM_NOFILE] = SR_ENF_RLIMIT;
  return 0;
}

void sr_host_gc(struct sr_host *h) {
  if (!h->gc_due)
    return;
  h->gc_due = false;
  /* The run's own leaf, while it lives, is not a reason to read a
   * directory (sr_cg_gc_dir). */
  (void)sr_cgroup_gc_beside(&h->cgroup, h->gc_parent, SR_CGROUP_GC_LAUNCH_MAX,
                            NULL);
}

void sr_host_done(struct sr_host *h) {
  /* A leaf that cannot be removed now is left to --gc; the cgroup record
   * is released either way. */
  sr_cgroup_done(&h->cgroup);
  /* A run that was not launched still collects the others'. */
  sr_host_gc(h);
  /* The sandbox is gone (sr_supervisor_done reaped init and the proxy):
   * the slot's mark goes (slot_take), then closing the lock frees it. */
  if (h->uidpool_fd >= 0)
    (void)!ftruncate(h->uidpool_fd, 0);
  h->uidpool_fd = safe_close(h->uidpool_fd);
}
