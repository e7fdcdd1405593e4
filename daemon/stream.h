/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_STREAM_H
#define MMHITMD_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "events.h"
#include "kallsyms.h"
#include "learn.h"

/*
 * The object-learning events, streamed with kernel-side filters through
 * mmhitmd's own tracefs instance (never the top-level one). Only these
 * low-rate, filtered events use the ring buffer; high-rate events are
 * counted in the kernel (counters.h).
 */

struct stream_config {
	const char *instance;
	uint64_t buffer_size_kb;
	unsigned int page_pair_shift;
	bool learn_mm, learn_pages, learn_locks;
	bool sample_switches;		/* sched_switch, in windows (stream_sample_switches) */
	bool windowed;			/* learn only while stream_arm() says so */
	/* For kernels whose kmem_cache_alloc has no cache name: the
	 * mm_struct cache's object size and the allocating functions. */
	uint64_t mm_object_size;
	const struct kallsyms *ksyms;
	size_t max_held;		/* records held between drains; 0: the default */
};

/* Records held back between drains, at most (max_held_records). */
#define STREAM_DEFAULT_MAX_HELD 131072

struct stream;
struct tep_handle;

/*
 * The formats of the learning events (learn_source_defs) and the ring
 * buffer's page header, parsed into a tep of their own: what the stream
 * and the flight recorder decode and filter with. Events this kernel lacks
 * are left out (tep_find_event_by_name() says so). NULL with errno set.
 */
struct tep_handle *learn_formats_load(void);

/*
 * Creates the instance (removing a stale one of the same name first: only
 * names starting with "mmhitm" are accepted by the config), sets its clock
 * and buffer, and enables the events this kernel has, each with its filter.
 * What was and was not enabled goes into status. Returns NULL on failure
 * to set up the instance at all; a missing event is not a failure.
 */
struct stream *stream_new(const struct stream_config *cfg, struct event_status_list *status);
/* Disables everything and removes the instance. Accepts NULL. */
void stream_free(struct stream *s);

/*
 * Reads what the ring buffers hold and feeds it to the learner in
 * timestamp order across CPUs. Records newer than the moment the drain
 * started are held back for the next drain, so a record still being
 * written on another CPU can't be overtaken. final feeds everything.
 */
int stream_drain(struct stream *s, struct learner *l, bool final);
/* The events' wall stamps from now on: their CLOCK_BOOTTIME stamp plus
 * wall_off (the recorder's clock, recorder_now(); at first the wall
 * clock's offset when the stream was made). */
void stream_set_wall_off(struct stream *s, int64_t wall_off);

/*
 * Turns the sched_switch sample window on or off. Switches are far too
 * frequent to stream all the time: a short window per interval tells which
 * share of them stays within one process (same mm, P1's work unit), which
 * the in-kernel count then scales. -ENOENT when not set up.
 */
int stream_sample_switches(struct stream *s, bool on);

/*
 * Windowed recording: arms (on) or disarms every learning event, lock
 * contention included; sched_switch stays with stream_sample_switches().
 * -ENOENT when the stream is not windowed.
 */
int stream_arm(struct stream *s, bool on);
/* Leaves the page events out of stream_arm() from now on (no more pairs
 * wanted): each armed tracepoint is a kernel text patch, twice a window. */
void stream_skip_pages(struct stream *s);
/* Whether learning events are armed now (always, when not windowed). */
bool stream_armed(const struct stream *s);

/*
 * Continuous recording only: lock contention is learned continuously while it is rare, and only in
 * the sample windows while it floods (stream_sample_switches() turns it on
 * and off with sched_switch then): a contention storm must not overrun the
 * ring buffer the mm learning events share. The main loop decides.
 */
int stream_locks_windowed(struct stream *s, bool windowed);
bool stream_locks_are_windowed(const struct stream *s);
/* contention_begin records the last drain read. */
uint64_t stream_last_lock_records(const struct stream *s);
/*
 * contention_begin records read by every drain over the last period_ns or
 * more (now is CLOCK_MONOTONIC), scaled to period_ns; -EAGAIN until that
 * much has passed since the last answer. Drains come on their own cadence,
 * at each interval's flush and after each window, so one drain may cover
 * a millisecond or a second: a storm is judged by its rate, never by one
 * drain (judged drain by drain, a 13k/s storm went unseen in 2 of 10 runs).
 */
int stream_lock_period(struct stream *s, int64_t now, int64_t period_ns, uint64_t *ret);

/* Records read, and object-learning records lost (overrun or dropped in
 * the main instance's ring, or read from it and dropped over max_held;
 * the side instance's are samples, only logged), since the last call. */
void stream_take_stats(struct stream *s, uint64_t *ret_records, uint64_t *ret_lost);

/*
 * The merge behind stream_drain(), for tests: records of every CPU in,
 * one timestamp-ordered stream out.
 *
 * stream_merge_add() keeps a record (its text copied) until it may be fed;
 * past max_held it is dropped and counted, as the main instance's (main)
 * or the side instance's. Returns 1 kept, 0 dropped.
 * stream_merge_cpu_capped(): reading a CPU stopped at the page cap after a
 * record stamped last_ts; nothing later is fed in this drain.
 * Stamps (the events' ts_ns, watermark, last_ts) are on the rings' clock
 * (CLOCK_BOOTTIME), one for every CPU and every drain.
 * stream_merge_feed() feeds, in timestamp order, what is stamped at or
 * before both watermark and the capped CPUs' bound (everything if final),
 * each with wall_off added (stream_set_wall_off()'s), holds
 * the rest, and shrinks the array back after a storm. Returns how many
 * were fed.
 */
struct stream_merge;
struct stream_merge *stream_merge_new(size_t max_held);
void stream_merge_free(struct stream_merge *m);
int stream_merge_add(struct stream_merge *m, const struct learn_event *ev, const char *text,
		     bool main);
void stream_merge_cpu_capped(struct stream_merge *m, int64_t last_ts);
size_t stream_merge_feed(struct stream_merge *m, int64_t watermark, int64_t wall_off, bool final,
			 void (*feed)(void *ctx, const struct learn_event *ev), void *ctx);
size_t stream_merge_held(const struct stream_merge *m);
size_t stream_merge_capacity(const struct stream_merge *m);
void stream_merge_take_dropped(struct stream_merge *m, uint64_t *ret_main, uint64_t *ret_side);

#endif
