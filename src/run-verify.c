/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The admit and verify stages (doc/architecture.md): who may run (the
 * execution capability, an execution id that has never run) and what runs
 * (the bundle's bytes, copied while hashed; its pin, SKILL.md, signature
 * and tier).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fdutil.h"
#include "run.h"

/* The bundle exists; its resolved path is what is walked and named. */
static int resolve_bundle(struct sr_run *run, struct sr_error *err) {
  run->bundle_path = realpath(run->args->bundle, NULL);
  if (!run->bundle_path)
    return sr_error_set(err, SR_EXIT_REFUSED, errno, "bundle_invalid",
                        "bundle %s", run->args->bundle);
  return 0;
}

/* A trust file the caller named (or BUNDLE.sig), opened the one safe way
 * (sr_open_regular): anything but a regular file of at most max bytes is
 * refused at once, a FIFO included.  An fd, or the refusal (exit 123,
 * `reason`); with missing_ok, -ENOENT without an error. */
static int open_trust_file(const char *path, const char *what, uint64_t max,
                           bool missing_ok, const char *reason,
                           struct sr_error *err) {
  struct stat st;
  char why[128];
  int fd = sr_open_regular(AT_FDCWD, path, max, &st);

  if (fd >= 0 || (fd == -ENOENT && missing_ok))
    return fd;
  return sr_error_set(err, SR_EXIT_REFUSED, sr_open_regular_errno(fd), reason,
                      "%s %s %s", what, path,
                      sr_open_regular_why(fd, &st, max, why, sizeof(why)));
}

/* ------------------------------------------------------------ admit */

/* The execution capability: everything but the digest, before the run
 * directory exists, so a forged or stale token does not even use up its
 * execution id. */
static int check_capability(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  const struct sr_policy *p = &run->policy;
  _cleanup_trust_key_ struct sr_trust_key *key = NULL;
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int own_fd = -1;
  int fd = a->capability_fd;
  size_t len = 0;
  int r;

  if (!a->capability && fd < 0) {
    if (p->require_capability)
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_required",
                          "skillrun.conf requires an execution capability "
                          "(--capability FILE or --capability-fd N)");
    return 0;
  }
  if (a->capability) {
    /* own_fd is read by its _cleanup_close_ handler, which clang 14's
     * dead-store check does not model.
     * NOLINTNEXTLINE(clang-analyzer-deadcode.DeadStores) */
    fd = own_fd =
        open_trust_file(a->capability, "capability", SR_CAPABILITY_MAX_BYTES,
                        false, "capability_invalid", err);
    if (fd < 0)
      return fd;
  } else {
    if (fcntl(fd, F_GETFD) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "usage",
                          "--capability-fd %d is not an open file descriptor",
                          fd);
    (void)sr_fd_cloexec(fd, true); /* the sandbox must never inherit it */
  }
  /* The caller's descriptor may be a pipe that never delivers: waited on
   * only until a cancellation signal, which then cancels the run. */
  r = a->capability ? sr_read_fd(fd, SR_CAPABILITY_MAX_BYTES + 1, &text, &len)
                    : sr_read_fd_cancellable(fd, SR_CAPABILITY_MAX_BYTES + 1,
                                             &text, &len);
  if (r == -ECANCELED)
    return sr_error_set(err, SR_EXIT_FAILED, ECANCELED, "cancelled",
                        "cancelled while reading --capability-fd %d", fd);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, -r, "capability_invalid",
                        "cannot read the capability");
  if (!p->capability_key)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_untrusted",
                        "a capability was given but skillrun.conf names no "
                        "capability-key to verify it");
  r = sr_capability_parse(text, len, &run->capability, err);
  if (r < 0)
    return r;
  r = sr_trust_key_load_platform(p->capability_key, false, &key, err);
  if (r < 0)
    return r;
  r = sr_capability_check(&run->capability, key,
                          &(struct sr_capability_scope){
                              .tenant = run->tenant,
                              .execution = run->execution_id,
                              .placement = p->placement_id,
                              .require_placement = p->require_placement,
                              .now = (int64_t)time(NULL),
                          },
                          err);
  if (r < 0)
    return r;
  run->have_capability = true;
  return 0;
}

/* --workspace-root, else skillrun.conf's, else the caller's default. */
static int workspace_root(const struct sr_run *run, char **out,
                          struct sr_error *err) {
  const char *root = run->args->workspace_root ? run->args->workspace_root
                                               : run->policy.workspace_root;

  if (!root)
    return sr_workspace_default_root(out, err);
  *out = strdup(root);
  if (!*out)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "out of memory");
  return 0;
}

