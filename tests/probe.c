/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * probe: runs inside the sandbox and reports what it sees, one "key=value"
 * per line (values never contain a newline), so shell tests can grep it.
 *
 *   probe [--host-path PATH]   full report (exit 0)
 *   probe exit N               exit with status N
 *   probe sleep SECONDS        sleep, then exit 0
 *   probe daemon [FILE]        leave a setsid'd, SIGTERM-ignoring grandchild
 *                              behind; its pid is printed and written to FILE
 *   probe write-stdout BYTES   write BYTES 'x' to stdout as fast as possible
 *   probe write-stderr BYTES   the same on stderr
 *   probe kill-self SIG        raise SIG (number or name, "KILL", "SIGSEGV")
 *
 * Only libc: it must run wherever /usr is bound.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *errname(int e) {
  const char *n = strerrorname_np(e);
  return n ? n : "EUNKNOWN";
}

/* Prints a value with any newline or control byte made visible, so one
 * key is always one line. */
static void put_value(const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '\n')
      fputs("\\n", stdout);
    else if (ch < 0x20 || ch == 0x7f)
      printf("\\x%02x", ch);
    else
      putchar(ch);
  }
}

static void kv(const char *key, const char *value) {
  printf("%s=", key);
  put_value(value);
  putchar('\n');
}

static void kv_long(const char *key, long v) {
  printf("%s=%ld\n", key, v);
}

static void reach(const char *what, int r) {
  printf("reach:%s=%s\n", what, r == 0 ? "OK" : errname(-r));
}

/* Reads a small text file; "" on failure (and *err set). */
static int read_small(const char *path, char *buf, size_t len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return -errno;
  n = read(fd, buf, len - 1);
  if (n < 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  close(fd);
  buf[n] = '\0';
  return 0;
}

static void report_status_fields(void) {
  static const struct {
    const char *field, *key;
  } fields[] = {
      {"CapInh:", "cap_inh"}, {"CapPrm:", "cap_prm"}, {"CapEff:", "cap_eff"},
      {"CapBnd:", "cap_bnd"}, {"CapAmb:", "cap_amb"}, {"Seccomp:", "seccomp"},
      {"SigBlk:", "sig_blk"}, {"SigIgn:", "sig_ign"},
  };
  char buf[8192], *line, *save = NULL;
  int r = read_small("/proc/self/status", buf, sizeof(buf));

  if (r < 0) {
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
      kv(fields[i].key, errname(-r));
    return;
  }
  for (line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save))
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
      size_t n = strlen(fields[i].field);
      if (strncmp(line, fields[i].field, n) == 0) {
        const char *v = line + n;
        while (*v == ' ' || *v == '\t')
          v++;
        kv(fields[i].key, v);
      }
    }
}

static void report_ids(void) {
  gid_t groups[NGROUPS_MAX];
  int n = getgroups(NGROUPS_MAX, groups);

  kv_long("uid", (long)getuid());
  kv_long("gid", (long)getgid());
  kv_long("euid", (long)geteuid());
  kv_long("egid", (long)getegid());
  printf("groups=");
  if (n < 0)
    printf("%s", errname(errno));
  for (int i = 0; i < n; i++)
    printf("%s%ld", i ? "," : "", (long)groups[i]);
  putchar('\n');
}

static void report_prctl(void) {
  int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

  if (r < 0)
    kv("no_new_privs", errname(errno));
  else
    kv_long("no_new_privs", r);
  r = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
  if (r < 0)
    kv("securebits", errname(errno));
  else
    printf("securebits=0x%x\n", (unsigned)r);
}

/* pid1_netns=same when a TCP listener of ours on 127.0.0.1 shows in
 * /proc/1/net/tcp, the table of pid 1's network namespace; other if not. */
