/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "limit.h"
#include "netallow.h"
#include "tier.h"
#include "util.h"

struct sr_conf;
struct sr_error;
struct sr_type_list;

struct sr_manifest;

/*
 * Platform defaults that are not limits: the host ids root runs map the
 * sandbox user to (skillrun.conf `uid-pool FIRST COUNT`; ns.h).
 */
#define SR_UID_POOL_BASE 800000
#define SR_UID_POOL_SIZE 64

struct sr_limit {
  uint64_t value;        /* effective value (<= cap) */
  uint64_t cap;          /* platform cap: builtin, or skillrun.conf */
  enum sr_source source; /* layer that set `value` */
};

/* The mechanism that enforces a limit ("enforced_by" in the audit). */
enum sr_enforcer {
  SR_ENF_NONE = 0,   /* not decided (--explain) or not enforced: null */
  SR_ENF_CGROUP2,    /* the run's cgroup v2 leaf: the whole tree */
  SR_ENF_RLIMIT,     /* an rlimit (RLIMIT_NPROC counts the sandbox's user in
                      * its own user namespace: the whole tree) */
  SR_ENF_SUPERVISOR, /* the supervisor: its event loop, the staging copy, or
                      * (memory, CPU) its sampler of the tree, sampler.h */
  SR_ENF_CGROUP1,    /* the run's cgroup v1 leaves: the whole tree */
  SR_ENF_TMPFS,      /* the size of a tmpfs mount */
  SR_ENF_PROXY,      /* the egress proxy (network allowlist) */
  SR__ENF_MAX
};
/* "cgroup2", "rlimit", ...; NULL for SR_ENF_NONE. */
const char *sr_enforcer_name(enum sr_enforcer e);

/* What keeps the network mode ("network": {"enforced_by"}). */
enum sr_net_enforcer {
  SR_NETENF_UNDECIDED = 0,  /* --explain, before anything is prepared: null */
  SR_NETENF_NETNS,          /* deny: the sandbox's own namespace, only lo */
  SR_NETENF_PROXY,          /* allowlist: the same, egress by the proxy */
  SR_NETENF_LANDLOCK_SCOPE, /* host: Landlock closes the host's abstract
                             * unix sockets */
  SR_NETENF_NONE,           /* host, where the kernel cannot scope them */
  SR__NETENF_MAX
};
/* "netns", "proxy", "landlock-scope", "none"; NULL when undecided. */
const char *sr_net_enforcer_name(enum sr_net_enforcer e);

/*
 * What enforces each limit of one run: decided by the prepare stage once
 * the host's means are known (a cgroup leaf or not), after the policy is
 * final.  Kept apart from the policy, which is never written after it is
 * resolved.
 */
struct sr_enforcement {
  enum sr_enforcer by[SR__LIM_MAX];
  enum sr_net_enforcer network;
  /* The Landlock ABI the skill's ruleset is made for (landlock.h); 0: no
   * Landlock on this kernel. */
  int landlock_abi;
};

enum sr_cgroup_mode {
  SR_CGROUP_PREFER = 0,
  SR_CGROUP_REQUIRE,
  SR_CGROUP_OFF,
  SR__CGROUP_MAX
};
enum sr_proc_mode { SR_PROC_PROCFS = 0, SR_PROC_TMPFS, SR__PROC_MAX };

struct sr_bind {
  char *src;     /* absolute host path */
  char *dst;     /* absolute sandbox path */
  bool optional; /* bind-ro-try: a missing source is skipped, not an error */
  char *file;    /* where it was declared, for errors */
  unsigned line;
};

struct sr_trust_key_path {
  enum sr_tier tier;
  char *tenant; /* SR_TIER_TENANT: `trust-key tenant:ID PATH`; else NULL */
  char *path;
};

struct sr_setenv {
  char *name;
  char *value;
};

/*
 * A system call named by seccomp-allow or seccomp-deny.  The policy keeps
 * the name as written; whether libseccomp knows it is checked by
 * sr_seccomp_check_names (seccomp.c), which names the line.
 */
struct sr_syscall_ref {
  char *name;
  char *file; /* where it was listed, for errors */
  unsigned line;
  unsigned seq; /* order of listing across both lists */
};
struct sr_syscall_list {
  struct sr_syscall_ref *v;
  size_t n;
};
bool sr_syscall_list_contains(const struct sr_syscall_list *l,
                              const char *name);

