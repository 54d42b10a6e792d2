/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdutil.h"
#include "sha256.h"
#include "util.h"
#include "workspace.h"

#define OPEN_DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define HARVEST_MAX_DEPTH 32
#define HARVEST_MAX_FILES 10000

int sr_workspace_default_root(char **out, struct sr_error *err) {
  const char *base;
  char *s = NULL;
  int r;

  if (geteuid() == 0) {
    s = strdup(SR_LOCALSTATEDIR "/lib/skillrun/runs");
  } else if ((base = getenv("XDG_STATE_HOME")) && base[0] == '/') {
    r = asprintf(&s, "%s/skillrun/runs", base);
    if (r < 0)
      s = NULL;
  } else if ((base = getenv("HOME")) && base[0] == '/' &&
             access(base, W_OK) == 0) {
    r = asprintf(&s, "%s/.local/state/skillrun/runs", base);
    if (r < 0)
      s = NULL;
  } else {
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "no usable workspace root: HOME is not writable; "
                        "pass --workspace-root DIR");
  }
  if (!s)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  *out = s;
  return 0;
}

/* mkdir -p for the workspace root itself (an administrator's or user's
 * path); components below it are created with mkdirat only. */
static int mkdir_parents(const char *path, mode_t mode) {
  char buf[PATH_MAX];
  size_t n = strlen(path);

  if (n == 0 || n >= sizeof(buf))
    return -ENAMETOOLONG;
  memcpy(buf, path, n + 1);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(buf, mode) < 0 && errno != EEXIST)
      return -errno;
    *p = '/';
  }
  if (mkdir(buf, mode) < 0 && errno != EEXIST)
    return -errno;
  return 0;
}

/* Every directory from / to path has the search bit for others. */
static int check_traversable(const char *path) {
  char buf[PATH_MAX];
  size_t n = strlen(path);

  if (n >= sizeof(buf))
    return -ENAMETOOLONG;
  memcpy(buf, path, n + 1);
  for (;;) {
    struct stat st;
    char *slash;

    if (stat(buf[0] ? buf : "/", &st) < 0)
      return -errno;
    if (!(st.st_mode & S_IXOTH))
      return -EACCES;
    slash = strrchr(buf, '/');
    if (!slash || slash == buf) {
      if (buf[0] == '\0' || !strcmp(buf, "/"))
        return 0;
      buf[0] = '\0';
      continue;
    }
    *slash = '\0';
  }
}

static int open_or_make_dir_at(int dirfd, const char *name, mode_t mode) {
  int fd;

  if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
    return -errno;
  fd = openat(dirfd, name, OPEN_DIR_FLAGS);
  return fd < 0 ? -errno : fd;
}

static int make_dir_at(int dirfd, const char *name, mode_t mode) {
  int fd;

  if (mkdirat(dirfd, name, mode) < 0)
    return -errno;
  /* mkdirat honours the umask; the modes here are part of the contract. */
  fd = openat(dirfd, name, OPEN_DIR_FLAGS);
  if (fd < 0)
    return -errno;
  if (fchmod(fd, mode) < 0) {
    int r = -errno;
    safe_close(fd);
    return r;
  }
  return fd;
}

static void ws_init(struct sr_workspace *ws) {
  memset(ws, 0, sizeof(*ws));
  ws->root_fd = ws->tenant_fd = ws->run_fd = -1;
  ws->active_fd = ws->staging_fd = ws->bundle_fd = ws->inputs_fd = -1;
  ws->logs_fd = -1;
}

static int path_join(char **out, const char *a, const char *b) {
  if (asprintf(out, "%s/%s", a, b) < 0) {
    *out = NULL;
    return -ENOMEM;
  }
  return 0;
}

