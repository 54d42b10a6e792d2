/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "fdutil.h"
#include "util.h"

#define LIMIT (UINT64_C(1) << 62)
#define SENTINEL UINT64_C(0xdeadbeefcafef00d)
#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct parse_case {
  const char *in;
  uint64_t want;
};

/* A string of n copies of c; the caller frees it. */
static char *repeat(char c, size_t n) {
  char *s = malloc(n + 1);

  assert_non_null(s);
  memset(s, c, n);
  s[n] = '\0';
  return s;
}

static void check_size(const char *in, uint64_t want) {
  uint64_t v = SENTINEL;
  int r = sr_parse_size(in, &v);

  if (r != 0)
    fail_msg("sr_parse_size(\"%s\") = %d, want 0", in, r);
  if (v != want)
    fail_msg("sr_parse_size(\"%s\") gave %ju, want %ju", in, (uintmax_t)v,
             (uintmax_t)want);
}

/* On failure the documented error comes back and *out is untouched. */
static void check_size_fails(const char *in, int want) {
  uint64_t v = SENTINEL;
  int r = sr_parse_size(in, &v);

  if (r != want)
    fail_msg("sr_parse_size(\"%s\") = %d, want %d", in ? in : "(null)", r,
             want);
  if (v != SENTINEL)
    fail_msg("sr_parse_size(\"%s\") wrote *out on failure", in ? in : "");
}

static void check_duration(const char *in, uint64_t want) {
  uint64_t v = SENTINEL;
  int r = sr_parse_duration_ms(in, &v);

  if (r != 0)
    fail_msg("sr_parse_duration_ms(\"%s\") = %d, want 0", in, r);
  if (v != want)
    fail_msg("sr_parse_duration_ms(\"%s\") gave %ju, want %ju", in,
             (uintmax_t)v, (uintmax_t)want);
}

static void check_duration_fails(const char *in, int want) {
  uint64_t v = SENTINEL;
  int r = sr_parse_duration_ms(in, &v);

  if (r != want)
    fail_msg("sr_parse_duration_ms(\"%s\") = %d, want %d", in ? in : "(null)",
             r, want);
}

static void test_parse_size_plain(void **state) {
  (void)state;
  check_size("0", 0);
  check_size("1", 1);
  check_size("4096", 4096);
  check_size("0007", 7);
  check_size("65536", 65536);
}

static void test_parse_size_suffixes(void **state) {
  static const struct parse_case cases[] = {
      {"64k", UINT64_C(64) << 10},
      {"64K", UINT64_C(64) << 10},
      {"1KiB", UINT64_C(1) << 10},
      {"1kib", UINT64_C(1) << 10},
      {"1KB", UINT64_C(1) << 10},
      {"1Ki", UINT64_C(1) << 10},
      {"512M", UINT64_C(512) << 20},
      {"512m", UINT64_C(512) << 20},
      {"10MiB", UINT64_C(10) << 20},
      {"10MIB", UINT64_C(10) << 20},
      {"10mb", UINT64_C(10) << 20},
      {"512Mi", UINT64_C(512) << 20},
      {"1G", UINT64_C(1) << 30},
      {"1g", UINT64_C(1) << 30},
      {"1GiB", UINT64_C(1) << 30},
      {"1GB", UINT64_C(1) << 30},
      {"3Gi", UINT64_C(3) << 30},
      {"2T", UINT64_C(2) << 40},
      {"2t", UINT64_C(2) << 40},
      {"2TiB", UINT64_C(2) << 40},
      {"2TB", UINT64_C(2) << 40},
      {"2Ti", UINT64_C(2) << 40},
      {"0M", 0},
      {"0TiB", 0},
      /* A bare B (any case) is bytes, as documented. */
      {"512B", 512},
      {"512b", 512},
  };
  (void)state;
  for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++)
    check_size(cases[i].in, cases[i].want);
}

static void test_parse_size_limit(void **state) {
  (void)state;
  /* 2^62 is the largest size, in every unit. */
  check_size("4611686018427387904", LIMIT);
  check_size("4503599627370496K", LIMIT);
  check_size("4398046511104M", LIMIT);
  check_size("4294967296GiB", LIMIT);
  check_size("4194304T", LIMIT);
  check_size("4611686018427387903", LIMIT - 1);
  /* One more is out of range, not a syntax error. */
  check_size_fails("4611686018427387905", -ERANGE);
  check_size_fails("4503599627370497K", -ERANGE);
  check_size_fails("4398046511105M", -ERANGE);
  check_size_fails("4294967297GiB", -ERANGE);
  check_size_fails("4194305T", -ERANGE);
  check_size_fails("4194305Ti", -ERANGE);
  /* Values that would wrap a 64-bit integer. */
  check_size_fails("18446744073709551615", -ERANGE);
  check_size_fails("18446744073709551616", -ERANGE);
  check_size_fails("99999999999999999999999999", -ERANGE);
  check_size_fails("17179869184T", -ERANGE); /* 2^34 T wraps to 2^74 */
}

static void test_parse_size_invalid(void **state) {
  static const char *const bad[] = {
      "",     "-1",  "+1",    " 1",   "1 ",           "1 M",
      "M",    "KiB", "1.5G",  "1,5G", "1X",           "1P",
      "1E",   "1KK", "1KiBB", "1iB",  "1Bi",          "1ib",
      "0x10", "1e3", "1k\n",  "1\t",  "\xef\xbc\x91", "1MiB ",
  };
  (void)state;
  check_size_fails(NULL, -EINVAL);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++)
    check_size_fails(bad[i], -EINVAL);
}

static void test_parse_duration(void **state) {
  static const struct parse_case cases[] = {
      {"30s", 30000},
      {"5m", 300000},
      {"1h", 3600000},
      {"250ms", 250},
      {"90", 90000},
      {"0", 0},
      {"0ms", 0},
      {"0s", 0},
      {"1ms", 1},
      {"1500ms", 1500},
      {"2min", 120000},
      {"24h", 86400000},
      {"0010s", 10000},
      {"1000ms", 1000},
      {"60m", 3600000},
      /* Documented since it was accepted: "sec" is "s". */
      {"10sec", 10000},
  };
  (void)state;
  for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++)
    check_duration(cases[i].in, cases[i].want);
}

static void test_parse_duration_limit(void **state) {
  (void)state;
  /* Results stay within 2^62 ms, like sizes. */
  check_duration("4611686018427387904ms", LIMIT);
  check_duration("4611686018427387s", UINT64_C(4611686018427387000));
  check_duration("4611686018427387", UINT64_C(4611686018427387000));
  check_duration("76861433640456m", UINT64_C(4611686018427360000));
  check_duration("1281023894007h", UINT64_C(4611686018425200000));
  check_duration_fails("4611686018427387905ms", -ERANGE);
  check_duration_fails("4611686018427388s", -ERANGE);
  check_duration_fails("4611686018427388", -ERANGE);
  check_duration_fails("76861433640457m", -ERANGE);
  check_duration_fails("76861433640457min", -ERANGE);
  check_duration_fails("1281023894008h", -ERANGE);
  check_duration_fails("18446744073709551616ms", -ERANGE);
}

static void test_parse_duration_invalid(void **state) {
  static const char *const bad[] = {
      "",    "s",   "ms", "-1s", "+1s", "1.5s", "1 s", " 1s",
      "1s ", "30x", "1d", "1hh", "1sm", "ms30", "1e3", "0x10",
  };
  (void)state;
  check_duration_fails(NULL, -EINVAL);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++)
    check_duration_fails(bad[i], -EINVAL);
}

