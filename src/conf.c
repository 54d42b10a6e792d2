/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The line format of profiles and skillrun.conf (skillrun.profile(5)).  This
 * file knows the syntax and `include` only; policy.c gives keys a meaning.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "fdutil.h"
#include "paths.h"
#include "util.h"

#define SR_CONF_MAX_WORDS 64
/* Includes of the same file are allowed (only cycles are not), so nesting
 * alone would permit exponential expansion: bound the totals as well. */
#define SR_CONF_MAX_INCLUDES 256
#define SR_CONF_MAX_TOTAL_LINES 16384

#define SR_DEFAULT_PROFILE_NAME "default.profile (built-in)"
#define SR_PLATFORM_CONF SR_SYSCONFDIR "/skillrun/skillrun.conf"

/* A file being read, for include cycle detection and for what a relative
 * include in it is relative to. */
struct conf_frame {
  bool builtin; /* the embedded default profile */
  bool has_id;  /* dev/ino valid (false for a caller's buffer) */
  dev_t dev;
  ino_t ino;
  int dir;          /* the directory it was opened in (O_PATH), or -1 */
  const char *name; /* its name as shown */
};

struct conf_ctx {
  struct sr_conf *out;
  size_t cap_lines;
  bool allow_include;
  unsigned n_includes;
  struct conf_frame stack[SR_CONF_MAX_INCLUDE_DEPTH + 1];
  size_t n_stack;
  struct sr_error *err;
};

static int load_profile(struct conf_ctx *ctx, const char *name_or_path,
                        const char *where, char **resolved);

static int conf_error(struct conf_ctx *ctx, const char *file, unsigned line,
                      const char *msg) {
  return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                      "%s:%u: %s", file, line, msg);
}

static void line_done(struct sr_conf_line *l) {
  free(l->file);
  free(l->key);
  if (l->args)
    for (size_t i = 0; i < l->n_args; i++)
      free(l->args[i]);
  free(l->args);
}

void sr_conf_done(struct sr_conf *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->n_lines; i++)
    line_done(&c->lines[i]);
  free(c->lines);
  free(c->name);
  c->lines = NULL;
  c->n_lines = 0;
  c->name = NULL;
}

static bool is_blank(char c) {
  /* '\r' so that files written on other systems still parse. */
  return c == ' ' || c == '\t' || c == '\r';
}

/*
 * Splits one line (without its '\n') into words.  On success *n_words words
 * are malloc'd in words[] (which has room for SR_CONF_MAX_WORDS).
 */
static int split_words(struct conf_ctx *ctx, const char *s, size_t n,
                       const char *file, unsigned lineno, char **words,
                       size_t *n_words) {
  char word[SR_CONF_MAX_LINE + 1];
  size_t nw = 0, i = 0;
  int r = 0;

  for (size_t k = 0; k < n; k++) {
    unsigned char c = (unsigned char)s[k];
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
      r = conf_error(ctx, file, lineno,
                     c == 0 ? "NUL byte" : "control character");
      goto fail;
    }
  }

  for (;;) {
    size_t wl = 0;

    while (i < n && is_blank(s[i]))
      i++;
    if (i >= n || s[i] == '#')
      break;
    if (nw >= SR_CONF_MAX_WORDS) {
      char msg[64];
      snprintf(msg, sizeof(msg), "too many words (max %d)", SR_CONF_MAX_WORDS);
      r = conf_error(ctx, file, lineno, msg);
      goto fail;
    }
    /* One word: unquoted runs and "quoted" runs glued together, until a
     * blank or a comment outside quotes. */
    while (i < n && !is_blank(s[i]) && s[i] != '#') {
      if (s[i] != '"') {
        word[wl++] = s[i++];
        continue;
      }
      i++;
      for (;;) {
        if (i >= n) {
          r = conf_error(ctx, file, lineno, "unterminated quote");
          goto fail;
        }
        if (s[i] == '"') {
          i++;
          break;
        }
        if (s[i] == '\\') {
          if (i + 1 < n && (s[i + 1] == '"' || s[i + 1] == '\\')) {
            word[wl++] = s[i + 1];
            i += 2;
            continue;
          }
          r = conf_error(ctx, file, lineno,
                         "invalid escape in quotes (only \\\" and \\\\)");
          goto fail;
        }
        word[wl++] = s[i++];
      }
    }
    word[wl] = '\0';
    /* Values reach the audit record and the JSON of --explain: text that
     * is not UTF-8 cannot be recorded faithfully, so it is refused here,
     * where a file and line can be named. */
    if (!sr_utf8_valid(word, wl)) {
      r = conf_error(ctx, file, lineno, "not valid UTF-8");
      goto fail;
    }
    words[nw] = strdup(word);
    if (!words[nw]) {
      r = -ENOMEM;
      goto fail;
    }
    nw++;
  }
  *n_words = nw;
  return 0;

