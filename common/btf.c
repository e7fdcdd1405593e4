// SPDX-License-Identifier: GPL-2.0
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "btf.h"
#include "db.h"
#include "log.h"
#include "util.h"

const char *const btf_layout_structs[] = { "mm_struct", "page", "folio", "lruvec", NULL };

/* How deep named members are followed: mm_struct.lru_gen.bitmap is 2. */
#define BTF_MAX_DEPTH 3

static void type_name(const struct btf *btf, uint32_t id, char *buf, size_t len)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	/* Skip qualifiers; keep typedef names, they say more (atomic_t). */
	while (t && (btf_is_const(t) || btf_is_volatile(t) || btf_is_restrict(t) ||
		     btf_is_type_tag(t))) {
		id = t->type;
		t = btf__type_by_id(btf, id);
	}
	if (!t || id == 0) {
		snprintf(buf, len, "void");
		return;
	}
	if (btf_is_ptr(t)) {
		snprintf(buf, len, "pointer");
	} else if (btf_is_array(t)) {
		char inner[48];

		type_name(btf, btf_array(t)->type, inner, sizeof(inner));
		snprintf(buf, len, "%s[%u]", inner, btf_array(t)->nelems);
	} else if (btf_is_struct(t) || btf_is_union(t)) {
		const char *n = btf__name_by_offset(btf, t->name_off);

		snprintf(buf, len, "%s %s", btf_is_struct(t) ? "struct" : "union",
			 n && *n ? n : "(anon)");
	} else {
		const char *n = btf__name_by_offset(btf, t->name_off);

		snprintf(buf, len, "%s", n && *n ? n : "?");
	}
}

static int layout_add(struct btf_layout *l, const char *st, const char *field, uint32_t off,
		      uint32_t size, uint32_t bit_off, uint32_t bit_size, const char *type)
{
	struct btf_field *f;

	if (grow_array((void **)&l->fields, &l->alloc, sizeof(*l->fields), l->n + 1) < 0)
		return -ENOMEM;
	f = &l->fields[l->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->struct_name, sizeof(f->struct_name), "%s", st);
	snprintf(f->field, sizeof(f->field), "%s", field);
	f->offset = off;
	f->size = size;
	f->bit_offset = bit_off;
	f->bit_size = bit_size;
	snprintf(f->type, sizeof(f->type), "%s", type);
	return 0;
}

static int walk_members(const struct btf *btf, struct btf_layout *l, const char *st,
			const struct btf_type *t, uint32_t base_bits, const char *prefix, int depth)
{
	const struct btf_member *m = btf_members(t);
	int vlen = btf_vlen(t);

	for (int i = 0; i < vlen; i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		uint32_t bits = base_bits + btf_member_bit_offset(t, i);
		uint32_t bitsz = btf_member_bitfield_size(t, i);
		int tid = btf__resolve_type(btf, m->type);
		const struct btf_type *mt = tid > 0 ? btf__type_by_id(btf, tid) : NULL;
		long long size = btf__resolve_size(btf, m->type);
		char path[96], type[64];
		int r;

		if (!name || !*name) {
			/* Anonymous struct/union: its members belong to us. */
			if (mt && btf_is_composite(mt)) {
				r = walk_members(btf, l, st, mt, bits, prefix, depth);
				if (r < 0)
					return r;
			}
			continue;
		}
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", name);
		type_name(btf, m->type, type, sizeof(type));
		r = layout_add(l, st, path, (bits - bits % 8) / 8, size < 0 ? 0 : (uint32_t)size,
			       bitsz ? bits % 8 : 0, bitsz, type);
		if (r < 0)
			return r;
		if (mt && btf_is_composite(mt) && depth < BTF_MAX_DEPTH) {
			r = walk_members(btf, l, st, mt, bits, path, depth + 1);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int btf_layout_collect(const char *path, struct btf_layout *ret)
{
	struct btf_layout l = {};
	struct btf *btf;
	int r = 0;

	btf = path ? btf__parse(path, NULL) : btf__load_vmlinux_btf();
	if (!btf) {
		r = -errno;
		if (r == 0)
			r = -ENODATA;
		return log_error_errno(r, "Failed to load BTF from %s: %m",
				       path ?: "/sys/kernel/btf/vmlinux");
	}

	for (const char *const *st = btf_layout_structs; *st; st++) {
		int id = btf__find_by_name_kind(btf, *st, BTF_KIND_STRUCT);
		const struct btf_type *t;

		if (id < 0) {
			log_debug("BTF has no struct %s, skipping", *st);
			continue;
		}
		t = btf__type_by_id(btf, id);
		r = layout_add(&l, *st, "", 0, t->size, 0, 0, "struct");
		if (r < 0)
			goto fail;
		r = walk_members(btf, &l, *st, t, 0, "", 1);
		if (r < 0)
			goto fail;
	}
	btf__free(btf);
	*ret = l;
	return 0;
fail:
	btf__free(btf);
	btf_layout_done(&l);
	return r == -ENOMEM ? log_oom() : r;
}

void btf_layout_done(struct btf_layout *l)
{
	free(l->fields);
	memset(l, 0, sizeof(*l));
}

const struct btf_field *btf_layout_find(const struct btf_layout *l, const char *struct_name,
					const char *field)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->fields[i].struct_name, struct_name) == 0 &&
		    strcmp(l->fields[i].field, field) == 0)
			return &l->fields[i];
	return NULL;
}

int btf_layout_store(sqlite3 *db, int64_t boot_id, const struct btf_layout *l)
{
	_cleanup_finalize_ sqlite3_stmt *ins = NULL;
	int r;

	r = db_exec_id(db, "DELETE FROM btf_layouts WHERE boot_id = ?1", boot_id);
	if (r < 0)
		return r;

	/* OR IGNORE: a flattened union can name the same path twice; the
	 * first (lowest offset) wins. */
	r = db_prepare(db, &ins,
		       "INSERT OR IGNORE INTO btf_layouts(boot_id, struct, field, offset, size,"
		       " bit_offset, bit_size, type) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n; i++) {
		const struct btf_field *f = &l->fields[i];

		sqlite3_bind_int64(ins, 1, boot_id);
		sqlite3_bind_text(ins, 2, f->struct_name, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, f->field, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 4, f->offset);
		sqlite3_bind_int64(ins, 5, f->size);
		sqlite3_bind_int64(ins, 6, f->bit_offset);
		sqlite3_bind_int64(ins, 7, f->bit_size);
		sqlite3_bind_text(ins, 8, f->type, -1, SQLITE_STATIC);
		r = db_step_done(db, ins);
		if (r < 0)
			return r;
	}
	return 0;
}
