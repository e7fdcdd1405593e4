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

/*
 * CPU hotplug: an event opened per CPU counts only on the CPUs it was
 * opened on, and one on a CPU that goes offline stops (its count stays
 * readable). Each time CPUs come online, every counter gets another
 * opening, a generation, on just those CPUs; a counter's total is the sum
 * over its generations, so it never goes back. A CPU that went offline and
 * returns is new again. Windowed arming starts over at one generation on
 * the CPUs online then.
 */
#define MAX_GENS 16

struct counter {
	char name[96];
	struct perf_event_attr attr;	/* a new evsel from it at each arming */
	struct perf_evsel *evsel[MAX_GENS];
	/* per CPU index: the last reading, kept when the CPU goes offline */
	struct counter_reading *last[MAX_GENS];
};

/* Events handed over by counters_retire(), open, to be closed. */
struct counters_retired {
	struct perf_evsel **evsels;
	size_t n;
};

struct counters {
	bool armed, paused;
	int64_t enabled_ns;		/* CLOCK_MONOTONIC, when the counting began */
	char *online_path;		/* NULL: /sys/devices/system/cpu/online */
	struct perf_cpu_map *cpus;	/* online when last looked */
	struct perf_cpu_map *gen_cpus[MAX_GENS];
	struct gen_look {		/* a generation's CPUs, as last looked at */
		int64_t at;		/* CLOCK_MONOTONIC, once the reads were done */
		uint64_t *ena;		/* per CPU index: time enabled then */
		bool *dead;		/* went offline since: no longer counts */
	} look[MAX_GENS];
	size_t n_gens;
	bool gens_warned;
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

/* A new generation on cpus (a reference taken over); -ENOMEM. */
static int gen_add(struct counters *c, struct perf_cpu_map *cpus)
{
	size_t g = c->n_gens, n = perf_cpu_map__nr(cpus);
	struct gen_look *l = &c->look[g];

	c->gen_cpus[g] = cpus;
	l->at = now_ns(CLOCK_MONOTONIC);
	l->ena = calloc(n, sizeof(*l->ena));
	l->dead = calloc(n, sizeof(*l->dead));
	c->n_gens++;
	return l->ena && l->dead ? 0 : -ENOMEM;
}

static void gen_pop(struct counters *c)
{
	size_t g = --c->n_gens;

	perf_cpu_map__put(c->gen_cpus[g]);
	c->gen_cpus[g] = NULL;
	free(c->look[g].ena);
	free(c->look[g].dead);
	c->look[g] = (struct gen_look){};
}

/* The baseline find_cycled() compares with: counter 0's time enabled on
 * each CPU of generation g, and the time after it was read. */
static void look_reset(struct counters *c, size_t g)
{
	struct gen_look *l = &c->look[g];

	for (int idx = 0; c->n && idx < perf_cpu_map__nr(c->gen_cpus[g]); idx++) {
		struct perf_counts_values v = {};

		if (perf_evsel__read(c->v[0].evsel[g], idx, 0, &v) == 0)
			l->ena[idx] = v.ena;
	}
	l->at = now_ns(CLOCK_MONOTONIC);
}

static void drop_gens(struct counters *c)
{
	while (c->n_gens)
		gen_pop(c);
}

static struct perf_cpu_map *online_cpus(const struct counters *c)
{
	struct perf_cpu_map *m;
	FILE *f;