static void test_parse_uint(void **state) {
  uint64_t v;
  (void)state;

  v = SENTINEL;
  assert_int_equal(sr_parse_uint("0", 0, &v), 0);
  assert_true(v == 0);
  assert_int_equal(sr_parse_uint("42", 100, &v), 0);
  assert_true(v == 42);
  assert_int_equal(sr_parse_uint("0042", 100, &v), 0);
  assert_true(v == 42);
  /* max itself is allowed, max + 1 is not. */
  assert_int_equal(sr_parse_uint("100", 100, &v), 0);
  assert_true(v == 100);
  v = 7;
  assert_int_equal(sr_parse_uint("101", 100, &v), -ERANGE);
  assert_int_equal(sr_parse_uint("1", 0, &v), -ERANGE);
  /* The whole 64-bit range, and not one more. */
  assert_int_equal(sr_parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
  assert_true(v == UINT64_MAX);
  v = 7;
  assert_int_equal(sr_parse_uint("18446744073709551616", UINT64_MAX, &v),
                   -ERANGE);
  assert_int_equal(sr_parse_uint("18446744073709551620", UINT64_MAX, &v),
                   -ERANGE);
  assert_int_equal(sr_parse_uint("99999999999999999999", UINT64_MAX, &v),
                   -ERANGE);
  assert_int_equal(sr_parse_uint("184467440737095516150", UINT64_MAX, &v),
                   -ERANGE);
  assert_int_equal(sr_parse_uint("4294967296", UINT32_MAX, &v), -ERANGE);
  assert_int_equal(sr_parse_uint("4294967295", UINT32_MAX, &v), 0);
  assert_true(v == UINT32_MAX);
}

static void test_parse_uint_invalid(void **state) {
  static const char *const bad[] = {
      "", "-1", "+1", " 1", "1 ", "1k", "1s", "0x1", "1.0", "1e3", "1,000",
  };
  uint64_t v = SENTINEL;
  (void)state;

  assert_int_equal(sr_parse_uint(NULL, UINT64_MAX, &v), -EINVAL);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++) {
    int r = sr_parse_uint(bad[i], UINT64_MAX, &v);
    if (r != -EINVAL)
      fail_msg("sr_parse_uint(\"%s\") = %d, want -EINVAL", bad[i], r);
  }
}

static void test_parse_bool(void **state) {
  static const char *const yes[] = {"yes", "true", "1"};
  static const char *const no[] = {"no", "false", "0"};
  static const char *const bad[] = {
      "", "y", "n", "on", "off", "2", "01", " yes", "yes ", "truee", "-1",
  };
  bool b;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(yes); i++) {
    b = false;
    assert_int_equal(sr_parse_bool(yes[i], &b), 0);
    assert_true(b);
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(no); i++) {
    b = true;
    assert_int_equal(sr_parse_bool(no[i], &b), 0);
    assert_false(b);
  }
  assert_int_equal(sr_parse_bool(NULL, &b), -EINVAL);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++) {
    int r = sr_parse_bool(bad[i], &b);
    if (r != -EINVAL)
      fail_msg("sr_parse_bool(\"%s\") = %d, want -EINVAL", bad[i], r);
  }
}

static void test_format_size(void **state) {
  static const struct {
    uint64_t in;
    const char *want;
  } cases[] = {
      {0, "0B"},
      {1, "1B"},
      {300, "300B"},
      {1023, "1023B"},
      {1024, "1KiB"},
      {1536, "1.5KiB"},
      {UINT64_C(64) << 10, "64KiB"},
      {UINT64_C(1) << 20, "1MiB"},
      {UINT64_C(512) << 20, "512MiB"},
      {UINT64_C(1) << 30, "1GiB"},
      {UINT64_C(3) << 29, "1.5GiB"},
      {UINT64_C(1) << 40, "1TiB"},
      {(UINT64_C(5) << 40) / 2, "2.5TiB"},
      {UINT64_C(2048) << 40, "2048TiB"},
      {LIMIT, "4194304TiB"},
  };
  char buf[64];
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
    memset(buf, 'X', sizeof(buf));
    sr_format_size(cases[i].in, buf, sizeof(buf));
    assert_string_equal(buf, cases[i].want);
  }
}

static void test_format_size_round_trip(void **state) {
  static const uint64_t exact[] = {
      0,
      1,
      1023,
      1024,
      UINT64_C(7) << 10,
      UINT64_C(512) << 20,
      UINT64_C(3) << 30,
      UINT64_C(1) << 40,
      LIMIT,
  };
  char buf[64];
  uint64_t v;
  (void)state;

  /* What --explain prints for an exact value reads back as that value. */
  for (size_t i = 0; i < SR_ARRAY_SIZE(exact); i++) {
    sr_format_size(exact[i], buf, sizeof(buf));
    v = SENTINEL;
    assert_int_equal(sr_parse_size(buf, &v), 0);
    assert_true(v == exact[i]);
  }
}

static void test_format_size_truncates(void **state) {
  char buf[4];
  (void)state;

  memset(buf, 'X', sizeof(buf));
  sr_format_size(UINT64_C(512) << 20, buf, sizeof(buf));
  assert_string_equal(buf, "512");
  sr_format_size(UINT64_C(512) << 20, buf, 1);
  assert_string_equal(buf, "");
}

static void test_format_duration(void **state) {
  static const struct {
    uint64_t in;
    const char *want;
  } cases[] = {
      {0, "0s"},        {1, "1ms"},        {250, "250ms"},     {999, "999ms"},
      {1000, "1s"},     {1500, "1500ms"},  {30000, "30s"},     {59000, "59s"},
      {60000, "1m"},    {61000, "61s"},    {90000, "90s"},     {300000, "5m"},
      {3540000, "59m"}, {3600000, "1h"},   {3601000, "3601s"}, {5400000, "90m"},
      {7200000, "2h"},  {86400000, "24h"},
  };
  char buf[64];
  uint64_t v;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
    memset(buf, 'X', sizeof(buf));
    sr_format_duration_ms(cases[i].in, buf, sizeof(buf));
    assert_string_equal(buf, cases[i].want);
    /* And it reads back as the same value. */
    v = SENTINEL;
    assert_int_equal(sr_parse_duration_ms(buf, &v), 0);
    assert_true(v == cases[i].in);
  }
  memset(buf, 'X', sizeof(buf));
  sr_format_duration_ms(1500, buf, 3);
  assert_string_equal(buf, "15");
}

static void test_valid_id(void **state) {
  static const char *const good[] = {
      "a",
      "Z",
      "0",
      "tenant-1",
      "a.b_c-D",
      "A1.b2",
      "x-",
      "x.",
      "x_",
      "9.a.b.c",
      "exec_2024-01-01.run",
  };
  static const char *const bad[] = {
      "",          ".",     "..",   ".a",  "-a", "_a",  "a..b",
      "a..",       "a/b",   "a b",  " a",  "a ", "a:b", "a\nb",
      "a\t",       "a\x7f", "a@b",  "a+b", "a~", "a*",  "\xc3\xa9",
      "a\xc3\xa9", "a\\b",  "a%2f", "a,b",
  };
  char *s;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(good); i++)
    if (!sr_valid_id(good[i]))
      fail_msg("\"%s\" should be a valid id", good[i]);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++)
    if (sr_valid_id(bad[i]))
      fail_msg("\"%s\" should not be a valid id", bad[i]);
  assert_false(sr_valid_id(NULL));

  /* One leading character and up to 63 more: 64 in all. */
  s = repeat('a', 64);
  assert_true(sr_valid_id(s));
  s[63] = '.';
  assert_true(sr_valid_id(s));
  s[62] = '.';
  assert_false(sr_valid_id(s));
  free(s);
  s = repeat('a', 65);
  assert_false(sr_valid_id(s));
  free(s);
}

static void test_valid_hex(void **state) {
  (void)state;
  assert_true(sr_valid_hex("", 0));
  assert_true(sr_valid_hex("0", 1));
  assert_true(sr_valid_hex("0123456789abcdef", 16));
  assert_true(sr_valid_hex(HEX64, 64));

  assert_false(sr_valid_hex(NULL, 0));
  assert_false(sr_valid_hex(NULL, 64));
  /* Exactly len digits: shorter and longer strings fail. */
  assert_false(sr_valid_hex(HEX64, 63));
  assert_false(sr_valid_hex(HEX64, 65));
  assert_false(sr_valid_hex("", 1));
  assert_false(sr_valid_hex("0", 0));
  /* Lowercase only. */
  assert_false(sr_valid_hex("0123456789ABCDEF", 16));
  assert_false(sr_valid_hex("0123456789abcdeF", 16));
  assert_false(sr_valid_hex("g", 1));
  assert_false(sr_valid_hex("0x12", 4));
  assert_false(sr_valid_hex("12 4", 4));
  assert_false(sr_valid_hex("12-4", 4));
  assert_false(sr_valid_hex("1234\n", 5));
}

