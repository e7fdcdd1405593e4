// SPDX-License-Identifier: GPL-2.0
/*
 * The import path past the parser (engine/import.c) on corrupt sample
 * times. A flipped byte in one timestamp once crashed the import (a span
 * of more than 100000 intervals freed an interval array never allocated)
 * or stretched a 4-second recording into 75,060 empty intervals. Now the
 * committed mutants (tests/fixtures/corrupt/) must import with that one
 * sample dropped as an outlier, and every byte of every sample time of the
 * real fixtures, flipped, must import into a bounded number of intervals
 * or fail cleanly, with every memory sample either stored or counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "import.h"
#include "log.h"
#include "test.h"
#include "util.h"

#define INTERVAL_NS	(60LL * NSEC_PER_SEC)

static sqlite3 *db;

struct outcome {
	int r;				/* of the first failing step, or 0 */
	size_t n_iv;
	uint64_t n_timed, outliers, stored;
};

/* Imports buf as mmhitm import does, into db (when store), rolled back after. */
static struct outcome import_buf(const void *buf, size_t size, int64_t max_gap_ns, bool store)
{
	struct import im = { .path = "test", .mtime_ns = 1700000000LL * NSEC_PER_SEC,
			     .interval_ns = INTERVAL_NS, .max_gap_ns = max_gap_ns,
			     .agg_cfg = { .line_size = 64, .keep_user = true, .max_stack = 8 } };
	struct outcome o = { 0 };
	struct perf_data *pd = NULL;
	char *err = NULL;
	int64_t boot_id;

	o.r = perf_data_open_mem(buf, size, &pd, &err);
	free(err);
	if (o.r < 0)
		return o;
	o.r = import_init(&im, pd);
	if (o.r == 0)
		o.r = import_scan(&im);
	if (o.r == 0)
		o.r = import_place(&im);
	if (o.r == 0)
		o.r = import_aggregate(&im);
	if (o.r == 0 && store) {
		CHECK_INT(db_begin(db), ==, 0);
		o.r = import_store(&im, db, "h", "r", NULL, &boot_id);
		db_rollback(db);
	}
	o.n_iv = im.n_iv;
	o.n_timed = im.n_timed;
	o.outliers = im.outliers;
	for (size_t i = 0; i < im.n_iv; i++)
		o.stored += im.iv[i].st.samples;
	import_done(&im);
	return o;
}

static void *slurp(const char *path, size_t *ret_size)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !(buf = malloc(st.st_size ?: 1)) ||
	    read(fd, buf, st.st_size) != st.st_size) {
		close(fd);
		return NULL;
	}
	close(fd);
	*ret_size = st.st_size;
	return buf;
}

/* The mutants that crashed or stretched the import: one outlier each. */
static void test_corrupt_fixtures(void)
{
	static const char *const files[] = {
		"c2c-sample-time-far-future.perf.data",	/* SIGSEGV before */
		"c2c-sample-time-52-days-late.perf.data",	/* 75,060 intervals before */
		"c2c-sample-time-early.perf.data",		/* 550 intervals before */
	};

	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		char path[256];
		size_t size = 0;
		void *buf;
		struct outcome o;

		snprintf(path, sizeof(path), "tests/fixtures/corrupt/%s", files[i]);
		buf = slurp(path, &size);
		CHECK(buf != NULL);
		if (!buf)
			continue;
		o = import_buf(buf, size, IMPORT_MAX_GAP_NS, true);
		CHECK_INT(o.r, ==, 0);
		CHECK_INT(o.outliers, ==, 1);
		CHECK_INT(o.n_iv, ==, 1);
		CHECK_INT(o.stored + o.outliers, ==, o.n_timed);
		CHECK_INT(o.n_timed, ==, 18);
		/* Without the rule the far one is too long a span: an error,
		 * not a crash. */
		o = import_buf(buf, size, 0, false);
		CHECK_INT(o.outliers, ==, 0);
		if (i == 0)
			CHECK_INT(o.r, ==, -E2BIG);
		free(buf);
	}
}

