/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct sr_audit;
struct sr_error;
struct sr_seccomp;

/* Refused calls reported one by one (the first distinct ones of a run);
 * the rest are counted together (syscall_denied_overflow). */
#define SR_DENIALS_MAX 32
/* Notifications answered per wakeup of the event loop, so that a skill
 * refused in a tight loop cannot keep the supervisor from its other fds. */
#define SR_DENIALS_BATCH 64

/* One refused system call: its first occurrence and how often. */
struct sr_denial {
  int nr;
  int pid; /* the first caller, in the sandbox's pid namespace; 0
            * when unknown */
  uint64_t count;
  uint64_t args[6]; /* of the first call */
};

/*
 * The supervisor's side of the seccomp filter's listener (seccomp_unotify(2)):
 * every call the filter refuses waits for the supervisor, which answers
 * the errno the filter would have returned itself (EPERM; ENOSYS for a
 * sampled run's memfd_create and shmget, sr_seccomp_refusal_errno),
 * nothing else, and counts it by system call number.  Nothing is
 * read from the caller's memory, so there is nothing to race; a skill that
 * refuses itself in a loop costs the supervisor one answer per call and
 * waits for each.
 */
struct sr_denials {
  int fd; /* the listener, -1 without one */
  /* the filter it belongs to: which errno each refusal gets */
  const struct sr_seccomp *filter;
  void *notif; /* a struct seccomp_notif of the kernel's size */
  void *resp;  /* a struct seccomp_notif_resp of the kernel's size */
  uint16_t notif_size, resp_size;
  struct sr_denial calls[SR_DENIALS_MAX];
  unsigned n_calls;
  uint64_t total;      /* every refused call */
  uint64_t unreported; /* refused calls beyond the first SR_DENIALS_MAX */
};

void sr_denials_init(struct sr_denials *d);

/* Takes the listener fd (closed on failure) of `filter`, which must
 * outlive d. */
int sr_denials_attach(struct sr_denials *d, int fd,
                      const struct sr_seccomp *filter);

/*
 * The listener polled readable (revents): answers at most SR_DENIALS_BATCH
 * pending notifications.  When the filter has no task left (POLLHUP) the
 * listener is closed.  Errors of the answers themselves (the caller was
 * killed meanwhile) are not errors of the run.
 */
void sr_denials_handle(struct sr_denials *d, short revents);

/* One syscall_denied per distinct call, in order of first occurrence, and a
 * syscall_denied_overflow for the rest. */
int sr_denials_emit(const struct sr_denials *d, struct sr_audit *audit,
                    struct sr_error *err);

/* Closes the listener (a call still waiting gets ENOSYS from the kernel). */
void sr_denials_done(struct sr_denials *d);
