/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_RETENTION_H
#define MMHITM_RETENTION_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Bounded storage. By age: per-line and /proc detail older than detail_ns
 * goes first, whole intervals older than raw_ns next (rolled up into
 * hourly tables first), rollups older than rollup_ns last. By size: while
 * the database is over max_bytes, the same order applies to the oldest data
 * whatever its age, so the file never exceeds the budget by more than what
 * one interval added. Zero disables a limit.
 *
 * ship_required: age never deletes an interval (or its detail) that
 * `mmhitm ship` has not sent (ship_cursors), nor, with ship_rollup_s, one
 * whose roll-up bucket of that grain it has not sent; the size budget
 * still does, and counts those in unshipped and retention_log.unshipped.
 */
struct retention_policy {
	int64_t detail_ns;
	int64_t raw_ns;
	int64_t rollup_ns;
	uint64_t max_bytes;
	bool ship_required;
	int64_t ship_rollup_s;		/* grain ship sends roll-ups at; 0: none */
};

struct retention_result {
	int64_t intervals;		/* deleted (after roll-up) */
	int64_t detail_intervals;	/* whose detail was dropped */
	int64_t hours;			/* rollup hours deleted */
	int64_t objects;		/* learned objects dead before the oldest
					 * interval kept, deleted by the size budget */
	uint64_t bytes_before;
	uint64_t bytes_after;
	int over_budget;		/* nothing left to delete, still over */
	int64_t unshipped;		/* intervals (or their detail) deleted before
					 * mmhitm ship sent them (size budget) */
};

/* The database's size: pages in use times page size (WAL included). */
int db_size_bytes(sqlite3 *db, uint64_t *ret);

/*
 * Applies the policy at time now_ns. Each step is its own transaction;
 * freed pages are returned with incremental vacuum. Records what it did
 * in retention_log.
 */
int retention_enforce(sqlite3 *db, int64_t now_ns, const struct retention_policy *p,
		      struct retention_result *ret);

#endif
