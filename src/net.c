/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Loopback over rtnetlink with libmnl.  Every change asks for an ACK, and
 * every reply runs through mnl_cb_run2, so a refusal comes back as the
 * kernel's own errno (the pattern of libmnl's examples/rtnl), a dump that
 * ends in an error as that error; the result is read back (a dump of the
 * links) before it is trusted.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/magic.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "fdutil.h"
#include "macro.h"
#include "net.h"

/* Newer libmnl's MNL_SOCKET_DUMP_SIZE: a page-sized receive buffer can make
 * the kernel truncate dump messages; libmnl 1.0.4 lacks the constant. */
#define NL_RECV_SIZE 32768

/* An rtnetlink socket and its receive buffer: a mapping of its own,
 * neither the heap nor the stack.  The skill's process (and init, with the
 * proxy) is a fork of the supervisor: malloc(3)'s first large request
 * there sorts the free chunks it shares with it copy-on-write, a fault for
 * each page it touches (about 13 us each on a virtual machine with shadow
 * paging, bench/README.md); on the stack, 32 KiB would end in SIGSEGV
 * where the caller's RLIMIT_STACK leaves less.  Only the pages the kernel
 * writes are touched. */
struct nl {
  struct mnl_socket *sock;
  char *buf; /* NL_RECV_SIZE bytes, or MAP_FAILED */
  unsigned portid;
  unsigned seq;
};

static void nl_close(struct nl *nl) {
  if (nl->sock)
    (void)mnl_socket_close(nl->sock);
  if (nl->buf != MAP_FAILED)
    (void)munmap(nl->buf, NL_RECV_SIZE);
}

/* 0 or -errno; nl_close releases what was opened either way. */
static int nl_open(struct nl *nl) {
  nl->buf = mmap(NULL, NL_RECV_SIZE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (nl->buf == MAP_FAILED)
    return -errno;
  nl->sock = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
  if (!nl->sock)
    return -errno;
  if (mnl_socket_bind(nl->sock, 0, MNL_SOCKET_AUTOPID) < 0)
    return -errno;
  nl->portid = mnl_socket_get_portid(nl->sock);
  nl->seq = (unsigned)time(NULL);
  return 0;
}

/*
 * The control messages, as libmnl's own handlers take them but for the end
 * of a dump.  mnl_cb_run2 does not fall back to those handlers for a type
 * its array leaves empty, so every type is named here.
 */
static int noop_cb(const struct nlmsghdr *nlh, void *data) {
  (void)nlh;
  (void)data;
  return MNL_CB_OK;
}

/* An ACK (error 0) ends the exchange; an error is the kernel's errno. */
static int error_cb(const struct nlmsghdr *nlh, void *data) {
  const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

  (void)data;
  if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e))) {
    errno = EBADMSG;
    return MNL_CB_ERROR;
  }
  if (e->error == 0)
    return MNL_CB_STOP;
  errno = e->error < 0 ? -e->error : e->error;
  return MNL_CB_ERROR;
}

/* The end of a dump: the kernel puts an error there when the dump could
 * not finish (libmnl's own NLMSG_DONE handler ignores it), and a listing
 * cut short must not pass for a whole one. */
static int done_cb(const struct nlmsghdr *nlh, void *data) {
  int e;

  (void)data;
  if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(e))) {
    memcpy(&e, mnl_nlmsg_get_payload(nlh), sizeof(e));
    if (e < 0) {
      errno = -e;
      return MNL_CB_ERROR;
    }
  }
  return MNL_CB_STOP;
}

/* Sends nlh and runs every reply through cb until the kernel's final ACK,
 * error or NLMSG_DONE.  0 or -errno (the errno of an error ACK, or of a
 * dump's NLMSG_DONE).  nlh may be built in nl->buf: it is sent before the
 * first reply is read there. */
static int nl_transact(struct nl *nl, struct nlmsghdr *nlh, mnl_cb_t cb,
                       void *data) {
  mnl_cb_t ctl[NLMSG_MIN_TYPE] = {[NLMSG_NOOP] = noop_cb,
                                  [NLMSG_ERROR] = error_cb,
                                  [NLMSG_DONE] = done_cb,
                                  [NLMSG_OVERRUN] = noop_cb};
  unsigned seq = nlh->nlmsg_seq;

  if (mnl_socket_sendto(nl->sock, nlh, nlh->nlmsg_len) < 0)
    return -errno;
  for (;;) {
    ssize_t n = mnl_socket_recvfrom(nl->sock, nl->buf, NL_RECV_SIZE);
    int r;

    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    r = mnl_cb_run2(nl->buf, (size_t)n, seq, nl->portid, cb, data, ctl,
                    SR_ARRAY_SIZE(ctl));
    if (r < 0)
      return errno > 0 ? -errno : -EIO;
    if (r == MNL_CB_STOP)
      return 0;
  }
}

static struct nlmsghdr *put_link_msg(char *buf, struct nl *nl, int type,
                                     int flags, int ifindex) {
  struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
  struct ifinfomsg *ifm;

  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = ++nl->seq;
  ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = ifindex;
  return nlh;
}

