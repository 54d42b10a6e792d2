/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli.h"
#include "paths.h"
#include "util.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct sr_error err;

/* Parses a NULL-terminated list (program name first) and checks that the
 * parser left the caller's argv exactly as it was. */
static int parse_v(const char **v, struct sr_args *a) {
  const char *before[256];
  int n = 0, r;

  while (v[n])
    n++;
  assert_true(n < 256);
  memcpy(before, v, sizeof(char *) * (size_t)(n + 1));
  memset(&err, 0, sizeof(err));
  r = sr_cli_parse(n, (char *const *)v, a, &err);
  for (int i = 0; i <= n; i++)
    assert_ptr_equal(before[i], v[i]);
  if (r < 0) {
    assert_int_equal(r, -EINVAL);
    /* Bad ids are refusals (123), everything else a usage error (125). */
    if (!strncmp(err.msg, "invalid tenant id", 17) ||
        !strncmp(err.msg, "invalid execution id", 20)) {
      assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
      assert_string_equal(err.reason, "invalid_id");
    } else {
      assert_int_equal(err.exit_code, SR_EXIT_FAILED);
      assert_string_equal(err.reason, "usage");
    }
    assert_null(strchr(err.msg, '\n'));
    /* On failure the struct is left empty. */
    assert_null(a->bundle);
    assert_null(a->tenant);
    assert_null(a->command);
    assert_int_equal(a->n_inputs, 0);
  } else {
    assert_int_equal(err.exit_code, 0);
  }
  return r;
}

#define PARSE(a, ...)                                                          \
  parse_v((const char *[]){"skillrun", __VA_ARGS__, NULL}, (a))

/* Expects a usage error whose message contains `want`. */
#define EXPECT_ERROR(want, ...)                                                \
  do {                                                                         \
    struct sr_args a_;                                                         \
    assert_int_equal(PARSE(&a_, __VA_ARGS__), -EINVAL);                        \
    if (!strstr(err.msg, (want)))                                              \
      fail_msg("message '%s' lacks '%s'", err.msg, (want));                    \
    sr_args_done(&a_);                                                         \
  } while (0)

#define EXPECT_OK(a, ...) assert_int_equal(PARSE((a), __VA_ARGS__), 0)

static void test_defaults(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "bundle");
  assert_int_equal(a.mode, SR_MODE_RUN);
  assert_string_equal(a.bundle, "bundle");
  assert_string_equal(a.tenant, "default");
  assert_null(a.profile);
  assert_null(a.conf);
  assert_null(a.expect_sha256);
  assert_null(a.signature);
  assert_null(a.execution_id);
  assert_null(a.workspace_root);
  assert_null(a.cgroup_parent);
  assert_null(a.audit_file);
  assert_null(a.verify_audit);
  assert_null(a.inputs);
  assert_int_equal(a.n_inputs, 0);
  assert_false(a.layer.limits[SR_LIM_MEMORY].set);
  assert_false(a.layer.limits[SR_LIM_CPU_SECONDS].set);
  assert_false(a.layer.limits[SR_LIM_TIMEOUT].set);
  assert_false(a.layer.limits[SR_LIM_PIDS].set);
  assert_false(a.layer.limits[SR_LIM_LOG_CAP].set);
  assert_int_equal(a.layer.network, SR_NET_UNSET);
  assert_int_equal(a.audit_fd, -1);
  assert_false(a.verbose);
  assert_false(a.log_passthrough);
  assert_null(a.command);
  assert_int_equal(a.n_command, 0);
  sr_args_done(&a);
}

static void test_every_option(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "--profile", "strict", "--conf", "/etc/x.conf",
            "--expect-sha256", "sha256:" HEX64, "--signature", "b.sig",
            "--tenant", "acme", "--execution-id", "run-1", "--input",
            "/tmp/data.csv", "--input", "/tmp/b.txt:renamed.txt",
            "--workspace-root", "/srv/runs", "--cgroup-parent",
            "/sys/fs/cgroup/skills", "--memory", "256M", "--cpu-seconds", "30",
            "--timeout", "5m", "--pids", "64", "--log-cap", "1M", "--network",
            "allow", "--audit-file", "/tmp/audit.jsonl", "--log-passthrough",
            "--verbose", "my-bundle", "--", "python3", "main.py");
  assert_int_equal(a.mode, SR_MODE_RUN);
  assert_string_equal(a.bundle, "my-bundle");
  assert_string_equal(a.profile, "strict");
  assert_string_equal(a.conf, "/etc/x.conf");
  assert_string_equal(a.expect_sha256, HEX64);
  assert_string_equal(a.signature, "b.sig");
  assert_string_equal(a.tenant, "acme");
  assert_string_equal(a.execution_id, "run-1");
  assert_int_equal(a.n_inputs, 2);
  assert_string_equal(a.inputs[0].path, "/tmp/data.csv");
  assert_string_equal(a.inputs[0].name, "data.csv");
  assert_string_equal(a.inputs[1].path, "/tmp/b.txt");
  assert_string_equal(a.inputs[1].name, "renamed.txt");
  assert_string_equal(a.workspace_root, "/srv/runs");
  assert_string_equal(a.cgroup_parent, "/sys/fs/cgroup/skills");
  assert_true(a.layer.limits[SR_LIM_MEMORY].set);
  assert_int_equal(a.layer.limits[SR_LIM_MEMORY].value, 256ULL << 20);
  assert_true(a.layer.limits[SR_LIM_CPU_SECONDS].set);
  assert_int_equal(a.layer.limits[SR_LIM_CPU_SECONDS].value, 30);
  assert_true(a.layer.limits[SR_LIM_TIMEOUT].set);
  assert_int_equal(a.layer.limits[SR_LIM_TIMEOUT].value, 300000);
  assert_true(a.layer.limits[SR_LIM_PIDS].set);
  assert_int_equal(a.layer.limits[SR_LIM_PIDS].value, 64);
  assert_true(a.layer.limits[SR_LIM_LOG_CAP].set);
  assert_int_equal(a.layer.limits[SR_LIM_LOG_CAP].value, 1ULL << 20);
  assert_int_equal(a.layer.network, SR_NET_HOST);
  assert_int_equal(a.audit_fd, -1);
  assert_string_equal(a.audit_file, "/tmp/audit.jsonl");
  assert_true(a.log_passthrough);
  assert_true(a.verbose);
  assert_int_equal(a.n_command, 2);
  assert_string_equal(a.command[0], "python3");
  assert_string_equal(a.command[1], "main.py");
  assert_null(a.command[2]);
  sr_args_done(&a);

  EXPECT_OK(&a, "--network", "deny", "--audit-fd", "7", "b");
  assert_int_equal(a.layer.network, SR_NET_DENY);
  assert_int_equal(a.audit_fd, 7);
  sr_args_done(&a);
}

