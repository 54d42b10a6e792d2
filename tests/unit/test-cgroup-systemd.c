/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Asking a systemd user manager for a delegated scope
 * (src/cgroup-systemd.c) over a real sd-bus connection: with no manager
 * the reason says so; against a peer that is no manager, or a manager
 * whose job fails, the call fails with the reason; a manager whose cgroup the
 * caller may not leave for (may_leave) is not asked for a scope; against a
 * manager that starts the job it returns 0, and the manager got the scope's
 * name, Delegate=yes, CollectMode=inactive-or-failed and the caller's pid.  The
 * manager here is a fake one on $XDG_RUNTIME_DIR/systemd/private (a forked
 * sd-bus server), or on the session bus, where (as systemd on its API
 * bus) it sends JobRemoved only to a subscribed client; cgroup.c's use of
 * a real scope is the VM tier's (tests/vm/systemd-tests.sh). */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-id128.h>

#include "cgroup-internal.h"
#include "fdutil.h"

static char rundir[] = "/tmp/skillrun-test-sdbus.XXXXXX";
static char sockdir[sizeof(rundir) + 16];
static char sockpath[sizeof(rundir) + 32];
static char buspath[sizeof(rundir) + 16];
static char busaddr[sizeof(buspath) + 16];

/* What the fake manager does with StartTransientUnit (FAKE_NO_START: the
 * client is to ask only for the manager's ControlGroup). */
enum fake {
  FAKE_HANGUP,
  FAKE_JOB_DONE,
  FAKE_JOB_FAILED,
  FAKE_REFUSE,
  FAKE_NO_START,
  /* A user manager on the session bus: the job is done, but the manager
   * sends JobRemoved there only while a client is subscribed
   * (Subscribe), as systemd does on its API bus. */
  FAKE_SESSION_BUS
};

/* The fake manager's own cgroup, its ControlGroup property. */
#define FAKE_CGROUP "/user.slice/user-1000.slice/user@1000.service"

/* Exit status bits of the fake manager: what it found wrong. */
enum {
  BAD_NAME = 1,
  BAD_DELEGATE = 2,
  BAD_COLLECT = 4,
  BAD_PIDS = 8,
  BAD_BUS = 16,
  BAD_SIGNATURE = 32,
  BAD_STARTED = 64
};

struct call {
  pid_t client;
  enum fake mode;
  int bad;
  bool answered;
  bool subscribed;
};

/* One (sv) of the properties: checks the ones the scope depends on. */
static int check_property(sd_bus_message *m, struct call *c, bool *delegate,
                          bool *collect, bool *pids) {
  const char *name = NULL, *s = NULL;
  const uint32_t *v = NULL;
  size_t size = 0;
  int b = 0, r;

  r = sd_bus_message_read(m, "s", &name);
  if (r < 0)
    return r;
  if (!strcmp(name, "Delegate")) {
    r = sd_bus_message_read(m, "v", "b", &b);
    *delegate = r >= 0 && b;
  } else if (!strcmp(name, "CollectMode")) {
    r = sd_bus_message_read(m, "v", "s", &s);
    *collect = r >= 0 && !strcmp(s, "inactive-or-failed");
  } else if (!strcmp(name, "PIDs")) {
    r = sd_bus_message_enter_container(m, 'v', "au");
    if (r >= 0)
      r = sd_bus_message_read_array(m, 'u', (const void **)&v, &size);
    if (r >= 0)
      r = sd_bus_message_exit_container(m);
    *pids = r >= 0 && size == sizeof(uint32_t) && v[0] == (uint32_t)c->client;
  } else {
    r = sd_bus_message_skip(m, "v");
  }
  return r;
}

