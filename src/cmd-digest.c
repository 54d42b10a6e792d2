/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --digest: print the bundle's canonical digest (skillrun-bundle(5)). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "bundle.h"
#include "cli.h"
#include "cmd.h"

/* "DIGEST  NAME" as sha256sum(1) prints it (GNU coreutils): a name with a
 * backslash, newline or carriage return is escaped and its line starts
 * with a backslash, so that a name cannot add a line of its own. */
static void print_digest(const char *digest, const char *name) {
  bool escaped = strpbrk(name, "\\\n\r") != NULL;

  printf("%s%s  ", escaped ? "\\" : "", digest);
  for (const char *c = name; *c; c++) {
    if (escaped && (*c == '\\' || *c == '\n' || *c == '\r'))
      printf("\\%c", *c == '\n' ? 'n' : *c == '\r' ? 'r' : '\\');
    else
      putchar(*c);
  }
  putchar('\n');
}

int sr_cmd_digest(const struct sr_args *a) {
  struct sr_bundle_caps caps;
  struct sr_bundle b = {0};
  struct sr_error err = {0};
  int code = 0;

  sr_bundle_caps_default(&caps);
  if (sr_bundle_stage(a->bundle, -1, &caps, a->verbose, &b, &err) < 0) {
    sr_log_error("%s", err.msg);
    return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  }
  if (a->verbose && b.records)
    fwrite(b.records, 1, b.records_len, stdout);
  print_digest(b.digest, a->bundle);
  if (a->expect_sha256 &&
      strcmp(b.digest + strlen("sha256:"), a->expect_sha256) != 0) {
    sr_log_error("bundle digest %s does not match the expected sha256:%s",
                 b.digest, a->expect_sha256);
    code = SR_EXIT_REFUSED;
  } else if (ferror(stdout) || fflush(stdout) != 0) {
    sr_log_error("cannot write the digest to standard output: %s",
                 strerror(errno ? errno : EIO));
    code = SR_EXIT_FAILED;
  }
  sr_bundle_done(&b);
  return code;
}
