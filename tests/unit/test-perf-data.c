// SPDX-License-Identifier: GPL-2.0
/*
 * The perf.data reader on files built here byte by byte, for what real
 * perf cannot record on this PMU-less VM (branch stacks with hw_idx and
 * counters, STREAM_ID, TRANSACTION, AUX samples, non-group reads, empty
 * user stacks, AUXTRACE and TRACING_DATA payloads, unknown record types)
 * and for every kind of damage: each sample truncated at every byte, each
 * length field inflated, mismatched events, foreign layouts. Every error
 * must be -EBADMSG or -EPROTONOSUPPORT with the file offset in its message.
 * The real fixtures' headers are checked against perf report --header-only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf-data.h"
#include "test.h"
#include "util.h"

/* --- a little perf.data writer -------------------------------------------- */

struct buf {
	uint8_t *p;
	size_t len, alloc;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (grow_array((void **)&b->p, &b->alloc, 1, b->len + n) < 0)
		abort();
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void set64(struct buf *b, size_t off, uint64_t v) { memcpy(b->p + off, &v, 8); }
static void set16(struct buf *b, size_t off, uint16_t v) { memcpy(b->p + off, &v, 2); }

/* perf_header_string: u32 len, NUL-padded to 8 */
static void put_str(struct buf *b, const char *s)
{
	uint32_t len = (strlen(s) + 8) & ~7u;
	char pad[256] = { 0 };

	put32(b, len);
	memcpy(pad, s, strlen(s));
	put(b, pad, len);
}

/* A record: header then body words; size filled at the end. */
static size_t rec_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->len;

	put32(b, type);
	put(b, &misc, 2);
	put(b, "\0\0", 2);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	set16(b, at + 6, (uint16_t)(b->len - at));
}

#define ALL_TYPES (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |		\
	PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |	\
	PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |		\
	PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |		\
	PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |			\
	PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX)

static struct perf_event_attr all_attr(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a), .type = PERF_TYPE_RAW, .config = 0x1cd,
		.sample_type = ALL_TYPES,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_LOST,
		.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX |
				      PERF_SAMPLE_BRANCH_COUNTERS,
		.sample_regs_user = 0x7,	/* 3 registers */
		.sample_regs_intr = 0x30,	/* 2 registers */
		.sample_id_all = 1,
	};
	return a;
}

/* A sample with every field, in the kernel's order (perf_output_sample()). */
static void put_all_sample(struct buf *b, uint64_t id, uint16_t misc)
{
	size_t at = rec_begin(b, PERF_RECORD_SAMPLE, misc);

	put64(b, id);				/* IDENTIFIER */
	put64(b, 0xffffffff81234567);		/* IP */
	put32(b, 100); put32(b, 101);		/* TID */
	put64(b, 5000000000);			/* TIME */
	put64(b, 0xffff888100001040);		/* ADDR */
	put64(b, id);				/* ID */
	put64(b, 77);				/* STREAM_ID */
	put32(b, 3); put32(b, 0);		/* CPU */
	put64(b, 10007);			/* PERIOD */
	put64(b, 2);				/* READ: nr */
	put64(b, 111);				/*  time_enabled */
	put64(b, 1); put64(b, id); put64(b, 0);	/*  value, id, lost */
	put64(b, 2); put64(b, 999); put64(b, 0);
	put64(b, 4);				/* CALLCHAIN: nr */
	put64(b, (uint64_t)PERF_CONTEXT_KERNEL);
	put64(b, 0xffffffff81234567);
	put64(b, 0xffffffff81000100);
	put64(b, 0xffffffff81000200);
	put32(b, 12); put(b, "rawrawrawraw", 12);	/* RAW: 4 + 12, u64 aligned */
	put64(b, 2);				/* BRANCH_STACK: nr */
	put64(b, 5);				/*  hw_idx */
	for (int i = 0; i < 6; i++)		/*  2 x {from, to, flags} */
		put64(b, 0x400000 + i);
	put64(b, 1); put64(b, 2);		/*  counters */
	put64(b, PERF_SAMPLE_REGS_ABI_64);	/* REGS_USER */
	put64(b, 1); put64(b, 2); put64(b, 3);
	put64(b, 16);				/* STACK_USER: size */
	put64(b, 0xaaaa); put64(b, 0xbbbb);
	put64(b, 12);				/*  dyn_size */
	put64(b, 300 | (uint64_t)40 << 32 | (uint64_t)7 << 48);	/* WEIGHT_STRUCT */
	put64(b, 0x68100142);			/* DATA_SRC */
	put64(b, 0x1234);			/* TRANSACTION */
	put64(b, PERF_SAMPLE_REGS_ABI_64);	/* REGS_INTR */
	put64(b, 4); put64(b, 5);
	put64(b, 0x12345000);			/* PHYS_ADDR */
	put64(b, 42);				/* CGROUP */
	put64(b, 4096);				/* DATA_PAGE_SIZE */
	put64(b, 2097152);			/* CODE_PAGE_SIZE */
	put64(b, 8); put64(b, 0xcccc);		/* AUX */
	rec_end(b, at);
}

