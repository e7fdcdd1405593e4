/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_SAMPLER_H
#define MMHITMD_SAMPLER_H

/*
 * The live memory sampler: the PMU events pmu_detect() names, opened with
 * libperf system-wide on every online CPU with the sample fields perf c2c
 * records (IP, TID, TIME, ADDR, CPU, PERIOD, WEIGHT_STRUCT or WEIGHT,
 * DATA_SRC, PHYS_ADDR, a short kernel callchain), enabled S seconds out of
 * every P (the duty cycle, shortened when the measured sample rate would
 * exceed the overhead budget), drained into a mem_agg.
 *
 * For the main loop, single-threaded: sampler_tick() with CLOCK_MONOTONIC
 * turns the events on and off; sampler_drain() reads the ring buffers
 * without blocking and should run at least every 200 ms while sampling
 * (a full ring loses samples, which are counted); sampler_take_stats()
 * once per interval. Arm SPE (samples in an AUX trace) is not sampled.
 */

#include <stdbool.h>
#include <stdint.h>

#include "mem-agg.h"
#include "pmu.h"

struct sampler_config {
	/* events in perf's syntax; NULL: the detected PMU's (pmu->detail) */
	const char *events;
	uint64_t sample_period;		/* events per sample; 0: sample_freq */
	uint32_t sample_freq;		/* Hz per CPU when no period */
	int64_t active_ns;		/* sample this long ... */
	int64_t period_ns;		/* ... out of every this long */
	uint32_t budget_ppm;		/* CPU time share the sampling may cost, ppm */
	uint32_t cost_ns;		/* estimated CPU cost of one sample */
	unsigned int max_stack;		/* kernel callchain frames; 0: none */
	unsigned int mmap_pages;	/* ring buffer per CPU, pages, a power of 2 */
	const char *sysfs_root;		/* tests: PMU tree to parse events against */
	const char *online_path;	/* tests: the online CPU list file */
};

/* The defaults: 1000 Hz, 10 s every 60 s, budget 0.5%, 8 frames. */
void sampler_config_defaults(struct sampler_config *cfg);

struct sampler;

/*
 * Opens the events (disabled) on every online CPU. NULL, logged, when it
 * cannot: no events, the kernel refuses them, Arm SPE. pmu may be NULL
 * when cfg->events is set. Caller frees with sampler_free().
 */
struct sampler *sampler_new(const struct sampler_config *cfg, const struct pmu_info *pmu);
void sampler_free(struct sampler *s);

/* Turns sampling on or off for the duty cycle; reopens on a CPU hotplug. */
void sampler_tick(struct sampler *s, int64_t now_monotonic_ns);
/*
 * Windowed recording drives the sampler instead of its own duty cycle
 * (then sampler_tick() is never called): on at a window's start, off at
 * its end, the active time accounted in the stats.
 */
void sampler_window(struct sampler *s, bool on, int64_t now_monotonic_ns);
/* When sampler_tick() next has something to do (CLOCK_MONOTONIC). */
int64_t sampler_next_change(const struct sampler *s);

/* Reads every ring buffer into agg; returns the samples read or -errno. */
int sampler_drain(struct sampler *s, struct mem_agg *agg);

/* The counters since the last call (active time up to now), then resets. */
void sampler_take_stats(struct sampler *s, struct sampling_stats *ret);

/* What is sampled and how, for sampling.pmu_events; valid until freed. */
const char *sampler_describe(const struct sampler *s);

bool sampler_active(const struct sampler *s);
int sampler_nr_cpus(const struct sampler *s);

#endif
