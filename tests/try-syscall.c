/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * try-syscall NAME [COUNT] | all | list
 *
 * Attempts one system call (COUNT times in a row) and prints "NAME=OK" or
 * "NAME=<ERRNO-NAME>";
 * exits 0 either way.  A process killed by the filter shows as a signal to
 * the caller; `all` runs every case in a forked child and prints
 * "NAME=KILLED:SIGSYS" for it.  Arguments are chosen so that, without a
 * filter, the call does not fail with EPERM of its own where that is
 * possible: then EPERM proves the filter.  Each case's comment says what to
 * expect without the filter (no capabilities, as inside the sandbox).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/kcmp.h>
#include <linux/net_tstamp.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/in6.h> /* after netinet/in.h, which it defers to */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/quota.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Each case returns 0 for success or a positive errno. */
typedef int (*case_fn)(void);

static int sys_result(long r) {
  return r < 0 ? errno : 0;
}

/* Reaps a child created by a raw clone/fork: 0 when it exited 0. */
static int reap(pid_t pid) {
  int st;

  if (waitpid(pid, &st, 0) < 0)
    return errno;
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : ECHILD;
}

/* ---- debug: without the filter these succeed on our own process. ---- */

/* OK: a process may always ask to be traced by its parent. */
static int t_ptrace(void) {
  return sys_result(syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0));
}

static char vm_src[8] = "abcdefg", vm_dst[8];

/* OK: reading our own memory passes the ptrace access check. */
static int t_process_vm_readv(void) {
  struct iovec l = {vm_dst, 4}, r = {vm_src, 4};
  return sys_result(syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0));
}

/* OK: writing our own memory. */
static int t_process_vm_writev(void) {
  struct iovec l = {vm_src, 4}, r = {vm_dst, 4};
  return sys_result(syscall(SYS_process_vm_writev, getpid(), &l, 1, &r, 1, 0));
}

/* OK: comparing our own fd 0 with itself (ENOSYS without CONFIG_KCMP). */
static int t_kcmp(void) {
  pid_t p = getpid();
  return sys_result(syscall(SYS_kcmp, p, p, KCMP_FILE, 0, 0));
}

/* OK: duplicating our own fd 0 through a pidfd of ourselves (EBADF when
 * fd 0 is closed). */
static int t_pidfd_getfd(void) {
  int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (pfd < 0)
    return errno;
  return sys_result(syscall(SYS_pidfd_getfd, pfd, 0, 0));
}

/* ---- bpf and friends ---- */

/* EINVAL: unknown command (Linux >= 6.5 checks privilege per command;
 * older kernels answer EPERM themselves when unprivileged bpf is off). */
static int t_bpf(void) {
  return sys_result(syscall(SYS_bpf, 0xffff, NULL, 0));
}

/* EINVAL: unknown flags are rejected before any permission check. */
static int t_perf_event_open(void) {
  struct perf_event_attr a;
  memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  return sys_result(syscall(SYS_perf_event_open, &a, 0, -1, -1, ~0UL));
}

/* OK: UFFD_USER_MODE_ONLY is permitted to everyone (Linux >= 5.11). */
static int t_userfaultfd(void) {
  return sys_result(
      syscall(SYS_userfaultfd, UFFD_USER_MODE_ONLY | O_CLOEXEC | O_NONBLOCK));
}

/* ---- keyrings ---- */

/* EOPNOTSUPP: unknown keyctl operation. */
static int t_keyctl(void) {
  return sys_result(syscall(SYS_keyctl, 0x7fff, 0, 0, 0, 0));
}

/* ENODEV: no such key type (EINVAL for a bad keyring on some kernels). */
static int t_add_key(void) {
  return sys_result(syscall(SYS_add_key, "skillrun-no-such-type", "x", NULL, 0,
                            KEY_SPEC_PROCESS_KEYRING));
}

/* ENOKEY: no such key type. */
static int t_request_key(void) {
  return sys_result(
      syscall(SYS_request_key, "skillrun-no-such-type", "x", NULL, 0));
}

/* ---- io_uring ---- */

/* EINVAL: zero entries (EPERM of its own only if kernel.io_uring_disabled). */
static int t_io_uring_setup(void) {
  char params[120]; /* struct io_uring_params, all zero */
  memset(params, 0, sizeof(params));
  return sys_result(syscall(SYS_io_uring_setup, 0, params));
}

/* EBADF: fd -1. */
static int t_io_uring_enter(void) {
  return sys_result(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
}

/* EINVAL or EBADF: bad opcode, fd -1. */
static int t_io_uring_register(void) {
  return sys_result(syscall(SYS_io_uring_register, -1, 0, NULL, 0));
}

/* ---- kernel and machine state ---- */

/* EPERM of its own without CAP_SYS_MODULE (checked first); root on the host
 * gets EFAULT.  Only a run with the capability tells the two apart. */
static int t_init_module(void) {
  return sys_result(syscall(SYS_init_module, NULL, 0, ""));
}

/* EPERM without CAP_SYS_MODULE; EBADF for root on the host. */
static int t_finit_module(void) {
  return sys_result(syscall(SYS_finit_module, -1, "", 0));
}

/* EPERM without CAP_SYS_MODULE; ENOENT for root on the host (ENOSYS on
 * kernels without module support). */
static int t_delete_module(void) {
  return sys_result(syscall(SYS_delete_module, "skillrun_no_such_module", 0));
}

/* EPERM without CAP_SYS_BOOT; EINVAL (bad flags) for root on the host. */
static int t_kexec_load(void) {
  return sys_result(syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL));
}

