// SPDX-License-Identifier: GPL-2.0
/*
 * Parsers of /proc/vmstat, /proc/stat and /sys/kernel/debug/lru_gen, on
 * text in the kernel's formats (lru_gen: mm/vmscan.c lru_gen_seq_show(),
 * "memcg %5hu %s", " node %5d", then " %10lu %10u" and " %10lu%c" per type
 * for each generation from min_seq to max_seq), plus the live files.
 */
#include <errno.h>

#include "log.h"
#include "recorder.h"
#include "sysstat.h"
#include "test.h"
#include "util.h"

static void test_vmstat(void)
{
	struct kv_list l = {};

	CHECK_INT(vmstat_parse("nr_free_pages 123\npgactivate 9876543210\nbogus\npgfault 7\n", &l), ==, 0);
	CHECK_INT(l.n, ==, 3);
	CHECK_STR(l.v[1].name, "pgactivate");
	CHECK_INT(l.v[1].value, ==, 9876543210LL);
	CHECK(kv_list_match(&l, 2, "pgfault") == &l.v[2]);
	CHECK(kv_list_match(&l, 0, "pgfault") == &l.v[2]);	/* hint wrong: still found */
	CHECK(kv_list_match(&l, 0, "nosuch") == NULL);
	CHECK_INT(vmstat_parse("", &l), ==, -EBADMSG);
	free(l.v);
}

static void test_procstat(void)
{
	uint64_t ctxt = 0, forks = 0;

	CHECK_INT(procstat_parse("cpu  1 2 3\nintr 5\nctxt 424242\nbtime 1700000000\nprocesses 31337\n",
				 &ctxt, &forks), ==, 0);
	CHECK_INT(ctxt, ==, 424242);
	CHECK_INT(forks, ==, 31337);
	CHECK_INT(procstat_parse("cpu 1\n", &ctxt, &forks), ==, -EBADMSG);
}

/* The host's busy time: all but idle and iowait; guest is inside user. */
static void test_procstat_cpu(void)
{
	uint64_t busy = 0, total = 0;

	/* this build VM's line, 30 s apart: 0.18 % busy */
	CHECK_INT(procstat_cpu_parse("cpu  1782922 561314 2844458 7539012 30755 0 14254 0 0 0\n"
				     "cpu0 1 2 3 4\n", &busy, &total), ==, 0);
	CHECK_INT(busy, ==, 1782922 + 561314 + 2844458 + 14254);
	CHECK_INT(total, ==, 1782922ULL + 561314 + 2844458 + 7539012 + 30755 + 14254);
	/* steal is busy from the guest's side; guest and guest_nice not twice */
	CHECK_INT(procstat_cpu_parse("cpu  10 0 5 100 20 1 2 7 10 3\n", &busy, &total), ==, 0);
	CHECK_INT(busy, ==, 10 + 5 + 1 + 2 + 7);
	CHECK_INT(total, ==, 10 + 5 + 100 + 20 + 1 + 2 + 7);
	/* an old kernel's four fields */
	CHECK_INT(procstat_cpu_parse("cpu 4 0 6 90\n", &busy, &total), ==, 0);
	CHECK_INT(busy, ==, 10);
	CHECK_INT(total, ==, 100);
	CHECK_INT(procstat_cpu_parse("cpu 4 0 6\n", &busy, &total), ==, -EBADMSG);
	CHECK_INT(procstat_cpu_parse("intr 5\ncpu 4 0 6 90\n", &busy, &total), ==, -EBADMSG);
	CHECK_INT(procstat_cpu_parse("cpu0 4 0 6 90\n", &busy, &total), ==, -EBADMSG);
}

