// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "spike.h"
#include "sysstat.h"
#include "util.h"

/*
 * The files a free counter is read from, kept open: a reading is one
 * pread each from offset 0. /proc/stat (7 us) every reading;
 * /proc/interrupts (60 us here, more with more CPUs and IRQs) and
 * /proc/vmstat (20 us) every SPIKE_SLOW_EVERY readings.
 */
static const struct {
	const char *path;
	bool every_reading;
} spike_files[NR_PATH_FREE_FILES] = {
	[PATH_FREE_STAT] = { "/proc/stat", true },
	[PATH_FREE_VMSTAT] = { "/proc/vmstat", false },
	[PATH_FREE_INTERRUPTS] = { "/proc/interrupts", false },
};

_Static_assert(SPIKE_MAX_COUNTERS <= 32, "struct spike_reading's present is 32 bits");

struct spike_watch {
	int fd[NR_PATH_FREE_FILES];	/* -1: not needed or not readable */
	bool tried[NR_PATH_FREE_FILES];	/* opened (or failed to) already */
	char *buf;
	size_t size;
	uint64_t reads;			/* spike_watch_read() calls */
	size_t n;
	struct {
		const struct path_free *def;	/* the table's: its file and field */
		uint64_t v;		/* the last reading ... */
		int64_t mono_ns;	/* ... and when; 0: none yet */
		double hist[SPIKE_HISTORY];	/* rates, a ring */
		size_t n_hist, pos;
	} c[SPIKE_MAX_COUNTERS];
};

size_t spike_watch_count(const struct spike_watch *w)
{
	return w ? w->n : 0;
}

const char *spike_counter_name(const struct spike_watch *w, size_t c)
{
	return w && c < w->n ? w->c[c].def->field : "?";
}

/* The file of a free counter, opened on first use; -1 when it cannot be. */
static int file_fd(struct spike_watch *w, enum path_free_file f)
{
	if (!w->tried[f]) {
		w->tried[f] = true;
		w->fd[f] = open(spike_files[f].path, O_RDONLY | O_CLOEXEC);
	}
	return w->fd[f];
}

/* Path p's free counter f, unless a path named it already. */
static void watch_counter(struct spike_watch *w, const struct path_def *p, const struct path_free *f)
{
	for (size_t c = 0; c < w->n; c++)
		if (w->c[c].def->file == f->file && strcmp(w->c[c].def->field, f->field) == 0)
			return;
	if (w->n == SPIKE_MAX_COUNTERS)	/* paths.c keeps the table within it */
		return;
	if (file_fd(w, f->file) < 0) {
		log_info("Cannot open %s: no spike watch on %s's %s, ignoring", spike_files[f->file].path,
			 p->id, f->field);
		return;
	}
	w->c[w->n++].def = f;
}

struct spike_watch *spike_watch_new(void)
{
	struct spike_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	for (int f = 0; f < NR_PATH_FREE_FILES; f++)
		w->fd[f] = -1;
	/* /proc/interrupts of a big host is tens of KiB; grown on demand. */
	w->size = 16384;
	w->buf = malloc(w->size);
	if (!w->buf) {
		free(w);
		return NULL;
	}
	for (size_t i = 0; i < paths_count(); i++) {
		const struct path_def *p = path_get(i);

		for (size_t k = 0; k < p->nr_free; k++)
			watch_counter(w, p, &p->free[k]);
	}
	if (!w->n) {
		spike_watch_free(w);
		return NULL;
	}
	return w;
}

void spike_watch_free(struct spike_watch *w)
{
	if (!w)
		return;
	for (int f = 0; f < NR_PATH_FREE_FILES; f++)
		if (w->fd[f] >= 0)
			close(w->fd[f]);
	free(w->buf);
	free(w);
}

