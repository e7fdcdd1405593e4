// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm import on arbitrary bytes, past the parser: the time range and
 * its outliers, the intervals, the aggregation and the database writes,
 * into one in-memory database whose transaction is rolled back after each
 * input. Seeded from the real fixtures and the corrupt ones
 * (fuzz-import.seeds); crashes found are kept in crashes/fuzz-import/.
 */
#include <stdint.h>
#include <stdlib.h>

#include "db.h"
#include "import.h"
#include "log.h"
#include "perf-data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The steps of mmhitm import; with db, the writes too, rolled back. */
static void import_one(const uint8_t *data, size_t size, int64_t max_gap_ns, sqlite3 *db)
{
	struct import im = { .path = "fuzz", .mtime_ns = 1700000000LL * 1000000000LL,
			     .interval_ns = 60LL * 1000000000LL, .max_gap_ns = max_gap_ns,
			     .agg_cfg = { .line_size = 64, .keep_user = true, .max_stack = 8 } };
	const struct perf_data_info *in;
	struct perf_data *pd = NULL;
	int64_t boot_id;
	char *err = NULL;

	if (perf_data_open_mem(data, size, &pd, &err) < 0) {
		free(err);
		return;
	}
	in = perf_data_info(pd);
	if (in->l1d_line_size >= 8 && in->l1d_line_size <= 4096 &&
	    !(in->l1d_line_size & (in->l1d_line_size - 1)))
		im.agg_cfg.line_size = in->l1d_line_size;
	if (import_init(&im, pd) < 0 || import_scan(&im) < 0 || import_place(&im) < 0 ||
	    import_aggregate(&im) < 0 || !db)
		goto out;
	if (db_begin(db) < 0)
		abort();
	import_store(&im, db, in->hostname ?: "fuzz", in->osrelease ?: "fuzz", NULL, &boot_id);
	db_rollback(db);
out:
	import_done(&im);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static sqlite3 *db;

	if (!db) {
		log_set_max_level(LOG_CRIT);
		if (db_open(":memory:", 0, &db) < 0)
			abort();
	}
	import_one(data, size, IMPORT_MAX_GAP_NS, db);
	/* Without the outlier rule (--max-gap 0) only the interval cap bounds
	 * the range: up to 100000 intervals, too slow to store per input,
	 * so that path stops before the database. */
	import_one(data, size, 0, NULL);
	return 0;
}
