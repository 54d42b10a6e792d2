/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The limit table and the values of the policy layers (limit.h). */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "limit.h"
#include "macro.h"
#include "util.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)
#define SEC UINT64_C(1000)
#define MIN (60 * SEC)
#define DAY (24 * 60 * MIN)

/*
 * Adding a limit touches this table (its id in enum sr_limit_id and its
 * row here) and its enforcement (cgroup.c, child.c's rlimits, the
 * supervisor, a mount size), nothing else: every parser, the clamping,
 * --explain, the audit and --help iterate the table.  The docs check
 * (tests/integration/docs.sh) then asks for the key in skillrun.profile(5),
 * and, per its layers, in skillrun-skill(5), skillrun(1) and the
 * completions.
 */
const struct sr_limit_def sr_limit_defs[SR__LIM_MAX] = {
    [SR_LIM_MEMORY] =
        {
            .name = "memory",
            .kind = SR_KIND_SIZE,
            .builtin = 512 * MiB,
            .min = 8 * MiB,
            .max = 1 * TiB,
            .layers = SR_LAYERS_ALL,
            .example = "256M",
            .help = "lower the memory limit (e.g. 256M)",
        },
    [SR_LIM_CPU_SECONDS] =
        {
            /* CPU time of the whole process tree. */
            .name = "cpu-seconds",
            .kind = SR_KIND_COUNT,
            .builtin = 60,
            .min = 1,
            .max = 1000000,
            .layers = SR_LAYERS_ALL,
            .flag_max = UINT64_C(4294967295),
            .example = "30",
            .counted = "seconds",
            .help = "lower the CPU-time budget of the process tree",
        },
    [SR_LIM_TIMEOUT] =
        {
            /* Wall clock. */
            .name = "timeout",
            .kind = SR_KIND_DURATION,
            .builtin = 5 * MIN,
            .min = 100,
            .max = 7 * DAY,
            .layers = SR_LAYERS_ALL,
            .example = "30s",
            .help = "lower the wall-clock limit (e.g. 30s, 5m)",
        },
    [SR_LIM_PIDS] =
        {
            .name = "pids",
            .kind = SR_KIND_COUNT,
            .builtin = 512,
            .min = 4,
            .max = 1000000,
            .layers = SR_LAYERS_ALL,
            .flag_max = UINT64_C(4194304), /* PID_MAX_LIMIT, 64-bit kernels */
            .example = "64",
            .help = "lower the process/thread limit",
        },
    [SR_LIM_LOG_CAP] =
        {
            /* stdout and stderr together; 0 keeps no output at all. */
            .name = "log-cap",
            .kind = SR_KIND_SIZE,
            .builtin = 10 * MiB,
            .min = 0,
            .max = 64 * GiB,
            .layers = SR_LAYERS_PLATFORM | SR_LAYER(SR_SRC_FLAG),
            .help = "lower the cap on captured stdout+stderr",
        },
    [SR_LIM_TMP_SIZE] =
        {
            /* The /tmp tmpfs, and /dev/shm's (mount.c). */
            .name = "tmp-size",
            .kind = SR_KIND_SIZE,
            .builtin = 64 * MiB,
            .min = 1 * MiB,
            .max = 1 * TiB,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_SCRATCH_SIZE] =
        {
            /* The /workspace/scratch tmpfs. */
            .name = "scratch-size",
            .kind = SR_KIND_SIZE,
            .builtin = 256 * MiB,
            .min = 1 * MiB,
            .max = 1 * TiB,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_OUTPUTS_SIZE] =
        {
            /* The /workspace/outputs tmpfs, and the harvest. */
            .name = "outputs-size",
            .kind = SR_KIND_SIZE,
            .builtin = 256 * MiB,
            .min = 1 * MiB,
            .max = 1 * TiB,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_OUTPUTS_FILES] =
        {
            /* Entries in /workspace/outputs: its tmpfs's inode cap, and
             * the most entries the harvest visits (files, directories and
             * the entries it skips alike). */
            .name = "outputs-files",
            .kind = SR_KIND_COUNT,
            .builtin = 10000,
            .min = 1,
            .max = 1000000,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_INPUTS_SIZE] =
        {
            /* All --input files together. */
            .name = "inputs-size",
            .kind = SR_KIND_SIZE,
            .builtin = 256 * MiB,
            .min = 0,
            .max = 1 * TiB,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_INPUTS_MAX_SIZE] =
        {
            /* Each --input file.  As large as the largest cap until a
             * layer lowers it, so that inputs-size alone binds: a conf
             * that raises inputs-size need not raise this too.  SKILL.md
             * declares what it accepts ("at most 25 MB a file"). */
            .name = "inputs-max-size",
            .kind = SR_KIND_SIZE,
            .builtin = 1 * TiB,
            .min = 0,
            .max = 1 * TiB,
            .layers = SR_LAYERS_PLATFORM | SR_LAYER(SR_SRC_MANIFEST),
            .example = "25M",
        },
    [SR_LIM_NOFILE] =
        {
            /* RLIMIT_NOFILE. */
            .name = "nofile",
            .kind = SR_KIND_COUNT,
            .builtin = 1024,
            .min = 16,
            .max = UINT64_C(1) << 20,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_KILL_GRACE] =
        {
            /* SIGTERM -> SIGKILL delay. */
            .name = "kill-grace",
            .kind = SR_KIND_DURATION,
            .builtin = 5 * SEC,
            .min = 0,
            .max = 10 * MIN,
            .layers = SR_LAYERS_PLATFORM,
        },
    [SR_LIM_NET_CONNECTIONS] =
        {
            /* Connections open through the egress proxy at one time
             * (network allowlist); the largest cap is the proxy's own
             * SR_PROXY_MAX_CONNECTIONS (proxy.h). */
            .name = "net-connections",
            .kind = SR_KIND_COUNT,
            .builtin = 64,
            .min = 1,
            .max = 4096,
            .layers = SR_LAYERS_PLATFORM | SR_LAYER(SR_SRC_MANIFEST),
            .example = "16",
            .counted = "connections",
        },
    [SR_LIM_NET_EGRESS] =
        {
            /* Bytes the sandbox sends through the egress proxy, all
             * connections together (network allowlist). */
            .name = "net-egress",
            .kind = SR_KIND_SIZE,
            .builtin = 1 * GiB,
            .min = 0,
            .max = 1 * TiB,
            .layers = SR_LAYERS_PLATFORM | SR_LAYER(SR_SRC_MANIFEST),
            .example = "100M",
        },
};

