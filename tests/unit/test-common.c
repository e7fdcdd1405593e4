// SPDX-License-Identifier: GPL-2.0
/* The shared pieces: the u64 map, kallsyms, build-id notes, BTF layouts. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "boot.h"
#include "btf.h"
#include "csvw.h"
#include "jsonw.h"
#include "kallsyms.h"
#include "log.h"
#include "paths.h"
#include "source.h"
#include "test.h"
#include "u64map.h"
#include "util.h"

static void test_u64map(void)
{
	enum { N = 20000 };
	struct u64map *m = u64map_new();
	static char present[N];
	size_t it = 0, seen = 0;
	uint64_t k;
	void *v;

	/* Kernel-address-like keys, removals interleaved, checked against a
	 * plain array. */
	for (uint64_t i = 0; i < N; i++) {
		CHECK_INT(u64map_put(m, 0xffff888000000000ULL + i * 64, (void *)(uintptr_t)(i + 1)), ==, 0);
		present[i] = 1;
		if (i % 3 == 0) {
			uint64_t j = i / 2;

			u64map_remove(m, 0xffff888000000000ULL + j * 64);
			present[j] = 0;
		}
	}
	for (uint64_t i = 0; i < N; i++) {
		v = u64map_get(m, 0xffff888000000000ULL + i * 64);
		if (present[i])
			CHECK(v == (void *)(uintptr_t)(i + 1));
		else
			CHECK(v == NULL);
	}
	while (u64map_next(m, &it, &k, &v)) {
		uint64_t i = (k - 0xffff888000000000ULL) / 64;

		CHECK(i < N && present[i]);
		seen++;
	}
	CHECK_INT(seen, ==, u64map_count(m));
	CHECK(u64map_get(m, 0) == NULL);
	CHECK_INT(u64map_put(m, 0, (void *)1), ==, 0);	/* key 0 is a key */
	CHECK(u64map_get(m, 0) == (void *)1);
	u64map_free(m);
	u64map_free(NULL);
}

static void test_kallsyms_fixture(void)
{
	char path[64];
	struct kallsyms *ks;
	const struct ksym *s;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/mmhitm-test-kallsyms-%d", getpid());
	f = fopen(path, "w");
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81001000 t walk_pte_range\n"
	      "0000000000000000 A fixed_percpu_data\n"
	      "ffffffff81000800 T __schedule\n"
	      "ffffffffc0a00000 t mod_fn\t[kvm]\n"
	      "ffffffffc0a00100 t mod_fn2\t[kvm]\n"
	      "not a line\n", f);
	fclose(f);
	ks = kallsyms_load(path);
	CHECK(ks != NULL);
	CHECK_INT(kallsyms_count(ks), ==, 5);
	s = kallsyms_lookup(ks, 0xffffffff81000804ULL);
	CHECK(s && !strcmp(s->name, "__schedule") && s->size == 0x800 && !s->module);
	s = kallsyms_lookup(ks, 0xffffffffc0a00104ULL);
	CHECK(s && !strcmp(s->name, "mod_fn2") && s->module && !strcmp(s->module, "kvm"));
	CHECK(kallsyms_lookup(ks, 0xffffffff80000000ULL) == NULL);
	s = kallsyms_find(ks, "walk_pte_range");
	CHECK(s && s->addr == 0xffffffff81001000ULL);
	kallsyms_free(ks);

	/*
	 * As /proc/kallsyms ends: vmlinux in order, then trampolines, BPF
	 * programs and modules out of order, one of them below the rest.
	 * Aliases keep the file's order: the last is what a lookup names.
	 */
	f = fopen(path, "w");
	fputs("ffffffff81000000 T _stext\n"
	      "ffffffff81000000 T _text\n"
	      "ffffffff81000100 t walk_pte_range\n"
	      "ffffffff82000000 D vmemmap_base\n"
	      "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	      "ffffffffc0023164 t bpf_prog_1_mm_snapshot\t[bpf]\n"
	      "ffffffffc0026c90 t bpf_prog_2_mm_snapshot\t[bpf]\n"
	      "ffffffffc0a00000 t mod_fn\t[kvm]\n"
	      "ffffffffc0010000 t early_mod_fn\t[xfs]\n"
	      "ffffffffc0026c90 t bpf_prog_2_alias\t[bpf]\n", f);
	fclose(f);
	ks = kallsyms_load(path);
	CHECK(ks != NULL);
	CHECK_INT(kallsyms_count(ks), ==, 10);
	s = kallsyms_lookup(ks, 0xffffffff81000010ULL);
	CHECK(s && !strcmp(s->name, "_text") && s->size == 0x100);
	s = kallsyms_lookup(ks, 0xffffffffc0010004ULL);
	CHECK(s && !strcmp(s->name, "early_mod_fn") && !strcmp(s->module, "xfs") &&
	      s->size == 0xc0023164ULL - 0xc0010000ULL);
	s = kallsyms_lookup(ks, 0xffffffffc0023170ULL);
	CHECK(s && !strcmp(s->name, "bpf_prog_1_mm_snapshot") &&
	      s->size == 0xc0026c90ULL - 0xc0023164ULL);
	s = kallsyms_lookup(ks, 0xffffffffc0026c94ULL);
	CHECK(s && !strcmp(s->name, "bpf_prog_2_alias") && !strcmp(s->module, "bpf"));
	s = kallsyms_lookup(ks, 0xffffffffc0201008ULL);
	CHECK(s && !strcmp(s->name, "ftrace_trampoline") && s->size == 0x7ff000);
	s = kallsyms_lookup(ks, 0xffffffffc0a00008ULL);
	CHECK(s && !strcmp(s->name, "mod_fn") && !strcmp(s->module, "kvm") && s->size == 4096);
	/* vmlinux's last symbol before the module gap (over 16 MB): a page. */
	s = kallsyms_lookup(ks, 0xffffffff82000008ULL);
	CHECK(s && !strcmp(s->name, "vmemmap_base") && s->size == 4096);
	kallsyms_free(ks);

	/* kptr_restrict: every address zero means we may not see them. */
	f = fopen(path, "w");
	fputs("0000000000000000 T _text\n0000000000000000 T schedule\n", f);
	fclose(f);
	errno = 0;
	CHECK(kallsyms_load(path) == NULL && errno == EPERM);
	unlink(path);
}