	if (!c->online_path)
		return perf_cpu_map__new_online_cpus();
	f = fopen(c->online_path, "re");
	if (!f)
		return NULL;
	m = perf_cpu_map__read(f);
	fclose(f);
	return m;
}

struct counters *counters_new_online(bool armed, const char *online_path)
{
	struct counters *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->armed = armed;
	libperf_init(libperf_print);
	if (online_path) {
		c->online_path = strdup(online_path);
		if (!c->online_path)
			goto fail;
	}
	c->cpus = online_cpus(c);
	c->threads = perf_thread_map__new_dummy();	/* pid -1: every task */
	if (!c->cpus || !c->threads)
		goto fail;
	if (armed && gen_add(c, perf_cpu_map__get(c->cpus)) < 0)
		goto fail;
	return c;
fail:
	counters_free(c);
	return NULL;
}

struct counters *counters_new(bool armed)
{
	return counters_new_online(armed, NULL);
}

/* Closes a counter's openings (slow: see counters_retire). */
static void counter_close(struct counters *c, struct counter *ct)
{
	for (size_t g = 0; g < c->n_gens; g++) {
		perf_evsel__close(ct->evsel[g]);
		perf_evsel__delete(ct->evsel[g]);
		ct->evsel[g] = NULL;
		free(ct->last[g]);
		ct->last[g] = NULL;
	}
}


void counters_free(struct counters *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		counter_close(c, &c->v[i]);
	drop_gens(c);
	free(c->v);
	free(c->online_path);
	perf_cpu_map__put(c->cpus);
	perf_thread_map__put(c->threads);
	free(c);
}

/* Opens counter ct on generation g's CPUs, counting at once if enable. */
static int open_gen(struct counters *c, struct counter *ct, size_t g, bool enable)
{
	struct perf_event_attr attr = ct->attr;
	int r;

	attr.disabled = !enable;
	ct->evsel[g] = perf_evsel__new(&attr);
	ct->last[g] = calloc(perf_cpu_map__nr(c->gen_cpus[g]), sizeof(*ct->last[g]));
	if (!ct->evsel[g] || !ct->last[g]) {
		r = -ENOMEM;
		goto fail;
	}
	r = perf_evsel__open(ct->evsel[g], c->gen_cpus[g], c->threads);
	if (r < 0) {
		r = -(errno ?: EIO);
		goto fail;
	}
	return 0;
fail:
	perf_evsel__delete(ct->evsel[g]);
	ct->evsel[g] = NULL;
	free(ct->last[g]);
	ct->last[g] = NULL;
	return r;
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
		.disabled = 1,
	};
	struct counter *ct;
	char *idstr;
	uint64_t id;
	int r = 0;

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

	if (grow_array((void **)&c->v, &c->alloc, sizeof(*c->v), c->n + 1) < 0)
		return log_oom();
	ct = &c->v[c->n];
	*ct = (struct counter){ .attr = attr };
	snprintf(ct->name, sizeof(ct->name), "%s:%s", sys, name);
	if (c->armed) {
		/* continuous: counting from now on, on every generation */
		for (size_t g = 0; g < c->n_gens && r >= 0; g++)
			r = open_gen(c, ct, g, true);
	} else {
		/* Opened to learn that it can be; armed again only when asked. */
		struct perf_evsel *evsel = perf_evsel__new(&attr);

		if (!evsel)
			return log_oom();
		r = perf_evsel__open(evsel, c->cpus, c->threads);
		if (r < 0)
			r = -(errno ?: EIO);
		perf_evsel__close(evsel);
		perf_evsel__delete(evsel);
	}
	if (r < 0) {
		counter_close(c, ct);
		if (r == -ENOMEM)
			return log_oom();
		return event_status_add(status, sys, name, "count", false,
					"perf_event_open failed: %s", strerror(-r));
	}
	c->n++;
	if (c->armed && c->n == 1)
		for (size_t g = 0; g < c->n_gens; g++)
			look_reset(c, g);
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
	struct perf_cpu_map *now = online_cpus(c);
	int r = 0;