static void test_short_options(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "-p", "python", "-i", "in.txt", "-v", "b");
  assert_string_equal(a.profile, "python");
  assert_int_equal(a.n_inputs, 1);
  assert_string_equal(a.inputs[0].name, "in.txt");
  assert_true(a.verbose);
  sr_args_done(&a);

  /* Clustered, and attached arguments. */
  EXPECT_OK(&a, "-vpstrict", "-ix.csv:y.csv", "b");
  assert_true(a.verbose);
  assert_string_equal(a.profile, "strict");
  assert_string_equal(a.inputs[0].path, "x.csv");
  assert_string_equal(a.inputs[0].name, "y.csv");
  sr_args_done(&a);

  EXPECT_OK(&a, "--memory=64M", "b");
  assert_int_equal(a.layer.limits[SR_LIM_MEMORY].value, 64ULL << 20);
  sr_args_done(&a);
}

static void test_dashdash_passthrough(void **state) {
  struct sr_args a;

  (void)state;
  /* skillrun b -- sh -c 'echo --memory' */
  EXPECT_OK(&a, "b", "--", "sh", "-c", "echo --memory");
  assert_int_equal(a.n_command, 3);
  assert_string_equal(a.command[0], "sh");
  assert_string_equal(a.command[1], "-c");
  assert_string_equal(a.command[2], "echo --memory");
  assert_false(a.layer.limits[SR_LIM_MEMORY].set);
  sr_args_done(&a);

  /* Only the first "--" counts; later ones and options are the command's. */
  EXPECT_OK(&a, "b", "--", "--", "--help", "-x", "--memory", "bogus", "--");
  assert_int_equal(a.mode, SR_MODE_RUN);
  assert_int_equal(a.n_command, 6);
  assert_string_equal(a.command[0], "--");
  assert_string_equal(a.command[1], "--help");
  assert_string_equal(a.command[2], "-x");
  assert_string_equal(a.command[3], "--memory");
  assert_string_equal(a.command[4], "bogus");
  assert_string_equal(a.command[5], "--");
  assert_null(a.command[6]);
  assert_false(a.layer.limits[SR_LIM_MEMORY].set);
  sr_args_done(&a);

  /* Empty strings and odd bytes pass through untouched. */
  EXPECT_OK(&a, "b", "--", "", "a b", "\t");
  assert_int_equal(a.n_command, 3);
  assert_string_equal(a.command[0], "");
  assert_string_equal(a.command[1], "a b");
  assert_string_equal(a.command[2], "\t");
  sr_args_done(&a);

  EXPECT_ERROR("-- must be followed by a command", "b", "--");
  EXPECT_ERROR("missing BUNDLE", "--", "sh");
}

static void test_options_after_bundle(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "b", "--memory", "64M", "--", "cmd");
  assert_string_equal(a.bundle, "b");
  assert_int_equal(a.layer.limits[SR_LIM_MEMORY].value, 64ULL << 20);
  assert_string_equal(a.command[0], "cmd");
  sr_args_done(&a);

  EXPECT_OK(&a, "--pids", "8", "b", "-v", "--tenant", "t1");
  assert_string_equal(a.bundle, "b");
  assert_int_equal(a.layer.limits[SR_LIM_PIDS].value, 8);
  assert_true(a.verbose);
  assert_string_equal(a.tenant, "t1");
  sr_args_done(&a);

  /* POSIXLY_CORRECT must not make getopt stop at BUNDLE. */
  assert_int_equal(setenv("POSIXLY_CORRECT", "1", 1), 0);
  EXPECT_OK(&a, "b", "--memory", "16M");
  assert_true(a.layer.limits[SR_LIM_MEMORY].set);
  sr_args_done(&a);
  assert_int_equal(unsetenv("POSIXLY_CORRECT"), 0);
}

static void test_getopt_errors(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_ERROR("unrecognized option '--foo'", "--foo", "b");
  assert_string_equal(err.msg, "unrecognized option '--foo'");
  EXPECT_ERROR("unrecognized option '--foo'", "b", "--foo=1");
  EXPECT_ERROR("unrecognized option '-x'", "-x", "b");
  EXPECT_ERROR("unrecognized option '-x'", "-vx", "b");
  EXPECT_ERROR("option '--memory' requires an argument", "b", "--memory");
  assert_string_equal(err.msg, "option '--memory' requires an argument");
  /* The command is not a place to look for the missing argument. */
  EXPECT_ERROR("option '--memory' requires an argument", "b", "--memory", "--",
               "64M");
  EXPECT_ERROR("option '-p' requires an argument", "b", "-p");
  EXPECT_ERROR("option '--digest' doesn't allow an argument", "--digest=1",
               "b");
  /* Abbreviations are refused, with a hint. */
  EXPECT_ERROR("unrecognized option '--mem'", "--mem", "1M", "b");
  EXPECT_ERROR("did you mean '--memory'", "--mem=1M", "b");
  /* Typos get the nearest option by edit distance. */
  EXPECT_ERROR("unrecognized option '--memroy' (did you mean '--memory'?)",
               "--memroy", "1M", "b");
  EXPECT_ERROR("unrecognized option '--timout' (did you mean '--timeout'?)",
               "b", "--timout=5s");
  EXPECT_ERROR("unrecognized option '--frobnicate'", "--frobnicate", "b");
  assert_null(strstr(err.msg, "did you mean"));
  EXPECT_ERROR("unrecognized option '--ver'", "--ver");
  assert_non_null(strstr(err.msg, "'--version'"));
  assert_non_null(strstr(err.msg, "'--verbose'"));
  /* A valid option after an error in the same cluster does not matter. */
  EXPECT_ERROR("unrecognized option '-Z'", "-Zv", "b");

  /* getopt's state is reset: a clean parse right after errors works. */
  EXPECT_OK(&a, "-v", "b");
  assert_true(a.verbose);
  sr_args_done(&a);
}

static void test_duplicates(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_ERROR("option '--memory' given twice", "--memory", "16M", "--memory",
               "2M", "b");
  EXPECT_ERROR("option '--profile' given twice", "-p", "a", "--profile", "b",
               "x");
  EXPECT_ERROR("option '--tenant' given twice", "--tenant", "a", "--tenant",
               "a", "b");
  EXPECT_ERROR("option '--digest' given twice", "--digest", "--digest", "b");
  EXPECT_ERROR("option '--verbose' given twice", "-v", "-v", "b");
  EXPECT_ERROR("option '--network' given twice", "--network", "deny",
               "--network", "allow", "b");
  /* --input is the one repeatable option. */
  EXPECT_OK(&a, "-i", "a", "-i", "b", "--input", "c", "bundle");
  assert_int_equal(a.n_inputs, 3);
  assert_string_equal(a.inputs[2].name, "c");
  sr_args_done(&a);
}

