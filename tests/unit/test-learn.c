// SPDX-License-Identifier: GPL-2.0
/*
 * Object learning from synthetic event sequences shaped like the kernel's:
 * fork (dup_mm in the parent, which even locks the child's mm), exec (a
 * fresh mm in the exec'ing thread), threads (no mm), kernel threads that
 * lock others' mms, lost frees, and the flush/commit/abort protocol.
 */
#include <unistd.h>

#include "db.h"
#include "learn.h"
#include "log.h"
#include "test.h"

/* A fake /proc: tid -> tgid, comm; kthreads flagged. */
static const struct { int32_t tid, tgid; const char *comm; bool kthread; } procs[] = {
	{ 100, 100, "parent", false },
	{ 101, 100, "parent", false },	/* a thread of 100 */
	{ 300, 300, "oldproc", false },
	{ 40, 40, "khugepaged", true },
};

static int fake_tgid(void *ctx, int32_t tid, int32_t *ret, bool *kthread)
{
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (procs[i].tid == tid) {
			*ret = procs[i].tgid;
			*kthread = procs[i].kthread;
			return 0;
		}
	return -3;	/* -ESRCH */
}

static int fake_comm(void *ctx, int32_t tgid, char *buf)
{
	for (size_t i = 0; i < sizeof(procs) / sizeof(procs[0]); i++)
		if (procs[i].tgid == tgid) {
			snprintf(buf, 16, "%s", procs[i].comm);
			return 0;
		}
	return -3;
}

static const struct learn_proc fake = { fake_tgid, fake_comm, NULL };
static const struct learn_limits lim = { .max_page_pairs = 4, .max_locks = 2 };
static char path[64];
static sqlite3 *db;
static int64_t ts = 1000;

static void ev(struct learner *l, enum learn_type type, int32_t pid, uint64_t addr, int32_t pid2,
	       const char *comm)
{
	struct learn_event e = { .type = type, .ts_ns = ts++, .pid = pid, .addr = addr, .pid2 = pid2 };

	if (comm)
		snprintf(e.comm, sizeof(e.comm), "%s", comm);
	learner_feed(l, &e);
}

static void ev_arg(struct learner *l, enum learn_type type, int32_t pid, uint64_t addr, uint64_t arg)
{
	struct learn_event e = { .type = type, .ts_ns = ts++, .pid = pid, .addr = addr,
				 .arg = arg, .has_arg = true };

	learner_feed(l, &e);
}

static int flush(struct learner *l)
{
	int r = db_begin(db);

	if (r == 0)
		r = learner_flush(l, db, 1);
	if (r == 0)
		r = db_commit(db);
	if (r == 0)
		learner_commit(l);
	else {
		db_rollback(db);
		learner_abort(l);
	}
	return r;
}

static int64_t q(const char *sql)
{
	int64_t v = -1;

	if (db_query_int(db, &v, sql) < 0)
		return -1;
	return v;
}

static void reset_db(void)
{
	db_exec(db, "DELETE FROM mm_objects; DELETE FROM page_pairs; DELETE FROM lock_objects");
}

#define MM_CHILD  0xffff888000100000ULL
#define MM_EXEC   0xffff888000200000ULL
#define MM_OLD    0xffff888000300000ULL
#define MM_PARENT 0xffff888000400000ULL

static void test_fork(void)
{
	struct learner *l = learner_new(&lim, &fake);

	reset_db();
	/* dup_mm() in the parent's thread, which then locks the new mm. */
	ev(l, LEARN_MM_ALLOC, 100, MM_CHILD, 0, NULL);
	ev_arg(l, LEARN_MMAP_LOCK, 100, MM_CHILD, 1);
	ev(l, LEARN_FORK, 100, 0, 200, "parent");
	/* The child's own lock later. */
	ev_arg(l, LEARN_MMAP_LOCK, 200, MM_CHILD, 77);
	/* A thread creation: no mm, must bind nothing. */
	ev(l, LEARN_FORK, 100, 0, 101, "parent");
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 1);
	CHECK_INT(q("SELECT tgid FROM mm_objects"), ==, 200);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE learned_from = 'fork' AND comm = 'parent'"), ==, 1);
	CHECK_INT(q("SELECT alloc_ns FROM mm_objects"), ==, 1000 + 0);
	CHECK_INT(q("SELECT memcg_id FROM mm_objects"), ==, 77);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE free_ns IS NULL"), ==, 1);

	ev(l, LEARN_MM_FREE, 0, MM_CHILD, 0, NULL);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE free_ns IS NOT NULL"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 1);	/* updated, not duplicated */
	learner_free(l);
}

