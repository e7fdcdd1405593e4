// SPDX-License-Identifier: GPL-2.0
/*
 * Memory sampling with libperf. One evlist per event group ({aux, loads}
 * must be a kernel group; stores stand alone), each opened system-wide on
 * the online CPUs with one ring buffer per CPU. The records are parsed by
 * the same code as perf.data files (perf-data.c), so what mmhitmd stores
 * and what mmhitm import stores mean the same thing.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "perf-data.h"
#include "sampler.h"
#include "util.h"

/* the sample fields of perf c2c record (tools/perf/builtin-c2c.c adds -d,
 * --phys-data, -W; perf mem/record set IP, TID, TIME, CPU, PERIOD) */
#define BASE_SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			  PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			  PERF_SAMPLE_DATA_SRC)

/* a window shorter than this is not worth opening the events for */
#define MIN_ACTIVE_NS (100 * NSEC_PER_MSEC)

struct group {
	struct perf_evlist *evlist;
	struct perf_evsel *evsel[PMU_MAX_EVENTS];
	size_t n;
};

struct sampler {
	struct sampler_config cfg;
	char *events;
	struct pmu_event ev[PMU_MAX_EVENTS];
	size_t n_ev;
	struct group groups[PMU_MAX_EVENTS];
	size_t n_groups;
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct perf_event_attr sample_attr;	/* how the samples are laid out */
	bool open;

	bool on;
	int64_t on_since;		/* the window's start */
	int64_t counted_until;		/* active time accounted up to here */
	int64_t next_on, next_off;
	int64_t cur_active_ns;		/* the duty window, after the budget */
	uint64_t window_samples;	/* samples in the current window */
	struct sampling_stats st;
	char describe[512];
};

static int libperf_print(enum libperf_print_level level, const char *fmt, va_list ap)
{
	/* the caller logs what decides; libperf's own words only in debug */
	if (level <= LIBPERF_ERR)
		return log_internalv(LOG_DEBUG, 0, fmt, ap);
	return 0;
}

void sampler_config_defaults(struct sampler_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sample_freq = 1000;
	cfg->active_ns = 10 * NSEC_PER_SEC;
	cfg->period_ns = 60 * NSEC_PER_SEC;
	cfg->budget_ppm = 5000;
	/* a PEBS or IBS sample: the PMI, the record, our parsing; a
	 * conservative figure so the budget errs on the cheap side */
	cfg->cost_ns = 5000;
	cfg->max_stack = 8;
	cfg->mmap_pages = 128;
}

static void close_groups(struct sampler *s)
{
	for (size_t g = 0; g < s->n_groups; g++) {
		struct group *gr = &s->groups[g];

		if (!gr->evlist)
			continue;
		if (s->open) {
			perf_evlist__disable(gr->evlist);
			perf_evlist__munmap(gr->evlist);
			perf_evlist__close(gr->evlist);
		}
		/* libperf 6.12's perf_evsel__delete() frees an evsel without
		 * putting the map references perf_evlist__set_maps() gave it
		 * (tools/lib/perf/evsel.c); nothing touches them after close */
		for (size_t i = 0; i < gr->n; i++) {
			perf_cpu_map__put(perf_evsel__cpus(gr->evsel[i]));
			perf_thread_map__put(perf_evsel__threads(gr->evsel[i]));
		}
		/* deletes its evsels too */
		perf_evlist__delete(gr->evlist);
		gr->evlist = NULL;
		gr->n = 0;
	}
	s->n_groups = 0;
	s->open = false;
}

/* The online CPUs, from sysfs or the test's file. */
static struct perf_cpu_map *online_cpus(const struct sampler *s)
{
	struct perf_cpu_map *m;
	FILE *f;

	if (!s->cfg.online_path)
		return perf_cpu_map__new_online_cpus();
	f = fopen(s->cfg.online_path, "re");
	if (!f)
		return NULL;
	m = perf_cpu_map__read(f);
	fclose(f);
	return m;
}