static void test_limits(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "--memory", "1G", "--log-cap", "0", "--timeout", "250ms",
            "--cpu-seconds", "1", "--pids", "4194304", "b");
  assert_int_equal(a.layer.limits[SR_LIM_MEMORY].value, 1ULL << 30);
  assert_true(a.layer.limits[SR_LIM_LOG_CAP].set);
  assert_int_equal(a.layer.limits[SR_LIM_LOG_CAP].value, 0);
  assert_int_equal(a.layer.limits[SR_LIM_TIMEOUT].value, 250);
  assert_int_equal(a.layer.limits[SR_LIM_CPU_SECONDS].value, 1);
  assert_int_equal(a.layer.limits[SR_LIM_PIDS].value, 4194304);
  sr_args_done(&a);

  EXPECT_OK(&a, "--timeout", "30s", "--memory", "16777216", "b");
  assert_int_equal(a.layer.limits[SR_LIM_TIMEOUT].value, 30000);
  assert_int_equal(a.layer.limits[SR_LIM_MEMORY].value, 16777216);
  sr_args_done(&a);

  EXPECT_ERROR("invalid --memory value 'lots'", "--memory", "lots", "b");
  EXPECT_ERROR("invalid --memory value '-1'", "--memory", "-1", "b");
  EXPECT_ERROR("invalid --memory value '0': must be more than 0", "--memory",
               "0", "b");
  /* Well formed but beyond any limit: not a typo, and not said to be. */
  EXPECT_ERROR("invalid --memory value '99999999999T': too large to be a "
               "limit",
               "--memory", "99999999999T", "b");
  EXPECT_ERROR("invalid --timeout value '5124095576030431h': too large",
               "--timeout", "5124095576030431h", "b");
  EXPECT_ERROR("invalid --log-cap value '1X'", "--log-cap", "1X", "b");
  EXPECT_ERROR("invalid --timeout value '5x'", "--timeout", "5x", "b");
  EXPECT_ERROR("invalid --timeout value '0'", "--timeout", "0", "b");
  EXPECT_ERROR("invalid --cpu-seconds value '1.5'", "--cpu-seconds", "1.5",
               "b");
  EXPECT_ERROR("invalid --cpu-seconds value '0'", "--cpu-seconds", "0", "b");
  EXPECT_ERROR("invalid --pids value '4194305'", "--pids", "4194305", "b");
  EXPECT_ERROR("invalid --pids value '+3'", "--pids", "+3", "b");
  EXPECT_ERROR("invalid --pids value ''", "--pids", "", "b");
  EXPECT_ERROR("invalid --network 'Allow': use deny, allowlist or host "
               "(allow is host)",
               "--network", "Allow", "b");
}

/* Every limit of the table the command line may set is an option --<name>
 * with its kind's syntax, and the others are not options at all. */
static void test_limit_table_options(void **state) {
  int flags = 0;

  (void)state;
  for (int id = 0; id < SR__LIM_MAX; id++) {
    const struct sr_limit_def *d = &sr_limit_defs[id];
    char opt[64], value[32], want[192];
    struct sr_args a;

    /* A value at or above every minimum (memory's 8 MiB, nofile's 16). */
    const uint64_t want_value = d->kind == SR_KIND_DURATION ? 1500
                                : d->kind == SR_KIND_SIZE   ? 16u << 20
                                                            : 17;

    snprintf(opt, sizeof(opt), "--%s", d->name);
    snprintf(value, sizeof(value), "%s",
             d->kind == SR_KIND_DURATION ? "1500ms"
             : d->kind == SR_KIND_SIZE   ? "16M"
                                         : "17");
    if (!sr_limit_settable(id, SR_SRC_FLAG)) {
      snprintf(want, sizeof(want), "unrecognized option '%s'", opt);
      EXPECT_ERROR(want, opt, value, "b");
      continue;
    }
    flags++;
    EXPECT_OK(&a, opt, value, "b");
    for (int other = 0; other < SR__LIM_MAX; other++)
      assert_int_equal(a.layer.limits[other].set, other == id);
    assert_int_equal(a.layer.limits[id].value, want_value);
    sr_args_done(&a);
    /* Below the minimum: a usage error, as a malformed value is. */
    if (d->min > 1) {
      char below[32], min[32];
      snprintf(below, sizeof(below), "%" PRIu64 "%s", d->min - 1,
               d->kind == SR_KIND_DURATION ? "ms" : "");
      sr_limit_format(d->kind, d->min, min, sizeof(min));
      snprintf(want, sizeof(want),
               "invalid %s value '%s': below the minimum %s", opt, below, min);
      EXPECT_ERROR(want, opt, below, "b");
    }
    snprintf(want, sizeof(want), "invalid %s value 'x'", opt);
    EXPECT_ERROR(want, opt, "x", "b");
    snprintf(want, sizeof(want), "option '%s' given twice", opt);
    EXPECT_ERROR(want, opt, value, opt, value, "b");
    /* Zero only where the table's minimum is zero. */
    if (d->min > 0) {
      snprintf(want, sizeof(want), "invalid %s value '0': must be more than 0",
               opt);
      EXPECT_ERROR(want, opt, "0", "b");
    } else {
      EXPECT_OK(&a, opt, "0", "b");
      assert_true(a.layer.limits[id].set);
      assert_int_equal(a.layer.limits[id].value, 0);
      sr_args_done(&a);
    }
  }
  assert_true(flags > 0); /* not vacuous */
}

