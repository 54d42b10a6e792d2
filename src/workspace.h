/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "limit.h"

struct sr_audit;
struct sr_error;
struct sr_type_list;
struct sr_trust_key;

/*
 * The host side of one run: {root}/{tenant}/{execution}/ holding, while the
 * run lives, staging/bundle (the verified copy), staging/inputs, logs/,
 * outputs/, metadata.json and audit.jsonl; afterwards everything but
 * staging.  Every path is opened relative to directory fds created here,
 * never following a symlink.  The tenant and run directories, staging,
 * logs/ and outputs/ are 0700 and the record files 0600: a run's data is
 * its caller's alone, and the sandbox reaches its staged objects through
 * the descriptors kept here (bundle_fd, inputs_fd, metadata_fd), which
 * init checks before it binds them (sandbox.h), never by a path someone
 * else could traverse or rename.
 */
struct sr_workspace {
  char *root; /* absolute workspace root */
  int root_fd;
  int tenant_fd;
  int run_fd;
  char *run_path; /* absolute {root}/{tenant}/{execution} */
  int active_fd;  /* marker {root}/.active/{tenant}:{execution} (a link to
                   * the run's audit.jsonl), flock'ed for the life of the
                   * run: gc skips locked markers */
  char *active_name;
  bool ledger_linked; /* the marker is also {run}/audit.jsonl */
  /* The staging directory: {run}/staging, or for a small bundle without
   * inputs a directory on a tmpfs (sr_workspace_make_staging); -1 until
   * then.  staging_parent_fd and staging_name locate it for removal. */
  int staging_fd;
  int staging_parent_fd;
  char *staging_name;
  char *staging_path;
  bool staging_left; /* a staging copy on a tmpfs could not be removed */
  int bundle_fd;     /* {staging}/bundle: empty until the bundle is staged */
  char *bundle_path;
  int inputs_fd;       /* {staging}/inputs, only with inputs; else -1 */
  char *inputs_path;   /* NULL without inputs */
  int logs_fd;         /* {run}/logs */
  int outputs_fd;      /* {run}/outputs, from sr_workspace_make_outputs */
  char *metadata_path; /* the sandbox's: {staging}/metadata.json */
  int metadata_fd;     /* O_PATH of it, once written; else -1 */
  bool metadata_lost;  /* the run directory's final one: not written */
  bool ledger_open;    /* its execution_completed: not written */
};

/* An empty workspace (every fd -1), safe to pass to sr_workspace_done. */
void sr_workspace_init(struct sr_workspace *ws);

/* Default root: $(localstatedir)/lib/skillrun/runs for root, else
 * $XDG_STATE_HOME/skillrun/runs or ~/.local/state/skillrun/runs. */
int sr_workspace_default_root(char **out, struct sr_error *err);

/* The workspace root root (an absolute path) opened: an fd, or the error.
 * A symbolic link on its path is followed only when it belongs to the
 * caller or to root; with `create`, missing directories are made (0711). */
int sr_workspace_open_root(const char *root, bool create, struct sr_error *err);

/* Whether the opened workspace root root_fd is one the caller's runs may
 * use: its own or root's, and writable by nobody else unless sticky, in
 * directories no other user may rename it in, its path UTF-8 text (what
 * sr_workspace_create checks). */
bool sr_workspace_root_usable(int root_fd);

/*
 * Creates the run directory with O_EXCL semantics: an existing
 * {tenant}/{execution} is refused (exit 123, reason "execution_replayed")
 * without touching it, and in it audit.jsonl (*audit_fd, O_APPEND) and
 * logs/.  Also cleans leftovers of dead runs of this root and closes their
 * records (sr_workspace_gc, anchored with key when there is one).
 */
int sr_workspace_create(struct sr_workspace *ws, const char *root,
                        const char *tenant, const char *execution,
                        const struct sr_trust_key *key, int *audit_fd,
                        struct sr_error *err);

/*
 * Undoes sr_workspace_create for a run with nothing on its record: its
 * audit.jsonl could not take even the room for its final events.  The
 * run directory goes (its audit.jsonl and logs/, still empty), its marker
 * with it in sr_workspace_done, and the id may run again, as when the
 * ledger could not be linked; execution_started then names no run_dir
 * and no metadata.json is written.
 */
void sr_workspace_unmake(struct sr_workspace *ws, const char *execution);

/*
 * Creates the staging directory, once the bundle's size is known (the
 * verify stage calls it between the bundle's walk and its copy).
 *
 * A directory on ext4 costs 0.1 - 0.3 ms to create and again to evict, and
 * a bundle is staged, bound and removed in every run.  When tmpfs_ok and
 * the bundle is at most SR_TMPFS_STAGING_MAX bytes, the staging directory
 * is placed on a tmpfs owned by the caller, first usable of:
 * $XDG_RUNTIME_DIR/skillrun (not as root: the sandbox's pool uid could not
 * reach it), /run/skillrun-staging (root), /dev/shm/skillrun-UID.  Such a base
 * must be a directory of the caller's, not writable by others and on tmpfs,
 * else it is passed over.  The run's directory there is named after the
 * workspace root, tenant and execution, so that gc finds a dead run's
 * (sr_workspace_gc).  Otherwise {run}/staging.
 */
