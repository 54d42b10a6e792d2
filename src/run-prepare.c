/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The prepare stage (doc/architecture.md): everything the sandbox is built
 * from, decided and acquired before anything is cloned: the command, the
 * seccomp program, the staged inputs, the environment, the host ids and
 * cgroup leaf, and from them what enforces each limit.  Then launch and
 * supervise, which hand the prepared run to the supervisor.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock.h"
#include "fdutil.h"
#include "metafile.h"
#include "netallow.h"
#include "proxy.h"
#include "proxyproto.h"
#include "run.h"
#include "sampler.h"
#include "seccomp.h"
#include "view.h"

/* The largest network-hosts file read (SR_NETHOSTS_MAX lines of 256). */
#define NET_HOSTS_MAX_BYTES (1024 * 1024)

/* The command: everything after "--", else the manifest's entrypoint. */
static int pick_command(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;

  run->argv = a->n_command ? a->command : run->manifest.entrypoint.v;
  if (!run->argv || !run->argv[0])
    return sr_error_set(err, SR_EXIT_FAILED, 0, "usage",
                        "nothing to run: give -- COMMAND or set metadata "
                        "sandbox.entrypoint in SKILL.md");
  return 0;
}

static int push_env(struct sr_run *run, const char *name, const char *value) {
  size_t n = strlen(name);
  char **v;
  char *s;

  if (asprintf(&s, "%s=%s", name, value) < 0)
    return -ENOMEM;
  /* A later setting of the same name replaces the earlier one. */
  for (size_t i = 0; i < run->n_envp; i++)
    if (!strncmp(run->envp[i], name, n) && run->envp[i][n] == '=') {
      free(run->envp[i]);
      run->envp[i] = s;
      return 0;
    }
  v = realloc(run->envp, (run->n_envp + 2) * sizeof(char *));
  if (!v) {
    free(s);
    return -ENOMEM;
  }
  v[run->n_envp++] = s;
  v[run->n_envp] = NULL;
  run->envp = v;
  return 0;
}

/* The skill's environment, from scratch: nothing of the caller's leaks in
 * unless the profile keeps it by name. */
static int build_env(struct sr_run *run, struct sr_error *err) {
  const struct sr_policy *p = &run->policy;
  int r = 0;

  r |= push_env(run, "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  r |= push_env(run, "HOME", SR_VIEW_SCRATCH);
  r |= push_env(run, "LANG", "C.UTF-8");
  r |= push_env(run, "TMPDIR", "/tmp");
  r |= push_env(run, "SKILLRUN_EXECUTION_ID", run->execution_id);
  r |= push_env(run, "SKILLRUN_TENANT_ID", run->tenant);
  r |= push_env(run, "SKILLRUN_SKILL", run->manifest.name);
  /* Where things are (skillrun(1), THE SANDBOX): the bundle is also the
   * working directory, read-only; outputs are harvested. */
  r |= push_env(run, "SKILLRUN_BUNDLE", p->skill_dir);
  r |= push_env(run, "SKILLRUN_INPUTS", SR_VIEW_INPUTS);
  r |= push_env(run, "SKILLRUN_OUTPUTS", SR_VIEW_OUTPUTS);
  r |= push_env(run, "SKILLRUN_SCRATCH", SR_VIEW_SCRATCH);
  for (size_t i = 0; i < p->env_keep.n; i++) {
    const char *v = getenv(p->env_keep.v[i]);
    if (v)
      r |= push_env(run, p->env_keep.v[i], v);
  }
  for (size_t i = 0; i < p->n_setenv; i++)
    r |= push_env(run, p->setenv[i].name, p->setenv[i].value);
  /* Last: in an allowlist run the proxy is the only way out, whatever the
   * profile set or kept. */
  if (p->network == SR_NET_ALLOWLIST) {
    _cleanup_strv_ struct sr_strv pv = {0};

    r |= sr_proxy_env(SR_PROXY_PORT, &pv);
    for (size_t i = 0; r == 0 && i < pv.n; i++) {
      char *eq = strchr(pv.v[i], '=');
      if (!eq)
        continue;
      *eq = '\0';
      r |= push_env(run, pv.v[i], eq + 1);
    }
  }
  return r ? sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "environment")
           : 0;
}

