// SPDX-License-Identifier: GPL-2.0
/* Object resolution: data address -> (object, field) for one boot. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "log.h"
#include "objects.h"
#include "u64map.h"
#include "util.h"

struct mm_obj {
	int64_t id;
	uint64_t addr;
	int64_t alloc_ns, free_ns;	/* INT64_MIN / INT64_MAX when unknown */
	int64_t first_seen_ns;
};

struct anch_obj {
	int64_t id;
	char st[32];
	uint64_t addr, size;
	bool exact;		/* at a contended lock address the daemon learned */
};

struct lock_obj {
	int64_t id;
	uint64_t addr;
};

struct objects {
	struct layout *layouts;
	size_t n_layouts, alloc_layouts;
	struct vmemmap_cal cal;
	struct mm_obj *mm;
	size_t n_mm, alloc_mm;
	int64_t mm_max_id;
	bool mm_sorted;
	struct anch_obj *anch;
	size_t n_anch, alloc_anch;
	bool anch_sorted;
	struct lock_obj *locks;
	size_t n_locks, alloc_locks;
	bool locks_sorted;
	int64_t nr_cpus_possible;
	struct symtab *syms;
	int64_t boot_id;
	char boots[128];		/* "1 3" */
	int64_t boot_ids[16];
	size_t n_boot_ids;

	/* After objects_load(), mm_structs and locks are read from db only
	 * near the addresses asked about, not all of them: a boot's history
	 * holds hundreds of thousands, an interval's samples touch a few. */
	sqlite3 *db;
	sqlite3_stmt *mm_near, *lock_near;
	struct u64map *mm_ids, *lock_ids;	/* rows read: id -> 1 */
	struct u64map *mm_done, *lock_done;	/* addresses whose rows are read */
	int64_t lock_max_id;
	int err;				/* a failed read, sticky */
	bool have_mm;				/* any learned mm_struct in the object boots */
	char missing[400];			/* objects_missing() */
};

struct objects *objects_new(void)
{
	struct objects *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->syms = symtab_new();
	if (!o->syms) {
		free(o);
		return NULL;
	}
	snprintf(o->cal.text, sizeof(o->cal.text), "no (folio, pfn) pairs");
	return o;
}

static void layout_done(struct layout *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->f[i].name);
		free(l->f[i].type);
	}
	free(l->f);
	free(l->name);
}

void objects_free(struct objects *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->n_layouts; i++)
		layout_done(&o->layouts[i]);
	free(o->layouts);
	free(o->mm);
	free(o->anch);
	free(o->locks);
	symtab_free(o->syms);
	db_finalize(o->mm_near);
	db_finalize(o->lock_near);
	u64map_free(o->mm_ids);
	u64map_free(o->lock_ids);
	u64map_free(o->mm_done);
	u64map_free(o->lock_done);
	free(o);
}

const struct vmemmap_cal *objects_vmemmap(const struct objects *o) { return &o->cal; }
const struct symtab *objects_symtab(const struct objects *o) { return o->syms; }
const char *objects_boots(const struct objects *o) { return o->boots; }
void objects_set_vmemmap(struct objects *o, const struct vmemmap_cal *cal) { o->cal = *cal; }
void objects_set_cpus(struct objects *o, int64_t n) { o->nr_cpus_possible = n; }

void objects_loaded(const struct objects *o, size_t *ret_mm, size_t *ret_locks)
{
	*ret_mm = o->n_mm;
	*ret_locks = o->n_locks;
}

/* --- layouts --------------------------------------------------------------- */

const struct layout *objects_layout(const struct objects *o, const char *name)
{
	for (size_t i = 0; i < o->n_layouts; i++)
		if (strcmp(o->layouts[i].name, name) == 0)
			return &o->layouts[i];
	return NULL;
}

