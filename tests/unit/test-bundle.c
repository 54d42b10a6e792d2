/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <cmocka.h>

#include <openssl/evp.h>

#include "bundle.h"
#include "error.h"
#include "fdutil.h"
#include "util.h"

/* ---------------------------------------------------------------- helpers */

struct tree {
  char src[64];
  char dst[64];
};

static void xwrite(const char *root, const char *rel, const void *data,
                   size_t len, mode_t mode) {
  char path[4096];
  int fd;

  snprintf(path, sizeof(path), "%s/%s", root, rel);
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  assert_true(fd >= 0);
  assert_int_equal(sr_write_all(fd, data, len), 0);
  /* Explicit chmod: the test must not depend on the umask. */
  assert_int_equal(fchmod(fd, mode), 0);
  close(fd);
}

static void xmkdir(const char *root, const char *rel) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  assert_int_equal(mkdir(path, 0755), 0);
}

static void sha256_hex(const void *data, size_t len, char out[65]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  assert_int_equal(EVP_Digest(data, len, md, &n, EVP_sha256(), NULL), 1);
  assert_int_equal(n, 32);
  for (unsigned i = 0; i < n; i++)
    snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static int setup_tree(void **state) {
  struct tree *t = calloc(1, sizeof(*t));
  assert_non_null(t);
  strcpy(t->src, "/tmp/test-bundle-src-XXXXXX");
  strcpy(t->dst, "/tmp/test-bundle-dst-XXXXXX");
  assert_non_null(mkdtemp(t->src));
  assert_non_null(mkdtemp(t->dst));
  *state = t;
  return 0;
}

static int teardown_tree(void **state) {
  struct tree *t = *state;
  (void)sr_rm_rf_at(AT_FDCWD, t->src);
  (void)sr_rm_rf_at(AT_FDCWD, t->dst);
  free(t);
  return 0;
}

static void minimal_skill(const char *root) {
  xwrite(root, "SKILL.md", "---\nname: x\n---\n", 16, 0644);
}

/* Stages src and expects a refusal whose message names `needle`. */
static void expect_refused(const char *src, const struct sr_bundle_caps *caps,
                           const char *reason, const char *needle) {
  struct sr_error err = {0};
  struct sr_bundle out;
  struct sr_bundle_caps def;
  int r;

  if (!caps) {
    sr_bundle_caps_default(&def);
    caps = &def;
  }
  /* *out must stay untouched on failure. */
  memset(&out, 0xa5, sizeof(out));
  r = sr_bundle_stage(src, -1, caps, true, &out, &err);
  assert_true(r < 0);
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, reason);
  if (!strstr(err.msg, needle))
    fail_msg("message \"%s\" does not name \"%s\"", err.msg, needle);
  for (size_t i = 0; i < sizeof(out); i++)
    assert_int_equal(((unsigned char *)&out)[i], 0xa5);
}

/* ---------------------------------------------------------------- pure */

static void test_record_file(void **state) {
  const char *h =
      "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  char *s;

  s = sr_bundle_record('f', false, 0, h, "SKILL.md");
  assert_string_equal(s, "f 0644 0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649"
                         "b934ca495991b7852b855 SKILL.md\n");
  free(s);
  s = sr_bundle_record('f', true, 18446744073709551615ULL, h, "scripts/run");
  assert_string_equal(s, "f 0755 18446744073709551615 e3b0c44298fc1c149afbf4"
                         "c8996fb92427ae41e4649b934ca495991b7852b855 "
                         "scripts/run\n");
  free(s);
  s = sr_bundle_record('f', false, 12, h, "a dir/caf\xc3\xa9 menu.txt");
  assert_string_equal(s,
                      "f 0644 12 e3b0c44298fc1c149afbf4c8996fb92427ae41e46"
                      "49b934ca495991b7852b855 a dir/caf\xc3\xa9 menu.txt\n");
  free(s);
}

static void test_record_dir(void **state) {
  char *s;

  /* Size, hash and mode bits are ignored for directories. */
  s = sr_bundle_record('d', true, 4096, "ffff", "scripts");
  assert_string_equal(s, "d 0755 0 - scripts/\n");
  free(s);
  s = sr_bundle_record('d', false, 0, NULL, "a b/\xe2\x82\xac");
  assert_string_equal(s, "d 0755 0 - a b/\xe2\x82\xac/\n");
  free(s);
}

static void test_record_invalid(void **state) {
  assert_null(sr_bundle_record('x', false, 0, "00", "a"));
  assert_null(sr_bundle_record('f', false, 0, NULL, "a"));
  assert_null(sr_bundle_record('f', false, 0, "00", ""));
  assert_null(sr_bundle_record('d', false, 0, NULL, NULL));
}

static void test_path_cmp(void **state) {
  /* '-' (0x2d) < '/' (0x2f): the global order is not a per-directory one. */
  assert_true(sr_bundle_path_cmp("a-b", "a/b") < 0);
  assert_true(sr_bundle_path_cmp("a/b", "a-b") > 0);
  assert_true(sr_bundle_path_cmp("a", "a-b") < 0);
  assert_true(sr_bundle_path_cmp("a", "a/b") < 0);
  assert_true(sr_bundle_path_cmp("a.txt", "a/b") < 0);
  assert_true(sr_bundle_path_cmp("a/z", "a0") < 0);
  assert_true(sr_bundle_path_cmp("SKILL.md", "assets") < 0);
  assert_int_equal(sr_bundle_path_cmp("x/y", "x/y"), 0);
  /* Bytes compare unsigned: UTF-8 sorts after ASCII. */
  assert_true(sr_bundle_path_cmp("z", "\xc3\xa9") < 0);
  assert_true(sr_bundle_path_cmp("\xc3\xa9", "z") > 0);
}