/* Builds and opens every group with this sample layout and precision. */
static int open_groups(struct sampler *s, uint64_t sample_type, int precise_cap)
{
	int r;

	for (size_t i = 0; i < s->n_ev; i++) {
		const struct pmu_event *e = &s->ev[i];
		struct perf_event_attr a = e->attr;
		struct group *gr;
		struct perf_evsel *ev;

		if (e->leader) {
			gr = &s->groups[s->n_groups++];
			gr->evlist = perf_evlist__new();
			if (!gr->evlist)
				return -ENOMEM;
		}
		gr = &s->groups[s->n_groups - 1];
		a.disabled = 1;
		a.size = sizeof(a);
		if (e->count_only) {
			/* scheduled in front of mem-loads, never sampled */
			a.sample_period = 0;
			a.precise_ip = 0;
		} else {
			a.sample_type = sample_type;
			if (s->cfg.sample_period) {
				a.sample_period = s->cfg.sample_period;
			} else {
				a.freq = 1;
				a.sample_freq = s->cfg.sample_freq;
			}
			if (sample_type & PERF_SAMPLE_CALLCHAIN) {
				a.exclude_callchain_user = 1;
				a.sample_max_stack = s->cfg.max_stack + 1;	/* + the context marker */
			}
			if (e->precise_max)
				a.precise_ip = precise_cap;
			s->sample_attr = a;
		}
		ev = perf_evsel__new(&a);
		if (!ev)
			return -ENOMEM;
		perf_evlist__add(gr->evlist, ev);
		gr->evsel[gr->n++] = ev;
	}
	for (size_t g = 0; g < s->n_groups; g++) {
		struct group *gr = &s->groups[g];

		/* takes its own references, whatever its comment says */
		perf_evlist__set_maps(gr->evlist, s->cpus, s->threads);
		if (gr->n > 1)
			perf_evlist__set_leader(gr->evlist);
		r = perf_evlist__open(gr->evlist);
		if (r < 0)
			return r;
		/* marks open so that close_groups() closes what opened */
		s->open = true;
		r = perf_evlist__mmap(gr->evlist, s->cfg.mmap_pages);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Opens the events, giving up what this kernel or CPU refuses, in order:
 * precision (P: 3, 2, 1), WEIGHT_STRUCT for WEIGHT, PHYS_ADDR (privileged),
 * the callchain. The first layout that opens wins and is logged.
 */
static int open_all(struct sampler *s)
{
	bool any_precise = false;
	uint64_t weight_types[] = { PERF_SAMPLE_WEIGHT_STRUCT, PERF_SAMPLE_WEIGHT, 0 };
	int r = -EINVAL;

	for (size_t i = 0; i < s->n_ev; i++)
		any_precise |= s->ev[i].precise_max;

	for (int drop_callchain = 0; drop_callchain <= !!s->cfg.max_stack; drop_callchain++)
		for (int drop_phys = 0; drop_phys <= 1; drop_phys++)
			for (size_t w = 0; w < ARRAY_SIZE(weight_types); w++)
				for (int prec = any_precise ? 3 : 0; prec >= (any_precise ? 1 : 0); prec--) {
					uint64_t t = BASE_SAMPLE_TYPE | weight_types[w];

					if (!drop_phys)
						t |= PERF_SAMPLE_PHYS_ADDR;
					if (s->cfg.max_stack && !drop_callchain)
						t |= PERF_SAMPLE_CALLCHAIN;
					close_groups(s);
					r = open_groups(s, t, prec);
					if (r == 0) {
						log_debug("Sampler: sample_type %#" PRIx64 ", precise %d", t, prec);
						return 0;
					}
					/* only a refusal of the layout is worth another try */
					if (r != -EINVAL && r != -EOPNOTSUPP && r != -EACCES &&
					    r != -EPERM && r != -ENOTSUP)
						goto out;
				}
out:
	close_groups(s);
	return r;
}

static void describe(struct sampler *s)
{
	char rate[64];
	int n = 0;

	if (s->cfg.sample_period)
		snprintf(rate, sizeof(rate), "period %" PRIu64, s->cfg.sample_period);
	else
		snprintf(rate, sizeof(rate), "%" PRIu32 " Hz", s->cfg.sample_freq);
	n = snprintf(s->describe, sizeof(s->describe), "%s; %s; ", s->events, rate);
	snprintf(s->describe + n, sizeof(s->describe) - n,
		 "%.1f s every %.0f s; budget %.2f%%; %d CPUs",
		 s->cur_active_ns / 1e9, s->cfg.period_ns / 1e9, s->cfg.budget_ppm / 1e4,
		 perf_cpu_map__nr(s->cpus));
}

/* The longest window the budget allows at a rate of samples/s per CPU. */
static int64_t budget_window(const struct sampler *s, double rate)
{
	double max_duty;

	if (rate <= 0 || !s->cfg.cost_ns)
		return s->cfg.active_ns;
	/* cost share while on = rate * cost; over a period = that * duty */
	max_duty = (s->cfg.budget_ppm / 1e6) / (rate * s->cfg.cost_ns / 1e9);
	if (max_duty >= (double)s->cfg.active_ns / s->cfg.period_ns)
		return s->cfg.active_ns;
	return (int64_t)(max_duty * s->cfg.period_ns);
}

struct sampler *sampler_new(const struct sampler_config *cfg, const struct pmu_info *pmu)
{
	const char *events = cfg->events ?: (pmu ? pmu->detail : NULL);
	struct sampler *s;
	char err[256];
	int r;

	libperf_init(libperf_print);
	if (!events || (!cfg->events && (!pmu || !strcmp(pmu->kind, "none")))) {
		log_error("No memory-sampling events to open%s%s", pmu ? ": " : "",
			  pmu ? pmu->detail : "");
		return NULL;
	}
	if (!cfg->events && !strcmp(pmu->kind, "arm-spe")) {
		/* the samples are in an AUX trace that perf decodes
		 * (tools/perf/util/arm-spe.c); mmhitmd does not */
		log_error("Arm SPE sampling needs the SPE AUX trace decoded, which mmhitmd does not do; "
			  "record with perf c2c record and mmhitm import instead");
		return NULL;
	}
	if (cfg->period_ns <= 0 || cfg->active_ns <= 0 || cfg->active_ns > cfg->period_ns ||
	    !cfg->mmap_pages || (cfg->mmap_pages & (cfg->mmap_pages - 1)) ||
	    (!cfg->sample_period && !cfg->sample_freq)) {
		log_error("Invalid sampler configuration (window %.1f s every %.1f s, %u ring pages)",
			  cfg->active_ns / 1e9, cfg->period_ns / 1e9, cfg->mmap_pages);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		log_oom();
		return NULL;
	}
	s->cfg = *cfg;
	s->events = strdup(events);
	if (!s->events) {
		log_oom();
		goto fail;
	}
	r = pmu_events_parse(cfg->sysfs_root, events, s->ev, ARRAY_SIZE(s->ev), &s->n_ev, err,
			     sizeof(err));
	if (r < 0) {
		log_error("Cannot use memory-sampling events '%s': %s", events, err);
		goto fail;
	}
	s->threads = perf_thread_map__new_dummy();
	s->cpus = online_cpus(s);
	if (!s->threads || !s->cpus) {
		log_error("Cannot list the online CPUs");
		goto fail;
	}
	r = open_all(s);
	if (r < 0) {
		log_error_errno(r, "Failed to open memory-sampling events '%s' on %d CPUs: %m",
				events, perf_cpu_map__nr(s->cpus));
		goto fail;
	}
	/* without a measured rate yet, budget by the configured frequency */
	s->cur_active_ns = budget_window(s, cfg->sample_period ? 0 : cfg->sample_freq);
	describe(s);
	log_info("Sampling memory accesses: %s", s->describe);
	return s;
fail:
	sampler_free(s);
	return NULL;
}

void sampler_free(struct sampler *s)
{
	if (!s)
		return;
	close_groups(s);
	perf_cpu_map__put(s->cpus);
	perf_thread_map__put(s->threads);
	free(s->events);
	free(s);
}

static void set_enabled(struct sampler *s, bool on)
{
	for (size_t g = 0; g < s->n_groups; g++) {
		if (on)
			perf_evlist__enable(s->groups[g].evlist);
		else
			perf_evlist__disable(s->groups[g].evlist);
	}
}

/* At the start of a window: a changed CPU set means new events. */
static void follow_hotplug(struct sampler *s)
{
	struct perf_cpu_map *now = online_cpus(s), *old;
	int r;

	if (!now || perf_cpu_map__equal(now, s->cpus)) {
		perf_cpu_map__put(now);
		if (s->open)
			return;
		/* closed after a failed reopen: try again */
		now = perf_cpu_map__get(s->cpus);
	}
	log_info("Online CPUs changed (%d -> %d), reopening the sampling events",
		 perf_cpu_map__nr(s->cpus), perf_cpu_map__nr(now));
	old = s->cpus;
	s->cpus = now;
	perf_cpu_map__put(old);
	r = open_all(s);
	if (r < 0)
		log_warning_errno(r, "Failed to reopen the sampling events, retrying next window: %m");
	describe(s);
}

void sampler_tick(struct sampler *s, int64_t now)
{
	if (!s)
		return;
	if (!s->on && now >= s->next_on) {
		follow_hotplug(s);
		if (!s->open) {
			s->next_on = now + s->cfg.period_ns;
			return;
		}
		set_enabled(s, true);
		s->on = true;
		s->on_since = s->counted_until = now;
		s->next_off = now + s->cur_active_ns;
		s->window_samples = 0;
	} else if (s->on && now >= s->next_off && s->cur_active_ns >= s->cfg.period_ns) {
		/* A window as long as the period: sampling never pauses. */
		s->next_off = now + s->cur_active_ns;
	} else if (s->on && now >= s->next_off) {
		double secs = (now - s->on_since) / 1e9;
		int ncpu = perf_cpu_map__nr(s->cpus);

		set_enabled(s, false);
		s->on = false;
		s->st.active_ns += now - s->counted_until;
		s->next_on = s->on_since + s->cfg.period_ns;
		if (s->next_on <= now)
			s->next_on = now + 1;
		/* the next window as long as the measured rate allows */
		if (secs > 0 && ncpu > 0) {
			int64_t w = budget_window(s, s->window_samples / secs / ncpu);

			if (w < MIN_ACTIVE_NS)
				w = MIN_ACTIVE_NS;
			if (w != s->cur_active_ns) {
				log_info("Sampling window %.2f s -> %.2f s (%.0f samples/s per CPU, "
					 "budget %.2f%%)", s->cur_active_ns / 1e9, w / 1e9,
					 s->window_samples / secs / ncpu, s->cfg.budget_ppm / 1e4);
				s->cur_active_ns = w;
				describe(s);
			}
		}
	}
}

void sampler_window(struct sampler *s, bool on, int64_t now)
{
	if (!s || on == s->on)
		return;
	if (on) {
		follow_hotplug(s);
		if (!s->open)
			return;
		set_enabled(s, true);
		s->on = true;
		s->on_since = s->counted_until = now;
		s->next_off = INT64_MAX;
		s->window_samples = 0;
		return;
	}
	set_enabled(s, false);
	s->on = false;
	if (now > s->counted_until)
		s->st.active_ns += now - s->counted_until;
	s->counted_until = now;
	s->next_on = INT64_MAX;
}

int64_t sampler_next_change(const struct sampler *s)
{
	if (!s)
		return INT64_MAX;
	return s->on ? s->next_off : s->next_on;
}

static int handle(struct sampler *s, const union perf_event *event, struct mem_agg *agg)
{
	const struct perf_event_header *h = &event->header;
	struct perf_data_sample smp;
	struct mem_agg_sample ms;
	bool kernel;
	int r;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		if (perf_sample_parse(&s->sample_attr, event, h->size, &smp, NULL, 0) < 0) {
			s->st.lost++;	/* cannot happen with our own attr; not silently */
			return 0;
		}
		kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		s->st.samples++;
		s->window_samples++;
		if (kernel)
			s->st.samples_kernel++;
		else
			s->st.samples_user++;
		if (!agg)
			return 1;
		ms = (struct mem_agg_sample){
			.ip = smp.ip, .addr = smp.addr, .data_src = smp.data_src,
			.weight = smp.weight,
			.has_weight = smp.sample_type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT),
			.kernel = kernel, .callchain = smp.callchain, .callchain_nr = smp.callchain_nr,
		};
		r = mem_agg_add(agg, &ms);
		return r < 0 ? r : 1;
	case PERF_RECORD_LOST:
		s->st.lost += event->lost.lost;
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		s->st.lost += event->lost_samples.lost;
		return 0;
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		return 0;
	default:
		return 0;
	}
}