/* EPERM without CAP_SYS_BOOT; EINVAL (bad flags) for root on the host. */
static int t_kexec_file_load(void) {
  return sys_result(syscall(SYS_kexec_file_load, -1, -1, 0, "", 0xdead0000UL));
}

/* EPERM without CAP_SYS_BOOT in the pid namespace's owner; EINVAL (bad
 * magic) with it.  Never a reboot: the magic is wrong. */
static int t_reboot(void) {
  return sys_result(syscall(SYS_reboot, 0, 0, 0, NULL));
}

/* EPERM without CAP_SYS_ADMIN; ENOENT for root on the host. */
static int t_swapon(void) {
  return sys_result(syscall(SYS_swapon, "/nonexistent-skillrun", 0));
}

/* EPERM without CAP_SYS_ADMIN; ENOENT for root on the host. */
static int t_swapoff(void) {
  return sys_result(syscall(SYS_swapoff, "/nonexistent-skillrun"));
}

/* EPERM without CAP_SYS_PACCT; ENOENT for root on the host. */
static int t_acct(void) {
  return sys_result(syscall(SYS_acct, "/nonexistent-skillrun"));
}

/* EINVAL: tv_usec out of range is checked before the capability. */
static int t_settimeofday(void) {
  struct timeval tv = {.tv_sec = 0, .tv_usec = 2000000};
  return sys_result(syscall(SYS_settimeofday, &tv, NULL));
}

/* EINVAL: no such clock. */
static int t_clock_settime(void) {
  struct timespec ts = {0, 0};
  return sys_result(syscall(SYS_clock_settime, 1000, &ts));
}

