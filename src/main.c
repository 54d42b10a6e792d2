/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * skillrun's entry: parses the command line and hands it to the command
 * of its mode (cmd.h).  The run itself is the pipeline in run.c
 * (doc/architecture.md).
 */
#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "error.h"
#include "macro.h"

static int cmd_help(const struct sr_args *a) {
  (void)a;
  sr_cli_help(stdout);
  return 0;
}

static int cmd_version(const struct sr_args *a) {
  (void)a;
  sr_cli_version(stdout);
  return 0;
}

static const struct {
  enum sr_mode mode;
  int (*run)(const struct sr_args *a);
} commands[] = {
    {SR_MODE_RUN, sr_cmd_run},
    {SR_MODE_EXPLAIN, sr_cmd_explain},
    {SR_MODE_DIGEST, sr_cmd_digest},
    {SR_MODE_SIGN, sr_cmd_sign},
    {SR_MODE_VERIFY_AUDIT, sr_cmd_verify_audit},
    {SR_MODE_GC, sr_cmd_gc},
    {SR_MODE_HELP, cmd_help},
    {SR_MODE_VERSION, cmd_version},
};

int main(int argc, char *argv[]) {
  struct sr_args args;
  struct sr_error err = {0};
  int code = SR_EXIT_FAILED;

  /* A closed stdout must not become the audit file or a log by accident. */
  if (fcntl(STDOUT_FILENO, F_GETFD) < 0 || fcntl(STDERR_FILENO, F_GETFD) < 0)
    return SR_EXIT_FAILED;
  /* Writes to a closed pipe must fail with EPIPE, not kill us silently. */
  signal(SIGPIPE, SIG_IGN);

  if (sr_cli_parse(argc, argv, &args, &err) < 0) {
    sr_log_error("%s", err.msg);
    if (err.exit_code != SR_EXIT_REFUSED)
      fprintf(stderr, "Try 'skillrun --help' for more information.\n");
    sr_args_done(&args);
    return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(commands); i++)
    if (commands[i].mode == args.mode) {
      code = commands[i].run(&args);
      break;
    }
  sr_args_done(&args);
  return code;
}
