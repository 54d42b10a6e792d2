/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/in6.h> /* after netinet/in.h, which it defers to */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/audit.h>

/* Linux 6.7's TCP-AO (linux/tcp.h), past the headers of older systems. */
#ifndef TCP_AO_ADD_KEY
#define TCP_AO_ADD_KEY 38
#endif
/* Linux 6.4's prctl for KSM (linux/prctl.h), likewise. */
#ifndef PR_SET_MEMORY_MERGE
#define PR_SET_MEMORY_MERGE 67
#endif
/* libseccomp's header.  AM_CPPFLAGS puts src/ on the -I path, where our own
 * seccomp.h shadows <seccomp.h>; going through linux/ (which exists in the
 * system include directory but not in src/) reaches the library's. */
#include <seccomp.h>

#include "dlib.h"
#include "fdutil.h"
#include "policy.h"
#include "seccomp.h"
#include "sha256.h"
#include "util.h"

/*
 * The default allowlist.  Everything not named here (and every syscall the
 * kernel adds later) gets the default action, EPERM.  Names that do not
 * exist on the native architecture (open on aarch64, say) are skipped.
 * A name must not appear twice, and none may appear in denied_groups below.
 */
struct sc_group {
  const char *name;
  const char *const *calls; /* NULL-terminated */
};

/* Program lifetime: exec, exit, wait, signals to its own processes (the pid
 * namespace bounds who can be reached), identity queries. */
static const char *const allow_process[] = {"execve",
                                            "execveat",
                                            "exit",
                                            "exit_group",
                                            "fork",
                                            "vfork",
                                            "wait4",
                                            "waitid",
                                            "kill",
                                            "tkill",
                                            "tgkill",
                                            "getpid",
                                            "getppid",
                                            "gettid",
                                            "getpgid",
                                            "setpgid",
                                            "getpgrp",
                                            "getsid",
                                            "setsid",
                                            "getuid",
                                            "geteuid",
                                            "getgid",
                                            "getegid",
                                            "getresuid",
                                            "getresgid",
                                            "getgroups",
                                            "capget",
                                            "prctl",
                                            "arch_prctl",
                                            "pidfd_open",
                                            "pidfd_send_signal",
                                            "getrlimit",
                                            "setrlimit",
                                            "getrusage",
                                            "times",
                                            "getpriority",
                                            "setpriority",
                                            "umask",
                                            "uname",
                                            "sysinfo",
                                            "getcpu",
                                            "getrandom",
                                            NULL};

/* Threads: glibc's pthread_create (clone is argument-filtered, clone3
 * answers ENOSYS), futexes, the per-thread registrations libc makes. */
static const char *const allow_threads[] = {"futex",
                                            "futex_waitv",
                                            "set_robust_list",
                                            "set_tid_address",
                                            "rseq",
                                            "sched_yield",
                                            "sched_getaffinity",
                                            "sched_setaffinity",
                                            "sched_getparam",
                                            "sched_setparam",
                                            "sched_getscheduler",
                                            "sched_setscheduler",
                                            "sched_get_priority_max",
                                            "sched_get_priority_min",
                                            "sched_rr_get_interval",
                                            "sched_getattr",
                                            "sched_setattr",
                                            "membarrier",
                                            NULL};

/* Signals: handlers, masks, waits, alternate stacks, timers that signal. */
static const char *const allow_signals[] = {"rt_sigaction",
                                            "rt_sigprocmask",
                                            "rt_sigreturn",
                                            "rt_sigsuspend",
                                            "rt_sigpending",
                                            "rt_sigtimedwait",
                                            "rt_sigqueueinfo",
                                            "rt_tgsigqueueinfo",
                                            "sigaltstack",
                                            "pause",
                                            "alarm",
                                            "getitimer",
                                            "setitimer",
                                            "restart_syscall",
                                            NULL};

/* Memory: the allocator, the dynamic loader, numpy-sized mappings, memfd
 * (mmap and memfd_create are argument-filtered: no huge pages).  Locking
 * is bounded by RLIMIT_MEMLOCK and the memory cgroup; NUMA policy calls
 * are used by BLAS/OpenMP runtimes and only affect the caller. */
static const char *const allow_memory[] = {"brk",
                                           "munmap",
                                           "mremap",
                                           "mprotect",
                                           "madvise",
                                           "msync",
                                           "mincore",
                                           "mlock",
                                           "mlock2",
                                           "munlock",
                                           "mlockall",
                                           "munlockall",
                                           "pkey_alloc",
                                           "pkey_free",
                                           "pkey_mprotect",
                                           "get_mempolicy",
                                           "set_mempolicy",
                                           "mbind",
                                           NULL};

/* Time: reading clocks, sleeping, per-process timers (never setting the
 * system clock: see the "clock" denied group). */
static const char *const allow_time[] = {
    "clock_gettime",    "clock_getres",    "clock_nanosleep",
    "nanosleep",        "gettimeofday",    "time",
    "timer_create",     "timer_settime",   "timer_gettime",
    "timer_getoverrun", "timer_delete",    "timerfd_create",
    "timerfd_settime",  "timerfd_gettime", NULL};

/* Files: what shells, coreutils and interpreters do with the filesystem
 * the mount layer built (read-only where it matters; that is the mount
 * layer's job, not this one's). */
static const char *const allow_files[] = {"read",
                                          "write",
                                          "readv",
                                          "writev",
                                          "pread64",
                                          "pwrite64",
                                          "preadv",
                                          "pwritev",
                                          "preadv2",
                                          "pwritev2",
                                          "open",
                                          "openat",
                                          "openat2",
                                          "creat",
                                          "close",
                                          "close_range",
                                          "dup",
                                          "dup2",
                                          "dup3",
                                          "lseek",
                                          "fcntl",
                                          "flock",
                                          "fsync",
                                          "fdatasync",
                                          "sync",
                                          "syncfs",
                                          "sync_file_range",
                                          "ftruncate",
                                          "truncate",
                                          "fallocate",
                                          "fadvise64",
                                          "readahead",
                                          "stat",
                                          "fstat",
                                          "lstat",
                                          "newfstatat",
                                          "statx",
                                          "statfs",
                                          "fstatfs",
                                          "access",
                                          "faccessat",
                                          "faccessat2",
                                          "getdents",
                                          "getdents64",
                                          "getcwd",
                                          "chdir",
                                          "fchdir",
                                          "rename",
                                          "renameat",
                                          "renameat2",
                                          "mkdir",
                                          "mkdirat",
                                          "rmdir",
                                          "unlink",
                                          "unlinkat",
                                          "link",
                                          "linkat",
                                          "symlink",
                                          "symlinkat",
                                          "readlink",
                                          "readlinkat",
                                          "chmod",
                                          "fchmod",
                                          "fchmodat",
                                          "fchmodat2",
                                          "chown",
                                          "fchown",
                                          "fchownat",
                                          "lchown",
                                          "utime",
                                          "utimes",
                                          "utimensat",
                                          "futimesat",
                                          "mknod",
                                          "mknodat",
                                          "sendfile",
                                          "copy_file_range",
                                          "splice",
                                          "tee",
                                          "vmsplice",
                                          "getxattr",
                                          "lgetxattr",
                                          "fgetxattr",
                                          "listxattr",
                                          "llistxattr",
                                          "flistxattr",
                                          "setxattr",
                                          "lsetxattr",
                                          "fsetxattr",
                                          "removexattr",
                                          "lremovexattr",
                                          "fremovexattr",
                                          "cachestat",
                                          NULL};

/* Waiting on and signalling between descriptors: pipes, poll/select/epoll,
 * eventfd, signalfd, inotify (event loops in every runtime). */
static const char *const allow_events[] = {"pipe",
                                           "pipe2",
                                           "select",
                                           "pselect6",
                                           "poll",
                                           "ppoll",
                                           "epoll_create",
                                           "epoll_create1",
                                           "epoll_ctl",
                                           "epoll_wait",
                                           "epoll_pwait",
                                           "epoll_pwait2",
                                           "eventfd",
                                           "eventfd2",
                                           "signalfd",
                                           "signalfd4",
                                           "inotify_init",
                                           "inotify_init1",
                                           "inotify_add_watch",
                                           "inotify_rm_watch",
                                           NULL};

/* System V shared memory and semaphores: the IPC namespace is private to
 * the run, and some numeric and database libraries use them (shmget is
 * argument-filtered: no huge pages).  Message queues (SysV and POSIX) are
 * left out as exotic IPC. */
