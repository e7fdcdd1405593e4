// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration of the report's intervals and verdicts (reports/stats.c) on
 * simulated fleets with known truth, many seeds each: the same functions
 * and decision rule the report uses, on per-host series built the way
 * hosts misbehave (docs/statistics.md prints the table this writes):
 *
 *  - per-host baselines spread 2x, day-to-day drift of each host's level
 *    (AR(1) on the log, 4 % innovations a day, phi 0.8, so a week-long
 *    stretch wanders ~10 %; one cell at phi 0.95, nearly a random
 *    walk), a diurnal cycle in the load and the rate,
 *    bursts (2 % of intervals at 3x), log-normal noise per interval,
 *    Poisson work and Poisson HITM counts; 24 intervals a day (coarse, to
 *    stay fast), 7 days before and after each change;
 *  - null fleets (no effect) of 5, 8, 20 and 40 hosts, paired (no control
 *    hosts) and by difference in differences against as many controls
 *    with a fleet-wide load step of +8 % at the rollout (the confounder
 *    the controls are there for);
 *  - fleets with -20 % and +15 % effects, for the power, and with effects
 *    of exactly the margin (+-5 %), which must rarely be called "no change".
 *
 * Each fleet is decided twice: as the report does (levels, the covariates'
 * regression adjustment, the equivalence test) and as it did before
 * (medians, the 95 % interval inside +-margin for "no change"), the
 * baseline column.
 *
 * Asserted: on null fleets, false improved/regressed verdicts <= 5 % and
 * interval coverage >= 95 %, each within a binomial tolerance of 3
 * standard errors of the number of fleets (pooled over all sizes, 2); per-host
 * false verdicts under drift <= 7 %; effects found at 20+ hosts in >= 90 %
 * of fleets with the right sign; null fleets of 20 (40) hosts called "no
 * change" in >= 40 % (85 %), within 3 standard errors, a bound the
 * baseline misses where it missed the goal (difference in differences);
 * effects of the margin called "no change" <= 5 % (3 standard errors).
 * Deterministic (fixed seeds): it cannot flake, and a change of method that
 * breaks calibration fails it.
 *
 * CALIBRATION_FLEETS=N in the environment changes the fleets per cell
 * (default 200).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "test.h"

#define PER_DAY 24
#define DAYS 7
#define MARGIN 0.05
#define LEVEL 0.95

struct model {
	double phi, drift_sd;	/* AR(1) of the log level, per day */
	double diurnal;		/* amplitude of the daily cycle */
	double burst_p, burst_x;
	double noise_sd;	/* log-normal, per interval */
	double work;		/* mean work units per interval */
	double rate;		/* mean HITM per 1000 units of work */
};

static const struct model drift = {
	.phi = 0.8, .drift_sd = 0.04, .diurnal = 0.2, .burst_p = 0.02, .burst_x = 3,
	.noise_sd = 0.25, .work = 20000, .rate = 1.0,
};

/* Nearly a random walk: what a bootstrap over days would miss most. */
static const struct model wander = {
	.phi = 0.95, .drift_sd = 0.04, .diurnal = 0.2, .burst_p = 0.02, .burst_x = 3,
	.noise_sd = 0.25, .work = 20000, .rate = 1.0,
};

