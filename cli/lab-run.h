/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CLI_LAB_RUN_H
#define MMHITM_CLI_LAB_RUN_H

/*
 * `mmhitm lab run`: this boot's share of a lab's protocol. The runs it
 * lacks are run one at a time, each configuration's run k before any
 * configuration's run k + 1 (so a drift over the boot spreads over all
 * configurations alike), each between two interval edges that mmhitmd
 * writes on SIGUSR2, and each kept in lab_runs as soon as it ended: a
 * lab run cut short (Ctrl-C, a crash, a reboot) loses at most the run in
 * progress, and the next `mmhitm lab run` on the boot goes on from there.
 */
#include <sqlite3.h>
#include <stdbool.h>

struct lab_run_opts {
	const char *db_path;
	const char *name;	/* NULL: the only lab */
	const char *side;	/* NULL, "base" or "patched": this kernel's side when new */
	const char *load;	/* mmhitm-load to run; NULL: beside mmhitm, or $PATH */
	bool no_flush;		/* do not ask mmhitmd to cut intervals at the runs' edges */
};

int lab_run(sqlite3 *db, const struct lab_run_opts *o);

/* This boot: /proc/sys/kernel/random/boot_id and uname -r, -v. */
struct lab_boot_id {
	char uuid[64], release[128], version[256];
};
int lab_this_boot(struct lab_boot_id *ret);

#endif
