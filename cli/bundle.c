// SPDX-License-Identifier: GPL-2.0
/*
 * Recording bundles (bundle.h): a ustar archive (POSIX.1-1988 headers,
 * 512-byte blocks, two zero blocks at the end) through zlib's gzip
 * stream, which carries its own CRC-32 and length, so a truncated or
 * altered stream fails to read; each member's size and CRC-32 are also in
 * the manifest, so a member swapped for another whole one is refused too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "bundle.h"
#include "kallsyms.h"
#include "util.h"

#define BLOCK		512
#define MAX_MEMBER	(4ULL << 30)	/* bytes: the largest member, a perf.data */
#define MAX_MANIFEST	(64 << 10)

/* The members a bundle may hold, each with the most it may take when
 * extracted (a 6.18 kernel's kallsyms is 5 MiB, its BTF 6 MiB). */
static const struct { const char *name; uint64_t max; } members[] = {
	{ "perf.data", MAX_MEMBER },
	{ "kallsyms", 256ULL << 20 },
	{ "btf", 256ULL << 20 },
};

static int say(char *err, size_t len, int r, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int say(char *err, size_t len, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return r;
}

/* --- writing --------------------------------------------------------------------- */

/* v in len - 1 octal digits, zero-filled, then a NUL (v fits: sizes are bounded). */
static void octal(char *field, size_t len, uint64_t v)
{
	for (size_t i = len - 1; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
	field[len - 1] = '\0';
}

static int put_header(gzFile gz, const char *name, uint64_t size, int64_t mtime)
{
	unsigned char h[BLOCK] = { 0 };
	unsigned int sum = 0;

	snprintf((char *)h, 100, "%s", name);
	octal((char *)h + 100, 8, 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, (uint64_t)(mtime > 0 ? mtime : 0));
	memset(h + 148, ' ', 8);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	for (size_t i = 0; i < BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	return gzwrite(gz, h, BLOCK) == BLOCK ? 0 : -EIO;
}

static int put_padding(gzFile gz, uint64_t size)
{
	static const char zero[BLOCK];
	size_t pad = (BLOCK - size % BLOCK) % BLOCK;

	return pad && gzwrite(gz, zero, (unsigned int)pad) != (int)pad ? -EIO : 0;
}

/* The file's size and CRC-32, read once before it is written. */
static int file_crc(const char *path, uint64_t *size, uint32_t *crc)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[65536];
	ssize_t n;
	uLong c = crc32(0, Z_NULL, 0);

	*size = 0;
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		c = crc32(c, (const Bytef *)buf, (uInt)n);
		*size += (uint64_t)n;
	}
	*crc = (uint32_t)c;
	return n < 0 ? -errno : 0;
}

static int put_member(gzFile gz, const struct bundle_member *f, uint64_t size)
{
	_cleanup_close_ int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	char buf[65536];
	uint64_t left = size;
	struct stat st;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	r = put_header(gz, f->name, size, st.st_mtim.tv_sec);
	while (r == 0 && left) {
		ssize_t n = read(fd, buf, left < sizeof(buf) ? (size_t)left : sizeof(buf));

		if (n <= 0)
			return n < 0 ? -errno : -EAGAIN;	/* it shrank since its CRC */
		if (gzwrite(gz, buf, (unsigned int)n) != n)
			return -EIO;
		left -= (uint64_t)n;
	}
	return r ?: put_padding(gz, size);
}

static int manifest_text(char **ret, const struct bundle_manifest *m,
			 const struct bundle_member *files, size_t n, uint64_t *sizes)
{
	char *t = NULL;
	int r = str_appendf(&t, "", "mmhitm-bundle %d\nhostname %s\nkernel_release %s\n"
			    "kernel_build_id %s\nboot_id %s\nvmemmap_base 0x%" PRIx64
			    "\npage_offset_base 0x%" PRIx64 "\nlayout_source %s\nsampler %s\n"
			    "created %s\n",
			    BUNDLE_VERSION, m->hostname[0] ? m->hostname : "-",
			    m->release[0] ? m->release : "-", m->build_id[0] ? m->build_id : "-",
			    m->boot_id[0] ? m->boot_id : "-", m->vmemmap_base, m->page_offset,
			    m->layout_source[0] ? m->layout_source : "-", m->sampler, m->created);

	for (size_t i = 0; r >= 0 && i < m->nr_markers; i++)
		r = str_appendf(&t, "", "marker %s\n", m->markers[i]);
	if (r >= 0 && m->patches[0])
		r = str_appendf(&t, "", "patches %s\n", m->patches);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		uint32_t crc;

		r = file_crc(files[i].path, &sizes[i], &crc);
		if (r >= 0)
			r = str_appendf(&t, "", "file %s %" PRIu64 " %08x\n", files[i].name, sizes[i], crc);
	}
	if (r < 0) {
		free(t);
		return r;
	}
	*ret = t;
	return 0;
}

