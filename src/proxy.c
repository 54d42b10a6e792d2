/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy process: one epoll loop, edge-triggered connection
 * sockets, a small pool of resolver threads (getaddrinfo blocks), records
 * to the supervisor.  See proxy.h for the contract.
 *
 * A connection goes HANDSHAKE (read the request, at most SR_HTTP_HEAD_MAX
 * bytes, within the handshake timeout) -> [RESOLVING] -> CONNECTING (one
 * checked address after another, non-blocking) -> RELAY (splice through a
 * pipe per direction, read/write where splice is refused) -> closed; or
 * REFUSE (send the error reply) -> DRAIN (read and discard, briefly, so
 * closing does not reset the reply away) -> closed.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include "caps.h"
#include "error.h"
#include "fdutil.h"
#include "netallow.h"
#include "proxy.h"
#include "proxyproto.h"

#define RESOLVER_THREADS 4
#define RECORD_QUEUE_MAX 4096
/* Per direction of each relayed connection.  Bigger moves more per splice
 * (1 MiB measured no faster here), but pipe pages count against the uid's
 * budget (pipe-user-pages-soft, 64 MiB), which the proxy shares with the
 * sandbox user: 512 KiB a connection leaves room for 128 of them. */
#define PIPE_SIZE (256 * 1024)
#define COPY_BUF (64 * 1024)
/* Each socket's buffers, fixed (the kernel doubles the figure, and caps it
 * at net.core.rmem_max and wmem_max): the proxy's memory is not the run's
 * cgroup's, and with the kernel's autotuning a skill that opened
 * connections to a sender and never read held some 7.5 MiB of the host's
 * a connection (up to tcp_rmem's and tcp_wmem's maximum each side, which
 * a host may have raised).  The origin's are the TCP window to the
 * outside world: 256 KiB (512 KiB with the kernel's share, of which the
 * window is a half or more) moves some 3 - 5 MB/s at 100 ms of round
 * trip.  The sandbox's end is loopback, where a small window costs
 * nothing. */
#define SOCKBUF_ORIGIN (256 * 1024)
#define SOCKBUF_SANDBOX (64 * 1024)
#define DRAIN_MS 1000
#define ACCEPT_BATCH 64
#define CATCH_UP_ROUNDS 4
#define ACCEPT_PAUSE_MS 100
#define READY_TIMEOUT_MS 5000

/* ---------------------------------------------------------------- types */

enum ep_kind {
  EP_LISTEN,
  EP_SIGNAL,
  EP_RECORD,
  EP_RESOLVER,
  EP_CLIENT,
  EP_ORIGIN
};

struct conn;
struct ep {
  enum ep_kind kind;
  struct conn *c;
  int index; /* EP_LISTEN: which listener */
};

enum cstate {
  C_HANDSHAKE,
  C_RESOLVING,
  C_CONNECTING,
  C_RELAY,
  C_REFUSE,
  C_DRAIN,
  C_DEAD,
};

/* One direction of the relay: src -> dst. */
struct dir {
  int pipe[2]; /* splice path; -1 until the relay starts */
  size_t pend; /* bytes in the pipe */
  char *buf;   /* read/write path (no splice) */
  size_t off, len;
  bool eof;  /* src said EOF */
  bool shut; /* dst shut down for writing */
  bool copy; /* splice refused: read/write */
};

struct job;

struct conn {
  struct proxy *px;
  uint32_t id;
  enum cstate st;
  bool counted; /* holds one of max_connections (else a refusal slot) */
  enum sr_proxy_reason refuse; /* refusal slot: the reason to give */
  int cfd, ofd;
  struct ep ep_c, ep_o;
  uint64_t t_start, deadline, last_io;
  enum sr_proxy_protocol proto;
  int socks_stage; /* 0: greeting, 1: request */
  uint8_t socks_rep;
  char in[SR_HTTP_HEAD_MAX];
  size_t in_len;
  /* destination */
  struct sr_nethost host;
  uint16_t port;
  struct sr_netaddr cand[SR_PROXY_ADDRS_MAX];
  size_t n_cand, next_cand;
  int connect_errno;
  int check_errno; /* the host's addresses could not be read: refused */
  bool have_addr;
  struct sr_netaddr addr;
  enum sr_netaddr_class addr_class;
  /* pending writes: to the client (a reply) and to the origin (the
   * forwarded head, bytes that came with the request) */
  char *to_c, *to_o;
  size_t to_c_len, to_c_off, to_o_len, to_o_off;
  struct dir d[2]; /* 0: client -> origin, 1: origin -> client */
  bool allowed;
  enum sr_proxy_reason reason;
  uint64_t bytes_out, bytes_in;
  struct job *job;
  struct conn *next_dead;
};

struct job {
  struct conn *c; /* NULL once the connection gave up on it */
  char name[SR_NETALLOW_NAME_MAX + 1];
  int gai_err;
  struct sr_netaddr addrs[SR_PROXY_ADDRS_MAX];
  size_t n;
  struct job *next;
};

struct resolver {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  struct job *todo, *todo_tail, *done;
  int efd;
  bool stop;
  pthread_t threads[RESOLVER_THREADS];
  unsigned n_threads;
};

/* (Ordered by size: clang-tidy's padding check.) */
struct proxy {
  struct resolver res;
  const struct sr_proxy_config *cfg;
  struct ep ep_listen[2], ep_sig, ep_rec, ep_res;
  struct conn **conns;
  size_t n_conns, cap_conns, n_listen;
  /* Origins' sockets of the connections the egress budget cut, half
   * closed: what the destination has not taken yet is the budget's and
   * still goes, until the run ends (shutdown_all resets them). */
  int *cut_fds;
  size_t n_cut, cap_cut;
  struct conn *dead;
  uint64_t accept_resume;
  uint64_t egress_used;
  uint64_t handshake_ms, connect_ms;
  /* totals for SUMMARY */
  uint64_t n_total, n_denied, total_out, total_in;
  /* records not yet sent */
  struct sr_proxy_wire *q;
  size_t q_head, q_len;
  int epfd, sigfd, rec_fd;
  int listen_fds[2];
  unsigned n_counted, n_refusing;
  uint32_t next_id;
  uint32_t dropped;
  bool accept_paused;
  bool egress_hit;
  bool rec_out_armed;
};

static void conn_close(struct conn *c, bool allowed,
                       enum sr_proxy_reason reason);
static void conn_pump(struct conn *c);
static uint64_t egress_left(const struct proxy *px);

/* ---------------------------------------------------------------- records */

static void rec_flush(struct proxy *px);

static void rec_push(struct proxy *px, const struct sr_proxy_event *ev) {
  struct sr_proxy_event e = *ev;

  if (px->q_len >= RECORD_QUEUE_MAX) {
    px->dropped++;
    return;
  }
  e.dropped = px->dropped;
  sr_proxy_record_encode(&e,
                         &px->q[(px->q_head + px->q_len) % RECORD_QUEUE_MAX]);
  px->q_len++;
  rec_flush(px);
}

/* Sends what the socket takes now; arms EPOLLOUT for the rest. */
static void rec_flush(struct proxy *px) {
  while (px->q_len > 0) {
    ssize_t n = send(px->rec_fd, &px->q[px->q_head], sizeof(px->q[0]),
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && (errno == EAGAIN || errno == ENOBUFS))
      break;
    if (n < 0)
      _exit(1); /* the supervisor is gone: nobody to report to */
    px->q_head = (px->q_head + 1) % RECORD_QUEUE_MAX;
    px->q_len--;
  }
  bool want = px->q_len > 0;
  if (want != px->rec_out_armed) {
    struct epoll_event ev = {.events = want ? EPOLLOUT : 0,
                             .data.ptr = &px->ep_rec};
    if (epoll_ctl(px->epfd, EPOLL_CTL_MOD, px->rec_fd, &ev) == 0)
      px->rec_out_armed = want;
  }
}

/* Blocks (up to timeout_ms) until the queue is sent. */
static void rec_drain(struct proxy *px, uint64_t timeout_ms) {
  uint64_t end = sr_now_mono_ms() + timeout_ms;

  while (px->q_len > 0) {
    struct pollfd pfd = {.fd = px->rec_fd, .events = POLLOUT};
    uint64_t now = sr_now_mono_ms();
    if (now >= end)
      return;
    if (poll(&pfd, 1, (int)(end - now)) < 0 && errno != EINTR)
      return;
    rec_flush(px);
  }
}

_Noreturn static void fatal(struct proxy *px, int rec_fd, int e,
                            const char *what) {
  struct sr_proxy_event ev;
  struct sr_proxy_wire w;

  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_FATAL;
  if (e)
    (void)snprintf(ev.message, sizeof(ev.message), "%s: %s", what, strerror(e));
  else
    (void)snprintf(ev.message, sizeof(ev.message), "%s", what);
  if (px) {
    rec_push(px, &ev);
    rec_drain(px, 1000);
  } else {
    sr_proxy_record_encode(&ev, &w);
    (void)send(rec_fd, &w, sizeof(w), MSG_NOSIGNAL);
  }
  _exit(1);
}

/* ---------------------------------------------------------------- epoll */