fail:
  for (size_t k = 0; k < nw; k++)
    free(words[k]);
  return r;
}

static int push_line(struct conf_ctx *ctx, const char *file, unsigned lineno,
                     char **words, size_t n_words) {
  struct sr_conf *c = ctx->out;
  struct sr_conf_line *l;

  if (c->n_lines >= SR_CONF_MAX_TOTAL_LINES) {
    char msg[80];
    snprintf(msg, sizeof(msg), "too many lines with includes (max %d)",
             SR_CONF_MAX_TOTAL_LINES);
    return conf_error(ctx, file, lineno, msg);
  }
  if (c->n_lines == ctx->cap_lines) {
    size_t ncap = ctx->cap_lines ? ctx->cap_lines * 2 : 32;
    struct sr_conf_line *nl = realloc(c->lines, ncap * sizeof(*nl));
    if (!nl)
      return -ENOMEM;
    c->lines = nl;
    ctx->cap_lines = ncap;
  }
  l = &c->lines[c->n_lines];
  memset(l, 0, sizeof(*l));
  l->file = strdup(file);
  l->args = calloc(n_words, sizeof(char *)); /* n_words-1 args + NULL */
  if (!l->file || !l->args) {
    free(l->file);
    free(l->args);
    return -ENOMEM;
  }
  l->line = lineno;
  l->key = words[0];
  for (size_t k = 1; k < n_words; k++)
    l->args[k - 1] = words[k];
  l->n_args = n_words - 1;
  c->n_lines++;
  return 0;
}

static int parse_into(struct conf_ctx *ctx, const char *buf, size_t len,
                      const char *name) {
  size_t pos = 0;
  unsigned lineno = 0;
  int r;

  if (len > SR_CONF_MAX_BYTES)
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s: file too large (max %d bytes)", name,
                        SR_CONF_MAX_BYTES);
  while (pos < len) {
    const char *s = buf + pos;
    const char *nl = memchr(s, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - s) : len - pos;
    char *words[SR_CONF_MAX_WORDS];
    size_t n_words = 0;

    pos += n + (nl ? 1 : 0);
    lineno++;
    if (n > SR_CONF_MAX_LINE) {
      char msg[64];
      snprintf(msg, sizeof(msg), "line too long (max %d bytes)",
               SR_CONF_MAX_LINE);
      return conf_error(ctx, name, lineno, msg);
    }
    r = split_words(ctx, s, n, name, lineno, words, &n_words);
    if (r < 0)
      return r;
    if (n_words == 0)
      continue;
    if (strcmp(words[0], "include") != 0) {
      r = push_line(ctx, name, lineno, words, n_words);
      if (r < 0) {
        for (size_t k = 0; k < n_words; k++)
          free(words[k]);
        return r;
      }
      continue;
    }

    /* include NAME: splice the lines of NAME here. */
    {
      char where[SR_CONF_MAX_LINE];
      const char *target = n_words == 2 ? words[1] : NULL;
      bool allowed = ctx->allow_include;

      snprintf(where, sizeof(where), "%s:%u: ", name, lineno);
      if (n_words == 2 && target[0] != '\0' && allowed &&
          ctx->n_includes < SR_CONF_MAX_INCLUDES) {
        ctx->n_includes++;
        r = load_profile(ctx, target, where, NULL);
      } else if (!allowed) {
        r = conf_error(ctx, name, lineno,
                       "include is not allowed in skillrun.conf");
      } else if (n_words != 2 || target[0] == '\0') {
        r = conf_error(ctx, name, lineno, "include takes one profile NAME");
      } else {
        r = conf_error(ctx, name, lineno, "too many includes");
      }
      for (size_t k = 0; k < n_words; k++)
        free(words[k]);
      if (r < 0)
        return r;
    }
  }
  return 0;
}

