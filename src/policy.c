/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Policy layering: builtin caps <- skillrun.conf <- profile <- SKILL.md <-
 * flags.  skillrun.conf alone may raise a cap; every later layer may only
 * lower, and an attempt to raise is clamped and reported as a warning that
 * names the layer (skillrun.profile(5)).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "filetype.h"
#include "manifest.h"
#include "policy.h"
#include "view.h"

/*
 * GCC 12's -fanalyzer loses track of memory reached through the policy
 * pointer that struct layer (a stack object of sr_policy_apply_conf/
 * _profile) holds (SR_ANALYZER_STORED_LEAK_BEGIN, macro.h).  Until the
 * view table made sr_policy_to_json() cheaper to analyse, the analysis of
 * this file bailed out before it reached these functions.  Only the
 * functions with that shape are wrapped.
 */

const char *sr_enforcer_name(enum sr_enforcer e) {
  static const char *const names[SR__ENF_MAX] = {
      [SR_ENF_NONE] = NULL,         [SR_ENF_CGROUP2] = "cgroup2",
      [SR_ENF_RLIMIT] = "rlimit",   [SR_ENF_SUPERVISOR] = "supervisor",
      [SR_ENF_CGROUP1] = "cgroup1", [SR_ENF_TMPFS] = "tmpfs",
      [SR_ENF_PROXY] = "proxy",
  };
  return (unsigned)e < SR__ENF_MAX ? names[e] : NULL;
}

const char *sr_net_enforcer_name(enum sr_net_enforcer e) {
  static const char *const names[SR__NETENF_MAX] = {
      [SR_NETENF_UNDECIDED] = NULL,
      [SR_NETENF_NETNS] = "netns",
      [SR_NETENF_PROXY] = "proxy",
      [SR_NETENF_LANDLOCK_SCOPE] = "landlock-scope",
      [SR_NETENF_NONE] = "none",
  };
  return (unsigned)e < SR__NETENF_MAX ? names[e] : NULL;
}

static const char *const cgroup_mode_names[SR__CGROUP_MAX] = {
    [SR_CGROUP_PREFER] = "prefer",
    [SR_CGROUP_REQUIRE] = "require",
    [SR_CGROUP_OFF] = "off",
};

/* How firmly a mode holds the run's limits: off < prefer < require. */
static int cgroup_rank(enum sr_cgroup_mode m) {
  return m == SR_CGROUP_REQUIRE ? 2 : m == SR_CGROUP_PREFER ? 1 : 0;
}

static const char *const proc_mode_names[SR__PROC_MAX] = {
    [SR_PROC_PROCFS] = "procfs",
    [SR_PROC_TMPFS] = "tmpfs",
};

/* Index of s in a name table, or -1. */
static int name_index(const char *const *names, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (names[i] && !strcmp(names[i], s))
      return (int)i;
  return -1;
}

static const char *kind_expected(enum sr_limit_kind kind) {
  switch (kind) {
  case SR_KIND_SIZE:
    return "a size such as 256M, 1GiB or 268435456";
  case SR_KIND_DURATION:
    return "a duration such as 250ms, 30s, 5m or 1h";
  case SR_KIND_COUNT:
    return "a whole number";
  }
  return "?";
}

int sr_policy_init(struct sr_policy *p) {
  memset(p, 0, sizeof(*p));
  for (int i = 0; i < SR__LIM_MAX; i++) {
    p->limits[i].value = sr_limit_defs[i].builtin;
    p->limits[i].cap = sr_limit_defs[i].builtin;
    p->limits[i].source = SR_SRC_BUILTIN;
  }
  p->network = SR_NET_DENY;
  /* The platform lets a profile permit the host network unless
   * skillrun.conf says otherwise (`network`, or `network-allow` alone:
   * sr_policy_apply_conf); a profile without `network` denies it. */
  p->network_max = SR_NET_HOST;
  p->network_source = SR_SRC_BUILTIN;
  p->cgroup = SR_CGROUP_PREFER;
  p->cgroup_floor = SR_CGROUP_OFF;
  p->proc = SR_PROC_PROCFS;
  /* Every tier may run and unsigned bundles too, until the conf or the
   * profile says otherwise (the embedded default profile does not). */
  p->tiers_allowed = SR_TIERS_ALL;
  p->uid_pool_base = SR_UID_POOL_BASE;
  p->uid_pool_size = SR_UID_POOL_SIZE;
  p->hostname = strdup("skillrun");
  if (!p->hostname)
    return -ENOMEM;
  return 0;
}

bool sr_syscall_list_contains(const struct sr_syscall_list *l,
                              const char *name) {
  for (size_t i = 0; i < l->n; i++)
    if (!strcmp(l->v[i].name, name))
      return true;
  return false;
}

static void syscall_list_done(struct sr_syscall_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->v[i].name);
    free(l->v[i].file);
  }
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

void sr_policy_done(struct sr_policy *p) {
  if (!p)
    return;
  free(p->profile);
  free(p->platform);
  free(p->hostname);
  free(p->skill_dir);
  for (size_t i = 0; i < p->n_binds; i++) {
    free(p->binds[i].src);
    free(p->binds[i].dst);
    free(p->binds[i].file);
  }
  free(p->binds);
  sr_strv_done(&p->etc_files);
  sr_strv_done(&p->etc_files_try);
  sr_strv_done(&p->binds_permitted);
  sr_strv_done(&p->etc_permitted);
  sr_strv_done(&p->env_permitted);
  sr_strv_done(&p->env_keep);
  for (size_t i = 0; i < p->n_setenv; i++) {
    free(p->setenv[i].name);
    free(p->setenv[i].value);
  }
  free(p->setenv);
  for (size_t i = 0; i < p->n_input_types; i++) {
    sr_strv_done(&p->input_types[i].entries);
    free(p->input_types[i].where);
  }
  free(p->input_types);
  syscall_list_done(&p->seccomp_allow);
  syscall_list_done(&p->seccomp_deny);
  sr_strv_done(&p->seccomp_permitted);
  free(p->workspace_root);
  for (size_t i = 0; i < p->n_trust_keys; i++) {
    free(p->trust_keys[i].tenant);
    free(p->trust_keys[i].path);
  }
  free(p->trust_keys);
  free(p->capability_key);
  free(p->placement_id);
  free(p->audit_key);
  sr_netallow_done(&p->net_permitted);
  sr_netallow_done(&p->net_request);
  sr_netallow_done(&p->net_allow);
  free(p->net_hosts);
  sr_strv_done(&p->warnings);
  memset(p, 0, sizeof(*p));
}

static int push_warning(struct sr_policy *p, const char *fmt, ...)
    _printf_(2, 3);