static void test_kallsyms_live(void)
{
	struct kallsyms *ks = kallsyms_load(NULL);
	const struct ksym *s, *t;

	if (!ks) {
		printf("skipping live kallsyms: %s\n", strerror(errno));
		return;
	}
	s = kallsyms_find(ks, "schedule");
	CHECK(s != NULL);
	if (s) {
		t = kallsyms_lookup(ks, s->addr + 1);
		CHECK(t && !strcmp(t->name, "schedule"));
	}
	/* Modules and BPF programs come last, out of order: still found. */
	s = kallsyms_find(ks, "ftrace_trampoline");
	if (s) {
		t = kallsyms_lookup(ks, s->addr);
		CHECK(t && t->addr == s->addr);
	}
	kallsyms_free(ks);
}

static void test_build_id(void)
{
	/* An Elf64_Nhdr stream: a foreign note, then the GNU build-id. */
	unsigned char notes[] = {
		5, 0, 0, 0,  4, 0, 0, 0,  1, 0, 0, 0,  'X', 'e', 'n', 0, 0, 0, 0, 0,  1, 2, 3, 4,
		4, 0, 0, 0,  4, 0, 0, 0,  3, 0, 0, 0,  'G', 'N', 'U', 0,  0xde, 0xad, 0xbe, 0xef,
	};
	char buf[64], small[4];
	FILE *p;

	CHECK_INT(build_id_from_notes(notes, sizeof(notes), buf, sizeof(buf)), ==, 0);
	CHECK_STR(buf, "deadbeef");
	CHECK_INT(build_id_from_notes(notes, 20, buf, sizeof(buf)), ==, -EBADMSG);
	CHECK_INT(build_id_from_notes(notes, 24, buf, sizeof(buf)), ==, -ENODATA);
	CHECK_INT(build_id_from_notes(notes, sizeof(notes), small, sizeof(small)), ==, -ENOBUFS);

	/* This kernel's, against perf's own reading of it. */
	p = popen("perf buildid-list -k 2>/dev/null", "r");
	if (p) {
		char want[128] = "", have[128] = "";
		unsigned char raw[4096];
		FILE *n = fopen("/sys/kernel/notes", "r");

		if (fgets(want, sizeof(want), p) && n) {
			size_t len = fread(raw, 1, sizeof(raw), n);

			want[strcspn(want, "\n")] = '\0';
			CHECK_INT(build_id_from_notes(raw, len, have, sizeof(have)), ==, 0);
			CHECK_STR(have, want);
		} else {
			printf("skipping live build-id: no perf or /sys/kernel/notes\n");
		}
		if (n)
			fclose(n);
		pclose(p);
	}
}

