// SPDX-License-Identifier: GPL-2.0
/*
 * The trace.dat import on arbitrary bytes: sniffed, then both passes
 * (every buffer, the counting, the learning sources' filters and
 * decoding, the learner) as mmhitm import runs them, minus the database.
 * The bytes go through a memfd because libtracecmd reads descriptors.
 * libtracecmd itself is not instrumented: what this finds is in our code,
 * or a file that crashes libtracecmd outside the child that reads it
 * first (import-tracedat.c: check_in_child). Seeded from the real
 * trace.dat fixtures (fuzz-tracedat.seeds).
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "import-tracedat.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * libtracecmd allocates what a corrupt size field says. Outside the
 * sanitizers the checking child's RLIMIT_AS bounds it (import-tracedat.c:
 * bound_child); here, where the shadow memory rules that out, ASan refuses
 * any one allocation over the same 1 GiB, before libFuzzer's malloc hook
 * (-malloc_limit_mb, run-fuzzer's 2048) would call it an out-of-memory:
 * NULL is libtracecmd's answer to handle, not a finding.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=1024";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;

	if (fd < 0) {
		log_set_max_level(LOG_CRIT);
		fd = memfd_create("fuzz-tracedat", MFD_CLOEXEC);
		if (fd < 0)
			abort();
	}
	/* what cmd-import.c dispatches on */
	if (!tracedat_magic(data, size))
		return 0;
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	tracedat_scan_fd(fd);
	return 0;
}
