/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Writing a run's metadata.json (metafile.h): below workspace.c and
 * reclaim.c, which both write one.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "error.h"
#include "fdutil.h"
#include "macro.h"
#include "metafile.h"

/* sr_metafile_write_at without the error record: 0 or -errno. */
static int write_file(int dirfd, const char *name, const json_t *meta,
                      mode_t mode, uid_t owner, gid_t group, int *ret_fd) {
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int fd = -1;
  size_t len;
  int r;

  /* Room for the final newline, in the same write. */
  text = sr_json_dump(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER, 1, &len);
  if (!text)
    return -ENOMEM;
  text[len++] = '\n';
  text[len] = '\0';
  fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              mode);
  if (fd < 0)
    return -errno;
  r = sr_write_all(fd, text, len);
  if (r >= 0 && fchmod(fd, mode) < 0)
    r = -errno;
  if (r >= 0 && owner != (uid_t)-1 && fchown(fd, owner, group) < 0)
    r = -errno;
  if (r >= 0 && ret_fd) {
    /* The very file written (not a name looked up again), for init to
     * check what it binds against (sandbox.h). */
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
    *ret_fd = open(self, O_PATH | O_CLOEXEC);
    if (*ret_fd < 0)
      r = -errno;
  }
  return r;
}

/* write_file's failure r (< 0) as the run's error. */
static int write_failed(struct sr_error *err, int r) {
  return sr_error_set(err, SR_EXIT_FAILED, -r, "metadata",
                      r == -ENOMEM ? "metadata" : "cannot write metadata.json");
}

int sr_metafile_write_at(int dirfd, const char *name, const json_t *meta,
                         mode_t mode, uid_t owner, gid_t group, int *ret_fd,
                         struct sr_error *err) {
  int r = write_file(dirfd, name, meta, mode, owner, group, ret_fd);

  return r < 0 ? write_failed(err, r) : 0;
}

int sr_metafile_replace_at(int run_fd, const json_t *meta, uid_t owner,
                           gid_t group, struct sr_error *err) {
  int r;

  r = write_file(run_fd, "metadata.json.tmp", meta, 0600, owner, group, NULL);
  if (r == -EEXIST) {
    /* A temporary file left by a run that died between the two steps. */
    (void)unlinkat(run_fd, "metadata.json.tmp", 0);
    r = write_file(run_fd, "metadata.json.tmp", meta, 0600, owner, group, NULL);
  }
  /* Never left behind half written (a full file system): the run's
   * directory holds metadata.json or nothing of it. */
  if (r < 0) {
    (void)unlinkat(run_fd, "metadata.json.tmp", 0);
    return write_failed(err, r);
  }
  if (renameat(run_fd, "metadata.json.tmp", run_fd, "metadata.json") < 0) {
    r = -errno;
    (void)unlinkat(run_fd, "metadata.json.tmp", 0);
    return sr_error_set(err, SR_EXIT_FAILED, -r, "metadata",
                        "cannot write metadata.json");
  }
  return 0;
}
