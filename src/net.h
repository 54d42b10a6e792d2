/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct sr_error;

/* How the sandbox's network namespace gets its sysctls: fd, a writable
 * /proc/sys (O_PATH; init's, the host's or a procfs of the sandbox's
 * own), through which a net sysctl is the namespace's of the process that
 * opens it, -1 for none; tstamp_required: a kernel that has
 * net.core.tstamp_allow_data for the host alone (before Linux 6.13), or
 * no fd, is an error (strict, where the host's is not 0). */
struct sr_net_sysctl {
  int fd;
  bool tstamp_required;
};

/*
 * Brings `lo` up in the current (new) network namespace over rtnetlink,
 * requiring the kernel's ACK (NLM_F_ACK + mnl_cb_run), then lists the
 * links and checks lo's IFF_UP.  Failure: sr_error_layer("network", ...).
 */
int sr_net_loopback_up(struct sr_error *err);

/* The sandbox's network namespace made ready: lo up, no interface other
 * than lo in the same listing, and net.core.tstamp_allow_data 0 where the
 * kernel has it per namespace (since Linux 6.13), set through sysctl->fd:
 * a transmit timestamp that carries the data sent is then dropped, for
 * every socket a skill opens.  0, or -errno with
 * sr_error_layer("network", ...). */
int sr_net_sandbox_up(const struct sr_net_sysctl *sysctl, struct sr_error *err);

/* net.core.tstamp_allow_data as the caller's network namespace has it
 * (/proc/sys): 0, or 1 (also when it cannot be read). */
int sr_net_host_tstamp_allow_data(void);

/*
 * A new network namespace for the calling process (unshare(2)), made ready
 * as sr_net_sandbox_up does, and a descriptor of it in *ret_nsfd (O_CLOEXEC,
 * from SIOCGSKNS on the rtnetlink socket made in it) that a process of the same
 * user namespace can setns(2) into.  Needs CAP_SYS_ADMIN and CAP_NET_ADMIN in
 * the current user namespace.  0, or -errno with sr_error_layer("network").
 */
int sr_net_unshare_sandbox(const struct sr_net_sysctl *sysctl, int *ret_nsfd,
                           struct sr_error *err);

/*
 * A listening TCP socket on the loopback address of the current network
 * namespace: 127.0.0.1 (family AF_INET) or ::1 (AF_INET6, IPV6_V6ONLY), on
 * `port` (0: the kernel picks one; *bound_port, may be NULL, tells which),
 * O_CLOEXEC, backlog SOMAXCONN.  The egress proxy's listener: the sandbox's
 * init creates it inside the sandbox's network namespace (after lo is up)
 * and passes it to the supervisor, whose proxy process accepts on it from
 * the host's namespace.  0, or -errno with sr_error_layer("network", ...);
 * -EADDRNOTAVAIL for AF_INET6 means ::1 does not exist (IPv6 disabled),
 * which the caller may treat as "IPv4 only".
 */
int sr_net_listen_loopback(int family, uint16_t port, int *ret_fd,
                           uint16_t *bound_port, struct sr_error *err);