/* Enters a file: rejects cycles and too deep nesting. */
static int push_frame(struct conf_ctx *ctx, const struct conf_frame *f,
                      const char *where, const char *name) {
  for (size_t i = 0; i < ctx->n_stack; i++) {
    const struct conf_frame *o = &ctx->stack[i];
    if ((f->builtin && o->builtin) ||
        (f->has_id && o->has_id && f->dev == o->dev && f->ino == o->ino))
      return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                          "%sinclude cycle: %s is already being read", where,
                          name);
  }
  if (ctx->n_stack >= SR_ARRAY_SIZE(ctx->stack))
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sincludes nested too deeply (max %d)", where,
                        SR_CONF_MAX_INCLUDE_DEPTH);
  ctx->stack[ctx->n_stack++] = *f;
  return 0;
}

static int parse_framed(struct conf_ctx *ctx, const struct conf_frame *f,
                        const char *buf, size_t len, const char *name,
                        const char *where) {
  int r;

  r = push_frame(ctx, f, where, name);
  if (r < 0)
    return r;
  r = parse_into(ctx, buf, len, name);
  ctx->n_stack--;
  return r;
}

/* Reads an opened file (regular, size-capped) and parses it. */
static int parse_fd(struct conf_ctx *ctx, int fd, int dir, const char *name,
                    const char *where) {
  _cleanup_free_ char *buf = NULL;
  struct conf_frame f = {.has_id = true, .dir = dir, .name = name};
  struct stat st;
  size_t len;
  int r;

  if (fstat(fd, &st) < 0)
    return sr_error_set(ctx->err, SR_EXIT_FAILED, errno, "config_invalid",
                        "%s%s", where, name);
  if (!S_ISREG(st.st_mode))
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s%s: not a regular file", where, name);
  if (st.st_size > SR_CONF_MAX_BYTES)
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s%s: file too large (max %d bytes)", where, name,
                        SR_CONF_MAX_BYTES);
  f.dev = st.st_dev;
  f.ino = st.st_ino;
  r = sr_read_fd(fd, SR_CONF_MAX_BYTES, &buf, &len);
  if (r == -EFBIG)
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s%s: file too large (max %d bytes)", where, name,
                        SR_CONF_MAX_BYTES);
  if (r < 0)
    return sr_error_set(ctx->err, SR_EXIT_FAILED, -r, "config_invalid",
                        "%sread %s", where, name);
  return parse_framed(ctx, &f, buf, len, name, where);
}

/* The one way a configuration file is opened (sr_open_regular_in): no
 * symbolic link as its last component, a FIFO or a device refused before
 * it can block, at most SR_CONF_MAX_BYTES.  An fd or -errno (*st for the
 * message); the directory it is in to *dir. */
static int open_conf(int at, const char *path, struct stat *st, int *dir) {
  return sr_open_regular_in(at, path, SR_CONF_MAX_BYTES, st, dir);
}

static int open_error(struct conf_ctx *ctx, int r, const struct stat *st,
                      const char *where, const char *path) {
  char why[128];

  return sr_error_set(
      ctx->err, SR_EXIT_FAILED, sr_open_regular_errno(r), "config_invalid",
      "%s%s %s", where, path,
      sr_open_regular_why(r, st, SR_CONF_MAX_BYTES, why, sizeof(why)));
}

/* A directory on the way to path another user can write (or its check
 * failed: r), as config_invalid. */