static void test_ids(void **state) {
  struct sr_args a;
  char id64[65], id65[66];

  (void)state;
  memset(id64, 'a', 64);
  id64[64] = '\0';
  memset(id65, 'a', 65);
  id65[65] = '\0';
  EXPECT_OK(&a, "--tenant", id64, "--execution-id", "0.x_Y-z", "b");
  assert_string_equal(a.tenant, id64);
  assert_string_equal(a.execution_id, "0.x_Y-z");
  sr_args_done(&a);

  /* A run refuses an invalid id in its first stage, on the record (and so
   * does --explain a tenant): parsing keeps it as given and marks it. */
  EXPECT_OK(&a, "--tenant", "../x", "--execution-id", "", "b");
  assert_string_equal(a.tenant, "../x");
  assert_true(a.tenant_invalid);
  assert_string_equal(a.execution_id, "");
  assert_true(a.execution_id_invalid);
  sr_args_done(&a);
  assert_false(a.tenant_invalid);
  EXPECT_OK(&a, "--explain", "--tenant", "a..b", "b");
  assert_true(a.tenant_invalid);
  assert_false(a.execution_id_invalid);
  sr_args_done(&a);

  /* The other modes refuse it when parsing (123, not a usage error),
   * before saying that they do not take the option. */
  EXPECT_ERROR("x", "--digest", "--tenant", "../x", "b");
  assert_string_equal(err.msg,
                      "invalid tenant id '../x': use 1-64 of A-Z a-z 0-9 . _ "
                      "-, starting with a letter or digit, without '..'");
  EXPECT_ERROR("invalid tenant id", "--digest", "--tenant", id65, "b");
  EXPECT_ERROR("invalid tenant id", "--digest", "--tenant", "", "b");
  EXPECT_ERROR("invalid tenant id", "--gc", "--tenant", "-a");
  EXPECT_ERROR("invalid execution id 'a/b'", "--digest", "--execution-id",
               "a/b", "b");
  EXPECT_ERROR("invalid execution id", "--sign", "k", "--tier", "official",
               "--signature", "o", "--execution-id", "a..b", "b");
  EXPECT_ERROR("invalid execution id 'a..b'", "--explain", "--execution-id",
               "a..b", "b");

  /* The refusal shows only printable ASCII: it goes on the record too. */
  sr_error_clear(&err);
  assert_int_equal(sr_cli_id_refusal("tenant", "caf\xc3\xa9\x1b[0m", &err),
                   -EINVAL);
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, "invalid_id");
  assert_non_null(strstr(err.msg, "'caf???[0m'"));
}

static void test_sha256(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "--expect-sha256", HEX64, "b");
  assert_string_equal(a.expect_sha256, HEX64);
  sr_args_done(&a);
  EXPECT_ERROR("expected 64 lowercase hex digits", "--expect-sha256",
               "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcd"
               "ef",
               "b");
  EXPECT_ERROR("invalid --expect-sha256", "--expect-sha256", HEX64 "0", "b");
  EXPECT_ERROR("invalid --expect-sha256", "--expect-sha256", "sha256:", "b");
  EXPECT_ERROR("invalid --expect-sha256", "--expect-sha256", "sha512:" HEX64,
               "b");
}

static void test_audit_fd(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "--audit-fd", "1", "b");
  assert_int_equal(a.audit_fd, 1);
  sr_args_done(&a);
  EXPECT_OK(&a, "--audit-fd", "3", "b");
  assert_int_equal(a.audit_fd, 3);
  sr_args_done(&a);
  EXPECT_ERROR("invalid --audit-fd 0", "--audit-fd", "0", "b");
  EXPECT_ERROR("invalid --audit-fd 2", "--audit-fd", "2", "b");
  EXPECT_ERROR("invalid --audit-fd '-1'", "--audit-fd", "-1", "b");
  EXPECT_ERROR("invalid --audit-fd 'x'", "--audit-fd", "x", "b");
  EXPECT_ERROR("invalid --audit-fd '2147483648'", "--audit-fd", "2147483648",
               "b");
  EXPECT_ERROR("options '--audit-fd' and '--audit-file' cannot be combined",
               "--audit-fd", "3", "--audit-file", "x", "b");
  EXPECT_ERROR("option '--audit-file' needs a non-empty value", "--audit-file",
               "", "b");
}

static void test_inputs(void **state) {
  struct sr_args a;
  const char *v[2 + 2 * 65 + 1];
  char names[65][16];
  int n = 0;

  (void)state;
  EXPECT_OK(&a, "-i", "dir/sub/", "-i", "a:b:c.txt", "-i", "./rel", "b");
  assert_int_equal(a.n_inputs, 3);
  assert_string_equal(a.inputs[0].path, "dir/sub/");
  assert_string_equal(a.inputs[0].name, "sub");
  /* The split is at the last ':'. */
  assert_string_equal(a.inputs[1].path, "a:b");
  assert_string_equal(a.inputs[1].name, "c.txt");
  assert_string_equal(a.inputs[2].path, "./rel");
  assert_string_equal(a.inputs[2].name, "rel");
  sr_args_done(&a);

  EXPECT_ERROR("empty PATH", "-i", ":name", "b");
  /* An explicit NAME is the run's to check (and to record when refused):
   * one directory level is allowed, the rest is refused there. */
  EXPECT_OK(&a, "-i", "p:materials/x.pdf", "-i", "q:../x", "-i", "r:", "b");
  assert_string_equal(a.inputs[0].name, "materials/x.pdf");
  assert_string_equal(a.inputs[1].name, "../x");
  assert_string_equal(a.inputs[2].name, "");
  sr_args_done(&a);
  EXPECT_ERROR("no file name to use: give PATH:NAME", "-i", "/", "b");
  EXPECT_ERROR("no file name to use", "-i", "a/..", "b");
  /* A last component that is not a valid NAME is still the name, for the
   * run to refuse and record (skillrun(1): 123, input_rejected). */
  EXPECT_OK(&a, "-i", "d/up\nload", "-i", "d/up\tload", "b");
  assert_string_equal(a.inputs[0].name, "up\nload");
  assert_string_equal(a.inputs[1].name, "up\tload");
  sr_args_done(&a);
  EXPECT_ERROR("duplicate --input name 'x.txt'", "-i", "/a/x.txt", "-i",
               "/b/y:x.txt", "b");

  /* 64 inputs are fine, the 65th is refused. */
  v[n++] = "skillrun";
  for (int i = 0; i < 64; i++) {
    snprintf(names[i], sizeof(names[i]), "in%d", i);
    v[n++] = "-i";
    v[n++] = names[i];
  }
  v[n++] = "b";
  v[n] = NULL;
  assert_int_equal(parse_v(v, &a), 0);
  assert_int_equal(a.n_inputs, 64);
  assert_string_equal(a.inputs[63].name, "in63");
  sr_args_done(&a);
  snprintf(names[64], sizeof(names[64]), "in64");
  v[n - 1] = "-i";
  v[n++] = names[64];
  v[n++] = "b";
  v[n] = NULL;
  assert_int_equal(parse_v(v, &a), -EINVAL);
  assert_non_null(strstr(err.msg, "too many --input options (at most 64)"));
}

