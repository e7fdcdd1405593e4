/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_COMMANDS_H
#define MMHITM_COMMANDS_H

/*
 * mmhitm subcommands, one cmd-<verb>.c each (trace-cmd's shape). A command
 * gets argv with argv[0] = its name, returns 0 or -errno (already said),
 * or an exit status of exitcode.h (EXIT_USAGE after a usage error was
 * said, EXIT_UNHEALTHY, EXIT_GATE); main() maps -errno with exit_status().
 */
#include "exitcode.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	void (*help)(void);
};

int cmd_status(int argc, char **argv);
void cmd_status_help(void);
int cmd_analyze(int argc, char **argv);
void cmd_analyze_help(void);
int cmd_top(int argc, char **argv);
void cmd_top_help(void);
int cmd_import(int argc, char **argv);
void cmd_import_help(void);
int cmd_report(int argc, char **argv);
void cmd_report_help(void);
int cmd_record(int argc, char **argv);
void cmd_record_help(void);
int cmd_snapshot(int argc, char **argv);
void cmd_snapshot_help(void);
int cmd_ship(int argc, char **argv);
void cmd_ship_help(void);
int cmd_lab(int argc, char **argv);
void cmd_lab_help(void);

#endif
