// SPDX-License-Identifier: GPL-2.0
/* Schema migration: v0 -> current, idempotence, refusal of a newer DB. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "test.h"
#include "util.h"

static char path[64];

static void fresh_path(void)
{
	snprintf(path, sizeof(path), "/tmp/mmhitm-test-db-%d.db", getpid());
	unlink(path);
	for (const char *sfx = "-wal"; sfx; sfx = sfx[1] == 'w' ? "-shm" : NULL) {
		char p[80];

		snprintf(p, sizeof(p), "%s%s", path, sfx);
		unlink(p);
	}
}

static int64_t q(sqlite3 *db, const char *sql)
{
	int64_t v = -1;

	CHECK_INT(db_query_int(db, &v, sql), ==, 0);
	return v;
}

static void test_create_current(void)
{
	sqlite3 *db = NULL;
	unsigned int v = 0;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK(db_user_version(db, &v) == 0 && v == db_schema_version());
	CHECK(db_schema_version() >= 1);
	/* The views are the public surface: each must exist and run. */
	for (const char *const *view = (const char *const[]){
		"boot_summary", "interval_summary", "event_rates", "vmstat_changes",
		"event_availability", "mm_structs", "vmemmap_calibration",
		"lock_addresses", "lru_gen_aging", "field_layouts", "hitm_lines",
		"path_rates", "top_lines", "path_grades", NULL }; *view; view++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", *view);
		CHECK_INT(q(db, sql), ==, 0);
	}
	CHECK_INT(q(db, "PRAGMA foreign_keys"), ==, 1);
	db_close(db);

	/* Reopening is a no-op migration and keeps data. */
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(db_exec(db, "INSERT INTO hosts(machine_id, hostname) VALUES ('m', 'h')"), ==, 0);
	db_close(db);
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM hosts"), ==, 1);
	db_close(db);
	unlink(path);
}

static void file_digest(const char *p, char *buf, size_t len)
{
	char cmd[512];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "md5sum < %s; ls %s-wal %s-shm %s-journal 2>/dev/null", p, p, p, p);
	f = popen(cmd, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	memset(buf, 0, len);
	CHECK(fread(buf, 1, len - 1, f) > 0);
	pclose(f);
}

/* Another program's SQLite file (user_version 0 and its own tables, or its
 * own application_id) is refused by readers and writers, byte for byte
 * untouched, no journal created. */
static void test_refuse_foreign(void)
{
	static const char *const setups[] = {
		"CREATE TABLE unrelated(x); INSERT INTO unrelated VALUES (7)",
		"PRAGMA application_id = 42; CREATE TABLE hosts(x)",
		/* an id of 0 and a user_version, but not our tables */
		"PRAGMA user_version = 3; CREATE TABLE settings(k, v)",
	};

	for (size_t i = 0; i < ARRAY_SIZE(setups); i++) {
		sqlite3 *raw = NULL, *db = NULL;
		char before[256], after[256];

		fresh_path();
		CHECK_INT(sqlite3_open(path, &raw), ==, SQLITE_OK);
		CHECK_INT(sqlite3_exec(raw, setups[i], NULL, NULL, NULL), ==, SQLITE_OK);
		sqlite3_close(raw);
		file_digest(path, before, sizeof(before));

		CHECK_INT(db_open(path, 0, &db), ==, -EMEDIUMTYPE);
		CHECK_INT(db_open(path, DB_NO_CREATE, &db), ==, -EMEDIUMTYPE);
		CHECK_INT(db_open(path, DB_READONLY | DB_NO_CREATE, &db), ==, -EMEDIUMTYPE);
		CHECK(db == NULL);
		file_digest(path, after, sizeof(after));
		CHECK_STR(after, before);
	}
	unlink(path);
}

/* An empty file is ours to create (the daemon's start on a touched path),
 * but not a database a reader can show. */
static void test_empty_file(void)
{
	sqlite3 *db = NULL;
	FILE *f;

	fresh_path();
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK_INT(db_open(path, DB_READONLY | DB_NO_CREATE, &db), ==, -EMEDIUMTYPE);
	CHECK_INT(db_open(path, DB_NO_CREATE, &db), ==, 0);
	CHECK_INT(q(db, "PRAGMA application_id"), ==, DB_APPLICATION_ID);
	CHECK_INT(q(db, "PRAGMA user_version"), ==, db_schema_version());
	db_close(db);
	unlink(path);
}

/* A fleet database from before application_id: read as it is, and given
 * the id by the next writer. */
