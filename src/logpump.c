/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdutil.h"
#include "logpump.h"
#include "sync.h"

void sr_logpump_init(struct sr_logpump *lp, int stdout_r, int stderr_r,
                     int stdout_log, int stderr_log, uint64_t cap,
                     int passthrough_fd) {
  memset(lp, 0, sizeof(*lp));
  lp->in_fd[0] = stdout_r;
  lp->in_fd[1] = stderr_r;
  lp->out_fd[0] = stdout_log;
  lp->out_fd[1] = stderr_log;
  lp->cap = cap;
  lp->passthrough_fd = passthrough_fd;
  lp->pass_stall_ms = SR_LOG_PASS_STALL_MS;
  lp->null_fd = -1;
  lp->pass_own_fd = -1;
}

#define DISCARD_PIPE_SIZE (1 << 20)

/* The end of stream s's pipe. */
static void stream_end(struct sr_logpump *lp, int s);

/* At the cap: from here on, the pipes are drained into /dev/null, in
 * larger reads (a bigger pipe: fewer wakeups).  Best effort: without
 * either, drain reads and counts as before. */
static void start_discarding(struct sr_logpump *lp) {
  lp->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC | O_NOCTTY);
  for (int s = 0; s < 2; s++)
    if (lp->in_fd[s] >= 0)
      (void)fcntl(lp->in_fd[s], F_SETPIPE_SZ, DISCARD_PIPE_SIZE);
}

/* One splice(2) of at most max bytes of stream s into out, counted in
 * *count: > 0 moved, 0 nothing now (EAGAIN, or the stream's end, which
 * closes it), or -errno. */
static ssize_t splice_some(struct sr_logpump *lp, int s, int out, size_t max,
                           uint64_t *count) {
  for (;;) {
    ssize_t n = splice(lp->in_fd[s], NULL, out, NULL, max, SPLICE_F_NONBLOCK);
    if (n > 0) {
      *count += (uint64_t)n;
      return n;
    }
    if (n == 0) {
      stream_end(lp, s);
      return 0;
    }
    if (errno != EINTR)
      return errno == EAGAIN ? 0 : -errno;
  }
}

/* Past the cap: what is available on stream s, spliced to /dev/null and
 * counted.  1 when splice cannot be used (the caller reads instead). */
static int discard(struct sr_logpump *lp, int s) {
  for (int round = 0; round < 16 && lp->in_fd[s] >= 0; round++) {
    ssize_t n =
        splice_some(lp, s, lp->null_fd, DISCARD_PIPE_SIZE, &lp->dropped[s]);
    if (n == 0)
      return 0;
    if (n < 0) {
      lp->null_fd = safe_close(lp->null_fd);
      return 1;
    }
  }
  return 0;
}

/*
 * A terminal is written through an open file of its own, non-blocking
 * (sr_tty_reopen_nonblock), opened once, after the sandbox's fork, so that
 * nothing of the run holds it.  Where that fails the caller's file is
 * written as before.
 */
static void pass_open_tty(struct sr_logpump *lp) {
  int fd;

  lp->pass_reopened = true;
  fd = sr_tty_reopen_nonblock(lp->passthrough_fd);
  if (fd < 0)
    return;
  lp->pass_own_fd = fd;
  lp->passthrough_fd = fd;
}

/*
 * --log-passthrough: stream s's kept bytes on the caller's terminal,
 * escaped (sr_term_escape: no control sequence reaches it, neither an OSC
 * 52 clipboard write nor a cursor movement) and each line prefixed with
 * its stream, so that nothing the skill prints passes for a line of
 * skillrun's own, such as a forged execution_completed event.  A closed
 * terminal must not stop the run (the log has the bytes), nor one that
 * takes nothing (a pager waiting for a key, a reader asleep): a blocking
 * write there held the whole supervisor, its wall clock and sampler too,
 * for as long as the skill liked.  The writes are bounded
 * (SR_LOG_PASS_STALL_MS in all); at the first failure the passthrough
 * stops for the rest of the run, and pass_err says why.
 */
