// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "db.h"
#include "kallsyms.h"
#include "learn.h"
#include "log.h"
#include "mem-agg.h"
#include "paths.h"
#include "recorder.h"
#include "sampler.h"
#include "stream.h"
#include "sysstat.h"
#include "u64map.h"
#include "util.h"
#include "window.h"

#define RECORDER_MAX_SLICES (2 * WINDOW_MAX_SLICES)

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

	uint64_t *prev, *cur;		/* counter readings: last written, now */
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
	/*
	 * The rows' clock (recorder_now()): CLOCK_BOOTTIME plus wall_off, the
	 * wall clock's offset from it when recording began, raised when the
	 * wall clock steps forward, kept when it steps back. Lengths are
	 * CLOCK_BOOTTIME's, and no row starts before the last one ended.
	 */
	int64_t start_ns;		/* this row's start, on the rows' clock */
	int64_t wall_off;		/* rows' clock - CLOCK_BOOTTIME */
	int64_t clock_off;		/* CLOCK_REALTIME - CLOCK_BOOTTIME, as last seen */
	int64_t step_ns;		/* the wall clock's step in this row, 0: none */
	struct rusage ru_prev;
	uint64_t learn_records;		/* since the last written interval */
	uint64_t lost;
	uint64_t failed_attempts;	/* since the last written interval */
	int fail_error;			/* of the last failed attempt */
	int64_t fail_since_ns;		/* wall clock of the first */
	struct recorder_totals tot;	/* since start */
	struct recorder_last last_written;

	/* Windowed: the slices since the last written interval. */
	uint64_t *slice_counts;		/* [RECORDER_MAX_SLICES][counters] */
	uint64_t *slice_ena, *slice_run;	/* [counters]: summed over the slices */
	int64_t slice_len[RECORDER_MAX_SLICES];
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
	/* Spike windows (schedule.c) since the last written interval: armed
	 * for a free counter's spike, not at a random point, so their
	 * counts stay out of the estimates; their cost counts. */
	size_t spikes;
	int64_t spike_ns;		/* their armed time */
	int64_t spike_cpu_ns;		/* mmhitmd's CPU for them */
};

int64_t interval_boundary_after(int64_t t, int64_t len)
{
	return (t / len + 1) * len;
}

/*
 * Interval slots (clock multiples of len) that [start, end] spans beyond
 * its own one: the row's dropped_intervals. A tenth of an interval at
 * either end is slack, as flushes come a little after their boundary and
 * a first or SIGUSR2-cut interval starts off one.
 */
uint64_t interval_slots_missed(int64_t start, int64_t end, int64_t len)
{
	int64_t lo = start + len / 10, hi = end - len / 10;

	if (len <= 0 || hi <= lo)
		return 0;
	/* Multiples of len in (lo, hi). */
	return (uint64_t)((hi - 1) / len - lo / len);
}

uint64_t counter_delta(uint64_t prev, uint64_t cur)
{
	return cur >= prev ? cur - prev : cur;
}

static int64_t tv_ns(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * NSEC_PER_SEC + tv->tv_usec * 1000;
}