static void test_database_without_id(void)
{
	sqlite3 *raw = NULL, *db = NULL;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(q(db, "PRAGMA application_id"), ==, DB_APPLICATION_ID);
	db_close(db);
	CHECK_INT(sqlite3_open(path, &raw), ==, SQLITE_OK);
	CHECK_INT(sqlite3_exec(raw, "PRAGMA application_id = 0", NULL, NULL, NULL), ==, SQLITE_OK);
	sqlite3_close(raw);

	CHECK_INT(db_open(path, DB_READONLY | DB_NO_CREATE, &db), ==, 0);
	CHECK_INT(q(db, "PRAGMA application_id"), ==, 0);
	/* a reader cannot write */
	CHECK(db_exec(db, "INSERT INTO hosts(machine_id, hostname) VALUES ('m', 'h')") < 0);
	db_close(db);
	CHECK_INT(db_open(path, DB_NO_CREATE, &db), ==, 0);
	CHECK_INT(q(db, "PRAGMA application_id"), ==, DB_APPLICATION_ID);
	db_close(db);
	unlink(path);
}

/* The daemon's lock as readers see it (the daemon holds LOCK_EX). */
static void test_daemon_active(void)
{
	char lock[96];
	int fd;

	fresh_path();
	snprintf(lock, sizeof(lock), "%s.lock", path);
	unlink(lock);
	CHECK_INT(db_daemon_active(path), ==, 0);		/* no lock file */
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	CHECK_INT(db_daemon_active(path), ==, 0);		/* nobody holds it */
	CHECK_INT(flock(fd, LOCK_EX), ==, 0);
	CHECK_INT(db_daemon_active(path), ==, 1);
	CHECK_INT(flock(fd, LOCK_UN), ==, 0);
	CHECK_INT(db_daemon_active(path), ==, 0);
	close(fd);
	unlink(lock);
}

/* Migrations are applied in order and each from the version before: apply
 * the first one by hand, then let db_open finish the job. */
static void test_migrate_stepwise(void)
{
	sqlite3 *raw = NULL, *db = NULL;
	char sql[64];

	fresh_path();
	CHECK_INT(sqlite3_open(path, &raw), ==, SQLITE_OK);
	CHECK_INT(sqlite3_exec(raw, db_migrations[0].sql, NULL, NULL, NULL), ==, SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %u", db_migrations[0].version);
	CHECK_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), ==, SQLITE_OK);
	CHECK_INT(sqlite3_exec(raw, "INSERT INTO hosts(machine_id, hostname) VALUES ('m1', 'old')",
			       NULL, NULL, NULL), ==, SQLITE_OK);
	sqlite3_close(raw);

	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(q(db, "PRAGMA user_version"), ==, db_schema_version());
	CHECK_INT(q(db, "SELECT count(*) FROM hosts WHERE hostname = 'old'"), ==, 1);
	db_close(db);
	unlink(path);
}

static void test_refuse_newer(void)
{
	sqlite3 *raw = NULL, *db = NULL;
	char sql[64];

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	db_close(db);
	CHECK_INT(sqlite3_open(path, &raw), ==, SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %u", db_schema_version() + 1);
	CHECK_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), ==, SQLITE_OK);
	sqlite3_close(raw);

	db = NULL;
	CHECK_INT(db_open(path, 0, &db), ==, -EPROTONOSUPPORT);
	CHECK(db == NULL);
	CHECK_INT(db_open(path, DB_READONLY, &db), ==, -EPROTONOSUPPORT);

	/* ... and left it alone. */
	CHECK_INT(sqlite3_open(path, &raw), ==, SQLITE_OK);
	{
		int64_t v = 0;

		CHECK_INT(db_query_int(raw, &v, "PRAGMA user_version"), ==, 0);
		CHECK_INT(v, ==, db_schema_version() + 1);
	}
	sqlite3_close(raw);
	unlink(path);
}

