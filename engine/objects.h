/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_OBJECTS_H
#define MMHITM_OBJECTS_H

/*
 * Object resolution for one boot, without DWARF: a kernel data address
 * becomes (object type, object, field, offset in the field) from what the
 * daemon learned and the boot's BTF layouts:
 *
 *   struct page  vmemmap base calibrated from (folio, pfn) pairs, with
 *                sizeof(struct page) from BTF checked against the pairs
 *   mm_struct    mm_objects rows alive in the sample's interval
 *   lruvec       anchored_objects rows (placed by rules.conf anchors,
 *                exactly when a contended lock address is the lru_lock)
 *
 * or stays unresolved with a reason.
 */

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symtab.h"

/*
 * The vmemmap spans one struct page per possible pfn: with 4-level paging
 * 46 physical address bits (1 TiB of 64-byte pages), with 5-level 52 (64
 * TiB); Documentation/arch/x86/x86_64/mm.rst. A base below the 4-level
 * kernel half (0xffff800000000000) is a 5-level kernel's.
 */
#define KERNEL_HALF_L4	0xffff800000000000ULL
uint64_t vmemmap_span(uint64_t base, uint32_t page_size);

/* Where an address lies, before any object is known: user space (below
 * the kernel half, 4- or 5-level, x86_64 and arm64 alike), the kernel
 * image and modules (x86_64: from __START_KERNEL_map), or the rest of the
 * kernel (direct map, vmalloc, vmemmap, per-CPU areas). */
#define KERNEL_IMAGE_START	0xffffffff80000000ULL
const char *addr_region(uint64_t addr);

/* --- BTF layouts ----------------------------------------------------------- */

struct layout_field {
	char *name;		/* dotted path, "" for the struct itself */
	uint32_t offset, size;	/* bytes */
	char *type;
};

struct layout {
	char *name;		/* "mm_struct", "page", "folio", "lruvec" */
	uint32_t size;		/* sizeof */
	struct layout_field *f;
	size_t n, alloc;
};

/*
 * Names the field at byte off of an object: the largest top-level member
 * containing it (aliases of the whole object skipped), descended into while
 * wider than a word ("lru_gen" -> "lru_gen.bitmap"), an array element
 * indexed ("lists[4]"). Writes the name and the offset inside that field;
 * returns false when no field covers off (padding).
 */
bool layout_field_at(const struct layout *l, uint32_t off, char *name, size_t size,
		     uint32_t *ret_field_offset);
/* The row of a field by exact name, or NULL. */
const struct layout_field *layout_find(const struct layout *l, const char *field);

/* --- vmemmap --------------------------------------------------------------- */

struct page_pair {
	uint64_t pfn, folio;
};

struct vmemmap_cal {
	bool ok;
	uint64_t base;
	uint32_t page_size;	/* sizeof(struct page) used */
	uint64_t pairs, agree;	/* pairs seen, pairs implying base */
	uint32_t stride;	/* bytes per pfn measured from the pairs; 0: unmeasured */
	uint64_t span;		/* bytes of vmemmap above base */
	char text[192];		/* "51 of 51 pairs agree; ..." or why not calibrated */
};

/*
 * Calibrates from pairs (reordered by pfn). btf_page_size 0 means BTF had
 * none: the measured stride is used. Calibrated when at least 90 % of the
 * pairs imply one base and the stride between pairs, where measurable,
 * equals sizeof(struct page).
 */
void vmemmap_calibrate(struct page_pair *pairs, size_t n, uint32_t btf_page_size,
		       struct vmemmap_cal *ret);

/* --- resolution ------------------------------------------------------------ */

struct typed_addr {
	const char *object_type;	/* "mm_struct", "page", "lruvec"; NULL: unresolved */
	int64_t object_ref;		/* mm_object_id, pfn, anchored_object_id */
	uint64_t object_addr;
	int64_t object_offset;
	bool has_field;
	char field[128];
	uint32_t field_offset;
	const char *grade;		/* "object", "layout", "path"; NULL: untyped */
	const char *region;		/* addr_region() */
	bool addr_unknown;		/* typed by the code path: object_addr unknown */
	char reason[512];		/* how it was typed, or why it was not */
};

