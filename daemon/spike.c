// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "spike.h"
#include "sysstat.h"
#include "util.h"

/* The files, kept open: a reading is one pread each from offset 0. */
static const char *const spike_files[NR_SPIKE_COUNTERS] = {
	[SPIKE_CTXT] = "/proc/stat",
	[SPIKE_TLB] = "/proc/interrupts",
	[SPIKE_PGACTIVATE] = "/proc/vmstat",
};

struct spike_watch {
	int fd[NR_SPIKE_COUNTERS];
	char *buf;
	size_t size;
	unsigned int reads;		/* spike_watch_read() calls */
	struct {
		uint64_t v;		/* the last reading ... */
		int64_t mono_ns;	/* ... and when; 0: none yet */
		double hist[SPIKE_HISTORY];	/* rates, a ring */
		size_t n_hist, pos;
	} c[NR_SPIKE_COUNTERS];
};

const char *spike_counter_name(enum spike_counter c)
{
	static const char *const names[NR_SPIKE_COUNTERS] = {
		[SPIKE_CTXT] = "ctxt",
		[SPIKE_TLB] = "tlb_shootdowns",
		[SPIKE_PGACTIVATE] = "pgactivate",
	};

	return c < NR_SPIKE_COUNTERS ? names[c] : "?";
}

struct spike_watch *spike_watch_new(void)
{
	struct spike_watch *w = calloc(1, sizeof(*w));
	int opened = 0;

	if (!w)
		return NULL;
	/* /proc/interrupts of a big host is tens of KiB; grown on demand. */
	w->size = 16384;
	w->buf = malloc(w->size);
	if (!w->buf) {
		free(w);
		return NULL;
	}
	for (int c = 0; c < NR_SPIKE_COUNTERS; c++) {
		w->fd[c] = open(spike_files[c], O_RDONLY | O_CLOEXEC);
		opened += w->fd[c] >= 0;
	}
	if (!opened) {
		spike_watch_free(w);
		return NULL;
	}
	return w;
}

void spike_watch_free(struct spike_watch *w)
{
	if (!w)
		return;
	for (int c = 0; c < NR_SPIKE_COUNTERS; c++)
		if (w->fd[c] >= 0)
			close(w->fd[c]);
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

int spike_watch_read(struct spike_watch *w, struct spike_reading *ret)
{
	struct timespec ts;

	memset(ret, 0, sizeof(*ret));
	for (int c = 0; c < NR_SPIKE_COUNTERS; c++) {
		struct sys_snapshot snap = {};
		uint64_t forks;
		const char *p;

		/* /proc/interrupts (60 us here, more with more CPUs and IRQs)
		 * and /proc/vmstat (20 us) every SPIKE_SLOW_EVERY readings;
		 * /proc/stat (7 us) every time. */
		if (c != SPIKE_CTXT && w->reads % SPIKE_SLOW_EVERY)
			continue;
		if (w->fd[c] < 0 || read_whole(w, w->fd[c]) < 0)
			continue;
		switch (c) {
		case SPIKE_CTXT:
			if (procstat_parse(w->buf, &ret->v[c], &forks) == 0)
				ret->present |= 1u << c;
			break;
		case SPIKE_TLB:
			if (interrupts_tlb_parse(w->buf, &snap) == 0) {
				ret->v[c] = snap.free[FREE_TLB_SHOOTDOWNS];
				ret->present |= 1u << c;
			}
			break;
		case SPIKE_PGACTIVATE:
			p = strstr(w->buf, "\npgactivate ");
			if (p) {
				ret->v[c] = strtoull(p + 12, NULL, 10);
				ret->present |= 1u << c;
			}
			break;
		}
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

bool spike_watch_ready(const struct spike_watch *w)
{
	bool any = false;

	/* Every counter this host has must have its baseline. */
	for (int c = 0; w && c < NR_SPIKE_COUNTERS; c++) {
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

	for (int c = 0; c < NR_SPIKE_COUNTERS; c++)
		if ((r->present & (1u << c)) && w->c[c].mono_ns && r->mono_ns <= w->c[c].mono_ns)
			return -EINVAL;
	for (int c = 0; c < NR_SPIKE_COUNTERS; c++) {
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
