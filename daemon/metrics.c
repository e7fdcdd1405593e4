// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"
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

int metrics_write(FILE *f, const struct boot_info *b, const struct recorder *r, uint64_t db_bytes)
{
	size_t n = counters_count(r->counters);

	metric(f, "mmhitm_info", "gauge", "The host's kernel and what mmhitmd can record on it.");
	fputs("mmhitm_info{", f);
	labels(f, b);
	fputs(",pmu=\"", f);
	metrics_escape(f, b->pmu.kind);
	fputs("\",lru_gen=\"", f);
	metrics_escape(f, b->lru_gen);
	fputs("\"} 1\n", f);

	metric(f, "mmhitm_tracepoint_hits_total", "counter",
	       "Tracepoint hits counted in the kernel since mmhitmd started.");
	for (size_t i = 0; i < n; i++) {
		fputs("mmhitm_tracepoint_hits_total{", f);
		labels(f, b);
		fputs(",event=\"", f);
		metrics_escape(f, counters_name(r->counters, i));
		fprintf(f, "\"} %" PRIu64 "\n", counter_delta(r->base[i], r->prev[i]));
	}

	metric(f, "mmhitm_daemon_cpu_seconds_total", "counter", "CPU time mmhitmd used.");
	fprintf(f, "mmhitm_daemon_cpu_seconds_total %.6f\n", r->cpu_ns_total / 1e9);
	metric(f, "mmhitm_daemon_resident_bytes", "gauge", "mmhitmd's resident memory.");
	fprintf(f, "mmhitm_daemon_resident_bytes %" PRId64 "\n",
		r->last_rss_kb > 0 ? r->last_rss_kb * 1024 : 0);
	metric(f, "mmhitm_events_lost_total", "counter",
	       "Learning events the ring buffer overran or dropped.");
	fprintf(f, "mmhitm_events_lost_total %" PRIu64 "\n", r->lost_total);
	metric(f, "mmhitm_learn_records_total", "counter", "Learning events read.");
	fprintf(f, "mmhitm_learn_records_total %" PRIu64 "\n", r->learn_records_total);
	metric(f, "mmhitm_intervals_written_total", "counter", "Intervals committed to the database.");
	fprintf(f, "mmhitm_intervals_written_total %" PRIu64 "\n", r->written);
	metric(f, "mmhitm_intervals_dropped_total", "counter",
	       "Interval writes that failed (folded into the next interval).");
	fprintf(f, "mmhitm_intervals_dropped_total %" PRIu64 "\n", r->dropped_total);
	metric(f, "mmhitm_database_bytes", "gauge", "Size of the database file.");
	fprintf(f, "mmhitm_database_bytes %" PRIu64 "\n", db_bytes);
	fputs("# EOF\n", f);
	return ferror(f) ? -EIO : 0;
}

int metrics_write_file(const char *path, const struct boot_info *b, const struct recorder *r,
		       uint64_t db_bytes)
{
	char tmp[4096];
	FILE *f;
	int ret;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, getpid());
	f = fopen(tmp, "we");
	if (!f)
		return log_warning_errno(errno, "Failed to write metrics to %s: %m, ignoring", tmp);
	ret = metrics_write(f, b, r, db_bytes);
	if (fclose(f) != 0 && ret >= 0)
		ret = -errno;
	/* The collector must never see a half-written file. */
	if (ret >= 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0) {
		unlink(tmp);
		return log_warning_errno(ret, "Failed to write metrics to %s: %m, ignoring", path);
	}
	return 0;
}
