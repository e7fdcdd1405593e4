// SPDX-License-Identifier: GPL-2.0
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "kallsyms.h"
#include "log.h"
#include "util.h"

struct kallsyms {
	struct ksym *syms;
	size_t n;
	char *names;		/* one blob; ksym.name/module point into it */
	size_t names_len, names_alloc;
};

/* Stores a string in the blob; returns its offset or -ENOMEM. */
static ssize_t blob_add(struct kallsyms *ks, const char *s, size_t len)
{
	size_t off = ks->names_len;

	if (grow_array((void **)&ks->names, &ks->names_alloc, 1, ks->names_len + len + 1) < 0)
		return -ENOMEM;
	memcpy(ks->names + off, s, len);
	ks->names[off + len] = '\0';
	ks->names_len += len + 1;
	return off;
}

/*
 * A symbol while loading: offsets into the name blob, which moves as it
 * grows, and half the size of a struct ksym. The ksyms are made once the
 * blob is whole, in address order.
 */
struct ksym_raw {
	uint64_t addr;
	uint32_t name_off;
	int32_t mod_off;	/* -1: vmlinux */
};

struct kallsyms_loader {
	struct kallsyms *ks;
	struct ksym_raw *raw;
	size_t n, alloc;
	ssize_t last_mod;
	char last_mod_name[64];
};

/*
 * Splits a /proc/kallsyms line "ADDR TYPE NAME[\t[MODULE]]" in place.
 * False for a line that is not a symbol, or not a place in the kernel.
 */
static bool kallsyms_parse_line(char *line, unsigned long long *ret_addr, char **ret_name,
				char **ret_mod)
{
	char *name, *mod, *end;
	unsigned long long addr;
	char type;

	addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return false;
	type = end[1];
	/* Absolute and undefined symbols are not places in the kernel. */
	if (type == 'a' || type == 'A' || type == 'U')
		return false;
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	mod = strchr(name, '\t');
	if (mod) {
		*mod++ = '\0';
		if (*mod == '[') {
			mod++;
			mod[strcspn(mod, "]")] = '\0';
		}
	}
	*ret_addr = addr;
	*ret_name = name;
	*ret_mod = mod;
	return true;
}

static int kallsyms_loader_add(struct kallsyms_loader *l, uint64_t addr, const char *name,
			       const char *mod)
{
	struct kallsyms *ks = l->ks;
	ssize_t no, mo = -1;

	if (grow_array((void **)&l->raw, &l->alloc, sizeof(*l->raw), l->n + 1) < 0)
		return -ENOMEM;
	no = blob_add(ks, name, strlen(name));
	if (no < 0)
		return -ENOMEM;
	if (mod) {
		/* Module symbols come grouped: share one copy of the name. */
		if (l->last_mod < 0 || strcmp(l->last_mod_name, mod) != 0) {
			l->last_mod = blob_add(ks, mod, strlen(mod));
			if (l->last_mod < 0)
				return -ENOMEM;
			snprintf(l->last_mod_name, sizeof(l->last_mod_name), "%s", mod);
		}
		mo = l->last_mod;
	}
	/* The blob holds a few MB; its offsets fit 31 bits with room. */
	if (mo > INT32_MAX || no > INT32_MAX)
		return -ENOMEM;
	l->raw[l->n++] = (struct ksym_raw){ addr, (uint32_t)no, (int32_t)mo };
	return 0;
}

static int cmp_raw_addr(const void *a, const void *b)
{
	const struct ksym_raw *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * /proc/kallsyms lists vmlinux in address order and the modules, BPF
 * programs and trampolines after it, out of order: sorting the tail alone
 * and merging it in from the back needs a copy of the tail only, where
 * qsort() of the whole table took a copy of all of it (4 MB on 6.18).
 */
static int sort_raw(struct ksym_raw *v, size_t n)
{
	struct ksym_raw *tail;
	size_t p = 1, m, i, j, k;

	while (p < n && v[p - 1].addr <= v[p].addr)
		p++;
	if (p >= n)
		return 0;
	m = n - p;
	tail = malloc(m * sizeof(*tail));
	if (!tail)
		return -ENOMEM;
	memcpy(tail, v + p, m * sizeof(*tail));
	qsort(tail, m, sizeof(*tail), cmp_raw_addr);
	/* From the back: v[0, p) and tail[0, m) into v[0, n). */
	i = p, j = m, k = n;
	while (j > 0) {
		if (i > 0 && v[i - 1].addr > tail[j - 1].addr)
			v[--k] = v[--i];
		else
			v[--k] = tail[--j];
	}
	free(tail);
	return 0;
}

/* The symbols, in address order, each sized up to the next. */
static int kallsyms_finish(struct kallsyms_loader *l)
{
	struct kallsyms *ks = l->ks;

	if (sort_raw(l->raw, l->n) < 0)
		return -ENOMEM;
	ks->syms = malloc((l->n ?: 1) * sizeof(*ks->syms));
	if (!ks->syms)
		return -ENOMEM;
	ks->n = l->n;
	for (size_t i = 0; i < l->n; i++) {
		const struct ksym_raw *r = &l->raw[i];
		/* The last symbol, or one before a module gap, gets a page. */
		uint64_t next = i + 1 < l->n ? l->raw[i + 1].addr : r->addr + 4096;

		ks->syms[i] = (struct ksym){
			.addr = r->addr,
			.size = next - r->addr > (1u << 24) ? 4096 : next - r->addr,
			.name = ks->names + r->name_off,
			.module = r->mod_off >= 0 ? ks->names + r->mod_off : NULL,
		};
	}
	return 0;
}

struct kallsyms *kallsyms_load(const char *path)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct kallsyms_loader l = { .last_mod = -1 };
	char line[512];
	bool nonzero = false;

	f = fopen(path ?: "/proc/kallsyms", "re");
	if (!f)
		return NULL;
	l.ks = calloc(1, sizeof(*l.ks));
	if (!l.ks)
		return NULL;

	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char *name, *mod;

		if (!kallsyms_parse_line(line, &addr, &name, &mod))
			continue;
		if (addr)
			nonzero = true;
		if (kallsyms_loader_add(&l, addr, name, mod) < 0) {
			errno = ENOMEM;
			goto fail;
		}
	}
	if (ferror(f)) {
		errno = EIO;
		goto fail;
	}
	/* All zero: kptr_restrict hid the addresses from us. */
	if (!nonzero) {
		errno = EPERM;
		goto fail;
	}
	if (kallsyms_finish(&l) < 0) {
		errno = ENOMEM;
		goto fail;
	}
	free(l.raw);
	return l.ks;

