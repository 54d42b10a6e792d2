/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hog: a hostile skill for the whole-run limit tests (tests/integration/
 * limits-matrix.sh, tests/vm/skillrun-tests.sh).  One mode per run; each
 * tries to take more than the run's limits allow, in a way a per-process
 * limit would not see, and holds what it got until the run is stopped:
 *
 *   hog mem PROCS MIB [STEP_MS]   PROCS processes touch MIB MiB each, 1 MiB
 *                                 at a time (STEP_MS apart), then hold it;
 *                                 (exit 3 once they all ended, refused)
 *   hog memfd MIB [STEP_MS]       a memfd grown with write(), never mapped;
 *                                 where memfd_create is refused, an unlinked
 *                                 file in /dev/shm instead (as programs fall
 *                                 back to), announced "memfd_create=ERRNO"
 *   hog shmfork MIB [MORE]        shared anonymous memory touched by the
 *                                 parent, held by a child that never touched
 *                                 it, unmapped by the parent (so no process
 *                                 has those pages resident); then MORE MiB of
 *                                 private memory, 1 MiB every 10 ms; where
 *                                 shared anonymous mappings are refused, an
 *                                 unlinked file in /dev/shm instead,
 *                                 announced "mmap(MAP_SHARED|MAP_ANONYMOUS)=
 *                                 ERRNO"
 *   hog cpu PROCS                 PROCS processes spin
 *   hog cputhreads THREADS        THREADS threads of one process spin
 *   hog cpushort                  spins in a stream of processes that live
 *                                 20 ms each
 *   hog forkbomb                  every process forks forever, retrying on
 *                                 EAGAIN
 *   hog inodes N [DIR]            N empty files in DIR (/workspace/scratch)
 *   hog realtime                  asks for SCHED_FIFO and a nice of -5,
 *                                 prints "fifo=ERRNO renice=ERRNO" (or ok)
 *
 * Prints what it did on stdout; runs until killed, except where it says
 * why it stopped (exit 3).  Only libc, so it runs in the VM tier as well.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MiB (1024UL * 1024UL)

