// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "util.h"

/* How long a writer waits for another one (ms): the daemon's interval
 * transaction against `mmhitm analyze` on the same file. */
#define DB_BUSY_TIMEOUT_MS 10000

/* Why this thread's last db_open() or db_refuse_foreign() failed. */
static _Thread_local char open_error[512];

const char *db_open_error(void)
{
	return open_error;
}

/* Keeps the reason (said at debug here: the caller says it once) and
 * returns -err. */
static int open_failed(const char *path, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int open_failed(const char *path, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(open_error, sizeof(open_error), fmt, ap);
	va_end(ap);
	log_debug("Cannot open the database %s: %s", path, open_error);
	return -err;
}

/* Whether the file system holding path has no block left for us. */
static bool dir_full(const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;
	struct statvfs sv;

	if (!dir)
		return false;
	if (slash)
		slash[slash == dir] = '\0';	/* "/x.db": "/" */
	return statvfs(slash ? dir : ".", &sv) == 0 && sv.f_bavail == 0;
}

/* The reason for an SQLite error on the first read of a file. */
static int open_failed_sqlite(const char *path, int rc, const char *detail)
{
	/* The -wal and -shm files are made at the first read: on a full disk
	 * that fails as an I/O error. */
	if ((rc & 0xff) == SQLITE_FULL || ((rc & 0xff) == SQLITE_IOERR && dir_full(path)))
		return open_failed(path, ENOSPC, "the disk is full");
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
		return open_failed(path, EMEDIUMTYPE, "is not an mmhitm database (not SQLite)");
	case SQLITE_CANTOPEN:
		if (access(path, F_OK) < 0 && errno == ENOENT)
			return open_failed(path, ENOENT, "no such file");
		break;
	case SQLITE_PERM:
	case SQLITE_AUTH:
	case SQLITE_READONLY:
		break;
	default:
		return open_failed(path, -db_errno(rc), "cannot be read: %s", detail);
	}
	if (access(path, R_OK) < 0 && (errno == EACCES || errno == EPERM))
		return open_failed(path, EACCES, "permission denied: run as root or give the "
				   "group read access");
	return open_failed(path, -db_errno(rc) ?: EIO, "cannot be opened: %s", detail);
}

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
	case SQLITE_CORRUPT:	/* what file systems say of damaged metadata */
	case SQLITE_NOTADB:	return -EUCLEAN;
	case SQLITE_CONSTRAINT:	return -EEXIST;
	case SQLITE_TOOBIG:	return -E2BIG;
	case SQLITE_INTERRUPT:	return -EINTR;
	default:		return -EIO;
	}
}

/* Why this thread's last statement failed, in the user's words, and the error it returned. */
static _Thread_local char stmt_error[256];
static _Thread_local int stmt_error_r;

/*
 * Keeps the reason for a statement's failure and returns -errno. The
 * statement and SQLite's own words go to debug; the caller that decides
 * says it once, with db_error().
 */
static int stmt_failed(sqlite3 *db, int rc, const char *sql)
{
	const char *why;

	switch (rc & 0xff) {
	case SQLITE_FULL:	why = "the disk is full"; break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:	why = "the database is locked by another writer"; break;
	case SQLITE_READONLY:	why = "the database is read-only to this process"; break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:	why = "the database file is damaged"; break;
	case SQLITE_IOERR:	why = "an I/O error on the database file"; break;
	case SQLITE_NOMEM:	why = "out of memory"; break;
	case SQLITE_INTERRUPT:	why = "interrupted"; break;
	default:		why = NULL; break;
	}
	if (why)
		snprintf(stmt_error, sizeof(stmt_error), "%s", why);
	else	/* ours to fix, or a hand-edited file: what SQLite saw helps */
		snprintf(stmt_error, sizeof(stmt_error), "the database refused a statement: %s",
			 sqlite3_errmsg(db));
	stmt_error_r = db_errno(rc) ?: -EIO;
	log_debug("SQL failed (%s): \"%.80s\"", sqlite3_errmsg(db), sql ?: "");
	return stmt_error_r;
}

