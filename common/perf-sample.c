// SPDX-License-Identifier: GPL-2.0
/*
 * One PERF_RECORD_SAMPLE's fields and a record's trailing sample_id, by the
 * attr's sample_type, in the order of kernel/events/core.c:
 * perf_output_sample(). Shared by the perf.data reader and the live
 * sampler, which hands it records straight from the ring buffer.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "perf-data.h"
#include "util.h"

/* A cursor over one record's u64 array, after the 8-byte header. */
struct rcur {
	const uint8_t *p, *end;
	char *err;
	size_t errlen;
};

static int rc_fail(struct rcur *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rc_fail(struct rcur *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static size_t rc_left(const struct rcur *c)
{
	return (size_t)(c->end - c->p);
}

static int rc_u64(struct rcur *c, const char *field, uint64_t *ret)
{
	if (rc_left(c) < 8)
		return rc_fail(c, "record ends inside %s", field);
	*ret = get64(c->p);
	c->p += 8;
	return 0;
}

static int rc_skip(struct rcur *c, const char *field, uint64_t len)
{
	if (len > rc_left(c))
		return rc_fail(c, "%s of %" PRIu64 " bytes runs past the end of the record "
			       "(%zu bytes left)", field, len, rc_left(c));
	c->p += len;
	return 0;
}

/* u64 words of a read_format block (kernel/events/core.c:perf_output_read_*). */
static int skip_read_format(struct rcur *c, uint64_t rf)
{
	uint64_t nr = 0, per;
	int r;

	if (rf & ~PERF_DATA_KNOWN_READ_FORMAT)
		return rc_fail(c, "read_format %#" PRIx64 " has unknown bits", rf);
	if (!(rf & PERF_FORMAT_GROUP)) {
		uint64_t words = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			!!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING) + !!(rf & PERF_FORMAT_ID) +
			!!(rf & PERF_FORMAT_LOST);

		return rc_skip(c, "read values", words * 8);
	}
	r = rc_u64(c, "read group nr", &nr);
	if (r < 0)
		return r;
	r = rc_skip(c, "read times", 8 * (!!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
					   !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING)));
	if (r < 0)
		return r;
	per = 8 * (1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST));
	if (nr > rc_left(c) / per)
		return rc_fail(c, "read group of %" PRIu64 " values runs past the end of the record", nr);
	return rc_skip(c, "read group", nr * per);
}

/* { u64 abi; u64 regs[hweight(mask)]; } with no regs when abi is NONE. */
static int skip_regs(struct rcur *c, const char *what, uint64_t mask)
{
	uint64_t abi = 0;
	int r;

	r = rc_u64(c, what, &abi);
	if (r < 0)
		return r;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE)
		return 0;
	return rc_skip(c, what, 8 * (uint64_t)__builtin_popcountll(mask));
}

static int parse_tid(struct rcur *c, const struct perf_event_attr *attr, struct perf_data_sample *s)
{
	uint64_t v;
	int r;

	r = rc_u64(c, "PERF_SAMPLE_TID", &v);
	if (r < 0)
		return r;
	s->pid = get32(c->p - 8);
	s->tid = get32(c->p - 4);
	return 0;
}

static int parse_cpu(struct rcur *c, const struct perf_event_attr *attr, struct perf_data_sample *s)
{
	uint64_t v;
	int r;

	r = rc_u64(c, "PERF_SAMPLE_CPU", &v);
	if (r < 0)
		return r;
	s->cpu = get32(c->p - 8);
	return 0;
}

static int parse_read(struct rcur *c, const struct perf_event_attr *attr,
		      struct perf_data_sample *s)
{
	return skip_read_format(c, attr->read_format);
}

static int parse_callchain(struct rcur *c, const struct perf_event_attr *attr,
			   struct perf_data_sample *s)
{
	int r;

	r = rc_u64(c, "callchain nr", &s->callchain_nr);
	if (r < 0)
		return r;
	if (s->callchain_nr > rc_left(c) / 8)
		return rc_fail(c, "callchain of %" PRIu64 " entries runs past the end of "
			       "the record", s->callchain_nr);
	s->callchain = (const uint64_t *)c->p;
	c->p += s->callchain_nr * 8;
	return 0;
}