static void check_all_sample(const struct perf_data_sample *s, uint64_t id)
{
	CHECK_INT(s->id, ==, id);
	CHECK(s->ip == 0xffffffff81234567);
	CHECK_INT(s->pid, ==, 100);
	CHECK_INT(s->tid, ==, 101);
	CHECK_INT(s->time, ==, 5000000000);
	CHECK(s->addr == 0xffff888100001040);
	CHECK_INT(s->stream_id, ==, 77);
	CHECK_INT(s->cpu, ==, 3);
	CHECK_INT(s->period, ==, 10007);
	CHECK_INT(s->callchain_nr, ==, 4);
	CHECK(s->callchain && s->callchain[3] == 0xffffffff81000200);
	CHECK_INT(s->raw_size, ==, 12);
	CHECK(s->raw && memcmp(s->raw, "rawrawrawraw", 12) == 0);
	CHECK_INT(s->branch_nr, ==, 2);
	CHECK_INT(s->user_stack_size, ==, 12);
	CHECK_INT(s->weight, ==, 300);
	CHECK_INT(s->ins_lat, ==, 40);
	CHECK_INT(s->retire_lat, ==, 7);
	CHECK_INT(s->data_src, ==, 0x68100142);
	CHECK_INT(s->transaction, ==, 0x1234);
	CHECK_INT(s->phys_addr, ==, 0x12345000);
	CHECK_INT(s->cgroup, ==, 42);
	CHECK_INT(s->data_page_size, ==, 4096);
	CHECK_INT(s->code_page_size, ==, 2097152);
	CHECK_INT(s->aux_size, ==, 8);
}

/* --- sample parsing alone ----------------------------------------------- */

static void test_all_fields(void)
{
	struct perf_event_attr a = all_attr();
	struct buf b = { 0 };
	struct perf_data_sample s;
	uint64_t *rec;
	char err[200];

	put_all_sample(&b, 1234, PERF_RECORD_MISC_KERNEL);
	rec = aligned_alloc(8, b.len + 8);
	memcpy(rec, b.p, b.len);
	CHECK_INT(perf_sample_parse(&a, rec, b.len, &s, err, sizeof(err)), ==, 0);
	check_all_sample(&s, 1234);

	/* cut anywhere: an error, never a read past the end (ASan watches) */
	for (size_t n = 0; n < b.len; n++) {
		uint8_t *cut = malloc(n ? n : 1);

		memcpy(cut, b.p, n);
		CHECK_INT(perf_sample_parse(&a, cut, n, &s, err, sizeof(err)), ==, -EBADMSG);
		free(cut);
	}

	/* a bit this reader does not know */
	a.sample_type |= 1ULL << 40;
	CHECK_INT(perf_sample_parse(&a, rec, b.len, &s, err, sizeof(err)), ==, -EBADMSG);
	CHECK(strstr(err, "unknown bits") != NULL);
	free(rec);
	free(b.p);
}

/* Each length field of the sample inflated: a clean error naming it. */
static void test_inflated_lengths(void)
{
	static const struct { size_t word; const char *what; } fields[] = {
		/* u64 index after the header, per put_all_sample()'s layout */
		{ 9, "read group" }, { 17, "callchain" }, { 22, "raw" }, { 24, "branch stack" },
		{ 38, "user stack" }, { 41, "user stack dyn_size" }, { 52, "aux" },
	};
	struct perf_event_attr a = all_attr();
	struct perf_data_sample s;
	char err[200];

	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		struct buf b = { 0 };
		uint64_t *rec;
		uint64_t big = fields[i].word == 22 ? 0xfffffff0 : (uint64_t)1 << 60;

		put_all_sample(&b, 1, 0);
		if (fields[i].word == 22)	/* raw size is a u32 */
			memcpy(b.p + 8 + 8 * fields[i].word, &(uint32_t){ (uint32_t)big }, 4);
		else
			set64(&b, 8 + 8 * fields[i].word, big);
		rec = aligned_alloc(8, b.len + 8);
		memcpy(rec, b.p, b.len);
		test_current = fields[i].what;
		CHECK_INT(perf_sample_parse(&a, rec, b.len, &s, err, sizeof(err)), ==, -EBADMSG);
		if (!strstr(err, fields[i].what))
			fprintf(stderr, "%s: message '%s'\n", fields[i].what, err);
		CHECK(strstr(err, fields[i].what) != NULL);
		free(rec);
		free(b.p);
	}
}

