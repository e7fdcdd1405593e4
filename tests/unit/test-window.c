// SPDX-License-Identifier: GPL-2.0
/*
 * Windowed recording's arithmetic: which intervals a host of a fleet
 * takes windows in, where the slices fall, and whether the estimate a
 * window gives for a whole interval is honest: unbiased, with a stated
 * variance whose 95 % intervals cover the truth about 95 % of the time,
 * on counts made here from known rates (steady, bursty and a trend).
 */
#include <math.h>
#include <stdbool.h>

#include "test.h"
#include "window.h"

#define MS 1000000LL
#define S 1000000000LL

/* Every host takes exactly share of its slots; a slot has share of hosts. */
static void test_fleet_share(void)
{
	static const double shares[] = { 1, 0.5, 0.25, 0.05, 0.01, 0.3333 };
	enum { HOSTS = 2000, SLOTS = 2000 };

	for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
		double share = shares[k];
		long per_slot_min = HOSTS, per_slot_max = 0;
		static long per_slot[SLOTS];

		memset(per_slot, 0, sizeof(per_slot));
		for (int h = 0; h < HOSTS; h++) {
			char name[32];
			uint64_t hash;
			long active = 0;
			int64_t last = -1, max_gap = 0;

			snprintf(name, sizeof(name), "host-%04d.example", h);
			hash = window_host_hash(name);
			for (int64_t slot = 1000000; slot < 1000000 + SLOTS; slot++) {
				if (!window_slot_active(hash, slot, share))
					continue;
				active++;
				per_slot[slot - 1000000]++;
				if (last >= 0 && slot - last > max_gap)
					max_gap = slot - last;
				last = slot;
			}
			/* exactly share of the slots, give or take the ends */
			CHECK(fabs((double)active - share * SLOTS) <= 1.0);
			/* evenly spaced: never a gap longer than 1/share + 1 */
			CHECK(max_gap <= (int64_t)(1 / share) + 1);
		}
		for (int s = 0; s < SLOTS; s++) {
			if (per_slot[s] < per_slot_min)
				per_slot_min = per_slot[s];
			if (per_slot[s] > per_slot_max)
				per_slot_max = per_slot[s];
		}
		/* Per slot a binomial share of the hosts: within 5 sd of it. */
		{
			double mean = share * HOSTS, sd = sqrt(HOSTS * share * (1 - share)) + 0.5;

			CHECK(per_slot_min >= mean - 5 * sd);
			CHECK(per_slot_max <= mean + 5 * sd);
		}
	}
	CHECK(!window_slot_active(window_host_hash("x"), 7, 0));
	CHECK(window_slot_active(window_host_hash("x"), 7, 1));
}

/* One slice per stratum, inside it, in order, of the asked length. */
static void test_plan(void)
{
	struct window_plan p;
	uint64_t rnd = 42;
	int64_t from = 1000 * S, to = from + 60 * S;

	/* How often each 10 ms bin of the interval is armed. */
	static int hits[6000];
	int lo = 1 << 30, hi = 0, wrapped = 0;

	for (int trial = 0; trial < 20000; trial++) {
		int64_t armed = 0;
		size_t n = window_plan_make(&p, from, to, 4, 250 * MS, &rnd);

		CHECK(n >= 4 && n <= 8);
		wrapped += n > 4;
		for (size_t i = 0; i < p.n; i++) {
			int stratum = (int)((p.s[i].start_ns - from) / (15 * S));

			armed += p.s[i].end_ns - p.s[i].start_ns;
			CHECK(p.s[i].start_ns < p.s[i].end_ns);
			CHECK(p.s[i].end_ns <= from + (int64_t)(stratum + 1) * 15 * S);
			CHECK(i == 0 || p.s[i - 1].end_ns <= p.s[i].start_ns);
			for (int64_t b = (p.s[i].start_ns - from) / (10 * MS);
			     b < (p.s[i].end_ns - from) / (10 * MS); b++)
				hits[b]++;
		}
		CHECK_INT(armed, ==, 1 * S);
	}
	CHECK(wrapped > 0);
	/* Every instant equally likely: 20000 * 250/15000 = 333 per bin. */
	for (int b = 0; b < 6000; b++) {
		lo = hits[b] < lo ? hits[b] : lo;
		hi = hits[b] > hi ? hits[b] : hi;
	}
	printf("armed per 10 ms bin: %d .. %d of 20000 (expected 333)\n", lo, hi);
	CHECK(lo > 333 - 6 * 19 && hi < 333 + 6 * 19);
	/* Too short an interval for four: as many as fit, none overlapping. */
	CHECK(window_plan_make(&p, from, from + 600 * MS, 4, 250 * MS, &rnd) >= 2);
	CHECK(p.s[0].end_ns <= p.s[1].start_ns);
	CHECK(p.s[p.n - 1].end_ns <= from + 600 * MS);
	/* Shorter than one slice: one slice, the whole of it. */
	CHECK(window_plan_make(&p, from, from + 100 * MS, 4, 250 * MS, &rnd) <= 2);
	CHECK_INT(p.s[p.n - 1].end_ns - p.s[0].start_ns, ==, 100 * MS);
	CHECK_INT(window_plan_make(&p, from, from, 4, 250 * MS, &rnd), ==, 0);
}

