// SPDX-License-Identifier: GPL-2.0
/*
 * The perf.data reader against perf itself: every sample of every real
 * fixture (tests/fixtures/real/, perf 4.4, 5.4 and 5.17 files), and of
 * files real perf records here during the test (page-faults with addresses
 * from this kernel: user and kernel IPs, callchains, registers, user stack
 * dumps, RAW tracepoint data, group reads, WEIGHT_STRUCT, PHYS_ADDR, page
 * sizes, CGROUP), must equal what `perf script -F ...` prints for the same
 * file: same count per event, same pid/tid/time/cpu/ip/addr/period/
 * data_src/weight/phys_addr/page sizes, sample by sample.
 *
 * perf script is run once per field (its columns are easier to parse
 * alone) and the runs are zipped: its order is the same every time.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf-data.h"
#include "test.h"
#include "util.h"

enum field {
	F_HEAD,		/* pid/tid time: event: */
	F_IP, F_ADDR, F_CPU, F_PERIOD, F_DATA_SRC, F_WEIGHT, F_PHYS, F_DPS, F_CPS,
	F_MAX,
};

static const char *const field_arg[F_MAX] = {
	[F_HEAD] = "pid,tid,time,event", [F_IP] = "ip", [F_ADDR] = "addr", [F_CPU] = "cpu",
	[F_PERIOD] = "period", [F_DATA_SRC] = "data_src", [F_WEIGHT] = "weight",
	[F_PHYS] = "phys_addr", [F_DPS] = "data_page_size", [F_CPS] = "code_page_size",
};

struct smp {
	char event[128];
	int64_t pid, tid;
	uint64_t time;
	uint64_t v[F_MAX];
};

struct smp_list {
	struct smp *s;
	size_t n, alloc;
};

static struct smp *smp_add(struct smp_list *l)
{
	if (grow_array((void **)&l->s, &l->alloc, sizeof(*l->s), l->n + 1) < 0)
		abort();
	memset(&l->s[l->n], 0, sizeof(l->s[0]));
	return &l->s[l->n++];
}

static int smp_cmp(const void *a, const void *b)
{
	const struct smp *x = a, *y = b;
	int c;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->v[F_CPU] != y->v[F_CPU])
		return x->v[F_CPU] < y->v[F_CPU] ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	c = strcmp(x->event, y->event);
	if (c)
		return c;
	for (int f = F_IP; f < F_MAX; f++)
		if (x->v[f] != y->v[f])
			return x->v[f] < y->v[f] ? -1 : 1;
	return 0;
}

/* "4K", "2M", "N/A" as perf script prints page sizes. */
static uint64_t parse_page_size(const char *s)
{
	char *end;
	uint64_t v;

	while (*s == ' ')
		s++;
	if (strncmp(s, "N/A", 3) == 0)
		return 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return v;
	}
}

/* One perf script run for one field; appends to or checks *l. */
static int perf_script_field(const char *file, enum field f, struct smp_list *l)
{
	char cmd[1024], line[4096];
	size_t i = 0;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "perf script -i '%s' -G --ns -F %s 2>/dev/null", file,
		 field_arg[f]);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		struct smp *s;
		char *q = line;

		line[strcspn(line, "\n")] = '\0';
		if (f == F_HEAD) {
			long long pid, tid;
			unsigned long long sec, nsec;
			char *colon;
			int n = 0;

			if (sscanf(line, " %lld/%lld %llu.%llu:%n", &pid, &tid, &sec, &nsec, &n) != 4 || !n)
				continue;
			s = smp_add(l);
			s->pid = pid;
			s->tid = tid;
			s->time = sec * 1000000000ULL + nsec;
			q = line + n;
			while (*q == ' ')
				q++;
			/* the name ends at the last ':' (names may hold ':') */
			colon = strrchr(q, ':');
			if (colon)
				*colon = '\0';
			snprintf(s->event, sizeof(s->event), "%s", q);
			continue;
		}
		if (i >= l->n) {
			pclose(p);
			return -ERANGE;
		}
		s = &l->s[i++];
		switch (f) {
		case F_CPU:
			q = strchr(line, '[');
			s->v[f] = q ? strtoull(q + 1, NULL, 10) : UINT64_MAX;
			break;
		case F_PERIOD:
		case F_WEIGHT:
			s->v[f] = strtoull(line, NULL, 10);
			break;
		case F_DPS:
		case F_CPS:
			s->v[f] = parse_page_size(line);
			break;
		default:	/* hex: ip, addr, data_src (first token), phys_addr */
			s->v[f] = strtoull(line, NULL, 16);
			break;
		}
	}
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -EIO;
	if (f != F_HEAD && i != l->n)
		return -ERANGE;
	return 0;
}

