// SPDX-License-Identifier: GPL-2.0
/*
 * perf.data reader. Layouts: include/uapi/linux/perf_event.h (records; a
 * sample's own fields are perf-sample.c's),
 * tools/perf/Documentation/perf.data-file-format.txt and
 * tools/perf/util/header.c (file header, attrs, features). Which event a
 * record belongs to is decided as tools/perf/util/evlist.c's
 * evlist__event2evsel() does, so that what we count matches perf script.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf-data.h"
#include "util.h"

/* "PERFILE2" read as a little-endian u64, and as a big-endian file has it. */
#define PERF_MAGIC2		0x32454c4946524550ULL
#define PERF_MAGIC2_SWAPPED	0x50455246494c4532ULL
/* perf before 2.6.35 wrote "PERFFILE" (version 1). */
#define PERF_MAGIC1		0x454c494646524550ULL

#define FILE_HEADER_SIZE	104	/* magic .. adds_features[256 bits] */
#define FILE_HEADER_SIZE_OLD	72	/* without the feature bitmap */
#define PIPE_HEADER_SIZE	16
#define FILE_SECTION_SIZE	16	/* struct perf_file_section */

/* Sanity bounds, far above anything perf writes. */
#define MAX_ATTR_SIZE		4096
#define MAX_EVENTS		4096
#define MAX_FEATURE_STRING	(1u << 20)

/* PERF_RECORD_MISC_BUILD_ID_SIZE: build_id[20] holds the id's size. */
#define MISC_BUILD_ID_SIZE	(1u << 15)

#define WINDOW_SIZE		(1u << 20)
#define RECORD_MAX		65536	/* header.size is a u16 */

struct id_map_entry {
	uint64_t id;
	unsigned int event;
};

struct perf_data {
	int fd;				/* -1 for a memory buffer */
	const uint8_t *mem;
	struct perf_data_info info;

	struct perf_data_event *events;
	size_t n_events;
	struct id_map_entry *id_map;	/* sorted by id */
	size_t n_ids;
	int id_pos, is_pos;		/* in u64 words, as perf's evlist */
	bool sample_id_all;
	char *kernel_build_id;

	uint8_t *window;		/* fd mode: [win_off, win_off + win_len) */
	uint64_t win_off, win_len;
	uint64_t pos;			/* next record */
	uint64_t *rec;			/* 8-aligned copy of the current record */

	char error[512];
};

static int fail(struct perf_data *pd, int r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct perf_data *pd, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pd->error, sizeof(pd->error), fmt, ap);
	va_end(ap);
	return r;
}

const char *perf_data_error(const struct perf_data *pd)
{
	return pd ? pd->error : "";
}