static int dir_error(struct sr_error *err, int r, const struct sr_dir_fault *f,
                     const char *where, const char *what, const char *path) {
  char why[PATH_MAX * 2 + 128];

  if (r != -EPERM)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid",
                        "%s%s%s: cannot check the directories above it", where,
                        what, path);
  return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid", "%s%s%s %s",
                      where, what, path, sr_dir_fault_why(f, why, sizeof(why)));
}

/* sr_conf_parse_file: the file as is, without the checks of a profile
 * (its includes get them). */
static int parse_path(struct conf_ctx *ctx, const char *path,
                      const char *where) {
  _cleanup_close_ int fd = -1, dir = -1;
  struct stat st;

  fd = open_conf(AT_FDCWD, path, &st, &dir);
  if (fd < 0)
    return open_error(ctx, fd, &st, where, path);
  return parse_fd(ctx, fd, dir, path, where);
}

/*
 * A profile found by name comes from a directory the environment names
 * ($XDG_CONFIG_HOME, $HOME, SKILLRUN_PROFILE_PATH), which su and sudo -E
 * carry from one user to another; one named by a path (-p PATH, include
 * PATH) may be anywhere, another user's file or one in a directory others
 * share.  It decides what the skill gets (env-keep, network,
 * seccomp-allow): the doas(1) rule, as for the workspace, on the opened
 * file.  It belongs to the caller or to root and nobody else may write it.
 */
static int check_found_profile(struct conf_ctx *ctx, int fd,
                               const struct stat *st, const char *where,
                               const char *path, bool by_name) {
  uid_t me = geteuid();
  bool acl;

  if (sr_fd_owner_unmapped(fd, st))
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sprofile %s " SR_UNMAPPED_OWNER_FMT
                        " (use a profile of your own or root's as mapped "
                        "here)",
                        where, path, (unsigned)st->st_uid);
  if (st->st_uid != me && st->st_uid != 0) {
    const struct passwd *pw = getpwuid(st->st_uid);
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sprofile %s belongs to uid %u%s%s%s, not to you "
                        "(uid %u) or root: refusing a profile another user "
                        "controls (%s)",
                        where, path, (unsigned)st->st_uid, pw ? " (" : "",
                        pw ? pw->pw_name : "", pw ? ")" : "", (unsigned)me,
                        by_name ? "is $XDG_CONFIG_HOME or $HOME another "
                                  "user's?"
                                : "use a copy of your own, or chown root it");
  }
  /* The owner's private group is excepted for its write, not an access
   * ACL's named entries, whose mask those group bits then are. */
  acl = (st->st_mode & S_IWGRP) && sr_fd_acl_grants_others(fd, 2, me);
  if ((st->st_mode & S_IWOTH) ||
      ((st->st_mode & S_IWGRP) && (acl || !sr_owners_private_group(st))))
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sprofile %s is writable by %s (mode %04o): "
                        "refusing a profile others can change (chmod go-w "
                        "it)",
                        where, path,
                        (st->st_mode & S_IWOTH) ? "others"
                        : acl ? "other users through its access ACL"
                              : "its group",
                        (unsigned)(st->st_mode & 07777));
  return 0;
}

static bool valid_profile_name(const char *s) {
  return sr_valid_filename(s) && !strstr(s, "..") &&
         strlen(s) <= 255 - strlen(".profile");
}

