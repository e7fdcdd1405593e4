// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm import: a perf.data file (perf c2c record, perf mem record,
 * perf record -d) into the database as a pseudo-boot of the host and
 * kernel it was recorded on, with intervals over its time range and its
 * memory samples aggregated into mem_lines, exactly as mmhitmd stores its
 * own. Everything goes in one transaction: a file that turns out
 * malformed halfway leaves the database as it was. The import itself is
 * import.c; this is its command line, symbols, layouts and summary.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "btf.h"
#include "bundle.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "import.h"
#include "import-tracedat.h"
#include "kallsyms.h"
#include "log.h"
#include "opts.h"
#include "mem-agg.h"
#include "patchmap.h"
#include "perf-data.h"
#include "util.h"

/* Longest kernel callchain kept per sample (the sampler's default too). */
#define IMPORT_MAX_STACK	16
/* The lowest kernel address of 5-level paging: below it, no base. */

void cmd_import_help(void)
{
	printf("Usage: mmhitm import FILE [OPTIONS]\n\n"
	       "Imports a perf.data file written by perf c2c record, perf mem record or\n"
	       "perf record -d (perf 4.x to 6.x, file mode, uncompressed) as a boot of the\n"
	       "host and kernel it was recorded on (source 'import'), with intervals over\n"
	       "its time range and its memory samples aggregated per cache line as\n"
	       "mmhitmd stores its own. One transaction: a malformed file changes nothing.\n"
	       "A trace-cmd trace.dat is imported too: its counted events per interval and\n"
	       "the objects learned from it (--db, --hostname, --kernel-release and\n"
	       "--interval apply; see mmhitm(1)). So is a bundle of mmhitm record, checked\n"
	       "whole, with the kallsyms, BTF and bases it carries: no option needed.\n\n"
	       "  --db PATH              database (default $MMHITM_DB or %s)\n"
	       "  --hostname H           host to file it under (default: the file's)\n"
	       "  --kernel-release R     kernel release (default: the file's uname -r)\n"
	       "  --kallsyms FILE        store the kernel symbols the samples' IPs and\n"
	       "                         callchains hit (FILE: /proc/kallsyms of the\n"
	       "                         recorded boot)\n"
	       "  --btf FILE             store the recorded kernel's struct layouts from its\n"
	       "                         BTF (/sys/kernel/btf/vmlinux of that kernel)\n"
	       "  --vmemmap-base ADDR    the recorded boot's vmemmap base (the value of its\n"
	       "                         vmemmap_base): struct page lines without pairs\n"
	       "  --page-offset ADDR     the recorded boot's direct-map base (page_offset_base)\n"
	       "  --boot-id UUID         the kernel boot it was recorded in (that boot's\n"
	       "                         /proc/sys/kernel/random/boot_id; none: unknown): if\n"
	       "                         mmhitmd recorded that boot into the database, its\n"
	       "                         learned objects type this recording's lines\n"
	       "                         On the recording host and boot (same kernel build id)\n"
	       "                         /proc/kallsyms, /sys/kernel/btf/vmlinux, both bases and\n"
	       "                         the running boot's id are the defaults.\n"
	       "  --interval DURATION    interval length (default 60s)\n"
	       "  --cache-line-size N    line size of the recorded host (default: the file's\n"
	       "                         CACHE feature, else this host's)\n"
	       "  --user                 store user-space samples per line too\n"
	       "  --max-stack N          kernel callchain frames kept (default %d)\n"
	       "  --max-gap DURATION     memory samples further than this from all the\n"
	       "                         others have corrupt times and are dropped\n"
	       "                         (default 1h; 0 keeps every one)\n",
	       default_db_path(), IMPORT_MAX_STACK);
}

struct import_opts {
	const char *db, *hostname, *release, *kallsyms, *btf;
	struct bundle_manifest bundle;	/* an mmhitm record bundle's manifest */
	char bundle_dir[4096];		/* where it was extracted; "": no bundle */
	char bundle_files[2][4200];	/* its kallsyms and btf there */
	char bundle_names[2][4200];	/* and as shown and stored: "BUNDLE:kallsyms" */
	const char *kallsyms_name, *btf_name;	/* NULL: as the paths */
	const char *boot_id;		/* the kernel boot recorded in; "none": unknown */
	char running_boot_id[64];
	uint64_t vmemmap_base, page_offset;
	const char *layout_source;	/* of the bases: "given", "running kernel" */
};

