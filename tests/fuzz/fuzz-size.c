/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer: sizes and durations from flags, profiles and SKILL.md. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s, buf[64];
  uint64_t v, back;

  if (size > 256)
    return 0;
  s = strndup((const char *)data, size);
  if (!s)
    abort();

  if (sr_parse_size(s, &v) == 0) {
    if (v > (UINT64_C(1) << 62))
      abort(); /* the documented range */
    /* What --explain prints must read back as the same value when it is
     * exact (no decimal point). */
    sr_format_size(v, buf, sizeof(buf));
    if (!strchr(buf, '.') && (sr_parse_size(buf, &back) < 0 || back != v))
      abort();
  }
  if (sr_parse_duration_ms(s, &v) == 0) {
    if (v > (UINT64_C(1) << 62))
      abort();
    sr_format_duration_ms(v, buf, sizeof(buf));
    if (sr_parse_duration_ms(buf, &back) < 0 || back != v)
      abort();
  }
  if (sr_parse_uint(s, 1000000, &v) == 0 && v > 1000000)
    abort();
  free(s);
  return 0;
}
