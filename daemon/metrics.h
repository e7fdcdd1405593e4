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

/*
 * Per-path totals since the daemon started, from the attribution of the
 * intervals it wrote (path_intervals), and which paths this kernel
 * carries (patch map): "carries", "lacks" or "unknown".
 */
#define EXPORT_PATHS 4
struct path_export {
	const char *patch[EXPORT_PATHS];
	uint64_t lcl_hitm[EXPORT_PATHS], rmt_hitm[EXPORT_PATHS], peer[EXPORT_PATHS];
	uint64_t samples[EXPORT_PATHS];
	double work[EXPORT_PATHS];
	bool measured[EXPORT_PATHS];	/* HITM was sampled at all */
	int64_t last_interval_id;	/* added up to here */
};

/* Adds the path_intervals rows of boot_id newer than the last call. */
int path_export_update(struct path_export *p, sqlite3 *db, int64_t boot_id);

/* Writes the metrics; labels are escaped. */
int metrics_write(FILE *f, const struct boot_info *b, const struct recorder *r,
		  const struct path_export *p, uint64_t db_bytes);

/* Writes the metrics to path with output_write(): a regular file is
 * replaced whole (path.tmp.PID renamed over it), a FIFO or device written
 * in place without blocking. Logs a warning on failure. */
int metrics_write_file(const char *path, const struct boot_info *b, const struct recorder *r,
		       const struct path_export *p, uint64_t db_bytes);

/* Label value escaping: backslash, double quote and newline. */
void metrics_escape(FILE *f, const char *s);

#endif
