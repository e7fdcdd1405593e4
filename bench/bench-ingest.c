// SPDX-License-Identifier: GPL-2.0
/*
 * bench-ingest: how many rows per second mmhitmd's interval flush writes.
 *
 * Drives the daemon's own recorder (daemon/recorder.c) against a fresh
 * database: the counted tracepoints the daemon counts (when we may open
 * them), /proc snapshots, and before every flush a batch of synthetic
 * learned objects (page pairs, contended locks, mm_structs), so that each
 * transaction carries as many rows as a busy host's would. Only
 * recorder_flush() is timed; rows are counted in the database afterwards.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../daemon/boot.h"
#include "../daemon/counters.h"
#include "events.h"
#include "learn.h"
#include "../daemon/recorder.h"
#include "../load/load.h"
#include "db.h"
#include "log.h"
#include "util.h"

#define INGEST_DEFAULT_FLUSHES	100
#define INGEST_DEFAULT_LEARNED	1000	/* learned objects per flush */
#define INGEST_INTERVAL_NS	(60 * NSEC_PER_SEC)	/* mmhitmd's default */

/* What mmhitmd counts by default (daemon/setup.c). */
static const char *const counted[] = {
	"sched:sched_switch", "pagemap:mm_lru_activate", "pagemap:mm_lru_insertion",
	"tlb:tlb_flush", "lock:contention_begin", "vmscan:*",
};

/* Synthetic processes: every tid is its own tgid, alive, named "bench". */
static int fake_tgid_of(void *ctx, int32_t tid, int32_t *ret_tgid, bool *ret_kthread)
{
	*ret_tgid = tid;
	*ret_kthread = false;
	return 0;
}

static int fake_comm_of(void *ctx, int32_t tgid, char *buf)
{
	snprintf(buf, 16, "bench-%d", (int)(tgid % 1000));
	return 0;
}

static const struct learn_proc fake_proc = { fake_tgid_of, fake_comm_of, NULL };

/* Half new page pairs, a quarter new locks, a quarter new mm_structs. */
static void feed(struct learner *l, unsigned int flush, unsigned int n, int64_t ts)
{
	static const uint64_t kbase = 0xffff888100000000ULL;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t k = (uint64_t)flush * n + i;
		struct learn_event ev = { .ts_ns = ts, .pid = 1000 + (int32_t)(k % 30000) };

		switch (i % 4) {
		case 0:
		case 1:
			ev.type = LEARN_PAGE;
			ev.arg = k;
			ev.addr = 0xffffea0000000000ULL + k * 64;
			break;
		case 2:
			ev.type = LEARN_LOCK;
			ev.addr = kbase + k * 256;
			ev.arg = 2;
			ev.has_arg = true;
			break;
		default:
			ev.type = LEARN_MMAP_LOCK;
			ev.addr = kbase + 0x10000000 + k * 1024;
			ev.arg = 1;
			ev.has_arg = true;
			ev.text = "/";
			break;
		}
		learner_feed(l, &ev);
	}
}

static int count_rows(sqlite3 *db, int64_t *ret)
{
	static const char *const tables[] = {
		"intervals", "event_counts", "vmstat_deltas", "lru_gen_progress",
		"page_pairs", "lock_objects", "mm_objects",
	};
	int64_t total = 0;

	for (size_t i = 0; i < ARRAY_SIZE(tables); i++) {
		char sql[96];
		int64_t n;
		int r;

		snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i]);
		r = db_query_int(db, &n, sql);
		if (r < 0)
			return r;
		total += n;
	}
	*ret = total;
	return 0;
}

