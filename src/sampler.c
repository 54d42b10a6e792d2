/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The supervisor's sampler of the sandbox's process tree (sampler.h): the
 * whole-run accounting where no cgroup can be had.
 *
 * It reads the host's /proc: the supervisor runs in the host's pid
 * namespace, owns the sandbox's user namespace (or is root), and may read
 * what ptrace-read access allows.  Pids found in a children file can be
 * reaped and reused before they are read: every process's parent (field 4
 * of its stat) must be the one it was listed under, and one that is not is
 * left to the next sample.  init itself cannot be reused: the supervisor
 * has not reaped it (and holds its pidfd).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fdutil.h"
#include "sampler.h"
#include "util.h"
#include "view.h"

/* The sandbox's writable tmpfs mounts: the view's SR_VIEW_TMPFS entries,
 * and /dev/shm, the one sized tmpfs that its /dev entry builds (tmp-size,
 * mount.c). */
#define DEV_SHM "/dev/shm"

/* A process's maps are read when it is first seen, when its resident
 * shared pages change (a shared mapping touched or dropped), and at least
 * every this many samples (a second at 50 ms): reading maps costs 0.1 -
 * 0.3 ms, ten times the rest of a process's sample, and a process that
 * only grows its private memory needs none.  A shared mapping made and not
 * touched by a process already seen holds no memory until touched, and
 * one a new child inherits is read with the child. */
#define MAPS_RESCAN_SAMPLES 20
/* ... and all of them together at most this many bytes of maps a second,
 * the supervisor's CPU being outside the run's budget: a process's maps is
 * read again no sooner than the tree's last maps (their sum) take at this
 * rate.  A skill that flipped a page of a shared mapping in each of 20
 * processes of 30,000 mappings each (6 MB of maps text a second in
 * all, ~2 ms of its own CPU) made the supervisor read all of them at
 * every sample, half a CPU.  A tree of ordinary processes (tens of KiB of
 * maps each) is read as before. */
#define MAPS_BYTES_PER_S (8 * 1024 * 1024)
/* Shmem objects kept per process; more are summed without dedup. */
#define SHM_PER_PROC 8
/* The processes whose /proc files stay open from one sample to the next
 * (three fds each): reading an open file again costs a third of opening
 * it, and an fd of a process that died reads ESRCH, even when its pid has
 * been reused.  Processes beyond these are opened at every sample. */
#define FD_PROCS 128
/* Enough for stat, statm and a children list of a few hundred pids; a
 * longer children list grows the buffer. */
#define BUF_INITIAL 8192
#define BUF_MAX (4 * 1024 * 1024)
/* Reading maps, in chunks. */
#define MAPS_CHUNK 16384

struct sr_sampler_shm {
  uint64_t ino;
  uint64_t len;
};

/* A process's open /proc files. */
enum { PF_STAT = 0, PF_STATM, PF_CHILDREN, PF__MAX };

struct sr_sampler_proc {
  pid_t pid;
  int fd[PF__MAX];       /* -1: not open */
  uint64_t start;        /* starttime (stat field 22): who this pid is */
  uint64_t size, shared; /* statm, when maps was last read */
  uint64_t maps_seq;     /* the sample that last read maps */
  uint64_t maps_ms;      /* ... when (CLOCK_MONOTONIC) */
  uint64_t maps_bytes;   /* ... and how long the file was */
  uint64_t cpu_ticks;
  uint64_t anon_pages;
  uint64_t tasks;
  unsigned n_shm;
  struct sr_sampler_shm shm[SHM_PER_PROC];
  uint64_t shm_extra; /* objects beyond SHM_PER_PROC, summed */
};

void sr_sampler_init(struct sr_sampler *s) {
  memset(s, 0, sizeof(*s));
  s->proc_fd = -1;
  for (int i = 0; i < SR_SAMPLER_TMPFS_MAX; i++)
    s->tmpfs_fd[i] = -1;
}

/* The next number of *p in base (after blanks), advancing *p; -EINVAL
 * when there is none. */
static int next_u64(const char **p, int base, uint64_t *v) {
  char *end;
  unsigned long long x;

  *p += strspn(*p, " \t");
  errno = 0;
  x = strtoull(*p, &end, base);
  if (end == *p || errno)
    return -EINVAL;
  *p = end;
  *v = x;
  return 0;
}

