// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * faultinject.so: an LD_PRELOAD shim that makes the Nth call of one libc
 * function fail with a chosen errno, in the first process that loads it
 * only (skillrun's supervisor; its forks and the sandbox pass through).
 *
 *   SKILLRUN_FI_FUNC   the function: write, pwrite, writev, read, openat
 *                      (open and openat), mkdirat (mkdir and mkdirat),
 *                      fstatfs, ftruncate, fallocate, linkat, renameat
 *                      (rename, renameat, renameat2), unlinkat (unlink,
 *                      unlinkat, rmdir), fsync, clone3
 *                      (syscall() with SYS_clone3 or SYS_clone); malloc
 *                      (malloc, calloc, realloc: NULL) in the shim built
 *                      with -DFI_MALLOC only, faultinject-malloc.so
 *   SKILLRUN_FI_N      which call fails (1 = the first); 0 counts only
 *   SKILLRUN_FI_TIMES  how many calls fail from the Nth on (default 1)
 *   SKILLRUN_FI_ERRNO  the errno, a number (default 5, EIO; ENOMEM for
 *                      malloc)
 *   SKILLRUN_FI_MATCH  count only the calls whose path (the new name of
 *                      linkat and rename) contains this string: open*,
 *                      mkdir*, linkat, rename*, unlink*, rmdir (others are
 *                      not counted)
 *   SKILLRUN_FI_AFTER  count nothing until a path containing this string
 *                      has been opened (open*): the calls of one phase
 *   SKILLRUN_FI_BT     set: print the failing call's backtrace on stderr
 *                      (addresses: addr2line -f -e skillrun ADDR-BASE)
 *   SKILLRUN_FI_COUNT  a file the shim keeps the number of calls seen in
 *                      (8 bytes, mapped shared: the count is there
 *                      whatever way the process ends, _exit included)
 *   SKILLRUN_FI_FAILED set, with FI_COUNT, to record in the count file's
 *                      second word whether the Nth call happened
 *
 * A sweep runs skillrun with N = 1, 2, ... up to the count of a clean run.
 * Only calls skillrun makes through the PLT are seen: glibc's own (stdio,
 * getpwuid) are not; _FORTIFY_SOURCE's __read_chk and __open_2 are.  With
 * an ASan build, set ASAN_OPTIONS=verify_asan_link_order=0 (and leave
 * faultinject-malloc.so alone: ASan's allocator must serve every malloc).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static pid_t fi_pid;
static char fi_func[32];
static unsigned long fi_n;
static unsigned long fi_times = 1;
static int fi_errno = EIO;
static unsigned long fi_local[2];
static volatile unsigned long *fi_count = fi_local;
static int fi_ready;
static char fi_match[256];
static char fi_after[256];
static int fi_armed = 1;
static int fi_bt;

/* SKILLRUN_FI_BT: where a crash happened, too. */
static void fi_crash(int sig) {
  void *frames[32];

  backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void fi_init(void) {
  const char *f = getenv("SKILLRUN_FI_FUNC");
  const char *n = getenv("SKILLRUN_FI_N");
  const char *e = getenv("SKILLRUN_FI_ERRNO");
  const char *c = getenv("SKILLRUN_FI_COUNT");
  const char *m = getenv("SKILLRUN_FI_MATCH");
  const char *t = getenv("SKILLRUN_FI_TIMES");
  const char *a = getenv("SKILLRUN_FI_AFTER");
  void *frames[1];

  fi_bt = getenv("SKILLRUN_FI_BT") != NULL;
  if (fi_bt) {
    (void)backtrace(frames, 1); /* loads libgcc_s now, not when it fails */
    signal(SIGSEGV, fi_crash);
  }

  if (!f)
    return;
  snprintf(fi_func, sizeof(fi_func), "%s", f);
  fi_n = n ? strtoul(n, NULL, 10) : 0;
  if (a && a[0]) {
    snprintf(fi_after, sizeof(fi_after), "%s", a);
    fi_armed = 0;
  }
  if (t)
    fi_times = strtoul(t, NULL, 10);
  if (m)
    snprintf(fi_match, sizeof(fi_match), "%s", m);
  if (strcmp(fi_func, "malloc") == 0)
    fi_errno = ENOMEM;
  if (e)
    fi_errno = atoi(e);
  if (c) {
    int fd = open(c, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) {
      if (ftruncate(fd, 2 * sizeof(unsigned long)) == 0) {
        void *m = mmap(NULL, 2 * sizeof(unsigned long), PROT_READ | PROT_WRITE,
                       MAP_SHARED, fd, 0);
        if (m != MAP_FAILED)
          fi_count = m;
      }
      close(fd);
    }
  }
  fi_count[0] = 0;
  fi_count[1] = 0;
  fi_pid = getpid();
  fi_ready = 1;
}

/* 1 when this call of FUNC (on path, NULL for none) is the one to fail. */
static int fi_hit_path(const char *func, const char *path) {
  if (!fi_ready || !fi_armed || strcmp(func, fi_func) != 0)
    return 0;
  if (fi_match[0] && (!path || !strstr(path, fi_match)))
    return 0;
  if (getpid() != fi_pid)
    return 0;
  unsigned long k = __atomic_add_fetch(&fi_count[0], 1, __ATOMIC_SEQ_CST);
  if (fi_n && k >= fi_n && k - fi_n < fi_times) {
    fi_count[1] = 1;
    if (fi_bt) {
      void *frames[32];
      backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
    }
    return 1;
  }
  return 0;
}

/* An open of path: arms the counting when it names SKILLRUN_FI_AFTER. */
static void fi_arm(const char *path) {
  if (fi_ready && !fi_armed && path && strstr(path, fi_after) &&
      getpid() == fi_pid)
    fi_armed = 1;
}

#define REAL(name, ret, ...)                                                   \
  static ret (*real_##name)(__VA_ARGS__);                                      \
  if (!real_##name)                                                            \
  real_##name = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name)

#define FAIL(func, val) FAIL_PATH(func, NULL, val)
#define FAIL_PATH(func, path, val)                                             \
  do {                                                                         \
    if (fi_hit_path(func, path)) {                                             \
      errno = fi_errno;                                                        \
      return val;                                                              \
    }                                                                          \
  } while (0)

ssize_t write(int fd, const void *buf, size_t n) {
  REAL(write, ssize_t, int, const void *, size_t);
  FAIL("write", -1);
  return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite, ssize_t, int, const void *, size_t, off_t);
  FAIL("pwrite", -1);
  return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
  REAL(pwrite64, ssize_t, int, const void *, size_t, off_t);
  FAIL("pwrite", -1);
  return real_pwrite64(fd, buf, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  REAL(writev, ssize_t, int, const struct iovec *, int);
  FAIL("writev", -1);
  return real_writev(fd, iov, cnt);
}

ssize_t read(int fd, void *buf, size_t n) {
  REAL(read, ssize_t, int, void *, size_t);
  FAIL("read", -1);
  return real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off) {
  REAL(pread, ssize_t, int, void *, size_t, off_t);
  FAIL("read", -1);
  return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
  REAL(pread64, ssize_t, int, void *, size_t, off_t);
  FAIL("read", -1);
  return real_pread64(fd, buf, n, off);
}

static mode_t fi_mode(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE
             ? va_arg(ap, mode_t)
             : 0;
}

int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = fi_mode(flags, ap);
  va_end(ap);
  REAL(open, int, const char *, int, ...);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real_open(path, flags, m);
}

int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = fi_mode(flags, ap);
  va_end(ap);
  REAL(open64, int, const char *, int, ...);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real_open64(path, flags, m);
}

int openat(int dfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = fi_mode(flags, ap);
  va_end(ap);
  REAL(openat, int, int, const char *, int, ...);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real_openat(dfd, path, flags, m);
}

int openat64(int dfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = fi_mode(flags, ap);
  va_end(ap);
  REAL(openat64, int, int, const char *, int, ...);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real_openat64(dfd, path, flags, m);
}

/* _FORTIFY_SOURCE's variants, which skillrun is built with. */
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen) {
  REAL(__read_chk, ssize_t, int, void *, size_t, size_t);
  FAIL("read", -1);
  return real___read_chk(fd, buf, n, buflen);
}

ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen) {
  REAL(__pread_chk, ssize_t, int, void *, size_t, off_t, size_t);
  FAIL("read", -1);
  return real___pread_chk(fd, buf, n, off, buflen);
}