static int ep_add(struct proxy *px, int fd, uint32_t events, struct ep *e) {
  struct epoll_event ev = {.events = events, .data.ptr = e};
  return epoll_ctl(px->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

static void set_nodelay(int fd) {
  int one = 1;
  /* Latency only: a failure leaves Nagle on, nothing worse. */
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* SOCKBUF_*: on an origin's socket before its connect, so that the window
 * it offers is this one from the start.  A size the kernel refuses cannot
 * be: below rmem_max and wmem_max it is taken, above them capped. */
static int set_bufs(int fd, int size) {
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) < 0)
    return -errno;
  return 0;
}

/* Before the close of a relay that did not end in order (the run's end,
 * an idle timeout, a reset or an error on either side): a reset, so that
 * what the origin has not taken yet is dropped, and the connection does
 * not outlive the run (a close with data queued lets the kernel go on
 * sending it for minutes, to a peer that reads slowly). */
static void set_reset_on_close(int fd) {
  const struct linger now = {.l_onoff = 1, .l_linger = 0};
  if (fd >= 0)
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
}

/* A relay both of whose directions ended in order: the origin's socket,
 * made to reset from its start (conn_connect_next), closes as TCP does. */
static void set_close_in_order(int fd) {
  const struct linger off = {.l_onoff = 0, .l_linger = 0};
  if (fd >= 0)
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
}

/* An origin's socket the egress budget cut: out of the epoll set, half
 * closed, kept for shutdown_all.  False when it cannot be kept (the
 * caller then closes it, as before). */
static bool keep_cut(struct proxy *px, int fd) {
  if (px->n_cut == px->cap_cut) {
    size_t cap = px->cap_cut ? px->cap_cut * 2 : 16;
    int *v = realloc(px->cut_fds, cap * sizeof(*v));
    if (!v)
      return false;
    px->cut_fds = v;
    px->cap_cut = cap;
  }
  (void)epoll_ctl(px->epfd, EPOLL_CTL_DEL, fd, NULL);
  (void)shutdown(fd, SHUT_WR);
  px->cut_fds[px->n_cut++] = fd;
  return true;
}

/* ---------------------------------------------------------------- resolver
 */

static void *resolver_thread(void *arg) {
  struct resolver *r = arg;

  for (;;) {
    struct job *j;
    struct addrinfo hints, *res = NULL;
    int e;

    pthread_mutex_lock(&r->mu);
    while (!r->stop && !r->todo)
      pthread_cond_wait(&r->cv, &r->mu);
    if (r->stop) {
      pthread_mutex_unlock(&r->mu);
      return NULL;
    }
    j = r->todo;
    r->todo = j->next;
    if (!r->todo)
      r->todo_tail = NULL;
    bool cancelled = j->c == NULL;
    pthread_mutex_unlock(&r->mu);

    if (!cancelled) {
      memset(&hints, 0, sizeof(hints));
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      /* The name as listed, without a trailing dot, so resolv.conf's
       * search domains may apply to it (first, for a name with fewer dots
       * than "ndots").  Not made absolute ("name."): glibc's files backend
       * (2.36) does not match "name." to an /etc/hosts line of "name", so
       * an administrator's pinned addresses would be skipped for DNS, or
       * lost.  The search domains are the host's own configuration, not
       * the skill's, and whatever address they yield is checked below
       * like any other; skillrun.conf's network-hosts file, read first,
       * pins a name exactly. */
      e = getaddrinfo(j->name, NULL, &hints, &res);
      j->gai_err = e;
      if (e == 0) {
        for (struct addrinfo *ai = res; ai && j->n < SR_PROXY_ADDRS_MAX;
             ai = ai->ai_next) {
          struct sr_netaddr a;
          bool dup = false;
          if (sr_netaddr_from_sockaddr(ai->ai_addr, ai->ai_addrlen, &a, NULL) <
              0)
            continue;
          for (size_t k = 0; k < j->n; k++)
            if (memcmp(&j->addrs[k], &a, sizeof(a)) == 0)
              dup = true;
          if (!dup)
            j->addrs[j->n++] = a;
        }
        freeaddrinfo(res);
      }
    }
    pthread_mutex_lock(&r->mu);
    j->next = r->done;
    r->done = j;
    pthread_mutex_unlock(&r->mu);
    uint64_t one = 1;
    /* Can only fail with the counter at its maximum: then it is readable
     * anyway. */
    (void)!write(r->efd, &one, sizeof(one));
  }
}

static int resolver_start(struct resolver *r) {
  r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (r->efd < 0)
    return -errno;
  if (pthread_mutex_init(&r->mu, NULL) != 0 ||
      pthread_cond_init(&r->cv, NULL) != 0)
    return -ENOMEM;
  for (unsigned i = 0; i < RESOLVER_THREADS; i++) {
    int e = pthread_create(&r->threads[i], NULL, resolver_thread, r);
    if (e != 0)
      return r->n_threads > 0 ? 0 : -e;
    r->n_threads++;
  }
  return 0;
}

static int resolver_submit(struct resolver *r, struct conn *c) {
  struct job *j = calloc(1, sizeof(*j));

  if (!j)
    return -ENOMEM;
  j->c = c;
  memcpy(j->name, c->host.name, sizeof(j->name));
  pthread_mutex_lock(&r->mu);
  if (r->todo_tail)
    r->todo_tail->next = j;
  else
    r->todo = j;
  r->todo_tail = j;
  pthread_cond_signal(&r->cv);
  pthread_mutex_unlock(&r->mu);
  c->job = j;
  return 0;
}

static void resolver_cancel(struct resolver *r, struct conn *c) {
  if (!c->job)
    return;
  pthread_mutex_lock(&r->mu);
  c->job->c = NULL; /* freed when a thread hands it back */
  pthread_mutex_unlock(&r->mu);
  c->job = NULL;
}

/* ---------------------------------------------------------------- helpers
 */

static void host_text(const struct conn *c, char *buf, size_t len) {
  if (c->host.is_addr)
    sr_netaddr_format(&c->host.addr, buf, len);
  else
    (void)snprintf(buf, len, "%s", c->host.name);
}

/* The host's own interface addresses (getifaddrs) into *out, malloc'd,
 * and their number into *n.  0, or -errno when they cannot all be read:
 * then no address can be checked against them, and the caller refuses
 * the connection rather than skip the check. */
static int host_addresses(struct sr_netaddr **out, size_t *n) {
  struct ifaddrs *ifa = NULL;
  size_t cap = 0;
  struct sr_netaddr *v;

  *out = NULL;
  *n = 0;
  if (getifaddrs(&ifa) < 0)
    return errno > 0 ? -errno : -EIO;
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
    cap++;
  v = calloc(cap ? cap : 1, sizeof(*v));
  if (!v) {
    freeifaddrs(ifa);
    return -ENOMEM;
  }
  for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
    struct sr_netaddr a;
    if (!i->ifa_addr ||
        sr_netaddr_from_sockaddr(i->ifa_addr,
                                 i->ifa_addr->sa_family == AF_INET6
                                     ? sizeof(struct sockaddr_in6)
                                     : sizeof(struct sockaddr_in),
                                 &a, NULL) < 0)
      continue;
    v[(*n)++] = a;
  }
  freeifaddrs(ifa);
  *out = v;
  return 0;
}

static int set_buf(char **dst, size_t *len, size_t *off, const void *src,
                   size_t n) {
  char *b = NULL;

  if (n) {
    b = malloc(n);
    if (!b)
      return -ENOMEM;
    memcpy(b, src, n);
  }
  free(*dst);
  *dst = b;
  *len = n;
  *off = 0;
  return 0;
}

/* ---------------------------------------------------------------- replies
 */

static unsigned http_status(enum sr_proxy_reason r) {
  switch (r) {
  case SR_PROXY_NOT_ALLOWLISTED:
  case SR_PROXY_BLOCKED_ADDRESS:
  case SR_PROXY_EGRESS_LIMIT:
    return 403;
  case SR_PROXY_BAD_DESTINATION:
  case SR_PROXY_PROTOCOL_ERROR:
    return 400;
  case SR_PROXY_RESOLVE_FAILED:
  case SR_PROXY_CONNECT_FAILED:
    return 502;
  case SR_PROXY_CONNECT_TIMEOUT:
    return 504;
  case SR_PROXY_CONNECTION_LIMIT:
  case SR_PROXY_INTERNAL_ERROR:
    return 503;
  case SR_PROXY_UNSUPPORTED:
    return 501;
  case SR_PROXY_HANDSHAKE_TIMEOUT:
    return 408;
  default:
    return 500;
  }
}

static const char *http_error_token(enum sr_proxy_reason r) {
  switch (r) {
  case SR_PROXY_NOT_ALLOWLISTED:
    return "blocked-by-allowlist";
  case SR_PROXY_BLOCKED_ADDRESS:
    return "blocked-address";
  case SR_PROXY_BAD_DESTINATION:
    return "bad-destination";
  case SR_PROXY_RESOLVE_FAILED:
    return "resolve-failed";
  case SR_PROXY_CONNECT_FAILED:
    return "connect-failed";
  case SR_PROXY_CONNECT_TIMEOUT:
    return "connect-timeout";
  case SR_PROXY_CONNECTION_LIMIT:
    return "connection-limit";
  case SR_PROXY_EGRESS_LIMIT:
    return "egress-limit";
  case SR_PROXY_UNSUPPORTED:
    return "unsupported";
  case SR_PROXY_HANDSHAKE_TIMEOUT:
    return "handshake-timeout";
  case SR_PROXY_INTERNAL_ERROR:
    return "internal-error";
  default:
    return "protocol-error";
  }
}

