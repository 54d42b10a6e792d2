/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "mount.h"
int sr_mount_build(const struct sr_mount_plan *plan, struct sr_error *err) { return sr_error_layer(err, "mount", ENOSYS, "mount layer not built yet"); }