static void test_labels(void **state) {
  struct sr_args a;
  const char *v[2 + 2 * (SR_LABELS_MAX + 1) + 1];
  char kv[SR_LABELS_MAX + 1][32];
  char big[SR_LABEL_VALUE_MAX + 16];
  int n = 0;

  (void)state;
  EXPECT_OK(&a, "--label", "trace_id=4bf92f3577b34da6", "--label", "space=a=b",
            "--label", "principal=", "--label", "note=caf\xc3\xa9 \xe2\x9c\x93",
            "b");
  assert_int_equal(a.n_labels, 4);
  assert_string_equal(a.labels[0].key, "trace_id");
  assert_string_equal(a.labels[0].value, "4bf92f3577b34da6");
  /* Split at the first '=': the value keeps the others. */
  assert_string_equal(a.labels[1].key, "space");
  assert_string_equal(a.labels[1].value, "a=b");
  assert_string_equal(a.labels[2].value, "");
  assert_string_equal(a.labels[3].value, "caf\xc3\xa9 \xe2\x9c\x93");
  sr_args_done(&a);
  EXPECT_OK(&a, "--label", "parent.execution-id=x", "b");
  assert_string_equal(a.labels[0].key, "parent.execution-id");
  sr_args_done(&a);

  EXPECT_ERROR("invalid --label 'trace': expected KEY=VALUE", "--label",
               "trace", "b");
  EXPECT_ERROR("invalid --label key ''", "--label", "=v", "b");
  EXPECT_ERROR("invalid --label key 'Trace'", "--label", "Trace=v", "b");
  EXPECT_ERROR("invalid --label key '1x'", "--label", "1x=v", "b");
  EXPECT_ERROR("invalid --label key 'a b'", "--label", "a b=v", "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=a\nb", "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\x1b[31m", "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\xc2\x85", "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\xff", "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\xc0\xaf", "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\xed\xa0\x80",
               "b");
  /* RIGHT-TO-LEFT OVERRIDE, RIGHT-TO-LEFT ISOLATE, LINE SEPARATOR,
   * ARABIC LETTER MARK: refused as in an input's name. */
  EXPECT_ERROR("invalid --label value for 'k'", "--label",
               "k=abc\xe2\x80\xae"
               "fdp.exe",
               "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\xe2\x81\xa7x",
               "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label",
               "k=a\xe2\x80\xa8"
               "b",
               "b");
  EXPECT_ERROR("invalid --label value for 'k'", "--label", "k=\xd8\x9c", "b");
  EXPECT_ERROR("duplicate --label key 'k'", "--label", "k=1", "--label", "k=2",
               "b");
  EXPECT_ERROR("option '--label' has no effect with '--explain'", "--label",
               "k=v", "--explain", "b");
  EXPECT_ERROR("option '--label' has no effect with '--metrics'", "--label",
               "k=v", "--metrics");

  /* The key's and the value's bounds, exactly. */
  memset(big, 'k', 63);
  big[63] = '\0';
  {
    char arg[sizeof(big) + 4];
    snprintf(arg, sizeof(arg), "%s=v", big);
    EXPECT_OK(&a, "--label", arg, "b");
    sr_args_done(&a);
    snprintf(arg, sizeof(arg), "%sk=v", big);
    EXPECT_ERROR("invalid --label key", "--label", arg, "b");
  }
  big[0] = 'v';
  big[1] = '=';
  memset(big + 2, 'x', SR_LABEL_VALUE_MAX);
  big[2 + SR_LABEL_VALUE_MAX] = '\0';
  EXPECT_OK(&a, "--label", big, "b");
  assert_int_equal(strlen(a.labels[0].value), SR_LABEL_VALUE_MAX);
  sr_args_done(&a);
  big[2 + SR_LABEL_VALUE_MAX] = 'x';
  big[3 + SR_LABEL_VALUE_MAX] = '\0';
  EXPECT_ERROR("invalid --label value for 'v'", "--label", big, "b");

  /* SR_LABELS_MAX labels are fine, one more is refused. */
  v[n++] = "skillrun";
  for (int i = 0; i < SR_LABELS_MAX; i++) {
    snprintf(kv[i], sizeof(kv[i]), "k%d=v", i);
    v[n++] = "--label";
    v[n++] = kv[i];
  }
  v[n++] = "b";
  v[n] = NULL;
  assert_int_equal(parse_v(v, &a), 0);
  assert_int_equal(a.n_labels, SR_LABELS_MAX);
  sr_args_done(&a);
  snprintf(kv[SR_LABELS_MAX], sizeof(kv[0]), "k%d=v", SR_LABELS_MAX);
  v[n - 1] = "--label";
  v[n++] = kv[SR_LABELS_MAX];
  v[n++] = "b";
  v[n] = NULL;
  assert_int_equal(parse_v(v, &a), -EINVAL);
  assert_non_null(strstr(err.msg, "too many --label options"));
}

static void test_modes(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "--digest", "b");
  assert_int_equal(a.mode, SR_MODE_DIGEST);
  sr_args_done(&a);
  EXPECT_OK(&a, "--digest", "-v", "b");
  assert_int_equal(a.mode, SR_MODE_DIGEST);
  assert_true(a.verbose);
  sr_args_done(&a);
  EXPECT_OK(&a, "b", "--explain", "--", "sh");
  assert_int_equal(a.mode, SR_MODE_EXPLAIN);
  assert_string_equal(a.command[0], "sh");
  sr_args_done(&a);
  EXPECT_OK(&a, "--verify-audit", "audit.jsonl");
  assert_int_equal(a.mode, SR_MODE_VERIFY_AUDIT);
  assert_string_equal(a.verify_audit, "audit.jsonl");
  assert_null(a.bundle);
  sr_args_done(&a);
  EXPECT_OK(&a, "--gc", "--workspace-root", "/srv/runs");
  assert_int_equal(a.mode, SR_MODE_GC);
  assert_string_equal(a.workspace_root, "/srv/runs");
  sr_args_done(&a);
  EXPECT_OK(&a, "--metrics", "--workspace-root", "/srv/runs");
  assert_int_equal(a.mode, SR_MODE_METRICS);
  assert_string_equal(a.workspace_root, "/srv/runs");
  sr_args_done(&a);
  EXPECT_OK(&a, "--help");
  assert_int_equal(a.mode, SR_MODE_HELP);
  sr_args_done(&a);
  EXPECT_OK(&a, "-h");
  assert_int_equal(a.mode, SR_MODE_HELP);
  sr_args_done(&a);
  EXPECT_OK(&a, "--version");
  assert_int_equal(a.mode, SR_MODE_VERSION);
  sr_args_done(&a);
  EXPECT_OK(&a, "-V");
  assert_int_equal(a.mode, SR_MODE_VERSION);
  sr_args_done(&a);

  /* Mutually exclusive, in every order that matters. */
  EXPECT_ERROR("options '--digest' and '--explain' cannot be combined",
               "--digest", "--explain", "b");
  EXPECT_ERROR("options '--explain' and '--digest' cannot be combined",
               "--explain", "--digest", "b");
  EXPECT_ERROR("cannot be combined", "--gc", "--verify-audit", "f");
  EXPECT_ERROR("cannot be combined", "--help", "--version");
  EXPECT_ERROR("cannot be combined", "-h", "--digest", "b");
  EXPECT_ERROR("cannot be combined", "-V", "--gc");

  /* BUNDLE required or forbidden. */
  EXPECT_ERROR("missing BUNDLE", "--memory", "16M");
  EXPECT_ERROR("missing BUNDLE", "--digest");
  EXPECT_ERROR("missing BUNDLE", "--explain");
  EXPECT_ERROR("option '--gc' takes no BUNDLE (got 'b')", "--gc", "b");
  EXPECT_ERROR("option '--metrics' takes no BUNDLE", "--metrics", "b");
  EXPECT_ERROR("cannot be combined", "--metrics", "--gc");
  EXPECT_ERROR("option '--verify-audit' takes no BUNDLE", "--verify-audit", "f",
               "b");
  EXPECT_ERROR("option '--help' takes no BUNDLE", "--help", "b");
  EXPECT_ERROR("option '--version' takes no BUNDLE", "b", "-V");
  EXPECT_ERROR("option '--verify-audit' requires an argument",
               "--verify-audit");

  /* Modes that run nothing take no command. */
  EXPECT_ERROR("option '--digest' takes no command", "--digest", "b", "--",
               "sh");
  EXPECT_ERROR("option '--gc' takes no command", "--gc", "--", "sh");
  EXPECT_ERROR("option '--metrics' takes no command", "--metrics", "--", "sh");
}

