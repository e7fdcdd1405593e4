// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm record: on a host without mmhitmd, one command that makes a
 * bundle (bundle.h) which `mmhitm import` types anywhere as it would on
 * this host: the memory samples (perf c2c record -- -g -a, every CPU; where no PMU samples
 * memory, --event records a software event with data addresses, which
 * tests the plumbing but holds no contention), the lines of this boot's
 * /proc/kallsyms they need, the kernel's BTF, the memory map's bases read as import
 * reads them on the recording host, the boot id, release and build id.
 * --perf-data packs a recording already made; --kallsyms, --btf and the
 * others pack another host's inputs (a lab, the tests).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "commands.h"
#include "kallsyms.h"
#include "log.h"
#include "opts.h"
#include "patchmap.h"
#include "paths.h"
#include "perf-data.h"
#include "util.h"

#define KERNEL_HALF	0xffff800000000000ULL	/* x86_64's kernel addresses start above */
#define CONTEXT_MARKS	((uint64_t)-4095)	/* PERF_CONTEXT_MAX: callchain markers from here */

enum {
	OPT_OUTPUT = 0x200, OPT_DURATION, OPT_EVENT, OPT_PERF_DATA, OPT_KALLSYMS, OPT_BTF,
	OPT_VMEMMAP, OPT_PAGE_OFFSET, OPT_HOSTNAME, OPT_RELEASE, OPT_BOOT_ID, OPT_PATCHES,
};

struct record_opts {
	const char *output, *event, *perf_data, *kallsyms, *btf, *patches;
	int64_t duration_ns;
	struct bundle_manifest m;
	bool given_bases;
};

void cmd_record_help(void)
{
	printf("Usage: mmhitm record [--output FILE] [--duration TIME] [--event EVENT]\n"
	       "                     [--perf-data FILE] [--patches FILE]\n\n"
	       "On a host without mmhitmd, records memory samples with perf c2c record -- -g -a\n"
	       "and packs them with what typing them needs (this boot's kallsyms, the\n"
	       "kernel's BTF, the memory map's bases, boot id, release, build id) into one\n"
	       "bundle; `mmhitm import BUNDLE` on any machine types its lines as an import\n"
	       "here would. Root (kallsyms addresses, /proc/kcore for the bases).\n\n"
	       "  --output FILE          the bundle (default mmhitm-HOST-TIME.bundle)\n"
	       "  --duration TIME        how long to sample (default 10s)\n"
	       "  --event EVENT          perf record -d -e EVENT instead of perf c2c: a\n"
	       "                         software event with data addresses (page-faults)\n"
	       "                         where no PMU samples memory; no contention in it\n"
	       "  --perf-data FILE       pack this recording (made in this boot) instead\n"
	       "  --patches FILE         a patch map (mmhitm report's format): the bundle\n"
	       "                         says which paths' patches this kernel carries\n"
	       "Another host's inputs, packed as given (a lab; the tests):\n"
	       "  --kallsyms FILE --btf FILE --vmemmap-base ADDR --page-offset ADDR\n"
	       "  --hostname NAME --kernel-release REL --boot-id UUID\n");
}

