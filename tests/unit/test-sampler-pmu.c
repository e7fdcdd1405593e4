// SPDX-License-Identifier: GPL-2.0
/*
 * The one test that needs a memory-sampling PMU (Intel PEBS or AMD IBS):
 * skipped, with the detected reason, everywhere else (this project's VMs).
 * On such a host, as root:
 *
 *	make build/tests/test-sampler-pmu && build/tests/test-sampler-pmu
 *
 * (or `make check`, which runs it). It bounces one cache line between two
 * threads pinned to two CPUs (one stores, one loads), samples with the
 * detected events through the live sampler, and requires HITM samples on
 * that line in the aggregate; with perf installed, it also records the same
 * workload with `perf c2c record`, imports the file through `mmhitm import`
 * code and requires HITM on the line there too, and prints both views.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "db.h"
#include "log.h"
#include "mem-agg.h"
#include "pmu.h"
#include "sampler.h"
#include "test.h"
#include "util.h"

static _Alignas(256) volatile uint64_t line[32];
static atomic_int stop;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void *writer(void *arg)
{
	pin((int)(intptr_t)arg);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		__atomic_fetch_add(&line[0], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void *reader(void *arg)
{
	uint64_t sum = 0;

	pin((int)(intptr_t)arg);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		sum += line[1] + line[0];
	return (void *)(uintptr_t)sum;
}

/* Bounces the line for secs seconds between CPUs a and b. */
static void bounce(double secs, int a, int b)
{
	pthread_t t1, t2;
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	atomic_store(&stop, 0);
	pthread_create(&t1, NULL, writer, (void *)(intptr_t)a);
	pthread_create(&t2, NULL, reader, (void *)(intptr_t)b);
	nanosleep(&ts, NULL);
	atomic_store(&stop, 1);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
}

static int64_t q(sqlite3 *db, const char *sql)
{
	int64_t v = -1;

	db_query_int(db, &v, sql);
	return v;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t addr = (uintptr_t)&line[0];
	struct mem_agg_config acfg = { .keep_user = true, .max_stack = 8 };
	struct sampler_config cfg;
	struct sampling_stats st;
	struct mem_stats tot = { 0 };
	struct pmu_info pmu;
	struct mem_agg *agg;
	struct sampler *s;
	int64_t t0;

	if (argc > 1 && strcmp(argv[1], "--bounce") == 0) {
		/* the workload for perf c2c record */
		printf("line %#" PRIx64 "\n", addr);
		fflush(stdout);
		bounce(2, 0, 1);
		return 0;
	}
	pmu_detect(&pmu);
	printf("PMU: %s: %s\n", pmu.kind, pmu.detail);
	if (!strcmp(pmu.kind, "none"))
		SKIP("no memory-sampling PMU here (%s)", pmu.detail);
	if (!strcmp(pmu.kind, "arm-spe"))
		SKIP("Arm SPE: mmhitmd does not sample it live (AUX decoding); use perf c2c record + mmhitm import");
	if (ncpu < 2)
		SKIP("needs two CPUs to bounce a line");

	log_set_max_level(LOG_INFO);
	CHECK_INT(mem_host_line_size(NULL, &acfg.line_size), ==, 0);
	agg = mem_agg_new(&acfg);
	sampler_config_defaults(&cfg);
	cfg.active_ns = 30 * NSEC_PER_SEC;
	cfg.period_ns = 60 * NSEC_PER_SEC;
	cfg.budget_ppm = 1000000;
	cfg.sample_freq = 4000;
	s = sampler_new(&cfg, &pmu);
	CHECK(s != NULL);
	if (!s)
		return test_exit();
	printf("sampler: %s\n", sampler_describe(s));
	t0 = now_ns(CLOCK_MONOTONIC);
	sampler_tick(s, t0);
	for (int i = 0; i < 20; i++) {
		bounce(0.1, 0, 1);
		CHECK(sampler_drain(s, agg) >= 0);
	}
	sampler_take_stats(s, &st);
	mem_agg_totals(agg, &tot);
	printf("live: %llu samples, %llu lost; all lines: loads %llu, stores %llu, lcl_hitm %llu, "
	       "rmt_hitm %llu, peer %llu\n", (unsigned long long)st.samples,
	       (unsigned long long)st.lost, (unsigned long long)tot.c[MEM_CLASS_loads],
	       (unsigned long long)tot.c[MEM_CLASS_stores],
	       (unsigned long long)tot.c[MEM_CLASS_lcl_hitm],
	       (unsigned long long)tot.c[MEM_CLASS_rmt_hitm],
	       (unsigned long long)mem_stats_peer(&tot));
	CHECK(st.samples > 0);
	CHECK(tot.c[MEM_CLASS_loads] > 0);
	/* the bounced line is the HITM one */
	CHECK(mem_stats_hitm(&tot) + mem_stats_peer(&tot) > 0);
	sampler_free(s);

	{
		char dir[] = "/tmp/mmhitm-test-pmu-XXXXXX", cmd[1024], db_path[600], data[600];
		char *imp[] = { "import", data, "--db", db_path, "--user", NULL };
		sqlite3 *db = NULL;

		if (system("perf version >/dev/null 2>&1") != 0 || !mkdtemp(dir)) {
			printf("perf is not installed: the perf c2c comparison is skipped\n");
			goto out;
		}
		snprintf(data, sizeof(data), "%s/c2c.data", dir);
		snprintf(db_path, sizeof(db_path), "%s/c2c.db", dir);
		snprintf(cmd, sizeof(cmd), "perf c2c record -o %s -- /proc/%d/exe --bounce", data, getpid());
		CHECK_INT(system(cmd), ==, 0);
		optind = 1;
		CHECK_INT(cmd_import(5, imp), ==, 0);
		if (db_open(db_path, DB_NO_CREATE, &db) == 0) {
			int64_t hitm = q(db, "SELECT coalesce(sum(lcl_hitm + rmt_hitm + lcl_peer + rmt_peer), 0)"
					 " FROM mem_lines");

			printf("perf c2c record, imported: %" PRId64 " HITM/peer loads in %" PRId64 " lines\n",
			       hitm, q(db, "SELECT count(*) FROM mem_lines"));
			CHECK(hitm > 0);
			db_close(db);
		}
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK_INT(system(cmd), ==, 0);
	}
out:
	mem_agg_free(agg);
	return test_exit();
}
