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
/*
 * The supervisor's work on refused calls is bounded per run by a token
 * bucket: it runs outside the run's cgroup and CPU budget, so a skill
 * refused in a tight loop from several threads would otherwise make the
 * host spend about as much CPU answering as the skill spends asking.  An
 * honest skill meets a refused call a handful of times (a probe at start,
 * a fallback); SR_DENIALS_BURST answers at once and SR_DENIALS_RATE a
 * second after that are far above that and far below a loop (hundreds of
 * thousands a second).  Past the budget the listener is not polled for
 * SR_DENIALS_PAUSE_MS: the callers stay blocked in the kernel, waiting for
 * their answer, which still comes, in order, with the same errno.
 */
#define SR_DENIALS_BURST 256
#define SR_DENIALS_RATE 200 /* answers a second */
#define SR_DENIALS_PAUSE_MS 100

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
 * sampled run's memfd_create, shmget, semget, msgget and shared
 * anonymous mmap,
 * sr_seccomp_refusal_errno),
 * nothing else, and counts it by system call number.  Nothing is
 * read from the caller's memory, so there is nothing to race; a skill that
 * refuses itself in a loop waits for each answer, and the answers are
 * rationed (SR_DENIALS_BURST).
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
  /* the token bucket (SR_DENIALS_BURST, SR_DENIALS_RATE) */
  int wake_fd;      /* timerfd: the end of a pause, -1 without a listener */
  unsigned tokens;  /* answers left before the next pause */
  uint64_t fill_ns; /* CLOCK_MONOTONIC up to which tokens were added */
  bool paused;      /* the listener is not polled until wake_fd fires */
  uint64_t pauses;  /* how often the budget ran out */
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

/* The fd to poll for the listener: -1 while paused or without one. */
int sr_denials_listen_fd(const struct sr_denials *d);
/* The fd to poll for the end of a pause: -1 unless paused. */
int sr_denials_wake_fd(const struct sr_denials *d);
/* wake_fd polled readable: the listener is polled again. */
void sr_denials_wake(struct sr_denials *d);

/* One syscall_denied per distinct call, in order of first occurrence, a
 * syscall_denied_overflow for the rest, and a warning (reason
 * seccomp_throttled) when the budget ran out. */
int sr_denials_emit(const struct sr_denials *d, struct sr_audit *audit,
                    struct sr_error *err);

/* Closes the listener (a call still waiting gets ENOSYS from the kernel). */
void sr_denials_done(struct sr_denials *d);
