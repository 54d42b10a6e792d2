/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's network namespace made ready (src/net.c), in namespaces of
 * a child process's own: lo up and read back, the namespace's descriptor,
 * and a refusal from the kernel reported as its errno (the control
 * messages' handling, which net.c gives libmnl itself).  Needs user
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

/* A fresh namespace: lo comes up, and nothing else is there. */
static int ready_fresh(void) {
  struct sr_error err;

  memset(&err, 0, sizeof(err));
  if (lo_is_up())
    return CHILD_FAILED; /* a fresh namespace's lo starts down */
  if (sr_net_sandbox_up(&err) < 0) {
    fprintf(stderr, "sr_net_sandbox_up: %s\n", err.msg);
    return CHILD_FAILED;
  }
  return lo_is_up() ? CHILD_OK : CHILD_FAILED;
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
  int nsfd = -1;

  memset(&err, 0, sizeof(err));
  if (stat("/proc/self/ns/net", &before) < 0)
    return CHILD_FAILED;
  if (sr_net_unshare_sandbox(&nsfd, &err) < 0) {
    fprintf(stderr, "sr_net_unshare_sandbox: %s\n", err.msg);
    return CHILD_FAILED;
  }
  if (stat("/proc/self/ns/net", &now) < 0 || fstat(nsfd, &got) < 0)
    return CHILD_FAILED;
  if (now.st_ino == before.st_ino || got.st_ino != now.st_ino ||
      got.st_dev != now.st_dev)
    return CHILD_FAILED;
  return lo_is_up() ? CHILD_OK : CHILD_FAILED;
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
  r = sr_net_sandbox_up(&err);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sandbox_up),
      cmocka_unit_test(test_unshare_sandbox),
      cmocka_unit_test(test_refusal_reported),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
