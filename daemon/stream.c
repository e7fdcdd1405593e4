// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tracefs.h>
#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>
#include <unistd.h>

#include "learn-source.h"
#include "log.h"
#include "stream.h"
#include "util.h"

/* Pages read from one CPU per drain, so a flood can't starve the loop. */
#define STREAM_MAX_PAGES_PER_CPU 2048
/* The held array shrinks back to this after a storm (records). */
#define MERGE_MIN_ALLOC 1024

struct source {
	struct learn_decoder dec;		/* type, id and fields */
	const char *system, *name;		/* the event, for arming it */
	struct tracefs_instance *inst;		/* where it is armed */
};

struct held {
	struct learn_event ev;
	char text[128];
};

/*
 * Records read from every CPU's ring, merged into timestamp order before
 * the learner sees them. They are held and ordered by the rings' own
 * clock (CLOCK_BOOTTIME, the same for every CPU and every drain), and
 * turned into wall time only as they are fed, all with the offset of the
 * drain that feeds them: REALTIME - BOOTTIME is read anew by every drain
 * and differs between drains (a clock step; a drain preempted between its
 * two clock reads), so wall stamps from two drains do not order records
 * (an mm's alloc held by one drain would be fed after the fork that
 * follows it, read by the next). What may be fed in a drain ends at the
 * earliest of: the drain's start (minus a margin), and for a CPU whose
 * reading stopped at the page cap, its last record read (its next ones,
 * still in the ring, are later than that and must not be overtaken). The
 * rest is held for the next drain, up to max_held records; past that,
 * records are dropped and counted.
 */
struct stream_merge {
	struct held *held;
	size_t n_held, alloc_held;
	size_t max_held;
	int64_t limit;			/* this drain's capped CPUs' bound */
	uint64_t dropped_main, dropped_side;
	bool overflow_logged;
};

struct stream_merge *stream_merge_new(size_t max_held)
{
	struct stream_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->max_held = max_held ? max_held : 1;
	m->limit = INT64_MAX;
	return m;
}

void stream_merge_free(struct stream_merge *m)
{
	if (!m)
		return;
	free(m->held);
	free(m);
}

/* A slot for one more record, or NULL when it is dropped (counted). */
static struct held *merge_slot(struct stream_merge *m, bool main)
{
	if (m->n_held >= m->max_held ||
	    grow_array((void **)&m->held, &m->alloc_held, sizeof(*m->held), m->n_held + 1) < 0) {
		if (!m->overflow_logged)
			log_warning("More than %zu learning records held in one drain, dropping some "
				    "(counted as lost), ignoring", m->max_held);
		m->overflow_logged = true;
		if (main)
			m->dropped_main++;
		else
			m->dropped_side++;
		return NULL;
	}
	return &m->held[m->n_held++];
}

int stream_merge_add(struct stream_merge *m, const struct learn_event *ev, const char *text,
		     bool main)
{
	struct held *h = merge_slot(m, main);

	if (!h)
		return 0;
	h->ev = *ev;
	h->ev.text = NULL;
	snprintf(h->text, sizeof(h->text), "%s", text ? text : "");
	return 1;
}

void stream_merge_cpu_capped(struct stream_merge *m, int64_t last_ts)
{
	if (last_ts < m->limit)
		m->limit = last_ts;
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	return x->ev.ts_ns < y->ev.ts_ns ? -1 : x->ev.ts_ns > y->ev.ts_ns;
}