int sr_workspace_create(struct sr_workspace *ws, const char *root,
                        const char *tenant, const char *execution,
                        struct sr_error *err) {
  _cleanup_close_ int active_dir = -1;
  char resolved[PATH_MAX];
  int r;

  ws_init(ws);
  if (!sr_valid_id(tenant) || !sr_valid_id(execution))
    return sr_error_set(err, SR_EXIT_REFUSED, 0, "invalid_id",
                        "invalid tenant or execution id");
  if (root[0] != '/')
    return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                        "workspace root '%s' must be an absolute path", root);
  /* 0711: a pool uid inside the sandbox must traverse to its staging copy,
   * but nobody lists other runs. */
  r = mkdir_parents(root, 0711);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create workspace root %s", root);
  if (!realpath(root, resolved))
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot resolve workspace root %s", root);
  /* As root the sandbox runs as an unprivileged host uid that must reach
   * its staging copy: say so now rather than fail inside the sandbox. */
  if (geteuid() == 0) {
    r = check_traversable(resolved);
    if (r < 0)
      return sr_error_set(err, SR_EXIT_FAILED, 0, "workspace",
                          "workspace root %s: a directory on its path is not "
                          "searchable by others (the sandbox user); give it "
                          "mode 0711 or use another --workspace-root",
                          resolved);
  }
  ws->root = strdup(resolved);
  if (!ws->root)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  ws->root_fd = open(resolved, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (ws->root_fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot open workspace root %s", resolved);

  /* Leftovers of runs whose supervisor was killed are cleaned by the next
   * run; a failure here must not stop this run. */
  (void)sr_workspace_gc(ws->root, false, NULL, NULL);

  r = open_or_make_dir_at(ws->root_fd, tenant, 0711);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create tenant directory %s/%s", resolved,
                        tenant);
  ws->tenant_fd = r;

  /* The O_EXCL step: mkdir fails with EEXIST if this id ever ran. */
  if (mkdirat(ws->tenant_fd, execution, 0711) < 0) {
    if (errno == EEXIST)
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "execution_replayed",
                          "execution id '%s' of tenant '%s' has already run; "
                          "an execution id can run only once",
                          execution, tenant);
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot create run directory %s/%s/%s", resolved,
                        tenant, execution);
  }
  ws->run_fd = openat(ws->tenant_fd, execution, OPEN_DIR_FLAGS);
  if (ws->run_fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot open run directory");
  if (fchmod(ws->run_fd, 0711) < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                        "cannot set the run directory's mode");
  if (asprintf(&ws->run_path, "%s/%s/%s", resolved, tenant, execution) < 0) {
    ws->run_path = NULL;
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  }

  /* A marker per live run, so that gc need not scan every run ever made. */
  r = open_or_make_dir_at(ws->root_fd, ".active", 0700);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create %s/.active", resolved);
  active_dir = r;
  if (asprintf(&ws->active_name, "%s:%s", tenant, execution) < 0) {
    ws->active_name = NULL;
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  }
  /* Locked under a temporary name first, so gc never sees an unlocked
   * marker of a live run. */
  {
    char tmp[64];
    snprintf(tmp, sizeof(tmp), ".tmp-%d", (int)getpid());
    (void)unlinkat(active_dir, tmp, 0); /* a stale one of a reused pid */
    ws->active_fd =
        openat(active_dir, tmp,
               O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (ws->active_fd < 0 || flock(ws->active_fd, LOCK_EX | LOCK_NB) < 0 ||
        renameat(active_dir, tmp, active_dir, ws->active_name) < 0)
      return sr_error_set(err, SR_EXIT_FAILED, errno, "workspace",
                          "cannot create the run marker");
  }

  r = make_dir_at(ws->run_fd, "staging", 0711);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create staging directory");
  ws->staging_fd = r;
  r = make_dir_at(ws->staging_fd, "bundle", 0755);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create staging directory");
  ws->bundle_fd = r;
  /* staging/inputs only when there are inputs (sr_workspace_stage_inputs):
   * on ext4 a directory costs 0.1-0.3 ms to create and to evict again. */
  r = make_dir_at(ws->run_fd, "logs", 0700);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                        "cannot create logs directory");
  ws->logs_fd = r;
  if (path_join(&ws->bundle_path, ws->run_path, "staging/bundle") < 0 ||
      path_join(&ws->metadata_path, ws->run_path, "metadata.json") < 0)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace", "workspace");
  return 0;
}

int sr_copy_hash(int in_fd, int out_fd, uint64_t max, uint64_t *size,
                 char sha256_hex[65]) {
  struct sr_sha256 ctx;
  unsigned char md[SR_SHA256_LEN];
  static char buf[128 * 1024];
  uint64_t total = 0;
  int r;

  r = sr_sha256_init(&ctx);
  if (r < 0)
    return r;
  for (;;) {
    ssize_t n = read(in_fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      r = -errno;
      goto out;
    }
    if (n == 0)
      break;
    total += (uint64_t)n;
    if (total > max) {
      r = -EFBIG;
      goto out;
    }
    r = sr_sha256_update(&ctx, buf, (size_t)n);
    if (r < 0)
      return r; /* released on failure */
    if (out_fd >= 0) {
      r = sr_write_all(out_fd, buf, (size_t)n);
      if (r < 0)
        goto out;
    }
  }
  r = sr_sha256_final(&ctx, md);
  if (r < 0)
    return r;
  sr_hex(md, sizeof(md), sha256_hex);
  *size = total;
  return 0;
out:
  sr_sha256_release(&ctx);
  return r;
}

