// SPDX-License-Identifier: GPL-2.0
/* Statistics for before/after comparisons; see stats.h for the conventions. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* --- PRNG ----------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t stats_mix(uint64_t x)
{
	return splitmix64(&x);
}

void rng_init(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_uniform(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	/* Lemire's multiply-and-shift, rejecting the biased low products. */
	unsigned __int128 m = (unsigned __int128)rng_next(r) * n;
	uint64_t low = (uint64_t)m;

	if (low < n) {
		uint64_t threshold = -n % n;

		while (low < threshold) {
			m = (unsigned __int128)rng_next(r) * n;
			low = (uint64_t)m;
		}
	}
	return (uint64_t)(m >> 64);
}

uint64_t stats_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t stats_hash_str(uint64_t h, const char *s)
{
	/* The terminating NUL too, so ("ab", "c") and ("a", "bc") differ. */
	return s ? stats_hash(h, s, strlen(s) + 1) : stats_hash(h, "", 1);
}

/* --- order statistics ------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_sort(double *x, size_t n)
{
	if (n > 1)
		qsort(x, n, sizeof(*x), cmp_double);
}

double stats_median_sorted(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	if (n % 2)
		return x[n / 2];
	return (x[n / 2 - 1] + x[n / 2]) / 2;
}

double stats_quantile_sorted(const double *x, size_t n, double q)
{
	double h, f;
	size_t i;

	if (n == 0)
		return NAN;
	if (q <= 0)
		return x[0];
	if (q >= 1)
		return x[n - 1];
	h = (double)(n - 1) * q;
	i = (size_t)h;
	f = h - (double)i;
	if (i + 1 >= n)
		return x[n - 1];
	if (f == 0 || x[i] == x[i + 1])
		return x[i];
	/* inf - inf must not turn into NaN: the upper end is unbounded. */
	if (isinf(x[i + 1]))
		return x[i + 1];
	return x[i] + f * (x[i + 1] - x[i]);
}

/* Puts the k-th smallest at x[k], smaller before, larger after (Hoare). */
static void select_kth(double *x, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, kk = (ptrdiff_t)k;

	while (lo < hi) {
		double pivot = x[lo + (hi - lo) / 2];
		ptrdiff_t i = lo, j = hi;

		while (i <= j) {
			while (x[i] < pivot)
				i++;
			while (x[j] > pivot)
				j--;
			if (i <= j) {
				double t = x[i];

				x[i] = x[j];
				x[j] = t;
				i++;
				j--;
			}
		}
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			return;
	}
}

double stats_median_select(double *x, size_t n)
{
	double hi, lo;

	if (n == 0)
		return NAN;
	select_kth(x, n, n / 2);
	hi = x[n / 2];
	if (n % 2)
		return hi;
	lo = x[0];
	for (size_t i = 1; i < n / 2; i++)
		if (x[i] > lo)
			lo = x[i];
	return (lo + hi) / 2;
}

double stats_trimmed_mean(double *x, size_t n, double cut)
{
	size_t k = (size_t)(cut * (double)n);
	double s = 0;

	if (n == 0)
		return NAN;
	if (2 * k >= n)
		k = (n - 1) / 2;
	/* The k smallest before x[k], then the k largest from x[n - k] on. */
	if (k) {
		select_kth(x, n, k);
		select_kth(x + k, n - k, n - 2 * k - 1);
	}
	for (size_t i = k; i < n - k; i++)
		s += x[i];
	return s / (double)(n - 2 * k);
}

double stats_mean(const double *x, size_t n)
{
	double s = 0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s / (double)n;
}

/* --- distributions ------------------------------------------------------- */

double stats_normal_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

#define LENTZ_TINY 1e-300

/* One term aa of the modified Lentz method: the factor it brings to h. */
static double lentz_step(double aa, double *c, double *d)
{
	*d = 1 + aa * *d;
	if (fabs(*d) < LENTZ_TINY)
		*d = LENTZ_TINY;
	*c = 1 + aa / *c;
	if (fabs(*c) < LENTZ_TINY)
		*c = LENTZ_TINY;
	*d = 1 / *d;
	return *d * *c;
}