/* OK: modes 0 is a read-only query of CLOCK_REALTIME. */
static int t_clock_adjtime(void) {
  struct timex tx;
  memset(&tx, 0, sizeof(tx));
  return sys_result(syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
}

/* OK: modes 0 is a read-only query. */
static int t_adjtimex(void) {
  struct timex tx;
  memset(&tx, 0, sizeof(tx));
  return sys_result(syscall(SYS_adjtimex, &tx));
}

/* ENOENT: the block device path is looked up first. */
static int t_quotactl(void) {
  return sys_result(syscall(SYS_quotactl, QCMD(Q_GETFMT, USRQUOTA),
                            "/nonexistent-skillrun", 0, NULL));
}

/* OK with kernel.dmesg_restrict=0; EPERM of its own when it is 1. */
static int t_syslog(void) {
  return sys_result(syscall(SYS_syslog, 10 /* SIZE_BUFFER */, NULL, 0));
}

#if defined(__x86_64__) || defined(__i386__)
/* OK: level 0 never needs a capability (ENOSYS without CONFIG_X86_IOPL). */
static int t_iopl(void) {
  return sys_result(syscall(SYS_iopl, 0));
}

/* EINVAL: an empty range. */
static int t_ioperm(void) {
  return sys_result(syscall(SYS_ioperm, 0, 0, 0));
}
#endif

#ifdef SYS_lookup_dcookie
/* ENOSYS since Linux 6.8 (removed); EINVAL/EPERM before that. */
static int t_lookup_dcookie(void) {
  char buf[16];
  return sys_result(syscall(SYS_lookup_dcookie, 0, buf, sizeof(buf)));
}
#endif

/* EINVAL: handle_bytes 0 is refused before the permission check. */
static int t_open_by_handle_at(void) {
  struct {
    unsigned int handle_bytes;
    int handle_type;
    unsigned char f_handle[8];
  } h = {0, 0, {0}};
  return sys_result(syscall(SYS_open_by_handle_at, AT_FDCWD, &h, O_RDONLY));
}

/* ---- mount ---- */

/* ENOENT: the target is looked up before the capability check. */
static int t_mount(void) {
  return sys_result(
      syscall(SYS_mount, "none", "/nonexistent-skillrun", "tmpfs", 0, NULL));
}

/* ENOENT: looked up first. */
static int t_umount2(void) {
  return sys_result(syscall(SYS_umount2, "/nonexistent-skillrun", 0));
}

/* EPERM of its own without CAP_SYS_ADMIN over the mount namespace
 * (checked first); ENOENT with it. */
static int t_pivot_root(void) {
  return sys_result(syscall(SYS_pivot_root, "/nonexistent-skillrun",
                            "/nonexistent-skillrun"));
}

/* ENOENT: looked up first. */
static int t_chroot(void) {
  return sys_result(syscall(SYS_chroot, "/nonexistent-skillrun"));
}

/* EPERM without CAP_SYS_ADMIN over the mount namespace; ENODEV with it. */
static int t_fsopen(void) {
  return sys_result(syscall(SYS_fsopen, "skillrun-no-such-fs", 0));
}

/* EINVAL or EBADF: fd -1, no capability involved. */
static int t_fsconfig(void) {
  return sys_result(
      syscall(SYS_fsconfig, -1, 6 /* CMD_CREATE */, NULL, NULL, 0));
}

/* EPERM without CAP_SYS_ADMIN; EBADF with it. */
static int t_fsmount(void) {
  return sys_result(syscall(SYS_fsmount, -1, 0, 0));
}

/* EPERM without CAP_SYS_ADMIN; ENOENT with it (empty path). */
static int t_fspick(void) {
  return sys_result(syscall(SYS_fspick, -1, "", 0));
}

/* EPERM without CAP_SYS_ADMIN; ENOENT with it (empty paths). */
static int t_move_mount(void) {
  return sys_result(syscall(SYS_move_mount, -1, "", -1, "", 0));
}

/* OK: without OPEN_TREE_CLONE this is an O_PATH open, no capability. */
static int t_open_tree(void) {
  long fd = syscall(SYS_open_tree, AT_FDCWD, "/", 0x80000 /* CLOEXEC */);
  if (fd < 0)
    return errno;
  close((int)fd);
  return 0;
}

/* EINVAL: attribute size 0 is checked first. */
static int t_mount_setattr(void) {
  return sys_result(syscall(SYS_mount_setattr, -1, "", 0, NULL, 0));
}

/* ---- namespaces ---- */

/* EBADF: fd -1. */
static int t_setns(void) {
  return sys_result(syscall(SYS_setns, -1, 0));
}

/* OK: no flags is a no-op. */
static int t_unshare(void) {
  return sys_result(syscall(SYS_unshare, 0));
}

static int raw_clone(unsigned long flags) {
  long pid = syscall(SYS_clone, flags, NULL, NULL, NULL, 0);
  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit(0);
  return reap((pid_t)pid);
}

/* EPERM of its own without CAP_SYS_ADMIN; OK with it. */
static int t_clone_newns(void) {
  return raw_clone(CLONE_NEWNS | SIGCHLD);
}

/* OK where unprivileged user namespaces are allowed (EPERM in a chroot). */
static int t_clone_newuser(void) {
  return raw_clone(CLONE_NEWUSER | SIGCHLD);
}

/* OK (a fork); the filter must answer ENOSYS, not EPERM. */
static int t_clone3(void) {
  struct clone_args a;
  long pid;

  memset(&a, 0, sizeof(a));
  a.exit_signal = SIGCHLD;
  pid = syscall(SYS_clone3, &a, sizeof(a));
  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit(0);
  return reap((pid_t)pid);
}

/* EOVERFLOW: handle_bytes 0 is too small for any handle. */
static int t_name_to_handle_at(void) {
  struct {
    unsigned int handle_bytes;
    int handle_type;
  } h = {0, 0};
  int mnt;
  return sys_result(syscall(SYS_name_to_handle_at, AT_FDCWD, "/", &h, &mnt, 0));
}

#ifndef SYS_memfd_secret
#define SYS_memfd_secret 447 /* the same on x86-64 and arm64 */
#endif
/* OK where secretmem is enabled (ENOSYS where not). */
static int t_memfd_secret(void) {
  long fd = syscall(SYS_memfd_secret, 0);
  if (fd >= 0)
    close((int)fd);
  return sys_result(fd);
}

/* OK with CAP_SYS_ADMIN (root on the host), EPERM of its own without. */
static int t_fanotify_init(void) {
  return sys_result(syscall(SYS_fanotify_init, 0, O_RDONLY));
}

/* OK outside a sandbox (no terminal: nothing to hang up) or EPERM. */
static int t_vhangup(void) {
  return sys_result(syscall(SYS_vhangup));
}

#ifdef SYS_modify_ldt
/* OK: reading the (empty) LDT. */
static int t_modify_ldt(void) {
  char buf[16];
  return sys_result(syscall(SYS_modify_ldt, 0, buf, sizeof(buf)));
}
#endif

/* OK outside: a filter that allows everything.  seccomp(2)'s older
 * spelling; a stacked filter would hide refused calls from the report. */
static int t_prctl_seccomp(void) {
  struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog fp = {1, f};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return errno;
  return sys_result(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0));
}

/* OK: refused unless 0 or the query (ASLR off). */
static int t_personality_noaslr(void) {
  return sys_result(syscall(SYS_personality, ADDR_NO_RANDOMIZE));
}

/* OK: returns the old persona; refused unless 0 or the query. */
static int t_personality_bad(void) {
  return sys_result(syscall(SYS_personality, READ_IMPLIES_EXEC));
}