static void test_valid_filename(void **state) {
  static const char *const good[] = {
      "a",   "file.txt",    "...", ".hidden", "..x", "x..",
      "a b", "caf\xc3\xa9", "-rf", "a:b",     "~",   "a\\b",
  };
  static const char *const bad[] = {
      "",     ".",    "..",   "/",     "a/b",  "a/",   "/a",      "../a",
      "a\tb", "a\nb", "\x01", "a\x7f", "\x1f", "a\rb", "\x1b[0m",
  };
  char *s;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(good); i++)
    if (!sr_valid_filename(good[i]))
      fail_msg("\"%s\" should be a valid file name", good[i]);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++)
    if (sr_valid_filename(bad[i]))
      fail_msg("\"%s\" should not be a valid file name", bad[i]);
  assert_false(sr_valid_filename(NULL));

  /* At most 255 bytes. */
  s = repeat('x', 255);
  assert_true(sr_valid_filename(s));
  free(s);
  s = repeat('x', 256);
  assert_false(sr_valid_filename(s));
  free(s);
}

static void test_valid_abs_path(void **state) {
  static const char *const good[] = {
      "/",        "/usr", "/etc/ssl/certs/ca.crt", "/a b",     "/...",
      "/.hidden", "/x..", "/caf\xc3\xa9",          "/opt/a:b", "/workspaces",
      "/tmpdata",
  };
  static const char *const bad[] = {
      "",        "usr",   "./usr", "//",       "//usr",  "/usr/",    "/usr//",
      "/a//b",   "/.",    "/..",   "/a/.",     "/a/..",  "/a/./b",   "/a/../b",
      "/../etc", "/a\tb", "/a\nb", "/\x1b[0m", "/a\x7f", "/etc/x\r", "~/x",
  };
  char *s, *comp;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(good); i++)
    if (!sr_valid_abs_path(good[i]))
      fail_msg("\"%s\" should be a valid absolute path", good[i]);
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++)
    if (sr_valid_abs_path(bad[i]))
      fail_msg("bad[%zu] should not be a valid absolute path", i);
  assert_false(sr_valid_abs_path(NULL));

  /* A component of at most 255 bytes (NAME_MAX), anywhere in the path. */
  comp = repeat('x', 255);
  assert_int_not_equal(asprintf(&s, "/opt/%s/y", comp), -1);
  assert_true(sr_valid_abs_path(s));
  free(s);
  free(comp);
  comp = repeat('x', 256);
  assert_int_not_equal(asprintf(&s, "/opt/%s/y", comp), -1);
  assert_false(sr_valid_abs_path(s));
  free(s);
  assert_int_not_equal(asprintf(&s, "/%s", comp), -1);
  assert_false(sr_valid_abs_path(s));
  free(s);
  free(comp);

  /* Shorter than PATH_MAX (4096 with its NUL): 4095 bytes pass. */
  s = repeat('/', 4095);
  for (size_t i = 1; i < 4095; i += 2)
    s[i] = 'a'; /* "/a/a/.../a" of 4095 bytes ends in 'a' */
  s[4094] = 'a';
  assert_true(sr_valid_abs_path(s));
  free(s);
  s = repeat('/', 4096);
  for (size_t i = 1; i < 4096; i += 2)
    s[i] = 'a';
  assert_false(sr_valid_abs_path(s));
  free(s);
}

static void test_path_at_or_below(void **state) {
  (void)state;

  assert_true(sr_path_at_or_below("/tmp", "/tmp"));
  assert_true(sr_path_at_or_below("/tmp/x", "/tmp"));
  assert_true(sr_path_at_or_below("/tmp/x/y", "/tmp/x"));
  assert_false(sr_path_at_or_below("/tmpdata", "/tmp"));
  assert_false(sr_path_at_or_below("/tm", "/tmp"));
  assert_false(sr_path_at_or_below("/", "/tmp"));
  assert_false(sr_path_at_or_below("/etc", "/etc/ssl"));
  /* Everything is below the root. */
  assert_true(sr_path_at_or_below("/", "/"));
  assert_true(sr_path_at_or_below("/usr", "/"));
  assert_true(sr_path_at_or_below("/usr/lib", "/"));
}

static void test_input_name_check(void **state) {
  static const char *const good[] = {
      "doc.pdf",
      "materials/doc.pdf",
      "a/b",
      "bundle.txt",
      "bundles/x",
      "x/bundle",
      "..a",
      "a..",
      ".hidden",
      "dir/.hidden",
      "caf\xc3\xa9.txt",
  };
  static const struct {
    const char *name, *why;
  } bad[] = {
      {"", "empty"},
      {"/etc/passwd", "absolute"},
      {"/", "absolute"},
      {"..", "'..'"},
      {".", "'.'"},
      {"../x", "'..'"},
      {"a/..", "'..'"},
      {"a/./b", "'.'"},
      {"a//b", "empty component"},
      {"a/", "empty component"},
      {"a/b/c", "more than one directory level"},
      {"a/b/", "empty component"},
      {"bundle", "reserved"},
      {"bundle/x", "reserved"},
      {"a\nb", "control character"},
      {"a/\x1b[31m", "control character"},
      {"invoice\xe2\x80\xae"
       "fdp.exe",
       "bidirectional"},
      {"d/\xe2\x81\xa6x", "bidirectional"},
      {"a\xe2\x80\xa8"
       "b",
       "line separator"},
      {"caf\xe9.txt", "not UTF-8"},
      {"d/\xff\xfe", "not UTF-8"},
  };
  char longname[300];
  const char *why = NULL;
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(good); i++) {
    if (sr_input_name_check(good[i], &why) != 0)
      fail_msg("'%s' refused: %s", good[i], why);
    assert_null(why);
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++) {
    why = NULL;
    assert_int_equal(sr_input_name_check(bad[i].name, &why), -EINVAL);
    assert_non_null(why);
    if (!strstr(why, bad[i].why))
      fail_msg("'%s': '%s' lacks '%s'", bad[i].name, why, bad[i].why);
  }
  assert_int_equal(sr_input_name_check(NULL, &why), -EINVAL);
  memset(longname, 'a', 256);
  longname[256] = '\0';
  assert_int_equal(sr_input_name_check(longname, &why), -EINVAL);
  assert_non_null(strstr(why, "255"));
  longname[255] = '\0';
  assert_int_equal(sr_input_name_check(longname, &why), 0);
}

static void test_printable(void **state) {
  char buf[12];
  (void)state;

  assert_string_equal(sr_printable("plain", buf, sizeof(buf)), "plain");
  assert_string_equal(sr_printable("a\x1b[31mb\n", buf, sizeof(buf)),
                      "a?[31mb?");
  assert_string_equal(sr_printable("0123456789a", buf, sizeof(buf)),
                      "0123456789a");
  assert_string_equal(sr_printable("0123456789ab", buf, sizeof(buf)),
                      "01234567...");
  assert_string_equal(sr_printable(NULL, buf, sizeof(buf)), "");
}

static void test_has_control_chars(void **state) {
  static const char *const clean[] = {
      "",     "plain text", " ",           "~", "!\"#$%&'()*+,-./",
      "\x80", "\xff",       "caf\xc3\xa9",
  };
  static const char *const dirty[] = {
      "\x01", "\x1f", "a\tb", "\n", "line\r", "\x1b[31m", "\x7f", "ab\x7f",
  };
  (void)state;

  for (size_t i = 0; i < SR_ARRAY_SIZE(clean); i++)
    if (sr_has_control_chars(clean[i]))
      fail_msg("clean[%zu] reported as having control characters", i);
  for (size_t i = 0; i < SR_ARRAY_SIZE(dirty); i++)
    if (!sr_has_control_chars(dirty[i]))
      fail_msg("dirty[%zu] not reported as having control characters", i);

  /* Every byte below 0x20 and 0x7f itself; nothing else. */
  for (unsigned c = 1; c < 256; c++) {
    char s[3] = {'a', (char)c, '\0'};
    bool want = c < 0x20 || c == 0x7f;
    if (sr_has_control_chars(s) != want)
      fail_msg("byte 0x%02x: got %d, want %d", c, !want, want);
  }
}

