// SPDX-License-Identifier: GPL-2.0
/* The report: its two passes over the databases (collect.c) and the fleet
 * statistics; the model it fills is model.c's. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "escape.h"
#include "log.h"
#include "report-model.h"
#include "util.h"

#define DAY_NS (24 * 3600 * NSEC_PER_SEC)

/* The reasons' clauses, "; " between them. */
#define appendf(s, ...) str_appendf(s, "; ", __VA_ARGS__)

/* Tallies the hosts' own verdicts for path p; returns the hosts with data and those without a PMU. */
static void fleet_path_count(struct report *r, int p, size_t *ret_hosts, size_t *ret_no_pmu)
{
	struct fleet_path *f = &r->fleet[p];
	size_t hosts = 0, no_pmu = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];
		const struct host_path *hp = &h->path[p];

		if (!h->q.boots)
			continue;
		hosts++;
		no_pmu += h->no_pmu;
		f->hosts_measured += hp->measured > 0;
		if (hp->chosen >= 0) {
			switch (hp->cmp[hp->chosen].verdict) {
			case VERDICT_IMPROVED: f->improved++; break;
			case VERDICT_REGRESSED: f->regressed++; break;
			case VERDICT_NO_CHANGE: f->unchanged++; break;
			default:
				f->undecided++;
				f->too_short += hp->cmp[hp->chosen].too_short;
				break;
			}
		}
	}
	*ret_hosts = hosts;
	*ret_no_pmu = no_pmu;
}

/* The paired estimate: the median host's change, the geometric mean and its interval, Wilcoxon. */
static int fleet_path_paired(struct report *r, struct fleet_path *f)
{
	double *rel, sum = 0;

	if (!f->nr_treated) {
		f->median_host_change = NAN;
		return 0;
	}
	rel = malloc(f->nr_treated * sizeof(double));
	if (!rel)
		return log_oom();
	for (size_t i = 0; i < f->nr_treated; i++) {
		rel[i] = exp(f->treated[i]) - 1;
		sum += f->treated[i];
	}
	stats_sort(rel, f->nr_treated);
	f->median_host_change = stats_median_sorted(rel, f->nr_treated);
	free(rel);

	/*
	 * Student's t over the hosts' log changes: calibrated from a
	 * handful of hosts up, where a bootstrap over hosts is not
	 * (docs/statistics.md). It needs two hosts for a spread.
	 */
	f->paired.n = f->nr_treated;
	f->paired.estimate = exp(sum / (double)f->nr_treated) - 1;
	if (stats_t_mean(f->treated, f->nr_treated, r->o.level, &f->paired.t) == 0) {
		f->paired.valid = true;
		f->paired.ci = rel_ci_of(&f->paired.t);
	}
	f->has_wilcoxon = stats_wilcoxon(f->treated, f->nr_treated, &f->wilcoxon) == 0;
	return 0;
}

/* Whether every value has its covariates: the adjustment needs all or none. */
static bool all_near(const double *x, size_t n)
{
	for (size_t i = 0; i < n * STATS_MAX_COVARIATES; i++)
		if (isnan(x[i]))
			return false;
	return true;
}

/*
 * The difference in differences, when there are both rolled hosts and
 * controls; regression-adjusted for the days next to the change when
 * every host has them and the fleet is large enough (stats_did_adjusted()).
 */
static int fleet_path_did(struct report *r, struct fleet_path *f)
{
	struct did_result d;
	size_t k;
	int ret;

	if (!f->nr_treated || !f->nr_controls)
		return 0;
	k = all_near(f->treated_x, f->nr_treated) && all_near(f->control_x, f->nr_controls) ?
	    STATS_MAX_COVARIATES : 0;
	ret = stats_did_adjusted(f->treated, f->treated_x, f->treated_cohort, f->nr_treated,
				 f->control, f->control_x, f->control_cohort, f->nr_controls, k,
				 r->o.level, &d);
	if (ret == -ENOMEM)
		return log_oom();
	if (ret == 0) {
		f->did.valid = true;
		f->did.t = d.ci;
		f->did.adj = d.adj;
		f->did.estimate = expm1(d.ci.estimate);
		f->did.ci = rel_ci_of(&d.ci);
		f->did.n = d.na;
		f->did.n_controls = d.nb;
		f->did.strata = d.strata;
	}
	return 0;
}