static void test_not_a_database(void)
{
	sqlite3 *db = NULL;
	FILE *f;

	fresh_path();
	f = fopen(path, "w");
	fputs("this is not an SQLite file, but it is long enough to have a header.........", f);
	fclose(f);
	/* Each failure is an errno of the documented kind and one reason,
	 * said by the caller, not here (nothing above debug). */
	CHECK_INT(db_open(path, 0, &db), ==, -EMEDIUMTYPE);
	CHECK_STR(db_open_error(), "is not an mmhitm database (not SQLite)");
	CHECK_INT(db_open(path, DB_READONLY | DB_NO_CREATE, &db), ==, -EMEDIUMTYPE);
	CHECK_INT(db_refuse_foreign(path), ==, -EMEDIUMTYPE);
	CHECK_INT(db_open("/nonexistent/dir/x.db", 0, &db), <, 0);
	CHECK_INT(db_open("/tmp/mmhitm-test-does-not-exist.db", DB_NO_CREATE, &db), ==, -ENOENT);
	CHECK_STR(db_open_error(), "no such file");
	CHECK_INT(db_open("/tmp", DB_READONLY | DB_NO_CREATE, &db), ==, -EISDIR);
	CHECK_STR(db_open_error(), "is a directory");
	CHECK_INT(db_refuse_foreign("/tmp"), ==, -EISDIR);
	unlink(path);
}

static void test_name_ids(void)
{
	sqlite3 *db = NULL;
	int64_t a = 0, b = 0, c = 0;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(db_name_id(db, "event_names", "sched:sched_switch", &a), ==, 0);
	CHECK_INT(db_name_id(db, "event_names", "tlb:tlb_flush", &b), ==, 0);
	CHECK_INT(db_name_id(db, "event_names", "sched:sched_switch", &c), ==, 0);
	CHECK(a != b);
	CHECK_INT(a, ==, c);
	db_close(db);
	unlink(path);
}