static void test_btf_live(void)
{
	struct btf_layout l = {};
	const struct btf_field *page, *flags, *mm, *f;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		printf("skipping BTF: no /sys/kernel/btf/vmlinux\n");
		return;
	}
	CHECK_INT(btf_layout_collect(NULL, &l), ==, 0);
	page = btf_layout_find(&l, "page", "");
	flags = btf_layout_find(&l, "page", "flags");
	mm = btf_layout_find(&l, "mm_struct", "");
	CHECK(page && page->size >= 32 && page->size % 8 == 0);
	CHECK(flags && flags->offset == 0 && flags->size == 8);
	CHECK(mm && mm->size > 512);
	/* Fields of anonymous structs are flattened into the struct:
	 * mm_count leads its own cache line, membarrier_state follows. */
	f = btf_layout_find(&l, "mm_struct", "mm_count");
	CHECK(f && f->offset == 0 && f->size == 4);
	f = btf_layout_find(&l, "mm_struct", "membarrier_state");
	CHECK(f && f->offset >= 64 && f->offset < mm->size);
	f = btf_layout_find(&l, "lruvec", "lru_lock");
	CHECK(f && f->size >= 4);
	/* Named nested members get dotted paths (lruvec.lrugen.max_seq
	 * exists only with LRU_GEN: then it must be inside lrugen). */
	f = btf_layout_find(&l, "lruvec", "lrugen.max_seq");
	if (f) {
		const struct btf_field *g = btf_layout_find(&l, "lruvec", "lrugen");

		CHECK(g && f->offset >= g->offset && f->offset < g->offset + g->size);
	}
	btf_layout_done(&l);
	CHECK_INT(btf_layout_collect("/nonexistent/btf", &l), <, 0);
}

static void test_parse_time(void)
{
	int64_t now = 1742169600 * NSEC_PER_SEC, t = 0;

	CHECK_INT(parse_time_ns("2025-03-10", now, &t), ==, 0);
	CHECK_INT(t / NSEC_PER_SEC, ==, 1741564800);
	CHECK_INT(parse_time_ns("2025-03-10T12:30", now, &t), ==, 0);
	CHECK_INT(t / NSEC_PER_SEC, ==, 1741564800 + 12 * 3600 + 1800);
	CHECK_INT(parse_time_ns("2025-03-10 12:30:15Z", now, &t), ==, 0);
	CHECK_INT(t / NSEC_PER_SEC, ==, 1741564800 + 12 * 3600 + 1815);
	CHECK_INT(parse_time_ns("@100", now, &t), ==, 0);
	CHECK_INT(t, ==, 100 * NSEC_PER_SEC);
	CHECK_INT(parse_time_ns("-7d", now, &t), ==, 0);
	CHECK_INT(t, ==, now - 7 * 86400 * NSEC_PER_SEC);
	CHECK_INT(parse_time_ns("2h", now, &t), ==, 0);		/* top's form */
	CHECK_INT(t, ==, now - 2 * 3600 * NSEC_PER_SEC);
	CHECK_INT(parse_time_ns("now", now, &t), ==, 0);
	CHECK_INT(t, ==, now);
	/* now is Monday 2025-03-17 00:00 UTC; 13:45 on it for the words */
	CHECK_INT(parse_time_ns("today", now + 49500 * NSEC_PER_SEC, &t), ==, 0);
	CHECK_INT(t, ==, now);
	CHECK_INT(parse_time_ns("yesterday", now + 49500 * NSEC_PER_SEC, &t), ==, 0);
	CHECK_INT(t, ==, now - 86400 * NSEC_PER_SEC);
	CHECK_INT(parse_time_ns("this-week", now + 3 * 86400 * NSEC_PER_SEC, &t), ==, 0);
	CHECK_INT(t, ==, now);
	CHECK_INT(parse_time_ns("last-week", now + 6 * 86400 * NSEC_PER_SEC, &t), ==, 0);
	CHECK_INT(t, ==, now - 7 * 86400 * NSEC_PER_SEC);
	CHECK_INT(parse_time_ns("last-week", now, &t), ==, 0);
	CHECK_INT(t, ==, now - 7 * 86400 * NSEC_PER_SEC);
	CHECK_INT(parse_time_ns("2025-W12", now, &t), ==, 0);		/* date -d 2025-03-17 */
	CHECK_INT(t, ==, now);
	CHECK_INT(parse_time_ns("2025-W01", now, &t), ==, 0);		/* 2024-12-30 */
	CHECK_INT(t / NSEC_PER_SEC, ==, 1735516800);
	CHECK_INT(parse_time_ns("2020-W53", now, &t), ==, 0);		/* 2020-12-28 */
	CHECK_INT(t / NSEC_PER_SEC, ==, 1609113600);
	CHECK_INT(parse_time_ns("2024-02-29", now, &t), ==, 0);		/* a leap day */
	CHECK_INT(t / NSEC_PER_SEC, ==, 1709164800);
	for (const char *const *bad = (const char *const[]){ "tomorrow", "2025-13-01", "2025-03-10T25:00",
							  "2025-03-10x", "@", "@-5", "-", "", "2025-03", "7x", NULL }; *bad; bad++)
		CHECK_INT(parse_time_ns(*bad, now, &t), ==, -EINVAL);
}

