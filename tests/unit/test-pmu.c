// SPDX-License-Identifier: GPL-2.0
/*
 * PMU detection on fake sysfs/procfs trees, one per kind of host: Intel
 * Skylake (mem-loads + mem-stores), Sapphire Rapids (the mem-loads-aux
 * group), an Alder Lake hybrid, AMD with IBS, Arm with SPE, and the hosts
 * without: a VM whose hypervisor exposes no PMU (this one), a CPU without
 * the events, perf_event_paranoid without capabilities. The event strings
 * must parse, through the same sysfs formats, into the attrs perf would
 * build (the real fixtures' attrs: mem-loads config 0x1cd, mem-stores
 * 0x82d0). On this host: kind "none" with its reason.
 */
#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmu.h"
#include "test.h"
#include "util.h"

static char root[64];

static void put_file(const char *content, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void put_file(const char *content, const char *fmt, ...)
{
	char rel[512], path[700], cmd[800];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	CHECK_INT(system(cmd), ==, 0);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(content, f);
		fclose(f);
	}
}

static void fresh_root(const char *vendor, bool vm, const char *paranoid, bool caps)
{
	char cmd[128];

	if (root[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
		CHECK_INT(system(cmd), ==, 0);
	}
	snprintf(root, sizeof(root), "/tmp/mmhitm-test-pmu-XXXXXX");
	CHECK(mkdtemp(root) != NULL);
	put_file("", "sys/bus/event_source/devices/software/type");
	if (vendor && strcmp(vendor, "arm") == 0) {
		put_file("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n", "proc/cpuinfo");
	} else if (vendor) {
		char ci[256];

		snprintf(ci, sizeof(ci), "processor\t: 0\nvendor_id\t: %s\nflags\t\t: fpu sse2%s\n",
			 vendor, vm ? " hypervisor" : "");
		put_file(ci, "proc/cpuinfo");
	}
	if (paranoid)
		put_file(paranoid, "proc/sys/kernel/perf_event_paranoid");
	/* CapEff: CAP_PERFMON (bit 38) and CAP_SYS_ADMIN (21), or nothing */
	put_file(caps ? "Name:\tx\nCapEff:\t000001ffffffffff\n" : "Name:\tx\nCapEff:\t0000000000000000\n",
		 "proc/self/status");
}

/* The Intel core PMU's sysfs (arch/x86/events/intel/core.c formats). */
static void intel_pmu(const char *pmu, int type, bool aux)
{
	char t[16];

	snprintf(t, sizeof(t), "%d\n", type);
	put_file(t, "sys/bus/event_source/devices/%s/type", pmu);
	put_file("config:0-7\n", "sys/bus/event_source/devices/%s/format/event", pmu);
	put_file("config:8-15\n", "sys/bus/event_source/devices/%s/format/umask", pmu);
	put_file("config1:0-15\n", "sys/bus/event_source/devices/%s/format/ldlat", pmu);
	put_file("event=0xcd,umask=0x1,ldlat=3\n", "sys/bus/event_source/devices/%s/events/mem-loads", pmu);
	put_file("event=0xd0,umask=0x82\n", "sys/bus/event_source/devices/%s/events/mem-stores", pmu);
	if (aux)
		put_file("event=0x03,umask=0x82\n", "sys/bus/event_source/devices/%s/events/mem-loads-aux", pmu);
}

static void detect(const char *kind, const char *detail)
{
	struct pmu_info i;

	CHECK_INT(pmu_detect_at(root, &i), ==, 0);
	CHECK_STR(i.kind, kind);
	if (!strstr(i.detail, detail))
		fprintf(stderr, "%s: detail '%s' lacks '%s'\n", test_current, i.detail, detail);
	CHECK(strstr(i.detail, detail) != NULL);
}

static size_t parse(const char *spec, struct pmu_event *ev)
{
	char err[200] = "";
	size_t n = 0;

	CHECK_INT(pmu_events_parse(root, spec, ev, PMU_MAX_EVENTS, &n, err, sizeof(err)), ==, 0);
	if (err[0])
		fprintf(stderr, "%s: %s\n", spec, err);
	return n;
}

static void test_intel_skylake(void)
{
	struct pmu_info i;
	struct pmu_event ev[PMU_MAX_EVENTS];

	fresh_root("GenuineIntel", false, "2\n", true);
	intel_pmu("cpu", 4, false);
	detect("intel-pebs", "cpu/mem-loads,ldlat=30/P,cpu/mem-stores/P");
	pmu_detect_at(root, &i);
	CHECK_STR(i.detail, "cpu/mem-loads,ldlat=30/P,cpu/mem-stores/P");
	CHECK_INT(parse(i.detail, ev), ==, 2);
	/* the real fixtures' attrs: type 4, config 0x1cd / 0x82d0 */
	CHECK_INT(ev[0].attr.type, ==, 4);
	CHECK_INT(ev[0].attr.config, ==, 0x1cd);
	CHECK_INT(ev[0].attr.config1, ==, 30);	/* ldlat=30 replaces the alias's 3 */
	CHECK(ev[0].precise_max);
	CHECK(!ev[0].count_only);
	CHECK_INT(ev[1].attr.config, ==, 0x82d0);
	CHECK(ev[0].group != ev[1].group);
	CHECK(ev[0].leader && ev[1].leader);
}

static void test_intel_sapphire_rapids(void)
{
	struct pmu_info i;
	struct pmu_event ev[PMU_MAX_EVENTS];

	fresh_root("GenuineIntel", false, "-1\n", false);
	intel_pmu("cpu", 4, true);
	pmu_detect_at(root, &i);
	CHECK_STR(i.kind, "intel-pebs");
	/* tools/perf/arch/x86/util/mem-events.c: perf_mem_events_intel_aux */
	CHECK_STR(i.detail, "{cpu/mem-loads-aux/,cpu/mem-loads,ldlat=30/}:P,cpu/mem-stores/P");
	CHECK_INT(parse(i.detail, ev), ==, 3);
	CHECK(ev[0].leader && ev[0].count_only);
	CHECK_INT(ev[0].attr.config, ==, 0x8203);	/* is_mem_loads_aux_event() */
	CHECK(!ev[1].leader && !ev[1].count_only && ev[1].precise_max);
	CHECK_INT(ev[1].group, ==, ev[0].group);
	CHECK_INT(ev[1].attr.config, ==, 0x1cd);
	CHECK(ev[2].leader && ev[2].group != ev[0].group);
}

static void test_intel_hybrid(void)
{
	fresh_root("GenuineIntel", false, "2\n", true);
	intel_pmu("cpu_core", 8, true);
	intel_pmu("cpu_atom", 10, false);
	detect("intel-pebs", "{cpu_core/mem-loads-aux/,cpu_core/mem-loads,ldlat=30/}:P,"
	       "cpu_core/mem-stores/P,cpu_atom/mem-loads,ldlat=30/P,cpu_atom/mem-stores/P");
}

static void test_amd_ibs(void)
{
	struct pmu_event ev[PMU_MAX_EVENTS];

	fresh_root("AuthenticAMD", false, "2\n", true);
	/* an AMD cpu PMU has no mem-loads; ibs_op is the memory sampler */
	put_file("4\n", "sys/bus/event_source/devices/cpu/type");
	put_file("11\n", "sys/bus/event_source/devices/ibs_op/type");
	put_file("config:19\n", "sys/bus/event_source/devices/ibs_op/format/cnt_ctl");
	detect("amd-ibs", "ibs_op//");
	CHECK_INT(parse("ibs_op//", ev), ==, 1);
	CHECK_INT(ev[0].attr.type, ==, 11);
	CHECK_INT(ev[0].attr.config, ==, 0);
	CHECK_INT(parse("ibs_op/cnt_ctl=1/", ev), ==, 1);
	CHECK_INT(ev[0].attr.config, ==, 1 << 19);
}

static void test_arm_spe(void)
{
	struct pmu_info i;
	struct pmu_event ev[PMU_MAX_EVENTS];

	fresh_root("arm", false, "2\n", true);
	/* drivers/perf/arm_spe_pmu.c: the format attributes */
	put_file("9\n", "sys/bus/event_source/devices/arm_spe_0/type");
	put_file("config:0\n", "sys/bus/event_source/devices/arm_spe_0/format/ts_enable");
	put_file("config:1\n", "sys/bus/event_source/devices/arm_spe_0/format/pa_enable");
	put_file("config:33\n", "sys/bus/event_source/devices/arm_spe_0/format/load_filter");
	put_file("config:34\n", "sys/bus/event_source/devices/arm_spe_0/format/store_filter");
	put_file("config2:0-11\n", "sys/bus/event_source/devices/arm_spe_0/format/min_latency");
	pmu_detect_at(root, &i);
	CHECK_STR(i.kind, "arm-spe");
	CHECK_STR(i.detail, "arm_spe_0/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1,min_latency=30/");
	CHECK_INT(parse(i.detail, ev), ==, 1);
	CHECK_INT(ev[0].attr.type, ==, 9);
	CHECK(ev[0].attr.config == (1ULL | 2ULL | 1ULL << 33 | 1ULL << 34));
	CHECK_INT(ev[0].attr.config2, ==, 30);
}

static void test_no_pmu(void)
{
	test_current = "VM without a PMU";
	fresh_root("AuthenticAMD", true, "2\n", true);
	detect("none", "no ibs_op PMU");
	detect("none", "hypervisor");

	test_current = "Intel VM without a cpu PMU";
	fresh_root("GenuineIntel", true, "2\n", true);
	detect("none", "no cpu PMU");

	test_current = "Intel without mem-loads";
	fresh_root("GenuineIntel", false, "2\n", true);
	put_file("4\n", "sys/bus/event_source/devices/cpu/type");
	detect("none", "no mem-loads event");

	test_current = "Arm without SPE";
	fresh_root("arm", false, "2\n", true);
	detect("none", "no arm_spe PMU");

	test_current = "paranoid without capabilities";
	fresh_root("GenuineIntel", false, "2\n", false);
	intel_pmu("cpu", 4, false);
	detect("none", "perf_event_paranoid=2");
	detect("none", "CAP_PERFMON");

	test_current = "paranoid 0 is enough";
	fresh_root("GenuineIntel", false, "0\n", false);
	intel_pmu("cpu", 4, false);
	detect("intel-pebs", "mem-loads");

	test_current = "no perf events at all";
	fresh_root("GenuineIntel", false, NULL, true);
	intel_pmu("cpu", 4, false);
	detect("none", "perf_event_paranoid");
}

static void test_parse_errors(void)
{
	struct pmu_event ev[PMU_MAX_EVENTS];
	char err[200];
	size_t n;

	fresh_root("GenuineIntel", false, "2\n", true);
	intel_pmu("cpu", 4, false);
	static const struct { const char *spec, *msg; } bad[] = {
		{ "nopmu/mem-loads/", "no PMU" },
		{ "cpu/nosuchterm/", "no event or format" },
		{ "cpu/mem-loads,ldlat=0x10000/", "does not fit" },
		{ "cpu/mem-loads/X", "modifier" },
		{ "cpu/mem-loads", "unterminated" },
		{ "{cpu/mem-loads/", "unterminated group" },
		{ "no-such-event", "unknown event" },
		{ "cpu/../x/", "bad term" },
		{ "", "no events" },
		{ "cpu/mem-loads/pppp", "too many" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		test_current = bad[i].spec;
		err[0] = '\0';
		CHECK_INT(pmu_events_parse(root, bad[i].spec, ev, PMU_MAX_EVENTS, &n, err, sizeof(err)),
			  ==, -EINVAL);
		if (!strstr(err, bad[i].msg))
			fprintf(stderr, "'%s': '%s'\n", bad[i].spec, err);
		CHECK(strstr(err, bad[i].msg) != NULL);
	}
	test_current = "software events";
	CHECK_INT(parse("page-faults", ev), ==, 1);
	CHECK_INT(ev[0].attr.type, ==, PERF_TYPE_SOFTWARE);
	CHECK_INT(ev[0].attr.config, ==, PERF_COUNT_SW_PAGE_FAULTS);
	CHECK_INT(parse("minor-faults:u,cpu/mem-stores/k", ev), ==, 2);
	CHECK(ev[0].attr.exclude_kernel && !ev[0].attr.exclude_user);
	CHECK(ev[1].attr.exclude_user && !ev[1].attr.exclude_kernel);
	CHECK_INT(parse("cpu/mem-loads/pp", ev), ==, 1);
	CHECK_INT(ev[0].attr.precise_ip, ==, 2);
	/* a lone aux event is an ordinary (sampling) event */
	CHECK_INT(parse("{cpu/mem-stores/}", ev), ==, 1);
	CHECK(!ev[0].count_only);
}

static void test_this_host(void)
{
	struct pmu_info i;

	CHECK_INT(pmu_detect(&i), ==, 0);
	CHECK(!strcmp(i.kind, "none") || !strcmp(i.kind, "intel-pebs") ||
	      !strcmp(i.kind, "amd-ibs") || !strcmp(i.kind, "arm-spe"));
	CHECK(i.detail[0] != '\0');
	printf("this host: %s: %s\n", i.kind, i.detail);
}

int main(void)
{
	char cmd[128];

	RUN(test_intel_skylake);
	RUN(test_intel_sapphire_rapids);
	RUN(test_intel_hybrid);
	RUN(test_amd_ibs);
	RUN(test_arm_spe);
	RUN(test_no_pmu);
	RUN(test_parse_errors);
	RUN(test_this_host);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_INT(system(cmd), ==, 0);
	return test_exit();
}
