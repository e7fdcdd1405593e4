// SPDX-License-Identifier: GPL-2.0
/*
 * Object resolution without DWARF: vmemmap calibration and its consistency
 * check, field naming from a real kernel's BTF layouts, mm_struct lifetimes,
 * anchored lruvecs, and symbolization against stored ksyms.
 */
#include <errno.h>
#include <inttypes.h>

#include "log.h"
#include "objects.h"
#include "symtab.h"
#include "test.h"
#include "engine-fixture.h"

static int ex_objects(sqlite3 *db, const char *sql)
{
	return db_exec(db, sql);
}

static void test_calibrate(void)
{
	struct page_pair p[64];
	struct vmemmap_cal cal;
	size_t n = 0;

	/* 40 pairs, pfns spread as pagemap events sample them */
	for (uint64_t i = 0; i < 40; i++, n++)
		p[n] = (struct page_pair){ 0x100000 + i * 256 + (i % 3), 0 };
	for (size_t i = 0; i < n; i++)
		p[i].folio = FIX_VMEMMAP + p[i].pfn * 64;
	vmemmap_calibrate(p, n, 64, &cal);
	CHECK(cal.ok);
	CHECK_INT(cal.base, ==, FIX_VMEMMAP);
	CHECK_INT(cal.agree, ==, 40);
	CHECK_INT(cal.stride, ==, 64);

	/* one stray pair (a stale pointer) out of 40: still calibrated */
	p[7].folio += 0x1000;
	vmemmap_calibrate(p, n, 64, &cal);
	CHECK(cal.ok);
	CHECK_INT(cal.base, ==, FIX_VMEMMAP);
	CHECK_INT(cal.agree, ==, 39);

	/* BTF unknown: the stride between pairs gives sizeof(struct page) */
	vmemmap_calibrate(p, n, 0, &cal);
	CHECK(cal.ok);
	CHECK_INT(cal.page_size, ==, 64);

	/* BTF says 80 (a debug kernel) but the pairs step by 64: refuse */
	vmemmap_calibrate(p, n, 80, &cal);
	CHECK(!cal.ok);
	CHECK(strstr(cal.text, "BTF") != NULL);

	/* half the pairs from another base: refuse rather than guess */
	for (size_t i = 0; i < n; i += 2)
		p[i].folio += 0x40000000;
	vmemmap_calibrate(p, n, 64, &cal);
	CHECK(!cal.ok);

	/* one pair: a base, the stride unmeasured */
	p[0] = (struct page_pair){ 0x1234, FIX_VMEMMAP + 0x1234 * 64 };
	vmemmap_calibrate(p, 1, 64, &cal);
	CHECK(cal.ok);
	CHECK_INT(cal.stride, ==, 0);
	CHECK(strstr(cal.text, "unmeasured") != NULL);

	vmemmap_calibrate(p, 0, 64, &cal);
	CHECK(!cal.ok);
}

static const char *field_at(const struct objects *o, const char *st, uint32_t off, uint32_t *fo)
{
	static char name[128];
	const struct layout *l = objects_layout(o, st);

	if (!l || !layout_field_at(l, off, name, sizeof(name), fo))
		return "(none)";
	return name;
}