/* OK: the query. */
static int t_personality_query(void) {
  return sys_result(syscall(SYS_personality, 0xffffffffUL));
}

/* ---- sockets ---- */

static int try_socket(int domain, int type, int proto) {
  int fd = socket(domain, type | SOCK_CLOEXEC, proto);
  if (fd < 0)
    return errno;
  close(fd);
  return 0;
}

/* EPERM of its own without CAP_NET_RAW; OK with it. */
static int t_socket_packet(void) {
  return try_socket(AF_PACKET, SOCK_RAW, htons(0x0003 /* ETH_P_ALL */));
}

/* EPERM of its own without CAP_NET_RAW; OK with it. */
static int t_socket_raw(void) {
  return try_socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
}

/* OK: creating an audit netlink socket needs no privilege. */
static int t_socket_netlink_audit(void) {
  return try_socket(AF_NETLINK, SOCK_RAW, NETLINK_AUDIT);
}

/* OK; refused by the filter (queued replies are charged to no cgroup). */
static int t_socket_netlink_route(void) {
  return try_socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
}

/* OK, allowed: loopback UDP. */
static int t_socket_udp(void) {
  return try_socket(AF_INET6, SOCK_DGRAM, 0);
}

/* ---- setsockopt: the options that join a multicast group (a record on
 * the socket and one on the device, charged to no cgroup) are refused;
 * without the filter the kernel joins on lo (interface 1 in the sandbox's
 * network namespace).  The raw call, so that the arguments reported are
 * the ones passed. ---- */

static int try_sockopt(int family, long level, long option, const void *v,
                       size_t len) {
  int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int r;

  if (fd < 0)
    return errno;
  r = sys_result(syscall(SYS_setsockopt, fd, level, option, v, (long)len));
  close(fd);
  return r;
}

static int ipv6_join(long level) {
  struct ipv6_mreq m = {.ipv6mr_interface = 1};

  inet_pton(AF_INET6, "ff02::5eed:1", &m.ipv6mr_multiaddr);
  return try_sockopt(AF_INET6, level, IPV6_ADD_MEMBERSHIP, &m, sizeof(m));
}

/* OK without the filter. */
static int t_setsockopt_ipv6_join(void) {
  return ipv6_join(IPPROTO_IPV6);
}

/* The kernel reads the level as an int: this is IPPROTO_IPV6 too. */
static int t_setsockopt_ipv6_join_high(void) {
  return ipv6_join(IPPROTO_IPV6 | (1L << 32));
}

/* OK without the filter. */
static int t_setsockopt_ip_join(void) {
  struct ip_mreqn m = {.imr_ifindex = 1};

  inet_pton(AF_INET, "239.1.2.3", &m.imr_multiaddr);
  return try_sockopt(AF_INET, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m));
}

/* OK without the filter. */
static int t_setsockopt_mcast_join(void) {
  struct group_req g = {.gr_interface = 1};
  struct sockaddr_in6 *a = (struct sockaddr_in6 *)&g.gr_group;

  a->sin6_family = AF_INET6;
  inet_pton(AF_INET6, "ff02::5eed:2", &a->sin6_addr);
  return try_sockopt(AF_INET6, IPPROTO_IPV6, MCAST_JOIN_GROUP, &g, sizeof(g));
}

/* OK without the filter: an IPv6 routing header (a segment routing one,
 * type 4, of one segment) kept on the socket, memory charged to no cgroup
 * as a membership is (the kernel itself refuses hop-by-hop and destination
 * options without CAP_NET_RAW, not a routing header). */
static int t_setsockopt_ipv6_rthdr(void) {
  unsigned char rt[24] = {0, 2, 4, 0};

  rt[8 + 15] = 1; /* ::1 */
  return try_sockopt(AF_INET6, IPPROTO_IPV6, IPV6_RTHDR, rt, sizeof(rt));
}

/* ENOPROTOOPT without the filter (a UDP socket has no TCP options): the
 * filter refuses the option whatever the socket, before the kernel. */
static int t_setsockopt_tcp_md5(void) {
  struct tcp_md5sig m = {.tcpm_keylen = 16};

  ((struct sockaddr_in *)&m.tcpm_addr)->sin_family = AF_INET;
  return try_sockopt(AF_INET, IPPROTO_TCP, TCP_MD5SIG, &m, sizeof(m));
}

/* OK without the filter: a classic socket filter of one instruction. */
static int t_setsockopt_attach_filter(void) {
  struct sock_filter accept_all = BPF_STMT(BPF_RET | BPF_K, 0xffff);
  struct sock_fprog prog = {.len = 1, .filter = &accept_all};
  return try_sockopt(AF_INET, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
                     sizeof(prog));
}

/* An int option set to 1 and read back: 0 (OK) when it was set,
 * SR_IGNORED when setsockopt said 0 and the option is still 0, else the
 * errno. */
