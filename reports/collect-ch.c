// SPDX-License-Identifier: GPL-2.0
/*
 * The report's passes from a ClickHouse cluster (schema/clickhouse/): the
 * same rows collect.c takes from SQLite files, from the roll-up tables.
 *
 * Pass 1 reads hosts, boots and the patch map's marker symbols (small: a
 * few rows per host) as TabSeparated. Pass 2 reads the roll-ups in host
 * batches (the tables' ORDER BY starts with machine_id, so a batch is a
 * range of the primary key), streamed as RowBinary and parsed as it
 * arrives into the per-host rows collect.c computes from; a batch's rows
 * are freed before the next is read, so memory is per batch, not per
 * fleet. A boot is named by cityHash64(machine_id, boot_uuid), 8 bytes a
 * row instead of two strings. Every read is FINAL: exact before merges;
 * in a subquery that keeps the version column, which ClickHouse 18.16's
 * FINAL over a Distributed table needs in its select list.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "log.h"
#include "paths.h"
#include "report-model.h"
#include "tsv.h"
#include "u64map.h"
#include "util.h"

#define HOST_BATCH 256		/* hosts per pass-2 query */
#define MAX_COLS TSV_MAX_FIELDS

struct cluster {
	struct report *r;
	struct http *h;
	const char *db;		/* identifier, checked */
	const char *origin;	/* what hosts were read from, for the JSON */
	int64_t grain_s;
	struct u64map *boots;	/* cityHash64(machine_id, boot_uuid) -> host << 24 | boot, + 1 */
};

static int run_tsv(struct cluster *c, const char *query, size_t min_fields,
		   int (*line)(char **f, size_t n, void *arg), void *arg)
{
	struct tsv_reader t = { .row = line, .arg = arg, .min_fields = min_fields };
	int r;

	r = http_query_stream(c->h, query, tsv_reader_feed, &t);
	if (r < 0 && r != -ENOMEM && r != -EPROTO)
		r = log_error_errno(r, "The cluster query failed: %s", http_error(c->h));
	else if (r == -EPROTO && http_error(c->h)[0])
		r = log_error_errno(r, "The cluster query failed: %s", http_error(c->h));
	if (r >= 0)
		return tsv_reader_end(&t);
	strbuf_done(&t.pend);
	return r;
}

/* --- RowBinary, streamed -------------------------------------------------------- */

/*
 * Column types, one letter each: u UInt64, i Int64, w UInt32, d Float64,
 * s String, I Nullable(Int64), D Nullable(Float64).
 */
struct rb_col {
	bool null;
	int64_t i;
	uint64_t u;
	double d;
	const char *s;
	size_t len;
};

struct rowbinary {
	const char *spec;
	int (*row)(const struct rb_col *c, void *arg);
	void *arg;
	struct strbuf pend;
	int64_t rows;
};

static uint64_t le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* One row from p (n bytes): its length, 0 when incomplete. */
static size_t rb_row(struct rowbinary *rb, const unsigned char *p, size_t n, struct rb_col *c)
{
	size_t o = 0;

	for (size_t k = 0; rb->spec[k]; k++) {
		char t = rb->spec[k];
		struct rb_col *col = &c[k];

		col->null = false;
		if (t == 'I' || t == 'D') {
			if (o >= n)
				return 0;
			col->null = p[o++] != 0;
			if (col->null)
				continue;
			t = t == 'I' ? 'i' : 'd';
		}
		switch (t) {
		case 'u':
		case 'i':
		case 'd':
			if (n - o < 8)
				return 0;
			col->u = le(p + o, 8);
			col->i = (int64_t)col->u;
			memcpy(&col->d, &col->u, 8);
			o += 8;
			break;
		case 'w':
			if (n - o < 4)
				return 0;
			col->u = le(p + o, 4);
			col->i = (int64_t)col->u;
			o += 4;
			break;
		case 's': {
			uint64_t len = 0;
			unsigned int shift = 0;

			for (;;) {
				if (o >= n || shift > 63)
					return 0;
				len |= (uint64_t)(p[o] & 0x7f) << shift;
				shift += 7;
				if (!(p[o++] & 0x80))
					break;
			}
			if (n - o < len)
				return 0;
			col->s = (const char *)p + o;
			col->len = (size_t)len;
			o += (size_t)len;
			break;
		}
		}
	}
	return o;
}

