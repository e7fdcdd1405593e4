// SPDX-License-Identifier: GPL-2.0
/* mmhitm analyze: type and attribute the sampled cache lines. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyze.h"
#include "cli.h"
#include "commands.h"
#include "config.h"
#include "csvw.h"
#include "db.h"
#include "escape.h"
#include "jsonw.h"
#include "log.h"
#include "opts.h"
#include "rules.h"
#include "source.h"
#include "util.h"

void cmd_analyze_help(void)
{
	printf("Usage: mmhitm analyze [--source DB]... [--rules FILE]... [--rebuild] [--json|--csv] [DB...]\n"
	       "       mmhitm analyze --print-rules [--rules FILE]...\n\n"
	       "Types every sampled kernel data address of the intervals not analyzed yet\n"
	       "(mm_struct of which process, struct page of which pfn, lruvec; the BTF\n"
	       "field and the offset in it), symbolizes IPs and callchains against the\n"
	       "boot's ksyms, and attributes each to a path of the path table, other:<object>\n"
	       "or unresolved\n"
	       "with the rules. Fills line_attribution and path_intervals (views\n"
	       "path_rates and top_lines). Running it again only adds new intervals;\n"
	       "objects learned since are applied to earlier unresolved rows too. The\n"
	       "summary has a row per path and kind of interval, in the unit of the work\n"
	       "counted; a rate only where HITM was sampled and work counted in the same\n"
	       "intervals, else why not (\"no HITM sampled\", \"no work counted\").\n\n"
	       "  --source DB      a database or a glob of them (repeatable; --db and\n"
	       "                   arguments are the same; default $MMHITM_DB or the\n"
	       "                   daemon's), analyzed each in turn. Not a cluster: its\n"
	       "                   rows were analyzed on the hosts before 'mmhitm ship'\n"
	       "  --rules FILE     override rules (repeatable; later files win): a rule\n"
	       "                   named like a default replaces it, a new one is tried\n"
	       "                   first, 'disable NAME' drops one. Format: the shipped\n"
	       "                   defaults, /usr/share/mmhitm/rules.conf\n"
	       "  --rebuild        forget earlier results and attribute everything again\n"
	       "                   (needed after the rules change: analyze warns)\n"
	       "  --print-rules    print the effective rules and their digest, and exit\n"
	       "  --json, --csv    the run and its per-path summary as JSON (docs/json.md;\n"
	       "                   an array for several databases) or as CSV (one row per\n"
	       "                   row of the summary with its database, a header row first)\n");
}

/* Loads the defaults, the host's overrides and each file given. Caller frees. */
static int rules_from_args(const char **files, size_t n, struct rules **ret)
{
	struct rules *rules = rules_new();
	int r;

	if (!rules)
		return log_oom();
	r = rules_load_system(rules);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		r = rules_load_file(rules, files[i]);
		if (r < 0)
			goto fail;
	}
	*ret = rules;
	return 0;
fail:
	rules_free(rules);
	return r;
}

static void print_rules(const struct rules *rules)
{
	for (size_t i = 0; i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);

		printf("%-3zu %-7s %-24s %s\n", i + 1, rule_is_anchor(rule) ? "anchor" : "rule",
		       rule_name(rule), rule_origin(rule));
	}
	printf("digest %s\n", rules_digest(rules));
}

enum summary_format { SUMMARY_TEXT, SUMMARY_JSON, SUMMARY_CSV };

/*
 * Per path, one row per kind of interval: HITM sampled and work counted
 * (the only rows with a rate: HITM over the work of the same intervals),
 * HITM without work, work without HITM, neither. Work in two units (a
 * trace.dat boot's P1 counts all switches, mmhitmd's same-mm ones) is two
 * rows: nothing is summed across units or divided across recordings.
 */
