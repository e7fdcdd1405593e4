// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm import: a perf.data file (perf c2c record, perf mem record,
 * perf record -d) into the database as a pseudo-boot of the host and
 * kernel it was recorded on, with intervals over its time range and its
 * memory samples aggregated into mem_lines, exactly as mmhitmd stores its
 * own. Everything goes in one transaction: a file that turns out
 * malformed halfway leaves the database as it was.
 *
 * The file is read twice: the first pass validates all of it and finds
 * the time range, so nothing is written for a file that will not read;
 * the second aggregates.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "btf.h"
#include "commands.h"
#include "db.h"
#include "kallsyms.h"
#include "log.h"
#include "mem-agg.h"
#include "perf-data.h"
#include "util.h"

/* Longest kernel callchain kept per sample (the sampler's default too). */
#define IMPORT_MAX_STACK	16
/* A recording split into more intervals than this is a wrong --interval. */
#define MAX_INTERVALS		100000

void cmd_import_help(void)
{
	printf("Usage: mmhitm import FILE [OPTIONS]\n\n"
	       "Imports a perf.data file written by perf c2c record, perf mem record or\n"
	       "perf record -d (perf 4.x to 6.x, file mode, uncompressed) as a boot of the\n"
	       "host and kernel it was recorded on (source 'import'), with intervals over\n"
	       "its time range and its memory samples aggregated per cache line as\n"
	       "mmhitmd stores its own. One transaction: a malformed file changes nothing.\n\n"
	       "  --db PATH              database (default $MMHITM_DB or %s)\n"
	       "  --hostname H           host to file it under (default: the file's)\n"
	       "  --kernel-release R     kernel release (default: the file's uname -r)\n"
	       "  --kallsyms FILE        store the kernel symbols the samples' IPs and\n"
	       "                         callchains hit (FILE: /proc/kallsyms of the\n"
	       "                         recorded boot)\n"
	       "  --btf FILE             store the recorded kernel's struct layouts from its\n"
	       "                         BTF (/sys/kernel/btf/vmlinux of that kernel)\n"
	       "  --interval DURATION    interval length (default 60s)\n"
	       "  --cache-line-size N    line size of the recorded host (default: the file's\n"
	       "                         CACHE feature, else this host's)\n"
	       "  --user                 store user-space samples per line too\n"
	       "  --max-stack N          kernel callchain frames kept (default %d)\n",
	       default_db_path(), IMPORT_MAX_STACK);
}

struct event_count {
	uint64_t samples, kernel, user;
};

struct interval_acc {
	struct mem_agg *agg;
	struct sampling_stats st;
	int64_t start_ns, end_ns;
};

struct import {
	const char *path;
	struct perf_data *pd;
	struct event_count *ev;
	uint64_t unknown, lost, throttled, auxtrace, hash;
	bool have_time;
	uint64_t t_first, t_last;	/* perf clock */
	int64_t wall_offset;		/* wall ns = perf ns + wall_offset */
	const char *time_source;
	int64_t interval_ns;
	struct interval_acc *iv;
	size_t n_iv;
	struct mem_agg_config agg_cfg;
};

static bool is_memory_event(const struct perf_data_event *e)
{
	return e->attr.sample_type & PERF_SAMPLE_ADDR;
}

