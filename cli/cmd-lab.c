// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm lab: the patch author's bench. `start` writes a protocol into the
 * database (a reproducer of mmhitm-load, its configurations, runs per boot
 * and boots per kernel), `run` runs this boot's share (lab-run.c), `status`
 * says how far it is and what to boot next, `report` writes the table
 * (reports/lab.c). The protocol's state is the database's, so it survives
 * the reboots it needs. docs/lab.md walks through one.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "lab-run.h"
#include "lab.h"
#include "log.h"
#include "opts.h"
#include "output.h"
#include "paths.h"
#include "util.h"

#define LAB_MAX_AT 32

void cmd_lab_help(void)
{
	printf("Usage: mmhitm lab start NAME --reproducer CMD [--at LIST] [--runs N] [--boots N]\n"
	       "                 [--duration TIME | --loops N] [--no-control] [--load-args ARGS] [--db PATH]\n"
	       "       mmhitm lab run [NAME] [--side base|patched] [--load PATH] [--no-flush] [--db PATH]\n"
	       "       mmhitm lab status [NAME] [--db PATH]\n"
	       "       mmhitm lab report [NAME] [--json] [--html FILE] [--db PATH]\n\n"
	       "A one-machine A/B of a kernel patch: a reproducer of mmhitm-load run N times\n"
	       "at each configuration on each of B boots of the base and the patched kernel,\n"
	       "with mmhitmd recording; the table the patch postings print, with the boot as\n"
	       "the unit of replication and the HITM behind it. The protocol lives in the\n"
	       "database: run `mmhitm lab run` once on every boot it asks for.\n\n"
	       "  --reproducer CMD  ctxswitch (P1), aging (P2), pwrite (P3) or tlbflush (P4)\n"
	       "  --at LIST         the configurations: CPUs (ctxswitch), processes (aging),\n"
	       "                    threads (pwrite, tlbflush), e.g. 1,2,4 (default: this\n"
	       "                    machine's online CPUs)\n"
	       "  --runs N          runs of each configuration per boot (default 5)\n"
	       "  --boots N         boots of each kernel (default 2; at least 2 for an interval)\n"
	       "  --duration TIME   each run's length (default 10s); --loops N instead\n"
	       "  --no-control      ctxswitch: no private-mm control beside each CPU count\n"
	       "  --load-args ARGS  more mmhitm-load options for every run, e.g. \"--size 2G\"\n"
	       "  --side SIDE       run: this kernel's side when it is new to the lab (default:\n"
	       "                    the first kernel is the base)\n"
	       "  --load PATH       run: the mmhitm-load to run (default: beside mmhitm, then $PATH)\n"
	       "  --no-flush        run: do not ask mmhitmd (SIGUSR2) to cut intervals at the\n"
	       "                    runs' edges\n"
	       "  --json            report: JSON on stdout\n"
	       "  --html FILE       report: also an HTML page\n"
	       "  --db PATH         the database (default $MMHITM_DB or %s)\n",
	       default_db_path());
}

/* Long options only, above the shared ones' letters (--db is 'd'). */
enum {
	LAB_REPRODUCER = 0x100,
	LAB_AT,
	LAB_RUNS,
	LAB_BOOTS,
	LAB_DURATION,
	LAB_LOOPS,
	LAB_NO_CONTROL,
	LAB_SIDE,
	LAB_LOAD,
	LAB_NO_FLUSH,
	LAB_HTML,
	LAB_LOAD_ARGS,
};

struct lab_opts {
	const char *reproducer, *side, *load, *html, *load_args;
	char at[256];
	uint64_t runs, boots, loops;
	int64_t duration_ns;
	bool no_control, no_flush;
};

static int lab_option(int opt, const char *arg, void *userdata)
{
	struct lab_opts *o = userdata;

	switch (opt) {
	case LAB_REPRODUCER: o->reproducer = arg; return 0;
	case LAB_AT: snprintf(o->at, sizeof(o->at), "%s", arg); return 0;
	case LAB_NO_CONTROL: o->no_control = true; return 0;
	case LAB_SIDE: o->side = arg; return 0;
	case LAB_LOAD: o->load = arg; return 0;
	case LAB_NO_FLUSH: o->no_flush = true; return 0;
	case LAB_HTML: o->html = arg; return 0;
	case LAB_LOAD_ARGS:
		if (strlen(arg) > 200 || strpbrk(arg, "\"'\\\n"))
			return log_error("Invalid --load-args '%s': mmhitm-load's options, split at "
					 "spaces, no quotes, at most 200 characters", arg), -EINVAL;
		o->load_args = arg;
		return 0;
	case LAB_RUNS:
		if (parse_u64(arg, &o->runs) < 0 || !o->runs || o->runs > 1000)
			return log_error("Invalid --runs '%s': 1 to 1000", arg), -EINVAL;
		return 0;
	case LAB_BOOTS:
		if (parse_u64(arg, &o->boots) < 0 || !o->boots || o->boots > LAB_MAX_BOOTS)
			return log_error("Invalid --boots '%s': 1 to %d", arg, LAB_MAX_BOOTS), -EINVAL;
		return 0;
	case LAB_LOOPS:
		if (parse_u64(arg, &o->loops) < 0 || !o->loops)
			return log_error("Invalid --loops '%s': a positive number", arg), -EINVAL;
		return 0;
	case LAB_DURATION:
		if (parse_duration_ns(arg, &o->duration_ns) < 0 || o->duration_ns < NSEC_PER_MSEC)
			return log_error("Invalid --duration '%s': e.g. 10s, 500ms", arg), -EINVAL;
		return 0;
	}
	return -EINVAL;
}

