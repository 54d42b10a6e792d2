/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The run pipeline (doc/architecture.md): one function of named stages
 * over one struct sr_run.  This file holds the pipeline, --explain, and
 * the stages that only move data between the layers (start, configure,
 * collect, report); admit and verify are in run-verify.c, prepare in
 * run-prepare.c, launch and supervise in supervisor.c.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "caps.h"
#include "cmd.h"
#include "conf.h"
#include "fdutil.h"
#include "metrics.h"
#include "ns.h"
#include "paths.h"
#include "run.h"
#include "seccomp.h"
#include "util.h"

#define DEFAULT_CONF SR_SYSCONFDIR "/skillrun/skillrun.conf"

int sr_cmd_run(const struct sr_args *args) {
  struct sr_error err = {0};
  struct sr_run run;
  int r, code;

  sr_run_init(&run, args);
  /* Until the supervisor reads them from its signalfd, a cancellation
   * signal is only noted between (and in the long copies of) the stages
   * before the launch. */
  r = sr_stage_start(&run, &err);
  if (r >= 0)
    r = sr_stage_configure_platform(&run, &err);
  if (r >= 0 && (r = sr_run_check_cancel(&run, &err)) >= 0)
    r = sr_stage_admit(&run, &err);
  if (r >= 0 && (r = sr_run_check_cancel(&run, &err)) >= 0)
    r = sr_stage_verify(&run, &err);
  if (r >= 0)
    r = sr_stage_configure_skill(&run, &err);
  if (r >= 0 && (r = sr_run_check_cancel(&run, &err)) >= 0)
    r = sr_stage_prepare(&run, &err);
  if (r >= 0 && (r = sr_run_check_cancel(&run, &err)) >= 0)
    r = sr_stage_launch(&run, &err);
  r = sr_stage_record_policy(&run, r, &err);
  if (r >= 0)
    r = sr_stage_supervise(&run, &err);
  r = sr_stage_collect(&run, r, &err);
  code = sr_stage_report(&run, r, &err);
  sr_run_done(&run);
  return code;
}

/* The same stages up to the final policy, without an audit stream, a run
 * directory or a staging copy; then the view instead of a run. */
int sr_cmd_explain(const struct sr_args *args) {
  struct sr_error err = {0};
  struct sr_run run;
  int r, code;

  sr_run_init(&run, args);
  run.explain = true;
  r = sr_stage_start(&run, &err);
  if (r >= 0)
    r = sr_stage_configure_platform(&run, &err);
  if (r >= 0)
    r = sr_stage_verify(&run, &err);
  if (r >= 0)
    r = sr_stage_configure_skill(&run, &err);
  code = r >= 0 ? sr_stage_explain(&run) : sr_stage_report(&run, r, &err);
  sr_run_done(&run);
  return code;
}

void sr_run_init(struct sr_run *run, const struct sr_args *args) {
  memset(run, 0, sizeof(*run));
  run->args = args;
  run->tier = SR_TIER_UNSIGNED;
  sr_workspace_init(&run->ws);
  sr_host_init(&run->host);
  sr_supervisor_init(&run->sup);
}

void sr_run_done(struct sr_run *run) {
  sr_supervisor_done(&run->sup);
  sr_host_done(&run->host);
  sr_workspace_done(&run->ws);
  if (run->audit_open)
    sr_audit_done(&run->audit);
  if (run->policy_init)
    sr_policy_done(&run->policy);
  if (run->have_manifest)
    sr_manifest_done(&run->manifest);
  sr_keyring_done(&run->keyring);
  sr_trust_key_free(run->audit_key);
  sr_bundle_done(&run->bundle);
  sr_seccomp_free(run->seccomp);
  sr_nethosts_done(&run->net_hosts);
  json_decref(run->inputs);
  json_decref(run->refusal_extra);
  sr_artifacts_done(&run->artifacts);
  for (size_t i = 0; i < run->n_envp; i++)
    free(run->envp[i]);
  free(run->envp);
  free(run->bundle_path);
  free(run->would_refuse);
}

/* ------------------------------------------------------------ start */

static int open_audit(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  int fd = STDOUT_FILENO;
  bool own = false;

  if (a->audit_fd >= 0) {
    fd = a->audit_fd;
    if (fcntl(fd, F_GETFD) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "usage",
                          "--audit-fd %d is not an open file descriptor", fd);
    (void)sr_fd_cloexec(fd, true); /* the sandbox must never inherit it */
  } else if (a->audit_file) {
    struct sr_foreign_link fl;
    char why[PATH_MAX + 160];

    /* Not through another user's link: it could have a file made in any
     * directory of the caller's (root's /etc/sudoers.d, say).  0600, as
     * the run directory's audit.jsonl: the record names the labels,
     * inputs and outputs, which the caller's group (a shared "users")
     * must not read. */
    fd = sr_open_path(AT_FDCWD, a->audit_file, O_WRONLY | O_CREAT | O_EXCL,
                      0600, &fl);
    if (fd == -SR_EFOREIGNLINK)
      return sr_error_set(err, SR_EXIT_FAILED, 0, "usage",
                          "cannot create audit file %s: %s", a->audit_file,
                          sr_foreign_link_why(&fl, why, sizeof(why)));
    if (fd < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -fd, "usage",
                          "cannot create audit file %s", a->audit_file);
    own = true;
  }
  if (sr_audit_init(&run->audit, fd, own,
                    a->execution_id_invalid ? NULL : run->execution_id,
                    run->tenant) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "audit", "audit");
  run->audit_open = true;
  return 0;
}

/* The descriptors a run holds at once (the run directory's, the staging
 * copy's walk, pipes, sockets, timers), with room to spare. */
#define RUN_FDS 128
/* The stack the supervisor, and init and the skill's process, which grow
 * on the stack they are forked with, use at most: some 60 KiB (the mount
 * table's 16 KiB buffer under the deepest calls of init's mount build,
 * and for a longer table sr_read_file_at's own 16 KiB beside it), four
 * times over. */
#define RUN_STACK (256 * 1024)

/* "N<suffix>" for a limit in the message, or "unlimited". */
static const char *limit_text(rlim_t v, rlim_t unit, const char *suffix,
                              char buf[32]) {
  if (v == RLIM_INFINITY)
    return "unlimited";
  snprintf(buf, 32, "%llu%s", (unsigned long long)(v / unit), suffix);
  return buf;
}

/* A caller whose limit of resource is below what a run needs gets that
 * said plainly, not an odd failure (or SIGSEGV) somewhere later; a soft
 * limit below it is raised as far as the hard one allows (the skill's
 * process sets its own open-file limit, and inherits the stack's).  unit
 * divides the figures in the message, suffix follows each of them. */
