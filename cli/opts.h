/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CLI_OPTS_H
#define MMHITM_CLI_OPTS_H

#include <getopt.h>
#include <sqlite3.h>
#include <stdbool.h>

#include "source.h"

/*
 * The options several commands share, parsed in one place so a flag means
 * the same on every command (load/opts.c does this for mmhitm-load). A
 * command names the sets it takes and passes its own options beside them.
 */
enum {
	/* --source SRC and --db PATH (repeatable) and DB... arguments, read;
	 * none given: the default database */
	OPTS_SOURCES	= 1 << 0,
	/* --db PATH: the one database the command writes (default: the default) */
	OPTS_DB		= 1 << 1,
	/* --json, --csv: the output as JSON or CSV on stdout, one of them */
	OPTS_FORMAT	= 1 << 2,
	/* --credentials FILE, --config FILE: how to reach a cluster */
	OPTS_CLUSTER	= 1 << 3,
	/* with OPTS_FORMAT: --json FILE too, report's spelling before --json
	 * meant stdout everywhere, kept for scripts with a note (see
	 * json_file_word() for which word is FILE) */
	OPTS_JSON_FILE	= 1 << 4,
};

enum opts_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

struct cli_opts {
	struct sources src;		/* OPTS_SOURCES */
	const char *db;			/* OPTS_DB */
	enum opts_format format;	/* OPTS_FORMAT */
	const char *json_file;		/* OPTS_JSON_FILE: --json FILE, or NULL */
	const char *credentials;	/* OPTS_CLUSTER: --credentials, or NULL */
	const char *config;		/* OPTS_CLUSTER: --config, or the default */
	bool config_given;
};

/* A command's own options beside the shared ones. */
struct cmd_options {
	const char *prog;		/* "mmhitm top", for messages */
	unsigned int sets;		/* OPTS_* */
	const struct option *opts;	/* its own long options, {} ended; may be NULL */
	const char *shortopts;		/* its own short ones, e.g. "n:" */
	/* one of its own options: 0, or < 0 after saying why (a usage error) */
	int (*parse)(int opt, const char *arg, void *userdata);
	void *userdata;
	void (*help)(void);
};

/*
 * Parses argv into ret and the command's own options. Returns 0, 1 after
 * --help printed the help, or EXIT_USAGE after a usage error was said.
 * Without OPTS_SOURCES, the arguments after the options are left at
 * argv[optind...] for the command. Caller frees with cli_opts_done().
 */
int cli_opts_parse(int argc, char **argv, const struct cmd_options *c, struct cli_opts *ret);
void cli_opts_done(struct cli_opts *o);

/* db_open() for a command: the reason it failed is said once, with the
 * path ("Cannot open the database x.db: is a directory"). */
int cli_db_open(const char *path, unsigned int flags, sqlite3 **ret_db);
/* What cli_db_open() says and keeps when db_open() failed elsewhere. */
int cli_db_failed(const char *path, int r);
/*
 * One of several databases a command works through in turn failed with r,
 * and nothing was said since said (log_errors_said() before its turn):
 * says "COMMAND failed on PATH: REASON" (db_error()), as main() says the
 * failure of one database, which names no path and only the first error.
 * Returns r.
 */
int cli_many_failed(const char *command, const char *path, int r, unsigned int said);

/* The exit status of a command's failure r: a database cli_db_open() could
 * not open is its input (exit_status_input()), anything else exit_status(). */
int cli_exit_status(int r);

#endif
