/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "error.h"
#include "fdutil.h"
#include "macro.h"
#include "ns.h"

pid_t sr_ns_clone(unsigned long long flags, int cgroup_fd, int *ret_pidfd,
                  struct sr_error *err) {
  struct clone_args args;
  int pidfd = -1;
  long pid;

  memset(&args, 0, sizeof(args));
  args.flags = flags | CLONE_PIDFD;
  args.pidfd = (uint64_t)(uintptr_t)&pidfd;
  args.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = (uint64_t)cgroup_fd;
  }
  pid = syscall(SYS_clone3, &args, sizeof(args));
  if (pid < 0 && errno == ENOSYS && cgroup_fd < 0) {
    /* Kernels before 5.3: plain clone without a stack behaves like fork. */
    pid = syscall(SYS_clone, (unsigned long)(flags | SIGCHLD), NULL, NULL, NULL,
                  NULL);
    pidfd = -1;
  }
  if (pid < 0 && errno == ENOSPC) {
    bool fresh = !sr_error_is_set(err);
    /* clone(2): a per-user-namespace limit of /proc/sys/user is reached,
     * not a disk; strerror's "No space left on device" would send the
     * reader to df.  The errno stays on the record. */
    sr_error_layer(err, "namespaces", 0,
                   "cannot create the sandbox namespaces (clone3): ENOSPC: "
                   "the limit on user namespaces is reached (sysctl "
                   "user.max_user_namespaces, or another "
                   "/proc/sys/user/max_*_namespaces, or 32 nested user "
                   "namespaces); no disk is full");
    if (fresh)
      err->err = ENOSPC;
    return -ENOSPC;
  }
  /* A SCHED_DEADLINE task cannot fork (sched(7)) unless it also has
   * SCHED_RESET_ON_FORK: under chrt -d, EAGAIN is no process limit, which
   * strerror's "Resource temporarily unavailable" would suggest.  The
   * errno stays on the record. */
  if (pid < 0 && errno == EAGAIN && sched_getscheduler(0) == SCHED_DEADLINE) {
    bool fresh = !sr_error_is_set(err);
    sr_error_layer(err, "namespaces", 0,
                   "cannot create the sandbox namespaces (clone3): EAGAIN: "
                   "skillrun runs under SCHED_DEADLINE (chrt -d), whose "
                   "tasks cannot fork; add SCHED_RESET_ON_FORK (chrt -R -d)");
    if (fresh)
      err->err = EAGAIN;
    return -EAGAIN;
  }
  if (pid < 0)
    return sr_error_layer(err, "namespaces", errno,
                          "cannot create the sandbox namespaces (clone3)");
  if (pid == 0)
    return 0;
  if (pidfd < 0) {
    /* The clone(2) fallback gives no pidfd; the race-free handle is still
     * needed to signal and wait for this child. */
    pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    /* Without pidfd_open (kernels < 5.3, valgrind) the caller falls back
     * to the pid: safe, as the child stays a zombie until we reap it. */
    if (pidfd < 0 && errno != ENOSYS) {
      int e = errno;
      (void)kill((pid_t)pid, SIGKILL);
      return sr_error_layer(err, "namespaces", e, "pidfd_open");
    }
  }
  if (ret_pidfd)
    *ret_pidfd = pidfd;
  else
    safe_close(pidfd);
  return (pid_t)pid;
}

/* The first three numbers of an id map ("INSIDE OUTSIDE COUNT", blanks
 * around them).  strtoul, not sscanf: a number out of range is an error. */
static int parse_map(const char *s, unsigned long v[3]) {
  for (int i = 0; i < 3; i++) {
    char *end;

    s += strspn(s, " \t\n");
    if (*s < '0' || *s > '9')
      return -EINVAL;
    errno = 0;
    v[i] = strtoul(s, &end, 10);
    if (errno != 0)
      return -EINVAL;
    s = end;
  }
  return 0;
}

