/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "filetype.h"
#include "manifest.h"
#include "policy.h"
#include "seccomp.h"

#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

/* ------------------------------------------------------------ helpers */

static void parse(const char *text, const char *name, struct sr_conf *c) {
  struct sr_error err = {0};
  if (sr_conf_parse_buffer(text, strlen(text), name, c, &err) < 0)
    fail_msg("parse: %s", err.msg);
}

/* A policy with builtin caps, then conf and profile text (either NULL). */
static void build(struct sr_policy *p, const char *conf, const char *profile) {
  struct sr_error err = {0};
  struct sr_conf c = {0};

  assert_int_equal(sr_policy_init(p), 0);
  if (conf) {
    parse(conf, "skillrun.conf", &c);
    if (sr_policy_apply_conf(p, &c, &err) < 0)
      fail_msg("conf: %s", err.msg);
    sr_conf_done(&c);
  }
  if (profile) {
    parse(profile, "t.profile", &c);
    if (sr_policy_apply_profile(p, &c, &err) < 0)
      fail_msg("profile: %s", err.msg);
    sr_conf_done(&c);
  }
}

/* Expects applying `text` as a conf (is_conf) or profile to fail with
 * exactly `want`. */
static void expect_error(bool is_conf, const char *text, const char *want) {
  struct sr_policy p;
  struct sr_error err = {0};
  struct sr_conf c = {0};
  int r;

  assert_int_equal(sr_policy_init(&p), 0);
  parse(text, is_conf ? "skillrun.conf" : "t.profile", &c);
  r = is_conf ? sr_policy_apply_conf(&p, &c, &err)
              : sr_policy_apply_profile(&p, &c, &err);
  if (r >= 0)
    fail_msg("'%s' was accepted, expected '%s'", text, want);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_string_equal(err.reason, "config_invalid");
  if (strcmp(err.msg, want) != 0)
    fail_msg("got '%s', want '%s'", err.msg, want);
  sr_conf_done(&c);
  sr_policy_done(&p);
}

static void expect_profile_ok(const char *text) {
  struct sr_policy p;
  build(&p, NULL, text);
  sr_policy_done(&p);
}

static void manifest_init(struct sr_manifest *m) {
  memset(m, 0, sizeof(*m));
}

static void flags_init(struct sr_flag_layer *f) {
  memset(f, 0, sizeof(*f));
}

static void assert_warning(const struct sr_policy *p, const char *want) {
  for (size_t i = 0; i < p->warnings.n; i++)
    if (!strcmp(p->warnings.v[i], want))
      return;
  for (size_t i = 0; i < p->warnings.n; i++)
    print_message("# warning[%zu]: %s\n", i, p->warnings.v[i]);
  fail_msg("no warning '%s'", want);
}

/* A limit value as profile text (sizes in bytes, durations in ms). */
static void value_text(int id, uint64_t v, char *buf, size_t len) {
  if (sr_limit_defs[id].kind == SR_KIND_DURATION)
    snprintf(buf, len, "%" PRIu64 "ms", v);
  else
    snprintf(buf, len, "%" PRIu64, v);
}

/* ------------------------------------------------------------ tests */

static void test_defs_and_init(void **state) {
  /* The spellings are the interface (profiles, SKILL.md, flags, audit). */
  static const struct {
    enum sr_limit_id id;
    const char *name;
  } names[] = {
      {SR_LIM_MEMORY, "memory"},
      {SR_LIM_CPU_SECONDS, "cpu-seconds"},
      {SR_LIM_TIMEOUT, "timeout"},
      {SR_LIM_PIDS, "pids"},
      {SR_LIM_LOG_CAP, "log-cap"},
      {SR_LIM_TMP_SIZE, "tmp-size"},
      {SR_LIM_SCRATCH_SIZE, "scratch-size"},
      {SR_LIM_OUTPUTS_SIZE, "outputs-size"},
      {SR_LIM_INPUTS_SIZE, "inputs-size"},
      {SR_LIM_NOFILE, "nofile"},
      {SR_LIM_KILL_GRACE, "kill-grace"},
  };
  struct sr_policy p;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(names); i++) {
    assert_string_equal(sr_limit_defs[names[i].id].name, names[i].name);
    assert_int_equal(sr_limit_by_name(names[i].name), names[i].id);
  }
  assert_int_equal(sr_policy_init(&p), 0);
  for (int i = 0; i < SR__LIM_MAX; i++) {
    const struct sr_limit_def *d = &sr_limit_defs[i];
    assert_int_equal(sr_limit_by_name(d->name), i);
    assert_true(d->min <= d->builtin);
    assert_true(d->builtin <= d->max);
    assert_int_equal(p.limits[i].value, d->builtin);
    assert_int_equal(p.limits[i].cap, d->builtin);
    assert_int_equal(p.limits[i].source, SR_SRC_BUILTIN);
  }
  assert_int_equal(sr_limit_by_name("nope"), -1);
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 512 * MiB);
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].value, 60);
  assert_int_equal(p.limits[SR_LIM_TIMEOUT].value, 5 * 60 * 1000);
  assert_int_equal(p.limits[SR_LIM_LOG_CAP].value, 10 * MiB);
  assert_int_equal(p.limits[SR_LIM_KILL_GRACE].value, 5000);
  assert_int_equal(sr_limit_defs[SR_LIM_MEMORY].min, 8 * MiB);
  assert_int_equal(sr_limit_defs[SR_LIM_NOFILE].max, 1 << 20);
  assert_string_equal(p.hostname, "skillrun");
  assert_int_equal(p.network, SR_NET_DENY);
  assert_int_equal(p.network_max, SR_NET_HOST);
  assert_int_equal(p.cgroup, SR_CGROUP_PREFER);
  assert_int_equal(p.proc, SR_PROC_PROCFS);
  assert_false(p.strict);
  assert_string_equal(sr_source_name(SR_SRC_BUILTIN), "builtin");
  assert_string_equal(sr_source_name(SR_SRC_CONF), "conf");
  assert_string_equal(sr_source_name(SR_SRC_PROFILE), "profile");
  assert_string_equal(sr_source_name(SR_SRC_MANIFEST), "manifest");
  assert_string_equal(sr_source_name(SR_SRC_FLAG), "flag");
  sr_policy_done(&p);
}

/* What every parser relies on in a row of the table. */
static void test_limit_table(void **state) {
  enum sr_network_mode m;
  (void)state;

  for (int i = 0; i < SR__LIM_MAX; i++) {
    const struct sr_limit_def *d = &sr_limit_defs[i];

    /* skillrun.conf sets the caps and profiles lower them: every limit. */
    assert_true(sr_limit_settable(i, SR_SRC_CONF));
    assert_true(sr_limit_settable(i, SR_SRC_PROFILE));
    assert_false(sr_limit_settable(i, SR_SRC_BUILTIN));
    assert_false(sr_limit_settable(i, SR_SRC_CAPABILITY));
    assert_true(strlen(d->name) > 0 && strlen(d->name) < 24);
    if (sr_limit_settable(i, SR_SRC_FLAG)) {
      assert_non_null(d->help);
      /* Counts need a bound the command line parses up to. */
      if (d->kind == SR_KIND_COUNT)
        assert_true(d->flag_max >= d->max);
    }
    if (sr_limit_settable(i, SR_SRC_MANIFEST))
      assert_non_null(d->example);
  }
  assert_false(sr_limit_settable(SR__LIM_MAX, SR_SRC_CONF));
  /* Who sets what today (skillrun(1), skillrun-skill(5)). */
  for (int i = SR_LIM_MEMORY; i <= SR_LIM_PIDS; i++) {
    assert_true(sr_limit_settable(i, SR_SRC_FLAG));
    assert_true(sr_limit_settable(i, SR_SRC_MANIFEST));
  }
  assert_true(sr_limit_settable(SR_LIM_LOG_CAP, SR_SRC_FLAG));
  assert_false(sr_limit_settable(SR_LIM_LOG_CAP, SR_SRC_MANIFEST));
  assert_false(sr_limit_settable(SR_LIM_TMP_SIZE, SR_SRC_FLAG));
  assert_false(sr_limit_settable(SR_LIM_NOFILE, SR_SRC_MANIFEST));
  assert_string_equal(sr_limit_unit(SR_KIND_SIZE), "bytes");
  assert_string_equal(sr_limit_unit(SR_KIND_DURATION), "ms");
  assert_string_equal(sr_limit_unit(SR_KIND_COUNT), "count");

  /* One name table for the network modes, both ways. */
  assert_null(sr_network_mode_name(SR_NET_UNSET));
  assert_null(sr_network_mode_name(SR__NET_MAX));
  for (int i = SR_NET_DENY; i < SR__NET_MAX; i++) {
    assert_int_equal(sr_network_mode_from_name(sr_network_mode_name(i), &m), 0);
    assert_int_equal(m, i);
  }
  assert_string_equal(sr_network_mode_name(SR_NET_DENY), "deny");
  assert_string_equal(sr_network_mode_name(SR_NET_ALLOWLIST), "allowlist");
  assert_string_equal(sr_network_mode_name(SR_NET_HOST), "host");
  /* Existing profiles, SKILL.md files and tokens say "allow". */
  m = SR_NET_DENY;
  assert_int_equal(sr_network_mode_from_name("allow", &m), 0);
  assert_int_equal(m, SR_NET_HOST);
  m = SR_NET_DENY;
  assert_int_equal(sr_network_mode_from_name("Allow", &m), -EINVAL);
  assert_int_equal(sr_network_mode_from_name("allowlist ", &m), -EINVAL);
  assert_int_equal(sr_network_mode_from_name(NULL, &m), -EINVAL);
  assert_int_equal(m, SR_NET_DENY);
}

/* A layer sets only the limits the table gives it: a manifest or flag
 * value for any other limit is never applied. */
