// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitmd's setup, in steps (setup.h): the database and its locks, the
 * boot's identity, the counted tracepoints, the learning streams, the
 * sampler and the recorder; what a reload adopts; and the teardown.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "boot.h"
#include "btf.h"
#include "config.h"
#include "counters.h"
#include "daemon.h"
#include "db.h"
#include "exitcode.h"
#include "events.h"
#include "flight.h"
#include "kallsyms.h"
#include "learn.h"
#include "lock.h"
#include "log.h"
#include "mem-agg.h"
#include "patchmap.h"
#include "recorder.h"
#include "sampler.h"
#include "schedule.h"
#include "setup.h"
#include "snapshot.h"
#include "stream.h"
#include "util.h"

/* Start-up backoff while the database can't be written (s): doubling. */
#define DB_WAIT_FIRST_S 1
#define DB_WAIT_MAX_S 60

/*
 * Kernel functions worth keeping per boot besides the paths' own (the
 * path table's `functions`; markers a patch leaves behind come from the
 * patch map): the allocators of mm_struct.
 */
static const char *const interesting_symbols[] = {
	"copy_process", "dup_mm", "mm_alloc", "__mmdrop",
};

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
	for (int p = 0; p < paths_nr(); p++)
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
 * What one counted event costs the task that hits it, for the overhead
 * budget. Switches are the events a process can make fastest, so the
 * calibration counts sched:sched_switch on a counter set of its own (the
 * windows read ctxt for it instead) and makes switches: two threads
 * pinned to one CPU sched_yield() to each other, timed in this process's
 * CPU time with the counter armed and disarmed in turn; the median over
 * the rounds of the difference per switch made. A fraction of a second of CPU at start; clamped, since a
 * busy host makes it noisy. And bounded in wall time: on a loaded CPU
 * every yield hands it to the other tasks for a slice, so the runs stop
 * at CALIBRATION_WALL_NS and the rounds done by then decide, or the
 * default when none finished.
 */
#define CALIBRATION_YIELDS	5000	/* per thread and run */
#define CALIBRATION_ROUNDS	5
#define CALIBRATION_WALL_NS	(2 * NSEC_PER_SEC)
#define CALIBRATION_MIN_YIELDS	1000	/* per thread: fewer tell nothing */
#define EVENT_PRICE_MIN_NS	20.0
#define EVENT_PRICE_MAX_NS	5000.0
#define EVENT_PRICE_DEFAULT_NS	250.0	/* when calibration tells nothing */

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

static double calibrate_event_price(void)
{
	double diff[CALIBRATION_ROUNDS], price = EVENT_PRICE_DEFAULT_NS;
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + CALIBRATION_WALL_NS;
	struct event_status_list scratch = {};
	struct counters *c = counters_new(false);
	int cpu = sched_getcpu();
	size_t nd = 0;
	bool cut = false;

	if (!c || counters_add(c, "sched:sched_switch", &scratch) < 0 || !counters_count(c) ||
	    cpu < 0 || calibration_run(cpu, deadline) < 0)	/* also warms up */
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
	counters_free(c);
	event_status_list_done(&scratch);
	if (nd)
		log_info("Calibrated the kernel cost of a counted event: %.0f ns (%zu rounds of up to %d"
			 " switches%s)", price, nd, 2 * CALIBRATION_YIELDS,
			 cut ? "; the CPU is busy, cut at 2 s" : "");
	else
		log_info("Kernel cost of a counted event: %.0f ns assumed (the CPU is too busy to "
			 "calibrate in 2 s)", price);
	return price;
}

