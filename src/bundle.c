/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Canonical bundle digest with copy-while-hash (skillrun-bundle(5)).
 *
 * Two passes over the source tree:
 *  1. walk: lstat-like fstatat(AT_SYMLINK_NOFOLLOW) of every entry, refusing
 *     anything but regular files and directories and enforcing every cap, so
 *     nothing is read from a bundle that is going to be refused anyway.
 *     Past a few hundred entries the root's remaining subtrees are shared
 *     with a second walker and merged in order (walk_root), the caps
 *     checked again over the merge, so the refusal is the first in
 *     pre-order as with one;
 *  2. read: the entries are visited again in the same (pre-)order, each one
 *     opened once relative to its parent directory fd with O_NOFOLLOW,
 *     checked to be the very inode the walk saw, read once; the bytes go to
 *     SHA-256 and to the staging copy in the same loop.
 * The records are then sorted globally by relative path (a per-directory
 * sort is not the same order: "a-b" < "a/b") and hashed.
 *
 * Hashing only (--digest), files are independent: a bundle of more than a
 * few MiB is read in two parts of about equal cost on two threads
 * (hash_split; the second part opens and checks the directories above its
 * first entry).  The staging copy stays on one thread.  A file of 8 MiB or
 * more is read ahead on a thread of its own either way (sha256.c).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bundle.h"
#include "error.h"
#include "fdutil.h"
#include "sha256.h"
#include "util.h"

#define SR_SKILL_MD_MAX (1024u * 1024u)

struct entry {
  char *relpath;    /* "dir/name", no leading "./", no trailing '/' */
  const char *name; /* last component, points into relpath */
  size_t depth;     /* number of components: 1 for entries at the root */
  bool is_dir;
  bool exec;
  uint64_t size;
  dev_t dev;
  ino_t ino;
  struct timespec mtime;
  char hex[2 * SR_SHA256_LEN + 1];
};

/* What the first of two walkers (walk_root) tells the second, whose
 * entries all come after its own. */
struct walk_ahead {
  bool stop;      /* the first walker failed: its error is reported */
  size_t entries; /* the entries the first walker has admitted so far */
};

struct walk {
  const struct sr_bundle_caps *caps;
  struct entry *v;
  size_t n, alloc;
  uint64_t n_files, n_dirs, total_bytes;
  struct sr_error *err;
  /* For two walkers (walk_root).  Every walk keeps its count in share as
   * it goes; a second walker reads its first's (ahead): it stops once the
   * first has failed, and counts the first's entries with its own against
   * the file cap, so that it stops where the whole walk reaches the cap,
   * not only where its own part does (the merge then names the exact
   * entry).  And a second walker's entry its caps refused, if they did,
   * which the merge checks again with the whole walk's counts. */
  struct walk_ahead share;
  const struct walk_ahead *ahead;
  struct entry refused;
};

static void walk_done(struct walk *w) {
  for (size_t i = 0; i < w->n; i++)
    free(w->v[i].relpath);
  free(w->v);
  free(w->refused.relpath);
  w->refused.relpath = NULL;
  w->v = NULL;
  w->n = w->alloc = 0;
}

void sr_bundle_caps_default(struct sr_bundle_caps *c) {
  c->max_files = 10000;
  c->max_bytes = UINT64_C(256) * 1024 * 1024;
  c->max_file_bytes = UINT64_C(256) * 1024 * 1024;
  c->max_path = 1024;
  c->max_depth = 32;
}

void sr_bundle_done(struct sr_bundle *b) {
  if (!b)
    return;
  free(b->records);
  free(b->skill_md);
  b->records = NULL;
  b->skill_md = NULL;
  b->records_len = b->skill_md_len = 0;
}

/* The longest record but its path: "f 0755 " + 20 digits + " " + hash +
 * " " + path + "\n" (a directory's "/\n" is shorter). */
#define RECORD_FIXED (7 + 20 + 1 + 2 * SR_SHA256_LEN + 1 + 1)

/* One record into out (room for RECORD_FIXED + plen bytes), without
 * printf: thousands of these per bundle.  Returns its length. */
static size_t record_into(char *out, char type, bool mode_exec, uint64_t size,
                          const char *hex, size_t hexlen, const char *relpath,
                          size_t plen) {
  char digits[20];
  size_t nd = 0;
  char *p = out;

  if (type == 'd') {
    /* With its NUL, which the path overwrites (room: RECORD_FIXED). */
    memcpy(p, "d 0755 0 - ", sizeof("d 0755 0 - "));
    p += sizeof("d 0755 0 - ") - 1;
    memcpy(p, relpath, plen);
    p += plen;
    *p++ = '/';
    *p++ = '\n';
    return (size_t)(p - out);
  }
  memcpy(p, mode_exec ? "f 0755 " : "f 0644 ", sizeof("f 0755 "));
  p += sizeof("f 0755 ") - 1;
  do {
    digits[nd++] = (char)('0' + size % 10);
    size /= 10;
  } while (size > 0);
  while (nd > 0)
    *p++ = digits[--nd];
  *p++ = ' ';
  memcpy(p, hex, hexlen);
  p += hexlen;
  *p++ = ' ';
  memcpy(p, relpath, plen);
  p += plen;
  *p++ = '\n';
  return (size_t)(p - out);
}

char *sr_bundle_record(char type, bool mode_exec, uint64_t size,
                       const char *sha256_hex, const char *relpath) {
  size_t plen, hexlen = 0, n;
  char *s;

  if (!relpath || !*relpath || (type != 'f' && type != 'd'))
    return NULL;
  if (type == 'f') {
    if (!sha256_hex)
      return NULL;
    hexlen = strlen(sha256_hex);
  }
  plen = strlen(relpath);
  if (plen > SIZE_MAX - RECORD_FIXED - hexlen - 1)
    return NULL;
  s = malloc(RECORD_FIXED + hexlen + plen + 1);
  if (!s)
    return NULL;
  n = record_into(s, type, mode_exec, size, sha256_hex, hexlen, relpath, plen);
  s[n] = '\0';
  return s;
}