static uint8_t socks_rep(const struct conn *c, enum sr_proxy_reason r) {
  switch (r) {
  case SR_PROXY_NOT_ALLOWLISTED:
  case SR_PROXY_BLOCKED_ADDRESS:
  case SR_PROXY_CONNECTION_LIMIT:
  case SR_PROXY_EGRESS_LIMIT:
    return SR_SOCKS_REP_NOT_ALLOWED;
  case SR_PROXY_BAD_DESTINATION:
  case SR_PROXY_RESOLVE_FAILED:
    return SR_SOCKS_REP_HOST_UNREACH;
  case SR_PROXY_CONNECT_FAILED:
    if (c->connect_errno == ECONNREFUSED)
      return SR_SOCKS_REP_REFUSED;
    if (c->connect_errno == ENETUNREACH)
      return SR_SOCKS_REP_NET_UNREACH;
    return SR_SOCKS_REP_HOST_UNREACH;
  case SR_PROXY_CONNECT_TIMEOUT:
    return SR_SOCKS_REP_TTL_EXPIRED;
  case SR_PROXY_UNSUPPORTED:
    return c->socks_rep ? c->socks_rep : SR_SOCKS_REP_CMD_UNSUPPORTED;
  default:
    return SR_SOCKS_REP_FAILURE;
  }
}

static void refusal_message(const struct conn *c, enum sr_proxy_reason r,
                            char *msg, size_t len) {
  char h[SR_NETALLOW_NAME_MAX + 1], a[64];

  host_text(c, h, sizeof(h));
  switch (r) {
  case SR_PROXY_NOT_ALLOWLISTED:
    (void)snprintf(msg, len,
                   "skillrun: %s port %u is not in the network allowlist", h,
                   (unsigned)c->port);
    return;
  case SR_PROXY_BLOCKED_ADDRESS:
    sr_netaddr_format(&c->addr, a, sizeof(a));
    (void)snprintf(msg, len,
                   "skillrun: %s resolves to %s (%s), which the network "
                   "allowlist does not permit",
                   h, a, sr_netaddr_class_name(c->addr_class));
    return;
  case SR_PROXY_RESOLVE_FAILED:
    (void)snprintf(msg, len, "skillrun: cannot resolve %s", h);
    return;
  case SR_PROXY_CONNECT_FAILED:
    (void)snprintf(msg, len, "skillrun: cannot connect to %s port %u: %s", h,
                   (unsigned)c->port, strerror(c->connect_errno));
    return;
  case SR_PROXY_CONNECT_TIMEOUT:
    (void)snprintf(msg, len, "skillrun: timed out connecting to %s port %u", h,
                   (unsigned)c->port);
    return;
  case SR_PROXY_CONNECTION_LIMIT:
    (void)snprintf(msg, len,
                   "skillrun: too many concurrent connections (limit %u)",
                   c->px->cfg->max_connections);
    return;
  case SR_PROXY_EGRESS_LIMIT:
    (void)snprintf(msg, len, "skillrun: the run's egress byte limit is spent");
    return;
  case SR_PROXY_BAD_DESTINATION:
    (void)snprintf(msg, len, "skillrun: not a valid destination host");
    return;
  case SR_PROXY_UNSUPPORTED:
    (void)snprintf(msg, len,
                   "skillrun: the proxy serves CONNECT, http:// URLs in "
                   "absolute form and SOCKS5 CONNECT only");
    return;
  case SR_PROXY_HANDSHAKE_TIMEOUT:
    (void)snprintf(msg, len, "skillrun: no complete request in time");
    return;
  case SR_PROXY_INTERNAL_ERROR:
    if (c->check_errno)
      (void)snprintf(msg, len,
                     "skillrun: cannot read the host's own addresses to "
                     "check %s against them (%s): refused",
                     h, strerror(c->check_errno));
    else
      (void)snprintf(msg, len, "skillrun: the proxy is out of resources");
    return;
  default:
    (void)snprintf(msg, len, "skillrun: malformed proxy request");
    return;
  }
}

/* ---------------------------------------------------------------- closing
 */

static void dir_free(struct dir *d) {
  d->pipe[0] = safe_close(d->pipe[0]);
  d->pipe[1] = safe_close(d->pipe[1]);
  free(d->buf);
  d->buf = NULL;
}

/* Ends the connection now: record, fds closed, freed after this batch. */
static void conn_close(struct conn *c, bool allowed,
                       enum sr_proxy_reason reason) {
  struct proxy *px = c->px;
  struct sr_proxy_event ev;

  if (c->st == C_DEAD)
    return;
  resolver_cancel(&px->res, c);
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_CONNECTION;
  ev.id = c->id;
  ev.protocol = c->proto;
  ev.allowed = allowed;
  ev.reason = reason;
  if (c->host.is_addr || c->host.name[0])
    host_text(c, ev.host, sizeof(ev.host));
  ev.port = c->port;
  ev.have_addr = c->have_addr;
  ev.addr = c->addr;
  ev.addr_class = c->addr_class;
  ev.bytes_out = c->bytes_out;
  ev.bytes_in = c->bytes_in;
  ev.duration_ms = sr_now_mono_ms() - c->t_start;
  rec_push(px, &ev);
  px->n_total++;
  if (!allowed)
    px->n_denied++;
  px->total_out += c->bytes_out;
  px->total_in += c->bytes_in;

  /* A relay both of whose directions are shut ended in order: its origin
   * takes the rest of what was sent as TCP does.  Any other is reset. */
  if (reason == SR_PROXY_EGRESS_LIMIT && c->ofd >= 0 && keep_cut(px, c->ofd)) {
    c->ofd = -1;
  } else if (reason == SR_PROXY_SHUTDOWN ||
             (c->st == C_RELAY && !(c->d[0].shut && c->d[1].shut))) {
    set_reset_on_close(c->ofd);
    set_reset_on_close(c->cfd);
  } else if (c->st == C_RELAY) {
    set_close_in_order(c->ofd);
  }
  /* close() removes the fds from the epoll set. */
  c->cfd = safe_close(c->cfd);
  c->ofd = safe_close(c->ofd);
  dir_free(&c->d[0]);
  dir_free(&c->d[1]);
  if (c->counted)
    px->n_counted--;
  else
    px->n_refusing--;
  c->st = C_DEAD;
  c->next_dead = px->dead;
  px->dead = c;
}

/* The refusal: reply (HTTP or SOCKS), then drain and close. */
static void conn_refuse(struct conn *c, bool allowed,
                        enum sr_proxy_reason reason) {
  char msg[SR_NETALLOW_NAME_MAX + 200];
  char reply[SR_NETALLOW_NAME_MAX + 600];
  size_t n = 0;

  c->allowed = allowed;
  c->reason = reason;
  resolver_cancel(&c->px->res, c);
  c->ofd = safe_close(c->ofd);
  if (c->proto == SR_PROXY_PROTO_CONNECT || c->proto == SR_PROXY_PROTO_HTTP) {
    refusal_message(c, reason, msg, sizeof(msg));
    n = sr_http_response(http_status(reason), http_error_token(reason), msg,
                         reply, sizeof(reply));
  } else if (c->proto == SR_PROXY_PROTO_SOCKS5 && c->socks_stage == 1) {
    n = sr_socks_reply(socks_rep(c, reason), NULL, 0, (uint8_t *)reply);
  }
  if (n == 0) {
    conn_close(c, allowed, reason);
    return;
  }
  if (set_buf(&c->to_c, &c->to_c_len, &c->to_c_off, reply, n) < 0) {
    conn_close(c, allowed, reason);
    return;
  }
  c->st = C_REFUSE;
  c->deadline = sr_now_mono_ms() + DRAIN_MS;
  conn_pump(c);
}

/* ---------------------------------------------------------------- connect
 */

