/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_args;
struct sr_error;
struct sr_trust_key;

/*
 * The commands, one per mode of the command line (src/main.c's table):
 * each takes the parsed arguments and returns skillrun's exit status.  The
 * run and --explain are the pipeline (run.c); the others are tools around
 * it, each in its own file.
 */
int sr_cmd_run(const struct sr_args *args);          /* run.c */
int sr_cmd_explain(const struct sr_args *args);      /* run.c */
int sr_cmd_digest(const struct sr_args *args);       /* cmd-digest.c */
int sr_cmd_sign(const struct sr_args *args);         /* cmd-sign.c */
int sr_cmd_verify_audit(const struct sr_args *args); /* cmd-verify-audit.c */
int sr_cmd_gc(const struct sr_args *args);           /* cmd-gc.c */
int sr_cmd_metrics(const struct sr_args *args);      /* cmd-metrics.c */

/*
 * For the tools: the workspace root runs use (--workspace-root, else
 * skillrun.conf's, else the caller's default: malloc'd; not looked for
 * when root is NULL) and, when key is
 * not NULL, the audit anchoring key skillrun.conf names (NULL when none),
 * so that the records --gc closes are anchored as a run's own would be.
 * skillrun.conf is loaded as for a run: an unsafe one, or a --conf that
 * does not exist, is an error (cmd-platform.c).
 */
int sr_cmd_platform(const struct sr_args *a, char **root,
                    struct sr_trust_key **key, struct sr_error *err);
