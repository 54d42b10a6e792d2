/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A delegated cgroup v2 from the caller's systemd user manager: a
 * transient scope with Delegate=yes that holds the supervisor, asked for
 * over D-Bus (sd-bus of libsystemd, opened with dlopen when a run first
 * needs it), the way crun and podman get one for rootless containers.
 * cgroup.c calls this only for an ordinary caller whose own cgroup is not
 * delegated on a host whose cgroup v2 has the memory and pids controllers,
 * and then builds the run's leaf below the scope as in any delegated
 * subtree (the supervisor moved into a sub-leaf first: no internal
 * processes).
 *
 * The scope is made below the manager's own cgroup (its ControlGroup
 * property), outside the caller's: cgroup.c's may_leave is asked first
 * whether a limit of the caller's cgroups would be left behind.
 *
 * The call is made by the supervisor in the host's namespaces, before any
 * clone: D-Bus EXTERNAL authentication sends the euid, which would be 0 in
 * a user namespace.  The scope is collected by the manager once it is
 * empty (CollectMode=inactive-or-failed), which is when the supervisor
 * has removed the run's leaf and exited: nothing of a run outlives it.
 *
 * Interface: org.freedesktop.systemd1(5), StartTransientUnit and the
 * JobRemoved signal; systemd.resource-control(5) for Delegate=.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "cgroup-internal.h"
#include "dlib.h"
#include "fdutil.h"

/* How long the manager may take to start the scope (runc waits 30 s; a
 * run that waits longer than this is better off with the fallback). */
#define SCOPE_JOB_TIMEOUT_USEC (10ULL * 1000 * 1000)

#define SR_SDBUS_FUNCTIONS(X)                                                  \
  X(sd_bus_new)                                                                \
  X(sd_bus_set_address)                                                        \
  X(sd_bus_start)                                                              \
  X(sd_bus_open_user)                                                          \
  X(sd_bus_flush_close_unref)                                                  \
  X(sd_bus_match_signal)                                                       \
  X(sd_bus_slot_unref)                                                         \
  X(sd_bus_message_new_method_call)                                            \
  X(sd_bus_message_append)                                                     \
  X(sd_bus_message_open_container)                                             \
  X(sd_bus_message_close_container)                                            \
  X(sd_bus_message_read)                                                       \
  X(sd_bus_message_unref)                                                      \
  X(sd_bus_call)                                                               \
  X(sd_bus_process)                                                            \
  X(sd_bus_wait)                                                               \
  X(sd_bus_error_free)
static struct { SR_SDBUS_FUNCTIONS(SR_DLIB_MEMBER) } sd;

SR_DLOPEN_NOTE(sr_sdbus_note, "systemd",
               "a delegated cgroup v2 scope from the caller's systemd user "
               "manager",
               SR_LIBSYSTEMD_SONAME);

SR_DLIB_LOADER(load, sd, SR_SDBUS_FUNCTIONS, SR_LIBSYSTEMD_SONAME)

bool sr_cgroup_systemd_lib_loadable(void) {
  struct sr_error e = {0};

  return load("--version", &e) == 0;
}

/* What the JobRemoved handler waits for. */
struct job_wait {
  const char *job; /* the job's object path, from the reply */
  bool done;
  char result[32]; /* "done", "failed", "canceled", "timeout", … */
};

static int on_job_removed(sd_bus_message *m, void *userdata,
                          sd_bus_error *ret_error) {
  struct job_wait *w = userdata;
  const char *path = NULL, *unit = NULL, *result = NULL;
  uint32_t id;

  (void)ret_error;
  if (sd.sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
    return 0; /* not ours to judge: another job's malformed signal */
  if (w->job && path && result && !strcmp(path, w->job)) {
    snprintf(w->result, sizeof(w->result), "%s", result);
    w->done = true;
  }
  return 0;
}

/* "unix:path=P" with P escaped as D-Bus addresses require. */
static char *unix_address(const char *path) {
  static const char plain[] = "-_/.\\*";
  size_t n = strlen(path);
  char *a = malloc(sizeof("unix:path=") + 3 * n);
  char *w;

  if (!a)
    return NULL;
  w = a + sprintf(a, "unix:path=");
  for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
    if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
        (*p >= 'A' && *p <= 'Z') || strchr(plain, *p))
      *w++ = (char)*p;
    else
      w += sprintf(w, "%%%02x", *p);
  }
  *w = '\0';
  return a;
}

/*
 * A connection to the caller's user manager: its private socket
 * ($XDG_RUNTIME_DIR/systemd/private, what `systemctl --user` uses; it
 * needs no session bus), else the session bus (*session set).  The
 * runtime directory is the caller's own (0700): only its manager listens
 * there.
 */