static void conn_connected(struct conn *c) {
  struct proxy *px = c->px;

  set_nodelay(c->ofd);
  if (c->proto == SR_PROXY_PROTO_CONNECT) {
    static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
    if (set_buf(&c->to_c, &c->to_c_len, &c->to_c_off, ok, sizeof(ok) - 1) < 0) {
      conn_close(c, true, SR_PROXY_INTERNAL_ERROR);
      return;
    }
  } else if (c->proto == SR_PROXY_PROTO_SOCKS5) {
    uint8_t rep[22];
    /* BND.ADDR 0.0.0.0:0: the sandbox has no use for the host's own
     * address, and is not told it. */
    size_t n = sr_socks_reply(SR_SOCKS_REP_OK, NULL, 0, rep);
    if (set_buf(&c->to_c, &c->to_c_len, &c->to_c_off, rep, n) < 0) {
      conn_close(c, true, SR_PROXY_INTERNAL_ERROR);
      return;
    }
  }
  for (int i = 0; i < 2; i++) {
    struct dir *d = &c->d[i];
    d->copy = px->cfg->no_splice;
    if (!d->copy) {
      if (pipe2(d->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        d->copy = true;
      } else {
        /* A bigger pipe moves more per splice; a refusal (the per-user
         * pipe budget) only costs speed. */
        (void)fcntl(d->pipe[1], F_SETPIPE_SZ, PIPE_SIZE);
      }
    }
  }
  c->st = C_RELAY;
  c->last_io = sr_now_mono_ms();
  c->deadline =
      px->cfg->idle_timeout_ms ? c->last_io + px->cfg->idle_timeout_ms : 0;
  conn_pump(c);
}

/* Tries the next checked candidate address; refuses when none is left. */
static void conn_connect_next(struct conn *c) {
  struct proxy *px = c->px;

  c->ofd = safe_close(c->ofd);
  while (c->next_cand < c->n_cand) {
    struct sockaddr_storage ss;
    size_t len;
    int fd;

    c->addr = c->cand[c->next_cand++];
    c->have_addr = true;
    c->addr_class = sr_netaddr_classify(&c->addr);
    len = sr_netaddr_to_sockaddr(&c->addr, c->port, &ss, sizeof(ss));
    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      c->connect_errno = errno;
      if (errno == EMFILE || errno == ENFILE || errno == ENOMEM ||
          errno == ENOBUFS) {
        conn_refuse(c, true, SR_PROXY_INTERNAL_ERROR);
        return;
      }
      continue;
    }
    if (set_bufs(fd, SOCKBUF_ORIGIN) < 0) {
      c->connect_errno = errno;
      safe_close(fd);
      conn_refuse(c, true, SR_PROXY_INTERNAL_ERROR);
      return;
    }
    /* Reset, not closed in order, unless conn_close finds the relay ended
     * in order: the proxy may die without its shutdown (PR_SET_PDEATHSIG
     * when skillrun is killed, sr_proxy_stop's SIGKILL), and the kernel
     * would then go on sending what the skill queued, for minutes. */
    set_reset_on_close(fd);
    if (connect(fd, (struct sockaddr *)&ss, (socklen_t)len) < 0 &&
        errno != EINPROGRESS) {
      c->connect_errno = errno;
      safe_close(fd);
      continue;
    }
    c->ofd = fd;
    c->ep_o = (struct ep){.kind = EP_ORIGIN, .c = c};
    if (ep_add(px, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &c->ep_o) <
        0) {
      conn_refuse(c, true, SR_PROXY_INTERNAL_ERROR);
      return;
    }
    c->st = C_CONNECTING;
    return; /* EPOLLOUT says how it went */
  }
  conn_refuse(c, true, SR_PROXY_CONNECT_FAILED);
}

static void conn_origin_writable(struct conn *c) {
  int e = 0;
  socklen_t l = sizeof(e);

  if (getsockopt(c->ofd, SOL_SOCKET, SO_ERROR, &e, &l) < 0)
    e = errno;
  if (e == EINPROGRESS || e == EALREADY)
    return;
  if (e != 0) {
    c->connect_errno = e;
    conn_connect_next(c);
    return;
  }
  conn_connected(c);
}

/* The destination's addresses are known: keep the ones the policy allows,
 * connect to them in order. */
static void conn_candidates(struct conn *c, const struct sr_netaddr *addrs,
                            size_t n) {
  struct proxy *px = c->px;
  struct sr_netaddr *host = NULL;
  size_t n_host = 0;
  bool blocked = false;
  int e = host_addresses(&host, &n_host);

  c->n_cand = c->next_cand = 0;
  if (e < 0) {
    /* Fail closed: an address that cannot be told from the host's own is
     * not connected to. */
    c->check_errno = -e;
    conn_refuse(c, false, SR_PROXY_INTERNAL_ERROR);
    return;
  }
  for (size_t i = 0; i < n && c->n_cand < SR_PROXY_ADDRS_MAX; i++) {
    enum sr_netaddr_class cls;
    if (sr_netallow_check_addr(px->cfg->allow, &addrs[i], c->port, host, n_host,
                               &cls)) {
      c->cand[c->n_cand++] = addrs[i];
    } else if (!blocked) {
      /* The first refused address is the one the record names. */
      blocked = true;
      c->addr = addrs[i];
      c->addr_class = cls;
    }
  }
  free(host);
  if (c->n_cand == 0) {
    if (blocked) {
      c->have_addr = true;
      conn_refuse(c, false, SR_PROXY_BLOCKED_ADDRESS);
    } else {
      conn_refuse(c, true, SR_PROXY_RESOLVE_FAILED);
    }
    return;
  }
  c->deadline = sr_now_mono_ms() + px->connect_ms;
  conn_connect_next(c);
}

/* A complete request: decide, then resolve or connect. */
static void conn_decide(struct conn *c) {
  struct proxy *px = c->px;
  const struct sr_netallow *allow = px->cfg->allow;

  c->deadline = sr_now_mono_ms() + px->connect_ms;
  if (!c->counted) {
    conn_refuse(c, false, c->refuse);
    return;
  }
  /* A spent budget (net-egress 0: from the start) admits no connection,
   * not even one that sends nothing with its request: it would still
   * reach the destination, and resolve a name on the skill's behalf. */
  if (px->egress_hit || egress_left(px) == 0 ||
      (px->cfg->max_egress_bytes != UINT64_MAX &&
       c->to_o_len > px->cfg->max_egress_bytes - px->egress_used)) {
    conn_refuse(c, false, SR_PROXY_EGRESS_LIMIT);
    return;
  }
  if (c->host.is_addr) {
    if (!sr_netallow_match_addr(allow, &c->host.addr, c->port)) {
      conn_refuse(c, false, SR_PROXY_NOT_ALLOWLISTED);
      return;
    }
  } else if (!sr_netallow_match_name(allow, c->host.name, c->port)) {
    conn_refuse(c, false, SR_PROXY_NOT_ALLOWLISTED);
    return;
  }
  if (c->host.is_addr) {
    /* The bytes that go with the request are counted now: they will be
     * sent as soon as the connection is up. */
    px->egress_used += c->to_o_len;
    conn_candidates(c, &c->host.addr, 1);
    return;
  }
  if (px->cfg->hosts) {
    struct sr_netaddr a[SR_PROXY_ADDRS_MAX];
    size_t n =
        sr_nethosts_lookup(px->cfg->hosts, c->host.name, a, SR_PROXY_ADDRS_MAX);
    if (n > 0) {
      px->egress_used += c->to_o_len;
      conn_candidates(c, a, n);
      return;
    }
  }
  /* A name looked up in DNS leaves the host in the queries, whatever the
   * answer: under an entry "*.example.com" the skill chooses all of it
   * but the suffix, and a lookup is a message to whoever serves the
   * zone.  Its bytes are sent for the skill and count like the ones it
   * sends itself, once for each question (getaddrinfo's AF_UNSPEC asks
   * for A and AAAA: a resolver's retries, and the suffixes of a search
   * list for a name it does not find, are not counted); one that does
   * not fit is not looked up. */
  uint64_t cost = c->to_o_len + 2 * (uint64_t)strlen(c->host.name);
  if (px->cfg->max_egress_bytes != UINT64_MAX &&
      cost > px->cfg->max_egress_bytes - px->egress_used) {
    conn_refuse(c, false, SR_PROXY_EGRESS_LIMIT);
    return;
  }
  px->egress_used += cost;
  if (resolver_submit(&px->res, c) < 0) {
    conn_refuse(c, true, SR_PROXY_INTERNAL_ERROR);
    return;
  }
  c->st = C_RESOLVING;
}

static void resolver_done(struct proxy *px) {
  struct job *list;
  uint64_t v;

  /* Drains the counter; the list below is what it counted. */
  (void)!read(px->res.efd, &v, sizeof(v));
  pthread_mutex_lock(&px->res.mu);
  list = px->res.done;
  px->res.done = NULL;
  pthread_mutex_unlock(&px->res.mu);
  while (list) {
    struct job *j = list;
    struct conn *c = j->c;
    list = j->next;
    if (c && c->st == C_RESOLVING) {
      c->job = NULL;
      if (j->gai_err != 0 || j->n == 0)
        conn_refuse(c, true, SR_PROXY_RESOLVE_FAILED);
      else
        conn_candidates(c, j->addrs, j->n);
    }
    free(j);
  }
}

/* ---------------------------------------------------------------- handshake
 */

/* Consumes n bytes of c->in. */
static void in_consume(struct conn *c, size_t n) {
  memmove(c->in, c->in + n, c->in_len - n);
  c->in_len -= n;
}

/* What the client sent so far: 1 when a complete request was handled (or
 * refused), 0 when more is needed. */
