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
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv) {
  struct sock_filter insns[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
               offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
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
