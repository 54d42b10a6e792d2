/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SKILL.md parsing and validation (src/manifest.c, skillrun-skill(5)).
 *
 * Fixtures: $TESTDATA/manifest/{valid,invalid}/<dir>/SKILL.md, each a skill
 * directory so that the reference validator can be run on it as is
 * (`skills-ref validate DIR`, agentskills/agentskills main; it loads the
 * front matter with strictyaml).  The reference verdict of each fixture and
 * the rule it mirrors (validator.py / parser.py):
 *
 * valid/ (skillrun accepts)                              reference
 *   minimal                 name + description           valid
 *   full                    every key, every sandbox.*   valid
 *   café-ü                  _validate_name: NFKC, isalnum valid
 *   tools-list              allowed-tools as a list      valid
 *   empty-values            empty optional values ("")   valid
 *   crlf                    CRLF line ends               valid
 *   entrypoint-split        metadata string              valid
 *   metadata-nested         parse_frontmatter str(v)     valid   (warning)
 *   allowed-tools-mapping   not checked on main          valid   (warning)
 *   allowed-tools-nested    not checked on main          valid   (warning)
 *   plain-scalars           strictyaml: all strings      invalid (dir name)
 *   unknown-key             _validate_metadata_fields    invalid (warning)
 *   dir-mismatch            name vs directory (NFKC)     invalid (warning)
 *   flow-tools              strictyaml flow style        invalid (warning)
 * invalid/ (skillrun refuses, exit 123)
 *   no-front-matter, bom    startswith("---")            invalid
 *   unterminated            split("---") < 3 parts       invalid
 *   yaml-syntax*, invalid-utf8  strictyaml / read_text   invalid
 *   empty-front-matter, top-level-list, top-level-scalar: "must be a YAML
 *                           mapping"                     invalid
 *   duplicate-key, duplicate-metadata-key: strictyaml    invalid
 *   anchor, tag             strictyaml disallows         invalid
 *   missing-name, missing-description: required fields   invalid
 *   name-empty, name-list   "non-empty string"           invalid
 *   uppercase-name          name != name.lower()         invalid
 *   leading-hyphen, trailing-hyphen, double-hyphen       invalid
 *   name-underscore         isalnum() or "-"             invalid
 *   name-too-long           > 64 after NFKC              invalid
 *   description-empty       "non-empty string"           invalid
 *   description-long (> 1024): invalid for the reference; skillrun
 *                           accepts it with a warning (strict refuses)
 *   compatibility-too-long (> 500), compatibility-list   invalid
 *   deep-nesting            skillrun's depth bound (8)   invalid (unknown key)
 *   unknown-sandbox-key, bad-memory, bad-network, bad-cpu-seconds,
 *   bad-timeout, bad-pids, empty-entrypoint, sandbox-nested,
 *   sandbox-not-string: skillrun's own metadata keys     valid (the reference
 *                           does not read metadata values)
 *   sandbox-key-case        Sandbox.memory in metadata   valid (the reference
 *                           does not read metadata keys)
 *   sandbox-top-level, metadata-key-case: a declaration outside
 *                           metadata                     invalid (unknown key;
 *                           skillrun refuses rather than warns: it would be
 * lost) The reference verdicts above were obtained by running skills-ref (with
 * Debian's python3-strictyaml) on these directories.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdutil.h"
#include "manifest.h"
#include "text.h"

static int open_fixture(const char *kind, const char *dir) {
  const char *data = getenv("TESTDATA");
  char path[PATH_MAX];
  int fd;

  assert_non_null(data);
  snprintf(path, sizeof(path), "%s/manifest/%s/%s", data, kind, dir);
  fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    fail_msg("cannot open fixture %s", path);
  return fd;
}

static void load_valid(const char *dir, struct sr_manifest *m) {
  struct sr_error err = {0};
  int fd = open_fixture("valid", dir);
  int r = sr_manifest_load_at(fd, dir, m, &err);

  close(fd);
  if (r < 0)
    fail_msg("valid/%s refused: %s", dir, err.msg);
  assert_false(sr_error_is_set(&err));
}

static void assert_refused(const struct sr_error *err, const char *prefix,
                           const char *needle) {
  assert_int_equal(err->exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err->reason, "manifest_invalid");
  if (strncmp(err->msg, prefix, strlen(prefix)) != 0)
    fail_msg("expected prefix '%s' in '%s'", prefix, err->msg);
  if (!strstr(err->msg, needle))
    fail_msg("expected '%s' in '%s'", needle, err->msg);
  assert_null(strchr(err->msg, '\n'));
}

/* Parses a buffer that must be refused; checks *out stays untouched. */
static void parse_bad(const char *buf, size_t len, const char *prefix,
                      const char *needle) {
  struct sr_manifest m, before;
  struct sr_error err = {0};

  if (len == SIZE_MAX) /* a C string */
    len = strlen(buf);
  memset(&m, 0x5a, sizeof(m));
  before = m;
  assert_true(sr_manifest_parse(buf, len, NULL, &m, &err) < 0);
  assert_memory_equal(&m, &before, sizeof(m));
  assert_refused(&err, prefix, needle);
}

static void parse_good(const char *buf, const char *dirname,
                       struct sr_manifest *m) {
  struct sr_error err = {0};

  if (sr_manifest_parse(buf, strlen(buf), dirname, m, &err) < 0)
    fail_msg("refused: %s\n%s", err.msg, buf);
}

/* ------------------------------------------------------------ valid */

static void test_minimal(void **state) {
  struct sr_manifest m;

  (void)state;
  load_valid("minimal", &m);
  assert_string_equal(m.name, "minimal");
  assert_string_equal(m.description, "Smallest valid skill.");
  assert_null(m.license);
  assert_null(m.compatibility);
  assert_null(m.version);
  assert_int_equal(m.allowed_tools.n, 0);
  assert_int_equal(m.n_metadata, 0);
  assert_int_equal(m.entrypoint.n, 0);
  assert_int_equal(m.network, SR_NET_UNSET);
  assert_false(m.limits[SR_LIM_MEMORY].set);
  assert_false(m.limits[SR_LIM_CPU_SECONDS].set);
  assert_false(m.limits[SR_LIM_TIMEOUT].set);
  assert_false(m.limits[SR_LIM_PIDS].set);
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);
  assert_null(m.name);
  sr_manifest_done(&m); /* twice is harmless */
}

