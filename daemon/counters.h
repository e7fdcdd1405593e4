/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_COUNTERS_H
#define MMHITMD_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "events.h"

/*
 * High-rate tracepoints counted in the kernel: one perf counting event per
 * tracepoint and online CPU (libperf), read once per interval. Nothing
 * goes through a ring buffer, so the cost is an increment per hit.
 */
struct counters;

struct counters *counters_new(void);
void counters_free(struct counters *c);

/*
 * Adds "system:name", or every event of a system with "system:*". Events
 * this kernel lacks, or that can't be opened, are noted in status and
 * skipped; only allocation failure is an error.
 */
int counters_add(struct counters *c, const char *spec, struct event_status_list *status);

size_t counters_count(const struct counters *c);
const char *counters_name(const struct counters *c, size_t i);	/* "system:name" */
/* Reads every counter's total since it was opened into ret[0..count). */
int counters_read(struct counters *c, uint64_t *ret);

#endif
