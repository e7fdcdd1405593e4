// SPDX-License-Identifier: GPL-2.0
/*
 * Interval accounting against the real kernel: counts of a syscall this
 * test makes land in the interval they happened in, a flush that can't be
 * written is folded into the next row (dropped_intervals, nothing lost),
 * intervals tile time, and the rows add up to the totals the metrics export.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "counters.h"
#include "db.h"
#include "events.h"
#include "learn.h"
#include "log.h"
#include "recorder.h"
#include "test.h"
#include "util.h"

#define EVENT "syscalls:sys_enter_getcpu"

static void getcpus(int n)
{
	unsigned int cpu, node;

	/* glibc's sched_getcpu() uses the vDSO: make real syscalls. */
	for (int i = 0; i < n; i++)
		syscall(SYS_getcpu, &cpu, &node, NULL);
}

int main(void)
{
	struct event_status_list status = {};
	struct learn_limits lim = { 16, 16 };
	struct boot_info boot;
	struct recorder *r = NULL;
	struct counters *c;
	struct learner *l;
	sqlite3 *db = NULL, *other = NULL;
	char path[64];
	int64_t boot_id = 0, v = 0, t0;
	const int64_t hour = 3600 * NSEC_PER_SEC;

	log_set_max_level(LOG_CRIT);
	if (geteuid() != 0)
		SKIP("needs root for system-wide perf counting of tracepoints");
	if (!tracefs_dir())
		SKIP("no tracefs");
	c = counters_new(true);
	if (!c || counters_add(c, EVENT, &status) < 0 || counters_count(c) != 1)
		SKIP("cannot count %s here (%s)", EVENT, status.n ? status.v[0].detail : "?");

	snprintf(path, sizeof(path), "/tmp/mmhitm-test-recorder-%d.db", getpid());
	unlink(path);
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(boot_info_collect(&boot), ==, 0);
	CHECK_INT(boot_store(db, &boot, now_ns(CLOCK_REALTIME), &boot_id), ==, 0);
	l = learner_new(&lim, &learn_proc_default);

	/* Hour-long intervals on a made-up clock from t0, a boundary. */
	t0 = (now_ns(CLOCK_REALTIME) / hour - 1) * hour;
	CHECK_INT(recorder_new(&(struct recorder_config){ .db = db, .boot_id = boot_id,
							  .interval_ns = hour, .counters = c,
							  .learner = l }, t0, &r), ==, 0);

	getcpus(1000);
	CHECK_INT(recorder_flush(r, t0 + hour / 2, false), ==, 0);

	/* Another writer holds the database: these flushes must fail, two
	 * attempts in one slot and one in the next... */
	CHECK_INT(sqlite3_open(path, &other), ==, SQLITE_OK);
	CHECK_INT(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), ==, SQLITE_OK);
	sqlite3_busy_timeout(db, 50);
	getcpus(500);
	CHECK_INT(recorder_flush(r, t0 + hour, false), ==, -EBUSY);
	CHECK_INT(recorder_flush(r, t0 + hour + hour / 2, false), ==, -EBUSY);
	CHECK_INT(recorder_flush(r, t0 + 2 * hour, false), ==, -EBUSY);
	sqlite3_exec(other, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(other);

	/* ... and the next one carries their counts: it spans three slots,
	 * two of which (t0 + 1h, t0 + 2h) had no row of their own. */
	getcpus(250);
	CHECK_INT(recorder_flush(r, t0 + 3 * hour, false), ==, 0);
	CHECK_INT(recorder_flush(r, t0 + 3 * hour + hour / 4, true), ==, 0);

	CHECK_INT(db_query_int(db, &v, "SELECT count(*) FROM intervals"), ==, 0);
	CHECK_INT(v, ==, 3);
	CHECK_INT(db_query_int(db, &v, "SELECT count FROM event_counts JOIN event_names USING (event_id)"
				       " WHERE name = '" EVENT "' AND interval_id = 1"), ==, 0);
	CHECK_INT(v, >=, 1000);
	CHECK_INT(db_query_int(db, &v, "SELECT count FROM event_counts WHERE interval_id = 2"), ==, 0);
	CHECK_INT(v, >=, 750);
	CHECK_INT(db_query_int(db, &v, "SELECT dropped_intervals FROM intervals WHERE interval_id = 2"), ==, 0);
	CHECK_INT(v, ==, 2);	/* missed slots, not the three failed attempts */
	CHECK_INT(db_query_int(db, &v, "SELECT sum(dropped_intervals) FROM intervals"), ==, 0);
	CHECK_INT(v, ==, 2);
	CHECK_INT((int64_t)recorder_totals(r)->dropped, ==, 2);
	CHECK_INT(db_query_int(db, &v, "SELECT count(*) FROM intervals a JOIN intervals b"
				       " ON b.interval_id = a.interval_id + 1 WHERE b.start_ns != a.end_ns"), ==, 0);
	CHECK_INT(v, ==, 0);
	CHECK_INT(db_query_int(db, &v, "SELECT group_concat(partial, '') FROM intervals"), ==, 0);
	/* Half an hour, three slots folded (not short), a quarter at stop. */
	CHECK_INT(v, ==, 101);
	/* the event's rows: the free counters (/proc/interrupts) have theirs */
	CHECK_INT(db_query_int(db, &v, "SELECT sum(count) FROM event_counts JOIN event_names"
				       " USING (event_id) WHERE name = '" EVENT "'"), ==, 0);
	CHECK_INT(v, ==, (int64_t)recorder_event_total(r, 0));
	CHECK_INT(v, >=, 1750);
	CHECK_INT(db_query_int(db, &v, "SELECT count(*) FROM intervals WHERE cpu_user_ns IS NULL"
				       " OR rss_kb <= 0 OR db_bytes <= 0 OR ctxt IS NULL"), ==, 0);
	CHECK_INT(v, ==, 0);

	recorder_free(r);
	learner_free(l);
	counters_free(c);
	event_status_list_done(&status);
	db_close(db);
	unlink(path);
	return test_exit();
}
