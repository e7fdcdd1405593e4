// SPDX-License-Identifier: GPL-2.0
/* Symbolization of IPs against a boot's stored ksyms. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "symtab.h"
#include "util.h"

/* How far past a size-less symbol an IP may be and still be in it. */
#define SIZELESS_SPAN	(64 * 1024)	/* bytes */

struct symtab {
	struct ksym *v;
	size_t n, alloc;
	bool sorted;
};

struct symtab *symtab_new(void)
{
	return calloc(1, sizeof(struct symtab));
}

void symtab_free(struct symtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free((char *)(uintptr_t)t->v[i].name);
		free((char *)(uintptr_t)t->v[i].module);
	}
	free(t->v);
	free(t);
}

size_t symtab_count(const struct symtab *t)
{
	return t->n;
}

int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name,
	       const char *module)
{
	struct ksym *k;

	if (grow_array((void **)&t->v, &t->alloc, sizeof(*t->v), t->n + 1) < 0)
		return -ENOMEM;
	k = &t->v[t->n];
	*k = (struct ksym){ .addr = addr, .size = size, .name = strdup(name),
			    .module = module ? strdup(module) : NULL };
	if (!k->name || (module && !k->module)) {
		free((char *)(uintptr_t)k->name);
		free((char *)(uintptr_t)k->module);
		return -ENOMEM;
	}
	t->n++;
	t->sorted = false;
	return 0;
}

int symtab_load(struct symtab *t, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, "SELECT addr, coalesce(size, 0), name, module FROM ksyms"
				" WHERE boot_id = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = symtab_add(t, (uint64_t)sqlite3_column_int64(st, 0),
			       (uint64_t)sqlite3_column_int64(st, 1),
			       (const char *)sqlite3_column_text(st, 2),
			       (const char *)sqlite3_column_text(st, 3));
		if (r < 0)
			return log_oom();
	}
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* a sized symbol first: it is the better answer for its address */
	return (x->size == 0) - (y->size == 0);
}

static void symtab_sort(struct symtab *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_addr);
	t->sorted = true;
}

const struct ksym *symtab_lookup(const struct symtab *tc, uint64_t ip)
{
	struct symtab *t = (struct symtab *)(uintptr_t)tc;	/* sorting is a cache */
	size_t lo = 0, hi;

	if (!t->sorted)
		symtab_sort(t);
	hi = t->n;
	/* the last symbol with addr <= ip */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Symbols can nest (aliases, a sized symbol before a stray label):
	 * walk back to the closest one that contains ip. */
	for (size_t i = lo; i-- > 0;) {
		const struct ksym *k = &t->v[i];

		if (k->size) {
			if (ip - k->addr < k->size)
				return k;
		} else if (ip - k->addr < SIZELESS_SPAN && (i + 1 == t->n || ip < t->v[i + 1].addr ||
							    t->v[i + 1].addr == k->addr)) {
			return k;
		}
		if (ip - k->addr >= (1u << 24))
			break;	/* nothing that large */
	}
	return NULL;
}

void symtab_format(const struct symtab *t, uint64_t ip, char *buf, size_t size)
{
	const struct ksym *k = symtab_lookup(t, ip);

	if (!k)
		snprintf(buf, size, "0x%016" PRIx64, ip);
	else if (k->module)
		snprintf(buf, size, "%s+0x%" PRIx64 " [%s]", k->name, ip - k->addr, k->module);
	else
		snprintf(buf, size, "%s+0x%" PRIx64, k->name, ip - k->addr);
}