static int ensure_rlimit(int resource, rlim_t need, rlim_t unit,
                         const char *suffix, const char *what,
                         const char *limit, const char *ulimit_opt,
                         struct sr_error *err) {
  struct rlimit rl;
  char cur[32], max[32];
  int e = 0;

  if (getrlimit(resource, &rl) < 0 || rl.rlim_cur >= need)
    return 0;
  if (rl.rlim_max >= need) {
    struct rlimit raised = {.rlim_cur = need, .rlim_max = rl.rlim_max};
    if (setrlimit(resource, &raised) == 0)
      return 0;
    e = errno;
  }
  return sr_error_set(err, SR_EXIT_FAILED, e, "resources",
                      "a run needs %llu%s %s; the %s is %s (ulimit -%s; "
                      "hard limit %s)",
                      (unsigned long long)(need / unit), suffix, what, limit,
                      limit_text(rl.rlim_cur, unit, suffix, cur), ulimit_opt,
                      limit_text(rl.rlim_max, unit, suffix, max));
}

static int fd_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;

  return (x > y) - (x < y);
}

/* The slots below the open-file limit that the descriptors open when the
 * run starts take, but stdin, stdout and stderr: those the caller left
 * open (an orchestrator's pipes, a shell's redirections, --audit-fd) keep
 * their slots for the whole run, so the limit must leave RUN_FDS besides
 * them.  One numbered at or above that limit takes none (a descriptor's
 * number is all the limit bounds: new ones take the lowest free).  0 when
 * /proc/self/fd cannot be read (the check then counts none, as it did). */
static rlim_t inherited_fds(void) {
  _cleanup_close_ int fd =
      open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  _cleanup_free_ struct sr_dir *d = NULL;
  _cleanup_free_ int *fds = NULL;
  size_t n = 0, cap = 0;
  const char *name;
  unsigned char type;
  rlim_t need = RUN_FDS;

  if (fd < 0 || !(d = malloc(sizeof(*d))))
    return 0;
  sr_dir_init(d, fd);
  while (sr_dir_next(d, &name, &type) > 0) {
    uint64_t v;

    if (sr_parse_uint(name, INT_MAX, &v) < 0 || v <= STDERR_FILENO ||
        (int)v == fd)
      continue;
    if (sr_grow_array((void **)&fds, &cap, n, sizeof(*fds), 16) < 0)
      return 0;
    fds[n++] = (int)v;
  }
  /* In ascending order, each one below the limit found so far moves it
   * up by one. */
  if (n)
    qsort(fds, n, sizeof(*fds), fd_cmp);
  for (size_t i = 0; i < n && (rlim_t)fds[i] < need; i++)
    need++;
  return need - RUN_FDS;
}

static int check_resources(struct sr_error *err) {
  rlim_t open_fds = inherited_fds();
  char what[96];
  int r;

  if (open_fds)
    snprintf(what, sizeof(what),
             "file descriptors (%d for the run, %llu already open)", RUN_FDS,
             (unsigned long long)open_fds);
  r = ensure_rlimit(RLIMIT_NOFILE, RUN_FDS + open_fds, 1, "",
                    open_fds ? what : "file descriptors", "open-file limit",
                    "n", err);

  if (r >= 0)
    r = ensure_rlimit(RLIMIT_STACK, RUN_STACK, 1024, " KiB", "of stack",
                      "stack limit", "s", err);
  return r;
}

/*
 * The sandbox cannot raise a hard limit it inherits (that takes
 * CAP_SYS_RESOURCE in the initial user namespace): a policy value whose
 * rlimit would be above skillrun's own hard limit is lowered to fit, with
 * a warning in *msg (returns 1), instead of failing every run in the
 * sandbox's setrlimit.  The sandbox sets the rlimit to the value plus
 * `extra` (the CPU backstop is one second above the budget); `opt` is the
 * ulimit option that shows the hard limit.  A hard limit that leaves less
 * than the limit's minimum is an error (reason resources).
 */
int sr_run_clamp_to_hard(struct sr_policy *p, enum sr_limit_id id, int resource,
                         uint64_t extra, const char *opt, char *msg, size_t len,
                         struct sr_error *err) {
  const struct sr_limit_def *d = &sr_limit_defs[id];
  struct sr_limit *l = &p->limits[id];
  char was[32], now[32];
  struct rlimit rl;

  if (getrlimit(resource, &rl) < 0 || rl.rlim_max == RLIM_INFINITY ||
      rl.rlim_max >= l->value + extra)
    return 0;
  if (rl.rlim_max < d->min + extra) {
    sr_limit_format(d->kind, d->min + extra, now, sizeof(now));
    return sr_error_set(err, SR_EXIT_FAILED, 0, "resources",
                        "a run needs a hard limit of at least %s for %s; "
                        "skillrun's own is %llu (ulimit -H%s)",
                        now, d->name, (unsigned long long)rl.rlim_max, opt);
  }
  sr_limit_format(d->kind, l->value, was, sizeof(was));
  sr_limit_format(d->kind, rl.rlim_max - extra, now, sizeof(now));
  snprintf(msg, len,
           "%s %s lowered to %s: %sskillrun's own hard limit (ulimit -H%s, "
           "%llu), which the sandbox cannot raise",
           d->name, was, now, extra ? "one below " : "", opt,
           (unsigned long long)rl.rlim_max);
  l->value = rl.rlim_max - extra;
  return 1;
}

/* The limits the sandbox holds to rlimits whatever holds the run: nofile,
 * the CPU budget's per-process backstop (child.c), under `memory-rlimit
 * yes` RLIMIT_AS, and pids: the skill's processes are held to the
 * caller's RLIMIT_NPROC (raised to its hard limit, run-prepare.c) even
 * where a cgroup holds pids (the sandbox sets it only without one), as
 * they run as an unprivileged user that the limit binds even when the
 * caller is root.  pids is kept one below it: pids.max, which lets the
 * tree reach pids, then refuses the fork past it before the caller's
 * limit does, and the run ends pids_exceeded exactly when a fork was
 * refused (at the caller's limit itself, a tree that merely reached it
 * could not be told from one whose fork the kernel had refused).
 * Clamped before the cgroup is made, so that its pids.max is the
 * record's. */
