// SPDX-License-Identifier: GPL-2.0
/*
 * Memory samples aggregated per (line, offset, ip, callchain): two open
 * addressing tables (keys, interned callchains) over flat arrays, so an
 * interval costs a few allocations however many samples it has.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "db.h"
#include "log.h"
#include "mem-agg.h"
#include "util.h"

/* distinct (line, offset, ip, callchain) keys per interval by default:
 * ~150 bytes each, so about 30 MiB at most */
#define DEFAULT_MAX_ENTRIES	200000
/* longest kernel callchain kept (perf's PERF_MAX_STACK_DEPTH is 127) */
#define MAX_STACK_LIMIT		64

struct entry {
	uint64_t line, ip;
	uint32_t offset, chain;		/* chain: local id, 0 for none */
	uint32_t c[MEM_N_CLASSES];
	uint64_t weight_sum;
	uint32_t weight_n;
	bool kernel;
};

struct chain {
	uint32_t start, len;		/* in chain_ips */
	uint64_t hash;
	int64_t db_id;			/* 0 until written */
	int64_t db_boot;
};

struct mem_agg {
	struct mem_agg_config cfg;
	uint64_t line_mask;

	struct entry *entries;
	size_t n_entries, alloc_entries;
	uint32_t *index;		/* entry + 1, 0 empty; size index_size (power of 2) */
	size_t index_size;

	struct chain *chains;		/* chains[0] unused: id 0 is "none" */
	size_t n_chains, alloc_chains;
	uint64_t *chain_ips;
	size_t n_chain_ips, alloc_chain_ips;
	uint32_t *chain_index;
	size_t chain_index_size;

	uint64_t stored, dropped;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	/* splitmix64's finalizer over a running combination */
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

struct mem_agg *mem_agg_new(const struct mem_agg_config *cfg)
{
	struct mem_agg *a;