static void test_full(void **state) {
  static const char *const keys[] = {
      "author",          "version",        "sandbox.entrypoint",
      "sandbox.network", "sandbox.memory", "sandbox.cpu-seconds",
      "sandbox.timeout", "sandbox.pids"};
  struct sr_manifest m;

  (void)state;
  load_valid("full", &m);
  assert_string_equal(m.name, "full");
  assert_string_equal(m.description, "Every key the specification knows, "
                                     "and every sandbox declaration.\n");
  assert_string_equal(m.license, "Apache-2.0");
  assert_string_equal(m.compatibility, "Needs python3 and no network.");
  assert_int_equal(m.allowed_tools.n, 3);
  assert_string_equal(m.allowed_tools.v[0], "Bash(git:*)");
  assert_string_equal(m.allowed_tools.v[1], "Read");
  assert_string_equal(m.allowed_tools.v[2], "Write");
  assert_null(m.allowed_tools.v[3]);
  assert_string_equal(m.version, "1.2.0");
  assert_int_equal(m.n_metadata, SR_ARRAY_SIZE(keys));
  for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++) {
    assert_string_equal(m.metadata[i].key, keys[i]);
    assert_int_equal(m.metadata[i].line, 10 + i);
  }
  assert_string_equal(m.metadata[0].value, "example");
  assert_int_equal(m.entrypoint.n, 2);
  assert_string_equal(m.entrypoint.v[0], "python3");
  assert_string_equal(m.entrypoint.v[1], "scripts/run.py");
  assert_int_equal(m.entrypoint_line, 12);
  assert_int_equal(m.network, SR_NET_HOST);
  assert_int_equal(m.network_line, 13);
  assert_true(m.limits[SR_LIM_MEMORY].set);
  assert_int_equal(m.limits[SR_LIM_MEMORY].value, 256u << 20);
  assert_int_equal(m.limits[SR_LIM_MEMORY].line, 14);
  assert_int_equal(m.limits[SR_LIM_CPU_SECONDS].value, 30);
  assert_int_equal(m.limits[SR_LIM_TIMEOUT].value, 90000);
  assert_int_equal(m.limits[SR_LIM_PIDS].value, 64);
  assert_int_equal(m.limits[SR_LIM_PIDS].line, 17);
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);
}

static void test_unicode_name(void **state) {
  struct sr_manifest m;

  (void)state;
  load_valid("café-ü", &m);
  assert_string_equal(m.name, "café-ü");
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);

  /* Compatibility ligature: NFKC gives "file", which is valid; the name is
   * kept as written. */
  parse_good("---\nname: \xef\xac\x81le\ndescription: d\n---\n", NULL, &m);
  assert_string_equal(m.name, "\xef\xac\x81le");
  sr_manifest_done(&m);

  /* Precomposed name, decomposed directory: equal after NFKC. */
  parse_good("---\nname: caf\xc3\xa9\ndescription: d\n---\n", "cafe\xcc\x81",
             &m);
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);

  /* Other scripts: no case (Lo) and digits of another script (Nd). */
  parse_good("---\nname: \xe6\x8a\x80\xe8\x83\xbd-\xd9\xa3\ndescription: d\n"
             "---\n",
             NULL, &m);
  sr_manifest_done(&m);

  /* Quoted surrounding white space is stripped, as the reference does. */
  parse_good("---\nname: \"  spaced \"\ndescription: d\n---\n", "spaced", &m);
  assert_string_equal(m.name, "spaced");
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);
}

static void test_tools(void **state) {
  struct sr_manifest m;

  (void)state;
  load_valid("tools-list", &m);
  assert_int_equal(m.allowed_tools.n, 3);
  assert_string_equal(m.allowed_tools.v[0], "Read");
  assert_string_equal(m.allowed_tools.v[1], "Bash(ls:*)");
  assert_string_equal(m.allowed_tools.v[2], "Web Fetch");
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);

  load_valid("flow-tools", &m);
  assert_int_equal(m.allowed_tools.n, 2);
  assert_string_equal(m.allowed_tools.v[1], "Bash");
  assert_int_equal(m.warnings.n, 1);
  assert_string_equal(m.warnings.v[0],
                      "SKILL.md:4: flow-style YAML ('[...]' or '{...}') (the "
                      "reference validator rejects it; write one item per "
                      "line)");
  sr_manifest_done(&m);

  load_valid("allowed-tools-mapping", &m);
  assert_int_equal(m.allowed_tools.n, 0);
  assert_int_equal(m.warnings.n, 1);
  assert_string_equal(m.warnings.v[0],
                      "SKILL.md:5: allowed-tools is not a space-separated "
                      "string or a list of strings (ignored)");
  sr_manifest_done(&m);

  load_valid("allowed-tools-nested", &m);
  assert_int_equal(m.allowed_tools.n, 0);
  assert_int_equal(m.warnings.n, 1);
  assert_non_null(strstr(m.warnings.v[0], "SKILL.md:6: allowed-tools"));
  sr_manifest_done(&m);
}

/* The destinations a skill names: sandbox.network-allow (names only) and
 * WebFetch(domain:NAME) tools, each with its SKILL.md line. */
