// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "learn.h"
#include "log.h"
#include "u64map.h"
#include "util.h"

struct mm_obj {
	uint64_t addr;
	int32_t tgid;		/* 0: unknown */
	int32_t alloc_tid;	/* thread that allocated it, while unbound */
	char comm[16];
	int64_t memcg_id;	/* -1: unknown */
	char *memcg_path;
	const char *learned_from;
	int64_t alloc_ns;	/* 0: before we watched */
	int64_t free_ns;	/* 0: live */
	int64_t first_seen_ns;
	int64_t last_seen_ns;
	bool dirty;
	bool queued;		/* on the dirty list */
	uint32_t snap_gen;	/* the last snapshot that listed it */
};

struct lock_obj {
	struct lock_obj *prev, *next;	/* least recently contended first */
	uint64_t addr;
	uint64_t flags;
	uint64_t unflushed;	/* contentions not yet in the DB */
	uint64_t flushing;	/* part of unflushed in the open transaction */
	int64_t first_seen_ns;
	int64_t last_seen_ns;
	bool queued;
};

struct page_pair {
	uint64_t pfn;
	uint64_t folio;
	int64_t seen_ns;
};

struct learner {
	struct learn_limits lim;
	struct learn_proc proc;

	struct u64map *live_mm;		/* addr -> mm_obj */
	struct u64map *seen_mm;		/* addrs of mms seen since the comm refresh */
	struct u64map *pending;		/* alloc tid -> mm_obj not yet bound */
	struct mm_obj **dirty;		/* to write; freed ones are owned here */
	size_t n_dirty, alloc_dirty;

	struct u64map *locks;		/* addr -> lock_obj */
	struct lock_obj *lru_head, *lru_tail;	/* the oldest is evicted first */
	struct lock_obj **dirty_locks;
	size_t n_dirty_locks, alloc_dirty_locks;

	struct u64map *pfns;		/* pfns already paired this run */
	struct page_pair *new_pairs;
	size_t n_new_pairs, alloc_new_pairs;
	size_t n_flushing_pairs;

	struct learn_stats stats;
	struct switch_stats sw;
	struct u64map *tasks;		/* tid -> tgid << 1 | kthread, + 1; per window */
	bool oom_logged;
	bool drop_logged;
	uint32_t snap_gen;		/* the snapshot being fed */
};

static int proc_tgid_of(void *ctx, int32_t tid, int32_t *ret_tgid, bool *ret_kthread)
{
	char path[64], *buf = NULL, *p;
	unsigned long flags = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	n = read_file(path, &buf);
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	p = strstr(buf, "\nTgid:");
	if (!p) {
		free(buf);
		return -EIO;
	}
	*ret_tgid = (int32_t)strtol(p + 6, NULL, 10);
	free(buf);

	/* PF_KTHREAD (0x00200000) is the 9th field of /proc/PID/stat. */
	snprintf(path, sizeof(path), "/proc/%d/stat", tid);
	if (read_file(path, &buf) >= 0) {
		p = strrchr(buf, ')');
		if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) == 1)
			*ret_kthread = flags & 0x00200000;
		free(buf);
	}
	return 0;
}

static int proc_comm_of(void *ctx, int32_t tgid, char *buf)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/comm", tgid);
	r = read_line(path, buf, 16);
	return r == -ENOENT ? -ESRCH : r;
}

const struct learn_proc learn_proc_default = {
	.tgid_of = proc_tgid_of,
	.comm_of = proc_comm_of,
};

struct learner *learner_new(const struct learn_limits *lim, const struct learn_proc *proc)
{
	struct learner *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->lim = *lim;
	l->proc = *proc;
	l->live_mm = u64map_new();
	l->seen_mm = u64map_new();
	l->pending = u64map_new();
	l->locks = u64map_new();
	l->pfns = u64map_new();
	l->tasks = u64map_new();
	if (!l->live_mm || !l->seen_mm || !l->pending || !l->locks || !l->pfns || !l->tasks) {
		learner_free(l);
		return NULL;
	}
	return l;
}

