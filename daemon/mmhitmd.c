// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitmd: records kernel mm tracepoints and cache-line contention into a
 * local SQLite database, one transaction per interval.
 *
 * The main loop is single-threaded: a signalfd and a poll timeout drive
 * the learning-stream drains, the interval flushes and the watchdog.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "boot.h"
#include "btf.h"
#include "cli.h"
#include "config.h"
#include "counters.h"
#include "db.h"
#include "events.h"
#include "flight.h"
#include "kallsyms.h"
#include "learn.h"
#include "lock.h"
#include "log.h"
#include "analysis.h"
#include "metrics.h"
#include "patchmap.h"
#include "recorder.h"
#include "retention.h"
#include "sampler.h"
#include "snapshot.h"
#include "spike.h"
#include "stream.h"
#include "util.h"
#include "window.h"

#ifndef MMHITM_VERSION
#define MMHITM_VERSION "0.1"
#endif

/* How often the main loop looks whether a slice's disarming is done (ns). */
#define DISARM_POLL_NS (20 * NSEC_PER_MSEC)

/* How often the sample rings are read while sampling (ns). */
#define SAMPLER_DRAIN_NS (200 * NSEC_PER_MSEC)

/* A quiet host learns at least this often (plan_quiet()). */
#define QUIET_LEARN_EVERY_NS (600 * NSEC_PER_SEC)

/* EX_CONFIG from sysexits.h: what --check-config returns for a bad file. */
#define EXIT_CONFIG 78

/* Start-up backoff while the database can't be written (s): doubling. */
#define DB_WAIT_FIRST_S 1
#define DB_WAIT_MAX_S 60
/* Backoff of the final write's retries at stop (ms): doubling. */
#define STOP_RETRY_FIRST_MS 250
#define STOP_RETRY_MAX_MS 4000

/*
 * The tracepoints counted in the kernel (in every window slice, or all
 * along): all switches (the ctxt of /proc/stat checks them), and every
 * path's unit of work that is a tracepoint (the path table's `work`).
 */
static const char *const default_counted[] = {
	"sched:sched_switch",
};

/*
 * Counted too when recording continuously. Windowed, each tracepoint
 * counted is a kernel text patch, with IPIs to every CPU, at every slice's
 * start and end, most of what an idle window costs: these measure no
 * path's work (the reclaim that vmscan:* counts is in /proc/vmstat for
 * free, contended locks are learned in the windows all the same), and
 * --count-events adds them back.
 */
static const char *const continuous_counted[] = {
	"pagemap:mm_lru_insertion",
	"lock:contention_begin",
	"vmscan:*",
};

/*
 * Kernel functions worth keeping per boot besides the paths' own (the
 * path table's `functions`; markers a patch leaves behind come from the
 * patch map): the allocators of mm_struct.
 */
static const char *const interesting_symbols[] = {
	"copy_process", "dup_mm", "mm_alloc", "__mmdrop",
};

struct options {
	const char *config_path;
	bool config_explicit;
	bool check_config;
	bool foreground;
	bool print_config;
	int argc;
	char **argv;
};

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