int objects_add_layout_field(struct objects *o, const char *st, const char *field,
			     uint32_t offset, uint32_t size, const char *type)
{
	struct layout *l = (struct layout *)(uintptr_t)objects_layout(o, st);
	struct layout_field *f;

	if (!l) {
		if (grow_array((void **)&o->layouts, &o->alloc_layouts, sizeof(*o->layouts),
			       o->n_layouts + 1) < 0)
			return -ENOMEM;
		l = &o->layouts[o->n_layouts];
		*l = (struct layout){ .name = strdup(st) };
		if (!l->name)
			return -ENOMEM;
		o->n_layouts++;
	}
	if (!*field) {
		l->size = size;
		return 0;
	}
	if (grow_array((void **)&l->f, &l->alloc, sizeof(*l->f), l->n + 1) < 0)
		return -ENOMEM;
	f = &l->f[l->n];
	*f = (struct layout_field){ .name = strdup(field), .offset = offset, .size = size,
				    .type = strdup(type ? type : "") };
	if (!f->name || !f->type) {
		free(f->name);
		free(f->type);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

const struct layout_field *layout_find(const struct layout *l, const char *field)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (strcmp(l->f[i].name, field) == 0)
			return &l->f[i];
	return NULL;
}

/* Whether f is a direct member of parent ("" for top level). */
static bool is_child(const char *name, const char *parent)
{
	size_t pl = strlen(parent);

	if (pl == 0)
		return !strchr(name, '.');
	return strncmp(name, parent, pl) == 0 && name[pl] == '.' && !strchr(name + pl + 1, '.');
}

/* Better of two members containing the same offset: the wider (the whole
 * member rather than one alias inside a union), then a name without a
 * leading underscore (padding and fillers), then the alphabetically first,
 * so the choice never depends on row order. */
static bool better(const struct layout_field *a, const struct layout_field *b)
{
	if (!b)
		return true;
	if (a->size != b->size)
		return a->size > b->size;
	if ((a->name[0] == '_') != (b->name[0] == '_'))
		return b->name[0] == '_';
	return strcmp(a->name, b->name) < 0;
}

/* "struct list_head[5]" -> 5; 0 when not an array (or a flexible one). */
static uint32_t array_len(const char *type)
{
	const char *b = type ? strrchr(type, '[') : NULL;
	uint64_t n;
	char buf[16];
	size_t len;

	if (!b)
		return 0;
	len = strcspn(b + 1, "]");
	if (len == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, b + 1, len);
	buf[len] = '\0';
	if (parse_u64(buf, &n) < 0 || n == 0 || n > UINT32_MAX)
		return 0;
	return (uint32_t)n;
}

bool layout_field_at(const struct layout *l, uint32_t off, char *name, size_t size,
		     uint32_t *ret_field_offset)
{
	const struct layout_field *cur = NULL;
	const char *parent = "";
	uint32_t n;

	for (;;) {
		const struct layout_field *best = NULL;

		for (size_t i = 0; i < l->n; i++) {
			const struct layout_field *f = &l->f[i];

			if (f->size == 0 || off < f->offset || off - f->offset >= f->size)
				continue;
			if (!is_child(f->name, parent))
				continue;
			/* folio's "page" member is the whole first page again */
			if (!*parent && f->offset == 0 && f->size >= l->size / 4 &&
			    strcmp(l->name, "folio") == 0 && strcmp(f->name, "page") == 0)
				continue;
			if (better(f, best))
				best = f;
		}
		if (!best)
			break;
		cur = best;
		if (cur->size <= 8 || array_len(cur->type))
			break;
		parent = cur->name;
	}
	if (!cur)
		return false;
	n = array_len(cur->type);
	if (n && cur->size % n == 0) {
		uint32_t elem = cur->size / n, idx = (off - cur->offset) / elem;

		snprintf(name, size, "%s[%u]", cur->name, idx);
		*ret_field_offset = (off - cur->offset) % elem;
	} else {
		snprintf(name, size, "%s", cur->name);
		*ret_field_offset = off - cur->offset;
	}
	return true;
}

/* --- vmemmap --------------------------------------------------------------- */

uint64_t vmemmap_span(uint64_t base, uint32_t page_size)
{
	unsigned int phys_bits = base < KERNEL_HALF_L4 ? 52 : 46;

	return (1ULL << (phys_bits - 12)) * page_size;
}

const char *addr_region(uint64_t a)
{
	/* below 1 << 56: user space under 4- and 5-level paging alike (the
	 * addresses between are not canonical on a 4-level kernel) */
	if (a >> 56 == 0)
		return "user";
	if (a >= KERNEL_IMAGE_START)
		return "static";
	return "kernel";
}

static int cmp_pair(const void *a, const void *b)
{
	const struct page_pair *x = a, *y = b;

	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The most frequent value of v[0..n) (sorted in place) and its count. */
static uint64_t mode_u64(uint64_t *v, size_t n, uint64_t *ret_count)
{
	uint64_t best = 0, best_n = 0;

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j < n && v[j] == v[i])
			j++;
		if (j - i > best_n) {
			best_n = j - i;
			best = v[i];
		}
		i = j;
	}
	*ret_count = best_n;
	return best;
}

void vmemmap_calibrate(struct page_pair *p, size_t n, uint32_t btf_page_size,
		       struct vmemmap_cal *ret)
{
	_cleanup_free_ uint64_t *v = NULL;
	uint64_t steps = 0, stride_votes = 0, stride = 0;
	uint32_t size;

