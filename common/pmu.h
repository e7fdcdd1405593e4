/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_PMU_H
#define MMHITM_PMU_H

/* Which memory-sampling PMU this host has, or why it has none. */
struct pmu_info {
	char kind[16];		/* "intel-pebs", "amd-ibs", "arm-spe" or "none" */
	char detail[256];	/* the events to use, or the reason there is none */
};

/* Never fails: a host without a PMU gets kind "none" and the reason. */
int pmu_detect(struct pmu_info *ret);

#endif
