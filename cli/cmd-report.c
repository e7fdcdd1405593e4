// SPDX-License-Identifier: GPL-2.0
/* mmhitm report: before/after verdicts per path across host databases. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cluster.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "opts.h"
#include "output.h"
#include "patchmap.h"
#include "report.h"
#include "source.h"
#include "util.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define PATCHES_DEFAULT SYSCONFDIR "/mmhitm/patches.conf"
#define CLUSTER_ROLLUP_DEFAULT (600 * NSEC_PER_SEC)	/* ship_rollup's default */

void cmd_report_help(void)
{
	printf("Usage: mmhitm report [OPTIONS] [--json|--csv] [--source SOURCE]... [DB...]\n\n"
	       "Compares each path's normalized HITM rate (HITM per unit of the path's own\n"
	       "work, the analyzer's path_rates.hitm_per_work) before and after every kernel\n"
	       "change in the range, per host and across hosts, and says per path: improved,\n"
	       "regressed, no change, insufficient data or not applicable (the kernels'\n"
	       "LRU_GEN state cannot run it), with the reason. On one host the answer is\n"
	       "its own before/after verdict, or from when it can be judged; on more, the\n"
	       "fleet verdict. One database per host (e.g. hosts/*.db); they are read one\n"
	       "at a time. Without any, the database is $MMHITM_DB or\n"
	       "/var/lib/mmhitm/mmhitm.db. Or the fleet's\n"
	       "ClickHouse cluster, where mmhitm ship sends every host's roll-ups.\n\n"
	       "Output: a summary on stdout; with --json or --csv that output instead, and\n"
	       "with --html, --output or --output-dir files beside the summary.\n\n"
	       "  --source SOURCE       where to read (may be repeated): a host database, a\n"
	       "                        glob of them ('hosts/*.db'), or the cluster,\n"
	       "                        clickhouse://[USER@]HOST[:PORT]/DATABASE (HTTP, port\n"
	       "                        8123; clickhouses:// for HTTPS, port 8443)\n"
	       "  --db PATH             a database (may be repeated; same as DB)\n"
	       "  --rollup DURATION     compute from roll-up buckets this long, as mmhitm ship\n"
	       "                        sends them (SQLite: default none, the intervals as\n"
	       "                        recorded; the cluster: ship_rollup, default 10m)\n"
	       "  --credentials FILE    USER:PASSWORD for the cluster, a file only its owner\n"
	       "                        may read (default: ship_credentials of --config)\n"
	       "  --config FILE         where ship_credentials and ship_rollup are read\n"
	       "                        (default %s)\n"
	       "  --since TIME          start of the range (default: 7 days before --until)\n"
	       "  --until TIME          end of the range (default: the newest data, at most now)\n"
	       "                        TIME: YYYY-MM-DD[THH:MM[:SS]] (UTC), @SECONDS, now, -7d,\n"
	       "                        YYYY-Www, today, yesterday, this-week, last-week\n"
	       "  --html FILE           write the self-contained HTML report\n"
	       "  --json                the whole report as JSON on stdout, no summary\n"
	       "  --csv                 the answer per path as CSV on stdout (summary.paths of\n"
	       "                        the JSON: a header, then one row per path), no summary\n"
	       "  --output FILE         write the --json or --csv output to FILE, whole, and\n"
	       "                        the summary on stdout; without either, the summary\n"
	       "                        to FILE. The flags choose the format, never the\n"
	       "                        name: a FILE named .json, .csv or .html for another\n"
	       "                        format is refused\n"
	       "  --json FILE           the old spelling of --json --output FILE, kept with a\n"
	       "                        note: the word after --json is FILE unless it starts\n"
	       "                        with '-', is a glob, or names a database (ends in .db,\n"
	       "                        is SQLite, is a URL), which is then read\n"
	       "  --output-dir DIR      write DIR/report-YYYY-MM-DD.html and .json (the\n"
	       "                        date of --until) and point DIR/latest.* at them\n"
	       "  --follow-symlinks     write into an --output-dir that is a symbolic link\n"
	       "                        (refused otherwise)\n"
	       "  --patches FILE        the patch map (default %s if it\n"
	       "                        exists, else the built-in rules)\n"
	       "  --before DURATION     comparison window before a kernel change (default 7d)\n"
	       "  --after DURATION      comparison window after it (default 7d)\n"
	       "  --warmup DURATION     left out after every boot (default 30m)\n"
	       "  --cohort DURATION     a change within DURATION of the previous one joins\n"
	       "                        its cohort for the difference in differences\n"
	       "                        (default 1d)\n"
	       "  --margin PERCENT      changes within +-PERCENT ('5' or '5%%') are no\n"
	       "                        change (default 5)\n"
	       "  --level FRACTION      confidence level of the intervals (default 0.95)\n"
	       "  --bootstrap N, --seed N  accepted and ignored: the intervals are\n"
	       "                        Student's t, nothing is resampled\n"
	       "  --min-intervals N     measured intervals needed each side (default 30)\n"
	       "  --min-hosts N         compared hosts needed for a fleet verdict (default 3,\n"
	       "                        at least 2); a report on one host answers with that\n"
	       "                        host's own before/after verdict instead\n"
	       "  --fail-on WHAT        exit %d when a path's fleet verdict is 'regressed'\n"
	       "                        (WHAT = regression) or either change (any-change)\n"
	       "  --quiet               no summary on stdout\n"
	       "  --no-progress         no progress line on a terminal\n", CONFIG_DEFAULT_PATH,
	       PATCHES_DEFAULT, EXIT_GATE);
}

