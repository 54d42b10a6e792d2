/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Refused system calls, reported (skillrun(1), syscall_denied): the
 * supervisor's end of the seccomp filter's listener.  See denials.h.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "audit.h"
#include "denials.h"
#include "fdutil.h"
#include "seccomp.h"

void sr_denials_init(struct sr_denials *d) {
  memset(d, 0, sizeof(*d));
  d->fd = d->wake_fd = -1;
}

void sr_denials_done(struct sr_denials *d) {
  d->fd = safe_close(d->fd);
  d->wake_fd = safe_close(d->wake_fd);
  d->paused = false;
  free(d->notif);
  free(d->resp);
  d->notif = d->resp = NULL;
}

static uint64_t now_ns(void) {
  struct timespec ts;

  /* CLOCK_MONOTONIC cannot fail with a valid pointer. */
  (void)clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Adds the tokens earned since fill_ns, up to the burst. */
static void refill(struct sr_denials *d) {
  const uint64_t per_token = 1000000000u / SR_DENIALS_RATE;
  uint64_t now = now_ns(), earned = (now - d->fill_ns) / per_token;

  if (d->tokens + earned >= SR_DENIALS_BURST) {
    d->tokens = SR_DENIALS_BURST;
    d->fill_ns = now;
    return;
  }
  d->tokens += (unsigned)earned;
  /* What was not yet a whole token counts towards the next one. */
  d->fill_ns += earned * per_token;
}

/* The budget ran out: stop polling the listener for SR_DENIALS_PAUSE_MS. */
static void pause_listener(struct sr_denials *d) {
  struct itimerspec its = {
      .it_value = {.tv_sec = SR_DENIALS_PAUSE_MS / 1000,
                   .tv_nsec = (SR_DENIALS_PAUSE_MS % 1000) * 1000000L}};

  /* Without the timer the listener would never be polled again: then
   * answer on, unbounded, rather than leave the callers blocked. */
  if (timerfd_settime(d->wake_fd, 0, &its, NULL) < 0)
    return;
  d->paused = true;
  d->pauses++;
}

int sr_denials_listen_fd(const struct sr_denials *d) {
  return d->paused ? -1 : d->fd;
}

int sr_denials_wake_fd(const struct sr_denials *d) {
  return d->paused && d->fd >= 0 ? d->wake_fd : -1;
}

void sr_denials_wake(struct sr_denials *d) {
  uint64_t ticks;
  ssize_t n = read(d->wake_fd, &ticks, sizeof(ticks));

  (void)n; /* EAGAIN: nothing to drain; either way the pause is over */
  d->paused = false;
}

int sr_denials_attach(struct sr_denials *d, int fd,
                      const struct sr_seccomp *filter) {
  struct seccomp_notif_sizes sz;
  size_t n, r;

  if (d->fd >= 0) { /* one filter, one listener */
    safe_close(fd);
    return -EEXIST;
  }
  /* The kernel's structures may be larger than this build's headers say
   * (seccomp_unotify(2)): size the buffers as it says. */
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0) {
    int e = -errno;
    safe_close(fd);
    return e;
  }
  n = sz.seccomp_notif > sizeof(struct seccomp_notif)
          ? sz.seccomp_notif
          : sizeof(struct seccomp_notif);
  r = sz.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
          ? sz.seccomp_notif_resp
          : sizeof(struct seccomp_notif_resp);
  free(d->notif);
  free(d->resp);
  d->notif = calloc(1, n);
  d->resp = calloc(1, r);
  if (!d->notif || !d->resp) {
    safe_close(fd);
    return -ENOMEM;
  }
  d->wake_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (d->wake_fd < 0) {
    int e = -errno;
    safe_close(fd);
    return e;
  }
  d->tokens = SR_DENIALS_BURST;
  d->fill_ns = now_ns();
  d->notif_size = (uint16_t)n;
  d->resp_size = (uint16_t)r;
  d->fd = fd;
  d->filter = filter;
  return 0;
}

/* The task's pid in the innermost pid namespace it belongs to (the
 * sandbox's): the last field of NSpid in /proc/PID/status; 0 when it
 * cannot be read. */
static int sandbox_pid(uint32_t host_pid) {
  /* Status files are a few KiB; Groups can make them longer, and NSpid
   * comes after it: a line cut off by the buffer is treated as missing. */
  char path[32], buf[16384];
  _cleanup_close_ int fd = -1;
  const char *line, *end, *last;
  size_t got = 0;
  long v;

  snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", host_pid);
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 || sr_read_full(fd, buf, sizeof(buf) - 1, &got) < 0)
    return 0;
  buf[got] = '\0';
  line = strstr(buf, "\nNSpid:");
  if (!line)
    return 0;
  line += strlen("\nNSpid:");
  end = strchr(line, '\n');
  if (!end)
    return 0;
  last = end;
  while (last > line && last[-1] >= '0' && last[-1] <= '9')
    last--;
  if (last == end)
    return 0;
  v = strtol(last, NULL, 10);
  return v > 0 && v <= INT32_MAX ? (int)v : 0;
}

static struct sr_denial *find(struct sr_denials *d, int nr) {
  for (unsigned i = 0; i < d->n_calls; i++)
    if (d->calls[i].nr == nr)
      return &d->calls[i];
  return NULL;
}

