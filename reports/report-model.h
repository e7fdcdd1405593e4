/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_REPORT_MODEL_H
#define MMHITM_REPORT_MODEL_H

/*
 * What a report holds once computed: the bodies behind report.h, shared by
 * the passes (collect.c), the fleet statistics (report.c) and the writers
 * (html.c, json.c, text.c). Everything here is a per-host or per-fleet
 * summary; raw per-interval rows live only while their host is read.
 */

#include <math.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "report.h"
#include "rollout.h"
#include "stats.h"

#define REPORT_VERSION 1	/* of the JSON layout */
#define TOP_LINES 12		/* cache lines kept per path */
#define HIST_BINS 120		/* log-spaced rate histogram */
#define HIST_LO (-6.0)		/* log10 of the lowest rate binned */
#define HIST_DECADES 15.0	/* decades covered */

/* The paths, their ids, titles, units and per: common/paths.h. */

enum verdict {
	VERDICT_INSUFFICIENT,
	VERDICT_NO_CHANGE,
	VERDICT_IMPROVED,
	VERDICT_REGRESSED,
	VERDICT_NOT_APPLICABLE,		/* the host's kernels cannot run the path (paths.conf needs) */
};

const char *verdict_to_string(enum verdict v);

/* Why intervals of a window were left out. */
struct excluded {
	size_t warmup;		/* within the warm-up after a boot */
	size_t no_pmu;		/* HITM not measured (NULL) */
	size_t idle;		/* no work for the path: no rate */
	size_t not_analyzed;	/* no path_intervals row */
};

struct window {
	int64_t lo_ns, hi_ns;
	size_t n;		/* measured rates */
	double median, p25, p75;
	double duty;		/* mean sampling duty cycle; NAN when unknown */
	struct excluded ex;
};

/* An interval of a relative change, and its equivalence interval; bounds may be infinite. */
struct rel_ci {
	double lo, hi;		/* at the report's level */
	double eq_lo, eq_hi;	/* at 2 * level - 1: the two one-sided tests' */
};

/* The relative interval of a log-scale t interval. */
static inline struct rel_ci rel_ci_of(const struct t_interval *t)
{
	return (struct rel_ci){ expm1(t->lo), expm1(t->hi), expm1(t->eq_lo), expm1(t->eq_hi) };
}

/*
 * What the fleet takes from one host's windows around a change (a rolled
 * host's, or a control's around a cohort): the log change of the windows'
 * levels (STATS_TRIM-trimmed means of the rates, more efficient than the
 * medians), and the covariates of the regression adjustment: on each side
 * the log level of the NEAR_DAYS days next to the change against the rest
 * of the side. A step at the change cannot move them; drift does, and it
 * moves the change with them (docs/statistics.md).
 */
#define NEAR_DAYS 2
struct fleet_input {
	double level_before, level_after;
	double log_change;		/* NAN when a level is not > 0 */
	bool has_near;			/* both sides > NEAR_DAYS whole days, levels > 0 */
	double near[STATS_MAX_COVARIATES];	/* before, after */
};

/* One host, one rollout, one path. */
struct comparison {
	size_t rollout;			/* index into host->rollouts */
	struct window before, after;
	double change;			/* median after / before - 1; NAN when undefined */
	unsigned int days_before, days_after;	/* whole days in each window */
	unsigned int data_days_before, data_days_after;	/* of those, days with rates in every block */
	bool too_short;			/* under STATS_HOST_BLOCKS such days on a side */
	bool has_ci;
	struct rel_ci ci;
	struct block_change bc;		/* has_ci: the blocks and the interval on the log scale */
	struct fleet_input fi;		/* what the fleet uses of it */
	bool has_mwu;
	struct mwu_result mwu;
	enum verdict verdict;
	char *reason;
};

struct host_path {
	struct comparison *cmp;		/* one per rollout in the report range */
	size_t nr_cmp;
	ssize_t chosen;			/* the comparison the fleet uses, or -1 */
	const char *excluded_why;	/* chosen < 0: why (static string, or na_why), or NULL */
	char *na_why;			/* no boot in range can run the path: why; NULL: some can */
	size_t measured;		/* measured rates in the report range */
	double median;			/* of those */
	int64_t hitm;			/* HITM attributed in the range */
	float *bin_rate;		/* per time bin: median rate; NAN: none */
	float *bin_work;		/* per time bin: work units per second; NAN: none */
	uint8_t *bin_state;		/* per time bin: patch_state + 1 of the kernel; 0: down */
};

