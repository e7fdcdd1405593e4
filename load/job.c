// SPDX-License-Identifier: GPL-2.0
/*
 * The runner every workload shares. Signals are never handled
 * asynchronously: SIGINT, SIGTERM, SIGUSR1 and SIGCHLD are blocked in every
 * task and the main thread takes them with sigtimedwait(). Workers wake the
 * main thread with SIGUSR1 and wait on futexes in one MAP_SHARED mapping,
 * which also holds their counters, so forked groups (own mm) report like
 * threads do.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "load.h"
#include "log.h"
#include "util.h"

struct load_shared {
	/* Read by every worker in its loop, written once: a line of its own. */
	uint32_t stop __attribute__((aligned(64)));
	uint32_t go __attribute__((aligned(64)));
	uint32_t ready;			/* workers at the gate */
	uint32_t done;			/* workers finished */
	uint32_t failed;		/* a worker returned an error */
	pid_t main_pid;
	uint32_t phase __attribute__((aligned(64)));
	uint32_t phase_done;
	struct load_worker workers[];
};

struct threads;
static void threads_free(struct threads *t);

static void futex_wait(uint32_t *addr, uint32_t val)
{
	/* Not FUTEX_PRIVATE: forked groups wait on the same shared page. */
	syscall(SYS_futex, addr, FUTEX_WAIT, val, NULL, NULL, 0);
}

static void futex_wake(uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void notify_main(struct load_shared *s)
{
	kill(s->main_pid, SIGUSR1);
}

static size_t shared_size(unsigned int nr_workers)
{
	return sizeof(struct load_shared) + nr_workers * sizeof(struct load_worker);
}

struct load_job *load_job_new(const char *name, const struct load_opts *opts,
			      unsigned int nr_groups, unsigned int per_group, bool fork_groups)
{
	struct load_job *job;
	struct load_shared *s;
	unsigned int n;

	if (nr_groups == 0 || per_group == 0 || nr_groups > UINT_MAX / per_group) {
		log_error("%s: invalid worker layout %ux%u", name, nr_groups, per_group);
		return NULL;
	}
	n = nr_groups * per_group;

	job = calloc(1, sizeof(*job));
	if (!job) {
		log_oom();
		return NULL;
	}
	s = mmap(NULL, shared_size(n), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) {
		log_error_errno(errno, "%s: failed to map the shared state: %m", name);
		free(job);
		return NULL;
	}
	job->name = name;
	job->opts = opts;
	job->nr_groups = nr_groups;
	job->per_group = per_group;
	job->fork_groups = fork_groups;
	job->shared = s;
	job->workers = s->workers;
	job->nr_workers = n;
	job->stop = &s->stop;
	for (unsigned int i = 0; i < n; i++) {
		job->workers[i].index = i;
		job->workers[i].cpu = opts->nr_cpus ? opts->cpus[i % opts->nr_cpus] : -1;
	}
	return job;
}

void load_job_free(struct load_job *job)
{
	if (!job)
		return;
	munmap(job->shared, shared_size(job->nr_workers));
	free(job->pids);
	threads_free(job->threads);
	free(job);
}

void load_job_stop(struct load_job *job)
{
	struct load_shared *s = job->shared;

	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	/* Bump the words workers sleep on, so no futex_wait() can miss it. */
	__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
	futex_wake(&s->go);
	__atomic_add_fetch(&s->phase, 1, __ATOMIC_ACQ_REL);
	futex_wake(&s->phase);
}

static void worker_fail(struct load_job *job, struct load_worker *w, int r)
{
	w->error = r;
	__atomic_store_n(&job->shared->failed, 1, __ATOMIC_RELEASE);
	load_job_stop(job);
	notify_main(job->shared);
}

/* A worker that never ran (spawn failed) still passes the gate and ends. */
static void worker_never_ran(struct load_job *job, struct load_worker *w, int r)
{
	struct load_shared *s = job->shared;

	worker_fail(job, w, r);
	__atomic_add_fetch(&s->ready, 1, __ATOMIC_ACQ_REL);
	__atomic_add_fetch(&s->done, 1, __ATOMIC_ACQ_REL);
}

static void worker_run(struct load_job *job, struct load_worker *w)
{
	struct load_shared *s = job->shared;
	struct rusage ru0, ru1;
	int r = 0;

	w->tid = gettid();
	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			r = log_error_errno(errno, "%s: failed to pin worker %u to CPU %d: %m",
					    job->name, w->index, w->cpu);
	}

	if (__atomic_add_fetch(&s->ready, 1, __ATOMIC_ACQ_REL) == job->nr_workers)
		notify_main(s);
	while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
		futex_wait(&s->go, 0);

	if (r == 0 && !load_job_stopping(job)) {
		getrusage(RUSAGE_THREAD, &ru0);
		w->start_ns = now_ns(CLOCK_MONOTONIC);
		r = job->work(job, w);
		w->end_ns = now_ns(CLOCK_MONOTONIC);
		getrusage(RUSAGE_THREAD, &ru1);
		w->nvcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
		w->nivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	}
	if (r < 0)
		worker_fail(job, w, r);
	if (__atomic_add_fetch(&s->done, 1, __ATOMIC_ACQ_REL) == job->nr_workers)
		notify_main(s);
}

