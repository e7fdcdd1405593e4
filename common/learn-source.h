/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_LEARN_SOURCE_H
#define MMHITMD_LEARN_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <traceevent/event-parse.h>

#include "kallsyms.h"
#include "learn.h"

/*
 * The tracepoints objects are learned from, and how one record of each
 * becomes a learn_event: the one definition shared by the live stream
 * (stream.c, from mmhitmd's tracefs instance) and the import of a
 * trace-cmd trace.dat (engine/import-tracedat.c). Neither a tracefs
 * instance nor /proc is needed here: only the event formats (a tep).
 */

struct learn_source_def {
	const char *system, *name;
	enum learn_type type;
	const char *addr, *arg, *pid2, *comm, *text;	/* field names */
};

extern const struct learn_source_def learn_source_defs[];
extern const size_t learn_n_source_defs;

/* What the kernel-side filters depend on. */
struct learn_filter_config {
	unsigned int page_pair_shift;	/* one (folio, pfn) pair per 2^shift pfns */
	/* For kernels whose kmem_cache_alloc has no cache name: the
	 * mm_struct cache's object size and the allocating functions. */
	uint64_t mm_object_size;
	const struct kallsyms *ksyms;
};

/*
 * The filter that keeps only the records learning uses (mmhitmd sets it
 * in the kernel; an import evaluates it with tep_filter_*). "" when every
 * record is wanted. -EOPNOTSUPP, with why, when this event's format
 * can't be filtered as learning needs.
 */
int learn_source_filter(const struct learn_filter_config *cfg, const struct learn_source_def *d,
			struct tep_event *ev, char *buf, size_t len, char *why, size_t whylen);

/* The fields of one event format that decoding reads. */
struct learn_decoder {
	enum learn_type type;
	int id;
	struct tep_format_field *f_pid;		/* common_pid */
	struct tep_format_field *f_addr;
	struct tep_format_field *f_arg;
	struct tep_format_field *f_pid2;
	struct tep_format_field *f_comm;
	struct tep_format_field *f_text;
};

/* -EPROTO when the format lacks a field decoding reads. */
int learn_decoder_init(struct learn_decoder *dec, const struct learn_source_def *d,
		       struct tep_event *ev);

/*
 * One record (data, size: the raw event) stamped ts_ns into *ret;
 * text (len bytes) receives a string field that ret->text is meant to
 * point at (the caller sets it: the stream copies it first).
 */
void learn_decoder_decode(const struct learn_decoder *dec, const void *data, int size,
			  int64_t ts_ns, struct learn_event *ret, char *text, size_t len);

#endif