static void test_jsonw(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct jsonw w;

	CHECK(f != NULL);
	if (!f)
		return;
	jsonw_init(&w, f);
	jsonw_object(&w, NULL);
	jsonw_str(&w, "host", "a\"b<c>\n");
	jsonw_array(&w, "v");
	jsonw_int(&w, NULL, -3);
	jsonw_num(&w, NULL, 0.5);
	jsonw_num(&w, NULL, 1.0 / 0.0);
	jsonw_num(&w, NULL, -1.0 / 0.0);
	jsonw_num(&w, NULL, 0.0 / 0.0);
	jsonw_end(&w);
	jsonw_object(&w, "empty");
	jsonw_end(&w);
	jsonw_array(&w, "none");
	jsonw_end(&w);
	jsonw_bool(&w, "ok", true);
	jsonw_null(&w, "n");
	jsonw_str(&w, "s", NULL);
	jsonw_uint(&w, "u", UINT64_MAX);
	jsonw_numg(&w, "g", 3, 3.14159);
	jsonw_end(&w);
	CHECK_INT(jsonw_finish(&w), ==, 0);
	fclose(f);
	CHECK_STR(buf, "{\"host\":\"a\\\"b\\u003cc\\u003e\\n\",\"v\":[-3,0.5,\"inf\",\"-inf\",null],"
		       "\"empty\":{},\"none\":[],\"ok\":true,\"n\":null,\"s\":null,"
		       "\"u\":18446744073709551615,\"g\":3.14}\n");
	free(buf);

	/* unbalanced: an end too many, or one missing */
	f = open_memstream(&buf, &len);
	jsonw_init(&w, f);
	jsonw_array(&w, NULL);
	CHECK_INT(jsonw_finish(&w), ==, -EINVAL);
	jsonw_end(&w);
	jsonw_end(&w);
	CHECK_INT(jsonw_finish(&w), ==, -EINVAL);
	fclose(f);
	free(buf);
}