/*
 * Whether the file was recorded by the kernel running now: its build id is
 * ours, or without one, the same host and release since this boot.
 */
static bool recorded_here(const struct import *im, const char *hostname, const char *release)
{
	const char *bid = perf_data_kernel_build_id(im->pd);
	char host[256], rel[256] = "", btime[64];
	FILE *f;
	int64_t boot_s = 0;

	if (bid && *bid)
		return kallsyms_running_build_id_is(bid);
	if (gethostname(host, sizeof(host)) < 0 || strcmp(host, hostname) != 0 ||
	    read_line("/proc/sys/kernel/osrelease", rel, sizeof(rel)) < 0 || strcmp(rel, release) != 0)
		return false;
	f = fopen("/proc/stat", "re");
	while (f && fgets(btime, sizeof(btime), f))
		if (sscanf(btime, "btime %" SCNd64, &boot_s) == 1)
			break;
	if (f)
		fclose(f);
	return boot_s > 0 && im->n_iv && im->iv[0].start_ns >= boot_s * NSEC_PER_SEC;
}

/*
 * On the recording host and boot, the inputs a foreign import must be
 * given are here: this kernel's symbols, BTF and memory-map bases. Each
 * one that is still missing is named once, with the option that supplies it.
 */
static void same_host_defaults(const struct import *im, struct import_opts *o, bool here)
{
	struct kallsyms *ks = NULL;

	/* recorded in the running boot: join it (--boot-id none: don't) */
	if (here && !o->boot_id &&
	    read_line("/proc/sys/kernel/random/boot_id", o->running_boot_id,
		      sizeof(o->running_boot_id)) >= 0)
		o->boot_id = o->running_boot_id;
	/* this kernel's symbols: the default, and where its bases are */
	if (here && access("/proc/kallsyms", R_OK) == 0) {
		ks = kallsyms_load(NULL);
		if (ks && !o->kallsyms)
			o->kallsyms = "/proc/kallsyms";
	}
	if (here && !o->btf && access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		o->btf = "/sys/kernel/btf/vmlinux";
	if (here && ks && !o->vmemmap_base && !o->page_offset)
		host_memory_bases(ks, &o->vmemmap_base, &o->page_offset, &o->layout_source);
	kallsyms_free(ks);
	if (here)
		log_info("%s was recorded by the running kernel: using %s%s%s", im->path,
			 o->kallsyms ? o->kallsyms : "no kallsyms", o->btf ? ", " : "", o->btf ? o->btf : "");
	if (!o->kallsyms)
		log_warning("No kernel symbols for %s: IPs and callchains stay addresses and no "
			    "path can be told; pass --kallsyms FILE (the recorded boot's "
			    "/proc/kallsyms, copied as root)", im->path);
	if (!o->btf)
		log_warning("No BTF for %s: fields and offsets are unknown; pass --btf FILE (the "
			    "recorded kernel's /sys/kernel/btf/vmlinux)", im->path);
	if (!o->vmemmap_base)
		log_notice("No vmemmap base for %s: struct page lines are typed only where their "
			   "code path shows it; pass --vmemmap-base ADDR (the recorded boot's "
			   "vmemmap_base) or import on the recording host", im->path);
}

/* The bases of the recorded boot's memory map, on its boots row. */
static int store_bases(sqlite3 *db, int64_t boot_id, const struct import_opts *o)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	if (!o->vmemmap_base && !o->page_offset)
		return 0;
	r = db_prepare(db, &st, "UPDATE boots SET vmemmap_base = nullif(?2, 0), page_offset ="
				" nullif(?3, 0), layout_source = ?4 WHERE boot_id = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, (int64_t)o->vmemmap_base);
	sqlite3_bind_int64(st, 3, (int64_t)o->page_offset);
	sqlite3_bind_text(st, 4, o->layout_source ? o->layout_source : "given", -1, SQLITE_STATIC);
	return db_step_done(db, st);
}

static int store_recorded_boot(sqlite3 *db, int64_t boot_id, const struct import_opts *o)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	if (!o->boot_id || strcmp(o->boot_id, "none") == 0)
		return 0;
	r = db_prepare(db, &st, "UPDATE boots SET recorded_boot_uuid = lower(?2) WHERE boot_id = ?1");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_text(st, 2, o->boot_id, -1, SQLITE_STATIC);
	return db_step_done(db, st);
}