/*
 * The continued fraction for I_x(a, b) (DLMF 8.17.22), evaluated with the
 * modified Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
 */
static double betacf(double a, double b, double x)
{
	const double eps = 1e-16;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < LENTZ_TINY)
		d = LENTZ_TINY;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 100000; m++) {
		double m2 = 2.0 * m, del;

		h *= lentz_step(m * (b - m) * x / ((a - 1 + m2) * (a + m2)), &c, &d);
		del = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2)), &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double stats_betainc(double a, double b, double x)
{
	double front;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	front = exp(a * log(x) + b * log1p(-x) - (lgamma(a) + lgamma(b) - lgamma(a + b)));
	if (x < (a + 1) / (a + b + 2))
		return front * betacf(a, b, x) / a;
	return 1 - front * betacf(b, a, 1 - x) / b;
}

/* --- rank tests ------------------------------------------------------------ */

int stats_mann_whitney_sorted(const double *x, size_t nx, const double *y, size_t ny,
			      struct mwu_result *ret)
{
	double r1 = 0, ties = 0, n1 = (double)nx, n2 = (double)ny, n = n1 + n2;
	double u1, u2, u, mu, var, z;
	size_t i = 0, j = 0, ranked = 0;

	if (nx == 0 || ny == 0)
		return -EINVAL;

	/* Merge the two sorted samples, one group of equal values at a time. */
	while (i < nx || j < ny) {
		double v = i < nx && (j >= ny || x[i] <= y[j]) ? x[i] : y[j];
		size_t cx = 0, cy = 0;
		double t, avg;

		while (i < nx && x[i] == v) {
			i++;
			cx++;
		}
		while (j < ny && y[j] == v) {
			j++;
			cy++;
		}
		t = (double)(cx + cy);
		avg = (double)ranked + (t + 1) / 2;	/* mean of ranks ranked+1..ranked+t */
		r1 += (double)cx * avg;
		ties += t * t * t - t;
		ranked += cx + cy;
	}

	u1 = r1 - n1 * (n1 + 1) / 2;
	u2 = n1 * n2 - u1;
	u = u1 > u2 ? u1 : u2;
	mu = n1 * n2 / 2;
	var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
	ret->u = u1;
	if (!(var > 0)) {
		/* Every value tied: no evidence of a difference. */
		ret->z = 0;
		ret->p = 1;
		return 0;
	}
	z = (u - mu - 0.5) / sqrt(var);
	ret->z = z;
	ret->p = 2 * stats_normal_sf(z);
	if (ret->p > 1)
		ret->p = 1;
	return 0;
}

struct signed_abs {
	double abs;
	bool positive;
};

static int cmp_signed_abs(const void *a, const void *b)
{
	double x = ((const struct signed_abs *)a)->abs, y = ((const struct signed_abs *)b)->abs;

	return (x > y) - (x < y);
}

int stats_wilcoxon(const double *d, size_t n, struct wilcoxon_result *ret)
{
	struct signed_abs *v;
	double rplus = 0, rminus = 0, ties = 0, cnt, mn, se;
	size_t m = 0;

	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0)
			v[m++] = (struct signed_abs){ fabs(d[i]), d[i] > 0 };
	if (m == 0) {
		free(v);
		return -EINVAL;
	}
	qsort(v, m, sizeof(*v), cmp_signed_abs);
	for (size_t i = 0; i < m;) {
		size_t k = i;
		double t, avg;

		while (k < m && v[k].abs == v[i].abs)
			k++;
		t = (double)(k - i);
		avg = (double)i + (t + 1) / 2;
		for (size_t q = i; q < k; q++) {
			if (v[q].positive)
				rplus += avg;
			else
				rminus += avg;
		}
		if (k - i > 1)
			ties += t * (t * t - 1);
		i = k;
	}
	free(v);

	cnt = (double)m;
	mn = cnt * (cnt + 1) / 4;
	se = cnt * (cnt + 1) * (2 * cnt + 1) - 0.5 * ties;
	ret->n = m;
	ret->t = rplus < rminus ? rplus : rminus;
	if (!(se > 0)) {
		ret->z = 0;
		ret->p = 1;
		return 0;
	}
	se = sqrt(se / 24);
	ret->z = (ret->t - mn) / se;
	ret->p = 2 * stats_normal_sf(fabs(ret->z));
	if (ret->p > 1)
		ret->p = 1;
	return 0;
}