/* The bundle's name rule is util's sr_valid_filename(). */
static void test_name_ok(void **state) {
  char long_name[300];

  assert_true(sr_valid_filename("SKILL.md"));
  assert_true(sr_valid_filename("with space"));
  assert_true(sr_valid_filename("caf\xc3\xa9"));
  assert_true(sr_valid_filename(".hidden"));
  assert_true(sr_valid_filename("..."));
  assert_false(sr_valid_filename(NULL));
  assert_false(sr_valid_filename(""));
  assert_false(sr_valid_filename("."));
  assert_false(sr_valid_filename(".."));
  assert_false(sr_valid_filename("a/b"));
  assert_false(sr_valid_filename("new\nline"));
  assert_false(sr_valid_filename("tab\t"));
  assert_false(sr_valid_filename("\x1b[31m"));
  assert_false(sr_valid_filename("del\x7f"));
  memset(long_name, 'a', sizeof(long_name));
  long_name[255] = '\0';
  assert_true(sr_valid_filename(long_name));
  long_name[255] = 'a';
  long_name[256] = '\0';
  assert_false(sr_valid_filename(long_name));
}

static void test_caps_default(void **state) {
  struct sr_bundle_caps c;
  memset(&c, 0, sizeof(c));
  sr_bundle_caps_default(&c);
  assert_int_equal(c.max_files, 10000);
  assert_int_equal(c.max_bytes, 256ULL << 20);
  assert_int_equal(c.max_file_bytes, 256ULL << 20);
  assert_int_equal(c.max_path, 1024);
  assert_int_equal(c.max_depth, 32);
}

/* ---------------------------------------------------------------- stage */

static int compare_files(const char *a, const char *b) {
  _cleanup_free_ char *x = NULL, *y = NULL;
  size_t lx = 0, ly = 0;
  struct stat sa, sb;

  assert_int_equal(sr_read_file_at(AT_FDCWD, a, 1 << 24, &x, &lx), 0);
  assert_int_equal(sr_read_file_at(AT_FDCWD, b, 1 << 24, &y, &ly), 0);
  assert_int_equal(lstat(a, &sa), 0);
  assert_int_equal(lstat(b, &sb), 0);
  if (lx != ly || memcmp(x, y, lx) != 0)
    return -1;
  return (int)(sb.st_mode & 07777);
}

static void test_stage_digest_and_copy(void **state) {
  struct tree *t = *state;
  struct sr_error err = {0};
  struct sr_bundle out = {0};
  struct sr_bundle_caps caps;
  static const char skill[] = "---\nname: demo\ndescription: d\n---\nbody\n";
  static const char run[] = "#!/bin/sh\necho hi\n";
  unsigned char *blob;
  size_t blob_len = 300 * 1024 + 7; /* several read chunks, odd tail */
  char h_skill[65], h_run[65], h_blob[65], h_ab[65], h_utf[65], h_empty[65];
  char path_a[256], path_b[256], expected_digest[72];
  _cleanup_free_ char *expect = NULL;
  size_t elen = 0;
  FILE *mem;
  _cleanup_close_ int dfd = -1;
  struct stat st;

  blob = malloc(blob_len);
  assert_non_null(blob);
  for (size_t i = 0; i < blob_len; i++)
    blob[i] = (unsigned char)(i * 131 + 7);

  xwrite(t->src, "SKILL.md", skill, sizeof(skill) - 1, 0644);
  xmkdir(t->src, "scripts");
  xwrite(t->src, "scripts/run.sh", run, sizeof(run) - 1, 0700);
  xmkdir(t->src, "a");
  xmkdir(t->src, "a/b");
  xwrite(t->src, "a/b/blob", blob, blob_len, 0600);
  xwrite(t->src, "a-b", "dash", 4, 0444);
  xmkdir(t->src, "empty dir");
  xmkdir(t->src, "caf\xc3\xa9");
  xwrite(t->src, "caf\xc3\xa9/men\xc3\xbc .txt", "utf", 3, 0640);
  xwrite(t->src, "zero", "", 0, 0650); /* group-exec only still means 0755 */

  sha256_hex(skill, sizeof(skill) - 1, h_skill);
  sha256_hex(run, sizeof(run) - 1, h_run);
  sha256_hex(blob, blob_len, h_blob);
  sha256_hex("dash", 4, h_ab);
  sha256_hex("utf", 3, h_utf);
  sha256_hex("", 0, h_empty);

  /* Expected records, written out in the global byte order by hand. */
  mem = open_memstream(&expect, &elen);
  assert_non_null(mem);
  fprintf(mem, "f 0644 %zu %s SKILL.md\n", sizeof(skill) - 1, h_skill);
  fprintf(mem, "d 0755 0 - a/\n");
  fprintf(mem, "f 0644 4 %s a-b\n", h_ab);
  fprintf(mem, "d 0755 0 - a/b/\n");
  fprintf(mem, "f 0644 %zu %s a/b/blob\n", blob_len, h_blob);
  fprintf(mem, "d 0755 0 - caf\xc3\xa9/\n");
  fprintf(mem, "f 0644 3 %s caf\xc3\xa9/men\xc3\xbc .txt\n", h_utf);
  fprintf(mem, "d 0755 0 - empty dir/\n");
  fprintf(mem, "d 0755 0 - scripts/\n");
  fprintf(mem, "f 0755 %zu %s scripts/run.sh\n", sizeof(run) - 1, h_run);
  fprintf(mem, "f 0755 0 %s zero\n", h_empty);
  assert_int_equal(fclose(mem), 0);
  strcpy(expected_digest, "sha256:");
  sha256_hex(expect, elen, expected_digest + 7);

  dfd = open(t->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(dfd >= 0);
  sr_bundle_caps_default(&caps);
  assert_int_equal(sr_bundle_stage(t->src, dfd, &caps, true, &out, &err), 0);
  assert_int_equal(err.exit_code, 0);

  assert_string_equal(out.records, expect);
  assert_int_equal(out.records_len, elen);
  assert_string_equal(out.digest, expected_digest);
  assert_int_equal(out.n_files, 6);
  assert_int_equal(out.n_dirs, 5);
  assert_int_equal(out.total_bytes,
                   sizeof(skill) - 1 + sizeof(run) - 1 + blob_len + 4 + 3);
  assert_non_null(out.skill_md);
  assert_int_equal(out.skill_md_len, sizeof(skill) - 1);
  assert_string_equal(out.skill_md, skill);

  /* The copy: same bytes, canonical modes, empty dirs present. */
  static const struct {
    const char *rel;
    int mode;
  } files[] = {
      {"SKILL.md", 0644}, {"scripts/run.sh", 0755},
      {"a/b/blob", 0644}, {"a-b", 0644},
      {"zero", 0755},     {"caf\xc3\xa9/men\xc3\xbc .txt", 0644},
  };
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
    snprintf(path_a, sizeof(path_a), "%s/%s", t->src, files[i].rel);
    snprintf(path_b, sizeof(path_b), "%s/%s", t->dst, files[i].rel);
    assert_int_equal(compare_files(path_a, path_b), files[i].mode);
  }
  static const char *const dirs[] = {"a", "a/b", "empty dir", "caf\xc3\xa9",
                                     "scripts"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    snprintf(path_b, sizeof(path_b), "%s/%s", t->dst, dirs[i]);
    assert_int_equal(lstat(path_b, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 07777, 0755);
  }

  /* Staging the copy again gives the same digest (it is canonical). */
  {
    struct sr_bundle again = {0};
    assert_int_equal(sr_bundle_stage(t->dst, -1, &caps, false, &again, &err),
                     0);
    assert_string_equal(again.digest, expected_digest);
    assert_null(again.records);
    sr_bundle_done(&again);
  }

  /* Staging into a non-empty directory fails (O_EXCL), not a refusal. */
  {
    struct sr_bundle again = {0};
    struct sr_error e2 = {0};
    assert_true(sr_bundle_stage(t->src, dfd, &caps, false, &again, &e2) < 0);
    assert_int_equal(e2.exit_code, SR_EXIT_FAILED);
    assert_int_equal(e2.err, EEXIST);
  }

  sr_bundle_done(&out);
  assert_null(out.records);
  assert_null(out.skill_md);
  free(blob);
}

static void test_stage_changes_digest(void **state) {
  struct tree *t = *state;
  struct sr_error err = {0};
  struct sr_bundle a = {0}, b = {0};
  char p1[256], p2[256];

  minimal_skill(t->src);
  xwrite(t->src, "x", "abc", 3, 0644);
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &a, &err), 0);

  /* mode bit */
  snprintf(p1, sizeof(p1), "%s/x", t->src);
  assert_int_equal(chmod(p1, 0744), 0);
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &b, &err), 0);
  assert_string_not_equal(a.digest, b.digest);
  sr_bundle_done(&b);
  assert_int_equal(chmod(p1, 0644), 0);

  /* rename */
  snprintf(p2, sizeof(p2), "%s/y", t->src);
  assert_int_equal(rename(p1, p2), 0);
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &b, &err), 0);
  assert_string_not_equal(a.digest, b.digest);
  sr_bundle_done(&b);
  assert_int_equal(rename(p2, p1), 0);

  /* added empty directory */
  xmkdir(t->src, "e");
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &b, &err), 0);
  assert_string_not_equal(a.digest, b.digest);
  sr_bundle_done(&b);
  snprintf(p2, sizeof(p2), "%s/e", t->src);
  assert_int_equal(rmdir(p2), 0);

  /* back to the original: same digest again */
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &b, &err), 0);
  assert_string_equal(a.digest, b.digest);
  sr_bundle_done(&b);
  sr_bundle_done(&a);
}