/*
 * Says which boot mmhitmd recorded live that this import joins, by the
 * analyzer's rule (objects.c): its learned objects will type the lines.
 */
static void print_joined(sqlite3 *db, int64_t boot_id, const struct import_opts *o)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	bool any = false;

	if (db_prepare(db, &st,
		"SELECT l.boot_id, h.hostname, l.kernel_release,"
		" (SELECT count(*) FROM mm_objects m WHERE m.boot_id = l.boot_id),"
		" (SELECT count(*) FROM page_pairs p WHERE p.boot_id = l.boot_id)"
		" FROM boots b JOIN hosts hb ON hb.host_id = b.host_id"
		" JOIN boots l ON l.boot_id != b.boot_id AND l.source = 'live'"
		" JOIN hosts h ON h.host_id = l.host_id"
		" WHERE b.boot_id = ?1 AND (l.boot_uuid = b.recorded_boot_uuid OR"
		"  (h.hostname = hb.hostname AND l.kernel_release = b.kernel_release"
		"   AND l.first_seen_ns <= b.last_seen_ns AND l.last_seen_ns >= b.first_seen_ns))") < 0)
		return;
	sqlite3_bind_int64(st, 1, boot_id);
	while (sqlite3_step(st) == SQLITE_ROW) {
		any = true;
		printf("  joins boot %" PRId64 ", recorded live by mmhitmd on %s (%s): its %d learned "
		       "mm_structs and %d page pairs type this recording's lines\n",
		       (int64_t)sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
		       (const char *)sqlite3_column_text(st, 2), sqlite3_column_int(st, 3),
		       sqlite3_column_int(st, 4));
	}
	if (!any && o->boot_id && strcmp(o->boot_id, "none") != 0)
		printf("  recorded in boot %s, which mmhitmd did not record into this database: "
		       "typed without live objects\n", o->boot_id);
}

/*
 * The patch map's marker symbols the recorded kallsyms holds (the
 * built-in map's, as mmhitmd stores at boot, and those a bundle names):
 * the report tells the boot's patches from them.
 */
static int store_markers(sqlite3 *db, int64_t boot_id, const struct kallsyms *ks,
			 const struct import_opts *o)
{
	struct patch_map *map = patch_map_new();
	int r = map ? patch_map_load_default(map) : -ENOMEM;
	size_t n = r >= 0 ? patch_map_nr_ksyms(map) : 0;

	for (size_t i = 0; r >= 0 && i < n + o->bundle.nr_markers; i++) {
		const char *name = i < n ? patch_map_ksym(map, i) : o->bundle.markers[i - n];
		const struct ksym *sym = kallsyms_find(ks, name);

		if (sym)
			r = kallsyms_store(db, boot_id, sym);
	}
	patch_map_free(map);
	return r;
}

