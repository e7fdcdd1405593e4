// SPDX-License-Identifier: GPL-2.0
/*
 * The import of a perf.data file into the database as a pseudo-boot (see
 * import.h for the steps, cmd-import.c for the command). The file is read
 * twice: the first pass validates all of it and finds the time range, so
 * nothing is written for a file that will not read; the second aggregates.
 *
 * The time range is that of the bulk of the memory samples: a sample whose
 * time lies more than max_gap_ns from every other (a flipped bit in a
 * timestamp, in practice) would otherwise stretch the range into tens of
 * thousands of empty intervals. Times are grouped into clusters no gap
 * wider than max_gap_ns splits; the cluster with the most samples is the
 * recording, the others are counted as outliers and dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boots.h"
#include "db.h"
#include "import.h"
#include "log.h"
#include "u64map.h"
#include "util.h"

bool import_is_memory_event(const struct perf_data_event *e)
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

int import_init(struct import *im, struct perf_data *pd)
{
	im->pd = pd;
	im->ev = calloc(perf_data_n_events(pd) ?: 1, sizeof(*im->ev));
	if (!im->ev)
		return log_oom();
	return 0;
}

/* One memory sample's time into its max_gap_ns-wide bucket. */
static int bucket_add(struct import *im, struct u64map *index, uint64_t t)
{
	uint64_t key = t / (uint64_t)im->max_gap_ns;
	uintptr_t slot = (uintptr_t)u64map_get(index, key);
	struct import_time_bucket *b;

	if (!slot) {
		if (im->n_buckets == im->cap_buckets) {
			size_t cap = im->cap_buckets ? im->cap_buckets * 2 : 16;
			void *p = reallocarray(im->buckets, cap, sizeof(*im->buckets));

			if (!p)
				return log_oom();
			im->buckets = p;
			im->cap_buckets = cap;
		}
		im->buckets[im->n_buckets++] = (struct import_time_bucket){ .key = key, .min = t, .max = t };
		slot = im->n_buckets;
		if (u64map_put(index, key, (void *)slot) < 0)
			return log_oom();
	}
	b = &im->buckets[slot - 1];
	b->n++;
	if (t < b->min)
		b->min = t;
	if (t > b->max)
		b->max = t;
	return 0;
}