static const char *const allow_sysv[] = {"shmat",  "shmdt", "shmctl",
                                         "semget", "semop", "semtimedop",
                                         "semctl", NULL};

/* Sockets once created (socket itself is argument-filtered, setsockopt
 * is allowed with add_filtered_rules and narrowed by the tty program):
 * loopback TCP and UDP, Unix sockets, socketpair for subprocess plumbing.
 * Reach beyond lo is the network namespace's decision. */
static const char *const allow_sockets[] = {
    "socketpair", "bind",        "listen",      "accept",   "accept4",
    "connect",    "getsockname", "getpeername", "sendto",   "recvfrom",
    "sendmsg",    "recvmsg",     "sendmmsg",    "recvmmsg", "shutdown",
    "getsockopt", NULL};

static const struct sc_group allow_groups[] = {
    {"process", allow_process}, {"threads", allow_threads},
    {"signals", allow_signals}, {"memory", allow_memory},
    {"time", allow_time},       {"files", allow_files},
    {"events", allow_events},   {"sysv-ipc", allow_sysv},
    {"sockets", allow_sockets},
};

/*
 * Hard-denied groups: never in the allowlist, and a profile's seccomp-allow
 * of any of these names is refused (the platform forbids it; this version
 * has no switch to lift that).
 */

/* Reading or steering other processes. */
static const char *const deny_debug[] = {
    "ptrace", "process_vm_readv", "process_vm_writev",
    "kcmp",   "pidfd_getfd",      NULL};
/* Kernel programmability and introspection: the bulk of recent kernel
 * exploits start from these. */
static const char *const deny_bpf[] = {"bpf", "perf_event_open", "userfaultfd",
                                       NULL};
/* Kernel keyrings are not namespaced. */
static const char *const deny_keyring[] = {"keyctl", "add_key", "request_key",
                                           NULL};
/* io_uring performs syscalls the filter never sees. */
static const char *const deny_io_uring[] = {"io_uring_setup", "io_uring_enter",
                                            "io_uring_register", NULL};
/* Kernel code and machine state. */
static const char *const deny_kernel[] = {"init_module",
                                          "finit_module",
                                          "delete_module",
                                          "kexec_load",
                                          "kexec_file_load",
                                          "reboot",
                                          "swapon",
                                          "swapoff",
                                          "acct",
                                          "quotactl",
                                          "quotactl_fd",
                                          "syslog",
                                          "iopl",
                                          "ioperm",
                                          "lookup_dcookie",
                                          "open_by_handle_at",
                                          "name_to_handle_at",
                                          NULL};
/* The system clock is shared with the host. */
static const char *const deny_clock[] = {"settimeofday", "clock_settime",
                                         "clock_adjtime", "adjtimex", NULL};
/* The mount layer built the filesystem view; nothing may rebuild it. */
static const char *const deny_mount[] = {
    "mount",      "umount2",   "pivot_root",    "chroot",
    "fsopen",     "fsconfig",  "fsmount",       "fspick",
    "move_mount", "open_tree", "mount_setattr", NULL};
/* New namespaces would undo the sandbox's; clone is filtered on its flags
 * and clone3 (flags in memory, out of the filter's reach) answers ENOSYS. */
static const char *const deny_namespaces[] = {"setns", "unshare", "clone3",
                                              NULL};

static const struct sc_group denied_groups[] = {
    {"debug", deny_debug},     {"bpf", deny_bpf},
    {"keyring", deny_keyring}, {"io_uring", deny_io_uring},
    {"kernel", deny_kernel},   {"clock", deny_clock},
    {"mount", deny_mount},     {"namespaces", deny_namespaces},
};

/* Allowed only with the argument rules in add_filtered_rules(); allowing
 * them outright would drop those rules. */
static const struct {
  const char *call;
  const char *group;
} filtered_calls[] = {
    {"clone", "namespaces"},        {"socket", "sockets"},
    {"prlimit64", "process"},       {"ioctl", "tty"},
    {"personality", "personality"}, {"mmap", "memory"},
    {"memfd_create", "memory"},     {"shmget", "sysv-ipc"},
    {"setsockopt", "sockets"},
};

/* clone(2) flags that create namespaces.  CLONE_NEWTIME (0x80) is left out:
 * clone() reads that byte as the exit signal, only clone3 and unshare take
 * it, and both are refused. */
#define SR_CLONE_NS_FLAGS                                                      \
  ((uint64_t)(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |    \
              CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET))

#define SR_DIGEST_LEN (sizeof("sha256:") - 1 + 64)

/* libseccomp builds two programs (build_tty, build_main); link_programs()
 * makes them the one that is loaded.  A run whose memory the supervisor
 * samples gets a third, built by hand, in front of the two
 * (sr_seccomp_refuse_unsampled). */
enum { SR_PROG_TTY = 0, SR_PROG_MAIN, SR__PROG_MAX };

/* What every refusal of the programs libseccomp builds returns; in the
 * program loaded with a listener it becomes SECCOMP_RET_USER_NOTIF
 * (to_notify()). */
#define SR_RET_DENY (SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA))
/* What the refusals of a sampled run's memfd_create, shmget, semget, msgget and
 * shared anonymous mmap return (sr_seccomp_refuse_unsampled). */
#define SR_RET_NOSYS (SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA))

struct sr_seccomp {
  struct sock_filter *prog; /* the program loaded */
  unsigned short len;
  char digest[SR_DIGEST_LEN + 1];
  /* With notify: the same program answering itself (EPERM, or ENOSYS in
   * the unsampled prefix), for a kernel that refuses a second listener
   * (EBUSY, sr_seccomp_load). */
  struct sock_filter *plain;
  char plain_digest[SR_DIGEST_LEN + 1];
  /* The first instructions of both: sr_seccomp_refuse_unsampled's, or 0 */
  unsigned short unsampled_len;
  bool adjusted; /* the profile's seccomp-allow/seccomp-deny changed it */
  bool notify;   /* refusals go to the supervisor (SECCOMP_RET_USER_NOTIF) */
};

/* The programs as libseccomp exports them, before link_programs(). */
struct sr_seccomp_parts {
  struct sock_filter *prog[SR__PROG_MAX];
  unsigned short len[SR__PROG_MAX];
};

static void parts_done(struct sr_seccomp_parts *pp) {
  for (size_t i = 0; i < SR__PROG_MAX; i++)
    free(pp->prog[i]);
}

/*
 * The default filter (no seccomp-allow, no seccomp-deny) compiled to BPF at
 * build time by this file's generator (SR_SECCOMP_GENERATOR, at the end):
 * libseccomp needs milliseconds to build it, at every launch otherwise.
 * Linked into the skillrun binary only; weak, so the unit tests and the
 * generator itself, which lack it, build the filter at run time.
 */
extern const uint32_t sr_seccomp_default_arch __attribute__((weak));
/* The generator's ELF machine, class and data encoding (elf_abi()). */
extern const uint32_t sr_seccomp_default_abi __attribute__((weak));
/* The linked program in its plain form (refusals answer EPERM). */
extern const uint16_t sr_seccomp_default_len __attribute__((weak));
extern const struct sock_filter sr_seccomp_default_insns[]
    __attribute__((weak));
/* The native architecture's system call names by number (NULL where a
 * number has none), so that a run reporting a refused call need not load
 * libseccomp to name it. */
extern const uint16_t sr_seccomp_default_n_names __attribute__((weak));
extern const char *const sr_seccomp_default_names[] __attribute__((weak));

/*
 * libseccomp, opened on first use (dlib.h): with the default filter
 * compiled in, a run whose profile keeps the syscall lists never calls it.
 */
#define SR_SCMP_FUNCTIONS(X)                                                   \
  X(seccomp_init)                                                              \
  X(seccomp_release)                                                           \
  X(seccomp_attr_set)                                                          \
  X(seccomp_rule_add)                                                          \
  X(seccomp_rule_add_array)                                                    \
  X(seccomp_export_bpf)                                                        \
  X(seccomp_syscall_resolve_name)                                              \
  X(seccomp_syscall_resolve_num_arch)                                          \
  X(seccomp_arch_native)                                                       \
  X(seccomp_version)
static struct { SR_SCMP_FUNCTIONS(SR_DLIB_MEMBER) } scmp;

SR_DLOPEN_NOTE(sr_scmp_note, "seccomp",
               "seccomp filters for profiles that change the syscall lists",
               SR_LIBSECCOMP_SONAME);

SR_DLIB_LOADER(load_lib, scmp, SR_SCMP_FUNCTIONS, SR_LIBSECCOMP_SONAME)

