/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "conf.h"
#include "error.h"
#include "fdutil.h"
#include "paths.h"

static char datadir[1024];
static char tmpdir[] = "/tmp/test-conf.XXXXXX";

static const char *fixture(const char *name) {
  static char buf[1280];
  snprintf(buf, sizeof(buf), "%s/%s", datadir, name);
  return buf;
}

static void write_file(const char *path, const char *content, size_t len,
                       mode_t mode) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, content, len), (ssize_t)len);
  assert_int_equal(fchmod(fd, mode), 0);
  assert_int_equal(close(fd), 0);
}

static const struct sr_conf_line *line_with_key(const struct sr_conf *c,
                                                const char *key) {
  for (size_t i = 0; i < c->n_lines; i++)
    if (!strcmp(c->lines[i].key, key))
      return &c->lines[i];
  return NULL;
}

/* Parses text and expects failure with a message containing `want`. */
static void expect_buffer_error(const char *text, size_t len,
                                const char *want) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  int r = sr_conf_parse_buffer(text, len, "t.profile", &c, &err);
  assert_true(r < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_string_equal(err.reason, "config_invalid");
  if (!strstr(err.msg, want))
    fail_msg("message '%s' lacks '%s'", err.msg, want);
  assert_null(c.lines); /* *out untouched on failure */
}

static void test_words_quotes_comments(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  const struct sr_conf_line *l;
  (void)state;

  assert_int_equal(sr_conf_parse_file(fixture("basic.profile"), &c, &err), 0);
  assert_int_equal(c.n_lines, 6);
  assert_string_equal(c.name, fixture("basic.profile"));

  l = &c.lines[0];
  assert_string_equal(l->key, "memory");
  assert_int_equal(l->n_args, 1);
  assert_string_equal(l->args[0], "256M");
  assert_null(l->args[1]);
  assert_int_equal(l->line, 3);
  assert_string_equal(l->file, fixture("basic.profile"));

  l = line_with_key(&c, "hostname");
  assert_non_null(l);
  assert_int_equal(l->n_args, 1);
  assert_string_equal(l->args[0], "my host");
  assert_int_equal(l->line, 4);

  l = line_with_key(&c, "setenv");
  assert_non_null(l);
  assert_int_equal(l->n_args, 2);
  assert_string_equal(l->args[1], "say \"hi\" \\ bye");

  l = line_with_key(&c, "env-keep");
  assert_non_null(l);
  assert_int_equal(l->n_args, 3);
  assert_string_equal(l->args[2], "C");
  assert_int_equal(l->line, 6);

  /* '#' inside quotes is text; outside quotes it starts a comment, even
   * in the middle of a word. */
  l = line_with_key(&c, "key");
  assert_non_null(l);
  assert_int_equal(l->n_args, 2);
  assert_string_equal(l->args[0], "#not a comment");
  assert_string_equal(l->args[1], "x");

  /* Quoted runs glue to unquoted ones; "" is an empty word. */
  l = line_with_key(&c, "glued");
  assert_non_null(l);
  assert_int_equal(l->n_args, 2);
  assert_string_equal(l->args[0], "prefix midpost");
  assert_string_equal(l->args[1], "");
  assert_int_equal(l->line, 8);
  sr_conf_done(&c);
  assert_null(c.lines);
}

static void test_buffer_edge_cases(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  const char crlf[] = "a b\r\n\r\n  \t \nc\r\n# x\nd \"q\"";
  (void)state;

  assert_int_equal(sr_conf_parse_buffer(crlf, strlen(crlf), "x", &c, &err), 0);
  assert_int_equal(c.n_lines, 3);
  assert_string_equal(c.lines[0].key, "a");
  assert_string_equal(c.lines[0].args[0], "b");
  assert_int_equal(c.lines[1].line, 4);
  assert_int_equal(c.lines[1].n_args, 0);
  assert_null(c.lines[1].args[0]);
  /* Last line without a newline. */
  assert_string_equal(c.lines[2].args[0], "q");
  assert_int_equal(c.lines[2].line, 6);
  sr_conf_done(&c);

  assert_int_equal(sr_conf_parse_buffer("", 0, "empty", &c, &err), 0);
  assert_int_equal(c.n_lines, 0);
  sr_conf_done(&c);
}

