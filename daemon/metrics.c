// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "metrics.h"
#include "output.h"
#include "util.h"

void metrics_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void labels(FILE *f, const struct boot_info *b)
{
	fputs("kernel=\"", f);
	metrics_escape(f, b->release);
	fputs("\"", f);
}

static void metric(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void path_series(FILE *f, const struct boot_info *b, const struct path_export *p, int k,
			const char *name, const char *extra)
{
	fprintf(f, "%s{", name);
	labels(f, b);
	fputs(",path=\"", f);
	metrics_escape(f, path_get(k)->id);
	fprintf(f, "\",patch=\"%s\"%s} ", p->patch[k] ?: "unknown", extra);
}

static void write_paths(FILE *f, const struct boot_info *b, const struct path_export *p)
{
	static const struct path_totals none;
	const struct path_totals *t = p->totals ?: &none;

	metric(f, "mmhitm_path_hitm_total", "counter",
	       "HITM samples attributed to each path since mmhitmd started (absent: not sampled).");
	for (int k = 0; k < paths_nr(); k++) {
		if (!t->measured[k])
			continue;
		path_series(f, b, p, k, "mmhitm_path_hitm_total", ",kind=\"local\"");
		fprintf(f, "%" PRIu64 "\n", t->lcl_hitm[k]);
		path_series(f, b, p, k, "mmhitm_path_hitm_total", ",kind=\"remote\"");
		fprintf(f, "%" PRIu64 "\n", t->rmt_hitm[k]);
		path_series(f, b, p, k, "mmhitm_path_hitm_total", ",kind=\"peer\"");
		fprintf(f, "%" PRIu64 "\n", t->peer[k]);
	}
	metric(f, "mmhitm_path_work_total", "counter",
	       "Units of each path's own work (same-mm switches, aging passes, activations, TLB flushes).");
	for (int k = 0; k < paths_nr(); k++) {
		path_series(f, b, p, k, "mmhitm_path_work_total", "");
		fprintf(f, "%.0f\n", t->work[k]);
	}
}

int metrics_write(FILE *f, const struct boot_info *b, const struct recorder *r,
		  const struct path_export *p, const struct daemon_export *x)
{
	const struct recorder_totals *tot = recorder_totals(r);
	size_t n = recorder_nr_events(r);

	metric(f, "mmhitm_info", "gauge", "The host's kernel and what mmhitmd can record on it.");
	fputs("mmhitm_info{", f);
	labels(f, b);
	fputs(",pmu=\"", f);
	metrics_escape(f, b->pmu.kind);
	fputs("\",lru_gen=\"", f);
	metrics_escape(f, b->lru_gen);
	fputs("\"} 1\n", f);

	metric(f, "mmhitm_tracepoint_hits_total", "counter",
	       "Tracepoint hits counted in the kernel since mmhitmd started "
	       "(windowed: scaled from the windows to the intervals).");
	for (size_t i = 0; i < n; i++) {
		fputs("mmhitm_tracepoint_hits_total{", f);
		labels(f, b);
		fputs(",event=\"", f);
		metrics_escape(f, recorder_event_name(r, i));
		fprintf(f, "\"} %" PRIu64 "\n", recorder_event_total(r, i));
	}

	if (p)
		write_paths(f, b, p);

	metric(f, "mmhitm_armed_seconds_total", "counter",
	       "Time mmhitmd had anything armed in the kernel (windowed: its windows).");
	fprintf(f, "mmhitm_armed_seconds_total %.6f\n", tot->armed_ns / 1e9);

	metric(f, "mmhitm_daemon_cpu_seconds_total", "counter", "CPU time mmhitmd used.");
	fprintf(f, "mmhitm_daemon_cpu_seconds_total %.6f\n", tot->cpu_ns / 1e9);
	metric(f, "mmhitm_daemon_resident_bytes", "gauge", "mmhitmd's resident memory.");
	fprintf(f, "mmhitm_daemon_resident_bytes %" PRId64 "\n",
		tot->rss_kb > 0 ? tot->rss_kb * 1024 : 0);
	metric(f, "mmhitm_events_lost_total", "counter",
	       "Learning events the ring buffer overran or dropped.");
	fprintf(f, "mmhitm_events_lost_total %" PRIu64 "\n", tot->lost);
	metric(f, "mmhitm_learn_records_total", "counter", "Learning events read.");
	fprintf(f, "mmhitm_learn_records_total %" PRIu64 "\n", tot->learn_records);
	metric(f, "mmhitm_intervals_written_total", "counter", "Intervals committed to the database.");
	fprintf(f, "mmhitm_intervals_written_total %" PRIu64 "\n", tot->written);
	metric(f, "mmhitm_intervals_dropped_total", "counter",
	       "Interval slots not written on their own (folded into a later interval).");
	fprintf(f, "mmhitm_intervals_dropped_total %" PRIu64 "\n", tot->dropped);
	metric(f, "mmhitm_database_bytes", "gauge", "Size of the database file.");
	fprintf(f, "mmhitm_database_bytes %" PRIu64 "\n", x->db_bytes);
	metric(f, "mmhitm_database_max_bytes", "gauge", "max_db_size; 0: no limit.");
	fprintf(f, "mmhitm_database_max_bytes %" PRIu64 "\n", x->db_max_bytes);
	metric(f, "mmhitm_interval_seconds", "gauge", "The interval mmhitmd writes a row every.");
	fprintf(f, "mmhitm_interval_seconds %.3f\n", x->interval_ns / 1e9);
	metric(f, "mmhitm_last_interval_timestamp_seconds", "gauge",
	       "When mmhitmd wrote its last interval (Unix time).");
	fprintf(f, "mmhitm_last_interval_timestamp_seconds %.3f\n", x->written_ns / 1e9);
	if (x->analyzed_ns >= 0) {
		metric(f, "mmhitm_last_analysis_timestamp_seconds", "gauge",
		       "When attribution last succeeded (Unix time; 0: not yet). Absent with analyze = no.");
		fprintf(f, "mmhitm_last_analysis_timestamp_seconds %.3f\n", x->analyzed_ns / 1e9);
	}
	metric(f, "mmhitm_windows_skipped_total", "counter",
	       "Intervals left without a window by overhead_budget.");
	fprintf(f, "mmhitm_windows_skipped_total %" PRIu64 "\n", x->windows_skipped);
	metric(f, "mmhitm_spike_checks_total", "counter",
	       "Readings of the free counters for spikes (every spike_check; a quarter as often while quiet).");
	fprintf(f, "mmhitm_spike_checks_total %" PRIu64 "\n", x->spike_checks);
	fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

struct metrics_job {
	const struct boot_info *b;
	const struct recorder *r;
	const struct path_export *p;
	const struct daemon_export *x;
};

static int metrics_job_write(FILE *f, void *userdata)
{
	const struct metrics_job *job = userdata;

	return metrics_write(f, job->b, job->r, job->p, job->x);
}

int metrics_write_file(const char *path, const struct boot_info *b, const struct recorder *r,
		       const struct path_export *p, const struct daemon_export *x)
{
	struct metrics_job job = { .b = b, .r = r, .p = p, .x = x };
	int ret;

	/* The collector must never see a half-written file: a regular file is
	 * replaced whole; a FIFO or device is written in place, never replaced,
	 * and never waited for (the main loop). */
	ret = output_write(path, OUTPUT_NONBLOCK, metrics_job_write, &job);
	if (ret < 0)
		return log_warning_errno(ret, "Failed to write metrics to %s: %m, ignoring", path);
	return 0;
}
