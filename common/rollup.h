/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_ROLLUP_H
#define MMHITM_ROLLUP_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * The one definition of a roll-up bucket (schema/clickhouse/002-rollup.sql):
 * what `mmhitm ship` sends to interval_rollup and path_rollup, and what
 * `mmhitm report --rollup` reads from SQLite files, so both sources give
 * the same numbers.
 *
 * A bucket is [bucket_ns, bucket_ns + grain) of one boot, aligned to the
 * epoch; an interval belongs to the bucket its start falls in. Only final
 * buckets exist: the boot has an interval starting at or after the
 * bucket's end (or a later boot of its host exists), and every interval
 * of the bucket is analyzed (analysis_state), so a bucket never changes
 * once it was sent.
 *
 * Rates: per path, HITM and work are summed over the bucket's intervals
 * that measured both, when any did (HITM sampled in a window beside work
 * counted in every interval would otherwise divide one window's HITM by
 * ten intervals' work); else hitm is the sum of the measured HITM (NULL:
 * none) and work NULL when any HITM was measured (no interval had a rate),
 * or the sum of the measured work (NULL: none). work_seconds is the length
 * of the intervals whose work was summed. The bucket's rate is then
 * hitm * per / work, as path_rates computes it per interval.
 */

/*
 * Which buckets: of one host (0: all), from_ns on (a grain multiple),
 * the first interval starting in [lo_ns, hi_ns). rollup_paths() gives the
 * path rows of those buckets and may give some of the buckets next to the
 * range: a reader matches them to the buckets it read.
 */
struct rollup_query {
	int64_t grain_ns;
	int64_t host_id;
	int64_t from_ns;
	int64_t lo_ns, hi_ns;
};

/* One interval_rollup row. Strings live until the callback returns. */
struct rollup_bucket {
	const char *machine_id, *boot_uuid;
	int64_t boot_id;		/* SQLite's */
	int64_t bucket_ns, start_ns, end_ns;
	int64_t intervals, partial, not_analyzed, sampled;
	int64_t events_lost, dropped_intervals, active_ns, samples_lost, throttled;
};

/* One path_rollup row. */
struct rollup_path {
	const char *machine_id, *boot_uuid, *path;
	int64_t boot_id;
	int64_t bucket_ns;
	int64_t intervals;
	bool has_hitm, has_samples, has_work;
	int64_t hitm, samples;
	double work, work_seconds;
};

/*
 * Calls cb for every final bucket q selects (rollup_buckets() in order of
 * start_ns); a negative return of cb stops and is returned. Logs SQLite's
 * errors.
 */
int rollup_buckets(sqlite3 *db, const struct rollup_query *q,
		   int (*cb)(const struct rollup_bucket *b, void *arg), void *arg);
int rollup_paths(sqlite3 *db, const struct rollup_query *q,
		 int (*cb)(const struct rollup_path *p, void *arg), void *arg);

/*
 * The first bucket at or after from_ns that is not final yet (every bucket
 * from there on waits), or INT64_MAX when every bucket there is final:
 * where ship's cursor stops.
 */
int rollup_pending_from(sqlite3 *db, int64_t grain_ns, int64_t from_ns, int64_t *ret);

#endif
