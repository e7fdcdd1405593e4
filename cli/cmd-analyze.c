// SPDX-License-Identifier: GPL-2.0
/* mmhitm analyze: type and attribute the sampled cache lines. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
	       "objects learned since are applied to earlier unresolved rows too.\n\n"
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
	       "                   path with its database, a header row first)\n");
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

static const char summary_sql[] =
	"SELECT p.path, count(*), sum(lcl_hitm), sum(rmt_hitm), sum(peer), sum(samples),"
	" sum(work), coalesce(g.rests, '')"
	" FROM path_intervals p LEFT JOIN ("
	/* what each path's HITM rests on: its grades' shares */
	"  SELECT path, group_concat(grade || ' ' || printf('%.0f', 100.0 * hitm / tot) || ' %', ', ')"
	"   AS rests FROM (SELECT path, grade, sum(hitm) AS hitm, sum(sum(hitm)) OVER"
	"   (PARTITION BY path) AS tot FROM path_grades GROUP BY path, grade"
	"   ORDER BY path, hitm DESC, grade) WHERE tot > 0 AND hitm > 0 GROUP BY path) g"
	"  USING (path) GROUP BY p.path"
	" ORDER BY p.path NOT LIKE 'P_', sum(coalesce(lcl_hitm + rmt_hitm + peer, 0)) DESC, p.path";

static const char *const summary_cols[] = {
	"path", "intervals", "lcl_hitm", "rmt_hitm", "peer", "samples", "work", "rests_on",
};

/* One row of the summary in the text table. */
static void summary_text_row(sqlite3_stmt *st)
{
	char cols[5][32];

	for (int k = 0; k < 5; k++) {
		if (sqlite3_column_type(st, 2 + k) == SQLITE_NULL)
			snprintf(cols[k], sizeof(cols[k]), "-");
		else if (k == 4)
			snprintf(cols[k], sizeof(cols[k]), "%.0f", sqlite3_column_double(st, 2 + k));
		else
			snprintf(cols[k], sizeof(cols[k]), "%" PRId64, (int64_t)sqlite3_column_int64(st, 2 + k));
	}
	printf("%-22s %9d %9s %9s %9s %9s %12s  %s\n", sqlite3_column_text(st, 0),
	       sqlite3_column_int(st, 1), cols[0], cols[1], cols[2], cols[3], cols[4],
	       sqlite3_column_text(st, 7));
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

/* Per path: intervals, HITM, samples, work and what the HITM rests on. */
static int print_summary(sqlite3 *db, enum summary_format fmt, struct jsonw *jw, struct csvw *cw,
			 const char *dbname)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	size_t measured = 0;	/* rows with HITM sampled */
	int r, rc;

	r = db_prepare(db, &st, summary_sql);
	if (r < 0)
		return r;
	if (fmt == SUMMARY_TEXT) {
		printf("%-22s %9s %9s %9s %9s %9s %12s  %s\n", "path", "intervals", "lcl_hitm",
		       "rmt_hitm", "peer", "samples", "work", "HITM rests on");
	} else if (fmt == SUMMARY_JSON) {
		jsonw_array(jw, "paths");
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		measured += sqlite3_column_type(st, 2) != SQLITE_NULL;
		if (fmt == SUMMARY_TEXT) {
			summary_text_row(st);
			continue;
		}
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
	if (fmt == SUMMARY_JSON)
		jsonw_end(jw);
	if (rc != SQLITE_DONE)
		return log_error_errno(db_errno(rc), "Failed to read path_intervals: %s", sqlite3_errmsg(db));
	if (fmt == SUMMARY_TEXT && !measured)
		explain_empty(db);
	return 0;
}

/* One database analyzed, and its summary; -errno (said). */
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
		int k = analyze_one(o.src.v[i].path, rules, a.rebuild, fmt, &jw, &cw, many && i > 0);

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
