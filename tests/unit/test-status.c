/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exit status table of skillrun(1), row by row (src/status.c). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "error.h"
#include "status.h"

/* waitpid(2) encodings, built with the same macros the kernel's layout
 * gives (W_EXITCODE is glibc's). */
#define EXITED(n) W_EXITCODE((n), 0)
#define SIGNALED(s) W_EXITCODE(0, (s))

struct row {
  const char *what;
  struct sr_outcome o; /* .started is set for every row but ... */
  enum sr_status status;
  int exit_code;
  int skill_exit;
  int signal;
  bool cpu_exceeded;
  bool before_start; /* ... these: init had not started the skill */
};

static const struct row rows[] = {
    {"exit 0",
     {.have_status = true, .wait_status = EXITED(0)},
     SR_STATUS_SUCCEEDED,
     0,
     0,
     0,
     false,
     false},
    {"exit 3",
     {.have_status = true, .wait_status = EXITED(3)},
     SR_STATUS_FAILED,
     3,
     3,
     0,
     false,
     false},
    /* A skill that itself exits 124 is not a timeout: the audit tells. */
    {"exit 124",
     {.have_status = true, .wait_status = EXITED(124)},
     SR_STATUS_FAILED,
     124,
     124,
     0,
     false,
     false},
    {"killed by SIGSEGV",
     {.have_status = true, .wait_status = SIGNALED(11)},
     SR_STATUS_KILLED,
     139,
     -1,
     11,
     false,
     false},
    {"exec ENOENT",
     {.exec_errno = ENOENT},
     SR_STATUS_FAILED,
     127,
     -1,
     0,
     false,
     false},
    {"exec ENOTDIR",
     {.exec_errno = ENOTDIR},
     SR_STATUS_FAILED,
     127,
     -1,
     0,
     false,
     false},
    {"exec EACCES",
     {.exec_errno = EACCES},
     SR_STATUS_FAILED,
     126,
     -1,
     0,
     false,
     false},
    {"exec ENOEXEC",
     {.exec_errno = ENOEXEC},
     SR_STATUS_FAILED,
     126,
     -1,
     0,
     false,
     false},
    /* No status: kill-grace ran out, the tree was killed with SIGKILL. */
    {"wall clock, past kill-grace",
     {.timed_out = true},
     SR_STATUS_TIMEOUT,
     124,
     -1,
     SIGKILL,
     false,
     false},
    /* The deadline wins over the status init still reported, which stays
     * on the record as the skill's own. */
    {"wall clock, then exit 0",
     {.timed_out = true, .have_status = true, .wait_status = EXITED(0)},
     SR_STATUS_TIMEOUT,
     124,
     0,
     0,
     false,
     false},
    {"cgroup CPU budget",
     {.cpu_exceeded = true},
     SR_STATUS_CPU_EXCEEDED,
     137,
     -1,
     SIGKILL,
     true,
     false},
    {"RLIMIT_CPU's SIGXCPU",
     {.have_status = true,
      .wait_status = SIGNALED(SIGXCPU),
      .cpu_by_rlimit = true},
     SR_STATUS_CPU_EXCEEDED,
     137,
     -1,
     SIGXCPU,
     true,
     false},
    /* Behind a cgroup, SIGXCPU is the skill's own business. */
    {"SIGXCPU without the rlimit fallback",
     {.have_status = true, .wait_status = SIGNALED(SIGXCPU)},
     SR_STATUS_KILLED,
     128 + SIGXCPU,
     -1,
     SIGXCPU,
     false,
     false},
    {"OOM kill",
     {.oom_killed = true,
      .have_status = true,
      .wait_status = SIGNALED(SIGKILL)},
     SR_STATUS_OOM,
     137,
     -1,
     SIGKILL,
     false,
     false},
    /* An OOM kill of a helper is the limit stopping the run, even when
     * the skill's process exited 0 before the rest was killed: the status
     * names it, the skill's own exit stays on the record. */
    {"OOM kill, skill exited",
     {.oom_killed = true, .have_status = true, .wait_status = EXITED(0)},
     SR_STATUS_OOM,
     137,
     0,
     0,
     false,
     false},
    /* The supervisor's sampler stopped the tree at the memory limit (no
     * cgroup): the same outcome as the kernel's OOM kill. */
    {"memory limit, sampled",
     {.memory_exceeded = true,
      .have_status = true,
      .wait_status = SIGNALED(SIGKILL)},
     SR_STATUS_OOM,
     137,
     -1,
     SIGKILL,
     false,
     false},
    /* Never `failed` with exit 1 for a limit: a skill that exits 1 on
     * ENOMEM just before the kill is still oom. */
    {"memory limit, skill exited 1 first",
     {.memory_exceeded = true, .have_status = true, .wait_status = EXITED(1)},
     SR_STATUS_OOM,
     137,
     1,
     0,
     false,
     false},
    {"pids limit",
     {.pids_exceeded = true},
     SR_STATUS_PIDS_EXCEEDED,
     137,
     -1,
     SIGKILL,
     false,
     false},
    {"pids limit, skill exited 0",
     {.pids_exceeded = true, .have_status = true, .wait_status = EXITED(0)},
     SR_STATUS_PIDS_EXCEEDED,
     137,
     0,
     0,
     false,
     false},
    /* The first limit in precedence names the run when several are seen. */
    {"CPU budget and pids limit",
     {.cpu_exceeded = true, .pids_exceeded = true},
     SR_STATUS_CPU_EXCEEDED,
     137,
     -1,
     SIGKILL,
     true,
     false},
    {"memory and pids limits",
     {.memory_exceeded = true, .pids_exceeded = true},
     SR_STATUS_OOM,
     137,
     -1,
     SIGKILL,
     false,
     false},
    {"wall clock and memory limit",
     {.timed_out = true, .memory_exceeded = true},
     SR_STATUS_TIMEOUT,
     124,
     -1,
     SIGKILL,
     false,
     false},
    {"init died unreported",
     {0},
     SR_STATUS_KILLED,
     137,
     -1,
     SIGKILL,
     false,
     false},
    /* Init killed while it built the sandbox: no signal ended a skill
     * that never started (the exit status stays that of the kill). */
    {"wall clock, before the skill started",
     {.timed_out = true},
     SR_STATUS_TIMEOUT,
     124,
     -1,
     0,
     false,
     true},
    {"cancelled before the skill started",
     {.cancel_sig = SIGTERM},
     SR_STATUS_CANCELLED,
     128 + SIGTERM,
     -1,
     0,
     false,
     true},
    {"init died unreported, before the skill started",
     {0},
     SR_STATUS_KILLED,
     137,
     -1,
     0,
     false,
     true},
    {"memory limit, before the skill started",
     {.memory_exceeded = true},
     SR_STATUS_OOM,
     137,
     -1,
     0,
     false,
     true},
    /* An exit status init reported is the skill's, started or not. */
    {"exit 0 reported, start not seen",
     {.have_status = true, .wait_status = EXITED(0)},
     SR_STATUS_SUCCEEDED,
     0,
     0,
     0,
     false,
     true},
    {"cancelled, skill exited on SIGTERM",
     {.cancel_sig = SIGTERM,
      .have_status = true,
      .wait_status = SIGNALED(SIGTERM)},
     SR_STATUS_CANCELLED,
     143,
     -1,
     SIGTERM,
     false,
     false},
    /* A shell's 130 for SIGINT, whatever the skill did with the SIGTERM
     * it was sent; its own status stays on the record. */
    {"cancelled, skill exited 0",
     {.cancel_sig = SIGINT, .have_status = true, .wait_status = EXITED(0)},
     SR_STATUS_CANCELLED,
     130,
     0,
     0,
     false,
     false},
    {"cancelled by SIGHUP, skill killed by the SIGTERM sent on",
     {.cancel_sig = SIGHUP,
      .have_status = true,
      .wait_status = SIGNALED(SIGTERM)},
     SR_STATUS_CANCELLED,
     129,
     -1,
     SIGTERM,
     false,
     false},
    {"cancelled, tree killed",
     {.cancel_sig = SIGINT},
     SR_STATUS_CANCELLED,
     128 + SIGINT,
     -1,
     SIGKILL,
     false,
     false},
    /* The SIGTERM sent at the deadline: a handler that exits, a default
     * death; the status is the timeout's either way. */
    {"timeout, the skill's TERM handler exited 7",
     {.timed_out = true, .have_status = true, .wait_status = EXITED(7)},
     SR_STATUS_TIMEOUT,
     124,
     7,
     0,
     false,
     false},
    {"timeout, the skill died of the SIGTERM",
     {.timed_out = true, .have_status = true, .wait_status = SIGNALED(SIGTERM)},
     SR_STATUS_TIMEOUT,
     124,
     -1,
     SIGTERM,
     false,
     false},
    {"cancelled after the deadline",
     {.cancel_sig = SIGTERM, .timed_out = true},
     SR_STATUS_TIMEOUT,
     124,
     -1,
     SIGKILL,
     false,
     false},
    {"cancelled after the CPU budget",
     {.cancel_sig = SIGTERM, .cpu_exceeded = true},
     SR_STATUS_CPU_EXCEEDED,
     137,
     -1,
     SIGKILL,
     true,
     false},
    {"cancelled after the pids limit",
     {.cancel_sig = SIGTERM, .pids_exceeded = true},
     SR_STATUS_PIDS_EXCEEDED,
     137,
     -1,
     SIGKILL,
     false,
     false},
    {"cancelled after the memory limit",
     {.cancel_sig = SIGINT, .oom_killed = true},
     SR_STATUS_OOM,
     137,
     -1,
     SIGKILL,
     false,
     false},
    /* A limit kill wins over an exec failure reported before it. */
    {"exec ENOENT and pids limit",
     {.exec_errno = ENOENT, .pids_exceeded = true},
     SR_STATUS_PIDS_EXCEEDED,
     137,
     -1,
     0,
     false,
     false},
};