/*
 * The resolved policy: every limit already clamped.  Built layer by layer
 * by the functions below, in the order of enum sr_source (main.c may add a
 * warning between layers); after the last layer it is only read (const)
 * by everything that prepares and runs the sandbox.  What enforces each
 * limit is a separate record (struct sr_enforcement).
 */
struct sr_policy {
  char *profile;  /* display name of the profile */
  char *platform; /* the skillrun.conf read (its path), NULL for none */
  struct sr_limit limits[SR__LIM_MAX];

  enum sr_network_mode network;     /* the effective mode, never UNSET */
  enum sr_network_mode network_max; /* the widest skillrun.conf and the
                                       profile permit */
  /* skillrun.conf's network_max is allowlist for its network-allow lines,
   * not for a network line: what its refusals name. */
  bool network_max_by_list;
  enum sr_source network_source;
  /* The allowlist (skillrun.profile(5) "NETWORK").  What skillrun.conf and
   * the profile permit, their network-allow lines intersected; a layer
   * without such lines does not bound it, and when none has any
   * (net_bounded false) any name a skill asks for is permitted. */
  bool net_bounded;
  struct sr_netallow net_permitted;
  /* What the skill asks for (SKILL.md sandbox.network-allow and WebFetch
   * tools), and the effective list of an allowlist run: the request within
   * what is permitted (and the permitted address ranges), each entry with
   * who asked for it and what permitted it. */
  struct sr_netallow net_request;
  struct sr_netallow net_allow;
  char *net_hosts; /* skillrun.conf network-hosts: the proxy's hosts file */

  enum sr_cgroup_mode cgroup;
  /* skillrun.conf `cgroup`: the weakest mode a profile may choose (off <
   * prefer < require); a weaker one is raised to it with a warning.
   * Default off: not bounded. */
  enum sr_cgroup_mode cgroup_floor;
  enum sr_proc_mode proc;
  bool strict; /* `strict yes`: manifest lenience and fallbacks refused */
  bool memory_rlimit; /* `memory-rlimit yes`: RLIMIT_AS = memory as well */
  /* Whether skillrun.conf bounds a profile's bind-ro, etc-file, env-keep
   * and seccomp-allow (a line of that key: the lists below). */
  bool binds_bounded;
  bool etc_bounded;
  bool env_bounded;
  bool seccomp_bounded;
  char *hostname; /* default "skillrun" */
  /* The bundle's directory in the sandbox, named after the skill: its
   * working directory (sr_view_skill_dir); set with the manifest. */
  char *skill_dir;

  struct sr_bind
      *binds; /* extra read-only binds (/usr and friends are built in) */
  size_t n_binds;
  struct sr_strv
      etc_files; /* host /etc files copied in (etc-file/etc-file-try) */
  struct sr_strv etc_files_try;
  /* skillrun.conf `bind-ro PATH...|none` and `etc-file NAME...|none`: the
   * host paths a profile's bind-ro(-try) sources and etc-file(-try) files
   * stay at or below, by path components; one outside is dropped with a
   * warning.  Without such a line (…_bounded false) not bounded. */
  struct sr_strv binds_permitted;
  struct sr_strv etc_permitted; /* absolute, below /etc */
  struct sr_strv env_keep;      /* names kept from the caller's environment */
  /* skillrun.conf `env-keep NAME...|none`: the names a profile's env-keep
   * may keep; one outside is dropped with a warning.  Without such a line
   * (env_bounded false) not bounded. */
  struct sr_strv env_permitted;
  struct sr_setenv *setenv;
  size_t n_setenv;

  /* The input types each layer declares (conf and profile
   * `inputs-types`, SKILL.md sandbox.inputs-types), in layer order: an
   * --input must be accepted by every one (filetype.h).  None: any type. */
  struct sr_type_list *input_types;
  size_t n_input_types;

  struct sr_syscall_list seccomp_allow; /* added to the allowlist */
  struct sr_syscall_list seccomp_deny;  /* removed from it */
  /* skillrun.conf `seccomp-allow NAME...|none`: the calls a profile's
   * seccomp-allow may add; a name outside is dropped with a warning.
   * Without such a line (seccomp_bounded false) a profile's list is not
   * bounded (beyond the hard-denied groups, seccomp.c). */
  struct sr_strv seccomp_permitted;

