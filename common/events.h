/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_EVENTS_H
#define MMHITMD_EVENTS_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What became of every tracepoint mmhitmd asked for on this boot: in use,
 * or unavailable and why. A kernel without an event is never fatal; it is
 * written down (boot_events) so reports can say "not measured".
 */
struct event_status {
	char event[96];		/* "system:name" */
	const char *role;	/* "count" or "learn" */
	bool available;
	char detail[192];	/* filter in use, or why not available */
};

struct event_status_list {
	struct event_status *v;
	size_t n, alloc;
};

int event_status_add(struct event_status_list *l, const char *system, const char *name,
		     const char *role, bool available, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
void event_status_list_done(struct event_status_list *l);
/* Replaces the boot's rows in boot_events, inside the caller's txn. */
int event_status_store(sqlite3 *db, int64_t boot_id, const struct event_status_list *l);

/*
 * The tracepoints counted, one list for the daemon that counts them and
 * the trace.dat import that finds them in a file: each path's work that
 * is a tracepoint (the path table), windowed not those with an exact free
 * counter (read instead), and, recording continuously, those that measure
 * no path's work and sched:sched_switch. "system:*" counts a
 * whole system. Fills ret (pointers to static or path-table strings) and
 * returns how many, or -E2BIG when max is too small.
 */
#define EVENTS_COUNTED_MAX 64
int events_counted(bool continuous, const char **ret, size_t max);

/* The tracefs mount point, mounting tracefs there if needed. NULL: none. */
const char *tracefs_dir(void);

#endif