/* mkdir -p of the database's directory (the StateDirectory outside systemd). */
static int ensure_parent_dir(const char *path)
{
	char dir[4096], *p;

	snprintf(dir, sizeof(dir), "%s", path);
	p = strrchr(dir, '/');
	if (!p || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
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

static void raise_fd_limit(void)
{
	struct rlimit rl;

	/* One perf fd per counted event and CPU: thousands on big hosts. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static uint64_t mm_object_size(const struct btf_layout *layout)
{
	const struct btf_field *f;
	char buf[32];

	/* SLUB tells the exact object size (mm_struct plus its cpumask). */
	if (read_line("/sys/kernel/slab/mm_struct/object_size", buf, sizeof(buf)) == 0)
		return strtoull(buf, NULL, 10);
	f = btf_layout_find(layout, "mm_struct", "");
	return f ? f->size : 0;
}

/*
 * Retention returns space with incremental vacuum, which a database made
 * without it (by sqlite3, or an old mmhitm) needs one full VACUUM for.
 */
static int ensure_incremental_vacuum(sqlite3 *db)
{
	int64_t mode = 0;
	int r;

	r = db_query_int(db, &mode, "PRAGMA auto_vacuum");
	if (r < 0 || mode == 2)
		return r;
	log_notice("Converting the database to incremental vacuum (one VACUUM)");
	r = db_exec(db, "PRAGMA auto_vacuum = INCREMENTAL");
	if (r >= 0)
		r = db_exec(db, "VACUUM");
	return r;
}

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

struct daemon {
	struct options opts;
	struct config cfg;
	struct daemon_locks *locks;	/* one daemon per database and instance */
	sqlite3 *db;
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
	struct event_status_list status;
	struct btf_layout btf;
	int sigfd;
	uint64_t watchdog_usec;
	int64_t cpu_warned_ns;		/* last CPU-budget warning */
	bool budget_warned;

	/* Windowed recording (record_mode = windowed). */
	bool windowed;
	uint64_t host_hash;		/* fleet_share's phase */
	uint64_t rnd;			/* slice placement */
	struct window_plan plan;	/* this interval's slices */
	size_t next_slice;		/* plan.s[] index of the next to open */
	int64_t slice_off;		/* the open slice's end; INT64_MAX: none open */
	struct slice_turns turns;	/* this interval's, for its note */
	struct disarm_job *job;		/* the last slice's disarming, while it runs */
	bool learned;			/* a slice of this interval armed the learning */
	bool active;			/* this interval is this host's turn */
	int64_t learn_last;		/* CLOCK_MONOTONIC of the last learning armed; 0: none */
	bool quiet;			/* this interval is quiet (plan_quiet()) */
	/* The overhead budget's cost model and balance (window.h). */
	struct window_prices learn_price, slice_price;
	double per_armed;		/* kernel ns per armed ns; < 0: not seen */
	double balance;			/* ns of CPU saved (< 0: overspent) */
	bool slice_learns;		/* the open slice does */
	int64_t slice_cpu0;		/* process CPU time before it was armed */
	double event_price_ns;		/* calibrated kernel cost of a counted event */
	bool recording;			/* the recorder has started */

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
 * Which of P1..P4 this kernel carries, by the patch map the reports use
 * (/etc/mmhitm/patches.conf, else the built-in rules): labels the metrics.
 * The markers the map names are looked up in kallsyms and stored, so
 * reports see them too. Inside the boot's transaction.
 */
static int setup_patch_state(struct daemon *d, const struct kallsyms *ks)
{
	struct patch_map *m = patch_map_new();
	struct patch_verdict v[MAX_PATHS];
	const char *found[32];
	struct kernel_desc k = {
		.release = d->boot.release,
		.version = d->boot.version,
		.build_id = d->boot.build_id,
		.ksyms = found,
	};
	int r = 0;

	if (!m)
		return log_oom();
	if (patch_map_load_default(m) < 0)
		log_warning("Patch map unreadable, labelling every path unknown");
	for (size_t i = 0; i < patch_map_nr_ksyms(m) && k.nr_ksyms < ARRAY_SIZE(found); i++) {
		const struct ksym *sym = ks ? kallsyms_find(ks, patch_map_ksym(m, i)) : NULL;

		if (!sym)
			continue;
		found[k.nr_ksyms++] = patch_map_ksym(m, i);
		r = kallsyms_store(d->db, d->boot_id, sym);
		if (r < 0)
			break;
	}
	patch_map_resolve(m, &k, v);
	for (int p = 0; p < NR_PATHS; p++)
		d->paths.patch[p] = patch_state_to_string(v[p].state);
	patch_map_free(m);
	return r;
}

/*
 * HITM sampling, when this host has a memory-sampling PMU or the
 * configuration names events. Failing to sample is never fatal: the boot
 * keeps recording tracepoints, and the reason is on its record.
 */
static int setup_sampler(struct daemon *d)
{
	struct sampler_config sc;
	struct mem_agg_config ac = {
		.line_size = (unsigned int)d->boot.cache_line_size,
		.keep_user = d->cfg.keep_user_lines,
		.max_stack = 8,
	};
	const char *events = d->cfg.sample_events;

	if (strcmp(events, "none") == 0)
		return 0;
	if (!*events && (strcmp(d->boot.pmu.kind, "none") == 0 || strcmp(d->boot.pmu.kind, "arm-spe") == 0))
		return 0;

	sampler_config_defaults(&sc);
	sc.events = *events ? events : NULL;
	sc.sample_freq = (uint32_t)d->cfg.sample_freq;
	sc.sample_period = d->cfg.sample_period;
	sc.active_ns = d->cfg.sample_window_ns;
	sc.period_ns = d->cfg.sample_every_ns;
	sc.budget_ppm = (uint32_t)d->cfg.sample_budget_ppm;
	sc.max_stack = ac.max_stack;
	d->sampler = sampler_new(&sc, &d->boot.pmu);
	if (!d->sampler) {
		snprintf(d->boot.pmu.detail, sizeof(d->boot.pmu.detail),
			 "sampling failed to start (%s), see the log", *events ? events : d->boot.pmu.kind);
		log_warning("HITM sampling unavailable, recording tracepoints only");
		return 0;
	}
	d->agg = mem_agg_new(&ac);
	if (!d->agg)
		return log_oom();
	log_info("Sampling %s", sampler_describe(d->sampler));
	return 0;
}

/*
 * The window asked for, or a quarter of a short interval (the tests' 1 s
 * ones): windows that filled the interval would be continuous recording
 * in disguise, which record_mode = continuous says plainly.
 */
static int64_t window_len(const struct config *c)
{
	return c->window_ns * 2 > c->interval_ns ? c->interval_ns / 4 : c->window_ns;
}

/*
 * What one counted event costs the task that hits it, for the overhead
 * budget. The busiest event mmhitmd counts is sched:sched_switch, so the
 * calibration makes switches: two threads pinned to one CPU sched_yield()
 * to each other, timed in this process's CPU time with the counters armed
 * and disarmed in turn; the median over the rounds of the difference per
 * switch made. About 100 ms of CPU at start; clamped, since a busy host
 * makes it noisy. And bounded in wall time: on a loaded CPU every yield
 * hands it to the other tasks for a slice (41 s for the 11 runs measured
 * here under a load of 7), so the runs stop at CALIBRATION_WALL_NS and the
 * rounds done by then decide, or the default when none finished.
 */
#define CALIBRATION_YIELDS	5000	/* per thread and run */
#define CALIBRATION_ROUNDS	5
#define CALIBRATION_WALL_NS	(2 * NSEC_PER_SEC)
#define CALIBRATION_MIN_YIELDS	1000	/* per thread: fewer tell nothing */
#define EVENT_PRICE_MIN_NS	20.0
#define EVENT_PRICE_MAX_NS	5000.0
#define EVENT_PRICE_DEFAULT_NS	250.0	/* when calibration tells nothing */

static int64_t process_cpu_time_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

struct yielder {
	int cpu;
	int64_t deadline_ns;	/* CLOCK_MONOTONIC */
	int done;		/* yields made */
};

static void *calibration_yielder(void *arg)
{
	struct yielder *y = arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(y->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (y->done = 0; y->done < CALIBRATION_YIELDS; y->done++) {
		if (y->done % 256 == 0 && now_ns(CLOCK_MONOTONIC) >= y->deadline_ns)
			break;
		sched_yield();
	}
	return NULL;
}

/*
 * CPU time per yield of one run of the two yielders; < 0 if they could not
 * run, or were cut by the deadline before they told anything.
 */
static double calibration_run(int cpu, int64_t deadline_ns)
{
	struct yielder y[2] = { { cpu, deadline_ns, 0 }, { cpu, deadline_ns, 0 } };
	pthread_t t[2];
	int64_t t0 = process_cpu_time_ns(), spent;

	if (pthread_create(&t[0], NULL, calibration_yielder, &y[0]) != 0)
		return -1;
	if (pthread_create(&t[1], NULL, calibration_yielder, &y[1]) != 0) {
		pthread_join(t[0], NULL);
		return -1;
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	spent = process_cpu_time_ns() - t0;
	if (y[0].done < CALIBRATION_MIN_YIELDS || y[1].done < CALIBRATION_MIN_YIELDS)
		return -1;
	return (double)spent / (double)(y[0].done + y[1].done);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double calibrate_event_price(struct counters *c)
{
	double diff[CALIBRATION_ROUNDS], price = EVENT_PRICE_DEFAULT_NS;
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + CALIBRATION_WALL_NS;
	int cpu = sched_getcpu();
	size_t nd = 0;
	bool cut = false;

	if (cpu < 0 || calibration_run(cpu, deadline) < 0)	/* also warms up */
		goto out;
	for (int round = 0; round < CALIBRATION_ROUNDS; round++) {
		double off, on;

		off = calibration_run(cpu, deadline);
		if (counters_arm(c) < 0)
			break;
		on = calibration_run(cpu, deadline);
		counters_disarm(c);
		if (off > 0 && on > 0)
			diff[nd++] = on - off;
		if (now_ns(CLOCK_MONOTONIC) >= deadline) {
			cut = round + 1 < CALIBRATION_ROUNDS;
			break;
		}
	}
	if (nd) {
		qsort(diff, nd, sizeof(*diff), cmp_double);
		price = diff[nd / 2];
		if (price < EVENT_PRICE_MIN_NS)
			price = EVENT_PRICE_MIN_NS;
		if (price > EVENT_PRICE_MAX_NS)
			price = EVENT_PRICE_MAX_NS;
	}
out:
	if (nd)
		log_info("Calibrated the kernel cost of a counted event: %.0f ns (%zu rounds of up to %d"
			 " switches%s)", price, nd, 2 * CALIBRATION_YIELDS,
			 cut ? "; the CPU is busy, cut at 2 s" : "");
	else
		log_info("Kernel cost of a counted event: %.0f ns assumed (the CPU is too busy to "
			 "calibrate in 2 s)", price);
	return price;
}

static void handle_signal(struct daemon *d, const struct signalfd_siginfo *si, bool *stop);

/* Whether waiting can cure a database error: another writer, a full disk. */
static bool db_error_transient(int r)
{
	return r == -EBUSY || r == -ENOSPC;
}

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
 * Runs step until it succeeds or fails for a reason waiting can't cure,
 * backing off between tries and telling systemd why it is not ready yet:
 * a long `mmhitm import` holding the write lock, or a full disk, must
 * delay the start, never end it. -ECANCELED when a signal stops it.
 */
static int retry_db_step(struct daemon *d, const char *what, int (*step)(struct daemon *d, void *arg),
			 void *arg)
{
	int64_t delay = DB_WAIT_FIRST_S, since = now_ns(CLOCK_MONOTONIC);
	unsigned int tries = 0;
	int r;

	for (;;) {
		/* The layers below said it in full the first time. */
		log_demote_errors(tries > 0);
		r = step(d, arg);
		log_demote_errors(0);
		if (r >= 0) {
			if (tries)
				log_notice("Could %s after waiting %.0f s", what,
					   (now_ns(CLOCK_MONOTONIC) - since) / 1e9);
			return r;
		}
		if (!db_error_transient(r))
			return r;
		if (!tries)
			log_warning_errno(r, "Cannot %s yet (%m); waiting, retrying with backoff up to "
					  "every %d s", what, DB_WAIT_MAX_S);
		/* The busy timeout of the next try counts too: extend by both. */
		sd_notifyf(0, "STATUS=Waiting to %s: %s (try %u, next in %" PRId64 " s)\n"
			   "EXTEND_TIMEOUT_USEC=%" PRId64, what, strerror(-r), tries + 1, delay,
			   (delay + 30) * 1000000);
		r = sleep_on_signals(d, delay * 1000);
		if (r < 0)
			return r;
		delay = delay * 2 > DB_WAIT_MAX_S ? DB_WAIT_MAX_S : delay * 2;
		tries++;
	}
}

/* A database file this start created and left empty goes again. */
static void remove_if_created_empty(const char *path)
{
	static const char *const suffixes[] = { "-wal", "-shm", "-journal" };
	struct stat st;
	char p[4200];

	if (stat(path, &st) < 0 || st.st_size != 0)
		return;
	unlink(path);
	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		snprintf(p, sizeof(p), "%s%s", path, suffixes[i]);
		unlink(p);
	}
}

static int open_db_step(struct daemon *d, void *arg)
{
	struct stat st;
	bool existed = stat(d->cfg.db_path, &st) == 0;
	int r;

	r = db_open(d->cfg.db_path, 0, &d->db);
	if (r >= 0)
		r = ensure_incremental_vacuum(d->db);
	if (r < 0) {
		db_close(d->db);
		d->db = NULL;
		if (!existed)
			remove_if_created_empty(d->cfg.db_path);
	}
	return r;
}

static int setup_patch_state(struct daemon *d, const struct kallsyms *ks);

/* The boot's identity, what it can record, and its layouts: one txn. */
static int store_boot_step(struct daemon *d, void *arg)
{
	const struct kallsyms *ks = arg;
	int r;

	r = db_begin(d->db);
	if (r < 0)
		return r;
	r = boot_store(d->db, &d->boot, now_ns(CLOCK_REALTIME), &d->boot_id);
	if (r >= 0)
		r = event_status_store(d->db, d->boot_id, &d->status);
	if (r >= 0 && d->btf.n)
		r = btf_layout_store(d->db, d->boot_id, &d->btf);
	for (size_t i = 0; r >= 0 && ks && i < ARRAY_SIZE(interesting_symbols); i++) {
		const struct ksym *k = kallsyms_find(ks, interesting_symbols[i]);

		if (k)
			r = kallsyms_store(d->db, d->boot_id, k);
	}
	for (int p = 0; r >= 0 && ks && p < NR_PATHS; p++)
		for (size_t i = 0; r >= 0 && i < path_get(p)->nr_functions; i++) {
			const struct ksym *k = kallsyms_find(ks, path_get(p)->functions[i]);

			if (k)
				r = kallsyms_store(d->db, d->boot_id, k);
		}
	r = r < 0 ? r : setup_patch_state(d, ks);
	if (r >= 0)
		r = db_commit(d->db);
	if (r < 0)
		db_rollback(d->db);
	return r;
}

/* The database, alone: nothing is touched before both locks are held. */
static int setup_db(struct daemon *d)
{
	int r;

	r = ensure_parent_dir(d->cfg.db_path);
	if (r < 0)
		return log_error_errno(r, "Failed to create the directory of %s: %m", d->cfg.db_path);
	/* Someone else's SQLite file gets nothing beside it, not a lock file. */
	r = db_refuse_foreign(d->cfg.db_path);
	if (r < 0)
		return r;
	/* Before anything is touched: a second daemon must leave the first's
	 * database and tracefs instance alone. */
	r = daemon_locks_acquire(d->cfg.db_path, d->cfg.instance, &d->locks);
	if (r < 0)
		return r;
	return retry_db_step(d, "open the database", open_db_step, NULL);
}

/* What this boot is, and the recording mode that follows from it. */
static int setup_host(struct daemon *d)
{
	int r;

	r = boot_info_collect(&d->boot);
	if (r < 0)
		return r;
	d->windowed = config_windowed(&d->cfg);
	if (d->windowed && window_len(&d->cfg) != d->cfg.window_ns)
		log_notice("window %gs is over half of interval %gs: windows of %gs instead",
			   d->cfg.window_ns / 1e9, d->cfg.interval_ns / 1e9, window_len(&d->cfg) / 1e9);
	/* The machine id names a host for good; the hostname where none. */
	d->host_hash = window_host_hash(d->boot.machine_id[0] ? d->boot.machine_id : d->boot.hostname);
	d->rnd = (uint64_t)now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32) ^ d->host_hash;
	log_info("Host %s, kernel %s, %d CPUs, PMU %s, LRU_GEN %s", d->boot.hostname,
		 d->boot.release, d->boot.cpus_online, d->boot.pmu.kind, d->boot.lru_gen);
	if (strcmp(d->boot.pmu.kind, "none") == 0)
		log_notice("No HITM sampling on this host (%s); recording tracepoints only",
			   d->boot.pmu.detail);
	if (!tracefs_dir())
		return -ENOENT;
	if (btf_layout_collect(NULL, &d->btf) < 0)
		log_warning("No BTF layouts: object fields can't be named on this boot, continuing");
	return 0;
}

/* The counted tracepoints: the defaults, continuous mode's, count_events. */
static int setup_counters(struct daemon *d)
{
	int r;

	raise_fd_limit();
	d->counters = counters_new(!d->windowed);
	if (!d->counters)
		return log_oom();
	for (size_t i = 0; i < ARRAY_SIZE(default_counted); i++) {
		r = counters_add(d->counters, default_counted[i], &d->status);
		if (r < 0)
			return r;
	}
	/* each path's work that is a tracepoint (derived: and lru_gen_progress.
	 * are computed, not counted) */
	for (int p = 0; p < NR_PATHS; p++)
		for (size_t i = 0; i < path_get(p)->nr_work; i++) {
			const char *w = path_get(p)->work[i];

			if (strchr(w, ':') && !startswith(w, "derived:")) {
				r = counters_add(d->counters, w, &d->status);
				if (r < 0)
					return r;
			}
		}
	for (size_t i = 0; !d->windowed && i < ARRAY_SIZE(continuous_counted); i++) {
		r = counters_add(d->counters, continuous_counted[i], &d->status);
		if (r < 0)
			return r;
	}
	for (char *p = d->cfg.count_events; *p;) {
		size_t n = strcspn(p, " ,\t");
		char spec[96];

		if (n) {
			snprintf(spec, sizeof(spec), "%.*s", (int)n, p);
			r = counters_add(d->counters, spec, &d->status);
			if (r < 0)
				return r;
		}
		p += n;
		p += strspn(p, " ,\t");
	}
	if (d->windowed)
		d->event_price_ns = calibrate_event_price(d->counters);
	return 0;
}

/* The learning streams, the learner, and the windows' mm snapshot. */
static int setup_learning(struct daemon *d, const struct kallsyms *ks)
{
	struct stream_config sc = {
		.instance = d->cfg.instance,
		.buffer_size_kb = d->cfg.buffer_size_kb,
		.page_pair_shift = (unsigned int)d->cfg.page_pair_shift,
		.learn_mm = d->cfg.learn_mm,
		.learn_pages = d->cfg.learn_pages,
		.learn_locks = d->cfg.learn_locks,
		.sample_switches = d->cfg.switch_sample_ns > 0,
		.windowed = d->windowed,
		.mm_object_size = mm_object_size(&d->btf),
		.ksyms = ks,
		.max_held = d->cfg.max_held_records,
	};
	struct learn_limits lim = {
		.max_page_pairs = d->cfg.max_page_pairs,
		.max_locks = d->cfg.max_locks,
		.max_unwritten = 1 << 18,	/* ~40 MiB of objects */
	};

	if (d->cfg.learn_mm || d->cfg.learn_pages || d->cfg.learn_locks || sc.sample_switches) {
		d->stream = stream_new(&sc, &d->status);
		if (!d->stream)
			return -EIO;
	}
	/*
	 * The flight recorder (flight.c): not fatal, recording goes on
	 * without. Windowed only: recording continuously, every learning
	 * record (a kmem_cache_alloc filter check on every allocation) would
	 * be paid twice all along, storms included.
	 */
	if (d->cfg.snapshots && d->stream && d->windowed)
		d->flight = flight_new(&(struct flight_config){
				.instance = d->cfg.instance, .buffer_size_kb = d->cfg.snapshot_buffer_kb,
				.dir = d->cfg.snapshot_dir, .db_path = d->cfg.db_path,
				.max_count = d->cfg.snapshot_max_count,
				.max_bytes = d->cfg.snapshot_max_size }, &sc);
	d->learner = learner_new(&lim, &learn_proc_default);
	if (!d->learner)
		return log_oom();
	/* Not fatal: the windows' learning streams still learn new mms. */
	if (d->windowed && d->cfg.learn_mm)
		d->snapshot = mm_snapshot_new(&d->status);
	/* Continuous mode has everything armed all along: no spike to see.
	 * Without learning streams a spike window would arm nothing. */
	if (d->windowed && d->stream) {
		d->spike = spike_watch_new();
		if (!d->spike)
			log_warning("Cannot read /proc/stat, /proc/interrupts or /proc/vmstat: no spike "
				    "windows, continuing");
	}
	return 0;
}

/* The boot's row, then the recorder's first baseline. Takes ks. */
static int setup_recorder(struct daemon *d, struct kallsyms *ks)
{
	int r;

	r = retry_db_step(d, "store the boot", store_boot_step, ks);
	if (r < 0)
		goto out;
	for (size_t i = 0; i < d->status.n; i++)
		if (!d->status.v[i].available)
			log_info("%s (%s): unavailable: %s", d->status.v[i].event, d->status.v[i].role,
				 d->status.v[i].detail);

	r = recorder_new(&(struct recorder_config){
			.db = d->db,
			.boot_id = d->boot_id,
			.interval_ns = d->cfg.interval_ns,
			.lru_gen = strcmp(d->boot.lru_gen, "absent") != 0,
			.counters = d->counters,
			.stream = d->stream,
			.learner = d->learner,
			.sampler = d->sampler,
			.agg = d->agg,
			/* Sampled kernel IPs get their symbols stored as they come. */
			.ksyms = d->sampler ? ks : NULL,
			.windowed = d->windowed,
			.event_price_ns = d->event_price_ns,
			.cpus = d->boot.cpus_online,
		}, now_ns(CLOCK_REALTIME), &d->rec);
	d->recording = r >= 0;
	if (r >= 0 && d->sampler) {
		d->ksyms = ks;
		ks = NULL;
	}
out:
	kallsyms_free(ks);
	return r;
}

static int setup(struct daemon *d)
{
	struct kallsyms *ks;
	int r;

	r = setup_db(d);
	if (r < 0)
		return r;
	r = setup_host(d);
	if (r < 0)
		return r;
	ks = kallsyms_load(NULL);
	if (!ks)
		log_warning_errno(errno, "Failed to read /proc/kallsyms: %m; "
				  "kernel IPs won't be symbolized, continuing");
	r = setup_counters(d);
	if (r >= 0)
		r = setup_learning(d, ks);
	if (r >= 0)
		r = setup_sampler(d);
	if (r >= 0 && d->cfg.analyze)
		r = analysis_new(&d->analysis);
	if (r < 0) {
		kallsyms_free(ks);
		return r;
	}
	return setup_recorder(d, ks);
}

static int disarm_finish(struct daemon *d, bool wait);

static void teardown(struct daemon *d)
{
	if (disarm_finish(d, true) < 0)
		log_warning("Failed to drain the learning streams at exit, ignoring");
	recorder_free(d->rec);
	flight_free(d->flight);
	spike_watch_free(d->spike);
	sampler_free(d->sampler);
	mem_agg_free(d->agg);
	analysis_free(d->analysis);
	kallsyms_free(d->ksyms);
	stream_free(d->stream);
	mm_snapshot_free(d->snapshot);
	learner_free(d->learner);
	counters_free(d->counters);
	btf_layout_done(&d->btf);
	event_status_list_done(&d->status);
	db_close(d->db);
	/* Last: the instances are gone (stream_free) before another daemon
	 * may take them over. */
	daemon_locks_free(d->locks);
	config_done(&d->cfg);
	if (d->sigfd >= 0)
		close(d->sigfd);
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
	int r;

	/* Attribution before retention, so what retention rolls up is
	 * attributed; incremental, so a quiet interval costs a few queries. */
	if (d->analysis) {
		r = analysis_step(d->analysis, d->db, d->boot_id);
		if (r < 0)
			log_warning_errno(r, "Attribution failed: %m, retrying next interval");
		d->paths.totals = analysis_totals(d->analysis);
	}

	r = retention_enforce(d->db, now, &pol, &res);
	if (r < 0) {
		log_warning_errno(r, "Retention failed: %m, retrying next interval");
	} else {
		if (res.intervals || res.detail_intervals || res.hours)
			log_info("Retention: dropped %" PRId64 " intervals, the detail of %" PRId64
				 ", %" PRId64 " rollup hours (%" PRIu64 " -> %" PRIu64 " bytes)",
				 res.intervals, res.detail_intervals, res.hours, res.bytes_before,
				 res.bytes_after);
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
		db_size_bytes(d->db, &size);
		metrics_write_file(d->cfg.metrics_file, &d->boot, d->rec, &d->paths, size);
	}
}

static void reload(struct daemon *d)
{
	struct config c;

	log_info("Reloading configuration from %s", d->opts.config_path);
	if (load_config(&d->opts, &c) < 0) {
		log_error("Keeping the running configuration");
		return;
	}
	/* What the running recorder can adopt now; the rest needs a restart. */
	if (strcmp(c.db_path, d->cfg.db_path) != 0 || strcmp(c.instance, d->cfg.instance) != 0 ||
	    c.buffer_size_kb != d->cfg.buffer_size_kb || c.learn_mm != d->cfg.learn_mm ||
	    c.learn_pages != d->cfg.learn_pages || c.learn_locks != d->cfg.learn_locks ||
	    c.page_pair_shift != d->cfg.page_pair_shift || strcmp(c.count_events, d->cfg.count_events) != 0 ||
	    strcmp(c.record_mode, d->cfg.record_mode) != 0 ||
	    c.max_locks != d->cfg.max_locks || c.max_held_records != d->cfg.max_held_records)
		log_notice("db, instance, buffer, learning, counted-event, record_mode and table-bound "
			   "changes take effect at the next restart");
	d->cfg.interval_ns = c.interval_ns;
	d->cfg.drain_ns = c.drain_ns;
	d->cfg.log_level = c.log_level;
	d->cfg.max_page_pairs = c.max_page_pairs;
	d->cfg.retention_detail_ns = c.retention_detail_ns;
	d->cfg.retention_raw_ns = c.retention_raw_ns;
	d->cfg.retention_rollup_ns = c.retention_rollup_ns;
	d->cfg.max_db_size = c.max_db_size;
	d->cfg.cpu_budget_pct = c.cpu_budget_pct;
	d->cfg.window_ns = c.window_ns;
	d->cfg.window_slices = c.window_slices;
	d->cfg.overhead_budget = c.overhead_budget;
	d->cfg.fleet_share = c.fleet_share;
	d->cfg.spike_check_ns = c.spike_check_ns;
	d->cfg.spike_factor = c.spike_factor;
	d->cfg.spike_min_rate = c.spike_min_rate;
	d->cfg.quiet_cpu = c.quiet_cpu;
	d->cfg.spike_window_ns = c.spike_window_ns;
	d->cfg.spike_holdoff_ns = c.spike_holdoff_ns;
	free(d->cfg.metrics_file);
	d->cfg.metrics_file = c.metrics_file;
	c.metrics_file = NULL;
	/* (a reload while waiting for the database: the recorder starts with it) */
	if (d->rec)
		recorder_set_interval(d->rec, c.interval_ns);
	log_set_max_level(c.log_level);
	config_done(&c);
}

/*
 * One sched_switch window per interval, at a random point of it: the same
 * moment every interval (its start, say) would see the same phase of a
 * periodic workload every time. The window has a tracefs instance of its
 * own: should it run long (mmhitmd not scheduled to close it in time) or
 * overflow, it loses part of its own sample, never a learning event.
 */
#define LOCK_RECORD_BYTES 40		/* a contention_begin record with its header */

/* Lock learning during a storm needs windows even without switch sampling. */
#define LOCK_WINDOW_NS (20 * NSEC_PER_MSEC)

static int64_t switch_window_ns(const struct daemon *d)
{
	return d->cfg.switch_sample_ns ?: LOCK_WINDOW_NS;
}

static bool windows_wanted(const struct daemon *d)
{
	return d->stream && (d->cfg.switch_sample_ns || d->cfg.learn_locks);
}

/*
 * Lock contention floods in a storm. Streamed all the time while a drain
 * period's worth of it stays under an eighth of what one CPU's ring buffer
 * holds (as if it all came on one CPU), it moves into the sample windows
 * as soon as a drain reads more, and back once an interval's rate is
 * under half that again.
 */
static uint64_t lock_burst(const struct daemon *d)
{
	return d->cfg.buffer_size_kb * 1024 / LOCK_RECORD_BYTES / 8;
}

/* flight recorder: a storm seen in a drain is worth a snapshot */
static void storm_check(struct daemon *d)
{
	if (d->flight && stream_last_lock_records(d->stream) > lock_burst(d))
		flight_request(d->flight, "lock-storm");
}

static void lock_mode_after_drain(struct daemon *d)
{
	if (stream_locks_are_windowed(d->stream) || stream_last_lock_records(d->stream) <= lock_burst(d))
		return;
	if (stream_locks_windowed(d->stream, true) == 0)
		log_info("Lock contention storm (%" PRIu64 " records in one drain): learning lock "
			 "addresses in the sample windows only", stream_last_lock_records(d->stream));
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

/* --- windowed recording ------------------------------------------------- */

/*
 * The cost model from the prices seen (window.h); false while none was
 * (the first window is taken as configured).
 */
static bool budget_model(const struct daemon *d, struct window_cost *c)
{
	int64_t learn = window_prices_median(&d->learn_price);
	int64_t slice = window_prices_median(&d->slice_price);

	if (learn < 0 && slice < 0)
		return false;
	c->learn_ns = (double)(learn >= 0 ? learn : slice);
	c->slice_ns = (double)(slice >= 0 ? slice : learn);
	c->per_armed = d->per_armed > 0 ? d->per_armed : 0;
	return true;
}

/*
 * After an interval is written: the kernel's price per armed ns into the
 * cost model, and what it spent against what it earned into the balance
 * (only the intervals that were this host's turn earn: fleet_share must
 * not pile up a share's savings into one window). The slices' own prices
 * come in as each one's disarming ends (slice_priced()), whichever
 * interval that falls in.
 */
static void budget_account(struct daemon *d)
{
	const struct recorder_last *last = recorder_last(d->rec);
	double budget = d->cfg.overhead_budget * (double)d->cfg.interval_ns * d->boot.cpus_online;
	double cap = WINDOW_BALANCE_MAX * budget;
	struct window_cost c;

	if (last->armed_ns > 0)
		d->per_armed = (double)last->window_events * d->event_price_ns /
			       (double)last->armed_ns;
	if (!d->active)
		return;
	if (budget_model(d, &c))
		cap = window_balance_cap(&c, budget, d->stream != NULL);
	d->balance = window_balance_after(d->balance, budget, (double)last->est_cost_ns, cap);
}

/*
 * The window the budget allows (window.h): *n slices and *armed ns, the
 * learning or not; the note says what was cut and why. False: none.
 */
static bool plan_budget(struct daemon *d, double budget, bool want, size_t *n, int64_t *armed)
{
	struct window_cost c;
	struct window_budget b;
	bool ok;
	char note[320];
	double avail = budget + d->balance;

	/* Nothing measured yet (the first window): as configured. */
	if (!budget_model(d, &c))
		return true;
	ok = window_budget_plan(&c, budget, avail, *n, *armed, want, &b);
	if (want && !b.learn)
		d->learned = true;	/* no learning slice in this interval */
	if (!ok && b.saving) {
		snprintf(note, sizeof(note), "no window: saving for a learning slice of %.3g ms, "
			 "one counting slice would cost %.3g ms, over half of overhead_budget %g%% "
			 "(%.3g ms, %.3g ms in the balance)", c.learn_ns / 1e6, b.cost_ns / 1e6,
			 d->cfg.overhead_budget * 100, budget / 1e6, d->balance / 1e6);
		recorder_window_note(d->rec, note);
		return false;
	}
	if (!ok) {
		snprintf(note, sizeof(note), "no window: one slice would cost %.3g ms, over "
			 "overhead_budget %g%% (%.3g ms, %.3g ms in the balance)", b.cost_ns / 1e6,
			 d->cfg.overhead_budget * 100, budget / 1e6, d->balance / 1e6);
		recorder_window_note(d->rec, note);
		return false;
	}
	if (b.shortened || (want && !b.learn)) {
		int len = snprintf(note, sizeof(note), "window %.0f ms in %zu slices of %.0f ms asked",
				   b.armed_ns / 1e6, b.n, *armed / 1e6);

		if (want && !b.learn)
			len += snprintf(note + len, sizeof(note) - len, ", no learning slice (%.3g ms, %s)",
					c.learn_ns / 1e6, b.saving ? "the balance saves for it" :
					"more than the balance may save");
		snprintf(note + len, sizeof(note) - len, ": %.2g ms a slice and %.3g%% of the armed "
			 "time against overhead_budget %g%% (%.3g ms, %.3g ms in the balance)",
			 c.slice_ns / 1e6, c.per_armed * 100, d->cfg.overhead_budget * 100,
			 budget / 1e6, d->balance / 1e6);
		recorder_window_note(d->rec, note);
	}
	*n = b.n;
	*armed = b.armed_ns;
	return true;
}

/*
 * A quiet host (busy under quiet_cpu of one CPU in the interval just
 * written, all its CPUs together, from /proc/stat) takes its window in one
 * slice, and learns in
 * it only every QUIET_LEARN_EVERY_NS. Every slice arms and disarms its
 * tracepoints, kernel text patches with IPIs to every CPU, and learning
 * arms seven more: on this build VM's idle host a learning slice costs
 * 30 ms and a counting slice 4.5 ms, which at the default 60 s interval
 * made the idle daemon 0.1 % of a CPU. What a quiet interval gives up: its
 * counts' spread between slices (one slice's estimate says so in its
 * variance, window_estimate()) and the lifetimes of processes that came
 * and went in it; the mm snapshot taken in every slice still sees every
 * live mm, and a spike in the free counters still opens a learning window.
 * The armed time stays as configured. Returns whether the interval is
 * quiet; *n and *learn are set for it. A quiet interval, its turn or not,
 * also reads the free counters for spikes half as often (spike_period()):
 * a wake-up costs this VM 0.2 ms, 13 ms a minute at one a second.
 */
static bool host_quiet(const struct daemon *d)
{
	double busy = recorder_last(d->rec)->busy;

	log_debug("Host busy %.3g%% of one CPU in the last interval (quiet_cpu %g%%)",
		  busy * 100, d->cfg.quiet_cpu * 100);
	return d->cfg.quiet_cpu > 0 && busy >= 0 && busy < d->cfg.quiet_cpu;
}

static bool plan_quiet(struct daemon *d, int64_t mono, size_t *n, bool *learn)
{
	double busy = recorder_last(d->rec)->busy;
	char note[200];

	if (!d->quiet)
		return false;
	*n = 1;
	*learn = !d->learn_last || mono - d->learn_last >= QUIET_LEARN_EVERY_NS;
	if (!d->stream)
		snprintf(note, sizeof(note), "quiet (host busy %.2g%% of a CPU, quiet_cpu %g%%): one slice",
			 busy * 100, d->cfg.quiet_cpu * 100);
	else if (*learn)
		snprintf(note, sizeof(note), "quiet (host busy %.2g%% of a CPU, quiet_cpu %g%%): one slice, "
			 "learning", busy * 100, d->cfg.quiet_cpu * 100);
	else
		snprintf(note, sizeof(note), "quiet (host busy %.2g%% of a CPU, quiet_cpu %g%%): one slice, "
			 "no learning (%.0f s ago, at most every %.0f s)", busy * 100,
			 d->cfg.quiet_cpu * 100, (mono - d->learn_last) / 1e9,
			 QUIET_LEARN_EVERY_NS / 1e9);
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
static void plan_interval(struct daemon *d, int64_t mono, int64_t wall, int64_t next_flush)
{
	int64_t slot = next_flush / d->cfg.interval_ns - 1;
	int64_t armed = window_len(&d->cfg);
	double budget = d->cfg.overhead_budget * (double)d->cfg.interval_ns * d->boot.cpus_online;
	size_t n = d->cfg.window_slices;
	bool learn = true;
	char note[160];

	d->plan.n = 0;
	d->next_slice = 0;
	d->turns = (struct slice_turns){ 0 };
	d->learned = false;
	d->active = false;
	d->quiet = host_quiet(d);
	/* A partial interval (the first) gets its share of the window: a
	 * daemon restarted often must not be armed more often. */
	if (next_flush - wall < d->cfg.interval_ns)
		armed = (int64_t)((double)armed * (double)(next_flush - wall) / (double)d->cfg.interval_ns);
	if (!window_slot_active(d->host_hash, slot, d->cfg.fleet_share)) {
		snprintf(note, sizeof(note), "no window: not this host's turn (fleet_share %g)",
			 d->cfg.fleet_share);
		recorder_window_note(d->rec, note);
		return;
	}
	d->active = true;
	if (plan_quiet(d, mono, &n, &learn))
		d->learned = !learn;	/* slice_open() learns while this is false */
	if (!plan_budget(d, budget, d->stream && learn, &n, &armed))
		return;
	if (armed < WINDOW_MIN_SLICE_NS)
		return;
	while (n > 1 && armed / (int64_t)n < WINDOW_MIN_SLICE_NS)
		n--;
	window_plan_make(&d->plan, mono, mono + (next_flush - wall), n, armed / (int64_t)n, &d->rnd);
}

static int64_t next_slice_on(const struct daemon *d)
{
	return d->next_slice < d->plan.n ? d->plan.s[d->next_slice].start_ns : INT64_MAX;
}

/*
 * What a slice's end leaves to a thread of its own: closing the counters,
 * disarming the learning events, then streaming the slice's sched_switch
 * sample. Removing a tracepoint's last user waits for RCU grace periods
 * under the kernel's event mutex, tens of milliseconds apiece; in the main
 * loop that made the intervals after a window start 100-200 ms late.
 */
struct disarm_job {
	pthread_t thread;
	struct counters_retired *counters;
	struct stream *stream;		/* NULL: no learning events */
	int64_t switch_ns;		/* the sample's length; 0: none */
	int64_t cpu_ns;			/* the thread's CPU time */
	int64_t main_ns;		/* the main loop's CPU for the slice, arming on */
	bool spike;			/* a spike window's: its cost is the spike's */
	bool inline_run;		/* no thread: run by the main loop */
	bool done;			/* atomic: the thread finished */
};

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static void *disarm_run(void *arg)
{
	struct disarm_job *j = arg;

	counters_retired_close(j->counters);
	j->counters = NULL;
	if (j->stream) {
		stream_arm(j->stream, false);
		if (j->switch_ns && stream_sample_switches(j->stream, true) == 0) {
			struct timespec ts = { j->switch_ns / NSEC_PER_SEC, j->switch_ns % NSEC_PER_SEC };

			nanosleep(&ts, NULL);
			stream_sample_switches(j->stream, false);
		}
	}
	j->cpu_ns = thread_cpu_ns();
	__atomic_store_n(&j->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Waits for the last slice's disarming (wait) or looks whether it is done;
 * once it is, what the slice learned is drained, while the tasks it saw are
 * alive to be looked up. Returns 0, or the drain's -errno.
 */
static int disarm_finish(struct daemon *d, bool wait)
{
	struct disarm_job *j = d->job;
	bool spike, learned;
	int64_t cpu0, price, main_ns, thread_ns;
	int r = 0;

	if (!j || (!wait && !__atomic_load_n(&j->done, __ATOMIC_ACQUIRE)))
		return 0;
	if (!j->inline_run)
		pthread_join(j->thread, NULL);
	spike = j->spike;
	learned = j->stream != NULL;
	main_ns = j->main_ns;
	thread_ns = j->cpu_ns;
	price = main_ns + thread_ns;
	if (spike) {
		recorder_spike_cost(d->rec, 0, j->cpu_ns);
		d->spike_price_ns = d->spike_main_cpu + j->cpu_ns;
	} else {
		recorder_window_cpu(d->rec, j->cpu_ns);
	}
	free(j);
	d->job = NULL;
	cpu0 = process_cpu_time_ns();
	if (d->stream) {
		r = stream_drain(d->stream, d->learner, false);
		/* The window's last records: a short window (a spike's, a
		 * slice shorter than drain_interval) has no other drain to
		 * see a storm. */
		if (r >= 0)
			storm_check(d);
	}
	/* What the slice streamed, read: part of what it cost. */
	cpu0 = process_cpu_time_ns() - cpu0;
	if (spike) {
		recorder_spike_cost(d->rec, 0, cpu0);
	} else {
		recorder_window_cpu(d->rec, cpu0);
		/*
		 * The slice's price, by its own kind, from its arming to the
		 * last of its records read: the learning slice's disarming
		 * often ends in the next interval, which must not price it
		 * as that interval's (a counting slice at a learning
		 * slice's price shut the windows off in a soak).
		 */
		window_prices_add(learned ? &d->learn_price : &d->slice_price, price + cpu0);
		log_debug("Window slice%s priced at %.1f ms: %.1f ms arming to closing, %.1f "
			  "disarming, %.1f reading what it streamed", learned ? " (learning)" : "",
			  (price + cpu0) / 1e6, main_ns / 1e6, thread_ns / 1e6, cpu0 / 1e6);
	}
	return r;
}

/*
 * Arms everything for one slice: the counters, the learning events and the
 * PMU. The sched_switch sample comes after the counting (slice_close): a
 * streamed switch costs the workload far more than a counted one, and
 * counting beside it would measure the switch rate it slows down.
 */
static void slice_open(struct daemon *d, int64_t mono)
{
	const struct window_slice *sl;
	int64_t len;
	char armed[64];

	/*
	 * The last slice's disarming must be over: a tracepoint's users
	 * change one at a time, and waiting for it here would stall the loop.
	 * The slice is held back until it is, looked at every DISARM_POLL_NS,
	 * never skipped: a quiet interval's one slice planned within a
	 * disarming (100-200 ms on this VM) of the last interval's end was
	 * skipped so, and the interval counted nothing.
	 */
	if (d->job && !__atomic_load_n(&d->job->done, __ATOMIC_ACQUIRE)) {
		d->turns.waited_ns += window_plan_delay(&d->plan, d->next_slice, mono + DISARM_POLL_NS);
		return;
	}
	sl = &d->plan.s[d->next_slice++];
	len = sl->end_ns - sl->start_ns;
	if (disarm_finish(d, false) < 0)
		log_warning("Failed to drain the learning streams, ignoring");
	/* The slice's price counts from here: arming is most of it. */
	d->slice_cpu0 = process_cpu_time_ns();
	/*
	 * The learning events and the sched_switch sample in one slice per
	 * interval: every tracepoint armed and disarmed is a kernel text patch
	 * with IPIs to every CPU, most of what an idle window costs. The
	 * counters, which the estimate's spread needs, and the snapshot (no
	 * patch) in every slice.
	 */
	d->slice_learns = d->stream && !d->learned;
	if (d->slice_learns)
		d->learn_last = mono;
	if (d->slice_learns && learner_pages_full(d->learner))
		stream_skip_pages(d->stream);
	snprintf(armed, sizeof(armed), "counters%s%s%s%s", d->slice_learns ? " learn" : "",
		 d->slice_learns && d->cfg.switch_sample_ns ? " switch" : "", d->sampler ? " pmu" : "",
		 d->snapshot ? " snapshot" : "");
	/* Every live mm as the window opens, after what the streams still
	 * hold (the learner takes events in time order). */
	if (d->snapshot) {
		if (d->stream && stream_drain(d->stream, d->learner, false) < 0)
			log_warning("Failed to drain the learning streams before a snapshot, ignoring");
		mm_snapshot_take(d->snapshot, d->learner, now_ns(CLOCK_REALTIME));
	}
	/* The counters last: arming the learning events patches the kernel's
	 * text (IPIs to every CPU), which must not fall into the counting. */
	if (d->slice_learns) {
		stream_arm(d->stream, true);
		flight_arm(d->flight, true);	/* flight recorder: with the streams */
	}
	if (d->sampler)
		sampler_window(d->sampler, true, mono);
	if (recorder_slice_begin(d->rec, d->slice_cpu0, armed, d->slice_learns) < 0) {
		log_warning("Failed to arm the counters for a window, skipping it");
		if (d->slice_learns) {
			stream_arm(d->stream, false);
			flight_arm(d->flight, false);
		}
		if (d->sampler)
			sampler_window(d->sampler, false, now_ns(CLOCK_MONOTONIC));
		return;
	}
	/*
	 * Counted for as long as planned, from the moment the counting
	 * started: arming the learning events takes tens of milliseconds
	 * (hundreds on a host with slow cross-CPU calls), and a slice they
	 * ate down to a millisecond would count the moment right after the
	 * kernel's text was patched, when the CPUs run slow (a third of the
	 * rate, measured), scaled up to the whole interval. So too when the
	 * main loop woke late or the slice was held back: a late loop once
	 * took 74 ms of a 600 ms quiet window. The slices it now overlaps are
	 * one with it, as long as they were together.
	 */
	d->slice_off = counters_enabled_ns(d->counters) + len;
	while (d->next_slice < d->plan.n && d->plan.s[d->next_slice].start_ns <= d->slice_off) {
		sl = &d->plan.s[d->next_slice++];
		d->slice_off += sl->end_ns - sl->start_ns;
	}
	log_debug("Window slice of %.0f ms%s", (d->slice_off - counters_enabled_ns(d->counters)) / 1e6,
		  d->slice_learns ? ", learning" : "");
	d->learned |= d->slice_learns;
}

/*
 * The main loop's deadlines, monotonic unless named wall. Each moves on
 * once met, so the loop sleeps until the earliest and never spins.
 */
struct deadlines {
	int64_t flush_wall;	/* the interval's end */
	int64_t drain;		/* the learning stream's next read */
	int64_t stop;		/* --duration */
	int64_t ping;		/* the systemd watchdog */
	int64_t switch_on;	/* continuous: the next sched_switch window ... */
	int64_t switch_off;	/* ... and its end */
	int64_t spike;		/* windowed: the free counters' next reading for spikes */
};

/* --- spike windows ------------------------------------------------------ */

/*
 * A spike window comes no closer than this before one of the interval's
 * own slices (ns): its disarming (about 200 ms) would make that slice be
 * skipped, and a slice that soon sees the storm anyway.
 */
#define SPIKE_SLICE_GAP_NS (500 * NSEC_PER_MSEC)

/*
 * Ends a spike window: the flight ring and the learning events are
 * disarmed as a slice's are (by the disarming thread, no counters, no
 * switch sample); its main-loop cost is known now, the thread's later.
 */
static int spike_window_close(struct daemon *d, int64_t mono)
{
	struct disarm_job *j;

	d->slice_spike = false;
	flight_arm(d->flight, false);
	d->spike_main_cpu = process_cpu_time_ns() - d->spike_cpu0;
	recorder_spike_cost(d->rec, mono - d->spike_opened, d->spike_main_cpu);
	j = calloc(1, sizeof(*j));
	if (j) {
		j->stream = d->stream;
		j->spike = true;
		d->job = j;
		if (pthread_create(&j->thread, NULL, disarm_run, j) == 0)
			return 0;
		d->job = NULL;
		free(j);
	}
	stream_arm(d->stream, false);
	return stream_drain(d->stream, d->learner, false);
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
 * take the interval over overhead_budget: the last interval's windows
 * plus this one's spike windows plus the last spike window's cost.
 */
static void spike_window_open(struct daemon *d, struct deadlines *t, int64_t mono,
			      const struct spike_hit *hit)
{
	double budget = d->cfg.overhead_budget * (double)d->cfg.interval_ns * d->boot.cpus_online;
	int64_t price = d->spike_price_ns;
	char what[128], note[192];

	snprintf(what, sizeof(what), "%s %.3g/s, %.0fx its median %.3g/s",
		 spike_counter_name(hit->counter), hit->rate,
		 hit->median > 0 ? hit->rate / hit->median : 0.0, hit->median);
	if (d->slice_off != INT64_MAX || d->job) {
		log_debug("Spike in %s: a window is open or being disarmed, no extra one", what);
		return;
	}
	if (d->spike_last && mono - d->spike_last < d->cfg.spike_holdoff_ns) {
		log_debug("Spike in %s: within spike_holdoff of the last spike window, none", what);
		return;
	}
	if (!window_slot_active(d->host_hash, t->flush_wall / d->cfg.interval_ns - 1,
				d->cfg.fleet_share)) {
		log_debug("Spike in %s: not this host's turn (fleet_share), no window", what);
		return;
	}
	if (next_slice_on(d) - mono < d->cfg.spike_window_ns + SPIKE_SLICE_GAP_NS) {
		log_debug("Spike in %s: the interval's own window opens sooner", what);
		return;
	}
	/* None yet: a learning slice's, which arms the same. */
	if (!price && window_prices_median(&d->learn_price) > 0)
		price = window_prices_median(&d->learn_price);
	if ((double)(recorder_window_cost_so_far(d->rec) + price) > budget) {
		/* Said once per holdoff, like a window. */
		d->spike_last = mono;
		snprintf(note, sizeof(note), "spike in %s: no window, over overhead_budget %g%%", what,
			 d->cfg.overhead_budget * 100);
		recorder_spike(d->rec, NULL, note);
		log_notice("Spike in %s: no extra window, it would exceed overhead_budget %g%% "
			   "(%.3g ms an interval)", what, d->cfg.overhead_budget * 100, budget / 1e6);
		return;
	}
	if (disarm_finish(d, false) < 0)
		log_warning("Failed to drain the learning streams, ignoring");
	d->spike_cpu0 = process_cpu_time_ns();
	d->spike_last = d->spike_opened = mono;
	if (d->snapshot) {
		if (stream_drain(d->stream, d->learner, false) < 0)
			log_warning("Failed to drain the learning streams before a snapshot, ignoring");
		mm_snapshot_take(d->snapshot, d->learner, now_ns(CLOCK_REALTIME));
	}
	if (learner_pages_full(d->learner))
		stream_skip_pages(d->stream);
	stream_arm(d->stream, true);
	flight_arm(d->flight, true);
	d->learn_last = mono;
	d->slice_spike = true;
	d->slice_learns = true;
	d->slice_off = mono + d->cfg.spike_window_ns;
	t->drain = mono + d->cfg.drain_ns;
	snprintf(note, sizeof(note), "spike window of %.0f ms: %s", d->cfg.spike_window_ns / 1e6, what);
	recorder_spike(d->rec, d->snapshot ? "spike learn snapshot" : "spike learn", note);
	log_info("Spike in %s: an extra window of %.0f ms", what, d->cfg.spike_window_ns / 1e6);
}

/* Between windows and in them: the free counters read, a spike judged. */
static void spike_check(struct daemon *d, struct deadlines *t, int64_t mono)
{
	struct spike_reading rd;
	struct spike_hit hit;
	int r;

	if (spike_watch_read(d->spike, &rd) < 0)
		return;
	r = spike_watch_feed(d->spike, &rd, (double)d->cfg.spike_factor, (double)d->cfg.spike_min_rate,
			     d->boot.cpus_online, &hit);
	if (!d->spike_ready_said && spike_watch_ready(d->spike) && d->cfg.spike_factor) {
		log_info("Spike watch ready: free counters judged against the median of their last "
			 "%d readings, every %g s", SPIKE_HISTORY, d->cfg.spike_check_ns / 1e9);
		d->spike_ready_said = true;
	}
	if (r == 1)
		spike_window_open(d, t, mono, &hit);
}

/*
 * Keeps what the slice saw and starts disarming: the counters are paused
 * and read here, everything else is closed by a thread (disarm_run()),
 * which then streams the slice's sched_switch sample, after the counting:
 * a streamed switch costs the workload far more than a counted one.
 */
static int slice_close(struct daemon *d, int64_t mono)
{
	struct disarm_job *j;

	if (d->slice_off == INT64_MAX)
		return 0;
	d->slice_off = INT64_MAX;
	if (d->slice_spike)
		return spike_window_close(d, mono);
	if (recorder_slice_end(d->rec, mono) < 0)
		log_warning("Failed to read the window's counters, its counts are lost");
	/* flight recorder: off with the window, as the streams */
	if (d->slice_learns)
		flight_arm(d->flight, false);
	if (d->sampler) {
		sampler_window(d->sampler, false, mono);
		if (sampler_drain(d->sampler, d->agg) < 0)
			log_warning("Failed to read memory samples, ignoring");
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		counters_disarm(d->counters);
		if (d->slice_learns)
			stream_arm(d->stream, false);
		return d->stream ? stream_drain(d->stream, d->learner, false) : 0;
	}
	j->counters = counters_retire(d->counters);
	j->stream = d->slice_learns ? d->stream : NULL;
	j->switch_ns = d->slice_learns ? d->cfg.switch_sample_ns : 0;
	j->main_ns = process_cpu_time_ns() - d->slice_cpu0;
	d->job = j;
	if (pthread_create(&j->thread, NULL, disarm_run, j) != 0) {
		/* No thread: the same work here, the main loop waiting. */
		j->inline_run = true;
		disarm_run(j);
		return disarm_finish(d, true);
	}
	return 0;
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
		wall = now_ns(CLOCK_REALTIME);
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
		int64_t wall = now_ns(CLOCK_REALTIME);

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

/*
 * How often the free counters are read for spikes: spike_check, twice that
 * while the host is quiet. A storm that starts on a quiet host is seen at
 * most one spike_check later, judged by its rate per second as any other.
 */
static int64_t spike_period(const struct daemon *d)
{
	return d->quiet ? 2 * d->cfg.spike_check_ns : d->cfg.spike_check_ns;
}

static int64_t next_wait(struct daemon *d, const struct deadlines *t, int64_t mono, int64_t wall)
{
	int64_t wait = t->flush_wall - wall;

	wait = min64(wait, t->drain - mono);
	wait = min64(wait, t->stop - mono);
	wait = min64(wait, t->ping - mono);
	wait = min64(wait, t->switch_off - mono);
	wait = min64(wait, t->switch_on - mono);
	wait = min64(wait, next_slice_on(d) - mono);
	wait = min64(wait, d->slice_off - mono);
	wait = min64(wait, t->spike - mono);
	/* A disarming thread or a snapshot at work: look in now and then. */
	if (d->job || flight_busy(d->flight))
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

/* Windowed: a slice ends, the disarming thread finishes, a slice begins. */
static int turn_slices(struct daemon *d, struct deadlines *t, int64_t mono, int64_t wall,
		       bool in_slice)
{
	int r;

	r = disarm_finish(d, false);
	if (r < 0) {
		final_flush(d);
		return r;
	}
	if (mono >= d->slice_off || (in_slice && wall >= t->flush_wall)) {
		/* The interval's end cuts a slice short: its note says so. */
		if (mono < d->slice_off && !d->slice_spike) {
			d->turns.cut_ns += d->slice_off - mono;
			d->turns.cut++;
		}
		r = slice_close(d, mono);
		if (r < 0)
			return r;
		t->drain = INT64_MAX;
	}
	if (mono >= next_slice_on(d) && wall < t->flush_wall) {
		/* An open slice took in those it overlaps (slice_open()). */
		if (d->slice_off != INT64_MAX && !d->slice_spike)
			return 0;
		/* A spike window still open (planned before the slice was):
		 * it ends here, and the slice is held back until its
		 * disarming is over (slice_open()). */
		if (d->slice_spike) {
			r = slice_close(d, mono);
			if (r < 0)
				return r;
		}
		slice_open(d, mono);
		if (d->stream && d->slice_off != INT64_MAX)
			t->drain = mono + d->cfg.drain_ns;
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
	if (!d->windowed)
		lock_mode_after_drain(d);
	storm_check(d);
	t->drain = d->windowed && d->slice_off == INT64_MAX ? INT64_MAX : mono + d->cfg.drain_ns;
	return 0;
}

/*
 * What kept the interval's armed time from its plan, after what planning
 * said: slices that never opened (held back past the interval's end) and
 * slices its end cut short. Nothing else shortens a slice, so an interval
 * armed for less than planned says why here.
 */
static void note_slice_turns(struct daemon *d)
{
	const struct slice_turns *s = &d->turns;
	size_t unopened = d->plan.n - d->next_slice;
	char note[200];
	int len = 0;

	if (!d->active || (!unopened && !s->cut))
		return;
	if (unopened)
		len += snprintf(note + len, sizeof(note) - len, "%zu of %zu slices not opened before "
				"the interval's end", unopened, d->plan.n);
	if (s->cut)
		len += snprintf(note + len, sizeof(note) - len, "%s%zu slice%s cut %.1f ms short by the "
				"interval's end", len ? ", " : "", s->cut, s->cut > 1 ? "s" : "",
				s->cut_ns / 1e6);
	if (s->waited_ns)
		snprintf(note + len, sizeof(note) - len, " (held back %.0f ms for the last slice's "
			 "disarming)", s->waited_ns / 1e6);
	recorder_window_note_add(d->rec, note);
}

/* The interval's row, then the plan of the next interval. */
static void flush(struct daemon *d, struct deadlines *t, int64_t wall)
{
	/* Continuous: CPUs that came online are counted from now on
	 * (windowed, each arming looks at the online CPUs itself). */
	if (!d->windowed)
		counters_refresh_cpus(d->counters);
	if (d->windowed)
		note_slice_turns(d);
	/* A failed write is logged and folded into the next. */
	if (recorder_flush(d->rec, wall, false) == 0) {
		if (d->windowed)
			budget_account(d);
		after_flush(d, wall);
		if (!d->windowed)
			lock_mode_after_flush(d);
	}
	t->flush_wall = interval_boundary_after(wall, d->cfg.interval_ns);
	if (d->windowed)
		plan_interval(d, now_ns(CLOCK_MONOTONIC), wall, t->flush_wall);
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

static int run(struct daemon *d, int ready_fd)
{
	int64_t wall = now_ns(CLOCK_REALTIME), mono = now_ns(CLOCK_MONOTONIC);
	struct deadlines t = {
		.flush_wall = interval_boundary_after(wall, d->cfg.interval_ns),
		/* Without a learning stream there is nothing to drain;
		 * windowed, only while a slice is open. */
		.drain = d->stream && !d->windowed ? mono + d->cfg.drain_ns : INT64_MAX,
		.stop = d->cfg.duration_ns ? mono + d->cfg.duration_ns : INT64_MAX,
		.ping = INT64_MAX,
		.switch_on = INT64_MAX,
		.switch_off = INT64_MAX,
		.spike = d->spike && d->cfg.spike_check_ns ? mono + d->cfg.spike_check_ns : INT64_MAX,
	};
	bool stop = false;
	int r;

	d->slice_off = INT64_MAX;
	if (d->windowed)
		plan_interval(d, mono, wall, t.flush_wall);
	else if (d->sampler)
		sampler_tick(d->sampler, mono);
	if (!d->windowed && windows_wanted(d))
		t.switch_on = next_switch_window(d, mono, t.flush_wall - wall);
	if (sd_watchdog_enabled(0, &d->watchdog_usec) > 0)
		t.ping = mono + (int64_t)d->watchdog_usec * 1000 / 2;
	announce(d, ready_fd);

	while (!stop) {
		bool in_slice = d->slice_off != INT64_MAX;

		wall = now_ns(CLOCK_REALTIME);
		mono = now_ns(CLOCK_MONOTONIC);
		/* The wall clock jumped back by more than an interval. */
		if (t.flush_wall - wall > d->cfg.interval_ns)
			t.flush_wall = interval_boundary_after(wall, d->cfg.interval_ns);
		r = wait_and_signals(d, next_wait(d, &t, mono, wall), &stop);
		if (r < 0)
			return r;

		mono = now_ns(CLOCK_MONOTONIC);
		wall = now_ns(CLOCK_REALTIME);
		if (mono >= t.stop)
			stop = true;
		if (mono >= t.ping) {
			sd_notify(0, "WATCHDOG=1");
			t.ping = mono + (int64_t)d->watchdog_usec * 1000 / 2;
		}
		if (stop)
			break;
		/* flight recorder: a snapshot's child done, listed, ring renewed */
		flight_poll(d->flight, d->db, d->boot_id, d->slice_off != INT64_MAX && d->slice_learns,
			    false);
		if (d->sampler) {
			if (!d->windowed)
				sampler_tick(d->sampler, mono);
			if (sampler_active(d->sampler) && sampler_drain(d->sampler, d->agg) < 0)
				log_warning("Failed to read memory samples, ignoring");
		}
		r = turn_slices(d, &t, mono, wall, in_slice);
		if (r < 0)
			return r;
		if (d->spike && d->cfg.spike_check_ns) {
			/* (also after a reload turned it on) */
			if (t.spike == INT64_MAX)
				t.spike = mono + spike_period(d);
			if (mono >= t.spike) {
				spike_check(d, &t, mono);
				t.spike = mono + spike_period(d);
			}
		} else {
			t.spike = INT64_MAX;
		}
		turn_switch_windows(d, &t, mono);
		if (d->stream && mono >= t.drain) {
			r = drain(d, &t, mono);
			if (r < 0)
				return r;
		}
		if (wall >= t.flush_wall)
			flush(d, &t, wall);
	}

	r = slice_close(d, now_ns(CLOCK_MONOTONIC));
	if (r >= 0)
		r = disarm_finish(d, true);
	if (r < 0)
		log_warning_errno(r, "Failed to read the last window's learning events: %m, ignoring");
	r = final_flush(d);
	log_info("Stopped after %" PRIu64 " intervals", recorder_totals(d->rec)->written);
	return r;
}

int main(int argc, char **argv)
{
	struct daemon d = { .sigfd = -1 };
	int ready_fd = -1;
	sigset_t mask;
	int r;

	log_setup("mmhitmd");
	r = parse_argv(argc, argv, &d.opts);
	if (r != 0)
		return r > 0 ? 0 : 2;

	r = load_config(&d.opts, &d.cfg);
	if (d.opts.check_config) {
		if (r < 0)
			return EXIT_CONFIG;
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

	r = setup(&d);
	/* Setup parsed kallsyms and BTF (megabytes, freed now): give the
	 * memory back rather than carry it for the daemon's lifetime. */
	malloc_trim(0);
	if (r >= 0)
		r = run(&d, ready_fd);
	else if (r == -ECANCELED)
		log_info("Stopped before recording");	/* a signal while waiting for the DB */
	else
		sd_notifyf(0, "STATUS=Failed to start: %s\nERRNO=%d", strerror(-r), -r);
	teardown(&d);
	return r < 0 && r != -ECANCELED ? 1 : 0;
}
