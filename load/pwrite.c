// SPDX-License-Identifier: GPL-2.0
/*
 * pwrite (P3), LibMicro's "pwrite -s 1k": every worker pwrite()s the same
 * 1 KiB at offset 0 of one tmpfs file through its own open file
 * description, over and over. Each write marks the one shmem folio accessed
 * (folio_mark_accessed() -> activation batch, workingset_activation()), so
 * all CPUs hit the same struct page and lruvec lines.
 *
 * The file is unlinked as soon as every worker's descriptor is open: no
 * name is left behind, not even after SIGKILL.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "load.h"
#include "log.h"
#include "workloads.h"
#include "util.h"

#define PWRITE_DEFAULT_BYTES	1024		/* LibMicro -s 1k */
#define PWRITE_MAX_BYTES	(1 << 20)
#define PWRITE_DEFAULT_DIR	"/dev/shm"

enum { OPT_SIZE = 256, OPT_DIR };

struct pwrite_state {
	size_t bytes;
	int file_fd;		/* O_RDWR, for the final fstat() */
	int *fds;		/* one per worker */
	unsigned int nr_fds;
};

static int pwrite_work(struct load_job *job, struct load_worker *w)
{
	const struct pwrite_state *st = job->data;
	int fd = st->fds[w->index];
	_cleanup_free_ char *buf = malloc(st->bytes);
	uint64_t n = 0;
	int r = 0;

	if (!buf)
		return log_oom();
	memset(buf, 'P', st->bytes);
	while (!load_worker_should_stop(job, n)) {
		ssize_t k = pwrite(fd, buf, st->bytes, 0);

		if (k != (ssize_t)st->bytes) {
			r = k < 0 ? -errno : -EIO;
			log_error_errno(r, "pwrite: worker %u: pwrite() of %zu bytes returned %zd: %m",
					w->index, st->bytes, k);
			break;
		}
		load_worker_count(w, ++n);
	}
	return r;
}

static void pwrite_state_free(struct pwrite_state *st)
{
	if (!st)
		return;
	for (unsigned int i = 0; i < st->nr_fds; i++)
		if (st->fds[i] >= 0)
			close(st->fds[i]);
	if (st->file_fd >= 0)
		close(st->file_fd);
	free(st->fds);
	free(st);
}

/*
 * Creates the file in dir, one descriptor per worker, and unlinks it.
 * Caller frees with pwrite_state_free().
 */
static int pwrite_state_new(const char *dir, size_t bytes, unsigned int nr_workers,
			    struct pwrite_state **ret)
{
	struct pwrite_state *st;
	char path[4096];
	struct statfs sfs;
	int r;

	if (statfs(dir, &sfs) < 0)
		return log_error_errno(errno, "pwrite: cannot use --dir %s: %m", dir);
	if (sfs.f_type != TMPFS_MAGIC)
		log_warning("pwrite: %s is not tmpfs; P3's path is the shmem folio's, ignoring", dir);

	st = calloc(1, sizeof(*st));
	if (!st)
		return log_oom();
	st->bytes = bytes;
	st->file_fd = -1;
	st->fds = calloc(nr_workers, sizeof(int));
	if (!st->fds) {
		free(st);
		return log_oom();
	}
	for (unsigned int i = 0; i < nr_workers; i++)
		st->fds[i] = -1;
	st->nr_fds = nr_workers;

	r = snprintf(path, sizeof(path), "%s/mmhitm-load-pwrite.%d", dir, (int)getpid());
	if (r < 0 || (size_t)r >= sizeof(path)) {
		r = log_error_errno(ENAMETOOLONG, "pwrite: --dir %s: %m", dir);
		goto fail;
	}
	st->file_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (st->file_fd < 0) {
		r = log_error_errno(errno, "pwrite: failed to create %s: %m", path);
		goto fail;
	}
	log_debug("pwrite: created %s", path);
	/* The file is exactly one write long from the start, and stays so. */
	if (ftruncate(st->file_fd, bytes) < 0) {
		r = log_error_errno(errno, "pwrite: failed to size %s: %m", path);
		goto fail_unlink;
	}
	/* Like LibMicro, each worker opens the file itself: its own struct file. */
	for (unsigned int i = 0; i < nr_workers; i++) {
		st->fds[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (st->fds[i] < 0) {
			r = log_error_errno(errno, "pwrite: failed to open %s: %m", path);
			goto fail_unlink;
		}
	}
	if (unlink(path) < 0) {
		r = log_error_errno(errno, "pwrite: failed to unlink %s: %m", path);
		goto fail;
	}
	log_debug("pwrite: unlinked %s, %u descriptors open", path, nr_workers);
	*ret = st;
	return 0;

fail_unlink:
	unlink(path);
fail:
	pwrite_state_free(st);
	return r;
}

struct load_job *pwrite_job_new(const struct load_opts *opts, const char *dir, size_t bytes)
{
	unsigned int n = opts->workers ? opts->workers : opts->nr_cpus;
	struct pwrite_state *st;
	struct load_job *job;