int bundle_write(const char *out, const struct bundle_manifest *m,
		 const struct bundle_member *files, size_t n)
{
	_cleanup_free_ char *tmp = NULL, *text = NULL;
	uint64_t sizes[BUNDLE_MAX_FILES];
	gzFile gz;
	int fd, r;

	if (n > BUNDLE_MAX_FILES)
		return -E2BIG;
	r = manifest_text(&text, m, files, n, sizes);
	if (r < 0)
		return r;
	if (asprintf(&tmp, "%s.tmp", out) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	gz = gzdopen(fd, "wb6");
	if (!gz) {
		close(fd);
		unlink(tmp);
		return -ENOMEM;
	}
	r = put_header(gz, "MANIFEST", strlen(text), (int64_t)time(NULL));
	if (r == 0 && gzwrite(gz, text, (unsigned int)strlen(text)) != (int)strlen(text))
		r = -EIO;
	if (r == 0)
		r = put_padding(gz, strlen(text));
	for (size_t i = 0; r == 0 && i < n; i++)
		r = put_member(gz, &files[i], sizes[i]);
	if (r == 0) {
		static const char end[2 * BLOCK];

		r = gzwrite(gz, end, sizeof(end)) == sizeof(end) ? 0 : -EIO;
	}
	if (gzclose(gz) != Z_OK && r == 0)
		r = -EIO;
	if (r == 0 && rename(tmp, out) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/* --- reading ------------------------------------------------------------------------- */

int bundle_sniff(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char m[2];

	if (fd < 0)
		return -errno;
	return read(fd, m, 2) == 2 && m[0] == 0x1f && m[1] == 0x8b;
}

struct reader {
	gzFile gz;
	char *err;
	size_t errlen;
};

/* Exactly n bytes, or a line in err: truncated, or what zlib found wrong. */
static int get(struct reader *rd, void *buf, size_t n, const char *what)
{
	int got = gzread(rd->gz, buf, (unsigned int)n), zerr;
	const char *msg;

	if (got == (int)n)
		return 0;
	msg = gzerror(rd->gz, &zerr);
	/* zlib's message starts with the file's name ("<fd:3>: "): only its words */
	if (msg && msg[0] == '<' && strstr(msg, ">: "))
		msg = strstr(msg, ">: ") + 3;
	if (got >= 0 && (zerr == Z_OK || zerr == Z_BUF_ERROR))
		return say(rd->err, rd->errlen, -EPROTO, "truncated in %s", what);
	return say(rd->err, rd->errlen, -EPROTO, "corrupt in %s (%s)", what,
		   msg && *msg ? msg : "gzip stream");
}

static uint64_t field_octal(const unsigned char *p, size_t len, bool *ok)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < len && p[i] == ' ')
		i++;
	for (; i < len && p[i] >= '0' && p[i] <= '7'; i++)
		v = v * 8 + (uint64_t)(p[i] - '0');
	if (i < len && p[i] != '\0' && p[i] != ' ')
		*ok = false;
	return v;
}

/* A member's header: its name, size and mtime; 1 at the archive's end. */
static int get_header(struct reader *rd, char name[101], uint64_t *size, int64_t *mtime)
{
	unsigned char h[BLOCK];
	unsigned int sum = 0;
	bool ok = true, zero = true;
	int r = get(rd, h, BLOCK, "a member's header");

	if (r < 0)
		return r;
	for (size_t i = 0; i < BLOCK; i++) {
		zero &= h[i] == 0;
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	}
	if (zero)
		return 1;
	if (memcmp(h + 257, "ustar", 5) || field_octal(h + 148, 8, &ok) != sum || !ok)
		return say(rd->err, rd->errlen, -EPROTO, "a member's header is not a tar header");
	memcpy(name, h, 100);
	name[100] = '\0';
	*size = field_octal(h + 124, 12, &ok);
	*mtime = (int64_t)field_octal(h + 136, 12, &ok);
	if (!ok || (h[156] != '0' && h[156] != '\0') || *size > MAX_MEMBER)
		return say(rd->err, rd->errlen, -EPROTO, "member %.100s: not a plain file of a sane size",
			   name);
	return 0;
}

/* The member's bytes into dir/name, its CRC-32 into *crc. */
static int get_member(struct reader *rd, const char *dir, const char *name, uint64_t size,
		      int64_t mtime, uint32_t *crc)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	uint64_t padded = size + (BLOCK - size % BLOCK) % BLOCK, done = 0;
	int r = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return say(rd->err, rd->errlen, -errno, "cannot write %s: %s", path, strerror(errno));
	while (r == 0 && done < padded) {
		size_t n = padded - done < sizeof(buf) ? (size_t)(padded - done) : sizeof(buf);
		size_t keep = done >= size ? 0 : (size_t)(size - done < n ? size - done : n);

		r = get(rd, buf, n, name);
		if (r < 0)
			break;
		c = crc32(c, (const Bytef *)buf, (uInt)keep);
		if (keep && write(fd, buf, keep) != (ssize_t)keep)
			r = say(rd->err, rd->errlen, -EIO, "cannot write %s: %s", path,
				strerror(errno ?: EIO));
		done += n;
	}
	/* the recording's time: import reads a file's mtime where it lacks clocks */
	if (r == 0 && mtime > 0)
		futimens(fd, (struct timespec[2]){ { .tv_nsec = UTIME_OMIT }, { .tv_sec = mtime } });
	*crc = (uint32_t)c;
	return r;
}

