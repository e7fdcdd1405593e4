// SPDX-License-Identifier: GPL-2.0
/* Roll-up buckets from a host database: rollup.h says what they are. */
#include <errno.h>
#include <stdint.h>

#include "db.h"
#include "log.h"
#include "rollup.h"
#include "util.h"

/*
 * Per boot, the start before which its buckets are final (?1 grain, ?2
 * host or 0): a bucket is final when its end is at or before both the
 * newest interval's start (or the boot is followed by another) and the
 * first interval analysis has not done.
 */
#define FINAL_CTE \
	"WITH final AS MATERIALIZED (SELECT b.boot_id, h.machine_id, b.boot_uuid," \
	"  min(CASE WHEN EXISTS (SELECT 1 FROM boots l WHERE l.host_id = b.host_id" \
	"                        AND l.first_seen_ns > b.first_seen_ns)" \
	"       THEN 9223372036854775807" \
	"       ELSE coalesce((SELECT max(x.start_ns) FROM intervals x WHERE x.boot_id = b.boot_id), 0) END," \
	"      coalesce((SELECT min(x.start_ns) FROM intervals x WHERE x.boot_id = b.boot_id" \
	"                AND (a.boot_id IS NULL OR x.interval_id > a.last_interval_id))," \
	"               9223372036854775807)) AS until_ns" \
	" FROM boots b JOIN hosts h USING (host_id) LEFT JOIN analysis_state a ON a.boot_id = b.boot_id" \
	" WHERE ?2 = 0 OR b.host_id = ?2)"

/*
 * ?3, ?4: the intervals that can be in a selected bucket (a prefilter on
 * the index); ?5 the first bucket; ?6, ?7 the first interval's range.
 */
#define IN_BUCKET \
	"   i.start_ns >= ?3 AND i.start_ns < ?4" \
	"   AND i.start_ns / ?1 * ?1 + ?1 <= f.until_ns"

static const char buckets_sql[] =
	FINAL_CTE
	" SELECT f.machine_id, f.boot_uuid, i.boot_id, i.start_ns / ?1 * ?1 AS bucket,"
	"  min(i.start_ns) AS first, max(i.end_ns), count(*), sum(i.partial != 0),"
	"  sum((a.boot_id IS NULL OR i.interval_id > a.last_interval_id)"
	"      AND NOT EXISTS (SELECT 1 FROM path_intervals p WHERE p.interval_id = i.interval_id)),"
	"  sum(i.events_lost), sum(i.dropped_intervals), count(s.interval_id),"
	"  coalesce(sum(s.active_ns), 0), coalesce(sum(s.lost), 0), coalesce(sum(s.throttled), 0)"
	" FROM intervals i JOIN final f USING (boot_id)"
	" LEFT JOIN sampling s USING (interval_id)"
	" LEFT JOIN analysis_state a ON a.boot_id = i.boot_id"
	" WHERE" IN_BUCKET
	" GROUP BY i.boot_id, bucket"
	" HAVING bucket >= ?5 AND first >= ?6 AND first < ?7"
	" ORDER BY first, i.boot_id";

/*
 * The pairing rollup.h describes. No range on the bucket's first interval
 * here (?6, ?7 unused): a reader matches path rows to the buckets it read.
 */