const char *db_error(int r)
{
	if (r < 0 && r == stmt_error_r && stmt_error[0])
		return stmt_error;
	return strerror(r < 0 ? -r : r);
}

/*
 * The statement cache (db_cache_statements()). SQLite keeps nothing of a
 * statement once it is finalized, and parsing costs more than running
 * most of ours: half of what a quiet interval cost the daemon was
 * sqlite3_prepare_v2(). Kept per connection, found by SQL text, handed to
 * one user at a time; the least recently used one that nobody holds makes
 * room. A connection is looked up in a short table: the daemon caches one.
 */
struct stmt_entry {
	char *sql;
	uint64_t hash;
	sqlite3_stmt *st;	/* NULL: SQL of several statements, db_exec()'s to run */
	uint64_t used;		/* the cache's clock when last handed out */
	bool lent;
};

struct stmt_cache {
	sqlite3 *db;
	struct stmt_entry *e;
	size_t n, max;
	uint64_t clock, hits, misses;
};

#define STMT_CACHES 4
#define STMT_SQL_MAX 8192	/* longer SQL (a schema, a script) is run once */

static struct stmt_cache stmt_caches[STMT_CACHES];
static pthread_mutex_t stmt_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t sql_hash(const char *sql)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *sql; sql++)
		h = (h ^ (unsigned char)*sql) * 0x100000001b3ULL;
	return h;
}

/* Under stmt_lock. */
static struct stmt_cache *cache_of(sqlite3 *db)
{
	for (size_t i = 0; db && i < STMT_CACHES; i++)
		if (stmt_caches[i].db == db)
			return &stmt_caches[i];
	return NULL;
}

static struct stmt_entry *cache_find(struct stmt_cache *c, const char *sql, uint64_t hash)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->e[i].hash == hash && c->e[i].sql && strcmp(c->e[i].sql, sql) == 0)
			return &c->e[i];
	return NULL;
}

/* A free slot, the least recently used statement nobody holds made one
 * if the cache is full; NULL when every one is lent. */
static struct stmt_entry *cache_slot(struct stmt_cache *c)
{
	struct stmt_entry *old = NULL;

	if (c->n < c->max)
		return &c->e[c->n++];
	for (size_t i = 0; i < c->n; i++)
		if (!c->e[i].lent && (!old || c->e[i].used < old->used))
			old = &c->e[i];
	if (old) {
		sqlite3_finalize(old->st);
		free(old->sql);
		*old = (struct stmt_entry){};
	}
	return old;
}

/* Keeps st (or, with st NULL, that sql is several statements) for db's
 * next users; lent says whether the caller holds st now. */
static void cache_add(struct stmt_cache *c, const char *sql, uint64_t hash, sqlite3_stmt *st,
		      bool lent)
{
	struct stmt_entry *e = cache_slot(c);
	char *copy;

	if (!e)
		return;
	copy = strdup(sql);
	if (!copy)	/* the slot stays empty: the statement is finalized after use */
		return;
	*e = (struct stmt_entry){ .sql = copy, .hash = hash, .st = st, .used = ++c->clock,
				  .lent = lent };
}

/* A statement still lent is forgotten, not finalized: its holder's
 * db_finalize() finalizes it (and sqlite3_close() says it is busy). */
static void cache_drop(struct stmt_cache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->e[i].lent)
			log_debug("A cached statement was still in use: \"%.60s\"", c->e[i].sql);
		else
			sqlite3_finalize(c->e[i].st);
		free(c->e[i].sql);
	}
	free(c->e);
	*c = (struct stmt_cache){};
}