size_t stream_merge_feed(struct stream_merge *m, int64_t watermark, int64_t wall_off, bool final,
			 void (*feed)(void *ctx, const struct learn_event *ev), void *ctx)
{
	int64_t upto = watermark < m->limit ? watermark : m->limit;
	size_t fed = 0;

	/* (qsort is not stable: equal stamps from two CPUs have no order) */
	if (m->n_held)
		qsort(m->held, m->n_held, sizeof(*m->held), cmp_held);
	for (; fed < m->n_held; fed++) {
		struct held *h = &m->held[fed];
		struct learn_event ev;

		if (!final && h->ev.ts_ns > upto)
			break;
		ev = h->ev;
		ev.ts_ns += wall_off;
		ev.text = h->text[0] ? h->text : NULL;
		feed(ctx, &ev);
	}
	if (fed)
		memmove(m->held, m->held + fed, (m->n_held - fed) * sizeof(*m->held));
	m->n_held -= fed;
	m->limit = INT64_MAX;

	/* A storm grew the array: give the memory back once it has passed. */
	if (m->alloc_held > MERGE_MIN_ALLOC && m->n_held < m->alloc_held / 4) {
		size_t n = m->n_held * 2 > MERGE_MIN_ALLOC ? m->n_held * 2 : MERGE_MIN_ALLOC;
		struct held *p = realloc(m->held, n * sizeof(*m->held));

		if (p) {
			m->held = p;
			m->alloc_held = n;
		}
	}
	return fed;
}

size_t stream_merge_capacity(const struct stream_merge *m)
{
	return m->alloc_held;
}

size_t stream_merge_held(const struct stream_merge *m)
{
	return m->n_held;
}

void stream_merge_take_dropped(struct stream_merge *m, uint64_t *ret_main, uint64_t *ret_side)
{
	*ret_main = m->dropped_main;
	*ret_side = m->dropped_side;
	m->dropped_main = m->dropped_side = 0;
}

/* One tracefs instance and its per-CPU readers. */
struct ring {
	struct tracefs_instance *inst;
	struct tracefs_cpu **cpu;
	int ncpu;
	uint64_t lost_seen;		/* overrun + dropped at the last take */
};

/*
 * Two instances: the object-learning events (mm_struct, pages) in one;
 * in the other, "-win", what can flood: the sched_switch sample windows
 * and lock contention (all the time while calm, in the windows during a
 * storm). A window mmhitmd was not scheduled to close in time, or a storm
 * before it is noticed, can then only overrun that side instance, never
 * the mm learning.
 */
struct stream {
	struct ring main, win;
	struct tep_handle *tep;
	struct source src[16];		/* one per entry of learn_source_defs[] */
	int nsrc;
	struct kbuffer *kbuf;
	void *page;
	int page_size;
	struct stream_merge *merge;
	uint64_t records;
	bool switch_src;		/* sched_switch set up for windows */
	bool lock_src;			/* contention_begin set up */
	bool lock_windowed;		/* ... and streamed only in the windows */
	bool window_on;
	bool windowed;			/* everything armed only by stream_arm() */
	bool armed;
	bool skip_pages;		/* stream_arm() leaves the page events alone */
	uint64_t lock_records;		/* read by the last drain */
	uint64_t lock_period_records;	/* ... and by every drain since */
	int64_t lock_period_start;	/* CLOCK_MONOTONIC; 0: no period yet */
	int64_t wall_off;		/* events' wall stamps: CLOCK_BOOTTIME + this */
};

/*
 * tracefs_local_events_system() also loads /proc/kallsyms, saved_cmdlines
 * and the printk formats into its tep, for printing: 7 MB of heap on a 6.18
 * kernel (121,000 functions), held as long as the tep. Nothing here prints
 * an event; the fields and the page header are what is read.
 */
struct tep_handle *learn_formats_load(void)
{
	struct tep_handle *tep;
	char *buf;
	int len, r;

	tep = tep_alloc();
	if (!tep) {
		errno = ENOMEM;
		return NULL;
	}
	buf = tracefs_instance_file_read(NULL, "events/header_page", &len);
	r = buf ? tep_parse_header_page(tep, buf, len, sizeof(long)) : -1;
	free(buf);
	if (r < 0) {
		tep_free(tep);
		errno = errno ?: EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < learn_n_source_defs; i++) {
		const struct learn_source_def *d = &learn_source_defs[i];

		if (tep_find_event_by_name(tep, d->system, d->name))
			continue;
		/* Not in this kernel, or not parsed: each user says so. */
		buf = tracefs_event_file_read(NULL, d->system, d->name, "format", &len);
		if (buf && tep_parse_event(tep, buf, len, d->system) != TEP_ERRNO__SUCCESS)
			log_debug("Failed to parse the format of %s:%s, ignoring", d->system, d->name);
		free(buf);
	}
	tep_set_long_size(tep, tep_get_header_page_size(tep));
	return tep;
}