static int rb_feed(const char *data, size_t len, void *arg)
{
	struct rowbinary *rb = arg;
	struct rb_col c[MAX_COLS] = {};
	const unsigned char *p;
	size_t n, off = 0, used;
	int r;

	/* Most rows lie whole in the chunk: parse it in place, keep the tail. */
	if (rb->pend.len) {
		if (strbuf_add(&rb->pend, data, len) < 0)
			return log_oom();
		p = (const unsigned char *)rb->pend.p;
		n = rb->pend.len;
	} else {
		p = (const unsigned char *)data;
		n = len;
	}
	while (off < n && (used = rb_row(rb, p + off, n - off, c)) > 0) {
		r = rb->row(c, rb->arg);
		if (r < 0)
			return r;
		rb->rows++;
		off += used;
	}
	if (rb->pend.len) {
		memmove(rb->pend.p, rb->pend.p + off, n - off);
		rb->pend.len = n - off;
	} else if (off < n && strbuf_add(&rb->pend, data + off, n - off) < 0) {
		return log_oom();
	}
	return 0;
}

static int run_rowbinary(struct cluster *c, const char *query, const char *spec,
			 int (*row)(const struct rb_col *c, void *arg), void *arg, int64_t *ret_rows)
{
	struct rowbinary rb = { .spec = spec, .row = row, .arg = arg };
	int r;

	r = http_query_stream(c->h, query, rb_feed, &rb);
	if (r >= 0 && rb.pend.len)
		r = log_error_errno(EPROTO, "The cluster's answer ended inside a row");
	else if (r < 0 && http_error(c->h)[0])
		r = log_error_errno(r, "The cluster query failed: %s", http_error(c->h));
	free(rb.pend.p);
	if (ret_rows)
		*ret_rows += rb.rows;
	return r;
}

/* --- pass 1 ------------------------------------------------------------------------- */

static int host_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct host *)elem)->machine_id);
}

/* Hosts are read in machine_id order: a binary search. */
static struct host *find_host(struct report *r, const char *machine_id)
{
	return bsearch(machine_id, r->hosts, r->nr_hosts, sizeof(struct host), host_cmp);
}

static int host_line(char **f, size_t n, void *arg)
{
	struct cluster *c = arg;
	struct host *h;

	(void)n;
	if (!f[0])
		return 0;
	if (c->r->nr_hosts && strcmp(c->r->hosts[c->r->nr_hosts - 1].machine_id, f[0]) >= 0)
		return log_error_errno(EPROTO, "The cluster's hosts are not in machine_id order");
	return collect_host_add(c->r, c->origin, f[0], f[1] ? f[1] : "", false, &h);
}

static int64_t num(const char *s)
{
	return s ? strtoll(s, NULL, 10) : 0;
}

static int boot_line(char **f, size_t n, void *arg)
{
	struct cluster *c = arg;
	struct host *h = f[0] ? find_host(c->r, f[0]) : NULL;
	struct boot_row b = {
		.start_ns = num(f[2]),
		.first_seen_ns = num(f[3]),
		.last_seen_ns = num(f[4]),
		.nr_cpus = (int)num(f[5]),
		.release = f[6],
		.version = f[7],
		.build_id = f[8],
		.pmu_kind = f[9],
		.pmu_detail = f[10],
		.lru_gen = f[11],
	};
	size_t hi, bi;
	uint64_t key = f[1] ? strtoull(f[1], NULL, 10) : 0;
	int r;

	(void)n;
	if (!h)
		return 0;	/* a boot whose host row is missing */
	hi = (size_t)(h - c->r->hosts);
	/* As SQLite numbers a host's boots, in time order. */
	b.boot_id = (int64_t)h->nr_boots + 1;
	r = collect_boot_add(h, &b, &bi);
	if (r < 0)
		return r;
	if (u64map_put(c->boots, key, (void *)(uintptr_t)(((uint64_t)hi << 24 | bi) + 1)) < 0)
		return log_oom();
	return 0;
}

/* The host and boot of a boot key; false when unknown. */
static bool boot_of(const struct cluster *c, uint64_t key, size_t *ret_host, size_t *ret_boot)
{
	uintptr_t v = (uintptr_t)u64map_get(c->boots, key);

	if (!v)
		return false;
	v--;
	*ret_host = (size_t)(v >> 24);
	*ret_boot = (size_t)(v & 0xffffff);
	return true;
}