/* The reproducer's path in the path table, or NULL. */
static const char *reproducer_path(const char *reproducer)
{
	for (size_t i = 0; i < paths_count(); i++) {
		const struct path_def *p = path_get(i);

		if (p->reproducer && strcmp(p->reproducer, reproducer) == 0)
			return p->id;
	}
	return NULL;
}

/* "1,2,4" into at[]; the default: the online CPUs. */
static int parse_at(const char *s, int *at, size_t *n)
{
	char copy[256], *save = NULL;

	*n = 0;
	if (!*s) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		at[(*n)++] = cpus > 0 ? (int)cpus : 1;
		return 0;
	}
	snprintf(copy, sizeof(copy), "%s", s);
	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (parse_u64(w, &v) < 0 || !v || v > 4096 || *n >= LAB_MAX_AT) {
			log_error("Invalid --at '%s': up to %d numbers from 1 to 4096, e.g. 1,2,4", s,
				  LAB_MAX_AT);
			return EXIT_USAGE;
		}
		at[(*n)++] = (int)v;
	}
	return 0;
}

/* mmhitm-load's arguments for one configuration. */
static void config_args(const struct lab_opts *o, int at, bool control, char *buf, size_t size)
{
	char len[64];

	if (o->loops)
		snprintf(len, sizeof(len), "--loops %" PRIu64, o->loops);
	else
		snprintf(len, sizeof(len), "--duration %lldms", (long long)(o->duration_ns / NSEC_PER_MSEC));
	if (strcmp(o->reproducer, "ctxswitch") == 0)
		snprintf(buf, size, "--cpus 0-%d%s %s%s%s", at - 1, control ? " --private-mm" : "", len,
			 o->load_args ? " " : "", o->load_args ? o->load_args : "");
	else
		snprintf(buf, size, "--%s %d %s%s%s", strcmp(o->reproducer, "aging") == 0 ? "procs" :
			 "threads", at, len, o->load_args ? " " : "", o->load_args ? o->load_args : "");
}

static int insert_config(sqlite3 *db, int64_t lab, int config, int at, bool control, const char *args)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "INSERT INTO lab_configs (lab_id, config, at, control, args) "
			       "VALUES (?1, ?2, ?3, ?4, ?5)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, lab);
	sqlite3_bind_int(st, 2, config);
	sqlite3_bind_int(st, 3, at);
	sqlite3_bind_int(st, 4, control);
	sqlite3_bind_text(st, 5, args, -1, SQLITE_STATIC);
	return db_step_done(db, st);
}

static int insert_lab(sqlite3 *db, const char *name, const char *path, const struct lab_opts *o,
		      int64_t *ret_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "INSERT INTO labs (name, reproducer, path, runs, boots, duration_ns, "
			       "loops, created_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	if (r < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, o->reproducer, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)o->runs);
	sqlite3_bind_int64(st, 5, (int64_t)o->boots);
	if (!o->loops)
		sqlite3_bind_int64(st, 6, o->duration_ns);
	if (o->loops)
		sqlite3_bind_int64(st, 7, (int64_t)o->loops);
	sqlite3_bind_int64(st, 8, now_ns(CLOCK_REALTIME));
	r = db_step_done(db, st);
	*ret_id = sqlite3_last_insert_rowid(db);
	return r;
}

static int write_protocol(sqlite3 *db, const char *name, const char *path, const struct lab_opts *o,
			  const int *at, size_t nat)
{
	bool control = strcmp(o->reproducer, "ctxswitch") == 0 && !o->no_control;
	int64_t lab;
	int r, config = 0;

	r = db_begin(db);
	if (r >= 0)
		r = insert_lab(db, name, path, o, &lab);
	for (size_t i = 0; r >= 0 && i < nat; i++)
		for (int c = 0; r >= 0 && c <= control; c++) {
			char args[512];

			config_args(o, at[i], c, args, sizeof(args));
			r = insert_config(db, lab, config++, at[i], c, args);
		}
	return db_end(db, r);
}