/* An --input refused at admission: input_rejected names it and the rule. */
static int reject_input(struct sr_run *run, const struct sr_input_arg *in,
                        const char *why, const char *other,
                        struct sr_error *err) {
  json_decref(run->refusal_extra);
  /* Either may be any bytes (a name that is not UTF-8 is refused here):
   * recorded lossily rather than not at all. */
  run->refusal_extra = json_pack(
      "{s:o, s:o, s:s}", "name",
      sr_json_string_lossy(in->name, strlen(in->name)), "path",
      sr_json_string_lossy(in->path, strlen(in->path)), "rule", "name");
  run->refusal_event = "input_rejected";
  /* The event has the name as given (JSON-escaped); the message line,
   * printed on stderr too, must not carry a hostile name's escapes. */
  return sr_error_set(err, SR_EXIT_REFUSED, 0, "input_name",
                      "input name '%s' (from %s): %s%s%s",
                      sr_printable(in->name, (char[96]){0}, 96),
                      sr_printable(in->path, (char[256]){0}, 256), why,
                      other ? sr_printable(other, (char[96]){0}, 96) : "",
                      other ? "'" : "");
}

/*
 * The names the inputs get under /workspace/inputs, before the run
 * directory exists, so that a hostile name does not even use up its
 * execution id: each one valid (sr_input_name_check), and no name both a
 * file and the directory of another ("materials" and "materials/x").
 * Duplicates are the command line's (cli.c).
 */
static int check_input_names(struct sr_run *run, struct sr_error *err) {
  const struct sr_args *a = run->args;
  const char *why;

  for (size_t i = 0; i < a->n_inputs; i++)
    if (sr_input_name_check(a->inputs[i].name, &why) < 0)
      return reject_input(run, &a->inputs[i], why, NULL, err);
  for (size_t i = 0; i < a->n_inputs; i++) {
    const char *slash = strchr(a->inputs[i].name, '/');
    size_t n = slash ? (size_t)(slash - a->inputs[i].name) : 0;

    for (size_t k = 0; slash && k < a->n_inputs; k++)
      if (strlen(a->inputs[k].name) == n &&
          !strncmp(a->inputs[k].name, a->inputs[i].name, n))
        return reject_input(run, &a->inputs[k],
                            "a file, and the directory of input '",
                            a->inputs[i].name, err);
  }
  return 0;
}

int sr_stage_admit(struct sr_run *run, struct sr_error *err) {
  _cleanup_free_ char *root = NULL;
  int audit_copy = -1, r;

  r = resolve_bundle(run, err);
  if (r >= 0)
    r = workspace_root(run, &root, err);
  if (r >= 0)
    r = check_capability(run, err);
  if (r >= 0)
    r = check_input_names(run, err);
  if (r < 0)
    return r;
  r = sr_workspace_create(&run->ws, root, run->tenant, run->execution_id,
                          run->audit_key, &audit_copy, err);
  if (r < 0) {
    /* A run directory whose ledger is linked (a later step failed: its
     * logs directory, say) is on the record: its audit.jsonl takes the
     * events down to execution_completed, as --gc expects of it.  When
     * the copy cannot take them either, the run's own error stands. */
    if (audit_copy >= 0) {
      struct sr_error ignored = {0};
      if (sr_audit_attach_copy(&run->audit, audit_copy, &ignored) >= 0)
        audit_copy = -1;
      sr_error_clear(&ignored);
    }
    safe_close(audit_copy);
    return r;
  }
  r = sr_audit_attach_copy(&run->audit, audit_copy, err);
  if (r < 0) {
    /* No room for even the final events: nothing is on the run's record,
     * and none would be but the stream's.  A directory with an empty
     * audit.jsonl would be closed by gc as abandoned, its id refused as
     * one whose supervisor died; it goes instead. */
    safe_close(audit_copy);
    sr_workspace_unmake(&run->ws, run->execution_id);
    return r;
  }
  r = sr_run_emit_started(run, err);
  /* Written nowhere (no room for it beside the final events' room, say):
   * the same, and the run's end writes it again, naming no run_dir. */
  if (r < 0 && run->audit.seq == 0 && sr_audit_drop_empty_copy(&run->audit)) {
    run->started = false;
    sr_workspace_unmake(&run->ws, run->execution_id);
  }
  return r;
}

/* ------------------------------------------------------------ verify */

/* The staging directory, chosen once the bundle's size is known: on a
 * tmpfs when the bundle is small and the run has no inputs
 * (sr_workspace_make_staging).  --explain only hashes: -1. */
