/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_ANALYZER_FIXTURE_H
#define MMHITM_ANALYZER_FIXTURE_H

/*
 * A database with one live boot of Debian's 6.12.117 cloud kernel: its real
 * BTF layouts (tests/unit/fixtures/btf-layouts-6.12.117-cloud.sql), a
 * vmemmap at the usual x86_64 base, and whatever a test inserts on top.
 * Included by test-objects.c and test-analyze.c only.
 */

#include <unistd.h>

#include "db.h"
#include "util.h"

#define FIX_VMEMMAP	0xffffea0000000000ULL
#define FIX_MM		0xffff888104a3c000ULL	/* a learned mm_struct */
#define FIX_LOCK	0xffff8881003c3050ULL	/* a contended lock: an lru_lock */
#define FIX_T0		1700000000000000000LL	/* ns, the first interval's start */
#define FIX_SEC		1000000000LL

static char fix_path[96];

static void fix_unlink_now(void)
{
	char p[128];

	unlink(fix_path);
	snprintf(p, sizeof(p), "%s-wal", fix_path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", fix_path);
	unlink(p);
}

static void fix_unlink(void)
{
	if (!getenv("MMHITM_TEST_KEEP"))	/* to look at it: mmhitm top --db ... */
		fix_unlink_now();
}

static int fix_exec_file(sqlite3 *db, const char *rel)
{
	_cleanup_free_ char *sql = NULL;
	const char *top = getenv("TOP");
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", top ? top : ".", rel);
	if (read_file(path, &sql) < 0) {
		fprintf(stderr, "cannot read %s (run from the repository root)\n", path);
		return -1;
	}
	return db_exec(db, sql);
}

/* Statements fix_db()'s connection caches, as mmhitmd's does (0: none). */
static size_t fix_stmt_cache;

/* Creates the DB with hosts/boots row 1 and the layouts. */
static sqlite3 *fix_db(const char *name)
{
	sqlite3 *db = NULL;

	snprintf(fix_path, sizeof(fix_path), "/tmp/mmhitm-%s-%d.db", name, getpid());
	fix_unlink_now();
	if (db_open(fix_path, 0, &db) < 0)
		return NULL;
	if (fix_stmt_cache && db_cache_statements(db, fix_stmt_cache) < 0) {
		db_close(db);
		return NULL;
	}
	if (db_exec(db, "INSERT INTO hosts(host_id, machine_id, hostname) VALUES (1, 'mid', 'fleet-01');"
		    "INSERT INTO boots(boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
		    " kernel_release, kernel_version, kernel_build_id, arch, nr_cpus_online,"
		    " nr_cpus_possible, cache_line_size, page_size, pmu_kind, lru_gen)"
		    " VALUES (1, 1, 'b-1', 1700000000000000000, 1700000100000000000,"
		    " '6.12.117+deb12-cloud-amd64', '#1 SMP', 'abc', 'x86_64', 4, 4, 64, 4096,"
		    " 'intel-pebs', 'on')") < 0 ||
	    fix_exec_file(db, "tests/unit/fixtures/btf-layouts-6.12.117-cloud.sql") < 0) {
		db_close(db);
		return NULL;
	}
	return db;
}

#endif
