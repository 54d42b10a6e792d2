/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <magic.h>
/* libseccomp's; our own "seccomp.h" is reached with -iquote only. */
#include <seccomp.h>

#include "dlib.h"
#include "fdutil.h"
#include "magic.h"

#define SR_MAGIC_FUNCTIONS(X)                                                  \
  X(magic_open)                                                                \
  X(magic_load)                                                                \
  X(magic_buffer)                                                              \
  X(magic_setflags)                                                            \
  X(magic_setparam)                                                            \
  X(magic_error)                                                               \
  X(magic_version)
static struct { SR_MAGIC_FUNCTIONS(SR_DLIB_MEMBER) } mg;

SR_DLOPEN_NOTE(sr_magic_note, "magic",
               "the content type of --input files a skill declares types for",
               SR_LIBMAGIC_SONAME);

SR_DLIB_LOADER(load, mg, SR_MAGIC_FUNCTIONS, SR_LIBMAGIC_SONAME)

/* Never look inside compressed data: that would start helper processes
 * and read more than the buffer says. */
#define BASE_FLAGS (MAGIC_NO_CHECK_COMPRESS | MAGIC_NO_CHECK_TAR)

/* The cookie, opened and its database loaded once. */
static magic_t cookie(const char *needed_for, struct sr_error *err) {
  static magic_t m;
  size_t bytes = SR_MAGIC_BYTES;

  if (m)
    return m;
  if (load(needed_for, err) < 0)
    return NULL;
  m = mg.magic_open(BASE_FLAGS);
  if (!m) {
    sr_error_set(err, SR_EXIT_FAILED, errno, "library_unavailable",
                 "%s: magic_open failed, needed for %s", SR_LIBMAGIC_SONAME,
                 needed_for);
    return NULL;
  }
  /* The default database (a file of the system's, not the caller's). */
  if (mg.magic_load(m, NULL) != 0 ||
      mg.magic_setparam(m, MAGIC_PARAM_BYTES_MAX, &bytes) != 0) {
    const char *e = mg.magic_error(m);
    sr_error_set(err, SR_EXIT_FAILED, 0, "library_unavailable",
                 "%s cannot load its database (%s), needed for %s: install "
                 "it",
                 SR_LIBMAGIC_SONAME, e ? e : "unknown error", needed_for);
    /* The cookie stays unused: the next call fails the same way. */
    return NULL;
  }
  return m;
}

/*
 * libmagic parses the caller's bytes, and has had memory errors on crafted
 * ones (CVE-2019-18218, cdf_read_property_info).  So it parses them in a
 * child of its own, as file(1) runs it under seccomp: the child keeps one
 * descriptor (its socket to the supervisor, moved to TYPER_FD), dies with
 * the supervisor, is bounded in memory and CPU time, and may make no
 * system call but reading and writing that socket and those magic_buffer
 * needs on a buffer (strace of file-5.44 on some 600 files of 60 types:
 * brk, mmap, munmap); every other call fails with EPERM, which libmagic
 * survives as it survives a failed open.  What the child answers is
 * checked like any other input.  One child types all of a run's inputs
 * (struct sr_magic_typer): a new one for each would fault in libmagic's
 * database again each time, some 20 ms here.
 */
#define TYPER_FD 3
/* Wall clock for one input, CPU time for them all, and the memory it may
 * take beyond what it inherits from the supervisor (data_in_use). */
#define CHILD_TIMEOUT_MS 10000
#define CHILD_CPU_S 5
#define CHILD_DATA_BYTES (256UL << 20)

/* What the supervisor sends: the length, then the bytes. */
struct request {
  uint32_t len; /* at most SR_MAGIC_BYTES */
};

/* What the child answers, in one write. */
struct answer {
  int32_t status; /* ANSWER_TYPED, ANSWER_LIBMAGIC or ANSWER_SETUP */
  int32_t errnum; /* ANSWER_SETUP: the failed call's errno */
  struct sr_magic_type t;
  char msg[200]; /* libmagic's error, or the step that failed */
};
enum { ANSWER_TYPED, ANSWER_LIBMAGIC, ANSWER_SETUP };

#define SR_MAGIC_SCMP_FUNCTIONS(X)                                             \
  X(seccomp_init)                                                              \
  X(seccomp_release)                                                           \
  X(seccomp_attr_set)                                                          \
  X(seccomp_rule_add)                                                          \
  X(seccomp_export_bpf)