#define PH "(p.lcl_hitm + p.rmt_hitm + p.peer)"
#define HW "(" PH " IS NOT NULL AND p.work IS NOT NULL)"
#define LEN "((i.end_ns - i.start_ns) / 1e9)"
static const char paths_sql[] =
	FINAL_CTE
	" SELECT f.machine_id, f.boot_uuid, i.boot_id, i.start_ns / ?1 * ?1 AS bucket, p.path, count(*),"
	"  CASE WHEN sum(" HW ") THEN sum(CASE WHEN p.work IS NOT NULL THEN " PH " END) ELSE sum(" PH ") END,"
	"  sum(p.samples),"
	"  CASE WHEN sum(" HW ") THEN sum(CASE WHEN " PH " IS NOT NULL THEN p.work END)"
	"       WHEN count(" PH ") THEN NULL ELSE sum(p.work) END,"
	"  CASE WHEN sum(" HW ") THEN total(CASE WHEN " HW " THEN " LEN " END)"
	"       WHEN count(" PH ") THEN 0 ELSE total(CASE WHEN p.work IS NOT NULL THEN " LEN " END) END"
	" FROM intervals i JOIN final f USING (boot_id) JOIN path_intervals p USING (interval_id)"
	" WHERE" IN_BUCKET " AND ?5 = ?5 AND ?6 = ?6 AND ?7 = ?7"
	" GROUP BY i.boot_id, bucket, p.path"
	" HAVING bucket >= ?5";

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int prepare(sqlite3 *db, const char *sql, const struct rollup_query *q, sqlite3_stmt **ret)
{
	int64_t lo = sat_add(q->lo_ns, -q->grain_ns);
	int r;

	if (q->grain_ns <= 0)
		return log_error_errno(EINVAL, "A roll-up grain must be positive");
	r = db_prepare(db, ret, sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(*ret, 1, q->grain_ns);
	sqlite3_bind_int64(*ret, 2, q->host_id);
	sqlite3_bind_int64(*ret, 3, lo > q->from_ns ? lo : q->from_ns);
	sqlite3_bind_int64(*ret, 4, sat_add(q->hi_ns, q->grain_ns));
	sqlite3_bind_int64(*ret, 5, q->from_ns);
	sqlite3_bind_int64(*ret, 6, q->lo_ns);
	sqlite3_bind_int64(*ret, 7, q->hi_ns);
	return 0;
}

int rollup_buckets(sqlite3 *db, const struct rollup_query *q,
		   int (*cb)(const struct rollup_bucket *b, void *arg), void *arg)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = prepare(db, buckets_sql, q, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rollup_bucket b = {
			.machine_id = (const char *)sqlite3_column_text(st, 0),
			.boot_uuid = (const char *)sqlite3_column_text(st, 1),
			.boot_id = sqlite3_column_int64(st, 2),
			.bucket_ns = sqlite3_column_int64(st, 3),
			.start_ns = sqlite3_column_int64(st, 4),
			.end_ns = sqlite3_column_int64(st, 5),
			.intervals = sqlite3_column_int64(st, 6),
			.partial = sqlite3_column_int64(st, 7),
			.not_analyzed = sqlite3_column_int64(st, 8),
			.events_lost = sqlite3_column_int64(st, 9),
			.dropped_intervals = sqlite3_column_int64(st, 10),
			.sampled = sqlite3_column_int64(st, 11),
			.active_ns = sqlite3_column_int64(st, 12),
			.samples_lost = sqlite3_column_int64(st, 13),
			.throttled = sqlite3_column_int64(st, 14),
		};

		r = cb(&b, arg);
		if (r < 0)
			return r;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

int rollup_paths(sqlite3 *db, const struct rollup_query *q,
		 int (*cb)(const struct rollup_path *p, void *arg), void *arg)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = prepare(db, paths_sql, q, &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct rollup_path p = {
			.machine_id = (const char *)sqlite3_column_text(st, 0),
			.boot_uuid = (const char *)sqlite3_column_text(st, 1),
			.boot_id = sqlite3_column_int64(st, 2),
			.bucket_ns = sqlite3_column_int64(st, 3),
			.path = (const char *)sqlite3_column_text(st, 4),
			.intervals = sqlite3_column_int64(st, 5),
			.has_hitm = sqlite3_column_type(st, 6) != SQLITE_NULL,
			.hitm = sqlite3_column_int64(st, 6),
			.has_samples = sqlite3_column_type(st, 7) != SQLITE_NULL,
			.samples = sqlite3_column_int64(st, 7),
			.has_work = sqlite3_column_type(st, 8) != SQLITE_NULL,
			.work = sqlite3_column_double(st, 8),
			.work_seconds = sqlite3_column_double(st, 9),
		};

		if (!p.path)
			continue;
		r = cb(&p, arg);
		if (r < 0)
			return r;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

int rollup_pending_from(sqlite3 *db, int64_t grain_ns, int64_t from_ns, int64_t *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st,
		FINAL_CTE
		" SELECT min(i.start_ns / ?1 * ?1) FROM intervals i JOIN final f USING (boot_id)"
		" WHERE i.start_ns >= ?3 AND i.start_ns / ?1 * ?1 + ?1 > f.until_ns");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, grain_ns);
	sqlite3_bind_int64(st, 2, 0);
	sqlite3_bind_int64(st, 3, from_ns);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)	/* min(): a row, always */
		return db_step_failed(st, rc);
	*ret = rc != SQLITE_ROW || sqlite3_column_type(st, 0) == SQLITE_NULL ? INT64_MAX :
	       sqlite3_column_int64(st, 0);
	return 0;
}