static void test_unterminated_quote(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char want[4096 + 64];
  (void)state;

  assert_true(sr_conf_parse_file(fixture("unterminated.profile"), &c, &err) <
              0);
  snprintf(want, sizeof(want), "%s:3: unterminated quote",
           fixture("unterminated.profile"));
  assert_string_equal(err.msg, want);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);

  expect_buffer_error("a \"b\\x\"", 7, "t.profile:1: invalid escape");
  expect_buffer_error("ok 1\n\nbad \"", 11, "t.profile:3: unterminated quote");
}

static void test_line_and_word_caps(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char *buf = malloc(2 * SR_CONF_MAX_LINE + 16);
  char words[1024] = "";
  (void)state;

  assert_non_null(buf);
  /* "k " plus filler: exactly SR_CONF_MAX_LINE bytes is accepted. */
  memset(buf, 'x', SR_CONF_MAX_LINE);
  memcpy(buf, "k ", 2);
  buf[SR_CONF_MAX_LINE] = '\n';
  assert_int_equal(
      sr_conf_parse_buffer(buf, SR_CONF_MAX_LINE + 1, "t", &c, &err), 0);
  assert_int_equal(strlen(c.lines[0].args[0]), SR_CONF_MAX_LINE - 2);
  sr_conf_done(&c);

  /* One byte more on line 2 is not. */
  memcpy(buf, "a b\n", 4);
  memset(buf + 4, 'y', SR_CONF_MAX_LINE + 1);
  expect_buffer_error(buf, 4 + SR_CONF_MAX_LINE + 1,
                      "t.profile:2: line too long");
  free(buf);

  /* 64 words per line, key included. */
  for (int i = 0; i < 64; i++)
    strcat(words, "w ");
  assert_int_equal(sr_conf_parse_buffer(words, strlen(words), "t", &c, &err),
                   0);
  assert_int_equal(c.lines[0].n_args, 63);
  sr_conf_done(&c);
  strcat(words, "extra");
  expect_buffer_error(words, strlen(words), "t.profile:1: too many words");
}

static void test_control_chars(void **state) {
  (void)state;
  expect_buffer_error("a b\x01\n", 5, "t.profile:1: control character");
  expect_buffer_error("a\nb \"\x1b\"", 7, "t.profile:2: control character");
  expect_buffer_error("a\0b\n", 4, "t.profile:1: NUL byte");
}

/* A value that is not UTF-8 is refused with file:line (it could not be
 * recorded in the audit); a comment may hold anything printable. */
static void test_not_utf8(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  (void)state;
  expect_buffer_error("hostname caf\xe9\n", 14, "t.profile:1: not valid UTF-8");
  expect_buffer_error("a\nsetenv X \"\xc0\xaf\"\n", 18,
                      "t.profile:2: not valid UTF-8");
  expect_buffer_error("k \xed\xa0\x80\n", 6, "t.profile:1: not valid UTF-8");
  assert_int_equal(
      sr_conf_parse_buffer("hostname caf\xc3\xa9 # \xe9\n", 19, "t", &c, &err),
      0);
  assert_string_equal(c.lines[0].args[0], "caf\xc3\xa9");
  sr_conf_done(&c);
}

