// SPDX-License-Identifier: GPL-2.0
/* The attribution engine: mem_lines -> line_attribution -> path_intervals (path-intervals.c). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "analyze.h"
#include "db.h"
#include "kallsyms.h"
#include "log.h"
#include "objects.h"
#include "path-intervals.h"
#include "paths.h"
#include "u64map.h"
#include "util.h"

/* Intervals per transaction: keeps the daemon's writes from waiting long. */
#define BATCH_INTERVALS	256

/* Callchain, symbolized once per run. */
struct chain {
	size_t n;
	uint64_t *ips;
	const char **syms;	/* into the symtab; NULL: unknown */
	char *text;
};

struct ctx {
	sqlite3 *db;
	const struct rules *rules;
	struct objects *obj;
	int64_t boot_id;
	struct u64map *chains;	/* callchain_id -> struct chain */
	sqlite3_stmt *get_chain, *put_chain_syms, *put_attr, *rows, *retry_rows;
	struct path_intervals *pi;
	struct analyze_stats *stats;
	size_t anchor_warned;
	uint32_t line_size;	/* the boot's cache line, bytes; 0: unknown */
};

struct row {
	int64_t interval_id, t0, t1;
	uint64_t line, addr, ip;
	int64_t offset, callchain_id;
};

static void chain_free(struct chain *ch)
{
	if (!ch)
		return;
	free(ch->ips);
	free(ch->syms);
	free(ch->text);
	free(ch);
}

static void ctx_done(struct ctx *c)
{
	uint64_t k;
	void *v;
	size_t it = 0;

	while (c->chains && u64map_next(c->chains, &it, &k, &v))
		chain_free(v);
	u64map_free(c->chains);
	c->chains = NULL;
	sqlite3_stmt **sts[] = { &c->get_chain, &c->put_chain_syms, &c->put_attr, &c->rows,
				 &c->retry_rows };
	for (size_t i = 0; i < ARRAY_SIZE(sts); i++) {
		db_finalize(*sts[i]);
		*sts[i] = NULL;
	}
	path_intervals_free(c->pi);
	c->pi = NULL;
	objects_free(c->obj);
	c->obj = NULL;
}

static int ctx_prepare(struct ctx *c)
{
	const struct db_stmt_sql stmts[] = {
		{ &c->get_chain, "SELECT ips FROM callchains WHERE callchain_id = ?1" },
		{ &c->put_chain_syms,
		  "INSERT OR REPLACE INTO callchain_symbols(callchain_id, symbols) VALUES (?1, ?2)" },
		{ &c->put_attr,
		  "INSERT OR REPLACE INTO line_attribution(interval_id, line_addr, offset, ip,"
		  " callchain_id, object_type, object_ref, object_addr, object_offset, field,"
		  " field_offset, symbol, path, rule, reason, grade)"
		  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)" },
		{ &c->rows,
		  "SELECT l.interval_id, i.start_ns, i.end_ns, l.line_addr, l.offset, l.ip,"
		  " l.callchain_id FROM mem_lines l JOIN intervals i USING (interval_id)"
		  " WHERE i.boot_id = ?1 AND l.interval_id > ?2 AND l.interval_id <= ?3"
		  " ORDER BY l.interval_id" },
		{ &c->retry_rows,
		  "SELECT a.interval_id, i.start_ns, i.end_ns, a.line_addr, a.offset, a.ip,"
		  " a.callchain_id, a.path FROM line_attribution a JOIN intervals i USING (interval_id)"
		  " WHERE i.boot_id = ?1 AND (a.path = 'unresolved' OR"
		  /* typed by the code path alone: a learned object may type it now */
		  "  a.grade = 'path' OR"
		  /* with new symbols: rows that had an unknown IP or frame */
		  "  (?2 AND (a.symbol IS NULL OR a.callchain_id IN"
		  "   (SELECT callchain_id FROM callchain_symbols WHERE symbols LIKE '0x%'"
		  "    OR symbols LIKE '% <- 0x%'))))" },
	};
	int r;

	c->chains = u64map_new();
	if (!c->chains)
		return log_oom();
	r = db_prepare_all(c->db, stmts, ARRAY_SIZE(stmts));
	if (r >= 0)
		r = path_intervals_new(c->db, c->obj, &c->pi);
	return r;
}

/* --- callchains ------------------------------------------------------------ */

