// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "log.h"
#include "rollup.h"
#include "ship.h"
#include "tsv.h"
#include "util.h"

/* The cluster schema, compiled in from schema/clickhouse/. */
extern const unsigned char clickhouse_sql[];
extern const size_t clickhouse_sql_len;

enum ship_key {
	KEY_ALL,	/* small dimension: the whole table, when its digest changed */
	KEY_INTERVAL,	/* interval_id, every recorded interval */
	KEY_ANALYZED,	/* interval_id, only intervals mmhitm analyze has done */
};

/*
 * One cluster table: the SELECT gives its columns in the order of
 * columns, then the key the cursor follows, ordered by that key; ?1 is the
 * cursor, ?2 the upper bound. The cluster's natural key is in the columns
 * (host, boot, interval start, ...), never a local id, so a row shipped
 * twice is the same row there.
 */
struct ship_table {
	const char *name;
	enum ship_key key;
	const char *columns;
	const char *select;
};

#define HOST_BOOT " JOIN boots b USING (boot_id) JOIN hosts h USING (host_id)"

static const struct ship_table tables[SHIP_TABLES] = {
	{ "hosts", KEY_ALL, "machine_id, hostname",
	  "SELECT machine_id, hostname, 0 FROM hosts WHERE ?1 = ?1 AND ?2 = ?2 ORDER BY host_id" },
	{ "boots", KEY_ALL,
	  "machine_id, boot_uuid, source, boot_time_ns, first_seen_ns, last_seen_ns, kernel_release,"
	  " kernel_version, kernel_build_id, arch, nr_cpus_online, cache_line_size, page_size,"
	  " pmu_kind, pmu_detail, lru_gen, btf",
	  "SELECT h.machine_id, b.boot_uuid, b.source, b.boot_time_ns, b.first_seen_ns, b.last_seen_ns,"
	  " b.kernel_release, b.kernel_version, b.kernel_build_id, b.arch, b.nr_cpus_online,"
	  " b.cache_line_size, b.page_size, b.pmu_kind, b.pmu_detail, b.lru_gen, b.btf, 0"
	  " FROM boots b JOIN hosts h USING (host_id) WHERE ?1 = ?1 AND ?2 = ?2 ORDER BY b.boot_id" },
	{ "ksyms", KEY_ALL, "machine_id, boot_uuid, addr, size, name, module",
	  "SELECT h.machine_id, b.boot_uuid, k.addr, k.size, k.name, k.module, 0"
	  " FROM ksyms k" HOST_BOOT " WHERE ?1 = ?1 AND ?2 = ?2 ORDER BY k.boot_id, k.addr" },
	{ "intervals", KEY_INTERVAL,
	  "machine_id, boot_uuid, start_ns, end_ns, partial, learn_records, events_lost,"
	  " dropped_intervals, detail_dropped, cpu_user_ns, cpu_sys_ns, rss_kb, db_bytes, ctxt, forks,"
	  " armed_ns, slices, armed, est_cost_ns, window_note, sampled, active_ns, samples,"
	  " samples_lost, throttled",
	  "SELECT h.machine_id, b.boot_uuid, i.start_ns, i.end_ns, i.partial, i.learn_records,"
	  " i.events_lost, i.dropped_intervals, i.detail_dropped, i.cpu_user_ns, i.cpu_sys_ns,"
	  " i.rss_kb, i.db_bytes, i.ctxt, i.forks, i.armed_ns, i.slices, i.armed, i.est_cost_ns,"
	  " i.window_note, s.interval_id IS NOT NULL, s.active_ns, s.samples, s.lost, s.throttled,"
	  " i.interval_id"
	  " FROM intervals i" HOST_BOOT " LEFT JOIN sampling s USING (interval_id)"
	  " WHERE i.interval_id > ?1 AND i.interval_id <= ?2 ORDER BY i.interval_id" },
	{ "event_counts", KEY_INTERVAL,
	  "machine_id, boot_uuid, start_ns, event, count, method, counted, variance",
	  "SELECT h.machine_id, b.boot_uuid, i.start_ns, n.name, c.count, c.method, c.counted,"
	  " c.variance, c.interval_id"
	  " FROM event_counts c JOIN event_names n USING (event_id) JOIN intervals i USING (interval_id)"
	  HOST_BOOT
	  " WHERE c.interval_id > ?1 AND c.interval_id <= ?2 ORDER BY c.interval_id" },
	{ "vmstat_deltas", KEY_INTERVAL, "machine_id, boot_uuid, start_ns, name, delta",
	  "SELECT h.machine_id, b.boot_uuid, i.start_ns, n.name, v.delta, v.interval_id"
	  " FROM vmstat_deltas v JOIN vmstat_names n USING (vmstat_id) JOIN intervals i USING (interval_id)"
	  HOST_BOOT
	  " WHERE v.interval_id > ?1 AND v.interval_id <= ?2 ORDER BY v.interval_id" },
	{ "path_intervals", KEY_ANALYZED,
	  "machine_id, boot_uuid, start_ns, end_ns, path, lcl_hitm, rmt_hitm, peer, samples, work,"
	  " work_source, work_stderr, work_share",
	  "SELECT h.machine_id, b.boot_uuid, i.start_ns, i.end_ns, p.path, p.lcl_hitm, p.rmt_hitm,"
	  " p.peer, p.samples, p.work, p.work_source, p.work_stderr, p.work_share, p.interval_id"
	  " FROM path_intervals p JOIN intervals i USING (interval_id)" HOST_BOOT
	  " WHERE p.interval_id > ?1 AND p.interval_id <= ?2 ORDER BY p.interval_id" },
	{ "hitm_lines", KEY_ANALYZED,
	  "machine_id, boot_uuid, start_ns, line_addr, `offset`, ip, callchain, object_type, field,"
	  " symbol, path, rule, grade, tgid, comm, loads, stores, lcl_hitm, rmt_hitm, lcl_peer, rmt_peer",
	  "SELECT h.machine_id, b.boot_uuid, i.start_ns, a.line_addr, a.offset, a.ip,"
	  " coalesce(c.ips, ''), a.object_type, a.field, a.symbol, a.path, a.rule, a.grade, m.tgid, m.comm,"
	  " l.loads, l.stores, l.lcl_hitm, l.rmt_hitm, l.lcl_peer, l.rmt_peer, a.interval_id"
	  " FROM line_attribution a"
	  " JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
	  " JOIN intervals i ON i.interval_id = a.interval_id" HOST_BOOT
	  " LEFT JOIN callchains c ON c.callchain_id = a.callchain_id"
	  " LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref"
	  " WHERE a.interval_id > ?1 AND a.interval_id <= ?2 ORDER BY a.interval_id" },
};