static void test_fields(void)
{
	sqlite3 *db = fix_db("objects");
	struct objects *o = objects_new();
	uint32_t fo = 99;

	CHECK(db && o);
	if (!db || !o)
		goto out;
	CHECK_INT(objects_load(o, db, 1), ==, 0);
	/* 6.12.117: mm_struct.lru_gen.bitmap at 1312 (bpftool agrees) */
	CHECK_STR(field_at(o, "mm_struct", 1312, &fo), "lru_gen.bitmap");
	CHECK_INT(fo, ==, 0);
	CHECK_STR(field_at(o, "mm_struct", 1315, &fo), "lru_gen.bitmap");
	CHECK_INT(fo, ==, 3);
	CHECK_STR(field_at(o, "mm_struct", 1296, &fo), "lru_gen.list.next");
	CHECK_STR(field_at(o, "mm_struct", 0, &fo), "mm_count");
	CHECK_STR(field_at(o, "mm_struct", 2, &fo), "mm_count");
	CHECK_INT(fo, ==, 2);
	CHECK_STR(field_at(o, "mm_struct", 128, &fo), "membarrier_state");
	/* padding after mm_count up to the next cache line */
	CHECK_STR(field_at(o, "mm_struct", 8, &fo), "(none)");
	/* lruvec: the lock, the age, an element of the list array */
	CHECK_STR(field_at(o, "lruvec", 80, &fo), "lru_lock");
	CHECK_STR(field_at(o, "lruvec", 104, &fo), "nonresident_age");
	CHECK_STR(field_at(o, "lruvec", 72, &fo), "lists[4]");
	CHECK_INT(fo, ==, 8);
	/* folio: flags, not the aliased page member; the LRU list, not a filler */
	CHECK_STR(field_at(o, "folio", 0, &fo), "flags");
	CHECK_STR(field_at(o, "folio", 8, &fo), "lru.next");
	CHECK_STR(field_at(o, "folio", 52, &fo), "_refcount");
out:
	objects_free(o);
	db_close(db);
	fix_unlink();
}