static void test_layers_follow_the_table(void **state) {
  struct sr_policy p;
  struct sr_manifest m;
  struct sr_flag_layer f;
  struct sr_error err = {0};
  (void)state;

  build(&p, NULL, NULL);
  manifest_init(&m);
  flags_init(&f);
  for (int i = 0; i < SR__LIM_MAX; i++) {
    uint64_t v = sr_limit_defs[i].min + 1;
    m.limits[i] = (struct sr_manifest_limit){true, v, 3};
    f.limits[i] = (struct sr_flag_u64){true, v};
  }
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  for (int i = 0; i < SR__LIM_MAX; i++)
    assert_int_equal(p.limits[i].source, sr_limit_settable(i, SR_SRC_MANIFEST)
                                             ? SR_SRC_MANIFEST
                                             : SR_SRC_BUILTIN);
  assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
  for (int i = 0; i < SR__LIM_MAX; i++) {
    enum sr_source want = sr_limit_settable(i, SR_SRC_FLAG) ? SR_SRC_FLAG
                          : sr_limit_settable(i, SR_SRC_MANIFEST)
                              ? SR_SRC_MANIFEST
                              : SR_SRC_BUILTIN;
    assert_int_equal(p.limits[i].source, want);
    assert_int_equal(p.limits[i].value, want == SR_SRC_BUILTIN
                                            ? sr_limit_defs[i].builtin
                                            : sr_limit_defs[i].min + 1);
  }
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);
}

/* Every limit: a profile lowers it; a profile raise is clamped with a
 * warning naming the profile line and the platform cap. */
static void test_profile_lowers_and_clamps_every_limit(void **state) {
  (void)state;
  for (int i = 0; i < SR__LIM_MAX; i++) {
    const struct sr_limit_def *d = &sr_limit_defs[i];
    uint64_t lower = d->builtin / 2 >= d->min ? d->builtin / 2 : d->min;
    char text[128], v[48], want[256];
    struct sr_policy p;

    value_text(i, lower, v, sizeof(v));
    snprintf(text, sizeof(text), "%s %s\n", d->name, v);
    build(&p, NULL, text);
    assert_int_equal(p.limits[i].value, lower);
    assert_int_equal(p.limits[i].cap, d->builtin);
    assert_int_equal(p.limits[i].source, SR_SRC_PROFILE);
    assert_int_equal(p.warnings.n, 0);
    sr_policy_done(&p);

    value_text(i, d->builtin + 1, v, sizeof(v));
    snprintf(text, sizeof(text), "# raise\n%s %s\n", d->name, v);
    build(&p, NULL, text);
    assert_int_equal(p.limits[i].value, d->builtin);
    assert_int_equal(p.limits[i].source, SR_SRC_BUILTIN);
    assert_int_equal(p.warnings.n, 1);
    snprintf(want, sizeof(want), "profile t.profile:2: %s ", d->name);
    assert_memory_equal(p.warnings.v[0], want, strlen(want));
    assert_non_null(strstr(p.warnings.v[0], "is above the platform cap"));
    assert_non_null(strstr(p.warnings.v[0], "; clamped"));
    sr_policy_done(&p);
  }
}

static void test_profile_clamp_message(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, NULL, "hostname x\nmemory 2G\n");
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 512 * MiB);
  assert_warning(&p, "profile t.profile:2: memory 2GiB is above the platform "
                     "cap 512MiB; clamped");
  sr_policy_done(&p);

  build(&p, NULL, "timeout 10m\n");
  assert_warning(&p, "profile t.profile:1: timeout 10m is above the platform "
                     "cap 5m; clamped");
  sr_policy_done(&p);

  /* Equal to the cap: accepted, source moves to the profile. */
  build(&p, NULL, "pids 512\n");
  assert_int_equal(p.limits[SR_LIM_PIDS].source, SR_SRC_PROFILE);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);
}

static void test_conf_sets_caps(void **state) {
  struct sr_policy p;
  (void)state;

  /* Raise: the cap and the value follow; a profile may then use it. */
  build(&p, "memory 2G\ncpu-seconds 600\n", "memory 1G\n");
  assert_int_equal(p.limits[SR_LIM_MEMORY].cap, 2 * GiB);
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 1 * GiB);
  assert_int_equal(p.limits[SR_LIM_MEMORY].source, SR_SRC_PROFILE);
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].cap, 600);
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].value, 600);
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].source, SR_SRC_CONF);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);

  /* Lower: a profile asking for the builtin value is clamped to it. */
  build(&p, "memory 100M\n", "memory 512M\n");
  assert_int_equal(p.limits[SR_LIM_MEMORY].cap, 100 * MiB);
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 100 * MiB);
  assert_int_equal(p.limits[SR_LIM_MEMORY].source, SR_SRC_CONF);
  assert_warning(&p, "profile t.profile:1: memory 512MiB is above the "
                     "platform cap 100MiB; clamped");
  sr_policy_done(&p);

  /* workspace-root */
  build(&p, "workspace-root /srv/skillrun\n", NULL);
  assert_string_equal(p.workspace_root, "/srv/skillrun");
  sr_policy_done(&p);

  expect_error(true, "memory 2T\n",
               "skillrun.conf:1: memory 2TiB is above the largest cap 1TiB");
  expect_error(true, "\npids 2\n",
               "skillrun.conf:2: pids 2 is below the minimum 4");
  expect_error(true, "timeout 8d\n",
               "skillrun.conf:1: timeout: invalid value '8d' (expected a "
               "duration such as 250ms, 30s, 5m or 1h)");
  expect_error(true, "workspace-root srv\n",
               "skillrun.conf:1: workspace-root: 'srv' must be an absolute, "
               "normalised directory other than /");
  expect_error(true, "workspace-root /\n",
               "skillrun.conf:1: workspace-root: '/' must be an absolute, "
               "normalised directory other than /");
}

static void test_limit_errors(void **state) {
  (void)state;
  expect_error(false, "memory 4M\n",
               "t.profile:1: memory 4MiB is below the minimum 8MiB");
  expect_error(false, "cpu-seconds 0\n",
               "t.profile:1: cpu-seconds 0 is below the minimum 1");
  expect_error(false, "timeout 50ms\n",
               "t.profile:1: timeout 50ms is below the minimum 100ms");
  expect_error(false, "nofile 15\n",
               "t.profile:1: nofile 15 is below the minimum 16");
  expect_error(false, "memory lots\n",
               "t.profile:1: memory: invalid value 'lots' (expected a size "
               "such as 256M, 1GiB or 268435456)");
  expect_error(false, "timeout 99999999999999999999h\n",
               "t.profile:1: timeout: '99999999999999999999h' is too large "
               "(the largest cap is 168h)");
  expect_error(
      true, "memory 18446744073709551616\n",
      "skillrun.conf:1: memory: '18446744073709551616' is too large (the "
      "largest cap is 1TiB)");
  expect_error(false, "pids 1.5\n",
               "t.profile:1: pids: invalid value '1.5' (expected a whole "
               "number)");
  expect_error(false, "memory\n",
               "t.profile:1: memory: expected one value, a size such as "
               "256M, 1GiB or 268435456");
  expect_error(false, "memory 1G 2G\n",
               "t.profile:1: memory: expected one value, a size such as "
               "256M, 1GiB or 268435456");
  /* log-cap and kill-grace accept 0. */
  expect_profile_ok("log-cap 0\nkill-grace 0\ninputs-size 0\n");
}

static void test_unknown_and_misplaced_keys(void **state) {
  (void)state;
  expect_error(false, "memroy 1G\n",
               "t.profile:1: unknown key 'memroy' (did you mean 'memory'?)");
  expect_error(false, "timout 5s\n",
               "t.profile:1: unknown key 'timout' (did you mean 'timeout'?)");
  /* Only keys the layer accepts are offered: uid-pool is skillrun.conf's. */
  expect_error(false, "uid-pol 1 2\n", "t.profile:1: unknown key 'uid-pol'");
  expect_error(true, "uid-pol 1 2\n",
               "skillrun.conf:1: unknown key 'uid-pol' (did you mean "
               "'uid-pool'?)");
  expect_error(true, "# c\n\nfoo bar\n", "skillrun.conf:3: unknown key 'foo'");
  expect_error(false, "workspace-root /srv\n",
               "t.profile:1: key 'workspace-root' is only allowed in "
               "skillrun.conf");
  static const char *const profile_only[] = {
      "bind-ro-try /opt", "etc-file-try localtime",
      "setenv A b",       "seccomp-deny ptrace",
      "proc tmpfs",       "strict yes",
      "hostname h",       "memory-rlimit yes",
  };
  for (size_t i = 0; i < sizeof(profile_only) / sizeof(*profile_only); i++) {
    char want[256], key[64];
    sscanf(profile_only[i], "%63s", key);
    snprintf(want, sizeof(want),
             "skillrun.conf:1: key '%s' belongs in a profile, not in "
             "skillrun.conf",
             key);
    expect_error(true, profile_only[i], want);
    expect_profile_ok(profile_only[i]);
  }
}

static void test_duplicate_scalar(void **state) {
  struct sr_policy p;
  (void)state;
  expect_error(false, "memory 1G\nhostname a\nmemory 2G\n",
               "t.profile:3: duplicate key 'memory' (first set at "
               "t.profile:1)");
  expect_error(false, "network deny\nnetwork allow\n",
               "t.profile:2: duplicate key 'network' (first set at "
               "t.profile:1)");
  expect_error(false, "strict no\nstrict yes\n",
               "t.profile:2: duplicate key 'strict' (first set at "
               "t.profile:1)");
  expect_error(false, "memory-rlimit no\nmemory-rlimit yes\n",
               "t.profile:2: duplicate key 'memory-rlimit' (first set at "
               "t.profile:1)");
  expect_error(false, "cgroup off\nproc tmpfs\ncgroup require\n",
               "t.profile:3: duplicate key 'cgroup' (first set at "
               "t.profile:1)");
  expect_error(true, "memory 1G\nmemory 2G\n",
               "skillrun.conf:2: duplicate key 'memory' (first set at "
               "skillrun.conf:1)");
  expect_error(true, "workspace-root /a\nworkspace-root /b\n",
               "skillrun.conf:2: duplicate key 'workspace-root' (first set "
               "at skillrun.conf:1)");

  /* Another file may override what an included file set; the later line
   * wins, and a limit is reset to its value before the layer first. */
  {
    const char *td = getenv("TESTDATA");
    char text[2048];
    snprintf(text, sizeof(text),
             "include %s/conf/inc-child.profile\nmemory 256M\n",
             td ? td : "tests/data");
    build(&p, NULL, text);
    assert_int_equal(p.limits[SR_LIM_MEMORY].value, 256 * MiB);
    assert_int_equal(p.limits[SR_LIM_MEMORY].source, SR_SRC_PROFILE);
    assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].value, 10);
    assert_int_equal(p.warnings.n, 0);
    sr_policy_done(&p);
  }
  build(&p, NULL, "include default\nnetwork allow\ncgroup require\n");
  assert_int_equal(p.network_max, SR_NET_HOST);
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  sr_policy_done(&p);
  build(&p, NULL, "network allow\ninclude default\n");
  assert_int_equal(p.network_max, SR_NET_DENY); /* later line wins */
  sr_policy_done(&p);

  /* Once per layer: the conf and the profile may each set it. */
  build(&p, "memory 1G\n", "memory 256M\n");
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 256 * MiB);
  sr_policy_done(&p);

  /* List keys accumulate (duplicates are merged). */
  build(&p, NULL,
        "env-keep A B\nenv-keep C A\nseccomp-allow ptrace\n"
        "seccomp-allow ptrace personality\n");
  assert_int_equal(p.env_keep.n, 3);
  assert_string_equal(p.env_keep.v[2], "C");
  assert_int_equal(p.seccomp_allow.n, 2);
  sr_policy_done(&p);
}

