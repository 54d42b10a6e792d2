/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "audit.h"
#include "error.h"
#include "fdutil.h"
#include "filetype.h"
#include "magic.h"
#include "metafile.h"
#include "metrics.h"
#include "paths.h"
#include "reclaim.h"
#include "sha256.h"
#include "trust.h"
#include "util.h"
#include "workspace.h"

#define OPEN_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
/* On a run's audit.jsonl (its marker): the tmpfs base its staging
 * directory is in, when it is on one. */
#define SR_STAGING_XATTR "user.skillrun.staging"
/* On a dead run's marker: a gc closed its ledger but could not count the
 * run, which the next gc then does (as if it had closed it itself). */
#define SR_UNCOUNTED_XATTR "user.skillrun.uncounted"
#define HARVEST_MAX_DEPTH 32
/* The longest path below outputs/ harvested: RUN_DIR/outputs/PATH then
 * fits PATH_MAX (4096) for a run directory whose path is under 1 KiB, so
 * the caller can open what it is told was committed by its path (cp -a,
 * a script); 32 levels of 255-byte names would otherwise reach 8 KiB. */
#define HARVEST_MAX_PATH 3072

int sr_workspace_default_root(char **out, struct sr_error *err) {
  const char *base;
  char *s = NULL;
  int r;

  if (sr_root_mode()) {
    s = strdup(SR_LOCALSTATEDIR "/lib/skillrun/runs");
  } else if ((base = getenv("XDG_STATE_HOME")) && base[0] == '/') {
    r = asprintf(&s, "%s/skillrun/runs", base);
    if (r < 0)
      s = NULL;
  } else if ((base = getenv("HOME")) && base[0] == '/' &&
             access(base, W_OK) == 0) {
    r = asprintf(&s, "%s/.local/state/skillrun/runs", base);
    if (r < 0)
      s = NULL;
  } else {
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "no usable workspace root: HOME is not writable; "
                        "pass --workspace-root DIR");
  }
  if (!s)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  *out = s;
  return 0;
}

/*
 * Whether the directory dirfd and those above it are root's or the
 * caller's, and the caller's writable by nobody else (sticky ones and the
 * owner's private group allowed; sr_check_dir_chain): the workspace root
 * in another user's directory, or in one of the caller's that others may
 * write, is theirs to rename and replace, and the run_dir its runs'
 * records name with it, as a tenant directory of theirs would be
 * (skillrun(1) SECURITY).  The mode of root's directories is the
 * administrator's choice: a Kubernetes emptyDir, the kubelet's, is 0777
 * without the sticky bit, for whichever uid the pod runs as.  An owner a
 * user namespace does not map is taken as root's ("/" where only the
 * caller is mapped).
 */
static int check_dirs_above(int dirfd, const char *root, struct sr_error *err) {
  /* dirfd: the directory the root is (or will be made) in, or one above */
  struct sr_dir_fault fault;
  char why[PATH_MAX + 256];
  int r;

  r = sr_check_dir_chain(dirfd, geteuid(), sr_dir_group_is_owners,
                         SR_CHAIN_STICKY_HERE | SR_CHAIN_UNMAPPED_AS_ROOT |
                             SR_CHAIN_ROOTS_ANY_MODE,
                         &fault);
  if (r == -EPERM)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "workspace root %s %s", root,
                        sr_dir_fault_why(&fault, why, sizeof(why)));
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot check the directories above workspace root %s",
                        root);
  return 0;
}

/* Before a missing workspace root is made (mkdir -p): the deepest of its
 * directories there is must be one nobody else may rename things in, or
 * what is made there would be theirs to move. */
static int check_where_root_is_made(const char *root, struct sr_error *err) {
  _cleanup_free_ char *path = strdup(root);
  _cleanup_close_ int fd = -1;
  char *slash;

  if (!path)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  for (;;) {
    fd = sr_open_dir_path(AT_FDCWD, path, false, 0, NULL);
    /* Opened, or an error the walk that makes the root says better. */
    if (fd != -ENOENT)
      break;
    slash = strrchr(path, '/');
    if (!slash)
      return 0;
    slash[slash == path] = '\0';
  }
  if (fd < 0)
    return 0;
  if (!strcmp(path, root))
    return 0; /* there already: its parents are checked once it is open */
  return check_dirs_above(fd, root, err);
}

/*
 * The workspace root, opened component by component from "/" (mkdir -p,
 * for the administrator's or the caller's path: a missing directory is
 * made, mode 0711, when `create`): an fd, or the error.  A symbolic link
 * on the way is followed only when it belongs to the caller or to root
 * (sr_open_dir_path): one of another user's (planted in a directory of
 * theirs, or in a shared one they may write) would send the runs, and the
 * directories made for them, into whatever directory of the caller's or
 * root's it names, and that directory passes every ownership check
 * (skillrun(1) SECURITY).
 */
int sr_workspace_open_root(const char *root, bool create,
                           struct sr_error *err) {
  _cleanup_close_ int cur = -1;
  struct sr_foreign_link fl;
  int r;

  if (create) {
    r = check_where_root_is_made(root, err);
    if (r < 0)
      return r;
  }
  cur = sr_open_dir_path(AT_FDCWD, root, create, 0711, &fl);
  if (cur == -SR_EFOREIGNLINK) {
    char why[PATH_MAX + 160];

    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "workspace root %s: %s", root,
                        sr_foreign_link_why(&fl, why, sizeof(why)));
  }
  r = cur < 0 ? cur : openat(cur, ".", OPEN_DIR_FLAGS);
  if (r < 0 && cur >= 0)
    r = -errno;
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot %s workspace root %s",
                        create ? "create" : "open", root);
  return r;
}

static int open_or_make_dir_at(int dirfd, const char *name, mode_t mode) {
  bool made = false;
  int fd;

  /* Usually there already: opened first, made only when missing. */
  fd = openat(dirfd, name, OPEN_DIR_FLAGS);
  if (fd < 0 && errno == ENOENT) {
    made = true;
    if (mkdirat(dirfd, name, mode) < 0) {
      if (errno != EEXIST)
        return -errno;
      made = false; /* another run made it meanwhile */
    }
    fd = openat(dirfd, name, OPEN_DIR_FLAGS);
  }
  if (fd < 0)
    return -errno;
  /* mkdirat honours the umask (a root caller's 077 would do no harm here,
   * but the mode is part of the contract); an existing directory keeps its
   * own, which the caller checks. */
  if (made && fchmod(fd, mode) < 0) {
    int r = -errno;
    safe_close(fd);
    return r;
  }
  return fd;
}

/*
 * The doas(1) rule for a directory of the workspace, on the opened fd: it
 * belongs to the caller (or to root) and nobody else may write it, so no
 * other user can rename, replace or plant anything in it.  Its group may
 * write it when that group is its owner's private one, with no access ACL
 * granting more (Debian's umask 002, as for a profile:
 * sr_dir_group_is_owners).  The workspace root may be shared (writable by
 * others) only with the sticky bit, as /tmp is: then nobody can rename or
 * remove what another user made there.
 */
static int check_owned_dir(int fd, const char *path, const char *what,
                           bool sticky_ok, struct sr_error *err) {
  uid_t me = geteuid();
  struct stat st;

  if (fstat(fd, &st) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace", "%s %s", what,
                        path);
  /* Where the caller is the overflow uid of its user namespace, another
   * user's directory shows as the caller's (sr_fd_owner_is_me). */
  if (sr_fd_owner_unmapped(fd, &st))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "%s %s " SR_UNMAPPED_OWNER_FMT
                        " (use a directory of your own as mapped here)",
                        what, path, (unsigned)st.st_uid);
  if (st.st_uid != me && st.st_uid != 0) {
    const struct passwd *pw = getpwuid(st.st_uid);
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "%s %s belongs to uid %u%s%s%s, not to you (uid %u) "
                        "or root: refusing to run in a directory another user "
                        "controls",
                        what, path, (unsigned)st.st_uid, pw ? " (" : "",
                        pw ? pw->pw_name : "", pw ? ")" : "", (unsigned)me);
  }
  if (((st.st_mode & S_IWOTH) ||
       ((st.st_mode & S_IWGRP) && !sr_dir_group_is_owners(fd, &st))) &&
      !(sticky_ok && (st.st_mode & S_ISVTX)))
    return sr_error_set(
        err, SR_EXIT_FAILED, 0, "workspace",
        "%s %s is writable by %s (mode %04o)%s: refusing to "
        "run in a directory others can change",
        what, path, (st.st_mode & S_IWOTH) ? "others" : "its group",
        (unsigned)(st.st_mode & 07777),
        sticky_ok ? "; a shared root needs the sticky bit" : "");
  return 0;
}

/* The records name a root's run directories by path (execution_started's
 * run_dir, metadata.json): a byte of it that is not UTF-8 would show there
 * as U+FFFD, a path that names nothing, or another directory. */
static int check_root_text(const char *root, struct sr_error *err) {
  if (sr_utf8_valid(root, strlen(root)))
    return 0;
  return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                      "workspace root %s is not UTF-8 text, and the records "
                      "name run directories by path (use one that is)",
                      root);
}

