// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitmd: records kernel mm tracepoints and cache-line contention into a
 * local SQLite database, one transaction per interval.
 *
 * This file: main(), the options, the signals and the main loop. The main
 * loop is single-threaded: a signalfd and a poll timeout drive the
 * learning-stream drains, the windows (schedule.c), the interval flushes
 * and the watchdog. Setup, reload and teardown are in setup.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "cli.h"
#include "config.h"
#include "counters.h"
#include "daemon.h"
#include "db.h"
#include "exitcode.h"
#include "flight.h"
#include "log.h"
#include "paths.h"
#include "metrics.h"
#include "recorder.h"
#include "retention.h"
#include "sampler.h"
#include "schedule.h"
#include "setup.h"
#include "stream.h"
#include "util.h"

#ifndef MMHITM_VERSION
#error "MMHITM_VERSION comes from the Makefile (debian/changelog's version)"
#endif

/* How often the sample rings are read while sampling (ns). */
#define SAMPLER_DRAIN_NS (200 * NSEC_PER_MSEC)


/* Backoff of the final write's retries at stop (ms): doubling. */
#define STOP_RETRY_FIRST_MS 250
#define STOP_RETRY_MAX_MS 4000

static void help(void)
{
	printf("Usage: mmhitmd [OPTIONS]\n\n"
	       "Records kernel mm tracepoints and HITM cache-line contention into a\n"
	       "local SQLite database, one transaction per interval.\n\n"
	       "  -c, --config PATH       config file (default %s)\n"
	       "  -n, --check-config      validate the configuration and exit (78 if bad)\n"
	       "      --print-config      print the effective configuration and exit\n"
	       "  -f, --foreground        stay in the foreground (default under systemd)\n"
	       "  -h, --help              this help\n"
	       "      --version           print the version\n\n"
	       "Every configuration option is also a flag, which wins over the file:\n",
	       CONFIG_DEFAULT_PATH);
	for (unsigned int i = 0; config_option_info(i); i++) {
		const struct config_option_info *o = config_option_info(i);
		char flag[64];

		snprintf(flag, sizeof(flag), "--%s %s", o->key, o->arg);
		for (char *p = flag; *p && *p != ' '; p++)
			if (*p == '_')
				*p = '-';
		printf("      %-28s %s\n", flag, o->help);
	}
	printf("\nSignals: SIGTERM, SIGINT, SIGQUIT and SIGALRM write the partial interval\n"
	       "and stop; SIGHUP reloads the configuration without losing the current\n"
	       "interval; SIGUSR2 writes the partial interval now and logs a status line;\n"
	       "SIGUSR1 saves the flight recorder as a trace.dat (snapshot_dir).\n");
}

enum { OPT_VERSION = 0x100, OPT_PRINT_CONFIG, OPT_CONFIG_BASE = 0x200 };

/* getopt_long table: fixed options, then two per config key. */
static struct option *build_longopts(void)
{
	static const struct option fixed[] = {
		{ "config",       required_argument, NULL, 'c' },
		{ "check-config", no_argument,       NULL, 'n' },
		{ "print-config", no_argument,       NULL, OPT_PRINT_CONFIG },
		{ "foreground",   no_argument,       NULL, 'f' },
		{ "help",         no_argument,       NULL, 'h' },
		{ "version",      no_argument,       NULL, OPT_VERSION },
	};

	return config_longopts_new(fixed, ARRAY_SIZE(fixed), OPT_CONFIG_BASE);
}

static void free_longopts(struct option *o)
{
	config_longopts_free(o);
}

/*
 * Builds the configuration: defaults, then the file, then the flags. Run
 * at start and again on SIGHUP, so flags keep winning after a reload.
 */
