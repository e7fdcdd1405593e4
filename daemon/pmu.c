// SPDX-License-Identifier: GPL-2.0
/*
 * Memory-sampling PMU detection and the small part of perf's event parser
 * mmhitm needs. What perf c2c asks for per vendor is in
 * tools/perf/arch/x86/util/mem-events.c (Intel, with the mem-loads-aux
 * group where the PMU has that event, per tools/perf/arch/x86/util/pmu.c),
 * tools/perf/arch/arm64/util/mem-events.c (Arm SPE); the sysfs layout of
 * PMUs (type, events/, format/) is
 * Documentation/ABI/testing/sysfs-bus-event_source-devices-*.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "pmu.h"
#include "util.h"

/* capability bits (include/uapi/linux/capability.h) */
#define CAP_SYS_ADMIN_BIT	21
#define CAP_PERFMON_BIT		38

#define DEVICES "sys/bus/event_source/devices"

static int fmt_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fmt_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void path_of(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void path_of(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = snprintf(buf, len, "%s/", root && *root ? root : "");
	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* <root>/sys/bus/event_source/devices/<pmu>[/events/<event>] exists */
static bool exists(const char *root, const char *pmu, const char *event)
{
	char p[1024];

	if (event)
		path_of(p, sizeof(p), root, DEVICES "/%s/events/%s", pmu, event);
	else
		path_of(p, sizeof(p), root, DEVICES "/%s", pmu);
	return access(p, F_OK) == 0;
}

/* --- the event parser ------------------------------------------------------ */

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} named_events[] = {
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
};

/* Scatters value into the bits a format file names ("config1:0-15,32"),
 * low value bits into the first positions, clearing them first. */
static int apply_format(struct perf_event_attr *a, const char *format, uint64_t value,
			const char *term, char *err, size_t errlen)
{
	char buf[128], *ranges, *save = NULL, *tok;
	uint64_t *field;
	unsigned int k = 0;

	snprintf(buf, sizeof(buf), "%s", format);
	ranges = strchr(buf, ':');
	if (!ranges)
		return fmt_err(err, errlen, "format of '%s' is '%s'", term, format);
	*ranges++ = '\0';
	if (strcmp(buf, "config") == 0)
		field = (uint64_t *)&a->config;
	else if (strcmp(buf, "config1") == 0)
		field = (uint64_t *)&a->config1;
	else if (strcmp(buf, "config2") == 0)
		field = (uint64_t *)&a->config2;
	else
		return fmt_err(err, errlen, "'%s' sets %s, which this build does not know", term, buf);

	for (tok = strtok_r(ranges, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int lo, hi;

		if (sscanf(tok, "%u-%u", &lo, &hi) != 2) {
			if (sscanf(tok, "%u", &lo) != 1)
				return fmt_err(err, errlen, "format of '%s' is '%s'", term, format);
			hi = lo;
		}
		if (lo > hi || hi > 63)
			return fmt_err(err, errlen, "format of '%s' is '%s'", term, format);
		for (unsigned int bit = lo; bit <= hi; bit++, k++) {
			*field &= ~(1ULL << bit);
			if (k < 64 && (value >> k & 1))
				*field |= 1ULL << bit;
		}
	}
	if (k < 64 && value >> k)
		return fmt_err(err, errlen, "value %#" PRIx64 " of '%s' does not fit in %u bits",
			       value, term, k);
	return 0;
}

static int apply_term(const char *root, const char *pmu, struct perf_event_attr *a,
		      const char *term, int depth, char *err, size_t errlen);

/* "event=0xcd,umask=0x1,ldlat=3" from an events/ file */
static int apply_terms(const char *root, const char *pmu, struct perf_event_attr *a,
		       const char *terms, int depth, char *err, size_t errlen)
{
	char *copy = strdup(terms), *save = NULL, *tok;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && r == 0; tok = strtok_r(NULL, ",", &save))
		r = apply_term(root, pmu, a, strstrip(tok), depth, err, errlen);
	free(copy);
	return r;
}

static int apply_term(const char *root, const char *pmu, struct perf_event_attr *a,
		      const char *term, int depth, char *err, size_t errlen)
{
	char name[64], p[1024], buf[256];
	const char *eq = strchr(term, '=');
	uint64_t value = 1;

	if (!*term)
		return 0;
	if (depth > 2)
		return fmt_err(err, errlen, "event aliases nest too deep at '%s'", term);
	snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - term) : (int)strlen(term), term);
	if (strchr(name, '/') || strstr(name, ".."))
		return fmt_err(err, errlen, "bad term '%s'", term);
	if (eq && parse_u64(eq + 1, &value) < 0)
		return fmt_err(err, errlen, "bad value in '%s'", term);
	/* a named event of the PMU: its own terms */
	if (!eq) {
		path_of(p, sizeof(p), root, DEVICES "/%s/events/%s", pmu, name);
		if (read_line(p, buf, sizeof(buf)) == 0)
			return apply_terms(root, pmu, a, strstrip(buf), depth + 1, err, errlen);
	}
	if (strcmp(name, "period") == 0) {
		a->sample_period = value;
		return 0;
	}
	path_of(p, sizeof(p), root, DEVICES "/%s/format/%s", pmu, name);
	if (read_line(p, buf, sizeof(buf)) < 0)
		return fmt_err(err, errlen, "PMU %s has no event or format '%s'", pmu, name);
	return apply_format(a, strstrip(buf), value, term, err, errlen);
}

