// SPDX-License-Identifier: GPL-2.0
/*
 * reports/stats.c: known values (golden numbers from scipy 1.10). The
 * comparison with a live scipy on generated inputs is
 * tests/integration/test-report-scipy.sh, the calibration of the intervals
 * on simulated fleets tests/unit/test-calibration.c.
 */
#include <errno.h>
#include <math.h>

#include "stats.h"
#include "test.h"

#define CHECK_NEAR(a, b, tol) do {						\
	double _x = (a), _y = (b);						\
	test_checks++;								\
	if (!(fabs(_x - _y) <= (tol))) {					\
		test_failures++;						\
		fprintf(stderr, "%s:%d: %s: %s = %.12g, want %.12g +- %g\n",	\
			__FILE__, __LINE__, test_current, #a, _x, _y, (double)(tol)); \
	}									\
} while (0)

static void test_rng(void)
{
	struct rng a, b;
	unsigned int hist[10] = { 0 };

	rng_init(&a, 42);
	rng_init(&b, 42);
	for (int i = 0; i < 1000; i++)
		CHECK(rng_next(&a) == rng_next(&b));
	rng_init(&b, 43);
	CHECK(rng_next(&a) != rng_next(&b));

	for (int i = 0; i < 100000; i++) {
		uint64_t v = rng_below(&a, 10);
		double u = rng_uniform(&a);

		CHECK(v < 10);
		if (!(u >= 0 && u < 1))
			CHECK(u >= 0 && u < 1);
		hist[v]++;
	}
	for (int i = 0; i < 10; i++)	/* 10000 expected, sd ~95 */
		CHECK_INT(abs((int)hist[i] - 10000), <, 600);
	CHECK(stats_hash_str(STATS_HASH_INIT, "ab") != stats_hash_str(STATS_HASH_INIT, "ba"));
}

static void test_order(void)
{
	double x[] = { 5, 1, 4, 2, 3 }, e[] = { 7, 1, 3, 5 };
	double big[1001];
	struct rng r;

	stats_sort(x, 5);
	CHECK_NEAR(stats_median_sorted(x, 5), 3, 0);
	CHECK_NEAR(stats_quantile_sorted(x, 5, 0.25), 2, 0);
	CHECK_NEAR(stats_quantile_sorted(x, 5, 0.1), 1.4, 1e-12);
	CHECK_NEAR(stats_quantile_sorted(x, 5, 0.975), 4.9, 1e-12);
	CHECK(isnan(stats_median_sorted(x, 0)));
	CHECK_NEAR(stats_median_select(e, 4), 4, 0);

	rng_init(&r, 1);
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + rng_below(&r, 1000);
		double copy[1001], want;

		for (size_t i = 0; i < n; i++)	/* many ties */
			copy[i] = big[i] = (double)rng_below(&r, 20);
		stats_sort(copy, n);
		want = stats_median_sorted(copy, n);
		CHECK_NEAR(stats_median_select(big, n), want, 0);
	}
	{
		double inf[] = { 1, INFINITY };

		CHECK(isinf(stats_quantile_sorted(inf, 2, 0.9)));
	}
}

static void test_trimmed_mean(void)
{
	/* scipy.stats.trim_mean(x, 0.1): int(0.1 * n) cut from each end. */
	double x[] = { 100, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, three[] = { 3, 1, 2 };
	struct rng r;

	CHECK_NEAR(stats_trimmed_mean(x, 10, 0.1), 5.5, 1e-15);
	CHECK_NEAR(stats_trimmed_mean(three, 3, 0.1), 2, 1e-15);
	CHECK(isnan(stats_trimmed_mean(x, 0, 0.1)));
	rng_init(&r, 2);
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + rng_below(&r, 500), k;
		double v[500], sorted[500], want = 0;

		for (size_t i = 0; i < n; i++)	/* many ties */
			sorted[i] = v[i] = (double)rng_below(&r, 30);
		stats_sort(sorted, n);
		k = (size_t)(0.1 * (double)n);
		for (size_t i = k; i < n - k; i++)
			want += sorted[i];
		CHECK_NEAR(stats_trimmed_mean(v, n, 0.1), want / (double)(n - 2 * k), 1e-12);
	}
}