#define SR_TMPFS_STAGING_MAX (16ull << 20)
int sr_workspace_make_staging(struct sr_workspace *ws, uint64_t bundle_bytes,
                              bool tmpfs_ok, struct sr_error *err);

/* Whether the staging directory is on a tmpfs. */
bool sr_workspace_staging_on_tmpfs(const struct sr_workspace *ws);
/* The tmpfs ran out of room or inodes during the copy: its staging
 * directory is removed and a new, empty one made in the run directory. */
int sr_workspace_restage_in_run_dir(struct sr_workspace *ws,
                                    uint64_t bundle_bytes,
                                    struct sr_error *err);

/* One caller file to stage: its host path, and its name under
 * /workspace/inputs (NAME or DIR/NAME: sr_input_name_check). */
struct sr_input {
  const char *path;
  const char *name;
};

/* What every input must satisfy: the resolved policy's rules. */
struct sr_input_rules {
  uint64_t total_max; /* inputs-size: all files together */
  enum sr_source total_source;
  uint64_t file_max; /* inputs-max-size: each file */
  enum sr_source file_source;
  /* Declared types: every list must accept each file (filetype.h). */
  const struct sr_type_list *types;
  size_t n_types;
};

/*
 * Copies each input (regular files only, never following a link) into
 * staging/inputs/NAME, or staging/inputs/DIR/NAME with DIR made here
 * (mode 0755, opened relative to the staging directory, never through a
 * link), while hashing it; then checks it against the rules on the staged
 * copy, the bytes the skill will read: the sizes while copying, the types
 * from the copy's first SR_MAGIC_BYTES (magic.h), so that a file changed
 * between a check and the copy cannot slip through.  Returns a JSON array
 * of {name,size,sha256[,type]} and emits input_staged events.
 * An input a rule refuses is exit 123 with reason input_name,
 * input_invalid, input_too_large or input_type, and *rejected set to the
 * input_rejected event's fields (name, path, rule, and what the rule
 * says); the caller emits it.
 */
int sr_workspace_stage_inputs(struct sr_workspace *ws,
                              const struct sr_input *inputs, size_t n_inputs,
                              const struct sr_input_rules *rules,
                              struct sr_audit *audit, json_t **ret_inputs,
                              json_t **rejected, struct sr_error *err);

/* Root runs: gives the staged inputs to the sandbox user's host ids (their
 * modes stay the sources'), so that it can read a 0600 input by ownership,
 * not by world permissions; init opens the files below the inputs
 * directory as that user.  A no-op when the ids are the caller's own. */
int sr_workspace_give_inputs(struct sr_workspace *ws, uid_t uid, gid_t gid,
                             struct sr_error *err);

/* Writes the sandbox's metadata.json (mounted read-only at
 * /workspace/metadata.json) into the staging directory and sets
 * metadata_path.  The run directory gets its own copy only after the run,
 * with the result: its metadata.json appears when the run is over, and a
 * run costs the workspace's file system one file fewer to create and
 * evict. */
int sr_workspace_write_sandbox_metadata(struct sr_workspace *ws,
                                        const json_t *meta,
                                        struct sr_error *err);

/* Writes the run directory's metadata.json atomically (a temporary file
 * renamed into place; mode 0644). */
int sr_workspace_write_metadata(struct sr_workspace *ws, const json_t *meta,
                                struct sr_error *err);

/* Creates logs/stdout.log and logs/stderr.log (O_EXCL); returns the fds. */
int sr_workspace_open_logs(struct sr_workspace *ws, int *out_fd, int *err_fd,
                           struct sr_error *err);

/* Creates {run}/outputs (mode 0700) for the harvest; done while the
 * sandbox is built, so that its cost is off the launch's path. */
int sr_workspace_make_outputs(struct sr_workspace *ws, struct sr_error *err);

/*
 * What the harvest committed: counts, and the list of artifacts as their
 * artifact_committed events have them ({path, size, sha256, mode}) for
 * execution_completed and metadata.json.  The list stops (truncated) once
 * its JSON could pass SR_ARTIFACT_LIST_MAX bytes, so that the final event
 * stays far below an audit line's limit (1 MiB, --verify-audit); the
 * artifact_committed events remain the full record.
 */
