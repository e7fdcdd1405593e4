// SPDX-License-Identifier: GPL-2.0
/* mmhitm status: what a database holds, per boot. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "db.h"
#include "escape.h"
#include "log.h"
#include "util.h"

void cmd_status_help(void)
{
	printf("Usage: mmhitm status [--db PATH]\n\n"
	       "Prints the database's schema version, and per boot: the host, kernel,\n"
	       "PMU, LRU_GEN state, the recorded intervals and the totals of every\n"
	       "counted event and learned object.\n");
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

#define COL(st, i, null) col(st, i, null, t[i], sizeof(t[i]))

static int print_boot(sqlite3 *db, sqlite3_stmt *b)
{
	_cleanup_finalize_ sqlite3_stmt *ev = NULL;
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
		       "SELECT n.name, sum(c.count) FROM event_counts c "
		       "JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id) "
		       "WHERE i.boot_id = ?1 GROUP BY n.name ORDER BY n.name");
	if (r < 0)
		return r;
	sqlite3_bind_int64(ev, 1, boot_id);
	while (sqlite3_step(ev) == SQLITE_ROW)
		printf("    %-40s %15" PRId64 "\n", col(ev, 0, "?", t[0], sizeof(t[0])),
		       (int64_t)sqlite3_column_int64(ev, 1));
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db",   required_argument, NULL, 'd' },
		{ "help", no_argument,       NULL, 'h' },
		{}
	};
	_cleanup_finalize_ sqlite3_stmt *b = NULL;
	const char *path = default_db_path();
	sqlite3 *db = NULL;
	int c, r, rc;

	while ((c = cli_getopt(argc, argv, "d:h", opts, "mmhitm status")) != -1) {
		switch (c) {
		case 'd': path = optarg; break;
		case 'h': cmd_status_help(); return 0;
		default: return CMD_USAGE;
		}
	}
	if (optind < argc)
		path = argv[optind];

	/* a reader: never migrates, writes or creates a file */
	r = db_open(path, DB_READONLY | DB_NO_CREATE, &db);
	if (r < 0)
		return r;

	printf("%s: schema version %u\n", path, db_schema_version());
	r = db_prepare(db, &b,
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
		" FROM boots b JOIN hosts h USING (host_id) ORDER BY b.first_seen_ns");
	if (r < 0)
		goto out;
	while ((rc = sqlite3_step(b)) == SQLITE_ROW) {
		r = print_boot(db, b);
		if (r < 0)
			goto out;
	}
	if (rc != SQLITE_DONE)
		r = log_error_errno(db_errno(rc), "Failed to read boots: %s", sqlite3_errmsg(db));
out:
	sqlite3_finalize(b);
	b = NULL;
	db_close(db);
	return r;
}