/* jsonw_num(): the shortest of %.15g and %.17g that reads back equal. */
static void test_jsonw_num(void)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0.95, "0.95" },
		{ 7.33791652, "7.33791652" },
		{ 0.1 + 0.2, "0.30000000000000004" },
		{ 1.0 / 3, "0.33333333333333331" },
		{ 100, "100" },
		{ -2.5e-7, "-2.5e-07" },
		{ 1e300, "1e+300" },
		{ 0, "0" },
	};
	unsigned int seed = 1;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct jsonw w;

		CHECK(f != NULL);
		if (!f)
			return;
		jsonw_init(&w, f);
		jsonw_num(&w, NULL, cases[i].v);
		fclose(f);
		CHECK_STR(buf, cases[i].text);
		free(buf);
	}
	/* any double reads back as itself */
	for (int i = 0; i < 10000; i++) {
		uint64_t bits = ((uint64_t)rand_r(&seed) << 42) ^ ((uint64_t)rand_r(&seed) << 21) ^
				(uint64_t)rand_r(&seed);
		double v, back;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct jsonw w;

		memcpy(&v, &bits, sizeof(v));
		if (!f || isnan(v) || isinf(v)) {
			if (f)
				fclose(f);
			free(buf);
			continue;
		}
		jsonw_init(&w, f);
		jsonw_num(&w, NULL, v);
		fclose(f);
		back = strtod(buf, NULL);
		if (back != v)
			CHECK_STR(buf, "a double that reads back equal");
		free(buf);
	}
}

static void test_csvw(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct csvw w;

	CHECK(f != NULL);
	if (!f)
		return;
	csvw_init(&w, f);
	csvw_str(&w, "plain");
	csvw_str(&w, "a,b");
	csvw_str(&w, "say \"hi\"");
	csvw_str(&w, NULL);
	csvw_int(&w, -7);
	csvw_num(&w, 0.0 / 0.0);
	csvw_num(&w, 0.5);
	csvw_str(&w, "esc\x1b[31m");
	csvw_end(&w);
	csvw_int(&w, 1);
	csvw_end(&w);
	fclose(f);
	CHECK_STR(buf, "plain,\"a,b\",\"say \"\"hi\"\"\",,-7,,0.5,esc?[31m\n1\n");
	free(buf);

	/* A field past the 1 KiB on the stack (a report's reason): whole, quoted, escaped. */
	{
		char lng[3001], want[3100];

		memset(lng, 'x', sizeof(lng) - 1);
		lng[sizeof(lng) - 1] = '\0';
		lng[0] = ',';
		lng[2998] = '\n';
		buf = NULL;
		f = open_memstream(&buf, &len);
		CHECK(f != NULL);
		if (!f)
			return;
		csvw_init(&w, f);
		csvw_str(&w, lng);
		csvw_end(&w);
		fclose(f);
		lng[2998] = '?';
		snprintf(want, sizeof(want), "\"%s\"\n", lng);
		CHECK_STR(buf, want);
		free(buf);
	}
}

static void test_sources(void)
{
	struct sources s = {};
	char dir[] = "/tmp/mmhitm-src.XXXXXX", path[64];

	CHECK_INT(sources_add(&s, "clickhouse://ops@ch1:9000/mm?max_threads=2"), ==, 0);
	CHECK_INT(s.n, ==, 1);
	CHECK(sources_clickhouse(&s));
	CHECK_STR(s.v[0].url, "http://ch1:9000/?max_threads=2");
	CHECK_STR(s.v[0].database, "mm");
	CHECK_STR(s.v[0].user, "ops");
	/* One cluster per command, and never a cluster beside files. */
	CHECK_INT(sources_add(&s, "clickhouse://ch2/mm"), ==, -EINVAL);
	CHECK_INT(sources_add(&s, "a.db"), ==, -EINVAL);
	sources_done(&s);

	CHECK_INT(sources_add(&s, "clickhouses://ch1/fleet"), ==, 0);
	CHECK_STR(s.v[0].url, "https://ch1:8443/");
	CHECK_STR(s.v[0].database, "fleet");
	CHECK(s.v[0].user == NULL);
	sources_done(&s);
	CHECK_INT(sources_add(&s, "http://127.0.0.1:8123/?database=mm&x=1"), ==, 0);
	CHECK_STR(s.v[0].database, "mm");
	sources_done(&s);
	CHECK_INT(sources_add(&s, "clickhouse://ch1"), ==, -EINVAL);	/* no database */
	CHECK_INT(sources_add(&s, "clickhouse://ch1/"), ==, -EINVAL);
	CHECK_INT(sources_add(&s, "http://ch1:8123/"), ==, -EINVAL);
	CHECK_INT(sources_add(&s, "ftp://ch1/mm"), ==, -EINVAL);
	sources_done(&s);

	/* Globs expand sorted; a plain path stays as given. */
	CHECK(mkdtemp(dir) != NULL);
	for (int i = 2; i >= 0; i--) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/h%d.db", dir, i);
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f)
			fclose(f);
	}
	snprintf(path, sizeof(path), "%s/*.db", dir);
	CHECK_INT(sources_add(&s, path), ==, 0);
	CHECK_INT(sources_add(&s, "missing.db"), ==, 0);
	CHECK_INT(s.n, ==, 4);
	CHECK(!sources_clickhouse(&s));
	if (s.n == 4) {
		CHECK(strstr(s.v[0].path, "/h0.db") != NULL);
		CHECK(strstr(s.v[2].path, "/h2.db") != NULL);
		CHECK_STR(s.v[3].path, "missing.db");
	}
	snprintf(path, sizeof(path), "%s/*.sqlite", dir);
	CHECK_INT(sources_add(&s, path), ==, -EINVAL);	/* matches nothing */
	CHECK_INT(sources_add(&s, "clickhouse://ch1/mm"), ==, -EINVAL);
	sources_done(&s);
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/h%d.db", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