static void test_stage_root_symlink_allowed(void **state) {
  struct tree *t = *state;
  struct sr_error err = {0};
  struct sr_bundle a = {0}, b = {0};
  char link[300];

  minimal_skill(t->src);
  snprintf(link, sizeof(link), "%s/via-link", t->dst);
  assert_int_equal(symlink(t->src, link), 0);
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &a, &err), 0);
  assert_int_equal(sr_bundle_stage(link, -1, NULL, false, &b, &err), 0);
  assert_string_equal(a.digest, b.digest);
  sr_bundle_done(&a);
  sr_bundle_done(&b);
}

static void test_refuse_symlink(void **state) {
  struct tree *t = *state;
  char p[256];

  minimal_skill(t->src);
  xmkdir(t->src, "scripts");
  snprintf(p, sizeof(p), "%s/scripts/evil", t->src);
  assert_int_equal(symlink("/etc/shadow", p), 0);
  expect_refused(t->src, NULL, "bundle_invalid",
                 "scripts/evil: symbolic links are not allowed");
}

static void test_refuse_dir_symlink(void **state) {
  struct tree *t = *state;
  char p[256];

  minimal_skill(t->src);
  snprintf(p, sizeof(p), "%s/up", t->src);
  assert_int_equal(symlink("..", p), 0);
  expect_refused(t->src, NULL, "bundle_invalid", "up: symbolic links");
}

static void test_refuse_fifo(void **state) {
  struct tree *t = *state;
  char p[256];

  minimal_skill(t->src);
  snprintf(p, sizeof(p), "%s/pipe", t->src);
  assert_int_equal(mkfifo(p, 0644), 0);
  expect_refused(t->src, NULL, "bundle_invalid", "pipe: FIFOs are not allowed");
}

static void test_refuse_socket(void **state) {
  struct tree *t = *state;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  _cleanup_close_ int fd = -1;

  minimal_skill(t->src);
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", t->src);
  fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  expect_refused(t->src, NULL, "bundle_invalid",
                 "sock: sockets are not allowed");
}

static void test_refuse_device(void **state) {
  struct tree *t = *state;
  char p[256];

  minimal_skill(t->src);
  snprintf(p, sizeof(p), "%s/null", t->src);
  if (mknod(p, S_IFCHR | 0644, makedev(1, 3)) < 0) {
    /* Needs CAP_MKNOD.  Not cmocka's skip(): it prints "not ok # SKIP",
     * which tap-driver.sh counts as a failure. */
    assert_int_equal(errno, EPERM);
    print_message("# mknod not permitted: device case not exercised\n");
    return;
  }
  expect_refused(t->src, NULL, "bundle_invalid",
                 "null: device files are not allowed");
}

