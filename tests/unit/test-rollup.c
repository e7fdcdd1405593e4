// SPDX-License-Identifier: GPL-2.0
/*
 * common/rollup.c on a database built here: which buckets are final
 * (the boot moved past them, or a later boot exists; every interval
 * analyzed), what they sum, and how a path's HITM and work pair up when a
 * window measured HITM in some intervals and work was counted in all.
 */
#include <math.h>
#include <stdarg.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "rollup.h"
#include "test.h"
#include "util.h"

#define MIN_NS ((int64_t)(60 * NSEC_PER_SEC))
#define GRAIN_NS ((int64_t)(600 * NSEC_PER_SEC))
#define T0 ((int64_t)(1800000000 * NSEC_PER_SEC))	/* a multiple of 10 minutes */
#define T1 ((int64_t)(T0 + 3600 * NSEC_PER_SEC))		/* the second boot */

static char path[64];

static int exec(sqlite3 *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int exec(sqlite3 *db, const char *fmt, ...)
{
	char sql[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	return db_exec(db, sql);
}

/*
 * Boot 1: 25 intervals of a minute from T0, all analyzed: buckets of 10,
 * 10 and 5 intervals, the last final only because boot 2 follows. P2's
 * work is counted in every interval, its HITM measured in intervals 0 and
 * 5 only (windows); bucket 2 has no HITM at all; bucket 3 has P1 HITM and
 * no P1 work. Boot 2: 15 intervals from T1, analysis done through its
 * 7th: nothing final.
 */
static sqlite3 *make_db(void)
{
	sqlite3 *db = NULL;
	int r = 0;

	unlink(path);
	if (db_open(path, 0, &db) < 0)
		return NULL;
	r |= db_exec(db, "PRAGMA synchronous = OFF");
	r |= db_exec(db, "INSERT INTO hosts(host_id, machine_id, hostname) VALUES (1, 'm', 'h')");
	for (int b = 1; b <= 2; b++)
		r |= exec(db, "INSERT INTO boots(boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
			  " kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size, page_size,"
			  " pmu_kind, lru_gen) VALUES (%d, 1, 'b%d', %" PRId64 ", %" PRId64 ", 'r', 'v',"
			  " 'x86_64', 2, 64, 4096, 'none', 'absent')", b, b, b == 1 ? T0 : T1,
			  b == 1 ? T0 + 25 * MIN_NS : T1 + 15 * MIN_NS);
	for (int i = 0; i < 25; i++) {
		int64_t s = T0 + i * MIN_NS;

		r |= exec(db, "INSERT INTO intervals(interval_id, boot_id, start_ns, end_ns, events_lost,"
			  " partial) VALUES (%d, 1, %" PRId64 ", %" PRId64 ", %d, %d)", i + 1, s, s + MIN_NS,
			  i, i == 24);
		r |= exec(db, "INSERT INTO sampling(interval_id, active_ns, lost) VALUES (%d, %" PRId64 ", 1)",
			  i + 1, MIN_NS / 4);
		if (i < 10)
			r |= exec(db, "INSERT INTO path_intervals(interval_id, path, lcl_hitm, rmt_hitm, peer,"
				  " samples, work) VALUES (%d, 'P2', %s, 5.0)", i + 1,
				  i == 0 || i == 5 ? "2, 1, 0, 9" : "NULL, NULL, NULL, NULL");
		else if (i < 20)
			r |= exec(db, "INSERT INTO path_intervals(interval_id, path, work) VALUES (%d, 'P2', 5.0)",
				  i + 1);
		else
			r |= exec(db, "INSERT INTO path_intervals(interval_id, path, lcl_hitm, rmt_hitm, peer,"
				  " samples) VALUES (%d, 'P1', 4, 0, 0, 4), (%d, 'other:mm_struct', 1, 1, 1, 3)",
				  i + 1, i + 1);
	}
	for (int i = 0; i < 15; i++) {
		int64_t s = T1 + i * MIN_NS;

		r |= exec(db, "INSERT INTO intervals(interval_id, boot_id, start_ns, end_ns)"
			  " VALUES (%d, 2, %" PRId64 ", %" PRId64 ")", 100 + i, s, s + MIN_NS);
	}
	r |= db_exec(db, "INSERT INTO analysis_state(boot_id, last_interval_id, rules_digest, analyzed_ns)"
			 " VALUES (1, 25, 'x', 0), (2, 106, 'x', 0)");
	if (r) {
		db_close(db);
		return NULL;
	}
	return db;
}

struct seen {
	struct rollup_bucket b[8];
	struct rollup_path p[8];
	char paths[8][32];
	char machine[8][16];	/* the strings live only during the callback */
	int nb, np;
};

static int bucket_cb(const struct rollup_bucket *b, void *arg)
{
	struct seen *s = arg;

	if (s->nb < 8) {
		s->b[s->nb] = *b;
		snprintf(s->machine[s->nb], sizeof(s->machine[0]), "%s", b->machine_id);
	}
	s->nb++;
	return 0;
}

static int path_cb(const struct rollup_path *p, void *arg)
{
	struct seen *s = arg;

	if (s->np < 8) {
		s->p[s->np] = *p;
		snprintf(s->paths[s->np], sizeof(s->paths[0]), "%s", p->path);
	}
	s->np++;
	return 0;
}

static const struct rollup_path *find(const struct seen *s, int64_t bucket, const char *name)
{
	for (int i = 0; i < s->np && i < 8; i++)
		if (s->p[i].bucket_ns == bucket && strcmp(s->paths[i], name) == 0)
			return &s->p[i];
	return NULL;
}

static void test_buckets(void)
{
	sqlite3 *db = make_db();
	struct rollup_query q = { .grain_ns = GRAIN_NS, .lo_ns = INT64_MIN, .hi_ns = INT64_MAX };
	struct seen s = {};
	int64_t pending = 0;

	CHECK(db != NULL);
	if (!db)
		return;
	CHECK_INT(rollup_buckets(db, &q, bucket_cb, &s), ==, 0);
	/* boot 1's three; boot 2's first is not analyzed, its second not past */
	CHECK_INT(s.nb, ==, 3);
	CHECK_INT(s.b[0].bucket_ns, ==, T0);
	CHECK_INT(s.b[0].intervals, ==, 10);
	CHECK_INT(s.b[0].events_lost, ==, 45);		/* 0 + ... + 9 */
	CHECK_INT(s.b[0].sampled, ==, 10);
	CHECK_INT(s.b[0].active_ns, ==, 10 * (MIN_NS / 4));
	CHECK_INT(s.b[0].samples_lost, ==, 10);
	CHECK_INT(s.b[0].start_ns, ==, T0);
	CHECK_INT(s.b[0].end_ns, ==, T0 + GRAIN_NS);
	CHECK_INT(s.b[1].intervals, ==, 10);
	CHECK_INT(s.b[2].bucket_ns, ==, T0 + 2 * GRAIN_NS);
	CHECK_INT(s.b[2].intervals, ==, 5);
	CHECK_INT(s.b[2].partial, ==, 1);
	CHECK_INT(s.b[2].not_analyzed, ==, 0);
	CHECK_STR(s.machine[2], "m");
	CHECK_INT(rollup_pending_from(db, GRAIN_NS, 0, &pending), ==, 0);
	CHECK_INT(pending, ==, T1);

	/* From a cursor, and a range on the first interval's start. */
	s = (struct seen){};
	q.from_ns = T0 + GRAIN_NS;
	CHECK_INT(rollup_buckets(db, &q, bucket_cb, &s), ==, 0);
	CHECK_INT(s.nb, ==, 2);
	s = (struct seen){};
	q = (struct rollup_query){ .grain_ns = GRAIN_NS, .lo_ns = T0 + 1, .hi_ns = T0 + 2 * GRAIN_NS + 1 };
	CHECK_INT(rollup_buckets(db, &q, bucket_cb, &s), ==, 0);
	CHECK_INT(s.nb, ==, 2);

	/* Boot 2 analyzed and past its first bucket: that one is final now. */
	CHECK_INT(db_exec(db, "UPDATE analysis_state SET last_interval_id = 114 WHERE boot_id = 2"), ==, 0);
	s = (struct seen){};
	q = (struct rollup_query){ .grain_ns = GRAIN_NS, .lo_ns = INT64_MIN, .hi_ns = INT64_MAX };
	CHECK_INT(rollup_buckets(db, &q, bucket_cb, &s), ==, 0);
	CHECK_INT(s.nb, ==, 4);
	CHECK_INT(rollup_pending_from(db, GRAIN_NS, 0, &pending), ==, 0);
	CHECK_INT(pending, ==, T1 + GRAIN_NS);
	db_close(db);
}

static void test_pairing(void)
{
	sqlite3 *db = make_db();
	struct rollup_query q = { .grain_ns = GRAIN_NS, .lo_ns = INT64_MIN, .hi_ns = INT64_MAX };
	const struct rollup_path *p;
	struct seen s = {};

	CHECK(db != NULL);
	if (!db)
		return;
	CHECK_INT(rollup_paths(db, &q, path_cb, &s), ==, 0);
	CHECK_INT(s.np, ==, 4);
	/* HITM in 2 of 10 intervals: HITM and work of those 2 only. */
	p = find(&s, T0, "P2");
	CHECK(p != NULL);
	if (p) {
		CHECK_INT(p->intervals, ==, 10);
		CHECK(p->has_hitm && p->has_work);
		CHECK_INT(p->hitm, ==, 6);
		CHECK(p->work == 10.0);
		CHECK(p->work_seconds == 120.0);
		CHECK_INT(p->samples, ==, 18);
	}
	/* No HITM: work of every interval, no rate. */
	p = find(&s, T0 + GRAIN_NS, "P2");
	CHECK(p != NULL);
	if (p) {
		CHECK(!p->has_hitm && p->has_work);
		CHECK(p->work == 50.0);
		CHECK(p->work_seconds == 600.0);
		CHECK(!p->has_samples);
	}
	/* HITM without work: idle, not a rate; other paths keep their HITM. */
	p = find(&s, T0 + 2 * GRAIN_NS, "P1");
	CHECK(p != NULL);
	if (p) {
		CHECK(p->has_hitm && !p->has_work);
		CHECK_INT(p->hitm, ==, 20);
		CHECK(p->work_seconds == 0);
	}
	p = find(&s, T0 + 2 * GRAIN_NS, "other:mm_struct");
	CHECK(p != NULL);
	if (p)
		CHECK_INT(p->hitm, ==, 15);
	db_close(db);
}

int main(void)
{
	log_set_max_level(LOG_ERR);
	snprintf(path, sizeof(path), "/tmp/mmhitm-test-rollup-%d.db", (int)getpid());
	RUN(test_buckets);
	RUN(test_pairing);
	unlink(path);
	return test_exit();
}
