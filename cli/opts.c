// SPDX-License-Identifier: GPL-2.0
/* The options several commands share: one table, one meaning each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "opts.h"
#include "util.h"

enum {
	OPT_SOURCE = 0x2000,	/* long only, above the commands' own */
	OPT_JSON,
	OPT_CSV,
	OPT_CONFIG,
	OPT_DB = 'd',
	OPT_CREDENTIALS = 'c',
	OPT_HELP = 'h',
};

static const struct shared_option {
	unsigned int sets;	/* the sets that take it */
	struct option opt;
	const char *shortopt;
} shared[] = {
	{ OPTS_SOURCES,			{ "source", required_argument, NULL, OPT_SOURCE }, NULL },
	{ OPTS_SOURCES | OPTS_DB,	{ "db", required_argument, NULL, OPT_DB }, "d:" },
	{ OPTS_FORMAT,			{ "json", no_argument, NULL, OPT_JSON }, NULL },
	{ OPTS_FORMAT,			{ "csv", no_argument, NULL, OPT_CSV }, NULL },
	{ OPTS_CLUSTER,			{ "credentials", required_argument, NULL, OPT_CREDENTIALS }, "c:" },
	{ OPTS_CLUSTER,			{ "config", required_argument, NULL, OPT_CONFIG }, NULL },
	{ ~0u,				{ "help", no_argument, NULL, OPT_HELP }, "h" },
};

/* The shared options c takes, then its own: one getopt table. Caller frees. */
static struct option *options_table(const struct cmd_options *c, char *shortopts, size_t size)
{
	size_t n = 0, own = 0, len;
	struct option *all;

	while (c->opts && c->opts[own].name)
		own++;
	all = calloc(ARRAY_SIZE(shared) + own + 1, sizeof(*all));
	if (!all)
		return NULL;
	len = (size_t)snprintf(shortopts, size, "%s", c->shortopts ?: "");
	for (size_t i = 0; i < ARRAY_SIZE(shared); i++)
		if ((shared[i].sets & c->sets) || shared[i].opt.val == OPT_HELP) {
			all[n] = shared[i].opt;
			/* --json FILE: taken by hand, see json_option() */
			if (all[n].val == OPT_JSON && (c->sets & OPTS_JSON_FILE))
				all[n].has_arg = optional_argument;
			n++;
			if (shared[i].shortopt && len < size)
				len += (size_t)snprintf(shortopts + len, size - len, "%s", shared[i].shortopt);
		}
	if (own)
		memcpy(all + n, c->opts, own * sizeof(*all));
	return all;
}

static int shared_option(int opt, const char *arg, struct cli_opts *o, unsigned int sets)
{
	switch (opt) {
	case OPT_DB:
		if (sets & OPTS_SOURCES)
			return sources_add(&o->src, arg) < 0 ? -EINVAL : 0;	/* says why */
		o->db = arg;
		break;
	case OPT_SOURCE:
		return sources_add(&o->src, arg) < 0 ? -EINVAL : 0;
	case OPT_JSON: o->format = FORMAT_JSON; break;
	case OPT_CSV: o->format = FORMAT_CSV; break;
	case OPT_CREDENTIALS: o->credentials = arg; break;
	case OPT_CONFIG: o->config = arg; o->config_given = true; break;
	}
	return 0;
}

static bool is_shared(int opt)
{
	return opt == OPT_DB || opt == OPT_CREDENTIALS || (opt >= OPT_SOURCE && opt <= OPT_CONFIG);
}

/* A regular file that begins as every SQLite database does. */
static bool is_sqlite_file(const char *path)
{
	static const char magic[16] = "SQLite format 3";	/* with its NUL */
	char head[sizeof(magic)];
	struct stat st;
	bool yes;
	FILE *f;

	/* stat first: opening a FIFO to read would wait for its writer */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	yes = fread(head, 1, sizeof(head), f) == sizeof(head) && memcmp(head, magic, sizeof(magic)) == 0;
	fclose(f);
	return yes;
}

/* A name that says database: one ending in .db, a cluster's URL, an SQLite file. */
static bool names_database(const char *word)
{
	size_t n = strlen(word);

	return strstr(word, "://") || (n >= 3 && strcmp(word + n - 3, ".db") == 0) || is_sqlite_file(word);
}

