// SPDX-License-Identifier: GPL-2.0
/*
 * The whole report over small databases made here, so the reading, the
 * statistics and the three writers also run under ASan and UBSan: four
 * hosts, two of which roll onto a kernel carrying P1 that halves its rate.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "patchmap.h"
#include "report.h"
#include "test.h"
#include "util.h"

#define T0 (1741564800LL * NSEC_PER_SEC)	/* 2025-03-10 */
#define IVL (600 * NSEC_PER_SEC)
#define HOUR (3600 * NSEC_PER_SEC)

static char dbs[4][64];

static void exec(sqlite3 *db, const char *sql)
{
	CHECK_INT(db_exec(db, sql), ==, 0);
}

static void make_host(int n, bool rolls, const char *hostname)
{
	_cleanup_finalize_ sqlite3_stmt *iv = NULL, *pi = NULL, *bt = NULL;
	int64_t roll = T0 + 24 * HOUR + n * HOUR, id = 0;
	sqlite3 *db = NULL;
	char sql[256];

	snprintf(dbs[n], sizeof(dbs[n]), "/tmp/mmhitm-test-report-%d-%d.db", (int)getpid(), n);
	unlink(dbs[n]);
	CHECK_INT(db_open(dbs[n], 0, &db), ==, 0);
	if (!db)
		return;
	exec(db, "BEGIN");
	CHECK_INT(db_prepare(db, &bt, "INSERT INTO hosts (host_id, machine_id, hostname) VALUES (1, ?1, ?2)"), ==, 0);
	snprintf(sql, sizeof(sql), "machine-%d", n);
	sqlite3_bind_text(bt, 1, sql, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(bt, 2, hostname, -1, SQLITE_STATIC);
	CHECK_INT(db_step_done(db, bt), ==, 0);
	db_finalize(bt);
	bt = NULL;
	CHECK_INT(db_prepare(db, &bt,
		"INSERT INTO boots (boot_id, host_id, boot_uuid, boot_time_ns, first_seen_ns, last_seen_ns,"
		" kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size, page_size,"
		" pmu_kind, lru_gen) VALUES (?1, 1, ?2, ?3, ?3, ?4, ?5, '#1', 'x86_64', 8, 64, 4096,"
		" 'intel-pebs', 'on')"), ==, 0);
	for (int b = 1; b <= (rolls ? 2 : 1); b++) {
		sqlite3_reset(bt);
		sqlite3_bind_int(bt, 1, b);
		sqlite3_bind_text(bt, 2, b == 1 ? "boot-a" : "boot-b", -1, SQLITE_STATIC);
		sqlite3_bind_int64(bt, 3, b == 1 ? T0 - HOUR : roll);
		sqlite3_bind_int64(bt, 4, b == 1 && rolls ? roll - 60 * NSEC_PER_SEC : T0 + 48 * HOUR);
		sqlite3_bind_text(bt, 5, b == 1 ? "6.1.0-old" : "6.12.0-fixed", -1, SQLITE_STATIC);
		CHECK_INT(db_step_done(db, bt), ==, 0);
	}

	CHECK_INT(db_prepare(db, &iv, "INSERT INTO intervals (interval_id, boot_id, start_ns, end_ns,"
				      " events_lost) VALUES (?1, ?2, ?3, ?4, ?5)"), ==, 0);
	CHECK_INT(db_prepare(db, &pi, "INSERT INTO path_intervals (interval_id, path, lcl_hitm, rmt_hitm,"
				      " peer, samples, work) VALUES (?1, ?2, ?3, ?4, 0, ?3, ?5)"), ==, 0);
	for (int64_t t = T0 - HOUR + 30 * NSEC_PER_SEC; t + IVL < T0 + 48 * HOUR; t += IVL) {
		int boot = rolls && t >= roll ? 2 : 1;

		if (rolls && t + IVL > roll - 60 * NSEC_PER_SEC && t < roll)
			continue;	/* rebooting */
		id++;
		sqlite3_reset(iv);
		sqlite3_bind_int64(iv, 1, id);
		sqlite3_bind_int(iv, 2, boot);
		sqlite3_bind_int64(iv, 3, t);
		sqlite3_bind_int64(iv, 4, t + IVL);
		sqlite3_bind_int(iv, 5, id == 7 ? 3 : 0);
		CHECK_INT(db_step_done(db, iv), ==, 0);
		for (int p = 0; p < 4; p++) {
			/* Deterministic noise around 100 HITM per 1000 units. */
			int64_t hitm = 90 + (id * 7919 + p * 104729 + n * 13) % 21;
			char path[3] = { 'P', (char)('1' + p), 0 };

			if (p == 0 && boot == 2)
				hitm /= 2;
			sqlite3_reset(pi);
			sqlite3_bind_int64(pi, 1, id);
			sqlite3_bind_text(pi, 2, path, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(pi, 3, hitm);
			sqlite3_bind_int64(pi, 4, hitm / 3);
			sqlite3_bind_double(pi, 5, 1000);
			CHECK_INT(db_step_done(db, pi), ==, 0);
		}
	}
	exec(db, "INSERT INTO analysis_state (boot_id, last_interval_id, rules_digest, analyzed_ns)"
		 " SELECT boot_id, max(interval_id), 'test', 0 FROM intervals GROUP BY boot_id");
	exec(db, "COMMIT");
	db_finalize(iv);
	db_finalize(pi);
	db_finalize(bt);
	iv = pi = bt = NULL;
	db_close(db);
}

static char *render(const struct report *r, int (*writer)(const struct report *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return NULL;
	ret = writer(r, f);
	fclose(f);
	CHECK_INT(ret, ==, 0);
	return buf;
}

static void test_report(void)
{
	static const char rules[] = "lacks all release 6.1.*\ncarries P1 release 6.12.*\n";
	const char *argv[4] = { dbs[0], dbs[1], dbs[2], dbs[3] };
	struct patch_map *map = patch_map_new();
	struct report_options o;
	struct report *r;
	char *html, *json, *text;

	make_host(0, true, "rolls-a");
	make_host(1, true, "rolls-<b>b</b>");
	make_host(2, false, "steady-a");
	make_host(3, false, "steady-b");
	CHECK_INT(patch_map_parse(map, rules, strlen(rules), "test"), ==, 0);

	report_options_init(&o);
	o.since_ns = T0;
	o.until_ns = T0 + 48 * HOUR;
	o.min_hosts = 2;
	o.min_intervals = 20;
	o.replicates = 500;
	o.patches = map;
	o.patches_origin = "test";
	r = report_new(&o);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_INT(report_run(r, argv, 4), ==, 0);

	html = render(r, report_write_html);
	json = render(r, report_write_json);
	text = render(r, report_write_text);
	CHECK(html && strstr(html, "rolls-&lt;b&gt;b&lt;/b&gt;"));
	CHECK(html && !strstr(html, "<b>b</b>"));
	CHECK(html && strstr(html, "<section id=\"path-P1\""));
	CHECK(json && strstr(json, "\"verdict\":\"improved\""));
	CHECK(json && strstr(json, "rolls-\\u003cb\\u003eb"));
	/* P1 halves: improved by about 50 %; P2..P4 did not gain a patch. */
	CHECK(text && strstr(text, "P1   improved             -50."));
	CHECK(text && strstr(text, "P2   insufficient data"));
	if (text && !strstr(text, "P1   improved             -50."))
		fputs(text, stderr);
	free(html);
	free(json);
	free(text);
	report_free(r);
	patch_map_free(map);
	for (int i = 0; i < 4; i++) {
		char p[300];

		unlink(dbs[i]);
		snprintf(p, sizeof(p), "%s-wal", dbs[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", dbs[i]);
		unlink(p);
	}
	report_free(NULL);
}

/* Hosts that never changed kernel: nothing to compare, and no undefined
 * behaviour on the way (UBSan: qsort() of the NULL list of changes). */
static void test_no_kernel_change(void)
{
	const char *argv[2] = { dbs[0], dbs[1] };
	struct report_options o;
	struct report *r;
	char *json, *text;

	make_host(0, false, "steady-a");
	make_host(1, false, "steady-b");
	report_options_init(&o);
	o.since_ns = T0;
	o.until_ns = T0 + 48 * HOUR;
	o.replicates = 100;
	r = report_new(&o);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_INT(report_run(r, argv, 2), ==, 0);
	json = render(r, report_write_json);
	text = render(r, report_write_text);
	CHECK(json && !strstr(json, "\"verdict\":\"improved\""));
	CHECK(text && strstr(text, "P1   insufficient data"));
	if (text && !strstr(text, "P1   insufficient data"))
		fputs(text, stderr);
	free(json);
	free(text);
	report_free(r);
	for (int i = 0; i < 2; i++) {
		char p[300];

		unlink(dbs[i]);
		snprintf(p, sizeof(p), "%s-wal", dbs[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", dbs[i]);
		unlink(p);
	}
}

/*
 * Rates in another unit are not the path's: the two rolled hosts' boot on
 * the fixed kernel counts P1's work as all switches (no same-mm estimate),
 * so the halving of their HITM per switch is no change of the rate the
 * report states per same-mm switch, and no verdict may rest on it.
 */
static void test_other_unit(void)
{
	static const char rules[] = "lacks all release 6.1.*\ncarries P1 release 6.12.*\n";
	const char *argv[4] = { dbs[0], dbs[1], dbs[2], dbs[3] };
	struct patch_map *map = patch_map_new();
	struct report_options o;
	struct report *r;
	char *text, p[300];

	make_host(0, true, "rolls-a");
	make_host(1, true, "rolls-b");
	make_host(2, false, "steady-a");
	make_host(3, false, "steady-b");
	for (int i = 0; i < 4; i++) {
		sqlite3 *db = NULL;

		CHECK_INT(db_open(dbs[i], 0, &db), ==, 0);
		exec(db, "UPDATE path_intervals SET work_source = CASE WHEN interval_id IN"
			 " (SELECT interval_id FROM intervals WHERE boot_id = 2) THEN 'sched:sched_switch'"
			 " ELSE 'derived:same_mm_switches' END WHERE path = 'P1'");
		db_close(db);
	}
	CHECK_INT(patch_map_parse(map, rules, strlen(rules), "test"), ==, 0);
	report_options_init(&o);
	o.since_ns = T0;
	o.until_ns = T0 + 48 * HOUR;
	o.min_hosts = 2;
	o.min_intervals = 20;
	o.replicates = 100;
	o.patches = map;
	o.patches_origin = "test";
	r = report_new(&o);
	CHECK(r != NULL);
	if (r && report_run(r, argv, 4) == 0) {
		text = render(r, report_write_text);
		CHECK(text && strstr(text, "P1   insufficient data"));
		if (text && !strstr(text, "P1   insufficient data"))
			fputs(text, stderr);
		free(text);
	}
	report_free(r);
	patch_map_free(map);
	for (int i = 0; i < 4; i++) {
		unlink(dbs[i]);
		snprintf(p, sizeof(p), "%s-wal", dbs[i]);
		unlink(p);
		snprintf(p, sizeof(p), "%s-shm", dbs[i]);
		unlink(p);
	}
}

int main(void)
{
	log_set_max_level(LOG_WARNING);
	RUN(test_report);
	RUN(test_no_kernel_change);
	RUN(test_other_unit);
	return test_exit();
}