static int push_warning(struct sr_policy *p, const char *fmt, ...) {
  char buf[1024];
  va_list ap;

  va_start(ap, fmt);
  /* False positive: va_start() just above initialised ap; clang 14's
   * valist checker reports this call all the same.
   * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return sr_strv_push(&p->warnings, buf);
}

/* "the platform cap 512MiB" / "the limit 256MiB set by the profile". */
static void describe_current(const struct sr_policy *p, int id, char *buf,
                             size_t len) {
  const struct sr_limit *l = &p->limits[id];
  char v[32];

  sr_limit_format(sr_limit_defs[id].kind, l->value, v, sizeof(v));
  switch (l->source) {
  case SR_SRC_PROFILE:
    snprintf(buf, len, "the limit %s set by the profile", v);
    break;
  case SR_SRC_MANIFEST:
    snprintf(buf, len, "the limit %s set by SKILL.md", v);
    break;
  case SR_SRC_FLAG:
    snprintf(buf, len, "the limit %s set on the command line", v);
    break;
  default:
    snprintf(buf, len, "the platform cap %s", v);
    break;
  }
}

/*
 * A later layer's value: lowers the limit, or, when it would raise it, keeps
 * the current value and records a warning "<who> <value> is above <current>;
 * clamped".  Equal values move the source to this layer.
 */
static int lower_limit(struct sr_policy *p, int id, uint64_t v,
                       enum sr_source layer, const char *who) {
  struct sr_limit *l = &p->limits[id];
  char cur[96], val[32];

  if (v <= l->value) {
    l->value = v;
    l->source = layer;
    return 0;
  }
  describe_current(p, id, cur, sizeof(cur));
  sr_limit_format(sr_limit_defs[id].kind, v, val, sizeof(val));
  return push_warning(p, "%s %s is above %s; clamped", who, val, cur);
}

/* ------------------------------------------------------------ conf lines */

enum {
  K_NETWORK = SR__LIM_MAX,
  K_CGROUP,
  K_PROC,
  K_STRICT,
  K_MEMORY_RLIMIT,
  K_HOSTNAME,
  K_WORKSPACE_ROOT,
  K_UID_POOL,
  K_TIERS,
  K_REQUIRE_SIGNATURE,
  K_CAPABILITY_KEY,
  K_REQUIRE_CAPABILITY,
  K_AUDIT_KEY,
  K_PLACEMENT_ID,
  K_REQUIRE_PLACEMENT,
  K_INPUTS_TYPES,
  K_NETWORK_HOSTS,
  K__SCALAR_MAX,
  K_BIND_RO = K__SCALAR_MAX,
  K_BIND_RO_TRY,
  K_ETC_FILE,
  K_ETC_FILE_TRY,
  K_ENV_KEEP,
  K_SETENV,
  K_SECCOMP_ALLOW,
  K_SECCOMP_DENY,
  K_TRUST_KEY,
  K_NETWORK_ALLOW,
  K__MAX,
};

/* The layers a key may appear in: SR_LAYER() bits. */
#define IN_CONF SR_LAYER(SR_SRC_CONF)
#define IN_PROFILE SR_LAYER(SR_SRC_PROFILE)

static const struct {
  const char *name;
  unsigned where;
} key_defs[K__MAX - SR__LIM_MAX] = {
    [K_NETWORK - SR__LIM_MAX] = {"network", IN_CONF | IN_PROFILE},
    [K_CGROUP - SR__LIM_MAX] = {"cgroup", IN_CONF | IN_PROFILE},
    [K_PROC - SR__LIM_MAX] = {"proc", IN_PROFILE},
    [K_STRICT - SR__LIM_MAX] = {"strict", IN_PROFILE},
    [K_MEMORY_RLIMIT - SR__LIM_MAX] = {"memory-rlimit", IN_PROFILE},
    [K_HOSTNAME - SR__LIM_MAX] = {"hostname", IN_PROFILE},
    [K_WORKSPACE_ROOT - SR__LIM_MAX] = {"workspace-root", IN_CONF},
    [K_UID_POOL - SR__LIM_MAX] = {"uid-pool", IN_CONF},
    [K_TIERS - SR__LIM_MAX] = {"tiers", IN_CONF | IN_PROFILE},
    [K_REQUIRE_SIGNATURE -
        SR__LIM_MAX] = {"require-signature", IN_CONF | IN_PROFILE},
    [K_CAPABILITY_KEY - SR__LIM_MAX] = {"capability-key", IN_CONF},
    [K_REQUIRE_CAPABILITY - SR__LIM_MAX] = {"require-capability", IN_CONF},
    [K_AUDIT_KEY - SR__LIM_MAX] = {"audit-key", IN_CONF},
    [K_PLACEMENT_ID - SR__LIM_MAX] = {"placement-id", IN_CONF},
    [K_REQUIRE_PLACEMENT - SR__LIM_MAX] = {"require-placement", IN_CONF},
    [K_INPUTS_TYPES - SR__LIM_MAX] = {"inputs-types", IN_CONF | IN_PROFILE},
    [K_BIND_RO - SR__LIM_MAX] = {"bind-ro", IN_CONF | IN_PROFILE},
    [K_BIND_RO_TRY - SR__LIM_MAX] = {"bind-ro-try", IN_PROFILE},
    [K_ETC_FILE - SR__LIM_MAX] = {"etc-file", IN_CONF | IN_PROFILE},
    [K_ETC_FILE_TRY - SR__LIM_MAX] = {"etc-file-try", IN_PROFILE},
    [K_ENV_KEEP - SR__LIM_MAX] = {"env-keep", IN_CONF | IN_PROFILE},
    [K_SETENV - SR__LIM_MAX] = {"setenv", IN_PROFILE},
    [K_SECCOMP_ALLOW - SR__LIM_MAX] = {"seccomp-allow", IN_CONF | IN_PROFILE},
    [K_SECCOMP_DENY - SR__LIM_MAX] = {"seccomp-deny", IN_PROFILE},
    [K_TRUST_KEY - SR__LIM_MAX] = {"trust-key", IN_CONF},
    [K_NETWORK_HOSTS - SR__LIM_MAX] = {"network-hosts", IN_CONF},
    [K_NETWORK_ALLOW - SR__LIM_MAX] = {"network-allow", IN_CONF | IN_PROFILE},
};

static int key_by_name(const char *name) {
  int i = sr_limit_by_name(name);
  if (i >= 0)
    return i;
  for (int k = SR__LIM_MAX; k < K__MAX; k++)
    if (!strcmp(key_defs[k - SR__LIM_MAX].name, name))
      return k;
  return -1;
}

static unsigned key_where(int k) {
  return k < SR__LIM_MAX ? sr_limit_defs[k].layers
                         : key_defs[k - SR__LIM_MAX].where;
}

/* State of one conf or profile layer while its lines are applied. */
struct layer {
  struct sr_policy *p;
  enum sr_source src; /* SR_SRC_CONF or SR_SRC_PROFILE */
  const struct sr_conf_line *seen[K__SCALAR_MAX];
  struct sr_limit base[SR__LIM_MAX];     /* limits before this layer */
  enum sr_network_mode network;          /* UNSET when the layer is silent */
  const struct sr_conf_line *network_at; /* where it was set */
  struct sr_netallow allow;              /* its network-allow lines */
  const struct sr_conf_line *allow_at;   /* the first of them */
  struct sr_error *err;
};

static void layer_done(struct layer *L) {
  sr_netallow_done(&L->allow);
}

/* The key an entry of this origin was written with, for warnings. */
static const char *entry_key(enum sr_netallow_origin o) {
  switch (o) {
  case SR_NETALLOW_ORIGIN_CONF:
  case SR_NETALLOW_ORIGIN_PROFILE:
    return "network-allow";
  case SR_NETALLOW_ORIGIN_MANIFEST:
    return "sandbox.network-allow";
  case SR_NETALLOW_ORIGIN_TOOL:
    return "allowed-tools WebFetch(domain:...)";
  case SR_NETALLOW_ORIGIN_CAPABILITY:
    return "capability network";
  default:
    return "network";
  }
}

static int line_error(struct layer *L, const struct sr_conf_line *l,
                      const char *fmt, ...) _printf_(3, 4);
static int line_error(struct layer *L, const struct sr_conf_line *l,
                      const char *fmt, ...) {
  char msg[900];
  va_list ap;

  va_start(ap, fmt);
  /* False positive: va_start() just above initialised ap; clang 14's
   * valist checker reports this call all the same.
   * NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized) */
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return sr_error_set(L->err, SR_EXIT_FAILED, 0, "config_invalid", "%s:%u: %s",
                      l->file, l->line, msg);
}

static int want_args(struct layer *L, const struct sr_conf_line *l, size_t min,
                     size_t max, const char *usage) {
  if (l->n_args < min || l->n_args > max)
    return line_error(L, l, "%s: expected '%s %s'", l->key, l->key, usage);
  return 0;
}

static bool valid_env_name(const char *s) {
  if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_') || strlen(s) > 255)
    return false;
  for (const char *c = s; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '_') || (unsigned char)*c >= 0x80)
      return false;
  return true;
}

/* RFC 1123 host name: labels of letters, digits and '-', dot-separated. */
static bool valid_hostname(const char *s) {
  size_t n = s ? strlen(s) : 0;
  size_t label = 0;

  if (n == 0 || n > 64 || s[0] == '.' || s[n - 1] == '.')
    return false;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '.') {
      if (label == 0 || s[i - 1] == '-')
        return false;
      label = 0;
      continue;
    }
    if (!(isalnum(c) && c < 0x80) && c != '-')
      return false;
    if (c == '-' && label == 0)
      return false;
    label++;
  }
  return s[n - 1] != '-';
}

static int apply_limit(struct layer *L, const struct sr_conf_line *l, int id) {
  const struct sr_limit_def *d = &sr_limit_defs[id];
  struct sr_policy *p = L->p;
  char val[32], bound[32];
  uint64_t v;
  int r;

  if (l->n_args != 1)
    return line_error(L, l, "%s: expected one value, %s", l->key,
                      kind_expected(d->kind));
  r = sr_limit_parse(d->kind, l->args[0], UINT64_MAX, &v);
  if (r == -ERANGE) {
    sr_limit_format(d->kind, d->max, bound, sizeof(bound));
    return line_error(L, l, "%s: '%s' is too large (the largest cap is %s)",
                      l->key, l->args[0], bound);
  }
  if (r < 0)
    return line_error(L, l, "%s: invalid value '%s' (expected %s)", l->key,
                      l->args[0], kind_expected(d->kind));
  sr_limit_format(d->kind, v, val, sizeof(val));
  if (v < d->min) {
    sr_limit_format(d->kind, d->min, bound, sizeof(bound));
    return line_error(L, l, "%s %s is below the minimum %s", l->key, val,
                      bound);
  }
  if (L->src == SR_SRC_CONF) {
    /* skillrun.conf sets the cap itself, up or down. */
    if (v > d->max) {
      sr_limit_format(d->kind, d->max, bound, sizeof(bound));
      return line_error(L, l, "%s %s is above the largest cap %s", l->key, val,
                        bound);
    }
    p->limits[id].cap = v;
    p->limits[id].value = v;
    p->limits[id].source = SR_SRC_CONF;
    return 0;
  } else {
    char who[512];
    snprintf(who, sizeof(who), "profile %s:%u: %s", l->file, l->line, l->key);
    return lower_limit(p, id, v, L->src, who);
  }
}

/* Whether path is at or below an entry of skillrun.conf's list (by path
 * components: /usr admits /usr/share, not /usrx). */
static bool path_permitted(const struct sr_strv *list, const char *path) {
  for (size_t i = 0; i < list->n; i++)
    if (sr_path_at_or_below(path, list->v[i]))
      return true;
  return false;
}

/* A profile's entry outside skillrun.conf's bound: dropped, with the
 * warning that says where it was written. */
static int drop_unpermitted(struct sr_policy *p, const struct sr_conf_line *l,
                            const char *entry) {
  return push_warning(p,
                      "profile %s:%u: %s %s is not permitted by "
                      "skillrun.conf; dropped",
                      l->file, l->line, l->key, entry);
}