/*
 * Each mode takes the options it reads and refuses every other one with
 * one line naming the option and the mode: an option that would do
 * nothing is never accepted silently.  Written out here, not derived from
 * cli.c's table, so that a change to either shows.
 */
static const struct {
  const char *name;  /* as given */
  const char *value; /* NULL: a flag */
  const char *shown; /* the name the message uses */
} every_option[] = {
    {"-p", "strict", "--profile"},
    {"--profile", "strict", "--profile"},
    {"--conf", "/etc/x.conf", "--conf"},
    {"--expect-sha256", HEX64, "--expect-sha256"},
    {"--signature", "b.sig", "--signature"},
    {"--capability", "t.cap", "--capability"},
    {"--capability-fd", "5", "--capability-fd"},
    {"--tenant", "acme", "--tenant"},
    {"--execution-id", "run-1", "--execution-id"},
    {"--label", "k=v", "--label"},
    {"-i", "/tmp/in.csv", "--input"},
    {"--input", "/tmp/in.csv", "--input"},
    {"--workspace-root", "/srv/runs", "--workspace-root"},
    {"--cgroup-parent", "/sys/fs/cgroup/s", "--cgroup-parent"},
    {"--memory", "256M", "--memory"},
    {"--cpu-seconds", "30", "--cpu-seconds"},
    {"--timeout", "5s", "--timeout"},
    {"--pids", "64", "--pids"},
    {"--log-cap", "1M", "--log-cap"},
    {"--network", "deny", "--network"},
    {"--audit-fd", "5", "--audit-fd"},
    {"--audit-file", "/tmp/a.jsonl", "--audit-file"},
    {"--log-passthrough", NULL, "--log-passthrough"},
    {"--stdin", NULL, "--stdin"},
    {"--tier", "community", "--tier"},
    {"--audit-key", "pub.pem", "--audit-key"},
    {"-v", NULL, "--verbose"},
    {"--verbose", NULL, "--verbose"},
};

static const struct {
  const char *name;    /* the mode's option, as messages name it */
  const char *base[9]; /* a valid command line of the mode */
  const char *takes;   /* " --a --b ": the options it reads */
} every_mode[] = {
    {NULL,
     {"b"},
     " --profile --conf --expect-sha256 --signature --capability "
     "--capability-fd --tenant --execution-id --label --input "
     "--workspace-root --cgroup-parent --memory --cpu-seconds --timeout "
     "--pids --log-cap --network --audit-fd --audit-file --log-passthrough "
     "--stdin --verbose "},
    {"--explain",
     {"--explain", "b"},
     " --profile --conf --expect-sha256 --signature --tenant "
     "--workspace-root --memory --cpu-seconds --timeout --pids --log-cap "
     "--network --stdin "},
    {"--digest", {"--digest", "b"}, " --expect-sha256 --verbose "},
    {"--verify-audit", {"--verify-audit", "a.jsonl"}, " --audit-key "},
    {"--gc", {"--gc"}, " --conf --workspace-root --cgroup-parent "},
    {"--metrics", {"--metrics"}, " --conf --workspace-root "},
    /* --tier, --tenant and --signature are in its command line. */
    {"--sign",
     {"--sign", "k.pem", "--tier", "tenant", "--tenant", "acme", "--signature",
      "o.sig", "b"},
     " --tier --tenant --signature "},
    {"--help", {"--help"}, " "},
    {"--help", {"-h"}, " "},
    {"--version", {"--version"}, " "},
    {"--version", {"-V"}, " "},
};

static void test_mode_options(void **state) {
  unsigned bad = 0; /* every wrong answer is listed, then the test fails */

  (void)state;
  for (size_t m = 0; m < SR_ARRAY_SIZE(every_mode); m++) {
    const char *v[16];
    size_t nb = 0;
    struct sr_args a;

    v[0] = "skillrun";
    while (nb < SR_ARRAY_SIZE(every_mode[m].base) && every_mode[m].base[nb]) {
      v[1 + nb] = every_mode[m].base[nb];
      nb++;
    }
    v[1 + nb] = NULL;
    assert_int_equal(parse_v(v, &a), 0);
    sr_args_done(&a);

    for (size_t o = 0; o < SR_ARRAY_SIZE(every_option); o++) {
      char word[64], want[160];
      size_t n = 1 + nb;
      bool takes, in_base = false;
      int r;

      snprintf(word, sizeof(word), " %s ", every_option[o].shown);
      takes = strstr(every_mode[m].takes, word) != NULL;
      for (size_t i = 0; i < nb; i++)
        in_base |= !strcmp(every_mode[m].base[i], every_option[o].name);
      if (in_base)
        continue; /* given twice is another error */
      v[n++] = every_option[o].name;
      if (every_option[o].value)
        v[n++] = every_option[o].value;
      v[n] = NULL;
      r = parse_v(v, &a);
      if (takes && r != 0) {
        print_message("%s %s: refused (%s)\n", every_mode[m].base[0],
                      every_option[o].name, err.msg);
        bad++;
      }
      if (r == 0)
        sr_args_done(&a);
      if (takes)
        continue;
      if (r == 0) {
        print_message("%s %s: accepted, and the mode does not read it\n",
                      every_mode[m].base[0], every_option[o].name);
        bad++;
        continue;
      }
      if (every_mode[m].name)
        snprintf(want, sizeof(want), "option '%s' has no effect with '%s'",
                 every_option[o].shown, every_mode[m].name);
      else
        snprintf(want, sizeof(want), "option '%s' is only used with '--",
                 every_option[o].shown);
      if (!strstr(err.msg, want) || err.exit_code != SR_EXIT_FAILED) {
        print_message("%s %s: message '%s' (exit %d) lacks '%s'\n",
                      every_mode[m].base[0], every_option[o].name, err.msg,
                      err.exit_code, want);
        bad++;
      }
    }
  }
  assert_int_equal(bad, 0);

  /* A run names the modes that read what it does not. */
  EXPECT_ERROR("option '--tier' is only used with '--sign'", "--tier",
               "official", "b");
  EXPECT_ERROR("option '--audit-key' is only used with '--verify-audit'",
               "--audit-key", "k", "b");
  /* Whatever the order on the command line. */
  EXPECT_ERROR("option '--timeout' has no effect with '--digest'", "--timeout",
               "5s", "b", "--digest");
  EXPECT_ERROR("option '--memory' has no effect with '--gc'", "--memory",
               "256M", "--gc");
}