int sr_workspace_stage_inputs(struct sr_workspace *ws, const struct sr_args *a,
                              const struct sr_policy *p, struct sr_audit *audit,
                              json_t **ret_inputs, struct sr_error *err) {
  json_t *list = json_array();
  uint64_t budget = p->limits[SR_LIM_INPUTS_SIZE].value;
  int r;

  if (!list)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
  if (a->n_inputs > 0 && ws->inputs_fd < 0) {
    r = make_dir_at(ws->staging_fd, "inputs", 0755);
    if (r < 0) {
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "workspace",
                          "cannot create staging directory");
    }
    ws->inputs_fd = r;
    if (path_join(&ws->inputs_path, ws->run_path, "staging/inputs") < 0) {
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "workspace",
                          "workspace");
    }
  }
  for (size_t i = 0; i < a->n_inputs; i++) {
    const struct sr_input_arg *in = &a->inputs[i];
    _cleanup_close_ int src = -1, dst = -1;
    struct stat st;
    char hex[65];
    uint64_t size = 0;

    if (!strcmp(in->name, "bundle")) {
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, 0, "inputs",
                          "input name 'bundle' is reserved for the bundle");
    }
    src = open(in->path,
               O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (src < 0 || fstat(src, &st) < 0 || !S_ISREG(st.st_mode)) {
      int e = src < 0 ? errno : 0;
      json_decref(list);
      if (e == ELOOP)
        return sr_error_set(err, SR_EXIT_REFUSED, 0, "input_invalid",
                            "input %s: symbolic links are not accepted",
                            in->path);
      if (e)
        return sr_error_set(err, SR_EXIT_FAILED, e, "input_invalid", "input %s",
                            in->path);
      return sr_error_set(err, SR_EXIT_REFUSED, 0, "input_invalid",
                          "input %s: not a regular file", in->path);
    }
    dst = openat(ws->inputs_fd, in->name,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (dst < 0) {
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, errno, "inputs",
                          "cannot stage input %s", in->name);
    }
    r = sr_copy_hash(src, dst, budget, &size, hex);
    if (r < 0) {
      json_decref(list);
      if (r == -EFBIG)
        return sr_error_set(err, SR_EXIT_REFUSED, 0, "input_too_large",
                            "inputs exceed the inputs-size limit of %" PRIu64
                            " bytes (at %s)",
                            p->limits[SR_LIM_INPUTS_SIZE].value, in->path);
      return sr_error_set(err, SR_EXIT_FAILED, -r, "inputs",
                          "cannot copy input %s", in->path);
    }
    (void)fchmod(dst, 0644); /* umask; the mode only matters for readability */
    budget -= size;
    json_t *item = json_pack("{s:s, s:I, s:s}", "name", in->name, "size",
                             (json_int_t)size, "sha256", hex);
    if (!item || json_array_append(list, item) < 0) {
      json_decref(item);
      json_decref(list);
      return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "inputs", "inputs");
    }
    r = sr_audit_emit(audit, "input_staged", item, err);
    if (r < 0) {
      json_decref(list);
      return r;
    }
  }
  *ret_inputs = list;
  return 0;
}

int sr_workspace_write_metadata(struct sr_workspace *ws, const json_t *meta,
                                struct sr_error *err) {
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int fd = -1;
  int r;

  text = json_dumps(meta, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  if (!text)
    return sr_error_set(err, SR_EXIT_FAILED, ENOMEM, "metadata", "metadata");
  (void)unlinkat(ws->run_fd, "metadata.json.tmp", 0); /* stale temp file */
  fd = openat(ws->run_fd, "metadata.json.tmp",
              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "metadata",
                        "cannot write metadata.json");
  r = sr_write_all(fd, text, strlen(text));
  if (r >= 0)
    r = sr_write_all(fd, "\n", 1);
  if (r >= 0 && fchmod(fd, 0644) < 0)
    r = -errno;
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "metadata",
                        "cannot write metadata.json");
  if (renameat(ws->run_fd, "metadata.json.tmp", ws->run_fd, "metadata.json") <
      0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "metadata",
                        "cannot write metadata.json");
  return 0;
}