int db_cache_statements(sqlite3 *db, size_t max)
{
	struct stmt_cache *c;
	int r = 0;

	pthread_mutex_lock(&stmt_lock);
	c = cache_of(db);
	if (c)
		cache_drop(c);
	if (max) {
		c = NULL;
		for (size_t i = 0; !c && i < STMT_CACHES; i++)
			if (!stmt_caches[i].db)
				c = &stmt_caches[i];
		if (!c)
			r = -EBUSY;
		else if (!(c->e = calloc(max, sizeof(*c->e))))
			r = -ENOMEM;
		else {
			c->db = db;
			c->max = max;
		}
	}
	pthread_mutex_unlock(&stmt_lock);
	return r;
}

void db_cache_stats(sqlite3 *db, struct db_cache_stats *ret)
{
	struct stmt_cache *c;

	*ret = (struct db_cache_stats){};
	pthread_mutex_lock(&stmt_lock);
	c = cache_of(db);
	if (c) {
		ret->held = c->n;
		ret->hits = c->hits;
		ret->misses = c->misses;
		for (size_t i = 0; i < c->n; i++)
			ret->lent += c->e[i].lent;
	}
	pthread_mutex_unlock(&stmt_lock);
}

/* Whether SQL after a statement holds another one (or what fails to
 * prepare), not only blanks, semicolons and comments. */
static bool tail_has_statement(sqlite3 *db, const char *tail)
{
	sqlite3_stmt *st = NULL;
	int rc;

	tail += strspn(tail, " \t\n\r\f\v;");
	if (!*tail)
		return false;
	rc = sqlite3_prepare_v2(db, tail, -1, &st, NULL);
	sqlite3_finalize(st);
	return rc != SQLITE_OK || st != NULL;
}

/*
 * A prepared statement of db for sql: the cached one when it is free,
 * else a new one the cache keeps if it has room. *ret_multi: sql holds
 * more than one statement (nothing is prepared; only db_exec() asks).
 */
static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **ret, bool *ret_multi)
{
	struct stmt_cache *c;
	struct stmt_entry *e = NULL;
	uint64_t hash = 0;
	const char *tail = NULL;
	int rc;

	*ret = NULL;
	*ret_multi = false;
	pthread_mutex_lock(&stmt_lock);
	c = strlen(sql) < STMT_SQL_MAX ? cache_of(db) : NULL;
	if (c) {
		hash = sql_hash(sql);
		e = cache_find(c, sql, hash);
		if (e && !e->lent) {
			c->hits++;
			e->used = ++c->clock;
			e->lent = e->st != NULL;
			*ret = e->st;
			*ret_multi = !e->st;
			pthread_mutex_unlock(&stmt_lock);
			return SQLITE_OK;
		}
		c->misses++;
	}
	pthread_mutex_unlock(&stmt_lock);

	rc = sqlite3_prepare_v3(db, sql, -1, c ? SQLITE_PREPARE_PERSISTENT : 0, ret, &tail);
	if (rc != SQLITE_OK)
		return rc;
	if (tail && *tail && tail_has_statement(db, tail)) {
		sqlite3_finalize(*ret);
		*ret = NULL;
		*ret_multi = true;
	}
	/* no cache, its copy is lent (this one is finalized after use), or
	 * nothing to run (only a comment) */
	if (!c || e || (!*ret && !*ret_multi))
		return SQLITE_OK;
	pthread_mutex_lock(&stmt_lock);
	if (cache_of(db) == c && !cache_find(c, sql, hash))
		cache_add(c, sql, hash, *ret, *ret != NULL);
	pthread_mutex_unlock(&stmt_lock);
	return SQLITE_OK;
}

void db_finalize(sqlite3_stmt *st)
{
	struct stmt_cache *c;

	if (!st)
		return;
	pthread_mutex_lock(&stmt_lock);
	c = cache_of(sqlite3_db_handle(st));
	for (size_t i = 0; c && i < c->n; i++) {
		if (c->e[i].st != st)
			continue;
		sqlite3_reset(st);
		sqlite3_clear_bindings(st);
		c->e[i].lent = false;
		pthread_mutex_unlock(&stmt_lock);
		return;
	}
	pthread_mutex_unlock(&stmt_lock);
	sqlite3_finalize(st);
}