static bool is_kernel(uint16_t misc)
{
	return (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
}

/* FNV-1a, to name the pseudo-boot after the file's content. */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int read_error(struct import *im, int r)
{
	return log_error_errno(r, "Failed to read %s: %s", im->path, perf_data_error(im->pd));
}

/* Pass 1: validate everything, count per event, find the time range. */
static int scan(struct import *im)
{
	struct perf_data_record rec;
	int r;

	im->hash = fnv(0xcbf29ce484222325ULL, &perf_data_info(im->pd)->file_size, 8);
	perf_data_rewind(im->pd);
	while ((r = perf_data_next(im->pd, &rec)) > 0) {
		im->hash = fnv(im->hash, rec.data, rec.size);
		switch (rec.type) {
		case PERF_RECORD_SAMPLE: {
			struct event_count *c;

			if (!rec.event) {
				im->unknown++;
				break;
			}
			c = &im->ev[rec.event->index];
			c->samples++;
			if (is_kernel(rec.misc))
				c->kernel++;
			else
				c->user++;
			if (is_memory_event(rec.event) && (rec.sample.sample_type & PERF_SAMPLE_TIME)) {
				if (!im->have_time || rec.sample.time < im->t_first)
					im->t_first = rec.sample.time;
				if (!im->have_time || rec.sample.time > im->t_last)
					im->t_last = rec.sample.time;
				im->have_time = true;
			}
			break;
		}
		case PERF_RECORD_LOST:
			im->lost += rec.u.lost.lost;
			break;
		case PERF_RECORD_LOST_SAMPLES:
			im->lost += rec.u.lost_samples.lost;
			break;
		case PERF_RECORD_THROTTLE:
			im->throttled++;
			break;
		case PERF_DATA_RECORD_AUXTRACE:
			im->auxtrace++;
			break;
		default:
			break;
		}
	}
	if (r < 0)
		return read_error(im, r);
	return 0;
}

/*
 * perf's sample times are its clock (CLOCK_MONOTONIC-like unless recorded
 * with -k): CLOCK_DATA maps them to wall time exactly; without it the
 * last sample is pinned at the file's mtime, which perf writes last.
 */
static int place_in_time(struct import *im)
{
	const struct perf_data_info *in = perf_data_info(im->pd);
	struct stat st;
	int64_t mtime_ns, span;

	if (stat(im->path, &st) < 0)
		return log_error_errno(errno, "Failed to stat %s: %m", im->path);
	mtime_ns = (int64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + st.st_mtim.tv_nsec;

	if (!im->have_time) {
		im->t_first = im->t_last = 0;
		im->wall_offset = mtime_ns;
		im->time_source = "the file's mtime (its samples carry no time)";
	} else if (in->has_clock_data) {
		im->wall_offset = (int64_t)(in->clock_tod_ns - in->clock_clockid_ns);
		im->time_source = "the file's CLOCK_DATA (exact)";
	} else {
		im->wall_offset = mtime_ns - (int64_t)im->t_last;
		im->time_source = "the file's mtime as the last sample's time (no CLOCK_DATA: "
				  "record with perf record -k CLOCK_MONOTONIC for exact times)";
	}

	span = (int64_t)(im->t_last - im->t_first) + 1;
	im->n_iv = (size_t)((span + im->interval_ns - 1) / im->interval_ns);
	if (im->n_iv == 0)
		im->n_iv = 1;
	if (im->n_iv > MAX_INTERVALS)
		return log_error_errno(E2BIG, "%s spans %.0f s: more than %d intervals of %.0f s, "
				       "pass a longer --interval", im->path, span / 1e9, MAX_INTERVALS,
				       im->interval_ns / 1e9);
	im->iv = calloc(im->n_iv, sizeof(*im->iv));
	if (!im->iv)
		return log_oom();
	for (size_t i = 0; i < im->n_iv; i++) {
		struct interval_acc *a = &im->iv[i];

		a->start_ns = (int64_t)im->t_first + im->wall_offset + (int64_t)i * im->interval_ns;
		a->end_ns = a->start_ns + im->interval_ns;
		if (i == im->n_iv - 1)
			a->end_ns = (int64_t)im->t_last + im->wall_offset + 1;
		a->st.active_ns = a->end_ns - a->start_ns;
		a->agg = mem_agg_new(&im->agg_cfg);
		if (!a->agg)
			return -ENOMEM;
	}
	return 0;
}

static size_t interval_of(const struct import *im, uint64_t t)
{
	uint64_t i;

	if (t < im->t_first || !im->have_time)
		return 0;
	i = (t - im->t_first) / (uint64_t)im->interval_ns;
	return i < im->n_iv ? i : im->n_iv - 1;
}

/* Pass 2: aggregate the memory samples per interval. */
static int aggregate(struct import *im)
{
	struct perf_data_record rec;
	size_t cur = 0;
	int r;

	perf_data_rewind(im->pd);
	while ((r = perf_data_next(im->pd, &rec)) > 0) {
		const struct perf_data_sample *s = &rec.sample;
		struct interval_acc *a;

		switch (rec.type) {
		case PERF_RECORD_SAMPLE: {
			struct mem_agg_sample ms;

			if (!rec.event || !is_memory_event(rec.event))
				break;
			if (s->sample_type & PERF_SAMPLE_TIME)
				cur = interval_of(im, s->time);
			a = &im->iv[cur];
			a->st.samples++;
			if (is_kernel(rec.misc))
				a->st.samples_kernel++;
			else
				a->st.samples_user++;
			ms = (struct mem_agg_sample){
				.ip = s->ip, .addr = s->addr, .data_src = s->data_src,
				.weight = s->weight,
				.has_weight = s->sample_type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT),
				.kernel = is_kernel(rec.misc),
				.callchain = s->callchain, .callchain_nr = s->callchain_nr,
			};
			if (mem_agg_add(a->agg, &ms) < 0)
				return -ENOMEM;
			break;
		}
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
			if (rec.sid.present && rec.sid.time != UINT64_MAX)
				cur = interval_of(im, rec.sid.time);
			im->iv[cur].st.lost += rec.type == PERF_RECORD_LOST ? rec.u.lost.lost
									 : rec.u.lost_samples.lost;
			break;
		case PERF_RECORD_THROTTLE:
			cur = interval_of(im, rec.u.throttle.time);
			im->iv[cur].st.throttled++;
			break;
		default:
			break;
		}
	}
	if (r < 0)
		return read_error(im, r);
	return 0;
}

/* Which memory-sampling PMU the file's events came from. */
static const char *pmu_kind_of(const struct import *im)
{
	const struct perf_data_info *in = perf_data_info(im->pd);

	for (size_t i = 0; i < perf_data_n_events(im->pd); i++) {
		const struct perf_data_event *e = perf_data_event(im->pd, i);

		if (!(e->attr.sample_type & PERF_SAMPLE_DATA_SRC) || !im->ev[i].samples)
			continue;
		if (strstr(e->name, "ibs_op"))
			return "amd-ibs";
		if (strstr(e->name, "arm_spe"))
			return "arm-spe";
		if (e->attr.precise_ip && in->cpuid && startswith(in->cpuid, "GenuineIntel"))
			return "intel-pebs";
		if (e->attr.precise_ip && in->cpuid && startswith(in->cpuid, "AuthenticAMD"))
			return "amd-ibs";
	}
	return "none";
}

static char *memory_event_names(const struct import *im)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	bool first = true;

	if (!f)
		return NULL;
	for (size_t i = 0; i < perf_data_n_events(im->pd); i++) {
		const struct perf_data_event *e = perf_data_event(im->pd, i);

		if (!is_memory_event(e) || !im->ev[i].samples)
			continue;
		fprintf(f, "%s%s", first ? "" : ",", e->name);
		first = false;
	}
	fclose(f);
	return s;
}

