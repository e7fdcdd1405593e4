// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdlib.h>
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

int64_t window_plan_delay(struct window_plan *p, size_t i, int64_t at)
{
	int64_t moved = 0;

	for (size_t k = i; k < p->n; k++) {
		int64_t by = at - p->s[k].start_ns;

		if (by <= 0)
			break;
		if (k == i)
			moved = by;
		p->s[k].start_ns += by;
		p->s[k].end_ns += by;
		at = p->s[k].end_ns;
	}
	return moved;
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
	/* A Poisson count: the floor of its uncertainty. None counted is
	 * no proof of none (a rate of one per armed time reads 0 a third of
	 * the time): the floor of one event. */
	poisson = (sum_c > 0 ? sum_c : 1) * scale * scale;
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

void window_prices_add(struct window_prices *p, int64_t ns)
{
	if (ns < 0)
		return;
	p->v[p->next] = ns;
	p->next = (p->next + 1) % WINDOW_PRICES;
	if (p->n < WINDOW_PRICES)
		p->n++;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int64_t window_prices_median(const struct window_prices *p)
{
	int64_t v[WINDOW_PRICES];

	if (!p->n)
		return -1;
	memcpy(v, p->v, p->n * sizeof(*v));
	qsort(v, p->n, sizeof(*v), cmp_i64);
	/* An even count: the lower middle, the cheaper guess of two. */
	return v[(p->n - 1) / 2];
}

static double plan_cost(const struct window_cost *c, size_t n, int64_t armed, bool learn)
{
	double fixed = learn ? c->learn_ns + (double)(n - 1) * c->slice_ns : (double)n * c->slice_ns;

	return fixed + c->per_armed * (double)armed;
}

/* The most slices and armed time under limit, n and armed at most. */
static bool fit(const struct window_cost *c, double limit, size_t n, int64_t armed, bool learn,
		struct window_budget *out)
{
	double fixed1 = plan_cost(c, 1, 0, learn);
	int64_t a;

	out->n = n;
	out->armed_ns = armed;
	out->learn = learn;
	out->shortened = false;
	out->cost_ns = plan_cost(c, n, armed, learn);
	if (out->cost_ns <= limit)
		return true;
	out->shortened = true;
	while (n > 1 && plan_cost(c, n, (int64_t)n * WINDOW_MIN_SLICE_NS, learn) > limit)
		n--;
	/* With no price per armed ns, only the slices' own can be cut. */
	if (c->per_armed > 0)
		a = (int64_t)((limit - (fixed1 + (double)(n - 1) * c->slice_ns)) / c->per_armed);
	else
		a = fixed1 + (double)(n - 1) * c->slice_ns <= limit ? armed : 0;
	if (a > armed)
		a = armed;
	out->n = n;
	out->armed_ns = a;
	if (a < WINDOW_MIN_SLICE_NS) {
		out->n = 1;
		out->armed_ns = 0;
		out->cost_ns = plan_cost(c, 1, WINDOW_MIN_SLICE_NS, learn);
		return false;
	}
	out->cost_ns = plan_cost(c, n, a, learn);
	return true;
}

bool window_budget_plan(const struct window_cost *c, double budget, double avail, size_t n,
			int64_t armed_ns, bool learn, struct window_budget *out)
{
	memset(out, 0, sizeof(*out));
	if (!n || armed_ns <= 0)
		return false;
	if (learn && fit(c, avail, n, armed_ns, true, out))
		return true;
	/* Saving for the learning slice, unless no balance could ever pay
	 * it: half of this interval's budget at most. */
	if (learn && plan_cost(c, 1, WINDOW_MIN_SLICE_NS, true) > budget * WINDOW_SAVE_MAX)
		learn = false;
	else if (learn && avail > budget / 2)
		avail = budget / 2;
	/* Not as asked: learning wanted, and none. */
	if (!fit(c, avail, n, armed_ns, false, out)) {
		out->saving = learn;
		return false;
	}
	out->saving = learn;
	return true;
}

double window_balance_cap(const struct window_cost *c, double budget, bool learn)
{
	double want = plan_cost(c, 1, WINDOW_MIN_SLICE_NS, learn);

	if (learn && want > budget * WINDOW_SAVE_MAX)
		want = plan_cost(c, 1, WINDOW_MIN_SLICE_NS, false);
	if (want > budget * WINDOW_SAVE_MAX)
		want = 0;
	want += budget;
	return want > WINDOW_BALANCE_MAX * budget ? want : WINDOW_BALANCE_MAX * budget;
}

double window_balance_after(double balance, double budget, double spent, double cap)
{
	balance += budget - spent;
	if (balance < -budget)
		return -budget;
	return balance > cap ? cap : balance;
}