int sr_bundle_path_cmp(const char *a, const char *b) {
  /* strcmp compares as unsigned char (C11 7.24.4), i.e. as a byte string. */
  int c = strcmp(a, b);
  return (c > 0) - (c < 0);
}

/* A path in a message: a bundle's relative paths reach 1024 bytes (the
 * path cap), as long as err->msg, which must also hold the reason and,
 * once named (sr_bundle_error_named), "bundle SRC: ".  Longer than
 * SHOWN_HEAD + 3 + SHOWN_TAIL bytes, it is shown by its start and its end
 * (whole UTF-8 characters) around "...", in out; otherwise s itself. */
enum { SHOWN_HEAD = 120, SHOWN_TAIL = 240 };
#define SHOWN_MAX (SHOWN_HEAD + 3 + SHOWN_TAIL + 1)
static const char *shorten(const char *s, char out[static SHOWN_MAX]) {
  size_t len = strlen(s), k, t;

  if (len < SHOWN_MAX)
    return s;
  k = sr_utf8_cut(s, len, SHOWN_HEAD);
  for (t = len - SHOWN_TAIL; t < len && ((unsigned char)s[t] & 0xc0) == 0x80;)
    t++;
  snprintf(out, SHOWN_MAX, "%.*s...%s", (int)k, s, s + t);
  return out;
}
/* For the messages' arguments: the buffer lives to the end of the
 * enclosing block (a compound literal). */
#define REL(p) shorten((p), (char[SHOWN_MAX]){0})

/* A name for error messages: control characters shown as \xNN so that a
 * hostile file name cannot write to the user's terminal. */
static void escape_name(const char *in, char *out, size_t outsz) {
  size_t o = 0;

  for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
    if (*p < 0x20 || *p == 0x7f || *p == '\\') {
      if (o + 4 >= outsz)
        break;
      snprintf(out + o, outsz - o, "\\x%02x", *p);
      o += 4;
    } else {
      if (o + 1 >= outsz)
        break;
      out[o++] = (char)*p;
    }
  }
  out[o] = '\0';
}

static int entry_cmp(const void *a, const void *b) {
  const struct entry *const *x = a, *const *y = b;
  return sr_bundle_path_cmp((*x)->relpath, (*y)->relpath);
}

static int str_cmp(const void *a, const void *b) {
  return sr_bundle_path_cmp(*(char *const *)a, *(char *const *)b);
}

static void strv_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

#define refuse(err, ...)                                                       \
  sr_error_set((err), SR_EXIT_REFUSED, 0, "bundle_invalid", __VA_ARGS__)

static int changed(struct sr_error *err, const char *relpath) {
  return sr_error_set(err, SR_EXIT_REFUSED, 0, "bundle_changed",
                      "bundle: %s: changed while being read", REL(relpath));
}

/* Whether an open or stat of an entry the walk listed (or saw), relative
 * to its parent directory's fd, failed because the entry is gone or is no
 * longer what it was: removed or renamed away (ENOENT), a link now
 * (ELOOP), no longer a directory (ENOTDIR), a socket (ENXIO); or a
 * directory removed while its names are read (ENOENT).  That is the
 * bundle changing while it is read, refused as such (exit 123), not an
 * I/O error of skillrun's. */
static bool gone_or_replaced(int e) {
  return e == ENOENT || e == ELOOP || e == ENOTDIR || e == ENXIO;
}

/* An entry the caller may not read (EACCES, EPERM: its mode, an ACL, a
 * directory it may not search): a bundle it cannot read, refused as one
 * whose root it cannot open is (exit 123, bundle_invalid), not an I/O
 * error of skillrun's. */
static int unreadable(struct sr_error *err, int e, const char *relpath,
                      const char *what) {
  return sr_error_set(err, SR_EXIT_REFUSED, e, "bundle_invalid",
                      "bundle: %s: %s", REL(relpath), what);
}

/* Reads the names of one directory, sorted, so the walk (and which
 * offending path gets named first) does not depend on the order the file
 * system lists them in. */
static int read_names(int dfd, const char *relpath, char ***names, size_t *n,
                      struct sr_error *err) {
  _cleanup_free_ struct sr_dir *d = malloc(sizeof(*d));
  char **v = NULL;
  size_t nv = 0, alloc = 0;
  const char *de_name;
  unsigned char type;
  char *name;
  int r;

  if (!d)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle: %s",
                        REL(relpath));
  /* dfd is fresh from openat (walk_dir): its offset is the start. */
  sr_dir_init(d, dfd);
  for (;;) {
    r = sr_dir_next(d, &de_name, &type);
    if (r < 0) {
      strv_free(v, nv);
      if (gone_or_replaced(-r))
        return changed(err, relpath);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_io",
                          "bundle: %s: readdir", REL(relpath));
    }
    if (r == 0)
      break;
    if (nv == alloc) {
      size_t na = alloc ? alloc * 2 : 16;
      char **nvp = realloc(v, na * sizeof(*v));
      if (!nvp) {
        strv_free(v, nv);
        return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io",
                            "bundle: %s", REL(relpath));
      }
      v = nvp;
      alloc = na;
    }
    name = strdup(de_name);
    if (!name) {
      strv_free(v, nv);
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io",
                          "bundle: %s", REL(relpath));
    }
    v[nv++] = name;
  }
  if (nv > 1)
    qsort(v, nv, sizeof(*v), str_cmp);
  *names = v;
  *n = nv;
  return 0;
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, size_t depth);