struct quality {
	size_t intervals;		/* in the data range */
	size_t partial;
	size_t not_analyzed;
	size_t gaps;			/* holes of an interval or more inside a boot */
	int64_t gap_ns, max_gap_ns;
	int64_t events_lost;		/* ring buffer */
	int64_t samples_lost;		/* PERF_RECORD_LOST */
	int64_t throttled;
	int64_t dropped_intervals;
	double interval_s;		/* median interval length */
	size_t pmu_boots, boots;	/* boots in range, and those with a PMU */
};

struct host {
	char *hostname;
	char *machine_id;
	const char *db;			/* argv string */
	struct kernel_info *kernels;
	size_t nr_kernels;
	struct boot_info *boots;
	size_t nr_boots, alloc_boots;
	struct rollout *rollouts;
	size_t nr_rollouts;
	bool *rollout_in_range;
	struct host_path path[MAX_PATHS];
	struct control *controls[MAX_PATHS];	/* this host as a control, per cohort */
	size_t nr_controls[MAX_PATHS];
	struct quality q;
	bool no_pmu;			/* no boot in range had a PMU */
	bool lru_gen_off;		/* every boot in range had LRU_GEN off or absent */
	int64_t last_ns;		/* newest data */
	int64_t db_host_id;
	bool simulated;			/* its database was generated (meta 'simulated') */
};

/*
 * Kernel changes each within cohort_ns of the previous one form a cohort
 * (single linkage on the sorted times); controls are measured at its
 * reference time.
 */
struct cohort {
	int64_t first_ns, last_ns;	/* its earliest and latest change */
	int64_t ref_ns;			/* median rollout time */
	size_t rollouts;
};

struct fleet_change {
	bool valid;
	double estimate;		/* relative change, e.g. -0.2 */
	struct rel_ci ci;		/* relative */
	struct t_interval t;		/* on the log scale: estimate, se, df, p */
	struct did_adjustment adj;	/* did: the regression adjustment, applied or not */
	size_t n, n_controls;
	unsigned int strata;
};

struct top_line {
	size_t host;
	int64_t line_addr;
	char *path, *object_type, *field, *comm, *symbols;
	int64_t tgid;			/* -1: unknown */
	int64_t lcl_hitm, rmt_hitm, peer, hitm, loads, stores;
};

struct db_error {
	const char *db;
	char *error;
};

struct path_share {
	char *path;			/* 'P1'..'P4', 'other:<object>', 'unresolved' */
	int64_t hitm, samples;
};

/* One control host's change around one cohort, kept for the JSON. */
struct control {
	unsigned int cohort;
	struct window before, after;
	struct fleet_input fi;
};

/* How an attributed line was typed (docs/foreign-attribution.md). */
enum grade { GRADE_OBJECT, GRADE_LAYOUT, GRADE_PATH, GRADE_NONE, NR_GRADES };
extern const char *const grade_names[NR_GRADES];

struct fleet_path {
	/* HITM in the range by grade, every host: what the verdict rests on. */
	int64_t grade_hitm[NR_GRADES];
	/* Per-host log changes of the chosen comparisons. */
	double *treated;
	unsigned int *treated_cohort;
	size_t nr_treated, alloc_treated;
	double *treated_x;		/* STATS_MAX_COVARIATES each; NAN: none */
	double *control;
	unsigned int *control_cohort;
	double *control_x;
	size_t nr_controls, alloc_controls;
	size_t controls_hosts;		/* distinct hosts among controls */

	struct fleet_change paired;	/* geometric mean of per-host ratios */
	struct fleet_change did;	/* difference in differences */
	bool has_wilcoxon;
	struct wilcoxon_result wilcoxon;
	double median_host_change;
	size_t improved, regressed, unchanged, undecided;
	size_t too_short;		/* of the undecided: windows too short for an interval */
	/* Why hosts are not in the comparison. */
	size_t candidates;		/* hosts with a kernel change gaining the patch */
	size_t ex_no_pmu, ex_few, ex_zero, ex_unknown_patch, ex_not_gained, ex_not_analyzed;
	size_t ex_not_applicable;	/* hosts with data whose kernels cannot run the path */
	size_t hosts_measured;		/* hosts with any measured rate in range */
	enum verdict verdict;
	char *reason;
	const char *basis;		/* "difference in differences" or "paired" */
	/* Pooled per-interval rates of the chosen comparisons. */
	uint64_t hist_before[HIST_BINS], hist_after[HIST_BINS];
	struct top_line top[TOP_LINES];
	size_t nr_top;
};

/*
 * A path's answer, the report's headline: with one host, that host's own
 * verdict (its chosen comparison, else the most telling one); else the
 * fleet's (answer.c).
 */
