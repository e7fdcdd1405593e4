// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "db.h"
#include "log.h"
#include "retention.h"
#include "util.h"

/* Intervals handled per step while over the size budget. */
#define RETENTION_BATCH 8
#define HOUR_NS (3600 * NSEC_PER_SEC)

int db_size_bytes(sqlite3 *db, uint64_t *ret)
{
	int64_t pages, page_size;
	int r;

	r = db_query_int(db, &pages, "PRAGMA page_count");
	if (r < 0)
		return r;
	r = db_query_int(db, &page_size, "PRAGMA page_size");
	if (r < 0)
		return r;
	*ret = (uint64_t)pages * (uint64_t)page_size;
	return 0;
}

static int exec_bind(sqlite3 *db, const char *sql, int64_t a, int64_t *ret_changes)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r = db_prepare(db, &st, sql);

	if (r < 0)
		return r;
	if (sqlite3_bind_parameter_count(st) >= 1)
		sqlite3_bind_int64(st, 1, a);
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	if (ret_changes)
		*ret_changes = sqlite3_changes(db);
	return 0;
}

/*
 * The last interval every cluster table has (mmhitm ship's cursors), 0 when
 * one has none. The detail (lines, vmstat) and the intervals themselves
 * (counts, path rows) each wait for the tables that carry them.
 */
#define SHIPPED_THROUGH(tables, n) \
	"(SELECT CASE WHEN count(*) = " #n " THEN min(last_key) ELSE 0 END" \
	" FROM ship_cursors WHERE tbl IN (" tables "))"
#define SHIPPED_DETAIL SHIPPED_THROUGH("'hitm_lines', 'vmstat_deltas'", 2)
#define SHIPPED_WHOLE SHIPPED_THROUGH("'intervals', 'event_counts', 'path_intervals', 'hitm_lines'," \
				      " 'vmstat_deltas'", 5)

/*
 * Whether an interval (of intervals, unqualified) is in the cluster: every
 * table carrying it has its cursor past it, and for whole intervals the
 * roll-ups of grain grain_s too (their cursors are bucket times: an
 * interval starting before them is in a bucket sent).
 */
static void shipped_pred(char *buf, size_t size, bool detail, int64_t grain_s)
{
	if (detail || grain_s <= 0) {
		snprintf(buf, size, "interval_id <= %s", detail ? SHIPPED_DETAIL : SHIPPED_WHOLE);
		return;
	}
	snprintf(buf, size, "(interval_id <= %s AND start_ns < (SELECT CASE WHEN count(*) = 2"
		 " THEN min(last_key) ELSE 0 END FROM ship_cursors WHERE tbl IN"
		 " ('interval_rollup@%" PRId64 "', 'path_rollup@%" PRId64 "')))",
		 SHIPPED_WHOLE, grain_s, grain_s);
}

/*
 * Fills temp.doomed with the intervals to act on: those ending before
 * cutoff, or (cutoff 0) the oldest RETENTION_BATCH, never the newest one.
 * With keep_unshipped, age (cutoff) passes over what ship has not sent.
 * This runs after every interval: an interval starts before it ends, so
 * start_ns <= cutoff bounds the index range (intervals_by_time, or
 * intervals_detail_kept for the detail), and with nothing due the step
 * reads no row, however long the history.
 */
static int pick(sqlite3 *db, bool want_detail, int64_t cutoff, bool keep_unshipped,
		int64_t grain_s, int64_t *ret_n)
{
	char sql[2048], shipped[768];
	int r;

	r = db_exec(db, "CREATE TEMP TABLE IF NOT EXISTS doomed (interval_id INTEGER PRIMARY KEY);"
			"DELETE FROM temp.doomed");
	if (r < 0)
		return r;
	shipped_pred(shipped, sizeof(shipped), want_detail, grain_s);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO temp.doomed SELECT interval_id FROM intervals"
		 " WHERE %s AND interval_id != (SELECT max(interval_id) FROM intervals)"
		 " AND %s AND %s"
		 " ORDER BY start_ns LIMIT %d",
		 want_detail ? "detail_dropped = 0" : "1",
		 cutoff ? "start_ns <= ?1 AND end_ns <= ?1" : "?1 = 0",
		 keep_unshipped && cutoff ? shipped : "1",
		 cutoff ? -1 : RETENTION_BATCH);
	return exec_bind(db, sql, cutoff, ret_n);
}