int sr_seccomp_lib_load(struct sr_error *err) {
  return load_lib("a seccomp filter other than the default", err);
}

const struct scmp_version *sr_seccomp_lib_version(void) {
  struct sr_error e = {0};

  return sr_seccomp_lib_load(&e) == 0 ? scmp.seccomp_version() : NULL;
}

/* The running binary's ELF machine, class and data encoding: equal for the
 * generator and the binary exactly when both were built for one ABI, so
 * that libseccomp's native architecture is the same for both. */
static uint32_t elf_abi(void) {
  extern const ElfW(Ehdr) __ehdr_start __attribute__((weak));
  const ElfW(Ehdr) *e = &__ehdr_start;

  if (!e)
    return 0;
  return (uint32_t)e->e_machine << 16 | (uint32_t)e->e_ident[EI_CLASS] << 8 |
         e->e_ident[EI_DATA];
}

static void ctx_releasep(scmp_filter_ctx *c) {
  if (*c)
    scmp.seccomp_release(*c);
}
#define _cleanup_ctx_ _cleanup_(ctx_releasep)

/* 1 when `name` is a syscall libseccomp knows for the native arch, 0 when
 * not, or a negative errno with err set when libseccomp cannot be loaded. */
static int known_syscall(const char *name, struct sr_error *err) {
  int r = sr_seccomp_lib_load(err);

  if (r < 0)
    return r;
  /* Negative numbers are libseccomp's pseudo-syscalls: calls that exist on
   * some other architecture but not on this one.  A control character is
   * no name to hand to libseccomp. */
  return name && !sr_has_control_chars(name) &&
         scmp.seccomp_syscall_resolve_name(name) >= 0;
}

/* The reference listed first (lowest seq) of both lists that passes
 * `pick` (all when pick is NULL), or NULL. */
static const struct sr_syscall_ref *
first_listed(const struct sr_policy *p, bool (*pick)(const char *name)) {
  const struct sr_syscall_list *lists[] = {&p->seccomp_allow, &p->seccomp_deny};
  const struct sr_syscall_ref *first = NULL;

  for (size_t k = 0; k < SR_ARRAY_SIZE(lists); k++)
    for (size_t i = 0; i < lists[k]->n; i++) {
      const struct sr_syscall_ref *ref = &lists[k]->v[i];
      if ((!first || ref->seq < first->seq) && (!pick || pick(ref->name)))
        first = ref;
    }
  return first;
}

static bool unknown_name(const char *name) {
  struct sr_error e = {0};
  /* Only called once the library is loaded: 0 or 1 here. */
  return known_syscall(name, &e) == 0;
}

static const char *denied_group_of(const char *name) {
  for (size_t g = 0; g < SR_ARRAY_SIZE(denied_groups); g++)
    for (const char *const *c = denied_groups[g].calls; *c; c++)
      if (!strcmp(*c, name))
        return denied_groups[g].name;
  return NULL;
}

static const char *filtered_group_of(const char *name) {
  for (size_t i = 0; i < SR_ARRAY_SIZE(filtered_calls); i++)
    if (!strcmp(filtered_calls[i].call, name))
      return filtered_calls[i].group;
  return NULL;
}

int sr_seccomp_check_names(const struct sr_policy *p, struct sr_error *err) {
  const struct sr_syscall_ref *bad;
  struct sr_error e = {0};

  bad = first_listed(p, NULL);
  if (!bad)
    return 0; /* the default filter: libseccomp is not even loaded */
  if (sr_seccomp_lib_load(&e) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, 0, e.reason, "%s:%u: %s",
                        bad->file, bad->line, e.msg);
  bad = first_listed(p, unknown_name);
  if (bad)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s:%u: unknown system call '%s'", bad->file, bad->line,
                        bad->name);
  /* A call the filter never allows outright: the profile's error, on its
   * line, and --explain's too (not a layer that fails at the launch). */
  bad = NULL;
  for (size_t i = 0; i < p->seccomp_allow.n; i++) {
    const struct sr_syscall_ref *ref = &p->seccomp_allow.v[i];
    if ((!bad || ref->seq < bad->seq) &&
        (denied_group_of(ref->name) || filtered_group_of(ref->name)))
      bad = ref;
  }
  if (bad && denied_group_of(bad->name))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s:%u: seccomp-allow of '%s' is forbidden (denied "
                        "group '%s')",
                        bad->file, bad->line, bad->name,
                        denied_group_of(bad->name));
  if (bad)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s:%u: seccomp-allow of '%s' is forbidden (allowed "
                        "only with argument rules, group '%s')",
                        bad->file, bad->line, bad->name,
                        filtered_group_of(bad->name));
  return 0;
}

static bool denied_by_profile(const struct sr_policy *p, const char *name) {
  return sr_syscall_list_contains(&p->seccomp_deny, name);
}

static int allow_name(scmp_filter_ctx ctx, const char *name,
                      struct sr_error *err) {
  int nr = scmp.seccomp_syscall_resolve_name(name);
  int r;

  if (nr < 0)
    return 0; /* not a syscall on this architecture */
  r = scmp.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  /* -EEXIST: a profile named a call the table already allows. */
  if (r < 0 && r != -EEXIST)
    return sr_error_layer(err, "seccomp", -r, "scmp.seccomp_rule_add(%s)",
                          name);
  return 0;
}

static int add_rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
                    unsigned n, const struct scmp_arg_cmp *cmp,
                    struct sr_error *err) {
  int nr = scmp.seccomp_syscall_resolve_name(name);
  int r;

  if (nr < 0)
    return 0;
  r = scmp.seccomp_rule_add_array(ctx, action, nr, n, cmp);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "scmp.seccomp_rule_add(%s)",
                          name);
  return 0;
}

/* clone, socket, prlimit64, personality, mmap, memfd_create, shmget:
 * allowed only for the argument values ordinary programs use; ioctl and
 * setsockopt are allowed here and narrowed by the tty program. */
