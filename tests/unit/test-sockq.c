/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The count of bytes queued on connections no process holds (src/sockq.c)
 * over files written as the kernel writes net/snmp, net/tcp and net/tcp6:
 * only established and close-wait connections without an inode count,
 * listeners (whose rx_queue is their backlog) and held sockets do not;
 * the listing is read again only once PassiveOpens moved or while such a
 * connection was found. */
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
#include <unistd.h>
#include <cmocka.h>

#include "sockq.h"

#define TCP_HEAD                                                               \
  "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when "        \
  "retrnsmt   uid  timeout inode\n"
/* A listener with 3 connections in its backlog (rx_queue 3), one of them
 * with 0x200000 bytes queued, one in close-wait with 0x10 bytes, one
 * established with 0x1000 bytes and no inode yet, and the client sides
 * and an accepted connection, which have inodes. */
static const char tcp[] = TCP_HEAD
    "   0: 0100007F:A0B1 00000000:0000 0A 00000000:00000003 00:00000000 "
    "00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n"
    "   1: 0100007F:A0B1 0100007F:C001 01 00000000:00200000 00:00000000 "
    "00000000     0        0 0 1 0000000000000000 20 4 30 10 -1\n"
    "   2: 0100007F:A0B1 0100007F:C002 08 00000000:00000010 00:00000000 "
    "00000000     0        0 0 1 0000000000000000 20 4 30 10 -1\n"
    "   3: 0100007F:C001 0100007F:A0B1 01 00000000:00000000 00:00000000 "
    "00000000     0        0 5001 1 0000000000000000 20 4 30 10 -1\n"
    "   4: 0100007F:A0B1 0100007F:C003 01 00000000:00004000 00:00000000 "
    "00000000     0        0 5002 1 0000000000000000 20 4 30 10 -1\n"
    "   5: 0100007F:A0B1 0100007F:C004 06 00000000:00000000 03:00001770 "
    "00000000     0        0 0 3 0000000000000000\n";
static const char tcp6[] = TCP_HEAD
    "   0: 00000000000000000000000001000000:B000 "
    "00000000000000000000000001000000:C100 01 00000000:00001000 "
    "00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 "
    "-1\n";

static int file_with(const char *text) {
  char path[] = "/tmp/test-sockq.XXXXXX";
  int fd = mkostemp(path, O_CLOEXEC);

  assert_true(fd >= 0);
  assert_int_equal(unlink(path), 0);
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  return fd;
}

static int snmp_with(unsigned passive) {
  char text[512];

  snprintf(text, sizeof(text),
           "Ip: Forwarding DefaultTTL\nIp: 1 64\n"
           "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens "
           "AttemptFails\nTcp: 1 200 120000 -1 7 %u 0\n"
           "Udp: InDatagrams\nUdp: 0\n",
           passive);
  return file_with(text);
}

/* A reader over files: net/snmp with `passive`, net/tcp, and net/tcp6
 * unless NULL (a kernel without IPv6). */
static void q_over(struct sr_sockq *q, unsigned passive, const char *t4,
                   const char *t6) {
  sr_sockq_init(q);
  q->fd[0] = snmp_with(passive);
  q->fd[1] = file_with(t4);
  if (t6)
    q->fd[2] = file_with(t6);
}

static void test_counts_unheld_connections(void **state) {
  struct sr_sockq q;
  uint64_t bytes = 1;

  (void)state;
  q_over(&q, 4, tcp, tcp6);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0x200000 + 0x10 + 0x1000);
  assert_int_equal(q.unheld, 3);
  sr_sockq_close(&q);
}

/* Nothing made for a listener since a reading that found nothing: the
 * listing is not read again (an unreadable one would fail). */
static void test_reads_listing_only_when_needed(void **state) {
  struct sr_sockq q;
  uint64_t bytes = 1;

  (void)state;
  q_over(&q, 0, TCP_HEAD, TCP_HEAD);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0);
  /* A directory's fd cannot be read: had it been, the error shows. */
  close(q.fd[1]);
  q.fd[1] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0);
  /* PassiveOpens moved: read it (past the backoff), and fail. */
  close(q.fd[0]);
  q.fd[0] = snmp_with(1);
  q.next_ms = 0;
  assert_int_equal(sr_sockq_read(&q, false, &bytes), -EISDIR);
  sr_sockq_close(&q);
}

/* A kernel without IPv6 (ipv6.disable=1) has no net/tcp6: sr_sockq_open
 * leaves its fd -1, and IPv4's connections still count. */
static void test_no_ipv6_table(void **state) {
  struct sr_sockq q;
  uint64_t bytes = 1;

  (void)state;
  q_over(&q, 4, tcp, NULL);
  assert_int_equal(q.fd[2], -1);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0x200000 + 0x10);
  sr_sockq_close(&q);
}

/* Within the backoff the last figure is given again, said to be stale;
 * `fresh` reads the listing at once (the connections were accepted). */
static void test_stale_and_fresh(void **state) {
  struct sr_sockq q;
  uint64_t bytes = 1;

  (void)state;
  q_over(&q, 4, tcp, TCP_HEAD);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0x200010);
  assert_false(q.stale);
  q.next_ms = UINT64_MAX; /* the backoff */
  close(q.fd[1]);
  q.fd[1] = file_with(TCP_HEAD);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0x200010);
  assert_true(q.stale);
  assert_int_equal(sr_sockq_read(&q, true, &bytes), 0);
  assert_int_equal(bytes, 0);
  assert_false(q.stale);
  sr_sockq_close(&q);
}

/* A listing for new connections that found none is read once more: a
 * connection counted may have been a request still (SYN_RECV) when its
 * line was read; then no more until the count moves. */
static void test_once_more_after_new(void **state) {
  struct sr_sockq q;
  uint64_t bytes = 1;

  (void)state;
  q_over(&q, 5, TCP_HEAD, TCP_HEAD);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0);
  close(q.fd[1]);
  q.fd[1] = file_with(tcp);
  q.next_ms = 0;
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0x200010);
  sr_sockq_close(&q);

  q_over(&q, 5, TCP_HEAD, TCP_HEAD);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  q.next_ms = 0;
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  /* Two listings found nothing, the count has not moved: none now. */
  close(q.fd[1]);
  q.fd[1] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  q.next_ms = 0;
  assert_int_equal(sr_sockq_read(&q, false, &bytes), 0);
  assert_int_equal(bytes, 0);
  sr_sockq_close(&q);
}

/* A listing's line longer than the buffer is not one of the kernel's. */
static void test_refuses_garbage(void **state) {
  struct sr_sockq q;
  uint64_t bytes;
  char *junk = malloc(70000);

  (void)state;
  assert_non_null(junk);
  memset(junk, 'x', 69999);
  junk[69999] = '\0';
  q_over(&q, 3, junk, TCP_HEAD);
  assert_int_equal(sr_sockq_read(&q, false, &bytes), -EBADMSG);
  close(q.fd[0]);
  q.fd[0] = file_with("Tcp: RtoAlgorithm\nTcp: 1\n");
  assert_int_equal(sr_sockq_read(&q, false, &bytes), -EBADMSG);
  sr_sockq_close(&q);
  free(junk);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counts_unheld_connections),
      cmocka_unit_test(test_reads_listing_only_when_needed),
      cmocka_unit_test(test_no_ipv6_table),
      cmocka_unit_test(test_stale_and_fresh),
      cmocka_unit_test(test_once_more_after_new),
      cmocka_unit_test(test_refuses_garbage),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