#define SR_IGNORED 4096
static int try_sockopt_kept(int family, int level, int option) {
  int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int one = 1, v = 0, r;
  socklen_t len = sizeof(v);

  if (fd < 0)
    return errno;
  r = sys_result(
      syscall(SYS_setsockopt, fd, level, option, &one, (long)sizeof(one)));
  if (r == 0 && getsockopt(fd, level, option, &v, &len) < 0)
    r = errno;
  else if (r == 0 && v == 0)
    r = SR_IGNORED;
  close(fd);
  return r;
}

/* OK without the filter: local errors (a datagram too large) and ICMP
 * errors queued on the socket's error queue, charged to no cgroup. */
static int t_setsockopt_ip_recverr(void) {
  return try_sockopt_kept(AF_INET, IPPROTO_IP, IP_RECVERR);
}

/* OK without the filter: the same for IPv6. */
static int t_setsockopt_ipv6_recverr(void) {
  return try_sockopt_kept(AF_INET6, IPPROTO_IPV6, IPV6_RECVERR);
}

/* OK without the filter: a transmit timestamp (a clone of what is sent)
 * queued on the error queue for every datagram; both spellings of the
 * option (the _NEW one is for 64-bit time on 32-bit systems). */
static int t_setsockopt_timestamping(void) {
  int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  return try_sockopt(AF_INET, SOL_SOCKET, SO_TIMESTAMPING_OLD, &flags,
                     sizeof(flags));
}

static int t_setsockopt_timestamping_new(void) {
  int flags = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  return try_sockopt(AF_INET, SOL_SOCKET, SO_TIMESTAMPING_NEW, &flags,
                     sizeof(flags));
}

/* OK without the filter: MSG_ZEROCOPY's completion notices, option
 * memory charged to no cgroup, on the error queue. */
static int t_setsockopt_zerocopy(void) {
  int one = 1;
  return try_sockopt(AF_INET, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one));
}

/* EPERM: an IPv6 flow label, of the 4096 the host shares. */
static int t_setsockopt_flowlabel(void) {
  struct in6_flowlabel_req q = {.flr_dst = in6addr_loopback,
                                .flr_label = htonl(0x5eed2),
                                .flr_action = IPV6_FL_A_GET,
                                .flr_share = IPV6_FL_S_EXCL,
                                .flr_flags = IPV6_FL_F_CREATE,
                                .flr_linger = 6};

  return try_sockopt(AF_INET6, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &q, sizeof(q));
}

/* OK, allowed: receive timestamps, which queue nothing. */
static int t_setsockopt_timestamp(void) {
  int one = 1;
  return try_sockopt(AF_INET, SOL_SOCKET, SO_TIMESTAMP, &one, sizeof(one));
}

/* EADDRNOTAVAIL: leaving a group holds nothing and reaches the kernel,
 * which has no such membership. */
static int t_setsockopt_ipv6_leave(void) {
  struct ipv6_mreq m = {.ipv6mr_interface = 1};

  inet_pton(AF_INET6, "ff02::5eed:1", &m.ipv6mr_multiaddr);
  return try_sockopt(AF_INET6, IPPROTO_IPV6, IPV6_DROP_MEMBERSHIP, &m,
                     sizeof(m));
}

/* OK, allowed. */
static int t_setsockopt_reuseaddr(void) {
  int one = 1;
  return try_sockopt(AF_INET, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
}

/* OK, allowed: a multicast sending option, which holds nothing. */
static int t_setsockopt_mcast_loop(void) {
  int one = 1;
  return try_sockopt(AF_INET, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof(one));
}

/* ---- ioctl: fd -1 makes the kernel answer EBADF, so EPERM is the filter
 * (it matches the command, not the fd). ---- */

static int t_tiocsti(void) {
  char c = 'x';
  return sys_result(syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI, &c));
}

/* The kernel truncates the command to 32 bits: this is TIOCSTI too. */
static int t_tiocsti_high(void) {
  char c = 'x';
  return sys_result(
      syscall(SYS_ioctl, -1, (unsigned long)TIOCSTI | (1UL << 32), &c));
}

static int t_tioclinux(void) {
  char sub = 2;
  return sys_result(syscall(SYS_ioctl, -1, (unsigned long)TIOCLINUX, &sub));
}

/* EBADF: any other ioctl reaches the kernel. */
static int t_ioctl_other(void) {
  int n;
  return sys_result(syscall(SYS_ioctl, -1, (unsigned long)FIONREAD, &n));
}

/* ---- other ABIs ---- */

#ifdef __x86_64__
/* OK (our pid) with IA32 emulation; the filter kills the process. */
static int t_i386(void) {
  long ret;
  __asm__ volatile("int $0x80"
                   : "=a"(ret)
                   : "a"(20L /* i386 getpid */)
                   : "memory");
  if (ret < 0 && ret > -4096)
    return (int)-ret;
  return 0;
}

/* OK with CONFIG_X86_X32_ABI, ENOSYS without; the filter kills it. */
static int t_x32(void) {
  return sys_result(syscall(0x40000000L | 39 /* x32 getpid */));
}
#endif

/* ---- what must keep working ---- */