	*ret = (struct vmemmap_cal){ .pairs = n };
	if (n == 0) {
		snprintf(ret->text, sizeof(ret->text), "no (folio, pfn) pairs");
		return;
	}
	v = calloc(n, sizeof(*v));
	if (!v) {
		snprintf(ret->text, sizeof(ret->text), "out of memory");
		return;
	}
	/* The stride between pairs is sizeof(struct page) measured without
	 * BTF: consecutive pairs by pfn whose folio distance divides evenly. */
	qsort(p, n, sizeof(*p), cmp_pair);
	for (size_t i = 1; i < n; i++) {
		uint64_t dp = p[i].pfn - p[i - 1].pfn, df = p[i].folio - p[i - 1].folio;

		if (dp == 0 || df % dp != 0 || df / dp == 0 || df / dp > 4096)
			continue;
		v[steps++] = df / dp;
	}
	if (steps) {
		stride = mode_u64(v, steps, &stride_votes);
		if (stride_votes * 2 <= steps)
			stride = 0;	/* no majority: unmeasured */
	}
	ret->stride = (uint32_t)stride;
	size = btf_page_size ? btf_page_size : (uint32_t)stride;
	if (!size) {
		snprintf(ret->text, sizeof(ret->text),
			 "%zu pairs but no sizeof(struct page): no BTF and no stride", n);
		return;
	}
	if (btf_page_size && stride && stride != btf_page_size) {
		snprintf(ret->text, sizeof(ret->text),
			 "pairs step %" PRIu64 " bytes per pfn but BTF sizeof(struct page) is %u",
			 stride, btf_page_size);
		return;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = p[i].folio - p[i].pfn * size;
	ret->base = mode_u64(v, n, &ret->agree);
	ret->page_size = size;
	if (ret->agree * 10 < n * 9) {
		snprintf(ret->text, sizeof(ret->text),
			 "pairs disagree: best base 0x%016" PRIx64 " has %" PRIu64 " of %zu",
			 ret->base, ret->agree, n);
		return;
	}
	ret->ok = true;
	ret->span = vmemmap_span(ret->base, size);
	snprintf(ret->text, sizeof(ret->text),
		 "%" PRIu64 " of %zu pairs agree; stride %s%" PRIu64 " (%" PRIu64 " of %" PRIu64
		 " steps), sizeof(struct page) %u from %s",
		 ret->agree, n, stride ? "" : "unmeasured ", stride, stride_votes, steps, size,
		 btf_page_size ? "BTF" : "the stride");
}

/* --- objects --------------------------------------------------------------- */

int objects_add_mm(struct objects *o, int64_t id, uint64_t addr, int64_t alloc_ns,
		   int64_t free_ns, int64_t first_seen_ns)
{
	if (grow_array((void **)&o->mm, &o->alloc_mm, sizeof(*o->mm), o->n_mm + 1) < 0)
		return -ENOMEM;
	o->mm[o->n_mm++] = (struct mm_obj){ id, addr, alloc_ns, free_ns, first_seen_ns };
	o->have_mm = true;
	if (id > o->mm_max_id)
		o->mm_max_id = id;
	o->mm_sorted = false;
	return 0;
}

int objects_add_anchored(struct objects *o, int64_t id, const char *st, uint64_t addr,
			 uint64_t size)
{
	struct anch_obj *a;

	if (grow_array((void **)&o->anch, &o->alloc_anch, sizeof(*o->anch), o->n_anch + 1) < 0)
		return -ENOMEM;
	a = &o->anch[o->n_anch++];
	*a = (struct anch_obj){ .id = id, .addr = addr, .size = size };
	snprintf(a->st, sizeof(a->st), "%s", st);
	o->anch_sorted = false;
	return 0;
}

int objects_add_lock(struct objects *o, int64_t id, uint64_t addr)
{
	if (grow_array((void **)&o->locks, &o->alloc_locks, sizeof(*o->locks), o->n_locks + 1) < 0)
		return -ENOMEM;
	o->locks[o->n_locks++] = (struct lock_obj){ id, addr };
	if (id > o->lock_max_id)
		o->lock_max_id = id;
	o->locks_sorted = false;
	return 0;
}

static int cmp_mm(const void *a, const void *b)
{
	const struct mm_obj *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_anch(const void *a, const void *b)
{
	const struct anch_obj *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_lock(const void *a, const void *b)
{
	const struct lock_obj *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void objects_sort(struct objects *o)
{
	/* (qsort's base must not be NULL, even for no elements) */
	if (!o->mm_sorted && o->n_mm)
		qsort(o->mm, o->n_mm, sizeof(*o->mm), cmp_mm);
	if (!o->anch_sorted && o->n_anch)
		qsort(o->anch, o->n_anch, sizeof(*o->anch), cmp_anch);
	if (!o->locks_sorted && o->n_locks)
		qsort(o->locks, o->n_locks, sizeof(*o->locks), cmp_lock);
	o->mm_sorted = o->anch_sorted = o->locks_sorted = true;
}

/* Index one past the last element whose addr <= a (elements of esize
 * bytes with a uint64_t addr at addr_off). */
static size_t upper(const void *base, size_t n, size_t esize, size_t addr_off, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, (const char *)base + mid * esize + addr_off, sizeof(v));
		if (v <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* --- reading objects near an address ---------------------------------------- */

static void fetch_failed(struct objects *o, sqlite3_stmt *st, int rc)
{
	if (!o->err)
		o->err = db_step_failed(st, rc);
}

/*
 * Runs a near statement (?1 boot, ?2..?3 the address range, as SQLite's
 * signed integers) for every object boot and adds the rows not read yet.
 * The range is given unsigned and may straddle the sign boundary.
 */
static int fetch_range(struct objects *o, sqlite3_stmt *st, struct u64map *ids, uint64_t lo,
		       uint64_t hi, bool mm)
{
	uint64_t parts[2][2] = { { lo, hi } };
	size_t n_parts = 1;
	int r, rc;

	if ((int64_t)lo > (int64_t)hi) {	/* [lo, 2^63 - 1] and [-2^63, hi] */
		parts[0][1] = (uint64_t)INT64_MAX;
		parts[1][0] = (uint64_t)INT64_MIN;
		parts[1][1] = hi;
		n_parts = 2;
	}
	for (size_t b = 0; b < o->n_boot_ids; b++) {
		for (size_t p = 0; p < n_parts; p++) {
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, o->boot_ids[b]);
			sqlite3_bind_int64(st, 2, (int64_t)parts[p][0]);
			sqlite3_bind_int64(st, 3, (int64_t)parts[p][1]);
			while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
				int64_t id = sqlite3_column_int64(st, 0);
				uint64_t addr = (uint64_t)sqlite3_column_int64(st, 1);

				if (u64map_get(ids, (uint64_t)id))
					continue;
				r = u64map_put(ids, (uint64_t)id, (void *)1);
				if (r >= 0 && mm)
					r = objects_add_mm(o, id, addr,
						sqlite3_column_type(st, 2) == SQLITE_NULL ? INT64_MIN :
						sqlite3_column_int64(st, 2),
						sqlite3_column_type(st, 3) == SQLITE_NULL ? INT64_MAX :
						sqlite3_column_int64(st, 3),
						sqlite3_column_int64(st, 4));
				else if (r >= 0)
					r = objects_add_lock(o, id, addr);
				if (r < 0) {
					sqlite3_reset(st);
					if (!o->err)
						o->err = log_oom();
					return o->err;
				}
			}
			sqlite3_reset(st);
			if (rc != SQLITE_DONE) {
				fetch_failed(o, st, rc);
				return o->err;
			}
		}
	}
	return 0;
}

static uint64_t mm_tail(const struct objects *o);

/* Reads every learned mm_struct that could contain a: those starting at
 * most sizeof(mm_struct) plus its cpumasks below it. */
static int fetch_mm(struct objects *o, uint64_t a)
{
	const struct layout *l;
	uint64_t span;

	if (!o->db || o->err || u64map_get(o->mm_done, a))
		return o->err;
	l = objects_layout(o, "mm_struct");
	if (!l || !l->size)
		return 0;
	span = l->size + mm_tail(o);
	if (u64map_put(o->mm_done, a, (void *)1) < 0)
		return o->err = log_oom();
	return fetch_range(o, o->mm_near, o->mm_ids, a >= span - 1 ? a - (span - 1) : 0, a, true);
}

/* A lock word is 4 bytes: the locks starting up to 3 bytes below a. */
static int fetch_lock(struct objects *o, uint64_t a)
{
	if (!o->db || o->err || u64map_get(o->lock_done, a))
		return o->err;
	if (u64map_put(o->lock_done, a, (void *)1) < 0)
		return o->err = log_oom();
	return fetch_range(o, o->lock_near, o->lock_ids, a >= 3 ? a - 3 : 0, a, false);
}

/* Inserts what fetches appended in order, without sorting it all again:
 * few rows are added per address. */
static void sort_mm_tail(struct objects *o, size_t from)
{
	for (size_t i = from; i < o->n_mm; i++) {
		struct mm_obj x = o->mm[i];
		size_t j = i;

		while (j > 0 && cmp_mm(&o->mm[j - 1], &x) > 0) {
			o->mm[j] = o->mm[j - 1];
			j--;
		}
		o->mm[j] = x;
	}
}

static void sort_lock_tail(struct objects *o, size_t from)
{
	for (size_t i = from; i < o->n_locks; i++) {
		struct lock_obj x = o->locks[i];
		size_t j = i;

		while (j > 0 && cmp_lock(&o->locks[j - 1], &x) > 0) {
			o->locks[j] = o->locks[j - 1];
			j--;
		}
		o->locks[j] = x;
	}
}

/* Sorted objects with everything near a read. */
static int objects_prepare_at(struct objects *o, uint64_t a, bool mm)
{
	size_t n_mm, n_locks;

	objects_sort(o);
	n_mm = o->n_mm;
	n_locks = o->n_locks;
	if (mm)
		fetch_mm(o, a);
	fetch_lock(o, a);
	sort_mm_tail(o, n_mm);
	sort_lock_tail(o, n_locks);
	o->mm_sorted = o->locks_sorted = true;
	return o->err;
}

int objects_error(const struct objects *o)
{
	return o->err;
}

int64_t objects_lock_at(const struct objects *oc, uint64_t addr, uint64_t *ret_lock_addr)
{
	struct objects *o = (struct objects *)(uintptr_t)oc;	/* sorting is a cache */
	size_t i;

	if (objects_prepare_at(o, addr, false) < 0)
		return 0;
	i = upper(o->locks, o->n_locks, sizeof(*o->locks), offsetof(struct lock_obj, addr), addr);
	/* a lock word is 4 bytes (spinlock_t without debug options) */
	if (i > 0 && addr - o->locks[i - 1].addr < 4) {
		if (ret_lock_addr)
			*ret_lock_addr = o->locks[i - 1].addr;
		return o->locks[i - 1].id;
	}
	return 0;
}

/* mm_struct ends in a flexible array (cpu_bitmap): the mm_cpumask and the
 * mm_cid mask are allocated behind it, a cpumask each. */
static uint64_t mm_tail(const struct objects *o)
{
	int64_t cpus = o->nr_cpus_possible > 0 ? o->nr_cpus_possible : 64;

	return 2 * (uint64_t)((cpus + 63) / 64) * 8;
}

static bool resolve_field(const struct layout *l, uint64_t off, struct typed_addr *t)
{
	uint32_t fo;

	if (off < l->size && layout_field_at(l, (uint32_t)off, t->field, sizeof(t->field), &fo)) {
		t->has_field = true;
		t->field_offset = fo;
		return true;
	}
	if (off >= l->size) {
		/* the flexible array member at the end */
		for (size_t i = 0; i < l->n; i++) {
			if (l->f[i].size == 0 && l->f[i].offset == l->size) {
				snprintf(t->field, sizeof(t->field), "%s", l->f[i].name);
				t->field_offset = (uint32_t)(off - l->size);
				t->has_field = true;
				return true;
			}
		}
	}
	return false;
}

static bool resolve_page(const struct objects *o, uint64_t a, struct typed_addr *t)
{
	const struct layout *l;
	uint64_t pfn, off;

	if (!o->cal.ok || a < o->cal.base ||
	    a - o->cal.base >= (o->cal.span ? o->cal.span : vmemmap_span(o->cal.base, o->cal.page_size)))
		return false;
	pfn = (a - o->cal.base) / o->cal.page_size;
	off = (a - o->cal.base) % o->cal.page_size;
	t->object_type = "page";
	t->object_ref = (int64_t)pfn;
	t->object_addr = o->cal.base + pfn * o->cal.page_size;
	t->object_offset = (int64_t)off;
	/* folio names the fields as the LRU code uses them; page otherwise */
	l = objects_layout(o, "folio");
	if (!l || !resolve_field(l, off, t)) {
		l = objects_layout(o, "page");
		if (l)
			resolve_field(l, off, t);
	}
	snprintf(t->reason, sizeof(t->reason), "struct page of pfn 0x%" PRIx64 " (vmemmap 0x%016"
		 PRIx64 ")", pfn, o->cal.base);
	t->grade = "layout";
	return true;
}

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

static bool resolve_mm(const struct objects *o, uint64_t a, int64_t t0, int64_t t1,
		       struct typed_addr *t)
{
	const struct layout *l = objects_layout(o, "mm_struct");
	const struct mm_obj *best = NULL, *dead = NULL;
	uint64_t span;
	size_t i;

	if (!l || !l->size || !o->n_mm)
		return false;
	span = l->size + mm_tail(o);
	i = upper(o->mm, o->n_mm, sizeof(*o->mm), offsetof(struct mm_obj, addr), a);
	/* The nearest object below a first: one at a higher address wins over
	 * the tail of a lower one. */
	while (i-- > 0 && a - o->mm[i].addr < span) {
		const struct mm_obj *m = &o->mm[i];
		int64_t ov;

		if (best && m->addr != best->addr)
			break;
		if (!(m->alloc_ns < t1 && m->free_ns > t0)) {
			if (!dead)
				dead = m;
			continue;
		}
		ov = overlap(m->alloc_ns, m->free_ns, t0, t1);
		if (!best || ov > overlap(best->alloc_ns, best->free_ns, t0, t1) ||
		    (ov == overlap(best->alloc_ns, best->free_ns, t0, t1) &&
		     m->first_seen_ns > best->first_seen_ns))
			best = m;
	}
	if (!best) {
		if (!dead)
			return false;
		snprintf(t->reason, sizeof(t->reason),
			 "in mm_struct 0x%016" PRIx64 " (mm_objects %" PRId64 ") but it was not "
			 "alive in this interval", dead->addr, dead->id);
		return false;
	}
	t->object_type = "mm_struct";
	t->object_ref = best->id;
	t->object_addr = best->addr;
	t->object_offset = (int64_t)(a - best->addr);
	resolve_field(l, a - best->addr, t);
	snprintf(t->reason, sizeof(t->reason), "mm_struct mm_objects %" PRId64, best->id);
	t->grade = "object";
	return true;
}

/* typed_addr outlives reloads: point it at a constant. */
static const char *static_type_name(const char *st)
{
	static const char *const known[] = { "lruvec", "mm_struct", "page", "folio" };

	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (strcmp(st, known[i]) == 0)
			return known[i];
	return "anchored";
}

static bool resolve_anchored(const struct objects *o, uint64_t a, struct typed_addr *t)
{
	size_t i = upper(o->anch, o->n_anch, sizeof(*o->anch), offsetof(struct anch_obj, addr), a);
	const struct anch_obj *x;
	const struct layout *l;

	if (i == 0)
		return false;
	x = &o->anch[i - 1];
	if (a - x->addr >= x->size)
		return false;
	l = objects_layout(o, x->st);
	t->object_type = static_type_name(x->st);
	t->object_ref = x->id;
	t->object_addr = x->addr;
	t->object_offset = (int64_t)(a - x->addr);
	if (l)
		resolve_field(l, a - x->addr, t);
	snprintf(t->reason, sizeof(t->reason), "%s anchored_objects %" PRId64, x->st, x->id);
	/* at a lock the daemon saw contended: that object; placed by the
	 * samples' code path alone otherwise */
	t->grade = x->exact ? "object" : "path";
	return true;
}

/*
 * Linker-made section bounds (__start_init_stack, __stop___param, _edata,
 * __bss_start ...) mark where a section begins or ends; they are not
 * objects. A kernel built without CONFIG_KALLSYMS_ALL lists almost no data
 * symbols but these, so an address megabytes past __start_init_stack is
 * some static object kallsyms does not name, and typing it by the marker
 * would be a wrong name.
 */
static bool section_marker(const char *name)
{
	static const char *const exact[] = {
		"_sdata", "_edata", "__bss_start", "__bss_stop", "_end", "__brk_base",
		"__brk_limit", "__init_begin", "__init_end", "_sinittext", "_einittext",
		"__per_cpu_start", "__per_cpu_end", "_stext", "_etext", "__end_rodata",
		"__start_rodata", "_sbss", "_ebss",
	};

	if (startswith(name, "__start_") || startswith(name, "__stop_") ||
	    startswith(name, "__end_"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(exact); i++)
		if (strcmp(name, exact[i]) == 0)
			return true;
	return false;
}

/* Kernel image and module data: the kallsyms data symbol containing it
 * (stored by import for the sampled data addresses). */
static bool resolve_static(const struct objects *o, uint64_t a, struct typed_addr *t)
{
	const struct ksym *k = symtab_lookup(o->syms, a);

	if (!k)
		return false;
	if (section_marker(k->name)) {
		snprintf(t->reason, sizeof(t->reason), "kernel static data at %s+0x%" PRIx64
			 ", a section bound, not an object: no data symbol names it (a kernel "
			 "without CONFIG_KALLSYMS_ALL lists none)", k->name, a - k->addr);
		return false;
	}
	t->object_type = k->name;	/* lives as long as o */
	t->object_addr = k->addr;
	t->object_offset = (int64_t)(a - k->addr);
	snprintf(t->reason, sizeof(t->reason), "kernel static data %s+0x%" PRIx64 "%s%s%s", k->name,
		 a - k->addr, k->module ? " [" : "", k->module ? k->module : "", k->module ? "]" : "");
	t->grade = "layout";
	return true;
}

const char *objects_missing(const struct objects *o)
{
	struct objects *w = (struct objects *)(uintptr_t)o;	/* a cache */
	size_t len = 0;

	w->missing[0] = '\0';
#define MISSING(...) len += (size_t)snprintf(w->missing + len, sizeof(w->missing) - len, \
					     "%s", len ? "; " : ""), \
		     len += (size_t)snprintf(w->missing + len, sizeof(w->missing) - len, __VA_ARGS__)
	if (!o->n_layouts)
		MISSING("field offsets: pass --btf (the recorded kernel's BTF)");
	if (!o->cal.ok)
		MISSING("struct pages: pass --vmemmap-base (or import on the recording host)");
	if (!o->have_mm)
		MISSING("mm_structs: import into the database mmhitmd recorded that boot in");
	if (!symtab_count(o->syms))
		MISSING("symbols: pass --kallsyms (the recorded boot's /proc/kallsyms)");
#undef MISSING
	return w->missing;
}

void objects_resolve(const struct objects *oc, uint64_t a, int64_t t0, int64_t t1,
		     struct typed_addr *t)
{
	struct objects *o = (struct objects *)(uintptr_t)oc;	/* sorting is a cache */
	uint64_t lock;
	int64_t lock_id;

	*t = (struct typed_addr){ .object_ref = -1, .object_offset = -1, .region = addr_region(a) };
	if (strcmp(t->region, "user") == 0) {
		t->object_type = "user";
		t->object_addr = a;
		t->object_offset = 0;
		t->grade = "layout";
		snprintf(t->reason, sizeof(t->reason), "user-space address");
		return;
	}
	if (strcmp(t->region, "static") == 0) {
		if (!resolve_static(o, a, t) && !t->reason[0])
			snprintf(t->reason, sizeof(t->reason), "kernel image or module address in no "
				 "stored data symbol: pass --kallsyms (the recorded boot's /proc/kallsyms)");
		return;
	}
	if (objects_prepare_at(o, a, true) < 0) {
		snprintf(t->reason, sizeof(t->reason), "learned objects could not be read");
		return;
	}
	if (resolve_page(o, a, t) || resolve_mm(o, a, t0, t1, t) || resolve_anchored(o, a, t))
		return;
	if (t->reason[0])
		return;		/* resolve_mm said why */
	lock_id = objects_lock_at(o, a, &lock);
	if (lock_id)
		snprintf(t->reason, sizeof(t->reason),
			 "contended spinlock 0x%016" PRIx64 " (lock_objects %" PRId64 ") of unknown "
			 "type: no anchoring sample", lock, lock_id);
	else if (*objects_missing(o))
		snprintf(t->reason, sizeof(t->reason), "no known object here; missing: %s",
			 objects_missing(o));
	else
		snprintf(t->reason, sizeof(t->reason), "no known object here");
}

/* --- loading --------------------------------------------------------------- */

/* The boots whose learned rows describe boot_id's addresses. */
static int find_object_boots(struct objects *o, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	size_t len;
	int r, rc;

	o->boot_id = boot_id;
	o->boot_ids[0] = boot_id;
	o->n_boot_ids = 1;
	/* An imported perf.data is a boot of its own; if a live recording
	 * of the same host and kernel spans its samples, or its boot id is
	 * the one the import was told it was recorded in (--boot-id), that is
	 * the same kernel boot (boots do not overlap in time), so its objects,
	 * pairs, symbols and KASLR layout apply. */
	r = db_prepare(db, &st,
		"SELECT l.boot_id FROM boots b"
		" JOIN hosts hb ON hb.host_id = b.host_id"
		" JOIN boots l ON l.boot_id != b.boot_id AND l.source = 'live'"
		" JOIN hosts hl ON hl.host_id = l.host_id"
		" WHERE b.boot_id = ?1 AND b.source != 'live'"
		"  AND (l.boot_uuid = b.boot_uuid OR l.boot_uuid = b.recorded_boot_uuid OR"
		"   (hl.hostname = hb.hostname AND l.kernel_release = b.kernel_release"
		"    AND (l.kernel_build_id IS NULL OR b.kernel_build_id IS NULL"
		"         OR l.kernel_build_id = b.kernel_build_id)"
		"    AND l.first_seen_ns <= (SELECT max(end_ns) FROM intervals WHERE boot_id = b.boot_id)"
		"    AND l.last_seen_ns >= (SELECT min(start_ns) FROM intervals WHERE boot_id = b.boot_id)))"
		" ORDER BY l.boot_id");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && o->n_boot_ids < ARRAY_SIZE(o->boot_ids))
		o->boot_ids[o->n_boot_ids++] = sqlite3_column_int64(st, 0);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return db_step_failed(st, rc);
	o->boots[0] = '\0';
	for (size_t i = 0; i < o->n_boot_ids; i++) {
		len = strlen(o->boots);
		snprintf(o->boots + len, sizeof(o->boots) - len, "%s%" PRId64, i ? " " : "",
			 o->boot_ids[i]);
	}
	return 0;
}

/* Runs sql (bound ?1 = a boot id) for every object boot, calling row(). */
static int for_each_boot_row(struct objects *o, sqlite3 *db, const char *sql, bool first_only,
			     int (*row)(struct objects *o, void *data, sqlite3_stmt *st), void *data)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, rc;

	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	for (size_t b = 0; b < o->n_boot_ids; b++) {
		bool any = false;

		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, o->boot_ids[b]);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			any = true;
			r = row(o, data, st);
			if (r < 0)
				return log_oom();
		}
		if (rc != SQLITE_DONE)
			return db_step_failed(st, rc);
		if (any && first_only)
			break;
	}
	return 0;
}

