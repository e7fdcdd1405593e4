// SPDX-License-Identifier: GPL-2.0
/*
 * trace.dat version 6, written from a tracefs instance (tracedat.h). The
 * layout is trace-cmd.dat.v6(5)'s; where the man page is silent, it is
 * what trace-cmd 3.1 writes and libtracecmd reads:
 * - no TRACECLOCK option, as trace-cmd extract writes none: with one
 *   (and the instance's trace_clock after the CPUs' offset table) naming
 *   "boot", libtracecmd 3.1 takes the times for a counter's and trace-cmd
 *   report prints them as raw numbers; without, it prints seconds, which
 *   CLOCK_BOOTTIME's nanoseconds are;
 * - a CPUSTAT option per CPU holds "CPU: N\n" and that CPU's stats file,
 *   NUL-terminated (trace-cmd report --stat prints them);
 * - numbers are in the writer's byte order, which the initial format's
 *   endianness byte names.
 * Every file is read once into memory and written with its size in front:
 * a file that changes while it is read (saved_cmdlines, /proc/kallsyms)
 * cannot leave a size that disagrees with its bytes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tracedat.h"
#include "util.h"

#define OPTION_DONE		0
#define OPTION_CPUSTAT		2
#define OPTION_UNAME		5

struct out {
	int fd;
	uint64_t off;
	int err;		/* the first write's failure, -errno */
	char *what;		/* what failed, for the message */
	size_t what_len;
};

static void say(struct out *o, const char *what)
{
	snprintf(o->what, o->what_len, "%s", what);
}

static void put(struct out *o, const void *p, size_t n)
{
	const char *c = p;

	while (!o->err && n) {
		ssize_t w = write(o->fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? -errno : -EIO;
			say(o, "writing");
			return;
		}
		c += w;
		n -= (size_t)w;
		o->off += (uint64_t)w;
	}
}

static void put16(struct out *o, uint16_t v) { put(o, &v, sizeof(v)); }
static void put32(struct out *o, uint32_t v) { put(o, &v, sizeof(v)); }
static void put64(struct out *o, uint64_t v) { put(o, &v, sizeof(v)); }

/* buf (len bytes) after its size, in width bytes (4 or 8) */
static void put_sized(struct out *o, const char *buf, size_t len, int width)
{
	if (width == 4)
		put32(o, (uint32_t)len);
	else
		put64(o, len);
	put(o, buf, len);
}

/* Zeros up to the next multiple of page. */
static void pad_to(struct out *o, uint64_t page)
{
	static const char zero[512];
	uint64_t n = (page - o->off % page) % page;

	while (n) {
		size_t k = n < sizeof(zero) ? (size_t)n : sizeof(zero);

		put(o, zero, k);
		n -= k;
	}
}

/*
 * A file read whole (tracefs files say size 0), written after its size;
 * a file that is not there is written empty where optional.
 */
static int put_file(struct out *o, const char *path, int width, bool optional)
{
	_cleanup_free_ char *buf = NULL;
	ssize_t n = read_file(path, &buf);

	if (n == -ENOENT && optional)
		n = 0;
	if (n < 0) {
		say(o, path);
		return (int)n;
	}
	put_sized(o, buf, (size_t)n, width);
	return o->err;
}

/* A file of the top-level tracefs directory (read, never written). */
static int put_tracing_file(struct out *o, const char *name, int width, bool optional)
{
	char *path = tracefs_get_tracing_file(name);
	int r;

	if (!path) {
		say(o, name);
		return -ENOENT;
	}
	r = put_file(o, path, width, optional);
	tracefs_put_tracing_file(path);
	return r;
}