fail:
	free(l.raw);
	kallsyms_free(l.ks);
	return NULL;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks ? ks->n : 0;
}

const struct ksym *kallsyms_at(const struct kallsyms *ks, size_t i)
{
	return ks && i < ks->n ? &ks->syms[i] : NULL;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!ks || !ks->n)
		return NULL;
	hi = ks->n;
	/* Last symbol with sym.addr <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (ks->syms[lo].addr > addr || addr - ks->syms[lo].addr >= ks->syms[lo].size)
		return NULL;
	return &ks->syms[lo];
}

const struct ksym *kallsyms_find(const struct kallsyms *ks, const char *name)
{
	for (size_t i = 0; ks && i < ks->n; i++)
		if (strcmp(ks->syms[i].name, name) == 0)
			return &ks->syms[i];
	return NULL;
}

int kallsyms_store(sqlite3 *db, int64_t boot_id, const struct ksym *sym)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "INSERT OR IGNORE INTO ksyms(boot_id, addr, size, name, module) "
				"VALUES (?1, ?2, ?3, ?4, ?5)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, (int64_t)sym->addr);
	sqlite3_bind_int64(st, 3, (int64_t)sym->size);
	sqlite3_bind_text(st, 4, sym->name, -1, SQLITE_STATIC);
	if (sym->module)
		sqlite3_bind_text(st, 5, sym->module, -1, SQLITE_STATIC);
	return db_step_done(db, st);
}

int kallsyms_read_running_u64(uint64_t addr, uint64_t *ret)
{
	_cleanup_close_ int fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		return -EBADMSG;
	/* PT_LOAD segments map kernel virtual addresses to file offsets */
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			return -EIO;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr - ph.p_vaddr + 8 > ph.p_filesz)
			continue;
		if (pread(fd, ret, 8, (off_t)(ph.p_offset + (addr - ph.p_vaddr))) != 8)
			return -EIO;
		return 0;
	}
	return -ENOENT;
}

bool kallsyms_running_build_id_is(const char *hex)
{
	_cleanup_close_ int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	unsigned char notes[4096], id[64];
	size_t n = 0;
	ssize_t len;

	if (fd < 0 || !hex)
		return false;
	for (; hex[2 * n] && hex[2 * n + 1] && n < sizeof(id); n++) {
		unsigned int b;

		if (sscanf(hex + 2 * n, "%2x", &b) != 1)
			return false;
		id[n] = (unsigned char)b;
	}
	len = read(fd, notes, sizeof(notes));
	/* the GNU build-id note's descriptor: its bytes in the notes */
	return n >= 8 && len > 0 && memmem(notes, (size_t)len, id, n) != NULL;
}

int kallsyms_running_build_id(char *buf, size_t len)
{
	_cleanup_close_ int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	unsigned char notes[4096];
	ssize_t n;
	size_t o = 0;

	buf[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, notes, sizeof(notes));
	if (n < 0)
		return -errno;
	/* ELF notes: namesz, descsz, type, then name and desc, each 4-aligned */
	while (o + 12 <= (size_t)n) {
		uint32_t namesz = get32(notes + o), descsz = get32(notes + o + 4);
		uint32_t type = get32(notes + o + 8);
		size_t name = o + 12, desc = name + ((namesz + 3) & ~3u);

		if (desc + descsz > (size_t)n)
			break;
		if (type == 3 && namesz == 4 && memcmp(notes + name, "GNU", 4) == 0 &&
		    2 * (size_t)descsz < len) {
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(buf + 2 * i, 3, "%02x", notes[desc + i]);
			return 0;
		}
		o = desc + ((descsz + 3) & ~3u);
	}
	return -ENOENT;
}