static int64_t self_rss_kb(void)
{
	char buf[128];
	long size, resident;

	if (read_line("/proc/self/statm", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%ld %ld", &size, &resident) != 2)
		return -1;
	return resident * (getpagesize() / 1024);
}

uint64_t recorder_last_count(const struct recorder *r, const char *event)
{
	for (size_t i = 0; r->last && i < counters_count(r->counters); i++)
		if (strcmp(counters_name(r->counters, i), event) == 0)
			return r->last[i];
	return 0;
}

static int64_t process_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* The interval's union of what its windows armed, word by word. */
static void armed_add(struct recorder *r, const char *armed)
{
	for (const char *w = armed; w && *w;) {
		size_t n = strcspn(w, " ");
		const char *p = r->armed;
		bool have = false;

		while (!have && *p) {
			size_t m = strcspn(p, " ");

			have = m == n && strncmp(p, w, n) == 0;
			p += m + (p[m] == ' ');
		}
		if (!have && n)
			snprintf(r->armed + strlen(r->armed), sizeof(r->armed) - strlen(r->armed),
				 "%s%.*s", r->armed[0] ? " " : "", (int)n, w);
		w += n + (w[n] == ' ');
	}
}

int recorder_slice_begin(struct recorder *r, int64_t cpu0, const char *armed, bool learns)
{
	int ret;

	if (!r->windowed || r->slice_start)
		return 0;
	r->slice_cpu0 = cpu0 > 0 ? cpu0 : process_cpu_ns();
	ret = counters_arm(r->counters);
	if (ret < 0)
		return ret;
	/* The slice is what was counted: from the moment the counters were
	 * enabled, after the milliseconds that opening them takes. */
	r->slice_start = counters_enabled_ns(r->counters);
	r->slice_learns = learns;
	armed_add(r, armed);
	return 0;
}

int recorder_slice_end(struct recorder *r, int64_t now_mono)
{
	size_t n = counters_count(r->counters);
	uint64_t *row, slice_events = 0;
	int ret;

	if (!r->windowed || !r->slice_start)
		return 0;
	/* Folded intervals could overflow the table: the last row grows. */
	if (r->n_slices == RECORDER_MAX_SLICES)
		r->n_slices--;
	else
		memset(r->slice_counts + r->n_slices * n, 0, n * sizeof(*row));
	row = r->slice_counts + r->n_slices * n;
	/* ... to the moment they stopped, not when the main loop woke. */
	now_mono = counters_pause(r->counters);
	ret = counters_read_totals(r->counters, r->t_cur);
	if (ret < 0) {
		r->slice_start = 0;
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		row[i] += r->t_cur[i].count;
		slice_events += r->t_cur[i].count;
		r->window_events += r->t_cur[i].count;
		r->slice_ena[i] += r->t_cur[i].ena;
		r->slice_run[i] += r->t_cur[i].run;
	}
	log_debug("Window slice %zu: %.1f ms counted%s, %" PRIu64 " events", r->n_slices,
		  (now_mono - r->slice_start) / 1e6, r->slice_learns ? " (learning)" : "", slice_events);
	r->slice_len[r->n_slices++] += now_mono - r->slice_start;
	r->armed_ns += now_mono - r->slice_start;
	recorder_window_cpu(r, process_cpu_ns() - r->slice_cpu0);
	r->slice_start = 0;
	return 0;
}

void recorder_window_cpu(struct recorder *r, int64_t cpu_ns)
{
	if (cpu_ns > 0)
		r->window_cpu_ns += cpu_ns;
}

void recorder_window_note(struct recorder *r, const char *note)
{
	snprintf(r->window_note, sizeof(r->window_note), "%s", note ?: "");
}

void recorder_window_note_add(struct recorder *r, const char *note)
{
	size_t len = strlen(r->window_note);

	if (note && len < sizeof(r->window_note) - 1)
		snprintf(r->window_note + len, sizeof(r->window_note) - len, "%s%s", len ? "; " : "",
			 note);
}

void recorder_spike(struct recorder *r, const char *armed, const char *note)
{
	armed_add(r, armed);
	r->spikes += armed != NULL;
	/* After what planning said about the interval's own window. */
	recorder_window_note_add(r, note);
}

void recorder_spike_cost(struct recorder *r, int64_t armed_ns, int64_t cpu_ns)
{
	if (armed_ns > 0)
		r->spike_ns += armed_ns;
	if (cpu_ns > 0)
		r->spike_cpu_ns += cpu_ns;
}

/* The per-counter arrays, each with a spare slot (none counted: n = 0). */
static int alloc_arrays(struct recorder *r, size_t n)
{
	if (r->windowed) {
		r->slice_counts = calloc((n + 1) * RECORDER_MAX_SLICES, sizeof(*r->slice_counts));
		r->slice_ena = calloc(n + 1, sizeof(*r->slice_ena));
		r->slice_run = calloc(n + 1, sizeof(*r->slice_run));
		if (!r->slice_counts || !r->slice_ena || !r->slice_run)
			return log_oom();
	}
	r->t_prev = calloc(n + 1, sizeof(*r->t_prev));
	r->t_cur = calloc(n + 1, sizeof(*r->t_cur));
	if (!r->t_prev || !r->t_cur)
		return log_oom();
	r->last = calloc(n + 1, sizeof(*r->last));
	r->total = calloc(n + 1, sizeof(*r->total));
	r->prev = calloc(n + 1, sizeof(*r->prev));
	r->cur = calloc(n + 1, sizeof(*r->cur));
	r->event_ids = calloc(n + 1, sizeof(*r->event_ids));
	if (!r->last || !r->total || !r->prev || !r->cur || !r->event_ids)
		return log_oom();
	return 0;
}

/* The counters' readings now, into t and their counts into v. */
static int read_counters_into(struct recorder *r, struct counter_total *t, uint64_t *v)
{
	int ret;

	ret = counters_read_totals(r->counters, t);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < counters_count(r->counters); i++)
		v[i] = t[i].count;
	return 0;
}

/* The counters, /proc and our own usage as they are now: the baselines. */
static int take_baselines(struct recorder *r, int64_t now_wall)
{
	int ret;

	ret = read_counters_into(r, r->t_prev, r->prev);
	if (ret < 0)
		return ret;
	ret = sys_snapshot_take(&r->snap[0], r->lru_gen);
	if (ret < 0)
		return ret;
	r->snap_prev = 0;
	r->last_written.busy = -1;
	getrusage(RUSAGE_SELF, &r->ru_prev);
	r->start_ns = now_wall;
	r->row_interval_ns = r->interval_ns;
	return 0;
}

/* CLOCK_REALTIME - CLOCK_BOOTTIME: changes only when the wall clock is set. */
static int64_t wall_clock_offset(void)
{
	int64_t boot = now_ns(CLOCK_BOOTTIME), wall = now_ns(CLOCK_REALTIME);

	return wall - boot;
}

/*
 * A restart after the wall clock stepped back: this boot's rows may end
 * later than now_wall; the first row starts where the last one ended.
 */
static int64_t first_start(struct recorder *r, int64_t now_wall)
{
	int64_t last_end = 0;
	char sql[96];

	snprintf(sql, sizeof(sql), "SELECT coalesce(max(end_ns), 0) FROM intervals WHERE boot_id = %" PRId64,
		 r->boot_id);
	if (db_query_int(r->db, &last_end, sql) < 0 || last_end <= now_wall)
		return now_wall;
	log_notice("This boot's last row ends %.0f s after the wall clock's now (it was set back): "
		   "rows go on from there, so that none overlaps another", (last_end - now_wall) / 1e9);
	return last_end;
}

int64_t recorder_now(const struct recorder *r)
{
	return now_ns(CLOCK_BOOTTIME) + r->wall_off;
}

/* A wall clock set a second or more away from where it was. */
#define CLOCK_STEP_NS NSEC_PER_SEC

/* Whether the wall clock was set in this row: its step in r->step_ns. */
static void clock_check(struct recorder *r)
{
	int64_t step = wall_clock_offset() - r->clock_off;

	r->step_ns = llabs(step) >= CLOCK_STEP_NS ? step : 0;
}

/*
 * What the step does to the rows, for the row's window_note and the log:
 * forward, a gap after this row; back, the rows' clock stays ahead.
 */
static void clock_step_note(const struct recorder *r, char *buf, size_t len)
{
	int64_t cur = r->clock_off + r->step_ns, off = cur > r->wall_off ? cur : r->wall_off;
	int n;

	n = snprintf(buf, len, "wall clock stepped %+.0f s", r->step_ns / 1e9);
	if (off - r->wall_off >= CLOCK_STEP_NS && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - n, "; the next row starts %.0f s after this one ends",
			      (off - r->wall_off) / 1e9);
	if (off - cur >= CLOCK_STEP_NS && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - n, "; rows run %.0f s ahead of it, so that none overlaps "
			 "another", (off - cur) / 1e9);
}

/*
 * After the row with the step is written: the rows' clock follows a wall
 * clock set forward, never one set back. Returns how much later than the
 * written row's end the next row starts.
 */
static int64_t follow_clock(struct recorder *r)
{
	int64_t cur = r->clock_off + r->step_ns, gap;
	char note[160];

	if (!r->step_ns)
		return 0;
	clock_step_note(r, note, sizeof(note));
	log_warning("The %s (intervals keep CLOCK_BOOTTIME's lengths)", note);
	gap = cur > r->wall_off ? cur - r->wall_off : 0;
	r->wall_off += gap;
	r->clock_off = cur;
	r->step_ns = 0;
	if (r->stream)
		stream_set_wall_off(r->stream, r->wall_off);
	return gap;
}

int recorder_new(const struct recorder_config *c, int64_t now_wall, struct recorder **ret_recorder)
{
	/* The same moment as now_wall, read by the caller just before. */
	int64_t boot0 = now_ns(CLOCK_BOOTTIME);
	struct recorder *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return log_oom();
	r->db = c->db;
	r->boot_id = c->boot_id;
	r->interval_ns = c->interval_ns;
	r->lru_gen = c->lru_gen;
	r->counters = c->counters;
	r->stream = c->stream;
	r->learner = c->learner;
	r->sampler = c->sampler;
	r->agg = c->agg;
	r->ksyms = c->ksyms;
	r->windowed = c->windowed;
	r->event_price_ns = c->event_price_ns;
	r->cpus = c->cpus;
	ret = alloc_arrays(r, counters_count(r->counters));
	if (ret >= 0)
		ret = take_baselines(r, first_start(r, now_wall));
	if (ret < 0) {
		recorder_free(r);
		return ret;
	}
	r->clock_off = wall_clock_offset();
	r->wall_off = r->start_ns - boot0;
	if (r->stream)
		stream_set_wall_off(r->stream, r->wall_off);
	*ret_recorder = r;
	return 0;
}

void recorder_free(struct recorder *r)
{
	if (!r)
		return;
	free(r->last);
	free(r->total);
	free(r->prev);
	free(r->cur);
	free(r->event_ids);
	free(r->vmstat_ids);
	free(r->slice_counts);
	free(r->slice_ena);
	free(r->slice_run);
	free(r->t_prev);
	free(r->t_cur);
	sys_snapshot_done(&r->snap[0]);
	sys_snapshot_done(&r->snap[1]);
	free(r);
}

void recorder_set_interval(struct recorder *r, int64_t interval_ns)
{
	r->interval_ns = interval_ns;
}

bool recorder_failing(const struct recorder *r)
{
	return r->failed_attempts > 0;
}

const struct recorder_totals *recorder_totals(const struct recorder *r)
{
	return &r->tot;
}

const struct recorder_last *recorder_last(const struct recorder *r)
{
	return &r->last_written;
}

int64_t recorder_window_cost_so_far(const struct recorder *r)
{
	return r->last_written.est_cost_ns - r->last_written.spike_cpu_ns + r->spike_cpu_ns;
}

size_t recorder_nr_events(const struct recorder *r)
{
	return counters_count(r->counters);
}

const char *recorder_event_name(const struct recorder *r, size_t i)
{
	return counters_name(r->counters, i);
}

uint64_t recorder_event_total(const struct recorder *r, size_t i)
{
	return r->total[i];
}

/* Name ids written in a rolled-back transaction are gone again. */
static void forget_ids(struct recorder *r)
{
	memset(r->event_ids, 0, (counters_count(r->counters) + 1) * sizeof(*r->event_ids));
	memset(r->vmstat_ids, 0, r->n_vmstat_ids * sizeof(*r->vmstat_ids));
}

/*
 * The share of the interval's counting time that counter i ran (perf's
 * time_running over time_enabled, summed over its CPUs): below 1 its
 * count was scaled up from part of the time, were it ever multiplexed.
 */
static double run_share(const struct recorder *r, size_t i)
{
	if (r->windowed)
		return counter_run_share(0, 0, r->slice_ena[i], r->slice_run[i]);
	return counter_run_share(r->t_prev[i].ena, r->t_prev[i].run, r->t_cur[i].ena, r->t_cur[i].run);
}

/* One event_counts row; counted < 0: none (the count is exact); share:
 * of the time counted that the counter ran (1: not multiplexed, or not a
 * perf counter). */
static int insert_count(struct recorder *r, sqlite3_stmt *st, int64_t interval_id, int64_t event_id,
			uint64_t count, const char *method, int64_t counted, double variance,
			double share)
{
	sqlite3_bind_int64(st, 1, interval_id);
	sqlite3_bind_int64(st, 2, event_id);
	sqlite3_bind_int64(st, 3, (int64_t)count);
	sqlite3_bind_text(st, 4, method, -1, SQLITE_STATIC);
	if (counted >= 0)
		sqlite3_bind_int64(st, 5, counted);
	else
		sqlite3_bind_null(st, 5);
	sqlite3_bind_double(st, 6, variance);
	sqlite3_bind_double(st, 7, share);
	return db_step_done(r->db, st);
}

static int insert_named(struct recorder *r, sqlite3_stmt *st, int64_t interval_id, const char *name,
			uint64_t count, const char *method, int64_t counted, double variance)
{
	int64_t id;
	int ret = db_name_id(r->db, "event_names", name, &id);

	if (ret < 0)
		return ret;
	return insert_count(r, st, interval_id, id, count, method, counted, variance, 1.0);
}

/*
 * P1's work unit, same-mm context switches, is not countable in the
 * kernel; the sampled switches give its share of all switches, and
 * /proc/stat's ctxt, which the kernel counts anyway, gives all of them.
 * The variance is the binomial one of the share, scaled. The sample
 * counts are stored too ("sample:"), so the estimate can be redone.
 */
static int write_switch_estimate(struct recorder *r, sqlite3_stmt *st, int64_t interval_id,
				 uint64_t ctxt)
{
	static const char *const names[] = {
		"sample:sched_switch", "sample:switches_to_user", "sample:same_mm_switches",
	};
	uint64_t v[3] = { r->sw.sampled, r->sw.to_user, r->sw.same_mm };
	double p, var;
	int ret;

	if (!r->sw.sampled)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		ret = insert_named(r, st, interval_id, names[i], v[i], "sample", -1, 0);
		if (ret < 0)
			return ret;
	}
	p = (double)r->sw.same_mm / (double)r->sw.sampled;
	var = (double)ctxt * (double)ctxt * p * (1 - p) / (double)r->sw.sampled;
	return insert_named(r, st, interval_id, "derived:same_mm_switches",
			    (uint64_t)((double)ctxt * p + 0.5), "derived", -1, var);
}