struct sr_artifacts {
  uint64_t files;
  uint64_t bytes;
  json_t *list; /* JSON array, NULL before the harvest */
  bool truncated;
  size_t list_bytes; /* the list's JSON size, at most (estimated) */
  /* ... and as written (compact, separators included): the room its two
   * copies take is kept for this, not for the estimate above, which is
   * some seven times more for a plain name */
  uint64_t list_json;
  /* metadata.json's size bar the list, at most (SR_METADATA_RESULT_MAX
   * beyond the sandbox's copy), once the run keeps room for it; 0 before */
  uint64_t metadata_base;
};
void sr_artifacts_done(struct sr_artifacts *a);
/* {files, bytes, list, truncated}: the list is [] before the harvest. */
json_t *sr_artifacts_json(const struct sr_artifacts *a);

/*
 * Copies the sandbox's outputs (the fd init handed over) into {run}/outputs
 * (made by sr_workspace_make_outputs before): regular files and
 * directories only, never following a link, each file hashed while copied,
 * one artifact_committed event per file.  Bounded: every entry, skipped
 * ones too, counts against max_entries (outputs-files), the bytes against
 * cap_bytes (outputs-size), the whole against SR_HARVEST_DEADLINE_MS; the
 * cap that stops it is named in a limit_exceeded "output" event (with the
 * entry it stopped at), a file cut at it is removed.  So are the bytes of
 * the artifact events it writes (SR_HARVEST_RECORD_MAX, "harvest-record":
 * a path escapes to up to six bytes a byte, is written twice when it is
 * not UTF-8, and each line repeats the manifest's version, so long names
 * deep in a tree could pass what --verify-audit and --gc read of a
 * ledger); a file whose event would pass it is removed, not committed.
 * Skipped entries (links, FIFOs, sockets, devices, misleading names,
 * directories deeper than 32 levels, paths below outputs/ longer than
 * 3072 bytes) get a warning each for the first
 * SR_HARVEST_MAX_WARNINGS, then one summary with counts.  A name that is
 * not plain UTF-8 text is recorded escaped, with its bytes in base64.
 * What was committed is added to *out.
 */
#define SR_HARVEST_MAX_WARNINGS 16
#define SR_HARVEST_DEADLINE_MS 60000
#define SR_HARVEST_RECORD_MAX (64ull << 20)
int sr_workspace_harvest(struct sr_workspace *ws, int outputs_fd,
                         uint64_t cap_bytes, uint64_t max_entries,
                         struct sr_audit *audit, struct sr_artifacts *out,
                         struct sr_error *err);

/* Removes the staging directory (idempotent). */
void sr_workspace_remove_staging(struct sr_workspace *ws);

/* Removes staging, releases the locks, closes fds.  Safe on partial state. */
void sr_workspace_done(struct sr_workspace *ws);
#define _cleanup_workspace_ _cleanup_(sr_workspace_done)

/*
 * The runs index (metrics.h): one line per run that ended, appended to
 * {root}/.metrics/runs.log (the directory 0700, the file 0600, both the
 * caller's; anything else there is refused), always as a line of its own
 * and never cut short (a write that fails is taken back).  Its lock is
 * waited for 5 s at most (-EWOULDBLOCK).  0 or -errno; the caller only
 * warns.
 */
int sr_workspace_append_index(int root_fd, const char *line, size_t len);

/* Opens the runs index for reading, never following a link: the directory
 * and the file must be owned by the workspace root's owner, by root or by
 * the caller, and writable by nobody else (-EPERM).  -ENOENT without one. */
int sr_workspace_open_index(int root_fd, int *ret_fd);

/* The runs in progress under the root: markers in .active still locked by
 * their supervisor; looks at no more than max markers (-E2BIG). */
int sr_workspace_count_live(int root_fd, uint64_t max, uint64_t *n_live);

/* --gc: removes leftovers (staging, wherever it was, and markers) of runs
 * whose supervisor died and closes their records (sr_reclaim_run: status
 * abandoned, anchored with key when there is one), counting each it
 * closes in its owner's runs index.  Runs that still hold
 * their lock are left alone, and so is a marker that is not provably its
 * run's own (the same file as the run's audit.jsonl, owned by the run
 * directory's owner).  Prints what it did when verbose.  max 0 looks at
 * every marker; otherwise (a run's start) at most max of them, picked at
 * random among more (sr_name_sample), and always at the marker named
 * `own` (TENANT:EXECUTION of the starting run, may be NULL), so that a
 * dead run of that id is closed first and the refusal says so.
 * *n_cleaned: the runs cleaned; *n_failed: the dead runs whose record
 * could not be closed (each said why when verbose). */
int sr_workspace_gc(const char *root, const struct sr_trust_key *key,
                    bool verbose, unsigned max, const char *own,
                    unsigned *n_cleaned, unsigned *n_failed,
                    struct sr_error *err);
/* The markers a run's start looks at (sr_workspace_gc). */
#define SR_WORKSPACE_GC_START_MAX 16
