/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_MEM_AGG_H
#define MMHITM_MEM_AGG_H

/*
 * Per-interval aggregation of memory samples, keyed by (cache line, offset
 * in the line, IP, kernel callchain), with one counter per perf c2c class
 * (mem-decode.h) and the load latency sum, and the writer that stores an
 * aggregate into sampling / callchains / mem_lines (schema/002-hitm.sql).
 */

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mem-decode.h"

struct mem_agg_config {
	unsigned int line_size;		/* bytes, a power of two: the host's, never assumed */
	bool keep_user;			/* also store user-space samples per line */
	unsigned int max_stack;		/* kernel callchain frames kept; 0: none */
	size_t max_entries;		/* distinct keys per interval; 0: the default */
};

/* One memory sample, as the sampler or the importer read it. */
struct mem_agg_sample {
	uint64_t ip, addr, data_src;
	uint64_t weight;		/* valid when has_weight */
	bool has_weight;
	bool kernel;			/* sampled in kernel mode (cpumode) */
	const uint64_t *callchain;	/* perf's, context markers included; may be NULL */
	uint64_t callchain_nr;
};

/* What a sampler did in an interval (a row of the sampling table). */
struct sampling_stats {
	int64_t active_ns;		/* time the events were enabled */
	uint64_t samples, samples_kernel, samples_user;
	uint64_t lost;			/* samples the kernel dropped */
	uint64_t throttled;		/* THROTTLE records */
};

struct mem_agg;

/* NULL (logged) on a bad line size or no memory. Caller frees with mem_agg_free(). */
struct mem_agg *mem_agg_new(const struct mem_agg_config *cfg);
void mem_agg_free(struct mem_agg *a);

/*
 * Adds one sample: decodes its data source as perf c2c does and counts it
 * under its key. User-space samples are dropped unless keep_user (the
 * caller counts them in its sampling_stats). Returns 1 when stored, 0 when
 * dropped (user, or the aggregate is full: mem_agg_dropped()), -ENOMEM.
 */
int mem_agg_add(struct mem_agg *a, const struct mem_agg_sample *s);

/* Distinct keys held, samples stored, samples refused because full. */
size_t mem_agg_entries(const struct mem_agg *a);
uint64_t mem_agg_stored(const struct mem_agg *a);
uint64_t mem_agg_dropped(const struct mem_agg *a);
/*
 * Calls fn for every kernel IP held (sample IPs and callchain frames, the
 * context markers skipped), possibly more than once for one IP; stops at
 * the first negative return and returns it.
 */
int mem_agg_for_each_kernel_ip(const struct mem_agg *a, int (*fn)(uint64_t ip, void *ctx), void *ctx);

/* The per-class totals over everything stored. */
void mem_agg_totals(const struct mem_agg *a, struct mem_stats *ret);

/* Empties the aggregate for the next interval (keeps its memory). */
void mem_agg_reset(struct mem_agg *a);

/*
 * Writes the aggregate for interval_id of boot_id: one sampling row (st
 * and pmu_events, which may be NULL; the dropped count added), the
 * callchains it uses (interned per boot) and its mem_lines rows. Rows
 * already there for the interval are added to, not replaced. Runs inside
 * the caller's transaction and does not reset the aggregate. Logs errors.
 */
int mem_agg_write(struct mem_agg *a, sqlite3 *db, int64_t boot_id, int64_t interval_id,
		  const char *pmu_events, const struct sampling_stats *st);

/*
 * The host's cache line size: sysconf(_SC_LEVEL1_DCACHE_LINESIZE), else
 * the coherency_line_size of CPU 0's level-1 data cache in sysfs. With
 * sysfs_root (tests) only <sysfs_root>/devices/system/cpu/... is read.
 * Returns 0 or -ENOENT (logged by the caller: there is no good guess).
 */
int mem_host_line_size(const char *sysfs_root, unsigned int *ret);

#endif
