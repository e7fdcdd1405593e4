// SPDX-License-Identifier: GPL-2.0
/*
 * perf c2c's classification of memory samples. The rules, their order and
 * their quirks are those of tools/perf/util/mem-events.c:
 * c2c_decode_stats() in Linux 6.12; the field layout is
 * include/uapi/linux/perf_event.h's union perf_mem_data_src.
 */
#include <linux/perf_event.h>

#include "mem-decode.h"

const char *const mem_class_names[MEM_N_CLASSES] = {
#define X(n) #n,
	MEM_CLASSES(X)
#undef X
};

/* Shifts and widths from the little-endian perf_mem_data_src. */
void mem_data_src_split(uint64_t v, struct mem_data_src *d)
{
	d->op = v & 0x1f;
	d->lvl = (v >> 5) & 0x3fff;
	d->snoop = (v >> 19) & 0x1f;
	d->lock = (v >> 24) & 0x3;
	d->dtlb = (v >> 26) & 0x7f;
	d->lvl_num = (v >> 33) & 0xf;
	d->remote = (v >> 37) & 0x1;
	d->snoopx = (v >> 38) & 0x3;
	d->blk = (v >> 40) & 0x7;
	d->hops = (v >> 43) & 0x7;
}

#define INC(n) (st->c[MEM_CLASS_##n]++)

/* A load that hit somewhere, by the level that says where. */
static void decode_load_hit(const struct mem_data_src *d, int mrem, struct mem_stats *st)
{
	unsigned int lvl = d->lvl;

	if (lvl & PERF_MEM_LVL_UNC)
		INC(ld_uncache);
	if (lvl & PERF_MEM_LVL_IO)
		INC(ld_io);
	if (lvl & PERF_MEM_LVL_LFB)
		INC(ld_fbhit);
	if (lvl & PERF_MEM_LVL_L1)
		INC(ld_l1hit);
	if (lvl & PERF_MEM_LVL_L2) {
		INC(ld_l2hit);
		if (d->snoopx & PERF_MEM_SNOOPX_PEER)
			INC(lcl_peer);
	}
	if (lvl & PERF_MEM_LVL_L3) {
		if (d->snoop & PERF_MEM_SNOOP_HITM)
			INC(lcl_hitm);
		else
			INC(ld_llchit);
		if (d->snoopx & PERF_MEM_SNOOPX_PEER)
			INC(lcl_peer);
	}
	if (lvl & PERF_MEM_LVL_LOC_RAM) {
		INC(lcl_dram);
		if (d->snoop & PERF_MEM_SNOOP_HIT)
			INC(ld_shared);
		else
			INC(ld_excl);
	}
	if ((lvl & PERF_MEM_LVL_REM_RAM1) || (lvl & PERF_MEM_LVL_REM_RAM2) || mrem) {
		INC(rmt_dram);
		if (d->snoop & PERF_MEM_SNOOP_HIT)
			INC(ld_shared);
		else
			INC(ld_excl);
	}
}

static int decode_load(const struct mem_data_src *d, int mrem, uint64_t daddr,
		       struct mem_stats *st)
{
	unsigned int lvl = d->lvl;

	INC(loads);
	if (!daddr) {
		INC(ld_noadrs);
		return -1;
	}
	if (lvl & PERF_MEM_LVL_HIT)
		decode_load_hit(d, mrem, st);
	/* deliberately outside the HIT test, as in perf */
	if ((lvl & PERF_MEM_LVL_REM_CCE1) || (lvl & PERF_MEM_LVL_REM_CCE2) || mrem) {
		if (d->snoop & PERF_MEM_SNOOP_HIT) {
			INC(rmt_hit);
		} else if (d->snoop & PERF_MEM_SNOOP_HITM) {
			INC(rmt_hitm);
		} else if (d->snoopx & PERF_MEM_SNOOPX_PEER) {
			INC(rmt_hit);
			INC(rmt_peer);
		}
	}
	if (lvl & PERF_MEM_LVL_MISS)
		INC(ld_miss);
	return 0;
}

static int decode_store(const struct mem_data_src *d, uint64_t daddr, struct mem_stats *st)
{
	unsigned int lvl = d->lvl;

	INC(stores);
	if (!daddr) {
		INC(st_noadrs);
		return -1;
	}
	if (lvl & PERF_MEM_LVL_HIT) {
		if (lvl & PERF_MEM_LVL_UNC)
			INC(st_uncache);
		if (lvl & PERF_MEM_LVL_L1)
			INC(st_l1hit);
	}
	if ((lvl & PERF_MEM_LVL_MISS) && (lvl & PERF_MEM_LVL_L1))
		INC(st_l1miss);
	if (lvl & PERF_MEM_LVL_NA)
		INC(st_na);
	return 0;
}

int mem_decode(uint64_t data_src, uint64_t daddr, struct mem_stats *st)
{
	struct mem_data_src d;
	/* Skylake reports an unknown remote level through the remote bit;
	 * POWER uses it for another core of the same node, hence only
	 * without hops (the comment in c2c_decode_stats()). */
	int mrem;

	mem_data_src_split(data_src, &d);
	mrem = d.remote && !d.hops;

	if (d.lock & PERF_MEM_LOCK_LOCKED)
		INC(locks);
	if (d.blk & PERF_MEM_BLK_DATA)
		INC(blk_data);
	if (d.blk & PERF_MEM_BLK_ADDR)
		INC(blk_addr);

	if (d.op & PERF_MEM_OP_LOAD)
		return decode_load(&d, mrem, daddr, st);
	if (d.op & PERF_MEM_OP_STORE)
		return decode_store(&d, daddr, st);
	INC(noparse);
	return -1;
}

void mem_stats_add(struct mem_stats *to, const struct mem_stats *from)
{
	for (unsigned int i = 0; i < MEM_N_CLASSES; i++)
		to->c[i] += from->c[i];
}