static void test_edit_distance(void **state) {
  (void)state;
  assert_int_equal(sr_edit_distance("memory", "memory"), 0);
  assert_int_equal(sr_edit_distance("memroy", "memory"), 1);  /* swap */
  assert_int_equal(sr_edit_distance("timout", "timeout"), 1); /* insert */
  assert_int_equal(sr_edit_distance("memoryy", "memory"), 1); /* delete */
  assert_int_equal(sr_edit_distance("pods", "pids"), 1);      /* subst */
  assert_int_equal(sr_edit_distance("", "abc"), 3);
  assert_int_equal(sr_edit_distance("abc", ""), 3);
  assert_int_equal(sr_edit_distance("kitten", "sitting"), 3);
  /* Optimal string alignment: "ca" -> "abc" is 3, not Damerau's 2. */
  assert_int_equal(sr_edit_distance("ca", "abc"), 3);
  {
    char big[70];
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_true(sr_edit_distance(big, "a") == SIZE_MAX);
  }
}

static void test_nearest(void **state) {
  static const char *const names[] = {"memory", "cpu-seconds", "timeout",
                                      "pids", "log-cap"};
  struct sr_nearest n;

  (void)state;
  sr_nearest_init(&n, "memroy");
  for (size_t i = 0; i < 5; i++)
    sr_nearest_offer(&n, names[i]);
  assert_string_equal(n.best, "memory");
  sr_nearest_init(&n, "timout");
  for (size_t i = 0; i < 5; i++)
    sr_nearest_offer(&n, names[i]);
  assert_string_equal(n.best, "timeout");
  /* Nothing close: no suggestion rather than a wild one. */
  sr_nearest_init(&n, "frobnicate");
  for (size_t i = 0; i < 5; i++)
    sr_nearest_offer(&n, names[i]);
  assert_null(n.best);
  /* Short names allow one edit only. */
  sr_nearest_init(&n, "pd");
  sr_nearest_offer(&n, "pids");
  assert_null(n.best);
  /* An exact match is not a typo. */
  sr_nearest_init(&n, "pids");
  sr_nearest_offer(&n, "pids");
  assert_null(n.best);
}

static void test_hex(void **state) {
  static const unsigned char in[] = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff, 0x10};
  unsigned char all[256];
  char out[2 * 256 + 2];
  (void)state;

  memset(out, 'X', sizeof(out));
  sr_hex(in, sizeof(in), out);
  assert_string_equal(out, "00017f80abff10");
  /* 2n + 1 bytes written, no more. */
  assert_int_equal(out[2 * sizeof(in) + 1], 'X');

  memset(out, 'X', sizeof(out));
  sr_hex(in, 0, out);
  assert_string_equal(out, "");
  assert_int_equal(out[1], 'X');

  for (unsigned i = 0; i < 256; i++)
    all[i] = (unsigned char)i;
  sr_hex(all, sizeof(all), out);
  assert_int_equal(strlen(out), 512);
  assert_true(sr_valid_hex(out, 512));
  for (unsigned i = 0; i < 256; i++) {
    char want[3];
    snprintf(want, sizeof(want), "%02x", i);
    assert_memory_equal(out + 2 * i, want, 2);
  }
}

static void check_uuid(const char *u) {
  assert_int_equal(strlen(u), 36);
  for (size_t i = 0; i < 36; i++) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      assert_int_equal(u[i], '-');
      continue;
    }
    if (!strchr("0123456789abcdef", u[i]) || u[i] == '\0')
      fail_msg("uuid %s: '%c' at %zu is not lowercase hex", u, u[i], i);
  }
  /* Version 4 and the RFC 4122 variant (10xx). */
  assert_int_equal(u[14], '4');
  assert_non_null(strchr("89ab", u[19]));
}

static void test_random_uuid(void **state) {
  char a[37], b[37];
  (void)state;

  memset(a, 'X', sizeof(a));
  memset(b, 'X', sizeof(b));
  assert_int_equal(sr_random_uuid(a), 0);
  assert_int_equal(sr_random_uuid(b), 0);
  check_uuid(a);
  check_uuid(b);
  assert_string_not_equal(a, b);

  /* The fixed bits hold every time, whatever the random bytes are. */
  for (int i = 0; i < 256; i++) {
    assert_int_equal(sr_random_uuid(a), 0);
    check_uuid(a);
  }
}

/* The sample of a stream of names: all of a short one, in order; of a
 * long one, max distinct names of it, the first and the last with their
 * chance (4/100 each time: missed in 400 samples with (0.96)^400, 8e-8). */
static void test_name_sample(void **state) {
  struct sr_name_sample s;
  char name[16];
  bool first = false, last = false, replaced = false;
  (void)state;

  assert_int_equal(sr_name_sample_init(&s, 4), 0);
  sr_name_sample_offer(&s, "a");
  sr_name_sample_offer(&s, "b");
  assert_int_equal(sr_name_sample_count(&s), 2);
  assert_string_equal(sr_name_sample_get(&s, 0), "a");
  assert_string_equal(sr_name_sample_get(&s, 1), "b");
  sr_name_sample_done(&s);
  assert_null(s.names);

  for (int k = 0; k < 400; k++) {
    assert_int_equal(sr_name_sample_init(&s, 4), 0);
    for (int i = 0; i < 100; i++) {
      snprintf(name, sizeof(name), "n%d", i);
      sr_name_sample_offer(&s, name);
    }
    assert_int_equal(sr_name_sample_count(&s), 4);
    for (unsigned i = 0; i < 4; i++) {
      const char *n = sr_name_sample_get(&s, i);
      int v = atoi(n + 1);

      assert_int_equal(n[0], 'n');
      assert_true(v >= 0 && v < 100);
      for (unsigned j = 0; j < i; j++)
        assert_string_not_equal(n, sr_name_sample_get(&s, j));
      first |= v == 0;
      last |= v == 99;
      replaced |= v >= 4;
    }
    sr_name_sample_done(&s);
  }
  assert_true(first);
  assert_true(last);
  assert_true(replaced);

  /* Each of 10 names kept with the same chance, 4/10: over 40,000
   * samples 16,000 times each, give or take 98 (one standard deviation);
   * a reservoir that favoured the last names by one place (4/9 for the
   * last) would keep it 17,778 times. */
  {
    unsigned count[10] = {0};

    for (int k = 0; k < 40000; k++) {
      assert_int_equal(sr_name_sample_init(&s, 4), 0);
      for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        sr_name_sample_offer(&s, name);
      }
      for (unsigned i = 0; i < 4; i++)
        count[atoi(sr_name_sample_get(&s, i) + 1)]++;
      sr_name_sample_done(&s);
    }
    for (int i = 0; i < 10; i++)
      assert_true(count[i] > 16000 - 600 && count[i] < 16000 + 600);
  }
}

static void test_strndup_safe(void **state) {
  const char *src = "hello";
  char *s;
  (void)state;

  s = sr_strndup_safe(src, 3);
  assert_non_null(s);
  assert_string_equal(s, "hel");
  free(s);

  s = sr_strndup_safe(src, 5);
  assert_string_equal(s, "hello");
  assert_ptr_not_equal(s, src);
  free(s);

  s = sr_strndup_safe(src, 100);
  assert_string_equal(s, "hello");
  free(s);

  s = sr_strndup_safe(src, 0);
  assert_non_null(s);
  assert_string_equal(s, "");
  free(s);

  s = sr_strndup_safe("", 10);
  assert_string_equal(s, "");
  free(s);

  assert_null(sr_strndup_safe(NULL, 10));
}

static void test_grow_array(void **state) {
  uint32_t *v = NULL;
  size_t cap = 0;
  (void)state;

  /* Index 0 of an empty array: the first size. */
  assert_int_equal(sr_grow_array((void **)&v, &cap, 0, sizeof(*v), 4), 0);
  assert_int_equal(cap, 4);
  for (size_t i = 0; i < cap; i++)
    assert_int_equal(v[i], 0);
  v[3] = 7;
  /* An index that fits: nothing changes. */
  assert_int_equal(sr_grow_array((void **)&v, &cap, 3, sizeof(*v), 4), 0);
  assert_int_equal(cap, 4);
  /* The next index doubles; far beyond, doubles until it fits.  What was
   * there stays, the new elements are zeroed. */
  assert_int_equal(sr_grow_array((void **)&v, &cap, 4, sizeof(*v), 4), 0);
  assert_int_equal(cap, 8);
  assert_int_equal(sr_grow_array((void **)&v, &cap, 40, sizeof(*v), 4), 0);
  assert_int_equal(cap, 64);
  assert_int_equal(v[3], 7);
  for (size_t i = 4; i < cap; i++)
    assert_int_equal(v[i], 0);
  /* A size that overflows is -ENOMEM, the array untouched. */
  assert_int_equal(
      sr_grow_array((void **)&v, &cap, SIZE_MAX - 1, sizeof(*v), 4), -ENOMEM);
  assert_int_equal(
      sr_grow_array((void **)&v, &cap, SIZE_MAX / 4, sizeof(*v), 4), -ENOMEM);
  assert_int_equal(cap, 64);
  assert_int_equal(v[3], 7);
  free(v);
}