static void test_exec(void)
{
	struct learner *l = learner_new(&lim, &fake);

	reset_db();
	/* A non-leader thread (101) execs: mm_alloc() runs in it, and
	 * sched_process_exec reports the new pid (the tgid) and old_pid. */
	ev(l, LEARN_MM_ALLOC, 101, MM_EXEC, 0, NULL);
	ev_arg(l, LEARN_MMAP_LOCK, 101, MM_EXEC, 5);
	ev(l, LEARN_EXEC, 100, 0, 101, "newprog");
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT tgid FROM mm_objects WHERE learned_from = 'exec' AND comm = 'newprog'"), ==, 100);
	learner_free(l);
}

static void test_old_objects(void)
{
	struct learner *l = learner_new(&lim, &fake);
	struct learn_event e = { .type = LEARN_MMAP_LOCK, .pid = 300, .addr = MM_OLD,
				 .text = "/system.slice/x.service" };

	reset_db();
	e.ts_ns = ts++;
	learner_feed(l, &e);
	/* khugepaged locking someone's mm claims nothing. */
	ev_arg(l, LEARN_MMAP_LOCK, 40, MM_PARENT, 1);
	/* A thread of 100 locks 100's mm: bound to the tgid, not the tid. */
	ev_arg(l, LEARN_MMAP_LOCK, 101, MM_PARENT + 64, 1);
	/* A task already gone: the address is kept, the owner unknown. */
	ev_arg(l, LEARN_MMAP_LOCK, 999, MM_PARENT + 128, 1);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 3);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 300 AND comm = 'oldproc'"
		    " AND memcg_path = '/system.slice/x.service' AND alloc_ns IS NULL"), ==, 1);
	CHECK_INT(q("SELECT tgid FROM mm_objects WHERE printf('%x', addr) = 'ffff888000400040'"), ==, 100);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid IS NULL AND learned_from = 'mmap_lock'"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 40"), ==, 0);
	learner_free(l);
}

/* A free we never saw (ring buffer overrun): the address being allocated
 * again ends the old object instead of merging two lives. */
static void test_lost_free(void)
{
	struct learner *l = learner_new(&lim, &fake);

	reset_db();
	ev(l, LEARN_MM_ALLOC, 100, MM_CHILD, 0, NULL);
	ev(l, LEARN_FORK, 100, 0, 201, "a");
	ev(l, LEARN_MM_ALLOC, 100, MM_CHILD, 0, NULL);
	ev(l, LEARN_FORK, 100, 0, 202, "b");
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 2);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 201 AND free_ns IS NOT NULL"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 202 AND free_ns IS NULL"), ==, 1);
	/* A failed fork: allocated and freed, never bound, still recorded. */
	ev(l, LEARN_MM_ALLOC, 100, MM_EXEC, 0, NULL);
	ev(l, LEARN_MM_FREE, 0, MM_EXEC, 0, NULL);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE learned_from = 'alloc' AND tgid IS NULL AND free_ns IS NOT NULL"), ==, 1);
	learner_free(l);
}

static void test_pages_and_locks(void)
{
	struct learner *l = learner_new(&lim, &fake);
	struct learn_stats st;

	reset_db();
	for (uint64_t pfn = 0; pfn < 10; pfn++)
		ev_arg(l, LEARN_PAGE, 1, 0xffffea0000000000ULL + pfn * 64, pfn);
	ev_arg(l, LEARN_PAGE, 1, 0xffffea0000000000ULL, 0);	/* repeat */
	ev_arg(l, LEARN_LOCK, 1, 0xffff888000500000ULL, 1);
	ev_arg(l, LEARN_LOCK, 1, 0xffff888000500000ULL, 1);
	ev_arg(l, LEARN_LOCK, 1, 0xffff888000600000ULL, 1);
	ev_arg(l, LEARN_LOCK, 1, 0xffff888000700000ULL, 1);	/* over max_locks */
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM page_pairs"), ==, 4);	/* max_page_pairs */
	CHECK_INT(q("SELECT count(*) FROM page_pairs WHERE printf('%x', folio_addr - pfn * 64) != 'ffffea0000000000'"), ==, 0);
	CHECK_INT(q("SELECT contentions FROM lock_objects WHERE printf('%x', addr) = 'ffff888000500000'"), ==, 2);
	CHECK_INT(q("SELECT count(*) FROM lock_objects"), ==, 2);
	learner_get_stats(l, &st);
	CHECK_INT(st.locks_dropped, ==, 1);
	CHECK_INT(st.page_pairs, ==, 4);

	/* Contentions add up across flushes. */
	ev_arg(l, LEARN_LOCK, 1, 0xffff888000500000ULL, 1);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT contentions FROM lock_objects WHERE printf('%x', addr) = 'ffff888000500000'"), ==, 3);
	learner_free(l);
}