static int parse_raw(struct rcur *c, const struct perf_event_attr *attr, struct perf_data_sample *s)
{
	if (rc_left(c) < 4)
		return rc_fail(c, "record ends inside the raw size");
	s->raw_size = get32(c->p);
	c->p += 4;
	s->raw = c->p;
	return rc_skip(c, "raw data", s->raw_size);
}

static int parse_branch_stack(struct rcur *c, const struct perf_event_attr *attr,
			      struct perf_data_sample *s)
{
	uint64_t per = 24;	/* from, to, flags */
	int r;

	r = rc_u64(c, "branch stack nr", &s->branch_nr);
	if (r < 0)
		return r;
	if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) {
		r = rc_skip(c, "branch hw_idx", 8);
		if (r < 0)
			return r;
	}
	if (attr->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS)
		per += 8;
	if (s->branch_nr > rc_left(c) / per)
		return rc_fail(c, "branch stack of %" PRIu64 " entries runs past the end "
			       "of the record", s->branch_nr);
	c->p += s->branch_nr * per;
	return 0;
}

static int parse_regs_user(struct rcur *c, const struct perf_event_attr *attr,
			   struct perf_data_sample *s)
{
	return skip_regs(c, "user regs", attr->sample_regs_user);
}

static int parse_stack_user(struct rcur *c, const struct perf_event_attr *attr,
			    struct perf_data_sample *s)
{
	uint64_t sz = 0;
	int r;

	r = rc_u64(c, "user stack size", &sz);
	if (r < 0)
		return r;
	/* dyn_size follows only a non-empty dump */
	if (!sz)
		return 0;
	r = rc_skip(c, "user stack", sz);
	if (r < 0)
		return r;
	r = rc_u64(c, "user stack dyn_size", &s->user_stack_size);
	if (r < 0)
		return r;
	if (s->user_stack_size > sz)
		return rc_fail(c, "user stack dyn_size %" PRIu64 " exceeds its size %" PRIu64,
			       s->user_stack_size, sz);
	return 0;
}

/* As tools/perf/arch/x86/util/event.c:arch_perf_parse_sample_weight(). */
static int parse_weight(struct rcur *c, const struct perf_event_attr *attr,
			struct perf_data_sample *s)
{
	uint64_t v = 0;
	int r;

	r = rc_u64(c, "weight", &v);
	if (r < 0)
		return r;
	if (s->sample_type & PERF_SAMPLE_WEIGHT) {
		s->weight = v;
	} else {
		s->weight = (uint32_t)v;
		s->ins_lat = (uint16_t)(v >> 32);
		s->retire_lat = (uint16_t)(v >> 48);
	}
	return 0;
}

static int parse_regs_intr(struct rcur *c, const struct perf_event_attr *attr,
			   struct perf_data_sample *s)
{
	return skip_regs(c, "intr regs", attr->sample_regs_intr);
}

static int parse_aux(struct rcur *c, const struct perf_event_attr *attr, struct perf_data_sample *s)
{
	int r;

	r = rc_u64(c, "aux size", &s->aux_size);
	if (r < 0)
		return r;
	return rc_skip(c, "aux data", s->aux_size);
}

/* One sample_type bit: a u64 stored at off, or a parser of its own. */
struct sample_field {
	uint64_t bits;
	const char *name;
	size_t off;
	int (*parse)(struct rcur *c, const struct perf_event_attr *attr,
		     struct perf_data_sample *s);
};

#define FIELD(bit, f)		{ bit, #bit, offsetof(struct perf_data_sample, f), NULL }
#define PARSER(bits, fn)	{ bits, NULL, 0, fn }