static void test_refuse_control_name(void **state) {
  struct tree *t = *state;

  minimal_skill(t->src);
  xmkdir(t->src, "d");
  xwrite(t->src, "d/bad\nname", "x", 1, 0644);
  /* Named, with the control character escaped for the terminal. */
  expect_refused(t->src, NULL, "bundle_invalid",
                 "d/bad\\x0aname: names with control characters");
}

static void test_refuse_too_many(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;
  struct sr_bundle out = {0};
  struct sr_error err = {0};

  sr_bundle_caps_default(&caps);
  caps.max_files = 3;
  minimal_skill(t->src);
  xwrite(t->src, "b", "x", 1, 0644);
  xmkdir(t->src, "c");
  /* exactly at the cap: accepted */
  assert_int_equal(sr_bundle_stage(t->src, -1, &caps, false, &out, &err), 0);
  sr_bundle_done(&out);
  xwrite(t->src, "d", "x", 1, 0644);
  expect_refused(t->src, &caps, "bundle_invalid", "d: too many files");
}

static void test_refuse_file_too_big(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;
  char buf[2048];

  memset(buf, 'x', sizeof(buf));
  sr_bundle_caps_default(&caps);
  caps.max_file_bytes = 1024;
  minimal_skill(t->src);
  xmkdir(t->src, "assets");
  xwrite(t->src, "assets/big", buf, 1025, 0644);
  expect_refused(t->src, &caps, "bundle_invalid", "assets/big: file too large");
}

static void test_refuse_total_too_big(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;
  char buf[600];

  memset(buf, 'x', sizeof(buf));
  sr_bundle_caps_default(&caps);
  caps.max_bytes = 1000;
  minimal_skill(t->src); /* 16 bytes */
  xwrite(t->src, "one", buf, 600, 0644);
  xwrite(t->src, "two", buf, 600, 0644);
  expect_refused(t->src, &caps, "bundle_invalid", "two: bundle too large");
}

static void test_refuse_too_deep(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;
  struct sr_bundle out = {0};
  struct sr_error err = {0};

  sr_bundle_caps_default(&caps);
  caps.max_depth = 2;
  minimal_skill(t->src);
  xmkdir(t->src, "a");
  xmkdir(t->src, "a/b");
  xwrite(t->src, "a/b/file", "x", 1, 0644);
  assert_int_equal(sr_bundle_stage(t->src, -1, &caps, false, &out, &err), 0);
  sr_bundle_done(&out);
  xmkdir(t->src, "a/b/c");
  expect_refused(t->src, &caps, "bundle_invalid", "a/b/c: too deep");
}

static void test_refuse_path_too_long(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;

  sr_bundle_caps_default(&caps);
  caps.max_path = 10;
  minimal_skill(t->src);
  xmkdir(t->src, "dir");
  xwrite(t->src, "dir/1234567", "x", 1, 0644); /* 11 bytes */
  expect_refused(t->src, &caps, "bundle_invalid", "dir/1234567: path too long");
}

/* A refusal of an entry whose path is as long as the cap allows (1024
 * bytes, as long as the message itself) keeps its reason: the path is
 * shown by its start and its end.  The reason was cut off. */
static void test_refuse_long_path_keeps_reason(void **state) {
  struct tree *t = *state;
  char rel[1100], p[PATH_MAX + 1100];
  size_t n = 0;

  minimal_skill(t->src);
  for (int i = 0; i < 4; i++) {
    memset(rel + n, 'x', 200);
    n += 200;
    rel[n] = '\0';
    xmkdir(t->src, rel);
    rel[n++] = '/';
  }
  memset(rel + n, 'y', 220);
  rel[n + 220] = '\0';
  assert_int_equal(strlen(rel), 1024);
  snprintf(p, sizeof(p), "%s/%s", t->src, rel);
  assert_int_equal(symlink("/etc/shadow", p), 0);
  expect_refused(t->src, NULL, "bundle_invalid", "xxx...xxx");
  expect_refused(t->src, NULL, "bundle_invalid",
                 "yyyyyyyyyy: symbolic links are not allowed");
}

static void test_refuse_no_skill_md(void **state) {
  struct tree *t = *state;

  xmkdir(t->src, "sub");
  xwrite(t->src, "sub/SKILL.md", "x", 1, 0644);
  xwrite(t->src, "skill.md", "x", 1, 0644);
  expect_refused(t->src, NULL, "bundle_invalid",
                 "no SKILL.md at the bundle root");
}

static void test_refuse_skill_md_dir(void **state) {
  struct tree *t = *state;

  xmkdir(t->src, "SKILL.md");
  expect_refused(t->src, NULL, "bundle_invalid",
                 "no SKILL.md at the bundle root");
}

static void test_refuse_skill_md_too_big(void **state) {
  struct tree *t = *state;
  size_t n = 1024 * 1024 + 1;
  char *buf = malloc(n);

  assert_non_null(buf);
  memset(buf, '#', n);
  xwrite(t->src, "SKILL.md", buf, n, 0644);
  free(buf);
  expect_refused(t->src, NULL, "bundle_invalid",
                 "SKILL.md is larger than 1 MiB");
}

/*
 * A file whose content does not match what stat said must be refused.  A
 * procfs file reports st_size 0 but reads back text, so bind-mounting one
 * into the bundle (in a private user+mount namespace of a child) makes the
 * read return more than the walk's size: deterministically "changed".
 */