static int pick_staging(struct sr_run *run, const struct sr_bundle_walk *bw,
                        int *dst_dirfd, struct sr_error *err) {
  int r;

  *dst_dirfd = -1;
  if (run->explain)
    return 0;
  r = sr_workspace_make_staging(&run->ws, sr_bundle_walk_bytes(bw),
                                run->args->n_inputs == 0, err);
  if (r < 0)
    return r;
  *dst_dirfd = run->ws.bundle_fd;
  return 0;
}

/*
 * The statement for this bundle: --signature FILE, else BUNDLE.sig beside
 * the bundle when it exists: beside the directory it resolves to, which a
 * refusal names (a symbolic link's own LINK.sig is not looked at).  *text
 * NULL: unsigned.
 */
static int read_statement(const struct sr_run *run, char **text, size_t *len,
                          struct sr_error *err) {
  _cleanup_free_ char *conventional = NULL;
  _cleanup_close_ int fd = -1;
  const char *path = run->args->signature;
  int r;

  *text = NULL;
  if (!path) {
    if (asprintf(&conventional, "%s.sig", run->bundle_path) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "statement");
    path = conventional;
  }
  /* Whoever owns the bundle's parent can plant BUNDLE.sig: a FIFO there
   * must not hang the run before any timer is armed. */
  fd = open_trust_file(path, "statement", SR_STATEMENT_MAX_BYTES,
                       !run->args->signature, "statement_invalid", err);
  if (fd == -ENOENT && !run->args->signature)
    return 0;
  if (fd < 0)
    return fd;
  /* One byte more than allowed, so that a file that grew since the check
   * is refused by the parser with its own message. */
  r = sr_read_fd(fd, SR_STATEMENT_MAX_BYTES + 1, text, len);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_REFUSED, -r, "statement_invalid",
                        "cannot read statement %s", path);
  return 0;
}

/* Signature and tier: after the digest and the manifest are known, before
 * the skill's part of the policy.  Refusals are exit 123 with their own
 * reason. */
static int verify_trust(struct sr_run *run, struct sr_error *err) {
  const struct sr_policy *p = &run->policy;
  _cleanup_free_ char *text = NULL;
  size_t len = 0;
  int r;

  r = read_statement(run, &text, &len, err);
  if (r < 0)
    return r;
  if (!text) {
    if (p->require_signature)
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "signature_required",
                          "bundle is unsigned (no --signature, no %s.sig) and "
                          "the profile or skillrun.conf requires a signature",
                          run->bundle_path);
    return 0;
  }
  r = sr_statement_parse(text, len, &run->statement, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < p->n_trust_keys; i++) {
    struct sr_trust_key *k = NULL;
    r = sr_trust_key_load_platform(p->trust_keys[i].path, false, &k, err);
    if (r < 0)
      return r;
    r = sr_keyring_add(&run->keyring, p->trust_keys[i].tier,
                       p->trust_keys[i].tenant, k);
    if (r < 0) {
      sr_trust_key_free(k);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "oom", "keyring");
    }
  }
  r = sr_statement_verify(&run->statement, text, &run->keyring,
                          p->tiers_allowed, run->tenant, run->bundle.digest,
                          run->manifest.name, run->manifest.version, err);
  if (r < 0)
    return r;
  run->tier = run->statement.tier;
  return 0;
}

/* --explain of an unsigned bundle under require-signature still shows the
 * policy; the refusal it would meet is listed among its warnings. */
static int explain_refusal(struct sr_run *run, struct sr_error *err) {
  if (asprintf(&run->would_refuse, "a run would be refused: %s", err->msg) <
      0) {
    run->would_refuse = NULL;
    return -ENOMEM;
  }
  run->would_refuse_at = run->policy.warnings.n;
  sr_error_clear(err);
  return 0;
}

/* The pin: --expect-sha256 against the digest just computed. */
static int check_pin(struct sr_run *run, struct sr_error *err) {
  const char *want = run->args->expect_sha256;

  if (!want || !strcmp(run->bundle.digest + strlen("sha256:"), want))
    return 0;
  /* Both in the digest's own form, sha256:HEX, whichever the flag had. */
  run->refusal_extra = json_pack("{s:s+, s:s}", "expected", "sha256:", want,
                                 "actual", run->bundle.digest);
  return sr_error_set(err, SR_EXIT_REFUSED, 0, "digest_mismatch",
                      "bundle digest %s does not match the expected "
                      "sha256:%s",
                      run->bundle.digest, want);
}

