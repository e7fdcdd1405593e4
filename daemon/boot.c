// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "boot.h"
#include "boots.h"
#include "db.h"
#include "log.h"
#include "util.h"

#define NT_GNU_BUILD_ID 3

int build_id_from_notes(const void *notes, size_t len, char *buf, size_t buflen)
{
	const unsigned char *p = notes, *end = p + len;

	/* Elf_Nhdr: namesz, descsz, type; name and desc padded to 4. */
	while (end - p >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_pad, desc_pad;

		memcpy(&namesz, p, 4);
		memcpy(&descsz, p + 4, 4);
		memcpy(&type, p + 8, 4);
		p += 12;
		name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		if (name_pad > (size_t)(end - p) || desc_pad > (size_t)(end - p - name_pad))
			return -EBADMSG;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p, "GNU", 4) == 0) {
			const unsigned char *d = p + name_pad;

			if (descsz * 2 + 1 > buflen)
				return -ENOBUFS;
			for (uint32_t i = 0; i < descsz; i++)
				snprintf(buf + 2 * i, 3, "%02x", d[i]);
			return 0;
		}
		p += name_pad + desc_pad;
	}
	return -ENODATA;
}

static void read_build_id(char *buf, size_t len)
{
	_cleanup_close_ int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	unsigned char notes[4096];
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return;
	n = read(fd, notes, sizeof(notes));
	if (n > 0 && build_id_from_notes(notes, n, buf, len) < 0)
		buf[0] = '\0';
}

static int cache_line_size(void)
{
	long v = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	char buf[32];

	if (v > 0)
		return (int)v;
	/* VMs often hide CPUID leaf 4 from glibc; sysfs still knows. */
	if (read_line("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size",
		      buf, sizeof(buf)) == 0 && atoi(buf) > 0)
		return atoi(buf);
	log_notice("Cache line size unknown, assuming 64 bytes");
	return 64;
}

static int64_t boot_time(void)
{
	char *buf = NULL, *p;
	int64_t t = 0;

	if (read_file("/proc/stat", &buf) < 0)
		return 0;
	p = strstr(buf, "\nbtime ");
	if (p)
		t = strtoll(p + 7, NULL, 10) * NSEC_PER_SEC;
	free(buf);
	return t;
}

static int cpus_possible(void)
{
	char buf[64];
	int lo, hi;

	if (read_line("/sys/devices/system/cpu/possible", buf, sizeof(buf)) == 0) {
		if (sscanf(buf, "%d-%d", &lo, &hi) == 2)
			return hi + 1;
		if (sscanf(buf, "%d", &lo) == 1)
			return lo + 1;
	}
	return (int)sysconf(_SC_NPROCESSORS_CONF);
}

int boot_info_collect(struct boot_info *b)
{
	struct utsname u;
	char buf[64];
	int r;

	memset(b, 0, sizeof(*b));
	if (uname(&u) < 0)
		return log_error_errno(errno, "uname failed: %m");
	snprintf(b->release, sizeof(b->release), "%s", u.release);
	snprintf(b->version, sizeof(b->version), "%s", u.version);
	snprintf(b->arch, sizeof(b->arch), "%.31s", u.machine);
	snprintf(b->hostname, sizeof(b->hostname), "%s", u.nodename);

	r = read_line("/etc/machine-id", b->machine_id, sizeof(b->machine_id));
	if (r < 0 || !b->machine_id[0]) {
		/* Containers and fresh images may lack one: the hostname
		 * is the best stable key left. */
		log_notice("No /etc/machine-id, identifying this host by its hostname");
		snprintf(b->machine_id, sizeof(b->machine_id), "hostname:%.50s", u.nodename);
	}
	r = read_line("/proc/sys/kernel/random/boot_id", b->boot_uuid, sizeof(b->boot_uuid));
	if (r < 0)
		return log_error_errno(r, "Failed to read the boot id: %m");

	read_build_id(b->build_id, sizeof(b->build_id));
	b->boot_time_ns = boot_time();
	b->cpus_online = (int)sysconf(_SC_NPROCESSORS_ONLN);
	b->cpus_possible = cpus_possible();
	b->cache_line_size = cache_line_size();
	b->page_size = getpagesize();
	pmu_detect(&b->pmu);

	if (read_line("/sys/kernel/mm/lru_gen/enabled", buf, sizeof(buf)) == 0) {
		snprintf(b->lru_gen_features, sizeof(b->lru_gen_features), "%.31s", buf);
		snprintf(b->lru_gen, sizeof(b->lru_gen), "%s", strtoul(buf, NULL, 0) ? "on" : "off");
	} else {
		snprintf(b->lru_gen, sizeof(b->lru_gen), "absent");
	}

	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		snprintf(b->btf, sizeof(b->btf), "vmlinux");
	else
		snprintf(b->btf, sizeof(b->btf), "absent: no /sys/kernel/btf/vmlinux (CONFIG_DEBUG_INFO_BTF)");
	return 0;
}

int boot_store(sqlite3 *db, const struct boot_info *b, int64_t now_ns, int64_t *ret_boot_id)
{
	const struct boot_row row = {
		.machine_id = b->machine_id,
		.hostname = b->hostname,
		.boot_uuid = b->boot_uuid,
		.source = "live",
		.boot_time_ns = b->boot_time_ns,
		.first_seen_ns = now_ns,
		.last_seen_ns = now_ns,
		.kernel_release = b->release,
		.kernel_version = b->version,
		.kernel_build_id = b->build_id,
		.arch = b->arch,
		.nr_cpus_online = b->cpus_online,
		.nr_cpus_possible = b->cpus_possible,
		.cache_line_size = b->cache_line_size,
		.page_size = b->page_size,
		.pmu_kind = b->pmu.kind,
		.pmu_detail = b->pmu.detail,
		.lru_gen = b->lru_gen,
		.lru_gen_features = b->lru_gen_features,
		.btf = b->btf,
	};

	return boot_row_store(db, &row, ret_boot_id);
}
