/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_RECORDER_H
#define MMHITMD_RECORDER_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct counters;
struct kallsyms;
struct learner;
struct mem_agg;
struct sampler;
struct stream;

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

struct recorder;

/* What the recorder writes from; all borrowed, for the recorder's life. */
struct recorder_config {
	sqlite3 *db;
	int64_t boot_id;
	int64_t interval_ns;		/* configured length, for the partial flag */
	bool lru_gen;			/* read /sys/kernel/debug/lru_gen */
	struct counters *counters;
	struct stream *stream;		/* may be NULL */
	struct learner *learner;
	struct sampler *sampler;	/* NULL without sampling */
	struct mem_agg *agg;		/* with sampler */
	const struct kallsyms *ksyms;	/* may be NULL: symbols of sampled IPs */
	bool windowed;			/* counters armed only in slices */
	double event_price_ns;		/* kernel cost of one counted event */
	int cpus;			/* online, to spread the windows' events */
};

/* Since the recorder started, for the metrics export and the status line. */
struct recorder_totals {
	uint64_t written;		/* intervals written */
	uint64_t dropped;		/* interval slots folded into others */
	uint64_t lost;			/* learning events lost */
	uint64_t learn_records;		/* learning events read */
	int64_t cpu_ns;			/* mmhitmd's CPU time */
	int64_t armed_ns;		/* anything armed (continuous: all written) */
	int64_t rss_kb;			/* mmhitmd's resident memory at the last write */
};

/* The last interval written, for the CPU and overhead budgets. */
struct recorder_last {
	int64_t len_ns;
	int64_t cpu_ns;			/* mmhitmd's CPU time in it */
	double busy;			/* CPUs the host kept busy in it; < 0: unknown */
	int64_t armed_ns;		/* windowed: its slices' length */
	size_t slices;
	uint64_t window_events;		/* events counted in the slices */
	int64_t est_cost_ns;		/* what its windows cost, spike windows' too */
	size_t spikes;			/* spike windows opened */
	int64_t spike_cpu_ns;		/* mmhitmd's CPU for them */
};

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

/*
 * Takes the baselines; the first interval starts at now_wall, or where
 * this boot's last row ends if that is later (a restart after the wall
 * clock was set back). Returns 0 and the recorder in *ret_recorder, or
 * -errno (logged). Caller frees with recorder_free().
 */
int recorder_new(const struct recorder_config *c, int64_t now_wall, struct recorder **ret_recorder);
/* Accepts NULL. */
void recorder_free(struct recorder *r);
/*
 * The rows' clock, for every time written (rows, the learning streams'
 * events, the objects' snapshots): CLOCK_BOOTTIME plus the wall clock's
 * offset from it, which follows the wall clock when it is set forward (a
 * gap between two rows) but not back (the rows run ahead of it, never
 * over rows already written). A row's length is CLOCK_BOOTTIME's, and a
 * step is said in the log and in the row's window_note.
 */
int64_t recorder_now(const struct recorder *r);
/* A reload's interval length, from the next row on. */
void recorder_set_interval(struct recorder *r, int64_t interval_ns);
/*
 * Ends the interval at now_wall (recorder_now()) and writes it. Returns 0 when written,
 * -errno when it could not be (already logged; folded into the next).
 */
int recorder_flush(struct recorder *r, int64_t now_wall, bool final);
/*
 * Logs what a flush that will not be retried loses: how many intervals,
 * which time range (from the last written one to now_wall), and why.
 */
void recorder_log_unwritten(const struct recorder *r, int64_t now_wall, int error);
/* Whether the last attempt to write failed (the next row folds it in). */
bool recorder_failing(const struct recorder *r);

const struct recorder_totals *recorder_totals(const struct recorder *r);
const struct recorder_last *recorder_last(const struct recorder *r);
/*
 * What this interval's windows are heading to cost, by the last one's:
 * its windows but its spike windows, and this interval's spike windows
 * so far. For a spike window's budget.
 */
int64_t recorder_window_cost_so_far(const struct recorder *r);

/* The counted events, by position, with their counts since start. */
size_t recorder_nr_events(const struct recorder *r);
const char *recorder_event_name(const struct recorder *r, size_t i);
uint64_t recorder_event_total(const struct recorder *r, size_t i);
/* A counted event's hits in the last interval written; 0 if not counted. */
uint64_t recorder_last_count(const struct recorder *r, const char *event);

#endif