/*
 * A slice that opens late keeps its length, and pushes on only the slices
 * it would overlap: the armed time stays as planned.
 */
static void test_plan_delay(void)
{
	struct window_plan p = { .n = 4, .s = {
		{ 100 * MS, 200 * MS }, { 250 * MS, 300 * MS },
		{ 400 * MS, 500 * MS }, { 900 * MS, 1000 * MS } } };

	/* On time, or asked for earlier than planned: nothing moves. */
	CHECK_INT(window_plan_delay(&p, 0, 100 * MS), ==, 0);
	CHECK_INT(window_plan_delay(&p, 1, 10 * MS), ==, 0);
	CHECK_INT(p.s[1].start_ns, ==, 250 * MS);
	/* Slice 0 opens 130 ms late: slices 1 and 2 follow it, 3 stays. */
	CHECK_INT(window_plan_delay(&p, 0, 230 * MS), ==, 130 * MS);
	CHECK_INT(p.s[0].start_ns, ==, 230 * MS);
	CHECK_INT(p.s[0].end_ns, ==, 330 * MS);
	CHECK_INT(p.s[1].start_ns, ==, 330 * MS);
	CHECK_INT(p.s[1].end_ns, ==, 380 * MS);
	CHECK_INT(p.s[2].start_ns, ==, 400 * MS);
	CHECK_INT(p.s[3].start_ns, ==, 900 * MS);
	/* The last one past where the plan ended: still its length. */
	CHECK_INT(window_plan_delay(&p, 3, 1950 * MS), ==, 1050 * MS);
	CHECK_INT(p.s[3].end_ns - p.s[3].start_ns, ==, 100 * MS);
	for (size_t i = 1; i < p.n; i++)
		CHECK(p.s[i - 1].end_ns <= p.s[i].start_ns);
}

/* Counted all along: exact. One slice: as uncertain as it is large. */
static void test_estimate_edges(void)
{
	uint64_t c[2] = { 100, 300 };
	int64_t len[2] = { 1 * S, 1 * S };
	struct window_estimate e;

	e = window_estimate(c, len, 2, 2 * S);
	CHECK(fabs(e.value - 400) < 1e-9);
	CHECK(e.variance == 0);
	e = window_estimate(c, len, 1, 10 * S);
	CHECK(fabs(e.value - 1000) < 1e-9);
	CHECK(fabs(e.variance - 1000.0 * 1000 * 0.9) < 1e-6);
	/* ... and never below Poisson: 4 events in 9.9 of 10 s */
	c[0] = 4;
	len[0] = 99 * S / 10;
	e = window_estimate(c, len, 1, 10 * S);
	CHECK(fabs(e.variance - e.value * 10.0 / 9.9) < 1e-9);
	e = window_estimate(c, len, 0, 10 * S);
	CHECK(e.value == 0 && e.variance == 0);
	/* None counted in a tenth of the interval: 0, but not surely 0. */
	c[0] = c[1] = 0;
	len[0] = len[1] = S / 2;
	e = window_estimate(c, len, 2, 10 * S);
	CHECK(e.value == 0);
	CHECK(fabs(e.variance - 10.0 * 10.0 * 0.9) < 1e-6);
	/* ... counted all along, it is. */
	e = window_estimate(c, len, 2, 1 * S);
	CHECK(e.value == 0 && e.variance == 0);
}

static double uniform(uint64_t *rnd)
{
	return (double)(window_random(rnd) >> 11) / (double)(1ULL << 53);
}

static uint64_t poisson(double mean, uint64_t *rnd)
{
	/* Normal approximation above 50: good enough for a coverage test. */
	if (mean > 50) {
		double u1 = uniform(rnd) + 1e-300, u2 = uniform(rnd);
		double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		double v = mean + sqrt(mean) * z;

		return v < 0 ? 0 : (uint64_t)(v + 0.5);
	}
	{
		double l = exp(-mean), p = 1;
		uint64_t k = 0;

		do {
			k++;
			p *= uniform(rnd);
		} while (p > l);
		return k - 1;
	}
}

