// SPDX-License-Identifier: GPL-2.0
/*
 * pwrite (P3) for real: N loops per thread are exactly N writes each, the
 * file is one write long before, during and after the run, no name is left
 * in the directory at any point, and Ctrl-C gives a partial result.
 */
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>

#include "../../load/workloads.h"
#include "test.h"
#include "util.h"

static char dir[64];

static int dir_entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void while_running(struct load_job *job)
{
	uint64_t size = 0;

	CHECK_INT(pwrite_file_size(job, &size), ==, 0);
	CHECK_INT(size, ==, 1024);
	CHECK_INT(dir_entries(), ==, 0);
}

static void while_running_then_interrupt(struct load_job *job)
{
	while_running(job);
	kill(getpid(), SIGINT);
}

static void test_counts_and_size(void)
{
	struct load_opts opts = { .loops = 5000, .workers = 3 };
	struct load_job *job;
	struct load_report *rep = load_report_new();
	uint64_t size = 0;

	CHECK_INT(load_affinity_cpus(&opts.cpus, &opts.nr_cpus), ==, 0);
	job = pwrite_job_new(&opts, dir, 1024);
	CHECK(job && rep);
	if (job && rep) {
		CHECK_INT(dir_entries(), ==, 0);	/* unlinked before the run */
		job->started = while_running;
		CHECK_INT(load_job_run(job), ==, 0);
		CHECK(!job->interrupted);
		CHECK_INT(load_job_sum_ops(job), ==, 3 * 5000);
		for (unsigned int i = 0; i < job->nr_workers; i++)
			CHECK_INT(job->workers[i].ops, ==, 5000);
		CHECK_INT(pwrite_file_size(job, &size), ==, 0);
		CHECK_INT(size, ==, 1024);
		CHECK_INT(pwrite_report(rep, job), ==, 0);
	}
	load_report_free(rep);
	pwrite_job_free(job);
	load_opts_done(&opts);
	CHECK_INT(dir_entries(), ==, 0);
}

static void test_other_size(void)
{
	struct load_opts opts = { .loops = 100, .workers = 1 };
	struct load_job *job;
	uint64_t size = 0;

	CHECK_INT(load_affinity_cpus(&opts.cpus, &opts.nr_cpus), ==, 0);
	job = pwrite_job_new(&opts, dir, 4096);
	CHECK(job != NULL);
	if (job) {
		CHECK_INT(load_job_run(job), ==, 0);
		CHECK_INT(pwrite_file_size(job, &size), ==, 0);
		CHECK_INT(size, ==, 4096);
	}
	pwrite_job_free(job);
	load_opts_done(&opts);
}

static void test_interrupted(void)
{
	struct load_opts opts = { .workers = 2 };	/* until Ctrl-C */
	struct load_job *job;
	struct load_report *rep = load_report_new();

	CHECK_INT(load_affinity_cpus(&opts.cpus, &opts.nr_cpus), ==, 0);
	job = pwrite_job_new(&opts, dir, 1024);
	CHECK(job && rep);
	if (job && rep) {
		job->started = while_running_then_interrupt;
		CHECK_INT(load_job_run(job), ==, 0);
		CHECK(job->interrupted);
		CHECK_INT(pwrite_report(rep, job), ==, 0);
	}
	load_report_free(rep);
	pwrite_job_free(job);
	load_opts_done(&opts);
	CHECK_INT(dir_entries(), ==, 0);
}

static void test_missing_dir(void)
{
	struct load_opts opts = { .loops = 1, .workers = 1 };

	CHECK_INT(load_affinity_cpus(&opts.cpus, &opts.nr_cpus), ==, 0);
	CHECK(pwrite_job_new(&opts, "/nonexistent/mmhitm-test", 1024) == NULL);
	load_opts_done(&opts);
}

static void test_nothing_left(void)
{
	CHECK_INT(rmdir(dir), ==, 0);	/* fails unless empty */
}

int main(void)
{
	/* tmpfs if there is one, as the workload wants; any directory works. */
	snprintf(dir, sizeof(dir), "%s/mmhitm-test-pwrite.XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir))
		SKIP("cannot create a directory under %s", dir);
	RUN(test_counts_and_size);
	RUN(test_other_size);
	RUN(test_interrupted);
	RUN(test_missing_dir);
	RUN(test_nothing_left);
	return test_exit();
}