struct expect {
	char name[32];
	uint64_t size;
	uint32_t crc;
	bool seen;
};

static int parse_u64_hex(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 16);
	return errno || end == s || *end ? -EINVAL : 0;
}

static int manifest_file(struct reader *rd, const char *val, struct expect *ex, size_t *nex)
{
	char name[32];
	uint64_t size;
	unsigned int crc;
	bool known = false;

	if (sscanf(val, "%31s %" SCNu64 " %x", name, &size, &crc) != 3 || size > MAX_MEMBER)
		return say(rd->err, rd->errlen, -EPROTO, "the manifest's line 'file %.60s' is malformed",
			   val);
	for (size_t i = 0; i < ARRAY_SIZE(members); i++)
		if (strcmp(name, members[i].name) == 0) {
			known = true;
			if (size > members[i].max)
				return say(rd->err, rd->errlen, -EFBIG, "the manifest gives %s %" PRIu64
					   " bytes, more than the %" PRIu64 " MiB it may hold", name, size,
					   members[i].max >> 20);
		}
	for (size_t i = 0; i < *nex; i++)
		if (strcmp(ex[i].name, name) == 0)
			known = false;
	if (!known || *nex >= BUNDLE_MAX_FILES)
		return say(rd->err, rd->errlen, -EPROTO, "the manifest lists '%s', unknown or twice", name);
	snprintf(ex[*nex].name, sizeof(ex[*nex].name), "%s", name);
	ex[*nex].size = size;
	ex[*nex].crc = crc;
	ex[(*nex)++].seen = false;
	return 0;
}

static int manifest_line(struct reader *rd, char *line, struct bundle_manifest *m,
			 struct expect *ex, size_t *nex)
{
	char *val = strchr(line, ' ');
	struct { const char *key; char *dst; size_t len; } strs[] = {
		{ "hostname", m->hostname, sizeof(m->hostname) },
		{ "kernel_release", m->release, sizeof(m->release) },
		{ "kernel_build_id", m->build_id, sizeof(m->build_id) },
		{ "boot_id", m->boot_id, sizeof(m->boot_id) },
		{ "sampler", m->sampler, sizeof(m->sampler) },
		{ "layout_source", m->layout_source, sizeof(m->layout_source) },
		{ "patches", m->patches, sizeof(m->patches) },
		{ "created", m->created, sizeof(m->created) },
	};

