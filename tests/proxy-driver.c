/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proxy-driver: runs the egress proxy the way the supervisor will, for
 * tests/integration/proxy.sh and bench/network, and the traffic tools the
 * benchmark needs.
 *
 *   proxy-driver serve [OPTION]...
 *       --allow ENTRY       allowlist entry (literals accepted; repeatable)
 *       --hosts FILE        hosts file the proxy consults first
 *       --max-conn N        concurrent connections (default 64)
 *       --max-egress BYTES  egress byte cap (default none)
 *       --handshake-ms N --connect-ms N --idle-ms N
 *       --uid N --gid N     ids for the proxy when run as root
 *       --no-splice         relay with read/write only
 *       --sandbox-netns     make the listener inside a new network namespace
 *                           (a child holds it: nsenter --net=/proc/PID/ns/net)
 *                           and pass it out over SCM_RIGHTS, as init will
 *       --port N            listener port (default 3128 in the sandbox
 *                           namespace, else 0: any)
 *       --info FILE         written once serving: port=, proxy_pid=,
 *                           netns_pid=, then the proxy environment lines
 *       --records FILE      one JSON object per record, as the supervisor
 *                           would turn it into an audit event
 *       --fail-getifaddrs ERRNO
 *                           every getifaddrs(3) of the proxy fails with
 *                           ERRNO (the driver is linked with
 *                           --wrap=getifaddrs)
 *     Runs until SIGTERM or SIGINT, then stops the proxy in order.
 *
 *   proxy-driver sink ADDR PORT PORTFILE     discard every connection's bytes
 *   proxy-driver echo ADDR PORT PORTFILE     echo every connection's bytes
 *   proxy-driver xfer HOST PORT BYTES [PROXYPORT NAME]
 *       send BYTES to a sink (through CONNECT NAME:PORT on 127.0.0.1:PROXYPORT
 *       when given); prints "bytes=N seconds=S cpu_ms=N" (the sender's CPU)
 *     (the sink prints "sink bytes=N cpu_ms=N" on stderr per connection)
 *   proxy-driver latency HOST PORT COUNT [PROXYPORT NAME]
 *       COUNT times: connect (and CONNECT), one byte to an echo and back;
 *       prints "median_us=N p90_us=N"
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "error.h"
#include "fdutil.h"
#include "net.h"
#include "netallow.h"
#include "proxy.h"
#include "proxyproto.h"
#include "sync.h"
#include "util.h"

/* --fail-getifaddrs: the errno every getifaddrs(3) fails with, 0 for
 * none.  Set before the proxy forks, which inherits it. */
static int getifaddrs_errno;

struct ifaddrs;
int __real_getifaddrs(struct ifaddrs **ifap);
int __wrap_getifaddrs(struct ifaddrs **ifap);
int __wrap_getifaddrs(struct ifaddrs **ifap) {
  if (getifaddrs_errno) {
    errno = getifaddrs_errno;
    return -1;
  }
  return __real_getifaddrs(ifap);
}

_Noreturn static void die(const char *fmt, ...) _printf_(1, 2);
static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "proxy-driver: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(2);
}

/* CPU time of this process so far (user + system), ms. */
static double cpu_ms(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) < 0)
    return -1;
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- serve */

static FILE *records;

static void print_event(const struct sr_proxy_event *ev, void *data) {
  json_t *o = NULL;
  char *s;

  (void)data;
  switch (ev->type) {
  case SR_PROXY_REC_CONNECTION:
    o = sr_proxy_event_json(ev);
    if (o)
      json_object_set_new(o, "event", json_string("network_connect"));
    break;
  case SR_PROXY_REC_SUMMARY:
    o = sr_proxy_event_json(ev);
    if (o)
      json_object_set_new(o, "event", json_string("network_summary"));
    break;
  case SR_PROXY_REC_EGRESS_LIMIT:
    o = json_pack("{s:s, s:s, s:I, s:I}", "event", "limit_exceeded", "limit",
                  "egress", "limit_bytes", (json_int_t)ev->limit, "used",
                  (json_int_t)ev->used);
    break;
  case SR_PROXY_REC_FATAL:
    o = json_pack("{s:s, s:s}", "event", "proxy_fatal", "message", ev->message);
    break;
  default:
    o = json_pack("{s:s, s:i}", "event", "proxy_record", "type", ev->type);
    break;
  }
  if (!o)
    die("cannot build the JSON of a record");
  if (ev->dropped)
    json_object_set_new(o, "records_dropped", json_integer(ev->dropped));
  s = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (!s)
    die("json_dumps");
  fprintf(records ? records : stdout, "%s\n", s);
  fflush(records ? records : stdout);
  free(s);
}

