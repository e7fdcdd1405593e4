// SPDX-License-Identifier: GPL-2.0
/*
 * bench-analyze: what the daemon's per-interval attribution (analyze_db()
 * after every flush) costs on a database with a long history.
 *
 * Builds, in a child process, a database with one live boot holding
 * --objects learned mm_structs and --locks contended locks (rows as
 * daemon/learn.c writes them) and --intervals analyzed intervals, then in a
 * fresh process times analyze_db() on
 *   - quiet intervals: one new interval each, no samples, nothing learned;
 *   - sampled intervals: one new interval each with --samples kernel
 *     samples, a few of them inside learned mm_structs,
 * and prints wall time per call and the peak RSS the calls added (the
 * process's ru_maxrss before and after). Numbers only: no thresholds.
 *
 * With --learn N, every measured interval also learns N new mm_structs
 * (a host that forks), which makes the analysis retry unresolved rows;
 * --history-samples N puts N unresolved samples in every history interval;
 * --rounds N measures N intervals of each kind (5). --compare-cache times
 * them with and without the daemon's statement cache (db_cache_statements()),
 * interleaved, and prints the ratios with a control.
 *
 *   build/bench/bench-analyze [--objects N] [--locks N] [--samples N]
 *                             [--intervals N] [--learn N] [--history-samples N]
 *                             [--rounds N] [--compare-cache] [--db PATH]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analyze.h"
#include "db.h"
#include "log.h"
#include "rules.h"
#include "stats.h"
#include "util.h"

#define T0	1700000000000000000LL	/* ns */
#define IV_NS	(60 * NSEC_PER_SEC)
#define MM_BASE	0xffff888100000000ULL
#define MM_STEP	0x800ULL		/* bytes between learned mm_structs */
#define LK_BASE	0xffff889000000000ULL
#define MM_SIZE	1344			/* sizeof(struct mm_struct), roughly */

static uint64_t n_objects = 500000, n_locks = 20000, n_samples = 200, n_intervals = 100;
static uint64_t n_learn;	/* mm_structs learned per measured interval */
static uint64_t n_hist_samples;	/* samples per history interval (nobody's) */
static int rounds = 5;
static bool compare_cache;	/* --compare-cache */

