/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer: the profile / skillrun.conf line format (sr_conf_parse_buffer). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    sr_conf_free(&c);
  } else if (!sr_error_is_set(&err)) {
    abort();
  }
  free(buf);
  return 0;
}
