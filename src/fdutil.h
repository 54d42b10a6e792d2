/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "macro.h"

/* Close if >= 0, keep errno, never retry close (close(2) NOTES). */
int safe_close(int fd);
static inline void safe_closep(int *fd) {
  safe_close(*fd);
}
#define _cleanup_close_ _cleanup_(safe_closep)
static inline void sr_closedirp(DIR **d) {
  if (*d)
    closedir(*d);
}

static inline void sr_fclosep(FILE **f) {
  if (*f)
    fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(sr_fclosep)

/* Loops over EINTR and short transfers.  0 or -errno. */
int sr_write_all(int fd, const void *buf, size_t len);
/*
 * sr_write_all for an fd whose reader may stop reading (a pipe, a socket, a
 * terminal): waits for room with poll(2), writes at most PIPE_BUF bytes at
 * a time (a pipe that polls writable takes that much without blocking;
 * sockets are written with MSG_DONTWAIT) and charges the time it waited to
 * *budget_ms: -ETIMEDOUT once that is spent.  A regular file is written as
 * sr_write_all does.  *type caches the kind of file fd is (S_IFMT bits; 0
 * until the first call fstat(2)s it), for a caller that writes to one fd
 * many times.  0 or -errno.
 */
int sr_write_bounded(int fd, mode_t *type, const void *buf, size_t len,
                     uint64_t *budget_ms);
/* sr_write_bounded, but a cancellation signal (sr_cancel_set()) pending
 * while the reader takes nothing ends the wait, within 100 ms: -ECANCELED
 * (the signal stays pending for the caller; some of buf may have been
 * written).  For the writes of a supervisor whose caller, shutting down,
 * may stop reading and then cancel the run: it is not kept waiting for
 * the rest of the stall's budget. */
int sr_write_bounded_cancellable(int fd, mode_t *type, const void *buf,
                                 size_t len, uint64_t *budget_ms);
/*
 * For sr_write_bounded on a terminal: poll(2) calls a tty writable while a
 * few bytes fit, and a blocking write of more then waits for a reader that
 * reads nothing (a terminal stopped with ^S, a pty whose other side
 * stalls) with no bound at all.  fd's open file is the caller's, shared
 * with its shell, so its O_NONBLOCK is not ours to set: this opens the
 * same terminal again (/proc/self/fd, or /dev/tty when it is the
 * controlling terminal), non-blocking and close-on-exec; only when the
 * open file is that terminal (TIOCGDEV): a pty's master opened again is a
 * new pty, and /dev/tty the opener's controlling terminal.  The new
 * descriptor, to write instead of fd and close; -1 when fd is no terminal
 * or cannot be opened again (another user's terminal that is not our
 * controlling one: then fd is written as it is, blocking).
 */
int sr_tty_reopen_nonblock(int fd);

/* The file fd refers to (an O_PATH descriptor too) opened anew with flags
 * (close-on-exec added), through /proc/self/fd: the same inode, whatever
 * its name is now.  The descriptor, or -errno. */
int sr_fd_reopen(int fd, int flags);

/* Space for len bytes from off of a file, allocated now so that later
 * writes there cannot fail for want of space (fallocate KEEP_SIZE); and
 * the same space given back (a hole punched past the data).  0 or -errno
 * (-EOPNOTSUPP where the file system cannot; -EFBIG past the file-size
 * limit, RLIMIT_FSIZE). */
int sr_fd_reserve(int fd, uint64_t off, uint64_t len);
int sr_fd_unreserve(int fd, uint64_t off, uint64_t len);
/* The bytes an ordinary write can still take on fd's file system
 * (fstatfs(2)'s f_bavail), or UINT64_MAX where it does not say: a tmpfs
 * without a size (a memfd's), a call that fails. */
uint64_t sr_fd_room(int fd);
/* Reads until EOF or len bytes; *got = bytes read.  0 or -errno. */
int sr_read_full(int fd, void *buf, size_t len, size_t *got);
/*
 * Reads a whole file opened relative to dirfd (AT_FDCWD allowed) without
 * following a final symlink, refusing non-regular files and files larger
 * than max bytes (-EFBIG).  *out is NUL-terminated and malloc'd.
 */
int sr_read_file_at(int dirfd, const char *path, size_t max, char **out,
                    size_t *len);
/*
 * The same into the caller's buffer of size bytes, for a process that
 * should not touch its heap: init and the skill's process are forks whose
 * heap is the supervisor's, and the first large malloc(3) there sorts the
 * free chunks it inherited, a copy-on-write fault for each page touched.
 * At most size - 2 bytes, NUL-terminated; -EFBIG for a longer file (the
 * caller may go to sr_read_file_at).
 */
int sr_read_file_into(int dirfd, const char *path, char *buf, size_t size,
                      size_t *len);
/*
 * The same for the files of a kernel pseudo file system (cgroupfs, procfs)
 * that are short: their seq_file fills a read with every record that fits
 * a page, and a record (a line, or a whole counter file) is far shorter
 * than half a page, so one read(2) into a page-sized buffer that returns
 * less than half of it has returned the whole file.  Open, one read, close;
 * a longer read goes to sr_read_file_at.  The supervisor's teardown reads a
 * handful of cgroup counters this way: the fstat and the read returning 0
 * were two of their five system calls.  Only for directories of such a
 * file system (cgroup fds are checked for its magic), where nothing but
 * regular files exists: elsewhere a FIFO with a writer would be read as
 * text.  Still, O_NONBLOCK never waits on a FIFO, an empty read is proved
 * a regular file with fstat, and what is not one and fills half the buffer
 * is refused by sr_read_file_at.  Not for files whose records may be long
 * (mountinfo: sr_read_file_at).
 */
int sr_read_pseudo_file_at(int dirfd, const char *path, size_t max, char **out);
/* Reads an already open fd the same way. */
int sr_read_fd(int fd, size_t max, char **out, size_t *len);
/* The same for a descriptor the caller handed over (--capability-fd),
 * which may be a pipe or a socket whose writer never writes or never
 * closes: the wait for data ends, with -ECANCELED, as soon as a
 * cancellation signal (sr_cancel_set()) is pending, which stays pending
 * for the run to report. */
int sr_read_fd_cancellable(int fd, size_t max, char **out, size_t *len);

/*
 * Opens a file whose path someone else may control (a trust file: a
 * signature, a capability, a key, skillrun.conf, a profile; an --input
 * source) relative to dirfd, read-only, with O_NOFOLLOW (a symbolic link
 * as the last component is refused: -ELOOP; one of another user's on the
 * way is not followed: -SR_EFOREIGNLINK, its owner in *st's st_uid, see
 * sr_open_dir_path), O_NONBLOCK (a FIFO or a
 * device cannot block the open) and O_CLOEXEC; then it must be a regular
 * file (else -SR_ENOTREG) of at most max bytes (else -EFBIG).  Returns the
 * fd, or -errno; *st (may be NULL) receives its fstat, also on
 * -SR_ENOTREG and -EFBIG, for the message (sr_open_regular_why).  O_NONBLOCK
 * stays set: it changes nothing for a regular file.
 */
/* No errno says "not a regular file"; open(2) never returns this one. */
#define SR_ENOTREG EMEDIUMTYPE
/* Nor "another user's symbolic link" (sr_open_dir_path): one that no
 * file system's open, stat or readlink returns. */
#define SR_EFOREIGNLINK EREMCHG
struct stat;
int sr_open_regular(int dirfd, const char *path, uint64_t max, struct stat *st);

/*
 * Opens the directory path names (relative to dirfd unless absolute),
 * O_PATH, one component at a time: a symbolic link on the way is followed
 * only when it belongs to the caller (euid) or to root.  One of another
 * user's, planted where they may write (their own directory, a shared
 * one), could send the caller to any directory of the caller's or root's,
 * whose files pass every ownership check.  With `create`, a missing
 * directory is made with mode (mkdir -p).  Returns the fd, or -errno:
 * -SR_EFOREIGNLINK for such a link, whose path as walked and owner go to
 * *fl (may be NULL).  A ".." is taken only where no other user may have
 * moved the directory it leaves (open_dotdot): whoever may move it (its
 * owner, or another who may write it and its parent) may put it between
 * two steps under a directory of theirs, and ".." is then wherever they
 * like, with the same effect as a link (-SR_EFOREIGNLINK, fl->dotdot,
 * fl->path that directory).  sr_open_regular walks its directories this
 * way.
 */
struct sr_foreign_link {
  char path[PATH_MAX];
  uid_t uid;
  /* Not a link: a ".." out of path, a directory of uid's (mode) that
   * another user may move (below). */
  bool dotdot;
  mode_t mode;
};
int sr_open_dir_path(int dirfd, const char *path, bool create, mode_t mode,
                     struct sr_foreign_link *fl);
/* The refusal *fl describes, for a message after "cannot ... PATH: ". */
char *sr_foreign_link_why(const struct sr_foreign_link *fl, char *buf,
                          size_t len);
/* openat(2) of path with flags | O_NOFOLLOW | O_CLOEXEC (and mode, for
 * O_CREAT), its directories walked by sr_open_dir_path: the fd, or -errno
 * (-SR_EFOREIGNLINK with *fl set). */
int sr_open_path(int dirfd, const char *path, int flags, mode_t mode,
                 struct sr_foreign_link *fl);
/* sr_open_regular, also handing the directory the file was opened in
 * (O_PATH) to *dir_out on success, for sr_check_dir_chain. */
int sr_open_regular_in(int dirfd, const char *path, uint64_t max,
                       struct stat *st, int *dir_out);
/* Whether skillrun runs in the initial user namespace (cached: one
 * readlink of /proc/self/ns/user, the first time). */
bool sr_userns_initial(void);
/* Whether a file of uid shows so because this user namespace does not map
 * its owner: uid is the kernel's overflow uid and no range of
 * /proc/self/uid_map holds it.  Never in the initial namespace. */
bool sr_uid_unmapped(uid_t uid);
/* Whether a file of group gid may show so because this user namespace
 * does not map its group: gid is the kernel's overflow gid (mapped or
 * not: an unmapped group shows as it all the same), unless the namespace
 * maps every gid.  Never in the initial namespace. */
bool sr_gid_may_be_unmapped(gid_t gid);
/* What to say of such a file, after its name: "is owned by a user outside
 * this user namespace (shown as uid U): ...". */
#define SR_UNMAPPED_OWNER_FMT                                                  \
  "is owned by a user outside this user namespace (shown as uid %u): "         \
  "root or another user alike, not trusted here"
/* Whether the file fd, of status st, is the caller's (euid): also where an
 * unmapped owner shows as the caller's uid (the overflow uid mapped to the
 * caller), which the kernel is asked then. */
bool sr_fd_owner_is_me(int fd, const struct stat *st);
/* Whether the file fd, of status st, belongs to a user this namespace does
 * not map: sr_uid_unmapped, or the caller's uid where that is what an
 * unmapped owner shows as and the file is not the caller's. */
bool sr_fd_owner_unmapped(int fd, const struct stat *st);
/* Root mode (a uid-pool slot per run, root's run and cgroup directories):
 * euid 0 in the initial user namespace, or in one whose uid_map and
 * gid_map hold every id of the uid pool, given by sr_root_mode_ids once
 * the policy is known (none before: not root mode outside the initial
 * namespace).  Cached. */
void sr_root_mode_ids(uint32_t first, uint32_t count);
/* Whether uid 0 of this (not initial) user namespace is uid 0 of the one
 * above it too: its root outside it, not an ordinary user. */
bool sr_userns_root_outside_too(void);
bool sr_root_mode(void);

/*
 * Whether the directory dirfd and every one above it, up to the root,
 * belong to root or owner and are writable by nobody else (group write
 * passes when group_ok, which may be NULL, says so; a sticky directory
 * passes above dirfd): 0, -EPERM with *fault saying which directory and
 * why, or another -errno.
 */
enum sr_dir_fault_kind { SR_DIR_OK, SR_DIR_OWNER, SR_DIR_GROUP, SR_DIR_OTHERS };
struct sr_dir_fault {
  enum sr_dir_fault_kind why;
  uid_t uid;
  /* uid is the overflow uid of a user namespace that maps no one to it:
   * the owner is outside the namespace (root or another user alike) */
  bool unmapped;
  mode_t mode;
  char path[PATH_MAX];
};
/* flags: a sticky dirfd passes too (for a directory in it, which no hard
 * link can take the place of) */
#define SR_CHAIN_STICKY_HERE 1u
/* flags: an owner this user namespace does not map passes, as root's,
 * which it cannot be told from ("/" where only the caller is mapped) */
#define SR_CHAIN_UNMAPPED_AS_ROOT 2u
/* flags: a directory of root's passes whatever its mode (the
 * administrator's layout: a Kubernetes emptyDir is 0777) */
#define SR_CHAIN_ROOTS_ANY_MODE 4u
int sr_check_dir_chain(int dirfd, uid_t owner,
                       bool (*group_ok)(int fd, const struct stat *st),
                       unsigned flags, struct sr_dir_fault *fault);
/* Whether st's group is its owner's private one (Debian's and Ubuntu's
 * user groups, with a umask of 002): the owner's primary group, named
 * after the owner, listing nobody else and nobody else's primary group,
 * and not what a group the user namespace does not map shows as. */
bool sr_owners_private_group(const struct stat *st);
/* For sr_check_dir_chain: a group-writable directory passes when its
 * group is its owner's private group and no access ACL lets another user
 * or group write it. */
bool sr_dir_group_is_owners(int fd, const struct stat *st);
/* For a message "<what> <path> <why>": "is in directory D of uid U, who
 * can rename or replace it (...)", or "..., writable by others (mode M),
 * ...": buf. */
const char *sr_dir_fault_why(const struct sr_dir_fault *f, char *buf,
                             size_t len);
/* What went wrong with sr_open_regular's result r (< 0), for a message
 * "<what> <path> <why>": "is a FIFO, not a regular file", "is a symbolic
 * link...", "is too large (N bytes, at most MAX)", else strerror's text.
 * Returns buf. */
char *sr_open_regular_why(int r, const struct stat *st, uint64_t max, char *buf,
                          size_t len);
/* The errno to attach to that message: 0 when the text says it all (as
 * it does for another user's link: ENOLINK only carries that refusal). */
static inline int sr_open_regular_errno(int r) {
  return r == -ELOOP || r == -SR_ENOTREG || r == -EFBIG || r == -SR_EFOREIGNLINK
             ? 0
             : -r;
}

/* Whether the POSIX access ACL of the file open at fd grants `perm` (4
 * read, 2 write) to a named user other than `except` (the caller: a
 * systemd credential is root's, mode 0400, with `user:CALLER:r--`) or to
 * a named group, through its mask: with an ACL the mode's group bits are
 * that mask, the most any of them gets, not the owning group's own.
 * false without an ACL or where ACLs are not supported; true when it
 * cannot be read or parsed (callers refuse then: fail closed). */
bool sr_fd_acl_grants_others(int fd, unsigned perm, uid_t except);

/* Writes a small string to a file (e.g. /proc, cgroupfs); 0 or -errno. */
int sr_write_file_at(int dirfd, const char *path, const char *s);
/* Writes s to a cgroupfs or /proc file, then reads it back from its start
 * through the same descriptor into back (less than size - 1 bytes and a
 * NUL: -EFBIG when it fills back).  0, or -errno with *step "write" or
 * "read back". */
int sr_write_read_back_at(int dirfd, const char *path, const char *s,
                          char *back, size_t size, const char **step);

/*
 * A directory's entries, read with getdents64(2) straight from a
 * descriptor the caller keeps open and may go on using (openat, unlinkat):
 * no DIR stream to set up (fdopendir(3) calls fstat and fcntl twice) and
 * no duplicate of the descriptor to make and close.  Reading starts at the
 * descriptor's offset: one read before is rewound by the caller (lseek).
 * About 8 KiB: recursive callers allocate it.
 */
struct sr_dir {
  int fd;
  size_t pos, len;
  union {
    uint64_t align; /* getdents64 records are 8-byte aligned */
    char buf[8192];
  } u;
};
void sr_dir_init(struct sr_dir *d, int fd);
/* The next entry but "." and "..": its name (valid until the next call)
 * and d_type (DT_UNKNOWN where the file system does not say).  1, 0 at
 * the end, or -errno. */
int sr_dir_next(struct sr_dir *d, const char **name, unsigned char *type);

/* Removes name below dirfd recursively, never following symlinks and never
 * crossing into another mount.  Missing is not an error.  0 or -errno. */
int sr_rm_rf_at(int dirfd, const char *name);

/* Closes every fd >= from except those listed (close_range where possible). */
int sr_close_all_fds_except(int from, const int *keep, size_t n_keep);

/* Sets or clears O_CLOEXEC. */
int sr_fd_cloexec(int fd, bool on);

/*
 * Cancellation of a run (skillrun(1) EXIT STATUS): SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT and the other signals whose default action would end skillrun
 * (but SIGKILL) are blocked from the start of a run, so that whatever the
 * run is doing when one arrives finishes its step and the run ends with
 * its record; long loops ask sr_cancel_pending() between steps (a pending
 * signal is also what the supervisor's signalfd reads later).  One the
 * caller left ignored stays ignored, but SIGINT and SIGTERM.
 */
int sr_cancel_block(void);
/* The set sr_cancel_block() blocks, decided at its first call from the
 * dispositions skillrun started with: the supervisor's and init's
 * signalfd read these. */
void sr_cancel_set(sigset_t *set);
/* The number of a pending cancellation signal, or 0 (none, or not
 * blocked). */
int sr_cancel_pending(void);
/* The same for tight loops (thousands of small files): asks the kernel at
 * most once a millisecond while nothing is pending, so a signal is noticed
 * up to 1 ms late; once one is pending every call asks again. */
int sr_cancel_poll(void);

/* Clocks and randomness: syscalls, so here rather than in util (Pure). */

/* Random UUIDv4 (getrandom), 36 chars + NUL.  Returns 0 or -errno. */
int sr_random_uuid(char out[37]);
/* Current wall-clock time as RFC 3339 UTC with microseconds. */
void sr_now_rfc3339(char buf[32]);
/* ts as sr_now_rfc3339 writes it (years past 9999 wrap). */
void sr_format_rfc3339(const struct timespec *ts, char buf[32]);
/* Monotonic milliseconds, and nanoseconds (CLOCK_MONOTONIC: the clock of
 * the supervisor's timers, the same in every pid namespace). */
uint64_t sr_now_mono_ms(void);
uint64_t sr_now_mono_ns(void);

/*
 * At most `max` names out of a stream (a directory's entries), each kept
 * with the same chance (reservoir sampling): what bounds the work a run
 * gives to collecting other runs' leftovers, whatever the number of runs
 * beside it.  The choice is not a secret (a generator seeded once per
 * process from getrandom(2)).
 */
struct sr_name_sample {
  char (*names)[NAME_MAX + 1];
  unsigned max;
  uint64_t seen;
};
/* 0, or -ENOMEM; max must not be 0. */
int sr_name_sample_init(struct sr_name_sample *s, unsigned max);
void sr_name_sample_offer(struct sr_name_sample *s, const char *name);
/* How many are kept: the names offered, at most max. */
unsigned sr_name_sample_count(const struct sr_name_sample *s);
const char *sr_name_sample_get(const struct sr_name_sample *s, unsigned i);
void sr_name_sample_done(struct sr_name_sample *s);