static void test_include(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char *resolved = NULL;
  char want[4096 + 64];
  (void)state;

  assert_int_equal(sr_conf_load_profile("inc-parent", &c, &resolved, &err), 0);
  assert_string_equal(resolved, fixture("inc-parent.profile"));
  assert_string_equal(c.name, resolved);
  /* The child's lines come first (spliced in place) and keep their own
   * file and line numbers. */
  assert_int_equal(c.n_lines, 3);
  assert_string_equal(c.lines[0].key, "memory");
  assert_string_equal(c.lines[0].file, fixture("inc-child.profile"));
  assert_int_equal(c.lines[0].line, 2);
  assert_string_equal(c.lines[1].key, "cpu-seconds");
  assert_int_equal(c.lines[1].line, 4);
  assert_string_equal(c.lines[2].key, "hostname");
  assert_string_equal(c.lines[2].file, fixture("inc-parent.profile"));
  assert_int_equal(c.lines[2].line, 2);
  sr_conf_done(&c);
  free(resolved);

  /* The embedded default can be included by name. */
  assert_int_equal(sr_conf_load_profile("include-default", &c, NULL, &err), 0);
  assert_true(c.n_lines >= 2);
  assert_string_equal(c.lines[0].file, "default.profile (built-in)");
  assert_string_equal(c.lines[c.n_lines - 1].key, "setenv");
  sr_conf_done(&c);

  /* A missing include names the including line. */
  assert_true(sr_conf_load_profile("include-missing", &c, NULL, &err) < 0);
  snprintf(want, sizeof(want), "%s:1: profile 'missing-profile-xyz' not found",
           fixture("include-missing.profile"));
  if (strncmp(err.msg, want, strlen(want)) != 0)
    fail_msg("got '%s'", err.msg);
  sr_error_clear(&err);

  expect_buffer_error("include", 7, "t.profile:1: include takes one");
  expect_buffer_error("include a b", 11, "t.profile:1: include takes one");
}

static void test_include_cycle(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char want[4096 + 64];
  (void)state;

  assert_true(sr_conf_load_profile("cycle-a", &c, NULL, &err) < 0);
  snprintf(want, sizeof(want), "%s:2: include cycle",
           fixture("cycle-b.profile"));
  if (strncmp(err.msg, want, strlen(want)) != 0)
    fail_msg("got '%s', want '%s...'", err.msg, want);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  sr_error_clear(&err);

  assert_true(sr_conf_load_profile("self", &c, NULL, &err) < 0);
  assert_non_null(strstr(err.msg, "self.profile:1: include cycle"));
  sr_error_clear(&err);

  /* Including the built-in default from itself is impossible, but a
   * buffer that includes a path twice in a row is fine (no cycle). */
  {
    char buf[8300];
    snprintf(buf, sizeof(buf), "include %s\ninclude %s\n",
             fixture("inc-child.profile"), fixture("inc-child.profile"));
    assert_int_equal(sr_conf_parse_buffer(buf, strlen(buf), "t", &c, &err), 0);
    assert_int_equal(c.n_lines, 4);
    sr_conf_done(&c);
  }
}

static void test_include_depth(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  (void)state;

  /* deep-1 -> ... -> deep-9: 8 nested includes, the maximum. */
  assert_int_equal(sr_conf_load_profile("deep-1", &c, NULL, &err), 0);
  assert_int_equal(c.n_lines, 1);
  assert_string_equal(c.lines[0].args[0], "deepest");
  assert_non_null(strstr(c.lines[0].file, "deep-9.profile"));
  sr_conf_done(&c);

  /* deep-0: one more. */
  assert_true(sr_conf_load_profile("deep-0", &c, NULL, &err) < 0);
  assert_non_null(strstr(err.msg, "deep-8.profile:1: includes nested too "
                                  "deeply (max 8)"));
}