static void test_strv(void **state) {
  struct sr_strv sv = {0};
  char buf[16];
  (void)state;

  assert_false(sr_strv_contains(&sv, "a"));
  assert_false(sr_strv_contains(&sv, ""));

  /* push copies: changing the caller's buffer changes nothing. */
  snprintf(buf, sizeof(buf), "alpha");
  assert_int_equal(sr_strv_push(&sv, buf), 0);
  assert_ptr_not_equal(sv.v[0], buf);
  snprintf(buf, sizeof(buf), "beta");
  assert_int_equal(sr_strv_push(&sv, buf), 0);
  buf[0] = 'X';
  assert_int_equal(sr_strv_push(&sv, ""), 0);

  assert_int_equal(sv.n, 3);
  assert_string_equal(sv.v[0], "alpha");
  assert_string_equal(sv.v[1], "beta");
  assert_string_equal(sv.v[2], "");
  assert_null(sv.v[3]); /* NULL-terminated */

  assert_true(sr_strv_contains(&sv, "alpha"));
  assert_true(sr_strv_contains(&sv, "beta"));
  assert_true(sr_strv_contains(&sv, ""));
  assert_false(sr_strv_contains(&sv, "Xeta"));
  assert_false(sr_strv_contains(&sv, "alph"));
  assert_false(sr_strv_contains(&sv, "alphab"));
  assert_false(sr_strv_contains(&sv, "ALPHA"));

  /* Duplicates are kept. */
  assert_int_equal(sr_strv_push(&sv, "alpha"), 0);
  assert_int_equal(sv.n, 4);
  assert_null(sv.v[4]);

  sr_strv_done(&sv);
  assert_null(sv.v);
  assert_int_equal(sv.n, 0);
  assert_false(sr_strv_contains(&sv, "alpha"));
  sr_strv_done(&sv); /* twice is harmless */

  /* Reusable after free, and grows past a few elements. */
  for (int i = 0; i < 100; i++) {
    snprintf(buf, sizeof(buf), "item%d", i);
    assert_int_equal(sr_strv_push(&sv, buf), 0);
    assert_int_equal(sv.n, (size_t)i + 1);
    assert_null(sv.v[sv.n]);
  }
  assert_true(sr_strv_contains(&sv, "item0"));
  assert_true(sr_strv_contains(&sv, "item99"));
  assert_false(sr_strv_contains(&sv, "item100"));
  assert_string_equal(sv.v[42], "item42");
  sr_strv_done(&sv);
  assert_null(sv.v);
  assert_int_equal(sv.n, 0);
}

/* The calendar arithmetic against the C library's, across leap days,
 * century years and the ends of months, and at random. */
/* A message longer than struct sr_error's msg keeps its start and its end
 * (what it says went wrong) around "...", never cutting a character. */
static void test_error_long_message(void **state) {
  struct sr_error e = {0};
  char path[1601];
  size_t len;

  (void)state;
  /* "é" (two bytes) 800 times: a cut at an even offset only. */
  for (size_t i = 0; i < 1600; i += 2)
    memcpy(path + i, "\xc3\xa9", 2);
  path[1600] = '\0';
  assert_int_equal(sr_error_set(&e, 125, 0, "config_invalid",
                                "/x%s/y.profile:2: unknown key 'k'", path),
                   -EINVAL);
  len = strlen(e.msg);
  assert_true(len <= sizeof(e.msg) - 1);
  assert_true(len >= sizeof(e.msg) - 5);
  assert_true(sr_utf8_valid(e.msg, len));
  assert_memory_equal(e.msg, "/x\xc3\xa9", 4);
  assert_non_null(strstr(e.msg, "..."));
  assert_string_equal(e.msg + len - strlen("/y.profile:2: unknown key 'k'"),
                      "/y.profile:2: unknown key 'k'");

  /* With an errno, its text is the end that stays. */
  sr_error_clear(&e);
  sr_error_set(&e, 125, ENAMETOOLONG, "bundle", "cannot open %s", path);
  len = strlen(e.msg);
  assert_true(sr_utf8_valid(e.msg, len));
  assert_string_equal(e.msg + len - strlen(": File name too long"),
                      ": File name too long");

  /* One that fits is whole. */
  sr_error_clear(&e);
  sr_error_set(&e, 125, ENOENT, "bundle", "cannot open %s", "/b");
  assert_string_equal(e.msg, "cannot open /b: No such file or directory");
}

static void test_format_rfc3339(void **state) {
  static const time_t fixed[] = {
      0,          59,         86399,      86400,       951782399,  951782400,
      951868800,  1078012800, 4107542399, 4107542400,  4107628800, 1709164800,
      1709251199, 1735689599, 1735689600, 253402300799};
  char got[32], want[48], date[24];
  struct timespec ts;
  struct tm tm;
  (void)state;

  srandom(12345);
  for (size_t i = 0; i < SR_ARRAY_SIZE(fixed) + 20000; i++) {
    ts.tv_sec = i < SR_ARRAY_SIZE(fixed)
                    ? fixed[i]
                    : (time_t)(((uint64_t)random() << 16 ^ (uint64_t)random()) %
                               253402300800ULL);
    ts.tv_nsec = (long)(i * 7919 % 1000000000);
    assert_non_null(gmtime_r(&ts.tv_sec, &tm));
    assert_true(strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) > 0);
    snprintf(want, sizeof(want), "%s.%06ldZ", date, ts.tv_nsec / 1000);
    sr_format_rfc3339(&ts, got);
    assert_string_equal(got, want);
  }
  ts.tv_sec = -1;
  ts.tv_nsec = 5000;
  sr_format_rfc3339(&ts, got);
  assert_string_equal(got, "1970-01-01T00:00:00.000000Z");
}

static void test_now_rfc3339(void **state) {
  char buf[32];
  struct tm tm = {0};
  int year, mon, day, hour, min, sec, usec;
  time_t before, after, t;
  struct timespec ts;
  (void)state;

  memset(buf, 'X', sizeof(buf));
  /* The clock sr_now_rfc3339 reads: time(2) reads the coarse one, which
   * can be a tick behind it across a second's boundary. */
  assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts), 0);
  before = ts.tv_sec;
  sr_now_rfc3339(buf);
  assert_int_equal(clock_gettime(CLOCK_REALTIME, &ts), 0);
  after = ts.tv_sec;

  /* YYYY-MM-DDTHH:MM:SS.uuuuuuZ */
  assert_int_equal(strlen(buf), 27);
  for (size_t i = 0; i < 27; i++) {
    char c = buf[i];
    switch (i) {
    case 4:
    case 7:
      assert_int_equal(c, '-');
      break;
    case 10:
      assert_int_equal(c, 'T');
      break;
    case 13:
    case 16:
      assert_int_equal(c, ':');
      break;
    case 19:
      assert_int_equal(c, '.');
      break;
    case 26:
      assert_int_equal(c, 'Z');
      break;
    default:
      if (c < '0' || c > '9')
        fail_msg("%s: '%c' at %zu is not a digit", buf, c, i);
    }
  }

  assert_int_equal(sscanf(buf, "%4d-%2d-%2dT%2d:%2d:%2d.%6dZ", &year, &mon,
                          &day, &hour, &min, &sec, &usec),
                   7);
  assert_in_range(mon, 1, 12);
  assert_in_range(day, 1, 31);
  assert_in_range(hour, 0, 23);
  assert_in_range(min, 0, 59);
  assert_in_range(sec, 0, 60);
  assert_in_range(usec, 0, 999999);

  /* UTC, and the current time. */
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  t = timegm(&tm);
  assert_true(t >= before);
  assert_true(t <= after);
}

