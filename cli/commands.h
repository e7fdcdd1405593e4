/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_COMMANDS_H
#define MMHITM_COMMANDS_H

/*
 * mmhitm subcommands, one cmd-<verb>.c each (trace-cmd's shape). A command
 * gets argv with argv[0] = its name, returns 0 or -errno (already logged),
 * or one of the exit codes below (CMD_USAGE after printing a usage error).
 */
#define CMD_USAGE 2
/* mmhitm status --check: the daemon is not recording well (monitoring). */
#define CMD_UNHEALTHY 3
/* mmhitm report --fail-on: a path changed the way the option names. */
#define CMD_GATE 4

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
int cmd_snapshot(int argc, char **argv);
void cmd_snapshot_help(void);
int cmd_ship(int argc, char **argv);
void cmd_ship_help(void);

#endif
