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
 * Moves slice i to start at `at` when it was planned to start earlier,
 * keeping its length, and each later slice as far as it would overlap the
 * one before it: a slice that opens late (the last one's disarming not
 * over, the main loop woken late, its arming slow) is counted for as long
 * as planned, and the interval's armed time stays as planned while the
 * slices fit before its end. Returns how far slice i moved (ns; 0: not).
 */
int64_t window_plan_delay(struct window_plan *p, size_t i, int64_t at);

/*
 * The estimate of a count over an interval of length total_ns from the
 * counts c[i] seen in slices of lengths len[i] (ns): the ratio estimator
 * total_ns * sum(c) / sum(len), and its variance. With two slices or
 * more the variance comes from the spread of the slices' rates, with the
 * finite-population correction (1 - armed share), widened so that a
 * normal 95 % interval from it is as wide as Student's t for that many
 * slices; it is never taken below the Poisson variance of the count
 * (of one event when none was counted: a window that saw none does not
 * know the interval had none).
 * One slice tells nothing of the spread between slices: its variance is
 * value^2 (1 - armed share), a standard error the size of the estimate.
 */
struct window_estimate {
	double value;
	double variance;
};
struct window_estimate window_estimate(const uint64_t *c, const int64_t *len, size_t n,
				       int64_t total_ns);

/*
 * The overhead budget's prices: what one kind of slice cost mmhitmd's CPU
 * (arming, reading, disarming), the median of the last WINDOW_PRICES
 * seen. A slice's price swings fourfold from one interval to the next on
 * a host whose cross-CPU calls are slow; one dear slice must not empty
 * the next interval, nor one cheap one overfill it.
 */
#define WINDOW_PRICES 5

struct window_prices {
	int64_t v[WINDOW_PRICES];
	size_t n, next;
};

void window_prices_add(struct window_prices *p, int64_t ns);
/* The median; -1 while none was seen. */
int64_t window_prices_median(const struct window_prices *p);

/*
 * The cost model of an interval's window: `learn_ns` for the slice that
 * arms the learning events and takes the sched_switch sample (text
 * patches, the sample's thousands of records), `slice_ns` for each other
 * slice, and `per_armed` for the kernel's price of the counted events per
 * armed ns.
 */
struct window_cost {
	double learn_ns, slice_ns, per_armed;
};

/*
 * The budget carries over: each interval earns `budget` (ns of CPU), its
 * windows spend what they cost, and what is left (or overspent) carries
 * to the next, between -1 and WINDOW_BALANCE_MAX intervals' budgets. A
 * learning slice dearer than one interval's budget is so paid from what
 * the intervals before it saved: while it cannot be, the interval's
 * window counts without learning and spends at most half its budget, so
 * that the balance grows until it can. A slice dearer than
 * WINDOW_BALANCE_MAX budgets raises the balance's ceiling to its price
 * (window_balance_cap()): it is taken less often, never never, and so
 * priced anew each time (a price only falls when it is measured again).
 * One dearer than WINDOW_SAVE_MAX budgets is not saved for. Over any run
 * the windows cost at most the budget on average, give or take the
 * model's error.
 */
#define WINDOW_BALANCE_MAX 8
#define WINDOW_SAVE_MAX 1024

struct window_budget {
	size_t n;		/* slices */
	int64_t armed_ns;	/* their total length */
	bool learn;		/* the first one learns */
	double cost_ns;		/* the model's cost of the plan */
	bool shortened;		/* fewer slices or less armed time than asked */
	bool saving;		/* learning asked, none: the balance cannot pay it yet */
};

/*
 * Plans a window of n slices and armed_ns in all (learning in the first
 * if `learn`) that costs at most `avail` (the balance plus this
 * interval's budget), by the cost model c. Returns false when not even
 * one slice of WINDOW_MIN_SLICE_NS fits (*out then says what it would
 * cost).
 */
bool window_budget_plan(const struct window_cost *c, double budget, double avail, size_t n,
			int64_t armed_ns, bool learn, struct window_budget *out);

/*
 * The most the balance may hold: WINDOW_BALANCE_MAX budgets, or the price
 * of the cheapest window the plan saves for (the learning slice if
 * `learn`, else one counting slice) and one budget more, up to
 * WINDOW_SAVE_MAX budgets.
 */
double window_balance_cap(const struct window_cost *c, double budget, bool learn);

/* The balance after an interval that earned budget and spent spent. */
double window_balance_after(double balance, double budget, double spent, double cap);

/* xorshift64*: the daemon's cheap random numbers. */
uint64_t window_random(uint64_t *state);

#endif