static void test_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    const struct row *w = &rows[i];
    struct sr_outcome o = w->o;
    struct sr_verdict v;

    o.started = !w->before_start;
    sr_verdict_of(&o, &v);
    print_message("# %s\n", w->what);
    assert_string_equal(sr_status_name(v.status), sr_status_name(w->status));
    assert_int_equal(v.exit_code, w->exit_code);
    assert_int_equal(v.skill_exit, w->skill_exit);
    assert_int_equal(v.signal, w->signal);
    assert_int_equal(v.cpu_exceeded, w->cpu_exceeded);
    assert_int_equal(v.exec_errno,
                     w->o.exec_errno && !w->o.timed_out && !w->o.cpu_exceeded &&
                             !w->o.oom_killed && !w->o.memory_exceeded &&
                             !w->o.pids_exceeded
                         ? w->o.exec_errno
                         : 0);
    /* limit_hit: exactly the statuses a memory, CPU or pids limit gives. */
    assert_int_equal(v.limit_hit, w->status == SR_STATUS_OOM ||
                                      w->status == SR_STATUS_CPU_EXCEEDED ||
                                      w->status == SR_STATUS_PIDS_EXCEEDED);
  }
}

static void test_names(void **state) {
  static const char *const want[SR__STATUS_MAX] = {
      "succeeded", "failed",       "killed",        "timeout",
      "oom",       "cpu_exceeded", "pids_exceeded", "cancelled",
      "refused",   "error",        "abandoned"};
  (void)state;
  for (int s = 0; s < SR__STATUS_MAX; s++)
    assert_string_equal(sr_status_name((enum sr_status)s), want[s]);
  assert_string_equal(sr_status_name(SR__STATUS_MAX), "error");
  assert_int_equal(sr_status_of_error(SR_EXIT_REFUSED), SR_STATUS_REFUSED);
  assert_int_equal(sr_status_of_error(SR_EXIT_FAILED), SR_STATUS_ERROR);
  assert_int_equal(sr_status_of_error(SR_EXIT_NOTFOUND), SR_STATUS_ERROR);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test(test_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