enum {
	OPT_SINCE = 0x100, OPT_UNTIL, OPT_HTML, OPT_PATCHES, OPT_BEFORE, OPT_AFTER,
	OPT_WARMUP, OPT_COHORT, OPT_MARGIN, OPT_LEVEL, OPT_BOOTSTRAP, OPT_SEED, OPT_MIN_INTERVALS,
	OPT_MIN_HOSTS, OPT_QUIET, OPT_NO_PROGRESS, OPT_OUTPUT_DIR, OPT_FOLLOW_SYMLINKS,
	OPT_FAIL_ON, OPT_ROLLUP, OPT_OUTPUT,
};

enum fail_on { FAIL_NEVER, FAIL_REGRESSION, FAIL_ANY_CHANGE };

/*
 * --fail-on: a rollout pipeline's gate. Each path whose fleet verdict
 * trips it is named on stderr; EXIT_GATE when any did.
 */
static int gate(const struct report *rep, enum fail_on fail_on)
{
	int r = 0;

	for (int p = 0; fail_on != FAIL_NEVER && p < report_nr_paths(); p++) {
		const char *path, *v = report_fleet_verdict(rep, p, &path);

		if (strcmp(v, "regressed") == 0 ||
		    (fail_on == FAIL_ANY_CHANGE && strcmp(v, "improved") == 0)) {
			fprintf(stderr, "mmhitm report: %s %s across the fleet (--fail-on %s)\n", path, v,
				fail_on == FAIL_REGRESSION ? "regression" : "any-change");
			r = EXIT_GATE;
		}
	}
	return r;
}

struct output_job {
	const struct report *rep;
	int (*writer)(const struct report *, FILE *);
};

static int output_job_write(FILE *f, void *userdata)
{
	const struct output_job *job = userdata;

	return job->writer(job->rep, f);
}

/* On stdout: a write that failed there is close_stdout()'s to say, once. */
static int write_stdout(int (*write)(FILE *f, void *userdata), void *userdata)
{
	int r = write(stdout, userdata);

	return r == -EIO && ferror(stdout) ? 0 : r;
}

/* A regular file through a temporary one, so a reader never sees half a
 * report; a device or FIFO in place (output_write()); "-" is stdout. */