static void test_network_allow(void **state) {
  struct sr_manifest m;
  char text[SR_NETALLOW_FORMAT_MAX];

  (void)state;
  parse_good(
      "---\nname: x\ndescription: d\nallowed-tools: Read "
      "WebFetch(domain:docs.python.org) WebFetch Bash(curl:*)\n"
      "metadata:\n  sandbox.network: allowlist\n"
      "  sandbox.network-allow: \"API.Example.com. *.pythonhosted.org:443 "
      "x.test:8080\"\n---\n",
      NULL, &m);
  assert_int_equal(m.network, SR_NET_ALLOWLIST);
  assert_int_equal(m.network_allow_line, 7);
  assert_int_equal(m.network_allow.n, 4);
  sr_netallow_format(&m.network_allow.v[0], text, sizeof(text));
  assert_string_equal(text, "docs.python.org:443");
  assert_int_equal(m.network_allow.v[0].origin, SR_NETALLOW_ORIGIN_TOOL);
  assert_string_equal(m.network_allow.v[0].where, "SKILL.md:4");
  sr_netallow_format(&m.network_allow.v[1], text, sizeof(text));
  assert_string_equal(text, "api.example.com:443");
  assert_int_equal(m.network_allow.v[1].origin, SR_NETALLOW_ORIGIN_MANIFEST);
  assert_string_equal(m.network_allow.v[1].where, "SKILL.md:7");
  sr_netallow_format(&m.network_allow.v[3], text, sizeof(text));
  assert_string_equal(text, "x.test:8080");
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);

  /* A list of tools: each item's own line; a bad WebFetch only warns. */
  parse_good("---\nname: x\ndescription: d\nallowed-tools:\n  - Read\n"
             "  - WebFetch(domain:a.test:8443)\n  - WebFetch(domain:*)\n---\n",
             NULL, &m);
  assert_int_equal(m.network, SR_NET_UNSET);
  assert_int_equal(m.network_allow.n, 1);
  assert_string_equal(m.network_allow.v[0].where, "SKILL.md:6");
  assert_int_equal(m.warnings.n, 1);
  assert_non_null(strstr(m.warnings.v[0],
                         "SKILL.md:7: allowed-tools 'WebFetch(domain:*)'"));
  assert_non_null(strstr(m.warnings.v[0], "(ignored)"));
  sr_manifest_done(&m);

  /* Destinations beside deny or host have no use: a warning. */
  parse_good("---\nname: x\ndescription: d\nmetadata:\n"
             "  sandbox.network: host\n  sandbox.network-allow: a.test\n---\n",
             NULL, &m);
  assert_int_equal(m.network, SR_NET_HOST);
  assert_int_equal(m.warnings.n, 1);
  assert_string_equal(m.warnings.v[0],
                      "SKILL.md:6: sandbox.network-allow has no effect with "
                      "sandbox.network host (ignored)");
  sr_manifest_done(&m);

  /* "allow" is host, as before. */
  parse_good("---\nname: x\ndescription: d\nmetadata:\n"
             "  sandbox.network: allow\n---\n",
             NULL, &m);
  assert_int_equal(m.network, SR_NET_HOST);
  sr_manifest_done(&m);

  /* An address is the platform's to permit, never the skill's. */
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.network-allow: \"a.test 10.0.0.1:443\"\n---\n",
            SIZE_MAX, "SKILL.md:5: ",
            "sandbox.network-allow: '10.0.0.1:443': IP addresses and ranges "
            "are allowed only in a profile or skillrun.conf");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.network-allow: \"https://a.test/x\"\n---\n",
            SIZE_MAX,
            "SKILL.md:5: ", "sandbox.network-allow: 'https://a.test/x'");
}

static void test_warnings(void **state) {
  struct sr_manifest m;

  (void)state;
  load_valid("unknown-key", &m);
  assert_int_equal(m.warnings.n, 1);
  assert_string_equal(m.warnings.v[0],
                      "SKILL.md:5: unknown top-level key 'tags' (the "
                      "reference validator rejects it)");
  sr_manifest_done(&m);

  load_valid("dir-mismatch", &m);
  assert_string_equal(m.name, "other-name");
  assert_int_equal(m.warnings.n, 1);
  assert_string_equal(m.warnings.v[0],
                      "SKILL.md:2: name 'other-name' differs from the bundle "
                      "directory name 'dir-mismatch' (the reference validator "
                      "rejects it)");
  sr_manifest_done(&m);

  load_valid("description-long", &m);
  assert_int_equal(m.warnings.n, 1);
  assert_non_null(strstr(m.warnings.v[0], "SKILL.md:3: description is 1025 "
                                          "characters long"));
  sr_manifest_done(&m);

  load_valid("metadata-nested", &m);
  assert_int_equal(m.n_metadata, 1);
  assert_string_equal(m.metadata[0].key, "author");
  assert_int_equal(m.warnings.n, 1);
  assert_non_null(
      strstr(m.warnings.v[0], "SKILL.md:6: metadata 'extra' is not a string"));
  sr_manifest_done(&m);

  /* No directory name: no comparison. */
  parse_good("---\nname: x\ndescription: d\n---\n", NULL, &m);
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);
}

static void test_scalars(void **state) {
  struct sr_manifest m;

  (void)state;
  /* strictyaml has no implicit typing: 123, yes, 1.0 are strings. */
  load_valid("plain-scalars", &m);
  assert_string_equal(m.name, "123");
  assert_string_equal(m.description, "yes");
  assert_string_equal(m.version, "1.0");
  assert_int_equal(m.limits[SR_LIM_PIDS].value, 10);
  assert_int_equal(m.warnings.n, 1); /* directory is "plain-scalars" */
  sr_manifest_done(&m);

  load_valid("empty-values", &m);
  assert_string_equal(m.license, "");
  assert_string_equal(m.compatibility, "");
  assert_int_equal(m.n_metadata, 0);
  assert_int_equal(m.allowed_tools.n, 0);
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);

  load_valid("crlf", &m);
  assert_string_equal(m.name, "crlf");
  assert_string_equal(m.description, "Windows line ends.");
  assert_int_equal(m.limits[SR_LIM_MEMORY].value, 1u << 30);
  assert_int_equal(m.limits[SR_LIM_MEMORY].line, 5);
  sr_manifest_done(&m);
}

static void test_entrypoint(void **state) {
  struct sr_manifest m;

  (void)state;
  load_valid("entrypoint-split", &m);
  assert_int_equal(m.entrypoint.n, 3);
  assert_string_equal(m.entrypoint.v[0], "python3");
  assert_string_equal(m.entrypoint.v[1], "scripts/run.py");
  assert_string_equal(m.entrypoint.v[2], "--fast");
  assert_null(m.entrypoint.v[3]);
  assert_int_equal(m.entrypoint_line, 5);
  sr_manifest_done(&m);

  /* No shell, no quoting: quotes stay part of the words. */
  parse_good("---\nname: x\ndescription: d\nmetadata:\n"
             "  sandbox.entrypoint: sh -c 'echo hi'\n"
             "  sandbox.timeout: 250ms\n  sandbox.network: deny\n---\n",
             NULL, &m);
  assert_int_equal(m.entrypoint.n, 4);
  assert_string_equal(m.entrypoint.v[2], "'echo");
  assert_string_equal(m.entrypoint.v[3], "hi'");
  assert_int_equal(m.limits[SR_LIM_TIMEOUT].value, 250);
  assert_int_equal(m.network, SR_NET_DENY);
  assert_int_equal(m.network_line, 7);
  sr_manifest_done(&m);
}