/*
 * skillrun.conf's network-hosts, which the allowlist run's proxy resolves
 * names with: root's alone, like the conf that names it (a file another
 * user could write would route the skill's connections), opened without
 * following a symbolic link and checked on the opened fd.
 */
static int load_net_hosts(struct sr_run *run, struct sr_error *err) {
  const char *path = run->policy.net_hosts;
  _cleanup_close_ int fd = -1, dir = -1;
  _cleanup_free_ char *buf = NULL;
  struct sr_dir_fault fault;
  struct stat st;
  size_t len = 0, line = 0;
  char why[PATH_MAX * 2 + 128];
  int r;

  if (!path || run->policy.network != SR_NET_ALLOWLIST)
    return 0;
  fd = sr_open_regular_in(AT_FDCWD, path, NET_HOSTS_MAX_BYTES, &st, &dir);
  if (fd < 0 && fd != -SR_ENOTREG)
    return sr_error_set(
        err, SR_EXIT_FAILED, sr_open_regular_errno(fd), "config_invalid",
        "network-hosts %s %s", path,
        sr_open_regular_why(fd, &st, NET_HOSTS_MAX_BYTES, why, sizeof(why)));
  if (fd < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "network-hosts %s: must be a regular file owned by "
                        "root and not writable by group or others",
                        path);
  /* Nor may anyone else write a directory above it, who could rename
   * another of root's files over its name. */
  r = sr_check_dir_chain(dir, 0, NULL, 0, &fault);
  if (r < 0)
    return r == -EPERM
               ? sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                              "network-hosts %s %s", path,
                              sr_dir_fault_why(&fault, why, sizeof(why)))
               : sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                              "network-hosts %s: cannot check the "
                              "directories above it",
                              path);
  r = sr_read_fd(fd, NET_HOSTS_MAX_BYTES, &buf, &len);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                        "network-hosts %s", path);
  r = sr_nethosts_parse(buf, len, &run->net_hosts, &line, why, sizeof(why));
  if (r == -ENOMEM)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "network-hosts");
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid", "%s:%zu: %s",
                        path, line, why);
  run->have_net_hosts = true;
  return 0;
}

/*
 * Landlock under the mounts (landlock.h), where the kernel has it: the
 * skill's process applies the ruleset of this ABI.  `strict` requires it
 * with scoping (ABI 6): a run without is refused before the launch.
 */
static int decide_landlock(struct sr_run *run, struct sr_error *err) {
  const int abi = sr_landlock_abi();

  run->enf.landlock_abi = abi;
  if (run->policy.strict && abi < SR_LANDLOCK_ABI_SCOPE)
    return sr_error_layer(err, "landlock", 0,
                          "strict requires Landlock with scoping of abstract "
                          "unix sockets and signals (ABI %d, Linux 6.12); "
                          "this kernel offers ABI %d",
                          SR_LANDLOCK_ABI_SCOPE, abi);
  return 0;
}

/*
 * What keeps the network mode, and the limits only the egress proxy
 * enforces.  Host mode is on the record in every run, with what the
 * kernel can still close: the host's abstract unix sockets, by Landlock
 * scoping (ABI 6), which the skill's process applies.
 */