static int connect_user_manager(sd_bus **out, bool *session, char **reason) {
  const char *rt = getenv("XDG_RUNTIME_DIR");
  _cleanup_free_ char *dir = NULL, *sock = NULL, *addr = NULL;
  sd_bus *bus = NULL;
  int r, r2;

  *session = false;
  if (rt && rt[0] == '/')
    dir = strdup(rt);
  else
    dir = sr_cg_xasprintf("/run/user/%u", (unsigned)geteuid());
  if (!dir || !(sock = sr_cg_xasprintf("%s/systemd/private", dir)) ||
      !(addr = unix_address(sock)))
    return -ENOMEM;
  r = sd.sd_bus_new(&bus);
  if (r >= 0)
    r = sd.sd_bus_set_address(bus, addr);
  if (r >= 0)
    r = sd.sd_bus_start(bus);
  if (r >= 0) {
    *out = bus;
    return 0;
  }
  if (bus)
    sd.sd_bus_flush_close_unref(bus);
  bus = NULL;
  r2 = sd.sd_bus_open_user(&bus);
  if (r2 >= 0) {
    *out = bus;
    *session = true;
    return 0;
  }
  *reason = sr_cg_xasprintf("no systemd user manager reachable (%s: %s; "
                            "session bus: %s)",
                            sock, strerror(-r), strerror(-r2));
  return r;
}

/* The StartTransientUnit call: the scope holding pid, delegated. */
static int start_scope(sd_bus *bus, const char *unit, const char *description,
                       pid_t pid, uint64_t timeout_usec, sd_bus_error *e,
                       sd_bus_message **reply) {
  sd_bus_message *m = NULL;
  int r;

  r = sd.sd_bus_message_new_method_call(
      bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
      "org.freedesktop.systemd1.Manager", "StartTransientUnit");
  if (r < 0)
    return r;
  /* "fail": never replace a unit of the same name (there should be none:
   * the name carries the supervisor's pid). */
  r = sd.sd_bus_message_append(m, "ss", unit, "fail");
  if (r >= 0)
    r = sd.sd_bus_message_open_container(m, 'a', "(sv)");
  if (r >= 0)
    r = sd.sd_bus_message_append(
        m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s", description,
        "Delegate", "b", 1, "CollectMode", "s", "inactive-or-failed",
        "DefaultDependencies", "b", 0, "MemoryAccounting", "b", 1,
        "TasksAccounting", "b", 1, "PIDs", "au", 1, (uint32_t)pid);
  if (r >= 0)
    r = sd.sd_bus_message_close_container(m);
  if (r >= 0)
    r = sd.sd_bus_message_append(m, "a(sa(sv))", 0);
  if (r >= 0)
    r = sd.sd_bus_call(bus, m, timeout_usec, e, reply);
  sd.sd_bus_message_unref(m);
  return r;
}

/* The microseconds left until deadline (ms), at least 1 (0 would be
 * sd-bus's default timeout of 25 s). */
static uint64_t remaining_usec(uint64_t deadline) {
  uint64_t now = sr_now_mono_ms();

  return now < deadline ? (deadline - now) * 1000 : 1;
}

/* The manager's own cgroup, its ControlGroup property, into *out
 * (malloc'd): a path from the root of its cgroup hierarchy.  Asked with a
 * timeout of its own, as sd_bus_get_property_string cannot be. */
static int manager_cgroup(sd_bus *bus, sd_bus_error *e, char **out) {
  sd_bus_message *m = NULL, *reply = NULL;
  const char *s = NULL;
  int r;

  r = sd.sd_bus_message_new_method_call(
      bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
      "org.freedesktop.DBus.Properties", "Get");
  if (r >= 0)
    r = sd.sd_bus_message_append(m, "ss", "org.freedesktop.systemd1.Manager",
                                 "ControlGroup");
  if (r >= 0)
    r = sd.sd_bus_call(bus, m, SCOPE_JOB_TIMEOUT_USEC, e, &reply);
  if (r >= 0)
    r = sd.sd_bus_message_read(reply, "v", "s", &s);
  if (r >= 0 && (!s || s[0] != '/'))
    r = -EBADMSG; /* not a cgroup path */
  if (r >= 0 && !(*out = strdup(s)))
    r = -ENOMEM;
  if (m)
    sd.sd_bus_message_unref(m);
  if (reply)
    sd.sd_bus_message_unref(reply);
  return r;
}

/* Subscribe(): on the session bus the manager sends its signals, and so
 * JobRemoved, only while some client is subscribed (the private socket
 * gets them unasked); the subscription ends with the connection. */