/* Why a database step failed: opening keeps its own reason. */
static const char *step_error(int r)
{
	return db_open_error()[0] ? db_open_error() : db_error(r);
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
		r = step(d, arg);
		if (r >= 0) {
			if (tries)
				log_notice("Could %s after waiting %.0f s", what,
					   (now_ns(CLOCK_MONOTONIC) - since) / 1e9);
			return r;
		}
		if (!db_error_transient(r))
			return r;
		if (!tries)
			log_warning_errno(r, "Cannot %s yet (%s); waiting, retrying with backoff up to "
					  "every %d s", what, step_error(r), DB_WAIT_MAX_S);
		/* The busy timeout of the next try counts too: extend by both. */
		sd_notifyf(0, "STATUS=Waiting to %s: %s (try %u, next in %" PRId64 " s)\n"
			   "EXTEND_TIMEOUT_USEC=%" PRId64, what, step_error(r), tries + 1, delay,
			   (delay + 30) * 1000000);
		r = d->sleep_on_signals(d, delay * 1000);
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

/*
 * SQLite's page cache for the daemon's connection: 512 KiB (the default is
 * 2000 KiB). At the default it was 2.3 of the 3 MB the daemon held live
 * after hours; at 512 KiB, an hour into the soak, it served 81.6k page
 * reads a minute and sent 8.4k to the kernel's page cache, with no CPU
 * difference measurable (bench/README.md, "The daemon's memory").
 */
#define DAEMON_DB_CACHE "PRAGMA cache_size = -512"

/*
 * Prepared statements the daemon's connection keeps between intervals.
 * Parsing them again was half of a quiet interval's CPU (perf, 2 s
 * intervals, 2026-12-07); a default interval uses about 60 distinct ones.
 */
#define DAEMON_DB_STATEMENTS 128

static int open_db_step(struct daemon *d, void *arg)
{
	struct stat st;
	bool existed = stat(d->cfg.db_path, &st) == 0;
	int r, e;

	r = db_open(d->cfg.db_path, 0, &d->db);
	if (r >= 0)
		r = ensure_incremental_vacuum(d->db);
	if (r >= 0)
		r = db_exec(d->db, DAEMON_DB_CACHE);
	/* an optimization: without it the daemon parses more, nothing else */
	if (r >= 0 && (e = db_cache_statements(d->db, DAEMON_DB_STATEMENTS)) < 0)
		log_warning_errno(e, "Cannot keep prepared statements: %m, ignoring");
	if (r < 0) {
		db_close(d->db);
		d->db = NULL;
		if (!existed)
			remove_if_created_empty(d->cfg.db_path);
	}
	return r;
}

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
	for (int p = 0; r >= 0 && ks && p < paths_nr(); p++)
		for (size_t i = 0; r >= 0 && i < path_get(p)->nr_functions; i++) {
			const struct ksym *k = kallsyms_find(ks, path_get(p)->functions[i]);

			if (k)
				r = kallsyms_store(d->db, d->boot_id, k);
		}
	r = r < 0 ? r : setup_patch_state(d, ks);
	return db_end(d->db, r);
}

/* The database, alone: nothing is touched before both locks are held. */
static int setup_db(struct daemon *d)
{
	int r;

	r = ensure_parent_dir(d->cfg.db_path);
	if (r < 0)
		return log_error_errno(r, "Failed to create the directory of %s: %m", d->cfg.db_path);
	/* Someone else's file gets nothing beside it, not a lock file. */
	r = db_refuse_foreign(d->cfg.db_path);
	if (r < 0)
		goto refused;
	/* Before anything is touched: a second daemon must leave the first's
	 * database and tracefs instance alone. */
	r = daemon_locks_acquire(d->cfg.db_path, d->cfg.instance, &d->locks);
	if (r < 0)
		return r;
	r = retry_db_step(d, "open the database", open_db_step, NULL);
	if (r >= 0 || r == -ECANCELED)
		return r;
refused:
	d->exit_status = exit_status_input(r);
	return log_error_errno(r, "Cannot open the database %s: %s", d->cfg.db_path, step_error(r));
}

/* What this boot is, and the recording mode that follows from it. */
static int setup_host(struct daemon *d)
{
	int r;

	r = boot_info_collect(&d->boot);
	if (r < 0)
		return r;
	d->windowed = config_windowed(&d->cfg);
	d->sched = schedule_new(d);
	if (!d->sched)
		return log_oom();
	log_info("Host %s, kernel %s, %d CPUs, PMU %s, LRU_GEN %s; mmhitmd %s", d->boot.hostname,
		 d->boot.release, d->boot.cpus_online, d->boot.pmu.kind, d->boot.lru_gen, MMHITM_VERSION);
	if (strcmp(d->boot.pmu.kind, "none") == 0)
		log_notice("No HITM sampling on this host (%s); recording tracepoints only",
			   d->boot.pmu.detail);
	if (!tracefs_dir())
		return -ENOENT;
	if (btf_layout_collect(NULL, &d->btf) < 0)
		log_warning("No BTF layouts: object fields can't be named on this boot, continuing");
	return 0;
}

/* The counted tracepoints: events_counted() (the list the trace.dat
 * import reads too), then count_events. */
