// SPDX-License-Identifier: GPL-2.0
/*
 * The merge of per-CPU ring records into one stream (daemon/stream.c),
 * driven as stream_drain() drives it but from synthetic CPUs: a busy CPU
 * whose reading stops at the page cap must not be overtaken by a quiet
 * CPU's later records; every record is fed once, in timestamp order, or
 * counted as dropped; the held array is bounded and shrinks after a storm.
 */
#include "learn.h"
#include "log.h"
#include "stream.h"
#include "test.h"

struct fed {
	int64_t ts[8192];
	size_t n;
	size_t out_of_order;
	size_t texts;		/* records fed with text "x" */
};

static void collect(void *ctx, const struct learn_event *ev)
{
	struct fed *f = ctx;

	if (ev->text && strcmp(ev->text, "x") == 0)
		f->texts++;
	if (f->n && ev->ts_ns < f->ts[f->n - 1])
		f->out_of_order++;
	if (f->n < sizeof(f->ts) / sizeof(f->ts[0]))
		f->ts[f->n++] = ev->ts_ns;
}

/* A CPU's ring: records at stamps[0..n), read from pos on. */
struct cpu {
	const int64_t *stamps;
	size_t n, pos;
};

/* One drain: at most cap records per CPU (the page cap), the way
 * ring_read() reads, then the feed up to watermark. */
static size_t drain(struct stream_merge *m, struct cpu *cpus, size_t ncpu, size_t cap,
		    int64_t watermark, bool final, struct fed *f)
{
	for (size_t c = 0; c < ncpu; c++) {
		size_t read = 0;
		int64_t last = INT64_MIN;

		while (cpus[c].pos < cpus[c].n && (final || read < cap)) {
			struct learn_event ev = { .type = LEARN_LOCK, .ts_ns = cpus[c].stamps[cpus[c].pos] };

			ev.addr = (uint64_t)c;
			stream_merge_add(m, &ev, NULL, true);
			last = ev.ts_ns;
			cpus[c].pos++;
			read++;
		}
		if (read == cap && !final)
			stream_merge_cpu_capped(m, last);
	}
	return stream_merge_feed(m, watermark, 0, final, collect, f);
}

static int64_t busy[1000], quiet[40];

/* CPU 0 floods (a record every 1 ns), CPU 1 has one every 25 ns; the page
 * cap lets 100 records per CPU through a drain. */
static void test_order_under_cap(void)
{
	struct stream_merge *m = stream_merge_new(1 << 16);
	static struct fed f;
	struct cpu cpus[2] = { { busy, 1000, 0 }, { quiet, 40, 0 } };
	uint64_t dmain, dside;
	int drains = 0;

	CHECK(m != NULL);
	if (!m)
		return;
	for (int i = 0; i < 1000; i++)
		busy[i] = 1000 + i;
	for (int i = 0; i < 40; i++)
		quiet[i] = 1000 + i * 25;
	f.n = f.out_of_order = 0;
	/* the watermark (now) is past everything: only the cap holds back */
	while ((cpus[0].pos < cpus[0].n || cpus[1].pos < cpus[1].n) && drains < 100) {
		drain(m, cpus, 2, 100, 1000000, false, &f);
		drains++;
	}
	drain(m, cpus, 2, 100, 1000000, true, &f);
	CHECK_INT(drains, ==, 10);
	CHECK_INT(f.n, ==, 1040);
	CHECK_INT(f.out_of_order, ==, 0);
	CHECK_INT(stream_merge_held(m), ==, 0);
	stream_merge_take_dropped(m, &dmain, &dside);
	CHECK_INT(dmain, ==, 0);
	CHECK_INT(dside, ==, 0);
	stream_merge_free(m);
}

/* Records newer than the watermark wait for the next drain. */
static void test_watermark(void)
{
	struct stream_merge *m = stream_merge_new(64);
	static struct fed f;
	static const int64_t a[] = { 10, 30, 50 }, b[] = { 20, 40, 60 };
	struct cpu cpus[2] = { { a, 3, 0 }, { b, 3, 0 } };

	CHECK(m != NULL);
	if (!m)
		return;
	f.n = f.out_of_order = 0;
	CHECK_INT(drain(m, cpus, 2, 100, 35, false, &f), ==, 3);
	CHECK_INT(stream_merge_held(m), ==, 3);
	CHECK_INT(drain(m, cpus, 2, 100, 100, false, &f), ==, 3);
	CHECK_INT(f.n, ==, 6);
	CHECK_INT(f.out_of_order, ==, 0);
	stream_merge_free(m);
}

/* A storm: more records than max_held in one drain. The excess is
 * dropped and counted, by instance; the array never grows past the
 * bound and shrinks back once the storm is fed. */