  /* conf `workspace-root`, replaced by --workspace-root; may be NULL. */
  char *workspace_root;
  uint32_t
      uid_pool_base; /* conf `uid-pool FIRST COUNT`: host ids for root runs */
  uint32_t uid_pool_size;

  /* Trust (skillrun(1) "SIGNED BUNDLES", "EXECUTION CAPABILITIES").
   * tiers and require-signature: conf and profile (a profile only
   * narrows); the rest: skillrun.conf only. */
  unsigned tiers_allowed; /* bit mask of 1u << enum sr_tier; default all */
  bool require_signature; /* an unsigned bundle is refused */
  struct sr_trust_key_path *trust_keys; /* `trust-key TIER PATH` */
  size_t n_trust_keys;
  char *capability_key;    /* public key checking --capability tokens */
  bool require_capability; /* every run needs a capability */
  bool require_placement;  /* a capability must name this placement */
  char *placement_id;      /* this host's placement; NULL: none named */
  char *audit_key;         /* private key anchoring execution_completed */

  /* Clamping notices and other non-fatal findings, each one a `warning`
   * audit event: "profile: memory 2GiB above the platform cap 512MiB, clamped".
   */
  struct sr_strv warnings;
};

/* Builtin caps, defaults, hostname; never fails except on ENOMEM. */
int sr_policy_init(struct sr_policy *p);

/*
 * skillrun.conf: limit keys set the platform caps (they may raise or lower
 * the compiled-in ones, and the current values follow); `network deny`
 * means no later layer may grant the network; the other keys
 * (skillrun.profile(5)) are platform settings no profile may change.
 * Unknown key, duplicate scalar key, bad value: "file:line: ..." error,
 * exit 125.
 */
int sr_policy_apply_conf(struct sr_policy *p, const struct sr_conf *c,
                         struct sr_error *err);
/* A profile: limits may only be lowered (raising is clamped + warning).
 * The system call names it lists are stored unchecked: the caller checks
 * them with sr_seccomp_check_names (policy code loads no libseccomp). */
int sr_policy_apply_profile(struct sr_policy *p, const struct sr_conf *c,
                            struct sr_error *err);
/* SKILL.md sandbox.* declarations; may only lower; network allow needs the
 * profile to permit it.  Manifest warnings in strict mode are refusals. */
int sr_policy_apply_manifest(struct sr_policy *p, const struct sr_manifest *m,
                             struct sr_error *err);
/*
 * An execution capability's network field: `max` is the widest mode it
 * allows (SR_NET_HOST: no narrowing, the old `network: allow`), `allow`
 * (may be NULL) the space-separated destinations of `network: allowlist
 * ...`, which narrow the effective list further.  A mode narrowed is a
 * warning; a destination that does not parse is a refusal (exit 123,
 * capability_invalid).
 */
int sr_policy_limit_network(struct sr_policy *p, enum sr_network_mode max,
                            const char *allow, struct sr_error *err);
/* Command-line flags (struct sr_args's layer); may only lower. */
int sr_policy_apply_flags(struct sr_policy *p, const struct sr_flag_layer *f,
                          struct sr_error *err);

/* The resolved policy as JSON (--explain; the policy_resolved event):
 * {"profile":..., "limits":{"memory":{"value":N,"cap":N,"source":"profile",
 *  "enforced_by":...,"human":...,"unit":...},...}, "network":{"mode":...,
 *  "permitted":...,"permitted_mode":...,"source":...,"allow":[...],
 *  "permitted_allow":[...]|null,"hosts_file":...,"enforced_by":...},
 *  "cgroup", "proc", "strict", "hostname",
 *  "workspace_root", "uid_pool", "mounts":[...], "environment":{...},
 *  "seccomp":{...}, "trust":{...}, "warnings":[...]}.  enf NULL (as for
 * --explain, before anything is prepared): every enforced_by is null.  New
 * reference. */
json_t *sr_policy_to_json(const struct sr_policy *p,
                          const struct sr_enforcement *enf);

void sr_policy_done(struct sr_policy *p);
#define _cleanup_policy_ _cleanup_(sr_policy_done)
