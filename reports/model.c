// SPDX-License-Identifier: GPL-2.0
/*
 * The report's model and its operations: what the collection pass (collect.c)
 * and the verdict pass (report.c) both use. Below both, so neither calls the
 * other back: report.c -> collect.c -> model.c.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db.h"
#include "escape.h"
#include "log.h"
#include "report-model.h"
#include "util.h"

#define DAY_NS (24 * 3600 * NSEC_PER_SEC)

const char *verdict_to_string(enum verdict v)
{
	switch (v) {
	case VERDICT_IMPROVED: return "improved";
	case VERDICT_REGRESSED: return "regressed";
	case VERDICT_NO_CHANGE: return "no change";
	case VERDICT_NOT_APPLICABLE: return "not applicable";
	default: return "insufficient data";
	}
}

void report_options_init(struct report_options *o)
{
	*o = (struct report_options){
		.before_ns = 7 * DAY_NS,
		.after_ns = 7 * DAY_NS,
		.warmup_ns = 30 * 60 * NSEC_PER_SEC,
		.cohort_ns = DAY_NS,
		.replicates = 2000,
		.seed = 1,
		.level = 0.95,
		.margin = 0.05,
		.min_intervals = 30,
		.min_hosts = 3,
		.max_bins = 240,
	};
}

struct report *report_new(const struct report_options *o)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	/* A fleet interval needs two hosts' spread; the CLI refuses fewer. */
	if (r->o.min_hosts < 2)
		r->o.min_hosts = 2;
	return r;
}

static void host_done(struct host *h)
{
	free(h->hostname);
	free(h->machine_id);
	for (size_t i = 0; i < h->nr_kernels; i++)
		kernel_info_done(&h->kernels[i]);
	free(h->kernels);
	for (size_t i = 0; i < h->nr_boots; i++)
		boot_info_done(&h->boots[i]);
	free(h->boots);
	free(h->rollouts);
	free(h->rollout_in_range);
	for (int p = 0; p < paths_nr(); p++) {
		struct host_path *hp = &h->path[p];

		for (size_t i = 0; i < hp->nr_cmp; i++)
			free(hp->cmp[i].reason);
		free(hp->cmp);
		free(hp->bin_rate);
		free(hp->bin_work);
		free(hp->bin_state);
		free(hp->na_why);
		free(h->controls[p]);
	}
}

void top_line_done(struct top_line *l)
{
	free(l->path);
	free(l->object_type);
	free(l->field);
	free(l->comm);
	free(l->symbols);
	memset(l, 0, sizeof(*l));
}

void report_free(struct report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nr_hosts; i++)
		host_done(&r->hosts[i]);
	free(r->hosts);
	free(r->cohorts);
	for (int p = 0; p < paths_nr(); p++) {
		struct fleet_path *f = &r->fleet[p];

		free(f->treated);
		free(f->treated_cohort);
		free(f->treated_x);
		free(f->control);
		free(f->control_x);
		free(f->control_cohort);
		free(f->reason);
		free(r->answer[p].basis);
		free(r->answer[p].reason);
		for (size_t i = 0; i < f->nr_top; i++)
			top_line_done(&f->top[i]);
	}
	for (int p = 0; r->series && p < paths_nr(); p++)
		free(r->series[p]);
	free(r->series);
	for (size_t i = 0; i < r->nr_other_top; i++)
		top_line_done(&r->other_top[i]);
	for (size_t i = 0; i < r->nr_errors; i++)
		free(r->errors[i].error);
	free(r->errors);
	for (size_t i = 0; i < r->nr_shares; i++)
		free(r->shares[i].path);
	free(r->shares);
	free(r);
}

int64_t report_until(const struct report *r)
{
	return r->o.until_ns;
}

int report_nr_paths(void)
{
	return paths_nr();
}

const char *report_fleet_verdict(const struct report *r, int p, const char **ret_path)
{
	*ret_path = path_get(p)->id;
	return verdict_to_string(r->fleet[p].verdict);
}

/* --- helpers the passes share --------------------------------------------- */

size_t report_bin_of(const struct report *r, int64_t t_ns)
{
	if (t_ns < r->bins_lo_ns || r->bin_ns <= 0)
		return SIZE_MAX;
	return (size_t)((t_ns - r->bins_lo_ns) / r->bin_ns);
}