static int clamp_to_own_rlimits(struct sr_policy *p, struct sr_error *err) {
  static const struct {
    enum sr_limit_id id;
    int resource;
    uint64_t extra;
    const char *opt;
  } rl[] = {
      {SR_LIM_NOFILE, RLIMIT_NOFILE, 0, "n"},
      {SR_LIM_CPU_SECONDS, RLIMIT_CPU, 1, "t"},
      {SR_LIM_MEMORY, RLIMIT_AS, 0, "v"},
      {SR_LIM_PIDS, RLIMIT_NPROC, 1, "u"},
  };
  char msg[256];

  for (size_t i = 0; i < SR_ARRAY_SIZE(rl); i++) {
    int r;

    if (rl[i].resource == RLIMIT_AS && !p->memory_rlimit)
      continue;
    r = sr_run_clamp_to_hard(p, rl[i].id, rl[i].resource, rl[i].extra,
                             rl[i].opt, msg, sizeof(msg), err);
    if (r > 0 && sr_strv_push(&p->warnings, msg) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "policy", "policy");
    if (r < 0)
      return r;
  }
  return 0;
}

int sr_stage_start(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  int r;

  /* An invalid id is never used, not even on the record: the stream
   * names it null and the run is refused (skillrun(1), AUDIT EVENTS). */
  run->tenant = a->tenant_invalid ? NULL : a->tenant ? a->tenant : "default";
  if (a->execution_id && !a->execution_id_invalid)
    snprintf(run->execution_id, sizeof(run->execution_id), "%s",
             a->execution_id);
  else if (!a->execution_id && (r = sr_random_uuid(run->execution_id)) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "uuid",
                        "cannot make an execution id");
  run->start_ms = sr_now_mono_ms();
  sr_now_rfc3339(run->started_at);
  /* Before anything is opened: a closed fd 0 would be the next file
   * opened, and --stdin would hand that to the skill. */
  if (a->forward_stdin && !run->explain && fcntl(STDIN_FILENO, F_GETFD) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "usage",
                        "--stdin: standard input is not open");
  if (!run->explain) {
    /* From here on SIGTERM, SIGINT, SIGHUP, SIGQUIT and the rest of
     * sr_cancel_set() cancel the run with its record instead of killing
     * skillrun (skillrun(1) EXIT STATUS). */
    r = sr_cancel_block();
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "internal",
                          "cannot block the cancellation signals");
    r = open_audit(run, err);
    if (r < 0)
      return r;
    /* A person watching gets the warnings too, one line each. */
    if (a->verbose || isatty(STDERR_FILENO))
      sr_audit_echo_warnings(&run->audit, STDERR_FILENO);
  }
  if (a->tenant_invalid)
    return sr_cli_id_refusal("tenant", a->tenant, err);
  if (a->execution_id_invalid)
    return sr_cli_id_refusal("execution", a->execution_id, err);
  /* execution_started waits for the run directory (admit). */
  return run->explain ? 0 : check_resources(err);
}

int sr_run_emit_started(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  int r;

  if (run->started)
    return 0;
  run->started = true;
  r = sr_audit_emit(
      &run->audit, "execution_started",
      json_pack(
          "{s:s, s:o, s:i, s:i, s:o, s:o}", "skillrun_version", PACKAGE_VERSION,
          "bundle", sr_json_string_lossy(a->bundle, strlen(a->bundle)),
          "caller_uid", (int)getuid(), "pid", (int)getpid(), "run_dir",
          run->ws.run_path
              ? sr_json_string_lossy(run->ws.run_path, strlen(run->ws.run_path))
              : json_null(),
          /* The caller's --label pairs, as given (validated by the parser). */
          "labels", sr_run_labels_json(run)),
      err);
  return r;
}

int sr_run_check_cancel(struct sr_run *run, struct sr_error *err) {
  int sig = sr_cancel_pending();

  if (sig == 0)
    return 0;
  run->cancel_sig = sig;
  return sr_error_set(err, 128 + sig, ECANCELED, "cancelled",
                      "cancelled by signal %d (%s) before the skill started",
                      sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
}

/* ------------------------------------------------------------ configure */

int sr_run_emit_warnings(struct sr_run *run, const struct sr_strv *w,
                         const char *source, struct sr_error *err) {
  for (size_t i = 0; i < w->n; i++) {
    int r = sr_audit_emit(&run->audit, "warning",
                          json_pack("{s:s, s:o}", "source", source, "message",
                                    sr_json_text(w->v[i])),
                          err);
    if (r < 0)
      return r;
  }
  return 0;
}

/* A file the caller named relative to its working directory (--conf
 * rel.conf, -p ./x.profile), made absolute for the record, which is read
 * elsewhere and later.  A profile's value is a path only with a '/' (the
 * built-in one's is a name); one that cannot be had from a working
 * directory stays as it is. */
static char *recorded_path(char *path, bool profile) {
  _cleanup_free_ char *cwd = NULL;
  char *abs;

  if (!path || path[0] == '/' || (profile && !strchr(path, '/')) ||
      !(cwd = getcwd(NULL, 0)) || cwd[0] != '/')
    return path;
  if (asprintf(&abs, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path) < 0)
    return path;
  free(path);
  return abs;
}

int sr_stage_configure_platform(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  _cleanup_free_ char *resolved = NULL;
  struct sr_conf conf = {0}, prof = {0};
  int r;

  r = sr_policy_init(&run->policy);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "policy", "policy");
  run->policy_init = true;
  /* An unsafe or (when named) missing skillrun.conf stops the run. */
  r = sr_conf_load_platform(a->conf ? a->conf : DEFAULT_CONF, a->conf != NULL,
                            &conf, err);
  if (r >= 0)
    r = sr_policy_apply_conf(&run->policy, &conf, err);
  /* Root mode needs the uid pool's ids (sr_root_mode), and so does the
   * check that root has what its id maps need: asked before them, root
   * of a user namespace that maps the pool was not in root mode yet. */
  if (r >= 0)
    sr_root_mode_ids(run->policy.uid_pool_base, run->policy.uid_pool_size);
  /* Loaded as soon as skillrun.conf is, so that even a refusal's
   * execution_completed is anchored (a profile that cannot be used, or
   * root without CAP_SETUID, say); from here on emit_completed does not
   * look for it again. */
  run->audit_key_tried = true;
  if (r >= 0 && !run->explain && run->policy.audit_key)
    r = sr_trust_key_load_platform(run->policy.audit_key, true, &run->audit_key,
                                   err);
  if (r >= 0 && !run->explain)
    r = sr_caps_check_root(err);
  if (r >= 0)
    r = sr_conf_load_profile(a->profile, &prof, &resolved, err);
  if (r >= 0)
    r = sr_policy_apply_profile(&run->policy, &prof, err);
  if (r >= 0)
    r = sr_seccomp_check_names(&run->policy, err);
  if (r >= 0 && resolved && !run->policy.profile)
    run->policy.profile = TAKE_PTR(resolved);
  if (r >= 0)
    run->policy.profile = recorded_path(run->policy.profile, true);
  /* Which skillrun.conf, if any: a caller may name another with --conf,
   * and the record says so. */
  if (r >= 0 && conf.name)
    run->policy.platform = recorded_path(TAKE_PTR(conf.name), false);
  sr_conf_done(&conf);
  sr_conf_done(&prof);
  return r < 0 ? r : 0;
}

