/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer: the audit verifier on arbitrary files, and the round trip
 * bytes -> sr_json_string_lossy -> sr_audit_emit -> sr_audit_verify_fd, which
 * must always verify (whatever a skill prints, the stream stays valid).
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "audit.h"
#include "fdutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd_reset(int *fd) {
  if (*fd < 0)
    *fd = memfd_create("fuzz-audit", MFD_CLOEXEC);
  if (*fd < 0 || ftruncate(*fd, 0) < 0 || lseek(*fd, 0, SEEK_SET) < 0)
    abort();
  return *fd;
}

static void verify_input(const uint8_t *data, size_t size) {
  static int fd = -1;
  struct sr_error err = {0};
  struct sr_audit_check c;
  char head[65];
  uint64_t n = 0;
  int r;

  memfd_reset(&fd);
  if (sr_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
    abort();
  r = sr_audit_verify_fd(fd, "fuzz.jsonl", head, &n, &err);
  if (r == 0 && (n == 0 || strlen(head) != 64))
    abort();
  if (r < 0 && ((r != -EBADMSG && r != -ENODATA) || !sr_error_is_set(&err)))
    abort();
  /* The whole check: a verdict for any bytes, and a reason unless ok. */
  memset(&err, 0, sizeof(err));
  if (lseek(fd, 0, SEEK_SET) < 0 ||
      sr_audit_check_fd(fd, "fuzz.jsonl", NULL, &c, &err) < 0)
    abort();
  if ((c.verdict == SR_AUDIT_OK) == sr_error_is_set(&err))
    abort();
  if (c.verdict == SR_AUDIT_OK && (c.lines == 0 || strlen(c.head) != 64))
    abort();
}

static void round_trip(const uint8_t *data, size_t size) {
  static int fd = -1;
  struct sr_audit a;
  struct sr_error err = {0};
  json_t *value, *fields;
  char head[65];
  uint64_t n = 0;

  memfd_reset(&fd);
  if (sr_audit_init(&a, fd, false, "fuzz-id", "fuzz-tenant") < 0)
    abort();
  /* The input as skill output, and as the skill's name from a manifest. */
  if (sr_audit_set_skill(&a, size ? "s\xff" : NULL, NULL) < 0)
    abort();
  value = sr_json_string_lossy((const char *)data, size);
  if (!value)
    abort();
  fields = json_pack("{s:o, s:I}", "message", value, "bytes", (json_int_t)size);
  if (!fields || sr_audit_emit(&a, "warning", fields, &err) < 0 ||
      sr_audit_emit(&a, "log_truncated", json_object(), &err) < 0)
    abort();
  if (lseek(fd, 0, SEEK_SET) < 0 ||
      sr_audit_verify_fd(fd, "round-trip", head, &n, &err) < 0 || n != 2 ||
      strcmp(head, a.prev) != 0)
    abort();
  sr_audit_done(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4 * 1024 * 1024)
    return 0;
  verify_input(data, size);
  round_trip(data, size);
  return 0;
}