/* The "sandbox": a child in a new network namespace with lo up makes the
 * listeners there and sends them over a socketpair, then waits for the
 * socketpair to close (it keeps the namespace alive for nsenter). */
static pid_t sandbox_listeners(uint16_t port, int fds[2], size_t *n) {
  int sv[2];
  pid_t pid;

  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    die("socketpair: %m");
  pid = fork();
  if (pid < 0)
    die("fork: %m");
  if (pid == 0) {
    struct sr_error err = {0};
    int fd4 = -1, fd6 = -1, r;
    char b;

    close(sv[0]);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (unshare(CLONE_NEWNET) < 0)
      die("unshare(CLONE_NEWNET): %m");
    if (sr_net_loopback_up(&err) < 0)
      die("lo up: %s", err.msg);
    if (sr_net_listen_loopback(AF_INET, port, &fd4, NULL, &err) < 0)
      die("%s", err.msg);
    r = sr_net_listen_loopback(AF_INET6, port, &fd6, NULL, &err);
    if (r < 0 && r != -EADDRNOTAVAIL)
      die("%s", err.msg);
    if (sr_sync_send(sv[1], SR_SYNC_READY, 0, NULL, fd4) < 0 ||
        (fd6 >= 0 && sr_sync_send(sv[1], SR_SYNC_READY, 1, NULL, fd6) < 0) ||
        sr_sync_send(sv[1], SR_SYNC_GO, 0, NULL, -1) < 0)
      die("sending the listeners: %m");
    close(fd4);
    if (fd6 >= 0)
      close(fd6);
    while (read(sv[1], &b, 1) > 0)
      ;
    _exit(0);
  }
  close(sv[1]);
  *n = 0;
  for (;;) {
    struct sr_sync_msg m;
    int fd = -1;
    if (sr_sync_recv(sv[0], &m, &fd) < 0)
      die("receiving the listeners");
    if (m.type == SR_SYNC_GO)
      break;
    if (fd < 0 || *n >= 2)
      die("a listener message without an fd");
    fds[(*n)++] = fd;
  }
  /* sv[0] stays open (and leaks into nothing: CLOEXEC) until we exit. */
  return pid;
}

