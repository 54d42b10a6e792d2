/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SHA-256 against FIPS 180-4 / NIST CAVP vectors.  Built twice: once with
 * the path the binary uses, once with SR_SHA256_FORCE_EVP (test-sha256-evp),
 * so both paths of src/sha256.c are held to the same answers.  The EVP
 * build, whose hashing allocates, also checks that an audit line whose
 * hash fails out of memory is written nowhere (test_audit_hash_fails).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "sha256.h"
#include "util.h"

#ifdef SR_SHA256_FORCE_EVP
#include <jansson.h>
#include <openssl/crypto.h>

#include "audit.h"

/* OpenSSL's allocations, failing while set (CRYPTO_set_mem_functions, in
 * main before OpenSSL's first one). */
static bool openssl_oom, openssl_hooked;

static void *oom_malloc(size_t n, const char *file, int line) {
  (void)file;
  (void)line;
  return openssl_oom ? NULL : malloc(n);
}

static void *oom_realloc(void *p, size_t n, const char *file, int line) {
  (void)file;
  (void)line;
  return openssl_oom ? NULL : realloc(p, n);
}

static void oom_free(void *p, const char *file, int line) {
  (void)file;
  (void)line;
  free(p);
}
#endif

static void one_shot(const void *msg, size_t len, const char *want) {
  char hex[SR_SHA256_HEX_LEN + 1];

  assert_int_equal(sr_sha256_hex(msg, len, hex), 0);
  assert_string_equal(hex, want);
}

