/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_SYMTAB_H
#define MMHITM_SYMTAB_H

/*
 * Symbolization against a boot's ksyms rows: the symbols the daemon (or
 * `mmhitm import --kallsyms`) stored, module symbols included, never the
 * whole kallsyms.
 */

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "kallsyms.h"

struct symtab;

/* Empty; NULL on ENOMEM. Caller frees with symtab_free(). */
struct symtab *symtab_new(void);
void symtab_free(struct symtab *t);

/* Adds one symbol; size 0 means unknown (see symtab_lookup()). */
int symtab_add(struct symtab *t, uint64_t addr, uint64_t size, const char *name,
	       const char *module);
/* Adds the ksyms rows of a boot. */
int symtab_load(struct symtab *t, sqlite3 *db, int64_t boot_id);
size_t symtab_count(const struct symtab *t);

/*
 * The symbol containing ip: addr <= ip < addr + size. A symbol stored
 * without a size covers ip only up to the next stored symbol and at most
 * 64 KiB, since the table holds only some symbols. NULL when none does.
 */
const struct ksym *symtab_lookup(const struct symtab *t, uint64_t ip);

/* "name+0x1f", "name+0x1f [module]", or "0xffffffff81234567" when unknown. */
void symtab_format(const struct symtab *t, uint64_t ip, char *buf, size_t size);

#endif