static int build(const char *path)
{
	_cleanup_finalize_ sqlite3_stmt *mm = NULL, *lk = NULL, *iv = NULL;
	sqlite3 *db = NULL;
	int r;

	r = db_open(path, 0, &db);
	if (r < 0)
		return r;
	r = db_exec(db, "INSERT INTO hosts(host_id, machine_id, hostname) VALUES (1, 'mid', 'bench');"
		    "INSERT INTO boots(boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
		    " kernel_release, kernel_version, arch, nr_cpus_online, nr_cpus_possible, cache_line_size, page_size,"
		    " pmu_kind, lru_gen) VALUES (1, 1, 'bench-boot', 1700000000000000000,"
		    " 1700000000000000000, '6.12.0-bench', '#1 SMP', 'x86_64', 4, 4, 64, 4096, 'intel-pebs', 'on');"
		    "INSERT INTO btf_layouts(boot_id, struct, field, offset, size, type) VALUES"
		    " (1, 'mm_struct', '', 0, 1344, 'struct mm_struct'),"
		    " (1, 'mm_struct', 'mm_count', 0, 4, 'atomic_t'),"
		    " (1, 'mm_struct', 'cpu_bitmap', 1344, 0, 'unsigned long[]');");
	if (r >= 0)
		r = db_begin(db);
	if (r >= 0)
		r = db_prepare(db, &mm, "INSERT INTO mm_objects(boot_id, addr, tgid, comm, learned_from,"
				   " alloc_ns, free_ns, first_seen_ns, last_seen_ns)"
				   " VALUES (1, ?1, ?2, 'bench', 'fork', ?3, ?4, ?3, ?4)");
	if (r >= 0)
		r = db_prepare(db, &lk, "INSERT INTO lock_objects(boot_id, addr, flags, contentions,"
				   " first_seen_ns, last_seen_ns) VALUES (1, ?1, 1, 3, ?2, ?2)");
	if (r >= 0)
		r = db_prepare(db, &iv, "INSERT INTO intervals(interval_id, boot_id, start_ns, end_ns)"
				   " VALUES (?1, 1, ?2, ?3)");
	/* Short-lived processes: every slot reused every 1000 objects. */
	for (uint64_t i = 0; r >= 0 && i < n_objects; i++) {
		int64_t t = T0 + (int64_t)(i * (n_intervals * IV_NS / (n_objects ? n_objects : 1)));

		sqlite3_bind_int64(mm, 1, (int64_t)(MM_BASE + (i % 100000) * MM_STEP));
		sqlite3_bind_int64(mm, 2, (int64_t)(1000 + i));
		sqlite3_bind_int64(mm, 3, t);
		sqlite3_bind_int64(mm, 4, t + NSEC_PER_SEC);
		r = db_step_done(db, mm);
	}
	for (uint64_t i = 0; r >= 0 && i < n_locks; i++) {
		sqlite3_bind_int64(lk, 1, (int64_t)(LK_BASE + i * 64));
		sqlite3_bind_int64(lk, 2, T0);
		r = db_step_done(db, lk);
	}
	for (uint64_t i = 1; r >= 0 && i <= n_intervals; i++) {
		sqlite3_bind_int64(iv, 1, (int64_t)i);
		sqlite3_bind_int64(iv, 2, T0 + (int64_t)(i - 1) * IV_NS);
		sqlite3_bind_int64(iv, 3, T0 + (int64_t)i * IV_NS);
		r = db_step_done(db, iv);
		for (uint64_t k = 0; r >= 0 && k < n_hist_samples; k++) {
			char sql[256];

			snprintf(sql, sizeof(sql), "INSERT INTO mem_lines(interval_id, line_addr, offset, ip,"
				 " callchain_id, kernel, loads, lcl_hitm, rmt_hitm) VALUES (%" PRIu64 ", %" PRId64
				 ", 8, %" PRId64 ", 0, 1, 2, 1, 0)", i,
				 (int64_t)(0xffff8b0000000000ULL + (i * n_hist_samples + k) * 64),
				 (int64_t)0xffffffff81000000ULL);
			r = db_exec(db, sql);
		}
	}
	if (r >= 0)
		r = db_commit(db);
	db_finalize(mm);
	db_finalize(lk);
	db_finalize(iv);
	mm = lk = iv = NULL;
	db_close(db);
	return r;
}

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* Appends interval id, with samples kernel samples when samples > 0. */
static int add_interval(sqlite3 *db, int64_t id, uint64_t samples)
{
	char sql[512];
	int r;

	snprintf(sql, sizeof(sql), "INSERT INTO intervals(interval_id, boot_id, start_ns, end_ns)"
		 " VALUES (%" PRId64 ", 1, %" PRId64 ", %" PRId64 ")", id, (int64_t)(T0 + (id - 1) * IV_NS),
		 (int64_t)(T0 + id * IV_NS));
	r = db_exec(db, sql);
	for (uint64_t i = 0; r >= 0 && i < n_learn; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO mm_objects(boot_id, addr, tgid, comm, learned_from,"
			 " alloc_ns, first_seen_ns, last_seen_ns) VALUES (1, %" PRId64 ", 1, 'new', 'fork',"
			 " %" PRId64 ", %" PRId64 ", %" PRId64 ")",
			 (int64_t)(MM_BASE + 0x10000000ULL + ((uint64_t)id * n_learn + i) * MM_STEP),
			 (int64_t)(T0 + (id - 1) * IV_NS), (int64_t)(T0 + (id - 1) * IV_NS),
			 (int64_t)(T0 + (id - 1) * IV_NS));
		r = db_exec(db, sql);
	}
	if (r < 0 || !samples)
		return r;
	snprintf(sql, sizeof(sql), "INSERT INTO sampling(interval_id, samples) VALUES (%" PRId64 ", %" PRIu64 ")",
		 id, samples);
	r = db_exec(db, sql);
	for (uint64_t i = 0; r >= 0 && i < samples; i++) {
		/* one in four inside a learned mm_struct, one in four at a lock */
		uint64_t a = i % 4 == 0 ? MM_BASE + (i * 7919 % 100000) * MM_STEP + 64 :
			     i % 4 == 1 ? LK_BASE + (i * 104729 % (n_locks ? n_locks : 1)) * 64 :
			     0xffff8a0000000000ULL + i * 4096 + 8;

		snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO mem_lines(interval_id, line_addr, offset,"
			 " ip, callchain_id, kernel, loads, lcl_hitm, rmt_hitm) VALUES (%" PRId64 ", %" PRId64
			 ", %d, %" PRId64 ", 0, 1, 2, 1, 0)", id, (int64_t)(a & ~63ULL), (int)(a & 63),
			 (int64_t)0xffffffff81000000ULL + (int64_t)i);
		r = db_exec(db, sql);
	}
	return r;
}