/* The ftrace formats: their number, then each, sized. */
static int put_ftrace_formats(struct out *o)
{
	char *dir = tracefs_get_tracing_file("events/ftrace");
	char **bufs = NULL;
	ssize_t *lens = NULL;
	size_t n = 0, alloc = 0, alloc2 = 0;
	struct dirent *de;
	DIR *d = dir ? opendir(dir) : NULL;
	int r = 0;

	while (d && r == 0 && (de = readdir(d))) {
		char path[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/format", dir, de->d_name);
		if (grow_array((void **)&bufs, &alloc, sizeof(*bufs), n + 1) < 0 ||
		    grow_array((void **)&lens, &alloc2, sizeof(*lens), n + 1) < 0) {
			r = -ENOMEM;
			break;
		}
		bufs[n] = NULL;
		lens[n] = read_file(path, &bufs[n]);
		if (lens[n] >= 0)
			n++;	/* a directory without a format is not an event */
	}
	if (d)
		closedir(d);
	tracefs_put_tracing_file(dir);
	put32(o, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_sized(o, bufs[i], (size_t)lens[i], 8);
		free(bufs[i]);
	}
	free(bufs);
	free(lens);
	if (r < 0)
		say(o, "reading the ftrace formats");
	return r ?: o->err;
}

/* The events' formats, by system in their order of first appearance. */
static int put_event_formats(struct out *o, const struct tracedat_event *ev, size_t n_ev)
{
	size_t nsys = 0;
	int r = 0;

	for (size_t i = 0; i < n_ev; i++) {
		size_t k = 0;

		while (k < i && strcmp(ev[k].system, ev[i].system))
			k++;
		nsys += k == i;
	}
	put32(o, (uint32_t)nsys);
	for (size_t i = 0; i < n_ev && r == 0; i++) {
		size_t k = 0, count = 0;

		while (k < i && strcmp(ev[k].system, ev[i].system))
			k++;
		if (k < i)
			continue;	/* its system is written */
		for (size_t j = i; j < n_ev; j++)
			count += strcmp(ev[j].system, ev[i].system) == 0;
		put(o, ev[i].system, strlen(ev[i].system) + 1);
		put32(o, (uint32_t)count);
		for (size_t j = i; j < n_ev && r == 0; j++) {
			char name[512];

			if (strcmp(ev[j].system, ev[i].system))
				continue;
			snprintf(name, sizeof(name), "events/%s/%s/format", ev[j].system, ev[j].name);
			r = put_tracing_file(o, name, 8, false);
		}
	}
	return r ?: o->err;
}

/* What comes before the options: trace-cmd.dat.v6(5) up to the CPU count. */
static int put_headers(struct out *o, const struct tracedat_event *ev, size_t n_ev, uint32_t page)
{
	static const char magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
	const uint16_t probe = 1;
	char flags[2] = { *(const char *)&probe ? 0 : 1, (char)sizeof(long) };
	int r;

	put(o, magic, sizeof(magic));
	put(o, "6", 2);
	put(o, flags, 2);
	put32(o, page);
	put(o, "header_page", 12);
	r = put_tracing_file(o, "events/header_page", 8, false);
	put(o, "header_event", 13);
	if (r == 0)
		r = put_tracing_file(o, "events/header_event", 8, false);
	if (r == 0)
		r = put_ftrace_formats(o);
	if (r == 0)
		r = put_event_formats(o, ev, n_ev);
	if (r == 0)
		r = put_file(o, "/proc/kallsyms", 4, true);
	if (r == 0)
		r = put_tracing_file(o, "printk_formats", 4, true);
	if (r == 0)
		r = put_tracing_file(o, "saved_cmdlines", 8, true);
	return r ?: o->err;
}

/* An option: its id, its size, its bytes. */
static void put_option(struct out *o, uint16_t id, const void *p, size_t n)
{
	put16(o, id);
	put32(o, (uint32_t)n);
	put(o, p, n);
}

static int put_options(struct out *o, struct tracefs_instance *inst, int cpus)
{
	struct utsname u;
	char buf[512];

	put(o, "options  ", 10);
	for (int c = 0; c < cpus; c++) {
		char file[64], *stats;
		int n;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", c);
		stats = tracefs_instance_file_read(inst, file, NULL);
		if (!stats)
			continue;
		n = snprintf(buf, sizeof(buf), "CPU: %d\n%s", c, stats);
		free(stats);
		if (n > 0)
			put_option(o, OPTION_CPUSTAT, buf, strnlen(buf, sizeof(buf) - 1) + 1);
	}
	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s %s %s", u.sysname, u.nodename, u.release,
			 u.version, u.machine);
		put_option(o, OPTION_UNAME, buf, strlen(buf) + 1);
	}
	put16(o, OPTION_DONE);
	return o->err;
}

/* One CPU's ring, page by page, until it is empty; its size in *ret. */
static int put_ring(struct out *o, struct tracefs_instance *inst, int cpu, char *page,
		    uint32_t page_size, uint64_t *ret)
{
	char file[64], *path;
	_cleanup_close_ int fd = -1;
	uint64_t start = o->off;
	ssize_t n;

	snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	path = tracefs_instance_get_file(inst, file);
	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	tracefs_put_tracing_file(path);
	*ret = 0;
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* a CPU tracefs does not trace */
	/* A read returns a whole page, its header's commit saying how much of it holds events. */
	while ((n = read(fd, page, page_size)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			put(o, page, (size_t)n);
	if (n < 0 && errno != EAGAIN) {
		say(o, "reading the ring");
		return -errno;
	}
	*ret = o->off - start;
	return o->err;
}

/* "flyrecord", the CPUs' offsets and sizes, the rings. */
static int put_rings(struct out *o, struct tracefs_instance *inst, int cpus, uint32_t page_size)
{
	_cleanup_free_ uint64_t *table = calloc((size_t)cpus * 2, sizeof(uint64_t));
	_cleanup_free_ char *page = malloc(page_size);
	uint64_t table_off;
	int r = 0;

	if (!table || !page)
		return -ENOMEM;
	put(o, "flyrecord", 10);
	table_off = o->off;
	put(o, table, (size_t)cpus * 2 * sizeof(uint64_t));	/* filled in below */
	for (int c = 0; c < cpus && r == 0; c++) {
		pad_to(o, page_size);
		table[2 * c] = o->off;
		r = put_ring(o, inst, c, page, page_size, &table[2 * c + 1]);
	}
	if (r < 0 || o->err)
		return r ?: o->err;
	if (pwrite(o->fd, table, (size_t)cpus * 2 * sizeof(uint64_t), (off_t)table_off) < 0) {
		say(o, "writing");
		return -errno;
	}
	return 0;
}

int tracedat_write(int fd, struct tracefs_instance *inst, const struct tracedat_event *ev,
		   size_t n_ev, char *what, size_t what_len)
{
	struct out o = { .fd = fd, .what = what, .what_len = what_len };
	long page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	int r;

	say(&o, "");
	if (page <= 0 || cpus <= 0)
		return -EINVAL;
	r = put_headers(&o, ev, n_ev, (uint32_t)page);
	if (r == 0) {
		put32(&o, (uint32_t)cpus);
		r = put_options(&o, inst, (int)cpus);
	}
	if (r == 0)
		r = put_rings(&o, inst, (int)cpus, (uint32_t)page);
	return r;
}