static void test_scalar_values(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, NULL,
        "cgroup require\nproc tmpfs\nstrict yes\nhostname build-1.example\n");
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  assert_int_equal(p.proc, SR_PROC_TMPFS);
  assert_true(p.strict);
  assert_string_equal(p.hostname, "build-1.example");
  sr_policy_done(&p);
  build(&p, NULL, "cgroup off\nstrict no\n");
  assert_int_equal(p.cgroup, SR_CGROUP_OFF);
  assert_false(p.strict);
  /* RLIMIT_AS is opt-in: V8, Go and JVM runtimes reserve more address
   * space than they use. */
  assert_false(p.memory_rlimit);
  sr_policy_done(&p);
  build(&p, NULL, "memory-rlimit yes\n");
  assert_true(p.memory_rlimit);
  sr_policy_done(&p);
  expect_error(false, "memory-rlimit 512M\n",
               "t.profile:1: memory-rlimit: '512M' is not yes or no");

  expect_error(false, "cgroup maybe\n",
               "t.profile:1: cgroup: 'maybe' is not require, prefer or off");
  expect_error(false, "proc sysfs\n",
               "t.profile:1: proc: 'sysfs' is not procfs or tmpfs");
  expect_error(false, "strict perhaps\n",
               "t.profile:1: strict: 'perhaps' is not yes or no");
  expect_error(false, "network maybe\n",
               "t.profile:1: network: 'maybe' is not deny, allowlist or host "
               "(allow is host)");
  expect_error(true, "network\n",
               "skillrun.conf:1: network: expected 'network "
               "deny|allowlist|host'");
  expect_error(false, "cgroup\n",
               "t.profile:1: cgroup: expected 'cgroup require|prefer|off'");
  static const char *const bad_hosts[] = {"-a",  "a-",  "a..b", ".a",
                                          "a_b", "a b", ""};
  for (size_t i = 0; i < sizeof(bad_hosts) / sizeof(*bad_hosts); i++) {
    char text[64], want[256];
    snprintf(text, sizeof(text), "hostname \"%s\"\n", bad_hosts[i]);
    snprintf(want, sizeof(want),
             "t.profile:1: hostname: '%s' is not a host name (letters, "
             "digits, '-' and '.', at most 64)",
             bad_hosts[i]);
    expect_error(false, text, want);
  }
}

/* Trust keys per tier, a tenant's per tenant; this host's placement. */
static void test_trust_settings(void **state) {
  struct sr_policy p;
  json_t *j, *keys;
  (void)state;

  build(&p,
        "trust-key official /k/off.pub\ntrust-key tenant:acme /k/acme.pub\n"
        "placement-id worker-7\nrequire-placement yes\n",
        NULL);
  assert_int_equal(p.n_trust_keys, 2);
  assert_null(p.trust_keys[0].tenant);
  assert_int_equal(p.trust_keys[1].tier, SR_TIER_TENANT);
  assert_string_equal(p.trust_keys[1].tenant, "acme");
  assert_string_equal(p.trust_keys[1].path, "/k/acme.pub");
  assert_string_equal(p.placement_id, "worker-7");
  assert_true(p.require_placement);
  j = sr_policy_to_json(&p, NULL);
  assert_non_null(j);
  keys = json_object_get(json_object_get(j, "trust"), "trust_keys");
  assert_null(json_object_get(json_array_get(keys, 0), "tenant"));
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(keys, 1), "tenant")),
      "acme");
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(j, "trust"), "placement_id")),
                      "worker-7");
  assert_true(json_is_true(
      json_object_get(json_object_get(j, "trust"), "require_placement")));
  json_decref(j);
  sr_policy_done(&p);

  expect_error(true, "trust-key tenant /k/t.pub\n",
               "skillrun.conf:1: trust-key: a key of tier tenant is trusted "
               "for one tenant: write 'trust-key tenant:ID /k/t.pub'");
  expect_error(true, "trust-key official:acme /k/t.pub\n",
               "skillrun.conf:1: trust-key: only tier tenant names a tenant "
               "('official:acme')");
  expect_error(true, "trust-key tenant:../x /k/t.pub\n",
               "skillrun.conf:1: trust-key: '../x' is not a valid tenant id "
               "(1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)");
  expect_error(true, "trust-key tenant: /k/t.pub\n",
               "skillrun.conf:1: trust-key: '' is not a valid tenant id "
               "(1-64 of A-Z a-z 0-9 . _ -, starting with a letter or digit)");
  expect_error(true, "trust-key tenants:acme /k/t.pub\n",
               "skillrun.conf:1: trust-key: 'tenants:acme' is not official, "
               "verified, community or tenant:ID");
  expect_error(true, "placement-id a/b\n",
               "skillrun.conf:1: placement-id: 'a/b' is not a valid id (1-64 "
               "of A-Z a-z 0-9 . _ -, starting with a letter or digit)");
  expect_error(true, "placement-id a\nplacement-id b\n",
               "skillrun.conf:2: duplicate key 'placement-id' (first set at "
               "skillrun.conf:1)");
  expect_error(true, "require-placement yes\n",
               "skillrun.conf:1: require-placement yes needs placement-id ID");
  expect_error(false, "placement-id a\n",
               "t.profile:1: key 'placement-id' is only allowed in "
               "skillrun.conf");
  expect_error(false, "require-placement no\n",
               "t.profile:1: key 'require-placement' is only allowed in "
               "skillrun.conf");
  build(&p, "require-placement no\n", NULL);
  assert_false(p.require_placement);
  assert_null(p.placement_id);
  sr_policy_done(&p);
}

/* Declared input types: one list per layer, each only narrowing. */
static void test_input_types(void **state) {
  struct sr_policy p;
  struct sr_manifest m;
  struct sr_error err = {0};
  json_t *j, *a;
  (void)state;

  build(&p, "inputs-types application/pdf .docx text/plain\n",
        "inputs-types application/pdf\n");
  assert_int_equal(p.n_input_types, 2);
  assert_int_equal(p.input_types[0].source, SR_SRC_CONF);
  assert_int_equal(p.input_types[0].entries.n, 3);
  assert_string_equal(p.input_types[0].where, "skillrun.conf:1");
  assert_int_equal(p.input_types[1].source, SR_SRC_PROFILE);
  assert_string_equal(p.input_types[1].entries.v[0], "application/pdf");
  manifest_init(&m);
  assert_int_equal(sr_strv_push(&m.inputs_types, ".docx"), 0);
  m.inputs_types_line = 7;
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  sr_strv_done(&m.inputs_types);
  assert_int_equal(p.n_input_types, 3);
  assert_string_equal(p.input_types[2].where, "SKILL.md:7");
  /* Every layer's list must accept a file: here, nothing can pass. */
  {
    bool all = true;
    for (size_t i = 0; i < p.n_input_types; i++)
      all = all && sr_type_list_accepts(&p.input_types[i].entries, "a.pdf",
                                        "application/pdf", "pdf");
    assert_false(all);
  }
  j = sr_policy_to_json(&p, NULL);
  a = json_object_get(j, "inputs_types");
  assert_int_equal(json_array_size(a), 3);
  assert_string_equal(
      json_string_value(json_object_get(json_array_get(a, 2), "source")),
      "manifest");
  json_decref(j);
  sr_policy_done(&p);

  /* A profile's own line replaces what an included file declared. */
  {
    const char *td = getenv("TESTDATA");
    char text[1024];
    snprintf(text, sizeof(text),
             "include %s/conf/inc-types.profile\ninputs-types image/png\n",
             td ? td : "tests/data");
    build(&p, NULL, text);
    assert_int_equal(p.n_input_types, 1);
    assert_string_equal(p.input_types[0].entries.v[0], "image/png");
    sr_policy_done(&p);
  }
  build(&p, NULL, NULL);
  assert_int_equal(p.n_input_types, 0);
  sr_policy_done(&p);

  expect_error(false, "inputs-types pdf\n",
               "t.profile:1: inputs-types: 'pdf': neither a MIME type "
               "(type/subtype or type/*) nor an extension (.ext)");
  expect_error(false, "inputs-types\n",
               "t.profile:1: inputs-types: expected 'inputs-types TYPE...'");
  expect_error(false, "inputs-types .a\ninputs-types .b\n",
               "t.profile:2: duplicate key 'inputs-types' (first set at "
               "t.profile:1)");
}

