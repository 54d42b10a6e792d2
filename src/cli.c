/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * argv -> struct sr_args.  Pure: no file is opened and nothing is printed
 * (only sr_cli_help and sr_cli_version write, to the stream they are given).
 * Every usage error becomes one line in the sr_error; main.c prints it with
 * the "Try 'skillrun --help'" hint and exits 125.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libmnl/libmnl.h>
#include <openssl/opensslv.h>
#include <seccomp.h>
#include <sys/capability.h>
#include <yaml.h>

#include "cgroup.h"
#include "cli.h"
#include "magic.h"
#include "ossl.h"
#include "paths.h"
#include "seccomp.h"
#include "text.h"
#include "tier.h"
#include "util.h"

/* Bounds on what one command line may ask for (limits: sr_limit_defs). */
#define SR_MAX_INPUTS 64

enum {
  OPT_PROFILE = 'p',
  OPT_INPUT = 'i',
  OPT_VERBOSE = 'v',
  OPT_HELP = 'h',
  OPT_VERSION = 'V',
  /* Long-only options sit above every char value, so getopt's optopt can
   * tell "--digest=x" (optopt >= 0x100) from an unknown short option. */
  OPT_CONF = 0x100,
  OPT_EXPECT_SHA256,
  OPT_SIGNATURE,
  OPT_TENANT,
  OPT_EXECUTION_ID,
  OPT_WORKSPACE_ROOT,
  OPT_CGROUP_PARENT,
  OPT_NETWORK,
  OPT_AUDIT_FD,
  OPT_AUDIT_FILE,
  OPT_LOG_PASSTHROUGH,
  OPT_DIGEST,
  OPT_EXPLAIN,
  OPT_VERIFY_AUDIT,
  OPT_GC,
  OPT_SIGN,
  OPT_TIER,
  OPT_CAPABILITY,
  OPT_CAPABILITY_FD,
  OPT_AUDIT_KEY,
  OPT_STDIN,
  OPT_LABEL,
  OPT_METRICS,
  /* --<name> of each flag-settable limit: OPT_LIMIT + enum sr_limit_id. */
  OPT_LIMIT = 0x200,
};

/* The options before the limits' in --help and in "did you mean". */
static const struct option options_before[] = {
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"conf", required_argument, NULL, OPT_CONF},
    {"expect-sha256", required_argument, NULL, OPT_EXPECT_SHA256},
    {"signature", required_argument, NULL, OPT_SIGNATURE},
    {"tenant", required_argument, NULL, OPT_TENANT},
    {"execution-id", required_argument, NULL, OPT_EXECUTION_ID},
    {"label", required_argument, NULL, OPT_LABEL},
    {"input", required_argument, NULL, OPT_INPUT},
    {"workspace-root", required_argument, NULL, OPT_WORKSPACE_ROOT},
    {"cgroup-parent", required_argument, NULL, OPT_CGROUP_PARENT},
};

/* ... and after them. */
static const struct option options_after[] = {
    {"network", required_argument, NULL, OPT_NETWORK},
    {"audit-fd", required_argument, NULL, OPT_AUDIT_FD},
    {"audit-file", required_argument, NULL, OPT_AUDIT_FILE},
    {"log-passthrough", no_argument, NULL, OPT_LOG_PASSTHROUGH},
    {"stdin", no_argument, NULL, OPT_STDIN},
    {"digest", no_argument, NULL, OPT_DIGEST},
    {"explain", no_argument, NULL, OPT_EXPLAIN},
    {"verify-audit", required_argument, NULL, OPT_VERIFY_AUDIT},
    {"gc", no_argument, NULL, OPT_GC},
    {"metrics", no_argument, NULL, OPT_METRICS},
    {"sign", required_argument, NULL, OPT_SIGN},
    {"tier", required_argument, NULL, OPT_TIER},
    {"capability", required_argument, NULL, OPT_CAPABILITY},
    {"capability-fd", required_argument, NULL, OPT_CAPABILITY_FD},
    {"audit-key", required_argument, NULL, OPT_AUDIT_KEY},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
};

#define N_OPTIONS                                                              \
  (SR_ARRAY_SIZE(options_before) + SR__LIM_MAX + SR_ARRAY_SIZE(options_after))
/* sr_cli_parse tracks the options seen in a 64-bit mask. */
_Static_assert(N_OPTIONS <= 64, "too many options for the `seen` mask");

/*
 * Every long option: the fixed ones and --<name> of each limit the command
 * line may set (sr_limit_defs), NULL-terminated, as getopt_long wants.
 * Built on first use from constant tables, so it is constant too.
 */
static const struct option *long_options_table(void) {
  static struct option all[N_OPTIONS + 1];
  static bool built;
  size_t n = 0;

  if (built)
    return all;
  for (size_t i = 0; i < SR_ARRAY_SIZE(options_before); i++)
    all[n++] = options_before[i];
  for (int id = 0; id < SR__LIM_MAX; id++)
    if (sr_limit_settable(id, SR_SRC_FLAG))
      all[n++] = (struct option){sr_limit_defs[id].name, required_argument,
                                 NULL, OPT_LIMIT + id};
  for (size_t i = 0; i < SR_ARRAY_SIZE(options_after); i++)
    all[n++] = options_after[i];
  all[n] = (struct option){NULL, 0, NULL, 0};
  built = true;
  return all;
}

/*
 * "-" first: non-options come back in order as option 1, whatever
 * POSIXLY_CORRECT says, so BUNDLE may sit between options without argv being
 * permuted.  ":" next: a missing argument is reported as ':' (not '?').
 */
static const char short_options[] = "-:p:i:vhV";

