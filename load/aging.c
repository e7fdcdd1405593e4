// SPDX-License-Identifier: GPL-2.0
/*
 * aging (P2): N processes map one tmpfs file (huge=never) shared, and in
 * lock-step rounds every process reads every page, then the main process
 * runs one MGLRU aging pass on their memcg through /sys/kernel/debug/lru_gen
 * ("+ memcg_id node max_seq 1 1" for each node). With force_scan the pass
 * walks every mm of the memcg: walk_pte_range() finds the PTEs young and
 * folio_update_gen() cmpxchg()es each shared folio's flags, once per
 * mapping process. The result is the wall time of the pass, median of the
 * rounds.
 *
 * Everything it sets up is private to it: a mount namespace of its own
 * holds the tmpfs (and debugfs, when the host has not mounted it), the
 * file is unlinked at once, so an exit of any kind leaves nothing behind.
 * The one global thing, turning MGLRU on with --enable-lru-gen, is undone
 * at the end, also after Ctrl-C (not after SIGKILL).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>

#include "load.h"
#include "log.h"
#include "lru-gen.h"
#include "util.h"
#include "workloads.h"

/* The seed benchmark's file; smaller hosts get a quarter of what is available. */
#define AGING_MAX_DEFAULT_BYTES	(2ULL << 30)
#define AGING_MIN_BYTES		(1ULL << 20)
/* Commands the kernel ignored in a row (max_seq moved under us) before giving up. */
#define AGING_MAX_STALE_PASSES	100

enum { OPT_SIZE = 256, OPT_ENABLE_LRU_GEN };
enum { AUX_ROUNDS };

struct aging_state {
	int fd;				/* the tmpfs file, already unlinked */
	uint64_t size;
	size_t page;
	unsigned int memcg_id;
	char *memcg_path;
	size_t nr_nodes;
	unsigned int caps;		/* lru_gen/enabled during the run */
	unsigned int saved_caps;	/* ... before it, to restore */
	bool restore_caps;
	int64_t *pass_ns;		/* each aging pass that created a generation */
	size_t nr_passes, alloc_passes;
	uint64_t stale_passes;		/* commands the kernel ignored */
};

static int read_caps(unsigned int *ret)
{
	char line[64];
	uint64_t caps;
	int r;

	r = read_line(LRU_GEN_SYSFS_ENABLED, line, sizeof(line));
	if (r < 0)
		return r;
	r = parse_u64(strstrip(line), &caps);	/* "0x0007" */
	if (r < 0 || caps > UINT32_MAX)
		return -EINVAL;
	*ret = caps;
	return 0;
}

/*
 * 0 when MGLRU is usable (turning it on if enable is set), else
 * LOAD_EXIT_UNSUPPORTED or LOAD_EXIT_DISABLED, or -errno. Logs why.
 */
static int aging_check_kernel(bool enable, struct aging_state *st)
{
	unsigned int caps;
	int r;

	r = read_caps(&caps);
	if (r == -ENOENT) {
		log_error("aging: this kernel has no MGLRU (CONFIG_LRU_GEN is not set; %s is "
			  "missing), so there is no aging walk to reproduce", LRU_GEN_SYSFS_ENABLED);
		return LOAD_EXIT_UNSUPPORTED;
	}
	if (r < 0)
		return log_error_errno(r, "aging: failed to read %s: %m", LRU_GEN_SYSFS_ENABLED);
	st->saved_caps = st->caps = caps;

	if (!(caps & LRU_GEN_CAP_CORE)) {
		if (!enable) {
			log_error("aging: MGLRU is built in but off (%s is 0x%04x); rerun with "
				  "--enable-lru-gen (restored afterwards), or 'echo y > %s'",
				  LRU_GEN_SYSFS_ENABLED, caps, LRU_GEN_SYSFS_ENABLED);
			return LOAD_EXIT_DISABLED;
		}
		r = write_file(LRU_GEN_SYSFS_ENABLED, "y");
		if (r < 0)
			return log_error_errno(r, "aging: failed to turn MGLRU on: %m");
		st->restore_caps = true;
		r = read_caps(&st->caps);
		if (r < 0)
			return log_error_errno(r, "aging: failed to read %s: %m", LRU_GEN_SYSFS_ENABLED);
		log_info("aging: turned MGLRU on (0x%04x -> 0x%04x) for this run",
			 st->saved_caps, st->caps);
	}
	if (!(st->caps & LRU_GEN_CAP_MM_WALK))
		log_warning("aging: MGLRU's page-table walk is off (%s is 0x%04x): aging passes "
			    "will not walk the mms, and P2's walk path is not exercised",
			    LRU_GEN_SYSFS_ENABLED, st->caps);
	return 0;
}