static int drop_detail(sqlite3 *db)
{
	return db_exec(db,
		"DELETE FROM mem_lines WHERE interval_id IN (SELECT interval_id FROM temp.doomed);"
		"DELETE FROM line_attribution WHERE interval_id IN (SELECT interval_id FROM temp.doomed);"
		"DELETE FROM vmstat_deltas WHERE interval_id IN (SELECT interval_id FROM temp.doomed);"
		"DELETE FROM lru_gen_progress WHERE interval_id IN (SELECT interval_id FROM temp.doomed);"
		"UPDATE intervals SET detail_dropped = 1 WHERE interval_id IN (SELECT interval_id FROM temp.doomed);");
}

static int oldest_start(sqlite3 *db, int64_t *ret)
{
	return db_query_int(db, ret, "SELECT coalesce(min(start_ns), 0) FROM intervals");
}

/*
 * Objects that died before the oldest interval kept can't be the target of
 * anything we still hold. Finding them reads every learned object.
 */
static int prune_dead(sqlite3 *db, int64_t *ret_n)
{
	int64_t a = 0, b = 0;
	int r;

	r = exec_bind(db, "DELETE FROM mm_objects WHERE coalesce(free_ns, last_seen_ns) <"
			  " coalesce((SELECT min(start_ns) FROM intervals), 0)", 0, &a);
	if (r >= 0)
		r = exec_bind(db, "DELETE FROM lock_objects WHERE last_seen_ns <"
				  " coalesce((SELECT min(start_ns) FROM intervals), 0)", 0, &b);
	if (ret_n)
		*ret_n = a + b;
	return r;
}

/* Adds the doomed intervals into the hourly tables, then deletes them. */
static int rollup_and_delete(sqlite3 *db)
{
	int64_t before = 0, after = 0;
	int r;

	r = oldest_start(db, &before);
	if (r < 0)
		return r;
	r = db_exec(db,
		"INSERT INTO hourly_events(boot_id, hour_ns, event_id, count, seconds)"
		" SELECT i.boot_id, i.start_ns - i.start_ns % 3600000000000, c.event_id,"
		"  sum(c.count), sum(i.end_ns - i.start_ns) / 1e9"
		" FROM temp.doomed d JOIN intervals i USING (interval_id) JOIN event_counts c USING (interval_id)"
		" WHERE true GROUP BY 1, 2, 3"
		" ON CONFLICT (boot_id, hour_ns, event_id) DO UPDATE SET"
		"  count = count + excluded.count, seconds = seconds + excluded.seconds;"
		"INSERT INTO hourly_paths(boot_id, hour_ns, path, lcl_hitm, rmt_hitm, peer, samples, work)"
		" SELECT i.boot_id, i.start_ns - i.start_ns % 3600000000000, p.path,"
		"  sum(p.lcl_hitm), sum(p.rmt_hitm), sum(p.peer), sum(p.samples), sum(p.work)"
		" FROM temp.doomed d JOIN intervals i USING (interval_id) JOIN path_intervals p USING (interval_id)"
		" WHERE true GROUP BY 1, 2, 3"
		" ON CONFLICT (boot_id, hour_ns, path) DO UPDATE SET"
		"  lcl_hitm = lcl_hitm + excluded.lcl_hitm, rmt_hitm = rmt_hitm + excluded.rmt_hitm,"
		"  peer = peer + excluded.peer, samples = samples + excluded.samples,"
		"  work = coalesce(work, 0) + coalesce(excluded.work, 0);"
		"INSERT INTO hourly_health(boot_id, hour_ns, intervals, seconds, cpu_ns, max_rss_kb,"
		"  events_lost, dropped_intervals)"
		" SELECT i.boot_id, i.start_ns - i.start_ns % 3600000000000, count(*),"
		"  sum(i.end_ns - i.start_ns) / 1e9, sum(coalesce(i.cpu_user_ns, 0) + coalesce(i.cpu_sys_ns, 0)),"
		"  max(i.rss_kb), sum(i.events_lost), sum(i.dropped_intervals)"
		" FROM temp.doomed d JOIN intervals i USING (interval_id)"
		" WHERE true GROUP BY 1, 2"
		" ON CONFLICT (boot_id, hour_ns) DO UPDATE SET"
		"  intervals = intervals + excluded.intervals, seconds = seconds + excluded.seconds,"
		"  cpu_ns = cpu_ns + excluded.cpu_ns, max_rss_kb = max(max_rss_kb, excluded.max_rss_kb),"
		"  events_lost = events_lost + excluded.events_lost,"
		"  dropped_intervals = dropped_intervals + excluded.dropped_intervals;"
		"DELETE FROM intervals WHERE interval_id IN (SELECT interval_id FROM temp.doomed);");
	if (r < 0)
		return r;
	/* Past the raw retention every interval recorded pushes one out: the
	 * dead objects go when the oldest interval kept moves into another
	 * hour, so that they are kept an hour longer at most. */
	r = oldest_start(db, &after);
	if (r < 0 || after / HOUR_NS == before / HOUR_NS)
		return r;
	return prune_dead(db, NULL);
}