static void report_pid1_netns(void) {
  struct sockaddr_in a = {.sin_family = AF_INET};
  socklen_t len = sizeof(a);
  char line[512], want[32];
  const char *res = "other";
  FILE *f;
  int fd;

  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
      listen(fd, 1) < 0 || getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
    kv("pid1_netns", errname(errno));
    if (fd >= 0)
      close(fd);
    return;
  }
  snprintf(want, sizeof(want), "0100007F:%04X 00000000:0000 0A",
           (unsigned)ntohs(a.sin_port));
  f = fopen("/proc/1/net/tcp", "re");
  if (!f) {
    kv("pid1_netns", errname(errno));
    close(fd);
    return;
  }
  while (fgets(line, sizeof(line), f))
    if (strstr(line, want))
      res = "same";
  fclose(f);
  close(fd);
  kv("pid1_netns", res);
}

static void report_net(void) {
  /* The interfaces as /proc/net/dev lists them (two header lines, then
   * "NAME: counters..."): if_nameindex(3) asks over rtnetlink, which the
   * filter refuses. */
  FILE *dev = fopen("/proc/net/dev", "re");
  struct ifreq ifr;
  char line[256];
  unsigned lines = 0, n = 0;
  int fd;

  printf("ifaces=");
  if (!dev) {
    printf("%s", errname(errno));
  } else {
    while (fgets(line, sizeof(line), dev)) {
      char *colon = strchr(line, ':'), *name = line;

      if (++lines <= 2 || !colon)
        continue;
      *colon = '\0';
      name += strspn(name, " ");
      printf("%s%s", n++ ? "," : "", name);
    }
    fclose(dev);
  }
  putchar('\n');

  fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    kv("lo_up", errname(errno));
    return;
  }
  memset(&ifr, 0, sizeof(ifr));
  snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
    kv("lo_up", errname(errno));
  else
    kv_long("lo_up", (ifr.ifr_flags & IFF_UP) ? 1 : 0);
  close(fd);
  report_pid1_netns();
}

static void report_procs(void) {
  char buf[64];
  int r;

  kv_long("pid", (long)getpid());
  kv_long("ppid", (long)getppid());
  kv_long("sid", (long)getsid(0));
  kv_long("pgid", (long)getpgid(0));
  r = read_small("/proc/1/comm", buf, sizeof(buf));
  if (r < 0) {
    kv("pid1_comm", errname(-r));
  } else {
    buf[strcspn(buf, "\n")] = '\0';
    kv("pid1_comm", buf);
  }
}

static void report_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  struct dirent *de;
  bool first = true;

  printf("fds=");
  if (!d) {
    printf("%s\n", errname(errno));
    return;
  }
  /* Sorted numerically for a stable line. */
  {
    long fds[1024];
    size_t n = 0;
    while ((de = readdir(d)) && n < 1024) {
      char *end;
      long fd = strtol(de->d_name, &end, 10);
      if (de->d_name[0] == '.' || *end || fd == dirfd(d))
        continue;
      fds[n++] = fd;
    }
    for (size_t i = 1; i < n; i++)
      for (size_t j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
        long t = fds[j];
        fds[j] = fds[j - 1];
        fds[j - 1] = t;
      }
    for (size_t i = 0; i < n; i++) {
      printf("%s%ld", first ? "" : ",", fds[i]);
      first = false;
    }
  }
  closedir(d);
  putchar('\n');
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void report_dev(void) {
  DIR *d = opendir("/dev");
  struct dirent *de;
  char *names[256];
  size_t n = 0;

  printf("dev=");
  if (!d) {
    printf("%s\n", errname(errno));
    return;
  }
  while ((de = readdir(d)) && n < 256) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
      continue;
    names[n] = strdup(de->d_name);
    if (names[n])
      n++;
  }
  closedir(d);
  qsort(names, n, sizeof(names[0]), cmp_str);
  for (size_t i = 0; i < n; i++) {
    printf("%s%s", i ? "," : "", names[i]);
    free(names[i]);
  }
  putchar('\n');
}

static void report_misc(void) {
  char buf[PATH_MAX];

  if (gethostname(buf, sizeof(buf)) < 0)
    kv("hostname", errname(errno));
  else
    kv("hostname", buf);
  if (!getcwd(buf, sizeof(buf)))
    kv("cwd", errname(errno));
  else
    kv("cwd", buf);
  for (char **e = environ; e && *e; e++)
    kv("env", *e);
}