/* What a skill accepts as input: types and a per-file size. */
static void test_inputs_declarations(void **state) {
  struct sr_manifest m;

  (void)state;
  parse_good("---\nname: x\ndescription: d\nmetadata:\n"
             "  sandbox.inputs-max-size: 25M\n"
             "  sandbox.inputs-types: \"application/pdf, .DOCX image/*\"\n"
             "---\n",
             NULL, &m);
  assert_true(m.limits[SR_LIM_INPUTS_MAX_SIZE].set);
  assert_int_equal(m.limits[SR_LIM_INPUTS_MAX_SIZE].value, 25 << 20);
  assert_int_equal(m.inputs_types.n, 3);
  assert_string_equal(m.inputs_types.v[1], ".docx");
  assert_int_equal(m.inputs_types_line, 6);
  sr_manifest_done(&m);
  /* No types declared: any. */
  parse_good("---\nname: x\ndescription: d\n---\n", NULL, &m);
  assert_int_equal(m.inputs_types.n, 0);
  sr_manifest_done(&m);

  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.inputs-types: \"application/pdf pdf\"\n---\n",
            SIZE_MAX,
            "SKILL.md:5: ", "sandbox.inputs-types: 'pdf': neither a MIME type");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.inputs-types: \" , \"\n---\n",
            SIZE_MAX, "SKILL.md:5: ", "sandbox.inputs-types: no entry");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.inputs-types: \".tar.gz\"\n---\n",
            SIZE_MAX, "SKILL.md:5: ", "no inner '.'");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.inputs-max-size: lots\n---\n",
            SIZE_MAX, "SKILL.md:5: ", "sandbox.inputs-max-size is 'lots'");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.inputs-type: text/plain\n---\n",
            SIZE_MAX,
            "SKILL.md:5: ", "unknown sandbox key 'sandbox.inputs-type'");
}

/* A SKILL.md in buf whose name, in s, is `unit` n times. */
static void name_doc(char *buf, size_t size, char *s, const char *unit, int n) {
  s[0] = '\0';
  for (int i = 0; i < n; i++)
    strcat(s, unit);
  snprintf(buf, size, "---\nname: %s\ndescription: d\n---\n", s);
}

static void test_length_limits_exact(void **state) {
  char buf[8192];
  char s[4200];
  struct sr_manifest m;

  (void)state;
  /* 64 characters: accepted. */
  memset(s, 'a', 64);
  s[64] = '\0';
  snprintf(buf, sizeof(buf), "---\nname: %s\ndescription: d\n---\n", s);
  parse_good(buf, NULL, &m);
  sr_manifest_done(&m);
  /* 1024 two-byte characters (2048 bytes): characters count, not bytes. */
  for (int i = 0; i < 1024; i++)
    memcpy(s + 2 * i, "\xc3\xa9", 2);
  s[2048] = '\0';
  snprintf(buf, sizeof(buf), "---\nname: x\ndescription: %s\n---\n", s);
  parse_good(buf, NULL, &m);
  assert_int_equal(m.warnings.n, 0);
  sr_manifest_done(&m);
  /* 1025 of them: a warning (the specification's limit; strict refuses
   * it, as it does every warning). */
  memcpy(s + 2048, "\xc3\xa9", 3);
  snprintf(buf, sizeof(buf), "---\nname: x\ndescription: %s\n---\n", s);
  parse_good(buf, NULL, &m);
  assert_int_equal(m.warnings.n, 1);
  assert_string_equal(m.warnings.v[0],
                      "SKILL.md:3: description is 1025 characters long; the "
                      "specification allows at most 1024");
  assert_int_equal(sr_text_chars(m.description, strlen(m.description)), 1025);
  sr_manifest_done(&m);
  /* 33 "ﬁ" ligatures are 33 characters as written, 66 after NFKC. */
  name_doc(buf, sizeof(buf), s, "\xef\xac\x81", 33);
  parse_bad(buf, strlen(buf),
            "SKILL.md:2: ", "name is 66 characters long; at most 64");
  /* 64 Hangul syllables decomposed (three jamo, 9 bytes each): 64
   * characters after NFKC, but 576 bytes as written, more than the runs
   * index holds; 64 composed (3 bytes each) pass, and so do 64 letters
   * of 4 bytes (DESERET SMALL LETTER LONG I), 256 bytes. */
  name_doc(buf, sizeof(buf), s, "\xe1\x84\x80\xe1\x85\xa1\xe1\x86\xa8", 64);
  parse_bad(buf, strlen(buf),
            "SKILL.md:2: ", "name is 576 bytes long as written; at most 256");
  name_doc(buf, sizeof(buf), s, "\xea\xb0\x81", 64);
  parse_good(buf, NULL, &m);
  assert_string_equal(m.name, s);
  sr_manifest_done(&m);
  name_doc(buf, sizeof(buf), s, "\xf0\x90\x90\xa8", 64);
  parse_good(buf, NULL, &m);
  assert_int_equal(strlen(m.name), 256);
  sr_manifest_done(&m);
}

/* ------------------------------------------------------------ invalid */

struct bad_fixture {
  const char *dir;
  const char *prefix; /* exact "SKILL.md:LINE: " */
  const char *needle;
};