static const char summary_sql[] =
	"SELECT r.path, count(*), sum(r.lcl_hitm), sum(r.rmt_hitm), sum(r.peer), sum(r.samples),"
	" sum(r.work), CASE WHEN sum(r.hitm) > 0 THEN coalesce(g.rests, '') ELSE '' END,"
	" count(DISTINCT r.boot_id), r.work_unit, r.per_work_units,"
	" sum(r.hitm) * r.per_work_units / nullif(sum(r.work), 0),"
	" CASE WHEN r.per_work_units IS NULL THEN 'not a path of the table'"
	"  WHEN r.hitm IS NULL AND r.work IS NULL THEN 'no HITM sampled, no work counted'"
	"  WHEN r.hitm IS NULL THEN 'no HITM sampled' WHEN r.work IS NULL THEN 'no work counted'"
	"  WHEN sum(r.work) = 0 THEN 'no work done' END"
	" FROM path_rates r LEFT JOIN ("
	/* what each path's HITM rests on: its grades' shares */
	"  SELECT path, group_concat(grade || ' ' || printf('%.0f', 100.0 * hitm / tot) || ' %', ', ')"
	"   AS rests FROM (SELECT path, grade, sum(hitm) AS hitm, sum(sum(hitm)) OVER"
	"   (PARTITION BY path) AS tot FROM path_grades GROUP BY path, grade"
	"   ORDER BY path, hitm DESC, grade) WHERE tot > 0 AND hitm > 0 GROUP BY path) g"
	"  USING (path) GROUP BY r.path, r.hitm IS NULL, r.work IS NULL, r.work_unit"
	" ORDER BY r.path NOT LIKE 'P_', sum(coalesce(sum(r.hitm), 0)) OVER (PARTITION BY r.path) DESC,"
	" r.path, r.hitm IS NULL, r.work IS NULL, r.work_unit";

/* The JSON keys and CSV columns, in summary_sql's order (the first eight
 * where they were before the rows split by kind and unit, so that CSV
 * readers by position keep theirs). */
static const char *const summary_cols[] = {
	"path", "intervals", "lcl_hitm", "rmt_hitm", "peer", "samples", "work", "rests_on",
	"boots", "work_unit", "per_work_units", "hitm_per_work", "no_rate",
};

/* A count column of the text table (work: a real), "-" when NULL. */
static void summary_num(sqlite3_stmt *st, int col, bool real, char *buf, size_t size)
{
	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		snprintf(buf, size, "-");
	else if (real)
		snprintf(buf, size, "%.0f", sqlite3_column_double(st, col));
	else
		snprintf(buf, size, "%" PRId64, (int64_t)sqlite3_column_int64(st, col));
}

/* The rate ("0.42 per 1000") or why there is none; "-" off the path table. */
static void summary_rate(sqlite3_stmt *st, char *buf, size_t size)
{
	const char *why = (const char *)sqlite3_column_text(st, 12);

	if (sqlite3_column_type(st, 10) == SQLITE_NULL)
		snprintf(buf, size, "-");
	else if (sqlite3_column_type(st, 11) != SQLITE_NULL)
		snprintf(buf, size, "%.4g per %g", sqlite3_column_double(st, 11),
			 sqlite3_column_double(st, 10));
	else
		snprintf(buf, size, "%s", why ? why : "-");
}

static void summary_text_header(void)
{
	printf("%-22s %5s %9s %9s %9s %9s %9s %12s  %-24s  %-20s %s\n", "path", "boots", "intervals",
	       "lcl_hitm", "rmt_hitm", "peer", "samples", "work", "work unit", "HITM per work",
	       "HITM rests on");
}

/* One row of the summary in the text table. */
static void summary_text_row(sqlite3_stmt *st)
{
	const char *unit = (const char *)sqlite3_column_text(st, 9);
	const char *rests = (const char *)sqlite3_column_text(st, 7);
	char cols[5][32], rate[64];

	for (int k = 0; k < 5; k++)
		summary_num(st, 2 + k, k == 4, cols[k], sizeof(cols[k]));
	summary_rate(st, rate, sizeof(rate));
	printf("%-22s %5d %9d %9s %9s %9s %9s %12s  %-24s  %-*s%s%s\n", sqlite3_column_text(st, 0),
	       sqlite3_column_int(st, 8), sqlite3_column_int(st, 1), cols[0], cols[1], cols[2],
	       cols[3], cols[4], unit ? unit : "-", rests && *rests ? 20 : 0, rate,
	       rests && *rests ? " " : "", rests ? rests : "");
}