static void test_profile_search(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char *resolved = NULL;
  char d1[4200], d2[4200], p[4300], env[8500];
  const char *saved = getenv("SKILLRUN_PROFILE_PATH");
  char *saved_copy = saved ? strdup(saved) : NULL;
  (void)state;

  snprintf(d1, sizeof(d1), "%s/one", tmpdir);
  snprintf(d2, sizeof(d2), "%s/two", tmpdir);
  assert_int_equal(mkdir(d1, 0755), 0);
  assert_int_equal(mkdir(d2, 0755), 0);
  snprintf(p, sizeof(p), "%s/pick.profile", d1);
  write_file(p, "hostname one\n", 13, 0644);
  snprintf(p, sizeof(p), "%s/pick.profile", d2);
  write_file(p, "hostname two\n", 13, 0644);
  snprintf(p, sizeof(p), "%s/only2.profile", d2);
  write_file(p, "hostname only2\n", 15, 0644);

  /* SKILLRUN_PROFILE_PATH is colon-separated and searched first, in order. */
  snprintf(env, sizeof(env), "%s::%s", d1, d2);
  assert_int_equal(setenv("SKILLRUN_PROFILE_PATH", env, 1), 0);
  assert_int_equal(sr_conf_load_profile("pick", &c, &resolved, &err), 0);
  assert_string_equal(c.lines[0].args[0], "one");
  snprintf(p, sizeof(p), "%s/pick.profile", d1);
  assert_string_equal(resolved, p);
  free(resolved);
  sr_conf_done(&c);
  assert_int_equal(sr_conf_load_profile("only2", &c, NULL, &err), 0);
  assert_string_equal(c.lines[0].args[0], "only2");
  sr_conf_done(&c);

  /* $XDG_CONFIG_HOME/skillrun/profiles. */
  assert_int_equal(unsetenv("SKILLRUN_PROFILE_PATH"), 0);
  snprintf(p, sizeof(p), "%s/xdg", tmpdir);
  assert_int_equal(mkdir(p, 0755), 0);
  strcat(p, "/skillrun");
  assert_int_equal(mkdir(p, 0755), 0);
  strcat(p, "/profiles");
  assert_int_equal(mkdir(p, 0755), 0);
  strcat(p, "/xdgonly.profile");
  write_file(p, "hostname xdg\n", 13, 0644);
  snprintf(env, sizeof(env), "%s/xdg", tmpdir);
  assert_int_equal(setenv("XDG_CONFIG_HOME", env, 1), 0);
  assert_int_equal(sr_conf_load_profile("xdgonly", &c, &resolved, &err), 0);
  assert_string_equal(resolved, p);
  assert_string_equal(c.lines[0].args[0], "xdg");
  free(resolved);
  sr_conf_done(&c);

  /* Not found: exit 125 and every place looked in. */
  assert_true(sr_conf_load_profile("no-such-profile", &c, NULL, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_non_null(strstr(err.msg, "profile 'no-such-profile' not found"));
  assert_non_null(
      strstr(err.msg, SR_SYSCONFDIR "/skillrun/profiles/no-such-profile"));
  assert_non_null(strstr(err.msg, "/xdg/skillrun/profiles/no-such-profile"));
  assert_non_null(
      strstr(err.msg, SR_DATADIR "/skillrun/profiles/no-such-profile"));
  sr_error_clear(&err);
  /* A name given with its suffix ("-p wc.profile" for ./wc.profile): the
   * hint names the file that is there, not ./wc.profile.profile. */
  assert_true(sr_conf_load_profile("wc.profile", &c, NULL, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_non_null(strstr(err.msg, "profile 'wc.profile' not found"));
  assert_non_null(strstr(err.msg, "without '.profile' ('wc')"));
  assert_non_null(strstr(err.msg, "(./wc.profile)"));
  assert_null(strstr(err.msg, "(./wc.profile.profile)"));
  sr_error_clear(&err);
  assert_int_equal(unsetenv("XDG_CONFIG_HOME"), 0);

  /* Names are plain file names. */
  assert_true(sr_conf_load_profile("a..b", &c, NULL, &err) < 0);
  assert_non_null(strstr(err.msg, "invalid profile name"));
  sr_error_clear(&err);
  assert_true(sr_conf_load_profile("bad\x01name", &c, NULL, &err) < 0);
  assert_non_null(strstr(err.msg, "invalid profile name"));
  sr_error_clear(&err);
  assert_true(sr_conf_load_profile("", &c, NULL, &err) < 0);
  sr_error_clear(&err);

  /* A path must be a regular file. */
  assert_true(sr_conf_load_profile(tmpdir, &c, NULL, &err) < 0);
  assert_non_null(strstr(err.msg, "not a regular file"));
  sr_error_clear(&err);
  assert_true(sr_conf_load_profile("/nonexistent/x.profile", &c, NULL, &err) <
              0);
  assert_int_equal(err.err, ENOENT);
  sr_error_clear(&err);

  if (saved_copy) {
    setenv("SKILLRUN_PROFILE_PATH", saved_copy, 1);
    free(saved_copy);
  } else {
    setenv("SKILLRUN_PROFILE_PATH", datadir, 1);
  }
}

static void test_file_too_large(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char p[4300];
  char *big = malloc(SR_CONF_MAX_BYTES + 1);
  (void)state;

  assert_non_null(big);
  memset(big, '\n', SR_CONF_MAX_BYTES + 1);
  snprintf(p, sizeof(p), "%s/big.profile", tmpdir);
  write_file(p, big, SR_CONF_MAX_BYTES, 0644);
  assert_int_equal(sr_conf_parse_file(p, &c, &err), 0);
  sr_conf_done(&c);
  write_file(p, big, SR_CONF_MAX_BYTES + 1, 0644);
  assert_true(sr_conf_parse_file(p, &c, &err) < 0);
  assert_non_null(strstr(err.msg, "is too large"));
  sr_error_clear(&err);
  assert_true(sr_conf_parse_buffer(big, SR_CONF_MAX_BYTES + 1, "b", &c, &err) <
              0);
  assert_non_null(strstr(err.msg, "file too large"));
  free(big);
}

static void test_embedded_default(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char *resolved = NULL;
  (void)state;

  assert_int_equal(sr_conf_load_profile(NULL, &c, &resolved, &err), 0);
  assert_string_equal(resolved, "default.profile (built-in)");
  assert_true(c.n_lines > 0);
  assert_non_null(line_with_key(&c, "network"));
  assert_string_equal(c.lines[0].file, "default.profile (built-in)");
  free(resolved);
  sr_conf_done(&c);

  /* "default" is the embedded one even when a file of that name is on the
   * search path, so the built-in policy cannot drift. */
  assert_int_equal(sr_conf_load_profile("default", &c, &resolved, &err), 0);
  assert_string_equal(resolved, "default.profile (built-in)");
  free(resolved);
  sr_conf_done(&c);
}

static void test_platform_conf(void **state) {
  struct sr_error err = {0};
  struct sr_conf c = {0};
  char p[4300], want[4400];
  (void)state;

  /* The default path missing: not an error, empty. */
  snprintf(p, sizeof(p), "%s/missing.conf", tmpdir);
  assert_int_equal(sr_conf_load_platform(p, false, &c, &err), 0);
  assert_int_equal(c.n_lines, 0);
  assert_false(sr_error_is_set(&err));
  /* A --conf that names nothing stops the run. */
  assert_true(sr_conf_load_platform(p, true, &c, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_non_null(strstr(err.msg, "--conf "));
  assert_non_null(strstr(err.msg, "No such file"));
  assert_int_equal(err.err, ENOENT);
  sr_error_clear(&err);

  /* Group-writable: an error naming the file, whoever owns it, the
   * default path included (it is never silently replaced). */
  snprintf(p, sizeof(p), "%s/gw.conf", tmpdir);
  write_file(p, "memory 1G\n", 10, 0664);
  for (int named = 0; named < 2; named++) {
    assert_true(sr_conf_load_platform(p, named, &c, &err) < 0);
    snprintf(want, sizeof(want),
             "%s is not root's alone (owner uid %u, mode "
             "0664)",
             p, (unsigned)geteuid());
    assert_int_equal(strncmp(err.msg, want, strlen(want)), 0);
    assert_int_equal(c.n_lines, 0);
    sr_error_clear(&err);
  }

  /* World-writable: same. */
  write_file(p, "memory 1G\n", 10, 0646);
  assert_true(sr_conf_load_platform(p, false, &c, &err) < 0);
  assert_non_null(strstr(err.msg, "mode 0646"));
  sr_error_clear(&err);

  /* 0644: honoured only when we are root (the file is then root's). */
  snprintf(p, sizeof(p), "%s/ok.conf", tmpdir);
  write_file(p, "memory 1G\nnetwork deny\n", 23, 0644);
  if (geteuid() == 0) {
    assert_int_equal(sr_conf_load_platform(p, true, &c, &err), 0);
    assert_int_equal(c.n_lines, 2);
    assert_string_equal(c.lines[0].file, p);
    sr_conf_done(&c);
  } else {
    assert_true(sr_conf_load_platform(p, true, &c, &err) < 0);
    assert_int_equal(c.n_lines, 0);
    sr_error_clear(&err);
  }

  /* A symbolic link is refused, even to a good file. */
  snprintf(want, sizeof(want), "%s/link.conf", tmpdir);
  assert_int_equal(symlink(p, want), 0);
  assert_true(sr_conf_load_platform(want, true, &c, &err) < 0);
  assert_non_null(strstr(err.msg, "is a symbolic link"));
  sr_error_clear(&err);

  /* include is refused in skillrun.conf (an included file would escape
   * the ownership check); checked as root only, where the file counts. */
  if (geteuid() == 0) {
    snprintf(p, sizeof(p), "%s/inc.conf", tmpdir);
    write_file(p, "memory 1G\ninclude default\n", 26, 0644);
    assert_true(sr_conf_load_platform(p, true, &c, &err) < 0);
    snprintf(want, sizeof(want),
             "%s:2: include is not allowed in skillrun.conf", p);
    assert_string_equal(err.msg, want);
    sr_error_clear(&err);
  }

  /* A directory (or a FIFO) is not a config file. */
  assert_true(sr_conf_load_platform(tmpdir, false, &c, &err) < 0);
  assert_int_equal(err.exit_code, SR_EXIT_FAILED);
  assert_non_null(strstr(err.msg, "is a directory, not a regular file"));
  sr_error_clear(&err);
  snprintf(p, sizeof(p), "%s/fifo.conf", tmpdir);
  assert_int_equal(mkfifo(p, 0644), 0);
  assert_true(sr_conf_load_platform(p, true, &c, &err) < 0);
  assert_non_null(strstr(err.msg, "is a FIFO, not a regular file"));
  sr_error_clear(&err);
}

static int setup(void **state) {
  const char *td = getenv("TESTDATA");
  (void)state;
  snprintf(datadir, sizeof(datadir), "%s/conf", td ? td : "tests/data");
  if (setenv("SKILLRUN_PROFILE_PATH", datadir, 1) < 0)
    return -1;
  if (!mkdtemp(tmpdir))
    return -1;
  return 0;
}

/*
 * In a user namespace where the caller is the overflow uid (unshare -U
 * --map-user=65534, a rootless container's user), a group the namespace
 * does not map shows as the overflow gid, 65534: on Fedora the group
 * "nobody", user nobody's primary group and nobody else's.  A directory
 * of the caller's that such a group (any group, shared with other users)
 * may write was taken for one only its owner's private group may write.
 * In a child, in user and mount namespaces of its own: the caller's uid
 * mapped to 65534, no gid mapped (its directory's group shows as 65534),
 * Fedora's names bound over /etc/passwd and /etc/group.
 */
enum { CHILD_OK = 0, CHILD_FAILED = 1, CHILD_NO_USERNS = 77 };

static int unmapped_group_child(const char *dir, const char *passwd,
                                const char *group) {
  char map[64];
  uid_t uid = getuid();
  struct stat st;
  int fd;

  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
    return CHILD_NO_USERNS;
  snprintf(map, sizeof(map), "65534 %u 1\n", (unsigned)uid);
  if (sr_write_file_at(AT_FDCWD, "/proc/self/setgroups", "deny") < 0 ||
      sr_write_file_at(AT_FDCWD, "/proc/self/uid_map", map) < 0)
    return CHILD_FAILED;
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount(passwd, "/etc/passwd", NULL, MS_BIND, NULL) < 0 ||
      mount(group, "/etc/group", NULL, MS_BIND, NULL) < 0) {
    fprintf(stderr, "setting up the namespace: %s\n", strerror(errno));
    return CHILD_FAILED;
  }
  /* The test runs first: nothing asked before the unshare (cached). */
  if (sr_userns_initial()) {
    fprintf(stderr, "sr_userns_initial() was cached before the unshare\n");
    return CHILD_FAILED;
  }
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0)
    return CHILD_FAILED;
  if (st.st_uid != 65534 || st.st_gid != 65534) {
    fprintf(stderr, "shown as %u:%u, not 65534:65534\n", (unsigned)st.st_uid,
            (unsigned)st.st_gid);
    return CHILD_FAILED;
  }
  if (sr_dir_group_is_owners(fd, &st)) {
    fprintf(stderr, "an unmapped group taken for the owner's private one\n");
    return CHILD_FAILED;
  }
  return CHILD_OK;
}

static void test_unmapped_group_not_private(void **state) {
  char dir[1280], passwd[1280], group[1280], ids[32];
  static const char pw[] =
      "root:x:0:0:root:/root:/bin/sh\n"
      "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
  static const char gr[] = "root:x:0:\nnobody:x:65534:\n";
  pid_t pid;
  int st;

  (void)state;
  if (sr_read_file_into(AT_FDCWD, "/proc/sys/kernel/overflowgid", ids,
                        sizeof(ids), NULL) < 0 ||
      strcmp(ids, "65534\n") != 0 ||
      sr_read_file_into(AT_FDCWD, "/proc/sys/kernel/overflowuid", ids,
                        sizeof(ids), NULL) < 0 ||
      strcmp(ids, "65534\n") != 0) {
    print_message("# the overflow ids are not 65534 here: not exercised\n");
    return;
  }
  snprintf(dir, sizeof(dir), "%s/shared-group", tmpdir);
  snprintf(passwd, sizeof(passwd), "%s/passwd", tmpdir);
  snprintf(group, sizeof(group), "%s/group", tmpdir);
  assert_int_equal(mkdir(dir, 0775), 0);
  assert_int_equal(chmod(dir, 0775), 0);
  write_file(passwd, pw, sizeof(pw) - 1, 0644);
  write_file(group, gr, sizeof(gr) - 1, 0644);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(unmapped_group_child(dir, passwd, group));
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  if (WEXITSTATUS(st) == CHILD_NO_USERNS) {
    /* Not cmocka's skip(), which tap-driver.sh counts as a failure. */
    print_message("# no user namespaces here: not exercised\n");
    return;
  }
  assert_int_equal(WEXITSTATUS(st), CHILD_OK);
}

static int teardown(void **state) {
  char cmd[128];
  (void)state;
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      /* First: sr_userns_initial() caches its answer. */
      cmocka_unit_test(test_unmapped_group_not_private),
      cmocka_unit_test(test_words_quotes_comments),
      cmocka_unit_test(test_buffer_edge_cases),
      cmocka_unit_test(test_unterminated_quote),
      cmocka_unit_test(test_line_and_word_caps),
      cmocka_unit_test(test_control_chars),
      cmocka_unit_test(test_not_utf8),
      cmocka_unit_test(test_include),
      cmocka_unit_test(test_include_cycle),
      cmocka_unit_test(test_include_depth),
      cmocka_unit_test(test_profile_search),
      cmocka_unit_test(test_file_too_large),
      cmocka_unit_test(test_embedded_default),
      cmocka_unit_test(test_platform_conf),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("conf", tests, setup, teardown);
}
