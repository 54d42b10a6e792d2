/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/close_range.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "fdutil.h"

int safe_close(int fd) {
  if (fd >= 0) {
    int saved = errno;
    /* close(2): never retry on EINTR, the fd is gone either way on Linux. */
    (void)close(fd);
    errno = saved;
  }
  return -1;
}

int sr_write_all(int fd, const void *buf, size_t len) {
  const char *p = buf;

  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0)
      return -EIO;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* The longest a stalled write waits at once: between two looks for a
 * pending cancellation signal (sr_write_bounded_cancellable), and the most
 * one wait is charged.  The monotonic clock runs on while skillrun is
 * stopped (Ctrl-Z, a scheduler's suspend: SIGSTOP, then SIGCONT), and a
 * stop of 5 s inside one wait spent the whole budget: the next full pipe
 * then failed the run (audit_write) while its reader had read on. */
#define WRITE_WAIT_SLICE_MS 100

/* Waits until fd takes a write, charging the wait to *budget_ms; when
 * cancellable, a pending cancellation signal ends the wait too. */
static int wait_writable(int fd, uint64_t *budget_ms, bool cancellable) {
  struct pollfd p = {.fd = fd, .events = POLLOUT};

  for (;;) {
    uint64_t t0 = sr_now_mono_ms(), spent, slice = *budget_ms;
    int n;

    if (slice > WRITE_WAIT_SLICE_MS)
      slice = WRITE_WAIT_SLICE_MS;
    do
      n = poll(&p, 1, (int)slice);
    while (n < 0 && errno == EINTR);
    if (n < 0)
      return -errno;
    spent = sr_now_mono_ms() - t0;
    if (spent > slice)
      spent = slice; /* stopped meanwhile, or not scheduled */
    *budget_ms = spent >= *budget_ms ? 0 : *budget_ms - spent;
    /* A reader that went away: the write below says EPIPE. */
    if (n > 0)
      return 0;
    if (cancellable && sr_cancel_pending())
      return -ECANCELED;
    if (*budget_ms == 0)
      return -ETIMEDOUT;
  }
}

static int write_bounded(int fd, mode_t *type, const void *buf, size_t len,
                         uint64_t *budget_ms, bool cancellable) {
  const char *p = buf;
  bool sock;

  if (!*type) {
    struct stat st;

    if (fstat(fd, &st) < 0)
      return -errno;
    *type = st.st_mode & S_IFMT;
  }
  if (S_ISREG(*type) || S_ISBLK(*type))
    return sr_write_all(fd, buf, len);
  sock = S_ISSOCK(*type);
  while (len > 0) {
    size_t chunk = len < PIPE_BUF ? len : PIPE_BUF;
    ssize_t n;
    int r = wait_writable(fd, budget_ms, cancellable);

    if (r < 0)
      return r;
    if (sock)
      n = send(fd, p, chunk, MSG_DONTWAIT | MSG_NOSIGNAL);
    else
      n = write(fd, p, chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      return -errno;
    }
    if (n == 0)
      return -EIO;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int sr_write_bounded(int fd, mode_t *type, const void *buf, size_t len,
                     uint64_t *budget_ms) {
  return write_bounded(fd, type, buf, len, budget_ms, false);
}

int sr_write_bounded_cancellable(int fd, mode_t *type, const void *buf,
                                 size_t len, uint64_t *budget_ms) {
  return write_bounded(fd, type, buf, len, budget_ms, true);
}

/* The terminal a tty's open file writes to (TIOCGDEV): for a pty master
 * its own pair, for a file opened as /dev/tty the terminal it was then.
 * Not its inode's st_rdev, which is /dev/ptmx's or /dev/tty's for those,
 * and names another terminal once they are opened again (a new pty, the
 * opener's controlling terminal).  0 when the kernel does not say. */
static unsigned int tty_dev(int fd) {
  unsigned int dev = 0;

  return ioctl(fd, TIOCGDEV, &dev) == 0 ? dev : 0;
}

/* path opened non-blocking for writing, if it is the character device
 * rdev and the terminal tdev (tty_dev). */
static int open_tty_node(const char *path, dev_t rdev, unsigned int tdev) {
  struct stat st;
  int t = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

  if (t < 0)
    return -1;
  if (fstat(t, &st) < 0 || !S_ISCHR(st.st_mode) || st.st_rdev != rdev ||
      tty_dev(t) != tdev)
    return safe_close(t);
  return t;
}

int sr_tty_reopen_nonblock(int fd) {
  struct stat st;
  char self[64];
  unsigned int tdev;
  int t;

  if (!isatty(fd) || fstat(fd, &st) < 0)
    return -1;
  tdev = tty_dev(fd);
  if (tdev == 0)
    return -1;
  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  t = open_tty_node(self, st.st_rdev, tdev);
  /* Another user's terminal (after sudo -u): its node is not ours to
   * open, but when it is our controlling terminal (tcgetsid(3) answers
   * only for that) /dev/tty is that terminal. */
  if (t < 0 && tcgetsid(fd) >= 0)
    t = open_tty_node("/dev/tty", makedev(5, 0), tdev);
  return t;
}

int sr_fd_reopen(int fd, int flags) {
  char self[64];
  int r;

  snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
  r = open(self, flags | O_CLOEXEC);
  return r < 0 ? -errno : r;
}

int sr_fd_reserve(int fd, uint64_t off, uint64_t len) {
  struct rlimit fsize;

  /* Room past the file-size limit (ulimit -f) is no room: fallocate(2)
   * with FALLOC_FL_KEEP_SIZE reserves it, but a write there fails with
   * EFBIG, as on a full file system. */
  if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
      (off > fsize.rlim_cur || len > fsize.rlim_cur - off))
    return -EFBIG;
  /* tmpfs gives up with EINTR on any signal, a stop and continue too: not
   * a file system that cannot reserve, nor a full one. */
  while (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0)
    if (errno != EINTR)
      return -errno;
  return 0;
}

int sr_fd_unreserve(int fd, uint64_t off, uint64_t len) {
  struct stat st;
  int r = 0;

  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
                (off_t)len) < 0)
    r = -errno;
  /* ext4 punches nothing past the end of a file; a truncation to its own
   * length frees what was reserved there. */
  if (fstat(fd, &st) == 0 && (uint64_t)st.st_size <= off &&
      ftruncate(fd, st.st_size) == 0)
    r = 0;
  return r;
}

uint64_t sr_fd_room(int fd) {
  struct statfs sfs;
  uint64_t unit;

  if (fstatfs(fd, &sfs) < 0 || sfs.f_blocks == 0)
    return UINT64_MAX;
  /* The counts are in fragments (statvfs(3)), the same as blocks but on
   * a file system that says otherwise. */
  unit = sfs.f_frsize > 0 ? (uint64_t)sfs.f_frsize : (uint64_t)sfs.f_bsize;
  if (unit == 0 || (uint64_t)sfs.f_bavail > UINT64_MAX / unit)
    return UINT64_MAX;
  return (uint64_t)sfs.f_bavail * unit;
}