void learner_free(struct learner *l)
{
	size_t it = 0;
	void *v;

	if (!l)
		return;
	/* Live objects may also be on the dirty list: free each once. */
	for (size_t i = 0; i < l->n_dirty; i++)
		if (l->dirty[i]->free_ns) {
			free(l->dirty[i]->memcg_path);
			free(l->dirty[i]);
		}
	if (l->live_mm)
		while (u64map_next(l->live_mm, &it, NULL, &v)) {
			free(((struct mm_obj *)v)->memcg_path);
			free(v);
		}
	it = 0;
	if (l->locks)
		while (u64map_next(l->locks, &it, NULL, &v))
			free(v);
	u64map_free(l->live_mm);
	u64map_free(l->seen_mm);
	u64map_free(l->pending);
	u64map_free(l->locks);
	u64map_free(l->pfns);
	u64map_free(l->tasks);
	free(l->dirty);
	free(l->dirty_locks);
	free(l->new_pairs);
	free(l);
}

static void learner_oom(struct learner *l)
{
	/* Learning is best effort: log once and keep recording the rest. */
	if (!l->oom_logged)
		log_warning("Out of memory while learning objects, dropping some, ignoring");
	l->oom_logged = true;
}

static void mm_mark_dirty(struct learner *l, struct mm_obj *o)
{
	o->dirty = true;
	if (o->queued)
		return;
	if (grow_array((void **)&l->dirty, &l->alloc_dirty, sizeof(*l->dirty), l->n_dirty + 1) < 0) {
		learner_oom(l);
		return;
	}
	l->dirty[l->n_dirty++] = o;
	o->queued = true;
}

static void mm_free_obj(struct learner *l, struct mm_obj *o, int64_t ts)
{
	o->free_ns = ts;
	o->last_seen_ns = ts;
	if (o->alloc_tid && u64map_get(l->pending, (uint64_t)o->alloc_tid) == o)
		u64map_remove(l->pending, (uint64_t)o->alloc_tid);
	u64map_remove(l->live_mm, o->addr);
	l->stats.mm_freed++;
	mm_mark_dirty(l, o);
	if (!o->queued) {
		/* Could not queue it (OOM): nothing else owns it now. */
		free(o->memcg_path);
		free(o);
	}
}

static struct mm_obj *mm_new_obj(struct learner *l, uint64_t addr, int64_t ts)
{
	struct mm_obj *o = calloc(1, sizeof(*o)), *old;

	if (!o) {
		learner_oom(l);
		return NULL;
	}
	/* An address we think is live being allocated again means we lost
	 * its free (ring buffer overrun): it ended by now. */
	old = u64map_get(l->live_mm, addr);
	if (old)
		mm_free_obj(l, old, ts);
	o->addr = addr;
	o->memcg_id = -1;
	o->first_seen_ns = o->last_seen_ns = ts;
	if (u64map_put(l->live_mm, addr, o) < 0) {
		free(o);
		learner_oom(l);
		return NULL;
	}
	return o;
}

/* Its process did something this interval: its comm is worth a look. */
static void mm_seen(struct learner *l, const struct mm_obj *o)
{
	if (!l->seen_mm || u64map_put(l->seen_mm, o->addr, (void *)1) < 0)
		learner_oom(l);
}

static void mm_bind(struct learner *l, struct mm_obj *o, int32_t tgid, const char *comm,
		    const char *how, int64_t ts)
{
	if (o->alloc_tid && u64map_get(l->pending, (uint64_t)o->alloc_tid) == o)
		u64map_remove(l->pending, (uint64_t)o->alloc_tid);
	o->alloc_tid = 0;
	o->tgid = tgid;
	snprintf(o->comm, sizeof(o->comm), "%s", comm);
	o->learned_from = how;
	o->last_seen_ns = ts;
	l->stats.mm_learned++;
	mm_mark_dirty(l, o);
	mm_seen(l, o);
}

