/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_REPORTS_LAB_H
#define MMHITM_REPORTS_LAB_H

/*
 * The patch author's table (`mmhitm lab report`): a lab's runs (schema
 * 015-lab.sql) as the patches' postings print them. Per configuration and
 * kernel, the median of each boot's runs, averaged over the boots; the
 * change patched / base - 1; and its interval with the boot as the unit of
 * replication (runs within a boot share its layout, its caches, its
 * frequency: they are not independent of it). Beside it, where mmhitmd
 * sampled HITM during the runs, the HITM per unit of the path's work on
 * the path's lines and the share of it that moved off. docs/lab.md says
 * how to read it.
 */
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "stats.h"

#define LAB_LEVEL 0.95

/*
 * What the boots show of a change. The interval is on the log of the boot
 * medians (at least two boots a side): Welch's standard error, min(boots)
 * - 1 degrees of freedom; the change is that of the boot medians' means,
 * as the postings average them.
 */
enum lab_verdict {
	LAB_TOO_FEW,	/* fewer than two boots a side: no interval */
	LAB_NOT_SHOWN,	/* the interval holds no change */
	LAB_HIGHER,	/* the whole interval above no change */
	LAB_LOWER,
};

struct lab_change {
	double change;		/* patched / base - 1, of the means of the boot medians */
	bool has_interval;
	double lo, hi;		/* the interval of the change, as patched / base - 1 */
	double half_width;	/* (hi - lo) / 2: changes smaller than this are not shown */
	double df;		/* the interval's degrees of freedom */
	enum lab_verdict verdict;
};

/* The median of a boot's runs; v is reordered. NAN when n is 0. */
double lab_boot_median(double *v, size_t n);

/*
 * The change between two sides' boot medians (base[nb], patched[np]), at
 * level (LAB_LEVEL). -EDOM when a median is not positive (no log).
 */
int lab_compare(const double *base, size_t nb, const double *patched, size_t np, double level,
		struct lab_change *ret);

/* One configuration on one kernel. */
#define LAB_MAX_BOOTS 16
struct lab_side {
	size_t nboots;
	int seq[LAB_MAX_BOOTS];
	double median[LAB_MAX_BOOTS];	/* of that boot's runs */
	size_t runs[LAB_MAX_BOOTS];	/* its runs with a value */
	double value;			/* mean of the medians; NAN: no boot */
	/* HITM and work over the runs' spans (mmhitmd's intervals in them) */
	bool sampled;			/* some interval in a run sampled HITM */
	double hitm, work;		/* the path's, in intervals with both */
	double all_hitm;		/* every path's and none's, in sampled intervals */
	char work_unit[64];
};

struct lab_config {
	int config, at;
	bool control;
	char *args;
	struct lab_side side[2];	/* 0: base, 1: patched */
	struct lab_change change;
	bool hitm;			/* both sides sampled, in one unit */
	double rate[2];			/* HITM per per_work units of work; NAN: none */
	double moved_off;		/* 1 - rate[1] / rate[0] */
};

struct lab_table {
	char *name, *reproducer, *path;
	int runs, boots;
	char *metric, *unit;
	bool higher_is_better, have_metric;
	char *release[2], *version[2];	/* NULL: that kernel has not run yet */
	int boots_done[2];
	double per_work_units;
	size_t unanalyzed;		/* the runs' intervals with samples, not analyzed */
	struct lab_config *configs;
	size_t nconfigs;
};

/* Reads lab `name` (NULL: the only one) from db into ret. -ENOENT: no
 * such lab (none at all: -ENODATA), -EEXIST: several and no name. */
int lab_table_read(sqlite3 *db, const char *name, struct lab_table *ret);
void lab_table_free(struct lab_table *t);

/* The renderings. */
void lab_print_text(FILE *f, const struct lab_table *t);
void lab_print_json(FILE *f, const struct lab_table *t);
void lab_print_html(FILE *f, const struct lab_table *t);

/* The words for a reproducer's `at` ("CPUs") and configurations ("shared
 * mm", "private mm"), from its name. */
const char *lab_at_label(const char *reproducer);
const char *lab_config_label(const char *reproducer, bool control);

#endif
