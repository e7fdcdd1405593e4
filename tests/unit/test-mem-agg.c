// SPDX-License-Identifier: GPL-2.0
/*
 * The per-interval aggregate: keys, classes, weights, callchains, the
 * user-space rule, the size cap, the line size (passed in, never assumed:
 * the same samples aggregate differently at 64 and 128 bytes), and the
 * writer's rows in a real (temporary) database.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "mem-agg.h"
#include "mem-encodings.h"
#include "test.h"
#include "util.h"

#define KADDR	0xffff888100001000ULL
#define KIP	0xffffffff81234567ULL
#define LD_HITM		(OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HITM))
#define LD_RHITM	(OP_LH | LEVEL(ANY_CACHE) | REM | P(SNOOP, HITM))
#define ST_L1HIT	(P(OP, STORE) | P(LVL, L1) | P(LVL, HIT))

static struct mem_agg *agg(unsigned int line, bool user, unsigned int stack, size_t max)
{
	struct mem_agg_config cfg = { .line_size = line, .keep_user = user, .max_stack = stack,
				      .max_entries = max };

	return mem_agg_new(&cfg);
}

static struct mem_agg_sample smp(uint64_t addr, uint64_t ip, uint64_t ds)
{
	return (struct mem_agg_sample){ .addr = addr, .ip = ip, .data_src = ds, .kernel = true };
}

static void test_line_size(void)
{
	struct mem_agg *a;
	struct mem_agg_sample s;

	CHECK(agg(0, false, 0, 0) == NULL);
	CHECK(agg(48, false, 0, 0) == NULL);
	CHECK(agg(8192, false, 0, 0) == NULL);

	/* 0x...1008 and 0x...1048: one 128-byte line, two 64-byte lines */
	a = agg(64, false, 0, 0);
	s = smp(KADDR + 0x08, KIP, LD_HITM);
	CHECK_INT(mem_agg_add(a, &s), ==, 1);
	s = smp(KADDR + 0x48, KIP, LD_HITM);
	CHECK_INT(mem_agg_add(a, &s), ==, 1);
	CHECK_INT(mem_agg_entries(a), ==, 2);
	mem_agg_free(a);

	a = agg(128, false, 0, 0);
	s = smp(KADDR + 0x08, KIP, LD_HITM);
	mem_agg_add(a, &s);
	s = smp(KADDR + 0x48, KIP, LD_HITM);
	mem_agg_add(a, &s);
	s = smp(KADDR + 0x48, KIP, LD_HITM);
	mem_agg_add(a, &s);
	/* same line, two offsets */
	CHECK_INT(mem_agg_entries(a), ==, 2);
	CHECK_INT(mem_agg_stored(a), ==, 3);
	mem_agg_free(a);
	mem_agg_free(NULL);
}