static int row_layout(struct objects *o, void *data, sqlite3_stmt *st)
{
	return objects_add_layout_field(o, (const char *)sqlite3_column_text(st, 0),
					(const char *)sqlite3_column_text(st, 1),
					(uint32_t)sqlite3_column_int64(st, 2),
					(uint32_t)sqlite3_column_int64(st, 3),
					(const char *)sqlite3_column_text(st, 4));
}

static int row_anchored(struct objects *o, void *data, sqlite3_stmt *st)
{
	int r = objects_add_anchored(o, sqlite3_column_int64(st, 0),
				     (const char *)sqlite3_column_text(st, 1),
				     (uint64_t)sqlite3_column_int64(st, 2),
				     (uint64_t)sqlite3_column_int64(st, 3));

	if (r >= 0)
		o->anch[o->n_anch - 1].exact = sqlite3_column_type(st, 4) != SQLITE_NULL;
	return r;
}

struct pair_vec {
	struct page_pair *v;
	size_t n, alloc;
};

static int row_pair(struct objects *o, void *data, sqlite3_stmt *st)
{
	struct pair_vec *p = data;

	if (grow_array((void **)&p->v, &p->alloc, sizeof(*p->v), p->n + 1) < 0)
		return -ENOMEM;
	p->v[p->n++] = (struct page_pair){ (uint64_t)sqlite3_column_int64(st, 0),
					   (uint64_t)sqlite3_column_int64(st, 1) };
	return 0;
}