static void aging_restore_caps(struct aging_state *st)
{
	char buf[16];
	int r;

	if (!st->restore_caps)
		return;
	snprintf(buf, sizeof(buf), "0x%04x", st->saved_caps);
	r = write_file(LRU_GEN_SYSFS_ENABLED, buf);
	if (r < 0)
		log_error_errno(r, "aging: failed to restore %s to %s: %m", LRU_GEN_SYSFS_ENABLED, buf);
	else
		log_debug("aging: restored %s to %s", LRU_GEN_SYSFS_ENABLED, buf);
	st->restore_caps = false;
}

/* Our own mount namespace, with debugfs in it if the host lacks it. */
static int aging_setup_namespace(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return log_error_errno(errno, "aging: failed to create a mount namespace: %m");
	/* Nothing we mount may propagate to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return log_error_errno(errno, "aging: failed to make mounts private: %m");
	if (access(LRU_GEN_DEBUGFS, F_OK) == 0)
		return 0;
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) < 0)
		return log_error_errno(errno, "aging: %s is missing and mounting debugfs failed: %m",
				       LRU_GEN_DEBUGFS);
	log_debug("aging: mounted debugfs in our mount namespace");
	if (access(LRU_GEN_DEBUGFS, F_OK) < 0)
		return log_error_errno(errno, "aging: %s: %m", LRU_GEN_DEBUGFS);
	return 0;
}

/* The tmpfs file, every page allocated (and charged to our memcg) up front. */
static int aging_setup_file(struct aging_state *st)
{
	static const char *const mount_points[] = { "/tmp", "/mnt", "/run" };
	const char *where = NULL;
	char opts[96], path[64];
	int r;

	/* One page of slack: tmpfs size= is a hard limit. */
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",huge=never,mode=0700", st->size + st->page);
	for (size_t i = 0; i < ARRAY_SIZE(mount_points) && !where; i++)
		if (mount("mmhitm-load", mount_points[i], "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  opts) == 0)
			where = mount_points[i];
	if (!where)
		return log_error_errno(errno, "aging: failed to mount a tmpfs (%s): %m", opts);

	snprintf(path, sizeof(path), "%s/mmhitm-load-aging", where);
	st->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (st->fd < 0)
		r = log_error_errno(errno, "aging: failed to create %s: %m", path);
	else if (unlink(path) < 0)
		r = log_error_errno(errno, "aging: failed to unlink %s: %m", path);
	else
		r = 0;
	/* The open file keeps the tmpfs alive; nothing stays shadowed. */
	if (umount2(where, MNT_DETACH) < 0 && r == 0)
		r = log_error_errno(errno, "aging: failed to detach the tmpfs from %s: %m", where);
	if (r < 0)
		return r;
	if (fallocate(st->fd, 0, 0, st->size) < 0)
		return log_error_errno(errno, "aging: failed to allocate %" PRIu64 " bytes of tmpfs: %m",
				       st->size);
	log_debug("aging: %" PRIu64 " bytes of tmpfs (huge=never) allocated", st->size);
	return 0;
}

static int lru_gen_read(struct lru_gen_state **ret)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n;
	int r;

	n = read_file(LRU_GEN_DEBUGFS, &text);
	if (n < 0)
		return log_error_errno(n, "aging: failed to read %s: %m", LRU_GEN_DEBUGFS);
	r = lru_gen_state_parse(text, ret);
	if (r < 0)
		return log_error_errno(r, "aging: failed to parse %s: %m", LRU_GEN_DEBUGFS);
	return 0;
}

static int aging_find_memcg(struct aging_state *st)
{
	_cleanup_free_ char *cgroups = NULL, *path = NULL;
	struct lru_gen_state *lg = NULL;
	const struct lru_gen_memcg *m;
	ssize_t n;
	int r;

	n = read_file("/proc/self/cgroup", &cgroups);
	if (n < 0)
		return log_error_errno(n, "aging: failed to read /proc/self/cgroup: %m");
	r = cgroup_memory_path(cgroups, &path);
	if (r < 0)
		return log_error_errno(r, "aging: no memory cgroup in /proc/self/cgroup: %m");
	r = lru_gen_read(&lg);
	if (r < 0)
		return r;
	m = lru_gen_state_find_path(lg, path);
	if (!m) {
		r = log_error_errno(ENOENT, "aging: cgroup %s has no memcg in %s "
				    "(a cgroup namespace hides the real path?)", path, LRU_GEN_DEBUGFS);
	} else if (!(st->memcg_path = strdup(m->path))) {
		r = log_oom();
	} else {
		st->memcg_id = m->id;
		st->nr_nodes = m->nr_nodes;
		log_debug("aging: cgroup %s -> memcg %u (%s), %zu node(s)",
			  path, m->id, m->path, m->nr_nodes);
	}
	lru_gen_state_free(lg);
	return r;
}

/*
 * One aging pass: "+ memcg node max_seq 1 1" for every node of our memcg,
 * timed. *ret_ns is -1 when the kernel ignored it (max_seq moved between
 * our read and our write, e.g. kswapd aged first).
 */
static int aging_pass(struct aging_state *st, int64_t *ret_ns)
{
	struct lru_gen_state *before = NULL, *after = NULL;
	const struct lru_gen_memcg *mb, *ma;
	_cleanup_free_ char *cmds = NULL;
	_cleanup_close_ int fd = -1;
	size_t cmd_size = 64;
	int64_t t0, t1;
	int r;

	r = lru_gen_read(&before);
	if (r < 0)
		return r;
	mb = lru_gen_state_find_id(before, st->memcg_id);
	if (!mb || mb->nr_nodes == 0) {
		r = log_error_errno(ENOENT, "aging: memcg %u is gone from %s", st->memcg_id,
				    LRU_GEN_DEBUGFS);
		goto out;
	}
	cmds = calloc(mb->nr_nodes, cmd_size);
	if (!cmds) {
		r = log_oom();
		goto out;
	}
	for (size_t i = 0; i < mb->nr_nodes; i++) {
		r = lru_gen_aging_command(cmds + i * cmd_size, cmd_size, st->memcg_id,
					  mb->nodes[i].nid, mb->nodes[i].max_seq);
		if (r < 0)
			goto out;
	}
	fd = open(LRU_GEN_DEBUGFS, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		r = log_error_errno(errno, "aging: failed to open %s: %m", LRU_GEN_DEBUGFS);
		goto out;
	}

	t0 = now_ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < mb->nr_nodes; i++) {
		const char *cmd = cmds + i * cmd_size;

		/* One command per write: the kernel runs it inside write(). */
		if (write(fd, cmd, strlen(cmd)) < 0) {
			r = log_error_errno(errno, "aging: writing '%.*s' to %s failed: %m",
					    (int)strcspn(cmd, "\n"), cmd, LRU_GEN_DEBUGFS);
			goto out;
		}
	}
	t1 = now_ns(CLOCK_MONOTONIC);

	r = lru_gen_read(&after);
	if (r < 0)
		goto out;
	ma = lru_gen_state_find_id(after, st->memcg_id);
	*ret_ns = t1 - t0;
	for (size_t i = 0; i < mb->nr_nodes; i++) {
		const struct lru_gen_node *nb = &mb->nodes[i], *na = NULL;

		for (size_t k = 0; ma && k < ma->nr_nodes; k++)
			if (ma->nodes[k].nid == nb->nid)
				na = &ma->nodes[k];
		if (!na || na->max_seq <= nb->max_seq) {
			log_debug("aging: node %d max_seq %" PRIu64 " did not advance, ignored pass",
				  nb->nid, nb->max_seq);
			*ret_ns = -1;
		}
	}
	r = 0;
out:
	lru_gen_state_free(before);
	lru_gen_state_free(after);
	return r;
}