/* The widest network a capability lets the run have. */
static enum sr_network_mode capability_network(const struct sr_capability *c) {
  switch (c->network) {
  case SR_CAP_NET_DENY:
    return SR_NET_DENY;
  case SR_CAP_NET_ALLOWLIST:
    return SR_NET_ALLOWLIST;
  case SR_CAP_NET_ALLOW:
    break;
  }
  return SR_NET_HOST;
}

int sr_stage_configure_skill(struct sr_run *run, struct sr_error *err) {
  struct sr_policy *p = &run->policy;
  int r;

  r = sr_policy_apply_manifest(p, &run->manifest, err);
  if (r >= 0)
    r = sr_policy_apply_flags(p, &run->args->layer, err);
  if (r >= 0 && run->have_capability)
    r = sr_policy_limit_network(p, capability_network(&run->capability),
                                run->capability.network_allow, err);
  if (r >= 0)
    r = clamp_to_own_rlimits(p, err);
  /* The policy is final: its notices go on the record once. */
  if (r >= 0 && !run->explain)
    r = sr_run_emit_warnings(run, &p->warnings, "policy", err);
  if (r >= 0)
    run->policy_final = true;
  /* One of SKILL.md's values refused ("SKILL.md:LINE: ..."): which
   * bundle's. */
  return sr_bundle_error_named(err, run->bundle_path, r);
}

/* ------------------------------------------------------------ explain */

/* What a run would do with this policy: the command and where (the
 * working directory in the sandbox, the run directory's root on the host),
 * and its standard input. */
static json_t *explain_run_json(const struct sr_run *run) {
  const struct sr_args *a = run->args;
  char *const *argv = a->n_command ? a->command : run->manifest.entrypoint.v;
  _cleanup_free_ char *root = NULL;
  struct sr_error ignored = {0};
  json_t *cmd = argv && argv[0] ? json_array() : json_null();

  for (size_t i = 0; argv && cmd && json_is_array(cmd) && argv[i]; i++)
    json_array_append_new(cmd, sr_json_string_lossy(argv[i], strlen(argv[i])));
  if (a->workspace_root)
    root = strdup(a->workspace_root);
  else if (run->policy.workspace_root)
    root = strdup(run->policy.workspace_root);
  else
    (void)sr_workspace_default_root(&root, &ignored); /* null if none */
  return json_pack("{s:o, s:s, s:o, s:s}", "command", cmd ? cmd : json_null(),
                   "working_directory", run->policy.skill_dir, "workspace_root",
                   sr_json_text(root), "stdin",
                   a->forward_stdin ? "forwarded" : "/dev/null");
}

int sr_stage_explain(struct sr_run *run) {
  const struct sr_policy *p = &run->policy;
  json_t *j = sr_policy_to_json(p, NULL), *w;
  _cleanup_free_ char *text = NULL;
  size_t len;

  if (!j)
    return SR_EXIT_FAILED;
  json_object_set_new(j, "run", explain_run_json(run));
  json_object_set_new(j, "bundle",
                      json_pack("{s:s, s:s, s:o}", "digest", run->bundle.digest,
                                "skill", run->manifest.name, "version",
                                run->manifest.version
                                    ? json_string(run->manifest.version)
                                    : json_null()));
  json_object_set_new(json_object_get(j, "bundle"), "trust",
                      sr_run_trust_json(run));
  /* The manifest's notices, then the policy's, with the refusal a run
   * would meet where verification found it. */
  w = json_array();
  for (size_t i = 0; w && i < run->manifest.warnings.n; i++)
    json_array_append_new(w, sr_json_text(run->manifest.warnings.v[i]));
  for (size_t i = 0; w && i <= p->warnings.n; i++) {
    if (run->would_refuse && i == run->would_refuse_at)
      json_array_append_new(w, sr_json_text(run->would_refuse));
    if (i < p->warnings.n)
      json_array_append_new(w, sr_json_text(p->warnings.v[i]));
  }
  json_object_set_new(j, "warnings", w ? w : json_array());
  /* Through sr_json_dump, as every JSON text skillrun writes: a bundle's
   * text (an entrypoint, a warning quoting SKILL.md) with a C1 control or
   * a bidirectional override reaches the reviewer's terminal escaped. */
  text = sr_json_dump(j, JSON_INDENT(2) | JSON_SORT_KEYS, 1, &len);
  json_decref(j);
  if (!text)
    return SR_EXIT_FAILED;
  text[len++] = '\n';
  return fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0
             ? 0
             : SR_EXIT_FAILED;
}

/* ------------------------------------------------------------ records */

json_t *sr_run_trust_json(const struct sr_run *run) {
  bool s = run->tier != SR_TIER_UNSIGNED;
  return json_pack("{s:s, s:o, s:o}", "tier", sr_tier_name(run->tier), "key_id",
                   s ? json_string(run->statement.key_id) : json_null(),
                   "signed_at",
                   s ? json_string(run->statement.time) : json_null());
}

static json_t *limits_json(const struct sr_policy *p) {
  json_t *o = json_object();
  for (int i = 0; i < SR__LIM_MAX && o; i++)
    json_object_set_new(o, sr_limit_defs[i].name,
                        json_integer((json_int_t)p->limits[i].value));
  return o;
}

json_t *sr_run_labels_json(const struct sr_run *run) {
  json_t *o = json_object();

  for (size_t i = 0; o && i < run->args->n_labels; i++)
    json_object_set_new(o, run->args->labels[i].key,
                        json_string(run->args->labels[i].value));
  return o;
}

/* A run that stopped early knows less: what it does not know yet is null
 * (skillrun(1) METADATA). */