static struct { SR_MAGIC_SCMP_FUNCTIONS(SR_DLIB_MEMBER) } scmp;

SR_DLOPEN_NOTE(sr_magic_scmp_note, "magic",
               "the seccomp filter libmagic runs under for --input types",
               SR_LIBSECCOMP_SONAME);

SR_DLIB_LOADER(load_scmp, scmp, SR_MAGIC_SCMP_FUNCTIONS, SR_LIBSECCOMP_SONAME)

static void ctx_releasep(scmp_filter_ctx *c) {
  if (*c)
    scmp.seccomp_release(*c);
}
#define _cleanup_ctx_ _cleanup_(ctx_releasep)

/* The child's filter: the default action EPERM, so that a call libmagic
 * can do without (the time zone of a date it prints) fails rather than
 * killing it; no mapping may be executable. */
static int build_filter(struct sock_fprog *out, struct sr_error *err) {
  static const int plain[] = {SCMP_SYS(exit),   SCMP_SYS(exit_group),
                              SCMP_SYS(brk),    SCMP_SYS(munmap),
                              SCMP_SYS(mremap), SCMP_SYS(madvise),
                              SCMP_SYS(futex),  SCMP_SYS(rt_sigreturn)};
  const struct scmp_arg_cmp on_socket = SCMP_A0(SCMP_CMP_EQ, TYPER_FD);
  const struct scmp_arg_cmp no_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
  _cleanup_ctx_ scmp_filter_ctx ctx = NULL;
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *bpf = NULL;
  const char *step = "seccomp_init";
  size_t n = 0;
  int r = -ENOMEM;

  ctx = scmp.seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (ctx) {
    step = "seccomp rules";
    r = scmp.seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
                              SCMP_ACT_KILL_PROCESS);
  }
  for (size_t i = 0; r >= 0 && i < SR_ARRAY_SIZE(plain); i++)
    r = scmp.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain[i], 0);
  if (r >= 0)
    r = scmp.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(read), 1,
                              on_socket);
  if (r >= 0)
    r = scmp.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
                              on_socket);
  if (r >= 0)
    r = scmp.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1, no_exec);
  if (r >= 0)
    r = scmp.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
                              no_exec);
  if (r >= 0) {
    /* libseccomp 2.5 exports only to an fd; a memfd keeps it off disk. */
    step = "seccomp_export_bpf";
    fd = memfd_create("skillrun-magic-seccomp", MFD_CLOEXEC);
    r = fd < 0 ? -errno : scmp.seccomp_export_bpf(ctx, fd);
  }
  if (r >= 0)
    r = lseek(fd, 0, SEEK_SET) < 0 ? -errno : 0;
  if (r >= 0)
    r = sr_read_fd(fd, BPF_MAXINSNS * sizeof(struct sock_filter), &bpf, &n);
  if (r >= 0 && (n == 0 || n % sizeof(struct sock_filter) != 0))
    r = -EPROTO;
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "inputs",
                        "cannot build the seccomp filter libmagic runs under "
                        "(%s)",
                        step);
  out->len = (unsigned short)(n / sizeof(struct sock_filter));
  out->filter = (struct sock_filter *)TAKE_PTR(bpf);
  return 0;
}

/* The filter, built once (with libseccomp, opened on first use). */
static const struct sock_fprog *filter(const char *needed_for,
                                       struct sr_error *err) {
  static struct sock_fprog prog;

  if (prog.filter)
    return &prog;
  if (load_scmp(needed_for, err) < 0 || build_filter(&prog, err) < 0)
    return NULL;
  return &prog;
}

/* One answer of libmagic under `flags`, copied into dst; in the child. */
static int ask(magic_t m, int flags, const void *buf, size_t len, char *dst,
               size_t dst_len, struct answer *a) {
  const char *s;

  if (mg.magic_setflags(m, BASE_FLAGS | flags) < 0) {
    snprintf(a->msg, sizeof(a->msg), "flags not supported");
    return -EINVAL;
  }
  s = mg.magic_buffer(m, buf, len);
  if (!s) {
    const char *e = mg.magic_error(m);
    snprintf(a->msg, sizeof(a->msg), "%s", e ? e : "unknown error");
    return -EINVAL;
  }
  snprintf(dst, dst_len, "%s", s);
  return 0;
}