static void test_resolve(void)
{
	sqlite3 *db = fix_db("resolve");
	struct objects *o = objects_new();
	struct typed_addr t;
	const int64_t s = FIX_SEC, t0 = FIX_T0;

	CHECK(db && o);
	if (!db || !o)
		goto out;
	/* one mm alive through [t0+10s, t0+20s); then its address reused */
	CHECK_INT(objects_add_mm(o, 1, FIX_MM, t0 + 10 * s, t0 + 20 * s, t0 + 10 * s), ==, 0);
	CHECK_INT(objects_add_mm(o, 2, FIX_MM, t0 + 25 * s, INT64_MAX, t0 + 25 * s), ==, 0);
	/* an mm older than the recorder, never freed */
	CHECK_INT(objects_add_mm(o, 3, FIX_MM + 0x1000, INT64_MIN, INT64_MAX, t0 + 30 * s), ==, 0);
	CHECK_INT(objects_add_lock(o, 5, FIX_LOCK), ==, 0);
	CHECK_INT(objects_add_lock(o, 6, 0xffff888100999000ULL), ==, 0);
	CHECK_INT(objects_load(o, db, 1), ==, 0);	/* layouts; no pairs in the DB */
	/* (loading reads anchored_objects afresh: add after it) */
	CHECK_INT(objects_add_anchored(o, 7, "lruvec", FIX_LOCK - 80, 1560), ==, 0);
	objects_set_cpus(o, 4);

	objects_resolve(o, FIX_MM + 1312, t0 + 12 * s, t0 + 14 * s, &t);
	CHECK_STR(t.object_type, "mm_struct");
	CHECK_INT(t.object_ref, ==, 1);
	CHECK_STR(t.field, "lru_gen.bitmap");
	/* the same address after the free and the reuse: the new owner */
	objects_resolve(o, FIX_MM + 1312, t0 + 26 * s, t0 + 28 * s, &t);
	CHECK_INT(t.object_ref, ==, 2);
	/* between the two: nobody */
	objects_resolve(o, FIX_MM + 1312, t0 + 21 * s, t0 + 23 * s, &t);
	CHECK(t.object_type == NULL);
	CHECK(strstr(t.reason, "not alive") != NULL);
	/* an interval with both (freed and reused in it): the longer overlap */
	objects_resolve(o, FIX_MM, t0 + 19 * s, t0 + 30 * s, &t);
	CHECK_INT(t.object_ref, ==, 2);
	/* behind sizeof: the dynamically sized cpumasks (cpu_bitmap) */
	objects_resolve(o, FIX_MM + 1344 + 8, t0 + 12 * s, t0 + 13 * s, &t);
	CHECK_STR(t.field, "cpu_bitmap");
	CHECK_INT(t.field_offset, ==, 8);
	/* mm 3 has no lifetime bounds: alive at any time */
	objects_resolve(o, FIX_MM + 0x1000 + 128, t0, t0 + s, &t);
	CHECK_INT(t.object_ref, ==, 3);
	CHECK_STR(t.field, "membarrier_state");

	/* the anchored lruvec: lock and age, on one line */
	objects_resolve(o, FIX_LOCK, t0, t0 + s, &t);
	CHECK_STR(t.object_type, "lruvec");
	CHECK_STR(t.field, "lru_lock");
	CHECK_INT(t.object_ref, ==, 7);
	objects_resolve(o, FIX_LOCK - 80 + 104, t0, t0 + s, &t);
	CHECK_STR(t.field, "nonresident_age");
	/* a contended lock no anchor explains: typed as nothing, and said so */
	objects_resolve(o, 0xffff888100999000ULL + 2, t0, t0 + s, &t);
	CHECK(t.object_type == NULL);
	CHECK(strstr(t.reason, "lock_objects 6") != NULL);
	CHECK(strstr(t.reason, "vmemmap") == NULL);
	/* nothing known, no pairs: the reason names the input that would
	 * type it, the option first */
	objects_resolve(o, FIX_VMEMMAP + 64 * 1000, t0, t0 + s, &t);
	CHECK(t.object_type == NULL);
	CHECK(strstr(t.reason, "pass --vmemmap-base (or import on the recording host)") != NULL);

	/* with a calibration, a struct page and its folio field */
	{
		struct vmemmap_cal cal = { .ok = true, .base = FIX_VMEMMAP, .page_size = 64 };

		objects_set_vmemmap(o, &cal);
	}
	objects_resolve(o, FIX_VMEMMAP + 64 * 0x12345 + 3, t0, t0 + s, &t);
	CHECK_STR(t.object_type, "page");
	CHECK_INT(t.object_ref, ==, 0x12345);
	CHECK_STR(t.field, "flags");
	CHECK_INT(t.field_offset, ==, 3);
	objects_resolve(o, FIX_VMEMMAP - 8, t0, t0 + s, &t);
	CHECK(t.object_type == NULL);
	CHECK(startswith(t.reason, "no known object here"));
	CHECK(strstr(t.reason, "vmemmap") == NULL);
	/* user space and kernel static data are typed by where they lie */
	objects_resolve(o, 0x00007f1234567000ULL, t0, t0 + s, &t);
	CHECK_STR(t.object_type, "user");
	CHECK_STR(t.grade, "layout");
	objects_resolve(o, 0xffffffff82000010ULL, t0, t0 + s, &t);
	CHECK(t.object_type == NULL);
	CHECK(strstr(t.reason, "--kallsyms") != NULL);
	/*
	 * Static data by the symbol that holds it; never by a section bound
	 * (a kernel without CONFIG_KALLSYMS_ALL names little else: this one's
	 * next symbol is 2 MiB further).
	 */
	CHECK_INT(db_exec(db, "INSERT INTO ksyms(boot_id, addr, size, name, module) VALUES"
			  " (1, -2097152000, 1792, 'contig_page_data', NULL),"
			  " (1, -2080374784, 2267720, '__start_init_stack', NULL)"), ==, 0);
	objects_free(o);
	o = objects_new();
	CHECK(o != NULL);
	if (!o)
		goto out;
	CHECK_INT(objects_load(o, db, 1), ==, 0);
	objects_resolve(o, (uint64_t)-2097152000LL + 0x500, t0, t0 + s, &t);
	CHECK_STR(t.object_type, "contig_page_data");
	CHECK_INT(t.object_offset, ==, 0x500);
	CHECK_STR(t.grade, "layout");
	objects_resolve(o, (uint64_t)-2080374784LL + 0xf30f8, t0, t0 + s, &t);
	CHECK(t.object_type == NULL);
	CHECK(strstr(t.reason, "__start_init_stack+0xf30f8, a section bound") != NULL);
out:
	objects_free(o);
	db_close(db);
	fix_unlink();
}


/*
 * Learned mm_structs and locks are read from the database only near the
 * addresses resolved (a boot's history holds hundreds of thousands of
 * them), and that resolves exactly as the whole set in memory does.
 */