const char *perf_record_type_name(uint32_t type, char *buf, size_t len)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP", [PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM", [PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE", [PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK", [PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE", [PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX", [PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES", [PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES", [PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT", [PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
		[PERF_DATA_RECORD_HEADER_ATTR] = "HEADER_ATTR",
		[PERF_DATA_RECORD_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
		[PERF_DATA_RECORD_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
		[PERF_DATA_RECORD_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
		[PERF_DATA_RECORD_FINISHED_ROUND] = "FINISHED_ROUND",
		[PERF_DATA_RECORD_ID_INDEX] = "ID_INDEX",
		[PERF_DATA_RECORD_AUXTRACE_INFO] = "AUXTRACE_INFO",
		[PERF_DATA_RECORD_AUXTRACE] = "AUXTRACE",
		[PERF_DATA_RECORD_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
		[73] = "THREAD_MAP", [74] = "CPU_MAP", [75] = "STAT_CONFIG", [76] = "STAT",
		[77] = "STAT_ROUND", [78] = "EVENT_UPDATE", [79] = "TIME_CONV",
		[PERF_DATA_RECORD_HEADER_FEATURE] = "HEADER_FEATURE",
		[PERF_DATA_RECORD_COMPRESSED] = "COMPRESSED",
		[PERF_DATA_RECORD_FINISHED_INIT] = "FINISHED_INIT",
	};

	if (type < ARRAY_SIZE(names) && names[type])
		return names[type];
	snprintf(buf, len, "%" PRIu32, type);
	return buf;
}

/* --- reading the file ------------------------------------------------------ */

/* True when [off, off + len) lies inside [0, limit). */
static bool in_bounds(uint64_t off, uint64_t len, uint64_t limit)
{
	return off <= limit && len <= limit - off;
}

/* Copies [off, off + len) of the file into buf; the range was checked. */
static int read_at(struct perf_data *pd, uint64_t off, void *buf, size_t len)
{
	uint8_t *p = buf;

	if (!in_bounds(off, len, pd->info.file_size))
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %zu bytes wanted past the end of the "
			    "file (%" PRIu64 " bytes): truncated", off, len, pd->info.file_size);
	if (pd->mem) {
		memcpy(buf, pd->mem + off, len);
		return 0;
	}
	while (len > 0) {
		ssize_t n = pread(pd->fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail(pd, -errno, "offset %#" PRIx64 ": read failed: %s", off,
				    strerror(errno));
		if (n == 0)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": file shrank while reading", off);
		p += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* A pointer to [off, off + len) of the file, through the window. */
static int peek(struct perf_data *pd, uint64_t off, size_t len, const uint8_t **ret)
{
	uint64_t want;
	int r;

	if (!in_bounds(off, len, pd->info.file_size))
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %zu bytes wanted past the end of the "
			    "file (%" PRIu64 " bytes): truncated", off, len, pd->info.file_size);
	if (pd->mem) {
		*ret = pd->mem + off;
		return 0;
	}
	if (off < pd->win_off || off + len > pd->win_off + pd->win_len) {
		want = pd->info.file_size - off;
		if (want > WINDOW_SIZE)
			want = WINDOW_SIZE;
		r = read_at(pd, off, pd->window, want);
		if (r < 0)
			return r;
		pd->win_off = off;
		pd->win_len = want;
	}
	*ret = pd->window + (off - pd->win_off);
	return 0;
}

/* A cursor over a feature section: every read is bounded by its end. */
struct cursor {
	struct perf_data *pd;
	uint64_t off, end;
	const char *what;
};

static int cur_read(struct cursor *c, void *buf, size_t len)
{
	if (!in_bounds(c->off, len, c->end))
		return fail(c->pd, -EBADMSG, "offset %#" PRIx64 ": %s: %zu bytes wanted past the end "
			    "of the section at %#" PRIx64, c->off, c->what, len, c->end);
	if (read_at(c->pd, c->off, buf, len) < 0)
		return -EBADMSG;
	c->off += len;
	return 0;
}

static int cur_u32(struct cursor *c, uint32_t *ret)
{
	return cur_read(c, ret, sizeof(*ret));
}

static int cur_u64(struct cursor *c, uint64_t *ret)
{
	return cur_read(c, ret, sizeof(*ret));
}

/* struct perf_header_string: u32 len, then len bytes, NUL padded. */
static int cur_string(struct cursor *c, char **ret)
{
	uint64_t at = c->off;
	uint32_t len;
	char *s;
	int r;

	r = cur_u32(c, &len);
	if (r < 0)
		return r;
	if (len > MAX_FEATURE_STRING || !in_bounds(c->off, len, c->end))
		return fail(c->pd, -EBADMSG, "offset %#" PRIx64 ": %s: string of %" PRIu32
			    " bytes runs past the end of the section at %#" PRIx64,
			    at, c->what, len, c->end);
	s = malloc((size_t)len + 1);
	if (!s)
		return fail(c->pd, -ENOMEM, "out of memory");
	r = cur_read(c, s, len);
	if (r < 0) {
		free(s);
		return r;
	}
	s[len] = '\0';
	*ret = s;
	return 0;
}

/* --- events and ids -------------------------------------------------------- */

/* tools/perf/util/evsel.c: __perf_evsel__calc_id_pos() and _is_pos(). */
static int calc_id_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID) + !!(t & PERF_SAMPLE_TIME) +
	       !!(t & PERF_SAMPLE_ADDR);
}

static int calc_is_pos(uint64_t t)
{
	if (t & PERF_SAMPLE_IDENTIFIER)
		return 1;
	if (!(t & PERF_SAMPLE_ID))
		return -1;
	return 1 + !!(t & PERF_SAMPLE_CPU) + !!(t & PERF_SAMPLE_STREAM_ID);
}

static int cmp_id(const void *a, const void *b)
{
	const struct id_map_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct perf_data_event *event_by_id(const struct perf_data *pd, uint64_t id)
{
	struct id_map_entry key = { .id = id }, *e;

	e = bsearch(&key, pd->id_map, pd->n_ids, sizeof(*e), cmp_id);
	return e ? &pd->events[e->event] : NULL;
}

/* evlist__event2evsel(): one event, or no ids, means the first event. */
static const struct perf_data_event *record_event(const struct perf_data *pd, uint32_t type,
						  const uint8_t *rec, size_t size)
{
	size_t n = (size - 8) / 8;
	uint64_t id;

	if (pd->n_events == 1)
		return &pd->events[0];
	if (!pd->sample_id_all && type != PERF_RECORD_SAMPLE)
		return &pd->events[0];
	if (type == PERF_RECORD_SAMPLE) {
		if ((size_t)pd->id_pos >= n)
			return NULL;
		id = get64(rec + 8 + 8 * pd->id_pos);
	} else {
		if ((size_t)pd->is_pos > n)
			return NULL;
		id = get64(rec + 8 + 8 * (n - pd->is_pos));
	}
	/* synthesized records have an id of zero */
	if (!id)
		return &pd->events[0];
	return event_by_id(pd, id);
}

static const char *const sw_names[] = {
	[PERF_COUNT_SW_CPU_CLOCK] = "cpu-clock", [PERF_COUNT_SW_TASK_CLOCK] = "task-clock",
	[PERF_COUNT_SW_PAGE_FAULTS] = "page-faults",
	[PERF_COUNT_SW_CONTEXT_SWITCHES] = "context-switches",
	[PERF_COUNT_SW_CPU_MIGRATIONS] = "cpu-migrations",
	[PERF_COUNT_SW_PAGE_FAULTS_MIN] = "minor-faults",
	[PERF_COUNT_SW_PAGE_FAULTS_MAJ] = "major-faults",
	[PERF_COUNT_SW_ALIGNMENT_FAULTS] = "alignment-faults",
	[PERF_COUNT_SW_EMULATION_FAULTS] = "emulation-faults",
	[PERF_COUNT_SW_DUMMY] = "dummy",
};

/* A name for an event EVENT_DESC did not name. */
static char *default_event_name(const struct perf_event_attr *a)
{
	char *s = NULL;

	if (a->type == PERF_TYPE_SOFTWARE && a->config < ARRAY_SIZE(sw_names) && sw_names[a->config])
		return strdup(sw_names[a->config]);
	if (asprintf(&s, "%" PRIu32 "/%#llx/", a->type, (unsigned long long)a->config) < 0)
		return NULL;
	return s;
}

/* Attr i, at off, and its ids section (tools/perf/util/header.c:read_attr()). */
static int read_attr(struct perf_data *pd, size_t i, uint64_t off, uint8_t *buf)
{
	struct perf_data_event *ev = &pd->events[i];
	uint64_t asz = pd->info.attr_size, ids_off, ids_size;
	uint32_t sz;
	int r;

	r = read_at(pd, off, buf, asz);
	if (r < 0)
		return r;
	/* perf reads attr.size bytes, then the ids section right after:
	 * the two sizes must agree. */
	sz = get32(buf + 4);
	if (sz == 0)
		sz = PERF_ATTR_SIZE_VER0;
	if (sz < PERF_ATTR_SIZE_VER0 || (uint64_t)sz + FILE_SECTION_SIZE != asz)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": attr %zu: attr.size %" PRIu32
			    " does not match the header's attr_size %" PRIu64 " (attr + 16-byte "
			    "ids section): corrupt attr", off + 4, i, get32(buf + 4), asz);
	memcpy(&ev->attr, buf, sz < sizeof(ev->attr) ? sz : sizeof(ev->attr));
	ev->file_attr_size = sz;
	ev->index = i;
	if (ev->attr.sample_type & ~PERF_DATA_KNOWN_SAMPLE_TYPE)
		return fail(pd, -EPROTONOSUPPORT, "offset %#" PRIx64 ": attr %zu: sample_type %#llx "
			    "has bits this reader does not know", off + 24, i,
			    (unsigned long long)ev->attr.sample_type);
	if ((ev->attr.sample_type & PERF_SAMPLE_READ) &&
	    (ev->attr.read_format & ~PERF_DATA_KNOWN_READ_FORMAT))
		return fail(pd, -EPROTONOSUPPORT, "offset %#" PRIx64 ": attr %zu: read_format %#llx "
			    "has bits this reader does not know", off + 32, i,
			    (unsigned long long)ev->attr.read_format);

	ids_off = get64(buf + sz);
	ids_size = get64(buf + sz + 8);
	if (ids_size % 8 || !in_bounds(ids_off, ids_size, pd->info.file_size))
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": attr %zu: ids section [%#" PRIx64
			    ", +%" PRIu64 ") is misaligned or past the end of the file (%" PRIu64
			    " bytes): truncated or corrupt", off + sz, i, ids_off, ids_size,
			    pd->info.file_size);
	ev->n_ids = ids_size / 8;
	if (!ev->n_ids)
		return 0;
	ev->ids = malloc(ids_size);
	if (!ev->ids)
		return fail(pd, -ENOMEM, "out of memory");
	return read_at(pd, ids_off, ev->ids, ids_size);
}

/* The sorted id → event map that record_event() searches; an id is one event's. */
static int build_id_map(struct perf_data *pd, uint64_t attrs_off)
{
	size_t total_ids = 0;

	for (size_t i = 0; i < pd->n_events; i++)
		total_ids += pd->events[i].n_ids;
	pd->id_map = calloc(total_ids ? total_ids : 1, sizeof(*pd->id_map));
	if (!pd->id_map)
		return fail(pd, -ENOMEM, "out of memory");
	for (size_t i = 0; i < pd->n_events; i++)
		for (size_t j = 0; j < pd->events[i].n_ids; j++)
			pd->id_map[pd->n_ids++] = (struct id_map_entry){ pd->events[i].ids[j], i };
	qsort(pd->id_map, pd->n_ids, sizeof(*pd->id_map), cmp_id);
	for (size_t i = 1; i < pd->n_ids; i++)
		if (pd->id_map[i].id == pd->id_map[i - 1].id)
			return fail(pd, -EBADMSG, "attrs at offset %#" PRIx64 ": sample id %" PRIu64
				    " belongs to two events (%u and %u): corrupt ids", attrs_off,
				    pd->id_map[i].id, pd->id_map[i - 1].event, pd->id_map[i].event);
	return 0;
}

/* evlist__valid_sample_type() and evlist__valid_sample_id_all(): with
 * several events, every record must say where its id is, the same way. */
static int check_id_placement(struct perf_data *pd, uint64_t attrs_off)
{
	uint64_t asz = pd->info.attr_size;

	pd->sample_id_all = pd->events[0].attr.sample_id_all;
	pd->id_pos = calc_id_pos(pd->events[0].attr.sample_type);
	pd->is_pos = calc_is_pos(pd->events[0].attr.sample_type);
	if (pd->n_events < 2)
		return 0;
	for (size_t i = 0; i < pd->n_events; i++) {
		uint64_t t = pd->events[i].attr.sample_type;

		if (pd->id_pos < 0 || pd->is_pos < 0 || calc_id_pos(t) != pd->id_pos ||
		    calc_is_pos(t) != pd->is_pos)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": attr %zu: the events' "
				    "sample_types do not place the sample id alike, so samples "
				    "cannot be told apart (perf refuses this too)",
				    attrs_off + i * asz + 24, i);
		if (pd->events[i].attr.sample_id_all != pd->sample_id_all)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": attr %zu: sample_id_all "
				    "differs between events", attrs_off + i * asz + 40, i);
	}
	return 0;
}

static int read_attrs(struct perf_data *pd, uint64_t attrs_off, uint64_t attrs_size)
{
	uint64_t asz = pd->info.attr_size;
	uint8_t *buf = NULL;
	int r = 0;

	pd->n_events = attrs_size / asz;
	pd->events = calloc(pd->n_events, sizeof(*pd->events));
	buf = malloc(asz);
	if (!pd->events || !buf) {
		r = fail(pd, -ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < pd->n_events && r >= 0; i++)
		r = read_attr(pd, i, attrs_off + i * asz, buf);
	if (r >= 0)
		r = build_id_map(pd, attrs_off);
	if (r >= 0)
		r = check_id_placement(pd, attrs_off);
out:
	free(buf);
	return r;
}

/* --- features -------------------------------------------------------------- */

static int feat_string(struct perf_data *pd, uint64_t off, uint64_t size, const char *what,
		       char **ret)
{
	struct cursor c = { pd, off, off + size, what };

	if (size == 0)
		return 0;
	free(*ret);
	*ret = NULL;
	return cur_string(&c, ret);
}

static int feat_cmdline(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "CMDLINE" };
	char *line = NULL;
	size_t len = 0;
	uint32_t nr;
	int r;

	if (size == 0)
		return 0;
	r = cur_u32(&c, &nr);
	if (r < 0)
		return r;
	if (nr > size / 4)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": CMDLINE: %" PRIu32 " arguments cannot "
			    "fit in %" PRIu64 " bytes", off, nr, size);
	line = calloc(1, 1);
	if (!line)
		return fail(pd, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < nr; i++) {
		char *arg = NULL, *n;
		size_t al;

		r = cur_string(&c, &arg);
		if (r < 0)
			goto err;
		al = strlen(arg);
		n = realloc(line, len + al + 2);
		if (!n) {
			free(arg);
			r = fail(pd, -ENOMEM, "out of memory");
			goto err;
		}
		line = n;
		if (len)
			line[len++] = ' ';
		memcpy(line + len, arg, al + 1);
		len += al;
		free(arg);
	}
	free(pd->info.cmdline);
	pd->info.cmdline = line;
	return 0;
err:
	free(line);
	return r;
}

