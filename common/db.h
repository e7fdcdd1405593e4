/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_DB_H
#define MMHITM_DB_H

#include <sqlite3.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

/* One forward migration: applying sql moves the DB to user_version version. */
struct db_migration {
	unsigned int version;
	const char *name;
	const char *sql;
};

/* Generated from schema/NNN-*.sql, in order (see common/gen-schema.sh). */
extern const struct db_migration db_migrations[];
extern const unsigned int db_migrations_count;

/*
 * PRAGMA application_id of an mmhitm database: ASCII "MMHT". Set on
 * creation and migration; a file with another id, or without one and
 * without mmhitm's user_version and tables, is "not an mmhitm database".
 */
#define DB_APPLICATION_ID	0x4d4d4854u

enum {
	/* never write, never create files: SQLite URI mode=ro (immutable=1
	 * only when that fails and no daemon holds <path>.lock); an old
	 * schema is an error */
	DB_READONLY	= 1 << 0,
	DB_NO_CREATE	= 1 << 1,	/* the file must exist */
};

/* The schema version this binary writes. */
unsigned int db_schema_version(void);

/*
 * Opens (creating unless DB_NO_CREATE) the database at path, sets WAL mode,
 * the busy timeout and foreign keys, and migrates it forward to
 * db_schema_version(); only an empty file is made an mmhitm database.
 * Caller closes with db_close(). Nothing is logged above debug: on failure
 * db_open_error() says why, and the error is
 *   -ENOENT, -EISDIR, -EACCES	no input (missing, a directory, not readable,
 *				or not writable by a writer);
 *   -EMEDIUMTYPE		not mmhitm's (not SQLite, no application_id,
 *				empty when read);
 *   -EPROTONOSUPPORT, -EROFS	a schema newer than this binary, or older and
 *				opened read-only;
 *   other -errno		SQLite's (locked, I/O).
 */
int db_open(const char *path, unsigned int flags, sqlite3 **ret_db);

/*
 * Before a writer creates anything beside it (a lock file): -EISDIR for a
 * directory, -EMEDIUMTYPE when path is an existing file that is not an
 * mmhitm database (not SQLite, or someone else's SQLite); 0 for a missing or empty file, an mmhitm
 * database, or one it cannot read now. Says why as db_open() does.
 */
int db_refuse_foreign(const char *path);

/*
 * Why this thread's last db_open() or db_refuse_foreign() failed, in the
 * user's words and without the path: "is a directory", "is not an mmhitm
 * database (no application_id)". The caller that decides says it once:
 * "Cannot open the database %s: %s".
 */
const char *db_open_error(void);
void db_close(sqlite3 *db);
/* Removes a closed database and its -wal and -shm files: one that an
 * import created and could not fill is not left behind. */
void db_remove(const char *path);

/*
 * Whether mmhitmd is writing the database at db_path: 1 when another
 * process holds flock(LOCK_EX) on "<db_path>.lock" (the daemon does for its
 * lifetime), 0 when that file is absent or a shared lock was granted, or
 * -errno.
 */
int db_daemon_active(const char *db_path);

/*
 * The PID of that mmhitmd, which it writes into "<db_path>.lock": 0 and
 * *ret; -ESRCH when no daemon holds the lock, -EBADMSG when the file
 * names no PID, or -errno. Logs nothing.
 */
int db_daemon_pid(const char *db_path, pid_t *ret);

/* Applies the missing migrations in one transaction. */
int db_migrate(sqlite3 *db);
int db_user_version(sqlite3 *db, unsigned int *ret);

/*
 * Maps a SQLite result code to -errno (SQLITE_FULL is -ENOSPC, a damaged
 * file -EUCLEAN: not -EBADMSG, which says an imported file is malformed).
 */
int db_errno(int sqlite_rc);

/*
 * The statement helpers below log nothing above debug: a failure returns
 * -errno and keeps its reason for db_error(), and the caller that decides
 * says it once ("Failed to write the interval: the disk is full").
 */

/* Executes SQL without results. */
int db_exec(sqlite3 *db, const char *sql);
/* Prepares one statement; the caller gives it back with db_finalize(). */
int db_prepare(sqlite3 *db, sqlite3_stmt **ret, const char *sql);
/* A statement a caller keeps, and its SQL: a list for db_prepare_all(). */
struct db_stmt_sql {
	sqlite3_stmt **stmt;
	const char *sql;
};
/* Prepares each statement of the list in turn, stopping at the first error. */
int db_prepare_all(sqlite3 *db, const struct db_stmt_sql *list, size_t n);
/* Executes one statement without results, ?1 bound to id (a boot's, say). */
int db_exec_id(sqlite3 *db, const char *sql, int64_t id);
/* Steps a statement to completion (no rows expected) and resets it. */
int db_step_done(sqlite3 *db, sqlite3_stmt *st);
/*
 * After sqlite3_step(st) returned rc, neither SQLITE_ROW nor SQLITE_DONE
 * (a read loop that stopped on an error): keeps the reason for db_error(),
 * logs st's SQL and SQLite's words at debug only, and returns -errno
 * (db_errno(), -EIO when rc names no error). Valid after sqlite3_reset(st).
 */
int db_step_failed(sqlite3_stmt *st, int rc);
/*
 * Why the last statement of this thread that failed with r did, in the
 * user's words ("the disk is full", "the database is locked by another
 * writer"); strerror(-r) when r is not that failure's.
 */
const char *db_error(int r);

int db_begin(sqlite3 *db);
int db_commit(sqlite3 *db);
void db_rollback(sqlite3 *db);
/*
 * Ends the open transaction: commits when r >= 0, else rolls back, and
 * rolls back too when the commit fails (a busy COMMIT leaves it open).
 * Returns r, or the commit's error.
 */
int db_end(sqlite3 *db, int r);

/*
 * Returns the id of name in a (id INTEGER PRIMARY KEY, name TEXT UNIQUE)
 * lookup table such as event_names, inserting it if missing.
 */
int db_name_id(sqlite3 *db, const char *table, const char *name, int64_t *ret_id);

/* SELECT of one integer; -ENODATA when there is no row. */
int db_query_int(sqlite3 *db, int64_t *ret, const char *sql);

/*
 * Keeps up to max prepared statements of db between their uses (0: none,
 * the default), so the same SQL is parsed once: db_prepare() and db_exec()
 * hand out a cached statement that nobody holds, and db_finalize() gives
 * it back, reset and its bindings cleared. For a connection that runs the
 * same statements again and again (mmhitmd's). db_close() drops the cache;
 * -EBUSY when too many connections have one.
 */
int db_cache_statements(sqlite3 *db, size_t max);

struct db_cache_stats {
	size_t held, lent;	/* statements cached; of them, in use now */
	uint64_t hits, misses;
};
void db_cache_stats(sqlite3 *db, struct db_cache_stats *ret);

/*
 * Gives back a statement of db_prepare(): reset for the next user if the
 * cache holds it, else finalized. Every statement of db_prepare() ends
 * here, never in sqlite3_finalize(). Accepts NULL.
 */
void db_finalize(sqlite3_stmt *st);

static inline void db_finalizep(sqlite3_stmt **st)
{
	db_finalize(*st);
}
#define _cleanup_finalize_ __attribute__((cleanup(db_finalizep)))

#endif