/* Each work source has its unit: `unit` the first's, `unit_of` the others'. */
/* shrink_array() keeps the elements and the bookkeeping grow_array() goes on from. */
static void test_shrink_array(void)
{
	int *a = NULL;
	size_t alloc = 0;

	CHECK_INT(grow_array((void **)&a, &alloc, sizeof(*a), 3), ==, 0);
	CHECK_INT(alloc, ==, 16);	/* grow_array's first room */
	if (!a)
		return;
	for (int i = 0; i < 3; i++)
		a[i] = 10 + i;
	shrink_array((void **)&a, &alloc, sizeof(*a), 3);
	CHECK_INT(alloc, ==, 3);
	CHECK(a[0] == 10 && a[1] == 11 && a[2] == 12);
	shrink_array((void **)&a, &alloc, sizeof(*a), 0);	/* nothing to keep: kept as is */
	CHECK_INT(alloc, ==, 3);
	CHECK_INT(grow_array((void **)&a, &alloc, sizeof(*a), 4), ==, 0);
	CHECK_INT(alloc, ==, 6);
	a[3] = 13;
	CHECK(a[0] == 10 && a[2] == 12 && a[3] == 13);
	shrink_array((void **)&a, NULL, sizeof(*a), 4);	/* no count to follow */
	CHECK(a[3] == 13);
	free(a);
}

static void test_path_units(void)
{
	static const char head[] = "path P1\n\ttitle t\n\tunit same-mm context switches\n\tper 1000\n"
		"\twork derived:same_mm_switches sched:sched_switch\n";
	char text[512];
	const struct path_def *p;

	snprintf(text, sizeof(text), "%s\tunit_of sched:sched_switch  all context switches \n", head);
	CHECK_INT(paths_parse(text, strlen(text), "test"), ==, 0);
	p = path_get(0);
	CHECK(p != NULL);
	if (p) {
		CHECK_STR(path_work_unit(p, "derived:same_mm_switches"), "same-mm context switches");
		CHECK_STR(path_work_unit(p, "sched:sched_switch"), "all context switches");
		CHECK(path_work_unit(p, "tlb:tlb_flush") == NULL);
	}
	/* a later source without its unit would borrow the first one's */
	CHECK_INT(paths_parse(head, strlen(head), "test"), ==, -EINVAL);
	snprintf(text, sizeof(text), "%s\tunit_of tlb:tlb_flush flushes\n", head);
	CHECK_INT(paths_parse(text, strlen(text), "test"), ==, -EINVAL);
	snprintf(text, sizeof(text), "%s\tunit_of sched:sched_switch\n", head);
	CHECK_INT(paths_parse(text, strlen(text), "test"), ==, -EINVAL);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	RUN(test_parse_time);
	RUN(test_jsonw);
	RUN(test_jsonw_num);
	RUN(test_csvw);
	RUN(test_sources);
	RUN(test_u64map);
	RUN(test_kallsyms_fixture);
	RUN(test_kallsyms_live);
	RUN(test_build_id);
	RUN(test_btf_live);
	RUN(test_shrink_array);
	RUN(test_path_units);	/* last: it replaces the path table */
	return test_exit();
}