/* The child's steps before libmagic sees a byte; "" or the failed one. */
/* The data (private writable memory, RLIMIT_DATA's measure) the child
 * has from the supervisor already: /proc/self/status's VmData.  A
 * sanitizer's build reserves terabytes of it.  0 when unknown. */
static rlim_t data_in_use(void) {
  char buf[4096], *end;
  const char *p;
  unsigned long long kib;
  size_t len;

  if (sr_read_file_into(AT_FDCWD, "/proc/self/status", buf, sizeof(buf), &len) <
          0 ||
      !(p = strstr(buf, "\nVmData:")))
    return 0;
  errno = 0;
  kib = strtoull(p + strlen("\nVmData:"), &end, 10);
  if (errno || end == p + strlen("\nVmData:") ||
      kib > (RLIM_INFINITY - CHILD_DATA_BYTES) / 1024)
    return 0;
  return (rlim_t)kib * 1024;
}

static const char *confine(pid_t parent, const struct sock_fprog *prog) {
  struct rlimit data;
  const struct rlimit cpu = {CHILD_CPU_S, CHILD_CPU_S}; /* then SIGKILL */
  const struct rlimit none = {0, 0};
  const int keep = TYPER_FD;

  /* fds 0-2 too: the supervisor's stdout is the audit stream. */
  if (sr_close_all_fds_except(0, &keep, 1) < 0)
    return "close_range";
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    return "PR_SET_PDEATHSIG";
  if (getppid() != parent)
    _exit(SR_EXIT_FAILED); /* the supervisor is gone already */
  /* No core dump of the supervisor's memory, no ptrace by its user. */
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return "PR_SET_DUMPABLE";
  /* CHILD_DATA_BYTES more than it has, within the supervisor's limit. */
  if (getrlimit(RLIMIT_DATA, &data) < 0)
    return "getrlimit";
  data.rlim_cur = data_in_use() + CHILD_DATA_BYTES;
  if (data.rlim_cur > data.rlim_max)
    data.rlim_cur = data.rlim_max;
  data.rlim_max = data.rlim_cur;
  if (setrlimit(RLIMIT_CORE, &none) < 0 ||
      setrlimit(RLIMIT_NOFILE, &none) < 0 ||
      setrlimit(RLIMIT_NPROC, &none) < 0 || setrlimit(RLIMIT_DATA, &data) < 0 ||
      setrlimit(RLIMIT_CPU, &cpu) < 0)
    return "setrlimit";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return "PR_SET_NO_NEW_PRIVS";
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
    return "seccomp";
  return "";
}

/* len bytes from fd into buf, in the child: 0, 1 at EOF before the first
 * byte, -1 on any other failure. */
static int read_full(int fd, void *buf, size_t len) {
  for (size_t got = 0; got < len;) {
    ssize_t n = read(fd, (char *)buf + got, len - got);

    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return n == 0 && got == 0 ? 1 : -1;
    got += (size_t)n;
  }
  return 0;
}

/* The child: answers one request after another until the supervisor
 * closes its end. */
_Noreturn static void typer_main(magic_t m, int fd, pid_t parent,
                                 const struct sock_fprog *prog) {
  unsigned char *buf = malloc(SR_MAGIC_BYTES);
  const char *failed;
  struct answer a;

  failed = fd == TYPER_FD || dup2(fd, TYPER_FD) >= 0 ? confine(parent, prog)
                                                     : "dup2";
  if (!buf && !failed[0])
    failed = "malloc";
  for (;;) {
    struct request q;

    memset(&a, 0, sizeof(a));
    if (failed[0]) {
      a.status = ANSWER_SETUP;
      a.errnum = errno;
      snprintf(a.msg, sizeof(a.msg), "%s", failed);
      /* fd itself where the move to TYPER_FD failed (no filter then); a
       * failed write is a short answer to the parent. */
      (void)!write(strcmp(failed, "dup2") ? TYPER_FD : fd, &a, sizeof(a));
      _exit(0);
    }
    if (read_full(TYPER_FD, &q, sizeof(q)) != 0 || q.len > SR_MAGIC_BYTES ||
        read_full(TYPER_FD, buf, q.len) != 0)
      _exit(0); /* the supervisor is done (or speaks nonsense) */
    if (ask(m, MAGIC_MIME_TYPE, buf, q.len, a.t.mime, sizeof(a.t.mime), &a) <
            0 ||
        ask(m, MAGIC_EXTENSION, buf, q.len, a.t.exts, sizeof(a.t.exts), &a) < 0)
      a.status = ANSWER_LIBMAGIC;
    if (sr_write_all(TYPER_FD, &a, sizeof(a)) < 0)
      _exit(0);
  }
}