static int add_filtered_rules(scmp_filter_ctx ctx, const struct sr_policy *p,
                              struct sr_error *err) {
  int r;

  if (!denied_by_profile(p, "clone")) {
    /* fork, vfork-style spawn and pthread_create pass no CLONE_NEW* bit.
     * The flags are argument 0 on every architecture we build for
     * (s390 and cris swap the first two). */
#if defined(__s390__) || defined(__s390x__) || defined(__CRIS__)
#error "clone flags are the second argument on this architecture"
#endif
    struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, SR_CLONE_NS_FLAGS, 0);
    r = add_rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &c, err);
    if (r < 0)
      return r;
  }

  if (!denied_by_profile(p, "socket")) {
    /* The type's low nibble is the socket type; the rest are
     * SOCK_NONBLOCK/SOCK_CLOEXEC.  The domain is compared on all 64 bits,
     * so junk in the upper half is refused rather than truncated. */
    const struct scmp_arg_cmp unix_any[] = {SCMP_A0(SCMP_CMP_EQ, AF_UNIX)};
    /* TCP and UDP (protocol 0 is the family's default for the type), and
     * the unprivileged ICMP echo socket ping uses; never another protocol
     * of the same type (UDP-Lite, MPTCP, SCTP), each one more of the
     * kernel's code reachable from the sandbox.  No netlink socket: the
     * replies the kernel queues on one (rtnetlink's to RTM_GETLINK, say,
     * up to its receive buffer each) are charged to no cgroup, so a
     * skill that asks and never reads held gigabytes of the host's
     * memory past its memory limit; the sandbox's lo is up before the
     * filter, and glibc's getaddrinfo does without one. */
    static const struct {
      int family, type, protocol;
    } inet[] = {
        {AF_INET, SOCK_STREAM, 0},
        {AF_INET, SOCK_STREAM, IPPROTO_TCP},
        {AF_INET, SOCK_DGRAM, 0},
        {AF_INET, SOCK_DGRAM, IPPROTO_UDP},
        {AF_INET, SOCK_DGRAM, IPPROTO_ICMP},
        {AF_INET6, SOCK_STREAM, 0},
        {AF_INET6, SOCK_STREAM, IPPROTO_TCP},
        {AF_INET6, SOCK_DGRAM, 0},
        {AF_INET6, SOCK_DGRAM, IPPROTO_UDP},
        {AF_INET6, SOCK_DGRAM, IPPROTO_ICMPV6},
    };

    r = add_rule(ctx, SCMP_ACT_ALLOW, "socket", 1, unix_any, err);
    if (r < 0)
      return r;
    for (size_t i = 0; i < SR_ARRAY_SIZE(inet); i++) {
      const struct scmp_arg_cmp c[] = {
          SCMP_A0(SCMP_CMP_EQ, (uint64_t)inet[i].family),
          SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, (uint64_t)inet[i].type),
          SCMP_A2(SCMP_CMP_EQ, (uint64_t)inet[i].protocol)};
      r = add_rule(ctx, SCMP_ACT_ALLOW, "socket", 3, c, err);
      if (r < 0)
        return r;
    }
  }

  /* Huge pages (hugetlb) are charged to no memory cgroup (v1 has a
   * controller of their own for them, v2 only with a mount option) nor
   * seen by the sampler: on a host with a pool set aside, or allowed to
   * overcommit it, a skill could take them past its memory limit.  Never
   * asked for by ordinary programs (transparent huge pages, which
   * madvise asks for, are charged as any other memory). */
  {
    static const struct {
      const char *name;
      unsigned arg;
      uint64_t flag;
    } no_huge[] = {
        {"mmap", 3, MAP_HUGETLB},
        {"memfd_create", 1, MFD_HUGETLB},
        {"shmget", 2, SHM_HUGETLB},
    };

    for (size_t i = 0; i < SR_ARRAY_SIZE(no_huge); i++) {
      const struct scmp_arg_cmp c = {.arg = no_huge[i].arg,
                                     .op = SCMP_CMP_MASKED_EQ,
                                     .datum_a = no_huge[i].flag,
                                     .datum_b = 0};

      if (denied_by_profile(p, no_huge[i].name))
        continue;
      r = add_rule(ctx, SCMP_ACT_ALLOW, no_huge[i].name, 1, &c, err);
      if (r < 0)
        return r;
    }
  }

  if (!denied_by_profile(p, "prlimit64")) {
    /* Its own limits only (pid 0, which is what glibc's getrlimit and
     * setrlimit pass): never another process's, init's above all, which
     * runs as the same user. */
    struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_EQ, 0);
    r = add_rule(ctx, SCMP_ACT_ALLOW, "prlimit64", 1, &c, err);
    if (r < 0)
      return r;
  }

  if (!denied_by_profile(p, "personality")) {
    /* The kernel reads an unsigned int: compare the low 32 bits.  Only
     * PER_LINUX and the 0xffffffff query; no ASLR or exec-permission
     * changes. */
    const uint64_t ok[] = {0, 0xffffffffu};
    for (size_t i = 0; i < SR_ARRAY_SIZE(ok); i++) {
      struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, ok[i]);
      r = add_rule(ctx, SCMP_ACT_ALLOW, "personality", 1, &c, err);
      if (r < 0)
        return r;
    }
  }

  if (!denied_by_profile(p, "ioctl")) {
    r = add_rule(ctx, SCMP_ACT_ALLOW, "ioctl", 0, NULL, err);
    if (r < 0)
      return r;
  }

  if (!denied_by_profile(p, "setsockopt")) {
    r = add_rule(ctx, SCMP_ACT_ALLOW, "setsockopt", 0, NULL, err);
    if (r < 0)
      return r;
  }

  /* glibc falls back to clone when clone3 says ENOSYS (not on EPERM), so
   * threads and posix_spawn keep working while clone3's flags, which live
   * in memory the filter cannot read, are never honoured. */
  return add_rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL, err);
}

static int export_bpf(scmp_filter_ctx ctx, struct sock_filter **prog,
                      unsigned short *len, struct sr_error *err) {
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *buf = NULL;
  size_t n = 0;
  int r;

  /* libseccomp 2.5 exports only to an fd; a memfd keeps it off disk. */
  fd = memfd_create("skillrun-seccomp", MFD_CLOEXEC);
  if (fd < 0)
    return sr_error_layer(err, "seccomp", errno, "memfd_create");
  r = scmp.seccomp_export_bpf(ctx, fd);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "seccomp_export_bpf");
  if (lseek(fd, 0, SEEK_SET) < 0)
    return sr_error_layer(err, "seccomp", errno, "lseek on the BPF memfd");
  r = sr_read_fd(fd, BPF_MAXINSNS * sizeof(struct sock_filter), &buf, &n);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "reading the exported BPF");
  if (n == 0 || n % sizeof(struct sock_filter) != 0)
    return sr_error_layer(err, "seccomp", EPROTO,
                          "exported BPF has a bad size (%zu bytes)", n);
  *len = (unsigned short)(n / sizeof(struct sock_filter));
  *prog = (struct sock_filter *)TAKE_PTR(buf);
  return 0;
}

static int new_ctx(uint32_t def_action, scmp_filter_ctx *out,
                   struct sr_error *err) {
  _cleanup_ctx_ scmp_filter_ctx ctx = NULL;
  int r;

  ctx = scmp.seccomp_init(def_action);
  if (!ctx)
    return sr_error_layer(err, "seccomp", ENOMEM, "seccomp_init");
  /* i386 through int 0x80 and x32 numbers reach the filter with another
   * ABI; they are killed rather than matched against x86_64 numbers. */
  r = scmp.seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
                            SCMP_ACT_KILL_PROCESS);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "seccomp bad-arch action");
  /* no_new_privs is set (and verified) by its own layer, earlier. */
  r = scmp.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "seccomp NNP attribute");
  *out = TAKE_PTR(ctx);
  return 0;
}

/* The refusals of calls the allowlist allows otherwise.  TIOCSTI fakes
 * terminal input, TIOCLINUX reads and pastes the console.  TIOCSETD
 * switches a terminal's line discipline: on a pty of its own devpts a
 * skill reached every discipline the kernel has (n_hdlc, CVE-2017-2636;
 * n_gsm, CVE-2023-6546), and with dev.tty.ldisc_autoload (the default)
 * made the kernel load the module of one it had not; no program a skill
 * runs needs another discipline than the one it has.  The kernel
 * reads the command as an unsigned int, so the match ignores the upper 32
 * bits (TIOCSTI | 1<<32 is TIOCSTI).  prctl(PR_SET_SECCOMP) is seccomp(2)'s
 * older spelling, refused as seccomp(2) is: a filter the skill stacked on
 * this one would answer calls before the listener hears of them (the
 * kernel takes an errno or a trap over a notification, and the newest
 * filter's among equals), hiding refused calls from syscall_denied.  The
 * option is an int: the low 32 bits.  prctl(PR_SET_MEMORY_MERGE) and
 * madvise(MADV_MERGEABLE) offer the skill's pages to KSM, which on a host
 * that runs it merges them with identical pages of other processes (a
 * virtual machine's memory among them): the time a write to a probe page
 * takes then tells whether another holds the same contents (memory
 * deduplication side channels).  The advice is an int too.  setsockopt's
 * options that make a socket a multicast group's member, or an IPv6 anycast
 * address's, or give it a source filter: each membership is a record on the
 * socket (sock_kmalloc, up to net.core.optmem_max a socket) and one on the
 * device, charged to no cgroup; 1000 UDP sockets joining 2340 groups each
 * on lo held 300 MB of the host's memory under a 64 MiB limit, and leaving
 * them at exit took 23 s of kernel time past the CPU budget.  The
 * sandbox's only interface is lo (but in the network mode host), where a
 * group has no use.  Leaving a
 * group, unblocking a source and the multicast sending options
 * (IP_MULTICAST_LOOP, IPV6_MULTICAST_HOPS) hold nothing and stay allowed.
 * The same kind of memory (sock_kmalloc, uncharged, up to optmem_max a
 * socket) holds a socket's TCP-MD5 and TCP-AO keys (RFC 2385, 5925:
 * routers' BGP sessions; 900 sockets with 963 keys each held 163 MiB
 * under a 64 MiB limit, the run's memory peak 3.9 MB) and its IPv6
 * extension headers (hop-by-hop, destination and routing options, which
 * lo forwards nowhere): refused as well.  So is a classic socket filter
 * (SO_ATTACH_FILTER, SO_ATTACH_REUSEPORT_CBPF): the kernel's copy of the
 * program is uncharged too (1000 filters of 4000 instructions held 34 MB
 * past what the run was charged), and its JIT code counts against the
 * host's bpf_jit_limit, which every unprivileged filter shares, the
 * seccomp filters of later runs among them.
 * What the kernel puts on a socket's error queue is charged to no cgroup
 * either (sock_queue_err_skb: the socket's receive buffer alone): the
 * transmit timestamps SO_TIMESTAMPING asks for (a clone of every datagram
 * or segment sent, or with OPT_TSONLY a fresh buffer): refused, both
 * spellings of the option; a timestamp asked for in a message's control
 * data, which no filter sees, is the sandbox's network namespace's to drop
 * (net.c, net.core.tstamp_allow_data).  MSG_ZEROCOPY's completion notices
 * (option memory, optmem_max a socket, uncharged: notices kept from
 * merging by a failed send raced against good ones held 446 MiB on 3600
 * UDP sockets under a 64 MiB limit): SO_ZEROCOPY, without which the kernel
 * ignores the flag, is refused.  And the local and ICMP errors
 * IP_RECVERR and IPV6_RECVERR ask for (240 UDP sockets whose every too
 * large datagram queued one held 2 GB under a 64 MiB limit): those are
 * answered 0 and not set (SCMP_ACT_ERRNO(0), which is no refusal for the
 * listener either), since glibc's resolver gives up on a lookup whose
 * socket refuses them; a program that reads the error queue finds it
 * empty.
 * The level and the option are ints: the low 32 bits.  libseccomp refuses
 * a rule whose action equals the default action, so these live in their
 * own default-allow program; the kernel applies the stricter of the two. */
