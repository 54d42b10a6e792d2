/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "audit.h"
int sr_audit_init(struct sr_audit *a, int fd, bool own_fd, const char *execution_id, const char *tenant_id) { return -ENOSYS; }
int sr_audit_set_skill(struct sr_audit *a, const char *skill, const char *version) { return -ENOSYS; }
int sr_audit_attach_copy(struct sr_audit *a, int copy_fd, struct sr_error *err) { return -ENOSYS; }
int sr_audit_emit(struct sr_audit *a, const char *event, json_t *fields, struct sr_error *err) { return -ENOSYS; }
char *sr_audit_format(const struct sr_audit *a, const char *event, const json_t *fields, const char *ts) { return NULL; }
int sr_audit_verify_fd(int fd, const char *display_name, char head_hex[65], uint64_t *n_lines, struct sr_error *err) { return -ENOSYS; }
void sr_audit_done(struct sr_audit *a) {}
