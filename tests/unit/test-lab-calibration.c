// SPDX-License-Identifier: GPL-2.0
/*
 * Calibration of `mmhitm lab report`'s interval (reports/lab.c) on
 * simulated labs with known truth: the same functions the report uses
 * (lab_boot_median() per boot, lab_compare() across the sides), on runs
 * built the way a benchmark on one machine misbehaves:
 *
 *  - each boot shifts the level of all its runs (log-normal, sd_boot:
 *    the page layout, caches, the frequency a boot settles at), and each
 *    run adds its own noise (log-normal, sd_run);
 *  - 2, 3 and 5 boots a side, 5 runs a boot (the postings' protocol);
 *  - boots that dominate, runs that dominate, and sides with unequal boot
 *    spread (the patched kernel's boots noisier than the base's).
 *
 * A/A labs (no effect) must be called changed (the interval excludes no
 * change) in at most 5 % of labs, within 3 binomial standard errors. Two
 * baseline columns decide the same labs otherwise: "welch" with Welch's
 * own degrees of freedom on the boot medians (over 5 % with two boots a
 * side when one side's boots spread ten times the other's: why the report
 * takes min(boots) - 1), and "naive" with the runs taken as independent
 * (Welch over all runs): under boot effects it calls about half of the
 * A/A labs changed, which is why the boot is the unit. Effect cells check
 * that the interval covers the true change (>= 95 %, 3 standard errors)
 * and that a change well above the boots' spread is found (the power the
 * table prints). Deterministic (fixed seeds): it cannot flake.
 *
 * LAB_CALIBRATION_LABS=N changes the labs per cell (default 4000).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lab.h"
#include "stats.h"
#include "test.h"
#include "util.h"

#define RUNS 5

struct cell {
	const char *what;
	int boots;
	double sd_boot_base, sd_boot_patched, sd_run;
	double effect;		/* true patched / base - 1 */
	double min_power;	/* asserted share found (0: none asserted) */
};

struct tally {
	int labs, changed, welch_changed, naive_changed, covered, right_sign;
	double width;
};

static double normal(struct rng *r)
{
	double u1 = rng_uniform(r), u2 = rng_uniform(r);

	return sqrt(-2 * log(u1 > 0 ? u1 : 1e-300)) * cos(2 * M_PI * u2);
}

/* One side's boots: their medians, and every run (for the baseline). */
static void side(struct rng *r, const struct cell *c, double sd_boot, double level,
		 double *medians, double *all)
{
	for (int b = 0; b < c->boots; b++) {
		double boot = sd_boot * normal(r), v[RUNS];

		for (int k = 0; k < RUNS; k++)
			v[k] = all[b * RUNS + k] = level * exp(boot + c->sd_run * normal(r));
		medians[b] = lab_boot_median(v, RUNS);
	}
}

static void one_lab(struct rng *r, const struct cell *c, struct tally *t)
{
	double mb[LAB_MAX_BOOTS], mp[LAB_MAX_BOOTS], ab[LAB_MAX_BOOTS * RUNS], ap[LAB_MAX_BOOTS * RUNS];
	struct lab_change ch;
	struct t_interval naive;
	double truth = log1p(c->effect);

	side(r, c, c->sd_boot_base, 1e6, mb, ab);
	side(r, c, c->sd_boot_patched, 1e6 * (1 + c->effect), mp, ap);
	CHECK_INT(lab_compare(mb, c->boots, mp, c->boots, LAB_LEVEL, &ch), ==, 0);
	CHECK(ch.has_interval);
	t->labs++;
	t->changed += ch.verdict == LAB_HIGHER || ch.verdict == LAB_LOWER;
	t->right_sign += c->effect > 0 ? ch.verdict == LAB_HIGHER : ch.verdict == LAB_LOWER;
	t->covered += log1p(ch.lo) <= truth && truth <= log1p(ch.hi);
	t->width += ch.half_width;
	for (int b = 0; b < c->boots; b++) {
		mb[b] = log(mb[b]);
		mp[b] = log(mp[b]);
	}
	if (stats_welch(mp, c->boots, mb, c->boots, LAB_LEVEL, &naive) == 0)
		t->welch_changed += naive.lo > 0 || naive.hi < 0;
	for (int i = 0; i < c->boots * RUNS; i++) {
		ab[i] = log(ab[i]);
		ap[i] = log(ap[i]);
	}
	if (stats_welch(ap, c->boots * RUNS, ab, c->boots * RUNS, LAB_LEVEL, &naive) == 0)
		t->naive_changed += naive.lo > 0 || naive.hi < 0;
}

static void check_cell(const struct cell *c, const struct tally *t)
{
	double n = t->labs, se = sqrt(0.05 * 0.95 / n);
	double changed = t->changed / n, covered = t->covered / n, found = t->right_sign / n;

	char power[16] = "      -";

	if (c->effect)
		snprintf(power, sizeof(power), "%6.1f%%", 100 * found);
	printf("  %-38s %5d %6.1f%% %6.1f%% %6.1f%% %8.1f%% %s %8.2f%%\n", c->what, c->boots,
	       100 * changed, 100 * t->welch_changed / n, 100 * t->naive_changed / n, 100 * covered,
	       power, 100 * t->width / n);
	if (c->effect == 0)
		CHECK(changed <= 0.05 + 3 * se);
	CHECK(covered >= 0.95 - 3 * se);
	if (c->min_power > 0)
		CHECK(found >= c->min_power);
}

