/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/*
 * The egress proxy process (Run layer): forked by the supervisor for the
 * run's lifetime, it accepts the sandbox's connections on listening
 * sockets the sandbox's init made inside the sandbox's network namespace,
 * serves HTTP CONNECT, absolute-form HTTP and SOCKS5 on the same port (the
 * first byte decides: 0x05 is SOCKS5), checks every destination against
 * the allowlist and every resolved address against the blocked ranges,
 * connects from the supervisor's namespace to exactly the address it
 * checked, relays (splice(2) through a pipe), and reports one record per
 * connection on a SOCK_SEQPACKET socket (proxyproto.h).
 *
 * Absolute-form HTTP is one request per connection: the head is rewritten
 * (origin form, hop-by-hop headers removed, `Connection: close` added) and
 * whatever the client sends after it goes unchanged to the same, already
 * checked, origin.  Bytes a client sends before the CONNECT or SOCKS reply
 * go to the destination once it is connected.  The egress cap counts what
 * the sandbox sends (heads forwarded, bodies, tunnelled bytes), not what it
 * receives; the handshake bytes the proxy consumes are not counted.
 *
 * The process needs no privilege: started as root it switches to the ids
 * it is given, then in every case it drops every capability, sets
 * no_new_privs, is not dumpable (no ptrace, no core) and dies with its
 * parent (PR_SET_PDEATHSIG).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_error;
struct sr_netallow;
struct sr_nethosts;
struct sr_proxy_event;

/* The port the sandbox's init listens on, inside the sandbox's own network
 * namespace (nothing else can listen there). */
#define SR_PROXY_PORT 3128

#define SR_PROXY_HANDSHAKE_MS 10000 /* default: complete request in time */
#define SR_PROXY_CONNECT_MS 10000   /* default: resolve + connect */
#define SR_PROXY_MAX_CONNECTIONS 4096
/* Connections over max_connections still get a proper refusal (403/SOCKS
 * error): at most this many at a time; beyond, they are closed at once. */
#define SR_PROXY_REFUSE_SLOTS 16
#define SR_PROXY_ADDRS_MAX 16 /* addresses tried per name */

struct sr_proxy_config {
  const struct sr_netallow *allow; /* the effective list (copied by fork) */
  const struct sr_nethosts *hosts; /* NULL: names resolve through DNS */
  const int *listen_fds;           /* 1 or 2 listening TCP sockets */
  size_t n_listen;
  unsigned max_connections;      /* concurrent, 1..SR_PROXY_MAX_CONNECTIONS */
  uint64_t max_egress_bytes;     /* sandbox -> destinations; UINT64_MAX: none */
  uint64_t handshake_timeout_ms; /* 0: SR_PROXY_HANDSHAKE_MS */
  uint64_t connect_timeout_ms;   /* 0: SR_PROXY_CONNECT_MS */
  uint64_t idle_timeout_ms;      /* relay without traffic; 0: none */
  /* Started as root (euid 0), the proxy switches to these (required, not
   * 0); otherwise they are ignored.  (uid_t)-1: none given. */
  uid_t uid;
  gid_t gid;
  bool no_splice; /* relay with read/write only (tests, benchmarks) */
};

/* The supervisor's handle.  Init with SR_PROXY_NULL. */
struct sr_proxy {
  pid_t pid;
  int pidfd;     /* -1 without pidfd_open */
  int record_fd; /* SOCK_SEQPACKET, O_CLOEXEC|O_NONBLOCK: one record each */
};
#define SR_PROXY_NULL                                                          \
  { .pid = 0, .pidfd = -1, .record_fd = -1 }

/*
 * Forks the proxy process and waits (up to 5 s) for its READY record, so
 * a failure to set it up (privileges, limits) is reported here, as
 * sr_error_layer("proxy", ...).  The listen fds are borrowed: the child
 * keeps its copies, the caller should close its own afterwards.  The child
 * closes every other fd it inherited and points 0-2 at /dev/null.
 */
int sr_proxy_spawn(const struct sr_proxy_config *cfg, struct sr_proxy *p,
                   struct sr_error *err);

/* Reads one record from p->record_fd (non-blocking).  0 (one event),
 * -EAGAIN (none now), -EPIPE (the proxy is gone), -EBADMSG (a record that
 * does not decode: the caller should stop the proxy), other -errno. */
int sr_proxy_recv(int record_fd, struct sr_proxy_event *ev);

typedef void (*sr_proxy_event_fn)(const struct sr_proxy_event *ev, void *data);
/*
 * Ends the proxy: SIGTERM (it closes every connection, records each with
 * reason `shutdown`, then sends SUMMARY), passes every record still to
 * come to fn (may be NULL) until EOF or timeout_ms, then SIGKILL if it is
 * still alive, reaps it and closes the fds.  Safe on SR_PROXY_NULL and
 * twice (0).  Returns 0 after an orderly stop (SUMMARY seen), -ETIMEDOUT
 * when it had to be killed, -EPIPE when it had already ended (crashed or
 * sent FATAL: the records before say what is known).
 */
int sr_proxy_stop(struct sr_proxy *p, uint64_t timeout_ms, sr_proxy_event_fn fn,
                  void *data);