static double secs(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

/* Times one analyze_db() on db after adding one interval through writer. */
static int timed_step(sqlite3 *writer, sqlite3 *db, struct rules *rules, int64_t *next_id,
		      uint64_t samples, double *ret)
{
	struct analyze_stats st;
	struct timespec a, b;
	int r;

	r = add_interval(writer, (*next_id)++, samples);
	if (r < 0)
		return r;
	clock_gettime(CLOCK_MONOTONIC, &a);
	r = analyze_db(db, rules, 0, &st);
	clock_gettime(CLOCK_MONOTONIC, &b);
	*ret = secs(&a, &b);
	return r;
}

static int measure(sqlite3 *db, struct rules *rules, const char *what, int64_t *next_id,
		   uint64_t samples)
{
	double total = 0, worst = 0;
	long rss0 = maxrss_kb();
	int r = 0;

	for (int i = 0; i < rounds; i++) {
		double t;

		r = timed_step(db, db, rules, next_id, samples, &t);
		if (r < 0)
			return r;
		total += t;
		if (t > worst)
			worst = t;
	}
	printf("%-8s intervals: %d x analyze_db: mean %.4f s, max %.4f s, peak RSS +%ld KiB\n",
	       what, rounds, total / rounds, worst, maxrss_kb() - rss0);
	return 0;
}

static void print_ratio(const char *what, const double *lr, size_t n)
{
	struct t_interval ti;

	if (stats_t_mean(lr, n, 0.95, &ti) < 0)
		return;
	printf("  %-34s %+6.1f%% [%+.1f%% .. %+.1f%%]\n", what, 100 * expm1(ti.estimate),
	       100 * expm1(ti.lo), 100 * expm1(ti.hi));
}

/*
 * The statement cache against none, in one process on one database: three
 * connections, two without a cache (the second is the control) and one
 * with the daemon's, take turns in a rotating order, each analyzing the
 * interval it has just added. Per round, the log ratio of each to the
 * first; the mean and its 95 % interval (Student's t over the rounds).
 */
static int measure_cache(const char *path, struct rules *rules, const char *what, uint64_t samples)
{
	sqlite3 *db[3] = {};
	double *t[3] = {}, *lr[2] = {};
	int64_t next_id = 0;
	int r = 0;

	for (int k = 0; k < 3 && r >= 0; k++) {
		r = db_open(path, 0, &db[k]);
		t[k] = calloc((size_t)rounds, sizeof(double));
		if (r >= 0 && !t[k])
			r = -ENOMEM;
	}
	for (int k = 0; k < 2 && r >= 0; k++)
		if (!(lr[k] = calloc((size_t)rounds, sizeof(double))))
			r = -ENOMEM;
	if (r >= 0)
		r = db_cache_statements(db[2], 128);
	if (r >= 0)
		r = db_query_int(db[0], &next_id, "SELECT max(interval_id) + 1 FROM intervals");
	/* a first turn each: the page cache and the statements warm. The
	 * intervals are added through an uncached connection: a sample's
	 * literal INSERTs would crowd the analysis's statements out of the
	 * cache, which the daemon's flush (bound statements) does not. */
	for (int k = 0; k < 3 && r >= 0; k++)
		r = timed_step(db[0], db[k], rules, &next_id, samples, &t[k][0]);
	for (int i = 0; i < rounds && r >= 0; i++) {
		for (int j = 0; j < 3 && r >= 0; j++) {
			int k = (i + j) % 3;

			r = timed_step(db[0], db[k], rules, &next_id, samples, &t[k][i]);
		}
		if (r >= 0) {
			lr[0][i] = log(t[1][i] / t[0][i]);
			lr[1][i] = log(t[2][i] / t[0][i]);
		}
	}
	if (r >= 0) {
		printf("%-8s intervals: %d rounds, analyze_db without a statement cache: mean %.4f s\n",
		       what, rounds, stats_mean(t[0], (size_t)rounds));
		print_ratio("without one again (control)", lr[0], (size_t)rounds);
		print_ratio("with the daemon's statement cache", lr[1], (size_t)rounds);
	}
	for (int k = 0; k < 3; k++) {
		db_close(db[k]);
		free(t[k]);
	}
	free(lr[0]);
	free(lr[1]);
	return r;
}

/* One measurement in a child: a fresh heap and a fresh peak RSS. */
static int run_child(const char *path, const char *what, uint64_t samples)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct rules *rules = rules_new();
		struct analyze_stats st;
		sqlite3 *db = NULL;
		int64_t next_id = 0;
		int r = rules ? rules_load_defaults(rules) : -1;

		if (r >= 0 && compare_cache && strcmp(what, "history") != 0) {
			r = measure_cache(path, rules, what, samples);
			rules_free(rules);
			fflush(stdout);
			_exit(r < 0);
		}
		if (r >= 0)
			r = db_open(path, 0, &db);
		if (r >= 0)
			r = db_query_int(db, &next_id, "SELECT max(interval_id) + 1 FROM intervals");
		if (r >= 0 && strcmp(what, "history") == 0)
			r = analyze_db(db, rules, 0, &st);
		else if (r >= 0)
			r = measure(db, rules, what, &next_id, samples);
		db_close(db);
		rules_free(rules);
		fflush(stdout);
		_exit(r < 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s run failed\n", what);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "objects", required_argument, NULL, 'o' },
		{ "locks", required_argument, NULL, 'l' },
		{ "samples", required_argument, NULL, 's' },
		{ "intervals", required_argument, NULL, 'i' },
		{ "db", required_argument, NULL, 'd' },
		{ "learn", required_argument, NULL, 'n' },
		{ "history-samples", required_argument, NULL, 'h' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "compare-cache", no_argument, NULL, 'c' },
		{}
	};
	char path[256];
	pid_t pid;
	int c, status, r;

	snprintf(path, sizeof(path), "/tmp/mmhitm-bench-analyze-%d.db", getpid());
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'o': n_objects = strtoull(optarg, NULL, 10); break;
		case 'l': n_locks = strtoull(optarg, NULL, 10); break;
		case 's': n_samples = strtoull(optarg, NULL, 10); break;
		case 'i': n_intervals = strtoull(optarg, NULL, 10); break;
		case 'd': snprintf(path, sizeof(path), "%s", optarg); break;
		case 'n': n_learn = strtoull(optarg, NULL, 10); break;
		case 'h': n_hist_samples = strtoull(optarg, NULL, 10); break;
		case 'c': compare_cache = true; break;
		case 'r': rounds = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
		default: return 2;
		}
	}
	unlink(path);
	/* The build's page cache and heap must not count in the figures. */
	pid = fork();
	if (pid == 0)
		_exit(build(path) < 0);
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "building %s failed\n", path);
		return 1;
	}
	printf("%s: %" PRIu64 " mm_objects, %" PRIu64 " lock_objects, %" PRIu64 " intervals\n",
	       path, n_objects, n_locks, n_intervals);
	fflush(stdout);

	/* The history, analyzed once as the daemon would have, in the
	 * child too; each measurement in a fresh process of its own. */
	r = run_child(path, "history", 0);
	if (r >= 0)
		r = run_child(path, "quiet", 0);
	if (r >= 0)
		r = run_child(path, "sampled", n_samples);
	for (size_t i = 0; i < 3; i++) {
		static const char *const sfx[] = { "", "-wal", "-shm" };
		char p[300];

		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
	return r < 0;
}
