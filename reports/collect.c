// SPDX-License-Identifier: GPL-2.0
/*
 * Reading host databases for the report, one at a time. Pass 1 reads the
 * boots (cheap: a few rows per host) so rollouts and cohorts are known
 * before any rate is read; pass 2 reads one host's intervals and rates,
 * leaves a summary in struct host and frees the rows.
 */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "report-model.h"
#include "rollup.h"
#include "util.h"

static char *column_strdup(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	if (!s)
		return NULL;
	return strdup((const char *)s);
}

/* --- pass 1 ------------------------------------------------------------- */

/* Adds name to the markers of the boot's kernel, once. */
int collect_marker_add(struct host *h, size_t boot, const char *name)
{
	struct kernel_info *k = &h->kernels[h->boots[boot].kernel];
	char **n;

	for (size_t j = 0; j < k->nr_markers; j++)
		if (strcmp(k->markers[j], name) == 0)
			return 0;
	n = realloc(k->markers, (k->nr_markers + 1) * sizeof(char *));
	if (!n)
		return log_oom();
	k->markers = n;
	k->markers[k->nr_markers] = strdup(name);
	if (!k->markers[k->nr_markers])
		return log_oom();
	k->nr_markers++;
	return 0;
}

static int boot_markers(sqlite3 *db, const struct patch_map *map, int64_t boot_id,
			struct host *h, size_t boot)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	if (!map || patch_map_nr_ksyms(map) == 0)
		return 0;
	r = db_prepare(db, &st, "SELECT 1 FROM ksyms WHERE boot_id = ?1 AND name = ?2 LIMIT 1");
	if (r < 0)
		return r;
	for (size_t i = 0; i < patch_map_nr_ksyms(map); i++) {
		const char *name = patch_map_ksym(map, i);
		int rc;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, boot_id);
		sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			r = collect_marker_add(h, boot, name);
			if (r < 0)
				return r;
		} else if (rc != SQLITE_DONE) {
			return db_step_failed(st, rc);
		}
	}
	return 0;
}