unsigned int report_cohort_of(const struct report *r, int64_t t_ns)
{
	for (size_t i = 0; i < r->nr_cohorts; i++)
		if (r->cohorts[i].first_ns <= t_ns && t_ns <= r->cohorts[i].last_ns)
			return (unsigned int)i;
	return UINT32_MAX;
}

/* Appends v, its cohort and its covariates (NAN without) to the three arrays at *n. */
static int fleet_add(double **v, unsigned int **c, double **x, size_t *n, size_t *alloc,
		     const struct fleet_input *fi, unsigned int cohort)
{
	size_t a = *alloc;

	if (grow_array((void **)v, &a, sizeof(double), *n + 1) < 0)
		return -ENOMEM;
	a = *alloc;
	if (grow_array((void **)c, &a, sizeof(unsigned int), *n + 1) < 0)
		return -ENOMEM;
	a = *alloc;
	if (grow_array((void **)x, &a, STATS_MAX_COVARIATES * sizeof(double), *n + 1) < 0)
		return -ENOMEM;
	*alloc = a;
	(*v)[*n] = fi->log_change;
	(*c)[*n] = cohort;
	for (int j = 0; j < STATS_MAX_COVARIATES; j++)
		(*x)[*n * STATS_MAX_COVARIATES + j] = fi->has_near ? fi->near[j] : NAN;
	(*n)++;
	return 0;
}

int fleet_add_treated(struct fleet_path *f, const struct fleet_input *fi, unsigned int cohort)
{
	return fleet_add(&f->treated, &f->treated_cohort, &f->treated_x, &f->nr_treated,
			 &f->alloc_treated, fi, cohort);
}

int fleet_add_control(struct fleet_path *f, const struct fleet_input *fi, unsigned int cohort)
{
	return fleet_add(&f->control, &f->control_cohort, &f->control_x, &f->nr_controls,
			 &f->alloc_controls, fi, cohort);
}

double hist_edge(size_t i)
{
	return pow(10, HIST_LO + HIST_DECADES * (double)i / HIST_BINS);
}

void hist_add(uint64_t *hist, double rate)
{
	double pos;

	/* Zero and tiny rates land in the first bin, huge ones in the last. */
	if (!(rate > 0)) {
		hist[0]++;
		return;
	}
	pos = (log10(rate) - HIST_LO) / HIST_DECADES * HIST_BINS;
	if (pos < 0)
		pos = 0;
	if (pos > HIST_BINS - 1)
		pos = HIST_BINS - 1;
	hist[(size_t)pos]++;
}

void top_line_add(struct top_line *top, size_t *nr, const struct top_line *l)
{
	size_t i;
	struct top_line copy = *l;

	if (*nr == TOP_LINES) {
		if (top[TOP_LINES - 1].hitm >= l->hitm) {
			top_line_done(&copy);
			return;
		}
		top_line_done(&top[TOP_LINES - 1]);
		(*nr)--;
	}
	for (i = *nr; i > 0 && top[i - 1].hitm < l->hitm; i--)
		top[i] = top[i - 1];
	top[i] = copy;
	(*nr)++;
}

int share_add(struct report *r, const char *path, int64_t hitm, int64_t samples)
{
	struct path_share *s;

	if (!path)
		return 0;
	for (size_t i = 0; i < r->nr_shares; i++)
		if (strcmp(r->shares[i].path, path) == 0) {
			r->shares[i].hitm += hitm;
			r->shares[i].samples += samples;
			return 0;
		}
	if (grow_array((void **)&r->shares, &r->alloc_shares, sizeof(*s), r->nr_shares + 1) < 0)
		return log_oom();
	s = &r->shares[r->nr_shares];
	s->path = strdup(path);
	if (!s->path)
		return log_oom();
	s->hitm = hitm;
	s->samples = samples;
	r->nr_shares++;
	return 0;
}

const char *host_name(const struct report *r, size_t i)
{
	return i < r->nr_hosts ? r->hosts[i].hostname : "?";
}

/* One bin's value of a host: the rate or the work, and its patch state group. */
struct bin_value {
	double x;
	uint8_t group;
};

static int cmp_bin_value(const void *a, const void *b)
{
	double x = ((const struct bin_value *)a)->x, y = ((const struct bin_value *)b)->x;

	return (x > y) - (x < y);
}

/* Bin b's values of every host with one (the rate's, or the work's) into v, sorted; how many. */
static size_t bin_values(const struct report *r, int p, size_t b, bool work, struct bin_value *v)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host_path *hp = &r->hosts[i].path[p];
		float x;

		if (!hp->bin_rate)
			continue;
		x = work ? hp->bin_work[b] : hp->bin_rate[b];
		if (isnan(x))
			continue;
		v[n++] = (struct bin_value){ x, hp->bin_state[b] };
	}
	qsort(v, n, sizeof(*v), cmp_bin_value);
	return n;
}

