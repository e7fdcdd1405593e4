// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm import of a trace-cmd trace.dat (see import-tracedat.h).
 *
 * The file is read twice through libtracecmd, every buffer (the top-level
 * one and each instance) merged in timestamp order: the first pass finds
 * the time range, so the intervals and the wall clock are known before
 * anything is learned; the second counts and learns. Nothing is written
 * until both passes are done, and then in one transaction.
 *
 * Counting: the events mmhitmd counts (all of them, as continuous
 * recording does: a trace.dat holds everything it recorded), per interval
 * of the daemon's length, exact (method 'continuous').
 *
 * Learning: the same definitions, filters and decoding as mmhitmd's
 * stream (learn-source.c), the filters evaluated here with libtraceevent
 * instead of in the kernel, fed to the same learner. What the learner
 * asks /proc on a live host (a thread's process, a process's comm) comes
 * from the file instead: its fork and exec events and its saved command
 * lines. A thread the file never saw created has no known process: an
 * mm first seen by its mmap_lock keeps its address, owner unknown,
 * rather than being bound to a guess.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace-cmd.h>
#include <unistd.h>

#include "boots.h"
#include "config.h"
#include "db.h"
#include "events.h"
#include "import.h"
#include "import-tracedat.h"
#include "learn-source.h"
#include "learn.h"
#include "log.h"
#include "mem-agg.h"
#include "u64map.h"
#include "util.h"

/*
 * Exported by libtracecmd.so.1 (3.x) but declared only in trace-cmd's
 * private header, which Debian does not install. Weak: a library without
 * it leaves the host and kernel to --hostname and --kernel-release.
 */
const char *tracecmd_get_uname(struct tracecmd_input *handle) __attribute__((weak));
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle) __attribute__((weak));
const char *tracecmd_get_version(struct tracecmd_input *handle) __attribute__((weak));
/* In a sanitized build (the fuzz target), what runs when a sanitizer
 * finds an error: libFuzzer's would report the child's death as its own. */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

/*
 * What a hostile file may cost the child that reads it first: address
 * space beyond what the child had at the fork (libtracecmd allocates what
 * a size field says, and a corrupt header asked for 12 GB), and CPU time
 * (a real 3 MB file takes the child 0.1 s). AddressSanitizer reserves
 * terabytes of shadow, so a sanitized build (the fuzzers, the asan unit
 * tests) bounds each allocation instead (fuzz-tracedat's
 * max_allocation_size_mb).
 */
#define CHECK_MEM_BYTES		(1ULL << 30)
#define CHECK_CPU_S		60
#define CHECK_CPU_BYTES_PER_S	(1 << 20)
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

/* "\x17\x08\x44" then "tracing": every trace-cmd file version. */
static const char tracedat_magic_bytes[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };

/* Timestamps in this range are wall clock (trace-cmd record --date). */
#define WALL_MIN_NS	(946684800LL * NSEC_PER_SEC)	/* 2000-01-01 */
#define WALL_MAX_NS	(4102444800LL * NSEC_PER_SEC)	/* 2100-01-01 */

/* Buffers in one file: the top-level one and its instances. */
#define MAX_BUFFERS	64

struct counted {
	char name[96];			/* "system:name" */
	uint64_t total;
	uint64_t *per_iv;		/* [n_iv] */
};

struct source {
	struct learn_decoder dec;
	struct tep_event_filter *filter;	/* NULL: every record */
};

struct tdimport {
	const char *path;
	struct tracecmd_input *h[MAX_BUFFERS];
	int n_h;
	struct tep_handle *tep;

	/* pass 1 */
	uint64_t t_first, t_last, records;
	bool have;
	/* placement */
	int64_t wall_off, interval_ns, mtime_ns;
	const char *time_source;
	size_t n_iv;
	uint64_t *iv_records, *iv_lost, *iv_learn;	/* [n_iv] */
	/* pass 2 */
	struct u64map *ids;		/* event id -> counted index + 1, or ~0: not counted */
	struct counted *cnt;
	size_t n_cnt;
	const char *counted[EVENTS_COUNTED_MAX];	/* events_counted(): what mmhitmd counts */
	size_t n_counted;
	struct source src[16];
	int n_src;
	struct learner *learner;
	struct u64map *tgids;		/* tid -> tgid, from the file's fork/exec */
	struct u64map *allocating;	/* tids that allocated an mm not yet forked */
	struct u64map *comms;		/* tgid -> char[16], from fork/exec */
	uint64_t lost, learn_records, other;
	uint64_t hash;
	bool pass2;
	struct event_status_list status;
};