	if (cfg->line_size < 8 || cfg->line_size > 4096 || (cfg->line_size & (cfg->line_size - 1))) {
		log_error("Cache line size %u is not a power of two in [8, 4096]", cfg->line_size);
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		log_oom();
		return NULL;
	}
	a->cfg = *cfg;
	if (!a->cfg.max_entries)
		a->cfg.max_entries = DEFAULT_MAX_ENTRIES;
	if (a->cfg.max_stack > MAX_STACK_LIMIT)
		a->cfg.max_stack = MAX_STACK_LIMIT;
	a->line_mask = ~(uint64_t)(cfg->line_size - 1);
	a->n_chains = 1;
	return a;
}

void mem_agg_free(struct mem_agg *a)
{
	if (!a)
		return;
	free(a->entries);
	free(a->index);
	free(a->chains);
	free(a->chain_ips);
	free(a->chain_index);
	free(a);
}

int mem_agg_for_each_kernel_ip(const struct mem_agg *a, int (*fn)(uint64_t ip, void *ctx), void *ctx)
{
	int r;

	for (size_t i = 0; i < a->n_entries; i++) {
		if (!a->entries[i].kernel)
			continue;
		r = fn(a->entries[i].ip, ctx);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < a->n_chain_ips; i++) {
		/* PERF_CONTEXT_* markers sit at the top of the address space. */
		if (a->chain_ips[i] >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		r = fn(a->chain_ips[i], ctx);
		if (r < 0)
			return r;
	}
	return 0;
}

void mem_agg_reset(struct mem_agg *a)
{
	a->n_entries = 0;
	if (a->index)
		memset(a->index, 0, a->index_size * sizeof(*a->index));
	a->n_chains = 1;
	a->n_chain_ips = 0;
	if (a->chain_index)
		memset(a->chain_index, 0, a->chain_index_size * sizeof(*a->chain_index));
	a->stored = a->dropped = 0;
}

size_t mem_agg_entries(const struct mem_agg *a)
{
	return a->n_entries;
}

uint64_t mem_agg_stored(const struct mem_agg *a)
{
	return a->stored;
}

uint64_t mem_agg_dropped(const struct mem_agg *a)
{
	return a->dropped;
}

void mem_agg_totals(const struct mem_agg *a, struct mem_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < a->n_entries; i++)
		for (unsigned int c = 0; c < MEM_N_CLASSES; c++)
			ret->c[c] += a->entries[i].c[c];
}

/* Rebuilds an index of 2^k slots over n items with hash(i). */
static int rehash(uint32_t **index, size_t *size, size_t n, size_t want,
		  uint64_t (*hash)(const struct mem_agg *, size_t), const struct mem_agg *a)
{
	size_t sz = 1024;
	uint32_t *ix;

	while (sz < want * 2)
		sz *= 2;
	ix = calloc(sz, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t s = hash(a, i) & (sz - 1);

		while (ix[s])
			s = (s + 1) & (sz - 1);
		ix[s] = i + 1;
	}
	free(*index);
	*index = ix;
	*size = sz;
	return 0;
}

static uint64_t entry_hash_of(uint64_t line, uint32_t offset, uint64_t ip, uint32_t chain)
{
	return mix(mix(mix(line, offset), ip), chain);
}

static uint64_t entry_hash(const struct mem_agg *a, size_t i)
{
	const struct entry *e = &a->entries[i];

	return entry_hash_of(e->line, e->offset, e->ip, e->chain);
}

static uint64_t chain_hash(const struct mem_agg *a, size_t i)
{
	return a->chains[i + 1].hash;
}

/* The kernel frames of a perf callchain, innermost first, without the
 * context markers (PERF_CONTEXT_*, the top 4095 values) and without a
 * first frame that repeats the sample's IP. */
static size_t kernel_frames(const struct mem_agg *a, const struct mem_agg_sample *s, uint64_t *out)
{
	bool in_kernel = false;
	size_t n = 0;

	for (uint64_t i = 0; i < s->callchain_nr && n < a->cfg.max_stack; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			in_kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (!in_kernel)
			continue;
		if (n == 0 && ip == s->ip)
			continue;
		out[n++] = ip;
	}
	return n;
}

/* Interns a callchain; returns its local id (>= 1) or -ENOMEM. */
static int64_t chain_intern(struct mem_agg *a, const uint64_t *ips, size_t n)
{
	uint64_t h = n;
	size_t s;
	struct chain *c;
	int r;

	for (size_t i = 0; i < n; i++)
		h = mix(h, ips[i]);
	if (a->chain_index_size) {
		for (s = h & (a->chain_index_size - 1); a->chain_index[s];
		     s = (s + 1) & (a->chain_index_size - 1)) {
			c = &a->chains[a->chain_index[s]];
			if (c->hash == h && c->len == n &&
			    memcmp(a->chain_ips + c->start, ips, n * sizeof(*ips)) == 0)
				return a->chain_index[s];
		}
	}
	if (grow_array((void **)&a->chains, &a->alloc_chains, sizeof(*a->chains), a->n_chains + 1) < 0 ||
	    grow_array((void **)&a->chain_ips, &a->alloc_chain_ips, sizeof(*a->chain_ips),
		       a->n_chain_ips + n) < 0)
		return -ENOMEM;
	c = &a->chains[a->n_chains];
	*c = (struct chain){ .start = a->n_chain_ips, .len = n, .hash = h };
	memcpy(a->chain_ips + a->n_chain_ips, ips, n * sizeof(*ips));
	a->n_chain_ips += n;
	a->n_chains++;
	if ((a->n_chains - 1) * 2 >= a->chain_index_size) {
		r = rehash(&a->chain_index, &a->chain_index_size, a->n_chains - 1, a->n_chains,
			   chain_hash, a);
		if (r < 0)
			return r;
		/* the index holds entry + 1 of chains[1..]: the id itself */
	} else {
		for (s = h & (a->chain_index_size - 1); a->chain_index[s];
		     s = (s + 1) & (a->chain_index_size - 1))
			;
		a->chain_index[s] = a->n_chains - 1;
	}
	return a->n_chains - 1;
}

int mem_agg_add(struct mem_agg *a, const struct mem_agg_sample *s)
{
	uint64_t frames[MAX_STACK_LIMIT], line = s->addr & a->line_mask, h;
	uint32_t offset = s->addr & ~a->line_mask, chain = 0;
	struct mem_stats st = { 0 };
	struct entry *e = NULL;
	size_t n, slot;
	int r;

	if (!s->kernel && !a->cfg.keep_user)
		return 0;
	n = kernel_frames(a, s, frames);
	if (n) {
		int64_t id = chain_intern(a, frames, n);

		if (id < 0)
			return log_oom();
		chain = id;
	}
	h = entry_hash_of(line, offset, s->ip, chain);
	if (a->index_size) {
		for (slot = h & (a->index_size - 1); a->index[slot];
		     slot = (slot + 1) & (a->index_size - 1)) {
			struct entry *x = &a->entries[a->index[slot] - 1];

			if (x->line == line && x->offset == offset && x->ip == s->ip && x->chain == chain) {
				e = x;
				break;
			}
		}
	}
	if (!e) {
		if (a->n_entries >= a->cfg.max_entries) {
			a->dropped++;
			return 0;
		}
		if (grow_array((void **)&a->entries, &a->alloc_entries, sizeof(*a->entries),
			       a->n_entries + 1) < 0)
			return log_oom();
		e = &a->entries[a->n_entries++];
		memset(e, 0, sizeof(*e));
		e->line = line;
		e->offset = offset;
		e->ip = s->ip;
		e->chain = chain;
		e->kernel = s->kernel;
		if (a->n_entries * 2 >= a->index_size) {
			r = rehash(&a->index, &a->index_size, a->n_entries, a->n_entries, entry_hash, a);
			if (r < 0)
				return log_oom();
		} else {
			for (slot = h & (a->index_size - 1); a->index[slot];
			     slot = (slot + 1) & (a->index_size - 1))
				;
			a->index[slot] = a->n_entries;
		}
	}

	mem_decode(s->data_src, s->addr, &st);
	for (unsigned int c = 0; c < MEM_N_CLASSES; c++)
		e->c[c] += st.c[c];
	/* builtin-c2c.c: compute_stats() averages the weight of loads */
	if (s->has_weight && st.c[MEM_CLASS_loads]) {
		e->weight_sum += s->weight;
		e->weight_n++;
	}
	a->stored++;
	return 1;
}

/* --- writing --------------------------------------------------------------- */

/* "INSERT INTO mem_lines (...) VALUES (...) ON CONFLICT ... DO UPDATE SET c = c + excluded.c, ..." */
static char *mem_lines_sql(void)
{
	char *cols = NULL, *vals = NULL, *upd = NULL, *sql = NULL;
	size_t cl = 0, vl = 0, ul = 0;
	FILE *fc = open_memstream(&cols, &cl), *fv = open_memstream(&vals, &vl),
	     *fu = open_memstream(&upd, &ul);

	if (!fc || !fv || !fu) {
		if (fc)
			fclose(fc);
		if (fv)
			fclose(fv);
		if (fu)
			fclose(fu);
		free(cols);
		free(vals);
		free(upd);
		return NULL;
	}
	fputs("interval_id, line_addr, offset, ip, callchain_id, kernel", fc);
	fputs("?, ?, ?, ?, ?, ?", fv);
	for (unsigned int c = 0; c < MEM_N_CLASSES; c++) {
		fprintf(fc, ", %s", mem_class_names[c]);
		fputs(", ?", fv);
		fprintf(fu, "%s = %s + excluded.%s, ", mem_class_names[c], mem_class_names[c],
			mem_class_names[c]);
	}
	fputs(", weight_sum, weight_n", fc);
	fputs(", ?, ?", fv);
	fputs("weight_sum = weight_sum + excluded.weight_sum, weight_n = weight_n + excluded.weight_n", fu);
	fclose(fc);
	fclose(fv);
	fclose(fu);
	if (asprintf(&sql, "INSERT INTO mem_lines (%s) VALUES (%s) "
		     "ON CONFLICT (interval_id, line_addr, offset, ip, callchain_id) DO UPDATE SET %s",
		     cols, vals, upd) < 0)
		sql = NULL;
	free(cols);
	free(vals);
	free(upd);
	return sql;
}

/* "0xffffffff81000000 0x..." */
static char *chain_text(const struct mem_agg *a, const struct chain *c)
{
	char *s = malloc((size_t)c->len * 19 + 1), *p = s;

	if (!s)
		return NULL;
	*p = '\0';
	for (uint32_t i = 0; i < c->len; i++)
		p += sprintf(p, "%s0x%016" PRIx64, i ? " " : "", a->chain_ips[c->start + i]);
	return s;
}

static int write_chains(struct mem_agg *a, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *sel = NULL, *ins = NULL;
	int r;

	if (a->n_chains <= 1)
		return 0;
	r = db_prepare(db, &sel, "SELECT callchain_id FROM callchains WHERE boot_id = ?1 AND ips = ?2");
	if (r < 0)
		return r;
	r = db_prepare(db, &ins, "INSERT INTO callchains (boot_id, ips) VALUES (?1, ?2)");
	if (r < 0)
		return r;
	for (size_t i = 1; i < a->n_chains; i++) {
		struct chain *c = &a->chains[i];
		char *text;
		int rc;

		if (c->db_id && c->db_boot == boot_id)
			continue;
		text = chain_text(a, c);
		if (!text)
			return log_oom();
		sqlite3_bind_int64(sel, 1, boot_id);
		sqlite3_bind_text(sel, 2, text, -1, SQLITE_TRANSIENT);
		rc = sqlite3_step(sel);
		if (rc == SQLITE_ROW) {
			c->db_id = sqlite3_column_int64(sel, 0);
		} else if (rc == SQLITE_DONE) {
			sqlite3_bind_int64(ins, 1, boot_id);
			sqlite3_bind_text(ins, 2, text, -1, SQLITE_TRANSIENT);
			r = db_step_done(db, ins);
			if (r < 0) {
				free(text);
				sqlite3_reset(sel);
				return r;
			}
			c->db_id = sqlite3_last_insert_rowid(db);
		} else {
			free(text);
			sqlite3_reset(sel);
			return db_step_failed(sel, rc);
		}
		c->db_boot = boot_id;
		sqlite3_reset(sel);
		free(text);
	}
	return 0;
}

int mem_agg_write(struct mem_agg *a, sqlite3 *db, int64_t boot_id, int64_t interval_id,
		  const char *pmu_events, const struct sampling_stats *st)
{
	static const struct sampling_stats none;
	_cleanup_finalize_ sqlite3_stmt *samp = NULL, *line = NULL;
	_cleanup_free_ char *sql = NULL;
	int r;

	if (!st)
		st = &none;
	r = db_prepare(db, &samp,
		"INSERT INTO sampling (interval_id, pmu_events, active_ns, samples, samples_kernel,"
		" samples_user, lost, throttled, dropped) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		" ON CONFLICT (interval_id) DO UPDATE SET"
		" pmu_events = coalesce(excluded.pmu_events, pmu_events),"
		" active_ns = active_ns + excluded.active_ns, samples = samples + excluded.samples,"
		" samples_kernel = samples_kernel + excluded.samples_kernel,"
		" samples_user = samples_user + excluded.samples_user, lost = lost + excluded.lost,"
		" throttled = throttled + excluded.throttled, dropped = dropped + excluded.dropped");
	if (r < 0)
		return r;
	sqlite3_bind_int64(samp, 1, interval_id);
	if (pmu_events)
		sqlite3_bind_text(samp, 2, pmu_events, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(samp, 3, st->active_ns);
	sqlite3_bind_int64(samp, 4, (int64_t)st->samples);
	sqlite3_bind_int64(samp, 5, (int64_t)st->samples_kernel);
	sqlite3_bind_int64(samp, 6, (int64_t)st->samples_user);
	sqlite3_bind_int64(samp, 7, (int64_t)st->lost);
	sqlite3_bind_int64(samp, 8, (int64_t)st->throttled);
	sqlite3_bind_int64(samp, 9, (int64_t)a->dropped);
	r = db_step_done(db, samp);
	if (r < 0)
		return r;

	r = write_chains(a, db, boot_id);
	if (r < 0)
		return r;

	sql = mem_lines_sql();
	if (!sql)
		return log_oom();
	r = db_prepare(db, &line, sql);
	if (r < 0)
		return r;
	for (size_t i = 0; i < a->n_entries; i++) {
		const struct entry *e = &a->entries[i];
		int k = 1;

		sqlite3_bind_int64(line, k++, interval_id);
		/* addresses as their 64 bits (schema/001: kernel ones read negative) */
		sqlite3_bind_int64(line, k++, (int64_t)e->line);
		sqlite3_bind_int64(line, k++, e->offset);
		sqlite3_bind_int64(line, k++, (int64_t)e->ip);
		sqlite3_bind_int64(line, k++, e->chain ? a->chains[e->chain].db_id : 0);
		sqlite3_bind_int(line, k++, e->kernel);
		for (unsigned int c = 0; c < MEM_N_CLASSES; c++)
			sqlite3_bind_int64(line, k++, e->c[c]);
		sqlite3_bind_int64(line, k++, (int64_t)e->weight_sum);
		sqlite3_bind_int64(line, k++, e->weight_n);
		r = db_step_done(db, line);
		if (r < 0)
			return r;
	}
	return 0;
}

/* --- the host's line size --------------------------------------------------- */

int mem_host_line_size(const char *sysfs_root, unsigned int *ret)
{
	char path[512], buf[64];
	long v;

	if (!sysfs_root) {
		v = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
		if (v > 0 && (v & (v - 1)) == 0) {
			*ret = v;
			return 0;
		}
		sysfs_root = "/sys";
	}
	/* the level-1 data (or unified) cache of CPU 0 */
	for (int i = 0; i < 16; i++) {
		uint64_t level, size;

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d/level",
			 sysfs_root, i);
		if (read_line(path, buf, sizeof(buf)) < 0)
			continue;
		if (parse_u64(strstrip(buf), &level) < 0 || level != 1)
			continue;
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d/type",
			 sysfs_root, i);
		if (read_line(path, buf, sizeof(buf)) < 0 ||
		    (strcmp(strstrip(buf), "Data") != 0 && strcmp(buf, "Unified") != 0))
			continue;
		snprintf(path, sizeof(path),
			 "%s/devices/system/cpu/cpu0/cache/index%d/coherency_line_size", sysfs_root, i);
		if (read_line(path, buf, sizeof(buf)) < 0 || parse_u64(strstrip(buf), &size) < 0)
			continue;
		if (size >= 8 && size <= 4096 && (size & (size - 1)) == 0) {
			*ret = size;
			return 0;
		}
	}
	return -ENOENT;
}