/* u, k, p..., P; returns -EINVAL on anything else */
static int apply_mods(struct pmu_event *e, const char *mods, char *err, size_t errlen)
{
	bool u = false, k = false;
	unsigned int p = e->attr.precise_ip;

	for (const char *m = mods; *m; m++) {
		switch (*m) {
		case 'u': u = true; break;
		case 'k': k = true; break;
		case 'p': p++; break;
		case 'P': e->precise_max = true; break;
		case ':': break;
		default:
			return fmt_err(err, errlen, "unknown modifier '%c' in '%s'", *m, mods);
		}
	}
	if (p > 3)	/* precise_ip is two bits */
		return fmt_err(err, errlen, "too many 'p' in '%s'", mods);
	e->attr.precise_ip = p;
	if (u && !k) {
		e->attr.exclude_kernel = 1;
		e->attr.exclude_hv = 1;
	} else if (k && !u) {
		e->attr.exclude_user = 1;
		e->attr.exclude_hv = 1;
	}
	return 0;
}

/* One event, "pmu/terms/mods" or "name:mods". */
static int parse_one(const char *root, const char *item, const char *group_mods,
		     struct pmu_event *e, char *err, size_t errlen)
{
	const char *s1 = strchr(item, '/');
	char p[1024], buf[64];
	uint64_t type;
	int r;

	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", item);
	e->attr.size = sizeof(e->attr);
	if (s1) {
		const char *s2 = strchr(s1 + 1, '/');
		char pmu[64], *terms;

		if (!s2)
			return fmt_err(err, errlen, "unterminated event '%s'", item);
		snprintf(pmu, sizeof(pmu), "%.*s", (int)(s1 - item), item);
		if (!*pmu || strchr(pmu, '.'))
			return fmt_err(err, errlen, "bad PMU name in '%s'", item);
		path_of(p, sizeof(p), root, DEVICES "/%s/type", pmu);
		if (read_line(p, buf, sizeof(buf)) < 0 || parse_u64(strstrip(buf), &type) < 0)
			return fmt_err(err, errlen, "no PMU '%s' (%s)", pmu, p);
		e->attr.type = type;
		terms = strndup(s1 + 1, s2 - s1 - 1);
		if (!terms)
			return -ENOMEM;
		r = apply_terms(root, pmu, &e->attr, terms, 0, err, errlen);
		/* the helper event of the load latency group */
		if (r == 0 && strstr(terms, "-aux") && !strchr(terms, ','))
			e->count_only = true;
		free(terms);
		if (r < 0)
			return r;
		r = apply_mods(e, s2 + 1, err, errlen);
	} else {
		const char *colon = strchr(item, ':');
		size_t n = colon ? (size_t)(colon - item) : strlen(item);
		size_t i;

		for (i = 0; i < ARRAY_SIZE(named_events); i++)
			if (strlen(named_events[i].name) == n && strncmp(named_events[i].name, item, n) == 0)
				break;
		if (i == ARRAY_SIZE(named_events))
			return fmt_err(err, errlen, "unknown event '%.*s'", (int)n, item);
		e->attr.type = named_events[i].type;
		e->attr.config = named_events[i].config;
		r = colon ? apply_mods(e, colon + 1, err, errlen) : 0;
	}
	if (r == 0 && group_mods)
		r = apply_mods(e, group_mods, err, errlen);
	return r;
}