SR_ANALYZER_STORED_LEAK_BEGIN
static int apply_bind(struct layer *L, const struct sr_conf_line *l,
                      bool optional) {
  struct sr_policy *p = L->p;
  const char *src, *dst;
  struct sr_bind *nb, *b;
  const char *tree = NULL;
  int r;

  r = want_args(L, l, 1, 2, "SRC [DST]");
  if (r < 0)
    return r;
  src = l->args[0];
  dst = l->n_args == 2 ? l->args[1] : src;
  if (!sr_valid_abs_path(src))
    return line_error(L, l,
                      "%s: source '%s' must be an absolute, normalised path",
                      l->key, src);
  if (!sr_valid_abs_path(dst))
    return line_error(
        L, l, "%s: destination '%s' must be an absolute, normalised path",
        l->key, dst);
  /* The sandbox has its own /proc and /dev; the host's would leak. */
  if (!strcmp(src, "/") || sr_path_at_or_below(src, "/proc") ||
      sr_path_at_or_below(src, "/dev"))
    return line_error(L, l, "%s: source %s may not be bound into the sandbox",
                      l->key, src);
  /* Whatever the sandbox view builds (view.c) a bind would shadow. */
  switch (sr_view_claims(dst, &tree)) {
  case SR_VIEW_RESERVE_AT:
    return line_error(L, l, "%s: destination %s is built by skillrun", l->key,
                      dst);
  case SR_VIEW_RESERVE_TREE:
    return line_error(L, l,
                      "%s: destination %s is inside %s, which skillrun "
                      "builds",
                      l->key, dst, tree);
  case SR_VIEW_RESERVE_NONE:
    break;
  }
  for (size_t i = 0; i < p->n_binds; i++)
    if (!strcmp(p->binds[i].dst, dst))
      return line_error(L, l, "%s: %s is already a bind destination (%s:%u)",
                        l->key, dst, p->binds[i].file, p->binds[i].line);
  if (p->binds_bounded && !path_permitted(&p->binds_permitted, src))
    return drop_unpermitted(p, l, src);

  nb = realloc(p->binds, (p->n_binds + 1) * sizeof(*nb));
  if (!nb)
    return -ENOMEM;
  p->binds = nb;
  b = &p->binds[p->n_binds];
  memset(b, 0, sizeof(*b));
  b->src = strdup(src);
  b->dst = strdup(dst);
  b->file = strdup(l->file);
  b->line = l->line;
  b->optional = optional;
  if (!b->src || !b->dst || !b->file) {
    free(b->src);
    free(b->dst);
    free(b->file);
    return -ENOMEM;
  }
  p->n_binds++;
  return 0;
}
SR_ANALYZER_STORED_LEAK_END

static int apply_etc_file(struct layer *L, const struct sr_conf_line *l,
                          bool optional) {
  /* Secrets that must never be copied to a skill (in root mode the copy is
   * made by root); what the sandbox writes or binds in /etc itself is
   * refused too (sr_view_etc_claims). */
  static const char *const secrets[] = {
      "shadow",  "shadow-",   "gshadow", "gshadow-",
      "sudoers", "sudoers.d", "ssh",     "ssl/private",
  };
  struct sr_policy *p = L->p;
  struct sr_strv *list = optional ? &p->etc_files_try : &p->etc_files;
  struct sr_strv *other = optional ? &p->etc_files : &p->etc_files_try;
  _cleanup_free_ char *path = NULL;
  int r;

  r = want_args(L, l, 1, 1, "NAME");
  if (r < 0)
    return r;
  if (l->args[0][0] == '/') {
    if (asprintf(&path, "%s", l->args[0]) < 0)
      return -ENOMEM;
  } else if (asprintf(&path, "/etc/%s", l->args[0]) < 0) {
    return -ENOMEM;
  }
  if (!sr_valid_abs_path(path) || !sr_path_at_or_below(path, "/etc") ||
      !strcmp(path, "/etc"))
    return line_error(L, l,
                      "%s: '%s' must name a file below /etc (e.g. localtime "
                      "or /etc/localtime), normalised",
                      l->key, l->args[0]);
  for (size_t i = 0; i < SR_ARRAY_SIZE(secrets); i++) {
    char dir[64];
    snprintf(dir, sizeof(dir), "/etc/%s", secrets[i]);
    if (sr_path_at_or_below(path, dir))
      return line_error(L, l, "%s: %s may not be copied into the sandbox",
                        l->key, path);
  }
  if (sr_view_etc_claims(path))
    return line_error(L, l, "%s: %s may not be copied into the sandbox", l->key,
                      path);
  if (sr_strv_contains(other, path))
    return line_error(L, l, "%s: %s is already listed by %s", l->key, path,
                      optional ? "etc-file" : "etc-file-try");
  if (sr_strv_contains(list, path))
    return 0;
  if (p->etc_bounded && !path_permitted(&p->etc_permitted, path))
    return drop_unpermitted(p, l, path);
  return sr_strv_push(list, path);
}

static bool env_reserved(const char *name) {
  /* skillrun's own variables must be trustworthy inside the sandbox. */
  return !strncmp(name, "SKILLRUN_", strlen("SKILLRUN_"));
}

static int apply_env_keep(struct layer *L, const struct sr_conf_line *l) {
  struct sr_policy *p = L->p;
  int r;

  r = want_args(L, l, 1, SIZE_MAX, "NAME...");
  if (r < 0)
    return r;
  for (size_t i = 0; i < l->n_args; i++) {
    const char *n = l->args[i];
    if (!valid_env_name(n))
      return line_error(L, l,
                        "env-keep: invalid variable name '%s' (letters, digits "
                        "and '_', not starting with a digit)",
                        n);
    if (env_reserved(n))
      return line_error(L, l, "env-keep: %s: SKILLRUN_* names are reserved", n);
    for (size_t k = 0; k < p->n_setenv; k++)
      if (!strcmp(p->setenv[k].name, n))
        return line_error(L, l, "env-keep: %s is also given by setenv", n);
    if (sr_strv_contains(&p->env_keep, n))
      continue;
    if (p->env_bounded && !sr_strv_contains(&p->env_permitted, n)) {
      r = drop_unpermitted(p, l, n);
      if (r < 0)
        return r;
      continue;
    }
    r = sr_strv_push(&p->env_keep, n);
    if (r < 0)
      return r;
  }
  return 0;
}

static int apply_setenv(struct layer *L, const struct sr_conf_line *l) {
  struct sr_policy *p = L->p;
  struct sr_setenv *ns;
  const char *n;
  int r;

  r = want_args(L, l, 2, 2, "NAME VALUE");
  if (r < 0)
    return r;
  n = l->args[0];
  if (!valid_env_name(n))
    return line_error(L, l,
                      "setenv: invalid variable name '%s' (letters, digits and "
                      "'_', not starting with a digit)",
                      n);
  if (env_reserved(n))
    return line_error(L, l, "setenv: %s: SKILLRUN_* names are reserved", n);
  if (sr_has_control_chars(l->args[1]))
    return line_error(L, l, "setenv: %s: control character in the value", n);
  if (sr_strv_contains(&p->env_keep, n))
    return line_error(L, l, "setenv: %s is also kept by env-keep", n);
  for (size_t k = 0; k < p->n_setenv; k++)
    if (!strcmp(p->setenv[k].name, n))
      return line_error(L, l, "setenv: %s is set twice", n);
  ns = realloc(p->setenv, (p->n_setenv + 1) * sizeof(*ns));
  if (!ns)
    return -ENOMEM;
  p->setenv = ns;
  ns[p->n_setenv].name = strdup(n);
  ns[p->n_setenv].value = strdup(l->args[1]);
  if (!ns[p->n_setenv].name || !ns[p->n_setenv].value) {
    free(ns[p->n_setenv].name);
    free(ns[p->n_setenv].value);
    return -ENOMEM;
  }
  p->n_setenv++;
  return 0;
}

/* Appends a copy of name, listed at l, to list. */
SR_ANALYZER_STORED_LEAK_BEGIN
static int syscall_list_push(struct sr_syscall_list *list, const char *name,
                             const struct sr_conf_line *l, unsigned seq) {
  struct sr_syscall_ref *v, *ref;

  v = realloc(list->v, (list->n + 1) * sizeof(*v));
  if (!v)
    return -ENOMEM;
  list->v = v;
  ref = &v[list->n];
  ref->name = strdup(name);
  ref->file = strdup(l->file);
  ref->line = l->line;
  ref->seq = seq;
  if (!ref->name || !ref->file) {
    free(ref->name);
    free(ref->file);
    return -ENOMEM;
  }
  list->n++;
  return 0;
}
SR_ANALYZER_STORED_LEAK_END

/* The names are kept as written: libseccomp, which knows them, is not
 * policy code (sr_seccomp_check_names checks them afterwards). */
SR_ANALYZER_STORED_LEAK_BEGIN
static int apply_seccomp(struct layer *L, const struct sr_conf_line *l,
                         bool allow) {
  struct sr_policy *p = L->p;
  struct sr_syscall_list *list = allow ? &p->seccomp_allow : &p->seccomp_deny;
  struct sr_syscall_list *other = allow ? &p->seccomp_deny : &p->seccomp_allow;
  int r;

  r = want_args(L, l, 1, SIZE_MAX, "NAME...");
  if (r < 0)
    return r;
  for (size_t i = 0; i < l->n_args; i++) {
    const char *n = l->args[i];

    if (sr_syscall_list_contains(other, n))
      return line_error(L, l, "%s: %s is also listed by %s", l->key, n,
                        allow ? "seccomp-deny" : "seccomp-allow");
    if (sr_syscall_list_contains(list, n))
      continue;
    if (allow && p->seccomp_bounded &&
        !sr_strv_contains(&p->seccomp_permitted, n)) {
      r = drop_unpermitted(p, l, n);
      if (r < 0)
        return r;
      continue;
    }
    r = syscall_list_push(list, n, l,
                          (unsigned)(p->seccomp_allow.n + p->seccomp_deny.n));
    if (r < 0)
      return r;
  }
  return 0;
}
SR_ANALYZER_STORED_LEAK_END

/* `tiers TIER...`: the set replaces the layer's; a profile's is narrowed
 * to the conf's by sr_policy_apply_profile. */
static int apply_tiers(struct layer *L, const struct sr_conf_line *l) {
  unsigned mask = 0;
  int r, t;

  r = want_args(L, l, 1, SR__TIER_MAX, "TIER...");
  if (r < 0)
    return r;
  for (size_t i = 0; i < l->n_args; i++) {
    t = sr_tier_from_name(l->args[i]);
    if (t < 0)
      return line_error(L, l,
                        "tiers: '%s' is not official, verified, community or "
                        "tenant (unsigned bundles: require-signature)",
                        l->args[i]);
    if (mask & (1u << t))
      return line_error(L, l, "tiers: %s is listed twice", l->args[i]);
    mask |= 1u << t;
  }
  L->p->tiers_allowed = mask;
  return 0;
}

