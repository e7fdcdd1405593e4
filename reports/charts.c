// SPDX-License-Identifier: GPL-2.0
/*
 * The HTML report's SVG charts: hosts per kernel and patch coverage over
 * time, and per path its rate series, event study, work, rate
 * distribution and per-host changes. Each draws from the report model
 * through svg.h and writes nothing else.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "charts.h"
#include "escape.h"
#include "svg.h"
#include "util.h"

#define MAX_FOREST 40		/* hosts drawn one by one; more: a histogram */
#define MAX_KERNELS 7		/* named in the progress chart; the rest is "other" */

/* --- rollouts ------------------------------------------------------------------ */

static ssize_t fleet_kernel_find(struct fleet_kernel *fk, size_t n, const struct kernel_info *k)
{
	for (size_t i = 0; i < n; i++)
		if (kernel_same(fk[i].k->release, fk[i].k->version, fk[i].k->build_id,
				k->release, k->version, k->build_id))
			return (ssize_t)i;
	return -1;
}

static int cmp_kernel_hosts(const void *a, const void *b)
{
	const struct fleet_kernel *x = a, *y = b;

	return (x->hosts < y->hosts) - (x->hosts > y->hosts);
}

struct fleet_kernel *fleet_kernels(const struct report *r, size_t *ret_n)
{
	struct fleet_kernel *fk = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		for (size_t k = 0; k < h->nr_kernels; k++) {
			ssize_t j = fleet_kernel_find(fk, n, &h->kernels[k]);

			if (j < 0) {
				if (grow_array((void **)&fk, &alloc, sizeof(*fk), n + 1) < 0) {
					free(fk);
					return NULL;
				}
				fk[n] = (struct fleet_kernel){ &h->kernels[k], 0 };
				j = (ssize_t)n++;
			}
			fk[j].hosts++;
		}
	}
	if (n)
		qsort(fk, n, sizeof(*fk), cmp_kernel_hosts);
	*ret_n = n;
	return fk ? fk : calloc(1, sizeof(*fk));
}

/* The kernel a host ran at t, or -1 when it was down or not recording. */
static ssize_t host_kernel_at(const struct report *r, const struct host *h, int64_t t)
{
	for (size_t i = h->nr_boots; i > 0; i--) {
		const struct boot_info *b = &h->boots[i - 1];

		if (b->start_ns <= t)
			return b->last_seen_ns + r->bin_ns >= t ? (ssize_t)b->kernel : -1;
	}
	return -1;
}