static int chain_get(struct ctx *c, int64_t id, const struct chain **ret)
{
	const struct symtab *syms = objects_symtab(c->obj);
	struct chain *ch = u64map_get(c->chains, (uint64_t)id);
	const char *ips, *p;
	size_t len = 0, cap = 0;
	int r, rc;

	if (ch) {
		*ret = ch;
		return 0;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return log_oom();
	sqlite3_reset(c->get_chain);
	sqlite3_bind_int64(c->get_chain, 1, id);
	rc = sqlite3_step(c->get_chain);
	if (rc == SQLITE_ROW) {
		ips = (const char *)sqlite3_column_text(c->get_chain, 0);
		for (p = ips; p && *p;) {
			char *end;
			uint64_t ip = strtoull(p, &end, 16);

			if (end == p)
				break;
			if (grow_array((void **)&ch->ips, &cap, sizeof(*ch->ips), ch->n + 1) < 0)
				goto oom;
			ch->ips[ch->n++] = ip;
			p = end;
			while (*p == ' ')
				p++;
		}
	} else if (rc != SQLITE_DONE) {
		chain_free(ch);
		return db_step_failed(c->get_chain, rc);
	}
	ch->syms = calloc(ch->n + 1, sizeof(*ch->syms));
	ch->text = calloc(1, ch->n * 96 + 1);
	if (!ch->syms || !ch->text)
		goto oom;
	for (size_t i = 0; i < ch->n; i++) {
		const struct ksym *k = symtab_lookup(syms, ch->ips[i]);
		char buf[96];

		ch->syms[i] = k ? k->name : NULL;
		symtab_format(syms, ch->ips[i], buf, sizeof(buf));
		len += (size_t)snprintf(ch->text + len, ch->n * 96 + 1 - len, "%s%s",
					i ? " <- " : "", buf);
	}
	if (u64map_put(c->chains, (uint64_t)id, ch) < 0)
		goto oom;
	if (ch->n) {
		sqlite3_reset(c->put_chain_syms);
		sqlite3_bind_int64(c->put_chain_syms, 1, id);
		sqlite3_bind_text(c->put_chain_syms, 2, ch->text, -1, SQLITE_STATIC);
		r = db_step_done(c->db, c->put_chain_syms);
		if (r < 0)
			return r;
	}
	*ret = ch;
	return 0;
oom:
	chain_free(ch);
	return log_oom();
}

/* --- one row --------------------------------------------------------------- */

struct attribution {
	struct typed_addr t;
	char symbol[128];
	bool has_symbol;
	char path[64];
	const char *rule;
};

struct fits_ctx {
	const struct ctx *c;
	uint64_t addr;
};

/*
 * as=STRUCT.FIELD: the address's offset in its cache line is inside the
 * field, for a struct that starts on a line (rules.conf says which may be
 * named so): the field's BTF offset modulo the line size. A kernel address
 * outside the image only; never when BTF or the line size is unknown.
 */
static bool fits_field(void *data, const char *st, const char *field)
{
	const struct fits_ctx *fc = data;
	const struct layout *l = objects_layout(fc->c->obj, st);
	const struct layout_field *f = layout_find(l, field);
	uint32_t line = fc->c->line_size;

	if (!f || !f->size || !line || strcmp(addr_region(fc->addr), "kernel") != 0)
		return false;
	if (f->size >= line)
		return true;
	return (fc->addr - f->offset) % line < f->size;
}

static int attribute(struct ctx *c, const struct row *row, struct attribution *a)
{
	const struct symtab *syms = objects_symtab(c->obj);
	const struct ksym *k = symtab_lookup(syms, row->ip);
	const struct chain *ch = NULL;
	struct fits_ctx fc = { c, row->addr };
	const char *as_st, *as_field;
	struct rule_input in;
	const struct rule *rule;
	int r;

	if (row->callchain_id) {
		r = chain_get(c, row->callchain_id, &ch);
		if (r < 0)
			return r;
	}
	objects_resolve(c->obj, row->addr, row->t0, row->t1, &a->t);
	if (objects_error(c->obj))
		return objects_error(c->obj);
	a->has_symbol = !!k;
	symtab_format(syms, row->ip, a->symbol, sizeof(a->symbol));
	in = (struct rule_input){
		.object = a->t.object_type,
		.field = a->t.has_field ? a->t.field : NULL,
		.offset = a->t.object_offset,
		.ip = k ? k->name : NULL,
		.chain = ch ? ch->syms : NULL,
		.chain_n = ch ? ch->n : 0,
		.has_chain = ch && ch->n > 0,
		.region = a->t.region,
		.fits = fits_field,
		.fits_ctx = &fc,
	};
	rule = rules_match(c->rules, &in, a->path, sizeof(a->path));
	a->rule = rule ? rule_name(rule) : NULL;
	if (rule && !a->t.object_type && rule_as(rule, &as_st, &as_field)) {
		/* typed by the code path: the field, not the object */
		const struct layout_field *f = layout_find(objects_layout(c->obj, as_st), as_field);

		a->t.object_type = as_st;
		a->t.addr_unknown = true;
		a->t.has_field = true;
		snprintf(a->t.field, sizeof(a->t.field), "%s", as_field);
		a->t.field_offset = f && c->line_size ?
			(uint32_t)((row->addr - f->offset) % c->line_size) : 0;
		a->t.grade = "path";
		snprintf(a->t.reason, sizeof(a->t.reason), "%s.%s by the code path (%s at the field's "
			 "offset in the cache line); the object is unknown", as_st, as_field,
			 a->has_symbol ? a->symbol : "IP");
	} else if (rule && !a->t.object_type && strcmp(a->path, "unresolved") != 0) {
		a->t.grade = "path";	/* a rule on the IP and callchain alone */
	} else if (!rule || strcmp(a->path, "unresolved") == 0) {
		a->t.grade = NULL;
	}
	return 0;
}

static int put_attribution(struct ctx *c, const struct row *row, const struct attribution *a)
{
	sqlite3_stmt *st = c->put_attr;

	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, row->interval_id);
	sqlite3_bind_int64(st, 2, (int64_t)row->line);
	sqlite3_bind_int64(st, 3, row->offset);
	sqlite3_bind_int64(st, 4, (int64_t)row->ip);
	sqlite3_bind_int64(st, 5, row->callchain_id);
	if (a->t.object_type) {
		sqlite3_bind_text(st, 6, a->t.object_type, -1, SQLITE_STATIC);
		if (!a->t.addr_unknown) {
			sqlite3_bind_int64(st, 7, a->t.object_ref);
			sqlite3_bind_int64(st, 8, (int64_t)a->t.object_addr);
			sqlite3_bind_int64(st, 9, a->t.object_offset);
		}
	}
	if (a->t.has_field) {
		sqlite3_bind_text(st, 10, a->t.field, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 11, a->t.field_offset);
	}
	if (a->has_symbol)
		sqlite3_bind_text(st, 12, a->symbol, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, a->path, -1, SQLITE_STATIC);
	if (a->rule)
		sqlite3_bind_text(st, 14, a->rule, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 15, a->rule ? a->t.reason : "no rule matched", -1, SQLITE_STATIC);
	if (a->t.grade)
		sqlite3_bind_text(st, 16, a->t.grade, -1, SQLITE_STATIC);
	return db_step_done(c->db, st);
}