struct file_result {
	size_t samples, compared, kernel_ips, user_ips;
	bool skipped;
};

/* Reads file with our reader and with perf script and compares. */
static void check_file(const char *file, struct file_result *res)
{
	struct smp_list mine = { 0 }, ref = { 0 };
	bool want[F_MAX] = { [F_HEAD] = true }, read_events = false;
	struct perf_data_record rec;
	struct perf_data *pd = NULL;
	char *err = NULL;
	size_t mism = 0;
	int r;

	memset(res, 0, sizeof(*res));
	test_current = file;
	r = perf_data_open(file, &pd, &err);
	CHECK_INT(r, ==, 0);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", file, err);
		free(err);
		return;
	}
	while ((r = perf_data_next(pd, &rec)) > 0) {
		const struct perf_data_sample *x = &rec.sample;
		uint64_t t;
		struct smp *s;

		if (rec.type != PERF_RECORD_SAMPLE || !rec.event)
			continue;
		t = x->sample_type;
		if ((rec.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL)
			res->kernel_ips++;
		else if ((rec.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_USER)
			res->user_ips++;
		s = smp_add(&mine);
		snprintf(s->event, sizeof(s->event), "%s", rec.event->name);
		/* perf script prints -1 for what the sample lacks */
		s->pid = t & PERF_SAMPLE_TID ? (int32_t)x->pid : -1;
		s->tid = t & PERF_SAMPLE_TID ? (int32_t)x->tid : -1;
		s->time = x->time;
		s->v[F_IP] = x->ip;
		s->v[F_ADDR] = x->addr;
		s->v[F_CPU] = x->cpu;
		s->v[F_PERIOD] = x->period;
		s->v[F_DATA_SRC] = x->data_src;
		s->v[F_WEIGHT] = x->weight;
		s->v[F_PHYS] = x->phys_addr;
		s->v[F_DPS] = x->data_page_size;
		s->v[F_CPS] = x->code_page_size;
		want[F_IP] |= !!(t & PERF_SAMPLE_IP);
		want[F_ADDR] |= !!(t & PERF_SAMPLE_ADDR);
		want[F_CPU] |= !!(t & PERF_SAMPLE_CPU);
		want[F_PERIOD] |= !!(t & PERF_SAMPLE_PERIOD);
		want[F_DATA_SRC] |= !!(t & PERF_SAMPLE_DATA_SRC);
		want[F_WEIGHT] |= !!(t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT));
		want[F_PHYS] |= !!(t & PERF_SAMPLE_PHYS_ADDR);
		want[F_DPS] |= !!(t & PERF_SAMPLE_DATA_PAGE_SIZE);
		want[F_CPS] |= !!(t & PERF_SAMPLE_CODE_PAGE_SIZE);
		read_events |= !!(t & PERF_SAMPLE_READ);
	}
	CHECK_INT(r, ==, 0);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", file, perf_data_error(pd));
	res->samples = mine.n;
	/* perf script's period of a group-read sample is the leader's count
	 * delta, and it prints a line per member: compare the leaders only. */
	if (read_events)
		want[F_PERIOD] = false;

	for (int f = 0; f < F_MAX; f++) {
		if (!want[f])
			continue;
		r = perf_script_field(file, f, &ref);
		if (r < 0) {
			printf("note: perf script -F %s cannot read %s (%s), not compared\n",
			       field_arg[f], file, strerror(-r));
			res->skipped = true;
			goto out;
		}
	}
	if (read_events) {
		size_t k = 0;

		for (size_t i = 0; i < ref.n; i++) {
			bool sampling = false;

			for (size_t j = 0; j < perf_data_n_events(pd); j++) {
				const struct perf_data_event *ev = perf_data_event(pd, j);

				/* a group member's line: only its leader was sampled */
				if (strcmp(ev->name, ref.s[i].event) == 0 &&
				    (!(ev->attr.sample_type & PERF_SAMPLE_READ) || ev->attr.sample_period))
					sampling = true;
			}
			if (sampling)
				ref.s[k++] = ref.s[i];
		}
		ref.n = k;
	}

	/* Same count per event, then the same samples. */
	CHECK_INT(mine.n, ==, ref.n);
	for (size_t j = 0; j < perf_data_n_events(pd); j++) {
		const char *name = perf_data_event(pd, j)->name;
		size_t a = 0, b = 0;

		for (size_t i = 0; i < mine.n; i++)
			a += strcmp(mine.s[i].event, name) == 0;
		for (size_t i = 0; i < ref.n; i++)
			b += strcmp(ref.s[i].event, name) == 0;
		CHECK_INT(a, ==, b);
		if (a)
			printf("  %-60s %zu samples (perf script: %zu)\n", name, a, b);
	}
	for (size_t i = 0; i < mine.n; i++)
		for (int f = F_IP; f < F_MAX; f++)
			if (!want[f])
				mine.s[i].v[f] = 0;
	for (size_t i = 0; i < ref.n; i++)
		for (int f = F_IP; f < F_MAX; f++)
			if (!want[f])
				ref.s[i].v[f] = 0;
	qsort(mine.s, mine.n, sizeof(*mine.s), smp_cmp);
	qsort(ref.s, ref.n, sizeof(*ref.s), smp_cmp);
	for (size_t i = 0; i < mine.n && i < ref.n; i++) {
		const struct smp *a = &mine.s[i], *b = &ref.s[i];
		bool same = strcmp(a->event, b->event) == 0 && a->pid == b->pid &&
			    a->tid == b->tid && a->time == b->time;

		for (int f = F_IP; f < F_MAX; f++)
			same = same && a->v[f] == b->v[f];
		if (!same && mism++ < 3)
			fprintf(stderr, "%s: sample %zu differs: mine %s %" PRId64 "/%" PRId64 " %" PRIu64
				" ip %" PRIx64 " addr %" PRIx64 " cpu %" PRIu64 " period %" PRIu64
				" ds %" PRIx64 " w %" PRIu64 " | perf %s %" PRId64 "/%" PRId64 " %" PRIu64
				" ip %" PRIx64 " addr %" PRIx64 " cpu %" PRIu64 " period %" PRIu64
				" ds %" PRIx64 " w %" PRIu64 "\n", file, i,
				a->event, a->pid, a->tid, a->time, a->v[F_IP], a->v[F_ADDR], a->v[F_CPU],
				a->v[F_PERIOD], a->v[F_DATA_SRC], a->v[F_WEIGHT],
				b->event, b->pid, b->tid, b->time, b->v[F_IP], b->v[F_ADDR], b->v[F_CPU],
				b->v[F_PERIOD], b->v[F_DATA_SRC], b->v[F_WEIGHT]);
		else if (same)
			res->compared++;
	}
	CHECK_INT(mism, ==, 0);
out:
	free(mine.s);
	free(ref.s);
	perf_data_free(pd);
}

