/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_PERF_DATA_H
#define MMHITM_PERF_DATA_H

/*
 * A bounds-checked reader of perf.data files (file mode, "PERFILE2", as
 * written by perf 4.x to 6.x) and the sample-record parser the live sampler
 * shares with it.
 *
 * The layouts followed are include/uapi/linux/perf_event.h (records,
 * sample_type order as kernel/events/core.c:perf_output_sample() writes it)
 * and tools/perf/Documentation/perf.data-file-format.txt (header, attrs,
 * feature sections). Nothing of the file is trusted: every length is
 * checked against the section and the file it claims to be in, and every
 * error says at which file offset the file stopped making sense.
 *
 * The data section is read through a bounded window, never slurped: a
 * multi-GiB `perf c2c record` file costs a 1 MiB buffer.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Newer than Debian 12's linux-libc-dev (6.1); values from 6.12's uapi. */
#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1U << 19)
#endif
#ifndef PERF_ATTR_SIZE_VER8
#define PERF_ATTR_SIZE_VER8 136
#endif

/* perf's own record types (tools/lib/perf/include/perf/event.h). */
enum {
	PERF_DATA_RECORD_HEADER_ATTR		= 64,
	PERF_DATA_RECORD_HEADER_EVENT_TYPE	= 65,
	PERF_DATA_RECORD_HEADER_TRACING_DATA	= 66,
	PERF_DATA_RECORD_HEADER_BUILD_ID	= 67,
	PERF_DATA_RECORD_FINISHED_ROUND		= 68,
	PERF_DATA_RECORD_ID_INDEX		= 69,
	PERF_DATA_RECORD_AUXTRACE_INFO		= 70,
	PERF_DATA_RECORD_AUXTRACE		= 71,
	PERF_DATA_RECORD_AUXTRACE_ERROR		= 72,
	PERF_DATA_RECORD_HEADER_FEATURE		= 80,
	PERF_DATA_RECORD_COMPRESSED		= 81,
	PERF_DATA_RECORD_FINISHED_INIT		= 82,
};

/* Feature bits of the header (tools/perf/util/header.h, HEADER_*). */
enum {
	PERF_DATA_FEAT_TRACING_DATA	= 1,
	PERF_DATA_FEAT_BUILD_ID		= 2,
	PERF_DATA_FEAT_HOSTNAME		= 3,
	PERF_DATA_FEAT_OSRELEASE	= 4,
	PERF_DATA_FEAT_VERSION		= 5,
	PERF_DATA_FEAT_ARCH		= 6,
	PERF_DATA_FEAT_NRCPUS		= 7,
	PERF_DATA_FEAT_CPUDESC		= 8,
	PERF_DATA_FEAT_CPUID		= 9,
	PERF_DATA_FEAT_TOTAL_MEM	= 10,
	PERF_DATA_FEAT_CMDLINE		= 11,
	PERF_DATA_FEAT_EVENT_DESC	= 12,
	PERF_DATA_FEAT_CACHE		= 20,
	PERF_DATA_FEAT_SAMPLE_TIME	= 21,
	PERF_DATA_FEAT_CLOCKID		= 23,
	PERF_DATA_FEAT_COMPRESSED	= 27,
	PERF_DATA_FEAT_CLOCK_DATA	= 29,
	PERF_DATA_FEAT_BITS		= 256,
};

/* One event (attr) of the file, with the sample ids that map to it. */
struct perf_data_event {
	struct perf_event_attr attr;	/* zero-extended to this build's size */
	uint32_t file_attr_size;	/* attr.size as recorded (0 read as VER0) */
	char *name;			/* from EVENT_DESC, else "type/config" */
	uint64_t *ids;
	size_t n_ids;
	unsigned int index;		/* position in the file's attr section */
};

/* One parsed PERF_RECORD_SAMPLE; pointers point into the record buffer
 * and stay valid until the next perf_data_next(). */
struct perf_data_sample {
	uint64_t sample_type;
	uint64_t id, ip, time, addr, stream_id, period;
	uint32_t pid, tid, cpu;
	uint64_t weight;		/* WEIGHT, or WEIGHT_STRUCT's var1_dw */
	uint16_t ins_lat, retire_lat;	/* WEIGHT_STRUCT var2_w, var3_w */
	uint64_t data_src;		/* PERF_MEM_DATA_SRC_NONE when absent, as perf */
	uint64_t transaction, phys_addr, cgroup, data_page_size, code_page_size;
	const uint64_t *callchain;	/* nr entries, context markers included */
	uint64_t callchain_nr;
	const void *raw;
	uint32_t raw_size;
	uint64_t branch_nr, aux_size, user_stack_size;
};

/* What the trailing sample_id of a non-sample record carries. */
struct perf_data_sample_id {
	bool present;
	uint32_t pid, tid, cpu;
	uint64_t time, id, stream_id;
};