static int delete_hours(sqlite3 *db, int64_t cutoff, int64_t *ret_n)
{
	int64_t a = 0, b = 0, c = 0, before;
	int r;

	/* cutoff 0: the oldest hour, whatever its age. */
	if (!cutoff) {
		r = db_query_int(db, &before,
				 "SELECT min(h) + 1 FROM (SELECT min(hour_ns) AS h FROM hourly_events"
				 " UNION ALL SELECT min(hour_ns) FROM hourly_paths"
				 " UNION ALL SELECT min(hour_ns) FROM hourly_health)");
		if (r < 0 || before == 0) {
			*ret_n = 0;
			return r == -ENODATA ? 0 : r;
		}
		cutoff = before;
	}
	/* hour_ns: the *_by_hour indexes, so that no hour due reads no row. */
	r = exec_bind(db, "DELETE FROM hourly_events WHERE hour_ns < ?1", cutoff, &a);
	if (r >= 0)
		r = exec_bind(db, "DELETE FROM hourly_paths WHERE hour_ns < ?1", cutoff, &b);
	if (r >= 0)
		r = exec_bind(db, "DELETE FROM hourly_health WHERE hour_ns < ?1", cutoff, &c);
	*ret_n = c ? c : (a || b ? 1 : 0);
	return r;
}

/*
 * Of temp.doomed, how many ship has not sent (what the size budget costs the
 * cluster), each interval once: a whole interval whose detail went unsent
 * before was counted then.
 */
static int count_unshipped(sqlite3 *db, bool detail, int64_t grain_s, int64_t *ret)
{
	char sql[2048], shipped[768], counted[768];

	shipped_pred(shipped, sizeof(shipped), detail, grain_s);
	shipped_pred(counted, sizeof(counted), true, grain_s);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM temp.doomed JOIN intervals USING (interval_id)"
		 " WHERE NOT %s%s%s%s", shipped, detail ? "" : " AND NOT (detail_dropped = 1 AND NOT ",
		 detail ? "" : counted, detail ? "" : ")");
	return db_query_int(db, ret, sql);
}

/*
 * What retention deletes, in the order the size budget takes it: first the
 * learned objects no interval kept can need. Age has no step for those:
 * the intervals step prunes them hourly.
 */
enum step_kind { STEP_DEAD_OBJECTS, STEP_DETAIL, STEP_INTERVALS, STEP_HOURS, STEP_MAX };