/* Variants the all-fields sample does not take. */
static void test_variants(void)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_BRANCH_STACK |
			       PERF_SAMPLE_ADDR,
		.read_format = PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_RUNNING,
		.sample_regs_user = 0xff,
		.sample_period = 4000,
	};
	struct perf_data_sample s;
	struct buf b = { 0 };
	size_t at = rec_begin(&b, PERF_RECORD_SAMPLE, 0);
	uint64_t *rec;
	char err[200];

	put64(&b, 0x401000);		/* IP */
	put64(&b, 0x7ffc0000);		/* ADDR */
	put64(&b, 5); put64(&b, 6); put64(&b, 7);	/* READ: value, running, id */
	put64(&b, 1);			/* BRANCH_STACK nr, no hw_idx */
	put64(&b, 1); put64(&b, 2); put64(&b, 3);
	put64(&b, PERF_SAMPLE_REGS_ABI_NONE);	/* no regs follow */
	put64(&b, 0);			/* STACK_USER size 0: no data, no dyn_size */
	put64(&b, 0x1122334455667788);	/* WEIGHT, full */
	rec_end(&b, at);
	rec = aligned_alloc(8, b.len + 8);
	memcpy(rec, b.p, b.len);
	CHECK_INT(perf_sample_parse(&a, rec, b.len, &s, err, sizeof(err)), ==, 0);
	CHECK_INT(s.addr, ==, 0x7ffc0000);
	CHECK_INT(s.branch_nr, ==, 1);
	CHECK(s.weight == 0x1122334455667788);
	/* no PERIOD in the sample: perf uses the attr's */
	CHECK_INT(s.period, ==, 4000);
	/* no DATA_SRC: perf's PERF_MEM_DATA_SRC_NONE */
	{
		union perf_mem_data_src d = { .val = s.data_src };

		CHECK_INT(d.mem_op, ==, PERF_MEM_OP_NA);
		CHECK_INT(d.mem_lvl, ==, PERF_MEM_LVL_NA);
	}
	/* an extra byte is tolerated (perf does too), a missing one is not */
	CHECK_INT(perf_sample_parse(&a, rec, b.len - 1, &s, err, sizeof(err)), ==, -EBADMSG);
	free(rec);
	free(b.p);
}

static void test_sample_id(void)
{
	struct perf_event_attr a = all_attr();
	struct perf_data_sample_id sid;
	struct buf b = { 0 };
	size_t at = rec_begin(&b, PERF_RECORD_COMM, 0);
	uint64_t *rec;
	char err[200];

	put32(&b, 100); put32(&b, 101); put(&b, "cat\0\0\0\0\0", 8);
	/* trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER */
	put32(&b, 100); put32(&b, 101);
	put64(&b, 6000);
	put64(&b, 55);
	put64(&b, 66);
	put32(&b, 1); put32(&b, 0);
	put64(&b, 55);
	rec_end(&b, at);
	CHECK_INT(perf_sample_id_size(&a), ==, 48);
	rec = aligned_alloc(8, b.len + 8);
	memcpy(rec, b.p, b.len);
	CHECK_INT(perf_sample_id_parse(&a, rec, b.len, &sid, err, sizeof(err)), ==, 0);
	CHECK(sid.present);
	CHECK_INT(sid.time, ==, 6000);
	CHECK_INT(sid.id, ==, 55);
	CHECK_INT(sid.stream_id, ==, 66);
	CHECK_INT(sid.cpu, ==, 1);
	CHECK_INT(sid.tid, ==, 101);
	CHECK_INT(perf_sample_id_parse(&a, rec, 40, &sid, err, sizeof(err)), ==, -EBADMSG);
	a.sample_id_all = 0;
	CHECK_INT(perf_sample_id_size(&a), ==, 0);
	CHECK_INT(perf_sample_id_parse(&a, rec, b.len, &sid, err, sizeof(err)), ==, 0);
	CHECK(!sid.present);
	free(rec);
	free(b.p);
}

/* --- whole files ---------------------------------------------------------- */

