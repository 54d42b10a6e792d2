/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "net.h"
int sr_net_loopback_up(struct sr_error *err) { return sr_error_layer(err, "network", ENOSYS, "not built yet"); }
int sr_net_count_non_loopback(struct sr_error *err) { return -ENOSYS; }