int sampler_drain(struct sampler *s, struct mem_agg *agg)
{
	int n = 0, r;

	if (!s || !s->open)
		return 0;
	for (size_t g = 0; g < s->n_groups; g++) {
		struct perf_mmap *map;

		perf_evlist__for_each_mmap(s->groups[g].evlist, map, false) {
			union perf_event *event;

			if (perf_mmap__read_init(map) < 0)
				continue;
			while ((event = perf_mmap__read_event(map))) {
				r = handle(s, event, agg);
				perf_mmap__consume(map);
				if (r < 0) {
					perf_mmap__read_done(map);
					return r;
				}
				n += r;
			}
			perf_mmap__read_done(map);
		}
	}
	return n;
}

void sampler_take_stats(struct sampler *s, struct sampling_stats *ret)
{
	memset(ret, 0, sizeof(*ret));
	if (!s)
		return;
	if (s->on) {
		/* split the window at the interval boundary */
		int64_t now = now_ns(CLOCK_MONOTONIC);

		if (now > s->counted_until) {
			s->st.active_ns += now - s->counted_until;
			s->counted_until = now;
		}
	}
	*ret = s->st;
	memset(&s->st, 0, sizeof(s->st));
}

const char *sampler_describe(const struct sampler *s)
{
	return s ? s->describe : "";
}

bool sampler_active(const struct sampler *s)
{
	return s && s->on;
}

int sampler_nr_cpus(const struct sampler *s)
{
	return s ? perf_cpu_map__nr(s->cpus) : 0;
}