/* Too few compared hosts for a verdict: the reason says which hosts are missing. */
static int fleet_path_insufficient(struct report *r, struct fleet_path *f, int p)
{
	int ret;

	f->verdict = VERDICT_INSUFFICIENT;
	if (f->candidates == 0 && !f->ex_unknown_patch)
		ret = appendf(&f->reason, "no host changed to a kernel carrying %s in range",
			      path_get(p)->id);
	else
		ret = appendf(&f->reason, "%zu host%s with a before/after comparison, %u needed "
			      "(--min-hosts)", f->nr_treated, f->nr_treated == 1 ? "" : "s",
			      r->o.min_hosts);
	if (!ret && f->ex_unknown_patch)
		ret = appendf(&f->reason, "%zu host%s changed kernel but the patch map does not say "
			      "whether the kernels carry %s", f->ex_unknown_patch,
			      f->ex_unknown_patch == 1 ? "" : "s", path_get(p)->id);
	return ret;
}

/*
 * The verdict from the difference in differences when enough hosts kept
 * their kernel, else from the paired changes; the reason names the basis
 * and the per-host tally.
 */
static int fleet_path_decide(struct report *r, struct fleet_path *f)
{
	const struct fleet_change *c;
	char *phrase;
	int ret;

	if (f->did.valid && f->did.n >= r->o.min_hosts && f->controls_hosts >= r->o.min_hosts) {
		c = &f->did;
		f->basis = "difference in differences";
	} else {
		c = &f->paired;
		f->basis = "paired per-host changes";
	}
	f->verdict = report_decide(c->estimate, &c->ci, r->o.margin);
	phrase = report_ci_phrase(r, c->estimate, &c->ci, f->verdict);
	if (!phrase)
		return -ENOMEM;
	if (c == &f->did)
		ret = appendf(&f->reason, "%s by %s (%zu rolled host%s against %zu host%s that "
			      "kept their kernel)", phrase, f->basis, f->nr_treated,
			      f->nr_treated == 1 ? "" : "s", f->controls_hosts,
			      f->controls_hosts == 1 ? "" : "s");
	else if (f->controls_hosts)
		ret = appendf(&f->reason, "%s by %s (%zu rolled host%s; %zu host%s that kept their "
			      "kernel, too few for a difference in differences: %u needed, two of "
			      "them and two rolled hosts in one cohort)", phrase, f->basis,
			      f->nr_treated, f->nr_treated == 1 ? "" : "s", f->controls_hosts,
			      f->controls_hosts == 1 ? "" : "s",
			      r->o.min_hosts > 2 ? r->o.min_hosts : 2);
	else
		ret = appendf(&f->reason, "%s by %s (%zu rolled host%s, no hosts that kept their "
			      "kernel to compare against)", phrase, f->basis, f->nr_treated,
			      f->nr_treated == 1 ? "" : "s");
	free(phrase);
	if (!ret)
		ret = appendf(&f->reason, "per host: %zu improved, %zu regressed, %zu unchanged, "
			      "%zu inconclusive", f->improved, f->regressed, f->unchanged, f->undecided);
	if (!ret && f->too_short)
		ret = appendf(&f->reason, "%zu host%s too short for a drift-robust interval",
			      f->too_short, f->too_short == 1 ? "" : "s");
	return ret;
}

