/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sha256.h"

/*
 * --stdin: the caller's standard input, forwarded to the skill's through a
 * pipe by the supervisor's event loop (skillrun(1), --stdin).  Bounded:
 * one buffer of SR_STDIN_BUF bytes between the two ends, so a skill that
 * never reads costs the supervisor that much and never blocks it: once the
 * pipe and the buffer are full, the caller's input is no longer read.  EOF
 * of the caller's input is passed on by closing the pipe; a skill that
 * closes its end (or exits) stops the forwarding, and the rest of the
 * input is left unread.  The bytes forwarded are counted and hashed for
 * the record; nothing else limits them (the wall clock bounds the run).
 */
#define SR_STDIN_BUF (64u * 1024)

/* How the caller's input is read without waiting (stdinpump.c, read_some). */
enum sr_stdin_read {
  SR_STDIN_READ_NOWAIT, /* preadv2(2) RWF_NOWAIT: a pipe */
  SR_STDIN_READ_RECV,   /* recv(2) MSG_DONTWAIT: a socket */
  SR_STDIN_READ_OWN,    /* read(2) on own_fd, opened again O_NONBLOCK */
  SR_STDIN_READ_PLAIN,  /* read(2): a file, or nothing else worked */
};

struct sr_stdinpump {
  int in_fd;  /* what is read: the caller's standard input (not owned), or
               * own_fd; -1 when done */
  int own_fd; /* the caller's input opened again, O_NONBLOCK, owned, or -1 */
  enum sr_stdin_read how;
  int out_fd; /* the pipe's write end, O_NONBLOCK, owned; -1 once closed */
  unsigned char *buf;
  size_t len, off; /* buf[off..len) is waiting to be written */
  bool eof;        /* the caller's input ended (or failed to read) */
  int read_err;    /* the errno that ended it early, or 0 */
  bool broken;     /* the skill's end closed first: the rest is unread */
  uint64_t bytes;  /* written into the pipe */
  struct sr_sha256 hash;
  bool hashing;
};

/* Inactive (every fd -1): sr_stdinpump_done and the queries are safe. */
void sr_stdinpump_init(struct sr_stdinpump *p);
/* Takes out_fd (set O_NONBLOCK here) and reads in_fd.  0 or -errno. */
int sr_stdinpump_start(struct sr_stdinpump *p, int in_fd, int out_fd);

/* What the loop should wait for now: -1 for nothing. */
int sr_stdinpump_read_fd(const struct sr_stdinpump *p);
int sr_stdinpump_write_fd(const struct sr_stdinpump *p);
/* One read from in_fd (it polled readable or hung up).  0, or the errno
 * of a read error that has just ended the input early (once): the skill
 * then sees the end of its input, and the pump is not complete. */
int sr_stdinpump_on_readable(struct sr_stdinpump *p);
/* One write to out_fd (it polled writable, or failed: the reader is gone). */
void sr_stdinpump_on_writable(struct sr_stdinpump *p);

/* Whether the caller's input was forwarded to its end (EOF passed on):
 * not after a read error. */
bool sr_stdinpump_complete(const struct sr_stdinpump *p);
/* Stops forwarding (closes the pipe); the lowercase hex SHA-256 of the
 * bytes forwarded into hex.  0 or -errno. */
int sr_stdinpump_finish(struct sr_stdinpump *p,
                        char hex[SR_SHA256_HEX_LEN + 1]);
void sr_stdinpump_done(struct sr_stdinpump *p);