/* The index of the kernel in h->kernels, adding it when new. */
static int kernel_index(struct host *h, const char *rel, const char *ver, const char *bid, size_t *ret)
{
	struct kernel_info *k, *nk;

	for (size_t i = 0; i < h->nr_kernels; i++) {
		k = &h->kernels[i];
		if (kernel_same(k->release, k->version, k->build_id, rel, ver, bid)) {
			*ret = i;
			return 0;
		}
	}
	nk = realloc(h->kernels, (h->nr_kernels + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	h->kernels = nk;
	k = &h->kernels[h->nr_kernels];
	memset(k, 0, sizeof(*k));
	k->release = rel ? strdup(rel) : NULL;
	k->version = ver ? strdup(ver) : NULL;
	k->build_id = bid && *bid ? strdup(bid) : NULL;
	if (!k->release || !k->version || (bid && *bid && !k->build_id)) {
		kernel_info_done(k);
		return -ENOMEM;
	}
	*ret = h->nr_kernels++;
	return 0;
}

int collect_boot_add(struct host *h, const struct boot_row *in, size_t *ret)
{
	struct boot_info *b;

	if (grow_array((void **)&h->boots, &h->alloc_boots, sizeof(*b), h->nr_boots + 1) < 0)
		return log_oom();
	b = &h->boots[h->nr_boots];
	memset(b, 0, sizeof(*b));
	b->boot_id = in->boot_id;
	b->start_ns = in->start_ns;
	b->first_seen_ns = in->first_seen_ns;
	b->last_seen_ns = in->last_seen_ns;
	b->nr_cpus = in->nr_cpus;
	b->pmu_kind = in->pmu_kind ? strdup(in->pmu_kind) : NULL;
	b->pmu_detail = in->pmu_detail ? strdup(in->pmu_detail) : NULL;
	b->lru_gen = in->lru_gen ? strdup(in->lru_gen) : NULL;
	h->nr_boots++;
	if (!b->pmu_kind || !b->lru_gen || (in->pmu_detail && !b->pmu_detail))
		return log_oom();
	if (kernel_index(h, in->release, in->version, in->build_id, &b->kernel) < 0)
		return log_oom();
	if (b->last_seen_ns > h->last_ns)
		h->last_ns = b->last_seen_ns;
	if (ret)
		*ret = h->nr_boots - 1;
	return 0;
}

static int host_boots(struct report *r, struct host *h, sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = db_prepare(db, &st,
		"SELECT boot_id, coalesce(boot_time_ns, first_seen_ns), first_seen_ns, last_seen_ns,"
		" nr_cpus_online, kernel_release, kernel_version, kernel_build_id,"
		" pmu_kind, pmu_detail, lru_gen"
		" FROM boots WHERE host_id = ?1"
		" ORDER BY coalesce(boot_time_ns, first_seen_ns), first_seen_ns");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, h->db_host_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct boot_row b = {
			.boot_id = sqlite3_column_int64(st, 0),
			.start_ns = sqlite3_column_int64(st, 1),
			.first_seen_ns = sqlite3_column_int64(st, 2),
			.last_seen_ns = sqlite3_column_int64(st, 3),
			.nr_cpus = sqlite3_column_int(st, 4),
			.release = (const char *)sqlite3_column_text(st, 5),
			.version = (const char *)sqlite3_column_text(st, 6),
			.build_id = (const char *)sqlite3_column_text(st, 7),
			.pmu_kind = (const char *)sqlite3_column_text(st, 8),
			.pmu_detail = (const char *)sqlite3_column_text(st, 9),
			.lru_gen = (const char *)sqlite3_column_text(st, 10),
		};
		size_t i;

		ret = collect_boot_add(h, &b, &i);
		if (ret < 0)
			return ret;
		ret = boot_markers(db, r->o.patches, b.boot_id, h, i);
		if (ret < 0)
			return ret;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

int collect_host_finish(struct report *r, struct host *h)
{
	ssize_t n;

	for (size_t i = 0; i < h->nr_kernels; i++) {
		struct kernel_info *k = &h->kernels[i];
		struct kernel_desc d = {
			.release = k->release,
			.version = k->version,
			.build_id = k->build_id,
			.ksyms = (const char *const *)k->markers,
			.nr_ksyms = k->nr_markers,
		};

		if (r->o.patches)
			patch_map_resolve(r->o.patches, &d, k->patches);
	}
	n = rollouts_detect(h->boots, h->nr_boots, h->kernels, &h->rollouts);
	if (n < 0)
		return log_oom();
	h->nr_rollouts = (size_t)n;
	/* Kept for the whole report: no room for boots that will not come (16 at first). */
	shrink_array((void **)&h->boots, &h->alloc_boots, sizeof(*h->boots), h->nr_boots);
	shrink_array((void **)&h->rollouts, NULL, sizeof(*h->rollouts), h->nr_rollouts);
	h->rollout_in_range = calloc(h->nr_rollouts + 1, sizeof(bool));
	if (!h->rollout_in_range)
		return log_oom();
	return 0;
}

int collect_host_add(struct report *r, const char *origin, const char *machine_id, const char *hostname,
		     bool check_dup, struct host **ret)
{
	struct host *h;

	*ret = NULL;
	/* The same host twice (a copied database) would count twice. */
	for (size_t i = 0; check_dup && i < r->nr_hosts && machine_id; i++)
		if (strcmp(r->hosts[i].machine_id, machine_id) == 0) {
			log_warning("%s: host %s was already read from %s, ignoring", origin, machine_id,
				    r->hosts[i].db);
			return 0;
		}
	if (grow_array((void **)&r->hosts, &r->alloc_hosts, sizeof(*h), r->nr_hosts + 1) < 0)
		return log_oom();
	h = &r->hosts[r->nr_hosts++];
	memset(h, 0, sizeof(*h));
	for (int p = 0; p < paths_nr(); p++)
		h->path[p].chosen = -1;
	h->db = origin;
	h->machine_id = machine_id ? strdup(machine_id) : NULL;
	h->hostname = hostname ? strdup(hostname) : NULL;
	if (!h->machine_id || !h->hostname)
		return log_oom();
	*ret = h;
	return 0;
}

/*
 * Whether the database says it was generated, not recorded (meta
 * 'simulated', schema 13); the first generator's name is kept for the
 * report's label.
 */
static int db_simulated(struct report *r, sqlite3 *db, bool *ret)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int rc, err;

	err = db_prepare(db, &st, "SELECT value FROM meta WHERE key = 'simulated'");
	if (err < 0)
		return err;
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	*ret = rc == SQLITE_ROW;
	if (*ret && !r->simulated_by[0]) {
		const char *by = (const char *)sqlite3_column_text(st, 0);

		snprintf(r->simulated_by, sizeof(r->simulated_by), "%s", by && *by ? by : "an unnamed generator");
	}
	return 0;
}

int collect_hosts(struct report *r, const char *path, sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	bool simulated = false;
	int rc, ret;

	ret = db_simulated(r, db, &simulated);
	if (ret < 0)
		return ret;
	ret = db_prepare(db, &st, "SELECT host_id, machine_id, hostname FROM hosts ORDER BY host_id");
	if (ret < 0)
		return ret;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct host *h;

		ret = collect_host_add(r, path, (const char *)sqlite3_column_text(st, 1),
				       (const char *)sqlite3_column_text(st, 2), true, &h);
		if (ret < 0)
			return ret;
		if (!h)
			continue;
		h->db_host_id = sqlite3_column_int64(st, 0);
		h->simulated = simulated;
		r->nr_simulated += simulated;
		ret = host_boots(r, h, db);
		if (ret < 0)
			return ret;
		ret = collect_host_finish(r, h);
		if (ret < 0)
			return ret;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

/* --- pass 2 ------------------------------------------------------------- */

enum rate_status {
	RATE_NONE = 0,		/* no row: not analyzed */
	RATE_MEASURED,
	RATE_NO_PMU,
	RATE_IDLE,
	RATE_WARMUP,
};

struct ivl {
	int64_t id;
	int64_t start_ns, end_ns;
	uint32_t boot;		/* index into h->boots */
	float duty;		/* NAN: no sampling row */
	bool warmup;
};

/* A host's HITM totals per path name, handed to the report once. */
#define HOST_SHARES 16

/* One host's rows, alive during its pass 2 only. */
struct rows {
	struct ivl *ivl;
	size_t n, alloc;
	size_t *by_id;		/* indices sorted by interval id */
	uint8_t *status[MAX_PATHS];
	double *rate[MAX_PATHS];
	double *buf, *buf2;	/* scratch, n each */
	double *work_sum[MAX_PATHS], *secs_sum[MAX_PATHS];	/* per time bin */
	struct path_share shares[HOST_SHARES];
	size_t nr_shares;
	size_t last;		/* by_id position of the last row found, + 1; 0: none */
};

static void rows_done(struct rows *w)
{
	free(w->ivl);
	free(w->by_id);
	for (int p = 0; p < paths_nr(); p++) {
		free(w->status[p]);
		free(w->rate[p]);
		free(w->work_sum[p]);
		free(w->secs_sum[p]);
	}
	free(w->buf);
	free(w->buf2);
	for (size_t k = 0; k < w->nr_shares; k++)
		free(w->shares[k].path);
	memset(w, 0, sizeof(*w));
}

struct rows *collect_rows_new(void)
{
	struct rows *w = calloc(1, sizeof(*w));

	if (!w)
		log_oom();
	return w;
}

void collect_rows_free(struct rows *w)
{
	if (!w)
		return;
	rows_done(w);
	free(w);
}

static size_t boot_index(const struct host *h, int64_t boot_id, size_t hint)
{
	if (hint < h->nr_boots && h->boots[hint].boot_id == boot_id)
		return hint;
	for (size_t i = 0; i < h->nr_boots; i++)
		if (h->boots[i].boot_id == boot_id)
			return i;
	return SIZE_MAX;
}

static const struct rows *sort_rows;

static int cmp_by_id(const void *a, const void *b)
{
	int64_t x = sort_rows->ivl[*(const size_t *)a].id, y = sort_rows->ivl[*(const size_t *)b].id;

	return (x > y) - (x < y);
}

/*
 * Rate rows come in key order (a bucket's paths together, buckets in time
 * order): the last row found, or the one after it, is the likely answer.
 */
static ssize_t find_interval(struct rows *w, int64_t id)
{
	size_t lo = 0, hi = w->n;

	for (size_t k = w->last; k && k <= w->last + 1 && k <= w->n; k++)
		if (w->ivl[w->by_id[k - 1]].id == id) {
			w->last = k;
			return (ssize_t)w->by_id[k - 1];
		}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->ivl[w->by_id[mid]].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < w->n && w->ivl[w->by_id[lo]].id == id) {
		w->last = lo + 1;
		return (ssize_t)w->by_id[lo];
	}
	return -1;
}

/* The first interval starting at or after t. */
static size_t lower_bound(const struct rows *w, int64_t t)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->ivl[mid].start_ns < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int collect_rows_interval(struct report *r, struct host *h, struct rows *w, const struct ivl_row *in)
{
	struct quality *q = &h->q;
	struct ivl *v;
	int64_t span;

	if (in->boot >= h->nr_boots)
		return 0;	/* foreign keys make this impossible */
	if (grow_array((void **)&w->ivl, &w->alloc, sizeof(*v), w->n + 1) < 0)
		return log_oom();
	v = &w->ivl[w->n++];
	v->id = in->id;
	v->boot = (uint32_t)in->boot;
	v->start_ns = in->start_ns;
	v->end_ns = in->end_ns;
	span = v->end_ns - v->start_ns;
	v->duty = in->sampled && span > 0 ? (float)((double)in->active_ns / (double)span) : NAN;
	v->warmup = v->start_ns < h->boots[in->boot].start_ns + r->o.warmup_ns;
	q->intervals += (size_t)in->intervals;
	q->partial += (size_t)in->partial;
	q->events_lost += in->events_lost;
	q->dropped_intervals += in->dropped_intervals;
	q->samples_lost += in->samples_lost;
	q->throttled += in->throttled;
	q->not_analyzed += (size_t)in->not_analyzed;
	return 0;
}

int collect_rows_index(struct report *r, struct host *h, struct rows *w)
{
	struct quality *q = &h->q;
	int64_t *len = NULL;

	if (w->n == 0)
		return 0;
	/* Gaps: a hole of about an interval or more between two intervals of a boot. */
	len = malloc(w->n * sizeof(*len));
	if (!len)
		return log_oom();
	for (size_t i = 0; i < w->n; i++)
		len[i] = w->ivl[i].end_ns - w->ivl[i].start_ns;
	qsort(len, w->n, sizeof(*len), cmp_i64);
	q->interval_s = (double)len[w->n / 2] / 1e9;
	for (size_t i = 1; i < w->n; i++) {
		int64_t hole = w->ivl[i].start_ns - w->ivl[i - 1].end_ns;

		if (w->ivl[i].boot != w->ivl[i - 1].boot)
			continue;
		if (hole >= len[w->n / 2] * 9 / 10 && hole > 0) {
			q->gaps++;
			q->gap_ns += hole;
			if (hole > q->max_gap_ns)
				q->max_gap_ns = hole;
		}
	}
	free(len);

	w->by_id = malloc(w->n * sizeof(size_t));
	w->buf = malloc(w->n * sizeof(double));
	w->buf2 = malloc(w->n * sizeof(double));
	if (!w->by_id || !w->buf || !w->buf2)
		return log_oom();
	for (size_t i = 0; i < w->n; i++)
		w->by_id[i] = i;
	sort_rows = w;
	qsort(w->by_id, w->n, sizeof(size_t), cmp_by_id);
	sort_rows = NULL;
	for (int p = 0; p < paths_nr(); p++) {
		w->status[p] = calloc(w->n, 1);
		w->rate[p] = malloc(w->n * sizeof(double));
		w->work_sum[p] = calloc(r->nr_bins, sizeof(double));
		w->secs_sum[p] = calloc(r->nr_bins, sizeof(double));
		if (!w->status[p] || !w->rate[p] || !w->work_sum[p] || !w->secs_sum[p])
			return log_oom();
	}
	return 0;
}

static int read_intervals(struct report *r, struct host *h, sqlite3 *db, struct rows *w)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	size_t hint = 0;
	int rc, ret;

	ret = db_prepare(db, &st,
		"SELECT i.interval_id, i.boot_id, i.start_ns, i.end_ns, i.partial, i.events_lost,"
		" i.dropped_intervals, s.active_ns, s.lost, s.throttled, s.interval_id IS NOT NULL,"
		" (a.boot_id IS NULL OR i.interval_id > a.last_interval_id)"
		"   AND NOT EXISTS (SELECT 1 FROM path_intervals p WHERE p.interval_id = i.interval_id)"
		" FROM intervals i"
		" LEFT JOIN sampling s USING (interval_id)"
		" LEFT JOIN analysis_state a ON a.boot_id = i.boot_id"
		" WHERE i.boot_id IN (SELECT boot_id FROM boots WHERE host_id = ?1)"
		"   AND i.start_ns >= ?2 AND i.start_ns < ?3"
		" ORDER BY i.start_ns, i.interval_id");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, h->db_host_id);
	sqlite3_bind_int64(st, 2, r->data_lo_ns);
	sqlite3_bind_int64(st, 3, r->o.until_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t b = boot_index(h, sqlite3_column_int64(st, 1), hint);
		struct ivl_row v = {
			.id = sqlite3_column_int64(st, 0),
			.boot = b,
			.start_ns = sqlite3_column_int64(st, 2),
			.end_ns = sqlite3_column_int64(st, 3),
			.intervals = 1,
			.partial = sqlite3_column_int(st, 4) != 0,
			.events_lost = sqlite3_column_int64(st, 5),
			.dropped_intervals = sqlite3_column_int64(st, 6),
			.active_ns = sqlite3_column_int64(st, 7),
			.samples_lost = sqlite3_column_int64(st, 8),
			.throttled = sqlite3_column_int64(st, 9),
			.sampled = sqlite3_column_int(st, 10),
			.not_analyzed = sqlite3_column_int(st, 11) != 0,
		};

		if (b == SIZE_MAX)
			continue;	/* foreign keys make this impossible */
		hint = b;
		ret = collect_rows_interval(r, h, w, &v);
		if (ret < 0)
			return ret;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return collect_rows_index(r, h, w);
}

static int shares_add(struct path_share *s, size_t *n, struct report *r, const char *name,
		      int64_t hitm, int64_t samples)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(s[i].path, name) == 0) {
			s[i].hitm += hitm;
			s[i].samples += samples;
			return 0;
		}
	if (*n == HOST_SHARES)
		return share_add(r, name, hitm, samples);	/* many object kinds: slower path */
	s[*n].path = strdup(name);
	if (!s[*n].path)
		return log_oom();
	s[*n].hitm = hitm;
	s[(*n)++].samples = samples;
	return 0;
}

