// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <string.h>

#include "window.h"

uint64_t window_random(uint64_t *state)
{
	uint64_t x = *state ?: 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

uint64_t window_host_hash(const char *id)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *p = (const unsigned char *)id; p && *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	/* FNV's low bits mix poorly: finish like splitmix64. */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

bool window_slot_active(uint64_t host_hash, int64_t slot, double share)
{
	double u = (double)(host_hash >> 11) / (double)(1ULL << 53);

	if (share >= 1)
		return true;
	if (share <= 0)
		return false;
	/* floor() of doubles: exact enough for 2^40 slots at any share. */
	return floor(u + (double)(slot + 1) * share) > floor(u + (double)slot * share);
}

size_t window_plan_make(struct window_plan *p, int64_t from, int64_t to, size_t n,
			int64_t slice_ns, uint64_t *rnd)
{
	int64_t stratum;

	memset(p, 0, sizeof(*p));
	if (n > WINDOW_MAX_SLICES / 2)
		n = WINDOW_MAX_SLICES / 2;
	if (to <= from || !n || slice_ns <= 0)
		return 0;
	/* As many strata as can hold a slice each. */
	while (n > 1 && (to - from) / (int64_t)n < slice_ns)
		n--;
	stratum = (to - from) / (int64_t)n;
	if (stratum < slice_ns)
		slice_ns = stratum;
	for (size_t i = 0; i < n; i++) {
		int64_t base = from + (int64_t)i * stratum;
		int64_t off = (int64_t)(window_random(rnd) % (uint64_t)stratum);
		int64_t over = off + slice_ns - stratum;

		/*
		 * Wrapped around inside the stratum: every instant of it is
		 * then armed with the same probability (slice / stratum), the
		 * stratum's edges as often as its middle.
		 */
		if (over > 0) {
			p->s[p->n++] = (struct window_slice){ base, base + over };
			p->s[p->n++] = (struct window_slice){ base + off, base + stratum };
		} else {
			p->s[p->n++] = (struct window_slice){ base + off, base + off + slice_ns };
		}
	}
	return p->n;
}

/* (t_0.975(df) / z_0.975)^2 */
static double t_inflation(size_t df)
{
	static const double t975[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	};
	double t = df < sizeof(t975) / sizeof(t975[0]) ? t975[df] : 1.96 + 2.4 / (double)df;

	return df ? (t / 1.96) * (t / 1.96) : 1;
}

struct window_estimate window_estimate(const uint64_t *c, const int64_t *len, size_t n,
				       int64_t total_ns)
{
	struct window_estimate e = { 0, 0 };
	double sum_c = 0, sum_len = 0, mean, ss = 0, f, scale, poisson;

	for (size_t i = 0; i < n; i++) {
		sum_c += (double)c[i];
		sum_len += (double)len[i];
	}
	if (sum_len <= 0 || total_ns <= 0)
		return e;
	scale = (double)total_ns / sum_len;
	e.value = sum_c * scale;
	/* A Poisson count: the floor of its uncertainty. */
	poisson = sum_c * scale * scale;
	f = sum_len / (double)total_ns;
	if (f >= 1) {
		e.variance = 0;		/* counted all along */
		return e;
	}
	if (n < 2) {
		/*
		 * One slice says nothing of how the rate moves between
		 * slices: a 25 ms slice under a bursty load read 145,563
		 * switches for an interval the kernel counted 311,504 in,
		 * 31 Poisson standard errors off. Take a coefficient of
		 * variation of 1 between slices instead: an interval as wide
		 * as the estimate itself (what the stored variance then says
		 * is "about this order"), never below Poisson.
		 */
		e.variance = e.value * e.value * (1 - f);
		if (e.variance < poisson)
			e.variance = poisson;
		return e;
	}
	/* The slices' rates (per ns), each weighted by its length. */
	mean = sum_c / sum_len;
	for (size_t i = 0; i < n; i++) {
		double r = len[i] > 0 ? (double)c[i] / (double)len[i] : 0;

		ss += (double)len[i] * (r - mean) * (r - mean);
	}
	/* Var(total) = T^2 (1 - f) s^2 / n, s^2 the rate variance, made
	 * wider by (t(n-1) / 1.96)^2: with few slices s^2 is itself
	 * uncertain, and a normal 95 % interval from the stored variance
	 * must have the width of Student's. */
	e.variance = (double)total_ns * (double)total_ns * (1 - f) *
		     (ss / sum_len * (double)n / (double)(n - 1)) / (double)n;
	e.variance *= t_inflation(n - 1);
	if (e.variance < poisson * (1 - f))
		e.variance = poisson * (1 - f);
	return e;
}