static int emit_verified(struct sr_run *run, struct sr_error *err) {
  const bool signed_ = run->tier != SR_TIER_UNSIGNED;
  int r;

  r = sr_run_emit_warnings(run, &run->manifest.warnings, "manifest", err);
  if (r < 0)
    return r;
  return sr_audit_emit(
      &run->audit, "bundle_verified",
      json_pack(
          "{s:s, s:I, s:I, s:I, s:b, s:s, s:o, s:o, s:b, s:o}", "digest",
          run->bundle.digest, "files", (json_int_t)run->bundle.n_files, "dirs",
          (json_int_t)run->bundle.n_dirs, "bytes",
          (json_int_t)run->bundle.total_bytes, "pinned",
          run->args->expect_sha256 != NULL, "tier", sr_tier_name(run->tier),
          "key_id", signed_ ? json_string(run->statement.key_id) : json_null(),
          "signed_at", signed_ ? json_string(run->statement.time) : json_null(),
          "capability", run->have_capability, "staging",
          run->ws.staging_path
              ? sr_json_string_lossy(run->ws.staging_path,
                                     strlen(run->ws.staging_path))
              : json_null()),
      err);
}

/* The tmpfs staging base ran out of room or inodes during the copy (it is
 * shared: others fill it too): the bundle is walked and copied again into
 * the run directory, with a warning.  A walk is used up by its copy. */
static int restage(struct sr_run *run, struct sr_bundle_walk **walk, int *dst,
                   struct sr_error *err) {
  const uint64_t bytes = sr_bundle_walk_bytes(*walk);
  int r;

  r = sr_audit_emit(
      &run->audit, "warning",
      json_pack("{s:s, s:s}", "reason", "staging", "message",
                "the tmpfs staging base ran out of room or inodes during the "
                "copy: the bundle is staged in the run directory"),
      err);
  if (r < 0)
    return r;
  sr_error_clear(err);
  sr_bundle_walk_free(*walk);
  *walk = NULL;
  r = sr_workspace_restage_in_run_dir(&run->ws, bytes, err);
  if (r >= 0)
    r = sr_bundle_walk(run->bundle_path, NULL, walk, err);
  if (r < 0)
    return r;
  *dst = run->ws.bundle_fd;
  return sr_bundle_copy(*walk, *dst, false, &run->bundle, err);
}

int sr_stage_verify(struct sr_run *run, struct sr_error *err) {
  _cleanup_bundle_walk_ struct sr_bundle_walk *walk = NULL;
  int dst = -1, r;

  /* A run resolved it when admitted. */
  if (!run->bundle_path && (r = resolve_bundle(run, err)) < 0)
    return r;
  /* The bundle's shape first (a refusal reads nothing and gets no
   * staging), then its bytes, copied while hashed. */
  r = sr_bundle_walk(run->bundle_path, NULL, &walk, err);
  if (r >= 0)
    r = pick_staging(run, walk, &dst, err);
  if (r >= 0)
    r = sr_bundle_copy(walk, dst, false, &run->bundle, err);
  if (r < 0 && dst >= 0 && (err->err == ENOSPC || err->err == EDQUOT) &&
      sr_workspace_staging_on_tmpfs(&run->ws))
    r = restage(run, &walk, &dst, err);
  if (r >= 0)
    r = check_pin(run, err);
  if (r >= 0 && run->have_capability)
    r = sr_capability_check_digest(&run->capability, run->bundle.digest, err);
  if (r < 0)
    return r;
  /* A manifest's error names the bundle, as the walk's do. */
  if (!run->bundle.skill_md)
    return sr_bundle_error_named(err, run->bundle_path,
                                 sr_error_set(err, SR_EXIT_REFUSED, 0,
                                              "manifest_invalid",
                                              "SKILL.md missing or too large"));
  r = sr_manifest_parse(run->bundle.skill_md, run->bundle.skill_md_len,
                        basename(run->bundle_path), &run->manifest, err);
  if (r < 0)
    return sr_bundle_error_named(err, run->bundle_path, r);
  run->have_manifest = true;
  /* From here on every event names the skill, a refusal too. */
  if (run->audit_open) {
    r = sr_audit_set_skill(&run->audit, run->manifest.name,
                           run->manifest.version);
    if (r == -ENOSPC)
      return sr_error_set(err, SR_EXIT_FAILED, ENOSPC, "audit_write",
                          "audit: no room left in the run's audit.jsonl for "
                          "the skill's name and version (its file system "
                          "is full)");
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "audit", "audit");
  }
  r = verify_trust(run, err);
  if (r < 0 && run->explain && !strcmp(err->reason, "signature_required"))
    r = explain_refusal(run, err);
  if (r < 0 || run->explain)
    return r;
  r = emit_verified(run, err);
  if (r >= 0)
    run->verified = true;
  return r;
}