static void close_proc(struct sr_sampler_proc *pr) {
  for (int i = 0; i < PF__MAX; i++)
    pr->fd[i] = safe_close(pr->fd[i]);
}

void sr_sampler_close(struct sr_sampler *s) {
  for (size_t i = 0; i < s->n_procs; i++)
    close_proc(&s->procs[i]);
  for (size_t i = 0; i < s->n_next; i++)
    close_proc(&s->next[i]);
  s->proc_fd = safe_close(s->proc_fd);
  for (int i = 0; i < SR_SAMPLER_TMPFS_MAX; i++)
    s->tmpfs_fd[i] = safe_close(s->tmpfs_fd[i]);
  free(s->procs);
  free(s->next);
  free(s->stack);
  free(s->shm);
  free(s->buf);
  s->procs = s->next = NULL;
  s->stack = NULL;
  s->shm = NULL;
  s->buf = NULL;
  s->n_procs = s->cap_procs = s->n_next = s->cap_next = 0;
  s->cap_stack = s->n_shm = s->cap_shm = s->buf_len = 0;
}

static int sys_openat2(int dirfd, const char *path, uint64_t flags,
                       uint64_t resolve) {
  struct open_how how = {.flags = flags | O_CLOEXEC, .resolve = resolve};

  for (int i = 0; i < 16; i++) {
    long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd >= 0)
      return (int)fd;
    /* EAGAIN: a concurrent rename or mount raced RESOLVE_IN_ROOT. */
    if (errno != EAGAIN && errno != EINTR)
      return -errno;
  }
  return -EAGAIN;
}

int sr_sampler_open(struct sr_sampler *s, pid_t init_pid,
                    struct sr_error *err) {
  _cleanup_close_ int root = -1;
  char path[64];
  struct stat st;
  int fd;

  s->init_pid = init_pid;
  s->page_size = sysconf(_SC_PAGESIZE);
  s->clk_tck = sysconf(_SC_CLK_TCK);
  if (s->page_size <= 0 || s->clk_tck <= 0)
    return sr_error_layer(err, "supervisor", EINVAL, "sysconf");
  s->buf = malloc(BUF_INITIAL);
  if (!s->buf)
    return sr_error_layer(err, "supervisor", ENOMEM, "sampler");
  s->buf_len = BUF_INITIAL;
  s->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (s->proc_fd < 0)
    return sr_error_layer(err, "supervisor", errno, "open /proc");
  /* Where memfd, shared anonymous and System V memory live. */
  fd = memfd_create("skillrun-shm-dev", MFD_CLOEXEC);
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    safe_close(fd);
    return sr_error_layer(err, "supervisor", e, "memfd_create");
  }
  safe_close(fd);
  s->shm_dev = st.st_dev;
  /* The children files (CONFIG_PROC_CHILDREN) are how the tree is found:
   * without them there is nothing to sample. */
  snprintf(path, sizeof(path), "%d/task/%d/children", (int)init_pid,
           (int)init_pid);
  if (faccessat(s->proc_fd, path, R_OK, 0) < 0)
    return sr_error_layer(err, "supervisor", errno,
                          "cannot read /proc/%s (a kernel without "
                          "CONFIG_PROC_CHILDREN cannot be sampled)",
                          path);
  /* The sandbox's mounts, resolved inside its root: nothing the skill
   * controls (the root is read-only, the skill has no capability) may
   * redirect them, and each must be the tmpfs the mount layer made. */
  snprintf(path, sizeof(path), "/proc/%d/root", (int)init_pid);
  root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0)
    return sr_error_layer(err, "supervisor", errno, "open %s", path);
  for (size_t v = 0, i = 0; v <= sr_view_len; v++) {
    const char *dst = v < sr_view_len ? sr_view[v].dst : DEV_SHM;
    struct statfs sfs;

    if (v < sr_view_len && sr_view[v].type != SR_VIEW_TMPFS)
      continue;
    if (i >= SR_SAMPLER_TMPFS_MAX)
      return sr_error_layer(err, "supervisor", E2BIG,
                            "more than %d tmpfs mounts in the view",
                            SR_SAMPLER_TMPFS_MAX);
    s->tmpfs_fd[i] = sys_openat2(root, dst + 1, O_PATH | O_DIRECTORY,
                                 RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
                                     RESOLVE_NO_MAGICLINKS);
    if (s->tmpfs_fd[i] < 0)
      return sr_error_layer(err, "supervisor", -s->tmpfs_fd[i],
                            "open the sandbox's %s", dst);
    if (fstatfs(s->tmpfs_fd[i], &sfs) < 0)
      return sr_error_layer(err, "supervisor", errno, "statfs the sandbox's %s",
                            dst);
    if (sfs.f_type != TMPFS_MAGIC)
      return sr_error_layer(err, "supervisor", EXDEV,
                            "the sandbox's %s is not a tmpfs", dst);
    i++;
  }
  return 0;
}