struct sockopt {
  int level, option;
};

/* setsockopt of each of the n (level, option) pairs answered by action. */
static int add_sockopt_rules(scmp_filter_ctx ctx, uint32_t action,
                             const struct sockopt *opts, size_t n,
                             struct sr_error *err) {
  for (size_t i = 0; i < n; i++) {
    const struct scmp_arg_cmp c[] = {
        SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)opts[i].level),
        SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)opts[i].option)};
    int r = add_rule(ctx, action, "setsockopt", 2, c, err);

    if (r < 0)
      return r;
  }
  return 0;
}

static int build_tty(struct sr_seccomp_parts *pp, struct sr_error *err) {
  _cleanup_ctx_ scmp_filter_ctx ctx = NULL;
  const unsigned long cmds[] = {TIOCSTI, TIOCLINUX, TIOCSETD};
  struct scmp_arg_cmp set_seccomp =
      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, PR_SET_SECCOMP);
  struct scmp_arg_cmp memory_merge =
      SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, PR_SET_MEMORY_MERGE);
  struct scmp_arg_cmp mergeable =
      SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, MADV_MERGEABLE);
  /* The MCAST_* options (RFC 3678) are the same numbers at both levels. */
  static const struct sockopt uncharged[] = {
      {IPPROTO_IP, IP_ADD_MEMBERSHIP},
      {IPPROTO_IP, IP_ADD_SOURCE_MEMBERSHIP},
      {IPPROTO_IP, IP_BLOCK_SOURCE},
      {IPPROTO_IP, IP_MSFILTER},
      {IPPROTO_IP, MCAST_JOIN_GROUP},
      {IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP},
      {IPPROTO_IP, MCAST_BLOCK_SOURCE},
      {IPPROTO_IP, MCAST_MSFILTER},
      {IPPROTO_IPV6, IPV6_ADD_MEMBERSHIP},
      {IPPROTO_IPV6, IPV6_JOIN_ANYCAST},
      {IPPROTO_IPV6, MCAST_JOIN_GROUP},
      {IPPROTO_IPV6, MCAST_JOIN_SOURCE_GROUP},
      {IPPROTO_IPV6, MCAST_BLOCK_SOURCE},
      {IPPROTO_IPV6, MCAST_MSFILTER},
      {IPPROTO_IPV6, IPV6_HOPOPTS},
      {IPPROTO_IPV6, IPV6_RTHDRDSTOPTS},
      {IPPROTO_IPV6, IPV6_RTHDR},
      {IPPROTO_IPV6, IPV6_DSTOPTS},
      {IPPROTO_IPV6, IPV6_2292HOPOPTS},
      {IPPROTO_IPV6, IPV6_2292DSTOPTS},
      {IPPROTO_IPV6, IPV6_2292RTHDR},
      {IPPROTO_IPV6, IPV6_2292PKTOPTIONS},
      /* Not memory: the host's one count of flow labels (4096, of which
       * an unprivileged caller may take all but 1024). */
      {IPPROTO_IPV6, IPV6_FLOWLABEL_MGR},
      {IPPROTO_TCP, TCP_MD5SIG},
      {IPPROTO_TCP, TCP_MD5SIG_EXT},
      {IPPROTO_TCP, TCP_AO_ADD_KEY},
      {SOL_SOCKET, SO_ATTACH_FILTER},
      {SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF},
      {SOL_SOCKET, SO_TIMESTAMPING_OLD},
      {SOL_SOCKET, SO_TIMESTAMPING_NEW},
      {SOL_SOCKET, SO_ZEROCOPY},
  };
  static const struct sockopt ignored[] = {
      {IPPROTO_IP, IP_RECVERR},
      {IPPROTO_IPV6, IPV6_RECVERR},
  };
  int r;

  r = new_ctx(SCMP_ACT_ALLOW, &ctx, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < SR_ARRAY_SIZE(cmds); i++) {
    struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, cmds[i]);
    r = add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &c, err);
    if (r < 0)
      return r;
  }
  r = add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "prctl", 1, &set_seccomp, err);
  if (r >= 0)
    r = add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "prctl", 1, &memory_merge, err);
  if (r >= 0)
    r = add_rule(ctx, SCMP_ACT_ERRNO(EPERM), "madvise", 1, &mergeable, err);
  if (r < 0)
    return r;
  r = add_sockopt_rules(ctx, SCMP_ACT_ERRNO(EPERM), uncharged,
                        SR_ARRAY_SIZE(uncharged), err);
  if (r >= 0)
    r = add_sockopt_rules(ctx, SCMP_ACT_ERRNO(0), ignored,
                          SR_ARRAY_SIZE(ignored), err);
  if (r < 0)
    return r;
  return export_bpf(ctx, &pp->prog[SR_PROG_TTY], &pp->len[SR_PROG_TTY], err);
}

static int check_profile_names(const struct sr_policy *p,
                               struct sr_error *err) {
  for (size_t i = 0; i < p->seccomp_allow.n; i++) {
    const char *name = p->seccomp_allow.v[i].name;
    const char *g;

    /* sr_seccomp_check_names has checked the names; this also catches a
     * name that libseccomp knows only for other architectures
     * (socketcall). */
    int known = known_syscall(name, err);

    if (known < 0)
      return known;
    if (!known)
      return sr_error_layer(err, "seccomp", 0,
                            "seccomp-allow: '%s' is not a system call on "
                            "this architecture",
                            name);
    /* sr_seccomp_check_names refused these on their lines already: kept
     * so that no path to the filter can allow them outright. */
    g = denied_group_of(name);
    if (g)
      return sr_error_layer(err, "seccomp", 0,
                            "seccomp-allow of '%s' is forbidden (denied "
                            "group '%s')",
                            name, g);
    g = filtered_group_of(name);
    if (g)
      return sr_error_layer(err, "seccomp", 0,
                            "seccomp-allow of '%s' is forbidden (allowed "
                            "only with argument rules, group '%s')",
                            name, g);
  }
  for (size_t i = 0; i < p->seccomp_deny.n; i++) {
    int known = known_syscall(p->seccomp_deny.v[i].name, err);

    if (known < 0)
      return known;
    if (!known)
      return sr_error_layer(err, "seccomp", 0,
                            "seccomp-deny: '%s' is not a system call on "
                            "this architecture",
                            p->seccomp_deny.v[i].name);
  }
  return 0;
}

static int build_main(const struct sr_policy *p, struct sr_seccomp_parts *pp,
                      struct sr_error *err) {
  _cleanup_ctx_ scmp_filter_ctx ctx = NULL;
  int r;

  r = new_ctx(SCMP_ACT_ERRNO(EPERM), &ctx, err);
  if (r < 0)
    return r;
  /* A binary tree of syscall numbers: fewer instructions run per call. */
  r = scmp.seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "seccomp optimize attribute");

  /* seccomp-deny wins over both the table and seccomp-allow. */
  for (size_t g = 0; g < SR_ARRAY_SIZE(allow_groups); g++)
    for (const char *const *c = allow_groups[g].calls; *c; c++) {
      if (denied_by_profile(p, *c))
        continue;
      r = allow_name(ctx, *c, err);
      if (r < 0)
        return r;
    }
  for (size_t i = 0; i < p->seccomp_allow.n; i++) {
    if (denied_by_profile(p, p->seccomp_allow.v[i].name))
      continue;
    r = allow_name(ctx, p->seccomp_allow.v[i].name, err);
    if (r < 0)
      return r;
  }
  r = add_filtered_rules(ctx, p, err);
  if (r < 0)
    return r;
  return export_bpf(ctx, &pp->prog[SR_PROG_MAIN], &pp->len[SR_PROG_MAIN], err);
}

