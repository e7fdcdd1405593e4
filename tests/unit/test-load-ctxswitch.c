// SPDX-License-Identifier: GPL-2.0
/*
 * ctxswitch (P1) for real: its threads share one mm and --private-mm's
 * processes do not (kcmp(KCMP_VM) asks the kernel), every thread is pinned
 * where it should be, the switches it counts are real ones, and Ctrl-C
 * ends it with a partial result.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "../../load/workloads.h"
#include "test.h"
#include "util.h"

static int kcmp_vm(pid_t a, pid_t b)
{
	return syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0);
}

static bool pinned_to(pid_t tid, int cpu)
{
	cpu_set_t set;

	if (sched_getaffinity(tid, sizeof(set), &set) < 0)
		return false;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
}

/* Runs on the main thread while every worker is alive, then stops the run. */
static void inspect_shared(struct load_job *job)
{
	for (unsigned int i = 0; i < job->nr_workers; i++) {
		const struct load_worker *w = &job->workers[i];

		CHECK(w->tid > 0 && w->tid != getpid());
		CHECK_INT(kcmp_vm(getpid(), w->tid), ==, 0);
		CHECK(pinned_to(w->tid, job->opts->cpus[i / 2]));
	}
	kill(getpid(), SIGINT);
}

static void inspect_private(struct load_job *job)
{
	CHECK_INT(job->nr_groups, ==, job->opts->nr_cpus);
	for (unsigned int g = 0; g < job->nr_groups; g++) {
		pid_t pid = job->pids[g];

		CHECK(pid > 0);
		/* Not ours, and not any other group's. */
		CHECK_INT(kcmp_vm(getpid(), pid), !=, 0);
		for (unsigned int h = g + 1; h < job->nr_groups; h++)
			CHECK_INT(kcmp_vm(pid, job->pids[h]), !=, 0);
		/* Both threads of a group run on its mm, on its CPU. */
		for (unsigned int k = 0; k < job->per_group; k++) {
			const struct load_worker *w = &job->workers[g * job->per_group + k];

			CHECK_INT(kcmp_vm(pid, w->tid), ==, 0);
			CHECK(pinned_to(w->tid, job->opts->cpus[g]));
		}
	}
	kill(getpid(), SIGINT);
}

static void run_layout(struct load_opts *opts, bool private_mm)
{
	struct load_job *job = ctxswitch_job_new(opts, private_mm);

	CHECK(job != NULL);
	if (!job)
		return;
	job->started = private_mm ? inspect_private : inspect_shared;
	CHECK_INT(load_job_run(job), ==, 0);
	CHECK(job->interrupted);
	CHECK_INT(job->nr_workers, ==, 2 * opts->nr_cpus);
	CHECK_INT(job->fork_groups, ==, private_mm);
	load_job_free(job);
}

static void test_layouts(void)
{
	int two[2];
	struct load_opts opts = { .cpus = two, .nr_cpus = 2 };
	int *cpus;
	size_t n;

	CHECK_INT(load_affinity_cpus(&cpus, &n), ==, 0);
	/* Two CPUs if we have them; else the one twice still makes two groups. */
	two[0] = cpus[0];
	two[1] = n > 1 ? cpus[1] : cpus[0];
	free(cpus);

	run_layout(&opts, false);
	run_layout(&opts, true);
}

static uint64_t self_switches(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/*
 * The count is of real switches: the kernel's count for the whole process
 * (live and exited threads) covers it, and exceeds it only by what happens
 * outside the measured windows (start, gate, exit, the main thread).
 */
static void test_switches_are_real(void)
{
	int cpu;
	struct load_opts opts = { .loops = 5000, .cpus = &cpu, .nr_cpus = 1 };
	struct load_job *job;
	uint64_t before, after, reported;
	int *cpus;
	size_t n;

	CHECK_INT(load_affinity_cpus(&cpus, &n), ==, 0);
	cpu = cpus[0];
	free(cpus);

	job = ctxswitch_job_new(&opts, false);
	CHECK(job != NULL);
	if (!job)
		return;
	before = self_switches(RUSAGE_SELF);
	CHECK_INT(load_job_run(job), ==, 0);
	after = self_switches(RUSAGE_SELF);
	reported = load_job_sum_ctxsw(job);

	CHECK(!job->interrupted);
	CHECK_INT(load_job_sum_ops(job), ==, 2 * 5000);	/* yields, exactly --loops each */
	CHECK_INT(reported, >, 0);
	CHECK_INT(reported, <=, after - before);
	CHECK_INT(after - before - reported, <=, 32 * (job->nr_workers + 1));
	load_job_free(job);
}

int main(void)
{
	if (kcmp_vm(getpid(), getpid()) < 0 && errno == ENOSYS)
		SKIP("kcmp(2) is not available (CONFIG_KCMP)");
	RUN(test_layouts);
	RUN(test_switches_are_real);
	return test_exit();
}