static void test_binds(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, NULL,
        "bind-ro /opt/tool\nbind-ro-try /srv/data /data\n"
        "bind-ro-try /etc/alternatives\n");
  assert_int_equal(p.n_binds, 3);
  assert_string_equal(p.binds[0].src, "/opt/tool");
  assert_string_equal(p.binds[0].dst, "/opt/tool");
  assert_false(p.binds[0].optional);
  assert_string_equal(p.binds[1].src, "/srv/data");
  assert_string_equal(p.binds[1].dst, "/data");
  assert_true(p.binds[1].optional);
  assert_string_equal(p.binds[1].file, "t.profile");
  assert_int_equal(p.binds[1].line, 2);
  sr_policy_done(&p);

  static const char *const bad_paths[] = {"opt",     "/opt/../etc", "/opt//x",
                                          "/opt/x/", "/opt/./x",    ""};
  for (size_t i = 0; i < sizeof(bad_paths) / sizeof(*bad_paths); i++) {
    char text[64], want[256];
    snprintf(text, sizeof(text), "bind-ro \"%s\"\n", bad_paths[i]);
    snprintf(want, sizeof(want),
             "t.profile:1: bind-ro: source '%s' must be an absolute, "
             "normalised path",
             bad_paths[i]);
    expect_error(false, text, want);
    snprintf(text, sizeof(text), "bind-ro-try /opt \"%s\"\n", bad_paths[i]);
    snprintf(want, sizeof(want),
             "t.profile:1: bind-ro-try: destination '%s' must be an "
             "absolute, normalised path",
             bad_paths[i]);
    expect_error(false, text, want);
  }
  expect_error(false, "bind-ro /opt /\n",
               "t.profile:1: bind-ro: destination / is built by skillrun");
  expect_error(false, "bind-ro /opt /etc\n",
               "t.profile:1: bind-ro: destination /etc is built by skillrun");
  static const char *const reserved[][2] = {{"/workspace", "/workspace"},
                                            {"/workspace/x", "/workspace"},
                                            {"/proc", "/proc"},
                                            {"/proc/sys", "/proc"},
                                            {"/dev", "/dev"},
                                            {"/dev/shm", "/dev"},
                                            {"/tmp", "/tmp"},
                                            {"/tmp/x", "/tmp"}};
  for (size_t i = 0; i < sizeof(reserved) / sizeof(*reserved); i++) {
    char text[64], want[256];
    snprintf(text, sizeof(text), "bind-ro /opt %s\n", reserved[i][0]);
    snprintf(want, sizeof(want),
             "t.profile:1: bind-ro: destination %s is inside %s, which "
             "skillrun builds",
             reserved[i][0], reserved[i][1]);
    expect_error(false, text, want);
  }
  /* Similar names are fine. */
  expect_profile_ok("bind-ro /opt /tmpdata\nbind-ro /srv /workspaces\n");
  expect_error(false, "bind-ro /\n",
               "t.profile:1: bind-ro: source / may not be bound into the "
               "sandbox");
  expect_error(false, "bind-ro /proc/1 /x\n",
               "t.profile:1: bind-ro: source /proc/1 may not be bound into "
               "the sandbox");
  expect_error(false, "bind-ro /dev/kvm /kvm\n",
               "t.profile:1: bind-ro: source /dev/kvm may not be bound into "
               "the sandbox");
  expect_error(false, "bind-ro /opt\nbind-ro-try /srv /opt\n",
               "t.profile:2: bind-ro-try: /opt is already a bind destination "
               "(t.profile:1)");
  expect_error(false, "bind-ro\n",
               "t.profile:1: bind-ro: expected 'bind-ro SRC [DST]'");
  expect_error(false, "bind-ro /a /b /c\n",
               "t.profile:1: bind-ro: expected 'bind-ro SRC [DST]'");
}

static void test_etc_files(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, NULL,
        "etc-file localtime\netc-file-try /etc/ssl/certs/ca.crt\n"
        "etc-file localtime\n");
  assert_int_equal(p.etc_files.n, 1);
  assert_string_equal(p.etc_files.v[0], "/etc/localtime");
  assert_int_equal(p.etc_files_try.n, 1);
  assert_string_equal(p.etc_files_try.v[0], "/etc/ssl/certs/ca.crt");
  sr_policy_done(&p);

  static const char *const bad[] = {"../shadow", "/usr/lib/x",  "/etc",
                                    "a//b",      "/etc/x/../y", ""};
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    char text[64], want[256];
    snprintf(text, sizeof(text), "etc-file \"%s\"\n", bad[i]);
    snprintf(want, sizeof(want),
             "t.profile:1: etc-file: '%s' must name a file below /etc (e.g. "
             "localtime or /etc/localtime), normalised",
             bad[i]);
    expect_error(false, text, want);
  }
  expect_error(false, "etc-file shadow\n",
               "t.profile:1: etc-file: /etc/shadow may not be copied into the "
               "sandbox");
  expect_error(false, "etc-file-try passwd\n",
               "t.profile:1: etc-file-try: /etc/passwd may not be copied into "
               "the sandbox");
  expect_error(false, "etc-file ssh/ssh_host_ed25519_key\n",
               "t.profile:1: etc-file: /etc/ssh/ssh_host_ed25519_key may not "
               "be copied into the sandbox");
  expect_error(false, "etc-file hosts\n",
               "t.profile:1: etc-file: /etc/hosts may not be copied into the "
               "sandbox");
  expect_error(false, "etc-file localtime\netc-file-try /etc/localtime\n",
               "t.profile:2: etc-file-try: /etc/localtime is already listed "
               "by etc-file");
  /* Similar names are not refused. */
  expect_profile_ok("etc-file-try hosts.allow\netc-file-try passwdqc.conf\n");
}

static void test_environment(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, NULL,
        "env-keep LANG TZ _X1\nsetenv PYTHONUNBUFFERED 1\n"
        "setenv MSG \"a b\"\n");
  assert_int_equal(p.env_keep.n, 3);
  assert_int_equal(p.n_setenv, 2);
  assert_string_equal(p.setenv[1].name, "MSG");
  assert_string_equal(p.setenv[1].value, "a b");
  sr_policy_done(&p);

  expect_error(false, "env-keep A 1B\n",
               "t.profile:1: env-keep: invalid variable name '1B' (letters, "
               "digits and '_', not starting with a digit)");
  expect_error(false, "env-keep A-B\n",
               "t.profile:1: env-keep: invalid variable name 'A-B' (letters, "
               "digits and '_', not starting with a digit)");
  expect_error(false, "env-keep\n",
               "t.profile:1: env-keep: expected 'env-keep NAME...'");
  expect_error(false, "env-keep SKILLRUN_TENANT\n",
               "t.profile:1: env-keep: SKILLRUN_TENANT: SKILLRUN_* names are "
               "reserved");
  expect_error(false, "setenv SKILLRUN_X 1\n",
               "t.profile:1: setenv: SKILLRUN_X: SKILLRUN_* names are "
               "reserved");
  expect_error(false, "setenv A=B 1\n",
               "t.profile:1: setenv: invalid variable name 'A=B' (letters, "
               "digits and '_', not starting with a digit)");
  expect_error(false, "setenv A\n",
               "t.profile:1: setenv: expected 'setenv NAME VALUE'");
  expect_error(false, "setenv A 1\nsetenv A 2\n",
               "t.profile:2: setenv: A is set twice");
  expect_error(false, "env-keep A\nsetenv A 2\n",
               "t.profile:2: setenv: A is also kept by env-keep");
  expect_error(false, "setenv A 2\nenv-keep A\n",
               "t.profile:2: env-keep: A is also given by setenv");
  expect_error(false, "setenv A \"x\ty\"\n",
               "t.profile:1: setenv: A: control character in the value");
}

/* A profile the policy accepts whose system call names fail
 * sr_seccomp_check_names with exactly `want`. */
static void expect_names_error(const char *text, const char *want) {
  struct sr_policy p;
  struct sr_error err = {0};

  build(&p, NULL, text);
  assert_true(sr_seccomp_check_names(&p, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_string_equal(err.reason, "config_invalid");
  if (strcmp(err.msg, want) != 0)
    fail_msg("got '%s', want '%s'", err.msg, want);
  sr_policy_done(&p);
}

static void test_seccomp_names(void **state) {
  struct sr_policy p;
  struct sr_error err = {0};
  (void)state;

  build(&p, NULL, "seccomp-allow msgget semget\nseccomp-deny mount\n");
  assert_int_equal(p.seccomp_allow.n, 2);
  assert_string_equal(p.seccomp_allow.v[0].name, "msgget");
  assert_string_equal(p.seccomp_allow.v[1].file, "t.profile");
  assert_int_equal(p.seccomp_allow.v[1].line, 1);
  assert_int_equal(p.seccomp_deny.n, 1);
  assert_string_equal(p.seccomp_deny.v[0].name, "mount");
  assert_int_equal(p.seccomp_deny.v[0].line, 2);
  assert_true(sr_syscall_list_contains(&p.seccomp_deny, "mount"));
  assert_false(sr_syscall_list_contains(&p.seccomp_deny, "msgget"));
  assert_int_equal(sr_seccomp_check_names(&p, &err), 0);
  sr_policy_done(&p);

  /* A call the filter never allows outright, on the first line that
   * allows one: a hard-denied group's, or one allowed only with argument
   * rules. */
  expect_names_error("seccomp-allow read\nseccomp-allow ptrace\n",
                     "t.profile:2: seccomp-allow of 'ptrace' is forbidden "
                     "(denied group 'debug')");
  expect_names_error("seccomp-allow setsockopt\nseccomp-allow ptrace\n",
                     "t.profile:1: seccomp-allow of 'setsockopt' is forbidden "
                     "(allowed only with argument rules, group 'sockets')");
  build(&p, NULL, "seccomp-deny ptrace setsockopt\n");
  assert_int_equal(sr_seccomp_check_names(&p, &err), 0);
  sr_policy_done(&p);

  /* The policy keeps names as written; the configure stage checks them
   * against libseccomp right after the profile (seccomp.c), naming the
   * first line that lists an unknown one. */
  expect_names_error("seccomp-allow read foo_bar\n",
                     "t.profile:1: unknown system call 'foo_bar'");
  expect_names_error("\nseccomp-deny PTRACE\n",
                     "t.profile:2: unknown system call 'PTRACE'");
  expect_names_error("seccomp-deny \"\"\n",
                     "t.profile:1: unknown system call ''");
  expect_names_error("seccomp-deny \"a\tb\"\n",
                     "t.profile:1: unknown system call 'a\tb'");
  /* The first line wins, whichever list it is in. */
  expect_names_error("seccomp-deny bad_one\nseccomp-allow bad_two\n",
                     "t.profile:1: unknown system call 'bad_one'");
  expect_names_error("seccomp-allow ptrace bad_two\nseccomp-deny bad_one\n",
                     "t.profile:1: unknown system call 'bad_two'");
  expect_error(false, "seccomp-allow\n",
               "t.profile:1: seccomp-allow: expected 'seccomp-allow NAME...'");
  expect_error(false, "seccomp-allow ptrace\nseccomp-deny ptrace\n",
               "t.profile:2: seccomp-deny: ptrace is also listed by "
               "seccomp-allow");
}

/* skillrun.conf's seccomp-allow bounds what a profile's may add: a name
 * outside is dropped with a warning naming the profile's line; without
 * such a line a profile's list is not bounded. */
static void test_conf_bounds_seccomp(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, "seccomp-allow sethostname\nseccomp-allow vhangup sethostname\n",
        "seccomp-allow sethostname ptrace\nseccomp-deny mount\n");
  assert_true(p.seccomp_bounded);
  assert_int_equal(p.seccomp_permitted.n, 2);
  assert_int_equal(p.seccomp_allow.n, 1);
  assert_string_equal(p.seccomp_allow.v[0].name, "sethostname");
  /* seccomp-deny only narrows: never bounded. */
  assert_int_equal(p.seccomp_deny.n, 1);
  assert_warning(&p, "profile t.profile:1: seccomp-allow ptrace is not "
                     "permitted by skillrun.conf; dropped");
  sr_policy_done(&p);

  build(&p, "seccomp-allow none\n", "seccomp-allow sethostname\n");
  assert_int_equal(p.seccomp_allow.n, 0);
  assert_warning(&p, "profile t.profile:1: seccomp-allow sethostname is not "
                     "permitted by skillrun.conf; dropped");
  sr_policy_done(&p);

  /* Without the line: not bounded, as before. */
  build(&p, "memory 1G\n", "seccomp-allow sethostname ptrace\n");
  assert_false(p.seccomp_bounded);
  assert_int_equal(p.seccomp_allow.n, 2);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);

  expect_error(true, "seccomp-allow\n",
               "skillrun.conf:1: seccomp-allow: expected 'seccomp-allow "
               "ENTRY...|none'");
  expect_error(true, "seccomp-allow none read\n",
               "skillrun.conf:1: seccomp-allow: none stands alone");
  expect_error(true, "seccomp-allow read\nseccomp-allow none\n",
               "skillrun.conf:2: seccomp-allow: none excludes the entries "
               "listed before");
  expect_error(true, "seccomp-allow none\nseccomp-allow read\n",
               "skillrun.conf:2: seccomp-allow: an earlier line said none");
  expect_error(true, "seccomp-allow Read\n",
               "skillrun.conf:1: seccomp-allow: 'Read' is not a system call "
               "name");
}