static int conn_parse(struct conn *c) {
  if (c->in_len == 0)
    return 0;
  if (c->proto == SR_PROXY_PROTO_UNKNOWN) {
    if ((uint8_t)c->in[0] == SR_SOCKS_VERSION)
      c->proto = SR_PROXY_PROTO_SOCKS5;
    else if ((uint8_t)c->in[0] < 0x20 || (uint8_t)c->in[0] >= 0x7f) {
      conn_close(c, false, SR_PROXY_PROTOCOL_ERROR); /* SOCKS4, TLS... */
      return 1;
    }
  }
  if (c->proto == SR_PROXY_PROTO_SOCKS5) {
    size_t used = 0;
    if (c->socks_stage == 0) {
      bool noauth = false;
      int r = sr_socks_parse_greeting((const uint8_t *)c->in, c->in_len, &used,
                                      &noauth);
      if (r == -EAGAIN)
        return 0;
      if (r < 0) {
        conn_close(c, false, SR_PROXY_PROTOCOL_ERROR);
        return 1;
      }
      in_consume(c, used);
      if (!noauth) {
        static const uint8_t none[2] = {SR_SOCKS_VERSION, 0xff};
        c->socks_stage = 2; /* nothing more to say after this */
        if (set_buf(&c->to_c, &c->to_c_len, &c->to_c_off, none, 2) < 0) {
          conn_close(c, false, SR_PROXY_INTERNAL_ERROR);
          return 1;
        }
        c->reason = SR_PROXY_UNSUPPORTED;
        c->st = C_REFUSE;
        c->deadline = sr_now_mono_ms() + DRAIN_MS;
        conn_pump(c);
        return 1;
      }
      static const uint8_t ok[2] = {SR_SOCKS_VERSION, 0};
      /* Two bytes to a socket that has sent nothing yet always fit. */
      if (send(c->cfd, ok, 2, MSG_NOSIGNAL | MSG_DONTWAIT) != 2) {
        conn_close(c, false, SR_PROXY_PROTOCOL_ERROR);
        return 1;
      }
      c->socks_stage = 1;
    }
    struct sr_socks_request req;
    uint8_t rep = 0;
    int r = sr_socks_parse_request((const uint8_t *)c->in, c->in_len, &used,
                                   &req, &rep);
    if (r == -EAGAIN)
      return 0;
    if (r < 0) {
      c->socks_rep = rep;
      conn_refuse(c, false,
                  r == -EPROTONOSUPPORT ? SR_PROXY_UNSUPPORTED
                  : r == -EINVAL        ? SR_PROXY_BAD_DESTINATION
                                        : SR_PROXY_PROTOCOL_ERROR);
      return 1;
    }
    c->host = req.host;
    c->port = req.port;
    in_consume(c, used);
    /* Bytes sent before the reply go to the destination. */
    if (set_buf(&c->to_o, &c->to_o_len, &c->to_o_off, c->in, c->in_len) < 0) {
      conn_refuse(c, false, SR_PROXY_INTERNAL_ERROR);
      return 1;
    }
    c->in_len = 0;
    conn_decide(c);
    return 1;
  }

  struct sr_http_request req;
  const char *why = NULL;
  int r = sr_http_parse_request(c->in, c->in_len, &req, &why);
  if (r == -EAGAIN)
    return 0;
  /* Until the request line says otherwise, a refusal is an HTTP one. */
  c->proto = SR_PROXY_PROTO_HTTP;
  if (r == 0 && req.kind == SR_HTTP_CONNECT)
    c->proto = SR_PROXY_PROTO_CONNECT;
  if (r < 0) {
    conn_refuse(c, false,
                r == -EPROTONOSUPPORT ? SR_PROXY_UNSUPPORTED
                : r == -EINVAL        ? SR_PROXY_BAD_DESTINATION
                                      : SR_PROXY_PROTOCOL_ERROR);
    return 1;
  }
  c->host = req.host;
  c->port = req.port;
  if (req.kind == SR_HTTP_CONNECT) {
    if (set_buf(&c->to_o, &c->to_o_len, &c->to_o_off, c->in + req.head_len,
                c->in_len - req.head_len) < 0) {
      conn_refuse(c, false, SR_PROXY_INTERNAL_ERROR);
      return 1;
    }
  } else {
    size_t cap = req.head_len + SR_HTTP_FORWARD_EXTRA +
                 (c->in_len - req.head_len),
           n = 0;
    char *b = malloc(cap);
    if (!b || sr_http_forward_head(c->in, &req, b,
                                   cap - (c->in_len - req.head_len), &n) < 0) {
      free(b);
      conn_refuse(c, false, SR_PROXY_INTERNAL_ERROR);
      return 1;
    }
    memcpy(b + n, c->in + req.head_len, c->in_len - req.head_len);
    free(c->to_o);
    c->to_o = b;
    c->to_o_len = n + (c->in_len - req.head_len);
    c->to_o_off = 0;
  }
  c->in_len = 0;
  conn_decide(c);
  return 1;
}

