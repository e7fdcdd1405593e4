// SPDX-License-Identifier: GPL-2.0
/*
 * tlbflush (P4) for real: the zero check fails where MADV_DONTNEED cannot
 * zero a page (a shared anonymous page keeps its data), N loops are
 * exactly N * 256 zaps each read back zero, and every 1 MiB mapping is
 * gone afterwards, also after Ctrl-C.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "../../load/workloads.h"
#include "test.h"
#include "util.h"

#define MIB (1UL << 20)

static void test_cycle_private_zeroes(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t zapped = 0, checked = 0, nonzero = 0;
	char *map = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK_INT(tlbflush_cycle(map, MIB, page, &zapped, &checked, &nonzero), ==, 0);
	CHECK_INT(zapped, ==, MIB / page);
	CHECK_INT(checked, ==, MIB / page);
	CHECK_INT(nonzero, ==, 0);
	munmap(map, MIB);
}

/* MADV_DONTNEED on shared anonymous memory drops the PTE, not the data. */
static void test_cycle_detects_nonzero(void)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t zapped = 0, checked = 0, nonzero = 0;
	char *map = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(map != MAP_FAILED);
	if (map == MAP_FAILED)
		return;
	CHECK_INT(tlbflush_cycle(map, MIB, page, &zapped, &checked, &nonzero), ==, -EIO);
	CHECK_INT(nonzero, ==, MIB / page);
	munmap(map, MIB);
}

/* Anonymous read-write mappings of exactly 1 MiB, as the workers make. */
static int count_mib_mappings(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[8], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &a, &b, perms, path) >= 3 &&
		    b - a == MIB && strcmp(perms, "rw-p") == 0 && !path[0])
			n++;
	}
	fclose(f);
	return n;
}

static void test_job_counts(void)
{
	struct load_opts opts = { .loops = 20, .workers = 2 };
	struct load_job *job;
	size_t page = sysconf(_SC_PAGESIZE);
	int maps_before;

	CHECK_INT(load_affinity_cpus(&opts.cpus, &opts.nr_cpus), ==, 0);
	maps_before = count_mib_mappings();
	job = tlbflush_job_new(&opts);
	CHECK(job != NULL);
	if (job) {
		CHECK_INT(load_job_run(job), ==, 0);
		CHECK(!job->interrupted);
		CHECK_INT(load_job_sum_ops(job), ==, 2 * 20);
		CHECK_INT(load_job_sum_aux(job, 0), ==, 2 * 20 * (MIB / page));	/* zaps */
		CHECK_INT(load_job_sum_aux(job, 1), ==, 2 * 20 * (MIB / page));	/* read back */
		CHECK_INT(load_job_sum_aux(job, 2), ==, 0);			/* not zero */
	}
	CHECK_INT(count_mib_mappings(), ==, maps_before);
	load_job_free(job);
	load_opts_done(&opts);
}

static void interrupt(struct load_job *job)
{
	kill(getpid(), SIGINT);
}

static void test_job_interrupted(void)
{
	struct load_opts opts = { .workers = 2 };	/* no duration, no loops: until Ctrl-C */
	struct load_job *job;
	struct load_report *rep;
	int maps_before;

	CHECK_INT(load_affinity_cpus(&opts.cpus, &opts.nr_cpus), ==, 0);
	maps_before = count_mib_mappings();
	job = tlbflush_job_new(&opts);
	rep = load_report_new();
	CHECK(job && rep);
	if (job && rep) {
		FILE *f = fmemopen(NULL, 4096, "w+");
		char out[4096] = "";

		job->started = interrupt;
		CHECK_INT(load_job_run(job), ==, 0);
		CHECK(job->interrupted);
		CHECK_INT(load_job_sum_aux(job, 2), ==, 0);
		/* Whatever was done is printed, marked partial. */
		tlbflush_report(rep, job);
		CHECK_INT(load_report_print(rep, f, true), ==, 0);
		rewind(f);
		CHECK(fgets(out, sizeof(out), f) != NULL);
		CHECK(strstr(out, "\"interrupted\":true") != NULL);
		CHECK(strstr(out, "\"metric\":\"loops_per_s\"") != NULL);
		fclose(f);
	}
	CHECK_INT(count_mib_mappings(), ==, maps_before);
	load_report_free(rep);
	load_job_free(job);
	load_opts_done(&opts);
}

int main(void)
{
	RUN(test_cycle_private_zeroes);
	RUN(test_cycle_detects_nonzero);
	RUN(test_job_counts);
	RUN(test_job_interrupted);
	return test_exit();
}