/* skillrun.conf's cgroup is the weakest mode a profile may choose. */
static void test_conf_bounds_cgroup(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, "cgroup require\n", "memory 1G\ncgroup off\n");
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  assert_warning(&p, "profile t.profile:2: cgroup off is weaker than "
                     "skillrun.conf's cgroup require; cgroup stays require");
  sr_policy_done(&p);

  /* The default profile has no cgroup line: the conf's mode, no warning
   * on every run; without a conf line the built-in prefer. */
  build(&p, "cgroup require\n", "include default\n");
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);
  build(&p, "cgroup off\n", "include default\n");
  assert_int_equal(p.cgroup, SR_CGROUP_OFF);
  sr_policy_done(&p);
  build(&p, "memory 1G\n", "include default\n");
  assert_int_equal(p.cgroup, SR_CGROUP_PREFER);
  sr_policy_done(&p);

  /* No cgroup line in the profile: the conf's mode, no warning. */
  build(&p, "cgroup require\n", "proc tmpfs\n");
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);

  build(&p, "cgroup prefer\n", "cgroup off\n");
  assert_int_equal(p.cgroup, SR_CGROUP_PREFER);
  assert_warning(&p, "profile t.profile:1: cgroup off is weaker than "
                     "skillrun.conf's cgroup prefer; cgroup stays prefer");
  sr_policy_done(&p);

  /* Stronger than the floor, or no floor: as the profile says. */
  build(&p, "cgroup prefer\n", "cgroup require\n");
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);
  build(&p, "cgroup off\n", "cgroup off\n");
  assert_int_equal(p.cgroup, SR_CGROUP_OFF);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);
  build(&p, "memory 1G\n", "cgroup off\n");
  assert_int_equal(p.cgroup, SR_CGROUP_OFF);
  sr_policy_done(&p);

  expect_error(true, "cgroup maybe\n",
               "skillrun.conf:1: cgroup: 'maybe' is not require, prefer or "
               "off");
  expect_error(true, "cgroup off\ncgroup require\n",
               "skillrun.conf:2: duplicate key 'cgroup' (first set at "
               "skillrun.conf:1)");
}

/* skillrun.conf's bind-ro and etc-file bound a profile's sources and /etc
 * files by path components; one outside is dropped with a warning. */
static void test_conf_bounds_paths(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, "bind-ro /usr/share /opt/tools\netc-file localtime\n",
        "bind-ro /usr/share/zoneinfo /z\nbind-ro /usrx\nbind-ro-try /opt /o\n"
        "bind-ro-try /opt/tools/bin /t\nbind-ro /home\n"
        "etc-file-try localtime\netc-file timezone\n");
  assert_int_equal(p.n_binds, 2);
  assert_string_equal(p.binds[0].src, "/usr/share/zoneinfo");
  assert_string_equal(p.binds[1].src, "/opt/tools/bin");
  assert_warning(&p, "profile t.profile:2: bind-ro /usrx is not permitted by "
                     "skillrun.conf; dropped");
  assert_warning(&p, "profile t.profile:3: bind-ro-try /opt is not permitted "
                     "by skillrun.conf; dropped");
  assert_warning(&p, "profile t.profile:5: bind-ro /home is not permitted by "
                     "skillrun.conf; dropped");
  assert_int_equal(p.etc_files_try.n, 1);
  assert_string_equal(p.etc_files_try.v[0], "/etc/localtime");
  assert_int_equal(p.etc_files.n, 0);
  assert_warning(&p, "profile t.profile:7: etc-file /etc/timezone is not "
                     "permitted by skillrun.conf; dropped");
  sr_policy_done(&p);

  build(&p, "bind-ro none\netc-file /etc/ssl\n",
        "bind-ro /opt\netc-file ssl/certs/ca.crt\netc-file sslx\n");
  assert_int_equal(p.n_binds, 0);
  assert_int_equal(p.etc_files.n, 1);
  assert_warning(&p, "profile t.profile:3: etc-file /etc/sslx is not "
                     "permitted by skillrun.conf; dropped");
  sr_policy_done(&p);

  /* Without the lines: not bounded. */
  build(&p, "memory 256M\n", "bind-ro /opt\netc-file timezone\n");
  assert_int_equal(p.n_binds, 1);
  assert_int_equal(p.etc_files.n, 1);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);

  expect_error(true, "bind-ro opt\n",
               "skillrun.conf:1: bind-ro: 'opt' must be an absolute, "
               "normalised path");
  expect_error(true, "bind-ro /opt/\n",
               "skillrun.conf:1: bind-ro: '/opt/' must be an absolute, "
               "normalised path");
  expect_error(true, "etc-file ../x\n",
               "skillrun.conf:1: etc-file: '../x' must name a file or "
               "directory at or below /etc, normalised");
  expect_error(true, "etc-file /usr/x\n",
               "skillrun.conf:1: etc-file: '/usr/x' must name a file or "
               "directory at or below /etc, normalised");
  expect_error(true, "bind-ro none /opt\n",
               "skillrun.conf:1: bind-ro: none stands alone");
}

/* skillrun.conf's env-keep bounds the names a profile's env-keep keeps. */
static void test_conf_bounds_env(void **state) {
  struct sr_policy p;
  (void)state;

  build(&p, "env-keep LANG TZ\n", "env-keep LANG AWS_SECRET_ACCESS_KEY\n");
  assert_int_equal(p.env_keep.n, 1);
  assert_string_equal(p.env_keep.v[0], "LANG");
  assert_warning(&p, "profile t.profile:1: env-keep AWS_SECRET_ACCESS_KEY is "
                     "not permitted by skillrun.conf; dropped");
  sr_policy_done(&p);
  build(&p, "env-keep none\n", "env-keep LANG\n");
  assert_int_equal(p.env_keep.n, 0);
  sr_policy_done(&p);
  build(&p, "memory 256M\n", "env-keep LANG HOME\n");
  assert_int_equal(p.env_keep.n, 2);
  assert_int_equal(p.warnings.n, 0);
  sr_policy_done(&p);
  expect_error(true, "env-keep 1X\n",
               "skillrun.conf:1: env-keep: '1X' is not a variable name "
               "(letters, digits and '_', not starting with a digit)");
}

/* SKILL.md may lower; raising is clamped with a warning naming the layer
 * that set the current value. */
static void test_manifest_layer(void **state) {
  struct sr_policy p;
  struct sr_manifest m;
  struct sr_error err = {0};
  (void)state;

  build(&p, NULL, "memory 256M\n");
  manifest_init(&m);
  m.limits[SR_LIM_MEMORY] = (struct sr_manifest_limit){true, 1 * GiB, 7};
  m.limits[SR_LIM_CPU_SECONDS] = (struct sr_manifest_limit){true, 10, 8};
  m.limits[SR_LIM_TIMEOUT] =
      (struct sr_manifest_limit){true, 10 * 60 * 1000, 9};
  m.limits[SR_LIM_PIDS] = (struct sr_manifest_limit){true, 64, 10};
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 256 * MiB);
  assert_int_equal(p.limits[SR_LIM_MEMORY].source, SR_SRC_PROFILE);
  assert_warning(&p, "SKILL.md:7: sandbox.memory 1GiB is above the limit "
                     "256MiB set by the profile; clamped");
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].value, 10);
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].source, SR_SRC_MANIFEST);
  assert_int_equal(p.limits[SR_LIM_TIMEOUT].value, 5 * 60 * 1000);
  assert_warning(&p, "SKILL.md:9: sandbox.timeout 10m is above the platform "
                     "cap 5m; clamped");
  assert_int_equal(p.limits[SR_LIM_PIDS].value, 64);
  assert_int_equal(p.limits[SR_LIM_PIDS].source, SR_SRC_MANIFEST);
  assert_int_equal(p.warnings.n, 2);

  /* Flags after the manifest: raising is clamped naming SKILL.md. */
  {
    struct sr_flag_layer f;
    flags_init(&f);
    f.limits[SR_LIM_PIDS] = (struct sr_flag_u64){true, 100};
    f.limits[SR_LIM_CPU_SECONDS] = (struct sr_flag_u64){true, 5};
    f.limits[SR_LIM_MEMORY] = (struct sr_flag_u64){true, 300 * MiB};
    assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
    assert_warning(&p, "--pids 100 is above the limit 64 set by SKILL.md; "
                       "clamped");
    assert_warning(&p, "--memory 300MiB is above the limit 256MiB set by the "
                       "profile; clamped");
    assert_int_equal(p.limits[SR_LIM_PIDS].value, 64);
    assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].value, 5);
    assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].source, SR_SRC_FLAG);
  }
  sr_policy_done(&p);

  /* Below the minimum: the manifest is refused. */
  build(&p, NULL, NULL);
  manifest_init(&m);
  m.limits[SR_LIM_MEMORY] = (struct sr_manifest_limit){true, 1 * MiB, 4};
  assert_true(sr_policy_apply_manifest(&p, &m, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, "manifest_invalid");
  assert_string_equal(err.msg, "SKILL.md:4: sandbox.memory 1MiB is below the "
                               "minimum 8MiB");
  sr_policy_done(&p);
}