static const struct bad_fixture bad_fixtures[] = {
    {"no-front-matter", "SKILL.md:1: ", "no YAML front matter"},
    {"bom", "SKILL.md:1: ",
     "no YAML front matter: the file starts with a UTF-8 byte order mark"},
    {"unterminated", "SKILL.md:1: ", "never closed"},
    {"yaml-syntax", "SKILL.md:4: ",
     "YAML syntax error: found unexpected end of stream while scanning a "
     "quoted scalar"},
    {"yaml-syntax-indent",
     "SKILL.md:4: ", "YAML syntax error: mapping values are not allowed"},
    {"invalid-utf8", "SKILL.md:3: ", "YAML syntax error: incomplete UTF-8"},
    {"empty-front-matter", "SKILL.md:2: ", "front matter is empty"},
    {"top-level-list", "SKILL.md:2: ", "must be a YAML mapping"},
    {"top-level-scalar", "SKILL.md:2: ", "must be a YAML mapping"},
    {"duplicate-key",
     "SKILL.md:5: ", "duplicate key 'description' (first on line 3)"},
    {"duplicate-metadata-key",
     "SKILL.md:6: ", "duplicate key 'a' (first on line 5)"},
    {"anchor", "SKILL.md:3: ", "anchors and aliases"},
    {"tag", "SKILL.md:3: ", "tags ('!') are not allowed"},
    {"deep-nesting", "SKILL.md:12: ", "nested more than 8 levels"},
    {"missing-name", "SKILL.md:1: ", "missing required key 'name'"},
    {"missing-description",
     "SKILL.md:1: ", "missing required key 'description'"},
    {"name-empty", "SKILL.md:2: ", "name is empty"},
    {"name-list", "SKILL.md:3: ", "name must be a string"},
    {"uppercase-name",
     "SKILL.md:2: ", "name 'Uppercase-Name' must be lowercase"},
    {"leading-hyphen", "SKILL.md:2: ", "must not start or end with a hyphen"},
    {"trailing-hyphen", "SKILL.md:2: ", "must not start or end with a hyphen"},
    {"double-hyphen", "SKILL.md:2: ", "two hyphens in a row"},
    {"name-underscore",
     "SKILL.md:2: ", "may contain only letters, digits and hyphens"},
    {"name-too-long", "SKILL.md:2: ", "name is 65 characters long; at most 64"},
    {"description-empty", "SKILL.md:3: ", "description is empty"},
    {"compatibility-too-long",
     "SKILL.md:4: ", "compatibility is 501 characters long; at most 500"},
    {"compatibility-list", "SKILL.md:5: ", "compatibility must be a string"},
    {"unknown-sandbox-key", "SKILL.md:7: ",
     "unknown sandbox key 'sandbox.memroy' in metadata (did you mean "
     "'sandbox.memory'?)"},
    {"bad-memory", "SKILL.md:5: ", "sandbox.memory is 'lots': use a size"},
    {"bad-network", "SKILL.md:5: ",
     "sandbox.network is 'yes': use 'deny', 'allowlist' or 'host' ('allow' "
     "is 'host')"},
    {"bad-cpu-seconds", "SKILL.md:5: ", "sandbox.cpu-seconds is '1.5'"},
    {"bad-timeout", "SKILL.md:5: ", "sandbox.timeout is '5 minutes'"},
    {"bad-pids", "SKILL.md:5: ", "sandbox.pids is '0'"},
    {"empty-entrypoint", "SKILL.md:5: ", "sandbox.entrypoint is empty"},
    {"sandbox-nested",
     "SKILL.md:5: ", "metadata 'sandbox' must be a string value"},
    {"sandbox-not-string",
     "SKILL.md:5: ", "metadata 'sandbox.entrypoint' must be a string value"},
    /* Declarations that would be lost: refused, not warned about. */
    {"sandbox-top-level", "SKILL.md:4: ",
     "'sandbox.memory' is not a top-level key: write skillrun's declarations "
     "under 'metadata:'"},
    {"metadata-key-case", "SKILL.md:4: ", "'Metadata' is not a top-level key"},
    {"sandbox-key-case", "SKILL.md:5: ",
     "metadata key 'Sandbox.memory': skillrun's sandbox keys are lowercase "
     "ASCII without blanks (write 'sandbox.memory')"},
};

static void test_invalid_fixtures(void **state) {
  (void)state;
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad_fixtures); i++) {
    const struct bad_fixture *f = &bad_fixtures[i];
    struct sr_manifest m, before;
    struct sr_error err = {0};
    int fd = open_fixture("invalid", f->dir);

    memset(&m, 0x5a, sizeof(m));
    before = m;
    if (sr_manifest_load_at(fd, f->dir, &m, &err) >= 0)
      fail_msg("invalid/%s was accepted", f->dir);
    close(fd);
    assert_memory_equal(&m, &before, sizeof(m));
    if (strncmp(err.msg, f->prefix, strlen(f->prefix)) != 0 ||
        !strstr(err.msg, f->needle))
      fail_msg("invalid/%s: expected '%s...%s', got '%s'", f->dir, f->prefix,
               f->needle, err.msg);
    assert_refused(&err, f->prefix, f->needle);
  }
}

/* Every fixture directory on disk is listed above or tested by name. */
static void test_fixture_count(void **state) {
  char path[PATH_MAX];
  int n = 0;
  FILE *f;

  (void)state;
  snprintf(path, sizeof(path), "ls -d '%s'/manifest/invalid/*/ | wc -l",
           getenv("TESTDATA"));
  f = popen(path, "r");
  assert_non_null(f);
  assert_int_equal(fscanf(f, "%d", &n), 1);
  pclose(f);
  assert_int_equal(n, SR_ARRAY_SIZE(bad_fixtures));
}