/* One step in its own transaction. */
static int step(sqlite3 *db, enum step_kind kind, int64_t cutoff, const struct retention_policy *p,
		struct retention_result *res, int64_t *ret_n)
{
	int64_t n = 0, unshipped = 0;
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	switch (kind) {
	case STEP_DETAIL:
		r = pick(db, true, cutoff, p->ship_required, p->ship_rollup_s, &n);
		if (r >= 0 && n && p->ship_required)
			r = count_unshipped(db, true, p->ship_rollup_s, &unshipped);
		if (r >= 0 && n)
			r = drop_detail(db);
		res->detail_intervals += n;
		break;
	case STEP_DEAD_OBJECTS:
		r = prune_dead(db, &n);
		res->objects += n;
		break;
	case STEP_INTERVALS:
		r = pick(db, false, cutoff, p->ship_required, p->ship_rollup_s, &n);
		if (r >= 0 && n && p->ship_required)
			r = count_unshipped(db, false, p->ship_rollup_s, &unshipped);
		if (r >= 0 && n)
			r = rollup_and_delete(db);
		res->intervals += n;
		break;
	default: /* STEP_HOURS */
		r = delete_hours(db, cutoff, &n);
		res->hours += n;
		break;
	}
	r = db_end(db, r);
	if (r < 0)
		return r;
	res->unshipped += unshipped;
	*ret_n = n;
	return 0;
}

static int log_run(sqlite3 *db, int64_t now, const char *reason, const struct retention_result *before,
		   const struct retention_result *res)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	if (res->intervals == before->intervals && res->detail_intervals == before->detail_intervals &&
	    res->hours == before->hours)
		return 0;
	r = db_prepare(db, &st, "INSERT INTO retention_log(ts_ns, reason, intervals, detail_intervals,"
				" hours, bytes_before, bytes_after, unshipped)"
				" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_text(st, 2, reason, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, res->intervals - before->intervals);
	sqlite3_bind_int64(st, 4, res->detail_intervals - before->detail_intervals);
	sqlite3_bind_int64(st, 5, res->hours - before->hours);
	sqlite3_bind_int64(st, 6, (int64_t)res->bytes_before);
	sqlite3_bind_int64(st, 7, (int64_t)res->bytes_after);
	sqlite3_bind_int64(st, 8, res->unshipped - before->unshipped);
	return db_step_done(db, st);
}

static int vacuum(sqlite3 *db, uint64_t *ret_size)
{
	/* Returns freed pages to the file system (auto_vacuum=INCREMENTAL). */
	int r = db_exec(db, "PRAGMA incremental_vacuum");

	if (r < 0)
		return r;
	return db_size_bytes(db, ret_size);
}

int retention_enforce(sqlite3 *db, int64_t now, const struct retention_policy *p,
		      struct retention_result *ret)
{
	struct retention_result res = {}, mark;
	uint64_t size;
	int64_t n;
	int r;

	r = db_size_bytes(db, &res.bytes_before);
	if (r < 0)
		return r;

	if (p->detail_ns && (r = step(db, STEP_DETAIL, now - p->detail_ns, p, &res, &n)) < 0)
		return r;
	if (p->raw_ns && (r = step(db, STEP_INTERVALS, now - p->raw_ns, p, &res, &n)) < 0)
		return r;
	if (p->rollup_ns && (r = step(db, STEP_HOURS, now - p->rollup_ns, p, &res, &n)) < 0)
		return r;
	r = vacuum(db, &size);
	if (r < 0)
		return r;
	res.bytes_after = size;
	r = log_run(db, now, "age", &(struct retention_result){}, &res);
	if (r < 0)
		return r;

	mark = res;
	/* Over the budget, the dead objects go before any detail or interval:
	 * a host forking thousands of processes a minute learns more objects
	 * than it records intervals, and they would otherwise push out every
	 * interval while they wait for the hourly prune. Each pass reads
	 * every learned object once. */
	while (p->max_bytes && size > p->max_bytes) {
		int kind;

		for (kind = STEP_DEAD_OBJECTS, n = 0; kind < STEP_MAX && n == 0; kind++) {
			r = step(db, kind, 0, p, &res, &n);
			if (r < 0)
				return r;
		}
		if (n == 0) {
			res.over_budget = 1;
			break;
		}
		r = vacuum(db, &size);
		if (r < 0)
			return r;
	}
	res.bytes_after = size;
	r = log_run(db, now, "size", &mark, &res);
	if (r < 0)
		return r;
	/* Logged here, where it is decided: the cluster will miss these. */
	if (res.unshipped > mark.unshipped)
		log_warning("max_db_size forced deleting %" PRId64 " intervals (or their detail) that mmhitm ship"
			    " had not sent (retention_log.unshipped)", res.unshipped - mark.unshipped);
	if (ret)
		*ret = res;
	return 0;
}