static void test_flag_layer(void **state) {
  struct sr_policy p;
  struct sr_flag_layer f;
  struct sr_error err = {0};
  (void)state;

  build(&p, NULL, NULL);
  flags_init(&f);
  f.limits[SR_LIM_MEMORY] = (struct sr_flag_u64){true, 128 * MiB};
  f.limits[SR_LIM_LOG_CAP] = (struct sr_flag_u64){true, 20 * MiB};
  f.limits[SR_LIM_TIMEOUT] = (struct sr_flag_u64){true, 30000};
  f.workspace_root = "/var/tmp/runs";
  assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 128 * MiB);
  assert_int_equal(p.limits[SR_LIM_MEMORY].source, SR_SRC_FLAG);
  assert_int_equal(p.limits[SR_LIM_TIMEOUT].value, 30000);
  assert_int_equal(p.limits[SR_LIM_LOG_CAP].value, 10 * MiB);
  assert_int_equal(p.limits[SR_LIM_LOG_CAP].source, SR_SRC_BUILTIN);
  assert_warning(&p, "--log-cap 20MiB is above the platform cap 10MiB; "
                     "clamped");
  assert_string_equal(p.workspace_root, "/var/tmp/runs");
  sr_policy_done(&p);

  /* Under a conf-raised cap the flag is a lowering, not a raise. */
  build(&p, "log-cap 100M\n", NULL);
  assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
  assert_int_equal(p.limits[SR_LIM_LOG_CAP].value, 20 * MiB);
  sr_policy_done(&p);

  build(&p, NULL, NULL);
  flags_init(&f);
  f.limits[SR_LIM_PIDS] = (struct sr_flag_u64){true, 2};
  assert_true(sr_policy_apply_flags(&p, &f, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_string_equal(err.msg, "--pids 2 is below the minimum 4");
  sr_policy_done(&p);
}

/* conf {none,deny,allow} x profile {none,deny,allow} x manifest
 * {absent,deny,allow} x flag {none,deny,allow}. */
/*
 * Every combination of the four layers' network modes (absent, deny,
 * allowlist, host), against a model of the rule: skillrun.conf and the
 * profile bound the mode (an absent conf line permits host, an absent
 * profile line denies), SKILL.md asks for it, a flag narrows it (host to
 * allowlist too); whatever is asked and not granted is a warning.
 */
static void test_network_matrix(void **state) {
  static const enum sr_network_mode modes[] = {SR_NET_UNSET, SR_NET_DENY,
                                               SR_NET_ALLOWLIST, SR_NET_HOST};
  static const char *const text[] = {NULL, "network deny\n",
                                     "network allowlist\n", "network allow\n"};
  (void)state;

  for (int ci = 0; ci < 4; ci++)
    for (int pi = 0; pi < 4; pi++)
      for (int mi = 0; mi < 4; mi++)
        for (int fi = 0; fi < 4; fi++) {
          enum sr_network_mode conf = ci ? modes[ci] : SR_NET_HOST;
          enum sr_network_mode prof = pi ? modes[pi] : SR_NET_DENY;
          enum sr_network_mode max = conf < prof ? conf : prof;
          enum sr_network_mode asked = modes[mi], flag = modes[fi];
          enum sr_network_mode want = SR_NET_DENY;
          struct sr_policy p;
          struct sr_manifest m;
          struct sr_flag_layer f;
          struct sr_error err = {0};
          bool warned_manifest = false, warned_flag = false;
          bool warned_profile = false;
          char mwant[96], fwant[32];

          if (asked != SR_NET_UNSET && asked <= max)
            want = asked;
          if (flag == SR_NET_DENY ||
              (flag == SR_NET_ALLOWLIST && want == SR_NET_HOST))
            want = flag;

          build(&p, text[ci], pi ? text[pi] : "hostname h\n");
          assert_int_equal(p.network, SR_NET_DENY);
          if (p.network_max != max)
            fail_msg("conf %d profile %d: network_max %d", ci, pi,
                     (int)p.network_max);
          manifest_init(&m);
          m.network = asked;
          m.network_line = 6;
          assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
          flags_init(&f);
          f.network = flag;
          assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
          if (p.network != want)
            fail_msg("conf %d profile %d manifest %d flag %d: network=%d, "
                     "want %d",
                     ci, pi, mi, fi, (int)p.network, (int)want);

          snprintf(mwant, sizeof(mwant), "SKILL.md:6: sandbox.network %s ",
                   sr_network_mode_name(asked));
          snprintf(fwant, sizeof(fwant),
                   "--network %s: ", sr_network_mode_name(flag));
          for (size_t i = 0; i < p.warnings.n; i++) {
            if (asked != SR_NET_UNSET && strstr(p.warnings.v[i], mwant))
              warned_manifest = true;
            if (flag != SR_NET_UNSET &&
                !strncmp(p.warnings.v[i], fwant, strlen(fwant)))
              warned_flag = true;
            if (strstr(p.warnings.v[i], "is forbidden by skillrun.conf"))
              warned_profile = true;
          }
          /* Every request that is not granted is reported. */
          assert_int_equal(warned_profile, pi > 0 && prof > conf);
          assert_int_equal(warned_manifest, asked > max);
          assert_int_equal(warned_flag, flag > p.network);
          if (flag == SR_NET_DENY ||
              (flag == SR_NET_ALLOWLIST && p.network == SR_NET_ALLOWLIST &&
               asked == SR_NET_HOST && max == SR_NET_HOST))
            assert_int_equal(p.network_source, SR_SRC_FLAG);
          else if (want != SR_NET_DENY)
            assert_int_equal(p.network_source, SR_SRC_MANIFEST);
          sr_policy_done(&p);
        }
}

/* The manifest's request as sr_manifest_parse gives it. */
static void request(struct sr_manifest *m, const char *mode,
                    const char *allow) {
  char why[256];

  manifest_init(m);
  if (mode)
    assert_int_equal(sr_network_mode_from_name(mode, &m->network), 0);
  m->network_line = 6;
  if (allow) {
    if (sr_netallow_parse_list(allow, 0, SR_NETALLOW_ORIGIN_MANIFEST,
                               "SKILL.md:7", &m->network_allow, why,
                               sizeof(why)) < 0)
      fail_msg("request %s: %s", allow, why);
    m->network_allow_line = 7;
  }
}

/* The effective list as text, "a:443 b:80" (entries in order). */
static void allow_text(const struct sr_netallow *l, char *buf, size_t len) {
  buf[0] = '\0';
  for (size_t i = 0; i < l->n; i++) {
    char e[SR_NETALLOW_FORMAT_MAX];
    sr_netallow_format(&l->v[i], e, sizeof(e));
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? " " : "", e);
  }
}

static void assert_allow(const struct sr_policy *p, const char *want) {
  char got[2048];
  allow_text(&p->net_allow, got, sizeof(got));
  if (strcmp(got, want) != 0)
    fail_msg("allowlist '%s', want '%s'", got, want);
}

/* The allowlist's layering: skillrun.conf bounds the profile's list, the
 * profile's list bounds the skill's request, the capability narrows it
 * further; whatever is dropped is a warning naming where it was asked. */
