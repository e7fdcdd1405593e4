/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_KALLSYMS_H
#define MMHITM_KALLSYMS_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	uint64_t size;		/* up to the next symbol */
	const char *name;
	const char *module;	/* NULL for vmlinux */
};

struct kallsyms;

/*
 * Loads a kallsyms snapshot (path NULL: /proc/kallsyms), sorted by address.
 * Returns NULL with errno set (EPERM when every address reads as zero, as
 * kptr_restrict shows them without CAP_SYSLOG). Free with kallsyms_free().
 */
struct kallsyms *kallsyms_load(const char *path);
void kallsyms_free(struct kallsyms *ks);
size_t kallsyms_count(const struct kallsyms *ks);
/* The i-th symbol in address order (a lookup's result minus the first is its index), or NULL. */
const struct ksym *kallsyms_at(const struct kallsyms *ks, size_t i);

/* The symbol containing addr, or NULL outside every symbol. */
const struct ksym *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr);
/* The first symbol of that name, or NULL. */
const struct ksym *kallsyms_find(const struct kallsyms *ks, const char *name);

/*
 * The 8-byte value of the running kernel's variable at addr (a kallsyms
 * data symbol such as vmemmap_base), read from /proc/kcore (root only).
 * Returns 0 or -errno.
 */
int kallsyms_read_running_u64(uint64_t addr, uint64_t *ret);

/* The running kernel's build id (GNU note in /sys/kernel/notes) as hex: 0 or -errno. */
int kallsyms_running_build_id(char *buf, size_t len);
/* Whether the running kernel's build id (in /sys/kernel/notes) is hex. */
bool kallsyms_running_build_id_is(const char *hex);

/* Adds a symbol to the boot's ksyms table (inside the caller's txn). */
int kallsyms_store(sqlite3 *db, int64_t boot_id, const struct ksym *sym);

#endif