/* The caps for one entry, in this order, counting it if it passes: the
 * order decides which refusal an entry over several caps gets, and the
 * merge of a second walker (walk_root) runs the same checks again. */
static int admit(struct walk *w, const char *relpath, const char *name,
                 size_t depth, bool is_dir, uint64_t size) {
  const struct sr_bundle_caps *caps = w->caps;
  uint64_t entries = w->n_files + w->n_dirs;

  /* A second walker: the first one's entries all come before its own,
   * and its count only grows, so this refuses no entry the merge admits. */
  if (w->ahead)
    entries += __atomic_load_n(&w->ahead->entries, __ATOMIC_RELAXED);
  if (entries >= caps->max_files)
    return sr_error_set(w->err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                        "bundle: %s: too many files (limit %" PRIu64 ")",
                        REL(relpath), caps->max_files);
  if (is_dir) {
    if (depth > caps->max_depth)
      return sr_error_set(w->err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                          "bundle: %s: too deep (limit %zu directories)",
                          REL(relpath), caps->max_depth);
    w->n_dirs++;
    return 0;
  }
  if (size > caps->max_file_bytes)
    return sr_error_set(w->err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                        "bundle: %s: file too large (%" PRIu64
                        " bytes, limit %" PRIu64 ")",
                        REL(relpath), size, caps->max_file_bytes);
  /* total_bytes <= max_bytes always holds, so this cannot wrap. */
  if (size > caps->max_bytes - w->total_bytes)
    return sr_error_set(w->err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                        "bundle: %s: bundle too large (limit %" PRIu64
                        " bytes)",
                        REL(relpath), caps->max_bytes);
  if (depth == 1 && strcmp(name, "SKILL.md") == 0 && size > SR_SKILL_MD_MAX)
    return sr_error_set(w->err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                        "bundle: SKILL.md is larger than 1 MiB");
  w->total_bytes += size;
  w->n_files++;
  return 0;
}

