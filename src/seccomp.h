/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>

struct sr_error;
struct sr_policy;

struct sr_seccomp;

/*
 * Builds the allowlist filter for the resolved policy (the default table
 * plus the profile's seccomp-allow, minus its seccomp-deny).  Done in the
 * supervisor before the sandbox exists, so policy_resolved can name the
 * filter's digest and a libseccomp failure stops the run before anything
 * is created.  Failure: sr_error_layer("seccomp", ...).
 */
int sr_seccomp_build(const struct sr_policy *p, struct sr_seccomp **out,
                     struct sr_error *err);

/* "sha256:<hex>" of the exact BPF program that will be loaded. */
const char *sr_seccomp_digest(const struct sr_seccomp *f);
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
 */
int sr_seccomp_load(const struct sr_seccomp *f, struct sr_error *err);

void sr_seccomp_free(struct sr_seccomp *f);

/*
 * For a run whose memory the supervisor samples (sampler.h): a further
 * program that answers ENOSYS to memfd_create and shmget, whose memory
 * needs no mapping to be held and so cannot be sampled.  Loaded before the
 * main program; the digest and the instruction count include it.
 */
int sr_seccomp_refuse_unsampled(struct sr_seccomp *f, struct sr_error *err);
/* The calls it refuses, NULL-terminated (policy_resolved names them). */
const char *const *sr_seccomp_unsampled_calls(void);

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
