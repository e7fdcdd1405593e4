// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's arithmetic: a lab's runs read from the database (lab_runs,
 * lab_run_intervals, path_rates) into struct lab_table, boot medians, and
 * the change with the boot as the unit of replication. See lab.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "lab.h"
#include "util.h"

double lab_boot_median(double *v, size_t n)
{
	return n ? stats_median_select(v, n) : NAN;
}

int lab_compare(const double *base, size_t nb, const double *patched, size_t np, double level,
		struct lab_change *ret)
{
	double lb[LAB_MAX_BOOTS], lp[LAB_MAX_BOOTS];
	struct t_interval w;

	memset(ret, 0, sizeof(*ret));
	ret->verdict = LAB_TOO_FEW;
	ret->change = ret->lo = ret->hi = ret->half_width = NAN;
	if (!nb || !np || nb > LAB_MAX_BOOTS || np > LAB_MAX_BOOTS)
		return 0;
	for (size_t i = 0; i < nb; i++)
		if (!(base[i] > 0))
			return -EDOM;
	for (size_t i = 0; i < np; i++)
		if (!(patched[i] > 0))
			return -EDOM;
	ret->change = stats_mean(patched, np) / stats_mean(base, nb) - 1;
	if (nb < 2 || np < 2)
		return 0;
	for (size_t i = 0; i < nb; i++)
		lb[i] = log(base[i]);
	for (size_t i = 0; i < np; i++)
		lp[i] = log(patched[i]);
	if (stats_welch(lp, np, lb, nb, level, &w) < 0)
		return 0;
	/*
	 * Welch's standard error with min(nb, np) - 1 degrees of freedom
	 * (Banerjee's and Hsu's bound): false changes stay under 1 - level
	 * whatever the ratio of the sides' boot spreads. With two boots a
	 * side Welch's own degrees of freedom called 6 % of A/A labs changed
	 * when one kernel's boots spread ten times the other's
	 * (tests/unit/test-lab-calibration.c).
	 */
	stats_t_interval(w.estimate, w.se, (double)((nb < np ? nb : np) - 1), level, &w);
	ret->has_interval = true;
	ret->df = w.df;
	ret->lo = expm1(w.lo);
	ret->hi = expm1(w.hi);
	ret->half_width = (ret->hi - ret->lo) / 2;
	ret->verdict = w.lo > 0 ? LAB_HIGHER : w.hi < 0 ? LAB_LOWER : LAB_NOT_SHOWN;
	return 0;
}

const char *lab_at_label(const char *reproducer)
{
	if (strcmp(reproducer, "ctxswitch") == 0)
		return "CPUs";
	if (strcmp(reproducer, "aging") == 0)
		return "processes";
	return "threads";
}

const char *lab_config_label(const char *reproducer, bool control)
{
	if (strcmp(reproducer, "ctxswitch") == 0)
		return control ? "private mm" : "shared mm";
	return control ? "control" : "";
}

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? strdup((const char *)s) : NULL;
}

static int read_lab(sqlite3 *db, const char *name, struct lab_table *t, int64_t *ret_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, n = 0;

	r = db_prepare(db, &st, "SELECT lab_id, name, reproducer, path, runs, boots FROM labs "
			       "WHERE ?1 IS NULL OR name = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++)
			return -EEXIST;
		*ret_id = sqlite3_column_int64(st, 0);
		t->name = col_dup(st, 1);
		t->reproducer = col_dup(st, 2);
		t->path = col_dup(st, 3);
		t->runs = sqlite3_column_int(st, 4);
		t->boots = sqlite3_column_int(st, 5);
		if (!t->name || !t->reproducer || !t->path)
			return -ENOMEM;
	}
	if (r != SQLITE_DONE)
		return db_step_failed(st, r);
	if (!n)
		return name ? -ENOENT : -ENODATA;
	return 0;
}

static int read_configs(sqlite3 *db, int64_t lab, struct lab_table *t)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "SELECT config, at, control, args FROM lab_configs WHERE lab_id = ?1 "
			       "ORDER BY control, at, config");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lab);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct lab_config *c, *grown;

		grown = reallocarray(t->configs, t->nconfigs + 1, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->configs = grown;
		c = &t->configs[t->nconfigs++];
		memset(c, 0, sizeof(*c));
		c->config = sqlite3_column_int(st, 0);
		c->at = sqlite3_column_int(st, 1);
		c->control = sqlite3_column_int(st, 2);
		c->args = col_dup(st, 3);
		for (int s = 0; s < 2; s++)
			c->side[s].value = NAN;
		c->rate[0] = c->rate[1] = c->moved_off = NAN;
	}
	return r == SQLITE_DONE ? 0 : db_step_failed(st, r);
}