/* EVENT_DESC names the attrs; matched by their first id as perf does. */
static int feat_event_desc(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "EVENT_DESC" };
	uint32_t nr, asz;
	int r;

	if (size == 0)
		return 0;
	if ((r = cur_u32(&c, &nr)) < 0 || (r = cur_u32(&c, &asz)) < 0)
		return r;
	if (asz < PERF_ATTR_SIZE_VER0 || asz > MAX_ATTR_SIZE || nr > size / asz)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": EVENT_DESC: %" PRIu32 " events of %"
			    PRIu32 " bytes cannot fit in %" PRIu64 " bytes", off, nr, asz, size);
	for (uint32_t i = 0; i < nr; i++) {
		struct perf_data_event *ev = NULL;
		uint32_t nr_ids;
		uint64_t id = 0;
		char *name = NULL;

		if (!in_bounds(c.off, asz, c.end))
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": EVENT_DESC: event %" PRIu32
				    " runs past the end of the section", c.off, i);
		c.off += asz;
		if ((r = cur_u32(&c, &nr_ids)) < 0 || (r = cur_string(&c, &name)) < 0)
			return r;
		if (nr_ids > (c.end - c.off) / 8) {
			free(name);
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": EVENT_DESC: %" PRIu32 " ids run "
				    "past the end of the section", c.off, nr_ids);
		}
		if (nr_ids && (r = cur_u64(&c, &id)) < 0) {
			free(name);
			return r;
		}
		if (nr_ids > 1)
			c.off += (uint64_t)(nr_ids - 1) * 8;
		if (nr_ids)
			ev = event_by_id(pd, id);
		else if (i < pd->n_events)
			ev = &pd->events[i];
		if (ev && !ev->name && name[0]) {
			ev->name = name;
			name = NULL;
		}
		free(name);
	}
	return 0;
}