/* The directories above the open workspace root (check_dirs_above). */
static int check_root_parents(int root_fd, const char *root,
                              struct sr_error *err) {
  _cleanup_close_ int up =
      openat(root_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

  if (up < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot open the directory above workspace root %s",
                        root);
  return check_dirs_above(up, root, err);
}

bool sr_workspace_root_usable(int root_fd) {
  struct sr_error ignored = {0};
  char link[64], path[PATH_MAX];
  ssize_t n;

  /* Its path as resolved, where /proc tells it (check_root_text). */
  snprintf(link, sizeof(link), "/proc/self/fd/%d", root_fd);
  n = readlink(link, path, sizeof(path) - 1);
  if (n > 0 && !sr_utf8_valid(path, (size_t)n))
    return false;
  return check_owned_dir(root_fd, "", "workspace root", true, &ignored) == 0 &&
         check_root_parents(root_fd, "", &ignored) == 0;
}

/* A new record file of the run (audit.jsonl, the logs), mode 0600, the
 * caller's alone, with the extra open flags: an fd, or -errno. */
static int create_record_file(int dirfd, const char *name, int flags) {
  int fd = openat(dirfd, name,
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags,
                  0600);
  return fd < 0 ? -errno : fd;
}

static int make_dir_at(int dirfd, const char *name, mode_t mode) {
  int fd;

  if (mkdirat(dirfd, name, mode) < 0)
    return -errno;
  /* mkdirat honours the umask; the modes here are part of the contract. */
  fd = openat(dirfd, name, OPEN_DIR_FLAGS);
  if (fd < 0 || fchmod(fd, mode) < 0) {
    int r = -errno;
    safe_close(fd);
    /* Not left behind: the run goes on without it (a tmpfs staging base
     * that fails falls back to the next, or to the run directory) and
     * would never remove it.  Empty, as just made. */
    (void)unlinkat(dirfd, name, AT_REMOVEDIR);
    return r;
  }
  return fd;
}

void sr_workspace_init(struct sr_workspace *ws) {
  memset(ws, 0, sizeof(*ws));
  ws->root_fd = ws->tenant_fd = ws->run_fd = -1;
  ws->active_fd = ws->staging_fd = ws->bundle_fd = ws->inputs_fd = -1;
  ws->staging_parent_fd = ws->logs_fd = ws->outputs_fd = -1;
  ws->metadata_fd = -1;
}

static int path_join(char **out, const char *a, const char *b) {
  if (asprintf(out, "%s/%s", a, b) < 0) {
    *out = NULL;
    return -ENOMEM;
  }
  return 0;
}

/* Whether the existing run directory tenant_fd/execution holds the
 * metadata.json of a run gc closed as abandoned (only for the message of
 * the refusal: the directory's owner may have written anything there). */
static bool was_abandoned(int tenant_fd, const char *execution) {
  _cleanup_close_ int run = -1, fd = -1;
  _cleanup_free_ char *buf = NULL;
  _cleanup_(json_decrefp) json_t *meta = NULL;
  struct stat st;
  size_t len = 0;

  run = openat(tenant_fd, execution, OPEN_DIR_FLAGS);
  if (run >= 0)
    fd = openat(run, "metadata.json",
                O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
      sr_read_fd(fd, 1u << 20, &buf, &len) < 0)
    return false;
  meta = json_loadb(buf, len, 0, NULL);
  return meta && !strcmp(json_string_value(json_object_get(
                             json_object_get(meta, "result"), "status"))
                             ?: "",
                         "abandoned");
}

/*
 * The run's audit.jsonl, locked, is also its marker (.active/TENANT:EXEC):
 * one file with two links.  A marker of its own would cost an inode to
 * allocate and to evict again in every run.  It is made unnamed
 * (O_TMPFILE), locked, and only then linked into .active, so gc never
 * sees an unlocked marker of a live run.  -EEXIST: a marker of that name
 * exists (another run of the id).  Where the file system has no
 * O_TMPFILE, the marker comes after the run directory (link_ledger).
 */
static int make_marker(struct sr_workspace *ws, int active_dir, char **name,
                       struct sr_error *err) {
  char proc[64];
  int fd;

  fd = openat(active_dir, ".", O_TMPFILE | O_WRONLY | O_APPEND | O_CLOEXEC,
              0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
    return 0;
  if (fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot create the run marker");
  ws->active_fd = fd;
  if (flock(fd, LOCK_EX | LOCK_NB) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot lock the run marker");
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  if (linkat(fd, "", active_dir, *name, AT_EMPTY_PATH) == 0 ||
      (errno != EEXIST &&
       linkat(AT_FDCWD, proc, active_dir, *name, AT_SYMLINK_FOLLOW) == 0)) {
    ws->active_name = TAKE_PTR(*name); /* ours: sr_workspace_done removes it */
    return 0;
  }
  if (errno == EEXIST)
    return -EEXIST;
  /* No /proc to link it through: the marker comes after the directory. */
  ws->active_fd = safe_close(ws->active_fd);
  return 0;
}

/* The id is taken: it ran (and perhaps was abandoned), or a run of it is
 * starting now.  A refusal (123). */
static int refuse_taken(int tenant_fd, const char *tenant,
                        const char *execution, struct sr_error *err) {
  struct stat st;

  if (was_abandoned(tenant_fd, execution))
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "execution_abandoned",
                        "execution id '%s' of tenant '%s' was abandoned "
                        "(its supervisor died, and its record was closed "
                        "as such); an execution id can run only once",
                        execution, tenant);
  if (fstatat(tenant_fd, execution, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "execution_replayed",
                        "execution id '%s' of tenant '%s' is being started "
                        "by another skillrun (or one was killed while it "
                        "started: skillrun --gc cleans that up); an "
                        "execution id can run only once",
                        execution, tenant);
  return sr_error_set(err, SR_EXIT_REFUSED, 0, "execution_replayed",
                      "execution id '%s' of tenant '%s' has already run; "
                      "an execution id can run only once",
                      execution, tenant);
}

/* The run directory just made: its caller's alone (skillrun(1) SECURITY). */
static int open_run_dir(struct sr_workspace *ws, const char *resolved,
                        const char *tenant, const char *execution,
                        struct sr_error *err) {
  ws->run_fd = openat(ws->tenant_fd, execution, OPEN_DIR_FLAGS);
  if (ws->run_fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot open run directory");
  if (fchmod(ws->run_fd, 0700) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot set the run directory's mode");
  if (asprintf(&ws->run_path, "%s/%s/%s", resolved, tenant, execution) < 0) {
    ws->run_path = NULL;
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  }
  return check_owned_dir(ws->run_fd, ws->run_path, "run directory", false, err);
}

/* The marker becomes {run}/audit.jsonl; without O_TMPFILE, audit.jsonl is
 * made there, locked, and linked into .active as the marker. */
static int link_ledger(struct sr_workspace *ws, int active_dir, char **name,
                       struct sr_error *err) {
  char proc[64];
  int r;

  if (ws->active_fd >= 0) {
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ws->active_fd);
    if (linkat(ws->active_fd, "", ws->run_fd, "audit.jsonl", AT_EMPTY_PATH) <
            0 &&
        linkat(AT_FDCWD, proc, ws->run_fd, "audit.jsonl", AT_SYMLINK_FOLLOW) <
            0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "audit",
                          "cannot create audit.jsonl");
    ws->ledger_linked = true;
    return 0;
  }
  if (!*name) /* taken by make_marker, which then left a marker */
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "workspace",
                        "the run marker has no name");
  r = create_record_file(ws->run_fd, "audit.jsonl", O_APPEND);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "audit",
                        "cannot create audit.jsonl");
  ws->active_fd = r;
  ws->ledger_linked = true;
  if (flock(ws->active_fd, LOCK_EX | LOCK_NB) < 0 ||
      linkat(ws->run_fd, "audit.jsonl", active_dir, *name, 0) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot create the run marker");
  ws->active_name = TAKE_PTR(*name);
  return 0;
}

static int gc_at(int root_fd, const char *resolved,
                 const struct sr_trust_key *key, bool verbose, unsigned max,
                 const char *own, unsigned *n_cleaned, unsigned *n_failed,
                 struct sr_error *err);
static int append_index(int root_fd, uid_t owner, unsigned *lock_tries,
                        const char *line, size_t len);
/* What one gc pass knows of the runs index: the runs its lines count, up
 * to off (read again from there, so that the pass reads it once). */
struct index_seen {
  struct sr_index_ids *ids;
  off_t off;
  dev_t dev;
  ino_t ino;
};
static int index_counted(int root_fd, uid_t owner, struct index_seen *s,
                         const char *tenant, const char *execution,
                         int64_t started_s);
/* How long gc waits for a runs index's lock in one pass (GC_LOCK_TRIES
 * times GC_LOCK_WAIT_US): its holder may be whoever owns the index. */
#define GC_LOCK_TRIES 100
#define GC_LOCK_WAIT_US 10000
/* A run's end waits for it at most 5 s: whoever holds it (a process of the
 * owner's, or root's, stopped or stuck holding it) must not hold the run
 * past its record, with its signals blocked, for good. */
#define RUN_LOCK_TRIES 500

int sr_workspace_create(struct sr_workspace *ws, const char *root,
                        const char *tenant, const char *execution,
                        const struct sr_trust_key *key, int *audit_fd,
                        struct sr_error *err) {
  _cleanup_close_ int active_dir = -1;
  _cleanup_free_ char *name = NULL;
  char resolved[PATH_MAX];
  struct stat opened, named;
  int r;

  sr_workspace_init(ws);
  if (!sr_valid_id(tenant) || !sr_valid_id(execution))
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "invalid_id",
                        "invalid tenant or execution id");
  if (root[0] != '/')
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "workspace root '%s' must be an absolute path", root);
  /* Before anything is made: as given, and as resolved (a link). */
  r = check_root_text(root, err);
  if (r < 0)
    return r;
  /* The root itself is the administrator's or the caller's: its mode is
   * theirs.  Below it everything is 0700: the sandbox reaches its staging
   * copy by descriptor, never by path (init.c), so nobody else needs to. */
  r = sr_workspace_open_root(root, true, err);
  if (r < 0)
    return r;
  ws->root_fd = r;
  /* The resolved path names the runs (and their tmpfs staging): it must
   * name the directory opened, not one switched in meanwhile. */
  if (!realpath(root, resolved))
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot resolve workspace root %s", root);
  if (fstat(ws->root_fd, &opened) < 0 || stat(resolved, &named) < 0 ||
      opened.st_dev != named.st_dev || opened.st_ino != named.st_ino)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "workspace root %s changed while it was opened (%s)",
                        root, resolved);
  r = check_root_text(resolved, err);
  if (r < 0)
    return r;
  ws->root = strdup(resolved);
  if (!ws->root)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  r = check_owned_dir(ws->root_fd, resolved, "workspace root", true, err);
  if (r >= 0)
    r = check_root_parents(ws->root_fd, resolved, err);
  if (r < 0)
    return r;

  /* Leftovers of runs whose supervisor was killed are cleaned by the next
   * runs (each looks at a bounded number of markers, this id's always); a
   * failure here must not stop this run. */
  if (asprintf(&name, "%s:%s", tenant, execution) < 0) {
    name = NULL;
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  }
  (void)gc_at(ws->root_fd, ws->root, key, false, SR_WORKSPACE_GC_START_MAX,
              name, NULL, NULL, NULL);

  if (asprintf(&ws->run_path, "%s/%s", resolved, tenant) < 0) {
    ws->run_path = NULL;
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  }
  r = open_or_make_dir_at(ws->root_fd, tenant, 0700);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create tenant directory %s", ws->run_path);
  ws->tenant_fd = r;
  /* A tenant directory another user made first (in a shared root) would
   * let them rename this run's directory under it. */
  r = check_owned_dir(ws->tenant_fd, ws->run_path, "tenant directory", false,
                      err);
  free(ws->run_path);
  ws->run_path = NULL;
  if (r < 0)
    return r;

  /* A marker per live run, so that gc need not scan every run ever made;
   * checked before this run makes anything. */
  r = open_or_make_dir_at(ws->root_fd, ".active", 0700);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create %s/.active", resolved);
  active_dir = r;
  /* Nobody else may plant, rename or remove a run's marker. */
  {
    _cleanup_free_ char *path = NULL;
    if (asprintf(&path, "%s/.active", resolved) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace",
                          "workspace");
    r = check_owned_dir(active_dir, path, "run marker directory", false, err);
    if (r < 0)
      return r;
  }

  /* ws->active_name is set once the marker (`name`, made above) is ours
   * (sr_workspace_done removes it): a name taken by another run is never
   * removed. */
  /* The marker first, then the run directory (the O_EXCL step: mkdir
   * fails with EEXIST if this id ever ran), then the marker linked into
   * it as its audit.jsonl: a run killed at any point leaves a marker that
   * gc can act on. */
  r = make_marker(ws, active_dir, &name, err);
  if (r == -EEXIST)
    return refuse_taken(ws->tenant_fd, tenant, execution, err);
  if (r < 0)
    return r;
  if (mkdirat(ws->tenant_fd, execution, 0700) < 0) {
    const int e = errno;
    if (e == EEXIST)
      return refuse_taken(ws->tenant_fd, tenant, execution, err);
    return sr_error_set(err, SR_EXIT_FAILED, e, "workspace",
                        "cannot create run directory %s/%s/%s", resolved,
                        tenant, execution);
  }
  r = open_run_dir(ws, resolved, tenant, execution, err);
  if (r >= 0)
    r = link_ledger(ws, active_dir, &name, err);
  if (r < 0) {
    /* Nothing is on its record yet: the directory goes, the marker with
     * it (sr_workspace_done), and the id may run again.  The run has no
     * directory then: no metadata.json is written into the removed one,
     * and execution_started names none. */
    if (!ws->ledger_linked) {
      (void)unlinkat(ws->tenant_fd, execution, AT_REMOVEDIR);
      safe_close(ws->run_fd);
      ws->run_fd = -1;
      free(ws->run_path);
      ws->run_path = NULL;
    }
    return r;
  }
  *audit_fd = fcntl(ws->active_fd, F_DUPFD_CLOEXEC, 3);
  if (*audit_fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "audit",
                        "cannot open audit.jsonl");

  /* Staging comes once the bundle's size is known
   * (sr_workspace_make_staging). */
  r = make_dir_at(ws->run_fd, "logs", 0700);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create logs directory");
  ws->logs_fd = r;
  return 0;
}

void sr_workspace_unmake(struct sr_workspace *ws, const char *execution) {
  if (ws->run_fd < 0 || !ws->ledger_linked || ws->tenant_fd < 0)
    return;
  ws->logs_fd = safe_close(ws->logs_fd);
  (void)unlinkat(ws->run_fd, "logs", AT_REMOVEDIR);
  (void)unlinkat(ws->run_fd, "audit.jsonl", 0);
  (void)unlinkat(ws->tenant_fd, execution, AT_REMOVEDIR);
  ws->run_fd = safe_close(ws->run_fd);
  free(ws->run_path);
  ws->run_path = NULL;
  ws->ledger_linked = false;
}

/* ------------------------------------------------------------ staging */

struct tmpfs_base {
  char parent[PATH_MAX];
  char name[32];
};

/* The candidate tmpfs staging bases, in order (workspace.h). */
static size_t tmpfs_bases(struct tmpfs_base b[3]) {
  uid_t me = geteuid();
  const char *x = getenv("XDG_RUNTIME_DIR");
  size_t n = 0;

  if (me != 0 && x && x[0] == '/' && strlen(x) < sizeof(b[n].parent)) {
    snprintf(b[n].parent, sizeof(b[n].parent), "%s", x);
    snprintf(b[n].name, sizeof(b[n].name), "skillrun");
    n++;
  }
  if (me == 0) {
    /* Not /run/skillrun: the uid pool keeps that one 0700. */
    snprintf(b[n].parent, sizeof(b[n].parent), "/run");
    snprintf(b[n].name, sizeof(b[n].name), "skillrun-staging");
    n++;
  }
  snprintf(b[n].parent, sizeof(b[n].parent), "/dev/shm");
  snprintf(b[n].name, sizeof(b[n].name), "skillrun-%u", (unsigned)me);
  return n + 1;
}

static bool on_tmpfs(int fd, uint64_t need) {
  struct statfs sf;

  return fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
         (uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize >= need;
}

/*
 * The base b, opened: a tmpfs directory of ours that nobody else may write,
 * in a parent that only root or we can change (or a sticky one, such as
 * /dev/shm), so that the path init binds names what was copied.  Created
 * when `create`; otherwise -ENOENT when missing.  need: free bytes it must
 * have.
 */
static int open_tmpfs_base(const struct tmpfs_base *b, bool create,
                           uint64_t need) {
  _cleanup_close_ int parent = -1;
  uid_t me = geteuid();
  struct stat st;
  int fd;

  parent = open(b->parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (parent < 0)
    return -errno;
  if (fstat(parent, &st) < 0)
    return -errno;
  if ((st.st_uid != 0 && st.st_uid != me) ||
      ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)) ||
      !on_tmpfs(parent, need))
    return -EPERM;
  fd = openat(parent, b->name, OPEN_DIR_FLAGS);
  if (fd < 0 && errno == ENOENT && create) {
    if (mkdirat(parent, b->name, 0711) < 0 && errno != EEXIST)
      return -errno;
    fd = openat(parent, b->name, OPEN_DIR_FLAGS);
  }
  if (fd < 0)
    return -errno;
  /* 0711: nobody lists the runs staged here; each run's own directory is
   * 0700 (the sandbox reaches its copy by descriptor, not by path). */
  if (fstat(fd, &st) < 0 || st.st_uid != me || (st.st_mode & 022) ||
      !on_tmpfs(fd, need) ||
      ((st.st_mode & 07777) != 0711 && fchmod(fd, 0711) < 0)) {
    safe_close(fd);
    return -EPERM;
  }
  return fd;
}

/* The run's directory name in a tmpfs base: unique per workspace root and
 * run marker ("tenant:execution"), like the run directory itself. */
static int tmpfs_staging_name(const char *root, const char *marker,
                              char **out) {
  char hex[SR_SHA256_HEX_LEN + 1];

  if (sr_sha256_hex(root, strlen(root), hex) < 0)
    return -EIO;
  if (asprintf(out, "%.16s-%s", hex, marker) < 0) {
    *out = NULL;
    return -ENOMEM;
  }
  return 0;
}

static int staging_on_tmpfs(struct sr_workspace *ws, uint64_t bytes) {
  _cleanup_free_ char *where = NULL;
  struct tmpfs_base bases[3];
  size_t n = tmpfs_bases(bases);
  _cleanup_free_ char *name = NULL;

  if (tmpfs_staging_name(ws->root, ws->active_name, &name) < 0)
    return -ENOMEM;
  for (size_t i = 0; i < n; i++) {
    /* Room for the copy and as much again for everyone else. */
    int base = open_tmpfs_base(&bases[i], true, 2 * bytes);
    int dir;

    if (base < 0)
      continue;
    /* The marker says where the staging is, before it exists: gc, by any
     * caller who may manage the run and whatever its environment, finds
     * it there.  A workspace whose files take no such note stages in the
     * run directory, where gc finds it anyway. */
    free(where);
    if (asprintf(&where, "%s/%s", bases[i].parent, bases[i].name) < 0) {
      where = NULL;
      safe_close(base);
      return -ENOMEM;
    }
    if (fsetxattr(ws->active_fd, SR_STAGING_XATTR, where, strlen(where), 0) <
        0) {
      safe_close(base);
      return 0;
    }
    dir = make_dir_at(base, name, 0700);
    if (dir < 0) {
      safe_close(base);
      continue;
    }
    if (asprintf(&ws->staging_path, "%s/%s/%s", bases[i].parent, bases[i].name,
                 name) < 0) {
      ws->staging_path = NULL;
      (void)unlinkat(base, name, AT_REMOVEDIR);
      safe_close(dir);
      safe_close(base);
      return -ENOMEM;
    }
    ws->staging_parent_fd = base;
    ws->staging_fd = dir;
    ws->staging_name = TAKE_PTR(name);
    return 1;
  }
  return 0;
}

int sr_workspace_make_staging(struct sr_workspace *ws, uint64_t bundle_bytes,
                              bool tmpfs_ok, struct sr_error *err) {
  int r = 0;

  if (tmpfs_ok && bundle_bytes <= SR_TMPFS_STAGING_MAX)
    r = staging_on_tmpfs(ws, bundle_bytes);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create staging directory");
  if (r == 0) {
    ws->staging_name = strdup("staging");
    ws->staging_parent_fd = fcntl(ws->run_fd, F_DUPFD_CLOEXEC, 3);
    if (!ws->staging_name || ws->staging_parent_fd < 0 ||
        path_join(&ws->staging_path, ws->run_path, "staging") < 0)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace",
                          "workspace");
    r = make_dir_at(ws->run_fd, "staging", 0700);
    if (r < 0) {
      free(ws->staging_name); /* nothing of ours to remove */
      ws->staging_name = NULL;
      return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                          "cannot create staging directory");
    }
    ws->staging_fd = r;
  }
  r = make_dir_at(ws->staging_fd, "bundle", 0755);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create staging directory");
  ws->bundle_fd = r;
  if (path_join(&ws->bundle_path, ws->staging_path, "bundle") < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  return 0;
}

