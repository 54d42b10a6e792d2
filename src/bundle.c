/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "bundle.h"
void sr_bundle_caps_default(struct sr_bundle_caps *c) {}
int sr_bundle_stage(const char *src, int dst_dirfd, const struct sr_bundle_caps *caps, bool keep_records, struct sr_bundle *out, struct sr_error *err) { return -ENOSYS; }
void sr_bundle_free(struct sr_bundle *b) {}
char *sr_bundle_record(char type, bool mode_exec, uint64_t size, const char *sha256_hex, const char *relpath) { return NULL; }
int sr_bundle_path_cmp(const char *a, const char *b) { return 0; }
bool sr_bundle_name_ok(const char *name) { return false; }