static int cmd_serve(int argc, char **argv) {
  static const struct option opts[] = {
      {"allow", required_argument, NULL, 'a'},
      {"hosts", required_argument, NULL, 'H'},
      {"max-conn", required_argument, NULL, 'c'},
      {"max-egress", required_argument, NULL, 'e'},
      {"handshake-ms", required_argument, NULL, 's'},
      {"connect-ms", required_argument, NULL, 'C'},
      {"idle-ms", required_argument, NULL, 'i'},
      {"uid", required_argument, NULL, 'u'},
      {"gid", required_argument, NULL, 'g'},
      {"no-splice", no_argument, NULL, 'n'},
      {"sandbox-netns", no_argument, NULL, 'N'},
      {"port", required_argument, NULL, 'p'},
      {"info", required_argument, NULL, 'I'},
      {"records", required_argument, NULL, 'r'},
      {"fail-getifaddrs", required_argument, NULL, 'F'},
      {NULL, 0, NULL, 0},
  };
  struct sr_netallow allow = {0};
  struct sr_nethosts hosts = {0};
  struct sr_proxy_config cfg = {.max_connections = 64,
                                .max_egress_bytes = UINT64_MAX,
                                .uid = (uid_t)-1,
                                .gid = (gid_t)-1};
  struct sr_proxy px = SR_PROXY_NULL;
  struct sr_error err = {0};
  const char *info = NULL, *hosts_path = NULL;
  bool in_netns = false, have_port = false;
  uint64_t v;
  uint16_t port = 0;
  int fds[2], opt, sfd;
  size_t n_fds = 0;
  pid_t netns_pid = 0;
  char why[256];
  sigset_t mask;

  while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (opt) {
    case 'a': {
      struct sr_netallow_entry e;
      if (sr_netallow_parse_entry(optarg, SR_NETALLOW_LITERALS,
                                  SR_NETALLOW_ORIGIN_PROFILE, "command line",
                                  &e, why, sizeof(why)) < 0)
        die("--allow %s: %s", optarg, why);
      if (sr_netallow_add(&allow, &e) < 0)
        die("--allow: too many");
      break;
    }
    case 'H':
      hosts_path = optarg;
      break;
    case 'c':
    case 'e':
    case 's':
    case 'C':
    case 'i':
    case 'u':
    case 'g':
    case 'p':
    case 'F':
      if (sr_parse_uint(optarg, UINT64_MAX, &v) < 0)
        die("bad number '%s'", optarg);
      if (opt == 'c')
        cfg.max_connections = (unsigned)v;
      else if (opt == 'e')
        cfg.max_egress_bytes = v;
      else if (opt == 's')
        cfg.handshake_timeout_ms = v;
      else if (opt == 'C')
        cfg.connect_timeout_ms = v;
      else if (opt == 'i')
        cfg.idle_timeout_ms = v;
      else if (opt == 'u')
        cfg.uid = (uid_t)v;
      else if (opt == 'g')
        cfg.gid = (gid_t)v;
      else if (opt == 'F')
        getifaddrs_errno = (int)v;
      else {
        port = (uint16_t)v;
        have_port = true;
      }
      break;
    case 'n':
      cfg.no_splice = true;
      break;
    case 'N':
      in_netns = true;
      break;
    case 'I':
      info = optarg;
      break;
    case 'r':
      records = fopen(optarg, "we");
      if (!records)
        die("open %s: %m", optarg);
      break;
    default:
      return 2;
    }
  }
  if (hosts_path) {
    _cleanup_free_ char *buf = NULL;
    size_t len, line = 0;
    int r = sr_read_file_at(AT_FDCWD, hosts_path, 1 << 20, &buf, &len);
    if (r < 0)
      die("read %s: %s", hosts_path, strerror(-r));
    if (sr_nethosts_parse(buf, len, &hosts, &line, why, sizeof(why)) < 0)
      die("%s:%zu: %s", hosts_path, line, why);
    cfg.hosts = &hosts;
  }
  if (!have_port && in_netns)
    port = SR_PROXY_PORT;
  if (in_netns) {
    netns_pid = sandbox_listeners(port, fds, &n_fds);
  } else {
    if (sr_net_listen_loopback(AF_INET, port, &fds[0], &port, &err) < 0)
      die("%s", err.msg);
    n_fds = 1;
  }
  if (in_netns || port == 0) {
    struct sockaddr_in sin;
    socklen_t l = sizeof(sin);
    if (getsockname(fds[0], (struct sockaddr *)&sin, &l) < 0)
      die("getsockname: %m");
    port = ntohs(sin.sin_port);
  }

  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
    die("sigprocmask: %m");
  sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  if (sfd < 0)
    die("signalfd: %m");

  cfg.allow = &allow;
  cfg.listen_fds = fds;
  cfg.n_listen = n_fds;
  if (sr_proxy_spawn(&cfg, &px, &err) < 0)
    die("%s", err.msg);
  for (size_t i = 0; i < n_fds; i++)
    close(fds[i]); /* the proxy has its copies */

  if (info) {
    struct sr_strv env = {0};
    char tmp[4096];
    FILE *f;
    (void)snprintf(tmp, sizeof(tmp), "%s.tmp", info);
    f = fopen(tmp, "we");
    if (!f || sr_proxy_env(port, &env) < 0)
      die("write %s: %m", tmp);
    fprintf(f, "port=%u\nproxy_pid=%d\nnetns_pid=%d\nlisteners=%zu\n",
            (unsigned)port, (int)px.pid, (int)netns_pid, n_fds);
    for (size_t i = 0; i < env.n; i++)
      fprintf(f, "env %s\n", env.v[i]);
    sr_strv_done(&env);
    if (fclose(f) != 0 || rename(tmp, info) < 0)
      die("write %s: %m", info);
  }

  for (;;) {
    struct pollfd pfd[2] = {{.fd = sfd, .events = POLLIN},
                            {.fd = px.record_fd, .events = POLLIN}};
    if (poll(pfd, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      die("poll: %m");
    }
    if (pfd[0].revents)
      break;
    if (pfd[1].revents) {
      struct sr_proxy_event ev;
      int r;
      while ((r = sr_proxy_recv(px.record_fd, &ev)) == 0)
        print_event(&ev, NULL);
      if (r == -EPIPE)
        die("the proxy exited");
      if (r != -EAGAIN)
        die("bad record: %s", strerror(-r));
    }
  }
  if (sr_proxy_stop(&px, 5000, print_event, NULL) < 0)
    die("the proxy had to be killed");
  if (records)
    fclose(records);
  sr_netallow_done(&allow);
  sr_nethosts_done(&hosts);
  if (netns_pid > 0) {
    kill(netns_pid, SIGKILL);
    waitpid(netns_pid, NULL, 0);
  }
  return 0;
}

