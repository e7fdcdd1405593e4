/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_REPORT_H
#define MMHITM_REPORT_H

/*
 * The before/after report: reads host databases one at a time (keeping a
 * summary per host, never a host's raw rows past its turn), compares each
 * path's normalized HITM rate before and after every kernel change, pools
 * the hosts into a fleet verdict per path, and writes HTML, JSON and text.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "patchmap.h"

struct report_options {
	int64_t since_ns, until_ns;	/* 0: until the newest data, since 7 days before */
	int64_t before_ns, after_ns;	/* comparison windows either side of a rollout */
	int64_t warmup_ns;		/* excluded after each boot */
	int64_t cohort_ns;		/* rollouts this close together form one cohort */
	unsigned int replicates;	/* --bootstrap: ignored, nothing is resampled */
	uint64_t seed;			/* --seed: ignored */
	double level;			/* of the intervals, e.g. 0.95 */
	double margin;			/* changes within +-margin are "no change" */
	unsigned int min_intervals;	/* measured intervals needed on each side */
	unsigned int min_hosts;		/* compared hosts needed for a fleet verdict; 2 or more */
	unsigned int max_bins;		/* points per time series */
	int64_t rollup_ns;		/* read roll-up buckets this long; 0: intervals */
	bool progress;			/* a progress line on stderr */
	const struct patch_map *patches;
	const char *patches_origin;	/* for the methods section */
	const char *patches_file;	/* where a rule goes: --patches or the installed path */
};

/* The defaults every field above starts from. */
void report_options_init(struct report_options *o);

struct report;

/* Caller frees with report_free(); the patch map must outlive the report. */
struct report *report_new(const struct report_options *o);
void report_free(struct report *r);

/*
 * Reads the databases (two passes: boots and rollouts first, then each
 * host's rates), then computes the fleet statistics. Of several
 * databases, one that cannot be read is said (a warning) and reported in
 * the data-quality section, not fatal; -ENODATA when none could be read.
 * The one database that cannot be opened is db_open()'s error, unsaid
 * (db_open_error()): the caller says it.
 */
int report_run(struct report *r, const char *const *dbs, size_t nr_dbs);

/*
 * The same from a ClickHouse cluster (schema/clickhouse/): its roll-ups
 * at o.rollup_ns, in database (letters, digits, '_'); origin names the
 * source in the report. -ENODATA when the cluster has no hosts.
 */
struct http;
void report_set_rollup(struct report *r, int64_t rollup_ns);
int report_run_clickhouse(struct report *r, struct http *h, const char *database, const char *origin);

/* The range's end, after report_run() chose the default. */
int64_t report_until(const struct report *r);
/* How many paths the report judges, and path p's id ("P1") and fleet
 * verdict ("improved", "regressed", "no change", "insufficient data",
 * "not applicable"). */
int report_nr_paths(void);
const char *report_fleet_verdict(const struct report *r, int p, const char **ret_path);

int report_write_html(const struct report *r, FILE *f);
int report_write_json(const struct report *r, FILE *f);
int report_write_text(const struct report *r, FILE *f);
/* Each path's answer (the summary's first lines), a row each under a header
 * of the JSON's summary.paths keys. */
int report_write_csv(const struct report *r, FILE *f);

#endif