static int decide_network(struct sr_run *run, struct sr_error *err) {
  const struct sr_policy *p = &run->policy;
  struct sr_enforcement *enf = &run->enf;
  const bool proxy = p->network == SR_NET_ALLOWLIST;
  char msg[512];
  int abi;

  enf->by[SR_LIM_NET_CONNECTIONS] = proxy ? SR_ENF_PROXY : SR_ENF_NONE;
  enf->by[SR_LIM_NET_EGRESS] = proxy ? SR_ENF_PROXY : SR_ENF_NONE;
  if (p->network == SR_NET_DENY) {
    enf->network = SR_NETENF_NETNS;
    return 0;
  }
  if (proxy) {
    enf->network = SR_NETENF_PROXY;
    return 0;
  }
  abi = enf->landlock_abi;
  enf->network =
      abi >= SR_LANDLOCK_ABI_SCOPE ? SR_NETENF_LANDLOCK_SCOPE : SR_NETENF_NONE;
  if (enf->network == SR_NETENF_LANDLOCK_SCOPE)
    snprintf(msg, sizeof(msg),
             "network host: the sandbox shares the host's network "
             "namespace and reaches whatever the host reaches, its own "
             "127.0.0.1 and its local network included; the host's "
             "abstract unix sockets are closed (Landlock scoping)");
  else
    snprintf(msg, sizeof(msg),
             "network host: the sandbox shares the host's network "
             "namespace and reaches whatever the host reaches, its own "
             "127.0.0.1, its local network and its abstract unix sockets "
             "included (this kernel's Landlock ABI is %d: scoping needs %d)",
             abi, SR_LANDLOCK_ABI_SCOPE);
  return sr_audit_emit(
      &run->audit, "warning",
      json_pack("{s:s, s:s}", "source", "network", "message", msg), err);
}

/* The caller's soft process limit raised to its hard one (see
 * acquire_host). */
static int raise_soft_nproc(struct sr_error *err) {
  struct rlimit rl;

  if (getrlimit(RLIMIT_NPROC, &rl) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "resources",
                        "getrlimit(RLIMIT_NPROC)");
  if (rl.rlim_cur == rl.rlim_max)
    return 0;
  rl.rlim_cur = rl.rlim_max;
  if (setrlimit(RLIMIT_NPROC, &rl) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "resources",
                        "setrlimit(RLIMIT_NPROC)");
  return 0;
}

/* A cgroup above the run's v2 leaf with a lower memory.max or pids.max
 * (a delegated subtree's, a user slice's or a unit's MemoryMax= or
 * TasksMax=, --cgroup-parent's) holds the run below its own limit, and
 * shares it with whatever else runs below it: the leaf got that limit
 * (cgroup.c), the record gets it too, with a warning naming the cgroup,
 * as for a caller's hard rlimit. */
static int lower_to_outer(struct sr_run *run, enum sr_limit_id id,
                          const char *file, uint64_t outer, const char *at,
                          struct sr_error *err) {
  const struct sr_limit_def *d = &sr_limit_defs[id];
  struct sr_limit *l = &run->policy.limits[id];
  char was[32], now[32], msg[512];

  if (!at || outer >= l->value)
    return 0;
  sr_limit_format(d->kind, l->value, was, sizeof(was));
  sr_limit_format(d->kind, outer, now, sizeof(now));
  snprintf(msg, sizeof(msg),
           "%s %s lowered to %s: the %s of %s, which holds the run's "
           "cgroup (whatever else runs below it shares that limit)",
           d->name, was, now, file, at);
  l->value = outer;
  return sr_audit_emit(
      &run->audit, "warning",
      json_pack("{s:s, s:o}", "source", "policy", "message", sr_json_text(msg)),
      err);
}

static int lower_to_outer_limits(struct sr_run *run, struct sr_error *err) {
  const struct sr_cgroup *cg = &run->host.cgroup;
  int r;

  if (!cg->active || cg->version != SR_CGV_2)
    return 0;
  r = lower_to_outer(run, SR_LIM_MEMORY, "memory.max", cg->outer_memory,
                     cg->outer_memory_at, err);
  if (r >= 0)
    r = lower_to_outer(run, SR_LIM_PIDS, "pids.max", cg->outer_pids,
                       cg->outer_pids_at, err);
  return r;
}

/* The host ids and the cgroup leaf, and from them what enforces each
 * limit; a fallback is named in a warning.  Without a cgroup the
 * supervisor samples the tree, and the memory it cannot sample is refused
 * (sampler.h). */
