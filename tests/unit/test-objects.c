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
#include "analyzer-fixture.h"

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
	/* nothing known, no pairs: the reason says calibration is missing too */
	objects_resolve(o, FIX_VMEMMAP + 64 * 1000, t0, t0 + s, &t);
	CHECK(t.object_type == NULL);
	CHECK(strstr(t.reason, "vmemmap not calibrated") != NULL);

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
	CHECK_STR(t.reason, "no known object here");
out:
	objects_free(o);
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
	RUN(test_symtab);
	return test_exit();
}
