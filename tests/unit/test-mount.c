/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's mounts read back (src/mount.c), built for real in a child's
 * own user, mount and pid namespaces: the view's masks and device nodes
 * carry their flags, and when a flag does not take, the build fails closed
 * on the read-back of the mount table (verify_mountinfo), the only
 * read-back of the mounts in /dev and /proc.  mount_setattr(2), mount(2),
 * open_tree(2) and move_mount(2) are wrapped (-Wl,--wrap) so that a case
 * can drop one attribute from the calls that ask for a given set, clone
 * another device than the null device, or leave a mask unmounted.  Needs
 * user namespaces (root or not); without them a TAP comment says why and
 * nothing is exercised.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "error.h"
#include "fdutil.h"
#include "mount.h"
#include "own-userns.h"
#include "policy.h"

enum { CHILD_OK = 0, CHILD_FAILED = 1, CHILD_NO_USERNS = 77 };

/* The fault a case injects: calls of mount_setattr(2) whose attr_set is
 * exactly fault_when, with AT_RECURSIVE in their flags or not as
 * fault_recursive says, lose fault_drop from it.  Inherited by the
 * children, which are forks. */
static uint64_t fault_when, fault_drop;
static bool fault_recursive;

int __real_mount_setattr(int dfd, const char *path, unsigned int flags,
                         struct mount_attr *attr, size_t size);
int __wrap_mount_setattr(int dfd, const char *path, unsigned int flags,
                         struct mount_attr *attr, size_t size);
int __wrap_mount_setattr(int dfd, const char *path, unsigned int flags,
                         struct mount_attr *attr, size_t size) {
  struct mount_attr a = *attr;

  if (fault_drop && a.attr_set == fault_when &&
      !!(flags & AT_RECURSIVE) == fault_recursive)
    a.attr_set &= ~fault_drop;
  return __real_mount_setattr(dfd, path, flags, &a, size);
}

/* And calls of mount(2) of a file system of type mount_drop_type lose
 * mount_drop from their flags. */
static const char *mount_drop_type;
static unsigned long mount_drop;

int __real_mount(const char *src, const char *target, const char *type,
                 unsigned long flags, const void *data);
int __wrap_mount(const char *src, const char *target, const char *type,
                 unsigned long flags, const void *data);
int __wrap_mount(const char *src, const char *target, const char *type,
                 unsigned long flags, const void *data) {
  if (mount_drop_type && type && strcmp(type, mount_drop_type) == 0)
    flags &= ~mount_drop;
  return __real_mount(src, target, type, flags, data);
}

/* And the swap_nth call of open_tree(2) that clones the null device (its
 * own descriptor: the /dev/null bind, then the first /proc mask, then the
 * masks cloned from it) clones the view's /dev/zero instead. */
static int swap_nth, swap_seen;
#define MASK (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)

int __real_open_tree(int dfd, const char *path, unsigned int flags);
int __wrap_open_tree(int dfd, const char *path, unsigned int flags);
int __wrap_open_tree(int dfd, const char *path, unsigned int flags) {
  struct stat st;

  if (swap_nth && !*path && fstat(dfd, &st) == 0 && S_ISCHR(st.st_mode) &&
      st.st_rdev == makedev(1, 3) && ++swap_seen == swap_nth) {
    int zero = open("/newroot/dev/zero", O_PATH | O_CLOEXEC);
    int r;

    if (zero < 0)
      return -1;
    r = __real_open_tree(zero, path, flags);
    close(zero);
    /* With a mask's flags: only the device differs. */
    if (r >= 0 && __real_mount_setattr(r, "", AT_EMPTY_PATH | AT_RECURSIVE,
                                       &(struct mount_attr){.attr_set = MASK},
                                       sizeof(struct mount_attr)) < 0) {
      close(r);
      return -1;
    }
    return r;
  }
  return __real_open_tree(dfd, path, flags);
}

/* And with unmasked set, the move_mount(2) that would attach a /proc
 * mask onto that name says it did and does nothing: a mask that did not
 * take. */
static const char *unmasked;

int __real_move_mount(int from_dfd, const char *from_path, int to_dfd,
                      const char *to_path, unsigned int flags);
int __wrap_move_mount(int from_dfd, const char *from_path, int to_dfd,
                      const char *to_path, unsigned int flags);
