/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_STATS_H
#define MMHITM_STATS_H

/*
 * The statistics behind `mmhitm report`: order statistics, rank tests and
 * Student's t intervals (why t and not a bootstrap: docs/statistics.md).
 * Pure functions of their inputs, so every number in a report can be
 * reproduced. The PRNG is for tests and generators.
 *
 * Conventions follow numpy/scipy, which the tests compare against:
 * quantiles interpolate linearly between order statistics (numpy's default
 * "linear"), Mann-Whitney U and Wilcoxon signed-rank use the normal
 * approximation with the tie correction (scipy's method="asymptotic" and
 * method="approx"), and t intervals are scipy.stats.t.interval around
 * the estimates of ttest_1samp and ttest_ind(equal_var=False).
 */

#include <stdbool.h>
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
/*
 * Trimmed mean: the mean of x without its floor(cut * n) smallest and
 * largest values (scipy.stats.trim_mean(x, cut)), in O(n); reorders x.
 * NAN when n == 0. STATS_TRIM is the report's cut: a host's level.
 */
#define STATS_TRIM 0.1
double stats_trimmed_mean(double *x, size_t n, double cut);
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

/* Student's t distribution: P(T > t) with df > 0 degrees of freedom (df may be fractional). */
double stats_t_sf(double t, double df);
/* Its inverse: the t with P(T <= t) = p, 0 < p < 1. */
double stats_t_quantile(double p, double df);

/*
 * A Student's t interval: estimate +- t(df) * se, and the test of
 * estimate = 0. [eq_lo, eq_hi] is the same interval at level 2 * level - 1
 * (90 % for 95 %): the two one-sided tests of equivalence at
 * (1 - level) / 2 each (5 %) reject "|change| >= margin" when it lies
 * inside +-margin (stats_decide()).
 */
struct t_interval {
	double estimate;
	double se;		/* standard error */
	double df;		/* degrees of freedom (Welch-Satterthwaite where two groups) */
	double lo, hi;
	double eq_lo, eq_hi;	/* at level 2 * level - 1: the equivalence test's */
	double p;		/* two-sided p-value of estimate = 0 */
};

/* The interval centred on estimate with standard error se; se = 0 gives a point. */
void stats_t_interval(double estimate, double se, double df, double level, struct t_interval *ret);

/*
 * One-sample t interval of the mean of v (scipy.stats.ttest_1samp and
 * scipy.stats.t.interval). -EINVAL when n < 2.
 */
int stats_t_mean(const double *v, size_t n, double level, struct t_interval *ret);

/*
 * Welch's interval of mean(a) - mean(b) with the Welch-Satterthwaite
 * degrees of freedom (scipy.stats.ttest_ind(a, b, equal_var=False)).
 * -EINVAL when a group has fewer than 2 values.
 */
int stats_welch(const double *a, size_t na, const double *b, size_t nb, double level,
		struct t_interval *ret);

/*
 * One host's before/after change, robust to day-to-day drift. Each side's
 * rates (in time order) come cut into STATS_HOST_BLOCKS blocks of whole
 * days (stats_block_days() says where); the point estimate is the change
 * of the pooled medians, log(median(after) / median(before)), and its
 * standard error is Welch's, from the spread of the blocks' log medians:
 * blocks days long carry whatever drift the host has between days, so the
 * interval widens with it (see docs/statistics.md for why two blocks a
 * side, and its calibration).
 *
 * before/after: the rates, before_off/after_off: where each block starts
 * (STATS_HOST_BLOCKS + 1 offsets, the last one the count). Rates need not
 * be sorted; they are not modified. -EINVAL when a block is empty, -EDOM
 * when a median is 0 (no log), -ENOMEM.
 */
#define STATS_HOST_BLOCKS 2
struct block_change {
	double median_before, median_after;
	double block_before[STATS_HOST_BLOCKS], block_after[STATS_HOST_BLOCKS];	/* medians */
	struct t_interval log;	/* of log(median_after / median_before) */
};