bool sr_workspace_staging_on_tmpfs(const struct sr_workspace *ws) {
  return ws->staging_name && strcmp(ws->staging_name, "staging") != 0;
}

int sr_workspace_restage_in_run_dir(struct sr_workspace *ws,
                                    uint64_t bundle_bytes,
                                    struct sr_error *err) {
  sr_workspace_remove_staging(ws);
  free(ws->staging_name); /* a copy left on the tmpfs is given up */
  ws->staging_name = NULL;
  ws->staging_left = false;
  /* gc need not look on the tmpfs any more. */
  (void)fremovexattr(ws->active_fd, SR_STAGING_XATTR);
  ws->staging_fd = safe_close(ws->staging_fd);
  ws->staging_parent_fd = safe_close(ws->staging_parent_fd);
  ws->bundle_fd = safe_close(ws->bundle_fd);
  free(ws->staging_path);
  free(ws->bundle_path);
  ws->staging_path = ws->bundle_path = NULL;
  return sr_workspace_make_staging(ws, bundle_bytes, false, err);
}

/* One input's staging, and what a refusal says about it. */
struct staging {
  const struct sr_input *in;
  const struct sr_input_rules *rules;
  json_t **rejected;
  struct sr_error *err;
  unsigned char *head; /* the staged copy's first bytes, for libmagic */
  struct sr_magic_typer typer;
};

/* A refusal of st->in by `rule` (exit 123): *rejected gets the
 * input_rejected fields, extra (stolen; may be NULL) merged in. */
static int reject(struct staging *st, const char *reason, const char *rule,
                  json_t *extra, const char *fmt, ...) _printf_(5, 6);
static int reject(struct staging *st, const char *reason, const char *rule,
                  json_t *extra, const char *fmt, ...) {
  /* The path is the caller's, in any bytes: recorded lossily rather than
   * not at all (the name is UTF-8, sr_input_name_check). */
  json_t *f = json_pack(
      "{s:o, s:o, s:s}", "name",
      sr_json_string_lossy(st->in->name, strlen(st->in->name)), "path",
      sr_json_string_lossy(st->in->path, strlen(st->in->path)), "rule", rule);
  char msg[768];
  va_list ap;

  if (f && extra)
    json_object_update(f, extra);
  json_decref(extra);
  json_decref(*st->rejected);
  *st->rejected = f;
  va_start(ap, fmt);
  /* False positive: va_start() just above initialised ap; clang 14's
   * valist checker reports this call all the same.
   * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return sr_error_set(st->err, SR_EXIT_REFUSED, 0, reason, "input %s: %s",
                      sr_printable(st->in->name, (char[96]){0}, 96), msg);
}

/* A size rule broken: over inputs-max-size (this file) or inputs-size
 * (all of them). */
static int reject_size(struct staging *st, bool per_file, uint64_t known) {
  const struct sr_input_rules *ru = st->rules;
  const uint64_t limit = per_file ? ru->file_max : ru->total_max;
  const char *key = per_file ? "inputs-max-size" : "inputs-size";
  json_t *x;
  char human[32];

  sr_format_size(limit, human, sizeof(human));
  x = json_pack("{s:I, s:s}", "limit", (json_int_t)limit, "source",
                sr_source_name(per_file ? ru->file_source : ru->total_source));
  if (x && known > 0)
    json_object_set_new(x, "size", json_integer((json_int_t)known));
  return reject(st, "input_too_large", key, x,
                per_file ? "larger than %s %s (%s), from %s"
                         : "the inputs exceed %s %s (%s) at %s",
                key, human,
                sr_source_name(per_file ? ru->file_source : ru->total_source),
                sr_printable(st->in->path, (char[256]){0}, 256));
}

/* The directory DIR of a DIR/NAME input, made (or made by an earlier
 * input) in the staging inputs directory.  Staging belongs to the caller
 * alone (0711 directories of its own, sr_workspace_make_staging), so
 * anything here it did not make is refused, not followed. */
static int open_input_dir(int inputs_fd, const char *dir) {
  struct stat st;
  int fd;

  if (mkdirat(inputs_fd, dir, 0755) < 0 && errno != EEXIST)
    return -errno;
  fd = openat(inputs_fd, dir, OPEN_DIR_FLAGS);
  if (fd < 0)
    return -errno;
  if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022) ||
      ((st.st_mode & 07777) != 0755 && fchmod(fd, 0755) < 0)) {
    safe_close(fd);
    return -EPERM;
  }
  return fd;
}