SR_ANALYZER_STORED_LEAK_BEGIN
static int set_path(struct layer *L, const struct sr_conf_line *l,
                    const char *value, char **slot) {
  char *v;

  if (!sr_valid_abs_path(value) || !strcmp(value, "/"))
    return line_error(L, l, "%s: '%s' must be an absolute, normalised path",
                      l->key, value);
  v = strdup(value);
  if (!v)
    return -ENOMEM;
  free(*slot);
  *slot = v;
  return 0;
}
SR_ANALYZER_STORED_LEAK_END

/* `trust-key TIER PATH`, or for the tenant tier `trust-key tenant:ID PATH`:
 * a tenant's key vouches for that tenant's bundles only. */
SR_ANALYZER_STORED_LEAK_BEGIN
static int apply_trust_key(struct layer *L, const struct sr_conf_line *l) {
  struct sr_policy *p = L->p;
  struct sr_trust_key_path *v;
  const char *arg, *colon;
  char tier[16];
  size_t tier_len;
  char *tenant = NULL, *path = NULL;
  int r, t = -1;

  r = want_args(L, l, 2, 2, "TIER PATH");
  if (r < 0)
    return r;
  arg = l->args[0];
  colon = strchr(arg, ':');
  tier_len = colon ? (size_t)(colon - arg) : strlen(arg);
  if (tier_len < sizeof(tier)) {
    memcpy(tier, arg, tier_len);
    tier[tier_len] = '\0';
    t = sr_tier_from_name(tier);
  }
  if (t < 0)
    return line_error(L, l,
                      "trust-key: '%s' is not official, verified, community "
                      "or tenant:ID",
                      arg);
  if (t == SR_TIER_TENANT && !colon)
    return line_error(L, l,
                      "trust-key: a key of tier tenant is trusted for one "
                      "tenant: write 'trust-key tenant:ID %s'",
                      l->args[1]);
  if (t != SR_TIER_TENANT && colon)
    return line_error(L, l, "trust-key: only tier tenant names a tenant ('%s')",
                      arg);
  if (colon && !sr_valid_id(colon + 1))
    return line_error(L, l,
                      "trust-key: '%s' is not a valid tenant id (1-64 of "
                      "A-Z a-z 0-9 . _ -, starting with a letter or digit)",
                      colon + 1);
  r = set_path(L, l, l->args[1], &path);
  if (r < 0)
    return r;
  if (colon && !(tenant = strdup(colon + 1))) {
    free(path);
    return -ENOMEM;
  }
  v = realloc(p->trust_keys, (p->n_trust_keys + 1) * sizeof(*v));
  if (!v) {
    free(tenant);
    free(path);
    return -ENOMEM;
  }
  p->trust_keys = v;
  v[p->n_trust_keys].tier = (enum sr_tier)t;
  v[p->n_trust_keys].tenant = tenant;
  v[p->n_trust_keys].path = path;
  p->n_trust_keys++;
  return 0;
}
SR_ANALYZER_STORED_LEAK_END

/* "unknown key 'memroy' (did you mean 'memory'?)": the nearest key this
 * layer accepts. */
static int unknown_key(struct layer *L, const struct sr_conf_line *l) {
  unsigned here = SR_LAYER(L->src);
  struct sr_nearest near;

  sr_nearest_init(&near, l->key);
  for (int k = 0; k < K__MAX; k++)
    if (key_where(k) & here)
      sr_nearest_offer(&near, k < SR__LIM_MAX ? sr_limit_defs[k].name
                                              : key_defs[k - SR__LIM_MAX].name);
  if (near.best)
    return line_error(L, l, "unknown key '%s' (did you mean '%s'?)", l->key,
                      near.best);
  return line_error(L, l, "unknown key '%s'", l->key);
}

SR_ANALYZER_STORED_LEAK_BEGIN
/*
 * Adds a layer's declared input types, or replaces them when the same
 * layer declared them before (a profile's line overriding an included
 * file's): each layer has one list, and every list must accept an input.
 */
static int set_input_types(struct sr_policy *p, enum sr_source src,
                           struct sr_strv *entries, const char *where) {
  struct sr_type_list *t = NULL, *v;
  char *w = strdup(where);

  if (!w)
    return -ENOMEM;
  for (size_t i = 0; i < p->n_input_types; i++)
    if (p->input_types[i].source == src)
      t = &p->input_types[i];
  if (!t) {
    v = realloc(p->input_types, (p->n_input_types + 1) * sizeof(*v));
    if (!v) {
      free(w);
      return -ENOMEM;
    }
    p->input_types = v;
    t = &v[p->n_input_types++];
    memset(t, 0, sizeof(*t));
  }
  sr_strv_done(&t->entries);
  free(t->where);
  t->entries = *entries;
  memset(entries, 0, sizeof(*entries));
  t->source = src;
  t->where = w;
  return 0;
}

SR_ANALYZER_STORED_LEAK_END

static int apply_inputs_types(struct layer *L, const struct sr_conf_line *l) {
  _cleanup_(sr_strv_done) struct sr_strv list = {0};
  char where[600];
  const char *why;
  int r;

  r = want_args(L, l, 1, SR_TYPES_MAX, "TYPE...");
  if (r < 0)
    return r;
  for (size_t i = 0; i < l->n_args; i++) {
    r = sr_type_list_add(&list, l->args[i], &why);
    if (r == -EINVAL)
      return line_error(L, l, "inputs-types: '%s': %s", l->args[i], why);
    if (r < 0)
      return r;
  }
  snprintf(where, sizeof(where), "%s:%u", l->file, l->line);
  return set_input_types(L->p, L->src, &list, where);
}

/* "python.profile:12": where an entry was listed, for --explain. */
static void line_where(const struct sr_conf_line *l, char *buf, size_t len) {
  const char *base = strrchr(l->file, '/');

  snprintf(buf, len, "%s:%u", base ? base + 1 : l->file, l->line);
}

/* `network-allow ENTRY...`: names, `*.suffix`, and here (unlike SKILL.md)
 * IP addresses and ranges, each with an optional port (netallow.h). */
static int apply_network_allow(struct layer *L, const struct sr_conf_line *l) {
  enum sr_netallow_origin origin = L->src == SR_SRC_CONF
                                       ? SR_NETALLOW_ORIGIN_CONF
                                       : SR_NETALLOW_ORIGIN_PROFILE;
  char where[SR_NETALLOW_WHERE_MAX];
  int r;

  r = want_args(L, l, 1, SIZE_MAX, "ENTRY...");
  if (r < 0)
    return r;
  line_where(l, where, sizeof(where));
  for (size_t i = 0; i < l->n_args; i++) {
    struct sr_netallow_entry e;
    char why[256];

    if (sr_netallow_parse_entry(l->args[i], SR_NETALLOW_LITERALS, origin, where,
                                &e, why, sizeof(why)) < 0)
      return line_error(L, l, "network-allow: '%s': %s", l->args[i], why);
    r = sr_netallow_add(&L->allow, &e);
    if (r == -E2BIG)
      return line_error(L, l, "network-allow: more than %d entries",
                        SR_NETALLOW_MAX);
    if (r < 0)
      return r;
  }
  if (!L->allow_at)
    L->allow_at = l;
  return 0;
}

/*
 * skillrun.conf's bound of a profile list (`seccomp-allow NAME...`,
 * `bind-ro PATH...`, ...): the entries are what a profile may add, and
 * `none` alone permits nothing.  Lines add up, but `none` and entries do
 * not mix.  `check` validates one entry and may rewrite it into buf
 * (NULL: taken as written); it returns a reason or NULL.
 */
static int apply_conf_bound(struct layer *L, const struct sr_conf_line *l,
                            bool *bounded, struct sr_strv *list,
                            const char *(*check)(const char *entry, char *buf,
                                                 size_t len)) {
  int r;

  r = want_args(L, l, 1, SIZE_MAX, "ENTRY...|none");
  if (r < 0)
    return r;
  if (l->n_args == 1 && !strcmp(l->args[0], "none")) {
    if (list->n > 0)
      return line_error(L, l, "%s: none excludes the entries listed before",
                        l->key);
    *bounded = true;
    return 0;
  }
  if (*bounded && list->n == 0)
    return line_error(L, l, "%s: an earlier line said none", l->key);
  for (size_t i = 0; i < l->n_args; i++) {
    char buf[PATH_MAX];
    const char *e = l->args[i], *why;

    if (!strcmp(e, "none"))
      return line_error(L, l, "%s: none stands alone", l->key);
    why = check ? check(e, buf, sizeof(buf)) : NULL;
    if (why)
      return line_error(L, l, "%s: '%s' %s", l->key, e, why);
    if (check)
      e = buf;
    if (sr_strv_contains(list, e))
      continue;
    r = sr_strv_push(list, e);
    if (r < 0)
      return r;
  }
  *bounded = true;
  return 0;
}

