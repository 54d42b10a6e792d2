/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "caps.h"
int sr_caps_drop_all(struct sr_error *err) { return sr_error_layer(err, "capabilities", ENOSYS, "not built yet"); }
int sr_set_no_new_privs(struct sr_error *err) { return sr_error_layer(err, "no_new_privs", ENOSYS, "not built yet"); }
