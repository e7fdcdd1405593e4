/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_LOAD_H
#define MMHITM_LOAD_H

/*
 * mmhitm-load: reproducers of the four hot paths (P1..P4), one file per
 * workload. This header is the runner they share: a job is a set of
 * workers (threads, optionally grouped into forked processes), released
 * together through a gate and stopped by --duration, --loops, SIGINT or
 * SIGTERM; their counters live in one shared mapping so that a partial
 * result can always be printed.
 */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes of mmhitm-load (documented in --help and README). */
enum {
	LOAD_EXIT_OK		= 0,
	LOAD_EXIT_FAILURE	= 1,
	LOAD_EXIT_USAGE		= 2,
	LOAD_EXIT_UNSUPPORTED	= 3,	/* the kernel lacks it: aging without CONFIG_LRU_GEN */
	LOAD_EXIT_DISABLED	= 4,	/* built in but off: MGLRU disabled, no --enable-lru-gen */
};

#define LOAD_DEFAULT_DURATION_NS (10 * NSEC_PER_SEC)

/* Options every subcommand takes. */
struct load_opts {
	int64_t duration_ns;	/* 0: until --loops are done or a signal */
	uint64_t loops;		/* per worker (aging: passes); 0: no limit */
	unsigned int workers;	/* --threads/--procs; 0: the workload's default */
	int *cpus;		/* --cpus, else every CPU in our affinity mask */
	size_t nr_cpus;
	bool json;
	int64_t progress_ns;	/* --progress: print the ops so far this often; 0: never */
};

/*
 * One worker's counters, written by the worker only, on cache lines of its
 * own: the load must not add contention of its own. ops is kept current
 * (load_worker_count()) so that --progress can read it while the job runs;
 * the rest is written at the worker's end.
 */
struct load_worker {
	unsigned int index;
	int cpu;		/* pinned to it, or -1 */
	pid_t tid;
	int error;		/* 0 or -errno */
	uint64_t ops;		/* the workload's unit of work */
	uint64_t aux[4];	/* workload-specific counters */
	int64_t start_ns;	/* CLOCK_MONOTONIC; 0: never released */
	int64_t end_ns;
	uint64_t nvcsw;		/* context switches inside [start, end] */
	uint64_t nivcsw;
} __attribute__((aligned(64)));

struct load_shared;
struct load_job;

struct load_job {
	/* Filled in by the workload before load_job_run(). */
	const char *name;
	const struct load_opts *opts;
	unsigned int nr_groups;		/* processes when fork_groups, else 1 */
	unsigned int per_group;		/* workers in each group */
	bool fork_groups;		/* each group its own process, own mm */
	/* The worker body; returns 0 or -errno. Checks load_worker_should_stop(). */
	int (*work)(struct load_job *job, struct load_worker *w);
	/* The main side once workers are released; NULL waits for the end. */
	int (*drive)(struct load_job *job);
	void *data;			/* the workload's state, inherited by forks */
	/* Called on the main thread right after the gate opens (tests use it). */
	void (*started)(struct load_job *job);

	/* Set up by load_job_new(), results after load_job_run(). */
	struct load_shared *shared;
	struct load_worker *workers;	/* nr_groups * per_group of them */
	unsigned int nr_workers;
	bool interrupted;		/* SIGINT or SIGTERM ended it */
	int64_t start_ns, end_ns;	/* gate opened, all workers gone */

	/* private */
	const uint32_t *stop;		/* in the shared mapping */
	int64_t next_progress_ns;	/* --progress: CLOCK_MONOTONIC of the next line */
	sigset_t saved_mask;
	pid_t *pids;			/* fork_groups: one per group, 0 once reaped */
	void *threads;			/* threads run by this process */
};

/*
 * Allocates the shared state for nr_groups * per_group workers, each pinned
 * round-robin to opts->cpus (set workers[i].cpu to change that). Returns
 * NULL on failure (logged). Caller frees with load_job_free().
 */
struct load_job *load_job_new(const char *name, const struct load_opts *opts,
			      unsigned int nr_groups, unsigned int per_group, bool fork_groups);
void load_job_free(struct load_job *job);

/*
 * Spawns the workers, opens the gate, runs drive() (or waits for
 * --duration, --loops or a signal), stops and reaps every worker. An
 * interruption is not an error: job->interrupted says it happened. Returns
 * 0, or the first worker's error, or -errno of the runner itself.
 */
int load_job_run(struct load_job *job);

/* Workers: true once the job is stopping or loops are done. */
static inline bool load_job_stopping(const struct load_job *job)
{
	return __atomic_load_n(job->stop, __ATOMIC_RELAXED);
}

static inline bool load_worker_should_stop(const struct load_job *job, uint64_t loops_done)
{
	return (job->opts->loops && loops_done >= job->opts->loops) || load_job_stopping(job);
}