struct import_opts {
	const char *db, *hostname, *release, *kallsyms, *btf;
};

/* The host: the one of that hostname if there is exactly one, else its own row. */
static int store_host(sqlite3 *db, const char *hostname, int64_t *ret)
{
	_cleanup_finalize_ sqlite3_stmt *sel = NULL, *ins = NULL;
	char machine_id[300];
	int r, rc;

	r = db_prepare(db, &sel, "SELECT host_id, (SELECT count(*) FROM hosts WHERE hostname = ?1)"
			     " FROM hosts WHERE hostname = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_text(sel, 1, hostname, -1, SQLITE_STATIC);
	rc = sqlite3_step(sel);
	if (rc == SQLITE_ROW && sqlite3_column_int64(sel, 1) == 1) {
		*ret = sqlite3_column_int64(sel, 0);
		return 0;
	}
	snprintf(machine_id, sizeof(machine_id), "import:%s", hostname);
	r = db_prepare(db, &ins, "INSERT INTO hosts (machine_id, hostname) VALUES (?1, ?2)"
			     " ON CONFLICT (machine_id) DO UPDATE SET hostname = excluded.hostname"
			     " RETURNING host_id");
	if (r < 0)
		return r;
	sqlite3_bind_text(ins, 1, machine_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 2, hostname, -1, SQLITE_STATIC);
	rc = sqlite3_step(ins);
	if (rc != SQLITE_ROW)
		return log_error_errno(db_errno(rc) ?: -EIO, "Failed to store host: %s",
				       sqlite3_errmsg(db));
	*ret = sqlite3_column_int64(ins, 0);
	return 0;
}

static int page_size_of(const char *arch)
{
	struct utsname u;

	/* x86 and s390 have one base page size */
	if (!strcmp(arch, "x86_64") || !strcmp(arch, "i386") || !strcmp(arch, "i686") ||
	    !strcmp(arch, "s390x"))
		return 4096;
	if (uname(&u) == 0 && strcmp(u.machine, arch) != 0)
		log_notice("The page size of a %s host is not in perf.data; assuming this host's (%ld)",
			   arch, sysconf(_SC_PAGESIZE));
	return (int)sysconf(_SC_PAGESIZE);
}

static int store_boot(struct import *im, sqlite3 *db, const struct import_opts *o,
		      const char *hostname, const char *release, const char *pmu_events,
		      int64_t *ret)
{
	const struct perf_data_info *in = perf_data_info(im->pd);
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	char uuid[64], detail[1024];
	const char *arch = in->arch ?: "unknown";
	int64_t host_id = 0, first = im->iv[0].start_ns, last = im->iv[im->n_iv - 1].end_ns;
	int r, rc;

	r = store_host(db, hostname, &host_id);
	if (r < 0)
		return r;
	/* named after the content: the same file twice is the same boot */
	snprintf(uuid, sizeof(uuid), "import:%016" PRIx64, im->hash);
	snprintf(detail, sizeof(detail), "perf.data events: %s (perf %s)",
		 pmu_events && *pmu_events ? pmu_events : "none with addresses",
		 in->perf_version ?: "version unknown");

	r = db_prepare(db, &st,
		"INSERT INTO boots (host_id, boot_uuid, source, first_seen_ns, last_seen_ns,"
		" kernel_release, kernel_version, kernel_build_id, arch, nr_cpus_online,"
		" nr_cpus_possible, cache_line_size, page_size, pmu_kind, pmu_detail, lru_gen, btf)"
		" VALUES (?1, ?2, 'import', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
		" 'unknown', ?15) RETURNING boot_id");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, host_id);
	sqlite3_bind_text(st, 2, uuid, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 3, first);
	sqlite3_bind_int64(st, 4, last);
	sqlite3_bind_text(st, 5, release, -1, SQLITE_STATIC);
	/* perf.data has uname -r but not uname -v */
	sqlite3_bind_text(st, 6, "(not in perf.data)", -1, SQLITE_STATIC);
	if (perf_data_kernel_build_id(im->pd))
		sqlite3_bind_text(st, 7, perf_data_kernel_build_id(im->pd), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, arch, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 9, (int)in->nr_cpus_online);
	if (in->nr_cpus_avail)
		sqlite3_bind_int(st, 10, (int)in->nr_cpus_avail);
	sqlite3_bind_int(st, 11, (int)im->agg_cfg.line_size);
	sqlite3_bind_int(st, 12, page_size_of(arch));
	sqlite3_bind_text(st, 13, pmu_kind_of(im), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 14, detail, -1, SQLITE_TRANSIENT);
	if (o->btf)
		sqlite3_bind_text(st, 15, o->btf, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if ((rc & 0xff) == SQLITE_CONSTRAINT) {
		int64_t other = 0;
		_cleanup_finalize_ sqlite3_stmt *q = NULL;

		if (db_prepare(db, &q, "SELECT boot_id FROM boots WHERE boot_uuid = ?1") == 0) {
			sqlite3_bind_text(q, 1, uuid, -1, SQLITE_STATIC);
			if (sqlite3_step(q) == SQLITE_ROW)
				other = sqlite3_column_int64(q, 0);
		}
		return log_error_errno(EEXIST, "%s was already imported (boot %" PRId64 ", %s)",
				       im->path, other, uuid);
	}
	if (rc != SQLITE_ROW)
		return log_error_errno(db_errno(rc) ?: -EIO, "Failed to store boot: %s",
				       sqlite3_errmsg(db));
	*ret = sqlite3_column_int64(st, 0);
	return 0;
}

static int store_intervals(struct import *im, sqlite3 *db, int64_t boot_id, const char *pmu_events)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(db, &st, "INSERT INTO intervals (boot_id, start_ns, end_ns, partial)"
			     " VALUES (?1, ?2, ?3, ?4)");
	if (r < 0)
		return r;
	for (size_t i = 0; i < im->n_iv; i++) {
		struct interval_acc *a = &im->iv[i];
		int64_t interval_id;

		sqlite3_bind_int64(st, 1, boot_id);
		sqlite3_bind_int64(st, 2, a->start_ns);
		sqlite3_bind_int64(st, 3, a->end_ns);
		sqlite3_bind_int(st, 4, a->end_ns - a->start_ns < im->interval_ns);
		r = db_step_done(db, st);
		if (r < 0)
			return r;
		interval_id = sqlite3_last_insert_rowid(db);
		r = mem_agg_write(a->agg, db, boot_id, interval_id, pmu_events, &a->st);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The kernel symbols the stored IPs and callchain frames fall in. */
static int store_ksyms(sqlite3 *db, int64_t boot_id, const char *path, size_t *ret_n,
		       size_t *ret_unresolved)
{
	_cleanup_finalize_ sqlite3_stmt *ips = NULL;
	struct kallsyms *ks;
	size_t n = 0, miss = 0;
	int r = 0, rc;

	ks = kallsyms_load(path);
	if (!ks) {
		if (errno == EPERM)
			return log_error_errno(EPERM, "%s shows every address as zero (kptr_restrict): "
					       "copy it as root", path);
		return log_error_errno(errno, "Failed to read %s: %m", path);
	}
	/* every kernel address we stored: mem_lines IPs, then callchain frames */
	r = db_prepare(db, &ips,
		"WITH RECURSIVE frames(rest, ip) AS ("
		"  SELECT ips || ' ', NULL FROM callchains WHERE boot_id = ?1"
		"  UNION ALL SELECT substr(rest, instr(rest, ' ') + 1),"
		"   substr(rest, 1, instr(rest, ' ') - 1) FROM frames WHERE rest <> '')"
		" SELECT DISTINCT l.ip FROM mem_lines l JOIN intervals i USING (interval_id)"
		"  WHERE i.boot_id = ?1 AND l.kernel = 1"
		" UNION SELECT ip FROM frames WHERE ip IS NOT NULL");
	if (r < 0)
		goto out;
	sqlite3_bind_int64(ips, 1, boot_id);
	while ((rc = sqlite3_step(ips)) == SQLITE_ROW) {
		uint64_t addr;
		const struct ksym *sym;

		if (sqlite3_column_type(ips, 0) == SQLITE_INTEGER)
			addr = (uint64_t)sqlite3_column_int64(ips, 0);
		else
			addr = strtoull((const char *)sqlite3_column_text(ips, 0), NULL, 16);
		sym = kallsyms_lookup(ks, addr);
		if (!sym) {
			miss++;
			continue;
		}
		r = kallsyms_store(db, boot_id, sym);
		if (r < 0)
			goto out;
		n++;
	}
	if (rc != SQLITE_DONE) {
		r = log_error_errno(db_errno(rc), "Failed to list kernel addresses: %s",
				    sqlite3_errmsg(db));
		goto out;
	}
	*ret_n = n;
	*ret_unresolved = miss;
out:
	kallsyms_free(ks);
	return r;
}

static void print_summary(const struct import *im, int64_t boot_id, const char *hostname,
			  const char *release, sqlite3 *db)
{
	const struct perf_data_info *in = perf_data_info(im->pd);
	int64_t lines = 0;
	char t0[32], t1[32];
	time_t s0 = im->iv[0].start_ns / NSEC_PER_SEC, s1 = im->iv[im->n_iv - 1].end_ns / NSEC_PER_SEC;
	struct tm tm;
	char sql[160];

	strftime(t0, sizeof(t0), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s0, &tm));
	strftime(t1, sizeof(t1), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&s1, &tm));
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM mem_lines JOIN intervals USING (interval_id)"
		 " WHERE boot_id = %" PRId64, boot_id);
	db_query_int(db, &lines, sql);

	printf("%s: perf %s on %s, kernel %s, %s, %u CPUs\n", im->path,
	       in->perf_version ?: "?", hostname, release, in->arch ?: "?", in->nr_cpus_online);
	for (size_t i = 0; i < perf_data_n_events(im->pd); i++) {
		const struct perf_data_event *e = perf_data_event(im->pd, i);
		const struct event_count *c = &im->ev[i];

		printf("  event '%s': %" PRIu64 " samples (%" PRIu64 " kernel, %" PRIu64 " user)%s\n",
		       e->name, c->samples, c->kernel, c->user,
		       is_memory_event(e) ? "" : ", no addresses: not aggregated");
	}
	if (im->unknown)
		printf("  %" PRIu64 " samples of unknown sample id skipped (as perf does)\n", im->unknown);
	printf("  lost %" PRIu64 ", throttled %" PRIu64 "\n", im->lost, im->throttled);
	printf("boot %" PRId64 ": %zu intervals from %s to %s (time from %s), %" PRId64
	       " cache-line rows of %u bytes\n", boot_id, im->n_iv, t0, t1, im->time_source, lines,
	       im->agg_cfg.line_size);
}

