// SPDX-License-Identifier: GPL-2.0
/* The patch map parser takes a file an operator (or anyone) wrote. */
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "patchmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const syms[] = { "maybe_lru_add_drain", "x" };
	struct kernel_desc k = { "6.12.0-mmfix", "#1 SMP", "0123456789abcdef", syms, 2 };
	struct patch_verdict v[MAX_PATHS];
	struct patch_map *m;

	log_set_max_level(LOG_CRIT);
	m = patch_map_new();
	if (!m)
		return 0;
	if (patch_map_parse(m, (const char *)data, size, "fuzz") == 0)
		patch_map_resolve(m, &k, v);
	patch_map_free(m);
	return 0;
}