/* The directories searched for NAME.profile, in order (malloc'd strv). */
static int profile_search_dirs(struct sr_strv *dirs) {
  const char *env = getenv("SKILLRUN_PROFILE_PATH");
  const char *xdg = getenv("XDG_CONFIG_HOME");
  const char *home = getenv("HOME");
  int r;

  if (env && *env) {
    /* Colon-separated, like PATH; empty entries are skipped. */
    _cleanup_free_ char *copy = strdup(env);
    char *save = NULL;
    if (!copy)
      return -ENOMEM;
    for (char *t = strtok_r(copy, ":", &save); t;
         t = strtok_r(NULL, ":", &save)) {
      r = sr_strv_push(dirs, t);
      if (r < 0)
        return r;
    }
  }
  r = sr_strv_push(dirs, SR_SYSCONFDIR "/skillrun/profiles");
  if (r < 0)
    return r;
  /* XDG base directory spec: relative values are invalid and ignored. */
  if (xdg && xdg[0] == '/') {
    _cleanup_free_ char *d = NULL;
    if (asprintf(&d, "%s/skillrun/profiles", xdg) < 0)
      return -ENOMEM;
    r = sr_strv_push(dirs, d);
  } else if (home && home[0] == '/') {
    _cleanup_free_ char *d = NULL;
    if (asprintf(&d, "%s/.config/skillrun/profiles", home) < 0)
      return -ENOMEM;
    r = sr_strv_push(dirs, d);
  }
  if (r < 0)
    return r;
  return sr_strv_push(dirs, SR_DATADIR "/skillrun/profiles");
}

/* A profile opened (fd, in directory dir): the owner and mode of the file
 * and the directories above it are checked, then it is parsed. */
static int use_profile(struct conf_ctx *ctx, int fd, int dir,
                       const struct stat *st, const char *where,
                       const char *path, bool by_name, char **resolved) {
  struct sr_dir_fault fault;
  int r;

  r = check_found_profile(ctx, fd, st, where, path, by_name);
  if (r < 0)
    return r;
  /* And the directories it is in: whoever can write one can put
   * another profile under its name. */
  r = sr_check_dir_chain(dir, geteuid(), sr_dir_group_is_owners, 0, &fault);
  if (r < 0)
    return dir_error(ctx->err, r, &fault, where, "profile ", path);
  if (resolved) {
    *resolved = strdup(path);
    if (!*resolved)
      return -ENOMEM;
  }
  r = parse_fd(ctx, fd, dir, path, where);
  if (r < 0 && resolved) {
    free(*resolved);
    *resolved = NULL;
  }
  return r;
}

/*
 * A profile named by a path: -p PATH as the caller typed it (relative to
 * the working directory), include PATH relative to the directory of the
 * file that includes it, as ssh_config's Include, opened through that
 * directory's fd (a buffer's include, with no file, is relative to the
 * working directory).  Checked as one found by name: it could otherwise
 * be another user's, in a directory others share where root happens to
 * run, and reach the skill with what it says.
 */
static int load_path(struct conf_ctx *ctx, const char *path, const char *where,
                     char **resolved) {
  const struct conf_frame *in =
      ctx->n_stack ? &ctx->stack[ctx->n_stack - 1] : NULL;
  _cleanup_free_ char *shown = NULL;
  _cleanup_close_ int fd = -1, dir = -1;
  int at = AT_FDCWD;
  struct stat st;

  if (path[0] != '/' && in && in->builtin)
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sinclude %s: a relative path in the built-in "
                        "profile",
                        where, path);
  if (path[0] != '/' && in && in->dir >= 0) {
    const char *slash = strrchr(in->name, '/');
    const char *rel = path;

    while (rel[0] == '.' && rel[1] == '/')
      for (rel += 2; *rel == '/';)
        rel++;
    at = in->dir;
    /* What it is shown as: the includer's directory and the path. */
    if (slash &&
        asprintf(&shown, "%.*s/%s", (int)(slash - in->name), in->name, rel) < 0)
      return -ENOMEM;
  }
  fd = open_conf(at, path, &st, &dir);
  if (fd < 0)
    return open_error(ctx, fd, &st, where, shown ? shown : path);
  return use_profile(ctx, fd, dir, &st, where, shown ? shown : path, false,
                     resolved);
}

