/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_WINDOW_H
#define MMHITMD_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Windowed recording. Between windows nothing of mmhitmd's is armed in
 * the kernel: no tracepoint, perf event or filter; the interval is read
 * from the counters the kernel keeps anyway (/proc/stat, /proc/vmstat,
 * /proc/interrupts, /proc/schedstat, lru_gen). Inside a window the
 * tracepoints are counted, the learning streams and the sched_switch
 * sample run, and the PMU samples. An interval's window is split into
 * slices, one at a random point of each equal stratum of the interval,
 * so that the slices' spread gives the sampling error of every count
 * scaled from them to the whole interval (stratified sampling in time).
 */

#define WINDOW_MAX_SLICES 64
/* A slice shorter than this costs more in arming than it tells. */
#define WINDOW_MIN_SLICE_NS (5 * 1000 * 1000LL)

struct window_slice {
	int64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
};

struct window_plan {
	size_t n;
	struct window_slice s[WINDOW_MAX_SLICES];
};

/*
 * Which intervals of a host take windows when only a share of the fleet
 * may be active. Interval slot k (its start divided by the interval) is
 * active when the host's phase u (from host_hash, uniform in [0, 1))
 * plus k * share crosses an integer: every host is active in exactly a
 * `share` of its slots, evenly spaced, and in any one slot a `share` of
 * the hosts is, since u is spread evenly over the fleet.
 */
bool window_slot_active(uint64_t host_hash, int64_t slot, double share);

/* A stable 64-bit hash of a host's identity (FNV-1a, then mixed). */
uint64_t window_host_hash(const char *id);

/*
 * Places n slices of slice_ns each in [from, to) (CLOCK_MONOTONIC), one
 * per equal stratum, at a uniform random offset inside it (rnd: a
 * random 64-bit generator state); a slice that would run past its
 * stratum's end wraps around to the stratum's start, as two pieces.
 * Fewer slices when the strata are too short to hold them; at most
 * WINDOW_MAX_SLICES / 2. Returns the number of pieces placed, in order.
 */
size_t window_plan_make(struct window_plan *p, int64_t from, int64_t to, size_t n,
			int64_t slice_ns, uint64_t *rnd);

/*
 * The estimate of a count over an interval of length total_ns from the
 * counts c[i] seen in slices of lengths len[i] (ns): the ratio estimator
 * total_ns * sum(c) / sum(len), and its variance. With two slices or
 * more the variance comes from the spread of the slices' rates, with the
 * finite-population correction (1 - armed share), widened so that a
 * normal 95 % interval from it is as wide as Student's t for that many
 * slices; it is never taken below the Poisson variance of the count.
 * One slice tells nothing of the spread between slices: its variance is
 * value^2 (1 - armed share), a standard error the size of the estimate.
 */
struct window_estimate {
	double value;
	double variance;
};
struct window_estimate window_estimate(const uint64_t *c, const int64_t *len, size_t n,
				       int64_t total_ns);

/* xorshift64*: the daemon's cheap random numbers. */
uint64_t window_random(uint64_t *state);

#endif
