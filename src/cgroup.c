/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "cgroup.h"
int sr_cgroup_setup(struct sr_cgroup *cg, struct sr_policy *p, const char *parent_override, const char *name, char **why, struct sr_error *err) { cg->active = false; cg->leaf_fd = -1; return 0; }
int sr_cgroup_cpu_usec(const struct sr_cgroup *cg, uint64_t *usec) { return -ENOSYS; }
int sr_cgroup_stats(const struct sr_cgroup *cg, struct sr_cgroup_stats *st) { return -ENOSYS; }
int sr_cgroup_kill(const struct sr_cgroup *cg) { return -ENOSYS; }
int sr_cgroup_destroy(struct sr_cgroup *cg) { return 0; }
int sr_cgroup_gc(const char *parent_override, struct sr_error *err) { return 0; }