struct perf_data_record {
	uint64_t offset;		/* file offset of the record */
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	const void *data;		/* the whole record, header included, 8-aligned */
	/* the event the record belongs to, NULL when its id is unknown (perf
	 * drops such samples too, as nr_unknown_id) */
	const struct perf_data_event *event;
	struct perf_data_sample sample;	/* type == PERF_RECORD_SAMPLE */
	struct perf_data_sample_id sid;	/* other kernel records, with sample_id_all */
	union {
		struct { uint64_t id, lost; } lost;			/* LOST */
		struct { uint64_t lost; } lost_samples;			/* LOST_SAMPLES */
		struct { uint64_t time, id, stream_id; } throttle;	/* (UN)THROTTLE */
		struct { uint32_t pid, tid; const char *comm; } comm;	/* COMM */
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint32_t prot, flags;				/* MMAP2 only */
			const char *filename;
		} mmap;							/* MMAP, MMAP2 */
	} u;
};

struct perf_data_build_id {
	int32_t pid;
	uint16_t misc;			/* cpumode of the object */
	uint8_t size;			/* bytes of id used (20 for SHA-1) */
	uint8_t id[20];
	char *filename;
};

/* What the header and its feature sections say; strings NULL when absent. */
struct perf_data_info {
	uint64_t file_size;
	uint64_t data_offset, data_size;
	uint64_t attr_size;		/* header attr_size (attr + ids section) */
	uint64_t features[PERF_DATA_FEAT_BITS / 64];
	char *hostname, *osrelease, *perf_version, *arch, *cpudesc, *cpuid, *cmdline;
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t total_mem_kb;
	uint32_t l1d_line_size;		/* from CACHE, 0 when absent */
	bool has_sample_time;
	uint64_t first_sample_time, last_sample_time;	/* perf clock, ns */
	bool has_clock_data;
	uint32_t clockid;
	uint64_t clock_tod_ns, clock_clockid_ns;	/* the same instant in both clocks */
	uint64_t clockid_res_ns;	/* CLOCKID */
	struct perf_data_build_id *build_ids;
	size_t n_build_ids;
};

struct perf_data;

/*
 * Opens and validates the header, the attrs and their ids, and the feature
 * sections of a perf.data file. On failure returns -errno (-EBADMSG: the
 * file is malformed or truncated; -EPROTONOSUPPORT: a layout this reader
 * does not support, e.g. pipe mode or byte-swapped; -ENOMEM; -EIO/-errno
 * from the system) and, when ret_error is given, a message naming the file
 * offset, which the caller frees. Logs nothing. Caller frees the reader
 * with perf_data_free().
 */
int perf_data_open(const char *path, struct perf_data **ret, char **ret_error);
/* The same over a buffer the caller keeps alive (fuzzing, tests). */
int perf_data_open_mem(const void *buf, size_t size, struct perf_data **ret, char **ret_error);
void perf_data_free(struct perf_data *pd);

const struct perf_data_info *perf_data_info(const struct perf_data *pd);
size_t perf_data_n_events(const struct perf_data *pd);
const struct perf_data_event *perf_data_event(const struct perf_data *pd, size_t i);
/* Whether a header feature bit is set. */
bool perf_data_has_feature(const struct perf_data *pd, unsigned int feat);
/* The build id of the kernel ([kernel.kallsyms]) as hex, or NULL. */
const char *perf_data_kernel_build_id(const struct perf_data *pd);

/*
 * Reads the next record of the data section into *ret (valid until the
 * next call). Returns 1 for a record, 0 at the end of the data section, or
 * -errno with perf_data_error() naming the offset. Records perf adds that
 * carry payload beyond header.size (AUXTRACE, TRACING_DATA) are stepped
 * over whole. PERF_RECORD_COMPRESSED is an -EPROTONOSUPPORT error.
 */
int perf_data_next(struct perf_data *pd, struct perf_data_record *ret);
/* Starts the data section over. */
void perf_data_rewind(struct perf_data *pd);
/* The message of the last error, or "" when there was none. */
const char *perf_data_error(const struct perf_data *pd);

/* The sample_type and read_format bits known here: 6.12's PERF_SAMPLE_MAX - 1
 * and PERF_FORMAT_MAX - 1. */
#define PERF_DATA_KNOWN_SAMPLE_TYPE	((uint64_t)(1u << 25) - 1)
#define PERF_DATA_KNOWN_READ_FORMAT	((uint64_t)(1u << 5) - 1)

/*
 * Parses the body of a PERF_RECORD_SAMPLE (rec: the whole record, header
 * included, 8-byte aligned, size bytes) by attr's sample_type. Returns 0,
 * or -EBADMSG with a reason in err (when errlen > 0).
 */
int perf_sample_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
		      struct perf_data_sample *ret, char *err, size_t errlen);
/* Parses the trailing sample_id of a non-sample kernel record. */
int perf_sample_id_parse(const struct perf_event_attr *attr, const void *rec, size_t size,
			 struct perf_data_sample_id *ret, char *err, size_t errlen);
/* Bytes the sample_id trailer takes with attr's sample_type. */
size_t perf_sample_id_size(const struct perf_event_attr *attr);

/* "perf.data" record type names for messages ("SAMPLE", "MMAP2", "81"). */
const char *perf_record_type_name(uint32_t type, char *buf, size_t len);

#endif
