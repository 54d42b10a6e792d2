/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The bytes queued on TCP connections no process of the run accepted
 * (sockq.h): the one memory of a run's that the kernel charges to no
 * cgroup and the supervisor must count itself.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdutil.h"
#include "sockq.h"
#include "util.h"

enum { SNMP, TCP, TCP6 };
static const char *const files[] = {
    [SNMP] = "net/snmp",
    [TCP] = "net/tcp",
    [TCP6] = "net/tcp6",
};

/* A reading costs this many times its own time in waiting (5 %). */
#define SOCKQ_BACKOFF 20
/* The states of tcp_states.h whose receive queue holds data: established
 * and close-wait (the peer has finished sending). */
#define TCP_ESTABLISHED_HEX 0x01
#define TCP_CLOSE_WAIT_HEX 0x08

void sr_sockq_init(struct sr_sockq *q) {
  memset(q, 0, sizeof(*q));
  for (size_t i = 0; i < SR_ARRAY_SIZE(q->fd); i++)
    q->fd[i] = -1;
}

void sr_sockq_close(struct sr_sockq *q) {
  for (size_t i = 0; i < SR_ARRAY_SIZE(q->fd); i++)
    q->fd[i] = safe_close(q->fd[i]);
}

int sr_sockq_open(struct sr_sockq *q, pid_t pid) {
  _cleanup_close_ int dir = -1;
  char path[32];

  snprintf(path, sizeof(path), "/proc/%d", (int)pid);
  dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return -errno;
  for (size_t i = 0; i < SR_ARRAY_SIZE(files); i++) {
    int fd = openat(dir, files[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    /* No table of that family in the kernel: nothing queued there. */
    if (fd < 0 && errno == ENOENT && i != SNMP)
      continue;
    if (fd < 0) {
      int r = -errno;
      sr_sockq_close(q);
      return r;
    }
    q->fd[i] = fd;
  }
  return 0;
}

/* The connections the namespace's TCP made for a listener (IPv4 and IPv6
 * share the counter): the PassiveOpens column of net/snmp's two "Tcp:"
 * lines, read from its start. */
static int passive_opens(int fd, uint64_t *n) {
  char buf[8192];
  ssize_t len;
  char *names, *values, *save_n = NULL, *save_v = NULL;
  const char *name, *value;

  if (lseek(fd, 0, SEEK_SET) < 0)
    return -errno;
  len = read(fd, buf, sizeof(buf) - 1);
  if (len < 0)
    return -errno;
  buf[len] = '\0';
  names = strstr(buf, "Tcp: ");
  values = names ? strstr(names + 1, "Tcp: ") : NULL;
  if (!values)
    return -EBADMSG;
  names[strcspn(names, "\n")] = '\0';
  values[strcspn(values, "\n")] = '\0';
  /* Past "Tcp:" on both lines, then column by column. */
  if (!strtok_r(names, " ", &save_n) || !strtok_r(values, " ", &save_v))
    return -EBADMSG;
  while ((name = strtok_r(NULL, " ", &save_n)) &&
         (value = strtok_r(NULL, " ", &save_v)))
    if (!strcmp(name, "PassiveOpens")) {
      char *end;
      errno = 0;
      *n = strtoull(value, &end, 10);
      return errno || *end ? -EBADMSG : 0;
    }
  return -EBADMSG;
}

/* One line of net/tcp or net/tcp6 ("sl local rem st tx:rx tr:when retrnsmt
 * uid timeout inode ..."): whether it is a connection no process holds
 * (inode 0) in a state that queues data, and then its receive queue. */
static bool line_unheld(const char *line, uint64_t *rx_bytes) {
  unsigned long st, inode;
  unsigned long long rx;
  char *end;
  const char *p = line;

  /* sl, local and remote addresses: three fields to skip. */
  for (int f = 0; f < 3; f++) {
    p += strspn(p, " ");
    p += strcspn(p, " ");
  }
  st = strtoul(p, &end, 16);
  if (end == p || (st != TCP_ESTABLISHED_HEX && st != TCP_CLOSE_WAIT_HEX))
    return false;
  p = end + strspn(end, " ");
  p = strchr(p, ':'); /* tx_queue:rx_queue */
  if (!p)
    return false;
  rx = strtoull(p + 1, &end, 16);
  if (end == p + 1)
    return false;
  /* tr:when, retrnsmt, uid, timeout: four fields to skip. */
  p = end;
  for (int f = 0; f < 4; f++) {
    p += strspn(p, " ");
    p += strcspn(p, " ");
  }
  inode = strtoul(p, &end, 10);
  if (end == p || inode != 0)
    return false;
  *rx_bytes = rx;
  return true;
}

/* The connections line_unheld finds in a net/tcp file, read from its
 * start, and their queues, added to *n and *sum. */
static int sum_unheld(int fd, uint64_t *count, uint64_t *sum) {
  char buf[65536];
  size_t have = 0;
  bool header = true;

  if (fd < 0)
    return 0; /* a family the kernel does not have */
  if (lseek(fd, 0, SEEK_SET) < 0)
    return -errno;
  for (;;) {
    ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
    char *line = buf, *nl;

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    if (n == 0)
      return 0; /* a last line without its newline is not one */
    have += (size_t)n;
    buf[have] = '\0';
    while ((nl = strchr(line, '\n'))) {
      uint64_t rx;

      *nl = '\0';
      if (!header && line_unheld(line, &rx)) {
        *count += 1;
        *sum += rx;
      }
      header = false;
      line = nl + 1;
    }
    have -= (size_t)(line - buf);
    /* A line is some 150 bytes: one that fills the buffer is not one. */
    if (have == sizeof(buf) - 1)
      return -EBADMSG;
    memmove(buf, line, have);
  }
}

int sr_sockq_read(struct sr_sockq *q, bool fresh, uint64_t *bytes) {
  uint64_t passive = 0, n = 0, sum = 0, start, took;
  int r;

  r = passive_opens(q->fd[SNMP], &passive);
  if (r < 0)
    return r;
  start = sr_now_mono_ms();
  q->stale = false;
  if ((passive != q->passive || q->unheld > 0 || q->again) &&
      (fresh || start >= q->next_ms)) {
    r = sum_unheld(q->fd[TCP], &n, &sum);
    if (r >= 0)
      r = sum_unheld(q->fd[TCP6], &n, &sum);
    if (r < 0)
      return r;
    took = sr_now_mono_ms() - start;
    /* Read before the listing: a connection made during it moves the
     * count past this again.  One counted before it may still have been
     * a request in the table (SYN_RECV, no queue yet) when its line was
     * read: after a listing for new connections, one more. */
    q->again = passive != q->passive;
    q->passive = passive;
    q->unheld = n;
    q->bytes = sum;
    q->next_ms = start + (took + 1) * SOCKQ_BACKOFF;
  } else {
    q->stale = q->bytes > 0;
  }
  *bytes = q->bytes;
  return 0;
}
