/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Runs the pipeline of DESIGN.md section 2.  This is the only place that
 * prints errors and picks the exit status.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "bundle.h"
#include "cli.h"
#include "conf.h"
#include "fdutil.h"
#include "manifest.h"
#include "ns.h"
#include "policy.h"
#include "seccomp.h"
#include "supervisor.h"
#include "trust.h"
#include "util.h"
#include "workspace.h"

extern char **environ;

#define DEFAULT_CONF SR_SYSCONFDIR "/skillrun/skillrun.conf"

struct ctx {
  struct sr_args args;
  struct sr_audit audit;
  bool audit_open;
  struct sr_policy policy;
  bool policy_init;
  struct sr_workspace ws;
  struct sr_bundle bundle;
  struct sr_manifest manifest;
  bool have_manifest;
  /* trust: what verified the bundle, and the key anchoring the ledger */
  int tier; /* enum sr_tier; SR_TIER_UNSIGNED without a statement */
  struct sr_statement statement;
  struct sr_keyring keyring;
  struct sr_trust_key *audit_key;
  struct sr_capability capability;
  bool have_capability;
  struct sr_seccomp *seccomp;
  char execution_id[65];
  const char *tenant;
  uint64_t start_ms;
  char started_at[32];
  json_t *inputs;
  char **envp;
  size_t n_envp;
};

static void usage_error(const struct sr_error *err) {
  sr_log_error("%s", err->msg);
  fprintf(stderr, "Try 'skillrun --help' for more information.\n");
}

/* Reasons that mean "refused before anything ran". */
static const char *status_for(const struct sr_error *err) {
  return err->exit_code == SR_EXIT_REFUSED ? "refused" : "error";
}

static void emit_completed(struct ctx *c, const char *status, int exit_code,
                           const struct sr_result *res) {
  struct sr_error ignored = {0};
  json_t *f;

  f = json_pack("{s:s, s:i, s:I}", "status", status, "exit_code", exit_code,
                "duration_ms", (json_int_t)(sr_now_mono_ms() - c->start_ms));
  if (!f)
    return;
  if (res) {
    json_object_set_new(f, "skill_exit_code",
                        res->skill_exit >= 0 ? json_integer(res->skill_exit)
                                             : json_null());
    json_object_set_new(f, "signal",
                        res->signal ? json_integer(res->signal) : json_null());
    if (res->exec_errno)
      json_object_set_new(f, "exec_error",
                          json_string(strerrorname_np(res->exec_errno)
                                          ? strerrorname_np(res->exec_errno)
                                          : "unknown"));
    json_object_set_new(f, "cpu_usec",
                        res->have_cgroup_stats
                            ? json_integer((json_int_t)res->cg.cpu_usec)
                            : json_null());
    json_object_set_new(f, "memory_peak",
                        res->have_cgroup_stats
                            ? json_integer((json_int_t)res->cg.memory_peak)
                            : json_null());
    json_object_set_new(f, "pids_peak",
                        res->have_cgroup_stats
                            ? json_integer((json_int_t)res->cg.pids_peak)
                            : json_null());
    json_object_set_new(f, "oom_kill",
                        res->have_cgroup_stats
                            ? json_integer((json_int_t)res->cg.oom_kill)
                            : json_null());
    json_object_set_new(f, "logs",
                        json_pack("{s:{s:I, s:I}, s:{s:I, s:I}}", "stdout",
                                  "kept", (json_int_t)res->log_kept[0],
                                  "dropped", (json_int_t)res->log_dropped[0],
                                  "stderr", "kept",
                                  (json_int_t)res->log_kept[1], "dropped",
                                  (json_int_t)res->log_dropped[1]));
    json_object_set_new(f, "artifacts",
                        json_pack("{s:I, s:I}", "files",
                                  (json_int_t)res->artifacts, "bytes",
                                  (json_int_t)res->artifact_bytes));
  }
  /* If this last line cannot be written there is nobody left to tell but
   * stderr; the exit status still says what happened. */
  if (sr_audit_emit_anchored(&c->audit, "execution_completed", f, c->audit_key,
                             &ignored) < 0)
    sr_log_error("%s", ignored.msg);
}

/* Reports a failure once: stderr line, the matching audit event, the final
 * event, and returns the exit status. */
