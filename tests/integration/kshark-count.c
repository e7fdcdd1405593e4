// SPDX-License-Identifier: GPL-2.0
/*
 * kshark-count FILE.dat: opens a trace.dat the way KernelShark 2 does
 * (libkshark: kshark_open() picks the trace-cmd input for the top buffer,
 * kshark_tep_init_all_buffers() adds a stream per instance buffer, which
 * is where a flight-recorder snapshot's events are, and
 * kshark_load_all_entries() merges them as KernelShark's view does) and
 * prints how many entries it loaded per event name, "COUNT NAME" a line,
 * then "streams N" and "total COUNT". tests/integration/test-kernelshark.sh compares that with
 * trace-cmd report. Built by that test (libkshark-dev), not by make.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkshark.h"
#include "libkshark-tepdata.h"

#define MAX_IDS 4096

int main(int argc, char **argv)
{
	struct kshark_context *ctx = NULL;
	struct kshark_entry **rows = NULL;
	/* by stream and event id: each buffer's stream numbers its own */
	static long count[8][MAX_IDS];
	static char *name[8][MAX_IDS];
	ssize_t n;
	int sd, r = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: kshark-count FILE.dat\n");
		return 2;
	}
	if (!kshark_instance(&ctx)) {
		fprintf(stderr, "kshark-count: no libkshark context\n");
		return 1;
	}
	sd = kshark_open(ctx, argv[1]);
	if (sd < 0) {
		fprintf(stderr, "kshark-count: kshark_open %s failed (%d)\n", argv[1], sd);
		goto out;
	}
	if (kshark_tep_init_all_buffers(ctx, sd) < 0) {
		fprintf(stderr, "kshark-count: kshark_tep_init_all_buffers failed\n");
		goto out;
	}
	n = kshark_load_all_entries(ctx, &rows);
	if (n < 0) {
		fprintf(stderr, "kshark-count: kshark_load_all_entries failed (%zd)\n", n);
		goto out;
	}
	for (ssize_t i = 0; i < n; i++) {
		int id = rows[i]->event_id, st = rows[i]->stream_id;

		/* Negative ids are KernelShark's own (e.g. missed events). */
		if (id < 0 || id >= MAX_IDS || st < 0 || st >= 8)
			continue;
		if (!name[st][id])
			name[st][id] = kshark_get_event_name(rows[i]);
		count[st][id]++;
	}
	for (int st = 0; st < 8; st++)
		for (int id = 0; id < MAX_IDS; id++)
			if (count[st][id])
				printf("%ld %s\n", count[st][id], name[st][id] ? name[st][id] : "?");
	printf("streams %d\ntotal %zd\n", ctx->n_streams, n);
	for (ssize_t i = 0; i < n; i++)
		free(rows[i]);
	free(rows);
	r = 0;
	kshark_close_all(ctx);
out:
	kshark_free(ctx);
	return r;
}