/* More distinct contended locks than max_locks, over several flushes: the
 * least recently contended are evicted, the new and the recent are kept,
 * and the database keeps every one. */
static void test_lock_eviction(void)
{
	struct learn_limits small = { .max_page_pairs = 4, .max_locks = 8 };
	struct learner *l = learner_new(&small, &fake);
	struct learn_stats st;
	const uint64_t base = 0xffff888000800000ULL;

	reset_db();
	/* 8 locks fill the table */
	for (uint64_t i = 0; i < 8; i++)
		ev_arg(l, LEARN_LOCK, 1, base + i * 64, 1);
	CHECK_INT(flush(l), ==, 0);
	/* lock 0 contended again: now the most recent */
	ev_arg(l, LEARN_LOCK, 1, base, 1);
	CHECK_INT(flush(l), ==, 0);
	/* 20 new ones, one flush each: each evicts the oldest flushed lock */
	for (uint64_t i = 8; i < 28; i++) {
		ev_arg(l, LEARN_LOCK, 1, base + i * 64, 1);
		CHECK_INT(flush(l), ==, 0);
	}
	learner_get_stats(l, &st);
	CHECK_INT(st.locks, ==, 28);
	CHECK_INT(st.locks_evicted, ==, 20);
	CHECK_INT(st.locks_dropped, ==, 0);
	CHECK_INT(q("SELECT count(*) FROM lock_objects"), ==, 28);
	/* in memory: the 8 newest; contending one of them adds to its row
	 * without a new entry, an evicted one comes back and evicts another */
	ev_arg(l, LEARN_LOCK, 1, base + 27 * 64, 1);
	CHECK_INT(flush(l), ==, 0);
	learner_get_stats(l, &st);
	CHECK_INT(st.locks, ==, 28);
	CHECK_INT(st.locks_evicted, ==, 20);
	CHECK_INT(q("SELECT contentions FROM lock_objects WHERE printf('%x', addr) = 'ffff888000800000'"), ==, 2);
	ev_arg(l, LEARN_LOCK, 1, base, 1);	/* lock 0: evicted by now */
	CHECK_INT(flush(l), ==, 0);
	learner_get_stats(l, &st);
	CHECK_INT(st.locks, ==, 29);
	CHECK_INT(st.locks_evicted, ==, 21);
	CHECK_INT(q("SELECT contentions FROM lock_objects WHERE printf('%x', addr) = 'ffff888000800000'"), ==, 3);
	CHECK_INT(q("SELECT count(*) FROM lock_objects"), ==, 28);
	/* 9 new ones in one flush: 8 fit by evicting flushed ones, the ninth
	 * finds only locks whose contentions are not written yet: dropped */
	for (uint64_t i = 100; i < 109; i++)
		ev_arg(l, LEARN_LOCK, 1, base + i * 64, 1);
	CHECK_INT(flush(l), ==, 0);
	learner_get_stats(l, &st);
	CHECK_INT(st.locks_evicted, ==, 29);
	CHECK_INT(st.locks_dropped, ==, 1);
	CHECK_INT(q("SELECT count(*) FROM lock_objects"), ==, 36);
	learner_free(l);
}

/* The comm refresh reads /proc only for the mms seen since the last one. */
static int comm_reads;

static int counting_comm(void *ctx, int32_t tgid, char *buf)
{
	comm_reads++;
	snprintf(buf, 16, "renamed-%d", tgid);
	return 0;
}

static int counting_tgid(void *ctx, int32_t tid, int32_t *ret, bool *kthread)
{
	*ret = tid;
	*kthread = false;
	return 0;
}