static void test_now_mono_ms(void **state) {
  const struct timespec pause = {.tv_sec = 0, .tv_nsec = 25 * 1000000};
  uint64_t a, b, c;
  (void)state;

  a = sr_now_mono_ms();
  b = sr_now_mono_ms();
  assert_true(b >= a);
  assert_int_equal(nanosleep(&pause, NULL), 0);
  c = sr_now_mono_ms();
  assert_true(c >= b + 24);
  /* Milliseconds, not microseconds: a short pause is not hours long. */
  assert_true(c - b < 3600 * 1000);
}

/* UTF-8 validity: the well-formed forms only. */
static void test_utf8_valid(void **state) {
  (void)state;
  assert_true(sr_utf8_valid("", 0));
  assert_true(sr_utf8_valid("abc", 3));
  assert_true(sr_utf8_valid("caf\xc3\xa9", 5));
  assert_true(sr_utf8_valid("\xf0\x9f\x98\x80", 4));
  assert_false(sr_utf8_valid("caf\xe9", 4));          /* Latin-1 */
  assert_false(sr_utf8_valid("\xc0\xaf", 2));         /* overlong '/' */
  assert_false(sr_utf8_valid("\xed\xa0\x80", 3));     /* surrogate */
  assert_false(sr_utf8_valid("\xf4\x90\x80\x80", 4)); /* > U+10FFFF */
  assert_false(sr_utf8_valid("\xe2\x82", 2));         /* cut short */
}

/* Names for the record: what needs escaping, and how it is shown. */
static void test_name_escape(void **state) {
  static const struct {
    const char *in;
    size_t len;
    bool needs;
    const char *shown;
  } cases[] = {
      {"report.txt", 10, false, "report.txt"},
      {"caf\xc3\xa9 ab", 8, false, "caf\xc3\xa9 ab"},
      /* A backslash is escaped, so that no name reads as another's
       * escape: the four characters \xff are not the byte 0xff. */
      {"caf\xc3\xa9 a\\b", 9, true, "caf\xc3\xa9 a\\x5cb"},
      {"\\xff", 4, true, "\\x5cxff"},
      {"\xff", 1, true, "\\xff"},
      {"caf\xe9", 4, true, "caf\\xe9"},
      {"a\nb", 3, true, "a\\x0ab"},
      {"\x1b[2J", 4, true, "\\x1b[2J"},
      {"x\x7f", 2, true, "x\\x7f"},
      {"\xc2\x9b"
       "1m",
       4, true, "\\u009b1m"},
      {"evil\xe2\x80\xaetxt.exe", 14, true, "evil\\u202etxt.exe"},
      {"\xe2\x81\xa6x", 4, true, "\\u2066x"},
      {"line\xe2\x80\xa8sep", 10, true, "line\\u2028sep"},
      {"para\xe2\x80\xa9sep", 10, true, "para\\u2029sep"},
      {"\xff\xfe", 2, true, "\\xff\\xfe"},
  };
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char *e = sr_name_escape(cases[i].in, cases[i].len);
    assert_int_equal(sr_name_needs_escape(cases[i].in, cases[i].len),
                     cases[i].needs);
    assert_non_null(e);
    assert_string_equal(e, cases[i].shown);
    assert_true(sr_utf8_valid(e, strlen(e)));
    free(e);
  }
  /* Misleading, not to be created on the host: a control, a bidi
   * character, a line separator, and a byte 0x80 - 0x9f that is not UTF-8
   * (a C1 control on a terminal of 8-bit characters); other bytes that
   * are not UTF-8 only need escaping. */
  assert_true(sr_name_misleads("\x1b[2J", 4));
  assert_true(sr_name_misleads("evil\xe2\x80\xaetxt", 10));
  assert_true(sr_name_misleads("csi\x9b"
                               "2J",
                               6));
  assert_true(sr_name_misleads("\x80", 1));
  assert_false(sr_name_misleads("caf\xe9", 4));
  assert_false(sr_name_misleads("\xff\xfe", 2));
  assert_false(sr_name_misleads("caf\xc3\xa9", 5));
  assert_false(sr_name_misleads("a\\b", 3)); /* escaped, yet harvested */
}

/* Terminal escaping: controls and C1 never pass raw, whatever the chunk
 * boundaries; newlines and tabs do. */
static void test_term_escape(void **state) {
  static const char in[] = "ok\tline\n\x1b]52;c;cHduZWQ=\x07\r"
                           "\xc2\x9b"
                           "2J caf\xc3\xa9 \xe2\x82\xac \xe2\x80\xae"
                           "x\xe2\x80\xa8y \xff\xc3";
  static const char want[] = "ok\tline\n\\x1b]52;c;cHduZWQ=\\x07\\x0d"
                             "\\u009b2J caf\xc3\xa9 \xe2\x82\xac \\u202e"
                             "x\\u2028y \\xff\\xc3";
  const size_t n = sizeof(in) - 1;
  (void)state;
  /* Every way of cutting the input into two chunks gives the same text. */
  for (size_t cut = 0; cut <= n; cut++) {
    struct sr_term_escape st = {0};
    char out[SR_TERM_ESCAPE_MAX(sizeof(in)) * 2];
    size_t o = sr_term_escape(&st, in, cut, out);
    o += sr_term_escape(&st, in + cut, n - cut, out + o);
    o += sr_term_escape_flush(&st, out + o);
    out[o] = '\0';
    assert_string_equal(out, want);
  }
  /* One byte at a time, too. */
  {
    struct sr_term_escape st = {0};
    char out[SR_TERM_ESCAPE_MAX(sizeof(in)) * 2];
    size_t o = 0;
    for (size_t i = 0; i < n; i++)
      o += sr_term_escape(&st, in + i, 1, out + o);
    o += sr_term_escape_flush(&st, out + o);
    out[o] = '\0';
    assert_string_equal(out, want);
  }
}

/* A trust file is opened only when it is a regular file within bounds. */
/* sr_read_file_at: a regular file in one read of its size, a /proc file
 * (st_size 0) from a 64 KiB first read, growing past it; the bytes are
 * those sr_read_fd's 4 KiB reads get; max still refuses. */
static void test_read_file_at_sizes(void **state) {
  char path[] = "/tmp/sr-test-read-XXXXXX";
  char *a = NULL, *b = NULL;
  size_t la = 0, lb = 0;
  int fd;

  (void)state;
  fd = mkstemp(path);
  assert_true(fd >= 0);
  /* 200 KiB: past the first read of a /proc file and of sr_read_fd. */
  for (int i = 0; i < 200 * 1024 / 16; i++)
    assert_int_equal(write(fd, "0123456789abcde\n", 16), 16);
  assert_int_equal(sr_read_file_at(AT_FDCWD, path, 1 << 20, &a, &la), 0);
  assert_int_equal(la, 200 * 1024);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  assert_int_equal(sr_read_fd(fd, 1 << 20, &b, &lb), 0);
  assert_int_equal(lb, la);
  assert_memory_equal(a, b, la);
  assert_int_equal(a[la], '\0');
  free(a);
  free(b);
  assert_int_equal(sr_read_file_at(AT_FDCWD, path, 200 * 1024 - 1, &a, &la),
                   -EFBIG);
  close(fd);
  unlink(path);

  /* A /proc file: the same bytes as 4 KiB reads give. */
  assert_int_equal(
      sr_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 4 << 20, &a, &la), 0);
  fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  assert_int_equal(sr_read_fd(fd, 4 << 20, &b, &lb), 0);
  close(fd);
  assert_true(la > 0);
  assert_int_equal(la, lb);
  assert_memory_equal(a, b, la);
  free(a);
  free(b);
  /* One larger than the first read: /proc/self/smaps of a process with
   * enough mappings (a few hundred bytes each). */
  {
    void *maps[128];
    for (int i = 0; i < 128; i++) {
      maps[i] = mmap(NULL, 4096, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      assert_true(maps[i] != MAP_FAILED);
    }
    assert_int_equal(
        sr_read_file_at(AT_FDCWD, "/proc/self/smaps", 16 << 20, &a, &la), 0);
    assert_true(la > 64 * 1024);
    assert_int_equal(strlen(a), la);
    free(a);
    for (int i = 0; i < 128; i++)
      munmap(maps[i], 4096);
  }
}

/* sr_read_file_into: a file of up to size - 2 bytes in the caller's
 * buffer, NUL-terminated, the same bytes sr_read_file_at gives; one byte
 * more refused (-EFBIG), for a regular file (st_size) and a /proc file
 * (st_size 0, told by what the read fills); a final symlink, a directory
 * and a buffer too small for anything refused. */
