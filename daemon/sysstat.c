// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "lru-gen.h"
#include "paths.h"
#include "sysstat.h"
#include "util.h"

#define DEBUGFS_MAGIC_NR 0x64626720

int vmstat_parse(const char *text, struct kv_list *ret)
{
	const char *p = text;

	ret->n = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[128];
		long long v;
		struct kv *kv;

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
			kv = NULL;
			if (grow_array((void **)&ret->v, &ret->alloc, sizeof(*ret->v), ret->n + 1) < 0)
				return -ENOMEM;
			kv = &ret->v[ret->n];
			if (sscanf(line, "%63s %lld", kv->name, &v) == 2) {
				kv->value = v;
				ret->n++;
			}
		}
		p += len + (nl ? 1 : 0);
	}
	return ret->n ? 0 : -EBADMSG;
}

int procstat_parse(const char *text, uint64_t *ret_ctxt, uint64_t *ret_forks)
{
	return proc_line_parse(text, "ctxt", ret_ctxt) ?: proc_line_parse(text, "processes", ret_forks);
}

/*
 * "cpu  user nice system idle iowait irq softirq steal guest guest_nice":
 * guest time is inside user (and guest_nice inside nice), so it is not
 * added again; steal is time the host took, busy from our side.
 */
int procstat_cpu_parse(const char *text, uint64_t *ret_busy, uint64_t *ret_total)
{
	uint64_t v[8] = {};
	const char *p = text;
	char *end;
	int n = 0;

	if (strncmp(p, "cpu ", 4) != 0)
		return -EBADMSG;
	p += 4;
	for (; n < 8; n++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v[n] = strtoull(p, &end, 10);
		p = end;
	}
	if (n < 4)	/* user nice system idle: every kernel has them */
		return -EBADMSG;
	*ret_total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*ret_busy = *ret_total - v[3] - v[4];
	return 0;
}

const char *free_counter_name(enum free_counter i)
{
	static const char *const names[NR_FREE_COUNTERS] = {
		[FREE_TLB_SHOOTDOWNS] = "free:tlb_shootdowns",
		[FREE_SCHED_YIELD] = "free:sched_yield",
		[FREE_SCHEDULE] = "free:schedule",
		[FREE_TTWU] = "free:ttwu",
		[FREE_LRU_LOCK_CONTENTIONS] = "free:lru_lock_contentions",
	};

	return i < NR_FREE_COUNTERS ? names[i] : NULL;
}

int proc_line_parse(const char *text, const char *name, uint64_t *ret)
{
	size_t len = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ' ') {
			p += len;
			while (*p == ' ')
				p++;
			if (*p < '0' || *p > '9')
				return -EBADMSG;
			*ret = strtoull(p, NULL, 10);
			return 0;
		}
	return -EBADMSG;
}

/* "  TLB:  16173  14663   TLB shootdowns": right-aligned, one column per CPU. */
int interrupts_row_parse(const char *text, const char *row, uint64_t *ret_sum)
{
	size_t len = strlen(row);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		uint64_t sum = 0;
		char *end;

		while (*p == ' ')
			p++;
		if (strncmp(p, row, len) != 0 || p[len] != ':')
			continue;
		for (p += len + 1;; p = end) {
			while (*p == ' ' || *p == '\t')
				p++;
			if (*p < '0' || *p > '9')
				break;
			sum += strtoull(p, &end, 10);
		}
		*ret_sum = sum;
		return 0;
	}
	return -EBADMSG;
}

int interrupts_tlb_parse(const char *text, struct sys_snapshot *snap)
{
	int r = interrupts_row_parse(text, "TLB", &snap->free[FREE_TLB_SHOOTDOWNS]);

	if (r == 0)
		snap->free_present |= 1u << FREE_TLB_SHOOTDOWNS;
	return r;
}

/*
 * "cpuN yld_count legacy sched_count sched_goidle ttwu_count ..." per
 * CPU (Documentation/scheduler/sched-stats.rst, versions 15 to 17).
 */
