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

#include <stddef.h>

#define MAX_PATHS 8		/* for arrays sized per path */
#define PATH_MAX_LIST 16	/* functions, objects or work sources per path */

struct path_def {
	const char *id;			/* "P1" */
	const char *title, *patch, *unit, *reproducer, *metric;
	double per;
	const char *objects[PATH_MAX_LIST];
	const char *functions[PATH_MAX_LIST];
	const char *work[PATH_MAX_LIST];	/* first available wins */
	const char *needs[PATH_MAX_LIST];	/* kernel features it needs: "lru_gen" */
	size_t nr_objects, nr_functions, nr_work, nr_needs;
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
/* "P1 P2 P3 P4": the ids, space-separated, for SQL's instr() and messages. */
const char *paths_ids(void);
/* "P1..P4": the first and the last id, for the words of messages. */
const char *paths_span(void);
/* "P1 and P2": the ids of the paths that need the kernel feature (the
 * table's `needs`), for the report's words; "" when none does. */
const char *paths_needing(const char *feature, char *buf, size_t len);

/* Parses a table text into the global one (tests); 0 or -EINVAL (logged
 * with the line). The text must outlive the table. */
int paths_parse(const char *text, size_t len, const char *origin);

#endif