static int feat_cache(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "CACHE" };
	uint32_t version, cnt, best_level = UINT32_MAX;
	int r;

	if (size == 0)
		return 0;
	if ((r = cur_u32(&c, &version)) < 0 || (r = cur_u32(&c, &cnt)) < 0)
		return r;
	if (version != 1)	/* a later layout we do not know: no line size */
		return 0;
	if (cnt > size / 28)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": CACHE: %" PRIu32 " levels cannot fit "
			    "in %" PRIu64 " bytes", off, cnt, size);
	for (uint32_t i = 0; i < cnt; i++) {
		uint32_t v[4];
		char *type = NULL, *sz = NULL, *map = NULL;

		r = cur_read(&c, v, sizeof(v));
		if (r >= 0)
			r = cur_string(&c, &type);
		if (r >= 0)
			r = cur_string(&c, &sz);
		if (r >= 0)
			r = cur_string(&c, &map);
		/* the innermost data (or unified) cache's line size */
		if (r >= 0 && (strcmp(type, "Data") == 0 || strcmp(type, "Unified") == 0) &&
		    v[0] < best_level && v[1] && (v[1] & (v[1] - 1)) == 0) {
			best_level = v[0];
			pd->info.l1d_line_size = v[1];
		}
		free(type);
		free(sz);
		free(map);
		if (r < 0)
			return r;
	}
	return 0;
}

static int feat_build_ids(struct perf_data *pd, uint64_t off, uint64_t size)
{
	uint64_t end = off + size;

	while (off < end) {
		struct perf_data_build_id *b, *n;
		uint8_t hdr[36];
		uint16_t rsize;
		size_t flen;
		char *fname;
		int r;

		if (!in_bounds(off, sizeof(hdr), end))
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": BUILD_ID: entry header runs "
				    "past the end of the section at %#" PRIx64, off, end);
		r = read_at(pd, off, hdr, sizeof(hdr));
		if (r < 0)
			return r;
		rsize = get16(hdr + 6);
		if (rsize < sizeof(hdr) || !in_bounds(off, rsize, end))
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": BUILD_ID: entry size %" PRIu16
				    " is too small or runs past the end of the section", off, rsize);
		flen = rsize - sizeof(hdr);
		fname = malloc(flen + 1);
		if (!fname)
			return fail(pd, -ENOMEM, "out of memory");
		r = read_at(pd, off + sizeof(hdr), fname, flen);
		if (r < 0) {
			free(fname);
			return r;
		}
		fname[flen] = '\0';
		n = realloc(pd->info.build_ids, (pd->info.n_build_ids + 1) * sizeof(*n));
		if (!n) {
			free(fname);
			return fail(pd, -ENOMEM, "out of memory");
		}
		pd->info.build_ids = n;
		b = &n[pd->info.n_build_ids++];
		b->misc = get16(hdr + 4);
		b->pid = (int32_t)get32(hdr + 8);
		memcpy(b->id, hdr + 12, 20);
		b->size = (b->misc & MISC_BUILD_ID_SIZE) && hdr[32] <= 20 ? hdr[32] : 20;
		b->filename = fname;
		off += rsize;
	}
	return 0;
}