bool tracedat_magic(const void *data, size_t size)
{
	return size >= sizeof(tracedat_magic_bytes) &&
	       memcmp(data, tracedat_magic_bytes, sizeof(tracedat_magic_bytes)) == 0;
}

int tracedat_sniff(const char *path)
{
	char buf[sizeof(tracedat_magic_bytes)];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	return tracedat_magic(buf, (size_t)n);
}

/* FNV-1a over the file's bytes: the same file twice is the same boot. */
static int hash_file(int fd, uint64_t *ret)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char buf[65536];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			h ^= (uint8_t)buf[i];
			h *= 0x100000001b3ULL;
		}
		off += n;
	}
	if (n < 0)
		return -errno;
	*ret = h;
	return 0;
}

/* --- what the learner asks /proc on a live host, from the file ------------ */

static int file_tgid_of(void *ctx, int32_t tid, int32_t *ret_tgid, bool *ret_kthread)
{
	struct tdimport *im = ctx;
	uintptr_t v;

	*ret_kthread = false;
	if (tid <= 0) {
		*ret_kthread = true;	/* the idle task */
		return 0;
	}
	v = (uintptr_t)u64map_get(im->tgids, (uint64_t)tid);
	if (!v)
		return -ESRCH;		/* never seen created: unknown */
	*ret_tgid = (int32_t)(v - 1);
	return 0;
}

static int file_comm_of(void *ctx, int32_t tgid, char *buf)
{
	struct tdimport *im = ctx;
	const char *c = u64map_get(im->comms, (uint64_t)tgid);

	if (!c && im->tep && tep_is_pid_registered(im->tep, tgid))
		c = tep_data_comm_from_pid(im->tep, tgid);
	if (!c || !*c || !strcmp(c, "<...>"))
		return -ESRCH;
	snprintf(buf, 16, "%s", c);
	return 0;
}

static void note_tgid(struct tdimport *im, int32_t tid, int32_t tgid)
{
	if (tid > 0 && tgid > 0 && u64map_put(im->tgids, (uint64_t)tid, (void *)(uintptr_t)(tgid + 1)) < 0)
		log_oom();
}

static void note_comm(struct tdimport *im, int32_t tgid, const char *comm)
{
	char *c = u64map_get(im->comms, (uint64_t)tgid);

	if (!c) {
		c = calloc(1, 16);
		if (!c || u64map_put(im->comms, (uint64_t)tgid, c) < 0) {
			free(c);
			log_oom();
			return;
		}
	}
	snprintf(c, 16, "%s", comm);
}

/*
 * What a live host's /proc would say about the processes the event
 * concerns, kept before the learner sees it: a fork by a thread that
 * allocated an mm creates a process, any other fork a thread of the
 * parent's process; exec makes the task its process's leader.
 */
static void track_tasks(struct tdimport *im, const struct learn_event *ev)
{
	switch (ev->type) {
	case LEARN_MM_ALLOC:
		if (u64map_put(im->allocating, (uint64_t)ev->pid, (void *)1) < 0)
			log_oom();
		break;
	case LEARN_FORK:
		if (u64map_remove(im->allocating, (uint64_t)ev->pid)) {
			note_tgid(im, ev->pid2, ev->pid2);
			note_comm(im, ev->pid2, ev->comm);
		} else {
			int32_t tgid = 0;
			bool kthread;

			if (file_tgid_of(im, ev->pid, &tgid, &kthread) == 0 && !kthread)
				note_tgid(im, ev->pid2, tgid);
		}
		break;
	case LEARN_EXEC:
		note_tgid(im, ev->pid, ev->pid);
		note_comm(im, ev->pid, ev->comm);
		break;
	default:
		break;
	}
}

/* --- the file ------------------------------------------------------------- */

static void close_buffers(struct tdimport *im)
{
	/* instance handles first: they refer to the top-level one */
	for (int i = im->n_h - 1; i >= 0; i--)
		tracecmd_close(im->h[i]);
	im->n_h = 0;
}

static int open_file(struct tdimport *im, int fd)
{
	int n;

	int d;

	/* tracecmd_close() closes the descriptor it was opened with, and
	 * reads from its current offset. */
	d = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (d < 0)
		return -errno;
	if (lseek(d, 0, SEEK_SET) < 0) {
		close(d);
		return -errno;
	}
	errno = 0;
	im->h[0] = tracecmd_open_fd(d, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!im->h[0])
		return errno == ENOMEM ? -ENOMEM : -EBADMSG;
	im->n_h = 1;
	im->tep = tracecmd_get_tep(im->h[0]);
	if (!im->tep)
		return -EBADMSG;
	n = tracecmd_buffer_instances(im->h[0]);
	for (int i = 0; i < n && im->n_h < MAX_BUFFERS; i++) {
		struct tracecmd_input *b = tracecmd_buffer_instance_handle(im->h[0], i);

		if (!b)
			return -EBADMSG;
		im->h[im->n_h++] = b;
	}
	return 0;
}

