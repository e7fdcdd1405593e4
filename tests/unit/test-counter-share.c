// SPDX-License-Identifier: GPL-2.0
/*
 * The multiplexing arithmetic of daemon/counters.c with synthetic perf
 * readings (value, time enabled, time running): a CPU's count is scaled
 * by enabled/running, a counter's total sums its CPUs over its
 * generations (CPUs that came online later, CPUs gone offline keeping
 * their last reading), and the share it ran is taken over what the
 * times grew by in the interval, not since the counter was opened.
 * Tracepoints never multiplex, so the real kernel can't make these
 * numbers here (no hardware PMU on the build VM, none under QEMU's TCG).
 */
#include <math.h>

#include "counters.h"
#include "log.h"
#include "test.h"

#define CHECK_NEAR(a, b) CHECK(fabs((a) - (b)) < 1e-12)

/* [generation][cpu] readings; ena 0: no such CPU in that generation. */
static struct counter_total sum(const struct counter_reading v[][4], size_t gens)
{
	struct counter_total t = {};

	for (size_t g = 0; g < gens; g++)
		for (size_t cpu = 0; cpu < 4; cpu++)
			if (v[g][cpu].ena)
				counter_total_add(&t, &v[g][cpu]);
	return t;
}

static double share(const struct counter_total *a, const struct counter_total *b)
{
	return counter_run_share(a->ena, a->run, b->ena, b->run);
}

static void test_scaled(void)
{
	/* ran all along, never ran, half the time, a third (rounded) */
	CHECK_INT(counter_scaled(&(struct counter_reading){ 100, 1000, 1000 }), ==, 100);
	CHECK_INT(counter_scaled(&(struct counter_reading){ 0, 1000, 0 }), ==, 0);
	CHECK_INT(counter_scaled(&(struct counter_reading){ 100, 1000, 500 }), ==, 200);
	CHECK_INT(counter_scaled(&(struct counter_reading){ 1, 3, 2 }), ==, 2);
	/* running is never above enabled; if a kernel says so, no scaling down */
	CHECK_INT(counter_scaled(&(struct counter_reading){ 100, 1000, 1001 }), ==, 100);
}

static void test_never_multiplexed(void)
{
	const struct counter_reading before[1][4] = { { { 10, 1000, 1000 }, { 20, 1000, 1000 } } };
	const struct counter_reading after[1][4] = { { { 60, 3000, 3000 }, { 90, 3000, 3000 } } };
	struct counter_total a = sum(before, 1), b = sum(after, 1);

	CHECK_INT(b.count, ==, 150);
	CHECK_NEAR(share(&a, &b), 1.0);
	/* nothing enabled in between (a disarmed interval): not scaled */
	CHECK_NEAR(share(&b, &b), 1.0);
	CHECK_NEAR(counter_run_share(0, 0, 0, 0), 1.0);
}

static void test_multiplexed_in_the_interval(void)
{
	/* Two CPUs, ran all along until the interval, then CPU 0 ran a
	 * quarter and CPU 1 three quarters of it. */
	const struct counter_reading before[1][4] = { { { 100, 1000, 1000 }, { 100, 1000, 1000 } } };
	const struct counter_reading after[1][4] = { { { 150, 3000, 1500 }, { 250, 3000, 2500 } } };
	struct counter_total a = sum(before, 1), b = sum(after, 1);

	/* (1500 - 1000 + 2500 - 1000) / (2 * 2000): half the interval, where
	 * the totals since opening say 4000 / 6000 */
	CHECK_NEAR(share(&a, &b), 0.5);
	CHECK_INT(b.count, ==, 300 + 300);	/* 150 * 3000 / 1500, 250 * 3000 / 2500 */
	CHECK_INT(b.ena, ==, 6000);
	CHECK_INT(b.run, ==, 4000);
}

static void test_generations(void)
{
	/* CPU 2 came online in the interval (generation 1, from zero) and
	 * ran 40 % of its 500 ns; CPU 1 went offline before it: its last
	 * reading stays, adding nothing to the interval. */
	const struct counter_reading before[2][4] = {
		{ { 10, 1000, 1000 }, { 10, 800, 800 } },
	};
	const struct counter_reading after[2][4] = {
		{ { 30, 2000, 2000 }, { 10, 800, 800 } },
		{ {}, {}, { 8, 500, 200 } },
	};
	struct counter_total a = sum(before, 1), b = sum(after, 2);

	CHECK_INT(b.count, ==, 30 + 10 + 20);
	/* (1000 + 0 + 200) / (1000 + 0 + 500) */
	CHECK_NEAR(share(&a, &b), 1200.0 / 1500.0);
}

static void test_reset(void)
{
	/* Windowed: every slice opens the counters anew, from zero; a total
	 * smaller than the last is counted from zero, like counter_delta(). */
	CHECK_NEAR(counter_run_share(5000, 5000, 1000, 250), 0.25);
	/* never ran while enabled */
	CHECK_NEAR(counter_run_share(0, 0, 1000, 0), 0.0);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	RUN(test_scaled);
	RUN(test_never_multiplexed);
	RUN(test_multiplexed_in_the_interval);
	RUN(test_generations);
	RUN(test_reset);
	return test_exit();
}