static void test_oversize(void **state) {
  size_t len = SR_MANIFEST_MAX_BYTES + 1;
  char *buf = malloc(len);
  char dir[] = "/tmp/test-manifest-XXXXXX";
  struct sr_manifest m;
  struct sr_error err = {0};
  int dfd, fd;

  (void)state;
  assert_non_null(buf);
  memset(buf, '\n', len);
  memcpy(buf, "---\nname: x\ndescription: d\n---\n", 31);
  parse_bad(buf, len, "SKILL.md:1: ", "larger than 1048576 bytes");
  /* Exactly at the cap: fine. */
  assert_int_equal(sr_manifest_parse(buf, len - 1, NULL, &m, &err), 0);
  sr_manifest_done(&m);

  /* The same through the file reader. */
  assert_non_null(mkdtemp(dir));
  dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(dfd >= 0);
  fd = openat(dfd, "SKILL.md", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(sr_write_all(fd, buf, len), 0);
  close(fd);
  memset(&err, 0, sizeof(err));
  assert_true(sr_manifest_load_at(dfd, "x", &m, &err) < 0);
  assert_refused(&err, "SKILL.md:1: ", "larger than 1048576 bytes");

  /* Missing SKILL.md: refused too. */
  assert_int_equal(unlinkat(dfd, "SKILL.md", 0), 0);
  memset(&err, 0, sizeof(err));
  assert_true(sr_manifest_load_at(dfd, "x", &m, &err) < 0);
  assert_refused(&err, "SKILL.md: ", "needs a SKILL.md");

  /* A symlink is not read. */
  assert_int_equal(symlinkat("/etc/passwd", dfd, "SKILL.md"), 0);
  memset(&err, 0, sizeof(err));
  assert_true(sr_manifest_load_at(dfd, "x", &m, &err) < 0);
  assert_refused(&err, "SKILL.md: ", "regular file");
  assert_int_equal(unlinkat(dfd, "SKILL.md", 0), 0);
  close(dfd);
  assert_int_equal(rmdir(dir), 0);
  free(buf);
}

static void test_bounds(void **state) {
  char *buf = malloc(1 << 20);
  size_t n;

  (void)state;
  assert_non_null(buf);
  /* 257 metadata entries. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\nmetadata:\n");
  for (int i = 0; i < 257; i++)
    n += (size_t)sprintf(buf + n, "  k%d: v\n", i);
  strcpy(buf + n, "---\n");
  parse_bad(buf, strlen(buf),
            "SKILL.md:261: ", "metadata has more than 256 entries");

  /* 257 allowed-tools, as a string and as a list. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\nallowed-tools:");
  for (int i = 0; i < 257; i++)
    n += (size_t)sprintf(buf + n, " t%d", i);
  strcpy(buf + n, "\n---\n");
  parse_bad(buf, strlen(buf),
            "SKILL.md:4: ", "allowed-tools has more than 256 entries");
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\nallowed-tools:\n");
  for (int i = 0; i < 257; i++)
    n += (size_t)sprintf(buf + n, "- t%d\n", i);
  strcpy(buf + n, "---\n");
  parse_bad(buf, strlen(buf),
            "SKILL.md:5: ", "allowed-tools has more than 256 entries");

  /* A key of 257 bytes. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\n");
  memset(buf + n, 'k', 257);
  strcpy(buf + n + 257, ": v\n---\n");
  parse_bad(buf, strlen(buf), "SKILL.md:4: ", "key longer than 256 bytes");

  /* One list of 1025 items. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\nlist:\n");
  for (int i = 0; i < 1025; i++)
    n += (size_t)sprintf(buf + n, "- i\n");
  strcpy(buf + n, "---\n");
  parse_bad(buf, strlen(buf), "SKILL.md:1029: ", "more than 1024 entries");

  /* 20 lists of 1000 items: more than 16384 nodes in total. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\n");
  for (int l = 0; l < 20; l++) {
    n += (size_t)sprintf(buf + n, "l%d:\n", l);
    for (int i = 0; i < 1000; i++)
      n += (size_t)sprintf(buf + n, "- i\n");
  }
  strcpy(buf + n, "---\n");
  parse_bad(buf, strlen(buf), "SKILL.md:", "more than 16384 YAML nodes");

  /* Flow nesting as deep as the input allows stops at 8 levels. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\nx: ");
  memset(buf + n, '[', 100000);
  strcpy(buf + n + 100000, "\n---\n");
  parse_bad(buf, strlen(buf), "SKILL.md:4: ", "nested more than 8 levels");

  /* A value longer than 4096 bytes where it is stored. */
  n = (size_t)sprintf(buf, "---\nname: x\ndescription: d\nlicense: ");
  memset(buf + n, 'l', 4097);
  strcpy(buf + n + 4097, "\n---\n");
  parse_bad(buf, strlen(buf), "SKILL.md:4: ", "license longer than 4096 bytes");
  free(buf);
}

static void test_misc_invalid(void **state) {
  static const char nul[] = "---\nname: x\ndescription: \"a\\0b\"\n---\n";

  (void)state;
  parse_bad("\xff\xfe-\0-\0-\0\n\0", 10,
            "SKILL.md:1: ", "no YAML front matter: the file is UTF-16");
  parse_bad("\xff\xfe\0\0-\0\0\0", 8,
            "SKILL.md:1: ", "no YAML front matter: the file is UTF-32");
  parse_bad("\0\0\xfe\xff\0\0\0-", 8,
            "SKILL.md:1: ", "no YAML front matter: the file is UTF-32");
  /* Other spellings of a sandbox key, each of which was kept as mere
   * metadata, its limit lost: refused, naming the key to write. */
  static const char *const spellings[] = {
      "\" sandbox.memory\"",       "\"sandbox .memory\"", "\"sandbox. memory\"",
      "\"sandbox.memory\\t\"",     "sandbox.MEMORY",      "SANDBOX.Memory",
      "\"sandbox\\u00a0.memory\"", /* a no-break space */
      "\uff33andbox.memory",       /* a full-width S */
      "\u017fandbox.memory",       /* a long s, NFKC "s" */
  };
  for (size_t i = 0; i < SR_ARRAY_SIZE(spellings); i++) {
    char buf[256];
    int n =
        snprintf(buf, sizeof(buf),
                 "---\nname: x\ndescription: d\nmetadata:\n  %s: 64M\n---\n",
                 spellings[i]);
    parse_bad(buf, (size_t)n, "SKILL.md:5: ",
              "skillrun's sandbox keys are lowercase ASCII without blanks "
              "(write 'sandbox.memory')");
  }
  /* Another spelling of a key skillrun does not read: a typo's message,
   * not a "write" of another unknown key. */
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  Sandbox.memroy: 64M\n---\n",
            SIZE_MAX, "SKILL.md:5: ",
            "unknown sandbox key 'Sandbox.memroy' in metadata (did you mean "
            "'sandbox.memory'?)");
  parse_bad("---\nname: x\ndescription: d\n\"metadata \":\n"
            "  sandbox.memory: 64M\n---\n",
            SIZE_MAX, "SKILL.md:4: ", "'metadata ' is not a top-level key");
  parse_bad("---\nname: x\ndescription: d\n\" Sandbox.memory\": 64M\n---\n",
            SIZE_MAX,
            "SKILL.md:4: ", "' Sandbox.memory' is not a top-level key");
  /* Well formed, beyond any limit: said so, not "use a size". */
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.memory: 99999999999999999999T\n---\n",
            SIZE_MAX, "SKILL.md:5: ",
            "sandbox.memory is '99999999999999999999T': too large to be a "
            "limit");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.pids: \"4294967296\"\n---\n",
            SIZE_MAX, "SKILL.md:5: ",
            "sandbox.pids is '4294967296': too large to be a limit");
  parse_bad(NULL, 0, "SKILL.md:1: ", "no YAML front matter");
  parse_bad("---", 3, "SKILL.md:1: ", "never closed");
  parse_bad("--- x\nname: a\n---\n", 18,
            "SKILL.md:1: ", "no YAML front matter");
  parse_bad(nul, strlen(nul), "SKILL.md:3: ", "NUL character");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n  a: *x\n---\n", SIZE_MAX,
            "SKILL.md:5: ", "anchors and aliases");
  parse_bad("---\nname: \xc3\x89"
            "cole\ndescription: d\n---\n",
            SIZE_MAX, "SKILL.md:2: ", "must be lowercase");
  parse_bad("---\nname: a.b\ndescription: d\n---\n", SIZE_MAX,
            "SKILL.md:2: ", "only letters, digits and hyphens");
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n  sandbox.memory: "
            "1.5G\n---\n",
            SIZE_MAX, "SKILL.md:5: ", "sandbox.memory is '1.5G'");
  /* Control characters are not echoed into the one-line message. */
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n  sandbox.network: "
            "\"a\\nb\"\n---\n",
            SIZE_MAX, "SKILL.md:5: ", "sandbox.network is 'a?b'");
}

