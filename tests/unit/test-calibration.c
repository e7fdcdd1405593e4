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
 *  - fleets with -20 % and +15 % effects, for the power.
 *
 * Asserted: on null fleets, false improved/regressed verdicts <= 5 % and
 * interval coverage >= 95 %, each within a binomial tolerance of 3
 * standard errors of the number of fleets (pooled over all sizes, 2); per-host
 * false verdicts under drift <= 7 %; effects found at 20+ hosts in >= 90 %
 * of fleets with the right sign. Deterministic (fixed seeds): it cannot
 * flake, and a change of method that breaks calibration fails it.
 *
 * CALIBRATION_FLEETS=N in the environment changes the fleets per cell
 * (default 200).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

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

struct tally {
	unsigned int n, false_verdicts, covered, found, wrong_sign;
};

struct cell {
	const char *what;
	size_t hosts;
	bool controls;
	double effect, step;
	const struct model *m;		/* NULL: drift */
	struct tally fleet;
	struct tally host;
};

static void tally_add(struct tally *t, double truth, double lo, double hi, enum stats_decision d)
{
	t->n++;
	t->covered += lo <= truth && truth <= hi;
	if (truth == 0) {
		t->false_verdicts += d == STATS_LOWER || d == STATS_HIGHER;
	} else {
		t->found += d == (truth < 0 ? STATS_LOWER : STATS_HIGHER);
		t->wrong_sign += d == (truth < 0 ? STATS_HIGHER : STATS_LOWER);
	}
}

static void run_cell(struct cell *c, unsigned int fleets, uint64_t seed)
{
	double *rates = malloc(2 * DAYS * PER_DAY * sizeof(double));
	double *a = malloc(c->hosts * sizeof(double)), *b = malloc(c->hosts * sizeof(double));
	unsigned int *strata = calloc(c->hosts, sizeof(unsigned int));
	double truth = log1p(c->effect);
	const struct model *m = c->m ? c->m : &drift;
	struct rng r;

	if (!rates || !a || !b || !strata) {
		CHECK(!"out of memory");
		goto out;
	}
	rng_init(&r, seed);
	for (unsigned int f = 0; f < fleets; f++) {
		struct t_interval t;
		struct did_result d;
		bool ok = true;

		for (size_t i = 0; i < c->hosts && ok; i++) {
			struct block_change bc;

			host_series(&r, m, c->effect, c->step, rates);
			if (host_change(rates, &bc) < 0) {
				ok = false;
				break;
			}
			a[i] = bc.log.estimate;
			/* Per-host verdicts: only where the host's own truth is the kernel's. */
			if (c->step == 0)
				tally_add(&c->host, c->effect, expm1(bc.log.lo), expm1(bc.log.hi),
					  stats_decide(expm1(bc.log.estimate), expm1(bc.log.lo),
						       expm1(bc.log.hi), MARGIN));
			if (c->controls) {
				host_series(&r, m, 0, c->step, rates);
				if (host_change(rates, &bc) < 0)
					ok = false;
				b[i] = bc.log.estimate;
			}
		}
		CHECK(ok);
		if (!ok)
			continue;
		if (c->controls) {
			CHECK_INT(stats_did(a, strata, c->hosts, b, strata, c->hosts, LEVEL, &d), ==, 0);
			t = d.ci;
		} else {
			CHECK_INT(stats_t_mean(a, c->hosts, LEVEL, &t), ==, 0);
		}
		tally_add(&c->fleet, truth, t.lo, t.hi,
			  stats_decide(expm1(t.estimate), expm1(t.lo), expm1(t.hi), MARGIN));
	}
out:
	free(strata);
	free(b);
	free(a);
	free(rates);
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

static void test_calibration(void)
{
	struct cell cells[] = {
		{ "null, paired", 5, false, 0, 0 },
		{ "null, paired", 8, false, 0, 0 },
		{ "null, paired", 20, false, 0, 0 },
		{ "null, paired", 40, false, 0, 0 },
		{ "null, paired, phi 0.95", 20, false, 0, 0, &wander },
		{ "null, DiD, +8 % load step", 5, true, 0, 0.08 },
		{ "null, DiD, +8 % load step", 8, true, 0, 0.08 },
		{ "null, DiD, +8 % load step", 20, true, 0, 0.08 },
		{ "null, DiD, +8 % load step", 40, true, 0, 0.08 },
		{ "-20 %, DiD, +8 % load step", 5, true, -0.20, 0.08 },
		{ "-20 %, DiD, +8 % load step", 8, true, -0.20, 0.08 },
		{ "-20 %, DiD, +8 % load step", 20, true, -0.20, 0.08 },
		{ "-20 %, DiD, +8 % load step", 40, true, -0.20, 0.08 },
		{ "+15 %, paired", 20, false, 0.15, 0 },
		{ "+15 %, DiD, +8 % load step", 20, true, 0.15, 0.08 },
		{ "+15 %, DiD, +8 % load step", 40, true, 0.15, 0.08 },
	};
	const char *env = getenv("CALIBRATION_FLEETS");
	unsigned int fleets = env ? (unsigned int)atoi(env) : 200;
	struct tally null_fleet = {}, null_host = {};

	if (fleets < 20)
		fleets = 20;
	printf("%-28s %5s %7s %12s %10s %8s %12s %10s\n", "fleets of", "hosts", "fleets",
	       "false/found", "coverage", "hosts", "host false", "host cov.");
	for (size_t i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		struct cell *c = &cells[i];
		bool null = c->effect == 0;

		run_cell(c, fleets, 1000 + i);
		printf("%-28s %5zu %7u %11.1f%% %9.1f%% %8u %11.1f%% %9.1f%%\n", c->what, c->hosts,
		       c->fleet.n, 100 * share(null ? c->fleet.false_verdicts : c->fleet.found, c->fleet.n),
		       100 * share(c->fleet.covered, c->fleet.n), c->host.n,
		       100 * share(null ? c->host.false_verdicts : c->host.found, c->host.n),
		       100 * share(c->host.covered, c->host.n));
		if (null) {
			/* 3 standard errors per cell: 15 cells must not fail by chance. */
			CHECK(at_most(c->fleet.false_verdicts, c->fleet.n, 0.05, 3));
			CHECK(at_least(c->fleet.covered, c->fleet.n, 0.95, 3));
			null_fleet.n += c->fleet.n;
			null_fleet.false_verdicts += c->fleet.false_verdicts;
			null_fleet.covered += c->fleet.covered;
			null_host.n += c->host.n;
			null_host.false_verdicts += c->host.false_verdicts;
			null_host.covered += c->host.covered;
		} else {
			CHECK_INT(c->fleet.wrong_sign, ==, 0);
			if (c->hosts >= 20)
				CHECK(share(c->fleet.found, c->fleet.n) >= 0.9);
		}
		fflush(stdout);
	}
	printf("null fleets pooled: %.1f%% false verdicts, %.1f%% coverage of %u; "
	       "per host under drift: %.1f%% false verdicts, %.1f%% coverage of %u\n",
	       100 * share(null_fleet.false_verdicts, null_fleet.n), 100 * share(null_fleet.covered, null_fleet.n),
	       null_fleet.n, 100 * share(null_host.false_verdicts, null_host.n),
	       100 * share(null_host.covered, null_host.n), null_host.n);
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
