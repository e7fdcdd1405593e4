/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITMD_BOOT_H
#define MMHITMD_BOOT_H

#include <sqlite3.h>
#include <stdint.h>

#include "pmu.h"

/* Who and what this host runs: the identity of one boot. */
struct boot_info {
	char machine_id[64];
	char hostname[256];
	char boot_uuid[64];
	char release[128];
	char version[256];
	char arch[32];
	char build_id[96];	/* hex, "" if unreadable */
	int64_t boot_time_ns;
	int cpus_online;
	int cpus_possible;
	int cache_line_size;
	int page_size;
	struct pmu_info pmu;
	char lru_gen[8];	/* "on", "off", "absent" */
	char lru_gen_features[32];
	char btf[128];		/* "vmlinux" or why not */
};

int boot_info_collect(struct boot_info *ret);

/* Parses the GNU build-id out of ELF notes (/sys/kernel/notes). */
int build_id_from_notes(const void *notes, size_t len, char *buf, size_t buflen);

/*
 * Inserts the host and the boot, or finds them (a daemon restart within
 * one boot) and refreshes the boot's description. Inside the caller's txn.
 */
int boot_store(sqlite3 *db, const struct boot_info *b, int64_t now_ns, int64_t *ret_boot_id);

#endif