int __open_2(const char *path, int flags) {
  REAL(__open_2, int, const char *, int);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real___open_2(path, flags);
}

int __open64_2(const char *path, int flags) {
  REAL(__open64_2, int, const char *, int);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real___open64_2(path, flags);
}

int __openat_2(int dfd, const char *path, int flags) {
  REAL(__openat_2, int, int, const char *, int);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real___openat_2(dfd, path, flags);
}

int __openat64_2(int dfd, const char *path, int flags) {
  REAL(__openat64_2, int, int, const char *, int);
  fi_arm(path);
  FAIL_PATH("openat", path, -1);
  return real___openat64_2(dfd, path, flags);
}

int mkdir(const char *path, mode_t m) {
  REAL(mkdir, int, const char *, mode_t);
  FAIL_PATH("mkdirat", path, -1);
  return real_mkdir(path, m);
}

int mkdirat(int dfd, const char *path, mode_t m) {
  REAL(mkdirat, int, int, const char *, mode_t);
  FAIL_PATH("mkdirat", path, -1);
  return real_mkdirat(dfd, path, m);
}

int fstatfs(int fd, struct statfs *b) {
  REAL(fstatfs, int, int, struct statfs *);
  FAIL("fstatfs", -1);
  return real_fstatfs(fd, b);
}