static int fail(struct ctx *c, struct sr_error *err) {
  struct sr_error ignored = {0};

  if (!sr_error_is_set(err))
    sr_error_set(err, SR_EXIT_FAILED, 0, "internal", "internal error");
  sr_log_error("%s", err->msg);
  if (c->audit_open) {
    if (err->exit_code == SR_EXIT_REFUSED)
      (void)sr_audit_emit(
          &c->audit, "bundle_rejected",
          json_pack("{s:s, s:s}", "reason", err->reason, "message", err->msg),
          &ignored);
    else if (err->layer[0])
      (void)sr_audit_emit(&c->audit, "layer_failed",
                          json_pack("{s:s, s:s, s:o}", "layer", err->layer,
                                    "message", err->msg, "errno",
                                    err->err
                                        ? json_string(strerrorname_np(err->err))
                                        : json_null()),
                          &ignored);
    else
      (void)sr_audit_emit(
          &c->audit, "error",
          json_pack("{s:s, s:s}", "reason", err->reason, "message", err->msg),
          &ignored);
    emit_completed(c, status_for(err), err->exit_code, NULL);
  }
  return err->exit_code;
}

static int emit_warnings(struct ctx *c, const struct sr_strv *w,
                         const char *source, struct sr_error *err) {
  for (size_t i = 0; i < w->n; i++) {
    int r = sr_audit_emit(
        &c->audit, "warning",
        json_pack("{s:s, s:s}", "source", source, "message", w->v[i]), err);
    if (r < 0)
      return r;
  }
  return 0;
}

static int open_audit(struct ctx *c, struct sr_error *err) {
  int fd = STDOUT_FILENO;
  bool own = false;

  if (c->args.audit_fd >= 0) {
    fd = c->args.audit_fd;
    if (fcntl(fd, F_GETFD) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "usage",
                          "--audit-fd %d is not an open file descriptor", fd);
    (void)sr_fd_cloexec(fd, true); /* the sandbox must never inherit it */
  } else if (c->args.audit_file) {
    fd = open(c->args.audit_file,
              O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0640);
    if (fd < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "usage",
                          "cannot create audit file %s", c->args.audit_file);
    own = true;
  }
  if (sr_audit_init(&c->audit, fd, own, c->execution_id, c->tenant) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "audit", "audit");
  c->audit_open = true;
  return 0;
}

static int load_policy(struct ctx *c, struct sr_error *err) {
  _cleanup_free_ char *warning = NULL;
  _cleanup_free_ char *resolved = NULL;
  struct sr_conf conf = {0}, prof = {0};
  int r;

  r = sr_policy_init(&c->policy);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "policy", "policy");
  c->policy_init = true;
  r = sr_conf_load_platform(c->args.conf ? c->args.conf : DEFAULT_CONF, &conf,
                            &warning, err);
  if (r < 0)
    return r;
  if (warning && c->audit_open) {
    r = sr_audit_emit(
        &c->audit, "warning",
        json_pack("{s:s, s:s}", "source", "conf", "message", warning), err);
    if (r < 0)
      goto out;
  } else if (warning) {
    sr_log_warning("%s", warning);
  }
  r = sr_policy_apply_conf(&c->policy, &conf, err);
  if (r < 0)
    goto out;
  r = sr_conf_load_profile(c->args.profile, &prof, &resolved, err);
  if (r < 0)
    goto out;
  r = sr_policy_apply_profile(&c->policy, &prof, err);
  if (r >= 0 && resolved && !c->policy.profile)
    c->policy.profile = TAKE_PTR(resolved);
out:
  sr_conf_free(&conf);
  sr_conf_free(&prof);
  return r;
}

static int digest_mode(struct ctx *c) {
  struct sr_bundle_caps caps;
  struct sr_error err = {0};
  int r;

  sr_bundle_caps_default(&caps);
  r = sr_bundle_stage(c->args.bundle, -1, &caps, c->args.verbose, &c->bundle,
                      &err);
  if (r < 0) {
    sr_log_error("%s", err.msg);
    return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  }
  if (c->args.verbose && c->bundle.records)
    fwrite(c->bundle.records, 1, c->bundle.records_len, stdout);
  printf("%s  %s\n", c->bundle.digest, c->args.bundle);
  if (c->args.expect_sha256 && strcmp(c->bundle.digest + strlen("sha256:"),
                                      c->args.expect_sha256) != 0) {
    sr_log_error("bundle digest %s does not match the expected sha256:%s",
                 c->bundle.digest, c->args.expect_sha256);
    return SR_EXIT_REFUSED;
  }
  return fflush(stdout) == 0 ? 0 : SR_EXIT_FAILED;
}