/* mountinfo(5): field 5 is the mount point, field 6 the per-mount options. */
static void report_mounts(void) {
  FILE *f = fopen("/proc/self/mountinfo", "re");
  char *line = NULL;
  size_t cap = 0;
  long count = 0;

  if (!f) {
    kv("mountinfo", errname(errno));
    return;
  }
  while (getline(&line, &cap, f) > 0) {
    char *fields[6], *s = line;
    size_t nf = 0;

    line[strcspn(line, "\n")] = '\0';
    while (nf < 6 && (fields[nf] = strsep(&s, " ")))
      nf++;
    if (nf < 6)
      continue;
    count++;
    printf("mount=");
    put_value(fields[4]);
    putchar(' ');
    put_value(fields[5]);
    putchar('\n');
  }
  free(line);
  fclose(f);
  kv_long("mountinfo", count);
}

static int try_open(const char *path, int flags) {
  int fd = open(path, flags | O_CLOEXEC, 0644);
  if (fd < 0)
    return -errno;
  close(fd);
  return 0;
}

/* Open and read one byte: a /dev/null mask reads as EMPTY, not OK. */
static void reach_read(const char *what, const char *path) {
  char c;
  ssize_t n;
  int fd = open(path, O_RDONLY | O_CLOEXEC);

  if (fd < 0) {
    reach(what, -errno);
    return;
  }
  n = read(fd, &c, 1);
  if (n < 0)
    printf("reach:%s=%s\n", what, errname(errno));
  else
    printf("reach:%s=%s\n", what, n > 0 ? "OK" : "EMPTY");
  close(fd);
}

static void reach_write(const char *what, const char *path, int flags) {
  int fd = open(path, flags | O_WRONLY | O_CLOEXEC, 0644);
  int r = 0;

  if (fd < 0) {
    reach(what, -errno);
    return;
  }
  if (write(fd, "x", 1) < 0)
    r = -errno;
  close(fd);
  reach(what, r);
}

/* Creates a file and removes it again: the probe leaves nothing behind. */
static void reach_create(const char *what, const char *path) {
  int r = try_open(path, O_WRONLY | O_CREAT | O_EXCL);

  if (r == 0)
    (void)unlink(path); /* best effort: a report line matters more */
  reach(what, r);
}

static void reach_stat(const char *what, const char *path) {
  struct stat st;
  reach(what, stat(path, &st) < 0 ? -errno : 0);
}

static void report_reach(const char *host_path) {
  int r;

  reach_read("proc_kcore", "/proc/kcore");
  reach_write("core_pattern", "/proc/sys/kernel/core_pattern", 0);
  reach("etc_shadow", try_open("/etc/shadow", O_RDONLY));
  reach_stat("home", "/home");
  reach_stat("root", "/root");
  reach_stat("sys_kernel", "/sys/kernel");
  reach("sysrq_trigger", try_open("/proc/sysrq-trigger", O_WRONLY));
  reach_create("bundle_write", "/workspace/inputs/bundle/probe-x");
  reach_create("usr_write", "/usr/probe-x");
  reach_create("root_write", "/probe-x");
  reach("etc_passwd_write", try_open("/etc/passwd", O_WRONLY | O_APPEND));
  reach_create("tmp_write", "/tmp/probe-x");
  reach_create("scratch_write", "/workspace/scratch/probe-x");
  reach_create("outputs_write", "/workspace/outputs/probe-x");
  r = mknod("/tmp/probe-dev", S_IFCHR | 0600, makedev(1, 3)) < 0 ? -errno : 0;
  if (r == 0)
    (void)unlink("/tmp/probe-dev"); /* best effort, see reach_create */
  reach("mknod", r);
  if (host_path)
    reach_stat("host_path", host_path);
}

static int report(const char *host_path) {
  report_ids();
  report_status_fields();
  report_prctl();
  report_net();
  report_procs();
  report_fds();
  report_misc();
  report_dev();
  report_mounts();
  report_reach(host_path);
  return fflush(stdout) == 0 ? 0 : 1;
}

