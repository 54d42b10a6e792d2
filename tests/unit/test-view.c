/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox view (src/view.c): the table mount.c walks, what --explain
 * renders from it (policy.c), and the destinations a profile may not bind
 * onto.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "error.h"
#include "policy.h"
#include "util.h"
#include "view.h"

/* A policy with builtin caps and the profile text. */
static void build(struct sr_policy *p, const char *profile) {
  struct sr_error err = {0};
  struct sr_conf c = {0};

  assert_int_equal(sr_policy_init(p), 0);
  if (sr_conf_parse_buffer(profile, strlen(profile), "t.profile", &c, &err) < 0)
    fail_msg("parse: %s", err.msg);
  if (sr_policy_apply_profile(p, &c, &err) < 0)
    fail_msg("profile: %s", err.msg);
  sr_conf_done(&c);
}

/* Applying the profile text fails with exactly `want` (file:line). */
static void expect_refused(const char *profile, const char *want) {
  struct sr_policy p;
  struct sr_error err = {0};
  struct sr_conf c = {0};

  assert_int_equal(sr_policy_init(&p), 0);
  if (sr_conf_parse_buffer(profile, strlen(profile), "t.profile", &c, &err) < 0)
    fail_msg("parse: %s", err.msg);
  if (sr_policy_apply_profile(&p, &c, &err) >= 0)
    fail_msg("'%s' was accepted, expected '%s'", profile, want);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_string_equal(err.reason, "config_invalid");
  if (strcmp(err.msg, want) != 0)
    fail_msg("got '%s', want '%s'", err.msg, want);
  sr_conf_done(&c);
  sr_policy_done(&p);
}

static bool strictly_inside(const char *path, const char *dir) {
  return strcmp(path, dir) != 0 && sr_path_at_or_below(path, dir);
}

/* The shape mount.c relies on. */
static void test_table(void **state) {
  size_t n_binds = 0;
  (void)state;

  assert_true(sr_view_len > 0);
  assert_int_equal(sr_view[0].type, SR_VIEW_ROOT);
  assert_string_equal(sr_view[0].dst, "/");
  for (size_t i = 0; i < sr_view_len; i++) {
    const struct sr_view_entry *e = &sr_view[i];

    if (e->type == SR_VIEW_PROFILE_BINDS) {
      assert_null(e->dst);
      n_binds++;
      continue;
    }
    if (!sr_valid_abs_path(e->dst))
      fail_msg("entry %zu: '%s' is not a valid absolute path", i, e->dst);
    if (i > 0 && e->type == SR_VIEW_ROOT)
      fail_msg("%s: only the first entry is the root", e->dst);
    for (size_t k = 0; k < sr_view_len; k++) {
      const struct sr_view_entry *o = &sr_view[k];

      if (k == i || !o->dst)
        continue;
      if (!strcmp(o->dst, e->dst))
        fail_msg("%s is listed twice", e->dst);
      /* Parents first: an entry is built inside one built before it. */
      if (k > i && strictly_inside(e->dst, o->dst) && o->type != SR_VIEW_ROOT)
        fail_msg("%s comes before %s, which holds it", e->dst, o->dst);
    }
    if (e->source == SR_VIEW_SRC_HOST && !sr_valid_abs_path(e->host))
      fail_msg("%s: host source '%s' is not a valid path", e->dst,
               e->host ? e->host : "(null)");
    if ((e->type == SR_VIEW_BIND || e->type == SR_VIEW_BIND_OR_SYMLINK) &&
        (e->source == SR_VIEW_SRC_NONE || !e->ro))
      fail_msg("%s: a bind needs a source and is read-only", e->dst);
    if (e->type == SR_VIEW_TMPFS &&
        (sr_limit_by_name(e->size_limit) < 0 ||
         sr_limit_defs[sr_limit_by_name(e->size_limit)].kind != SR_KIND_SIZE ||
         e->mode == 0))
      fail_msg("%s: a tmpfs needs a size limit and a mode", e->dst);
    if (e->type != SR_VIEW_TMPFS && e->size_limit)
      fail_msg("%s: only a tmpfs entry has a size limit", e->dst);
  }
  assert_int_equal(n_binds, 1);
}

/* Whatever skillrun builds is no place for a profile bind: every entry
 * claims its own destination. */