static int t_getpid(void) {
  return sys_result(syscall(SYS_getpid));
}

static void *thread_main(void *arg) {
  *(int *)arg = 42;
  return NULL;
}

static int t_clone_thread(void) {
  pthread_t t;
  int v = 0, r;

  r = pthread_create(&t, NULL, thread_main, &v);
  if (r != 0)
    return r;
  r = pthread_join(t, NULL);
  if (r != 0)
    return r;
  return v == 42 ? 0 : EIO;
}

static int t_fork(void) {
  pid_t pid = fork();
  if (pid < 0)
    return errno;
  if (pid == 0)
    _exit(0);
  return reap(pid);
}

/* posix_spawn: glibc tries clone3 and must fall back to clone on ENOSYS. */
static int t_spawn(void) {
  char *argv[] = {"try-syscall", "noop", NULL};
  pid_t pid;
  int r;

  r = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
  if (r != 0)
    return r;
  return reap(pid);
}

static int t_socketpair(void) {
  int sv[2], r = 0;
  char c = 0;

  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return errno;
  if (write(sv[0], "k", 1) != 1 || read(sv[1], &c, 1) != 1)
    r = errno ? errno : EIO;
  else if (c != 'k')
    r = EIO;
  close(sv[0]);
  close(sv[1]);
  return r;
}

static int t_tcp_loopback(void) {
  struct sockaddr_in a = {.sin_family = AF_INET};
  socklen_t len = sizeof(a);
  int srv = -1, cli = -1, acc = -1, r = 0;
  char buf[4] = {0};

  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (srv < 0 || bind(srv, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      listen(srv, 1) < 0 || getsockname(srv, (struct sockaddr *)&a, &len) < 0)
    goto fail;
  cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (cli < 0 || connect(cli, (struct sockaddr *)&a, sizeof(a)) < 0)
    goto fail;
  acc = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
  if (acc < 0 || send(cli, "ping", 4, 0) != 4 ||
      recv(acc, buf, 4, MSG_WAITALL) != 4)
    goto fail;
  r = memcmp(buf, "ping", 4) ? EIO : 0;
  goto out;
fail:
  r = errno ? errno : EIO;
out:
  if (acc >= 0)
    close(acc);
  if (cli >= 0)
    close(cli);
  if (srv >= 0)
    close(srv);
  return r;
}

/* Writes a page through fd, maps it, and checks the bytes. */
static int check_mmap(int fd) {
  char page[4096];
  char *m;
  int r;

  memset(page, 'z', sizeof(page));
  if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
    return errno ? errno : EIO;
  m = mmap(NULL, sizeof(page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED)
    return errno;
  r = m[4095] == 'z' ? 0 : EIO;
  munmap(m, sizeof(page));
  return r;
}

static int t_mmap_file(void) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  int fd, r;

  snprintf(path, sizeof(path), "%s/try-syscall-XXXXXX",
           dir && *dir ? dir : "/tmp");
  fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0)
    return errno;
  (void)unlink(path); /* best effort: the file is private either way */
  r = check_mmap(fd);
  close(fd);
  return r;
}

static int t_memfd_create(void) {
  int fd = memfd_create("try-syscall", MFD_CLOEXEC), r;
  if (fd < 0)
    return errno;
  r = check_mmap(fd);
  close(fd);
  return r;
}

static int t_shm(void) {
  char path[64];
  int fd, r;

  snprintf(path, sizeof(path), "/dev/shm/try-syscall-%d", (int)getpid());
  fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return errno;
  r = check_mmap(fd);
  if (unlink(path) < 0 && r == 0)
    r = errno;
  close(fd);
  return r;
}

/* System V shared memory (allowed by default; refused, like memfd_create,
 * where the supervisor samples the run). */
static int t_shmget(void) {
  int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

  if (id < 0)
    return errno;
  return shmctl(id, IPC_RMID, NULL) < 0 ? errno : 0;
}

/* One page mapped with FLAGS (and FD), written, unmapped.  The raw call,
 * so that the flags reach the kernel as given (the upper 32 bits too). */
static int try_map(unsigned long flags, int fd) {
  long m = syscall(SYS_mmap, 0L, 4096L, (long)(PROT_READ | PROT_WRITE),
                   (long)flags, (long)fd, 0L);

  if (m == -1)
    return errno;
  *(volatile char *)m = 'z';
  return munmap((void *)m, 4096) < 0 ? errno : 0;
}

/* Private anonymous memory: what every allocator maps. */
static int t_mmap_private_anon(void) {
  return try_map(MAP_PRIVATE | MAP_ANONYMOUS, -1);
}

/* Shared anonymous memory (allowed by default; refused, like memfd_create,
 * where the supervisor samples the run: its object keeps every page while
 * one page of it is mapped). */
static int t_mmap_shared_anon(void) {
  return try_map(MAP_SHARED | MAP_ANONYMOUS, -1);
}

/* The same with bits above the 32 the kernel decides by (it ignores
 * them for a shared anonymous mapping). */
