/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_BUNDLE_H
#define MMHITM_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/*
 * A recording bundle: what `mmhitm record` packs on a host without
 * mmhitmd so that `mmhitm import BUNDLE` on any machine types the lines as
 * an import on the recording host would. One gzip-compressed tar (ustar,
 * so `tar tzf` lists it), its first member a text MANIFEST:
 *
 *   mmhitm-bundle 1
 *   hostname NAME / kernel_release REL / kernel_build_id HEX / boot_id UUID
 *                                  ("-": not known; import takes the perf.data's)
 *   vmemmap_base 0x... / page_offset_base 0x... / layout_source HOW
 *   sampler WHAT / created TIME
 *   marker SYMBOL / patches P1 carries, P2 lacks, ...   (with record --patches)
 *   file NAME BYTES CRC32          one line per member that follows
 *
 * and then its members: perf.data (the samples), kallsyms (the lines of
 * the recording boot's /proc/kallsyms the samples need), btf (its
 * /sys/kernel/btf/vmlinux). A member the
 * manifest does not list, a size or CRC-32 that disagrees, a truncated or
 * corrupt stream (gzip's own CRC): the bundle is refused whole.
 */

#define BUNDLE_VERSION	1
#define BUNDLE_MAX_FILES 4
#define BUNDLE_MAX_MARKERS 16

struct bundle_manifest {
	char hostname[256], release[256], build_id[128], boot_id[64];
	char sampler[256], created[32];
	uint64_t vmemmap_base, page_offset;
	char layout_source[64];		/* how the bases were read */
	/* record --patches: the map's marker symbols this kernel has, and the
	 * state the map gives each path ("P1 carries"), for import to show */
	char markers[BUNDLE_MAX_MARKERS][64];
	size_t nr_markers;
	char patches[160];
};

struct bundle_member {
	const char *name;	/* "perf.data", "kallsyms", "btf" */
	const char *path;	/* where it is read from (write) or was extracted to */
};

/* Writes out (through out.tmp, renamed when whole): the manifest, then files[0..n). */
int bundle_write(const char *out, const struct bundle_manifest *m,
		 const struct bundle_member *files, size_t n);

/* 1 when path starts as a gzip stream (a bundle, or nothing mmhitm reads), 0 not, -errno. */
int bundle_sniff(const char *path);

/*
 * Extracts path into dir (which exists and is empty), checking every
 * member against the manifest: 0 with *m filled, or -errno with a line in
 * err saying what is wrong ("truncated", "kallsyms: 123 bytes, the manifest
 * says 456").
 */
int bundle_extract(const char *path, const char *dir, struct bundle_manifest *m,
		   char *err, size_t errlen);

/*
 * The running kernel's memory-map bases, as an import on this host reads
 * them (ks: its /proc/kallsyms, loaded; from its variables through
 * /proc/kcore, or the fixed x86_64 layout
 * where the kernel has no such variables): 0 with *source saying which,
 * or -errno.
 */
int host_memory_bases(const struct kallsyms *ks, uint64_t *vmemmap_base, uint64_t *page_offset,
		      const char **source);

/*
 * What record and import take for a recorded boot: a memory-map base is a
 * kernel address, 1 GiB-aligned (KASLR places both regions at PUD
 * granularity); a boot id is /proc/sys/kernel/random/boot_id's UUID.
 */
bool kernel_base_valid(uint64_t v);
bool boot_id_valid(const char *s);

/* Removes the files of dir (no subdirectories), then dir. */
void bundle_remove_dir(const char *dir);

#endif