static void test_network_allowlist(void **state) {
  struct sr_policy p;
  struct sr_manifest m;
  struct sr_flag_layer f;
  struct sr_error err = {0};
  (void)state;

  /* No list anywhere: what the skill names is what it gets. */
  build(&p, NULL, "network allowlist\n");
  assert_false(p.net_bounded);
  request(&m, "allowlist", "api.example.com *.pythonhosted.org:443 x.test:80");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_int_equal(p.network, SR_NET_ALLOWLIST);
  assert_allow(&p, "api.example.com:443 *.pythonhosted.org:443 x.test:80");
  assert_int_equal(p.net_allow.v[0].origin, SR_NETALLOW_ORIGIN_MANIFEST);
  assert_string_equal(p.net_allow.v[0].where, "SKILL.md:7");
  assert_int_equal(p.net_allow.v[0].bound_origin, SR_NETALLOW_ORIGIN_NONE);
  assert_int_equal(p.warnings.n, 0);
  sr_netallow_done(&m.network_allow);
  sr_policy_done(&p);

  /* The profile's list bounds the request: the intersection, a wildcard
   * cut down to the permitted name, the profile's ranges kept; what falls
   * outside is dropped with a warning. */
  build(&p, NULL,
        "network allowlist\n"
        "network-allow api.example.com files.pythonhosted.org\n"
        "network-allow 10.0.0.0/8:443 *.internal.test:8080\n");
  assert_true(p.net_bounded);
  request(&m, NULL,
          "api.example.com *.pythonhosted.org:443 x.test:80 "
          "a.internal.test:8080 api.example.com:80");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  /* No sandbox.network, but destinations: allowlist. */
  assert_int_equal(p.network, SR_NET_ALLOWLIST);
  assert_int_equal(p.network_source, SR_SRC_MANIFEST);
  assert_allow(&p, "api.example.com:443 files.pythonhosted.org:443 "
                   "a.internal.test:8080 10.0.0.0/8:443");
  assert_false(p.net_allow.v[0].narrowed);
  assert_true(p.net_allow.v[1].narrowed);
  assert_int_equal(p.net_allow.v[1].bound_origin, SR_NETALLOW_ORIGIN_PROFILE);
  assert_string_equal(p.net_allow.v[1].bound_where, "t.profile:2");
  assert_int_equal(p.net_allow.v[3].origin, SR_NETALLOW_ORIGIN_PROFILE);
  assert_warning(&p, "SKILL.md:7: sandbox.network-allow x.test:80 is not "
                     "permitted by the profile or skillrun.conf; dropped");
  assert_warning(&p, "SKILL.md:7: sandbox.network-allow api.example.com:80 "
                     "is not permitted by the profile or skillrun.conf; "
                     "dropped");
  assert_int_equal(p.warnings.n, 2);
  sr_policy_done(&p);

  /* ... refused under a strict profile. */
  build(&p, NULL,
        "strict yes\nnetwork allowlist\nnetwork-allow api.example.com\n");
  assert_true(sr_policy_apply_manifest(&p, &m, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, "manifest_strict");
  assert_string_equal(err.msg,
                      "SKILL.md:7: sandbox.network-allow "
                      "*.pythonhosted.org:443 is not permitted by the "
                      "profile or skillrun.conf (refused by strict profile)");
  sr_error_clear(&err);
  sr_policy_done(&p);

  /* skillrun.conf bounds the profile's list the same way. */
  build(&p,
        "network-allow *.example.com 10.0.0.0/8:443\n"
        "network-allow 192.168.0.0/16:443\n",
        "network allowlist\n"
        "network-allow api.example.com other.test 10.1.0.0/16:443\n");
  assert_true(p.net_bounded);
  {
    char got[256];
    allow_text(&p.net_permitted, got, sizeof(got));
    assert_string_equal(got, "api.example.com:443 10.1.0.0/16:443");
  }
  assert_warning(&p, "t.profile:2: network-allow other.test:443 is not "
                     "permitted by skillrun.conf; dropped");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_allow(&p, "api.example.com:443 10.1.0.0/16:443");
  sr_policy_done(&p);

  /* A profile without network allowlist: its list has no effect. */
  build(&p, NULL, "network-allow api.example.com\n");
  assert_warning(&p, "profile t.profile:1: network-allow has no effect "
                     "without network allowlist");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_int_equal(p.network, SR_NET_DENY);
  assert_warning(&p, "SKILL.md:7: the skill names network destinations, but "
                     "the profile or skillrun.conf permit no network "
                     "allowlist; network stays denied");
  sr_policy_done(&p);

  /* Nothing named is permitted: allowlist with nothing but ranges. */
  build(&p, NULL, "network allowlist\nnetwork-allow 10.0.0.0/8:443\n");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_allow(&p, "10.0.0.0/8:443");
  assert_warning(&p, "network allowlist: no destination the skill names is "
                     "permitted; every connection will be refused");
  sr_policy_done(&p);
  sr_netallow_done(&m.network_allow);

  /* --network allowlist narrows host: the request within what is
   * permitted becomes the list. */
  build(&p, NULL, "network host\nnetwork-allow a.test b.test\n");
  request(&m, "host", "a.test c.test");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_int_equal(p.network, SR_NET_HOST);
  assert_int_equal(p.net_allow.n, 0);
  flags_init(&f);
  f.network = SR_NET_ALLOWLIST;
  assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
  assert_int_equal(p.network, SR_NET_ALLOWLIST);
  assert_int_equal(p.network_source, SR_SRC_FLAG);
  assert_allow(&p, "a.test:443");
  sr_policy_done(&p);
  sr_netallow_done(&m.network_allow);
}

/* The capability's network field: deny and allow as before, allowlist
 * narrows host to allowlist and, with entries, the list. */
static void test_network_capability(void **state) {
  struct sr_policy p;
  struct sr_manifest m;
  struct sr_error err = {0};
  (void)state;

  request(&m, "allowlist", "a.test b.test *.c.test");
  build(&p, NULL,
        "network host\nnetwork-allow a.test b.test x.c.test "
        "10.0.0.0/8:443\n");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_allow(&p, "a.test:443 b.test:443 x.c.test:443 10.0.0.0/8:443");
  /* allow: nothing changes (old tokens). */
  assert_int_equal(sr_policy_limit_network(&p, SR_NET_HOST, NULL, &err), 0);
  assert_int_equal(p.network, SR_NET_ALLOWLIST);
  /* allowlist with entries: the names within them, the ranges kept. */
  assert_int_equal(
      sr_policy_limit_network(&p, SR_NET_ALLOWLIST, "b.test *.c.test", &err),
      0);
  assert_allow(&p, "b.test:443 x.c.test:443 10.0.0.0/8:443");
  assert_int_equal(p.net_allow.v[0].bound_origin,
                   SR_NETALLOW_ORIGIN_CAPABILITY);
  assert_warning(&p, "SKILL.md:7: sandbox.network-allow a.test:443 is not "
                     "permitted by the execution capability; dropped");
  assert_int_equal(p.network_max, SR_NET_ALLOWLIST);
  /* An entry that does not parse refuses the run. */
  assert_true(sr_policy_limit_network(&p, SR_NET_ALLOWLIST, "10.0.0.1", &err) <
              0);
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, "capability_invalid");
  sr_error_clear(&err);
  /* deny: denied. */
  assert_int_equal(sr_policy_limit_network(&p, SR_NET_DENY, NULL, &err), 0);
  assert_int_equal(p.network, SR_NET_DENY);
  assert_int_equal(p.network_source, SR_SRC_CAPABILITY);
  assert_warning(&p, "the execution capability allows only network deny; "
                     "network denied");
  sr_policy_done(&p);
  sr_netallow_done(&m.network_allow);

  /* allowlist narrows a host run. */
  request(&m, "host", "a.test");
  build(&p, NULL, "network host\n");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  assert_int_equal(p.network, SR_NET_HOST);
  assert_int_equal(sr_policy_limit_network(&p, SR_NET_ALLOWLIST, NULL, &err),
                   0);
  assert_int_equal(p.network, SR_NET_ALLOWLIST);
  assert_int_equal(p.network_source, SR_SRC_CAPABILITY);
  assert_allow(&p, "a.test:443");
  assert_warning(&p, "the execution capability allows at most network "
                     "allowlist; network host narrowed to allowlist");
  sr_policy_done(&p);
  sr_netallow_done(&m.network_allow);
}

/* The keys' syntax errors name the line and the entry. */
static void test_network_keys(void **state) {
  struct sr_policy p;
  (void)state;

  expect_error(false, "network-allow\n",
               "t.profile:1: network-allow: expected 'network-allow "
               "ENTRY...'");
  expect_error(false, "network-allow http://x.test\n",
               "t.profile:1: network-allow: 'http://x.test': a URL is not "
               "an entry: write the host name only (and :PORT)");
  expect_error(false, "network-hosts /etc/hosts\n",
               "t.profile:1: key 'network-hosts' is only allowed in "
               "skillrun.conf");
  expect_error(true, "network-hosts etc/hosts\n",
               "skillrun.conf:1: network-hosts: 'etc/hosts' must be an "
               "absolute, normalised path");
  build(&p, "network-hosts /etc/skillrun/hosts\n", NULL);
  assert_string_equal(p.net_hosts, "/etc/skillrun/hosts");
  sr_policy_done(&p);

  /* A conf that lists destinations and names no mode bounds every run by
   * the list: host would reach past it.  Its own `network host` keeps
   * host, in either order. */
  build(&p, "network-allow a.test\n", "network host\n");
  assert_int_equal(p.network_max, SR_NET_ALLOWLIST);
  assert_int_equal(p.network_source, SR_SRC_PROFILE);
  assert_warning(&p, "profile t.profile:1: network host is forbidden by "
                     "skillrun.conf (network-allow without network host); "
                     "network stays allowlist");
  sr_policy_done(&p);
  build(&p, "network-allow a.test\nnetwork host\n", "network host\n");
  assert_int_equal(p.network_max, SR_NET_HOST);
  sr_policy_done(&p);
  build(&p, "network host\nnetwork-allow a.test\n", "network host\n");
  assert_int_equal(p.network_max, SR_NET_HOST);
  sr_policy_done(&p);
}