/* --- Student's t ------------------------------------------------------------ */

double stats_t_sf(double t, double df)
{
	double tail;

	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 0 : 1;
	/* P(|T| > |t|) = I_{df/(df+t^2)}(df/2, 1/2). */
	tail = 0.5 * stats_betainc(df / 2, 0.5, df / (df + t * t));
	return t >= 0 ? tail : 1 - tail;
}

double stats_t_quantile(double p, double df)
{
	double lo = 0, hi = 1, target;

	if (!(p > 0 && p < 1) || !(df > 0))
		return NAN;
	if (p == 0.5)
		return 0;
	if (p < 0.5)
		return -stats_t_quantile(1 - p, df);
	target = 1 - p;
	/* Bracket, then bisect: the tail is monotone in t, and 200 halvings are exact to a double. */
	while (stats_t_sf(hi, df) > target && hi < 1e300)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
		double mid = lo + (hi - lo) / 2;

		if (stats_t_sf(mid, df) > target)
			lo = mid;
		else
			hi = mid;
	}
	return lo + (hi - lo) / 2;
}

void stats_t_interval(double estimate, double se, double df, double level, struct t_interval *ret)
{
	double q = stats_t_quantile(1 - (1 - level) / 2, df);
	double qe = stats_t_quantile(level, df);	/* 1 - (1 - (2 level - 1)) / 2 */

	ret->estimate = estimate;
	ret->se = se;
	ret->df = df;
	if (!(se > 0)) {
		/* No spread at all: the estimate is what every unit says. */
		ret->lo = ret->hi = ret->eq_lo = ret->eq_hi = estimate;
		ret->p = estimate == 0 ? 1 : 0;
		return;
	}
	ret->lo = estimate - q * se;
	ret->hi = estimate + q * se;
	ret->eq_lo = estimate - qe * se;
	ret->eq_hi = estimate + qe * se;
	ret->p = 2 * stats_t_sf(fabs(estimate) / se, df);
	if (ret->p > 1)
		ret->p = 1;
}