static int buf_add_column(struct strbuf *b, sqlite3_stmt *st, int i)
{
	char num[40];
	int n;

	switch (sqlite3_column_type(st, i)) {
	case SQLITE_NULL:
		return strbuf_add(b, "\\N", 2);
	case SQLITE_INTEGER:
		n = snprintf(num, sizeof(num), "%lld", (long long)sqlite3_column_int64(st, i));
		return strbuf_add(b, num, (size_t)n);
	case SQLITE_FLOAT:
		n = snprintf(num, sizeof(num), "%.17g", sqlite3_column_double(st, i));
		return strbuf_add(b, num, (size_t)n);
	default:
		return tsv_add_field(b, (const char *)sqlite3_column_text(st, i),
				     (size_t)sqlite3_column_bytes(st, i));
	}
}

/*
 * FNV-1a over a dimension table's rows: its cursor, so an unchanged table
 * is not sent again every hour (a live boot's last_seen_ns changes it).
 */
static int64_t digest(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ULL;
	}
	/* 0 is "never shipped". */
	return (int64_t)(h ? h : 1);
}

struct cursor {
	int64_t last_key;
	int64_t batch;
};

static int cursor_get(sqlite3 *db, const char *table, struct cursor *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, "SELECT last_key, batch FROM ship_cursors WHERE tbl = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		ret->last_key = sqlite3_column_int64(st, 0);
		ret->batch = sqlite3_column_int64(st, 1);
		return 0;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	*ret = (struct cursor){ .last_key = 0, .batch = 0 };
	return 0;
}

/* One short write transaction: the daemon may be writing (busy timeout). */
static int cursor_advance(sqlite3 *db, const char *table, int64_t key, int64_t batch, int64_t rows)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st,
		"INSERT INTO ship_cursors(tbl, last_key, batch, rows, shipped_ns) VALUES (?1, ?2, ?3, ?4, ?5)"
		" ON CONFLICT (tbl) DO UPDATE SET last_key = excluded.last_key, batch = excluded.batch,"
		"  rows = rows + excluded.rows, shipped_ns = excluded.shipped_ns");
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, key);
	sqlite3_bind_int64(st, 3, batch);
	sqlite3_bind_int64(st, 4, rows);
	sqlite3_bind_int64(st, 5, now_ns(CLOCK_REALTIME));
	return db_step_done(db, st);
}

