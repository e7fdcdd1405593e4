// SPDX-License-Identifier: GPL-2.0
/*
 * Minimal detection by sysfs presence; the full detection (event strings,
 * mem-loads-aux, paranoid level) comes with the HITM sampler.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pmu.h"
#include "util.h"

int pmu_detect(struct pmu_info *ret)
{
	const char *dev = "/sys/bus/event_source/devices";
	char p[128];

	memset(ret, 0, sizeof(*ret));
	snprintf(p, sizeof(p), "%s/cpu/events/mem-loads", dev);
	if (access(p, F_OK) == 0) {
		snprintf(ret->kind, sizeof(ret->kind), "intel-pebs");
		snprintf(ret->detail, sizeof(ret->detail), "cpu/mem-loads,ldlat=30/P,cpu/mem-stores/P");
		return 0;
	}
	snprintf(p, sizeof(p), "%s/ibs_op", dev);
	if (access(p, F_OK) == 0) {
		snprintf(ret->kind, sizeof(ret->kind), "amd-ibs");
		snprintf(ret->detail, sizeof(ret->detail), "ibs_op//");
		return 0;
	}
	snprintf(p, sizeof(p), "%s/arm_spe_0", dev);
	if (access(p, F_OK) == 0) {
		snprintf(ret->kind, sizeof(ret->kind), "arm-spe");
		snprintf(ret->detail, sizeof(ret->detail), "arm_spe_0//");
		return 0;
	}
	snprintf(ret->kind, sizeof(ret->kind), "none");
	snprintf(p, sizeof(p), "%s/cpu", dev);
	if (access(p, F_OK) != 0)
		snprintf(ret->detail, sizeof(ret->detail),
			 "no PMU: %s has no cpu PMU (a VM whose hypervisor exposes none?)", dev);
	else
		snprintf(ret->detail, sizeof(ret->detail),
			 "no PMU: the cpu PMU has no memory-sampling events");
	return 0;
}