bool sr_sampler_exiting(pid_t pid) {
  char path[64], buf[1024];
  const char *p;
  uint64_t v = 0;
  char state;
  ssize_t n;
  int fd;

  snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true;
  n = read(fd, buf, sizeof(buf) - 1);
  safe_close(fd);
  if (n <= 0)
    return true;
  buf[n] = '\0';
  /* "pid (comm) S ppid pgrp session tty_nr tpgid flags ..." */
  p = strrchr(buf, ')');
  if (!p || p[1] != ' ' || !p[2])
    return true;
  state = p[2];
  p += 3;
  /* ppid .. tpgid (tty_nr and tpgid may be negative), then flags */
  for (int i = 0; i < 5; i++) {
    p += strspn(p, " ");
    p += *p == '-';
    if (next_u64(&p, 10, &v) < 0)
      return true;
  }
  if (next_u64(&p, 10, &v) < 0)
    return true;
  /* PF_EXITING (include/linux/sched.h) is set as do_exit() begins, before
   * the task's namespaces go. */
  return state == 'Z' || state == 'X' || (v & 0x4);
}

int sr_sampler_cpu_counter_open(pid_t pid) {
  struct perf_event_attr attr;
  long fd;

  memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.inherit = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1,
               (unsigned long)PERF_FLAG_FD_CLOEXEC);
  return fd < 0 ? -errno : (int)fd;
}

int sr_sampler_cpu_counter_read(int fd, uint64_t *cpu_usec) {
  uint64_t ns;
  ssize_t n;

  do
    n = read(fd, &ns, sizeof(ns));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if (n != (ssize_t)sizeof(ns))
    return -EIO;
  *cpu_usec = ns / 1000;
  return 0;
}

/* Reads the open /proc file fd whole, from its start, into s->buf
 * (NUL-terminated), growing it up to BUF_MAX; the length or -errno. */