int schedstat_parse(const char *text, struct sys_snapshot *snap)
{
	uint64_t yld = 0, sched = 0, ttwu = 0;
	bool any = false;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long f[5];
		int cpu;

		if (strncmp(p, "cpu", 3) != 0)
			continue;
		if (sscanf(p, "cpu%d %llu %llu %llu %llu %llu", &cpu, &f[0], &f[1], &f[2], &f[3],
			   &f[4]) != 6)
			continue;
		yld += f[0];
		sched += f[2];
		ttwu += f[4];
		any = true;
	}
	if (!any)
		return -EBADMSG;
	snap->free[FREE_SCHED_YIELD] = yld;
	snap->free[FREE_SCHEDULE] = sched;
	snap->free[FREE_TTWU] = ttwu;
	snap->free_present |= 1u << FREE_SCHED_YIELD | 1u << FREE_SCHEDULE | 1u << FREE_TTWU;
	return 0;
}

/*
 * "  &lruvec->lru_lock:  con-bounces contentions waittime-min ...": the
 * contentions of every lock class named after lru_lock.
 */
int lock_stat_parse(const char *text, struct sys_snapshot *snap)
{
	uint64_t sum = 0;
	bool any = false;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *nl = strchr(p, '\n'), *name = strstr(p, "lru_lock"), *colon;
		unsigned long long bounces, contentions;

		if (!name || (nl && name > nl))
			continue;
		/* "lru_lock:" or a subclass, "lru_lock#2:"; not the call sites */
		colon = name + 8;
		if (*colon == '#')
			while (*++colon >= '0' && *colon <= '9')
				;
		if (*colon != ':')
			continue;
		if (sscanf(colon + 1, "%llu %llu", &bounces, &contentions) != 2)
			continue;
		sum += contentions;
		any = true;
	}
	if (!any)
		return -EBADMSG;
	snap->free[FREE_LRU_LOCK_CONTENTIONS] = sum;
	snap->free_present |= 1u << FREE_LRU_LOCK_CONTENTIONS;
	return 0;
}

/* A free counter's file: absent is fine (the kernel lacks it). */
static void read_free(const char *path, int (*parse)(const char *, struct sys_snapshot *),
		      struct sys_snapshot *snap)
{
	char *buf = NULL;

	if (read_file(path, &buf) >= 0)
		(void)parse(buf, snap);
	free(buf);
}

/*
 * The flat (memcg, node) view of common/lru-gen.c's parse of
 * /sys/kernel/debug/lru_gen: one parser for the file, shared with
 * mmhitm-load's aging.
 */
int lru_gen_parse(const char *text, struct sys_snapshot *snap)
{
	struct lru_gen_state *st = NULL;
	int r;

	snap->n_lru_gen = 0;
	r = lru_gen_state_parse(text, &st);
	if (r < 0)
		return r == -ENOMEM ? r : -EBADMSG;
	for (size_t m = 0; m < st->nr_memcgs; m++) {
		const struct lru_gen_memcg *mc = &st->memcgs[m];

		/* A dying (offline) memcg has lost its id and lists as id 0
		 * under its old path, as many as there are of them (every
		 * finished systemd oneshot). Nothing can age it by id, and
		 * they would collide: leave them out. Id 0 with no path is
		 * the one lruvec of a kernel without memcg: keep that. */
		if (mc->id == 0 && mc->path && *mc->path)
			continue;

		for (size_t n = 0; n < mc->nr_nodes; n++) {
			struct lru_gen_entry *e;

			if (grow_array((void **)&snap->lru_gen, &snap->alloc_lru_gen,
				       sizeof(*snap->lru_gen), snap->n_lru_gen + 1) < 0) {
				lru_gen_state_free(st);
				return -ENOMEM;
			}
			e = &snap->lru_gen[snap->n_lru_gen++];
			memset(e, 0, sizeof(*e));
			e->memcg_id = mc->id;
			e->node = mc->nodes[n].nid;
			snprintf(e->memcg_path, sizeof(e->memcg_path), "%s", mc->path ?: "");
			e->min_seq = mc->nodes[n].min_seq;
			e->max_seq = mc->nodes[n].max_seq;
		}
	}
	lru_gen_state_free(st);
	return 0;
}

