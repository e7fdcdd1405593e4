// SPDX-License-Identifier: GPL-2.0
/*
 * The spike watch of daemon/spike.c. It watches the free counters the
 * path table names (`free`): a fifth path's is read, a counter two paths
 * name is read once, and a bad `free` is refused with one line naming the
 * file and line. The spike rule on readings made here: a steady baseline
 * with noise judges nothing, a jump above spike_factor times the median
 * and above the floor is one spike naming its counter, a jump under the
 * floor or under the factor is none, nothing is judged before
 * SPIKE_MIN_HISTORY readings or with factor 0, and a storm that lasts
 * becomes the baseline. Then real readings of this machine's files.
 * An exact free counter (`free ... exact`) stands in for its tracepoint:
 * a windowed daemon does not count it (events_counted()), and the
 * snapshot every interval reads its value.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events.h"
#include "log.h"
#include "paths.h"
#include "spike.h"
#include "sysstat.h"
#include "test.h"
#include "util.h"

/* common/paths.conf, compiled in. */
extern const unsigned char paths_conf[];
extern const size_t paths_conf_len;

#define S 1000000000LL

struct feeder {
	struct spike_watch *w;
	struct spike_reading r;
};

/* The index of the watch's counter named name; -1 (a failed check) if none. */
static int counter(const struct spike_watch *w, const char *name)
{
	for (size_t c = 0; c < spike_watch_count(w); c++)
		if (strcmp(spike_counter_name(w, c), name) == 0)
			return (int)c;
	CHECK_STR(name, "a counter of the watch");
	return -1;
}

/* One reading dt_s after the last, each counter grown by rate * dt_s. */
static int feed(struct feeder *f, const double rate[SPIKE_MAX_COUNTERS], double dt_s, double factor,
		double min_rate, struct spike_hit *hit)
{
	size_t n = spike_watch_count(f->w);

	f->r.mono_ns += (int64_t)(dt_s * S);
	for (size_t c = 0; c < n; c++)
		f->r.v[c] += (uint64_t)(rate[c] * dt_s);
	f->r.present = (1u << n) - 1;
	return spike_watch_feed(f->w, &f->r, factor, min_rate, 2, hit);
}

/* A fifth path for the tests: forks, whose free counter is /proc/stat processes. */
#define P5_HEAD "path P5\n\ttitle test: forks\n\tunit forks\n\tper 1000\n\twork sched:sched_process_fork\n"
#define P5_FREE_LINE 6	/* of the table's lines from "path P5" on, `free`'s */

static char table_path[] = "/tmp/mmhitm-test-spike-paths.XXXXXX";

/*
 * Writes the shipped table, a blank line and extra (a fifth path) into
 * table_path, for MMHITM_PATHS or paths_parse(); the line number of
 * extra's first line.
 */
static unsigned int write_table(const char *extra)
{
	FILE *f = fopen(table_path, "w");
	unsigned int lines = 0;

	CHECK(f);
	if (!f)
		return 0;
	fwrite(paths_conf, 1, paths_conf_len, f);
	for (size_t i = 0; i < paths_conf_len; i++)
		lines += paths_conf[i] == '\n';
	fprintf(f, "\n%s", extra);
	CHECK_INT(fclose(f), ==, 0);
	return lines + 2;	/* the blank line ends the table's last line if it lacked one */
}

/* paths_load() of table_path as MMHITM_PATHS, its stderr into *ret_log. */
static int load_capture(char **ret_log)
{
	char logpath[] = "/tmp/mmhitm-test-spike-log.XXXXXX";
	int fd = mkstemp(logpath), saved, r;

	*ret_log = NULL;
	CHECK(fd >= 0);
	if (fd < 0)
		return -EIO;
	saved = dup(2);
	setenv("MMHITM_PATHS", table_path, 1);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	r = paths_load();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unsetenv("MMHITM_PATHS");
	read_file(logpath, ret_log);
	unlink(logpath);
	return r;
}