static int aging_work(struct load_job *job, struct load_worker *w)
{
	const struct aging_state *st = job->data;
	uint32_t seen = 0, phase;
	const volatile char *map;

	map = mmap(NULL, st->size, PROT_READ, MAP_SHARED, st->fd, 0);
	if (map == MAP_FAILED)
		return log_error_errno(errno, "aging: worker %u: mmap failed: %m", w->index);
	while ((phase = load_worker_phase_wait(job, seen))) {
		seen = phase;
		/* One read per page sets the PTE's accessed bit the pass looks for. */
		for (uint64_t off = 0; off < st->size; off += st->page)
			(void)map[off];
		load_worker_count(w, w->ops + st->size / st->page);
		w->aux[AUX_ROUNDS]++;
		load_worker_phase_done(job);
	}
	munmap((void *)(uintptr_t)map, st->size);
	return 0;
}

static int aging_drive(struct load_job *job)
{
	struct aging_state *st = job->data;
	int64_t deadline = 0;
	uint64_t stale_in_a_row = 0;
	int r;

	if (job->opts->duration_ns)
		deadline = job->start_ns + job->opts->duration_ns;
	/* Every round is started whole: all read, then one pass. */
	for (uint32_t phase = 1;; phase++) {
		int64_t ns = -1;

		if (job->opts->loops && st->nr_passes >= job->opts->loops)
			return 0;
		if (phase > 1 && deadline && now_ns(CLOCK_MONOTONIC) >= deadline)
			return 0;
		load_job_phase_begin(job, phase);
		r = load_job_phase_wait(job, phase, 0);
		if (r < 0)
			return r;
		r = aging_pass(st, &ns);
		if (r < 0)
			return r;
		if (ns < 0) {
			st->stale_passes++;
			if (++stale_in_a_row >= AGING_MAX_STALE_PASSES)
				return log_error_errno(EAGAIN, "aging: the kernel ignored %d aging "
						       "commands in a row", AGING_MAX_STALE_PASSES);
			continue;
		}
		stale_in_a_row = 0;
		r = grow_array((void **)&st->pass_ns, &st->alloc_passes, sizeof(*st->pass_ns),
			       st->nr_passes + 1);
		if (r < 0)
			return log_oom();
		st->pass_ns[st->nr_passes++] = ns;
	}
}