static int verify_audit_mode(struct ctx *c) {
  _cleanup_close_ int fd = -1;
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  struct sr_error err = {0};
  char head[65];
  uint64_t n = 0;

  if (c->args.audit_key) {
    if (sr_trust_key_load(c->args.audit_key, false, &key, &err) < 0) {
      sr_log_error("%s", err.msg);
      return 1;
    }
    fd = open(c->args.verify_audit, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
      sr_log_error("cannot open %s: %s", c->args.verify_audit, strerror(errno));
      return 1;
    }
    if (sr_audit_verify_anchored_fd(fd, c->args.verify_audit, key, head, &n,
                                    &err) < 0) {
      sr_log_error("%s", err.msg);
      return 1;
    }
    printf("ok: %" PRIu64 " events, head sha256:%s, anchored by key %s\n", n,
           head, sr_trust_key_id(key));
    return 0;
  }

  fd = open(c->args.verify_audit, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    sr_log_error("cannot open %s: %s", c->args.verify_audit, strerror(errno));
    return 1;
  }
  if (sr_audit_verify_fd(fd, c->args.verify_audit, head, &n, &err) < 0) {
    sr_log_error("%s", err.msg);
    return 1;
  }
  printf("ok: %" PRIu64 " events, head sha256:%s\n", n, head);
  return 0;
}

/* --sign KEY --tier TIER --signature OUT BUNDLE: a publisher's statement. */
static int sign_mode(struct ctx *c) {
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  _cleanup_free_ char *real = NULL, *text = NULL;
  _cleanup_close_ int fd = -1;
  struct sr_bundle_caps caps;
  struct sr_error err = {0};
  size_t len = 0;
  int r;

  real = realpath(c->args.bundle, NULL);
  if (!real) {
    sr_log_error("bundle %s: %s", c->args.bundle, strerror(errno));
    return SR_EXIT_REFUSED;
  }
  sr_bundle_caps_default(&caps);
  if (sr_bundle_stage(real, -1, &caps, false, &c->bundle, &err) < 0 ||
      sr_manifest_parse(c->bundle.skill_md, c->bundle.skill_md_len,
                        basename(real), &c->manifest, &err) < 0)
    goto fail;
  c->have_manifest = true;
  if (sr_trust_key_load(c->args.sign_key, true, &key, &err) < 0 ||
      sr_statement_sign(key, sr_tier_from_name(c->args.tier), c->manifest.name,
                        c->manifest.version, c->bundle.digest,
                        (int64_t)time(NULL), &text, &len, &err) < 0)
    goto fail;
  /* Never overwrite: a statement is a publisher's record. */
  fd = open(c->args.signature,
            O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    sr_log_error("cannot create %s: %s", c->args.signature, strerror(errno));
    return SR_EXIT_FAILED;
  }
  r = sr_write_all(fd, text, len);
  if (r < 0 || close(TAKE_FD(fd)) < 0) {
    sr_log_error("cannot write %s: %s", c->args.signature,
                 strerror(r < 0 ? -r : errno));
    (void)unlink(c->args.signature); /* a partial statement is useless */
    return SR_EXIT_FAILED;
  }
  printf("signed %s %s (%s) as %s with key %s -> %s\n", c->manifest.name,
         c->manifest.version, c->bundle.digest, c->args.tier,
         sr_trust_key_id(key), c->args.signature);
  return fflush(stdout) == 0 ? 0 : SR_EXIT_FAILED;
fail:
  sr_log_error("%s", err.msg);
  return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
}

/*
 * The statement for this bundle: --signature FILE, else BUNDLE.sig beside
 * the bundle when it exists.  *text NULL: unsigned.
 */
static int read_statement(struct ctx *c, const char *bundle_real, char **text,
                          size_t *len, struct sr_error *err) {
  _cleanup_free_ char *conventional = NULL;
  _cleanup_close_ int fd = -1;
  const char *path = c->args.signature;
  int r;

  *text = NULL;
  if (!path) {
    if (asprintf(&conventional, "%s.sig", bundle_real) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "statement");
    path = conventional;
  }
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && errno == ENOENT && !c->args.signature)
    return 0;
  if (fd < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, errno, "statement_invalid",
                        "cannot open statement %s", path);
  /* One byte more than allowed, so that an oversized file is refused by
   * the parser with its own message. */
  r = sr_read_fd(fd, SR_STATEMENT_MAX_BYTES + 1, text, len);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, -r, "statement_invalid",
                        "cannot read statement %s", path);
  return 0;
}