static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *e) {
  struct call *c = userdata;
  const char *unit = NULL, *mode = NULL;
  bool delegate = false, collect = false, pids = false;
  const char *job = "/org/freedesktop/systemd1/job/42";
  int r;

  (void)e;
  /* The bus daemon's part, for a client of the session bus. */
  if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "Hello")) {
    if (sd_bus_reply_method_return(m, "s", ":1.7") < 0)
      c->bad |= BAD_BUS;
    return 1;
  }
  if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "AddMatch") ||
      sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "RemoveMatch")) {
    if (sd_bus_reply_method_return(m, NULL) < 0)
      c->bad |= BAD_BUS;
    return 1;
  }
  if (sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager",
                                    "Subscribe")) {
    c->subscribed = true;
    if (sd_bus_reply_method_return(m, NULL) < 0)
      c->bad |= BAD_BUS;
    return 1;
  }
  if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Properties",
                                    "Get")) {
    const char *iface = NULL, *prop = NULL;

    r = sd_bus_message_read(m, "ss", &iface, &prop);
    if (r < 0 || strcmp(iface, "org.freedesktop.systemd1.Manager") != 0 ||
        strcmp(prop, "ControlGroup") != 0)
      c->bad |= BAD_BUS;
    if (c->mode == FAKE_NO_START)
      c->answered = true;
    if (sd_bus_reply_method_return(m, "v", "s", FAKE_CGROUP) < 0)
      c->bad |= BAD_BUS;
    return 1;
  }
  if (!sd_bus_message_is_method_call(m, "org.freedesktop.systemd1.Manager",
                                     "StartTransientUnit"))
    return 0;
  if (c->mode == FAKE_NO_START)
    c->bad |= BAD_STARTED;
  c->answered = true;
  if (strcmp(sd_bus_message_get_signature(m, 1), "ssa(sv)a(sa(sv))") != 0)
    c->bad |= BAD_SIGNATURE;
  r = sd_bus_message_read(m, "ss", &unit, &mode);
  if (r < 0 || strcmp(unit, "skillrun-t.e.0123abcd-1.scope") != 0 ||
      strcmp(mode, "fail") != 0)
    c->bad |= BAD_NAME;
  r = sd_bus_message_enter_container(m, 'a', "(sv)");
  while (r >= 0 && (r = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
    r = check_property(m, c, &delegate, &collect, &pids);
    if (r >= 0)
      r = sd_bus_message_exit_container(m);
  }
  if (r < 0)
    c->bad |= BAD_BUS;
  c->bad |= (delegate ? 0 : BAD_DELEGATE) | (collect ? 0 : BAD_COLLECT) |
            (pids ? 0 : BAD_PIDS);
  if (c->mode == FAKE_REFUSE)
    return sd_bus_reply_method_errorf(m,
                                      "org.freedesktop.DBus.Error.AccessDenied",
                                      "the fake manager says no");
  r = sd_bus_reply_method_return(m, "o", job);
  if (r >= 0 && (c->mode != FAKE_SESSION_BUS || c->subscribed))
    r = sd_bus_emit_signal(
        sd_bus_message_get_bus(m), "/org/freedesktop/systemd1",
        "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss", 42, job,
        unit ? unit : "",
        c->mode == FAKE_JOB_DONE || c->mode == FAKE_SESSION_BUS ? "done"
                                                                : "failed");
  if (r < 0)
    c->bad |= BAD_BUS;
  return 1;
}

/* The fake manager's process: one connection on lfd, one call. */
static int fake_manager(int lfd, enum fake mode, pid_t client) {
  struct call c = {.client = client, .mode = mode};
  sd_bus *bus = NULL;
  sd_id128_t id;
  int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

  if (fd < 0)
    return BAD_BUS;
  if (mode == FAKE_HANGUP) {
    char buf[64];
    /* Once the client's authentication has arrived (it is connected, and
     * waits for an answer), hang up: its call sees the connection close. */
    return read(fd, buf, sizeof(buf)) > 0 ? 0 : BAD_BUS;
  }
  if (sd_id128_randomize(&id) < 0 || sd_bus_new(&bus) < 0 ||
      sd_bus_set_fd(bus, fd, fd) < 0 || sd_bus_set_server(bus, 1, id) < 0 ||
      sd_bus_add_filter(bus, NULL, on_message, &c) < 0 || sd_bus_start(bus) < 0)
    return BAD_BUS;
  for (int i = 0; i < 100 && !c.answered; i++) {
    int r = sd_bus_process(bus, NULL);
    if (r < 0)
      return BAD_BUS;
    if (r == 0 && sd_bus_wait(bus, 100 * 1000) < 0)
      return BAD_BUS;
  }
  (void)sd_bus_flush(bus);
  /* Stay until the client has read everything and hung up. */
  for (int i = 0; i < 100 && sd_bus_process(bus, NULL) >= 0; i++)
    (void)sd_bus_wait(bus, 50 * 1000);
  return c.answered ? c.bad : BAD_BUS;
}

/* The may_leave of sr_cg_systemd_scope: records the manager's cgroup,
 * and refuses when told to. */
static char leave_seen[128];
static bool leave_refuse;

static int may_leave(const char *manager, void *arg, char **reason) {
  (void)arg;
  snprintf(leave_seen, sizeof(leave_seen), "%s", manager);
  if (!leave_refuse)
    return 0;
  *reason = strdup("a limit would be left");
  return -EPERM;
}

/* Runs sr_cg_systemd_scope against a fake manager in `mode`; returns its
 * result, the reason in *reason and the manager's findings in *bad. */
static int ask_fake(enum fake mode, char **reason, int *bad) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  const char *path = mode == FAKE_SESSION_BUS ? buspath : sockpath;
  int lfd, status = 0, r;
  pid_t pid, self = getpid();

  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  (void)unlink(sockpath);
  (void)unlink(path);
  lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true(lfd >= 0);
  assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(lfd, 4), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(fake_manager(lfd, mode, self));
  close(lfd);
  leave_seen[0] = '\0';
  leave_refuse = mode == FAKE_NO_START;
  r = sr_cg_systemd_scope("skillrun-t.e.0123abcd-1.scope", "test", may_leave,
                          NULL, reason);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  *bad = WEXITSTATUS(status);
  (void)unlink(path);
  return r;
}

