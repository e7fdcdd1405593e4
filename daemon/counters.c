// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/evsel.h>
#include <perf/threadmap.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <tracefs.h>

#include "counters.h"
#include "log.h"
#include "util.h"

struct counter {
	char name[96];
	struct perf_event_attr attr;	/* a new evsel from it at each arming */
	struct perf_evsel *evsel;
};

/* Events handed over by counters_retire(), open, to be closed. */
struct counters_retired {
	struct perf_evsel **evsels;
	size_t n;
};

struct counters {
	bool armed;
	int64_t enabled_ns;		/* CLOCK_MONOTONIC, when the counting began */
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct counter *v;
	size_t n, alloc;
};

static int libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	/* libperf can't know what matters: the caller logs what decides. */
	if (level <= LIBPERF_ERR)
		return log_internalv(LOG_DEBUG, 0, fmt, ap);
	return 0;
}

struct counters *counters_new(bool armed)
{
	struct counters *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->armed = armed;
	libperf_init(libperf_print);
	c->cpus = perf_cpu_map__new_online_cpus();
	c->threads = perf_thread_map__new_dummy();	/* pid -1: every task */
	if (!c->cpus || !c->threads) {
		counters_free(c);
		return NULL;
	}
	return c;
}

void counters_free(struct counters *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		if (c->armed)
			perf_evsel__close(c->v[i].evsel);
		perf_evsel__delete(c->v[i].evsel);
	}
	free(c->v);
	perf_cpu_map__put(c->cpus);
	perf_thread_map__put(c->threads);
	free(c);
}

static int add_one(struct counters *c, const char *sys, const char *name,
		   struct event_status_list *status)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		/* Software events are never multiplexed, but say so. */
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING,
		/* Windowed: opened disabled, all enabled together once open. */
		.disabled = !c->armed,
	};
	struct perf_evsel *evsel;
	char *idstr;
	uint64_t id;
	int r;

	for (size_t i = 0; i < c->n; i++) {
		char full[96];

		snprintf(full, sizeof(full), "%s:%s", sys, name);
		if (strcmp(c->v[i].name, full) == 0)
			return 0;	/* asked twice */
	}

	idstr = tracefs_event_file_read(NULL, sys, name, "id", NULL);
	if (!idstr)
		return event_status_add(status, sys, name, "count", false, "not in this kernel");
	r = parse_u64(strstrip(idstr), &id);
	free(idstr);
	if (r < 0)
		return event_status_add(status, sys, name, "count", false, "unreadable event id");
	attr.config = id;

	evsel = perf_evsel__new(&attr);
	if (!evsel)
		return log_oom();
	attr.disabled = 1;	/* windowed arming enables them all at once */
	r = perf_evsel__open(evsel, c->cpus, c->threads);
	if (r < 0) {
		int err = errno ?: -r;

		perf_evsel__delete(evsel);
		return event_status_add(status, sys, name, "count", false,
					"perf_event_open failed: %s", strerror(err));
	}
	if (grow_array((void **)&c->v, &c->alloc, sizeof(*c->v), c->n + 1) < 0) {
		perf_evsel__close(evsel);
		perf_evsel__delete(evsel);
		return log_oom();
	}
	snprintf(c->v[c->n].name, sizeof(c->v[c->n].name), "%s:%s", sys, name);
	c->v[c->n].attr = attr;
	c->v[c->n].evsel = evsel;
	c->n++;
	/* Opened to learn that it can be; armed again only when asked. */
	if (!c->armed) {
		perf_evsel__close(evsel);
		perf_evsel__delete(evsel);
		c->v[c->n - 1].evsel = NULL;
	}
	return event_status_add(status, sys, name, "count", true, "perf counting on %d CPUs",
				perf_cpu_map__nr(c->cpus));
}

int counters_add(struct counters *c, const char *spec, struct event_status_list *status)
{
	char sys[64], *name;
	char **events;
	int r = 0;

	snprintf(sys, sizeof(sys), "%s", spec);
	name = strchr(sys, ':');
	if (!name)
		return log_error_errno(EINVAL, "Event \"%s\" is not system:name", spec);
	*name++ = '\0';

	if (strcmp(name, "*") != 0)
		return add_one(c, sys, name, status);

	events = tracefs_system_events(NULL, sys);
	if (!events)
		return event_status_add(status, sys, "*", "count", false, "no such event system");
	for (char **e = events; *e && r >= 0; e++)
		r = add_one(c, sys, *e, status);
	tracefs_list_free(events);
	return r;
}

