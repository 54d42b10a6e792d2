/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "audit.h"
#include "cgroup.h"
#include "cli.h"
#include "error.h"
#include "manifest.h"
#include "policy.h"
#include "workspace.h"

struct sr_seccomp;

/* One run, from the supervisor's point of view. */
/* The sandbox's init, as the supervisor holds it. */
struct sr_init_proc {
  pid_t pid;   /* 0 before the clone */
  int pidfd;   /* -1 without (old kernel) */
  bool exited; /* reaped */
};

struct sr_run {
  const struct sr_args *args;
  const char *tenant; /* resolved ids (args may leave them unset) */
  const char *execution_id;
  const struct sr_policy *policy;
  struct sr_enforcement enf; /* filled by sr_supervisor_prepare */
  const struct sr_manifest *manifest;
  const struct sr_seccomp *seccomp;
  struct sr_workspace *ws;
  struct sr_audit *audit;
  char **argv; /* the command to run (argv[0] as given) */
  char **envp; /* the skill's environment, built from scratch */
  struct sr_cgroup cgroup;
  uid_t host_uid; /* the sandbox user's id on the host */
  gid_t host_gid;
  int uidpool_fd; /* locked uid-pool slot (root), -1 otherwise */
  struct sr_init_proc init;
};

struct sr_result {
  const char *status; /* succeeded failed killed timeout oom cpu_exceeded
                       * cancelled error */
  int exit_code;      /* what skillrun exits with */
  int skill_exit;     /* the skill's own exit status, -1 if none */
  int signal;         /* signal that killed the skill, 0 if none */
  int exec_errno;     /* execve failure, 0 if none */
  uint64_t duration_ms;
  bool have_cgroup_stats;
  struct sr_cgroup_stats cg;
  uint64_t log_kept[2], log_dropped[2];
  uint64_t artifacts, artifact_bytes;
};

/*
 * Resolves which mechanism enforces each limit: a cgroup v2 leaf when one
 * can be had, the rlimit fallbacks otherwise (policy `cgroup prefer`), a
 * refusal under `cgroup require`.  Fills run->enf and emits the fallback
 * warning.  Called before policy_resolved.
 */
int sr_supervisor_prepare(struct sr_run *run, struct sr_error *err);

/* Builds the sandbox, runs the skill, pumps its logs, enforces the time and
 * CPU limits, forwards cancellation, harvests outputs and fills *res.  On
 * return every process of the run is dead but, after a success, the
 * sandbox's init, which has reported and is only finishing its exit (the
 * teardown of its mount namespace, ~0.5 ms): the caller may write its
 * records meanwhile, and must then call sr_supervisor_cleanup. */
int sr_supervise(struct sr_run *run, struct sr_result *res,
                 struct sr_error *err);

/* Waits for the sandbox's init to exit (at most a few seconds, then kills
 * it) and reaps it: nothing of the run is alive afterwards. */
void sr_supervisor_reap(struct sr_run *run);

/* sr_supervisor_reap, then releases what sr_supervisor_prepare acquired
 * (the cgroup leaf, the uid-pool slot). */
void sr_supervisor_cleanup(struct sr_run *run);