static int write_to(const char *path, int (*write)(FILE *f, void *userdata), void *userdata)
{
	int r;

	if (strcmp(path, "-") == 0)
		return write_stdout(write, userdata);
	r = output_write(path, 0, write, userdata);
	if (r < 0)
		return log_error_errno(r, "Failed to write %s: %m", path);
	return 0;
}

static int write_output(const char *path, const struct report *rep,
			int (*writer)(const struct report *, FILE *))
{
	struct output_job job = { .rep = rep, .writer = writer };

	return write_to(path, output_job_write, &job);
}

/*
 * A --output-dir that is a symbolic link is refused unless follow_symlinks:
 * a link planted where others can write would point the report (written
 * as root by the timer) anywhere. Checked before the report is computed.
 */
static int check_output_dir(const char *dir, bool follow_symlinks)
{
	struct stat st;

	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && !follow_symlinks)
		return log_error_errno(ELOOP, "--output-dir %s is a symbolic link; refusing to follow "
				       "it (--follow-symlinks to write through it)", dir);
	return 0;
}

/* DIR/report-YYYY-MM-DD.{html,json}, for the day the range ends; DIR is made if missing. */
static int output_dir_paths(const char *dir, int64_t until_ns, char **ret_html, char **ret_json)
{
	time_t t = (time_t)((until_ns - 1) / NSEC_PER_SEC);
	char day[16] = "unknown";
	struct tm tm;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return log_error_errno(errno, "Failed to create %s: %m", dir);
	if (gmtime_r(&t, &tm))
		strftime(day, sizeof(day), "%Y-%m-%d", &tm);
	if (asprintf(ret_html, "%s/report-%s.html", dir, day) < 0) {
		*ret_html = NULL;
		return log_oom();
	}
	if (asprintf(ret_json, "%s/report-%s.json", dir, day) < 0) {
		*ret_json = NULL;
		return log_oom();
	}
	return 0;
}