static int load_profile(struct conf_ctx *ctx, const char *name_or_path,
                        const char *where, char **resolved) {
  _cleanup_(sr_strv_done) struct sr_strv dirs = {0};
  char looked[768] = "";
  size_t used = 0;
  int r;

  if (!name_or_path || !strcmp(name_or_path, "default")) {
    struct conf_frame f = {.builtin = true, .dir = -1};
    if (resolved) {
      *resolved = strdup(SR_DEFAULT_PROFILE_NAME);
      if (!*resolved)
        return -ENOMEM;
    }
    return parse_framed(ctx, &f, sr_default_profile, strlen(sr_default_profile),
                        SR_DEFAULT_PROFILE_NAME, where);
  }

  if (strchr(name_or_path, '/'))
    return load_path(ctx, name_or_path, where, resolved);

  if (!valid_profile_name(name_or_path))
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sinvalid profile name (a plain file name or a path "
                        "containing '/' is expected)",
                        where);
  r = profile_search_dirs(&dirs);
  if (r < 0)
    return r;
  for (size_t i = 0; i < dirs.n; i++) {
    _cleanup_free_ char *path = NULL;
    _cleanup_close_ int fd = -1, dir = -1;
    struct stat st;
    int n;

    if (asprintf(&path, "%s/%s.profile", dirs.v[i], name_or_path) < 0)
      return -ENOMEM;
    fd = sr_open_regular_in(AT_FDCWD, path, SR_CONF_MAX_BYTES, &st, &dir);
    /* Like execvp(3): a directory we may not search (another user's $HOME
     * after su) does not stop the search, but the final message says so;
     * nor does one reached through another user's symbolic link (a link
     * of theirs in their $HOME), which is not followed. */
    if (fd == -SR_EFOREIGNLINK) {
      if (!S_ISDIR(st.st_mode))
        n = snprintf(looked + used, sizeof(looked) - used,
                     "%s%s (through a symbolic link of uid %u, not followed)",
                     used ? ", " : "", path, (unsigned)st.st_uid);
      else
        n = snprintf(looked + used, sizeof(looked) - used,
                     "%s%s (through \"..\" out of a directory another user "
                     "may move, not walked)",
                     used ? ", " : "", path);
      if (n > 0 && (size_t)n < sizeof(looked) - used)
        used += (size_t)n;
      continue;
    }
    if (fd == -ENOENT || fd == -ENOTDIR || fd == -EACCES) {
      n = snprintf(looked + used, sizeof(looked) - used, "%s%s%s",
                   used ? ", " : "", path,
                   fd == -EACCES ? " (permission denied)" : "");
      if (n > 0 && (size_t)n < sizeof(looked) - used)
        used += (size_t)n;
      continue;
    }
    /* Anything else (a symbolic link, a FIFO, EIO...) is an error, not a
     * reason to fall through to a later directory. */
    if (fd < 0)
      return open_error(ctx, fd, &st, where, path);
    return use_profile(ctx, fd, dir, &st, where, path, true, resolved);
  }
  /* "-p wc.profile" for a file in the working directory, or "include
   * default.profile": the suffix is not part of a name, and the usual
   * hint (./NAME.profile) would name a file that is not there. */
  size_t len = strlen(name_or_path), sfx = strlen(".profile");
  if (len > sfx && !strcmp(name_or_path + len - sfx, ".profile"))
    return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%sprofile '%s' not found (looked in: %s); a name "
                        "is given without '.profile' ('%.*s'), a file with "
                        "a path (./%s)",
                        where, name_or_path, looked, (int)(len - sfx),
                        name_or_path, name_or_path);
  return sr_error_set(ctx->err, SR_EXIT_FAILED, 0, "config_invalid",
                      "%sprofile '%s' not found (looked in: %s); name its "
                      "file with a path (./%s.profile) or add its directory "
                      "to SKILLRUN_PROFILE_PATH",
                      where, name_or_path, looked, name_or_path);
}

/* Parsing goes into a private conf that reaches *out only on success. */
static void ctx_init(struct conf_ctx *ctx, struct sr_conf *tmp, bool include,
                     struct sr_error *err) {
  memset(ctx, 0, sizeof(*ctx));
  memset(tmp, 0, sizeof(*tmp));
  ctx->out = tmp;
  ctx->allow_include = include;
  ctx->err = err;
}