static void test_refuse_changed(void **state) {
  struct tree *t = *state;
  char p[256];
  pid_t pid;
  int status;

  minimal_skill(t->src);
  xwrite(t->src, "grows", "", 0, 0644);
  snprintf(p, sizeof(p), "%s/grows", t->src);

  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct sr_error err = {0};
    struct sr_bundle out = {0};
    int dfd;

    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
      _exit(77);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("/proc/self/status", p, NULL, MS_BIND, NULL) < 0)
      _exit(77);
    dfd = open(t->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
      _exit(2);
    if (sr_bundle_stage(t->src, dfd, NULL, false, &out, &err) >= 0)
      _exit(3);
    if (err.exit_code != SR_EXIT_REFUSED ||
        strcmp(err.reason, "bundle_changed") != 0 ||
        !strstr(err.msg, "grows: changed while being read"))
      _exit(4);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    print_message("# no user namespace: changed-file case not exercised\n");
    return;
  }
  assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_missing_src(void **state) {
  struct sr_error err = {0};
  struct sr_bundle out = {0};

  assert_int_equal(
      sr_bundle_stage("/nonexistent/bundle", -1, NULL, false, &out, &err),
      -ENOENT);
  /* No bundle there: refused, as a run refuses it (skillrun(1), 123). */
  assert_int_equal(err.exit_code, SR_EXIT_REFUSED);
  assert_string_equal(err.reason, "bundle_invalid");
  assert_non_null(strstr(err.msg, "/nonexistent/bundle"));
}

/* A file named as the bundle (its SKILL.md, say): refused, saying what to
 * name instead. */
static void test_file_as_src(void **state) {
  struct tree *t = *state;
  char path[4096];

  minimal_skill(t->src);
  snprintf(path, sizeof(path), "%s/SKILL.md", t->src);
  expect_refused(path, NULL, "bundle_invalid",
                 "is not a directory: name the skill's directory");
}

/* sr_bundle_walk, then sr_bundle_copy: the caller learns the size between
 * the two and chooses where to copy; a refused bundle is refused by the
 * walk, before anything is read or copied. */
static void test_walk_then_copy(void **state) {
  struct tree *t = *state;
  struct sr_error err = {0};
  struct sr_bundle out = {0};
  struct sr_bundle_walk *bw = NULL;
  _cleanup_close_ int dfd = open(t->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char path[128];
  struct stat st;

  assert_true(dfd >= 0);
  minimal_skill(t->src);
  xwrite(t->src, "data", "0123456789", 10, 0644);

  assert_int_equal(sr_bundle_walk(t->src, NULL, &bw, &err), 0);
  assert_int_equal(sr_bundle_walk_bytes(bw), 16 + 10);
  /* The walk reads and copies nothing. */
  snprintf(path, sizeof(path), "%s/data", t->dst);
  assert_int_equal(stat(path, &st), -1);

  assert_int_equal(sr_bundle_copy(bw, dfd, false, &out, &err), 0);
  assert_int_equal(out.total_bytes, 26);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_size, 10);
  sr_bundle_done(&out);
  /* Once per walk: its directory fds are used up. */
  assert_true(sr_bundle_copy(bw, -1, false, &out, &err) < 0);
  sr_bundle_walk_free(bw);
  bw = NULL;

  /* A refused bundle: no walk to copy from. */
  snprintf(path, sizeof(path), "%s/link", t->src);
  assert_int_equal(symlink("/etc/passwd", path), 0);
  sr_error_clear(&err);
  assert_true(sr_bundle_walk(t->src, NULL, &bw, &err) < 0);
  assert_null(bw);
  assert_string_equal(err.reason, "bundle_invalid");
}

/*
 * A root wide enough for two walkers (bundle.c, walk_root): SKILL.md,
 * a/ with 300 files (past the point where the walk splits), then b/ .. g/
 * with 40 files each; the second walker takes e/ .. g/.  Pre-order
 * positions: a/ 2, b/ 303, c/ 344, d/ 385, e/ 426, f/ 467, g/ 508, the
 * last g/f039 548.  Every file holds 10 bytes (5,416 in all).
 */
#define WIDE_FILE 10
static void make_wide_tree(const char *root) {
  static const char *const dirs[] = {"b", "c", "d", "e", "f", "g"};
  char rel[64], data[WIDE_FILE];

  minimal_skill(root);
  xmkdir(root, "a");
  for (int i = 0; i < 300; i++) {
    snprintf(rel, sizeof(rel), "a/f%03d", i);
    memset(data, 'a' + i % 26, sizeof(data));
    xwrite(root, rel, data, sizeof(data), i % 3 ? 0644 : 0755);
  }
  for (size_t d = 0; d < SR_ARRAY_SIZE(dirs); d++) {
    xmkdir(root, dirs[d]);
    for (int i = 0; i < 40; i++) {
      snprintf(rel, sizeof(rel), "%s/f%03d", dirs[d], i);
      memset(data, 'A' + (int)d, sizeof(data));
      data[0] = (char)i;
      xwrite(root, rel, data, sizeof(data), 0644);
    }
  }
}

static int cmp_strp(const void *a, const void *b) {
  return sr_bundle_path_cmp(*(char *const *)a, *(char *const *)b);
}