int __wrap_move_mount(int from_dfd, const char *from_path, int to_dfd,
                      const char *to_path, unsigned int flags) {
  if (unmasked && strcmp(to_path, unmasked) == 0)
    return 0;
  return __real_move_mount(from_dfd, from_path, to_dfd, to_path, flags);
}

/* And with mountinfo_long, the mount table does not fit the caller's
 * buffer (as one of some 150 mounts would not): the table check reads it
 * from the heap instead, and mountinfo_reads counts the refusals. */
static bool mountinfo_long;
static int mountinfo_reads;
/* And with mountinfo_nul, a NUL byte ends the table's first line: every
 * line after it would go unchecked by a parser that stopped there. */
static bool mountinfo_nul;

int __real_sr_read_file_into(int dirfd, const char *path, char *buf,
                             size_t size, size_t *len);
int __wrap_sr_read_file_into(int dirfd, const char *path, char *buf,
                             size_t size, size_t *len);
int __wrap_sr_read_file_into(int dirfd, const char *path, char *buf,
                             size_t size, size_t *len) {
  if (mountinfo_long && strcmp(path, "self/mountinfo") == 0) {
    mountinfo_reads++;
    return -EFBIG;
  }
  if (mountinfo_nul && strcmp(path, "self/mountinfo") == 0) {
    int r = __real_sr_read_file_into(dirfd, path, buf, size, len);
    char *nl = r >= 0 ? strchr(buf, '\n') : NULL;

    if (nl)
      *nl = '\0';
    return r;
  }
  return __real_sr_read_file_into(dirfd, path, buf, size, len);
}

/* The options field of mountpoint mp in this namespace's table, or "". */
static void mount_opts(const char *mp, char *out, size_t len) {
  _cleanup_free_ char *buf = NULL;
  char *line, *save = NULL;

  out[0] = '\0';
  if (sr_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 20, &buf, NULL) <
      0)
    return;
  for (line = strtok_r(buf, "\n", &save); line;
       line = strtok_r(NULL, "\n", &save)) {
    char *f[6], *s = line;
    size_t nf = 0;

    while (nf < 6 && (f[nf] = strsep(&s, " ")))
      nf++;
    if (nf == 6 && strcmp(f[4], mp) == 0)
      snprintf(out, len, ",%s,", f[5]);
  }
}

static bool has_opts(const char *mp, const char *const *want) {
  char opts[256], w[64];

  mount_opts(mp, opts, sizeof(opts));
  if (!opts[0]) {
    fprintf(stderr, "%s: no such mount\n", mp);
    return false;
  }
  for (; *want; want++) {
    snprintf(w, sizeof(w), ",%s,", *want);
    if (!strstr(opts, w)) {
      fprintf(stderr, "%s: %s lacks %s\n", mp, opts, *want);
      return false;
    }
  }
  return true;
}

/* The empty bundle directory the view binds (made and removed by main). */
static char bundle[PATH_MAX];

/* mount.c's proc_masked, in its order: which of them this kernel has
 * decides which mask is the first of its kind (found by main). */
static const char *const masked[] = {
    "kcore",       "keys",       "key-users",  "timer_list",    "timer_stats",
    "sched_debug", "kallsyms",   "kmsg",       "latency_stats", "config.gz",
    "vmallocinfo", "kpagecount", "kpageflags", "kpagecgroup",   "interrupts",
    "acpi",        "asound",     "scsi",       "driver",
};
#define N_MASKED (sizeof(masked) / sizeof(masked[0]))
/* "/proc/NAME" of the masked files and directories this kernel has, in
 * that order; NULL-terminated. */
static char *mask_files[N_MASKED + 1], *mask_dirs[N_MASKED + 1];

static void find_masks(void) {
  size_t nf = 0, nd = 0;

  for (size_t i = 0; i < N_MASKED; i++) {
    char path[64];
    struct stat st;

    snprintf(path, sizeof(path), "/proc/%s", masked[i]);
    if (lstat(path, &st) < 0)
      continue;
    if (S_ISDIR(st.st_mode))
      mask_dirs[nd++] = strdup(path);
    else
      mask_files[nf++] = strdup(path);
  }
}

/* pid 1 of the new namespaces: builds the default view over the empty
 * bundle and enters it.  Writes the error's message to msg_fd when the
 * build fails; checks the flags the skill would see when it does not. */
