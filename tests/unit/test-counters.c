// SPDX-License-Identifier: GPL-2.0
/*
 * daemon/counters.c under CPU hotplug: a CPU that comes online is counted
 * from then on, continuous (a new generation of openings) and windowed
 * (the next arming), and the totals never go back (nor are they scaled:
 * a tracepoint runs all the time it is enabled). The online list is a
 * file the test writes, so CPU 1 "comes online" without taking a real CPU
 * away from anyone; the real thing runs under QEMU (tests/kernels).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <tracefs.h>
#include <unistd.h>

#include "counters.h"
#include "log.h"
#include "test.h"

/* A system call nothing else on the machine makes. */
#define EVENT "syscalls:sys_enter_sched_rr_get_interval"

static char online[64];

static void set_online(const char *list)
{
	FILE *f = fopen(online, "we");

	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "%s\n", list);
	fclose(f);
}

/* n calls of the event's system call, on cpu. */
static void calls_on(int cpu, int n)
{
	cpu_set_t set;
	struct timespec ts;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_INT(sched_setaffinity(0, sizeof(set), &set), ==, 0);
	for (int i = 0; i < n; i++)
		syscall(SYS_sched_rr_get_interval, 0, &ts);
}

static uint64_t total(struct counters *c)
{
	uint64_t v = 0;

	CHECK_INT(counters_read(c, &v), ==, 0);
	return v;
}

static void test_continuous(void)
{
	struct event_status_list status = {};
	struct counters *c;

	set_online("0");
	c = counters_new_online(true, online);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_INT(counters_add(c, EVENT, &status), ==, 0);
	CHECK_INT(counters_count(c), ==, 1);

	calls_on(1, 1000);	/* not online "yet": not counted */
	calls_on(0, 500);
	CHECK_INT(total(c), ==, 500);
	CHECK_INT(counters_refresh_cpus(c), ==, 0);	/* nothing changed */

	set_online("0-1");
	CHECK_INT(counters_refresh_cpus(c), ==, 1);
	calls_on(1, 700);
	calls_on(0, 300);
	CHECK_INT(total(c), ==, 1500);
	CHECK_INT(counters_refresh_cpus(c), ==, 0);
	calls_on(1, 11);
	CHECK_INT(total(c), ==, 1511);
	{
		/* Tracepoints never multiplex: counted all the time enabled,
		 * summed over both generations' CPUs. */
		struct counter_total t = {};

		CHECK_INT(counters_read_totals(c, &t), ==, 0);
		CHECK_INT(t.count, ==, 1511);
		CHECK(t.ena > 0);
		CHECK_INT(t.run, ==, t.ena);
	}
	counters_free(c);
	event_status_list_done(&status);
}

static void test_windowed(void)
{
	struct event_status_list status = {};
	struct counters *c;

	set_online("0");
	c = counters_new_online(false, online);
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_INT(counters_add(c, EVENT, &status), ==, 0);
	CHECK_INT(counters_arm(c), ==, 0);
	calls_on(1, 400);
	calls_on(0, 40);
	CHECK_INT(total(c), ==, 40);
	counters_disarm(c);

	/* Online between windows: the next arming counts it. */
	set_online("0-1");
	CHECK_INT(counters_refresh_cpus(c), ==, 1);
	CHECK_INT(counters_arm(c), ==, 0);
	calls_on(1, 400);
	calls_on(0, 40);
	CHECK_INT(total(c), ==, 440);
	counters_disarm(c);

	/* Online during a window: counted from then on. */
	set_online("0");
	CHECK_INT(counters_arm(c), ==, 0);
	calls_on(1, 100);
	set_online("0-1");
	CHECK_INT(counters_refresh_cpus(c), ==, 1);
	calls_on(1, 60);
	CHECK_INT(total(c), ==, 60);
	counters_disarm(c);
	counters_free(c);
	event_status_list_done(&status);
}

int main(void)
{
	struct event_status_list status = {};
	struct counters *probe;
	int fd;

	log_set_max_level(LOG_CRIT);
	if (geteuid() != 0)
		SKIP("needs root for system-wide perf counting of tracepoints");
	if (!tracefs_dir())
		SKIP("no tracefs");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP("needs two online CPUs");
	probe = counters_new(true);
	if (!probe || counters_add(probe, EVENT, &status) < 0 || counters_count(probe) != 1)
		SKIP("cannot count %s here (%s)", EVENT, status.n ? status.v[0].detail : "?");
	counters_free(probe);
	event_status_list_done(&status);

	snprintf(online, sizeof(online), "/tmp/mmhitm-test-counters-%d", getpid());
	fd = open(online, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	RUN(test_continuous);
	RUN(test_windowed);
	unlink(online);
	return test_exit();
}