/* A failed statement says nothing above debug and keeps its reason; db_end() closes the transaction either way. */
static void test_statement_errors(void)
{
	sqlite3 *db = NULL;
	unsigned int said;
	int r;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	log_set_max_level(LOG_INFO);
	said = log_errors_said();
	r = db_exec(db, "INSERT INTO no_such_table VALUES (1)");
	CHECK_INT(r, ==, -EIO);
	CHECK_INT(log_errors_said(), ==, said);
	CHECK_STR(db_error(r), "the database refused a statement: no such table: no_such_table");
	CHECK_STR(db_error(-ENOSPC), strerror(ENOSPC));	/* not that failure's */
	log_set_max_level(LOG_CRIT);

	CHECK_INT(db_begin(db), ==, 0);
	CHECK_INT(db_exec(db, "INSERT INTO event_names(name) VALUES ('kept')"), ==, 0);
	CHECK_INT(db_end(db, 0), ==, 0);
	CHECK_INT(db_begin(db), ==, 0);
	CHECK_INT(db_exec(db, "INSERT INTO event_names(name) VALUES ('undone')"), ==, 0);
	CHECK_INT(db_end(db, -EIO), ==, -EIO);
	CHECK_INT(sqlite3_get_autocommit(db), !=, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM event_names WHERE name IN ('kept', 'undone')"), ==, 1);
	CHECK_INT(q(db, "SELECT count(*) FROM event_names WHERE name = 'kept'"), ==, 1);
	db_close(db);
	unlink(path);
}

/* A list of statements is prepared in order up to the first that fails. */
static void test_prepare_all(void)
{
	sqlite3_stmt *a = NULL, *b = NULL, *c = NULL;
	const struct db_stmt_sql good[] = {
		{ &a, "SELECT 1" },
		{ &b, "SELECT count(*) FROM event_names" },
	};
	const struct db_stmt_sql bad[] = {
		{ &a, "SELECT 2" },
		{ &b, "SELECT * FROM no_such_table" },
		{ &c, "SELECT 3" },
	};
	sqlite3 *db = NULL;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(db_prepare_all(db, good, 2), ==, 0);
	CHECK_INT(a != NULL && b != NULL, ==, 1);
	CHECK_STR(sqlite3_sql(b), "SELECT count(*) FROM event_names");
	db_finalize(a);
	db_finalize(b);
	a = b = NULL;
	CHECK_INT(db_prepare_all(db, bad, 3), ==, -EIO);
	CHECK_INT(a != NULL, ==, 1);
	CHECK_INT(b == NULL && c == NULL, ==, 1);
	db_finalize(a);
	db_close(db);
	unlink(path);
}

/*
 * A read loop whose step fails keeps its reason in the user's words, as the
 * statement helpers do, and says nothing above debug: an interrupted scan,
 * then one that meets a page of garbage after the open succeeded.
 */
static void test_step_failed(void)
{
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int64_t page_size, pages, rows = 0;
	unsigned int said;
	char junk[65536];
	int fd, r, rc;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(db_exec(db, "CREATE TABLE t (x);"
			  " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)"
			  " INSERT INTO t SELECT randomblob(100) FROM n"), ==, 0);
	CHECK_INT(db_prepare(db, &st, "SELECT x FROM t"), ==, 0);
	CHECK_INT(sqlite3_step(st), ==, SQLITE_ROW);
	sqlite3_interrupt(db);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	log_set_max_level(LOG_INFO);
	said = log_errors_said();
	r = db_step_failed(st, rc);
	CHECK_INT(r, ==, -EINTR);
	CHECK_STR(db_error(r), "interrupted");
	CHECK_INT(log_errors_said(), ==, said);
	log_set_max_level(LOG_CRIT);
	db_finalize(st);
	st = NULL;
	page_size = q(db, "PRAGMA page_size");
	pages = q(db, "PRAGMA page_count");
	db_close(db);

	/* The file's last page, the table's last leaf, overwritten: the open
	 * reads only the schema, the scan reads rows, then the garbage. */
	CHECK(page_size > 0 && page_size <= (int64_t)sizeof(junk));
	memset(junk, 0xff, sizeof(junk));
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(pwrite(fd, junk, (size_t)page_size, (pages - 1) * page_size), ==, page_size);
	close(fd);
	CHECK_INT(db_open(path, DB_READONLY | DB_NO_CREATE, &db), ==, 0);
	CHECK_INT(db_prepare(db, &st, "SELECT x FROM t"), ==, 0);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		rows++;
	CHECK(rows > 0 && rows < 2000);
	sqlite3_reset(st);	/* as a loop that cleans up first does */
	log_set_max_level(LOG_INFO);
	said = log_errors_said();
	r = db_step_failed(st, rc);
	CHECK_INT(r, ==, -EUCLEAN);
	CHECK_STR(db_error(r), "the database file is damaged");
	CHECK_INT(log_errors_said(), ==, said);
	log_set_max_level(LOG_CRIT);
	db_finalize(st);
	db_close(db);
	fresh_path();	/* a reader of a WAL file leaves its -wal and -shm */
}

/*
 * The statement cache: the same SQL is one statement again once given
 * back, reset and unbound; a second user at once gets one of its own; the
 * least recently used free one makes room, a lent one never; SQL of
 * several statements still runs; a schema change and a half-read result
 * leave nothing stale; closing finalizes them all.
 */
static void test_statement_cache(void)
{
	sqlite3_stmt *a = NULL, *b = NULL, *held[4] = {};
	struct db_cache_stats cs;
	sqlite3 *db = NULL;
	int r;

	fresh_path();
	CHECK_INT(db_open(path, 0, &db), ==, 0);
	CHECK_INT(db_cache_statements(db, 4), ==, 0);
	CHECK_INT(db_exec(db, "CREATE TABLE t(x)"), ==, 0);
	CHECK_INT(db_exec(db, "INSERT INTO t VALUES (1), (2), (3)"), ==, 0);

	/* reused, given back reset and unbound */
	CHECK_INT(db_prepare(db, &a, "SELECT ?1 + 1"), ==, 0);
	sqlite3_bind_int(a, 1, 41);
	CHECK_INT(sqlite3_step(a), ==, SQLITE_ROW);
	CHECK_INT(sqlite3_column_int(a, 0), ==, 42);
	db_finalize(a);
	CHECK_INT(db_prepare(db, &b, "SELECT ?1 + 1"), ==, 0);
	CHECK(a == b);
	CHECK_INT(sqlite3_step(b), ==, SQLITE_ROW);
	CHECK_INT(sqlite3_column_type(b, 0), ==, SQLITE_NULL);	/* NULL + 1 */

	/* a second user at once: its own statement, finalized after use */
	CHECK_INT(db_prepare(db, &a, "SELECT ?1 + 1"), ==, 0);
	CHECK(a != b);
	db_finalize(a);
	db_finalize(b);
	db_cache_stats(db, &cs);
	CHECK_INT(cs.lent, ==, 0);
	CHECK_INT(cs.hits, ==, 1);

	/* a half-read result given back holds no lock: the table can go */
	CHECK_INT(db_prepare(db, &a, "SELECT x FROM t"), ==, 0);
	CHECK_INT(sqlite3_step(a), ==, SQLITE_ROW);
	db_finalize(a);
	CHECK_INT(db_exec(db, "ALTER TABLE t ADD COLUMN y DEFAULT 7"), ==, 0);
	CHECK_INT(db_prepare(db, &a, "SELECT * FROM t"), ==, 0);
	db_finalize(a);
	CHECK_INT(db_exec(db, "ALTER TABLE t ADD COLUMN z DEFAULT 9"), ==, 0);
	CHECK_INT(db_prepare(db, &a, "SELECT * FROM t"), ==, 0);	/* the cached one, recompiled */
	CHECK_INT(sqlite3_step(a), ==, SQLITE_ROW);
	CHECK_INT(sqlite3_column_count(a), ==, 3);
	CHECK_INT(sqlite3_column_int(a, 2), ==, 9);
	db_finalize(a);

	/* room: four held and lent, a fifth is prepared but not kept */
	for (int i = 0; i < 4; i++) {
		char sql[32];

		snprintf(sql, sizeof(sql), "SELECT %d", i);
		CHECK_INT(db_prepare(db, &held[i], sql), ==, 0);
	}
	CHECK_INT(db_prepare(db, &a, "SELECT 4"), ==, 0);
	db_cache_stats(db, &cs);
	CHECK_INT(cs.held, ==, 4);
	CHECK_INT(cs.lent, ==, 4);
	db_finalize(a);
	for (int i = 0; i < 4; i++)
		db_finalize(held[i]);
	/* free now: the least recently used ("SELECT 0") makes room */
	CHECK_INT(db_prepare(db, &a, "SELECT 4"), ==, 0);
	db_finalize(a);
	db_cache_stats(db, &cs);
	r = (int)cs.misses;
	CHECK_INT(db_prepare(db, &a, "SELECT 3"), ==, 0);
	db_finalize(a);
	CHECK_INT(db_prepare(db, &a, "SELECT 0"), ==, 0);
	db_finalize(a);
	db_cache_stats(db, &cs);
	CHECK_INT((int)cs.misses, ==, r + 1);

	/* several statements: db_exec() runs them all, each time */
	for (int i = 0; i < 2; i++)
		CHECK_INT(db_exec(db, "INSERT INTO t(x) VALUES (10); INSERT INTO t(x) VALUES (11);"), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM t WHERE x >= 10"), ==, 4);
	/* one statement and a comment: one statement, kept */
	CHECK_INT(db_prepare(db, &a, "SELECT 5; -- the answer\n"), ==, 0);
	CHECK(a != NULL);
	db_finalize(a);
	db_cache_stats(db, &cs);
	r = (int)cs.hits;
	CHECK_INT(db_exec(db, "SELECT 5; -- the answer\n"), ==, 0);
	db_cache_stats(db, &cs);
	CHECK_INT((int)cs.hits, ==, r + 1);
	r = db_prepare(db, &a, "SELECT 1; SELECT 2");
	CHECK_INT(r, ==, -EINVAL);
	CHECK(a == NULL);
	CHECK(strstr(db_error(r), "more than one") != NULL);

	/* transactions through cached BEGIN and COMMIT, again and again */
	for (int i = 0; i < 3; i++) {
		CHECK_INT(db_begin(db), ==, 0);
		CHECK_INT(db_exec(db, "INSERT INTO t(x) VALUES (20)"), ==, 0);
		CHECK_INT(db_end(db, i == 1 ? -EIO : 0), ==, i == 1 ? -EIO : 0);
	}
	CHECK_INT(q(db, "SELECT count(*) FROM t WHERE x = 20"), ==, 2);

	/* dropped while lent: its holder finalizes it, once (ASan's to see) */
	CHECK_INT(db_prepare(db, &a, "SELECT 7"), ==, 0);
	CHECK_INT(db_cache_statements(db, 0), ==, 0);
	CHECK_INT(sqlite3_step(a), ==, SQLITE_ROW);
	db_finalize(a);
	CHECK(sqlite3_next_stmt(db, NULL) == NULL);
	CHECK_INT(db_cache_statements(db, 4), ==, 0);

	/* dropped: every statement finalized, none left on the connection */
	CHECK_INT(db_cache_statements(db, 0), ==, 0);
	CHECK(sqlite3_next_stmt(db, NULL) == NULL);
	db_cache_stats(db, &cs);
	CHECK_INT(cs.held, ==, 0);
	CHECK_INT(db_cache_statements(db, 8), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM t"), ==, 9);
	db_close(db);
	unlink(path);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);	/* the failures we provoke log errors */
	RUN(test_create_current);
	RUN(test_refuse_foreign);
	RUN(test_empty_file);
	RUN(test_database_without_id);
	RUN(test_daemon_active);
	RUN(test_migrate_stepwise);
	RUN(test_refuse_newer);
	RUN(test_not_a_database);
	RUN(test_name_ids);
	RUN(test_statement_errors);
	RUN(test_step_failed);
	RUN(test_prepare_all);
	RUN(test_statement_cache);
	return test_exit();
}