/* Of n sorted values, group grp's (0: all) into g, in order; how many. */
static size_t group_values(const struct bin_value *v, size_t n, int grp, double *g)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (!grp || v[i].group == grp)
			g[m++] = v[i].x;
	return m;
}

/* Where the series cache keeps (group, quartile) and the work's median. */
#define SERIES_ROWS (4 * 3 + 1)
#define SERIES_WORK (4 * 3)

/*
 * Path p's quartiles the writers ask for, from one sort per bin (and one
 * of the work): the JSON asks 13 times per path, the HTML about 20 (its
 * charts at two widths), in all about 15 sorts of every host's value per
 * bin, each milliseconds at 100,000 hosts. NULL when out of memory.
 */
static double *series_fill(const struct report *r, int p)
{
	struct bin_value *v = malloc((r->nr_hosts + 1) * sizeof(*v));
	double *g = malloc((r->nr_hosts + 1) * sizeof(*g));
	double *s = malloc(SERIES_ROWS * (r->nr_bins + 1) * sizeof(double));

	if (!v || !g || !s) {
		free(s);
		s = NULL;
		goto out;
	}
	for (size_t b = 0; b < r->nr_bins; b++) {
		size_t n = bin_values(r, p, b, false, v);

		/* Every host's sorted values, then each group's, in the same order. */
		for (int grp = 0; grp < 4; grp++) {
			size_t m = group_values(v, n, grp, g);

			for (int k = 0; k < 3; k++)
				s[(size_t)(grp * 3 + k) * r->nr_bins + b] =
					m ? stats_quantile_sorted(g, m, 0.25 * (k + 1)) : NAN;
		}
		n = group_values(v, bin_values(r, p, b, true, v), 0, g);
		s[(size_t)SERIES_WORK * r->nr_bins + b] = n ? stats_quantile_sorted(g, n, 0.5) : NAN;
	}
out:
	free(v);
	free(g);
	return s;
}

int report_series(const struct report *r, int p, int group, bool work, double q, double *out)
{
	int k = q == 0.25 ? 0 : q == 0.5 ? 1 : q == 0.75 ? 2 : -1;
	struct bin_value *v;
	double *g;

	/* The writers' quartiles: computed once, on first use. */
	if (r->series && k >= 0 && group >= 0 && group < 4 && (!work || (!group && k == 1))) {
		if (!r->series[p])
			r->series[p] = series_fill(r, p);
		if (!r->series[p])
			return -ENOMEM;
		memcpy(out, r->series[p] + (size_t)(work ? SERIES_WORK : group * 3 + k) * r->nr_bins,
		       r->nr_bins * sizeof(double));
		return 0;
	}
	v = malloc((r->nr_hosts + 1) * sizeof(*v));
	g = malloc((r->nr_hosts + 1) * sizeof(*g));
	if (!v || !g) {
		free(v);
		free(g);
		return -ENOMEM;
	}
	for (size_t b = 0; b < r->nr_bins; b++) {
		size_t n = group_values(v, bin_values(r, p, b, work, v), group, g);

		out[b] = n ? stats_quantile_sorted(g, n, q) : NAN;
	}
	free(v);
	free(g);
	return 0;
}

static bool kernel_eq(const struct kernel_info *a, const struct kernel_info *b)
{
	return kernel_same(a->release, a->version, a->build_id, b->release, b->version, b->build_id);
}

static int cmp_pairs(const void *a, const void *b)
{
	const struct kernel_pair *x = a, *y = b;

	return (x->changes < y->changes) - (x->changes > y->changes);
}