static long parse_num(const char *s) {
  char *end;
  long v;

  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || end == s || *end) {
    fprintf(stderr, "probe: bad number '%s'\n", s);
    exit(2);
  }
  return v;
}

static int parse_signal(const char *s) {
  if (s[0] >= '0' && s[0] <= '9')
    return (int)parse_num(s);
  if (strncasecmp(s, "SIG", 3) == 0)
    s += 3;
  for (int sig = 1; sig < NSIG; sig++) {
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev && strcasecmp(abbrev, s) == 0)
      return sig;
  }
  fprintf(stderr, "probe: unknown signal '%s'\n", s);
  exit(2);
}

static int write_bytes(int fd, long total) {
  static char chunk[65536];

  memset(chunk, 'x', sizeof(chunk));
  while (total > 0) {
    size_t n = total > (long)sizeof(chunk) ? sizeof(chunk) : (size_t)total;
    ssize_t w = write(fd, chunk, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return 1;
    }
    total -= w;
  }
  return 0;
}

static int do_daemon(const char *file) {
  int p[2];
  pid_t child, grandchild = 0;
  int status;

  if (pipe2(p, O_CLOEXEC) < 0)
    return 1;
  child = fork();
  if (child < 0)
    return 1;
  if (child == 0) {
    pid_t gc;

    if (setsid() < 0)
      _exit(1);
    gc = fork();
    if (gc < 0)
      _exit(1);
    if (gc == 0) {
      pid_t me = getpid();

      signal(SIGTERM, SIG_IGN);
      if (write(p[1], &me, sizeof(me)) != sizeof(me))
        _exit(1);
      close(p[1]);
      close(p[0]);
      for (;;)
        pause();
    }
    _exit(0);
  }
  close(p[1]);
  if (read(p[0], &grandchild, sizeof(grandchild)) != sizeof(grandchild))
    return 1;
  close(p[0]);
  if (waitpid(child, &status, 0) < 0)
    return 1;
  printf("daemon_pid=%ld\n", (long)grandchild);
  if (file) {
    FILE *f = fopen(file, "we");
    if (!f) {
      fprintf(stderr, "probe: %s: %s\n", file, strerror(errno));
      return 1;
    }
    fprintf(f, "%ld\n", (long)grandchild);
    if (fclose(f) != 0)
      return 1;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  const char *cmd = argc > 1 ? argv[1] : NULL;

  if (!cmd)
    return report(NULL);
  if (strcmp(cmd, "--host-path") == 0 && argc == 3)
    return report(argv[2]);
  if (strcmp(cmd, "exit") == 0 && argc == 3)
    return (int)parse_num(argv[2]);
  if (strcmp(cmd, "sleep") == 0 && argc == 3) {
    double secs = strtod(argv[2], NULL);
    struct timespec ts = {.tv_sec = (time_t)secs,
                          .tv_nsec =
                              (long)((secs - (double)(time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
      ;
    return 0;
  }
  if (strcmp(cmd, "daemon") == 0 && argc <= 3)
    return do_daemon(argc == 3 ? argv[2] : NULL);
  if (strcmp(cmd, "write-stdout") == 0 && argc == 3)
    return write_bytes(1, parse_num(argv[2]));
  if (strcmp(cmd, "write-stderr") == 0 && argc == 3)
    return write_bytes(2, parse_num(argv[2]));
  if (strcmp(cmd, "kill-self") == 0 && argc == 3) {
    int sig = parse_signal(argv[2]);
    /* A handler or an ignored disposition inherited from the caller would
     * defeat the point. */
    sigset_t set;
    signal(sig, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    (void)sigprocmask(SIG_UNBLOCK, &set, NULL); /* raise() reports the rest */
    fflush(stdout);
    raise(sig);
    return 1;
  }
  fprintf(stderr, "usage: probe [--host-path PATH] | exit N | sleep S | "
                  "daemon [FILE] | write-stdout N | write-stderr N | "
                  "kill-self SIG\n");
  return 2;
}
