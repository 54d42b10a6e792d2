/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_error;

/*
 * Brings `lo` up in the current (new) network namespace over rtnetlink,
 * requiring the kernel's ACK (NLM_F_ACK + mnl_cb_run), then reads the link
 * back and checks IFF_UP.  Failure: sr_error_layer("network", ...).
 */
int sr_net_loopback_up(struct sr_error *err);

/* Number of network interfaces other than lo that are visible (for the
 * verification that no other interface exists); -errno on failure. */
int sr_net_count_non_loopback(struct sr_error *err);