/* Sample variance (n - 1 in the denominator), two-pass. */
static double variance(const double *v, size_t n, double mean)
{
	double ss = 0;

	for (size_t i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return ss / (double)(n - 1);
}

int stats_t_mean(const double *v, size_t n, double level, struct t_interval *ret)
{
	double m;

	if (n < 2)
		return -EINVAL;
	m = stats_mean(v, n);
	stats_t_interval(m, sqrt(variance(v, n, m) / (double)n), (double)(n - 1), level, ret);
	return 0;
}

/* Welch-Satterthwaite: degrees of freedom of va + vb, variances of means with dfa, dfb. */
static double welch_df(double va, double dfa, double vb, double dfb)
{
	double den = va * va / dfa + vb * vb / dfb;

	return den > 0 ? (va + vb) * (va + vb) / den : dfa + dfb;
}

int stats_welch(const double *a, size_t na, const double *b, size_t nb, double level,
		struct t_interval *ret)
{
	double ma, mb, va, vb;

	if (na < 2 || nb < 2)
		return -EINVAL;
	ma = stats_mean(a, na);
	mb = stats_mean(b, nb);
	va = variance(a, na, ma) / (double)na;
	vb = variance(b, nb, mb) / (double)nb;
	stats_t_interval(ma - mb, sqrt(va + vb), welch_df(va, (double)(na - 1), vb, (double)(nb - 1)),
			 level, ret);
	return 0;
}

/* Median of v[lo, hi) copied into tmp. */
static double median_of(const double *v, size_t lo, size_t hi, double *tmp)
{
	memcpy(tmp, v + lo, (hi - lo) * sizeof(double));
	return stats_median_select(tmp, hi - lo);
}

int stats_block_change(const double *before, const size_t *before_off,
		       const double *after, const size_t *after_off, double level,
		       struct block_change *ret)
{
	size_t nb = before_off[STATS_HOST_BLOCKS], na = after_off[STATS_HOST_BLOCKS];
	double lb[STATS_HOST_BLOCKS], la[STATS_HOST_BLOCKS], *tmp;
	struct t_interval w;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	for (int k = 0; k < STATS_HOST_BLOCKS; k++)
		if (before_off[k + 1] <= before_off[k] || after_off[k + 1] <= after_off[k])
			return -EINVAL;
	tmp = malloc((nb > na ? nb : na) * sizeof(double));
	if (!tmp)
		return -ENOMEM;
	ret->median_before = median_of(before, 0, nb, tmp);
	ret->median_after = median_of(after, 0, na, tmp);
	for (int k = 0; k < STATS_HOST_BLOCKS; k++) {
		ret->block_before[k] = median_of(before, before_off[k], before_off[k + 1], tmp);
		ret->block_after[k] = median_of(after, after_off[k], after_off[k + 1], tmp);
		if (!(ret->block_before[k] > 0 && ret->block_after[k] > 0))
			r = -EDOM;
		lb[k] = log(ret->block_before[k]);
		la[k] = log(ret->block_after[k]);
	}
	if (!(ret->median_before > 0 && ret->median_after > 0))
		r = -EDOM;
	free(tmp);
	if (r < 0)
		return r;
	/*
	 * Welch's standard error of the blocks' means, around the pooled
	 * medians' change: the estimate is the one every other number of the
	 * report uses, the spread is the one drift makes.
	 */
	r = stats_welch(la, STATS_HOST_BLOCKS, lb, STATS_HOST_BLOCKS, level, &w);
	if (r < 0)
		return r;
	stats_t_interval(log(ret->median_after / ret->median_before), w.se, w.df, level, &ret->log);
	return 0;
}

/* Members of both groups in one stratum. */
struct stratum {
	unsigned int id;
	size_t na, nb;
	double sum_a, sum_b, ss_a, ss_b;
};

static struct stratum *stratum_get(struct stratum *st, size_t *n, unsigned int id)
{
	for (size_t i = 0; i < *n; i++)
		if (st[i].id == id)
			return &st[i];
	st[*n].id = id;
	return &st[(*n)++];
}

/* Each stratum's counts, sums and sums of squares around its own means; *ret_n strata. */
static struct stratum *strata_of(const double *a, const unsigned int *sa, size_t na,
				 const double *b, const unsigned int *sb, size_t nb, size_t *ret_n)
{
	struct stratum *st = calloc(na + nb + 1, sizeof(*st));
	size_t nst = 0;

	if (!st)
		return NULL;
	for (size_t i = 0; i < na; i++) {
		struct stratum *s = stratum_get(st, &nst, sa[i]);

		s->na++;
		s->sum_a += a[i];
	}
	for (size_t i = 0; i < nb; i++) {
		struct stratum *s = stratum_get(st, &nst, sb[i]);

		s->nb++;
		s->sum_b += b[i];
	}
	/* A shift common to a stratum is no noise. */
	for (size_t i = 0; i < na; i++) {
		struct stratum *s = stratum_get(st, &nst, sa[i]);
		double d = a[i] - s->sum_a / (double)s->na;

		s->ss_a += d * d;
	}
	for (size_t i = 0; i < nb; i++) {
		struct stratum *s = stratum_get(st, &nst, sb[i]);
		double d = b[i] - s->sum_b / (double)s->nb;

		s->ss_b += d * d;
	}
	*ret_n = nst;
	return st;
}

/*
 * The difference in differences, each group losing its share of k
 * degrees of freedom to estimated slopes, plus var_theta (with df_theta)
 * for the slopes' own error: Welch-Satterthwaite over the three.
 */
static int did_core(const double *a, const unsigned int *sa, size_t na,
		    const double *b, const unsigned int *sb, size_t nb, double level,
		    double k, double var_theta, double df_theta, struct did_result *ret)
{
	struct stratum *st;
	size_t nst = 0;
	double est = 0, ss_a = 0, ss_b = 0, wb = 0, va, vb, dfa, dfb, n, v, den;

	ret->na = ret->nb = 0;
	ret->strata = 0;
	st = strata_of(a, sa, na, b, sb, nb, &nst);
	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < nst; i++) {
		if (!st[i].na || !st[i].nb)
			continue;
		ret->strata++;
		ret->na += st[i].na;
		ret->nb += st[i].nb;
	}
	if (!ret->strata || ret->na <= ret->strata || ret->nb <= ret->strata) {
		free(st);
		return -ENODATA;
	}
	for (size_t i = 0; i < nst; i++) {
		double w;

		if (!st[i].na || !st[i].nb)
			continue;
		w = (double)st[i].na / (double)ret->na;
		est += w * (st[i].sum_a / (double)st[i].na - st[i].sum_b / (double)st[i].nb);
		ss_a += st[i].ss_a;
		ss_b += st[i].ss_b;
		wb += w * w / (double)st[i].nb;
	}
	free(st);
	n = (double)(ret->na + ret->nb);
	dfa = (double)(ret->na - ret->strata) - k * (double)ret->na / n;
	dfb = (double)(ret->nb - ret->strata) - k * (double)ret->nb / n;
	va = ss_a / dfa / (double)ret->na;
	vb = ss_b / dfb * wb;
	v = va + vb + var_theta;
	den = va * va / dfa + vb * vb / dfb + (var_theta > 0 ? var_theta * var_theta / df_theta : 0);
	stats_t_interval(est, sqrt(v), den > 0 ? v * v / den : dfa + dfb, level, &ret->ci);
	return 0;
}

