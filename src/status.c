/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The exit status table of skillrun(1), as one function.  The order of the
 * checks is the precedence of the causes: the supervisor's own kills
 * (timeout, CPU budget, memory, pids) first, then the kernel's OOM kill,
 * then what the skill did; a cancellation names the run cancelled unless a
 * limit stopped it first.  A limit that stopped the run is always named by
 * the status, whatever the skill's process did after it (skillrun(1)
 * LIMITS): 137, like the kill it was.
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
      [SR_STATUS_PIDS_EXCEEDED] = "pids_exceeded",
      [SR_STATUS_CANCELLED] = "cancelled",
      [SR_STATUS_REFUSED] = "refused",
      [SR_STATUS_ERROR] = "error",
      [SR_STATUS_ABANDONED] = "abandoned",
  };
  return (unsigned)s < SR__STATUS_MAX ? names[s] : "error";
}

enum sr_status sr_status_of_error(int exit_code) {
  return exit_code == SR_EXIT_REFUSED ? SR_STATUS_REFUSED : SR_STATUS_ERROR;
}

/* How the skill ended, as far as a kill from outside leaves it on the
 * record: its own exit status if it had one, else the signal it died of;
 * without a status the supervisor's SIGKILL took init and the tree along
 * (the record said null there, as if nothing had ended the skill), unless
 * nothing of the skill ran: its execve failed, or init was killed while
 * it still built the sandbox (a deadline or a cancellation that came
 * first), and no signal ended a skill that never started. */
static void skill_end(const struct sr_outcome *o, struct sr_verdict *v) {
  if (o->have_status && WIFEXITED(o->wait_status))
    v->skill_exit = WEXITSTATUS(o->wait_status);
  else if (o->have_status && WIFSIGNALED(o->wait_status))
    v->signal = WTERMSIG(o->wait_status);
  else if (!o->have_status && !o->exec_errno && o->started)
    v->signal = SIGKILL;
}

/* A limit stopped the run: the status names it, exit 137, and the skill's
 * end (the kernel's OOM kill, the supervisor's SIGKILL, or its own exit
 * just before) stays on the record. */
static void limit_kill(const struct sr_outcome *o, struct sr_verdict *v,
                       enum sr_status status) {
  v->status = status;
  v->exit_code = 128 + SIGKILL;
  v->limit_hit = true;
  v->cpu_exceeded = status == SR_STATUS_CPU_EXCEEDED;
  skill_end(o, v);
}

static void by_cause(const struct sr_outcome *o, struct sr_verdict *v) {
  const int st = o->wait_status;

  if (o->timed_out) {
    v->status = SR_STATUS_TIMEOUT;
    v->exit_code = SR_EXIT_TIMEOUT;
    /* What the skill made of the SIGTERM sent at the deadline; no
     * status: kill-grace ran out, as for a cancellation (below). */
    skill_end(o, v);
  } else if (o->cpu_exceeded) {
    limit_kill(o, v, SR_STATUS_CPU_EXCEEDED);
  } else if (o->memory_exceeded || o->oom_killed) {
    /* An OOM kill of any process of the run is the limit stopping it
     * (cgroup v2 kills the whole group, the supervisor the rest of the
     * tree under cgroup v1), even if the skill's process exited first. */
    limit_kill(o, v, SR_STATUS_OOM);
  } else if (o->pids_exceeded) {
    limit_kill(o, v, SR_STATUS_PIDS_EXCEEDED);
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
    limit_kill(o, v, SR_STATUS_CPU_EXCEEDED);
    v->signal = SIGXCPU;
  } else if (o->have_status && WIFSIGNALED(st)) {
    v->signal = WTERMSIG(st);
    v->exit_code = 128 + v->signal;
    v->status = SR_STATUS_KILLED;
  } else {
    /* init died without reporting: only our own kill does that. */
    v->status = o->cancel_sig ? SR_STATUS_CANCELLED : SR_STATUS_KILLED;
    v->exit_code = 128 + SIGKILL;
    skill_end(o, v);
  }
}

void sr_verdict_of(const struct sr_outcome *o, struct sr_verdict *v) {
  memset(v, 0, sizeof(*v));
  v->skill_exit = -1;
  by_cause(o, v);
  /* As shells expect of a command stopped by a signal: 128 + the signal
   * skillrun got (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP),
   * whatever the skill made of the SIGTERM it was sent. */
  if (o->cancel_sig && !o->timed_out && !v->limit_hit) {
    v->status = SR_STATUS_CANCELLED;
    v->exit_code = 128 + o->cancel_sig;
  }
}