static uint64_t default_size(size_t page)
{
	_cleanup_free_ char *meminfo = NULL;
	uint64_t avail_kb = 0, size;
	const char *p;

	if (read_file("/proc/meminfo", &meminfo) >= 0 &&
	    (p = strstr(meminfo, "MemAvailable:")))
		sscanf(p, "MemAvailable: %" SCNu64, &avail_kb);
	size = avail_kb * 1024 / 4;
	if (size > AGING_MAX_DEFAULT_BYTES || size == 0)
		size = size ? AGING_MAX_DEFAULT_BYTES : AGING_MIN_BYTES;
	return size / page * page;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int aging_report(struct load_report *rep, const struct load_job *job)
{
	const struct aging_state *st = job->data;
	_cleanup_free_ int64_t *sorted = NULL;
	double median = NAN, min = NAN, max = NAN;
	size_t n = st->nr_passes;
	char caps[16];

	if (n) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return log_oom();
		memcpy(sorted, st->pass_ns, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_i64);
		median = (n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0) / 1e6;
		min = sorted[0] / 1e6;
		max = sorted[n - 1] / 1e6;
	}
	snprintf(caps, sizeof(caps), "0x%04x", st->caps);

	load_report_add_job(rep, job);
	load_report_add_u64(rep, "file_bytes", "shared tmpfs file", st->size, "B");
	load_report_add_u64(rep, "pages_read", "pages read (all processes)", load_job_sum_ops(job), NULL);
	load_report_add_u64(rep, "memcg_id", "memcg id", st->memcg_id, NULL);
	load_report_add_str(rep, "memcg_path", "memcg", st->memcg_path);
	load_report_add_u64(rep, "nodes", "nodes aged per pass", st->nr_nodes, NULL);
	load_report_add_str(rep, "lru_gen_enabled", "lru_gen/enabled", caps);
	load_report_add_u64(rep, "passes", "aging passes", n, NULL);
	load_report_add_u64(rep, "stale_passes", "aging commands ignored", st->stale_passes, NULL);
	load_report_add_double(rep, "pass_ms_min", "fastest pass", min, "ms");
	load_report_add_double(rep, "pass_ms_max", "slowest pass", max, "ms");
	load_report_add_metric(rep, "aging_ms_per_pass", "aging pass, median", median, "ms", false);
	return 0;
}