static int acquire_host(struct sr_run *run, struct sr_error *err) {
  _cleanup_free_ char *why = NULL;
  char msg[256];
  int r;

  r = sr_host_acquire(&run->host, &run->policy, run->args->cgroup_parent,
                      run->ws.root, run->tenant, run->execution_id, &run->enf,
                      &why, err);
  if (r >= 0 && run->enf.by[SR_LIM_MEMORY] == SR_ENF_SUPERVISOR)
    r = sr_seccomp_refuse_unsampled(run->seccomp, err);
  if (r >= 0)
    r = lower_to_outer_limits(run, err);
  /* pids is already within skillrun's own hard RLIMIT_NPROC (run.c,
   * clamp_to_own_rlimits). */
  /* The sandbox's user namespace keeps its maker's soft limit, taken when
   * it is made, as a limit on its user's tasks that no setrlimit(2) inside
   * it lifts: a caller's soft limit below pids (ulimit -Su 8) would hold
   * the skill to it, whatever the record says (with a cgroup too, for an
   * ordinary user's delegated one).  Raised to the hard one, as the
   * open-file and stack limits are. */
  if (r >= 0)
    r = raise_soft_nproc(err);
  if (r < 0 || !why)
    return r;
  snprintf(msg, sizeof(msg),
           "no cgroup: memory and CPU time of the whole run are enforced by "
           "the supervisor sampling its processes every %d ms (not a kernel "
           "limit), pids by RLIMIT_NPROC; memfd_create, shmget, semget, "
           "msgget and shared anonymous mmap are refused",
           SR_SAMPLER_INTERVAL_MS);
  return sr_audit_emit(&run->audit, "warning",
                       json_pack("{s:s, s:s}", "message", msg, "reason", why),
                       err);
}

/* policy_resolved's sampler: how often the supervisor samples the tree,
 * what it refuses, whether the kernel counts the tree's CPU time for it;
 * null when a cgroup holds the limits. */
static json_t *sampler_json(const struct sr_run *run) {
  json_t *calls;

  if (run->enf.by[SR_LIM_MEMORY] != SR_ENF_SUPERVISOR)
    return json_null();
  calls = json_array();
  for (size_t i = 0; calls && sr_seccomp_unsampled_call(i); i++)
    json_array_append_new(calls, json_string(sr_seccomp_unsampled_call(i)));
  return json_pack("{s:i, s:i, s:o, s:b}", "interval_ms",
                   SR_SAMPLER_INTERVAL_MS, "min_interval_ms", SR_SAMPLER_MIN_MS,
                   "refused_syscalls", calls ? calls : json_array(),
                   "cpu_counter", run->sup.cpu_counter_fd >= 0);
}

/* Every leaf of the run's cgroup (one for v2, one per hierarchy for v1). */
static json_t *leaves_json(const struct sr_cgroup *cg) {
  json_t *a = json_array();

  if (!a || !cg->active)
    return a;
  if (cg->version == SR_CGV_2)
    json_array_append_new(a, json_string(cg->leaf_path));
  else
    for (int c = 0; c < SR__CG1_MAX; c++)
      json_array_append_new(a, json_string(cg->v1_path[c]));
  return a;
}

/* policy_resolved's systemd_scope: the transient scope the caller's
 * systemd user manager gave the run (its unit, its cgroup, the
 * controllers it delegated), or why there is none. */
static json_t *scope_json(const struct sr_cgroup_scope *sc) {
  json_t *ctl = json_null();

  if (sc->controllers) {
    _cleanup_free_ char *words = strdup(sc->controllers);
    char *save = NULL;

    ctl = json_array();
    if (!words || !ctl) {
      json_decref(ctl);
      return NULL;
    }
    for (char *w = strtok_r(words, " ", &save); w;
         w = strtok_r(NULL, " ", &save))
      json_array_append_new(ctl, json_string(w));
  }
  return json_pack("{s:s?, s:s?, s:o, s:s?}", "unit", sc->unit, "path",
                   sc->path, "controllers", ctl, "reason", sc->why);
}

/* The policy as JSON must be complete: when it cannot be built, json_pack
 * fails on the NULL and sr_audit_emit refuses the event (fail closed). */