struct file_opts {
	bool second_event_without_id;	/* id positions disagree */
	bool duplicate_id;
	bool compressed_feature;
	bool old_header;		/* 72 bytes, no features */
	bool comm_without_nul;
};

/*
 * Two events (IDENTIFIER first, so records say which), ids {11, 12} and
 * {21}; features HOSTNAME, OSRELEASE, ARCH, NRCPUS, CMDLINE, EVENT_DESC,
 * CACHE, SAMPLE_TIME, CLOCK_DATA, BUILD_ID; one of every record kind.
 */
static struct buf build_file(const struct file_opts *o, size_t *ret_data_off)
{
	struct perf_event_attr a1 = all_attr(), a2 = all_attr();
	struct buf b = { 0 }, f = { 0 };
	size_t attrs, ids, data, at, feat_table;
	uint64_t feats[4] = { 0 };
	static const int feat_list[] = { PERF_DATA_FEAT_BUILD_ID, PERF_DATA_FEAT_HOSTNAME,
		PERF_DATA_FEAT_OSRELEASE, PERF_DATA_FEAT_ARCH, PERF_DATA_FEAT_NRCPUS,
		PERF_DATA_FEAT_CMDLINE, PERF_DATA_FEAT_EVENT_DESC, PERF_DATA_FEAT_CACHE,
		PERF_DATA_FEAT_SAMPLE_TIME, PERF_DATA_FEAT_COMPRESSED, PERF_DATA_FEAT_CLOCK_DATA };
	size_t hsize = o->old_header ? 72 : 104;

	a2.config = 0x82d0;
	a2.read_format = 0;
	a2.sample_type &= ~(uint64_t)PERF_SAMPLE_READ;
	if (o->second_event_without_id)
		a2.sample_type &= ~(uint64_t)(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID);

	/* header, filled in below */
	put(&b, "PERFILE2", 8);
	put64(&b, hsize);
	put64(&b, sizeof(struct perf_event_attr) + 16);
	for (size_t i = 24; i < hsize; i += 8)
		put64(&b, 0);
	attrs = b.len;
	put(&b, &a1, sizeof(a1)); put64(&b, 0); put64(&b, 16);
	put(&b, &a2, sizeof(a2)); put64(&b, 0); put64(&b, 8);
	ids = b.len;
	put64(&b, 11); put64(&b, 12); put64(&b, o->duplicate_id ? 12 : 21);
	set64(&b, attrs + sizeof(a1), ids);
	set64(&b, attrs + 2 * sizeof(a1) + 16, ids + 16);