static int build(int msg_fd) {
  static const char *const mask[] = {"ro", "nosuid", "noexec", NULL};
  static const char *const dir_mask[] = {"ro", "nosuid", "nodev", "noexec",
                                         NULL};
  static const char *const device[] = {"nosuid", "noexec", NULL};
  static const char *const sealed[] = {"ro", "nosuid", "noexec", NULL};
  struct sr_mount_plan plan = {.bundle_fd = -1,
                               .inputs_fd = -1,
                               .metadata_fd = -1,
                               .uid = 0,
                               .gid = 0,
                               .user_name = "skill",
                               .home = "/workspace/scratch"};
  struct sr_policy pol;
  struct sr_error err = {0};
  struct stat st;
  int outputs = -1, r;

  if (sr_policy_init(&pol) < 0)
    return CHILD_FAILED;
  plan.policy = &pol;
  plan.bundle_dir = bundle;
  plan.bundle_fd = open(bundle, O_PATH | O_DIRECTORY | O_CLOEXEC);
  r = plan.bundle_fd < 0 ? -1 : sr_mount_pin(&plan, &err);
  if (r >= 0)
    r = sr_mount_build(&plan, &outputs, &err);
  if (r < 0) {
    (void)sr_write_all(msg_fd, err.msg, strlen(err.msg));
    return CHILD_FAILED;
  }
  if (mountinfo_long != (mountinfo_reads > 0))
    return CHILD_FAILED;
  /* The first masks are made, the others cloned from them. */
  for (char **m = mask_files; *m; m++)
    if (!has_opts(*m, mask) || stat(*m, &st) < 0 || !S_ISCHR(st.st_mode) ||
        st.st_rdev != makedev(1, 3))
      return CHILD_FAILED;
  for (char **m = mask_dirs; *m; m++)
    if (!has_opts(*m, dir_mask))
      return CHILD_FAILED;
  if (!has_opts("/proc/sys", dir_mask) || !has_opts("/dev/null", device) ||
      !has_opts("/dev/urandom", device) || !has_opts("/dev", sealed) ||
      access("/dev/tty", F_OK) == 0)
    return CHILD_FAILED;
  return CHILD_OK;
}

/* Runs build() as pid 1 of new user, mount and pid namespaces, as their
 * root (the caller's ids mapped); its status, and in msg what it wrote. */
static int in_new_namespaces(char *msg, size_t len) {
  int p[2], st;
  pid_t pid;
  ssize_t n;

  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int r;
    pid_t one;

    close(p[0]);
    r = unit_own_userns(CLONE_NEWNS | CLONE_NEWPID);
    if (r < 0)
      _exit(r == -1 ? CHILD_NO_USERNS : CHILD_FAILED);
    one = fork();
    if (one == 0)
      _exit(build(p[1]));
    if (one < 0 || waitpid(one, &st, 0) != one || !WIFEXITED(st))
      _exit(CHILD_FAILED);
    _exit(WEXITSTATUS(st));
  }
  close(p[1]);
  n = read(p[0], msg, len - 1);
  msg[n > 0 ? n : 0] = '\0';
  close(p[0]);
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

/* Without user namespaces, a TAP comment says so: not cmocka's skip(),
 * whose "not ok # SKIP" tap-driver.sh counts as a failure.  want: NULL for
 * a build that must succeed, else what its error must say. */
static void run(const char *what, const char *want) {
  char msg[512];
  int r = in_new_namespaces(msg, sizeof(msg));

  if (r == CHILD_NO_USERNS) {
    print_message("# %s: no user namespaces here: not exercised\n", what);
    return;
  }
  if (!want) {
    if (r != CHILD_OK)
      print_message("# %s: %s\n", what, msg);
    assert_int_equal(r, CHILD_OK);
    return;
  }
  assert_int_equal(r, CHILD_FAILED);
  if (!strstr(msg, want))
    print_message("# %s: got \"%s\", want \"%s\"\n", what, msg, want);
  assert_non_null(strstr(msg, want));
}

static void inject(uint64_t when, bool recursive, uint64_t drop) {
  fault_when = when;
  fault_recursive = recursive;
  fault_drop = drop;
}

static void test_view_flags(void **state) {
  (void)state;
  inject(0, false, 0);
  run("view flags", NULL);
}