static void test_strict_refuses_manifest_warnings(void **state) {
  struct sr_policy p;
  struct sr_manifest m;
  struct sr_error err = {0};
  (void)state;

  manifest_init(&m);
  assert_int_equal(
      sr_strv_push(&m.warnings, "SKILL.md:4: unknown top-level key 'tags'"), 0);
  assert_int_equal(sr_strv_push(&m.warnings, "second"), 0);

  /* Not strict: accepted (main emits the warnings). */
  build(&p, NULL, "strict no\n");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  sr_policy_done(&p);

  build(&p, NULL, "strict yes\n");
  assert_true(sr_policy_apply_manifest(&p, &m, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, "manifest_strict");
  assert_string_equal(err.msg, "SKILL.md:4: unknown top-level key 'tags' "
                               "(refused by strict profile)");
  sr_policy_done(&p);

  /* Strict without warnings is fine. */
  sr_strv_done(&m.warnings);
  sr_error_clear(&err);
  build(&p, NULL, "strict yes\n");
  assert_int_equal(sr_policy_apply_manifest(&p, &m, &err), 0);
  sr_policy_done(&p);
}

/* One name per enforcement kind; --explain (no record) shows none. */
static void test_enforcement(void **state) {
  static const char *const names[SR__ENF_MAX] = {
      NULL, "cgroup2", "rlimit", "supervisor", "cgroup1", "tmpfs", "proxy"};
  static const char *const net_names[SR__NETENF_MAX] = {
      NULL, "netns", "proxy", "landlock-scope", "none"};
  struct sr_enforcement enf = {0};
  struct sr_policy p;
  json_t *j, *lim;
  (void)state;

  for (int e = 0; e < SR__ENF_MAX; e++) {
    if (names[e])
      assert_string_equal(sr_enforcer_name((enum sr_enforcer)e), names[e]);
    else
      assert_null(sr_enforcer_name((enum sr_enforcer)e));
  }
  assert_null(sr_enforcer_name(SR__ENF_MAX));
  for (int e = 0; e < SR__NETENF_MAX; e++) {
    if (net_names[e])
      assert_string_equal(sr_net_enforcer_name((enum sr_net_enforcer)e),
                          net_names[e]);
    else
      assert_null(sr_net_enforcer_name((enum sr_net_enforcer)e));
  }
  assert_null(sr_net_enforcer_name(SR__NETENF_MAX));

  assert_int_equal(sr_policy_init(&p), 0);
  enf.by[SR_LIM_PIDS] = SR_ENF_RLIMIT;
  j = sr_policy_to_json(&p, NULL);
  assert_non_null(j);
  lim = json_object_get(j, "limits");
  for (int k = 0; k < SR__LIM_MAX; k++)
    assert_true(json_is_null(json_object_get(
        json_object_get(lim, sr_limit_defs[k].name), "enforced_by")));
  json_decref(j);
  j = sr_policy_to_json(&p, &enf);
  lim = json_object_get(j, "limits");
  assert_string_equal(json_string_value(json_object_get(
                          json_object_get(lim, "pids"), "enforced_by")),
                      "rlimit");
  assert_true(json_is_null(
      json_object_get(json_object_get(lim, "memory"), "enforced_by")));
  json_decref(j);
  sr_policy_done(&p);
}

static void test_to_json(void **state) {
  struct sr_enforcement enf = {0};
  struct sr_policy p;
  struct sr_conf c = {0};
  struct sr_error err = {0};
  struct sr_flag_layer f;
  json_t *j, *lim, *mounts;
  bool saw_tmp = false, saw_bind = false, saw_etc = false;
  size_t i;
  json_t *e;
  (void)state;

  assert_int_equal(sr_policy_init(&p), 0);
  parse("memory 2G\n", "skillrun.conf", &c);
  assert_int_equal(sr_policy_apply_conf(&p, &c, &err), 0);
  sr_conf_done(&c);
  parse("pids 100\nbind-ro-try /opt/x /x\nsetenv A b\nenv-keep TZ\n"
        "seccomp-allow ptrace\netc-file-try localtime\ntmp-size 16M\n",
        "t.profile", &c);
  assert_int_equal(sr_policy_apply_profile(&p, &c, &err), 0);
  sr_conf_done(&c);
  flags_init(&f);
  f.limits[SR_LIM_TIMEOUT] = (struct sr_flag_u64){true, 90000};
  assert_int_equal(sr_policy_apply_flags(&p, &f, &err), 0);
  enf.by[SR_LIM_MEMORY] = SR_ENF_CGROUP2;

  j = sr_policy_to_json(&p, &enf);
  assert_non_null(j);
  assert_string_equal(json_string_value(json_object_get(j, "profile")),
                      "t.profile");
  lim = json_object_get(j, "limits");
  assert_int_equal(json_object_size(lim), SR__LIM_MAX);
  for (int k = 0; k < SR__LIM_MAX; k++) {
    json_t *l = json_object_get(lim, sr_limit_defs[k].name);
    assert_non_null(l);
    assert_int_equal(json_integer_value(json_object_get(l, "value")),
                     p.limits[k].value);
    assert_int_equal(json_integer_value(json_object_get(l, "cap")),
                     p.limits[k].cap);
    assert_string_equal(json_string_value(json_object_get(l, "source")),
                        sr_source_name(p.limits[k].source));
    assert_non_null(json_object_get(l, "enforced_by"));
    assert_non_null(json_string_value(json_object_get(l, "human")));
  }
  e = json_object_get(lim, "memory");
  assert_string_equal(json_string_value(json_object_get(e, "source")), "conf");
  assert_string_equal(json_string_value(json_object_get(e, "human")), "2GiB");
  assert_string_equal(json_string_value(json_object_get(e, "enforced_by")),
                      "cgroup2");
  e = json_object_get(lim, "pids");
  assert_string_equal(json_string_value(json_object_get(e, "source")),
                      "profile");
  assert_true(json_is_null(json_object_get(e, "enforced_by")));
  e = json_object_get(lim, "timeout");
  assert_string_equal(json_string_value(json_object_get(e, "source")), "flag");
  assert_string_equal(json_string_value(json_object_get(e, "human")), "90s");
  e = json_object_get(lim, "cpu-seconds");
  assert_string_equal(json_string_value(json_object_get(e, "source")),
                      "builtin");

  e = json_object_get(j, "network");
  assert_string_equal(json_string_value(json_object_get(e, "mode")), "deny");
  assert_true(json_is_false(json_object_get(e, "permitted")));
  assert_string_equal(json_string_value(json_object_get(j, "cgroup")),
                      "prefer");
  assert_string_equal(json_string_value(json_object_get(j, "proc")), "procfs");
  assert_true(json_is_false(json_object_get(j, "strict")));
  assert_string_equal(json_string_value(json_object_get(j, "hostname")),
                      "skillrun");

  mounts = json_object_get(j, "mounts");
  assert_true(json_is_array(mounts));
  json_array_foreach(mounts, i, e) {
    const char *dst = json_string_value(json_object_get(e, "dst"));
    assert_non_null(dst);
    if (!strcmp(dst, "/tmp")) {
      saw_tmp = true;
      assert_int_equal(json_integer_value(json_object_get(e, "size")),
                       16 * MiB);
    }
    if (!strcmp(dst, "/x")) {
      saw_bind = true;
      assert_string_equal(json_string_value(json_object_get(e, "src")),
                          "/opt/x");
      assert_true(json_is_true(json_object_get(e, "optional")));
      assert_true(json_is_true(json_object_get(e, "ro")));
    }
    if (!strcmp(dst, "/etc")) {
      saw_etc = true;
      assert_string_equal(
          json_string_value(json_array_get(json_object_get(e, "copy_try"), 0)),
          "/etc/localtime");
    }
  }
  assert_true(saw_tmp && saw_bind && saw_etc);

  e = json_object_get(j, "environment");
  assert_string_equal(
      json_string_value(json_array_get(json_object_get(e, "keep"), 0)), "TZ");
  assert_string_equal(
      json_string_value(json_object_get(json_object_get(e, "set"), "A")), "b");
  e = json_object_get(j, "seccomp");
  assert_string_equal(
      json_string_value(json_array_get(json_object_get(e, "allow"), 0)),
      "ptrace");
  assert_int_equal(json_array_size(json_object_get(e, "deny")), 0);

  /* Serialisable with sorted keys, deterministic. */
  {
    char *s1 = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    json_t *j2 = sr_policy_to_json(&p, &enf);
    char *s2 = json_dumps(j2, JSON_SORT_KEYS | JSON_COMPACT);
    assert_non_null(s1);
    assert_string_equal(s1, s2);
    free(s1);
    free(s2);
    json_decref(j2);
  }
  json_decref(j);
  sr_policy_done(&p);
}

/* The shipped profiles parse, never raise a limit and say what they
 * promise. */
static void test_shipped_profiles(void **state) {
  struct sr_policy p;
  struct sr_conf c = {0};
  struct sr_error err = {0};
  char *resolved = NULL;
  char dir[1024];
  const char *top = getenv("TOP_SRCDIR");
  (void)state;

  snprintf(dir, sizeof(dir), "%s/profiles", top ? top : ".");
  assert_int_equal(setenv("SKILLRUN_PROFILE_PATH", dir, 1), 0);

  /* default (embedded) */
  assert_int_equal(sr_policy_init(&p), 0);
  assert_int_equal(sr_conf_load_profile(NULL, &c, &resolved, &err), 0);
  if (sr_policy_apply_profile(&p, &c, &err) < 0)
    fail_msg("%s", err.msg);
  assert_string_equal(p.profile, "default.profile (built-in)");
  assert_int_equal(p.warnings.n, 0);
  assert_int_equal(p.network_max, SR_NET_DENY);
  assert_int_equal(p.cgroup, SR_CGROUP_PREFER);
  assert_int_equal(p.proc, SR_PROC_PROCFS);
  assert_false(p.strict);
  for (int i = 0; i < SR__LIM_MAX; i++)
    assert_int_equal(p.limits[i].value, sr_limit_defs[i].builtin);
  assert_int_equal(p.n_binds, 1);
  assert_string_equal(p.binds[0].dst, "/etc/alternatives");
  assert_true(p.binds[0].optional);
  assert_true(sr_strv_contains(&p.etc_files_try, "/etc/localtime"));
  assert_true(
      sr_strv_contains(&p.etc_files_try, "/etc/ssl/certs/ca-certificates.crt"));
  sr_conf_done(&c);
  free(resolved);
  sr_policy_done(&p);

  /* strict */
  assert_int_equal(sr_policy_init(&p), 0);
  assert_int_equal(sr_conf_load_profile("strict", &c, NULL, &err), 0);
  if (sr_policy_apply_profile(&p, &c, &err) < 0)
    fail_msg("%s", err.msg);
  assert_int_equal(p.warnings.n, 0);
  assert_true(p.strict);
  assert_int_equal(p.cgroup, SR_CGROUP_REQUIRE);
  assert_int_equal(p.network_max, SR_NET_DENY);
  assert_int_equal(p.limits[SR_LIM_MEMORY].value, 256 * MiB);
  assert_int_equal(p.limits[SR_LIM_CPU_SECONDS].value, 30);
  assert_int_equal(p.limits[SR_LIM_TIMEOUT].value, 120000);
  assert_int_equal(p.limits[SR_LIM_PIDS].value, 128);
  assert_int_equal(p.limits[SR_LIM_LOG_CAP].value, 1 * MiB);
  for (int i = 0; i < SR__LIM_MAX; i++)
    assert_true(p.limits[i].value <= sr_limit_defs[i].builtin);
  sr_conf_done(&c);
  sr_policy_done(&p);

  /* python */
  assert_int_equal(sr_policy_init(&p), 0);
  assert_int_equal(sr_conf_load_profile("python", &c, NULL, &err), 0);
  if (sr_policy_apply_profile(&p, &c, &err) < 0)
    fail_msg("%s", err.msg);
  assert_int_equal(p.warnings.n, 0);
  assert_int_equal(p.network_max, SR_NET_DENY);
  for (int i = 0; i < SR__LIM_MAX; i++)
    assert_int_equal(p.limits[i].value, sr_limit_defs[i].builtin);
  assert_int_equal(p.n_setenv, 2);
  assert_string_equal(p.setenv[0].name, "PYTHONDONTWRITEBYTECODE");
  assert_string_equal(p.setenv[1].name, "PYTHONUNBUFFERED");
  assert_non_null(strstr(p.profile, "python.profile"));
  sr_conf_done(&c);
  sr_policy_done(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defs_and_init),
      cmocka_unit_test(test_limit_table),
      cmocka_unit_test(test_layers_follow_the_table),
      cmocka_unit_test(test_profile_lowers_and_clamps_every_limit),
      cmocka_unit_test(test_profile_clamp_message),
      cmocka_unit_test(test_conf_sets_caps),
      cmocka_unit_test(test_limit_errors),
      cmocka_unit_test(test_unknown_and_misplaced_keys),
      cmocka_unit_test(test_duplicate_scalar),
      cmocka_unit_test(test_scalar_values),
      cmocka_unit_test(test_binds),
      cmocka_unit_test(test_etc_files),
      cmocka_unit_test(test_environment),
      cmocka_unit_test(test_seccomp_names),
      cmocka_unit_test(test_conf_bounds_seccomp),
      cmocka_unit_test(test_conf_bounds_cgroup),
      cmocka_unit_test(test_conf_bounds_paths),
      cmocka_unit_test(test_conf_bounds_env),
      cmocka_unit_test(test_manifest_layer),
      cmocka_unit_test(test_flag_layer),
      cmocka_unit_test(test_network_matrix),
      cmocka_unit_test(test_network_allowlist),
      cmocka_unit_test(test_network_capability),
      cmocka_unit_test(test_network_keys),
      cmocka_unit_test(test_strict_refuses_manifest_warnings),
      cmocka_unit_test(test_enforcement),
      cmocka_unit_test(test_to_json),
      cmocka_unit_test(test_trust_settings),
      cmocka_unit_test(test_input_types),
      cmocka_unit_test(test_shipped_profiles),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