size_t counters_count(const struct counters *c)
{
	return c->n;
}

const char *counters_name(const struct counters *c, size_t i)
{
	return c->v[i].name;
}

int counters_arm(struct counters *c)
{
	int r = 0;

	if (c->armed)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		c->v[i].evsel = perf_evsel__new(&c->v[i].attr);
		r = c->v[i].evsel ? perf_evsel__open(c->v[i].evsel, c->cpus, c->threads) : -ENOMEM;
		if (r < 0) {
			r = log_error_errno(c->v[i].evsel ? (errno ?: EIO) : ENOMEM,
					    "Failed to arm counter %s: %m", c->v[i].name);
			perf_evsel__delete(c->v[i].evsel);
			c->v[i].evsel = NULL;
			while (i--) {
				perf_evsel__close(c->v[i].evsel);
				perf_evsel__delete(c->v[i].evsel);
				c->v[i].evsel = NULL;
			}
			return r;
		}
	}
	/*
	 * Opening registered the tracepoints' probes, patching kernel text
	 * (IPIs to every CPU) one event after another; the counting starts
	 * only now, all events at once, so the window measures the workload
	 * and not that.
	 */
	c->enabled_ns = now_ns(CLOCK_MONOTONIC);
	for (size_t i = 0; i < c->n; i++)
		perf_evsel__enable(c->v[i].evsel);
	/* Each enable is a cross-CPU call: on a slow host (emulated, the
	 * tests' QEMU) they take a while, and the counting starts, on
	 * average, halfway through them. */
	c->enabled_ns += (now_ns(CLOCK_MONOTONIC) - c->enabled_ns) / 2;
	c->armed = true;
	return 0;
}

int64_t counters_enabled_ns(const struct counters *c)
{
	return c->enabled_ns;
}

int64_t counters_pause(struct counters *c)
{
	int64_t t0 = now_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; c && c->armed && i < c->n; i++)
		perf_evsel__disable(c->v[i].evsel);
	return t0 + (now_ns(CLOCK_MONOTONIC) - t0) / 2;
}

struct counters_retired *counters_retire(struct counters *c)
{
	struct counters_retired *r;

	if (!c || !c->armed)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (r)
		r->evsels = calloc(c->n + 1, sizeof(*r->evsels));
	if (r && !r->evsels) {
		free(r);
		r = NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (r) {
			r->evsels[r->n++] = c->v[i].evsel;
		} else {	/* no memory: close them now, slowly */
			perf_evsel__close(c->v[i].evsel);
			perf_evsel__delete(c->v[i].evsel);
		}
		c->v[i].evsel = NULL;
	}
	c->armed = false;
	return r;
}

void counters_retired_close(struct counters_retired *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		perf_evsel__close(r->evsels[i]);
		perf_evsel__delete(r->evsels[i]);
	}
	free(r->evsels);
	free(r);
}

void counters_disarm(struct counters *c)
{
	counters_retired_close(counters_retire(c));
}

bool counters_armed(const struct counters *c)
{
	return c && c->armed;
}

int counters_read(struct counters *c, uint64_t *ret)
{
	int ncpu = perf_cpu_map__nr(c->cpus);

	if (!c->armed) {
		memset(ret, 0, c->n * sizeof(*ret));
		return 0;
	}
	for (size_t i = 0; i < c->n; i++) {
		uint64_t sum = 0;

		for (int idx = 0; idx < ncpu; idx++) {
			struct perf_counts_values v = {};

			if (perf_evsel__read(c->v[i].evsel, idx, 0, &v) < 0)
				return log_error_errno(errno ?: EIO, "Failed to read counter %s: %m",
						       c->v[i].name);
			/* Scaled by the time it ran, were it ever multiplexed. */
			if (v.run && v.run < v.ena)
				sum += (uint64_t)((double)v.val * v.ena / v.run + 0.5);
			else
				sum += v.val;
		}
		ret[i] = sum;
	}
	return 0;
}
