// SPDX-License-Identifier: GPL-2.0
/*
 * Windowed recording's schedule (schedule.h): the interval's slices under
 * the overhead budget, their arming and disarming, and spike windows.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "daemon.h"
#include "flight.h"
#include "learn.h"
#include "log.h"
#include "recorder.h"
#include "sampler.h"
#include "schedule.h"
#include "snapshot.h"
#include "spike.h"
#include "stream.h"
#include "util.h"
#include "window.h"

/*
 * A quiet host reads the free counters for spikes this many times less
 * often (spike_period()): on this build VM a wake-up costs 0.15 ms, 4.5 ms
 * a minute every 2 s, as much as the rest of a quiet minute together.
 */
#define QUIET_SPIKE_SLOWER 4

/*
 * A spike window comes no closer than this before one of the interval's
 * own slices (ns): its disarming would make that slice be held back, and
 * a slice that soon sees the storm anyway.
 */
#define SPIKE_SLICE_GAP_NS (500 * NSEC_PER_MSEC)

/*
 * How an interval's slices fared against its plan, for its window_note: a
 * slice opens late and keeps its length (window_plan_delay()), so only
 * the interval's end can take armed time from it.
 */
struct slice_turns {
	int64_t waited_ns;	/* slices held back for the last one's disarming */
	int64_t cut_ns;		/* armed time the interval's end cut off */
	size_t cut;		/* ... from how many slices */
};

struct schedule {
	uint64_t host_hash;		/* fleet_share's phase */
	uint64_t rnd;			/* slice placement */
	struct window_plan plan;	/* this interval's slices */
	size_t next_slice;		/* plan.s[] index of the next to open */
	int64_t slice_off;		/* the open slice's end; INT64_MAX: none open */
	struct slice_turns turns;	/* this interval's, for its note */
	struct disarm_job *job;		/* the last slice's disarming, while it runs */
	bool learned;			/* a slice of this interval armed the learning */
	bool active;			/* this interval is this host's turn */
	int64_t learn_last;		/* CLOCK_MONOTONIC of the last learning armed (with no
					 * learning events, the last slice); 0: none */
	bool quiet;			/* this interval is quiet (plan_quiet()) */
	/* The overhead budget's cost model and balance (window.h). */
	struct window_prices learn_price, slice_price;
	double per_armed;		/* kernel ns per armed ns; 0: not seen */
	double balance;			/* ns of CPU saved (< 0: overspent) */
	uint64_t budget_skipped;	/* intervals it left without a window */
	bool slice_learns;		/* the open slice does */
	int64_t slice_cpu0;		/* process CPU time before it was armed */
	/* The open window's armed span, for its "Armed span" line. */
	int64_t span_from;		/* CLOCK_BOOTTIME as its arming began */
	char span_what[64];		/* what it armed */

	/* Spike windows (spike.h): extra windows a free counter's spike opens. */
	struct spike_watch *spike;	/* NULL: none (continuous, or unreadable) */
	bool spike_ready_said;		/* "judging spikes from now" logged */
	bool slice_spike;		/* the open window is a spike's */
	int64_t spike_last;		/* CLOCK_MONOTONIC of the last one opened; 0: none */
	int64_t spike_opened;		/* ... when the open one opened */
	int64_t spike_cpu0;		/* process CPU time then */
	int64_t spike_main_cpu;		/* the main loop's CPU for the last one */
	int64_t spike_price_ns;		/* what the last one cost in all; 0: none yet */
};

/*
 * The window asked for, or a quarter of a short interval (the tests' 1 s
 * ones): windows that filled the interval would be continuous recording
 * in disguise, which record_mode = continuous says plainly.
 */
static int64_t window_len(const struct config *c)
{
	return c->window_ns * 2 > c->interval_ns ? c->interval_ns / 4 : c->window_ns;
}

struct schedule *schedule_new(const struct daemon *d)
{
	struct schedule *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (d->windowed && window_len(&d->cfg) != d->cfg.window_ns)
		log_notice("window %gs is over half of interval %gs: windows of %gs instead",
			   d->cfg.window_ns / 1e9, d->cfg.interval_ns / 1e9, window_len(&d->cfg) / 1e9);
	/* The machine id names a host for good; the hostname where none. */
	s->host_hash = window_host_hash(d->boot.machine_id[0] ? d->boot.machine_id : d->boot.hostname);
	s->rnd = (uint64_t)now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32) ^ s->host_hash;
	s->slice_off = INT64_MAX;
	return s;
}

void schedule_free(struct schedule *s)
{
	if (!s)
		return;
	spike_watch_free(s->spike);
	free(s);
}

void schedule_watch_spikes(struct daemon *d)
{
	d->sched->spike = spike_watch_new();
	if (!d->sched->spike)
		log_warning("No free counter of the path table can be read: no spike windows, "
			    "continuing");
}