int db_exec(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	bool multi;
	char *err = NULL;
	int rc;

	rc = prepare(db, sql, &st, &multi);
	if (rc == SQLITE_OK && multi) {
		rc = sqlite3_exec(db, sql, NULL, NULL, &err);
		sqlite3_free(err);
	} else if (rc == SQLITE_OK && st) {
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		if (rc == SQLITE_DONE)
			rc = SQLITE_OK;
		else	/* the step's error is the statement's: reset returns it too */
			rc = sqlite3_reset(st) ?: rc;
	}
	if (rc != SQLITE_OK) {
		int r = stmt_failed(db, rc, sql);

		db_finalize(st);
		return r;
	}
	db_finalize(st);
	return 0;
}

int db_prepare(sqlite3 *db, sqlite3_stmt **ret, const char *sql)
{
	bool multi;
	int rc = prepare(db, sql, ret, &multi);

	if (rc == SQLITE_OK && multi) {
		/* ours to fix: one statement was meant */
		snprintf(stmt_error, sizeof(stmt_error), "the database refused a statement: "
			 "more than one in \"%.60s\"", sql);
		stmt_error_r = -EINVAL;
		return stmt_error_r;
	}
	if (rc != SQLITE_OK)
		return stmt_failed(db, rc, sql);
	return 0;
}

int db_prepare_all(sqlite3 *db, const struct db_stmt_sql *list, size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n && r >= 0; i++)
		r = db_prepare(db, list[i].stmt, list[i].sql);
	return r;
}

void db_remove(const char *path)
{
	static const char *const suffix[] = { "", "-wal", "-shm" };
	char p[PATH_MAX + 8];

	for (size_t i = 0; i < ARRAY_SIZE(suffix); i++) {
		snprintf(p, sizeof(p), "%s%s", path, suffix[i]);
		unlink(p);
	}
}

int db_exec_id(sqlite3 *db, const char *sql, int64_t id)
{
	sqlite3_stmt *st;
	int r;

	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, id);
	r = db_step_done(db, st);
	db_finalize(st);
	return r;
}

int db_step_done(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);
	int r = 0;

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = stmt_failed(db, rc, sqlite3_sql(st));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r;
}

