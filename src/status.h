/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

/*
 * How a run ended, and the exit status skillrun reports for it
 * (skillrun(1) EXIT STATUS).  Pure: no syscalls, unit-tested.
 */
enum sr_status {
  SR_STATUS_SUCCEEDED = 0,
  SR_STATUS_FAILED,        /* the skill exited non-zero, or could not exec */
  SR_STATUS_KILLED,        /* a signal killed the skill */
  SR_STATUS_TIMEOUT,       /* the wall clock ran out */
  SR_STATUS_OOM,           /* the memory limit stopped the run */
  SR_STATUS_CPU_EXCEEDED,  /* the CPU-seconds budget ran out */
  SR_STATUS_PIDS_EXCEEDED, /* the process/thread limit stopped the run */
  SR_STATUS_CANCELLED,     /* skillrun got SIGTERM, SIGINT or SIGHUP */
  SR_STATUS_REFUSED,       /* nothing ran: integrity, signature, policy */
  SR_STATUS_ERROR,         /* skillrun failed: usage, config, a layer, the
                            * audit stream */
  SR_STATUS_ABANDONED,     /* its supervisor died; gc closed the record */
  SR__STATUS_MAX
};
/* "succeeded", "failed", ... (the audit's `status`). */
const char *sr_status_name(enum sr_status s);

/* What the supervisor saw of a run that was launched. */
struct sr_outcome {
  bool started;         /* init said the skill's process was started */
  bool have_status;     /* init reported the skill's wait status */
  int wait_status;      /* that status (waitpid(2) encoding) */
  int exec_errno;       /* execve failed with this errno, 0 if it did not */
  bool timed_out;       /* the supervisor killed the tree at the deadline */
  bool cpu_exceeded;    /* ... or when the CPU budget ran out */
  bool memory_exceeded; /* ... or at the memory limit (its sampler) */
  bool pids_exceeded;   /* ... or at the process/thread limit */
  bool oom_killed;      /* the kernel OOM-killed a process of the cgroup */
  bool cpu_by_rlimit;   /* RLIMIT_CPU enforces the CPU budget */
  int cancel_sig;       /* the signal that cancelled the run, 0 if none */
};

/* The run's result as reported. */
struct sr_verdict {
  enum sr_status status;
  int exit_code;     /* what skillrun exits with */
  int skill_exit;    /* the skill's own exit status, -1 if none */
  int signal;        /* the signal that killed the skill, 0 if none */
  int exec_errno;    /* execve's errno, 0 if none */
  bool cpu_exceeded; /* the CPU budget stopped the run (RLIMIT_CPU's
                      * SIGXCPU counts: the same outcome as the cgroup's) */
  bool limit_hit;    /* a memory, CPU or pids limit stopped the run */
};

/* The verdict for an outcome: a pure function of it. */
void sr_verdict_of(const struct sr_outcome *o, struct sr_verdict *v);

/* The status of a run that stopped before or instead of running: refused
 * (exit 123) or error (anything else). */
enum sr_status sr_status_of_error(int exit_code);
