/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

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
 * ledger says (owned by owner:group) unless it has one.  ledger: the
 * marker, open read-write for appending.  1 when it appended, 0 when the
 * ledger was closed already, -errno with err set.
 */
int sr_reclaim_run(int ledger, int run_fd, const char *tenant,
                   const char *execution, uid_t owner, gid_t group,
                   const struct sr_trust_key *key, struct sr_error *err);