static void row_read(sqlite3_stmt *st, struct row *row)
{
	row->interval_id = sqlite3_column_int64(st, 0);
	row->t0 = sqlite3_column_int64(st, 1);
	row->t1 = sqlite3_column_int64(st, 2);
	row->line = (uint64_t)sqlite3_column_int64(st, 3);
	row->offset = sqlite3_column_int64(st, 4);
	row->addr = row->line + (uint64_t)row->offset;
	row->ip = (uint64_t)sqlite3_column_int64(st, 5);
	row->callchain_id = sqlite3_column_int64(st, 6);
}

/* --- anchors --------------------------------------------------------------- */

struct anchor_hit {
	const char *st;		/* into the rules */
	uint64_t base, size;
	int64_t lock_id;
	const char *anchor;	/* rule name */
	int64_t samples, first_interval_id;
};

struct anchor_hits {
	struct anchor_hit *v;
	size_t n, alloc;
};

/*
 * Where the object must start if addr is inside field f: the field's
 * start minus its offset, exactly when a contended lock is there, else the
 * 8-byte-aligned start that puts addr inside f (kernel structs holding
 * pointers are 8-byte aligned). Returns false when no such start exists.
 */
static bool anchor_base(const struct objects *o, const struct layout_field *f, uint64_t addr,
			uint64_t *ret_base, int64_t *ret_lock_id)
{
	uint64_t lock, k;
	int64_t lock_id = objects_lock_at(o, addr, &lock);

	if (lock_id) {
		*ret_base = lock - f->offset;
		*ret_lock_id = lock_id;
		return true;
	}
	k = (addr - f->offset) % 8;
	if (k >= f->size)
		return false;
	*ret_base = addr - f->offset - k;
	*ret_lock_id = 0;
	return true;
}

static int anchor_add(struct anchor_hits *h, const char *st, uint64_t base, uint64_t size,
		      int64_t lock_id, const char *anchor, int64_t interval_id)
{
	for (size_t i = 0; i < h->n; i++) {
		struct anchor_hit *x = &h->v[i];

		if (x->base == base && strcmp(x->st, st) == 0 && strcmp(x->anchor, anchor) == 0) {
			x->samples++;
			if (lock_id)
				x->lock_id = lock_id;
			return 0;
		}
	}
	if (grow_array((void **)&h->v, &h->alloc, sizeof(*h->v), h->n + 1) < 0)
		return -ENOMEM;
	h->v[h->n++] = (struct anchor_hit){ st, base, size, lock_id, anchor, 1, interval_id };
	return 0;
}

/* Tries every anchor on one (address, IP, callchain). */
static int anchor_try(struct ctx *c, struct anchor_hits *h, uint64_t addr, const char *ip,
		      const struct chain *ch, int64_t interval_id)
{
	struct rule_input in = {
		.ip = ip, .chain = ch ? ch->syms : NULL, .chain_n = ch ? ch->n : 0,
		.has_chain = ch && ch->n > 0, .offset = -1,
	};

	for (size_t i = 0; i < rules_count(c->rules); i++) {
		const struct rule *rule = rules_get(c->rules, i);
		const struct layout *l;
		const struct layout_field *f;
		uint64_t base;
		int64_t lock_id;

		if (!rule_is_anchor(rule) || !rule_matches(rule, &in))
			continue;
		l = objects_layout(c->obj, rule_anchor_struct(rule));
		f = layout_find(l, rule_anchor_field(rule));
		if (!l || !l->size || !f || !f->size) {
			if (!c->anchor_warned++)
				log_warning("Anchor %s (%s): this kernel's BTF has no %s.%s, ignoring",
					    rule_name(rule), rule_origin(rule), rule_anchor_struct(rule),
					    rule_anchor_field(rule));
			continue;
		}
		if (!anchor_base(c->obj, f, addr, &base, &lock_id)) {
			if (objects_error(c->obj))
				return objects_error(c->obj);
			continue;
		}
		if (anchor_add(h, rule_anchor_struct(rule), base, l->size, lock_id, rule_name(rule),
			       interval_id) < 0)
			return log_oom();
	}
	return 0;
}

static int cmp_hits(const void *a, const void *b)
{
	const struct anchor_hit *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->base < y->base ? -1 : x->base > y->base;
}

/* Stores the anchored objects found; the best evidenced first, and none
 * that would overlap a different object of the same type. */
