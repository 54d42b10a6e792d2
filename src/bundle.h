/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

struct sr_error;

/* Caps on what a bundle may contain (refused beyond them, path named). */
struct sr_bundle_caps {
  uint64_t max_files;      /* files + directories, default 10000 */
  uint64_t max_bytes;      /* total file bytes, default 256 MiB */
  uint64_t max_file_bytes; /* one file, default 256 MiB */
  size_t max_path;         /* relative path bytes, default 1024 */
  size_t max_depth;        /* directory depth, default 32 */
};
void sr_bundle_caps_default(struct sr_bundle_caps *c);

struct sr_bundle {
  char digest[72]; /* "sha256:" + 64 hex + NUL */
  uint64_t n_files;
  uint64_t n_dirs;
  uint64_t total_bytes;
  char *records; /* the canonical record text, when asked for */
  size_t records_len;
  char *skill_md; /* the exact bytes of SKILL.md that were hashed (NUL-
                   * terminated), so the manifest is parsed from what was
                   * verified and never re-read; a SKILL.md over 1 MiB
                   * is refused, so this is never NULL on success */
  size_t skill_md_len;
};

/*
 * Walks the bundle at `src` (no symlink following, each file opened once
 * relative to its directory fd with O_NOFOLLOW), computes the canonical
 * digest (skillrun-bundle(5)) and, when dst_dirfd >= 0, copies every file
 * and directory into that (empty) directory *while* hashing, so the copy
 * holds exactly the hashed bytes.  Copies get mode 0644/0755 as in the
 * records.  Refuses symlinks, devices, FIFOs, sockets, names with control
 * characters and anything over the caps before reading contents: exit 123,
 * reason "bundle_invalid", the offending relative path named.  A bundle
 * without SKILL.md at its root is refused too.  A file that changes while
 * it is read, an entry removed or replaced between the walk and its copy:
 * exit 123, reason "bundle_changed".  An entry the caller cannot read (its
 * mode, a directory it cannot search, a file under another process's
 * lease): exit 123, reason "bundle_invalid".  I/O errors: exit 125.
 * caps NULL means sr_bundle_caps_default().  *out is untouched on failure;
 * a partial copy may remain under dst_dirfd, and the caller removes its
 * staging directory.
 */
int sr_bundle_stage(const char *src, int dst_dirfd,
                    const struct sr_bundle_caps *caps, bool keep_records,
                    struct sr_bundle *out, struct sr_error *err);

/*
 * The same in two steps, so that the caller can choose where to copy once
 * the bundle's shape is known.  sr_bundle_walk: pass 1 (the shape and every
 * cap, nothing read; the refusals above, the first one in pre-order also
 * when the root's subtrees are walked on two threads).  sr_bundle_walk_bytes:
 * the total file bytes it saw (a file that then grows is refused as changed).
 * sr_bundle_copy: pass 2 (every file read once, copied into dst_dirfd while
 * hashed, or only hashed with -1; the digest); once per walk.
 */
struct sr_bundle_walk;
int sr_bundle_walk(const char *src, const struct sr_bundle_caps *caps,
                   struct sr_bundle_walk **out, struct sr_error *err);
uint64_t sr_bundle_walk_bytes(const struct sr_bundle_walk *bw);
/* How many threads walked it: 2 once a bundle's root has enough left to
 * share after a few hundred entries, else 1 (the tests check the split). */
unsigned sr_bundle_walk_walkers(const struct sr_bundle_walk *bw);
int sr_bundle_copy(struct sr_bundle_walk *bw, int dst_dirfd, bool keep_records,
                   struct sr_bundle *out, struct sr_error *err);
void sr_bundle_walk_free(struct sr_bundle_walk *bw);
/* An error about the bundle src names it, for a caller that runs many:
 * "bundle: FILE: ..." (the walk's and the copy's messages) becomes
 * "bundle SRC: FILE: ...", and one of its manifest's, "SKILL.md:LINE:
 * ...", "bundle SRC: SKILL.md:LINE: ..."; others stay as they are.
 * Returns r (only r < 0 names it). */
int sr_bundle_error_named(struct sr_error *err, const char *src, int r);
SR_DEFINE_CLEANUP(struct sr_bundle_walk *, sr_bundle_walk_free)
#define _cleanup_bundle_walk_ _cleanup_(sr_bundle_walk_freep)

/* Frees what *b owns (records, skill_md), not b itself. */
void sr_bundle_done(struct sr_bundle *b);
#define _cleanup_bundle_ _cleanup_(sr_bundle_done)

/* ---- pure pieces, unit-tested ---- */

/* One record line (with the trailing '\n'); returns malloc'd text or NULL.
 * type 'f': mode_exec selects 0755/0644, sha256_hex the content hash.
 * type 'd': size and hash ignored, "d 0755 0 - path/\n". */
char *sr_bundle_record(char type, bool mode_exec, uint64_t size,
                       const char *sha256_hex, const char *relpath);
/* Ordering used for records: strcmp of relative paths (no trailing slash). */
int sr_bundle_path_cmp(const char *a, const char *b);
/* A name acceptable in a bundle is a sr_valid_filename() (util.h). */