/* A sandbox key that reads as one once invisible characters are left out
 * and look-alike letters of other scripts read as the ASCII ones was kept
 * as mere metadata, its limit lost: refused, naming the key to write and
 * the character that is not what it looks like. */
static void test_lookalike_keys(void **state) {
  static const struct {
    const char *key, *cp;
  } keys[] = {
      {"sandbox\u200b.memory", "U+200B"},      /* zero-width space */
      {"sandbox.mem\u200cory", "U+200C"},      /* zero-width non-joiner */
      {"sand\u200dbox.memory", "U+200D"},      /* zero-width joiner */
      {"sandbox\u2060.memory", "U+2060"},      /* word joiner */
      {"sandbox.memory\ufeff", "U+FEFF"},      /* zero-width no-break space */
      {"sand\u00adbox.memory", "U+00AD"},      /* soft hyphen */
      {"sandbox\ufe0f.memory", "U+FE0F"},      /* variation selector-16 */
      {"sandbox.memory\U000E0041", "U+E0041"}, /* tag latin capital a */
      {"s\u0430ndbox.memory", "U+0430"},       /* Cyrillic a */
      {"\u0455andbox.memory", "U+0455"},       /* Cyrillic dze */
      {"sandb\u03bfx.memory", "U+03BF"},       /* Greek omicron */
      {"sandbo\u0445.memory", "U+0445"},       /* Cyrillic ha */
      {"sandbox.m\u0435m\u043ery", "U+0435"},  /* Cyrillic ie, o */
      {"\u0405ANDBOX.MEMORY", "U+0405"},       /* Cyrillic capital dze */
      {"SANDB\u039fX.MEMORY", "U+039F"},       /* Greek capital omicron */
      {"sandbox\u2024memory", "U+2024"},       /* one dot leader, NFKC '.' */
  };
  char buf[256], needle[160];

  (void)state;
  for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++) {
    int n =
        snprintf(buf, sizeof(buf),
                 "---\nname: x\ndescription: d\nmetadata:\n  %s: 64M\n---\n",
                 keys[i].key);
    snprintf(needle, sizeof(needle),
             "(it holds %s, not ASCII): skillrun's sandbox keys are "
             "lowercase ASCII without blanks (write 'sandbox.memory')",
             keys[i].cp);
    parse_bad(buf, (size_t)n, "SKILL.md:5: ", needle);
  }
  /* A look-alike of another name: the timeout's. */
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  sandbox.t\u0456me\u043eut: 5s\n---\n",
            SIZE_MAX, "SKILL.md:5: ", "(write 'sandbox.timeout')");
  /* A look-alike of a key skillrun does not read: still a typo. */
  parse_bad("---\nname: x\ndescription: d\nmetadata:\n"
            "  s\u0430ndbox.memroy: 64M\n---\n",
            SIZE_MAX, "SKILL.md:5: ",
            "unknown sandbox key 's\u0430ndbox.memroy' (it holds U+0430, not "
            "ASCII) in metadata (did you mean 'sandbox.memory'?)");
  /* Outside metadata, where it would be lost as an unknown key. */
  parse_bad("---\nname: x\ndescription: d\nm\u0435tadata:\n"
            "  sandbox.memory: 64M\n---\n",
            SIZE_MAX, "SKILL.md:4: ",
            "'m\u0435tadata' (it holds U+0435, not ASCII) is not a top-level "
            "key");
  parse_bad("---\nname: x\ndescription: d\n\u200bsandbox.memory: 64M\n---\n",
            SIZE_MAX, "SKILL.md:4: ",
            "(it holds U+200B, not ASCII) is not a "
            "top-level key");
  /* Other keys, even with such characters, are the author's own. */
  {
    struct sr_manifest m = {0};

    parse_good("---\nname: x\ndescription: d\nmetadata:\n"
               "  \u0430uthor\u200b: me\n  c\u0430ndbox.memory: 1\n"
               "  sandboxes: \"2\"\n---\n",
               NULL, &m);
    assert_int_equal(m.n_metadata, 3);
    assert_int_equal(m.warnings.n, 0);
    sr_manifest_done(&m);
  }
}

/* libyaml ends a line at a lone CR, NEL, LINE SEPARATOR and PARAGRAPH
 * SEPARATOR where editors and grep -n do not: refused, on grep's line. */