static void conn_handshake_read(struct conn *c) {
  for (;;) {
    ssize_t n;

    if (c->in_len == sizeof(c->in)) {
      /* Full and still no complete request. */
      if (c->proto == SR_PROXY_PROTO_UNKNOWN)
        c->proto = SR_PROXY_PROTO_HTTP;
      if (conn_parse(c) == 0)
        conn_refuse(c, false, SR_PROXY_PROTOCOL_ERROR);
      return;
    }
    n = recv(c->cfd, c->in + c->in_len, sizeof(c->in) - c->in_len,
             MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return;
    if (n <= 0) {
      /* Closed (or reset) before a complete request. */
      conn_close(c, false, SR_PROXY_PROTOCOL_ERROR);
      return;
    }
    c->in_len += (size_t)n;
    if (conn_parse(c))
      return;
  }
}

/* ---------------------------------------------------------------- relay */

/* Writes pending bytes of buf; true when all were written, false when the
 * socket is full; -1 through *dead when the peer is gone. */
static bool flush_buf(int fd, const char *buf, size_t len, size_t *off,
                      uint64_t *count, bool *dead) {
  while (*off < len) {
    ssize_t n = send(fd, buf + *off, len - *off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return false;
    if (n < 0) {
      *dead = true;
      return false;
    }
    *off += (size_t)n;
    if (count)
      *count += (uint64_t)n;
  }
  return true;
}

/* Egress budget left for direction 0 (client -> origin). */
static uint64_t egress_left(const struct proxy *px) {
  if (px->cfg->max_egress_bytes == UINT64_MAX)
    return UINT64_MAX;
  return px->cfg->max_egress_bytes > px->egress_used
             ? px->cfg->max_egress_bytes - px->egress_used
             : 0;
}

static void egress_limit_hit(struct proxy *px);

/*
 * Moves data src -> dst until one side would block.  Returns -1 when the
 * connection must end (a peer is gone, the egress cap), 1 when it stopped
 * with data still flowing (fairness), 0 otherwise.
 */
static int dir_pump(struct conn *c, int i) {
  struct proxy *px = c->px;
  struct dir *d = &c->d[i];
  int src = i == 0 ? c->cfd : c->ofd, dst = i == 0 ? c->ofd : c->cfd;
  uint64_t *count = i == 0 ? &c->bytes_out : &c->bytes_in;
  bool dead = false;

  /* First what the handshake left to send. */
  if (i == 0 && c->to_o_off < c->to_o_len) {
    if (!flush_buf(dst, c->to_o, c->to_o_len, &c->to_o_off, count, &dead))
      return dead ? -1 : 0;
    c->last_io = sr_now_mono_ms();
  }
  if (i == 1 && c->to_c_off < c->to_c_len) {
    if (!flush_buf(dst, c->to_c, c->to_c_len, &c->to_c_off, NULL, &dead))
      return dead ? -1 : 0;
  }

  for (int rounds = 0; rounds < 64; rounds++) {
    size_t pending = d->copy ? d->len - d->off : d->pend;

    if (pending > 0) {
      ssize_t n;
      if (d->copy)
        n = send(dst, d->buf + d->off, pending, MSG_NOSIGNAL | MSG_DONTWAIT);
      else
        n = splice(d->pipe[0], NULL, dst, NULL, pending,
                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return 0;
      if (n < 0)
        return -1;
      if (d->copy)
        d->off += (size_t)n;
      else
        d->pend -= (size_t)n;
      *count += (uint64_t)n;
      c->last_io = sr_now_mono_ms();
      continue;
    }
    if (d->eof) {
      if (!d->shut) {
        d->shut = true;
        /* Half-close: the other direction may still be talking. */
        (void)shutdown(dst, SHUT_WR);
      }
      return 0;
    }

    size_t want = d->copy ? COPY_BUF : PIPE_SIZE;
    if (i == 0) {
      uint64_t left = egress_left(px);
      if (left == 0) {
        char b;
        ssize_t n = recv(src, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
          return 0;
        if (n == 0) {
          d->eof = true;
          continue;
        }
        /* More to send than the cap allows. */
        egress_limit_hit(px);
        return -1;
      }
      if (left < want)
        want = (size_t)left;
    }
    ssize_t n;
    if (d->copy) {
      if (!d->buf) {
        d->buf = malloc(COPY_BUF);
        if (!d->buf)
          return -1;
      }
      n = recv(src, d->buf, want, MSG_DONTWAIT);
    } else {
      n = splice(src, NULL, d->pipe[1], NULL, want,
                 SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0 && (errno == EINVAL || errno == ENOSYS)) {
        d->copy = true; /* this socket pair cannot splice */
        continue;
      }
    }
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return 0;
    if (n < 0)
      return -1;
    if (n == 0) {
      d->eof = true;
      continue;
    }
    if (d->copy) {
      d->off = 0;
      d->len = (size_t)n;
    } else {
      d->pend = (size_t)n;
    }
    if (i == 0)
      px->egress_used += (uint64_t)n;
  }
  /* Still busy after 64 rounds: let other connections have a turn.  The
   * edge that woke us is spent, so come back through the ready list. */
  return 1;
}

static void conn_pump(struct conn *c) {
  struct proxy *px = c->px;
  bool dead = false;

  switch (c->st) {
  case C_HANDSHAKE:
    conn_handshake_read(c);
    return;
  case C_REFUSE:
    if (!flush_buf(c->cfd, c->to_c, c->to_c_len, &c->to_c_off, NULL, &dead)) {
      if (dead)
        conn_close(c, c->allowed, c->reason);
      return;
    }
    (void)shutdown(c->cfd, SHUT_WR);
    c->st = C_DRAIN;
    /* fall through */
  case C_DRAIN:
    for (;;) {
      char sink[4096];
      ssize_t n = recv(c->cfd, sink, sizeof(sink), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return;
      if (n <= 0) {
        conn_close(c, c->allowed, c->reason);
        return;
      }
    }
  case C_RELAY: {
    int r0 = dir_pump(c, 0), r1 = r0 < 0 ? 0 : dir_pump(c, 1);
    if (c->st == C_DEAD)
      return; /* the egress cap closed it */
    if (r0 < 0 || r1 < 0) {
      conn_close(c, true, SR_PROXY_CLOSED);
      return;
    }
    if (c->d[0].shut && c->d[1].shut) {
      conn_close(c, true, SR_PROXY_CLOSED);
      return;
    }
    if (px->cfg->idle_timeout_ms)
      c->deadline = c->last_io + px->cfg->idle_timeout_ms;
    if (r0 > 0 || r1 > 0) {
      /* Busy: poll again right away (see dir_pump). */
      c->deadline = 1;
    }
    return;
  }
  default:
    return;
  }
}

static void egress_limit_hit(struct proxy *px) {
  struct sr_proxy_event ev;

  if (px->egress_hit)
    return;
  px->egress_hit = true;
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_EGRESS_LIMIT;
  ev.limit = px->cfg->max_egress_bytes;
  ev.used = px->egress_used;
  rec_push(px, &ev);
  /* Stop relaying everywhere: the budget is the run's, not one
   * connection's. */
  for (size_t i = 0; i < px->n_conns; i++) {
    struct conn *c = px->conns[i];
    if (c->st == C_RELAY)
      conn_close(c, true, SR_PROXY_EGRESS_LIMIT);
    else if (c->st == C_RESOLVING || c->st == C_CONNECTING)
      conn_refuse(c, false, SR_PROXY_EGRESS_LIMIT);
  }
}

/* ---------------------------------------------------------------- accept */

static void catch_up(struct proxy *px);

static void accept_one(struct proxy *px, int lfd) {
  struct conn *c;
  int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  uint64_t now = sr_now_mono_ms();
  enum sr_proxy_reason refuse = SR_PROXY_CLOSED;
  bool counted = true;

  if (fd < 0) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
        errno == ENOMEM) {
      /* Nothing can be accepted now; the pending ones wait in the
       * backlog.  Stop listening briefly instead of spinning. */
      for (size_t i = 0; i < px->n_listen; i++)
        (void)epoll_ctl(px->epfd, EPOLL_CTL_DEL, px->listen_fds[i], NULL);
      px->accept_paused = true;
      px->accept_resume = now + ACCEPT_PAUSE_MS;
    }
    return;
  }
  if (!px->egress_hit && px->n_counted >= px->cfg->max_connections)
    catch_up(px);
  if (px->egress_hit) {
    counted = false;
    refuse = SR_PROXY_EGRESS_LIMIT;
  } else if (px->n_counted >= px->cfg->max_connections) {
    counted = false;
    refuse = SR_PROXY_CONNECTION_LIMIT;
  }
  if (px->n_conns == px->cap_conns) {
    /* Closed connections stay listed until the end of the event batch. */
    size_t cap = px->cap_conns ? px->cap_conns * 2 : 16;
    /* An array of pointers: sizeof(*v) is the pointer size on purpose.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    struct conn **v = realloc(px->conns, cap * sizeof(*v));
    if (v) {
      px->conns = v;
      px->cap_conns = cap;
    }
  }
  c = calloc(1, sizeof(*c));
  if (!c || px->n_conns == px->cap_conns ||
      (!counted && px->n_refusing >= SR_PROXY_REFUSE_SLOTS)) {
    struct sr_proxy_event ev;
    free(c);
    safe_close(fd);
    memset(&ev, 0, sizeof(ev));
    ev.type = SR_PROXY_REC_CONNECTION;
    ev.id = ++px->next_id;
    ev.reason = counted ? SR_PROXY_INTERNAL_ERROR : refuse;
    rec_push(px, &ev);
    px->n_total++;
    px->n_denied++;
    return;
  }
  c->px = px;
  c->id = ++px->next_id;
  c->st = C_HANDSHAKE;
  c->counted = counted;
  c->refuse = refuse;
  c->cfd = fd;
  c->ofd = -1;
  c->d[0].pipe[0] = c->d[0].pipe[1] = c->d[1].pipe[0] = c->d[1].pipe[1] = -1;
  c->t_start = now;
  c->deadline = now + px->handshake_ms;
  c->ep_c = (struct ep){.kind = EP_CLIENT, .c = c};
  if (counted)
    px->n_counted++;
  else
    px->n_refusing++;
  px->conns[px->n_conns++] = c;
  set_nodelay(fd);
  if (set_bufs(fd, SOCKBUF_SANDBOX) < 0 ||
      ep_add(px, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, &c->ep_c) < 0) {
    conn_close(c, false, SR_PROXY_INTERNAL_ERROR);
    return;
  }
  /* Edge-triggered: what arrived before the registration must be read. */
  conn_pump(c);
}

/* ---------------------------------------------------------------- loop */

static void reap_dead(struct proxy *px) {
  if (!px->dead)
    return;
  for (size_t i = 0; i < px->n_conns;) {
    if (px->conns[i]->st == C_DEAD)
      px->conns[i] = px->conns[--px->n_conns];
    else
      i++;
  }
  while (px->dead) {
    struct conn *c = px->dead;
    px->dead = c->next_dead;
    free(c->to_c);
    free(c->to_o);
    free(c);
  }
}

static void check_deadlines(struct proxy *px, uint64_t now) {
  if (px->accept_paused && now >= px->accept_resume) {
    px->accept_paused = false;
    for (size_t i = 0; i < px->n_listen; i++)
      if (ep_add(px, px->listen_fds[i], EPOLLIN, &px->ep_listen[i]) < 0)
        fatal(px, -1, errno, "epoll_ctl (listener)");
  }
  for (size_t i = 0; i < px->n_conns; i++) {
    struct conn *c = px->conns[i];
    if (c->st == C_DEAD || c->deadline == 0 || now < c->deadline)
      continue;
    switch (c->st) {
    case C_HANDSHAKE:
      if (c->proto == SR_PROXY_PROTO_UNKNOWN && c->in_len > 0 &&
          c->in[0] != SR_SOCKS_VERSION)
        c->proto = SR_PROXY_PROTO_HTTP;
      /* A SOCKS client mid-greeting gets no reply it could read. */
      if (c->proto == SR_PROXY_PROTO_SOCKS5 && c->socks_stage == 0)
        conn_close(c, false, SR_PROXY_HANDSHAKE_TIMEOUT);
      else
        conn_refuse(c, false, SR_PROXY_HANDSHAKE_TIMEOUT);
      break;
    case C_RESOLVING:
    case C_CONNECTING:
      conn_refuse(c, true, SR_PROXY_CONNECT_TIMEOUT);
      break;
    case C_RELAY:
      if (c->deadline == 1) {
        c->deadline = 0;
        conn_pump(c);
      } else {
        conn_close(c, true, SR_PROXY_IDLE_TIMEOUT);
      }
      break;
    case C_REFUSE:
    case C_DRAIN:
      conn_close(c, c->allowed, c->reason);
      break;
    default:
      break;
    }
  }
}

static int next_timeout(const struct proxy *px, uint64_t now) {
  uint64_t best = UINT64_MAX;

  if (px->accept_paused)
    best = px->accept_resume;
  for (size_t i = 0; i < px->n_conns; i++)
    if (px->conns[i]->deadline && px->conns[i]->deadline < best)
      best = px->conns[i]->deadline;
  if (best == UINT64_MAX)
    return -1;
  if (best <= now)
    return 0;
  return best - now > 60000 ? 60000 : (int)(best - now);
}

static void shutdown_all(struct proxy *px) {
  struct sr_proxy_event ev;

  for (size_t i = 0; i < px->n_conns; i++) {
    struct conn *c = px->conns[i];
    if (c->st == C_RELAY || c->st == C_CONNECTING || c->st == C_RESOLVING)
      conn_close(c, true, SR_PROXY_SHUTDOWN);
    else if (c->st != C_DEAD)
      conn_close(c, c->st == C_REFUSE || c->st == C_DRAIN ? c->allowed : false,
                 c->st == C_REFUSE || c->st == C_DRAIN ? c->reason
                                                       : SR_PROXY_SHUTDOWN);
  }
  reap_dead(px);
  for (size_t i = 0; i < px->n_cut; i++) {
    set_reset_on_close(px->cut_fds[i]);
    safe_close(px->cut_fds[i]);
  }
  px->n_cut = 0;
  memset(&ev, 0, sizeof(ev));
  ev.type = SR_PROXY_REC_SUMMARY;
  ev.connections = px->n_total;
  ev.denied = px->n_denied;
  ev.total_out = px->total_out;
  ev.total_in = px->total_in;
  rec_push(px, &ev);
  rec_drain(px, 2000);
}

/* One event of the epoll set, a listener's aside (the callers accept). */
static void dispatch(struct proxy *px, const struct epoll_event *ev) {
  struct ep *e = ev->data.ptr;

  switch (e->kind) {
  case EP_LISTEN:
    break;
  case EP_SIGNAL: {
    struct signalfd_siginfo si;
    if (read(px->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
      shutdown_all(px);
      _exit(0);
    }
    break;
  }
  case EP_RECORD:
    if (ev->events & (EPOLLERR | EPOLLHUP))
      _exit(1); /* the supervisor is gone */
    rec_flush(px);
    break;
  case EP_RESOLVER:
    resolver_done(px);
    break;
  case EP_CLIENT:
    if (e->c->st != C_DEAD)
      conn_pump(e->c);
    break;
  case EP_ORIGIN:
    if (e->c->st == C_CONNECTING) {
      /* Only the end of the connect says anything now. */
      if (ev->events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
        conn_origin_writable(e->c);
    } else if (e->c->st != C_DEAD) {
      conn_pump(e->c);
    }
    break;
  }
}

/* A connection the skill closed counts against net-connections until its
 * close is read.  A listener with connections waiting comes back first in
 * every batch, before the closes that came before them: so at the limit,
 * what is ready now is handled before one more is refused.  A few
 * batches at most, each of them work that was due anyway. */
static void catch_up(struct proxy *px) {
  struct epoll_event evs[64];

  for (int round = 0;
       round < CATCH_UP_ROUNDS && px->n_counted >= px->cfg->max_connections;
       round++) {
    int n = epoll_wait(px->epfd, evs, (int)SR_ARRAY_SIZE(evs), 0);

    for (int i = 0; i < n; i++)
      dispatch(px, &evs[i]);
    if (n < (int)SR_ARRAY_SIZE(evs))
      break;
  }
}

_Noreturn static void proxy_loop(struct proxy *px) {
  struct epoll_event evs[64];

  for (;;) {
    uint64_t now = sr_now_mono_ms();
    int n = epoll_wait(px->epfd, evs, (int)SR_ARRAY_SIZE(evs),
                       next_timeout(px, now));
    bool listen_ready[SR_ARRAY_SIZE(px->listen_fds)] = {false};

    if (n < 0 && errno != EINTR)
      fatal(px, -1, errno, "epoll_wait");
    /* The batch's other events first: among them may be the closes of
     * connections the waiting ones are to replace (catch_up). */
    for (int i = 0; i < n; i++) {
      const struct ep *e = evs[i].data.ptr;
      if (e->kind == EP_LISTEN)
        listen_ready[e->index] = true;
      else
        dispatch(px, &evs[i]);
    }
    for (size_t l = 0; l < px->n_listen; l++) {
      for (int k = 0; listen_ready[l] && k < ACCEPT_BATCH && !px->accept_paused;
           k++) {
        size_t before = px->next_id;
        accept_one(px, px->listen_fds[l]);
        if (px->next_id == before)
          break; /* EAGAIN */
      }
    }
    check_deadlines(px, sr_now_mono_ms());
    reap_dead(px);
  }
}

/* ---------------------------------------------------------------- setup */

/* Root: switch to the given ids.  Always: no capabilities, no_new_privs,
 * not dumpable, no real-time policy.  Each step read back. */
static int drop_privileges(const struct sr_proxy_config *cfg,
                           const char **what) {
  cap_t caps;
  /* As caps.c: what libcap knows, then what the kernel knows beyond. */
  cap_value_t last = (cap_value_t)cap_max_bits() - 1;
  bool root = sr_root_mode();
  struct sr_error err = {0};
  int r;

  while (last < 63 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
    last++;
  if (root) {
    if (cfg->uid == (uid_t)-1 || cfg->gid == (gid_t)-1 || cfg->uid == 0 ||
        cfg->gid == 0) {
      *what = "refusing to run the proxy as root: no unprivileged uid/gid";
      return -EPERM;
    }
  }
  /* The bounding set needs CAP_SETPCAP, so it goes first; an unprivileged
   * caller without it keeps a bounding set that no_new_privs (and a
   * process that never execs) makes moot. */
  for (cap_value_t c = 0; c <= last; c++)
    if (cap_drop_bound(c) < 0 && (root || errno != EPERM)) {
      *what = "dropping the capability bounding set";
      return -errno;
    }
  if (cap_reset_ambient() < 0 && errno != EINVAL) {
    *what = "clearing the ambient capabilities";
    return -errno;
  }
  if (root) {
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    if (setgroups(0, NULL) < 0) {
      *what = "setgroups";
      return -errno;
    }
    if (setresgid(cfg->gid, cfg->gid, cfg->gid) < 0) {
      *what = "setresgid";
      return -errno;
    }
    if (setresuid(cfg->uid, cfg->uid, cfg->uid) < 0) {
      *what = "setresuid";
      return -errno;
    }
    if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 ||
        ru != cfg->uid || eu != cfg->uid || su != cfg->uid || rg != cfg->gid ||
        eg != cfg->gid || sg != cfg->gid || getgroups(0, NULL) != 0) {
      *what = "the proxy's ids did not take";
      return -EPERM;
    }
  }
  caps = cap_init();
  if (!caps) {
    *what = "cap_init";
    return -errno;
  }
  r = cap_set_proc(caps);
  if (r == 0) {
    cap_t now = cap_get_proc();
    r = now && cap_compare(now, caps) == 0 ? 0 : -1;
    if (now)
      (void)cap_free(now);
    if (r < 0)
      errno = EPERM;
  }
  (void)cap_free(caps);
  if (r < 0) {
    *what = "dropping capabilities";
    return -errno;
  }
  for (cap_value_t c = 0; c <= last; c++)
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) > 0) {
      *what = "an ambient capability survived";
      return -EPERM;
    }
  if (sr_set_no_new_privs(&err) < 0) {
    *what = "no_new_privs";
    return -(err.err ? err.err : EPERM);
  }
  /* After the id change, which resets it: no ptrace by a process of the
   * same uid (the sandbox user, as root), no core dump. */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
    *what = "PR_SET_DUMPABLE";
    return -errno;
  }
  /* Under chrt -f its work, which the skill's connections drive and no
   * CPU budget counts, would go before the host's.  Before its threads. */
  if (sr_drop_realtime(&err) < 0) {
    *what = "dropping the real-time policy";
    return -(err.err ? err.err : EPERM);
  }
  return 0;
}

_Noreturn static void proxy_child(const struct sr_proxy_config *cfg, int rec_fd,
                                  pid_t parent) {
  static struct proxy px_storage;
  struct proxy *px = &px_storage;
  int keep[4];
  size_t n_keep = 0;
  sigset_t mask;
  struct rlimit rl;
  rlim_t need;
  const char *what = NULL;
  int fd, r;

  /* Dies with the supervisor; if it is already gone, now. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    fatal(NULL, rec_fd, errno, "PR_SET_PDEATHSIG");
  if (getppid() != parent)
    _exit(1);
  /* Out of the terminal's process group: a ^C goes to the supervisor,
   * which ends the proxy in order. */
  (void)setsid();
  /* The supervisor's signal handling is not ours. */
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP)
      (void)signal(s, SIG_DFL);
  (void)signal(SIGPIPE, SIG_IGN);
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  if (sigprocmask(SIG_SETMASK, &mask, NULL) < 0)
    fatal(NULL, rec_fd, errno, "sigprocmask");

  /* Only the listeners and the record socket stay open; 0-2 go to
   * /dev/null (stdout may be the audit stream). */
  for (size_t i = 0; i < cfg->n_listen; i++)
    keep[n_keep++] = cfg->listen_fds[i];
  keep[n_keep++] = rec_fd;
  fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd < 0)
    fatal(NULL, rec_fd, errno, "open /dev/null");
  for (int i = 0; i < 3; i++)
    if (fd != i && dup2(fd, i) < 0)
      fatal(NULL, rec_fd, errno, "dup2 /dev/null");
  if (fd > 2)
    safe_close(fd);
  r = sr_close_all_fds_except(3, keep, n_keep);
  if (r < 0)
    fatal(NULL, rec_fd, -r, "close inherited fds");

  rl.rlim_cur = rl.rlim_max = 0;
  (void)setrlimit(RLIMIT_CORE, &rl); /* belt and braces with DUMPABLE */
  /* Per connection: client, origin, two pipes. */
  need = (rlim_t)(cfg->max_connections + SR_PROXY_REFUSE_SLOTS) * 6 + 64;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
    fatal(NULL, rec_fd, errno, "getrlimit");
  if (rl.rlim_cur < need) {
    if (rl.rlim_max < need) {
      char m[128];
      (void)snprintf(m, sizeof(m),
                     "RLIMIT_NOFILE %llu is too low for %u connections "
                     "(needs %llu)",
                     (unsigned long long)rl.rlim_max, cfg->max_connections,
                     (unsigned long long)need);
      fatal(NULL, rec_fd, 0, m);
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
      fatal(NULL, rec_fd, errno, "setrlimit RLIMIT_NOFILE");
  }

  r = drop_privileges(cfg, &what);
  if (r < 0)
    fatal(NULL, rec_fd, -r, what);
  /* A change of credentials clears the death signal (prctl(2)): arm it
   * again, and look once more for a supervisor that died meanwhile. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    fatal(NULL, rec_fd, errno, "PR_SET_PDEATHSIG");
  if (getppid() != parent)
    _exit(1);

  memset(px, 0, sizeof(*px));
  px->cfg = cfg;
  px->rec_fd = rec_fd;
  px->handshake_ms = cfg->handshake_timeout_ms ? cfg->handshake_timeout_ms
                                               : SR_PROXY_HANDSHAKE_MS;
  px->connect_ms =
      cfg->connect_timeout_ms ? cfg->connect_timeout_ms : SR_PROXY_CONNECT_MS;
  px->cap_conns = cfg->max_connections + SR_PROXY_REFUSE_SLOTS;
  /* An array of pointers, as above.
   * NOLINTNEXTLINE(bugprone-sizeof-expression) */
  px->conns = calloc(px->cap_conns, sizeof(*px->conns));
  px->q = calloc(RECORD_QUEUE_MAX, sizeof(*px->q));
  if (!px->conns || !px->q)
    fatal(NULL, rec_fd, ENOMEM, "allocating the connection table");
  px->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (px->epfd < 0)
    fatal(NULL, rec_fd, errno, "epoll_create1");
  px->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (px->sigfd < 0)
    fatal(NULL, rec_fd, errno, "signalfd");
  px->ep_sig.kind = EP_SIGNAL;
  px->ep_rec.kind = EP_RECORD;
  px->ep_res.kind = EP_RESOLVER;
  if (ep_add(px, px->sigfd, EPOLLIN, &px->ep_sig) < 0 ||
      ep_add(px, rec_fd, 0, &px->ep_rec) < 0)
    fatal(NULL, rec_fd, errno, "epoll_ctl");
  for (size_t i = 0; i < cfg->n_listen; i++) {
    int fl = fcntl(cfg->listen_fds[i], F_GETFL);
    px->listen_fds[i] = cfg->listen_fds[i];
    px->ep_listen[i] = (struct ep){.kind = EP_LISTEN, .index = (int)i};
    if (fl < 0 || fcntl(cfg->listen_fds[i], F_SETFL, fl | O_NONBLOCK) < 0)
      fatal(NULL, rec_fd, errno, "O_NONBLOCK on the listener");
    if (ep_add(px, cfg->listen_fds[i], EPOLLIN, &px->ep_listen[i]) < 0)
      fatal(NULL, rec_fd, errno, "epoll_ctl (listener)");
  }
  px->n_listen = cfg->n_listen;
  r = resolver_start(&px->res);
  if (r < 0)
    fatal(NULL, rec_fd, -r, "starting the resolver threads");
  if (ep_add(px, px->res.efd, EPOLLIN, &px->ep_res) < 0)
    fatal(NULL, rec_fd, errno, "epoll_ctl (resolver)");

  struct sr_proxy_event ready = {.type = SR_PROXY_REC_READY};
  rec_push(px, &ready);
  proxy_loop(px);
}

/* ---------------------------------------------------------------- parent */

int sr_proxy_recv(int record_fd, struct sr_proxy_event *ev) {
  struct sr_proxy_wire w;
  ssize_t n;

  do
    /* MSG_TRUNC: the message's real length, so a longer one shows. */
    n = recv(record_fd, &w, sizeof(w), MSG_DONTWAIT | MSG_TRUNC);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    int e = errno;
    return e > 0 ? -e : -EIO;
  }
  if (n == 0)
    return -EPIPE;
  if ((size_t)n != sizeof(w))
    return -EBADMSG;
  return sr_proxy_record_decode(&w, (size_t)n, ev);
}

static int wait_record(int fd, uint64_t timeout_ms, struct sr_proxy_event *ev) {
  uint64_t end = sr_now_mono_ms() + timeout_ms;

  for (;;) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    uint64_t now = sr_now_mono_ms();
    int r = sr_proxy_recv(fd, ev);

    if (r != -EAGAIN)
      return r;
    if (now >= end)
      return -ETIMEDOUT;
    if (poll(&pfd, 1, (int)(end - now)) < 0 && errno != EINTR)
      return -errno;
  }
}

