/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_SHIP_H
#define MMHITM_SHIP_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "http.h"

/*
 * mmhitm ship: sends what the cluster lacks of one host database to
 * ClickHouse (schema/clickhouse/), table by table, in batches of whole
 * intervals. Per table a cursor in the local ship_cursors table advances
 * only after the HTTP 200 for that batch; the cluster's tables collapse a
 * batch sent twice (ReplacingMergeTree on the natural key, the batch
 * number as version), so a crash between send and acknowledge duplicates
 * nothing and loses nothing.
 */
struct ship_options {
	const char *database;	/* the cluster's database, e.g. "mmhitm" */
	uint64_t batch_rows;	/* rows per insert, rounded up to whole intervals */
	bool resend;		/* forget the cursors: send everything again */
	int64_t rollup_ns;	/* grain of interval_rollup/path_rollup; 0: none */
};

struct ship_table_result {
	const char *table;
	int64_t rows;		/* acknowledged this run */
	int64_t batches;
	int64_t pending;	/* rows still to send (after a failure) */
};

#define SHIP_TABLES 8
/* The tables above, then the two roll-ups (common/rollup.h). */
#define SHIP_RESULTS (SHIP_TABLES + 2)

struct ship_result {
	struct ship_table_result t[SHIP_RESULTS];
	int64_t unanalyzed;	/* intervals whose lines wait for mmhitm analyze */
};

/*
 * Ships every table. Stops at the first batch the cluster does not
 * acknowledge and returns its error, logged once with the server's or the
 * network's reason; what was acknowledged before stays acknowledged.
 */
int ship_run(sqlite3 *db, struct http *h, const struct ship_options *o, struct ship_result *ret);

/* Runs schema/clickhouse/ (compiled in) on the server of h for database
 * and cluster. Logs. */
int ship_init(struct http *h, const char *database, const char *cluster);

#endif
