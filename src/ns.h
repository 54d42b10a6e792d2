/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct sr_error;

#define SR_SANDBOX_UID 1000
#define SR_SANDBOX_GID 1000
/*
 * When skillrun runs as root, each run maps the sandbox user to its own
 * unprivileged host uid (and the same gid) from the policy's uid pool
 * (struct sr_policy uid_pool_base/size: skillrun.conf `uid-pool`, default
 * SR_UID_POOL_BASE in policy.h), never 0, so concurrent runs never share a
 * host id.  A slot is held by an flock on SR_UID_POOL_DIR/<uid> for the life
 * of the run; the kernel drops it when the supervisor exits, crash or not.
 * Documented in skillrun(1).
 */
#define SR_UID_POOL_DIR "/run/skillrun/uid-pool"
#define SR_UID_POOL_WAIT_MS 10000

/*
 * clone3() into new namespaces, optionally born inside a cgroup
 * (CLONE_INTO_CGROUP when cgroup_fd >= 0), with a pidfd.  Returns the pid in
 * the parent and 0 in the child, like fork().  Falls back to clone(2) only
 * when clone3 is missing (ENOSYS) and no cgroup fd is asked for.
 * *ret_pidfd is -1 when the kernel offers no pidfd at all.
 */
pid_t sr_ns_clone(unsigned long long flags, int cgroup_fd, int *ret_pidfd,
                  struct sr_error *err);

/* Whether /proc is the procfs of skillrun's own pid namespace, which every
 * /proc/PID it opens (the sandbox's maps, the sampler's files) assumes:
 * pid 1 of a namespace made without one (unshare --pid --fork, no
 * --mount-proc) sees the parent namespace's, where its pids name other
 * processes.  Failure: layer "supervisor", saying how to mount one. */
int sr_ns_check_proc(struct sr_error *err);

/* Writes setgroups=deny and single-id uid/gid maps for pid, then reads them
 * back.  Failure: layer "userns". */
int sr_ns_write_maps(pid_t pid, uid_t inside_uid, uid_t host_uid,
                     gid_t inside_gid, gid_t host_gid, struct sr_error *err);

/*
 * Ubuntu 23.10 and later set kernel.apparmor_restrict_unprivileged_userns=1:
 * an unconfined program still gets its user namespace, but AppArmor's
 * unprivileged_userns profile denies every capability in it, so the
 * sandbox's first privileged step (a mount, lo, sethostname...) fails with
 * EPERM or EACCES.  When err is such a failure of a layer built inside the
 * namespaces, euid is not 0 and apparmor_restrict_unprivileged_userns in
 * kernel_fd (a directory fd of /proc/sys/kernel; -1: none) reads 1, appends
 * why and what to do to err->msg (shortening the message if it must) and
 * returns true.  Layer, reason and errno stay.
 */
bool sr_ns_explain_apparmor(struct sr_error *err, int kernel_fd, uid_t euid);