/* A system call name as skillrun.conf's seccomp-allow lists it. */
static const char *check_syscall_name(const char *e, char *buf, size_t len) {
  size_t n = strlen(e);

  if (n == 0 || n > 64)
    return "is not a system call name";
  for (const char *c = e; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
      return "is not a system call name";
  snprintf(buf, len, "%s", e);
  return NULL;
}

/* A host path as skillrun.conf's bind-ro lists it. */
static const char *check_bind_path(const char *e, char *buf, size_t len) {
  if (!sr_valid_abs_path(e))
    return "must be an absolute, normalised path";
  snprintf(buf, len, "%s", e);
  return NULL;
}

/* An /etc file or directory as skillrun.conf's etc-file lists it:
 * "localtime", "ssl/certs" or "/etc/localtime", kept absolute. */
static const char *check_etc_name(const char *e, char *buf, size_t len) {
  int n = snprintf(buf, len, "%s%s", e[0] == '/' ? "" : "/etc/", e);

  if (n < 0 || (size_t)n >= len || !sr_valid_abs_path(buf) ||
      !sr_path_at_or_below(buf, "/etc"))
    return "must name a file or directory at or below /etc, normalised";
  return NULL;
}

/* A variable name as skillrun.conf's env-keep lists it. */
static const char *check_env_name(const char *e, char *buf, size_t len) {
  if (!valid_env_name(e))
    return "is not a variable name (letters, digits and '_', not starting "
           "with a digit)";
  snprintf(buf, len, "%s", e);
  return NULL;
}

static int apply_line(struct layer *L, const struct sr_conf_line *l) {
  struct sr_policy *p = L->p;
  unsigned here = SR_LAYER(L->src);
  int k = key_by_name(l->key);
  bool b;
  int r;

  if (k < 0)
    return unknown_key(L, l);
  if (!(key_where(k) & here))
    return line_error(L, l,
                      here == IN_CONF
                          ? "key '%s' belongs in a profile, not in "
                            "skillrun.conf"
                          : "key '%s' is only allowed in skillrun.conf",
                      l->key);
  if (k < K__SCALAR_MAX) {
    /* Twice in one file is a mistake.  From another file it is an
     * override: `include default` then `network allow` must work, so the
     * later line replaces what the included file set. */
    if (L->seen[k] && !strcmp(L->seen[k]->file, l->file))
      return line_error(L, l, "duplicate key '%s' (first set at %s:%u)", l->key,
                        L->seen[k]->file, L->seen[k]->line);
    if (k < SR__LIM_MAX && L->seen[k])
      p->limits[k] = L->base[k];
    L->seen[k] = l;
  }
  if (k < SR__LIM_MAX)
    return apply_limit(L, l, k);

  switch (k) {
  case K_NETWORK:
    r = want_args(L, l, 1, 1, "deny|allowlist|host");
    if (r < 0)
      return r;
    if (sr_network_mode_from_name(l->args[0], &L->network) < 0)
      return line_error(L, l,
                        "network: '%s' is not deny, allowlist or host "
                        "(allow is host)",
                        l->args[0]);
    L->network_at = l;
    return 0;
  case K_NETWORK_ALLOW:
    return apply_network_allow(L, l);
  case K_NETWORK_HOSTS:
    r = want_args(L, l, 1, 1, "PATH");
    if (r < 0)
      return r;
    return set_path(L, l, l->args[0], &p->net_hosts);
  case K_CGROUP: {
    int m;
    r = want_args(L, l, 1, 1, "require|prefer|off");
    if (r < 0)
      return r;
    m = name_index(cgroup_mode_names, SR__CGROUP_MAX, l->args[0]);
    if (m < 0)
      return line_error(L, l, "cgroup: '%s' is not require, prefer or off",
                        l->args[0]);
    p->cgroup = (enum sr_cgroup_mode)m;
    if (L->src == SR_SRC_CONF)
      p->cgroup_floor = (enum sr_cgroup_mode)m;
    return 0;
  }
  case K_PROC: {
    int m;
    r = want_args(L, l, 1, 1, "procfs|tmpfs");
    if (r < 0)
      return r;
    m = name_index(proc_mode_names, SR__PROC_MAX, l->args[0]);
    if (m < 0)
      return line_error(L, l, "proc: '%s' is not procfs or tmpfs", l->args[0]);
    p->proc = (enum sr_proc_mode)m;
    return 0;
  }
  case K_STRICT:
    r = want_args(L, l, 1, 1, "yes|no");
    if (r < 0)
      return r;
    if (sr_parse_bool(l->args[0], &b) < 0)
      return line_error(L, l, "strict: '%s' is not yes or no", l->args[0]);
    p->strict = b;
    return 0;
  case K_MEMORY_RLIMIT:
    r = want_args(L, l, 1, 1, "yes|no");
    if (r < 0)
      return r;
    if (sr_parse_bool(l->args[0], &b) < 0)
      return line_error(L, l, "memory-rlimit: '%s' is not yes or no",
                        l->args[0]);
    p->memory_rlimit = b;
    return 0;
  case K_HOSTNAME: {
    char *h;
    r = want_args(L, l, 1, 1, "NAME");
    if (r < 0)
      return r;
    if (!valid_hostname(l->args[0]))
      return line_error(L, l,
                        "hostname: '%s' is not a host name (letters, digits, "
                        "'-' and '.', at most 64)",
                        l->args[0]);
    h = strdup(l->args[0]);
    if (!h)
      return -ENOMEM;
    free(p->hostname);
    p->hostname = h;
    return 0;
  }
  case K_WORKSPACE_ROOT: {
    char *w;
    r = want_args(L, l, 1, 1, "DIR");
    if (r < 0)
      return r;
    if (!sr_valid_abs_path(l->args[0]) || !strcmp(l->args[0], "/"))
      return line_error(L, l,
                        "workspace-root: '%s' must be an absolute, normalised "
                        "directory other than /",
                        l->args[0]);
    w = strdup(l->args[0]);
    if (!w)
      return -ENOMEM;
    free(p->workspace_root);
    p->workspace_root = w;
    return 0;
  }
  case K_UID_POOL: {
    uint64_t base, count;
    r = want_args(L, l, 2, 2, "FIRST COUNT");
    if (r < 0)
      return r;
    /* Never a range that reaches 0 or the ids of ordinary accounts below
     * 65536, and not past 2^31 (uid_map and many tools are signed). */
    if (sr_parse_uint(l->args[0], UINT32_C(0x7fffffff), &base) < 0 ||
        sr_parse_uint(l->args[1], 65536, &count) < 0 || base < 65536 ||
        count < 1 || base + count - 1 > UINT32_C(0x7fffffff))
      return line_error(L, l,
                        "uid-pool: '%s %s' must be FIRST >= 65536 and COUNT "
                        "from 1 to 65536, below 2^31",
                        l->args[0], l->args[1]);
    p->uid_pool_base = (uint32_t)base;
    p->uid_pool_size = (uint32_t)count;
    return 0;
  }
  case K_TIERS:
    return apply_tiers(L, l);
  case K_REQUIRE_SIGNATURE:
  case K_REQUIRE_CAPABILITY:
  case K_REQUIRE_PLACEMENT:
    r = want_args(L, l, 1, 1, "yes|no");
    if (r < 0)
      return r;
    if (sr_parse_bool(l->args[0], &b) < 0)
      return line_error(L, l, "%s: '%s' is not yes or no", l->key, l->args[0]);
    if (k == K_REQUIRE_SIGNATURE)
      p->require_signature = b;
    else if (k == K_REQUIRE_CAPABILITY)
      p->require_capability = b;
    else
      p->require_placement = b;
    return 0;
  case K_PLACEMENT_ID: {
    char *id;
    r = want_args(L, l, 1, 1, "ID");
    if (r < 0)
      return r;
    if (!sr_valid_id(l->args[0]))
      return line_error(L, l,
                        "placement-id: '%s' is not a valid id (1-64 of A-Z "
                        "a-z 0-9 . _ -, starting with a letter or digit)",
                        l->args[0]);
    id = strdup(l->args[0]);
    if (!id)
      return -ENOMEM;
    free(p->placement_id);
    p->placement_id = id;
    return 0;
  }
  case K_CAPABILITY_KEY:
  case K_AUDIT_KEY:
    r = want_args(L, l, 1, 1, "PATH");
    if (r < 0)
      return r;
    return set_path(L, l, l->args[0],
                    k == K_AUDIT_KEY ? &p->audit_key : &p->capability_key);
  case K_TRUST_KEY:
    return apply_trust_key(L, l);
  case K_INPUTS_TYPES:
    return apply_inputs_types(L, l);
  case K_BIND_RO:
  case K_BIND_RO_TRY:
    if (L->src == SR_SRC_CONF)
      return apply_conf_bound(L, l, &p->binds_bounded, &p->binds_permitted,
                              check_bind_path);
    return apply_bind(L, l, k == K_BIND_RO_TRY);
  case K_ETC_FILE:
  case K_ETC_FILE_TRY:
    if (L->src == SR_SRC_CONF)
      return apply_conf_bound(L, l, &p->etc_bounded, &p->etc_permitted,
                              check_etc_name);
    return apply_etc_file(L, l, k == K_ETC_FILE_TRY);
  case K_ENV_KEEP:
    if (L->src == SR_SRC_CONF)
      return apply_conf_bound(L, l, &p->env_bounded, &p->env_permitted,
                              check_env_name);
    return apply_env_keep(L, l);
  case K_SETENV:
    return apply_setenv(L, l);
  case K_SECCOMP_ALLOW:
    if (L->src == SR_SRC_CONF)
      return apply_conf_bound(L, l, &p->seccomp_bounded, &p->seccomp_permitted,
                              check_syscall_name);
    return apply_seccomp(L, l, true);
  case K_SECCOMP_DENY:
    return apply_seccomp(L, l, false);
  }
  /* Not reached: every key of key_defs has its case above. */
  return line_error(L, l, "unknown key '%s'", l->key);
}

static int apply_lines(struct layer *L, const struct sr_conf *c) {
  int r;

  memcpy(L->base, L->p->limits, sizeof(L->base));
  for (size_t i = 0; c && i < c->n_lines; i++) {
    r = apply_line(L, &c->lines[i]);
    if (r < 0) {
      if (!sr_error_is_set(L->err))
        sr_error_set(L->err, SR_EXIT_FAILED, -r, "config_invalid", "%s:%u",
                     c->lines[i].file, c->lines[i].line);
      return r;
    }
  }
  return 0;
}

int sr_policy_apply_conf(struct sr_policy *p, const struct sr_conf *c,
                         struct sr_error *err) {
  _cleanup_(layer_done) struct layer L = {
      .p = p, .src = SR_SRC_CONF, .err = err};
  int r;

  r = apply_lines(&L, c);
  if (r < 0)
    return r;
  /* A host that requires a placement must have one to compare with. */
  if (p->require_placement && !p->placement_id) {
    const struct sr_conf_line *at = L.seen[K_REQUIRE_PLACEMENT];
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s:%u: require-placement yes needs placement-id ID",
                        at->file, at->line);
  }
  if (L.network != SR_NET_UNSET) {
    /* `network deny` here means no profile can ever permit it. */
    p->network_max = L.network;
    p->network = SR_NET_DENY;
    p->network_source = SR_SRC_CONF;
  } else if (L.allow.n > 0) {
    /* The destinations a host lets runs reach, and no mode: the built-in
     * host would let a profile and a skill asking for it reach anything,
     * past the list (fail closed; `network host` says so explicitly). */
    p->network_max = SR_NET_ALLOWLIST;
    p->network = SR_NET_DENY;
    p->network_source = SR_SRC_CONF;
    p->network_max_by_list = true;
  }
  if (L.allow.n > 0) {
    /* The bound of every profile's list. */
    sr_netallow_done(&p->net_permitted);
    p->net_permitted = L.allow;
    L.allow = (struct sr_netallow){0};
    p->net_bounded = true;
  }
  return 0;
}