int stats_did(const double *a, const unsigned int *sa, size_t na,
	      const double *b, const unsigned int *sb, size_t nb, double level,
	      struct did_result *ret)
{
	memset(ret, 0, sizeof(*ret));
	return did_core(a, sa, na, b, sb, nb, level, 0, 0, 0, ret);
}

/* Solves the symmetric k x k system m z = v, k <= 2; -EDOM when (nearly) singular. */
static int solve_small(size_t k, const double m[][STATS_MAX_COVARIATES], const double *v, double *z)
{
	double det;

	if (k == 1) {
		if (!(m[0][0] > 0))
			return -EDOM;
		z[0] = v[0] / m[0][0];
		return 0;
	}
	det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
	if (!(det > 1e-12 * m[0][0] * m[1][1]))
		return -EDOM;
	z[0] = (m[1][1] * v[0] - m[0][1] * v[1]) / det;
	z[1] = (m[0][0] * v[1] - m[1][0] * v[0]) / det;
	return 0;
}

/* Within-(group, stratum) moments of the covariates and the values, for the pooled slopes. */
struct ancova {
	size_t k;
	double sxx[STATS_MAX_COVARIATES][STATS_MAX_COVARIATES], sxy[STATS_MAX_COVARIATES], syy;
	double gap[STATS_MAX_COVARIATES];	/* sum_s w_s (mean xa_s - mean xb_s) */
};

/* Adds one group's units of stratum id (n of them, wanted) to the moments; its covariate mean to gap. */
static void ancova_add(struct ancova *m, const double *v, const double *x, const unsigned int *s,
		       size_t n, unsigned int id, double sign_w)
{
	double my = 0, mx[STATS_MAX_COVARIATES] = { 0 };
	size_t c = 0, k = m->k;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != id)
			continue;
		c++;
		my += v[i];
		for (size_t j = 0; j < k; j++)
			mx[j] += x[i * k + j];
	}
	my /= (double)c;
	for (size_t j = 0; j < k; j++) {
		mx[j] /= (double)c;
		m->gap[j] += sign_w * mx[j];
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] != id)
			continue;
		m->syy += (v[i] - my) * (v[i] - my);
		for (size_t j = 0; j < k; j++) {
			m->sxy[j] += (x[i * k + j] - mx[j]) * (v[i] - my);
			for (size_t l = 0; l < k; l++)
				m->sxx[j][l] += (x[i * k + j] - mx[j]) * (x[i * k + l] - mx[l]);
		}
	}
}