	if (c->armed) {
		perf_cpu_map__put(now);
		return 0;
	}
	/* One generation, on the CPUs online now. */
	if (now) {
		perf_cpu_map__put(c->cpus);
		c->cpus = now;
	}
	drop_gens(c);
	r = gen_add(c, perf_cpu_map__get(c->cpus));
	if (r < 0) {
		drop_gens(c);
		return log_oom();
	}
	for (size_t i = 0; i < c->n; i++) {
		r = open_gen(c, &c->v[i], 0, false);
		if (r < 0) {
			log_error_errno(r, "Failed to arm counter %s: %m", c->v[i].name);
			while (i--)
				counter_close(c, &c->v[i]);
			drop_gens(c);
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
		perf_evsel__enable(c->v[i].evsel[0]);
	/* Each enable is a cross-CPU call: on a slow host (emulated, the
	 * tests' QEMU) they take a while, and the counting starts, on
	 * average, halfway through them. */
	c->enabled_ns += (now_ns(CLOCK_MONOTONIC) - c->enabled_ns) / 2;
	c->armed = true;
	c->paused = false;
	look_reset(c, 0);
	return 0;
}

/* The CPUs of a that b lacks, as a map; NULL when none (or no memory). */
static struct perf_cpu_map *cpus_minus(const struct perf_cpu_map *a, const struct perf_cpu_map *b,
				       char *list, size_t size)
{
	struct perf_cpu cpu;
	size_t len = 0;
	int idx;

	list[0] = '\0';
	perf_cpu_map__for_each_cpu(cpu, idx, a) {
		if (cpu.cpu < 0 || perf_cpu_map__has(b, cpu))
			continue;
		len += snprintf(list + len, len < size ? size - len : 0, "%s%d", len ? "," : "",
				cpu.cpu);
		if (len >= size)
			return NULL;
	}
	/* perf_cpu_map__new("") would be every online CPU */
	return len ? perf_cpu_map__new(list) : NULL;
}

/*
 * A CPU that went offline and came back between two looks is online both
 * times, but its events stopped for good when it left: their time enabled
 * fell behind the clock. Such CPUs leave c->cpus, so they count as new.
 */
static void find_cycled(struct counters *c, const struct perf_cpu_map *online)
{
	/*
	 * The clock is read after the last look's reads and before this
	 * one's, so a CPU online all along has run at least that long
	 * whatever the reads waited for (single-threaded TCG under load
	 * delayed one by over 50 ms: a CPU that never left was counted
	 * twice from then on). An offline spell shorter than the slack
	 * plus the reads' own delays goes unseen, and costs that little.
	 */
	const uint64_t slack = 50 * NSEC_PER_MSEC;
	struct perf_cpu_map *keep;
	char list[512] = "", cycled[512] = "";
	size_t len = 0, clen = 0;
	bool died = false;
	struct perf_cpu cpu;
	int idx;

	if (!c->n || c->paused)
		return;
	for (size_t g = 0; g < c->n_gens; g++) {
		struct gen_look *l = &c->look[g];
		int64_t before = now_ns(CLOCK_MONOTONIC);
		uint64_t elapsed = before > l->at ? (uint64_t)(before - l->at) : 0;

		perf_cpu_map__for_each_cpu(cpu, idx, c->gen_cpus[g]) {
			struct perf_counts_values v = {};

			if (l->dead[idx] || perf_evsel__read(c->v[0].evsel[g], idx, 0, &v) < 0)
				continue;
			if (v.ena - l->ena[idx] + slack < elapsed) {
				l->dead[idx] = true;
				died = true;
				/* offline now: said by the caller */
				if (perf_cpu_map__has(online, cpu))
					clen += snprintf(cycled + clen, clen < sizeof(cycled) ? sizeof(cycled) - clen : 0,
						 "%s%d", clen ? "," : "", cpu.cpu);
			}
			l->ena[idx] = v.ena;
		}
		l->at = now_ns(CLOCK_MONOTONIC);
	}
	if (clen && clen < sizeof(cycled))
		log_notice("CPU %s went offline and came back since the last look", cycled);
	if (!died)
		return;
	/* c->cpus, less those no generation counts any more */
	perf_cpu_map__for_each_cpu(cpu, idx, c->cpus) {
		bool counted = false;

		for (size_t g = 0; g < c->n_gens && !counted; g++) {
			struct perf_cpu other;
			int k;

			perf_cpu_map__for_each_cpu(other, k, c->gen_cpus[g])
				if (other.cpu == cpu.cpu && !c->look[g].dead[k])
					counted = true;
		}
		if (counted)
			len += snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%d",
					len ? "," : "", cpu.cpu);
	}
	if (len >= sizeof(list))
		return;
	/* perf_cpu_map__new("") would be every online CPU */
	keep = len ? perf_cpu_map__new(list) : perf_cpu_map__new_any_cpu();
	if (!keep)
		return;
	perf_cpu_map__put(c->cpus);
	c->cpus = keep;
}

int counters_refresh_cpus(struct counters *c)
{
	struct perf_cpu_map *now = online_cpus(c), *added;
	char list[512], gone[512];
	int r = 0, n = 0;

	if (!now)
		return log_warning_errno(errno ?: ENOENT, "Failed to read the online CPUs: %m");
	perf_cpu_map__put(cpus_minus(c->cpus, now, gone, sizeof(gone)));
	if (gone[0])
		log_notice("CPU %s went offline; its counts so far are kept", gone);
	if (c->armed)
		find_cycled(c, now);
	added = cpus_minus(now, c->cpus, list, sizeof(list));
	if (added && c->armed && c->n_gens == MAX_GENS) {
		if (!c->gens_warned)
			log_warning("CPU %s came online, but counters were reopened %d times already: "
				    "not counted there until the next start", list, MAX_GENS);
		c->gens_warned = true;
	} else if (added && c->armed) {
		size_t g = c->n_gens;

		r = gen_add(c, added);
		added = NULL;
		for (size_t i = 0; i < c->n && r >= 0; i++)
			r = open_gen(c, &c->v[i], g, !c->paused);
		if (r < 0) {
			/* Half a generation would count some events and not others. */
			for (size_t i = 0; i < c->n; i++) {
				perf_evsel__close(c->v[i].evsel[g]);
				perf_evsel__delete(c->v[i].evsel[g]);
				c->v[i].evsel[g] = NULL;
				free(c->v[i].last[g]);
				c->v[i].last[g] = NULL;
			}
			gen_pop(c);
			log_warning_errno(r, "CPU %s came online, but counting there failed: %m", list);
		} else {
			log_notice("CPU %s came online: counting there too", list);
			look_reset(c, g);
			n = perf_cpu_map__nr(c->gen_cpus[g]);
		}
	} else if (added) {
		n = perf_cpu_map__nr(added);	/* counted from the next arming */
	}
	perf_cpu_map__put(added);
	perf_cpu_map__put(c->cpus);
	c->cpus = now;
	return r < 0 ? r : n;
}

int64_t counters_enabled_ns(const struct counters *c)
{
	return c->enabled_ns;
}

int64_t counters_pause(struct counters *c)
{
	int64_t t0 = now_ns(CLOCK_MONOTONIC);

	for (size_t i = 0; c && c->armed && i < c->n; i++)
		for (size_t g = 0; g < c->n_gens; g++)
			perf_evsel__disable(c->v[i].evsel[g]);
	if (c)
		c->paused = true;
	return t0 + (now_ns(CLOCK_MONOTONIC) - t0) / 2;
}

struct counters_retired *counters_retire(struct counters *c)
{
	struct counters_retired *r;