/* The file and its write-ahead log: WAL mode keeps recent pages in the latter. */
static uint64_t db_bytes(const char *path)
{
	uint64_t total = 0;
	struct stat sb;
	char p[300];

	if (stat(path, &sb) == 0)
		total += sb.st_size;
	snprintf(p, sizeof(p), "%s-wal", path);
	if (stat(p, &sb) == 0)
		total += sb.st_size;
	return total;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static void help(void)
{
	printf("Usage: bench-ingest [--flushes N] [--learned N] [--dir DIR] [--json]\n\n"
	       "Times mmhitmd's interval flush (one transaction per interval) against a\n"
	       "fresh database in DIR (default /var/tmp): N flushes (default %d), each\n"
	       "with N learned objects (default %d) besides the counted events and\n"
	       "/proc deltas. Prints rows/s over the flushes' own time.\n",
	       INGEST_DEFAULT_FLUSHES, INGEST_DEFAULT_LEARNED);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "flushes", required_argument, NULL, 'f' },
		{ "learned", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	uint64_t flushes = INGEST_DEFAULT_FLUSHES, learned = INGEST_DEFAULT_LEARNED;
	const char *dir = "/var/tmp";
	struct event_status_list status = {};
	struct learn_limits lim;
	struct boot_info boot;
	struct recorder *rec = NULL;
	struct counters *c = NULL;
	struct learner *l = NULL;
	struct load_report *rep = NULL;
	int64_t *ns = NULL, boot_id = 0, rows = 0, total_ns = 0, wall;
	sqlite3 *db = NULL;
	char path[256];
	bool json = false;
	int r, opt;

	log_setup("bench-ingest");
	while ((opt = getopt_long(argc, argv, "f:l:d:jh", options, NULL)) >= 0) {
		switch (opt) {
		case 'f':
			if (parse_u64(optarg, &flushes) < 0 || !flushes || flushes > 1000000) {
				log_error("invalid --flushes '%s'", optarg);
				return 2;
			}
			break;
		case 'l':
			if (parse_u64(optarg, &learned) < 0 || learned > 10000000) {
				log_error("invalid --learned '%s'", optarg);
				return 2;
			}
			break;
		case 'd':
			dir = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			help();
			return 0;
		default:
			return 2;
		}
	}

	snprintf(path, sizeof(path), "%s/mmhitm-bench-ingest-%d.db", dir, (int)getpid());
	ns = calloc(flushes, sizeof(*ns));
	c = counters_new(true);
	lim = (struct learn_limits){ .max_page_pairs = flushes * learned, .max_locks = flushes * learned };
	l = learner_new(&lim, &fake_proc);
	rep = load_report_new();
	if (!ns || !c || !l || !rep) {
		r = log_oom();
		goto out;
	}
	/* Counting needs root and tracefs; without them the rest still runs. */
	for (size_t i = 0; tracefs_dir() && i < ARRAY_SIZE(counted); i++) {
		r = counters_add(c, counted[i], &status);
		if (r < 0)
			goto out;
	}
	if (!counters_count(c))
		log_warning("No tracepoint can be counted here (root? tracefs?): "
			    "the flushes carry no event counts, continuing");

	r = db_open(path, 0, &db);
	if (r < 0)
		goto out;
	r = boot_info_collect(&boot);
	if (r < 0) {
		log_error_errno(r, "Failed to describe this boot: %m");
		goto out;
	}
	wall = now_ns(CLOCK_REALTIME);
	r = db_begin(db);
	if (r >= 0)
		r = boot_store(db, &boot, wall, &boot_id);
	if (r >= 0)
		r = db_commit(db);
	if (r < 0)
		goto out;

	r = recorder_new(&(struct recorder_config){ .db = db, .boot_id = boot_id,
						    .interval_ns = INGEST_INTERVAL_NS, .counters = c,
						    .learner = l }, wall, &rec);
	if (r < 0)
		goto out;

	for (uint64_t k = 0; k < flushes; k++) {
		int64_t t0, t1;

		/* Whole intervals of simulated time, so none is "partial". */
		wall += INGEST_INTERVAL_NS;
		feed(l, k, learned, wall - 1);
		t0 = now_ns(CLOCK_MONOTONIC);
		r = recorder_flush(rec, wall, false);
		t1 = now_ns(CLOCK_MONOTONIC);
		if (r < 0)
			goto out;
		ns[k] = t1 - t0;
		total_ns += ns[k];
	}

	r = count_rows(db, &rows);
	if (r < 0)
		goto out;
	qsort(ns, flushes, sizeof(*ns), cmp_i64);
	load_report_add_str(rep, "benchmark", "benchmark", "ingest (mmhitmd interval flush)");
	load_report_add_u64(rep, "flushes", "flushes", flushes, NULL);
	load_report_add_u64(rep, "learned_per_flush", "learned objects per flush", learned, NULL);
	load_report_add_u64(rep, "counted_events", "counted tracepoints", counters_count(c), NULL);
	load_report_add_u64(rep, "rows", "rows written", rows, NULL);
	load_report_add_double(rep, "rows_per_flush", "rows per flush", (double)rows / flushes, NULL);
	load_report_add_double(rep, "flush_ms_median", "flush, median", ns[flushes / 2] / 1e6, "ms");
	load_report_add_double(rep, "flush_ms_p95", "flush, 95th percentile",
			       ns[(flushes * 95 - 1) / 100] / 1e6, "ms");
	load_report_add_double(rep, "flush_ms_max", "flush, slowest", ns[flushes - 1] / 1e6, "ms");
	load_report_add_u64(rep, "db_bytes", "database size (with its WAL)", db_bytes(path), "B");
	load_report_add_metric(rep, "rows_per_s", "ingest rate",
			       total_ns ? rows / (total_ns / 1e9) : NAN, "rows/s", true);
	r = load_report_print(rep, stdout, json);
	if (r < 0)
		log_error_errno(r, "Failed to print the result: %m");
out:
	recorder_free(rec);
	db_close(db);
	for (const char *sfx = ""; sfx; sfx = !*sfx ? "-wal" : sfx[1] == 'w' ? "-shm" : NULL) {
		char p[300];

		snprintf(p, sizeof(p), "%s%s", path, sfx);
		unlink(p);
	}
	event_status_list_done(&status);
	load_report_free(rep);
	learner_free(l);
	counters_free(c);
	free(ns);
	return r < 0 ? 1 : 0;
}