int progress_chart(const struct report *r, FILE *f, struct fleet_kernel *fk, size_t nk)
{
	size_t groups = nk > MAX_KERNELS + 1 ? MAX_KERNELS + 1 : nk, nb = r->nr_bins;
	double *cum = calloc((groups + 1) * (nb + 1), sizeof(double)), *x = malloc((nb + 1) * sizeof(double));
	const char *labels[MAX_KERNELS + 2], *classes[MAX_KERNELS + 2];
	char names[MAX_KERNELS + 2][96];
	struct chart c = {};
	double ymax = 1;

	if (!cum || !x) {
		free(cum);
		free(x);
		return -ENOMEM;
	}
	for (size_t b = 0; b < nb; b++) {
		int64_t t = r->bins_lo_ns + (int64_t)b * r->bin_ns + r->bin_ns / 2;

		x[b] = (double)t;
		for (size_t i = 0; i < r->nr_hosts; i++) {
			const struct host *h = &r->hosts[i];
			ssize_t k = host_kernel_at(r, h, t), g;

			if (k < 0)
				continue;
			g = fleet_kernel_find(fk, nk, &h->kernels[k]);
			if (g < 0)
				continue;
			if ((size_t)g >= groups - 1 && nk > groups)
				g = (ssize_t)groups - 1;
			cum[(size_t)g * nb + b] += 1;
		}
	}
	/* Stack: group g's band is from the sum of groups < g. */
	for (size_t b = 0; b < nb; b++) {
		double s = 0;

		for (size_t g = 0; g < groups; g++) {
			s += cum[g * nb + b];
			cum[g * nb + b] = s;
		}
		if (s > ymax)
			ymax = s;
	}
	c.xtime = true;
	c.x0 = (double)r->bins_lo_ns;
	c.x1 = (double)r->o.until_ns;
	c.y0 = 0;
	c.y1 = ymax * 1.08;
	c.mt = 34;
	chart_begin(&c, f, 1140, 240, "hosts per kernel over time");
	chart_axes(&c, NULL, "hosts running each kernel");
	for (size_t g = groups; g > 0; g--) {
		double *zero = calloc(nb + 1, sizeof(double));
		char cls[32];

		if (!zero)
			break;
		snprintf(cls, sizeof(cls), "area k%zu", g - 1);
		/* The band of group g-1 is [cum[g-2], cum[g-1]]. */
		chart_band(&c, x, g >= 2 ? &cum[(g - 2) * nb] : zero, &cum[(g - 1) * nb], nb, cls);
		free(zero);
	}
	for (size_t g = 0; g < groups; g++) {
		if (g == groups - 1 && nk > groups)
			snprintf(names[g], sizeof(names[g]), "%zu other kernels", nk - groups + 1);
		else
			text_safe(names[g], 48, fk[g].k->release);
		labels[g] = names[g];
		classes[g] = (const char *[]){ "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7" }[g];
	}
	chart_legend(&c, labels, classes, groups);
	chart_vline(&c, (double)r->o.since_ns, "v-range", "start of the report range");
	chart_end(&c);
	free(cum);
	free(x);
	return 0;
}

/* Path p's share of hosts on a carrying kernel per bin, into y (NaN: no host). */
static void coverage_series(const struct report *r, int p, double *y)
{
	for (size_t b = 0; b < r->nr_bins; b++) {
		size_t on = 0, all = 0;

		for (size_t i = 0; i < r->nr_hosts; i++) {
			const struct host_path *hp = &r->hosts[i].path[p];

			if (!hp->bin_state || !hp->bin_state[b])
				continue;
			all++;
			on += hp->bin_state[b] == PATCH_CARRIES + 1;
		}
		y[b] = all ? 100.0 * (double)on / (double)all : NAN;
	}
}

static bool same_series(const double *a, const double *b, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (isnan(a[k]) != isnan(b[k]) || (!isnan(a[k]) && a[k] != b[k]))
			return false;
	return true;
}

/*
 * The share of hosts on a kernel carrying each path's patch. Paths whose
 * shares are the same throughout (one rollout carried them all) are one
 * line, "P1, P2 and P3": lines drawn over each other would show only the
 * last.
 */
int coverage_chart(const struct report *r, FILE *f)
{
	size_t nb = r->nr_bins, nl = 0;
	double *x = malloc((nb + 1) * sizeof(double)), *y = malloc((nb + 1) * MAX_PATHS * sizeof(double));
	/* one colour class per line, in table order (the CSS has MAX_PATHS) */
	static const char *const classes[MAX_PATHS] = { "p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7" };
	const char *labels[MAX_PATHS];
	char lab[MAX_PATHS][64];
	int group[MAX_PATHS];
	struct chart c = {};

	if (!x || !y) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	for (size_t b = 0; b < nb; b++)
		x[b] = (double)(r->bins_lo_ns + (int64_t)b * r->bin_ns + r->bin_ns / 2);
	for (int p = 0; p < paths_nr(); p++) {
		coverage_series(r, p, y + (size_t)p * nb);
		group[p] = p;
		for (int q = 0; q < p && group[p] == p; q++)
			if (group[q] == q && same_series(y + (size_t)q * nb, y + (size_t)p * nb, nb))
				group[p] = q;
	}
	c.xtime = true;
	c.x0 = (double)r->bins_lo_ns;
	c.x1 = (double)r->o.until_ns;
	c.y0 = 0;
	c.y1 = 105;
	c.mt = 34;
	chart_begin(&c, f, 1140, 200, "share of hosts on a kernel carrying each patch");
	chart_axes(&c, NULL, "% of recording hosts on a kernel carrying the patch");
	for (int p = 0; p < paths_nr(); p++) {
		size_t len = 0;
		int last = p;

		if (group[p] != p)
			continue;
		for (int q = p; q < paths_nr(); q++)
			if (group[q] == p)
				last = q;
		for (int q = p, k = 0; q < paths_nr(); q++)
			if (group[q] == p)
				len += (size_t)snprintf(lab[nl] + len, sizeof(lab[nl]) - len, "%s%s",
							k++ == 0 ? "" : q == last ? " and " : ", ",
							path_get(q)->id);
		chart_line(&c, x, y + (size_t)p * nb, nb, classes[nl], lab[nl]);
		labels[nl] = lab[nl];
		nl++;
	}
	chart_legend(&c, labels, classes, nl);
	chart_end(&c);
	free(x);
	free(y);
	return 0;
}