/* Pass 1 for one entry: stat without following, check kind and caps. */
static int walk_entry(struct walk *w, int dfd, const char *prefix, size_t depth,
                      const char *name) {
  const struct sr_bundle_caps *caps = w->caps;
  _cleanup_free_ char *relpath = NULL;
  struct entry *e;
  struct stat st;
  size_t idx, prefix_len, name_len;
  int r;

  if (w->ahead && __atomic_load_n(&w->ahead->stop, __ATOMIC_RELAXED))
    return -ECANCELED; /* the first walker failed: its error is reported */
  if (!sr_valid_filename(name)) {
    char esc[1024];
    escape_name(name, esc, sizeof(esc));
    return refuse(w->err,
                  "bundle: %s%s%s: names with control characters are not "
                  "allowed",
                  REL(prefix), *prefix ? "/" : "", REL(esc));
  }
  /* Without printf: once per entry of a bundle of thousands. */
  prefix_len = strlen(prefix);
  name_len = strlen(name);
  relpath = malloc(prefix_len + 1 + name_len + 1);
  if (!relpath)
    return sr_error_set(w->err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  memcpy(relpath, prefix, prefix_len);
  if (prefix_len > 0)
    relpath[prefix_len++] = '/';
  memcpy(relpath + prefix_len, name, name_len + 1);
  if (prefix_len + name_len > caps->max_path)
    return refuse(w->err, "bundle: %s: path too long (limit %zu bytes)",
                  REL(relpath), caps->max_path);
  if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
    if (errno == ENOENT) /* listed, then removed */
      return changed(w->err, relpath);
    if (errno == EACCES || errno == EPERM)
      return unreadable(w->err, errno, relpath, "stat");
    return sr_error_set(w->err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: %s: stat", REL(relpath));
  }

  switch (st.st_mode & S_IFMT) {
  case S_IFREG:
  case S_IFDIR:
    break;
  case S_IFLNK:
    return refuse(w->err, "bundle: %s: symbolic links are not allowed",
                  REL(relpath));
  case S_IFCHR:
  case S_IFBLK:
    return refuse(w->err, "bundle: %s: device files are not allowed",
                  REL(relpath));
  case S_IFIFO:
    return refuse(w->err, "bundle: %s: FIFOs are not allowed", REL(relpath));
  case S_IFSOCK:
    return refuse(w->err, "bundle: %s: sockets are not allowed", REL(relpath));
  default:
    return refuse(w->err, "bundle: %s: unsupported file type", REL(relpath));
  }

  r = admit(w, relpath, name, depth, S_ISDIR(st.st_mode),
            S_ISDIR(st.st_mode) ? 0 : (uint64_t)st.st_size);
  if (r < 0) {
    if (w->ahead) { /* a second walker: the merge checks it again */
      w->refused = (struct entry){.relpath = relpath,
                                  .name = relpath + prefix_len,
                                  .depth = depth,
                                  .is_dir = S_ISDIR(st.st_mode),
                                  .size = (uint64_t)st.st_size};
      relpath = NULL;
    }
    return r;
  }

  if (w->n == w->alloc) {
    size_t na = w->alloc ? w->alloc * 2 : 64;
    struct entry *nv = realloc(w->v, na * sizeof(*nv));
    if (!nv)
      return sr_error_set(w->err, SR_EXIT_FAILED, ENOMEM, "bundle_io",
                          "bundle");
    w->v = nv;
    w->alloc = na;
  }
  idx = w->n++;
  e = &w->v[idx];
  *e = (struct entry){
      .relpath = TAKE_PTR(relpath),
      .depth = depth,
      .is_dir = S_ISDIR(st.st_mode),
      .exec = !S_ISDIR(st.st_mode) && (st.st_mode & 0111) != 0,
      .size = S_ISDIR(st.st_mode) ? 0 : (uint64_t)st.st_size,
      .dev = st.st_dev,
      .ino = st.st_ino,
      .mtime = st.st_mtim,
  };
  e->name = e->relpath + prefix_len;
  __atomic_store_n(&w->share.entries, w->n, __ATOMIC_RELAXED);

  if (S_ISDIR(st.st_mode)) {
    _cleanup_close_ int cfd = -1;
    struct stat cst;

    cfd = openat(dfd, name,
                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (cfd < 0 && gone_or_replaced(errno))
      return changed(w->err, w->v[idx].relpath);
    if (cfd < 0 && (errno == EACCES || errno == EPERM))
      return unreadable(w->err, errno, w->v[idx].relpath, "open");
    if (cfd < 0)
      return sr_error_set(w->err, SR_EXIT_FAILED, errno, "bundle_io",
                          "bundle: %s: open", REL(w->v[idx].relpath));
    if (fstat(cfd, &cst) < 0)
      return sr_error_set(w->err, SR_EXIT_FAILED, errno, "bundle_io",
                          "bundle: %s: stat", REL(w->v[idx].relpath));
    if (cst.st_dev != st.st_dev || cst.st_ino != st.st_ino)
      return sr_error_set(w->err, SR_EXIT_REFUSED, 0, "bundle_changed",
                          "bundle: %s: changed while being read",
                          REL(w->v[idx].relpath));
    /* w->v may move while recursing: pass a private copy of the path. */
    _cleanup_free_ char *sub = strdup(w->v[idx].relpath);
    if (!sub)
      return sr_error_set(w->err, SR_EXIT_FAILED, ENOMEM, "bundle_io",
                          "bundle");
    r = walk_dir(w, cfd, sub, depth + 1);
    if (r < 0)
      return r;
  }
  return 0;
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, size_t depth) {
  char **names = NULL;
  size_t n = 0;
  int r;

  r = read_names(dfd, *prefix ? prefix : ".", &names, &n, w->err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < n; i++) {
    r = walk_entry(w, dfd, prefix, depth, names[i]);
    if (r < 0)
      break;
  }
  strv_free(names, n);
  return r < 0 ? r : 0;
}

/* Entries walked on one thread before the root's remaining names are
 * split between two walkers: below this a thread costs more than it
 * saves, so a small bundle is walked on one. */
#define WALK_SPLIT_ENTRIES 256u
/* Root names that must remain for a split (each walker gets half). */
#define WALK_SPLIT_NAMES 4u

/* The second walker: root names [from, to), into a walk of its own. */
struct walk_half {
  struct walk w;
  struct sr_error err;
  char **names;
  size_t from, to;
  int dfd;
  int r;
};

static void *walk_half_thread(void *arg) {
  struct walk_half *h = arg;

  h->r = 0;
  for (size_t i = h->from; i < h->to && h->r >= 0; i++)
    h->r = walk_entry(&h->w, h->dfd, "", 1, h->names[i]);
  return NULL;
}

/* The second walker's entries after the first's.  Each is checked against
 * the caps again with the counts of everything before it (its walker's
 * own were smaller), so the first refusal is the one a single walker would
 * have made; then its walker's error, if the caps leave that the first. */
static int walk_merge(struct walk *w, struct walk_half *h) {
  struct walk *b = &h->w;
  int r;

  for (size_t i = 0; i < b->n; i++) {
    const struct entry *e = &b->v[i];
    r = admit(w, e->relpath, e->name, e->depth, e->is_dir, e->size);
    if (r < 0)
      return r;
  }
  if (h->r < 0) {
    const struct entry *e = &b->refused;
    /* Refused by the caps with smaller counts: refused with the whole
     * counts too, maybe by an earlier cap. */
    if (e->relpath) {
      r = admit(w, e->relpath, e->name, e->depth, e->is_dir, e->size);
      if (r < 0)
        return r;
    }
    if (w->err && w->err->exit_code == 0)
      *w->err = h->err;
    return h->r;
  }
  if (b->n > 0) {
    if (w->n + b->n > w->alloc) {
      struct entry *nv = realloc(w->v, (w->n + b->n) * sizeof(*nv));
      if (!nv)
        return sr_error_set(w->err, SR_EXIT_FAILED, ENOMEM, "bundle_io",
                            "bundle");
      w->v = nv;
      w->alloc = w->n + b->n;
    }
    /* The relative paths move with their entries. */
    memcpy(w->v + w->n, b->v, b->n * sizeof(*b->v));
    w->n += b->n;
    b->n = 0;
  }
  return 0;
}

/* Pass 1 from the root.  Once a few hundred entries are walked, the root's
 * remaining names are split: the second half is walked on a second thread
 * (stat calls of separate subtrees do not wait on each other) and merged
 * after the first, so the entries, the caps and which refusal is reported
 * are those of one walker in pre-order. */
static int walk_root(struct walk *w, int dfd, unsigned *walkers) {
  char **names = NULL;
  size_t n = 0, end;
  struct walk_half h = {0};
  pthread_t tid;
  bool tried = false, threaded = false;
  int r;

  r = read_names(dfd, ".", &names, &n, w->err);
  if (r < 0)
    return r;
  end = n;
  for (size_t i = 0; i < end; i++) {
    if (!tried && w->n >= WALK_SPLIT_ENTRIES && end - i >= WALK_SPLIT_NAMES) {
      /* Once: a thread refused (RLIMIT_NPROC, memory) is not asked for
       * again before every root name left, the walk goes on on one. */
      tried = true;
      h = (struct walk_half){.w = {.caps = w->caps, .ahead = &w->share},
                             .names = names,
                             .from = i + (end - i) / 2,
                             .to = end,
                             .dfd = dfd};
      h.w.err = &h.err;
      if (pthread_create(&tid, NULL, walk_half_thread, &h) == 0) {
        threaded = true;
        end = h.from;
      }
    }
    r = walk_entry(w, dfd, "", 1, names[i]);
    if (r < 0)
      break;
  }
  *walkers = threaded ? 2 : 1;
  if (threaded) {
    if (r < 0) /* this error comes first: the other walker can stop */
      __atomic_store_n(&w->share.stop, true, __ATOMIC_RELAXED);
    /* Fails only for a thread that is not joinable: never ours. */
    if (pthread_join(tid, NULL) != 0)
      abort();
    if (r >= 0)
      r = walk_merge(w, &h);
    walk_done(&h.w);
  }
  strv_free(names, n);
  return r < 0 ? r : 0;
}

static bool same_time(const struct timespec *a, const struct timespec *b) {
  return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Pass 2 for one file: open once, read once, hash and copy the same bytes
 * (sr_sha256_copy), with the walk's size as the bound: a file that grows or
 * shrinks, or whose inode or mtime moves, while it is read is refused. */
static int stage_file(struct entry *e, int sfd, int dfd, char **skill_md,
                      struct sr_error *err) {
  _cleanup_close_ int in = -1, out = -1;
  _cleanup_free_ char *keep = NULL;
  unsigned char hash[SR_SHA256_LEN];
  enum sr_sha256_copy_step step = SR_SHA256_COPY_READ;
  struct stat before, after;
  uint64_t total = 0;
  int r;

  /* O_NONBLOCK: a FIFO swapped in after the walk must not block open. */
  in = openat(sfd, e->name,
              O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (in < 0) {
    if (gone_or_replaced(errno))
      return changed(err, e->relpath);
    if (errno == EACCES || errno == EPERM)
      return unreadable(err, errno, e->relpath, "open");
    /* O_NONBLOCK meets a write lease (fcntl(2) F_SETLEASE) of another
     * process's, which any owner of the file may take: an entry the
     * caller cannot read, refused as such (an --input so held is too),
     * not an I/O error of skillrun's. */
    if (errno == EWOULDBLOCK)
      return unreadable(err, errno, e->relpath,
                        "open (another process holds a lease on it)");
    return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: %s: open", REL(e->relpath));
  }
  if (fstat(in, &before) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: %s: stat", REL(e->relpath));
  if (!S_ISREG(before.st_mode) || before.st_dev != e->dev ||
      before.st_ino != e->ino || (uint64_t)before.st_size != e->size ||
      !same_time(&before.st_mtim, &e->mtime))
    return changed(err, e->relpath);

  if (skill_md) {
    keep = malloc(e->size + 1);
    if (!keep)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io",
                          "bundle: %s", REL(e->relpath));
  }
  if (dfd >= 0) {
    mode_t mode = e->exec ? 0755 : 0644;
    out = openat(
        dfd, e->name,
        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
    if (out < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_copy",
                          "bundle: %s: create staging copy", REL(e->relpath));
    /* The umask may have removed bits: the copy's mode is the record's. */
    if (fchmod(out, mode) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_copy",
                          "bundle: %s: chmod staging copy", REL(e->relpath));
  }
  r = sr_sha256_copy_regular(in, out, e->size, keep, &total, hash, &step);
  if (r == -EFBIG && step == SR_SHA256_COPY_READ)
    return changed(err, e->relpath); /* grew while being read */
  /* EFBIG writing the copy is the caller's file-size limit (ulimit -f,
   * SIGXFSZ ignored): a host write refused like a full disk's, not a
   * bundle that changed. */
  if (r == -EFBIG)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_copy",
                        "bundle: %s: write staging copy (the file-size "
                        "limit, ulimit -f)",
                        REL(e->relpath));
  if (r < 0 && step == SR_SHA256_COPY_WRITE)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_copy",
                        "bundle: %s: write staging copy", REL(e->relpath));
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_io", "bundle: %s: %s",
                        REL(e->relpath),
                        step == SR_SHA256_COPY_READ ? "read" : "SHA-256");
  if (total != e->size)
    return changed(err, e->relpath); /* shrank while being read */
  if (fstat(in, &after) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: %s: stat", REL(e->relpath));
  if ((uint64_t)after.st_size != e->size ||
      !same_time(&after.st_mtim, &before.st_mtim))
    return changed(err, e->relpath);

  sr_hex(hash, sizeof(hash), e->hex);
  if (keep) {
    keep[total] = '\0';
    *skill_md = TAKE_PTR(keep);
  }
  return 0;
}

/* Pass 2 for one directory: reopen it (the same inode the walk saw) and
 * create its counterpart in the copy. */
static int stage_dir(const struct entry *e, int sfd, int dfd, int *sub_sfd,
                     int *sub_dfd, struct sr_error *err) {
  _cleanup_close_ int s = -1, d = -1;
  struct stat st;

  s = openat(sfd, e->name,
             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (s < 0) {
    if (gone_or_replaced(errno))
      return changed(err, e->relpath);
    if (errno == EACCES || errno == EPERM)
      return unreadable(err, errno, e->relpath, "open");
    return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: %s: open", REL(e->relpath));
  }
  if (fstat(s, &st) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: %s: stat", REL(e->relpath));
  if (st.st_dev != e->dev || st.st_ino != e->ino)
    return changed(err, e->relpath);

  if (dfd >= 0) {
    if (mkdirat(dfd, e->name, 0755) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_copy",
                          "bundle: %s: create staging copy", REL(e->relpath));
    d = openat(dfd, e->name,
               O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (d < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_copy",
                          "bundle: %s: open staging copy", REL(e->relpath));
    if (fchmod(d, 0755) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_copy",
                          "bundle: %s: chmod staging copy", REL(e->relpath));
  }
  *sub_sfd = TAKE_FD(s);
  *sub_dfd = TAKE_FD(d);
  return 0;
}

struct fd_stack {
  int *fd;
  size_t n;
};

static void fd_stack_done(struct fd_stack *s) {
  if (!s->fd)
    return;
  for (size_t i = 0; i < s->n; i++)
    safe_close(s->fd[i]);
  free(s->fd);
  s->fd = NULL;
}

static int append(char **buf, size_t *len, size_t *alloc, const char *s,
                  size_t n) {
  if (n >= SIZE_MAX - *len)
    return -EOVERFLOW;
  if (!*buf || *len + n + 1 > *alloc) {
    size_t na = *alloc ? *alloc : 4096;
    char *nb;
    while (na < *len + n + 1)
      na *= 2;
    nb = realloc(*buf, na);
    if (!nb)
      return -ENOMEM;
    *buf = nb;
    *alloc = na;
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

struct sr_bundle_walk {
  struct walk w;
  struct sr_bundle_caps caps;
  int root;         /* the bundle's root directory */
  size_t skill;     /* SKILL.md's index in w.v */
  size_t max_depth; /* of any entry */
  unsigned walkers; /* threads that walked it (walk_root) */
  char *src;        /* the path the caller named it by */
};

void sr_bundle_walk_free(struct sr_bundle_walk *bw) {
  if (!bw)
    return;
  walk_done(&bw->w);
  safe_close(bw->root);
  free(bw->src);
  free(bw);
}

uint64_t sr_bundle_walk_bytes(const struct sr_bundle_walk *bw) {
  return bw->w.total_bytes;
}

unsigned sr_bundle_walk_walkers(const struct sr_bundle_walk *bw) {
  return bw->walkers;
}

/* The walk's and the copy's messages say "bundle: " and the file within
 * the bundle, the manifest's "SKILL.md:LINE: "; a caller that runs many
 * bundles (an orchestrator's log) needs the bundle too (bundle.h).  A
 * long SRC is shown by its start and its end, so that what went wrong
 * still fits. */
int sr_bundle_error_named(struct sr_error *err, const char *src, int r) {
  static const char pre[] = "bundle: ", manifest[] = "SKILL.md";
  char out[sizeof(err->msg)];
  const char *rest;
  size_t o, k;

  if (r >= 0 || !err || !src)
    return r;
  if (!strncmp(err->msg, pre, strlen(pre)))
    rest = err->msg + strlen(pre);
  else if (!strncmp(err->msg, manifest, strlen(manifest)))
    rest = err->msg;
  else
    return r;
  o = (size_t)snprintf(out, sizeof(out), "bundle %s: ", REL(src));
  k = sr_utf8_cut(rest, strlen(rest), sizeof(out) - 1 - o);
  memcpy(out + o, rest, k);
  out[o + k] = '\0';
  memcpy(err->msg, out, sizeof(out));
  return r;
}

static int walk_bundle(const char *src, const struct sr_bundle_caps *caps,
                       struct sr_bundle_walk **out, struct sr_error *err) {
  _cleanup_bundle_walk_ struct sr_bundle_walk *bw = NULL;
  bool have_skill = false;
  int r;

  if (!src || !out)
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "bundle_io", "bundle");
  bw = calloc(1, sizeof(*bw));
  if (!bw)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  bw->root = -1;
  bw->src = strdup(src);
  if (!bw->src)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  if (caps)
    bw->caps = *caps;
  else
    sr_bundle_caps_default(&bw->caps);
  bw->w.caps = &bw->caps;
  bw->w.err = err;

  /* The root itself may be a symlink the user named; nothing below is. */
  bw->root = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
  /* Not a directory, not there, or one the caller may not open: not a
   * bundle, refused (exit 123) as a run refuses it, whatever the mode
   * (skillrun(1) EXIT STATUS); another failure to open one is skillrun's. */
  if (bw->root < 0 && errno == ENOTDIR)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                        "bundle %s is not a directory: name the skill's "
                        "directory, the one that holds SKILL.md",
                        src);
  if (bw->root < 0 &&
      (errno == EACCES || errno == EPERM || errno == ENOENT || errno == ELOOP))
    return sr_error_set(err, SR_EXIT_REFUSED, errno, "bundle_invalid",
                        "bundle %s", src);
  if (bw->root < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "bundle_io",
                        "bundle: open");

  /* Pass 1: the whole shape, and every cap, before any content is read. */
  r = walk_root(&bw->w, bw->root, &bw->walkers);
  if (r < 0)
    return r;
  for (size_t i = 0; i < bw->w.n; i++) {
    const struct entry *e = &bw->w.v[i];
    if (e->depth == 1 && strcmp(e->name, "SKILL.md") == 0 && !e->is_dir) {
      bw->skill = i;
      have_skill = true;
    }
    if (e->depth > bw->max_depth)
      bw->max_depth = e->depth;
  }
  if (!have_skill)
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "bundle_invalid",
                        "bundle %s: no SKILL.md at the bundle root", src);
  *out = TAKE_PTR(bw);
  return 0;
}

int sr_bundle_walk(const char *src, const struct sr_bundle_caps *caps,
                   struct sr_bundle_walk **out, struct sr_error *err) {
  return sr_bundle_error_named(err, src, walk_bundle(src, caps, out, err));
}

int sr_bundle_stage(const char *src, int dst_dirfd,
                    const struct sr_bundle_caps *caps, bool keep_records,
                    struct sr_bundle *out, struct sr_error *err) {
  _cleanup_bundle_walk_ struct sr_bundle_walk *bw = NULL;
  int r = sr_bundle_walk(src, caps, &bw, err);

  return r < 0 ? r : sr_bundle_copy(bw, dst_dirfd, keep_records, out, err);
}

/* Records are hashed RECORD_BUF bytes at a time. */
#define RECORD_BUF (64u * 1024u)

/* One stretch [from, to) of the walk's entries read by pass 2; the whole
 * walk, or half of it on a second thread (hash_split). */
struct copy_part {
  struct walk *w;
  size_t from, to;
  size_t skill;     /* SKILL.md's index in w->v */
  size_t max_depth; /* of any entry */
  int root;         /* the bundle's root, owned by the part */
  int dst_root;     /* the copy's root, owned by the part, or -1 */
  char *skill_md;   /* SKILL.md's bytes, if the part read it */
  struct sr_error err;
  int r;
};

/* The directories above entry `from`, opened (and checked, as pass 2
 * checks every directory) on ss[1 .. depth-1]: in pre-order the parent of
 * an entry at depth k is the last directory before it at depth k-1. */
static int open_ancestors(const struct walk *w, size_t from, int *ss,
                          struct sr_error *err) {
  size_t depth = w->v[from].depth;
  size_t want = depth - 1;
  _cleanup_free_ size_t *anc = NULL;

  if (want == 0)
    return 0;
  anc = calloc(depth, sizeof(*anc));
  if (!anc)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  for (size_t j = from; j-- > 0 && want > 0;)
    if (w->v[j].is_dir && w->v[j].depth == want)
      anc[want--] = j;
  for (size_t k = 1; k < depth; k++) {
    int s = -1, d = -1;
    int r = stage_dir(&w->v[anc[k]], ss[k - 1], -1, &s, &d, err);
    if (r < 0)
      return r;
    ss[k] = s;
  }
  return 0;
}

static int copy_part_run(struct copy_part *p) {
  struct walk *wp = p->w;
  _cleanup_(fd_stack_done) struct fd_stack ss = {0}, ds = {0};
  struct sr_error *err = &p->err;
  int r;

  ss.fd = malloc((p->max_depth + 1) * sizeof(int));
  ds.fd = malloc((p->max_depth + 1) * sizeof(int));
  if (!ss.fd || !ds.fd) {
    safe_close(p->root);
    safe_close(p->dst_root);
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  }
  ss.n = ds.n = p->max_depth + 1;
  for (size_t i = 0; i <= p->max_depth; i++)
    ss.fd[i] = ds.fd[i] = -1;
  ss.fd[0] = TAKE_FD(p->root);
  ds.fd[0] = TAKE_FD(p->dst_root);
  /* Only a hash-only part starts past the first entry (hash_split). */
  if (p->from > 0) {
    r = open_ancestors(wp, p->from, ss.fd, err);
    if (r < 0)
      return r;
  }

  /* Entries are in walk pre-order, so the parent of an entry at depth k is
   * the directory last opened at depth k-1. */
  for (size_t i = p->from; i < p->to; i++) {
    struct entry *e = &wp->v[i];
    int psfd, pdfd;

    /* The walk's max_depth bounds every entry's; said for the analyzers. */
    if (e->depth == 0 || e->depth > p->max_depth)
      return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "bundle_io", "bundle");
    psfd = ss.fd[e->depth - 1];
    pdfd = ds.fd[e->depth - 1];

    if (e->is_dir) {
      int s = -1, d = -1;
      r = stage_dir(e, psfd, pdfd, &s, &d, err);
      if (r < 0)
        return r;
      safe_close(ss.fd[e->depth]);
      safe_close(ds.fd[e->depth]);
      ss.fd[e->depth] = s;
      ds.fd[e->depth] = d;
    } else {
      r = stage_file(e, psfd, pdfd, i == p->skill ? &p->skill_md : NULL, err);
      if (r < 0)
        return r;
    }
  }
  return 0;
}

static void *copy_part_thread(void *arg) {
  struct copy_part *p = arg;

  p->r = copy_part_run(p);
  return NULL;
}

/* What reading one entry costs, in bytes of hashing: the open, stat, read
 * and close of a small file take about as long as hashing 8 KiB. */
#define ENTRY_COST 8192u
/* Below this (in the same unit), a second thread costs more than it saves. */
#define SPLIT_MIN (UINT64_C(4) * 1024 * 1024)

/* Where to cut the walk in two parts of about equal cost (the second part
 * starts at the returned index), or 0 (not worth a thread). */
static size_t hash_split(const struct walk *w) {
  uint64_t total = w->total_bytes + (uint64_t)w->n * ENTRY_COST, acc = 0;

  if (total < SPLIT_MIN || w->n < 2)
    return 0;
  for (size_t i = 0; i < w->n; i++) {
    uint64_t cost = w->v[i].size + ENTRY_COST;

    if (acc + cost >= total / 2) {
      /* Entry i goes to the part that leaves the other the larger. */
      size_t cut = acc + cost / 2 >= total / 2 ? i : i + 1;
      if (cut == 0)
        cut = 1;
      return cut < w->n ? cut : w->n - 1;
    }
    acc += cost;
  }
  return 0;
}

static int copy_bundle(struct sr_bundle_walk *bw, int dst_dirfd,
                       bool keep_records, struct sr_bundle *out,
                       struct sr_error *err) {
  struct walk *wp;
  const struct entry *skill;
  _cleanup_sha256_ struct sr_sha256 rctx = {0};
  _cleanup_free_ struct entry **sorted = NULL;
  _cleanup_free_ char *skill_md = NULL, *records = NULL, *rbuf = NULL;
  size_t records_len = 0, records_alloc = 0, cut = 0, rlen = 0;
  unsigned char hash[SR_SHA256_LEN];
  struct sr_bundle res = {0};
  struct copy_part a, b;
  pthread_t tid;
  bool threaded = false;
  int r;

  if (!bw || bw->root < 0) /* copied once: its fds are used up */
    return sr_error_set(err, SR_EXIT_FAILED, EINVAL, "bundle_io", "bundle");
  wp = &bw->w;
  wp->err = err;
  skill = &wp->v[bw->skill];
  a = (struct copy_part){.w = wp,
                         .to = wp->n,
                         .skill = bw->skill,
                         .max_depth = bw->max_depth,
                         .root = -1,
                         .dst_root = -1};
  a.root = TAKE_FD(bw->root);
  if (dst_dirfd >= 0) {
    /* Our own fd, so the part can close it like the others. */
    a.dst_root = fcntl(dst_dirfd, F_DUPFD_CLOEXEC, 3);
    if (a.dst_root < 0) {
      int e = errno;
      safe_close(a.root);
      return sr_error_set(err, SR_EXIT_FAILED, e, "bundle_copy",
                          "bundle: staging directory");
    }
  } else {
    /* Hashing only (--digest): files are independent, so a big bundle is
     * read and hashed in two halves at once.  The copy stays on one
     * thread: its directories must exist before their files. */
    cut = hash_split(wp);
  }
  if (cut > 0) {
    b = a;
    b.from = cut;
    a.to = cut;
    b.root = fcntl(a.root, F_DUPFD_CLOEXEC, 3);
    if (b.root >= 0 && pthread_create(&tid, NULL, copy_part_thread, &b) == 0)
      threaded = true;
    else
      safe_close(b.root); /* the first part reads it all instead */
    if (!threaded)
      a.to = wp->n;
  }
  /* The part on this thread wrote its errors to a.err; an error of the
   * first part wins, as it would come first without a second thread. */
  a.r = copy_part_run(&a);
  /* Fails only for a thread that is not joinable: never ours. */
  if (threaded && pthread_join(tid, NULL) != 0)
    abort();
  skill_md = a.skill_md ? a.skill_md : (threaded ? b.skill_md : NULL);
  if (threaded && a.skill_md)
    free(b.skill_md);
  if (a.r < 0 || (threaded && b.r < 0)) {
    const struct copy_part *bad = a.r < 0 ? &a : &b;
    if (err && err->exit_code == 0)
      *err = bad->err;
    return bad->r;
  }
  wp->err = err;

  /* Records in global byte order of the relative path. */
  /* An array of pointers: sizeof(*sorted) is the pointer size on purpose.
   * NOLINTNEXTLINE(bugprone-sizeof-expression) */
  sorted = malloc((wp->n ? wp->n : 1) * sizeof(*sorted));
  if (!sorted)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  for (size_t i = 0; i < wp->n; i++)
    sorted[i] = &wp->v[i];
  qsort(sorted, wp->n, sizeof(*sorted), /* NOLINT(bugprone-sizeof-expression) */
        entry_cmp);

  r = sr_sha256_init(&rctx);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_io",
                        "bundle: SHA-256 init");
  /* Records are hashed a buffer at a time, not one short update each. */
  rbuf = malloc(RECORD_BUF);
  if (!rbuf)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  for (size_t i = 0; i <= wp->n; i++) {
    const struct entry *e = i < wp->n ? sorted[i] : NULL;
    size_t plen = e ? strlen(e->relpath) : 0;

    /* A path is at most max_path bytes, but the buffer must hold any. */
    if (!e || rlen + RECORD_FIXED + plen > RECORD_BUF) {
      r = sr_sha256_update(&rctx, rbuf, rlen);
      if (r < 0)
        return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_io",
                            "bundle: SHA-256 update");
      if (keep_records &&
          append(&records, &records_len, &records_alloc, rbuf, rlen) < 0)
        return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
      rlen = 0;
    }
    if (!e)
      break;
    if (RECORD_FIXED + plen > RECORD_BUF) {
      _cleanup_free_ char *rec = sr_bundle_record(
          e->is_dir ? 'd' : 'f', e->exec, e->size, e->hex, e->relpath);
      size_t n = rec ? strlen(rec) : 0;

      if (!rec)
        return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
      r = sr_sha256_update(&rctx, rec, n);
      if (r < 0)
        return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_io",
                            "bundle: SHA-256 update");
      if (keep_records &&
          append(&records, &records_len, &records_alloc, rec, n) < 0)
        return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
      continue;
    }
    rlen += record_into(rbuf + rlen, e->is_dir ? 'd' : 'f', e->exec, e->size,
                        e->hex, 2 * SR_SHA256_LEN, e->relpath, plen);
  }
  r = sr_sha256_final(&rctx, hash);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "bundle_io",
                        "bundle: SHA-256 final");

  memcpy(res.digest, "sha256:", 7);
  sr_hex(hash, sizeof(hash), res.digest + 7);
  res.n_files = wp->n_files;
  res.n_dirs = wp->n_dirs;
  res.total_bytes = wp->total_bytes;
  if (keep_records && !records) {
    /* Unreachable today (SKILL.md always gives one record), but callers
     * asked for text and must get a string, not NULL. */
    records = strdup("");
    if (!records)
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "bundle_io", "bundle");
  }
  res.records = TAKE_PTR(records);
  res.records_len = records_len;
  res.skill_md = TAKE_PTR(skill_md);
  res.skill_md_len = skill->size;
  *out = res;
  return 0;
}

int sr_bundle_copy(struct sr_bundle_walk *bw, int dst_dirfd, bool keep_records,
                   struct sr_bundle *out, struct sr_error *err) {
  return sr_bundle_error_named(
      err, bw ? bw->src : NULL,
      copy_bundle(bw, dst_dirfd, keep_records, out, err));
}