uint64_t schedule_spike_checks(const struct daemon *d)
{
	return d->sched ? spike_watch_reads(d->sched->spike) : 0;
}

uint64_t schedule_windows_skipped(const struct daemon *d)
{
	return d->sched ? d->sched->budget_skipped : 0;
}

bool schedule_in_window(const struct daemon *d)
{
	return d->sched->slice_off != INT64_MAX;
}

bool schedule_learning(const struct daemon *d)
{
	return d->sched->slice_off != INT64_MAX && d->sched->slice_learns;
}

/* The overhead budget: a share of every CPU's time over an interval (ns). */
static double interval_budget(const struct daemon *d)
{
	return d->cfg.overhead_budget * (double)d->cfg.interval_ns * d->boot.cpus_online;
}

/* --- the budget ---------------------------------------------------------- */

/*
 * The cost model from the prices seen (window.h); false while none was
 * (the first window is taken as configured).
 */
static bool budget_model(const struct schedule *s, struct window_cost *c)
{
	int64_t learn = window_prices_median(&s->learn_price);
	int64_t slice = window_prices_median(&s->slice_price);

	if (learn < 0 && slice < 0)
		return false;
	c->learn_ns = (double)(learn >= 0 ? learn : slice);
	c->slice_ns = (double)(slice >= 0 ? slice : learn);
	c->per_armed = s->per_armed > 0 ? s->per_armed : 0;
	return true;
}

/*
 * After an interval is written: the kernel's price per armed ns into the
 * cost model, and what it spent against what it earned into the balance
 * (only the intervals that were this host's turn earn: fleet_share must
 * not pile up a share's savings into one window). The slices' own prices
 * come in as each one's disarming ends (schedule_disarm_finish()),
 * whichever interval that falls in.
 */
void schedule_account(struct daemon *d)
{
	struct schedule *s = d->sched;
	const struct recorder_last *last = recorder_last(d->rec);
	double budget = interval_budget(d);
	double cap = WINDOW_BALANCE_MAX * budget;
	struct window_cost c;

	if (last->armed_ns > 0)
		s->per_armed = (double)last->window_events * d->event_price_ns /
			       (double)last->armed_ns;
	if (!s->active)
		return;
	if (budget_model(s, &c))
		cap = window_balance_cap(&c, budget, d->stream != NULL);
	s->balance = window_balance_after(s->balance, budget, (double)last->est_cost_ns, cap);
}

/* The note of a plan the budget shortened or left without its learning slice. */
static void note_budget_cut(struct daemon *d, const struct window_cost *c, const struct window_budget *b,
			    double budget, bool want, int64_t armed)
{
	char note[320];
	int len = snprintf(note, sizeof(note), "window %.0f ms in %zu slices of %.0f ms asked",
			   b->armed_ns / 1e6, b->n, armed / 1e6);

	if (want && !b->learn)
		len += snprintf(note + len, sizeof(note) - len, ", no learning slice (%.3g ms, %s)",
				c->learn_ns / 1e6, b->saving ? "the balance saves for it" :
				"more than the balance may save");
	snprintf(note + len, sizeof(note) - len, ": %.2g ms a slice and %.3g%% of the armed "
		 "time against overhead_budget %g%% (%.3g ms, %.3g ms in the balance)",
		 c->slice_ns / 1e6, c->per_armed * 100, d->cfg.overhead_budget * 100,
		 budget / 1e6, d->sched->balance / 1e6);
	recorder_window_note(d->rec, note);
}

/*
 * The window the budget allows (window.h): *n slices and *armed ns, the
 * learning or not; the note says what was cut and why. False: none.
 */
static bool plan_budget(struct daemon *d, double budget, bool want, size_t *n, int64_t *armed)
{
	struct schedule *s = d->sched;
	struct window_cost c;
	struct window_budget b;
	bool ok;
	char note[320];
	double avail = budget + s->balance;

	/* Nothing measured yet (the first window): as configured. */
	if (!budget_model(s, &c))
		return true;
	ok = window_budget_plan(&c, budget, avail, *n, *armed, want, &b);
	if (want && !b.learn)
		s->learned = true;	/* no learning slice in this interval */
	if (!ok && b.saving) {
		snprintf(note, sizeof(note), "no window: saving for a learning slice of %.3g ms, "
			 "one counting slice would cost %.3g ms, over half of overhead_budget %g%% "
			 "(%.3g ms, %.3g ms in the balance)", c.learn_ns / 1e6, b.cost_ns / 1e6,
			 d->cfg.overhead_budget * 100, budget / 1e6, s->balance / 1e6);
		recorder_window_note(d->rec, note);
		s->budget_skipped++;
		return false;
	}
	if (!ok) {
		snprintf(note, sizeof(note), "no window: one slice would cost %.3g ms, over "
			 "overhead_budget %g%% (%.3g ms, %.3g ms in the balance)", b.cost_ns / 1e6,
			 d->cfg.overhead_budget * 100, budget / 1e6, s->balance / 1e6);
		recorder_window_note(d->rec, note);
		s->budget_skipped++;
		return false;
	}
	if (b.shortened || (want && !b.learn))
		note_budget_cut(d, &c, &b, budget, want, *armed);
	*n = b.n;
	*armed = b.armed_ns;
	return true;
}