struct answer {
	bool host;			/* the one host's own verdict, not the fleet's */
	enum verdict verdict;
	double change, lo, hi;		/* NAN when none */
	double level;			/* of [lo, hi]: the report's, or 2 level - 1 for "no change"
					 * (the two one-sided tests' interval decides it) */
	char *basis;			/* what the interval rests on; NULL: none */
	char *reason;			/* why, and when it can be judged */
	bool caveat;			/* a verdict the reason qualifies (the patch map's doubt) */
	int64_t from_ns;		/* insufficient: the first time a verdict can come, given the
					 * recording continues; 0: not by waiting */
};

struct report {
	struct report_options o;
	int64_t generated_ns;
	int64_t data_lo_ns;		/* since - before window: what is read */
	bool since_given, until_given;
	int64_t bin_ns;			/* time series bin width */
	size_t nr_bins;
	int64_t bins_lo_ns;
	struct host *hosts;
	size_t nr_hosts, alloc_hosts;
	size_t nr_dbs;
	struct cohort *cohorts;
	size_t nr_cohorts;
	struct fleet_path fleet[MAX_PATHS];
	/*
	 * Per path, the series quartiles report_series() gives the writers,
	 * filled on first use (the array is report_end()'s; NULL before).
	 */
	double **series;
	struct answer answer[MAX_PATHS];
	struct top_line other_top[TOP_LINES];	/* lines outside P1..P4 */
	size_t nr_other_top;
	struct db_error *errors;	/* databases that could not be read */
	size_t nr_errors;
	struct path_share *shares;
	size_t nr_shares, alloc_shares;
	size_t rollouts_in_range, rollbacks_in_range, hosts_rolled;
	double seconds;			/* time taken */
	struct timespec t0;
	int64_t cluster_rows;		/* roll-up rows read from a cluster */
	const char *source;		/* "sqlite" or "clickhouse" */
	size_t nr_simulated;		/* hosts from generated databases */
	char simulated_by[64];		/* the first one's generator, e.g. "fleetgen.py" */
};

/* collect.c: pass 1 (hosts, boots, kernels, rollouts) and pass 2 (rates). */
int collect_hosts(struct report *r, const char *path, sqlite3 *db);
int collect_rates(struct report *r, struct host *h, size_t host_index, sqlite3 *db);

/*
 * The passes' rows, whatever their source (a SQLite file's intervals or
 * roll-up buckets, or the cluster's roll-ups): pass 1 adds a host
 * (*ret NULL: a duplicate, ignored), its boots in time order and their
 * kernels' markers, then finishes it; pass 2 feeds one host's intervals
 * in time order, indexes them, feeds its rates, and finishes the host.
 */
struct boot_row {
	int64_t boot_id, start_ns, first_seen_ns, last_seen_ns;
	int nr_cpus;
	const char *release, *version, *build_id, *pmu_kind, *pmu_detail, *lru_gen;
};
int collect_host_add(struct report *r, const char *origin, const char *machine_id, const char *hostname,
		     bool check_dup, struct host **ret);
int collect_boot_add(struct host *h, const struct boot_row *b, size_t *ret_index);
int collect_marker_add(struct host *h, size_t boot, const char *name);
int collect_host_finish(struct report *r, struct host *h);

/* An interval, or a roll-up bucket of intervals. */
struct ivl_row {
	int64_t id;			/* unique in the host; rate rows name it */
	size_t boot;			/* index into host->boots */
	int64_t start_ns, end_ns;
	int64_t intervals, partial, not_analyzed, sampled;
	int64_t events_lost, dropped_intervals, active_ns, samples_lost, throttled;
};
/* A path's HITM and work in one interval or bucket. */
struct rate_row {
	int64_t id;			/* the ivl_row's */
	const char *path;
	int64_t start_ns;
	bool has_hitm, has_work, has_rate;
	int64_t hitm, samples;
	double work, work_seconds, rate;
};
struct rows;
struct rows *collect_rows_new(void);
void collect_rows_free(struct rows *w);
int collect_host_begin(struct report *r, struct host *h);
int collect_rows_interval(struct report *r, struct host *h, struct rows *w, const struct ivl_row *v);
int collect_rows_index(struct report *r, struct host *h, struct rows *w);
int collect_rows_rate(struct report *r, struct host *h, struct rows *w, const struct rate_row *v);
/* The start of the indexed row id; INT64_MIN when there is none. */
int64_t collect_rows_start(struct rows *w, int64_t id);
int collect_rows_finish(struct report *r, struct host *h, struct rows *w);
/* A bucket's rate as path_rates computes an interval's: NAN when none. */
double collect_bucket_rate(int p, bool has_hitm, int64_t hitm, bool has_work, double work);

/*
 * collect-ch.c's response parsers alone (the fuzzer): data fed in chunks
 * of chunk bytes as TabSeparated lines (kind 0), or RowBinary interval
 * (1) or path (2) roll-up rows. The rows, or a negative errno.
 */