/* --- per path ---------------------------------------------------------------- */

/*
 * Path p's rate per time bin: quartiles over hosts into q[g][0..2] for each
 * patch state group g (1..3, as report_series()), and the highest upper
 * quartile into *ret_ymax.
 */
static int series_quartiles(const struct report *r, int p, double *q[4][3], double *ret_ymax)
{
	size_t nb = r->nr_bins;
	double ymax = 0;

	for (int g = 1; g <= 3; g++)
		for (int k = 0; k < 3; k++) {
			q[g][k] = malloc((nb + 1) * sizeof(double));
			if (!q[g][k] || report_series(r, p, g, false, 0.25 * (k + 1), q[g][k]) < 0)
				return -ENOMEM;
			for (size_t b = 0; b < nb; b++)
				if (k == 2 && isfinite(q[g][k][b]) && q[g][k][b] > ymax)
					ymax = q[g][k][b];
		}
	*ret_ymax = ymax;
	return 0;
}

/*
 * A band and a median line per patch state group that has any data,
 * carriers first; the legend's labels go to lab, labels and classes.
 * Returns how many groups were drawn.
 */
static size_t series_groups(struct chart *c, const struct report *r, int p, const double *x,
			    double *q[4][3], char lab[3][64], const char *labels[3], const char *classes[3])
{
	/* the verb agrees with "kernels" */
	static const char *const gname[] = { NULL, "unknown", "lack", "carry" };
	size_t nb = r->nr_bins, nl = 0;

	for (int g = 3; g >= 1; g--) {
		bool any = false;

		for (size_t b = 0; b < nb; b++)
			any |= !isnan(q[g][1][b]);
		if (!any)
			continue;
		snprintf(lab[nl], sizeof(lab[nl]), "kernels that %s %s", gname[g], path_get(p)->id);
		if (g == 1)
			snprintf(lab[nl], sizeof(lab[nl]), "kernels unknown to the patch map");
		labels[nl] = lab[nl];
		classes[nl] = g == 3 ? "s-carries" : g == 2 ? "s-lacks" : "s-unknown";
		chart_band(c, x, q[g][0], q[g][2], nb, classes[nl]);
		chart_line(c, x, q[g][1], nb, classes[nl], lab[nl]);
		nl++;
	}
	return nl;
}