static void test_line_breaks(void **state) {
  static const struct {
    const char *brk, *what;
  } breaks[] = {
      {"\r", "a carriage return (CR) not followed by a line feed"},
      {"\xc2\x85", "a NEXT LINE character (U+0085)"},
      {"\xe2\x80\xa8", "a LINE SEPARATOR (U+2028)"},
      {"\xe2\x80\xa9", "a PARAGRAPH SEPARATOR (U+2029)"},
  };
  char buf[256];
  struct sr_manifest m = {0};

  (void)state;
  for (size_t i = 0; i < SR_ARRAY_SIZE(breaks); i++) {
    /* In a comment: the rest of the line would be read as a key. */
    int n = snprintf(buf, sizeof(buf),
                     "---\nname: x\ndescription: d\nmetadata:\n"
                     "  author: me # see%s  sandbox.memory: 64M\n---\n",
                     breaks[i].brk);
    parse_bad(buf, (size_t)n, "SKILL.md:5: ", breaks[i].what);
    /* In a value, with an error after it: grep's line for both. */
    n = snprintf(buf, sizeof(buf),
                 "---\nname: x\ndescription: \"a%sb\"\nmetadata:\n"
                 "  sandbox.memroy: 64M\n---\n",
                 breaks[i].brk);
    parse_bad(buf, (size_t)n, "SKILL.md:3: ", breaks[i].what);
  }
  /* CRLF line ends, and the escapes, are fine; so is any of them after the
   * front matter. */
  parse_good("---\r\nname: x\r\ndescription: \"a\\Lb\\Nc\\Pd\\re\"\r\n"
             "metadata:\r\n  sandbox.memory: 64M\r\n---\r\n# x\xe2\x80\xa8y\r"
             "z\n",
             NULL, &m);
  assert_string_equal(m.description, "a\xe2\x80\xa8"
                                     "b\xc2\x85"
                                     "c\xe2\x80\xa9"
                                     "d\re");
  sr_manifest_done(&m);
}

/* Every limit the table lets SKILL.md set is a key sandbox.<name> read in
 * its kind's syntax; the table's other limits are unknown sandbox keys,
 * and the list of known keys in that error is the table's. */
static void test_limit_table_keys(void **state) {
  char known[512] = "sandbox.entrypoint, sandbox.network, "
                    "sandbox.network-allow, sandbox.inputs-types";
  int settable = 0;

  (void)state;
  for (int id = 0; id < SR__LIM_MAX; id++)
    if (sr_limit_settable(id, SR_SRC_MANIFEST)) {
      size_t used = strlen(known);
      snprintf(known + used, sizeof(known) - used, ", sandbox.%s",
               sr_limit_defs[id].name);
    }
  for (int id = 0; id < SR__LIM_MAX; id++) {
    const struct sr_limit_def *d = &sr_limit_defs[id];
    char buf[256], want[600];
    struct sr_manifest m;

    snprintf(buf, sizeof(buf),
             "---\nname: x\ndescription: d\nmetadata:\n  a: b\n"
             "  sandbox.%s: \"%s\"\n---\n",
             d->name, d->example ? d->example : "1");
    if (!sr_limit_settable(id, SR_SRC_MANIFEST)) {
      snprintf(want, sizeof(want),
               "unknown sandbox key 'sandbox.%s' in metadata (known: %s)",
               d->name, known);
      parse_bad(buf, SIZE_MAX, "SKILL.md:6: ", want);
      continue;
    }
    settable++;
    /* The example the error messages give is itself a valid value. */
    assert_non_null(d->example);
    parse_good(buf, NULL, &m);
    for (int other = 0; other < SR__LIM_MAX; other++)
      assert_int_equal(m.limits[other].set, other == id);
    assert_int_equal(m.limits[id].line, 6);
    assert_true(m.limits[id].value > 0);
    sr_manifest_done(&m);
    /* Zero and garbage are refused naming the key and the example. */
    snprintf(buf, sizeof(buf),
             "---\nname: x\ndescription: d\nmetadata:\n  sandbox.%s: "
             "nonsense\n---\n",
             d->name);
    snprintf(want, sizeof(want), "sandbox.%s is 'nonsense': use ", d->name);
    parse_bad(buf, SIZE_MAX, "SKILL.md:5: ", want);
    snprintf(want, sizeof(want), "e.g. %s", d->example);
    parse_bad(buf, SIZE_MAX, "SKILL.md:5: ", want);
    if (d->min > 0) {
      snprintf(buf, sizeof(buf),
               "---\nname: x\ndescription: d\nmetadata:\n  sandbox.%s: "
               "\"0\"\n---\n",
               d->name);
      parse_bad(buf, SIZE_MAX, "SKILL.md:5: ", " above 0");
    }
  }
  assert_true(settable > 0); /* not vacuous */
}

/* Every prefix and many single-byte corruptions of a full manifest: never
 * a crash, and every refusal is a well-formed SKILL.md:LINE error. */
static void test_robust(void **state) {
  char *buf = NULL, *copy;
  size_t len = 0;
  int fd = open_fixture("valid", "full");
  static const char bytes[] = {'\0', '\n', ':', '-', '[', '{',  '"',    '\'',
                               '&',  '*',  '!', '#', ' ', '\t', '\xff', '|'};

  (void)state;
  assert_int_equal(sr_read_file_at(fd, "SKILL.md", 1 << 20, &buf, &len), 0);
  close(fd);
  copy = malloc(len + 1);
  assert_non_null(copy);
  for (size_t cut = 0; cut <= len; cut++)
    for (size_t b = 0; b <= SR_ARRAY_SIZE(bytes); b++) {
      struct sr_manifest m;
      struct sr_error err = {0};
      size_t at = (cut * 7 + b * 13) % len;
      int r;

      memcpy(copy, buf, len);
      if (b < SR_ARRAY_SIZE(bytes))
        copy[at] = bytes[b];
      r = sr_manifest_parse(copy, b < SR_ARRAY_SIZE(bytes) ? len : cut, "full",
                            &m, &err);
      if (r == 0) {
        assert_non_null(m.name);
        assert_non_null(m.description);
        sr_manifest_done(&m);
      } else {
        assert_true(err.exit_code == SR_EXIT_REFUSED);
        assert_int_equal(strncmp(err.msg, "SKILL.md:", 9), 0);
      }
    }
  free(copy);
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_minimal),
      cmocka_unit_test(test_full),
      cmocka_unit_test(test_limit_table_keys),
      cmocka_unit_test(test_unicode_name),
      cmocka_unit_test(test_tools),
      cmocka_unit_test(test_network_allow),
      cmocka_unit_test(test_warnings),
      cmocka_unit_test(test_scalars),
      cmocka_unit_test(test_entrypoint),
      cmocka_unit_test(test_inputs_declarations),
      cmocka_unit_test(test_length_limits_exact),
      cmocka_unit_test(test_invalid_fixtures),
      cmocka_unit_test(test_fixture_count),
      cmocka_unit_test(test_oversize),
      cmocka_unit_test(test_bounds),
      cmocka_unit_test(test_misc_invalid),
      cmocka_unit_test(test_lookalike_keys),
      cmocka_unit_test(test_line_breaks),
      cmocka_unit_test(test_robust),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