static void proxy_reap(struct sr_proxy *p) {
  siginfo_t si;
  int r;

  if (p->pid <= 0)
    return;
  do {
    if (p->pidfd >= 0)
      r = waitid((idtype_t)P_PIDFD, (id_t)p->pidfd, &si, WEXITED);
    else
      r = waitid(P_PID, (id_t)p->pid, &si, WEXITED);
  } while (r < 0 && errno == EINTR);
  p->pid = 0;
  p->pidfd = safe_close(p->pidfd);
  p->record_fd = safe_close(p->record_fd);
}

static void proxy_kill(struct sr_proxy *p, int sig) {
  if (p->pidfd >= 0)
    (void)syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0);
  else if (p->pid > 0)
    (void)kill(p->pid, sig);
}

int sr_proxy_spawn(const struct sr_proxy_config *cfg, struct sr_proxy *p,
                   struct sr_error *err) {
  _cleanup_close_ int rec0 = -1, rec1 = -1;
  struct sr_proxy_event ev = {0}; /* as in sr_proxy_stop */
  pid_t parent = getpid(), pid;
  int sv[2], r;

  if (!cfg->allow || cfg->n_listen < 1 || cfg->n_listen > 2 ||
      cfg->max_connections < 1 ||
      cfg->max_connections > SR_PROXY_MAX_CONNECTIONS)
    return sr_error_layer(err, "proxy", EINVAL,
                          "proxy: bad configuration (listeners %zu, "
                          "connections %u)",
                          cfg->n_listen, cfg->max_connections);
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_layer(err, "proxy", errno, "proxy: socketpair");
  rec0 = sv[0];
  rec1 = sv[1];
  pid = fork();
  if (pid < 0)
    return sr_error_layer(err, "proxy", errno, "proxy: fork");
  if (pid == 0) {
    int fd = TAKE_FD(rec1);
    /* rec0 is read by its _cleanup_close_ handler, which clang 14's
     * dead-store check does not model (likewise rec1 below).
     * NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores) */
    rec0 = safe_close(rec0);
    proxy_child(cfg, fd, parent);
  }
  /* NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores) */
  rec1 = safe_close(rec1);
  p->pid = pid;
  p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (fcntl(rec0, F_SETFL, O_NONBLOCK) < 0) {
    r = -errno;
    p->record_fd = TAKE_FD(rec0);
    proxy_kill(p, SIGKILL);
    proxy_reap(p);
    return sr_error_layer(err, "proxy", -r, "proxy: O_NONBLOCK");
  }
  p->record_fd = TAKE_FD(rec0);
  r = wait_record(p->record_fd, READY_TIMEOUT_MS, &ev);
  if (r == 0 && ev.type == SR_PROXY_REC_READY)
    return 0;
  proxy_kill(p, SIGKILL);
  proxy_reap(p);
  if (r == 0 && ev.type == SR_PROXY_REC_FATAL)
    return sr_error_layer(err, "proxy", 0, "proxy: %s", ev.message);
  if (r == 0)
    return sr_error_layer(err, "proxy", EPROTO,
                          "proxy: unexpected first record");
  return sr_error_layer(err, "proxy", -r, "proxy: no ready record");
}