int db_step_failed(sqlite3_stmt *st, int rc)
{
	return stmt_failed(sqlite3_db_handle(st), rc, sqlite3_sql(st));
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

int db_end(sqlite3 *db, int r)
{
	if (r >= 0)
		r = db_commit(db);
	if (r < 0)
		db_rollback(db);
	return r;
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
		return stmt_failed(db, rc, sql);
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

static int db_set_application_id(sqlite3 *db)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", (int32_t)DB_APPLICATION_ID);
	return db_exec(db, sql);
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
	if (have == want) {
		int64_t id = 0;

		/* A fleet database from before application_id gets it now. */
		r = db_query_int(db, &id, "PRAGMA application_id");
		if (r < 0 || (uint32_t)id == DB_APPLICATION_ID)
			return r;
		return db_set_application_id(db);
	}

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
			log_debug("Schema migration %s failed", m->name);
			goto fail;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %u", want);
	r = db_exec(db, sql);
	if (r < 0)
		goto fail;
	r = db_set_application_id(db);
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
	snprintf(open_error, sizeof(open_error), "has schema version %u, newer than this mmhitm "
		 "reads (%u): upgrade mmhitm", have, want);
	log_debug("Database schema version %u is newer than this mmhitm's %u", have, want);
	return -EPROTONOSUPPORT;
}

/*
 * "file:" URI of path: '%', '?' and '#' escaped, a relative path kept
 * relative. Caller frees.
 */
static char *db_uri(const char *path, const char *query)
{
	size_t len = strlen(path);
	char *uri = malloc(5 + 3 * len + 1 + strlen(query) + 1), *p;

	if (!uri)
		return NULL;
	p = stpcpy(uri, "file:");
	for (const char *c = path; *c; c++) {
		if (*c == '%' || *c == '?' || *c == '#')
			p += sprintf(p, "%%%02X", (unsigned char)*c);
		else
			*p++ = *c;
	}
	*p++ = '?';
	strcpy(p, query);
	return uri;
}

int db_daemon_active(const char *db_path)
{
	char lock[4200];
	int fd, r = 0;

	snprintf(lock, sizeof(lock), "%s.lock", db_path);
	/* O_RDONLY: flock() needs no write access, a reader may have none */
	fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		r = errno == EWOULDBLOCK ? 1 : -errno;
	close(fd);	/* drops our shared lock, if we got it */
	return r;
}

int db_daemon_pid(const char *db_path, pid_t *ret)
{
	char lock[4200], buf[32];
	long pid;
	int r;

	r = db_daemon_active(db_path);
	if (r <= 0)
		return r < 0 ? r : -ESRCH;
	snprintf(lock, sizeof(lock), "%s.lock", db_path);
	r = read_line(lock, buf, sizeof(buf));
	if (r < 0)
		return r;
	pid = strtol(buf, NULL, 10);
	if (pid <= 1)
		return -EBADMSG;
	*ret = (pid_t)pid;
	return 0;
}

/* One integer of the first reads, which are the open's to explain: an
 * error is returned, never logged (the caller reads sqlite3_errmsg()). */
static int identify_int(sqlite3 *db, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : db_errno(rc) ?: -EIO;
}

/*
 * What the file is: DB_KIND_EMPTY (no tables, no ids: ours to create),
 * DB_KIND_MMHITM (our application_id, or from before it: our user_version
 * and our tables) or DB_KIND_FOREIGN. The first read of the file, so an
 * SQLite error here (not a database, cannot open) is returned as is.
 */
enum { DB_KIND_EMPTY, DB_KIND_MMHITM, DB_KIND_FOREIGN };

static int db_identify(sqlite3 *db, int *ret_kind, unsigned int *ret_version)
{
	int64_t app_id = 0, tables = 0, ours = 0;
	unsigned int version = 0;
	int r;

	int64_t v = 0;

	r = identify_int(db, "PRAGMA application_id", &app_id);
	if (r >= 0)
		r = identify_int(db, "PRAGMA user_version", &v);
	if (r >= 0)
		r = identify_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'", &tables);
	if (r >= 0)
		r = identify_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
				 "name IN ('hosts', 'boots', 'intervals')", &ours);
	if (r < 0)
		return r;
	version = (unsigned int)v;
	*ret_version = version;
	if ((uint32_t)app_id == DB_APPLICATION_ID)
		*ret_kind = DB_KIND_MMHITM;
	else if (app_id == 0 && version == 0 && tables == 0)
		*ret_kind = DB_KIND_EMPTY;
	else if (app_id == 0 && version > 0 && ours == 3)
		*ret_kind = DB_KIND_MMHITM;	/* a fleet database from before the id */
	else
		*ret_kind = DB_KIND_FOREIGN;
	return 0;
}

/* The first read failed because the file or its -shm cannot be opened
 * for reading as SQLite wants (a read-only directory without -shm). */
static bool needs_immutable(int rc)
{
	return (rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY;
}

static int open_uri(const char *path, const char *query, int oflags, sqlite3 **ret)
{
	_cleanup_free_ char *uri = db_uri(path, query);
	sqlite3 *db = NULL;
	int rc;

	if (!uri)
		return open_failed(path, ENOMEM, "out of memory");
	rc = sqlite3_open_v2(uri, &db, oflags | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		int r = open_failed_sqlite(path, rc, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));

		sqlite3_close(db);
		return r;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, DB_BUSY_TIMEOUT_MS);
	*ret = db;
	return 0;
}