static void test_decide(void)
{
	/* Improved and regressed by the 95 % interval, no change by the 90 % one inside +-5 %. */
	CHECK_INT(stats_decide(-0.2, -0.3, -0.1, -0.28, -0.12, 0.05), ==, STATS_LOWER);
	CHECK_INT(stats_decide(0.2, 0.1, 0.3, 0.12, 0.28, 0.05), ==, STATS_HIGHER);
	CHECK_INT(stats_decide(-0.01, -0.055, 0.03, -0.045, 0.025, 0.05), ==, STATS_WITHIN);
	CHECK_INT(stats_decide(-0.01, -0.07, 0.05, -0.06, 0.04, 0.05), ==, STATS_INCONCLUSIVE);
	/* At the margin is not inside it; a significant change under the margin is no verdict. */
	CHECK_INT(stats_decide(0, -0.05, 0.05, -0.05, 0.04, 0.05), ==, STATS_INCONCLUSIVE);
	CHECK_INT(stats_decide(-0.03, -0.06, -0.001, -0.049, -0.01, 0.05), ==, STATS_WITHIN);
	CHECK_INT(stats_decide(-0.03, -0.06, -0.001, -0.051, -0.01, 0.05), ==, STATS_INCONCLUSIVE);
	CHECK_INT(stats_decide(NAN, -0.06, -0.001, -0.04, -0.01, 0.05), ==, STATS_INCONCLUSIVE);
}

static void test_betainc(void)
{
	CHECK_NEAR(stats_betainc(1, 1, 0.3), 0.3, 1e-14);
	CHECK_NEAR(stats_betainc(3, 1, 0.5), 0.125, 1e-14);
	CHECK_NEAR(stats_betainc(2.5, 3.5, 0.3), 0.2967529892956661, 1e-13);
	CHECK_NEAR(stats_betainc(5000, 5001, 0.5), 0.5039893230700742, 1e-9);
	CHECK_NEAR(stats_betainc(5000, 5001, 0.51), 0.9777976478701533, 1e-9);
	CHECK_NEAR(stats_normal_sf(0), 0.5, 1e-15);
	CHECK_NEAR(stats_normal_sf(1.959963984540054), 0.025, 1e-12);
}

static void test_mann_whitney(void)
{
	double x[] = { 1, 2, 3, 4, 5 }, y[] = { 3, 4, 5, 6, 7, 8 };
	double tx[] = { 1, 1, 2, 2, 2, 3 }, ty[] = { 2, 3, 3, 4, 4 };
	double same[] = { 2, 2, 2 };
	struct mwu_result m;

	CHECK_INT(stats_mann_whitney_sorted(x, 5, y, 6, &m), ==, 0);
	CHECK_NEAR(m.u, 4.5, 1e-12);
	CHECK_NEAR(m.p, 0.066015431521231, 1e-12);
	CHECK_INT(stats_mann_whitney_sorted(tx, 6, ty, 5, &m), ==, 0);
	CHECK_NEAR(m.u, 3.5, 1e-12);
	CHECK_NEAR(m.p, 0.037016048456937296, 1e-12);
	/* Symmetric in its samples. */
	CHECK_INT(stats_mann_whitney_sorted(ty, 5, tx, 6, &m), ==, 0);
	CHECK_NEAR(m.u, 6 * 5 - 3.5, 1e-12);
	CHECK_NEAR(m.p, 0.037016048456937296, 1e-12);
	CHECK_INT(stats_mann_whitney_sorted(same, 3, same, 2, &m), ==, 0);
	CHECK_NEAR(m.p, 1, 0);
	CHECK_INT(stats_mann_whitney_sorted(x, 0, y, 6, &m), ==, -EINVAL);
}

