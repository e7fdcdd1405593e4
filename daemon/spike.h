/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_SPIKE_H
#define MMHITMD_SPIKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "paths.h"

/*
 * Spikes in the free counters between windows. A storm that starts and
 * ends between two windows is never seen by them: no learning event, no
 * flight-recorder ring. So between windows the counters the kernel keeps
 * anyway that the path table names for the paths' work (common/paths.conf,
 * `free`: /proc/stat ctxt for P1, /proc/vmstat pgactivate for P3, the TLB
 * row of /proc/interrupts for P4) are read every spike_check (/proc/stat
 * in one pread, kept open; /proc/interrupts and /proc/vmstat every
 * SPIKE_SLOW_EVERY readings, dearer; each file once for all its counters),
 * and when one's rate jumps well above its recent baseline the daemon
 * opens an extra window at once (schedule.c: spike_window_open()).
 *
 * The rule, per counter: the rate since the last reading is a spike when
 * it is above spike_factor times the median of the last SPIKE_HISTORY
 * rates (the median, so a spike or two does not lift its own baseline)
 * and above spike_min_rate per online CPU (an idle host's counters double
 * from one second to the next without meaning anything). No judgement
 * before SPIKE_MIN_HISTORY readings. Every rate enters the history, so a
 * storm that lasts becomes the baseline within SPIKE_HISTORY / 2 readings.
 */

#define SPIKE_HISTORY 15	/* readings the median is taken over */
#define SPIKE_MIN_HISTORY 5	/* readings before the first judgement */
/* The dearer files (/proc/interrupts, /proc/vmstat) are read every this
 * many readings: 4 s by default, 100 us of CPU a reading of all three
 * here against 7 us for /proc/stat alone. */
#define SPIKE_SLOW_EVERY 4

#define SPIKE_MAX_COUNTERS PATHS_MAX_FREE	/* the table's free counters, at most */

struct spike_reading {
	uint64_t v[SPIKE_MAX_COUNTERS];	/* by the watch's counter index */
	uint32_t present;	/* bit c: v[c] was read */
	int64_t mono_ns;	/* CLOCK_MONOTONIC when read */
};

struct spike_hit {
	size_t counter;		/* the watch's counter index */
	double rate;		/* per second, all CPUs */
	double median;		/* the baseline it was judged against */
};

struct spike_watch;

/*
 * Opens the files of the path table's free counters, each counter once
 * however many paths name it; a counter whose file cannot be opened is
 * left out (one info line). NULL when none is left, or out of memory.
 * The path table must outlive the watch. Caller frees with
 * spike_watch_free().
 */
struct spike_watch *spike_watch_new(void);
void spike_watch_free(struct spike_watch *w);

/* The counters watched, and counter c's name in notes and logs: the
 * table's FIELD ("ctxt", "pgactivate", "TLB"); "?" past the end. */
size_t spike_watch_count(const struct spike_watch *w);
const char *spike_counter_name(const struct spike_watch *w, size_t c);

/* Reads the counters due now (present says which); -errno when none could be. */
int spike_watch_read(struct spike_watch *w, struct spike_reading *ret);

/*
 * Takes a reading into each counter's history and judges it, the rate of
 * each counter over its own span since it was last read: 1 when a counter
 * spiked (the one most above its threshold in ret), 0 when none did or
 * the history is too short, -EINVAL for a reading older than the last.
 * factor <= 0 judges nothing (the history still fills); min_rate is per
 * second and CPU.
 */
int spike_watch_feed(struct spike_watch *w, const struct spike_reading *r, double factor,
		     double min_rate, int cpus, struct spike_hit *ret);

/* How many readings spike_watch_read() has taken. */
uint64_t spike_watch_reads(const struct spike_watch *w);
/* Whether every counter read has history enough to be judged (logged once by the daemon). */
bool spike_watch_ready(const struct spike_watch *w);

#endif