/* One row of the summary as a JSON object or a CSV row. */
static void summary_row(sqlite3_stmt *st, enum summary_format fmt, struct jsonw *jw, struct csvw *cw,
			const char *dbname)
{
	if (fmt == SUMMARY_JSON)
		jsonw_object(jw, NULL);
	else
		csvw_str(cw, dbname);
	for (int k = 0; k < (int)ARRAY_SIZE(summary_cols); k++) {
		int t = sqlite3_column_type(st, k);
		const char *key = summary_cols[k];

		if (fmt == SUMMARY_CSV) {
			if (t == SQLITE_INTEGER)
				csvw_int(cw, sqlite3_column_int64(st, k));
			else if (t == SQLITE_FLOAT)
				csvw_num(cw, sqlite3_column_double(st, k));
			else
				csvw_str(cw, (const char *)sqlite3_column_text(st, k));
		} else if (t == SQLITE_NULL) {
			jsonw_null(jw, key);
		} else if (t == SQLITE_INTEGER) {
			jsonw_int(jw, key, sqlite3_column_int64(st, k));
		} else if (t == SQLITE_FLOAT) {
			jsonw_num(jw, key, sqlite3_column_double(st, k));
		} else {
			jsonw_str(jw, key, (const char *)sqlite3_column_text(st, k));
		}
	}
	if (fmt == SUMMARY_CSV)
		csvw_end(cw);
	else
		jsonw_end(jw);
}

/*
 * Why no path has HITM: no interval at all, or (as on a host without a
 * memory-sampling PMU) intervals without memory samples, which give the
 * paths their work but no HITM.
 */
static void explain_empty(sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	char pmu[200] = "";

	if (db_prepare(db, &st, "SELECT (SELECT count(*) FROM intervals),"
				" (SELECT count(*) FROM mem_lines),"
				" (SELECT pmu_detail FROM boots ORDER BY last_seen_ns DESC LIMIT 1)") < 0 ||
	    sqlite3_step(st) != SQLITE_ROW)
		return;
	if (sqlite3_column_text(st, 2))
		text_safe(pmu, sizeof(pmu), (const char *)sqlite3_column_text(st, 2));
	if (!sqlite3_column_int64(st, 0))
		printf("(no intervals yet: is mmhitmd recording into this database? mmhitm status "
		       "--check)\n");
	else if (!sqlite3_column_int64(st, 1))
		printf("(no memory samples: %s; a host with Intel PEBS, AMD IBS or Arm SPE samples "
		       "them, or import a 'perf c2c record' file with mmhitm import)\n",
		       *pmu ? pmu : "no memory-sampling PMU");
}

/* Per path and kind of interval: HITM, samples, work, its unit and the rate. */
static int print_summary(sqlite3 *db, enum summary_format fmt, struct jsonw *jw, struct csvw *cw,
			 const char *dbname)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	size_t measured = 0;	/* rows with HITM sampled */
	int r, rc;

	r = db_prepare(db, &st, summary_sql);
	if (r < 0)
		return r;
	if (fmt == SUMMARY_TEXT)
		summary_text_header();
	else if (fmt == SUMMARY_JSON)
		jsonw_array(jw, "paths");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		measured += sqlite3_column_type(st, 2) != SQLITE_NULL;
		if (fmt == SUMMARY_TEXT)
			summary_text_row(st);
		else
			summary_row(st, fmt, jw, cw, dbname);
	}
	if (fmt == SUMMARY_JSON)
		jsonw_end(jw);
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	if (fmt == SUMMARY_TEXT && !measured)
		explain_empty(db);
	return 0;
}

/* One database analyzed, and its summary; -errno (a failure to open said). */
static int analyze_one(const char *path, const struct rules *rules, bool rebuild,
		       enum summary_format fmt, struct jsonw *jw, struct csvw *cw, bool many)
{
	struct analyze_stats stats;
	sqlite3 *db = NULL;
	int r;