/* The two kernels: base first. */
static int read_kernels(sqlite3 *db, int64_t lab, struct lab_table *t)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "SELECT side, kernel_release, kernel_version, "
			       "count(done_ns) FROM lab_boots WHERE lab_id = ?1 GROUP BY side");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lab);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int s = strcmp((const char *)sqlite3_column_text(st, 0), "patched") == 0;

		t->release[s] = col_dup(st, 1);
		t->version[s] = col_dup(st, 2);
		t->boots_done[s] = sqlite3_column_int(st, 3);
	}
	return r == SQLITE_DONE ? 0 : db_step_failed(st, r);
}

static struct lab_config *config_of(struct lab_table *t, int config)
{
	for (size_t i = 0; i < t->nconfigs; i++)
		if (t->configs[i].config == config)
			return &t->configs[i];
	return NULL;
}

/* Adds one boot's runs (v[n]) of a configuration to its side. */
static void add_boot(struct lab_side *s, int seq, double *v, size_t n)
{
	if (!n || s->nboots >= LAB_MAX_BOOTS)
		return;
	s->seq[s->nboots] = seq;
	s->runs[s->nboots] = n;
	s->median[s->nboots++] = lab_boot_median(v, n);
}

static void take_metric(struct lab_table *t, sqlite3_stmt *st)
{
	if (t->have_metric || sqlite3_column_type(st, 5) == SQLITE_NULL)
		return;
	t->metric = col_dup(st, 5);
	t->unit = col_dup(st, 6);
	t->higher_is_better = sqlite3_column_int(st, 7);
	t->have_metric = t->metric && t->unit;
}

/* Every run with a value, a boot at a time, into the boot medians. */
static int read_runs(sqlite3 *db, int64_t lab, struct lab_table *t)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	_cleanup_free_ double *v = NULL;
	size_t n = 0, size = 0;
	int r, cur_config = -1, cur_side = -1, cur_seq = -1;

	r = db_prepare(db, &st, "SELECT r.config, b.side = 'patched', b.seq, r.value, r.boot_uuid, "
			       "r.metric, r.unit, r.higher_is_better FROM lab_runs r "
			       "JOIN lab_boots b USING (lab_id, boot_uuid) "
			       "WHERE r.lab_id = ?1 AND r.value IS NOT NULL ORDER BY r.config, 2, b.seq");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lab);
	for (;;) {
		bool row = (r = sqlite3_step(st)) == SQLITE_ROW;
		int config = row ? sqlite3_column_int(st, 0) : -2;
		int side = row ? sqlite3_column_int(st, 1) : -2;
		int seq = row ? sqlite3_column_int(st, 2) : -2;

		if (n && (config != cur_config || side != cur_side || seq != cur_seq)) {
			struct lab_config *c = config_of(t, cur_config);

			if (c)
				add_boot(&c->side[cur_side], cur_seq, v, n);
			n = 0;
		}
		if (!row)
			break;
		if (n == size) {
			double *grown = reallocarray(v, size ? 2 * size : 16, sizeof(*v));

			if (!grown)
				return -ENOMEM;
			v = grown;
			size = size ? 2 * size : 16;
		}
		v[n++] = sqlite3_column_double(st, 3);
		cur_config = config, cur_side = side, cur_seq = seq;
		take_metric(t, st);
	}
	return r == SQLITE_DONE ? 0 : db_step_failed(st, r);
}

/*
 * HITM and work over each configuration's runs, per side: the intervals
 * of the runs' spans (lab_run_intervals), their rows in path_rates.
 */
