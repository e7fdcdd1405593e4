/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_LRU_GEN_H
#define MMHITM_LRU_GEN_H

#include <stddef.h>
#include <stdint.h>

#define LRU_GEN_SYSFS_ENABLED	"/sys/kernel/mm/lru_gen/enabled"
#define LRU_GEN_DEBUGFS		"/sys/kernel/debug/lru_gen"

/* Bits of LRU_GEN_SYSFS_ENABLED (enum lru_gen_caps in mmzone.h). */
#define LRU_GEN_CAP_CORE	0x0001
#define LRU_GEN_CAP_MM_WALK	0x0002	/* aging walks page tables */
#define LRU_GEN_CAP_NONLEAF_YOUNG 0x0004

struct lru_gen_node {
	int nid;
	uint64_t min_seq;	/* of anon: the first generation printed */
	uint64_t max_seq;
	unsigned int nr_gens;
	uint64_t anon_pages;
	uint64_t file_pages;
};

struct lru_gen_memcg {
	unsigned int id;	/* mem_cgroup_id(), what "+ memcg_id ..." wants */
	char *path;		/* cgroup path; "" when memcg is disabled */
	struct lru_gen_node *nodes;
	size_t nr_nodes;
};

struct lru_gen_state {
	struct lru_gen_memcg *memcgs;
	size_t nr_memcgs;
};

/* Parses lru_gen (not lru_gen_full). Caller frees with lru_gen_state_free(). */
int lru_gen_state_parse(const char *text, struct lru_gen_state **ret);
void lru_gen_state_free(struct lru_gen_state *st);

const struct lru_gen_memcg *lru_gen_state_find_id(const struct lru_gen_state *st,
						  unsigned int id);
/* The memcg a task in cgroup path is charged to: the path or its nearest listed ancestor. */
const struct lru_gen_memcg *lru_gen_state_find_path(const struct lru_gen_state *st,
						    const char *path);

/*
 * The memory cgroup path from /proc/<pid>/cgroup text: the v1 line with the
 * memory controller, else the v2 "0::" line, else "/" (no hierarchy has
 * it mounted: the root memcg). Caller frees *ret_path.
 */
int cgroup_memory_path(const char *proc_self_cgroup, char **ret_path);

/* Formats one aging command (newline-terminated) into buf: its length or -ENOBUFS. */
int lru_gen_aging_command(char *buf, size_t size, unsigned int memcg_id, int nid,
			  uint64_t max_seq);

#endif