	data = b.len;
	put_all_sample(&b, 11, PERF_RECORD_MISC_KERNEL);
	put_all_sample(&b, 12, PERF_RECORD_MISC_USER);
	put_all_sample(&b, 999, 0);	/* unknown id: skipped like perf */
	put_all_sample(&b, 0, 0);	/* synthesized: the first event */
	/* the second event's samples have no READ */
	at = rec_begin(&b, PERF_RECORD_SAMPLE, 0);
	{
		struct buf t = { 0 };
		struct perf_data_sample s;
		uint64_t *rec;

		put_all_sample(&t, 21, 0);
		/* drop the 8 READ words (after PERIOD, words 9..16) */
		put(&b, t.p + 8, 8 * 9);
		put(&b, t.p + 8 + 8 * 17, t.len - 8 - 8 * 17);
		rec_end(&b, at);
		rec = aligned_alloc(8, b.len - at);
		memcpy(rec, b.p + at, b.len - at);
		if (!o->second_event_without_id)
			CHECK_INT(perf_sample_parse(&a2, rec, b.len - at, &s, NULL, 0), ==, 0);
		free(rec);
		free(t.p);
	}
	at = rec_begin(&b, PERF_RECORD_LOST, 0);
	put64(&b, 11); put64(&b, 17);
	put32(&b, 1); put32(&b, 1); put64(&b, 7000); put64(&b, 11); put64(&b, 0);
	put32(&b, 0); put32(&b, 0); put64(&b, 11);
	rec_end(&b, at);
	at = rec_begin(&b, PERF_RECORD_THROTTLE, 0);
	put64(&b, 8000); put64(&b, 21); put64(&b, 0);
	put32(&b, 1); put32(&b, 1); put64(&b, 8000); put64(&b, 21); put64(&b, 0);
	put32(&b, 0); put32(&b, 0); put64(&b, 21);
	rec_end(&b, at);
	at = rec_begin(&b, PERF_RECORD_COMM, 0);
	put32(&b, 100); put32(&b, 101);
	put(&b, o->comm_without_nul ? "catcatca" : "cat\0\0\0\0\0", 8);
	put32(&b, 100); put32(&b, 101); put64(&b, 9000); put64(&b, 12); put64(&b, 0);
	put32(&b, 0); put32(&b, 0); put64(&b, 12);
	rec_end(&b, at);
	at = rec_begin(&b, PERF_RECORD_MMAP2, 0);
	put32(&b, 100); put32(&b, 101);
	put64(&b, 0x400000); put64(&b, 0x1000); put64(&b, 0);
	put64(&b, 0); put64(&b, 0); put64(&b, 0);	/* maj, min, ino, ino_generation */
	put32(&b, 5); put32(&b, 2);			/* prot, flags */
	put(&b, "/bin/cat\0\0\0\0\0\0\0\0", 16);
	put32(&b, 100); put32(&b, 101); put64(&b, 9500); put64(&b, 12); put64(&b, 0);
	put32(&b, 0); put32(&b, 0); put64(&b, 12);
	rec_end(&b, at);
	at = rec_begin(&b, PERF_DATA_RECORD_FINISHED_ROUND, 0);
	rec_end(&b, at);
	/* AUXTRACE: 24 bytes of trace follow the record, outside its size */
	at = rec_begin(&b, PERF_DATA_RECORD_AUXTRACE, 0);
	put64(&b, 24); put64(&b, 0); put64(&b, 0); put32(&b, 0); put32(&b, 0);
	put32(&b, 0); put32(&b, 0);
	rec_end(&b, at);
	put64(&b, 1); put64(&b, 2); put64(&b, 3);
	/* TRACING_DATA: 16 bytes follow */
	at = rec_begin(&b, PERF_DATA_RECORD_HEADER_TRACING_DATA, 0);
	put32(&b, 16); put32(&b, 0);
	rec_end(&b, at);
	put64(&b, 0); put64(&b, 0);
	/* a type from the future */
	at = rec_begin(&b, 200, 0);
	put64(&b, 0);
	rec_end(&b, at);
	set64(&b, 24, attrs);
	set64(&b, 32, 2 * (sizeof(a1) + 16));
	set64(&b, 40, data);
	set64(&b, 48, b.len - data);
	*ret_data_off = data;
	if (o->old_header)
		return b;

	/* features: the table, then the sections */
	for (size_t i = 0; i < ARRAY_SIZE(feat_list); i++)
		if (feat_list[i] != PERF_DATA_FEAT_COMPRESSED || o->compressed_feature)
			feats[feat_list[i] / 64] |= 1ULL << (feat_list[i] % 64);
	memcpy(b.p + 72, feats, sizeof(feats));
	feat_table = b.len;
	for (size_t i = 0; i < ARRAY_SIZE(feat_list); i++)
		if (feats[feat_list[i] / 64] >> (feat_list[i] % 64) & 1) {
			put64(&b, 0);
			put64(&b, 0);
		}
	{
		size_t k = 0;

		for (int feat = 1; feat < 256; feat++) {
			size_t start = b.len;

			if (!(feats[feat / 64] >> (feat % 64) & 1))
				continue;
			f.len = 0;
			switch (feat) {
			case PERF_DATA_FEAT_BUILD_ID:
				/* build_id_event: header, pid, id[24], name */
				at = rec_begin(&f, 0, PERF_RECORD_MISC_KERNEL | (1u << 15));
				put32(&f, (uint32_t)-1);
				put(&f, "\x0b\x7f\x52\x81\x23\x0a\x13\xc8\x82\x22\x29\x3b\x4f\x4b\x4f\x82"
					"\x8a\x67\x44\xa4", 20);
				put(&f, "\x14\0\0\0", 4);
				put(&f, "[kernel.kallsyms]\0\0\0\0\0\0\0", 24);
				rec_end(&f, at);
				break;
			case PERF_DATA_FEAT_HOSTNAME: put_str(&f, "fleet-host-7"); break;
			case PERF_DATA_FEAT_OSRELEASE: put_str(&f, "6.12.0-test"); break;
			case PERF_DATA_FEAT_ARCH: put_str(&f, "x86_64"); break;
			case PERF_DATA_FEAT_NRCPUS: put32(&f, 8); put32(&f, 6); break;
			case PERF_DATA_FEAT_CMDLINE:
				put32(&f, 3); put_str(&f, "perf"); put_str(&f, "c2c"); put_str(&f, "record");
				break;
			case PERF_DATA_FEAT_EVENT_DESC: {
				struct perf_event_attr x = { .size = sizeof(x) };

				put32(&f, 2); put32(&f, sizeof(x));
				put(&f, &x, sizeof(x)); put32(&f, 2); put_str(&f, "cpu/mem-loads,ldlat=30/P");
				put64(&f, 11); put64(&f, 12);
				put(&f, &x, sizeof(x)); put32(&f, 1); put_str(&f, "cpu/mem-stores/P");
				put64(&f, 21);
				break;
			}
			case PERF_DATA_FEAT_CACHE:
				put32(&f, 1); put32(&f, 2);
				put32(&f, 1); put32(&f, 128); put32(&f, 64); put32(&f, 8);
				put_str(&f, "Instruction"); put_str(&f, "32K"); put_str(&f, "0-1");
				put32(&f, 1); put32(&f, 128); put32(&f, 64); put32(&f, 8);
				put_str(&f, "Data"); put_str(&f, "48K"); put_str(&f, "0-1");
				break;
			case PERF_DATA_FEAT_SAMPLE_TIME: put64(&f, 5000000000); put64(&f, 9500); break;
			case PERF_DATA_FEAT_CLOCK_DATA:
				put32(&f, 1); put32(&f, 1); put64(&f, 1700000000000000000ULL);
				put64(&f, 4000000000ULL);
				break;
			case PERF_DATA_FEAT_COMPRESSED:
				put32(&f, 1); put32(&f, 1); put32(&f, 1); put32(&f, 5); put32(&f, 0);
				break;
			}
			put(&b, f.p, f.len);
			set64(&b, feat_table + 16 * k, start);
			set64(&b, feat_table + 16 * k + 8, b.len - start);
			k++;
		}
	}
	free(f.p);
	return b;
}