/* The records of the wide tree, built here from what the test wrote. */
static char *wide_records(void) {
  static const char *const dirs[] = {"a", "b", "c", "d", "e", "f", "g"};
  char *paths[600], *out = NULL, *grown, hex[65], data[WIDE_FILE];
  size_t np = 0, len = 0;

  paths[np++] = strdup("SKILL.md");
  for (size_t d = 0; d < SR_ARRAY_SIZE(dirs); d++) {
    int nf = d == 0 ? 300 : 40;
    paths[np++] = strdup(dirs[d]);
    for (int i = 0; i < nf; i++) {
      char rel[64];
      snprintf(rel, sizeof(rel), "%s/f%03d", dirs[d], i);
      paths[np++] = strdup(rel);
    }
  }
  qsort(paths, np, sizeof(paths[0]), cmp_strp);
  for (size_t i = 0; i < np; i++) {
    const char *p = paths[i];
    char *rec;
    size_t n;

    assert_non_null(p);
    if (strcmp(p, "SKILL.md") == 0) {
      sha256_hex("---\nname: x\n---\n", 16, hex);
      rec = sr_bundle_record('f', false, 16, hex, p);
    } else if (!strchr(p, '/')) {
      rec = sr_bundle_record('d', false, 0, NULL, p);
    } else {
      int i_file = atoi(p + 3);
      if (p[0] == 'a') {
        memset(data, 'a' + i_file % 26, sizeof(data));
      } else {
        memset(data, 'A' + (p[0] - 'b'), sizeof(data));
        data[0] = (char)i_file;
      }
      sha256_hex(data, sizeof(data), hex);
      rec = sr_bundle_record('f', p[0] == 'a' && i_file % 3 == 0, WIDE_FILE,
                             hex, p);
    }
    assert_non_null(rec);
    n = strlen(rec);
    grown = realloc(out, len + n + 1);
    assert_non_null(grown);
    out = grown;
    memcpy(out + len, rec, n + 1);
    len += n;
    free(rec);
    free(paths[i]);
  }
  return out;
}

/* Walked on two threads, the bundle gives the records and digest of its
 * contents, computed here without the walk. */
static void test_walk_split_records(void **state) {
  struct tree *t = *state;
  _cleanup_bundle_walk_ struct sr_bundle_walk *bw = NULL;
  _cleanup_free_ char *want = NULL;
  struct sr_error err = {0};
  struct sr_bundle out = {0};
  char hex[65], digest[80];

  make_wide_tree(t->src);
  assert_int_equal(sr_bundle_walk(t->src, NULL, &bw, &err), 0);
  assert_int_equal(sr_bundle_walk_walkers(bw), 2);
  assert_int_equal(sr_bundle_walk_bytes(bw), 16 + 540 * WIDE_FILE);
  assert_int_equal(sr_bundle_copy(bw, -1, true, &out, &err), 0);
  want = wide_records();
  assert_string_equal(out.records, want);
  sha256_hex(want, strlen(want), hex);
  snprintf(digest, sizeof(digest), "sha256:%s", hex);
  assert_string_equal(out.digest, digest);
  assert_int_equal(out.n_files, 541);
  assert_int_equal(out.n_dirs, 7);
  sr_bundle_done(&out);
}

/* A small bundle is walked on one thread. */
static void test_walk_small_one_walker(void **state) {
  struct tree *t = *state;
  _cleanup_bundle_walk_ struct sr_bundle_walk *bw = NULL;
  struct sr_error err = {0};

  minimal_skill(t->src);
  xmkdir(t->src, "a");
  xmkdir(t->src, "b");
  xmkdir(t->src, "c");
  xmkdir(t->src, "d");
  assert_int_equal(sr_bundle_walk(t->src, NULL, &bw, &err), 0);
  assert_int_equal(sr_bundle_walk_walkers(bw), 1);
}

static void symlink_at(const char *root, const char *rel) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  assert_int_equal(symlink("/etc/passwd", path), 0);
}

/*
 * With two walkers the refusal is the one a single walker in pre-order
 * makes.  The second walker counts only its own entries, so the caps
 * that count (files, bytes) are checked again over the merge: the trips
 * below are all in its part, where its own counts stay under the caps.
 */
static void test_walk_split_caps_in_order(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;

  make_wide_tree(t->src);
  /* 16 + 4,200 bytes before e/, 400 in e/; f/f038 would pass 5,000. */
  sr_bundle_caps_default(&caps);
  caps.max_bytes = 5000;
  expect_refused(t->src, &caps, "bundle_invalid", "f/f038: bundle too large");
  /* Entry 501 is f/f033. */
  sr_bundle_caps_default(&caps);
  caps.max_files = 500;
  expect_refused(t->src, &caps, "bundle_invalid", "f/f033: too many files");
  /* A symbolic link after that trip does not come first... */
  symlink_at(t->src, "g/link");
  expect_refused(t->src, &caps, "bundle_invalid", "f/f033: too many files");
  /* ... one before it does. */
  symlink_at(t->src, "e/link");
  expect_refused(t->src, &caps, "bundle_invalid",
                 "e/link: symbolic links are not allowed");
  /* The first walker's refusal comes before anything of the second's. */
  symlink_at(t->src, "c/link");
  expect_refused(t->src, &caps, "bundle_invalid",
                 "c/link: symbolic links are not allowed");
}

/* An entry the second walker refused itself (too deep) that the whole
 * walk's count refuses first (too many files: checked before depth). */
static void test_walk_split_refused_entry(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;

  make_wide_tree(t->src);
  xmkdir(t->src, "g/sub");
  sr_bundle_caps_default(&caps);
  caps.max_depth = 1;
  expect_refused(t->src, &caps, "bundle_invalid", "g/sub: too deep");
  caps.max_files = 548;
  expect_refused(t->src, &caps, "bundle_invalid", "g/sub: too many files");
}

/* A directory's access time, which reading its names moves (relatime: the
 * time is set far in the past first). */
static struct timespec dir_atime(const char *root, const char *rel) {
  char path[4096];
  struct stat st;

  snprintf(path, sizeof(path), "%s/%s", root, rel);
  assert_int_equal(stat(path, &st), 0);
  return st.st_atim;
}

static void read_dir(const char *root, const char *rel) {
  char path[4096];
  DIR *d;

  snprintf(path, sizeof(path), "%s/%s", root, rel);
  d = opendir(path);
  assert_non_null(d);
  while (readdir(d))
    ;
  closedir(d);
}

