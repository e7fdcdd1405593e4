/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_TRACEDAT_H
#define MMHITMD_TRACEDAT_H

#include <stddef.h>
#include <tracefs.h>

/*
 * A trace.dat of one tracefs instance, written by the daemon itself: the
 * version 6 format of trace-cmd.dat.v6(5), which trace-cmd report,
 * KernelShark and `mmhitm import` read. No other program, no mount, no
 * namespace: it works under the shipped unit's hardening, and it writes
 * nothing in tracefs (the top-level tracing_on and every other instance
 * stay as they are, also when it fails).
 */

struct tracedat_event {
	const char *system, *name;
};

/*
 * Writes inst to fd (a new regular file, written from its start): the
 * ring's page and event headers, the ftrace formats, the formats of the
 * n_ev events ev (the events the instance records), /proc/kallsyms,
 * printk_formats and saved_cmdlines, each read once; the options (the
 * instance's trace clock, each CPU's ring statistics, the kernel's uname);
 * then each CPU's ring, read from its trace_pipe_raw until empty (the read
 * consumes it, as trace-cmd extract's does). 0 or -errno, with what
 * (what_len bytes) saying what failed ("/proc/kallsyms", "writing").
 */
int tracedat_write(int fd, struct tracefs_instance *inst, const struct tracedat_event *ev,
		   size_t n_ev, char *what, size_t what_len);

#endif