/* --- planning an interval ------------------------------------------------ */

/*
 * A quiet host (busy under quiet_cpu of one CPU in the interval just
 * written, all its CPUs together, from /proc/stat) takes no window, but
 * one slice that learns every quiet_learn (with no learning events, a
 * counting slice as often). Every slice arms and disarms its tracepoints,
 * kernel text patches with IPIs to every CPU, and learning arms seven
 * more: on an idle host that was most of what the daemon cost. What the
 * free counters count exactly (ctxt for sched_switch) is written every
 * interval anyway, and a spike in them opens a learning window. What a
 * quiet interval without a window gives up: the window counts (tlb_flush,
 * mm_lru_activate: no row, as in an interval that is not the host's turn
 * under fleet_share), the sched_switch sample (no same-mm estimate for
 * P1), the mm snapshot and the lifetimes of processes that came and went
 * in it. A quiet interval, its turn or not, also reads the free counters
 * for spikes QUIET_SPIKE_SLOWER times less often (spike_period()): each
 * wake-up costs an idle host too.
 */
static bool host_quiet(const struct daemon *d)
{
	double busy = recorder_last(d->rec)->busy;

	log_debug("Host busy %.3g%% of one CPU in the last interval (quiet_cpu %g%%)",
		  busy * 100, d->cfg.quiet_cpu * 100);
	return d->cfg.quiet_cpu > 0 && busy >= 0 && busy < d->cfg.quiet_cpu;
}

/*
 * A quiet interval's plan: false when the interval is not quiet. *window
 * says whether it takes its one slice (the learning is due).
 */
static bool plan_quiet(struct daemon *d, int64_t mono, bool *window)
{
	struct schedule *s = d->sched;
	double busy = recorder_last(d->rec)->busy;
	int len;
	char note[200];

	if (!s->quiet)
		return false;
	*window = !s->learn_last || mono - s->learn_last >= d->cfg.quiet_learn_ns;
	len = snprintf(note, sizeof(note), "quiet (host busy %.2g%% of a CPU, quiet_cpu %g%%): ",
		       busy * 100, d->cfg.quiet_cpu * 100);
	if (*window)
		snprintf(note + len, sizeof(note) - len, "one slice%s", d->stream ? ", learning" : "");
	else
		snprintf(note + len, sizeof(note) - len, "no window (%s %.0f s ago, every %.0f s)",
			 d->stream ? "learned" : "counted", (mono - s->learn_last) / 1e9,
			 d->cfg.quiet_learn_ns / 1e9);
	recorder_window_note(d->rec, note);
	return true;
}

/*
 * Plans the slices of the interval that ends at next_flush (wall clock):
 * none when it is not this host's turn (fleet_share) or the budget leaves
 * too little; otherwise `window` of armed time, shortened to what the
 * last window's measured cost per armed second allows under
 * overhead_budget (a share of every CPU's time over the interval).
 */
void schedule_plan(struct daemon *d, int64_t mono, int64_t wall, int64_t next_flush)
{
	struct schedule *s = d->sched;
	int64_t slot = next_flush / d->cfg.interval_ns - 1;
	int64_t armed = window_len(&d->cfg);
	double budget = interval_budget(d);
	size_t n = d->cfg.window_slices;
	bool quiet_window;
	char note[160];

	s->plan.n = 0;
	s->next_slice = 0;
	s->turns = (struct slice_turns){ 0 };
	s->learned = false;
	s->active = false;
	s->quiet = host_quiet(d);
	/* A partial interval (the first) gets its share of the window: a
	 * daemon restarted often must not be armed more often. */
	if (next_flush - wall < d->cfg.interval_ns)
		armed = (int64_t)((double)armed * (double)(next_flush - wall) / (double)d->cfg.interval_ns);
	if (!window_slot_active(s->host_hash, slot, d->cfg.fleet_share)) {
		snprintf(note, sizeof(note), "no window: not this host's turn (fleet_share %g)",
			 d->cfg.fleet_share);
		recorder_window_note(d->rec, note);
		return;
	}
	s->active = true;
	if (plan_quiet(d, mono, &quiet_window)) {
		if (!quiet_window)
			return;
		n = 1;
	}
	if (!plan_budget(d, budget, d->stream != NULL, &n, &armed))
		return;
	if (armed < WINDOW_MIN_SLICE_NS)
		return;
	while (n > 1 && armed / (int64_t)n < WINDOW_MIN_SLICE_NS)
		n--;
	window_plan_make(&s->plan, mono, mono + (next_flush - wall), n, armed / (int64_t)n, &s->rnd);
}

