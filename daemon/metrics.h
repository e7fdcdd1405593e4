/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_METRICS_H
#define MMHITMD_METRICS_H

#include <stdio.h>

#include "analysis.h"
#include "boot.h"
#include "recorder.h"

/*
 * The fleet export: a textfile for node_exporter's textfile collector, in
 * the Prometheus text exposition format (which that collector reads),
 * replaced atomically after every interval. Counters count since mmhitmd
 * started; Prometheus' rate() copes with the restarts.
 */

/*
 * What the metrics say per path: the totals since the daemon started,
 * from the analyzer's one door (analysis.h), and which paths this kernel
 * carries by the patch map: "carries", "lacks" or "unknown".
 */
struct path_export {
	const char *patch[ANALYSIS_PATHS];
	const struct path_totals *totals;	/* NULL: attribution is off */
};

/* The daemon's own figures, beside the recorder's; what the alert rules
 * (monitoring/mmhitm-alerts.yml) read. Times are wall-clock ns. */
struct daemon_export {
	uint64_t db_bytes;		/* the database file's size */
	uint64_t db_max_bytes;		/* max_db_size; 0: no limit */
	int64_t interval_ns;
	int64_t written_ns;		/* the last interval written */
	int64_t analyzed_ns;		/* the last attribution that succeeded; 0 none, < 0 off */
	uint64_t spike_checks;		/* readings of the free counters for spikes */
	uint64_t windows_skipped;	/* intervals whose window the budget left out */
};

/* Writes the metrics; labels are escaped. */
int metrics_write(FILE *f, const struct boot_info *b, const struct recorder *r,
		  const struct path_export *p, const struct daemon_export *x);

/* Writes the metrics to path with output_write(): a regular file is
 * replaced whole (path.tmp.PID renamed over it), a FIFO or device written
 * in place without blocking. Logs a warning on failure. */
int metrics_write_file(const char *path, const struct boot_info *b, const struct recorder *r,
		       const struct path_export *p, const struct daemon_export *x);

/* Label value escaping: backslash, double quote and newline. */
void metrics_escape(FILE *f, const char *s);

#endif