/* Signature and tier: after the digest and the manifest are known, before
 * the policy is applied.  Refusals are exit 123 with their own reason. */
static int verify_trust(struct ctx *c, const char *bundle_real,
                        struct sr_error *err) {
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  int r;

  c->tier = SR_TIER_UNSIGNED;
  r = read_statement(c, bundle_real, &text, &len, err);
  if (r < 0)
    return r;
  if (!text) {
    if (c->policy.require_signature)
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "signature_required",
                          "bundle is unsigned (no --signature, no %s.sig) and "
                          "the profile or skillrun.conf requires a signature",
                          c->args.bundle);
    return 0;
  }
  r = sr_statement_parse(text, len, &c->statement, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < c->policy.n_trust_keys; i++) {
    struct sr_trust_key *k = NULL;
    r = sr_trust_key_load(c->policy.trust_keys[i].path, false, &k, err);
    if (r < 0)
      return r;
    r = sr_keyring_add(&c->keyring, c->policy.trust_keys[i].tier, k);
    if (r < 0) {
      sr_trust_key_free(k);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "oom", "keyring");
    }
  }
  r = sr_statement_verify(&c->statement, text, &c->keyring,
                          c->policy.tiers_allowed, c->bundle.digest,
                          c->manifest.name, c->manifest.version, err);
  if (r < 0)
    return r;
  c->tier = c->statement.tier;
  return 0;
}

/* The execution capability: everything but the digest, before the run
 * directory exists, so a forged or stale token does not even use up its
 * execution id. */
/* sr_bundle_stage_to's pick: the staging directory, on a tmpfs when the
 * bundle is small and the run has no inputs (sr_workspace_make_staging). */
static int pick_staging(void *ctx, uint64_t total_bytes, int *dst_dirfd,
                        struct sr_error *err) {
  struct ctx *c = ctx;
  int r = sr_workspace_make_staging(&c->ws, total_bytes, c->args.n_inputs == 0,
                                    err);

  if (r < 0)
    return r;
  *dst_dirfd = c->ws.bundle_fd;
  return 0;
}

static int check_capability(struct ctx *c, struct sr_error *err) {
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int own_fd = -1;
  int fd = c->args.capability_fd;
  size_t len = 0;
  int r;

  if (!c->args.capability && fd < 0) {
    if (c->policy.require_capability)
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_required",
                          "skillrun.conf requires an execution capability "
                          "(--capability FILE or --capability-fd N)");
    return 0;
  }
  if (c->args.capability) {
    /* own_fd is read by its _cleanup_close_ handler, which clang 14's
     * dead-store check does not model.
     * NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores) */
    fd = own_fd = open(c->args.capability, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
      return sr_error_set(err, SR_EXIT_REFUSED, errno, "capability_invalid",
                          "cannot open capability %s", c->args.capability);
  } else {
    if (fcntl(fd, F_GETFD) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "usage",
                          "--capability-fd %d is not an open file descriptor",
                          fd);
    (void)sr_fd_cloexec(fd, true); /* the sandbox must never inherit it */
  }
  r = sr_read_fd(fd, SR_CAPABILITY_MAX_BYTES + 1, &text, &len);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, -r, "capability_invalid",
                        "cannot read the capability");
  if (!c->policy.capability_key)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_untrusted",
                        "a capability was given but skillrun.conf names no "
                        "capability-key to verify it");
  r = sr_capability_parse(text, len, &c->capability, err);
  if (r < 0)
    return r;
  r = sr_trust_key_load(c->policy.capability_key, false, &key, err);
  if (r < 0)
    return r;
  r = sr_capability_check(&c->capability, key, c->tenant, c->execution_id,
                          (int64_t)time(NULL), err);
  if (r < 0)
    return r;
  c->have_capability = true;
  return 0;
}

static json_t *trust_json(struct ctx *c) {
  bool s = c->tier != SR_TIER_UNSIGNED;
  return json_pack("{s:s, s:o, s:o}", "tier", sr_tier_name(c->tier), "key_id",
                   s ? json_string(c->statement.key_id) : json_null(),
                   "signed_at",
                   s ? json_string(c->statement.time) : json_null());
}