static void test_comm_refresh(void)
{
	static const struct learn_proc counting = { counting_tgid, counting_comm, NULL };
	struct learner *l = learner_new(&lim, &counting);

	reset_db();
	/* 50 processes older than us: each binding reads its comm once */
	for (int32_t i = 0; i < 50; i++)
		ev_arg(l, LEARN_MMAP_LOCK, 1000 + i, MM_PARENT + (uint64_t)i * 0x1000, 1);
	CHECK_INT(comm_reads, ==, 50);
	learner_refresh_comms(l);
	CHECK_INT(comm_reads, ==, 100);		/* the 50 seen this interval */
	CHECK_INT(flush(l), ==, 0);

	/* a quiet interval: nothing seen, nothing read */
	comm_reads = 0;
	learner_refresh_comms(l);
	CHECK_INT(comm_reads, ==, 0);

	/* 3 of them active (twice each): 3 reads, and a new name is written */
	for (int i = 0; i < 6; i++)
		ev_arg(l, LEARN_MMAP_LOCK, 1000 + i % 3, MM_PARENT + (uint64_t)(i % 3) * 0x1000, 1);
	CHECK_INT(comm_reads, ==, 0);		/* bound already: no read */
	learner_refresh_comms(l);
	CHECK_INT(comm_reads, ==, 3);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE comm LIKE 'renamed-%'"), ==, 50);
	learner_free(l);
}

/* A flush whose transaction fails is written again, exactly once. */
static void test_abort_retry(void)
{
	struct learner *l = learner_new(&lim, &fake);

	reset_db();
	ev(l, LEARN_MM_ALLOC, 100, MM_CHILD, 0, NULL);
	ev(l, LEARN_FORK, 100, 0, 200, "c");
	ev(l, LEARN_MM_FREE, 0, MM_CHILD, 0, NULL);
	ev_arg(l, LEARN_LOCK, 1, 0xffff888000500000ULL, 1);
	ev_arg(l, LEARN_PAGE, 1, 0xffffea0000000040ULL, 1);

	CHECK_INT(db_begin(db), ==, 0);
	CHECK_INT(learner_flush(l, db, 1), ==, 0);
	db_rollback(db);
	learner_abort(l);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 0);

	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 200 AND free_ns IS NOT NULL"), ==, 1);
	CHECK_INT(q("SELECT contentions FROM lock_objects"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM page_pairs"), ==, 1);

	/* Nothing left to write: a second flush changes nothing. */
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT contentions FROM lock_objects"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 1);
	learner_free(l);
}

/* A database unwritable for long: memory stays bounded, losses counted. */
static void test_unwritten_cap(void)
{
	struct learn_limits small = { .max_page_pairs = 4, .max_locks = 2, .max_unwritten = 100 };
	struct learner *l = learner_new(&small, &fake);
	struct learn_stats st;

	reset_db();
	for (int i = 0; i < 250; i++) {
		ev(l, LEARN_MM_ALLOC, 100, MM_CHILD + (uint64_t)i * 4096, 0, NULL);
		ev(l, LEARN_FORK, 100, 0, 1000 + i, "child");
		if (i < 240)
			ev(l, LEARN_MM_FREE, 0, MM_CHILD + (uint64_t)i * 4096, 0, NULL);
	}
	learner_abort(l);	/* the flush's transaction failed */
	learner_get_stats(l, &st);
	CHECK_INT(st.mm_dropped, ==, 150);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects"), ==, 100);
	/* The live ones are never given up, and the newest dead ones stay. */
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE free_ns IS NULL"), ==, 10);
	CHECK_INT(q("SELECT min(tgid) FROM mm_objects"), ==, 1150);
	learner_free(l);
}

/* sched_switch windows: what is a switch to a user task, what stays in one mm. */
/*
 * Windowed recording's snapshot: every live mm as a window opens. Old
 * processes are learned with their owner from it; an mm it no longer
 * lists died unwatched and is closed at the snapshot; an address now
 * listed under another process ends the old object; an mm still being
 * set up by its allocator is not declared dead; an aborted snapshot
 * closes nothing.
 */
static void snap(struct learner *l, int32_t tgid, uint64_t mm, const char *comm)
{
	ev(l, LEARN_MM_SNAPSHOT, tgid, mm, 0, comm);
}

static void test_snapshot(void)
{
	struct learner *l = learner_new(&lim, &fake);
	int64_t t_end;

	reset_db();
	learner_snapshot_begin(l);
	snap(l, 300, MM_OLD, "oldproc");
	snap(l, 100, MM_PARENT, "parent");
	snap(l, 500, MM_EXEC, "gone-soon");
	learner_snapshot_end(l, ts++);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE learned_from = 'task_iter' AND free_ns IS NULL"), ==, 3);
	CHECK_INT(q("SELECT tgid FROM mm_objects WHERE comm = 'oldproc'"), ==, 300);

	/* Between the windows: 500 exits and 100 forks a child whose mm
	 * allocation is seen in the window, not yet bound. */
	ev(l, LEARN_MM_ALLOC, 100, MM_CHILD, 0, NULL);
	/* Next window: 500 is gone; 300's address now belongs to 600. */
	learner_snapshot_begin(l);
	snap(l, 100, MM_PARENT, "parent");
	snap(l, 600, MM_OLD, "newcomer");
	t_end = ts++;
	learner_snapshot_end(l, t_end);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 500 AND free_ns IS NOT NULL"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 300 AND free_ns IS NOT NULL"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 600 AND free_ns IS NULL"
		    " AND learned_from = 'task_iter'"), ==, 1);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 100 AND free_ns IS NULL"), ==, 1);
	/* the child's mm, pending in its allocator, is still alive */
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE printf('%x', addr) = 'ffff888000100000'"
		    " AND free_ns IS NULL"), ==, 1);

	/* An aborted snapshot (the read failed half-way) frees nothing. */
	learner_snapshot_begin(l);
	snap(l, 600, MM_OLD, "newcomer");
	learner_snapshot_abort(l);
	CHECK_INT(flush(l), ==, 0);
	CHECK_INT(q("SELECT count(*) FROM mm_objects WHERE tgid = 100 AND free_ns IS NULL"), ==, 1);
	learner_free(l);
}