static void on_mm_alloc(struct learner *l, const struct learn_event *ev)
{
	struct mm_obj *o = mm_new_obj(l, ev->addr, ev->ts_ns);

	if (!o)
		return;
	o->alloc_ns = ev->ts_ns;
	o->alloc_tid = ev->pid;
	o->learned_from = "alloc";
	if (u64map_put(l->pending, (uint64_t)ev->pid, o) < 0)
		learner_oom(l);
	mm_mark_dirty(l, o);
}

static void on_fork(struct learner *l, const struct learn_event *ev)
{
	struct mm_obj *o = u64map_get(l->pending, (uint64_t)ev->pid);

	/* No mm allocated by the forking thread: a thread or CLONE_VM. */
	if (!o)
		return;
	mm_bind(l, o, ev->pid2, ev->comm, "fork", ev->ts_ns);
}

static void on_exec(struct learner *l, const struct learn_event *ev)
{
	struct mm_obj *o = u64map_get(l->pending, (uint64_t)ev->pid2);

	if (!o)
		return;
	mm_bind(l, o, ev->pid, ev->comm, "exec", ev->ts_ns);
}

static void on_mm_free(struct learner *l, const struct learn_event *ev)
{
	struct mm_obj *o = u64map_get(l->live_mm, ev->addr);

	if (o)
		mm_free_obj(l, o, ev->ts_ns);
}

static void set_memcg(struct learner *l, struct mm_obj *o, const struct learn_event *ev)
{
	/* While dup_mmap() runs, the new mm has no owner yet and reports the
	 * root memcg; the owner's own events say where it really lives. */
	if (ev->has_arg && (int64_t)ev->arg != o->memcg_id) {
		o->memcg_id = (int64_t)ev->arg;
		mm_mark_dirty(l, o);
	}
	if (ev->text && (!o->memcg_path || strcmp(o->memcg_path, ev->text) != 0)) {
		char *p = strdup(ev->text);

		if (!p) {
			learner_oom(l);
			return;
		}
		free(o->memcg_path);
		o->memcg_path = p;
		mm_mark_dirty(l, o);
	}
}

static void on_mmap_lock(struct learner *l, const struct learn_event *ev)
{
	struct mm_obj *o = u64map_get(l->live_mm, ev->addr);
	char comm[16] = "";
	int32_t tgid = 0;
	bool kthread = false;

	if (o) {
		/* A pending mm is being set up by its allocator (dup_mmap in
		 * the parent): that says nothing about the owner. */
		if (o->alloc_tid)
			return;
		o->last_seen_ns = ev->ts_ns;
		mm_seen(l, o);
		if (o->tgid)
			set_memcg(l, o, ev);
		else if (l->proc.tgid_of(l->proc.ctx, ev->pid, &tgid, &kthread) == 0 && !kthread) {
			l->proc.comm_of(l->proc.ctx, tgid, comm);
			mm_bind(l, o, tgid, comm, o->learned_from, ev->ts_ns);
			set_memcg(l, o, ev);
		}
		return;
	}

	/* An mm older than us. Kernel threads that lock others' mms
	 * (khugepaged, the OOM reaper) must not claim them. */
	if (l->proc.tgid_of(l->proc.ctx, ev->pid, &tgid, &kthread) < 0)
		tgid = 0;	/* exited already: keep the address, owner unknown */
	if (kthread)
		return;
	o = mm_new_obj(l, ev->addr, ev->ts_ns);
	if (!o)
		return;
	o->learned_from = "mmap_lock";
	if (tgid) {
		l->proc.comm_of(l->proc.ctx, tgid, comm);
		mm_bind(l, o, tgid, comm, "mmap_lock", ev->ts_ns);
	}
	set_memcg(l, o, ev);
	mm_mark_dirty(l, o);
}

