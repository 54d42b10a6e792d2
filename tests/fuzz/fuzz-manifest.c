/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer: SKILL.md front matter (sr_manifest_parse) on arbitrary bytes. */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct sr_manifest m;
  struct sr_error err = {0};
  char *buf;

  if (size > SR_MANIFEST_MAX_BYTES)
    return 0;
  /* An exact-size copy without a terminating NUL: the parser gets (buf,
   * len) and must not read past len, which ASan then reports. */
  buf = malloc(size ? size : 1);
  if (!buf)
    return 0;
  memcpy(buf, data, size);
  memset(&m, 0, sizeof(m));
  /* With and without the name-matches-directory rule. */
  if (sr_manifest_parse(buf, size, size % 2 ? "pdf-tools" : NULL, &m, &err) ==
      0) {
    if (!m.name || !m.description)
      abort(); /* required keys: success without them is a bug */
    sr_manifest_done(&m);
  } else if (!sr_error_is_set(&err)) {
    abort(); /* a failure must say why */
  }
  free(buf);
  return 0;
}
