/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "mount.h"
#include "policy.h"

struct sr_seccomp;

/* Messages on the sync socket (SOCK_SEQPACKET: one message per send). */
enum sr_sync_type {
  SR_SYNC_GO = 1,      /* supervisor -> init: maps written, go on */
  SR_SYNC_ERROR,       /* init/child -> supervisor: a layer failed (err) */
  SR_SYNC_READY,       /* init -> supervisor: skill started (value = pid in
                        * the sandbox), outputs dir fd attached */
  SR_SYNC_EXEC_FAILED, /* child -> supervisor: execve failed (value = errno) */
  SR_SYNC_EXITED,      /* init -> supervisor: skill wait status (value) */
};

struct sr_sync_msg {
  uint32_t type;
  int32_t value;
  struct sr_error err;
};

/* Sends one message, with an fd attached when pass_fd >= 0. */
int sr_sync_send(int fd, uint32_t type, int32_t value,
                 const struct sr_error *err, int pass_fd);
/* Receives one message; *ret_fd gets an attached fd or -1.  -EPIPE at EOF. */
int sr_sync_recv(int fd, struct sr_sync_msg *m, int *ret_fd);

/* Everything the sandbox side needs; copied into the child by clone. */
struct sr_sandbox {
  const struct sr_policy *policy;
  const struct sr_enforcement *enf; /* which limits rlimits enforce */
  const struct sr_seccomp *seccomp;
  struct sr_mount_plan mount;
  char *const *argv; /* the command, argv[0] as given */
  char *const *envp; /* built from scratch */
  int sync_fd;       /* init's end of the sync socket */
  int stdout_w;      /* log pipes, write ends */
  int stderr_w;
  bool new_netns;
};

/* Pid 1 of the new pid namespace: builds the sandbox, starts the skill,
 * reaps everything, forwards signals, reports the skill's status. */
_Noreturn void sr_init_main(const struct sr_sandbox *sb);