static int gc_mode(struct ctx *c) {
  _cleanup_free_ char *root = NULL;
  struct sr_error err = {0};
  unsigned n = 0;

  if (c->args.workspace_root)
    root = strdup(c->args.workspace_root);
  else if (sr_workspace_default_root(&root, &err) < 0)
    return usage_error(&err), SR_EXIT_FAILED;
  if (!root)
    return SR_EXIT_FAILED;
  if (sr_workspace_gc(root, true, &n, &err) < 0 ||
      sr_cgroup_gc(c->args.cgroup_parent, &err) < 0) {
    sr_log_error("%s", err.msg);
    return SR_EXIT_FAILED;
  }
  printf("gc: %u dead run(s) cleaned under %s\n", n, root);
  return 0;
}

static int push_env(struct ctx *c, const char *name, const char *value) {
  char **v;
  char *s;

  /* A later setting of the same name replaces the earlier one. */
  for (size_t i = 0; i < c->n_envp; i++) {
    size_t n = strlen(name);
    if (!strncmp(c->envp[i], name, n) && c->envp[i][n] == '=') {
      if (asprintf(&s, "%s=%s", name, value) < 0)
        return -ENOMEM;
      free(c->envp[i]);
      c->envp[i] = s;
      return 0;
    }
  }
  if (asprintf(&s, "%s=%s", name, value) < 0)
    return -ENOMEM;
  v = realloc(c->envp, (c->n_envp + 2) * sizeof(char *));
  if (!v) {
    free(s);
    return -ENOMEM;
  }
  v[c->n_envp++] = s;
  v[c->n_envp] = NULL;
  c->envp = v;
  return 0;
}

/* The skill's environment, from scratch: nothing of the caller's leaks in
 * unless the profile keeps it by name. */
