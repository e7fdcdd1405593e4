/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_PMU_H
#define MMHITM_PMU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>

/* Which memory-sampling PMU this host has, or why it has none. */
struct pmu_info {
	char kind[16];		/* "intel-pebs", "amd-ibs", "arm-spe" or "none" */
	char detail[256];	/* the events to use, or the reason there is none */
};

/*
 * Never fails: a host without a usable PMU gets kind "none" and the reason
 * (no PMU exposed by the hypervisor, perf_event_paranoid without
 * CAP_PERFMON, the kernel refusing the event, ...). The events are perf's
 * own spelling (tools/perf/arch/x86/util/mem-events.c,
 * tools/perf/arch/arm64/util/mem-events.c), e.g.
 * "{cpu/mem-loads-aux/,cpu/mem-loads,ldlat=30/}:P,cpu/mem-stores/P".
 * On the real root, the first event is also opened once to be sure.
 */
int pmu_detect(struct pmu_info *ret);

/*
 * The same against a tree laid out like / (sys/bus/event_source/devices,
 * proc/cpuinfo, proc/sys/kernel/perf_event_paranoid, proc/self/status),
 * without opening anything: for tests with fake sysfs trees.
 */
int pmu_detect_at(const char *root, struct pmu_info *ret);

/* Default load latency threshold in cycles (perf's, mem-events.c). */
#define PMU_DEFAULT_LDLAT 30

#define PMU_MAX_EVENTS 8

/* One event of a parsed event list. */
struct pmu_event {
	struct perf_event_attr attr;
	char name[128];		/* as written, e.g. "cpu/mem-stores/P" */
	unsigned int group;	/* events of one {...} share it */
	bool leader;		/* first of its group (or alone) */
	bool precise_max;	/* "P": the highest precise_ip the kernel takes */
	bool count_only;	/* a group's helper (mem-loads-aux): never sampled */
};

/*
 * Parses a comma-separated list of perf event strings, as perf's parser
 * would for the cases mmhitm needs: "pmu/term,term=value,.../modifiers"
 * with terms from <root>/sys/bus/event_source/devices/<pmu>/events/ and
 * bit positions from .../format/; "{a,b}:mods" groups; software events by
 * name ("page-faults", "minor-faults", "cpu-clock", ...); modifiers u, k,
 * p, pp, ppp, P. A group leader that is a PMU's "-aux" event (Intel's
 * mem-loads-aux, which Sapphire Rapids and later need in front of
 * mem-loads: arch/x86/events/intel/core.c, require_mem_loads_aux_event())
 * is marked count_only. root NULL is "/". Returns 0 or -EINVAL with the
 * reason in err.
 */
int pmu_events_parse(const char *root, const char *spec, struct pmu_event *ret, size_t max,
		     size_t *ret_n, char *err, size_t errlen);

#endif
