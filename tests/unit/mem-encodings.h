/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_TEST_MEM_ENCODINGS_H
#define MMHITM_TEST_MEM_ENCODINGS_H

/*
 * perf_mem_data_src values as the kernel (Intel PEBS, AMD IBS) and perf
 * (Arm SPE, synthesized from the AUX trace) build them, with the perf c2c
 * classes c2c_decode_stats() (tools/perf/util/mem-events.c, 6.12) puts
 * them in. Each value is spelled with the same PERF_MEM_S() terms as its
 * source line, so a reader can hold the two side by side:
 *
 *  - Intel: arch/x86/events/intel/ds.c, pebs_data_source[] (Sandy Bridge
 *    and later), the _nhm/_skl/_grt/_cmt patches, lnc_pebs_data_source[],
 *    load_latency_data()/pebs_set_tlb_lock() (TLB, lock, block bits),
 *    precise_store_data(), precise_datala_hsw(), store_latency_data();
 *  - AMD: arch/x86/events/amd/ibs.c, g_data_src[], g_zen4_data_src[],
 *    perf_ibs_get_mem_lvl(), perf_ibs_get_mem_snoop(), _get_mem_lock();
 *  - Arm: tools/perf/util/arm-spe.c, arm_spe__synth_data_source_common()
 *    (Neoverse N1/N2/V1) and _generic(); the kernel's
 *    drivers/perf/arm_spe_pmu.c only writes the raw SPE packets.
 *
 * "want" lists the classes counted once each; every other class is 0.
 */

#include <linux/perf_event.h>
#include <stdint.h>

/* Newer than Debian 12's uapi headers; values from 6.12's perf_event.h. */
#ifndef PERF_MEM_LVLNUM_UNC
#define PERF_MEM_LVLNUM_UNC	0x08
#endif
#ifndef PERF_MEM_LVLNUM_L2_MHB
#define PERF_MEM_LVLNUM_L2_MHB	0x05
#endif
#ifndef PERF_MEM_LVLNUM_MSC
#define PERF_MEM_LVLNUM_MSC	0x06
#endif

#define P(a, b)		PERF_MEM_S(a, b)
#define LEVEL(x)	P(LVLNUM, x)
#define REM		P(REMOTE, REMOTE)
#define HOPS(x)		P(HOPS, x)
#define OP_LH		(P(OP, LOAD) | P(LVL, HIT))
#define SNOOP_NONE_MISS	(P(SNOOP, NONE) | P(SNOOP, MISS))
/* AMD's L(x): a level that was hit */
#define AMD_L(x)	(P(LVL, x) | P(LVL, HIT))
/* the kernel's PERF_MEM_NA (include/linux/perf_event.h) */
#define MEM_NA		(P(OP, NA) | P(LVL, NA) | P(SNOOP, NA) | P(LOCK, NA) | P(TLB, NA))
/* pebs_set_tlb_lock() for a load that hit the first-level TLB */
#define TLB_HIT		(P(TLB, HIT) | P(TLB, L1) | P(TLB, L2))
/* mem_op replaced, as the kernel does with src.mem_op = ... */
#define AS_STORE(v)	(((v) & ~(uint64_t)0x1f) | PERF_MEM_OP_STORE)

struct mem_encoding {
	const char *source;
	uint64_t data_src;
	uint64_t daddr;		/* 0: no address was sampled */
	const char *want;	/* space-separated class names */
};

#define A 0xffff888100001040ULL	/* a kernel data address */

