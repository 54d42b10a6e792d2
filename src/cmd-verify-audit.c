/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --verify-audit FILE [--audit-key PUBKEY]: check a ledger's chain, whether
 * it is complete, and with a key its anchor (skillrun(1) AUDIT ANCHORING,
 * EXIT STATUS). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "audit.h"
#include "cli.h"
#include "cmd.h"
#include "fdutil.h"
#include "trust.h"

/* The verdicts' exit statuses; a file or key that cannot be read is 125. */
enum { EXIT_TAMPERED = 1, EXIT_INCOMPLETE = 2 };

/* The file was opened non-blocking, so that open(2) itself never waits;
 * what is not a regular file (/dev/stdin, <(...), a FIFO, a terminal) is
 * then read blocking, to its end, as cat(1) reads it: a writer a moment
 * late no longer makes a complete ledger "empty" or unreadable.  A FIFO
 * opened before its writer reads as empty, so a pipe or FIFO is first
 * waited on with poll(2), which reports it only once there are bytes to
 * read or a writer came and went.  It is not opened again to wait for a
 * writer: one that had already written the ledger and gone would leave
 * that open waiting for another, for ever.  Only this open file, ours,
 * becomes blocking.  0 or -errno. */
static int read_blocking(int fd) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  struct stat st;
  int flags, n;

  if (fstat(fd, &st) < 0)
    return -errno;
  if (S_ISREG(st.st_mode))
    return 0;
  if (S_ISFIFO(st.st_mode)) {
    do
      n = poll(&p, 1, -1);
    while (n < 0 && errno == EINTR);
    if (n < 0)
      return -errno;
  }
  flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
    return -errno;
  return 0;
}

int sr_cmd_verify_audit(const struct sr_args *a) {
  _cleanup_close_ int fd = -1;
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  struct sr_error err = {0};
  struct sr_audit_check c;
  int r;

  if (a->audit_key && sr_trust_key_load(a->audit_key, false, &key, &err) < 0) {
    sr_log_error("%s", err.msg);
    return SR_EXIT_FAILED;
  }
  fd = open(a->verify_audit, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    /* "-" is a file name, not standard input: say how to give that. */
    sr_log_error("cannot open %s: %s%s", a->verify_audit, strerror(e),
                 e == ENOENT && !strcmp(a->verify_audit, "-")
                     ? " (read standard input as /dev/stdin)"
                     : "");
    return SR_EXIT_FAILED;
  }
  r = read_blocking(fd);
  if (r < 0) {
    sr_log_error("cannot read %s: %s", a->verify_audit, strerror(-r));
    return SR_EXIT_FAILED;
  }
  r = sr_audit_check_fd(fd, a->verify_audit, key, &c, &err);
  if (r < 0) {
    sr_log_error("%s", err.msg);
    return SR_EXIT_FAILED;
  }
  switch (c.verdict) {
  case SR_AUDIT_OK:
    /* Which run it is: a signed ledger of another run verifies too. */
    /* And how it ended, so that a caller need not read the last line
     * again (what the chain alone leaves unproven: AUDIT ANCHORING). */
    printf("ok: %" PRIu64 " events, head sha256:%s, %s%s, run %s/%s, status %s",
           c.lines, c.head, key ? "anchored by key " : "not anchored",
           key ? sr_trust_key_id(key) : "", c.tenant_id[0] ? c.tenant_id : "-",
           c.execution_id[0] ? c.execution_id : "-",
           c.status[0] ? c.status : "-");
    if (c.exit_code >= 0)
      printf(", exit %d\n", c.exit_code);
    else
      printf(", exit -\n");
    return 0;
  case SR_AUDIT_INCOMPLETE:
    sr_log_error("incomplete: %s", err.msg);
    return EXIT_INCOMPLETE;
  default:
    sr_log_error("tampered: %s", err.msg);
    return EXIT_TAMPERED;
  }
}