static bool def_wanted(const struct stream_config *cfg, const struct learn_source_def *d)
{
	switch (d->type) {
	case LEARN_MM_ALLOC:
	case LEARN_MM_FREE:
	case LEARN_FORK:
	case LEARN_EXEC:
	case LEARN_MMAP_LOCK:	return cfg->learn_mm;
	case LEARN_PAGE:	return cfg->learn_pages;
	case LEARN_LOCK:	return cfg->learn_locks;
	case LEARN_SWITCH:	return cfg->sample_switches;
	case LEARN_MM_SNAPSHOT:	return false;	/* not a tracepoint: snapshot.c */
	}
	return false;
}

static void remove_stale_instance(const char *name)
{
	struct tracefs_instance *old;

	if (!tracefs_instance_exists(name))
		return;
	old = tracefs_instance_alloc(NULL, name);
	if (!old)
		return;
	log_notice("Removing stale tracefs instance %s left by an earlier run", name);
	if (tracefs_instance_destroy(old) < 0)
		log_warning_errno(errno, "Failed to remove stale instance %s: %m, ignoring", name);
	tracefs_instance_free(old);
}

/* Sets the event's filter in an instance, enabled or not. */
static int arm_event(struct tracefs_instance *inst, const struct learn_source_def *d, const char *filter,
		     bool enable, struct event_status_list *status)
{
	if (filter[0] && tracefs_event_file_write(inst, d->system, d->name, "filter", filter) < 0)
		return event_status_add(status, d->system, d->name, "learn", false,
					"kernel rejected filter \"%s\"", filter);
	if (enable && tracefs_event_enable(inst, d->system, d->name) < 0)
		return event_status_add(status, d->system, d->name, "learn", false,
					"enabling failed: %s", strerror(errno));
	return 1;
}

static int setup_source(struct stream *s, const struct stream_config *cfg,
			const struct learn_source_def *d, struct event_status_list *status)
{
	struct source *src = &s->src[s->nsrc];
	char filter[512], why[160] = "";
	struct tep_event *ev;
	int r;

	if (!tracefs_event_file_exists(s->main.inst, d->system, d->name, "enable"))
		return event_status_add(status, d->system, d->name, "learn", false,
					"not in this kernel");
	ev = tep_find_event_by_name(s->tep, d->system, d->name);
	if (!ev)
		return event_status_add(status, d->system, d->name, "learn", false,
					"format could not be parsed");

	memset(src, 0, sizeof(*src));
	src->system = d->system;
	src->name = d->name;
	if (learn_decoder_init(&src->dec, d, ev) < 0)
		return event_status_add(status, d->system, d->name, "learn", false,
					"fields differ from what mmhitmd reads");

	r = learn_source_filter(&(struct learn_filter_config){
					.page_pair_shift = cfg->page_pair_shift,
					.mm_object_size = cfg->mm_object_size, .ksyms = cfg->ksyms },
				d, ev, filter, sizeof(filter), why, sizeof(why));
	if (r < 0)
		return event_status_add(status, d->system, d->name, "learn", false, "%s", why);

	if (d->type == LEARN_SWITCH) {
		/* In the window instance, enabled only during a window. */
		r = arm_event(s->win.inst, d, filter, false, status);
		if (r <= 0)
			return r;
		src->inst = s->win.inst;
		s->switch_src = true;
		s->nsrc++;
		return event_status_add(status, d->system, d->name, "sample", true,
					"sampled in short windows per interval");
	}
	/* Locks go to the side instance too: a contention storm floods,
	 * and must flood only there. */
	src->inst = d->type == LEARN_LOCK ? s->win.inst : s->main.inst;
	r = arm_event(src->inst, d, filter, !cfg->windowed, status);
	if (r <= 0)
		return r;
	if (d->type == LEARN_LOCK)
		s->lock_src = true;
	s->nsrc++;
	return event_status_add(status, d->system, d->name, "learn", true, "%s%s",
				filter[0] ? filter : "no filter", cfg->windowed ? ", in windows" : "");
}

