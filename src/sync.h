/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "error.h"

/*
 * The sync socket between the supervisor and the sandbox (init and the
 * skill's process before exec): a SOCK_SEQPACKET pair, one message per
 * send.  Errors inside the sandbox travel up as a struct sr_error.
 */
enum sr_sync_type {
  SR_SYNC_GO = 1,      /* supervisor -> init: maps written, go on; and
                        * init -> the skill's process, on their go
                        * socket: exec */
  SR_SYNC_ERROR,       /* init/child -> supervisor: a layer failed (err) */
  SR_SYNC_READY,       /* init -> supervisor: skill started (value = pid in
                        * the sandbox), outputs dir fd attached */
  SR_SYNC_EXEC_FAILED, /* child -> supervisor: execve failed (value = errno) */
  SR_SYNC_EXITED,      /* init -> supervisor: skill wait status (value) */
  SR_SYNC_PROXY_LISTENER,   /* init -> supervisor: a listener of the egress
                             * proxy attached (value = how many follow) */
  SR_SYNC_PROXY_READY,      /* supervisor -> init: the proxy serves them */
  SR_SYNC_SECCOMP_LISTENER, /* child -> supervisor: the seccomp filter's
                             * listener fd attached (refused calls) */
  SR_SYNC_SECCOMP_PLAIN,    /* child -> supervisor: the kernel refused the
                             * listener (EBUSY); the filter loaded answers
                             * EPERM itself */
  SR_SYNC_DISCARD_COUNTS,   /* supervisor -> init: past the log cap, a
                             * memfd of SR_DISCARD_COUNTS_SIZE bytes (two
                             * uint64_t: bytes discarded from stdout and
                             * stderr) attached, for init to map shared */
  SR_SYNC_DISCARD,          /* supervisor -> init: a log pipe's read end
                             * attached (value = 0 stdout, 1 stderr) for
                             * init to drain and count (init.c) */
  SR_SYNC_RECORDED,         /* supervisor -> init: policy_resolved is on
                             * the record and the run's timers are armed:
                             * the skill may be let go */
  SR_SYNC_NARROWED,         /* child -> init, on their go socket: narrowed,
                             * waiting for SR_SYNC_GO; the fd, its new
                             * network namespace if it made one */
  SR_SYNC_WARNING,          /* init -> supervisor: something a layer went
                             * on without (err: its layer and message),
                             * recorded as a warning with the layer as its
                             * reason */
};

#define SR_DISCARD_COUNTS_SIZE (2 * sizeof(uint64_t))

struct sr_sync_msg {
  uint32_t type;
  int32_t value;
  uint64_t mono_ns;  /* SR_SYNC_EXITED: when init reaped the skill
                      * (CLOCK_MONOTONIC, the supervisor's timers' clock) */
  uint64_t cpu_usec; /* SR_SYNC_EXITED: the CPU time of the whole tree,
                      * user and system, once init reaped it all (the
                      * skill's rusage and what init reaped besides) */
  struct sr_error err;
};

/* Sends one message, with an fd attached when pass_fd >= 0. */
int sr_sync_send(int fd, uint32_t type, int32_t value,
                 const struct sr_error *err, int pass_fd);
/* SR_SYNC_EXITED: the skill's wait status, when it was reaped and the CPU
 * time it had spent. */
int sr_sync_send_exited(int fd, int32_t status, uint64_t reaped_ns,
                        uint64_t cpu_usec);
/* Receives one message; *ret_fd gets an attached fd or -1.  -EPIPE at EOF. */
int sr_sync_recv(int fd, struct sr_sync_msg *m, int *ret_fd);
