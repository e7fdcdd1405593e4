/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_BTF_H
#define MMHITM_BTF_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Layouts of the kernel structs attribution needs (mm_struct, page, folio,
 * lruvec), read from BTF so fleet hosts need no debuginfo. Members of
 * anonymous structs and unions are flattened into their parent; named
 * struct members are descended into as "outer.inner" (lru_gen.bitmap).
 */

struct btf_field {
	char struct_name[32];
	char field[96];		/* "" for the struct itself */
	uint32_t offset;	/* bytes */
	uint32_t size;		/* bytes */
	uint32_t bit_offset;	/* within offset, for bitfields */
	uint32_t bit_size;	/* 0 unless a bitfield */
	char type[64];
};

struct btf_layout {
	struct btf_field *fields;
	size_t n, alloc;
};

/* The structs recorded per boot. */
extern const char *const btf_layout_structs[];

/*
 * Reads the layouts from a BTF file (raw BTF like /sys/kernel/btf/vmlinux,
 * or an ELF with .BTF); path NULL means this kernel's. Structs the kernel
 * lacks are skipped. Caller frees with btf_layout_done().
 */
int btf_layout_collect(const char *path, struct btf_layout *ret);
void btf_layout_done(struct btf_layout *l);

/* NULL when the kernel has no such field (lru_gen.bitmap without LRU_GEN). */
const struct btf_field *btf_layout_find(const struct btf_layout *l, const char *struct_name,
					const char *field);

/* Replaces the boot's btf_layouts rows, inside the caller's transaction. */
int btf_layout_store(sqlite3 *db, int64_t boot_id, const struct btf_layout *l);

#endif
