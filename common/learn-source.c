// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "learn-source.h"
#include "util.h"

const struct learn_source_def learn_source_defs[] = {
	{ "kmem", "kmem_cache_alloc", LEARN_MM_ALLOC, .addr = "ptr" },
	{ "kmem", "kmem_cache_free", LEARN_MM_FREE, .addr = "ptr" },
	{ "sched", "sched_process_fork", LEARN_FORK, .pid2 = "child_pid", .comm = "child_comm" },
	{ "sched", "sched_process_exec", LEARN_EXEC, .pid2 = "old_pid", .comm = "filename" },
	{ "mmap_lock", "mmap_lock_acquire_returned", LEARN_MMAP_LOCK, .addr = "mm",
	  .arg = "memcg_id", .text = "memcg_path" },
	{ "pagemap", "mm_lru_insertion", LEARN_PAGE, .addr = "folio", .arg = "pfn" },
	{ "pagemap", "mm_lru_activate", LEARN_PAGE, .addr = "folio", .arg = "pfn" },
	{ "lock", "contention_begin", LEARN_LOCK, .addr = "lock_addr", .arg = "flags" },
	{ "sched", "sched_switch", LEARN_SWITCH, .pid2 = "next_pid" },
};

const size_t learn_n_source_defs = ARRAY_SIZE(learn_source_defs);

/*
 * The kernel-side filter of each event. kmem_cache_alloc names its cache
 * only on recent kernels; elsewhere mm_struct allocations are those of the
 * cache's object size from the functions that allocate mm_structs.
 */
int learn_source_filter(const struct learn_filter_config *cfg, const struct learn_source_def *d,
			struct tep_event *ev, char *buf, size_t len, char *why, size_t whylen)
{
	buf[0] = '\0';
	switch (d->type) {
	case LEARN_MM_FREE:
		if (!tep_find_field(ev, "name")) {
			snprintf(why, whylen, "no cache name in kmem_cache_free on this kernel");
			return -EOPNOTSUPP;
		}
		/* fall through */
	case LEARN_MM_ALLOC:
		if (tep_find_field(ev, "name")) {
			snprintf(buf, len, "name == \"mm_struct\"");
			return 0;
		}
		if (!cfg->mm_object_size) {
			snprintf(why, whylen, "no cache name in the event and no mm_struct object size");
			return -EOPNOTSUPP;
		}
		{
			static const char *const fns[] = { "mm_alloc", "dup_mm", "copy_process" };
			size_t off = snprintf(buf, len, "bytes_req == %" PRIu64, cfg->mm_object_size);
			int nfn = 0;

			for (size_t i = 0; i < ARRAY_SIZE(fns) && cfg->ksyms; i++) {
				const struct ksym *k = kallsyms_find(cfg->ksyms, fns[i]);

				/* dup_mm() is usually inlined into copy_process(). */
				if (!k || (i == 2 && kallsyms_find(cfg->ksyms, "dup_mm")))
					continue;
				off += snprintf(buf + off, len > off ? len - off : 0,
						"%s(call_site >= 0x%" PRIx64 " && call_site < 0x%" PRIx64 ")",
						nfn ? " || " : " && (", k->addr, k->addr + k->size);
				nfn++;
			}
			if (nfn)
				snprintf(buf + off, len > off ? len - off : 0, ")");
		}
		return 0;
	case LEARN_MMAP_LOCK:
		/* Write locks only: mmap/munmap/brk/exec/exit, in the owner. */
		snprintf(buf, len, "write == 1 && success == 1");
		return 0;
	case LEARN_PAGE:
		if (cfg->page_pair_shift)
			snprintf(buf, len, "!(pfn & 0x%llx)", (1ULL << cfg->page_pair_shift) - 1);
		return 0;
	case LEARN_LOCK:
		/* Plain spinlocks: lruvec.lru_lock is one. */
		snprintf(buf, len, "flags == 1");
		return 0;
	case LEARN_FORK:
	case LEARN_EXEC:
	case LEARN_SWITCH:
	case LEARN_MM_SNAPSHOT:
		return 0;
	}
	return 0;
}