int objects_reload_anchored(struct objects *o, sqlite3 *db)
{
	o->n_anch = 0;
	return for_each_boot_row(o, db, "SELECT anchored_object_id, struct, addr, size, lock_object_id"
				 " FROM anchored_objects WHERE boot_id = ?1", false, row_anchored, NULL);
}

/*
 * No pairs calibrate the vmemmap: a base given to mmhitm import or read
 * from the running kernel on the same boot (boots.vmemmap_base) places it,
 * with sizeof(struct page) from BTF.
 */
static int vmemmap_given(struct objects *o, sqlite3 *db)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	const struct layout *page = objects_layout(o, "page");
	char pairs[96];
	int r, rc;

	r = db_prepare(db, &st, "SELECT vmemmap_base, coalesce(layout_source, 'given') FROM boots"
				" WHERE boot_id = ?1 AND vmemmap_base IS NOT NULL");
	if (r < 0)
		return r;
	for (size_t b = 0; b < o->n_boot_ids; b++) {
		sqlite3_reset(st);
		sqlite3_bind_int64(st, 1, o->boot_ids[b]);
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE)
			continue;
		if (rc != SQLITE_ROW)
			return db_step_failed(st, rc);
		snprintf(pairs, sizeof(pairs), "%.*s", (int)sizeof(pairs) - 1, o->cal.text);
		if (!page || !page->size) {
			snprintf(o->cal.text, sizeof(o->cal.text), "vmemmap base known (%s) but no "
				 "sizeof(struct page): pass --btf", sqlite3_column_text(st, 1));
			return 0;
		}
		o->cal.ok = true;
		o->cal.base = (uint64_t)sqlite3_column_int64(st, 0);
		o->cal.page_size = page->size;
		o->cal.span = vmemmap_span(o->cal.base, page->size);
		snprintf(o->cal.text, sizeof(o->cal.text), "base %s, sizeof(struct page) %u from BTF"
			 " (%s)", sqlite3_column_text(st, 1), page->size, pairs);
		return 0;
	}
	return 0;
}

