/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sync socket (src/sync.c) between real SOCK_SEQPACKET ends: a
 * message and its fd arrive; the peer's last message is read even when the
 * peer closed its end with messages of ours unread (the kernel then
 * reports ECONNRESET once, ahead of them: init ends while log-pipe
 * hand-overs are queued for it, and its SR_SYNC_EXITED must not be lost),
 * and its end is EOF after that. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "sync.h"

static void pair(int sv[2]) {
  assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv),
                   0);
  /* The supervisor's end is non-blocking. */
  assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
}

static void test_message_and_fd(void **state) {
  struct sr_sync_msg m;
  struct stat a, b;
  int sv[2], p[2], got = -1;

  (void)state;
  pair(sv);
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  assert_int_equal(sr_sync_send(sv[0], SR_SYNC_DISCARD, 1, NULL, p[0]), 0);
  assert_int_equal(sr_sync_recv(sv[1], &m, &got), 0);
  assert_int_equal(m.type, SR_SYNC_DISCARD);
  assert_int_equal(m.value, 1);
  assert_true(got >= 0);
  assert_int_equal(fstat(got, &a), 0);
  assert_int_equal(fstat(p[0], &b), 0);
  assert_true(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
  close(got);
  close(p[0]);
  close(p[1]);
  close(sv[0]);
  close(sv[1]);
}

static void test_last_message_survives_unread_close(void **state) {
  struct sr_sync_msg m;
  int sv[2], p[2], got = -1;

  (void)state;
  pair(sv);
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  /* Ours, never read by the peer (one with an fd, one without). */
  assert_int_equal(sr_sync_send(sv[0], SR_SYNC_DISCARD_COUNTS, 0, NULL, p[0]),
                   0);
  assert_int_equal(sr_sync_send(sv[0], SR_SYNC_DISCARD, 0, NULL, -1), 0);
  /* The peer's last word, then it is gone. */
  assert_int_equal(sr_sync_send_exited(sv[1], 7 << 8, 42, 1500000), 0);
  close(sv[1]);

  assert_int_equal(sr_sync_recv(sv[0], &m, &got), 0);
  assert_int_equal(m.type, SR_SYNC_EXITED);
  assert_int_equal(m.value, 7 << 8);
  assert_true(m.mono_ns == 42);
  assert_true(m.cpu_usec == 1500000);
  assert_int_equal(got, -1);
  /* Then its end, as EOF, and again. */
  assert_int_equal(sr_sync_recv(sv[0], &m, NULL), -EPIPE);
  assert_int_equal(sr_sync_recv(sv[0], &m, NULL), -EPIPE);
  close(p[0]);
  close(p[1]);
  close(sv[0]);
}

static void test_nothing_yet_is_eagain(void **state) {
  struct sr_sync_msg m;
  int sv[2];

  (void)state;
  pair(sv);
  assert_int_equal(sr_sync_recv(sv[0], &m, NULL), -EAGAIN);
  close(sv[1]);
  assert_int_equal(sr_sync_recv(sv[0], &m, NULL), -EPIPE);
  close(sv[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_message_and_fd),
      cmocka_unit_test(test_last_message_survives_unread_close),
      cmocka_unit_test(test_nothing_yet_is_eagain),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