/* The kernel symbols the stored IPs and callchain frames fall in, and the markers. */
static int store_ksyms(sqlite3 *db, int64_t boot_id, const struct import_opts *o, size_t *ret_n,
		       size_t *ret_unresolved)
{
	const char *path = o->kallsyms;
	_cleanup_finalize_ sqlite3_stmt *ips = NULL;
	struct kallsyms *ks;
	size_t n = 0, miss = 0;
	struct stat st;
	int r = 0, rc;

	/* A bundle's kallsyms holds the lines its samples need: none, when no
	 * sample names a kernel address. */
	if (o->bundle_dir[0] && path == o->bundle_files[0] && stat(path, &st) == 0 && st.st_size == 0)
		return 0;
	ks = kallsyms_load(path);
	if (!ks) {
		if (errno == EPERM)
			return log_error_errno(EPERM, "%s shows every address as zero (kptr_restrict): "
					       "copy it as root", path);
		return log_error_errno(errno, "Failed to read %s: %m", path);
	}
	/* every kernel address we stored: mem_lines IPs, callchain frames, and
	 * the data addresses in the kernel image and modules (static data,
	 * from 0xffffffff80000000: negative as int64) */
	r = db_prepare(db, &ips,
		"WITH RECURSIVE frames(rest, ip) AS ("
		"  SELECT ips || ' ', NULL FROM callchains WHERE boot_id = ?1"
		"  UNION ALL SELECT substr(rest, instr(rest, ' ') + 1),"
		"   substr(rest, 1, instr(rest, ' ') - 1) FROM frames WHERE rest <> '')"
		" SELECT DISTINCT l.ip FROM mem_lines l JOIN intervals i USING (interval_id)"
		"  WHERE i.boot_id = ?1 AND l.kernel = 1"
		" UNION SELECT ip FROM frames WHERE ip IS NOT NULL"
		" UNION SELECT DISTINCT l.line_addr + l.offset FROM mem_lines l JOIN intervals i"
		"  USING (interval_id) WHERE i.boot_id = ?1"
		"  AND l.line_addr + l.offset BETWEEN -2147483648 AND -1");
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
		r = db_step_failed(ips, rc);
		goto out;
	}
	*ret_n = n;
	*ret_unresolved = miss;
	r = store_markers(db, boot_id, ks, o);
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
		const struct import_event_count *c = &im->ev[i];

		printf("  event '%s': %" PRIu64 " samples (%" PRIu64 " kernel, %" PRIu64 " user)%s\n",
		       e->name, c->samples, c->kernel, c->user,
		       import_is_memory_event(e) ? "" : ", no addresses: not aggregated");
	}
	if (im->unknown)
		printf("  %" PRIu64 " samples of unknown sample id skipped (as perf does)\n", im->unknown);
	printf("  lost %" PRIu64 ", throttled %" PRIu64 "\n", im->lost, im->throttled);
	if (im->outliers)
		printf("  %" PRIu64 " memory samples dropped: their times lie more than %.0f s from "
		       "the rest (corrupt timestamps)\n", im->outliers, im->max_gap_ns / 1e9);
	printf("boot %" PRId64 ": %zu intervals from %s to %s (time from %s), %" PRId64
	       " cache-line rows of %u bytes\n", boot_id, im->n_iv, t0, t1, im->time_source, lines,
	       im->agg_cfg.line_size);
}

/* What was imported, for the user. */
static void print_import(struct import *im, const struct import_opts *o, sqlite3 *db,
			 int64_t boot_id, const char *hostname, const char *release,
			 const struct btf_layout *layout, size_t nsyms, size_t unresolved)
{
	print_summary(im, boot_id, hostname, release, db);
	if (o->kallsyms) {
		printf("  %zu kernel symbols stored from %s", nsyms, o->kallsyms_name ?: o->kallsyms);
		if (unresolved)
			printf(", %zu addresses outside every symbol (is it the recorded boot's?)",
			       unresolved);
		printf("\n");
	}
	if (layout)
		printf("  %zu struct fields stored from %s\n", layout->n, o->btf_name ?: o->btf);
	if (o->vmemmap_base)
		printf("  vmemmap base 0x%016" PRIx64 " (%s)\n", o->vmemmap_base, o->layout_source);
	print_joined(db, boot_id, o);
}

enum { OPT_HOSTNAME = 0x100, OPT_RELEASE, OPT_KALLSYMS, OPT_BTF, OPT_INTERVAL, OPT_LINE,
       OPT_USER, OPT_STACK, OPT_GAP, OPT_VMEMMAP, OPT_PAGE_OFFSET, OPT_BOOT_ID };