/*
 * Counting slows what it counts: each hit costs its CPU the event price,
 * so a CPU that does nothing but make the event (a context-switch storm)
 * makes fewer of them while a window counts, by up to the share of the
 * armed CPU time the counted hits took (a continuous count is low by as
 * much, all the time). That share of the estimate goes into its variance,
 * one standard error, rather than a correction: the price is a noisy
 * calibration, and events that do not come from CPU-bound work are not
 * slowed at all. Capped at half: beyond, the price is wrong.
 */
static double observer_share(const struct recorder *r)
{
	double f;

	if (r->armed_ns <= 0 || r->cpus <= 0 || r->event_price_ns <= 0)
		return 0;
	f = (double)r->window_events * r->event_price_ns / ((double)r->armed_ns * r->cpus);
	return f < 0.5 ? f : 0.5;
}

/* Counter i's slices scaled to an interval of len_ns, corrected for the
 * observer; ret_counted: what the slices saw. */
static struct window_estimate counter_estimate(const struct recorder *r, size_t i, int64_t len_ns,
					       uint64_t *ret_counted)
{
	size_t n = counters_count(r->counters);
	uint64_t c[RECORDER_MAX_SLICES], sum = 0;
	double slowed = observer_share(r);
	struct window_estimate e;

	for (size_t k = 0; k < r->n_slices; k++)
		sum += c[k] = r->slice_counts[k * n + i];
	e = window_estimate(c, r->slice_len, r->n_slices, len_ns);
	/* As uncertainty, not a correction: the price is a noisy calibration,
	 * and events that do not come from CPU-bound work are not slowed. */
	if (slowed > 0)
		e.variance += (e.value * slowed) * (e.value * slowed);
	if (ret_counted)
		*ret_counted = sum;
	return e;
}

