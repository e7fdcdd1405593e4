// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

enum { SLOT_EMPTY, SLOT_USED, SLOT_DELETED };

struct slot {
	uint64_t key;
	void *value;
	uint8_t state;
};

struct u64map {
	struct slot *slots;
	size_t cap;		/* a power of two */
	size_t used;		/* live entries */
	size_t filled;		/* live + deleted: what probing sees */
};

static size_t hash(uint64_t k)
{
	/* splitmix64's finalizer: addresses differ only in a few bits. */
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return (size_t)k;
}

struct u64map *u64map_new(void)
{
	struct u64map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cap = 64;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void u64map_free(struct u64map *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

size_t u64map_count(const struct u64map *m)
{
	return m->used;
}

static struct slot *find(const struct u64map *m, uint64_t key)
{
	for (size_t i = hash(key) & (m->cap - 1), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
		struct slot *s = &m->slots[i];

		if (s->state == SLOT_EMPTY)
			return NULL;
		if (s->state == SLOT_USED && s->key == key)
			return s;
	}
	return NULL;
}

void *u64map_get(const struct u64map *m, uint64_t key)
{
	struct slot *s = find(m, key);

	return s ? s->value : NULL;
}

static int rehash(struct u64map *m, size_t cap)
{
	struct slot *old = m->slots;
	size_t oldcap = m->cap;

	m->slots = calloc(cap, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->cap = cap;
	m->used = m->filled = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].state == SLOT_USED)
			u64map_put(m, old[i].key, old[i].value);	/* cannot fail: room */
	free(old);
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, void *value)
{
	struct slot *s = find(m, key), *tomb = NULL;

	if (s) {
		s->value = value;
		return 0;
	}
	/* Keep probes short: at most 3/4 full, counting tombstones. */
	if ((m->filled + 1) * 4 > m->cap * 3) {
		int r = rehash(m, m->used * 2 >= m->cap / 2 ? m->cap * 2 : m->cap);

		if (r < 0)
			return r;
	}
	for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		s = &m->slots[i];
		if (s->state == SLOT_DELETED && !tomb)
			tomb = s;
		if (s->state == SLOT_EMPTY)
			break;
	}
	if (tomb)
		s = tomb;
	else
		m->filled++;
	s->key = key;
	s->value = value;
	s->state = SLOT_USED;
	m->used++;
	return 0;
}

void *u64map_remove(struct u64map *m, uint64_t key)
{
	struct slot *s = find(m, key);
	void *v;

	if (!s)
		return NULL;
	v = s->value;
	s->state = SLOT_DELETED;
	s->value = NULL;
	m->used--;
	return v;
}

bool u64map_next(const struct u64map *m, size_t *it, uint64_t *ret_key, void **ret_value)
{
	for (; *it < m->cap; (*it)++) {
		const struct slot *s = &m->slots[*it];

		if (s->state == SLOT_USED) {
			if (ret_key)
				*ret_key = s->key;
			if (ret_value)
				*ret_value = s->value;
			(*it)++;
			return true;
		}
	}
	return false;
}