/* Readers: mode=ro, and immutable=1 only when nobody writes the file. */
static int open_reader(const char *path, sqlite3 **ret_db, int *ret_kind, unsigned int *ret_version)
{
	char wal[4200];
	struct stat st;
	sqlite3 *db = NULL;
	int r, rc, active;

	/* SQLite would say "unable to open database file": say what to do */
	if (stat(path, &st) < 0 && errno == ENOENT)
		return open_failed(path, ENOENT, "no such file (mmhitmd creates it when it first runs: "
				   "systemctl status mmhitmd; else pass --db PATH or set MMHITM_DB)");
	r = open_uri(path, "mode=ro", SQLITE_OPEN_READONLY, &db);
	if (r < 0)
		return r;
	/* sqlite3_open_v2() reads nothing: this is the first read */
	rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	if (rc != SQLITE_OK && needs_immutable(sqlite3_extended_errcode(db))) {
		sqlite3_close(db);
		db = NULL;
		/* an immutable open of a WAL file being written reads wrong pages */
		active = db_daemon_active(path);
		if (active != 0)
			return open_failed(path, active > 0 ? EROFS : -active,
					   "cannot be opened read-only (%s) while mmhitmd writes it "
					   "(it holds %s.lock)", sqlite3_errstr(rc), path);
		log_debug("%s cannot be opened read-only as it is (%s); no daemon writes it: "
			  "opening it immutable", path, sqlite3_errstr(rc));
		r = open_uri(path, "mode=ro&immutable=1", SQLITE_OPEN_READONLY, &db);
		if (r < 0)
			return r;
		snprintf(wal, sizeof(wal), "%s-wal", path);
		if (stat(wal, &st) == 0 && st.st_size > 0)
			log_notice("Reading %s without the %lld bytes of %s that no checkpoint has "
				   "copied yet: SQLite cannot read them here without write access "
				   "to the directory", path, (long long)st.st_size, wal);
	}
	r = db_identify(db, ret_kind, ret_version);
	if (r < 0) {
		r = open_failed_sqlite(path, sqlite3_extended_errcode(db), sqlite3_errmsg(db));
		sqlite3_close(db);
		return r;
	}
	*ret_db = db;
	return 0;
}
int db_refuse_foreign(const char *path)
{
	sqlite3 *db = NULL;
	unsigned int have = 0;
	int kind = DB_KIND_FOREIGN, r;
	struct stat st;

	open_error[0] = '\0';
	if (stat(path, &st) < 0 || st.st_size == 0)
		return 0;
	if (S_ISDIR(st.st_mode))
		return open_failed(path, EISDIR, "is a directory");
	/* What cannot be read now (locked, unreadable) the real open judges;
	 * a file that is not SQLite at all is refused here. */
	r = open_reader(path, &db, &kind, &have);
	if (r == -EMEDIUMTYPE)
		return r;
	if (r < 0) {
		open_error[0] = '\0';
		return 0;
	}
	sqlite3_close(db);
	if (kind == DB_KIND_FOREIGN)
		return open_failed(path, EMEDIUMTYPE, "is not an mmhitm database (no application_id)");
	return 0;
}

/* A pragma of the open: its failure is the open's. */
static int open_pragma(sqlite3 *db, const char *path, const char *sql)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	if (rc == SQLITE_OK)
		return 0;
	return open_failed(path, -db_errno(rc) ?: EIO, "cannot be set up (%s): %s", sql,
			   sqlite3_errmsg(db));
}

/* Opens path for writing: a file this user may only read is refused
 * here, not by the first write after the work is done. */
