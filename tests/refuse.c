/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * refuse WHAT COMMAND [ARG...]
 *
 * Runs COMMAND with one kind of system call refused (a seccomp filter,
 * inherited by everything COMMAND starts): the tests' way to make one step
 * of a run fail where nothing else can.  WHAT is one of
 *   netlink      socket(AF_NETLINK, ...) fails with EACCES (bringing the
 *                sandbox's lo up over rtnetlink);
 *   setgroups    setgroups(2) fails with EPERM (the supervisor leaves
 *                root's groups before the clone: a launch failing before
 *                the sandbox is released);
 *   unshare-net  unshare(2) with CLONE_NEWNET fails with EPERM (the skill's
 *                process making the sandbox's network namespace);
 *   unshare-cgroup  unshare(2) with CLONE_NEWCGROUP fails with EPERM (the
 *                sandbox's init, once released: a failure of init's).
 * Exits 125 if the filter cannot be installed (or WHAT is unknown), 127 if
 * COMMAND cannot be executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The native architecture, whose numbers SYS_* are (another ABI's calls
 * pass untouched). */
#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif
/* The low 32 bits of the first argument, whatever the byte order. */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
#else
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
#endif

#ifdef NATIVE_ARCH
struct what {
  const char *name;
  unsigned nr;
  int arg0_op;   /* 0: any argument; BPF_JEQ or BPF_JSET against arg0 */
  unsigned arg0; /* (low 32 bits) */
  int err;
};

static const struct what whats[] = {
    {"netlink", SYS_socket, BPF_JEQ, AF_NETLINK, EACCES},
    {"setgroups", SYS_setgroups, 0, 0, EPERM},
    {"unshare-net", SYS_unshare, BPF_JSET, CLONE_NEWNET, EPERM},
    {"unshare-cgroup", SYS_unshare, BPF_JSET, CLONE_NEWCGROUP, EPERM},
};
#endif

int main(int argc, char **argv) {
#ifdef NATIVE_ARCH
  const struct what *w = NULL;

  for (size_t i = 0; argc >= 3 && i < sizeof(whats) / sizeof(whats[0]); i++)
    if (strcmp(argv[1], whats[i].name) == 0)
      w = &whats[i];
  if (!w) {
    fprintf(stderr, "usage: refuse netlink|setgroups|unshare-net|"
                    "unshare-cgroup COMMAND [ARG...]\n");
    return 125;
  }
  /* arch; nr; [arg0]; the match refused, everything else allowed. */
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, w->nr, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
      BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0), /* the argument's test, below */
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)w->err),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]),
                            .filter = insns};

  if (w->arg0_op)
    insns[5] = (struct sock_filter)BPF_JUMP(
        BPF_JMP | (unsigned)w->arg0_op | BPF_K, w->arg0, 0, 1);

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
    perror("refuse: seccomp");
    return 125;
  }
  execvp(argv[2], argv + 2);
  fprintf(stderr, "refuse: %s: %s\n", argv[2], strerror(errno));
  return 127;
#else
  /* An architecture this helper does not know (socketcall, other
   * numbers): it cannot refuse what it should, and says so. */
  (void)argc;
  (void)argv;
  fprintf(stderr, "refuse: not built for this architecture\n");
  return 125;
#endif
}