int report_kernel_pairs(const struct report *r, struct kernel_pair **ret, size_t *ret_n)
{
	struct kernel_pair *kp = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		for (size_t k = 0; k < h->nr_rollouts; k++) {
			const struct rollout *ro = &h->rollouts[k];
			const struct kernel_info *from = &h->kernels[ro->from], *to = &h->kernels[ro->to];
			bool seen = false;
			size_t j;

			if (!h->rollout_in_range[k])
				continue;
			for (j = 0; j < n; j++)
				if (kernel_eq(kp[j].from, from) && kernel_eq(kp[j].to, to))
					break;
			if (j == n) {
				if (grow_array((void **)&kp, &alloc, sizeof(*kp), n + 1) < 0) {
					free(kp);
					return -ENOMEM;
				}
				kp[n++] = (struct kernel_pair){ .from = from, .to = to };
			}
			/* A host counts once per pair, however often it went back and forth. */
			for (size_t q = 0; q < k; q++)
				if (h->rollout_in_range[q] && kernel_eq(&h->kernels[h->rollouts[q].from], from) &&
				    kernel_eq(&h->kernels[h->rollouts[q].to], to))
					seen = true;
			kp[j].changes++;
			kp[j].hosts += !seen;
			kp[j].rollbacks += ro->rollback;
		}
	}
	if (n)
		qsort(kp, n, sizeof(*kp), cmp_pairs);
	*ret = kp;
	*ret_n = n;
	return 0;
}

void patch_list(char *buf, size_t size, const struct kernel_info *k, enum patch_state st)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int p = 0; p < paths_nr() && used + 4 < size; p++)
		if (k->patches[p].state == st)
			used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "", path_get(p)->id);
	if (!used)
		snprintf(buf, size, "none");
}

/* --- formatting ------------------------------------------------------------- */

void fmt_time(char *buf, size_t size, int64_t ns)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%MZ", &tm))
		snprintf(buf, size, "@%lld", (long long)(ns / NSEC_PER_SEC));
}

void fmt_date(char *buf, size_t size, int64_t ns)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d", &tm))
		snprintf(buf, size, "@%lld", (long long)(ns / NSEC_PER_SEC));
}

void fmt_duration(char *buf, size_t size, int64_t ns)
{
	static const struct { int64_t ns; const char *unit; } units[] = {
		{ 24 * 3600 * NSEC_PER_SEC, "d" }, { 3600 * NSEC_PER_SEC, "h" },
		{ 60 * NSEC_PER_SEC, "m" }, { NSEC_PER_SEC, "s" },
	};
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(units) && used + 1 < size; i++) {
		int64_t n = ns / units[i].ns;

		if (n <= 0)
			continue;
		used += (size_t)snprintf(buf + used, size - used, "%lld%s", (long long)n, units[i].unit);
		ns -= n * units[i].ns;
	}
	if (!buf[0])
		snprintf(buf, size, "0s");
}

void fmt_pct(char *buf, size_t size, double rel)
{
	if (isnan(rel))
		snprintf(buf, size, "n/a");
	else if (isinf(rel))
		snprintf(buf, size, "%sinf %%", rel > 0 ? "+" : "-");
	else
		snprintf(buf, size, "%+.1f %%", 100 * rel);
}

void fmt_ci(char *buf, size_t size, double lo, double hi)
{
	char a[32], b[32];

	if (isnan(lo) || isnan(hi)) {
		snprintf(buf, size, "-");
		return;
	}
	fmt_pct(a, sizeof(a), lo);
	fmt_pct(b, sizeof(b), hi);
	snprintf(buf, size, "%s .. %s", a, b);
}