static void test_wilcoxon(void)
{
	double d[] = { 0.5, -0.2, 1.1, 0.7, 0, 0.3, -0.4, 0.9, 0.3 }, z[] = { 0, 0 };
	struct wilcoxon_result w;

	CHECK_INT(stats_wilcoxon(d, 9, &w), ==, 0);
	CHECK_NEAR(w.t, 5, 1e-12);
	CHECK_NEAR(w.p, 0.06836413860052828, 1e-12);
	CHECK_INT(w.n, ==, 8);
	CHECK_INT(stats_wilcoxon(z, 2, &w), ==, -EINVAL);
}

static void test_student_t(void)
{
	/* Golden values: scipy.stats.t.sf / t.ppf (scipy 1.10). */
	CHECK_NEAR(stats_t_sf(2.0, 5), 0.05096973941492914, 1e-12);
	CHECK_NEAR(stats_t_sf(1.3, 2.7), 0.14672632185192247, 1e-12);
	CHECK_NEAR(stats_t_sf(-2.0, 5), 1 - 0.05096973941492914, 1e-12);
	CHECK_NEAR(stats_t_quantile(0.975, 3), 3.182446305284263, 1e-10);
	CHECK_NEAR(stats_t_quantile(0.975, 1.5), 6.016663107990447, 1e-8);
	CHECK_NEAR(stats_t_quantile(0.025, 40), -2.021075382995338, 1e-8);
	CHECK_NEAR(stats_t_quantile(0.995, 1), 63.65674116287399, 1e-7);
	CHECK_NEAR(stats_t_quantile(0.5, 7), 0, 0);
	CHECK(isnan(stats_t_quantile(1, 7)));
}

static void test_t_intervals(void)
{
	double v[] = { 0.1, -0.3, 0.25, 0.05, -0.12, 0.4 };
	double a[] = { 1.0, 1.5, 0.7, 2.2 }, b[] = { 0.1, 0.4, 0.2, 0.35, 0.3, 0.25, 0.15 };
	struct t_interval t;

	/* scipy.stats.ttest_1samp(v, 0) and t.interval(0.95, 5, mean, sem). */
	CHECK_INT(stats_t_mean(v, 6, 0.95, &t), ==, 0);
	CHECK_NEAR(t.p, 0.5637908676455264, 1e-12);
	CHECK_NEAR(t.lo, -0.2002122534018228, 1e-9);
	CHECK_NEAR(t.hi, 0.3268789200684895, 1e-9);
	/* The equivalence interval: t.interval(0.90, 5, mean, sem). */
	CHECK_NEAR(t.eq_lo, -0.14325690165182337, 1e-9);
	CHECK_NEAR(t.eq_hi, 0.26992356831848996, 1e-9);
	CHECK_INT(stats_t_mean(v, 1, 0.95, &t), ==, -EINVAL);

	/* scipy.stats.ttest_ind(a, b, equal_var=False), Welch-Satterthwaite df. */
	CHECK_INT(stats_welch(a, 4, b, 7, 0.95, &t), ==, 0);
	CHECK_NEAR(t.p, 0.04276778380368841, 1e-12);
	CHECK_NEAR(t.estimate / t.se, 3.3292595972151005, 1e-12);
	CHECK_NEAR(t.df, 3.0933725890764885, 1e-12);
	CHECK_NEAR(t.lo, 0.06623703421667804, 1e-10);
	CHECK_NEAR(t.hi, 2.133762965783322, 1e-10);
	CHECK_INT(stats_welch(a, 1, b, 7, 0.95, &t), ==, -EINVAL);

	/* Every unit says the same: a point interval. */
	{
		double same[] = { 0.2, 0.2, 0.2 };

		CHECK_INT(stats_t_mean(same, 3, 0.95, &t), ==, 0);
		CHECK_NEAR(t.lo, 0.2, 1e-15);
		CHECK_NEAR(t.hi, 0.2, 1e-15);
	}
}