/*
 * The last interval whose lines and path rows are final: every interval
 * up to it is analyzed (analysis_state), so none below it can still gain
 * rows. Intervals past it are counted in *ret_waiting.
 */
static int analyzed_bound(sqlite3 *db, int64_t *ret, int64_t *ret_waiting)
{
	int r;

	r = db_query_int(db, ret,
		"SELECT coalesce((SELECT min(i.interval_id) - 1 FROM intervals i"
		"  LEFT JOIN analysis_state a ON a.boot_id = i.boot_id"
		"  WHERE a.boot_id IS NULL OR i.interval_id > a.last_interval_id),"
		" (SELECT max(interval_id) FROM intervals), 0)");
	if (r < 0)
		return r;
	return db_query_int(db, ret_waiting,
		"SELECT count(*) FROM intervals i LEFT JOIN analysis_state a ON a.boot_id = i.boot_id"
		" WHERE a.boot_id IS NULL OR i.interval_id > a.last_interval_id");
}

/*
 * Reads the next batch of t after cursor c into b, in one read
 * transaction (a consistent snapshot while mmhitmd writes): rows up to
 * batch_rows, then the rest of the last key's rows, so a batch always
 * holds whole intervals (hosts, boots and symbols go whole: they are
 * small). *ret_key is the last key read.
 */
static int read_batch(sqlite3 *db, const struct ship_table *t, const struct cursor *c, int64_t bound,
		      uint64_t batch_rows, int64_t batch, struct strbuf *b, int64_t *ret_rows,
		      int64_t *ret_key)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t rows = 0, key = c->last_key;
	char num[32];
	int n, r, rc, ncols;

	r = db_prepare(db, &st, t->select);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, c->last_key);
	sqlite3_bind_int64(st, 2, bound);
	n = snprintf(num, sizeof(num), "%" PRId64 "\n", batch);
	ncols = sqlite3_column_count(st) - 1;	/* the last column is the key */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t k = sqlite3_column_int64(st, ncols);

		if (t->key >= KEY_INTERVAL && batch_rows && (uint64_t)rows >= batch_rows && k != key)
			break;
		for (int i = 0; i < ncols; i++) {
			r = buf_add_column(b, st, i);
			if (r >= 0)
				r = strbuf_add(b, "\t", 1);
			if (r < 0)
				return log_oom();
		}
		/* The batch number is not content: keep it out of the digest. */
		if (t->key == KEY_ALL) {
			if (strbuf_add(b, "\n", 1) < 0)
				return log_oom();
		} else if (strbuf_add(b, num, (size_t)n) < 0) {
			return log_oom();
		}
		rows++;
		key = k;
	}
	if (t->key == KEY_ALL && rows) {
		_cleanup_free_ char *out = NULL;
		size_t len = 0;

		/* Unchanged since the last acknowledged batch: nothing to send. */
		key = digest(b->p, b->len);
		if (key == c->last_key) {
			*ret_rows = 0;
			*ret_key = key;
			return 0;
		}
		/* Now the batch number, at the end of every line. */
		out = malloc(b->len + (size_t)rows * (size_t)n + 1);
		if (!out)
			return log_oom();
		for (char *p = b->p, *nl; (nl = strchr(p, '\n')); p = nl + 1) {
			memcpy(out + len, p, (size_t)(nl - p));
			len += (size_t)(nl - p);
			memcpy(out + len, num, (size_t)n);
			len += (size_t)n;
		}
		out[len] = '\0';
		free(b->p);
		b->p = out;
		b->len = len;
		b->alloc = len + 1;
		out = NULL;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	/* Read to the end: the intervals past the last row have none here. */
	if (rc == SQLITE_DONE && t->key != KEY_ALL && bound != INT64_MAX && bound > key)
		key = bound;
	*ret_rows = rows;
	*ret_key = key;
	return 0;
}

/* Rows of t past the cursor, for the message when the cluster is down. */
static int64_t pending_rows(sqlite3 *db, const struct ship_table *t, int64_t key, int64_t bound)
{
	_cleanup_free_ char *sql = NULL;
	int64_t n = 0;

	/* A dimension that changed is sent whole; say how many rows. */
	if (t->key == KEY_ALL)
		key = 0;
	if (asprintf(&sql, "SELECT count(*) FROM (%s)", t->select) < 0)
		return -1;
	{
		_cleanup_finalize_ sqlite3_stmt *st = NULL;

		if (db_prepare(db, &st, sql) < 0)
			return -1;
		sqlite3_bind_int64(st, 1, key);
		sqlite3_bind_int64(st, 2, bound);
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
	}
	return n;
}