/* The end of one top-level item: a ',' outside {} and outside pmu/.../. */
static const char *item_end(const char *s)
{
	int depth = 0, slashes = 0;

	for (; *s; s++) {
		if (*s == '{')
			depth++;
		else if (*s == '}')
			depth--;
		else if (*s == '/')
			slashes++;
		else if (*s == ',' && depth == 0 && slashes % 2 == 0)
			return s;
	}
	return s;
}

int pmu_events_parse(const char *root, const char *spec, struct pmu_event *ret, size_t max,
		     size_t *ret_n, char *err, size_t errlen)
{
	unsigned int group = 0;
	size_t n = 0;
	int r;

	if (!spec || !*spec)
		return fmt_err(err, errlen, "no events");
	while (*spec) {
		const char *end = item_end(spec);
		char item[512];

		if ((size_t)(end - spec) >= sizeof(item))
			return fmt_err(err, errlen, "event too long");
		snprintf(item, sizeof(item), "%.*s", (int)(end - spec), spec);
		strstrip(item);
		if (item[0] == '{') {
			char *close = strrchr(item, '}'), *mods;
			const char *inner = item + 1;
			size_t first = n;

			if (!close)
				return fmt_err(err, errlen, "unterminated group '%s'", item);
			*close = '\0';
			mods = close + 1;
			if (*mods == ':')
				mods++;
			while (*inner) {
				const char *e = item_end(inner);
				char one[256];

				if (n >= max)
					return fmt_err(err, errlen, "more than %zu events", max);
				snprintf(one, sizeof(one), "%.*s", (int)(e - inner), inner);
				r = parse_one(root, strstrip(one), mods, &ret[n], err, errlen);
				if (r < 0)
					return r;
				ret[n].group = group;
				ret[n].leader = n == first;
				/* only a leader is a helper; a lone aux event would sample */
				if (!ret[n].leader)
					ret[n].count_only = false;
				n++;
				inner = *e ? e + 1 : e;
			}
			if (n - first == 1)
				ret[first].count_only = false;
		} else if (*item) {
			if (n >= max)
				return fmt_err(err, errlen, "more than %zu events", max);
			r = parse_one(root, item, NULL, &ret[n], err, errlen);
			if (r < 0)
				return r;
			ret[n].group = group;
			ret[n].leader = true;
			ret[n].count_only = false;
			n++;
		}
		group++;
		spec = *end ? end + 1 : end;
	}
	*ret_n = n;
	return 0;
}

/* --- detection ------------------------------------------------------------- */

struct host {
	char vendor[32];
	bool hypervisor;
	bool arm;
	int paranoid;		/* INT_MIN: no perf_event_paranoid */
	bool privileged;	/* CAP_PERFMON or CAP_SYS_ADMIN in the effective set */
};