/*
 * A 60 s interval of 10 ms bins with a known rate per bin, four 250 ms
 * slices from the planner: the estimate's 95 % interval must cover the
 * true total in 90-99 % of 2000 intervals, and the mean error be small.
 */
static void coverage(const char *name, double (*rate)(int bin, uint64_t *rnd, double *state),
		     bool conservative_ok)
{
	enum { BINS = 6000, TRIALS = 2000 };
	const int64_t bin_ns = 10 * MS;
	static uint64_t counts[BINS];
	uint64_t rnd = 7;
	int covered = 0;
	double err = 0, total = 0;

	for (int t = 0; t < TRIALS; t++) {
		struct window_plan p;
		uint64_t c[WINDOW_MAX_SLICES] = {}, truth = 0;
		int64_t len[WINDOW_MAX_SLICES];
		struct window_estimate e;
		double state = 0;

		for (int b = 0; b < BINS; b++) {
			counts[b] = poisson(rate(b, &rnd, &state), &rnd);
			truth += counts[b];
		}
		window_plan_make(&p, 0, BINS * bin_ns, 4, 250 * MS, &rnd);
		for (size_t i = 0; i < p.n; i++) {
			len[i] = p.s[i].end_ns - p.s[i].start_ns;
			for (int64_t b = p.s[i].start_ns / bin_ns; b < p.s[i].end_ns / bin_ns; b++)
				c[i] += counts[b];
		}
		e = window_estimate(c, len, p.n, BINS * bin_ns);
		if (fabs(e.value - (double)truth) <= 1.96 * sqrt(e.variance))
			covered++;
		err += e.value - (double)truth;
		total += (double)truth;
	}
	printf("%-8s coverage %.1f %%, bias %+.3f %% of the total\n", name,
	       100.0 * covered / TRIALS, 100 * err / total);
	CHECK(covered >= TRIALS * (conservative_ok ? 85 : 92) / 100);
	/* Stratified slices vary less than the formula assumes when the
	 * rate has a trend: conservative there, never overconfident. */
	if (!conservative_ok)
		CHECK(covered <= TRIALS * 99 / 100);
	CHECK(fabs(err / total) < 0.01);
}

static double steady(int bin, uint64_t *rnd, double *state)
{
	(void)bin; (void)rnd; (void)state;
	return 400;	/* 40k events/s */
}

/* Bursts: on/off periods of random length, 10x the rate when on. */
static double bursty(int bin, uint64_t *rnd, double *state)
{
	(void)bin;
	if (uniform(rnd) < 0.01)
		*state = *state ? 0 : 1;
	return *state ? 2000 : 200;
}

/* A load that doubles over the interval. */
static double trend(int bin, uint64_t *rnd, double *state)
{
	(void)rnd; (void)state;
	return 100 + 100.0 * bin / 6000;
}

static void test_estimate_coverage(void)
{
	coverage("steady", steady, false);
	coverage("bursty", bursty, true);
	coverage("trend", trend, true);
}

/* The median of the last WINDOW_PRICES prices: one outlier moves nothing. */
static void test_prices(void)
{
	struct window_prices p = { 0 };

	CHECK_INT(window_prices_median(&p), ==, -1);
	window_prices_add(&p, -5);		/* not a price */
	CHECK_INT(window_prices_median(&p), ==, -1);
	window_prices_add(&p, 10 * MS);
	CHECK_INT(window_prices_median(&p), ==, 10 * MS);
	window_prices_add(&p, 40 * MS);
	CHECK_INT(window_prices_median(&p), ==, 10 * MS);	/* the cheaper middle */
	window_prices_add(&p, 12 * MS);
	window_prices_add(&p, 11 * MS);
	window_prices_add(&p, 13 * MS);
	CHECK_INT(window_prices_median(&p), ==, 12 * MS);
	/* Full: the oldest (10) goes; a second outlier still moves little. */
	window_prices_add(&p, 50 * MS);
	CHECK_INT(window_prices_median(&p), ==, 13 * MS);
	for (int i = 0; i < WINDOW_PRICES; i++)
		window_prices_add(&p, 2 * MS);
	CHECK_INT(window_prices_median(&p), ==, 2 * MS);
}

