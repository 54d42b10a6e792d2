/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include "fdutil.h"
#include "sync.h"

static int send_msg(int fd, uint32_t type, int32_t value, uint64_t mono_ns,
                    uint64_t cpu_usec, const struct sr_error *err,
                    int pass_fd) {
  struct sr_sync_msg m;
  struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

  memset(&m, 0, sizeof(m));
  m.type = type;
  m.value = value;
  m.mono_ns = mono_ns;
  m.cpu_usec = cpu_usec;
  if (err)
    m.err = *err;
  if (pass_fd >= 0) {
    struct cmsghdr *c;
    memset(&u, 0, sizeof(u));
    mh.msg_control = u.buf;
    mh.msg_controllen = sizeof(u.buf);
    c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  for (;;) {
    ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    return n == (ssize_t)sizeof(m) ? 0 : -EIO;
  }
}

int sr_sync_send(int fd, uint32_t type, int32_t value,
                 const struct sr_error *err, int pass_fd) {
  return send_msg(fd, type, value, 0, 0, err, pass_fd);
}

int sr_sync_send_exited(int fd, int32_t status, uint64_t reaped_ns,
                        uint64_t cpu_usec) {
  return send_msg(fd, SR_SYNC_EXITED, status, reaped_ns, cpu_usec, NULL, -1);
}

int sr_sync_recv(int fd, struct sr_sync_msg *m, int *ret_fd) {
  struct iovec iov = {.iov_base = m, .iov_len = sizeof(*m)};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } u;
  struct msghdr mh = {.msg_iov = &iov,
                      .msg_iovlen = 1,
                      .msg_control = u.buf,
                      .msg_controllen = sizeof(u.buf)};
  bool reset = false;
  ssize_t n;

  if (ret_fd)
    *ret_fd = -1;
  /* A peer that closes its end with messages of ours unread in it (init
   * ends while log-pipe hand-overs are still queued for it) leaves
   * ECONNRESET pending on this end, which the next recvmsg reports once,
   * ahead of the messages the peer sent before closing (its last status):
   * read on past it; its end follows as EOF. */
  do
    n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
  while (n < 0 &&
         (errno == EINTR || (errno == ECONNRESET && !reset && (reset = true))));
  if (n < 0)
    return -errno;
  if (n == 0)
    return -EPIPE;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int got;
      memcpy(&got, CMSG_DATA(c), sizeof(int));
      if (ret_fd && *ret_fd < 0)
        *ret_fd = got;
      else
        safe_close(got);
    }
  }
  if (n != (ssize_t)sizeof(*m) || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
    return -EBADMSG;
  m->err.msg[sizeof(m->err.msg) - 1] = '\0';
  m->err.layer[sizeof(m->err.layer) - 1] = '\0';
  m->err.reason[sizeof(m->err.reason) - 1] = '\0';
  return 0;
}
