/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sr_error;
struct sr_policy;

struct sr_seccomp;
struct seccomp_data;

/*
 * Builds the allowlist filter for the resolved policy (the default table
 * plus the profile's seccomp-allow, minus its seccomp-deny).  Done in the
 * supervisor before the sandbox exists, so policy_resolved can name the
 * filter's digest and a libseccomp failure stops the run before anything
 * is created.  Failure: sr_error_layer("seccomp", ...).
 */
int sr_seccomp_build(const struct sr_policy *p, bool notify,
                     struct sr_seccomp **out, struct sr_error *err);

/*
 * Whether this kernel can report refused calls to the supervisor: the
 * SECCOMP_RET_USER_NOTIF action, and a listener together with TSYNC
 * (SECCOMP_FILTER_FLAG_TSYNC_ESRCH, Linux 5.7).  Installs nothing.  When
 * it cannot, the filter answers EPERM itself (sr_seccomp_build with
 * notify false) and policy_resolved says that refusals are not reported.
 */
bool sr_seccomp_notify_available(void);

/* "sha256:<hex>" of the exact BPF program that will be loaded. */
const char *sr_seccomp_digest(const struct sr_seccomp *f);
/* Of the program that answers refusals itself: the one loaded when the
 * kernel refuses the listener at load time (sr_seccomp_load's fell_back),
 * or the one loaded anyway without notify. */
const char *sr_seccomp_plain_digest(const struct sr_seccomp *f);
/* Whether refusals go to the supervisor (built with notify). */
bool sr_seccomp_reports(const struct sr_seccomp *f);
/* "default-allowlist", or "profile-allowlist" when the profile's
 * seccomp-allow or seccomp-deny changed it (policy_resolved's
 * seccomp.policy). */
const char *sr_seccomp_kind(const struct sr_seccomp *f);
/* Number of BPF instructions. */
unsigned sr_seccomp_insns(const struct sr_seccomp *f);

/*
 * Loads the filter into the calling process with TSYNC, after no_new_privs;
 * the last step before execve.  Verifies "Seccomp: 2" in /proc/self/status
 * afterwards when /proc is readable.  Failure: layer "seccomp".
 *
 * Built with notify, the filter comes with a listener: *listener is its fd
 * (O_CLOEXEC), which the caller hands to the supervisor and closes before
 * it runs anything else.  A process that already has a listener above it
 * (EBUSY) gets the program that answers refusals itself instead: *fell_back
 * is set and *listener stays -1.
 */
int sr_seccomp_load(const struct sr_seccomp *f, int *listener, bool *fell_back,
                    struct sr_error *err);

/* The native system call `nr`'s name (malloc'd), or NULL when it has
 * none.  From a table made at build time; libseccomp is loaded only when
 * the binary has none for its architecture. */
char *sr_seccomp_syscall_name(int nr);

void sr_seccomp_free(struct sr_seccomp *f);

/*
 * For a run whose memory the supervisor samples (sampler.h): a further
 * part that refuses, with ENOSYS, what holds memory the sampler cannot
 * see: memfd_create, shmget, semget and msgget, whose memory needs no
 * mapping to be held (a semaphore array or a message queue is kernel
 * memory in the IPC namespace),
 * and mmap (mmap2 where the architecture has it) when its flags ask for a
 * shared anonymous mapping (MAP_ANONYMOUS with MAP_SHARED or
 * MAP_SHARED_VALIDATE), whose object keeps every page while any page of
 * it is mapped.  Linked into the one program, in front of the tty and
 * main parts; the digests and the instruction count include it.  With
 * notify its refusals are reported like every other, and answered ENOSYS
 * (sr_seccomp_refusal_errno).
 */
int sr_seccomp_refuse_unsampled(struct sr_seccomp *f, struct sr_error *err);
/* The name of the i-th call it refuses (policy_resolved names them), NULL
 * past the last. */
const char *sr_seccomp_unsampled_call(size_t i);

/*
 * The errno the program answering refusals itself gives the call `d` (a
 * notification's: architecture, number, arguments): what the supervisor
 * answers the listener's notification of it with.  ENOSYS for what
 * sr_seccomp_refuse_unsampled refuses, EPERM for every other refusal.
 */
int sr_seccomp_refusal_errno(const struct sr_seccomp *f,
                             const struct seccomp_data *d);

/*
 * libseccomp is opened with dlopen on first use (dlib.h): the default
 * filter is compiled in at build time, so only a profile that changes the
 * syscall lists (or --version) needs the library.  Load failure: exit 125,
 * reason "library_unavailable".
 */
int sr_seccomp_lib_load(struct sr_error *err);
/* The loaded library's version, or NULL when it cannot be loaded. */
struct scmp_version;
const struct scmp_version *sr_seccomp_lib_version(void);

/*
 * The configure stage calls this right after the profile is applied: every
 * name of the policy's seccomp-allow and seccomp-deny lists must be a
 * system call libseccomp knows ("FILE:LINE: unknown system call 'x'", exit
 * 125, naming the first such line).  Loads libseccomp only when the lists
 * are not empty; a load failure is reported at the first listed line.
 */
int sr_seccomp_check_names(const struct sr_policy *p, struct sr_error *err);