int fstatfs64(int fd, struct statfs64 *b) {
  REAL(fstatfs64, int, int, struct statfs64 *);
  FAIL("fstatfs", -1);
  return real_fstatfs64(fd, b);
}

int ftruncate(int fd, off_t len) {
  REAL(ftruncate, int, int, off_t);
  FAIL("ftruncate", -1);
  return real_ftruncate(fd, len);
}

int ftruncate64(int fd, off_t len) {
  REAL(ftruncate64, int, int, off_t);
  FAIL("ftruncate", -1);
  return real_ftruncate64(fd, len);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  REAL(fallocate, int, int, int, off_t, off_t);
  FAIL("fallocate", -1);
  return real_fallocate(fd, mode, off, len);
}

int fallocate64(int fd, int mode, off_t off, off_t len) {
  REAL(fallocate64, int, int, int, off_t, off_t);
  FAIL("fallocate", -1);
  return real_fallocate64(fd, mode, off, len);
}

int linkat(int od, const char *op, int nd, const char *np, int flags) {
  REAL(linkat, int, int, const char *, int, const char *, int);
  FAIL_PATH("linkat", np, -1);
  return real_linkat(od, op, nd, np, flags);
}

int rename(const char *o, const char *n) {
  REAL(rename, int, const char *, const char *);
  FAIL_PATH("renameat", n, -1);
  return real_rename(o, n);
}

int renameat(int od, const char *o, int nd, const char *n) {
  REAL(renameat, int, int, const char *, int, const char *);
  FAIL_PATH("renameat", n, -1);
  return real_renameat(od, o, nd, n);
}

int renameat2(int od, const char *o, int nd, const char *n, unsigned flags) {
  REAL(renameat2, int, int, const char *, int, const char *, unsigned);
  FAIL_PATH("renameat", n, -1);
  return real_renameat2(od, o, nd, n, flags);
}

int unlinkat(int dfd, const char *path, int flags) {
  REAL(unlinkat, int, int, const char *, int);
  FAIL_PATH("unlinkat", path, -1);
  return real_unlinkat(dfd, path, flags);
}

int unlink(const char *path) {
  REAL(unlink, int, const char *);
  FAIL_PATH("unlinkat", path, -1);
  return real_unlink(path);
}

int rmdir(const char *path) {
  REAL(rmdir, int, const char *);
  FAIL_PATH("unlinkat", path, -1);
  return real_rmdir(path);
}

int fsync(int fd) {
  REAL(fsync, int, int);
  FAIL("fsync", -1);
  return real_fsync(fd);
}

int fdatasync(int fd) {
  REAL(fdatasync, int, int);
  FAIL("fsync", -1);
  return real_fdatasync(fd);
}

#ifdef FI_MALLOC
/* Only in faultinject-malloc.so: an ASan build's malloc must stay ASan's. */
void *malloc(size_t n) {
  FAIL("malloc", NULL);
  return __libc_malloc(n);
}

void *calloc(size_t k, size_t n) {
  FAIL("malloc", NULL);
  return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n) {
  FAIL("malloc", NULL);
  return __libc_realloc(p, n);
}
#endif

long syscall(long nr, ...) {
  va_list ap;
  long a[6];
  va_start(ap, nr);
  for (int i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  if (nr == SYS_clone3 || nr == SYS_clone)
    FAIL("clone3", -1);
  REAL(syscall, long, long, ...);
  return real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