static int build_env(struct ctx *c) {
  const struct sr_policy *p = &c->policy;
  int r = 0;

  r |= push_env(c, "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  r |= push_env(c, "HOME", "/workspace/scratch");
  r |= push_env(c, "LANG", "C.UTF-8");
  r |= push_env(c, "TMPDIR", "/tmp");
  r |= push_env(c, "SKILLRUN_EXECUTION_ID", c->execution_id);
  r |= push_env(c, "SKILLRUN_TENANT_ID", c->tenant);
  r |= push_env(c, "SKILLRUN_SKILL", c->manifest.name);
  for (size_t i = 0; i < p->env_keep.n; i++) {
    const char *v = getenv(p->env_keep.v[i]);
    if (v)
      r |= push_env(c, p->env_keep.v[i], v);
  }
  for (size_t i = 0; i < p->n_setenv; i++)
    r |= push_env(c, p->setenv[i].name, p->setenv[i].value);
  return r ? -ENOMEM : 0;
}

static json_t *limits_json(const struct sr_policy *p) {
  json_t *o = json_object();
  for (int i = 0; i < SR__LIM_MAX && o; i++)
    json_object_set_new(o, sr_limit_defs[i].name,
                        json_integer((json_int_t)p->limits[i].value));
  return o;
}

static json_t *metadata_json(struct ctx *c) {
  json_t *tools = json_array(), *m;
  for (size_t i = 0; tools && i < c->manifest.allowed_tools.n; i++)
    json_array_append_new(tools, json_string(c->manifest.allowed_tools.v[i]));
  m = json_pack(
      "{s:s, s:s, s:s, s:{s:s, s:o, s:s, s:o}, s:o, s:s, s:O, s:s, s:n}",
      "schema", "skillrun.metadata/1", "execution_id", c->execution_id,
      "tenant_id", c->tenant, "skill", "name", c->manifest.name, "version",
      c->manifest.version ? json_string(c->manifest.version) : json_null(),
      "digest", c->bundle.digest, "allowed_tools", tools ? tools : json_array(),
      "limits", limits_json(&c->policy), "network",
      c->policy.network_allow ? "allow" : "deny", "inputs",
      c->inputs ? c->inputs : json_array(), "started_at", c->started_at,
      "result");
  /* The tier and key that vouched for the bundle (skillrun(1)). */
  if (m && json_object_set_new(m, "trust", trust_json(c)) < 0) {
    json_decref(m);
    return NULL;
  }
  return m;
}

static int run_mode(struct ctx *c, bool explain) {
  struct sr_error err = {0};
  struct sr_bundle_caps caps;
  struct sr_run run;
  struct sr_result res;
  _cleanup_free_ char *root = NULL;
  _cleanup_free_ char *bundle_real = NULL;
  char **argv;
  int r;

  c->tenant = c->args.tenant ? c->args.tenant : "default";
  if (c->args.execution_id)
    snprintf(c->execution_id, sizeof(c->execution_id), "%s",
             c->args.execution_id);
  else if ((r = sr_random_uuid(c->execution_id)) < 0)
    return sr_error_set(&err, SR_EXIT_FAILED, -r, "uuid",
                        "cannot make an execution id"),
           fail(c, &err);
  c->start_ms = sr_now_mono_ms();
  sr_now_rfc3339(c->started_at);

  if (!explain) {
    if (open_audit(c, &err) < 0)
      return fail(c, &err);
    if (sr_audit_emit(&c->audit, "execution_started",
                      json_pack("{s:s, s:s, s:i, s:i}", "skillrun_version",
                                PACKAGE_VERSION, "bundle", c->args.bundle,
                                "caller_uid", (int)getuid(), "pid",
                                (int)getpid()),
                      &err) < 0)
      return fail(c, &err);
  }
  if (load_policy(c, &err) < 0)
    return fail(c, &err);
  /* Loaded first, so that even a refusal's execution_completed is
   * anchored. */
  if (!explain && c->policy.audit_key &&
      sr_trust_key_load(c->policy.audit_key, true, &c->audit_key, &err) < 0)
    return fail(c, &err);

  bundle_real = realpath(c->args.bundle, NULL);
  if (!bundle_real) {
    sr_error_set(&err, SR_EXIT_REFUSED, errno, "bundle_invalid", "bundle %s",
                 c->args.bundle);
    return fail(c, &err);
  }

  /* verify: copy while hashing into the run's staging area; for --explain
   * only hash. */
  sr_bundle_caps_default(&caps);
  if (!explain) {
    if (c->args.workspace_root)
      root = strdup(c->args.workspace_root);
    else if (c->policy.workspace_root)
      root = strdup(c->policy.workspace_root);
    else if (sr_workspace_default_root(&root, &err) < 0)
      return fail(c, &err);
    if (!root)
      return sr_error_set(&err, SR_EXIT_FAILED, ENOMEM, "oom", "out of memory"),
             fail(c, &err);
    if (check_capability(c, &err) < 0)
      return fail(c, &err);
    r = -1;
    if (sr_workspace_create(&c->ws, root, c->tenant, c->execution_id, &r,
                            &err) < 0) {
      safe_close(r);
      return fail(c, &err);
    }
    if (sr_audit_attach_copy(&c->audit, r, &err) < 0)
      return fail(c, &err);
  }
  if (sr_bundle_stage_to(bundle_real, explain ? NULL : pick_staging, c, &caps,
                         false, &c->bundle, &err) < 0)
    return fail(c, &err);
  if (c->args.expect_sha256 && strcmp(c->bundle.digest + strlen("sha256:"),
                                      c->args.expect_sha256) != 0) {
    struct sr_error ignored = {0};
    sr_error_set(&err, SR_EXIT_REFUSED, 0, "digest_mismatch",
                 "bundle digest %s does not match the expected sha256:%s",
                 c->bundle.digest, c->args.expect_sha256);
    sr_log_error("%s", err.msg);
    if (!explain) {
      (void)sr_audit_emit(&c->audit, "bundle_rejected",
                          json_pack("{s:s, s:s, s:s, s:s}", "reason",
                                    "digest_mismatch", "message", err.msg,
                                    "expected", c->args.expect_sha256, "actual",
                                    c->bundle.digest),
                          &ignored);
      emit_completed(c, "refused", SR_EXIT_REFUSED, NULL);
    }
    return SR_EXIT_REFUSED;
  }
  if (c->have_capability &&
      sr_capability_check_digest(&c->capability, c->bundle.digest, &err) < 0)
    return fail(c, &err);
  if (!c->bundle.skill_md) {
    sr_error_set(&err, SR_EXIT_REFUSED, 0, "manifest_invalid",
                 "SKILL.md missing or too large");
    return fail(c, &err);
  }
  if (sr_manifest_parse(c->bundle.skill_md, c->bundle.skill_md_len,
                        basename(bundle_real), &c->manifest, &err) < 0)
    return fail(c, &err);
  c->have_manifest = true;
  if (verify_trust(c, bundle_real, &err) < 0) {
    /* --explain of an unsigned bundle under require-signature still shows
     * the policy; the refusal it would meet is listed as a warning. */
    if (explain && !strcmp(err.reason, "signature_required")) {
      char w[1100];
      snprintf(w, sizeof(w), "a run would be refused: %s", err.msg);
      sr_error_clear(&err);
      if (sr_strv_push(&c->policy.warnings, w) < 0)
        return SR_EXIT_FAILED;
      goto trust_done;
    }
    if (!explain)
      (void)sr_audit_set_skill(&c->audit, c->manifest.name,
                               c->manifest.version);
    return fail(c, &err);
  }
trust_done:
  if (!explain) {
    if (sr_audit_set_skill(&c->audit, c->manifest.name, c->manifest.version) <
            0 ||
        emit_warnings(c, &c->manifest.warnings, "manifest", &err) < 0 ||
        sr_audit_emit(&c->audit, "bundle_verified",
                      json_pack("{s:s, s:I, s:I, s:I, s:b, s:s, s:o, s:o, "
                                "s:b, s:s?}",
                                "digest", c->bundle.digest, "files",
                                (json_int_t)c->bundle.n_files, "dirs",
                                (json_int_t)c->bundle.n_dirs, "bytes",
                                (json_int_t)c->bundle.total_bytes, "pinned",
                                c->args.expect_sha256 != NULL, "tier",
                                sr_tier_name(c->tier), "key_id",
                                c->tier != SR_TIER_UNSIGNED
                                    ? json_string(c->statement.key_id)
                                    : json_null(),
                                "signed_at",
                                c->tier != SR_TIER_UNSIGNED
                                    ? json_string(c->statement.time)
                                    : json_null(),
                                "capability", c->have_capability, "staging",
                                c->ws.staging_path),
                      &err) < 0)
      return fail(c, &err);
  }

  /* configure */
  if (sr_policy_apply_manifest(&c->policy, &c->manifest, &err) < 0 ||
      sr_policy_apply_args(&c->policy, &c->args, &err) < 0 ||
      (c->have_capability &&
       sr_policy_limit_network(&c->policy, c->capability.network == 1, &err) <
           0))
    return fail(c, &err);

  if (explain) {
    json_t *j = sr_policy_to_json(&c->policy, NULL);
    if (!j)
      return SR_EXIT_FAILED;
    json_object_set_new(j, "bundle",
                        json_pack("{s:s, s:s, s:o}", "digest", c->bundle.digest,
                                  "skill", c->manifest.name, "version",
                                  c->manifest.version
                                      ? json_string(c->manifest.version)
                                      : json_null()));
    json_object_set_new(json_object_get(j, "bundle"), "trust", trust_json(c));
    json_object_set_new(j, "warnings", json_array());
    for (size_t i = 0; i < c->manifest.warnings.n; i++)
      json_array_append_new(json_object_get(j, "warnings"),
                            json_string(c->manifest.warnings.v[i]));
    for (size_t i = 0; i < c->policy.warnings.n; i++)
      json_array_append_new(json_object_get(j, "warnings"),
                            json_string(c->policy.warnings.v[i]));
    r = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(j);
    putchar('\n');
    return r == 0 && fflush(stdout) == 0 ? 0 : SR_EXIT_FAILED;
  }
  if (emit_warnings(c, &c->policy.warnings, "policy", &err) < 0)
    return fail(c, &err);

  argv = c->args.n_command ? c->args.command : c->manifest.entrypoint.v;
  if (!argv || !argv[0]) {
    sr_error_set(&err, SR_EXIT_FAILED, 0, "usage",
                 "nothing to run: give -- COMMAND or set metadata "
                 "sandbox.entrypoint in SKILL.md");
    return fail(c, &err);
  }

  if (sr_seccomp_build(&c->policy, &c->seccomp, &err) < 0)
    return fail(c, &err);
  if (sr_workspace_stage_inputs(&c->ws, &c->args, &c->policy, &c->audit,
                                &c->inputs, &err) < 0)
    return fail(c, &err);
  if (build_env(c) < 0) {
    sr_error_set(&err, SR_EXIT_FAILED, ENOMEM, "oom", "environment");
    return fail(c, &err);
  }

  memset(&run, 0, sizeof(run));
  run.args = &c->args;
  run.tenant = c->tenant;
  run.execution_id = c->execution_id;
  run.policy = &c->policy;
  run.manifest = &c->manifest;
  run.seccomp = c->seccomp;
  run.ws = &c->ws;
  run.audit = &c->audit;
  run.argv = argv;
  run.envp = c->envp;
  run.cgroup.leaf_fd = -1;
  run.uidpool_fd = -1;
  run.init.pidfd = -1;
  /* prepare: the limits' enforcement is decided before it is announced */
  r = sr_supervisor_prepare(&run, &err);
  if (r >= 0) {
    json_t *pj = sr_policy_to_json(&c->policy, &run.enf);
    r = sr_audit_emit(
        &c->audit, "policy_resolved",
        json_pack(
            "{s:o, s:{s:s, s:s, s:i}, s:o, s:{s:i, s:i}}", "policy",
            pj ? pj : json_null(), "seccomp", "policy", "default-allowlist",
            "digest", sr_seccomp_digest(c->seccomp), "instructions",
            (int)sr_seccomp_insns(c->seccomp), "cgroup",
            run.cgroup.active ? json_string(run.cgroup.leaf_path) : json_null(),
            "sandbox_ids", "uid", (int)run.host_uid, "gid", (int)run.host_gid),
        &err);
  }
  if (r >= 0) {
    json_t *meta = metadata_json(c);
    r = meta ? sr_workspace_write_sandbox_metadata(&c->ws, meta, &err)
             : sr_error_set(&err, SR_EXIT_FAILED, ENOMEM, "metadata",
                            "metadata");
    json_decref(meta);
  }
  if (r >= 0)
    r = sr_supervise(&run, &res, &err);
  if (r >= 0) {
    /* The result is final; the sandbox's init is still tearing down its
     * mount namespace, which these records need not wait for. */
    json_t *meta = metadata_json(c);
    char finished[32];
    sr_now_rfc3339(finished);
    if (meta) {
      struct sr_error merr = {0};
      json_object_set_new(meta, "result",
                          json_pack("{s:s, s:i, s:I, s:s, s:I}", "status",
                                    res.status, "exit_code", res.exit_code,
                                    "duration_ms", (json_int_t)res.duration_ms,
                                    "finished_at", finished, "artifacts",
                                    (json_int_t)res.artifacts));
      if (sr_workspace_write_metadata(&c->ws, meta, &merr) < 0)
        sr_log_warning("%s", merr.msg); /* the audit stream has the result */
      json_decref(meta);
    }
    sr_workspace_remove_staging(&c->ws);
  }
  /* Reaps init: from here on nothing of the run is alive. */
  sr_supervisor_cleanup(&run);
  if (r < 0)
    return fail(c, &err);

  emit_completed(c, res.status, res.exit_code, &res);
  return res.exit_code;
}

static void ctx_free(struct ctx *c) {
  sr_workspace_finish(&c->ws);
  if (c->audit_open)
    sr_audit_done(&c->audit);
  if (c->policy_init)
    sr_policy_free(&c->policy);
  if (c->have_manifest)
    sr_manifest_free(&c->manifest);
  sr_keyring_free(&c->keyring);
  sr_trust_key_free(c->audit_key);
  sr_bundle_free(&c->bundle);
  sr_seccomp_free(c->seccomp);
  json_decref(c->inputs);
  for (size_t i = 0; i < c->n_envp; i++)
    free(c->envp[i]);
  free(c->envp);
  sr_args_free(&c->args);
}

int main(int argc, char *argv[]) {
  struct ctx c;
  struct sr_error err = {0};
  int code;

  memset(&c, 0, sizeof(c));
  sr_workspace_init(&c.ws);
  /* A closed stdout must not become the audit file or a log by accident. */
  if (fcntl(STDOUT_FILENO, F_GETFD) < 0 || fcntl(STDERR_FILENO, F_GETFD) < 0)
    return SR_EXIT_FAILED;
  /* Writes to a closed pipe must fail with EPIPE, not kill us silently. */
  signal(SIGPIPE, SIG_IGN);

  if (sr_cli_parse(argc, argv, &c.args, &err) < 0) {
    if (err.exit_code == SR_EXIT_REFUSED)
      sr_log_error("%s", err.msg);
    else
      usage_error(&err);
    sr_args_free(&c.args);
    return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  }
  switch (c.args.mode) {
  case SR_MODE_HELP:
    sr_cli_help(stdout);
    code = 0;
    break;
  case SR_MODE_VERSION:
    sr_cli_version(stdout);
    code = 0;
    break;
  case SR_MODE_VERIFY_AUDIT:
    code = verify_audit_mode(&c);
    break;
  case SR_MODE_GC:
    code = gc_mode(&c);
    break;
  case SR_MODE_SIGN:
    code = sign_mode(&c);
    break;
  case SR_MODE_DIGEST:
    code = digest_mode(&c);
    break;
  case SR_MODE_EXPLAIN:
    code = run_mode(&c, true);
    break;
  case SR_MODE_RUN:
  default:
    code = run_mode(&c, false);
    break;
  }
  ctx_free(&c);
  return code;
}