/* No host with data can run the path: an answer, not a lack of data. */
static int fleet_path_not_applicable(struct fleet_path *f, int p)
{
	char needs[64];

	f->verdict = VERDICT_NOT_APPLICABLE;
	needs_phrase(needs, sizeof(needs), p);
	return appendf(&f->reason, "no host's kernel can run %s: it needs %s, and no boot in range "
		       "had it (%s)", path_get(p)->id, needs, path_get(p)->needs_why);
}

/* What the verdict could not see: hosts without a PMU, and hosts left out of the comparison. */
static int fleet_path_caveats(struct report *r, struct fleet_path *f, int p, size_t hosts, size_t no_pmu)
{
	char needs[64];
	int ret = 0;

	if (f->ex_not_applicable && f->verdict != VERDICT_NOT_APPLICABLE) {
		needs_phrase(needs, sizeof(needs), p);
		ret = appendf(&f->reason, "%zu of %zu host%s left out as not applicable: %s needs %s, "
			      "which none of their boots in range had", f->ex_not_applicable, hosts,
			      hosts == 1 ? "" : "s", path_get(p)->id, needs);
	}
	if (!ret && no_pmu)
		ret = appendf(&f->reason, "no PMU on %zu of %zu hosts", no_pmu, hosts);
	if (!ret && f->ex_few)
		ret = appendf(&f->reason, "%zu host%s with fewer than %u measured intervals on a side",
			      f->ex_few, f->ex_few == 1 ? "" : "s", r->o.min_intervals);
	if (!ret && f->ex_zero)
		ret = appendf(&f->reason, "%zu host%s with a median rate of 0 on a side",
			      f->ex_zero, f->ex_zero == 1 ? "" : "s");
	return ret;
}

static int fleet_path_finish(struct report *r, int p)
{
	struct fleet_path *f = &r->fleet[p];
	size_t hosts, no_pmu;
	int ret;

	fleet_path_count(r, p, &hosts, &no_pmu);
	ret = fleet_path_paired(r, f);
	if (ret == 0)
		ret = fleet_path_did(r, f);
	if (ret < 0)
		return ret;

	free(f->reason);
	f->reason = NULL;
	if (hosts && f->ex_not_applicable == hosts)
		ret = fleet_path_not_applicable(f, p);
	else if (f->nr_treated < r->o.min_hosts || !f->paired.valid)
		ret = fleet_path_insufficient(r, f, p);
	else
		ret = fleet_path_decide(r, f);
	if (!ret)
		ret = fleet_path_caveats(r, f, p, hosts, no_pmu);
	if (ret < 0)
		return log_oom();
	return 0;
}

/* --- the passes ------------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int make_cohorts(struct report *r)
{
	int64_t *t = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];
		bool rolled = false;

		for (size_t k = 0; k < h->nr_rollouts; k++) {
			const struct rollout *ro = &h->rollouts[k];

			if (ro->t_ns < r->o.since_ns || ro->t_ns >= r->o.until_ns)
				continue;
			if (grow_array((void **)&t, &alloc, sizeof(*t), n + 1) < 0) {
				free(t);
				return log_oom();
			}
			t[n++] = ro->t_ns;
			rolled = true;
			r->rollouts_in_range++;
			r->rollbacks_in_range += ro->rollback;
		}
		r->hosts_rolled += rolled;
	}
	/* qsort() wants a base even for no elements: t is NULL without changes */
	if (n)
		qsort(t, n, sizeof(*t), cmp_i64);
	r->cohorts = calloc(n + 1, sizeof(*r->cohorts));
	if (!r->cohorts) {
		free(t);
		return log_oom();
	}
	/*
	 * Single linkage: a change within cohort_ns of the previous one joins
	 * its cohort, so a rollout across midnight stays one cohort and its
	 * controls are counted once.
	 */
	for (size_t i = 0; i < n;) {
		size_t k = i + 1;

		while (k < n && t[k] - t[k - 1] <= r->o.cohort_ns)
			k++;
		r->cohorts[r->nr_cohorts++] = (struct cohort){
			.first_ns = t[i],
			.last_ns = t[k - 1],
			.ref_ns = t[i + (k - i) / 2],
			.rollouts = k - i,
		};
		i = k;
	}
	free(t);
	return 0;
}