static void test_lazy(void)
{
	sqlite3 *db = fix_db("lazy");
	struct objects *lazy = objects_new(), *full = objects_new();
	_cleanup_finalize_ sqlite3_stmt *mm = NULL, *lk = NULL;
	const int64_t s = FIX_SEC, t0 = FIX_T0;
	/* slots 0x400 apart: closer than sizeof(mm_struct) + cpumasks, so a
	 * neighbour's tail overlaps; addresses reused every 64 objects */
	const uint64_t base = 0xffff888200000000ULL, step = 0x400;
	const int n = 2000, nlocks = 500;
	size_t n_mm = 0, n_locks = 0, differ = 0;
	uint64_t rnd = 12345;

	CHECK(db && lazy && full);
	if (!db || !lazy || !full)
		goto out;
	CHECK_INT(db_prepare(db, &mm, "INSERT INTO mm_objects(mm_object_id, boot_id, addr, learned_from,"
			     " alloc_ns, free_ns, first_seen_ns, last_seen_ns) VALUES (?1, 1, ?2, 'fork', ?3, ?4, ?5, ?5)"), ==, 0);
	CHECK_INT(db_prepare(db, &lk, "INSERT INTO lock_objects(lock_object_id, boot_id, addr, flags,"
			     " contentions, first_seen_ns, last_seen_ns) VALUES (?1, 1, ?2, 1, 1, ?3, ?3)"), ==, 0);
	CHECK_INT(db_begin(db), ==, 0);
	for (int i = 1; i <= n; i++) {
		uint64_t addr = base + (uint64_t)(i % 64) * step;
		int64_t a0 = t0 + i * s, a1 = a0 + 3 * s;
		/* some from before the recorder, some never freed */
		bool old = i % 17 == 0, live = i % 13 == 0;

		sqlite3_bind_int64(mm, 1, i);
		sqlite3_bind_int64(mm, 2, (int64_t)addr);
		if (old)
			sqlite3_bind_null(mm, 3);
		else
			sqlite3_bind_int64(mm, 3, a0);
		if (live)
			sqlite3_bind_null(mm, 4);
		else
			sqlite3_bind_int64(mm, 4, a1);
		sqlite3_bind_int64(mm, 5, a0);
		CHECK_INT(db_step_done(db, mm), ==, 0);
		CHECK_INT(objects_add_mm(full, i, addr, old ? INT64_MIN : a0, live ? INT64_MAX : a1, a0), ==, 0);
	}
	for (int i = 1; i <= nlocks; i++) {
		uint64_t addr = base + 0x100000 + (uint64_t)i * 8;

		sqlite3_bind_int64(lk, 1, i);
		sqlite3_bind_int64(lk, 2, (int64_t)addr);
		sqlite3_bind_int64(lk, 3, t0);
		CHECK_INT(db_step_done(db, lk), ==, 0);
		CHECK_INT(objects_add_lock(full, i, addr), ==, 0);
	}
	CHECK_INT(db_commit(db), ==, 0);

	CHECK_INT(objects_load(lazy, db, 1), ==, 0);
	CHECK_INT(objects_load(full, db, 1), ==, 0);	/* the layouts; its objects are added */
	objects_loaded(lazy, &n_mm, &n_locks);
	CHECK_INT(n_mm, ==, 0);
	CHECK_INT(n_locks, ==, 0);

	/* one address: only the objects that can contain it are read */
	{
		struct typed_addr t;

		objects_resolve(lazy, base + 5 * step + 8, t0 + 5 * s, t0 + 6 * s, &t);
		CHECK_STR(t.object_type, "mm_struct");
		CHECK_INT(t.object_addr, ==, base + 5 * step);
		objects_loaded(lazy, &n_mm, &n_locks);
		/* slot 5 and the 3 below whose tails reach it, ~31 objects each */
		CHECK(n_mm > 0 && n_mm <= (size_t)(4 * (n / 64 + 1)));
		CHECK_INT(n_locks, ==, 0);
	}

	/* random addresses and times, mm and lock regions: the same answers */
	for (int i = 0; i < 20000; i++) {
		struct typed_addr a, b;
		uint64_t addr;
		int64_t t;

		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		addr = (rnd >> 33) % 2 ? base + (rnd >> 20) % (66 * step) :
					 base + 0x100000 + (rnd >> 20) % (nlocks * 8 + 16);
		t = t0 + (int64_t)((rnd >> 8) % (uint64_t)(n + 10)) * s;
		objects_resolve(lazy, addr, t, t + 2 * s, &a);
		objects_resolve(full, addr, t, t + 2 * s, &b);
		if ((a.object_type == NULL) != (b.object_type == NULL) || a.object_ref != b.object_ref ||
		    a.object_offset != b.object_offset || strcmp(a.reason, b.reason) != 0 ||
		    strcmp(a.field, b.field) != 0)
			differ++;
		if (objects_lock_at(lazy, addr, NULL) != objects_lock_at(full, addr, NULL))
			differ++;
	}
	CHECK_INT(differ, ==, 0);
	CHECK_INT(objects_error(lazy), ==, 0);

	/* the signature stands for every object, read or not, and reads
	 * only the rows added since the previous one */
	{
		char a[512], b[512];

		CHECK_INT(objects_signature(lazy, NULL, a, sizeof(a)), ==, 0);
		CHECK(strstr(a, "mm_id=2000 ") != NULL);
		CHECK(strstr(a, "lock_id=500 ") != NULL);
		CHECK_INT(objects_signature(lazy, a, b, sizeof(b)), ==, 0);
		CHECK_STR(b, a);
		CHECK_INT(ex_objects(db, "INSERT INTO mm_objects(mm_object_id, boot_id, addr, learned_from,"
				     " first_seen_ns, last_seen_ns) VALUES (2001, 1, 0, 'mmap_lock', 1, 1)"), ==, 0);
		CHECK_INT(objects_signature(lazy, a, b, sizeof(b)), ==, 0);
		CHECK(strstr(b, "mm_id=2001 ") != NULL);
	}
out:
	db_finalize(mm);
	db_finalize(lk);
	mm = lk = NULL;
	objects_free(lazy);
	objects_free(full);
	db_close(db);
	fix_unlink();
}

