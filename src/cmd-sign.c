/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --sign KEY --tier TIER --signature OUT BUNDLE: a publisher's statement
 * (skillrun(1) SIGNED BUNDLES). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "cli.h"
#include "cmd.h"
#include "fdutil.h"
#include "manifest.h"
#include "trust.h"

/* The statement's text for the bundle at `real`. */
static int make_statement(const struct sr_args *a, const char *real,
                          struct sr_bundle *b, struct sr_manifest *m,
                          bool *have_manifest, struct sr_trust_key **key,
                          char **text, size_t *len, struct sr_error *err) {
  struct sr_bundle_caps caps;
  int r;

  sr_bundle_caps_default(&caps);
  r = sr_bundle_stage(real, -1, &caps, false, b, err);
  if (r < 0)
    return r;
  r = sr_manifest_parse(b->skill_md, b->skill_md_len, basename((char *)real), m,
                        err);
  if (r < 0)
    return sr_bundle_error_named(err, real, r);
  *have_manifest = true;
  r = sr_trust_key_load(a->sign_key, true, key, err);
  if (r < 0)
    return r;
  /* cli.c lets --tenant through with --tier tenant only. */
  return sr_statement_sign(
      *key, sr_tier_from_name(a->tier),
      sr_tier_from_name(a->tier) == SR_TIER_TENANT ? a->tenant : NULL, m->name,
      m->version, b->digest, (int64_t)time(NULL), text, len, err);
}

/* Whether the directory open at dir is the bundle's (st) or below it:
 * each parent in turn, up to the root.  1, 0, or -errno. */
static int inside(int dir, const struct stat *bundle) {
  _cleanup_close_ int cur = fcntl(dir, F_DUPFD_CLOEXEC, 3);
  struct stat st, up;

  if (cur < 0)
    return -errno;
  for (unsigned depth = 0; depth < PATH_MAX / 2; depth++) {
    int parent;

    if (fstat(cur, &st) < 0)
      return -errno;
    if (st.st_dev == bundle->st_dev && st.st_ino == bundle->st_ino)
      return 1;
    parent = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (parent < 0)
      return -errno;
    if (fstat(parent, &up) < 0) {
      (void)close(parent);
      return -errno;
    }
    (void)close(cur);
    cur = parent;
    if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
      return 0; /* the root */
  }
  return 0;
}

/* The statement, whole, as the new file name in dir (an O_PATH fd): made
 * unnamed (O_TMPFILE), written, then linked, so that no reader and no
 * killed --sign ever leaves a partial statement at the name, where --sign
 * would never replace it and a run would find BUNDLE.sig unreadable.
 * linkat(2) neither overwrites nor follows a link planted at the name
 * (-EEXIST).  Where O_TMPFILE or /proc is missing, created in place
 * (O_EXCL | O_NOFOLLOW) and removed again when it cannot be written whole.
 * *what: the step that failed, "create" or "write". */
static int publish(int dir, const char *name, const char *text, size_t len,
                   const char **what) {
  _cleanup_close_ int fd = -1;
  char proc[64];
  int r;

  *what = "write";
  fd = openat(dir, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0644);
  if (fd >= 0) {
    r = sr_write_all(fd, text, len);
    if (r < 0)
      return r;
    *what = "create";
    if (linkat(fd, "", dir, name, AT_EMPTY_PATH) == 0)
      return 0;
    if (errno == EEXIST)
      return -EEXIST;
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, dir, name, AT_SYMLINK_FOLLOW) == 0)
      return 0;
    if (errno == EEXIST)
      return -EEXIST;
    (void)safe_close(fd); /* no /proc: in place, as below */
  }
  *what = "create";
  fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
              0644);
  if (fd < 0)
    return -errno;
  *what = "write";
  r = sr_write_all(fd, text, len);
  if (r < 0 || close(TAKE_FD(fd)) < 0) {
    if (r >= 0)
      r = -errno;
    (void)unlinkat(dir, name, 0); /* a partial statement is useless */
    return r;
  }
  return 0;
}