static int t_mmap_shared_anon_high(void) {
  unsigned long high = 0;

#if ULONG_MAX > 0xffffffffUL
  high = 1UL << 32;
#endif
  return try_map(high | MAP_SHARED | MAP_ANONYMOUS, -1);
}

/* Huge pages (hugetlb), charged to no memory cgroup: refused by the
 * filter, whatever the host's pool (without one the kernel says ENOMEM,
 * or, for a memfd, makes it). */
static int t_mmap_hugetlb(void) {
  return try_map(MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1);
}

static int t_memfd_hugetlb(void) {
  int fd = memfd_create("try-syscall", MFD_CLOEXEC | MFD_HUGETLB);

  if (fd < 0)
    return errno;
  close(fd);
  return 0;
}

static int t_shmget_hugetlb(void) {
  int id = shmget(IPC_PRIVATE, 2 << 20, IPC_CREAT | SHM_HUGETLB | 0600);

  if (id < 0)
    return errno;
  return shmctl(id, IPC_RMID, NULL) < 0 ? errno : 0;
}

/* MAP_SHARED_VALIDATE: EINVAL for an anonymous mapping. */
static int t_mmap_shared_validate_anon(void) {
  return try_map(MAP_SHARED_VALIDATE | MAP_ANONYMOUS, -1);
}

/* A shared mapping of /dev/zero: the same kind of object, which the
 * filter cannot tell from a file's mapping (skillrun(1) LIMITS). */
static int t_mmap_shared_zero(void) {
  int fd = open("/dev/zero", O_RDWR | O_CLOEXEC), r;

  if (fd < 0)
    return errno;
  r = try_map(MAP_SHARED, fd);
  close(fd);
  return r;
}

static int t_noop(void) {
  return 0;
}

struct test_case {
  const char *name;
  case_fn fn;
};

static const struct test_case cases[] = {
    {"ptrace", t_ptrace},
    {"process_vm_readv", t_process_vm_readv},
    {"process_vm_writev", t_process_vm_writev},
    {"kcmp", t_kcmp},
    {"pidfd_getfd", t_pidfd_getfd},
    {"bpf", t_bpf},
    {"perf_event_open", t_perf_event_open},
    {"userfaultfd", t_userfaultfd},
    {"keyctl", t_keyctl},
    {"add_key", t_add_key},
    {"request_key", t_request_key},
    {"io_uring_setup", t_io_uring_setup},
    {"io_uring_enter", t_io_uring_enter},
    {"io_uring_register", t_io_uring_register},
    {"init_module", t_init_module},
    {"finit_module", t_finit_module},
    {"delete_module", t_delete_module},
    {"kexec_load", t_kexec_load},
    {"kexec_file_load", t_kexec_file_load},
    {"reboot", t_reboot},
    {"swapon", t_swapon},
    {"swapoff", t_swapoff},
    {"acct", t_acct},
    {"settimeofday", t_settimeofday},
    {"clock_settime", t_clock_settime},
    {"clock_adjtime", t_clock_adjtime},
    {"adjtimex", t_adjtimex},
    {"quotactl", t_quotactl},
    {"syslog", t_syslog},
#if defined(__x86_64__) || defined(__i386__)
    {"iopl", t_iopl},
    {"ioperm", t_ioperm},
#endif
#ifdef SYS_lookup_dcookie
    {"lookup_dcookie", t_lookup_dcookie},
#endif
    {"open_by_handle_at", t_open_by_handle_at},
    {"name_to_handle_at", t_name_to_handle_at},
    {"memfd_secret", t_memfd_secret},
    {"fanotify_init", t_fanotify_init},
    {"vhangup", t_vhangup},
#ifdef SYS_modify_ldt
    {"modify_ldt", t_modify_ldt},
#endif
    {"prctl-seccomp", t_prctl_seccomp},
    {"mount", t_mount},
    {"umount2", t_umount2},
    {"pivot_root", t_pivot_root},
    {"chroot", t_chroot},
    {"fsopen", t_fsopen},
    {"fsconfig", t_fsconfig},
    {"fsmount", t_fsmount},
    {"fspick", t_fspick},
    {"move_mount", t_move_mount},
    {"open_tree", t_open_tree},
    {"mount_setattr", t_mount_setattr},
    {"setns", t_setns},
    {"unshare", t_unshare},
    {"clone-newns", t_clone_newns},
    {"clone-newuser", t_clone_newuser},
    {"clone3", t_clone3},
    {"personality-bad", t_personality_bad},
    {"personality-noaslr", t_personality_noaslr},
    {"socket-packet", t_socket_packet},
    {"socket-raw", t_socket_raw},
    {"socket-netlink-audit", t_socket_netlink_audit},
    {"tiocsti", t_tiocsti},
    {"tiocsti-high", t_tiocsti_high},
    {"tioclinux", t_tioclinux},
    {"setsockopt-ipv6-join", t_setsockopt_ipv6_join},
    {"setsockopt-ipv6-join-high", t_setsockopt_ipv6_join_high},
    {"setsockopt-ip-join", t_setsockopt_ip_join},
    {"setsockopt-mcast-join", t_setsockopt_mcast_join},
    {"setsockopt-ipv6-rthdr", t_setsockopt_ipv6_rthdr},
    {"setsockopt-tcp-md5", t_setsockopt_tcp_md5},
    {"setsockopt-attach-filter", t_setsockopt_attach_filter},
    {"setsockopt-ip-recverr", t_setsockopt_ip_recverr},
    {"setsockopt-ipv6-recverr", t_setsockopt_ipv6_recverr},
    {"setsockopt-timestamping", t_setsockopt_timestamping},
    {"setsockopt-timestamping-new", t_setsockopt_timestamping_new},
    {"setsockopt-zerocopy", t_setsockopt_zerocopy},
    {"setsockopt-flowlabel", t_setsockopt_flowlabel},
#ifdef __x86_64__
    {"i386", t_i386},
    {"x32", t_x32},
#endif
    /* positives */
    {"getpid", t_getpid},
    {"clone-thread", t_clone_thread},
    {"fork", t_fork},
    {"spawn", t_spawn},
    {"socketpair", t_socketpair},
    {"tcp-loopback", t_tcp_loopback},
    {"socket-udp", t_socket_udp},
    {"socket-netlink-route", t_socket_netlink_route},
    {"setsockopt-ipv6-leave", t_setsockopt_ipv6_leave},
    {"setsockopt-reuseaddr", t_setsockopt_reuseaddr},
    {"setsockopt-mcast-loop", t_setsockopt_mcast_loop},
    {"setsockopt-timestamp", t_setsockopt_timestamp},
    {"personality-query", t_personality_query},
    {"ioctl-other", t_ioctl_other},
    {"mmap-file", t_mmap_file},
    {"mmap-private-anon", t_mmap_private_anon},
    {"mmap-shared-anon", t_mmap_shared_anon},
    {"mmap-shared-anon-high", t_mmap_shared_anon_high},
    {"mmap-shared-validate-anon", t_mmap_shared_validate_anon},
    {"mmap-shared-zero", t_mmap_shared_zero},
    {"memfd_create", t_memfd_create},
    {"shm", t_shm},
    {"shmget", t_shmget},
    {"mmap-hugetlb", t_mmap_hugetlb},
    {"memfd-hugetlb", t_memfd_hugetlb},
    {"shmget-hugetlb", t_shmget_hugetlb},
};