static size_t interval_of(const struct tdimport *im, uint64_t ts)
{
	uint64_t i;

	if (ts <= im->t_first || !im->n_iv)
		return 0;
	i = (ts - im->t_first) / (uint64_t)im->interval_ns;
	return i < im->n_iv ? i : im->n_iv - 1;
}

/* Whether "system:name" is counted: named, or its system is ("vmscan:*"). */
static bool counted_match(const char *pattern, const char *name)
{
	size_t n = strlen(pattern);

	if (n > 2 && !strcmp(pattern + n - 2, ":*"))
		return !strncmp(pattern, name, n - 1);
	return !strcmp(pattern, name);
}

/* The counted index of an event id; -1 when not counted. Cached. */
static long counted_index(struct tdimport *im, int id)
{
	uintptr_t v = (uintptr_t)u64map_get(im->ids, (uint64_t)id);
	struct tep_event *e;
	char name[96];
	long idx = -1;

	if (v)
		return v == UINTPTR_MAX ? -1 : (long)(v - 1);
	e = tep_find_event(im->tep, id);
	if (e) {
		snprintf(name, sizeof(name), "%s:%s", e->system, e->name);
		for (size_t i = 0; i < im->n_counted && idx < 0; i++) {
			if (!counted_match(im->counted[i], name))
				continue;
			for (size_t j = 0; j < im->n_cnt; j++)
				if (!strcmp(im->cnt[j].name, name))
					idx = (long)j;
			if (idx < 0 && im->n_cnt < 256) {
				struct counted *p = reallocarray(im->cnt, im->n_cnt + 1, sizeof(*p));
				uint64_t *per = calloc(im->n_iv ?: 1, sizeof(*per));

				if (!p || !per) {
					if (p)
						im->cnt = p;
					free(per);
					return -1;
				}
				im->cnt = p;
				memset(&p[im->n_cnt], 0, sizeof(*p));
				snprintf(p[im->n_cnt].name, sizeof(p->name), "%s", name);
				p[im->n_cnt].per_iv = per;
				idx = (long)im->n_cnt++;
			}
		}
	}
	if (u64map_put(im->ids, (uint64_t)id, (void *)(idx < 0 ? UINTPTR_MAX : (uintptr_t)idx + 1)) < 0)
		log_oom();
	return idx;
}

static int on_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
	struct tdimport *im = data;
	size_t iv;
	long ci;
	int id;

	if (!im->pass2) {
		if (!im->have || rec->ts < im->t_first)
			im->t_first = rec->ts;
		if (!im->have || rec->ts > im->t_last)
			im->t_last = rec->ts;
		im->have = true;
		im->records++;
		return 0;
	}
	iv = interval_of(im, rec->ts);
	im->iv_records[iv]++;
	/* A record after a ring-buffer overrun: how many were lost, when known. */
	if (rec->missed_events > 0) {
		im->iv_lost[iv] += (uint64_t)rec->missed_events;
		im->lost += (uint64_t)rec->missed_events;
	}
	if (!rec->data || rec->size <= 0)
		return 0;
	id = tep_data_type(im->tep, rec);
	ci = counted_index(im, id);
	if (ci >= 0) {
		im->cnt[ci].per_iv[iv]++;
		im->cnt[ci].total++;
	} else {
		im->other++;
	}
	for (int i = 0; i < im->n_src; i++) {
		const struct source *s = &im->src[i];
		struct learn_event ev;
		char text[128];

		if (s->dec.id != id)
			continue;
		if (s->filter && tep_filter_match(s->filter, rec) != TEP_ERRNO__FILTER_MATCH)
			continue;
		learn_decoder_decode(&s->dec, rec->data, rec->size,
				     (int64_t)rec->ts + im->wall_off, &ev, text, sizeof(text));
		ev.text = text[0] ? text : NULL;
		track_tasks(im, &ev);
		learner_feed(im->learner, &ev);
		im->learn_records++;
		im->iv_learn[iv]++;
	}
	return 0;
}

static int iterate(struct tdimport *im)
{
	/* The multi-handle walk merges every buffer in timestamp order. */
	if (tracecmd_iterate_events_multi(im->h, im->n_h, on_record, im) < 0)
		return -EBADMSG;
	return 0;
}