int objects_load(struct objects *o, sqlite3 *db, int64_t boot_id)
{
	struct pair_vec pairs = {};
	const struct layout *page;
	int64_t cpus = 0;
	int r;

	r = find_object_boots(o, db, boot_id);
	if (r < 0)
		return r;
	/* Layouts: the boot's own BTF, else the first object boot's. */
	r = for_each_boot_row(o, db, "SELECT struct, field, offset, size, type FROM btf_layouts"
			      " WHERE boot_id = ?1", true, row_layout, NULL);
	/* mm_structs and locks: on demand, near the addresses resolved (the
	 * UNIQUE (boot_id, addr, ...) indexes serve these). */
	if (r >= 0)
		r = db_prepare(db, &o->mm_near, "SELECT mm_object_id, addr, alloc_ns, free_ns,"
			       " first_seen_ns FROM mm_objects WHERE boot_id = ?1 AND addr BETWEEN ?2 AND ?3");
	if (r >= 0)
		r = db_prepare(db, &o->lock_near, "SELECT lock_object_id, addr FROM lock_objects"
			       " WHERE boot_id = ?1 AND addr BETWEEN ?2 AND ?3");
	if (r >= 0) {
		o->mm_ids = u64map_new();
		o->lock_ids = u64map_new();
		o->mm_done = u64map_new();
		o->lock_done = u64map_new();
		if (!o->mm_ids || !o->lock_ids || !o->mm_done || !o->lock_done)
			r = log_oom();
	}
	if (r >= 0)
		o->db = db;
	if (r >= 0)
		r = objects_reload_anchored(o, db);
	if (r >= 0)
		r = for_each_boot_row(o, db, "SELECT pfn, folio_addr FROM page_pairs WHERE boot_id = ?1",
				      false, row_pair, &pairs);
	for (size_t b = 0; r >= 0 && b < o->n_boot_ids; b++)
		r = symtab_load(o->syms, db, o->boot_ids[b]);
	if (r < 0)
		goto out;
	for (size_t b = 0; b < o->n_boot_ids && cpus <= 0; b++) {
		char sql[160];

		snprintf(sql, sizeof(sql), "SELECT coalesce(nr_cpus_possible, nr_cpus_online) FROM boots"
			 " WHERE boot_id = %" PRId64, o->boot_ids[b]);
		if (db_query_int(db, &cpus, sql) < 0)
			cpus = 0;
	}
	o->nr_cpus_possible = cpus;
	page = objects_layout(o, "page");
	vmemmap_calibrate(pairs.v, pairs.n, page ? page->size : 0, &o->cal);
	if (!o->cal.ok)
		r = vmemmap_given(o, db);
	for (size_t b = 0; r >= 0 && b < o->n_boot_ids && !o->have_mm; b++) {
		char sql[128];
		int64_t any = 0;

		snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM mm_objects WHERE boot_id = %"
			 PRId64 ")", o->boot_ids[b]);
		r = db_query_int(db, &any, sql);
		o->have_mm = any;
	}