/* The range's start, each cohort's reference time, and every host's kernel change as a tick. */
static void series_marks(struct chart *c, const struct report *r)
{
	chart_vline(c, (double)r->o.since_ns, "v-range", "start of the report range");
	for (size_t i = 0; i < r->nr_cohorts; i++) {
		char tt[160], tm[40];

		fmt_time(tm, sizeof(tm), r->cohorts[i].ref_ns);
		snprintf(tt, sizeof(tt), "cohort %zu: %zu kernel change%s, reference %s", i + 1,
			 r->cohorts[i].rollouts, r->cohorts[i].rollouts == 1 ? "" : "s", tm);
		chart_vline(c, (double)r->cohorts[i].ref_ns, "v-cohort", tt);
	}
	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		for (size_t k = 0; k < h->nr_rollouts; k++) {
			double tx;

			if (!h->rollout_in_range[k])
				continue;
			tx = (double)h->rollouts[k].t_ns;
			chart_rect(c, tx - (double)r->bin_ns / 4, 0, tx + (double)r->bin_ns / 4, c->y1 * 0.04,
				   "tickmark", h->rollouts[k].rollback ? "rollback" : "kernel change");
		}
	}
}

int series_chart(const struct report *r, FILE *f, int p)
{
	size_t nb = r->nr_bins;
	double *x = malloc(nb * sizeof(double) + 1), *q[4][3] = {};
	const char *labels[3], *classes[3];
	char lab[3][64], ylab[128], t[160];
	size_t nl;
	double ymax = 0;
	struct chart c = {};
	int ret = -ENOMEM;

	if (!x)
		return -ENOMEM;
	if (series_quartiles(r, p, q, &ymax) < 0)
		goto out;
	for (size_t b = 0; b < nb; b++)
		x[b] = (double)(r->bins_lo_ns + (int64_t)b * r->bin_ns + r->bin_ns / 2);
	snprintf(ylab, sizeof(ylab), "HITM per %g %s (median over hosts, band: quartiles)", path_get(p)->per,
		 path_get(p)->unit);
	if (!(ymax > 0)) {
		if (chart_says_why())
			fprintf(f, "<p class=\"muted\">No measured %s rate in the range (no PMU, or not "
				"analyzed).</p>", path_get(p)->id);
		ret = 0;
		goto out;
	}
	c.xtime = true;
	c.x0 = (double)r->bins_lo_ns;
	c.x1 = (double)r->o.until_ns;
	c.y0 = 0;
	c.y1 = ymax * 1.1;
	c.mt = 34;
	snprintf(t, sizeof(t), "%s rate over time", path_get(p)->id);
	chart_begin(&c, f, 1140, 260, t);
	chart_axes(&c, NULL, ylab);
	nl = series_groups(&c, r, p, x, q, lab, labels, classes);
	series_marks(&c, r);
	chart_legend(&c, labels, classes, nl);
	chart_end(&c);
	ret = 0;
out:
	for (int g = 1; g <= 3; g++)
		for (int k = 0; k < 3; k++)
			free(q[g][k]);
	free(x);
	return ret;
}

/*
 * One group's rates in days around its change, relative to its own before
 * median, collected per offset bucket (bin_ns wide) into vals[k].
 */
struct event_buckets {
	double **vals;
	size_t *n, *alloc;
	size_t nk;		/* buckets: before_ns + after_ns, in bins */
	int64_t lo_ns;		/* the first bucket's offset (-before_ns) */
};

static int bucket_add(const struct report *r, struct event_buckets *eb, const struct host *h, int p,
		      int64_t t_ns, double before_median)
{
	const struct host_path *hp = &h->path[p];

	if (!hp->bin_rate || !(before_median > 0))
		return 0;
	for (size_t b = 0; b < r->nr_bins; b++) {
		int64_t off = r->bins_lo_ns + (int64_t)b * r->bin_ns + r->bin_ns / 2 - t_ns;
		int64_t k;

		if (isnan(hp->bin_rate[b]) || off < eb->lo_ns)
			continue;
		k = (off - eb->lo_ns) / r->bin_ns;
		if (k < 0 || (size_t)k >= eb->nk)
			continue;
		if (grow_array((void **)&eb->vals[k], &eb->alloc[k], sizeof(double), eb->n[k] + 1) < 0)
			return -ENOMEM;
		eb->vals[k][eb->n[k]++] = hp->bin_rate[b] / before_median - 1;
	}
	return 0;
}

