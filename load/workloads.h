/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_LOAD_WORKLOADS_H
#define MMHITM_LOAD_WORKLOADS_H

/*
 * The workloads' jobs, for their subcommands and for tests that run them
 * in-process. Each *_job_new() returns NULL on failure (logged); free
 * ctxswitch and tlbflush jobs with load_job_free(), pwrite jobs with
 * pwrite_job_free().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load.h"

struct load_job *ctxswitch_job_new(const struct load_opts *opts, bool private_mm);
int ctxswitch_report(struct load_report *rep, const struct load_job *job);

struct load_job *pwrite_job_new(const struct load_opts *opts, const char *dir, size_t bytes);
void pwrite_job_free(struct load_job *job);
/* The size of the (unlinked) file now. */
int pwrite_file_size(const struct load_job *job, uint64_t *ret);
/* Fails with -EIO if the file is not exactly one write long. */
int pwrite_report(struct load_report *rep, const struct load_job *job);

struct load_job *tlbflush_job_new(const struct load_opts *opts);
int tlbflush_report(struct load_report *rep, const struct load_job *job);
/*
 * One tlb_flush2 pass over map: per page write a byte, MADV_DONTNEED it,
 * read it back. Adds to the counters; -EIO when a page did not read zero.
 */
int tlbflush_cycle(char *map, size_t len, size_t page, uint64_t *zapped, uint64_t *checked,
		   uint64_t *nonzero);

#endif