/*
 * Tests only: MMHITM_SHIP_FAULT=kill-after-send:TABLE kills this process
 * right after the cluster acknowledged TABLE's first batch, before the
 * cursor moves: the crash the exactly-once design is for.
 */
static void fault_after_send(const char *table)
{
	const char *f = getenv("MMHITM_SHIP_FAULT");

	if (f && startswith(f, "kill-after-send:") && strcmp(f + strlen("kill-after-send:"), table) == 0)
		raise(SIGKILL);
}

static int ship_table(sqlite3 *db, struct http *h, const struct ship_options *o, const struct ship_table *t,
		      int64_t analyzed, struct ship_table_result *res)
{
	_cleanup_free_ char *query = NULL;
	struct cursor c;
	int r;

	res->table = t->name;
	if (asprintf(&query, "INSERT INTO %s.%s (%s, batch) FORMAT TabSeparated", o->database, t->name,
		     t->columns) < 0)
		return log_oom();
	for (;;) {
		struct strbuf b = {};
		int64_t rows = 0, key = 0, bound;

		r = db_exec(db, "BEGIN");
		if (r < 0)
			return r;
		r = cursor_get(db, t->name, &c);
		if (r >= 0 && o->resend && res->batches == 0)
			c.last_key = 0;
		bound = t->key == KEY_ANALYZED ? analyzed : INT64_MAX;
		if (r >= 0 && t->key == KEY_INTERVAL) {
			r = db_query_int(db, &bound, "SELECT coalesce(max(interval_id), 0) FROM intervals");
			if (r >= 0 && bound < c.last_key)
				bound = c.last_key;	/* cannot shrink: retention keeps the newest */
		}
		if (r >= 0)
			r = read_batch(db, t, &c, bound, o->batch_rows, c.batch + 1, &b, &rows, &key);
		db_rollback(db);	/* a read transaction: nothing to keep */
		if (r < 0) {
			free(b.p);
			return r;
		}
		if (rows == 0) {
			free(b.p);
			/*
			 * Intervals without rows here (no vmstat change, no
			 * sampled line) are shipped too: retention with
			 * ship_required waits for every table's cursor.
			 */
			if (t->key != KEY_ALL && bound > c.last_key && bound != INT64_MAX) {
				r = cursor_advance(db, t->name, bound, c.batch, 0);
				if (r < 0)
					return r;
			}
			return 0;
		}
		r = http_query(h, query, b.p, b.len, NULL);
		free(b.p);
		if (r < 0) {
			res->pending = pending_rows(db, t, c.last_key, bound);
			return log_error_errno(r, "ClickHouse did not take %s (batch %" PRId64 ", %" PRId64
					       " rows): %s; the cursor stays, the next run sends them again",
					       t->name, c.batch + 1, rows, http_error(h));
		}
		fault_after_send(t->name);
		r = cursor_advance(db, t->name, key, c.batch + 1, rows);
		if (r < 0)
			return log_error_errno(r, "ClickHouse took %s batch %" PRId64 " but its cursor could not"
					       " be saved; the next run sends it again (the cluster collapses it)",
					       t->name, c.batch + 1);
		res->rows += rows;
		res->batches++;
		/* Small tables go whole, once per run. */
		if (t->key == KEY_ALL)
			return 0;
	}
}

/* --- roll-ups ---------------------------------------------------------------- */

struct rollup_batch {
	struct strbuf b;
	char tail[64];		/* "\t<batch>\n" */
	char grain[24];		/* "<grain_s>\t" */
	int64_t rows, last_bucket;
};

static int add_i64(struct strbuf *b, int64_t v, bool null)
{
	char num[32];
	int n;

	if (null)
		return strbuf_add(b, "\\N\t", 3);
	n = snprintf(num, sizeof(num), "%" PRId64 "\t", v);
	return strbuf_add(b, num, (size_t)n);
}

static int add_str(struct strbuf *b, const char *s)
{
	if (tsv_add_field(b, s ? s : "", s ? strlen(s) : 0) < 0)
		return -ENOMEM;
	return strbuf_add(b, "\t", 1);
}