	if (!val)
		return *line ? say(rd->err, rd->errlen, -EPROTO, "the manifest's line '%.60s' has no "
				   "value", line) : 0;
	*val++ = '\0';
	if (strcmp(line, "file") == 0)
		return manifest_file(rd, val, ex, nex);
	if (strcmp(line, "marker") == 0) {
		if (m->nr_markers >= BUNDLE_MAX_MARKERS || strlen(val) >= sizeof(m->markers[0]) ||
		    strspn(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.$")
		    != strlen(val))
			return say(rd->err, rd->errlen, -EPROTO, "the manifest's marker '%.60s' is not "
				   "a symbol (or one too many)", val);
		snprintf(m->markers[m->nr_markers++], sizeof(m->markers[0]), "%s", val);
		return 0;
	}
	if (strcmp(line, "vmemmap_base") == 0 || strcmp(line, "page_offset_base") == 0) {
		uint64_t *dst = line[0] == 'v' ? &m->vmemmap_base : &m->page_offset;

		return parse_u64_hex(val, dst) < 0 ?
			say(rd->err, rd->errlen, -EPROTO, "the manifest's %s '%.40s' is not a "
			    "number", line, val) : 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(strs); i++)
		if (strcmp(line, strs[i].key) == 0)
			snprintf(strs[i].dst, strs[i].len, "%s", strcmp(val, "-") ? val : "");
	return 0;	/* a key of a later version: not needed to read this one */
}

static int parse_manifest(struct reader *rd, char *text, struct bundle_manifest *m,
			  struct expect *ex, size_t *nex)
{
	char *save = NULL, *line = strtok_r(text, "\n", &save);
	int version = 0, r = 0;

