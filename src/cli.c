/* SPDX-License-Identifier: GPL-2.0-or-later */
/* STUB: replaced by the CLI work. */
#include "config.h"
#include <string.h>
#include "cli.h"
int sr_cli_parse(int argc, char *const argv[], struct sr_args *out, struct sr_error *err) {
  memset(out, 0, sizeof(*out));
  return sr_error_set(err, SR_EXIT_FAILED, ENOSYS, "usage", "command line parsing not built yet");
}
void sr_args_free(struct sr_args *a) { (void)a; }
void sr_cli_help(FILE *f) { (void)f; }
void sr_cli_version(FILE *f) { (void)f; }