static void read_host(const char *root, struct host *h)
{
	char p[1024], *buf = NULL, *line, *save = NULL;
	char v[32];

	memset(h, 0, sizeof(*h));
	path_of(p, sizeof(p), root, "proc/cpuinfo");
	if (read_file(p, &buf) >= 0) {
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			if (!h->vendor[0] && sscanf(line, "vendor_id : %31s", h->vendor) == 1)
				continue;
			if (startswith(line, "flags") && strstr(line, " hypervisor"))
				h->hypervisor = true;
			if (startswith(line, "CPU implementer"))
				h->arm = true;
		}
		free(buf);
	}
	h->paranoid = -1000;
	path_of(p, sizeof(p), root, "proc/sys/kernel/perf_event_paranoid");
	if (read_line(p, v, sizeof(v)) == 0)
		h->paranoid = atoi(v);
	path_of(p, sizeof(p), root, "proc/self/status");
	buf = NULL;
	if (read_file(p, &buf) >= 0) {
		char *c = strstr(buf, "\nCapEff:");
		uint64_t caps = c ? strtoull(c + 8, NULL, 16) : 0;

		h->privileged = (caps >> CAP_PERFMON_BIT & 1) || (caps >> CAP_SYS_ADMIN_BIT & 1);
		free(buf);
	}
}

/* Intel core PMUs: "cpu", or "cpu_core" and "cpu_atom" on hybrids. */
static bool intel_events(const char *root, char *out, size_t len)
{
	static const char *const cores[] = { "cpu", "cpu_core", "cpu_atom" };
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(cores); i++) {
		const char *c = cores[i];

		if (!exists(root, c, "mem-loads"))
			continue;
		/* tools/perf/arch/x86/util/pmu.c: the aux group where the PMU has it */
		if (exists(root, c, "mem-loads-aux"))
			n += snprintf(out + n, n < len ? len - n : 0, "%s{%s/mem-loads-aux/,%s/mem-loads,ldlat=%d/}:P",
				      n ? "," : "", c, c, PMU_DEFAULT_LDLAT);
		else
			n += snprintf(out + n, n < len ? len - n : 0, "%s%s/mem-loads,ldlat=%d/P",
				      n ? "," : "", c, PMU_DEFAULT_LDLAT);
		if (exists(root, c, "mem-stores"))
			n += snprintf(out + n, n < len ? len - n : 0, ",%s/mem-stores/P", c);
	}
	return n > 0;
}

/* The first arm_spe_N PMU. */
static bool spe_pmu(const char *root, char *name, size_t len)
{
	char p[1024];
	struct dirent *de;
	DIR *d;
	bool found = false;

	path_of(p, sizeof(p), root, DEVICES);
	d = opendir(p);
	if (!d)
		return false;
	while ((de = readdir(d)))
		if (startswith(de->d_name, "arm_spe_")) {
			snprintf(name, len, "%.32s", de->d_name);
			found = true;
			break;
		}
	closedir(d);
	return found;
}