	if (!line || sscanf(line, "mmhitm-bundle %d", &version) != 1)
		return say(rd->err, rd->errlen, -EPROTO, "its first member is not an mmhitm manifest");
	if (version > BUNDLE_VERSION)
		return say(rd->err, rd->errlen, -EPROTONOSUPPORT, "a bundle of version %d, newer than "
			   "this mmhitm reads (%d): update mmhitm", version, BUNDLE_VERSION);
	while (r == 0 && (line = strtok_r(NULL, "\n", &save)))
		r = manifest_line(rd, line, m, ex, nex);
	if (r == 0 && m->boot_id[0] && !boot_id_valid(m->boot_id))
		r = say(rd->err, rd->errlen, -EPROTO, "the manifest's boot_id '%.40s' is not a UUID",
			m->boot_id);
	for (size_t i = 0; r == 0 && i < *nex; i++)
		if (strcmp(ex[i].name, "perf.data") == 0)
			return 0;
	return r ?: say(rd->err, rd->errlen, -EPROTO, "the manifest lists no perf.data");
}

/* The MANIFEST member, first, parsed. */
static int get_manifest(struct reader *rd, struct bundle_manifest *m, struct expect *ex,
			size_t *nex)
{
	_cleanup_free_ char *text = NULL;
	char name[101];
	uint64_t size;
	int64_t mtime;
	int r = get_header(rd, name, &size, &mtime);

	if (r == 1 || (r == 0 && (strcmp(name, "MANIFEST") || size > MAX_MANIFEST)))
		return say(rd->err, rd->errlen, -EPROTO, "its first member is not an mmhitm manifest");
	if (r < 0)
		return r;
	text = malloc(size + BLOCK + 1);
	if (!text)
		return -ENOMEM;
	r = get(rd, text, size + (BLOCK - size % BLOCK) % BLOCK, "the manifest");
	if (r < 0)
		return r;
	text[size] = '\0';
	memset(m, 0, sizeof(*m));
	return parse_manifest(rd, text, m, ex, nex);
}

/* What follows the archive's end: zeros, then the gzip trailer checked. */
static int get_end(struct reader *rd)
{
	char buf[BLOCK];
	int n, zerr;

	while ((n = gzread(rd->gz, buf, sizeof(buf))) > 0)
		for (int i = 0; i < n; i++)
			if (buf[i])
				return say(rd->err, rd->errlen, -EPROTO, "data after the archive's end");
	gzerror(rd->gz, &zerr);
	if (n < 0 || (zerr != Z_OK && zerr != Z_BUF_ERROR))
		return say(rd->err, rd->errlen, -EPROTO, "corrupt at its end (gzip check failed)");
	return 0;
}

static int get_members(struct reader *rd, const char *dir, struct expect *ex, size_t nex)
{
	char name[101];
	uint64_t size;
	int64_t mtime;
	uint32_t crc;
	int r;

	while ((r = get_header(rd, name, &size, &mtime)) == 0) {
		struct expect *e = NULL;

		for (size_t i = 0; i < nex; i++)
			if (!ex[i].seen && strcmp(ex[i].name, name) == 0)
				e = &ex[i];
		if (!e)
			return say(rd->err, rd->errlen, -EPROTO, "member '%.60s' is not in the manifest "
				   "(or comes twice)", name);
		if (size != e->size)
			return say(rd->err, rd->errlen, -EPROTO, "%s: %" PRIu64 " bytes, the manifest "
				   "says %" PRIu64, name, size, e->size);
		r = get_member(rd, dir, name, size, mtime, &crc);
		if (r < 0)
			return r;
		if (crc != e->crc)
			return say(rd->err, rd->errlen, -EPROTO, "%s: CRC-32 %08x, the manifest says "
				   "%08x (altered)", name, crc, e->crc);
		e->seen = true;
	}
	if (r < 0)
		return r;
	for (size_t i = 0; i < nex; i++)
		if (!ex[i].seen)
			return say(rd->err, rd->errlen, -EPROTO, "member %s, in the manifest, is missing",
				   ex[i].name);
	return get_end(rd);
}

/* Room in dir for the members the manifest lists, or a line saying not. */
static int room_for(struct reader *rd, const char *dir, const struct expect *ex, size_t nex)
{
	struct statvfs vfs;
	uint64_t need = 0, avail;

	for (size_t i = 0; i < nex; i++)
		need += ex[i].size;
	if (statvfs(dir, &vfs) < 0)
		return say(rd->err, rd->errlen, -errno, "%s: %s", dir, strerror(errno));
	avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	if (avail < need + (1 << 20))
		return say(rd->err, rd->errlen, -ENOSPC, "extracting it takes %" PRIu64 " MiB in %s, "
			   "%" PRIu64 " MiB are free (TMPDIR chooses another directory)",
			   (need >> 20) + 1, dir, avail >> 20);
	return 0;
}

int bundle_extract(const char *path, const char *dir, struct bundle_manifest *m,
		   char *err, size_t errlen)
{
	struct reader rd = { .err = err, .errlen = errlen };
	struct expect ex[BUNDLE_MAX_FILES];
	size_t nex = 0;
	int fd, r;

	err[0] = '\0';
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return say(err, errlen, -errno, "%s", strerror(errno));
	rd.gz = gzdopen(fd, "rb");
	if (!rd.gz) {
		close(fd);
		return say(err, errlen, -ENOMEM, "out of memory");
	}
	gzbuffer(rd.gz, 1 << 17);
	r = get_manifest(&rd, m, ex, &nex);
	if (r == 0)
		r = room_for(&rd, dir, ex, nex);
	if (r == 0)
		r = get_members(&rd, dir, ex, nex);
	gzclose_r(rd.gz);
	return r;
}

/* --- the recording host ------------------------------------------------------------- */

bool kernel_base_valid(uint64_t v)
{
	return v >= 0xff00000000000000ULL && !(v & ((1ULL << 30) - 1));
}

bool boot_id_valid(const char *s)
{
	return strlen(s) == 36 && strspn(s, "0123456789abcdefABCDEF-") == 36;
}

int host_memory_bases(const struct kallsyms *ks, uint64_t *vmemmap_base, uint64_t *page_offset,
		      const char **source)
{
	const struct ksym *vb, *po;
	struct utsname u;
	int r = -ENOENT;

	*vmemmap_base = *page_offset = 0;
	*source = NULL;
	if (!ks)
		return -ENOENT;
	vb = kallsyms_find(ks, "vmemmap_base");
	po = kallsyms_find(ks, "page_offset_base");
	if (vb)
		r = kallsyms_read_running_u64(vb->addr, vmemmap_base);
	if (r >= 0 && po)
		r = kallsyms_read_running_u64(po->addr, page_offset);
	if (r >= 0) {
		*source = "running kernel";
	} else if (!vb && !po && uname(&u) == 0 && strcmp(u.machine, "x86_64") == 0) {
		/* An x86_64 kernel without CONFIG_DYNAMIC_MEMORY_LAYOUT (no
		 * KASLR of memory, 4-level) has no such variables: its bases
		 * are the constants of Documentation/arch/x86/x86_64/mm.rst.
		 * /proc/kallsyms is complete, so their absence proves it. */
		*vmemmap_base = 0xffffea0000000000ULL;
		*page_offset = 0xffff888000000000ULL;
		*source = "fixed x86_64 layout";
		r = 0;
	} else {
		*vmemmap_base = *page_offset = 0;
	}
	return r;
}

void bundle_remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[4400];

	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}