/* One option into o and im; 0, or EXIT_USAGE after saying why. */
static int import_option(int c, const char *arg, struct import_opts *o, struct import *im)
{
	uint64_t v;

	switch (c) {
	case OPT_HOSTNAME: o->hostname = arg; break;
	case OPT_RELEASE: o->release = arg; break;
	case OPT_KALLSYMS: o->kallsyms = arg; break;
	case OPT_BTF: o->btf = arg; break;
	case OPT_BOOT_ID:
		/* /proc/sys/kernel/random/boot_id: a UUID, or "none" */
		if (strcmp(arg, "none") != 0 && !boot_id_valid(arg)) {
			log_error("Invalid --boot-id '%s': the recorded boot's "
				  "/proc/sys/kernel/random/boot_id, or none", arg);
			return EXIT_USAGE;
		}
		o->boot_id = arg;
		break;
	case OPT_INTERVAL:
		if (parse_duration_ns(arg, &im->interval_ns) < 0 || im->interval_ns < NSEC_PER_MSEC) {
			log_error("Invalid --interval '%s': a duration of 1ms or more", arg);
			return EXIT_USAGE;
		}
		break;
	case OPT_LINE:
		if (parse_u64(arg, &v) < 0 || v < 8 || v > 4096 || (v & (v - 1))) {
			log_error("Invalid --cache-line-size '%s': a power of two in [8, 4096]", arg);
			return EXIT_USAGE;
		}
		im->agg_cfg.line_size = v;
		break;
	case OPT_USER: im->agg_cfg.keep_user = true; break;
	case OPT_STACK:
		if (parse_u64(arg, &v) < 0 || v > 64) {
			log_error("Invalid --max-stack '%s': 0 to 64", arg);
			return EXIT_USAGE;
		}
		im->agg_cfg.max_stack = v;
		break;
	case OPT_GAP:
		if (parse_duration_ns(arg, &im->max_gap_ns) < 0 || im->max_gap_ns < 0) {
			log_error("Invalid --max-gap '%s': a duration", arg);
			return EXIT_USAGE;
		}
		break;
	case OPT_VMEMMAP:
	case OPT_PAGE_OFFSET:
		if (parse_u64(arg, &v) < 0 || !kernel_base_valid(v)) {
			log_error("Invalid --%s '%s': a 1 GiB-aligned kernel address such as "
				  "0xffffea0000000000", c == OPT_VMEMMAP ? "vmemmap-base" : "page-offset",
				  arg);
			return EXIT_USAGE;
		}
		*(c == OPT_VMEMMAP ? &o->vmemmap_base : &o->page_offset) = v;
		o->layout_source = "given";
		break;
	default:
		return EXIT_USAGE;
	}
	return 0;
}

/* The recorded host, kernel and cache line: the file's, or the options'. */
static int import_identity(struct import *im, const struct import_opts *o, const char **hostname,
			   const char **release)
{
	int r;

	*hostname = o->hostname ?: perf_data_info(im->pd)->hostname;
	*release = o->release ?: perf_data_info(im->pd)->osrelease;
	if (!*hostname || !**hostname || !*release || !**release)
		return log_error_errno(EINVAL, "%s does not say its %s: pass --%s", im->path,
				       !*hostname || !**hostname ? "hostname" : "kernel release",
				       !*hostname || !**hostname ? "hostname" : "kernel-release");
	if (!im->agg_cfg.line_size)
		im->agg_cfg.line_size = perf_data_info(im->pd)->l1d_line_size;
	if (im->agg_cfg.line_size)
		return 0;
	r = mem_host_line_size(NULL, &im->agg_cfg.line_size);
	if (r < 0)
		return log_error_errno(r, "%s does not say its cache line size and this host's is "
				       "unknown: pass --cache-line-size", im->path);
	log_notice("%s does not say its cache line size (no CACHE feature); using this host's, %u "
		   "bytes (--cache-line-size to change)", im->path, im->agg_cfg.line_size);
	return 0;
}

