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

/*
 * The continued fraction for I_x(a, b) (DLMF 8.17.22), evaluated with the
 * modified Lentz method; it converges fast for x < (a + 1) / (a + b + 2).
 */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 100000; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;

		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
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

/* --- the median's bootstrap distribution ---------------------------------- */

struct median_boot {
	const double *x;
	size_t n;
	size_t lo;		/* the table starts at this index */
	size_t len;
	double *cdf;		/* P(J <= lo + i), the last entry 1 */
	size_t half;		/* n / 2 when n is even, else 0 */
	double log_choose;	/* log C(n, n/2) for even n */
};

struct median_boot *median_boot_new(const double *sorted, size_t n)
{
	struct median_boot *mb;
	size_t r, center, w, hi;
	double nn = (double)n;

	if (n == 0)
		return NULL;
	mb = calloc(1, sizeof(*mb));
	if (!mb)
		return NULL;
	mb->x = sorted;
	mb->n = n;
	/* The order statistic drawn first: the median, or the upper middle. */
	r = n % 2 ? (n + 1) / 2 : n / 2 + 1;
	if (n % 2 == 0) {
		mb->half = n / 2;
		mb->log_choose = lgamma(nn + 1) - lgamma((double)mb->half + 1) -
				 lgamma(nn - (double)mb->half + 1);
	}
	center = r - 1;
	w = (size_t)(6 * sqrt(nn)) + 8;
	mb->lo = center > w ? center - w : 0;
	hi = center + w < n - 1 ? center + w : n - 1;
	mb->len = hi - mb->lo + 1;
	mb->cdf = malloc(mb->len * sizeof(double));
	if (!mb->cdf) {
		free(mb);
		return NULL;
	}
	for (size_t i = 0; i < mb->len; i++) {
		double p = (double)(mb->lo + i + 1) / nn;

		mb->cdf[i] = stats_betainc((double)r, nn - (double)r + 1, p);
	}
	/* The tail beyond the table (< 1e-30) goes to its last entry. */
	mb->cdf[mb->len - 1] = 1;
	return mb;
}

void median_boot_free(struct median_boot *mb)
{
	if (!mb)
		return;
	free(mb->cdf);
	free(mb);
}

double median_boot_draw(struct median_boot *mb, struct rng *r)
{
	double u = rng_uniform(r), pt, q, lower;
	size_t a = 0, b = mb->len - 1, i, t, s;

	/* The smallest i with u < cdf[i]. */
	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (u < mb->cdf[mid])
			b = mid;
		else
			a = mid + 1;
	}
	i = a;
	t = mb->lo + i;
	if (!mb->half)
		return mb->x[t];

	/*
	 * Even n: J_upper = t. The lower middle is below t exactly when
	 * N_{t-1} = n/2 (and at least one of the other n/2 draws sits at t).
	 */
	pt = mb->cdf[i] - (i ? mb->cdf[i - 1] : 0);
	q = 0;
	if (t > 0 && pt > 0) {
		double nn = (double)mb->n, h = (double)mb->half, p = (double)t / nn;
		double pmf = exp(mb->log_choose + h * log(p) + (nn - h) * log1p(-p));
		double any_at_t = -expm1((nn - h) * log1p(-1.0 / (nn - (double)t)));

		q = pmf * any_at_t / pt;
	}
	if (rng_uniform(r) < q) {
		s = (size_t)((double)t * pow(rng_uniform(r), 1.0 / (double)mb->half));
		if (s >= t)
			s = t - 1;
		lower = mb->x[s];
	} else {
		lower = mb->x[t];
	}
	return (lower + mb->x[t]) / 2;
}

/* --- bootstrap intervals ---------------------------------------------------- */

static void percentile_ci(double *reps, unsigned int n, double level, struct boot_ci *ret)
{
	double alpha = (1 - level) / 2;

	stats_sort(reps, n);
	ret->lo = stats_quantile_sorted(reps, n, alpha);
	ret->hi = stats_quantile_sorted(reps, n, 1 - alpha);
	ret->replicates = n;
}

static double relative_change(double before, double after)
{
	if (before == 0)
		return after == 0 ? 0 : (after > 0 ? INFINITY : -INFINITY);
	return after / before - 1;
}

int stats_bootstrap_median_change(const double *x, size_t nx, const double *y, size_t ny,
				  unsigned int replicates, double level, uint64_t seed,
				  struct boot_ci *ret)
{
	struct median_boot *bx = NULL, *by = NULL;
	double *reps = NULL;
	struct rng rng;
	int r = 0;

	if (nx == 0 || ny == 0 || replicates == 0)
		return -EINVAL;
	bx = median_boot_new(x, nx);
	by = median_boot_new(y, ny);
	reps = malloc(replicates * sizeof(double));
	if (!bx || !by || !reps) {
		r = -ENOMEM;
		goto out;
	}
	rng_init(&rng, seed);
	for (unsigned int k = 0; k < replicates; k++) {
		double mx = median_boot_draw(bx, &rng);
		double my = median_boot_draw(by, &rng);

		reps[k] = relative_change(mx, my);
	}
	percentile_ci(reps, replicates, level, ret);
out:
	free(reps);
	median_boot_free(by);
	median_boot_free(bx);
	return r;
}