static void calibrate(void)
{
	static const struct cell cells[] = {
		/* A/A */
		{ "A/A, boots dominate (1 %, runs 0.3 %)", 2, 0.01, 0.01, 0.003, 0, 0 },
		{ "A/A, boots dominate (1 %, runs 0.3 %)", 3, 0.01, 0.01, 0.003, 0, 0 },
		{ "A/A, boots dominate (1 %, runs 0.3 %)", 5, 0.01, 0.01, 0.003, 0, 0 },
		{ "A/A, runs dominate (0.1 %, runs 2 %)", 2, 0.001, 0.001, 0.02, 0, 0 },
		{ "A/A, runs dominate (0.1 %, runs 2 %)", 5, 0.001, 0.001, 0.02, 0, 0 },
		{ "A/A, patched boots noisier (0.3/3 %)", 2, 0.003, 0.03, 0.003, 0, 0 },
		{ "A/A, patched boots noisier (0.3/3 %)", 3, 0.003, 0.03, 0.003, 0, 0 },
		{ "A/A, patched boots noisier (0.3/3 %)", 5, 0.003, 0.03, 0.003, 0, 0 },
		{ "A/A, patched boots noisier (1/2 %)", 2, 0.01, 0.02, 0.003, 0, 0 },
		{ "A/A, boots only (2 %, runs 0)", 2, 0.02, 0.02, 0, 0, 0 },
		/* effects */
		{ "-20 % (P2 at 32 processes), boots 1 %", 2, 0.01, 0.01, 0.005, -0.20, 0.90 },
		{ "+2.4 % (P1 at 4 CPUs), boots 0.3 %", 2, 0.003, 0.003, 0.003, 0.024, 0 },
		{ "+2.4 % (P1 at 4 CPUs), boots 0.3 %", 5, 0.003, 0.003, 0.003, 0.024, 0.90 },
		{ "+39 % (P4, 526 k -> 730 k), boots 2 %", 2, 0.02, 0.02, 0.01, 0.388, 0.75 },
		{ "+39 % (P4, 526 k -> 730 k), boots 2 %", 3, 0.02, 0.02, 0.01, 0.388, 0.99 },
	};
	const char *env = getenv("LAB_CALIBRATION_LABS");
	int labs = env ? atoi(env) : 4000;


	printf("  %-38s %5s %7s %7s %7s %9s %7s %9s\n", "cell (boot and run spread, log sd)", "boots",
	       "changed", "welch", "naive", "covered", "found", "half-width");
	for (size_t i = 0; i < ARRAY_SIZE(cells); i++) {
		struct tally t = {};
		struct rng r;

		rng_init(&r, 0x1ab0000 + i);
		for (int k = 0; k < labs; k++)
			one_lab(&r, &cells[i], &t);
		check_cell(&cells[i], &t);
	}
}

/* The table's arithmetic on a small case worked by hand. */
static void worked_case(void)
{
	double runs[5] = { 103, 100, 101, 99, 250 };	/* an outlier run: the median ignores it */
	double base[3] = { 100, 101, 102 }, patched[3] = { 110, 111, 112 };
	struct lab_change ch;

	CHECK(lab_boot_median(runs, 5) == 101);
	CHECK(isnan(lab_boot_median(runs, 0)));
	CHECK_INT(lab_compare(base, 3, patched, 3, LAB_LEVEL, &ch), ==, 0);
	CHECK(fabs(ch.change - (111.0 / 101.0 - 1)) < 1e-12);
	CHECK(ch.has_interval && ch.lo < ch.change && ch.change < ch.hi && ch.df == 2);
	CHECK_INT(ch.verdict, ==, LAB_HIGHER);
	/* two boots a side: one degree of freedom, and 10 % is not shown */
	CHECK_INT(lab_compare((double[]){ 100, 104 }, 2, (double[]){ 110, 112 }, 2, LAB_LEVEL, &ch), ==, 0);
	CHECK(ch.has_interval && ch.df == 1 && ch.lo < 0 && ch.hi > 0.2);
	CHECK_INT(ch.verdict, ==, LAB_NOT_SHOWN);
	/* one boot a side: a change, no interval */
	CHECK_INT(lab_compare(base, 1, patched, 1, LAB_LEVEL, &ch), ==, 0);
	CHECK(!ch.has_interval && ch.verdict == LAB_TOO_FEW && fabs(ch.change - 0.1) < 1e-12);
	/* a zero median has no log */
	base[0] = 0;
	CHECK_INT(lab_compare(base, 2, patched, 2, LAB_LEVEL, &ch), ==, -EDOM);
}

int main(void)
{
	RUN(worked_case);
	RUN(calibrate);
	return test_exit();
}
