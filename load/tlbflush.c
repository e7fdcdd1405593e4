// SPDX-License-Identifier: GPL-2.0
/*
 * tlbflush (P4), will-it-scale's tlb_flush2_threads: every thread maps
 * 1 MiB of private anonymous memory and, page by page, writes a byte,
 * zaps the page with MADV_DONTNEED (zap_page_range_single() ->
 * lru_add_drain() -> lruvec.lru_lock, and a TLB flush) and checks that it
 * reads back zero; then munmap() and again. One loop is one 1 MiB pass.
 *
 * The zero check is real: a page that still holds the byte means the zap
 * did not happen, and the run fails.
 */
#include <errno.h>
#include <getopt.h>
#include <sys/mman.h>

#include "load.h"
#include "log.h"
#include "util.h"
#include "workloads.h"

/* tlb_flush2 maps 1 MiB per task: 256 pages of 4 KiB on x86. */
#define TLBFLUSH_MAP_BYTES	(1UL << 20)
#define TLBFLUSH_MARK		0x5a	/* the byte written before each zap */

enum {
	AUX_ZAPPED,	/* madvise(MADV_DONTNEED) calls, one page each */
	AUX_CHECKED,	/* pages read back after their zap */
	AUX_NONZERO,	/* ... that did not read zero */
};

int tlbflush_cycle(char *map, size_t len, size_t page, uint64_t *zapped, uint64_t *checked,
		   uint64_t *nonzero)
{
	for (size_t off = 0; off < len; off += page) {
		volatile char *p = map + off;

		*p = TLBFLUSH_MARK;
		if (madvise(map + off, page, MADV_DONTNEED) < 0)
			return -errno;
		(*zapped)++;
		(*checked)++;
		if (*p != 0)
			(*nonzero)++;
	}
	return *nonzero ? -EIO : 0;
}

static int tlbflush_work(struct load_job *job, struct load_worker *w)
{
	size_t page = sysconf(_SC_PAGESIZE);
	uint64_t n = 0;
	int r = 0;

	while (!load_worker_should_stop(job, n)) {
		char *map = mmap(NULL, TLBFLUSH_MAP_BYTES, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (map == MAP_FAILED) {
			r = log_error_errno(errno, "tlbflush: worker %u: mmap failed: %m", w->index);
			break;
		}
		r = tlbflush_cycle(map, TLBFLUSH_MAP_BYTES, page, &w->aux[AUX_ZAPPED],
				   &w->aux[AUX_CHECKED], &w->aux[AUX_NONZERO]);
		if (munmap(map, TLBFLUSH_MAP_BYTES) < 0 && r == 0)
			r = log_error_errno(errno, "tlbflush: worker %u: munmap failed: %m", w->index);
		if (r == -EIO)
			log_error("tlbflush: worker %u: a page did not read zero after MADV_DONTNEED",
				  w->index);
		else if (r < 0)
			log_error_errno(r, "tlbflush: worker %u: madvise failed: %m", w->index);
		if (r < 0)
			break;
		load_worker_count(w, ++n);
	}
	return r;
}

struct load_job *tlbflush_job_new(const struct load_opts *opts)
{
	struct load_job *job;

	job = load_job_new("tlbflush", opts, 1, opts->workers ? opts->workers : opts->nr_cpus, false);
	if (job)
		job->work = tlbflush_work;
	return job;
}

int tlbflush_report(struct load_report *rep, const struct load_job *job)
{
	uint64_t loops = load_job_sum_ops(job);
	double secs = load_job_seconds(job);

	load_report_add_job(rep, job);
	load_report_add_u64(rep, "map_bytes", "mapping per loop", TLBFLUSH_MAP_BYTES, "B");
	load_report_add_u64(rep, "page_bytes", "page", sysconf(_SC_PAGESIZE), "B");
	load_report_add_u64(rep, "loops", "loops (1 MiB passes)", loops, NULL);
	load_report_add_u64(rep, "madvise_calls", "MADV_DONTNEED zaps",
			    load_job_sum_aux(job, AUX_ZAPPED), NULL);
	load_report_add_u64(rep, "zero_checks", "pages read back",
			    load_job_sum_aux(job, AUX_CHECKED), NULL);
	load_report_add_u64(rep, "nonzero_reads", "pages not zero after the zap",
			    load_job_sum_aux(job, AUX_NONZERO), NULL);
	load_report_add_metric(rep, "loops_per_s", "loop rate", secs > 0 ? loops / secs : 0,
			       "loops/s", true);
	return 0;
}

void cmd_tlbflush_help(void)
{
	printf("Usage: mmhitm-load tlbflush [OPTIONS]\n\n"
	       "P4 (lru_add_drain() from zap_page_range_single() -> lruvec.lru_lock):\n"
	       "will-it-scale's tlb_flush2_threads. Every thread maps 1 MiB of private\n"
	       "anonymous memory; for each page it writes a byte, zaps the page with\n"
	       "madvise(MADV_DONTNEED) and checks that it reads back zero (a page that does\n"
	       "not fails the run); then munmap() and repeat. Reports loops (1 MiB passes)/s.\n\n");
	load_opts_help("threads", "threads (default: one per CPU in --cpus)");
	printf("\n--loops counts each thread's 1 MiB passes.\n");
}

int cmd_tlbflush(int argc, char **argv)
{
	struct load_opts opts;
	struct load_job *job;
	int r;

	r = load_opts_parse(argc, argv, &opts, "threads", NULL, NULL, NULL, cmd_tlbflush_help);
	if (r)
		return r == 1 ? LOAD_EXIT_OK : r;

	job = tlbflush_job_new(&opts);
	r = job ? load_job_run_report(job, opts.json, tlbflush_report) : -ENOMEM;
	load_job_free(job);
	load_opts_done(&opts);
	return r;
}
