// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <tracefs.h>
#include <unistd.h>

#include "db.h"
#include "events.h"
#include "log.h"
#include "paths.h"
#include "util.h"

#define TRACEFS_MAGIC_NR 0x74726163

int event_status_add(struct event_status_list *l, const char *system, const char *name,
		     const char *role, bool available, const char *fmt, ...)
{
	struct event_status *s;
	va_list ap;

	if (grow_array((void **)&l->v, &l->alloc, sizeof(*l->v), l->n + 1) < 0)
		return log_oom();
	s = &l->v[l->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->event, sizeof(s->event), "%s:%s", system, name);
	s->role = role;
	s->available = available;
	va_start(ap, fmt);
	vsnprintf(s->detail, sizeof(s->detail), fmt, ap);
	va_end(ap);
	return 0;
}

void event_status_list_done(struct event_status_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int event_status_store(sqlite3 *db, int64_t boot_id, const struct event_status_list *l)
{
	_cleanup_finalize_ sqlite3_stmt *ins = NULL;
	int r;

	r = db_exec_id(db, "DELETE FROM boot_events WHERE boot_id = ?1", boot_id);
	if (r < 0)
		return r;
	r = db_prepare(db, &ins, "INSERT OR REPLACE INTO boot_events(boot_id, event, role, available, detail)"
				 " VALUES (?1, ?2, ?3, ?4, ?5)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n; i++) {
		sqlite3_bind_int64(ins, 1, boot_id);
		sqlite3_bind_text(ins, 2, l->v[i].event, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, l->v[i].role, -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 4, l->v[i].available);
		sqlite3_bind_text(ins, 5, l->v[i].detail, -1, SQLITE_STATIC);
		r = db_step_done(db, ins);
		if (r < 0)
			return r;
	}
	return 0;
}

static bool is_tracefs(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC_NR;
}

const char *tracefs_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (is_tracefs(dirs[i]))
			return dirs[i];

	/* Not mounted (the default on some hosts): mount it where it belongs. */
	if (mount("nodev", dirs[0], "tracefs", 0, NULL) < 0) {
		log_error_errno(errno, "tracefs is not mounted and mounting it on %s failed: %m",
				dirs[0]);
		return NULL;
	}
	log_info("Mounted tracefs on %s", dirs[0]);
	return dirs[0];
}

/*
 * Counted too when recording continuously. Windowed, each tracepoint
 * counted is a kernel text patch, with IPIs to every CPU, at every slice's
 * start and end, most of what an idle window costs: these measure no
 * path's work (the reclaim that vmscan:* counts is in /proc/vmstat for
 * free, contended locks are learned in the windows all the same), and
 * mmhitmd --count-events adds them back. sched:sched_switch is P1's: its
 * derived work is /proc/stat's ctxt times the sampled same-mm share, and
 * ctxt is its exact free counter, so windows do not count it either.
 */
static const char *const continuous_counted[] = {
	"sched:sched_switch",
	"pagemap:mm_lru_insertion",
	"lock:contention_begin",
	"vmscan:*",
};

static int counted_add(const char **ret, size_t *n, size_t max, const char *spec)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(ret[i], spec))
			return 0;
	if (*n >= max)
		return -E2BIG;
	ret[(*n)++] = spec;
	return 0;
}

int events_counted(bool continuous, const char **ret, size_t max)
{
	size_t n = 0;
	int r = 0;

	/* each path's work that is a tracepoint ("derived:" and
	 * lru_gen_progress. are computed, not counted); windowed, not one
	 * whose exact free counter the recorder reads instead (paths.conf's
	 * `free ... exact`: the same count, nothing armed) */
	for (size_t p = 0; r >= 0 && p < paths_count(); p++)
		for (size_t i = 0; r >= 0 && i < path_get(p)->nr_work; i++) {
			const char *w = path_get(p)->work[i];

			if (strchr(w, ':') && !startswith(w, "derived:") &&
			    (continuous || !path_work_exact_free(w)))
				r = counted_add(ret, &n, max, w);
		}
	for (size_t i = 0; r >= 0 && continuous && i < ARRAY_SIZE(continuous_counted); i++)
		r = counted_add(ret, &n, max, continuous_counted[i]);
	return r < 0 ? r : (int)n;
}