int sr_read_full(int fd, void *buf, size_t len, size_t *got) {
  char *p = buf;
  size_t total = 0;

  while (total < len) {
    ssize_t n = read(fd, p + total, len - total);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0)
      break;
    total += (size_t)n;
  }
  *got = total;
  return 0;
}

/* What a read fills first: most files read here (/proc, cgroupfs, small
 * configuration) fit, and are then copied into one allocation of their
 * size; a longer one goes on in the heap, in buffers that double.  A 64 KiB
 * malloc(3) per call ran malloc_consolidate and moved the heap's top on
 * every read of a counter: -0.1 ms a run without it (the run's page faults
 * are the same, the stack's pages taking the heap's). */
#define READ_ON_STACK (16 * 1024)

/* Reads on into the heap: the `used` bytes in small filled it. */
static int read_fd_heap(int fd, size_t max, size_t first, const char *small,
                        size_t used, char **out, size_t *len) {
  _cleanup_free_ char *buf = NULL;
  size_t size = used;

  for (;;) {
    ssize_t n;

    if (used == size) {
      size_t nsize = first > size * 2 ? first : size * 2;
      char *nbuf;
      if (nsize > max + 1)
        nsize = max + 1;
      if (nsize <= used)
        return -EFBIG;
      nbuf = realloc(buf, nsize + 1);
      if (!nbuf)
        return -ENOMEM;
      if (!buf)
        memcpy(nbuf, small, used);
      buf = nbuf;
      size = nsize;
    }
    n = read(fd, buf + used, size - used);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n == 0)
      break;
    used += (size_t)n;
    if (used > max)
      return -EFBIG;
  }
  buf[used] = '\0';
  *out = TAKE_PTR(buf);
  if (len)
    *len = used;
  return 0;
}

/* sr_read_fd, whose reads past the stack's buffer ask for `first` bytes
 * at once. */
static int read_fd_from(int fd, size_t max, size_t first, char **out,
                        size_t *len) {
  char small[READ_ON_STACK];
  const size_t cap = max < sizeof(small) ? max + 1 : sizeof(small);
  size_t used = 0;

  while (used < cap) {
    ssize_t n = read(fd, small + used, cap - used);
    char *buf;

    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (n > 0) {
      used += (size_t)n;
      continue;
    }
    buf = malloc(used + 1);
    if (!buf)
      return -ENOMEM;
    memcpy(buf, small, used);
    buf[used] = '\0';
    *out = buf;
    if (len)
      *len = used;
    return 0;
  }
  if (used > max)
    return -EFBIG;
  return read_fd_heap(fd, max, first, small, used, out, len);
}

int sr_read_fd(int fd, size_t max, char **out, size_t *len) {
  return read_fd_from(fd, max, 4096, out, len);
}

/* A /proc file says it is empty (st_size 0) and is made again from its
 * start on every read(2) that does not take the rest: past the stack's
 * 16 KiB (some 100 lines of mountinfo), a 64 KiB buffer takes the next
 * 48 KiB of a long mount table in one read (mountinfo: 60 lines in 96 us
 * instead of 141 in 4 KiB reads).  A regular file is read in one call of its
 * size (and one that sees the end). */
#define READ_UNSIZED_FIRST (64 * 1024)

/* path under dirfd, a regular file, not through a final symlink: its
 * descriptor (st filled), or -errno. */
static int open_regular_at(int dirfd, const char *path, struct stat *st) {
  _cleanup_close_ int fd = -1;

  fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    return -errno;
  if (fstat(fd, st) < 0)
    return -errno;
  if (!S_ISREG(st->st_mode))
    return -EINVAL;
  return TAKE_FD(fd);
}

int sr_read_file_at(int dirfd, const char *path, size_t max, char **out,
                    size_t *len) {
  _cleanup_close_ int fd = -1;
  struct stat st = {0}; /* for the analyzer: -errno is never 0 */

  fd = open_regular_at(dirfd, path, &st);
  if (fd < 0)
    return fd;
  if ((uint64_t)st.st_size > max)
    return -EFBIG;
  return read_fd_from(fd, max,
                      st.st_size ? (size_t)st.st_size + 1 : READ_UNSIZED_FIRST,
                      out, len);
}

int sr_read_file_into(int dirfd, const char *path, char *buf, size_t size,
                      size_t *len) {
  _cleanup_close_ int fd = -1;
  struct stat st = {0}; /* for the analyzer: -errno is never 0 */
  size_t got = 0;
  int r;

  if (size < 2)
    return -EINVAL;
  fd = open_regular_at(dirfd, path, &st);
  if (fd < 0)
    return fd;
  if ((uint64_t)st.st_size > size - 2)
    return -EFBIG;
  /* One byte more than a whole file may hold: had it filled that too, the
   * file would be too long, or be growing. */
  r = sr_read_full(fd, buf, size - 1, &got);
  if (r < 0)
    return r;
  if (got > size - 2)
    return -EFBIG;
  buf[got] = '\0';
  if (len)
    *len = got;
  return 0;
}