/* A warning for each entry of `dropped`: "<who> ENTRY <why>; dropped". */
static int warn_dropped(struct sr_policy *p, const struct sr_netallow *dropped,
                        const char *why) {
  for (size_t i = 0; i < dropped->n; i++) {
    const struct sr_netallow_entry *e = &dropped->v[i];
    char text[SR_NETALLOW_FORMAT_MAX];
    int r;

    sr_netallow_format(e, text, sizeof(text));
    r = push_warning(p, "%s%s%s %s %s; dropped", e->where,
                     e->where[0] ? ": " : "", entry_key(e->origin), text, why);
    if (r < 0)
      return r;
  }
  return 0;
}

/* A profile's network-allow lines, within skillrun.conf's. */
static int bound_profile_allow(struct sr_policy *p, struct layer *L) {
  _cleanup_netallow_ struct sr_netallow out = {0}, dropped = {0};
  int r;

  if (L->allow.n == 0)
    return 0;
  if (!p->net_bounded) {
    p->net_permitted = L->allow;
    L->allow = (struct sr_netallow){0};
    p->net_bounded = true;
    return 0;
  }
  /* Both may name addresses: a range within a range narrows it. */
  r = sr_netallow_intersect(&L->allow, &p->net_permitted, 0, &out, &dropped);
  if (r < 0)
    return r;
  sr_netallow_done(&p->net_permitted);
  p->net_permitted = out;
  out = (struct sr_netallow){0};
  return warn_dropped(p, &dropped, "is not permitted by skillrun.conf");
}

int sr_policy_apply_profile(struct sr_policy *p, const struct sr_conf *c,
                            struct sr_error *err) {
  _cleanup_(layer_done) struct layer L = {
      .p = p, .src = SR_SRC_PROFILE, .err = err};
  enum sr_network_mode conf_max = p->network_max;
  enum sr_network_mode asked;
  unsigned conf_tiers = p->tiers_allowed;
  bool conf_requires = p->require_signature;
  int r;

  if (c && c->name) {
    char *name = strdup(c->name);
    if (!name)
      return -ENOMEM;
    free(p->profile);
    p->profile = name;
  }
  r = apply_lines(&L, c);
  if (r < 0)
    return r;

  /* A profile only narrows what skillrun.conf lets run. */
  for (int t = 0; t < SR__TIER_MAX; t++)
    if ((p->tiers_allowed & ~conf_tiers) & (1u << t)) {
      r = push_warning(p,
                       "profile: tier %s is not allowed by skillrun.conf; "
                       "it stays refused",
                       sr_tier_name(t));
      if (r < 0)
        return r;
    }
  p->tiers_allowed &= conf_tiers;
  if (conf_requires && !p->require_signature) {
    p->require_signature = true;
    r = push_warning(p, "profile: require-signature no is overridden by "
                        "skillrun.conf; signatures stay required");
    if (r < 0)
      return r;
  }

  /* Nor may it hold the run's limits more weakly than skillrun.conf
   * says (a profile without a cgroup line has the conf's). */
  if (cgroup_rank(p->cgroup) < cgroup_rank(p->cgroup_floor)) {
    const struct sr_conf_line *at = L.seen[K_CGROUP];
    r = push_warning(
        p,
        "profile %s:%u: cgroup %s is weaker than skillrun.conf's "
        "cgroup %s; cgroup stays %s",
        at ? at->file : "?", at ? at->line : 0, cgroup_mode_names[p->cgroup],
        cgroup_mode_names[p->cgroup_floor], cgroup_mode_names[p->cgroup_floor]);
    if (r < 0)
      return r;
    p->cgroup = p->cgroup_floor;
  }

  /* No `network` line in the profile means deny (doas: no rule, no); what
   * it permits stays within what skillrun.conf does. */
  asked = L.network == SR_NET_UNSET ? SR_NET_DENY : L.network;
  p->network = SR_NET_DENY;
  p->network_max = asked < conf_max ? asked : conf_max;
  if (L.network != SR_NET_UNSET)
    p->network_source = SR_SRC_PROFILE;
  if (asked > conf_max) {
    r = push_warning(
        p,
        "profile %s:%u: network %s is forbidden by "
        "skillrun.conf%s; network stays %s",
        L.network_at->file, L.network_at->line, sr_network_mode_name(asked),
        p->network_max_by_list ? " (network-allow without network host)" : "",
        conf_max == SR_NET_DENY ? "denied" : sr_network_mode_name(conf_max));
    if (r < 0)
      return r;
  }
  if (L.allow_at && asked == SR_NET_DENY) {
    r = push_warning(p,
                     "profile %s:%u: network-allow has no effect without "
                     "network allowlist",
                     L.allow_at->file, L.allow_at->line);
    if (r < 0)
      return r;
  }
  return bound_profile_allow(p, &L);
}

/*
 * A value from the manifest or a flag: below the limit's minimum it is an
 * error of that layer (refused for SKILL.md, usage for a flag); otherwise it
 * may only lower the limit (lower_limit clamps and warns).
 */
static int lower_from(struct sr_policy *p, enum sr_limit_id id, uint64_t value,
                      enum sr_source src, const char *who,
                      struct sr_error *err) {
  const struct sr_limit_def *d = &sr_limit_defs[id];
  const bool manifest = src == SR_SRC_MANIFEST;
  int r;

  if (value < d->min) {
    char val[32], min[32];
    sr_limit_format(d->kind, value, val, sizeof(val));
    sr_limit_format(d->kind, d->min, min, sizeof(min));
    return sr_error_set(err, manifest ? SR_EXIT_REFUSED : SR_EXIT_FAILED, 0,
                        manifest ? "manifest_invalid" : "usage",
                        "%s %s is below the minimum %s", who, val, min);
  }
  r = lower_limit(p, id, value, src, who);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid", "%s", who);
  return 0;
}

/*
 * The effective allowlist, once the mode is allowlist: the skill's request
 * within what is permitted.  A requested entry that nothing permits is
 * dropped with a warning, or refused under a strict profile.  The
 * permitted address ranges stay: the request cannot name addresses, and
 * they unblock the private addresses names may resolve to.
 */
static int resolve_allowlist(struct sr_policy *p, struct sr_error *err) {
  _cleanup_netallow_ struct sr_netallow dropped = {0};
  size_t names = 0;
  int r;

  sr_netallow_done(&p->net_allow);
  if (!p->net_bounded) {
    r = sr_netallow_copy(&p->net_allow, &p->net_request);
    /* Nothing bounded them: no entry of a profile to name. */
    for (size_t i = 0; r >= 0 && i < p->net_allow.n; i++) {
      p->net_allow.v[i].bound_origin = SR_NETALLOW_ORIGIN_NONE;
      p->net_allow.v[i].bound_where[0] = '\0';
    }
  } else {
    r = sr_netallow_intersect(&p->net_request, &p->net_permitted,
                              SR_NETALLOW_KEEP_RANGES, &p->net_allow, &dropped);
  }
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                        "network allowlist");
  if (p->strict && dropped.n > 0) {
    const struct sr_netallow_entry *e = &dropped.v[0];
    char text[SR_NETALLOW_FORMAT_MAX];

    sr_netallow_format(e, text, sizeof(text));
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "manifest_strict",
                        "%s: %s %s is not permitted by the profile or "
                        "skillrun.conf (refused by strict profile)",
                        e->where[0] ? e->where : "SKILL.md",
                        entry_key(e->origin), text);
  }
  r = warn_dropped(p, &dropped,
                   "is not permitted by the profile or skillrun.conf");
  for (size_t i = 0; r >= 0 && i < p->net_allow.n; i++)
    if (p->net_allow.v[i].kind != SR_NETALLOW_RANGE)
      names++;
  if (r >= 0 && names == 0)
    r = push_warning(p, "network allowlist: no destination the skill names "
                        "is permitted; every connection will be refused");
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                        "network allowlist");
  return 0;
}

/* SKILL.md's network request: sandbox.network, or, when it is silent,
 * allowlist as soon as it names a destination (sandbox.network-allow, a
 * WebFetch(domain:) tool). */
static int apply_manifest_network(struct sr_policy *p,
                                  const struct sr_manifest *m,
                                  struct sr_error *err) {
  enum sr_network_mode asked = m->network;
  int r;

  if (asked == SR_NET_UNSET && m->network_allow.n > 0)
    asked = SR_NET_ALLOWLIST;
  if (asked == SR_NET_UNSET)
    return 0;
  r = sr_netallow_copy(&p->net_request, &m->network_allow);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid", "SKILL.md");
  if (asked > p->network_max) {
    if (m->network != SR_NET_UNSET)
      r = push_warning(p,
                       "SKILL.md:%u: sandbox.network %s is not permitted "
                       "by the profile or skillrun.conf; network stays denied",
                       m->network_line, sr_network_mode_name(asked));
    else
      r = push_warning(p,
                       "%s: the skill names network destinations, but the "
                       "profile or skillrun.conf permit no network allowlist; "
                       "network stays denied",
                       m->network_allow.v[0].where);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                          "SKILL.md");
    return 0;
  }
  p->network = asked;
  p->network_source = SR_SRC_MANIFEST;
  return asked == SR_NET_ALLOWLIST ? resolve_allowlist(p, err) : 0;
}