/* The staged copy's type against every declared list. */
static int check_types(struct staging *st, int staged_fd, uint64_t size,
                       json_t *item) {
  const struct sr_input_rules *ru = st->rules;
  const size_t want = size < SR_MAGIC_BYTES ? (size_t)size : SR_MAGIC_BYTES;
  struct sr_magic_type t;
  size_t got = 0;
  int r;

  if (ru->n_types == 0)
    return 0;
  if (!st->head && !(st->head = malloc(SR_MAGIC_BYTES)))
    return sr_error_set(st->err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
  /* The bytes copied, read back: never the source again. */
  while (got < want) {
    ssize_t n = pread(staged_fd, st->head + got, want - got, (off_t)got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return sr_error_set(st->err, SR_EXIT_FAILED, n < 0 ? errno : EIO,
                          "inputs", "cannot read back input %s", st->in->name);
    got += (size_t)n;
  }
  r = sr_magic_type_of(&st->typer, st->head, got, "the declared input types",
                       &t, st->err);
  if (r < 0)
    return r;
  if (json_object_set_new(item, "type", json_string(t.mime)) < 0)
    return sr_error_set(st->err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
  for (size_t i = 0; i < ru->n_types; i++) {
    const struct sr_type_list *l = &ru->types[i];
    json_t *allowed;

    if (sr_type_list_accepts(&l->entries, st->in->name, t.mime, t.exts))
      continue;
    allowed = json_array();
    for (size_t k = 0; allowed && k < l->entries.n; k++)
      json_array_append_new(allowed, json_string(l->entries.v[k]));
    return reject(
        st, "input_type", "inputs-types",
        json_pack("{s:s, s:s, s:o, s:s, s:s?}", "source",
                  sr_source_name(l->source), "where", l->where, "allowed",
                  allowed ? allowed : json_array(), "type", t.mime,
                  "extensions", t.exts[0] ? t.exts : NULL),
        "content %s (libmagic; extensions: %s) is not among the types "
        "%s declares",
        t.mime, t.exts[0] ? t.exts : "none", l->where);
  }
  return 0;
}

/* Stages one input within *budget (the inputs-size left); its
 * input_staged fields in *item. */
static int stage_one(struct staging *st, int inputs_fd, uint64_t *budget,
                     json_t **item) {
  const struct sr_input *in = st->in;
  const struct sr_input_rules *ru = st->rules;
  _cleanup_close_ int src = -1, dir = -1, dst = -1;
  const char *why, *slash, *base;
  struct stat sb;
  uint64_t size = 0, cap;
  enum sr_sha256_copy_step step = SR_SHA256_COPY_READ;
  unsigned char md[SR_SHA256_LEN];
  char hex[SR_SHA256_HEX_LEN + 1];
  int parent = inputs_fd, r;

  /* The run checked the names already (run-verify.c); the staging area
   * is not the place to learn otherwise. */
  if (sr_input_name_check(in->name, &why) < 0)
    return reject(st, "input_name", "name", NULL, "%s", why);
  /* The one safe open of a file someone else may control the path of
   * (sr_open_regular): a FIFO cannot hang the run, a link is refused; the
   * sizes are checked below, by the input rules. */
  src = sr_open_regular(AT_FDCWD, in->path, UINT64_MAX, &sb);
  /* skillrun's own shortage, not the caller's file. */
  if (src == -ENOMEM || src == -EMFILE || src == -ENFILE)
    return sr_error_set(st->err, SR_EXIT_FAILED, -src, "inputs", "input %s",
                        sr_printable(in->path, (char[256]){0}, 256));
  /* Missing, unreadable, a link (or another user's on the way), a
   * directory, a FIFO or a device: the same
   * refusal as a BUNDLE that is not there; nothing ran (skillrun(1)). */
  if (src == -ELOOP || src == -SR_ENOTREG || src == -SR_EFOREIGNLINK) {
    char why[128];
    return reject(st, "input_invalid", "regular-file", NULL, "%s %s",
                  sr_printable(in->path, (char[256]){0}, 256),
                  sr_open_regular_why(src, &sb, UINT64_MAX, why, sizeof(why)));
  }
  if (src < 0)
    return reject(st, "input_invalid", "regular-file", NULL, "%s: %s",
                  sr_printable(in->path, (char[256]){0}, 256), strerror(-src));
  /* Refused before a byte is copied when the size says so already; the
   * copy enforces both again, for a file that grows. */
  if ((uint64_t)sb.st_size > ru->file_max)
    return reject_size(st, true, (uint64_t)sb.st_size);
  if ((uint64_t)sb.st_size > *budget)
    return reject_size(st, false, 0);

  slash = strchr(in->name, '/');
  base = slash ? slash + 1 : in->name;
  if (slash) {
    _cleanup_free_ char *d = strndup(in->name, (size_t)(slash - in->name));
    if (!d)
      return sr_error_set(st->err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
    dir = open_input_dir(inputs_fd, d);
    if (dir < 0)
      return sr_error_set(st->err, SR_EXIT_FAILED, -dir, "inputs",
                          "cannot create the input directory %s", d);
    parent = dir;
  }
  /* Read back for the type check: O_RDWR, a file of our own. */
  dst = openat(parent, base, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               0600);
  if (dst < 0)
    return sr_error_set(st->err, SR_EXIT_FAILED, errno, "inputs",
                        "cannot stage input %s", in->name);
  cap = ru->file_max < *budget ? ru->file_max : *budget;
  r = sr_sha256_copy(src, dst, cap, NULL, &size, md, &step);
  if (r == -EFBIG && step == SR_SHA256_COPY_READ)
    return reject_size(st, ru->file_max < *budget, 0);
  /* EFBIG writing the copy is the caller's file-size limit (ulimit -f,
   * SIGXFSZ ignored), refused like a full disk: not the input's size. */
  if (r == -EFBIG)
    return sr_error_set(st->err, SR_EXIT_FAILED, -r, "inputs",
                        "cannot copy input %s (the file-size limit, ulimit -f)",
                        sr_printable(in->path, (char[256]){0}, 256));
  /* A source that opens but cannot be read (EIO from a failing disk or
   * a FUSE file system, /proc/self/mem...) is the caller's file, not
   * skillrun's failure: refused like one that cannot be opened
   * (skillrun(1)).  Our own shortage, a cancel or the copy's side stay
   * errors. */
  if (r < 0 && step == SR_SHA256_COPY_READ && r != -ENOMEM && r != -ECANCELED)
    return reject(st, "input_invalid", "regular-file", NULL,
                  "%s cannot be read: %s",
                  sr_printable(in->path, (char[256]){0}, 256), strerror(-r));
  if (r < 0)
    return sr_error_set(st->err, SR_EXIT_FAILED, -r, "inputs",
                        "cannot copy input %s",
                        sr_printable(in->path, (char[256]){0}, 256));
  /* The copy keeps the source's restriction (a 0600 input stays 0600, the
   * set-id bits go), and its owner may always read it: the sandbox user,
   * who is its owner (sr_workspace_give_inputs for root runs). */
  if (fchmod(dst, (sb.st_mode & 0755) | 0400) < 0)
    return sr_error_set(st->err, SR_EXIT_FAILED, errno, "inputs",
                        "cannot set the mode of input %s", in->name);
  sr_hex(md, sizeof(md), hex);
  *item = json_pack("{s:s, s:I, s:s}", "name", in->name, "size",
                    (json_int_t)size, "sha256", hex);
  if (!*item)
    return sr_error_set(st->err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
  r = check_types(st, dst, size, *item);
  if (r < 0)
    return r;
  *budget -= size;
  return 0;
}

int sr_workspace_stage_inputs(struct sr_workspace *ws,
                              const struct sr_input *inputs, size_t n_inputs,
                              const struct sr_input_rules *rules,
                              struct sr_audit *audit, json_t **ret_inputs,
                              json_t **rejected, struct sr_error *err) {
  struct staging st = {.rules = rules,
                       .rejected = rejected,
                       .err = err,
                       .typer = SR_MAGIC_TYPER_INIT};
  json_t *list = json_array();
  uint64_t budget = rules->total_max;
  int r = 0;

  if (!list)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
  if (n_inputs > 0 && ws->inputs_fd < 0) {
    r = make_dir_at(ws->staging_fd, "inputs", 0700);
    if (r < 0) {
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                          "cannot create staging directory");
    }
    ws->inputs_fd = r;
    if (path_join(&ws->inputs_path, ws->staging_path, "inputs") < 0) {
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace",
                          "workspace");
    }
  }
  for (size_t i = 0; r >= 0 && i < n_inputs; i++) {
    json_t *item = NULL;

    st.in = &inputs[i];
    r = stage_one(&st, ws->inputs_fd, &budget, &item);
    if (r >= 0 && json_array_append(list, item) < 0)
      r = sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
    if (r >= 0)
      r = sr_audit_emit(audit, "input_staged", json_incref(item), err);
    json_decref(item);
  }
  free(st.head);
  sr_magic_typer_done(&st.typer);
  if (r < 0) {
    json_decref(list);
    return r;
  }
  *ret_inputs = list;
  return 0;
}

/* Gives the directory dfd and everything below it (regular files and
 * directories: nothing else is staged) to uid:gid, never following a link,
 * at most 32 levels down. */
static int chown_tree(int dfd, uid_t uid, gid_t gid, unsigned depth) {
  _cleanup_(sr_closedirp) DIR *d = NULL;
  struct dirent *de;
  int dup;

  if (depth > 32)
    return -ELOOP;
  if (fchown(dfd, uid, gid) < 0)
    return -errno;
  dup = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
  if (dup < 0)
    return -errno;
  d = fdopendir(dup);
  if (!d) {
    safe_close(dup);
    return -errno;
  }
  rewinddir(d);
  while ((errno = 0, de = readdir(d))) {
    struct stat st;
    int r;

    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      return -errno;
    if (S_ISDIR(st.st_mode)) {
      _cleanup_close_ int sub = openat(dfd, de->d_name, OPEN_DIR_FLAGS);
      if (sub < 0)
        return -errno;
      r = chown_tree(sub, uid, gid, depth + 1);
    } else if (S_ISREG(st.st_mode)) {
      r = fchownat(dfd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno
                                                                       : 0;
    } else {
      r = -EINVAL;
    }
    if (r < 0)
      return r;
  }
  return errno ? -errno : 0;
}

int sr_workspace_give_inputs(struct sr_workspace *ws, uid_t uid, gid_t gid,
                             struct sr_error *err) {
  int r;

  if (ws->inputs_fd < 0 || (uid == geteuid() && gid == getegid()))
    return 0;
  r = chown_tree(ws->inputs_fd, uid, gid, 0);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "inputs",
                        "cannot give the staged inputs to the sandbox user "
                        "%u:%u",
                        (unsigned)uid, (unsigned)gid);
  return 0;
}

int sr_workspace_write_sandbox_metadata(struct sr_workspace *ws,
                                        const json_t *meta,
                                        struct sr_error *err) {
  int r;

  if (ws->staging_fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "metadata",
                        "no staging directory for metadata.json");
  /* 0644 in a 0700 staging directory: the sandbox user reads it through
   * its bind mount only. */
  ws->metadata_fd = safe_close(ws->metadata_fd);
  r = sr_metafile_write_at(ws->staging_fd, "metadata.json", meta, 0644,
                           (uid_t)-1, (gid_t)-1, &ws->metadata_fd, err);
  if (r < 0)
    return r;
  free(ws->metadata_path);
  if (path_join(&ws->metadata_path, ws->staging_path, "metadata.json") < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "metadata", "metadata");
  return 0;
}

int sr_workspace_write_metadata(struct sr_workspace *ws, const json_t *meta,
                                struct sr_error *err) {
  return sr_metafile_replace_at(ws->run_fd, meta, (uid_t)-1, (gid_t)-1, err);
}

int sr_workspace_open_logs(struct sr_workspace *ws, int *out_fd, int *err_fd,
                           struct sr_error *err) {
  int o, e;

  /* Not O_APPEND: splice(2) refuses such a file, and the log pump splices
   * the kept bytes into it.  The file is new (O_EXCL) and the pump its only
   * writer, at its own offset, so appending is what it does anyway. */
  o = create_record_file(ws->logs_fd, "stdout.log", 0);
  if (o < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -o, "logs",
                        "cannot create logs/stdout.log");
  e = create_record_file(ws->logs_fd, "stderr.log", 0);
  if (e < 0) {
    safe_close(o);
    return sr_error_set(err, SR_EXIT_FAILED, -e, "logs",
                        "cannot create logs/stderr.log");
  }
  *out_fd = o;
  *err_fd = e;
  return 0;
}

/* What the harvest skips, for its warnings and their summary. */
enum skip_kind {
  SKIP_SYMLINK,
  SKIP_FIFO,
  SKIP_SOCKET,
  SKIP_DEVICE,
  SKIP_NAME,   /* a C0/C1 control, bidi formatting or line separator */
  SKIP_DEPTH,  /* a directory HARVEST_MAX_DEPTH levels down */
  SKIP_LENGTH, /* a path below outputs/ longer than HARVEST_MAX_PATH */
  SKIP_GONE,   /* could not be read (it vanished, or the skill's modes) */
  SKIP__MAX
};
static const char *const skip_names[SKIP__MAX] = {
    [SKIP_SYMLINK] = "symlink", [SKIP_FIFO] = "fifo",
    [SKIP_SOCKET] = "socket",   [SKIP_DEVICE] = "device",
    [SKIP_NAME] = "name",       [SKIP_DEPTH] = "depth",
    [SKIP_LENGTH] = "length",   [SKIP_GONE] = "unreadable",
};
static const char *const skip_messages[SKIP__MAX] = {
    [SKIP_SYMLINK] = "output skipped: a symbolic link (never followed)",
    [SKIP_FIFO] = "output skipped: a FIFO",
    [SKIP_SOCKET] = "output skipped: a socket",
    [SKIP_DEVICE] = "output skipped: a device node",
    [SKIP_NAME] = "output skipped: its name holds a control, bidirectional "
                  "formatting or line separator character",
    [SKIP_DEPTH] = "output skipped: a directory deeper than 32 levels, with "
                   "everything below it",
    [SKIP_LENGTH] = "output skipped: its path below outputs/ is longer than "
                    "3072 bytes (with everything below it, for a directory)",
    [SKIP_GONE] = "output skipped: it could not be read",
};

struct harvest {
  struct sr_audit *audit;
  uint64_t budget;          /* bytes left of outputs-size */
  uint64_t cap_bytes;       /* outputs-size */
  uint64_t max_entries;     /* outputs-files */
  uint64_t n_entries;       /* every entry seen, skipped ones too */
  struct sr_artifacts *out; /* what was committed */
  uint64_t deadline_ms;
  uint64_t record_end; /* the record's length its artifact events stop at */
  uint64_t skipped[SKIP__MAX];
  uint64_t n_skipped;
  /* The cap that stopped the harvest (a key of skillrun.profile(5), or
   * the harvest's own "harvest-deadline" or "harvest-record"), its value,
   * and the entry it stopped at. */
  const char *stop;
  uint64_t stop_cap;
  char *stop_path;
  size_t stop_path_len;
  bool no_tmpfile; /* the run directory's file system has no O_TMPFILE */
  struct sr_error *err;
};

void sr_artifacts_done(struct sr_artifacts *a) {
  json_decref(a->list);
  a->list = NULL;
}

json_t *sr_artifacts_json(const struct sr_artifacts *a) {
  return json_pack("{s:I, s:I, s:o, s:b}", "files", (json_int_t)a->files,
                   "bytes", (json_int_t)a->bytes, "list",
                   a->list ? json_incref(a->list) : json_array(), "truncated",
                   a->truncated);
}

/* One artifact into the list, unless that could make the list's JSON pass
 * SR_ARTIFACT_LIST_MAX (estimated, as gc does for a run it closes), or the
 * run's audit.jsonl cannot keep room for it on a full file system
 * (sr_audit_keep_room), twice: in execution_completed, and indented in
 * metadata.json, which gets the room when the ledger's last line is
 * written.  Then the list stops (truncated), the artifact_committed
 * events being the full record.  The room is kept for the entry as it
 * will be written: kept for the estimate, the list took up to seven times
 * what it needed of a nearly full file system, and the artifact_committed
 * events still to come found none left (a run failed with room enough
 * for its whole record). */
static int list_artifact(struct sr_artifacts *a, struct sr_audit *audit,
                         const json_t *item, const char *path) {
  size_t cost = SR_ARTIFACT_ENTRY_MAX(strlen(path));
  const uint64_t list = a->list_bytes + cost,
                 entries = json_array_size(a->list) + 1,
                 written = a->list_json +
                           json_dumpb(item, NULL, 0,
                                      JSON_COMPACT | JSON_PRESERVE_ORDER) +
                           1;

  if (a->truncated || list > SR_ARTIFACT_LIST_MAX ||
      sr_audit_keep_room(audit, a->metadata_base + 2 * written +
                                    entries * SR_METADATA_ENTRY_INDENT) < 0) {
    a->truncated = true;
    return 0;
  }
  if (!a->list && !(a->list = json_array()))
    return -ENOMEM;
  if (json_array_append(a->list, (json_t *)item) < 0)
    return -ENOMEM;
  a->list_bytes += cost;
  a->list_json = written;
  return 0;
}

/* The entry's path on the record: "path", and when it is not plain UTF-8
 * text also "path_base64", its raw bytes (sr_name_needs_escape). */
static int set_path_fields(json_t *o, const char *rel, size_t len) {
  _cleanup_free_ char *shown = NULL, *b64 = NULL;

  if (!o)
    return -ENOMEM;
  if (!sr_name_needs_escape(rel, len))
    return json_object_set_new(o, "path", json_stringn(rel, len)) < 0 ? -ENOMEM
                                                                      : 0;
  shown = sr_name_escape(rel, len);
  b64 = malloc(4 * ((len + 2) / 3) + 1);
  if (!shown || !b64)
    return -ENOMEM;
  b64[sr_base64_encode((const unsigned char *)rel, len, false, b64)] = '\0';
  if (json_object_set_new(o, "path", json_string(shown)) < 0 ||
      json_object_set_new(o, "path_base64", json_string(b64)) < 0)
    return -ENOMEM;
  return 0;
}

/* An event about one entry: fields (stolen) plus its path fields; never
 * written without them (sr_audit_emit refuses NULL fields). */
static int emit_about(struct harvest *h, const char *event, json_t *fields,
                      const char *rel) {
  if (fields && set_path_fields(fields, rel, strlen(rel)) < 0) {
    json_decref(fields);
    fields = NULL;
  }
  return sr_audit_emit(h->audit, event, fields, h->err);
}

/* One skipped entry: counted; a warning for the first few only, so that a
 * skill cannot grow the ledger by leaving links behind (the summary after
 * the harvest counts the rest). */
static int skip(struct harvest *h, enum skip_kind k, const char *rel) {
  h->skipped[k]++;
  if (h->n_skipped++ >= SR_HARVEST_MAX_WARNINGS)
    return 0;
  return emit_about(h, "warning",
                    json_pack("{s:s, s:s}", "message", skip_messages[k],
                              "skipped", skip_names[k]),
                    rel);
}

static void stop(struct harvest *h, const char *key, uint64_t cap,
                 const char *rel) {
  h->stop = key;
  h->stop_cap = cap;
  free(h->stop_path);
  h->stop_path = strdup(rel);
}

/* A harvested file or directory keeps the skill's restriction (never more
 * than 0755, never the set-id bits) and is always the caller's to read. */
static mode_t harvested_mode(mode_t src, bool dir) {
  return (src & 0755) | (dir ? 0700 : 0600);
}

/* The file's artifact_committed event, within the harvest's bound on its
 * lines (SR_HARVEST_RECORD_MAX): SR_AUDIT_PAST_END when the line would
 * pass it, 0 or the audit's failure otherwise.  *taken: the event is on
 * the record. */
static int commit_artifact(struct harvest *h, json_t *item, bool *taken) {
  const uint64_t seq = h->audit->seq;
  int q = sr_audit_emit_within(h->audit, "artifact_committed",
                               json_incref(item), h->record_end, h->err);

  *taken = h->audit->seq != seq;
  return q;
}

/*
 * A copy the harvest is writing has no name in outputs/ until it is
 * whole: an O_TMPFILE in the destination directory, linked under its name
 * once complete (linkat(2) fails with EEXIST rather than replace
 * anything).  Where the file system has no O_TMPFILE, a hidden name of
 * its own (".skillrun-partial.<random>", made O_EXCL), linked under the
 * real name and removed.  A supervisor killed mid-copy leaves either
 * nothing or that hidden name, which --gc removes with every file the
 * run's ledger does not commit (sr_reclaim_outputs).
 */
struct partial {
  int fd;
  char tmp[40]; /* the hidden name, "" for an O_TMPFILE */
};

static int partial_open(struct harvest *h, int dir, struct partial *p) {
  p->tmp[0] = '\0';
  if (!h->no_tmpfile) {
    p->fd = openat(dir, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0600);
    if (p->fd >= 0)
      return 0;
    /* EISDIR or EINVAL: a kernel that does not know O_TMPFILE. */
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
      return -errno;
    h->no_tmpfile = true;
  }
  for (int i = 0; i < 16; i++) {
    uint64_t x;

    if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x))
      return -EIO;
    snprintf(p->tmp, sizeof(p->tmp), ".skillrun-partial.%016" PRIx64, x);
    p->fd = openat(dir, p->tmp,
                   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (p->fd >= 0 || errno != EEXIST)
      return p->fd >= 0 ? 0 : -errno;
  }
  p->tmp[0] = '\0';
  return -EEXIST;
}

/* The copy, whole, under name: 0 or -errno (-EEXIST when name is taken).
 * The hidden name goes either way. */
static int partial_link(int dir, struct partial *p, const char *name) {
  char proc[40];
  int r;

  if (p->tmp[0]) {
    r = linkat(dir, p->tmp, dir, name, 0) < 0 ? -errno : 0;
    (void)unlinkat(dir, p->tmp, 0);
    p->tmp[0] = '\0';
    return r;
  }
  /* Without CAP_DAC_READ_SEARCH, AT_EMPTY_PATH links only a file its
   * caller opened, since Linux 6.10; /proc/self/fd/N links it before
   * (as make_marker does). */
  if (linkat(p->fd, "", dir, name, AT_EMPTY_PATH) == 0)
    return 0;
  if (errno == EEXIST)
    return -EEXIST;
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p->fd);
  return linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) < 0 ? -errno : 0;
}