/* The lines of text. */
static int count_lines(const char *text)
{
	int n = 0;

	for (; text && *text; text++)
		n += *text == '\n';
	return n;
}

/* A bad `free` is refused with one line naming the file and line. */
static void test_free_refused(void)
{
	static const char *const bad[] = {
		"proc:processes",		/* no such file */
		"stat:",
		"stat:pro-cesses",
		"stat",
		"stat:processes stat:ctxt",	/* one counter */
		"stat:processes exactly",	/* exact or nothing */
		"stat:processes exact exact",
		"stat:intr exact",		/* not read every interval */
		"interrupts:CAL exact",
	};
	char extra[512], want[512], *log;
	unsigned int line;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(extra, sizeof(extra), P5_HEAD "\tfree sched:sched_process_fork %s\n", bad[i]);
		line = write_table(extra) + P5_FREE_LINE - 1;
		CHECK_INT(load_capture(&log), ==, -EINVAL);
		snprintf(want, sizeof(want), "%s:%u: bad value for 'free'", table_path, line);
		CHECK(log && strstr(log, want));
		CHECK_INT(count_lines(log), ==, 1);
		if (!log || !strstr(log, want))
			fprintf(stderr, "  want \"%s\" in: %s\n", want, log ? log : "(nothing)");
		free(log);
	}
	/* a source the path does not count, or a second free for one */
	line = write_table(P5_HEAD "\tfree sched:sched_switch stat:ctxt\n") + P5_FREE_LINE - 1;
	CHECK_INT(load_capture(&log), ==, -EINVAL);
	snprintf(want, sizeof(want), "%s:%u: free sched:sched_switch: not a work source of path P5",
		 table_path, line);
	CHECK(log && strstr(log, want));
	CHECK_INT(count_lines(log), ==, 1);
	free(log);
	line = write_table(P5_HEAD "\tfree sched:sched_process_fork stat:processes\n"
			   "\tfree sched:sched_process_fork stat:ctxt\n") + P5_FREE_LINE;
	CHECK_INT(load_capture(&log), ==, -EINVAL);
	snprintf(want, sizeof(want), "%s:%u: a second free for sched:sched_process_fork", table_path, line);
	CHECK(log && strstr(log, want));
	CHECK_INT(count_lines(log), ==, 1);
	free(log);
}

/* The shipped table and extra into the global one, through table_path. */
static int parse_table(const char *extra)
{
	_cleanup_free_ char *text = NULL;

	CHECK(write_table(extra) > 0);
	if (read_file(table_path, &text) < 0)
		return -EIO;
	return paths_parse(text, strlen(text), table_path);
}

/* A fifth path with n work sources, each naming its free counter, after
 * the shipped table's three: paths_parse()'s result. */
static int parse_many_free(size_t n)
{
	char extra[4096] = "path P5\n\ttitle test: many\n\tunit u\n\tper 1\n\twork";
	size_t len;

	for (size_t i = 0; i < n; i++)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), " t:s%zu", i);
	strcat(extra, "\n");
	for (size_t i = 0; i < n; i++) {
		len = strlen(extra);
		if (i)
			snprintf(extra + len, sizeof(extra) - len, "\tunit_of t:s%zu u\n", i);
		len = strlen(extra);
		snprintf(extra + len, sizeof(extra) - len, "\tfree t:s%zu vmstat:f%zu\n", i, i);
	}
	return parse_table(extra);
}

/* Whether events_counted(continuous) lists spec. */
static bool counted(bool continuous, const char *spec)
{
	const char *v[EVENTS_COUNTED_MAX];
	int n = events_counted(continuous, v, EVENTS_COUNTED_MAX);

	CHECK_INT(n, >, 0);
	for (int i = 0; i < n; i++)
		if (strcmp(v[i], spec) == 0)
			return true;
	return false;
}

