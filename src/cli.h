/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "limit.h"

enum sr_mode {
  SR_MODE_RUN = 0,
  SR_MODE_DIGEST,       /* --digest */
  SR_MODE_EXPLAIN,      /* --explain */
  SR_MODE_VERIFY_AUDIT, /* --verify-audit FILE */
  SR_MODE_GC,           /* --gc: remove leftovers of dead runs */
  SR_MODE_METRICS,      /* --metrics: Prometheus text of the runs */
  SR_MODE_SIGN,         /* --sign KEY --tier TIER --signature OUT BUNDLE */
  SR_MODE_HELP,
  SR_MODE_VERSION,
};

/* --label KEY=VALUE, validated (util.h: sr_valid_label_key/value). */
struct sr_label {
  char *key;
  char *value;
};

struct sr_input_arg {
  char *path; /* host path, as given */
  char *name; /* name under /workspace/inputs (basename when not given) */
};

/*
 * The parsed command line.  Pure data: parsing opens no file and has no side
 * effect, so every rule is unit-tested.  What it asks of the policy (limits,
 * network, workspace root) is the flags layer, `layer`.
 */
struct sr_args {
  enum sr_mode mode;
  char *bundle;  /* BUNDLE (required for run, digest, explain) */
  char *profile; /* -p NAME|PATH, NULL = embedded default */
  char *conf;    /* --conf PATH, NULL = SR_SYSCONFDIR/skillrun/skillrun.conf */
  char *expect_sha256; /* 64 lowercase hex digits (a "sha256:" prefix is
                          stripped) */
  char *signature;     /* --signature FILE (with --sign: the output) */
  char *sign_key;      /* --sign KEY: private key (PEM) */
  char *tier;          /* --tier TIER, with --sign only */
  char *capability;    /* --capability FILE */
  int capability_fd;   /* --capability-fd N, -1 unset */
  char *audit_key;     /* --audit-key PUBKEY, with --verify-audit only */
  char *tenant;        /* default "default"; as given when invalid */
  char *execution_id;  /* NULL = random UUIDv4 chosen by the run */
  /* The id given does not pass sr_valid_id: a run refuses it on the
   * record (exit 123), other modes when parsing. */
  bool tenant_invalid;
  bool execution_id_invalid;
  struct sr_input_arg *inputs;
  size_t n_inputs;
  struct sr_label *labels; /* in the order given; keys unique */
  size_t n_labels;
  char *workspace_root; /* --workspace-root DIR (layer.workspace_root) */
  char *cgroup_parent;  /* --cgroup-parent PATH (a delegated cgroup v2 dir) */
  struct sr_flag_layer layer; /* --<limit>, --network, --workspace-root */
  int audit_fd;               /* -1 unset */
  char *audit_file;           /* --audit-file PATH */
  char *verify_audit;         /* --verify-audit FILE */
  bool verbose;               /* --verbose (with --digest: print the records) */
  bool log_passthrough; /* --log-passthrough: copy kept log bytes to stderr */
  bool forward_stdin;   /* --stdin: the caller's stdin to the skill's */
  char **command;       /* after "--", NULL-terminated, copied verbatim */
  size_t n_command;
};

/*
 * Parses argv into *out (zeroed first).  On a usage error returns -EINVAL
 * with err set (exit 125, one line naming the option; main adds the hint
 * "Try 'skillrun --help'").  Everything after the first "--" is copied
 * into command[] untouched, never parsed as options.
 */
int sr_cli_parse(int argc, char *const argv[], struct sr_args *out,
                 struct sr_error *err);
void sr_args_done(struct sr_args *a);

/* The refusal of an invalid tenant or execution id ("tenant",
 * "execution"): exit 123, reason invalid_id, the value quoted in ASCII. */
int sr_cli_id_refusal(const char *kind, const char *value,
                      struct sr_error *err);
#define _cleanup_args_ _cleanup_(sr_args_done)

/* The --help text (short and complete), and --version. */
void sr_cli_help(FILE *f);
void sr_cli_version(FILE *f);
