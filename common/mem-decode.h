/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_MEM_DECODE_H
#define MMHITM_MEM_DECODE_H

/*
 * perf_mem_data_src (include/uapi/linux/perf_event.h) into the classes of
 * perf c2c, counted exactly as tools/perf/util/mem-events.c:
 * c2c_decode_stats() (Linux 6.12) counts them. The class names are the
 * fields of perf's struct c2c_stats (tools/perf/util/mem-events.h) and the
 * columns of mem_lines (schema/002-hitm.sql).
 *
 * Not counted: c2c's "nomap" (no map for the data or code address), which
 * needs perf's view of the process maps; we count every sample instead.
 */

#include <stdint.h>

#define MEM_CLASSES(X)							\
	X(loads)	/* c2c_stats.load */				\
	X(stores)	/* c2c_stats.store */				\
	X(locks)							\
	X(lcl_hitm) X(rmt_hitm) X(lcl_peer) X(rmt_peer)			\
	X(ld_fbhit) X(ld_l1hit) X(ld_l2hit) X(ld_llchit)		\
	X(rmt_hit) X(lcl_dram) X(rmt_dram) X(ld_excl) X(ld_shared)	\
	X(ld_uncache) X(ld_io) X(ld_miss) X(ld_noadrs)			\
	X(st_l1hit) X(st_l1miss) X(st_na) X(st_uncache) X(st_noadrs)	\
	X(blk_data) X(blk_addr) X(noparse)

enum mem_class {
#define X(n) MEM_CLASS_##n,
	MEM_CLASSES(X)
#undef X
	MEM_N_CLASSES
};

struct mem_stats {
	uint64_t c[MEM_N_CLASSES];
};

/* "loads", "lcl_hitm", ... indexed by enum mem_class. */
extern const char *const mem_class_names[MEM_N_CLASSES];

/* The fields of a perf_mem_data_src, without relying on bitfield layout. */
struct mem_data_src {
	unsigned int op, lvl, snoop, lock, dtlb, lvl_num, remote, snoopx, blk, hops;
};

void mem_data_src_split(uint64_t v, struct mem_data_src *ret);

/*
 * Adds one sample with data source data_src and data address daddr to
 * *st, as c2c_decode_stats() does. Returns 0, or -1 where perf returns -1
 * (no address, or a data source it cannot parse), after counting.
 */
int mem_decode(uint64_t data_src, uint64_t daddr, struct mem_stats *st);

void mem_stats_add(struct mem_stats *to, const struct mem_stats *from);

/* c2c's tot_hitm and tot_peer. */
static inline uint64_t mem_stats_hitm(const struct mem_stats *st)
{
	return st->c[MEM_CLASS_lcl_hitm] + st->c[MEM_CLASS_rmt_hitm];
}

static inline uint64_t mem_stats_peer(const struct mem_stats *st)
{
	return st->c[MEM_CLASS_lcl_peer] + st->c[MEM_CLASS_rmt_peer];
}

#endif