/*
 * `exact`: the fifth path's forks read from /proc/stat's processes, and
 * the shipped P1's switches from ctxt. Windowed, neither tracepoint is
 * counted; P3's and P4's, whose free counters count other things too,
 * still are; continuous counts them all. The snapshot taken every
 * interval reads the exact counter: five forks here move it by five or
 * more.
 */
static void test_exact(void)
{
	const struct path_free *f, *nope;
	struct sys_snapshot a = {}, b = {};
	uint64_t va = 0, vb = 0, v;

	CHECK_INT(parse_table(P5_HEAD "\tfree sched:sched_process_fork stat:processes exact\n"), ==, 0);
	f = path_work_free(path_get(4), "sched:sched_process_fork");
	CHECK(f && f->exact);
	CHECK(path_work_exact_free("sched:sched_process_fork"));
	CHECK(path_work_exact_free("sched:sched_switch"));
	CHECK(!path_work_exact_free("tlb:tlb_flush"));
	CHECK(!path_work_exact_free("pagemap:mm_lru_activate"));
	CHECK(!counted(false, "sched:sched_switch"));
	CHECK(!counted(false, "sched:sched_process_fork"));
	CHECK(counted(false, "tlb:tlb_flush"));
	CHECK(counted(false, "pagemap:mm_lru_activate"));
	CHECK(counted(true, "sched:sched_switch"));
	CHECK(counted(true, "sched:sched_process_fork"));
	CHECK(counted(true, "tlb:tlb_flush"));
	if (!f)
		return;
	CHECK_INT(sys_snapshot_take(&a, 0), ==, 0);
	for (int i = 0; i < 5; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	CHECK_INT(sys_snapshot_take(&b, 0), ==, 0);
	CHECK_INT(sys_snapshot_free_value(&a, f, &va), ==, 0);
	CHECK_INT(sys_snapshot_free_value(&b, f, &vb), ==, 0);
	CHECK_INT(vb - va, >=, 5);
	CHECK_INT(vb, ==, b.forks);
	nope = &(struct path_free){ .source = "x:y", .file = PATH_FREE_VMSTAT, .field = "no_such_line" };
	CHECK_INT(sys_snapshot_free_value(&b, nope, &v), ==, -ENOENT);
	sys_snapshot_done(&a);
	sys_snapshot_done(&b);
}

/*
 * A fifth path naming a free counter (MMHITM_PATHS): the watch reads it,
 * and it counts the forks made here. A counter two paths name is read
 * once; the table holds PATHS_MAX_FREE free counters, no more.
 */
static void test_fifth_path(void)
{
	const struct path_free *f;
	struct spike_reading a, b;
	struct spike_watch *w;
	char *log;
	int forks;

	write_table(P5_HEAD "\tfree sched:sched_process_fork stat:processes\n");
	CHECK_INT(load_capture(&log), ==, 0);
	free(log);
	CHECK_INT(paths_count(), ==, 5);
	f = path_work_free(path_get(4), "sched:sched_process_fork");
	CHECK(f && f->file == PATH_FREE_STAT);
	CHECK_STR(f ? f->field : NULL, "processes");
	/* P2 has none: its work is lru_gen's progress */
	CHECK(path_work_free(path_get(1), "lru_gen_progress.max_seq_delta") == NULL);
	f = path_work_free(path_get(3), "tlb:tlb_flush");
	CHECK_STR(f ? path_free_file_name(f->file) : NULL, "interrupts");

	w = spike_watch_new();
	CHECK(w);
	CHECK_INT(spike_watch_count(w), ==, 4);
	forks = w ? counter(w, "processes") : -1;
	if (forks >= 0) {
		CHECK_INT(spike_watch_read(w, &a), ==, 0);
		for (int i = 0; i < 5; i++) {
			pid_t pid = fork();

			if (pid == 0)
				_exit(0);
			CHECK(pid > 0);
			if (pid > 0)
				waitpid(pid, NULL, 0);
		}
		CHECK_INT(spike_watch_read(w, &b), ==, 0);
		CHECK(a.present & b.present & (1u << forks));
		CHECK_INT(b.v[forks] - a.v[forks], >=, 5);
	}
	spike_watch_free(w);

	CHECK(f && !f->exact);
	test_exact();

	CHECK_INT(parse_table(P5_HEAD "\tfree sched:sched_process_fork stat:ctxt\n"), ==, 0);
	w = spike_watch_new();
	CHECK_INT(spike_watch_count(w), ==, 3);
	spike_watch_free(w);

	CHECK_INT(parse_many_free(PATHS_MAX_FREE - 3), ==, 0);
	w = spike_watch_new();
	CHECK_INT(spike_watch_count(w), ==, PATHS_MAX_FREE);
	spike_watch_free(w);
	log_set_max_level(LOG_CRIT);	/* the refusal's line */
	CHECK_INT(parse_many_free(PATHS_MAX_FREE - 2), ==, -EINVAL);
	log_set_max_level(LOG_INFO);
}

static void test_rule(void)
{
	struct feeder f = { spike_watch_new(), { .mono_ns = 1000 * S } };
	double base[SPIKE_MAX_COUNTERS] = {}, r[SPIKE_MAX_COUNTERS];
	struct spike_hit hit = {};
	int spikes = 0, ctxt, tlb, act;

	CHECK(f.w);
	if (!f.w)
		return;
	/* the shipped table's three: P1's, P3's and P4's */
	CHECK_INT(spike_watch_count(f.w), ==, 3);
	ctxt = counter(f.w, "ctxt");
	tlb = counter(f.w, "TLB");
	act = counter(f.w, "pgactivate");
	if (ctxt < 0 || tlb < 0 || act < 0)
		goto out;
	base[ctxt] = 2000;
	base[tlb] = 100;
	base[act] = 50;
	/* The first reading has no rate; a storm in the first readings is
	 * not judged: no history yet. */
	memcpy(r, base, sizeof(r));
	r[ctxt] = 1e7;
	for (int i = 0; i <= SPIKE_MIN_HISTORY; i++)
		spikes += feed(&f, i < 2 ? base : r, 1, 8, 1000, &hit) == 1;
	CHECK_INT(spikes, ==, 0);
	CHECK(spike_watch_ready(f.w));
	/* A noisy steady baseline, long enough to flush the storm out of
	 * the median: nothing (+-50 %, within the factor 8). */
	for (int i = 0; i < 3 * SPIKE_HISTORY; i++) {
		for (int c = 0; c < SPIKE_MAX_COUNTERS; c++)
			r[c] = base[c] * (i % 3 == 0 ? 1.5 : i % 3 == 1 ? 0.5 : 1);
		spikes += feed(&f, r, 1, 8, 1000, &hit) == 1;
	}
	CHECK_INT(spikes, ==, 0);

	/* Under the floor: TLB shootdowns 100/s -> 1500/s is 15x the median
	 * but under 1000/s per CPU on 2 CPUs. */
	memcpy(r, base, sizeof(r));
	r[tlb] = 1500;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);
	/* Over the floor, under the factor: ctxt 2000/s -> 12000/s is 6x. */
	memcpy(r, base, sizeof(r));
	r[ctxt] = 12000;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);
	/* Both: TLB 100/s -> 50000/s, 500x its median, over 2000/s. */
	memcpy(r, base, sizeof(r));
	r[tlb] = 50000;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 1);
	CHECK_INT(hit.counter, ==, tlb);
	CHECK(hit.rate > 49000 && hit.rate < 51000);
	CHECK(hit.median > 50 && hit.median < 150);
	CHECK_STR(spike_counter_name(f.w, hit.counter), "TLB");
	/* The rate is per second of the reading's own span: a late reading
	 * (3 s) of the baseline is no spike. */
	CHECK_INT(feed(&f, base, 3, 8, 1000, &hit), ==, 0);
	/* factor 0: off. */
	memcpy(r, base, sizeof(r));
	r[ctxt] = 1e7;
	CHECK_INT(feed(&f, r, 1, 0, 1000, &hit), ==, 0);

	/* Two counters at once: the one furthest above its limit is named. */
	memcpy(r, base, sizeof(r));
	r[ctxt] = 1e6;		/* 500x */
	r[act] = 1e6;	/* 20000x */
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 1);
	CHECK_INT(hit.counter, ==, act);

	/* A storm that lasts: spikes at first, then it is the baseline. */
	memcpy(r, base, sizeof(r));
	r[ctxt] = 1e6;
	spikes = 0;
	for (int i = 0; i < SPIKE_HISTORY; i++)
		spikes += feed(&f, r, 1, 8, 1000, &hit) == 1;
	CHECK_INT(spikes, >=, 1);
	CHECK_INT(spikes, <=, SPIKE_HISTORY / 2 + 1);
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);

	/* A reading with ctxt only (the dearer files are read less often):
	 * TLB's rate at its next reading spans both, so no spike from the
	 * gap, and ctxt is judged alone meanwhile. */
	memcpy(r, base, sizeof(r));
	r[ctxt] = 1e6;
	for (int i = 0; i < SPIKE_HISTORY; i++)	/* ctxt's storm becomes its baseline */
		feed(&f, r, 1, 8, 1000, &hit);
	f.r.mono_ns += 3 * S;
	f.r.v[ctxt] += 3000000;
	f.r.present = 1u << ctxt;
	CHECK_INT(spike_watch_feed(f.w, &f.r, 8, 1000, 2, &hit), ==, 0);
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 0);
	/* ... and a TLB storm after it is still seen, named. */
	r[tlb] = 1e5;
	CHECK_INT(feed(&f, r, 1, 8, 1000, &hit), ==, 1);
	CHECK_INT(hit.counter, ==, tlb);

	/* A reading from the past is refused. */
	f.r.mono_ns -= 10 * S;
	CHECK_INT(spike_watch_feed(f.w, &f.r, 8, 1000, 2, &hit), ==, -EINVAL);