/* A copy that is not kept: its hidden name, if any, goes. */
static void partial_discard(int dir, struct partial *p) {
  if (p->tmp[0])
    (void)unlinkat(dir, p->tmp, 0);
  p->tmp[0] = '\0';
}

/*
 * An entry the skill left closed to its owner (a file without read
 * permission, a directory without read or search): opened up on the
 * outputs tmpfs (by `need`, the owner's bits the harvest needs), so that
 * what is harvested does not depend on who runs skillrun: root reads such
 * an entry anyway, an unprivileged caller, whose uid owns it, did not (a
 * skill's 0000 file or `chmod 0 /workspace/outputs` lost its outputs).
 * Through an O_PATH descriptor of the entry checked to be the one seen,
 * never through a name a symbolic link could redirect.  Best effort: the
 * open that follows reports what stays unreadable.  The record keeps the
 * mode the skill gave it.
 */
static void open_up(int dir, const char *name, const struct stat *st,
                    mode_t need) {
  _cleanup_close_ int fd = -1;
  struct stat now;
  char proc[40];

  if ((st->st_mode & need) == need)
    return;
  fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &now) < 0 || now.st_dev != st->st_dev ||
      now.st_ino != st->st_ino ||
      (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT))
    return;
  /* fchmod(2) refuses an O_PATH descriptor; its /proc link names the
   * entry itself. */
  snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  (void)chmod(proc, (now.st_mode & 07777) | need);
}