static int feat_nrcpus(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "NRCPUS" };
	int r;

	r = cur_u32(&c, &pd->info.nr_cpus_avail);
	if (r < 0)
		return r;
	return cur_u32(&c, &pd->info.nr_cpus_online);
}

static int feat_total_mem(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "TOTAL_MEM" };

	return cur_u64(&c, &pd->info.total_mem_kb);
}

static int feat_sample_time(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "SAMPLE_TIME" };
	struct perf_data_info *in = &pd->info;
	int r;

	if ((r = cur_u64(&c, &in->first_sample_time)) < 0 ||
	    (r = cur_u64(&c, &in->last_sample_time)) < 0)
		return r;
	in->has_sample_time = true;
	return 0;
}

static int feat_clockid(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "CLOCKID" };

	return cur_u64(&c, &pd->info.clockid_res_ns);
}

static int feat_clock_data(struct perf_data *pd, uint64_t off, uint64_t size)
{
	struct cursor c = { pd, off, off + size, "CLOCK_DATA" };
	struct perf_data_info *in = &pd->info;
	uint32_t version;
	int r;

	r = cur_u32(&c, &version);
	if (r < 0 || version != 1)	/* a later layout we do not know: skipped */
		return r;
	if ((r = cur_u32(&c, &in->clockid)) < 0 || (r = cur_u64(&c, &in->clock_tod_ns)) < 0 ||
	    (r = cur_u64(&c, &in->clock_clockid_ns)) < 0)
		return r;
	in->has_clock_data = true;
	return 0;
}

#define STRING(f)	NULL, offsetof(struct perf_data_info, f)

/* The feature sections read here, by feature bit; perf_header_strings have
 * no reader of their own but the field they fill. */
static const struct feature_reader {
	const char *name;
	int (*read)(struct perf_data *pd, uint64_t off, uint64_t size);
	size_t string;
} feature_readers[] = {
	[PERF_DATA_FEAT_BUILD_ID] = { "BUILD_ID", feat_build_ids },
	[PERF_DATA_FEAT_HOSTNAME] = { "HOSTNAME", STRING(hostname) },
	[PERF_DATA_FEAT_OSRELEASE] = { "OSRELEASE", STRING(osrelease) },
	[PERF_DATA_FEAT_VERSION] = { "VERSION", STRING(perf_version) },
	[PERF_DATA_FEAT_ARCH] = { "ARCH", STRING(arch) },
	[PERF_DATA_FEAT_NRCPUS] = { "NRCPUS", feat_nrcpus },
	[PERF_DATA_FEAT_CPUDESC] = { "CPUDESC", STRING(cpudesc) },
	[PERF_DATA_FEAT_CPUID] = { "CPUID", STRING(cpuid) },
	[PERF_DATA_FEAT_TOTAL_MEM] = { "TOTAL_MEM", feat_total_mem },
	[PERF_DATA_FEAT_CMDLINE] = { "CMDLINE", feat_cmdline },
	[PERF_DATA_FEAT_EVENT_DESC] = { "EVENT_DESC", feat_event_desc },
	[PERF_DATA_FEAT_CACHE] = { "CACHE", feat_cache },
	[PERF_DATA_FEAT_SAMPLE_TIME] = { "SAMPLE_TIME", feat_sample_time },
	[PERF_DATA_FEAT_CLOCKID] = { "CLOCKID", feat_clockid },
	[PERF_DATA_FEAT_CLOCK_DATA] = { "CLOCK_DATA", feat_clock_data },
};

#undef STRING

/* Feature feat's section [off, +size), whose table entry is at `at`. */
static int read_feature(struct perf_data *pd, unsigned int feat, uint64_t at, uint64_t off,
			uint64_t size)
{
	const struct feature_reader *f;

	if (feat == PERF_DATA_FEAT_COMPRESSED)
		return fail(pd, -EPROTONOSUPPORT, "offset %#" PRIx64 ": the file is compressed "
			    "(perf record -z, feature COMPRESSED): not supported; re-record without "
			    "-z (and without record.compression-level in perfconfig)", at);
	if (feat >= ARRAY_SIZE(feature_readers) || !feature_readers[feat].name)
		return 0;	/* not needed here */
	f = &feature_readers[feat];
	if (f->read)
		return f->read(pd, off, size);
	return feat_string(pd, off, size, f->name, (char **)((char *)&pd->info + f->string));
}