static void set_old_atime(const char *root, const char *rel) {
  const struct timespec ts[2] = {{.tv_sec = 1}, {.tv_nsec = UTIME_OMIT}};
  char path[4096];

  snprintf(path, sizeof(path), "%s/%s", root, rel);
  assert_int_equal(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/*
 * The second walker counts the first walker's entries too (those walked
 * before the split at least), so it stops where the whole walk's file
 * cap is reached instead of walking up to the cap on its own: a single
 * walker refuses d/f045 and never reads e/, and neither may the split.
 * SKILL.md, a/ and its 300 files are walked before the split (302
 * entries); b and c go to the first walker, d/ (100 files) and e/ to the
 * second.
 */
static void test_walk_split_stops_at_cap(void **state) {
  struct tree *t = *state;
  struct sr_bundle_caps caps;
  char rel[64];

  minimal_skill(t->src);
  xmkdir(t->src, "a");
  for (int i = 0; i < 300; i++) {
    snprintf(rel, sizeof(rel), "a/f%03d", i);
    xwrite(t->src, rel, "a", 1, 0644);
  }
  xwrite(t->src, "b", "b", 1, 0644);
  xwrite(t->src, "c", "c", 1, 0644);
  xmkdir(t->src, "d");
  for (int i = 0; i < 100; i++) {
    snprintf(rel, sizeof(rel), "d/f%03d", i);
    xwrite(t->src, rel, "d", 1, 0644);
  }
  xmkdir(t->src, "e");
  xwrite(t->src, "e/x", "e", 1, 0644);
  set_old_atime(t->src, "e");

  sr_bundle_caps_default(&caps);
  caps.max_files = 350;
  expect_refused(t->src, &caps, "bundle_invalid", "d/f045: too many files");
  if (dir_atime(t->src, "e").tv_sec != 1)
    fail_msg("e/ was read: the second walker went past the file cap");
  /* That says something only where reading names moves the access time. */
  read_dir(t->src, "e");
  if (dir_atime(t->src, "e").tv_sec == 1)
    print_message("# atime does not move here: the cap bound is unchecked\n");
}

/*
 * The walk of src in a grandchild whose every clone3 (glibc's
 * pthread_create) fails with EAGAIN, as at RLIMIT_NPROC: refused here by
 * a seccomp listener, which counts them.  Returns 0 when the walk passed
 * on one walker and asked for a thread once (twice under ThreadSanitizer,
 * whose runtime asks for one of its own at the first), 10 + the count (at
 * most 100) when it asked more often, 77 without seccomp notifications,
 * else the walk's own failure (2..4).
 */
static int walk_without_threads(const char *src) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = SR_ARRAY_SIZE(f), .filter = f};
  int listener, status, refused = 0;
  pid_t pid;

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return 77;
  listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                          SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  if (listener < 0)
    return 77;
  pid = fork(); /* glibc's fork is clone, not clone3 */
  if (pid < 0)
    return 1;
  if (pid == 0) {
    struct sr_bundle_walk *bw = NULL;
    struct sr_error err = {0};

    close(listener);
    if (sr_bundle_walk(src, NULL, &bw, &err) < 0)
      _exit(2);
    if (sr_bundle_walk_walkers(bw) != 1)
      _exit(3);
    if (sr_bundle_walk_bytes(bw) != 16 + 540 * WIDE_FILE + 100)
      _exit(4);
    sr_bundle_walk_free(bw);
    _exit(0);
  }
  while (waitpid(pid, &status, WNOHANG) == 0) {
    struct pollfd p = {.fd = listener, .events = POLLIN};
    struct seccomp_notif req;
    struct seccomp_notif_resp resp;

    if (poll(&p, 1, 20) <= 0 || !(p.revents & POLLIN))
      continue;
    memset(&req, 0, sizeof(req));
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
      continue;
    resp = (struct seccomp_notif_resp){.id = req.id, .error = -EAGAIN};
    if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0)
      refused++;
  }
  if (!WIFEXITED(status))
    return 1;
  if (WEXITSTATUS(status) != 0)
    return WEXITSTATUS(status);
  return refused >= 1 && refused <= 2 ? 0
                                      : 10 + (refused > 100 ? 100 : refused);
}

/* A thread that cannot be made: the walk is the same on one, and asks for
 * the thread once, not again before every name left at the root. */
static void test_walk_split_no_thread(void **state) {
  struct tree *t = *state;
  char rel[64];
  int status;
  pid_t pid;

  make_wide_tree(t->src);
  for (int i = 0; i < 100; i++) {
    snprintf(rel, sizeof(rel), "r%03d", i);
    xwrite(t->src, rel, "r", 1, 0644);
  }
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(walk_without_threads(t->src));
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    print_message("# no seccomp listener: thread failure not exercised\n");
    return;
  }
  if (WEXITSTATUS(status) >= 10)
    fail_msg("pthread_create tried %d times", WEXITSTATUS(status) - 10);
  assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A bundle big enough for --digest to hash in two parts on two threads
 * (bundle.c, hash_split), with a file big enough to be read ahead on a
 * thread of its own (sha256.c): hashing only must give the digest, records
 * and SKILL.md of the copy-while-hash path, which stays on one thread, and
 * the copy must hold the bytes.
 */
static void make_big_tree(const char *root) {
  static unsigned char blk[4096];
  const size_t big_len = 9u * 1024 * 1024 + 123;
  unsigned char *big = malloc(big_len);
  char rel[64];

  assert_non_null(big);
  for (size_t i = 0; i < big_len; i++)
    big[i] = (unsigned char)(i * 131 + i / 4096);
  xmkdir(root, "A");
  xmkdir(root, "A/b");
  xmkdir(root, "A/b/c");
  xmkdir(root, "z");
  for (int i = 0; i < 400; i++) {
    memset(blk, i, sizeof(blk));
    snprintf(rel, sizeof(rel), "A/b/c/f%03d", i);
    xwrite(root, rel, blk, (size_t)(i % 7 == 0 ? 100 + i : 4096), 0644);
  }
  minimal_skill(root);
  xwrite(root, "z/big", big, big_len, 0755);
  free(big);
}