static int shares_flush(const struct path_share *s, size_t n, struct report *r)
{
	for (size_t i = 0; i < n; i++) {
		int ret = share_add(r, s[i].path, s[i].hitm, s[i].samples);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int64_t collect_rows_start(struct rows *w, int64_t id)
{
	ssize_t i = w->n ? find_interval(w, id) : -1;

	return i < 0 ? INT64_MIN : w->ivl[i].start_ns;
}

/*
 * path_rates is the analyzer's contract: hitm_per_work is the rate.
 * Rows of other paths ('other:<object>', 'unresolved') only count
 * towards the HITM totals per path.
 */
int collect_rows_rate(struct report *r, struct host *h, struct rows *w, const struct rate_row *in)
{
	int p = in->path ? path_index(in->path) : -1;
	ssize_t i;
	int ret;

	if (in->path && in->start_ns >= r->o.since_ns) {
		ret = shares_add(w->shares, &w->nr_shares, r, in->path, in->has_hitm ? in->hitm : 0,
				 in->samples);
		if (ret < 0)
			return ret;
	}
	if (p < 0 || w->n == 0)
		return 0;
	i = find_interval(w, in->id);
	if (i < 0)
		return 0;
	if (in->has_work && in->work_seconds > 0 && in->start_ns >= r->bins_lo_ns) {
		size_t b = report_bin_of(r, in->start_ns);

		if (b < r->nr_bins) {
			w->work_sum[p][b] += in->work;
			w->secs_sum[p][b] += in->work_seconds;
		}
	}
	if (w->ivl[i].warmup)
		w->status[p][i] = RATE_WARMUP;
	else if (in->has_rate)
		w->status[p][i] = RATE_MEASURED;
	else if (!in->has_hitm)
		w->status[p][i] = RATE_NO_PMU;
	else
		w->status[p][i] = RATE_IDLE;
	w->rate[p][i] = in->has_rate ? in->rate : 0;
	if (in->start_ns >= r->o.since_ns && in->has_hitm)
		h->path[p].hitm += in->hitm;
	return 0;
}

/*
 * Whether a row's work is in the unit the report states for its path (the
 * first work source's): work in another (a boot counting all switches for
 * P1's same-mm ones) is no work of the path here, and its rate no rate.
 * work_source starts with the source's name ("tlb:tlb_flush of boot 3
 * ..."); compared here rather than read from path_rates.work_unit, a
 * lookup per row that would slow every host's read.
 */
static bool row_in_path_unit(sqlite3_stmt *st, int col, const char *path)
{
	const char *src = (const char *)sqlite3_column_text(st, col), *unit;
	int p = path ? path_index(path) : -1;
	char name[128];

	if (p < 0 || !src)
		return true;
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(src, " "), src);
	unit = path_work_unit(path_get(p), name);
	return !unit || strcmp(unit, path_get(p)->unit) == 0;
}

static int read_rates(struct report *r, struct host *h, sqlite3 *db, struct rows *w)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int rc, ret;

	ret = db_prepare(db, &st,
		"SELECT interval_id, path, hitm_per_work, work, hitm, start_ns, end_ns, samples, work_source"
		" FROM path_rates"
		" WHERE boot_id IN (SELECT boot_id FROM boots WHERE host_id = ?1)"
		"   AND start_ns >= ?2 AND start_ns < ?3");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, h->db_host_id);
	sqlite3_bind_int64(st, 2, r->data_lo_ns);
	sqlite3_bind_int64(st, 3, r->o.until_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t start = sqlite3_column_int64(st, 5), end = sqlite3_column_int64(st, 6);
		struct rate_row v = {
			.id = sqlite3_column_int64(st, 0),
			.path = (const char *)sqlite3_column_text(st, 1),
			.start_ns = start,
			.has_rate = sqlite3_column_type(st, 2) != SQLITE_NULL,
			.rate = sqlite3_column_double(st, 2),
			.has_work = sqlite3_column_type(st, 3) != SQLITE_NULL,
			.work = sqlite3_column_double(st, 3),
			.work_seconds = end > start ? (double)(end - start) / 1e9 : 0,
			.has_hitm = sqlite3_column_type(st, 4) != SQLITE_NULL,
			.hitm = sqlite3_column_int64(st, 4),
			.samples = sqlite3_column_int64(st, 7),
		};

		if (!row_in_path_unit(st, 8, v.path))
			v.has_rate = v.has_work = false;
		ret = collect_rows_rate(r, h, w, &v);
		if (ret < 0)
			return ret;
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

double collect_bucket_rate(int p, bool has_hitm, int64_t hitm, bool has_work, double work)
{
	if (p < 0 || !has_hitm || !has_work || work == 0)
		return NAN;
	return (double)hitm * path_get(p)->per / work;
}

/* --rollup: the buckets of common/rollup.c, as the cluster has them. */
struct rollup_ctx {
	struct report *r;
	struct host *h;
	struct rows *w;
	size_t hint;
};

/* Unique in the host: buckets are grain-aligned, far apart next to the boot index. */
static int64_t bucket_id(int64_t bucket_ns, size_t boot)
{
	return bucket_ns + (int64_t)boot;
}

static int rollup_ivl_cb(const struct rollup_bucket *b, void *arg)
{
	struct rollup_ctx *c = arg;
	size_t boot = boot_index(c->h, b->boot_id, c->hint);
	struct ivl_row v = {
		.boot = boot,
		.start_ns = b->start_ns,
		.end_ns = b->end_ns,
		.intervals = b->intervals,
		.partial = b->partial,
		.not_analyzed = b->not_analyzed,
		.sampled = b->sampled,
		.events_lost = b->events_lost,
		.dropped_intervals = b->dropped_intervals,
		.active_ns = b->active_ns,
		.samples_lost = b->samples_lost,
		.throttled = b->throttled,
	};

	if (boot == SIZE_MAX)
		return 0;
	c->hint = boot;
	v.id = bucket_id(b->bucket_ns, boot);
	return collect_rows_interval(c->r, c->h, c->w, &v);
}

static int rollup_rate_cb(const struct rollup_path *b, void *arg)
{
	struct rollup_ctx *c = arg;
	size_t boot = boot_index(c->h, b->boot_id, c->hint);
	int p = path_index(b->path);
	double rate = collect_bucket_rate(p, b->has_hitm, b->hitm, b->has_work, b->work);
	struct rate_row v = {
		.path = b->path,
		.has_hitm = b->has_hitm,
		.hitm = b->hitm,
		.samples = b->samples,
		.has_work = b->has_work,
		.work = b->work,
		.work_seconds = b->work_seconds,
		.has_rate = !isnan(rate),
		.rate = rate,
	};

	if (boot == SIZE_MAX)
		return 0;
	c->hint = boot;
	v.id = bucket_id(b->bucket_ns, boot);
	v.start_ns = collect_rows_start(c->w, v.id);
	if (v.start_ns == INT64_MIN)
		return 0;	/* a bucket next to the range */
	return collect_rows_rate(c->r, c->h, c->w, &v);
}

static int read_rollup(struct report *r, struct host *h, sqlite3 *db, struct rows *w)
{
	struct rollup_ctx c = { .r = r, .h = h, .w = w };
	struct rollup_query q = {
		.grain_ns = r->o.rollup_ns,
		.host_id = h->db_host_id,
		.lo_ns = r->data_lo_ns,
		.hi_ns = r->o.until_ns,
	};
	int ret;

	ret = rollup_buckets(db, &q, rollup_ivl_cb, &c);
	if (ret < 0)
		return ret;
	ret = collect_rows_index(r, h, w);
	if (ret < 0 || w->n == 0)
		return ret;
	c.hint = 0;
	return rollup_paths(db, &q, rollup_rate_cb, &c);
}

/* Measured rates of [lo, hi) into w->buf, sorted; exclusions counted. */
static size_t window_rates(const struct rows *w, int p, int64_t lo, int64_t hi,
			   struct window *win, bool sorted)
{
	size_t a = lower_bound(w, lo), b = lower_bound(w, hi), n = 0;
	double duty = 0;
	size_t nduty = 0;

	memset(win, 0, sizeof(*win));
	win->lo_ns = lo;
	win->hi_ns = hi;
	for (size_t i = a; i < b; i++) {
		switch (w->status[p][i]) {
		case RATE_MEASURED:
			w->buf[n++] = w->rate[p][i];
			if (!isnan(w->ivl[i].duty)) {
				duty += w->ivl[i].duty;
				nduty++;
			}
			break;
		case RATE_WARMUP: win->ex.warmup++; break;
		case RATE_NO_PMU: win->ex.no_pmu++; break;
		case RATE_IDLE: win->ex.idle++; break;
		default: win->ex.not_analyzed++; break;
		}
	}
	win->n = n;
	win->duty = nduty ? duty / (double)nduty : NAN;
	if (sorted) {
		stats_sort(w->buf, n);
		win->median = stats_median_sorted(w->buf, n);
		win->p25 = stats_quantile_sorted(w->buf, n, 0.25);
		win->p75 = stats_quantile_sorted(w->buf, n, 0.75);
	} else {
		win->median = stats_median_select(w->buf, n);
		win->p25 = win->p75 = NAN;
	}
	return n;
}

static bool host_changes_kernel(const struct host *h, int64_t lo, int64_t hi)
{
	for (size_t i = 0; i < h->nr_rollouts; i++)
		if (h->rollouts[i].t_ns >= lo && h->rollouts[i].t_ns < hi)
			return true;
	return false;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

#define DAY_NS (86400 * NSEC_PER_SEC)

/*
 * A window longer than a day is cut to whole days, on the side away from
 * the change, so a daily load cycle weighs the same in every window.
 */
static int64_t whole_days(int64_t len)
{
	return len > DAY_NS ? len / DAY_NS * DAY_NS : len;
}

/* Measured rates of [lo, hi) into out, in time order. */
static size_t gather_rates(const struct rows *w, int p, int64_t lo, int64_t hi, double *out)
{
	size_t n = 0;

	for (size_t i = lower_bound(w, lo), e = lower_bound(w, hi); i < e; i++)
		if (w->status[p][i] == RATE_MEASURED)
			out[n++] = w->rate[p][i];
	return n;
}

/*
 * A side of whole days cut into STATS_HOST_BLOCKS blocks of whole days:
 * the rates of [lo, lo + days) into out in time order, off[] where each
 * block starts.
 */
static void gather_blocks(const struct rows *w, int p, int64_t lo, unsigned int days,
			  double *out, size_t *off)
{
	int64_t cut = lo + (int64_t)stats_block_days(days) * DAY_NS;

	static_assert(STATS_HOST_BLOCKS == 2, "a side is cut once");
	off[0] = 0;
	off[1] = gather_rates(w, p, lo, cut, out);
	off[2] = off[1] + gather_rates(w, p, cut, lo + (int64_t)days * DAY_NS, out + off[1]);
}

/* Days of [lo, lo + days * DAY_NS) with a measured rate. */
static unsigned int days_with_rates(const struct rows *w, int p, int64_t lo, unsigned int days)
{
	unsigned int n = 0;

	for (unsigned int d = 0; d < days; d++) {
		for (size_t i = lower_bound(w, lo + (int64_t)d * DAY_NS),
		     e = lower_bound(w, lo + (int64_t)(d + 1) * DAY_NS); i < e; i++)
			if (w->status[p][i] == RATE_MEASURED) {
				n++;
				break;
			}
	}
	return n;
}

/*
 * Days with rates on a side, at most 1 when they all lie in one of its
 * blocks: a side whose data covers one block only (a rollout minutes after
 * the first boot) has no spread between days to measure.
 */
static unsigned int side_days(const struct rows *w, int p, int64_t lo, unsigned int days)
{
	unsigned int first = stats_block_days(days), a, b;

	if (days < STATS_HOST_BLOCKS)
		return days_with_rates(w, p, lo, days);
	a = days_with_rates(w, p, lo, first);
	b = days_with_rates(w, p, lo + (int64_t)first * DAY_NS, days - first);
	if (!a || !b)
		return a + b ? 1 : 0;	/* the days with rates all in one half */
	return a + b;
}

/* The trimmed mean of the measured rates of [lo, hi), gathered into buf; NAN without rates. */
static double window_level(const struct rows *w, int p, int64_t lo, int64_t hi, double *buf)
{
	return stats_trimmed_mean(buf, gather_rates(w, p, lo, hi, buf), STATS_TRIM);
}

/*
 * What the fleet takes from the windows [lo, t) and [t, hi) around a change
 * or a cohort's time: the change of their levels and, with more than
 * NEAR_DAYS whole days a side, the covariates: each side's NEAR_DAYS days
 * next to t against the rest of the side.
 */
static void fleet_input_of(const struct rows *w, int p, int64_t lo, int64_t t, int64_t hi,
			   double *buf, struct fleet_input *fi)
{
	int64_t near = NEAR_DAYS * DAY_NS;
	double nb, fb, na, fa;

	memset(fi, 0, sizeof(*fi));
	fi->level_before = window_level(w, p, lo, t, buf);
	fi->level_after = window_level(w, p, t, hi, buf);
	fi->log_change = fi->level_before > 0 && fi->level_after > 0 ?
			 log(fi->level_after / fi->level_before) : NAN;
	if (isnan(fi->log_change) || t - lo <= near || hi - t <= near)
		return;
	nb = window_level(w, p, t - near, t, buf);
	fb = window_level(w, p, lo, t - near, buf);
	na = window_level(w, p, t, t + near, buf);
	fa = window_level(w, p, t + near, hi, buf);
	if (!(nb > 0 && fb > 0 && na > 0 && fa > 0))
		return;
	fi->near[0] = log(nb / fb);
	fi->near[1] = log(na / fa);
	fi->has_near = true;
}

static int compare_rollout(struct report *r, struct host *h, struct rows *w, int p,
			   size_t ri, struct comparison *c)
{
	const struct rollout *ro = &h->rollouts[ri];
	int64_t t = ro->t_ns, lo, hi, len_before, len_after;
	size_t nb, na;
	int ret;

	memset(c, 0, sizeof(*c));
	c->rollout = ri;
	c->change = NAN;
	lo = max64(t - r->o.before_ns, ro->prev_ns);
	hi = min64(min64(t + r->o.after_ns, ro->next_ns), r->o.until_ns);
	len_before = whole_days(t - lo);
	len_after = whole_days(hi - t);
	c->days_before = len_before >= DAY_NS ? (unsigned int)(len_before / DAY_NS) : 0;
	c->days_after = len_after >= DAY_NS ? (unsigned int)(len_after / DAY_NS) : 0;
	c->data_days_before = side_days(w, p, t - len_before, c->days_before);
	c->data_days_after = side_days(w, p, t, c->days_after);
	c->too_short = c->data_days_before < STATS_HOST_BLOCKS || c->data_days_after < STATS_HOST_BLOCKS;
	nb = window_rates(w, p, t - len_before, t, &c->before, true);
	/* Keep the sorted before-rates while the after-rates are gathered. */
	if (nb)
		memcpy(w->buf2, w->buf, nb * sizeof(double));
	na = window_rates(w, p, t, t + len_after, &c->after, true);
	if (nb && na) {
		if (c->before.median > 0)
			c->change = c->after.median / c->before.median - 1;
		else if (c->after.median == 0)
			c->change = 0;
		ret = stats_mann_whitney_sorted(w->buf2, nb, w->buf, na, &c->mwu);
		c->has_mwu = ret == 0;
	}
	if (!c->too_short && nb >= r->o.min_intervals && na >= r->o.min_intervals) {
		size_t ob[STATS_HOST_BLOCKS + 1], oa[STATS_HOST_BLOCKS + 1];

		/* Day-long blocks carry the host's drift between days into the interval. */
		gather_blocks(w, p, t - len_before, c->days_before, w->buf2, ob);
		gather_blocks(w, p, t, c->days_after, w->buf, oa);
		ret = stats_block_change(w->buf2, ob, w->buf, oa, r->o.level, &c->bc);
		if (ret == -ENOMEM)
			return log_oom();
		if (ret == 0) {
			c->has_ci = true;
			c->ci = rel_ci_of(&c->bc.log);
		}
	}
	fleet_input_of(w, p, c->before.lo_ns, t, c->after.hi_ns, w->buf, &c->fi);
	comparison_decide(r, c);
	return 0;
}

/* Picks the comparison the fleet verdict uses, or says why there is none. */
static void choose(struct report *r, struct host *h, int p)
{
	struct host_path *hp = &h->path[p];
	struct fleet_path *f = &r->fleet[p];
	bool gained = false, unknown = false, any = false, no_pmu = true, zero = false;
	size_t best_n = 0;

	hp->chosen = -1;
	hp->excluded_why = NULL;
	if (hp->na_why) {
		hp->excluded_why = hp->na_why;
		f->ex_not_applicable++;
		return;
	}
	for (size_t i = 0; i < hp->nr_cmp; i++) {
		const struct comparison *c = &hp->cmp[i];
		const struct rollout *ro = &h->rollouts[c->rollout];
		size_t n = c->before.n < c->after.n ? c->before.n : c->after.n;

		any = true;
		if (ro->change[p] == CHANGE_UNKNOWN)
			unknown = true;
		if (ro->change[p] != CHANGE_GAINED)
			continue;
		gained = true;
		if (c->before.n || c->after.n || (!c->before.ex.no_pmu && !c->after.ex.no_pmu))
			no_pmu = false;
		if (n < r->o.min_intervals)
			continue;
		if (!(c->before.median > 0 && c->after.median > 0)) {
			zero = true;
			continue;
		}
		if (n > best_n) {
			best_n = n;
			hp->chosen = (ssize_t)i;
		}
	}
	if (!any)
		return;
	if (gained)
		f->candidates++;
	if (hp->chosen >= 0)
		return;
	if (!gained && unknown) {
		hp->excluded_why = "the patch map does not say whether the kernels carry the patch";
		f->ex_unknown_patch++;
	} else if (!gained) {
		hp->excluded_why = "no kernel change in range added the patch";
		f->ex_not_gained++;
	} else if (no_pmu) {
		hp->excluded_why = "HITM not measured (no PMU)";
		f->ex_no_pmu++;
	} else if (zero) {
		hp->excluded_why = "median rate 0 on one side";
		f->ex_zero++;
	} else {
		hp->excluded_why = "too few measured intervals";
		f->ex_few++;
	}
}

/* A host whose kernels cannot run the path: its comparisons say so, whatever their numbers. */
static int mark_not_applicable(struct host_path *hp)
{
	for (size_t i = 0; i < hp->nr_cmp; i++) {
		free(hp->cmp[i].reason);
		hp->cmp[i].reason = strdup(hp->na_why);
		hp->cmp[i].verdict = VERDICT_NOT_APPLICABLE;
		if (!hp->cmp[i].reason)
			return -ENOMEM;
	}
	return 0;
}

static int host_comparisons(struct report *r, struct host *h, struct rows *w)
{
	size_t in_range = 0;
	int ret;

	for (size_t i = 0; i < h->nr_rollouts; i++) {
		h->rollout_in_range[i] = h->rollouts[i].t_ns >= r->o.since_ns &&
					 h->rollouts[i].t_ns < r->o.until_ns;
		in_range += h->rollout_in_range[i];
	}
	for (int p = 0; p < paths_nr(); p++) {
		struct host_path *hp = &h->path[p];

		if (in_range) {
			hp->cmp = calloc(in_range, sizeof(*hp->cmp));
			if (!hp->cmp)
				return log_oom();
		}
		for (size_t i = 0; i < h->nr_rollouts; i++) {
			if (!h->rollout_in_range[i])
				continue;
			ret = compare_rollout(r, h, w, p, i, &hp->cmp[hp->nr_cmp++]);
			if (ret < 0)
				return ret;
		}
		if (hp->na_why && mark_not_applicable(hp) < 0)
			return log_oom();
		choose(r, h, p);
		if (hp->chosen >= 0) {
			const struct comparison *c = &hp->cmp[hp->chosen];
			struct window tmp;
			size_t n;

			/* The pooled distributions show the comparisons the verdict uses. */
			n = window_rates(w, p, c->before.lo_ns, c->before.hi_ns, &tmp, false);
			for (size_t k = 0; k < n; k++)
				hist_add(r->fleet[p].hist_before, w->buf[k]);
			n = window_rates(w, p, c->after.lo_ns, c->after.hi_ns, &tmp, false);
			for (size_t k = 0; k < n; k++)
				hist_add(r->fleet[p].hist_after, w->buf[k]);

			ret = fleet_add_treated(&r->fleet[p], &c->fi,
						report_cohort_of(r, h->rollouts[c->rollout].t_ns));
			if (ret < 0)
				return log_oom();
		}
	}
	return 0;
}

/* Kept so the JSON can show every number the difference in differences used. */
static int host_add_control(struct host *h, int p, unsigned int cohort, const struct window *before,
			    const struct window *after, const struct fleet_input *fi)
{
	struct control *n = realloc(h->controls[p], (h->nr_controls[p] + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	h->controls[p] = n;
	n[h->nr_controls[p]++] = (struct control){
		.cohort = cohort,
		.before = *before,
		.after = *after,
		.fi = *fi,
	};
	return 0;
}

/* A host that kept its kernel around a cohort's time is that cohort's control. */
static int host_controls(struct report *r, struct host *h, struct rows *w)
{
	bool added[MAX_PATHS] = {};

	for (size_t c = 0; c < r->nr_cohorts; c++) {
		int64_t ref = r->cohorts[c].ref_ns;
		int64_t lo = ref - whole_days(r->o.before_ns);
		int64_t hi = ref + whole_days(min64(ref + r->o.after_ns, r->o.until_ns) - ref);

		if (host_changes_kernel(h, lo, hi))
			continue;
		for (int p = 0; p < paths_nr(); p++) {
			struct window before, after;
			struct fleet_input fi;
			size_t nb = window_rates(w, p, lo, ref, &before, false);
			size_t na = window_rates(w, p, ref, hi, &after, false);

			if (h->path[p].na_why)
				continue;	/* its kernels cannot run the path */
			if (nb < r->o.min_intervals || na < r->o.min_intervals)
				continue;
			if (!(before.median > 0 && after.median > 0))
				continue;
			fleet_input_of(w, p, lo, ref, hi, w->buf, &fi);
			if (fleet_add_control(&r->fleet[p], &fi, (unsigned int)c) < 0)
				return log_oom();
			if (host_add_control(h, p, (unsigned int)c, &before, &after, &fi) < 0)
				return log_oom();
			added[p] = true;
		}
	}
	for (int p = 0; p < paths_nr(); p++)
		r->fleet[p].controls_hosts += added[p];
	return 0;
}

static void host_bins(struct report *r, struct host *h, struct rows *w)
{
	for (int p = 0; p < paths_nr(); p++) {
		struct host_path *hp = &h->path[p];
		size_t i = lower_bound(w, r->bins_lo_ns), n_range = 0;

		for (size_t b = 0; b < r->nr_bins; b++) {
			int64_t hi = r->bins_lo_ns + (int64_t)(b + 1) * r->bin_ns;
			size_t n = 0;
			int state = 0;

			for (; i < w->n && w->ivl[i].start_ns < hi; i++) {
				state = h->kernels[h->boots[w->ivl[i].boot].kernel].patches[p].state + 1;
				if (w->status[p][i] == RATE_MEASURED)
					w->buf[n++] = w->rate[p][i];
			}
			hp->bin_rate[b] = n ? (float)stats_median_select(w->buf, n) : NAN;
			hp->bin_state[b] = (uint8_t)state;
		}
		/* The median over the report range, for the host table. */
		for (size_t k = lower_bound(w, r->o.since_ns); k < w->n; k++)
			if (w->status[p][k] == RATE_MEASURED)
				w->buf[n_range++] = w->rate[p][k];
		hp->measured = n_range;
		hp->median = stats_median_select(w->buf, n_range);
	}
}

/* A boot with time in what the report reads, windows included. */
static bool boot_in_range(const struct report *r, const struct boot_info *b)
{
	return b->last_seen_ns >= r->data_lo_ns && b->start_ns < r->o.until_ns;
}

/*
 * Per path, why no boot of the host in range can run it (paths.conf
 * needs): "LRU_GEN on in every boot: <needs_why>"; NULL when one can.
 */
static int host_applicable(struct report *r, struct host *h)
{
	static const char *const states[] = { "on", "off", "absent" };

	for (int p = 0; p < paths_nr() && h->q.boots; p++) {
		const struct path_def *d = path_get(p);
		unsigned int seen = 0;
		bool runs = false;
		char list[32] = "";

		for (size_t i = 0; i < h->nr_boots && !runs; i++) {
			const struct boot_info *b = &h->boots[i];

			if (!boot_in_range(r, b))
				continue;
			runs = path_runs_with(d, "lru_gen", b->lru_gen);
			for (size_t k = 0; k < ARRAY_SIZE(states); k++)
				seen |= strcmp(b->lru_gen, states[k]) == 0 ? 1u << k : 0;
		}
		if (runs)
			continue;
		for (size_t k = 0; k < ARRAY_SIZE(states); k++)
			if (seen & (1u << k))
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 *list ? " or " : "", states[k]);
		if (asprintf(&h->path[p].na_why, "LRU_GEN %s in every boot: %s", list,
			     d->needs_why ? d->needs_why : "the path table's needs") < 0) {
			h->path[p].na_why = NULL;
			return log_oom();
		}
	}
	return 0;
}

static void host_quality(struct report *r, struct host *h)
{
	bool pmu = false, lru = false;

	for (size_t i = 0; i < h->nr_boots; i++) {
		const struct boot_info *b = &h->boots[i];

		if (!boot_in_range(r, b))
			continue;
		h->q.boots++;
		if (strcmp(b->pmu_kind, "none") != 0) {
			h->q.pmu_boots++;
			pmu = true;
		}
		/* unknown (an imported recording) is not known to be off */
		if (strcmp(b->lru_gen, "off") != 0 && strcmp(b->lru_gen, "absent") != 0)
			lru = true;
	}
	h->no_pmu = h->q.boots && !pmu;
	h->lru_gen_off = h->q.boots && !lru;
}

static int collect_lines(struct report *r, size_t host_index, sqlite3 *db, int p)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	struct host *h = &r->hosts[host_index];
	struct top_line *top = p >= 0 ? r->fleet[p].top : r->other_top;
	size_t *nr = p >= 0 ? &r->fleet[p].nr_top : &r->nr_other_top;
	int rc, ret;

	ret = db_prepare(db, &st,
		"SELECT a.line_addr, a.object_type, a.field, m.comm, m.tgid,"
		" sum(l.lcl_hitm), sum(l.rmt_hitm), sum(l.lcl_peer + l.rmt_peer),"
		" sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS hitm,"
		" sum(l.loads), sum(l.stores), group_concat(DISTINCT a.symbol), a.path"
		" FROM line_attribution a"
		" JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		" JOIN intervals i USING (interval_id)"
		" LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref"
		" WHERE i.boot_id IN (SELECT boot_id FROM boots WHERE host_id = ?1)"
		"   AND i.start_ns >= ?2 AND i.start_ns < ?3"
		"   AND (CASE WHEN ?4 IS NULL THEN instr(' ' || ?6 || ' ', ' ' || a.path || ' ') = 0"
		"        ELSE a.path = ?4 END)"
		" GROUP BY i.boot_id, a.path, a.line_addr, a.object_type, a.field"
		" HAVING hitm > 0 ORDER BY hitm DESC LIMIT ?5");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, h->db_host_id);
	sqlite3_bind_int64(st, 2, r->o.since_ns);
	sqlite3_bind_int64(st, 3, r->o.until_ns);
	if (p >= 0)
		sqlite3_bind_text(st, 4, path_get(p)->id, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, TOP_LINES);
	sqlite3_bind_text(st, 6, paths_ids(), -1, SQLITE_STATIC);	/* the paths' own lines */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct top_line l = {
			.host = host_index,
			.line_addr = sqlite3_column_int64(st, 0),
			.tgid = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 4),
			.lcl_hitm = sqlite3_column_int64(st, 5),
			.rmt_hitm = sqlite3_column_int64(st, 6),
			.peer = sqlite3_column_int64(st, 7),
			.hitm = sqlite3_column_int64(st, 8),
			.loads = sqlite3_column_int64(st, 9),
			.stores = sqlite3_column_int64(st, 10),
		};

		/* Only what would enter the top list is copied. */
		if (*nr == TOP_LINES && top[TOP_LINES - 1].hitm >= l.hitm)
			break;
		l.object_type = column_strdup(st, 1);
		l.field = column_strdup(st, 2);
		l.comm = column_strdup(st, 3);
		l.symbols = column_strdup(st, 11);
		l.path = column_strdup(st, 12);
		top_line_add(top, nr, &l);
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_step_failed(st, rc);
	return 0;
}