/* Windowed: each counter's slices scaled to the interval. */
static int write_window_counts(struct recorder *r, sqlite3_stmt *st, int64_t interval_id,
			       int64_t len_ns)
{
	int ret;

	if (!r->n_slices)
		return 0;	/* not measured is not zero: no rows */
	for (size_t i = 0; i < counters_count(r->counters); i++) {
		uint64_t counted;
		struct window_estimate e = counter_estimate(r, i, len_ns, &counted);

		ret = insert_count(r, st, interval_id, r->event_ids[i], (uint64_t)(e.value + 0.5),
				   "window", (int64_t)counted, e.variance, run_share(r, i));
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Whether a counter of the tracepoint source is open (continuous, or
 * count_events, the cross-check). */
static bool source_counted(const struct recorder *r, const char *source)
{
	for (size_t i = 0; i < counters_count(r->counters); i++)
		if (strcmp(counters_name(r->counters, i), source) == 0)
			return true;
	return false;
}

/*
 * A work source with an exact free counter (paths.conf `free ... exact`:
 * /proc/stat's ctxt moves on the same switches sched:sched_switch fires
 * on) is not counted in windows: its row is the free counter's change
 * over the whole interval, under the source's own name, method free. The
 * path's unit stays what it was, and the report reads the row as an
 * exact count (no window's share, no variance).
 */
static int write_exact_free(struct recorder *r, sqlite3_stmt *st, int64_t interval_id,
			    const struct sys_snapshot *prev, const struct sys_snapshot *cur)
{
	const char *done[PATHS_MAX_FREE];
	size_t n_done = 0;
	int ret;

	for (size_t p = 0; p < paths_count(); p++) {
		const struct path_def *d = path_get(p);

		for (size_t k = 0; k < d->nr_free; k++) {
			const struct path_free *f = &d->free[k];
			uint64_t a, b;
			bool seen = false;

			for (size_t i = 0; i < n_done; i++)
				seen |= strcmp(done[i], f->source) == 0;
			if (!f->exact || seen || n_done == PATHS_MAX_FREE || source_counted(r, f->source))
				continue;
			done[n_done++] = f->source;
			if (sys_snapshot_free_value(prev, f, &a) < 0 || sys_snapshot_free_value(cur, f, &b) < 0)
				continue;
			ret = insert_named(r, st, interval_id, f->source, counter_delta(a, b), "free", -1, 0);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int write_counts(struct recorder *r, int64_t interval_id, int64_t len_ns,
			const struct sys_snapshot *prev, const struct sys_snapshot *cur)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int ret;

	ret = db_prepare(r->db, &st, "INSERT INTO event_counts(interval_id, event_id, count, method,"
				     " counted, variance, run_share) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < counters_count(r->counters); i++) {
		if (!r->event_ids[i]) {
			ret = db_name_id(r->db, "event_names", counters_name(r->counters, i),
					 &r->event_ids[i]);
			if (ret < 0)
				return ret;
		}
		if (r->windowed)
			continue;
		ret = insert_count(r, st, interval_id, r->event_ids[i],
				   counter_delta(r->prev[i], r->cur[i]), "continuous", -1, 0,
				   run_share(r, i));
		if (ret < 0)
			return ret;
	}
	if (r->windowed) {
		ret = write_window_counts(r, st, interval_id, len_ns);
		if (ret < 0)
			return ret;
	}
	for (int f = 0; f < NR_FREE_COUNTERS; f++) {
		if (!(cur->free_present & prev->free_present & (1u << f)))
			continue;
		ret = insert_named(r, st, interval_id, free_counter_name(f),
				   counter_delta(prev->free[f], cur->free[f]), "free", -1, 0);
		if (ret < 0)
			return ret;
	}
	ret = write_exact_free(r, st, interval_id, prev, cur);
	if (ret < 0)
		return ret;
	return write_switch_estimate(r, st, interval_id, counter_delta(prev->ctxt, cur->ctxt));
}

static int write_vmstat(struct recorder *r, int64_t interval_id, const struct sys_snapshot *prev,
			const struct sys_snapshot *cur)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int ret;

	if (r->n_vmstat_ids < cur->vmstat.n) {
		int64_t *ids = realloc(r->vmstat_ids, cur->vmstat.n * sizeof(*ids));

		if (!ids)
			return log_oom();
		memset(ids + r->n_vmstat_ids, 0, (cur->vmstat.n - r->n_vmstat_ids) * sizeof(*ids));
		r->vmstat_ids = ids;
		r->n_vmstat_ids = cur->vmstat.n;
	}
	ret = db_prepare(r->db, &st, "INSERT INTO vmstat_deltas(interval_id, vmstat_id, delta)"
				     " VALUES (?1, ?2, ?3)");
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < cur->vmstat.n; i++) {
		const struct kv *c = &cur->vmstat.v[i];
		const struct kv *p = kv_list_match(&prev->vmstat, i, c->name);
		int64_t delta = p ? c->value - p->value : c->value;

		if (!delta)
			continue;
		/* The position's cached id is only good for the same name. */
		if (!r->vmstat_ids[i] || !p || p != &prev->vmstat.v[i]) {
			ret = db_name_id(r->db, "vmstat_names", c->name, &r->vmstat_ids[i]);
			if (ret < 0)
				return ret;
		}
		sqlite3_bind_int64(st, 1, interval_id);
		sqlite3_bind_int64(st, 2, r->vmstat_ids[i]);
		sqlite3_bind_int64(st, 3, delta);
		ret = db_step_done(r->db, st);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int write_lru_gen(struct recorder *r, int64_t interval_id, const struct sys_snapshot *prev,
			 const struct sys_snapshot *cur)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int ret;

	if (!cur->n_lru_gen)
		return 0;
	ret = db_prepare(r->db, &st,
			 /* OR IGNORE: one odd line of the file must never make
			  * the whole interval unwritable. */
			 "INSERT OR IGNORE INTO lru_gen_progress(interval_id, memcg_id, node, memcg_path,"
			 " min_seq, max_seq, max_seq_delta) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < cur->n_lru_gen; i++) {
		const struct lru_gen_entry *c = &cur->lru_gen[i];
		uint64_t delta = 0;

		/* A memcg that appeared during the interval starts from zero
		 * progress: its first max_seq is not aging we saw. */
		for (size_t j = 0; j < prev->n_lru_gen; j++)
			if (prev->lru_gen[j].memcg_id == c->memcg_id && prev->lru_gen[j].node == c->node &&
			    strcmp(prev->lru_gen[j].memcg_path, c->memcg_path) == 0) {
				delta = counter_delta(prev->lru_gen[j].max_seq, c->max_seq);
				break;
			}
		sqlite3_bind_int64(st, 1, interval_id);
		sqlite3_bind_int64(st, 2, (int64_t)c->memcg_id);
		sqlite3_bind_int(st, 3, c->node);
		sqlite3_bind_text(st, 4, c->memcg_path, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (int64_t)c->min_seq);
		sqlite3_bind_int64(st, 6, (int64_t)c->max_seq);
		sqlite3_bind_int64(st, 7, (int64_t)delta);
		ret = db_step_done(r->db, st);
		if (ret < 0)
			return ret;
	}
	return 0;
}

struct sym_ctx {
	struct recorder *r;
	struct u64map *done;	/* symbol addresses stored in this flush */
};

static int store_sym(uint64_t ip, void *ctx)
{
	struct sym_ctx *c = ctx;
	const struct ksym *k = kallsyms_lookup(c->r->ksyms, ip);
	int ret;

	if (!k || u64map_get(c->done, k->addr + 1))
		return 0;
	ret = kallsyms_store(c->r->db, c->r->boot_id, k);
	if (ret < 0)
		return ret;
	return u64map_put(c->done, k->addr + 1, (void *)1);
}

/* The samples of the interval, and the symbols their IPs need. */
static int write_samples(struct recorder *r, int64_t interval_id)
{
	struct sym_ctx c = { r, NULL };
	int ret;

	ret = mem_agg_write(r->agg, r->db, r->boot_id, interval_id, sampler_describe(r->sampler),
			    &r->samp);
	if (ret < 0 || !r->ksyms)
		return ret;
	c.done = u64map_new();
	if (!c.done)
		return log_oom();
	ret = mem_agg_for_each_kernel_ip(r->agg, store_sym, &c);
	u64map_free(c.done);
	return ret;
}

/* mmhitmd's own CPU in the windows, and the kernel's for their events. */
static int64_t est_cost_ns(const struct recorder *r)
{
	return r->window_cpu_ns + r->spike_cpu_ns +
	       (int64_t)((double)r->window_events * r->event_price_ns);
}

/* The row's window_note: the windows' note, then the wall clock's step; NULL: none. */
static const char *row_note(const struct recorder *r, char *buf, size_t len)
{
	int n;

	if (!r->step_ns)
		return r->window_note[0] ? r->window_note : NULL;
	n = snprintf(buf, len, "%s%s", r->window_note, r->window_note[0] ? "; " : "");
	if (n >= 0 && (size_t)n < len)
		clock_step_note(r, buf + n, len - n);
	return buf;
}

static int write_interval(struct recorder *r, int64_t end_ns, bool partial,
			  const struct sys_snapshot *prev, const struct sys_snapshot *cur,
			  const struct rusage *ru, int64_t db_bytes)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL, *touch = NULL;
	int64_t interval_id, rss = self_rss_kb();
	char note[sizeof(r->window_note) + 160];
	const char *text;
	int ret, rc;

	ret = db_prepare(r->db, &st,
		"INSERT INTO intervals(boot_id, start_ns, end_ns, partial, learn_records, events_lost,"
		" dropped_intervals, cpu_user_ns, cpu_sys_ns, rss_kb, db_bytes, ctxt, forks,"
		" armed_ns, slices, armed, est_cost_ns, window_note)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)"
		" RETURNING interval_id");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(st, 1, r->boot_id);
	sqlite3_bind_int64(st, 2, r->start_ns);
	sqlite3_bind_int64(st, 3, end_ns);
	sqlite3_bind_int(st, 4, partial);
	sqlite3_bind_int64(st, 5, (int64_t)r->learn_records);
	sqlite3_bind_int64(st, 6, (int64_t)r->lost);
	/* In slots of the length the row began with: a reload that shortens
	 * the interval takes effect at the next boundary, and the row up to
	 * it missed nothing. */
	sqlite3_bind_int64(st, 7, (int64_t)interval_slots_missed(r->start_ns, end_ns,
								 r->row_interval_ns ?: r->interval_ns));
	sqlite3_bind_int64(st, 8, tv_ns(&ru->ru_utime) - tv_ns(&r->ru_prev.ru_utime));
	sqlite3_bind_int64(st, 9, tv_ns(&ru->ru_stime) - tv_ns(&r->ru_prev.ru_stime));
	if (rss >= 0)
		sqlite3_bind_int64(st, 10, rss);
	r->tot.rss_kb = rss;
	sqlite3_bind_int64(st, 11, db_bytes);
	sqlite3_bind_int64(st, 12, (int64_t)counter_delta(prev->ctxt, cur->ctxt));
	sqlite3_bind_int64(st, 13, (int64_t)counter_delta(prev->forks, cur->forks));
	if (r->windowed) {
		sqlite3_bind_int64(st, 14, r->armed_ns);
		sqlite3_bind_int64(st, 15, (int64_t)r->n_slices);
		if (r->armed[0])
			sqlite3_bind_text(st, 16, r->armed, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 17, est_cost_ns(r));
	}
	text = row_note(r, note, sizeof(note));
	if (text)
		sqlite3_bind_text(st, 18, text, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW)
		return db_step_failed(st, rc);	/* said by write_failed() */
	interval_id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);

	ret = write_counts(r, interval_id, end_ns - r->start_ns, prev, cur);
	if (ret < 0)
		return ret;
	ret = write_vmstat(r, interval_id, prev, cur);
	if (ret < 0)
		return ret;
	ret = write_lru_gen(r, interval_id, prev, cur);
	if (ret < 0)
		return ret;
	ret = learner_flush(r->learner, r->db, r->boot_id);
	if (ret < 0)
		return ret;
	if (r->sampler) {
		ret = write_samples(r, interval_id);
		if (ret < 0)
			return ret;
	}

	ret = db_prepare(r->db, &touch, "UPDATE boots SET last_seen_ns = ?2 WHERE boot_id = ?1");
	if (ret < 0)
		return ret;
	sqlite3_bind_int64(touch, 1, r->boot_id);
	sqlite3_bind_int64(touch, 2, end_ns);
	return db_step_done(r->db, touch);
}

/* What the learning streams and the sched_switch windows gave since the last flush. */
static int take_learning(struct recorder *r, bool final)
{
	uint64_t records = 0, lost = 0;
	struct switch_stats sw;
	int ret;

	if (r->stream) {
		ret = stream_drain(r->stream, r->learner, final);
		if (ret < 0)
			return ret;
		stream_take_stats(r->stream, &records, &lost);
		r->learn_records += records;
		r->lost += lost;
	}
	learner_refresh_comms(r->learner);
	learner_take_switch_stats(r->learner, &sw);
	r->sw.sampled += sw.sampled;
	r->sw.to_user += sw.to_user;
	r->sw.same_mm += sw.same_mm;
	return 0;
}

/* The memory samples into the aggregation, and the sampler's stats. */
static int take_samples(struct recorder *r)
{
	struct sampling_stats st;
	int ret;

	ret = sampler_drain(r->sampler, r->agg);
	if (ret < 0)
		return ret;
	/* Kept across failed writes, like everything else here. */
	sampler_take_stats(r->sampler, &st);
	r->samp.active_ns += st.active_ns;
	r->samp.samples += st.samples;
	r->samp.samples_kernel += st.samples_kernel;
	r->samp.samples_user += st.samples_user;
	r->samp.lost += st.lost;
	r->samp.throttled += st.throttled;
	return 0;
}

static int64_t db_bytes_now(struct recorder *r)
{
	int64_t page_count = 0, page_size = 0;

	if (db_query_int(r->db, &page_count, "PRAGMA page_count") == 0 &&
	    db_query_int(r->db, &page_size, "PRAGMA page_size") == 0)
		return page_count * page_size;
	return 0;
}

/* A write that failed is undone; the baselines stay, so the next row covers this span too. */
static void write_failed(struct recorder *r, int64_t now_wall, int ret)
{
	db_rollback(r->db);
	learner_abort(r->learner);
	forget_ids(r);
	if (!r->failed_attempts || ret != r->fail_error)
		log_error_errno(ret, "Failed to write the interval%s, keeping its data for the next "
				"one: %s", r->failed_attempts ? " again" : "", db_error(ret));
	if (!r->failed_attempts)
		r->fail_since_ns = now_wall;
	r->failed_attempts++;
	r->fail_error = ret;
}

/* The interval's row and everything under it, in one transaction. */
static int write_transaction(struct recorder *r, int64_t now_wall, bool final,
			     const struct sys_snapshot *prev, const struct sys_snapshot *cur,
			     const struct rusage *ru)
{
	int64_t db_bytes = db_bytes_now(r);
	bool partial = final || (now_wall - r->start_ns) < (r->row_interval_ns ?: r->interval_ns) * 9 / 10;
	int ret;

	/* Said by write_failed() the first time, again only when it fails
	 * differently, then once on recovery (count_folded()). */
	ret = db_begin(r->db);
	if (ret >= 0)
		ret = write_interval(r, now_wall, partial, prev, cur, ru, db_bytes);
	if (ret >= 0)
		ret = db_commit(r->db);
	if (ret < 0)
		write_failed(r, now_wall, ret);
	return ret;
}

/* Each counter's count in the interval written, and since start. */
static void keep_counts(struct recorder *r, int64_t now_wall)
{
	for (size_t i = 0; i < counters_count(r->counters); i++) {
		r->last[i] = r->windowed ? (uint64_t)(counter_estimate(r, i, now_wall - r->start_ns,
								     NULL).value + 0.5) :
					   counter_delta(r->prev[i], r->cur[i]);
		r->total[i] += r->last[i];
	}
}

/* The written interval's windows, kept for the budget; the next starts with none. */
static void close_windows(struct recorder *r)
{
	r->last_written.armed_ns = r->armed_ns;
	r->last_written.slices = r->n_slices;
	r->last_written.window_events = r->window_events;
	r->last_written.est_cost_ns = est_cost_ns(r);
	r->last_written.spike_cpu_ns = r->spike_cpu_ns;
	r->last_written.spikes = r->spikes;
	r->spike_cpu_ns = r->spike_ns = 0;
	r->spikes = 0;
	r->tot.armed_ns += r->armed_ns;
	r->n_slices = 0;
	memset(r->slice_len, 0, sizeof(r->slice_len));
	if (r->windowed) {
		memset(r->slice_ena, 0, counters_count(r->counters) * sizeof(*r->slice_ena));
		memset(r->slice_run, 0, counters_count(r->counters) * sizeof(*r->slice_run));
	}
	r->armed_ns = r->window_cpu_ns = 0;
	r->window_events = 0;
	r->armed[0] = r->window_note[0] = '\0';
}

/*
 * Intervals folded into this row, counted always; said once the writes
 * work again, or, when no write failed, once mmhitmd runs again after it
 * did not for a whole interval or more (SIGSTOP, a suspended host or VM,
 * a starved daemon; a flush merely late is not said): one row covers the
 * time, its counts are the whole time's, and what the learning ring could
 * not hold meanwhile is in its events_lost.
 */
static void count_folded(struct recorder *r, int64_t now_wall)
{
	uint64_t missed = interval_slots_missed(r->start_ns, now_wall, r->interval_ns);
	int64_t len = now_wall - r->start_ns;

	if (r->failed_attempts)
		log_notice("Writing intervals again after %" PRIu64 " failed attempts over %.0f s: "
			   "one row covers them, %" PRIu64 " missed intervals folded into it",
			   r->failed_attempts, (now_wall - r->fail_since_ns) / 1e9, missed);
	else if (missed && len >= 2 * r->interval_ns)
		log_notice("mmhitmd did not run for whole intervals (stopped, suspended or starved): "
			   "one row covers %.0f s, %" PRIu64 " missed intervals folded into it, %" PRIu64
			   " learning events lost", len / 1e9, missed, r->lost);
	r->tot.dropped += missed;
}

/* Our CPU and the host's in the written interval, and the totals since start. */
static void keep_usage(struct recorder *r, int64_t now_wall, const struct sys_snapshot *prev,
		       const struct sys_snapshot *cur, const struct rusage *ru)
{
	r->last_written.cpu_ns = tv_ns(&ru->ru_utime) + tv_ns(&ru->ru_stime) -
				 tv_ns(&r->ru_prev.ru_utime) - tv_ns(&r->ru_prev.ru_stime);
	r->last_written.len_ns = now_wall - r->start_ns;
	/* /proc/stat counts in USER_HZ ticks */
	r->last_written.busy = cur->cpu_total && prev->cpu_total && cur->cpu_busy >= prev->cpu_busy &&
			       r->last_written.len_ns > 0 ?
			       (double)(cur->cpu_busy - prev->cpu_busy) /
			       ((double)r->last_written.len_ns / NSEC_PER_SEC * (double)sysconf(_SC_CLK_TCK)) :
			       -1;
	if (!r->windowed)
		r->tot.armed_ns += r->last_written.len_ns;
	r->tot.cpu_ns += r->last_written.cpu_ns;
	r->tot.lost += r->lost;
	r->tot.learn_records += r->learn_records;
	r->failed_attempts = 0;
	r->learn_records = 0;
	r->lost = 0;
}

/* What was written becomes the next interval's baseline. */
static void move_baselines(struct recorder *r, int64_t now_wall, const struct rusage *ru)
{
	int64_t gap = follow_clock(r);

	if (!r->windowed) {
		memcpy(r->prev, r->cur, counters_count(r->counters) * sizeof(*r->prev));
		memcpy(r->t_prev, r->t_cur, counters_count(r->counters) * sizeof(*r->t_prev));
	}
	r->snap_prev = !r->snap_prev;
	r->ru_prev = *ru;
	r->start_ns = now_wall + gap;
	r->row_interval_ns = r->interval_ns;
	r->tot.written++;
}

int recorder_flush(struct recorder *r, int64_t now_wall, bool final)
{
	struct sys_snapshot *prev = &r->snap[r->snap_prev], *cur = &r->snap[!r->snap_prev];
	struct rusage ru;
	int ret;

	/* Learning first, so the objects behind this interval's counts are
	 * written with it. */
	ret = take_learning(r, final);
	if (ret >= 0 && r->sampler)
		ret = take_samples(r);
	if (ret >= 0 && !r->windowed)
		ret = read_counters_into(r, r->t_cur, r->cur);
	if (ret >= 0)
		ret = sys_snapshot_take(cur, r->lru_gen);
	if (ret < 0)
		return ret;
	getrusage(RUSAGE_SELF, &ru);
	clock_check(r);
	ret = write_transaction(r, now_wall, final, prev, cur, &ru);
	if (ret < 0)
		return ret;

	learner_commit(r->learner);
	memset(&r->sw, 0, sizeof(r->sw));
	keep_counts(r, now_wall);
	close_windows(r);
	if (r->sampler) {
		mem_agg_reset(r->agg);
		memset(&r->samp, 0, sizeof(r->samp));
	}
	count_folded(r, now_wall);
	keep_usage(r, now_wall, prev, cur, &ru);
	move_baselines(r, now_wall, &ru);
	return 0;
}

static void format_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%F %T %z", &tm))
		snprintf(buf, len, "%" PRId64 " ns", ns);
}

void recorder_log_unwritten(const struct recorder *r, int64_t now_wall, int error)
{
	char from[64], to[64];

	format_time(r->start_ns, from, sizeof(from));
	format_time(now_wall, to, sizeof(to));
	log_error_errno(error, "Lost %" PRIu64 " interval%s that could not be written (%m): "
			"%s to %s (%.1f s, start_ns %" PRId64 " to %" PRId64 ")",
			interval_slots_missed(r->start_ns, now_wall, r->interval_ns) + 1,
			interval_slots_missed(r->start_ns, now_wall, r->interval_ns) ? "s" : "",
			from, to, (now_wall - r->start_ns) / 1e9, r->start_ns, now_wall);
}