static int open_buf(const struct buf *b, struct perf_data **pd, char **err)
{
	*err = NULL;
	return perf_data_open_mem(b->p, b->len, pd, err);
}

static void test_file(void)
{
	struct file_opts o = { 0 };
	size_t doff, samples = 0, unknown = 0, first_event = 0, types[256] = { 0 };
	struct buf b = build_file(&o, &doff);
	const struct perf_data_info *in;
	struct perf_data_record rec;
	struct perf_data *pd = NULL;
	char *err;
	int r;

	r = open_buf(&b, &pd, &err);
	CHECK_INT(r, ==, 0);
	if (r < 0) {
		fprintf(stderr, "%s\n", err);
		free(err);
		free(b.p);
		return;
	}
	in = perf_data_info(pd);
	CHECK_STR(in->hostname, "fleet-host-7");
	CHECK_STR(in->osrelease, "6.12.0-test");
	CHECK_STR(in->arch, "x86_64");
	CHECK_STR(in->cmdline, "perf c2c record");
	CHECK_INT(in->nr_cpus_avail, ==, 8);
	CHECK_INT(in->nr_cpus_online, ==, 6);
	CHECK_INT(in->l1d_line_size, ==, 128);
	CHECK(in->has_sample_time);
	CHECK(in->has_clock_data);
	CHECK_INT(in->clock_clockid_ns, ==, 4000000000ULL);
	CHECK_STR(perf_data_kernel_build_id(pd), "0b7f5281230a13c88222293b4f4b4f828a6744a4");
	CHECK_INT(perf_data_n_events(pd), ==, 2);
	CHECK_STR(perf_data_event(pd, 0)->name, "cpu/mem-loads,ldlat=30/P");
	CHECK_STR(perf_data_event(pd, 1)->name, "cpu/mem-stores/P");

	for (int pass = 0; pass < 2; pass++) {
		samples = unknown = first_event = 0;
		memset(types, 0, sizeof(types));
		perf_data_rewind(pd);
		while ((r = perf_data_next(pd, &rec)) > 0) {
			types[rec.type & 0xff]++;
			if (rec.type == PERF_RECORD_SAMPLE) {
				if (!rec.event) {
					unknown++;
					continue;
				}
				samples++;
				first_event += rec.event->index == 0;
				if (rec.event->index == 0 && rec.sample.id == 11)
					check_all_sample(&rec.sample, 11);
			}
			if (rec.type == PERF_RECORD_LOST) {
				CHECK_INT(rec.u.lost.lost, ==, 17);
				CHECK(rec.sid.present && rec.sid.time == 7000);
				CHECK(rec.event && rec.event->index == 0);
			}
			if (rec.type == PERF_RECORD_THROTTLE) {
				CHECK_INT(rec.u.throttle.time, ==, 8000);
				CHECK(rec.event && rec.event->index == 1);
			}
			if (rec.type == PERF_RECORD_COMM)
				CHECK_STR(rec.u.comm.comm, "cat");
			if (rec.type == PERF_RECORD_MMAP2) {
				CHECK_STR(rec.u.mmap.filename, "/bin/cat");
				CHECK_INT(rec.u.mmap.prot, ==, 5);
				CHECK(rec.sid.time == 9500);
			}
		}
		CHECK_INT(r, ==, 0);
		CHECK_INT(samples, ==, 4);
		CHECK_INT(unknown, ==, 1);
		CHECK_INT(first_event, ==, 3);
		CHECK_INT(types[PERF_DATA_RECORD_AUXTRACE], ==, 1);
		CHECK_INT(types[PERF_DATA_RECORD_HEADER_TRACING_DATA], ==, 1);
		CHECK_INT(types[200], ==, 1);
		CHECK_INT(types[PERF_DATA_RECORD_FINISHED_ROUND], ==, 1);
	}
	perf_data_free(pd);

	/* every truncation point: an error at open or while reading, with an offset */
	for (size_t n = 0; n < b.len; n++) {
		r = perf_data_open_mem(b.p, n, &pd, &err);
		if (r == 0) {
			while ((r = perf_data_next(pd, &rec)) > 0)
				;
			if (r < 0)
				err = strdup(perf_data_error(pd));
			perf_data_free(pd);
		}
		CHECK(r < 0);
		if (r < 0 && (!err || !strstr(err, "offset")))
			fprintf(stderr, "cut at %zu: '%s'\n", n, err);
		CHECK(r < 0 && err && strstr(err, "offset"));
		free(err);
	}
	free(b.p);
	perf_data_free(NULL);
}