/*
 * The host's HITM per path and grade in the range, added to the fleet's.
 * A database from before graded attribution (schema 7) has no grades: its
 * HITM counts as ungraded.
 */
static int collect_grades(struct report *r, struct host *h, sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	bool graded = true;
	int rc, ret;

	ret = db_prepare(db, &st,
		"SELECT a.path, coalesce(a.grade, 'none'), sum(l.lcl_hitm + l.rmt_hitm)"
		" FROM line_attribution a"
		" JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		" JOIN intervals i USING (interval_id)"
		" WHERE i.boot_id IN (SELECT boot_id FROM boots WHERE host_id = ?1)"
		"   AND i.start_ns >= ?2 AND i.start_ns < ?3"
		" GROUP BY 1, 2");
	if (ret < 0) {
		graded = false;
		ret = db_prepare(db, &st,
			"SELECT a.path, 'none', sum(l.lcl_hitm + l.rmt_hitm) FROM line_attribution a"
			" JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
			" JOIN intervals i USING (interval_id)"
			" WHERE i.boot_id IN (SELECT boot_id FROM boots WHERE host_id = ?1)"
			"   AND i.start_ns >= ?2 AND i.start_ns < ?3 GROUP BY 1");
		if (ret < 0)
			goto fail;
	}
	sqlite3_bind_int64(st, 1, h->db_host_id);
	sqlite3_bind_int64(st, 2, r->o.since_ns);
	sqlite3_bind_int64(st, 3, r->o.until_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int p = path_index((const char *)sqlite3_column_text(st, 0));
		const char *g = (const char *)sqlite3_column_text(st, 1);
		int k = GRADE_NONE;

		if (p < 0)
			continue;
		for (int i = 0; graded && g && i < NR_GRADES; i++)
			if (strcmp(g, grade_names[i]) == 0)
				k = i;
		r->fleet[p].grade_hitm[k] += sqlite3_column_int64(st, 2);
	}
	if (rc == SQLITE_DONE)
		return 0;
	ret = db_step_failed(st, rc);
fail:
	/* The report goes on without them: said, in the user's words. */
	return log_warning_errno(ret, "Cannot read the grades of %s: %s, ignoring", h->db, db_error(ret));
}