static int write_proc(pid_t pid, const char *file, const char *text,
                      struct sr_error *err) {
  char path[64], back[256];
  const char *step;
  int r;

  snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
  /* Read back (through the same descriptor): a map that did not take
   * would leave the sandbox on the overflow id, which is not what the
   * audit says. */
  r = sr_write_read_back_at(AT_FDCWD, path, text, back, sizeof(back), &step);
  if (r < 0)
    return sr_error_layer(err, "userns", -r, "cannot %s %s", step, path);
  if (!strcmp(file, "setgroups")) {
    if (strcmp(back, "deny\n") != 0)
      return sr_error_layer(err, "userns", 0, "%s reads '%s', not deny", path,
                            back);
  } else {
    unsigned long want[3], got[3];
    if (parse_map(text, want) < 0 || parse_map(back, got) < 0 ||
        memcmp(want, got, sizeof(want)) != 0)
      return sr_error_layer(err, "userns", 0, "%s did not take: '%s'", path,
                            back);
  }
  return 0;
}

int sr_ns_check_proc(struct sr_error *err) {
  char link[32];
  ssize_t n = readlink("/proc/self", link, sizeof(link) - 1);
  char *end;
  long pid;

  if (n < 0)
    return sr_error_layer(err, "supervisor", errno,
                          "/proc/self cannot be read: /proc is not the "
                          "procfs of skillrun's pid namespace (mount one, "
                          "e.g. unshare --pid --fork --mount-proc)");
  link[n] = '\0';
  errno = 0;
  pid = strtol(link, &end, 10);
  if (errno != 0 || *end != '\0' || pid != (long)getpid())
    return sr_error_layer(
        err, "supervisor", 0,
        "/proc is not the procfs of skillrun's pid "
        "namespace (/proc/self is %s, skillrun's pid is %ld): "
        "its pids name other processes; mount one "
        "for it (e.g. unshare --pid --fork --mount-proc)",
        link, (long)getpid());
  return 0;
}

int sr_ns_write_maps(pid_t pid, uid_t inside_uid, uid_t host_uid,
                     gid_t inside_gid, gid_t host_gid, struct sr_error *err) {
  char map[64];
  int r;

  /* setgroups must be denied before an unprivileged gid_map write
   * (user_namespaces(7)); we deny it as root too, so the sandbox can never
   * regain supplementary groups. */
  r = write_proc(pid, "setgroups", "deny", err);
  if (r < 0)
    return r;
  snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)inside_uid,
           (unsigned)host_uid);
  r = write_proc(pid, "uid_map", map, err);
  if (r < 0)
    return r;
  snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)inside_gid,
           (unsigned)host_gid);
  return write_proc(pid, "gid_map", map, err);
}

/* The layers that need a capability in the sandbox's user namespace; a
 * host-side layer (cgroup, uid-pool...) has reasons of its own to get
 * EACCES. */
static bool layer_inside_userns(const char *layer) {
  static const char *const inside[] = {
      "namespaces", "userns", "mount",        "network", "cgroupns",
      "uts",        "init",   "capabilities", "rlimits",
  };

  for (size_t i = 0; i < SR_ARRAY_SIZE(inside); i++)
    if (!strcmp(layer, inside[i]))
      return true;
  return false;
}

bool sr_ns_explain_apparmor(struct sr_error *err, int kernel_fd, uid_t euid) {
  static const char hint[] =
      ": AppArmor restricts unprivileged user namespaces here "
      "(kernel.apparmor_restrict_unprivileged_userns=1): install skillrun's "
      "AppArmor profile (see skillrun(1), SECURITY), or run as root";
  char value[16];
  size_t n;

  if (!err || euid == 0 || kernel_fd < 0 ||
      (err->err != EPERM && err->err != EACCES) ||
      !layer_inside_userns(err->layer))
    return false;
  if (sr_read_file_into(kernel_fd, "apparmor_restrict_unprivileged_userns",
                        value, sizeof(value), NULL) < 0 ||
      (strcmp(value, "1\n") != 0 && strcmp(value, "1") != 0))
    return false;
  n = strlen(err->msg);
  if (n > sizeof(err->msg) - sizeof(hint))
    n = sizeof(err->msg) - sizeof(hint);
  memcpy(err->msg + n, hint, sizeof(hint));
  return true;
}