/* A live mm listed by a snapshot: the owner as the kernel says now. */
static void on_snapshot(struct learner *l, const struct learn_event *ev)
{
	struct mm_obj *o = u64map_get(l->live_mm, ev->addr);

	/* Another process at the address: the one we knew died unwatched. */
	if (o && o->tgid && o->tgid != ev->pid) {
		mm_free_obj(l, o, ev->ts_ns);
		o = NULL;
	}
	if (!o) {
		o = mm_new_obj(l, ev->addr, ev->ts_ns);
		if (!o)
			return;
		mm_bind(l, o, ev->pid, ev->comm, "task_iter", ev->ts_ns);
	} else if (!o->tgid) {
		mm_bind(l, o, ev->pid, ev->comm, o->learned_from, ev->ts_ns);
	} else {
		/* Not marked dirty: a row per live mm per window would be a
		 * write per process per interval, for a timestamp. */
		o->last_seen_ns = ev->ts_ns;
	}
	o->snap_gen = l->snap_gen;
}

bool learner_pages_full(const struct learner *l)
{
	return u64map_count(l->pfns) >= l->lim.max_page_pairs;
}

void learner_snapshot_begin(struct learner *l)
{
	l->snap_gen++;
}

void learner_snapshot_end(struct learner *l, int64_t ts_ns)
{
	struct mm_obj **dead = NULL;
	size_t n = 0, alloc = 0, it = 0;
	uint64_t addr;
	void *v;

	while (u64map_next(l->live_mm, &it, &addr, &v)) {
		struct mm_obj *o = v;

		/* Being set up by its allocator: not listed under a task yet. */
		if (o->snap_gen == l->snap_gen || o->alloc_tid)
			continue;
		if (grow_array((void **)&dead, &alloc, sizeof(*dead), n + 1) < 0) {
			learner_oom(l);
			break;
		}
		dead[n++] = o;
	}
	for (size_t i = 0; i < n; i++)
		mm_free_obj(l, dead[i], dead[i]->last_seen_ns > ts_ns ? dead[i]->last_seen_ns : ts_ns);
	free(dead);
}

void learner_snapshot_abort(struct learner *l)
{
	/* The next snapshot starts a new generation; this one closes nothing. */
	l->snap_gen++;
}

static void on_page(struct learner *l, const struct learn_event *ev)
{
	struct page_pair *p;

	if (u64map_count(l->pfns) >= l->lim.max_page_pairs)
		return;
	if (u64map_get(l->pfns, ev->arg + 1))	/* +1: pfn 0 is a valid key too */
		return;
	if (u64map_put(l->pfns, ev->arg + 1, (void *)1) < 0 ||
	    grow_array((void **)&l->new_pairs, &l->alloc_new_pairs, sizeof(*l->new_pairs),
		       l->n_new_pairs + 1) < 0) {
		learner_oom(l);
		return;
	}
	p = &l->new_pairs[l->n_new_pairs++];
	p->pfn = ev->arg;
	p->folio = ev->addr;
	p->seen_ns = ev->ts_ns;
	l->stats.page_pairs++;
}

static void lru_unlink(struct learner *l, struct lock_obj *o)
{
	if (o->prev)
		o->prev->next = o->next;
	else
		l->lru_head = o->next;
	if (o->next)
		o->next->prev = o->prev;
	else
		l->lru_tail = o->prev;
	o->prev = o->next = NULL;
}

static void lru_append(struct learner *l, struct lock_obj *o)
{
	o->prev = l->lru_tail;
	o->next = NULL;
	if (l->lru_tail)
		l->lru_tail->next = o;
	else
		l->lru_head = o;
	l->lru_tail = o;
}

/*
 * Makes room for one more lock: the least recently contended one goes,
 * unless its contentions are not in the database yet (then every lock is
 * that recent, and the new one is dropped instead). An evicted lock seen
 * again is learned again; the database row adds its contentions up.
 */