/*
 * Whether the word after a bare --json is the old spelling's FILE: '-', or
 * a word that is no option and cannot be a source the command reads (a
 * database's name, a glob). A database is read, never written over as
 * the old form did; any other FILE still works.
 */
static bool json_file_word(const char *word)
{
	if (strcmp(word, "-") == 0)
		return true;
	return *word && word[0] != '-' && !strpbrk(word, "*?[") && !names_database(word);
}

/*
 * --json under OPTS_JSON_FILE: the stdout flag, or --json FILE (FILE the
 * next word, or --json=FILE) as before it, with one note saying the new
 * spelling. 0 or -EINVAL (said).
 */
static int json_option(int argc, char **argv, const char *arg, struct cli_opts *o, const char *prog)
{
	if (!arg && optind < argc && json_file_word(argv[optind]))
		arg = argv[optind++];
	if (arg && strcmp(arg, "-") == 0)
		log_notice("note: '%s --json -' is now '%s --json'", prog, prog);
	if (!arg || strcmp(arg, "-") == 0) {
		o->format = FORMAT_JSON;
		return 0;
	}
	if (!*arg || names_database(arg)) {
		log_error("--json=%s: %s", arg, *arg ? "a database is not written over (--json alone prints "
			  "the report on stdout)" : "names no file");
		return -EINVAL;
	}
	log_notice("note: '%s --json %s' is now '%s --json --output %s' (--json alone prints to stdout)",
		   prog, arg, prog, arg);
	o->json_file = arg;
	return 0;
}

/* What follows the options, and the defaults: 0 or EXIT_USAGE (said). */
static int finish(int argc, char **argv, const struct cmd_options *c, struct cli_opts *o, int seen)
{
	if (c->sets & OPTS_SOURCES) {
		for (; optind < argc; optind++)
			if (sources_add(&o->src, argv[optind]) < 0)
				return EXIT_USAGE;
		if (o->src.n == 0 && sources_add(&o->src, default_db_path()) < 0)
			return EXIT_USAGE;
	}
	if ((seen & 3) == 3) {
		log_error("--json or --csv, not both");
		return EXIT_USAGE;
	}
	return 0;
}

int cli_opts_parse(int argc, char **argv, const struct cmd_options *c, struct cli_opts *ret)
{
	_cleanup_free_ struct option *all = NULL;
	char shortopts[64];
	int opt, r, seen = 0;

	*ret = (struct cli_opts){ .db = default_db_path(), .config = CONFIG_DEFAULT_PATH };
	all = options_table(c, shortopts, sizeof(shortopts));
	if (!all)
		return log_oom();
	optind = 1;
	while ((opt = cli_getopt(argc, argv, shortopts, all, c->prog)) != -1) {
		if (opt == OPT_HELP) {
			c->help();
			return 1;
		}
		if (opt == '?')
			return EXIT_USAGE;
		if (opt == OPT_JSON && (c->sets & OPTS_JSON_FILE))
			r = json_option(argc, argv, optarg, ret, c->prog);
		else if (is_shared(opt))
			r = shared_option(opt, optarg, ret, c->sets);
		else
			r = c->parse ? c->parse(opt, optarg, c->userdata) : -EINVAL;
		if (r < 0)
			return EXIT_USAGE;
		/* the format flags given, not --json FILE: one format on stdout */
		if (opt == OPT_JSON || opt == OPT_CSV)
			seen |= ret->format == FORMAT_JSON ? 1 : ret->format == FORMAT_CSV ? 2 : 0;
	}
	return finish(argc, argv, c, ret, seen);
}

void cli_opts_done(struct cli_opts *o)
{
	sources_done(&o->src);
}

/* The error of the last database cli_db_open() could not open. */
static int input_failure;

int cli_db_failed(const char *path, int r)
{
	log_error("Cannot open the database %s: %s", path, db_open_error());
	input_failure = r;
	return r;
}

int cli_many_failed(const char *command, const char *path, int r, unsigned int said)
{
	if (r < 0 && log_errors_said() == said)
		log_error("%s failed on %s: %s", command, path, db_error(r));
	return r;
}

int cli_db_open(const char *path, unsigned int flags, sqlite3 **ret_db)
{
	int r = db_open(path, flags, ret_db);

	return r < 0 ? cli_db_failed(path, r) : r;
}

int cli_exit_status(int r)
{
	return r < 0 && r == input_failure ? exit_status_input(r) : exit_status(r);
}