/* Each plan costs at most what is available, by the model. */
static void test_budget_plan(void)
{
	const double budget = 24.0 * MS;
	struct window_cost cheap = { 5.0 * MS, 1.0 * MS, 0.01 };
	struct window_cost dear = { 60.0 * MS, 1.2 * MS, 0.017 };
	struct window_cost never = { 24.0 * MS * (WINDOW_SAVE_MAX + 2), 1.0 * MS, 0.01 };
	struct window_budget b;

	/* As asked: 5 + 3 x 1 + 1 s x 1 % = 18 ms. */
	CHECK(window_budget_plan(&cheap, budget, budget, 4, S, true, &b));
	CHECK(b.learn && !b.shortened && !b.saving);
	CHECK_INT(b.n, ==, 4);
	CHECK_INT(b.armed_ns, ==, S);
	CHECK(fabs(b.cost_ns - 18.0 * MS) < 1);
	/* Shorter under a smaller budget, learning kept. */
	CHECK(window_budget_plan(&cheap, 12.0 * MS, 12.0 * MS, 4, S, true, &b));
	CHECK(b.learn && b.shortened && b.cost_ns <= 12.0 * MS + 1);
	CHECK(b.armed_ns < S && b.armed_ns >= (int64_t)b.n * WINDOW_MIN_SLICE_NS);
	/* A learning slice the interval cannot pay: none, half the budget. */
	CHECK(window_budget_plan(&dear, budget, budget, 4, S, true, &b));
	CHECK(!b.learn && b.saving && b.shortened);
	CHECK(b.cost_ns <= budget / 2 + 1);
	/* ... which the balance pays once it holds enough. */
	CHECK(window_budget_plan(&dear, budget, budget + 50.0 * MS, 4, S, true, &b));
	CHECK(b.learn && b.cost_ns <= budget + 50.0 * MS + 1);
	/* No learning wanted: the whole budget for counting. */
	CHECK(window_budget_plan(&dear, budget, budget, 4, S, false, &b));
	CHECK(!b.learn && !b.saving && b.cost_ns > budget / 2 && b.cost_ns <= budget + 1);
	/* Dearer than any balance: never saved for, the budget counts. */
	CHECK(window_budget_plan(&never, budget, budget, 4, S, true, &b));
	CHECK(!b.learn && !b.saving && b.cost_ns > budget / 2 && b.cost_ns <= budget + 1);
	/* Overspent: nothing fits, and the plan says what one slice costs. */
	CHECK(!window_budget_plan(&cheap, budget, 0, 4, S, true, &b));
	CHECK(b.cost_ns > 0);
	CHECK(!window_budget_plan(&cheap, budget, budget, 0, S, true, &b));
}

/*
 * Over a run, the balance keeps the average at the budget and still lets
 * the learning slice in, even one dearer than two intervals' budgets;
 * with prices that swing (a slow host's cross-CPU calls) around the
 * model's, the average stays within the swing.
 */
static void test_budget_run(void)
{
	const double budget = 24.0 * MS;
	struct window_cost model = { 60.0 * MS, 1.2 * MS, 0.017 };
	uint64_t rnd = 7;
	double balance = 0, spent = 0;
	int learned = 0, longest_gap = 0, gap = 0, windows = 0;
	const int runs = 600;

	for (int i = 0; i < runs; i++) {
		struct window_budget b;
		/* The real price: the model's times 0.5 .. 1.5. */
		double swing = 0.5 + (double)(window_random(&rnd) % 1000) / 1000.0;
		double cost = 0;

		if (window_budget_plan(&model, budget, budget + balance, 4, S, true, &b)) {
			cost = b.cost_ns * swing;
			windows++;
		}
		spent += cost;
		balance = window_balance_after(balance, budget, cost,
					       window_balance_cap(&model, budget, true));
		if (b.learn) {
			learned++;
			gap = 0;
		} else if (++gap > longest_gap) {
			longest_gap = gap;
		}
	}
	printf("budget run: %d windows of %d intervals, %d learning, longest gap %d, "
	       "average %.1f ms of %.1f\n", windows, runs, learned, longest_gap, spent / runs / MS,
	       budget / MS);
	CHECK(spent / runs <= budget * 1.05);
	CHECK(spent / runs >= budget * 0.5);
	CHECK(windows >= runs * 9 / 10);
	CHECK(learned >= runs / 8);
	CHECK_INT(longest_gap, <=, 8);
	CHECK(balance <= WINDOW_BALANCE_MAX * budget && balance >= -budget);
}

/*
 * One interval of a daemon's budget keeping, as mmhitmd does it: plan by
 * the median of the prices seen, pay the real price, price the slice
 * taken by its kind, account the balance under its cap.
 */
struct keeper {
	struct window_prices learn, slice;
	double balance, spent;
	int windows, learned, longest_gap, gap;
};