static void buckets_free(struct event_buckets *eb)
{
	for (size_t k = 0; eb->vals && k < eb->nk; k++)
		free(eb->vals[k]);
	free(eb->vals);
	free(eb->n);
	free(eb->alloc);
}

/* Per bucket: quartiles over hosts into q[0..2]; NAN where fewer than 2 hosts. */
static void buckets_quartiles(struct event_buckets *eb, double *q[3])
{
	for (size_t k = 0; k < eb->nk; k++) {
		if (eb->n[k] < 2) {
			q[0][k] = q[1][k] = q[2][k] = NAN;
			continue;
		}
		stats_sort(eb->vals[k], eb->n[k]);
		for (int j = 0; j < 3; j++)
			q[j][k] = stats_quantile_sorted(eb->vals[k], eb->n[k], 0.25 * (j + 1));
	}
}

/* A group's buckets, before_ns + after_ns in bins, and its three quartile rows q[0..2]. */
static int buckets_alloc(const struct report *r, struct event_buckets *eb, double *q[3])
{
	eb->nk = (size_t)((r->o.before_ns + r->o.after_ns) / r->bin_ns);
	eb->lo_ns = -r->o.before_ns;
	eb->vals = calloc(eb->nk + 1, sizeof(double *));
	eb->n = calloc(eb->nk + 1, sizeof(size_t));
	eb->alloc = calloc(eb->nk + 1, sizeof(size_t));
	if (!eb->vals || !eb->n || !eb->alloc)
		return -ENOMEM;
	for (int j = 0; j < 3; j++)
		if (!(q[j] = calloc(eb->nk + 1, sizeof(double))))
			return -ENOMEM;
	return 0;
}

/*
 * Into eb[0] each compared host's rates around its chosen change, into
 * eb[1] each control's around its cohort's reference time; counts both.
 */
static int event_collect(const struct report *r, struct event_buckets eb[2], int p, size_t *ret_treated,
			 size_t *ret_controls)
{
	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];
		const struct host_path *hp = &h->path[p];

		if (hp->chosen >= 0) {
			const struct comparison *cmp = &hp->cmp[hp->chosen];

			if (bucket_add(r, &eb[0], h, p, h->rollouts[cmp->rollout].t_ns, cmp->before.median) < 0)
				return -ENOMEM;
			(*ret_treated)++;
		}
		for (size_t k = 0; k < h->nr_controls[p]; k++) {
			const struct control *ct = &h->controls[p][k];

			if (ct->cohort >= r->nr_cohorts)
				continue;
			if (bucket_add(r, &eb[1], h, p, r->cohorts[ct->cohort].ref_ns, ct->before.median) < 0)
				return -ENOMEM;
			(*ret_controls)++;
		}
	}
	return 0;
}

