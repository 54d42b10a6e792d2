/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "audit.h"
#include "bundle.h"
#include "cgroup.h"
#include "cli.h"
#include "error.h"
#include "host.h"
#include "manifest.h"
#include "policy.h"
#include "status.h"
#include "supervisor.h"
#include "trust.h"
#include "workspace.h"

/*
 * One run of a skill, as the pipeline's stages fill it in order
 * (doc/architecture.md "The run pipeline").  Each stage reads what earlier
 * stages wrote and adds its own part; nothing is written back into an
 * earlier stage's part, and the policy is only read after the configure
 * stages.  The fields are in stage order for the reader, not packed: there
 * is one per invocation.
 * NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding) */
struct sr_run {
  const struct sr_args *args;
  bool explain; /* --explain: stop after configuring and print the view */

  /* start */
  char execution_id[65];
  const char *tenant;
  uint64_t start_ms;
  char started_at[32];
  int cancel_sig; /* a cancellation signal seen before the launch, or 0 */
  struct sr_audit audit;
  bool audit_open;
  bool started; /* execution_started is on the record */

  /* configure from the platform (skillrun.conf, profile), then from the
   * skill (SKILL.md, flags, capability): const afterwards */
  struct sr_policy policy;
  bool policy_init;
  bool policy_final; /* configure_skill succeeded: the limits are known */
  struct sr_trust_key *audit_key; /* anchors execution_completed */
  bool audit_key_tried; /* configure_platform (or emit_completed) looked */

  /* admit */
  struct sr_capability capability;
  bool have_capability;
  struct sr_workspace ws;

  /* verify */
  char *bundle_path; /* the bundle, resolved */
  struct sr_bundle bundle;
  struct sr_manifest manifest;
  bool have_manifest;
  enum sr_tier tier; /* SR_TIER_UNSIGNED without a statement */
  bool verified;     /* bundle_verified is on the record: tier is known */
  struct sr_statement statement;
  struct sr_keyring keyring;
  char *would_refuse;     /* --explain: the refusal a run would meet, */
  size_t would_refuse_at; /* listed before this policy warning */
  json_t *refusal_extra;  /* fields added to the refusal's event */
  /* The refusal's event: "input_rejected" for an --input refused by a
   * rule (admit: its name; prepare: its file, size or type); NULL:
   * bundle_rejected. */
  const char *refusal_event;

  /* prepare */
  char *const *argv; /* the command: after "--", else the entrypoint */
  struct sr_seccomp *seccomp;
  json_t *inputs; /* the staged inputs (input_staged's fields) */
  char **envp;    /* the skill's environment, NULL-terminated */
  size_t n_envp;
  struct sr_host host;
  struct sr_enforcement enf;
  struct sr_nethosts net_hosts; /* skillrun.conf network-hosts, read */
  bool have_net_hosts;
  struct sr_launch launch;
  /* policy_resolved is due (prepare succeeded) but not yet on the record:
   * it is written while init mounts (sr_launch.while_mounting), or by
   * sr_stage_record_policy when the launch did not get that far. */
  bool policy_pending;

  /* launch, supervise */
  struct sr_supervisor sup;

  /* collect */
  struct sr_verdict verdict;
  uint64_t duration_ms; /* from launch to the end of supervision */
  bool have_cgroup_stats;
  struct sr_cgroup_stats cg;
  struct sr_artifacts artifacts;
  /* The whole run's figures, from the cgroup or the supervisor's sampler
   * (execution_completed); have_usage once the sandbox ran. */
  bool have_usage;
  uint64_t cpu_usec, memory_peak, pids_peak;
};

/* ---- stages (src/run*.c), in pipeline order; each 0 or -errno with err
 * set.  A failure ends the run: the report stage records it. ---- */

/* ids (an invalid one is refused), start time; the audit stream (not for
 * --explain). */
int sr_stage_start(struct sr_run *run, struct sr_error *err);
/* skillrun.conf and the profile; the audit anchoring key. */
int sr_stage_configure_platform(struct sr_run *run, struct sr_error *err);
/* The execution capability (everything but the digest), then the run
 * directory, created exclusively: an execution id runs once; then
 * execution_started, which names it. */
int sr_stage_admit(struct sr_run *run, struct sr_error *err);
/* Stages the bundle while hashing it (for --explain: hashes only), checks
 * the pin and the capability's digest, parses SKILL.md from the verified
 * bytes, checks the signature and tier; bundle_verified. */
int sr_stage_verify(struct sr_run *run, struct sr_error *err);
/* SKILL.md's sandbox.* keys, the flags and the capability's network
 * field; the policy is final afterwards (its warnings recorded). */
int sr_stage_configure_skill(struct sr_run *run, struct sr_error *err);
/* The command, the seccomp program, the inputs, the environment, the host
 * ids and cgroup leaf and what enforces each limit; the sandbox's
 * metadata.json.  policy_resolved is then due (sr_stage_launch). */
int sr_stage_prepare(struct sr_run *run, struct sr_error *err);
/* Clones the sandbox and releases it; policy_resolved is recorded while
 * init builds the mounts. */
int sr_stage_launch(struct sr_run *run, struct sr_error *err);
/* Records policy_resolved if prepare succeeded and the launch did not (a
 * cancellation before it, a failure before init was released), ahead of
 * the run's end; r is the pipeline's result so far, and stays its
 * result (with err) when it is a failure already. */
int sr_stage_record_policy(struct sr_run *run, int r, struct sr_error *err);
/* The event loop until the skill has ended. */
int sr_stage_supervise(struct sr_run *run, struct sr_error *err);
/* Always called, with the pipeline's result so far (r): the verdict, the
 * cgroup figures, the limits that stopped the run, the harvest, the run
 * directory's metadata.json; then nothing of the run is left alive.
 * Returns r, or the harvest's error. */
int sr_stage_collect(struct sr_run *run, int r, struct sr_error *err);
/* execution_completed (or the failure's events), the exit status. */
int sr_stage_report(struct sr_run *run, int r, struct sr_error *err);

/* --explain's output: the final policy, the bundle and its trust. */
int sr_stage_explain(struct sr_run *run);

/* Helpers shared by the stages. */
json_t *sr_run_trust_json(const struct sr_run *run);
json_t *sr_run_metadata_json(const struct sr_run *run);
/* execution_started (once): with the run directory once admit made it,
 * else run_dir null (report calls it for a run stopped before). */
int sr_run_emit_started(struct sr_run *run, struct sr_error *err);
/* 0, or when a cancellation signal is pending, its number in cancel_sig
 * and an error (ECANCELED) that ends the run as cancelled. */
int sr_run_check_cancel(struct sr_run *run, struct sr_error *err);
/* The --label pairs as a JSON object. */
json_t *sr_run_labels_json(const struct sr_run *run);
int sr_run_emit_warnings(struct sr_run *run, const struct sr_strv *w,
                         const char *source, struct sr_error *err);
/* Lowers limit id so that its rlimit `resource` (the value plus `extra`)
 * fits under skillrun's own hard limit, which the sandbox cannot raise:
 * 1 with the warning in msg, 0 when it fits, or an error (reason
 * resources) when not even the limit's minimum does. */
int sr_run_clamp_to_hard(struct sr_policy *p, enum sr_limit_id id, int resource,
                         uint64_t extra, const char *opt, char *msg, size_t len,
                         struct sr_error *err);
void sr_run_init(struct sr_run *run, const struct sr_args *args);
void sr_run_done(struct sr_run *run);
#define _cleanup_run_ _cleanup_(sr_run_done)
