// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm-test-helper: causes known numbers of kernel events for the
 * integration tests and prints what it did, one "key value" per line, so a
 * test can assert that the recording saw at least that much.
 *
 *   fork K        K children, each maps and unmaps memory (taking its
 *                 mmap_lock for write), then exits; prints "pid N" each
 *   exec K        K children exec this helper's "idle" command; prints "pid N"
 *   newpages N    writes N fresh pages of a tmpfs file: N LRU insertions
 *   activate N    writes N fresh tmpfs pages, reads each three times, on one
 *                 CPU whose LRU batches it drains: N mm_lru_activate
 *   pwrite N      pwrite()s 1 KiB at offset 0 of a tmpfs file N times
 *   dontneed N    writes a byte to an anonymous page and MADV_DONTNEEDs it,
 *                 N times, checking it reads back zero
 *   kfault N      N fresh pages faulted in from kernel mode (read() into
 *                 them); prints the range
 *   lockstorm MS  four threads fault in and zap one page for MS milliseconds:
 *                 its page table spinlock is contended all the time
 *   pingpong N    two processes on CPU 0 pass a byte back and forth N times
 *   yield N       two threads pinned to one CPU sched_yield() N times each;
 *                 prints their context switches from /proc
 *   waitsig       prints its pid, waits for SIGUSR1, then maps and unmaps
 *                 memory (so an mm older than the recorder takes its lock),
 *                 and exits on the next SIGUSR1
 *   bpfchurn MS   loads a two-instruction BPF program and frees it again and
 *                 again for MS milliseconds: each adds and removes a line of
 *                 /proc/kallsyms while the JIT is on; prints "visible 1" if
 *                 the program showed there, then "loads N"
 *   idle          sleeps briefly (the exec target)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int die(const char *what)
{
	fprintf(stderr, "mmhitm-test-helper: %s: %s\n", what, strerror(errno));
	return 1;
}

static int do_fork(long k)
{
	printf("parent %d\n", getpid());
	for (long i = 0; i < k; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return die("fork");
		if (pid == 0) {
			/* mmap/munmap take the child's own mmap_lock for write. */
			void *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p != MAP_FAILED) {
				memset(p, 1, 4096);
				munmap(p, 1 << 20);
			}
			usleep(200 * 1000);
			_exit(0);
		}
		printf("pid %d\n", pid);
	}
	fflush(stdout);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int do_exec(long k, const char *self)
{
	printf("parent %d\n", getpid());
	for (long i = 0; i < k; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return die("fork");
		if (pid == 0) {
			execl(self, "mmhitm-test-helper", "idle", (char *)NULL);
			_exit(127);
		}
		printf("pid %d\n", pid);
	}
	fflush(stdout);
	while (wait(NULL) > 0)
		;
	return 0;
}

static int tmpfs_file(void)
{
	char path[] = "/dev/shm/mmhitm-test-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static int do_newpages(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *buf = malloc(psz);
	int fd = tmpfs_file();

	if (fd < 0 || !buf)
		return die("tmpfs file");
	memset(buf, 0x5a, psz);
	for (long i = 0; i < n; i++)
		if (pwrite(fd, buf, psz, i * psz) != psz)
			return die("pwrite");
	printf("pages %ld\n", n);
	close(fd);
	free(buf);
	return 0;
}

/*
 * Drain this CPU's folio batches (lru_add, lru_activate, ...): mlock() of
 * a mapping not yet locked runs lru_add_drain() in mlock_vma_pages_range()
 * (mm/mlock.c, 5.18 on). Pinned to one CPU, that is every batch we filled.
 */
static int drain_this_cpu(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	p[0] = 1;
	if (mlock(p, psz) < 0 || munlock(p, psz) < 0) {
		munmap(p, psz);
		return -1;
	}
	return munmap(p, psz);
}

/*
 * Fresh pages read again: shmem's write left them referenced, so the next
 * read activates them (folio_mark_accessed). Every activation is traced
 * only if the folio was on the LRU, not still in a CPU's lru_add batch
 * (that one is marked active in the batch, without mm_lru_activate), and
 * the event fires when the lru_activate batch drains. So the helper stays
 * on one CPU and drains it after the writes and after the reads: each of
 * the N pages gives one mm_lru_activate before it exits, on any load.
 */