static int record_option(int c, const char *arg, void *userdata)
{
	struct record_opts *o = userdata;
	struct bundle_manifest *m = &o->m;
	uint64_t v;

	switch (c) {
	case OPT_OUTPUT: o->output = arg; break;
	case OPT_EVENT: o->event = arg; break;
	case OPT_PERF_DATA: o->perf_data = arg; break;
	case OPT_PATCHES: o->patches = arg; break;
	case OPT_KALLSYMS: o->kallsyms = arg; break;
	case OPT_BTF: o->btf = arg; break;
	case OPT_HOSTNAME: snprintf(m->hostname, sizeof(m->hostname), "%s", arg); break;
	case OPT_RELEASE: snprintf(m->release, sizeof(m->release), "%s", arg); break;
	case OPT_BOOT_ID:
		if (!boot_id_valid(arg))
			return log_error_errno(EINVAL, "Invalid --boot-id '%s': the recorded boot's "
					       "/proc/sys/kernel/random/boot_id", arg);
		snprintf(m->boot_id, sizeof(m->boot_id), "%s", arg);
		break;
	case OPT_DURATION:
		if (parse_duration_ns(arg, &o->duration_ns) < 0 || o->duration_ns < NSEC_PER_SEC)
			return log_error_errno(EINVAL, "Invalid --duration '%s': 1s or more", arg);
		break;
	case OPT_VMEMMAP:
	case OPT_PAGE_OFFSET:
		if (parse_u64(arg, &v) < 0 || !kernel_base_valid(v))
			return log_error_errno(EINVAL, "Invalid --%s '%s': a 1 GiB-aligned kernel address "
					       "such as 0xffffea0000000000",
					       c == OPT_VMEMMAP ? "vmemmap-base" : "page-offset", arg);
		*(c == OPT_VMEMMAP ? &m->vmemmap_base : &m->page_offset) = v;
		snprintf(m->layout_source, sizeof(m->layout_source), "given");
		o->given_bases = true;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* perf's command line into dir/perf.data; 0, or -errno with perf's last line said. */
static int run_perf(const struct record_opts *o, const char *dir, char *data, size_t len)
{
	char secs[32], log[4200], last[256] = "", event[256];
	char *argv[16];
	int n = 0, status;
	pid_t pid;

	snprintf(data, len, "%s/perf.data", dir);
	snprintf(log, sizeof(log), "%s/perf.log", dir);
	snprintf(secs, sizeof(secs), "%.3f", (double)o->duration_ns / NSEC_PER_SEC);
	argv[n++] = (char *)"perf";
	if (o->event) {
		char *ev[] = { "record", "-d", "-g", "-a", "-e", event, NULL };

		snprintf(event, sizeof(event), "%s", o->event);

		for (size_t i = 0; ev[i]; i++)
			argv[n++] = ev[i];
	} else {
		/* perf-c2c(1): perf record's own options after "--"; -a for the
		 * whole system, not just the sleep */
		char *c2c[] = { "c2c", "record", "--", "-g", "-a", NULL };

		for (size_t i = 0; c2c[i]; i++)
			argv[n++] = c2c[i];
	}
	argv[n++] = (char *)"-o";
	argv[n++] = data;
	argv[n++] = (char *)"--";
	argv[n++] = (char *)"sleep";
	argv[n++] = secs;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return log_error_errno(errno, "fork: %m");
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run perf: %m (Debian: linux-perf)\n");
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return log_error_errno(errno, "waitpid: %m");
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	{
		FILE *f = fopen(log, "re");
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			if (strstrip(line)[0])
				snprintf(last, sizeof(last), "%s", strstrip(line));
		if (f)
			fclose(f);
	}
	if (o->event)
		return log_error_errno(EIO, "perf record -e %s failed: %s", o->event, last);
	return log_error_errno(ENODEV, "No memory-sampling PMU here: perf c2c record failed (%s), so "
			       "no HITM can be sampled on this machine. --event page-faults records a "
			       "software event with data addresses (the bundle's plumbing, no "
			       "contention); --perf-data FILE packs a recording made elsewhere", last);
}

/* This host and boot: name, release, boot id, build id, bases. */
static int running_identity(struct record_opts *o)
{
	struct bundle_manifest *m = &o->m;
	struct utsname u;
	struct kallsyms *ks;
	const char *source = NULL;
	int r;

	/* another host's inputs: its name and release as given, else the perf.data's */
	if (!m->hostname[0] && !o->kallsyms && gethostname(m->hostname, sizeof(m->hostname) - 1) < 0)
		return log_error_errno(errno, "gethostname: %m");
	if (!m->release[0] && !o->kallsyms && uname(&u) == 0)
		snprintf(m->release, sizeof(m->release), "%s", u.release);
	if (!m->boot_id[0] && !o->kallsyms)
		read_line("/proc/sys/kernel/random/boot_id", m->boot_id, sizeof(m->boot_id));
	if (!o->kallsyms)
		kallsyms_running_build_id(m->build_id, sizeof(m->build_id));
	if (o->given_bases || o->kallsyms)
		return 0;	/* another host's, as given */
	ks = kallsyms_load(NULL);
	r = ks ? host_memory_bases(ks, &m->vmemmap_base, &m->page_offset, &source) : -errno;
	kallsyms_free(ks);
	if (r < 0)
		log_warning_errno(r, "This kernel's memory-map bases cannot be read (%m): the bundle's "
				  "struct page lines are typed only where their code path shows it");
	snprintf(m->layout_source, sizeof(m->layout_source), "%s", source ?: "");
	return 0;
}

/* This boot's /proc/kallsyms, copied once (it must show addresses). */
static int copy_kallsyms(const char *dir, char *path, size_t len)
{
	struct kallsyms *ks = kallsyms_load(NULL);
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (!ks)
		return log_error_errno(errno, errno == EPERM ? "/proc/kallsyms shows every address as "
				       "zero: run mmhitm record as root" : "Failed to read /proc/kallsyms: %m");
	kallsyms_free(ks);
	n = read_file("/proc/kallsyms", &buf);
	if (n < 0)
		return log_error_errno((int)n, "Failed to read /proc/kallsyms: %m");
	snprintf(path, len, "%s/kallsyms.full", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, (size_t)n) != n)
		return log_error_errno(fd < 0 ? errno : EIO, "Failed to write %s: %m", path);
	return 0;
}

/*
 * --patches: the map's marker symbols the recorded kallsyms holds (import
 * stores them for the report, as mmhitmd stores its map's at boot) and the
 * state the map gives each path on this kernel, in the manifest.
 */
static int record_patches(struct record_opts *o, const char *kallsyms)
{
	struct bundle_manifest *m = &o->m;
	struct patch_map *map = patch_map_new();
	struct kallsyms *ks = NULL;
	struct patch_verdict v[MAX_PATHS];
	const char *found[BUNDLE_MAX_MARKERS];
	int r;

	if (!map)
		return log_oom();
	r = patch_map_load(map, o->patches);
	if (r < 0) {
		patch_map_free(map);
		return log_error_errno(r, "Failed to read the patch map %s: %m", o->patches);
	}
	ks = kallsyms_load(kallsyms);
	for (size_t i = 0; ks && i < patch_map_nr_ksyms(map) && m->nr_markers < BUNDLE_MAX_MARKERS; i++) {
		if (!kallsyms_find(ks, patch_map_ksym(map, i)))
			continue;
		found[m->nr_markers] = patch_map_ksym(map, i);
		snprintf(m->markers[m->nr_markers++], sizeof(m->markers[0]), "%s", patch_map_ksym(map, i));
	}
	patch_map_resolve(map, &(struct kernel_desc){ .release = m->release, .build_id = m->build_id,
		.ksyms = found, .nr_ksyms = m->nr_markers }, v);
	for (int p = 0; p < paths_nr(); p++) {
		size_t used = strlen(m->patches);

		snprintf(m->patches + used, sizeof(m->patches) - used, "%s%s %s", p ? ", " : "",
			 path_get(p)->id, patch_state_to_string(v[p].state));
	}
	log_info("Patches by %s on kernel %s: %s", o->patches, m->release[0] ? m->release : "?",
		 m->patches);
	kallsyms_free(ks);
	patch_map_free(map);
	return 0;
}

struct addrs {
	uint64_t *a;
	size_t n, alloc;
};

static int addrs_add(struct addrs *s, uint64_t a)
{
	if (a < KERNEL_HALF || a >= CONTEXT_MARKS)
		return 0;
	if (grow_array((void **)&s->a, &s->alloc, sizeof(*s->a), s->n + 1) < 0)
		return -ENOMEM;
	s->a[s->n++] = a;
	return 0;
}

/* The kernel addresses the samples name: IPs, callchain frames, data addresses. */
static int sample_addrs(const char *path, struct addrs *s)
{
	struct perf_data *pd = NULL;
	struct perf_data_record rec;
	char *err = NULL;
	int r = perf_data_open(path, &pd, &err);

	if (r < 0) {
		r = log_error_errno(r, "Failed to read %s: %s", path, err ?: "");
		free(err);
		return r;
	}
	while (r >= 0 && (r = perf_data_next(pd, &rec)) > 0) {
		const struct perf_data_sample *x = &rec.sample;

		if (rec.type != PERF_RECORD_SAMPLE)
			continue;
		r = addrs_add(s, x->ip);
		if (r >= 0)
			r = addrs_add(s, x->addr);
		for (uint64_t i = 0; r >= 0 && x->callchain && i < x->callchain_nr; i++)
			r = addrs_add(s, x->callchain[i]);
	}
	if (r < 0)
		r = log_error_errno(r, "Failed to read %s: %s", path, perf_data_error(pd));
	perf_data_free(pd);
	return r;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A symbol the import will look up, and the next one, whose address ends it. */
static int keep_sym(struct addrs *keep, const struct kallsyms *ks, const struct ksym *sym)
{
	const struct ksym *next;
	int r;

	if (!sym)
		return 0;
	next = kallsyms_at(ks, (size_t)(sym - kallsyms_at(ks, 0)) + 1);
	r = addrs_add(keep, sym->addr);
	return r < 0 || !next ? r : addrs_add(keep, next->addr);
}

/* Whether the line "ADDR TYPE NAME..." starts with one of the sorted addresses. */
static bool line_kept(const char *line, const struct addrs *keep)
{
	char *end;
	uint64_t a = strtoull(line, &end, 16);

	return end != line && bsearch(&a, keep->a, keep->n, sizeof(*keep->a), cmp_u64);
}

/*
 * The kallsyms lines the import of these samples reads: the symbols their
 * addresses fall in, the patch markers, each with its successor (a
 * symbol's size runs to the next one's address), every line at those
 * addresses. A 6.18 kernel's 5 MiB become a few kB.
 */
static int filter_kallsyms(struct record_opts *o, const char *in, const char *out,
			   const char *perf_data)
{
	struct kallsyms *ks = kallsyms_load(in);
	struct patch_map *map = patch_map_new();
	struct addrs samples = { 0 }, keep = { 0 };
	_cleanup_free_ char *text = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	ssize_t len = ks ? read_file(in, &text) : -errno;
	int r = len < 0 ? (int)len : sample_addrs(perf_data, &samples);

	for (size_t i = 0; r >= 0 && i < samples.n; i++)
		r = keep_sym(&keep, ks, kallsyms_lookup(ks, samples.a[i]));
	if (r >= 0 && map && patch_map_load_default(map) >= 0)
		for (size_t i = 0; r >= 0 && i < patch_map_nr_ksyms(map); i++)
			r = keep_sym(&keep, ks, kallsyms_find(ks, patch_map_ksym(map, i)));
	for (size_t i = 0; r >= 0 && i < o->m.nr_markers; i++)
		r = keep_sym(&keep, ks, kallsyms_find(ks, o->m.markers[i]));
	qsort(keep.a, keep.n, sizeof(*keep.a), cmp_u64);
	f = r >= 0 ? fopen(out, "we") : NULL;
	if (r >= 0 && !f)
		r = -errno;
	for (char *line = text, *nl; r >= 0 && line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		if (line_kept(line, &keep) && fwrite(line, 1, nl ? (size_t)(nl - line + 1) : strlen(line), f) == 0)
			r = -EIO;
	}
	if (r >= 0 && fflush(f) != 0)
		r = -errno;
	log_debug("kallsyms: %zu sample addresses, %zu symbol addresses kept", samples.n, keep.n);
	free(samples.a);
	free(keep.a);
	patch_map_free(map);
	kallsyms_free(ks);
	return r < 0 ? log_error_errno(r, "Failed to write the kallsyms lines the samples need: %m") : 0;
}

static void default_output(struct record_opts *o, char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	char stamp[32];

	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&t, &tm));
	snprintf(o->m.created, sizeof(o->m.created), "%s", stamp);
	if (!o->output) {
		snprintf(buf, len, "mmhitm-%s-%s.bundle", o->m.hostname[0] ? o->m.hostname : "host",
			 stamp);
		o->output = buf;
	}
}

