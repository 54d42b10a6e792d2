/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "error.h"
#include "fdutil.h"

/* Root inside the namespace gains nothing, uid changes never touch the
 * sets, capabilities are not kept across setuid, ambient cannot be raised;
 * each locked so the skill cannot turn it back. */
#define SR_SECUREBITS                                                          \
  (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |             \
   SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |                   \
   SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

static void cap_freep(cap_t *c) {
  if (*c)
    (void)cap_free(*c); /* only fails on a bad pointer */
}
#define _cleanup_cap_ _cleanup_(cap_freep)

/* Highest capability the running kernel knows.  libcap reads it from the
 * kernel; probing PR_CAPBSET_READ below also covers caps newer than the
 * libcap we were built with. */
static cap_value_t last_cap(void) {
  cap_value_t last = (cap_value_t)cap_max_bits() - 1;

  while (last < 63 && prctl(PR_CAPBSET_READ, last + 1, 0, 0, 0) >= 0)
    last++;
  return last;
}

/*
 * Reads back what can change behind a call's success: the three sets
 * (cap_get_proc) and the securebits.  The bounding set and the ambient set
 * are not read back capability by capability (82 system calls, each about
 * a microsecond on a virtual machine, on the path to the skill's exec):
 * PR_CAPBSET_DROP succeeds only once the bit is cleared, and the kernel
 * keeps ambient a subset of permitted and inheritable, both seen empty
 * here.  tests/attacks/attacker.c checks both from inside the sandbox.
 */
static int verify(struct sr_error *err) {
  _cleanup_cap_ cap_t now = NULL, empty = NULL;
  int r;

  now = cap_get_proc();
  empty = cap_init();
  if (!now || !empty)
    return sr_error_layer(err, "capabilities", errno, "cap_get_proc");
  r = cap_compare(now, empty);
  if (r < 0)
    return sr_error_layer(err, "capabilities", errno, "cap_compare");
  if (r != 0)
    return sr_error_layer(err, "capabilities", EPERM,
                          "capability sets not empty after dropping");

  r = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
  if (r < 0)
    return sr_error_layer(err, "capabilities", errno, "PR_GET_SECUREBITS");
  if ((r & SR_SECUREBITS) != SR_SECUREBITS || (r & SECBIT_KEEP_CAPS))
    return sr_error_layer(err, "capabilities", EPERM,
                          "securebits are 0x%x, expected 0x%x", r,
                          SR_SECUREBITS);
  return 0;
}

int sr_caps_drop_all(struct sr_error *err) {
  _cleanup_cap_ cap_t none = NULL;
  cap_value_t last = last_cap();

  /* Order matters: securebits and the bounding set need CAP_SETPCAP, so
   * they go before the sets that hold it are emptied. */
  if (prctl(PR_SET_SECUREBITS, SR_SECUREBITS, 0, 0, 0) < 0)
    return sr_error_layer(err, "capabilities", errno, "PR_SET_SECUREBITS");

  for (cap_value_t c = 0; c <= last; c++)
    if (cap_drop_bound(c) < 0)
      return sr_error_layer(err, "capabilities", errno,
                            "dropping capability %d from the bounding set", c);

  /* One call: libcap's cap_reset_ambient() first asks about every
   * capability in turn (PR_CAP_AMBIENT_IS_SET).  cap_set_proc below would
   * empty ambient too (capset(2) keeps it inside permitted and
   * inheritable); this says so first. */
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
    return sr_error_layer(err, "capabilities", errno,
                          "clearing the ambient set");

  none = cap_init(); /* cap_init() is all-clear */
  if (!none)
    return sr_error_layer(err, "capabilities", errno, "cap_init");
  if (cap_set_proc(none) < 0)
    return sr_error_layer(err, "capabilities", errno, "cap_set_proc");

  return verify(err);
}

int sr_set_no_new_privs(struct sr_error *err) {
  int r;

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return sr_error_layer(err, "no_new_privs", errno, "PR_SET_NO_NEW_PRIVS");
  r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (r < 0)
    return sr_error_layer(err, "no_new_privs", errno, "PR_GET_NO_NEW_PRIVS");
  if (r != 1)
    return sr_error_layer(err, "no_new_privs", EPERM,
                          "no_new_privs reads back as %d", r);
  return 0;
}

int sr_caps_check_root(struct sr_error *err) {
  cap_t caps;
  cap_flag_value_t setuid = CAP_CLEAR, setgid = CAP_CLEAR;

  if (!sr_root_mode())
    return 0;
  caps = cap_get_proc();
  if (!caps)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "resources",
                        "cannot read skillrun's capabilities");
  (void)cap_get_flag(caps, CAP_SETUID, CAP_EFFECTIVE, &setuid);
  (void)cap_get_flag(caps, CAP_SETGID, CAP_EFFECTIVE, &setgid);
  cap_free(caps);
  if (setuid == CAP_SET && setgid == CAP_SET)
    return 0;
  return sr_error_set(err, SR_EXIT_FAILED, 0, "resources",
                      "root without %s (dropped by a container or a "
                      "capability bounding set): the sandbox's id maps need "
                      "CAP_SETUID and CAP_SETGID; give skillrun both, or run "
                      "it as an ordinary user",
                      setuid != CAP_SET && setgid != CAP_SET
                          ? "CAP_SETUID and CAP_SETGID"
                      : setuid != CAP_SET ? "CAP_SETUID"
                                          : "CAP_SETGID");
}

/* ioprio_get(2) and ioprio_set(2) (linux/ioprio.h, not in every libc's
 * headers): the class in the top bits of a priority. */
#define IOPRIO_WHO_PROCESS_ 1
#define IOPRIO_CLASS_SHIFT_ 13
#define IOPRIO_CLASS_RT_ 1

int sr_drop_realtime(struct sr_error *err) {
  struct sched_param sp = {.sched_priority = 0};
  int pol = sched_getscheduler(0);
  long io;

  if (pol < 0)
    return sr_error_layer(err, "rlimits", errno, "sched_getscheduler");
  pol &= ~SCHED_RESET_ON_FORK;
  if ((pol == SCHED_FIFO || pol == SCHED_RR) &&
      sched_setscheduler(0, SCHED_OTHER, &sp) < 0)
    return sr_error_layer(err, "rlimits", errno, "sched_setscheduler");
  io = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS_, 0);
  if (io < 0)
    return sr_error_layer(err, "rlimits", errno, "ioprio_get");
  if ((io >> IOPRIO_CLASS_SHIFT_) == IOPRIO_CLASS_RT_ &&
      syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS_, 0, 0) < 0)
    return sr_error_layer(err, "rlimits", errno, "ioprio_set");
  return 0;
}