static void test_entries_claim_themselves(void **state) {
  (void)state;

  for (size_t i = 0; i < sr_view_len; i++) {
    const char *tree = NULL;

    if (!sr_view[i].dst)
      continue;
    if (sr_view_claims(sr_view[i].dst, &tree) == SR_VIEW_RESERVE_NONE)
      fail_msg("%s is built by skillrun but free to bind onto", sr_view[i].dst);
  }
  for (int f = 0; f < SR__ETC_MAX; f++) {
    char path[64];

    snprintf(path, sizeof(path), "/etc/%s", sr_view_etc[f].name);
    if (sr_view_etc[f].kind == SR_VIEW_ETC_IF_HOST_NETWORK)
      continue;
    assert_int_equal(sr_view_claims(path, NULL), SR_VIEW_RESERVE_AT);
    assert_true(sr_view_etc_claims(path));
  }
}

/* The bundle's directory carries the skill's name, or "bundle" for a name
 * that is no path component. */
static void test_skill_dir(void **state) {
  char buf[SR_VIEW_SKILL_DIR_MAX], big[300];

  (void)state;
  assert_int_equal(sr_view_skill_dir("pdf", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "/workspace/skills/pdf");
  assert_int_equal(sr_view_skill_dir("caf\xc3\xa9", buf, sizeof(buf)), 0);
  assert_string_equal(buf, "/workspace/skills/caf\xc3\xa9");
  assert_int_equal(sr_view_skill_dir(NULL, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "/workspace/skills/bundle");
  memset(big, 'a', 256);
  big[256] = '\0';
  assert_int_equal(sr_view_skill_dir(big, buf, sizeof(buf)), 0);
  assert_string_equal(buf, "/workspace/skills/bundle");
  big[255] = '\0';
  assert_int_equal(sr_view_skill_dir(big, buf, sizeof(buf)), 0);
  assert_int_equal(strlen(buf), strlen("/workspace/skills/") + 255);
  assert_int_equal(sr_view_skill_dir("pdf", buf, 10), -ENAMETOOLONG);
}

static void test_claims(void **state) {
  static const struct {
    const char *dst;
    enum sr_view_reserve want;
    const char *tree;
  } cases[] = {
      {"/", SR_VIEW_RESERVE_AT, NULL},
      {"/etc", SR_VIEW_RESERVE_AT, NULL},
      {"/usr", SR_VIEW_RESERVE_AT, NULL},
      {"/bin", SR_VIEW_RESERVE_AT, NULL},
      {"/lib64", SR_VIEW_RESERVE_AT, NULL},
      {"/libx32", SR_VIEW_RESERVE_AT, NULL},
      {"/etc/passwd", SR_VIEW_RESERVE_AT, NULL},
      {"/etc/hostname", SR_VIEW_RESERVE_AT, NULL},
      {"/etc/ld.so.cache", SR_VIEW_RESERVE_AT, NULL},
      {"/tmp", SR_VIEW_RESERVE_TREE, "/tmp"},
      {"/tmp/x", SR_VIEW_RESERVE_TREE, "/tmp"},
      {"/dev/shm", SR_VIEW_RESERVE_TREE, "/dev"},
      {"/proc/sys", SR_VIEW_RESERVE_TREE, "/proc"},
      {"/workspace", SR_VIEW_RESERVE_TREE, "/workspace"},
      {"/workspace/x", SR_VIEW_RESERVE_TREE, "/workspace"},
      {"/workspace/inputs/bundle/x", SR_VIEW_RESERVE_TREE, "/workspace"},
      {"/workspace/skills/x/y", SR_VIEW_RESERVE_TREE, "/workspace"},
      {"/oldroot", SR_VIEW_RESERVE_TREE, "/oldroot"},
      {"/newroot/x", SR_VIEW_RESERVE_TREE, "/newroot"},
      /* Below a host tree, beside a built one, or a host file of /etc. */
      {"/opt", SR_VIEW_RESERVE_NONE, NULL},
      {"/usr/local/tool", SR_VIEW_RESERVE_NONE, NULL},
      {"/etc/alternatives", SR_VIEW_RESERVE_NONE, NULL},
      {"/etc/resolv.conf", SR_VIEW_RESERVE_NONE, NULL},
      {"/etc/passwd.d", SR_VIEW_RESERVE_NONE, NULL},
      {"/tmpdata", SR_VIEW_RESERVE_NONE, NULL},
      {"/workspaces", SR_VIEW_RESERVE_NONE, NULL},
  };
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
    const char *tree = NULL;
    enum sr_view_reserve got = sr_view_claims(cases[i].dst, &tree);

    if (got != cases[i].want)
      fail_msg("%s: claimed %d, want %d", cases[i].dst, got, cases[i].want);
    if (cases[i].tree && (!tree || strcmp(tree, cases[i].tree) != 0))
      fail_msg("%s: inside %s, want %s", cases[i].dst, tree ? tree : "(null)",
               cases[i].tree);
  }
}

/* Every entry of the view inside /workspace/inputs is a name no --input
 * may take (sr_input_name_check), nor anything below it: an input there
 * would be shadowed by the mount, or collide with it. */
static void test_inputs_reserved(void **state) {
  const char *prefix = "/workspace/inputs/", *why;
  size_t n = strlen(prefix), found = 0;
  char below[512];
  (void)state;

  for (size_t i = 0; i < sr_view_len; i++) {
    const char *dst = sr_view[i].dst;
    if (!dst || strncmp(dst, prefix, n) != 0)
      continue;
    found++;
    if (sr_input_name_check(dst + n, &why) == 0)
      fail_msg("--input NAME %s is not refused", dst + n);
    snprintf(below, sizeof(below), "%s/x", dst + n);
    assert_int_equal(sr_input_name_check(below, &why), -EINVAL);
  }
  assert_true(found >= 1); /* the bundle */
}

static void test_etc_claims(void **state) {
  (void)state;

  assert_true(sr_view_etc_claims("/etc/passwd"));
  assert_true(sr_view_etc_claims("/etc/group"));
  assert_true(sr_view_etc_claims("/etc/hosts"));
  assert_true(sr_view_etc_claims("/etc/hostname"));
  assert_true(sr_view_etc_claims("/etc/nsswitch.conf"));
  assert_true(sr_view_etc_claims("/etc/ld.so.cache"));
  /* Bound from the host as an etc-file line would: a profile may ask. */
  assert_false(sr_view_etc_claims("/etc/resolv.conf"));
  assert_false(sr_view_etc_claims("/etc/localtime"));
  assert_false(sr_view_etc_claims("/etc/hosts.allow"));
  assert_false(sr_view_etc_claims("/etc/passwdqc.conf"));
}

/* The profile parser refuses what the view claims, with file:line. */
static void test_profile_refusals(void **state) {
  (void)state;

  expect_refused("bind-ro /opt /usr\n",
                 "t.profile:1: bind-ro: destination /usr is built by skillrun");
  expect_refused(
      "bind-ro-try /srv/x /etc/hostname\n",
      "t.profile:1: bind-ro-try: destination /etc/hostname is built by "
      "skillrun");
  expect_refused("bind-ro /opt /oldroot/x\n",
                 "t.profile:1: bind-ro: destination /oldroot/x is inside "
                 "/oldroot, which skillrun builds");
  expect_refused("etc-file-try hostname\n",
                 "t.profile:1: etc-file-try: /etc/hostname may not be copied "
                 "into the sandbox");
}

/* --explain's "mounts" (policy.c renders the view), exactly as skillrun
 * 0.1.0 printed it. */
static void test_to_json(void **state) {
  static const char want[] =
      "[{\"dst\":\"/\",\"optional\":false,\"ro\":true,\"src\":null,"
      "\"type\":\"tmpfs\"},"
      "{\"dst\":\"/usr\",\"optional\":false,\"ro\":true,\"src\":\"/usr\","
      "\"type\":\"bind\"},"
      "{\"dst\":\"/bin\",\"optional\":false,\"ro\":true,\"src\":\"/bin\","
      "\"type\":\"bind-or-symlink\"},"
      "{\"dst\":\"/lib\",\"optional\":false,\"ro\":true,\"src\":\"/lib\","
      "\"type\":\"bind-or-symlink\"},"
      "{\"dst\":\"/lib64\",\"optional\":true,\"ro\":true,\"src\":\"/lib64\","
      "\"type\":\"bind-or-symlink\"},"
      "{\"dst\":\"/sbin\",\"optional\":false,\"ro\":true,\"src\":\"/sbin\","
      "\"type\":\"bind-or-symlink\"},"
      "{\"copy\":[\"/etc/debian_version\"],\"copy_try\":[\"/etc/localtime\"],"
      "\"dst\":\"/etc\",\"optional\":false,\"ro\":true,\"src\":null,"
      "\"type\":\"synthesized\"},"
      "{\"dst\":\"/dev\",\"optional\":false,\"ro\":false,\"src\":null,"
      "\"type\":\"tmpfs\"},"
      "{\"dst\":\"/proc\",\"optional\":false,\"ro\":false,\"src\":null,"
      "\"type\":\"procfs\"},"
      "{\"dst\":\"/tmp\",\"optional\":false,\"ro\":false,\"size\":67108864,"
      "\"size_human\":\"64MiB\",\"size_limit\":\"tmp-size\",\"src\":null,"
      "\"type\":\"tmpfs\"},"
      "{\"dst\":\"/workspace/inputs\",\"optional\":false,\"ro\":true,"
      "\"src\":\"(staged inputs)\",\"type\":\"bind\"},"
      "{\"dst\":\"/workspace/inputs/bundle\",\"optional\":false,\"ro\":true,"
      "\"src\":\"/workspace/skills/NAME\",\"type\":\"symlink\"},"
      "{\"dst\":\"/workspace/skills/NAME\",\"optional\":false,\"ro\":true,"
      "\"src\":\"(verified bundle copy)\",\"type\":\"bind\"},"
      "{\"dst\":\"/workspace/scratch\",\"optional\":false,\"ro\":false,"
      "\"size\":134217728,\"size_human\":\"128MiB\",\"size_limit\":"
      "\"scratch-size\",\"src\":null,\"type\":\"tmpfs\"},"
      "{\"dst\":\"/workspace/outputs\",\"optional\":false,\"ro\":false,"
      "\"size\":268435456,\"size_human\":\"256MiB\",\"size_limit\":"
      "\"outputs-size\",\"src\":null,\"type\":\"tmpfs\"},"
      "{\"dst\":\"/workspace/metadata.json\",\"optional\":false,\"ro\":true,"
      "\"src\":\"(metadata.json)\",\"type\":\"bind\"},"
      "{\"dst\":\"/etc/alternatives\",\"optional\":true,\"ro\":true,"
      "\"src\":\"/etc/alternatives\",\"type\":\"bind\"},"
      "{\"dst\":\"/docs\",\"optional\":false,\"ro\":true,"
      "\"src\":\"/usr/share/doc\",\"type\":\"bind\"}]";
  struct sr_policy p;
  json_t *whole, *got, *expected, *proc;
  json_error_t jerr;
  (void)state;

  build(&p, "bind-ro-try /etc/alternatives\nbind-ro /usr/share/doc /docs\n"
            "etc-file debian_version\netc-file-try localtime\n"
            "scratch-size 128M\n");
  whole = sr_policy_to_json(&p, NULL);
  assert_non_null(whole);
  got = json_incref(json_object_get(whole, "mounts"));
  json_decref(whole);
  expected = json_loads(want, 0, &jerr);
  assert_non_null(got);
  assert_non_null(expected);
  if (!json_equal(got, expected)) {
    char *text = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
    fail_msg("got %s", text ? text : "(null)");
  }
  /* The keys in the order the audit stream (JSON_PRESERVE_ORDER) keeps. */
  {
    char *text =
        json_dumps(json_array_get(got, 9), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(
        text, "{\"dst\":\"/tmp\",\"type\":\"tmpfs\",\"src\":null,"
              "\"ro\":false,\"optional\":false,\"size\":67108864,"
              "\"size_human\":\"64MiB\",\"size_limit\":\"tmp-size\"}");
    free(text);
  }
  json_decref(got);
  json_decref(expected);
  sr_policy_done(&p);

  /* `proc tmpfs`: an empty read-only tmpfs. */
  build(&p, "proc tmpfs\n");
  whole = sr_policy_to_json(&p, NULL);
  assert_non_null(whole);
  got = json_incref(json_object_get(whole, "mounts"));
  json_decref(whole);
  assert_non_null(got);
  proc = json_array_get(got, 8);
  assert_string_equal(json_string_value(json_object_get(proc, "dst")), "/proc");
  assert_string_equal(json_string_value(json_object_get(proc, "type")),
                      "tmpfs");
  assert_true(json_is_true(json_object_get(proc, "ro")));
  json_decref(got);
  sr_policy_done(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_entries_claim_themselves),
      cmocka_unit_test(test_skill_dir),
      cmocka_unit_test(test_claims),
      cmocka_unit_test(test_inputs_reserved),
      cmocka_unit_test(test_etc_claims),
      cmocka_unit_test(test_profile_refusals),
      cmocka_unit_test(test_to_json),
  };
  return cmocka_run_group_tests_name("view", tests, NULL, NULL);
}
