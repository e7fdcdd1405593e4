/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_ANALYZE_H
#define MMHITM_ANALYZE_H

/*
 * The attribution engine behind `mmhitm analyze`: for every boot, types
 * and attributes the kernel mem_lines rows of the intervals not analyzed
 * yet (line_attribution), locates anchored objects (anchored_objects),
 * and writes per interval x path HITM and work (path_intervals). Runs are
 * incremental and idempotent; what was learned later (an mm_struct, the
 * vmemmap calibration, an anchor, symbols) is applied to earlier
 * unresolved rows too, so an incremental result equals a rebuild.
 */

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "rules.h"

struct analyze_stats {
	size_t boots;		/* boots looked at */
	size_t intervals;	/* newly analyzed */
	size_t rows;		/* line_attribution rows written */
	size_t retried;		/* earlier rows attributed again */
	size_t anchored;	/* anchored objects added */
	size_t stale_boots;	/* analyzed with other rules and not rebuilt */
};

enum {
	ANALYZE_REBUILD = 1 << 0,	/* forget earlier results first */
};

/*
 * Analyzes every boot in db with rules. A boot analyzed with rules of
 * another digest is warned about (and counted in stale_boots) unless
 * ANALYZE_REBUILD. Returns 0 or -errno (logged).
 */
int analyze_db(sqlite3 *db, const struct rules *rules, unsigned int flags,
	       struct analyze_stats *ret);

#endif