static int open_writer(const char *path, unsigned int flags, sqlite3 **ret_db, int *ret_kind,
		       unsigned int *ret_version)
{
	int oflags = SQLITE_OPEN_READWRITE | (flags & DB_NO_CREATE ? 0 : SQLITE_OPEN_CREATE);
	sqlite3 *db = NULL;
	int r;

	if ((flags & DB_NO_CREATE) && access(path, F_OK) < 0 && errno == ENOENT)
		return open_failed(path, ENOENT, "no such file");
	r = open_uri(path, "", oflags, &db);
	if (r < 0)
		return r;
	if (sqlite3_db_readonly(db, "main") == 1) {
		sqlite3_close(db);
		return open_failed(path, EACCES, "permission denied: it is written to, so run as "
				   "root or give the group write access");
	}
	/* The first read tells whether this is a database at all. */
	r = db_identify(db, ret_kind, ret_version);
	if (r < 0) {
		r = open_failed_sqlite(path, sqlite3_extended_errcode(db), sqlite3_errmsg(db));
		sqlite3_close(db);
		return r;
	}
	*ret_db = db;
	return 0;
}

/* WAL, the vacuum mode of a new file, foreign keys; a writer migrates. */
static int open_setup(sqlite3 *db, const char *path, unsigned int flags, int kind)
{
	static const char *const writer_pragmas[] = {
		/* WAL: readers (mmhitm analyze, users' sqlite3) never block
		 * the daemon, and a killed writer loses only its open txn. */
		"PRAGMA journal_mode = WAL",
		"PRAGMA synchronous = NORMAL",
		/* Keep the WAL file small after checkpoints (bytes). */
		"PRAGMA journal_size_limit = 4194304",
	};
	int r;

	if (!(flags & DB_READONLY)) {
		/* A new file: freed pages go back to the file system in steps
		 * (retention), which must be chosen before the first table. */
		if (kind == DB_KIND_EMPTY) {
			r = open_pragma(db, path, "PRAGMA auto_vacuum = INCREMENTAL");
			if (r < 0)
				return r;
		}
		for (size_t i = 0; i < ARRAY_SIZE(writer_pragmas); i++) {
			r = open_pragma(db, path, writer_pragmas[i]);
			if (r < 0)
				return r;
		}
	}
	r = open_pragma(db, path, "PRAGMA foreign_keys = ON");
	if (r < 0 || (flags & DB_READONLY))
		return r;
	r = db_migrate(db);
	if (r < 0 && !open_error[0])
		return open_failed(path, -r, "cannot be migrated to schema version %u: %s",
				   db_schema_version(), db_error(r));
	return r;
}

int db_open(const char *path, unsigned int flags, sqlite3 **ret_db)
{
	sqlite3 *db = NULL;
	unsigned int have = 0;
	int kind = DB_KIND_FOREIGN, r;
	struct stat st;

	open_error[0] = '\0';
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return open_failed(path, EISDIR, "is a directory");
	if (flags & DB_READONLY)
		r = open_reader(path, &db, &kind, &have);
	else
		r = open_writer(path, flags, &db, &kind, &have);
	if (r < 0)
		return r;
	if (kind == DB_KIND_FOREIGN || (kind == DB_KIND_EMPTY && (flags & DB_READONLY))) {
		/* Someone else's file: never adopted, migrated or vacuumed. */
		r = open_failed(path, EMEDIUMTYPE, "is not an mmhitm database (%s)",
				kind == DB_KIND_EMPTY ? "it is empty" : "no application_id");
		goto fail;
	}
	if ((flags & DB_READONLY) && have != db_schema_version()) {
		if (have > db_schema_version())
			r = open_failed(path, EPROTONOSUPPORT, "has schema version %u, newer than "
					"this mmhitm reads (%u): upgrade mmhitm", have,
					db_schema_version());
		else
			r = open_failed(path, EROFS, "has schema version %u, older than this mmhitm "
					"reads (%u): open it once read-write (mmhitmd, mmhitm analyze) "
					"to migrate it", have, db_schema_version());
		goto fail;
	}
	r = open_setup(db, path, flags, kind);
	if (r < 0)
		goto fail;
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
	db_cache_statements(db, 0);
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
	db_finalize(st);
	st = NULL;

	snprintf(sql, sizeof(sql), "SELECT rowid FROM %s WHERE name = ?1", table);
	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return stmt_failed(db, rc, sql);
	*ret_id = sqlite3_column_int64(st, 0);
	return 0;
}
