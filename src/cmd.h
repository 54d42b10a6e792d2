/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

struct sr_args;

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
