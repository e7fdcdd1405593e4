// SPDX-License-Identifier: GPL-2.0
/*
 * What `mmhitm report --source clickhouse://` parses of a cluster's
 * answers, on arbitrary bytes: TabSeparated lines (hosts, boots, markers,
 * top lines) and the RowBinary roll-up rows, cut into chunks of every
 * size as libcurl hands them over. The first byte picks the parser and
 * the chunk size. Seeded with real answers of a two-shard 18.16 cluster
 * (tests/fuzz/corpus/fuzz-clickhouse/).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>

#include "log.h"
#include "report-model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t chunks[] = { 1, 3, 7, 16, 64, 4096, 16384, SIZE_MAX };
	int kind;
	size_t chunk;

	if (size < 1)
		return 0;
	log_set_max_level(LOG_CRIT);
	kind = data[0] % 3;
	chunk = chunks[(data[0] / 3) % (sizeof(chunks) / sizeof(chunks[0]))];
	collect_ch_parse(kind, (const char *)data + 1, size - 1, chunk);
	return 0;
}