static void pass_write(struct sr_logpump *lp, const void *buf, size_t n) {
  int r;

  if (lp->passthrough_fd < 0 || n == 0)
    return;
  if (!lp->pass_reopened)
    pass_open_tty(lp);
  r = sr_write_bounded_cancellable(lp->passthrough_fd, &lp->pass_type, buf, n,
                                   &lp->pass_stall_ms);
  if (r < 0) {
    lp->pass_err = -r;
    /* skillrun's stderr is not ours to close; the terminal opened again
     * is. */
    lp->passthrough_fd = -1;
    lp->pass_own_fd = safe_close(lp->pass_own_fd);
  }
}

#define PASS_SLICE 4096
static void pass_through(struct sr_logpump *lp, int s, const char *buf,
                         size_t n) {
  static const char *const prefix[2] = {"[skill stdout] ", "[skill stderr] "};
  char out[SR_TERM_ESCAPE_MAX(PASS_SLICE)];

  /* The other stream's open line is ended first, and its continuation
   * gets its prefix again: no line ever mixes the two. */
  if (n > 0 && lp->mid_line[!s]) {
    pass_write(lp, "\n", 1);
    lp->mid_line[!s] = false;
  }
  while (n > 0 && lp->passthrough_fd >= 0) {
    const char *nl = memchr(buf, '\n', n < PASS_SLICE ? n : PASS_SLICE);
    size_t k = nl ? (size_t)(nl - buf) + 1 : (n < PASS_SLICE ? n : PASS_SLICE);
    size_t o;

    if (!lp->mid_line[s])
      pass_write(lp, prefix[s], strlen(prefix[s]));
    o = sr_term_escape(&lp->term[s], buf, k, out);
    pass_write(lp, out, o);
    lp->mid_line[s] = !nl;
    buf += k;
    n -= k;
  }
}

/* The end of stream s: what the escaping held, and the open line closed. */
static void pass_through_end(struct sr_logpump *lp, int s) {
  char out[SR_TERM_ESCAPE_MAX(0)];
  size_t o = sr_term_escape_flush(&lp->term[s], out);

  pass_write(lp, out, o);
  if (lp->mid_line[s])
    pass_write(lp, "\n", 1);
  lp->mid_line[s] = false;
}

static void stream_end(struct sr_logpump *lp, int s) {
  lp->in_fd[s] = safe_close(lp->in_fd[s]);
  if (lp->passthrough_fd >= 0)
    pass_through_end(lp, s);
}

/* The most one splice moves below the cap: more than a pipe holds (it
 * moves what the pipe has), and the room left bounds it further. */
#define KEEP_SPLICE_MAX (1 << 20)

/*
 * Below the cap, without --log-passthrough: splice(2) moves stream s's
 * bytes from the pipe into its log file, no user buffer, no copy through
 * user space, at most the room left, so the cap stays exact.  Returns 0
 * when done for this wakeup (the pipe empty, or at EOF), 1 when the
 * caller must read instead (at the cap, to see whether more arrives and
 * write the marker; or splice refused: a log file that cannot take it,
 * remembered), or -errno (a log write failure).
 */
static int keep_by_splice(struct sr_logpump *lp, int s) {
  for (int round = 0; round < 16 && lp->in_fd[s] >= 0; round++) {
    uint64_t room = lp->cap - (lp->kept[0] + lp->kept[1]);
    ssize_t n;

    if (room == 0)
      return 1;
    n = splice_some(lp, s, lp->out_fd[s],
                    room < KEEP_SPLICE_MAX ? (size_t)room : KEEP_SPLICE_MAX,
                    &lp->kept[s]);
    if (n == 0)
      return 0;
    if (n == -EINVAL) {
      lp->no_splice = true;
      return 1;
    }
    if (n < 0)
      return (int)n;
  }
  return 0;
}

/* The read path's buffer: passthrough escapes what it shows, and at the cap
 * one read finds the overflow.  Small, as it is on the supervisor's stack
 * (its pages stay resident); splice carries the volume. */
#define READ_BUF (4 * 1024)