static int harvest_file(struct harvest *h, int src_dir, int dst_dir,
                        const char *name, const char *rel,
                        const struct stat *st) {
  _cleanup_close_ int s = -1;
  _cleanup_(json_decrefp) json_t *item = NULL; /* jansson >= 2.9 */
  struct partial t = {.fd = -1};
  enum sr_sha256_copy_step step = SR_SHA256_COPY_READ;
  unsigned char md[SR_SHA256_LEN];
  char hex[SR_SHA256_HEX_LEN + 1], mode[8];
  uint64_t size = 0;
  bool taken = false;
  int q;

  open_up(src_dir, name, st, S_IRUSR);
  s = openat(src_dir, name,
             O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (s < 0)
    return skip(h, SKIP_GONE, rel);
  q = partial_open(h, dst_dir, &t);
  if (q < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, -q, "harvest",
                        "cannot create outputs/%s", rel);
  q = sr_sha256_copy(s, t.fd, h->budget, NULL, &size, md, &step);
  if (q < 0) {
    /* Never left behind as if it were complete: a file cut at the cap,
     * or by the host's disk filling up, is dropped and named. */
    partial_discard(dst_dir, &t);
    safe_close(t.fd);
    /* Past outputs-size when reading it; EFBIG when writing the copy is
     * the caller's file-size limit (ulimit -f, SIGXFSZ ignored), a host
     * write that failed like a full disk, not the skill's cap. */
    if (q == -EFBIG && step == SR_SHA256_COPY_READ) {
      stop(h, "outputs-size", h->cap_bytes, rel);
      return 0;
    }
    return sr_error_set(h->err, SR_EXIT_FAILED, -q, "harvest",
                        "cannot copy outputs/%s (%s)", rel,
                        q == -EFBIG ? "writing the copy: the file-size limit, "
                                      "ulimit -f"
                        : step == SR_SHA256_COPY_WRITE ? "writing the copy"
                                                       : "reading it");
  }
  if (fchmod(t.fd, harvested_mode(st->st_mode, false)) < 0) {
    q = -errno;
    partial_discard(dst_dir, &t);
    safe_close(t.fd);
    return sr_error_set(h->err, SR_EXIT_FAILED, -q, "harvest",
                        "cannot set the mode of outputs/%s", rel);
  }
  /* Named once whole; the event follows.  A supervisor killed between
   * the two leaves a whole file that no event commits: --gc removes it. */
  q = partial_link(dst_dir, &t, name);
  safe_close(t.fd);
  if (q < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, -q, "harvest",
                        "cannot create outputs/%s", rel);
  sr_hex(md, sizeof(md), hex);
  /* The mode the skill gave it, for what the copy's mode does not keep
   * (a set-id bit). */
  snprintf(mode, sizeof(mode), "%04o", (unsigned)(st->st_mode & 07777));
  item = json_object();
  if (!item || set_path_fields(item, rel, strlen(rel)) < 0 ||
      json_object_set_new(item, "size", json_integer((json_int_t)size)) < 0 ||
      json_object_set_new(item, "sha256", json_string(hex)) < 0 ||
      json_object_set_new(item, "mode", json_string(mode)) < 0) {
    (void)unlinkat(dst_dir, name, 0);
    return sr_error_set(h->err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
  }
  /* A file is harvested with its event or not at all: one past the
   * bound, or that neither sink took (the run stops), is not left on the
   * host, nor counted. */
  q = commit_artifact(h, item, &taken);
  if (!taken) {
    (void)unlinkat(dst_dir, name, 0);
    if (q == SR_AUDIT_PAST_END) {
      stop(h, "harvest-record", SR_HARVEST_RECORD_MAX, rel);
      return 0;
    }
    return q;
  }
  h->budget -= size;
  h->out->files++;
  h->out->bytes += size;
  if (list_artifact(h->out, h->audit, item, rel) < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
  return q;
}

static int harvest_dir(struct harvest *h, int src_dir, int dst_dir,
                       const char *prefix, unsigned depth);

static int harvest_subdir(struct harvest *h, int src_dir, int dst_dir,
                          const char *name, const char *rel,
                          const struct stat *st, unsigned depth) {
  _cleanup_close_ int s = -1, t = -1;
  _cleanup_free_ char *sub = NULL;

  if (depth >= HARVEST_MAX_DEPTH)
    return skip(h, SKIP_DEPTH, rel);
  open_up(src_dir, name, st, S_IRUSR | S_IXUSR);
  s = openat(src_dir, name, OPEN_DIR_FLAGS);
  if (s < 0)
    return skip(h, SKIP_GONE, rel);
  if (mkdirat(dst_dir, name, 0700) < 0 && errno != EEXIST)
    return sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                        "cannot create outputs/%s", rel);
  t = openat(dst_dir, name, OPEN_DIR_FLAGS);
  if (t < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                        "cannot open outputs/%s", rel);
  if (fchmod(t, harvested_mode(st->st_mode, true)) < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                        "cannot set the mode of outputs/%s", rel);
  if (asprintf(&sub, "%s/", rel) < 0) {
    sub = NULL;
    return sr_error_set(h->err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
  }
  return harvest_dir(h, s, t, sub, depth + 1);
}

/* One entry: counted against outputs-files whatever it is, checked against
 * the deadline, then harvested or skipped. */
static int harvest_entry(struct harvest *h, int src_dir, int dst_dir,
                         const char *name, const char *rel, unsigned depth) {
  struct stat st;

  if (++h->n_entries > h->max_entries) {
    stop(h, "outputs-files", h->max_entries, rel);
    return 0;
  }
  if ((h->n_entries & 63) == 0 && sr_now_mono_ms() > h->deadline_ms) {
    stop(h, "harvest-deadline", SR_HARVEST_DEADLINE_MS, rel);
    return 0;
  }
  if (fstatat(src_dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return skip(h, SKIP_GONE, rel);
  /* A name that is not UTF-8 is harvested (and recorded with its bytes);
   * one that would mislead a terminal or a listing is not created on the
   * host at all: also one whose bytes that are not UTF-8 include one that
   * a terminal of 8-bit characters reads as a control. */
  if (sr_name_misleads(name, strlen(name)))
    return skip(h, SKIP_NAME, rel);
  if (strlen(rel) > HARVEST_MAX_PATH)
    return skip(h, SKIP_LENGTH, rel);
  switch (st.st_mode & S_IFMT) {
  case S_IFREG:
    return harvest_file(h, src_dir, dst_dir, name, rel, &st);
  case S_IFDIR:
    return harvest_subdir(h, src_dir, dst_dir, name, rel, &st, depth);
  case S_IFLNK:
    return skip(h, SKIP_SYMLINK, rel);
  case S_IFIFO:
    return skip(h, SKIP_FIFO, rel);
  case S_IFSOCK:
    return skip(h, SKIP_SOCKET, rel);
  default:
    return skip(h, SKIP_DEVICE, rel);
  }
}

static int harvest_dir(struct harvest *h, int src_dir, int dst_dir,
                       const char *prefix, unsigned depth) {
  _cleanup_free_ struct sr_dir *d = malloc(sizeof(*d));
  const char *name;
  unsigned char type;
  int n, r = 0;

  if (!d)
    return sr_error_set(h->err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
  /* From the start, however the descriptor was read before. */
  if (lseek(src_dir, 0, SEEK_SET) < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                        "cannot read outputs/%s", prefix);
  sr_dir_init(d, src_dir);
  while (r >= 0 && !h->stop && (n = sr_dir_next(d, &name, &type)) != 0) {
    _cleanup_free_ char *rel = NULL;

    if (n < 0)
      return sr_error_set(h->err, SR_EXIT_FAILED, -n, "harvest",
                          "cannot read outputs/%s", prefix);
    if (asprintf(&rel, "%s%s", prefix, name) < 0) {
      rel = NULL;
      r = sr_error_set(h->err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
      break;
    }
    r = harvest_entry(h, src_dir, dst_dir, name, rel, depth);
  }
  return r;
}

int sr_workspace_make_outputs(struct sr_workspace *ws, struct sr_error *err) {
  int r = make_dir_at(ws->run_fd, "outputs", 0700);

  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "harvest",
                        "cannot create outputs directory");
  ws->outputs_fd = r;
  return 0;
}

/* The outputs tmpfs was full when the skill ended: the skill met ENOSPC
 * (a file may be cut short) or could not create an entry.  Said before
 * the artifacts, which are what the skill managed to write. */
static int check_full(struct harvest *h, int outputs_fd) {
  struct statfs sf;
  const char *key = NULL;
  uint64_t cap = 0;

  if (fstatfs(outputs_fd, &sf) < 0)
    return 0; /* the harvest itself reports what it cannot read */
  if (sf.f_bavail == 0) {
    key = "outputs-size";
    cap = h->cap_bytes;
  } else if (sf.f_ffree == 0) {
    key = "outputs-files";
    cap = h->max_entries;
  }
  if (!key)
    return 0;
  return sr_audit_emit(h->audit, "limit_exceeded",
                       json_pack("{s:s, s:s, s:I, s:I, s:b}", "limit", "output",
                                 "key", key, "cap", (json_int_t)cap, "files",
                                 (json_int_t)0, "in_sandbox", true),
                       h->err);
}

/* After the harvest: the summary of what was skipped beyond the warnings,
 * and the cap that stopped it. */
static int harvest_report(struct harvest *h) {
  int r = 0;

  if (h->n_skipped > SR_HARVEST_MAX_WARNINGS) {
    json_t *counts = json_object();
    for (int k = 0; counts && k < SKIP__MAX; k++)
      if (h->skipped[k] &&
          json_object_set_new(counts, skip_names[k],
                              json_integer((json_int_t)h->skipped[k])) < 0) {
        json_decref(counts);
        counts = NULL;
      }
    r = sr_audit_emit(
        h->audit, "warning",
        json_pack("{s:s, s:s, s:I, s:o}", "message",
                  "more outputs were skipped than are listed one by one",
                  "reason", "outputs_skipped", "skipped_total",
                  (json_int_t)h->n_skipped, "skipped", counts),
        h->err);
  }
  if (r >= 0 && h->stop) {
    json_t *f = json_pack("{s:s, s:s, s:I, s:I}", "limit", "output", "key",
                          h->stop, "cap", (json_int_t)h->stop_cap, "files",
                          (json_int_t)h->out->files);
    if (h->stop_path)
      r = emit_about(h, "limit_exceeded", f, h->stop_path);
    else
      r = sr_audit_emit(h->audit, "limit_exceeded", f, h->err);
  }
  return r;
}

int sr_workspace_harvest(struct sr_workspace *ws, int outputs_fd,
                         uint64_t cap_bytes, uint64_t max_entries,
                         struct sr_audit *audit, struct sr_artifacts *out,
                         struct sr_error *err) {
  struct harvest h = {
      .audit = audit,
      .budget = cap_bytes,
      .cap_bytes = cap_bytes,
      .max_entries = max_entries,
      .out = out,
      .deadline_ms = sr_now_mono_ms() + SR_HARVEST_DEADLINE_MS,
      .record_end = sr_audit_record_len(audit) + SR_HARVEST_RECORD_MAX,
      .err = err,
  };
  _cleanup_close_ int dst = -1;
  int r = 0;

  /* Made by sr_workspace_make_outputs while the sandbox was built. */
  if (ws->outputs_fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, EBADF, "harvest",
                        "no outputs directory");
  dst = TAKE_FD(ws->outputs_fd);
  if (outputs_fd >= 0) {
    struct stat root;

    /* The tmpfs's root, as open_up does for the entries below it. */
    if (fstat(outputs_fd, &root) == 0 &&
        (root.st_mode & (S_IRUSR | S_IXUSR)) != (S_IRUSR | S_IXUSR))
      (void)fchmod(outputs_fd, (root.st_mode & 07777) | S_IRUSR | S_IXUSR);
    r = check_full(&h, outputs_fd);
    if (r >= 0)
      r = harvest_dir(&h, outputs_fd, dst, "", 0);
    if (r >= 0)
      r = harvest_report(&h);
  }
  free(h.stop_path);
  if (r < 0)
    return r;
  if (!out->list && !(out->list = json_array()))
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
  return 0;
}

void sr_workspace_remove_staging(struct sr_workspace *ws) {
  if (ws->staging_parent_fd >= 0 && ws->staging_name &&
      sr_rm_rf_at(ws->staging_parent_fd, ws->staging_name) < 0) {
    /* Tried again by sr_workspace_done; a leftover on a tmpfs is then
     * the next gc's, which finds it through the marker it keeps. */
    ws->staging_left = sr_workspace_staging_on_tmpfs(ws);
    return;
  }
  ws->staging_left = false;
  free(ws->staging_name);
  ws->staging_name = NULL;
}

void sr_workspace_done(struct sr_workspace *ws) {
  sr_workspace_remove_staging(ws);
  free(ws->staging_name);
  ws->staging_name = NULL;
  /* The marker (its run's ledger, closed or not) stays for gc when it has
   * work left: it says where a staging copy on a tmpfs is, gc closes a
   * ledger left open and makes a missing metadata.json from the ledger
   * (sr_reclaim_run). */
  if (ws->root_fd >= 0 && ws->active_name && !ws->staging_left &&
      !ws->metadata_lost && !ws->ledger_open) {
    _cleanup_close_ int active_dir =
        openat(ws->root_fd, ".active", OPEN_DIR_FLAGS);
    if (active_dir >= 0)
      (void)unlinkat(active_dir, ws->active_name,
                     0); /* gc removes it otherwise */
  }
  safe_close(ws->staging_fd);
  safe_close(ws->staging_parent_fd);
  safe_close(ws->bundle_fd);
  safe_close(ws->inputs_fd);
  safe_close(ws->metadata_fd);
  safe_close(ws->logs_fd);
  safe_close(ws->outputs_fd);
  safe_close(ws->active_fd);
  safe_close(ws->run_fd);
  safe_close(ws->tenant_fd);
  safe_close(ws->root_fd);
  free(ws->root);
  free(ws->run_path);
  free(ws->active_name);
  free(ws->staging_path);
  free(ws->bundle_path);
  free(ws->inputs_path);
  free(ws->metadata_path);
  sr_workspace_init(ws);
}

/* r when it says this process ran short of descriptors or memory (gc's
 * caller's RLIMIT_NOFILE, say): what failed then may work next time, so
 * the dead run's marker stays for the next gc.  0 for any other outcome,
 * which gc goes on from as it did. */
static int short_of(int r) {
  return r == -EMFILE || r == -ENFILE || r == -ENOMEM || r == -ENOBUFS ? r : 0;
}

/* A line the caller's own runs index could not take that a later gc may
 * add: short_of, its lock held past gc's wait, no room, the file-size
 * limit.  Not one that stays (another user's .metrics: -EPERM). */
static bool count_later(int r) {
  return short_of(r) || r == -EAGAIN || r == -EINTR || r == -ENOSPC ||
         r == -EDQUOT || r == -EFBIG;
}

/* The directory at the absolute path `where`, found in the caller's own
 * mount namespace: through no magic link (/proc/PID/root, /proc/PID/cwd,
 * /proc/PID/fd/N), which would lead into another process's mounts.  An fd,
 * or -errno (-ELOOP for such a link, or a symbolic link last). */
static int open_dir_here(const char *where) {
  struct open_how how = {
      .flags = OPEN_DIR_FLAGS,
      .resolve = RESOLVE_NO_MAGICLINKS,
  };
  long fd;

  do
    fd = syscall(SYS_openat2, AT_FDCWD, where, &how, sizeof(how));
  while (fd < 0 && errno == EINTR);
  return fd < 0 ? -errno : (int)fd;
}

/* A dead run's staging directory on a tmpfs: in the base its marker names
 * (SR_STAGING_XATTR), when that is still a tmpfs directory of the run's
 * owner that nobody else may write, reached in the caller's own mount
 * namespace (the note is the run's owner's to write: through /proc/PID/root
 * it could name a tmpfs of theirs in a namespace of their own, with
 * anything bound below it); for a marker without that note (an older
 * version's), in any base of the caller's, but only for a marker of the
 * caller's own: another user's may name a run of the caller's, alive in
 * a workspace root of the same path that they moved aside (the staging
 * name derives from the path), and this version always notes a tmpfs
 * base before making the staging directory in it.  Never creating
 * one. */
static int remove_tmpfs_staging(const char *root, const char *marker_name,
                                int marker, uid_t owner) {
  struct tmpfs_base bases[3];
  size_t n;
  _cleanup_free_ char *name = NULL;
  char where[PATH_MAX];
  ssize_t len;
  int r;

  r = tmpfs_staging_name(root, marker_name, &name);
  if (r < 0)
    return short_of(r);
  len = fgetxattr(marker, SR_STAGING_XATTR, where, sizeof(where) - 1);
  if (len > 0) {
    _cleanup_close_ int base = -1;
    struct stat st;

    where[len] = '\0';
    if (where[0] != '/' || strlen(where) != (size_t)len)
      return 0;
    base = open_dir_here(where);
    if (base < 0)
      return short_of(base);
    if (fstat(base, &st) == 0 && st.st_uid == owner && !(st.st_mode & 022) &&
        on_tmpfs(base, 0))
      return short_of(sr_rm_rf_at(base, name));
    return 0;
  }
  if (owner != geteuid())
    return 0;
  n = tmpfs_bases(bases);
  for (size_t i = 0; i < n; i++) {
    _cleanup_close_ int base = open_tmpfs_base(&bases[i], false, 0);

    r = short_of(base >= 0 ? sr_rm_rf_at(base, name) : base);
    if (r < 0)
      return r;
  }
  return 0;
}

/* Whether marker (an open, locked file in .active) is provably the run's
 * own: the very file of {run}/audit.jsonl (the run made it as a second
 * link to that, and nothing else), owned by whoever owns the run
 * directory.  Anything else (a file planted under a live run's name, a
 * link to another file) is left alone: gc must never let somebody make it
 * remove a live run's staging or close its record. */
static int marker_is_runs(int marker, const struct stat *mst, int run) {
  _cleanup_close_ int ledger = -1;
  struct stat lst, rst;

  if (!S_ISREG(mst->st_mode) || mst->st_nlink != 2)
    return 0;
  ledger = openat(run, "audit.jsonl",
                  O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (ledger < 0)
    return short_of(-errno);
  if (fstat(ledger, &lst) < 0 || fstat(run, &rst) < 0)
    return 0;
  (void)marker;
  return lst.st_dev == mst->st_dev && lst.st_ino == mst->st_ino &&
         rst.st_uid == mst->st_uid;
}

/* A dead marker that is nobody's record (one link, nothing written): its
 * run was killed between making it and linking it into the run directory
 * (sr_workspace_create).  Its run directory, when the run got to make it,
 * is empty and goes, so that the id, which never ran, may run; one with
 * an audit.jsonl is another run's and stays. */
static bool stillborn(const struct stat *mst, int tenant, const char *exec_id,
                      int run, int run_errno) {
  struct stat rst, lst;

  if (!S_ISREG(mst->st_mode) || mst->st_nlink != 1 || mst->st_size != 0)
    return false;
  if (run < 0)
    return run_errno == ENOENT;
  if (fstat(run, &rst) < 0 || rst.st_uid != mst->st_uid)
    return false;
  if (fstatat(run, "audit.jsonl", &lst, AT_SYMLINK_NOFOLLOW) == 0)
    return true;
  return unlinkat(tenant, exec_id, AT_REMOVEDIR) == 0;
}

/* gc_one's return when it ran short (short_of): the marker stays. */
static int gc_short(int r, bool verbose, const char *what,
                    const char *tenant_id, const char *exec_id) {
  if (verbose)
    printf("cannot %s %s/%s (left for the next gc): %s\n", what, tenant_id,
           exec_id, strerror(-r));
  return r;
}

/* What gc_at keeps for every marker of one root. */
struct gc_walk {
  int root_fd, active_fd;
  const char *resolved;
  bool verbose;
  const struct sr_trust_key *key;
  /* The index's lock is waited for GC_LOCK_TRIES times in all, however
   * many runs this closes: its owner may hold it for good and have made
   * any number of dead runs (copies of one), each a second of root's
   * --gc, or of a run's start, otherwise. */
  unsigned lock_tries;
  struct index_seen seen;
};

/* Counted exactly once (skillrun(1) METRICS), in its owner's index as the
 * run itself would have been, unless a line there has its id: the run's
 * own (it died after writing it, or a crash tore its last audit line), or
 * that of a gc that closed it before.  Also when its metadata.json could
 * not follow, as the next gc finds it counted.  When the index has lines
 * without ids (an older version's) that may be the run's, as an older
 * version did: counted if this gc closed it (`closed`).  0, or -errno when
 * the line must wait for a later gc (the marker stays). */
static int gc_count(struct gc_walk *w, int marker, const struct stat *mst,
                    const char *ledger, size_t ledger_len,
                    const char *tenant_id, const char *exec_id, bool closed) {
  char line[SR_RECORD_LINE_MAX + 1];
  int64_t started = -1;
  int n = sr_reclaim_index_line(ledger, ledger_len, tenant_id, exec_id, line,
                                sizeof(line), &started);
  int found = n < 0 ? 0
                    : index_counted(w->root_fd, mst->st_uid, &w->seen,
                                    tenant_id, exec_id, started);
  bool count, mine = mst->st_uid == geteuid();
  int q;

  if (found < -1)
    return gc_short(found, w->verbose, "read the runs index to count",
                    tenant_id, exec_id);
  count = found == 0 ||
          (found < 0 &&
           (closed || fgetxattr(marker, SR_UNCOUNTED_XATTR, NULL, 0) >= 0));
  q = n < 0    ? n
      : !count ? 0
               : append_index(w->root_fd, mst->st_uid, &w->lock_tries, line,
                              (size_t)n);

  /* None (root's gc in a user's root before any run of theirs ended) is
   * not worth a word.  A line that could not go into the caller's own
   * index for now (count_later: its lock held past gc's wait, no room, no
   * descriptor) keeps the marker, noted as closed by a gc: the next gc
   * finds the record closed and counts the run then (as its closer, where
   * the index cannot tell).  One that cannot go for good (a .metrics
   * another user made in a shared root: -EPERM), and a line for another
   * user's index (root's gc over their root), whose owner may keep it
   * locked for good: the run is closed all the same, uncounted, rather
   * than fail every gc after. */
  if (mine && count_later(q)) {
    (void)fsetxattr(marker, SR_UNCOUNTED_XATTR, "1", 1, 0);
    return gc_short(q, w->verbose, "count", tenant_id, exec_id);
  }
  if (w->verbose && q < 0 && q != -ENOENT)
    printf("cannot count %s/%s in the runs index: %s\n", tenant_id, exec_id,
           strerror(-q));
  else if (w->verbose && count && q >= 0 && !closed)
    printf("counted %s/%s in the runs index: its run ended without its "
           "line\n",
           tenant_id, exec_id);
  return 0;
}

/* One marker of .active: 1 when its run was dead and is now cleaned and
 * closed, 0 when it is left alone (live, not provably the run's, not
 * ours to manage), -errno when closing its record failed (the marker
 * stays, for the next gc). */
static int gc_one(struct gc_walk *w, const char *name) {
  _cleanup_close_ int marker = -1, tenant = -1, run = -1;
  _cleanup_free_ char *tenant_id = NULL, *ledger = NULL;
  const struct sr_trust_key *sign;
  size_t ledger_len = 0;
  struct sr_error err = {0};
  struct stat mst;
  char *exec_id;
  unsigned removed = 0;
  bool closed = false, ledger_closed, metadata_failed;
  int r, run_errno;

  /* Read-write: a dead run's ledger gets its last line through it.  A
   * caller who may not write it may not manage the run either. */
  marker = openat(w->active_fd, name,
                  O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
                      O_NOCTTY);
  if (marker < 0 || fstat(marker, &mst) < 0 || !S_ISREG(mst.st_mode))
    return 0;
  /* A live run holds its marker locked; only dead runs are touched. */
  if (flock(marker, LOCK_EX | LOCK_NB) < 0)
    return 0;
  /* As it is now that it is ours: another gc may have closed it and
   * unlinked it from .active (and its run directory) just before. */
  if (fstat(marker, &mst) < 0)
    return 0;
  tenant_id = strdup(name);
  if (!tenant_id)
    return -ENOMEM;
  exec_id = strchr(tenant_id, ':');
  if (!exec_id)
    return 0;
  *exec_id++ = '\0';
  if (!sr_valid_id(tenant_id) || !sr_valid_id(exec_id))
    return 0;
  tenant = openat(w->root_fd, tenant_id, OPEN_DIR_FLAGS);
  if (tenant >= 0)
    run = openat(tenant, exec_id, OPEN_DIR_FLAGS);
  run_errno = run < 0 ? errno : 0;
  r = run < 0 ? short_of(-run_errno) : marker_is_runs(marker, &mst, run);
  if (r < 0)
    return gc_short(r, w->verbose, "look at", tenant_id, exec_id);
  if (r == 0) {
    if (stillborn(&mst, tenant, exec_id, run, run_errno)) {
      if (w->verbose)
        printf("removed %s/.active/%s: its run was killed before its "
               "record began\n",
               w->resolved, name);
      (void)unlinkat(w->active_fd, name, 0);
      return 1;
    }
    if (w->verbose)
      printf("left %s/.active/%s alone: not the audit.jsonl of run %s/%s\n",
             w->resolved, name, tenant_id, exec_id);
    return 0;
  }
  /* Larger than any ledger skillrun writes: not a run's record, and not
   * to be read (its owner may have made it a sparse file of a terabyte,
   * free to them, read up to the cap by every gc of theirs). */
  if ((uint64_t)mst.st_size > SR_AUDIT_MAX_FILE) {
    if (w->verbose)
      printf("left %s/.active/%s alone: its audit.jsonl is larger than "
             "skillrun writes one (%jd bytes)\n",
             w->resolved, name, (intmax_t)mst.st_size);
    return 0;
  }
  /* A staging copy left for good (the marker gone) is worst on a tmpfs,
   * where it holds memory nothing refers to any more. */
  r = short_of(sr_rm_rf_at(run, "staging"));
  if (r == 0)
    r = remove_tmpfs_staging(w->resolved, name, marker, mst.st_uid);
  if (r < 0)
    return gc_short(r, w->verbose, "remove the staging copy of", tenant_id,
                    exec_id);
  (void)unlinkat(run, "metadata.json.tmp", 0);
  /* Read once, under the lock: the outputs it commits, its closing, its
   * metadata.json and its index line all come from this text (and what
   * sr_reclaim_run writes after it). */
  r = lseek(marker, 0, SEEK_SET) < 0 ? -errno : 0;
  if (r >= 0)
    r = sr_read_fd(marker, SR_AUDIT_MAX_FILE, &ledger, &ledger_len);
  if (r < 0) {
    if (w->verbose)
      printf("cannot close the record of %s/%s: cannot read audit.jsonl: "
             "%s\n",
             tenant_id, exec_id, strerror(-r));
    return r;
  }
  /* Before the record is closed: a gc killed in between does it again. */
  r = sr_reclaim_outputs(ledger, ledger_len, run, mst.st_uid, &removed);
  if (w->verbose && r < 0)
    printf("cannot clean the outputs of %s/%s: %s\n", tenant_id, exec_id,
           strerror(-r));
  else if (w->verbose && removed)
    printf("removed %u uncommitted output%s of %s/%s\n", removed,
           removed == 1 ? "" : "s", tenant_id, exec_id);
  /* An anchor says skillrun wrote the ledger: only one nobody but the
   * w->key's holder could have written is signed.  Another user's (root's gc
   * over their workspace, or a marker in a shared root's .active they
   * made first) is closed without one: they may have shaped it at will.
   * So is one whose owner the user namespace does not map, which shows as
   * the caller where the caller is the overflow uid. */
  sign = sr_fd_owner_is_me(marker, &mst) ? w->key : NULL;
  r = sr_reclaim_run(marker, &ledger, &ledger_len, run, tenant_id, exec_id,
                     mst.st_uid, mst.st_gid, sign, &closed, &err);
  if (w->verbose && r < 0)
    printf("cannot close the record of %s/%s: %s\n", tenant_id, exec_id,
           err.msg);
  /* Its metadata.json could not be replaced by what its owner put in its
   * place (a directory): no later gc could, and the ledger is closed. */
  metadata_failed = r < 0 && !strcmp(err.reason, "metadata");
  ledger_closed = r >= 0 || closed || metadata_failed;
  if (ledger_closed) {
    int q = gc_count(w, marker, &mst, ledger, ledger_len, tenant_id, exec_id,
                     closed);
    if (q < 0)
      return q;
  }
  if (metadata_failed && (err.err == EISDIR || err.err == EEXIST ||
                          err.err == ENOTEMPTY || err.err == ENOTDIR)) {
    if (w->verbose)
      printf("closed %s/%s without its metadata.json: %s\n", tenant_id, exec_id,
             err.msg);
    (void)unlinkat(w->active_fd, name, 0);
    return 1;
  }
  if (r < 0)
    return r;
  if (w->verbose)
    printf("%s %s/%s%s\n",
           r > 0 ? "closed abandoned run" : "removed leftovers of", tenant_id,
           exec_id,
           r > 0 && w->key && !sign ? " (not anchored: its ledger is another "
                                      "user's)"
                                    : "");
  (void)unlinkat(w->active_fd, name, 0);
  return 1;
}

/* sr_workspace_gc on the root open at root_fd, whose resolved path is
 * `resolved` (tmpfs staging names derive from it, as the runs' did). */
static int gc_at(int root_fd, const char *resolved,
                 const struct sr_trust_key *key, bool verbose, unsigned max,
                 const char *own, unsigned *n_cleaned, unsigned *n_failed,
                 struct sr_error *err) {
  _cleanup_close_ int active_fd = -1;
  struct sr_name_sample pick = {0};
  struct sr_dir d;
  const char *name;
  unsigned char type;
  unsigned cleaned = 0, failed = 0;
  struct gc_walk w = {.root_fd = root_fd,
                      .resolved = resolved,
                      .verbose = verbose,
                      .key = key,
                      .lock_tries = GC_LOCK_TRIES};
  int n, r;

  active_fd = openat(root_fd, ".active", OPEN_DIR_FLAGS);
  if (active_fd < 0) {
    if (errno == ENOENT)
      goto done;
    return sr_error_set(err, SR_EXIT_FAILED, errno, "gc",
                        "cannot open %s/.active", resolved);
  }
  w.active_fd = active_fd;
  if (max && sr_name_sample_init(&pick, max) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "gc", "gc");
  sr_dir_init(&d, active_fd);
  while ((n = sr_dir_next(&d, &name, &type)) > 0) {
    if (name[0] == '.')
      continue;
    if (max && !(own && !strcmp(name, own))) {
      sr_name_sample_offer(&pick, name);
      continue;
    }
    r = gc_one(&w, name);
    if (r > 0)
      cleaned++;
    else if (r < 0)
      failed++;
  }
  if (n < 0) {
    sr_name_sample_done(&pick);
    sr_index_ids_free(w.seen.ids);
    return sr_error_set(err, SR_EXIT_FAILED, -n, "gc", "cannot read %s/.active",
                        resolved);
  }
  for (unsigned i = 0; max && i < sr_name_sample_count(&pick); i++) {
    r = gc_one(&w, sr_name_sample_get(&pick, i));
    if (r > 0)
      cleaned++;
    else if (r < 0)
      failed++;
  }
  sr_name_sample_done(&pick);
  sr_index_ids_free(w.seen.ids);
done:
  if (n_cleaned)
    *n_cleaned = cleaned;
  if (n_failed)
    *n_failed = failed;
  return 0;
}

int sr_workspace_gc(const char *root, const struct sr_trust_key *key,
                    bool verbose, unsigned max, const char *own,
                    unsigned *n_cleaned, unsigned *n_failed,
                    struct sr_error *err) {
  _cleanup_close_ int root_fd = -1;
  char resolved[PATH_MAX];
  struct stat opened, named;

  struct sr_error open_err = {0};

  if (n_cleaned)
    *n_cleaned = 0;
  if (n_failed)
    *n_failed = 0;
  /* Not through another user's link, as a run would not make its
   * directory there (sr_workspace_open_root). */
  root_fd = sr_workspace_open_root(root, false, &open_err);
  if (root_fd < 0) {
    if (open_err.err == ENOENT)
      return 0;
    return sr_error_set(err, SR_EXIT_FAILED, 0, "gc", "%s", open_err.msg);
  }
  if (!realpath(root, resolved))
    return sr_error_set(err, SR_EXIT_FAILED, errno, "gc", "cannot resolve %s",
                        root);
  /* The tmpfs staging names derive from the resolved path: it must name
   * the directory opened.  Another user who owns a component of `root`
   * could otherwise switch it between the two, and have the markers of
   * their directory matched with the staging of runs under another root
   * (a live run of root's, say). */
  if (fstat(root_fd, &opened) < 0 || stat(resolved, &named) < 0 ||
      opened.st_dev != named.st_dev || opened.st_ino != named.st_ino)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "gc",
                        "workspace root %s changed while it was opened "
                        "(%s); not cleaned",
                        root, resolved);
  return gc_at(root_fd, resolved, key, verbose, max, own, n_cleaned, n_failed,
               err);
}

/* ------------------------------------------------------------ runs index */

#define INDEX_DIR ".metrics"
#define INDEX_FILE "runs.log"
/* What gc reads of an index at most, in a pass: some 200,000 runs. */
#define INDEX_WINDOW ((off_t)16 * 1024 * 1024)

/* A directory or file of the index is only trusted when `owner` (the
 * workspace root's owner) owns it and nobody else may write it. */
static int check_owned(int fd, uid_t owner, mode_t type) {
  struct stat st;

  if (fstat(fd, &st) < 0)
    return -errno;
  if ((st.st_mode & S_IFMT) != type)
    return -EBADF;
  if (st.st_uid != owner || (st.st_mode & 022))
    return -EPERM;
  return 0;
}

/* Appends line (len bytes, its '\n' last) to the locked index as a line
 * of its own: after a '\n' of its own when the index ends without one (a
 * line cut short, by an older skillrun or a crash), and never left cut
 * short itself (a full file system, a file-size limit: what was written of
 * it is taken back).  Otherwise a torn line and the next run's, another
 * tenant's maybe, would be one malformed line, that run never counted. */
static int append_line(int fd, const char *line, size_t len) {
  _cleanup_free_ char *buf = NULL;
  off_t end = lseek(fd, 0, SEEK_END);
  char last = '\n';
  size_t skip = 1;
  ssize_t n;
  int r;

  if (end < 0)
    return -errno;
  n = end > 0 ? pread(fd, &last, 1, end - 1) : 1;
  if (n < 0)
    return -errno;
  if (n != 1)
    return -EIO;
  buf = malloc(len + 1);
  if (!buf)
    return -ENOMEM;
  buf[0] = '\n';
  memcpy(buf + 1, line, len);
  if (last != '\n')
    skip = 0;
  r = sr_write_all(fd, buf + skip, len + 1 - skip);
  if (r < 0)
    (void)!ftruncate(fd, end); /* the write's error */
  return r;
}

/* sr_workspace_append_index into the index of `owner`: made when missing
 * only when that is the caller, so that root's gc never makes one of its
 * own in a user's workspace root (the user's runs could then not append
 * to it).  Its lock is waited for at most *lock_tries more times,
 * GC_LOCK_WAIT_US each, which it counts down (gc's budget is one for a
 * whole pass, a run's its own); then -EWOULDBLOCK. */
static int append_index(int root_fd, uid_t owner, unsigned *lock_tries,
                        const char *line, size_t len) {
  _cleanup_close_ int dir = -1, fd = -1;
  const bool create = owner == geteuid();
  int r;

  dir = openat(root_fd, INDEX_DIR, OPEN_DIR_FLAGS);
  if (dir < 0 && errno == ENOENT && create) {
    if (mkdirat(root_fd, INDEX_DIR, 0700) < 0 && errno != EEXIST)
      return -errno;
    dir = openat(root_fd, INDEX_DIR, OPEN_DIR_FLAGS);
  }
  if (dir < 0)
    return -errno;
  r = check_owned(dir, owner, S_IFDIR);
  if (r < 0)
    return r;
  /* O_NONBLOCK: a FIFO planted here must not hang the run's end; O_RDWR:
   * append_line reads the last byte. */
  fd = openat(dir, INDEX_FILE,
              O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
                  (create ? O_CREAT : 0),
              0600);
  if (fd < 0)
    return -errno;
  r = check_owned(fd, owner, S_IFREG);
  if (r < 0)
    return r;
  /* One write of one line with O_APPEND lands whole at the end; the lock
   * keeps a reader's view and other writers' lines apart even where
   * O_APPEND is weaker (NFS). */
  while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    if (errno != EWOULDBLOCK || *lock_tries == 0)
      return -errno;
    --*lock_tries;
    (void)usleep(GC_LOCK_WAIT_US);
  }
  /* Closing fd (the only one of its open file) releases the lock. */
  return append_line(fd, line, len);
}

/* The lines added to the index since s->off into s->ids (all of them the
 * first time, or when the index was moved away): only complete lines,
 * each at most a record long. */
/* A line of the index for gc's set of counted runs (a line that can be
 * no record is none). */
static int add_id_line(void *ctx, const char *p, size_t len) {
  return p ? sr_index_ids_add_line(ctx, p, len) : 0;
}

static int index_catch_up(int root_fd, uid_t owner, struct index_seen *s) {
  _cleanup_close_ int dir = -1, fd = -1;
  struct stat st;
  bool overlong = false;
  int r;

  dir = openat(root_fd, INDEX_DIR, OPEN_DIR_FLAGS);
  if (dir >= 0)
    fd =
        openat(dir, INDEX_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT)
    return -errno;
  if (fd >= 0) {
    r = check_owned(fd, owner, S_IFREG);
    if (r < 0)
      return r;
    if (fstat(fd, &st) < 0)
      return -errno;
  }
  if (!s->ids || fd < 0 || st.st_dev != s->dev || st.st_ino != s->ino ||
      st.st_size < s->off) {
    sr_index_ids_free(s->ids);
    s->ids = sr_index_ids_new();
    if (!s->ids)
      return -ENOMEM;
    s->off = 0;
    s->dev = fd >= 0 ? st.st_dev : 0;
    s->ino = fd >= 0 ? st.st_ino : 0;
  }
  if (fd < 0)
    return 0;
  /* Its owner writes it, and a sparse file costs them nothing: of a
   * larger index, only the last INDEX_WINDOW bytes (the recent runs, those
   * likely to have died unclosed) are read, from their first whole line;
   * the rest is taken for lines without an id. */
  if (st.st_size - s->off > INDEX_WINDOW) {
    s->off = st.st_size - INDEX_WINDOW;
    sr_index_ids_skip(s->ids);
    overlong = true;
  }
  /* Up to its size now: what its owner appends meanwhile is for the next
   * call. */
  return sr_index_each_line(fd, &s->off, st.st_size, overlong, add_id_line,
                            s->ids);
}

/* 1 when the owner's index counts the run, 0 when it does not, -1 when
 * that is not known (sr_index_ids_find, or the index cannot be read), and
 * -errno (never -1) when reading it ran short (short_of): gc then tries
 * again later. */
static int index_counted(int root_fd, uid_t owner, struct index_seen *s,
                         const char *tenant, const char *execution,
                         int64_t started_s) {
  int r = index_catch_up(root_fd, owner, s);

  if (r < 0)
    return short_of(r) ? r : -1;
  return sr_index_ids_find(s->ids, tenant, execution, started_s);
}

int sr_workspace_append_index(int root_fd, const char *line, size_t len) {
  unsigned tries = RUN_LOCK_TRIES;

  return append_index(root_fd, geteuid(), &tries, line, len);
}

/* Read side: the workspace root's owner, root and the reader itself may
 * own what it reads (root reading a user's workspace; a user's runs under
 * a root-owned directory). */
static int check_readable_owner(int fd, uid_t root_owner, mode_t type) {
  struct stat st;
  int r = check_owned(fd, root_owner, type);

  if (r != -EPERM)
    return r;
  if (fstat(fd, &st) < 0)
    return -errno;
  return (st.st_uid == 0 || st.st_uid == geteuid()) && !(st.st_mode & 022)
             ? 0
             : -EPERM;
}

int sr_workspace_open_index(int root_fd, int *ret_fd) {
  _cleanup_close_ int dir = -1, fd = -1;
  struct stat root;
  int r;

  *ret_fd = -1;
  if (fstat(root_fd, &root) < 0)
    return -errno;
  dir = openat(root_fd, INDEX_DIR, OPEN_DIR_FLAGS);
  if (dir < 0)
    return -errno;
  r = check_readable_owner(dir, root.st_uid, S_IFDIR);
  if (r < 0)
    return r;
  fd = openat(dir, INDEX_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  r = check_readable_owner(fd, root.st_uid, S_IFREG);
  if (r < 0)
    return r;
  *ret_fd = TAKE_FD(fd);
  return 0;
}

int sr_workspace_count_live(int root_fd, uint64_t max, uint64_t *n_live) {
  _cleanup_close_ int active = -1;
  struct dirent *de;
  uint64_t n = 0, seen = 0;
  DIR *d;
  int dupfd;

  *n_live = 0;
  active = openat(root_fd, ".active", OPEN_DIR_FLAGS);
  if (active < 0)
    return errno == ENOENT ? 0 : -errno;
  dupfd = fcntl(active, F_DUPFD_CLOEXEC, 3);
  if (dupfd < 0)
    return -errno;
  d = fdopendir(dupfd);
  if (!d) {
    int r = -errno;
    safe_close(dupfd);
    return r;
  }
  while ((de = readdir(d)) && seen < max) {
    _cleanup_close_ int marker = -1;

    if (de->d_name[0] == '.')
      continue;
    seen++;
    marker = openat(active, de->d_name,
                    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (marker < 0)
      continue;
    /* A live run holds its marker locked (sr_workspace_create); a dead
     * run's marker is only held for this instant. */
    if (flock(marker, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
      n++;
  }
  closedir(d);
  *n_live = n;
  return seen < max ? 0 : -E2BIG;
}
