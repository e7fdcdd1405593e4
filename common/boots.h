/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_BOOTS_H
#define MMHITM_BOOTS_H

/*
 * The one writer of the hosts and boots tables (schema/001). A live boot
 * (mmhitmd) is created once and refreshed on every start of the daemon in
 * that boot; an imported boot (mmhitm import) is created once, and a
 * second import of the same content is refused with -EEXIST.
 */

#include <sqlite3.h>
#include <stdint.h>

/* Strings may be NULL unless said otherwise; 0 means unknown for numbers. */
struct boot_row {
	const char *machine_id;		/* hosts.machine_id; required */
	const char *hostname;		/* required */
	const char *boot_uuid;		/* required: unique per host */
	const char *source;		/* "live" or "import"; required */
	int64_t boot_time_ns;		/* wall clock of the boot */
	int64_t first_seen_ns, last_seen_ns;
	const char *kernel_release, *kernel_version, *kernel_build_id, *arch;
	int nr_cpus_online, nr_cpus_possible, cache_line_size, page_size;
	const char *pmu_kind, *pmu_detail;	/* pmu_kind required */
	const char *lru_gen, *lru_gen_features;	/* lru_gen NULL: "unknown" */
	const char *btf;
};

/* Inserts the host or renames it; its host_id in *ret. 0 or -errno (logged). */
int host_store(sqlite3 *db, const char *machine_id, const char *hostname, int64_t *ret);

/*
 * Stores the boot and its host; its boot_id in *ret. A live boot seen
 * again keeps its first_seen_ns and takes the new last_seen_ns, CPU count,
 * PMU and lru_gen state (they change at run time). An imported boot seen
 * again is -EEXIST with *ret set to the existing boot. 0 or -errno (logged,
 * except -EEXIST: the caller says what was imported twice).
 */
int boot_row_store(sqlite3 *db, const struct boot_row *b, int64_t *ret);

#endif
