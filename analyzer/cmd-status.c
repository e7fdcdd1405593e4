// SPDX-License-Identifier: GPL-2.0
/* mmhitm status: what a database holds, per boot. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "csvw.h"
#include "db.h"
#include "escape.h"
#include "jsonw.h"
#include "log.h"
#include "util.h"

void cmd_status_help(void)
{
	printf("Usage: mmhitm status [--db PATH] [--json|--csv] [--check]\n\n"
	       "Prints the database's schema version, and per boot: the host, kernel,\n"
	       "PMU, LRU_GEN state, the recorded intervals and the totals of every\n"
	       "counted event and learned object.\n\n"
	       "  --json    the same as one JSON object (schema: docs/json.md)\n"
	       "  --csv     one row per boot, a header row first (the per-event totals\n"
	       "            are --json's)\n"
	       "  --check   for monitoring: one line, and exit %d when mmhitmd is not\n"
	       "            recording into this database, its last interval ended more\n"
	       "            than two intervals ago, or its last hour lost events\n",
	       CMD_UNHEALTHY);
}

/*
 * Column i of st for a terminal: every string here came from a host or a
 * perf.data file (an imported hostname), and an escape sequence in one
 * must not reach the terminal: control characters become '?'.
 */
static const char *col(sqlite3_stmt *st, int i, const char *null, char *buf, size_t size)
{
	const char *s = (const char *)sqlite3_column_text(st, i);

	text_safe(buf, size, s ? s : null);
	return buf;
}

/* A boot's total of every counted event. */
static const char events_sql[] =
	"SELECT n.name, sum(c.count) FROM event_counts c"
	" JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id)"
	" WHERE i.boot_id = ?1 GROUP BY n.name ORDER BY n.name";

/*
 * Counts scaled rather than counted: per event, the mean share of the
 * time its counter ran (event_counts.run_share) over the boot's last
 * MULTIPLEX_INTERVALS intervals, where it was below 1 in any of them.
 */
#define MULTIPLEX_INTERVALS 10
static const char multiplexed_sql[] =
	"SELECT n.name, avg(c.run_share) FROM event_counts c JOIN event_names n USING (event_id)"
	" WHERE c.interval_id IN (SELECT interval_id FROM intervals WHERE boot_id = ?1"
	"  ORDER BY end_ns DESC LIMIT ?2)"
	" GROUP BY n.name HAVING min(c.run_share) < 1 ORDER BY n.name";

static int multiplexed_prepare(sqlite3 *db, sqlite3_stmt **ret, int64_t boot_id)
{
	int r = db_prepare(db, ret, multiplexed_sql);

	if (r < 0)
		return r;
	sqlite3_bind_int64(*ret, 1, boot_id);
	sqlite3_bind_int(*ret, 2, MULTIPLEX_INTERVALS);
	return 0;
}

#define COL(st, i, null) col(st, i, null, t[i], sizeof(t[i]))