static int lab_start(sqlite3 *db, const char *name, const struct lab_opts *o)
{
	bool control = strcmp(o->reproducer ? o->reproducer : "", "ctxswitch") == 0 && !o->no_control;
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int at[LAB_MAX_AT], r;
	const char *path;
	size_t nat;

	if (!o->reproducer)
		return log_error("mmhitm lab start: --reproducer is needed (ctxswitch, aging, pwrite "
				 "or tlbflush)"), EXIT_USAGE;
	path = reproducer_path(o->reproducer);
	if (!path)
		return log_error("Unknown --reproducer '%s': ctxswitch, aging, pwrite or tlbflush",
				 o->reproducer), EXIT_USAGE;
	r = parse_at(o->at, at, &nat);
	if (r)
		return r;
	r = db_prepare(db, &st, "SELECT 1 FROM labs WHERE name = ?1");
	if (r >= 0) {
		sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			return log_error_errno(EEXIST, "Lab '%s' exists already (mmhitm lab status %s)",
					       name, name);
		r = write_protocol(db, name, path, o, at, nat);
	}
	if (r < 0)
		return log_error_errno(r, "Cannot write the lab: %s", db_error(r));
	printf("Lab '%s': %s on %s, %zu configuration%s, %" PRIu64 " run%s a boot, %" PRIu64
	       " boot%s of each kernel.\nNow, on the base kernel: mmhitm lab run %s\n", name,
	       o->reproducer, path, nat * (1 + control), nat * (1 + control) == 1 ? "" : "s", o->runs,
	       o->runs == 1 ? "" : "s", o->boots, o->boots == 1 ? "" : "s", name);
	return 0;
}

/* --- status ------------------------------------------------------------------ */

static void status_next(const struct lab_table *t, const struct lab_boot_id *b)
{
	int s = t->release[1] && strcmp(t->release[1], b->release) == 0 ? 1 :
		t->release[0] && strcmp(t->release[0], b->release) == 0 ? 0 : -1;

	if (t->boots_done[0] >= t->boots && t->boots_done[1] >= t->boots)
		printf("Next: done; mmhitm lab report %s\n", t->name);
	else if (s >= 0 && t->boots_done[s] < t->boots)
		printf("Next: mmhitm lab run %s (on this or another boot of %s)\n", t->name, b->release);
	else if (!t->release[1])
		printf("Next: boot the patched kernel and run mmhitm lab run %s\n", t->name);
	else
		printf("Next: boot %s and run mmhitm lab run %s\n",
		       t->boots_done[0] < t->boots ? t->release[0] : t->release[1], t->name);
}

static int lab_status(sqlite3 *db, const char *name);

/* Every lab's status, in the order they were made. */
static int status_all(sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, "SELECT name FROM labs ORDER BY lab_id");
	if (r < 0)
		return log_error_errno(r, "Cannot read the labs: %s", db_error(r));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = lab_status(db, (const char *)sqlite3_column_text(st, 0));
		if (r < 0)
			return r;
	}
	if (rc != SQLITE_DONE)
		return log_error_errno(db_step_failed(st, rc), "Cannot read the labs");
	return 0;
}

static int lab_status(sqlite3 *db, const char *name)
{
	struct lab_table t;
	struct lab_boot_id b = {};
	size_t runs = 0;
	int r;

	r = lab_table_read(db, name, &t);
	if (r == -ENODATA)
		return log_error_errno(ENOENT, "No lab in this database (mmhitm lab start makes one)");
	if (r == -ENOENT)
		return log_error_errno(ENOENT, "No lab '%s' in this database", name);
	if (r == -EEXIST)
		return status_all(db);
	if (r < 0)
		return log_error_errno(r, "Cannot read the lab: %s", db_error(r));
	for (size_t i = 0; i < t.nconfigs; i++)
		for (int s = 0; s < 2; s++)
			for (size_t k = 0; k < t.configs[i].side[s].nboots; k++)
				runs += t.configs[i].side[s].runs[k];
	printf("Lab '%s': %s on %s, %zu configurations, %d runs a boot, %d boots of each kernel; "
	       "%zu runs kept\n", t.name, t.reproducer, t.path, t.nconfigs, t.runs, t.boots, runs);
	for (int s = 0; s < 2; s++)
		printf("  %-8s %s: %d of %d boots done\n", s ? "patched" : "base",
		       t.release[s] ? t.release[s] : "(none yet)", t.boots_done[s], t.boots);
	if (lab_this_boot(&b) >= 0)
		status_next(&t, &b);
	lab_table_free(&t);
	return 0;
}

/* --- report ------------------------------------------------------------------ */