static void keeper_interval(struct keeper *k, double budget, double real_learn, double real_slice)
{
	int64_t learn = window_prices_median(&k->learn), slice = window_prices_median(&k->slice);
	/* mmhitmd's budget_model(): a price not seen yet is the other's */
	struct window_cost c = { (double)(learn >= 0 ? learn : slice),
				 (double)(slice >= 0 ? slice : learn), 0 };
	struct window_budget b;
	double cost = 0;

	if (window_budget_plan(&c, budget, budget + k->balance, 1, 250 * MS, true, &b)) {
		cost = b.learn ? real_learn : real_slice;
		window_prices_add(b.learn ? &k->learn : &k->slice, (int64_t)cost);
		k->windows++;
	}
	k->spent += cost;
	k->balance = window_balance_after(k->balance, budget, cost,
					  window_balance_cap(&c, budget, true));
	if (b.learn && cost > 0) {
		k->learned++;
		k->gap = 0;
	} else if (++k->gap > k->longest_gap) {
		k->longest_gap = k->gap;
	}
}

/*
 * The soak of 2026-12-02: 1 s intervals at the default budget on two
 * CPUs (4 ms), a learning slice that costs 60 ms under load, and one
 * that was once priced at 60 ms as a counting slice. Neither may shut
 * the windows off for good: the balance saves for the dear slice, which
 * is then taken, priced anew and, when the load is gone and it costs
 * 20 ms, taken as often as that price allows; counting slices (1.5 ms)
 * go on meanwhile, and the average stays within the budget throughout.
 */
static void test_budget_dear(void)
{
	const double budget = 4.0 * MS;
	struct keeper k = { 0 };
	int runs = 900, learned;

	/* as the first window leaves them: both kinds priced */
	window_prices_add(&k.learn, 60 * MS);
	window_prices_add(&k.slice, 3 * MS / 2);
	for (int i = 0; i < runs; i++)
		keeper_interval(&k, budget, 60.0 * MS, 1.5 * MS);
	printf("dear learning: %d windows of %d intervals, %d learning, longest gap %d, "
	       "average %.2f ms of %.1f\n", k.windows, runs, k.learned, k.longest_gap,
	       k.spent / runs / MS, budget / MS);
	CHECK(k.spent / runs <= budget * 1.02);
	/* Saving at half the budget: one 60 ms slice in about 30 intervals. */
	CHECK_INT(k.learned, >=, runs / 40);
	CHECK_INT(k.longest_gap, <=, 40);
	CHECK(k.windows >= runs / 2);

	/* The load is gone: the learning slice costs 20 ms, and the median
	 * follows once three such are seen. */
	learned = k.learned;
	k.spent = 0;
	for (int i = 0; i < runs; i++)
		keeper_interval(&k, budget, 20.0 * MS, 1.5 * MS);
	printf("cheaper learning: %d learning in %d intervals, average %.2f ms\n",
	       k.learned - learned, runs, k.spent / runs / MS);
	CHECK_INT(window_prices_median(&k.learn), ==, 20 * MS);
	CHECK_INT(k.learned - learned, >=, runs / 15);
	CHECK(k.spent / runs <= budget * 1.02);

	/* A counting slice priced at 60 ms (and five of them, the whole
	 * median) with no learning wanted: windows still come, less often. */
	memset(&k, 0, sizeof(k));
	for (int i = 0; i < WINDOW_PRICES; i++)
		window_prices_add(&k.slice, 60 * MS);
	for (int i = 0; i < runs; i++) {
		struct window_cost c = { (double)window_prices_median(&k.slice),
					 (double)window_prices_median(&k.slice), 0 };
		struct window_budget b;
		double cost = 0;

		if (window_budget_plan(&c, budget, budget + k.balance, 1, 250 * MS, false, &b)) {
			cost = 3.0 * MS;
			window_prices_add(&k.slice, (int64_t)cost);
			k.windows++;
		}
		k.spent += cost;
		k.balance = window_balance_after(k.balance, budget, cost,
						 window_balance_cap(&c, budget, false));
	}
	printf("dear counting slice: %d windows of %d intervals\n", k.windows, runs);
	CHECK_INT(window_prices_median(&k.slice), ==, 3 * MS);
	CHECK(k.windows >= runs * 9 / 10);
}

int main(void)
{
	RUN(test_fleet_share);
	RUN(test_plan);
	RUN(test_plan_delay);
	RUN(test_estimate_edges);
	RUN(test_estimate_coverage);
	RUN(test_prices);
	RUN(test_budget_plan);
	RUN(test_budget_run);
	RUN(test_budget_dear);
	return test_failures ? 1 : 0;
}
