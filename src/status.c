/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit status table of skillrun(1), as one function.  The order of the
 * checks is the precedence of the causes: the supervisor's own kills
 * (timeout, CPU budget) first, then the cgroup's OOM kill, then what the
 * skill did; a cancellation names the run cancelled unless a limit stopped
 * it first.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "error.h"
#include "status.h"

const char *sr_status_name(enum sr_status s) {
  static const char *const names[SR__STATUS_MAX] = {
      [SR_STATUS_SUCCEEDED] = "succeeded",
      [SR_STATUS_FAILED] = "failed",
      [SR_STATUS_KILLED] = "killed",
      [SR_STATUS_TIMEOUT] = "timeout",
      [SR_STATUS_OOM] = "oom",
      [SR_STATUS_CPU_EXCEEDED] = "cpu_exceeded",
      [SR_STATUS_CANCELLED] = "cancelled",
      [SR_STATUS_REFUSED] = "refused",
      [SR_STATUS_ERROR] = "error",
  };
  return (unsigned)s < SR__STATUS_MAX ? names[s] : "error";
}

enum sr_status sr_status_of_error(int exit_code) {
  return exit_code == SR_EXIT_REFUSED ? SR_STATUS_REFUSED : SR_STATUS_ERROR;
}

static void by_cause(const struct sr_outcome *o, struct sr_verdict *v) {
  const int st = o->wait_status;

  if (o->timed_out) {
    v->status = SR_STATUS_TIMEOUT;
    v->exit_code = SR_EXIT_TIMEOUT;
  } else if (o->cpu_exceeded) {
    v->status = SR_STATUS_CPU_EXCEEDED;
    v->exit_code = 128 + SIGKILL;
    v->cpu_exceeded = true;
  } else if (o->oom_killed && (!o->have_status || !WIFEXITED(st))) {
    v->status = SR_STATUS_OOM;
    v->exit_code = 128 + SIGKILL;
  } else if (o->exec_errno) {
    v->status = SR_STATUS_FAILED;
    v->exec_errno = o->exec_errno;
    v->exit_code = (o->exec_errno == ENOENT || o->exec_errno == ENOTDIR)
                       ? SR_EXIT_NOTFOUND
                       : SR_EXIT_NOEXEC;
  } else if (o->have_status && WIFEXITED(st)) {
    v->skill_exit = WEXITSTATUS(st);
    v->exit_code = v->skill_exit;
    v->status = v->skill_exit == 0 ? SR_STATUS_SUCCEEDED : SR_STATUS_FAILED;
  } else if (o->have_status && WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU &&
             o->cpu_by_rlimit) {
    /* The rlimit fallback's CPU kill: the same outcome as the cgroup
     * budget, reported the same way (CPU-cap kills are 137). */
    v->signal = SIGXCPU;
    v->exit_code = 128 + SIGKILL;
    v->status = SR_STATUS_CPU_EXCEEDED;
    v->cpu_exceeded = true;
  } else if (o->have_status && WIFSIGNALED(st)) {
    v->signal = WTERMSIG(st);
    v->exit_code = 128 + v->signal;
    v->status = SR_STATUS_KILLED;
  } else {
    /* init died without reporting: only our own kill does that. */
    v->status = o->cancel_sig ? SR_STATUS_CANCELLED : SR_STATUS_KILLED;
    v->signal = SIGKILL;
    v->exit_code = 128 + SIGKILL;
  }
}

void sr_verdict_of(const struct sr_outcome *o, struct sr_verdict *v) {
  memset(v, 0, sizeof(*v));
  v->skill_exit = -1;
  by_cause(o, v);
  if (o->cancel_sig && !o->timed_out && !v->cpu_exceeded) {
    v->status = SR_STATUS_CANCELLED;
    if (!o->have_status)
      v->exit_code = 128 + o->cancel_sig;
  }
}