	job = load_job_new("pwrite", opts, 1, n, false);
	if (!job)
		return NULL;
	if (pwrite_state_new(dir, bytes, n, &st) < 0) {
		load_job_free(job);
		return NULL;
	}
	job->data = st;
	job->work = pwrite_work;
	return job;
}

void pwrite_job_free(struct load_job *job)
{
	if (!job)
		return;
	pwrite_state_free(job->data);
	load_job_free(job);
}

int pwrite_file_size(const struct load_job *job, uint64_t *ret)
{
	const struct pwrite_state *st = job->data;
	struct stat sb;

	if (fstat(st->file_fd, &sb) < 0)
		return -errno;
	*ret = sb.st_size;
	return 0;
}

int pwrite_report(struct load_report *rep, const struct load_job *job)
{
	const struct pwrite_state *st = job->data;
	uint64_t ops = load_job_sum_ops(job), size;
	double secs = load_job_seconds(job);
	int r;

	r = pwrite_file_size(job, &size);
	if (r < 0)
		return log_error_errno(r, "pwrite: failed to stat the file: %m");
	/* Every write was to offset 0: anything but one write's length is a bug. */
	if (size != st->bytes)
		return log_error_errno(EIO, "pwrite: the file is %" PRIu64 " bytes, not %zu",
				       size, st->bytes);

	load_report_add_job(rep, job);
	load_report_add_u64(rep, "bytes_per_op", "bytes per pwrite() at 0", st->bytes, "B");
	load_report_add_u64(rep, "file_bytes", "file size at the end", size, "B");
	load_report_add_u64(rep, "ops", "pwrite() calls", ops, NULL);
	load_report_add_metric(rep, "ops_per_s", "pwrite() rate", secs > 0 ? ops / secs : 0,
			       "ops/s", true);
	return 0;
}

void cmd_pwrite_help(void)
{
	printf("Usage: mmhitm-load pwrite [OPTIONS]\n\n"
	       "P3 (folio_mark_accessed() -> activation of one shmem folio from every CPU):\n"
	       "LibMicro's \"pwrite -s 1k\". Every thread opens one tmpfs file on its own and\n"
	       "pwrite()s 1 KiB at offset 0, over and over. The file is unlinked once all\n"
	       "threads have it open, so nothing is left behind. Reports pwrite() calls/s.\n\n"
	       "Options:\n"
	       "      --size=BYTES      bytes per pwrite() (default: 1k)\n"
	       "      --dir=DIR         a tmpfs directory for the file (default: %s)\n\n",
	       PWRITE_DEFAULT_DIR);
	load_opts_help("threads", "threads (default: one per CPU in --cpus)");
	printf("\n--loops counts each thread's pwrite() calls.\n");
}

struct pwrite_args {
	uint64_t bytes;
	const char *dir;
};

static int parse_extra(int opt, const char *arg, void *userdata)
{
	struct pwrite_args *a = userdata;

	switch (opt) {
	case OPT_SIZE:
		if (parse_size(arg, &a->bytes) < 0 || a->bytes == 0 || a->bytes > PWRITE_MAX_BYTES) {
			log_error("pwrite: --size wants 1..%d bytes, not '%s'", PWRITE_MAX_BYTES, arg);
			return -EINVAL;
		}
		return 0;
	case OPT_DIR:
		a->dir = arg;
		return 0;
	}
	return -EINVAL;
}

int cmd_pwrite(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "dir", required_argument, NULL, OPT_DIR },
		{}
	};
	struct pwrite_args args = { PWRITE_DEFAULT_BYTES, PWRITE_DEFAULT_DIR };
	struct load_opts opts;
	struct load_job *job;
	int r;

	r = load_opts_parse(argc, argv, &opts, "threads", extra, parse_extra, &args,
			    cmd_pwrite_help);
	if (r)
		return r == 1 ? LOAD_EXIT_OK : r;

	job = pwrite_job_new(&opts, args.dir, args.bytes);
	r = job ? load_job_run_report(job, opts.json, pwrite_report) : -ENOMEM;
	pwrite_job_free(job);
	load_opts_done(&opts);
	return r;
}