static void test_lru_gen(void)
{
	struct sys_snapshot s = {};
	/* Two memcgs; the second on two nodes (memcg line only at the first). */
	const char *text =
		"memcg     1 /\n"
		" node     0\n"
		"          5      71424       1234        456 \n"
		"          6      12000          0         78 \n"
		"          7         40        100         12 \n"
		"memcg    43 /system.slice/mmhitm-load.scope\n"
		" node     0\n"
		"         11       2000      52428          0 \n"
		"         12        100        100          1 \n"
		" node     1\n"
		"          3       9000          1          1 \n"
		"          4       8000          2          2 \n"
		"          5       7000          3          3 \n"
		"          6       6000          4          4 \n";

	CHECK_INT(lru_gen_parse(text, &s), ==, 0);
	CHECK_INT(s.n_lru_gen, ==, 3);
	CHECK_INT(s.lru_gen[0].memcg_id, ==, 1);
	CHECK_STR(s.lru_gen[0].memcg_path, "/");
	CHECK_INT(s.lru_gen[0].min_seq, ==, 5);
	CHECK_INT(s.lru_gen[0].max_seq, ==, 7);
	CHECK_INT(s.lru_gen[1].memcg_id, ==, 43);
	CHECK_STR(s.lru_gen[1].memcg_path, "/system.slice/mmhitm-load.scope");
	CHECK_INT(s.lru_gen[1].node, ==, 0);
	CHECK_INT(s.lru_gen[1].max_seq, ==, 12);
	CHECK_INT(s.lru_gen[2].node, ==, 1);
	CHECK_INT(s.lru_gen[2].memcg_id, ==, 43);
	CHECK_INT(s.lru_gen[2].min_seq, ==, 3);
	CHECK_INT(s.lru_gen[2].max_seq, ==, 6);

	/* Dying memcgs (id 0, their old paths; systemd leaves many) are left
	 * out; a kernel without memcg lists one id-0 memcg with no path. */
	CHECK_INT(lru_gen_parse("memcg     1 /\n node     0\n          5      71424       1234        456 \n"
				"memcg     0 /system.slice/systemd-sysctl.service\n node     0\n"
				"          2        100          0          0 \n"
				"memcg     0 /system.slice/systemd-modules-load.service\n node     0\n"
				"          2        100          0          0 \n", &s), ==, 0);
	CHECK_INT(s.n_lru_gen, ==, 1);
	CHECK_INT(s.lru_gen[0].memcg_id, ==, 1);
	CHECK_INT(lru_gen_parse("memcg     0 \n node     0\n          7        100          3          4 \n", &s), ==, 0);
	CHECK_INT(s.n_lru_gen, ==, 1);
	CHECK_INT(s.lru_gen[0].max_seq, ==, 7);

	/* Malformed: generations before any node, a node before any memcg. */
	CHECK_INT(lru_gen_parse("          5      71424       1234        456\n", &s), ==, -EBADMSG);
	CHECK_INT(lru_gen_parse(" node     0\n", &s), ==, -EBADMSG);
	CHECK_INT(lru_gen_parse("garbage here\n", &s), ==, -EBADMSG);
	CHECK_INT(lru_gen_parse("", &s), ==, 0);
	CHECK_INT(s.n_lru_gen, ==, 0);
	sys_snapshot_done(&s);
}

/* The free counters, in the kernel's formats (arch/x86/kernel/irq.c,
 * kernel/sched/stats.c version 15, kernel/locking/lockdep_proc.c). */
static void test_free_counters(void)
{
	static const char interrupts[] =
		"            CPU0       CPU1       CPU2\n"
		"   0:         40          0          0   IO-APIC   2-edge      timer\n"
		" NMI:          0          0          0   Non-maskable interrupts\n"
		" TLB:      16173      14663          7   TLB shootdowns\n"
		" TRM:          0          0          0   Thermal event interrupts\n";
	static const char schedstat[] =
		"version 15\ntimestamp 4295892366\n"
		"cpu0 3 0 1000 200 500 100 123456 7890 40\n"
		"domain0 3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36\n"
		"cpu1 4 0 2000 300 700 200 223456 8890 50\n";
	static const char lock_stat[] =
		"lock_stat version 0.4\n"
		"-----\n"
		"                              class name    con-bounces    contentions   waittime-min\n"
		"                     &lruvec->lru_lock:          1200           5000           0.10\n"
		"                     &lruvec->lru_lock            1100          [<ffffffff81234567>] folio_lruvec_lock_irqsave+0x30/0x50\n"
		"                          &mm->mmap_lock:           10             20           0.05\n"
		"                  &pgdat->lru_lock#2:             3              7           0.05\n";
	struct sys_snapshot s = {};

	CHECK_INT(interrupts_tlb_parse(interrupts, &s), ==, 0);
	CHECK_INT(s.free[FREE_TLB_SHOOTDOWNS], ==, 16173 + 14663 + 7);
	CHECK(s.free_present & (1u << FREE_TLB_SHOOTDOWNS));
	CHECK_INT(schedstat_parse(schedstat, &s), ==, 0);
	CHECK_INT(s.free[FREE_SCHED_YIELD], ==, 7);
	CHECK_INT(s.free[FREE_SCHEDULE], ==, 3000);
	CHECK_INT(s.free[FREE_TTWU], ==, 1200);
	CHECK_INT(lock_stat_parse(lock_stat, &s), ==, 0);
	/* lruvec's lock and a subclass of the older pgdat one; not mmap_lock,
	 * not the call-site lines */
	CHECK_INT(s.free[FREE_LRU_LOCK_CONTENTIONS], ==, 5007);
	CHECK_INT(interrupts_tlb_parse("  0: 1 2 timer\n", &s), ==, -EBADMSG);
	CHECK_INT(schedstat_parse("version 15\n", &s), ==, -EBADMSG);
	CHECK_STR(free_counter_name(FREE_TLB_SHOOTDOWNS), "free:tlb_shootdowns");
}

