/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's network namespace made ready (src/net.c), in namespaces of
 * a child process's own: lo up and read back, the namespace's descriptor,
 * transmit timestamps with data refused in it (net.core.tstamp_allow_data
 * 0, where the kernel has it per namespace), and a refusal from the
 * kernel reported as its errno (the control messages' handling, which
 * net.c gives libmnl itself).  Needs user
 * namespaces (root or not); skipped, saying why, without them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "fdutil.h"
#include "net.h"
#include "own-userns.h"

enum { CHILD_OK = 0, CHILD_FAILED = 1, CHILD_NO_USERNS = 77 };

/* Runs fn in a child in a new user and network namespace, as its root
 * (the caller's ids mapped, so that it may make a user namespace below);
 * the child's status. */
static int in_new_netns(int (*fn)(void)) {
  pid_t pid = fork();
  int st;

  assert_true(pid >= 0);
  if (pid == 0) {
    int r = unit_own_userns(CLONE_NEWNET);

    if (r < 0)
      _exit(r == -1 ? CHILD_NO_USERNS : CHILD_FAILED);
    _exit(fn());
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

/* Without user namespaces, a TAP comment says so: not cmocka's skip(),
 * whose "not ok # SKIP" tap-driver.sh counts as a failure. */
static void run(const char *what, int (*fn)(void)) {
  int r = in_new_netns(fn);

  if (r == CHILD_NO_USERNS) {
    print_message("# %s: no user namespaces here: not exercised\n", what);
    return;
  }
  assert_int_equal(r, CHILD_OK);
}

static bool lo_is_up(void) {
  struct ifreq ifr;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  bool up;

  if (fd < 0)
    return false;
  memset(&ifr, 0, sizeof(ifr));
  snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
  up = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP);
  close(fd);
  return up;
}

/* The current network namespace's net.core.tstamp_allow_data: 0 or 1,
 * -1 where the kernel has it for the host's namespace alone (before Linux
 * 6.13), -2 on another error. */
static int tstamp_allow_data(void) {
  char buf[8] = "";
  int fd = open("/proc/sys/net/core/tstamp_allow_data", O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return errno == ENOENT ? -1 : -2;
  n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n == 2 && buf[1] == '\n' && (buf[0] == '0' || buf[0] == '1'))
    return buf[0] - '0';
  return -2;
}

/* What a namespace made ready must have: lo up, and transmit timestamps
 * with data refused (where the kernel can). */
static int made_ready(int allow_before) {
  int allow = tstamp_allow_data();

  if (!lo_is_up())
    return CHILD_FAILED;
  if (allow_before == -1 && allow == -1) {
    printf("# tstamp_allow_data is not per namespace here: not checked\n");
    return CHILD_OK;
  }
  if (allow_before != 1 || allow != 0) {
    fprintf(stderr, "tstamp_allow_data %d, then %d\n", allow_before, allow);
    return CHILD_FAILED;
  }
  return CHILD_OK;
}

/* A fresh namespace: lo comes up, and nothing else is there. */
static int ready_fresh(void) {
  struct sr_error err;
  int sysctl_fd, allow_before = tstamp_allow_data();

  memset(&err, 0, sizeof(err));
  if (lo_is_up())
    return CHILD_FAILED; /* a fresh namespace's lo starts down */
  sysctl_fd = open("/proc/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (sysctl_fd < 0 ||
      sr_net_sandbox_up(&(struct sr_net_sysctl){.fd = sysctl_fd}, &err) < 0) {
    fprintf(stderr, "sr_net_sandbox_up: %s\n", err.msg);
    return CHILD_FAILED;
  }
  close(sysctl_fd);
  return made_ready(allow_before);
}

static void test_sandbox_up(void **state) {
  (void)state;
  run("sandbox_up", ready_fresh);
}

/* sr_net_unshare_sandbox: a namespace of its own, ready, and a descriptor
 * that names it (not the one it was called in). */
static int unshare_and_name(void) {
  struct sr_error err;
  struct stat before, now, got;
  int nsfd = -1, oldfd, sysctl_fd, r, allow_before = tstamp_allow_data();

  memset(&err, 0, sizeof(err));
  oldfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
  if (oldfd < 0 || fstat(oldfd, &before) < 0)
    return CHILD_FAILED;
  /* Opened in the namespace it is called in, as init does. */
  sysctl_fd = open("/proc/sys", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (sysctl_fd < 0 ||
      sr_net_unshare_sandbox(&(struct sr_net_sysctl){.fd = sysctl_fd}, &nsfd,
                             &err) < 0) {
    fprintf(stderr, "sr_net_unshare_sandbox: %s\n", err.msg);
    return CHILD_FAILED;
  }
  if (stat("/proc/self/ns/net", &now) < 0 || fstat(nsfd, &got) < 0)
    return CHILD_FAILED;
  if (now.st_ino == before.st_ino || got.st_ino != now.st_ino ||
      got.st_dev != now.st_dev)
    return CHILD_FAILED;
  close(sysctl_fd);
  r = made_ready(allow_before);
  /* The namespace it was called in keeps its own value. */
  if (r == CHILD_OK &&
      (setns(oldfd, CLONE_NEWNET) < 0 || tstamp_allow_data() != allow_before))
    return CHILD_FAILED;
  return r;
}

static void test_unshare_sandbox(void **state) {
  (void)state;
  run("unshare_sandbox", unshare_and_name);
}

/* In a user namespace below the one owning the network namespace, the
 * kernel refuses the change: the error ACK must come back as EPERM, not
 * be taken for success or waited on. */
static int refused(void) {
  struct sr_error err;
  int r;

  memset(&err, 0, sizeof(err));
  if (unshare(CLONE_NEWUSER) < 0)
    return CHILD_NO_USERNS;
  r = sr_net_sandbox_up(&(struct sr_net_sysctl){.fd = -1}, &err);
  if (r >= 0 || !strstr(err.msg, "set lo up") ||
      !strstr(err.msg, strerror(EPERM))) {
    fprintf(stderr, "sr_net_sandbox_up: %d, '%s'\n", r, err.msg);
    return CHILD_FAILED;
  }
  return lo_is_up() ? CHILD_FAILED : CHILD_OK;
}

static void test_refusal_reported(void **state) {
  (void)state;
  run("refusal", refused);
}

/* A /proc/sys whose net/core is hidden (here: an empty directory, not
 * procfs) must not pass for a kernel without the sysctl (before Linux
 * 6.13, which a kernel this new cannot show): an error.  No writable
 * /proc/sys at all (-1; init has warned): nothing set, unless strict
 * requires it, which fails saying why. */
static int no_sysctl(void) {
  char dir[] = "/tmp/test-net.XXXXXX";
  struct sr_error err;
  int fd, ok = CHILD_FAILED;

  memset(&err, 0, sizeof(err));
  if (!mkdtemp(dir))
    return CHILD_FAILED;
  fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 &&
      sr_net_sandbox_up(&(struct sr_net_sysctl){.fd = fd}, &err) < 0 &&
      strstr(err.msg, "/proc/sys/net/core is hidden"))
    ok = CHILD_OK;
  else
    fprintf(stderr, "masked: '%s'\n", err.msg);
  memset(&err, 0, sizeof(err));
  if (ok == CHILD_OK &&
      (sr_net_sandbox_up(&(struct sr_net_sysctl){.fd = -1}, &err) < 0 ||
       !lo_is_up() ||
       sr_net_sandbox_up(
           &(struct sr_net_sysctl){.fd = -1, .tstamp_required = true}, &err) >=
           0 ||
       !strstr(err.msg, "strict requires"))) {
    fprintf(stderr, "no /proc/sys: '%s'\n", err.msg);
    ok = CHILD_FAILED;
  }
  if (fd >= 0)
    close(fd);
  rmdir(dir);
  return ok;
}

static void test_no_sysctl(void **state) {
  (void)state;
  run("no_sysctl", no_sysctl);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sandbox_up),
      cmocka_unit_test(test_unshare_sandbox),
      cmocka_unit_test(test_refusal_reported),
      cmocka_unit_test(test_no_sysctl),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
