/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "policy.h"
const struct sr_limit_def sr_limit_defs[SR__LIM_MAX];
const char *sr_source_name(enum sr_source s) { return "?"; }
int sr_limit_by_name(const char *name) { return -1; }
int sr_policy_init(struct sr_policy *p) { return -ENOSYS; }
int sr_policy_apply_conf(struct sr_policy *p, const struct sr_conf *c, struct sr_error *err) { return -ENOSYS; }
int sr_policy_apply_profile(struct sr_policy *p, const struct sr_conf *c, struct sr_error *err) { return -ENOSYS; }
int sr_policy_apply_manifest(struct sr_policy *p, const struct sr_manifest *m, struct sr_error *err) { return -ENOSYS; }
int sr_policy_apply_args(struct sr_policy *p, const struct sr_args *a, struct sr_error *err) { return -ENOSYS; }
json_t *sr_policy_to_json(const struct sr_policy *p) { return NULL; }
void sr_policy_free(struct sr_policy *p) {}