/*
 * The learning sources this file has, with their filters: the events and
 * filters mmhitmd arms, evaluated here (the file's events were recorded
 * unfiltered, or with whatever filter its author chose).
 */
static int setup_sources(struct tdimport *im, const struct config *cfg)
{
	const struct learn_filter_config fc = { .page_pair_shift = cfg->page_pair_shift };

	for (size_t i = 0; i < learn_n_source_defs && im->n_src < (int)ARRAY_SIZE(im->src); i++) {
		const struct learn_source_def *d = &learn_source_defs[i];
		struct tep_event *ev = tep_find_event_by_name(im->tep, d->system, d->name);
		struct source *s = &im->src[im->n_src];
		char filter[512], spec[700], why[160] = "";

		/* The switch samples estimate what a trace.dat has whole. */
		if (d->type == LEARN_SWITCH)
			continue;
		if (!ev) {
			event_status_add(&im->status, d->system, d->name, "learn", false,
					 "no format in the trace.dat");
			continue;
		}
		if (learn_decoder_init(&s->dec, d, ev) < 0) {
			event_status_add(&im->status, d->system, d->name, "learn", false,
					 "fields differ from what mmhitm reads");
			continue;
		}
		if (learn_source_filter(&fc, d, ev, filter, sizeof(filter), why, sizeof(why)) < 0) {
			event_status_add(&im->status, d->system, d->name, "learn", false, "%s", why);
			continue;
		}
		s->filter = NULL;
		if (filter[0]) {
			s->filter = tep_filter_alloc(im->tep);
			if (!s->filter)
				return log_oom();
			snprintf(spec, sizeof(spec), "%s/%s:%s", d->system, d->name, filter);
			if (tep_filter_add_filter_str(s->filter, spec) < 0) {
				tep_filter_free(s->filter);
				s->filter = NULL;
				event_status_add(&im->status, d->system, d->name, "learn", false,
						 "filter \"%s\" does not apply to its format", filter);
				continue;
			}
		}
		im->n_src++;
		event_status_add(&im->status, d->system, d->name, "learn", true, "%s, from the trace.dat",
				 filter[0] ? filter : "no filter");
	}
	return 0;
}

/* Places the file's clock on the wall clock and lays out the intervals. */
static int place(struct tdimport *im)
{
	uint64_t span = im->t_last - im->t_first, n;

	if (im->t_first >= (uint64_t)WALL_MIN_NS && im->t_last < (uint64_t)WALL_MAX_NS) {
		im->wall_off = 0;
		im->time_source = "the file's timestamps (wall clock: trace-cmd record --date)";
	} else {
		if (im->t_last > (uint64_t)INT64_MAX)
			return log_error_errno(ERANGE, "%s: timestamps up to %" PRIu64 " ns are not a "
					       "clock", im->path, im->t_last);
		im->wall_off = im->mtime_ns - (int64_t)im->t_last;
		im->time_source = "the file's mtime as the last event's time (trace-cmd record "
				  "--date for exact times)";
	}
	if ((int64_t)im->t_first + im->wall_off < 0)
		return log_error_errno(ERANGE, "%s: its events span %.0f s before its mtime, more "
				       "than the wall clock allows", im->path, span / 1e9);
	n = span / (uint64_t)im->interval_ns + 1;
	if (n > IMPORT_MAX_INTERVALS)
		return log_error_errno(E2BIG, "%s spans %.0f s: more than %d intervals of %.0f s, "
				       "pass a longer --interval", im->path, span / 1e9,
				       IMPORT_MAX_INTERVALS, im->interval_ns / 1e9);
	im->n_iv = n;
	im->iv_records = calloc(n, sizeof(*im->iv_records));
	im->iv_lost = calloc(n, sizeof(*im->iv_lost));
	im->iv_learn = calloc(n, sizeof(*im->iv_learn));
	if (!im->iv_records || !im->iv_lost || !im->iv_learn)
		return log_oom();
	return 0;
}

static int tdimport_init(struct tdimport *im, const struct config *cfg)
{
	const struct learn_limits lim = { .max_page_pairs = cfg->max_page_pairs,
					  .max_locks = cfg->max_locks };
	const struct learn_proc proc = { .tgid_of = file_tgid_of, .comm_of = file_comm_of, .ctx = im };

	im->ids = u64map_new();
	im->tgids = u64map_new();
	im->allocating = u64map_new();
	im->comms = u64map_new();
	im->learner = learner_new(&lim, &proc);
	if (!im->ids || !im->tgids || !im->allocating || !im->comms || !im->learner)
		return log_oom();
	return 0;
}

