/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CHARTS_H
#define MMHITM_CHARTS_H

/*
 * The HTML report's SVG charts (charts.c), for html.c alone. Each writes
 * one inline <svg>, or a line saying why there is none, and returns 0 or
 * -ENOMEM.
 */

#include <stddef.h>
#include <stdio.h>

#include "report-model.h"

/* The fleet's distinct kernels, for the progress chart and the kernel table. */
struct fleet_kernel {
	const struct kernel_info *k;	/* the first host's copy */
	size_t hosts;
};

/* Most hosts first. Caller frees; NULL on -ENOMEM. */
struct fleet_kernel *fleet_kernels(const struct report *r, size_t *ret_n);

/* The rollouts section: hosts per kernel, and per path the share of hosts carrying its patch. */
int progress_chart(const struct report *r, FILE *f, struct fleet_kernel *fk, size_t nk);
int coverage_chart(const struct report *r, FILE *f);

/* Path p's section: rate over time, the event study, work over time, the
 * rates before and after, and the change per host. */
int series_chart(const struct report *r, FILE *f, int p);
/* 1: no event study (the line saying why written instead), else 0 or -errno. */
int event_chart(const struct report *r, FILE *f, int p);
int work_chart(const struct report *r, FILE *f, int p);
void distribution_chart(const struct report *r, FILE *f, int p);
int host_change_chart(const struct report *r, FILE *f, int p);

#endif