/* One read(2) for a short file (sr_read_pseudo_file_at in fdutil.h). */
int sr_read_pseudo_file_at(int dirfd, const char *path, size_t max,
                           char **out) {
  char buf[4096];
  _cleanup_close_ int fd = -1;
  ssize_t n;

  *out = NULL;
  fd = openat(dirfd, path,
              O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    return -errno;
  do
    n = read(fd, buf, sizeof(buf));
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if ((size_t)n >= sizeof(buf) / 2)
    return sr_read_file_at(dirfd, path, max, out, NULL);
  if ((size_t)n > max)
    return -EFBIG;
  if (n == 0) {
    struct stat st;
    if (fstat(fd, &st) < 0)
      return -errno;
    if (!S_ISREG(st.st_mode))
      return -EINVAL;
  }
  *out = strndup(buf, (size_t)n);
  return *out ? 0 : -ENOMEM;
}

/* Debian and Ubuntu give each user such a group and a umask of 002, so a
 * profile a user writes or checks out is group-writable, and writable by
 * that user alone. */
bool sr_owners_private_group(const struct stat *st) {
  const struct passwd *pw = getpwuid(st->st_uid);
  const struct group *gr;
  bool alone = true;

  /* In a user namespace a group it does not map shows as the overflow
   * gid (65534, "nobody" on Fedora): the file's real group may be any,
   * shared with other users. */
  if (sr_gid_may_be_unmapped(st->st_gid))
    return false;
  if (!pw || pw->pw_gid != st->st_gid)
    return false;
  gr = getgrgid(st->st_gid);
  if (!gr || strcmp(gr->gr_name, pw->pw_name) != 0)
    return false;
  for (char **m = gr->gr_mem; *m; m++)
    if (strcmp(*m, pw->pw_name) != 0)
      return false;
  /* Nor is it anybody else's primary group: such a user is in it without
   * being listed (Debian's OpenSSH looks for them the same way). */
  setpwent();
  for (const struct passwd *o; alone && (o = getpwent());)
    alone = o->pw_gid != st->st_gid || o->pw_uid == st->st_uid;
  endpwent();
  return alone;
}

/* The access ACL is read through a descriptor that can read it, which an
 * O_PATH one cannot. */
bool sr_dir_group_is_owners(int fd, const struct stat *st) {
  _cleanup_close_ int rd = -1;

  if (!sr_owners_private_group(st))
    return false;
  rd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return rd >= 0 && !sr_fd_acl_grants_others(rd, 2, geteuid());
}

/* Whether a user other than the directory's owner may write it, and so
 * (with write access to its parent) move it: writable by others, or by a
 * group that is not its owner's alone. */
static bool others_may_write(int fd, const struct stat *st) {
  return (st->st_mode & S_IWOTH) ||
         ((st->st_mode & S_IWGRP) && !sr_dir_group_is_owners(fd, st));
}

/* Whether a user other than me and root may move the directory fd (st):
 * its owner, or another who may write it. */
static bool others_may_move(int fd, const struct stat *st, uid_t me) {
  return (st->st_uid != me && st->st_uid != 0) || others_may_write(fd, st);
}

/*
 * A ".." out of cur, opened at *up: 0, or -SR_EFOREIGNLINK (*fl set) when
 * it may not be where the path says.  ".." is the parent a directory has
 * at that step of the walk: whoever may move the directory (another
 * owner, or another user who may write it and its parent) may put it,
 * between two steps, under a directory of theirs, whose ".." chain leads
 * where they like.  Safe when nobody else may move cur, or when the
 * directory reached is one nobody else may write or own: they could not
 * have moved cur there.
 */
static int open_dotdot(int cur, uid_t me, struct sr_foreign_link *fl, int *up) {
  _cleanup_close_ int fd = -1;
  struct stat st, pst;

  if (fstat(cur, &st) < 0)
    return -errno;
  fd = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -errno;
  if (others_may_move(cur, &st, me)) {
    if (fstat(fd, &pst) < 0)
      return -errno;
    if (others_may_move(fd, &pst, me)) {
      if (fl) {
        fl->uid = st.st_uid;
        fl->mode = st.st_mode;
        fl->dotdot = true;
      }
      return -SR_EFOREIGNLINK;
    }
  }
  *up = TAKE_FD(fd);
  return 0;
}

/* Symbolic links followed on a path, at most (the kernel's MAXSYMLINKS). */
#define PATH_MAX_LINKS 40

/* Appends "/comp" to the path as walked, for the messages. */
static void walked_add(struct sr_foreign_link *fl, size_t *wlen,
                       const char *comp) {
  if (!fl)
    return;
  *wlen +=
      (size_t)snprintf(fl->path + *wlen, sizeof(fl->path) - *wlen, "%s%s",
                       *wlen && fl->path[*wlen - 1] != '/' ? "/" : "", comp);
  if (*wlen >= sizeof(fl->path))
    *wlen = sizeof(fl->path) - 1;
}

/* One component of a walk, not followed if a symbolic link: O_DIRECTORY
 * first, which (unlike a bare O_PATH) triggers an automount point (an
 * autofs /home/NAME), then, for what is not a directory, without it. */
static int open_component(int dirfd, const char *name) {
  int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0 && errno == ENOTDIR)
    fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int sr_open_dir_path(int dirfd, const char *path, bool create, mode_t mode,
                     struct sr_foreign_link *fl) {
  _cleanup_close_ int cur = -1;
  _cleanup_free_ char *buf = NULL;
  char *rest;
  const uid_t me = geteuid();
  unsigned links = 0;
  size_t wlen = 0;

  if (strlen(path) >= PATH_MAX)
    return -ENAMETOOLONG;
  buf = strdup(path);
  if (!buf)
    return -ENOMEM;
  rest = buf;
  if (fl) {
    fl->path[0] = '\0';
    fl->uid = (uid_t)-1;
    fl->dotdot = false;
  }
  cur = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
                       : openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return -errno;
  if (path[0] == '/' && fl) {
    fl->path[0] = '/';
    fl->path[1] = '\0';
    wlen = 1;
  }
  while (*rest) {
    _cleanup_close_ int fd = -1;
    char *comp, target[PATH_MAX], *joined;
    struct stat st;
    ssize_t n;

    while (*rest == '/')
      rest++;
    if (!*rest)
      break;
    comp = rest;
    rest = strchrnul(rest, '/');
    if (*rest)
      *rest++ = '\0';
    if (!strcmp(comp, "."))
      continue;
    if (!strcmp(comp, "..")) {
      int r = open_dotdot(cur, me, fl, &fd);

      if (r < 0)
        return r;
      walked_add(fl, &wlen, comp);
      safe_close(cur);
      cur = TAKE_FD(fd);
      continue;
    }
    walked_add(fl, &wlen, comp);
    fd = open_component(cur, comp);
    if (fd == -ENOENT && create && strcmp(comp, "..") != 0) {
      if (mkdirat(cur, comp, mode) < 0 && errno != EEXIST)
        return -errno;
      fd = open_component(cur, comp);
    }
    if (fd < 0)
      return fd;
    if (fstat(fd, &st) < 0)
      return -errno;
    if (S_ISDIR(st.st_mode)) {
      safe_close(cur);
      cur = TAKE_FD(fd);
      continue;
    }
    if (!S_ISLNK(st.st_mode))
      return -ENOTDIR;
    if (st.st_uid != me && st.st_uid != 0) {
      if (fl)
        fl->uid = st.st_uid;
      return -SR_EFOREIGNLINK;
    }
    if (++links > PATH_MAX_LINKS)
      return -ELOOP;
    n = readlinkat(fd, "", target, sizeof(target));
    if (n < 0)
      return -errno;
    if ((size_t)n >= sizeof(target))
      return -ENAMETOOLONG;
    target[n] = '\0';
    /* Resolved from the link's directory (cur), or from "/". */
    if (fl && target[0] == '/') {
      fl->path[0] = '/';
      wlen = 1;
    } else if (fl) {
      size_t c = strlen(comp);

      wlen = wlen > c ? wlen - c : 0;
      if (wlen > 1 && fl->path[wlen - 1] == '/')
        wlen--;
    }
    if (fl)
      fl->path[wlen] = '\0';
    if (target[0] == '/') {
      safe_close(cur);
      cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (cur < 0)
        return -errno;
    }
    /* The link's target, then what was left of the path. */
    if (asprintf(&joined, "%s/%s", target, rest) < 0)
      return -ENOMEM;
    free(buf);
    buf = rest = joined;
  }
  return TAKE_FD(cur);
}

char *sr_foreign_link_why(const struct sr_foreign_link *fl, char *buf,
                          size_t len) {
  const char *dir = fl->path[0] ? fl->path : "the working directory";

  if (fl->dotdot && fl->uid != geteuid() && fl->uid != 0)
    snprintf(buf, len,
             "\"..\" out of %s, a directory of uid %u, not yours or "
             "root's, which its owner can move: not walked (name the path "
             "without \"..\")",
             dir, (unsigned)fl->uid);
  else if (fl->dotdot)
    snprintf(buf, len,
             "\"..\" out of %s, a directory others may write (mode %04o) "
             "and so move: not walked (name the path without \"..\")",
             dir, (unsigned)(fl->mode & 07777));
  else
    snprintf(buf, len,
             "the symbolic link %s belongs to uid %u, not to you or root: "
             "not followed",
             fl->path, (unsigned)fl->uid);
  return buf;
}

/* sr_open_path, keeping the directory the file was opened in (an O_PATH
 * fd) in *dir_out when it is not NULL. */
static int open_path_in(int dirfd, const char *path, int flags, mode_t mode,
                        struct sr_foreign_link *fl, int *dir_out) {
  _cleanup_close_ int dir = -1;
  const char *slash = strrchr(path, '/'), *name = path;
  int fd;

  /* "NAME/" asks for a directory, which none of these opens wants: the
   * path is still walked with the checks below, so that another user's
   * link on it is told as one and nothing is opened through it (openat
   * follows a last link before a slash, O_NOFOLLOW or not). */
  if (slash && !slash[1]) {
    dir = sr_open_dir_path(dirfd, path, false, 0, fl);
    return dir < 0 ? dir : -EISDIR;
  }
  /* The directories on the way: a symbolic link among them is followed
   * only when it is the caller's or root's. */
  if (slash) {
    _cleanup_free_ char *d =
        slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));

    if (!d)
      return -ENOMEM;
    dir = sr_open_dir_path(dirfd, d, false, 0, fl);
    if (dir < 0)
      return dir;
    dirfd = dir;
    name = slash + 1;
  }
  fd = openat(dirfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0)
    return -errno;
  if (dir_out) {
    if (dir < 0)
      dir = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
      int r = -errno;
      safe_close(fd);
      return r;
    }
    *dir_out = TAKE_FD(dir);
  }
  return fd;
}