static void test_host_line_size(void)
{
	char root[] = "/tmp/mmhitm-test-sysfs-XXXXXX", path[256];
	unsigned int ls = 0;

	CHECK_INT(mem_host_line_size(NULL, &ls), ==, 0);
	CHECK(ls >= 8 && (ls & (ls - 1)) == 0);
	printf("this host: %u-byte cache lines\n", ls);

	CHECK(mkdtemp(root) != NULL);
	CHECK_INT(mem_host_line_size(root, &ls), ==, -ENOENT);
	/* index0 is the instruction cache here, index1 the 128-byte data cache */
	for (int i = 0; i < 2; i++) {
		static const char *const type[] = { "Instruction", "Data" };
		static const char *const size[] = { "32", "128" };
		FILE *f;

		snprintf(path, sizeof(path), "mkdir -p %s/devices/system/cpu/cpu0/cache/index%d", root, i);
		CHECK_INT(system(path), ==, 0);
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d/level", root, i);
		f = fopen(path, "w");
		fputs("1\n", f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu0/cache/index%d/type", root, i);
		f = fopen(path, "w");
		fprintf(f, "%s\n", type[i]);
		fclose(f);
		snprintf(path, sizeof(path),
			 "%s/devices/system/cpu/cpu0/cache/index%d/coherency_line_size", root, i);
		f = fopen(path, "w");
		fprintf(f, "%s\n", size[i]);
		fclose(f);
	}
	CHECK_INT(mem_host_line_size(root, &ls), ==, 0);
	CHECK_INT(ls, ==, 128);
	snprintf(path, sizeof(path), "rm -rf %s", root);
	CHECK_INT(system(path), ==, 0);
}

static void test_classes_and_weight(void)
{
	struct mem_agg *a = agg(64, false, 0, 0);
	struct mem_agg_sample s;
	struct mem_stats t;

	s = smp(KADDR, KIP, LD_HITM);
	s.has_weight = true;
	s.weight = 300;
	mem_agg_add(a, &s);
	s = smp(KADDR, KIP, LD_RHITM);
	s.has_weight = true;
	s.weight = 500;
	mem_agg_add(a, &s);
	/* a store's weight is not a load latency */
	s = smp(KADDR, KIP, ST_L1HIT);
	s.has_weight = true;
	s.weight = 7;
	mem_agg_add(a, &s);
	/* no weight recorded */
	s = smp(KADDR, KIP, LD_HITM);
	mem_agg_add(a, &s);
	CHECK_INT(mem_agg_entries(a), ==, 1);
	mem_agg_totals(a, &t);
	CHECK_INT(t.c[MEM_CLASS_loads], ==, 3);
	CHECK_INT(t.c[MEM_CLASS_stores], ==, 1);
	CHECK_INT(t.c[MEM_CLASS_lcl_hitm], ==, 2);
	CHECK_INT(t.c[MEM_CLASS_rmt_hitm], ==, 1);
	CHECK_INT(t.c[MEM_CLASS_st_l1hit], ==, 1);
	mem_agg_free(a);
}

static void test_user_and_cap(void)
{
	struct mem_agg *a = agg(64, false, 0, 3);
	struct mem_agg_sample s = smp(0x7ffc00001000, 0x401000, LD_HITM);

	s.kernel = false;
	CHECK_INT(mem_agg_add(a, &s), ==, 0);
	CHECK_INT(mem_agg_entries(a), ==, 0);
	for (int i = 0; i < 5; i++) {
		s = smp(KADDR + 64 * i, KIP, LD_HITM);
		mem_agg_add(a, &s);
	}
	CHECK_INT(mem_agg_entries(a), ==, 3);
	CHECK_INT(mem_agg_dropped(a), ==, 2);
	mem_agg_reset(a);
	CHECK_INT(mem_agg_entries(a), ==, 0);
	CHECK_INT(mem_agg_dropped(a), ==, 0);
	mem_agg_free(a);

	a = agg(64, true, 0, 0);
	s = smp(0x7ffc00001000, 0x401000, LD_HITM);
	s.kernel = false;
	CHECK_INT(mem_agg_add(a, &s), ==, 1);
	mem_agg_free(a);
}

/* Many keys: the index grows and every key stays findable. */
static void test_many(void)
{
	struct mem_agg *a = agg(64, false, 0, 0);
	struct mem_agg_sample s;

	for (int round = 0; round < 2; round++)
		for (uint64_t i = 0; i < 50000; i++) {
			s = smp(KADDR + 64 * (i % 10000), KIP + (i / 10000), LD_HITM);
			mem_agg_add(a, &s);
		}
	CHECK_INT(mem_agg_entries(a), ==, 50000);
	CHECK_INT(mem_agg_stored(a), ==, 100000);
	mem_agg_free(a);
}

static char dbpath[64];

static sqlite3 *fresh_db(void)
{
	sqlite3 *db = NULL;

	snprintf(dbpath, sizeof(dbpath), "/tmp/mmhitm-test-agg-%d.db", getpid());
	unlink(dbpath);
	if (db_open(dbpath, 0, &db) < 0)
		return NULL;
	db_exec(db, "INSERT INTO hosts (host_id, machine_id, hostname) VALUES (1, 'm', 'h');"
		"INSERT INTO boots (boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
		" kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size, page_size,"
		" pmu_kind, lru_gen) VALUES (1, 1, 'b', 0, 0, 'r', 'v', 'x86_64', 2, 64, 4096,"
		" 'none', 'absent');"
		"INSERT INTO intervals (interval_id, boot_id, start_ns, end_ns) VALUES (7, 1, 0, 60e9);");
	return db;
}

static int64_t q(sqlite3 *db, const char *sql)
{
	int64_t v = -1;

	CHECK_INT(db_query_int(db, &v, sql), ==, 0);
	return v;
}

static void test_callchains_and_write(void)
{
	/* perf's layout: the kernel context, then the user one */
	const uint64_t chain1[] = { (uint64_t)PERF_CONTEXT_KERNEL, KIP, 0xffffffff81000100,
				    0xffffffff81000200, 0xffffffff81000300,
				    (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000 };
	const uint64_t chain2[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000100,
				    0xffffffff81000200, 0xffffffff81000999 };
	struct sampling_stats st = { .active_ns = 5000000000, .samples = 10, .samples_kernel = 4,
				     .samples_user = 6, .lost = 2, .throttled = 1 };
	struct mem_agg *a = agg(64, false, 2, 0);
	struct mem_agg_sample s;
	sqlite3 *db = fresh_db();
	sqlite3_stmt *st_chain = NULL;

	CHECK(db != NULL);
	if (!db)
		return;
	s = smp(KADDR + 8, KIP, LD_HITM);
	s.callchain = chain1;
	s.callchain_nr = ARRAY_SIZE(chain1);
	mem_agg_add(a, &s);
	mem_agg_add(a, &s);
	/* same first two kernel frames: the same chain at depth 2 */
	s.callchain = chain2;
	s.callchain_nr = ARRAY_SIZE(chain2);
	s.ip = KIP;
	mem_agg_add(a, &s);
	/* no callchain: id 0 */
	s = smp(KADDR + 8, KIP, LD_RHITM);
	mem_agg_add(a, &s);
	CHECK_INT(mem_agg_entries(a), ==, 2);

	CHECK_INT(db_begin(db), ==, 0);
	CHECK_INT(mem_agg_write(a, db, 1, 7, "page-faults", &st), ==, 0);
	CHECK_INT(db_commit(db), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM callchains"), ==, 1);
	CHECK_INT(db_prepare(db, &st_chain, "SELECT ips FROM callchains"), ==, 0);
	CHECK_INT(sqlite3_step(st_chain), ==, SQLITE_ROW);
	/* innermost first, markers and the sample's IP dropped, depth 2 */
	CHECK_STR((const char *)sqlite3_column_text(st_chain, 0),
		  "0xffffffff81000100 0xffffffff81000200");
	sqlite3_finalize(st_chain);
	CHECK_INT(q(db, "SELECT count(*) FROM mem_lines"), ==, 2);
	CHECK_INT(q(db, "SELECT lcl_hitm FROM mem_lines WHERE callchain_id <> 0"), ==, 3);
	CHECK_INT(q(db, "SELECT rmt_hitm + rmt_dram + ld_excl FROM mem_lines WHERE callchain_id = 0"), ==, 3);
	/* kernel addresses as their 64 bits, hex through the view */
	CHECK_INT(q(db, "SELECT count(*) FROM hitm_lines WHERE line = '0xffff888100001000' AND"
		     " ip_hex = '0xffffffff81234567' AND offset = 8 AND kernel = 1"), ==, 2);
	CHECK_INT(q(db, "SELECT line_addr = -131387344547840 FROM mem_lines LIMIT 1"), ==, 1);
	CHECK_INT(q(db, "SELECT samples * 1000 + samples_kernel * 100 + lost * 10 + throttled"
		     " FROM sampling WHERE interval_id = 7"), ==, 10421);
	CHECK_INT(q(db, "SELECT active_ns FROM sampling"), ==, 5000000000LL);

	/* the same aggregate again: rows add up, the chain is reused */
	CHECK_INT(db_begin(db), ==, 0);
	CHECK_INT(mem_agg_write(a, db, 1, 7, NULL, &st), ==, 0);
	CHECK_INT(db_commit(db), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM callchains"), ==, 1);
	CHECK_INT(q(db, "SELECT lcl_hitm FROM mem_lines WHERE callchain_id <> 0"), ==, 6);
	CHECK_INT(q(db, "SELECT samples FROM sampling"), ==, 20);
	CHECK_INT(q(db, "SELECT pmu_events = 'page-faults' FROM sampling"), ==, 1);

	/* inside a transaction the caller rolls back: nothing stays */
	CHECK_INT(db_begin(db), ==, 0);
	CHECK_INT(mem_agg_write(a, db, 1, 7, NULL, &st), ==, 0);
	db_rollback(db);
	CHECK_INT(q(db, "SELECT lcl_hitm FROM mem_lines WHERE callchain_id <> 0"), ==, 6);

	/* a new interval of the same boot after a reset reuses the chain id */
	mem_agg_reset(a);
	s = smp(KADDR + 8, KIP, LD_HITM);
	s.callchain = chain1;
	s.callchain_nr = ARRAY_SIZE(chain1);
	mem_agg_add(a, &s);
	db_exec(db, "INSERT INTO intervals (interval_id, boot_id, start_ns, end_ns) VALUES (8, 1, 60e9, 120e9)");
	CHECK_INT(mem_agg_write(a, db, 1, 8, NULL, NULL), ==, 0);
	CHECK_INT(q(db, "SELECT count(*) FROM callchains"), ==, 1);
	CHECK_INT(q(db, "SELECT count(DISTINCT callchain_id) FROM mem_lines WHERE callchain_id <> 0"), ==, 1);
	mem_agg_free(a);
	db_close(db);
	unlink(dbpath);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	RUN(test_line_size);
	RUN(test_host_line_size);
	RUN(test_classes_and_weight);
	RUN(test_user_and_cap);
	RUN(test_many);
	RUN(test_callchains_and_write);
	return test_exit();
}