/* The longest the wait for an answer goes without a look for a pending
 * cancellation signal (blocked while inputs are staged). */
#define CANCEL_SLICE_MS 100

/* Reads one answer: 0, -EPIPE at EOF before a whole one, -ETIMEDOUT at
 * end_ms, -ECANCELED once a cancellation signal is pending (a libmagic
 * that hangs must not hold up a cancelled run), or -errno. */
static int read_answer(int fd, struct answer *a, uint64_t end_ms) {
  size_t got = 0;

  while (got < sizeof(*a)) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    uint64_t now = sr_now_mono_ms(), slice;
    ssize_t n;
    int q;

    if (sr_cancel_pending())
      return -ECANCELED;
    if (now >= end_ms)
      return -ETIMEDOUT;
    slice = end_ms - now < CANCEL_SLICE_MS ? end_ms - now : CANCEL_SLICE_MS;
    q = poll(&p, 1, (int)slice);
    if (q < 0 && errno == EINTR)
      continue;
    if (q < 0)
      return -errno;
    if (q == 0)
      continue;
    n = read(fd, (char *)a + got, sizeof(*a) - got);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n < 0)
      return -errno;
    if (n == 0)
      return -EPIPE;
    got += (size_t)n;
  }
  return 0;
}

/* A NUL-terminated string of printable ASCII in s[0..size). */
static bool plain_string(const char *s, size_t size) {
  const char *end = memchr(s, '\0', size);

  if (!end)
    return false;
  for (; s < end; s++)
    if (*s < 0x20 || *s > 0x7e)
      return false;
  return true;
}

/* The child's text for a message: printable, bounded. */
static const char *printable(char *s, size_t size) {
  s[size - 1] = '\0';
  for (char *c = s; *c; c++)
    if (*c < 0x20 || *c > 0x7e)
      *c = '?';
  return s;
}

void sr_magic_typer_done(struct sr_magic_typer *t) {
  t->fd = safe_close(t->fd);
  if (t->pid > 0) {
    (void)kill(t->pid, SIGKILL);
    while (waitpid(t->pid, &t->status, 0) < 0 && errno == EINTR)
      ;
  }
  t->pid = 0;
}

static int typer_start(struct sr_magic_typer *t, magic_t m,
                       const struct sock_fprog *prog, struct sr_error *err) {
  const pid_t parent = getpid();
  int fds[2];

  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "inputs",
                        "cannot type an input: socketpair");
  t->pid = fork();
  if (t->pid == 0) {
    safe_close(fds[0]);
    typer_main(m, fds[1], parent, prog);
  }
  safe_close(fds[1]);
  t->fd = fds[0];
  if (t->pid < 0) {
    t->pid = 0;
    sr_magic_typer_done(t);
    return sr_error_set(err, SR_EXIT_FAILED, errno, "inputs",
                        "cannot type an input: fork");
  }
  return 0;
}

/* A child whose socket reached EOF has exited or is exiting (it cannot
 * close the socket under its filter): reaped here, within 1 s, so that
 * its wait status is its own (the SIGKILL of its CPU-time limit), not that
 * of the SIGKILL sr_magic_typer_done sends to a child still there. */
static void reap_gone(struct sr_magic_typer *t) {
  for (int i = 0; t->pid > 0 && i < 100; i++) {
    pid_t w = waitpid(t->pid, &t->status, WNOHANG);

    if (w == t->pid)
      t->pid = 0;
    else if (w < 0 && errno != EINTR)
      return;
    else if (w == 0)
      (void)usleep(10000);
  }
}

/* The request sent and its answer read, within CHILD_TIMEOUT_MS; "" or
 * why not (the child then ended). */