static int subscribe(sd_bus *bus, sd_bus_error *e) {
  sd_bus_message *m = NULL, *reply = NULL;
  int r;

  r = sd.sd_bus_message_new_method_call(
      bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
      "org.freedesktop.systemd1.Manager", "Subscribe");
  if (r >= 0)
    r = sd.sd_bus_call(bus, m, SCOPE_JOB_TIMEOUT_USEC, e, &reply);
  if (m)
    sd.sd_bus_message_unref(m);
  if (reply)
    sd.sd_bus_message_unref(reply);
  return r;
}

int sr_cg_systemd_scope(const char *unit, const char *description,
                        int (*may_leave)(const char *, void *, char **),
                        void *arg, char **reason) {
  struct sr_error lerr = {0};
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_message *reply = NULL;
  sd_bus_slot *slot = NULL;
  sd_bus *bus = NULL;
  struct job_wait w = {0};
  const char *job = NULL;
  _cleanup_free_ char *mcg = NULL;
  uint64_t deadline;
  bool session = false;
  int r;

  *reason = NULL;
  /* libsystemd missing: only the runs that would use a scope notice. */
  if (load("a systemd user manager's delegated cgroup", &lerr) < 0) {
    *reason = sr_cg_xasprintf("%s", lerr.msg);
    return -ENOENT;
  }
  r = connect_user_manager(&bus, &session, reason);
  if (r < 0)
    return r;
  /* Subscribed before the call, so that the job's end cannot be missed;
   * on the private socket the manager sends every signal unasked. */
  r = sd.sd_bus_match_signal(bus, &slot, NULL, "/org/freedesktop/systemd1",
                             "org.freedesktop.systemd1.Manager", "JobRemoved",
                             on_job_removed, &w);
  if (r < 0) {
    *reason =
        sr_cg_xasprintf("cannot subscribe to JobRemoved: %s", strerror(-r));
    goto out;
  }
  if (session && (r = subscribe(bus, &e)) < 0) {
    *reason = sr_cg_xasprintf("Subscribe on the session bus: %s",
                              e.message ? e.message : strerror(-r));
    goto out;
  }
  deadline = sr_now_mono_ms() + SCOPE_JOB_TIMEOUT_USEC / 1000;
  /* The scope goes below the manager's own cgroup: the caller's cgroups
   * that are not above that one are left, and may have limits. */
  r = manager_cgroup(bus, &e, &mcg);
  if (r < 0) {
    *reason = sr_cg_xasprintf("the manager's ControlGroup: %s",
                              e.message ? e.message : strerror(-r));
    goto out;
  }
  r = may_leave(mcg, arg, reason);
  if (r < 0)
    goto out;
  r = start_scope(bus, unit, description, getpid(), remaining_usec(deadline),
                  &e, &reply);
  if (r < 0) {
    *reason = sr_cg_xasprintf("StartTransientUnit %s: %s", unit,
                              e.message ? e.message : strerror(-r));
    goto out;
  }
  r = sd.sd_bus_message_read(reply, "o", &job);
  if (r < 0 || !job) {
    *reason =
        sr_cg_xasprintf("StartTransientUnit %s: no job in the reply", unit);
    r = r < 0 ? r : -EBADMSG;
    goto out;
  }
  w.job = job;
  while (!w.done) {
    uint64_t now;

    r = sd.sd_bus_process(bus, NULL);
    if (r < 0) {
      *reason = sr_cg_xasprintf("waiting for %s's job: %s", unit, strerror(-r));
      goto out;
    }
    if (r > 0)
      continue;
    now = sr_now_mono_ms();
    if (now >= deadline) {
      *reason = sr_cg_xasprintf("%s's job did not finish within %llu s", unit,
                                SCOPE_JOB_TIMEOUT_USEC / 1000000ULL);
      r = -ETIMEDOUT;
      goto out;
    }
    r = sd.sd_bus_wait(bus, (deadline - now) * 1000);
    if (r < 0 && r != -EINTR) {
      *reason = sr_cg_xasprintf("waiting for %s's job: %s", unit, strerror(-r));
      goto out;
    }
  }
  if (strcmp(w.result, "done") != 0) {
    *reason = sr_cg_xasprintf("%s's job ended \"%s\"", unit, w.result);
    r = -EIO;
    goto out;
  }
  r = 0;

out:
  sd.sd_bus_error_free(&e);
  if (reply)
    sd.sd_bus_message_unref(reply);
  if (slot)
    sd.sd_bus_slot_unref(slot);
  sd.sd_bus_flush_close_unref(bus);
  if (r < 0 && !*reason)
    *reason = sr_cg_xasprintf("%s", strerror(-r));
  return r;
}