static void tdimport_done(struct tdimport *im)
{
	size_t it = 0;
	void *v;

	/* tep_filter_free() does not take NULL */
	for (int i = 0; i < im->n_src; i++)
		if (im->src[i].filter)
			tep_filter_free(im->src[i].filter);
	im->n_src = 0;
	close_buffers(im);
	for (size_t i = 0; i < im->n_cnt; i++)
		free(im->cnt[i].per_iv);
	free(im->cnt);
	free(im->iv_records);
	free(im->iv_lost);
	free(im->iv_learn);
	while (im->comms && u64map_next(im->comms, &it, NULL, &v))
		free(v);
	u64map_free(im->comms);
	u64map_free(im->ids);
	u64map_free(im->tgids);
	u64map_free(im->allocating);
	learner_free(im->learner);
	event_status_list_done(&im->status);
	memset(im, 0, sizeof(*im));
}

/* Both passes over an open file. */
static int read_all(struct tdimport *im, int fd, const struct config *cfg, bool place_it)
{
	int r;

	r = open_file(im, fd);
	if (r < 0)
		return r;
	r = iterate(im);
	if (r < 0)
		return r;
	if (!im->have)
		return -ENODATA;
	if (place_it) {
		r = place(im);
		if (r < 0)
			return r;
	} else {
		im->n_iv = 1;
		im->iv_records = calloc(1, sizeof(uint64_t));
		im->iv_lost = calloc(1, sizeof(uint64_t));
		im->iv_learn = calloc(1, sizeof(uint64_t));
		if (!im->iv_records || !im->iv_lost || !im->iv_learn)
			return -ENOMEM;
	}
	/* The second pass from fresh handles: libtracecmd's iteration
	 * leaves each buffer at its end. */
	close_buffers(im);
	im->tep = NULL;
	r = open_file(im, fd);
	if (r < 0)
		return r;
	r = setup_sources(im, cfg);
	if (r < 0)
		return r;
	im->pass2 = true;
	return iterate(im);
}

#ifndef UNDER_ASAN
/* The child's address space: what it has now plus CHECK_MEM_BYTES. */
static void bound_address_space(void)
{
	unsigned long long pages;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return;
	if (fscanf(f, "%llu", &pages) == 1) {
		rlim_t as = pages * (rlim_t)sysconf(_SC_PAGESIZE) + CHECK_MEM_BYTES;

		setrlimit(RLIMIT_AS, &(struct rlimit){ as, as });
	}
	fclose(f);
}
#endif

/* The child's bounds (CHECK_*): memory, and CPU time by the file's size. */
static void bound_child(int fd)
{
	rlim_t cpu = CHECK_CPU_S;
	struct stat st;

	if (fstat(fd, &st) == 0)
		cpu += (rlim_t)st.st_size / CHECK_CPU_BYTES_PER_S;
	setrlimit(RLIMIT_CPU, &(struct rlimit){ cpu, cpu + 5 });
#ifndef UNDER_ASAN
	bound_address_space();
#endif
}

/*
 * libtracecmd 3.1 is not hardened against corrupt files: a file cut
 * short inside its CPU data crashes tracecmd_open_fd() itself, a corrupt
 * size field makes it allocate what it says. So a child, bounded in
 * memory and CPU time (bound_child), reads the whole file first, exactly
 * as the import will; only when it came through does this process read
 * it. Returns 0, -EBADMSG (corrupt, or it crashed the reader), -ENOMEM
 * (it asked for more than the bound), -ETIME (it took longer), -ENODATA
 * (no events), all logged by the caller, or another -errno.
 */
static int check_in_child(int fd)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct tdimport im = { .path = "(check)", .interval_ns = 60 * NSEC_PER_SEC };
		static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
		struct config cfg;
		int r;

		/* A crash here is the answer, not an event to report. */
		for (size_t i = 0; i < ARRAY_SIZE(crash_signals); i++)
			signal(crash_signals[i], SIG_DFL);
		if (__sanitizer_set_death_callback)
			__sanitizer_set_death_callback(NULL);
		bound_child(fd);
		config_init(&cfg);
		r = tdimport_init(&im, &cfg);
		if (r >= 0)
			r = read_all(&im, fd, &cfg, false);
		/* no cleanup, no atexit handlers: the parent owns everything */
		_exit(r == 0 ? 0 : r == -ENODATA ? 3 : r == -ENOMEM ? 4 : 2);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status)) {
		log_debug("libtracecmd died of signal %d reading the file", WTERMSIG(status));
		return WTERMSIG(status) == SIGXCPU ? -ETIME : -EBADMSG;
	}
	switch (WEXITSTATUS(status)) {
	case 0: return 0;
	case 3: return -ENODATA;
	case 4: return -ENOMEM;
	default: return -EBADMSG;
	}
}