/* A NULL-terminated list of names as a JSON array. */
static json_t *names_json(const char *const *names) {
  json_t *a = json_array();

  for (size_t i = 0; a && names[i]; i++)
    if (json_array_append_new(a, json_string(names[i])) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

/* The Landlock layer as the skill's process applies it (landlock.h): the
 * kernel's ABI (0: none, and nothing else), the rights it handles, the
 * scopes, and each path with what may be written below it. */
static json_t *landlock_json(int abi) {
  const uint64_t handled = sr_landlock_handled_fs(abi);
  struct sr_landlock_rule rules[SR_LANDLOCK_RULES_MAX];
  const char *names[32];
  json_t *o, *writable;
  size_t n;

  if (abi < 1)
    return json_pack("{s:i, s:b}", "abi", 0, "applied", false);
  n = sr_landlock_rules(rules, SR_ARRAY_SIZE(rules));
  writable = json_array();
  for (size_t i = 0; writable && i < n; i++) {
    sr_landlock_fs_names(rules[i].access & handled, names,
                         SR_ARRAY_SIZE(names));
    if (json_array_append_new(writable,
                              json_pack("{s:s, s:o}", "path", rules[i].path,
                                        "access", names_json(names))) < 0) {
      json_decref(writable);
      writable = NULL;
    }
  }
  sr_landlock_fs_names(handled, names, SR_ARRAY_SIZE(names));
  o = json_pack("{s:i, s:b, s:o, s:o}", "abi", abi, "applied", true, "handled",
                names_json(names), "writable", writable);
  sr_landlock_scope_names(sr_landlock_scoped(abi), names, SR_ARRAY_SIZE(names));
  if (o && json_object_set_new(o, "scoped", names_json(names)) < 0) {
    json_decref(o);
    o = NULL;
  }
  return o;
}

static int emit_policy_resolved(struct sr_run *run, struct sr_error *err) {
  json_t *pj = sr_policy_to_json(&run->policy, &run->enf);

  return sr_audit_emit(
      &run->audit, "policy_resolved",
      json_pack(
          "{s:o, s:{s:s, s:s, s:i, s:b}, s:o, s:o, s:o, s:o, s:o, "
          "s:{s:i, s:i}}",
          "policy", pj ? pj : json_null(), "seccomp", "policy",
          sr_seccomp_kind(run->seccomp), "digest",
          sr_seccomp_digest(run->seccomp), "instructions",
          (int)sr_seccomp_insns(run->seccomp), "denials_reported",
          sr_seccomp_reports(run->seccomp), "landlock",
          landlock_json(run->enf.landlock_abi), "cgroup",
          run->host.cgroup.active ? json_string(run->host.cgroup.leaf_path)
                                  : json_null(),
          "cgroup_leaves", leaves_json(&run->host.cgroup), "systemd_scope",
          scope_json(&run->host.cgroup.scope), "sampler", sampler_json(run),
          "sandbox_ids", "uid", (int)run->host.uid, "gid", (int)run->host.gid),
      err);
}

/* sr_launch.while_mounting: policy_resolved, once. */
static int record_policy(void *ctx, struct sr_error *err) {
  struct sr_run *run = ctx;

  run->policy_pending = false;
  return emit_policy_resolved(run, err);
}

/* sr_launch.while_running: the other runs' stale cgroup leaves. */
static void collect_stale(void *ctx) {
  struct sr_run *run = ctx;

  sr_host_gc(&run->host);
}

/* The sandbox's metadata.json, beside the staging copy. */
static int write_sandbox_metadata(struct sr_run *run, struct sr_error *err) {
  json_t *meta = sr_run_metadata_json(run);
  int r;

  if (!meta)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "metadata", "metadata");
  r = sr_workspace_write_sandbox_metadata(&run->ws, meta, err);
  json_decref(meta);
  return r;
}

/* The run directory's metadata.json is the sandbox's copy with its result
 * (and the artifact list, which the harvest adds room for): audit.jsonl
 * keeps room for it beside the final events' and gives it back after the
 * last one (sr_audit_release_room), so that a full file system still
 * takes it.  A run that cannot have that room does not start. */
static int keep_metadata_room(struct sr_run *run, struct sr_error *err) {
  struct stat st;
  int r;

  if (fstat(run->ws.metadata_fd, &st) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "metadata",
                        "cannot read back the sandbox's metadata.json");
  run->artifacts.metadata_base = (uint64_t)st.st_size + SR_METADATA_RESULT_MAX;
  r = sr_audit_keep_room(&run->audit, run->artifacts.metadata_base);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "metadata",
                        "no room left for the run's metadata.json (%s)",
                        r == -EFBIG ? "the file-size limit, ulimit -f"
                                    : "its file system is full");
  return 0;
}

