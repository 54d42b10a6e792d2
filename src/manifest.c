/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "manifest.h"
int sr_manifest_parse(const char *buf, size_t len, const char *dirname, struct sr_manifest *out, struct sr_error *err) { return -ENOSYS; }
int sr_manifest_load_at(int dirfd, const char *dirname, struct sr_manifest *out, struct sr_error *err) { return -ENOSYS; }
void sr_manifest_free(struct sr_manifest *m) {}
