/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_LEARN_H
#define MMHITMD_LEARN_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Object learning: turns the filtered tracepoint stream into the objects
 * attribution needs: live mm_struct addresses with their owning process,
 * (folio, pfn) pairs for the vmemmap base, and contended lock addresses.
 *
 * Binding an mm_struct to its process needs care:
 *  - fork: dup_mm() allocates the child's mm in the *parent's* context, and
 *    the parent even takes the new mm's mmap_lock in dup_mmap(); the owner
 *    is the child_pid of the sched_process_fork that the same thread emits
 *    next. Thread creation (CLONE_VM) allocates no mm.
 *  - exec: mm_alloc() runs in the exec'ing task (its pre-exec tid, which
 *    sched_process_exec reports as old_pid), then the task switches mm.
 *  - objects allocated before we watched are learned from mmap_lock
 *    events, which run in the owner's context (kernel threads that lock
 *    other mms, like khugepaged, are ignored).
 * Events must be fed in timestamp order.
 */

enum learn_type {
	LEARN_MM_ALLOC,		/* pid, addr */
	LEARN_MM_FREE,		/* addr */
	LEARN_FORK,		/* pid = parent tid, pid2 = child pid, comm = child's */
	LEARN_EXEC,		/* pid = new pid, pid2 = old tid, comm = basename */
	LEARN_MMAP_LOCK,	/* pid, addr = mm, arg = memcg id, text = memcg path */
	LEARN_PAGE,		/* addr = folio, arg = pfn */
	LEARN_LOCK,		/* addr = lock, arg = LCB_F_* flags */
	LEARN_SWITCH,		/* pid = prev tid, pid2 = next tid (sampled windows) */
	LEARN_MM_SNAPSHOT,	/* pid = tgid, addr = its live mm, comm (snapshot.h) */
};

struct learn_event {
	enum learn_type type;
	int64_t ts_ns;		/* wall clock */
	int32_t pid;
	int32_t pid2;
	uint64_t addr;
	uint64_t arg;
	bool has_arg;
	char comm[16];
	const char *text;	/* borrowed for the call */
};

/* What learning needs from /proc, replaceable in tests. */
struct learn_proc {
	/* tid -> tgid; -ESRCH if gone. *ret_kthread is set for kernel threads. */
	int (*tgid_of)(void *ctx, int32_t tid, int32_t *ret_tgid, bool *ret_kthread);
	/* tgid -> comm into buf[16]; -ESRCH if gone. */
	int (*comm_of)(void *ctx, int32_t tgid, char *buf);
	void *ctx;
};

/* The real /proc. */
extern const struct learn_proc learn_proc_default;

struct learn_limits {
	uint64_t max_page_pairs;	/* per boot */
	uint64_t max_locks;		/* lock addresses tracked; the least recently
					 * contended is evicted past it */
	uint64_t max_unwritten;		/* objects waiting for a writable DB */
};

struct learn_stats {
	uint64_t mm_learned;		/* bound to a process */
	uint64_t mm_freed;
	uint64_t page_pairs;
	uint64_t locks;
	uint64_t locks_evicted;		/* aged out to make room (max_locks) */
	uint64_t locks_dropped;		/* over max_locks, nothing evictable */
	uint64_t mm_dropped;		/* freed, never written: DB unwritable too long */
};

struct learner;

struct learner *learner_new(const struct learn_limits *lim, const struct learn_proc *proc);
void learner_free(struct learner *l);

void learner_feed(struct learner *l, const struct learn_event *ev);

/*
 * A snapshot of every live mm (LEARN_MM_SNAPSHOT events between begin and
 * end) is the whole truth at its time: an object believed alive that it
 * did not list died since it was last seen, and is closed at that time
 * (the free itself was not watched). An aborted snapshot closes nothing.
 */
void learner_snapshot_begin(struct learner *l);
void learner_snapshot_end(struct learner *l, int64_t ts_ns);
void learner_snapshot_abort(struct learner *l);

/*
 * Writes what changed since the last committed flush, inside the caller's
 * transaction. Then call learner_commit() if the transaction committed or
 * learner_abort() if it did not (the changes are written again next time).
 */
int learner_flush(struct learner *l, sqlite3 *db, int64_t boot_id);
void learner_commit(struct learner *l);
void learner_abort(struct learner *l);

/* Re-reads the comm of the processes of live objects seen (bound, or
 * their mmap_lock taken) since the last call (prctl(PR_SET_NAME) after
 * exec); a changed one is written at the next flush. */
void learner_refresh_comms(struct learner *l);

void learner_get_stats(const struct learner *l, struct learn_stats *ret);

/*
 * Context switches seen in the sampled sched_switch windows: all of them,
 * those to a user task (lru_gen_use_mm() runs), and those between two
 * tasks of one process (same mm: P1's work unit). Since the last call.
 */
struct switch_stats {
	uint64_t sampled;
	uint64_t to_user;
	uint64_t same_mm;
};
void learner_take_switch_stats(struct learner *l, struct switch_stats *ret);

/* Whether the boot's (folio, pfn) pairs are all learned (max_page_pairs):
 * the page events need not be armed any more. */
bool learner_pages_full(const struct learner *l);

#endif