static void test_block_change(void)
{
	/* Two blocks a side: before medians 10 and 12, after 5 and 7. */
	double x[] = { 9, 10, 11, 12, 12, 13 }, y[] = { 4, 5, 6, 6, 7, 8 };
	size_t ox[] = { 0, 3, 6 }, oy[] = { 0, 3, 6 }, bad[] = { 0, 0, 6 };
	double lb[] = { log(10), log(12) }, la[] = { log(5), log(7) };
	struct block_change bc;
	struct t_interval w;

	CHECK_INT(stats_block_change(x, ox, y, oy, 0.95, &bc), ==, 0);
	CHECK_NEAR(bc.median_before, 11.5, 0);
	CHECK_NEAR(bc.median_after, 6, 0);
	CHECK_NEAR(bc.block_before[1], 12, 0);
	CHECK_NEAR(bc.block_after[0], 5, 0);
	/* Centred on the pooled medians, spread from the blocks. */
	CHECK_NEAR(bc.log.estimate, log(6 / 11.5), 1e-15);
	CHECK_INT(stats_welch(la, 2, lb, 2, 0.95, &w), ==, 0);
	CHECK_NEAR(bc.log.se, w.se, 1e-15);
	CHECK_NEAR(bc.log.df, w.df, 1e-15);
	CHECK_NEAR(bc.log.hi - bc.log.estimate, w.hi - w.estimate, 1e-12);
	CHECK_INT(stats_block_change(x, bad, y, oy, 0.95, &bc), ==, -EINVAL);
	{
		double z[] = { 0, 0, 0, 1, 1, 1 };

		CHECK_INT(stats_block_change(z, ox, y, oy, 0.95, &bc), ==, -EDOM);
	}
	CHECK_INT(stats_block_days(7), ==, 3);
	CHECK_INT(stats_block_days(2), ==, 1);
}

static void test_did(void)
{
	/* Stratum 0: treated 1, 1.2 (mean 1.1), controls 0, 0.2 (0.1); stratum 1: 2, 2.4 vs 1, 1.2, 1.4. */
	double a[] = { 1, 1.2, 2, 2.4, 5 }, b[] = { 0, 0.2, 1, 1.2, 1.4, 9 };
	unsigned int sa[] = { 0, 0, 1, 1, 2 }, sb[] = { 0, 0, 1, 1, 1, 3 };
	struct did_result d;
	double va, vb, w = 0.5;

	CHECK_INT(stats_did(a, sa, 5, b, sb, 6, 0.95, &d), ==, 0);
	CHECK_NEAR(d.ci.estimate, w * (1.1 - 0.1) + w * (2.2 - 1.2), 1e-12);
	CHECK_INT(d.strata, ==, 2);
	CHECK_INT(d.na, ==, 4);
	CHECK_INT(d.nb, ==, 5);
	/* Pooled within-stratum variances: treated (0.02 + 0.08) / 2, controls (0.02 + 0.08) / 3. */
	va = (0.02 + 0.08) / 2 / 4;
	vb = (0.02 + 0.08) / 3 * (w * w / 2 + w * w / 3);
	CHECK_NEAR(d.ci.se, sqrt(va + vb), 1e-12);
	CHECK_NEAR(d.ci.df, (va + vb) * (va + vb) / (va * va / 2 + vb * vb / 3), 1e-9);
	CHECK(d.ci.lo < d.ci.estimate && d.ci.hi > d.ci.estimate);

	/* One stratum: Welch's interval exactly. */
	{
		double ta[] = { 1.0, 1.5, 0.7, 2.2 }, tb[] = { 0.1, 0.4, 0.2, 0.35, 0.3, 0.25, 0.15 };
		unsigned int z[7] = { 0 };
		struct t_interval t;

		CHECK_INT(stats_did(ta, z, 4, tb, z, 7, 0.95, &d), ==, 0);
		CHECK_INT(stats_welch(ta, 4, tb, 7, 0.95, &t), ==, 0);
		CHECK_NEAR(d.ci.lo, t.lo, 1e-12);
		CHECK_NEAR(d.ci.hi, t.hi, 1e-12);
	}
	/* No stratum with both groups; one treated unit per stratum: no spread to measure. */
	CHECK_INT(stats_did(a, sa + 4, 1, b, sb + 5, 1, 0.95, &d), ==, -ENODATA);
	{
		unsigned int one[] = { 0, 1 };

		CHECK_INT(stats_did(a, one, 2, b, sb, 5, 0.95, &d), ==, -ENODATA);
	}
}

