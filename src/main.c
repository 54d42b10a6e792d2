/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * skillrun's entry: parses the command line and hands it to the command
 * of its mode (cmd.h).  The run itself is the pipeline in run.c
 * (doc/architecture.md).
 */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cmd.h"
#include "error.h"
#include "fdutil.h"
#include "macro.h"

/* The signal mask skillrun was started with: main() blocks the run's
 * cancellation signals before anything else, and the commands that are
 * not a run get this back. */
static sigset_t caller_mask;

static int cmd_help(const struct sr_args *a) {
  (void)a;
  sr_cli_help(stdout);
  return 0;
}

static int cmd_version(const struct sr_args *a) {
  (void)a;
  sr_cli_version(stdout);
  return 0;
}

static const struct {
  enum sr_mode mode;
  int (*run)(const struct sr_args *a);
} commands[] = {
    {SR_MODE_RUN, sr_cmd_run},
    {SR_MODE_EXPLAIN, sr_cmd_explain},
    {SR_MODE_DIGEST, sr_cmd_digest},
    {SR_MODE_SIGN, sr_cmd_sign},
    {SR_MODE_VERIFY_AUDIT, sr_cmd_verify_audit},
    {SR_MODE_GC, sr_cmd_gc},
    {SR_MODE_METRICS, sr_cmd_metrics},
    {SR_MODE_HELP, cmd_help},
    {SR_MODE_VERSION, cmd_version},
};

/*
 * The stack skillrun's own code needs (a run checks the 256 KiB its
 * sandbox needs, run.c): below some 40 KiB of RLIMIT_STACK (ulimit -s)
 * skillrun died of SIGSEGV before it could say why, with no audit
 * stream.  A soft limit below it is raised as far as the hard one allows;
 * under a hard one below it everything after the start (the command line
 * too, whose frames a sanitizer build makes larger) runs on a thread's
 * stack of its own, where a run stops with its one-line error and its
 * record (nothing that needs a single thread comes before that check).
 */
#define MAIN_STACK (256 * 1024)
#define THREAD_STACK (1024 * 1024)

static bool stack_too_small(void) {
  struct rlimit rl;

  if (getrlimit(RLIMIT_STACK, &rl) < 0 || rl.rlim_cur >= MAIN_STACK)
    return false;
  if (rl.rlim_max >= MAIN_STACK) {
    rl.rlim_cur = MAIN_STACK;
    return setrlimit(RLIMIT_STACK, &rl) < 0;
  }
  return true;
}

static int run_main(int argc, char *argv[], const bool closed[3]);

struct on_stack {
  int argc;
  char **argv;
  const bool *closed;
  sigset_t mask; /* the caller's, which the command starts with */
  int code;
};

static void *run_on_stack(void *p) {
  struct on_stack *o = p;

  (void)pthread_sigmask(SIG_SETMASK, &o->mask, NULL);
  o->code = run_main(o->argc, o->argv, o->closed);
  return NULL;
}

/* run_main, on a thread of its own when the stack is too small. */
static int run_main_on_stack(int argc, char *argv[], const bool closed[3]) {
  struct on_stack o = {
      .argc = argc, .argv = argv, .closed = closed, .code = SR_EXIT_FAILED};
  pthread_attr_t attr;
  pthread_t tid;
  sigset_t all;
  bool started;

  if (!stack_too_small())
    return run_main(argc, argv, closed);
  if (pthread_attr_init(&attr) != 0)
    return run_main(argc, argv, closed);
  /* The command blocks and waits for the signals it handles (a run's
   * cancellation) on its own thread: one this thread did not block would
   * be delivered here, with its default action.  Blocked before the
   * thread is made, which starts with the caller's mask again. */
  sigfillset(&all);
  (void)pthread_sigmask(SIG_BLOCK, &all, &o.mask);
  started = pthread_attr_setstacksize(&attr, THREAD_STACK) == 0 &&
            pthread_create(&tid, &attr, run_on_stack, &o) == 0;
  pthread_attr_destroy(&attr);
  if (!started) {
    (void)pthread_sigmask(SIG_SETMASK, &o.mask, NULL);
    return run_main(argc, argv, closed);
  }
  if (pthread_join(tid, NULL) != 0)
    return SR_EXIT_FAILED;
  return o.code;
}

