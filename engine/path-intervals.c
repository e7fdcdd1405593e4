// SPDX-License-Identifier: GPL-2.0
/* path_intervals: each path's HITM and its own work, per interval (path-intervals.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "path-intervals.h"
#include "paths.h"
#include "util.h"

/* Same-mm switches: mmhitmd estimates them per interval from sampled
 * switch windows (boot_events: sched:sched_switch, role 'sample') as this
 * counter; a recorder without the estimator leaves the path table's next
 * work source (all switches) as the only measure. */
#define SAME_MM_SWITCHES "derived:same_mm_switches"
/* Aging passes: lru_gen's max_seq steps, read every interval. */
#define MAX_SEQ_DELTA "lru_gen_progress.max_seq_delta"

/*
 * A count's precision travels with it into path_intervals: windowed
 * counts (and the same-mm estimate, sampled in the windows) were seen in
 * the interval's armed share only; free and continuous counts all along.
 * A multiplexed counter ran for its run_share of that: its count was
 * scaled from the product.
 */
#define WORK_SHARE_SQL \
	"(CASE WHEN c.method IN ('window', 'derived') AND i.armed_ns IS NOT NULL" \
	" THEN i.armed_ns * 1.0 / max(i.end_ns - i.start_ns, 1) ELSE 1.0 END * c.run_share)"
/* The share of a live interval inside [?2, ?3), for borrowed counts. */
#define OVERLAP_SQL "((min(i.end_ns, ?3) - max(i.start_ns, ?2)) * 1.0 / max(i.end_ns - i.start_ns, 1))"

/* The path's work in an interval, and how precisely it is known. */
struct work {
	double value;
	double variance;	/* of value; 0: counted exactly */
	double share;		/* of the interval it was counted in */
	const char *unit;	/* what its source counts: path_work() sets it */
};

struct path_intervals {
	sqlite3 *db;
	const struct objects *obj;
	sqlite3_stmt *path_sums, *measured, *count, *count_borrowed, *aging, *aging_borrowed;
	int same_mm;		/* -1 unknown; 1: an object boot estimates same-mm switches */
};

void path_intervals_free(struct path_intervals *p)
{
	if (!p)
		return;
	db_finalize(p->path_sums);
	db_finalize(p->measured);
	db_finalize(p->count);
	db_finalize(p->count_borrowed);
	db_finalize(p->aging);
	db_finalize(p->aging_borrowed);
	free(p);
}

static int path_intervals_prepare(struct path_intervals *p)
{
	const struct db_stmt_sql stmts[] = {
		{ &p->path_sums,
		  "SELECT a.path, sum(l.lcl_hitm), sum(l.rmt_hitm), sum(l.lcl_peer + l.rmt_peer),"
		  " sum(l.loads + l.stores + l.noparse)"
		  " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		  /* kernel samples only: shares stay shares of the kernel's HITM */
		  " WHERE a.interval_id = ?1 AND l.kernel = 1 GROUP BY a.path ORDER BY a.path" },
		/* HITM is measured where the sampler ran: a windowed or duty-cycled
		 * sampler writes its row (active_ns 0) for intervals it never ran in,
		 * whose HITM is unknown, not zero, and must give no rate. */
		{ &p->measured,
		  "SELECT EXISTS (SELECT 1 FROM sampling WHERE interval_id = ?1"
		  "  AND (active_ns > 0 OR samples > 0))"
		  " OR EXISTS (SELECT 1 FROM mem_lines WHERE interval_id = ?1),"
		  " EXISTS (SELECT 1 FROM path_intervals WHERE interval_id = ?1),"
		  " (SELECT detail_dropped FROM intervals WHERE interval_id = ?1)" },
		{ &p->count,
		  "SELECT c.count, c.variance, " WORK_SHARE_SQL
		  " FROM event_counts c JOIN event_names n USING (event_id)"
		  " JOIN intervals i USING (interval_id)"
		  " WHERE c.interval_id = ?1 AND n.name = ?2" },
		/* An imported boot has no counters of its own: the live boot
		 * recorded over the same time has them, apportioned by overlap. */
		{ &p->count_borrowed,
		  "SELECT sum(c.count * " OVERLAP_SQL "),"
		  " sum(min(i.end_ns, ?3) - max(i.start_ns, ?2)),"
		  " sum(c.variance * " OVERLAP_SQL " * " OVERLAP_SQL "),"
		  " sum(" WORK_SHARE_SQL " * (min(i.end_ns, ?3) - max(i.start_ns, ?2)))"
		  "   / max(sum(min(i.end_ns, ?3) - max(i.start_ns, ?2)), 1)"
		  " FROM event_counts c JOIN event_names n USING (event_id)"
		  " JOIN intervals i USING (interval_id)"
		  " WHERE i.boot_id = ?1 AND n.name = ?4 AND i.end_ns > ?2 AND i.start_ns < ?3" },
		{ &p->aging, "SELECT sum(max_seq_delta) FROM lru_gen_progress WHERE interval_id = ?1" },
		{ &p->aging_borrowed,
		  "SELECT sum(g.d * " OVERLAP_SQL "),"
		  " sum(min(i.end_ns, ?3) - max(i.start_ns, ?2)), 0, 1"
		  " FROM intervals i JOIN (SELECT interval_id, sum(max_seq_delta) AS d"
		  "  FROM lru_gen_progress GROUP BY interval_id) g USING (interval_id)"
		  " WHERE i.boot_id = ?1 AND i.end_ns > ?2 AND i.start_ns < ?3" },
	};

	return db_prepare_all(p->db, stmts, ARRAY_SIZE(stmts));
}