/* The caller's --input files, copied while hashed and checked against
 * the sizes and types the layers declare; a refused one is recorded as
 * input_rejected. */
static int stage_inputs(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  const struct sr_policy *p = &run->policy;
  const struct sr_input_rules rules = {
      .total_max = p->limits[SR_LIM_INPUTS_SIZE].value,
      .total_source = p->limits[SR_LIM_INPUTS_SIZE].source,
      .file_max = p->limits[SR_LIM_INPUTS_MAX_SIZE].value,
      .file_source = p->limits[SR_LIM_INPUTS_MAX_SIZE].source,
      .types = p->input_types,
      .n_types = p->n_input_types,
  };
  _cleanup_free_ struct sr_input *in = NULL;
  json_t *rejected = NULL;
  int r;

  if (a->n_inputs > 0 && !(in = calloc(a->n_inputs, sizeof(*in))))
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
  for (size_t i = 0; i < a->n_inputs; i++)
    in[i] = (struct sr_input){a->inputs[i].path, a->inputs[i].name};
  r = sr_workspace_stage_inputs(&run->ws, in, a->n_inputs, &rules, &run->audit,
                                &run->inputs, &rejected, err);
  if (r < 0 && rejected) {
    json_decref(run->refusal_extra);
    run->refusal_extra = rejected;
    run->refusal_event = "input_rejected";
  } else {
    json_decref(rejected);
  }
  return r;
}

int sr_stage_prepare(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  int r;

  r = pick_command(run, err);
  if (r >= 0)
    r = sr_seccomp_build(&run->policy, sr_seccomp_notify_available(),
                         &run->seccomp, err);
  if (r >= 0)
    r = stage_inputs(run, err);
  if (r >= 0)
    r = build_env(run, err);
  if (r >= 0)
    r = load_net_hosts(run, err);
  if (r >= 0)
    r = acquire_host(run, err);
  if (r >= 0)
    r = sr_workspace_give_inputs(&run->ws, run->host.uid, run->host.gid, err);
  if (r >= 0)
    r = decide_landlock(run, err);
  if (r >= 0)
    r = decide_network(run, err);
  if (r >= 0)
    r = write_sandbox_metadata(run, err);
  if (r >= 0)
    r = keep_metadata_room(run, err);
  if (r < 0)
    return r;
  run->policy_pending = true;
  run->launch = (struct sr_launch){
      .policy = &run->policy,
      .enf = &run->enf,
      .seccomp = run->seccomp,
      .cgroup = &run->host.cgroup,
      .ws = &run->ws,
      .audit = &run->audit,
      .argv = run->argv,
      .envp = run->envp,
      .host_uid = run->host.uid,
      .host_gid = run->host.gid,
      .log_passthrough = a->log_passthrough,
      .forward_stdin = a->forward_stdin,
      .net_allow = run->policy.network == SR_NET_ALLOWLIST
                       ? &run->policy.net_allow
                       : NULL,
      .net_hosts = run->have_net_hosts ? &run->net_hosts : NULL,
      .while_mounting = record_policy,
      .while_mounting_ctx = run,
      .while_running = collect_stale,
  };
  return 0;
}

int sr_stage_launch(struct sr_run *run, struct sr_error *err) {
  return sr_supervisor_launch(&run->sup, &run->launch, err);
}

int sr_stage_record_policy(struct sr_run *run, int r, struct sr_error *err) {
  struct sr_error mine = {0};
  int q;

  if (!run->policy_pending)
    return r;
  q = record_policy(run, r < 0 ? &mine : err);
  return r < 0 ? r : q;
}

int sr_stage_supervise(struct sr_run *run, struct sr_error *err) {
  return sr_supervisor_run(&run->sup, err);
}