static void report(const char *name, int e) {
  const char *en = e == SR_IGNORED ? "IGNORED" : e ? strerrorname_np(e) : "OK";

  if (en)
    printf("%s=%s\n", name, en);
  else
    printf("%s=E%d\n", name, e);
  fflush(stdout);
}

/* Each case in its own child: a kill or a changed persona stays there. */
static int run_all(void) {
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    pid_t pid;
    int st;

    fflush(stdout);
    pid = fork();
    if (pid < 0) {
      perror("try-syscall: fork");
      return 1;
    }
    if (pid == 0) {
      report(cases[i].name, cases[i].fn());
      _exit(0);
    }
    if (waitpid(pid, &st, 0) < 0) {
      perror("try-syscall: waitpid");
      return 1;
    }
    if (WIFSIGNALED(st)) {
      const char *s = sigabbrev_np(WTERMSIG(st));
      if (s)
        printf("%s=KILLED:SIG%s\n", cases[i].name, s);
      else
        printf("%s=KILLED:%d\n", cases[i].name, WTERMSIG(st));
    } else if (WEXITSTATUS(st) != 0) {
      printf("%s=EXIT:%d\n", cases[i].name, WEXITSTATUS(st));
    }
  }
  fflush(stdout);
  return 0;
}

/* NAME COUNT: the case COUNT times in a row (a refused call in a tight
 * loop); reports the last result and how many calls were made. */
static int repeat(const struct test_case *c, const char *count) {
  char *end;
  unsigned long n = strtoul(count, &end, 10);
  int e = 0;

  if (*end || n == 0) {
    fprintf(stderr, "try-syscall: bad count '%s'\n", count);
    return 2;
  }
  for (unsigned long i = 0; i < n; i++)
    e = c->fn();
  report(c->name, e);
  printf("%s repeated %lu\n", c->name, n);
  return 0;
}

int main(int argc, char *argv[]) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: try-syscall NAME [COUNT]|all|list\n");
    return 2;
  }
  if (!strcmp(argv[1], "noop"))
    return t_noop();
  if (!strcmp(argv[1], "all"))
    return run_all();
  if (!strcmp(argv[1], "list")) {
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
      puts(cases[i].name);
    return 0;
  }
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
    if (!strcmp(cases[i].name, argv[1])) {
      if (argc == 3)
        return repeat(&cases[i], argv[2]);
      report(cases[i].name, cases[i].fn());
      return 0;
    }
  fprintf(stderr, "try-syscall: unknown case '%s'\n", argv[1]);
  return 2;
}
