/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_COUNTERS_H
#define MMHITMD_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

/*
 * High-rate tracepoints counted in the kernel: one perf counting event per
 * tracepoint and online CPU (libperf). Nothing goes through a ring buffer,
 * so the cost is a probe call and an increment per hit, but that is paid
 * on every hit while the event is open, enabled or not (the tracepoint's
 * probe is registered at open): windowed recording therefore opens them
 * for a window (counters_arm) and closes them after (counters_disarm).
 */
struct counters;

/* armed: open each event as it is added and keep it open (continuous). */
struct counters *counters_new(bool armed);
/* The same, with the online CPU list read from online_path (tests). */
struct counters *counters_new_online(bool armed, const char *online_path);
void counters_free(struct counters *c);

/*
 * Adds "system:name", or every event of a system with "system:*". Events
 * this kernel lacks, or that can't be opened, are noted in status and
 * skipped; only allocation failure is an error.
 */
int counters_add(struct counters *c, const char *spec, struct event_status_list *status);

size_t counters_count(const struct counters *c);
const char *counters_name(const struct counters *c, size_t i);	/* "system:name" */
/* Opens every added event (counting from zero); closes them again. */
int counters_arm(struct counters *c);
void counters_disarm(struct counters *c);

/*
 * Closing the last perf event of a tracepoint waits for RCU grace periods
 * (tracepoint_synchronize_unregister() in perf_trace_event_unreg()), 35 ms
 * per tracepoint on the build VM, and holds the kernel's event mutex while
 * it does: the main loop must not pay it. counters_retire() hands the
 * armed events over, still open (pause them first), and leaves c disarmed;
 * counters_retired_close() closes them, in another thread. Accepts NULL.
 */
struct counters_retired;
struct counters_retired *counters_retire(struct counters *c);
void counters_retired_close(struct counters_retired *r);
/* When the armed counters began counting (CLOCK_MONOTONIC ns, the midst
 * of enabling them), and pausing them: stops counting, all events at
 * once, before the read; returns when the counting stopped, likewise. */
int64_t counters_enabled_ns(const struct counters *c);
int64_t counters_pause(struct counters *c);
bool counters_armed(const struct counters *c);

/*
 * Multiplexing: a counter that could not always be scheduled (more
 * events than the PMU has counters) ran for only part of the time it was
 * enabled; perf says how long each (time_enabled, time_running), and its
 * count is scaled by enabled/running. Tracepoints never are (software
 * context), but a count read through here says either way, so that a
 * scaled count is never taken for a counted one.
 */
struct counter_reading {	/* one CPU's, as perf_evsel__read() gives it */
	uint64_t val, ena, run;
};
struct counter_total {		/* a counter over its CPUs and generations */
	uint64_t count;		/* each CPU's value scaled by its ena/run */
	uint64_t ena, run;	/* summed over the CPUs, ns */
};
/* A CPU's value scaled to the time it was enabled. */
uint64_t counter_scaled(const struct counter_reading *v);
/* Adds one CPU's reading to t. */
void counter_total_add(struct counter_total *t, const struct counter_reading *v);
/* The share of the time enabled that the counter ran: run/ena over what
 * two sums of times enabled and running grew by (a smaller value is a
 * reset: counted from zero), in [0, 1]; 1.0 when nothing was enabled. */
double counter_run_share(uint64_t ena_prev, uint64_t run_prev, uint64_t ena_cur, uint64_t run_cur);

/* Reads every counter's total since it was armed into ret[0..count);
 * zeros while disarmed. */
int counters_read(struct counters *c, uint64_t *ret);
/* The same with the times enabled and running (zeros while disarmed). */
int counters_read_totals(struct counters *c, struct counter_total *ret);
/*
 * Looks at the online CPUs again. Armed, every counter starts counting on
 * the CPUs that came online (their total goes on growing from where it
 * was); disarmed, the next arming takes them. CPUs gone offline keep what
 * they counted. Returns how many CPUs were added, or -errno (logged).
 */
int counters_refresh_cpus(struct counters *c);

#endif