static const char *exchange(struct sr_magic_typer *t, const void *buf,
                            size_t len, struct answer *a, char why[64]) {
  const struct request q = {.len = (uint32_t)len};
  uint64_t budget = CHILD_TIMEOUT_MS;
  const uint64_t end = sr_now_mono_ms() + CHILD_TIMEOUT_MS;
  mode_t type = S_IFSOCK;
  int r;

  r = sr_write_bounded_cancellable(t->fd, &type, &q, sizeof(q), &budget);
  if (r >= 0)
    r = sr_write_bounded_cancellable(t->fd, &type, buf, len, &budget);
  if (r >= 0)
    r = read_answer(t->fd, a, end);
  if (r >= 0 && a->status >= ANSWER_TYPED && a->status <= ANSWER_SETUP)
    return "";
  /* The child's own end, not sr_magic_typer_done's SIGKILL, in the
   * message. */
  if (r == -EPIPE)
    reap_gone(t);
  sr_magic_typer_done(t);
  if (r == -ECANCELED)
    snprintf(why, 64, "cancelled");
  else if (r == -ETIMEDOUT)
    snprintf(why, 64, "no answer within %d s", CHILD_TIMEOUT_MS / 1000);
  else if (r == -EPIPE && WIFSIGNALED(t->status) &&
           WTERMSIG(t->status) == SIGKILL)
    snprintf(why, 64,
             "killed by signal %d (its %d s of CPU time, or the OOM "
             "killer)",
             SIGKILL, CHILD_CPU_S);
  else if (WIFSIGNALED(t->status) && WTERMSIG(t->status) != SIGKILL)
    snprintf(why, 64, "killed by signal %d", WTERMSIG(t->status));
  else
    snprintf(why, 64, "a malformed answer");
  return why;
}

int sr_magic_type_of(struct sr_magic_typer *t, const void *buf, size_t len,
                     const char *needed_for, struct sr_magic_type *out,
                     struct sr_error *err) {
  magic_t m = cookie(needed_for, err);
  const struct sock_fprog *prog = m ? filter(needed_for, err) : NULL;
  struct answer a;
  char why[64];
  int r;

  if (!m || !prog)
    return -ENOENT;
  if (len > SR_MAGIC_BYTES)
    len = SR_MAGIC_BYTES;
  if (t->fd < 0) {
    r = typer_start(t, m, prog, err);
    if (r < 0)
      return r;
  }
  memset(&a, 0, sizeof(a));
  if (exchange(t, buf, len, &a, why)[0]) {
    /* A cancellation, not libmagic's failure: the run reports it as one
     * (skillrun(1) EXIT STATUS). */
    if (!strcmp(why, "cancelled"))
      return sr_error_set(err, SR_EXIT_FAILED, ECANCELED, "cancelled",
                          "cancelled while %s typed an input",
                          SR_LIBMAGIC_SONAME);
    return sr_error_set(err, SR_EXIT_FAILED, 0, "inputs",
                        "%s failed or was stopped on an input (%s)",
                        SR_LIBMAGIC_SONAME, why);
  }
  if (a.status == ANSWER_SETUP)
    return sr_error_set(err, SR_EXIT_FAILED, a.errnum, "inputs",
                        "cannot confine %s to type an input: %s",
                        SR_LIBMAGIC_SONAME, printable(a.msg, sizeof(a.msg)));
  if (a.status == ANSWER_LIBMAGIC)
    return sr_error_set(err, SR_EXIT_FAILED, 0, "inputs",
                        "%s cannot type an input: %s", SR_LIBMAGIC_SONAME,
                        printable(a.msg, sizeof(a.msg)));
  if (!plain_string(a.t.mime, sizeof(a.t.mime)) ||
      !plain_string(a.t.exts, sizeof(a.t.exts))) {
    sr_magic_typer_done(t);
    return sr_error_set(err, SR_EXIT_FAILED, 0, "inputs",
                        "%s failed or was stopped on an input (a malformed "
                        "answer)",
                        SR_LIBMAGIC_SONAME);
  }
  /* "???": libmagic knows no extension for the format. */
  if (!strcmp(a.t.exts, "???"))
    a.t.exts[0] = '\0';
  *out = a.t;
  return 0;
}

int sr_magic_lib_version(void) {
  struct sr_error e = {0};

  return load("--version", &e) == 0 ? mg.magic_version() : -1;
}
