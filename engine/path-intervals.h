/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_PATH_INTERVALS_H
#define MMHITM_PATH_INTERVALS_H

/*
 * The writer of path_intervals, analyze.c's last step for each interval:
 * per path, the HITM of the interval's line_attribution rows and the
 * path's own work, from the first of the path table's work sources the
 * boot records (an imported boot borrows the counters of the live boot
 * recorded over the same time). One writer per boot analyzed.
 */

#include <sqlite3.h>
#include <stdint.h>

#include "objects.h"

struct path_intervals;

/*
 * Prepares a writer for the boot whose objects are obj (their object
 * boots are where an import borrows counters; obj must outlive it).
 * Caller frees with path_intervals_free(). 0 or -errno (logged).
 */
int path_intervals_new(sqlite3 *db, const struct objects *obj, struct path_intervals **ret);
void path_intervals_free(struct path_intervals *p);

/* Replaces the path_intervals rows of the interval [t0, t1); keeps them
 * when retention dropped its samples. 0 or -errno (logged). */
int path_intervals_write(struct path_intervals *p, int64_t interval_id, int64_t t0, int64_t t1);

#endif