int path_intervals_new(sqlite3 *db, const struct objects *obj, struct path_intervals **ret)
{
	struct path_intervals *p;
	int r;

	*ret = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return log_oom();
	*p = (struct path_intervals){ .db = db, .obj = obj, .same_mm = -1 };
	r = path_intervals_prepare(p);
	if (r < 0) {
		path_intervals_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

/*
 * An imported boot has no counters of its own: the live boot recorded over
 * the same time (an object boot) has them, apportioned by overlap, when it
 * covers at least 90 % of the interval. st is count_borrowed (?4: event)
 * or aging_borrowed.
 */
static int borrow(struct path_intervals *p, sqlite3_stmt *st, const char *event, int64_t t0, int64_t t1,
		  struct work *ret, char *source, size_t size)
{
	const char *boots = objects_boots(p->obj);
	int rc;

	while (boots && (boots = strchr(boots, ' '))) {
		int64_t b = strtoll(++boots, NULL, 10);

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, b);
		sqlite3_bind_int64(st, 2, t0);
		sqlite3_bind_int64(st, 3, t1);
		if (st == p->count_borrowed)
			sqlite3_bind_text(st, 4, event, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL &&
		    sqlite3_column_int64(st, 1) * 10 >= (t1 - t0) * 9) {
			ret->value = sqlite3_column_double(st, 0);
			ret->variance = sqlite3_column_double(st, 2);
			ret->share = sqlite3_column_double(st, 3);
			snprintf(source, size, "%s of boot %" PRId64 " over the same time", event, b);
			sqlite3_reset(st);
			return 1;
		}
		sqlite3_reset(st);
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			return db_step_failed(st, rc);
	}
	return 0;
}

/* A counter of the interval, or of the live boot over the same time. */
static int interval_count(struct path_intervals *p, int64_t interval_id, int64_t t0, int64_t t1,
			  const char *event, struct work *ret, char *source, size_t size)
{
	int rc;

	sqlite3_reset(p->count);
	sqlite3_bind_int64(p->count, 1, interval_id);
	sqlite3_bind_text(p->count, 2, event, -1, SQLITE_STATIC);
	rc = sqlite3_step(p->count);
	if (rc == SQLITE_ROW) {
		ret->value = (double)sqlite3_column_int64(p->count, 0);
		ret->variance = sqlite3_column_double(p->count, 1);
		ret->share = sqlite3_column_double(p->count, 2);
		snprintf(source, size, "%s", event);
		sqlite3_reset(p->count);
		return 1;
	}
	sqlite3_reset(p->count);
	if (rc != SQLITE_DONE)
		return db_step_failed(p->count, rc);
	return borrow(p, p->count_borrowed, event, t0, t1, ret, source, size);
}

/* Whether this boot or its live boot estimates same-mm switches. */
static int same_mm_estimated(struct path_intervals *p)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	const char *boots = objects_boots(p->obj);
	int r;

	if (p->same_mm >= 0)
		return p->same_mm;
	r = db_prepare(p->db, &st, "SELECT 1 FROM boot_events WHERE event = 'sched:sched_switch'"
				   " AND role = 'sample' AND available AND"
				   " instr(' ' || ?1 || ' ', ' ' || boot_id || ' ') > 0");
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, boots, -1, SQLITE_STATIC);
	p->same_mm = sqlite3_step(st) == SQLITE_ROW;
	return p->same_mm;
}