void fmt_rate(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (v != 0 && (fabs(v) >= 1e6 || fabs(v) < 1e-3))
		snprintf(buf, size, "%.3g", v);
	else if (fabs(v) >= 100)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

void kernel_label(char *buf, size_t size, const struct kernel_info *k)
{
	if (k->build_id)
		snprintf(buf, size, "%s (%.12s)", k->release, k->build_id);
	else
		snprintf(buf, size, "%s", k->release);
}

/* --- verdicts --------------------------------------------------------------- */

/* The decision rule, for a host and for the fleet alike: stats_decide(). */
enum verdict report_decide(double est, const struct rel_ci *ci, double margin)
{
	switch (stats_decide(est, ci->lo, ci->hi, ci->eq_lo, ci->eq_hi, margin)) {
	case STATS_LOWER: return VERDICT_IMPROVED;
	case STATS_HIGHER: return VERDICT_REGRESSED;
	case STATS_WITHIN: return VERDICT_NO_CHANGE;
	default: return VERDICT_INSUFFICIENT;
	}
}

/* "-0.8 % (90 % CI -3.1 % to +1.6 %": the estimate and an interval at level. */
static int est_ci(char *buf, size_t size, double est, double level, double lo, double hi)
{
	char e[32], a[32], b[32];

	fmt_pct(e, sizeof(e), est);
	fmt_pct(a, sizeof(a), lo);
	fmt_pct(b, sizeof(b), hi);
	return snprintf(buf, size, "%s (%.0f %% CI %s to %s", e, 100 * level, a, b);
}

/*
 * The verdict's numbers in words, naming the interval that decided:
 * the report's level for improved, regressed and inconclusive, the
 * equivalence test's (2 level - 1) for no change.
 */
char *report_ci_phrase(const struct report *r, double est, const struct rel_ci *ci, enum verdict v)
{
	double level = r->o.level, eq = 2 * r->o.level - 1;
	char m[32], main[128], eqs[128], *s = NULL;
	int k;

	snprintf(m, sizeof(m), "+-%.0f %%", 100 * r->o.margin);
	est_ci(main, sizeof(main), est, level, ci->lo, ci->hi);
	est_ci(eqs, sizeof(eqs), est, eq, ci->eq_lo, ci->eq_hi);
	switch (v) {
	case VERDICT_IMPROVED:
	case VERDICT_REGRESSED:
		k = asprintf(&s, "%s)", main);
		break;
	case VERDICT_NO_CHANGE:
		k = asprintf(&s, "%s, inside %s)", eqs, m);
		break;
	default:
		/* "+4.4 % (95 % CI -2.4 % to +11.7 %, includes 0; 90 % CI -1.2 % to +10.4 %, not inside +-5 %)" */
		k = asprintf(&s, "inconclusive: %s, %s%s; %s, not inside %s)", main,
			     ci->lo <= 0 && ci->hi >= 0 ? "includes 0" : "excludes 0, the change within ",
			     ci->lo <= 0 && ci->hi >= 0 ? "" : m, eqs + strcspn(eqs, "(") + 1, m);
		break;
	}
	return k < 0 ? NULL : s;
}

void comparison_decide(const struct report *r, struct comparison *c)
{
	char *few = NULL, e[32];

	free(c->reason);
	c->reason = NULL;
	c->verdict = VERDICT_INSUFFICIENT;
	if (c->before.n < r->o.min_intervals || c->after.n < r->o.min_intervals) {
		const char *what = !c->before.n && !c->after.n &&
				   (c->before.ex.no_pmu || c->after.ex.no_pmu) ?
				   "HITM not measured (no PMU)" : "too few measured intervals";

		if (asprintf(&few, "%s: %zu before, %zu after, %u needed on each side",
			     what, c->before.n, c->after.n, r->o.min_intervals) < 0)
			few = NULL;
	}
	if (c->too_short) {
		/*
		 * The comparison stands, its interval would not: with fewer
		 * than two day blocks a side, drift cannot be told from an
		 * effect. No verdict, whatever the counts.
		 */
		fmt_pct(e, sizeof(e), c->change);
		if (asprintf(&c->reason, "%s%stoo short for a drift-robust interval: rates on %u whole "
			     "days before, %u after, %u needed on each side, in both of its halves%s%s",
			     isnan(c->change) ? "" : e, isnan(c->change) ? "" : ", ", c->data_days_before,
			     c->data_days_after, STATS_HOST_BLOCKS, few ? "; " : "", few ? few : "") < 0)
			c->reason = NULL;
		free(few);
		return;
	}
	if (few) {
		c->reason = few;
		return;
	}
	if (!(c->before.median > 0)) {
		c->reason = strdup("median rate 0 before the change: no relative change");
		return;
	}
	if (!c->has_ci) {
		c->reason = strdup("median rate 0 in a day block: no interval of the relative change");
		return;
	}
	c->verdict = report_decide(c->change, &c->ci, r->o.margin);
	c->reason = report_ci_phrase(r, c->change, &c->ci, c->verdict);
}

/* --- the fleet ------------------------------------------------------------------ */

const char *const grade_names[NR_GRADES] = { "object", "layout", "path", "none" };

void grades_phrase(char *buf, size_t size, const struct fleet_path *fp)
{
	int64_t total = 0;
	size_t len = 0;

	for (int g = 0; g < NR_GRADES; g++)
		total += fp->grade_hitm[g];
	buf[0] = '\0';
	if (total <= 0) {
		snprintf(buf, size, "no attributed HITM");
		return;
	}
	for (int g = 0; g < NR_GRADES && len < size; g++)
		if (fp->grade_hitm[g] > 0)
			len += snprintf(buf + len, size - len, "%s%s %.0f %%", len ? ", " : "",
					g == GRADE_NONE ? "ungraded" : grade_names[g],
					100.0 * (double)fp->grade_hitm[g] / (double)total);
}
