/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer: the signed statement parser (--signature FILE, BUNDLE.sig). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trust.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sr_statement st;
  struct sr_error err = {0};
  char *buf;

  /* Not NUL-terminated on purpose: the parser must respect `size`. */
  buf = malloc(size ? size : 1);
  if (!buf)
    abort();
  memcpy(buf, data, size);
  if (sr_statement_parse(buf, size, &st, &err) == 0) {
    /* What was accepted is within the documented bounds. */
    if (st.tier < 0 || st.tier >= SR__TIER_MAX ||
        strlen(st.name) > SR_STATEMENT_NAME_MAX ||
        strlen(st.version) > SR_STATEMENT_VERSION_MAX ||
        strlen(st.key_id) != SR_KEY_ID_LEN || st.signed_len >= size)
      abort();
    /* The tenant tier names a valid tenant; the other tiers none. */
    if (st.tier == SR_TIER_TENANT ? !sr_valid_id(st.tenant) : st.tenant[0])
      abort();
  } else if (err.exit_code != SR_EXIT_REFUSED) {
    abort();
  }
  free(buf);
  return 0;
}