static int64_t next_slice_on(const struct schedule *s)
{
	return s->next_slice < s->plan.n ? s->plan.s[s->next_slice].start_ns : INT64_MAX;
}

/*
 * What kept the interval's armed time from its plan, after what planning
 * said: slices that never opened (held back past the interval's end) and
 * slices its end cut short. Nothing else shortens a slice, so an interval
 * armed for less than planned says why here.
 */
void schedule_note_turns(struct daemon *d)
{
	const struct schedule *s = d->sched;
	const struct slice_turns *turns = &s->turns;
	size_t unopened = s->plan.n - s->next_slice;
	char note[200];
	int len = 0;

	if (!s->active || (!unopened && !turns->cut))
		return;
	if (unopened)
		len += snprintf(note + len, sizeof(note) - len, "%zu of %zu slices not opened before "
				"the interval's end", unopened, s->plan.n);
	if (turns->cut)
		len += snprintf(note + len, sizeof(note) - len, "%s%zu slice%s cut %.1f ms short by the "
				"interval's end", len ? ", " : "", turns->cut, turns->cut > 1 ? "s" : "",
				turns->cut_ns / 1e6);
	if (turns->waited_ns)
		snprintf(note + len, sizeof(note) - len, " (held back %.0f ms for the last slice's "
			 "disarming)", turns->waited_ns / 1e6);
	recorder_window_note_add(d->rec, note);
}

/* --- disarming ------------------------------------------------------------ */

/*
 * What a slice's end leaves to a thread of its own: closing the counters,
 * disarming the learning events, then streaming the slice's sched_switch
 * sample. Removing a tracepoint's last user waits for RCU grace periods
 * under the kernel's event mutex, tens of milliseconds apiece; in the main
 * loop that made the intervals after a window start late.
 */
struct disarm_job {
	pthread_t thread;
	struct counters_retired *counters;
	struct stream *stream;		/* NULL: no learning events */
	struct flight *flight;		/* disarmed after the stream; NULL: none */
	int64_t switch_ns;		/* the sample's length; 0: none */
	int64_t cpu_ns;			/* the thread's CPU time */
	int64_t main_ns;		/* the main loop's CPU for the slice, arming on */
	bool spike;			/* a spike window's: its cost is the spike's */
	bool inline_run;		/* no thread: run by the main loop */
	bool done;			/* atomic: the thread finished */
	int64_t span_from, span_to;	/* CLOCK_BOOTTIME: arming began, disarming ended */
	char span_what[64];
};