static void test_positionals(void **state) {
  (void)state;
  EXPECT_ERROR("unexpected argument 'c'", "b", "c");
  EXPECT_ERROR("unexpected argument 'sh'", "b", "--memory", "16M", "sh", "--",
               "x");
  EXPECT_ERROR("BUNDLE must not be empty", "");
  EXPECT_ERROR("missing BUNDLE", "-v");
  EXPECT_ERROR("option '--profile' needs a non-empty value", "-p", "", "b");
}

static void test_no_argv(void **state) {
  struct sr_args a;
  char *const none[] = {NULL};

  (void)state;
  memset(&err, 0, sizeof(err));
  assert_int_equal(sr_cli_parse(0, none, &a, &err), -EINVAL);
  assert_string_equal(err.msg, "missing BUNDLE");
  sr_args_done(&a);
}

static void test_error_messages_are_sanitised(void **state) {
  char longv[300];

  (void)state;
  EXPECT_ERROR("invalid --memory value '?[31mX?'", "--memory", "\x1b[31mX\n",
               "b");
  for (const char *c = err.msg; *c; c++)
    assert_false((unsigned char)*c < 0x20);

  memset(longv, 'z', sizeof(longv) - 1);
  longv[sizeof(longv) - 1] = '\0';
  EXPECT_ERROR("...'", "--network", longv, "b");
  assert_true(strlen(err.msg) < 200);
}

static void test_repeated_calls(void **state) {
  struct sr_args a, b;

  (void)state;
  /* Two live results at once: nothing is shared between them. */
  EXPECT_OK(&a, "--memory", "16M", "one", "--", "x");
  EXPECT_OK(&b, "--pids", "5", "two");
  assert_string_equal(a.bundle, "one");
  assert_string_equal(b.bundle, "two");
  assert_true(a.layer.limits[SR_LIM_MEMORY].set);
  assert_false(a.layer.limits[SR_LIM_PIDS].set);
  assert_false(b.layer.limits[SR_LIM_MEMORY].set);
  assert_true(b.layer.limits[SR_LIM_PIDS].set);
  assert_int_equal(b.n_command, 0);
  sr_args_done(&a);
  sr_args_done(&b);

  for (int i = 0; i < 3; i++) {
    EXPECT_ERROR("unrecognized option '-q'", "-vq", "b");
    EXPECT_OK(&a, "-v", "b", "-i", "f");
    assert_true(a.verbose);
    assert_int_equal(a.n_inputs, 1);
    sr_args_done(&a);
  }
}

static void test_free_is_idempotent(void **state) {
  struct sr_args a;

  (void)state;
  EXPECT_OK(&a, "-i", "x", "b", "--", "c");
  sr_args_done(&a);
  assert_null(a.bundle);
  assert_null(a.inputs);
  assert_null(a.command);
  assert_int_equal(a.n_command, 0);
  assert_int_equal(a.layer.network, SR_NET_UNSET);
  assert_int_equal(a.audit_fd, -1);
  sr_args_done(&a); /* must be harmless */
  sr_args_done(NULL);
}

static char *capture(void (*fn)(FILE *)) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);

  assert_non_null(f);
  fn(f);
  assert_int_equal(fclose(f), 0);
  assert_non_null(buf);
  return buf;
}

/* --sign/--tier, --capability(-fd), --audit-key and their combinations. */
static void test_trust_options(void **state) {
  struct sr_args a;
  (void)state;

  assert_int_equal(PARSE(&a, "--sign", "k.pem", "--tier", "official",
                         "--signature", "out.sig", "b"),
                   0);
  assert_int_equal(a.mode, SR_MODE_SIGN);
  assert_string_equal(a.sign_key, "k.pem");
  assert_string_equal(a.tier, "official");
  assert_string_equal(a.signature, "out.sig");
  assert_string_equal(a.bundle, "b");
  sr_args_done(&a);

  assert_int_equal(PARSE(&a, "--sign", "k.pem", "--signature", "o", "b"),
                   -EINVAL);
  assert_non_null(strstr(err.msg, "--tier"));
  assert_int_equal(PARSE(&a, "--sign", "k.pem", "--tier", "official", "b"),
                   -EINVAL);
  assert_int_equal(
      PARSE(&a, "--sign", "k", "--tier", "gold", "--signature", "o", "b"),
      -EINVAL);
  assert_non_null(strstr(err.msg, "invalid --tier 'gold'"));
  assert_int_equal(PARSE(&a, "--tier", "official", "b"), -EINVAL);
  assert_int_equal(PARSE(&a, "--sign", "k", "--tier", "tenant", "--signature",
                         "o", "--digest", "b"),
                   -EINVAL);
  assert_int_equal(
      PARSE(&a, "--sign", "k", "--tier", "tenant", "--signature", "o"),
      -EINVAL); /* missing BUNDLE */
  /* A tenant-tier statement names its tenant: --tenant with --tier tenant,
   * and only then. */
  assert_int_equal(PARSE(&a, "--sign", "k", "--tier", "tenant", "--tenant",
                         "acme", "--signature", "o", "b"),
                   0);
  assert_string_equal(a.tenant, "acme");
  sr_args_done(&a);
  EXPECT_ERROR("option '--tier tenant' needs '--tenant ID'", "--sign", "k",
               "--tier", "tenant", "--signature", "o", "b");
  EXPECT_ERROR("option '--tenant' with '--sign' is only used with '--tier "
               "tenant'",
               "--sign", "k", "--tier", "community", "--tenant", "acme",
               "--signature", "o", "b");

  assert_int_equal(PARSE(&a, "--capability", "t.cap", "b"), 0);
  assert_string_equal(a.capability, "t.cap");
  assert_int_equal(a.capability_fd, -1);
  sr_args_done(&a);
  assert_int_equal(a.capability_fd, -1);
  assert_int_equal(PARSE(&a, "--capability-fd", "7", "b"), 0);
  assert_int_equal(a.capability_fd, 7);
  assert_null(a.capability);
  sr_args_done(&a);
  assert_int_equal(PARSE(&a, "--capability-fd", "2", "b"), -EINVAL);
  assert_int_equal(PARSE(&a, "--capability-fd", "x", "b"), -EINVAL);
  assert_int_equal(PARSE(&a, "--capability", "t", "--capability-fd", "5", "b"),
                   -EINVAL);
  assert_int_equal(PARSE(&a, "--capability", "t", "--digest", "b"), -EINVAL);

  assert_int_equal(
      PARSE(&a, "--verify-audit", "a.jsonl", "--audit-key", "pub.pem"), 0);
  assert_string_equal(a.audit_key, "pub.pem");
  sr_args_done(&a);
  assert_int_equal(PARSE(&a, "--audit-key", "pub.pem", "b"), -EINVAL);
  assert_non_null(strstr(err.msg, "--verify-audit"));
}

