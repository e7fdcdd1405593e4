// SPDX-License-Identifier: GPL-2.0
/*
 * The spike rule of daemon/spike.c on readings made here: a steady
 * baseline with noise judges nothing, a jump above spike_factor times the
 * median and above the floor is one spike naming its counter, a jump under
 * the floor or under the factor is none, nothing is judged before
 * SPIKE_MIN_HISTORY readings or with factor 0, and a storm that lasts
 * becomes the baseline. Then one real reading of this machine's files.
 */
#include <errno.h>
#include <unistd.h>

#include "spike.h"
#include "test.h"

#define S 1000000000LL

struct feeder {
	struct spike_watch *w;
	struct spike_reading r;
};

/* One reading dt_s after the last, each counter grown by rate * dt_s. */
static int feed(struct feeder *f, const double rate[NR_SPIKE_COUNTERS], double dt_s, double factor,
		double min_rate, struct spike_hit *hit)
{
	f->r.mono_ns += (int64_t)(dt_s * S);
	for (int c = 0; c < NR_SPIKE_COUNTERS; c++)
		f->r.v[c] += (uint64_t)(rate[c] * dt_s);
	f->r.present = (1u << NR_SPIKE_COUNTERS) - 1;
	return spike_watch_feed(f->w, &f->r, factor, min_rate, 2, hit);
}

static void test_rule(void)
{
	struct feeder f = { spike_watch_new(), { .mono_ns = 1000 * S } };
	double base[NR_SPIKE_COUNTERS] = { 2000, 100, 50 }, r[NR_SPIKE_COUNTERS];
	struct spike_hit hit = {};
	int spikes = 0;

	CHECK(f.w);
	if (!f.w)
		return;
	/* The first reading has no rate; a storm in the first readings is
	 * not judged: no history yet. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_CTXT] = 1e7;
	for (int i = 0; i <= SPIKE_MIN_HISTORY; i++)
		spikes += feed(&f, i < 2 ? base : r, 1, 8, 1000, &hit) == 1;
	CHECK_INT(spikes, ==, 0);
	CHECK(spike_watch_ready(f.w));
	/* A noisy steady baseline, long enough to flush the storm out of
	 * the median: nothing (+-50 %, within the factor 8). */
	for (int i = 0; i < 3 * SPIKE_HISTORY; i++) {
		for (int c = 0; c < NR_SPIKE_COUNTERS; c++)
			r[c] = base[c] * (i % 3 == 0 ? 1.5 : i % 3 == 1 ? 0.5 : 1);
		spikes += feed(&f, r, 1, 8, 1000, &hit) == 1;
	}
	CHECK_INT(spikes, ==, 0);

	/* Under the floor: TLB shootdowns 100/s -> 1500/s is 15x the median
	 * but under 1000/s per CPU on 2 CPUs. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_TLB] = 1500;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);
	/* Over the floor, under the factor: ctxt 2000/s -> 12000/s is 6x. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_CTXT] = 12000;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);
	/* Both: TLB 100/s -> 50000/s, 500x its median, over 2000/s. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_TLB] = 50000;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 1);
	CHECK_INT(hit.counter, ==, SPIKE_TLB);
	CHECK(hit.rate > 49000 && hit.rate < 51000);
	CHECK(hit.median > 50 && hit.median < 150);
	CHECK_STR(spike_counter_name(hit.counter), "tlb_shootdowns");
	/* The rate is per second of the reading's own span: a late reading
	 * (3 s) of the baseline is no spike. */
	CHECK_INT(feed(&f, base, 3, 8, 1000, &hit), ==, 0);
	/* factor 0: off. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_CTXT] = 1e7;
	CHECK_INT(feed(&f, r, 1, 0, 1000, &hit), ==, 0);

	/* Two counters at once: the one furthest above its limit is named. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_CTXT] = 1e6;		/* 500x */
	r[SPIKE_PGACTIVATE] = 1e6;	/* 20000x */
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 1);
	CHECK_INT(hit.counter, ==, SPIKE_PGACTIVATE);

	/* A storm that lasts: spikes at first, then it is the baseline. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_CTXT] = 1e6;
	spikes = 0;
	for (int i = 0; i < SPIKE_HISTORY; i++)
		spikes += feed(&f, r, 1, 8, 1000, &hit) == 1;
	CHECK_INT(spikes, >=, 1);
	CHECK_INT(spikes, <=, SPIKE_HISTORY / 2 + 1);
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);

	/* A reading with ctxt only (the dearer files are read less often):
	 * TLB's rate at its next reading spans both, so no spike from the
	 * gap, and ctxt is judged alone meanwhile. */
	memcpy(r, base, sizeof(r));
	r[SPIKE_CTXT] = 1e6;
	for (int i = 0; i < SPIKE_HISTORY; i++)	/* ctxt's storm becomes its baseline */
		feed(&f, r, 1, 8, 1000, &hit);
	f.r.mono_ns += 3 * S;
	f.r.v[SPIKE_CTXT] += 3000000;
	f.r.present = 1u << SPIKE_CTXT;
	CHECK_INT(spike_watch_feed(f.w, &f.r, 8, 1000, 2, &hit), ==, 0);
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);
	/* ... and a TLB storm after it is still seen, named. */
	r[SPIKE_TLB] = 1e5;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 1);
	CHECK_INT(hit.counter, ==, SPIKE_TLB);

	/* A reading from the past is refused. */
	f.r.mono_ns -= 10 * S;
	CHECK_INT(spike_watch_feed(f.w, &f.r, 8, 1000, 2, &hit), ==, -EINVAL);
	spike_watch_free(f.w);
	spike_watch_free(NULL);
}

/* This machine's files: ctxt is read and grows. */
static void test_read(void)
{
	struct spike_watch *w = spike_watch_new();
	struct spike_reading a, b;

	CHECK(w);
	if (!w)
		return;
	CHECK_INT(spike_watch_read(w, &a), ==, 0);
	CHECK(a.present & (1u << SPIKE_CTXT));
	CHECK(a.present & (1u << SPIKE_PGACTIVATE));
	usleep(20000);	/* at least this process's own switch */
	CHECK_INT(spike_watch_read(w, &b), ==, 0);
	CHECK(b.v[SPIKE_CTXT] > a.v[SPIKE_CTXT]);
	CHECK(b.mono_ns > a.mono_ns);
	/* the dearer files every SPIKE_SLOW_EVERY readings only */
	CHECK(!(b.present & (1u << SPIKE_PGACTIVATE)));
	for (int i = 2; i < SPIKE_SLOW_EVERY; i++)
		CHECK_INT(spike_watch_read(w, &b), ==, 0);
	CHECK_INT(spike_watch_read(w, &b), ==, 0);
	CHECK(b.present & (1u << SPIKE_PGACTIVATE));
	spike_watch_free(w);
}

int main(void)
{
	RUN(test_rule);
	RUN(test_read);
	return test_failures ? 1 : 0;
}