long tracedat_scan_fd(int fd)
{
	struct tdimport im = { .path = "(fuzz)", .interval_ns = 60 * NSEC_PER_SEC };
	struct config cfg;
	long r;

	config_init(&cfg);
	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);
	r = check_in_child(fd);
	if (r >= 0)
		r = tdimport_init(&im, &cfg);
	if (r >= 0)
		r = read_all(&im, fd, &cfg, false);
	if (r >= 0)
		r = (long)im.records;
	tdimport_done(&im);
	config_done(&cfg);
	return r;
}

/* --- the database --------------------------------------------------------- */

/* uname as trace-cmd stores it: "sysname nodename release [version] machine". */
struct uname_parts {
	char host[256], release[256], version[256], machine[64];
};

static void parse_uname(const char *s, struct uname_parts *u)
{
	char buf[1024], *tok[64], *save = NULL;
	int n = 0;

	memset(u, 0, sizeof(*u));
	if (!s)
		return;
	snprintf(buf, sizeof(buf), "%s", s);
	for (char *t = strtok_r(buf, " ", &save); t && n < (int)ARRAY_SIZE(tok);
	     t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	if (n < 4)
		return;
	snprintf(u->host, sizeof(u->host), "%s", tok[1]);
	snprintf(u->release, sizeof(u->release), "%s", tok[2]);
	snprintf(u->machine, sizeof(u->machine), "%s", tok[n - 1]);
	for (int i = 3; i < n - 1; i++)
		snprintf(u->version + strlen(u->version), sizeof(u->version) - strlen(u->version),
			 "%s%s", i > 3 ? " " : "", tok[i]);
}

static int store_boot(struct tdimport *im, sqlite3 *db, const char *hostname, const char *release,
		      const struct uname_parts *u, int64_t *ret)
{
	const char *clock = tracecmd_get_trace_clock ? tracecmd_get_trace_clock(im->h[0]) : NULL;
	const char *version = tracecmd_get_version ? tracecmd_get_version(im->h[0]) : NULL;
	char uuid[64], detail[512], machine_id[300];
	unsigned int line = 0;
	int r, page = tep_get_page_size(im->tep);

	r = import_machine_id(db, hostname, machine_id, sizeof(machine_id));
	if (r < 0)
		return r;
	if (mem_host_line_size(NULL, &line) < 0)
		line = 64;
	snprintf(uuid, sizeof(uuid), "import:%016" PRIx64, im->hash);
	snprintf(detail, sizeof(detail), "trace.dat (trace-cmd %s, clock %s): tracepoints only, "
		 "no PMU samples", version && *version ? version : "version unknown",
		 clock && *clock ? clock : "unknown");
	r = boot_row_store(db, &(struct boot_row){
		.machine_id = machine_id,
		.hostname = hostname,
		.boot_uuid = uuid,
		.source = "import",
		.first_seen_ns = (int64_t)im->t_first + im->wall_off,
		.last_seen_ns = (int64_t)im->t_last + im->wall_off + 1,
		.kernel_release = release,
		.kernel_version = u->version[0] ? u->version : "(not in trace.dat)",
		.arch = u->machine[0] ? u->machine : "unknown",
		.nr_cpus_online = tep_get_cpus(im->tep),
		.cache_line_size = (int)line,
		.page_size = page > 0 ? page : (int)sysconf(_SC_PAGESIZE),
		.pmu_kind = "none",
		.pmu_detail = detail,
		.btf = "not in trace.dat",
	}, ret);
	if (r == -EEXIST)
		return log_error_errno(EEXIST, "%s was already imported (%s)", im->path, uuid);
	return r;
}

static int store_intervals(struct tdimport *im, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *iv = NULL, *ec = NULL;
	int64_t *ids;
	int r;

	ids = calloc(im->n_cnt + 1, sizeof(*ids));
	if (!ids)
		return log_oom();
	for (size_t j = 0; j < im->n_cnt; j++) {
		r = db_name_id(db, "event_names", im->cnt[j].name, &ids[j]);
		if (r < 0)
			goto out;
	}
	r = db_prepare(db, &iv, "INSERT INTO intervals (boot_id, start_ns, end_ns, partial,"
			     " learn_records, events_lost) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
	if (r < 0)
		goto out;
	r = db_prepare(db, &ec, "INSERT INTO event_counts (interval_id, event_id, count, method)"
			     " VALUES (?1, ?2, ?3, 'continuous')");
	if (r < 0)
		goto out;
	for (size_t i = 0; i < im->n_iv; i++) {
		int64_t start = (int64_t)im->t_first + im->wall_off + (int64_t)i * im->interval_ns;
		int64_t end = start + im->interval_ns, interval_id;

		if (i == im->n_iv - 1)
			end = (int64_t)im->t_last + im->wall_off + 1;
		sqlite3_bind_int64(iv, 1, boot_id);
		sqlite3_bind_int64(iv, 2, start);
		sqlite3_bind_int64(iv, 3, end);
		sqlite3_bind_int(iv, 4, end - start < im->interval_ns);
		sqlite3_bind_int64(iv, 5, (int64_t)im->iv_learn[i]);
		sqlite3_bind_int64(iv, 6, (int64_t)im->iv_lost[i]);
		r = db_step_done(db, iv);
		if (r < 0)
			goto out;
		interval_id = sqlite3_last_insert_rowid(db);
		/* Every counted event the file has, zeros too: in a trace
		 * that recorded it, none is a count, not an absence. */
		for (size_t j = 0; j < im->n_cnt; j++) {
			sqlite3_bind_int64(ec, 1, interval_id);
			sqlite3_bind_int64(ec, 2, ids[j]);
			sqlite3_bind_int64(ec, 3, (int64_t)im->cnt[j].per_iv[i]);
			r = db_step_done(db, ec);
			if (r < 0)
				goto out;
		}
	}
out:
	free(ids);
	return r;
}

/* Which counted events the file has (boot_events), beside the learning ones. */
static int note_counted(struct tdimport *im)
{
	for (size_t i = 0; i < im->n_counted; i++) {
		const char *c = im->counted[i], *colon = strchr(c, ':');
		char sys[64];
		bool found = false;

		snprintf(sys, sizeof(sys), "%.*s", (int)(colon - c), c);
		for (size_t j = 0; j < im->n_cnt && !found; j++)
			found = counted_match(c, im->cnt[j].name);
		if (event_status_add(&im->status, sys, colon + 1, "count", found,
				     found ? "counted from the trace.dat" : "no records in the trace.dat") < 0)
			return -ENOMEM;
	}
	return 0;
}

static void print_summary(const struct tdimport *im, int64_t boot_id, const char *hostname,
			  const char *release, const struct learn_stats *ls)
{
	time_t s0 = ((int64_t)im->t_first + im->wall_off) / NSEC_PER_SEC;
	time_t s1 = ((int64_t)im->t_last + im->wall_off) / NSEC_PER_SEC;
	char t0[32], t1[32];
	struct tm tm;

	strftime(t0, sizeof(t0), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s0, &tm));
	strftime(t1, sizeof(t1), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s1, &tm));
	printf("%s: trace.dat on %s, kernel %s, %d CPUs, %d buffers, %" PRIu64 " events\n",
	       im->path, hostname, release, tep_get_cpus(im->tep), im->n_h, im->records);
	for (size_t j = 0; j < im->n_cnt; j++)
		printf("  event '%s': %" PRIu64 " counted\n", im->cnt[j].name, im->cnt[j].total);
	printf("  %" PRIu64 " events mmhitm does not count, %" PRIu64 " lost in the ring buffer\n",
	       im->other, im->lost);
	printf("  learned from %" PRIu64 " records: %" PRIu64 " mm_structs bound to a process, "
	       "%" PRIu64 " (folio, pfn) pairs, %" PRIu64 " contended locks\n",
	       im->learn_records, ls->mm_learned, ls->page_pairs, ls->locks);
	printf("boot %" PRId64 ": %zu intervals from %s to %s (time from %s)\n", boot_id, im->n_iv,
	       t0, t1, im->time_source);
}

