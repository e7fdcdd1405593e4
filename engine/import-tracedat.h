/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_IMPORT_TRACEDAT_H
#define MMHITM_IMPORT_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * mmhitm import of a trace-cmd trace.dat (file format v6 or v7, any
 * number of CPUs, the top-level buffer and every instance in it), read
 * through libtracecmd: the events mmhitmd counts, counted per interval;
 * the objects its learning streams learn (mm_struct <-> tgid/comm,
 * (folio, pfn) pairs, contended lock addresses), learned by the same
 * code (daemon/learn-source.c, daemon/learn.c); all stored as a boot of
 * source 'import' in one transaction. cmd-import.c sniffs the file and
 * dispatches here.
 */

struct tracedat_opts {
	const char *db;
	const char *hostname;		/* NULL: the file's uname */
	const char *release;		/* NULL: the file's uname */
	int64_t interval_ns;
};

/* 1 when path starts with trace-cmd's magic, 0 when not, -errno when it
 * can't be read. */
int tracedat_sniff(const char *path);

/* Same for bytes in memory (the fuzz target). */
bool tracedat_magic(const void *data, size_t size);

/* Imports path into o->db; 0 or -errno (logged). */
int tracedat_import(const char *path, const struct tracedat_opts *o);

/*
 * Reads every event of an open trace.dat and runs the counting and the
 * learning, writing nothing (the fuzz target). Returns the events read,
 * or -errno (logged at debug level only).
 */
long tracedat_scan_fd(int fd);

#endif