static void test_no_manager(void **state) {
  char *reason = NULL;
  int r;

  (void)state;
  (void)unlink(sockpath);
  r = sr_cg_systemd_scope("skillrun-t.e.0123abcd-1.scope", "test", may_leave,
                          NULL, &reason);
  assert_true(r < 0);
  assert_non_null(reason);
  assert_non_null(strstr(reason, "no systemd user manager reachable"));
  assert_non_null(strstr(reason, sockpath));
  free(reason);
}

static void test_peer_hangs_up(void **state) {
  char *reason = NULL;
  int bad = -1, r;

  (void)state;
  r = ask_fake(FAKE_HANGUP, &reason, &bad);
  assert_true(r < 0);
  assert_int_equal(bad, 0);
  assert_non_null(reason);
  assert_non_null(strstr(reason, "ControlGroup"));
  free(reason);
}

static void test_manager_refuses(void **state) {
  char *reason = NULL;
  int bad = -1, r;

  (void)state;
  r = ask_fake(FAKE_REFUSE, &reason, &bad);
  assert_true(r < 0);
  assert_int_equal(bad, 0);
  assert_non_null(reason);
  assert_non_null(strstr(reason, "the fake manager says no"));
  free(reason);
}

static void test_job_fails(void **state) {
  char *reason = NULL;
  int bad = -1, r;

  (void)state;
  r = ask_fake(FAKE_JOB_FAILED, &reason, &bad);
  assert_true(r < 0);
  assert_int_equal(bad, 0);
  assert_non_null(reason);
  assert_non_null(strstr(reason, "job ended \"failed\""));
  free(reason);
}

static void test_job_done(void **state) {
  char *reason = NULL;
  int bad = -1, r;

  (void)state;
  r = ask_fake(FAKE_JOB_DONE, &reason, &bad);
  if (reason)
    print_message("reason: %s\n", reason);
  /* The manager saw the name, Delegate, CollectMode and our pid. */
  assert_int_equal(bad, 0);
  assert_int_equal(r, 0);
  assert_null(reason);
  /* may_leave was asked with the manager's cgroup. */
  assert_string_equal(leave_seen, FAKE_CGROUP);
}

/* No private socket, the session bus: the job's end is heard (the client
 * subscribed), at once.  Before, the client waited out its 10 s for a
 * JobRemoved the manager never sent, and the run fell back. */
static void test_session_bus(void **state) {
  char *reason = NULL;
  int bad = -1, r;
  uint64_t t0;

  (void)state;
  setenv("DBUS_SESSION_BUS_ADDRESS", busaddr, 1);
  t0 = sr_now_mono_ms();
  r = ask_fake(FAKE_SESSION_BUS, &reason, &bad);
  unsetenv("DBUS_SESSION_BUS_ADDRESS");
  if (reason)
    print_message("reason: %s\n", reason);
  assert_int_equal(bad, 0);
  assert_int_equal(r, 0);
  assert_null(reason);
  assert_true(sr_now_mono_ms() - t0 < 5000);
  assert_string_equal(leave_seen, FAKE_CGROUP);
}

/* A limit the scope would leave behind (may_leave says no): the manager
 * is never asked to start the scope, and the reason is may_leave's. */
static void test_may_not_leave(void **state) {
  char *reason = NULL;
  int bad = -1, r;

  (void)state;
  r = ask_fake(FAKE_NO_START, &reason, &bad);
  assert_int_equal(r, -EPERM);
  assert_int_equal(bad, 0);
  assert_string_equal(leave_seen, FAKE_CGROUP);
  assert_non_null(reason);
  assert_string_equal(reason, "a limit would be left");
  free(reason);
}

static int setup(void **state) {
  (void)state;
  if (!mkdtemp(rundir))
    return -1;
  snprintf(sockdir, sizeof(sockdir), "%s/systemd", rundir);
  snprintf(sockpath, sizeof(sockpath), "%s/private", sockdir);
  snprintf(buspath, sizeof(buspath), "%s/bus", rundir);
  snprintf(busaddr, sizeof(busaddr), "unix:path=%s", buspath);
  if (mkdir(sockdir, 0700) < 0)
    return -1;
  /* The private socket first; the session bus (fallback) is absent. */
  setenv("XDG_RUNTIME_DIR", rundir, 1);
  unsetenv("DBUS_SESSION_BUS_ADDRESS");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  (void)unlink(sockpath);
  (void)unlink(buspath);
  (void)rmdir(sockdir);
  (void)rmdir(rundir);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_manager),
      cmocka_unit_test(test_peer_hangs_up),
      cmocka_unit_test(test_manager_refuses),
      cmocka_unit_test(test_job_fails),
      cmocka_unit_test(test_job_done),
      cmocka_unit_test(test_may_not_leave),
      cmocka_unit_test(test_session_bus),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