int sr_policy_apply_manifest(struct sr_policy *p, const struct sr_manifest *m,
                             struct sr_error *err) {
  char dir[SR_VIEW_SKILL_DIR_MAX];
  int r;

  /* The view's part the skill shapes: its directory's name. */
  r = sr_view_skill_dir(m->name, dir, sizeof(dir));
  if (r >= 0) {
    free(p->skill_dir);
    p->skill_dir = strdup(dir);
  }
  if (r < 0 || !p->skill_dir)
    return sr_error_set(err, SR_EXIT_FAILED, r < 0 ? -r : ENOMEM,
                        "config_invalid", "the skill's directory");

  if (p->strict && m->warnings.n > 0) {
    const char *w = m->warnings.v[0];
    /* Manifest warnings already start with "SKILL.md:LINE:". */
    if (!strncmp(w, "SKILL.md", strlen("SKILL.md")))
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "manifest_strict",
                          "%s (refused by strict profile)", w);
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "manifest_strict",
                        "SKILL.md: %s (refused by strict profile)", w);
  }

  for (int id = 0; id < SR__LIM_MAX; id++) {
    const struct sr_manifest_limit *lim = &m->limits[id];
    char who[96];

    if (!lim->set || !sr_limit_settable(id, SR_SRC_MANIFEST))
      continue;
    if (lim->line > 0)
      snprintf(who, sizeof(who), "SKILL.md:%u: sandbox.%s", lim->line,
               sr_limit_defs[id].name);
    else
      snprintf(who, sizeof(who), "SKILL.md: sandbox.%s",
               sr_limit_defs[id].name);
    r = lower_from(p, id, lim->value, SR_SRC_MANIFEST, who, err);
    if (r < 0)
      return r;
  }

  /* Declared types only narrow: every layer's list must accept a file. */
  if (m->inputs_types.n > 0) {
    struct sr_strv copy = {0};
    char where[32];

    for (size_t i = 0; i < m->inputs_types.n; i++)
      if (sr_strv_push(&copy, m->inputs_types.v[i]) < 0) {
        sr_strv_done(&copy);
        return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "oom", "SKILL.md");
      }
    snprintf(where, sizeof(where), "SKILL.md:%u", m->inputs_types_line);
    r = set_input_types(p, SR_SRC_MANIFEST, &copy, where);
    if (r < 0) {
      sr_strv_done(&copy);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "oom", "SKILL.md");
    }
  }

  return apply_manifest_network(p, m, err);
}

/* A later layer narrows host to allowlist: the skill's request within what
 * is permitted becomes the list. */
static int narrow_to_allowlist(struct sr_policy *p, enum sr_source src,
                               struct sr_error *err) {
  p->network = SR_NET_ALLOWLIST;
  p->network_source = src;
  return resolve_allowlist(p, err);
}

/* The capability's own list: the effective names within it; the permitted
 * address ranges stay (a token names no address). */
static int narrow_by_capability(struct sr_policy *p, const char *allow,
                                struct sr_error *err) {
  _cleanup_netallow_ struct sr_netallow cap = {0}, names = {0}, out = {0},
                                        dropped = {0};
  char why[256];
  int r;

  r = sr_netallow_parse_list(allow, 0, SR_NETALLOW_ORIGIN_CAPABILITY,
                             "capability", &cap, why, sizeof(why));
  if (r == -EINVAL)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "capability_invalid",
                        "capability: network allowlist: %s", why);
  for (size_t i = 0; r >= 0 && i < p->net_allow.n; i++)
    if (p->net_allow.v[i].kind != SR_NETALLOW_RANGE)
      r = sr_netallow_add(&names, &p->net_allow.v[i]);
  if (r >= 0)
    r = sr_netallow_intersect(&names, &cap, 0, &out, &dropped);
  /* A range is not within any name: it is no destination of this run any
   * more, but still unblocks the addresses the names kept resolve to (the
   * capability cannot name a range: without it, an internal name would
   * be refused on every host that needs one). */
  for (size_t i = 0; r >= 0 && i < p->net_allow.n; i++) {
    struct sr_netallow_entry e = p->net_allow.v[i];
    char text[SR_NETALLOW_FORMAT_MAX];

    if (e.kind != SR_NETALLOW_RANGE)
      continue;
    e.unblock_only = true;
    r = sr_netallow_add(&out, &e);
    if (r < 0)
      break;
    sr_netallow_format(&e, text, sizeof(text));
    r = push_warning(p,
                     "%s%s%s %s is not permitted by the execution capability "
                     "as a destination; it only lets the names on the list "
                     "reach addresses in it",
                     e.where, e.where[0] ? ": " : "", entry_key(e.origin),
                     text);
  }
  if (r >= 0)
    r = warn_dropped(p, &dropped,
                     "is not permitted by the execution "
                     "capability");
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                        "capability");
  sr_netallow_done(&p->net_allow);
  p->net_allow = out;
  out = (struct sr_netallow){0};
  return 0;
}

int sr_policy_limit_network(struct sr_policy *p, enum sr_network_mode max,
                            const char *allow, struct sr_error *err) {
  int r = 0;

  if (max == SR_NET_HOST || max == SR_NET_UNSET)
    return 0; /* `network: allow` (host): nothing to narrow */
  if (max == SR_NET_DENY) {
    if (p->network != SR_NET_DENY)
      r = push_warning(p, "the execution capability allows only network "
                          "deny; network denied");
    p->network = SR_NET_DENY;
    p->network_max = SR_NET_DENY;
    p->network_source = SR_SRC_CAPABILITY;
    sr_netallow_done(&p->net_allow);
  } else {
    if (p->network_max > SR_NET_ALLOWLIST)
      p->network_max = SR_NET_ALLOWLIST;
    if (p->network == SR_NET_HOST) {
      r = push_warning(p, "the execution capability allows at most network "
                          "allowlist; network host narrowed to allowlist");
      if (r >= 0) {
        int q = narrow_to_allowlist(p, SR_SRC_CAPABILITY, err);
        if (q < 0)
          return q;
      }
    }
    if (r >= 0 && p->network == SR_NET_ALLOWLIST && allow && *allow)
      return narrow_by_capability(p, allow, err);
  }
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                        "capability");
  return 0;
}

int sr_policy_apply_flags(struct sr_policy *p, const struct sr_flag_layer *f,
                          struct sr_error *err) {
  int r;

  for (int id = 0; id < SR__LIM_MAX; id++) {
    char who[64];

    if (!f->limits[id].set || !sr_limit_settable(id, SR_SRC_FLAG))
      continue;
    snprintf(who, sizeof(who), "--%s", sr_limit_defs[id].name);
    r = lower_from(p, id, f->limits[id].value, SR_SRC_FLAG, who, err);
    if (r < 0)
      return r;
  }

  /* --network narrows; asking for more than SKILL.md and the profile agree
   * on only warns (the skill did not ask, or may not have it). */
  if (f->network == SR_NET_DENY) {
    p->network = SR_NET_DENY;
    p->network_source = SR_SRC_FLAG;
    sr_netallow_done(&p->net_allow);
  } else if (f->network == SR_NET_ALLOWLIST && p->network == SR_NET_HOST) {
    r = narrow_to_allowlist(p, SR_SRC_FLAG, err);
    if (r < 0)
      return r;
  } else if (f->network != SR_NET_UNSET && f->network > p->network) {
    char ask[64];

    snprintf(ask, sizeof(ask),
             "SKILL.md does not ask for it (sandbox.network: %s)",
             sr_network_mode_name(f->network));
    r = push_warning(p, "--network %s: %s; network stays %s",
                     sr_network_mode_name(f->network),
                     p->network_max >= f->network
                         ? ask
                         : "it is not permitted by the profile or the "
                           "platform configuration",
                     p->network == SR_NET_DENY
                         ? "denied"
                         : sr_network_mode_name(p->network));
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                          "--network");
  }

  /* The caller chooses where its own run directories go. */
  if (f->workspace_root) {
    char *w = strdup(f->workspace_root);
    if (!w)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "config_invalid",
                          "--workspace-root");
    free(p->workspace_root);
    p->workspace_root = w;
  }
  return 0;
}

/* ------------------------------------------------------------ --explain */