/* In the order of kernel/events/core.c:perf_output_sample(). */
static const struct sample_field sample_fields[] = {
	FIELD(PERF_SAMPLE_IDENTIFIER, id),
	FIELD(PERF_SAMPLE_IP, ip),
	PARSER(PERF_SAMPLE_TID, parse_tid),
	FIELD(PERF_SAMPLE_TIME, time),
	FIELD(PERF_SAMPLE_ADDR, addr),
	FIELD(PERF_SAMPLE_ID, id),
	FIELD(PERF_SAMPLE_STREAM_ID, stream_id),
	PARSER(PERF_SAMPLE_CPU, parse_cpu),
	FIELD(PERF_SAMPLE_PERIOD, period),
	PARSER(PERF_SAMPLE_READ, parse_read),
	PARSER(PERF_SAMPLE_CALLCHAIN, parse_callchain),
	PARSER(PERF_SAMPLE_RAW, parse_raw),
	PARSER(PERF_SAMPLE_BRANCH_STACK, parse_branch_stack),
	PARSER(PERF_SAMPLE_REGS_USER, parse_regs_user),
	PARSER(PERF_SAMPLE_STACK_USER, parse_stack_user),
	PARSER(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, parse_weight),
	FIELD(PERF_SAMPLE_DATA_SRC, data_src),
	FIELD(PERF_SAMPLE_TRANSACTION, transaction),
	PARSER(PERF_SAMPLE_REGS_INTR, parse_regs_intr),
	FIELD(PERF_SAMPLE_PHYS_ADDR, phys_addr),
	FIELD(PERF_SAMPLE_CGROUP, cgroup),
	FIELD(PERF_SAMPLE_DATA_PAGE_SIZE, data_page_size),
	FIELD(PERF_SAMPLE_CODE_PAGE_SIZE, code_page_size),
	PARSER(PERF_SAMPLE_AUX, parse_aux),
};

#undef PARSER
#undef FIELD

int perf_sample_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
		      struct perf_data_sample *s, char *err, size_t errlen)
{
	struct rcur c = { .p = (const uint8_t *)rec + 8, .end = (const uint8_t *)rec + size,
			  .err = err, .errlen = errlen };
	uint64_t type = attr->sample_type;
	int r;

	memset(s, 0, sizeof(*s));
	s->sample_type = type;
	s->pid = s->tid = s->cpu = UINT32_MAX;
	s->id = s->stream_id = s->time = UINT64_MAX;
	/* perf's defaults for what the record does not carry
	 * (tools/perf/util/evsel.c:evsel__parse_sample()). */
	s->period = attr->sample_period;
	s->data_src = PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) |
		      PERF_MEM_S(LOCK, NA) | PERF_MEM_S(TLB, NA);

	if (size < 8)
		return rc_fail(&c, "record of %zu bytes is shorter than its header", size);
	if (type & ~PERF_DATA_KNOWN_SAMPLE_TYPE)
		return rc_fail(&c, "sample_type %#" PRIx64 " has unknown bits", type);

	for (size_t i = 0; i < ARRAY_SIZE(sample_fields); i++) {
		const struct sample_field *f = &sample_fields[i];

		if (!(type & f->bits))
			continue;
		if (f->parse)
			r = f->parse(&c, attr, s);
		else
			r = rc_u64(&c, f->name, (uint64_t *)((char *)s + f->off));
		if (r < 0)
			return r;
	}
	return 0;
}

size_t perf_sample_id_size(const struct perf_event_attr *attr)
{
	uint64_t t = attr->sample_type;

	if (!attr->sample_id_all)
		return 0;
	return 8 * (!!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) + !!(t & PERF_SAMPLE_ID) +
		    !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

int perf_sample_id_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
			 struct perf_data_sample_id *ret, char *err, size_t errlen)
{
	size_t need = perf_sample_id_size(attr);
	uint64_t t = attr->sample_type;
	const uint8_t *p;

	memset(ret, 0, sizeof(*ret));
	ret->pid = ret->tid = ret->cpu = UINT32_MAX;
	ret->time = ret->id = ret->stream_id = UINT64_MAX;
	if (!need)
		return 0;
	if (size < 8 || size - 8 < need) {
		if (errlen)
			snprintf(err, errlen, "record of %zu bytes cannot hold its %zu-byte sample_id",
				 size, need);
		return -EBADMSG;
	}
	/* The trailer's order: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
	p = (const uint8_t *)rec + size - need;
	if (t & PERF_SAMPLE_TID) {
		ret->pid = get32(p);
		ret->tid = get32(p + 4);
		p += 8;
	}
	if (t & PERF_SAMPLE_TIME) {
		ret->time = get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_ID) {
		ret->id = get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_STREAM_ID) {
		ret->stream_id = get64(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_CPU) {
		ret->cpu = get32(p);
		p += 8;
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		ret->id = get64(p);
	ret->present = true;
	return 0;
}
