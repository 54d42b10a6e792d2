/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The --stdin pump (src/stdinpump.c) between real pipes: bytes and EOF
 * arrive, a skill that never reads does not block it, one that closes its
 * end stops it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sha256.h"
#include "stdinpump.h"

/* A few rounds of what the event loop does when both ends are ready. */
static void pump(struct sr_stdinpump *p, int rounds) {
  for (int i = 0; i < rounds; i++) {
    sr_stdinpump_on_readable(p);
    sr_stdinpump_on_writable(p);
  }
}

static void test_forwards_bytes_and_eof(void **state) {
  static const char msg[] = "{\"request\": \"summarise\"}\n";
  struct sr_stdinpump p;
  char got[64], hex[SR_SHA256_HEX_LEN + 1], want[SR_SHA256_HEX_LEN + 1];
  int in[2], out[2];
  ssize_t n;

  (void)state;
  assert_int_equal(pipe2(in, O_CLOEXEC), 0);
  assert_int_equal(pipe2(out, O_CLOEXEC), 0);
  assert_int_equal(write(in[1], msg, strlen(msg)), (ssize_t)strlen(msg));
  close(in[1]); /* the caller's input ends */
  sr_stdinpump_init(&p);
  assert_int_equal(sr_stdinpump_start(&p, in[0], out[1]), 0);
  assert_int_equal(sr_stdinpump_read_fd(&p), in[0]);
  assert_int_equal(sr_stdinpump_write_fd(&p), -1);
  pump(&p, 3);
  assert_true(sr_stdinpump_complete(&p));
  assert_int_equal(p.bytes, strlen(msg));
  /* The skill reads the bytes, then EOF: the pipe was closed. */
  n = read(out[0], got, sizeof(got));
  assert_int_equal(n, (ssize_t)strlen(msg));
  assert_memory_equal(got, msg, strlen(msg));
  assert_int_equal(read(out[0], got, sizeof(got)), 0);
  assert_int_equal(sr_stdinpump_finish(&p, hex), 0);
  assert_int_equal(sr_sha256_hex(msg, strlen(msg), want), 0);
  assert_string_equal(hex, want);
  sr_stdinpump_done(&p);
  close(in[0]);
  close(out[0]);
}

static void test_skill_that_never_reads(void **state) {
  struct sr_stdinpump p;
  char *chunk = calloc(1, 65536);
  int in[2], out[2];
  size_t fed = 0;

  (void)state;
  assert_non_null(chunk);
  assert_int_equal(pipe2(in, O_CLOEXEC | O_NONBLOCK), 0);
  assert_int_equal(pipe2(out, O_CLOEXEC), 0);
  sr_stdinpump_init(&p);
  assert_int_equal(sr_stdinpump_start(&p, in[0], out[1]), 0);
  /* Far more than the pipe and the buffer hold; every step returns. */
  for (int i = 0; i < 64; i++) {
    ssize_t w = write(in[1], chunk, 65536);
    if (w > 0)
      fed += (size_t)w;
    pump(&p, 4);
  }
  assert_true(fed > 2 * SR_STDIN_BUF);
  /* Stuck on the full pipe: the caller's input is not read any more. */
  assert_int_equal(sr_stdinpump_read_fd(&p), -1);
  assert_int_equal(sr_stdinpump_write_fd(&p), out[1]);
  assert_false(sr_stdinpump_complete(&p));
  assert_true(p.bytes > 0 && p.bytes < fed);
  sr_stdinpump_done(&p);
  close(in[0]);
  close(in[1]);
  close(out[0]);
  free(chunk);
}

static void test_skill_closes_its_end(void **state) {
  struct sr_stdinpump p;
  char hex[SR_SHA256_HEX_LEN + 1];
  int in[2], out[2];

  (void)state;
  assert_int_equal(pipe2(in, O_CLOEXEC), 0);
  assert_int_equal(pipe2(out, O_CLOEXEC), 0);
  assert_int_equal(write(in[1], "abc", 3), 3);
  close(out[0]); /* the skill closed its stdin */
  sr_stdinpump_init(&p);
  assert_int_equal(sr_stdinpump_start(&p, in[0], out[1]), 0);
  pump(&p, 2);
  assert_int_equal(sr_stdinpump_read_fd(&p), -1);
  assert_int_equal(sr_stdinpump_write_fd(&p), -1);
  assert_false(sr_stdinpump_complete(&p));
  assert_int_equal(p.bytes, 0);
  assert_int_equal(sr_stdinpump_finish(&p, hex), 0);
  sr_stdinpump_done(&p);
  close(in[0]);
  close(in[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_forwards_bytes_and_eof),
      cmocka_unit_test(test_skill_that_never_reads),
      cmocka_unit_test(test_skill_closes_its_end),
  };
  /* As in skillrun's main: a write to a closed pipe fails with EPIPE. */
  signal(SIGPIPE, SIG_IGN);
  cmocka_set_message_output(CM_OUTPUT_TAP);
  return cmocka_run_group_tests_name("stdinpump", tests, NULL, NULL);
}