/* This boot's kallsyms (or the given one), the patch map's markers in it, then only the lines needed. */
static int pack_kallsyms(struct record_opts *o, const char *dir, const char *data, char *ks,
			 size_t len)
{
	char full[4200];
	int r = 0;

	if (o->kallsyms)
		snprintf(full, sizeof(full), "%s", o->kallsyms);
	else
		r = copy_kallsyms(dir, full, sizeof(full));
	if (r >= 0 && o->patches)
		r = record_patches(o, full);
	snprintf(ks, len, "%s/kallsyms", dir);
	return r < 0 ? r : filter_kallsyms(o, full, ks, data);
}

/* The samples, the context, the bundle; the temporary files go in dir. */
static int record_pack(struct record_opts *o, const char *dir)
{
	char data[4200], ks[4200], out[512];
	struct bundle_member files[3];
	size_t n = 0;
	struct stat st;
	int r;

	r = running_identity(o);
	if (r < 0)
		return r;
	default_output(o, out, sizeof(out));
	if (o->perf_data) {
		snprintf(data, sizeof(data), "%s", o->perf_data);
		snprintf(o->m.sampler, sizeof(o->m.sampler), "given file");
	} else {
		log_info("Sampling for %.0f s: %s", (double)o->duration_ns / NSEC_PER_SEC,
			 o->event ? "perf record -d -g -a -e EVENT" : "perf c2c record -- -g -a");
		r = run_perf(o, dir, data, sizeof(data));
		if (r < 0)
			return r;
		snprintf(o->m.sampler, sizeof(o->m.sampler), "%s%s",
			 o->event ? "perf record -d -g -a -e " : "perf c2c record -- -g -a", o->event ?: "");
	}
	if (stat(data, &st) < 0)
		return log_error_errno(errno, "%s: %m", data);
	files[n++] = (struct bundle_member){ "perf.data", data };
	r = pack_kallsyms(o, dir, data, ks, sizeof(ks));
	if (r < 0)
		return r;
	files[n++] = (struct bundle_member){ "kallsyms", ks };
	if (!o->btf && access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		o->btf = "/sys/kernel/btf/vmlinux";
	if (o->btf)
		files[n++] = (struct bundle_member){ "btf", o->btf };
	else
		log_warning("No BTF for this kernel (CONFIG_DEBUG_INFO_BTF): the bundle's lines get "
			    "no field names");
	r = bundle_write(o->output, &o->m, files, n);
	if (r < 0)
		return log_error_errno(r, "Failed to write %s: %m", o->output);
	if (stat(o->output, &st) == 0)
		printf("%s: %lld bytes: samples from %s; kernel %s on %s%s%s; import anywhere "
		       "with: mmhitm import %s\n", o->output, (long long)st.st_size, o->m.sampler,
		       o->m.release[0] ? o->m.release : "(the perf.data's)",
		       o->m.hostname[0] ? o->m.hostname : "(the perf.data's host)",
		       o->m.vmemmap_base ? "" : "; no vmemmap base", o->btf ? "" : "; no BTF", o->output);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output",		required_argument, NULL, OPT_OUTPUT },
		{ "duration",		required_argument, NULL, OPT_DURATION },
		{ "event",		required_argument, NULL, OPT_EVENT },
		{ "perf-data",		required_argument, NULL, OPT_PERF_DATA },
		{ "kallsyms",		required_argument, NULL, OPT_KALLSYMS },
		{ "btf",		required_argument, NULL, OPT_BTF },
		{ "vmemmap-base",	required_argument, NULL, OPT_VMEMMAP },
		{ "page-offset",	required_argument, NULL, OPT_PAGE_OFFSET },
		{ "hostname",		required_argument, NULL, OPT_HOSTNAME },
		{ "kernel-release",	required_argument, NULL, OPT_RELEASE },
		{ "boot-id",		required_argument, NULL, OPT_BOOT_ID },
		{ "patches",		required_argument, NULL, OPT_PATCHES },
		{}
	};
	struct record_opts o = { .duration_ns = 10 * NSEC_PER_SEC };
	const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char dir[4096];
	struct cli_opts co;
	int r;

	r = cli_opts_parse(argc, argv, &(const struct cmd_options){
		.prog = "mmhitm record", .opts = opts, .parse = record_option, .userdata = &o,
		.help = cmd_record_help }, &co);
	if (r != 0)
		return r == 1 ? 0 : r;
	if (optind != argc) {
		log_error("Usage: mmhitm record [--output FILE] ... ('mmhitm record --help')");
		return EXIT_USAGE;
	}
	if (snprintf(dir, sizeof(dir), "%s/mmhitm-record-XXXXXX", tmp) >= (int)sizeof(dir) ||
	    !mkdtemp(dir))
		return log_error_errno(errno ?: ENAMETOOLONG, "Failed to create a directory in %s: %m",
				       tmp);
	r = record_pack(&o, dir);
	bundle_remove_dir(dir);
	return r;
}
