/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_error;
struct sr_trust_key;

/*
 * Closes the record of a run whose supervisor died (sr_workspace_gc has
 * found it, locked its marker and proven the marker is the run's ledger):
 * a last line cut off mid-way is removed, the ledger gets
 * execution_completed with status "abandoned" continuing its chain (same
 * execution id; anchored with key when there is one) unless its last line
 * already is an execution_completed, the room its run reserved is given
 * back, and the run directory gets a metadata.json made from what the
 * ledger says (owned by owner:group) unless it has a whole one (a crash
 * can leave one empty or cut short).  The run's own execution_completed
 * that lost only its newline (a crash cut the file there, or left zeros
 * after it) gets it back and closes the ledger.  ledger: the
 * marker, open read-write for appending.  1 when it appended, 0 when the
 * ledger was closed already, -errno with err set.  *appended (may be NULL)
 * says whether this call closed the ledger, also when what came after
 * (metadata.json) failed: the run is then counted now or never.
 * *buf and *len: the ledger as gc read it once (sr_read_fd, from its
 * start, up to SR_AUDIT_MAX_FILE); when this call changed the ledger they
 * are made what it is now (the bytes it wrote read back), for
 * sr_reclaim_index_line, also when it fails after appending.
 */
int sr_reclaim_run(int ledger, char **buf, size_t *len, int run_fd,
                   const char *tenant, const char *execution, uid_t owner,
                   gid_t group, const struct sr_trust_key *key, bool *appended,
                   struct sr_error *err);

/*
 * The runs index line (metrics.h) of a dead run whose ledger is closed
 * (by sr_reclaim_run, or by the run itself before it died): its tenant
 * and execution id, the skill its ledger names, and what its last
 * execution_completed says (status; for a run of its own end its
 * figures and the reason of its failure event; abandoned has "-" for the
 * figures only its supervisor knew), the artifacts its ledger commits.
 * Into line (size bytes): its length, or -errno.  *started_s: the time of
 * the ledger's first record (seconds since the epoch), or -1.  buf, len:
 * the ledger's text (as sr_reclaim_run leaves it).
 */
int sr_reclaim_index_line(const char *buf, size_t len, const char *tenant,
                          const char *execution, char *line, size_t size,
                          int64_t *started_s);

/*
 * The outputs a dead run's record does not commit, removed from its run
 * directory's outputs/ (called by sr_workspace_gc before the record is
 * closed): a file the harvest was copying when its supervisor was killed
 * (under a hidden name where the file system has no O_TMPFILE), or one it
 * had named but whose artifact_committed event it had not yet written.
 * Afterwards outputs/ holds exactly the files the ledger's complete
 * artifact_committed lines name, and the directories the harvest made.
 * Only owner's regular files in owner's directories on the run
 * directory's file system are removed, never through a symbolic link.
 * Nothing when the ledger is closed (its execution_completed written):
 * that run's outputs/ is its caller's, whatever gc still has to do.
 * buf, len: the text of the run's audit.jsonl, read under its lock.  0
 * with *removed set, or -errno.
 */
int sr_reclaim_outputs(const char *buf, size_t len, int run_fd, uid_t owner,
                       unsigned *removed);