static int finish(struct sr_conf *tmp, const char *name, struct sr_conf *out,
                  int r, struct sr_error *err) {
  if (r >= 0 && name) {
    tmp->name = strdup(name);
    if (!tmp->name)
      r = -ENOMEM;
  }
  if (r < 0) {
    sr_conf_done(tmp);
    /* Only ENOMEM gets here without a message. */
    if (!sr_error_is_set(err))
      sr_error_set(err, SR_EXIT_FAILED, -r, "config_invalid", "%s",
                   name ? name : "configuration");
    return r;
  }
  *out = *tmp;
  return 0;
}

int sr_conf_parse_buffer(const char *buf, size_t len, const char *display_name,
                         struct sr_conf *out, struct sr_error *err) {
  struct conf_ctx ctx;
  struct sr_conf tmp;
  const char *name = display_name ? display_name : "(buffer)";
  struct conf_frame f = {.dir = -1, .name = name};
  int r;

  ctx_init(&ctx, &tmp, true, err);
  r = parse_framed(&ctx, &f, buf, len, name, "");
  return finish(&tmp, name, out, r, err);
}

int sr_conf_parse_file(const char *path, struct sr_conf *out,
                       struct sr_error *err) {
  struct conf_ctx ctx;
  struct sr_conf tmp;
  int r;

  ctx_init(&ctx, &tmp, true, err);
  r = parse_path(&ctx, path, "");
  return finish(&tmp, path, out, r, err);
}

int sr_conf_load_platform(const char *path, bool named, struct sr_conf *out,
                          struct sr_error *err) {
  _cleanup_close_ int fd = -1, dir = -1;
  struct sr_dir_fault fault;
  struct conf_ctx ctx;
  struct sr_conf tmp;
  struct stat st;
  int r;

  if (!path)
    path = SR_PLATFORM_CONF;
  memset(out, 0, sizeof(*out));
  ctx_init(&ctx, &tmp, false, err);
  fd = sr_open_regular_in(AT_FDCWD, path, SR_CONF_MAX_BYTES, &st, &dir);
  /* Only the default path may be absent: a --conf that names nothing is
   * a mistake that must not silently mean the built-in caps. */
  if ((fd == -ENOENT || fd == -ENOTDIR) && !named)
    return 0;
  if (fd < 0)
    return open_error(&ctx, fd, &st, named ? "--conf " : "", path);
  /* doas(1) rule: the file that sets the ceilings must be root's alone,
   * checked on the opened fd so a rename race cannot swap it.  Fail
   * closed: ignoring it would also drop what it requires (a capability,
   * a signature) and the caps it lowers. */
  if (st.st_uid != 0 && sr_fd_owner_unmapped(fd, &st))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s " SR_UNMAPPED_OWNER_FMT
                        " (run skillrun where root is mapped, or name a "
                        "skillrun.conf of root's as mapped here with --conf)",
                        path, (unsigned)st.st_uid);
  if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return sr_error_set(err, SR_EXIT_FAILED, 0, "config_invalid",
                        "%s is not root's alone (owner uid %u, mode %04o): "
                        "the platform configuration must be owned by root "
                        "and not writable by group or others",
                        path, (unsigned)st.st_uid,
                        (unsigned)(st.st_mode & 07777));
  /* Nor may anyone else write a directory above it, who could rename
   * another file of root's over it. */
  r = sr_check_dir_chain(dir, 0, NULL, 0, &fault);
  if (r < 0)
    return dir_error(err, r, &fault, "", "", path);
  /* No include: skillrun.conf is root's alone, which no profile is. */
  r = parse_fd(&ctx, fd, -1, path, "");
  return finish(&tmp, path, out, r, err);
}

int sr_conf_load_profile(const char *name_or_path, struct sr_conf *out,
                         char **resolved, struct sr_error *err) {
  _cleanup_free_ char *res = NULL;
  struct conf_ctx ctx;
  struct sr_conf tmp;
  int r;

  ctx_init(&ctx, &tmp, true, err);
  r = load_profile(&ctx, name_or_path, "", &res);
  r = finish(&tmp, res ? res : name_or_path, out, r, err);
  if (r < 0)
    return r;
  if (resolved)
    *resolved = TAKE_PTR(res);
  return 0;
}
