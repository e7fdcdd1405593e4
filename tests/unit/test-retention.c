// SPDX-License-Identifier: GPL-2.0
/*
 * Retention over a long synthetic run (30 days of 15-minute intervals),
 * enforced after every interval as the daemon does: by age, detail goes
 * first, then intervals (rolled up, so hourly totals stay exact), then old
 * rollups; by size, the database never ends an enforcement over budget.
 */
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "retention.h"
#include "test.h"
#include "util.h"

#define STEP_NS (900 * NSEC_PER_SEC)
#define DAY_NS (86400 * NSEC_PER_SEC)
#define HOUR_NS (3600 * NSEC_PER_SEC)
#define DAYS 30
#define T0 ((int64_t)1800000000 * NSEC_PER_SEC)	/* a whole hour */

static char path[64];
static int64_t inserted_per_hour[DAYS * 24];

static sqlite3 *fresh_db(void)
{
	sqlite3 *db = NULL;

	unlink(path);
	if (db_open(path, 0, &db) < 0)
		return NULL;
	db_exec(db, "PRAGMA synchronous = OFF");	/* a test, not a crash-safe recorder */
	db_exec(db, "INSERT INTO hosts(machine_id, hostname) VALUES ('m', 'h');"
		    "INSERT INTO boots(boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
		    " kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size, page_size,"
		    " pmu_kind, lru_gen) VALUES (1, 1, 'b', 0, 0, 'r', 'v', 'x86_64', 2, 64, 4096, 'none', 'absent');"
		    "INSERT INTO event_names(event_id, name) VALUES (1, 'sched:sched_switch'), (2, 'tlb:tlb_flush');"
		    "CREATE TEMP TABLE series(value INTEGER PRIMARY KEY);"
		    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 40)"
		    " INSERT INTO temp.series SELECT v FROM s;"
		    "INSERT INTO vmstat_names(vmstat_id, name) SELECT value, 'v' || value FROM temp.series");
	return db;
}

/* One interval: counts, 40 vmstat deltas, 30 sampled lines, a path row. */
static void add_interval(sqlite3 *db, int64_t i)
{
	int64_t start = T0 + i * STEP_NS, end = start + STEP_NS, count = 1000 + i % 7;
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO intervals(interval_id, boot_id, start_ns, end_ns, cpu_user_ns, cpu_sys_ns, rss_kb)"
		 " VALUES (%" PRId64 ", 1, %" PRId64 ", %" PRId64 ", 1000, 1000, 4000);"
		 "INSERT INTO event_counts (interval_id, event_id, count) VALUES (%" PRId64 ", 1, %" PRId64 "), (%" PRId64 ", 2, 5);"
		 "INSERT INTO vmstat_deltas SELECT %" PRId64 ", value, value * 1000 FROM temp.series;"
		 "INSERT INTO mem_lines(interval_id, line_addr, offset, ip, kernel, lcl_hitm, loads)"
		 " SELECT %" PRId64 ", -131941395267520 + value * 64, 8, -2130706432 + value, 1, 3, 9"
		 " FROM temp.series WHERE value <= 30;"
		 "INSERT INTO path_intervals(interval_id, path, lcl_hitm, rmt_hitm, peer, samples, work)"
		 " VALUES (%" PRId64 ", 'P4', 2, 1, 0, 9, 100.0);",
		 i + 1, start, end, i + 1, count, i + 1, i + 1, i + 1, i + 1);
	CHECK_INT(db_exec(db, sql), ==, 0);
	inserted_per_hour[(i * STEP_NS) / HOUR_NS] += count;
}

static int64_t q(sqlite3 *db, const char *sql)
{
	int64_t v = -1;

	db_query_int(db, &v, sql);
	return v;
}