json_t *sr_run_metadata_json(const struct sr_run *run) {
  const struct sr_manifest *m = &run->manifest;
  const bool known = run->have_manifest;
  json_t *tools = known ? json_array() : json_null(), *meta;

  for (size_t i = 0; known && tools && i < m->allowed_tools.n; i++)
    json_array_append_new(tools, json_string(m->allowed_tools.v[i]));
  meta = json_pack(
      "{s:s, s:s, s:s, s:{s:s?, s:o, s:s?, s:o}, s:o, s:s?, s:o, s:s, s:n}",
      "schema", "skillrun.metadata/1", "execution_id", run->execution_id,
      "tenant_id", run->tenant, "skill", "name", known ? m->name : NULL,
      "version", known && m->version ? json_string(m->version) : json_null(),
      "digest", run->bundle.digest[0] ? run->bundle.digest : NULL,
      "allowed_tools", tools ? tools : json_array(), "limits",
      run->policy_final ? limits_json(&run->policy) : json_null(), "network",
      run->policy_final ? sr_network_mode_name(run->policy.network) : NULL,
      /* "o" steals: a reference of its own, or the new empty list's */
      "inputs", run->inputs ? json_incref(run->inputs) : json_array(),
      "started_at", run->started_at, "result");
  /* The tier and key that vouched for the bundle (skillrun(1)). */
  if (meta && json_object_set_new(meta, "trust",
                                  run->verified ? sr_run_trust_json(run)
                                                : json_null()) < 0) {
    json_decref(meta);
    return NULL;
  }
  /* The caller's labels: the skill sees them too (trace ids to carry on). */
  if (meta &&
      json_object_set_new(meta, "labels", sr_run_labels_json(run)) < 0) {
    json_decref(meta);
    return NULL;
  }
  return meta;
}

/* ------------------------------------------------------------ collect */

/* The limits that stopped the run that the supervisor did not record as
 * it killed for them: RLIMIT_CPU's kill, and what the cgroup counted after
 * its last tick. */
static int emit_limits(struct sr_run *run, struct sr_error *err) {
  const struct sr_policy *p = &run->policy;
  const struct sr_supervisor *s = &run->sup;
  const bool cg = run->have_cgroup_stats;
  const struct {
    bool hit;
    const char *name;
    enum sr_limit_id id;
  } hits[] = {
      {run->verdict.cpu_exceeded && !s->cpu_exceeded, "cpu",
       SR_LIM_CPU_SECONDS},
      {cg && run->cg.oom_kill > 0 && !s->memory_exceeded, "memory",
       SR_LIM_MEMORY},
      {cg && run->cg.pids_max_hit > 0 && !s->pids_exceeded, "pids",
       SR_LIM_PIDS},
  };

  for (size_t i = 0; i < SR_ARRAY_SIZE(hits); i++) {
    int r;
    if (!hits[i].hit)
      continue;
    r = sr_audit_emit(&run->audit, "limit_exceeded",
                      json_pack("{s:s, s:I}", "limit", hits[i].name,
                                "limit_value",
                                (json_int_t)p->limits[hits[i].id].value),
                      err);
    if (r < 0)
      return r;
  }
  return 0;
}

/* Verdict, figures and harvest of a run that was supervised to its end. */
static int collect_result(struct sr_run *run, struct sr_error *err) {
  struct sr_outcome o;
  int r;

  run->duration_ms = sr_now_mono_ms() - run->sup.start_ms;
  if (run->host.cgroup.active &&
      sr_cgroup_stats(&run->host.cgroup, &run->cg) >= 0)
    run->have_cgroup_stats = true;
  sr_supervisor_outcome(&run->sup, &o);
  /* A limit the cgroup counted is a limit hit, whether or not the
   * supervisor's tick saw it before the run ended. */
  o.oom_killed = run->have_cgroup_stats && run->cg.oom_kill > 0;
  o.pids_exceeded |= run->have_cgroup_stats && run->cg.pids_max_hit > 0;
  /* So is a CPU budget the cgroup counted spent: by a process the skill
   * left behind within a tick of its end, or while the supervisor was
   * stopped (its own CPU time the supervisor checked: on_skill_exited). */
  if (run->have_cgroup_stats &&
      run->enf.by[SR_LIM_CPU_SECONDS] != SR_ENF_NONE && !o.timed_out &&
      !o.memory_exceeded && !o.oom_killed && !o.pids_exceeded &&
      run->cg.cpu_usec >=
          run->policy.limits[SR_LIM_CPU_SECONDS].value * 1000000ULL)
    o.cpu_exceeded = true;
  sr_verdict_of(&o, &run->verdict);
  r = emit_limits(run, err);
  if (r >= 0)
    r = sr_audit_emit(&run->audit, "state_changed",
                      json_pack("{s:s}", "state", "collecting"), err);
  if (r >= 0)
    r = sr_workspace_harvest(&run->ws, run->sup.outputs_fd,
                             run->policy.limits[SR_LIM_OUTPUTS_SIZE].value,
                             run->policy.limits[SR_LIM_OUTPUTS_FILES].value,
                             &run->audit, &run->artifacts, err);
  run->sup.outputs_fd = safe_close(run->sup.outputs_fd);
  return r;
}

/* The whole run's figures, once init is reaped: the cgroup's, or the
 * supervisor's sampler's and init's rusage. */
static void collect_usage(struct sr_run *run) {
  if (run->sup.init.pid <= 0)
    return; /* nothing ran */
  run->have_usage = true;
  if (run->have_cgroup_stats) {
    run->cpu_usec = run->cg.cpu_usec;
    run->memory_peak = run->cg.memory_peak;
    /* pids.peak is 6.1+: else the most the supervisor's ticks saw */
    run->pids_peak = run->cg.pids_peak ? run->cg.pids_peak : run->sup.pids_seen;
  } else {
    sr_supervisor_sampled(&run->sup, &run->cpu_usec, &run->memory_peak,
                          &run->pids_peak);
  }
}

/* The run directory's metadata.json, with the result: its presence means
 * the run is over.  The audit stream has the result if this fails.
 * duration_ms: from the sandbox's creation (null if it never was). */
static void write_final_metadata(struct sr_run *run, enum sr_status status,
                                 int exit_code, json_t *duration_ms) {
  struct sr_error merr = {0};
  json_t *meta = NULL, *list;
  char finished[32];
  int r;

  if (run->ws.run_fd < 0) {
    json_decref(duration_ms);
    return;
  }
  meta = sr_run_metadata_json(run);
  if (!meta)
    json_decref(duration_ms); /* json_pack below would have taken it */
  sr_now_rfc3339(finished);
  /* Out of memory: none rather than one without its result, which would
   * say less than happened. */
  if (!meta ||
      json_object_set_new(meta, "result",
                          json_pack("{s:s, s:i, s:o, s:s, s:o}", "status",
                                    sr_status_name(status), "exit_code",
                                    exit_code, "duration_ms",
                                    duration_ms ? duration_ms : json_null(),
                                    "finished_at", finished, "artifacts",
                                    sr_artifacts_json(&run->artifacts))) < 0) {
    json_decref(meta);
    sr_log_warning("cannot write metadata.json: %s", strerror(ENOMEM));
    run->ws.metadata_lost = true; /* gc writes it from the ledger */
    return;
  }
  r = sr_workspace_write_metadata(&run->ws, meta, &merr);
  /* A full file system that could not keep room for it (no fallocate(2)),
   * or a file-size limit it is over:
   * once more without the list of artifacts (up to 256 KiB), which the
   * ledger's artifact_committed events hold in full. */
  list = json_object_get(json_object_get(meta, "result"), "artifacts");
  if (r < 0 &&
      (merr.err == ENOSPC || merr.err == EDQUOT || merr.err == EFBIG) &&
      json_array_size(json_object_get(list, "list")) > 0) {
    json_object_set_new(list, "list", json_array());
    json_object_set_new(list, "truncated", json_true());
    merr = (struct sr_error){0};
    r = sr_workspace_write_metadata(&run->ws, meta, &merr);
  }
  if (r < 0) {
    sr_log_warning("%s", merr.msg);
    run->ws.metadata_lost = true; /* gc writes it from the ledger */
  }
  json_decref(meta);
}

