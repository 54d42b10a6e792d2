/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer: the execution capability token parser (--capability). */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trust.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sr_capability cap;
  struct sr_error err = {0};
  char *buf;

  buf = malloc(size ? size : 1);
  if (!buf)
    abort();
  memcpy(buf, data, size);
  if (sr_capability_parse(buf, size, &cap, &err) == 0) {
    if (!sr_valid_id(cap.tenant) || !sr_valid_id(cap.execution) ||
        cap.expires <= cap.issued || cap.payload_len >= sizeof(cap.payload) ||
        (cap.network != SR_CAP_NET_DENY && cap.network != SR_CAP_NET_ALLOW &&
         cap.network != SR_CAP_NET_ALLOWLIST) ||
        cap.network_allow[0] == ' ' || strstr(cap.network_allow, "  ") ||
        (cap.network_allow[0] &&
         cap.network_allow[strlen(cap.network_allow) - 1] == ' ') ||
        (cap.placement[0] && !sr_valid_id(cap.placement)))
      abort();
  } else if (err.exit_code != SR_EXIT_REFUSED) {
    abort();
  }
  free(buf);
  return 0;
}