static void test_storm_bounded(void)
{
	const size_t max = 4096;
	struct stream_merge *m = stream_merge_new(max);
	static struct fed f;
	uint64_t dmain, dside;
	size_t kept = 0;

	CHECK(m != NULL);
	if (!m)
		return;
	f.n = f.out_of_order = f.texts = 0;
	for (int i = 0; i < 5000; i++) {
		struct learn_event ev = { .type = LEARN_LOCK, .ts_ns = 5000 - i };

		/* the first 100 from the main instance, the rest the side's */
		kept += stream_merge_add(m, &ev, "x", i < 100);
	}
	CHECK_INT(kept, ==, max);
	CHECK_INT(stream_merge_held(m), ==, max);
	CHECK(stream_merge_capacity(m) <= max);
	stream_merge_take_dropped(m, &dmain, &dside);
	CHECK_INT(dmain, ==, 0);
	CHECK_INT(dside, ==, 5000 - max);
	/* from the main instance now, the array full: counted as its loss */
	{
		struct learn_event ev = { .type = LEARN_MM_FREE, .ts_ns = 1 };

		CHECK_INT(stream_merge_add(m, &ev, NULL, true), ==, 0);
		stream_merge_take_dropped(m, &dmain, &dside);
		CHECK_INT(dmain, ==, 1);
		CHECK_INT(dside, ==, 0);
	}
	CHECK_INT(stream_merge_feed(m, 100000, 0, false, collect, &f), ==, max);
	CHECK_INT(f.out_of_order, ==, 0);
	CHECK_INT(f.texts, ==, max);	/* each with its text */
	CHECK_INT(stream_merge_held(m), ==, 0);
	CHECK(stream_merge_capacity(m) <= 1024);
	stream_merge_free(m);
}

static int no_tgid(void *ctx, int32_t tid, int32_t *ret, bool *kthread)
{
	return -3;	/* -ESRCH */
}

static int no_comm(void *ctx, int32_t tgid, char *buf)
{
	return -3;
}

static struct fed wall;

static void feed_both(void *ctx, const struct learn_event *ev)
{
	collect(&wall, ev);
	learner_feed(ctx, ev);
}

/*
 * Two drains whose REALTIME - BOOTTIME differ: the first was preempted
 * between its two clock reads (or the clock stepped back after it), so its
 * offset is 600 ns too large. A fork's alloc, stamped just before the first
 * drain started, is held by it; the fork record, 50 ns later, is read by the
 * second. Ordered by the rings' clock, the alloc still comes first and the
 * child is learned; ordered by wall stamps taken at read time, the fork
 * came first and the mm stayed unbound (the flake in test-daemon.sh).
 */
static void test_drains_disagree_on_wall_time(void)
{
	const struct learn_proc none = { no_tgid, no_comm, NULL };
	const struct learn_limits lim = { .max_page_pairs = 1, .max_locks = 1 };
	const int64_t wall0 = 1700000000000000000LL;
	struct stream_merge *m = stream_merge_new(64);
	struct learner *l = learner_new(&lim, &none);
	struct learn_event alloc_ev = { .type = LEARN_MM_ALLOC, .ts_ns = 1500, .pid = 100,
					.addr = 0xffff888000100000ULL };
	struct learn_event fork_ev = { .type = LEARN_FORK, .ts_ns = 1550, .pid = 100, .pid2 = 200,
				       .comm = "parent" };
	struct learn_stats st;

	CHECK(m != NULL && l != NULL);
	if (!m || !l)
		goto out;
	wall.n = wall.out_of_order = 0;
	/* drain 1: started at 2000, so feeds up to 1000; the alloc waits */
	stream_merge_add(m, &alloc_ev, NULL, true);
	CHECK_INT(stream_merge_feed(m, 1000, wall0 + 600, false, feed_both, l), ==, 0);
	/* drain 2: started at 3000, its offset the true one */
	stream_merge_add(m, &fork_ev, NULL, true);
	CHECK_INT(stream_merge_feed(m, 2000, wall0, false, feed_both, l), ==, 2);
	CHECK_INT(wall.n, ==, 2);
	CHECK_INT(wall.out_of_order, ==, 0);
	/* wall time is the feeding drain's, for both */
	CHECK_INT(wall.ts[0], ==, wall0 + 1500);
	CHECK_INT(wall.ts[1], ==, wall0 + 1550);
	learner_get_stats(l, &st);
	CHECK_INT(st.mm_learned, ==, 1);
out:
	learner_free(l);
	stream_merge_free(m);
}

int main(void)
{
	log_set_max_level(LOG_ERR);
	RUN(test_order_under_cap);
	RUN(test_watermark);
	RUN(test_storm_bounded);
	RUN(test_drains_disagree_on_wall_time);
	return test_exit();
}