int sr_proxy_stop(struct sr_proxy *p, uint64_t timeout_ms, sr_proxy_event_fn fn,
                  void *data) {
  uint64_t end = sr_now_mono_ms() + timeout_ms;
  bool summary = false;
  int ret = 0;

  if (p->pid <= 0) {
    p->record_fd = safe_close(p->record_fd);
    p->pidfd = safe_close(p->pidfd);
    return 0;
  }
  proxy_kill(p, SIGTERM);
  while (p->record_fd >= 0) {
    /* Zeroed for clang 14's analyzer, which loses that r == 0 means ev
     * was written. */
    struct sr_proxy_event ev = {0};
    uint64_t now = sr_now_mono_ms();
    int r = wait_record(p->record_fd, now < end ? end - now : 0, &ev);

    if (r == 0) {
      if (ev.type == SR_PROXY_REC_SUMMARY)
        summary = true;
      if (fn)
        fn(&ev, data);
      continue;
    }
    if (r == -ETIMEDOUT)
      ret = -ETIMEDOUT;
    if (r != -EBADMSG || now >= end)
      break;
  }
  if (ret < 0)
    proxy_kill(p, SIGKILL);
  proxy_reap(p);
  if (ret == 0 && !summary)
    ret = -EPIPE; /* it ended before, or without, an orderly stop */
  return ret;
}