static int digest(const struct sock_filter *prog, unsigned short len,
                  char out[SR_DIGEST_LEN + 1], struct sr_error *err) {
  unsigned char md[SR_SHA256_LEN];
  char hex[SR_SHA256_HEX_LEN + 1];
  struct sr_sha256 c;
  int r = sr_sha256_init(&c);

  if (r == 0)
    r = sr_sha256_update(&c, prog, len * sizeof(struct sock_filter));
  if (r == 0)
    r = sr_sha256_final(&c, md);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "SHA-256 of the filter failed");
  sr_hex(md, sizeof(md), hex);
  snprintf(out, SR_DIGEST_LEN + 1, "sha256:%s", hex);
  return 0;
}

static bool is_ret_k(const struct sock_filter *insn) {
  return insn->code == (BPF_RET | BPF_K);
}

/*
 * One program from the two: the tty program, whose every "allow" becomes a
 * jump to the main program placed after it.  The kernel then runs one
 * filter per system call instead of two, and a single filter can carry the
 * listener (a task may have only one).  Both programs are libseccomp's:
 * each starts by loading what it tests from seccomp_data and ends in
 * returns of constants, so the main program does not depend on where it
 * was entered from.
 */
static int link_programs(const struct sr_seccomp_parts *pp,
                         struct sock_filter **out, unsigned short *out_len,
                         struct sr_error *err) {
  size_t tty = pp->len[SR_PROG_TTY], total = tty + pp->len[SR_PROG_MAIN];
  struct sock_filter *prog;

  if (!pp->prog[SR_PROG_TTY] || !pp->prog[SR_PROG_MAIN] || tty == 0 ||
      pp->len[SR_PROG_MAIN] == 0)
    return sr_error_layer(err, "seccomp", EPROTO, "an empty BPF program");
  if (total > BPF_MAXINSNS)
    return sr_error_layer(err, "seccomp", E2BIG,
                          "the filter has %zu instructions (at most %d)", total,
                          BPF_MAXINSNS);
  prog = malloc(total * sizeof(*prog));
  if (!prog)
    return sr_error_layer(err, "seccomp", ENOMEM, "seccomp filter");
  memcpy(prog, pp->prog[SR_PROG_TTY], tty * sizeof(*prog));
  memcpy(prog + tty, pp->prog[SR_PROG_MAIN],
         pp->len[SR_PROG_MAIN] * sizeof(*prog));
  for (size_t i = 0; i < total; i++) {
    if (BPF_CLASS(prog[i].code) == BPF_RET && !is_ret_k(&prog[i])) {
      free(prog);
      return sr_error_layer(err, "seccomp", EPROTO,
                            "unexpected BPF return at %zu", i);
    }
    if (i < tty && is_ret_k(&prog[i]) && prog[i].k == SECCOMP_RET_ALLOW)
      prog[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
                                             (uint32_t)(tty - i - 1), 0, 0);
  }
  *out = prog;
  *out_len = (unsigned short)total;
  return 0;
}

/* A copy of the plain program whose refusals go to the listener: the
 * default action (every call not allowed, the argument-filtered calls
 * whose arguments are not), the tty part's refusals (ioctl,
 * prctl, setsockopt), and the ENOSYS of the unsampled prefix (its first
 * `prefix` instructions), which the supervisor answers ENOSYS in turn
 * (sr_seccomp_refusal_errno).  clone3's ENOSYS, in the main program, and the
 * other ABIs' kill stay what they are. */
static struct sock_filter *to_notify(const struct sock_filter *plain,
                                     unsigned short len,
                                     unsigned short prefix) {
  struct sock_filter *prog = malloc(len * sizeof(*prog));

  if (!prog)
    return NULL;
  memcpy(prog, plain, len * sizeof(*prog));
  for (size_t i = 0; i < len; i++)
    if (is_ret_k(&prog[i]) &&
        (prog[i].k == SR_RET_DENY || (i < prefix && prog[i].k == SR_RET_NOSYS)))
      prog[i].k = SECCOMP_RET_USER_NOTIF;
  return prog;
}

/* f's programs from the plain one (taken over, freed on failure): the one
 * loaded and, with notify, the plain one kept for EBUSY; both digests. */
static int set_programs(struct sr_seccomp *f, struct sock_filter *plain,
                        unsigned short len, unsigned short prefix,
                        struct sr_error *err) {
  struct sock_filter *prog = plain;
  int r = 0;

  if (f->notify) {
    prog = to_notify(plain, len, prefix);
    if (!prog) {
      free(plain);
      return sr_error_layer(err, "seccomp", ENOMEM, "seccomp filter");
    }
  }
  free(f->prog);
  free(f->plain);
  f->prog = prog;
  f->plain = f->notify ? plain : NULL;
  f->len = len;
  f->unsampled_len = prefix;
  if (f->notify)
    r = digest(f->plain, len, f->plain_digest, err);
  if (r >= 0)
    r = digest(f->prog, len, f->digest, err);
  return r;
}

/* 1 when the build-time program was taken, 0 when it does not apply (a
 * profile changed the lists, another architecture, no generated file). */
static int use_precomputed(const struct sr_policy *p, struct sock_filter **prog,
                           unsigned short *len, struct sr_error *err) {
  size_t bytes;

  if (p->seccomp_allow.n > 0 || p->seccomp_deny.n > 0)
    return 0;
  if (!&sr_seccomp_default_arch || !&sr_seccomp_default_abi ||
      !&sr_seccomp_default_len || !sr_seccomp_default_insns)
    return 0;
  if (sr_seccomp_default_abi == 0 || sr_seccomp_default_abi != elf_abi() ||
      sr_seccomp_default_len == 0)
    return 0;
  bytes = sr_seccomp_default_len * sizeof(struct sock_filter);
  *prog = malloc(bytes);
  if (!*prog)
    return sr_error_layer(err, "seccomp", ENOMEM, "seccomp filter");
  memcpy(*prog, sr_seccomp_default_insns, bytes);
  *len = sr_seccomp_default_len;
  return 1;
}

/* The plain program: the build-time one, or libseccomp's two linked. */
static int build_plain(const struct sr_policy *p, struct sock_filter **prog,
                       unsigned short *len, struct sr_error *err) {
  struct sr_seccomp_parts pp = {0};
  int r = use_precomputed(p, prog, len, err);

  if (r != 0)
    return r < 0 ? r : 0;
  r = sr_seccomp_lib_load(err);
  if (r >= 0)
    r = build_tty(&pp, err);
  if (r >= 0)
    r = build_main(p, &pp, err);
  if (r >= 0)
    r = link_programs(&pp, prog, len, err);
  parts_done(&pp);
  return r;
}

int sr_seccomp_build(const struct sr_policy *p, bool notify,
                     struct sr_seccomp **out, struct sr_error *err) {
  struct sr_seccomp *f;
  struct sock_filter *plain = NULL;
  unsigned short len = 0;
  int r;

  r = check_profile_names(p, err);
  if (r < 0)
    return r;
  r = build_plain(p, &plain, &len, err);
  if (r < 0)
    return r;
  if (!plain || len == 0) { /* build_plain makes neither */
    free(plain);
    return sr_error_layer(err, "seccomp", EPROTO, "an empty BPF program");
  }
  f = calloc(1, sizeof(*f));
  if (!f) {
    free(plain);
    return sr_error_layer(err, "seccomp", ENOMEM, "seccomp filter");
  }
  f->adjusted = p->seccomp_allow.n > 0 || p->seccomp_deny.n > 0;
  f->notify = notify;
  r = set_programs(f, plain, len, 0, err);
  if (r < 0) {
    sr_seccomp_free(f);
    return r;
  }
  *out = f;
  return 0;
}

const char *sr_seccomp_digest(const struct sr_seccomp *f) {
  return f->digest;
}

const char *sr_seccomp_kind(const struct sr_seccomp *f) {
  return f->adjusted ? "profile-allowlist" : "default-allowlist";
}

bool sr_seccomp_reports(const struct sr_seccomp *f) {
  return f->notify;
}

unsigned sr_seccomp_insns(const struct sr_seccomp *f) {
  return f->len;
}

/* "Seccomp:\t2" in /proc/self/status.  Without a readable /proc (or with a
 * profile that denied open) the seccomp(2) return value is the proof. */
