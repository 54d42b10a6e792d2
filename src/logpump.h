/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "util.h"

enum { SR_STREAM_STDOUT = 0, SR_STREAM_STDERR = 1 };

/* --log-passthrough: how long, in all, the supervisor waits for the
 * caller's standard error to take the skill's output before it stops
 * copying it there (the logs keep it).  Meanwhile nothing else is done:
 * no timer, no sample, no log. */
#define SR_LOG_PASS_STALL_MS 5000

/*
 * The skill's stdout and stderr arrive on pipes; the supervisor moves them
 * into logs/stdout.log and logs/stderr.log until the two together reach
 * the cap (by splice(2), no user buffer; read(2) and write(2) where the
 * bytes must also be escaped for --log-passthrough, or where splice is
 * refused), then writes one truncation marker and keeps draining (and
 * counting) so the skill never blocks on a full pipe, from pipes grown
 * to 1 MiB.  Past the cap the supervisor hands both pipes to the sandbox's
 * init (SR_SYNC_DISCARD, init.c), which splices them into /dev/null inside
 * the run's cgroup and counts into a shared page: a flood's discarding is
 * the run's CPU, not the supervisor's.  It takes them back, and drains
 * the rest itself (splice to /dev/null), once init has reported the
 * skill's exit or is gone; where the hand-over fails it drains all of it.
 */
struct sr_logpump {
  int in_fd[2];       /* pipe read ends, O_NONBLOCK; -1 at EOF */
  int out_fd[2];      /* log files */
  int passthrough_fd; /* -1, or skillrun's stderr for --log-passthrough */
  /* The passthrough's writes, bounded (sr_write_bounded): what is left of
   * SR_LOG_PASS_STALL_MS, the fd's kind, and why it stopped (an errno,
   * ETIMEDOUT: the wait ran out), after which passthrough_fd is -1. */
  uint64_t pass_stall_ms;
  mode_t pass_type;
  int pass_err;
  /* A terminal, opened again non-blocking (pass_open_tty): then the
   * passthrough's fd, ours to close; -1.  pass_reopened: tried. */
  int pass_own_fd;
  bool pass_reopened;
  struct sr_term_escape term[2]; /* the passthrough's escaping, per stream */
  bool mid_line[2];              /* ... and whether a line is open */
  uint64_t cap;
  uint64_t kept[2];
  uint64_t dropped[2];
  bool truncated;
  /* Past the cap, what arrives is spliced from the pipe to /dev/null
   * (counted, never copied); -1 until the cap, or where splice fails. */
  int null_fd;
  /* Streams whose pipe init drains now (not polled here), and init's
   * counts of what it discarded: a shared page, NULL before the cap. */
  bool handed[2];
  uint64_t *shared;
  /* Below the cap, kept bytes are spliced from the pipe to the log file
   * unless passthrough must see them; true once splice refused (EINVAL). */
  bool no_splice;
};

void sr_logpump_init(struct sr_logpump *lp, int stdout_r, int stderr_r,
                     int stdout_log, int stderr_log, uint64_t cap,
                     int passthrough_fd);

/* Reads what is available on stream s.  *hit_cap is set when this call
 * crossed the cap (the caller emits log_truncated).  At EOF in_fd[s]
 * becomes -1.  Returns 0 or -errno (a log write failure). */
int sr_logpump_drain(struct sr_logpump *lp, int s, bool *hit_cap);

/* Past the cap: the memfd holding the counts init will write (two
 * uint64_t, sealed against resizing), mapped here; -errno if not. */
int sr_logpump_share_counts(struct sr_logpump *lp);
/* Stream s is init's to drain now, until sr_logpump_take_back. */
void sr_logpump_hand(struct sr_logpump *lp, int s);
/* init drains no more (it reported the skill's exit, or is gone): every
 * stream is polled here again and init's counts join dropped[]. */
void sr_logpump_take_back(struct sr_logpump *lp);
/* The fd to poll for stream s, -1 when at EOF or in init's hands. */
int sr_logpump_poll_fd(const struct sr_logpump *lp, int s);

/* Closes everything. */
void sr_logpump_done(struct sr_logpump *lp);
#define _cleanup_logpump_ _cleanup_(sr_logpump_done)
