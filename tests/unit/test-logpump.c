/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The log pump (src/logpump.c) between real pipes and log files: the cap
 * on stdout and stderr together is exact whether the kept bytes are
 * spliced into the files (the default), read and written (a log file
 * splice refuses, O_APPEND), or read to be shown (--log-passthrough), with
 * the two streams interleaved; one truncation marker, in the stream that
 * crossed the cap; the rest counted as dropped. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "logpump.h"

/* Not a multiple of any chunk below: the cap falls inside a write. */
#define CAP 100003u
/* Each stream's total: both together overflow the cap. */
#define TOTAL 96000u

enum mode { MODE_SPLICE, MODE_APPEND, MODE_PASSTHROUGH };

/* A log file in /tmp, unlinked; O_APPEND makes splice(2) refuse it. */
static int log_file(bool append) {
  char path[] = "/tmp/test-logpump.XXXXXX";
  int fd = mkostemp(path, O_CLOEXEC | (append ? O_APPEND : 0));

  assert_true(fd >= 0);
  assert_int_equal(unlink(path), 0);
  return fd;
}

static uint64_t file_size(int fd) {
  struct stat st;

  assert_int_equal(fstat(fd, &st), 0);
  return (uint64_t)st.st_size;
}

/* Byte i of stream s: distinct per stream, so that a byte in the wrong
 * file shows. */
static char pattern(int s, uint64_t i) {
  return (char)(s == 0 ? 'a' + i % 26 : 'A' + i % 26);
}

/* Writes up to n bytes of stream s's pattern from *off into the pipe. */
static void feed(int wfd, int s, uint64_t *off, size_t n) {
  char buf[8192];

  assert_true(n <= sizeof(buf));
  for (size_t i = 0; i < n; i++)
    buf[i] = pattern(s, *off + i);
  assert_int_equal(write(wfd, buf, n), (ssize_t)n);
  *off += n;
}

static const char marker_fmt[] =
    "\n[skillrun: log cap of %u bytes reached; further output dropped]\n";

static void run_capped(enum mode mode) {
  struct sr_logpump lp;
  int p[2][2], out[2], pass = -1;
  uint64_t off[2] = {0, 0}, logged;
  int hits = 0, hit_stream = -1;
  char marker[160], *got;
  size_t mlen = (size_t)snprintf(marker, sizeof(marker), marker_fmt, CAP);

  for (int s = 0; s < 2; s++) {
    assert_int_equal(pipe2(p[s], O_CLOEXEC), 0);
    assert_int_equal(fcntl(p[s][0], F_SETFL, O_NONBLOCK), 0);
    out[s] = log_file(mode == MODE_APPEND);
  }
  if (mode == MODE_PASSTHROUGH)
    pass = log_file(false);
  sr_logpump_init(&lp, p[0][0], p[1][0], out[0], out[1], CAP, pass);

  /* Interleaved: a chunk on stdout, a different one on stderr, each
   * drained before the next, until both streams have written TOTAL. */
  for (size_t round = 0; off[0] < TOTAL || off[1] < TOTAL; round++) {
    for (int s = 0; s < 2; s++) {
      size_t chunk = s == 0 ? 4093 : 1021 + (round % 7) * 997;
      bool hit = false;

      if (off[s] >= TOTAL)
        continue;
      if (chunk > TOTAL - off[s])
        chunk = (size_t)(TOTAL - off[s]);
      feed(p[s][1], s, &off[s], chunk);
      assert_int_equal(sr_logpump_drain(&lp, s, &hit), 0);
      if (hit) {
        hits++;
        hit_stream = s;
      }
    }
  }
  for (int s = 0; s < 2; s++) {
    bool hit = false;

    close(p[s][1]);
    /* Until EOF: the pump closes its end then. */
    for (int i = 0; i < 1000 && lp.in_fd[s] >= 0; i++)
      assert_int_equal(sr_logpump_drain(&lp, s, &hit), 0);
    assert_int_equal(lp.in_fd[s], -1);
    assert_false(hit);
  }

  assert_int_equal(hits, 1);
  assert_true(lp.truncated);
  assert_int_equal(lp.kept[0] + lp.kept[1], CAP);
  assert_int_equal(lp.kept[0] + lp.dropped[0], TOTAL);
  assert_int_equal(lp.kept[1] + lp.dropped[1], TOTAL);
  /* The default path splices; a file splice refuses falls back for good. */
  assert_int_equal(lp.no_splice, mode == MODE_APPEND);
  for (int s = 0; s < 2; s++) {
    uint64_t want = lp.kept[s] + (s == hit_stream ? mlen : 0);

    assert_int_equal(file_size(out[s]), want);
    got = malloc(want + 1);
    assert_non_null(got);
    assert_int_equal(pread(out[s], got, want, 0), (ssize_t)want);
    for (uint64_t i = 0; i < lp.kept[s]; i++)
      if (got[i] != pattern(s, i))
        fail_msg("stream %d byte %llu: %c", s, (unsigned long long)i, got[i]);
    if (s == hit_stream)
      assert_memory_equal(got + lp.kept[s], marker, mlen);
    free(got);
  }
  if (mode == MODE_PASSTHROUGH) {
    /* Each kept byte shown once, behind its stream's line prefix. */
    logged = file_size(pass);
    assert_true(logged >= CAP);
    got = malloc(logged + 1);
    assert_non_null(got);
    assert_int_equal(pread(pass, got, logged, 0), (ssize_t)logged);
    got[logged] = '\0';
    assert_non_null(strstr(got, "[skill stdout] abc"));
    assert_non_null(strstr(got, "[skill stderr] ABC"));
    free(got);
  }
  sr_logpump_done(&lp);
  if (pass >= 0)
    close(pass);
}

