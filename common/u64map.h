/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_U64MAP_H
#define MMHITM_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * An open-addressing hash map from 64-bit keys (kernel addresses, pfns,
 * pids) to pointers. The map owns neither keys nor values.
 */
struct u64map;

struct u64map *u64map_new(void);
void u64map_free(struct u64map *m);
size_t u64map_count(const struct u64map *m);

void *u64map_get(const struct u64map *m, uint64_t key);
/* Inserts or replaces. Returns 0 or -ENOMEM. */
int u64map_put(struct u64map *m, uint64_t key, void *value);
/* Removes key; returns its value or NULL. */
void *u64map_remove(struct u64map *m, uint64_t key);

/* Iteration: size_t it = 0; while (u64map_next(m, &it, &k, &v)) ...
 * The map must not change during iteration. */
bool u64map_next(const struct u64map *m, size_t *it, uint64_t *ret_key, void **ret_value);

#endif