/* What a dump of the namespace's links shows: lo and its flags, and how
 * many links are not lo. */
struct links {
  bool lo_seen;
  unsigned lo_flags;
  int others;
};

static int ifname_attr_cb(const struct nlattr *attr, void *data) {
  const char **name = data;

  if (mnl_attr_get_type(attr) == IFLA_IFNAME &&
      mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) >= 0)
    *name = mnl_attr_get_str(attr);
  return MNL_CB_OK;
}

static int links_cb(const struct nlmsghdr *nlh, void *data) {
  struct links *st = data;
  const struct ifinfomsg *ifm;
  const char *name = NULL;

  if (nlh->nlmsg_type != RTM_NEWLINK)
    return MNL_CB_OK;
  if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifm))) {
    st->others++; /* a link all the same, and not lo */
    return MNL_CB_OK;
  }
  ifm = mnl_nlmsg_get_payload(nlh);
  if (mnl_attr_parse(nlh, sizeof(*ifm), ifname_attr_cb, &name) < 0)
    return MNL_CB_ERROR;
  /* A link without a name is still a link: counted. */
  if (name && !strcmp(name, "lo")) {
    st->lo_seen = true;
    st->lo_flags = ifm->ifi_flags;
  } else {
    st->others++;
  }
  return MNL_CB_OK;
}

/*
 * Over one rtnetlink socket: lo set up (named, not numbered: a fresh
 * namespace numbers it 1, but the kernel finds it by name whatever its
 * number), then every link listed, which reads lo back and counts the
 * others.  0 or -errno with err set.
 */
static int lo_up_and_list(struct nl *nl, struct links *st,
                          struct sr_error *err) {
  struct nlmsghdr *nlh;
  struct ifinfomsg *ifm;
  int r;

  nlh = put_link_msg(nl->buf, nl, RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 0);
  ifm = mnl_nlmsg_get_payload(nlh);
  ifm->ifi_change = IFF_UP;
  ifm->ifi_flags = IFF_UP;
  mnl_attr_put_strz(nlh, IFLA_IFNAME, "lo");
  r = nl_transact(nl, nlh, NULL, NULL);
  if (r < 0)
    return sr_error_layer(err, "network", -r, "set lo up (RTM_NEWLINK)");

  memset(st, 0, sizeof(*st));
  nlh = put_link_msg(nl->buf, nl, RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 0);
  r = nl_transact(nl, nlh, links_cb, st);
  if (r < 0)
    return sr_error_layer(err, "network", -r, "list links (RTM_GETLINK)");
  if (!st->lo_seen)
    return sr_error_layer(err, "network", ENODEV,
                          "read back lo: not among the links");
  if (!(st->lo_flags & IFF_UP))
    return sr_error_layer(err, "network", EIO,
                          "verify lo: still down after RTM_NEWLINK");
  return 0;
}

/*
 * net.core.tstamp_allow_data=0 in the current network namespace: the
 * kernel then drops a transmit timestamp that would carry the data sent
 * (a clone of it, put on the socket's error queue and charged to no
 * cgroup) for a socket whose opener lacks CAP_NET_RAW over the host's
 * user namespace, which is every skill's.  seccomp refuses SO_TIMESTAMPING
 * (seccomp.c), but a timestamp asked for in a message's control data is
 * out of a filter's sight: 40 UDP sockets that asked so for every datagram
 * held 275 MB under a 64 MiB limit.  sysctl_fd: a writable /proc/sys init
 * opened (the host's, or a procfs of the sandbox's own), through which a
 * net sysctl is the opener's network namespace's; by path it would race
 * init's pivot_root to the sandbox's read-only /proc/sys.  -1: there is
 * none here, and init has said so in a warning.  The sysctl is a
 * namespace's own since Linux 6.13; before, it is the host's alone and
 * missing here (ENOENT), and there is nothing to set (skillrun(1)
 * SECURITY says what a host can do).  With `required` (strict, where the
 * host's is not 0 already) either is an error; anything else is one in
 * every mode: the run would go without the guard.
 */