/* build_file() variant -> expected error and message part */
static void expect_open_error(const char *what, const struct file_opts *o, int want,
			      const char *msg)
{
	size_t doff;
	struct buf b = build_file(o, &doff);
	struct perf_data *pd = NULL;
	struct perf_data_record rec;
	char *err = NULL;
	int r;

	test_current = what;
	r = perf_data_open_mem(b.p, b.len, &pd, &err);
	if (r == 0) {
		while ((r = perf_data_next(pd, &rec)) > 0)
			;
		if (r < 0)
			err = strdup(perf_data_error(pd));
		perf_data_free(pd);
	}
	CHECK_INT(r, ==, want);
	if (!err || !strstr(err, msg) || !strstr(err, "offset"))
		fprintf(stderr, "%s: '%s'\n", what, err);
	CHECK(err && strstr(err, msg) && strstr(err, "offset"));
	free(err);
	free(b.p);
}

static void test_file_errors(void)
{
	size_t doff;
	struct buf b;
	struct perf_data *pd = NULL;
	struct perf_data_record rec;
	char *err = NULL;
	int r;

	expect_open_error("events disagree on the id position",
			  &(struct file_opts){ .second_event_without_id = true }, -EBADMSG, "sample id");
	expect_open_error("duplicate id", &(struct file_opts){ .duplicate_id = true }, -EBADMSG,
			  "two events");
	expect_open_error("compressed", &(struct file_opts){ .compressed_feature = true },
			  -EPROTONOSUPPORT, "compressed");
	expect_open_error("COMM without NUL", &(struct file_opts){ .comm_without_nul = true },
			  -EBADMSG, "NUL");

	/* the header perf wrote before feature bits: accepted, no features */
	b = build_file(&(struct file_opts){ .old_header = true }, &doff);
	r = perf_data_open_mem(b.p, b.len, &pd, &err);
	CHECK_INT(r, ==, 0);
	if (r == 0) {
		CHECK(perf_data_info(pd)->hostname == NULL);
		while ((r = perf_data_next(pd, &rec)) > 0)
			;
		CHECK_INT(r, ==, 0);
		perf_data_free(pd);
	}
	free(b.p);

	b = build_file(&(struct file_opts){ 0 }, &doff);
	/* foreign layouts */
	memcpy(b.p, "2ELIFREP", 8);
	CHECK_INT(perf_data_open_mem(b.p, b.len, &pd, &err), ==, -EPROTONOSUPPORT);
	CHECK(err && strstr(err, "byte order"));
	free(err);
	memcpy(b.p, "PERFFILE", 8);
	CHECK_INT(perf_data_open_mem(b.p, b.len, &pd, &err), ==, -EPROTONOSUPPORT);
	free(err);
	memcpy(b.p, "NOTPERF!", 8);
	CHECK_INT(perf_data_open_mem(b.p, b.len, &pd, &err), ==, -EBADMSG);
	free(err);
	memcpy(b.p, "PERFILE2", 8);
	set64(&b, 8, 16);
	CHECK_INT(perf_data_open_mem(b.p, b.len, &pd, &err), ==, -EPROTONOSUPPORT);
	CHECK(err && strstr(err, "pipe"));
	free(err);
	set64(&b, 8, 104);

	/* a sample whose callchain claims more than its record holds */
	set64(&b, doff + 8 + 8 * 17, 1000);
	r = perf_data_open_mem(b.p, b.len, &pd, &err);
	CHECK_INT(r, ==, 0);
	if (r == 0) {
		char want[64];

		r = perf_data_next(pd, &rec);
		CHECK_INT(r, ==, -EBADMSG);
		snprintf(want, sizeof(want), "offset %#zx: SAMPLE", doff);
		CHECK(strstr(perf_data_error(pd), want) != NULL);
		CHECK(strstr(perf_data_error(pd), "callchain") != NULL);
		perf_data_free(pd);
	}
	set64(&b, doff + 8 + 8 * 17, 4);

	/* a sample_type bit of the future in an attr: refused at open */
	set64(&b, 104 + 24, ALL_TYPES | (1ULL << 33));
	CHECK_INT(perf_data_open_mem(b.p, b.len, &pd, &err), ==, -EPROTONOSUPPORT);
	free(err);
	free(b.p);
}

