/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_ROLLOUT_H
#define MMHITM_ROLLOUT_H

/*
 * Rollouts from boot records: a host whose consecutive boots ran different
 * kernels moved from one to the other when the later boot began. Moving
 * back to a kernel the host ran before the one it leaves is a rollback.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "patchmap.h"

/* A kernel one host ran; hosts keep their own table, in order of first use. */
struct kernel_info {
	char *release;
	char *version;
	char *build_id;				/* NULL when unknown */
	char **markers;				/* patch_map marker symbols found */
	size_t nr_markers;
	struct patch_verdict patches[MAX_PATHS];	/* why strings owned by the map */
};

struct boot_info {
	int64_t boot_id;
	int64_t start_ns;		/* boot time, else first seen */
	int64_t first_seen_ns, last_seen_ns;
	size_t kernel;			/* index into the host's kernels */
	char *pmu_kind;			/* 'none' when there is no PMU */
	char *pmu_detail;
	char *lru_gen;
	int nr_cpus;
};

/* How a rollout changed one path's patch. */
enum patch_change {
	CHANGE_NONE,		/* same known state on both sides */
	CHANGE_GAINED,		/* to a kernel that carries it, from one that does not or may not */
	CHANGE_LOST,		/* from a kernel that carries it */
	CHANGE_UNKNOWN,		/* the map does not know one side, and the other does not carry it */
};

struct rollout {
	int64_t t_ns;			/* the first boot on the new kernel began */
	size_t from, to;		/* kernels */
	size_t boot_before, boot_after;	/* boots either side */
	bool rollback;
	int64_t prev_ns;		/* the host's previous kernel change, or INT64_MIN */
	int64_t next_ns;		/* its next kernel change, or INT64_MAX */
	enum patch_change change[MAX_PATHS];
};

/* Same kernel: equal build-ids when both are known, else equal release and version. */
bool kernel_same(const char *release_a, const char *version_a, const char *build_id_a,
		 const char *release_b, const char *version_b, const char *build_id_b);

enum patch_change patch_change_of(enum patch_state from, enum patch_state to);
const char *patch_change_to_string(enum patch_change c);

/*
 * The rollouts in boots (sorted by start_ns, kernels already assigned), in
 * time order. Caller frees *ret. Returns the count or -ENOMEM.
 */
ssize_t rollouts_detect(const struct boot_info *boots, size_t nr_boots,
			const struct kernel_info *kernels, struct rollout **ret);

void kernel_info_done(struct kernel_info *k);
void boot_info_done(struct boot_info *b);

#endif