static int load_config(const struct options *opts, struct config *ret)
{
	struct option *longopts;
	struct config c;
	int ch, r, bad = 0;

	config_init(&c);
	r = config_load(&c, opts->config_path, opts->config_explicit);
	if (r < 0)
		bad++;

	longopts = build_longopts();
	if (!longopts) {
		config_done(&c);
		return log_oom();
	}
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(opts->argc, opts->argv, "c:nfh", longopts, NULL)) != -1) {
		char err[256];

		if (ch < OPT_CONFIG_BASE)
			continue;
		r = config_set(&c, config_option_info(ch - OPT_CONFIG_BASE)->key, optarg, err, sizeof(err));
		if (r < 0) {
			log_error("--%s: %s", config_option_info(ch - OPT_CONFIG_BASE)->key, err);
			bad++;
		}
	}
	free_longopts(longopts);
	if (!bad && config_verify(&c) < 0)
		bad++;
	if (bad) {
		config_done(&c);
		return -EINVAL;
	}
	*ret = c;
	return 0;
}

static int parse_argv(int argc, char **argv, struct options *o)
{
	struct option *longopts = build_longopts();
	int ch;

	if (!longopts)
		return log_oom();
	o->config_path = CONFIG_DEFAULT_PATH;
	o->argc = argc;
	o->argv = argv;
	while ((ch = cli_getopt(argc, argv, "c:nfh", longopts, "mmhitmd")) != -1) {
		switch (ch) {
		case 'c':
			o->config_path = optarg;
			o->config_explicit = true;
			break;
		case 'n':
			o->check_config = true;
			break;
		case 'f':
			o->foreground = true;
			break;
		case OPT_PRINT_CONFIG:
			o->print_config = true;
			break;
		case 'h':
			help();
			free_longopts(longopts);
			return 1;
		case OPT_VERSION:
			printf("mmhitmd %s\n", MMHITM_VERSION);
			free_longopts(longopts);
			return 1;
		case '?':
			free_longopts(longopts);
			return -EINVAL;	/* said by cli_getopt() */
		default:
			break;	/* a config flag: applied by load_config() */
		}
	}
	free_longopts(longopts);
	if (optind < argc)
		return log_error_errno(EINVAL, "Unexpected argument \"%s\"", argv[optind]);
	return 0;
}

/*
 * A classic daemon outside systemd: the parent waits until the child is
 * recording (or failed), so `mmhitmd && echo started` means something.
 */
static int daemonize(int *ret_ready_fd)
{
	int pipefd[2], status;
	pid_t pid;
	char c;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(pipefd[1]);
		if (read(pipefd[0], &c, 1) == 1)
			_exit(0);
		/* The child died before it was ready; it logged why. */
		waitpid(pid, &status, 0);
		_exit(WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
	}
	close(pipefd[0]);
	setsid();
	log_use_syslog();
	*ret_ready_fd = pipefd[1];
	return 0;
}

static void handle_signal(struct daemon *d, const struct signalfd_siginfo *si, bool *stop);

/*
 * Sleeps up to ms while handling signals: -ECANCELED as soon as one says
 * stop, 0 after the time.
 */