static int option_index(int val) {
  const struct option *opts = long_options_table();

  for (size_t i = 0; opts[i].name; i++)
    if (opts[i].val == val)
      return (int)i;
  return -1;
}

static const char *option_name(int val) {
  int i = option_index(val);
  return i >= 0 ? long_options_table()[i].name : "?";
}

static int usage_error(struct sr_error *err, const char *fmt, ...)
    _printf_(2, 3);
static int usage_error(struct sr_error *err, const char *fmt, ...) {
  char line[sizeof(err->msg)];
  va_list ap;

  va_start(ap, fmt);
  /* False positive: va_start() just above initialised ap; clang 14's
   * valist checker reports this call all the same.
   * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  return sr_error_set(err, SR_EXIT_FAILED, 0, "usage", "%s", line);
}

static int oom_error(struct sr_error *err) {
  return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "usage",
                      "parsing the command line");
}

/*
 * A user-supplied value made safe to echo in one error line: control
 * characters (terminal escapes, newlines) become '?' and long values are cut,
 * so a hostile argument cannot forge or flood the diagnostics.
 */
#define SR_QUOTE_MAX 80
static const char *quote(const char *s, char buf[SR_QUOTE_MAX + 4]) {
  size_t i;

  for (i = 0; i < SR_QUOTE_MAX && s[i]; i++) {
    unsigned char c = (unsigned char)s[i];
    buf[i] = s[i];
    if (c < 0x20 || c == 0x7f)
      buf[i] = '?';
  }
  if (s[i])
    memcpy(buf + i, "...", 4);
  else
    buf[i] = '\0';
  return buf;
}

static int set_string(char **slot, int val, const char *value,
                      struct sr_error *err) {
  if (!*value)
    return usage_error(err, "option '--%s' needs a non-empty value",
                       option_name(val));
  *slot = strdup(value);
  if (!*slot)
    return oom_error(err);
  return 0;
}

/* --<name> VALUE of a limit, in its kind's syntax; 0 only where the limit's
 * minimum is 0 (--log-cap 0 keeps no output at all).  A value below the
 * minimum is a usage error here, like a malformed one (skillrun(1): one
 * line and the hint, no audit stream, nothing staged); one above the cap
 * is the policy's to clamp. */
static int set_limit(struct sr_args *a, enum sr_limit_id id, const char *value,
                     struct sr_error *err) {
  const struct sr_limit_def *d = &sr_limit_defs[id];
  const uint64_t max = d->flag_max ? d->flag_max : UINT64_MAX;
  char q[SR_QUOTE_MAX + 4];
  uint64_t v;

  int r = sr_limit_parse(d->kind, value, max, &v);

  /* A count's message gives its range; a size or a duration that is well
   * formed but too large is not a typo. */
  if (r == -ERANGE && d->kind != SR_KIND_COUNT)
    return usage_error(err,
                       "invalid --%s value '%s': too large to be a limit; "
                       "give what the run needs",
                       d->name, quote(value, q));
  if (r < 0)
    switch (d->kind) {
    case SR_KIND_SIZE:
      return usage_error(err,
                         "invalid --%s value '%s': expected a size such as "
                         "256M, 1G or 268435456",
                         d->name, quote(value, q));
    case SR_KIND_DURATION:
      return usage_error(err,
                         "invalid --%s value '%s': expected a duration such "
                         "as 30s, 5m, 1h or 250ms",
                         d->name, quote(value, q));
    case SR_KIND_COUNT:
      return usage_error(err,
                         "invalid --%s value '%s': expected a whole number "
                         "from %d to %" PRIu64,
                         d->name, quote(value, q), d->min > 0 ? 1 : 0, max);
    }
  if (v == 0 && d->min > 0)
    return usage_error(err, "invalid --%s value '%s': must be more than 0",
                       d->name, quote(value, q));
  if (v < d->min) {
    char min[32];
    sr_limit_format(d->kind, d->min, min, sizeof(min));
    return usage_error(err, "invalid --%s value '%s': below the minimum %s",
                       d->name, quote(value, q), min);
  }
  a->layer.limits[id].set = true;
  a->layer.limits[id].value = v;
  return 0;
}

int sr_cli_id_refusal(const char *kind, const char *value,
                      struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  size_t i;

  /* Quoted for the audit stream too, which takes valid UTF-8 only: a
   * valid id is ASCII, so every other byte is shown as '?'. */
  for (i = 0; i < SR_QUOTE_MAX && value[i]; i++) {
    unsigned char c = (unsigned char)value[i];
    q[i] = (char)(c < 0x20 || c >= 0x7f ? '?' : c);
  }
  if (value[i])
    memcpy(q + i, "...", 4);
  else
    q[i] = '\0';
  /* Refused (123), not a usage error: ids reach paths and cgroup names,
   * and an orchestrator must be able to tell a hostile id from a typo. */
  return sr_error_set(err, SR_EXIT_REFUSED, 0, "invalid_id",
                      "invalid %s id '%s': use 1-64 of A-Z a-z 0-9 . _ -, "
                      "starting with a letter or digit, without '..'",
                      kind, q);
}

/* An invalid id is kept as given and marked: a run refuses it on the
 * record (sr_stage_start); the other modes refuse it here. */
static int set_id(char **slot, bool *invalid, int val, const char *value,
                  struct sr_error *err) {
  if (sr_valid_id(value))
    return set_string(slot, val, value, err);
  /* Even an empty one: it is refused, not taken for "not given". */
  *slot = strdup(value);
  if (!*slot)
    return oom_error(err);
  *invalid = true;
  return 0;
}

static int set_sha256(char **slot, const char *value, struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  const char *hex = value;

  if (!strncmp(hex, "sha256:", 7))
    hex += 7;
  if (!sr_valid_hex(hex, 64))
    return usage_error(err,
                       "invalid --expect-sha256 '%s': expected 64 lowercase "
                       "hex digits, optionally prefixed with 'sha256:'",
                       quote(value, q));
  return set_string(slot, OPT_EXPECT_SHA256, hex, err);
}

static int set_audit_fd(int *slot, const char *value, struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  uint64_t v;

  if (sr_parse_uint(value, INT_MAX, &v) < 0)
    return usage_error(err,
                       "invalid --audit-fd '%s': expected a file "
                       "descriptor number",
                       quote(value, q));
  /* 0 is the skill-facing stdin and 2 carries skillrun's own diagnostics:
   * interleaving the audit chain with either would corrupt it. */
  if (v == 0 || v == 2)
    return usage_error(err,
                       "invalid --audit-fd %s: use 1 or a descriptor "
                       "above 2",
                       v == 0 ? "0" : "2");
  *slot = (int)v;
  return 0;
}

/*
 * Basename of a path without touching the file system: trailing slashes
 * ignored.  Returns a malloc'd string (empty for "/" or "", which the
 * caller then refuses) or NULL on ENOMEM.
 */
static char *path_basename(const char *path) {
  size_t end = strlen(path), start;

  while (end > 0 && path[end - 1] == '/')
    end--;
  start = end;
  while (start > 0 && path[start - 1] != '/')
    start--;
  return strndup(path + start, end - start);
}

/*
 * PATH[:NAME].  The split is at the last ':', so a path that itself contains
 * a ':' needs an explicit ":NAME" (predictable beats guessing).  An explicit
 * NAME, or the one taken from PATH, is checked by the run
 * (sr_input_name_check, refused with an input_rejected event, since a
 * hostile name is worth recording); a PATH without a last component
 * ("/", "a/..") has no name to take.
 */
static int add_input(struct sr_args *a, const char *value,
                     struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  _cleanup_free_ char *path = NULL, *name = NULL;
  const char *colon = strrchr(value, ':');
  struct sr_input_arg *grown;

  if (a->n_inputs >= SR_MAX_INPUTS)
    return usage_error(err, "too many --input options (at most %d)",
                       SR_MAX_INPUTS);
  if (colon) {
    path = strndup(value, (size_t)(colon - value));
    name = strdup(colon + 1);
  } else {
    path = strdup(value);
    name = path_basename(value);
  }
  if (!path || !name)
    return oom_error(err);
  if (!*path)
    return usage_error(err, "invalid --input '%s': empty PATH",
                       quote(value, q));
  /* No last component at all ("/", "a/.."): nothing to name the file by.
   * A last component that is not a valid NAME (a control character, not
   * UTF-8, over 255 bytes) is the run's to refuse and record, as for an
   * explicit NAME (skillrun(1): 123, input_rejected). */
  if (!colon && (!*name || !strcmp(name, ".") || !strcmp(name, "..")))
    return usage_error(err,
                       "invalid --input '%s': no file name to use: give "
                       "PATH:NAME",
                       quote(value, q));
  for (size_t i = 0; i < a->n_inputs; i++)
    if (!strcmp(a->inputs[i].name, name))
      return usage_error(err, "duplicate --input name '%s'", quote(name, q));

  grown = realloc(a->inputs, (a->n_inputs + 1) * sizeof(*grown));
  if (!grown)
    return oom_error(err);
  a->inputs = grown;
  a->inputs[a->n_inputs].path = TAKE_PTR(path);
  a->inputs[a->n_inputs].name = TAKE_PTR(name);
  a->n_inputs++;
  return 0;
}

/*
 * KEY=VALUE, split at the first '=' (a value may contain more).  Refused
 * here rather than cleaned: labels go verbatim into the audit stream and
 * metadata.json, where an orchestrator finds its trace id as it gave it.
 */
static int add_label(struct sr_args *a, const char *value,
                     struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  const char *eq = strchr(value, '=');
  _cleanup_free_ char *key = NULL, *val = NULL;
  struct sr_label *grown;

  if (a->n_labels >= SR_LABELS_MAX)
    return usage_error(err, "too many --label options (at most %d)",
                       SR_LABELS_MAX);
  if (!eq)
    return usage_error(err, "invalid --label '%s': expected KEY=VALUE",
                       quote(value, q));
  key = strndup(value, (size_t)(eq - value));
  val = strdup(eq + 1);
  if (!key || !val)
    return oom_error(err);
  if (!sr_valid_label_key(key))
    return usage_error(err,
                       "invalid --label key '%s': use 1-%d of a-z 0-9 _ . -, "
                       "starting with a letter",
                       quote(key, q), SR_LABEL_KEY_MAX);
  if (!sr_valid_label_value(val))
    return usage_error(err,
                       "invalid --label value for '%s': at most %d bytes of "
                       "UTF-8 text without control, bidirectional formatting "
                       "or line separator characters",
                       key, SR_LABEL_VALUE_MAX);
  for (size_t i = 0; i < a->n_labels; i++)
    if (!strcmp(a->labels[i].key, key))
      return usage_error(err, "duplicate --label key '%s'", key);
  grown = realloc(a->labels, (a->n_labels + 1) * sizeof(*grown));
  if (!grown)
    return oom_error(err);
  a->labels = grown;
  a->labels[a->n_labels].key = TAKE_PTR(key);
  a->labels[a->n_labels].value = TAKE_PTR(val);
  a->n_labels++;
  return 0;
}

/*
 * "--name[=value]" that is not an exact option name.  Abbreviations are
 * refused on purpose: the spellings are the interface, and an accepted
 * "--mem" would change meaning the day an option "--memory-swap" is added.
 */
static int unknown_long_option(const char *arg, struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  size_t len = strcspn(arg + 2, "=");
  _cleanup_free_ char *opt = strndup(arg, len + 2);
  const struct option *opts = long_options_table();
  char names[512] = "";
  size_t used = 0;

  if (!opt)
    return oom_error(err);
  for (size_t i = 0; len > 0 && opts[i].name; i++) {
    int n;
    if (strncmp(opts[i].name, arg + 2, len) != 0)
      continue;
    n = snprintf(names + used, sizeof(names) - used, "%s'--%s'",
                 used ? " or " : "", opts[i].name);
    if (n < 0 || (size_t)n >= sizeof(names) - used)
      break;
    used += (size_t)n;
  }
  if (used)
    return usage_error(err, "unrecognized option '%s' (did you mean %s?)",
                       quote(opt, q), names);
  /* No option starts so: a typo of one ("--memroy", "--timout")? */
  if (len > 0) {
    _cleanup_free_ char *typed = strndup(arg + 2, len);
    struct sr_nearest near;

    if (!typed)
      return oom_error(err);
    sr_nearest_init(&near, typed);
    for (size_t i = 0; opts[i].name; i++)
      sr_nearest_offer(&near, opts[i].name);
    if (near.best)
      return usage_error(err, "unrecognized option '%s' (did you mean '--%s'?)",
                         quote(opt, q), near.best);
  }
  return usage_error(err, "unrecognized option '%s'", quote(opt, q));
}

/* getopt reported '?' or ':' for the element just consumed. */
static int getopt_failure(int c, char *const av[], int n,
                          struct sr_error *err) {
  char q[SR_QUOTE_MAX + 4];
  const char *arg = (optind > 0 && optind <= n) ? av[optind - 1] : "";
  bool is_long = !strncmp(arg, "--", 2);

  if (c == ':') {
    if (is_long || optopt >= 0x100)
      return usage_error(err, "option '--%s' requires an argument",
                         option_name(optopt));
    return usage_error(err, "option '-%c' requires an argument", optopt);
  }
  if (optopt != 0 && is_long)
    return usage_error(err, "option '--%s' doesn't allow an argument",
                       option_name(optopt));
  if (optopt != 0)
    return usage_error(err, "unrecognized option '-%c'",
                       (optopt > 0x20 && optopt < 0x7f) ? optopt : '?');

  if (is_long)
    return unknown_long_option(arg, err);
  return usage_error(err, "unrecognized option '%s'", quote(arg, q));
}

static bool mode_takes_bundle(enum sr_mode m) {
  return m == SR_MODE_RUN || m == SR_MODE_DIGEST || m == SR_MODE_EXPLAIN ||
         m == SR_MODE_SIGN;
}

static int mode_option(enum sr_mode m) {
  switch (m) {
  case SR_MODE_DIGEST:
    return OPT_DIGEST;
  case SR_MODE_EXPLAIN:
    return OPT_EXPLAIN;
  case SR_MODE_VERIFY_AUDIT:
    return OPT_VERIFY_AUDIT;
  case SR_MODE_GC:
    return OPT_GC;
  case SR_MODE_METRICS:
    return OPT_METRICS;
  case SR_MODE_SIGN:
    return OPT_SIGN;
  case SR_MODE_HELP:
    return OPT_HELP;
  case SR_MODE_VERSION:
    return OPT_VERSION;
  case SR_MODE_RUN:
    break;
  }
  return 0;
}

static int set_mode(struct sr_args *a, enum sr_mode m, struct sr_error *err) {
  if (a->mode != SR_MODE_RUN && a->mode != m)
    return usage_error(err, "options '--%s' and '--%s' cannot be combined",
                       option_name(mode_option(a->mode)),
                       option_name(mode_option(m)));
  a->mode = m;
  return 0;
}

static int handle_option(struct sr_args *a, int c, const char *val,
                         struct sr_error *err) {
  switch (c) {
  case OPT_PROFILE:
    return set_string(&a->profile, c, val, err);
  case OPT_CONF:
    return set_string(&a->conf, c, val, err);
  case OPT_EXPECT_SHA256:
    return set_sha256(&a->expect_sha256, val, err);
  case OPT_SIGNATURE:
    return set_string(&a->signature, c, val, err);
  case OPT_TENANT:
    return set_id(&a->tenant, &a->tenant_invalid, c, val, err);
  case OPT_EXECUTION_ID:
    return set_id(&a->execution_id, &a->execution_id_invalid, c, val, err);
  case OPT_INPUT:
    return add_input(a, val, err);
  case OPT_LABEL:
    return add_label(a, val, err);
  case OPT_WORKSPACE_ROOT: {
    int r = set_string(&a->workspace_root, c, val, err);
    a->layer.workspace_root = a->workspace_root;
    return r;
  }
  case OPT_CGROUP_PARENT:
    return set_string(&a->cgroup_parent, c, val, err);
  case OPT_NETWORK: {
    char q[SR_QUOTE_MAX + 4];
    if (sr_network_mode_from_name(val, &a->layer.network) < 0)
      return usage_error(err,
                         "invalid --network '%s': use deny, allowlist or "
                         "host (allow is host)",
                         quote(val, q));
    return 0;
  }
  case OPT_AUDIT_FD:
    return set_audit_fd(&a->audit_fd, val, err);
  case OPT_AUDIT_FILE:
    return set_string(&a->audit_file, c, val, err);
  case OPT_LOG_PASSTHROUGH:
    a->log_passthrough = true;
    return 0;
  case OPT_STDIN:
    a->forward_stdin = true;
    return 0;
  case OPT_VERBOSE:
    a->verbose = true;
    return 0;
  case OPT_DIGEST:
    return set_mode(a, SR_MODE_DIGEST, err);
  case OPT_EXPLAIN:
    return set_mode(a, SR_MODE_EXPLAIN, err);
  case OPT_VERIFY_AUDIT: {
    int r = set_mode(a, SR_MODE_VERIFY_AUDIT, err);
    if (r < 0)
      return r;
    return set_string(&a->verify_audit, c, val, err);
  }
  case OPT_GC:
    return set_mode(a, SR_MODE_GC, err);
  case OPT_METRICS:
    return set_mode(a, SR_MODE_METRICS, err);
  case OPT_SIGN: {
    int r = set_mode(a, SR_MODE_SIGN, err);
    if (r < 0)
      return r;
    return set_string(&a->sign_key, c, val, err);
  }
  case OPT_TIER: {
    char q[SR_QUOTE_MAX + 4];
    if (sr_tier_from_name(val) < 0)
      return usage_error(err,
                         "invalid --tier '%s': use official, verified, "
                         "community or tenant",
                         quote(val, q));
    return set_string(&a->tier, c, val, err);
  }
  case OPT_CAPABILITY:
    return set_string(&a->capability, c, val, err);
  case OPT_CAPABILITY_FD: {
    char q[SR_QUOTE_MAX + 4];
    uint64_t v;
    /* 0-2 are the caller's stdio, never a token channel. */
    if (sr_parse_uint(val, INT_MAX, &v) < 0 || v <= 2)
      return usage_error(err,
                         "invalid --capability-fd '%s': expected a file "
                         "descriptor above 2",
                         quote(val, q));
    a->capability_fd = (int)v;
    return 0;
  }
  case OPT_AUDIT_KEY:
    return set_string(&a->audit_key, c, val, err);
  case OPT_HELP:
    return set_mode(a, SR_MODE_HELP, err);
  case OPT_VERSION:
    return set_mode(a, SR_MODE_VERSION, err);
  }
  if (c >= OPT_LIMIT && c < OPT_LIMIT + SR__LIM_MAX)
    return set_limit(a, (enum sr_limit_id)(c - OPT_LIMIT), val, err);
  return usage_error(err, "internal error: unhandled option %d", c);
}

static int copy_command(struct sr_args *a, char *const argv[], int from,
                        int argc, struct sr_error *err) {
  size_t n = (size_t)(argc - from);

  a->command = calloc(n + 1, sizeof(char *));
  if (!a->command)
    return oom_error(err);
  for (size_t i = 0; i < n; i++) {
    a->command[i] = strdup(argv[from + (int)i]);
    if (!a->command[i])
      return oom_error(err);
    a->n_command++;
  }
  return 0;
}

/*
 * The options each mode reads, besides its own: what run.c (a run and
 * --explain) and src/cmd-*.c look at in struct sr_args.  Any other option
 * is refused in that mode, so that no option given seems to do something
 * it does not (skillrun(1), OPTIONS).  OPT_LIMIT stands for every limit;
 * each list ends at 0.
 */
#define MODE_TAKES_MAX 20
static const int mode_takes[][MODE_TAKES_MAX] = {
    [SR_MODE_RUN] = {OPT_PROFILE, OPT_CONF, OPT_EXPECT_SHA256, OPT_SIGNATURE,
                     OPT_CAPABILITY, OPT_CAPABILITY_FD, OPT_TENANT,
                     OPT_EXECUTION_ID, OPT_LABEL, OPT_INPUT, OPT_WORKSPACE_ROOT,
                     OPT_CGROUP_PARENT, OPT_LIMIT, OPT_NETWORK, OPT_AUDIT_FD,
                     OPT_AUDIT_FILE, OPT_LOG_PASSTHROUGH, OPT_STDIN,
                     OPT_VERBOSE},
    /* The run's stages up to the final policy: no capability, no inputs,
     * no audit stream, no run directory, no cgroup (run.c). */
    [SR_MODE_EXPLAIN] = {OPT_PROFILE, OPT_CONF, OPT_EXPECT_SHA256,
                         OPT_SIGNATURE, OPT_TENANT, OPT_WORKSPACE_ROOT,
                         OPT_LIMIT, OPT_NETWORK, OPT_STDIN},
    [SR_MODE_DIGEST] = {OPT_EXPECT_SHA256, OPT_VERBOSE},
    [SR_MODE_VERIFY_AUDIT] = {OPT_AUDIT_KEY},
    [SR_MODE_GC] = {OPT_CONF, OPT_WORKSPACE_ROOT, OPT_CGROUP_PARENT},
    [SR_MODE_METRICS] = {OPT_CONF, OPT_WORKSPACE_ROOT},
    [SR_MODE_SIGN] = {OPT_TIER, OPT_SIGNATURE, OPT_TENANT},
    [SR_MODE_HELP] = {0},
    [SR_MODE_VERSION] = {0},
};
_Static_assert(SR_ARRAY_SIZE(mode_takes) == SR_MODE_VERSION + 1,
               "every mode has its list of options");

static bool mode_takes_option(enum sr_mode m, int val) {
  if (val == mode_option(m))
    return true;
  for (size_t i = 0; i < MODE_TAKES_MAX && mode_takes[m][i]; i++)
    if (mode_takes[m][i] == val ||
        (mode_takes[m][i] == OPT_LIMIT && val >= OPT_LIMIT))
      return true;
  return false;
}

/* "option '--tier' has no effect with '--digest'"; in a run, the modes
 * that do read the option: "option '--tier' is only used with '--sign'". */
static int not_taken(enum sr_mode m, int val, struct sr_error *err) {
  char modes[128] = "";
  size_t used = 0;

  if (m != SR_MODE_RUN)
    return usage_error(err, "option '--%s' has no effect with '--%s'",
                       option_name(val), option_name(mode_option(m)));
  for (int o = 0; o < (int)SR_ARRAY_SIZE(mode_takes); o++) {
    int n;
    if (o == SR_MODE_RUN || !mode_takes_option((enum sr_mode)o, val))
      continue;
    n = snprintf(modes + used, sizeof(modes) - used, "%s'--%s'",
                 used ? " or " : "", option_name(mode_option((enum sr_mode)o)));
    if (n < 0 || (size_t)n >= sizeof(modes) - used)
      break;
    used += (size_t)n;
  }
  return usage_error(err, "option '--%s' is only used with %s",
                     option_name(val), used ? modes : "another mode");
}

/* Rules that need the whole command line; `seen` has a bit for each option
 * given (its index in long_options_table). */
static int check_combinations(struct sr_args *a, bool have_dashdash,
                              uint64_t seen, struct sr_error *err) {
  const struct option *opts = long_options_table();
  const char *mode_name = option_name(mode_option(a->mode));

  if (a->audit_fd >= 0 && a->audit_file)
    return usage_error(err, "options '--audit-fd' and '--audit-file' cannot be "
                            "combined");
  if (a->capability && a->capability_fd >= 0)
    return usage_error(err, "options '--capability' and '--capability-fd' "
                            "cannot be combined");
  if (mode_takes_bundle(a->mode) && !a->bundle)
    return usage_error(err, "missing BUNDLE");
  if (!mode_takes_bundle(a->mode) && a->bundle) {
    char q[SR_QUOTE_MAX + 4];
    return usage_error(err, "option '--%s' takes no BUNDLE (got '%s')",
                       mode_name, quote(a->bundle, q));
  }
  if (have_dashdash && a->n_command == 0)
    return usage_error(err, "-- must be followed by a command");
  /* --explain may show the command that would run; the other modes run
   * nothing, so a command there is a mistake worth reporting. */
  if (a->n_command > 0 && a->mode != SR_MODE_RUN && a->mode != SR_MODE_EXPLAIN)
    return usage_error(err, "option '--%s' takes no command", mode_name);
  /* A hostile id is refused (123, not a usage error) in every mode: by a
   * run in its first stage, on the record, and so is the tenant by
   * --explain; by the parser in the other modes, whether or not they take
   * the option. */
  if (a->tenant_invalid && a->mode != SR_MODE_RUN && a->mode != SR_MODE_EXPLAIN)
    return sr_cli_id_refusal("tenant", a->tenant, err);
  if (a->execution_id_invalid && a->mode != SR_MODE_RUN)
    return sr_cli_id_refusal("execution", a->execution_id, err);
  /* The first option the mode does not read, in the order of the option
   * table (long_options_table: --capability, --tier and --audit-key come
   * after the limits there, not where --help lists them). */
  for (size_t i = 0; opts[i].name; i++)
    if ((seen & (UINT64_C(1) << i)) && !mode_takes_option(a->mode, opts[i].val))
      return not_taken(a->mode, opts[i].val, err);
  if (a->mode == SR_MODE_SIGN && (!a->tier || !a->signature))
    return usage_error(err, "option '--sign' needs '--tier TIER' and "
                            "'--signature OUT'");
  /* A tenant-tier statement names its tenant; no other tier's does. */
  if (a->mode == SR_MODE_SIGN && !strcmp(a->tier, "tenant") && !a->tenant)
    return usage_error(err, "option '--tier tenant' needs '--tenant ID': a "
                            "statement of tier tenant names its tenant");
  if (a->mode == SR_MODE_SIGN && strcmp(a->tier, "tenant") != 0 && a->tenant)
    return usage_error(err, "option '--tenant' with '--sign' is only used "
                            "with '--tier tenant'");
  return 0;
}

int sr_cli_parse(int argc, char *const argv[], struct sr_args *out,
                 struct sr_error *err) {
  _cleanup_free_ char **av = NULL;
  uint64_t seen = 0;
  int dd, r;

  memset(out, 0, sizeof(*out));
  out->audit_fd = -1;
  out->capability_fd = -1;
  if (argc < 0 || (argc > 0 && !argv))
    return usage_error(err, "no command line");

  /* The first "--" ends the options: what follows is the command, verbatim. */
  for (dd = 1; dd < argc; dd++)
    if (!strcmp(argv[dd], "--"))
      break;

  /* getopt works on a private pointer array: the caller's argv stays as it
   * was, and nothing after "--" is ever looked at as an option. */
  av = calloc((size_t)(dd > 0 ? dd : 1) + 1, sizeof(char *));
  if (!av)
    return oom_error(err);
  av[0] = (argc > 0 && argv[0]) ? argv[0] : (char *)"skillrun";
  for (int i = 1; i < dd; i++)
    av[i] = argv[i];

  optind = 0; /* 0, not 1: makes glibc reset all of its state */
  opterr = 0;
  for (;;) {
    int longindex = -1;
    int c = getopt_long(dd > 0 ? dd : 1, av, short_options,
                        long_options_table(), &longindex);
    const char *arg;
    int idx;

    if (c == -1)
      break;
    /* getopt_long sets optarg for BUNDLE (c == 1) and for every option that
     * takes a value; "" for the others keeps arg non-NULL, which the static
     * analyzers cannot infer. */
    arg = optarg ? optarg : "";
    if (c == '?' || c == ':') {
      r = getopt_failure(c, av, dd, err);
      goto fail;
    }
    if (c == 1) {
      char q[SR_QUOTE_MAX + 4];
      if (out->bundle) {
        r = usage_error(err,
                        "unexpected argument '%s': give one BUNDLE, and the "
                        "command after --",
                        quote(arg, q));
        goto fail;
      }
      if (!*arg) {
        r = usage_error(err, "BUNDLE must not be empty");
        goto fail;
      }
      out->bundle = strdup(arg);
      if (!out->bundle) {
        r = oom_error(err);
        goto fail;
      }
      continue;
    }
    if (longindex >= 0) {
      /* The element that named the option: the one before a separate
       * argument, else the last one consumed. */
      const char *used = (optarg && optind >= 2 && optarg == av[optind - 1])
                             ? av[optind - 2]
                             : av[optind - 1];
      const char *name = long_options_table()[longindex].name;
      size_t len = strlen(name);

      if (strncmp(used + 2, name, len) != 0 ||
          (used[2 + len] != '\0' && used[2 + len] != '=')) {
        r = unknown_long_option(used, err);
        goto fail;
      }
    }
    idx = option_index(c);
    if (idx < 0) {
      r = usage_error(err, "internal error: unknown option %d", c);
      goto fail;
    }
    /* Every option but --input and --label is given at most once: "last
     * one wins" would let a wrapper's limit be silently overridden further
     * down. */
    if (c != OPT_INPUT && c != OPT_LABEL && (seen & (UINT64_C(1) << idx))) {
      r = usage_error(err, "option '--%s' given twice", option_name(c));
      goto fail;
    }
    seen |= UINT64_C(1) << idx;
    r = handle_option(out, c, arg, err);
    if (r < 0)
      goto fail;
  }

  if (dd < argc) {
    r = copy_command(out, argv, dd + 1, argc, err);
    if (r < 0)
      goto fail;
  }
  r = check_combinations(out, dd < argc, seen, err);
  if (r < 0)
    goto fail;

  if (!out->tenant) {
    out->tenant = strdup("default");
    if (!out->tenant) {
      r = oom_error(err);
      goto fail;
    }
  }
  return 0;

fail:
  sr_args_done(out);
  return r;
}

void sr_args_done(struct sr_args *a) {
  if (!a)
    return;
  free(a->bundle);
  free(a->profile);
  free(a->conf);
  free(a->expect_sha256);
  free(a->signature);
  free(a->sign_key);
  free(a->tier);
  free(a->capability);
  free(a->audit_key);
  free(a->tenant);
  free(a->execution_id);
  for (size_t i = 0; i < a->n_inputs; i++) {
    free(a->inputs[i].path);
    free(a->inputs[i].name);
  }
  free(a->inputs);
  for (size_t i = 0; i < a->n_labels; i++) {
    free(a->labels[i].key);
    free(a->labels[i].value);
  }
  free(a->labels);
  free(a->workspace_root);
  free(a->cgroup_parent);
  free(a->audit_file);
  free(a->verify_audit);
  if (a->command)
    for (size_t i = 0; a->command[i]; i++)
      free(a->command[i]);
  free(a->command);
  /* Leave a valid empty struct behind so a second free is harmless. */
  memset(a, 0, sizeof(*a));
  a->audit_fd = -1;
  a->capability_fd = -1;
}

void sr_cli_help(FILE *f) {
  fputs(
      "Usage: skillrun [OPTION]... BUNDLE [-- COMMAND [ARG]...]\n"
      "Verify a skill bundle, run one command in a fresh sandbox, report JSON "
      "lines.\n"
      "\n"
      "  -p, --profile NAME|PATH   profile (default: the built-in default)\n",
      f);
  fprintf(f,
          "      --conf PATH           platform configuration\n"
          "                            (default %s/skillrun/skillrun.conf)\n",
          SR_SYSCONFDIR);
  fputs("      --expect-sha256 HEX   refuse unless the bundle digest matches\n"
        "      --signature FILE      signed statement (default: BUNDLE.sig if "
        "present)\n"
        "      --capability FILE     execution capability token for this run\n"
        "      --capability-fd N     read the capability token from fd N\n"
        "      --tenant ID           tenant id (default \"default\")\n"
        "      --execution-id ID     execution id (default: random UUIDv4); "
        "runs once\n"
        "      --label KEY=VALUE     record a label with the run (repeatable)\n"
        "  -i, --input PATH[:NAME]   copy a file into /workspace/inputs "
        "(repeatable)\n"
        "      --workspace-root DIR  where run directories live\n"
        "      --cgroup-parent PATH  delegated cgroup v2 directory for the "
        "run's leaf\n",
        f);
  for (int id = 0; id < SR__LIM_MAX; id++) {
    const struct sr_limit_def *d = &sr_limit_defs[id];
    char opt[64];

    if (!sr_limit_settable(id, SR_SRC_FLAG))
      continue;
    snprintf(opt, sizeof(opt), "%s %s", d->name, sr_limit_metavar(d->kind));
    fprintf(f, "      --%-20s%s\n", opt, d->help);
  }
  fputs(
      "      --network MODE        deny, allowlist or host (only narrows)\n"
      "      --audit-fd N          write audit events to fd N instead of "
      "stdout\n"
      "      --audit-file PATH     write audit events to a new file PATH\n"
      "      --log-passthrough     also copy the skill's kept output to "
      "stderr, escaped\n"
      "      --stdin               give the skill this standard input "
      "(else /dev/null)\n"
      "      --digest              print the bundle digest and exit\n"
      "      --explain             print the resolved policy as JSON and "
      "exit\n"
      "      --verify-audit FILE   check an audit file: ok 0, tampered 1, "
      "incomplete 2\n"
      "      --audit-key PUBKEY    with --verify-audit: also check the "
      "signed anchor\n"
      "      --sign KEY            sign BUNDLE into --signature OUT, exit\n"
      "      --tier TIER           with --sign: official, verified, "
      "community, tenant\n"
      "      --gc                  remove leftovers of dead runs and exit\n"
      "      --metrics             print Prometheus metrics of the runs, "
      "exit\n"
      "  -v, --verbose             warnings on stderr too; with --digest: the "
      "records\n"
      "  -h, --help                show this help and exit\n"
      "  -V, --version             show version and library versions, exit\n"
      "\n"
      "Without -- COMMAND the skill's metadata sandbox.entrypoint runs.\n"
      "Exit status: the skill's own; 123 refused (nothing ran), 124 "
      "timeout,\n"
      "125 skillrun failed, 126/127 command not executable/not found, 128+N "
      "signal N.\n",
      f);
  /* The directory this build uses (skillrun(1), FILES; the conf's is
   * above, the profiles' in skillrun.profile(5)). */
  fprintf(f,
          "Runs started by root are kept in %s/lib/skillrun/runs.\n"
          "Full documentation: man skillrun (skillrun(1)).\n",
          SR_LOCALSTATEDIR);
}

struct lib_file {
  const char *prefix; /* "libcap.so." */
  char name[256];     /* real file name, e.g. "libcap.so.2.66" */
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *data) {
  struct lib_file *lf = data;
  _cleanup_free_ char *real = NULL;
  const char *base;

  (void)size;
  if (!info->dlpi_name || !strstr(info->dlpi_name, lf->prefix))
    return 0;
  /* The soname link points at the versioned file the loader mapped. */
  real = realpath(info->dlpi_name, NULL);
  base = strrchr(real ? real : info->dlpi_name, '/');
  base = base ? base + 1 : (real ? real : info->dlpi_name);
  snprintf(lf->name, sizeof(lf->name), "%s", base);
  return 1;
}

/* The loaded file's name, or "" when the library is not mapped
 * (static link). */
static void loaded_library(const char *prefix, char *buf, size_t len) {
  struct lib_file lf = {.prefix = prefix};

  (void)dl_iterate_phdr(find_lib, &lf); /* 1 = found, 0 = not mapped */
  snprintf(buf, len, "%s", lf.name);
}

void sr_cli_version(FILE *f) {
  const struct scmp_version *sv = sr_seccomp_lib_version();
  char file[256];

  fprintf(f, "skillrun %s\n", PACKAGE_VERSION);
  if (sv)
    fprintf(f, "libseccomp %u.%u.%u (%s, opened for non-default filters)\n",
            sv->major, sv->minor, sv->micro, SR_LIBSECCOMP_SONAME);
  else
    fprintf(f, "libseccomp not loadable (%s)\n", SR_LIBSECCOMP_SONAME);

  /*
   * libcap and libmnl have no version API: name the file the loader mapped
   * (libcap's carries its release, libmnl's only its ABI).  The calls below
   * make sure each library is linked and mapped even in binaries that use
   * nothing else from it (--as-needed), so the answer is never a guess.
   */
  {
    int bits = cap_max_bits();
    loaded_library("libcap.so.", file, sizeof(file));
    if (!strncmp(file, "libcap.so.2.", 12))
      fprintf(f, "libcap %s (loaded file %s; %d capabilities)\n", file + 10,
              file, bits);
    else
      fprintf(f, "libcap unknown (no version API; loaded file %s)\n",
              *file ? file : "not found");
  }
  (void)mnl_nlmsg_size(0); /* only to keep libmnl mapped, see above */
  loaded_library("libmnl.so.", file, sizeof(file));
  fprintf(f, "libmnl (no version API; loaded file %s)\n",
          *file ? file : "not found");

  {
    /* SHA-256 may be linked in (sha256.h); keys always use the shared
     * library (ossl.h), which is opened here to name its version. */
    struct sr_error e = {0};
    const char *so = sr_ossl_load(&e) == 0
                         ? sr_ossl.OpenSSL_version(OPENSSL_VERSION_STRING)
                         : "not loadable";
#ifdef SR_SHA256_STATIC
    fprintf(f, "OpenSSL %s (SHA-256 linked in; keys: %s %s)\n",
            OPENSSL_VERSION_STR, SR_LIBCRYPTO_SONAME, so);
#else
    fprintf(f, "OpenSSL %s (%s)\n", so, SR_LIBCRYPTO_SONAME);
#endif
  }
  fprintf(f, "libyaml %s\n", yaml_get_version_string());
  fprintf(f, "jansson %s\n", jansson_version_str());
  {
    int v = sr_text_lib_version();
    if (v >= 0)
      fprintf(f, "libunistring %d.%d.%d (%s, opened for non-ASCII text)\n",
              (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff,
              SR_LIBUNISTRING_SONAME);
    else
      fprintf(f, "libunistring not loadable (%s)\n", SR_LIBUNISTRING_SONAME);
  }
  {
    int v = sr_magic_lib_version(); /* 544 for 5.44 */
    if (v >= 0)
      fprintf(f, "libmagic %d.%02d (%s, opened for input type checks)\n",
              v / 100, v % 100, SR_LIBMAGIC_SONAME);
    else
      fprintf(f, "libmagic not loadable (%s)\n", SR_LIBMAGIC_SONAME);
  }
  /* No version API: whether it loads, with every function a scope needs. */
  if (sr_cgroup_systemd_lib_loadable())
    fprintf(f,
            "libsystemd (no version API; %s, opened for a delegated "
            "cgroup scope)\n",
            SR_LIBSYSTEMD_SONAME);
  else
    fprintf(f, "libsystemd not loadable (%s)\n", SR_LIBSYSTEMD_SONAME);
}
