/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <sys/types.h>

#include <jansson.h>

struct sr_error;

/* The bound of the artifact list that execution_completed and
 * metadata.json carry, in bytes of its JSON (estimated): the harvest's
 * (struct sr_artifacts) and gc's for an abandoned run (reclaim.c). */
#define SR_ARTIFACT_LIST_MAX (256u * 1024)
/* What one entry of that list takes at most, for a path of len bytes: 7 a
 * path byte (6 as \u00XX; a byte that is not UTF-8, 5 as "\\xff" and a
 * third of path_base64's 4, padded), the rest of the entry under 160. */
#define SR_ARTIFACT_ENTRY_MAX(len) (7 * (size_t)(len) + 160)
/* metadata.json's "result" beyond the sandbox's copy (where it is null),
 * bar the artifact list: status, exit code, duration, finish time and the
 * list's counts, indented. */
#define SR_METADATA_RESULT_MAX 1024u
/* What one entry of the list takes in metadata.json beyond its
 * SR_ARTIFACT_ENTRY_MAX: the indentation, a line a key (five at most). */
#define SR_METADATA_ENTRY_INDENT 96u

/*
 * A run's metadata.json files: the sandbox's copy and the run directory's
 * (workspace.c), and the one gc writes for a run it closes as abandoned
 * (reclaim.c).  Written by descriptor below a directory fd, never
 * following a link; errors are "metadata" errors (exit 125).
 */

/* meta as indented JSON in dirfd/name, created with O_EXCL, with `mode`;
 * given to owner:group unless owner is (uid_t)-1 (by its fd: the directory
 * may be someone else's, who could swap the name for a link); *ret_fd
 * (when not NULL) receives an O_PATH fd of the file written. */
int sr_metafile_write_at(int dirfd, const char *name, const json_t *meta,
                         mode_t mode, uid_t owner, gid_t group, int *ret_fd,
                         struct sr_error *err);

/* run_fd's metadata.json, replaced atomically (a temporary file, mode
 * 0600, renamed into place), given to owner:group unless owner is
 * (uid_t)-1 (gc, as root, closing a user's run). */
int sr_metafile_replace_at(int run_fd, const json_t *meta, uid_t owner,
                           gid_t group, struct sr_error *err);