static bool lock_make_room(struct learner *l)
{
	struct lock_obj *old = l->lru_head;

	if (u64map_count(l->locks) < l->lim.max_locks)
		return true;
	if (!old || old->queued)
		return false;
	lru_unlink(l, old);
	u64map_remove(l->locks, old->addr);
	free(old);
	l->stats.locks_evicted++;
	return true;
}

static void on_lock(struct learner *l, const struct learn_event *ev)
{
	struct lock_obj *o = u64map_get(l->locks, ev->addr);

	if (!o) {
		if (!lock_make_room(l)) {
			l->stats.locks_dropped++;
			return;
		}
		o = calloc(1, sizeof(*o));
		if (!o || u64map_put(l->locks, ev->addr, o) < 0) {
			free(o);
			learner_oom(l);
			return;
		}
		o->addr = ev->addr;
		o->flags = ev->arg;
		o->first_seen_ns = ev->ts_ns;
		l->stats.locks++;
	} else {
		lru_unlink(l, o);
	}
	lru_append(l, o);
	o->unflushed++;
	o->last_seen_ns = ev->ts_ns;
	if (!o->queued) {
		if (grow_array((void **)&l->dirty_locks, &l->alloc_dirty_locks,
			       sizeof(*l->dirty_locks), l->n_dirty_locks + 1) < 0) {
			learner_oom(l);
			return;
		}
		l->dirty_locks[l->n_dirty_locks++] = o;
		o->queued = true;
	}
}

/* tgid of a task for switch classification; 0 for idle and kernel threads. */
static int32_t user_tgid(struct learner *l, int32_t tid)
{
	uintptr_t v;
	int32_t tgid = 0;
	bool kthread = false;

	if (tid <= 0)
		return 0;	/* the idle task */
	v = (uintptr_t)u64map_get(l->tasks, (uint64_t)tid);
	if (v)
		return (v - 1) & 1 ? 0 : (int32_t)((v - 1) >> 1);
	/* Gone already: counted as not a user task, which undercounts. */
	if (l->proc.tgid_of(l->proc.ctx, tid, &tgid, &kthread) < 0)
		kthread = true;
	if (u64map_put(l->tasks, (uint64_t)tid, (void *)(((uintptr_t)tgid << 1 | kthread) + 1)) < 0)
		learner_oom(l);
	return kthread ? 0 : tgid;
}

static void on_switch(struct learner *l, const struct learn_event *ev)
{
	int32_t prev = user_tgid(l, ev->pid), next = user_tgid(l, ev->pid2);

	l->sw.sampled++;
	if (next) {
		l->sw.to_user++;
		if (prev == next)
			l->sw.same_mm++;
	}
}

void learner_take_switch_stats(struct learner *l, struct switch_stats *ret)
{
	*ret = l->sw;
	memset(&l->sw, 0, sizeof(l->sw));
	/* Pids are reused: resolve afresh in every window. */
	u64map_free(l->tasks);
	l->tasks = u64map_new();
	if (!l->tasks)
		learner_oom(l);
}

void learner_feed(struct learner *l, const struct learn_event *ev)
{
	switch (ev->type) {
	case LEARN_MM_ALLOC:	on_mm_alloc(l, ev); break;
	case LEARN_MM_FREE:	on_mm_free(l, ev); break;
	case LEARN_FORK:	on_fork(l, ev); break;
	case LEARN_EXEC:	on_exec(l, ev); break;
	case LEARN_MMAP_LOCK:	on_mmap_lock(l, ev); break;
	case LEARN_PAGE:	on_page(l, ev); break;
	case LEARN_LOCK:	on_lock(l, ev); break;
	case LEARN_SWITCH:	if (l->tasks)
					on_switch(l, ev);
				break;
	case LEARN_MM_SNAPSHOT:	on_snapshot(l, ev); break;
	}
}