static void test_switches(void)
{
	struct learner *l = learner_new(&lim, &fake);
	struct switch_stats sw;

	ev(l, LEARN_SWITCH, 100, 0, 101, NULL);	/* threads of one process: same mm */
	ev(l, LEARN_SWITCH, 101, 0, 100, NULL);	/* and back */
	ev(l, LEARN_SWITCH, 100, 0, 300, NULL);	/* another process */
	ev(l, LEARN_SWITCH, 300, 0, 0, NULL);	/* to idle */
	ev(l, LEARN_SWITCH, 0, 0, 40, NULL);	/* to a kernel thread */
	ev(l, LEARN_SWITCH, 40, 0, 300, NULL);	/* from it: a user task, not same mm */
	ev(l, LEARN_SWITCH, 100, 0, 999, NULL);	/* to a task gone before we looked */
	learner_take_switch_stats(l, &sw);
	CHECK_INT(sw.sampled, ==, 7);
	CHECK_INT(sw.to_user, ==, 4);
	CHECK_INT(sw.same_mm, ==, 2);
	learner_take_switch_stats(l, &sw);
	CHECK_INT(sw.sampled, ==, 0);
	learner_free(l);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	snprintf(path, sizeof(path), "/tmp/mmhitm-test-learn-%d.db", getpid());
	unlink(path);
	if (db_open(path, 0, &db) < 0)
		return 1;
	db_exec(db, "INSERT INTO hosts(machine_id, hostname) VALUES ('m', 'h');"
		    "INSERT INTO boots(boot_id, host_id, boot_uuid, first_seen_ns, last_seen_ns,"
		    " kernel_release, kernel_version, arch, nr_cpus_online, cache_line_size, page_size,"
		    " pmu_kind, lru_gen) VALUES (1, 1, 'b', 0, 0, 'r', 'v', 'x86_64', 2, 64, 4096, 'none', 'absent')");
	RUN(test_fork);
	RUN(test_exec);
	RUN(test_old_objects);
	RUN(test_lost_free);
	RUN(test_pages_and_locks);
	RUN(test_lock_eviction);
	RUN(test_comm_refresh);
	RUN(test_abort_retry);
	RUN(test_unwritten_cap);
	RUN(test_switches);
	RUN(test_snapshot);
	db_close(db);
	unlink(path);
	return test_exit();
}