static int anchors_store(struct ctx *c, struct anchor_hits *h)
{
	_cleanup_finalize_ sqlite3_stmt *ins = NULL;
	int r;

	if (!h->n)
		return 0;
	r = db_prepare(c->db, &ins,
		       "INSERT INTO anchored_objects(boot_id, struct, addr, size, lock_object_id,"
		       " evidence, samples, first_interval_id) VALUES (?1, ?2, ?3, ?4, nullif(?5, 0), ?6, ?7, ?8)"
		       " ON CONFLICT (boot_id, struct, addr) DO UPDATE SET"
		       "  samples = samples + excluded.samples,"
		       "  lock_object_id = coalesce(lock_object_id, excluded.lock_object_id),"
		       "  evidence = CASE WHEN instr(' ' || evidence || ' ', ' ' || excluded.evidence || ' ')"
		       "   THEN evidence ELSE evidence || ' ' || excluded.evidence END");
	if (r < 0)
		return r;
	qsort(h->v, h->n, sizeof(*h->v), cmp_hits);
	for (size_t i = 0; i < h->n; i++) {
		const struct anchor_hit *x = &h->v[i];
		struct typed_addr t;
		bool clash = false;

		/* an object already there, of this type, must start here */
		objects_resolve(c->obj, x->base, INT64_MIN, INT64_MAX, &t);
		if (t.object_type && (strcmp(t.object_type, x->st) != 0 || t.object_addr != x->base))
			clash = true;
		objects_resolve(c->obj, x->base + x->size - 1, INT64_MIN, INT64_MAX, &t);
		if (t.object_type && (strcmp(t.object_type, x->st) != 0 || t.object_addr != x->base))
			clash = true;
		if (objects_error(c->obj))
			return objects_error(c->obj);
		if (clash) {
			log_debug("Anchor %s at 0x%016" PRIx64 " overlaps a %s at 0x%016" PRIx64 ", ignoring",
				  x->anchor, x->base, t.object_type, t.object_addr);
			continue;
		}
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, c->boot_id);
		sqlite3_bind_text(ins, 2, x->st, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 3, (int64_t)x->base);
		sqlite3_bind_int64(ins, 4, (int64_t)x->size);
		sqlite3_bind_int64(ins, 5, x->lock_id);
		sqlite3_bind_text(ins, 6, x->anchor, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 7, x->samples);
		sqlite3_bind_int64(ins, 8, x->first_interval_id);
		r = db_step_done(c->db, ins);
		if (r < 0)
			return r;
		if (sqlite3_changes(c->db) && !t.object_type)
			c->stats->anchored++;
		/* the next candidates must see this one */
		r = objects_reload_anchored(c->obj, c->db);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Anchors from the samples of intervals (lo, hi]: only addresses no
 * learned object explains. */
static int anchors_scan(struct ctx *c, int64_t lo, int64_t hi)
{
	struct anchor_hits h = {};
	int r = 0, rc;

	sqlite3_reset(c->rows);
	sqlite3_bind_int64(c->rows, 1, c->boot_id);
	sqlite3_bind_int64(c->rows, 2, lo);
	sqlite3_bind_int64(c->rows, 3, hi);
	while ((rc = sqlite3_step(c->rows)) == SQLITE_ROW) {
		const struct ksym *k;
		const struct chain *ch = NULL;
		struct typed_addr t;
		struct row row;

		row_read(c->rows, &row);
		objects_resolve(c->obj, row.addr, row.t0, row.t1, &t);
		r = objects_error(c->obj);
		if (r < 0)
			goto out;
		if (t.object_type && strcmp(t.object_type, "lruvec") != 0)
			continue;
		if (row.callchain_id) {
			r = chain_get(c, row.callchain_id, &ch);
			if (r < 0)
				goto out;
		}
		k = symtab_lookup(objects_symtab(c->obj), row.ip);
		r = anchor_try(c, &h, row.addr, k ? k->name : NULL, ch, row.interval_id);
		if (r < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		r = db_step_failed(c->rows, rc);
		goto out;
	}
	sqlite3_reset(c->rows);
	r = anchors_store(c, &h);
out:
	sqlite3_reset(c->rows);
	free(h.v);
	return r;
}

/* Contended locks whose recorded callchain is an anchor's context. */
static int anchors_from_locks(struct ctx *c)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	struct anchor_hits h = {};
	int r, rc;

	r = db_prepare(c->db, &st, "SELECT addr, callchain FROM lock_objects WHERE boot_id = ?1"
				   " AND callchain IS NOT NULL AND callchain != ''");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, c->boot_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct symtab *syms = objects_symtab(c->obj);
		const char *p = (const char *)sqlite3_column_text(st, 1);
		const char *names[64];
		struct chain ch = { .syms = names };
		const char *ip = NULL;
		size_t n = 0;

		/* innermost first: the first IP is where it waited */
		while (*p && n < ARRAY_SIZE(names)) {
			char *end;
			uint64_t a = strtoull(p, &end, 16);
			const struct ksym *k;

			if (end == p)
				break;
			k = symtab_lookup(syms, a);
			if (n++ == 0)
				ip = k ? k->name : NULL;
			else
				names[ch.n++] = k ? k->name : NULL;
			p = end;
			while (*p == ' ')
				p++;
		}
		r = anchor_try(c, &h, (uint64_t)sqlite3_column_int64(st, 0), ip, &ch, 0);
		if (r < 0)
			goto out;
	}
	if (rc != SQLITE_DONE) {
		r = db_step_failed(st, rc);
		goto out;
	}
	r = anchors_store(c, &h);
out:
	free(h.v);
	return r;
}

/* --- intervals ------------------------------------------------------------- */

static int attribute_intervals(struct ctx *c, int64_t lo, int64_t hi)
{
	int r = 0, rc;

	sqlite3_reset(c->rows);
	sqlite3_bind_int64(c->rows, 1, c->boot_id);
	sqlite3_bind_int64(c->rows, 2, lo);
	sqlite3_bind_int64(c->rows, 3, hi);
	while ((rc = sqlite3_step(c->rows)) == SQLITE_ROW) {
		struct attribution a;
		struct row row;

		row_read(c->rows, &row);
		r = attribute(c, &row, &a);
		if (r >= 0)
			r = put_attribution(c, &row, &a);
		if (r < 0)
			goto out;
		c->stats->rows++;
	}
	if (rc != SQLITE_DONE)
		r = db_step_failed(c->rows, rc);
out:
	sqlite3_reset(c->rows);
	return r;
}

struct ival {
	int64_t id, t0, t1;
};

/* Attributes rows[0..n) again and rewrites the sums of their intervals. */
static int retry_apply(struct ctx *c, struct row *rows, size_t n)
{
	struct u64map *touched = u64map_new();
	int r = 0;

	if (!touched)
		return log_oom();
	for (size_t i = 0; i < n; i++) {
		struct attribution a;

		r = attribute(c, &rows[i], &a);
		if (r >= 0)
			r = put_attribution(c, &rows[i], &a);
		if (r >= 0)
			r = u64map_put(touched, (uint64_t)rows[i].interval_id, &rows[i]);
		if (r < 0)
			goto out;
	}
	c->stats->retried += n;
	/* the sums of every interval that had a retried row */
	{
		size_t it = 0;
		uint64_t k;
		void *v;

		while (u64map_next(touched, &it, &k, &v)) {
			const struct row *row = v;

			r = path_intervals_write(c->pi, row->interval_id, row->t0, row->t1);
			if (r < 0)
				goto out;
		}
	}
out:
	u64map_free(touched);
	return r;
}

