/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_SNAPSHOT_H
#define MMHITMD_SNAPSHOT_H

#include <stdint.h>

#include "events.h"
#include "learn.h"

/*
 * Objects on demand: windowed recording learns no mm_struct between
 * windows, so as a window opens a BPF task iterator lists every live
 * process's mm (address, tgid, comm) in one pass, for about 0.1 ms per
 * hundred processes and nothing armed before or after. Needs bpf() with
 * CAP_BPF and CAP_PERFMON (kernel pointers are read), BTF, and a kernel
 * with task iterators (5.8); without them the learning streams of the
 * windows are all there is, and boot_events says why.
 */
struct mm_snapshot;

/* NULL when it cannot be had; the reason goes into status. */
struct mm_snapshot *mm_snapshot_new(struct event_status_list *status);
void mm_snapshot_free(struct mm_snapshot *s);

/*
 * Feeds every live mm to the learner as of now_wall (wall clock ns), then
 * closes the snapshot there: an object the learner thought alive that is
 * not in it died since it was last seen. Returns the mms listed or -errno.
 */
int mm_snapshot_take(struct mm_snapshot *s, struct learner *l, int64_t now_wall);

#endif