out:
	spike_watch_free(f.w);
	spike_watch_free(NULL);
}

/* This machine's files: ctxt is read every time and grows, pgactivate
 * every SPIKE_SLOW_EVERY readings. */
static void test_read(void)
{
	struct spike_watch *w = spike_watch_new();
	struct spike_reading a, b;
	int ctxt, act;

	CHECK(w);
	if (!w)
		return;
	ctxt = counter(w, "ctxt");
	act = counter(w, "pgactivate");
	if (ctxt < 0 || act < 0)
		goto out;
	CHECK_INT(spike_watch_read(w, &a), ==, 0);
	CHECK(a.present & (1u << ctxt));
	CHECK(a.present & (1u << act));
	usleep(20000);	/* at least this process's own switch */
	CHECK_INT(spike_watch_read(w, &b), ==, 0);
	CHECK(b.v[ctxt] > a.v[ctxt]);
	CHECK(b.mono_ns > a.mono_ns);
	/* the dearer files every SPIKE_SLOW_EVERY readings only */
	CHECK(!(b.present & (1u << act)));
	for (int i = 2; i < SPIKE_SLOW_EVERY; i++)
		CHECK_INT(spike_watch_read(w, &b), ==, 0);
	CHECK_INT(spike_watch_read(w, &b), ==, 0);
	CHECK(b.present & (1u << act));
out:
	spike_watch_free(w);
}

int main(void)
{
	int fd = mkstemp(table_path);

	if (fd < 0)
		SKIP("cannot create %s", table_path);
	close(fd);
	RUN(test_free_refused);	/* first: paths_load() loads the table once */
	RUN(test_fifth_path);
	/* the shipped table's counters from here on */
	CHECK_INT(paths_parse((const char *)paths_conf, paths_conf_len, "paths.conf"), ==, 0);
	RUN(test_rule);
	RUN(test_read);
	unlink(table_path);
	return test_exit();
}