const char *sr_source_name(enum sr_source s) {
  static const char *const names[SR__SRC_MAX] = {
      [SR_SRC_BUILTIN] = "builtin", [SR_SRC_CONF] = "conf",
      [SR_SRC_PROFILE] = "profile", [SR_SRC_MANIFEST] = "manifest",
      [SR_SRC_FLAG] = "flag",       [SR_SRC_CAPABILITY] = "capability",
  };
  return (unsigned)s < SR__SRC_MAX ? names[s] : "unknown";
}

int sr_limit_by_name(const char *name) {
  if (!name)
    return -1;
  for (int i = 0; i < SR__LIM_MAX; i++)
    if (!strcmp(sr_limit_defs[i].name, name))
      return i;
  return -1;
}

bool sr_limit_settable(enum sr_limit_id id, enum sr_source src) {
  return (unsigned)id < SR__LIM_MAX &&
         (sr_limit_defs[id].layers & SR_LAYER(src)) != 0;
}

int sr_limit_parse(enum sr_limit_kind kind, const char *s, uint64_t count_max,
                   uint64_t *out) {
  switch (kind) {
  case SR_KIND_SIZE:
    return sr_parse_size(s, out);
  case SR_KIND_DURATION:
    return sr_parse_duration_ms(s, out);
  case SR_KIND_COUNT:
    return sr_parse_uint(s, count_max, out);
  }
  return -EINVAL;
}

void sr_limit_format(enum sr_limit_kind kind, uint64_t v, char *buf,
                     size_t len) {
  switch (kind) {
  case SR_KIND_SIZE:
    sr_format_size(v, buf, len);
    return;
  case SR_KIND_DURATION:
    sr_format_duration_ms(v, buf, len);
    return;
  case SR_KIND_COUNT:
    snprintf(buf, len, "%" PRIu64, v);
    return;
  }
  snprintf(buf, len, "?");
}

const char *sr_limit_unit(enum sr_limit_kind kind) {
  switch (kind) {
  case SR_KIND_SIZE:
    return "bytes";
  case SR_KIND_COUNT:
    return "count";
  case SR_KIND_DURATION:
    return "ms";
  }
  return "?";
}

const char *sr_limit_metavar(enum sr_limit_kind kind) {
  switch (kind) {
  case SR_KIND_SIZE:
    return "SIZE";
  case SR_KIND_COUNT:
    return "N";
  case SR_KIND_DURATION:
    return "DURATION";
  }
  return "VALUE";
}

static const char *const network_mode_names[SR__NET_MAX] = {
    [SR_NET_UNSET] = NULL,
    [SR_NET_DENY] = "deny",
    [SR_NET_ALLOWLIST] = "allowlist",
    [SR_NET_HOST] = "host",
};

const char *sr_network_mode_name(enum sr_network_mode m) {
  return (unsigned)m < SR__NET_MAX ? network_mode_names[m] : NULL;
}

int sr_network_mode_from_name(const char *s, enum sr_network_mode *out) {
  if (s && !strcmp(s, "allow")) {
    *out = SR_NET_HOST; /* the name of host before the allowlist existed */
    return 0;
  }
  for (size_t i = 0; s && i < SR_ARRAY_SIZE(network_mode_names); i++)
    if (network_mode_names[i] && !strcmp(network_mode_names[i], s)) {
      *out = (enum sr_network_mode)i;
      return 0;
    }
  return -EINVAL;
}