static bool have_perf(void)
{
	return system("perf version >/dev/null 2>&1") == 0;
}

/* Records with real perf; false (and why) when this machine won't. */
static bool perf_record(const char *out, const char *args)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "perf record -q -o '%s' %s >/dev/null 2>&1", out, args);
	if (system(cmd) != 0) {
		printf("note: could not record: perf record %s\n", args);
		return false;
	}
	return true;
}

int main(void)
{
	const char *dir = test_fixtures_dir();
	/* what real perf records here: the brief's command, then one that
	 * turns on every sample field perf can ask a software event for */
	static const struct { const char *name, *args; } rec[] = {
		{ "page-faults", "-d -e page-faults -a -- dd if=/dev/zero of=/dev/null bs=1M count=4" },
		{ "page-faults-all-fields",
		  "-d -W --phys-data --data-page-size --code-page-size --all-cgroups -g "
		  "--user-regs=ax,bx --intr-regs=ax,cx -e page-faults -c 1 -a -- "
		  "dd if=/dev/zero of=/dev/null bs=1M count=4" },
		{ "group-read", "-d -e '{page-faults,minor-faults}:S' -c 1 -a -- "
		  "dd if=/dev/zero of=/dev/null bs=1M count=2" },
		{ "raw-dwarf", "-R --call-graph dwarf,1024 -e sched:sched_switch -c 1 -a -- sleep 0.2" },
	};
	char tmpdir[] = "/tmp/mmhitm-test-perf-XXXXXX";
	size_t files = 0, real_files = 0, compared = 0;
	struct dirent *de;
	DIR *d;

	if (!have_perf())
		SKIP("perf is not installed (Debian: linux-perf)");
	if (!mkdtemp(tmpdir))
		SKIP("cannot make a temporary directory");

	/* The real files ship with the repository: none there is a failure,
	 * never a skip. */
	d = opendir(dir);
	if (!d)
		fprintf(stderr, "no fixtures at %s: %m\n", dir);
	while (d && (de = readdir(d))) {
		char path[4096];
		struct file_result res;
		size_t l = strlen(de->d_name);

		if (l < 10 || strcmp(de->d_name + l - 10, ".perf.data") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		printf("%s\n", path);
		check_file(path, &res);
		files++;
		real_files++;
		compared += res.compared;
		printf("  %zu samples (%zu kernel IPs, %zu user IPs), %zu equal to perf script's%s\n",
		       res.samples, res.kernel_ips, res.user_ips, res.compared,
		       res.skipped ? " (skipped: perf could not read it)" : "");
	}
	if (d)
		closedir(d);
	/* perf 4.4, 5.4 and 5.17 files: tests/fixtures/PROVENANCE */
	CHECK_INT(real_files, >=, 3);

	for (size_t i = 0; i < ARRAY_SIZE(rec); i++) {
		char path[256];
		struct file_result res;

		snprintf(path, sizeof(path), "%s/%s.data", tmpdir, rec[i].name);
		if (!perf_record(path, rec[i].args))
			continue;
		printf("%s (recorded here: perf record %s)\n", path, rec[i].args);
		check_file(path, &res);
		files++;
		compared += res.compared;
		CHECK(res.samples > 0);
		/* a fault on every page: the kernel's own copies fault too */
		if (strstr(rec[i].args, "-c 1 -a -- dd")) {
			CHECK(res.kernel_ips > 0);
			CHECK(res.user_ips > 0);
		}
		printf("  %zu samples (%zu kernel IPs, %zu user IPs), %zu equal to perf script's\n",
		       res.samples, res.kernel_ips, res.user_ips, res.compared);
		unlink(path);
	}
	rmdir(tmpdir);
	if (test_failures == 0 && (files == 0 || compared == 0))
		SKIP("no perf.data file could be compared (perf could read none, perf record not permitted)");
	return test_exit();
}