static int refuse_timestamp_data(int sysctl_fd, bool required,
                                 struct sr_error *err) {
  _cleanup_close_ int core = -1, fd = -1;
  struct statfs sfs;

  if (sysctl_fd < 0)
    return required ? sr_error_layer(err, "network", EROFS,
                                     "strict requires transmit timestamps "
                                     "with data refused in the sandbox, and "
                                     "no /proc/sys can be written here")
                    : 0;
  /* Every kernel has net/core (somaxconn): missing, or another file
   * system's, it is hidden under a mask, which must not pass for a kernel
   * without the sysctl. */
  core = openat(sysctl_fd, "net/core",
                O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (core < 0 || fstatfs(core, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC)
    return sr_error_layer(err, "network", core < 0 ? errno : EXDEV,
                          "/proc/sys/net/core is hidden or not procfs's");
  fd = openat(core, "tstamp_allow_data", O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && required)
    return sr_error_layer(
        err, "network", 0,
        "strict requires transmit timestamps with data refused in the "
        "sandbox: this kernel has net.core.tstamp_allow_data for the host "
        "alone (before Linux 6.13), where it is 1; set it to 0 there, or "
        "run without strict");
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0)
    return sr_error_layer(err, "network", errno,
                          "open /proc/sys/net/core/tstamp_allow_data");
  if (write(fd, "0\n", 2) != 2)
    return sr_error_layer(err, "network", errno,
                          "write 0 to /proc/sys/net/core/tstamp_allow_data");
  return 0;
}

int sr_net_host_tstamp_allow_data(void) {
  char buf[8] = "";
  _cleanup_close_ int fd = -1;
  ssize_t n;

  fd = open("/proc/sys/net/core/tstamp_allow_data",
            O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return 1;
  n = read(fd, buf, sizeof(buf) - 1);
  return n > 0 && buf[0] == '0' && (n == 1 || buf[1] == '\n') ? 0 : 1;
}

/* lo up (lo_up_and_list); with only_lo (the sandbox's namespace), no other
 * link, and transmit timestamps with data dropped (refuse_timestamp_data);
 * with ret_nsfd, the namespace's descriptor, taken from the same socket
 * (SIOCGSKNS works on any socket). */
static int net_up(bool only_lo, const struct sr_net_sysctl *sysctl,
                  int *ret_nsfd, struct sr_error *err) {
  _cleanup_(nl_close) struct nl nl = {.buf = MAP_FAILED};
  struct links st = {0};
  int r;

  r = nl_open(&nl);
  if (r < 0)
    return sr_error_layer(err, "network", -r, "open rtnetlink socket");
  r = lo_up_and_list(&nl, &st, err);
  if (r < 0)
    return r;
  if (only_lo && st.others != 0)
    return sr_error_layer(err, "network", 0,
                          "unexpected network interfaces in the sandbox");
  if (only_lo) {
    r = refuse_timestamp_data(sysctl->fd, sysctl->tstamp_required, err);
    if (r < 0)
      return r;
  }
  if (ret_nsfd) {
    /* The namespace by descriptor, not by a /proc path: /proc is being
     * replaced while this runs (init mounts the sandbox's view). */
    int nsfd = ioctl(mnl_socket_get_fd(nl.sock), SIOCGSKNS);

    if (nsfd < 0)
      return sr_error_layer(err, "network", errno, "ioctl(SIOCGSKNS)");
    *ret_nsfd = nsfd; /* O_CLOEXEC (open_related_ns) */
  }
  return 0;
}

int sr_net_loopback_up(struct sr_error *err) {
  return net_up(false, NULL, NULL, err);
}

int sr_net_sandbox_up(const struct sr_net_sysctl *sysctl,
                      struct sr_error *err) {
  return net_up(true, sysctl, NULL, err);
}

int sr_net_unshare_sandbox(const struct sr_net_sysctl *sysctl, int *ret_nsfd,
                           struct sr_error *err) {
  if (unshare(CLONE_NEWNET) < 0)
    return sr_error_layer(err, "network", errno, "unshare(CLONE_NEWNET)");
  return net_up(true, sysctl, ret_nsfd, err);
}

int sr_net_listen_loopback(int family, uint16_t port, int *ret_fd,
                           uint16_t *bound_port, struct sr_error *err) {
  _cleanup_close_ int fd = -1;
  struct sockaddr_storage ss;
  socklen_t len;
  const char *what = family == AF_INET6 ? "[::1]" : "127.0.0.1";
  int one = 1;

  memset(&ss, 0, sizeof(ss));
  if (family == AF_INET) {
    struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(*sin);
  } else if (family == AF_INET6) {
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(port);
    sin6->sin6_addr = in6addr_loopback;
    len = sizeof(*sin6);
  } else {
    return sr_error_layer(err, "network", EAFNOSUPPORT,
                          "proxy listener: unknown address family %d", family);
  }
  fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return sr_error_layer(err, "network", errno, "proxy listener: socket");
  /* ::1 only: an IPv4 connection to the IPv6 socket would be mapped. */
  if (family == AF_INET6 &&
      setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
    return sr_error_layer(err, "network", errno, "proxy listener: IPV6_V6ONLY");
  if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
    int e = errno;
    if (e == EADDRNOTAVAIL && family == AF_INET6)
      return -EADDRNOTAVAIL; /* no ::1: not an error for the caller */
    return sr_error_layer(err, "network", e, "proxy listener: bind %s:%u", what,
                          (unsigned)port);
  }
  if (listen(fd, SOMAXCONN) < 0)
    return sr_error_layer(err, "network", errno, "proxy listener: listen");
  if (bound_port) {
    len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
      return sr_error_layer(err, "network", errno,
                            "proxy listener: getsockname");
    *bound_port =
        ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                : ((struct sockaddr_in6 *)&ss)->sin6_port);
  }
  *ret_fd = TAKE_FD(fd);
  return 0;
}
