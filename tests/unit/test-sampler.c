// SPDX-License-Identifier: GPL-2.0
/*
 * The live sampler end to end on the real kernel. This VM has no memory
 * PMU, so the event is the software page-faults event, which has data
 * addresses too (PERF_SAMPLE_ADDR is the faulting address): the test
 * faults N pages of its own from user space and M more from inside the
 * kernel (read() from /dev/zero into untouched pages), and asserts that
 * exactly those pages come back as cache lines of the aggregate, written
 * to a real database: user ones only when keep_user, kernel ones with a
 * kernel callchain, none while the duty cycle has sampling off. Then the
 * budget shrinks the window, and a changed online-CPU list reopens the
 * events (CPU hotplug).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "mem-agg.h"
#include "sampler.h"
#include "test.h"
#include "util.h"

#define PAGE 4096

static unsigned int line_size;
static char dbpath[64];

static sqlite3 *fresh_db(void)
{
	sqlite3 *db = NULL;

	snprintf(dbpath, sizeof(dbpath), "/tmp/mmhitm-test-sampler-%d.db", getpid());
	unlink(dbpath);
	if (db_open(dbpath, 0, &db) < 0)
		return NULL;
	db_exec(db, "INSERT INTO hosts (host_id, machine_id, hostname) VALUES (1, 'm', 'h');"
		"INSERT INTO boots (boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
		" kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size, page_size,"
		" pmu_kind, lru_gen) VALUES (1, 1, 'b', 0, 0, 'r', 'v', 'x86_64', 2, 64, 4096,"
		" 'none', 'absent');");
	return db;
}

static int64_t q(sqlite3 *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int64_t q(sqlite3 *db, const char *fmt, ...)
{
	char sql[512];
	int64_t v = -1;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	CHECK_INT(db_query_int(db, &v, sql), ==, 0);
	return v;
}

static struct mem_agg *new_agg(bool keep_user)
{
	struct mem_agg_config c = { .line_size = line_size, .keep_user = keep_user, .max_stack = 8 };

	return mem_agg_new(&c);
}

/* Faults n pages at offset off from user space, draining as it goes. */
static char *user_faults(struct sampler *s, struct mem_agg *agg, size_t n, size_t off)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	for (size_t i = 0; i < n; i++) {
		p[i * PAGE + off] = 1;
		if (i % 256 == 255)
			sampler_drain(s, agg);
	}
	sampler_drain(s, agg);
	return p;
}

/* Faults n pages from inside the kernel: read() fills untouched pages. */
static char *kernel_faults(struct sampler *s, struct mem_agg *agg, size_t n)
{
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	CHECK(p != MAP_FAILED && fd >= 0);
	for (size_t i = 0; i < n; i += 64) {
		CHECK_INT(read(fd, p + i * PAGE, 64 * PAGE), ==, 64 * PAGE);
		sampler_drain(s, agg);
	}
	close(fd);
	return p;
}

/* Lines of the aggregate (written as interval iv) inside [p, p + len). */
static int64_t lines_in(sqlite3 *db, int64_t iv, const char *p, size_t len, const char *extra)
{
	return q(db, "SELECT count(*) FROM mem_lines WHERE interval_id = %lld AND"
		 " line_addr >= %lld AND line_addr < %lld %s", (long long)iv, (long long)(uintptr_t)p,
		 (long long)((uintptr_t)p + len), extra);
}

