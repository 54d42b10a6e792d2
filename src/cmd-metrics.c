/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --metrics: the Prometheus text of the runs under a workspace root, from
 * its runs index (metrics.h, skillrun(1) METRICS).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "fdutil.h"
#include "metrics.h"
#include "workspace.h"

/* Markers of live runs looked at, at most (a uid pool has 64 slots; an
 * ordinary user's runs are as many as it starts). */
#define LIVE_MAX 100000

/*
 * Every complete line of the index into m.  A line longer than a record
 * can be, or one that does not parse, is skipped and counted; an
 * unterminated last line is a run's record being appended right now and
 * is left for the next scrape.
 */
struct read_ctx {
  struct sr_metrics *m;
  uint64_t *skipped;
};

/* One line of the index: counted, or skipped when it is no record. */
static int count_line(void *ctx, const char *p, size_t len) {
  struct read_ctx *c = ctx;
  struct sr_run_record rec;

  if (!p || sr_record_parse(p, len, &rec) < 0) {
    (*c->skipped)++;
    return 0;
  }
  return sr_metrics_add(c->m, &rec) < 0 ? -ENOMEM : 0;
}

static int read_index(int fd, struct sr_metrics *m, uint64_t *skipped) {
  struct read_ctx c = {.m = m, .skipped = skipped};
  off_t off = 0;

  return sr_index_each_line(fd, &off, -1, false, count_line, &c);
}

int sr_cmd_metrics(const struct sr_args *a) {
  _cleanup_free_ char *root = NULL, *text = NULL;
  _cleanup_close_ int root_fd = -1, index_fd = -1;
  struct sr_error err = {0};
  struct sr_metrics *m = NULL;
  uint64_t skipped = 0, live = 0;
  int64_t in_progress = -1;
  size_t len = 0;
  int r;

  if (sr_cmd_platform(a, &root, NULL, &err) < 0 || !root) {
    sr_log_error("%s", err.msg[0] ? err.msg : "no workspace root");
    return SR_EXIT_FAILED;
  }
  m = sr_metrics_new();
  if (!m) {
    sr_log_error("out of memory");
    return SR_EXIT_FAILED;
  }
  /* No root or no index yet: no runs, which is worth saying as zeros.
   * Not through another user's link (sr_workspace_open_root), whose
   * target would be counted as this root's runs. */
  root_fd = sr_workspace_open_root(root, false, &err);
  if (root_fd < 0 && err.err != ENOENT) {
    sr_log_error("%s", err.msg);
    sr_metrics_free(m);
    return SR_EXIT_FAILED;
  }
  r = root_fd >= 0 ? sr_workspace_open_index(root_fd, &index_fd) : -ENOENT;
  if (r == -EPERM || r == -EBADF || r == -ELOOP) {
    sr_log_error("%s/.metrics/runs.log: not a regular file of the workspace "
                 "root's owner writable only by it; not read",
                 root);
    sr_metrics_free(m);
    return SR_EXIT_FAILED;
  }
  if (r < 0 && r != -ENOENT) {
    sr_log_error("cannot open %s/.metrics/runs.log: %s", root, strerror(-r));
    sr_metrics_free(m);
    return SR_EXIT_FAILED;
  }
  r = index_fd >= 0 ? read_index(index_fd, m, &skipped) : 0;
  if (r < 0) {
    sr_log_error("cannot read %s/.metrics/runs.log: %s", root, strerror(-r));
    sr_metrics_free(m);
    return SR_EXIT_FAILED;
  }
  if (root_fd >= 0 && sr_workspace_count_live(root_fd, LIVE_MAX, &live) == 0)
    in_progress = (int64_t)live;
  else if (root_fd < 0)
    in_progress = 0;
  sr_metrics_set_reader(m, skipped, in_progress);
  text = sr_metrics_render(m, &len);
  sr_metrics_free(m);
  if (!text) {
    sr_log_error("out of memory");
    return SR_EXIT_FAILED;
  }
  errno = 0;
  if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
    /* A reader that stopped early (| head) is done with the text, as
     * coreutils' are when SIGPIPE ends them: not an error of ours. */
    if (errno == EPIPE)
      return 0;
    sr_log_error("cannot write the metrics: %s", strerror(errno));
    return SR_EXIT_FAILED;
  }
  return 0;
}