/* Leave without the C library's exit: by now every command has closed and
 * freed what it made, and what exit() would add is the shared libraries'
 * destructors, each writing to a page of its own for the first time
 * (copy-on-write since the sandbox's fork): about 0.2 ms on the return
 * path of a run on a virtual machine where a page fault costs 9 us
 * (bench/README.md).  Standard streams are flushed as exit() would; a
 * failed flush falls back to exit(), which ignores it the same way.
 * Sanitizer builds keep exit(): their leak check runs from it (as would
 * a coverage build's counters, which configure does not offer). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_LEAK__)
#define SR_KEEP_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define SR_KEEP_EXIT 1
#endif
#endif

static int leave(int code) {
#ifndef SR_KEEP_EXIT
  if (fflush(NULL) == 0)
    _exit(code);
#endif
  return code;
}

int main(int argc, char *argv[]) {
  bool closed[3];
  sigset_t cancel;
  int fd;

  /* First of all, the run's cancellation signals (sr_cancel_set) are
   * blocked: one that comes while the command line is parsed and the run
   * set up stays pending, and cancels the run once it looks (run.c,
   * sr_stage_start; skillrun(1) EXIT STATUS).  Blocked only from the run's
   * start, a SIGINT that came before was lost when skillrun was started
   * with it ignored (a shell's background job), and the run went on to
   * its end.  The other commands get the caller's mask back (run_main). */
  sr_cancel_set(&cancel);
  if (sigprocmask(SIG_BLOCK, &cancel, &caller_mask) < 0)
    (void)sigprocmask(SIG_SETMASK, NULL, &caller_mask);
  /* A closed standard descriptor must not become the audit file, a log or
   * a run directory by accident: each gets /dev/null (open(2) takes the
   * lowest free number, so they are filled in order). */
  for (fd = 0; fd < 3; fd++) {
    closed[fd] = fcntl(fd, F_GETFD) < 0;
    if (closed[fd] && open("/dev/null", O_RDWR) != fd)
      return SR_EXIT_FAILED; /* nowhere to say why */
  }
  /* Writes to a closed pipe must fail with EPIPE, not kill us silently;
   * past the caller's file-size limit (ulimit -f) with EFBIG, so that the
   * run stops with audit_write instead of dying halfway through a line of
   * its record.  The skill gets both back at their defaults (child.c). */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGXFSZ, SIG_IGN);
  /* SIGCHLD ignored survives execve(2) (a daemon may leave it so) and is
   * inherited by the sandbox's init: the kernel would then reap the skill
   * itself, and init, which waits for its SIGCHLD, would never learn that
   * it ended (nor could anyone wait(2) for its status). */
  signal(SIGCHLD, SIG_DFL);
  /* The caller's umask goes on hiding the group's and others' bits (also
   * from the skill), never the owner's: umask 0777 or 0177 made the
   * workspace root, a tenant's or a run's directory one its owner could
   * not enter, and kept failing every later run there. */
  umask(umask(0) & 077);
  return leave(run_main_on_stack(argc, argv, closed));
}

/* Why --stdin cannot read fd 0, or NULL. */
static const char *stdin_unreadable(void) {
  struct stat st;
  int fl = fcntl(STDIN_FILENO, F_GETFL);

  if (fl < 0)
    return "not open";
  if ((fl & O_PATH) == O_PATH)
    return "an O_PATH file, which cannot be read";
  if ((fl & O_ACCMODE) != O_RDONLY && (fl & O_ACCMODE) != O_RDWR)
    return "not open for reading";
  if (fstat(STDIN_FILENO, &st) == 0 && S_ISDIR(st.st_mode))
    return "a directory";
  return NULL;
}

/* The command line parsed and its command run: its exit status. */
static int run_main(int argc, char *argv[], const bool closed[3]) {
  struct sr_args args;
  struct sr_error err = {0};
  int code = SR_EXIT_FAILED;

  /* jansson seeds its hash function on its first object, from /dev/urandom
   * (open, read, close); this seed comes from one getrandom(2).  Zero, or no
   * entropy yet, leaves it to jansson. */
  {
    uint32_t seed = 0;

    if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) == (ssize_t)sizeof(seed))
      json_object_seed(seed);
  }

  if (sr_cli_parse(argc, argv, &args, &err) < 0) {
    sr_log_error("%s", err.msg);
    /* Not after an error of the system's (out of memory): the command
     * line was not at fault, and the error is one line. */
    if (err.exit_code != SR_EXIT_REFUSED && err.err == 0)
      fprintf(stderr, "Try 'skillrun --help' for more information.\n");
    sr_args_done(&args);
    return err.exit_code ? err.exit_code : SR_EXIT_FAILED;
  }
  /* Not a run: the signals end the command as they did before main()
   * (one that came meanwhile does so now), with the caller's mask. */
  if (args.mode != SR_MODE_RUN)
    (void)pthread_sigmask(SIG_SETMASK, &caller_mask, NULL);
  /* --stdin hands the skill our standard input: a closed one is an error,
   * not /dev/null. */
  if (closed[STDIN_FILENO] && args.mode == SR_MODE_RUN && args.forward_stdin) {
    sr_log_error("--stdin: standard input is not open");
    sr_args_done(&args);
    return SR_EXIT_FAILED;
  }
  /* ... nor one that cannot be read at all: a directory (EISDIR), a file
   * opened for writing only or O_PATH (EBADF).  The skill would get an
   * empty input and the record a cut one. */
  if (args.mode == SR_MODE_RUN && args.forward_stdin) {
    const char *why = stdin_unreadable();

    if (why) {
      sr_log_error("--stdin: standard input is %s", why);
      sr_args_done(&args);
      return SR_EXIT_FAILED;
    }
  }
  /* A closed stdout is an error where stdout is what the caller asked for
   * (the audit stream, --explain, --digest, ...), before anything is made;
   * a closed stdin or stderr is only /dev/null. */
  if (closed[STDOUT_FILENO] && args.mode != SR_MODE_GC &&
      (args.mode != SR_MODE_RUN ||
       (!args.audit_file && (args.audit_fd < 0 || args.audit_fd == 1)))) {
    sr_log_error("standard output is closed: %s",
                 args.mode == SR_MODE_RUN
                     ? "the audit stream has nowhere to go (give "
                       "--audit-file or --audit-fd)"
                     : "the output has nowhere to go");
    sr_args_done(&args);
    return SR_EXIT_FAILED;
  }
  for (size_t i = 0; i < SR_ARRAY_SIZE(commands); i++)
    if (commands[i].mode == args.mode) {
      code = commands[i].run(&args);
      break;
    }
  sr_args_done(&args);
  return code;
}
