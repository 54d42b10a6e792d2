/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer: the profile / skillrun.conf line format (sr_conf_parse_buffer),
 * then the parsed lines applied as skillrun.conf (even sizes) or a profile
 * (odd sizes) to a fresh policy, whose invariants must hold when accepted.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "policy.h"
#include "seccomp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void apply(const struct sr_conf *c, bool as_conf) {
  struct sr_policy p;
  struct sr_error err = {0};
  int r;

  if (sr_policy_init(&p) < 0)
    return;
  r = as_conf ? sr_policy_apply_conf(&p, c, &err)
              : sr_policy_apply_profile(&p, c, &err);
  if (r == 0 && !as_conf)
    r = sr_seccomp_check_names(&p, &err);
  if (r < 0 && !sr_error_is_set(&err) && r != -ENOMEM)
    abort(); /* every refusal says why */
  if (r == 0) {
    for (int i = 0; i < SR__LIM_MAX; i++)
      if (p.limits[i].value > p.limits[i].cap ||
          p.limits[i].value < sr_limit_defs[i].min ||
          p.limits[i].cap > sr_limit_defs[i].max)
        abort(); /* a limit escaped the table's bounds */
    if (p.network != SR_NET_DENY || p.network_max == SR_NET_UNSET ||
        p.network_max >= SR__NET_MAX)
      abort(); /* only a skill's request can grant the network */
  }
  sr_policy_done(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sr_conf c;
  struct sr_error err = {0};
  char *buf;

  if (size > SR_CONF_MAX_BYTES)
    return 0;
  /* Exact size, no terminating NUL: see fuzz-manifest.c. */
  buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  memset(&c, 0, sizeof(c));
  if (sr_conf_parse_buffer(buf, size, "fuzz.profile", &c, &err) == 0) {
    for (size_t i = 0; i < c.n_lines; i++) {
      const struct sr_conf_line *l = &c.lines[i];
      if (!l->key || !l->args || l->args[l->n_args] != NULL)
        abort(); /* the documented shape of a parsed line */
    }
    apply(&c, size % 2 == 0);
    sr_conf_done(&c);
  } else if (!sr_error_is_set(&err)) {
    abort();
  }
  free(buf);
  return 0;
}
