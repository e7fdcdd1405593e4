/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_SYSSTAT_H
#define MMHITMD_SYSSTAT_H

#include <stddef.h>
#include <stdint.h>

/* System-wide state read once per interval from /proc and debugfs. */

struct kv {
	char name[64];
	int64_t value;
};

struct kv_list {
	struct kv *v;
	size_t n, alloc;
};

/* One memcg × node of /sys/kernel/debug/lru_gen (mm/vmscan.c, lru_gen_seq_show). */
struct lru_gen_entry {
	uint64_t memcg_id;
	int node;
	char memcg_path[192];
	uint64_t min_seq;	/* oldest generation listed */
	uint64_t max_seq;	/* youngest: one more per aging pass */
};

/*
 * The counters the kernel keeps anyway, read between windows for free.
 * Each is absent (not zero) where the kernel lacks the file.
 */
enum free_counter {
	FREE_TLB_SHOOTDOWNS,	/* /proc/interrupts TLB: remote flushes received */
	FREE_SCHED_YIELD,	/* /proc/schedstat yld_count (CONFIG_SCHEDSTATS) */
	FREE_SCHEDULE,		/* /proc/schedstat sched_count */
	FREE_TTWU,		/* /proc/schedstat ttwu_count */
	FREE_LRU_LOCK_CONTENTIONS, /* /proc/lock_stat, lru_lock classes (CONFIG_LOCK_STAT) */
	NR_FREE_COUNTERS,
};
/* "free:tlb_shootdowns" ...: the names stored in event_names. */
const char *free_counter_name(enum free_counter i);

struct sys_snapshot {
	struct kv_list vmstat;
	uint64_t free[NR_FREE_COUNTERS];
	uint32_t free_present;	/* bit i: free[i] was read */
	uint64_t ctxt;		/* /proc/stat ctxt */
	uint64_t forks;		/* /proc/stat processes */
	uint64_t cpu_busy;	/* /proc/stat cpu: all but idle and iowait, USER_HZ */
	uint64_t cpu_total;	/* ... and all of it; 0: not read */
	struct lru_gen_entry *lru_gen;
	size_t n_lru_gen, alloc_lru_gen;
	int lru_gen_read;	/* 0 read, or -errno why not */
};

/* Parsers of the files' text, for tests and for sys_snapshot_take(). */
int vmstat_parse(const char *text, struct kv_list *ret);
int procstat_parse(const char *text, uint64_t *ret_ctxt, uint64_t *ret_forks);
/* The first line ("cpu ..."): the host's busy and total time. */
int procstat_cpu_parse(const char *text, uint64_t *ret_busy, uint64_t *ret_total);
int lru_gen_parse(const char *text, struct sys_snapshot *snap);
/*
 * A path's free counter (common/paths.h): the number after "NAME " at the
 * start of a line (/proc/stat, /proc/vmstat), or the /proc/interrupts row
 * "NAME:" summed over its CPU columns; -EBADMSG when there is none.
 */
int proc_line_parse(const char *text, const char *name, uint64_t *ret);
int interrupts_row_parse(const char *text, const char *row, uint64_t *ret_sum);
/* Each sets its counters and their free_present bits; -EBADMSG if none. */
int interrupts_tlb_parse(const char *text, struct sys_snapshot *snap);
int schedstat_parse(const char *text, struct sys_snapshot *snap);
int lock_stat_parse(const char *text, struct sys_snapshot *snap);

/*
 * A path's free counter (common/paths.h) as this snapshot read it, for
 * those path_free_read_every_interval() accepts; -ENOENT when it was not
 * read (a kernel without the line).
 */
struct path_free;
int sys_snapshot_free_value(const struct sys_snapshot *snap, const struct path_free *f, uint64_t *ret);

/* Reads everything; with_lru_gen mounts debugfs if it has to. */
int sys_snapshot_take(struct sys_snapshot *snap, int with_lru_gen);
void sys_snapshot_done(struct sys_snapshot *snap);

/* The same key in a previous snapshot; NULL if new. Uses the usual
 * same-order case first, so a full pass stays linear. */
const struct kv *kv_list_match(const struct kv_list *prev, size_t hint, const char *name);

#endif