static int ring_open(struct ring *rg, const char *name, uint64_t buffer_size_kb, int *page_size)
{
	char buf[32];

	remove_stale_instance(name);
	rg->inst = tracefs_instance_create(name);
	if (!rg->inst)
		return log_error_errno(errno, "Failed to create tracefs instance %s: %m", name);
	/* CLOCK_BOOTTIME: comparable across CPUs and convertible to wall time. */
	if (tracefs_instance_file_write(rg->inst, "trace_clock", "boot") < 0)
		return log_error_errno(errno, "Failed to set trace_clock of instance %s: %m", name);
	snprintf(buf, sizeof(buf), "%" PRIu64, buffer_size_kb);
	if (tracefs_instance_file_write(rg->inst, "buffer_size_kb", buf) < 0)
		log_warning_errno(errno, "Failed to set buffer_size_kb=%s on %s: %m, ignoring", buf, name);
	rg->ncpu = sysconf(_SC_NPROCESSORS_CONF);
	rg->cpu = calloc(rg->ncpu, sizeof(*rg->cpu));
	if (!rg->cpu)
		return log_oom();
	for (int c = 0; c < rg->ncpu; c++) {
		rg->cpu[c] = tracefs_cpu_open(rg->inst, c, true);
		if (rg->cpu[c] && tracefs_cpu_read_size(rg->cpu[c]) > *page_size)
			*page_size = tracefs_cpu_read_size(rg->cpu[c]);
	}
	return 0;
}

static void ring_close(struct ring *rg)
{
	for (int c = 0; rg->cpu && c < rg->ncpu; c++)
		tracefs_cpu_close(rg->cpu[c]);
	free(rg->cpu);
	rg->cpu = NULL;
	if (rg->inst) {
		/* Destroying the instance disables its events with it. */
		if (tracefs_instance_destroy(rg->inst) < 0)
			log_warning_errno(errno, "Failed to remove tracefs instance %s: %m, ignoring",
					  tracefs_instance_get_name(rg->inst));
		tracefs_instance_free(rg->inst);
		rg->inst = NULL;
	}
}

struct stream *stream_new(const struct stream_config *cfg, struct event_status_list *status)
{
	char win_name[96];
	struct stream *s;

	s = calloc(1, sizeof(*s));
	if (!s) {
		log_oom();
		return NULL;
	}
	s->page_size = getpagesize();
	s->windowed = cfg->windowed;
	s->wall_off = now_ns(CLOCK_REALTIME) - now_ns(CLOCK_BOOTTIME);
	s->merge = stream_merge_new(cfg->max_held ? cfg->max_held : STREAM_DEFAULT_MAX_HELD);
	if (!s->merge) {
		log_oom();
		goto fail;
	}
	/* "<instance>-win": still a name that says it is ours. */
	snprintf(win_name, sizeof(win_name), "%s-win", cfg->instance);
	if (ring_open(&s->main, cfg->instance, cfg->buffer_size_kb, &s->page_size) < 0)
		goto fail;
	if ((cfg->sample_switches || cfg->learn_locks) &&
	    ring_open(&s->win, win_name, cfg->buffer_size_kb, &s->page_size) < 0)
		goto fail;

	s->tep = learn_formats_load();
	if (!s->tep) {
		log_error_errno(errno, "Failed to read tracepoint formats: %m");
		goto fail;
	}

	for (size_t i = 0; i < learn_n_source_defs; i++) {
		if (!def_wanted(cfg, &learn_source_defs[i]))
			continue;
		/* src[] has room for every definition */
		if (s->nsrc == (int)ARRAY_SIZE(s->src)) {
			log_error("Too many learning sources");
			goto fail;
		}
		if (setup_source(s, cfg, &learn_source_defs[i], status) < 0)
			goto fail;
	}