static void test_symtab(void)
{
	struct symtab *t = symtab_new();
	char buf[128];

	CHECK(t != NULL);
	if (!t)
		return;
	CHECK_INT(symtab_add(t, 0xffffffff82265be0ULL, 3936, "__schedule", NULL), ==, 0);
	CHECK_INT(symtab_add(t, 0xffffffff815edc20ULL, 112, "workingset_age_nonresident", NULL), ==, 0);
	CHECK_INT(symtab_add(t, 0xffffffffc0a01000ULL, 0x200, "xfs_buf_lock", "xfs"), ==, 0);
	CHECK_INT(symtab_add(t, 0xffffffff81000000ULL, 0, "sizeless", NULL), ==, 0);
	symtab_format(t, 0xffffffff82265be0ULL + 0x51f, buf, sizeof(buf));
	CHECK_STR(buf, "__schedule+0x51f");
	symtab_format(t, 0xffffffffc0a01010ULL, buf, sizeof(buf));
	CHECK_STR(buf, "xfs_buf_lock+0x10 [xfs]");
	/* past the end of a sized symbol: unknown */
	symtab_format(t, 0xffffffff815edc20ULL + 112, buf, sizeof(buf));
	CHECK_STR(buf, "0xffffffff815edc90");
	CHECK(symtab_lookup(t, 0xffffffff81000000ULL + 0x100) != NULL);
	CHECK(symtab_lookup(t, 0xffffffff81000000ULL + 0x20000) == NULL);
	CHECK(symtab_lookup(t, 0x1000) == NULL);
	symtab_free(t);
	symtab_free(NULL);
	objects_free(NULL);
}

int main(void)
{
	log_set_max_level(LOG_WARNING);
	RUN(test_calibrate);
	RUN(test_fields);
	RUN(test_resolve);
	RUN(test_lazy);
	RUN(test_symtab);
	return test_exit();
}