/* Both groups' quartile bands in percent on one axis of days since the change; x is eb[0].nk long. */
static void event_draw(const struct report *r, FILE *f, int p, struct event_buckets eb[2], double *q[2][3],
		       double *x, size_t controls)
{
	const char *labels[2] = { "hosts that changed kernel", "controls (kept their kernel)" };
	const char *classes[2] = { "s-after", "s-before" };
	double ylo = 0, yhi = 0;
	struct chart c = {};
	char t[160], ylab[160];

	for (int g = 0; g < 2; g++) {
		buckets_quartiles(&eb[g], q[g]);
		for (size_t k = 0; k < eb[g].nk; k++)
			for (int j = 0; j < 3; j++)
				if (isfinite(q[g][j][k])) {
					ylo = fmin(ylo, q[g][j][k]);
					yhi = fmax(yhi, q[g][j][k]);
				}
	}
	for (size_t k = 0; k < eb[0].nk; k++)
		x[k] = ((double)eb[0].lo_ns + ((double)k + 0.5) * (double)r->bin_ns) / 86400e9;
	c.x0 = (double)-r->o.before_ns / 86400e9;
	c.x1 = (double)r->o.after_ns / 86400e9;
	c.y0 = ylo * 100 * 1.1;
	c.y1 = yhi * 100 * 1.1 + 1;
	c.mt = 34;
	for (int g = 0; g < 2; g++)
		for (int j = 0; j < 3; j++)
			for (size_t k = 0; k < eb[g].nk; k++)
				q[g][j][k] *= 100;
	snprintf(t, sizeof(t), "%s around each kernel change (event study)", path_get(p)->id);
	snprintf(ylab, sizeof(ylab), "%% change of HITM per %g %s from the host's own before median",
		 path_get(p)->per, path_get(p)->unit);
	chart_begin(&c, f, 1140, 260, t);
	chart_axes(&c, "days since the host's kernel change (controls: since their cohort's)", ylab);
	chart_hline(&c, 0, "grid");
	chart_vline(&c, 0, "v-cohort", "the kernel change");
	for (int g = 1; g >= 0; g--) {
		if (g == 1 && !controls)
			continue;
		chart_band(&c, x, q[g][0], q[g][2], eb[g].nk, classes[g]);
		chart_line(&c, x, q[g][1], eb[g].nk, classes[g], labels[g]);
	}
	chart_legend(&c, labels, classes, controls ? 2 : 1);
	chart_end(&c);
}

/*
 * The event study: each compared host's rate in the days around its own
 * kernel change, as a change from its before median; beside it, the
 * control hosts around their cohort's reference time. Both on one axis of
 * days since the change, so a fleet-wide step shows in both and the
 * patch's effect only in the first.
 */
int event_chart(const struct report *r, FILE *f, int p)
{
	struct event_buckets eb[2] = {};
	double *x = NULL, *q[2][3] = {};
	size_t treated = 0, controls = 0;
	int ret = -ENOMEM;

	for (int g = 0; g < 2; g++)
		if (buckets_alloc(r, &eb[g], q[g]) < 0)
			goto out;
	x = calloc(eb[0].nk + 1, sizeof(double));
	if (!x)
		goto out;
	if (event_collect(r, eb, p, &treated, &controls) < 0)
		goto out;
	ret = 1;
	if (treated < 2) {
		if (chart_says_why())
			fprintf(f, "<p class=\"muted\">No event study for %s: fewer than 2 hosts with a "
				"before/after comparison.</p>", path_get(p)->id);
		goto out;
	}
	event_draw(r, f, p, eb, q, x, controls);
	ret = 0;
out:
	for (int g = 0; g < 2; g++) {
		buckets_free(&eb[g]);
		for (int j = 0; j < 3; j++)
			free(q[g][j]);
	}
	free(x);
	return ret;
}

int work_chart(const struct report *r, FILE *f, int p)
{
	size_t nb = r->nr_bins;
	double *x = malloc((nb + 1) * sizeof(double)), *y = malloc((nb + 1) * sizeof(double)), ymax = 0;
	char ylab[128], t[64];
	struct chart c = {};

	if (!x || !y || report_series(r, p, 0, true, 0.5, y) < 0) {
		free(x);
		free(y);
		return -ENOMEM;
	}
	for (size_t b = 0; b < nb; b++) {
		x[b] = (double)(r->bins_lo_ns + (int64_t)b * r->bin_ns + r->bin_ns / 2);
		if (isfinite(y[b]) && y[b] > ymax)
			ymax = y[b];
	}
	if (ymax > 0) {
		c.xtime = true;
		c.x0 = (double)r->bins_lo_ns;
		c.x1 = (double)r->o.until_ns;
		c.y0 = 0;
		c.y1 = ymax * 1.1;
		snprintf(ylab, sizeof(ylab), "%s per second (median over hosts): the path's own work",
			 path_get(p)->unit);
		snprintf(t, sizeof(t), "%s work over time", path_get(p)->id);
		chart_begin(&c, f, 1140, 170, t);
		chart_axes(&c, NULL, ylab);
		chart_line(&c, x, y, nb, "s-work", "median work per second");
		chart_vline(&c, (double)r->o.since_ns, "v-range", "start of the report range");
		chart_end(&c);
	}
	free(x);
	free(y);
	return 0;
}