int sr_open_path(int dirfd, const char *path, int flags, mode_t mode,
                 struct sr_foreign_link *fl) {
  return open_path_in(dirfd, path, flags, mode, fl, NULL);
}

int sr_open_regular_in(int dirfd, const char *path, uint64_t max,
                       struct stat *st, int *dir_out) {
  _cleanup_close_ int fd = -1, dir = -1;
  int rd;
  struct sr_foreign_link fl;
  struct stat own;

  if (!st)
    st = &own;
  fl.uid = (uid_t)-1;
  fl.dotdot = false;
  fl.mode = 0;
  /* O_PATH first: what is not a regular file is refused unopened, as
   * opening a device does things of its own (a watchdog starts, a tape
   * rewinds).  The file is then opened by that descriptor. */
  fd = open_path_in(dirfd, path, O_PATH, 0, &fl, dir_out ? &dir : NULL);
  if (fd == -SR_EFOREIGNLINK) {
    memset(st, 0, sizeof(*st));
    st->st_uid = fl.uid;
    st->st_mode = fl.dotdot ? S_IFDIR | (fl.mode & 07777) : S_IFLNK;
  }
  if (fd < 0)
    return fd;
  if (fstat(fd, st) < 0)
    return -errno;
  /* O_PATH | O_NOFOLLOW opens a link itself, where a plain open fails. */
  if (S_ISLNK(st->st_mode))
    return -ELOOP;
  if (!S_ISREG(st->st_mode))
    return -SR_ENOTREG;
  if ((uint64_t)st->st_size > max)
    return -EFBIG;
  /* O_NONBLOCK still: another process's lease on the file fails the open
   * (EWOULDBLOCK) instead of holding it for the lease break time. */
  rd = sr_fd_reopen(fd, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (rd < 0)
    return rd;
  if (dir_out)
    *dir_out = TAKE_FD(dir);
  return rd;
}

int sr_open_regular(int dirfd, const char *path, uint64_t max,
                    struct stat *st) {
  return sr_open_regular_in(dirfd, path, max, st, NULL);
}

/* The initial user namespace's inode (PROC_USER_INIT_INO in
 * include/linux/proc_ns.h, fixed since Linux 3.8): one readlink tells it
 * from every other.  Without a procfs (which a run needs anyway) the
 * namespace counts as the initial one, as before this was asked. */
#define INIT_USER_NS_LINK "user:[4026531837]"

static int userns_initial = -1;

bool sr_userns_initial(void) {
  if (userns_initial < 0) {
    char link[64];
    ssize_t n = readlink("/proc/self/ns/user", link, sizeof(link) - 1);

    if (n < 0) {
      userns_initial = 1;
    } else {
      link[n] = '\0';
      userns_initial = strcmp(link, INIT_USER_NS_LINK) == 0;
    }
  }
  return userns_initial;
}

/* The figure in the kernel's file `path` (overflowuid, overflowgid), or
 * 65534. */
static long read_overflow(const char *path) {
  char buf[32], *end;
  size_t len;
  unsigned long v;

  if (sr_read_file_into(AT_FDCWD, path, buf, sizeof(buf), &len) == 0) {
    errno = 0;
    v = strtoul(buf, &end, 10);
    if (errno == 0 && end != buf && v <= UINT32_MAX)
      return (long)v;
  }
  return 65534;
}

/* The kernel's overflow uid (what an unmapped owner shows as), or 65534. */
static uid_t overflow_uid(void) {
  static long overflow = -1;

  if (overflow < 0)
    overflow = read_overflow("/proc/sys/kernel/overflowuid");
  return (uid_t)overflow;
}

/* The kernel's overflow gid (what an unmapped group shows as), or 65534. */
static gid_t overflow_gid(void) {
  static long overflow = -1;

  if (overflow < 0)
    overflow = read_overflow("/proc/sys/kernel/overflowgid");
  return (gid_t)overflow;
}

/* The next line of a map file at *p ("inside outside count",
 * user_namespaces(7)) into v; false at the end or at a line that is not
 * three numbers. */
static bool map_line(char **p, unsigned long v[3]) {
  char *q = *p, *end;

  if (!q || !*q)
    return false;
  for (int k = 0; k < 3; k++, q = end) {
    errno = 0;
    v[k] = strtoul(q, &end, 10);
    if (end == q || errno != 0)
      return false;
  }
  *p = strchr(q, '\n') ? strchr(q, '\n') + 1 : NULL;
  return true;
}

/* Whether every id of [first, first + count) has a range in the map file;
 * false when the file cannot be read. */
static bool map_covers(const char *path, unsigned long first,
                       unsigned long count) {
  char buf[16384];
  size_t len;
  bool progress = true;

  if (sr_read_file_into(AT_FDCWD, path, buf, sizeof(buf), &len) < 0)
    return false;
  /* Ranges may come in any order: go over them until none takes the
   * next id. */
  while (count > 0 && progress) {
    unsigned long v[3];

    progress = false;
    for (char *p = buf; count > 0 && map_line(&p, v);) {
      if (first >= v[0] && first - v[0] < v[2]) {
        unsigned long take = v[2] - (first - v[0]);

        take = take < count ? take : count;
        first += take;
        count -= take;
        progress = true;
      }
    }
  }
  return count == 0;
}

bool sr_userns_root_outside_too(void) {
  char buf[16384];
  size_t len;
  unsigned long v[3];

  if (sr_userns_initial() || sr_read_file_into(AT_FDCWD, "/proc/self/uid_map",
                                               buf, sizeof(buf), &len) < 0)
    return false;
  for (char *p = buf; map_line(&p, v);)
    if (v[0] == 0 && v[2] > 0)
      return v[1] == 0;
  return false;
}

bool sr_uid_unmapped(uid_t uid) {
  if (sr_userns_initial() || uid != overflow_uid())
    return false;
  return !map_covers("/proc/self/uid_map", uid, 1);
}

bool sr_gid_may_be_unmapped(gid_t gid) {
  /* Where the namespace maps the overflow gid itself (unshare
   * --map-group=65534), a file showing it may be of that group or of any
   * group the namespace does not map: nothing tells them apart.  Only a
   * namespace that maps every gid has none unmapped. */
  return !sr_userns_initial() && gid == overflow_gid() &&
         !map_covers("/proc/self/gid_map", 0, UINT32_MAX);
}

bool sr_fd_owner_is_me(int fd, const struct stat *st) {
  const uid_t me = geteuid();
  char link[64];
  int rd;

  if (st->st_uid != me)
    return false;
  /* Where the caller's own uid is the overflow uid (unshare
   * --map-user=65534, --map-current-user as nobody), every file of an
   * owner the namespace does not map shows as the caller's: the kernel
   * tells them apart, refusing O_NOATIME to whoever does not own the file
   * (open(2)), and a capability does not count for an unmapped owner
   * (capable_wrt_inode_uidgid).  A file the caller cannot read counts as
   * not its own. */
  if (sr_userns_initial() || me != overflow_uid())
    return true;
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  rd = open(link, O_RDONLY | O_NOATIME | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (rd < 0)
    return false;
  safe_close(rd);
  return true;
}

bool sr_fd_owner_unmapped(int fd, const struct stat *st) {
  return st->st_uid != 0 &&
         (sr_uid_unmapped(st->st_uid) ||
          (st->st_uid == geteuid() && !sr_fd_owner_is_me(fd, st)));
}

static uint32_t root_pool_first, root_pool_count;
static int root_mode_ns = -1;

void sr_root_mode_ids(uint32_t first, uint32_t count) {
  if (first != root_pool_first || count != root_pool_count)
    root_mode_ns = -1;
  root_pool_first = first;
  root_pool_count = count;
}

bool sr_root_mode(void) {
  if (geteuid() != 0)
    return false;
  if (sr_userns_initial())
    return true;
  /* Root of a user namespace has root's reach only over the ids it maps:
   * `unshare -U -r` maps one, the caller's own.  Root mode needs the uid
   * pool's ids, host side, as uid and gid (sr_ns_write_maps). */
  if (root_mode_ns < 0)
    root_mode_ns =
        root_pool_count > 0 &&
        map_covers("/proc/self/uid_map", root_pool_first, root_pool_count) &&
        map_covers("/proc/self/gid_map", root_pool_first, root_pool_count);
  return root_mode_ns;
}

/*
 * OpenSSH's StrictModes, by descriptor: from the directory dirfd up to
 * the root, each must belong to root or `owner` and be writable by
 * nobody else, or whoever can write it can rename one file over another
 * (community.pub over official.pub), remove it, or swap the directory
 * below.  Above the file's own directory a sticky one (/tmp) is safe:
 * nobody may rename or remove there what they do not own, and the
 * directory below is checked for its owner.  Not the file's own: a name
 * missing there could be taken by a hard link to another of root's files
 * wherever fs.protected_hardlinks is 0.  ".." is walked, not the path the
 * file was named by, so what is checked is where the file is now.
 */
/* More levels than a path of PATH_MAX can have ("a/" each). */
#define DIR_CHAIN_MAX_LEVELS (PATH_MAX / 2)

/* One level of the walk: what is wrong with the directory fd (st), if
 * anything; *unmapped when its owner only shows as the caller's. */
static enum sr_dir_fault_kind
chain_level_fault(int fd, const struct stat *st, uid_t owner,
                  bool (*group_ok)(int fd, const struct stat *st),
                  unsigned flags, bool sticky, bool *unmapped) {
  const bool as_root =
      (flags & SR_CHAIN_UNMAPPED_AS_ROOT) && sr_fd_owner_unmapped(fd, st);

  *unmapped = false;
  if (st->st_uid != 0 && st->st_uid != owner && !as_root)
    return SR_DIR_OWNER;
  /* The caller's uid, which an unmapped owner's can show as. */
  if (st->st_uid != 0 && owner == geteuid() && !as_root &&
      !sr_fd_owner_is_me(fd, st)) {
    *unmapped = true;
    return SR_DIR_OWNER;
  }
  /* Root's, whatever its mode: owners only, as systemd's safe walk. */
  if ((flags & SR_CHAIN_ROOTS_ANY_MODE) && (st->st_uid == 0 || as_root))
    return SR_DIR_OK;
  if ((st->st_mode & S_IWOTH) && !sticky)
    return SR_DIR_OTHERS;
  if ((st->st_mode & S_IWGRP) && !sticky && !(group_ok && group_ok(fd, st)))
    return SR_DIR_GROUP;
  return SR_DIR_OK;
}

int sr_check_dir_chain(int dirfd, uid_t owner,
                       bool (*group_ok)(int fd, const struct stat *st),
                       unsigned flags, struct sr_dir_fault *fault) {
  _cleanup_close_ int cur = -1;
  struct stat st, root;
  int fd = dirfd;

  if (fstat(fd, &st) < 0 || stat("/", &root) < 0)
    return -errno;
  for (unsigned level = 0;; level++) {
    const bool sticky =
        (level > 0 || (flags & SR_CHAIN_STICKY_HERE)) && (st.st_mode & S_ISVTX);
    struct stat up;
    int next;

    fault->why = chain_level_fault(fd, &st, owner, group_ok, flags, sticky,
                                   &fault->unmapped);
    if (fault->why != SR_DIR_OK) {
      char link[64];
      ssize_t n;

      fault->uid = st.st_uid;
      fault->unmapped = fault->unmapped || (fault->why == SR_DIR_OWNER &&
                                            sr_uid_unmapped(st.st_uid));
      fault->mode = st.st_mode;
      snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
      n = readlink(link, fault->path, sizeof(fault->path) - 1);
      if (n <= 0)
        n = snprintf(fault->path, sizeof(fault->path),
                     "(%u levels above the file)", level + 1);
      fault->path[n] = '\0';
      return -EPERM;
    }
    next = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (next < 0)
      return -errno;
    if (fstat(next, &up) < 0) {
      int r = -errno;
      safe_close(next);
      return r;
    }
    safe_close(cur);
    cur = fd = next;
    /* The root's ".." is itself (also a chroot's or a namespace's).  Not
     * every directory whose ".." has its inode is the root: a directory
     * bound onto one below it (mount --bind /a /a/sub) shows /a's inode
     * at /a/sub, whose ".." is /a; the walk goes on above it. */
    if (up.st_dev == st.st_dev && up.st_ino == st.st_ino &&
        up.st_dev == root.st_dev && up.st_ino == root.st_ino)
      return 0;
    if (level >= DIR_CHAIN_MAX_LEVELS)
      return -ELOOP;
    st = up;
  }
}

const char *sr_dir_fault_why(const struct sr_dir_fault *f, char *buf,
                             size_t len) {
  const unsigned mode = (unsigned)(f->mode & 07777);

  if (f->why == SR_DIR_OWNER && f->unmapped)
    snprintf(buf, len,
             "is in directory %s, whose owner this user namespace does not "
             "map (shown as uid %u): root or another user alike, who could "
             "rename or replace it (name a file whose directories are yours "
             "or root's as mapped here)",
             f->path, (unsigned)f->uid);
  else if (f->why == SR_DIR_OWNER && !sr_userns_initial() &&
           f->uid == overflow_uid())
    /* A namespace that maps the overflow uid itself (0 -> 100000 x
     * 65536) shows an owner it does not map, root's /tmp among them, as
     * that uid: "chown root" could not be the advice. */
    snprintf(buf, len,
             "is in directory %s of uid %u, or of an owner this user "
             "namespace does not map, which shows as that uid (root or "
             "another user alike), who could rename or replace it (name a "
             "file whose directories are yours or root's as mapped here)",
             f->path, (unsigned)f->uid);
  else if (f->why == SR_DIR_OWNER)
    snprintf(buf, len,
             "is in directory %s of uid %u, who can rename or replace it "
             "(move it, or chown root %s)",
             f->path, (unsigned)f->uid, f->path);
  else
    snprintf(buf, len,
             "is in directory %s, writable by %s (mode %04o), who can "
             "rename or replace it (chmod go-w %s)",
             f->path, f->why == SR_DIR_OTHERS ? "others" : "its group", mode,
             f->path);
  return buf;
}

static const char *file_kind(mode_t mode) {
  switch (mode & S_IFMT) {
  case S_IFDIR:
    return "a directory";
  case S_IFIFO:
    return "a FIFO";
  case S_IFSOCK:
    return "a socket";
  case S_IFCHR:
    return "a character device";
  case S_IFBLK:
    return "a block device";
  default:
    return "something else";
  }
}

char *sr_open_regular_why(int r, const struct stat *st, uint64_t max, char *buf,
                          size_t len) {
  if (r == -ELOOP)
    snprintf(buf, len,
             "is a symbolic link (not accepted: name the file itself)");
  else if (r == -SR_EFOREIGNLINK && st && S_ISDIR(st->st_mode) &&
           (st->st_uid == geteuid() || st->st_uid == 0))
    snprintf(buf, len,
             "is reached through \"..\" out of a directory others may "
             "write (mode %04o) and so move (not walked: name the file "
             "without \"..\")",
             (unsigned)(st->st_mode & 07777));
  else if (r == -SR_EFOREIGNLINK && st && S_ISDIR(st->st_mode))
    snprintf(buf, len,
             "is reached through \"..\" out of a directory of uid %u, "
             "who can move it (not walked: name the file without \"..\")",
             (unsigned)st->st_uid);
  else if (r == -SR_EFOREIGNLINK && st)
    snprintf(buf, len,
             "is reached through a symbolic link of uid %u, not yours or "
             "root's (not followed: name the file by its own path)",
             (unsigned)st->st_uid);
  else if (r == -SR_ENOTREG && st)
    snprintf(buf, len, "is %s, not a regular file", file_kind(st->st_mode));
  else if (r == -EFBIG && st)
    snprintf(buf, len, "is too large (%jd bytes, at most %ju)",
             (intmax_t)st->st_size, (uintmax_t)max);
  else
    snprintf(buf, len, "cannot be opened");
  return buf;
}

/* Opens dirfd/path for writing (mode O_WRONLY or O_RDWR) and writes s:
 * the descriptor, or -errno. */
static int open_write(int dirfd, const char *path, int mode, const char *s) {
  int fd = openat(dirfd, path, mode | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  int r;

  if (fd < 0)
    return -errno;
  r = sr_write_all(fd, s, strlen(s));
  if (r < 0) {
    safe_close(fd);
    return r;
  }
  return fd;
}

int sr_write_file_at(int dirfd, const char *path, const char *s) {
  int fd = open_write(dirfd, path, O_WRONLY, s);

  if (fd < 0)
    return fd;
  safe_close(fd);
  return 0;
}

int sr_write_read_back_at(int dirfd, const char *path, const char *s,
                          char *back, size_t size, const char **step) {
  _cleanup_close_ int fd = -1;
  ssize_t n;

  *step = "write";
  if (size < 2)
    return -EINVAL;
  fd = open_write(dirfd, path, O_RDWR, s);
  if (fd < 0)
    return fd;
  *step = "read back";
  do
    n = pread(fd, back, size - 1, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -errno;
  if ((size_t)n == size - 1)
    return -EFBIG; /* more than the caller expects: not compared cut short */
  back[n] = '\0';
  return 0;
}

void sr_dir_init(struct sr_dir *d, int fd) {
  d->fd = fd;
  d->pos = d->len = 0;
}

int sr_dir_next(struct sr_dir *d, const char **name, unsigned char *type) {
  *name = ""; /* what a caller reads on the end or an error */
  *type = DT_UNKNOWN;
  for (;;) {
    const struct dirent64 *de;

    if (d->pos >= d->len) {
      ssize_t n;

      do
        n = getdents64(d->fd, d->u.buf, sizeof(d->u.buf));
      while (n < 0 && errno == EINTR);
      if (n < 0)
        return -errno;
      if (n == 0)
        return 0;
      d->pos = 0;
      d->len = (size_t)n;
    }
    de = (const struct dirent64 *)(d->u.buf + d->pos);
    /* The kernel's records fill what it returned, one after another;
     * one that does not is never walked past. */
    if (de->d_reclen <= offsetof(struct dirent64, d_name) ||
        de->d_reclen > d->len - d->pos)
      return -EIO;
    d->pos += de->d_reclen;
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    *name = de->d_name;
    *type = de->d_type;
    return 1;
  }
}

/*
 * Opens the directory name below dfd to remove what is in it, never
 * following a link: its descriptor, made owner-writable when it is not (a
 * read-only copy's 0555 directories); -ENOTDIR when name is not a
 * directory (a link included: the caller unlinks it); -EXDEV when it is on
 * another file system than *dev (a mount, never entered; *dev 0: any, set
 * to the directory's); or -errno.  What is checked is the directory
 * opened, not one seen by name before it.
 */
static int open_for_removal(int dfd, const char *name, dev_t *dev) {
  struct stat st;
  int fd, r;

  fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ELOOP ? -ENOTDIR : -errno;
  if (fstat(fd, &st) < 0) {
    r = -errno;
    safe_close(fd);
    return r;
  }
  if (*dev && st.st_dev != *dev) {
    safe_close(fd);
    return -EXDEV;
  }
  *dev = st.st_dev;
  /* A failure shows up as the unlinks that follow. */
  if ((st.st_mode & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR))
    (void)fchmod(fd, 0700);
  return fd;
}

/* Removes what is below the directory fd (closed before returning). */
static int rm_rf_children(int fd, dev_t dev, unsigned depth) {
  _cleanup_close_ int dfd = fd;
  _cleanup_free_ struct sr_dir *d = NULL;
  const char *name;
  unsigned char type;
  int r = 0, n;

  if (depth > 256)
    return -ELOOP;
  d = malloc(sizeof(*d));
  if (!d)
    return -ENOMEM;
  sr_dir_init(d, dfd);
  while ((n = sr_dir_next(d, &name, &type)) > 0) {
    dev_t sub_dev = dev;
    int sub = -ENOTDIR, q;

    /* What the file system says is not a directory is unlinked as it is
     * (never followed); the rest is opened as a directory first. */
    if (type == DT_DIR || type == DT_UNKNOWN)
      sub = open_for_removal(dfd, name, &sub_dev);
    if (sub == -ENOTDIR) {
      if (unlinkat(dfd, name, 0) < 0 && errno != ENOENT && r == 0)
        r = -errno;
      continue;
    }
    if (sub < 0) {
      if (sub != -ENOENT && r == 0)
        r = sub; /* -EXDEV: another mount, never descended into */
      continue;
    }
    q = rm_rf_children(sub, dev, depth + 1);
    if (q < 0 && r == 0)
      r = q;
    if (unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
      r = -errno;
  }
  if (n < 0 && r == 0)
    r = n;
  return r;
}

int sr_rm_rf_at(int dirfd, const char *name) {
  dev_t dev = 0;
  int fd, r;

  fd = open_for_removal(dirfd, name, &dev);
  if (fd == -ENOENT)
    return 0;
  if (fd == -ENOTDIR)
    return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
  if (fd < 0)
    return fd;
  r = rm_rf_children(fd, dev, 0);
  if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT && r == 0)
    r = -errno;
  return r;
}

static int cmp_int(const void *a, const void *b) {
  return *(const int *)a - *(const int *)b;
}

int sr_close_all_fds_except(int from, const int *keep, size_t n_keep) {
  int sorted[16];
  unsigned int lo = (unsigned int)from;

  if (n_keep > SR_ARRAY_SIZE(sorted))
    return -E2BIG;
  memcpy(sorted, keep, n_keep * sizeof(int));
  qsort(sorted, n_keep, sizeof(int), cmp_int);
  for (size_t i = 0; i <= n_keep; i++) {
    unsigned int hi = i < n_keep ? (unsigned int)sorted[i] : ~0U;
    if (i < n_keep && sorted[i] < from)
      continue;
    if (hi > lo && syscall(SYS_close_range, lo, hi - 1, 0) < 0)
      return -errno;
    if (i < n_keep)
      lo = hi + 1;
  }
  return 0;
}

int sr_fd_cloexec(int fd, bool on) {
  int flags = fcntl(fd, F_GETFD);

  if (flags < 0)
    return -errno;
  flags = on ? flags | FD_CLOEXEC : flags & ~FD_CLOEXEC;
  if (fcntl(fd, F_SETFD, flags) < 0)
    return -errno;
  return 0;
}

int sr_random_uuid(char out[37]) {
  static const char digits[] = "0123456789abcdef";
  unsigned char b[16];
  char hex[33];
  ssize_t n;

  n = getrandom(b, sizeof(b), 0);
  if (n < 0)
    return -errno;
  if ((size_t)n != sizeof(b))
    return -EIO;
  b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
  b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
  for (size_t i = 0; i < sizeof(b); i++) {
    hex[2 * i] = digits[b[i] >> 4];
    hex[2 * i + 1] = digits[b[i] & 0xf];
  }
  hex[32] = '\0';
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12,
           hex + 16, hex + 20);
  return 0;
}

/*
 * Not gmtime_r(3) and strftime(3): the C library's first conversion of
 * either kind loads the time zone (/etc/localtime: seven system calls in
 * every run) that a UTC stamp never uses.  The date is the proleptic
 * Gregorian calendar's, counted in 400-year eras of 146,097 days from
 * 0000-03-01 (so that a leap day ends its year); a clock before 1970 is
 * stamped 1970-01-01.
 */
void sr_format_rfc3339(const struct timespec *ts, char buf[32]) {
  uint64_t t = ts->tv_sec > 0 ? (uint64_t)ts->tv_sec : 0;
  uint64_t z = t / 86400 + 719468, sec = t % 86400;
  uint64_t era = z / 146097, doe = z % 146097;
  uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  uint64_t mp = (5 * doy + 2) / 153;
  unsigned day = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
  unsigned mon = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
  uint64_t year = era * 400 + yoe + (mon <= 2);
  long usec = ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000
                  ? ts->tv_nsec / 1000
                  : 0;

  snprintf(buf, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%06luZ",
           (unsigned)(year % 10000), mon % 100u, day % 100u,
           (unsigned)(sec / 3600), (unsigned)(sec / 60 % 60),
           (unsigned)(sec % 60), (unsigned long)usec % 1000000ul);
}

void sr_now_rfc3339(char buf[32]) {
  struct timespec ts;

  clock_gettime(CLOCK_REALTIME, &ts);
  sr_format_rfc3339(&ts, buf);
}

/* Every signal whose default action ends the process and that comes from
 * outside (a terminal's Ctrl-C and Ctrl-\, kill(1), a scheduler's warning,
 * the supervisor's own CPU rlimit, an orchestrator's configured stop
 * signal), in the order a pending one is picked, then the real-time
 * signals: SIGKILL alone ends skillrun without the run's record.  The
 * fault signals count when they are sent (kill -SEGV): blocked, they are
 * read as any other; a real fault still ends skillrun, since the kernel
 * delivers a fault's signal even when it is blocked. */
static const int cancel_signals[] = {
    SIGINT,    SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,  SIGALRM,
    SIGVTALRM, SIGPROF, SIGIO,  SIGPWR,  SIGXCPU, SIGABRT,  SIGSEGV,
    SIGBUS,    SIGILL,  SIGFPE, SIGTRAP, SIGSYS,  SIGSTKFLT};

/* Left ignored by the caller (nohup(1)'s SIGHUP), a signal stays so; not
 * SIGINT, which a shell ignores for every command it starts in the
 * background, nor SIGTERM. */
static void add_cancel(sigset_t *mask, int sig) {
  struct sigaction sa;

  if (sig != SIGINT && sig != SIGTERM && sigaction(sig, NULL, &sa) == 0 &&
      sa.sa_handler == SIG_IGN)
    return;
  sigaddset(mask, sig);
}

void sr_cancel_set(sigset_t *set) {
  static sigset_t mask;
  static bool made;

  if (!made) {
    sigemptyset(&mask);
    for (size_t i = 0; i < SR_ARRAY_SIZE(cancel_signals); i++)
      add_cancel(&mask, cancel_signals[i]);
    /* From the C library's SIGRTMIN: the two below it are its own. */
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
      add_cancel(&mask, sig);
    made = true;
  }
  *set = mask;
}

int sr_cancel_block(void) {
  sigset_t set;

  sr_cancel_set(&set);
  return sigprocmask(SIG_BLOCK, &set, NULL) < 0 ? -errno : 0;
}

/* Only a blocked signal stays pending: one left ignored never is. */
int sr_cancel_pending(void) {
  sigset_t pending;

  if (sigpending(&pending) < 0)
    return 0;
  for (size_t i = 0; i < SR_ARRAY_SIZE(cancel_signals); i++)
    if (sigismember(&pending, cancel_signals[i]) == 1)
      return cancel_signals[i];
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
    if (sigismember(&pending, sig) == 1)
      return sig;
  return 0;
}

int sr_read_fd_cancellable(int fd, size_t max, char **out, size_t *len) {
  _cleanup_close_ int sfd = -1;
  _cleanup_free_ char *buf = NULL;
  size_t used = 0, size = 0;
  sigset_t set;
  int fl = fcntl(fd, F_GETFL);

  /* A write-only end never polls readable: refused as read(2) would. */
  if (fl < 0)
    return -errno;
  if ((fl & O_ACCMODE) == O_WRONLY)
    return -EBADF;
  /* Readable while a cancellation signal is pending; polling it takes
   * none, so the run still finds the signal to report. */
  sr_cancel_set(&set);
  sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    return -errno;
  for (;;) {
    struct pollfd p[2] = {{.fd = fd, .events = POLLIN},
                          {.fd = sfd, .events = POLLIN}};
    ssize_t n;

    if (poll(p, 2, -1) < 0) {
      if (errno == EINTR)
        continue;
      return -errno;
    }
    if (p[1].revents)
      return -ECANCELED;
    if (!p[0].revents)
      continue;
    if (used == size) {
      size_t nsize = size ? size * 2 : 4096;
      char *nbuf;
      if (nsize > max + 1)
        nsize = max + 1;
      nbuf = realloc(buf, nsize + 1);
      if (!nbuf)
        return -ENOMEM;
      buf = nbuf;
      size = nsize;
    }
    /* Readable (or hung up, or in error): this read does not wait. */
    n = read(fd, buf + used, size - used);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN)
        continue;
      return -errno;
    }
    if (n == 0)
      break;
    used += (size_t)n;
    if (used > max)
      return -EFBIG;
  }
  if (!buf && !(buf = malloc(1)))
    return -ENOMEM;
  buf[used] = '\0';
  *out = TAKE_PTR(buf);
  if (len)
    *len = used;
  return 0;
}

int sr_cancel_poll(void) {
  /* Per thread: --digest hashes a big bundle on two. */
  static _Thread_local uint64_t next_ns;
  uint64_t now = sr_now_mono_ns();
  int sig;

  if (now < next_ns)
    return 0;
  sig = sr_cancel_pending();
  if (sig == 0)
    next_ns = now + 1000000u;
  return sig;
}

uint64_t sr_now_mono_ns(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sr_now_mono_ms(void) {
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* xorshift64*: which names a collection looks at, nothing more. */
static uint64_t sample_next(void) {
  static uint64_t x;
  struct timespec ts;

  if (!x &&
      (getrandom(&x, sizeof(x), GRND_NONBLOCK) != (ssize_t)sizeof(x) || !x)) {
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    x = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^
        (uint64_t)getpid() ^ 0x9E3779B97F4A7C15ULL;
  }
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  return x * 0x2545F4914F6CDD1DULL;
}

int sr_name_sample_init(struct sr_name_sample *s, unsigned max) {
  s->seen = 0;
  s->max = max;
  s->names = calloc(max, sizeof(*s->names));
  return s->names ? 0 : -ENOMEM;
}

void sr_name_sample_offer(struct sr_name_sample *s, const char *name) {
  uint64_t slot = s->seen < s->max ? s->seen : sample_next() % (s->seen + 1);

  if (slot < s->max)
    snprintf(s->names[slot], sizeof(s->names[slot]), "%s", name);
  s->seen++;
}

unsigned sr_name_sample_count(const struct sr_name_sample *s) {
  return s->seen < s->max ? (unsigned)s->seen : s->max;
}

const char *sr_name_sample_get(const struct sr_name_sample *s, unsigned i) {
  return s->names[i];
}

void sr_name_sample_done(struct sr_name_sample *s) {
  free(s->names);
  s->names = NULL;
}

bool sr_fd_acl_grants_others(int fd, unsigned perm, uid_t except) {
  _cleanup_free_ unsigned char *buf = NULL;
  unsigned mask = 7;
  ssize_t n = fgetxattr(fd, "system.posix_acl_access", NULL, 0);

  if (n < 0)
    return errno != ENODATA && errno != ENOTSUP && errno != EOPNOTSUPP;
  /* The kernel's format (linux/posix_acl_xattr.h), little-endian: a
   * version (2), then entries of a tag, a permission and an id. */
  if (n < 4 || (n - 4) % 8 != 0 || n > 65536 || !(buf = malloc((size_t)n)))
    return true;
  if (fgetxattr(fd, "system.posix_acl_access", buf, (size_t)n) != n ||
      le32toh(*(uint32_t *)(void *)buf) != 2)
    return true;
  for (ssize_t i = 4; i < n; i += 8)
    if (le16toh(*(uint16_t *)(void *)(buf + i)) == 0x10) /* ACL_MASK */
      mask = le16toh(*(uint16_t *)(void *)(buf + i + 2));
  for (ssize_t i = 4; i < n; i += 8) {
    unsigned tag = le16toh(*(uint16_t *)(void *)(buf + i));
    unsigned e_perm = le16toh(*(uint16_t *)(void *)(buf + i + 2));
    uint32_t id = le32toh(*(uint32_t *)(void *)(buf + i + 4));

    if (!(e_perm & mask & perm))
      continue;
    if ((tag == 0x02 && id != (uint32_t)except) || /* ACL_USER */
        tag == 0x08)                               /* ACL_GROUP */
      return true;
  }
  return false;
}