static void test_cap_exact_spliced(void **state) {
  (void)state;
  run_capped(MODE_SPLICE);
}

static void test_cap_exact_read_when_splice_refused(void **state) {
  (void)state;
  run_capped(MODE_APPEND);
}

static void test_cap_exact_passthrough(void **state) {
  (void)state;
  run_capped(MODE_PASSTHROUGH);
}

/* Exactly the cap, then EOF: everything kept, no marker, no truncation. */
static void test_exactly_the_cap_is_not_truncated(void **state) {
  struct sr_logpump lp;
  int p[2], e[2], out, err_log;
  uint64_t off = 0;
  bool hit = false;

  (void)state;
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  assert_int_equal(pipe2(e, O_CLOEXEC), 0);
  assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
  assert_int_equal(fcntl(e[0], F_SETFL, O_NONBLOCK), 0);
  out = log_file(false);
  err_log = log_file(false);
  sr_logpump_init(&lp, p[0], e[0], out, err_log, 20000, -1);
  close(e[1]);
  while (off < 20000) {
    feed(p[1], 0, &off, 5000);
    assert_int_equal(sr_logpump_drain(&lp, 0, &hit), 0);
    assert_false(hit);
  }
  close(p[1]);
  for (int i = 0; i < 100 && lp.in_fd[0] >= 0; i++)
    assert_int_equal(sr_logpump_drain(&lp, 0, &hit), 0);
  assert_int_equal(sr_logpump_drain(&lp, 1, &hit), 0);
  assert_false(hit);
  assert_false(lp.truncated);
  assert_int_equal(lp.kept[0], 20000);
  assert_int_equal(lp.dropped[0], 0);
  assert_int_equal(file_size(out), 20000);
  assert_int_equal(file_size(err_log), 0);
  sr_logpump_done(&lp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cap_exact_spliced),
      cmocka_unit_test(test_cap_exact_read_when_splice_refused),
      cmocka_unit_test(test_cap_exact_passthrough),
      cmocka_unit_test(test_exactly_the_cap_is_not_truncated),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