/* ANCOVA on one stratum: numpy.linalg.lstsq of y on (1, treated, x1, x2). */
static void test_did_adjusted(void)
{
	static const double xa[] = {
		2.040919, -2.555665, 0.418099, -0.567770, -0.452649, -0.215597, -2.019986, -0.231932,
		-0.865213, 3.323000, 0.225787, -0.352631, -0.281287, -0.668046, -1.055151, -0.390801,
		0.481945, -0.238554, 0.957759, -0.199802, 0.024260, 1.545821, 0.545106, -0.505229,
	}, xb[] = {
		-0.182839, 0.540525, 1.935088, -0.269620, -0.243559, 1.002314, -0.886460, -0.291720,
		0.882539, 0.580350, 0.091517, 0.670104, -2.828162, 1.021307, -0.959645, -1.668620,
		0.276446, 0.700545, -0.444767, -1.076406, 0.026125, -0.052747, 1.405598, 0.747408,
		0.193816, 1.111633, -0.205523, -0.925900,
	}, ya[] = {
		1.889998, 0.680857, 0.095312, -0.741887, -0.774291, 0.234030, 0.361978, -0.100278,
		0.424798, 0.824975, -0.093444, 0.749321,
	}, yb[] = {
		-0.402941, 0.930019, -0.251284, -0.269246, 0.109399, -0.138067, -1.585541, -0.207020,
		0.157178, -0.126225, 0.059065, 0.448477, 0.015177, 0.080253,
	};
	unsigned int z[14] = { 0 };
	struct did_result d, plain;

	CHECK_INT(stats_did_adjusted(ya, xa, z, 12, yb, xb, z, 14, 2, 0.95, &d), ==, 0);
	CHECK(d.adj.applied);
	CHECK_NEAR(d.ci.estimate, 0.2991086691507933, 1e-9);
	CHECK_NEAR(d.adj.theta[0], 0.48572770995524245, 1e-9);
	CHECK_NEAR(d.adj.theta[1], -0.20131891312086936, 1e-9);
	CHECK_NEAR(d.adj.resid_df, 22, 0);
	/* The slopes explain most of the spread: a far narrower interval, still a t interval. */
	CHECK_INT(stats_did(ya, z, 12, yb, z, 14, 0.95, &plain), ==, 0);
	CHECK_NEAR(d.adj.plain.se, plain.ci.se, 1e-15);
	CHECK(d.ci.se < plain.ci.se / 3 && d.ci.df < 24 && d.adj.theta_var > 0);
	/* Without covariates, or too few residual degrees of freedom: the plain interval. */
	CHECK_INT(stats_did_adjusted(ya, xa, z, 12, yb, xb, z, 14, 0, 0.95, &d), ==, 0);
	CHECK(!d.adj.applied && d.ci.se == plain.ci.se);
	CHECK_INT(stats_did_adjusted(ya, xa, z, 10, yb, xb, z, 12, 2, 0.95, &d), ==, 0);
	CHECK(!d.adj.applied);
	CHECK_INT(stats_did(ya, z, 10, yb, z, 12, 0.95, &plain), ==, 0);
	CHECK_NEAR(d.ci.se, plain.ci.se, 0);
}

int main(void)
{
	RUN(test_rng);
	RUN(test_order);
	RUN(test_betainc);
	RUN(test_mann_whitney);
	RUN(test_wilcoxon);
	RUN(test_student_t);
	RUN(test_t_intervals);
	RUN(test_block_change);
	RUN(test_did);
	RUN(test_trimmed_mean);
	RUN(test_decide);
	RUN(test_did_adjusted);
	return test_exit();
}
