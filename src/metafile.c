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

#include "error.h"
#include "fdutil.h"
#include "macro.h"
#include "metafile.h"

int sr_metafile_write_at(int dirfd, const char *name, const json_t *meta,
                         mode_t mode, uid_t owner, gid_t group, int *ret_fd,
                         struct sr_error *err) {
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int fd = -1;
  int r;

  text = json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  if (!text)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "metadata", "metadata");
  fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
              mode);
  if (fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "metadata",
                        "cannot write metadata.json");
  r = sr_write_all(fd, text, strlen(text));
  if (r >= 0)
    r = sr_write_all(fd, "\n", 1);
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
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "metadata",
                        "cannot write metadata.json");
  return 0;
}

int sr_metafile_replace_at(int run_fd, const json_t *meta, uid_t owner,
                           gid_t group, struct sr_error *err) {
  int r;

  (void)unlinkat(run_fd, "metadata.json.tmp", 0); /* stale temp file */
  r = sr_metafile_write_at(run_fd, "metadata.json.tmp", meta, 0600, owner,
                           group, NULL, err);
  if (r < 0)
    return r;
  if (renameat(run_fd, "metadata.json.tmp", run_fd, "metadata.json") < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "metadata",
                        "cannot write metadata.json");
  return 0;
}