/*
 * Opens im->path (*ret_fd, for the caller to close) and reads it whole:
 * its mtime and content hash, then both passes, once check_in_child()'s
 * child came through them. 0 or -errno (logged).
 */
static int read_trace(struct tdimport *im, const struct config *cfg, int *ret_fd)
{
	const char *path = im->path;
	struct stat st;
	int fd, r;

	*ret_fd = fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return log_error_errno(errno, "Failed to open %s: %m", path);
	if (fstat(fd, &st) < 0)
		return log_error_errno(errno, "Failed to stat %s: %m", path);
	im->mtime_ns = (int64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + st.st_mtim.tv_nsec;
	r = hash_file(fd, &im->hash);
	if (r < 0) {
		log_error_errno(r, "Failed to read %s: %m", path);
		return r;
	}
	r = check_in_child(fd);
	if (r == -ENOMEM)
		return log_error_errno(r, "Failed to read %s: reading it takes more than %llu MiB of memory "
				       "(a corrupt size field?), nothing imported", path, CHECK_MEM_BYTES >> 20);
	if (r == -ETIME)
		return log_error_errno(r, "Failed to read %s: reading it took more than %lld s of CPU time "
				       "(%d s and 1 s a MiB), nothing imported", path,
				       (long long)(CHECK_CPU_S + st.st_size / CHECK_CPU_BYTES_PER_S), CHECK_CPU_S);
	if (r >= 0)
		r = tdimport_init(im, cfg);
	if (r >= 0)
		r = read_all(im, fd, cfg, true);
	if (r == -ENODATA)
		log_error("%s holds no events: nothing to import", path);
	else if (r == -EBADMSG)
		log_error("Failed to read %s: not a trace-cmd file libtracecmd can read "
			  "(truncated or corrupt), nothing imported", path);

	return r;
}

/* The host name and kernel release: the options', else the file's uname
 * (parsed into *u, which they may point into). */
static int names_of(const struct tdimport *im, const struct tracedat_opts *o, struct uname_parts *u,
		    const char **ret_hostname, const char **ret_release)
{
	const char *hostname, *release;

	parse_uname(tracecmd_get_uname ? tracecmd_get_uname(im->h[0]) : NULL, u);
	hostname = o->hostname ?: u->host;
	release = o->release ?: u->release;
	if (!*hostname || !*release)
		return log_error_errno(EINVAL, "%s does not say its %s: pass --%s", im->path,
				       !*hostname ? "host name" : "kernel release",
				       !*hostname ? "hostname" : "kernel-release");
	*ret_hostname = hostname;
	*ret_release = release;
	return 0;
}

/*
 * Writes the boot, its intervals, the events' status and the objects
 * learned into the database at db_path, in one transaction, and says what
 * it stored. A database this import created and could not fill is not
 * left behind.
 */
static int store_all(struct tdimport *im, const char *db_path, const char *hostname,
		     const char *release, const struct uname_parts *u)
{
	struct learn_stats ls;
	sqlite3 *db = NULL;
	int64_t boot_id = 0;
	bool db_existed;
	int r;

	db_existed = access(db_path, F_OK) == 0;
	r = db_open(db_path, 0, &db);
	if (r < 0)
		return log_error_errno(r, "Cannot open the database %s: %s", db_path, db_open_error());
	r = db_begin(db);
	if (r >= 0)
		r = store_boot(im, db, hostname, release, u, &boot_id);
	if (r >= 0)
		r = store_intervals(im, db, boot_id);
	if (r >= 0)
		r = event_status_store(db, boot_id, &im->status);
	if (r >= 0)
		r = learner_flush(im->learner, db, boot_id);
	if (r >= 0)
		r = db_commit(db);
	if (r < 0) {
		db_rollback(db);
		learner_abort(im->learner);
	} else {
		learner_commit(im->learner);
		learner_get_stats(im->learner, &ls);
		print_summary(im, boot_id, hostname, release, &ls);
	}
	db_close(db);
	if (r < 0 && !db_existed)
		db_remove(db_path);
	return r;
}

int tracedat_import(const char *path, const struct tracedat_opts *o)
{
	struct tdimport im = { .path = path, .interval_ns = o->interval_ns };
	struct uname_parts u;
	struct config cfg;
	const char *hostname = NULL, *release = NULL;
	int fd = -1, r;

	config_init(&cfg);
	if (!im.interval_ns)
		im.interval_ns = cfg.interval_ns;
	/* A trace.dat has what continuous recording would have counted. */
	r = events_counted(true, im.counted, ARRAY_SIZE(im.counted));
	if (r < 0) {
		config_done(&cfg);
		return log_error_errno(r, "The path table's work tracepoints do not fit: %m");
	}
	im.n_counted = (size_t)r;
	/* libtracecmd and libtraceevent print to stderr; what matters is said below. */
	tracecmd_set_loglevel(TEP_LOG_NONE);
	tep_set_loglevel(TEP_LOG_NONE);
	r = read_trace(&im, &cfg, &fd);
	if (r >= 0)
		r = names_of(&im, o, &u, &hostname, &release);
	if (r >= 0)
		r = note_counted(&im);
	if (r >= 0)
		r = store_all(&im, o->db, hostname, release, &u);
	if (fd >= 0)
		close(fd);
	tdimport_done(&im);
	config_done(&cfg);
	return r;
}