static void import_done(struct import *im)
{
	for (size_t i = 0; i < im->n_iv; i++)
		mem_agg_free(im->iv[i].agg);
	free(im->iv);
	free(im->ev);
	perf_data_free(im->pd);
}

static void remove_db(const char *path)
{
	char p[4096];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

int cmd_import(int argc, char **argv)
{
	enum { OPT_HOSTNAME = 0x100, OPT_RELEASE, OPT_KALLSYMS, OPT_BTF, OPT_INTERVAL, OPT_LINE,
	       OPT_USER, OPT_STACK };
	static const struct option opts[] = {
		{ "db",			required_argument, NULL, 'd' },
		{ "hostname",		required_argument, NULL, OPT_HOSTNAME },
		{ "kernel-release",	required_argument, NULL, OPT_RELEASE },
		{ "kallsyms",		required_argument, NULL, OPT_KALLSYMS },
		{ "btf",		required_argument, NULL, OPT_BTF },
		{ "interval",		required_argument, NULL, OPT_INTERVAL },
		{ "cache-line-size",	required_argument, NULL, OPT_LINE },
		{ "user",		no_argument,       NULL, OPT_USER },
		{ "max-stack",		required_argument, NULL, OPT_STACK },
		{ "help",		no_argument,       NULL, 'h' },
		{}
	};
	struct import_opts o = { .db = default_db_path() };
	struct import im = { .interval_ns = 60 * NSEC_PER_SEC,
			     .agg_cfg = { .max_stack = IMPORT_MAX_STACK } };
	struct btf_layout layout = { 0 };
	_cleanup_free_ char *pmu_events = NULL, *err = NULL;
	const char *hostname, *release;
	bool db_existed, have_btf = false;
	size_t nsyms = 0, unresolved = 0;
	sqlite3 *db = NULL;
	int64_t boot_id = 0;
	uint64_t v;
	int c, r;

	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': o.db = optarg; break;
		case OPT_HOSTNAME: o.hostname = optarg; break;
		case OPT_RELEASE: o.release = optarg; break;
		case OPT_KALLSYMS: o.kallsyms = optarg; break;
		case OPT_BTF: o.btf = optarg; break;
		case OPT_INTERVAL:
			if (parse_duration_ns(optarg, &im.interval_ns) < 0 || im.interval_ns < NSEC_PER_MSEC) {
				log_error("Invalid --interval '%s'", optarg);
				return CMD_USAGE;
			}
			break;
		case OPT_LINE:
			if (parse_u64(optarg, &v) < 0 || v < 8 || v > 4096 || (v & (v - 1))) {
				log_error("Invalid --cache-line-size '%s': a power of two in [8, 4096]", optarg);
				return CMD_USAGE;
			}
			im.agg_cfg.line_size = v;
			break;
		case OPT_USER: im.agg_cfg.keep_user = true; break;
		case OPT_STACK:
			if (parse_u64(optarg, &v) < 0 || v > 64) {
				log_error("Invalid --max-stack '%s': 0 to 64", optarg);
				return CMD_USAGE;
			}
			im.agg_cfg.max_stack = v;
			break;
		case 'h': cmd_import_help(); return 0;
		default: return CMD_USAGE;
		}
	}
	if (optind != argc - 1) {
		log_error("Usage: mmhitm import FILE [--db PATH] ... ('mmhitm import --help')");
		return CMD_USAGE;
	}
	im.path = argv[optind];

	r = perf_data_open(im.path, &im.pd, &err);
	if (r < 0)
		return log_error_errno(r, "Failed to read %s: %s", im.path, err ?: "");
	im.ev = calloc(perf_data_n_events(im.pd), sizeof(*im.ev));
	if (!im.ev) {
		r = log_oom();
		goto out;
	}
	r = scan(&im);
	if (r < 0)
		goto out;
	if (im.auxtrace && !im.have_time)
		log_warning("%s holds %" PRIu64 " AUX trace records (Arm SPE, Intel PT) that mmhitm does "
			    "not decode; synthesize memory samples first, e.g. perf inject -i FILE "
			    "--itrace=M -o OUT (see perf-arm-spe(1))", im.path, im.auxtrace);

	hostname = o.hostname ?: perf_data_info(im.pd)->hostname;
	release = o.release ?: perf_data_info(im.pd)->osrelease;
	if (!hostname || !*hostname || !release || !*release) {
		r = log_error_errno(EINVAL, "%s does not say its %s: pass --%s", im.path,
				    !hostname || !*hostname ? "hostname" : "kernel release",
				    !hostname || !*hostname ? "hostname" : "kernel-release");
		goto out;
	}
	if (!im.agg_cfg.line_size)
		im.agg_cfg.line_size = perf_data_info(im.pd)->l1d_line_size;
	if (!im.agg_cfg.line_size) {
		r = mem_host_line_size(NULL, &im.agg_cfg.line_size);
		if (r < 0) {
			log_error("%s does not say its cache line size and this host's is unknown: "
				  "pass --cache-line-size", im.path);
			goto out;
		}
		log_notice("%s does not say its cache line size (no CACHE feature); using this "
			   "host's, %u bytes (--cache-line-size to change)", im.path,
			   im.agg_cfg.line_size);
	}
	r = place_in_time(&im);
	if (r < 0)
		goto out;
	r = aggregate(&im);
	if (r < 0)
		goto out;
	if (o.btf) {
		r = btf_layout_collect(o.btf, &layout);
		if (r < 0)
			goto out;
		have_btf = true;
	}
	pmu_events = memory_event_names(&im);

	db_existed = access(o.db, F_OK) == 0;
	r = db_open(o.db, 0, &db);
	if (r < 0)
		goto out;
	r = db_begin(db);
	if (r < 0)
		goto out_db;
	r = store_boot(&im, db, &o, hostname, release, pmu_events, &boot_id);
	if (r >= 0)
		r = store_intervals(&im, db, boot_id, pmu_events);
	if (r >= 0 && o.kallsyms)
		r = store_ksyms(db, boot_id, o.kallsyms, &nsyms, &unresolved);
	if (r >= 0 && have_btf)
		r = btf_layout_store(db, boot_id, &layout);
	if (r >= 0)
		r = db_commit(db);
	if (r < 0) {
		db_rollback(db);
		goto out_db;
	}
	print_summary(&im, boot_id, hostname, release, db);
	if (o.kallsyms) {
		printf("  %zu kernel symbols stored from %s", nsyms, o.kallsyms);
		if (unresolved)
			printf(", %zu addresses outside every symbol (is it the recorded boot's?)",
			       unresolved);
		printf("\n");
	}
	if (have_btf)
		printf("  %zu struct fields stored from %s\n", layout.n, o.btf);
out_db:
	db_close(db);
	/* a database this import created and could not fill is not left behind */
	if (r < 0 && !db_existed)
		remove_db(o.db);
out:
	btf_layout_done(&layout);
	import_done(&im);
	return r;
}