int collect_host_begin(struct report *r, struct host *h)
{
	for (int p = 0; p < paths_nr(); p++) {
		struct host_path *hp = &h->path[p];

		hp->bin_rate = malloc((r->nr_bins + 1) * sizeof(float));
		hp->bin_work = malloc((r->nr_bins + 1) * sizeof(float));
		hp->bin_state = calloc(r->nr_bins + 1, 1);
		if (!hp->bin_rate || !hp->bin_work || !hp->bin_state)
			return log_oom();
		for (size_t b = 0; b < r->nr_bins; b++)
			hp->bin_rate[b] = hp->bin_work[b] = NAN;
		hp->median = NAN;
	}
	host_quality(r, h);
	return host_applicable(r, h);
}

/* Everything pass 2 computes from a host's rows; they can be freed after. */
int collect_rows_finish(struct report *r, struct host *h, struct rows *w)
{
	int ret;

	if (w->n == 0)
		return host_comparisons(r, h, w);
	for (int p = 0; p < paths_nr(); p++)
		for (size_t b = 0; b < r->nr_bins; b++)
			h->path[p].bin_work[b] = w->secs_sum[p][b] > 0 ?
				(float)(w->work_sum[p][b] / w->secs_sum[p][b]) : NAN;
	ret = shares_flush(w->shares, w->nr_shares, r);
	if (ret < 0)
		return ret;
	ret = host_comparisons(r, h, w);
	if (ret < 0)
		return ret;
	ret = host_controls(r, h, w);
	if (ret < 0)
		return ret;
	host_bins(r, h, w);
	return 0;
}

int collect_rates(struct report *r, struct host *h, size_t host_index, sqlite3 *db)
{
	struct rows w = {};
	int ret;

	ret = collect_host_begin(r, h);
	if (ret < 0)
		return ret;
	if (r->o.rollup_ns > 0) {
		ret = read_rollup(r, h, db, &w);
	} else {
		ret = read_intervals(r, h, db, &w);
		if (ret >= 0 && w.n)
			ret = read_rates(r, h, db, &w);
	}
	if (ret < 0)
		goto out;
	ret = collect_rows_finish(r, h, &w);
	if (ret < 0)
		goto out;
	collect_grades(r, h, db);
	for (int p = -1; p < paths_nr(); p++) {
		ret = collect_lines(r, host_index, db, p);
		if (ret < 0)
			goto out;
	}
out:
	rows_done(&w);
	return ret;
}