/* The run's cgroup leaves removed before its final records, so that one
 * that cannot be removed (a process in it that does not die, a cgroup an
 * administrator made below it) is on the record, not only left to --gc.
 * The record names the leaves still there: on v1 the busy one may be the
 * pids or cpuacct leaf, the memory one gone. */
static void release_cgroup(struct sr_run *run) {
  struct sr_cgroup *cg = &run->host.cgroup;
  struct sr_error ignored = {0};
  char paths[SR__CG1_MAX][PATH_MAX], left[SR__CG1_MAX * (PATH_MAX + 2)];
  char msg[sizeof(left) + 256];
  size_t n = 0, len = 0;
  int r;

  if (!cg->active)
    return;
  /* Copied first: sr_cgroup_release resets cg either way, so that
   * sr_host_done does not wait for a leaf that cannot go a second time. */
  for (int c = 0; c < SR__CG1_MAX; c++) {
    const char *p = cg->version == SR_CGV_1 ? cg->v1_path[c]
                    : c == 0                ? cg->leaf_path
                                            : NULL;
    if (p)
      snprintf(paths[n++], PATH_MAX, "%s", p);
  }
  r = sr_cgroup_release(cg);
  if (r >= 0)
    return;
  left[0] = '\0';
  for (size_t i = 0; i < n; i++)
    if (access(paths[i], F_OK) == 0)
      len += (size_t)snprintf(left + len, sizeof(left) - len, "%s%s",
                              len ? ", " : "", paths[i]);
  snprintf(msg, sizeof(msg),
           "the run's cgroup %s could not be removed (%s): a process that "
           "did not die, or a cgroup made below it, is left there; "
           "skillrun --gc removes it once it is empty",
           len ? left : "leaf", strerror(-r));
  (void)sr_audit_emit(&run->audit, "warning",
                      json_pack("{s:s, s:o}", "reason", "cgroup_left",
                                "message", sr_json_text(msg)),
                      &ignored);
}

int sr_stage_collect(struct sr_run *run, int r, struct sr_error *err) {
  /* A run supervised to its end has its figures even when its harvest
   * then failed or was cancelled (report_cancelled records them). */
  const bool supervised = r >= 0;

  if (r >= 0)
    r = collect_result(run, err);
  /* The staging copy goes while the sandbox's init is still tearing down
   * its mount namespace, which this need not wait for. */
  if (r >= 0)
    sr_workspace_remove_staging(&run->ws);
  /* Reaps init, then releases the leaf and the uid slot: from here on
   * nothing of the run is alive. */
  sr_supervisor_done(&run->sup);
  /* A run that failed or was cancelled: its staging copy goes before its
   * final records, which it may have left no room for (an --input or a
   * bundle copied until the workspace was full: the final events have
   * their room, metadata.json needs this one). */
  sr_workspace_remove_staging(&run->ws);
  if (supervised)
    collect_usage(run);
  release_cgroup(run);
  sr_host_done(&run->host);
  return r;
}

/* ------------------------------------------------------------ report */

/* Who measured the figures: "cgroup2", "cgroup1", or "supervisor" (its
 * sampler: peaks as sampled, CPU time exact from init's rusage). */
static const char *measured_by(const struct sr_run *run) {
  return sr_enforcer_name(run->enf.by[SR_LIM_MEMORY]) ?: "supervisor";
}

/* Whether this run's refused system calls were reported to the
 * supervisor (and so counted). */
static bool reported_denials(const struct sr_run *run) {
  return run->seccomp && sr_seccomp_reports(run->seccomp) &&
         !run->sup.seccomp_plain;
}

/* json_object_set_new(o, key, v), *ok false when it fails (v NULL: out of
 * memory). */
static void set_field(bool *ok, json_t *o, const char *key, json_t *v) {
  if (json_object_set_new(o, key, v) < 0)
    *ok = false;
}

static json_t *completed_json(const struct sr_run *run, const char *status,
                              int exit_code, bool ran) {
  const struct sr_verdict *v = &run->verdict;
  const struct sr_logpump *lp = &run->sup.logs;
  const bool cg = run->have_cgroup_stats;
  const bool u = run->have_usage;
  bool ok = true;
  json_t *f;

  f = json_pack("{s:s, s:i, s:I}", "status", status, "exit_code", exit_code,
                "duration_ms", (json_int_t)(sr_now_mono_ms() - run->start_ms));
  if (!f || !ran)
    return f;
  set_field(&ok, f, "skill_exit_code",
            v->skill_exit >= 0 ? json_integer(v->skill_exit) : json_null());
  set_field(&ok, f, "signal",
            v->signal ? json_integer(v->signal) : json_null());
  if (v->exec_errno)
    set_field(&ok, f, "exec_error",
              json_string(strerrorname_np(v->exec_errno)
                              ? strerrorname_np(v->exec_errno)
                              : "unknown"));
  set_field(&ok, f, "cpu_usec",
            u ? json_integer((json_int_t)run->cpu_usec) : json_null());
  set_field(&ok, f, "memory_peak",
            u ? json_integer((json_int_t)run->memory_peak) : json_null());
  set_field(&ok, f, "pids_peak",
            u ? json_integer((json_int_t)run->pids_peak) : json_null());
  set_field(&ok, f, "oom_kill",
            cg ? json_integer((json_int_t)run->cg.oom_kill) : json_null());
  set_field(&ok, f, "measured_by", json_string(measured_by(run)));
  set_field(&ok, f, "logs",
            json_pack("{s:{s:I, s:I}, s:{s:I, s:I}}", "stdout", "kept",
                      (json_int_t)lp->kept[0], "dropped",
                      (json_int_t)lp->dropped[0], "stderr", "kept",
                      (json_int_t)lp->kept[1], "dropped",
                      (json_int_t)lp->dropped[1]));
  set_field(&ok, f, "artifacts", sr_artifacts_json(&run->artifacts));
  if (run->args->forward_stdin)
    set_field(&ok, f, "stdin",
              json_pack("{s:I, s:s, s:b}", "bytes",
                        (json_int_t)run->sup.stdin_pump.bytes, "sha256",
                        run->sup.stdin_sha256, "complete",
                        run->sup.stdin_complete));
  /* Every call the seccomp filter refused (syscall_denied itemises them);
   * null when they were not reported. */
  set_field(&ok, f, "syscalls_denied",
            reported_denials(run)
                ? json_integer((json_int_t)run->sup.denials.total)
                : json_null());
  /* A field that could not be made (out of memory) is not left out: a
   * line without it says less than happened, and the schema requires it.
   * None, and emit_completed builds the line again. */
  if (!ok) {
    json_decref(f);
    return NULL;
  }
  return f;
}