/* When the first boot the report reads was first seen (0: none). */
static int64_t first_data_ns(const struct report *r)
{
	int64_t first = 0;

	for (size_t i = 0; i < r->nr_hosts; i++)
		for (size_t k = 0; k < r->hosts[i].nr_boots; k++) {
			const struct boot_info *b = &r->hosts[i].boots[k];

			if (b->last_seen_ns < r->data_lo_ns || b->first_seen_ns >= r->o.until_ns)
				continue;
			if (!first || b->first_seen_ns < first)
				first = b->first_seen_ns;
		}
	return first;
}

/*
 * The time bins of the charts span the data in the range: a recording of a
 * minute, read with the default fortnight, is a minute wide, not a sliver.
 */
static void make_bins(struct report *r)
{
	static const int64_t nice_s[] = {
		10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400,
		2 * 86400, 7 * 86400, 30 * 86400,
	};
	int64_t first = first_data_ns(r);
	int64_t lo = first > r->data_lo_ns ? first : r->data_lo_ns;
	int64_t span = r->o.until_ns - lo;
	unsigned int max = r->o.max_bins ? r->o.max_bins : 240;

	r->bin_ns = nice_s[ARRAY_SIZE(nice_s) - 1] * NSEC_PER_SEC;
	for (size_t i = 0; i < ARRAY_SIZE(nice_s); i++)
		if (span / (nice_s[i] * NSEC_PER_SEC) < (int64_t)max) {
			r->bin_ns = nice_s[i] * NSEC_PER_SEC;
			break;
		}
	r->bins_lo_ns = lo / r->bin_ns * r->bin_ns;
	r->nr_bins = (size_t)((r->o.until_ns - r->bins_lo_ns + r->bin_ns - 1) / r->bin_ns);
	if (r->nr_bins == 0)
		r->nr_bins = 1;
}

static int add_error(struct report *r, const char *db, int err)
{
	struct db_error *e = realloc(r->errors, (r->nr_errors + 1) * sizeof(*e));
	const char *why;

	if (!e)
		return log_oom();
	r->errors = e;
	why = *db_open_error() ? db_open_error() : strerror(-err);
	e[r->nr_errors].db = db;
	e[r->nr_errors].error = strdup(why);
	if (!e[r->nr_errors].error)
		return log_oom();
	r->nr_errors++;
	return 0;
}

void report_progress(const struct report *r, const char *what, size_t i, size_t n, const char *name)
{
	char safe[48];

	if (!r->o.progress)
		return;
	if (i >= n) {
		fputs("\r\033[K", stderr);
		return;
	}
	text_safe(safe, sizeof(safe), name);
	fprintf(stderr, "\r\033[K%s %zu/%zu %s", what, i + 1, n, safe);
	fflush(stderr);
}

void report_set_rollup(struct report *r, int64_t rollup_ns)
{
	r->o.rollup_ns = rollup_ns;
}

void report_begin(struct report *r, size_t nr_sources)
{
	if (!r->source)
		r->source = "sqlite";
	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	r->generated_ns = now_ns(CLOCK_REALTIME);
	r->nr_dbs = nr_sources;
	r->since_given = r->o.since_ns != 0;
	r->until_given = r->o.until_ns != 0;
}

/* After pass 1: the range, the time bins and the cohorts. */
int report_prepare(struct report *r)
{
	if (!r->until_given) {
		int64_t newest = 0, now = r->generated_ns;

		for (size_t i = 0; i < r->nr_hosts; i++)
			if (r->hosts[i].last_ns > newest)
				newest = r->hosts[i].last_ns;
		/* The newest data, so an archived database still gets its last week. */
		r->o.until_ns = newest && newest < now ? newest + 1 : now;
	}
	if (!r->since_given)
		r->o.since_ns = r->o.until_ns - 7 * DAY_NS;
	if (r->o.since_ns >= r->o.until_ns)
		return log_error_errno(EINVAL, "The report range is empty: --since is not before --until");
	r->data_lo_ns = r->o.since_ns - r->o.before_ns;
	/* Every host is known: the array's room for more (up to as many again) goes. */
	shrink_array((void **)&r->hosts, &r->alloc_hosts, sizeof(*r->hosts), r->nr_hosts);
	make_bins(r);
	return make_cohorts(r);
}