int sr_logpump_drain(struct sr_logpump *lp, int s, bool *hit_cap) {
  char buf[READ_BUF];
  int r;

  *hit_cap = false;
  if (lp->null_fd >= 0 && discard(lp, s) == 0)
    return 0;
  if (!lp->truncated && lp->passthrough_fd < 0 && !lp->no_splice) {
    r = keep_by_splice(lp, s);
    if (r <= 0)
      return r;
  }
  /* Bounded per call so that one chatty stream cannot starve the loop. */
  for (int round = 0; round < 16 && lp->in_fd[s] >= 0; round++) {
    ssize_t n = read(lp->in_fd[s], buf, sizeof(buf));
    uint64_t room, keep;

    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        return 0;
      return -errno;
    }
    if (n == 0) {
      stream_end(lp, s);
      return 0;
    }
    room = lp->cap - (lp->kept[0] + lp->kept[1]);
    keep = (uint64_t)n < room ? (uint64_t)n : room;
    if (keep > 0) {
      r = sr_write_all(lp->out_fd[s], buf, (size_t)keep);
      if (r < 0)
        return r;
      if (lp->passthrough_fd >= 0)
        pass_through(lp, s, buf, (size_t)keep);
      lp->kept[s] += keep;
    }
    if (keep < (uint64_t)n) {
      lp->dropped[s] += (uint64_t)n - keep;
      if (!lp->truncated) {
        char marker[160];
        lp->truncated = true;
        *hit_cap = true;
        snprintf(marker, sizeof(marker),
                 "\n[skillrun: log cap of %" PRIu64
                 " bytes reached; further output dropped]\n",
                 lp->cap);
        r = sr_write_all(lp->out_fd[s], marker, strlen(marker));
        if (r < 0)
          return r;
        start_discarding(lp);
        if (lp->null_fd >= 0)
          return 0; /* the rest by splice, at the next wakeup */
      }
    }
  }
  return 0;
}

int sr_logpump_share_counts(struct sr_logpump *lp) {
  _cleanup_close_ int fd = -1;
  void *p;

  if (lp->shared)
    return -EALREADY;
  fd = memfd_create("skillrun-discarded", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return -errno;
  /* Sealed: init cannot shrink it under the supervisor's mapping. */
  if (ftruncate(fd, SR_DISCARD_COUNTS_SIZE) < 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
    return -errno;
  p = mmap(NULL, SR_DISCARD_COUNTS_SIZE, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return -errno;
  lp->shared = p;
  return TAKE_FD(fd);
}

void sr_logpump_hand(struct sr_logpump *lp, int s) {
  if (lp->shared && lp->in_fd[s] >= 0)
    lp->handed[s] = true;
}

/* init's counts into dropped[], once init writes them no more. */
static void fold_shared(struct sr_logpump *lp) {
  if (!lp->shared)
    return;
  for (int s = 0; s < 2; s++) {
    uint64_t n = __atomic_load_n(&lp->shared[s], __ATOMIC_ACQUIRE);
    lp->dropped[s] =
        n > UINT64_MAX - lp->dropped[s] ? UINT64_MAX : lp->dropped[s] + n;
  }
  (void)munmap(lp->shared, SR_DISCARD_COUNTS_SIZE);
  lp->shared = NULL;
}

void sr_logpump_take_back(struct sr_logpump *lp) {
  lp->handed[0] = lp->handed[1] = false;
  fold_shared(lp);
}

int sr_logpump_poll_fd(const struct sr_logpump *lp, int s) {
  return lp->handed[s] ? -1 : lp->in_fd[s];
}

void sr_logpump_done(struct sr_logpump *lp) {
  for (int s = 0; s < 2; s++) {
    lp->in_fd[s] = safe_close(lp->in_fd[s]);
    lp->out_fd[s] = safe_close(lp->out_fd[s]);
  }
  lp->null_fd = safe_close(lp->null_fd);
  lp->pass_own_fd = safe_close(lp->pass_own_fd);
  sr_logpump_take_back(lp);
}
