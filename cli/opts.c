// SPDX-License-Identifier: GPL-2.0
/* The options several commands share: one table, one meaning each. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
		if (shared[i].sets & c->sets) {
			all[n++] = shared[i].opt;
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
		if (is_shared(opt)) {
			seen |= opt == OPT_JSON ? 1 : opt == OPT_CSV ? 2 : 0;
			r = shared_option(opt, optarg, ret, c->sets);
		} else {
			r = c->parse ? c->parse(opt, optarg, c->userdata) : -EINVAL;
		}
		if (r < 0)
			return EXIT_USAGE;
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

int cli_db_open(const char *path, unsigned int flags, sqlite3 **ret_db)
{
	int r = db_open(path, flags, ret_db);

	return r < 0 ? cli_db_failed(path, r) : r;
}

int cli_exit_status(int r)
{
	return r < 0 && r == input_failure ? exit_status_input(r) : exit_status(r);
}