struct thread_arg {
	struct load_job *job;
	struct load_worker *w;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	worker_run(a->job, a->w);
	return NULL;
}

/* Threads running workers [first, first + n) of this process. */
struct threads {
	unsigned int n;
	pthread_t *ids;
	struct thread_arg *args;
	bool *created;
};

static void threads_free(struct threads *t)
{
	if (!t)
		return;
	free(t->ids);
	free(t->args);
	free(t->created);
	free(t);
}

/*
 * Starts workers [first, first + n), all but the first one when skip_first
 * (the caller runs it). Returns NULL when out of memory (those workers are
 * marked failed). Caller joins with threads_join().
 */
static struct threads *threads_start(struct load_job *job, unsigned int first, unsigned int n,
				     bool skip_first)
{
	struct threads *t = calloc(1, sizeof(*t));

	if (t) {
		t->n = n;
		t->ids = calloc(n, sizeof(*t->ids));
		t->args = calloc(n, sizeof(*t->args));
		t->created = calloc(n, sizeof(*t->created));
	}
	if (!t || !t->ids || !t->args || !t->created) {
		int r = log_oom();

		for (unsigned int i = 0; i < n; i++)
			worker_never_ran(job, &job->workers[first + i], r);
		threads_free(t);
		return NULL;
	}

	for (unsigned int i = skip_first ? 1 : 0; i < n; i++) {
		int e;

		t->args[i] = (struct thread_arg){ job, &job->workers[first + i] };
		e = pthread_create(&t->ids[i], NULL, thread_main, &t->args[i]);
		if (e) {
			worker_never_ran(job, &job->workers[first + i],
					 log_error_errno(e, "%s: failed to start worker %u: %m",
							 job->name, first + i));
			continue;
		}
		t->created[i] = true;
	}
	return t;
}

static void threads_join(struct threads *t)
{
	for (unsigned int i = 0; t && i < t->n; i++)
		if (t->created[i])
			pthread_join(t->ids[i], NULL);
}

/* A forked group: its first worker on the process's own thread. */
static void group_main(struct load_job *job, unsigned int g)
{
	unsigned int first = g * job->per_group;
	struct threads *t;

	t = threads_start(job, first, job->per_group, true);
	if (!t)
		return;
	worker_run(job, &job->workers[first]);
	threads_join(t);
	threads_free(t);
}

