/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --stdin: the caller's input to the skill's, bounded (stdinpump.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdutil.h"
#include "stdinpump.h"
#include "util.h"

void sr_stdinpump_init(struct sr_stdinpump *p) {
  memset(p, 0, sizeof(*p));
  p->in_fd = p->out_fd = -1;
}

int sr_stdinpump_start(struct sr_stdinpump *p, int in_fd, int out_fd) {
  int fl = fcntl(out_fd, F_GETFL);
  int r;

  /* Non-blocking on our pipe only: the caller's input is a file
   * description others may share, so it is read only once it polled
   * readable, never switched to O_NONBLOCK. */
  if (fl < 0 || fcntl(out_fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return -errno;
  p->buf = malloc(SR_STDIN_BUF);
  if (!p->buf)
    return -ENOMEM;
  r = sr_sha256_init(&p->hash);
  if (r < 0)
    return r;
  p->hashing = true;
  p->in_fd = in_fd;
  p->out_fd = out_fd;
  return 0;
}

int sr_stdinpump_read_fd(const struct sr_stdinpump *p) {
  return p->out_fd >= 0 && !p->eof && p->off == p->len ? p->in_fd : -1;
}

int sr_stdinpump_write_fd(const struct sr_stdinpump *p) {
  return p->off < p->len ? p->out_fd : -1;
}

/* EOF for the skill: the pipe is closed once everything read is written. */
static void close_if_drained(struct sr_stdinpump *p) {
  if (p->eof && p->off == p->len)
    p->out_fd = safe_close(p->out_fd);
}

void sr_stdinpump_on_readable(struct sr_stdinpump *p) {
  ssize_t n;

  if (sr_stdinpump_read_fd(p) < 0)
    return;
  n = read(p->in_fd, p->buf, SR_STDIN_BUF);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0) {
    /* A read error ends the input as EOF does: the skill sees its end,
     * and the record says how much came. */
    p->eof = true;
    p->in_fd = -1;
  } else {
    p->off = 0;
    p->len = (size_t)n;
  }
  close_if_drained(p);
}

void sr_stdinpump_on_writable(struct sr_stdinpump *p) {
  ssize_t n;

  if (sr_stdinpump_write_fd(p) < 0)
    return;
  n = write(p->out_fd, p->buf + p->off, p->len - p->off);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0) {
    /* EPIPE: the skill closed its input or exited; what is left of the
     * caller's is not read. */
    p->out_fd = safe_close(p->out_fd);
    p->in_fd = -1;
    p->off = p->len = 0;
    p->broken = true;
    return;
  }
  if (p->hashing && sr_sha256_update(&p->hash, p->buf + p->off, (size_t)n) < 0)
    p->hashing = false; /* released; finish reports the failure */
  p->off += (size_t)n;
  p->bytes += (uint64_t)n;
  close_if_drained(p);
}

bool sr_stdinpump_complete(const struct sr_stdinpump *p) {
  return p->eof && !p->broken && p->off == p->len;
}

int sr_stdinpump_finish(struct sr_stdinpump *p,
                        char hex[SR_SHA256_HEX_LEN + 1]) {
  unsigned char md[SR_SHA256_LEN];
  int r;

  p->out_fd = safe_close(p->out_fd);
  p->in_fd = -1;
  if (!p->hashing)
    return -EIO;
  p->hashing = false;
  r = sr_sha256_final(&p->hash, md);
  if (r < 0)
    return r;
  sr_hex(md, sizeof(md), hex);
  return 0;
}

void sr_stdinpump_done(struct sr_stdinpump *p) {
  p->out_fd = safe_close(p->out_fd);
  if (p->hashing)
    sr_sha256_done(&p->hash);
  p->hashing = false;
  free(p->buf);
  p->buf = NULL;
}