static double normal(struct rng *r)
{
	double u = rng_uniform(r), v = rng_uniform(r);

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

static double poisson(struct rng *r, double lambda)
{
	if (lambda < 40) {
		double l = exp(-lambda), p = 1;
		double k = -1;

		do {
			k++;
			p *= rng_uniform(r);
		} while (p > l);
		return k;
	} else {
		double k = floor(lambda + sqrt(lambda) * normal(r) + 0.5);

		return k < 0 ? 0 : k;
	}
}

/*
 * One host's 2 * DAYS days of per-interval rates: rates[0, DAYS * PER_DAY)
 * before the change, the rest after; the after side multiplied by
 * (1 + effect) (the kernel) and (1 + step) (a fleet-wide load change).
 */
static void host_series(struct rng *r, const struct model *m, double effect, double step,
			double *rates)
{
	double base = m->rate * exp(0.35 * (2 * rng_uniform(r) - 1));	/* 2x spread */
	double level = normal(r) * m->drift_sd / sqrt(1 - m->phi * m->phi);

	for (int d = 0; d < 2 * DAYS; d++) {
		level = m->phi * level + m->drift_sd * normal(r);
		for (int k = 0; k < PER_DAY; k++) {
			double cyc = 1 + m->diurnal * sin(2 * M_PI * k / PER_DAY);
			double rate = base * exp(level + m->noise_sd * normal(r)) * cyc;
			double work;

			if (rng_uniform(r) < m->burst_p)
				rate *= m->burst_x;
			if (d >= DAYS)
				rate *= (1 + effect) * (1 + step);
			do
				work = poisson(r, m->work * cyc);
			while (work == 0);
			rates[d * PER_DAY + k] = 1000 * poisson(r, rate * work / 1000) / work;
		}
	}
}

/* The report's per-host comparison of a series: day blocks, stats_block_change(). */
static int host_change(const double *rates, struct block_change *bc)
{
	size_t first = stats_block_days(DAYS) * PER_DAY;
	size_t off[STATS_HOST_BLOCKS + 1] = { 0, first, DAYS * PER_DAY };

	return stats_block_change(rates, off, rates + DAYS * PER_DAY, off, LEVEL, bc);
}

/* The trimmed mean of rates[lo, hi), as collect.c's window_level(). */
static double level(const double *rates, size_t lo, size_t hi, double *scratch)
{
	memcpy(scratch, rates + lo, (hi - lo) * sizeof(double));
	return stats_trimmed_mean(scratch, hi - lo, STATS_TRIM);
}

/*
 * What the fleet takes from a host, as collect.c's fleet_input_of(): the
 * log change of the sides' trimmed means, and the covariates, each side's
 * NEAR_DAYS days next to the change against the rest of the side.
 */
#define NEAR_DAYS 2
static int fleet_input(const double *rates, double *scratch, double *ret_y, double *ret_x)
{
	size_t t = DAYS * PER_DAY, near = NEAR_DAYS * PER_DAY, end = 2 * DAYS * PER_DAY;
	double b = level(rates, 0, t, scratch), a = level(rates, t, end, scratch);
	double nb = level(rates, t - near, t, scratch), fb = level(rates, 0, t - near, scratch);
	double na = level(rates, t, t + near, scratch), fa = level(rates, t + near, end, scratch);

	if (!(b > 0 && a > 0 && nb > 0 && fb > 0 && na > 0 && fa > 0))
		return -EDOM;
	*ret_y = log(a / b);
	ret_x[0] = log(nb / fb);
	ret_x[1] = log(na / fa);
	return 0;
}

/* The rule before the equivalence test: no change when the level's interval lies inside +-margin. */
static enum stats_decision decide_old(const struct t_interval *t)
{
	double est = expm1(t->estimate), lo = expm1(t->lo), hi = expm1(t->hi);

	if (hi < 0 && est <= -MARGIN)
		return STATS_LOWER;
	if (lo > 0 && est >= MARGIN)
		return STATS_HIGHER;
	if (lo >= -MARGIN && hi <= MARGIN)
		return STATS_WITHIN;
	return STATS_INCONCLUSIVE;
}

static enum stats_decision decide(const struct t_interval *t)
{
	return stats_decide(expm1(t->estimate), expm1(t->lo), expm1(t->hi), expm1(t->eq_lo),
			    expm1(t->eq_hi), MARGIN);
}

struct tally {
	unsigned int n, false_verdicts, covered, found, wrong_sign, within;
	unsigned int within_old;	/* the baseline: medians, no adjustment, the 95 % rule */
};

struct cell {
	const char *what;
	size_t hosts;
	bool controls;
	double effect, step;
	const struct model *m;		/* NULL: drift */
	double goal;			/* null fleets: the share called "no change" it must reach */
	struct tally fleet;
	struct tally host;
};

static void tally_add(struct tally *t, double truth, const struct t_interval *ci,
		      enum stats_decision d, enum stats_decision old)
{
	t->n++;
	t->covered += ci->lo <= truth && truth <= ci->hi;
	t->within += d == STATS_WITHIN;
	t->within_old += old == STATS_WITHIN;
	if (truth == 0) {
		t->false_verdicts += d == STATS_LOWER || d == STATS_HIGHER;
	} else {
		t->found += d == (truth < 0 ? STATS_LOWER : STATS_HIGHER);
		t->wrong_sign += d == (truth < 0 ? STATS_HIGHER : STATS_LOWER);
	}
}

/* One fleet's hosts' numbers: new (trimmed, covariates) and old (medians), rolled and controls. */
struct fleet_values {
	double *a, *b, *xa, *xb, *a_old, *b_old, *rates, *scratch;
	unsigned int *strata;
};

/* One host's series: its own verdict (paired cells), and its numbers at index i. */
static bool fleet_host(struct cell *c, const struct model *m, struct rng *r, struct fleet_values *v,
		       size_t i)
{
	struct block_change bc;

	host_series(r, m, c->effect, c->step, v->rates);
	if (host_change(v->rates, &bc) < 0 || fleet_input(v->rates, v->scratch, &v->a[i], &v->xa[2 * i]) < 0)
		return false;
	v->a_old[i] = bc.log.estimate;
	/* Per-host verdicts: only where the host's own truth is the kernel's. */
	if (c->step == 0)
		tally_add(&c->host, log1p(c->effect), &bc.log, decide(&bc.log), decide_old(&bc.log));
	if (!c->controls)
		return true;
	host_series(r, m, 0, c->step, v->rates);
	if (host_change(v->rates, &bc) < 0 || fleet_input(v->rates, v->scratch, &v->b[i], &v->xb[2 * i]) < 0)
		return false;
	v->b_old[i] = bc.log.estimate;
	return true;
}

/* The fleet's interval as the report makes it, and the baseline's. */
static void fleet_intervals(const struct cell *c, const struct fleet_values *v, struct t_interval *t,
			    struct t_interval *old)
{
	struct did_result d;

	if (c->controls) {
		CHECK_INT(stats_did_adjusted(v->a, v->xa, v->strata, c->hosts, v->b, v->xb, v->strata,
					     c->hosts, 2, LEVEL, &d), ==, 0);
		*t = d.ci;
		CHECK_INT(stats_did(v->a_old, v->strata, c->hosts, v->b_old, v->strata, c->hosts, LEVEL, &d),
			  ==, 0);
		*old = d.ci;
	} else {
		CHECK_INT(stats_t_mean(v->a, c->hosts, LEVEL, t), ==, 0);
		CHECK_INT(stats_t_mean(v->a_old, c->hosts, LEVEL, old), ==, 0);
	}
}

static void run_cell(struct cell *c, unsigned int fleets, uint64_t seed)
{
	size_t n = c->hosts;
	struct fleet_values v = {
		.a = calloc(n, sizeof(double)), .b = calloc(n, sizeof(double)),
		.xa = calloc(2 * n, sizeof(double)), .xb = calloc(2 * n, sizeof(double)),
		.a_old = calloc(n, sizeof(double)), .b_old = calloc(n, sizeof(double)),
		.rates = malloc(2 * DAYS * PER_DAY * sizeof(double)),
		.scratch = malloc(2 * DAYS * PER_DAY * sizeof(double)),
		.strata = calloc(n, sizeof(unsigned int)),
	};
	const struct model *m = c->m ? c->m : &drift;
	struct rng r;

	if (!v.a || !v.b || !v.xa || !v.xb || !v.a_old || !v.b_old || !v.rates || !v.scratch || !v.strata) {
		CHECK(!"out of memory");
		goto out;
	}
	rng_init(&r, seed);
	for (unsigned int f = 0; f < fleets; f++) {
		struct t_interval t, old;
		bool ok = true;

		for (size_t i = 0; i < n && ok; i++)
			ok = fleet_host(c, m, &r, &v, i);
		CHECK(ok);
		if (!ok)
			continue;
		fleet_intervals(c, &v, &t, &old);
		tally_add(&c->fleet, log1p(c->effect), &t, decide(&t), decide_old(&old));
	}
out:
	free(v.strata);
	free(v.scratch);
	free(v.rates);
	free(v.b_old);
	free(v.a_old);
	free(v.xb);
	free(v.xa);
	free(v.b);
	free(v.a);
}

static double share(unsigned int k, unsigned int n)
{
	return n ? (double)k / (double)n : NAN;
}

/* k of n at most p, allowing z binomial standard errors. */
static bool at_most(unsigned int k, unsigned int n, double p, double z)
{
	return share(k, n) <= p + z * sqrt(p * (1 - p) / (double)n);
}

static bool at_least(unsigned int k, unsigned int n, double p, double z)
{
	return share(k, n) >= p - z * sqrt(p * (1 - p) / (double)n);
}

static void print_cell(const struct cell *c)
{
	bool null = c->effect == 0;

	printf("%-28s %5zu %6u %11.1f%% %8.1f%% %9.1f%% %9.1f%% %7u %11.1f%% %9.1f%% %9.1f%%\n",
	       c->what, c->hosts, c->fleet.n,
	       100 * share(null ? c->fleet.false_verdicts : c->fleet.found, c->fleet.n),
	       100 * share(c->fleet.covered, c->fleet.n), 100 * share(c->fleet.within, c->fleet.n),
	       100 * share(c->fleet.within_old, c->fleet.n), c->host.n,
	       100 * share(null ? c->host.false_verdicts : c->host.found, c->host.n),
	       100 * share(c->host.covered, c->host.n), 100 * share(c->host.within, c->host.n));
}

/* What a cell must show; the null cells' tallies are pooled into *nf and *nh. */
static void check_cell(const struct cell *c, struct tally *nf, struct tally *nh)
{
	if (c->effect == 0) {
		/* 3 standard errors per cell: 17 cells must not fail by chance. */
		CHECK(at_most(c->fleet.false_verdicts, c->fleet.n, 0.05, 3));
		CHECK(at_least(c->fleet.covered, c->fleet.n, 0.95, 3));
		if (c->goal > 0)
			CHECK(at_least(c->fleet.within, c->fleet.n, c->goal, 3));
		/* Where the rule before the equivalence test missed the goal, the bound still fails it. */
		if (c->goal > 0 && c->controls)
			CHECK(!at_least(c->fleet.within_old, c->fleet.n, c->goal, 3));
		nf->n += c->fleet.n;
		nf->false_verdicts += c->fleet.false_verdicts;
		nf->covered += c->fleet.covered;
		nh->n += c->host.n;
		nh->false_verdicts += c->host.false_verdicts;
		nh->covered += c->host.covered;
		nh->within += c->host.within;
		nh->within_old += c->host.within_old;
	} else if (fabs(c->effect) == MARGIN) {
		/* A change of exactly the margin is "no change" at most 5 % of the time. */
		CHECK(at_most(c->fleet.within, c->fleet.n, 0.05, 3));
		CHECK(!c->host.n || at_most(c->host.within, c->host.n, 0.05, 3));
	} else {
		CHECK_INT(c->fleet.wrong_sign, ==, 0);
		CHECK(at_least(c->fleet.covered, c->fleet.n, 0.95, 3));
		if (c->hosts >= 20)
			CHECK(share(c->fleet.found, c->fleet.n) >= 0.9);
	}
}

static void test_calibration(void)
{
	struct cell cells[] = {
		{ "null, paired", 5, false, 0, 0 },
		{ "null, paired", 8, false, 0, 0 },
		{ "null, paired", 20, false, 0, 0, .goal = 0.40 },
		{ "null, paired", 40, false, 0, 0, .goal = 0.85 },
		{ "null, paired, phi 0.95", 20, false, 0, 0, &wander },
		{ "null, DiD, +8 % load step", 5, true, 0, 0.08 },
		{ "null, DiD, +8 % load step", 8, true, 0, 0.08 },
		{ "null, DiD, +8 % load step", 20, true, 0, 0.08, .goal = 0.40 },
		{ "null, DiD, +8 % load step", 40, true, 0, 0.08, .goal = 0.85 },
		{ "null, DiD, phi 0.95", 20, true, 0, 0.08, &wander },
		{ "-20 %, DiD, +8 % load step", 5, true, -0.20, 0.08 },
		{ "-20 %, DiD, +8 % load step", 8, true, -0.20, 0.08 },
		{ "-20 %, DiD, +8 % load step", 20, true, -0.20, 0.08 },
		{ "-20 %, DiD, +8 % load step", 40, true, -0.20, 0.08 },
		{ "+15 %, paired", 20, false, 0.15, 0 },
		{ "+15 %, DiD, +8 % load step", 20, true, 0.15, 0.08 },
		{ "+15 %, DiD, +8 % load step", 40, true, 0.15, 0.08 },
		{ "+5 % (margin), paired", 20, false, MARGIN, 0 },
		{ "-5 % (margin), paired", 40, false, -MARGIN, 0 },
		{ "+5 % (margin), DiD", 20, true, MARGIN, 0.08 },
		{ "-5 % (margin), DiD", 20, true, -MARGIN, 0.08 },
		{ "+5 % (margin), DiD", 40, true, MARGIN, 0.08 },
		{ "-5 % (margin), DiD", 40, true, -MARGIN, 0.08 },
	};
	const char *env = getenv("CALIBRATION_FLEETS");
	unsigned int fleets = env ? (unsigned int)atoi(env) : 200;
	struct tally null_fleet = {}, null_host = {};

	if (fleets < 20)
		fleets = 20;
	printf("%-28s %5s %6s %12s %9s %10s %10s %7s %12s %10s %10s\n", "fleets of", "hosts", "fleets",
	       "false/found", "coverage", "no change", "(before)", "hosts", "host false", "host cov.",
	       "host n.c.");
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		run_cell(&cells[i], fleets, 1000 + i);
		print_cell(&cells[i]);
		check_cell(&cells[i], &null_fleet, &null_host);
		fflush(stdout);
	}
	printf("null fleets pooled: %.1f%% false verdicts, %.1f%% coverage of %u; "
	       "per host under drift: %.1f%% false verdicts, %.1f%% coverage, %.1f%% no change "
	       "(before: %.1f%%) of %u\n",
	       100 * share(null_fleet.false_verdicts, null_fleet.n), 100 * share(null_fleet.covered, null_fleet.n),
	       null_fleet.n, 100 * share(null_host.false_verdicts, null_host.n),
	       100 * share(null_host.covered, null_host.n), 100 * share(null_host.within, null_host.n),
	       100 * share(null_host.within_old, null_host.n), null_host.n);
	CHECK(at_most(null_fleet.false_verdicts, null_fleet.n, 0.05, 2));
	CHECK(at_least(null_fleet.covered, null_fleet.n, 0.95, 2));
	/* Thousands of host comparisons: the 7 % bound itself. */
	CHECK(share(null_host.false_verdicts, null_host.n) <= 0.07);
}

int main(void)
{
	RUN(test_calibration);
	return test_exit();
}