static int verify_mode(struct sr_error *err) {
  /* A stack buffer, not malloc: this runs after the rlimits, and under
   * RLIMIT_AS an allocator that needs a new mapping (ASan's always does)
   * would fail here rather than in the skill. */
  char status[16384];
  _cleanup_close_ int fd = -1;
  const char *line;
  size_t got = 0;
  int r;

  fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && (errno == ENOENT || errno == EACCES || errno == EPERM))
    return 0;
  if (fd < 0)
    return sr_error_layer(err, "seccomp", errno, "opening /proc/self/status");
  r = sr_read_full(fd, status, sizeof(status) - 1, &got);
  if (r < 0)
    return sr_error_layer(err, "seccomp", -r, "reading /proc/self/status");
  status[got] = '\0';
  line = strstr(status, "\nSeccomp:");
  if (!line)
    return sr_error_layer(err, "seccomp", EPROTO,
                          "no Seccomp: line in /proc/self/status");
  line += strlen("\nSeccomp:");
  line += strspn(line, " \t");
  if (line[0] != '2' || (line[1] != '\n' && line[1] != '\0'))
    return sr_error_layer(err, "seccomp", EPROTO,
                          "/proc/self/status reports Seccomp: %.1s, not 2",
                          line);
  return 0;
}

/* seccomp(2) with prog; the listener's fd when flags ask for one. */
static long load_prog(const struct sock_filter *prog, unsigned short len,
                      unsigned long flags) {
  struct sock_fprog fp = {.len = len, .filter = (struct sock_filter *)prog};

  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &fp);
}

/* Listener and TSYNC together: TSYNC_ESRCH makes a thread that cannot be
 * synchronised an ESRCH, since the return value is the listener's fd
 * (Linux 5.7). */
#define SR_NOTIFY_FLAGS                                                        \
  (SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_NEW_LISTENER |              \
   SECCOMP_FILTER_FLAG_TSYNC_ESRCH)

bool sr_seccomp_notify_available(void) {
  uint32_t action = SECCOMP_RET_USER_NOTIF;

  if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
    return false;
  /* The kernel checks the flags before it reads the program: with none to
   * read, flags it knows and accepts together fail with EFAULT, others with
   * EINVAL.  Nothing is installed either way. */
  return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SR_NOTIFY_FLAGS, NULL) <
             0 &&
         errno == EFAULT;
}

int sr_seccomp_load(const struct sr_seccomp *f, int *listener, bool *fell_back,
                    struct sr_error *err) {
  long q;
  int r;

  *listener = -1;
  *fell_back = false;
  /* Without no_new_privs the kernel would demand CAP_SYS_ADMIN; with it
   * missing an earlier layer did not run, and the order is the contract. */
  r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
  if (r < 0)
    return sr_error_layer(err, "seccomp", errno, "PR_GET_NO_NEW_PRIVS");
  if (r != 1)
    return sr_error_layer(err, "seccomp", EPERM,
                          "no_new_privs is not set before seccomp");

  /* Loading the exported bytes ourselves means the kernel gets exactly
   * what sr_seccomp_digest() hashed. */
  if (f->notify) {
    q = load_prog(f->prog, f->len, SR_NOTIFY_FLAGS);
    /* EBUSY: a filter above us (skillrun inside a sandbox that intercepts
     * system calls itself) has the one listener a task may have. */
    if (q < 0 && errno == EBUSY) {
      *fell_back = true;
      q = load_prog(f->plain, f->len, SECCOMP_FILTER_FLAG_TSYNC);
    } else if (q >= 0) {
      *listener = (int)q;
      q = 0;
    }
  } else {
    q = load_prog(f->prog, f->len, SECCOMP_FILTER_FLAG_TSYNC);
  }
  if (q < 0)
    return sr_error_layer(err, "seccomp", errno,
                          "seccomp(SECCOMP_SET_MODE_FILTER)");
  /* TSYNC without a listener: a positive return is a thread that could not
   * be synced. */
  if (q > 0)
    return sr_error_layer(err, "seccomp", EAGAIN,
                          "seccomp TSYNC failed for thread %ld", q);
  r = verify_mode(err);
  if (r < 0)
    *listener = safe_close(*listener);
  return r;
}

const char *sr_seccomp_plain_digest(const struct sr_seccomp *f) {
  return f->notify ? f->plain_digest : f->digest;
}

char *sr_seccomp_syscall_name(int nr) {
  struct sr_error e = {0};

  if (nr < 0)
    return NULL;
  /* The build-time table, for the architecture it was made for. */
  if (&sr_seccomp_default_n_names && sr_seccomp_default_names &&
      &sr_seccomp_default_abi && sr_seccomp_default_abi == elf_abi()) {
    if (nr >= sr_seccomp_default_n_names || !sr_seccomp_default_names[nr])
      return NULL;
    return strdup(sr_seccomp_default_names[nr]);
  }
  if (sr_seccomp_lib_load(&e) < 0)
    return NULL;
  return scmp.seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
}

void sr_seccomp_free(struct sr_seccomp *f) {
  if (!f)
    return;
  free(f->prog);
  free(f->plain);
  free(f);
}

/* The native architecture as seccomp_data.arch names it; 0 when this file
 * does not know it (the refusals then match the number alone, and a
 * foreign architecture's call of the same number is refused with ENOSYS
 * rather than killed by the main program: refused all the same). */
#if defined(__x86_64__) && !defined(__ILP32__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && defined(__AARCH64EL__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define NATIVE_AUDIT_ARCH AUDIT_ARCH_RISCV64
#else
#define NATIVE_AUDIT_ARCH 0
#endif

/* A shared anonymous mapping, as mmap's flags ask for one: MAP_ANONYMOUS
 * and the type (flags & MAP_TYPE) MAP_SHARED (1) or MAP_SHARED_VALIDATE
 * (3), that is bit 0 set, bits 2 and 3 clear, bit 1 either way.  Every
 * other type is private (MAP_PRIVATE 2, MAP_DROPPABLE 8) or EINVAL.  The
 * kernel reads the flags as an unsigned long but decides both from the
 * low 32 bits, which are all the filter compares. */
#define SR_SHARED_ANON_MASK                                                    \
  ((uint32_t)(MAP_ANONYMOUS | (MAP_TYPE & ~MAP_PRIVATE)))
#define SR_SHARED_ANON ((uint32_t)(MAP_ANONYMOUS | MAP_SHARED))
_Static_assert((MAP_SHARED_VALIDATE & SR_SHARED_ANON_MASK) == MAP_SHARED,
               "MAP_SHARED_VALIDATE is a shared type");
_Static_assert(((MAP_ANONYMOUS | MAP_PRIVATE) & SR_SHARED_ANON_MASK) !=
                   SR_SHARED_ANON,
               "MAP_PRIVATE is not");

/* What a sampled run refuses (sr_seccomp_refuse_unsampled), where this
 * architecture has it: by number alone, or (shared_anon) only when the
 * flags, the fourth argument, ask for a shared anonymous mapping.  i386's
 * mmap is the old call whose arguments are in memory, where the filter
 * cannot read them: refused whole (glibc, musl and Go map with mmap2
 * there).  On s390 it is the only mmap and its arguments are in memory
 * too: left alone, and not named.  semget: an array of SEMMSL semaphores
 * is 2 MiB of kernel memory, held by the IPC namespace with no mapping,
 * descriptor or process, SEMMNI of them (61 GiB); a skill held 512 MiB
 * that way under a 64 MiB limit, memory_peak 344 KB.  A cgroup charges
 * it.  semop and semctl need an array, which only semget makes.  msgget
 * likewise: the default allowlist leaves it out, but a profile's
 * seccomp-allow may let it in, and each queued message is kernel memory
 * (200 queues of empty messages held 229 MB under a 64 MiB limit);
 * msgsnd needs a queue, which only msgget makes. */
static const struct {
  const char *name;
  uint32_t nr;
  bool shared_anon;
} unsampled[] = {
#ifdef SYS_memfd_create
    {"memfd_create", SYS_memfd_create, false},
#endif
#ifdef SYS_shmget
    {"shmget", SYS_shmget, false},
#endif
#ifdef SYS_semget
    {"semget", SYS_semget, false},
#endif
#ifdef SYS_msgget
    {"msgget", SYS_msgget, false},
#endif
#if defined(SYS_mmap) && defined(__i386__)
    {"mmap", SYS_mmap, false},
#elif defined(SYS_mmap) && !defined(__s390__)
    {"mmap", SYS_mmap, true},
#endif
#ifdef SYS_mmap2
    {"mmap2", SYS_mmap2, true},
#endif
};