/* DIR/name -> the basename of target, replaced atomically. */
static int point_latest(const char *dir, const char *target, const char *name)
{
	_cleanup_free_ char *link = NULL, *tmp = NULL;
	const char *base = strrchr(target, '/');

	base = base ? base + 1 : target;
	if (asprintf(&link, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.%d", dir, name, (int)getpid()) < 0)
		return log_oom();
	unlink(tmp);
	if (symlink(base, tmp) < 0)
		return log_error_errno(errno, "Failed to create %s: %m", tmp);
	if (rename(tmp, link) < 0) {
		int r = -errno;

		unlink(tmp);
		return log_error_errno(r, "Failed to rename %s to %s: %m", tmp, link);
	}
	return 0;
}

static int parse_uint(const char *s, unsigned int min, unsigned int *ret)
{
	uint64_t v;

	if (parse_u64(s, &v) < 0 || v < min || v > UINT32_MAX)
		return -EINVAL;
	*ret = (unsigned int)v;
	return 0;
}

static int parse_double(const char *s, double min, double max, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -EINVAL;
	*ret = v;
	return 0;
}

/* A percentage, "5" or "5%", from min to max. */
static int parse_percent(const char *s, double min, double max, double *ret)
{
	size_t n = strlen(s);
	char buf[64];

	if (n && s[n - 1] == '%') {
		if (n >= sizeof(buf))
			return -EINVAL;
		snprintf(buf, sizeof(buf), "%.*s", (int)(n - 1), s);
		s = buf;
	}
	return parse_double(s, min, max, ret);
}

/* What --json and --csv choose, for stdout or --output FILE. */
static const struct report_format {
	const char *name;	/* "JSON: FILE" after the summary */
	const char *suffix;	/* a FILE named so holds this format */
	const char *flag;
	int (*write)(const struct report *, FILE *);
} formats[] = {
	[FORMAT_TEXT] = { "the summary", NULL, NULL, report_write_text },
	[FORMAT_JSON] = { "JSON", ".json", "--json", report_write_json },
	[FORMAT_CSV] = { "CSV", ".csv", "--csv", report_write_csv },
};

/*
 * --output FILE holds what --json or --csv chose, else the summary; its
 * name never chooses. A name that says another format is refused rather
 * than written: r.json holding the text summary would mislead its reader.
 */
static int check_output_name(const char *path, enum opts_format format)
{
	const char *dot = strrchr(path, '.');

	if (!dot || strchr(dot, '/'))
		return 0;
	if (strcasecmp(dot, ".html") == 0 || strcasecmp(dot, ".htm") == 0)
		return log_error_errno(EINVAL, "--output %s: the HTML report is written with --html %s",
				       path, path);
	for (size_t i = 0; i < ARRAY_SIZE(formats); i++)
		if (formats[i].suffix && strcasecmp(dot, formats[i].suffix) == 0 && i != format)
			return log_error_errno(EINVAL, "--output %s: the name says %s, but the output is %s: "
					       "%s chooses %s (--output only says where it goes)", path,
					       formats[i].name, formats[format].name, formats[i].flag,
					       formats[i].name);
	return 0;
}

/* What the command line asked for, beside the report's own options. */
struct report_cli {
	struct report_options o;
	const char *html, *patches, *since, *until, *outdir;
	const char *rollup, *credentials, *config;
	const char *output;		/* --output FILE; NULL: stdout */
	const char *json_file;		/* --json FILE, the old spelling of --json --output FILE */
	enum opts_format format;	/* --json, --csv: what stdout or --output gets */
	struct sources src;
	bool quiet, progress, follow_symlinks;
	enum fail_on fail_on;
};

static const struct option report_opts[] = {
	{ "since",         required_argument, NULL, OPT_SINCE },
	{ "until",         required_argument, NULL, OPT_UNTIL },
	{ "html",          required_argument, NULL, OPT_HTML },
	{ "patches",       required_argument, NULL, OPT_PATCHES },
	{ "before",        required_argument, NULL, OPT_BEFORE },
	{ "after",         required_argument, NULL, OPT_AFTER },
	{ "warmup",        required_argument, NULL, OPT_WARMUP },
	{ "cohort",        required_argument, NULL, OPT_COHORT },
	{ "margin",        required_argument, NULL, OPT_MARGIN },
	{ "level",         required_argument, NULL, OPT_LEVEL },
	{ "bootstrap",     required_argument, NULL, OPT_BOOTSTRAP },
	{ "seed",          required_argument, NULL, OPT_SEED },
	{ "min-intervals", required_argument, NULL, OPT_MIN_INTERVALS },
	{ "min-hosts",     required_argument, NULL, OPT_MIN_HOSTS },
	{ "quiet",         no_argument,       NULL, OPT_QUIET },
	{ "no-progress",   no_argument,       NULL, OPT_NO_PROGRESS },
	{ "output",        required_argument, NULL, OPT_OUTPUT },
	{ "output-dir",    required_argument, NULL, OPT_OUTPUT_DIR },
	{ "follow-symlinks", no_argument,     NULL, OPT_FOLLOW_SYMLINKS },
	{ "fail-on",       required_argument, NULL, OPT_FAIL_ON },
	{ "rollup",        required_argument, NULL, OPT_ROLLUP },
	{}
};

/* One option's value into cli; -EINVAL with *allowed saying what is. */
static int report_option(struct report_cli *cli, int c, const char *arg, const char **allowed)
{
	static const char DURATION[] = "a duration such as 7d, 12h, 30m";
	struct report_options *o = &cli->o;
	uint64_t seed;
	double pct = 0;
	int r = 0;

	switch (c) {
	case OPT_SINCE: cli->since = arg; break;
	case OPT_UNTIL: cli->until = arg; break;
	case OPT_HTML: cli->html = arg; break;
	case OPT_PATCHES: cli->patches = arg; break;
	case OPT_BEFORE: r = parse_duration_ns(arg, &o->before_ns); *allowed = DURATION; break;
	case OPT_AFTER: r = parse_duration_ns(arg, &o->after_ns); *allowed = DURATION; break;
	case OPT_WARMUP: r = parse_duration_ns(arg, &o->warmup_ns); *allowed = DURATION; break;
	case OPT_COHORT: r = parse_duration_ns(arg, &o->cohort_ns); *allowed = DURATION; break;
	case OPT_MARGIN:
		/* a change is at most -100 %: a wider margin hides everything */
		r = parse_percent(arg, 0, 99, &pct);
		o->margin = pct / 100;
		*allowed = "a percentage from 0 to 99";
		break;
	case OPT_LEVEL:
		r = parse_double(arg, 0.5, 0.9999, &o->level);
		*allowed = "a confidence level from 0.5 to 0.9999";
		break;
	case OPT_BOOTSTRAP:
		r = parse_uint(arg, 100, &o->replicates);
		*allowed = "100 replicates or more";
		break;
	case OPT_SEED:
		r = parse_u64(arg, &seed);
		o->seed = seed;
		break;
	case OPT_MIN_INTERVALS:
		r = parse_uint(arg, 2, &o->min_intervals);
		*allowed = "2 or more";
		break;
	case OPT_MIN_HOSTS:
		/* a fleet interval is the spread between hosts: one host has none */
		r = parse_uint(arg, 2, &o->min_hosts);
		*allowed = "2 or more: a fleet interval needs two hosts; one host's report answers "
			   "with its own verdict";
		break;
	case OPT_QUIET: cli->quiet = true; break;
	case OPT_NO_PROGRESS: cli->progress = false; break;
	case OPT_ROLLUP:
		cli->rollup = arg;
		r = parse_duration_ns(arg, &o->rollup_ns);
		if (r >= 0 && (o->rollup_ns < NSEC_PER_SEC || o->rollup_ns > 86400 * NSEC_PER_SEC ||
			       o->rollup_ns % NSEC_PER_SEC))
			r = -EINVAL;
		*allowed = "whole seconds from 1s to 1d";
		break;
	case OPT_OUTPUT: cli->output = arg; break;
	case OPT_OUTPUT_DIR: cli->outdir = arg; break;
	case OPT_FOLLOW_SYMLINKS: cli->follow_symlinks = true; break;
	case OPT_FAIL_ON:
		if (strcmp(arg, "regression") == 0)
			cli->fail_on = FAIL_REGRESSION;
		else if (strcmp(arg, "any-change") == 0)
			cli->fail_on = FAIL_ANY_CHANGE;
		else
			r = -EINVAL;
		*allowed = "regression or any-change";
		break;
	}
	return r;
}

/* One of report's own options (getopt's callback): 0, or -EINVAL after saying why. */
static int report_parse_one(int c, const char *arg, void *userdata)
{
	const char *allowed = NULL, *name = "?";
	int r;

	r = report_option(userdata, c, arg, &allowed);
	if (r >= 0)
		return 0;
	for (const struct option *o = report_opts; o->name; o++)
		if (o->val == c)
			name = o->name;
	log_error("Invalid value for --%s: '%s'%s%s%s", name, arg, allowed ? " (" : "",
		  allowed ?: "", allowed ? ")" : "");
	return -EINVAL;
}

/* The command line into cli: 0, 1 after --help, or EXIT_USAGE (said). */
static int report_parse(int argc, char **argv, struct report_cli *cli)
{
	const struct cmd_options c = {
		.prog = "mmhitm report", .opts = report_opts,
		.sets = OPTS_SOURCES | OPTS_CLUSTER | OPTS_FORMAT | OPTS_JSON_FILE,
		.parse = report_parse_one, .userdata = cli, .help = cmd_report_help,
	};
	int64_t now = now_ns(CLOCK_REALTIME);
	struct cli_opts co;
	int r;

	r = cli_opts_parse(argc, argv, &c, &co);
	cli->src = co.src;	/* cli takes them: freed with sources_done() */
	cli->credentials = co.credentials;
	cli->config = co.config_given ? co.config : NULL;
	cli->format = co.format;
	cli->json_file = co.json_file;
	if (r != 0)
		return r;
	if (cli->o.before_ns <= 0 || cli->o.after_ns <= 0 || cli->o.cohort_ns <= 0 ||
	    cli->o.warmup_ns < 0) {
		log_error("--before, --after and --cohort must be positive");
		return EXIT_USAGE;
	}
	if (cli->since && parse_time_ns(cli->since, now, &cli->o.since_ns) < 0) {
		log_error("Invalid --since '%s': " TIME_FORMS, cli->since);
		return EXIT_USAGE;
	}
	if (cli->until && parse_time_ns(cli->until, now, &cli->o.until_ns) < 0) {
		log_error("Invalid --until '%s': " TIME_FORMS, cli->until);
		return EXIT_USAGE;
	}
	/* Both given: a usage error, as top says it (one --since alone is
	 * judged against the data's end, later) */
	if (cli->since && cli->until && cli->o.since_ns >= cli->o.until_ns) {
		log_error("--since must be before --until");
		return EXIT_USAGE;
	}
	if (cli->output && strcmp(cli->output, "-") == 0)
		cli->output = NULL;
	if (cli->output && check_output_name(cli->output, cli->format) < 0)
		return EXIT_USAGE;
	/* stdout carries the JSON or CSV: no summary beside it */
	if (cli->format != FORMAT_TEXT && !cli->output)
		cli->quiet = true;
	if (cli->outdir && check_output_dir(cli->outdir, cli->follow_symlinks) < 0)
		return EXIT_USAGE;
	return 0;
}

/* --patches, else the installed map, else the built-in one. */
static int load_patch_map(struct report_cli *cli, struct patch_map *map)
{
	cli->o.patches_file = cli->patches ? cli->patches : PATCHES_DEFAULT;
	if (cli->patches) {
		cli->o.patches_origin = cli->patches;
		return patch_map_load(map, cli->patches);
	}
	if (access(PATCHES_DEFAULT, F_OK) == 0) {
		cli->o.patches_origin = PATCHES_DEFAULT;
		return patch_map_load(map, PATCHES_DEFAULT);
	}
	cli->o.patches_origin = "built-in";
	return patch_map_load_default(map);
}

/* The summary, then where each file went: stdout's, or --output's without --json or --csv. */
struct summary {
	const struct report_cli *cli;
	const struct report *rep;
	const char *dated_html, *dated_json;
};

static int summary_write(FILE *f, void *userdata)
{
	const struct summary *s = userdata;
	const struct report_cli *cli = s->cli;
	int r = report_write_text(s->rep, f);

	if (r < 0)
		return r;
	if (cli->html)
		fprintf(f, "HTML report: %s\n", cli->html);
	if (cli->json_file)
		fprintf(f, "JSON: %s\n", cli->json_file);
	if (cli->output && cli->format != FORMAT_TEXT)
		fprintf(f, "%s: %s\n", formats[cli->format].name, cli->output);
	if (s->dated_html)
		fprintf(f, "HTML report: %s\nJSON: %s\n", s->dated_html, s->dated_json);
	return ferror(f) ? -EIO : 0;
}

/* Every output asked for: the dated pair, --html, --json FILE, --json or --csv, the summary. */
static int report_outputs(const struct report_cli *cli, const struct report *rep)
{
	_cleanup_free_ char *dated_html = NULL, *dated_json = NULL;
	struct summary sum = { .cli = cli, .rep = rep };
	int r;

	if (cli->outdir) {
		r = output_dir_paths(cli->outdir, report_until(rep), &dated_html, &dated_json);
		if (r == 0)
			r = write_output(dated_html, rep, report_write_html);
		if (r == 0)
			r = write_output(dated_json, rep, report_write_json);
		if (r == 0)
			r = point_latest(cli->outdir, dated_html, "latest.html");
		if (r == 0)
			r = point_latest(cli->outdir, dated_json, "latest.json");
		if (r < 0)
			return r;
	}
	if (cli->html && (r = write_output(cli->html, rep, report_write_html)) < 0)
		return r;
	if (cli->json_file && (r = write_output(cli->json_file, rep, report_write_json)) < 0)
		return r;
	if (cli->format != FORMAT_TEXT &&
	    (r = write_output(cli->output ? cli->output : "-", rep, formats[cli->format].write)) < 0)
		return r;
	sum.dated_html = dated_html;
	sum.dated_json = dated_json;
	if (cli->format == FORMAT_TEXT && cli->output)
		return write_to(cli->output, summary_write, &sum);
	return cli->quiet ? 0 : write_stdout(summary_write, &sum);
}

/*
 * The cluster: its credentials (--credentials, else ship_credentials of
 * the configuration) and grain (--rollup, else ship_rollup, else 10m).
 */
static int run_cluster(struct report_cli *cli, struct report *rep, struct report_options *o)
{
	const struct source *src = &cli->src.v[0];
	const char *config_path = cli->config ? cli->config : CONFIG_DEFAULT_PATH;
	struct http *h = NULL;
	struct config cfg;
	int r;

	config_init(&cfg);
	r = config_load(&cfg, config_path, cli->config != NULL);
	if (r < 0)
		goto out;
	if (!cli->rollup)
		o->rollup_ns = cfg.ship_rollup_ns > 0 ? cfg.ship_rollup_ns / NSEC_PER_SEC * NSEC_PER_SEC :
			       CLUSTER_ROLLUP_DEFAULT;
	r = cluster_open(src, cli->credentials, config_path, cli->config != NULL, &h);
	if (r < 0)
		goto out;
	report_set_rollup(rep, o->rollup_ns);
	r = report_run_clickhouse(rep, h, src->database, src->arg);
out:
	http_free(h);
	config_done(&cfg);
	return r;
}

int cmd_report(int argc, char **argv)
{
	struct report_cli cli = { .progress = isatty(STDERR_FILENO), .fail_on = FAIL_NEVER };
	_cleanup_free_ const char **dbs = NULL;
	struct patch_map *map = NULL;
	struct report *rep = NULL;
	int r;

	report_options_init(&cli.o);
	r = report_parse(argc, argv, &cli);
	if (r != 0) {
		sources_done(&cli.src);
		return r == 1 ? 0 : r;
	}

	map = patch_map_new();
	if (!map) {
		r = log_oom();
		goto out;
	}
	r = load_patch_map(&cli, map);
	if (r < 0)
		goto out;
	cli.o.patches = map;
	cli.o.progress = cli.progress;
	rep = report_new(&cli.o);
	if (!rep) {
		r = log_oom();
		goto out;
	}
	if (sources_clickhouse(&cli.src)) {
		r = run_cluster(&cli, rep, &cli.o);
	} else {
		dbs = calloc(cli.src.n + 1, sizeof(char *));
		if (!dbs) {
			r = log_oom();
			goto out;
		}
		for (size_t i = 0; i < cli.src.n; i++)
			dbs[i] = cli.src.v[i].path;
		r = report_run(rep, dbs, cli.src.n);
		/* its one database could not be opened (db_open_error() is
		 * cleared by every open that succeeds) */
		if (r < 0 && cli.src.n == 1 && *db_open_error())
			cli_db_failed(dbs[0], r);
	}
	if (r >= 0)
		r = report_outputs(&cli, rep);
	if (r >= 0)
		r = gate(rep, cli.fail_on);
out:
	report_free(rep);
	patch_map_free(map);
	sources_done(&cli.src);
	return r;
}