static int do_activate(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *buf = malloc(psz);
	int fd = tmpfs_file();
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (fd < 0 || !buf)
		return die("tmpfs file");
	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return die("sched_setaffinity");
	memset(buf, 0x3c, psz);
	for (long i = 0; i < n; i++)
		if (pwrite(fd, buf, psz, i * psz) != psz)
			return die("pwrite");
	if (drain_this_cpu() < 0)
		return die("mlock (to drain the LRU batches)");
	for (int pass = 0; pass < 3; pass++)
		for (long i = 0; i < n; i++)
			if (pread(fd, buf, psz, i * psz) != psz)
				return die("pread");
	if (drain_this_cpu() < 0)
		return die("mlock (to drain the LRU batches)");
	printf("pages %ld\n", n);
	close(fd);
	free(buf);
	return 0;
}

static int do_pwrite(long n)
{
	char buf[1024];
	struct stat st;
	int fd = tmpfs_file();

	if (fd < 0)
		return die("tmpfs file");
	memset(buf, 0xa5, sizeof(buf));
	for (long i = 0; i < n; i++)
		if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
			return die("pwrite");
	if (fstat(fd, &st) < 0 || st.st_size != (off_t)sizeof(buf)) {
		fprintf(stderr, "file grew to %lld bytes\n", (long long)st.st_size);
		return 1;
	}
	printf("pwrites %ld\n", n);
	close(fd);
	return 0;
}

static int do_dontneed(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *map = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *p = map;

	if (map == MAP_FAILED)
		return die("mmap");
	for (long i = 0; i < n; i++) {
		p[0] = 1;
		if (madvise(map, psz, MADV_DONTNEED) < 0)
			return die("madvise");
		if (p[0] != 0) {
			fprintf(stderr, "page did not read zero after MADV_DONTNEED\n");
			return 1;
		}
	}
	printf("zaps %ld\n", n);
	munmap(map, psz);
	return 0;
}

/* N pages faulted in by the kernel (read() from /dev/zero into them), one
 * fault each: small pages only. */
static int do_kfault(long n)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/dev/zero", O_RDONLY);

	if (p == MAP_FAILED || fd < 0)
		return die("mmap or /dev/zero");
	madvise(p, n * psz, MADV_NOHUGEPAGE);
	printf("range %lu %lu\n", (unsigned long)p, (unsigned long)(p + n * psz));
	for (long i = 0; i < n; i++)
		if (read(fd, p + i * psz, psz) != psz)
			return die("read");
	printf("faults %ld\n", n);
	close(fd);
	munmap(p, n * psz);
	return 0;
}

/* Two processes on one CPU hand a byte back and forth N times: every
 * switch between them changes mm. */
static int do_pingpong(long n)
{
	int ab[2], ba[2];
	cpu_set_t set;
	pid_t pid;
	char c = 0;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (pipe(ab) < 0 || pipe(ba) < 0)
		return die("pipe");
	sched_setaffinity(0, sizeof(set), &set);
	pid = fork();
	if (pid < 0)
		return die("fork");
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (long i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return die("pipe ping-pong");
	waitpid(pid, NULL, 0);
	printf("exchanges %ld\n", n);
	return 0;
}

/* Four threads fault in and zap the same page over and over: its page
 * table lock (a spinlock) is contended all the time (a lock storm). */
static char *storm_page;
static volatile int storm_stop;

static void *stormer(void *arg)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((long)arg % sysconf(_SC_NPROCESSORS_ONLN), &set);
	sched_setaffinity(0, sizeof(set), &set);
	while (!storm_stop) {
		storm_page[0] = 1;
		madvise(storm_page, 4096, MADV_DONTNEED);
	}
	return NULL;
}

static int do_lockstorm(long ms)
{
	pthread_t t[4];

	storm_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (storm_page == MAP_FAILED)
		return die("mmap");
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, stormer, (void *)i) != 0)
			return die("pthread_create");
	usleep(ms * 1000);
	storm_stop = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("stormed %ld ms\n", ms);
	return 0;
}

static long yield_n;
static pid_t yield_tids[2];