static void test_age(void)
{
	struct retention_policy pol = { 2 * DAY_NS, 7 * DAY_NS, 20 * DAY_NS, 0 };
	int64_t n = DAYS * DAY_NS / STEP_NS, now = 0, kept = 0;
	sqlite3 *db = fresh_db();
	char sql[256];

	memset(inserted_per_hour, 0, sizeof(inserted_per_hour));
	for (int64_t i = 0; i < n; i++) {
		add_interval(db, i);
		now = T0 + (i + 1) * STEP_NS;
		CHECK_INT(retention_enforce(db, now, &pol, NULL), ==, 0);
	}
	/* Whole intervals only for the last 7 days, detail for the last 2. */
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM intervals WHERE end_ns <= %" PRId64,
		 (int64_t)(now - 7 * DAY_NS));
	CHECK_INT(q(db, sql), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM intervals"), ==, 7 * DAY_NS / STEP_NS);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM intervals WHERE detail_dropped = 0 AND end_ns <= %" PRId64,
		 (int64_t)(now - 2 * DAY_NS));
	CHECK_INT(q(db, sql), ==, 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM intervals WHERE detail_dropped = 1 AND end_ns > %" PRId64,
		 (int64_t)(now - 2 * DAY_NS));
	CHECK_INT(q(db, sql), ==, 0);
	CHECK_INT(q(db, "SELECT count(DISTINCT interval_id) FROM mem_lines"), ==, 2 * DAY_NS / STEP_NS);
	CHECK_INT(q(db, "SELECT count(DISTINCT interval_id) FROM vmstat_deltas"), ==, 2 * DAY_NS / STEP_NS);
	/* Counts were kept, hour by hour, for everything younger than 20 days:
	 * in rollups for deleted intervals, raw for the rest. */
	for (int h = 0; h < DAYS * 24; h++) {
		int64_t hour = T0 + (int64_t)h * HOUR_NS;

		snprintf(sql, sizeof(sql), "SELECT coalesce(sum(count), 0) FROM hourly_event_rates"
			 " WHERE event = 'sched:sched_switch' AND hour_ns = %" PRId64, hour);
		if (hour >= now - 20 * DAY_NS) {
			CHECK_INT(q(db, sql), ==, inserted_per_hour[h]);
			kept++;
		} else {
			CHECK_INT(q(db, sql), ==, 0);
		}
	}
	CHECK_INT(kept, ==, 20 * 24);
	/* Path HITM and the daemon's health were rolled up too. */
	CHECK_INT(q(db, "SELECT sum(lcl_hitm) FROM hourly_paths WHERE path = 'P4'"), ==,
		  2 * (13 * DAY_NS / STEP_NS));
	CHECK_INT(q(db, "SELECT sum(intervals) FROM hourly_health"), ==, 13 * DAY_NS / STEP_NS);
	CHECK_INT(q(db, "SELECT count(*) FROM retention_log WHERE reason = 'age'"), >, 0);
	{
		sqlite3_stmt *st = NULL;

		sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL);
		CHECK_INT(sqlite3_step(st), ==, SQLITE_ROW);
		CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
	}
	db_close(db);
}