static void test_read_file_into(void **state) {
  static const size_t sizes[] = {0, 1, 4093, 4094, 4095, 4096, 9000};
  char path[] = "/tmp/sr-test-into-XXXXXX";
  char dir[] = "/tmp/sr-test-into-dir-XXXXXX";
  char link[PATH_MAX + 8];
  char buf[4096], want[9000];
  char *heap = NULL;
  size_t len;

  (void)state;
  for (size_t i = 0; i < sizeof(want); i++)
    want[i] = (char)('a' + i % 26);
  for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    const size_t n = sizes[k];
    int fd;

    strcpy(path, "/tmp/sr-test-into-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, want, n), (ssize_t)n);
    close(fd);
    len = 12345;
    memset(buf, 'X', sizeof(buf));
    if (n <= sizeof(buf) - 2) {
      assert_int_equal(
          sr_read_file_into(AT_FDCWD, path, buf, sizeof(buf), &len), 0);
      assert_int_equal(len, n);
      assert_memory_equal(buf, want, n);
      assert_int_equal(buf[n], '\0');
    } else {
      assert_int_equal(
          sr_read_file_into(AT_FDCWD, path, buf, sizeof(buf), &len), -EFBIG);
      assert_int_equal(len, 12345);
    }
    unlink(path);
  }

  /* A /proc file: what sr_read_file_at reads; and one too long for the
   * buffer (st_size 0: the read fills it). */
  assert_int_equal(
      sr_read_file_into(AT_FDCWD, "/proc/self/stat", buf, sizeof(buf), &len),
      0);
  assert_int_equal(
      sr_read_file_at(AT_FDCWD, "/proc/self/stat", 4096, &heap, NULL), 0);
  /* The same process, a moment apart: the same pid and command. */
  assert_true(len > 0);
  assert_int_equal(strlen(buf), len);
  assert_non_null(strchr(heap, ')'));
  assert_memory_equal(buf, heap, strchr(heap, ')') - heap + 1);
  free(heap);
  assert_int_equal(
      sr_read_file_into(AT_FDCWD, "/proc/self/smaps", buf, sizeof(buf), &len),
      -EFBIG);

  /* Not a regular file, or not this one. */
  assert_non_null(mkdtemp(dir));
  assert_int_equal(sr_read_file_into(AT_FDCWD, dir, buf, sizeof(buf), &len),
                   -EINVAL);
  snprintf(link, sizeof(link), "%s/l", dir);
  assert_int_equal(symlink("/proc/self/stat", link), 0);
  assert_int_equal(sr_read_file_into(AT_FDCWD, link, buf, sizeof(buf), &len),
                   -ELOOP);
  assert_int_equal(unlink(link), 0);
  assert_int_equal(rmdir(dir), 0);
  assert_int_equal(sr_read_file_into(AT_FDCWD, "/proc/self/stat", buf, 1, &len),
                   -EINVAL);
}

/* Around the 16 KiB a read fills on the stack before it goes to the heap:
 * the same bytes, NUL-terminated, and a file one byte over `max` refused,
 * whether the whole file fits there or not; a pipe, which gives its bytes
 * in pieces, the same. */
static void test_read_sizes_around_stack(void **state) {
  static const size_t sizes[] = {0,     1,     2047,  2048,  4095,  4096,
                                 16383, 16384, 16385, 32768, 40000, 70000};
  char path[] = "/tmp/sr-test-read-XXXXXX";
  char *want = malloc(70000), *got = NULL;
  (void)state;

  assert_non_null(want);
  for (size_t i = 0; i < 70000; i++)
    want[i] = (char)('a' + i % 26);
  for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    const size_t n = sizes[k];
    size_t len = 1;
    int fd = mkstemp(path);
    int pfd[2];

    assert_true(fd >= 0);
    assert_int_equal(write(fd, want, n), (ssize_t)n);
    assert_int_equal(sr_read_file_at(AT_FDCWD, path, n, &got, &len), 0);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
    assert_int_equal(got[n], '\0');
    free(got);
    got = NULL;
    if (n > 0)
      assert_int_equal(sr_read_file_at(AT_FDCWD, path, n - 1, &got, &len),
                       -EFBIG);
    assert_null(got);
    /* The one-read reader of pseudo files: the same text, the same cap. */
    assert_int_equal(sr_read_pseudo_file_at(AT_FDCWD, path, n, &got), 0);
    assert_int_equal(strlen(got), n);
    assert_memory_equal(got, want, n);
    free(got);
    got = NULL;
    if (n > 0)
      assert_int_equal(sr_read_pseudo_file_at(AT_FDCWD, path, n - 1, &got),
                       -EFBIG);
    assert_null(got);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    assert_int_equal(sr_read_fd(fd, n, &got, &len), 0);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
    free(got);
    got = NULL;
    close(fd);
    unlink(path);
    snprintf(path, sizeof(path), "/tmp/sr-test-read-XXXXXX");

    /* A pipe of at most 64 KiB (its default size) written in full first. */
    if (n > 65536)
      continue;
    assert_int_equal(pipe(pfd), 0);
    assert_int_equal(write(pfd[1], want, n), (ssize_t)n);
    close(pfd[1]);
    assert_int_equal(sr_read_fd(pfd[0], n, &got, &len), 0);
    assert_int_equal(len, n);
    assert_memory_equal(got, want, n);
    assert_int_equal(got[n], '\0');
    free(got);
    got = NULL;
    close(pfd[0]);
  }
  free(want);
}

static void test_open_regular(void **state) {
  char dir[] = "/tmp/skillrun-test-open.XXXXXX", p[64], q[64], why[128];
  struct stat st;
  int fd;
  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(p, sizeof(p), "%s/f", dir);
  fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "12345", 5), 5);
  close(fd);
  fd = sr_open_regular(AT_FDCWD, p, 5, &st);
  assert_true(fd >= 0);
  assert_int_equal(st.st_size, 5);
  close(fd);
  assert_int_equal(sr_open_regular(AT_FDCWD, p, 4, &st), -EFBIG);
  assert_non_null(strstr(sr_open_regular_why(-EFBIG, &st, 4, why, sizeof(why)),
                         "too large (5 bytes, at most 4)"));
  snprintf(q, sizeof(q), "%s/l", dir);
  assert_int_equal(symlink(p, q), 0);
  assert_int_equal(sr_open_regular(AT_FDCWD, q, 5, NULL), -ELOOP);
  assert_int_equal(sr_open_regular_errno(-ELOOP), 0);
  snprintf(q, sizeof(q), "%s/p", dir);
  assert_int_equal(mkfifo(q, 0600), 0);
  assert_int_equal(sr_open_regular(AT_FDCWD, q, 5, &st), -SR_ENOTREG);
  assert_string_equal(
      sr_open_regular_why(-SR_ENOTREG, &st, 5, why, sizeof(why)),
      "is a FIFO, not a regular file");
  assert_int_equal(sr_open_regular(AT_FDCWD, dir, 5, &st), -SR_ENOTREG);
  snprintf(q, sizeof(q), "%s/none", dir);
  assert_int_equal(sr_open_regular(AT_FDCWD, q, 5, NULL), -ENOENT);
  assert_int_equal(sr_open_regular_errno(-ENOENT), ENOENT);
  assert_int_equal(sr_rm_rf_at(AT_FDCWD, dir), 0);
}

/* sr_dir_next: every entry once (more of them than one getdents64 buffer
 * holds), "." and ".." left out, the types the file system gives, the end
 * said again when asked again, a non-directory refused; and sr_rm_rf_at,
 * which reads with it, removes a tree of files, links and directories
 * without following a link out of it. */