static ssize_t read_fd(struct sr_sampler *s, int fd) {
  size_t got = 0;

  for (;;) {
    ssize_t n;

    if (got + 1 >= s->buf_len) {
      char *b;
      if (s->buf_len >= BUF_MAX)
        return -EFBIG;
      b = realloc(s->buf, s->buf_len * 2);
      if (!b)
        return -ENOMEM;
      s->buf = b;
      s->buf_len *= 2;
    }
    n = pread(fd, s->buf + got, s->buf_len - 1 - got, (off_t)got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    if (n == 0)
      break;
    got += (size_t)n;
  }
  s->buf[got] = '\0';
  return (ssize_t)got;
}

/* Reads /proc/<path> whole into s->buf; the length, or -errno
 * (-ENOENT/-ESRCH: the process is gone). */
static ssize_t read_proc(struct sr_sampler *s, const char *path) {
  _cleanup_close_ int fd = openat(s->proc_fd, path, O_RDONLY | O_CLOEXEC);

  if (fd < 0)
    return -errno;
  return read_fd(s, fd);
}

/* Reads one of pid's files through *fd, opening it first when it is not
 * open; keep: leave it open for the next sample. */
static ssize_t read_kept(struct sr_sampler *s, int *fd, pid_t pid,
                         const char *file, bool keep) {
  char path[64];

  if (*fd < 0) {
    snprintf(path, sizeof(path), "%d/%s", (int)pid, file);
    if (!keep)
      return read_proc(s, path);
    *fd = openat(s->proc_fd, path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
      return -errno;
  }
  return read_fd(s, *fd);
}

/* The fields of /proc/PID/stat the sampler needs. */
struct pstat {
  pid_t ppid;
  uint64_t ticks; /* utime + stime + cutime + cstime */
  uint64_t threads;
  uint64_t start;
};

/* Fields after the command name, which may hold spaces and parentheses:
 * from the last ')'. */
static int parse_stat(const char *b, struct pstat *ps) {
  const char *p = strrchr(b, ')');
  uint64_t v[20];

  if (!p || p[1] != ' ')
    return -EINVAL;
  p += 2;
  /* field 3 is the state letter */
  if (!*p || p[1] != ' ')
    return -EINVAL;
  p += 2;
  /* fields 4 .. 22 */
  for (size_t i = 0; i < 19; i++) {
    char *end;
    long long x;

    errno = 0;
    x = strtoll(p, &end, 10);
    if (end == p || errno)
      return -EINVAL;
    /* tty_nr, priority and nice may be negative; the rest are not */
    v[i] = (uint64_t)(x < 0 ? 0 : x);
    p = end;
  }
  ps->ppid = (pid_t)v[0];                    /* field 4 */
  ps->ticks = v[10] + v[11] + v[12] + v[13]; /* fields 14-17 */
  ps->threads = v[16];                       /* field 20 */
  ps->start = v[18];                         /* field 22 */
  return 0;
}

static int parse_statm(const char *b, uint64_t *size, uint64_t *resident,
                       uint64_t *shared) {
  if (next_u64(&b, 10, size) < 0 || next_u64(&b, 10, resident) < 0 ||
      next_u64(&b, 10, shared) < 0)
    return -EINVAL;
  return 0;
}

/* The last sample's record of pid. */
static struct sr_sampler_proc *old_proc(struct sr_sampler *s, pid_t pid) {
  size_t lo = 0, hi = s->n_procs;

  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->procs[mid].pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < s->n_procs && s->procs[lo].pid == pid)
    return &s->procs[lo];
  return NULL;
}

/* One maps line: "start-end perms offset major:minor inode path". */
static void maps_line(const struct sr_sampler *s, const char *l,
                      struct sr_sampler_proc *pr) {
  uint64_t lo, hi, off, maj, min, ino;
  const char *perms;

  if (next_u64(&l, 16, &lo) < 0 || *l++ != '-' || next_u64(&l, 16, &hi) < 0)
    return;
  l += strspn(l, " ");
  perms = l;
  l += strcspn(l, " ");
  if (l - perms != 4 || next_u64(&l, 16, &off) < 0 ||
      next_u64(&l, 16, &maj) < 0 || *l++ != ':' || next_u64(&l, 16, &min) < 0 ||
      next_u64(&l, 10, &ino) < 0)
    return;
  if (perms[3] != 's' || makedev(maj, min) != s->shm_dev || hi <= lo)
    return;
  for (unsigned i = 0; i < pr->n_shm; i++)
    if (pr->shm[i].ino == ino) {
      if (hi - lo > pr->shm[i].len)
        pr->shm[i].len = hi - lo;
      return;
    }
  if (pr->n_shm < SHM_PER_PROC)
    pr->shm[pr->n_shm++] = (struct sr_sampler_shm){ino, hi - lo};
  else
    pr->shm_extra += hi - lo;
}

/* The process's shared mappings of the internal shmem mount, read
 * through its thread tid (pid itself, or a live thread: mm_thread). */
static int read_maps(struct sr_sampler *s, pid_t pid, pid_t tid,
                     struct sr_sampler_proc *pr) {
  char path[48], chunk[MAPS_CHUNK + 1];
  _cleanup_close_ int fd = -1;
  size_t have = 0;

  pr->n_shm = 0;
  pr->shm_extra = 0;
  pr->maps_bytes = 0;
  if (tid == pid)
    snprintf(path, sizeof(path), "%d/maps", (int)pid);
  else
    snprintf(path, sizeof(path), "%d/task/%d/maps", (int)pid, (int)tid);
  fd = openat(s->proc_fd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  for (;;) {
    ssize_t n = read(fd, chunk + have, MAPS_CHUNK - have);
    char *l, *nl;

    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return -errno;
    have += (size_t)n;
    pr->maps_bytes += (uint64_t)n;
    chunk[have] = '\0';
    for (l = chunk; (nl = strchr(l, '\n')); l = nl + 1) {
      *nl = '\0';
      maps_line(s, l, pr);
    }
    /* keep the partial last line; a line longer than the chunk (a huge
     * path) is dropped: it is no shmem object, whose names are short */
    have = strlen(l);
    if (have >= MAPS_CHUNK)
      have = 0;
    memmove(chunk, l, have);
    if (n == 0)
      break;
  }
  return 0;
}

static int push(struct sr_sampler *s, size_t *n, pid_t pid) {
  int r = sr_grow_array((void **)&s->stack, &s->cap_stack, *n + 1,
                        sizeof(pid_t), 64);

  if (r < 0)
    return r;
  /* parent and child side by side: the parent comes first */
  s->stack[(*n)++] = pid;
  return 0;
}

/* Pushes the children listed in s->buf, each followed by its parent. */
static int push_children(struct sr_sampler *s, size_t *n, pid_t parent) {
  for (const char *p = s->buf; *p;) {
    char *end;
    long v;

    p += strspn(p, " \n");
    if (!*p)
      break;
    errno = 0;
    v = strtol(p, &end, 10);
    if (end == p || errno || v <= 0 || v > INT32_MAX)
      return -EINVAL;
    p = end;
    if (push(s, n, (pid_t)v) < 0 || push(s, n, parent) < 0)
      return -ENOMEM;
  }
  return 0;
}

/* The children of every thread of pid onto the walk. */
static int children_of(struct sr_sampler *s, size_t *n,
                       struct sr_sampler_proc *pr, uint64_t threads,
                       bool keep) {
  const pid_t pid = pr->pid;
  char path[64];
  ssize_t len;
  DIR *d;
  struct dirent *de;
  int fd, r = 0;

  if (threads <= 1) {
    snprintf(path, sizeof(path), "task/%d/children", (int)pid);
    len = read_kept(s, &pr->fd[PF_CHILDREN], pid, path, keep);
    if (len < 0)
      return len == -ENOENT || len == -ESRCH ? 0 : (int)len;
    return push_children(s, n, pid);
  }
  /* A thread group leader's own children file lists only what it forked;
   * the other threads' are read afresh. */
  pr->fd[PF_CHILDREN] = safe_close(pr->fd[PF_CHILDREN]);
  snprintf(path, sizeof(path), "%d/task", (int)pid);
  fd = openat(s->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT || errno == ESRCH ? 0 : -errno;
  d = fdopendir(fd);
  if (!d) {
    r = -errno;
    safe_close(fd);
    return r;
  }
  while (r >= 0 && (de = readdir(d))) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    snprintf(path, sizeof(path), "%d/task/%.16s/children", (int)pid,
             de->d_name);
    len = read_proc(s, path);
    if (len < 0) {
      if (len != -ENOENT && len != -ESRCH)
        r = (int)len;
      continue;
    }
    r = push_children(s, n, pid);
  }
  closedir(d);
  return r;
}

/*
 * A process whose thread group leader has exited (its main thread called
 * pthread_exit) lives on in its other threads, but its statm and maps,
 * read through the leader, whose mm went with it, are empty: a tree could
 * hold any amount of memory that way.  Its memory is read through a live
 * thread: the first whose statm shows an mm.  That thread's id, with its
 * statm's figures, or 0 when none has one (the whole group is exiting).
 */
static pid_t mm_thread(struct sr_sampler *s, pid_t pid, uint64_t *size,
                       uint64_t *resident, uint64_t *shared) {
  char path[64];
  pid_t tid = 0;
  struct dirent *de;
  DIR *d;
  int fd;

  snprintf(path, sizeof(path), "%d/task", (int)pid);
  fd = openat(s->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  d = fdopendir(fd);
  if (!d) {
    safe_close(fd);
    return 0;
  }
  while (!tid && (de = readdir(d))) {
    uint64_t sz, res, sh;
    long t;
    char *end;

    if (de->d_name[0] < '1' || de->d_name[0] > '9')
      continue;
    errno = 0;
    t = strtol(de->d_name, &end, 10);
    if (*end || errno || t <= 0 || t > INT32_MAX || t == pid)
      continue;
    snprintf(path, sizeof(path), "%d/task/%ld/statm", (int)pid, t);
    if (read_proc(s, path) < 0 || parse_statm(s->buf, &sz, &res, &sh) < 0 ||
        sz == 0)
      continue;
    *size = sz;
    *resident = res;
    *shared = sh;
    tid = (pid_t)t;
  }
  closedir(d);
  return tid;
}

/* Whether a process seen before (old, the same one) has its maps read
 * again: when its resident shared pages changed (shared, statm's now) or
 * every MAPS_RESCAN_SAMPLES samples, but never sooner than the tree's
 * maps take at MAPS_BYTES_PER_S. */
static bool maps_due(const struct sr_sampler *s,
                     const struct sr_sampler_proc *old, uint64_t shared) {
  uint64_t wait_ms = s->maps_total / (MAPS_BYTES_PER_S / 1000);

  if (s->now_ms - old->maps_ms < wait_ms)
    return false;
  return old->shared != shared || s->seq - old->maps_seq >= MAPS_RESCAN_SAMPLES;
}

/* Reads one process into s->next; 0 also when it is gone or not the one
 * listed (left to the next sample).  Its /proc files come from the last
 * sample when it was there (an fd pins the process it was opened for). */
static int visit(struct sr_sampler *s, pid_t pid, pid_t parent, size_t *n) {
  struct sr_sampler_proc pr = {.pid = pid, .fd = {-1, -1, -1}};
  struct sr_sampler_proc *old = old_proc(s, pid);
  const bool keep = s->n_next < FD_PROCS;
  uint64_t size = 0, resident = 0, shared = 0;
  pid_t mm_tid = pid;
  struct pstat ps;
  ssize_t len;
  int r;

  if (old) {
    memcpy(pr.fd, old->fd, sizeof(pr.fd));
    for (int i = 0; i < PF__MAX; i++)
      old->fd[i] = -1;
  }
  len = read_kept(s, &pr.fd[PF_STAT], pid, "stat", keep);
  if (len == -ESRCH && old) {
    /* the process of the kept fds died; the pid is listed again: anew */
    close_proc(&pr);
    old = NULL;
    len = read_kept(s, &pr.fd[PF_STAT], pid, "stat", keep);
  }
  r = len < 0 ? (int)len : 0;
  if (r == 0 && (parse_stat(s->buf, &ps) < 0 ||
                 (pid != s->init_pid && ps.ppid != parent)))
    r = 1; /* in its last moments, or reaped and reused, or reparented */
  if (r == 0) {
    len = read_kept(s, &pr.fd[PF_STATM], pid, "statm", keep);
    r = len < 0                                              ? (int)len
        : parse_statm(s->buf, &size, &resident, &shared) < 0 ? 1
                                                             : 0;
  }
  if (r != 0) {
    close_proc(&pr);
    /* gone or not the one listed: next time */
    return r == 1 || r == -ENOENT || r == -ESRCH ? 0 : r;
  }
  /* No mm but other threads: the leader has exited, they hold it. */
  if (size == 0 && ps.threads > 1) {
    pid_t t = mm_thread(s, pid, &size, &resident, &shared);
    if (t > 0)
      mm_tid = t;
  }

  pr.start = ps.start;
  pr.cpu_ticks = ps.ticks;
  pr.anon_pages = resident > shared ? resident - shared : 0;
  pr.tasks = ps.threads ? ps.threads : 1; /* a zombie still holds a pid */
  pr.size = size;
  pr.shared = shared;
  if (old && old->start == ps.start && !maps_due(s, old, shared)) {
    pr.maps_seq = old->maps_seq;
    pr.maps_ms = old->maps_ms;
    pr.maps_bytes = old->maps_bytes;
    pr.n_shm = old->n_shm;
    memcpy(pr.shm, old->shm, sizeof(pr.shm));
    pr.shm_extra = old->shm_extra;
  } else if (size > 0) {
    r = read_maps(s, pid, mm_tid, &pr);
    if (r < 0 && r != -ENOENT && r != -ESRCH) {
      close_proc(&pr);
      return r;
    }
    pr.maps_seq = s->seq;
    pr.maps_ms = s->now_ms;
  }
  r = children_of(s, n, &pr, ps.threads, keep);
  if (r >= 0)
    r = sr_grow_array((void **)&s->next, &s->cap_next, s->n_next, sizeof(pr),
                      64);
  if (r < 0) {
    close_proc(&pr);
    return r;
  }
  s->next[s->n_next++] = pr;
  return 0;
}

static int cmp_proc(const void *a, const void *b) {
  const struct sr_sampler_proc *x = a, *y = b;
  return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_shm(const void *a, const void *b) {
  const struct sr_sampler_shm *x = a, *y = b;
  if (x->ino != y->ino)
    return (x->ino > y->ino) - (x->ino < y->ino);
  return (x->len < y->len) - (x->len > y->len); /* largest first */
}

/* The tmpfs mounts: blocks and inodes in use. */
static int tmpfs_bytes(const struct sr_sampler *s, uint64_t *bytes) {
  uint64_t b = 0;

  for (int i = 0; i < SR_SAMPLER_TMPFS_MAX; i++) {
    struct statfs sfs;

    if (s->tmpfs_fd[i] < 0)
      continue;
    if (fstatfs(s->tmpfs_fd[i], &sfs) < 0)
      return -errno;
    b += (uint64_t)(sfs.f_blocks - sfs.f_bfree) * (uint64_t)sfs.f_bsize;
    /* f_files is 0 for a tmpfs without an inode limit (nr_inodes=0) */
    if (sfs.f_files > sfs.f_ffree)
      b += (uint64_t)(sfs.f_files - sfs.f_ffree) * SR_SAMPLER_INODE_BYTES;
  }
  *bytes = b;
  return 0;
}

int sr_sampler_sample(struct sr_sampler *s, struct sr_sample *out) {
  struct sr_sample x = {0};
  uint64_t anon = 0, ticks = 0, tmpfs = 0, shm = 0;
  size_t n = 0;
  int r;

  s->seq++;
  s->now_ms = sr_now_mono_ms();
  s->n_next = 0;
  r = push(s, &n, s->init_pid);
  if (r >= 0)
    r = push(s, &n, 0);
  /* Depth first, each process before its children: a child reaped
   * between the two reads is in its parent's cutime or missed until the
   * next sample, never counted twice. */
  while (r >= 0 && n > 0) {
    pid_t parent = s->stack[--n];
    pid_t pid = s->stack[--n];
    r = visit(s, pid, parent, &n);
  }
  /* What the last sample had open and this one did not take: processes
   * that are gone. */
  for (size_t i = 0; i < s->n_procs; i++)
    close_proc(&s->procs[i]);
  s->n_procs = 0;
  if (r < 0) {
    for (size_t i = 0; i < s->n_next; i++)
      close_proc(&s->next[i]);
    s->n_next = 0;
    return r;
  }
  /* A pid listed twice (reparented between two children reads) counts
   * once. */
  if (s->n_next > 1)
    qsort(s->next, s->n_next, sizeof(*s->next), cmp_proc);
  s->n_shm = 0;
  s->maps_total = 0;
  for (size_t i = 0; i < s->n_next; i++) {
    struct sr_sampler_proc *pr = &s->next[i];

    if (i > 0 && pr->pid == s->next[i - 1].pid) {
      close_proc(&s->next[i]);
      continue;
    }
    s->maps_total += pr->maps_bytes;
    ticks += pr->cpu_ticks;
    anon += pr->anon_pages;
    x.pids += pr->tasks;
    shm += pr->shm_extra;
    for (unsigned k = 0; k < pr->n_shm; k++) {
      r = sr_grow_array((void **)&s->shm, &s->cap_shm, s->n_shm,
                        sizeof(*s->shm), 64);
      if (r < 0)
        return r;
      s->shm[s->n_shm++] = pr->shm[k];
    }
  }
  /* Each shmem object once, at its largest mapping. */
  if (s->n_shm > 1) /* qsort(NULL, 0, ...) is undefined */
    qsort(s->shm, s->n_shm, sizeof(*s->shm), cmp_shm);
  for (size_t i = 0; i < s->n_shm; i++)
    if (i == 0 || s->shm[i].ino != s->shm[i - 1].ino)
      shm += s->shm[i].len;
  r = tmpfs_bytes(s, &tmpfs);
  if (r < 0)
    return r;

  x.cpu_usec = ticks * 1000000ULL / (uint64_t)s->clk_tck;
  x.memory = anon * (uint64_t)s->page_size + tmpfs + shm;
  /* This sample's processes are the next one's cache. */
  {
    struct sr_sampler_proc *t = s->procs;
    size_t c = s->cap_procs;
    s->procs = s->next;
    s->cap_procs = s->cap_next;
    s->n_procs = s->n_next;
    s->next = t;
    s->cap_next = c;
    s->n_next = 0;
  }
  if (x.cpu_usec > s->peak.cpu_usec)
    s->peak.cpu_usec = x.cpu_usec;
  if (x.memory > s->peak.memory)
    s->peak.memory = x.memory;
  if (x.pids > s->peak.pids)
    s->peak.pids = x.pids;
  *out = x;
  return 0;
}