/* Appends the rows a statement returns (row_read()'s columns). */
static int rows_collect(struct ctx *c, sqlite3_stmt *st, struct row **rows, size_t *n, size_t *alloc)
{
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow_array((void **)rows, alloc, sizeof(**rows), *n + 1) < 0)
			return log_oom();
		row_read(st, &(*rows)[(*n)++]);
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

/* Retries every unresolved row of the boot (and, all, every one new symbols
 * could name): after what changes the typing of any address. */
static int retry_rows(struct ctx *c, bool all)
{
	struct row *rows = NULL;
	size_t n = 0, alloc = 0;
	int r;

	/* read first: rewriting rows under a live SELECT of the same table
	 * could visit them twice */
	sqlite3_reset(c->retry_rows);
	sqlite3_bind_int64(c->retry_rows, 1, c->boot_id);
	sqlite3_bind_int(c->retry_rows, 2, all);
	r = rows_collect(c, c->retry_rows, &rows, &n, &alloc);
	sqlite3_reset(c->retry_rows);
	if (r >= 0)
		r = retry_apply(c, rows, n);
	free(rows);
	return r;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct row *a = pa, *b = pb;

	if (a->interval_id != b->interval_id)
		return a->interval_id < b->interval_id ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->ip != b->ip)
		return a->ip < b->ip ? -1 : 1;
	if (a->callchain_id != b->callchain_id)
		return a->callchain_id < b->callchain_id ? -1 : 1;
	return 0;
}

/*
 * Only mm_structs and locks were learned since ids mm_id and lock_id: the
 * rows they can type are those inside them (an mm_struct's span; a lock's
 * word). Each new object is one seek in line_attribution_unsettled,
 * however long the boot's history; retrying every unresolved row of the
 * boot, as after other news, grew with it on every interval that learned
 * anything.
 */