static int write_html(FILE *f, void *userdata)
{
	lab_print_html(f, userdata);
	return ferror(f) ? -EIO : 0;
}

static int lab_report(sqlite3 *db, const char *name, const struct cli_opts *co, const struct lab_opts *o)
{
	struct lab_table t;
	int r;

	r = lab_table_read(db, name, &t);
	if (r == -ENODATA || r == -ENOENT)
		return log_error_errno(ENOENT, "No lab%s%s in this database", name ? " " : "", name ? name : "");
	if (r == -EEXIST)
		return log_error_errno(EINVAL, "Several labs: name one (mmhitm lab status)");
	if (r < 0)
		return log_error_errno(r, "Cannot read the lab: %s", db_error(r));
	if (co->format == FORMAT_JSON)
		lab_print_json(stdout, &t);
	else
		lab_print_text(stdout, &t);
	if (o->html) {
		r = output_write(o->html, 0, write_html, &t);
		if (r < 0)
			log_error_errno(r, "Cannot write %s: %m", o->html);
	}
	lab_table_free(&t);
	return r < 0 ? EXIT_IOERR : 0;
}

/* --- the command -------------------------------------------------------------- */

static int lab_dispatch(const char *verb, const char *name, const struct cli_opts *co,
			const struct lab_opts *o)
{
	/* only start makes a database; run writes into one that has its lab */
	unsigned int flags = strcmp(verb, "start") == 0 ? 0 :
			     strcmp(verb, "run") == 0 ? DB_NO_CREATE : DB_READONLY | DB_NO_CREATE;
	sqlite3 *db = NULL;
	int r;

	r = cli_db_open(co->db, flags, &db);
	if (r < 0)
		return r;
	if (strcmp(verb, "start") == 0)
		r = lab_start(db, name, o);
	else if (strcmp(verb, "run") == 0)
		r = lab_run(db, &(struct lab_run_opts){ .db_path = co->db, .name = name, .side = o->side,
							.load = o->load, .no_flush = o->no_flush });
	else if (strcmp(verb, "status") == 0)
		r = lab_status(db, name);
	else
		r = lab_report(db, name, co, o);
	db_close(db);
	return r;
}

int cmd_lab(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reproducer",	required_argument, NULL, LAB_REPRODUCER },
		{ "at",		required_argument, NULL, LAB_AT },
		{ "runs",	required_argument, NULL, LAB_RUNS },
		{ "boots",	required_argument, NULL, LAB_BOOTS },
		{ "duration",	required_argument, NULL, LAB_DURATION },
		{ "loops",	required_argument, NULL, LAB_LOOPS },
		{ "no-control",	no_argument,	   NULL, LAB_NO_CONTROL },
		{ "side",	required_argument, NULL, LAB_SIDE },
		{ "load",	required_argument, NULL, LAB_LOAD },
		{ "no-flush",	no_argument,	   NULL, LAB_NO_FLUSH },
		{ "html",	required_argument, NULL, LAB_HTML },
		{ "load-args",	required_argument, NULL, LAB_LOAD_ARGS },
		{}
	};
	struct lab_opts o = { .runs = 5, .boots = 2, .duration_ns = 10 * NSEC_PER_SEC };
	static const char *const verbs[] = { "start", "run", "status", "report" };
	const char *verb = argc > 1 ? argv[1] : "", *name;
	struct cli_opts co;
	bool known = false;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(verbs); i++)
		known |= strcmp(verb, verbs[i]) == 0;
	if (strcmp(verb, "--help") == 0 || strcmp(verb, "-h") == 0) {
		cmd_lab_help();
		return 0;
	}
	if (!known) {
		log_error("Usage: mmhitm lab start|run|status|report [NAME] [OPTIONS] (mmhitm lab --help)");
		return EXIT_USAGE;
	}
	r = cli_opts_parse(argc - 1, argv + 1, &(const struct cmd_options){
		.prog = "mmhitm lab", .sets = OPTS_DB | OPTS_FORMAT, .opts = opts, .shortopts = "",
		.parse = lab_option, .userdata = &o, .help = cmd_lab_help }, &co);
	if (r != 0)
		return r == 1 ? 0 : r;
	name = optind < argc - 1 ? argv[1 + optind] : NULL;
	if (optind + 1 < argc - 1 || (!name && strcmp(verb, "start") == 0) ||
	    (o.side && strcmp(o.side, "base") && strcmp(o.side, "patched")) || co.format == FORMAT_CSV) {
		log_error("Usage: mmhitm lab %s%s [OPTIONS] (mmhitm lab --help)", verb,
			  strcmp(verb, "start") == 0 ? " NAME" : " [NAME]");
		cli_opts_done(&co);
		return EXIT_USAGE;
	}
	r = lab_dispatch(verb, name, &co, &o);
	cli_opts_done(&co);
	return r;
}
