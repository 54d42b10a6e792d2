/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "status.h"

/*
 * The runs index and its Prometheus text (skillrun --metrics,
 * skillrun(1) METRICS).  Pure: lines in, text out.
 *
 * Every run that has a workspace root appends one line to
 * {root}/.metrics/runs.log when it is over (workspace.c), and gc one for
 * each dead run it closes as abandoned (sr_reclaim_index_line):
 *
 *   1 FINISHED TENANT SKILL STATUS REASON DURATION_MS CPU_USEC MEMORY_PEAK
 *     ARTIFACTS ARTIFACT_BYTES SYSCALLS_DENIED [EXECUTION]
 *
 * one space apart, "-" for what is unknown (a refusal before the manifest
 * was read has no skill; a run without a cgroup leaf has no CPU or memory
 * figure).  EXECUTION, the run's execution id ("-" for a run refused before
 * it had a valid one), is absent from the lines of older versions: gc
 * counts a dead run only when its owner's index has no line with its id
 * but a refusal of that id as another run's (struct sr_index_ids), so
 * that each run is counted exactly once.  --metrics
 * reads that file rather than every run directory's metadata.json: one
 * sequential read instead of 100,000 opens, the runs that never had a run
 * directory (refused before admission) are counted, and counters do not go down
 * when old run directories are removed (bench/metrics has the figures).
 */

/* Bytes of one index line, its newline included. */
#define SR_RECORD_LINE_MAX 1024
/* A skill name is at most 64 characters (skillrun-skill(5)). */
#define SR_RECORD_SKILL_MAX 256

struct sr_run_record {
  uint64_t finished_s;                 /* Unix time */
  char tenant[65];                     /* "" when unknown or not a valid id */
  char skill[SR_RECORD_SKILL_MAX + 1]; /* "" before the manifest was read */
  enum sr_status status;
  char reason[65]; /* refused and error runs: the reason; else "" */
  /* -1 when unknown */
  int64_t duration_ms, cpu_usec, memory_peak, artifacts, artifact_bytes,
      syscalls_denied;
  char execution[65]; /* "" when unknown ("-", or an older line) */
};

/* The line for r, with its newline, NUL-terminated in buf: its length, or
 * -EINVAL for a record that cannot be written (a field with a space or a
 * control character) or -ENOSPC. */
int sr_record_format(const struct sr_run_record *r, char *buf, size_t len);

/* One line (without its newline) into *r: 0, or -EINVAL when it is not a
 * well-formed line of this version; every field is checked as if another
 * user had written it. */
int sr_record_parse(const char *line, size_t len, struct sr_run_record *r);

/*
 * The runs an index counts, by tenant and execution id, for gc (its
 * lines are fed in order, as sr_record_parse reads them): a set that
 * grows in time and space linear in the lines.
 */
/*
 * Calls line(ctx, text, len) for each whole line of the index fd (without
 * its newline) from *off up to end (-1: its end), reading in large chunks;
 * a line that cannot be a record (longer than SR_RECORD_LINE_MAX, or cut
 * by a hole of a sparse file, which is passed over with SEEK_DATA) is
 * given once as (NULL, 0).  mid_line: *off may fall inside a line, which
 * is dropped up to its newline.  *off ends past the last whole line read.
 * 0, -errno, or line()'s negative return.
 */
int sr_index_each_line(int fd, off_t *off, off_t end, bool mid_line,
                       int (*line)(void *ctx, const char *p, size_t len),
                       void *ctx);

struct sr_index_ids;

/* A balanced tree: the lines an index's owner writes cannot make it
 * slow. */
struct sr_index_ids *sr_index_ids_new(void);
void sr_index_ids_free(struct sr_index_ids *s);
/* One line of the index (without its newline): 0 (a line that does not
 * parse is ignored, and so is the line of a run refused as
 * execution_replayed or execution_abandoned: the id it names is another
 * run's) or -ENOMEM. */
int sr_index_ids_add_line(struct sr_index_ids *s, const char *line, size_t len);
/* 1 when a line names the run (tenant, execution); 0 when none does; -1
 * when none does but a line without an id (an older version's) that ended
 * after started_s (the run's first record, seconds since the epoch) may
 * be the run's. */
int sr_index_ids_find(const struct sr_index_ids *s, const char *tenant,
                      const char *execution, int64_t started_s);
/* Lines of the index were passed over (gc reads at most its last
 * INDEX_WINDOW bytes): they count as lines without an id that ended when
 * the next line read did, or, until one is, as lines that may be any
 * run's (sr_index_ids_find -1 for an id it has not seen). */
void sr_index_ids_skip(struct sr_index_ids *s);

/* Cardinality bounds (skillrun(1) METRICS): beyond them tenants, skills and
 * reasons are counted under "_other", which no id, name or reason can be. */
#define SR_METRICS_TENANTS_MAX 500
#define SR_METRICS_SKILLS_MAX 2000 /* tenant and skill pairs */
#define SR_METRICS_REASONS_MAX 500 /* tenant, status and reason */

struct sr_metrics;

struct sr_metrics *sr_metrics_new(void);
void sr_metrics_free(struct sr_metrics *m);

/* Counts one run: 0 or -ENOMEM. */
int sr_metrics_add(struct sr_metrics *m, const struct sr_run_record *r);

/* What the reader saw besides the records: lines it skipped (malformed or
 * too long), and the runs in progress (-1 when unknown). */
void sr_metrics_set_reader(struct sr_metrics *m, uint64_t skipped_lines,
                           int64_t in_progress);

/* The Prometheus text exposition format (version 0.0.4), malloc'd and
 * NUL-terminated, or NULL on ENOMEM. */
char *sr_metrics_render(const struct sr_metrics *m, size_t *len);