void cmd_aging_help(void)
{
	printf("Usage: mmhitm-load aging [OPTIONS]\n\n"
	       "P2 (folio_update_gen() cmpxchg on shared folios in MGLRU's page-table walk):\n"
	       "processes map one tmpfs file (huge=never) shared; in each round every\n"
	       "process reads every page, then one aging pass walks their memcg:\n"
	       "\"+ memcg_id node max_seq 1 1\" to %s for every node.\n"
	       "Reports ms per aging pass, median of the rounds. Needs root,\n"
	       "CONFIG_LRU_GEN and MGLRU on.\n"
	       "The tmpfs lives in a private mount namespace and the file is unlinked\n"
	       "at once, so nothing is left behind. The pass walks every mm of the memcg\n"
	       "we run in: to keep other processes out of it, run in a cgroup of its own\n"
	       "(e.g. systemd-run --scope -p MemoryAccounting=yes mmhitm-load aging).\n\n"
	       "Options:\n"
	       "      --size=BYTES      file size (default: MemAvailable / 4, at most 2G)\n"
	       "      --enable-lru-gen  turn MGLRU on for the run if it is off, and restore\n"
	       "                        %s\n"
	       "                        afterwards (also after Ctrl-C)\n\n",
	       LRU_GEN_DEBUGFS, LRU_GEN_SYSFS_ENABLED);
	load_opts_help("procs", "processes (default: one per CPU in --cpus)");
	printf("\n--loops counts aging passes; --duration starts no new round after it, and\n"
	       "a round once started (reads, then the pass) is finished.\n"
	       "Exit status 3: this kernel has no CONFIG_LRU_GEN. Exit status 4: MGLRU is\n"
	       "off and --enable-lru-gen was not given.\n");
}

struct aging_args {
	uint64_t size;
	bool enable;
};

static int parse_extra(int opt, const char *arg, void *userdata)
{
	struct aging_args *a = userdata;

	switch (opt) {
	case OPT_SIZE:
		if (parse_size(arg, &a->size) < 0 || a->size < AGING_MIN_BYTES) {
			log_error("aging: --size wants at least 1M, not '%s'", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_ENABLE_LRU_GEN:
		a->enable = true;
		return 0;
	}
	return -EINVAL;
}

int cmd_aging(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "enable-lru-gen", no_argument, NULL, OPT_ENABLE_LRU_GEN },
		{}
	};
	struct aging_state st = { .fd = -1, .page = sysconf(_SC_PAGESIZE) };
	struct aging_args args = {};
	struct load_opts opts;
	struct load_job *job = NULL;
	int r;

	r = load_opts_parse(argc, argv, &opts, "procs", extra, parse_extra, &args, cmd_aging_help);
	if (r)
		return r == 1 ? LOAD_EXIT_OK : r;
	st.size = args.size ? args.size / st.page * st.page : default_size(st.page);

	/* Nothing is touched before we know the kernel can do it. */
	r = aging_check_kernel(args.enable, &st);
	if (r)
		goto out;
	r = aging_setup_namespace();
	if (r < 0)
		goto out;
	r = aging_setup_file(&st);
	if (r < 0)
		goto out;
	r = aging_find_memcg(&st);
	if (r < 0)
		goto out;

	job = load_job_new("aging", &opts, opts.workers ? opts.workers : opts.nr_cpus, 1, true);
	if (!job) {
		r = -ENOMEM;
		goto out;
	}
	job->data = &st;
	job->work = aging_work;
	job->drive = aging_drive;
	r = load_job_run_report(job, opts.json, aging_report);
out:
	aging_restore_caps(&st);
	if (st.fd >= 0)
		close(st.fd);
	free(st.memcg_path);
	free(st.pass_ns);
	load_job_free(job);
	load_opts_done(&opts);
	return r;
}