int stats_block_change(const double *before, const size_t *before_off,
		       const double *after, const size_t *after_off, double level,
		       struct block_change *ret);

/* Days in the first of the blocks of a side of `days` whole days (>= STATS_HOST_BLOCKS). */
static inline unsigned int stats_block_days(unsigned int days)
{
	return days / STATS_HOST_BLOCKS;
}

/* The regression adjustment of a difference in differences (stats_did_adjusted()). */
#define STATS_MAX_COVARIATES 2
#define STATS_ADJUST_MIN_DF 20	/* residual degrees of freedom it needs */
struct did_adjustment {
	bool applied;
	size_t k;			/* covariates */
	double theta[STATS_MAX_COVARIATES];	/* pooled within-group slopes */
	double gap[STATS_MAX_COVARIATES];	/* treated minus control covariate means */
	double resid_df;		/* of the pooled regression */
	double theta_var;		/* variance theta's error adds to the estimate */
	struct t_interval plain;	/* the unadjusted interval */
};

struct did_result {
	struct t_interval ci;	/* of sum_s w_s (mean(a_s) - mean(b_s)) */
	size_t na, nb;		/* values in strata that have both groups */
	unsigned int strata;	/* strata used */
	struct did_adjustment adj;
};

/*
 * Difference in differences: a holds the treated units' changes and b the
 * controls', each with a stratum (a rollout cohort). The estimate averages,
 * over the treated units in strata that have controls, each unit's change
 * minus the mean change of its stratum's controls. Its standard error uses
 * each group's pooled within-stratum variance (a fleet-wide shift common
 * to a cohort is no variance) and Welch-Satterthwaite degrees of freedom;
 * with one stratum it is Welch's interval exactly.
 * -ENODATA when no stratum has both groups or a group has no within-stratum
 * degree of freedom (every stratum with one treated unit, or one control),
 * -ENOMEM.
 */
int stats_did(const double *a, const unsigned int *sa, size_t na,
	      const double *b, const unsigned int *sb, size_t nb, double level,
	      struct did_result *ret);

/*
 * stats_did() with a regression adjustment (ANCOVA; CUPED in A/B testing):
 * xa and xb hold k covariates per unit (row-major, unit i's at x[i * k]),
 * measured so that a treatment effect cannot move them. The slopes theta
 * are estimated by least squares pooled within each group and stratum;
 * every value becomes v - theta . x and the difference in differences is
 * taken of those. The interval adds theta's own error and loses k degrees
 * of freedom (split between the groups by their sizes), so it stays a t
 * interval however little the covariates explain. Applied only with
 * STATS_ADJUST_MIN_DF residual degrees of freedom and a non-singular
 * design; otherwise ret holds the plain interval and adj.applied is false.
 * Errors as stats_did().
 */
int stats_did_adjusted(const double *a, const double *xa, const unsigned int *sa, size_t na,
		       const double *b, const double *xb, const unsigned int *sb, size_t nb,
		       size_t k, double level, struct did_result *ret);

/*
 * The decision rule of every verdict, a host's and the fleet's, on a
 * relative change (0.05 is 5 %) with its interval at the report's level
 * [lo, hi] and the equivalence interval [eq_lo, eq_hi] (struct
 * t_interval's, at 2 * level - 1):
 *  - lower (higher) when [lo, hi] excludes 0 and the estimate is at least
 *    margin below (above) 0;
 *  - otherwise within when [eq_lo, eq_hi] lies inside +-margin: the two
 *    one-sided tests, each at (1 - level) / 2, reject a change of margin
 *    or more either way;
 *  - inconclusive otherwise, or when a number is NaN.
 * A change exactly at +-margin is called within at most (1 - level) / 2 of
 * the time, and with no change lower or higher at most 1 - level.
 */
enum stats_decision {
	STATS_INCONCLUSIVE,
	STATS_WITHIN,
	STATS_LOWER,
	STATS_HIGHER,
};

enum stats_decision stats_decide(double est, double lo, double hi, double eq_lo, double eq_hi,
				 double margin);

#endif
