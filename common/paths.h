/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_PATHS_H
#define MMHITM_PATHS_H

/*
 * The path table (common/paths.conf): the kernel hot paths mmhitm
 * attributes HITM to, and all that is known of each. Each program's main()
 * loads it once (paths_load()), from the copy compiled in or from
 * $MMHITM_PATHS, and stops when it does not parse: every program would be
 * quietly wrong.
 */

#include <stdbool.h>
#include <stddef.h>

#define MAX_PATHS 8		/* for arrays sized per path */
#define PATH_MAX_LIST 16	/* functions, objects or work sources per path */
#define PATHS_MAX_FREE 16	/* free counters in the whole table (`free` lines) */

/* The files a free counter is read from: /proc/stat, /proc/vmstat, /proc/interrupts. */
enum path_free_file {
	PATH_FREE_STAT,		/* the line FIELD's first number */
	PATH_FREE_VMSTAT,	/* the line FIELD's number */
	PATH_FREE_INTERRUPTS,	/* the row FIELD, summed over CPUs */
	NR_PATH_FREE_FILES,
};

/* A `free` line: the counter the kernel keeps anyway for a work source. */
struct path_free {
	const char *source;		/* the work source: "sched:sched_switch" */
	enum path_free_file file;
	const char *field;		/* "ctxt" */
	unsigned int line;		/* in the table, for messages */
	bool exact;			/* counts what the tracepoint source counts (`exact`) */
};

struct path_def {
	const char *id;			/* "P1" */
	const char *title, *patch, *unit, *reproducer, *metric;
	const char *needs_why;		/* why a kernel without needs cannot run it */
	double per;
	const char *objects[PATH_MAX_LIST];
	const char *functions[PATH_MAX_LIST];
	const char *work[PATH_MAX_LIST];	/* first available wins */
	const char *work_unit[PATH_MAX_LIST];	/* what work[i] counts: unit, unit_of */
	const char *needs[PATH_MAX_LIST];	/* kernel states it needs: "lru_gen=on,off" */
	size_t nr_objects, nr_functions, nr_work, nr_needs;
	const char *unit_of_source[PATH_MAX_LIST], *unit_of[PATH_MAX_LIST];	/* unit_of lines */
	size_t nr_unit_of;
	struct path_free free[PATH_MAX_LIST];	/* at most one per work source */
	size_t nr_free;
};

/* Loads the table: 0, or -errno after saying why (the file, or the line
 * that does not parse). */
int paths_load(void);

/* The number of paths, and path i (0-based, in table order). */
size_t paths_count(void);
static inline int paths_nr(void)	/* as an int, for loops over path indices */
{
	return (int)paths_count();
}
const struct path_def *path_get(size_t i);
/* The index of the path with this id, or -1. */
int path_index(const char *id);
/* The unit of a work source of the path ("sched:sched_switch": "context
 * switches, all tasks"), or NULL when the path has no such source. */
const char *path_work_unit(const struct path_def *p, const char *source);
/* The free counter of a work source of the path (`free`), or NULL: none. */
const struct path_free *path_work_free(const struct path_def *p, const char *source);
/*
 * Whether mmhitmd reads the free counter every interval (what `exact`
 * needs): stat:ctxt, stat:processes, vmstat:FIELD and interrupts:TLB.
 */
bool path_free_read_every_interval(const struct path_free *f);
/*
 * Whether a windowed mmhitmd reads this work source from its exact free
 * counter instead of counting its tracepoint in windows.
 */
bool path_work_exact_free(const char *source);
/* "stat", "vmstat", "interrupts": the file's name in the table, under /proc. */
const char *path_free_file_name(enum path_free_file f);
/* "P1 P2 P3 P4": the ids, space-separated, for SQL's instr() and messages. */
const char *paths_ids(void);
/* "P1..P4": the first and the last id, for the words of messages. */
const char *paths_span(void);
/*
 * Whether a kernel whose feature ("lru_gen") is in state ("on", "off",
 * "absent") can run path p's route (the table's `needs`). A state the
 * table does not name for the feature cannot; an unknown one ("unknown",
 * NULL: an imported boot) might, and does here.
 */
bool path_runs_with(const struct path_def *p, const char *feature, const char *state);

/* Parses a table text into the global one (tests); 0 or -EINVAL (logged
 * with the line). The text must outlive the table. */
int paths_parse(const char *text, size_t len, const char *origin);

#endif