/* The file offsets of each memory sample's time field. */
static size_t time_offsets(const void *buf, size_t size, uint64_t *offs, size_t max)
{
	struct perf_data *pd = NULL;
	struct perf_data_record rec;
	char *err = NULL;
	size_t n = 0;

	if (perf_data_open_mem(buf, size, &pd, &err) < 0) {
		free(err);
		return 0;
	}
	while (n < max && perf_data_next(pd, &rec) > 0) {
		const uint8_t *d = rec.data;

		if (rec.type != PERF_RECORD_SAMPLE || !rec.event || !import_is_memory_event(rec.event) ||
		    !(rec.sample.sample_type & PERF_SAMPLE_TIME))
			continue;
		/* TIME follows the header, IDENTIFIER, IP and TID */
		for (size_t p = 8; p + 8 <= rec.size && p <= 32; p += 8)
			if (!memcmp(d + p, &rec.sample.time, 8)) {
				offs[n++] = rec.offset + p;
				break;
			}
	}
	perf_data_free(pd);
	return n;
}

static void test_flipped_times(void)
{
	static const char *const files[] = {
		"perfdata_numatop_perf_mem_record_loads.perf.data",
		"perfdata_prospar_c2c_record_userspace.perf.data",
		"perfdata_quipper_weight_struct_memloads.perf.data",
	};
	static const uint8_t flips[] = { 0x01, 0x10, 0x80, 0xff };
	const char *dir = getenv("MMHITM_FIXTURES") ?: "tests/fixtures/real";
	size_t tried = 0, failed = 0, dropped = 0, files_read = 0;

	for (size_t f = 0; f < ARRAY_SIZE(files); f++) {
		uint64_t offs[64];
		char path[512];
		size_t size = 0, n;
		struct outcome base;
		uint8_t *buf;
		uint64_t bound;

		snprintf(path, sizeof(path), "%s/%s", dir, files[f]);
		buf = slurp(path, &size);
		if (!buf)
			continue;
		files_read++;
		base = import_buf(buf, size, IMPORT_MAX_GAP_NS, true);
		CHECK_INT(base.r, ==, 0);
		CHECK_INT(base.outliers, ==, 0);
		CHECK_INT(base.stored, ==, base.n_timed);
		n = time_offsets(buf, size, offs, ARRAY_SIZE(offs));
		CHECK_INT(n, ==, base.n_timed);
		/* the recording plus at most one max_gap on either side */
		bound = base.n_iv + 2 * (IMPORT_MAX_GAP_NS / INTERVAL_NS) + 2;
		for (size_t i = 0; i < n; i++) {
			for (int byte = 0; byte < 8; byte++) {
				for (size_t k = 0; k < ARRAY_SIZE(flips); k++) {
					struct outcome o;

					buf[offs[i] + byte] ^= flips[k];
					o = import_buf(buf, size, IMPORT_MAX_GAP_NS, true);
					buf[offs[i] + byte] ^= flips[k];
					tried++;
					if (o.r < 0) {
						failed++;
						continue;
					}
					CHECK_INT(o.n_iv, <=, bound);
					CHECK_INT(o.stored + o.outliers, ==, o.n_timed);
					CHECK_INT(o.outliers, <=, 1);
					dropped += o.outliers;
					/* the rule off: bounded by the cap, never a
					 * crash (not stored: up to 100000 rows) */
					o = import_buf(buf, size, 0, false);
					CHECK(o.r == 0 || o.r == -E2BIG || o.r == -ERANGE);
				}
			}
		}
		free(buf);
	}
	if (!files_read) {
		/* the corrupt fixtures above still ran */
		printf("note: no real fixtures in %s (set MMHITM_FIXTURES)\n", dir);
		return;
	}
	printf("%zu mutants of %zu fixtures: %zu failed cleanly, %zu outlier samples dropped\n",
	       tried, files_read, failed, dropped);
	CHECK(dropped > 0);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);	/* the outliers we make log warnings */
	if (db_open(":memory:", 0, &db) < 0)
		return 1;
	RUN(test_corrupt_fixtures);
	RUN(test_flipped_times);
	db_close(db);
	return test_exit();
}