int sr_workspace_open_logs(struct sr_workspace *ws, int *out_fd, int *err_fd,
                           struct sr_error *err) {
  int o, e;

  o = openat(ws->logs_fd, "stdout.log",
             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND,
             0640);
  if (o < 0)
    return sr_error_set(err, SR_EXIT_FAILED, errno, "logs",
                        "cannot create logs/stdout.log");
  e = openat(ws->logs_fd, "stderr.log",
             O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND,
             0640);
  if (e < 0) {
    int saved = errno;
    safe_close(o);
    return sr_error_set(err, SR_EXIT_FAILED, saved, "logs",
                        "cannot create logs/stderr.log");
  }
  *out_fd = o;
  *err_fd = e;
  return 0;
}

struct harvest {
  struct sr_audit *audit;
  uint64_t budget;
  uint64_t n_files;
  uint64_t n_bytes;
  bool stopped;
  struct sr_error *err;
};

static int harvest_dir(struct harvest *h, int src_dir, int dst_dir,
                       const char *prefix, unsigned depth) {
  DIR *d;
  struct dirent *de;
  int dupfd, r = 0;

  dupfd = fcntl(src_dir, F_DUPFD_CLOEXEC, 3);
  if (dupfd < 0)
    return sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest", "harvest");
  d = fdopendir(dupfd);
  if (!d) {
    safe_close(dupfd);
    return sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest", "harvest");
  }
  rewinddir(d);
  while (r >= 0 && !h->stopped && (de = readdir(d))) {
    _cleanup_free_ char *rel = NULL;
    struct stat st;

    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
      continue;
    if (asprintf(&rel, "%s%s", prefix, de->d_name) < 0) {
      rel = NULL;
      r = sr_error_set(h->err, SR_EXIT_FAILED, ENOMEM, "harvest", "harvest");
      break;
    }
    if (fstatat(src_dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
      continue;
    if (sr_has_control_chars(de->d_name) ||
        (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
      json_t *w = json_pack("{s:s, s:s}", "message",
                            "output skipped: not a regular file or directory, "
                            "or a name with control characters",
                            "path", rel);
      r = sr_audit_emit(h->audit, "warning", w, h->err);
      continue;
    }
    if (h->n_files >= HARVEST_MAX_FILES) {
      h->stopped = true;
      break;
    }
    if (S_ISDIR(st.st_mode)) {
      _cleanup_close_ int s = -1, t = -1;
      _cleanup_free_ char *sub = NULL;
      if (depth >= HARVEST_MAX_DEPTH)
        continue;
      s = openat(src_dir, de->d_name, OPEN_DIR_FLAGS);
      if (s < 0)
        continue;
      if (mkdirat(dst_dir, de->d_name, 0755) < 0 && errno != EEXIST) {
        r = sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                         "cannot create outputs/%s", rel);
        break;
      }
      t = openat(dst_dir, de->d_name, OPEN_DIR_FLAGS);
      if (t < 0) {
        r = sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                         "cannot open outputs/%s", rel);
        break;
      }
      if (asprintf(&sub, "%s/", rel) < 0) {
        sub = NULL;
        r = -ENOMEM;
        break;
      }
      r = harvest_dir(h, s, t, sub, depth + 1);
    } else {
      _cleanup_close_ int s = -1, t = -1;
      uint64_t size = 0;
      char hex[65];
      int q;

      s = openat(src_dir, de->d_name,
                 O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
      if (s < 0)
        continue;
      t = openat(dst_dir, de->d_name,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (t < 0) {
        r = sr_error_set(h->err, SR_EXIT_FAILED, errno, "harvest",
                         "cannot create outputs/%s", rel);
        break;
      }
      q = sr_copy_hash(s, t, h->budget, &size, hex);
      if (q == -EFBIG) {
        /* Over the harvest cap: the partial copy is not an artifact. */
        (void)unlinkat(dst_dir, de->d_name, 0);
        h->stopped = true;
        break;
      }
      if (q < 0) {
        r = sr_error_set(h->err, SR_EXIT_FAILED, -q, "harvest",
                         "cannot copy outputs/%s", rel);
        break;
      }
      h->budget -= size;
      h->n_files++;
      h->n_bytes += size;
      r = sr_audit_emit(h->audit, "artifact_committed",
                        json_pack("{s:s, s:I, s:s}", "path", rel, "size",
                                  (json_int_t)size, "sha256", hex),
                        h->err);
    }
  }
  closedir(d);
  return r;
}

int sr_workspace_harvest(struct sr_workspace *ws, int outputs_fd, uint64_t cap,
                         struct sr_audit *audit, uint64_t *n_files,
                         uint64_t *n_bytes, struct sr_error *err) {
  struct harvest h = {.audit = audit, .budget = cap, .err = err};
  _cleanup_close_ int dst = -1;
  int r;

  r = make_dir_at(ws->run_fd, "outputs", 0755);
  if (r < 0)
    return sr_error_set(err, SR_EXIT_FAILED, -r, "harvest",
                        "cannot create outputs directory");
  dst = r;
  if (outputs_fd >= 0) {
    r = harvest_dir(&h, outputs_fd, dst, "", 0);
    if (r < 0)
      return r;
    if (h.stopped) {
      r = sr_audit_emit(audit, "limit_exceeded",
                        json_pack("{s:s, s:I, s:I}", "limit", "output", "cap",
                                  (json_int_t)cap, "files",
                                  (json_int_t)h.n_files),
                        err);
      if (r < 0)
        return r;
    }
  }
  *n_files = h.n_files;
  *n_bytes = h.n_bytes;
  return 0;
}

void sr_workspace_finish(struct sr_workspace *ws) {
  if (ws->run_fd >= 0 && ws->staging_fd >= 0) {
    /* Best effort: a leftover is cleaned by the next run's gc. */
    (void)sr_rm_rf_at(ws->run_fd, "staging");
  }
  if (ws->root_fd >= 0 && ws->active_name) {
    _cleanup_close_ int active_dir =
        openat(ws->root_fd, ".active", OPEN_DIR_FLAGS);
    if (active_dir >= 0)
      (void)unlinkat(active_dir, ws->active_name,
                     0); /* gc removes it otherwise */
  }
  safe_close(ws->staging_fd);
  safe_close(ws->bundle_fd);
  safe_close(ws->inputs_fd);
  safe_close(ws->logs_fd);
  safe_close(ws->active_fd);
  safe_close(ws->run_fd);
  safe_close(ws->tenant_fd);
  safe_close(ws->root_fd);
  free(ws->root);
  free(ws->run_path);
  free(ws->active_name);
  free(ws->bundle_path);
  free(ws->inputs_path);
  free(ws->metadata_path);
  ws_init(ws);
}

int sr_workspace_gc(const char *root, bool verbose, unsigned *n_cleaned,
                    struct sr_error *err) {
  _cleanup_close_ int root_fd = -1, active_fd = -1;
  DIR *d;
  struct dirent *de;
  unsigned cleaned = 0;
  int dupfd;

  root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd < 0) {
    if (errno == ENOENT)
      goto done;
    return sr_error_set(err, SR_EXIT_FAILED, errno, "gc", "cannot open %s",
                        root);
  }
  active_fd = openat(root_fd, ".active", OPEN_DIR_FLAGS);
  if (active_fd < 0) {
    if (errno == ENOENT)
      goto done;
    return sr_error_set(err, SR_EXIT_FAILED, errno, "gc",
                        "cannot open %s/.active", root);
  }
  dupfd = fcntl(active_fd, F_DUPFD_CLOEXEC, 3);
  if (dupfd < 0 || !(d = fdopendir(dupfd))) {
    safe_close(dupfd);
    return sr_error_set(err, SR_EXIT_FAILED, errno, "gc", "gc");
  }
  while ((de = readdir(d))) {
    _cleanup_close_ int marker = -1, tenant = -1, run = -1;
    _cleanup_free_ char *tenant_id = NULL;
    char *exec_id;

    if (de->d_name[0] == '.')
      continue;
    marker = openat(active_fd, de->d_name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (marker < 0)
      continue;
    /* A live run holds its marker locked; only dead runs are touched. */
    if (flock(marker, LOCK_EX | LOCK_NB) < 0)
      continue;
    tenant_id = strdup(de->d_name);
    if (!tenant_id)
      break;
    exec_id = strchr(tenant_id, ':');
    if (exec_id) {
      *exec_id++ = '\0';
      if (sr_valid_id(tenant_id) && sr_valid_id(exec_id)) {
        tenant = openat(root_fd, tenant_id, OPEN_DIR_FLAGS);
        if (tenant >= 0)
          run = openat(tenant, exec_id, OPEN_DIR_FLAGS);
        if (run >= 0) {
          (void)sr_rm_rf_at(run, "staging"); /* reported below if it stays */
          (void)unlinkat(run, "metadata.json.tmp", 0);
        }
        if (verbose)
          printf("removed leftovers of %s/%s\n", tenant_id, exec_id);
      }
    }
    (void)unlinkat(active_fd, de->d_name, 0);
    cleaned++;
  }
  closedir(d);
done:
  if (n_cleaned)
    *n_cleaned = cleaned;
  return 0;
}
