// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm: the command-line half of mmhitm. It reads the databases mmhitmd
 * writes, and attributes, compares and reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "exitcode.h"
#include "opts.h"
#include "log.h"
#include "paths.h"
#include "util.h"

#ifndef MMHITM_VERSION
#error "MMHITM_VERSION comes from the Makefile (debian/changelog's version)"
#endif

static const struct command commands[] = {
	{ "status", cmd_status, "show what a database holds: hosts, boots, intervals, events",
	  cmd_status_help },
	{ "analyze", cmd_analyze, "type sampled cache lines, attribute them to the kernel paths", cmd_analyze_help },
	{ "top", cmd_top, "the typed top cache lines, like perf c2c report", cmd_top_help },
	{ "import", cmd_import, "import a perf.data, a trace.dat or an mmhitm record bundle as a boot",
	  cmd_import_help },
	{ "report", cmd_report, "before/after verdicts per path over host databases: HTML, JSON, text",
	  cmd_report_help },
	{ "record", cmd_record, "without mmhitmd: memory samples and what types them, in one bundle",
	  cmd_record_help },
	{ "snapshot", cmd_snapshot, "ask the running mmhitmd to save its flight recorder as trace.dat",
	  cmd_snapshot_help },
	{ "lab", cmd_lab, "a patch's A/B on this machine: runs across boots, the postings' table",
	  cmd_lab_help },
	{ "ship", cmd_ship, "send what a ClickHouse cluster lacks of this database (hourly timer)",
	  cmd_ship_help },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: mmhitm [--version] [--help] COMMAND [ARGS...]\n\n"
		   "Attribute HITM cache-line contention on mm_struct, struct page and\n"
		   "lruvec lines to four known kernel hot paths, from mmhitmd's database.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'mmhitm COMMAND --help' describes a command. The database defaults to\n"
		   "$MMHITM_DB or %s.\n", default_db_path());
}

/*
 * What a command printed reaches its reader, or the exit status says it
 * did not: a full disk or a closed pipe under `mmhitm status > file` is
 * found here, once, whatever the command wrote.
 */
static int close_stdout(int status)
{
	int err = fflush(stdout) ? errno : 0;

	if (!err && !ferror(stdout))
		return status;
	log_error("Failed to write the output: %s", err ? strerror(err) : "a write failed");
	return status == EXIT_SUCCESS ? EXIT_IOERR : status;
}

int main(int argc, char **argv)
{
	log_setup("mmhitm");
	if (paths_load() < 0)
		return EXIT_CONFIG;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2) {
			for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
				if (strcmp(argv[2], commands[i].name) == 0) {
					commands[i].help();
					return 0;
				}
		}
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("mmhitm %s\n", MMHITM_VERSION);
		return 0;
	}

	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		if (strcmp(argv[1], commands[i].name) == 0) {
			int r = commands[i].run(argc - 1, argv + 1);

			/* Every failure gets its one line: one nobody below said
			 * (a statement that failed says nothing above debug). */
			if (r < 0 && !log_errors_said())
				log_error("%s failed: %s", commands[i].name, db_error(r));
			return close_stdout(r > 0 ? r : cli_exit_status(r));
		}
	}
	{
		const char *names[ARRAY_SIZE(commands)];

		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			names[i] = commands[i].name;
		cli_unknown_command("mmhitm", argv[1], names, ARRAY_SIZE(names));
	}
	return EXIT_USAGE;
}