static void test_end_to_end(void)
{
	enum { N = 1000, M = 256, K = 100 };
	struct sampler_config cfg;
	struct sampling_stats st;
	struct mem_agg *agg_user = new_agg(true), *agg_kern = new_agg(false), *agg_off = new_agg(true);
	struct sampler *s;
	sqlite3 *db = fresh_db();
	char *u, *k, *off, *again;
	int64_t t0 = now_ns(CLOCK_MONOTONIC);

	sampler_config_defaults(&cfg);
	cfg.events = "page-faults";
	cfg.sample_period = 1;		/* every fault */
	cfg.active_ns = 30 * NSEC_PER_SEC;
	cfg.period_ns = 60 * NSEC_PER_SEC;
	cfg.budget_ppm = 1000000;	/* the budget is tested below */
	cfg.mmap_pages = 512;
	s = sampler_new(&cfg, NULL);
	if (!s)
		SKIP("cannot open page-faults system-wide here (needs root or perf_event_paranoid <= 0)");
	printf("sampler: %s\n", sampler_describe(s));
	CHECK(!sampler_active(s));

	/* off: nothing is sampled */
	off = user_faults(s, agg_off, K, 24);
	CHECK_INT(mem_agg_stored(agg_off), ==, 0);

	sampler_tick(s, t0);
	CHECK(sampler_active(s));
	u = user_faults(s, agg_user, N, 24);
	k = kernel_faults(s, agg_kern, M);
	/* the user-IP faults are counted, not stored, without keep_user */
	sampler_take_stats(s, &st);
	printf("window: %llu samples (%llu kernel, %llu user), %llu lost, %llu throttled, %.3f s active\n",
	       (unsigned long long)st.samples, (unsigned long long)st.samples_kernel,
	       (unsigned long long)st.samples_user, (unsigned long long)st.lost,
	       (unsigned long long)st.throttled, st.active_ns / 1e9);
	CHECK(st.samples >= N + M);
	CHECK(st.samples_kernel >= M);
	CHECK(st.samples_user >= N);
	CHECK_INT(st.lost, ==, 0);
	CHECK(st.active_ns > 0);

	CHECK(db != NULL);
	if (db) {
		db_exec(db, "INSERT INTO intervals (interval_id, boot_id, start_ns, end_ns) VALUES"
			" (1, 1, 0, 60e9), (2, 1, 60e9, 120e9), (3, 1, 120e9, 180e9)");
		CHECK_INT(db_begin(db), ==, 0);
		CHECK_INT(mem_agg_write(agg_user, db, 1, 1, sampler_describe(s), &st), ==, 0);
		CHECK_INT(mem_agg_write(agg_kern, db, 1, 2, sampler_describe(s), NULL), ==, 0);
		CHECK_INT(db_commit(db), ==, 0);
		/* every page faulted from user space: one line, at offset 24 */
		CHECK_INT(lines_in(db, 1, u, N * PAGE, "AND kernel = 0 AND offset = 24"), ==, N);
		CHECK_INT(q(db, "SELECT sum(noparse) FROM mem_lines WHERE interval_id = 1 AND line_addr"
			    " >= %lld AND line_addr < %lld", (long long)(uintptr_t)u,
			    (long long)((uintptr_t)u + N * PAGE)), ==, N);
		/* every page the kernel faulted, with its kernel callchain */
		CHECK_INT(lines_in(db, 2, k, M * PAGE, "AND kernel = 1"), ==, M);
		CHECK_INT(lines_in(db, 2, k, M * PAGE, "AND kernel = 1 AND callchain_id <> 0"), ==, M);
		/* no user-IP line without keep_user */
		CHECK_INT(q(db, "SELECT count(*) FROM mem_lines WHERE interval_id = 2 AND kernel = 0"), ==, 0);
		CHECK_INT(q(db, "SELECT count(*) FROM callchains WHERE ips NOT LIKE '0xffff%%'"), ==, 0);
		CHECK_INT(q(db, "SELECT samples FROM sampling WHERE interval_id = 1"), ==, (int64_t)st.samples);
		printf("%d user pages and %d kernel-faulted pages sampled and stored as lines\n", N, M);
	}

	/* the window closes: sampling off, faults not sampled */
	sampler_tick(s, t0 + cfg.active_ns + 1);
	CHECK(!sampler_active(s));
	/* what the ring buffers still hold was sampled while on */
	CHECK(sampler_drain(s, NULL) >= 0);
	mem_agg_reset(agg_off);
	munmap(off, K * PAGE);
	off = user_faults(s, agg_off, K, 8);
	CHECK_INT(mem_agg_stored(agg_off), ==, 0);
	/* and opens again a period after it opened */
	sampler_tick(s, t0 + cfg.period_ns);
	CHECK(sampler_active(s));
	again = user_faults(s, agg_off, K, 8);
	CHECK(mem_agg_stored(agg_off) >= K);
	if (db) {
		CHECK_INT(mem_agg_write(agg_off, db, 1, 3, NULL, NULL), ==, 0);
		CHECK_INT(lines_in(db, 3, again, K * PAGE, "AND offset = 8"), ==, K);
		CHECK_INT(lines_in(db, 3, off, K * PAGE, ""), ==, 0);
	}
	munmap(u, N * PAGE);
	munmap(k, M * PAGE);
	munmap(off, K * PAGE);
	munmap(again, K * PAGE);
	sampler_free(s);
	mem_agg_free(agg_user);
	mem_agg_free(agg_kern);
	mem_agg_free(agg_off);
	db_close(db);
	unlink(dbpath);
}