static void sleep_ms(unsigned ms) {
  struct timespec ts = {.tv_sec = ms / 1000,
                        .tv_nsec = (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

static _Noreturn void hold(void) {
  for (;;)
    pause();
}

static unsigned long arg(char **argv, int i, unsigned long def) {
  return argv[i] ? strtoul(argv[i], NULL, 10) : def;
}

/* MIB MiB of private memory, 1 MiB at a time, MS apart; a refused mapping
 * (RLIMIT_AS, with memory-rlimit yes) is said and ends it: false. */
static bool touch_private(unsigned long mib, unsigned ms) {
  for (unsigned long m = 0; m < mib; m++) {
    char *b = mmap(NULL, MiB, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (b == MAP_FAILED) {
      printf("mmap at %lu MiB: %s\n", m, strerrorname_np(errno));
      return false;
    }
    memset(b, 0x5a, MiB);
    if (ms)
      sleep_ms(ms);
  }
  return true;
}

static int mem(unsigned long procs, unsigned long mib, unsigned ms) {
  int st, ret = 0;

  for (unsigned long p = 0; p < procs; p++) {
    pid_t pid = fork();
    if (pid < 0) {
      printf("fork: %s\n", strerrorname_np(errno));
      return 3;
    }
    if (pid == 0) {
      if (!touch_private(mib, ms))
        _exit(3);
      printf("mem %lu: holds %lu MiB\n", p, mib);
      fflush(stdout);
      hold();
    }
  }
  while (wait(&st) > 0 || errno == EINTR)
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
      ret = 3;
  return ret;
}

static int memfd(unsigned long mib, unsigned ms) {
  static char chunk[MiB];
  int fd = (int)syscall(SYS_memfd_create, "hog", 0);

  memset(chunk, 0x5a, sizeof(chunk));
  if (fd < 0) {
    char name[] = "/dev/shm/hog-XXXXXX";
    printf("memfd_create=%s\n", strerrorname_np(errno));
    fd = mkstemp(name);
    if (fd < 0) {
      printf("mkstemp: %s\n", strerrorname_np(errno));
      return 3;
    }
    unlink(name);
  }
  fflush(stdout);
  for (unsigned long m = 0; m < mib; m++)
    if (write(fd, chunk, sizeof(chunk)) != (ssize_t)sizeof(chunk)) {
      printf("write at %lu MiB: %s\n", m, strerrorname_np(errno));
      return 3;
    } else if (ms) {
      sleep_ms(ms);
    }
  printf("memfd holds %lu MiB\n", mib);
  fflush(stdout);
  hold();
}

static int shmfork(unsigned long mib, unsigned long more) {
  size_t len = mib * MiB;
  char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                 -1, 0);
  pid_t pid;

  if (b == MAP_FAILED) {
    /* Refused where the supervisor samples the run: a shared mapping of
     * an unlinked file in /dev/shm instead, as programs fall back to. */
    char name[] = "/dev/shm/hog-XXXXXX";
    int fd;

    printf("mmap(MAP_SHARED|MAP_ANONYMOUS)=%s\n", strerrorname_np(errno));
    fd = mkstemp(name);
    if (fd < 0 || unlink(name) < 0 || ftruncate(fd, (off_t)len) < 0) {
      printf("%s: %s\n", name, strerrorname_np(errno));
      return 3;
    }
    b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (b == MAP_FAILED) {
      printf("mmap: %s\n", strerrorname_np(errno));
      return 3;
    }
  }
  for (size_t o = 0; o < len; o += MiB) {
    memset(b + o, 0x5a, MiB);
    sleep_ms(5);
  }
  pid = fork();
  if (pid == 0)
    hold(); /* the pages stay, in no page table of its own */
  munmap(b, len);
  printf("shmfork: %lu MiB held by %d\n", mib, (int)pid);
  fflush(stdout);
  touch_private(more, 10);
  printf("shmfork: and %lu MiB private\n", more);
  fflush(stdout);
  hold();
}

static _Noreturn void spin(void) {
  for (volatile unsigned long i = 0;; i++)
    ;
}

static void *spin_thread(void *a) {
  (void)a;
  spin();
}

static int cpu(unsigned long procs) {
  for (unsigned long p = 1; p < procs; p++)
    if (fork() == 0)
      spin();
  spin();
}

static int cputhreads(unsigned long n) {
  for (unsigned long t = 1; t < n; t++) {
    pthread_t th;
    if (pthread_create(&th, NULL, spin_thread, NULL) != 0)
      return 3;
  }
  spin();
}

static int cpushort(void) {
  for (;;) {
    pid_t pid = fork();
    if (pid == 0) {
      struct timespec t0, t;
      clock_gettime(CLOCK_MONOTONIC, &t0);
      do
        clock_gettime(CLOCK_MONOTONIC, &t);
      while ((t.tv_sec - t0.tv_sec) * 1000 +
                 (t.tv_nsec - t0.tv_nsec) / 1000000 <
             20);
      _exit(0);
    }
    if (pid > 0)
      waitpid(pid, NULL, 0);
  }
}

/* Parent and child alike fork again, at once or after a refusal. */
static _Noreturn void forkbomb(void) {
  for (;;)
    if (fork() < 0)
      sleep_ms(1);
}

static int inodes(unsigned long n, const char *dir) {
  char path[4096];
  for (unsigned long i = 0; i < n; i++) {
    int fd;
    snprintf(path, sizeof(path), "%s/f%lu", dir, i);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      printf("inodes stopped at %lu: %s\n", i, strerrorname_np(errno));
      return 3;
    }
    close(fd);
  }
  printf("inodes: %lu created\n", n);
  return 0;
}

static const char *outcome(int r) {
  return r < 0 ? strerrorname_np(errno) : "ok";
}

static int realtime(void) {
  struct sched_param sp = {.sched_priority = 10};
  const char *fifo = outcome(sched_setscheduler(0, SCHED_FIFO, &sp));

  printf("fifo=%s renice=%s\n", fifo,
         outcome(setpriority(PRIO_PROCESS, 0, -5)));
  return 0;
}

int main(int argc, char **argv) {
  const char *m = argc > 1 ? argv[1] : "";

  setvbuf(stdout, NULL, _IOLBF, 0);
  if (!strcmp(m, "mem") && argc >= 4)
    return mem(arg(argv, 2, 1), arg(argv, 3, 1), (unsigned)arg(argv, 4, 0));
  if (!strcmp(m, "memfd") && argc >= 3)
    return memfd(arg(argv, 2, 1), (unsigned)arg(argv, 3, 0));
  if (!strcmp(m, "shmfork") && argc >= 3)
    return shmfork(arg(argv, 2, 1), arg(argv, 3, 0));
  if (!strcmp(m, "cpu") && argc >= 3)
    return cpu(arg(argv, 2, 1));
  if (!strcmp(m, "cputhreads") && argc >= 3)
    return cputhreads(arg(argv, 2, 1));
  if (!strcmp(m, "cpushort"))
    return cpushort();
  if (!strcmp(m, "forkbomb"))
    forkbomb();
  if (!strcmp(m, "realtime"))
    return realtime();
  if (!strcmp(m, "inodes") && argc >= 3)
    return inodes(arg(argv, 2, 1), argc > 3 ? argv[3] : "/workspace/scratch");
  fprintf(stderr,
          "usage: hog mem PROCS MIB [STEP_MS] | memfd MIB [STEP_MS] | "
          "shmfork MIB [MORE] | "
          "cpu PROCS | cputhreads N | cpushort | forkbomb | inodes N [DIR] | "
          "realtime\n");
  return 2;
}
