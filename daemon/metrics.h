/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_METRICS_H
#define MMHITMD_METRICS_H

#include <stdio.h>

#include "boot.h"
#include "recorder.h"

/*
 * The fleet export: a textfile for node_exporter's textfile collector, in
 * the Prometheus text exposition format (which that collector reads),
 * replaced atomically after every interval. Counters count since mmhitmd
 * started; Prometheus' rate() copes with the restarts.
 */

/* Writes the metrics; labels are escaped. */
int metrics_write(FILE *f, const struct boot_info *b, const struct recorder *r, uint64_t db_bytes);

/* Writes path.tmp.PID next to path, then renames it over path. */
int metrics_write_file(const char *path, const struct boot_info *b, const struct recorder *r,
		       uint64_t db_bytes);

/* Label value escaping: backslash, double quote and newline. */
void metrics_escape(FILE *f, const char *s);

#endif