static void bind_ns(sqlite3_stmt *st, int i, int64_t ns)
{
	if (ns)
		sqlite3_bind_int64(st, i, ns);
	else
		sqlite3_bind_null(st, i);
}

/* The mm_structs learned or changed since the last flush. */
static int flush_mm_objects(struct learner *l, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *mm = NULL;
	int r;

	r = db_prepare(db, &mm,
		"INSERT INTO mm_objects(boot_id, addr, tgid, comm, memcg_id, memcg_path,"
		" learned_from, alloc_ns, free_ns, first_seen_ns, last_seen_ns)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
		" ON CONFLICT (boot_id, addr, first_seen_ns) DO UPDATE SET"
		" tgid = excluded.tgid, comm = excluded.comm, memcg_id = excluded.memcg_id,"
		" memcg_path = excluded.memcg_path, learned_from = excluded.learned_from,"
		" free_ns = excluded.free_ns, last_seen_ns = excluded.last_seen_ns");
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n_dirty; i++) {
		struct mm_obj *o = l->dirty[i];

		sqlite3_bind_int64(mm, 1, boot_id);
		sqlite3_bind_int64(mm, 2, (int64_t)o->addr);
		if (o->tgid)
			sqlite3_bind_int(mm, 3, o->tgid);
		if (o->comm[0])
			sqlite3_bind_text(mm, 4, o->comm, -1, SQLITE_STATIC);
		if (o->memcg_id >= 0)
			sqlite3_bind_int64(mm, 5, o->memcg_id);
		if (o->memcg_path)
			sqlite3_bind_text(mm, 6, o->memcg_path, -1, SQLITE_STATIC);
		sqlite3_bind_text(mm, 7, o->learned_from, -1, SQLITE_STATIC);
		bind_ns(mm, 8, o->alloc_ns);
		bind_ns(mm, 9, o->free_ns);
		sqlite3_bind_int64(mm, 10, o->first_seen_ns);
		sqlite3_bind_int64(mm, 11, o->last_seen_ns);
		r = db_step_done(db, mm);
		if (r < 0)
			return r;
	}
	return 0;
}

