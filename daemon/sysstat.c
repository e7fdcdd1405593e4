// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "sysstat.h"
#include "util.h"

#define DEBUGFS_MAGIC_NR 0x64626720
#define LRU_GEN_DEBUGFS "/sys/kernel/debug/lru_gen"

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
	const char *c = strstr(text, "\nctxt "), *f = strstr(text, "\nprocesses ");

	if (!c || !f)
		return -EBADMSG;
	*ret_ctxt = strtoull(c + 6, NULL, 10);
	*ret_forks = strtoull(f + 11, NULL, 10);
	return 0;
}

/*
 *	memcg    %5hu %s          (one per memcg, at its first node)
 *	 node    %5d
 *	 %10lu %10u %10lu %10lu   (seq, age in ms, anon and file pages), min to max
 */
int lru_gen_parse(const char *text, struct sys_snapshot *snap)
{
	const char *p = text;
	struct lru_gen_entry *cur = NULL;
	uint64_t memcg_id = 0;
	char path[192] = "";
	bool have_memcg = false;

	snap->n_lru_gen = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];
		unsigned long long a;
		int node, n;

		if (len >= sizeof(line))
			return -EBADMSG;
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (nl ? 1 : 0);

		if (sscanf(line, "memcg %llu %n", &a, &n) == 1) {
			memcg_id = a;
			snprintf(path, sizeof(path), "%s", strstrip(line + n));
			have_memcg = true;
			cur = NULL;
		} else if (sscanf(line, " node %d", &node) == 1) {
			if (!have_memcg)
				return -EBADMSG;
			if (grow_array((void **)&snap->lru_gen, &snap->alloc_lru_gen,
				       sizeof(*snap->lru_gen), snap->n_lru_gen + 1) < 0)
				return -ENOMEM;
			cur = &snap->lru_gen[snap->n_lru_gen++];
			memset(cur, 0, sizeof(*cur));
			cur->memcg_id = memcg_id;
			cur->node = node;
			snprintf(cur->memcg_path, sizeof(cur->memcg_path), "%s", path);
			cur->min_seq = UINT64_MAX;
		} else if (sscanf(line, " %llu", &a) == 1) {
			if (!cur)
				return -EBADMSG;
			if (a < cur->min_seq)
				cur->min_seq = a;
			if (a > cur->max_seq)
				cur->max_seq = a;
		} else if (*strstrip(line)) {
			return -EBADMSG;
		}
	}
	/* A node with no generation lines has nothing to say. */
	for (size_t i = 0; i < snap->n_lru_gen; i++)
		if (snap->lru_gen[i].min_seq == UINT64_MAX)
			snap->lru_gen[i].min_seq = snap->lru_gen[i].max_seq = 0;
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
	free(buf);
	if (r < 0)
		return log_error_errno(r, "Failed to parse /proc/stat: %m");

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