static int rollup_bucket_row(const struct rollup_bucket *r, void *arg)
{
	struct rollup_batch *rb = arg;
	struct strbuf *b = &rb->b;
	const int64_t v[] = { r->bucket_ns, r->start_ns, r->end_ns, r->intervals, r->partial,
			      r->not_analyzed, r->events_lost, r->dropped_intervals, r->sampled,
			      r->active_ns, r->samples_lost, r->throttled };

	if (add_str(b, r->machine_id) < 0 || add_str(b, r->boot_uuid) < 0 ||
	    strbuf_add(b, rb->grain, strlen(rb->grain)) < 0)
		return log_oom();
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		if (add_i64(b, v[i], false) < 0)
			return log_oom();
	/* the last tab is the batch's */
	b->len--;
	if (strbuf_add(b, rb->tail, strlen(rb->tail)) < 0)
		return log_oom();
	rb->rows++;
	if (r->bucket_ns > rb->last_bucket)
		rb->last_bucket = r->bucket_ns;
	return 0;
}

static int rollup_path_row(const struct rollup_path *r, void *arg)
{
	struct rollup_batch *rb = arg;
	struct strbuf *b = &rb->b;
	char num[64];
	int n;

	if (add_str(b, r->machine_id) < 0 || add_str(b, r->boot_uuid) < 0 ||
	    strbuf_add(b, rb->grain, strlen(rb->grain)) < 0 || add_i64(b, r->bucket_ns, false) < 0 ||
	    add_str(b, r->path) < 0 || add_i64(b, r->intervals, false) < 0 ||
	    add_i64(b, r->hitm, !r->has_hitm) < 0 || add_i64(b, r->samples, !r->has_samples) < 0)
		return log_oom();
	n = r->has_work ? snprintf(num, sizeof(num), "%.17g\t", r->work) : snprintf(num, sizeof(num), "\\N\t");
	if (strbuf_add(b, num, (size_t)n) < 0)
		return log_oom();
	n = snprintf(num, sizeof(num), "%.17g", r->work_seconds);
	if (strbuf_add(b, num, (size_t)n) < 0 || strbuf_add(b, rb->tail, strlen(rb->tail)) < 0)
		return log_oom();
	rb->rows++;
	if (r->bucket_ns > rb->last_bucket)
		rb->last_bucket = r->bucket_ns;
	return 0;
}

/*
 * One roll-up table: every final bucket from the cursor on, in one insert.
 * The cursor (tbl "<table>@<grain_s>", a new grain starts afresh) moves to
 * the first bucket that is not final yet, so a bucket final in one boot
 * while the next boot's bucket of the same time is not gets sent again
 * next run, and collapses with itself in the cluster.
 */
static int ship_rollup(sqlite3 *db, struct http *h, const struct ship_options *o, bool paths,
		       struct ship_table_result *res)
{
	_cleanup_free_ char *query = NULL, *name = NULL;
	const char *table = paths ? "path_rollup" : "interval_rollup";
	struct rollup_batch rb = { .last_bucket = INT64_MIN };
	int64_t grain_s = o->rollup_ns / NSEC_PER_SEC, pending = INT64_MAX, next;
	struct rollup_query q = {
		.grain_ns = grain_s * NSEC_PER_SEC,
		.lo_ns = INT64_MIN,
		.hi_ns = INT64_MAX,
	};
	struct cursor c;
	int r;