/* Aging passes of the interval, or of the live boot over the same time. */
static int aging_work(struct path_intervals *p, int64_t interval_id, int64_t t0, int64_t t1,
		      struct work *ret, char *source, size_t size)
{
	int r = 0, rc;

	sqlite3_reset(p->aging);
	sqlite3_bind_int64(p->aging, 1, interval_id);
	rc = sqlite3_step(p->aging);
	if (rc == SQLITE_ROW && sqlite3_column_type(p->aging, 0) != SQLITE_NULL) {
		/* lru_gen's max_seq: exact, read every interval */
		ret->value = (double)sqlite3_column_int64(p->aging, 0);
		ret->variance = 0;
		ret->share = 1;
		snprintf(source, size, "%s", MAX_SEQ_DELTA);
		r = 1;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {	/* sum(): a row, always */
		r = db_step_failed(p->aging, rc);
	}
	sqlite3_reset(p->aging);
	if (r == 0)
		r = borrow(p, p->aging_borrowed, MAX_SEQ_DELTA, t0, t1, ret, source, size);
	return r;
}

/*
 * The path's own work in the interval: the first of the path table's work
 * sources this boot records; 0 when not counted (NULL work).
 */
static int path_work(struct path_intervals *p, const struct path_def *pd, int64_t interval_id, int64_t t0,
		     int64_t t1, struct work *ret, char *source, size_t size)
{
	bool no_same_mm = false;
	int r;

	for (size_t i = 0; i < pd->nr_work; i++) {
		const char *w = pd->work[i];

		ret->unit = pd->work_unit[i];
		if (strcmp(w, SAME_MM_SWITCHES) == 0) {
			r = same_mm_estimated(p);
			if (r < 0)
				return r;
			/* With the estimator, an interval without an estimate (no
			 * window ran) has no such work: another source would be
			 * another unit. The choice is the boot's, so a rebuild makes
			 * the same one. */
			if (r > 0)
				return interval_count(p, interval_id, t0, t1, w, ret, source, size);
			no_same_mm = true;
			continue;
		}
		if (strcmp(w, MAX_SEQ_DELTA) == 0)
			return aging_work(p, interval_id, t0, t1, ret, source, size);
		r = interval_count(p, interval_id, t0, t1, w, ret, source, size);
		if (r > 0 && no_same_mm) {
			size_t len = strlen(source);

			snprintf(source + len, size - len, " (all switches: same-mm not separated)");
		}
		if (r != 0)
			return r;
	}
	return 0;
}

static void bind_work(sqlite3_stmt *ins, const struct work *w, const char *source)
{
	sqlite3_bind_double(ins, 7, w->value);
	sqlite3_bind_text(ins, 8, source, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(ins, 9, sqrt(w->variance > 0 ? w->variance : 0));
	sqlite3_bind_double(ins, 10, w->share);
	sqlite3_bind_text(ins, 11, w->unit, -1, SQLITE_STATIC);
}

/*
 * Whether the interval's HITM is known (*ret_measured) and whether its
 * rows must stay as they are (*ret_keep).
 */
static void interval_measured(struct path_intervals *p, int64_t interval_id, bool *ret_measured,
			      bool *ret_keep)
{
	bool measured, kept, dropped;
	int rc;

	sqlite3_reset(p->measured);
	sqlite3_bind_int64(p->measured, 1, interval_id);
	rc = sqlite3_step(p->measured);
	measured = rc == SQLITE_ROW && sqlite3_column_int(p->measured, 0);
	kept = rc == SQLITE_ROW && sqlite3_column_int(p->measured, 1);
	dropped = rc == SQLITE_ROW && sqlite3_column_int(p->measured, 2);
	sqlite3_reset(p->measured);
	*ret_keep = false;
	/* Retention dropped this interval's samples (mem_lines): sums made
	 * while they were there stand; without them HITM is unknown now. */
	if (dropped) {
		if (kept)
			*ret_keep = true;
		measured = false;
	}
	*ret_measured = measured;
}

/* The sampled paths (the path table's among them, with their work); seen[]
 * marks the table's. */
static int write_sampled(struct path_intervals *p, sqlite3_stmt *ins, int64_t interval_id,
			 int64_t t0, int64_t t1, bool *seen)
{
	int i, r, rc;

	sqlite3_reset(p->path_sums);
	sqlite3_bind_int64(p->path_sums, 1, interval_id);
	for (;;) {
		const char *path;
		char source[160] = "";
		struct work work = { 0, 0, 1 };
		int w = 0;

		rc = sqlite3_step(p->path_sums);
		if (rc != SQLITE_ROW)
			break;
		path = (const char *)sqlite3_column_text(p->path_sums, 0);
		i = path_index(path);
		if (i >= 0) {
			seen[i] = true;
			w = path_work(p, path_get(i), interval_id, t0, t1, &work, source, sizeof(source));
			if (w < 0) {
				sqlite3_reset(p->path_sums);
				return w;
			}
		}
		sqlite3_reset(ins);
		sqlite3_clear_bindings(ins);
		sqlite3_bind_int64(ins, 1, interval_id);
		sqlite3_bind_text(ins, 2, path, -1, SQLITE_TRANSIENT);
		for (int k = 1; k <= 4; k++)
			sqlite3_bind_int64(ins, 2 + k, sqlite3_column_int64(p->path_sums, k));
		if (w > 0)
			bind_work(ins, &work, source);
		r = db_step_done(p->db, ins);
		if (r < 0) {
			sqlite3_reset(p->path_sums);
			return r;
		}
	}
	sqlite3_reset(p->path_sums);
	if (rc != SQLITE_DONE)
		return db_step_failed(p->path_sums, rc);
	return 0;
}

/* The table's paths without samples: zero when sampled, NULL when not measured. */
static int write_unsampled(struct path_intervals *p, sqlite3_stmt *ins, int64_t interval_id,
			   int64_t t0, int64_t t1, bool measured, const bool *seen)
{
	int r;

	for (int i = 0; i < paths_nr(); i++) {
		char source[160] = "";
		struct work work = { 0, 0, 1 };
		int w;

		if (seen[i])
			continue;
		w = path_work(p, path_get(i), interval_id, t0, t1, &work, source, sizeof(source));
		if (w < 0)
			return w;
		sqlite3_reset(ins);
		sqlite3_clear_bindings(ins);
		sqlite3_bind_int64(ins, 1, interval_id);
		sqlite3_bind_text(ins, 2, path_get(i)->id, -1, SQLITE_STATIC);
		if (measured)
			for (int k = 3; k <= 6; k++)
				sqlite3_bind_int64(ins, k, 0);
		if (w > 0)
			bind_work(ins, &work, source);
		r = db_step_done(p->db, ins);
		if (r < 0)
			return r;
	}
	return 0;
}

int path_intervals_write(struct path_intervals *p, int64_t interval_id, int64_t t0, int64_t t1)
{
	_cleanup_finalize_ sqlite3_stmt *del = NULL, *ins = NULL;
	bool measured, keep, seen[MAX_PATHS] = {};
	int r;

	interval_measured(p, interval_id, &measured, &keep);
	if (keep)
		return 0;

	r = db_prepare(p->db, &del, "DELETE FROM path_intervals WHERE interval_id = ?1");
	if (r >= 0)
		r = db_prepare(p->db, &ins,
			       "INSERT INTO path_intervals(interval_id, path, lcl_hitm, rmt_hitm, peer,"
			       " samples, work, work_source, work_stderr, work_share, work_unit)"
			       " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(del, 1, interval_id);
	r = db_step_done(p->db, del);
	if (r < 0)
		return r;
	r = write_sampled(p, ins, interval_id, t0, t1, seen);
	if (r < 0)
		return r;
	return write_unsampled(p, ins, interval_id, t0, t1, measured, seen);
}
