// SPDX-License-Identifier: GPL-2.0
/*
 * The perf.data reader on arbitrary bytes: open, every record, every
 * sample through the c2c decoder and the aggregate, as mmhitm import does.
 * Seeded from the real fixtures (fuzz-perf-data.seeds); crashes found are
 * kept in crashes/fuzz-perf-data/ and replayed first.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mem-agg.h"
#include "perf-data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mem_agg *agg;
	struct perf_data_record rec;
	struct perf_data *pd = NULL;
	const struct perf_data_info *in;
	char *err = NULL;
	size_t n = 0;

	if (!agg) {
		struct mem_agg_config cfg = { .line_size = 64, .keep_user = true, .max_stack = 8,
					      .max_entries = 4096 };

		log_set_max_level(LOG_CRIT);
		agg = mem_agg_new(&cfg);
	}
	if (perf_data_open_mem(data, size, &pd, &err) < 0) {
		free(err);
		return 0;
	}
	in = perf_data_info(pd);
	/* touch what the importer reads */
	n += in->hostname ? strlen(in->hostname) : 0;
	n += in->cmdline ? strlen(in->cmdline) : 0;
	n += perf_data_kernel_build_id(pd) ? strlen(perf_data_kernel_build_id(pd)) : 0;
	for (size_t i = 0; i < perf_data_n_events(pd); i++)
		n += strlen(perf_data_event(pd, i)->name);

	while (perf_data_next(pd, &rec) > 0) {
		const struct perf_data_sample *s = &rec.sample;
		struct mem_agg_sample ms;

		if (rec.type == PERF_RECORD_COMM)
			n += strlen(rec.u.comm.comm);
		if ((rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2))
			n += strlen(rec.u.mmap.filename);
		if (rec.type != PERF_RECORD_SAMPLE || !rec.event)
			continue;
		for (uint64_t i = 0; i < s->callchain_nr; i++)
			n += s->callchain[i] & 1;
		ms = (struct mem_agg_sample){ .ip = s->ip, .addr = s->addr, .data_src = s->data_src,
					      .weight = s->weight, .has_weight = true,
					      .kernel = rec.misc & 1, .callchain = s->callchain,
					      .callchain_nr = s->callchain_nr };
		mem_agg_add(agg, &ms);
	}
	mem_agg_reset(agg);
	perf_data_free(pd);
	return n == (size_t)-1;
}