static void set(struct pmu_info *ret, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set(struct pmu_info *ret, const char *kind, const char *fmt, ...)
{
	va_list ap;

	snprintf(ret->kind, sizeof(ret->kind), "%s", kind);
	va_start(ap, fmt);
	vsnprintf(ret->detail, sizeof(ret->detail), fmt, ap);
	va_end(ap);
}

int pmu_detect_at(const char *root, struct pmu_info *ret)
{
	char events[200], spe[64], p[1024];
	const char *kind = NULL, *vm;
	struct host h;

	memset(ret, 0, sizeof(*ret));
	read_host(root, &h);
	vm = h.hypervisor ? " (a VM: the hypervisor does not expose it)" : "";

	path_of(p, sizeof(p), root, DEVICES);
	if (access(p, F_OK) < 0) {
		set(ret, "none", "no PMU: no %s (kernel without perf events?)", p);
		return 0;
	}
	if (spe_pmu(root, spe, sizeof(spe))) {
		/* tools/perf/arch/arm64/util/mem-events.c, "spe-ldst" */
		kind = "arm-spe";
		snprintf(events, sizeof(events),
			 "%s/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1,min_latency=%d/",
			 spe, PMU_DEFAULT_LDLAT);
	} else if ((!strcmp(h.vendor, "AuthenticAMD") || !strcmp(h.vendor, "HygonGenuine")) &&
		   exists(root, "ibs_op", NULL)) {
		kind = "amd-ibs";
		snprintf(events, sizeof(events), "ibs_op//");
	} else if (strcmp(h.vendor, "AuthenticAMD") != 0 && strcmp(h.vendor, "HygonGenuine") != 0 &&
		   intel_events(root, events, sizeof(events))) {
		kind = "intel-pebs";
	}

	if (!kind) {
		if (!strcmp(h.vendor, "GenuineIntel"))
			set(ret, "none", exists(root, "cpu", NULL) ?
			    "no PMU: the cpu PMU has no mem-loads event (no PEBS load latency)%s" :
			    "no PMU: no cpu PMU in sysfs%s", vm);
		else if (!strcmp(h.vendor, "AuthenticAMD") || !strcmp(h.vendor, "HygonGenuine"))
			set(ret, "none", "no PMU: no ibs_op PMU (IBS absent or disabled)%s", vm);
		else if (h.arm)
			set(ret, "none", "no PMU: no arm_spe PMU (needs SPE and CONFIG_ARM_SPE_PMU)%s", vm);
		else
			set(ret, "none", "no PMU: no supported memory-sampling PMU (Intel PEBS, AMD IBS, "
			    "Arm SPE)%s", vm);
		return 0;
	}
	/* system-wide sampling: kernel/events/core.c perf_allow_cpu() wants
	 * CAP_PERFMON (or CAP_SYS_ADMIN) unless perf_event_paranoid <= 0 */
	if (h.paranoid == -1000) {
		set(ret, "none", "no PMU access: %s present but no perf_event_paranoid "
		    "(kernel without CONFIG_PERF_EVENTS?)", kind);
		return 0;
	}
	if (!h.privileged && h.paranoid > 0) {
		set(ret, "none", "no PMU access: %s present but perf_event_paranoid=%d and no "
		    "CAP_PERFMON or CAP_SYS_ADMIN", kind, h.paranoid);
		return 0;
	}
	set(ret, kind, "%s", events);
	return 0;
}

/* Opens the first sampling event once on CPU 0, to be sure the kernel takes it. */
static int probe(const struct pmu_info *info, char *why, size_t len)
{
	struct pmu_event ev[PMU_MAX_EVENTS];
	size_t n = 0;
	int fd = -1, r;

	r = pmu_events_parse(NULL, info->detail, ev, ARRAY_SIZE(ev), &n, why, len);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n && fd < 0; i++) {
		struct perf_event_attr a = ev[i].attr;

		if (ev[i].count_only || !ev[i].leader)
			continue;
		a.disabled = 1;
		a.sample_period = 100003;
		a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC;
		for (int prec = ev[i].precise_max ? 3 : a.precise_ip; prec >= (int)a.precise_ip; prec--) {
			struct perf_event_attr t = a;

			t.precise_ip = prec;
			fd = syscall(SYS_perf_event_open, &t, -1, 0, -1, 0);
			if (fd >= 0 || (errno != EINVAL && errno != EOPNOTSUPP))
				break;
		}
		if (fd < 0) {
			snprintf(why, len, "%.100s: %s", ev[i].name, strerror(errno));
			return -errno;
		}
	}
	if (fd >= 0)
		close(fd);
	return 0;
}

int pmu_detect(struct pmu_info *ret)
{
	char why[200];
	int r;

	pmu_detect_at(NULL, ret);
	if (strcmp(ret->kind, "none") == 0 || strcmp(ret->kind, "arm-spe") == 0)
		return 0;	/* SPE's AUX events are not probed the same way */
	r = probe(ret, why, sizeof(why));
	if (r < 0) {
		char kind[16];

		snprintf(kind, sizeof(kind), "%s", ret->kind);
		set(ret, "none", "no PMU access: the kernel refused %s (%s)", kind, why);
	}
	return 0;
}