void distribution_chart(const struct report *r, FILE *f, int p)
{
	const struct fleet_path *fp = &r->fleet[p];
	size_t lo = HIST_BINS, hi = 0;
	uint64_t nb = 0, na = 0;
	double edge[HIST_BINS + 1], vb[HIST_BINS], va[HIST_BINS], ymax = 0;
	static const char *const labels[] = { "before", "after" };
	static const char *const classes[] = { "s-before", "s-after" };
	char t[64], xl[128];
	struct chart c = {};

	for (size_t i = 0; i < HIST_BINS; i++) {
		nb += fp->hist_before[i];
		na += fp->hist_after[i];
		if (fp->hist_before[i] || fp->hist_after[i]) {
			if (i < lo)
				lo = i;
			hi = i + 1;
		}
	}
	if (!nb || !na)
		return;
	for (size_t i = lo; i <= hi; i++)
		edge[i - lo] = hist_edge(i);
	for (size_t i = lo; i < hi; i++) {
		vb[i - lo] = (double)fp->hist_before[i] / (double)nb;
		va[i - lo] = (double)fp->hist_after[i] / (double)na;
		if (vb[i - lo] > ymax)
			ymax = vb[i - lo];
		if (va[i - lo] > ymax)
			ymax = va[i - lo];
	}
	c.xlog = true;
	c.x0 = edge[0];
	c.x1 = edge[hi - lo];
	c.y0 = 0;
	c.y1 = ymax * 1.1;
	c.mt = 34;
	snprintf(t, sizeof(t), "%s rates before and after", path_get(p)->id);
	snprintf(xl, sizeof(xl), "HITM per %g %s, per interval (log scale)", path_get(p)->per, path_get(p)->unit);
	chart_begin(&c, f, 560, 240, t);
	chart_axes(&c, xl, "fraction of intervals");
	chart_steps(&c, edge, vb, hi - lo, "s-before", "before the change (pooled over compared hosts)");
	chart_steps(&c, edge, va, hi - lo, "s-after", "after the change (pooled over compared hosts)");
	chart_legend(&c, labels, classes, 2);
	chart_end(&c);
}

struct host_change {
	size_t host;
	const struct comparison *c;
};

static int cmp_host_change(const void *a, const void *b)
{
	double x = ((const struct host_change *)a)->c->change, y = ((const struct host_change *)b)->c->change;

	return (x > y) - (x < y);
}

/* Few hosts: one row each, its change as a dot with the interval as whiskers. */
static void change_forest(const struct report *r, FILE *f, const struct host_change *hc, size_t n,
			  double lo, double hi, const char *t)
{
	double rowh = 16;
	struct chart c = {};

	c.ml = 170;
	c.no_yticks = true;
	c.x0 = lo;
	c.x1 = hi;
	c.y0 = 0;
	c.y1 = (double)n;
	chart_begin(&c, f, 560, 64 + rowh * (double)n, t);
	chart_rect(&c, -100 * r->o.margin, 0, 100 * r->o.margin, (double)n, "margin",
		   "within the no-change margin");
	chart_axes(&c, "relative change of the median rate, % (whiskers: 95 % CI)", NULL);
	chart_vline(&c, 0, "v-zero", NULL);
	for (size_t i = 0; i < n; i++) {
		const struct comparison *cm = hc[i].c;
		double y = (double)n - (double)i - 0.5;
		char tip[320], name[64], pc[32], ci[80];
		const char *dot = cm->verdict == VERDICT_IMPROVED ? "dot-improved" :
				  cm->verdict == VERDICT_REGRESSED ? "dot-regressed" : "dot-other";

		text_safe(name, 40, host_name(r, hc[i].host));
		fmt_pct(pc, sizeof(pc), cm->change);
		fmt_ci(ci, sizeof(ci), cm->has_ci ? cm->ci.lo : NAN, cm->has_ci ? cm->ci.hi : NAN);
		snprintf(tip, sizeof(tip), "%s: %s (CI %s), %s", name, pc, ci, verdict_to_string(cm->verdict));
		if (cm->has_ci)
			fprintf(c.f, "<line class=\"ci\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
				chart_px(&c, 100 * (isfinite(cm->ci.lo) ? cm->ci.lo : cm->change)),
				chart_px(&c, 100 * (isfinite(cm->ci.hi) ? cm->ci.hi : hi / 100)),
				chart_py(&c, y), chart_py(&c, y));
		chart_dot(&c, 100 * cm->change, y, dot, tip);
		chart_text(&c, lo, y - 0.3, "end", "label", host_name(r, hc[i].host));
	}
	chart_end(&c);
}

