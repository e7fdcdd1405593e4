/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_SCHEDULE_H
#define MMHITMD_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

/*
 * Windowed recording's schedule: each interval's slices planned under the
 * overhead budget (window.c does the arithmetic), opened and closed as the
 * main loop reaches them, their disarming left to a thread, and the extra
 * windows a spike in the free counters opens. Its state is its own
 * (struct schedule); the rest of the daemon asks it through these calls,
 * which take the daemon for the resources they arm (counters, streams,
 * flight recorder, sampler, recorder). In continuous mode it stays idle:
 * no plan, no slice, nothing to disarm.
 */

/* How often the main loop looks whether a slice's disarming is done (ns). */
#define DISARM_POLL_NS (20 * NSEC_PER_MSEC)

struct daemon;
struct deadlines;
struct schedule;

/*
 * Once the recording mode is known (setup_host()): the host's fleet_share
 * phase and the slices' random state. NULL when out of memory. Caller
 * frees with schedule_free(), after schedule_disarm_finish(d, true).
 */
struct schedule *schedule_new(const struct daemon *d);
/* Accepts NULL. */
void schedule_free(struct schedule *s);
/* Spike windows from now on, when the free counters can be read. */
void schedule_watch_spikes(struct daemon *d);

/* Plans the slices of the interval that ends at next_flush (wall clock). */
void schedule_plan(struct daemon *d, int64_t mono, int64_t wall, int64_t next_flush);
/* Before an interval is written: why its armed time fell short of the plan. */
void schedule_note_turns(struct daemon *d);
/* After an interval was written: its cost into the budget's model and balance. */
void schedule_account(struct daemon *d);

/*
 * Whether the last slice's disarming is over (wait: waits for it); once
 * it is, drains what the slice learned. Returns 0, or the drain's -errno.
 */
int schedule_disarm_finish(struct daemon *d, bool wait);
/*
 * At every wake-up: closes the slice or spike window whose time is up
 * (or that the interval's end, at t->flush_wall, cuts; in_slice: one was
 * open before the wait) and opens the next slice that is due, moving
 * t->drain with them. -errno when a closing drain failed.
 */
int schedule_turn(struct daemon *d, struct deadlines *t, int64_t mono, int64_t wall, bool in_slice);
/* Closes the open slice or spike window, if any (at stop). */
int schedule_close(struct daemon *d, int64_t mono);

/* The first reading of the free counters for spikes; INT64_MAX: none. */
int64_t schedule_spike_start(const struct daemon *d, int64_t mono);
/* Reads the free counters when t->spike is due, and opens a spike window on a spike. */
void schedule_spikes(struct daemon *d, struct deadlines *t, int64_t mono);

/* The free counters' readings for spikes so far. */
uint64_t schedule_spike_checks(const struct daemon *d);
/* The intervals overhead_budget left without a window so far. */
uint64_t schedule_windows_skipped(const struct daemon *d);
/* How long the main loop may sleep for the schedule's sake (ns; may be < 0). */
int64_t schedule_next_wait(const struct daemon *d, int64_t mono);
/* Whether a slice or spike window is open ... */
bool schedule_in_window(const struct daemon *d);
/* ... and arms the learning events. */
bool schedule_learning(const struct daemon *d);

#endif