	if (!c || !c->armed)
		return NULL;
	r = calloc(1, sizeof(*r));
	if (r)
		r->evsels = calloc(c->n * c->n_gens + 1, sizeof(*r->evsels));
	if (r && !r->evsels) {
		free(r);
		r = NULL;
	}
	for (size_t i = 0; i < c->n; i++) {
		if (!r) {	/* no memory: close them now, slowly */
			counter_close(c, &c->v[i]);
			continue;
		}
		for (size_t g = 0; g < c->n_gens; g++) {
			r->evsels[r->n++] = c->v[i].evsel[g];
			c->v[i].evsel[g] = NULL;
			free(c->v[i].last[g]);
			c->v[i].last[g] = NULL;
		}
	}
	drop_gens(c);
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

uint64_t counter_scaled(const struct counter_reading *v)
{
	/* Ran all along (run == ena), or never ran: nothing to scale by. */
	if (!v->run || v->run >= v->ena)
		return v->val;
	return (uint64_t)((double)v->val * (double)v->ena / (double)v->run + 0.5);
}

void counter_total_add(struct counter_total *t, const struct counter_reading *v)
{
	t->count += counter_scaled(v);
	t->ena += v->ena;
	t->run += v->run;
}

double counter_run_share(uint64_t ena_prev, uint64_t run_prev, uint64_t ena_cur, uint64_t run_cur)
{
	uint64_t ena = ena_cur >= ena_prev ? ena_cur - ena_prev : ena_cur;
	uint64_t run = run_cur >= run_prev ? run_cur - run_prev : run_cur;

	if (!ena || run >= ena)
		return 1.0;
	return (double)run / (double)ena;
}

int counters_read_totals(struct counters *c, struct counter_total *ret)
{
	memset(ret, 0, c->n * sizeof(*ret));
	if (!c->armed)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		struct counter *ct = &c->v[i];

		for (size_t g = 0; g < c->n_gens; g++) {
			for (int idx = 0; idx < perf_cpu_map__nr(c->gen_cpus[g]); idx++) {
				struct perf_counts_values v = {};

				/* A CPU gone offline keeps its last reading. */
				if (perf_evsel__read(ct->evsel[g], idx, 0, &v) < 0) {
					if (perf_cpu_map__has(c->cpus, perf_cpu_map__cpu(c->gen_cpus[g], idx)))
						return log_error_errno(errno ?: EIO,
								       "Failed to read counter %s: %m",
								       ct->name);
				} else {
					ct->last[g][idx] = (struct counter_reading){ v.val, v.ena, v.run };
				}
				counter_total_add(&ret[i], &ct->last[g][idx]);
			}
		}
	}
	return 0;
}

int counters_read(struct counters *c, uint64_t *ret)
{
	struct counter_total *t = calloc(c->n + 1, sizeof(*t));
	int r;

	if (!t)
		return log_oom();
	r = counters_read_totals(c, t);
	for (size_t i = 0; r >= 0 && i < c->n; i++)
		ret[i] = t[i].count;
	free(t);
	return r;
}