/* Many hosts: how their changes are distributed. */
static void change_histogram(const struct report *r, FILE *f, const struct host_change *hc, size_t n,
			     double lo, double hi, const char *t)
{
	enum { NB = 40 };
	double edge[NB + 1], v[NB] = { 0 }, ymax = 0;
	struct chart c = {};

	for (size_t k = 0; k <= NB; k++)
		edge[k] = lo + (hi - lo) * (double)k / NB;
	for (size_t i = 0; i < n; i++) {
		double x = 100 * hc[i].c->change;
		size_t k = x <= lo ? 0 : x >= hi ? NB - 1 : (size_t)((x - lo) / (hi - lo) * NB);

		v[k < NB ? k : NB - 1]++;
	}
	for (size_t k = 0; k < NB; k++)
		if (v[k] > ymax)
			ymax = v[k];
	c.x0 = lo;
	c.x1 = hi;
	c.y0 = 0;
	c.y1 = ymax * 1.1;
	chart_begin(&c, f, 560, 240, t);
	chart_rect(&c, -100 * r->o.margin, 0, 100 * r->o.margin, c.y1, "margin",
		   "within the no-change margin");
	chart_axes(&c, "relative change of the median rate per host, %", "hosts");
	for (size_t k = 0; k < NB; k++)
		if (v[k] > 0)
			chart_rect(&c, edge[k], 0, edge[k + 1], v[k], "bar", NULL);
	chart_vline(&c, 0, "v-zero", NULL);
	chart_end(&c);
}

int host_change_chart(const struct report *r, FILE *f, int p)
{
	struct host_change *hc = malloc((r->nr_hosts + 1) * sizeof(*hc));
	size_t n = 0;
	double lo = -r->o.margin, hi = r->o.margin;
	char t[64];

	if (!hc)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host_path *hp = &r->hosts[i].path[p];

		if (hp->chosen < 0)
			continue;
		hc[n++] = (struct host_change){ i, &hp->cmp[hp->chosen] };
	}
	if (!n) {
		free(hc);
		return 0;
	}
	qsort(hc, n, sizeof(*hc), cmp_host_change);
	/* The axis spans the margin and every change with its interval, in percent. */
	for (size_t i = 0; i < n; i++) {
		const struct comparison *cm = hc[i].c;
		double a = cm->has_ci && isfinite(cm->ci.lo) ? cm->ci.lo : cm->change;
		double b = cm->has_ci && isfinite(cm->ci.hi) ? cm->ci.hi : cm->change;

		if (a < lo)
			lo = a;
		if (b > hi)
			hi = b;
	}
	lo = 100 * lo - 5;
	hi = 100 * hi + 5;
	snprintf(t, sizeof(t), "%s change per host", path_get(p)->id);
	if (n <= MAX_FOREST)
		change_forest(r, f, hc, n, lo, hi, t);
	else
		change_histogram(r, f, hc, n, lo, hi, t);
	free(hc);
	return 0;
}
