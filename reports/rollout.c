// SPDX-License-Identifier: GPL-2.0
/* Kernel changes between consecutive boots of a host. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rollout.h"
#include "util.h"

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool kernel_same(const char *release_a, const char *version_a, const char *build_id_a,
		 const char *release_b, const char *version_b, const char *build_id_b)
{
	/* A rebuilt kernel keeps its release but not its build-id. */
	if (build_id_a && *build_id_a && build_id_b && *build_id_b)
		return strcasecmp(build_id_a, build_id_b) == 0;
	return str_eq(release_a, release_b) && str_eq(version_a, version_b);
}

enum patch_change patch_change_of(enum patch_state from, enum patch_state to)
{
	if (to == PATCH_CARRIES)
		return from == PATCH_CARRIES ? CHANGE_NONE : CHANGE_GAINED;
	if (from == PATCH_CARRIES)
		return CHANGE_LOST;
	if (from == PATCH_UNKNOWN || to == PATCH_UNKNOWN)
		return CHANGE_UNKNOWN;
	return CHANGE_NONE;
}

const char *patch_change_to_string(enum patch_change c)
{
	switch (c) {
	case CHANGE_GAINED: return "gained";
	case CHANGE_LOST: return "lost";
	case CHANGE_UNKNOWN: return "unknown";
	default: return "unchanged";
	}
}

ssize_t rollouts_detect(const struct boot_info *boots, size_t nr_boots,
			const struct kernel_info *kernels, struct rollout **ret)
{
	struct rollout *r = NULL;
	size_t n = 0, alloc = 0;

	*ret = NULL;
	for (size_t i = 1; i < nr_boots; i++) {
		const struct boot_info *a = &boots[i - 1], *b = &boots[i];
		struct rollout *ro;

		if (a->kernel == b->kernel)
			continue;
		if (grow_array((void **)&r, &alloc, sizeof(*r), n + 1) < 0) {
			free(r);
			return -ENOMEM;
		}
		ro = &r[n++];
		*ro = (struct rollout){
			.t_ns = b->start_ns,
			.from = a->kernel,
			.to = b->kernel,
			.boot_before = i - 1,
			.boot_after = i,
			/* Kernels are numbered by first use: a lower number ran earlier. */
			.rollback = b->kernel < a->kernel,
			.prev_ns = INT64_MIN,
			.next_ns = INT64_MAX,
		};
		for (int p = 0; p < paths_nr(); p++)
			ro->change[p] = patch_change_of(kernels[a->kernel].patches[p].state,
							kernels[b->kernel].patches[p].state);
	}
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			r[i].prev_ns = r[i - 1].t_ns;
		if (i + 1 < n)
			r[i].next_ns = r[i + 1].t_ns;
	}
	*ret = r;
	return (ssize_t)n;
}

void kernel_info_done(struct kernel_info *k)
{
	if (!k)
		return;
	free(k->release);
	free(k->version);
	free(k->build_id);
	for (size_t i = 0; i < k->nr_markers; i++)
		free(k->markers[i]);
	free(k->markers);
	memset(k, 0, sizeof(*k));
}

void boot_info_done(struct boot_info *b)
{
	if (!b)
		return;
	free(b->pmu_kind);
	free(b->pmu_detail);
	free(b->lru_gen);
	memset(b, 0, sizeof(*b));
}