struct objects;

/* Empty; NULL on ENOMEM. Caller frees with objects_free(). */
struct objects *objects_new(void);
void objects_free(struct objects *o);

/*
 * Loads what boot_id's addresses are resolved against: its own rows and,
 * for an imported boot, those of the live boot recorded on the same host
 * and kernel over the same time (same boot, same KASLR layout). Also
 * loads the boot's symbols. Learned mm_structs and locks are read later,
 * from db, only near the addresses resolved: db must stay open while o
 * is used. Errors are logged.
 */
int objects_load(struct objects *o, sqlite3 *db, int64_t boot_id);
/* Reloads anchored_objects only (after an analysis added some). */
int objects_reload_anchored(struct objects *o, sqlite3 *db);

const struct vmemmap_cal *objects_vmemmap(const struct objects *o);
const struct symtab *objects_symtab(const struct objects *o);
const struct layout *objects_layout(const struct objects *o, const char *name);
/* The boots whose rows were loaded, as "1 3". */
const char *objects_boots(const struct objects *o);
/*
 * What is known, as a comparable string: when it changes, retry unresolved.
 * prev is the last signature of the same boot ("" or NULL: none), so only
 * what was learned since is read. Returns 0 or -errno (logged).
 */
int objects_signature(struct objects *o, const char *prev, char *buf, size_t size);
/* Whether the symbols changed between two signatures. */
bool objects_signature_symbols_differ(const char *a, const char *b);

/*
 * Whether signature a (before) and b (now) differ only in the learned
 * mm_structs and locks, whose ids only grow: then only rows at the
 * objects with ids above a's can be typed anew. Sets *mm_id and *lock_id
 * to a's ids.
 */
bool objects_signature_learned_only(const char *a, const char *b, int64_t *mm_id, int64_t *lock_id);

/* The bytes from a learned mm_struct's start that can be inside it
 * (sizeof(mm_struct) and its cpumasks), 0 without its layout. */
uint64_t objects_mm_span(const struct objects *o);

/*
 * What would type more of this boot's addresses, for the reasons of
 * unresolved lines: "--btf", "--vmemmap-base (or import on the recording
 * host)", ... joined by "; ", or "" when nothing is missing.
 */
const char *objects_missing(const struct objects *o);

/* A failure to read learned objects during resolution (logged once), or 0:
 * a resolution that failed says so in its reason and is not to be stored. */
int objects_error(const struct objects *o);

/* The contended lock (lock_objects) whose word contains addr: id, or 0. */
int64_t objects_lock_at(const struct objects *o, uint64_t addr, uint64_t *ret_lock_addr);

/*
 * Types addr as seen during [t0, t1) (the interval, ns). Always fills
 * *ret; object_type NULL means unresolved and reason says why.
 */
void objects_resolve(const struct objects *o, uint64_t addr, int64_t t0, int64_t t1,
		     struct typed_addr *ret);

/* For tests: add objects without a database. */
int objects_add_layout_field(struct objects *o, const char *st, const char *field,
			     uint32_t offset, uint32_t size, const char *type);
int objects_add_mm(struct objects *o, int64_t id, uint64_t addr, int64_t alloc_ns,
		   int64_t free_ns, int64_t first_seen_ns);
int objects_add_anchored(struct objects *o, int64_t id, const char *st, uint64_t addr,
			 uint64_t size);
int objects_add_lock(struct objects *o, int64_t id, uint64_t addr);
void objects_set_vmemmap(struct objects *o, const struct vmemmap_cal *cal);
void objects_set_cpus(struct objects *o, int64_t nr_cpus_possible);
/* For tests: how many mm_structs and locks are in memory now. */
void objects_loaded(const struct objects *o, size_t *ret_mm, size_t *ret_locks);

#endif
