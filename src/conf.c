/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "conf.h"
int sr_conf_parse_buffer(const char *buf, size_t len, const char *display_name, struct sr_conf *out, struct sr_error *err) { return sr_error_set(err, SR_EXIT_FAILED, ENOSYS, "conf", "not built yet"); }
int sr_conf_parse_file(const char *path, struct sr_conf *out, struct sr_error *err) { return sr_error_set(err, SR_EXIT_FAILED, ENOSYS, "conf", "not built yet"); }
int sr_conf_load_platform(const char *path, struct sr_conf *out, char **warning, struct sr_error *err) { return sr_error_set(err, SR_EXIT_FAILED, ENOSYS, "conf", "not built yet"); }
int sr_conf_load_profile(const char *name_or_path, struct sr_conf *out, char **resolved, struct sr_error *err) { return sr_error_set(err, SR_EXIT_FAILED, ENOSYS, "conf", "not built yet"); }
void sr_conf_free(struct sr_conf *c) {}