static const struct mem_encoding mem_encodings[] = {
	/* --- Intel PEBS load latency, pebs_data_source[] (SNB and later) --- */
	{ "ds.c 0x00 ukn L3", P(OP, LOAD) | P(LVL, MISS) | LEVEL(L3) | P(SNOOP, NA), A,
	  "loads ld_miss" },
	{ "ds.c 0x01 L1 local", OP_LH | P(LVL, L1) | LEVEL(L1) | P(SNOOP, NONE), A,
	  "loads ld_l1hit" },
	{ "ds.c 0x02 LFB hit", OP_LH | P(LVL, LFB) | LEVEL(LFB) | P(SNOOP, NONE), A,
	  "loads ld_fbhit" },
	{ "ds.c 0x03 L2 hit", OP_LH | P(LVL, L2) | LEVEL(L2) | P(SNOOP, NONE), A,
	  "loads ld_l2hit" },
	{ "ds.c 0x04 L3 hit", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, NONE), A,
	  "loads ld_llchit" },
	{ "ds.c 0x05 L3 hit, snoop miss", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, MISS), A,
	  "loads ld_llchit" },
	{ "ds.c 0x06 L3 hit, snoop hit", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HIT), A,
	  "loads ld_llchit" },
	{ "ds.c 0x07 L3 hit, snoop hitm (local HITM)",
	  OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM), A, "loads lcl_hitm" },
	/* REM without hops is perf's "mrem": counted as remote DRAM too */
	{ "ds.c 0x08 L3 miss snoop hit", OP_LH | P(LVL, REM_CCE1) | REM | LEVEL(L3) | P(SNOOP, HIT), A,
	  "loads rmt_dram ld_shared rmt_hit" },
	{ "ds.c 0x09 L3 miss snoop hitm (remote HITM)",
	  OP_LH | P(LVL, REM_CCE1) | REM | LEVEL(L3) | P(SNOOP, HITM), A,
	  "loads rmt_dram ld_excl rmt_hitm" },
	{ "ds.c 0x0a L3 miss, shared", OP_LH | P(LVL, LOC_RAM) | LEVEL(RAM) | P(SNOOP, HIT), A,
	  "loads lcl_dram ld_shared" },
	{ "ds.c 0x0b L3 miss, shared (remote)",
	  OP_LH | P(LVL, REM_RAM1) | REM | LEVEL(L3) | P(SNOOP, HIT), A,
	  "loads rmt_dram ld_shared rmt_hit" },
	{ "ds.c 0x0c L3 miss, excl", OP_LH | P(LVL, LOC_RAM) | LEVEL(RAM) | SNOOP_NONE_MISS, A,
	  "loads lcl_dram ld_excl" },
	{ "ds.c 0x0d L3 miss, excl (remote)",
	  OP_LH | P(LVL, REM_RAM1) | LEVEL(RAM) | REM | SNOOP_NONE_MISS, A, "loads rmt_dram ld_excl" },
	{ "ds.c 0x0e I/O", OP_LH | P(LVL, IO) | LEVEL(NA) | P(SNOOP, NONE), A, "loads ld_io" },
	{ "ds.c 0x0f uncached", OP_LH | P(LVL, UNC) | LEVEL(NA) | P(SNOOP, NONE), A,
	  "loads ld_uncache" },
	/* intel_pmu_pebs_data_source_nhm() */
	{ "ds.c nhm 0x06 L3 hitm", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM), A,
	  "loads lcl_hitm" },
	/* __intel_pmu_pebs_data_source_skl(): Skylake server's remote HITM
	 * has no legacy level bits, only REM: perf finds it through mrem */
	{ "ds.c skl 0x08 L4 hit", OP_LH | LEVEL(L4) | P(SNOOP, HIT), A, "loads" },
	{ "ds.c skl 0x08 pmem hit", OP_LH | LEVEL(PMEM) | P(SNOOP, HIT), A, "loads" },
	{ "ds.c skl 0x09 remote L4", OP_LH | LEVEL(L4) | REM | P(SNOOP, HIT), A,
	  "loads rmt_dram ld_shared rmt_hit" },
	{ "ds.c skl 0x0b remote RAM", OP_LH | LEVEL(RAM) | REM | P(SNOOP, NONE), A,
	  "loads rmt_dram ld_excl" },
	{ "ds.c skl 0x0c remote cache fwd", OP_LH | LEVEL(ANY_CACHE) | REM | P(SNOOPX, FWD), A,
	  "loads rmt_dram ld_excl" },
	{ "ds.c skl 0x0d remote cache HITM", OP_LH | LEVEL(ANY_CACHE) | REM | P(SNOOP, HITM), A,
	  "loads rmt_dram ld_excl rmt_hitm" },
	/* __intel_pmu_pebs_data_source_grt() / _cmt() (E-cores) */
	{ "ds.c grt 0x08 L3 snoop fwd", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOPX, FWD), A,
	  "loads ld_llchit" },
	{ "ds.c cmt 0x08 L3 hitm", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM), A,
	  "loads lcl_hitm" },
	{ "ds.c cmt 0x0a local RAM", OP_LH | P(LVL, LOC_RAM) | LEVEL(RAM) | P(SNOOP, NONE), A,
	  "loads lcl_dram ld_excl" },
	{ "ds.c cmt 0x0c remote RAM fwd", OP_LH | LEVEL(RAM) | REM | P(SNOOPX, FWD), A,
	  "loads rmt_dram ld_excl" },
	{ "ds.c cmt 0x0d remote RAM hitm", OP_LH | LEVEL(RAM) | REM | P(SNOOP, HITM), A,
	  "loads rmt_dram ld_excl rmt_hitm" },
	/* lnc_pebs_data_source[] (Lion Cove) */
	{ "ds.c lnc 0x06 L2 MHB", OP_LH | LEVEL(L2_MHB) | P(SNOOP, NONE), A, "loads" },
	{ "ds.c lnc 0x0d L3 hit snoop hitm", OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM), A,
	  "loads lcl_hitm" },
	/* no HIT bit: c2c does not look at the level, only at the miss */
	{ "ds.c lnc 0x0f L3 miss snoop hitm",
	  P(OP, LOAD) | P(LVL, MISS) | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM), A, "loads ld_miss" },
	{ "ds.c lnc 0x10 memory-side cache", OP_LH | LEVEL(MSC) | P(SNOOP, NONE), A, "loads" },
	{ "ds.c lnc reserved -> NA", P(OP, LOAD) | LEVEL(NA) | P(SNOOP, NA), A, "loads" },
	/* load_latency_data(): TLB, lock and block bits on top */
	{ "ds.c 0x07 + locked + stlb miss + blk data",
	  OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM) | P(TLB, MISS) | P(TLB, L2) |
	  P(LOCK, LOCKED) | P(BLK, DATA), A, "loads lcl_hitm locks blk_data" },
	{ "ds.c 0x01 + blk addr", OP_LH | P(LVL, L1) | LEVEL(L1) | P(SNOOP, NONE) | TLB_HIT |
	  P(BLK, ADDR), A, "loads ld_l1hit blk_addr" },
	{ "ds.c 0x09 without an address",
	  OP_LH | P(LVL, REM_CCE1) | REM | LEVEL(L3) | P(SNOOP, HITM) | P(LOCK, LOCKED), 0,
	  "loads ld_noadrs locks" },
	/* precise_store_data(): st_l1d_hit, st_locked */
	{ "ds.c precise_store_data L1 hit",
	  P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(TLB, L2) | P(TLB, HIT) | P(LVL, HIT), A,
	  "stores st_l1hit" },
	{ "ds.c precise_store_data L1 miss, locked",
	  P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(TLB, L2) | P(TLB, MISS) | P(LVL, MISS) |
	  P(LOCK, LOCKED), A, "stores st_l1miss locks" },
	{ "ds.c precise_store_data without an address",
	  P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(TLB, L2) | P(TLB, HIT) | P(LVL, HIT), 0,
	  "stores st_noadrs" },
	/* precise_datala_hsw(): PERF_MEM_NA, then the op and, for stores,
	 * mem_lvl assigned L1 | HIT */
	{ "ds.c precise_datala_hsw store L1 hit",
	  P(OP, STORE) | P(LVL, L1) | P(LVL, HIT) | P(SNOOP, NA) | P(LOCK, NA) | P(TLB, NA), A,
	  "stores st_l1hit" },
	{ "ds.c precise_datala_hsw store L1 miss",
	  P(OP, STORE) | P(LVL, L1) | P(LVL, MISS) | P(SNOOP, NA) | P(LOCK, NA) | P(TLB, NA), A,
	  "stores st_l1miss" },
	{ "ds.c precise_datala_hsw load",
	  (MEM_NA & ~(uint64_t)0x1f) | PERF_MEM_OP_LOAD, A, "loads" },
	/* store_latency_data(): the load table with the op made STORE */
	{ "ds.c store_latency_data 0x07",
	  AS_STORE(OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM)) | TLB_HIT | P(BLK, NA), A,
	  "stores" },
	{ "ds.c store_latency_data 0x0f uncached",
	  AS_STORE(OP_LH | P(LVL, UNC) | LEVEL(NA) | P(SNOOP, NONE)) | TLB_HIT | P(BLK, NA), A,
	  "stores st_uncache" },

	/* --- AMD IBS op, perf_ibs_get_mem_lvl() and friends --- */
	{ "ibs.c L1 hit", P(OP, LOAD) | AMD_L(L1) | LEVEL(L1) | P(SNOOP, NA), A,
	  "loads ld_l1hit" },
	{ "ibs.c L2 hit", P(OP, LOAD) | AMD_L(L2) | LEVEL(L2) | P(SNOOP, NA), A,
	  "loads ld_l2hit" },
	{ "ibs.c uncached", P(OP, LOAD) | AMD_L(UNC) | LEVEL(UNC) | P(SNOOP, NA), A,
	  "loads ld_uncache" },
	{ "ibs.c MAB hit", P(OP, LOAD) | AMD_L(LFB) | LEVEL(LFB) | P(SNOOP, NA), A,
	  "loads ld_fbhit" },
	{ "ibs.c no data source", P(OP, LOAD) | P(LVL, NA) | LEVEL(NA) | P(SNOOP, NA), A, "loads" },
	/* g_data_src[IBS_DATA_SRC_LOC_CACHE] with the HITM of
	 * perf_ibs_get_mem_snoop(): L3 and REM_CCE1 both set, so perf counts
	 * a local and a remote HITM for the one sample */
	{ "ibs.c LOC_CACHE, modified",
	  P(OP, LOAD) | AMD_L(L3) | AMD_L(REM_CCE1) | LEVEL(ANY_CACHE) | HOPS(0) | P(SNOOP, HITM), A,
	  "loads lcl_hitm rmt_hitm" },
	{ "ibs.c LOC_CACHE, shared",
	  P(OP, LOAD) | AMD_L(L3) | AMD_L(REM_CCE1) | LEVEL(ANY_CACHE) | HOPS(0) | P(SNOOP, NA), A,
	  "loads ld_llchit" },
	{ "ibs.c DRAM", P(OP, LOAD) | AMD_L(LOC_RAM) | LEVEL(RAM) | P(SNOOP, NA), A,
	  "loads lcl_dram ld_excl" },
	{ "ibs.c DRAM, remote node",
	  P(OP, LOAD) | AMD_L(REM_RAM1) | LEVEL(RAM) | REM | HOPS(1) | P(SNOOP, NA), A,
	  "loads rmt_dram ld_excl" },
	{ "ibs.c REM_CACHE", P(OP, LOAD) | AMD_L(REM_CCE2) | LEVEL(ANY_CACHE) | REM | HOPS(1) |
	  P(SNOOP, NA), A, "loads" },
	{ "ibs.c IO", P(OP, LOAD) | AMD_L(IO) | LEVEL(IO) | P(SNOOP, NA), A, "loads ld_io" },
	/* g_zen4_data_src[] */
	{ "ibs.c zen4 EXT_LOC_CACHE, modified",
	  P(OP, LOAD) | AMD_L(L3) | LEVEL(L3) | P(SNOOP, HITM), A, "loads lcl_hitm" },
	{ "ibs.c zen4 EXT_NEAR_CCX_CACHE, modified",
	  P(OP, LOAD) | AMD_L(REM_CCE1) | LEVEL(ANY_CACHE) | REM | HOPS(0) | P(SNOOP, HITM), A,
	  "loads rmt_hitm" },
	{ "ibs.c zen4 EXT_FAR_CCX_CACHE, modified",
	  P(OP, LOAD) | AMD_L(REM_CCE2) | LEVEL(ANY_CACHE) | REM | HOPS(1) | P(SNOOP, HITM), A,
	  "loads rmt_hitm" },
	{ "ibs.c zen4 EXT_PMEM", P(OP, LOAD) | LEVEL(PMEM) | P(SNOOP, NA), A, "loads" },
	{ "ibs.c zen4 EXT_EXT_MEM (CXL)", P(OP, LOAD) | LEVEL(CXL) | P(SNOOP, NA), A, "loads" },
	{ "ibs.c locked L1 hit", P(OP, LOAD) | AMD_L(L1) | LEVEL(L1) | P(SNOOP, NA) |
	  P(LOCK, LOCKED), A, "loads ld_l1hit locks" },
	{ "ibs.c store L1 hit", P(OP, STORE) | AMD_L(L1) | LEVEL(L1) | P(SNOOP, NA), A,
	  "stores st_l1hit" },
	{ "ibs.c store, no level", P(OP, STORE) | P(LVL, NA) | LEVEL(NA) | P(SNOOP, NA), A,
	  "stores st_na" },

	/* --- Arm SPE, arm_spe__synth_data_source_common() (Neoverse) --- */
	{ "arm-spe.c DS_L1D", P(OP, LOAD) | P(LVL, L1) | P(LVL, HIT) | LEVEL(L1) | P(SNOOP, NONE), A,
	  "loads ld_l1hit" },
	{ "arm-spe.c DS_L2", P(OP, LOAD) | P(LVL, L2) | P(LVL, HIT) | LEVEL(L2) | P(SNOOP, NONE), A,
	  "loads ld_l2hit" },
	{ "arm-spe.c DS_PEER_CORE", P(OP, LOAD) | P(LVL, L2) | P(LVL, HIT) | LEVEL(L2) |
	  P(SNOOPX, PEER), A, "loads ld_l2hit lcl_peer" },
	{ "arm-spe.c DS_LOCAL_CLUSTER", P(OP, LOAD) | P(LVL, L3) | P(LVL, HIT) | LEVEL(L3) |
	  P(SNOOPX, PEER), A, "loads ld_llchit lcl_peer" },
	{ "arm-spe.c DS_PEER_CLUSTER", P(OP, LOAD) | P(LVL, L3) | P(LVL, HIT) | LEVEL(L3) |
	  P(SNOOPX, PEER), A, "loads ld_llchit lcl_peer" },
	{ "arm-spe.c DS_SYS_CACHE", P(OP, LOAD) | P(LVL, L3) | P(LVL, HIT) | LEVEL(L3) |
	  P(SNOOP, HIT), A, "loads ld_llchit" },
	{ "arm-spe.c DS_REMOTE", P(OP, LOAD) | P(LVL, NA) | LEVEL(NA) | REM | P(SNOOPX, PEER), A,
	  "loads rmt_hit rmt_peer" },
	{ "arm-spe.c DS_DRAM", P(OP, LOAD) | P(LVL, LOC_RAM) | P(LVL, HIT) | LEVEL(RAM) |
	  P(SNOOP, NONE), A, "loads lcl_dram ld_excl" },
	{ "arm-spe.c store", P(OP, STORE) | P(LVL, NA) | LEVEL(NA) | P(SNOOP, NA) | P(TLB, WK) |
	  P(TLB, HIT), A, "stores st_na" },
	/* arm_spe__synth_data_source_generic() */
	{ "arm-spe.c generic LLC miss", P(OP, LOAD) | P(LVL, L3) | P(LVL, MISS), A, "loads ld_miss" },
	{ "arm-spe.c generic L1D access", P(OP, LOAD) | P(LVL, L1) | P(LVL, HIT), A,
	  "loads ld_l1hit" },
	{ "arm-spe.c generic LLC hit, remote", P(OP, LOAD) | P(LVL, L3) | P(LVL, HIT) | REM, A,
	  "loads ld_llchit rmt_dram ld_excl" },

	/* --- what perf cannot parse --- */
	{ "PERF_MEM_NA (software events, perf's default)", MEM_NA, A, "noparse" },
	{ "all zero", 0, A, "noparse" },
	{ "prefetch", P(OP, PFETCH) | P(LVL, L1) | P(LVL, HIT), A, "noparse" },
	{ "exec, locked", P(OP, EXEC) | P(LOCK, LOCKED), A, "locks noparse" },
};

#undef A

#endif