out:
	free(pairs.v);
	return r;
}

/* The largest id > *id of table's rows of the object boots, into *id:
 * a range scan of the rows added since, whatever the history. */
static int max_id_since(struct objects *o, const char *table, const char *id_col, int64_t *id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	char sql[256];
	int r, rc;

	snprintf(sql, sizeof(sql), "SELECT max(%s) FROM %s WHERE %s > ?1 AND"
		 " instr(' ' || ?2 || ' ', ' ' || boot_id || ' ') > 0", id_col, table, id_col);
	r = db_prepare(o->db, &st, sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, *id);
	sqlite3_bind_text(st, 2, o->boots, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*id = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)	/* max(): a row, always */
		return db_step_failed(st, rc);
	return 0;
}

/* "key=N" in a signature, or 0. */
static int64_t signature_value(const char *sig, const char *key)
{
	const char *p = sig ? strstr(sig, key) : NULL;

	return p && (p == sig || p[-1] == ' ') ? strtoll(p + strlen(key), NULL, 10) : 0;
}

/*
 * Learned mm_structs and locks are not all in memory: their newest ids
 * stand for them. An id only grows (rows are added, updated in place, or
 * dropped by retention when dead before every interval kept), so the new
 * rows since the previous signature are all that is read.
 */
int objects_signature(struct objects *o, const char *prev, char *buf, size_t size)
{
	int64_t mm = signature_value(prev, "mm_id="), locks = signature_value(prev, "lock_id=");
	int r;

	if (mm < o->mm_max_id)
		mm = o->mm_max_id;
	if (locks < o->lock_max_id)
		locks = o->lock_max_id;
	if (o->db) {
		r = max_id_since(o, "mm_objects", "mm_object_id", &mm);
		if (r >= 0)
			r = max_id_since(o, "lock_objects", "lock_object_id", &locks);
		if (r < 0)
			return r;
	}
	snprintf(buf, size, "mm_id=%" PRId64 " pairs=%" PRIu64 " anchored=%zu lock_id=%" PRId64
		 " layouts=%zu ksyms=%zu boots=%s", mm, o->cal.pairs, o->n_anch, locks,
		 o->n_layouts, symtab_count(o->syms), o->boots);
	return 0;
}