static int read_hitm(sqlite3 *db, int64_t lab, struct lab_table *t)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st,
		"SELECT ri.config, b.side = 'patched', "
		"  sum(CASE WHEN p.path = l.path AND p.hitm_per_work IS NOT NULL THEN p.hitm END), "
		"  sum(CASE WHEN p.path = l.path AND p.hitm_per_work IS NOT NULL THEN p.work END), "
		"  sum(p.hitm), max(CASE WHEN p.path = l.path THEN p.per_work_units END), "
		"  count(DISTINCT CASE WHEN p.path = l.path AND p.hitm_per_work IS NOT NULL "
		"                 THEN p.work_unit END), "
		"  max(CASE WHEN p.path = l.path AND p.hitm_per_work IS NOT NULL THEN p.work_unit END) "
		"FROM lab_run_intervals ri "
		"JOIN labs l USING (lab_id) "
		"JOIN lab_runs r USING (lab_id, boot_uuid, config, run) "
		"JOIN lab_boots b USING (lab_id, boot_uuid) "
		"JOIN path_rates p ON p.interval_id = ri.interval_id AND p.hitm IS NOT NULL "
		"WHERE ri.lab_id = ?1 AND r.value IS NOT NULL GROUP BY 1, 2");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lab);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct lab_config *c = config_of(t, sqlite3_column_int(st, 0));
		struct lab_side *s;

		if (!c)
			continue;
		s = &c->side[sqlite3_column_int(st, 1)];
		s->sampled = true;
		s->hitm = sqlite3_column_double(st, 2);
		s->work = sqlite3_column_double(st, 3);
		s->all_hitm = sqlite3_column_double(st, 4);
		if (sqlite3_column_type(st, 5) != SQLITE_NULL)
			t->per_work_units = sqlite3_column_double(st, 5);
		if (sqlite3_column_int(st, 6) > 1)
			snprintf(s->work_unit, sizeof(s->work_unit), "several units");
		else if (sqlite3_column_type(st, 7) != SQLITE_NULL)
			snprintf(s->work_unit, sizeof(s->work_unit), "%s", sqlite3_column_text(st, 7));
	}
	return r == SQLITE_DONE ? 0 : db_step_failed(st, r);
}

/* The runs' intervals that sampled memory and have no path rows yet. */
static int read_unanalyzed(sqlite3 *db, int64_t lab, struct lab_table *t)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "SELECT count(DISTINCT ri.interval_id) FROM lab_run_intervals ri "
			       "JOIN sampling s USING (interval_id) WHERE ri.lab_id = ?1 AND s.samples > 0 "
			       "AND NOT EXISTS (SELECT 1 FROM path_intervals p WHERE p.interval_id = ri.interval_id)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lab);
	r = sqlite3_step(st);
	if (r != SQLITE_ROW)
		return db_step_failed(st, r);
	t->unanalyzed = (size_t)sqlite3_column_int64(st, 0);
	return 0;
}

/* The changes, and the HITM rates where both sides sampled in one unit. */
static int summarize(struct lab_table *t)
{
	for (size_t i = 0; i < t->nconfigs; i++) {
		struct lab_config *c = &t->configs[i];
		struct lab_side *b = &c->side[0], *p = &c->side[1];
		int r;

		for (int s = 0; s < 2; s++)
			if (c->side[s].nboots)
				c->side[s].value = stats_mean(c->side[s].median, c->side[s].nboots);
		/* a median of 0 has no log: that configuration gets no change, the rest do */
		r = lab_compare(b->median, b->nboots, p->median, p->nboots, LAB_LEVEL, &c->change);
		if (r < 0 && r != -EDOM)
			return r;
		for (int s = 0; s < 2; s++)
			if (c->side[s].work > 0 && t->per_work_units > 0)
				c->rate[s] = c->side[s].hitm * t->per_work_units / c->side[s].work;
		c->hitm = !isnan(c->rate[0]) && !isnan(c->rate[1]) &&
			  strcmp(b->work_unit, p->work_unit) == 0 && strcmp(b->work_unit, "several units");
		if (c->hitm && c->rate[0] > 0)
			c->moved_off = 1 - c->rate[1] / c->rate[0];
	}
	return 0;
}

int lab_table_read(sqlite3 *db, const char *name, struct lab_table *ret)
{
	int64_t lab = 0;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = read_lab(db, name, ret, &lab);
	if (r >= 0)
		r = read_configs(db, lab, ret);
	if (r >= 0)
		r = read_kernels(db, lab, ret);
	if (r >= 0)
		r = read_runs(db, lab, ret);
	if (r >= 0)
		r = read_hitm(db, lab, ret);
	if (r >= 0)
		r = read_unanalyzed(db, lab, ret);
	if (r >= 0)
		r = summarize(ret);
	if (r < 0)
		lab_table_free(ret);
	return r;
}

void lab_table_free(struct lab_table *t)
{
	for (size_t i = 0; i < t->nconfigs; i++)
		free(t->configs[i].args);
	free(t->configs);
	for (int s = 0; s < 2; s++) {
		free(t->release[s]);
		free(t->version[s]);
	}
	free(t->name);
	free(t->reproducer);
	free(t->path);
	free(t->metric);
	free(t->unit);
	memset(t, 0, sizeof(*t));
}
