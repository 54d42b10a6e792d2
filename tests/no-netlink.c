/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * no-netlink COMMAND [ARG...]
 *
 * Runs COMMAND with socket(AF_NETLINK, ...) refused with EACCES (a seccomp
 * filter, inherited by everything COMMAND starts): the tests' way to make
 * the sandbox's network setup (bringing lo up over rtnetlink) fail.
 * Exits 125 if the filter cannot be installed, 127 if COMMAND cannot be
 * executed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The native architecture, whose socket(2) number SYS_socket is (another
 * ABI's calls pass untouched). */
#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif
/* The low 32 bits of the first argument (the domain, an int). */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ARG0_LOW (offsetof(struct seccomp_data, args[0]) + 4)
#else
#define ARG0_LOW offsetof(struct seccomp_data, args[0])
#endif

int main(int argc, char **argv) {
#ifdef NATIVE_ARCH
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LOW),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
#else
  /* An architecture this helper does not know (socketcall, other
   * numbers): it cannot refuse what it should, and says so. */
  struct sock_filter insns[1];
  (void)insns;
  fprintf(stderr, "no-netlink: not built for this architecture\n");
  return 125;
#endif
  struct sock_fprog prog = {.len = sizeof(insns) / sizeof(insns[0]),
                            .filter = insns};

  if (argc < 2) {
    fprintf(stderr, "usage: no-netlink COMMAND [ARG...]\n");
    return 125;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
    perror("no-netlink: seccomp");
    return 125;
  }
  execvp(argv[1], argv + 1);
  fprintf(stderr, "no-netlink: %s: %s\n", argv[1], strerror(errno));
  return 127;
}