static int read_features(struct perf_data *pd)
{
	struct perf_data_info *in = &pd->info;
	uint64_t table = in->data_offset + in->data_size;
	unsigned int nr = 0, k = 0;
	int r;

	for (unsigned int i = 0; i < ARRAY_SIZE(in->features); i++)
		nr += __builtin_popcountll(in->features[i]);
	if (!nr)
		return 0;
	if (!in_bounds(table, (uint64_t)nr * FILE_SECTION_SIZE, in->file_size))
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": the table of %u feature sections runs "
			    "past the end of the file (%" PRIu64 " bytes): truncated", table, nr,
			    in->file_size);

	for (unsigned int feat = 1; feat < PERF_DATA_FEAT_BITS; feat++) {
		uint64_t sec[2], at = table + (uint64_t)k * FILE_SECTION_SIZE;

		if (!perf_data_has_feature(pd, feat))
			continue;
		k++;
		r = read_at(pd, at, sec, sizeof(sec));
		if (r < 0)
			return r;
		/* sec: struct perf_file_section { u64 offset, size; } */
		if (!in_bounds(sec[0], sec[1], in->file_size))
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": feature %u's section [%#" PRIx64
				    ", +%" PRIu64 ") runs past the end of the file (%" PRIu64
				    " bytes): truncated", at, feat, sec[0], sec[1], in->file_size);
		r = read_feature(pd, feat, at, sec[0], sec[1]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* --- open ------------------------------------------------------------------ */

bool perf_data_has_feature(const struct perf_data *pd, unsigned int feat)
{
	return feat < PERF_DATA_FEAT_BITS &&
	       (pd->info.features[feat / 64] >> (feat % 64) & 1);
}

/* The magic and header size at offset 0: the layouts this reader refuses. */
static int read_magic(struct perf_data *pd, uint64_t *ret_hsize)
{
	uint8_t h[PIPE_HEADER_SIZE];
	uint64_t magic, hsize;
	int r;

	if (pd->info.file_size < PIPE_HEADER_SIZE)
		return fail(pd, -EBADMSG, "offset 0: %" PRIu64 " bytes is too short for a perf.data "
			    "header: truncated", pd->info.file_size);
	r = read_at(pd, 0, h, PIPE_HEADER_SIZE);
	if (r < 0)
		return r;
	magic = get64(h);
	hsize = get64(h + 8);
	if (magic == PERF_MAGIC2_SWAPPED)
		return fail(pd, -EPROTONOSUPPORT, "offset 0: the file was written on a machine of the "
			    "other byte order: not supported, convert it with perf on such a machine");
	if (magic == PERF_MAGIC1)
		return fail(pd, -EPROTONOSUPPORT, "offset 0: version 1 perf.data (\"PERFFILE\", perf "
			    "before 2.6.35): not supported");
	if (magic != PERF_MAGIC2)
		return fail(pd, -EBADMSG, "offset 0: not a perf.data file (magic %#" PRIx64 ")", magic);
	if (hsize == PIPE_HEADER_SIZE)
		return fail(pd, -EPROTONOSUPPORT, "offset 8: pipe-mode perf.data (perf record -o -): "
			    "not supported; record to a file");
	if (hsize != FILE_HEADER_SIZE && hsize != FILE_HEADER_SIZE_OLD)
		return fail(pd, -EBADMSG, "offset 8: header size %" PRIu64 " is neither %d nor %d: "
			    "corrupt header", hsize, FILE_HEADER_SIZE, FILE_HEADER_SIZE_OLD);
	*ret_hsize = hsize;
	return 0;
}

/* The header's attr and data sections: inside the file, apart, and sized sanely. */
static int check_sections(struct perf_data *pd, uint64_t hsize, uint64_t attrs_off,
			  uint64_t attrs_size)
{
	struct perf_data_info *in = &pd->info;
	uint64_t data_off = in->data_offset, data_size = in->data_size;

	if (in->attr_size < PERF_ATTR_SIZE_VER0 + FILE_SECTION_SIZE || in->attr_size > MAX_ATTR_SIZE)
		return fail(pd, -EBADMSG, "offset 16: attr_size %" PRIu64 " is outside [%d, %d]: "
			    "corrupt header", in->attr_size, PERF_ATTR_SIZE_VER0 + FILE_SECTION_SIZE,
			    MAX_ATTR_SIZE);
	if (attrs_off < hsize || !in_bounds(attrs_off, attrs_size, in->file_size))
		return fail(pd, -EBADMSG, "offset 24: attr section [%#" PRIx64 ", +%" PRIu64 ") overlaps "
			    "the header or runs past the end of the file (%" PRIu64 " bytes): "
			    "truncated or corrupt", attrs_off, attrs_size, in->file_size);
	if (attrs_size == 0 || attrs_size % in->attr_size || attrs_size / in->attr_size > MAX_EVENTS)
		return fail(pd, -EBADMSG, "offset 32: attr section size %" PRIu64 " is not a positive "
			    "multiple of attr_size %" PRIu64 ": corrupt header", attrs_size,
			    in->attr_size);
	if (data_off < hsize || !in_bounds(data_off, data_size, in->file_size))
		return fail(pd, -EBADMSG, "offset 40: data section [%#" PRIx64 ", +%" PRIu64 ") overlaps "
			    "the header or runs past the end of the file (%" PRIu64 " bytes): "
			    "truncated or corrupt", data_off, data_size, in->file_size);
	if (data_size == 0)
		return fail(pd, -EBADMSG, "offset 48: the data section size is 0: perf record did "
			    "not finish writing the file (killed?)");
	if (attrs_off < data_off + data_size && data_off < attrs_off + attrs_size)
		return fail(pd, -EBADMSG, "offset 24: the attr and data sections overlap: corrupt header");
	return 0;
}

/* Names for the events EVENT_DESC left unnamed. */
static int name_events(struct perf_data *pd)
{
	for (size_t i = 0; i < pd->n_events; i++)
		if (!pd->events[i].name) {
			pd->events[i].name = default_event_name(&pd->events[i].attr);
			if (!pd->events[i].name)
				return fail(pd, -ENOMEM, "out of memory");
		}
	return 0;
}

/* The first BUILD_ID entry of the kernel, as hex; perf names it [kernel.kallsyms]. */
static int find_kernel_build_id(struct perf_data *pd)
{
	const struct perf_data_info *in = &pd->info;

	for (size_t i = 0; i < in->n_build_ids && !pd->kernel_build_id; i++) {
		const struct perf_data_build_id *b = &in->build_ids[i];

		if ((b->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL &&
		    strcmp(b->filename, "[kernel.kallsyms]") == 0) {
			pd->kernel_build_id = calloc(1, 2 * b->size + 1);
			if (!pd->kernel_build_id)
				return fail(pd, -ENOMEM, "out of memory");
			for (unsigned int j = 0; j < b->size; j++)
				sprintf(pd->kernel_build_id + 2 * j, "%02x", b->id[j]);
		}
	}
	return 0;
}

static int open_common(struct perf_data *pd)
{
	struct perf_data_info *in = &pd->info;
	uint8_t h[FILE_HEADER_SIZE] = { 0 };
	uint64_t hsize = 0, attrs_off, attrs_size;
	int r;

	r = read_magic(pd, &hsize);
	if (r < 0)
		return r;
	r = read_at(pd, 0, h, hsize);
	if (r < 0)
		return r;
	in->attr_size = get64(h + 16);
	attrs_off = get64(h + 24);
	attrs_size = get64(h + 32);
	in->data_offset = get64(h + 40);
	in->data_size = get64(h + 48);
	if (hsize == FILE_HEADER_SIZE)
		memcpy(in->features, h + 72, sizeof(in->features));
	/* bit 0 is HEADER_RESERVED, always clear */
	in->features[0] &= ~1ULL;

	r = check_sections(pd, hsize, attrs_off, attrs_size);
	if (r < 0)
		return r;
	r = read_attrs(pd, attrs_off, attrs_size);
	if (r < 0)
		return r;
	r = read_features(pd);
	if (r < 0)
		return r;
	r = name_events(pd);
	if (r < 0)
		return r;
	r = find_kernel_build_id(pd);
	if (r < 0)
		return r;

	pd->rec = aligned_alloc(8, RECORD_MAX);
	if (!pd->rec)
		return fail(pd, -ENOMEM, "out of memory");
	if (!pd->mem) {
		pd->window = malloc(WINDOW_SIZE);
		if (!pd->window)
			return fail(pd, -ENOMEM, "out of memory");
	}
	perf_data_rewind(pd);
	return 0;
}

static int finish_open(struct perf_data *pd, int r, struct perf_data **ret, char **ret_error)
{
	if (r < 0) {
		if (ret_error)
			*ret_error = strdup(pd->error[0] ? pd->error : strerror(-r));
		perf_data_free(pd);
		return r;
	}
	*ret = pd;
	return 0;
}

int perf_data_open(const char *path, struct perf_data **ret, char **ret_error)
{
	struct perf_data *pd;
	struct stat st;
	int r;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	pd->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (pd->fd < 0) {
		r = fail(pd, -errno, "cannot open: %s", strerror(errno));
		return finish_open(pd, r, ret, ret_error);
	}
	if (fstat(pd->fd, &st) < 0) {
		r = fail(pd, -errno, "cannot stat: %s", strerror(errno));
		return finish_open(pd, r, ret, ret_error);
	}
	if (!S_ISREG(st.st_mode)) {
		r = fail(pd, -EPROTONOSUPPORT, "not a regular file (pipe-mode input is not supported)");
		return finish_open(pd, r, ret, ret_error);
	}
	pd->info.file_size = st.st_size;
	return finish_open(pd, open_common(pd), ret, ret_error);
}

int perf_data_open_mem(const void *buf, size_t size, struct perf_data **ret, char **ret_error)
{
	static const uint8_t empty[1];
	struct perf_data *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return -ENOMEM;
	pd->fd = -1;
	pd->mem = buf ? buf : empty;
	pd->info.file_size = size;
	return finish_open(pd, open_common(pd), ret, ret_error);
}

void perf_data_free(struct perf_data *pd)
{
	if (!pd)
		return;
	if (pd->fd >= 0)
		close(pd->fd);
	for (size_t i = 0; i < pd->n_events; i++) {
		free(pd->events[i].name);
		free(pd->events[i].ids);
	}
	free(pd->events);
	free(pd->id_map);
	free(pd->info.hostname);
	free(pd->info.osrelease);
	free(pd->info.perf_version);
	free(pd->info.arch);
	free(pd->info.cpudesc);
	free(pd->info.cpuid);
	free(pd->info.cmdline);
	for (size_t i = 0; i < pd->info.n_build_ids; i++)
		free(pd->info.build_ids[i].filename);
	free(pd->info.build_ids);
	free(pd->kernel_build_id);
	free(pd->window);
	free(pd->rec);
	free(pd);
}

const struct perf_data_info *perf_data_info(const struct perf_data *pd)
{
	return &pd->info;
}

size_t perf_data_n_events(const struct perf_data *pd)
{
	return pd->n_events;
}

const struct perf_data_event *perf_data_event(const struct perf_data *pd, size_t i)
{
	return i < pd->n_events ? &pd->events[i] : NULL;
}

const char *perf_data_kernel_build_id(const struct perf_data *pd)
{
	return pd->kernel_build_id;
}

/* --- records --------------------------------------------------------------- */

void perf_data_rewind(struct perf_data *pd)
{
	pd->pos = pd->info.data_offset;
	pd->error[0] = '\0';
}

/* A NUL-terminated string at [p, end) of the record, or NULL. */
static const char *rec_string(const uint8_t *p, const uint8_t *end)
{
	if (p >= end || !memchr(p, '\0', end - p))
		return NULL;
	return (const char *)p;
}

static int parse_other(struct perf_data *pd, struct perf_data_record *rec, uint64_t off)
{
	const uint8_t *base = rec->data, *body = base + 8;
	size_t tail = rec->event ? perf_sample_id_size(&rec->event->attr) : 0;
	const uint8_t *end;
	char tbuf[16];

	if (rec->event && pd->sample_id_all) {
		char why[160];

		if (perf_sample_id_parse(&rec->event->attr, base, rec->size, &rec->sid, why,
					 sizeof(why)) < 0)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %s record: %s", off,
				    perf_record_type_name(rec->type, tbuf, sizeof(tbuf)), why);
	}
	if (tail > (size_t)rec->size - 8)
		tail = 0;
	end = base + rec->size - tail;

#define NEED(n) do {								\
		if ((size_t)(end - body) < (n))					\
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %s record of %u bytes is " \
				    "too short for its fields", off,			\
				    perf_record_type_name(rec->type, tbuf, sizeof(tbuf)), rec->size); \
	} while (0)

	switch (rec->type) {
	case PERF_RECORD_LOST:
		NEED(16);
		rec->u.lost.id = get64(body);
		rec->u.lost.lost = get64(body + 8);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		NEED(8);
		rec->u.lost_samples.lost = get64(body);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		NEED(24);
		rec->u.throttle.time = get64(body);
		rec->u.throttle.id = get64(body + 8);
		rec->u.throttle.stream_id = get64(body + 16);
		break;
	case PERF_RECORD_COMM:
		NEED(8);
		rec->u.comm.pid = get32(body);
		rec->u.comm.tid = get32(body + 4);
		rec->u.comm.comm = rec_string(body + 8, end);
		if (!rec->u.comm.comm)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": COMM record: the name is not "
				    "NUL-terminated inside the record", off);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		size_t fixed = rec->type == PERF_RECORD_MMAP ? 32 : 64;

		NEED(fixed);
		rec->u.mmap.pid = get32(body);
		rec->u.mmap.tid = get32(body + 4);
		rec->u.mmap.addr = get64(body + 8);
		rec->u.mmap.len = get64(body + 16);
		rec->u.mmap.pgoff = get64(body + 24);
		if (rec->type == PERF_RECORD_MMAP2) {
			rec->u.mmap.prot = get32(body + 56);
			rec->u.mmap.flags = get32(body + 60);
		}
		rec->u.mmap.filename = rec_string(body + fixed, end);
		if (!rec->u.mmap.filename)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %s record: the file name is not "
				    "NUL-terminated inside the record", off,
				    perf_record_type_name(rec->type, tbuf, sizeof(tbuf)));
		break;
	}
	default:
		break;
	}