static void count(struct sr_denials *d, const struct seccomp_notif *n) {
  struct sr_denial *c = find(d, n->data.nr);
  uint64_t id = n->id;

  d->total++;
  if (c) {
    c->count++;
    return;
  }
  if (d->n_calls == SR_DENIALS_MAX) {
    d->unreported++;
    return;
  }
  c = &d->calls[d->n_calls++];
  c->nr = n->data.nr;
  c->count = 1;
  memcpy(c->args, n->data.args, sizeof(c->args));
  /* The caller waits for our answer, so its pid is its own while the
   * notification is valid: read, then check that it still is. */
  c->pid = sandbox_pid(n->pid);
  if (c->pid && ioctl(d->fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
    c->pid = 0;
}

/* Receives one notification and answers it with the filter's errno for
 * the call: 0, or -errno when the listener is of no further use. */
static int answer_one(struct sr_denials *d) {
  struct seccomp_notif *n = d->notif;
  struct seccomp_notif_resp *resp = d->resp;

  /* The kernel wants the buffer zeroed. */
  memset(n, 0, d->notif_size);
  if (ioctl(d->fd, SECCOMP_IOCTL_NOTIF_RECV, n) < 0) {
    /* ENOENT: the caller went away (a signal) before we read it. */
    if (errno == ENOENT || errno == EINTR)
      return 0;
    return -errno;
  }
  count(d, n);
  /* Only ever an error: never SECCOMP_USER_NOTIF_FLAG_CONTINUE, so the
   * listener can refuse a call and do nothing else. */
  memset(resp, 0, d->resp_size);
  resp->id = n->id;
  resp->val = 0;
  resp->error = -sr_seccomp_refusal_errno(d->filter, &n->data);
  resp->flags = 0;
  /* ENOENT: the caller was killed while it waited; nothing to answer. */
  if (ioctl(d->fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0 && errno != ENOENT &&
      errno != EINTR)
    return -errno;
  return 0;
}

void sr_denials_handle(struct sr_denials *d, short revents) {
  for (unsigned i = 0; i < SR_DENIALS_BATCH && d->fd >= 0; i++) {
    if (d->tokens == 0)
      refill(d);
    if (d->tokens == 0 && !(revents & (POLLHUP | POLLERR | POLLNVAL))) {
      pause_listener(d);
      if (d->paused)
        return;
    }
    if (i > 0) {
      /* RECV blocks when nothing is pending: look first. */
      struct pollfd p = {.fd = d->fd, .events = POLLIN};
      if (poll(&p, 1, 0) <= 0)
        return;
      revents = p.revents;
    }
    if (!(revents & POLLIN)) {
      /* POLLHUP: no task uses the filter any more (Linux 5.8). */
      if (revents & (POLLHUP | POLLERR | POLLNVAL))
        d->fd = safe_close(d->fd);
      return;
    }
    /* A listener that fails otherwise would be polled readable forever;
     * without it the kernel answers ENOSYS, a refusal all the same. */
    if (answer_one(d) < 0)
      d->fd = safe_close(d->fd);
    if (d->tokens > 0)
      d->tokens--;
  }
}

static json_t *args_json(const uint64_t args[6]) {
  json_t *a = json_array();

  for (size_t i = 0; a && i < 6; i++) {
    char hex[19];
    snprintf(hex, sizeof(hex), "0x%" PRIx64, args[i]);
    json_array_append_new(a, json_string(hex));
  }
  return a;
}

int sr_denials_emit(const struct sr_denials *d, struct sr_audit *audit,
                    struct sr_error *err) {
  char msg[256];

  for (unsigned i = 0; i < d->n_calls; i++) {
    const struct sr_denial *c = &d->calls[i];
    char *name = sr_seccomp_syscall_name(c->nr);
    int r =
        sr_audit_emit(audit, "syscall_denied",
                      json_pack("{s:o, s:i, s:I, s:o, s:o}", "syscall",
                                name ? json_string(name) : json_null(), "nr",
                                c->nr, "count", (json_int_t)c->count, "pid",
                                c->pid ? json_integer(c->pid) : json_null(),
                                "args", args_json(c->args)),
                      err);
    free(name);
    if (r < 0)
      return r;
  }
  if (d->unreported > 0) {
    int r = sr_audit_emit(audit, "syscall_denied_overflow",
                          json_pack("{s:i, s:I}", "cap", SR_DENIALS_MAX,
                                    "count", (json_int_t)d->unreported),
                          err);
    if (r < 0)
      return r;
  }
  if (d->pauses == 0)
    return 0;
  snprintf(msg, sizeof(msg),
           "refused system calls came faster than the supervisor answers "
           "them (%d at once, then %d a second): their callers waited",
           SR_DENIALS_BURST, SR_DENIALS_RATE);
  return sr_audit_emit(audit, "warning",
                       json_pack("{s:s, s:s, s:i, s:i, s:I}", "reason",
                                 "seccomp_throttled", "message", msg, "burst",
                                 SR_DENIALS_BURST, "rate", SR_DENIALS_RATE,
                                 "pauses", (json_int_t)d->pauses),
                       err);
}