/* Never overwrites: a statement is a publisher's record.  Not made
 * through another user's symbolic link (sr_open_dir_path), nor removed
 * through one when it cannot be written whole.  *dir_out: the directory
 * it is in, to remove it from when the run fails after all. */
static int write_statement(const char *path, const char *bundle,
                           const char *text, size_t len, int *dir_out) {
  _cleanup_close_ int dir = -1;
  _cleanup_free_ char *d = NULL;
  const char *slash = strrchr(path, '/');
  const char *name = slash ? slash + 1 : path;
  struct sr_foreign_link fl;
  const char *what = "create";
  int r;

  if (!slash)
    d = strdup(".");
  else
    d = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
  dir = d ? sr_open_dir_path(AT_FDCWD, d, false, 0, &fl) : -ENOMEM;
  if (dir == -SR_EFOREIGNLINK) {
    char why[PATH_MAX + 160];

    sr_log_error("cannot create %s: %s", path,
                 sr_foreign_link_why(&fl, why, sizeof(why)));
    return SR_EXIT_FAILED;
  }
  /* A statement inside the bundle it signs would change the bundle's
   * digest, and never verify. */
  if (dir >= 0) {
    struct stat bst;

    r = stat(bundle, &bst) < 0 ? -errno : inside(dir, &bst);
    if (r != 0) {
      if (r > 0)
        sr_log_error("cannot create %s inside the bundle it signs: it would "
                     "change the bundle's digest and never verify (write it "
                     "beside the bundle, as BUNDLE.sig)",
                     path);
      else
        sr_log_error("cannot create %s: %s", path, strerror(-r));
      return SR_EXIT_FAILED;
    }
  }
  if (dir < 0) {
    sr_log_error("cannot create %s: %s", path, strerror(-dir));
    return SR_EXIT_FAILED;
  }
  r = publish(dir, name, text, len, &what);
  if (r < 0) {
    sr_log_error("cannot %s %s: %s", what, path, strerror(-r));
    return SR_EXIT_FAILED;
  }
  *dir_out = TAKE_FD(dir);
  return 0;
}

int sr_cmd_sign(const struct sr_args *a) {
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  _cleanup_free_ char *real = NULL, *text = NULL;
  _cleanup_close_ int dir = -1;
  struct sr_bundle b = {0};
  struct sr_manifest m;
  bool have_manifest = false;
  struct sr_error err = {0};
  size_t len = 0;
  int code;

  real = realpath(a->bundle, NULL);
  if (!real) {
    sr_log_error("bundle %s: %s", a->bundle, strerror(errno));
    return SR_EXIT_REFUSED;
  }
  if (make_statement(a, real, &b, &m, &have_manifest, &key, &text, &len, &err) <
      0) {
    sr_log_error("%s", err.msg);
    code = err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  } else {
    code = write_statement(a->signature, real, text, len, &dir);
  }
  if (code == 0) {
    int r = printf("signed %s %s (%s) as %s%s%s with key %s -> %s\n", m.name,
                   m.version, b.digest, a->tier,
                   strcmp(a->tier, "tenant") ? "" : " for tenant ",
                   strcmp(a->tier, "tenant") ? "" : a->tenant,
                   sr_trust_key_id(key), a->signature);
    /* A caller told of a failure must not find the statement made: it
     * would not be made again (never overwritten). */
    if (r < 0 || fflush(stdout) != 0) {
      const char *slash = strrchr(a->signature, '/');
      sr_log_error("cannot write to standard output: %s; %s not kept",
                   strerror(errno), a->signature);
      (void)unlinkat(dir, slash ? slash + 1 : a->signature, 0);
      code = SR_EXIT_FAILED;
    }
  }
  if (have_manifest)
    sr_manifest_done(&m);
  sr_bundle_done(&b);
  return code;
}