#undef NEED
	return 0;
}

/* The fields of record rec at off, and in ret_extra the bytes that follow it
 * outside header.size. */
static int parse_record(struct perf_data *pd, struct perf_data_record *rec, uint64_t off,
			uint64_t *ret_extra)
{
	uint16_t size = rec->size;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE: {
		char why[200];

		rec->event = record_event(pd, rec->type, rec->data, size);
		if (!rec->event)
			return 0;	/* unknown id: perf drops it too */
		if (perf_sample_parse(&rec->event->attr, rec->data, size, &rec->sample, why,
				      sizeof(why)) < 0)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": SAMPLE record of event '%s' "
				    "(%u bytes): %s", off, rec->event->name, size, why);
		return 0;
	}
	case PERF_DATA_RECORD_COMPRESSED:
		return fail(pd, -EPROTONOSUPPORT, "offset %#" PRIx64 ": PERF_RECORD_COMPRESSED: "
			    "zstd-compressed perf.data (perf record -z) is not supported; re-record "
			    "without -z (and without record.compression-level in perfconfig)", off);
	case PERF_DATA_RECORD_AUXTRACE:
		/* the AUX data follows the record, outside header.size */
		if (size < 16)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": AUXTRACE record of %u bytes "
				    "has no size field", off, size);
		*ret_extra = get64((const uint8_t *)rec->data + 8);
		return 0;
	case PERF_DATA_RECORD_HEADER_TRACING_DATA:
		if (size < 12)
			return fail(pd, -EBADMSG, "offset %#" PRIx64 ": TRACING_DATA record of %u bytes "
				    "has no size field", off, size);
		*ret_extra = get32((const uint8_t *)rec->data + 8);
		return 0;
	default:
		if (rec->type >= PERF_RECORD_MMAP && rec->type < PERF_DATA_RECORD_HEADER_ATTR) {
			rec->event = record_event(pd, rec->type, rec->data, size);
			return parse_other(pd, rec, off);
		}
		return 0;
	}
}