static int print_boot(sqlite3 *db, sqlite3_stmt *b)
{
	_cleanup_finalize_ sqlite3_stmt *ev = NULL, *mx = NULL;
	int64_t boot_id = sqlite3_column_int64(b, 0);
	char t[15][256];
	int r;

	printf("boot %" PRId64 ": %s  kernel %s (%s)\n", boot_id,
	       COL(b, 1, "?"), COL(b, 2, "?"), COL(b, 3, "no build-id"));
	printf("  boot id %s, %d CPUs, source %s\n", COL(b, 4, "?"),
	       sqlite3_column_int(b, 5), COL(b, 6, "?"));
	printf("  PMU %s%s%s, LRU_GEN %s, BTF %s\n", COL(b, 7, "?"),
	       sqlite3_column_type(b, 8) != SQLITE_NULL ? ": " : "", COL(b, 8, ""),
	       COL(b, 9, "?"), COL(b, 10, "?"));
	printf("  %d intervals, %.0f s from %s to %s, %d lost events\n",
	       sqlite3_column_int(b, 11), sqlite3_column_double(b, 12),
	       COL(b, 13, "-"), COL(b, 14, "-"), sqlite3_column_int(b, 15));
	printf("  learned: %d mm_struct (%d live), %d page pairs, %d lock addresses\n",
	       sqlite3_column_int(b, 16), sqlite3_column_int(b, 17),
	       sqlite3_column_int(b, 18), sqlite3_column_int(b, 19));

	r = db_prepare(db, &ev,
		       events_sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(ev, 1, boot_id);
	while (sqlite3_step(ev) == SQLITE_ROW)
		printf("    %-40s %15" PRId64 "\n", col(ev, 0, "?", t[0], sizeof(t[0])),
		       (int64_t)sqlite3_column_int64(ev, 1));

	r = multiplexed_prepare(db, &mx, boot_id);
	if (r < 0)
		return r;
	while (sqlite3_step(mx) == SQLITE_ROW)
		printf("  counters multiplexed: %s ran %.0f %% of the time (last %d intervals; "
		       "its counts are scaled)\n", col(mx, 0, "?", t[0], sizeof(t[0])),
		       100 * sqlite3_column_double(mx, 1), MULTIPLEX_INTERVALS);
	return 0;
}

/* The columns print_boot() reads, per boot, oldest first. */
static const char boots_sql[] =
	"SELECT b.boot_id, h.hostname, b.kernel_release, b.kernel_build_id, b.boot_uuid,"
	" b.nr_cpus_online, b.source, b.pmu_kind, b.pmu_detail, b.lru_gen, b.btf,"
	" (SELECT count(*) FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT coalesce(sum(end_ns - start_ns), 0) / 1e9 FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT strftime('%Y-%m-%dT%H:%M:%SZ', min(start_ns) / 1000000000, 'unixepoch') FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT strftime('%Y-%m-%dT%H:%M:%SZ', max(end_ns) / 1000000000, 'unixepoch') FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT coalesce(sum(events_lost), 0) FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT count(*) FROM mm_objects m WHERE m.boot_id = b.boot_id),"
	" (SELECT count(*) FROM mm_objects m WHERE m.boot_id = b.boot_id AND free_ns IS NULL),"
	" (SELECT count(*) FROM page_pairs p WHERE p.boot_id = b.boot_id),"
	" (SELECT count(*) FROM lock_objects l WHERE l.boot_id = b.boot_id)"
	" FROM boots b JOIN hosts h USING (host_id) ORDER BY b.first_seen_ns";

/* The names of boots_sql's columns, for JSON and CSV. */
static const char *const boot_keys[] = {
	"boot_id", "hostname", "kernel_release", "kernel_build_id", "boot_uuid",
	"cpus", "source", "pmu", "pmu_detail", "lru_gen", "btf", "intervals",
	"seconds", "first", "last", "events_lost", "mm_structs", "mm_structs_live",
	"page_pairs", "lock_addresses",
};

/* One row per boot, boots_sql's columns (the per-event totals are JSON's). */
static int csv_boot(sqlite3_stmt *b, struct csvw *w)
{
	for (int i = 0; i < (int)ARRAY_SIZE(boot_keys); i++) {
		switch (sqlite3_column_type(b, i)) {
		case SQLITE_INTEGER:
			csvw_int(w, sqlite3_column_int64(b, i));
			break;
		case SQLITE_FLOAT:
			csvw_num(w, sqlite3_column_double(b, i));
			break;
		default:
			csvw_str(w, (const char *)sqlite3_column_text(b, i));
		}
	}
	csvw_end(w);
	return 0;
}

static int json_boot(sqlite3 *db, sqlite3_stmt *b, struct jsonw *w)
{
	_cleanup_finalize_ sqlite3_stmt *ev = NULL, *mx = NULL;
	const char *const *keys = boot_keys;
	int r;

	jsonw_object(w, NULL);
	for (int i = 0; i < (int)ARRAY_SIZE(boot_keys); i++) {
		switch (sqlite3_column_type(b, i)) {
		case SQLITE_NULL:
			jsonw_null(w, keys[i]);
			break;
		case SQLITE_INTEGER:
			jsonw_int(w, keys[i], sqlite3_column_int64(b, i));
			break;
		case SQLITE_FLOAT:
			jsonw_num(w, keys[i], sqlite3_column_double(b, i));
			break;
		default:
			jsonw_str(w, keys[i], (const char *)sqlite3_column_text(b, i));
		}
	}
	r = db_prepare(db, &ev,
		       events_sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(ev, 1, sqlite3_column_int64(b, 0));
	jsonw_object(w, "events");
	while (sqlite3_step(ev) == SQLITE_ROW)
		jsonw_int(w, (const char *)sqlite3_column_text(ev, 0), sqlite3_column_int64(ev, 1));
	jsonw_end(w);
	r = multiplexed_prepare(db, &mx, sqlite3_column_int64(b, 0));
	if (r < 0)
		return r;
	jsonw_object(w, "multiplexed");
	while (sqlite3_step(mx) == SQLITE_ROW)
		jsonw_num(w, (const char *)sqlite3_column_text(mx, 0), sqlite3_column_double(mx, 1));
	jsonw_end(w);
	jsonw_end(w);
	return 0;
}

/*
 * --check: the newest live boot's last interval and its health. The
 * interval length is the longest of the last five rows (a partial row at
 * a restart is shorter).
 */
static int check(sqlite3 *db, const char *path)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t now = now_ns(CLOCK_REALTIME), last_end, len, lost;
	int active = db_daemon_active(path);
	const char *host;
	int r;

	r = db_prepare(db, &st,
		"WITH b AS (SELECT boot_id, host_id FROM boots WHERE source = 'live'"
		"           ORDER BY last_seen_ns DESC LIMIT 1),"
		" last AS (SELECT * FROM intervals WHERE boot_id = (SELECT boot_id FROM b)"
		"          ORDER BY end_ns DESC LIMIT 5)"
		" SELECT (SELECT hostname FROM hosts WHERE host_id = (SELECT host_id FROM b)),"
		"  (SELECT max(end_ns) FROM last), (SELECT max(end_ns - start_ns) FROM last),"
		"  (SELECT coalesce(sum(events_lost), 0) FROM intervals"
		"   WHERE boot_id = (SELECT boot_id FROM b) AND end_ns > ?1)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, now - 3600 * NSEC_PER_SEC);
	if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 1) == SQLITE_NULL) {
		printf("UNHEALTHY: %s holds no interval recorded by mmhitmd\n", path);
		return CMD_UNHEALTHY;
	}
	host = (const char *)sqlite3_column_text(st, 0);
	last_end = sqlite3_column_int64(st, 1);
	len = sqlite3_column_int64(st, 2);
	lost = sqlite3_column_int64(st, 3);
	if (active <= 0) {
		printf("UNHEALTHY: mmhitmd is not recording into %s (no daemon holds %s.lock); "
		       "its last interval ended %.0f s ago\n", path, path, (now - last_end) / 1e9);
		return CMD_UNHEALTHY;
	}
	if (now - last_end > 2 * len) {
		printf("UNHEALTHY: the last interval of %s ended %.0f s ago, over two intervals "
		       "(%.0f s each): mmhitmd runs but does not write\n", host ?: "?",
		       (now - last_end) / 1e9, len / 1e9);
		return CMD_UNHEALTHY;
	}
	if (lost) {
		printf("UNHEALTHY: %s lost %" PRId64 " learning events in the last hour "
		       "(raise buffer_size_kb)\n", host ?: "?", lost);
		return CMD_UNHEALTHY;
	}
	printf("OK: mmhitmd records %s into %s, last interval ended %.0f s ago\n", host ?: "?", path,
	       (now - last_end) / 1e9);
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db",    required_argument, NULL, 'd' },
		{ "json",  no_argument,       NULL, 'j' },
		{ "csv",   no_argument,       NULL, 'v' },
		{ "check", no_argument,       NULL, 'c' },
		{ "help",  no_argument,       NULL, 'h' },
		{}
	};
	_cleanup_finalize_ sqlite3_stmt *b = NULL;
	const char *path = default_db_path();
	bool json = false, csv = false, health = false;
	struct csvw cw;
	struct jsonw w;
	sqlite3 *db = NULL;
	int c, r, rc;

	while ((c = cli_getopt(argc, argv, "d:h", opts, "mmhitm status")) != -1) {
		switch (c) {
		case 'd': path = optarg; break;
		case 'j': json = true; break;
		case 'v': csv = true; break;
		case 'c': health = true; break;
		case 'h': cmd_status_help(); return 0;
		default: return CMD_USAGE;
		}
	}
	if (optind < argc)
		path = argv[optind];

	/* a reader: never migrates, writes or creates a file */
	r = db_open(path, DB_READONLY | DB_NO_CREATE, &db);
	if (r < 0) {
		if (health)
			printf("UNHEALTHY: %s cannot be read\n", path);
		return health ? CMD_UNHEALTHY : r;
	}
	if (health) {
		r = check(db, path);
		db_close(db);
		return r;
	}

	if (json && csv) {
		db_close(db);
		log_error("--json or --csv, not both");
		return CMD_USAGE;
	}
	if (csv) {
		csvw_init(&cw, stdout);
		for (size_t k = 0; k < ARRAY_SIZE(boot_keys); k++)
			csvw_str(&cw, boot_keys[k]);
		csvw_end(&cw);
	} else if (json) {
		jsonw_init(&w, stdout);
		jsonw_object(&w, NULL);
		jsonw_str(&w, "database", path);
		jsonw_uint(&w, "schema_version", db_schema_version());
		jsonw_array(&w, "boots");
	} else {
		printf("%s: schema version %u\n", path, db_schema_version());
	}
	r = db_prepare(db, &b, boots_sql);
	if (r < 0)
		goto out;
	while ((rc = sqlite3_step(b)) == SQLITE_ROW) {
		r = csv ? csv_boot(b, &cw) : json ? json_boot(db, b, &w) : print_boot(db, b);
		if (r < 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		r = log_error_errno(db_errno(rc), "Failed to read boots: %s", sqlite3_errmsg(db));
	if (json) {
		jsonw_end(&w);
		jsonw_end(&w);
		if (jsonw_finish(&w) < 0 && r >= 0)
			r = log_error_errno(EIO, "Failed to write the JSON");
	}
out:
	sqlite3_finalize(b);
	b = NULL;
	db_close(db);
	return r;
}