/* A numeric field; 0 when the record is too short for it (a file's
 * records are not trusted). */
static uint64_t field_u64(struct tep_format_field *f, const void *data, int size)
{
	unsigned long long v = 0;

	if (f && f->offset >= 0 && f->size > 0 && f->offset + f->size <= size)
		tep_read_number_field(f, data, &v);
	return v;
}

/*
 * Copies a string field, bounded by the record: libtraceevent locates it
 * (fixed array, __data_loc or __rel_loc); the bound is ours, since the
 * record may come from a ring page that wrapped, or from a file.
 */
static void field_str(struct tep_format_field *f, const char *data, int size, char *buf, size_t len)
{
	struct tep_record rec = { .data = (void *)(uintptr_t)data, .size = size };
	const char *p;
	int n = 0;

	buf[0] = '\0';
	if (!f || len == 0)
		return;
	p = tep_get_field_raw(NULL, f->event, f->name, &rec, &n, 0);
	if (!p || p < data || p >= data + size || n <= 0)
		return;
	if (n > data + size - p)
		n = data + size - p;
	if ((size_t)n >= len)
		n = len - 1;
	memcpy(buf, p, n);
	buf[n] = '\0';
}

int learn_decoder_init(struct learn_decoder *dec, const struct learn_source_def *d,
		       struct tep_event *ev)
{
	memset(dec, 0, sizeof(*dec));
	dec->type = d->type;
	dec->id = ev->id;
	dec->f_pid = tep_find_common_field(ev, "common_pid");
	dec->f_addr = d->addr ? tep_find_field(ev, d->addr) : NULL;
	dec->f_arg = d->arg ? tep_find_field(ev, d->arg) : NULL;
	dec->f_pid2 = d->pid2 ? tep_find_field(ev, d->pid2) : NULL;
	dec->f_comm = d->comm ? tep_find_field(ev, d->comm) : NULL;
	dec->f_text = d->text ? tep_find_field(ev, d->text) : NULL;
	if (d->type == LEARN_FORK || d->type == LEARN_EXEC || d->type == LEARN_SWITCH)
		dec->f_addr = tep_find_field(ev, d->type == LEARN_FORK ? "parent_pid" :
						 d->type == LEARN_EXEC ? "pid" : "prev_pid");
	if (!dec->f_pid || !dec->f_addr || (d->arg && !dec->f_arg && !dec->f_text) ||
	    (d->pid2 && !dec->f_pid2))
		return -EPROTO;
	return 0;
}

void learn_decoder_decode(const struct learn_decoder *dec, const void *data, int size,
			  int64_t ts_ns, struct learn_event *ret, char *text, size_t len)
{
	char tmp[256];

	*ret = (struct learn_event){ .type = dec->type, .ts_ns = ts_ns };
	if (len)
		text[0] = '\0';
	ret->pid = (int32_t)field_u64(dec->f_pid, data, size);
	switch (dec->type) {
	case LEARN_SWITCH:
		ret->pid = (int32_t)field_u64(dec->f_addr, data, size);
		ret->pid2 = (int32_t)field_u64(dec->f_pid2, data, size);
		break;
	case LEARN_FORK:
	case LEARN_EXEC:
		ret->pid = (int32_t)field_u64(dec->f_addr, data, size);
		ret->pid2 = (int32_t)field_u64(dec->f_pid2, data, size);
		field_str(dec->f_comm, data, size, tmp, sizeof(tmp));
		/* exec's is a path: comm is its basename, as the kernel sets it. */
		snprintf(ret->comm, sizeof(ret->comm), "%.15s",
			 strrchr(tmp, '/') ? strrchr(tmp, '/') + 1 : tmp);
		break;
	default:
		ret->addr = field_u64(dec->f_addr, data, size);
		if (dec->f_arg) {
			ret->arg = field_u64(dec->f_arg, data, size);
			ret->has_arg = true;
		} else if (dec->f_text) {
			field_str(dec->f_text, data, size, text, len);
		}
		break;
	}
}
