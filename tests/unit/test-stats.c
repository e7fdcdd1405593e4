// SPDX-License-Identifier: GPL-2.0
/*
 * reports/stats.c: known values (golden numbers from scipy 1.10), and the
 * exact median bootstrap sampler against brute force. The comparison with
 * a live scipy on generated inputs is tests/integration/test-report-scipy.sh.
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

/*
 * The sampler against brute force: every one of the n^n resamples of
 * 0..n-1, enumerated, gives the exact distribution of the resample median;
 * the sampler's frequencies must match it.
 */
static void check_sampler_exact(size_t n)
{
	double x[8], freq[16] = { 0 }, want[16] = { 0 };
	size_t idx[8] = { 0 }, total = 1, draws = 400000;
	struct median_boot *mb;
	struct rng r;

	for (size_t i = 0; i < n; i++) {
		x[i] = (double)i;
		total *= n;
	}
	for (size_t c = 0; c < total; c++) {
		double v[8];
		size_t k = c;

		for (size_t i = 0; i < n; i++) {
			idx[i] = k % n;
			k /= n;
			v[i] = x[idx[i]];
		}
		stats_sort(v, n);
		want[(size_t)(2 * stats_median_sorted(v, n))] += 1.0 / (double)total;
	}
	mb = median_boot_new(x, n);
	CHECK(mb != NULL);
	if (!mb)
		return;
	rng_init(&r, 7);
	for (size_t d = 0; d < draws; d++)
		freq[(size_t)(2 * median_boot_draw(mb, &r))] += 1.0 / (double)draws;
	for (size_t v = 0; v < 2 * n; v++) {
		/* 5 binomial standard deviations. */
		double sd = sqrt(want[v] * (1 - want[v]) / (double)draws);

		CHECK_NEAR(freq[v], want[v], 5 * sd + 1e-9);
	}
	median_boot_free(mb);
}

static void test_median_sampler_exact(void)
{
	for (size_t n = 1; n <= 7; n++)
		check_sampler_exact(n);
}

/* Larger n, with ties: its quantiles against plain resampling. */
static void check_sampler_resampling(size_t n)
{
	enum { DRAWS = 20000 };
	static double fast[DRAWS], slow[DRAWS], x[4001], v[4001];
	struct median_boot *mb;
	struct rng r;

	rng_init(&r, n);
	for (size_t i = 0; i < n; i++)
		x[i] = floor(-log(1 - rng_uniform(&r)) * 30);	/* exponential, ties */
	stats_sort(x, n);
	mb = median_boot_new(x, n);
	CHECK(mb != NULL);
	if (!mb)
		return;
	for (size_t d = 0; d < DRAWS; d++) {
		fast[d] = median_boot_draw(mb, &r);
		for (size_t i = 0; i < n; i++)
			v[i] = x[rng_below(&r, n)];
		slow[d] = stats_median_select(v, n);
	}
	stats_sort(fast, DRAWS);
	stats_sort(slow, DRAWS);
	for (double q = 0.025; q < 1; q += 0.1) {
		double a = stats_quantile_sorted(fast, DRAWS, q), b = stats_quantile_sorted(slow, DRAWS, q);

		/* Monte Carlo error: allow one step of the (integer) data. */
		CHECK_NEAR(a, b, 1.01);
	}
	median_boot_free(mb);
}

static void test_median_sampler_resampling(void)
{
	check_sampler_resampling(400);
	check_sampler_resampling(401);
	check_sampler_resampling(4000);
}

static void test_bootstrap(void)
{
	double x[2000], y[2000], v[100];
	struct boot_ci a, b;
	struct rng r;

	rng_init(&r, 3);
	for (int i = 0; i < 2000; i++) {
		x[i] = 100 * exp(0.3 * (rng_uniform(&r) - 0.5));
		y[i] = 80 * exp(0.3 * (rng_uniform(&r) - 0.5));
	}
	stats_sort(x, 2000);
	stats_sort(y, 2000);
	CHECK_INT(stats_bootstrap_median_change(x, 2000, y, 2000, 2000, 0.95, 11, &a), ==, 0);
	CHECK_INT(stats_bootstrap_median_change(x, 2000, y, 2000, 2000, 0.95, 11, &b), ==, 0);
	CHECK(a.lo == b.lo && a.hi == b.hi);
	CHECK(a.lo < -0.2 && a.hi > -0.2);
	CHECK(a.hi - a.lo < 0.05);
	CHECK_INT(a.replicates, ==, 2000);

	for (int i = 0; i < 100; i++)
		v[i] = i % 2;
	CHECK_INT(stats_bootstrap_mean(v, 100, 4000, 0.95, 5, &a), ==, 0);
	/* Mean 0.5, standard error 0.05: about +-0.098. */
	CHECK_NEAR(a.lo, 0.402, 0.02);
	CHECK_NEAR(a.hi, 0.598, 0.02);

	/* Zero before: an increase is unbounded, no change stays 0. */
	{
		double z[] = { 0, 0, 0 }, p[] = { 1, 2, 3 };

		CHECK_INT(stats_bootstrap_median_change(z, 3, p, 3, 100, 0.95, 1, &a), ==, 0);
		CHECK(isinf(a.lo) && isinf(a.hi));
		CHECK_INT(stats_bootstrap_median_change(z, 3, z, 3, 100, 0.95, 1, &a), ==, 0);
		CHECK(a.lo == 0 && a.hi == 0);
	}
}

static void test_did(void)
{
	double a[] = { 1, 1, 1, 5 }, b[] = { 0, 0, 0.5, 9 };
	unsigned int sa[] = { 0, 0, 1, 2 }, sb[] = { 0, 0, 1, 3 };
	struct did_result d;

	/* Stratum 0: 1 - 0, weight 2; stratum 1: 1 - 0.5, weight 1; 2 and 3 unpaired. */
	CHECK_INT(stats_did(a, sa, 4, b, sb, 4, 500, 0.95, 1, &d), ==, 0);
	CHECK_NEAR(d.estimate, (2 * 1.0 + 1 * 0.5) / 3, 1e-12);
	CHECK_INT(d.strata, ==, 2);
	CHECK_INT(d.na, ==, 3);
	CHECK_INT(d.nb, ==, 3);
	/* Resampling the treated units: between 1 - 0.5 and 1 - 0. */
	CHECK(d.ci.lo >= 0.5 - 1e-12 && d.ci.lo < d.estimate);
	CHECK(d.ci.hi <= 1 + 1e-12 && d.ci.hi > d.estimate);
	CHECK_INT(stats_did(a, sa + 2, 1, b, sb + 3, 1, 10, 0.95, 1, &d), ==, -ENODATA);
}

int main(void)
{
	RUN(test_rng);
	RUN(test_order);
	RUN(test_betainc);
	RUN(test_mann_whitney);
	RUN(test_wilcoxon);
	RUN(test_median_sampler_exact);
	RUN(test_median_sampler_resampling);
	RUN(test_bootstrap);
	RUN(test_did);
	return test_exit();
}