	r = cli_db_open(path, DB_NO_CREATE, &db);
	if (r < 0)
		return r;
	r = analyze_db(db, rules, rebuild ? ANALYZE_REBUILD : 0, &stats);
	if (r < 0)
		goto out;
	if (fmt == SUMMARY_TEXT)
		printf("%s%s: %zu boots, %zu new intervals, %zu sampled lines attributed, %zu retried, "
		       "%zu objects anchored; rules %s%s\n", many ? "\n" : "", path, stats.boots,
		       stats.intervals, stats.rows, stats.retried, stats.anchored, rules_digest(rules),
		       stats.stale_boots ? " (some boots used other rules: --rebuild)" : "");
	if (fmt == SUMMARY_JSON) {
		jsonw_object(jw, NULL);
		jsonw_str(jw, "database", path);
		jsonw_uint(jw, "boots", stats.boots);
		jsonw_uint(jw, "new_intervals", stats.intervals);
		jsonw_uint(jw, "lines_attributed", stats.rows);
		jsonw_uint(jw, "retried", stats.retried);
		jsonw_uint(jw, "anchored", stats.anchored);
		jsonw_uint(jw, "stale_boots", stats.stale_boots);
		jsonw_str(jw, "rules_digest", rules_digest(rules));
	}
	r = print_summary(db, fmt, jw, cw, path);
	if (fmt == SUMMARY_JSON)
		jsonw_end(jw);
out:
	db_close(db);
	return r;
}

struct analyze_args {
	const char **files;
	size_t n_files;
	bool rebuild, print;
};

static int analyze_option(int opt, const char *arg, void *userdata)
{
	struct analyze_args *a = userdata;

	switch (opt) {
	case 'r': a->files[a->n_files++] = arg; return 0;
	case 'R': a->rebuild = true; return 0;
	case 'p': a->print = true; return 0;
	}
	return -EINVAL;
}

int cmd_analyze(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules",       required_argument, NULL, 'r' },
		{ "rebuild",     no_argument,       NULL, 'R' },
		{ "print-rules", no_argument,       NULL, 'p' },
		{}
	};
	_cleanup_free_ const char **files = calloc((size_t)argc, sizeof(*files));
	struct analyze_args a = { .files = files };
	const struct cmd_options c = {
		.prog = "mmhitm analyze", .sets = OPTS_SOURCES | OPTS_FORMAT, .opts = opts,
		.shortopts = "r:", .parse = analyze_option, .userdata = &a, .help = cmd_analyze_help,
	};
	struct rules *rules = NULL;
	enum summary_format fmt;
	struct cli_opts o;
	struct jsonw jw;
	struct csvw cw;
	bool many;
	int r;

	if (!files)
		return log_oom();
	r = cli_opts_parse(argc, argv, &c, &o);
	if (r != 0)
		goto out;
	fmt = o.format == FORMAT_JSON ? SUMMARY_JSON : o.format == FORMAT_CSV ? SUMMARY_CSV : SUMMARY_TEXT;
	if (sources_clickhouse(&o.src)) {
		/* ship sends what analyze wrote: the cluster's rows are attributed already */
		log_error("%s: analyze types a host's own database; the cluster holds rows mmhitm analyze"
			  " attributed on each host before 'mmhitm ship' sent them (to redo them: analyze"
			  " --rebuild on the hosts, then ship --resend)", o.src.v[0].arg);
		r = EXIT_USAGE;
		goto out;
	}

	r = rules_from_args(a.files, a.n_files, &rules);
	if (r < 0)
		goto out;
	if (a.print) {
		print_rules(rules);
		goto out;
	}
	many = o.src.n > 1;
	if (fmt == SUMMARY_JSON) {
		jsonw_init(&jw, stdout);
		if (many)
			jsonw_array(&jw, NULL);
	} else if (fmt == SUMMARY_CSV) {
		csvw_init(&cw, stdout);
		csvw_str(&cw, "database");
		for (size_t k = 0; k < ARRAY_SIZE(summary_cols); k++)
			csvw_str(&cw, summary_cols[k]);
		csvw_end(&cw);
	}
	/* each in turn; the first error is the exit's, the others still run */
	for (size_t i = 0; i < o.src.n; i++) {
		unsigned int said = log_errors_said();
		int k = analyze_one(o.src.v[i].path, rules, a.rebuild, fmt, &jw, &cw, many && i > 0);

		if (k < 0 && many)
			cli_many_failed("analyze", o.src.v[i].path, k, said);
		if (k < 0 && r == 0)
			r = k;
	}
	if (fmt == SUMMARY_JSON) {
		if (many)
			jsonw_end(&jw);
		if (jsonw_finish(&jw) < 0 && r >= 0)
			r = log_error_errno(EIO, "Failed to write the JSON");
	}
out:
	rules_free(rules);
	cli_opts_done(&o);
	return r == 1 ? 0 : r;
}