/* Reads the perf.data file into im: scan, place in time, aggregate. */
static int import_read(struct import *im, struct perf_data *pd)
{
	struct stat st;
	int r;

	r = import_init(im, pd);
	if (r < 0)
		return r;
	if (stat(im->path, &st) < 0)
		return log_error_errno(errno, "Failed to stat %s: %m", im->path);
	im->mtime_ns = (int64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + st.st_mtim.tv_nsec;
	r = import_scan(im);
	if (r < 0)
		return r;
	if (im->auxtrace && !im->have_time)
		log_warning("%s holds %" PRIu64 " AUX trace records (Arm SPE, Intel PT) that mmhitm does "
			    "not decode; synthesize memory samples first, e.g. perf inject -i FILE "
			    "--itrace=M -o OUT (see perf-arm-spe(1))", im->path, im->auxtrace);
	return 0;
}

/* The boot, its symbols, layout and bases, in one transaction. */
static int import_write(struct import *im, const struct import_opts *o, sqlite3 *db,
			const char *hostname, const char *release, const struct btf_layout *layout,
			int64_t *boot_id, size_t *nsyms, size_t *unresolved)
{
	int r;

	r = db_begin(db);
	if (r < 0)
		return r;
	r = import_store(im, db, hostname, release, o->btf_name ?: o->btf, boot_id);
	if (r >= 0 && o->kallsyms)
		r = store_ksyms(db, *boot_id, o, nsyms, unresolved);
	if (r >= 0 && layout)
		r = btf_layout_store(db, *boot_id, layout);
	if (r >= 0)
		r = store_bases(db, *boot_id, o);
	if (r >= 0)
		r = store_recorded_boot(db, *boot_id, o);
	return db_end(db, r);
}

/*
 * An mmhitm record bundle: extracted into a directory of its own and
 * checked whole, then imported as the recording host would import its
 * perf.data: its kallsyms, BTF, bases and boot id, unless options say
 * otherwise. Nothing is imported from a bundle that is not whole.
 */
static int import_bundle(struct import_opts *o, struct import *im, char *data, size_t len)
{
	struct bundle_manifest *m = &o->bundle;
	char err[256];
	int r;

	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	if (snprintf(o->bundle_dir, sizeof(o->bundle_dir), "%s/mmhitm-import-XXXXXX", tmp) >=
	    (int)sizeof(o->bundle_dir) || !mkdtemp(o->bundle_dir)) {
		o->bundle_dir[0] = '\0';
		return log_error_errno(errno ?: ENAMETOOLONG, "Failed to create a directory in %s: %m",
				       tmp);
	}
	r = bundle_extract(im->path, o->bundle_dir, m, err, sizeof(err));
	if (r < 0)
		return log_error_errno(r, "%s: not a whole mmhitm bundle: %s; nothing imported",
				       im->path, err);
	log_info("%s: an mmhitm record bundle of %s, kernel %s (%s, %s)", im->path,
		 m->hostname[0] ? m->hostname : "the host its perf.data names",
		 m->release[0] ? m->release : "as its perf.data says", m->sampler, m->created);
	if (m->patches[0])
		log_info("%s: its recording host's patch map said %s", im->path, m->patches);
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "btf" : "kallsyms";

		snprintf(o->bundle_files[k], sizeof(o->bundle_files[k]), "%s/%s", o->bundle_dir, name);
		snprintf(o->bundle_names[k], sizeof(o->bundle_names[k]), "%s:%s", im->path, name);
	}
	if (!o->kallsyms && access(o->bundle_files[0], R_OK) == 0) {
		o->kallsyms = o->bundle_files[0];
		o->kallsyms_name = o->bundle_names[0];
	}
	if (!o->btf && access(o->bundle_files[1], R_OK) == 0) {
		o->btf = o->bundle_files[1];
		o->btf_name = o->bundle_names[1];
	}
	if (!o->vmemmap_base && !o->page_offset && (m->vmemmap_base || m->page_offset)) {
		o->vmemmap_base = m->vmemmap_base;
		o->page_offset = m->page_offset;
		o->layout_source = m->layout_source[0] ? m->layout_source : "given";
	}
	if (!o->boot_id)
		o->boot_id = m->boot_id[0] ? m->boot_id : "none";
	if (!o->hostname && m->hostname[0])
		o->hostname = m->hostname;
	if (!o->release && m->release[0])
		o->release = m->release;
	snprintf(data, len, "%s/perf.data", o->bundle_dir);
	im->path = data;
	return 0;
}

struct import_args {
	struct import_opts *o;
	struct import *im;
};

static int import_parse_one(int opt, const char *arg, void *userdata)
{
	struct import_args *a = userdata;

	return import_option(opt, arg, a->o, a->im) != 0 ? -EINVAL : 0;
}