static int spawn(struct load_job *job)
{
	if (!job->fork_groups) {
		job->threads = threads_start(job, 0, job->nr_workers, false);
		return job->threads ? 0 : -ENOMEM;
	}

	job->pids = calloc(job->nr_groups, sizeof(pid_t));
	if (!job->pids)
		return log_oom();
	for (unsigned int g = 0; g < job->nr_groups; g++) {
		pid_t pid = fork();

		if (pid < 0) {
			int r = log_error_errno(errno, "%s: failed to fork group %u: %m", job->name, g);

			for (unsigned int i = g * job->per_group; i < job->nr_workers; i++)
				worker_never_ran(job, &job->workers[i], r);
			return r;
		}
		if (pid == 0) {
			/* Die with the parent: a group must never outlive the run. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
			    getppid() != job->shared->main_pid)
				_exit(LOAD_EXIT_FAILURE);
			group_main(job, g);
			_exit(0);
		}
		job->pids[g] = pid;
	}
	return 0;
}

/* Reaps groups that ended; one that died before being stopped is an error. */
static int reap(struct load_job *job, bool block)
{
	int r = 0;

	for (unsigned int g = 0; job->pids && g < job->nr_groups; g++) {
		int status;
		pid_t p;

		if (!job->pids[g])
			continue;
		do
			p = waitpid(job->pids[g], &status, block ? 0 : WNOHANG);
		while (p < 0 && errno == EINTR);
		if (p <= 0)
			continue;
		job->pids[g] = 0;
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			continue;
		if (WIFSIGNALED(status))
			log_error("%s: group %u (pid %d) was killed by signal %d",
				  job->name, g, (int)p, WTERMSIG(status));
		else
			log_error("%s: group %u (pid %d) exited with status %d",
				  job->name, g, (int)p, WEXITSTATUS(status));
		__atomic_store_n(&job->shared->failed, 1, __ATOMIC_RELEASE);
		load_job_stop(job);
		r = -ECHILD;
	}
	return r;
}

static void signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGCHLD);
}

/*
 * --progress: one line "progress BOOTTIME OPS" on stderr, BOOTTIME in
 * seconds on the clock /proc/uptime reads, OPS the workers' unit of work
 * so far. A bench samples the rate over spans it marks with that clock
 * while the workload keeps running (bench/run-bench.sh).
 */
static void progress_print(struct load_job *job)
{
	int64_t t = now_ns(CLOCK_BOOTTIME);

	fprintf(stderr, "progress %lld.%09lld %llu\n", (long long)(t / NSEC_PER_SEC),
		(long long)(t % NSEC_PER_SEC), (unsigned long long)load_job_sum_ops(job));
	fflush(stderr);
}

/* The next wake-up: the deadline or the next progress line, 0 if neither. */
static int64_t job_wake_ns(struct load_job *job, int64_t deadline_ns)
{
	int64_t now, next = job->next_progress_ns;

	if (!job->opts->progress_ns || !job->start_ns)
		return deadline_ns;
	now = now_ns(CLOCK_MONOTONIC);
	if (now >= next) {
		progress_print(job);
		next = (next ? next : now) + job->opts->progress_ns;
		if (next <= now)	/* we slept through several: no burst of lines */
			next = now + job->opts->progress_ns;
		job->next_progress_ns = next;
	}
	return deadline_ns && deadline_ns < next ? deadline_ns : next;
}

/*
 * Waits until cond(job) holds: 0; or a signal (-EINTR), a failed worker
 * (-ECANCELED), the deadline (-ETIMEDOUT; 0 is none).
 */
static int job_wait(struct load_job *job, bool (*cond)(const struct load_job *, uint32_t),
		    uint32_t arg, int64_t deadline_ns)
{
	sigset_t set;

	signal_set(&set);
	for (;;) {
		struct timespec ts, *tsp = NULL;
		int64_t wake_ns;
		siginfo_t info;
		int sig;

		if (cond(job, arg))
			return 0;
		if (__atomic_load_n(&job->shared->failed, __ATOMIC_ACQUIRE))
			return -ECANCELED;
		if (deadline_ns && now_ns(CLOCK_MONOTONIC) >= deadline_ns)
			return -ETIMEDOUT;
		wake_ns = job_wake_ns(job, deadline_ns);
		if (wake_ns) {
			int64_t left = wake_ns - now_ns(CLOCK_MONOTONIC);

			if (left <= 0)
				left = 0;
			ts.tv_sec = left / NSEC_PER_SEC;
			ts.tv_nsec = left % NSEC_PER_SEC;
			tsp = &ts;
		}
		sig = sigtimedwait(&set, &info, tsp);
		if (sig < 0) {
			if (errno == EAGAIN)
				continue;	/* the deadline or a progress line */
			if (errno == EINTR)
				continue;
			return log_error_errno(errno, "%s: sigtimedwait failed: %m", job->name);
		}
		switch (sig) {
		case SIGINT:
		case SIGTERM:
			job->interrupted = true;
			return -EINTR;
		case SIGCHLD:
			if (reap(job, false) < 0)
				return -ECANCELED;
			break;
		default:	/* SIGUSR1: a worker moved on; look again */
			break;
		}
	}
}

static bool all_ready(const struct load_job *job, uint32_t unused)
{
	return __atomic_load_n(&job->shared->ready, __ATOMIC_ACQUIRE) == job->nr_workers;
}

static bool all_done(const struct load_job *job, uint32_t unused)
{
	return __atomic_load_n(&job->shared->done, __ATOMIC_ACQUIRE) == job->nr_workers;
}

static bool phase_all_done(const struct load_job *job, uint32_t phase)
{
	const struct load_shared *s = job->shared;

	return __atomic_load_n(&s->phase, __ATOMIC_ACQUIRE) == phase &&
	       __atomic_load_n(&s->phase_done, __ATOMIC_ACQUIRE) == job->nr_workers;
}

void load_job_phase_begin(struct load_job *job, uint32_t phase)
{
	struct load_shared *s = job->shared;

	__atomic_store_n(&s->phase_done, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&s->phase, phase, __ATOMIC_RELEASE);
	futex_wake(&s->phase);
}

int load_job_phase_wait(struct load_job *job, uint32_t phase, int64_t deadline_ns)
{
	return job_wait(job, phase_all_done, phase, deadline_ns);
}

uint32_t load_worker_phase_wait(struct load_job *job, uint32_t seen)
{
	struct load_shared *s = job->shared;
	uint32_t p;

	while ((p = __atomic_load_n(&s->phase, __ATOMIC_ACQUIRE)) == seen && !load_job_stopping(job))
		futex_wait(&s->phase, seen);
	return load_job_stopping(job) ? 0 : p;
}

void load_worker_phase_done(struct load_job *job)
{
	struct load_shared *s = job->shared;

	if (__atomic_add_fetch(&s->phase_done, 1, __ATOMIC_ACQ_REL) == job->nr_workers)
		notify_main(s);
}

static int drive_default(struct load_job *job)
{
	int64_t deadline = 0;
	int r;

	if (job->opts->duration_ns)
		deadline = job->start_ns + job->opts->duration_ns;
	r = job_wait(job, all_done, 0, deadline);
	return r == -ETIMEDOUT ? 0 : r;
}

int load_job_run(struct load_job *job)
{
	struct load_shared *s = job->shared;
	sigset_t set;
	int r, k;

	signal_set(&set);
	/* Before any task exists, so that every worker inherits the mask. */
	r = -pthread_sigmask(SIG_BLOCK, &set, &job->saved_mask);
	if (r < 0)
		return log_error_errno(r, "%s: failed to block signals: %m", job->name);
	s->main_pid = getpid();

	r = spawn(job);
	if (r >= 0)
		r = job_wait(job, all_ready, 0, 0);
	if (r >= 0) {
		job->start_ns = now_ns(CLOCK_MONOTONIC);
		__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
		futex_wake(&s->go);
		if (job->started)
			job->started(job);
		r = job->drive ? job->drive(job) : drive_default(job);
	}

	load_job_stop(job);
	threads_join(job->threads);
	k = reap(job, true);
	if (r >= 0 || r == -EINTR)
		r = k < 0 ? k : r;
	job->end_ns = now_ns(CLOCK_MONOTONIC);

	/* A Ctrl-C during the wind-down still counts; then restore the mask. */
	for (;;) {
		struct timespec zero = { 0, 0 };
		int sig = sigtimedwait(&set, NULL, &zero);

		if (sig < 0)
			break;
		if (sig == SIGINT || sig == SIGTERM)
			job->interrupted = true;
	}
	pthread_sigmask(SIG_SETMASK, &job->saved_mask, NULL);

	for (unsigned int i = 0; i < job->nr_workers; i++)
		if (job->workers[i].error < 0)
			return job->workers[i].error;
	if (r == -EINTR)
		r = 0;
	return r;
}

uint64_t load_job_sum_ops(const struct load_job *job)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < job->nr_workers; i++)
		n += job->workers[i].ops;
	return n;
}

uint64_t load_job_sum_aux(const struct load_job *job, unsigned int k)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < job->nr_workers; i++)
		n += job->workers[i].aux[k];
	return n;
}

uint64_t load_job_sum_ctxsw(const struct load_job *job)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < job->nr_workers; i++)
		n += job->workers[i].nvcsw + job->workers[i].nivcsw;
	return n;
}

double load_job_seconds(const struct load_job *job)
{
	int64_t first = 0, last = 0;

	for (unsigned int i = 0; i < job->nr_workers; i++) {
		const struct load_worker *w = &job->workers[i];

		if (!w->start_ns)
			continue;
		if (!first || w->start_ns < first)
			first = w->start_ns;
		if (w->end_ns > last)
			last = w->end_ns;
	}
	return first ? (double)(last - first) / NSEC_PER_SEC : 0.0;
}
