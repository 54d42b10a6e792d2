/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --verify-audit FILE [--audit-key PUBKEY]: check a ledger's chain, and
 * with a key its anchor (skillrun(1) AUDIT ANCHORING). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "cli.h"
#include "cmd.h"
#include "fdutil.h"
#include "trust.h"

int sr_cmd_verify_audit(const struct sr_args *a) {
  _cleanup_close_ int fd = -1;
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  struct sr_error err = {0};
  char head[65];
  uint64_t n = 0;
  int r;

  if (a->audit_key && sr_trust_key_load(a->audit_key, false, &key, &err) < 0) {
    sr_log_error("%s", err.msg);
    return 1;
  }
  fd = open(a->verify_audit, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    sr_log_error("cannot open %s: %s", a->verify_audit, strerror(errno));
    return 1;
  }
  if (key)
    r = sr_audit_verify_anchored_fd(fd, a->verify_audit, key, head, &n, &err);
  else
    r = sr_audit_verify_fd(fd, a->verify_audit, head, &n, &err);
  if (r < 0) {
    sr_log_error("%s", err.msg);
    return 1;
  }
  if (key)
    printf("ok: %" PRIu64 " events, head sha256:%s, anchored by key %s\n", n,
           head, sr_trust_key_id(key));
  else
    printf("ok: %" PRIu64 " events, head sha256:%s\n", n, head);
  return 0;
}