static int bucket_cmp(const void *a, const void *b)
{
	const struct import_time_bucket *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/*
 * The recording's range: the cluster of buckets with the most samples,
 * where a gap wider than max_gap_ns between one bucket's last time and the
 * next one's first starts a new cluster (a bucket is max_gap_ns wide, so
 * no wider gap hides inside one). Ties go to the earliest cluster.
 */
static void choose_range(struct import *im)
{
	uint64_t best_n = 0, best_min = 0, best_max = 0, n = 0, min = 0, max = 0;

	if (!im->n_buckets)
		return;
	qsort(im->buckets, im->n_buckets, sizeof(*im->buckets), bucket_cmp);
	for (size_t i = 0; i <= im->n_buckets; i++) {
		const struct import_time_bucket *b = i < im->n_buckets ? &im->buckets[i] : NULL;

		if (i > 0 && (!b || b->min - max > (uint64_t)im->max_gap_ns)) {
			if (n > best_n) {
				best_n = n;
				best_min = min;
				best_max = max;
			}
			n = 0;
		}
		if (!b)
			break;
		if (!n)
			min = b->min;
		n += b->n;
		max = b->max;
	}
	im->t_first = best_min;
	im->t_last = best_max;
	im->outliers = im->n_timed - best_n;
	for (size_t i = 0; i < im->n_buckets; i++) {
		const struct import_time_bucket *b = &im->buckets[i];

		if (b->max < best_min || b->min > best_max) {
			if (!im->outlier_first || b->min < im->outlier_first)
				im->outlier_first = b->min;
			if (b->max > im->outlier_last)
				im->outlier_last = b->max;
		}
	}
}

/* Pass 1: validate everything, count per event, find the time range. */
/* A memory sample's time: the recording's range, and its bucket when
 * outliers are looked for (index). */
static int scan_time(struct import *im, struct u64map *index, uint64_t t)
{
	if (!im->have_time || t < im->t_first)
		im->t_first = t;
	if (!im->have_time || t > im->t_last)
		im->t_last = t;
	im->have_time = true;
	im->n_timed++;
	if (index)
		return bucket_add(im, index, t);
	return 0;
}

/* Counts one record: samples per event, lost, throttled and AUX records. */
static int scan_record(struct import *im, struct u64map *index, const struct perf_data_record *rec)
{
	struct import_event_count *c;

	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		if (!rec->event) {
			im->unknown++;
			break;
		}
		c = &im->ev[rec->event->index];
		c->samples++;
		if (is_kernel(rec->misc))
			c->kernel++;
		else
			c->user++;
		if (import_is_memory_event(rec->event) && (rec->sample.sample_type & PERF_SAMPLE_TIME))
			return scan_time(im, index, rec->sample.time);
		break;
	case PERF_RECORD_LOST:
		im->lost += rec->u.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		im->lost += rec->u.lost_samples.lost;
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
	return 0;
}

int import_scan(struct import *im)
{
	struct u64map *index = NULL;
	struct perf_data_record rec;
	int r;

	if (im->max_gap_ns > 0) {
		index = u64map_new();
		if (!index)
			return log_oom();
	}
	im->hash = fnv(0xcbf29ce484222325ULL, &perf_data_info(im->pd)->file_size, 8);
	perf_data_rewind(im->pd);
	while ((r = perf_data_next(im->pd, &rec)) > 0) {
		im->hash = fnv(im->hash, rec.data, rec.size);
		r = scan_record(im, index, &rec);
		if (r < 0)
			goto out;
	}
	if (r < 0) {
		r = read_error(im, r);
		goto out;
	}
	r = 0;
	if (index)
		choose_range(im);
	if (im->outliers)
		log_warning("%s: %" PRIu64 " of %" PRIu64 " memory samples have times more than "
			    "%.0f s away from the rest of the recording (perf clock %" PRIu64
			    "..%" PRIu64 " ns, the recording %" PRIu64 "..%" PRIu64 " ns): "
			    "corrupt timestamps, dropped (--max-gap changes the rule)",
			    im->path, im->outliers, im->n_timed, im->max_gap_ns / 1e9,
			    im->outlier_first, im->outlier_last, im->t_first, im->t_last);
out:
	u64map_free(index);
	return r;
}

int import_place(struct import *im)
{
	const struct perf_data_info *in = perf_data_info(im->pd);
	uint64_t span, n;
	int64_t first, last;

	if (!im->have_time) {
		im->t_first = im->t_last = 0;
		im->wall_offset = im->mtime_ns;
		im->time_source = "the file's mtime (its samples carry no time)";
	} else if (in->has_clock_data) {
		im->wall_offset = (int64_t)(in->clock_tod_ns - in->clock_clockid_ns);
		im->time_source = "the file's CLOCK_DATA (exact)";
	} else {
		im->wall_offset = (int64_t)((uint64_t)im->mtime_ns - im->t_last);
		im->time_source = "the file's mtime as the last sample's time (no CLOCK_DATA: "
				  "record with perf record -k CLOCK_MONOTONIC for exact times)";
	}
	/* The file's numbers are not trusted: wall times past 2262 are corrupt. */
	if (im->t_first > INT64_MAX || im->t_last > INT64_MAX ||
	    __builtin_add_overflow((int64_t)im->t_first, im->wall_offset, &first) ||
	    __builtin_add_overflow((int64_t)im->t_last, im->wall_offset, &last) || first < 0 ||
	    last > INT64_MAX - im->interval_ns)
		return log_error_errno(ERANGE, "%s: sample times %" PRIu64 "..%" PRIu64 " ns with "
				       "clock offset %" PRId64 " ns are not a wall time", im->path,
				       im->t_first, im->t_last, im->wall_offset);

	/* unsigned: t_last >= t_first, and the span of a corrupt file may
	 * not fit int64 */
	span = im->t_last - im->t_first;
	n = span / (uint64_t)im->interval_ns + 1;
	if (n > IMPORT_MAX_INTERVALS)
		return log_error_errno(E2BIG, "%s spans %.0f s: more than %d intervals of %.0f s, "
				       "pass a longer --interval", im->path, (double)span / 1e9,
				       IMPORT_MAX_INTERVALS, im->interval_ns / 1e9);
	im->iv = calloc(n, sizeof(*im->iv));
	if (!im->iv)
		return log_oom();
	/* only now: import_done() walks n_iv entries of iv */
	im->n_iv = n;
	for (size_t i = 0; i < im->n_iv; i++) {
		struct import_interval *a = &im->iv[i];

		a->start_ns = first + (int64_t)i * im->interval_ns;
		a->end_ns = a->start_ns + im->interval_ns;
		if (i == im->n_iv - 1)
			a->end_ns = last + 1;
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
int import_aggregate(struct import *im)
{
	struct perf_data_record rec;
	size_t cur = 0;
	int r;

	perf_data_rewind(im->pd);
	while ((r = perf_data_next(im->pd, &rec)) > 0) {
		const struct perf_data_sample *s = &rec.sample;
		struct import_interval *a;

		switch (rec.type) {
		case PERF_RECORD_SAMPLE: {
			struct mem_agg_sample ms;

			if (!rec.event || !import_is_memory_event(rec.event))
				break;
			if (s->sample_type & PERF_SAMPLE_TIME) {
				/* an outlier of import_scan(): counted there */
				if (s->time < im->t_first || s->time > im->t_last)
					break;
				cur = interval_of(im, s->time);
			}
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

char *import_memory_event_names(const struct import *im)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	bool first = true;

	if (!f)
		return NULL;
	for (size_t i = 0; i < perf_data_n_events(im->pd); i++) {
		const struct perf_data_event *e = perf_data_event(im->pd, i);

		if (!import_is_memory_event(e) || !im->ev[i].samples)
			continue;
		fprintf(f, "%s%s", first ? "" : ",", e->name);
		first = false;
	}
	fclose(f);
	return s;
}

/* The host: the one of that hostname if there is exactly one, else its own row. */
int import_machine_id(sqlite3 *db, const char *hostname, char *machine_id, size_t size)
{
	_cleanup_finalize_ sqlite3_stmt *sel = NULL;
	int r, rc;

	r = db_prepare(db, &sel, "SELECT machine_id, (SELECT count(*) FROM hosts WHERE hostname = ?1)"
			     " FROM hosts WHERE hostname = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_text(sel, 1, hostname, -1, SQLITE_STATIC);
	rc = sqlite3_step(sel);
	if (rc == SQLITE_ROW && sqlite3_column_int64(sel, 1) == 1)
		snprintf(machine_id, size, "%s", (const char *)sqlite3_column_text(sel, 0));
	else
		snprintf(machine_id, size, "import:%s", hostname);
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

static int store_boot(struct import *im, sqlite3 *db, const char *btf_path,
		      const char *hostname, const char *release, const char *pmu_events,
		      int64_t *ret)
{
	const struct perf_data_info *in = perf_data_info(im->pd);
	char uuid[64], detail[1024], machine_id[300];
	const char *arch = in->arch ?: "unknown";
	int r;

	r = import_machine_id(db, hostname, machine_id, sizeof(machine_id));
	if (r < 0)
		return r;
	/* named after the content: the same file twice is the same boot */
	snprintf(uuid, sizeof(uuid), "import:%016" PRIx64, im->hash);
	snprintf(detail, sizeof(detail), "perf.data events: %s (perf %s)",
		 pmu_events && *pmu_events ? pmu_events : "none with addresses",
		 in->perf_version ?: "version unknown");

	r = boot_row_store(db, &(struct boot_row){
		.machine_id = machine_id,
		.hostname = hostname,
		.boot_uuid = uuid,
		.source = "import",
		.first_seen_ns = im->iv[0].start_ns,
		.last_seen_ns = im->iv[im->n_iv - 1].end_ns,
		.kernel_release = release,
		/* perf.data has uname -r but not uname -v */
		.kernel_version = "(not in perf.data)",
		.kernel_build_id = perf_data_kernel_build_id(im->pd),
		.arch = arch,
		.nr_cpus_online = (int)in->nr_cpus_online,
		.nr_cpus_possible = (int)in->nr_cpus_avail,
		.cache_line_size = (int)im->agg_cfg.line_size,
		.page_size = page_size_of(arch),
		.pmu_kind = pmu_kind_of(im),
		.pmu_detail = detail,
		.btf = btf_path,
	}, ret);
	if (r == -EEXIST)
		return log_error_errno(EEXIST, "%s was already imported (boot %" PRId64 ", %s)",
				       im->path, *ret, uuid);
	return r;
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
		struct import_interval *a = &im->iv[i];
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


int import_store(struct import *im, sqlite3 *db, const char *hostname, const char *release,
		 const char *btf_path, int64_t *ret_boot_id)
{
	_cleanup_free_ char *pmu_events = import_memory_event_names(im);
	int r;

	r = store_boot(im, db, btf_path, hostname, release, pmu_events, ret_boot_id);
	if (r < 0)
		return r;
	return store_intervals(im, db, *ret_boot_id, pmu_events);
}

void import_done(struct import *im)
{
	for (size_t i = 0; i < im->n_iv; i++)
		mem_agg_free(im->iv[i].agg);
	free(im->iv);
	free(im->ev);
	free(im->buckets);
	perf_data_free(im->pd);
	im->iv = NULL;
	im->n_iv = 0;
	im->ev = NULL;
	im->buckets = NULL;
	im->pd = NULL;
}
