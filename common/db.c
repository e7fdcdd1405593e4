// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "util.h"

/* How long a writer waits for another one (ms): the daemon's interval
 * transaction against `mmhitm analyze` on the same file. */
#define DB_BUSY_TIMEOUT_MS 10000

unsigned int db_schema_version(void)
{
	return db_migrations_count ? db_migrations[db_migrations_count - 1].version : 0;
}

int db_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_ROW:
	case SQLITE_DONE:	return 0;
	case SQLITE_NOMEM:	return -ENOMEM;
	case SQLITE_FULL:	return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:	return -EBUSY;
	case SQLITE_READONLY:	return -EROFS;
	case SQLITE_PERM:
	case SQLITE_AUTH:	return -EACCES;
	case SQLITE_CANTOPEN:	return -ENOENT;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:	return -EBADMSG;
	case SQLITE_CONSTRAINT:	return -EEXIST;
	case SQLITE_TOOBIG:	return -E2BIG;
	case SQLITE_INTERRUPT:	return -EINTR;
	default:		return -EIO;
	}
}

int db_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK) {
		int r = db_errno(rc);

		log_error("SQL failed: %s", err ? err : sqlite3_errstr(rc));
		sqlite3_free(err);
		return r;
	}
	return 0;
}

int db_prepare(sqlite3 *db, sqlite3_stmt **ret, const char *sql)
{
	int rc = sqlite3_prepare_v2(db, sql, -1, ret, NULL);

	if (rc != SQLITE_OK)
		return log_error_errno(db_errno(rc), "Failed to prepare \"%.60s\": %s",
				       sql, sqlite3_errmsg(db));
	return 0;
}

int db_step_done(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	int r = 0;

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = log_error_errno(db_errno(rc), "Failed to run \"%.60s\": %s",
				    sqlite3_sql(st), sqlite3_errmsg(db));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r;
}

int db_begin(sqlite3 *db)
{
	/* IMMEDIATE: take the write lock now, so a busy writer is seen here
	 * and not half way through the interval. */
	return db_exec(db, "BEGIN IMMEDIATE");
}

int db_commit(sqlite3 *db)
{
	return db_exec(db, "COMMIT");
}

void db_rollback(sqlite3 *db)
{
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

int db_query_int(sqlite3 *db, int64_t *ret, const char *sql)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		return -ENODATA;
	if (rc != SQLITE_ROW)
		return log_error_errno(db_errno(rc), "Failed to run \"%.60s\": %s",
				       sql, sqlite3_errmsg(db));
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

int db_user_version(sqlite3 *db, unsigned int *ret)
{
	int64_t v;
	int r = db_query_int(db, &v, "PRAGMA user_version");

	if (r < 0)
		return r;
	*ret = (unsigned int)v;
	return 0;
}

int db_migrate(sqlite3 *db)
{
	unsigned int have, want = db_schema_version();
	char sql[64];
	int r;

	r = db_user_version(db, &have);
	if (r < 0)
		return r;
	if (have > want)
		goto too_new;
	if (have == want)
		return 0;

	r = db_begin(db);
	if (r < 0)
		return r;
	/* Someone else may have migrated while we waited for the lock. */
	r = db_user_version(db, &have);
	if (r < 0)
		goto fail;
	if (have > want) {
		db_rollback(db);
		goto too_new;
	}
	for (unsigned int i = 0; i < db_migrations_count; i++) {
		const struct db_migration *m = &db_migrations[i];

		if (m->version <= have)
			continue;
		r = db_exec(db, m->sql);
		if (r < 0) {
			log_error("Schema migration %s failed", m->name);
			goto fail;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %u", want);
	r = db_exec(db, sql);
	if (r < 0)
		goto fail;
	r = db_commit(db);
	if (r < 0)
		goto fail;
	if (have)
		log_info("Migrated database schema from version %u to %u", have, want);
	return 0;

fail:
	db_rollback(db);
	return r;
too_new:
	return log_error_errno(EPROTONOSUPPORT,
			       "Database schema version %u is newer than this mmhitm understands (%u); "
			       "refusing to touch it, upgrade mmhitm", have, want);
}

int db_open(const char *path, unsigned int flags, sqlite3 **ret_db)
{
	sqlite3 *db = NULL;
	int oflags, rc, r;
	unsigned int have;

	if (flags & DB_READONLY)
		oflags = SQLITE_OPEN_READONLY;
	else if (flags & DB_NO_CREATE)
		oflags = SQLITE_OPEN_READWRITE;
	else
		oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

	rc = sqlite3_open_v2(path, &db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		r = log_error_errno(db_errno(rc), "Failed to open database %s: %s", path,
				    db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return r;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, DB_BUSY_TIMEOUT_MS);

	/* The first read tells whether this is a database at all. */
	r = db_user_version(db, &have);
	if (r < 0) {
		log_error("%s is not a usable mmhitm database", path);
		goto fail;
	}

	if (flags & DB_READONLY) {
		if (have != db_schema_version()) {
			r = log_error_errno(have > db_schema_version() ? EPROTONOSUPPORT : EROFS,
					    "Database %s has schema version %u, this mmhitm reads %u%s",
					    path, have, db_schema_version(),
					    have > db_schema_version() ? "; upgrade mmhitm" :
					    "; open it once read-write to migrate it");
			goto fail;
		}
	} else {
		int64_t tables = 0;

		/* A new file: freed pages go back to the file system in steps
		 * (retention), which must be chosen before the first table. */
		if (have == 0 && db_query_int(db, &tables, "SELECT count(*) FROM sqlite_master") == 0 &&
		    tables == 0) {
			r = db_exec(db, "PRAGMA auto_vacuum = INCREMENTAL");
			if (r < 0)
				goto fail;
		}
		/* WAL: readers (mmhitm analyze, users' sqlite3) never block
		 * the daemon, and a killed writer loses only its open txn. */
		r = db_exec(db, "PRAGMA journal_mode = WAL");
		if (r < 0)
			goto fail;
		r = db_exec(db, "PRAGMA synchronous = NORMAL");
		if (r < 0)
			goto fail;
		/* Keep the WAL file small after checkpoints (bytes). */
		r = db_exec(db, "PRAGMA journal_size_limit = 4194304");
		if (r < 0)
			goto fail;
	}
	r = db_exec(db, "PRAGMA foreign_keys = ON");
	if (r < 0)
		goto fail;
	if (!(flags & DB_READONLY)) {
		r = db_migrate(db);
		if (r < 0)
			goto fail;
	}
	*ret_db = db;
	return 0;
fail:
	sqlite3_close(db);
	return r;
}

void db_close(sqlite3 *db)
{
	if (!db)
		return;
	if (sqlite3_close(db) != SQLITE_OK)
		log_warning("Closing database: %s, ignoring", sqlite3_errmsg(db));
}

int db_name_id(sqlite3 *db, const char *table, const char *name, int64_t *ret_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	char sql[160];
	int r, rc;

	/* table is one of ours, never user input. */
	snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO %s(name) VALUES (?1)", table);
	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	r = db_step_done(db, st);
	if (r < 0)
		return r;
	sqlite3_finalize(st);
	st = NULL;

	snprintf(sql, sizeof(sql), "SELECT rowid FROM %s WHERE name = ?1", table);
	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return log_error_errno(db_errno(rc) ?: -EIO, "Failed to look up %s in %s: %s",
				       name, table, sqlite3_errmsg(db));
	*ret_id = sqlite3_column_int64(st, 0);
	return 0;
}
