/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The limit table, and what each policy layer may ask for.  Pure data: the
 * command line (cli.c), SKILL.md (manifest.c), profiles and skillrun.conf
 * (policy.c), the clamping, --explain and the docs check
 * (tests/integration/docs.sh) all read sr_limit_defs; none of them names a
 * limit itself.
 */

/* A policy layer: where a value came from, in the order layers apply. */
enum sr_source {
  SR_SRC_BUILTIN = 0, /* compiled-in platform cap */
  SR_SRC_CONF,        /* /etc/skillrun/skillrun.conf (sets the caps) */
  SR_SRC_PROFILE,     /* the profile (and its includes) */
  SR_SRC_MANIFEST,    /* SKILL.md metadata sandbox.* */
  SR_SRC_FLAG,        /* command line */
  SR_SRC_CAPABILITY,  /* the execution capability (its network field) */
  SR__SRC_MAX
};
const char *sr_source_name(enum sr_source s); /* "builtin", "conf", ... */

/* A set of layers, for sr_limit_def.layers. */
#define SR_LAYER(src) (1u << (src))
#define SR_LAYERS_PLATFORM (SR_LAYER(SR_SRC_CONF) | SR_LAYER(SR_SRC_PROFILE))
#define SR_LAYERS_ALL                                                          \
  (SR_LAYERS_PLATFORM | SR_LAYER(SR_SRC_MANIFEST) | SR_LAYER(SR_SRC_FLAG))

enum sr_limit_kind { SR_KIND_SIZE, SR_KIND_COUNT, SR_KIND_DURATION };

/* Every numeric limit.  Sizes in bytes, durations in ms, counts plain. */
enum sr_limit_id {
  SR_LIM_MEMORY = 0,
  SR_LIM_CPU_SECONDS,
  SR_LIM_TIMEOUT,
  SR_LIM_PIDS,
  SR_LIM_LOG_CAP,
  SR_LIM_TMP_SIZE,
  SR_LIM_SCRATCH_SIZE,
  SR_LIM_OUTPUTS_SIZE,
  SR_LIM_OUTPUTS_FILES,
  SR_LIM_INPUTS_SIZE,
  SR_LIM_INPUTS_MAX_SIZE,
  SR_LIM_NOFILE,
  SR_LIM_KILL_GRACE,
  SR_LIM_NET_CONNECTIONS,
  SR_LIM_NET_EGRESS,
  SR__LIM_MAX
};

struct sr_limit_def {
  /* The key everywhere: profile and skillrun.conf key, SKILL.md
   * `sandbox.<name>`, `--<name>`, the --explain and audit key. */
  const char *name;
  enum sr_limit_kind kind;
  /* SR_LAYER() bits: who may set it.  skillrun.conf and profiles always
   * may (SR_LAYERS_PLATFORM); SKILL.md and the command line only where
   * the bit is set. */
  unsigned layers;
  uint64_t builtin; /* compiled-in platform cap */
  uint64_t min;     /* smallest accepted value (0: zero is meaningful) */
  uint64_t max;     /* largest value skillrun.conf may set as the cap */
  /* Counts with a command-line flag: the largest value --<name> parses (a
   * larger one is a usage error, a smaller one above the cap is clamped).
   * 0: no bound but the parser's. */
  uint64_t flag_max;
  /* SKILL.md errors ("use a whole number of seconds above 0, e.g. 30"):
   * a typical value, and for counts what is counted (NULL: nothing said). */
  const char *example;
  const char *counted;
  /* --help text of the flag: "lower the memory limit (e.g. 256M)". */
  const char *help;
};
extern const struct sr_limit_def sr_limit_defs[SR__LIM_MAX];

/* Index of the limit called `name`, or -1. */
int sr_limit_by_name(const char *name);
/* Whether layer `src` may set limit `id`. */
bool sr_limit_settable(enum sr_limit_id id, enum sr_source src);

/* SKILL.md counts are read up to 2^32-1 (a larger value is refused; one
 * above the cap is clamped). */
#define SR_LIMIT_MANIFEST_COUNT_MAX UINT64_C(4294967295)

/* A value of `kind` from text: sizes "256M", durations "30s", counts
 * "64" up to count_max.  0 or -EINVAL/-ERANGE; *out untouched on failure. */
int sr_limit_parse(enum sr_limit_kind kind, const char *s, uint64_t count_max,
                   uint64_t *out);
/* Human form for messages and --explain: "512MiB", "30s", "64". */
void sr_limit_format(enum sr_limit_kind kind, uint64_t v, char *buf,
                     size_t len);
/* The unit --explain names: "bytes", "count", "ms". */
const char *sr_limit_unit(enum sr_limit_kind kind);
/* The value's name in --help: "SIZE", "N", "DURATION". */
const char *sr_limit_metavar(enum sr_limit_kind kind);

/*
 * The network a run gets, widening in this order: each layer may only
 * narrow it.  The request of a layer that does not say is SR_NET_UNSET.
 */
enum sr_network_mode {
  SR_NET_UNSET = 0, /* a layer that does not ask (never the effective mode) */
  SR_NET_DENY,      /* the sandbox's own network namespace, only `lo` */
  SR_NET_ALLOWLIST, /* the same, plus the egress proxy to listed places */
  SR_NET_HOST,      /* the host's network namespace ("allow" is a synonym) */
  SR__NET_MAX
};
/* "deny", "allowlist", "host"; NULL for SR_NET_UNSET. */
const char *sr_network_mode_name(enum sr_network_mode m);
/* The inverse of sr_network_mode_name, and "allow" for SR_NET_HOST (the
 * spelling of existing profiles, SKILL.md files and tokens): 0, or -EINVAL
 * for any other text. */
int sr_network_mode_from_name(const char *s, enum sr_network_mode *out);

/* A value a layer gives or not. */
struct sr_flag_u64 {
  bool set;
  uint64_t value;
};

/*
 * The command line as a policy layer: what sr_cli_parse fills in
 * struct sr_args and sr_policy_apply_flags applies.  Sizes in bytes,
 * durations in ms.
 */
struct sr_flag_layer {
  struct sr_flag_u64 limits[SR__LIM_MAX]; /* --<name> of flag-settable ones */
  enum sr_network_mode network;           /* --network; SR_NET_UNSET: absent */
  /* --workspace-root DIR; borrowed from the struct sr_args it lives in. */
  const char *workspace_root;
};
