// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm-load: reproduces the load of the four kernel hot paths mmhitm
 * attributes contention to, so that a host (or a test, or bench/) can cause
 * the traffic and measure the path's own throughput.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "load.h"
#include "exitcode.h"
#include "log.h"
#include "paths.h"
#include "util.h"

#ifndef MMHITM_VERSION
#error "MMHITM_VERSION comes from the Makefile (debian/changelog's version)"
#endif

struct load_command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*help)(void);
	const char *summary;
};

static const struct load_command commands[] = {
	{ "ctxswitch", cmd_ctxswitch, cmd_ctxswitch_help,
	  "two threads per CPU sched_yield() to each other; --private-mm: one mm per CPU" },
	{ "aging", cmd_aging, cmd_aging_help,
	  "processes share a tmpfs file, read it, and MGLRU aging passes walk them" },
	{ "pwrite", cmd_pwrite, cmd_pwrite_help,
	  "pwrite() 1 KiB at offset 0 of a tmpfs file, over and over (LibMicro pwrite)" },
	{ "tlbflush", cmd_tlbflush, cmd_tlbflush_help,
	  "write, MADV_DONTNEED and re-read every page of 1 MiB (will-it-scale tlb_flush2)" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: mmhitm-load [--version] [--help] COMMAND [OPTIONS]\n\n"
		   "Reproduces the kernel hot paths mmhitm attributes contention to.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %-4s %s\n", commands[i].name, load_hot_path(commands[i].name),
			commands[i].summary);
	fprintf(f, "\n'mmhitm-load COMMAND --help' describes a command and the options all\n"
		   "commands share (--duration, --loops, --threads/--procs, --cpus, --json).\n"
		   "Exit status: 0 done (also after Ctrl-C, with a partial result), 1 failed,\n"
		   "2 usage, 3 the kernel lacks the feature (aging: no CONFIG_LRU_GEN),\n"
		   "4 the feature is switched off (aging: MGLRU disabled).\n");
}

static const struct load_command *command_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct load_command *c;
	sigset_t set;
	int r;

	log_setup("mmhitm-load");
	/*
	 * Ctrl-C is taken synchronously by the runner (sigtimedwait()); blocked
	 * from the start, it cannot kill us half-way through a setup or a
	 * cleanup (aging restores lru_gen/enabled) either.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* The result goes to stdout in one piece, even through a pipe. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (paths_load() < 0)
		return EXIT_CONFIG;

	if (argc < 2) {
		usage(stderr);
		return LOAD_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		c = argc > 2 ? command_find(argv[2]) : NULL;
		if (c)
			c->help();
		else
			usage(stdout);
		return LOAD_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("mmhitm-load %s\n", MMHITM_VERSION);
		return LOAD_EXIT_OK;
	}

	c = command_find(argv[1]);
	if (!c) {
		const char *names[ARRAY_SIZE(commands)];

		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			names[i] = commands[i].name;
		cli_unknown_command("mmhitm-load", argv[1], names, ARRAY_SIZE(names));
		return LOAD_EXIT_USAGE;
	}
	r = c->run(argc - 1, argv + 1);
	if (r < 0)
		return LOAD_EXIT_FAILURE;
	return r;
}
