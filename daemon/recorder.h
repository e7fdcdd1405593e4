/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_RECORDER_H
#define MMHITMD_RECORDER_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "counters.h"
#include "kallsyms.h"
#include "learn.h"
#include "mem-agg.h"
#include "sampler.h"
#include "stream.h"
#include "sysstat.h"
#include "window.h"

/*
 * One interval = one transaction: the counter deltas, /proc deltas,
 * lru_gen progress, the daemon's own cost and the objects learned, all
 * committed together or not at all. A flush that can't be written (disk
 * full, a long-held lock) is folded into the next one: the next row spans
 * both and says so in dropped_intervals (the interval slots it covers
 * beyond its own), so no count is lost.
 */

/* Next multiple of len strictly after t: intervals align to the clock. */
int64_t interval_boundary_after(int64_t t, int64_t len);
/* A counter's increase; a smaller value means it was reset. */
uint64_t counter_delta(uint64_t prev, uint64_t cur);
/* Interval slots of length len that [start, end] covers beyond one. */
uint64_t interval_slots_missed(int64_t start, int64_t end, int64_t len);

struct recorder {
	sqlite3 *db;
	int64_t boot_id;
	int64_t interval_ns;		/* configured length, for the partial flag */
	int64_t row_interval_ns;	/* ... as it was when this row began (SIGHUP) */
	bool lru_gen;			/* read /sys/kernel/debug/lru_gen */

	struct counters *counters;	/* borrowed */
	struct stream *stream;		/* borrowed, may be NULL */
	struct learner *learner;	/* borrowed */
	struct sampler *sampler;	/* borrowed, NULL without sampling */
	struct mem_agg *agg;		/* borrowed, with sampler */
	const struct kallsyms *ksyms;	/* borrowed, may be NULL: symbols of sampled IPs */
	bool windowed;			/* counters armed only in slices */
	struct sampling_stats samp;	/* since the last written interval */
	struct switch_stats sw;		/* sched_switch windows, likewise */

	uint64_t *base, *prev, *cur;	/* counter readings: at start, last written, now */
	/* ... with the times enabled and running (continuous: last written,
	 * now), for the share of the interval each counter ran */
	struct counter_total *t_prev, *t_cur;
	uint64_t *last;			/* counts of the last interval written */
	uint64_t *total;		/* ... and of all written since start */
	int64_t *event_ids;		/* event_names ids, 0: not looked up */
	struct sys_snapshot snap[2];
	int snap_prev;
	int64_t *vmstat_ids;		/* by position in the previous snapshot */
	size_t n_vmstat_ids;
	int64_t start_ns;		/* wall clock */
	struct rusage ru_prev;
	uint64_t learn_records;		/* since the last written interval */
	uint64_t lost;
	uint64_t failed_attempts;	/* since the last written interval */
	int fail_error;			/* of the last failed attempt */
	int64_t fail_since_ns;		/* wall clock of the first */
	uint64_t written;		/* intervals written */
	/* Since start, for the metrics export and the CPU budget. */
	uint64_t dropped_total;		/* interval slots folded into others */
	uint64_t lost_total;
	uint64_t learn_records_total;
	int64_t cpu_ns_total;
	int64_t last_cpu_ns;		/* of the last interval written */
	int64_t last_len_ns;
	double last_busy;		/* CPUs the host kept busy in it; < 0: unknown */
	int64_t last_rss_kb;

	/* Windowed: the slices since the last written interval. */
	uint64_t *slice_counts;		/* [RECORDER_MAX_SLICES][counters] */
	uint64_t *slice_ena, *slice_run;	/* [counters]: summed over the slices */
	int64_t slice_len[2 * WINDOW_MAX_SLICES];
	size_t n_slices;
	int64_t slice_start;		/* CLOCK_MONOTONIC; 0: no slice open */
	int64_t slice_cpu0;		/* process CPU time at the slice's start */
	int64_t armed_ns;		/* slices' total length */
	int64_t window_cpu_ns;		/* mmhitmd's CPU time inside them */
	bool slice_learns;		/* the open slice arms the learning */
	uint64_t window_events;		/* events counted in them */
	char armed[64];			/* what the slices armed */
	char window_note[320];		/* why no or a shorter window; spikes */
	double event_price_ns;		/* kernel cost of one counted event */
	int cpus;			/* online, to spread the windows' events */
	/* Of the last written interval, for the overhead budget. */
	int64_t last_armed_ns;
	size_t last_slices;
	uint64_t last_window_events;
	int64_t last_est_cost_ns;
	int64_t armed_total_ns;		/* since start (continuous: all written) */
	/* Spike windows (mmhitmd.c) since the last written interval: armed
	 * for a free counter's spike, not at a random point, so their
	 * counts stay out of the estimates; their cost counts. */
	size_t spikes;
	int64_t spike_ns;		/* their armed time */
	int64_t spike_cpu_ns;		/* mmhitmd's CPU for them */
	size_t last_spikes;		/* ... of the last written interval */
	int64_t last_spike_cpu_ns;
};

#define RECORDER_MAX_SLICES (2 * WINDOW_MAX_SLICES)

/*
 * Windowed recording: a slice starts (counters armed from zero) and ends
 * (paused and read, its counts kept for the interval's estimate; the
 * caller then retires the counters, see counters_retire()). armed says
 * what the slice armed besides the counters, for the interval row; cpu0
 * is the process CPU time before the caller armed anything for it (its
 * cost counts from there), 0: now.
 */
int recorder_slice_begin(struct recorder *r, int64_t cpu0, const char *armed, bool learns);
int recorder_slice_end(struct recorder *r, int64_t now_mono);
/* mmhitmd's CPU time spent for the windows outside a slice (the switch
 * sample after it), for the window cost. */
void recorder_window_cpu(struct recorder *r, int64_t cpu_ns);
/* Why this interval had no window or a shorter one; kept with the row. */
void recorder_window_note(struct recorder *r, const char *note);
/* ... and what came after the planning (a slice cut short), after it. */
void recorder_window_note_add(struct recorder *r, const char *note);
/*
 * A spike window opened in this interval: armed joins the row's armed
 * words ("spike learn"), note is appended to its window_note (which
 * counter, its rate and baseline). armed NULL: a spike that opened no
 * window, the note says why. Its cost, once known, with
 * recorder_spike_cost(): armed time and mmhitmd's CPU time, both part
 * of the row's est_cost_ns.
 */
void recorder_spike(struct recorder *r, const char *armed, const char *note);
void recorder_spike_cost(struct recorder *r, int64_t armed_ns, int64_t cpu_ns);

/* Takes the baselines; the first interval starts now. */
int recorder_start(struct recorder *r, int64_t now_wall);
/*
 * Ends the interval at now_wall and writes it. Returns 0 when written,
 * -errno when it could not be (already logged; folded into the next).
 */
int recorder_flush(struct recorder *r, int64_t now_wall, bool final);
void recorder_done(struct recorder *r);
/*
 * Logs what a flush that will not be retried loses: how many intervals,
 * which time range (from the last written one to now_wall), and why.
 */
void recorder_log_unwritten(const struct recorder *r, int64_t now_wall, int error);

/* A counted event's hits in the last interval written; 0 if not counted. */
uint64_t recorder_last_count(const struct recorder *r, const char *event);

#endif