static json_t *strv_json(const struct sr_strv *sv) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < sv->n; i++)
    if (json_array_append_new(a, json_string(sv->v[i])) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

static json_t *syscalls_json(const struct sr_syscall_list *l) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < l->n; i++)
    if (json_array_append_new(a, json_string(l->v[i].name)) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

/* One entry of "mounts"; src NULL for a filesystem built in place. */
static json_t *mount_json(const char *dst, const char *type, const char *src,
                          bool ro, bool optional, const char *size_limit,
                          const struct sr_policy *p) {
  json_t *o = json_object();
  int id = size_limit ? sr_limit_by_name(size_limit) : -1;
  int r = 0;

  if (!o || (size_limit && id < 0)) {
    json_decref(o);
    return NULL;
  }
  r |= json_object_set_new(o, "dst", json_string(dst));
  r |= json_object_set_new(o, "type", json_string(type));
  r |= json_object_set_new(o, "src", src ? json_string(src) : json_null());
  r |= json_object_set_new(o, "ro", json_boolean(ro));
  r |= json_object_set_new(o, "optional", json_boolean(optional));
  if (id >= 0) {
    char human[32];
    sr_limit_format(SR_KIND_SIZE, p->limits[id].value, human, sizeof(human));
    r |= json_object_set_new(o, "size",
                             json_integer((json_int_t)p->limits[id].value));
    r |= json_object_set_new(o, "size_human", json_string(human));
    r |= json_object_set_new(o, "size_limit",
                             json_string(sr_limit_defs[id].name));
  }
  if (r != 0) {
    json_decref(o);
    return NULL;
  }
  return o;
}

static int append_mount(json_t *mounts, json_t *o) {
  return o && json_array_append_new(mounts, o) == 0 ? 0 : -ENOMEM;
}

/* The sandbox view (view.c) as this policy shapes it: what skillrun
 * builds, in build order, then the profile's binds. */
static json_t *mounts_json(const struct sr_policy *p) {
  const bool proc_tmpfs = p->proc == SR_PROC_TMPFS;
  const char *skill_dir = p->skill_dir ? p->skill_dir : SR_VIEW_SKILLS "/NAME";
  json_t *m = json_array();
  int r = 0;

  if (!m)
    return NULL;
  for (size_t i = 0; r == 0 && i < sr_view_len; i++) {
    const struct sr_view_entry *e = &sr_view[i];
    json_t *o;

    if (!e->listed || e->type == SR_VIEW_PROFILE_BINDS)
      continue;
    /* The bundle's directory, and the link to it, carry the skill's
     * name once the manifest is known. */
    o = mount_json(
        e->per_skill ? skill_dir : e->dst, sr_view_type_name(e, proc_tmpfs),
        e->type == SR_VIEW_SYMLINK ? skill_dir : sr_view_source_name(e),
        sr_view_ro(e, proc_tmpfs), e->optional, e->size_limit, p);
    /* The host files bound into the synthesized /etc. */
    if (o && e->type == SR_VIEW_ETC &&
        (json_object_set_new(o, "copy", strv_json(&p->etc_files)) < 0 ||
         json_object_set_new(o, "copy_try", strv_json(&p->etc_files_try)) <
             0)) {
      json_decref(o);
      o = NULL;
    }
    r = append_mount(m, o);
  }
  for (size_t i = 0; r == 0 && i < sr_view_len; i++) {
    const struct sr_view_entry *e = &sr_view[i];

    if (!e->listed || e->type != SR_VIEW_PROFILE_BINDS)
      continue;
    for (size_t k = 0; r == 0 && k < p->n_binds; k++)
      r = append_mount(m, mount_json(p->binds[k].dst,
                                     sr_view_type_name(e, proc_tmpfs),
                                     p->binds[k].src, sr_view_ro(e, proc_tmpfs),
                                     p->binds[k].optional, NULL, p));
  }
  if (r != 0) {
    json_decref(m);
    return NULL;
  }
  return m;
}

static json_t *limits_json(const struct sr_policy *p,
                           const struct sr_enforcement *enf) {
  json_t *o = json_object();

  for (int i = 0; o && i < SR__LIM_MAX; i++) {
    const struct sr_limit *l = &p->limits[i];
    const char *by = enf ? sr_enforcer_name(enf->by[i]) : NULL;
    char human[32];
    json_t *e;

    sr_limit_format(sr_limit_defs[i].kind, l->value, human, sizeof(human));
    e = json_pack("{s:I, s:I, s:s, s:o, s:s, s:s}", "value",
                  (json_int_t)l->value, "cap", (json_int_t)l->cap, "source",
                  sr_source_name(l->source), "enforced_by",
                  by ? json_string(by) : json_null(), "human", human, "unit",
                  sr_limit_unit(sr_limit_defs[i].kind));
    if (!e || json_object_set_new(o, sr_limit_defs[i].name, e) < 0) {
      json_decref(o);
      return NULL;
    }
  }
  return o;
}

static json_t *trust_json(const struct sr_policy *p) {
  json_t *tiers = json_array(), *keys = json_array();

  for (int t = 0; tiers && t < SR__TIER_MAX; t++)
    if ((p->tiers_allowed & (1u << t)) &&
        json_array_append_new(tiers, json_string(sr_tier_name(t))) < 0) {
      json_decref(tiers);
      tiers = NULL;
    }
  for (size_t i = 0; keys && i < p->n_trust_keys; i++)
    if (json_array_append_new(keys,
                              json_pack("{s:s, s:s, s:s*}", "tier",
                                        sr_tier_name(p->trust_keys[i].tier),
                                        "path", p->trust_keys[i].path, "tenant",
                                        p->trust_keys[i].tenant)) < 0) {
      json_decref(keys);
      keys = NULL;
    }
  return json_pack("{s:o, s:b, s:o, s:o, s:b, s:o, s:b, s:o}", "tiers", tiers,
                   "require_signature", p->require_signature, "trust_keys",
                   keys, "capability_key",
                   p->capability_key ? json_string(p->capability_key)
                                     : json_null(),
                   "require_capability", p->require_capability, "placement_id",
                   p->placement_id ? json_string(p->placement_id) : json_null(),
                   "require_placement", p->require_placement, "audit_key",
                   p->audit_key ? json_string(p->audit_key) : json_null());
}

static json_t *input_types_json(const struct sr_policy *p) {
  json_t *a = json_array();

  for (size_t i = 0; a && i < p->n_input_types; i++) {
    const struct sr_type_list *t = &p->input_types[i];
    if (json_array_append_new(
            a, json_pack("{s:s, s:s, s:o}", "source", sr_source_name(t->source),
                         "where", t->where, "types", strv_json(&t->entries))) <
        0) {
      json_decref(a);
      return NULL;
    }
  }
  return a;
}

/* One allowlist entry: its text, who asked for it (origin, where) and
 * what permitted it (null when nothing bounded the list). */
static json_t *netallow_entry_json(const struct sr_netallow_entry *e) {
  char text[SR_NETALLOW_FORMAT_MAX];
  json_t *by = json_null();

  sr_netallow_format(e, text, sizeof(text));
  if (e->bound_origin != SR_NETALLOW_ORIGIN_NONE &&
      (e->bound_origin != e->origin || strcmp(e->bound_where, e->where) != 0))
    by = json_pack(
        "{s:s, s:o}", "origin", sr_netallow_origin_name(e->bound_origin),
        "where", e->bound_where[0] ? json_string(e->bound_where) : json_null());
  return json_pack("{s:s, s:s, s:o, s:o, s:b}", "entry", text, "origin",
                   sr_netallow_origin_name(e->origin), "where",
                   e->where[0] ? json_string(e->where) : json_null(),
                   "permitted_by", by, "narrowed", e->narrowed);
}

static json_t *netallow_json(const struct sr_netallow *l) {
  json_t *a = json_array();

  /* An unblock_only range is no destination (a warning said so). */
  for (size_t i = 0; a && i < l->n; i++)
    if (!l->v[i].unblock_only &&
        json_array_append_new(a, netallow_entry_json(&l->v[i])) < 0) {
      json_decref(a);
      return NULL;
    }
  return a;
}

static json_t *network_json(const struct sr_policy *p,
                            const struct sr_enforcement *enf) {
  const char *by = enf ? sr_net_enforcer_name(enf->network) : NULL;
  const struct sr_netallow none = {0};

  return json_pack(
      "{s:s, s:b, s:s, s:s, s:o, s:o, s:o, s:o}", "mode",
      sr_network_mode_name(p->network), "permitted",
      p->network_max > SR_NET_DENY, "permitted_mode",
      sr_network_mode_name(p->network_max), "source",
      sr_source_name(p->network_source), "allow",
      netallow_json(p->network == SR_NET_ALLOWLIST ? &p->net_allow : &none),
      "permitted_allow",
      p->net_bounded ? netallow_json(&p->net_permitted) : json_null(),
      "hosts_file", p->net_hosts ? json_string(p->net_hosts) : json_null(),
      "enforced_by", by ? json_string(by) : json_null());
}

json_t *sr_policy_to_json(const struct sr_policy *p,
                          const struct sr_enforcement *enf) {
  json_t *env_set = json_object();
  json_t *o;

  for (size_t i = 0; env_set && i < p->n_setenv; i++)
    if (json_object_set_new(env_set, p->setenv[i].name,
                            json_string(p->setenv[i].value)) < 0) {
      json_decref(env_set);
      env_set = NULL;
    }
  if (!env_set)
    return NULL;

  /* "o" steals each reference; a NULL one makes json_pack fail as a whole. */
  o = json_pack(
      "{s:o, s:o, s:o, s:s, s:s, s:b, s:o, s:o, s:o, s:o, "
      "s:{s:o, s:o}, s:{s:o, s:o}, s:o}",
      "profile", p->profile ? json_string(p->profile) : json_null(), "limits",
      limits_json(p, enf), "network", network_json(p, enf), "cgroup",
      cgroup_mode_names[(unsigned)p->cgroup < SR__CGROUP_MAX ? p->cgroup : 0],
      "proc", proc_mode_names[(unsigned)p->proc < SR__PROC_MAX ? p->proc : 0],
      "strict", p->strict, "hostname",
      p->hostname ? json_string(p->hostname) : json_null(), "workspace_root",
      p->workspace_root ? json_string(p->workspace_root) : json_null(),
      "uid_pool",
      json_pack("{s:I, s:I}", "first", (json_int_t)p->uid_pool_base, "count",
                (json_int_t)p->uid_pool_size),
      "mounts", mounts_json(p), "environment", "keep", strv_json(&p->env_keep),
      "set", env_set, "seccomp", "allow", syscalls_json(&p->seccomp_allow),
      "deny", syscalls_json(&p->seccomp_deny), "warnings",
      strv_json(&p->warnings));
  if (o && json_object_set_new(o, "platform",
                               p->platform ? json_string(p->platform)
                                           : json_null()) < 0) {
    json_decref(o);
    return NULL;
  }
  if (o && json_object_set_new(o, "memory_rlimit",
                               json_boolean(p->memory_rlimit)) < 0) {
    json_decref(o);
    return NULL;
  }
  if (o && (json_object_set_new(o, "trust", trust_json(p)) < 0 ||
            json_object_set_new(o, "inputs_types", input_types_json(p)) < 0)) {
    json_decref(o);
    return NULL;
  }
  return o;
}