/* ---------------------------------------------------------------- servers */

static int listen_on(const char *addr, const char *port_s, const char *pf) {
  struct sockaddr_in sin = {.sin_family = AF_INET};
  socklen_t l = sizeof(sin);
  uint64_t port;
  int fd, one = 1;
  FILE *f;

  if (sr_parse_uint(port_s, 65535, &port) < 0 ||
      inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
    die("bad address %s:%s", addr, port_s);
  sin.sin_port = htons((uint16_t)port);
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
      bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 128))
    die("listen %s:%s: %m", addr, port_s);
  if (getsockname(fd, (struct sockaddr *)&sin, &l) < 0)
    die("getsockname: %m");
  f = fopen(pf, "we");
  if (!f)
    die("open %s: %m", pf);
  fprintf(f, "%u\n", (unsigned)ntohs(sin.sin_port));
  fclose(f);
  return fd;
}

/* Fork per connection; children die with the server. */
static int cmd_server(bool echo, int argc, char **argv) {
  static char buf[1 << 17];
  int lfd;

  if (argc != 4)
    die("usage: %s ADDR PORT PORTFILE", argv[0]);
  lfd = listen_on(argv[1], argv[2], argv[3]);
  signal(SIGCHLD, SIG_IGN);
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      die("accept: %m");
    }
    if (fork() == 0) {
      (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
      close(lfd);
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      uint64_t total = 0;
      for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n <= 0)
          break;
        total += (uint64_t)n;
        if (echo && sr_write_all(fd, buf, (size_t)n) < 0)
          break;
      }
      if (!echo) {
        /* For bench/network: what receiving cost this connection. */
        fprintf(stderr, "sink bytes=%llu cpu_ms=%.0f\n",
                (unsigned long long)total, cpu_ms());
      }
      _exit(0);
    }
    close(fd);
  }
}

/* ---------------------------------------------------------------- clients */

