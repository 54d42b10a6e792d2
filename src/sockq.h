/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Memory the kernel holds for the run and charges to no cgroup: the bytes
 * queued on TCP connections in the sandbox's network namespace that no
 * process has accepted.  A connection the kernel completes for a listener
 * is charged to a memory cgroup only when accept(2) takes it; until then
 * what its peer sends piles up in its receive queue (up to the listener's
 * SO_RCVBUF, for each of the listener's backlog) in the host's TCP memory
 * alone, which neither cgroup version nor the sampler sees.  A skill that
 * connects to its own listener and never accepts held 1 GiB in a run of
 * 512 MiB.
 *
 * Read from the host's /proc through init, the one process sure to be in
 * the namespace for the whole run.  net/tcp and net/tcp6 list the
 * receive queue (rx_queue, in bytes of payload) of every connection, and
 * a socket inode only for those a process holds: the sum over the
 * connections established or closing with no inode is the figure.  That
 * listing walks the host's whole TCP hash table (about 4 ms a file on a
 * host with 24 GiB), so it is read only when there may be something to
 * find: while the last reading found such a connection, or once the
 * namespace's count of connections made for a listener (PassiveOpens, in
 * net/snmp, a cheap read) has moved (and once more after that, for one
 * not yet complete when its line was read); and then at most once in 20
 * times
 * what the last reading took, at most 5 % of a CPU.  A run that makes no
 * connection to a listener of its own costs nothing.  The files are opened
 * once (a /proc/PID/net file keeps its namespace), after the skill has
 * started; a kernel without IPv6 (ipv6.disable=1) has no net/tcp6, and
 * then no such connections to count.  The figure is the payload: the
 * kernel's buffers for it are about as large for large writes, up to
 * about twice as large for one-byte segments.
 */
struct sr_sockq {
  int fd[3];        /* net/snmp, net/tcp, net/tcp6; -1 until opened */
  uint64_t passive; /* PassiveOpens as of the last listing read */
  uint64_t next_ms; /* monotonic ms before which it is not read again */
  uint64_t unheld;  /* connections no process held, at the last reading */
  uint64_t bytes;   /* queued on them */
  bool stale;       /* the last figure given is from an earlier reading */
  bool again;       /* the last reading was for new connections: one more */
};

void sr_sockq_init(struct sr_sockq *q);
/* Opens the files of pid's network namespace.  0 or -errno. */
int sr_sockq_open(struct sr_sockq *q, pid_t pid);
/* The bytes queued on connections no process holds, as of the last
 * reading: a new one when there may be something new to find and the
 * backoff allows, or `fresh` (before a run is stopped on the figure: what
 * was queued may have been accepted since, and charged).  0 or -errno. */
int sr_sockq_read(struct sr_sockq *q, bool fresh, uint64_t *bytes);
void sr_sockq_close(struct sr_sockq *q);