/* The device nodes' binds (nosuid, noexec) without noexec. */
static void test_device_noexec_read_back(void **state) {
  (void)state;
  inject(MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, true, MOUNT_ATTR_NOEXEC);
  run("device without noexec", "verify /dev/null: not noexec");
}

/* The first /dev/null over a /proc file (ro, nosuid, noexec: the clones
 * after it carry what it has) without read-only.  (It would be noexec
 * without asking: its source, /dev/null in the view, is.) */
static void test_proc_mask_read_back(void **state) {
  char want[128];

  (void)state;
  if (!mask_files[0]) {
    print_message("# no masked /proc file in this kernel: not exercised\n");
    return;
  }
  inject(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, true,
         MOUNT_ATTR_RDONLY);
  snprintf(want, sizeof(want), "verify %s: not read-only", mask_files[0]);
  run("proc mask not read-only", want);
}

/* procfs mounted without MS_NOEXEC. */
static void test_proc_noexec_read_back(void **state) {
  (void)state;
  inject(0, false, 0);
  mount_drop_type = "proc";
  mount_drop = MS_NOEXEC;
  run("proc without noexec", "verify /proc: not noexec");
  mount_drop_type = NULL;
  mount_drop = 0;
}

/* A mask over a /proc file that is another device than /dev/null: the
 * first one, made from /dev/null, and the second, cloned from the first
 * (the read-back looks at the null device's mount once, and at any other
 * mount again). */
static void test_proc_mask_is_null(void **state) {
  char want[128];

  (void)state;
  if (!mask_files[0] || !mask_files[1]) {
    print_message("# fewer than two masked /proc files in this kernel: not "
                  "exercised\n");
    return;
  }
  inject(0, false, 0);
  swap_seen = 0;
  swap_nth = 2;
  snprintf(want, sizeof(want), "verify %s: not nodev", mask_files[0]);
  run("first proc mask /dev/zero", want);
  swap_seen = 0;
  swap_nth = 3;
  snprintf(want, sizeof(want), "verify %s: not nodev", mask_files[1]);
  run("second proc mask /dev/zero", want);
  swap_nth = 0;
}

/* /dev sealed (not recursive) without read-only. */
static void test_dev_seal_read_back(void **state) {
  (void)state;
  inject(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false,
         MOUNT_ATTR_RDONLY);
  run("/dev not sealed", "verify /dev: not read-only");
}

/* A mount table longer than the stack's buffer: read from the heap, and
 * checked all the same. */
static void test_long_mount_table(void **state) {
  (void)state;
  inject(0, false, 0);
  mountinfo_long = true;
  run("long mount table", NULL);
  inject(MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, true, MOUNT_ATTR_NOEXEC);
  run("long mount table, device without noexec",
      "verify /dev/null: not noexec");
  mountinfo_long = false;
}

/* A NUL byte in the table: the check fails rather than pass on what it
 * read before it, a device mount without noexec after it here. */
static void test_mount_table_nul(void **state) {
  (void)state;
  inject(MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, true, MOUNT_ATTR_NOEXEC);
  mountinfo_nul = true;
  run("NUL in the mount table", "read mountinfo: not a whole table");
  mountinfo_nul = false;
}

/* A /proc mask that is not in the table at all: the check misses it,
 * not only a flag of it. */
static void test_proc_mask_missing(void **state) {
  (void)state;
  inject(0, false, 0);
  unmasked = "keys";
  run("a mask not mounted", "verify /proc/keys: its mask is not mounted");
  unmasked = NULL;
}

int main(void) {
  const char *tmp = getenv("TMPDIR");
  int r;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_view_flags),
      cmocka_unit_test(test_mount_table_nul),
      cmocka_unit_test(test_proc_mask_missing),
      cmocka_unit_test(test_device_noexec_read_back),
      cmocka_unit_test(test_proc_mask_read_back),
      cmocka_unit_test(test_proc_noexec_read_back),
      cmocka_unit_test(test_proc_mask_is_null),
      cmocka_unit_test(test_dev_seal_read_back),
      cmocka_unit_test(test_long_mount_table),
  };
  snprintf(bundle, sizeof(bundle), "%s/skillrun-test-mount.XXXXXX",
           tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(bundle)) {
    perror("mkdtemp");
    return 1;
  }
  find_masks();
  r = cmocka_run_group_tests(tests, NULL, NULL);
  rmdir(bundle);
  return r;
}