static void test_help_text(void **state) {
  char *text = capture(sr_cli_help);
  size_t lines = 0, width = 0;

  (void)state;
  /* 80 columns, except the lines that name a configured directory, which
   * a distribution (or distcheck's long prefix) makes what it is. */
  for (const char *c = text; *c; c++) {
    if (*c == '\n') {
      lines++;
      width = 0;
    } else {
      const char *bol = c - width, *eol = strchrnul(c, '\n');
      size_t n = (size_t)(eol - bol);
      bool has_path =
          memmem(bol, n, SR_SYSCONFDIR, strlen(SR_SYSCONFDIR)) ||
          memmem(bol, n, SR_LOCALSTATEDIR, strlen(SR_LOCALSTATEDIR));
      width++;
      assert_true(width <= 80 || has_path);
    }
  }
  assert_true(lines >= 25);
  /* The short help plus one line per option; the details are skillrun(1)'s.
   * 44: room for --stdin and the run-labelling options of this round. */
  assert_true(lines <= 44);
  /* The directories of this build: the conf and root's runs. */
  assert_non_null(strstr(text, SR_SYSCONFDIR "/skillrun/skillrun.conf"));
  assert_non_null(strstr(text, SR_LOCALSTATEDIR "/lib/skillrun/runs"));
  assert_true(strncmp(text, "Usage: skillrun [OPTION]... BUNDLE", 34) == 0);
  /* Every option the parser knows is documented, and the exit statuses. */
  {
    static const char *const opts[] = {
        "-p, --profile",
        "--conf",
        "--expect-sha256",
        "--signature",
        "--tenant",
        "--execution-id",
        "-i, --input",
        "--workspace-root",
        "--cgroup-parent",
        "--memory",
        "--cpu-seconds",
        "--timeout",
        "--pids",
        "--log-cap",
        "--network MODE",
        "--audit-fd",
        "--audit-file",
        "--log-passthrough",
        "--digest",
        "--explain",
        "--verify-audit",
        "--gc",
        "--metrics",
        "--label KEY=VALUE",
        "--capability FILE",
        "--capability-fd N",
        "--audit-key PUBKEY",
        "--sign KEY",
        "--tier TIER",
        "-v, --verbose",
        "-h, --help",
        "-V, --version",
        "123",
        "124",
        "125",
        "126/127",
        "128+N",
        "skillrun(1)",
    };
    for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
      if (!strstr(text, opts[i]))
        fail_msg("--help lacks '%s'", opts[i]);
  }
  /* One aligned line per flag-settable limit, in the table's words. */
  for (int id = 0; id < SR__LIM_MAX; id++) {
    const struct sr_limit_def *d = &sr_limit_defs[id];
    char line[160], opt[64];

    if (!sr_limit_settable(id, SR_SRC_FLAG))
      continue;
    snprintf(opt, sizeof(opt), "%s %s", d->name, sr_limit_metavar(d->kind));
    assert_true(strlen(opt) <= 18); /* two blanks before the help text */
    snprintf(line, sizeof(line), "\n      --%-20s%s\n", opt, d->help);
    if (!strstr(text, line))
      fail_msg("--help lacks the line '%s'", line + 1);
  }
  free(text);
}

static void test_version_text(void **state) {
  char *text = capture(sr_cli_version);
  static const char *const libs[] = {
      "\nlibseccomp ", "\nlibcap ",  "\nlibmnl ",       "\nOpenSSL ",
      "\nlibyaml ",    "\njansson ", "\nlibunistring ",
  };

  (void)state;
  assert_true(strncmp(text, "skillrun " PACKAGE_VERSION "\n",
                      strlen("skillrun " PACKAGE_VERSION "\n")) == 0);
  for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
    if (!strstr(text, libs[i]))
      fail_msg("--version lacks '%s'", libs[i] + 1);
  /* Versions are real numbers, not placeholders. */
  assert_non_null(strstr(text, "libseccomp 2."));
  assert_null(strstr(text, "libseccomp 0.0"));
  assert_non_null(strstr(text, "libcap 2."));
  assert_non_null(strstr(text, "loaded file libmnl.so."));
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_limit_table_options),
      cmocka_unit_test(test_every_option),
      cmocka_unit_test(test_short_options),
      cmocka_unit_test(test_dashdash_passthrough),
      cmocka_unit_test(test_options_after_bundle),
      cmocka_unit_test(test_getopt_errors),
      cmocka_unit_test(test_duplicates),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_ids),
      cmocka_unit_test(test_sha256),
      cmocka_unit_test(test_audit_fd),
      cmocka_unit_test(test_inputs),
      cmocka_unit_test(test_labels),
      cmocka_unit_test(test_modes),
      cmocka_unit_test(test_mode_options),
      cmocka_unit_test(test_positionals),
      cmocka_unit_test(test_no_argv),
      cmocka_unit_test(test_error_messages_are_sanitised),
      cmocka_unit_test(test_repeated_calls),
      cmocka_unit_test(test_free_is_idempotent),
      cmocka_unit_test(test_trust_options),
      cmocka_unit_test(test_help_text),
      cmocka_unit_test(test_version_text),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