/* After pass 2: the fleet statistics. */
int report_end(struct report *r)
{
	struct timespec t1;
	int ret;

	for (int p = 0; p < paths_nr(); p++) {
		ret = fleet_path_finish(r, p);
		if (ret < 0)
			return ret;
	}
	ret = report_answers(r);
	if (ret == 0 && !(r->series = calloc(MAX_PATHS, sizeof(*r->series))))
		ret = -ENOMEM;
	if (ret < 0)
		return log_oom();
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->seconds = (double)(t1.tv_sec - r->t0.tv_sec) + (double)(t1.tv_nsec - r->t0.tv_nsec) / 1e9;
	return 0;
}

int report_run(struct report *r, const char *const *dbs, size_t nr_dbs)
{
	size_t host = 0;
	int ret;

	report_begin(r, nr_dbs);

	/* Pass 1: hosts, boots, kernels, rollouts. */
	for (size_t i = 0; i < nr_dbs; i++) {
		sqlite3 *db = NULL;

		report_progress(r, "reading boots", i, nr_dbs, dbs[i]);
		ret = db_open(dbs[i], DB_READONLY | DB_NO_CREATE, &db);
		if (ret < 0 && nr_dbs == 1)	/* nothing to report: the caller says why */
			return ret;
		if (ret < 0) {
			log_warning("Skipping %s: %s", dbs[i], db_open_error());
			ret = add_error(r, dbs[i], ret);
			if (ret < 0)
				return ret;
			continue;
		}
		ret = collect_hosts(r, dbs[i], db);
		db_close(db);
		if (ret < 0)	/* the caller says why; which file is for a developer */
			return log_debug_errno(ret, "Reading %s failed: %s", dbs[i], db_error(ret));
	}
	report_progress(r, "", nr_dbs, nr_dbs, NULL);
	if (r->nr_hosts == 0 && r->nr_errors == nr_dbs) {
		return log_error_errno(ENODATA, "None of the %zu databases could be read", nr_dbs);
	}
	ret = report_prepare(r);
	if (ret < 0)
		return ret;

	/* Pass 2: one database at a time; hosts are in database order. */
	for (size_t i = 0; i < nr_dbs; i++) {
		sqlite3 *db = NULL;

		if (host >= r->nr_hosts || r->hosts[host].db != dbs[i])
			continue;	/* unreadable, or no hosts in it */
		ret = db_open(dbs[i], DB_READONLY | DB_NO_CREATE, &db);
		if (ret < 0) {
			/* It went away since pass 1. */
			while (host < r->nr_hosts && r->hosts[host].db == dbs[i])
				host++;
			ret = add_error(r, dbs[i], ret);
			if (ret < 0)
				return ret;
			continue;
		}
		/* One snapshot, though mmhitmd may be adding intervals meanwhile. */
		ret = db_exec(db, "BEGIN");
		for (; ret == 0 && host < r->nr_hosts && r->hosts[host].db == dbs[i]; host++) {
			report_progress(r, "reading rates", host, r->nr_hosts, r->hosts[host].hostname);
			ret = collect_rates(r, &r->hosts[host], host, db);
		}
		if (ret < 0) {
			db_close(db);
			return log_debug_errno(ret, "Reading %s failed: %s", dbs[i], db_error(ret));
		}
		db_rollback(db);	/* nothing was written */
		db_close(db);
	}
	report_progress(r, "", r->nr_hosts, r->nr_hosts, NULL);
	return report_end(r);
}