static void emit_completed(struct sr_run *run, const char *status,
                           int exit_code, bool ran) {
  /* A run stopped before configure_platform (an invalid id, a resource
   * limit of the caller's): its execution_completed is anchored as any
   * other, when skillrun.conf is sound and its audit-key loads.  Without
   * it an untouched ledger read as tampered with --audit-key. */
  if (!run->audit_key_tried && !run->explain) {
    struct sr_error ignored = {0};

    run->audit_key_tried = true;
    /* Best effort: a conf or key that does not load leaves the line
     * unanchored, as configure_platform would have stopped on it. */
    (void)sr_cmd_platform(run->args, NULL, &run->audit_key, &ignored);
  }
  for (int tries = 1;; tries++) {
    struct sr_error failed = {0};
    const uint64_t seq = run->audit.seq;
    const bool fd_failed = run->audit.fd_failed;
    const bool copy_failed = run->audit.copy_failed;

    if (sr_audit_emit_anchored(&run->audit, "execution_completed",
                               completed_json(run, status, exit_code, ran),
                               run->audit_key, &failed) >= 0)
      break;
    /* Its fields could not be built, or the line formatted (out of
     * memory): nothing was written, and a run must not end without its
     * last line, so it is built again. */
    if (tries < 3 && run->audit.seq == seq &&
        run->audit.fd_failed == fd_failed &&
        run->audit.copy_failed == copy_failed &&
        (failed.err == ENOMEM || !strcmp(failed.reason, "audit_field")))
      continue;
    /* If this last line cannot be written there is nobody left to tell
     * but stderr; the exit status still says what happened.  A ledger
     * left open keeps its marker: gc closes it. */
    sr_log_error("%s", failed.msg);
    if (run->audit.seq == seq && !copy_failed)
      run->ws.ledger_open = true;
    break;
  }
  /* What audit.jsonl kept in reserve is free for metadata.json now. */
  sr_audit_release_room(&run->audit);
}

/* The failure's own event: a refusal, a layer that could not be built, or
 * another error. */
static void emit_failure(struct sr_run *run, const struct sr_error *err) {
  struct sr_error ignored = {0};
  json_t *f;

  /* The message may quote a path or a value from the caller in any bytes:
   * recorded lossily rather than not at all. */
  json_t *msg = sr_json_string_lossy(err->msg, strlen(err->msg));

  if (err->exit_code == SR_EXIT_REFUSED) {
    f = json_pack("{s:s, s:o}", "reason", err->reason, "message", msg);
    if (f && run->refusal_extra)
      json_object_update(f, run->refusal_extra);
    (void)sr_audit_emit(&run->audit,
                        run->refusal_event ? run->refusal_event
                                           : "bundle_rejected",
                        f, &ignored);
  } else if (err->layer[0]) {
    (void)sr_audit_emit(
        &run->audit, "layer_failed",
        json_pack(
            "{s:s, s:o, s:o}", "layer", err->layer, "message", msg, "errno",
            err->err ? json_string(strerrorname_np(err->err)) : json_null()),
        &ignored);
  } else {
    (void)sr_audit_emit(
        &run->audit, "error",
        json_pack("{s:s, s:o}", "reason", err->reason, "message", msg),
        &ignored);
  }
}

/* The workspace root a run would have used, opened without creating it
 * (the run has none open): -1 when there is none (nothing is recorded
 * then). */
static int open_root(const struct sr_run *run) {
  const char *root = run->args->workspace_root;
  _cleanup_free_ char *def = NULL;
  struct sr_error ignored = {0};
  int r;

  if (!root && run->policy_init)
    root = run->policy.workspace_root;
  if (!root && sr_workspace_default_root(&def, &ignored) == 0)
    root = def;
  if (!root || root[0] != '/')
    return -1;
  /* Not through another user's link, as the run itself would not. */
  r = sr_workspace_open_root(root, false, &ignored);
  return r < 0 ? -1 : r;
}

/* Every name a manifest passes (manifest.h) is one the index holds. */
_Static_assert(SR_MANIFEST_NAME_MAX_BYTES <= SR_RECORD_SKILL_MAX,
               "the runs index holds every valid skill name");

/* src into dst (size bytes) when it fits whole: never a name cut short,
 * which would count the run under another skill.  Whether it fitted. */
static bool copy_whole(char *dst, size_t size, const char *src) {
  size_t n = strlen(src);

  if (n >= size) {
    dst[0] = '\0';
    return false;
  }
  memcpy(dst, src, n + 1);
  return true;
}

/* One line in the runs index for --metrics (metrics.h), after the final
 * event: a failure is only a warning, the run's record is the audit. */