static int setup_counters(struct daemon *d)
{
	const char *counted[EVENTS_COUNTED_MAX];
	int nr_counted, r;

	raise_fd_limit();
	d->counters = counters_new(!d->windowed);
	if (!d->counters)
		return log_oom();
	nr_counted = events_counted(!d->windowed, counted, ARRAY_SIZE(counted));
	if (nr_counted < 0)
		return log_error_errno(nr_counted, "The path table's work tracepoints do not fit: %m");
	for (int i = 0; i < nr_counted; i++) {
		r = counters_add(d->counters, counted[i], &d->status);
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
		d->event_price_ns = calibrate_event_price();
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
	/* Continuous mode has everything armed all along: no spike to see.
	 * Without learning streams a spike window would arm nothing. */
	if (d->windowed && d->stream)
		schedule_watch_spikes(d);
	return 0;
}

/* The boot's row, then the recorder's first baseline. Takes ks. */
static int setup_recorder(struct daemon *d, struct kallsyms *ks)
{
	int r;

	r = retry_db_step(d, "store the boot", store_boot_step, ks);
	if (r < 0) {
		if (r != -ECANCELED)
			log_error_errno(r, "Cannot store the boot in %s: %s", d->cfg.db_path,
					db_error(r));
		goto out;
	}
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

int daemon_setup(struct daemon *d)
{
	struct kallsyms *ks;
	int r;

	r = setup_db(d);
	if (r < 0)
		return r;
	r = setup_host(d);
	if (r < 0)
		return r;
	/*
	 * The task iterator before the symbols: loading it parses the
	 * kernel's whole BTF (11.5 MB of heap on 6.18, freed once loaded),
	 * and with the symbol table beside it (8.5 MB while read) the
	 * start-up peak was 26 MB. Not fatal: the windows' learning streams
	 * still learn new mms.
	 */
	if (d->windowed && d->cfg.learn_mm)
		d->snapshot = mm_snapshot_new(&d->status);
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

void daemon_teardown(struct daemon *d)
{
	if (schedule_disarm_finish(d, true) < 0)
		log_warning("Failed to drain the learning streams at exit, ignoring");
	recorder_free(d->rec);
	flight_free(d->flight);
	schedule_free(d->sched);
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
	if (d->db) {
		struct db_cache_stats cs;

		db_cache_stats(d->db, &cs);
		log_debug("Statement cache: %zu held, %" PRIu64 " reused, %" PRIu64 " prepared",
			  cs.held, cs.hits, cs.misses);
	}
	db_close(d->db);
	/* Last: the instances are gone (stream_free) before another daemon
	 * may take them over. */
	daemon_locks_free(d->locks);
	config_done(&d->cfg);
	if (d->sigfd >= 0)
		close(d->sigfd);
}

void daemon_reload(struct daemon *d, struct config *c)
{
	/* What the running recorder can adopt now; the rest needs a restart. */
	if (strcmp(c->db_path, d->cfg.db_path) != 0 || strcmp(c->instance, d->cfg.instance) != 0 ||
	    c->buffer_size_kb != d->cfg.buffer_size_kb || c->learn_mm != d->cfg.learn_mm ||
	    c->learn_pages != d->cfg.learn_pages || c->learn_locks != d->cfg.learn_locks ||
	    c->page_pair_shift != d->cfg.page_pair_shift || strcmp(c->count_events, d->cfg.count_events) != 0 ||
	    strcmp(c->record_mode, d->cfg.record_mode) != 0 ||
	    c->max_locks != d->cfg.max_locks || c->max_held_records != d->cfg.max_held_records)
		log_notice("db, instance, buffer, learning, counted-event, record_mode and table-bound "
			   "changes take effect at the next restart");
	d->cfg.interval_ns = c->interval_ns;
	d->cfg.drain_ns = c->drain_ns;
	d->cfg.log_level = c->log_level;
	d->cfg.max_page_pairs = c->max_page_pairs;
	d->cfg.retention_detail_ns = c->retention_detail_ns;
	d->cfg.retention_raw_ns = c->retention_raw_ns;
	d->cfg.retention_rollup_ns = c->retention_rollup_ns;
	d->cfg.max_db_size = c->max_db_size;
	d->cfg.cpu_budget_pct = c->cpu_budget_pct;
	d->cfg.window_ns = c->window_ns;
	d->cfg.window_slices = c->window_slices;
	d->cfg.overhead_budget = c->overhead_budget;
	d->cfg.fleet_share = c->fleet_share;
	d->cfg.spike_check_ns = c->spike_check_ns;
	d->cfg.spike_factor = c->spike_factor;
	d->cfg.spike_min_rate = c->spike_min_rate;
	d->cfg.quiet_cpu = c->quiet_cpu;
	d->cfg.quiet_learn_ns = c->quiet_learn_ns;
	d->cfg.spike_window_ns = c->spike_window_ns;
	d->cfg.spike_holdoff_ns = c->spike_holdoff_ns;
	free(d->cfg.metrics_file);
	d->cfg.metrics_file = c->metrics_file;
	c->metrics_file = NULL;
	/* (a reload while waiting for the database: the recorder starts with it) */
	if (d->rec)
		recorder_set_interval(d->rec, c->interval_ns);
	log_set_max_level(c->log_level);
	config_done(c);
}
