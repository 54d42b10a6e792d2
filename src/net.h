/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

struct sr_error;

/*
 * Brings `lo` up in the current (new) network namespace over rtnetlink,
 * requiring the kernel's ACK (NLM_F_ACK + mnl_cb_run), then lists the
 * links and checks lo's IFF_UP.  Failure: sr_error_layer("network", ...).
 */
int sr_net_loopback_up(struct sr_error *err);

/* The sandbox's network namespace made ready: lo up, and no interface
 * other than lo in the same listing (sr_error_layer("network", ...)
 * otherwise). */
int sr_net_sandbox_up(struct sr_error *err);

/*
 * A new network namespace for the calling process (unshare(2)), made ready
 * as sr_net_sandbox_up does, and a descriptor of it in *ret_nsfd (O_CLOEXEC,
 * from SIOCGSKNS on the rtnetlink socket made in it) that a process of the same
 * user namespace can setns(2) into.  Needs CAP_SYS_ADMIN and CAP_NET_ADMIN in
 * the current user namespace.  0, or -errno with sr_error_layer("network").
 */
int sr_net_unshare_sandbox(int *ret_nsfd, struct sr_error *err);

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