static void test_size(void)
{
	int64_t n = 12 * DAY_NS / STEP_NS, total = 0;
	uint64_t size = 0, before = 0, max_growth = 0, max_before = 0, empty = 0;
	bool ordered = true;
	sqlite3 *db = fresh_db();
	struct retention_policy pol = {};
	uint64_t budget;

	/* 150 KiB of data over the empty schema (~200 KiB, and growing with
	 * each migration: a fixed budget would shrink the data's share) */
	db_size_bytes(db, &empty);
	budget = empty + (150 << 10);
	pol.max_bytes = budget;

	memset(inserted_per_hour, 0, sizeof(inserted_per_hour));
	for (int64_t i = 0; i < n; i++) {
		struct retention_result res = {};

		db_size_bytes(db, &before);
		add_interval(db, i);
		total += 1000 + i % 7;
		db_size_bytes(db, &size);
		if (size - before > max_growth)
			max_growth = size - before;
		if (size > max_before)
			max_before = size;
		CHECK_INT(retention_enforce(db, T0 + (i + 1) * STEP_NS, &pol, &res), ==, 0);
		CHECK_INT(res.over_budget, ==, 0);
		CHECK_INT(res.bytes_after, <=, budget);
		/* Detail goes before whole intervals: whenever one was deleted,
		 * every interval left has lost its detail but the newest few. */
		if (res.intervals && q(db, "SELECT count(*) FROM intervals WHERE detail_dropped = 0") >
				     q(db, "SELECT count(*) FROM intervals") / 2)
			ordered = false;
	}
	CHECK(ordered);
	/* Never more than one interval over the budget, even before enforcing. */
	CHECK_INT(max_before, <=, budget + max_growth);
	CHECK_INT(q(db, "SELECT count(*) FROM retention_log WHERE reason = 'size'"), >, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM intervals"), <, n);
	/* Rollups were not needed to be cut: every count is still there. */
	CHECK_INT(q(db, "SELECT sum(count) FROM hourly_event_rates WHERE event = 'sched:sched_switch'"), ==, total);
	db_close(db);
}

/*
 * ship_required: age deletes only what mmhitm ship has sent (every interval
 * table's cursor at 100 here); the size budget deletes the rest too, and
 * counts it. Without the setting age takes the unshipped intervals.
 */
static void ship_required_run(bool required)
{
	struct retention_policy pol = { 1 * DAY_NS, 2 * DAY_NS, 0, 0, required };
	int64_t n = 4 * DAY_NS / STEP_NS, now = T0 + n * STEP_NS;
	struct retention_result res = {};
	sqlite3 *db = fresh_db();

	for (int64_t i = 0; i < n; i++)
		add_interval(db, i);
	/* hitm_lines' and vmstat_deltas' cursors further: the lines wait for intervals' */
	CHECK_INT(db_exec(db, "INSERT INTO ship_cursors VALUES ('intervals', 100, 1, 100, 0),"
			      " ('event_counts', 100, 1, 200, 0), ('path_intervals', 100, 1, 100, 0),"
			      " ('hitm_lines', 150, 1, 4500, 0), ('vmstat_deltas', 150, 1, 6000, 0)"), ==, 0);
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	/* 2 days old: intervals 1..192 by age; 1 day: detail of 1..288. */
	if (required) {
		CHECK_INT(q(db, "SELECT min(interval_id) FROM intervals"), ==, 101);
		CHECK_INT(res.intervals, ==, 100);
		/* detail of 101..150 went (shipped), 151.. kept */
		CHECK_INT(q(db, "SELECT max(interval_id) FROM intervals WHERE detail_dropped"), ==, 150);
		CHECK_INT(q(db, "SELECT count(*) FROM vmstat_deltas WHERE interval_id = 151"), ==, 40);
		CHECK_INT(res.unshipped, ==, 0);
	} else {
		CHECK_INT(q(db, "SELECT min(interval_id) FROM intervals"), ==, 193);
		CHECK_INT(q(db, "SELECT max(interval_id) FROM intervals WHERE detail_dropped"), ==, 288);
	}

	/* Now a budget it can only meet by deleting unshipped intervals. */
	pol.max_bytes = 200 << 10;
	res = (struct retention_result){};
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM intervals WHERE interval_id <= 150"), ==, 0);
	if (required) {
		CHECK_INT(res.unshipped, >, 0);
		CHECK_INT(q(db, "SELECT sum(unshipped) FROM retention_log WHERE reason = 'size'"), ==, res.unshipped);
		/*
		 * Each interval once, though most lost their detail before
		 * their row: the rows 101.. deleted, and the kept ones past
		 * 150 (hitm_lines' cursor) whose detail went.
		 */
		CHECK_INT(res.unshipped, ==, n - 100 - q(db, "SELECT count(*) FROM intervals") +
			  q(db, "SELECT count(*) FROM intervals WHERE detail_dropped AND interval_id > 150"));
	} else {
		CHECK_INT(res.unshipped, ==, 0);
		CHECK_INT(q(db, "SELECT sum(unshipped) FROM retention_log"), ==, 0);
	}
	db_close(db);
}

/*
 * With roll-ups shipped at a grain, age waits for their cursors as well
 * (bucket times): none yet, nothing goes; both past interval 80's start,
 * the 80 before it go.
 */
static void test_ship_required_rollup(void)
{
	struct retention_policy pol = { 1 * DAY_NS, 2 * DAY_NS, 0, 0, true, 600 };
	int64_t n = 4 * DAY_NS / STEP_NS, now = T0 + n * STEP_NS;
	struct retention_result res = {};
	sqlite3 *db = fresh_db();
	char sql[512];

	for (int64_t i = 0; i < n; i++)
		add_interval(db, i);
	CHECK_INT(db_exec(db, "INSERT INTO ship_cursors VALUES ('intervals', 100, 1, 100, 0),"
			      " ('event_counts', 100, 1, 200, 0), ('path_intervals', 100, 1, 100, 0),"
			      " ('hitm_lines', 150, 1, 4500, 0), ('vmstat_deltas', 150, 1, 6000, 0)"), ==, 0);
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	CHECK_INT(res.intervals, ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM intervals"), ==, n);
	/* one table's cursor alone is not enough */
	snprintf(sql, sizeof(sql), "INSERT INTO ship_cursors VALUES ('interval_rollup@600', %" PRId64
		 ", 1, 80, 0)", (int64_t)(T0 + 80 * STEP_NS));
	CHECK_INT(db_exec(db, sql), ==, 0);
	res = (struct retention_result){};
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	CHECK_INT(res.intervals, ==, 0);
	/* a cursor of another grain neither */
	snprintf(sql, sizeof(sql), "INSERT INTO ship_cursors VALUES ('path_rollup@60', %" PRId64
		 ", 1, 80, 0)", (int64_t)(T0 + 90 * STEP_NS));
	CHECK_INT(db_exec(db, sql), ==, 0);
	res = (struct retention_result){};
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	CHECK_INT(res.intervals, ==, 0);
	snprintf(sql, sizeof(sql), "INSERT INTO ship_cursors VALUES ('path_rollup@600', %" PRId64
		 ", 1, 80, 0)", (int64_t)(T0 + 90 * STEP_NS));
	CHECK_INT(db_exec(db, sql), ==, 0);
	res = (struct retention_result){};
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	CHECK_INT(res.intervals, ==, 80);
	CHECK_INT(q(db, "SELECT min(start_ns) FROM intervals"), ==, T0 + 80 * STEP_NS);
	CHECK_INT(res.unshipped, ==, 0);
	db_close(db);
}

static void test_ship_required(void)
{
	ship_required_run(true);
	ship_required_run(false);
}

/* SQLite's progress handler, called after every virtual machine instruction. */
static int count_op(void *arg)
{
	(*(uint64_t *)arg)++;
	return 0;
}

/*
 * The SQLite instructions one enforcement with nothing due executes, on a
 * database holding DAYS_KEPT days of intervals and HOURS_KEPT hours of
 * rollups under the shipped defaults (detail 14 days, intervals 35, rollups
 * 400), after a first enforcement has done what was due.
 */
static uint64_t steady_ops(int64_t days_kept, int64_t hours_kept)
{
	struct retention_policy pol = { 14 * DAY_NS, 35 * DAY_NS, 400 * DAY_NS, 0 };
	int64_t n = days_kept * DAY_NS / STEP_NS;
	int64_t now = T0 + n * STEP_NS;
	sqlite3 *db = fresh_db();
	uint64_t ops = 0;
	char sql[512];

	CHECK_INT(db_exec(db, "BEGIN"), ==, 0);
	for (int64_t i = 0; i < n; i++)
		add_interval(db, i);
	/* Rollups of the hours before the intervals, two events each. */
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE h(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM h WHERE k < %" PRId64 ")"
		 " INSERT INTO hourly_events(boot_id, hour_ns, event_id, count, seconds)"
		 " SELECT 1, %" PRId64 " - k * %" PRId64 ", e, 100, 3600 FROM h, (SELECT 1 AS e UNION ALL SELECT 2)",
		 hours_kept, (int64_t)T0, (int64_t)HOUR_NS);
	CHECK_INT(db_exec(db, sql), ==, 0);
	CHECK_INT(db_exec(db, "COMMIT"), ==, 0);
	CHECK_INT(retention_enforce(db, now, &pol, NULL), ==, 0);

	sqlite3_progress_handler(db, 1, count_op, &ops);
	CHECK_INT(retention_enforce(db, now + STEP_NS / 2, &pol, NULL), ==, 0);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	db_close(db);
	return ops;
}

/*
 * The SQLite instructions of one enforcement at steady state, when the
 * interval just recorded pushes the oldest one out (rolled up and
 * deleted) and the oldest kept stays in the same hour, with `objects`
 * learned mm_structs alive.
 */
static uint64_t rollup_ops(int64_t objects)
{
	struct retention_policy pol = { 1 * DAY_NS, 2 * DAY_NS, 400 * DAY_NS, 0 };
	int64_t n = 3 * DAY_NS / STEP_NS;	/* a whole number of hours */
	int64_t now = T0 + n * STEP_NS;
	sqlite3 *db = fresh_db();
	uint64_t ops = 0;
	char sql[512];

	CHECK_INT(db_exec(db, "BEGIN"), ==, 0);
	for (int64_t i = 0; i < n; i++)
		add_interval(db, i);
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE o(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM o WHERE k < %" PRId64 ")"
		 " INSERT INTO mm_objects(boot_id, addr, tgid, comm, learned_from, first_seen_ns, last_seen_ns)"
		 " SELECT 1, k * 4096, k, 'c', 'fork', %" PRId64 ", %" PRId64 " FROM o",
		 objects, (int64_t)T0, now);
	CHECK_INT(db_exec(db, sql), ==, 0);
	CHECK_INT(db_exec(db, "COMMIT"), ==, 0);
	CHECK_INT(retention_enforce(db, now, &pol, NULL), ==, 0);
	CHECK_INT(q(db, "SELECT min(start_ns) % 3600000000000 FROM intervals"), ==, 0);

	add_interval(db, n);
	sqlite3_progress_handler(db, 1, count_op, &ops);
	CHECK_INT(retention_enforce(db, now + STEP_NS, &pol, NULL), ==, 0);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	/* one interval went: the oldest kept is 15 minutes later */
	snprintf(sql, sizeof(sql), "SELECT min(start_ns) - %" PRId64 " FROM intervals", (int64_t)(now - 2 * DAY_NS));
	CHECK_INT(q(db, sql), ==, STEP_NS);
	CHECK_INT(q(db, "SELECT count(*) FROM mm_objects"), ==, objects);
	db_close(db);
	return ops;
}