static void record_in_index(const struct sr_run *run, bool ran,
                            enum sr_status status, const char *reason) {
  struct sr_run_record rec = {0};
  char line[SR_RECORD_LINE_MAX + 1];
  _cleanup_close_ int opened = -1; /* the root, when the run had none */
  int root = run->ws.root_fd, n, r;

  if (run->explain || !run->audit_open)
    return;
  if (root < 0) {
    opened = open_root(run);
    root = opened;
  }
  /* No workspace root (a run refused before it had one), or one the run
   * was refused (another user's, one others may write): nothing there is
   * skillrun's to make, or the caller's to count. */
  if (root < 0 || !sr_workspace_root_usable(root))
    return;
  rec.finished_s = (uint64_t)time(NULL);
  if (sr_valid_id(run->tenant))
    snprintf(rec.tenant, sizeof(rec.tenant), "%s", run->tenant);
  /* A name or reason that does not fit is left out, as one the index
   * cannot hold (below), never cut to another skill's. */
  if (run->have_manifest && run->manifest.name &&
      !copy_whole(rec.skill, sizeof(rec.skill), run->manifest.name))
    sr_log_warning("the skill's name is longer than the runs index "
                   "holds (%d bytes): the run is counted without it",
                   SR_RECORD_SKILL_MAX);
  /* gc counts a dead run only when no line has its id. */
  if (sr_valid_id(run->execution_id))
    snprintf(rec.execution, sizeof(rec.execution), "%s", run->execution_id);
  rec.status = status;
  if (reason)
    (void)copy_whole(rec.reason, sizeof(rec.reason), reason);
  rec.duration_ms = (int64_t)(sr_now_mono_ms() - run->start_ms);
  /* execution_completed's figures: the cgroup's or the sampler's */
  rec.cpu_usec = run->have_usage ? (int64_t)run->cpu_usec : -1;
  rec.memory_peak = run->have_usage ? (int64_t)run->memory_peak : -1;
  rec.artifacts = ran ? (int64_t)run->artifacts.files : -1;
  rec.artifact_bytes = ran ? (int64_t)run->artifacts.bytes : -1;
  rec.syscalls_denied =
      ran && reported_denials(run) ? (int64_t)run->sup.denials.total : -1;
  n = sr_record_format(&rec, line, sizeof(line));
  if (n == -EINVAL) {
    /* A reason or name the index cannot hold: record the run without. */
    rec.reason[0] = rec.skill[0] = '\0';
    n = sr_record_format(&rec, line, sizeof(line));
  }
  r = n < 0 ? n : sr_workspace_append_index(root, line, (size_t)n);
  if (r == -EWOULDBLOCK)
    sr_log_warning("cannot add the run to the runs index (--metrics): "
                   "another process held its lock for 5 s; the run is not "
                   "counted");
  else if (r < 0)
    sr_log_warning("cannot add the run to the runs index (--metrics): %s",
                   strerror(-r));
}

/* A run cancelled before the supervisor took the signal: the state it
 * would have recorded, then the end, with 128 + the signal as shells
 * expect. */
static int report_cancelled(struct sr_run *run) {
  const int sig = run->cancel_sig, code = 128 + sig;
  const bool ran = run->sup.start_ms != 0;
  struct sr_error ignored = {0};

  sr_log_error("cancelled by signal %d (%s)", sig,
               sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
  if (run->audit_open) {
    sr_audit_cancelling(&run->audit);
    /* Stopped before the run directory existed: no run_dir. */
    (void)sr_run_emit_started(run, &ignored);
    (void)sr_audit_emit(
        &run->audit, "state_changed",
        json_pack("{s:s, s:i}", "state", "cancelling", "signal", sig),
        &ignored);
    emit_completed(run, sr_status_name(SR_STATUS_CANCELLED), code, ran);
    record_in_index(run, false, SR_STATUS_CANCELLED, NULL);
  }
  write_final_metadata(
      run, SR_STATUS_CANCELLED, code,
      ran ? json_integer((json_int_t)(sr_now_mono_ms() - run->sup.start_ms))
          : NULL);
  return code;
}

/* An ordinary user's sandbox that AppArmor denies every capability says
 * so, on stderr and in layer_failed's message (sr_ns_explain_apparmor). */
static void explain_apparmor(struct sr_error *err) {
  _cleanup_close_ int kernel_fd = -1;

  if (!err->layer[0] || sr_root_mode())
    return;
  kernel_fd = open("/proc/sys/kernel", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  /* No /proc/sys (a container may hide it): no hint, the error stands. */
  (void)sr_ns_explain_apparmor(err, kernel_fd, geteuid());
}

int sr_stage_report(struct sr_run *run, int r, struct sr_error *err) {
  /* The final events may use the room audit.jsonl keeps for them: a full
   * file system still takes them. */
  sr_audit_closing(&run->audit);
  /* skillrun cancels at whatever stage the run is: a signal taken after
   * the supervisor's loop (during the harvest's events, whose stalled
   * stream it ended: sr_write_bounded_cancellable) cancels the run a
   * skill's own end left to report, not a limit's or a cancellation's. */
  if (r >= 0 && !run->cancel_sig && run->audit_open &&
      (run->verdict.status == SR_STATUS_SUCCEEDED ||
       run->verdict.status == SR_STATUS_FAILED ||
       run->verdict.status == SR_STATUS_KILLED) &&
      (run->cancel_sig = sr_cancel_pending()) != 0)
    return report_cancelled(run);
  if (r >= 0) {
    /* exec_error says which errno; a person gets the path and why. */
    if (run->verdict.exec_errno)
      sr_log_error("%s", run->sup.exec_msg[0] ? run->sup.exec_msg
                                              : "cannot execute the command");
    /* The line a cancellation at any other stage gets (report_cancelled),
     * also for one the supervisor's loop took while the skill ran. */
    if (run->verdict.status == SR_STATUS_CANCELLED && run->sup.cancel_sig)
      sr_log_error("cancelled by signal %d (%s)", run->sup.cancel_sig,
                   sigabbrev_np(run->sup.cancel_sig)
                       ? sigabbrev_np(run->sup.cancel_sig)
                       : "?");
    emit_completed(run, sr_status_name(run->verdict.status),
                   run->verdict.exit_code, true);
    /* After the ledger's last line, in the room it gave back: a watcher of
     * metadata.json finds the whole record, and a full file system still
     * takes it. */
    write_final_metadata(run, run->verdict.status, run->verdict.exit_code,
                         json_integer((json_int_t)run->duration_ms));
    record_in_index(run, true, run->verdict.status, NULL);
    return run->verdict.exit_code;
  }
  /* Reported once: stderr, the matching event, the final event. */
  if (!sr_error_is_set(err))
    sr_error_set(err, SR_EXIT_FAILED, 0, "internal", "internal error");
  /* A long copy stopped by a cancellation signal, or the signal seen
   * between two stages: the run was cancelled, not failed. */
  if (err->err == ECANCELED && !run->cancel_sig)
    run->cancel_sig = sr_cancel_pending() ? sr_cancel_pending() : SIGTERM;
  if (run->cancel_sig)
    return report_cancelled(run);
  explain_apparmor(err);
  sr_log_error("%s", err->msg);
  if (run->audit_open) {
    struct sr_error ignored = {0};
    /* Stopped before the run directory existed: no run_dir. */
    (void)sr_run_emit_started(run, &ignored);
    emit_failure(run, err);
    emit_completed(run, sr_status_name(sr_status_of_error(err->exit_code)),
                   err->exit_code, false);
    record_in_index(run, false, sr_status_of_error(err->exit_code),
                    err->reason);
  }
  /* A run that got its directory says how it ended there too, after its
   * ledger: a watcher of metadata.json finds the whole record. */
  write_final_metadata(
      run, sr_status_of_error(err->exit_code), err->exit_code,
      run->sup.start_ms
          ? json_integer((json_int_t)(sr_now_mono_ms() - run->sup.start_ms))
          : NULL);
  return err->exit_code;
}