const char *sr_seccomp_unsampled_call(size_t i) {
  return i < SR_ARRAY_SIZE(unsampled) ? unsampled[i].name : NULL;
}

/* The offset of the low 32 bits of argument `i` in seccomp_data. */
static uint32_t arg_low(unsigned i) {
  return (uint32_t)(offsetof(struct seccomp_data, args) + i * sizeof(uint64_t)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                    + sizeof(uint32_t)
#endif
  );
}

int sr_seccomp_refuse_unsampled(struct sr_seccomp *f, struct sr_error *err) {
  /* ENOSYS, as a kernel without them: programs fall back to a file in
   * /dev/shm or /tmp, which the sampler counts. */
  const size_t n_calls = SR_ARRAY_SIZE(unsampled);
  const struct sock_filter *old = f->notify ? f->plain : f->prog;
  size_t n_anon = 0, head, flags_at, ret_at, out_at, total;
  struct sock_filter *p;
  size_t n = 0;

  if (f->unsampled_len)
    return 0;
  for (size_t i = 0; i < n_calls; i++)
    n_anon += unsampled[i].shared_anon;
  /* A prefix in front of the linked program (tty, then main): a call it
   * does not refuse falls through to the tty part's first instruction
   * (libseccomp's programs load what they test themselves).  The tty
   * part's calls (ioctl, prctl, setsockopt) and these are distinct, so being
   * before the tty part rather than after it changes no answer, and in front it
   * need not know where the build-time program's tty part ends.  Part of the
   * one program, its refusals go to the listener too (to_notify) and the
   * digests and the instruction count cover it.
   *
   *   [ld arch; jeq native, else out]
   *   ld nr
   *   jeq each call refused by number -> ret      (the calls by number
   *   jeq each mmap -> flags                        first, then the mmaps;
   *   ja out                                        in table order)
   *   flags: ld the flags' low word; and mask; jeq shared anonymous -> ret
   *   ja out
   *   ret: ret ENOSYS
   *   out: the linked program */
  head = NATIVE_AUDIT_ARCH ? 3 : 1;
  flags_at = head + n_calls + 1;
  ret_at = flags_at + (n_anon ? 4 : 0);
  out_at = ret_at + 1;
  total = out_at + f->len;
  if (total > BPF_MAXINSNS)
    return sr_error_layer(err, "seccomp", E2BIG,
                          "the filter has %zu instructions (at most %d)", total,
                          BPF_MAXINSNS);
  p = calloc(total, sizeof(*p));
  if (!p)
    return sr_error_layer(err, "seccomp", ENOMEM, "seccomp filter");
  if (NATIVE_AUDIT_ARCH) {
    /* Another architecture: not this prefix's business, the main
     * program's (kill). */
    p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                          offsetof(struct seccomp_data, arch));
    p[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                        NATIVE_AUDIT_ARCH, 0,
                                        (uint8_t)(out_at - n - 1));
    n++;
  }
  p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                        offsetof(struct seccomp_data, nr));
  /* The compares: each jump is shorter than the prefix, which is far
   * below the 255 a jump can reach. */
  for (int anon = 0; anon <= 1; anon++)
    for (size_t i = 0; i < n_calls; i++) {
      if (unsampled[i].shared_anon != anon)
        continue;
      p[n] = (struct sock_filter)BPF_JUMP(
          BPF_JMP | BPF_JEQ | BPF_K, unsampled[i].nr,
          (uint8_t)((anon ? flags_at : ret_at) - n - 1), 0);
      n++;
    }
  p[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
                                      (uint32_t)(out_at - n - 1), 0, 0);
  n++;
  if (n_anon) {
    p[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_low(3));
    p[n++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K,
                                          SR_SHARED_ANON_MASK);
    p[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                          SR_SHARED_ANON, 1, 0);
    p[n] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
                                        (uint32_t)(out_at - n - 1), 0, 0);
    n++;
  }
  p[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SR_RET_NOSYS);
  memcpy(p + n, old, f->len * sizeof(*p));
  return set_programs(f, p, (unsigned short)(n + f->len), (unsigned short)n,
                      err);
}

int sr_seccomp_refusal_errno(const struct sr_seccomp *f,
                             const struct seccomp_data *d) {
  /* As the prefix matches: a notification of one of these calls (with
   * such flags, for the mmaps) on this architecture comes from it, since
   * it runs first; the same call refused by the main program (a profile's
   * seccomp-deny) with other arguments gets that program's EPERM. */
  if (f && f->unsampled_len &&
      (!NATIVE_AUDIT_ARCH || d->arch == NATIVE_AUDIT_ARCH))
    for (size_t i = 0; i < SR_ARRAY_SIZE(unsampled); i++)
      if (d->nr >= 0 && (uint32_t)d->nr == unsampled[i].nr &&
          (!unsampled[i].shared_anon ||
           ((uint32_t)d->args[3] & SR_SHARED_ANON_MASK) == SR_SHARED_ANON))
        return ENOSYS;
  return EPERM;
}

#ifdef SR_SECCOMP_GENERATOR
/* The highest system call number the name table covers: above every
 * native number of the architectures skillrun builds for (x86_64 and
 * aarch64 are below 500). */
#define SR_NAMES_MAX 1024

/* The native architecture's names by number, as a C array; returns how
 * many entries it printed. */
static unsigned print_names(void) {
  unsigned n = 0;

  for (int nr = 0; nr < SR_NAMES_MAX; nr++) {
    char *name = scmp.seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
    if (name) {
      n = (unsigned)nr + 1;
      free(name);
    }
  }
  printf("const uint16_t sr_seccomp_default_n_names = %u;\n"
         "const char *const sr_seccomp_default_names[%u] = {\n",
         n, n ? n : 1);
  for (unsigned nr = 0; nr < n; nr++) {
    char *name =
        scmp.seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, (int)nr);
    /* Printed as they are: only names that need no escaping. */
    bool plain = name && !name[strspn(name, "abcdefghijklmnopqrstuvwxyz"
                                            "0123456789_")];

    if (plain)
      printf("    [%u] = \"%s\",\n", nr, name);
    else if (name)
      fprintf(stderr,
              "seccomp-gen: warning: system call %u has an odd "
              "name, left out\n",
              nr);
    free(name);
  }
  printf("};\n");
  return n;
}

/*
 * Build-time generator: prints src/seccomp-default.c, the default filter's
 * program (plain: refusals answer EPERM; the listener's variant is made
 * from it at run time) and the names of the native system calls.  If
 * libseccomp cannot build the filter on the build machine, it prints empty
 * tables and a warning; the binary then builds the filter at run time,
 * where a failure stops the run.
 */
int main(void) {
  struct sr_policy p;
  struct sr_error err = {0};
  struct sr_seccomp *f = NULL;

  memset(&p, 0, sizeof(p));
  printf("/* Generated by src/seccomp-gen from src/seccomp.c; do not edit. */\n"
         "#include <linux/filter.h>\n#include <stdint.h>\n\n");
  if (sr_seccomp_build(&p, false, &f, &err) < 0) {
    fprintf(stderr,
            "seccomp-gen: warning: %s; the filter will be built at run "
            "time\n",
            err.msg);
    printf("const uint32_t sr_seccomp_default_arch = 0;\n"
           "const uint32_t sr_seccomp_default_abi = 0;\n"
           "const uint16_t sr_seccomp_default_len = 0;\n"
           "const struct sock_filter sr_seccomp_default_insns[1];\n"
           "const uint16_t sr_seccomp_default_n_names = 0;\n"
           "const char *const sr_seccomp_default_names[1];\n");
    return ferror(stdout) ? 1 : 0;
  }
  printf("/* %s, %u instructions */\n", sr_seccomp_digest(f),
         sr_seccomp_insns(f));
  printf("const uint32_t sr_seccomp_default_arch = 0x%08xu;\n",
         scmp.seccomp_arch_native());
  printf("const uint32_t sr_seccomp_default_abi = 0x%08xu;\n", elf_abi());
  printf("const uint16_t sr_seccomp_default_len = %u;\n", f->len);
  printf("const struct sock_filter sr_seccomp_default_insns[%u] = {\n", f->len);
  for (unsigned k = 0; k < f->len; k++)
    printf("    {0x%04x, %u, %u, 0x%08xu},\n", f->prog[k].code, f->prog[k].jt,
           f->prog[k].jf, f->prog[k].k);
  printf("};\n");
  (void)print_names();
  sr_seccomp_free(f);
  return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
#endif
