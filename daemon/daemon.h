/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_DAEMON_H
#define MMHITMD_DAEMON_H

#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "boot.h"
#include "btf.h"
#include "config.h"
#include "events.h"
#include "flight.h"
#include "metrics.h"
#include "stream.h"
#include "util.h"

/*
 * What mmhitmd's three parts share: mmhitmd.c (main(), the options, the
 * signals and the main loop), setup.c (setup, reload, teardown) and
 * schedule.c (windowed recording's slices, budget and spike windows,
 * whose state is its own).
 */

struct options {
	const char *config_path;
	bool config_explicit;
	bool check_config;
	bool foreground;
	bool print_config;
	int argc;
	char **argv;
};

struct daemon {
	struct options opts;
	struct config cfg;
	struct daemon_locks *locks;	/* one daemon per database and instance */
	sqlite3 *db;
	int exit_status;		/* main()'s, when setup fails (exitcode.h); 0: 1 */
	struct boot_info boot;
	int64_t boot_id;
	struct counters *counters;
	struct stream *stream;
	struct flight *flight;		/* flight recorder (flight.c); NULL: none */
	struct mm_snapshot *snapshot;	/* windowed, with learn_mm: every live mm per window */
	struct learner *learner;
	struct sampler *sampler;
	struct mem_agg *agg;
	struct kallsyms *ksyms;		/* kept while sampling, for sample IPs */
	struct analysis *analysis;	/* attribution, after every interval */
	struct path_export paths;	/* per-path totals for the metrics file */
	struct recorder *rec;		/* NULL until recording */
	struct schedule *sched;		/* the windows (schedule.c) */
	struct event_status_list status;
	struct btf_layout btf;
	int sigfd;
	/* Sleeps up to ms handling signals (mmhitmd.c): -ECANCELED on a stop. */
	int (*sleep_on_signals)(struct daemon *d, int64_t ms);
	uint64_t watchdog_usec;
	int64_t cpu_warned_ns;		/* last CPU-budget warning */
	int64_t analyzed_ns;		/* wall: the last attribution that succeeded; 0 none */
	int64_t trimmed_ns;		/* monotonic: the last heap trim (mmhitmd.c); 0 none */
	bool budget_warned;
	bool windowed;			/* record_mode = windowed */
	double event_price_ns;		/* calibrated kernel cost of a counted event */
	bool recording;			/* the recorder has started */
};

/*
 * The main loop's deadlines, monotonic unless named wall. Each moves on
 * once met, so the loop sleeps until the earliest and never spins.
 */
struct deadlines {
	int64_t flush_wall;	/* the interval's end, on the rows' clock (recorder_now()) */
	int64_t drain;		/* the learning stream's next read */
	int64_t stop;		/* --duration */
	int64_t ping;		/* the systemd watchdog */
	int64_t switch_on;	/* continuous: the next sched_switch window ... */
	int64_t switch_off;	/* ... and its end */
	int64_t spike;		/* windowed: the free counters' next reading for spikes */
};

static inline int64_t process_cpu_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline int64_t thread_cpu_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Whether waiting can cure a database error: another writer, a full disk. */
static inline bool db_error_transient(int r)
{
	return r == -EBUSY || r == -ENOSPC;
}

#define LOCK_RECORD_BYTES 40		/* a contention_begin record with its header */

/*
 * Lock contention floods in a storm. Streamed all the time while a drain
 * period's worth of it stays under an eighth of what one CPU's ring buffer
 * holds (as if it all came on one CPU), it moves into the sample windows
 * as soon as the drains of a period (stream_lock_period()) read more, and
 * back once an interval's rate is under half that again.
 */
static inline uint64_t lock_burst(const struct daemon *d)
{
	return d->cfg.buffer_size_kb * 1024 / LOCK_RECORD_BYTES / 8;
}

/* flight recorder: a storm seen in a drain period's records is worth a snapshot */
static inline void storm_check(struct daemon *d, uint64_t lock_records)
{
	if (d->flight && lock_records > lock_burst(d))
		flight_request(d->flight, "lock-storm");
}

#endif