static void test_digest_threads_match_copy(void **state) {
  struct tree *t = *state;
  struct sr_error err = {0};
  struct sr_bundle copied = {0}, hashed = {0};
  _cleanup_close_ int dfd = open(t->dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char path[128], want[65];
  unsigned char *back;
  struct stat st;
  int fd;

  assert_true(dfd >= 0);
  make_big_tree(t->src);
  assert_int_equal(sr_bundle_stage(t->src, dfd, NULL, true, &copied, &err), 0);
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, true, &hashed, &err), 0);
  assert_string_equal(hashed.digest, copied.digest);
  assert_int_equal(hashed.records_len, copied.records_len);
  assert_memory_equal(hashed.records, copied.records, copied.records_len);
  assert_int_equal(hashed.n_files, 402);
  assert_int_equal(hashed.n_dirs, 4);
  assert_non_null(hashed.skill_md);
  assert_string_equal(hashed.skill_md, "---\nname: x\n---\n");

  /* The copy of the read-ahead file holds its bytes, and its record the
   * hash of those bytes. */
  snprintf(path, sizeof(path), "%s/z/big", t->dst);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  assert_int_equal(fstat(fd, &st), 0);
  back = malloc((size_t)st.st_size);
  assert_non_null(back);
  assert_int_equal(read(fd, back, (size_t)st.st_size), st.st_size);
  close(fd);
  for (off_t i = 0; i < st.st_size; i++)
    if (back[i] != (unsigned char)(i * 131 + i / 4096))
      fail_msg("copy of z/big differs at byte %lld", (long long)i);
  sha256_hex(back, (size_t)st.st_size, want);
  free(back);
  assert_non_null(strstr(hashed.records, want));
  sr_bundle_done(&copied);
  sr_bundle_done(&hashed);
}

/* One changed byte in either part, or in the read-ahead file, changes the
 * digest. */
static void test_digest_threads_one_byte(void **state) {
  struct tree *t = *state;
  static const char *const rels[] = {"A/b/c/f001", "A/b/c/f399", "z/big"};
  struct sr_error err = {0};
  struct sr_bundle base = {0};
  char path[128];

  make_big_tree(t->src);
  assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &base, &err), 0);
  for (size_t i = 0; i < SR_ARRAY_SIZE(rels); i++) {
    struct sr_bundle now = {0};
    unsigned char c;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", t->src, rels[i]);
    fd = open(path, O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(pread(fd, &c, 1, 50), 1);
    c ^= 1;
    assert_int_equal(pwrite(fd, &c, 1, 50), 1);
    assert_int_equal(sr_bundle_stage(t->src, -1, NULL, false, &now, &err), 0);
    if (strcmp(now.digest, base.digest) == 0)
      fail_msg("a changed byte in %s left the digest as it was", rels[i]);
    c ^= 1;
    assert_int_equal(pwrite(fd, &c, 1, 50), 1);
    close(fd);
    sr_bundle_done(&now);
  }
  sr_bundle_done(&base);
}

/*
 * A file that changes while --digest reads it in two parts is refused
 * whichever part reads it, and with two, the one the walk meets first is
 * named, as on one thread (the procfs bind of test_refuse_changed).
 */
static void test_digest_threads_changed(void **state) {
  struct tree *t = *state;
  char first[256], second[256];
  pid_t pid;
  int status;

  make_big_tree(t->src);
  xwrite(t->src, "A/0grows", "", 0, 0644);
  xwrite(t->src, "z/grows", "", 0, 0644);
  snprintf(first, sizeof(first), "%s/A/0grows", t->src);
  snprintf(second, sizeof(second), "%s/z/grows", t->src);

  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct sr_error err = {0};
    struct sr_bundle out = {0};

    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
      _exit(77);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("/proc/self/status", second, NULL, MS_BIND, NULL) < 0)
      _exit(77);
    if (sr_bundle_stage(t->src, -1, NULL, false, &out, &err) >= 0)
      _exit(3);
    if (strcmp(err.reason, "bundle_changed") != 0 ||
        !strstr(err.msg, "z/grows: changed while being read"))
      _exit(4);
    if (mount("/proc/self/status", first, NULL, MS_BIND, NULL) < 0)
      _exit(77);
    sr_error_clear(&err);
    if (sr_bundle_stage(t->src, -1, NULL, false, &out, &err) >= 0)
      _exit(5);
    if (strcmp(err.reason, "bundle_changed") != 0 ||
        !strstr(err.msg, "A/0grows: changed while being read"))
      _exit(6);
    _exit(0);
  }
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    print_message("# no user namespace: changed-file case not exercised\n");
    return;
  }
  assert_int_equal(WEXITSTATUS(status), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup_tree, teardown_tree)

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_record_file),
      cmocka_unit_test(test_record_dir),
      cmocka_unit_test(test_record_invalid),
      cmocka_unit_test(test_path_cmp),
      cmocka_unit_test(test_name_ok),
      cmocka_unit_test(test_caps_default),
      T(test_stage_digest_and_copy),
      T(test_stage_changes_digest),
      T(test_stage_root_symlink_allowed),
      T(test_refuse_symlink),
      T(test_refuse_dir_symlink),
      T(test_refuse_fifo),
      T(test_refuse_socket),
      T(test_refuse_device),
      T(test_refuse_control_name),
      T(test_refuse_too_many),
      T(test_refuse_file_too_big),
      T(test_refuse_total_too_big),
      T(test_refuse_too_deep),
      T(test_refuse_path_too_long),
      T(test_refuse_long_path_keeps_reason),
      T(test_refuse_no_skill_md),
      T(test_refuse_skill_md_dir),
      T(test_refuse_skill_md_too_big),
      T(test_refuse_changed),
      T(test_walk_then_copy),
      T(test_walk_split_records),
      T(test_walk_small_one_walker),
      T(test_walk_split_caps_in_order),
      T(test_walk_split_refused_entry),
      T(test_walk_split_stops_at_cap),
      T(test_walk_split_no_thread),
      T(test_digest_threads_match_copy),
      T(test_digest_threads_one_byte),
      T(test_digest_threads_changed),
      cmocka_unit_test(test_missing_src),
      T(test_file_as_src),
  };
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("bundle", tests, NULL, NULL);
}