ssize_t collect_ch_parse(int kind, const char *data, size_t len, size_t chunk);

/* answer.c: each path's answer, after the fleet verdicts; -ENOMEM. */
int report_answers(struct report *r);
/*
 * What an answer line shows, for every writer: the change and the interval
 * that decided it in nums ("" when none), and the basis and reason to print
 * after it (NULL when the verdict leaves them out).
 */
void answer_parts(const struct answer *a, char *nums, size_t size, const char **basis,
		  const char **reason);
/* "LRU_GEN off or absent": the kernel state path p needs; "" when none. */
void needs_phrase(char *buf, size_t size, int p);
/* What a patch-map rule needs after its verb for kernel k and the paths in
 * mask (bit p): "P1,P2 release 6.12.9"; "" when the mask is empty. */
void patch_map_line(char *buf, size_t size, const struct kernel_info *k, unsigned int unknown);
/* The file that line goes in: --patches, else the installed map's path. */
const char *patch_map_file(const struct report *r);
/* "carries P4; lacks P1 P2; unknown P3": what the patch map says of k. */
void patch_states(char *buf, size_t size, const struct kernel_info *k);
/* The paths (bit p) the patch map does not know for k. */
unsigned int patch_unknown_mask(const struct kernel_info *k);
/* The distinct kernels of the boots in the range, first seen first; the
 * hosts' copies. Caller frees the array; NULL on -ENOMEM. */
const struct kernel_info **report_range_kernels(const struct report *r, size_t *ret_n);

/* report.c: around the passes, whatever the source. */
void report_begin(struct report *r, size_t nr_sources);
int report_prepare(struct report *r);	/* after pass 1 */
int report_end(struct report *r);	/* after pass 2 */
void report_progress(const struct report *r, const char *what, size_t i, size_t n, const char *name);

/* report.c: helpers the passes share. */
size_t report_bin_of(const struct report *r, int64_t t_ns);
unsigned int report_cohort_of(const struct report *r, int64_t t_ns);
int fleet_add_treated(struct fleet_path *f, const struct fleet_input *fi, unsigned int cohort);
int fleet_add_control(struct fleet_path *f, const struct fleet_input *fi, unsigned int cohort);
void hist_add(uint64_t *hist, double rate);
void top_line_add(struct top_line *top, size_t *nr, const struct top_line *l);
void top_line_done(struct top_line *l);
int share_add(struct report *r, const char *path, int64_t hitm, int64_t samples);
double hist_edge(size_t i);	/* lower edge of bin i */
/* The decision rule (stats_decide()) as a verdict, and its CI phrase. */
/* "object 80 %, layout 20 %": the shares of a path's HITM by grade; "no HITM". */
void grades_phrase(char *buf, size_t size, const struct fleet_path *fp);
enum verdict report_decide(double est, const struct rel_ci *ci, double margin);
char *report_ci_phrase(const struct report *r, double est, const struct rel_ci *ci, enum verdict v);
void comparison_decide(const struct report *r, struct comparison *c);
const char *host_name(const struct report *r, size_t i);

/*
 * Per time bin, the q-quantile over hosts of their bin's median rate, among
 * hosts whose kernel then was in patch state group - 1 (group 0: any host),
 * or of their work per second (work = true). NAN where no host had data.
 * out holds r->nr_bins values.
 */
int report_series(const struct report *r, int p, int group, bool work, double q, double *out);

/* Kernel changes in the range grouped by (from, to) kernel. */
struct kernel_pair {
	const struct kernel_info *from, *to;	/* the first host's copies */
	size_t changes, hosts, rollbacks;
};

/* Caller frees *ret. Sorted by changes, most first. -ENOMEM. */
int report_kernel_pairs(const struct report *r, struct kernel_pair **ret, size_t *ret_n);
/* "P1 P2" for the paths in state s, or "none". */
void patch_list(char *buf, size_t size, const struct kernel_info *k, enum patch_state s);

/* Formatting shared by the writers (report.c). */
void fmt_time(char *buf, size_t size, int64_t ns);	/* 2025-01-31T12:00Z */
void fmt_date(char *buf, size_t size, int64_t ns);	/* 2025-01-31 */
void fmt_duration(char *buf, size_t size, int64_t ns);	/* 7d, 30m, 1h30m */
void fmt_pct(char *buf, size_t size, double rel);	/* -12.3 % / +inf % / n/a */
void fmt_ci(char *buf, size_t size, double lo, double hi);	/* -1.0 % .. +2.0 % / - */
void fmt_rate(char *buf, size_t size, double v);	/* 3 significant digits */
void kernel_label(char *buf, size_t size, const struct kernel_info *k);

#endif