static int ensure_debugfs(void)
{
	struct statfs sfs;

	if (statfs("/sys/kernel/debug", &sfs) == 0 && sfs.f_type == DEBUGFS_MAGIC_NR)
		return 0;
	if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) < 0)
		return -errno;
	log_info("Mounted debugfs on /sys/kernel/debug for %s", LRU_GEN_DEBUGFS);
	return 0;
}

int sys_snapshot_free_value(const struct sys_snapshot *snap, const struct path_free *f, uint64_t *ret)
{
	switch (f->file) {
	case PATH_FREE_STAT:
		if (!snap->cpu_total)
			return -ENOENT;	/* /proc/stat not read */
		if (strcmp(f->field, "ctxt") == 0)
			*ret = snap->ctxt;
		else if (strcmp(f->field, "processes") == 0)
			*ret = snap->forks;
		else
			return -ENOENT;
		return 0;
	case PATH_FREE_VMSTAT:
		for (size_t i = 0; i < snap->vmstat.n; i++)
			if (strcmp(snap->vmstat.v[i].name, f->field) == 0) {
				*ret = (uint64_t)snap->vmstat.v[i].value;
				return 0;
			}
		return -ENOENT;
	case PATH_FREE_INTERRUPTS:
		if (strcmp(f->field, "TLB") != 0 || !(snap->free_present & (1u << FREE_TLB_SHOOTDOWNS)))
			return -ENOENT;
		*ret = snap->free[FREE_TLB_SHOOTDOWNS];
		return 0;
	default:
		return -ENOENT;
	}
}

int sys_snapshot_take(struct sys_snapshot *snap, int with_lru_gen)
{
	char *buf = NULL;
	ssize_t n;
	int r;

	n = read_file("/proc/vmstat", &buf);
	if (n < 0)
		return log_error_errno(n, "Failed to read /proc/vmstat: %m");
	r = vmstat_parse(buf, &snap->vmstat);
	free(buf);
	if (r < 0)
		return log_error_errno(r, "Failed to parse /proc/vmstat: %m");

	n = read_file("/proc/stat", &buf);
	if (n < 0)
		return log_error_errno(n, "Failed to read /proc/stat: %m");
	r = procstat_parse(buf, &snap->ctxt, &snap->forks);
	if (r == 0 && procstat_cpu_parse(buf, &snap->cpu_busy, &snap->cpu_total) < 0)
		snap->cpu_busy = snap->cpu_total = 0;
	free(buf);
	if (r < 0)
		return log_error_errno(r, "Failed to parse /proc/stat: %m");

	snap->free_present = 0;
	read_free("/proc/interrupts", interrupts_tlb_parse, snap);
	read_free("/proc/schedstat", schedstat_parse, snap);
	read_free("/proc/lock_stat", lock_stat_parse, snap);

	snap->n_lru_gen = 0;
	snap->lru_gen_read = -ENOENT;
	if (with_lru_gen) {
		r = ensure_debugfs();
		if (r == 0) {
			n = read_file(LRU_GEN_DEBUGFS, &buf);
			r = n < 0 ? (int)n : lru_gen_parse(buf, snap);
			if (n >= 0)
				free(buf);
		}
		snap->lru_gen_read = r;
	}
	return 0;
}

void sys_snapshot_done(struct sys_snapshot *snap)
{
	free(snap->vmstat.v);
	free(snap->lru_gen);
	memset(snap, 0, sizeof(*snap));
}

const struct kv *kv_list_match(const struct kv_list *prev, size_t hint, const char *name)
{
	if (hint < prev->n && strcmp(prev->v[hint].name, name) == 0)
		return &prev->v[hint];
	for (size_t i = 0; i < prev->n; i++)
		if (strcmp(prev->v[i].name, name) == 0)
			return &prev->v[i];
	return NULL;
}