	s->kbuf = tep_kbuffer(s->tep);
	if (!s->kbuf) {
		log_error("Failed to set up a ring-buffer parser");
		goto fail;
	}
	s->page = malloc(s->page_size);
	if (!s->page) {
		log_oom();
		goto fail;
	}
	return s;
fail:
	stream_free(s);
	return NULL;
}

void stream_free(struct stream *s)
{
	if (!s)
		return;
	ring_close(&s->win);
	ring_close(&s->main);
	kbuffer_free(s->kbuf);
	tep_free(s->tep);
	free(s->page);
	stream_merge_free(s->merge);
	free(s);
}

static int decode(struct stream *s, const struct source *src, const char *data, int size,
		  int64_t ts_boot, bool main)
{
	struct learn_event ev;
	char text[128];

	learn_decoder_decode(&src->dec, data, size, ts_boot, &ev, text, sizeof(text));
	stream_merge_add(s->merge, &ev, text, main);
	return 0;
}

/* Reads what a ring holds into the merge, stamped with the ring's clock. */
static int ring_read(struct stream *s, struct ring *rg)
{
	bool main = rg == &s->main;
	int r;

	for (int c = 0; rg->cpu && c < rg->ncpu; c++) {
		int64_t last = INT64_MIN;
		int pages;

		if (!rg->cpu[c])
			continue;
		for (pages = 0; pages < STREAM_MAX_PAGES_PER_CPU; pages++) {
			unsigned long long ts;
			void *data;
			int n;

			n = tracefs_cpu_read(rg->cpu[c], s->page, true);
			if (n <= 0)
				break;
			if (kbuffer_load_subbuffer(s->kbuf, s->page) < 0)
				break;
			for (data = kbuffer_read_event(s->kbuf, &ts); data;
			     data = kbuffer_next_event(s->kbuf, &ts)) {
				struct tep_record rec = {
					.ts = ts, .cpu = c, .data = data,
					.size = kbuffer_event_size(s->kbuf),
				};
				int id = tep_data_type(s->tep, &rec);

				s->records++;
				last = (int64_t)ts;
				for (int i = 0; i < s->nsrc; i++) {
					if (s->src[i].dec.id != id)
						continue;
					if (s->src[i].dec.type == LEARN_LOCK) {
						s->lock_records++;
						s->lock_period_records++;
					}
					r = decode(s, &s->src[i], data, rec.size, last, main);
					if (r < 0)
						return r;
					break;
				}
			}
		}
		/* Stopped at the cap: this CPU's unread records are later than
		 * its last one read, and the other CPUs' later ones wait. */
		if (pages == STREAM_MAX_PAGES_PER_CPU && last != INT64_MIN)
			stream_merge_cpu_capped(s->merge, last);
	}
	return 0;
}

static void feed_learner(void *ctx, const struct learn_event *ev)
{
	learner_feed(ctx, ev);
}

int stream_drain(struct stream *s, struct learner *l, bool final)
{
	int64_t boot_now = now_ns(CLOCK_BOOTTIME);
	/* A record stamped before now is committed within microseconds; the
	 * margin covers one still being written on another CPU. */
	int64_t watermark = boot_now - NSEC_PER_MSEC;
	int r;

	s->lock_records = 0;
	r = ring_read(s, &s->main);
	if (r >= 0)
		r = ring_read(s, &s->win);
	if (r < 0)
		return r;
	stream_merge_feed(s->merge, watermark, s->wall_off, final, feed_learner, l);
	return 0;
}

void stream_set_wall_off(struct stream *s, int64_t wall_off)
{
	s->wall_off = wall_off;
}

int stream_sample_switches(struct stream *s, bool on)
{
	int r = 0;

	if (!s || (!s->switch_src && !(s->lock_src && s->lock_windowed)))
		return -ENOENT;
	if (s->switch_src)
		r = tracefs_event_file_write(s->win.inst, "sched", "sched_switch", "enable",
					     on ? "1" : "0");
	if (r >= 0 && s->lock_src && s->lock_windowed && !s->windowed)
		r = on ? tracefs_event_enable(s->win.inst, "lock", "contention_begin") :
			 tracefs_event_disable(s->win.inst, "lock", "contention_begin");
	s->window_on = on;
	return r < 0 ? -errno : 0;
}

