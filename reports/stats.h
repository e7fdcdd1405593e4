/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_STATS_H
#define MMHITM_STATS_H

/*
 * The statistics behind `mmhitm report`: order statistics, rank tests and
 * percentile bootstrap intervals. Pure functions of their inputs (and of an
 * explicit seed), so every number in a report can be reproduced.
 *
 * Conventions follow numpy/scipy, which the tests compare against:
 * quantiles interpolate linearly between order statistics (numpy's default
 * "linear"), Mann-Whitney U and Wilcoxon signed-rank use the normal
 * approximation with the tie correction (scipy's method="asymptotic" and
 * method="approx"), and bootstrap intervals are percentile intervals
 * (scipy.stats.bootstrap(method="percentile")).
 */

#include <stddef.h>
#include <stdint.h>

/*
 * The PRNG: xoshiro256** (Blackman and Vigna), its 256-bit state filled
 * from the 64-bit seed by splitmix64. Same seed, same stream, on every
 * platform.
 */
struct rng {
	uint64_t s[4];
};

void rng_init(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1), 53 random bits. */
double rng_uniform(struct rng *r);
/* Uniform in [0, n), without modulo bias; n > 0. */
uint64_t rng_below(struct rng *r, uint64_t n);

/* FNV-1a over data, continuing from h (start with STATS_HASH_INIT). */
#define STATS_HASH_INIT 0xcbf29ce484222325ULL
uint64_t stats_hash(uint64_t h, const void *data, size_t len);
uint64_t stats_hash_str(uint64_t h, const char *s);
/* splitmix64's finalizer: spreads a hash over all 64 bits. */
uint64_t stats_mix(uint64_t x);

/* Sorts ascending; NaNs are not allowed. */
void stats_sort(double *x, size_t n);
/* Median of sorted x (mean of the middle two for even n); NAN when n == 0. */
double stats_median_sorted(const double *x, size_t n);
/* numpy.quantile(x, q) with the default linear interpolation; sorted x. */
double stats_quantile_sorted(const double *x, size_t n, double q);
/* Median of x in O(n); reorders x. NAN when n == 0. */
double stats_median_select(double *x, size_t n);
double stats_mean(const double *x, size_t n);

/* Upper tail of the standard normal distribution, P(Z > z). */
double stats_normal_sf(double z);
/* Regularized incomplete beta function I_x(a, b), a, b > 0. */
double stats_betainc(double a, double b, double x);

struct mwu_result {
	double u;	/* U statistic of the first sample (scipy's "statistic") */
	double z;	/* standardized, with continuity correction */
	double p;	/* two-sided p-value; 1 when every value is tied */
};

/*
 * Mann-Whitney U test of x against y, both sorted ascending: ranks over the
 * pooled sample with ties averaged, the variance corrected for ties, a
 * continuity correction of 0.5, two-sided. -EINVAL when a sample is empty.
 */
int stats_mann_whitney_sorted(const double *x, size_t nx, const double *y, size_t ny,
			      struct mwu_result *ret);

struct wilcoxon_result {
	double t;	/* min(R+, R-) */
	double z;
	double p;	/* two-sided; 1 when every difference is 0 */
	size_t n;	/* non-zero differences ranked */
};

/*
 * Wilcoxon signed-rank test that the differences d are centred on 0: zeros
 * dropped (Wilcox), ties averaged and corrected for, no continuity
 * correction, normal approximation, two-sided. -EINVAL without non-zero
 * differences, -ENOMEM.
 */
int stats_wilcoxon(const double *d, size_t n, struct wilcoxon_result *ret);

/*
 * Exact sampler of the bootstrap distribution of the median: drawing from
 * it is distributed as the median of n values resampled with replacement
 * from x, in O(log n) per draw instead of O(n).
 *
 * Why it is exact: with x sorted and n indices drawn uniformly, the number
 * N_k of draws at or below index k is Binomial(n, (k+1)/n), so the r-th
 * smallest drawn index J_r satisfies P(J_r <= k) = P(N_k >= r) =
 * I_{(k+1)/n}(r, n - r + 1). For odd n the median is x[J_(n+1)/2]; for even
 * n it is the mean of x[J_n/2] and x[J_n/2+1]: J_n/2+1 = t is drawn from its
 * distribution, then J_n/2 < t exactly when n/2 draws fell below t and one
 * or more of the others at t, and those n/2 draws are then uniform on
 * [0, t), their maximum being floor(t * U^(2/n)).
 *
 * The table covers indices within 6 sqrt(n) + 8 of the middle: beyond that
 * the probability is below 1e-30. x must stay alive and sorted while the
 * sampler is used. Returns NULL on allocation failure or n == 0.
 * Caller frees with median_boot_free().
 */
struct median_boot;
struct median_boot *median_boot_new(const double *sorted, size_t n);
void median_boot_free(struct median_boot *mb);
double median_boot_draw(struct median_boot *mb, struct rng *r);

struct boot_ci {
	double lo, hi;
	unsigned int replicates;
};

/*
 * Percentile bootstrap interval at level (e.g. 0.95) of the relative change
 * of medians, median(y) / median(x) - 1, resampling x and y independently
 * (scipy.stats.bootstrap((x, y), ..., method="percentile")). Both sorted.
 * 0/0 counts as no change and a positive over 0 as +inf, so an interval can
 * be unbounded above. -EINVAL on empty input, -ENOMEM.
 */
int stats_bootstrap_median_change(const double *x, size_t nx, const double *y, size_t ny,
				  unsigned int replicates, double level, uint64_t seed,
				  struct boot_ci *ret);

/* Percentile bootstrap interval of the mean of v. */
int stats_bootstrap_mean(const double *v, size_t n, unsigned int replicates, double level,
			 uint64_t seed, struct boot_ci *ret);

struct did_result {
	double estimate;	/* sum_s w_s (mean(a_s) - mean(b_s)) */
	struct boot_ci ci;
	size_t na, nb;		/* values in strata that have both groups */
	unsigned int strata;	/* strata used */
};

/*
 * Difference in differences: a holds the treated units' changes and b the
 * controls', each with a stratum (a rollout cohort). The estimate averages,
 * over the treated units in strata that have controls, each unit's change
 * minus the mean change of its stratum's controls. The interval resamples
 * the treated units across strata and the controls within each stratum.
 * -ENODATA when no stratum has both groups.
 */
int stats_did(const double *a, const unsigned int *sa, size_t na,
	      const double *b, const unsigned int *sb, size_t nb,
	      unsigned int replicates, double level, uint64_t seed,
	      struct did_result *ret);

#endif
