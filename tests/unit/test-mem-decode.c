// SPDX-License-Identifier: GPL-2.0
/*
 * perf_mem_data_src -> perf c2c classes, for every data source encoding the
 * kernel's PEBS and IBS drivers and perf's SPE decoder produce (table and
 * citations in mem-encodings.h): each must land in exactly the classes
 * c2c_decode_stats() puts it in, and nowhere else.
 */
#include <string.h>

#include "mem-decode.h"
#include "mem-encodings.h"
#include "test.h"
#include "util.h"

static int class_index(const char *name, size_t len)
{
	for (int i = 0; i < MEM_N_CLASSES; i++)
		if (strlen(mem_class_names[i]) == len && strncmp(mem_class_names[i], name, len) == 0)
			return i;
	return -1;
}

/* "loads lcl_hitm" -> counts */
static void parse_want(const char *want, struct mem_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	while (*want) {
		size_t len = strcspn(want, " ");
		int i = class_index(want, len);

		CHECK(i >= 0);
		if (i >= 0)
			ret->c[i]++;
		want += len;
		want += strspn(want, " ");
	}
}

static void test_encodings(void)
{
	struct mem_stats total = { 0 }, want_total = { 0 };

	for (size_t k = 0; k < ARRAY_SIZE(mem_encodings); k++) {
		const struct mem_encoding *e = &mem_encodings[k];
		struct mem_stats got = { 0 }, want;

		test_current = e->source;
		parse_want(e->want, &want);
		mem_decode(e->data_src, e->daddr, &got);
		for (int i = 0; i < MEM_N_CLASSES; i++) {
			if (got.c[i] != want.c[i])
				fprintf(stderr, "%s (%#llx): %s is %llu, want %llu\n", e->source,
					(unsigned long long)e->data_src, mem_class_names[i],
					(unsigned long long)got.c[i], (unsigned long long)want.c[i]);
			CHECK_INT(got.c[i], ==, want.c[i]);
		}
		mem_stats_add(&total, &got);
		mem_stats_add(&want_total, &want);
	}
	test_current = "totals";
	CHECK(memcmp(&total, &want_total, sizeof(total)) == 0);
	/* every class is exercised by some kernel encoding */
	for (int i = 0; i < MEM_N_CLASSES; i++) {
		if (!total.c[i])
			fprintf(stderr, "class %s is not covered\n", mem_class_names[i]);
		CHECK(total.c[i] > 0);
	}
}

static void test_return_values(void)
{
	struct mem_stats st = { 0 };

	/* perf's -1: no address, or an op it cannot parse */
	CHECK_INT(mem_decode(P(OP, LOAD) | P(LVL, L1) | P(LVL, HIT), 0, &st), ==, -1);
	CHECK_INT(mem_decode(P(OP, STORE) | P(LVL, L1) | P(LVL, HIT), 0, &st), ==, -1);
	CHECK_INT(mem_decode(0, 0x1000, &st), ==, -1);
	CHECK_INT(mem_decode(P(OP, LOAD) | P(LVL, L1) | P(LVL, HIT), 0x1000, &st), ==, 0);
	CHECK_INT(mem_stats_hitm(&st), ==, 0);
	mem_decode(OP_LH | P(LVL, L3) | P(SNOOP, HITM), 0x1000, &st);
	mem_decode(OP_LH | LEVEL(ANY_CACHE) | REM | P(SNOOP, HITM), 0x1000, &st);
	mem_decode(P(OP, LOAD) | P(LVL, NA) | REM | P(SNOOPX, PEER), 0x1000, &st);
	CHECK_INT(mem_stats_hitm(&st), ==, 2);
	CHECK_INT(mem_stats_peer(&st), ==, 1);
}

static void test_split(void)
{
	struct mem_data_src d;

	/* every field at its uapi shift, at its widest value */
	mem_data_src_split(P(OP, EXEC) | P(LVL, UNC) | P(SNOOP, HITM) | P(LOCK, LOCKED) |
			   P(TLB, OS) | LEVEL(NA) | REM | P(SNOOPX, PEER) | P(BLK, ADDR) |
			   HOPS(3), &d);
	CHECK_INT(d.op, ==, PERF_MEM_OP_EXEC);
	CHECK_INT(d.lvl, ==, PERF_MEM_LVL_UNC);
	CHECK_INT(d.snoop, ==, PERF_MEM_SNOOP_HITM);
	CHECK_INT(d.lock, ==, PERF_MEM_LOCK_LOCKED);
	CHECK_INT(d.dtlb, ==, PERF_MEM_TLB_OS);
	CHECK_INT(d.lvl_num, ==, PERF_MEM_LVLNUM_NA);
	CHECK_INT(d.remote, ==, 1);
	CHECK_INT(d.snoopx, ==, PERF_MEM_SNOOPX_PEER);
	CHECK_INT(d.blk, ==, PERF_MEM_BLK_ADDR);
	CHECK_INT(d.hops, ==, PERF_MEM_HOPS_3);
	/* the union read as bitfields agrees on this (little-endian) host */
	{
		union perf_mem_data_src u = { .val = P(SNOOPX, PEER) | HOPS(2) | LEVEL(L3) };

		mem_data_src_split(u.val, &d);
		CHECK_INT(d.snoopx, ==, u.mem_snoopx);
		CHECK_INT(d.hops, ==, u.mem_hops);
		CHECK_INT(d.lvl_num, ==, u.mem_lvl_num);
	}
}

int main(void)
{
	RUN(test_encodings);
	RUN(test_return_values);
	RUN(test_split);
	return test_exit();
}