int stream_arm(struct stream *s, bool on)
{
	int r = 0;

	if (!s || !s->windowed)
		return -ENOENT;
	if (on == s->armed)
		return 0;
	/* The enable files themselves: tracefs_event_enable() would scan
	 * every event directory of the instance for a regex, each time. */
	for (int i = 0; i < s->nsrc; i++) {
		const struct source *src = &s->src[i];

		if (src->dec.type == LEARN_SWITCH || (on && s->skip_pages && src->dec.type == LEARN_PAGE))
			continue;
		if (tracefs_event_file_write(src->inst, src->system, src->name, "enable",
					     on ? "1" : "0") < 0 && r == 0)
			r = log_warning_errno(errno ?: EIO, "Failed to %s %s:%s: %m, ignoring",
					      on ? "arm" : "disarm", src->system, src->name);
	}
	s->armed = on;
	return r;
}

void stream_skip_pages(struct stream *s)
{
	if (s)
		s->skip_pages = true;
}

bool stream_armed(const struct stream *s)
{
	return s && (!s->windowed || s->armed);
}

int stream_locks_windowed(struct stream *s, bool windowed)
{
	int r;

	if (!s || !s->lock_src || s->windowed)
		return -ENOENT;
	if (windowed == s->lock_windowed)
		return 0;
	/* Continuous: on. Windowed: on only while a window is. */
	r = !windowed || s->window_on ? tracefs_event_enable(s->win.inst, "lock", "contention_begin") :
					tracefs_event_disable(s->win.inst, "lock", "contention_begin");
	if (r < 0)
		return -errno;
	s->lock_windowed = windowed;
	return 0;
}

bool stream_locks_are_windowed(const struct stream *s)
{
	return s && s->lock_windowed;
}

uint64_t stream_last_lock_records(const struct stream *s)
{
	return s ? s->lock_records : 0;
}

int stream_lock_period(struct stream *s, int64_t now, int64_t period_ns, uint64_t *ret)
{
	int64_t span;

	if (!s || period_ns <= 0)
		return -EINVAL;
	span = now - s->lock_period_start;
	if (!s->lock_period_start || span < period_ns) {
		if (!s->lock_period_start) {
			s->lock_period_start = now;
			s->lock_period_records = 0;
		}
		return -EAGAIN;
	}
	*ret = (uint64_t)((double)s->lock_period_records * period_ns / span);
	s->lock_period_start = now;
	s->lock_period_records = 0;
	return 0;
}

static uint64_t stats_value(const char *stats, const char *key)
{
	const char *p = strstr(stats, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Overrun and dropped events of a ring since the last call. */
static uint64_t ring_take_lost(struct ring *rg)
{
	uint64_t lost = 0, delta;

	for (int c = 0; rg->inst && c < rg->ncpu; c++) {
		char file[64], *stats;

		snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", c);
		stats = tracefs_instance_file_read(rg->inst, file, NULL);
		if (!stats)
			continue;
		lost += stats_value(stats, "\noverrun:") + stats_value(stats, "\ndropped events:");
		free(stats);
	}
	delta = lost >= rg->lost_seen ? lost - rg->lost_seen : lost;
	rg->lost_seen = lost;
	return delta;
}

void stream_take_stats(struct stream *s, uint64_t *ret_records, uint64_t *ret_lost)
{
	uint64_t win_lost = ring_take_lost(&s->win), dropped_main, dropped_side;

	/* Records read but dropped over max_held are lost like overruns. */
	stream_merge_take_dropped(s->merge, &dropped_main, &dropped_side);
	win_lost += dropped_side;
	/* Lock contention and switch samples, not the mm learning. */
	if (win_lost)
		log_debug("The side instance lost %" PRIu64 " records", win_lost);
	*ret_records = s->records;
	s->records = 0;
	*ret_lost = ring_take_lost(&s->main) + dropped_main;
}