static int retry_near_learned(struct ctx *c, int64_t mm_id, int64_t lock_id)
{
	_cleanup_finalize_ sqlite3_stmt *objs = NULL, *near = NULL;
	uint64_t span = objects_mm_span(c->obj);
	struct row *rows = NULL;
	size_t n = 0, alloc = 0, kept = 0;
	int r, rc;

	r = db_prepare(c->db, &objs,
		       "SELECT addr, ?3 FROM mm_objects WHERE mm_object_id > ?1"
		       " AND instr(' ' || ?2 || ' ', ' ' || boot_id || ' ') > 0"
		       " UNION ALL SELECT addr, 4 FROM lock_objects WHERE lock_object_id > ?4"
		       " AND instr(' ' || ?2 || ' ', ' ' || boot_id || ' ') > 0");
	if (r >= 0)
		r = db_prepare(c->db, &near,
			       "SELECT a.interval_id, i.start_ns, i.end_ns, a.line_addr, a.offset, a.ip,"
			       /* CROSS JOIN: the address range first, never the boot's intervals */
			       " a.callchain_id FROM line_attribution a CROSS JOIN intervals i"
			       " ON i.interval_id = a.interval_id"
			       " WHERE (a.path = 'unresolved' OR a.grade = 'path')"
			       " AND a.line_addr BETWEEN ?2 AND ?3 AND i.boot_id = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(objs, 1, mm_id);
	sqlite3_bind_text(objs, 2, objects_boots(c->obj), -1, SQLITE_STATIC);
	sqlite3_bind_int64(objs, 3, (int64_t)span);
	sqlite3_bind_int64(objs, 4, lock_id);
	sqlite3_bind_int64(near, 1, c->boot_id);
	while (r >= 0 && (rc = sqlite3_step(objs)) == SQLITE_ROW) {
		uint64_t addr = (uint64_t)sqlite3_column_int64(objs, 0);
		uint64_t len = (uint64_t)sqlite3_column_int64(objs, 1);

		if (!len)	/* no mm_struct layout: an mm types nothing */
			continue;
		sqlite3_reset(near);
		sqlite3_bind_int64(near, 2, (int64_t)(addr & ~63ULL));
		sqlite3_bind_int64(near, 3, (int64_t)((addr + len - 1) & ~63ULL));
		r = rows_collect(c, near, &rows, &n, &alloc);
	}
	if (r >= 0 && rc != SQLITE_DONE)
		r = db_step_failed(objs, rc);
	sqlite3_reset(near);
	if (r >= 0 && n) {
		/* objects side by side find the same rows */
		qsort(rows, n, sizeof(*rows), row_cmp);
		for (size_t i = 0; i < n; i++)
			if (!kept || row_cmp(&rows[kept - 1], &rows[i]) != 0)
				rows[kept++] = rows[i];
		r = retry_apply(c, rows, kept);
	}
	free(rows);
	return r;
}

/* --- symbols of the running boot -------------------------------------------- */

/* Whether boot_id is the kernel running now (its kallsyms is ours). */
static bool is_running_boot(sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	char uuid[64];
	bool yes = false;

	if (read_line("/proc/sys/kernel/random/boot_id", uuid, sizeof(uuid)) < 0)
		return false;
	if (db_prepare(db, &st, "SELECT 1 FROM boots WHERE boot_id = ?1 AND source = 'live'"
				" AND boot_uuid = ?2") < 0)
		return false;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_text(st, 2, uuid, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	return yes;
}

static int add_ip(uint64_t **v, size_t *n, size_t *alloc, uint64_t ip)
{
	if (grow_array((void **)v, alloc, sizeof(**v), *n + 1) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = ip;
	return 0;
}

/* The sampled IPs of the boot's intervals after `after` that have no symbol
 * in have, appended to *v. */
static int unknown_ips(sqlite3 *db, const struct symtab *have, int64_t boot_id, int64_t after,
		       uint64_t **v, size_t *n, size_t *alloc)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, "SELECT DISTINCT l.ip FROM mem_lines l JOIN intervals i USING (interval_id)"
				" WHERE i.boot_id = ?1 AND l.interval_id > ?2 AND l.kernel = 1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, after);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t ip = (uint64_t)sqlite3_column_int64(st, 0);

		if (!symtab_lookup(have, ip) && add_ip(v, n, alloc, ip) < 0)
			return log_oom();
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

/* The same for the frames of the sampled callchains. */
static int unknown_frames(sqlite3 *db, const struct symtab *have, int64_t boot_id, int64_t after,
			  uint64_t **v, size_t *n, size_t *alloc)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, "SELECT DISTINCT c.ips FROM callchains c"
				" JOIN mem_lines l ON l.callchain_id = c.callchain_id"
				" JOIN intervals i ON i.interval_id = l.interval_id"
				" WHERE i.boot_id = ?1 AND l.interval_id > ?2 AND l.kernel = 1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, after);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(st, 0);

		while (p && *p) {
			char *end;
			uint64_t ip = strtoull(p, &end, 16);

			if (end == p)
				break;
			if (!symtab_lookup(have, ip) && add_ip(v, n, alloc, ip) < 0)
				return log_oom();
			p = end;
			while (*p == ' ')
				p++;
		}
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

/* Stores the symbols /proc/kallsyms has for v[0..n), in one transaction;
 * an unreadable kallsyms stores nothing. */
static int store_kallsyms_of(sqlite3 *db, int64_t boot_id, const uint64_t *v, size_t n,
			     size_t *ret_added)
{
	struct kallsyms *ks;
	size_t missing = 0;
	int r;

	ks = kallsyms_load(NULL);
	if (!ks) {
		log_debug_errno(errno, "Cannot read /proc/kallsyms: %m; %zu IPs stay unsymbolized", n);
		return 0;
	}
	r = db_begin(db);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		const struct ksym *k = kallsyms_lookup(ks, v[i]);

		if (!k) {
			missing++;
			continue;
		}
		r = kallsyms_store(db, boot_id, k);
		if (r >= 0)
			*ret_added += (size_t)sqlite3_changes(db);
	}
	r = db_end(db, r);
	if (r >= 0 && *ret_added)
		log_info("Stored %zu kernel symbols of boot %" PRId64 "'s samples from /proc/kallsyms"
			 "%s", *ret_added, boot_id, missing ? " (some IPs are in no symbol)" : "");
	kallsyms_free(ks);
	return r;
}

/*
 * The daemon stores only the symbols of the four paths; the lock
 * primitives and callers the rules need come from the samples. When the
 * boot being analyzed is the running kernel, store the symbols of its
 * sampled IPs and callchain frames (those of intervals after `after`)
 * from /proc/kallsyms, so the rows are attributed with them, and
 * anywhere later too. Not the running boot, or kallsyms hidden: nothing.
 */
static int store_running_symbols(sqlite3 *db, int64_t boot_id, int64_t after, size_t *ret_added)
{
	struct symtab *have = NULL;
	uint64_t *v = NULL;
	size_t n = 0, alloc = 0;
	int r;

	*ret_added = 0;
	if (!is_running_boot(db, boot_id))
		return 0;
	have = symtab_new();
	if (!have)
		return log_oom();
	r = symtab_load(have, db, boot_id);
	if (r >= 0)
		r = unknown_ips(db, have, boot_id, after, &v, &n, &alloc);
	if (r >= 0)
		r = unknown_frames(db, have, boot_id, after, &v, &n, &alloc);
	if (r >= 0 && n)
		r = store_kallsyms_of(db, boot_id, v, n, ret_added);
	symtab_free(have);
	free(v);
	return r;
}

/* --- boots ----------------------------------------------------------------- */

struct state {
	bool exists;
	int64_t last;
	char digest[64];
	bool mixed;
	char knowledge[512];
};

static int state_read(sqlite3 *db, int64_t boot_id, struct state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	*s = (struct state){};
	r = db_prepare(db, &st, "SELECT last_interval_id, rules_digest, mixed_rules, coalesce(knowledge, '')"
				" FROM analysis_state WHERE boot_id = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		s->exists = true;
		s->last = sqlite3_column_int64(st, 0);
		snprintf(s->digest, sizeof(s->digest), "%s", sqlite3_column_text(st, 1));
		s->mixed = sqlite3_column_int(st, 2);
		snprintf(s->knowledge, sizeof(s->knowledge), "%s", sqlite3_column_text(st, 3));
		return 0;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

static int state_write(struct ctx *c, const struct state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	const struct vmemmap_cal *cal = objects_vmemmap(c->obj);
	int r;

	r = db_prepare(c->db, &st,
		       "INSERT OR REPLACE INTO analysis_state(boot_id, last_interval_id, rules_digest,"
		       " mixed_rules, analyzed_ns, vmemmap_base, struct_page_size, calibration,"
		       " object_boots, knowledge) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, c->boot_id);
	sqlite3_bind_int64(st, 2, s->last);
	sqlite3_bind_text(st, 3, s->digest, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, s->mixed);
	sqlite3_bind_int64(st, 5, now_ns(CLOCK_REALTIME));
	if (cal->ok) {
		sqlite3_bind_int64(st, 6, (int64_t)cal->base);
		sqlite3_bind_int64(st, 7, cal->page_size);
	}
	sqlite3_bind_text(st, 8, cal->text, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, objects_boots(c->obj), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 10, s->knowledge, -1, SQLITE_STATIC);
	return db_step_done(c->db, st);
}

static int forget_boot(sqlite3 *db, int64_t boot_id)
{
	static const char *const sql[] = {
		"DELETE FROM line_attribution WHERE interval_id IN"
		" (SELECT interval_id FROM intervals WHERE boot_id = ?1)",
		/* retention dropped the samples of some intervals but kept their
		 * sums: those cannot be computed again, so they stay */
		"DELETE FROM path_intervals WHERE interval_id IN"
		" (SELECT interval_id FROM intervals WHERE boot_id = ?1 AND NOT detail_dropped)",
		"DELETE FROM callchain_symbols WHERE callchain_id IN"
		" (SELECT callchain_id FROM callchains WHERE boot_id = ?1)",
		"DELETE FROM anchored_objects WHERE boot_id = ?1",
		"DELETE FROM analysis_state WHERE boot_id = ?1",
	};
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(sql) && r >= 0; i++)
		r = db_exec_id(db, sql[i], boot_id);
	return r;
}

/* The next new intervals of the boot, at most BATCH_INTERVALS. */
static int next_batch(sqlite3 *db, int64_t boot_id, int64_t after, struct ival *v, size_t *ret_n)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	size_t n = 0;
	int r, rc;

	r = db_prepare(db, &st, "SELECT interval_id, start_ns, end_ns FROM intervals"
				" WHERE boot_id = ?1 AND interval_id > ?2 ORDER BY interval_id LIMIT ?3");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, after);
	sqlite3_bind_int(st, 3, BATCH_INTERVALS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		v[n++] = (struct ival){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					sqlite3_column_int64(st, 2) };
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	*ret_n = n;
	return 0;
}

/*
 * Whether a boot analyzed up to interval last can have nothing new: a live
 * boot learns objects only in the transactions that add its intervals (the
 * daemon's flush), so with no interval after last, nothing it knows changed
 * since. An imported boot borrows the objects of the live boot it was
 * recorded in, which may still be learning: never.
 */
static int boot_unchanged(sqlite3 *db, int64_t boot_id, int64_t last, bool *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	/* intervals_by_boot_id: a seek, however long the history. */
	r = db_prepare(db, &st, "SELECT source = 'live' AND NOT EXISTS (SELECT 1 FROM intervals"
				" WHERE boot_id = ?1 AND interval_id > ?2) FROM boots WHERE boot_id = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, last);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	*ret = rc == SQLITE_ROW && sqlite3_column_int(st, 0);
	return 0;
}

/*
 * The boot's analysis state, forgotten first on --rebuild; a boot analyzed
 * with other rules than digest is warned about and stays marked mixed.
 */
static int state_start(sqlite3 *db, const char *digest, int64_t boot_id, unsigned int flags,
		       struct analyze_stats *stats, struct state *s)
{
	int r;

	r = state_read(db, boot_id, s);
	if (r < 0)
		return r;
	if (flags & ANALYZE_REBUILD) {
		r = db_begin(db);
		if (r < 0)
			return r;
		r = db_end(db, forget_boot(db, boot_id));
		if (r < 0)
			return r;
		*s = (struct state){};
	}
	if (!s->exists) {
		snprintf(s->digest, sizeof(s->digest), "%s", digest);
	} else if (strcmp(s->digest, digest) != 0 || s->mixed) {
		log_warning("Boot %" PRId64 " was analyzed with other rules (digest %s, now %s); new "
			    "intervals use the current ones: run 'mmhitm analyze --rebuild' to "
			    "attribute it all again", boot_id, s->digest, digest);
		s->mixed = true;
		stats->stale_boots++;
	}
	return 0;
}

/* Loads what typing the boot's rows needs: its objects, its cache line
 * size and the statements. */
static int ctx_open(struct ctx *c)
{
	int r;

	c->obj = objects_new();
	if (!c->obj)
		return log_oom();
	r = objects_load(c->obj, c->db, c->boot_id);
	if (r >= 0) {
		char sql[128];
		int64_t line = 0;

		snprintf(sql, sizeof(sql), "SELECT coalesce(cache_line_size, 0) FROM boots WHERE boot_id = %"
			 PRId64, c->boot_id);
		r = db_query_int(c->db, &line, sql);
		c->line_size = line > 0 && line <= 4096 ? (uint32_t)line : 0;
	}
	if (r >= 0)
		r = ctx_prepare(c);
	return r;
}

/* A boot's first analysis starts with the anchors its contended locks give. */
static int anchors_first(struct ctx *c)
{
	int r;

	r = db_begin(c->db);
	if (r < 0)
		return r;
	return db_end(c->db, anchors_from_locks(c));
}

/*
 * One batch of new intervals in one transaction: anchors, attribution,
 * path sums and the state that says they are done. before: what the
 * objects knew as the boot's analysis started (set on the first batch).
 */
static int analyze_batch(struct ctx *c, struct state *s, const struct ival *batch, size_t n,
			 char *before, size_t size)
{
	int r;

	r = db_begin(c->db);
	if (r < 0)
		return r;
	r = anchors_scan(c, s->last, batch[n - 1].id);
	if (r >= 0)
		r = attribute_intervals(c, s->last, batch[n - 1].id);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = path_intervals_write(c->pi, batch[i].id, batch[i].t0, batch[i].t1);
	if (r >= 0) {
		s->last = batch[n - 1].id;
		s->exists = true;
		if (!before[0])		/* first run: what we knew as we started */
			r = objects_signature(c->obj, NULL, before, size);
	}
	if (r < 0) {
		db_rollback(c->db);
		return r;
	}
	snprintf(s->knowledge, sizeof(s->knowledge), "%s", before);
	return db_end(c->db, state_write(c, s));
}

/* The boot's intervals after s->last, BATCH_INTERVALS per transaction. */
static int analyze_new_intervals(struct ctx *c, struct state *s, struct ival *batch, char *before,
				 size_t size)
{
	for (;;) {
		size_t n = 0;
		int r;

		r = next_batch(c->db, c->boot_id, s->last, batch, &n);
		if (r < 0 || n == 0)
			return r;
		r = analyze_batch(c, s, batch, n, before, size);
		if (r < 0)
			return r;
		c->stats->intervals += n;
	}
}

/* Learned more than the earlier rows saw: attribute those again. */
static int retry_learned(struct ctx *c, struct state *s, const char *before)
{
	bool symbols, learned;
	int64_t mm_id, lock_id;
	int r;

	r = objects_signature(c->obj, before, s->knowledge, sizeof(s->knowledge));
	if (r < 0 || strcmp(before, s->knowledge) == 0)
		return r;
	symbols = objects_signature_symbols_differ(before, s->knowledge);
	learned = objects_signature_learned_only(before, s->knowledge, &mm_id, &lock_id);
	r = db_begin(c->db);
	if (r < 0)
		return r;
	/* new symbols can make old samples anchors too */
	if (symbols)
		r = anchors_scan(c, 0, s->last);
	if (r >= 0)
		r = learned ? retry_near_learned(c, mm_id, lock_id) : retry_rows(c, symbols);
	if (r >= 0)
		r = objects_signature(c->obj, before, s->knowledge, sizeof(s->knowledge));
	if (r >= 0)
		r = state_write(c, s);
	return db_end(c->db, r);
}

static int analyze_boot(sqlite3 *db, const struct rules *rules, int64_t boot_id,
			unsigned int flags, struct analyze_stats *stats)
{
	struct ctx c = { .db = db, .rules = rules, .boot_id = boot_id, .stats = stats };
	const char *digest = rules_digest(rules);
	struct ival *batch = NULL;
	struct state s;
	char before[512];
	size_t added;
	int r;

	r = state_start(db, digest, boot_id, flags, stats, &s);
	if (r < 0)
		return r;
	/* The daemon analyzes after every interval: the boots of the host's
	 * past must not cost it their objects' loading each time. */
	if (s.exists) {
		bool unchanged = false;

		r = boot_unchanged(db, boot_id, s.last, &unchanged);
		if (r < 0 || unchanged)
			return r;
	}

	r = store_running_symbols(db, boot_id, s.last, &added);
	if (r < 0)
		goto out;
	r = ctx_open(&c);
	batch = calloc(BATCH_INTERVALS, sizeof(*batch));
	if (r >= 0 && !batch)
		r = log_oom();
	if (r < 0)
		goto out;
	snprintf(before, sizeof(before), "%s", s.knowledge);
	if (!s.exists)
		r = anchors_first(&c);
	if (r >= 0)
		r = analyze_new_intervals(&c, &s, batch, before, sizeof(before));
	if (r >= 0 && s.exists)
		r = retry_learned(&c, &s, before);
out:
	free(batch);
	ctx_done(&c);
	return r;
}

/* Each work source's unit (path_rates.work_unit), as the path table says. */
static int store_work_units(sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "INSERT INTO path_work_units(path, source, work_unit) VALUES (?1, ?2, ?3)"
				" ON CONFLICT(path, source) DO UPDATE SET work_unit = excluded.work_unit"
				" WHERE work_unit IS NOT excluded.work_unit");
	for (int i = 0; r >= 0 && i < paths_nr(); i++) {
		const struct path_def *pd = path_get(i);

		for (size_t k = 0; r >= 0 && k < pd->nr_work; k++) {
			sqlite3_reset(st);
			sqlite3_bind_text(st, 1, pd->id, -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 2, pd->work[k], -1, SQLITE_STATIC);
			sqlite3_bind_text(st, 3, pd->work_unit[k], -1, SQLITE_STATIC);
			r = db_step_done(db, st);
		}
	}
	return r;
}

/* The database's paths table says what the path table says (users join it). */
static int store_paths(sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "INSERT INTO paths(path, title, work_unit, per) VALUES (?1, ?2, ?3, ?4)"
				" ON CONFLICT(path) DO UPDATE SET title = excluded.title,"
				" work_unit = excluded.work_unit, per = excluded.per"
				" WHERE (title, work_unit, per) IS NOT (excluded.title, excluded.work_unit,"
				" excluded.per)");
	for (int i = 0; r >= 0 && i < paths_nr(); i++) {
		const struct path_def *pd = path_get(i);

		sqlite3_reset(st);
		sqlite3_bind_text(st, 1, pd->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, pd->title, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, pd->unit, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 4, pd->per);
		r = db_step_done(db, st);
	}
	return r < 0 ? r : store_work_units(db);
}

int analyze_db(sqlite3 *db, const struct rules *rules, unsigned int flags,
	       struct analyze_stats *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t *boots = NULL;
	size_t n = 0, alloc = 0;
	int r, rc;

	*ret = (struct analyze_stats){};
	r = store_paths(db);
	if (r < 0)
		return r;
	r = db_prepare(db, &st, "SELECT boot_id FROM boots ORDER BY boot_id");
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow_array((void **)&boots, &alloc, sizeof(*boots), n + 1) < 0) {
			free(boots);
			return log_oom();
		}
		boots[n++] = sqlite3_column_int64(st, 0);
	}
	if (rc != SQLITE_DONE) {
		free(boots);
		return db_step_failed(st, rc);
	}
	for (size_t i = 0; i < n; i++) {
		r = analyze_boot(db, rules, boots[i], flags, ret);
		if (r < 0) {
			/* the caller says why; which boot is for a developer */
			log_debug("Analyzing boot %" PRId64 " failed: %s", boots[i], db_error(r));
			break;
		}
		ret->boots++;
	}
	free(boots);
	return r;
}