/* The options into o and im, and the file's path: 0, 1 after --help, EXIT_USAGE (said). */
static int import_parse(int argc, char **argv, struct import_opts *o, struct import *im)
{
	static const struct option opts[] = {
		{ "hostname",		required_argument, NULL, OPT_HOSTNAME },
		{ "kernel-release",	required_argument, NULL, OPT_RELEASE },
		{ "kallsyms",		required_argument, NULL, OPT_KALLSYMS },
		{ "btf",		required_argument, NULL, OPT_BTF },
		{ "interval",		required_argument, NULL, OPT_INTERVAL },
		{ "cache-line-size",	required_argument, NULL, OPT_LINE },
		{ "user",		no_argument,       NULL, OPT_USER },
		{ "max-stack",		required_argument, NULL, OPT_STACK },
		{ "max-gap",		required_argument, NULL, OPT_GAP },
		{ "vmemmap-base",	required_argument, NULL, OPT_VMEMMAP },
		{ "page-offset",	required_argument, NULL, OPT_PAGE_OFFSET },
		{ "boot-id",		required_argument, NULL, OPT_BOOT_ID },
		{}
	};
	struct cli_opts co;
	int r;

	r = cli_opts_parse(argc, argv, &(const struct cmd_options){
		.prog = "mmhitm import", .sets = OPTS_DB, .opts = opts, .parse = import_parse_one,
		.userdata = &(struct import_args){ .o = o, .im = im }, .help = cmd_import_help }, &co);
	if (r != 0)
		return r;
	o->db = co.db;
	if (optind != argc - 1) {
		log_error("Usage: mmhitm import FILE [--db PATH] ... ('mmhitm import --help')");
		return EXIT_USAGE;
	}
	im->path = argv[optind];
	return 0;
}

int cmd_import(int argc, char **argv)
{
	struct import_opts o = { .db = default_db_path() };
	char bundle_data[4200];
	struct import im = { .interval_ns = 60 * NSEC_PER_SEC, .max_gap_ns = IMPORT_MAX_GAP_NS,
			     .agg_cfg = { .max_stack = IMPORT_MAX_STACK } };
	struct perf_data *pd = NULL;
	struct btf_layout layout = { 0 };
	_cleanup_free_ char *err = NULL;
	const char *hostname, *release;
	bool db_existed, have_btf = false;
	size_t nsyms = 0, unresolved = 0;
	sqlite3 *db = NULL;
	int64_t boot_id = 0;
	int r;

	r = import_parse(argc, argv, &o, &im);
	if (r != 0)
		return r == 1 ? 0 : r;

	/* An mmhitm record bundle: its perf.data, with what types it. */
	if (bundle_sniff(im.path) > 0) {
		r = import_bundle(&o, &im, bundle_data, sizeof(bundle_data));
		if (r < 0)
			goto out;
	}
	/* A trace-cmd trace.dat has its own import (import-tracedat.c). */
	if (!o.bundle_dir[0] && tracedat_sniff(im.path) > 0)
		return tracedat_import(im.path, &(struct tracedat_opts){
			.db = o.db, .hostname = o.hostname, .release = o.release,
			.interval_ns = im.interval_ns });

	r = perf_data_open(im.path, &pd, &err);
	if (r < 0) {
		r = log_error_errno(r, "Failed to read %s: %s", im.path, err ?: "");
		goto out;
	}
	r = import_read(&im, pd);
	if (r >= 0)
		r = import_identity(&im, &o, &hostname, &release);
	if (r >= 0)
		r = import_place(&im);
	if (r >= 0)
		r = import_aggregate(&im);
	if (r < 0)
		goto out;
	same_host_defaults(&im, &o, !o.bundle_dir[0] && recorded_here(&im, hostname, release));
	if (o.btf) {
		r = btf_layout_collect(o.btf, &layout);
		if (r < 0)
			goto out;
		have_btf = true;
	}
	db_existed = access(o.db, F_OK) == 0;
	r = cli_db_open(o.db, 0, &db);
	if (r < 0)
		goto out;
	r = import_write(&im, &o, db, hostname, release, have_btf ? &layout : NULL, &boot_id, &nsyms,
			 &unresolved);
	if (r >= 0)
		print_import(&im, &o, db, boot_id, hostname, release, have_btf ? &layout : NULL, nsyms,
			     unresolved);
	db_close(db);
	/* a database this import created and could not fill is not left behind */
	if (r < 0 && !db_existed)
		db_remove(o.db);
out:
	btf_layout_done(&layout);
	import_done(&im);
	if (o.bundle_dir[0])
		bundle_remove_dir(o.bundle_dir);
	return r;
}