static void *yielder(void *arg)
{
	long idx = (long)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
	yield_tids[idx] = (pid_t)syscall(SYS_gettid);
	for (long i = 0; i < yield_n; i++)
		sched_yield();
	return NULL;
}

static long task_switches(pid_t tid)
{
	char path[64], line[128];
	long total = 0, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
			total += v;
	fclose(f);
	return total;
}

/* Switch counts are read just before each thread ends, via a barrier. */
static pthread_barrier_t yield_done;
static long yield_switches[2];

static void *yielder_counted(void *arg)
{
	long idx = (long)arg;

	yielder(arg);
	pthread_barrier_wait(&yield_done);
	yield_switches[idx] = task_switches(yield_tids[idx]);
	return NULL;
}

static int do_yield(long n)
{
	pthread_t t[2];

	yield_n = n;
	pthread_barrier_init(&yield_done, NULL, 2);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, yielder_counted, (void *)i) != 0)
			return die("pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("switches %ld\n", yield_switches[0] + yield_switches[1]);
	return 0;
}

/* n sched_rr_get_interval() calls pinned to cpu: an event nothing else makes. */
static int rrcalls(int cpu, long n)
{
	cpu_set_t set;
	struct timespec ts;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return die("sched_setaffinity");
	for (long i = 0; i < n; i++)
		syscall(SYS_sched_rr_get_interval, 0, &ts);
	printf("rrcalls %ld on cpu %d\n", n, sched_getcpu());
	return 0;
}

#define CHURN_NAME "mmhitm_churn"

/* "r0 = 0; exit": a socket filter that takes nothing. */
static int churn_load(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uintptr_t)"GPL";
	snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", CHURN_NAME);
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
}

static bool in_kallsyms(const char *needle)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

static int do_bpfchurn(long ms)
{
	struct timespec now, end;
	long loads = 0;
	int fd;

	fd = churn_load();
	if (fd < 0)
		return die("bpf(BPF_PROG_LOAD)");
	printf("visible %d\n", in_kallsyms("_" CHURN_NAME));
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += ms % 1000 * 1000000;
	do {
		fd = churn_load();
		if (fd < 0)
			return die("bpf(BPF_PROG_LOAD)");
		close(fd);
		loads++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	printf("loads %ld\n", loads);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: mmhitm-test-helper fork|exec|newpages|pwrite|dontneed|yield N | rrcalls CPU N | idle\n");
		return 2;
	}
	if (!strcmp(argv[1], "fork"))
		return do_fork(n);
	if (!strcmp(argv[1], "exec")) {
		/* The real path: comm after exec is its basename. */
		char self[4096];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (len < 0)
			return die("readlink");
		self[len] = '\0';
		return do_exec(n, self);
	}
	if (!strcmp(argv[1], "newpages"))
		return do_newpages(n);
	if (!strcmp(argv[1], "activate"))
		return do_activate(n);
	if (!strcmp(argv[1], "pwrite"))
		return do_pwrite(n);
	if (!strcmp(argv[1], "dontneed"))
		return do_dontneed(n);
	if (!strcmp(argv[1], "lockstorm"))
		return do_lockstorm(n);
	if (!strcmp(argv[1], "pingpong"))
		return do_pingpong(n);
	if (!strcmp(argv[1], "kfault"))
		return do_kfault(n);
	if (!strcmp(argv[1], "yield"))
		return do_yield(n);
	if (!strcmp(argv[1], "waitsig")) {
		sigset_t set;
		int sig;
		void *p;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("pid %d\n", getpid());
		sigwait(&set, &sig);
		p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return die("mmap");
		munmap(p, 1 << 20);
		/* Stay until told, so the recorder can look us up. */
		sigwait(&set, &sig);
		return 0;
	}
	if (!strcmp(argv[1], "rrcalls") && argc > 3)
		return rrcalls((int)n, strtol(argv[3], NULL, 10));
	if (!strcmp(argv[1], "bpfchurn"))
		return do_bpfchurn(n);
	if (!strcmp(argv[1], "idle")) {
		usleep(200 * 1000);
		return 0;
	}
	fprintf(stderr, "mmhitm-test-helper: unknown command %s\n", argv[1]);
	return 2;
}