/* The measured rate over a window shrinks the next window to the budget. */
static void test_budget(void)
{
	struct sampler_config cfg;
	struct mem_agg *agg = new_agg(false);
	struct sampler *s;
	double before = 0, after = 0;
	char *p;

	sampler_config_defaults(&cfg);
	cfg.events = "page-faults";
	cfg.sample_period = 1;
	cfg.active_ns = 10 * NSEC_PER_SEC;
	cfg.period_ns = 60 * NSEC_PER_SEC;
	cfg.budget_ppm = 10;		/* 0.001% */
	cfg.cost_ns = 5000;
	s = sampler_new(&cfg, NULL);
	CHECK(s != NULL);
	if (!s)
		return;
	sscanf(sampler_describe(s), "%*[^;]; %*[^;]; %lf s every", &before);
	sampler_tick(s, 0);
	p = user_faults(s, agg, 2000, 0);
	/* 2000+ samples in a 10 s window at 5 us each: 0.05% while on, over
	 * the 0.001% budget even at a 1/6 duty cycle */
	sampler_tick(s, cfg.active_ns + 1);
	CHECK(!sampler_active(s));
	sscanf(sampler_describe(s), "%*[^;]; %*[^;]; %lf s every", &after);
	printf("budget: window %.2f s -> %.2f s (%s)\n", before, after, sampler_describe(s));
	CHECK(before == 10.0);
	CHECK(after < before);
	CHECK(after >= 0.1);
	munmap(p, 2000 * PAGE);
	sampler_free(s);
	mem_agg_free(agg);
}

/* A changed online-CPU list reopens the events on the new set. */
static void test_hotplug(void)
{
	char path[] = "/tmp/mmhitm-test-online-XXXXXX";
	struct sampler_config cfg;
	struct mem_agg *agg = new_agg(true);
	struct sampler *s;
	int fd = mkstemp(path);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *p;

	CHECK(fd >= 0);
	CHECK_INT(write(fd, "0\n", 2), ==, 2);
	close(fd);
	sampler_config_defaults(&cfg);
	cfg.events = "page-faults";
	cfg.sample_period = 1;
	cfg.online_path = path;
	s = sampler_new(&cfg, NULL);
	CHECK(s != NULL);
	if (!s)
		return;
	CHECK_INT(sampler_nr_cpus(s), ==, 1);
	if (ncpu >= 2) {
		/* CPU 1 came online */
		FILE *f = fopen(path, "w");

		fprintf(f, "0-%ld\n", ncpu - 1);
		fclose(f);
	}
	sampler_tick(s, 0);
	CHECK(sampler_active(s));
	CHECK_INT(sampler_nr_cpus(s), ==, ncpu >= 2 ? ncpu : 1);
	p = user_faults(s, agg, 100, 0);
	CHECK(mem_agg_stored(agg) >= 100);
	munmap(p, 100 * PAGE);
	sampler_free(s);
	mem_agg_free(agg);
	unlink(path);
}

static void test_refusals(void)
{
	struct sampler_config cfg;
	struct pmu_info none = { "none", "no PMU: the hypervisor exposes none" };
	struct pmu_info spe = { "arm-spe", "arm_spe_0/ts_enable=1/" };

	sampler_config_defaults(&cfg);
	CHECK(sampler_new(&cfg, NULL) == NULL);
	CHECK(sampler_new(&cfg, &none) == NULL);
	CHECK(sampler_new(&cfg, &spe) == NULL);
	cfg.events = "no-such-event";
	CHECK(sampler_new(&cfg, NULL) == NULL);
	cfg.events = "page-faults";
	cfg.active_ns = cfg.period_ns + 1;
	CHECK(sampler_new(&cfg, NULL) == NULL);
	sampler_free(NULL);
	sampler_tick(NULL, 0);
	CHECK_INT(sampler_drain(NULL, NULL), ==, 0);
}

int main(void)
{
	log_set_max_level(LOG_WARNING);
	CHECK_INT(mem_host_line_size(NULL, &line_size), ==, 0);
	RUN(test_refusals);
	RUN(test_end_to_end);
	RUN(test_budget);
	RUN(test_hotplug);
	return test_exit();
}