/*
 * Workers: publish the ops done so far. A relaxed store to the worker's own
 * line; the main thread reads it a few times a second at most.
 */
static inline void load_worker_count(struct load_worker *w, uint64_t ops)
{
	__atomic_store_n(&w->ops, ops, __ATOMIC_RELAXED);
}

/* drive() side: asks workers to stop (idempotent). */
void load_job_stop(struct load_job *job);

/*
 * Phases let drive() run the workers in lock-step (aging: everybody reads,
 * then one aging pass). load_job_phase_begin() starts phase n (n > 0) and
 * wakes the workers; load_worker_phase_wait() returns the next phase after
 * seen, or 0 when stopping; load_worker_phase_done() reports the worker's
 * part finished and load_job_phase_wait() waits until every worker did (or
 * a signal, an error or the deadline, 0 meaning none: -EINTR, -ECANCELED,
 * -ETIMEDOUT).
 */
void load_job_phase_begin(struct load_job *job, uint32_t phase);
int load_job_phase_wait(struct load_job *job, uint32_t phase, int64_t deadline_ns);
uint32_t load_worker_phase_wait(struct load_job *job, uint32_t seen);
void load_worker_phase_done(struct load_job *job);

/* Summaries over all workers (rates use the union of their windows). */
uint64_t load_job_sum_ops(const struct load_job *job);
uint64_t load_job_sum_aux(const struct load_job *job, unsigned int i);
uint64_t load_job_sum_ctxsw(const struct load_job *job);
double load_job_seconds(const struct load_job *job);

/* "0-3,6" into a sorted list of CPUs; each must be in our affinity mask. */
int load_parse_cpus(const char *s, int **ret_cpus, size_t *ret_n);
/* Every CPU in our affinity mask. */
int load_affinity_cpus(int **ret_cpus, size_t *ret_n);

/*
 * Output: one report per run, printed as "label  value unit" lines or as
 * one JSON object. Adding never fails; an allocation failure is remembered
 * and load_report_print() returns -ENOMEM. A NULL label is JSON-only.
 */
struct load_report;
struct load_report *load_report_new(void);
void load_report_free(struct load_report *r);
void load_report_add_str(struct load_report *r, const char *key, const char *label,
			 const char *v);
void load_report_add_u64(struct load_report *r, const char *key, const char *label,
			 uint64_t v, const char *unit);
void load_report_add_double(struct load_report *r, const char *key, const char *label,
			    double v, const char *unit);
void load_report_add_bool(struct load_report *r, const char *key, const char *label, bool v);
void load_report_add_ints(struct load_report *r, const char *key, const char *label,
			  const int *v, size_t n);
int load_report_print(const struct load_report *r, FILE *f, bool json);

/*
 * What every subcommand does once its job is set up: run it, fill a report
 * with fill() and print it to stdout, as text or JSON. Returns 0 or a
 * negative errno (logged, but for the job's own failures, which it logs).
 */
typedef int (*load_report_fill_t)(struct load_report *rep, const struct load_job *job);
int load_job_run_report(struct load_job *job, bool json, load_report_fill_t fill);

/* The fields every workload reports first: workload, hot path, workers, time. */
void load_report_add_job(struct load_report *r, const struct load_job *job);
/* The path whose reproducer the workload is (the path table), or "none". */
const char *load_hot_path(const char *workload);
/* The headline every workload ends with; bench/ reads these keys. */
void load_report_add_metric(struct load_report *r, const char *metric, const char *label,
			    double value, const char *unit, bool higher_is_better);

/* Subcommands: argv[0] is the subcommand; return LOAD_EXIT_* or -errno. */
int cmd_ctxswitch(int argc, char **argv);
int cmd_aging(int argc, char **argv);
int cmd_pwrite(int argc, char **argv);
int cmd_tlbflush(int argc, char **argv);
void cmd_ctxswitch_help(void);
void cmd_aging_help(void);
void cmd_pwrite_help(void);
void cmd_tlbflush_help(void);

/*
 * Shared option parsing: the common options plus a subcommand's own
 * (extra, terminated by a zeroed entry); parse_extra() gets the option's
 * val for those. Returns 0, LOAD_EXIT_USAGE (message printed), or 1 for
 * --help (help printed). Caller frees opts->cpus with load_opts_done().
 */
struct option;
int load_opts_parse(int argc, char **argv, struct load_opts *opts, const char *workers_name,
		    const struct option *extra,
		    int (*parse_extra)(int opt, const char *arg, void *userdata),
		    void *userdata, void (*help)(void));
void load_opts_done(struct load_opts *opts);
/* The help text of the common options, for the subcommands' --help. */
void load_opts_help(const char *workers_name, const char *workers_help);

#endif
