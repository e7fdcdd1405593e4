/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_IMPORT_H
#define MMHITM_IMPORT_H

/*
 * The import of a perf.data file, without the command line: `mmhitm
 * import` and the fuzz-import target drive the same steps.
 *
 *   import_init()       over an opened perf.data (the import owns it)
 *   import_scan()       pass 1: validate, count, find the time range
 *   import_place()      the intervals, in wall time
 *   import_aggregate()  pass 2: the memory samples per interval
 *   import_store()      the boot, its intervals and lines (caller's txn)
 *   import_done()       frees everything, also after a failed step
 */

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "mem-agg.h"
#include "perf-data.h"

/* A recording split into more intervals than this is a wrong --interval. */
#define IMPORT_MAX_INTERVALS	100000
/* Memory samples further than this from every other one are corrupt
 * times, not a recording (ns; --max-gap). */
#define IMPORT_MAX_GAP_NS	(3600LL * 1000000000LL)

struct import_event_count {
	uint64_t samples, kernel, user;
};

struct import_interval {
	struct mem_agg *agg;
	struct sampling_stats st;
	int64_t start_ns, end_ns;
};

/* One group of memory-sample times no further apart than max_gap_ns. */
struct import_time_bucket {
	uint64_t key;			/* time / max_gap_ns */
	uint64_t n, min, max;
};

struct import {
	/* set by the caller before import_scan() */
	const char *path;		/* for messages */
	int64_t mtime_ns;		/* the file's: wall time without CLOCK_DATA */
	int64_t interval_ns;
	int64_t max_gap_ns;		/* 0: every sample time counts */
	struct mem_agg_config agg_cfg;

	struct perf_data *pd;
	struct import_event_count *ev;
	uint64_t unknown, lost, throttled, auxtrace, hash;
	bool have_time;
	uint64_t t_first, t_last;	/* perf clock, of the samples kept */
	uint64_t n_timed;		/* memory samples with a time */
	uint64_t outliers;		/* of them, dropped for their time */
	uint64_t outlier_first, outlier_last;	/* their times' range */
	struct import_time_bucket *buckets;
	size_t n_buckets, cap_buckets;
	int64_t wall_offset;		/* wall ns = perf ns + wall_offset */
	const char *time_source;
	struct import_interval *iv;
	size_t n_iv;
};

/* Takes pd; im's caller fields must be set. Returns 0 or -ENOMEM (logged). */
int import_init(struct import *im, struct perf_data *pd);
int import_scan(struct import *im);
int import_place(struct import *im);
int import_aggregate(struct import *im);
/* Writes the pseudo-boot into db (inside the caller's transaction). */
int import_store(struct import *im, sqlite3 *db, const char *hostname, const char *release,
		 const char *btf_path, int64_t *ret_boot_id);
void import_done(struct import *im);
/* The host an import files its boot under, by machine id: the host of
 * that name if there is exactly one, else one of its own
 * ("import:<hostname>"). Also for trace.dat imports (import-tracedat.c). */
int import_machine_id(sqlite3 *db, const char *hostname, char *machine_id, size_t size);

/* The memory events' names, comma-separated; caller frees. */
char *import_memory_event_names(const struct import *im);
bool import_is_memory_event(const struct perf_data_event *e);

#endif