/*
 * Enforcement runs after every interval, for the life of the host: with
 * nothing due, its work must not grow with the history it keeps. Counted
 * in SQLite instructions, not time: a day against ten days of intervals and
 * 380 days of rollups, where scanning them would take 10 and 380 times
 * the work.
 */
static void test_steady_cost(void)
{
	uint64_t day = steady_ops(1, 24), month = steady_ops(10, 380 * 24);

	printf("  SQLite instructions of an enforcement with nothing due: %" PRIu64
	       " with 1 day kept, %" PRIu64 " with 10 days and 380 days of rollups\n", day, month);
	CHECK(day > 0);
	CHECK(month <= day + day / 2);
}

/*
 * Learned objects that died before the oldest interval kept go, when the
 * oldest interval kept moves into another hour: kept an hour longer at
 * most, never pruned while an interval they could explain is kept.
 */
static void test_prune_hourly(void)
{
	struct retention_policy pol = { 1 * DAY_NS, 2 * DAY_NS, 400 * DAY_NS, 0 };
	int64_t n = 3 * DAY_NS / STEP_NS, now = T0 + n * STEP_NS, oldest = now - 2 * DAY_NS;
	sqlite3 *db = fresh_db();
	char sql[512];

	for (int64_t i = 0; i < n; i++)
		add_interval(db, i);
	/* 10 dead on the first day, 5 dying a minute after the oldest kept
	 * once the first day is gone, 5 alive */
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE o(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM o WHERE k < 20)"
		 " INSERT INTO mm_objects(boot_id, addr, tgid, comm, learned_from, first_seen_ns,"
		 " last_seen_ns, free_ns) SELECT 1, k * 4096, k, 'c', 'fork', %" PRId64 ","
		 " CASE WHEN k <= 10 THEN %" PRId64 " WHEN k <= 15 THEN %" PRId64 " ELSE %" PRId64 " END,"
		 " CASE WHEN k <= 10 THEN %" PRId64 " WHEN k <= 15 THEN %" PRId64 " END FROM o",
		 (int64_t)T0, (int64_t)(T0 + 60 * NSEC_PER_SEC), (int64_t)(oldest + 60 * NSEC_PER_SEC), now,
		 (int64_t)(T0 + 60 * NSEC_PER_SEC), (int64_t)(oldest + 60 * NSEC_PER_SEC));
	CHECK_INT(db_exec(db, sql), ==, 0);
	CHECK_INT(retention_enforce(db, now, &pol, NULL), ==, 0);
	CHECK_INT(q(db, "SELECT min(start_ns) FROM intervals"), ==, oldest);
	CHECK_INT(q(db, "SELECT count(*) FROM mm_objects"), ==, 10);
	/* Three more intervals: the oldest kept moves on within its hour, past
	 * the five that died; they stay until it leaves the hour. */
	for (int64_t k = 1; k <= 4; k++) {
		add_interval(db, n + k - 1);
		CHECK_INT(retention_enforce(db, now + k * STEP_NS, &pol, NULL), ==, 0);
		CHECK_INT(q(db, "SELECT min(start_ns) FROM intervals"), ==, oldest + k * STEP_NS);
		CHECK_INT(q(db, "SELECT count(*) FROM mm_objects"), ==, k < 4 ? 10 : 5);
	}
	db_close(db);
}