static void test_vectors(void **state) {
  (void)state;
  one_shot("", 0,
           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  one_shot("abc", 3,
           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  one_shot("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* One million 'a' fed in uneven pieces: the streaming path and block
 * boundaries, not only one-shot calls. */
static void test_streaming(void **state) {
  struct sr_sha256 h;
  unsigned char md[SR_SHA256_LEN];
  char hex[SR_SHA256_HEX_LEN + 1];
  char *buf = malloc(1000000);
  size_t done = 0, step = 1;

  (void)state;
  assert_non_null(buf);
  memset(buf, 'a', 1000000);
  assert_int_equal(sr_sha256_init(&h), 0);
  while (done < 1000000) {
    size_t n = step < 1000000 - done ? step : 1000000 - done;
    assert_int_equal(sr_sha256_update(&h, buf + done, n), 0);
    done += n;
    step = step * 3 + 1; /* 1, 4, 13, 40, ...: crosses 64-byte blocks */
  }
  assert_int_equal(sr_sha256_final(&h, md), 0);
  sr_hex(md, sizeof(md), hex);
  assert_string_equal(
      hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  /* The same bytes in one call give the same digest. */
  one_shot(buf, 1000000,
           "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  free(buf);
}

/* A context can be reused after final, and release is idempotent. */
static void test_reuse_and_release(void **state) {
  struct sr_sha256 h;
  unsigned char a[SR_SHA256_LEN], b[SR_SHA256_LEN];

  (void)state;
  assert_int_equal(sr_sha256_init(&h), 0);
  assert_int_equal(sr_sha256_update(&h, "abc", 3), 0);
  assert_int_equal(sr_sha256_final(&h, a), 0);
  assert_int_equal(sr_sha256_init(&h), 0);
  assert_int_equal(sr_sha256_update(&h, "abc", 3), 0);
  assert_int_equal(sr_sha256_final(&h, b), 0);
  assert_memory_equal(a, b, sizeof(a));
  assert_int_equal(sr_sha256_init(&h), 0);
  sr_sha256_done(&h);
  sr_sha256_done(&h);
}

/* An in-memory file holding len bytes of c, at offset 0. */
static int file_of(char c, size_t len) {
  int fd = memfd_create("test-sha256", MFD_CLOEXEC);
  char *buf = malloc(len + 1);

  assert_true(fd >= 0);
  assert_non_null(buf);
  memset(buf, c, len);
  assert_int_equal(write(fd, buf, len), (ssize_t)len);
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  free(buf);
  return fd;
}

static off_t file_size(int fd) {
  off_t n = lseek(fd, 0, SEEK_END);

  assert_true(n >= 0);
  return n;
}

#define MILLION_A                                                              \
  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"

/* Copy-while-hash: the copy and the hash are of the same bytes, over many
 * reads (a million bytes is several chunks). */
static void test_copy(void **state) {
  unsigned char md[SR_SHA256_LEN];
  char hex[SR_SHA256_HEX_LEN + 1], back[4096];
  enum sr_sha256_copy_step step = SR_SHA256_COPY_HASH;
  uint64_t size = 0;
  int in, out;
  (void)state;

  in = file_of('a', 1000000);
  out = memfd_create("test-sha256-out", MFD_CLOEXEC);
  assert_true(out >= 0);
  assert_int_equal(sr_sha256_copy(in, out, 1000000, NULL, &size, md, &step), 0);
  sr_hex(md, sizeof(md), hex);
  assert_string_equal(hex, MILLION_A);
  assert_int_equal(size, 1000000);
  assert_int_equal(file_size(out), 1000000);
  assert_int_equal(pread(out, back, sizeof(back), 999000), 1000);
  for (size_t i = 0; i < 1000; i++)
    assert_int_equal(back[i], 'a');
  close(out);
  close(in);

  /* Hash only, and what was read kept in memory. */
  in = file_of('b', 3);
  memset(back, 0, sizeof(back));
  assert_int_equal(sr_sha256_copy(in, -1, 3, back, &size, md, NULL), 0);
  sr_hex(md, sizeof(md), hex);
  assert_string_equal(
      hex, "3e744b9dc39389baf0c5a0660589b8402f3dbb49b89b3e75f2c9355852a3c677");
  assert_int_equal(size, 3);
  assert_memory_equal(back, "bbb", 4); /* nothing past the file */
  close(in);

  /* Empty, with nothing allowed. */
  in = file_of('c', 0);
  assert_int_equal(sr_sha256_copy(in, -1, 0, NULL, &size, md, NULL), 0);
  sr_hex(md, sizeof(md), hex);
  assert_string_equal(
      hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  assert_int_equal(size, 0);
  close(in);
}

/* More than max bytes: -EFBIG, and nothing past max reaches the copy. */
static void test_copy_bound(void **state) {
  unsigned char md[SR_SHA256_LEN];
  enum sr_sha256_copy_step step = SR_SHA256_COPY_HASH;
  uint64_t size = 12345;
  const uint64_t maxes[] = {0, 1, 4095, 999999, 200000};
  (void)state;

  for (size_t i = 0; i < sizeof(maxes) / sizeof(*maxes); i++) {
    int in = file_of('a', 1000000);
    int out = memfd_create("test-sha256-out", MFD_CLOEXEC);

    assert_true(out >= 0);
    assert_int_equal(sr_sha256_copy(in, out, maxes[i], NULL, &size, md, &step),
                     -EFBIG);
    assert_int_equal(step, SR_SHA256_COPY_READ);
    assert_true((uint64_t)file_size(out) <= maxes[i]);
    assert_int_equal(size, 12345); /* untouched on failure */
    close(out);
    close(in);
  }
}

/* A failure names its side: the source or the copy. */
static void test_copy_errors(void **state) {
  unsigned char md[SR_SHA256_LEN];
  enum sr_sha256_copy_step step = SR_SHA256_COPY_HASH;
  uint64_t size = 0;
  int in, ro, dir;
  (void)state;

  in = file_of('a', 10);
  ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
  assert_true(ro >= 0);
  assert_int_equal(sr_sha256_copy(in, ro, 100, NULL, &size, md, &step), -EBADF);
  assert_int_equal(step, SR_SHA256_COPY_WRITE);
  close(ro);
  close(in);

  dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true(dir >= 0);
  step = SR_SHA256_COPY_HASH;
  assert_int_equal(sr_sha256_copy(dir, -1, 100, NULL, &size, md, &step),
                   -EISDIR);
  assert_int_equal(step, SR_SHA256_COPY_READ);
  close(dir);
}

static void test_backend(void **state) {
  (void)state;
#ifdef SR_SHA256_FORCE_EVP
  assert_string_equal(sr_sha256_backend(), "evp");
#else
  /* Debian's OpenSSL keeps the deprecated functions: the fast path must be
   * the one built, or the launch benchmark silently loses 0.7 ms. */
  assert_string_equal(sr_sha256_backend(), "lowlevel");
#endif
}

#ifdef SR_SHA256_FORCE_EVP
/* An audit line whose hash cannot be taken (out of memory: EVP allocates
 * its context) is written nowhere: it would not be chained, the next line
 * would repeat its seq and prev (--verify-audit: tampered), and a run's
 * execution_completed, built again when nothing was written, would be on
 * the record twice. */
static void test_audit_hash_fails(void **state) {
  char path[] = "/tmp/test-sha256-audit.XXXXXX";
  char buf[4096];
  struct sr_audit a;
  struct sr_error err = {0};
  ssize_t n;
  int fd;

  (void)state;
  if (!openssl_hooked)
    skip(); /* OpenSSL allocated before main: too late to hook it */
  fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(sr_audit_init(&a, fd, true, "e1", "acme"), 0);
  assert_int_equal(sr_audit_emit(&a, "state_changed",
                                 json_pack("{s:s}", "state", "a"), &err),
                   0);
  openssl_oom = true;
  assert_true(sr_audit_emit(&a, "state_changed",
                            json_pack("{s:s}", "state", "b"), &err) < 0);
  openssl_oom = false;
  sr_error_clear(&err);
  assert_int_equal(a.seq, 1);
  assert_int_equal(sr_audit_emit(&a, "state_changed",
                                 json_pack("{s:s}", "state", "c"), &err),
                   0);
  n = pread(fd, buf, sizeof(buf) - 1, 0);
  assert_true(n > 0);
  buf[n] = '\0';
  assert_null(strstr(buf, "\"state\":\"b\""));
  assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
  /* The chain holds: seq 0, 1, each prev the hash of the line before. */
  if (sr_audit_verify_fd(fd, "audit", NULL, NULL, &err) != 0)
    fail_msg("%s", err.msg);
  sr_audit_done(&a);
}
#endif

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vectors),
      cmocka_unit_test(test_streaming),
      cmocka_unit_test(test_reuse_and_release),
      cmocka_unit_test(test_copy),
      cmocka_unit_test(test_copy_bound),
      cmocka_unit_test(test_copy_errors),
      cmocka_unit_test(test_backend),
#ifdef SR_SHA256_FORCE_EVP
      cmocka_unit_test(test_audit_hash_fails),
#endif
  };
#ifdef SR_SHA256_FORCE_EVP
  openssl_hooked =
      CRYPTO_set_mem_functions(oom_malloc, oom_realloc, oom_free) == 1;
#endif
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("sha256", tests, NULL, NULL);
}