static void *disarm_run(void *arg)
{
	struct disarm_job *j = arg;

	counters_retired_close(j->counters);
	j->counters = NULL;
	if (j->stream) {
		stream_arm(j->stream, false);
		/* The ring spans what the streams saw: a storm a drain of
		 * theirs reports is in the snapshot it asks for. */
		flight_arm(j->flight, false);
		if (j->switch_ns && stream_sample_switches(j->stream, true) == 0) {
			struct timespec ts = { j->switch_ns / NSEC_PER_SEC, j->switch_ns % NSEC_PER_SEC };

			nanosleep(&ts, NULL);
			stream_sample_switches(j->stream, false);
		}
	}
	j->cpu_ns = thread_cpu_time_ns();
	j->span_to = now_ns(CLOCK_BOOTTIME);
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A finished slice's price, by its own kind, from its arming to the last
 * of its records read: the learning slice's disarming often ends in the
 * next interval, which must not price it as that interval's (a counting
 * slice at a learning slice's price shut the windows off in a soak).
 */
static void slice_priced(struct schedule *s, bool learned, int64_t main_ns, int64_t thread_ns,
			 int64_t read_ns)
{
	int64_t price = main_ns + thread_ns + read_ns;

	window_prices_add(learned ? &s->learn_price : &s->slice_price, price);
	log_debug("Window slice%s priced at %.1f ms: %.1f ms arming to closing, %.1f "
		  "disarming, %.1f reading what it streamed", learned ? " (learning)" : "",
		  price / 1e6, main_ns / 1e6, thread_ns / 1e6, read_ns / 1e6);
}

/*
 * One line per window at debug level, on the clock of /proc/uptime and of
 * mmhitm-load --progress: from its arming to the end of its disarming,
 * the time the workload shares its CPUs with it (bench/run-bench.sh's
 * direct cost reads these lines).
 */
static void span_log(const struct disarm_job *j)
{
	log_debug("Armed span %.6f .. %.6f s CLOCK_BOOTTIME (%.1f ms): %s", j->span_from / 1e9,
		  j->span_to / 1e9, (j->span_to - j->span_from) / 1e6, j->span_what);
}

/* A new disarming job for the open window, its span begun. */
static struct disarm_job *job_new(const struct schedule *s)
{
	struct disarm_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->span_from = s->span_from;
	snprintf(j->span_what, sizeof(j->span_what), "%s", s->span_what);
	return j;
}

/*
 * Waits for the last slice's disarming (wait) or looks whether it is done;
 * once it is, what the slice learned is drained, while the tasks it saw are
 * alive to be looked up.
 */
int schedule_disarm_finish(struct daemon *d, bool wait)
{
	struct schedule *s = d->sched;
	struct disarm_job *j = s ? s->job : NULL;
	bool spike, learned;
	int64_t cpu0, main_ns, thread_ns;
	int r = 0;

	if (!j || (!wait && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)))
		return 0;
	if (!j->inline_run)
		pthread_join(j->thread, NULL);
	spike = j->spike;
	learned = j->stream != NULL;
	main_ns = j->main_ns;
	thread_ns = j->cpu_ns;
	span_log(j);
	if (spike) {
		recorder_spike_cost(d->rec, 0, j->cpu_ns);
		s->spike_price_ns = s->spike_main_cpu + j->cpu_ns;
	} else {
		recorder_window_cpu(d->rec, j->cpu_ns);
	}
	free(j);
	s->job = NULL;
	cpu0 = process_cpu_time_ns();
	if (d->stream) {
		r = stream_drain(d->stream, d->learner, false);
		/* The window's last records: a short window (a spike's, a
		 * slice shorter than drain_interval) has no other drain to
		 * see a storm. */
		if (r >= 0)
			storm_check(d, stream_last_lock_records(d->stream));
	}
	/* What the slice streamed, read: part of what it cost. */
	cpu0 = process_cpu_time_ns() - cpu0;
	if (spike) {
		recorder_spike_cost(d->rec, 0, cpu0);
	} else {
		recorder_window_cpu(d->rec, cpu0);
		slice_priced(s, learned, main_ns, thread_ns, cpu0);
	}
	return r;
}

/* Starts the disarming thread on j; false: no thread could be made. */
static bool disarm_start(struct schedule *s, struct disarm_job *j)
{
	s->job = j;
	return pthread_create(&j->thread, NULL, disarm_run, j) == 0;
}

/* --- slices ----------------------------------------------------------------- */

/*
 * Arms the slice's learning events, flight ring, PMU and counters, the
 * counters last: arming the learning events patches the kernel's text
 * (IPIs to every CPU), which must not fall into the counting. -errno,
 * logged and with everything disarmed again, when the counters could not
 * be armed: the slice is skipped.
 */
static int slice_arm(struct daemon *d, int64_t mono, const char *armed)
{
	struct schedule *s = d->sched;
	int r;

	/* flight recorder: armed before the streams, disarmed after them */
	if (s->slice_learns) {
		flight_arm(d->flight, true);
		stream_arm(d->stream, true);
	}
	if (d->sampler)
		sampler_window(d->sampler, true, mono);
	r = recorder_slice_begin(d->rec, s->slice_cpu0, armed, s->slice_learns);
	if (r < 0) {
		log_warning("Failed to arm the counters for a window, skipping it");
		if (s->slice_learns) {
			stream_arm(d->stream, false);
			flight_arm(d->flight, false);
		}
		if (d->sampler)
			sampler_window(d->sampler, false, now_ns(CLOCK_MONOTONIC));
	}
	return r;
}

/*
 * Counted for as long as planned, from the moment the counting started:
 * arming the learning events takes tens of milliseconds (more on a host
 * with slow cross-CPU calls), and a slice they ate down to a millisecond
 * would count the moment right after the kernel's text was patched, when
 * the CPUs run slow, scaled up to the whole interval. So too when the
 * main loop woke late or the slice was held back. The slices it now
 * overlaps are one with it, as long as they were together.
 */
static void slice_set_end(struct daemon *d, int64_t len)
{
	struct schedule *s = d->sched;
	const struct window_slice *sl;

	s->slice_off = counters_enabled_ns(d->counters) + len;
	while (s->next_slice < s->plan.n && s->plan.s[s->next_slice].start_ns <= s->slice_off) {
		sl = &s->plan.s[s->next_slice++];
		s->slice_off += sl->end_ns - sl->start_ns;
	}
	log_debug("Window slice of %.0f ms%s", (s->slice_off - counters_enabled_ns(d->counters)) / 1e6,
		  s->slice_learns ? ", learning" : "");
}