static int marker_line(char **f, size_t n, void *arg)
{
	struct cluster *c = arg;
	size_t hi, bi;

	(void)n;
	if (!f[0] || !f[1] || !boot_of(c, strtoull(f[0], NULL, 10), &hi, &bi))
		return 0;
	return collect_marker_add(&c->r->hosts[hi], bi, f[1]);
}

static int pass1(struct cluster *c)
{
	const struct patch_map *map = c->r->o.patches;
	struct strbuf q = {};
	int r;

	if (strbuf_printf(&q, "SELECT machine_id, hostname FROM (SELECT * FROM %s.hosts FINAL)"
			" ORDER BY machine_id FORMAT TabSeparated", c->db) < 0)
		return log_oom();
	r = run_tsv(c, q.p, 2, host_line, c);
	free(q.p);
	if (r < 0)
		return r;

	q = (struct strbuf){};
	if (strbuf_printf(&q, "SELECT machine_id, cityHash64(machine_id, boot_uuid),"
			" ifNull(boot_time_ns, first_seen_ns) AS s, first_seen_ns, last_seen_ns,"
			" nr_cpus_online, kernel_release, kernel_version, kernel_build_id, pmu_kind,"
			" pmu_detail, lru_gen FROM (SELECT * FROM %s.boots FINAL) ORDER BY machine_id, s, first_seen_ns"
			" FORMAT TabSeparated", c->db) < 0)
		return log_oom();
	r = run_tsv(c, q.p, 12, boot_line, c);
	free(q.p);
	if (r < 0)
		return r;

	if (map && patch_map_nr_ksyms(map) > 0) {
		q = (struct strbuf){};
		r = strbuf_printf(&q, "SELECT DISTINCT cityHash64(machine_id, boot_uuid), name FROM (SELECT machine_id,"
				" boot_uuid, name, batch FROM %s.ksyms FINAL WHERE name IN (", c->db);
		for (size_t i = 0; r >= 0 && i < patch_map_nr_ksyms(map); i++) {
			if (i)
				r = strbuf_add(&q, ",", 1);
			if (r >= 0)
				r = sql_add_string(&q, patch_map_ksym(map, i));
		}
		if (r >= 0)
			r = strbuf_add(&q, ")) FORMAT TabSeparated", strlen(")) FORMAT TabSeparated"));
		if (r < 0) {
			free(q.p);
			return log_oom();
		}
		r = run_tsv(c, q.p, 2, marker_line, c);
		free(q.p);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < c->r->nr_hosts; i++) {
		r = collect_host_finish(c->r, &c->r->hosts[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* --- pass 2 ----------------------------------------------------------------------------- */

struct batch {
	struct cluster *c;
	size_t first, n;	/* hosts [first, first + n) */
	struct rows *w[HOST_BATCH];
};

static int64_t bucket_id(int64_t bucket_ns, size_t boot)
{
	return bucket_ns + (int64_t)boot;	/* as collect.c's for SQLite roll-ups */
}

/* boot, bucket_ns, start_ns, end_ns, intervals, partial, not_analyzed, sampled,
 * events_lost, dropped_intervals, active_ns, samples_lost, throttled */
#define IVL_SPEC "uiiiwwwwiiiii"

static int ivl_row(const struct rb_col *col, void *arg)
{
	struct batch *b = arg;
	struct ivl_row v = {
		.start_ns = col[2].i,
		.end_ns = col[3].i,
		.intervals = col[4].i,
		.partial = col[5].i,
		.not_analyzed = col[6].i,
		.sampled = col[7].i,
		.events_lost = col[8].i,
		.dropped_intervals = col[9].i,
		.active_ns = col[10].i,
		.samples_lost = col[11].i,
		.throttled = col[12].i,
	};
	size_t hi, bi;

	if (!boot_of(b->c, col[0].u, &hi, &bi) || hi < b->first || hi >= b->first + b->n)
		return 0;
	v.boot = bi;
	v.id = bucket_id(col[1].i, bi);
	return collect_rows_interval(b->c->r, &b->c->r->hosts[hi], b->w[hi - b->first], &v);
}

/* boot, bucket_ns, path, hitm, samples, work, work_seconds */
#define PATH_SPEC "uisIIDd"

static int path_row(const struct rb_col *col, void *arg)
{
	struct batch *b = arg;
	char name[64];
	struct rate_row v = {
		.has_hitm = !col[3].null,
		.hitm = col[3].null ? 0 : col[3].i,
		.samples = col[4].null ? 0 : col[4].i,
		.has_work = !col[5].null,
		.work = col[5].null ? 0 : col[5].d,
		.work_seconds = col[6].d,
	};
	size_t hi, bi;
	struct rows *w;
	double rate;
	int p;

	if (!boot_of(b->c, col[0].u, &hi, &bi) || hi < b->first || hi >= b->first + b->n)
		return 0;
	w = b->w[hi - b->first];
	v.id = bucket_id(col[1].i, bi);
	v.start_ns = collect_rows_start(w, v.id);
	if (v.start_ns == INT64_MIN)
		return 0;	/* its bucket is outside the range */
	if (col[2].len >= sizeof(name))
		return 0;	/* no path name is that long */
	memcpy(name, col[2].s, col[2].len);
	name[col[2].len] = '\0';
	v.path = name;
	p = path_index(name);
	rate = collect_bucket_rate(p, v.has_hitm, v.hitm, v.has_work, v.work);
	v.has_rate = !isnan(rate);
	v.rate = v.has_rate ? rate : 0;
	return collect_rows_rate(b->c->r, &b->c->r->hosts[hi], w, &v);
}

/* The WHERE of a batch: its hosts are a range of the tables' primary key. */
static int batch_where(struct strbuf *q, const struct batch *b)
{
	const struct report *r = b->c->r;

	if (strbuf_printf(q, " WHERE grain_s = %" PRId64 " AND machine_id >= ", b->c->grain_s) < 0 ||
	    sql_add_string(q, r->hosts[b->first].machine_id) < 0 || strbuf_add(q, " AND machine_id <= ", strlen(" AND machine_id <= ")) < 0 ||
	    sql_add_string(q, r->hosts[b->first + b->n - 1].machine_id) < 0)
		return -ENOMEM;
	return 0;
}

static int read_batch(struct cluster *c, struct batch *b, int64_t *ret_rows)
{
	struct report *r = c->r;
	int64_t grain_ns = c->grain_s * NSEC_PER_SEC;
	struct strbuf q = {};
	int ret;

	for (size_t i = 0; i < b->n; i++) {
		ret = collect_host_begin(r, &r->hosts[b->first + i]);
		if (ret < 0)
			return ret;
		b->w[i] = collect_rows_new();
		if (!b->w[i])
			return -ENOMEM;
	}
	/* The buckets, in time order per host (collect.c's rows are). */
	if (strbuf_printf(&q, "SELECT cityHash64(machine_id, boot_uuid), bucket_ns, start_ns, end_ns,"
			" intervals, partial, not_analyzed, sampled, events_lost, dropped_intervals,"
			" active_ns, samples_lost, throttled FROM (SELECT * FROM %s.interval_rollup FINAL", c->db) < 0 ||
	    batch_where(&q, b) < 0 ||
	    strbuf_printf(&q, " AND start_ns >= %" PRId64 " AND start_ns < %" PRId64
			") ORDER BY machine_id, start_ns FORMAT RowBinary", r->data_lo_ns, r->o.until_ns) < 0) {
		free(q.p);
		return log_oom();
	}
	ret = run_rowbinary(c, q.p, IVL_SPEC, ivl_row, b, ret_rows);
	free(q.p);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < b->n; i++) {
		ret = collect_rows_index(r, &r->hosts[b->first + i], b->w[i]);
		if (ret < 0)
			return ret;
	}

	/* The path rows, in any order: each finds its bucket. */
	q = (struct strbuf){};
	if (strbuf_printf(&q, "SELECT cityHash64(machine_id, boot_uuid), bucket_ns, path, hitm, samples,"
			" work, work_seconds FROM (SELECT machine_id, boot_uuid, bucket_ns, path, hitm, samples,"
			" work, work_seconds, batch FROM %s.path_rollup FINAL", c->db) < 0 ||
	    batch_where(&q, b) < 0 ||
	    strbuf_printf(&q, " AND bucket_ns >= %" PRId64 " AND bucket_ns < %" PRId64 ") FORMAT RowBinary",
			r->data_lo_ns - grain_ns, r->o.until_ns) < 0) {
		free(q.p);
		return log_oom();
	}
	ret = run_rowbinary(c, q.p, PATH_SPEC, path_row, b, ret_rows);
	free(q.p);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < b->n; i++) {
		ret = collect_rows_finish(r, &r->hosts[b->first + i], b->w[i]);
		if (ret < 0)
			return ret;
		collect_rows_free(b->w[i]);
		b->w[i] = NULL;
	}
	return 0;
}

static int pass2(struct cluster *c, int64_t *ret_rows)
{
	struct report *r = c->r;
	int ret = 0;

	for (size_t first = 0; first < r->nr_hosts; first += HOST_BATCH) {
		struct batch b = {
			.c = c,
			.first = first,
			.n = r->nr_hosts - first < HOST_BATCH ? r->nr_hosts - first : HOST_BATCH,
		};

		report_progress(r, "reading rates", first, r->nr_hosts, r->hosts[first].hostname);
		ret = read_batch(c, &b, ret_rows);
		for (size_t i = 0; i < b.n; i++)
			collect_rows_free(b.w[i]);
		if (ret < 0)
			return ret;
	}
	report_progress(r, "", r->nr_hosts, r->nr_hosts, NULL);
	return 0;
}

/* --- lines and grades, fleet-wide --------------------------------------------------- */

struct lines_ctx {
	struct cluster *c;
	int p;
};

/* machine_id, path, line_addr, object_type, field, comm, tgid, lcl, rmt, peer, hitm,
 * loads, stores, symbols */
static int line_line(char **f, size_t n, void *arg)
{
	struct lines_ctx *lc = arg;
	struct report *r = lc->c->r;
	struct host *h = f[0] ? find_host(r, f[0]) : NULL;
	struct top_line *top = lc->p >= 0 ? r->fleet[lc->p].top : r->other_top;
	size_t *nr = lc->p >= 0 ? &r->fleet[lc->p].nr_top : &r->nr_other_top;
	struct top_line l;

	(void)n;
	if (!h)
		return 0;
	l = (struct top_line){
		.host = (size_t)(h - r->hosts),
		.line_addr = num(f[2]),
		.tgid = f[6] ? num(f[6]) : -1,
		.lcl_hitm = num(f[7]),
		.rmt_hitm = num(f[8]),
		.peer = num(f[9]),
		.hitm = num(f[10]),
		.loads = num(f[11]),
		.stores = num(f[12]),
	};
	if (*nr == TOP_LINES && top[TOP_LINES - 1].hitm >= l.hitm)
		return 0;
	l.object_type = f[3] ? strdup(f[3]) : NULL;
	l.field = f[4] ? strdup(f[4]) : NULL;
	l.comm = f[5] ? strdup(f[5]) : NULL;
	l.symbols = f[13] && *f[13] ? strdup(f[13]) : NULL;
	l.path = f[1] ? strdup(f[1]) : NULL;
	top_line_add(top, nr, &l);
	return 0;
}

/* The paths' ids as a SQL list: 'P1','P2',... */
static int path_list(struct strbuf *q)
{
	for (int p = 0; p < paths_nr(); p++)
		if ((p && strbuf_add(q, ",", 1) < 0) || sql_add_string(q, path_get(p)->id) < 0)
			return -ENOMEM;
	return 0;
}

static int read_lines(struct cluster *c)
{
	struct report *r = c->r;
	int ret;

	for (int p = -1; p < paths_nr(); p++) {
		struct lines_ctx lc = { .c = c, .p = p };
		struct strbuf q = {};

		/* As collect.c per host: per boot, path, line, object and field. */
		ret = strbuf_printf(&q, "SELECT machine_id, path, line_addr, object_type, field, any(comm),"
				  " any(tgid), sum(lcl_hitm), sum(rmt_hitm), sum(lcl_peer + rmt_peer),"
				  " sum(lcl_hitm + rmt_hitm + lcl_peer + rmt_peer) AS hitm, sum(loads),"
				  " sum(stores), arrayStringConcat(groupUniqArray(symbol), ',')"
				  " FROM (SELECT * FROM %s.hitm_lines FINAL WHERE start_ns >= %" PRId64
				  " AND start_ns < %" PRId64 " AND path %s", c->db, r->o.since_ns, r->o.until_ns, p >= 0 ? "= " : "NOT IN (");
		if (ret >= 0)
			ret = p >= 0 ? sql_add_string(&q, path_get(p)->id) : path_list(&q);
		if (ret >= 0)
			ret = strbuf_printf(&q, "%s) GROUP BY machine_id, boot_uuid, path, line_addr, object_type,"
					  " field HAVING hitm > 0 ORDER BY hitm DESC LIMIT %d FORMAT TabSeparated",
					  p >= 0 ? "" : ")", TOP_LINES);
		if (ret < 0) {
			free(q.p);
			return log_oom();
		}
		ret = run_tsv(c, q.p, 14, line_line, &lc);
		free(q.p);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int grade_line(char **f, size_t n, void *arg)
{
	struct cluster *c = arg;
	int p = f[0] ? path_index(f[0]) : -1;
	int k = GRADE_NONE;

	(void)n;
	if (p < 0)
		return 0;
	for (int i = 0; f[1] && i < NR_GRADES; i++)
		if (strcmp(f[1], grade_names[i]) == 0)
			k = i;
	c->r->fleet[p].grade_hitm[k] += num(f[2]);
	return 0;
}

static int read_grades(struct cluster *c)
{
	struct strbuf q = {};
	int ret;

	if (strbuf_printf(&q, "SELECT path, ifNull(grade, 'none'), sum(lcl_hitm + rmt_hitm)"
			" FROM (SELECT * FROM %s.hitm_lines FINAL WHERE start_ns >= %" PRId64 " AND start_ns < %" PRId64
			") GROUP BY path, grade FORMAT TabSeparated", c->db, c->r->o.since_ns,
			c->r->o.until_ns) < 0)
		return log_oom();
	ret = run_tsv(c, q.p, 3, grade_line, c);
	free(q.p);
	return ret;
}

/* --- parsing alone, for the fuzzer ------------------------------------------------ */

static int touch_tsv(char **f, size_t n, void *arg)
{
	size_t *sum = arg;

	for (size_t i = 0; i < n; i++)
		*sum += f[i] ? strlen(f[i]) : 1;
	return 0;
}

static int touch_row(const struct rb_col *c, void *arg)
{
	size_t *sum = arg;

	for (size_t i = 0; i < MAX_COLS; i++)
		if (!c[i].null && c[i].s && c[i].len)
			*sum += (unsigned char)c[i].s[c[i].len - 1];
	return 0;
}

ssize_t collect_ch_parse(int kind, const char *data, size_t len, size_t chunk)
{
	struct tsv_reader t = { .row = touch_tsv, .min_fields = 1 };
	struct rowbinary rb = { .spec = kind == 1 ? IVL_SPEC : PATH_SPEC, .row = touch_row };
	size_t sum = 0;
	ssize_t rows = 0;
	int r = 0;

	t.arg = rb.arg = &sum;
	if (!chunk)
		chunk = 1;
	for (size_t o = 0; o < len && r >= 0; o += chunk) {
		size_t n = len - o < chunk ? len - o : chunk;

		r = kind == 0 ? tsv_reader_feed(data + o, n, &t) : rb_feed(data + o, n, &rb);
	}
	rows = kind == 0 ? (ssize_t)sum : rb.rows;
	strbuf_done(&t.pend);
	strbuf_done(&rb.pend);
	return r < 0 ? r : rows;
}

/* --- the run ------------------------------------------------------------------------------ */

int report_run_clickhouse(struct report *r, struct http *h, const char *database, const char *origin)
{
	struct cluster c = {
		.r = r,
		.h = h,
		.db = database,
		.origin = origin,
		.grain_s = r->o.rollup_ns / NSEC_PER_SEC,
	};
	int64_t rows = 0;
	int ret;

	if (!sql_identifier_valid(database))
		return log_error_errno(EINVAL, "The cluster's database is letters, digits and '_', not '%s'",
				       database);
	if (c.grain_s <= 0)
		return log_error_errno(EINVAL, "The cluster is read at a roll-up grain of whole seconds");
	c.boots = u64map_new();
	if (!c.boots)
		return log_oom();
	report_begin(r, 1);
	r->source = "clickhouse";
	report_progress(r, "reading boots", 0, 1, origin);
	ret = pass1(&c);
	report_progress(r, "", 1, 1, NULL);
	if (ret < 0)
		goto out;
	if (r->nr_hosts == 0) {
		ret = log_error_errno(ENODATA, "%s: the cluster has no hosts in database %s", origin, database);
		goto out;
	}
	ret = report_prepare(r);
	if (ret < 0)
		goto out;
	ret = pass2(&c, &rows);
	if (ret < 0)
		goto out;
	ret = read_grades(&c);
	if (ret < 0)
		goto out;
	ret = read_lines(&c);
	if (ret < 0)
		goto out;
	ret = report_end(r);
	log_debug("%s: %" PRId64 " roll-up rows read in %.1f s", origin, rows, r->seconds);
	r->cluster_rows = rows;
out:
	u64map_free(c.boots);
	return ret;
}