	res->table = table;
	if (asprintf(&name, "%s@%" PRId64, table, grain_s) < 0 ||
	    asprintf(&query, "INSERT INTO %s.%s (machine_id, boot_uuid, grain_s, bucket_ns, %s, batch)"
		     " FORMAT TabSeparated", o->database, table,
		     paths ? "path, intervals, hitm, samples, work, work_seconds" :
		     "start_ns, end_ns, intervals, partial, not_analyzed, events_lost, dropped_intervals,"
		     " sampled, active_ns, samples_lost, throttled") < 0)
		return log_oom();
	r = db_exec(db, "BEGIN");
	if (r < 0)
		return r;
	r = cursor_get(db, name, &c);
	if (r >= 0 && o->resend)
		c.last_key = 0;
	q.from_ns = c.last_key;
	snprintf(rb.tail, sizeof(rb.tail), "\t%" PRId64 "\n", c.batch + 1);
	snprintf(rb.grain, sizeof(rb.grain), "%" PRId64 "\t", grain_s);
	if (r >= 0)
		r = paths ? rollup_paths(db, &q, rollup_path_row, &rb) :
			    rollup_buckets(db, &q, rollup_bucket_row, &rb);
	if (r >= 0)
		r = rollup_pending_from(db, q.grain_ns, q.from_ns, &pending);
	db_rollback(db);	/* a read transaction */
	if (r < 0)
		goto out;
	if (rb.rows == 0) {
		r = 0;
		goto out;
	}
	next = pending != INT64_MAX ? pending : rb.last_bucket + q.grain_ns;
	r = http_query(h, query, rb.b.p, rb.b.len, NULL);
	if (r < 0) {
		res->pending = rb.rows;
		r = log_error_errno(r, "ClickHouse did not take %s (batch %" PRId64 ", %" PRId64
				    " rows): %s; the cursor stays, the next run sends them again",
				    table, c.batch + 1, rb.rows, http_error(h));
		goto out;
	}
	fault_after_send(table);
	r = cursor_advance(db, name, next > c.last_key ? next : c.last_key, c.batch + 1, rb.rows);
	if (r < 0) {
		r = log_error_errno(r, "ClickHouse took %s batch %" PRId64 " but its cursor could not"
				    " be saved; the next run sends it again (the cluster collapses it)",
				    table, c.batch + 1);
		goto out;
	}
	res->rows = rb.rows;
	res->batches = 1;
out:
	free(rb.b.p);
	return r;
}

int ship_run(sqlite3 *db, struct http *h, const struct ship_options *o, struct ship_result *ret)
{
	int64_t analyzed = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = analyzed_bound(db, &analyzed, &ret->unanalyzed);
	if (r < 0)
		return r;
	for (size_t i = 0; i < SHIP_TABLES; i++) {
		r = ship_table(db, h, o, &tables[i], analyzed, &ret->t[i]);
		if (r < 0) {
			/* Say what waits, table by table, for the next run. */
			for (size_t j = i + 1; j < SHIP_TABLES; j++) {
				struct cursor c;

				ret->t[j].table = tables[j].name;
				if (cursor_get(db, tables[j].name, &c) >= 0)
					ret->t[j].pending = pending_rows(db, &tables[j], c.last_key,
						tables[j].key == KEY_ANALYZED ? analyzed : INT64_MAX);
			}
			return r;
		}
	}
	for (int k = 0; o->rollup_ns > 0 && k < 2; k++) {
		r = ship_rollup(db, h, o, k == 1, &ret->t[SHIP_TABLES + k]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Replaces every {name} in s by value. Caller frees. */
static char *subst(const char *s, const char *name, const char *value)
{
	struct strbuf b = {};
	size_t n = strlen(name);
	const char *p;

	while ((p = strstr(s, name))) {
		if (strbuf_add(&b, s, (size_t)(p - s)) < 0 || strbuf_add(&b, value, strlen(value)) < 0)
			goto oom;
		s = p + n;
	}
	if (strbuf_add(&b, s, strlen(s)) < 0)
		goto oom;
	return b.p;
oom:
	free(b.p);
	return NULL;
}

int ship_init(struct http *h, const char *database, const char *cluster)
{
	_cleanup_free_ char *sql = NULL, *a = NULL, *b = NULL;
	char *stmt, *save = NULL;
	int r, n = 0;

	/* They go into SQL unquoted: identifiers only. */
	if (!sql_identifier_valid(database) || !sql_identifier_valid(cluster))
		return log_error_errno(-EINVAL, "Database and cluster names are letters, digits and '_'"
				       " ('%s', '%s')", database, cluster);
	sql = strndup((const char *)clickhouse_sql, clickhouse_sql_len);
	if (!sql)
		return log_oom();
	/* Comments first: a ';' in one would split a statement. */
	for (char *p = sql; (p = strstr(p, "--"));) {
		size_t len = strcspn(p, "\n");

		memset(p, ' ', len);
	}
	a = subst(sql, "{db}", database);
	b = a ? subst(a, "{cluster}", cluster) : NULL;
	if (!b)
		return log_oom();
	for (stmt = strtok_r(b, ";", &save); stmt; stmt = strtok_r(NULL, ";", &save)) {
		stmt = strstrip(stmt);
		if (!*stmt)
			continue;
		r = http_query(h, stmt, NULL, 0, NULL);
		if (r < 0)
			return log_error_errno(r, "Failed to create the cluster schema: %s", http_error(h));
		n++;
	}
	log_info("Cluster schema: %d statements applied to database %s (cluster %s)", n, database, cluster);
	return 0;
}