/*
 * Past the raw retention, every interval recorded pushes one out, so the
 * rollup runs after every interval. Pruning the learned objects that died
 * before the oldest interval kept reads all of them (hundreds of thousands
 * on a host that forks a lot): once an hour is enough, not every time.
 */
/*
 * Over the size budget the dead learned objects go first, before any
 * detail or interval: 20000 processes that exited before the oldest
 * interval (a host forking hard) would otherwise push out the intervals
 * while they wait for the hourly prune. The living stay.
 */
static void test_size_dead_objects(void)
{
	struct retention_policy pol = { 0 };
	struct retention_result res = {};
	int64_t n = 20, now = T0 + n * STEP_NS;
	sqlite3 *db = fresh_db();
	uint64_t size = 0;
	char sql[512];

	for (int64_t i = 0; i < n; i++)
		add_interval(db, i);
	CHECK_INT(db_size_bytes(db, &size), ==, 0);
	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE o(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM o WHERE k < 20005)"
		 " INSERT INTO mm_objects(boot_id, addr, tgid, comm, learned_from, first_seen_ns,"
		 " last_seen_ns, free_ns) SELECT 1, k * 4096, k, 'a-longish-comm', 'fork', %" PRId64 ","
		 " CASE WHEN k <= 20000 THEN %" PRId64 " ELSE %" PRId64 " END,"
		 " CASE WHEN k <= 20000 THEN %" PRId64 " END FROM o",
		 (int64_t)(T0 - HOUR_NS), (int64_t)(T0 - 1), now, (int64_t)(T0 - 1));
	CHECK_INT(db_exec(db, sql), ==, 0);
	pol.max_bytes = size + (64 << 10);
	CHECK_INT(retention_enforce(db, now, &pol, &res), ==, 0);
	CHECK_INT(res.objects, ==, 20000);
	CHECK_INT(q(db, "SELECT count(*) FROM mm_objects"), ==, 5);
	CHECK_INT(q(db, "SELECT count(*) FROM intervals"), ==, n);
	CHECK_INT(q(db, "SELECT count(*) FROM intervals WHERE detail_dropped"), ==, 0);
	CHECK_INT(res.bytes_after, <=, pol.max_bytes);
	db_close(db);
}

static void test_rollup_cost(void)
{
	uint64_t few = rollup_ops(100), many = rollup_ops(20000);

	printf("  SQLite instructions of a rollup of one interval: %" PRIu64 " with 100 learned"
	       " mm_structs, %" PRIu64 " with 20000\n", few, many);
	CHECK(few > 0);
	CHECK(many <= few + few / 2);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	snprintf(path, sizeof(path), "/tmp/mmhitm-test-retention-%d.db", getpid());
	RUN(test_age);
	RUN(test_size);
	RUN(test_ship_required);
	RUN(test_ship_required_rollup);
	RUN(test_steady_cost);
	RUN(test_rollup_cost);
	RUN(test_prune_hourly);
	RUN(test_size_dead_objects);
	unlink(path);
	return test_exit();
}