/* v - theta . x for each of n units, into out. */
static void adjust(const double *v, const double *x, size_t n, const struct did_adjustment *adj,
		   double *out)
{
	for (size_t i = 0; i < n; i++) {
		out[i] = v[i];
		for (size_t j = 0; j < adj->k; j++)
			out[i] -= adj->theta[j] * x[i * adj->k + j];
	}
}

/* The slopes and what their error adds; -EDOM when the design cannot carry them. */
static int ancova_fit(const double *a, const double *xa, const unsigned int *sa, size_t na,
		      const double *b, const double *xb, const unsigned int *sb, size_t nb,
		      const struct did_result *plain, struct did_adjustment *adj)
{
	struct ancova m = { .k = adj->k };
	double z[STATS_MAX_COVARIATES], s2, q = 0;
	size_t nst = 0;
	struct stratum *st = strata_of(a, sa, na, b, sb, nb, &nst);

	if (!st)
		return -ENOMEM;
	for (size_t i = 0; i < nst; i++) {
		double w = (double)st[i].na / (double)plain->na;

		if (!st[i].na || !st[i].nb)
			continue;
		ancova_add(&m, a, xa, sa, na, st[i].id, w);
		ancova_add(&m, b, xb, sb, nb, st[i].id, -w);
	}
	free(st);
	adj->resid_df = (double)(plain->na + plain->nb) - 2.0 * plain->strata - (double)adj->k;
	if (adj->resid_df < STATS_ADJUST_MIN_DF || solve_small(adj->k, m.sxx, m.sxy, adj->theta) < 0)
		return -EDOM;
	s2 = m.syy;
	for (size_t j = 0; j < adj->k; j++)
		s2 -= adj->theta[j] * m.sxy[j];
	s2 /= adj->resid_df;
	if (solve_small(adj->k, m.sxx, m.gap, z) < 0)
		return -EDOM;
	for (size_t j = 0; j < adj->k; j++) {
		adj->gap[j] = m.gap[j];
		q += m.gap[j] * z[j];
	}
	adj->theta_var = s2 * q;
	return 0;
}

int stats_did_adjusted(const double *a, const double *xa, const unsigned int *sa, size_t na,
		       const double *b, const double *xb, const unsigned int *sb, size_t nb,
		       size_t k, double level, struct did_result *ret)
{
	struct did_adjustment adj = { .k = k };
	double *aa, *bb;
	int r;

	r = stats_did(a, sa, na, b, sb, nb, level, ret);
	if (r < 0 || k == 0 || k > STATS_MAX_COVARIATES)
		return r;
	adj.plain = ret->ci;
	ret->adj = adj;
	r = ancova_fit(a, xa, sa, na, b, xb, sb, nb, ret, &adj);
	if (r == -EDOM)
		return 0;	/* the plain interval stands */
	if (r < 0)
		return r;
	aa = malloc((na + nb + 1) * sizeof(double));
	if (!aa)
		return -ENOMEM;
	bb = aa + na;
	adjust(a, xa, na, &adj, aa);
	adjust(b, xb, nb, &adj, bb);
	r = did_core(aa, sa, na, bb, sb, nb, level, (double)k, adj.theta_var, adj.resid_df, ret);
	free(aa);
	if (r < 0)
		return r;
	adj.applied = true;
	ret->adj = adj;
	return 0;
}

enum stats_decision stats_decide(double est, double lo, double hi, double eq_lo, double eq_hi,
				 double margin)
{
	if (isnan(est) || isnan(lo) || isnan(hi) || isnan(eq_lo) || isnan(eq_hi))
		return STATS_INCONCLUSIVE;
	if (hi < 0 && est <= -margin)
		return STATS_LOWER;
	if (lo > 0 && est >= margin)
		return STATS_HIGHER;
	/* Two one-sided tests: change > -margin and change < +margin, each at (1 - level) / 2. */
	if (eq_lo > -margin && eq_hi < margin)
		return STATS_WITHIN;
	return STATS_INCONCLUSIVE;
}
