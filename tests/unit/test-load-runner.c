// SPDX-License-Identifier: GPL-2.0
/* The runner's parts that need no workload: CPU lists and the report. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <string.h>

#include "../../load/load.h"
#include "test.h"
#include "util.h"

static void test_parse_cpus(void)
{
	int *all, *cpus = NULL;
	size_t nall, n = 0;
	char list[64];

	CHECK_INT(load_affinity_cpus(&all, &nall), ==, 0);
	CHECK(nall >= 1);

	snprintf(list, sizeof(list), "%d", all[0]);
	CHECK_INT(load_parse_cpus(list, &cpus, &n), ==, 0);
	CHECK(n == 1 && cpus[0] == all[0]);
	free(cpus);

	/* Duplicates and order do not matter. */
	snprintf(list, sizeof(list), "%d,%d-%d,%d", all[nall - 1], all[0], all[0], all[0]);
	CHECK_INT(load_parse_cpus(list, &cpus, &n), ==, 0);
	CHECK_INT(n, ==, nall > 1 ? 2 : 1);
	CHECK_INT(cpus[0], ==, all[0]);
	CHECK_INT(cpus[n - 1], ==, all[nall - 1]);
	free(cpus);

	CHECK_INT(load_parse_cpus("", &cpus, &n), ==, -EINVAL);
	CHECK_INT(load_parse_cpus("1-0", &cpus, &n), ==, -EINVAL);
	CHECK_INT(load_parse_cpus("x", &cpus, &n), ==, -EINVAL);
	CHECK_INT(load_parse_cpus("0-", &cpus, &n), ==, -EINVAL);
	CHECK_INT(load_parse_cpus("-1", &cpus, &n), ==, -EINVAL);
	CHECK_INT(load_parse_cpus("100000", &cpus, &n), ==, -EINVAL);
	/* CPU_SETSIZE - 1 is valid syntax, but not one we may run on here. */
	snprintf(list, sizeof(list), "%d", CPU_SETSIZE - 1);
	CHECK_INT(load_parse_cpus(list, &cpus, &n), ==, -ENXIO);
	free(all);
}

static void test_report(void)
{
	struct load_report *r = load_report_new();
	int cpus[] = { 0, 1, 2, 5, 7, 8 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	load_report_add_str(r, "workload", "workload", "x\"y\\z\n");
	load_report_add_u64(r, "ops", "ops", UINT64_MAX, NULL);
	load_report_add_double(r, "seconds", "measured", 1.5, "s");
	load_report_add_double(r, "none", NULL, NAN, NULL);
	load_report_add_bool(r, "interrupted", "interrupted", false);
	load_report_add_ints(r, "cpus", "CPUs", cpus, ARRAY_SIZE(cpus));
	load_report_add_metric(r, "ops_per_s", "rate", 1234567.25, "ops/s", true);

	f = open_memstream(&buf, &len);
	CHECK_INT(load_report_print(r, f, true), ==, 0);
	fclose(f);
	/* the one JSON writer's compact form (common/jsonw.c) */
	CHECK_STR(buf, "{\"workload\":\"x\\\"y\\\\z\\n\",\"ops\":18446744073709551615,"
		       "\"seconds\":1.5,\"none\":null,\"interrupted\":false,"
		       "\"cpus\":[0,1,2,5,7,8],\"metric\":\"ops_per_s\","
		       "\"value\":1234567.25,\"unit\":\"ops/s\",\"higher_is_better\":true}\n");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK_INT(load_report_print(r, f, false), ==, 0);
	fclose(f);
	/* People get labels, ranges and units; JSON-only keys stay out. */
	CHECK(strstr(buf, "CPUs") && strstr(buf, "0-2,5,7-8\n"));
	CHECK(strstr(buf, "1.500 s\n") && strstr(buf, "1234567.250 ops/s\n"));
	CHECK(!strstr(buf, "none") && !strstr(buf, "higher_is_better"));
	free(buf);
	load_report_free(r);

	CHECK_INT(load_report_print(NULL, stdout, true), ==, -ENOMEM);
}

int main(void)
{
	RUN(test_parse_cpus);
	RUN(test_report);
	return test_exit();
}
