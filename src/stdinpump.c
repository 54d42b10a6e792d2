/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --stdin: the caller's input to the skill's, bounded (stdinpump.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fdutil.h"
#include "stdinpump.h"
#include "util.h"

void sr_stdinpump_init(struct sr_stdinpump *p) {
  memset(p, 0, sizeof(*p));
  p->in_fd = p->out_fd = p->own_fd = -1;
}

int sr_stdinpump_start(struct sr_stdinpump *p, int in_fd, int out_fd) {
  int fl = fcntl(out_fd, F_GETFL);
  struct stat st;
  int r;

  /* Non-blocking on our pipe only: the caller's input is a file
   * description others may share, never switched to O_NONBLOCK.  It is
   * read once it polled readable, but by then another reader of the same
   * pipe or terminal (a worker pool fed from one queue) may have taken
   * what was there: a blocking read(2) then held the whole supervisor,
   * its wall clock and cancellation with it, until more came.  So it is
   * read without waiting all the same (read_some). */
  if (fl < 0 || fcntl(out_fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return -errno;
  if (fstat(in_fd, &st) < 0)
    return -errno;
  if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
    p->how = SR_STDIN_READ_PLAIN; /* never waits for a writer */
  else if (S_ISSOCK(st.st_mode))
    p->how = SR_STDIN_READ_RECV;
  else
    p->how = SR_STDIN_READ_NOWAIT;
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

/*
 * Where preadv2(2) refuses RWF_NOWAIT (a named FIFO, a terminal), the same
 * pipe or terminal opened again through /proc/self/fd, O_NONBLOCK on a file
 * of its own: the caller's stays as it was.  Only those: opening another
 * device again may do something (a serial line's modem control).  Where it
 * cannot be opened (another user's), the caller's file is read as before,
 * once it polled readable (skillrun(1), --stdin).
 */
static void open_own(struct sr_stdinpump *p) {
  struct stat st, own;
  int fd;

  p->how = SR_STDIN_READ_PLAIN;
  if (fstat(p->in_fd, &st) < 0 ||
      !(S_ISFIFO(st.st_mode) || (S_ISCHR(st.st_mode) && isatty(p->in_fd))))
    return;
  fd = sr_fd_reopen(p->in_fd, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return;
  if (fstat(fd, &own) < 0 || own.st_dev != st.st_dev ||
      own.st_ino != st.st_ino || own.st_rdev != st.st_rdev ||
      (own.st_mode & S_IFMT) != (st.st_mode & S_IFMT)) {
    safe_close(fd);
    return;
  }
  p->own_fd = fd;
  p->in_fd = fd;
  p->how = SR_STDIN_READ_OWN;
}

/* One read of the caller's input that does not wait for it. */
static ssize_t read_some(struct sr_stdinpump *p) {
  for (;;) {
    ssize_t n;

    switch (p->how) {
    case SR_STDIN_READ_NOWAIT: {
      struct iovec iov = {.iov_base = p->buf, .iov_len = SR_STDIN_BUF};

      n = preadv2(p->in_fd, &iov, 1, -1, RWF_NOWAIT);
      if (n < 0 &&
          (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOSYS)) {
        open_own(p);
        continue;
      }
      return n;
    }
    case SR_STDIN_READ_RECV:
      n = recv(p->in_fd, p->buf, SR_STDIN_BUF, MSG_DONTWAIT);
      if (n < 0 && errno == ENOTSOCK) {
        p->how = SR_STDIN_READ_PLAIN;
        continue;
      }
      return n;
    default:
      return read(p->in_fd, p->buf, SR_STDIN_BUF);
    }
  }
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

int sr_stdinpump_on_readable(struct sr_stdinpump *p) {
  ssize_t n;
  int e = 0;

  if (sr_stdinpump_read_fd(p) < 0)
    return 0;
  n = read_some(p);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return 0;
  if (n <= 0) {
    /* A read error ends the skill's input as EOF does (the skill sees its
     * end), but it is not the input's end: the record says the input was
     * not forwarded to its end, and the caller is told why. */
    if (n < 0)
      e = p->read_err = errno ? errno : EIO;
    p->eof = true;
    p->in_fd = -1;
    p->own_fd = safe_close(p->own_fd);
  } else {
    p->off = 0;
    p->len = (size_t)n;
  }
  close_if_drained(p);
  return e;
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
    p->own_fd = safe_close(p->own_fd);
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
  return p->eof && !p->broken && !p->read_err && p->off == p->len;
}

int sr_stdinpump_finish(struct sr_stdinpump *p,
                        char hex[SR_SHA256_HEX_LEN + 1]) {
  unsigned char md[SR_SHA256_LEN];
  int r;

  p->out_fd = safe_close(p->out_fd);
  p->in_fd = -1;
  p->own_fd = safe_close(p->own_fd);
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
  p->own_fd = safe_close(p->own_fd);
  if (p->hashing)
    sr_sha256_done(&p->hash);
  p->hashing = false;
  free(p->buf);
  p->buf = NULL;
}