static int flush_page_pairs(struct learner *l, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *pg = NULL;
	int r;

	r = db_prepare(db, &pg, "INSERT OR IGNORE INTO page_pairs(boot_id, pfn, folio_addr, seen_ns)"
				" VALUES (?1, ?2, ?3, ?4)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n_new_pairs; i++) {
		sqlite3_bind_int64(pg, 1, boot_id);
		sqlite3_bind_int64(pg, 2, (int64_t)l->new_pairs[i].pfn);
		sqlite3_bind_int64(pg, 3, (int64_t)l->new_pairs[i].folio);
		sqlite3_bind_int64(pg, 4, l->new_pairs[i].seen_ns);
		r = db_step_done(db, pg);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Contentions add up in the row: each lock keeps what this transaction wrote
 * until it commits or rolls back. */
static int flush_locks(struct learner *l, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *lk = NULL;
	int r;

	r = db_prepare(db, &lk,
		"INSERT INTO lock_objects(boot_id, addr, flags, contentions, first_seen_ns, last_seen_ns)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
		" ON CONFLICT (boot_id, addr) DO UPDATE SET"
		" contentions = contentions + excluded.contentions,"
		" last_seen_ns = excluded.last_seen_ns");
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n_dirty_locks; i++) {
		struct lock_obj *o = l->dirty_locks[i];

		o->flushing = o->unflushed;
		sqlite3_bind_int64(lk, 1, boot_id);
		sqlite3_bind_int64(lk, 2, (int64_t)o->addr);
		sqlite3_bind_int64(lk, 3, (int64_t)o->flags);
		sqlite3_bind_int64(lk, 4, (int64_t)o->flushing);
		sqlite3_bind_int64(lk, 5, o->first_seen_ns);
		sqlite3_bind_int64(lk, 6, o->last_seen_ns);
		r = db_step_done(db, lk);
		if (r < 0)
			return r;
	}
	return 0;
}

int learner_flush(struct learner *l, sqlite3 *db, int64_t boot_id)
{
	int r;

	if (l->n_dirty) {
		r = flush_mm_objects(l, db, boot_id);
		if (r < 0)
			return r;
	}
	l->n_flushing_pairs = l->n_new_pairs;
	if (l->n_new_pairs) {
		r = flush_page_pairs(l, db, boot_id);
		if (r < 0)
			return r;
	}
	if (l->n_dirty_locks)
		return flush_locks(l, db, boot_id);
	return 0;
}

void learner_commit(struct learner *l)
{
	size_t keep = 0;

	for (size_t i = 0; i < l->n_dirty; i++) {
		struct mm_obj *o = l->dirty[i];

		o->dirty = false;
		o->queued = false;
		if (o->free_ns) {
			free(o->memcg_path);
			free(o);
		}
	}
	l->n_dirty = 0;

	/* Pairs fed after the flush started stay for the next one. */
	if (l->n_flushing_pairs) {
		memmove(l->new_pairs, l->new_pairs + l->n_flushing_pairs,
			(l->n_new_pairs - l->n_flushing_pairs) * sizeof(*l->new_pairs));
		l->n_new_pairs -= l->n_flushing_pairs;
	}
	l->n_flushing_pairs = 0;

	for (size_t i = 0; i < l->n_dirty_locks; i++) {
		struct lock_obj *o = l->dirty_locks[i];

		o->unflushed -= o->flushing;
		o->flushing = 0;
		if (o->unflushed)
			l->dirty_locks[keep++] = o;
		else
			o->queued = false;
	}
	l->n_dirty_locks = keep;
}

void learner_abort(struct learner *l)
{
	size_t keep = 0, excess;

	/* Everything stays dirty and is written again next time. */
	l->n_flushing_pairs = 0;
	for (size_t i = 0; i < l->n_dirty_locks; i++)
		l->dirty_locks[i]->flushing = 0;

	/* While the database can't be written (a full disk for days), freed
	 * objects wait here; past the limit the oldest freed ones are given
	 * up, so memory stays bounded. The loss is counted. */
	if (!l->lim.max_unwritten || l->n_dirty <= l->lim.max_unwritten)
		return;
	excess = l->n_dirty - l->lim.max_unwritten;
	for (size_t i = 0; i < l->n_dirty; i++) {
		struct mm_obj *o = l->dirty[i];

		if (excess && o->free_ns) {
			free(o->memcg_path);
			free(o);
			excess--;
			l->stats.mm_dropped++;
			continue;
		}
		l->dirty[keep++] = o;
	}
	l->n_dirty = keep;
	if (!l->drop_logged)
		log_warning("Database unwritable for long: dropping the oldest freed mm_structs "
			    "not yet written, ignoring");
	l->drop_logged = true;
}

void learner_refresh_comms(struct learner *l)
{
	size_t it = 0;
	uint64_t addr;

	/* Only the mms seen since the last refresh: reading /proc for every
	 * live mm every interval costs in proportion to all processes. */
	while (l->seen_mm && u64map_next(l->seen_mm, &it, &addr, NULL)) {
		struct mm_obj *o = u64map_get(l->live_mm, addr);
		char comm[16];

		if (!o || !o->tgid || l->proc.comm_of(l->proc.ctx, o->tgid, comm) < 0)
			continue;
		if (strcmp(comm, o->comm) != 0) {
			snprintf(o->comm, sizeof(o->comm), "%s", comm);
			mm_mark_dirty(l, o);
		}
	}
	u64map_free(l->seen_mm);
	l->seen_mm = u64map_new();
	if (!l->seen_mm)
		learner_oom(l);
}

void learner_get_stats(const struct learner *l, struct learn_stats *ret)
{
	*ret = l->stats;
}