/* Every live mm as a window opens, after what the streams still hold
 * (the learner takes events in time order). */
static void take_mm_snapshot(struct daemon *d)
{
	if (d->stream && stream_drain(d->stream, d->learner, false) < 0)
		log_warning("Failed to drain the learning streams before a snapshot, ignoring");
	mm_snapshot_take(d->snapshot, d->learner, recorder_now(d->rec));
}

/*
 * Arms everything for one slice: the counters, the learning events and the
 * PMU. The sched_switch sample comes after the counting (slice_close): a
 * streamed switch costs the workload far more than a counted one, and
 * counting beside it would measure the switch rate it slows down.
 */
static void slice_open(struct daemon *d, int64_t mono)
{
	struct schedule *s = d->sched;
	const struct window_slice *sl;
	int64_t len;
	char armed[64];

	/*
	 * The last slice's disarming must be over: a tracepoint's users
	 * change one at a time, and waiting for it here would stall the loop.
	 * The slice is held back until it is, looked at every DISARM_POLL_NS,
	 * never skipped: a quiet interval's one slice planned within a
	 * disarming of the last interval's end was skipped so, and the
	 * interval counted nothing.
	 */
	if (s->job && !__atomic_load_n(&s->job->done, __ATOMIC_ACQUIRE)) {
		s->turns.waited_ns += window_plan_delay(&s->plan, s->next_slice, mono + DISARM_POLL_NS);
		return;
	}
	sl = &s->plan.s[s->next_slice++];
	len = sl->end_ns - sl->start_ns;
	if (schedule_disarm_finish(d, false) < 0)
		log_warning("Failed to drain the learning streams, ignoring");
	/* The slice's price counts from here: arming is most of it. */
	s->slice_cpu0 = process_cpu_time_ns();
	s->span_from = now_ns(CLOCK_BOOTTIME);
	/*
	 * The learning events and the sched_switch sample in one slice per
	 * interval: every tracepoint armed and disarmed is a kernel text patch
	 * with IPIs to every CPU, most of what an idle window costs. The
	 * counters, which the estimate's spread needs, and the snapshot (no
	 * patch) in every slice.
	 */
	s->slice_learns = d->stream && !s->learned;
	if (s->slice_learns || !d->stream)
		s->learn_last = mono;
	if (s->slice_learns && learner_pages_full(d->learner))
		stream_skip_pages(d->stream);
	snprintf(armed, sizeof(armed), "counters%s%s%s%s", s->slice_learns ? " learn" : "",
		 s->slice_learns && d->cfg.switch_sample_ns ? " switch" : "", d->sampler ? " pmu" : "",
		 d->snapshot ? " snapshot" : "");
	snprintf(s->span_what, sizeof(s->span_what), "%s", armed);
	if (d->snapshot)
		take_mm_snapshot(d);
	if (slice_arm(d, mono, armed) < 0)
		return;
	slice_set_end(d, len);
	s->learned |= s->slice_learns;
}

/*
 * Ends a spike window: the flight ring and the learning events are
 * disarmed as a slice's are (by the disarming thread, no counters, no
 * switch sample); its main-loop cost is known now, the thread's later.
 */
static int spike_window_close(struct daemon *d, int64_t mono)
{
	struct schedule *s = d->sched;
	struct disarm_job *j;

	s->slice_spike = false;
	s->spike_main_cpu = process_cpu_time_ns() - s->spike_cpu0;
	recorder_spike_cost(d->rec, mono - s->spike_opened, s->spike_main_cpu);
	j = job_new(s);
	if (j) {
		j->stream = d->stream;
		j->flight = d->flight;
		j->spike = true;
		if (disarm_start(s, j))
			return 0;
		s->job = NULL;
		free(j);
	}
	stream_arm(d->stream, false);
	flight_arm(d->flight, false);
	return stream_drain(d->stream, d->learner, false);
}

/*
 * Keeps what the slice saw and starts disarming: the counters are paused
 * and read here, everything else is closed by a thread (disarm_run()),
 * which then streams the slice's sched_switch sample, after the counting:
 * a streamed switch costs the workload far more than a counted one.
 */
