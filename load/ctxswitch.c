// SPDX-License-Identifier: GPL-2.0
/*
 * ctxswitch (P1): on every CPU, threads pinned to it sched_yield() to each
 * other, so every switch is to a user task and context_switch() calls
 * lru_gen_use_mm() on next->mm. In the default layout all threads are one
 * process: one mm_struct whose lru_gen.bitmap line every CPU stores to. With
 * --private-mm each CPU gets its own process (the same threads, the same
 * same-mm switches), so the line stays in one CPU's cache: the control.
 *
 * The count is of real context switches: each worker's nvcsw + nivcsw
 * (getrusage(RUSAGE_THREAD)) over its measured window; a yield that finds
 * nothing else runnable switches nothing and is not counted as one.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>

#include "load.h"
#include "workloads.h"
#include "log.h"
#include "util.h"

#define CTXSWITCH_DEFAULT_THREADS_PER_CPU 2

enum { OPT_PRIVATE_MM = 256 };

static int ctxswitch_work(struct load_job *job, struct load_worker *w)
{
	uint64_t n = 0;

	while (!load_worker_should_stop(job, n)) {
		sched_yield();
		load_worker_count(w, ++n);
	}
	return 0;
}

struct load_job *ctxswitch_job_new(const struct load_opts *opts, bool private_mm)
{
	unsigned int per_cpu = opts->workers ? opts->workers : CTXSWITCH_DEFAULT_THREADS_PER_CPU;
	unsigned int ncpus = opts->nr_cpus;
	struct load_job *job;

	job = load_job_new("ctxswitch", opts, private_mm ? ncpus : 1,
			   private_mm ? per_cpu : ncpus * per_cpu, private_mm);
	if (!job)
		return NULL;
	/* Threads [k * per_cpu, (k + 1) * per_cpu) share CPU k, in both layouts. */
	for (unsigned int i = 0; i < job->nr_workers; i++)
		job->workers[i].cpu = opts->cpus[i / per_cpu];
	job->work = ctxswitch_work;
	return job;
}

int ctxswitch_report(struct load_report *rep, const struct load_job *job)
{
	double secs = load_job_seconds(job);
	uint64_t switches = load_job_sum_ctxsw(job), yields = load_job_sum_ops(job);
	uint64_t vol = 0;

	for (unsigned int i = 0; i < job->nr_workers; i++)
		vol += job->workers[i].nvcsw;

	load_report_add_job(rep, job);
	load_report_add_str(rep, "mm", "mm_struct",
			    job->fork_groups ? "private (one per CPU)" : "shared");
	load_report_add_u64(rep, "threads_per_cpu", "threads per CPU",
			    job->nr_workers / job->opts->nr_cpus, NULL);
	load_report_add_u64(rep, "yields", "sched_yield() calls", yields, NULL);
	load_report_add_u64(rep, "context_switches", "context switches", switches, NULL);
	load_report_add_u64(rep, "voluntary_switches", NULL, vol, NULL);
	load_report_add_u64(rep, "involuntary_switches", NULL, switches - vol, NULL);
	load_report_add_metric(rep, "context_switches_per_s_per_cpu", "context switches per CPU",
			       secs > 0 ? switches / secs / job->opts->nr_cpus : 0, "/s/CPU", true);
	return 0;
}

void cmd_ctxswitch_help(void)
{
	printf("Usage: mmhitm-load ctxswitch [OPTIONS]\n\n"
	       "P1 (mm->lru_gen.bitmap store in lru_gen_use_mm() on every switch to a user\n"
	       "task): on every CPU of --cpus, threads pinned to that CPU sched_yield() to\n"
	       "each other. By default all threads belong to one process, so one mm_struct\n"
	       "is switched to on every CPU; --private-mm runs one process per CPU instead\n"
	       "(the control: same switches, no mm shared across CPUs).\n"
	       "Reports context switches/s/CPU, counted from the threads' own\n"
	       "voluntary + involuntary context switch counters.\n\n"
	       "Options:\n"
	       "      --private-mm      one process (mm) per CPU instead of one for all\n\n");
	load_opts_help("threads", "threads per CPU, at least 2 (default: 2)");
	printf("\n--loops counts each thread's sched_yield() calls.\n");
}

static int parse_extra(int opt, const char *arg, void *userdata)
{
	bool *private_mm = userdata;

	if (opt != OPT_PRIVATE_MM)
		return -EINVAL;
	*private_mm = true;
	return 0;
}

int cmd_ctxswitch(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "private-mm", no_argument, NULL, OPT_PRIVATE_MM },
		{}
	};
	struct load_opts opts;
	struct load_job *job = NULL;
	bool private_mm = false;
	int r;

	r = load_opts_parse(argc, argv, &opts, "threads", extra, parse_extra, &private_mm,
			    cmd_ctxswitch_help);
	if (r)
		return r == 1 ? LOAD_EXIT_OK : r;
	if (opts.workers == 1) {
		log_error("ctxswitch: --threads is per CPU and needs 2 or more to yield to each other");
		r = LOAD_EXIT_USAGE;
		goto out;
	}

	job = ctxswitch_job_new(&opts, private_mm);
	r = job ? load_job_run_report(job, opts.json, ctxswitch_report) : -ENOMEM;
out:
	load_job_free(job);
	load_opts_done(&opts);
	return r;
}
