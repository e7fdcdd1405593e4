/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_ANALYSIS_H
#define MMHITM_ANALYSIS_H

/*
 * The one door from the daemon into the attribution engine. mmhitmd attributes
 * what it wrote after every interval and exports per-path totals; it
 * needs nothing else of the engine: not its rules, not its tables.
 * analysis_step() is analyze_db() with the installed rules, followed by
 * the boot's new per-path rows added to the running totals.
 */

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "paths.h"

/* Per path of the path table, in its order. */
#define ANALYSIS_PATHS MAX_PATHS

/* Totals of one boot since analysis_new(). */
struct path_totals {
	uint64_t lcl_hitm[ANALYSIS_PATHS], rmt_hitm[ANALYSIS_PATHS], peer[ANALYSIS_PATHS];
	uint64_t samples[ANALYSIS_PATHS];
	double work[ANALYSIS_PATHS];
	bool measured[ANALYSIS_PATHS];	/* HITM was sampled at all */
};

struct analysis;

/* Loads the installed rules (rules_load_system()). 0 or -errno (logged). */
int analysis_new(struct analysis **ret);
void analysis_free(struct analysis *a);

/*
 * Attributes every interval not analyzed yet, then adds boot_id's new
 * path rows to the totals. 0 or -errno (logged); the totals are then
 * unchanged and the next step retries.
 */
int analysis_step(struct analysis *a, sqlite3 *db, int64_t boot_id);
const struct path_totals *analysis_totals(const struct analysis *a);

#endif