/* The part of a signature after key (" pairs=..."), up to before stop, into buf. */
static bool signature_part(const char *sig, const char *key, const char *stop, char *buf, size_t size)
{
	const char *p = strstr(sig, key), *e = stop ? strstr(sig, stop) : NULL;
	size_t len;

	if (!p || (stop && (!e || e < p)))
		return false;
	len = e ? (size_t)(e - p) : strlen(p);
	if (len >= size)
		return false;
	memcpy(buf, p, len);
	buf[len] = '\0';
	return true;
}

bool objects_signature_learned_only(const char *a, const char *b, int64_t *mm_id, int64_t *lock_id)
{
	char x[512], y[512];

	if (!a || !b || strncmp(a, "mm_id=", 6) != 0 || strncmp(b, "mm_id=", 6) != 0)
		return false;
	/* "mm_id=N pairs=... anchored=N lock_id=N layouts=... boots=..." */
	if (!signature_part(a, " pairs=", " lock_id=", x, sizeof(x)) ||
	    !signature_part(b, " pairs=", " lock_id=", y, sizeof(y)) || strcmp(x, y) != 0)
		return false;
	if (!signature_part(a, " layouts=", NULL, x, sizeof(x)) ||
	    !signature_part(b, " layouts=", NULL, y, sizeof(y)) || strcmp(x, y) != 0)
		return false;
	*mm_id = signature_value(a, "mm_id=");
	*lock_id = signature_value(a, "lock_id=");
	return true;
}

uint64_t objects_mm_span(const struct objects *o)
{
	const struct layout *l = objects_layout(o, "mm_struct");

	return l && l->size ? l->size + mm_tail(o) : 0;
}

bool objects_signature_symbols_differ(const char *a, const char *b)
{
	const char *x = a ? strstr(a, " ksyms=") : NULL, *y = b ? strstr(b, " ksyms=") : NULL;

	if (!x || !y)
		return true;
	return strcmp(x, y) != 0;	/* ksyms= and boots= */
}