static int slice_close(struct daemon *d, int64_t mono)
{
	struct schedule *s = d->sched;
	struct disarm_job *j;

	if (s->slice_off == INT64_MAX)
		return 0;
	s->slice_off = INT64_MAX;
	if (s->slice_spike)
		return spike_window_close(d, mono);
	if (recorder_slice_end(d->rec, mono) < 0)
		log_warning("Failed to read the window's counters, its counts are lost");
	if (d->sampler) {
		sampler_window(d->sampler, false, mono);
		if (sampler_drain(d->sampler, d->agg) < 0)
			log_warning("Failed to read memory samples, ignoring");
	}
	j = job_new(s);
	if (!j) {
		counters_disarm(d->counters);
		if (s->slice_learns) {
			stream_arm(d->stream, false);
			flight_arm(d->flight, false);
		}
		return d->stream ? stream_drain(d->stream, d->learner, false) : 0;
	}
	j->counters = counters_retire(d->counters);
	j->stream = s->slice_learns ? d->stream : NULL;
	j->flight = s->slice_learns ? d->flight : NULL;
	j->switch_ns = s->slice_learns ? d->cfg.switch_sample_ns : 0;
	j->main_ns = process_cpu_time_ns() - s->slice_cpu0;
	if (!disarm_start(s, j)) {
		/* No thread: the same work here, the main loop waiting. */
		j->inline_run = true;
		disarm_run(j);
		return schedule_disarm_finish(d, true);
	}
	return 0;
}

int schedule_close(struct daemon *d, int64_t mono)
{
	return slice_close(d, mono);
}

int schedule_turn(struct daemon *d, struct deadlines *t, int64_t mono, int64_t wall, bool in_slice)
{
	struct schedule *s = d->sched;
	int r;

	if (mono >= s->slice_off || (in_slice && wall >= t->flush_wall)) {
		/* The interval's end cuts a slice short: its note says so. */
		if (mono < s->slice_off && !s->slice_spike) {
			s->turns.cut_ns += s->slice_off - mono;
			s->turns.cut++;
		}
		r = slice_close(d, mono);
		if (r < 0)
			return r;
		t->drain = INT64_MAX;
	}
	if (mono >= next_slice_on(s) && wall < t->flush_wall) {
		/* An open slice took in those it overlaps (slice_set_end()). */
		if (s->slice_off != INT64_MAX && !s->slice_spike)
			return 0;
		/* A spike window still open (planned before the slice was):
		 * it ends here, and the slice is held back until its
		 * disarming is over (slice_open()). */
		if (s->slice_spike) {
			r = slice_close(d, mono);
			if (r < 0)
				return r;
		}
		slice_open(d, mono);
		if (d->stream && s->slice_off != INT64_MAX)
			t->drain = mono + d->cfg.drain_ns;
	}
	return 0;
}

int64_t schedule_next_wait(const struct daemon *d, int64_t mono)
{
	const struct schedule *s = d->sched;
	int64_t wait = next_slice_on(s) - mono;

	if (s->slice_off - mono < wait)
		wait = s->slice_off - mono;
	/* A disarming thread at work: look in now and then. */
	if (s->job && DISARM_POLL_NS < wait)
		wait = DISARM_POLL_NS;
	return wait;
}

/* --- spike windows ------------------------------------------------------ */

/* Why no spike window opens now, for the debug log; NULL: one may. */
static const char *spike_refused(const struct daemon *d, const struct deadlines *t, int64_t mono)
{
	const struct schedule *s = d->sched;

	if (s->slice_off != INT64_MAX || s->job)
		return "a window is open or being disarmed, no extra one";
	if (s->spike_last && mono - s->spike_last < d->cfg.spike_holdoff_ns)
		return "within spike_holdoff of the last spike window, none";
	if (!window_slot_active(s->host_hash, t->flush_wall / d->cfg.interval_ns - 1,
				d->cfg.fleet_share))
		return "not this host's turn (fleet_share), no window";
	if (next_slice_on(s) - mono < d->cfg.spike_window_ns + SPIKE_SLICE_GAP_NS)
		return "the interval's own window opens sooner";
	return NULL;
}

/*
 * Whether a spike window keeps the interval within overhead_budget: the
 * last interval's windows plus this one's spike windows plus the last
 * spike window's cost (none yet: a learning slice's, which arms the
 * same). Said once per holdoff when not, like a window.
 */
static bool spike_affordable(struct daemon *d, int64_t mono, const char *what)
{
	struct schedule *s = d->sched;
	double budget = interval_budget(d);
	int64_t price = s->spike_price_ns;
	char note[192];

	if (!price && window_prices_median(&s->learn_price) > 0)
		price = window_prices_median(&s->learn_price);
	if ((double)(recorder_window_cost_so_far(d->rec) + price) <= budget)
		return true;
	s->spike_last = mono;
	snprintf(note, sizeof(note), "spike in %s: no window, over overhead_budget %g%%", what,
		 d->cfg.overhead_budget * 100);
	recorder_spike(d->rec, NULL, note);
	log_notice("Spike in %s: no extra window, it would exceed overhead_budget %g%% "
		   "(%.3g ms an interval)", what, d->cfg.overhead_budget * 100, budget / 1e6);
	return false;
}