int stats_bootstrap_mean(const double *v, size_t n, unsigned int replicates, double level,
			 uint64_t seed, struct boot_ci *ret)
{
	double *reps;
	struct rng rng;

	if (n == 0 || replicates == 0)
		return -EINVAL;
	reps = malloc(replicates * sizeof(double));
	if (!reps)
		return -ENOMEM;
	rng_init(&rng, seed);
	for (unsigned int k = 0; k < replicates; k++) {
		double s = 0;

		for (size_t i = 0; i < n; i++)
			s += v[rng_below(&rng, n)];
		reps[k] = s / (double)n;
	}
	percentile_ci(reps, replicates, level, ret);
	free(reps);
	return 0;
}

/* Members of one group in one stratum, as indices into the group's array. */
struct stratum {
	unsigned int id;
	size_t *a, na;
	size_t *b, nb;
	double mean_b;
};

static struct stratum *stratum_find(struct stratum *st, size_t n, unsigned int id)
{
	for (size_t i = 0; i < n; i++)
		if (st[i].id == id)
			return &st[i];
	return NULL;
}

/*
 * One estimate: each treated unit's change minus the mean change of the
 * controls in its stratum, averaged over the treated units. With rng, the
 * controls are resampled within each stratum and the treated units across
 * all strata, so a stratum holding a single treated unit still carries that
 * unit's variance.
 */
static double did_once(struct stratum *st, size_t nst, const size_t *treated, size_t nt,
		       const size_t *treated_stratum, const double *a, const double *b,
		       struct rng *rng)
{
	double sum = 0;

	for (size_t s = 0; s < nst; s++) {
		double m = 0;

		if (!st[s].na || !st[s].nb)
			continue;
		for (size_t k = 0; k < st[s].nb; k++)
			m += b[st[s].b[rng ? rng_below(rng, st[s].nb) : k]];
		st[s].mean_b = m / (double)st[s].nb;
	}
	for (size_t k = 0; k < nt; k++) {
		size_t i = rng ? rng_below(rng, nt) : k;

		sum += a[treated[i]] - st[treated_stratum[i]].mean_b;
	}
	return sum / (double)nt;
}

int stats_did(const double *a, const unsigned int *sa, size_t na,
	      const double *b, const unsigned int *sb, size_t nb,
	      unsigned int replicates, double level, uint64_t seed,
	      struct did_result *ret)
{
	struct stratum *st;
	size_t *ia = NULL, *ib = NULL, *treated = NULL, *tstratum = NULL, nst = 0, nt = 0;
	double *reps = NULL;
	struct rng rng;
	int r = 0;

	memset(ret, 0, sizeof(*ret));
	st = calloc(na + nb + 1, sizeof(*st));
	ia = malloc((na + 1) * sizeof(size_t));
	ib = malloc((nb + 1) * sizeof(size_t));
	treated = malloc((na + 1) * sizeof(size_t));
	tstratum = malloc((na + 1) * sizeof(size_t));
	reps = malloc((replicates + 1) * sizeof(double));
	if (!st || !ia || !ib || !treated || !tstratum || !reps) {
		r = -ENOMEM;
		goto out;
	}

	/* Count per stratum, then hand out slices of ia/ib. */
	for (size_t i = 0; i < na + nb; i++) {
		unsigned int id = i < na ? sa[i] : sb[i - na];
		struct stratum *s = stratum_find(st, nst, id);

		if (!s) {
			s = &st[nst++];
			s->id = id;
		}
		if (i < na)
			s->na++;
		else
			s->nb++;
	}
	{
		size_t oa = 0, ob = 0;

		for (size_t s = 0; s < nst; s++) {
			st[s].a = ia + oa;
			st[s].b = ib + ob;
			oa += st[s].na;
			ob += st[s].nb;
			st[s].na = st[s].nb = 0;
		}
	}
	for (size_t i = 0; i < na; i++) {
		struct stratum *s = stratum_find(st, nst, sa[i]);

		s->a[s->na++] = i;
	}
	for (size_t i = 0; i < nb; i++) {
		struct stratum *s = stratum_find(st, nst, sb[i]);

		s->b[s->nb++] = i;
	}
	for (size_t s = 0; s < nst; s++) {
		if (!st[s].na || !st[s].nb)
			continue;
		ret->strata++;
		ret->na += st[s].na;
		ret->nb += st[s].nb;
		for (size_t k = 0; k < st[s].na; k++) {
			treated[nt] = st[s].a[k];
			tstratum[nt++] = s;
		}
	}
	if (!ret->strata) {
		r = -ENODATA;
		goto out;
	}

	ret->estimate = did_once(st, nst, treated, nt, tstratum, a, b, NULL);
	rng_init(&rng, seed);
	for (unsigned int k = 0; k < replicates; k++)
		reps[k] = did_once(st, nst, treated, nt, tstratum, a, b, &rng);
	percentile_ci(reps, replicates, level, &ret->ci);
out:
	free(reps);
	free(tstratum);
	free(treated);
	free(ib);
	free(ia);
	free(st);
	return r;
}