/* The real fixtures' headers, as perf report --header-only shows them. */
static void test_real_headers(void)
{
	const char *dir = test_fixtures_dir();
	char path[4096 + 64];	/* the fixtures directory (a path) and a name */
	struct perf_data *pd;
	char *err = NULL;

	/* The fixtures ship with the repository: one missing is a failure. */
	snprintf(path, sizeof(path), "%s/perfdata_quipper_weight_struct_memloads.perf.data", dir);
	if (perf_data_open(path, &pd, &err) < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		CHECK(!"real fixture readable");
		free(err);
		return;
	}
	CHECK_STR(perf_data_info(pd)->hostname, "oxco15.prod.google.com");
	CHECK_STR(perf_data_info(pd)->osrelease, "4.15.0-smp-923.44.0.0");
	CHECK_STR(perf_data_info(pd)->perf_version, "5.17.0-3-GOOGLE-g92ebf5f91b4d");
	CHECK_STR(perf_data_info(pd)->cpuid, "GenuineIntel,6,85,4");
	CHECK_INT(perf_data_info(pd)->nr_cpus_online, ==, 112);
	CHECK_INT(perf_data_info(pd)->total_mem_kb, ==, 196853420);
	/* perf report: "No kallsyms or vmlinux with build-id 0b7f52...a4 was found" */
	CHECK_STR(perf_data_kernel_build_id(pd), "0b7f5281230a13c88222293b37b4f4828a6744a4");
	CHECK_INT(perf_data_n_events(pd), ==, 2);
	CHECK_INT(perf_data_event(pd, 0)->n_ids, ==, 112);
	CHECK_INT(perf_data_event(pd, 0)->file_attr_size, ==, 96);
	CHECK_STR(perf_data_event(pd, 1)->name, "dummy:HG");
	perf_data_free(pd);

	snprintf(path, sizeof(path), "%s/perfdata_prospar_c2c_record_userspace.perf.data", dir);
	if (perf_data_open(path, &pd, &err) == 0) {
		/* "time of first sample : 33029.584731", "last : 33029.584859" */
		CHECK(perf_data_info(pd)->has_sample_time);
		CHECK_INT(perf_data_info(pd)->first_sample_time / 1000, ==, 33029584731ULL);
		CHECK_INT(perf_data_info(pd)->last_sample_time / 1000, ==, 33029584859ULL);
		CHECK_INT(perf_data_info(pd)->l1d_line_size, ==, 64);
		CHECK_STR(perf_data_info(pd)->cmdline,
			  "/usr/lib/linux-hwe-5.4-tools-5.4.0-150/perf c2c record -F 40000 -u -- ./a.out 21");
		perf_data_free(pd);
	} else {
		fprintf(stderr, "%s: %s\n", path, err);
		CHECK(!"real fixture readable");
		free(err);
	}
}

int main(void)
{
	RUN(test_all_fields);
	RUN(test_inflated_lengths);
	RUN(test_variants);
	RUN(test_sample_id);
	RUN(test_file);
	RUN(test_file_errors);
	RUN(test_real_headers);
	return test_exit();
}