/* A path's free counter (paths.conf `free`): a line's number or a row's sum. */
static void test_free_fields(void)
{
	static const char interrupts[] =
		"            CPU0       CPU1\n"
		"   0:         40          0   IO-APIC   2-edge      timer\n"
		" NMI:          3          4   Non-maskable interrupts\n"
		" TLB:         10         20   TLB shootdowns\n";
	static const char vmstat[] = "nr_free_pages 1234\npgactivate 77\npgactivate_x 5\npgdeactivate 9\n";
	uint64_t v = 0;

	CHECK_INT(interrupts_row_parse(interrupts, "TLB", &v), ==, 0);
	CHECK_INT(v, ==, 30);
	CHECK_INT(interrupts_row_parse(interrupts, "NMI", &v), ==, 0);
	CHECK_INT(v, ==, 7);
	CHECK_INT(interrupts_row_parse(interrupts, "0", &v), ==, 0);
	CHECK_INT(v, ==, 40);	/* not the "2" of "2-edge" */
	CHECK_INT(interrupts_row_parse(interrupts, "TL", &v), ==, -EBADMSG);
	CHECK_INT(interrupts_row_parse(interrupts, "CPU0", &v), ==, -EBADMSG);
	CHECK_INT(proc_line_parse(vmstat, "pgactivate", &v), ==, 0);
	CHECK_INT(v, ==, 77);
	CHECK_INT(proc_line_parse(vmstat, "nr_free_pages", &v), ==, 0);	/* the first line */
	CHECK_INT(v, ==, 1234);
	CHECK_INT(proc_line_parse(vmstat, "activate", &v), ==, -EBADMSG);
	CHECK_INT(proc_line_parse(vmstat, "pgactivat", &v), ==, -EBADMSG);
	CHECK_INT(proc_line_parse("intr 5 1 2\n", "intr", &v), ==, 0);	/* /proc/stat: the first number */
	CHECK_INT(v, ==, 5);
	CHECK_INT(proc_line_parse("ctxt x\n", "ctxt", &v), ==, -EBADMSG);
}

static void test_live(void)
{
	struct sys_snapshot a = {}, b = {};

	CHECK_INT(sys_snapshot_take(&a, 0), ==, 0);
	CHECK(kv_list_match(&a.vmstat, 0, "pgfault") != NULL);
	CHECK_INT(a.ctxt, >, 0);
	CHECK_INT(a.lru_gen_read, ==, -ENOENT);	/* not asked for */
	CHECK_INT(sys_snapshot_take(&b, 0), ==, 0);
	CHECK_INT(b.ctxt, >=, a.ctxt);
	CHECK_INT(b.forks, >=, a.forks);
	sys_snapshot_done(&a);
	sys_snapshot_done(&b);
}

static void test_interval_math(void)
{
	const int64_t m = 60 * NSEC_PER_SEC;

	/* Boundaries are clock multiples, strictly after t. */
	CHECK_INT(interval_boundary_after(0, m), ==, m);
	CHECK_INT(interval_boundary_after(m - 1, m), ==, m);
	CHECK_INT(interval_boundary_after(m, m), ==, 2 * m);
	CHECK_INT(interval_boundary_after(1795987725008702238LL, 5 * NSEC_PER_SEC) % (5 * NSEC_PER_SEC), ==, 0);
	CHECK_INT(counter_delta(10, 25), ==, 15);
	CHECK_INT(counter_delta(25, 7), ==, 7);	/* reset: what it counted since */

	/* dropped_intervals: slots missed, flushing a little late or not. */
	CHECK_INT(interval_slots_missed(10 * m, 11 * m, m), ==, 0);
	CHECK_INT(interval_slots_missed(10 * m + 3, 11 * m + 2, m), ==, 0);
	CHECK_INT(interval_slots_missed(10 * m, 13 * m, m), ==, 2);
	CHECK_INT(interval_slots_missed(10 * m + m / 5, 13 * m + m / 20, m), ==, 2);
	CHECK_INT(interval_slots_missed(10 * m + m * 6 / 10, 12 * m, m), ==, 1);	/* first, folded */
	CHECK_INT(interval_slots_missed(10 * m + m / 2, 11 * m, m), ==, 0);	/* after SIGUSR2 */
	CHECK_INT(interval_slots_missed(10 * m, 10 * m + m / 2, m), ==, 0);	/* SIGUSR2 */
	CHECK_INT(interval_slots_missed(11 * m, 10 * m, m), ==, 0);		/* clock went back */

	/* Deltas over any split of a run add up to the run's total. */
	{
		uint64_t readings[] = { 100, 130, 130, 990, 1000, 4000 }, sum = 0;

		for (size_t i = 1; i < sizeof(readings) / sizeof(readings[0]); i++)
			sum += counter_delta(readings[i - 1], readings[i]);
		CHECK_INT(sum, ==, 4000 - 100);
	}
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	RUN(test_vmstat);
	RUN(test_procstat);
	RUN(test_procstat_cpu);
	RUN(test_lru_gen);
	RUN(test_free_counters);
	RUN(test_free_fields);
	RUN(test_live);
	RUN(test_interval_math);
	return test_exit();
}