/* The whole file into w->buf, NUL-terminated: one pread when it fits. */
static int read_whole(struct spike_watch *w, int fd)
{
	for (;;) {
		ssize_t n = pread(fd, w->buf, w->size - 1, 0);
		char *b;

		if (n < 0)
			return -errno;
		if ((size_t)n < w->size - 1) {
			w->buf[n] = '\0';
			return 0;
		}
		/* Filled the buffer: maybe more; read it again, bigger. */
		b = realloc(w->buf, w->size * 2);
		if (!b)
			return -ENOMEM;
		w->buf = b;
		w->size *= 2;
	}
}

/* Counter c's value in w->buf, its file's text; 0 or -EBADMSG. */
static int counter_parse(const struct spike_watch *w, size_t c, uint64_t *ret)
{
	const struct path_free *f = w->c[c].def;

	return f->file == PATH_FREE_INTERRUPTS ? interrupts_row_parse(w->buf, f->field, ret) :
						 proc_line_parse(w->buf, f->field, ret);
}

int spike_watch_read(struct spike_watch *w, struct spike_reading *ret)
{
	struct timespec ts;

	memset(ret, 0, sizeof(*ret));
	for (int f = 0; f < NR_PATH_FREE_FILES; f++) {
		if (!spike_files[f].every_reading && w->reads % SPIKE_SLOW_EVERY)
			continue;
		if (w->fd[f] < 0 || read_whole(w, w->fd[f]) < 0)
			continue;
		for (size_t c = 0; c < w->n; c++)
			if (w->c[c].def->file == (enum path_free_file)f && counter_parse(w, c, &ret->v[c]) == 0)
				ret->present |= 1u << c;
	}
	w->reads++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ret->mono_ns = (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
	return ret->present ? 0 : -ENOENT;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, size_t n)
{
	double s[SPIKE_HISTORY];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

uint64_t spike_watch_reads(const struct spike_watch *w)
{
	return w ? w->reads : 0;
}

bool spike_watch_ready(const struct spike_watch *w)
{
	bool any = false;

	/* Every counter this host has must have its baseline. */
	for (size_t c = 0; w && c < w->n; c++) {
		if (!w->c[c].mono_ns)
			continue;
		if (w->c[c].n_hist < SPIKE_MIN_HISTORY)
			return false;
		any = true;
	}
	return any;
}

int spike_watch_feed(struct spike_watch *w, const struct spike_reading *r, double factor,
		     double min_rate, int cpus, struct spike_hit *ret)
{
	double best = 0, floor = min_rate * (cpus > 0 ? cpus : 1);
	int hit = 0;

	for (size_t c = 0; c < w->n; c++)
		if ((r->present & (1u << c)) && w->c[c].mono_ns && r->mono_ns <= w->c[c].mono_ns)
			return -EINVAL;
	for (size_t c = 0; c < w->n; c++) {
		typeof(w->c[0]) *k = &w->c[c];
		double rate, limit;
		uint64_t d;

		if (!(r->present & (1u << c)))
			continue;	/* not read this time (or absent) */
		if (!k->mono_ns) {
			k->v = r->v[c];
			k->mono_ns = r->mono_ns;
			continue;	/* the first reading has no rate */
		}
		d = r->v[c] >= k->v ? r->v[c] - k->v : 0;	/* reset: 0 */
		/* Per second of this counter's own span, so a late
		 * reading is not a spike. */
		rate = (double)d * 1e9 / (double)(r->mono_ns - k->mono_ns);
		/* Judged against the history before this rate joins it. */
		if (factor > 0 && k->n_hist >= SPIKE_MIN_HISTORY) {
			double m = median(k->hist, k->n_hist);

			limit = factor * m > floor ? factor * m : floor;
			if (rate > limit && rate / limit > best) {
				best = rate / limit;
				ret->counter = c;
				ret->rate = rate;
				ret->median = m;
				hit = 1;
			}
		}
		k->hist[k->pos] = rate;
		k->pos = (k->pos + 1) % SPIKE_HISTORY;
		if (k->n_hist < SPIKE_HISTORY)
			k->n_hist++;
		k->v = r->v[c];
		k->mono_ns = r->mono_ns;
	}
	return hit;
}