int perf_data_next(struct perf_data *pd, struct perf_data_record *rec)
{
	uint64_t end = pd->info.data_offset + pd->info.data_size, off = pd->pos, extra = 0;
	const uint8_t *p;
	char tbuf[16];
	uint16_t size;
	int r;

	memset(rec, 0, sizeof(*rec));
	if (off >= end)
		return 0;
	if (end - off < 8)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %" PRIu64 " bytes left in the data "
			    "section, too few for a record header: truncated or corrupt",
			    off, end - off);
	r = peek(pd, off, 8, &p);
	if (r < 0)
		return r;
	rec->offset = off;
	rec->type = get32(p);
	rec->misc = get16(p + 4);
	rec->size = size = get16(p + 6);
	if (size < 8)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %s record claims %u bytes, less than "
			    "its header: corrupt", off,
			    perf_record_type_name(rec->type, tbuf, sizeof(tbuf)), size);
	if (end - off < size)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %s record of %u bytes runs past the end "
			    "of the data section at %#" PRIx64 ": truncated or corrupt", off,
			    perf_record_type_name(rec->type, tbuf, sizeof(tbuf)), size, end);
	r = peek(pd, off, size, &p);
	if (r < 0)
		return r;
	memcpy(pd->rec, p, size);
	rec->data = pd->rec;

	r = parse_record(pd, rec, off, &extra);
	if (r < 0)
		return r;
	if (extra > end - off - size)
		return fail(pd, -EBADMSG, "offset %#" PRIx64 ": %s record's %" PRIu64 " bytes of "
			    "payload run past the end of the data section at %#" PRIx64
			    ": truncated or corrupt", off,
			    perf_record_type_name(rec->type, tbuf, sizeof(tbuf)), extra, end);
	pd->pos = off + size + extra;
	return 1;
}