static void test_dir_entries(void **state) {
  enum { N = 700 }; /* names of 40 bytes: about 34 KiB of records */
  char dir[] = "/tmp/skillrun-test-dir.XXXXXX", p[PATH_MAX],
       out[] = "/tmp/skillrun-test-dir-out.XXXXXX";
  static bool seen[N];
  struct sr_dir d;
  const char *name;
  unsigned char type;
  unsigned files = 0, dirs = 0, links = 0;
  struct stat st;
  int fd, n;
  (void)state;

  assert_non_null(mkdtemp(dir));
  assert_non_null(mkdtemp(out));
  for (int i = 0; i < N; i++) {
    snprintf(p, sizeof(p), "%s/%036d", dir, i);
    fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
  }
  snprintf(p, sizeof(p), "%s/sub", dir);
  assert_int_equal(mkdir(p, 0700), 0);
  fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(fd >= 0);
  assert_int_equal(mknodat(fd, "f", S_IFREG | 0600, 0), 0);
  assert_int_equal(fchmod(fd, 0500), 0); /* rm_rf makes it writable */
  close(fd);
  snprintf(p, sizeof(p), "%s/link", dir);
  assert_int_equal(symlink(out, p), 0); /* a link out: never followed */
  snprintf(p, sizeof(p), "%s/kept", out);
  fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  close(fd);

  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(fd >= 0);
  sr_dir_init(&d, fd);
  while ((n = sr_dir_next(&d, &name, &type)) > 0) {
    assert_string_not_equal(name, ".");
    assert_string_not_equal(name, "..");
    if (!strcmp(name, "sub")) {
      assert_true(type == DT_DIR || type == DT_UNKNOWN);
      dirs++;
    } else if (!strcmp(name, "link")) {
      assert_true(type == DT_LNK || type == DT_UNKNOWN);
      links++;
    } else {
      int i = atoi(name);
      assert_true(i >= 0 && i < N);
      assert_false(seen[i]);
      seen[i] = true;
      files++;
    }
  }
  assert_int_equal(n, 0);
  assert_int_equal(sr_dir_next(&d, &name, &type), 0);
  assert_int_equal(files, N);
  assert_int_equal(dirs, 1);
  assert_int_equal(links, 1);
  close(fd);

  snprintf(p, sizeof(p), "%s/%036d", dir, 0);
  fd = open(p, O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  sr_dir_init(&d, fd);
  assert_int_equal(sr_dir_next(&d, &name, &type), -ENOTDIR);
  close(fd);

  assert_int_equal(sr_rm_rf_at(AT_FDCWD, dir), 0);
  assert_int_equal(lstat(dir, &st), -1);
  assert_int_equal(errno, ENOENT);
  snprintf(p, sizeof(p), "%s/kept", out);
  assert_int_equal(lstat(p, &st), 0);
  assert_int_equal(sr_rm_rf_at(AT_FDCWD, out), 0);
}

static ino_t group_ok_ino;
static bool group_ok_answer;
static bool group_ok(int fd, const struct stat *st) {
  struct stat own;

  assert_int_equal(fstat(fd, &own), 0);
  assert_int_equal(own.st_ino, st->st_ino);
  group_ok_ino = st->st_ino;
  return group_ok_answer;
}

/* sr_check_dir_chain: every directory up to / is root's or the owner's
 * and writable by nobody else; a sticky one passes above the first. */
static void test_dir_chain(void **state) {
  char base[] = "/tmp/sr-chain.XXXXXX", sub[64], real[PATH_MAX];
  struct sr_dir_fault f;
  struct stat st;
  int fd, top;

  (void)state;
  /* Its directory is made in /tmp, whose own mode passes as a sticky
   * directory of root's above the one checked. */
  assert_int_equal(stat("/tmp", &st), 0);
  if (st.st_uid != 0 || !(st.st_mode & S_ISVTX)) {
    print_message("/tmp is not a sticky directory of root's: not tested\n");
    return;
  }
  assert_non_null(mkdtemp(base));
  assert_non_null(realpath(base, real));
  snprintf(sub, sizeof(sub), "%s/a", base);
  assert_int_equal(mkdir(sub, 0755), 0);
  fd = open(sub, O_PATH | O_DIRECTORY | O_CLOEXEC);
  top = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
  assert_true(fd >= 0 && top >= 0);
  assert_int_equal(stat(base, &st), 0);

  assert_int_equal(sr_check_dir_chain(fd, geteuid(), NULL, 0, &f), 0);
  /* Writable by others above: named. */
  assert_int_equal(chmod(base, 0777), 0);
  assert_int_equal(sr_check_dir_chain(fd, geteuid(), NULL, 0, &f), -EPERM);
  assert_int_equal(f.why, SR_DIR_OTHERS);
  assert_string_equal(f.path, real);
  /* Sticky: fine above the file's own directory, not as it. */
  assert_int_equal(chmod(base, 01777), 0);
  assert_int_equal(sr_check_dir_chain(fd, geteuid(), NULL, 0, &f), 0);
  assert_int_equal(sr_check_dir_chain(top, geteuid(), NULL, 0, &f), -EPERM);
  assert_int_equal(f.why, SR_DIR_OTHERS);
  /* ... unless asked (a directory in it: a workspace root). */
  assert_int_equal(
      sr_check_dir_chain(top, geteuid(), NULL, SR_CHAIN_STICKY_HERE, &f), 0);
  /* Group write: only when group_ok says so, asked about that one. */
  assert_int_equal(chmod(base, 0770), 0);
  assert_int_equal(sr_check_dir_chain(fd, geteuid(), NULL, 0, &f), -EPERM);
  assert_int_equal(f.why, SR_DIR_GROUP);
  assert_int_equal(f.mode & 07777, 0770);
  group_ok_answer = false;
  assert_int_equal(sr_check_dir_chain(fd, geteuid(), group_ok, 0, &f), -EPERM);
  assert_int_equal(group_ok_ino, st.st_ino);
  group_ok_answer = true;
  assert_int_equal(sr_check_dir_chain(fd, geteuid(), group_ok, 0, &f), 0);
  assert_int_equal(chmod(base, 0700), 0);
  /* Another user's directory above. */
  if (geteuid() == 0) {
    assert_int_equal(chown(base, 65533, 65533), 0);
    assert_int_equal(sr_check_dir_chain(fd, 0, NULL, 0, &f), -EPERM);
    assert_int_equal(f.why, SR_DIR_OWNER);
    assert_int_equal(f.uid, 65533);
    assert_int_equal(sr_check_dir_chain(fd, 65533, NULL, 0, &f), 0);
  }
  close(fd);
  close(top);
  assert_int_equal(rmdir(sub), 0);
  assert_int_equal(rmdir(base), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_size_plain),
      cmocka_unit_test(test_dir_chain),
      cmocka_unit_test(test_parse_size_suffixes),
      cmocka_unit_test(test_parse_size_limit),
      cmocka_unit_test(test_parse_size_invalid),
      cmocka_unit_test(test_parse_duration),
      cmocka_unit_test(test_parse_duration_limit),
      cmocka_unit_test(test_parse_duration_invalid),
      cmocka_unit_test(test_parse_uint),
      cmocka_unit_test(test_parse_uint_invalid),
      cmocka_unit_test(test_parse_bool),
      cmocka_unit_test(test_format_size),
      cmocka_unit_test(test_format_size_round_trip),
      cmocka_unit_test(test_format_size_truncates),
      cmocka_unit_test(test_format_duration),
      cmocka_unit_test(test_edit_distance),
      cmocka_unit_test(test_nearest),
      cmocka_unit_test(test_valid_id),
      cmocka_unit_test(test_valid_hex),
      cmocka_unit_test(test_valid_filename),
      cmocka_unit_test(test_valid_abs_path),
      cmocka_unit_test(test_path_at_or_below),
      cmocka_unit_test(test_input_name_check),
      cmocka_unit_test(test_printable),
      cmocka_unit_test(test_has_control_chars),
      cmocka_unit_test(test_utf8_valid),
      cmocka_unit_test(test_name_escape),
      cmocka_unit_test(test_term_escape),
      cmocka_unit_test(test_read_file_at_sizes),
      cmocka_unit_test(test_read_sizes_around_stack),
      cmocka_unit_test(test_open_regular),
      cmocka_unit_test(test_dir_entries),
      cmocka_unit_test(test_read_file_into),
      cmocka_unit_test(test_hex),
      cmocka_unit_test(test_random_uuid),
      cmocka_unit_test(test_name_sample),
      cmocka_unit_test(test_strndup_safe),
      cmocka_unit_test(test_grow_array),
      cmocka_unit_test(test_strv),
      cmocka_unit_test(test_error_long_message),
      cmocka_unit_test(test_format_rfc3339),
      cmocka_unit_test(test_now_rfc3339),
      cmocka_unit_test(test_now_mono_ms),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("util", tests, NULL, NULL);
}
