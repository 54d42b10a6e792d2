/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB */
#include "config.h"
#include "seccomp.h"
int sr_seccomp_build(const struct sr_policy *p, struct sr_seccomp **out, struct sr_error *err) { return sr_error_layer(err, "seccomp", ENOSYS, "not built yet"); }
const char *sr_seccomp_digest(const struct sr_seccomp *f) { return ""; }
unsigned sr_seccomp_insns(const struct sr_seccomp *f) { return 0; }
int sr_seccomp_load(const struct sr_seccomp *f, struct sr_error *err) { return sr_error_layer(err, "seccomp", ENOSYS, "not built yet"); }
void sr_seccomp_free(struct sr_seccomp *f) {}
bool sr_seccomp_known_syscall(const char *name) { return false; }