static int sleep_on_signals(struct daemon *d, int64_t ms)
{
	int64_t until = now_ns(CLOCK_MONOTONIC) + ms * NSEC_PER_MSEC;

	for (;;) {
		struct pollfd pfd = { .fd = d->sigfd, .events = POLLIN };
		int64_t left = until - now_ns(CLOCK_MONOTONIC);
		struct signalfd_siginfo si;
		bool stop = false;

		if (left <= 0)
			return 0;
		if (poll(&pfd, 1, (int)((left + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)) <= 0)
			continue;
		while (read(d->sigfd, &si, sizeof(si)) == sizeof(si))
			handle_signal(d, &si, &stop);
		if (stop)
			return -ECANCELED;
	}
}

/*
 * The daemon's heap is a few MB live; what it frees, glibc keeps unless
 * told otherwise (bench/README.md, "The daemon's memory": anonymous memory
 * climbed from 3 to 8 MB over a 40-minute soak with about 3 MB live).
 *
 * - Fixed thresholds. The learning stream's merge buffer grows to a few MB
 *   in a storm and shrinks after it (stream.c). glibc serves a block that
 *   big with mmap(), but freeing one raises its mmap threshold to the
 *   block's size (up to 32 MB) and the trim threshold to twice that, so
 *   the next storm's buffer came from the heap and stayed there. Setting
 *   the thresholds turns that adjustment off (mallopt(3)): a block of
 *   128 KiB or more is mapped and unmapped, and a free top of the heap
 *   over 128 KiB goes back at once.
 * - A trim at most once a minute (after an interval's flush) returns the
 *   free pages below live chunks too, which the top's trim cannot reach:
 *   about a millisecond on this heap (bench/README.md).
 */
#define MALLOC_THRESHOLD (128 * 1024)
#define TRIM_EVERY_NS (60 * NSEC_PER_SEC)

static void trim_heap(struct daemon *d)
{
	int64_t t0 = now_ns(CLOCK_MONOTONIC);
	int used = 0, hit = 0, miss = 0, hi;
	bool trimmed;

	if (d->trimmed_ns && t0 - d->trimmed_ns < TRIM_EVERY_NS)
		return;
	d->trimmed_ns = t0;
	trimmed = malloc_trim(0);
	/* What the database cache holds and how it served since the last. */
	sqlite3_db_status(d->db, SQLITE_DBSTATUS_CACHE_USED, &used, &hi, 0);
	sqlite3_db_status(d->db, SQLITE_DBSTATUS_CACHE_HIT, &hit, &hi, 1);
	sqlite3_db_status(d->db, SQLITE_DBSTATUS_CACHE_MISS, &miss, &hi, 1);
	log_debug("Heap %s in %" PRId64 " us; database cache %d kB, %d hits, %d misses",
		  trimmed ? "trimmed" : "had nothing to trim", (now_ns(CLOCK_MONOTONIC) - t0) / 1000,
		  used / 1024, hit, miss);
}

/* Housekeeping after an interval was written: retention, export, budget. */
static void after_flush(struct daemon *d, int64_t now)
{
	struct retention_policy pol = {
		.detail_ns = d->cfg.retention_detail_ns,
		.raw_ns = d->cfg.retention_raw_ns,
		.rollup_ns = d->cfg.retention_rollup_ns,
		.max_bytes = d->cfg.max_db_size,
		.ship_required = d->cfg.ship_required,
		.ship_rollup_s = d->cfg.ship_rollup_ns / NSEC_PER_SEC,
	};
	struct retention_result res = {};
	const struct recorder_last *last = recorder_last(d->rec);
	uint64_t size = 0;
	int64_t c0 = thread_cpu_time_ns(), c1, c2;
	int r;

	/* Attribution before retention, so what retention rolls up is
	 * attributed; incremental, so a quiet interval costs a few queries. */
	if (d->analysis) {
		r = analysis_step(d->analysis, d->db, d->boot_id);
		if (r < 0)
			log_warning_errno(r, "Attribution failed: %s, retrying next interval", db_error(r));
		else
			d->analyzed_ns = now;
		d->paths.totals = analysis_totals(d->analysis);
	}

	c1 = thread_cpu_time_ns();
	r = retention_enforce(d->db, now, &pol, &res);
	if (r < 0) {
		log_warning_errno(r, "Retention failed: %s, retrying next interval", db_error(r));
	} else {
		if (res.intervals || res.detail_intervals || res.hours || res.objects)
			log_info("Retention: dropped %" PRId64 " intervals, the detail of %" PRId64
				 ", %" PRId64 " rollup hours, %" PRId64 " learned objects dead before the"
				 " oldest interval (%" PRIu64 " -> %" PRIu64 " bytes)",
				 res.intervals, res.detail_intervals, res.hours, res.objects,
				 res.bytes_before, res.bytes_after);
		if (res.over_budget && !d->budget_warned)
			log_warning("Database is %" PRIu64 " bytes with nothing left to drop, over "
				    "max_db_size=%" PRIu64 "; raise it", res.bytes_after, d->cfg.max_db_size);
		d->budget_warned = res.over_budget;
	}

	/* At most one warning an hour: a busy host should not flood logs. */
	if (d->cfg.cpu_budget_pct && last->len_ns >= d->cfg.interval_ns / 2 &&
	    last->cpu_ns * 100 > (int64_t)d->cfg.cpu_budget_pct * last->len_ns &&
	    now - d->cpu_warned_ns > 3600 * NSEC_PER_SEC) {
		log_warning("mmhitmd used %.2f%% of a CPU over the last interval, above cpu_budget=%" PRIu64 "%%",
			    100.0 * last->cpu_ns / last->len_ns, d->cfg.cpu_budget_pct);
		d->cpu_warned_ns = now;
	}

	if (d->cfg.metrics_file[0]) {
		struct daemon_export x = {
			.db_max_bytes = d->cfg.max_db_size,
			.interval_ns = d->cfg.interval_ns,
			.written_ns = now,
			.analyzed_ns = d->analysis ? d->analyzed_ns : -1,
			.spike_checks = schedule_spike_checks(d),
			.windows_skipped = schedule_windows_skipped(d),
		};

		db_size_bytes(d->db, &size);
		x.db_bytes = size;
		metrics_write_file(d->cfg.metrics_file, &d->boot, d->rec, &d->paths, &x);
	}
	c2 = thread_cpu_time_ns();
	trim_heap(d);
	/* What an idle host pays each interval, part by part (bench/README.md). */
	log_debug("After the flush, CPU: attribution %" PRId64 " us, retention and export %" PRId64
		  " us, heap %" PRId64 " us", (c1 - c0) / 1000, (c2 - c1) / 1000,
		  (thread_cpu_time_ns() - c2) / 1000);
}

/* Lock learning during a storm needs windows even without switch sampling. */
#define LOCK_WINDOW_NS (20 * NSEC_PER_MSEC)

/*
 * Continuous: one sched_switch window per interval, at a random point of
 * it: the same moment every interval (its start, say) would see the same
 * phase of a periodic workload every time. The window has a tracefs
 * instance of its own: should it run long (mmhitmd not scheduled to close
 * it in time) or overflow, it loses part of its own sample, never a
 * learning event.
 */
static int64_t switch_window_ns(const struct daemon *d)
{
	return d->cfg.switch_sample_ns ?: LOCK_WINDOW_NS;
}

static bool windows_wanted(const struct daemon *d)
{
	return d->stream && (d->cfg.switch_sample_ns || d->cfg.learn_locks);
}

/* Once a drain period has passed: its lock records, or 0. */
static uint64_t lock_mode_after_drain(struct daemon *d, int64_t mono)
{
	uint64_t per_drain;

	if (stream_lock_period(d->stream, mono, d->cfg.drain_ns, &per_drain) < 0)
		return 0;
	if (stream_locks_are_windowed(d->stream) || per_drain <= lock_burst(d))
		return per_drain;
	if (stream_locks_windowed(d->stream, true) == 0)
		log_info("Lock contention storm (%" PRIu64 " records a drain period): learning lock "
			 "addresses in the sample windows only", per_drain);
	return per_drain;
}

static void lock_mode_after_flush(struct daemon *d)
{
	double per_drain;

	if (!stream_locks_are_windowed(d->stream) || recorder_last(d->rec)->len_ns <= 0)
		return;
	per_drain = (double)recorder_last_count(d->rec, "lock:contention_begin") *
		    d->cfg.drain_ns / recorder_last(d->rec)->len_ns;
	if (per_drain < lock_burst(d) / 2 && stream_locks_windowed(d->stream, false) == 0)
		log_info("Lock contention calm again: learning lock addresses continuously");
}

static int64_t next_switch_window(struct daemon *d, int64_t mono, int64_t until_flush)
{
	int64_t room = until_flush - switch_window_ns(d);

	if (room <= 0)
		return mono;
	return mono + (int64_t)((double)random() / RAND_MAX * (double)room);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* SIGUSR2's line: what an operator asks a running daemon. */
static void log_status(struct daemon *d)
{
	const struct recorder_totals *tot = recorder_totals(d->rec);
	uint64_t size = 0;

	if (d->db)
		db_size_bytes(d->db, &size);
	log_notice("Status: recording into %s every %gs; %" PRIu64 " intervals written, %" PRIu64
		   " folded into others, %" PRIu64 " learning events lost, %" PRIu64 " records read; "
		   "RSS %" PRId64 " kB, database %" PRIu64 " bytes%s",
		   d->cfg.db_path, d->cfg.interval_ns / 1e9, tot->written, tot->dropped,
		   tot->lost, tot->learn_records, tot->rss_kb, size,
		   recorder_failing(d->rec) ? "; writes failing now" : "");
}

/* SIGHUP: the file and the flags read again; setup.c adopts what it can. */
static void reload(struct daemon *d)
{
	struct config c;

	log_info("Reloading configuration from %s", d->opts.config_path);
	if (load_config(&d->opts, &c) < 0) {
		log_error("Keeping the running configuration");
		return;
	}
	daemon_reload(d, &c);
}

/*
 * Every signal the daemon takes goes through its signalfd to here, also
 * while it waits for the database at start (not recording yet).
 */
static void handle_signal(struct daemon *d, const struct signalfd_siginfo *si, bool *stop)
{
	int64_t wall;

	switch (si->ssi_signo) {
	case SIGHUP:
		sd_notify(0, "RELOADING=1");
		reload(d);
		sd_notify(0, "READY=1");
		break;
	case SIGUSR1:
		/* mmhitm snapshot sends it with a value (sigqueue) */
		if (!d->flight)
			log_notice("Got SIGUSR1: no flight recorder (snapshots = no, or it could not "
				   "be set up), ignoring");
		else
			flight_request(d->flight, si->ssi_code == SI_QUEUE &&
					  si->ssi_int == FLIGHT_REQUEST_MAGIC ? "request" : "SIGUSR1");
		break;
	case SIGUSR2:
		if (!d->recording) {
			log_notice("Got SIGUSR2: not recording yet (waiting for the database)");
			break;
		}
		wall = recorder_now(d->rec);
		/* Cut the interval here; the rest of its slot is the next row. */
		if (recorder_flush(d->rec, wall, false) == 0)
			after_flush(d, wall);
		log_status(d);
		break;
	default:	/* SIGTERM, SIGINT, SIGQUIT, SIGALRM */
		log_info("Got SIG%s, %s", sigabbrev_np((int)si->ssi_signo) ?: "?",
			 d->recording ? "writing the partial interval and stopping" : "stopping");
		*stop = true;
		break;
	}
}

/*
 * The last write, at stop: what a full disk or a held lock refuses is
 * retried for stop_retry, then what is lost is said exactly.
 */
static int final_flush(struct daemon *d)
{
	int64_t give_up = now_ns(CLOCK_MONOTONIC) + d->cfg.stop_retry_ns;
	int64_t delay = STOP_RETRY_FIRST_MS;
	int r;

	sd_notify(0, "STOPPING=1");
	if (!d->recording)
		return 0;
	for (;;) {
		int64_t wall = recorder_now(d->rec);

		r = recorder_flush(d->rec, wall, true);
		if (r == 0) {
			after_flush(d, wall);
			return 0;
		}
		if (!db_error_transient(r) ||
		    now_ns(CLOCK_MONOTONIC) + delay * NSEC_PER_MSEC > give_up) {
			recorder_log_unwritten(d->rec, wall, r);
			return r;
		}
		sd_notifyf(0, "STATUS=Stopping: retrying to write the unwritten intervals (%s)\n"
			   "EXTEND_TIMEOUT_USEC=%" PRId64, strerror(-r), (delay + 15000) * 1000);
		/* A second stop signal gives up at once. */
		if (sleep_on_signals(d, delay) < 0)
			give_up = 0;
		delay = delay * 2 > STOP_RETRY_MAX_MS ? STOP_RETRY_MAX_MS : delay * 2;
	}
}

static int64_t next_wait(struct daemon *d, const struct deadlines *t, int64_t mono, int64_t wall)
{
	int64_t wait = t->flush_wall - wall;

	wait = min64(wait, t->drain - mono);
	wait = min64(wait, t->stop - mono);
	wait = min64(wait, t->ping - mono);
	wait = min64(wait, t->switch_off - mono);
	wait = min64(wait, t->switch_on - mono);
	wait = min64(wait, t->spike - mono);
	wait = min64(wait, schedule_next_wait(d, mono));
	/* A snapshot at work: look in now and then. */
	if (flight_busy(d->flight))
		wait = min64(wait, DISARM_POLL_NS);
	/* A full sample ring loses samples: drain it often while on,
	 * and wake up for the duty cycle's next turn. */
	if (d->sampler && sampler_active(d->sampler) && wait > SAMPLER_DRAIN_NS)
		wait = SAMPLER_DRAIN_NS;
	if (d->sampler && !d->windowed)
		wait = min64(wait, sampler_next_change(d->sampler) - mono);
	return wait < 0 ? 0 : wait;
}

/* Sleeps until the next deadline or a signal; handles the signals. */
static int wait_and_signals(struct daemon *d, int64_t wait, bool *stop)
{
	struct pollfd pfd = { .fd = d->sigfd, .events = POLLIN };
	int r;

	r = poll(&pfd, 1, (int)((wait + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC));
	if (r < 0 && errno != EINTR)
		return log_error_errno(errno, "poll failed: %m");
	if (r > 0) {
		struct signalfd_siginfo si;

		while (read(d->sigfd, &si, sizeof(si)) == sizeof(si))
			handle_signal(d, &si, stop);
	}
	return 0;
}


/* Continuous: the sched_switch sample windows. */
static void turn_switch_windows(struct daemon *d, struct deadlines *t, int64_t mono)
{
	if (mono >= t->switch_on) {
		t->switch_on = INT64_MAX;
		if (stream_sample_switches(d->stream, true) == 0)
			t->switch_off = mono + switch_window_ns(d);
	}
	if (mono >= t->switch_off) {
		stream_sample_switches(d->stream, false);
		t->switch_off = INT64_MAX;
		/* Now, while the tasks are alive to be looked up. */
		t->drain = mono;
	}
}

static int drain(struct daemon *d, struct deadlines *t, int64_t mono)
{
	int r;

	r = stream_drain(d->stream, d->learner, false);
	if (r < 0) {
		/* Still write what was counted. */
		final_flush(d);
		return r;
	}
	storm_check(d, d->windowed ? stream_last_lock_records(d->stream) : lock_mode_after_drain(d, mono));
	t->drain = d->windowed && !schedule_in_window(d) ? INT64_MAX : mono + d->cfg.drain_ns;
	return 0;
}

/* The interval's row, then the plan of the next interval. */
static void flush(struct daemon *d, struct deadlines *t, int64_t wall)
{
	int64_t c0;

	/* Continuous: CPUs that came online are counted from now on
	 * (windowed, each arming looks at the online CPUs itself). */
	if (!d->windowed)
		counters_refresh_cpus(d->counters);
	if (d->windowed)
		schedule_note_turns(d);
	/* A failed write is logged and folded into the next. */
	c0 = thread_cpu_time_ns();
	if (recorder_flush(d->rec, wall, false) == 0) {
		log_debug("Interval written in %" PRId64 " us of CPU", (thread_cpu_time_ns() - c0) / 1000);
		if (d->windowed)
			schedule_account(d);
		after_flush(d, wall);
		if (!d->windowed)
			lock_mode_after_flush(d);
	}
	/* After a wall clock set forward, the rows' clock is on the new time. */
	wall = recorder_now(d->rec);
	t->flush_wall = interval_boundary_after(wall, d->cfg.interval_ns);
	if (d->windowed)
		schedule_plan(d, now_ns(CLOCK_MONOTONIC), wall, t->flush_wall);
	else if (windows_wanted(d))
		t->switch_on = next_switch_window(d, now_ns(CLOCK_MONOTONIC), t->flush_wall - wall);
}

static void announce(struct daemon *d, int ready_fd)
{
	sd_notifyf(0, "READY=1\nSTATUS=Recording into %s every %gs", d->cfg.db_path,
		   d->cfg.interval_ns / 1e9);
	if (ready_fd >= 0) {
		(void)!write(ready_fd, "", 1);
		close(ready_fd);
	}
	log_info("Recording into %s, interval %gs, %s%s", d->cfg.db_path, d->cfg.interval_ns / 1e9,
		 d->windowed ? "windowed" : "continuous", d->cfg.duration_ns ? "" : ", until stopped");
}

/* The first interval's deadlines and plan; systemd and the parent told. */
static void run_start(struct daemon *d, struct deadlines *t, int ready_fd)
{
	int64_t wall = recorder_now(d->rec), mono = now_ns(CLOCK_MONOTONIC);

	*t = (struct deadlines){
		.flush_wall = interval_boundary_after(wall, d->cfg.interval_ns),
		/* Without a learning stream there is nothing to drain;
		 * windowed, only while a slice is open. */
		.drain = d->stream && !d->windowed ? mono + d->cfg.drain_ns : INT64_MAX,
		.stop = d->cfg.duration_ns ? mono + d->cfg.duration_ns : INT64_MAX,
		.ping = INT64_MAX,
		.switch_on = INT64_MAX,
		.switch_off = INT64_MAX,
		.spike = schedule_spike_start(d, mono),
	};
	if (d->windowed)
		schedule_plan(d, mono, wall, t->flush_wall);
	else if (d->sampler)
		sampler_tick(d->sampler, mono);
	if (!d->windowed && windows_wanted(d))
		t->switch_on = next_switch_window(d, mono, t->flush_wall - wall);
	if (sd_watchdog_enabled(0, &d->watchdog_usec) > 0)
		t->ping = mono + (int64_t)d->watchdog_usec * 1000 / 2;
	announce(d, ready_fd);
}

/* Whatever is due after a wake-up, in order; -errno ends the loop. */
static int turn(struct daemon *d, struct deadlines *t, int64_t mono, int64_t wall, bool in_slice)
{
	int r;

	/* flight recorder: a snapshot's child done, listed, ring renewed */
	flight_poll(d->flight, d->db, d->boot_id, schedule_learning(d), false);
	if (d->sampler) {
		if (!d->windowed)
			sampler_tick(d->sampler, mono);
		if (sampler_active(d->sampler) && sampler_drain(d->sampler, d->agg) < 0)
			log_warning("Failed to read memory samples, ignoring");
	}
	r = schedule_disarm_finish(d, false);
	if (r < 0) {
		final_flush(d);
		return r;
	}
	r = schedule_turn(d, t, mono, wall, in_slice);
	if (r < 0)
		return r;
	schedule_spikes(d, t, mono);
	turn_switch_windows(d, t, mono);
	if (d->stream && mono >= t->drain) {
		r = drain(d, t, mono);
		if (r < 0)
			return r;
	}
	if (wall >= t->flush_wall)
		flush(d, t, wall);
	return 0;
}

/* At stop: the last window closed and drained, the partial interval written. */
static int run_stop(struct daemon *d)
{
	int r;

	r = schedule_close(d, now_ns(CLOCK_MONOTONIC));
	if (r >= 0)
		r = schedule_disarm_finish(d, true);
	if (r < 0)
		log_warning_errno(r, "Failed to read the last window's learning events: %m, ignoring");
	r = final_flush(d);
	log_info("Stopped after %" PRIu64 " intervals", recorder_totals(d->rec)->written);
	return r;
}

static int run_loop(struct daemon *d, int ready_fd)
{
	struct deadlines t;
	bool stop = false;
	int r;

	run_start(d, &t, ready_fd);
	while (!stop) {
		bool in_slice = schedule_in_window(d);
		/* The rows' clock: a wall clock set back or forward moves no
		 * deadline; the flush after the step says it. */
		int64_t wall = recorder_now(d->rec), mono = now_ns(CLOCK_MONOTONIC);

		r = wait_and_signals(d, next_wait(d, &t, mono, wall), &stop);
		if (r < 0)
			return r;

		mono = now_ns(CLOCK_MONOTONIC);
		wall = recorder_now(d->rec);
		if (mono >= t.stop)
			stop = true;
		if (mono >= t.ping) {
			sd_notify(0, "WATCHDOG=1");
			t.ping = mono + (int64_t)d->watchdog_usec * 1000 / 2;
		}
		if (stop)
			break;
		r = turn(d, &t, mono, wall, in_slice);
		if (r < 0)
			return r;
	}
	return run_stop(d);
}

/* Records until told to stop; a failure nobody below said is said here. */
static int run(struct daemon *d, int ready_fd)
{
	int r = run_loop(d, ready_fd);

	if (r < 0 && !log_errors_said())
		log_error("Stopped: %s", db_error(r));
	return r;
}

/* Says why the daemon did not start, to systemd and, if nobody below did, in the log. */
static int setup_failed(int r)
{
	if (r == -ECANCELED) {
		log_info("Stopped before recording");	/* a signal while waiting for the DB */
		return r;
	}
	sd_notifyf(0, "STATUS=Failed to start: %s\nERRNO=%d", db_error(r), -r);
	if (!log_errors_said())
		log_error("Failed to start: %s", db_error(r));
	return r;
}

int main(int argc, char **argv)
{
	struct daemon d = { .sigfd = -1, .sleep_on_signals = sleep_on_signals };
	int ready_fd = -1;
	sigset_t mask;
	int r;

	log_setup("mmhitmd");
	mallopt(M_MMAP_THRESHOLD, MALLOC_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, MALLOC_THRESHOLD);
	if (paths_load() < 0)
		return EXIT_CONFIG;
	r = parse_argv(argc, argv, &d.opts);
	if (r != 0)
		return r > 0 ? 0 : 2;

	r = load_config(&d.opts, &d.cfg);
	if (d.opts.check_config) {
		if (r < 0)
			return EXIT_CONFIG;
		/* the default file may be absent (config_load() reads none) */
		if (access(d.opts.config_path, F_OK) < 0 && errno == ENOENT)
			printf("no configuration file at %s: the defaults and the command line "
			       "are valid\n", d.opts.config_path);
		else
			printf("%s: configuration OK\n", d.opts.config_path);
		config_done(&d.cfg);
		return 0;
	}
	if (r < 0)
		return EXIT_CONFIG;
	log_set_max_level(d.cfg.log_level);
	if (d.opts.print_config) {
		config_dump(&d.cfg, stdout);
		config_done(&d.cfg);
		return 0;
	}
	if (geteuid() != 0)
		log_notice("Not running as root: tracefs and perf counting may be refused");

	/* systemd (Type=notify) supervises us; elsewhere, detach unless asked not to. */
	if (!d.opts.foreground && !getenv("NOTIFY_SOCKET") && !getenv("INVOCATION_ID")) {
		r = daemonize(&ready_fd);
		if (r < 0) {
			log_error_errno(r, "Failed to detach: %m");
			return 1;
		}
	}

	srandom((unsigned int)(now_ns(CLOCK_MONOTONIC) ^ getpid()));
	/* A log write to a pipe whose reader left fails with EPIPE and goes
	 * to syslog instead (log.c); it must not kill the recorder. */
	signal(SIGPIPE, SIG_IGN);
	/* Every signal that would end us otherwise, through the main loop,
	 * so each stop writes the partial interval and removes the instances
	 * (SIGQUIT: no core dump under systemd either). */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGALRM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGUSR2);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	d.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d.sigfd < 0) {
		log_error_errno(errno, "signalfd failed: %m");
		return 1;
	}

	r = daemon_setup(&d);
	/* Setup parsed kallsyms and BTF (megabytes, freed now): give the
	 * memory back rather than carry it for the daemon's lifetime. */
	malloc_trim(0);
	r = r >= 0 ? run(&d, ready_fd) : setup_failed(r);
	daemon_teardown(&d);
	return r < 0 && r != -ECANCELED ? d.exit_status ?: EXIT_FAILURE : EXIT_SUCCESS;
}