/*
 * A free counter spiked: an extra window at once, which arms what an
 * interval's first slice arms for learning (the learning streams, the
 * flight recorder, the mm snapshot) so that a storm between windows is
 * seen: its objects learned, a lock storm in it snapshotted like one in
 * a regular window. It arms no counter and no PMU and takes no switch
 * sample: placed on a spike, not at a random point, what it counted
 * would bias the interval's estimates upward. Not opened while a window
 * is open or being disarmed, when one of the interval's slices comes
 * within SPIKE_SLICE_GAP_NS, within spike_holdoff of the last, in an
 * interval that is not this host's turn (fleet_share), or when it would
 * take the interval over overhead_budget (spike_affordable()).
 */
static void spike_window_open(struct daemon *d, struct deadlines *t, int64_t mono,
			      const struct spike_hit *hit)
{
	struct schedule *s = d->sched;
	const char *refused;
	char what[128], note[192];

	snprintf(what, sizeof(what), "%s %.3g/s, %.0fx its median %.3g/s",
		 spike_counter_name(s->spike, hit->counter), hit->rate,
		 hit->median > 0 ? hit->rate / hit->median : 0.0, hit->median);
	refused = spike_refused(d, t, mono);
	if (refused) {
		log_debug("Spike in %s: %s", what, refused);
		return;
	}
	if (!spike_affordable(d, mono, what))
		return;
	if (schedule_disarm_finish(d, false) < 0)
		log_warning("Failed to drain the learning streams, ignoring");
	s->spike_cpu0 = process_cpu_time_ns();
	s->span_from = now_ns(CLOCK_BOOTTIME);
	snprintf(s->span_what, sizeof(s->span_what), "%s", d->snapshot ? "spike learn snapshot" : "spike learn");
	s->spike_last = s->spike_opened = mono;
	if (d->snapshot)
		take_mm_snapshot(d);
	if (learner_pages_full(d->learner))
		stream_skip_pages(d->stream);
	flight_arm(d->flight, true);
	stream_arm(d->stream, true);
	s->learn_last = mono;
	s->slice_spike = true;
	s->slice_learns = true;
	s->slice_off = mono + d->cfg.spike_window_ns;
	t->drain = mono + d->cfg.drain_ns;
	snprintf(note, sizeof(note), "spike window of %.0f ms: %s", d->cfg.spike_window_ns / 1e6, what);
	recorder_spike(d->rec, d->snapshot ? "spike learn snapshot" : "spike learn", note);
	log_info("Spike in %s: an extra window of %.0f ms", what, d->cfg.spike_window_ns / 1e6);
}

/* Between windows and in them: the free counters read, a spike judged. */
static void spike_check(struct daemon *d, struct deadlines *t, int64_t mono)
{
	struct schedule *s = d->sched;
	struct spike_reading rd;
	struct spike_hit hit;
	int r;

	if (spike_watch_read(s->spike, &rd) < 0)
		return;
	r = spike_watch_feed(s->spike, &rd, (double)d->cfg.spike_factor, (double)d->cfg.spike_min_rate,
			     d->boot.cpus_online, &hit);
	if (!s->spike_ready_said && spike_watch_ready(s->spike) && d->cfg.spike_factor) {
		log_info("Spike watch ready: free counters judged against the median of their last "
			 "%d readings, every %g s", SPIKE_HISTORY, d->cfg.spike_check_ns / 1e9);
		s->spike_ready_said = true;
	}
	if (r == 1)
		spike_window_open(d, t, mono, &hit);
}

/*
 * How often the free counters are read for spikes: spike_check,
 * QUIET_SPIKE_SLOWER times that while the host is quiet. A storm that
 * starts on a quiet host is seen at most QUIET_SPIKE_SLOWER spike_checks
 * later (4 s by default), judged by its rate per second as any other.
 */
static int64_t spike_period(const struct daemon *d)
{
	return d->sched->quiet ? QUIET_SPIKE_SLOWER * d->cfg.spike_check_ns : d->cfg.spike_check_ns;
}

int64_t schedule_spike_start(const struct daemon *d, int64_t mono)
{
	return d->sched->spike && d->cfg.spike_check_ns ? mono + d->cfg.spike_check_ns : INT64_MAX;
}

void schedule_spikes(struct daemon *d, struct deadlines *t, int64_t mono)
{
	if (!d->sched->spike || !d->cfg.spike_check_ns) {
		t->spike = INT64_MAX;
		return;
	}
	/* (also after a reload turned it on) */
	if (t->spike == INT64_MAX)
		t->spike = mono + spike_period(d);
	if (mono >= t->spike) {
		int64_t p = spike_period(d);

		spike_check(d, t, mono);
		/* On a grid: a late wake-up does not push the next reading
		 * later, and readings a loaded host kept the daemon from are
		 * skipped, not made up in a burst. */
		t->spike += p;
		if (t->spike <= mono)
			t->spike = mono + p - (mono - t->spike) % p;
	}
}