/* Connects to host:port, or through CONNECT name:port on the proxy. */
static int dial(const char *host, uint16_t port, const char *proxy_port,
                const char *name) {
  struct sockaddr_in sin = {.sin_family = AF_INET};
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  uint64_t pp;

  if (fd < 0)
    die("socket: %m");
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (proxy_port) {
    if (sr_parse_uint(proxy_port, 65535, &pp) < 0)
      die("bad proxy port");
    sin.sin_port = htons((uint16_t)pp);
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
  } else {
    sin.sin_port = htons(port);
    if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
      die("bad address %s", host);
  }
  if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
    die("connect: %m");
  if (proxy_port) {
    char req[512], resp[512];
    size_t got = 0;
    int n = snprintf(req, sizeof(req), "CONNECT %s:%u HTTP/1.1\r\n\r\n", name,
                     (unsigned)port);
    if (sr_write_all(fd, req, (size_t)n) < 0)
      die("write: %m");
    /* The reply head is exactly "HTTP/1.1 200 ...\r\n\r\n". */
    while (got < sizeof(resp) - 1) {
      ssize_t r = read(fd, resp + got, 1);
      if (r <= 0)
        die("proxy closed during CONNECT");
      got++;
      resp[got] = '\0';
      if (got >= 4 && memcmp(resp + got - 4, "\r\n\r\n", 4) == 0)
        break;
    }
    if (strncmp(resp, "HTTP/1.1 200", 12) != 0)
      die("CONNECT refused: %.60s", resp);
  }
  return fd;
}

static int cmd_xfer(int argc, char **argv) {
  static char buf[1 << 20];
  uint64_t port, bytes, sent = 0;
  double t0, t1;
  int fd;
  char b;

  if (argc != 4 && argc != 6)
    die("usage: xfer HOST PORT BYTES [PROXYPORT NAME]");
  if (sr_parse_uint(argv[2], 65535, &port) < 0 ||
      sr_parse_size(argv[3], &bytes) < 0)
    die("bad number");
  memset(buf, 'x', sizeof(buf));
  t0 = now_s();
  fd = dial(argv[1], (uint16_t)port, argc == 6 ? argv[4] : NULL,
            argc == 6 ? argv[5] : NULL);
  while (sent < bytes) {
    size_t n =
        bytes - sent < sizeof(buf) ? (size_t)(bytes - sent) : sizeof(buf);
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      die("write after %llu bytes: %m", (unsigned long long)sent);
    sent += (uint64_t)w;
  }
  /* Done when the sink has read everything: it closes after our EOF. */
  shutdown(fd, SHUT_WR);
  while (read(fd, &b, 1) > 0)
    ;
  t1 = now_s();
  close(fd);
  printf("bytes=%llu seconds=%.6f cpu_ms=%.0f\n", (unsigned long long)sent,
         t1 - t0, cpu_ms());
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int cmd_latency(int argc, char **argv) {
  uint64_t port, count;
  double *t;

  if (argc != 4 && argc != 6)
    die("usage: latency HOST PORT COUNT [PROXYPORT NAME]");
  if (sr_parse_uint(argv[2], 65535, &port) < 0 ||
      sr_parse_uint(argv[3], 1000000, &count) < 0 || count == 0)
    die("bad number");
  t = calloc(count, sizeof(*t));
  if (!t)
    die("calloc");
  for (uint64_t i = 0; i < count; i++) {
    double t0 = now_s();
    int fd = dial(argv[1], (uint16_t)port, argc == 6 ? argv[4] : NULL,
                  argc == 6 ? argv[5] : NULL);
    char b = 'x';
    if (write(fd, &b, 1) != 1 || read(fd, &b, 1) != 1)
      die("echo failed");
    t[i] = now_s() - t0;
    close(fd);
  }
  qsort(t, count, sizeof(*t), cmp_double);
  printf("median_us=%.0f p90_us=%.0f\n", t[count / 2] * 1e6,
         t[count * 9 / 10] * 1e6);
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    die("usage: proxy-driver serve|sink|echo|xfer|latency ...");
  signal(SIGPIPE, SIG_IGN);
  if (strcmp(argv[1], "serve") == 0)
    return cmd_serve(argc - 1, argv + 1);
  if (strcmp(argv[1], "sink") == 0)
    return cmd_server(false, argc - 1, argv + 1);
  if (strcmp(argv[1], "echo") == 0)
    return cmd_server(true, argc - 1, argv + 1);
  if (strcmp(argv[1], "xfer") == 0)
    return cmd_xfer(argc - 1, argv + 1);
  if (strcmp(argv[1], "latency") == 0)
    return cmd_latency(argc - 1, argv + 1);
  die("unknown command %s", argv[1]);
}
