// SPDX-License-Identifier: GPL-2.0
/*
 * Our c2c classes against perf c2c itself. The real `perf c2c record` file
 * in tests/fixtures/real/ is copied with each sample's data source
 * replaced by a kernel encoding from mem-encodings.h (and the address
 * zeroed where the encoding says so), read back through our reader and
 * decoder, and given to `perf c2c report --stdio`: its "Trace Event
 * Information" totals must equal ours, line by line.
 *
 * Debian 12's perf is 6.1.192; its c2c_decode_stats() already has 6.12's
 * rules (peer, mrem only without hops), so it is the reference as is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mem-decode.h"
#include "mem-encodings.h"
#include "perf-data.h"
#include "test.h"
#include "util.h"

#define FIXTURE "perfdata_prospar_c2c_record_userspace.perf.data"

/* perf c2c report's lines and how they derive from struct c2c_stats
 * (tools/perf/builtin-c2c.c: print_c2c__display_stats()). */
static uint64_t llc_hit(const struct mem_stats *s)
{
	return s->c[MEM_CLASS_ld_llchit] + s->c[MEM_CLASS_lcl_hitm];
}

static uint64_t llc_misses(const struct mem_stats *s)
{
	return s->c[MEM_CLASS_lcl_dram] + s->c[MEM_CLASS_rmt_dram] + s->c[MEM_CLASS_rmt_hitm] +
	       s->c[MEM_CLASS_rmt_hit];
}

static const struct {
	const char *label;
	int cls;			/* -1: derived */
	uint64_t (*derive)(const struct mem_stats *);
} lines[] = {
	{ "Locked Load/Store Operations", MEM_CLASS_locks, NULL },
	{ "Load Operations", MEM_CLASS_loads, NULL },
	{ "Loads - uncacheable", MEM_CLASS_ld_uncache, NULL },
	{ "Loads - IO", MEM_CLASS_ld_io, NULL },
	{ "Loads - Miss", MEM_CLASS_ld_miss, NULL },
	{ "Loads - no mapping", MEM_CLASS_ld_noadrs, NULL },
	{ "Load Fill Buffer Hit", MEM_CLASS_ld_fbhit, NULL },
	{ "Load L1D hit", MEM_CLASS_ld_l1hit, NULL },
	{ "Load L2D hit", MEM_CLASS_ld_l2hit, NULL },
	{ "Load LLC hit", -1, llc_hit },
	{ "Load Local HITM", MEM_CLASS_lcl_hitm, NULL },
	{ "Load Remote HITM", MEM_CLASS_rmt_hitm, NULL },
	{ "Load Remote HIT", MEM_CLASS_rmt_hit, NULL },
	{ "Load Local DRAM", MEM_CLASS_lcl_dram, NULL },
	{ "Load Remote DRAM", MEM_CLASS_rmt_dram, NULL },
	{ "Load MESI State Exclusive", MEM_CLASS_ld_excl, NULL },
	{ "Load MESI State Shared", MEM_CLASS_ld_shared, NULL },
	{ "Load LLC Misses", -1, llc_misses },
	{ "Load access blocked by data", MEM_CLASS_blk_data, NULL },
	{ "Load access blocked by address", MEM_CLASS_blk_addr, NULL },
	{ "Load HIT Local Peer", MEM_CLASS_lcl_peer, NULL },
	{ "Load HIT Remote Peer", MEM_CLASS_rmt_peer, NULL },
	{ "Store Operations", MEM_CLASS_stores, NULL },
	{ "Store - uncacheable", MEM_CLASS_st_uncache, NULL },
	{ "Store - no mapping", MEM_CLASS_st_noadrs, NULL },
	{ "Store L1D Hit", MEM_CLASS_st_l1hit, NULL },
	{ "Store L1D Miss", MEM_CLASS_st_l1miss, NULL },
	{ "Store No available memory level", MEM_CLASS_st_na, NULL },
	{ "Unable to parse data source", MEM_CLASS_noparse, NULL },
};

static int read_all(const char *path, uint8_t **ret, size_t *ret_len)
{
	char *buf = NULL;
	ssize_t n = read_file(path, &buf);

	if (n < 0)
		return (int)n;
	*ret = (uint8_t *)buf;
	*ret_len = n;
	return 0;
}

static int write_all(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	if (fwrite(buf, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	return fclose(f) == 0 ? 0 : -errno;
}

/* perf c2c report's totals into vals[] in the order of lines[]; total records into *nr. */
static int perf_c2c_report(const char *path, uint64_t *vals, uint64_t *nr)
{
	char cmd[512], line[512];
	int found = 0, st;
	FILE *p;

	/* perf pipes source lines through addr2line, which fails on this
	 * file's binaries; ignoring SIGPIPE keeps perf going to the totals */
	snprintf(cmd, sizeof(cmd), "trap '' PIPE; perf c2c report -i '%s' --stats 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		char *colon = strchr(line, ':');
		char *label = line;

		if (!colon)
			continue;
		*colon = '\0';
		label += strspn(label, " ");
		strstrip(label);
		if (strcmp(label, "Total records") == 0 && !*nr) {
			*nr = strtoull(colon + 1, NULL, 10);
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(lines); i++)
			if (strcmp(label, lines[i].label) == 0 && !(found & (1 << i))) {
				vals[i] = strtoull(colon + 1, NULL, 10);
				found |= 1 << i;
			}
		if (strcmp(label, "Unable to parse data source") == 0)
			break;	/* the first block only */
	}
	st = pclose(p);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -EIO;
	return found == (1 << ARRAY_SIZE(lines)) - 1 ? 0 : -ENODATA;
}

int main(void)
{
	const char *dir = test_fixtures_dir();
	char fixture[4096], tmp[] = "/tmp/mmhitm-test-c2c-XXXXXX";
	uint64_t *offsets = NULL, addr_off = 0, ds_off = 0, type;
	size_t n_samples = 0, alloc = 0, len = 0, done = 0, compared = 0, rounds = 0;
	struct perf_data_record rec;
	struct perf_data *pd = NULL;
	uint8_t *orig = NULL, *buf;
	char *err = NULL;
	int fd, r;

	if (system("perf version >/dev/null 2>&1") != 0)
		SKIP("perf is not installed (Debian: linux-perf)");
	snprintf(fixture, sizeof(fixture), "%s/" FIXTURE, dir);
	/* It ships with the repository: missing is a broken checkout, a failure. */
	if (read_all(fixture, &orig, &len) < 0) {
		fprintf(stderr, "fixture %s is missing or unreadable\n", fixture);
		return 1;
	}

	/* where the samples and their ADDR / DATA_SRC words are */
	r = perf_data_open_mem(orig, len, &pd, &err);
	CHECK_INT(r, ==, 0);
	if (r < 0)
		return test_exit();
	type = perf_data_event(pd, 0)->attr.sample_type;
	CHECK(!(type & (PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)));
	addr_off = 8 + 8 * __builtin_popcountll(type & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
							 PERF_SAMPLE_TID | PERF_SAMPLE_TIME));
	ds_off = 8 + 8 * __builtin_popcountll(type & (PERF_SAMPLE_DATA_SRC - 1) &
					       ~(uint64_t)PERF_SAMPLE_WEIGHT_STRUCT);
	while ((r = perf_data_next(pd, &rec)) > 0)
		if (rec.type == PERF_RECORD_SAMPLE) {
			if (grow_array((void **)&offsets, &alloc, sizeof(*offsets), n_samples + 1) < 0)
				abort();
			offsets[n_samples++] = rec.offset;
		}
	perf_data_free(pd);
	CHECK(n_samples > 0);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	close(fd);
	buf = malloc(len);

	/* as many copies as it takes to put every encoding in a sample */
	while (done < ARRAY_SIZE(mem_encodings)) {
		struct mem_stats mine = { 0 };
		uint64_t vals[ARRAY_SIZE(lines)] = { 0 }, nr = 0, mine_nr = 0;

		memcpy(buf, orig, len);
		for (size_t i = 0; i < n_samples && done < ARRAY_SIZE(mem_encodings); i++, done++) {
			const struct mem_encoding *e = &mem_encodings[done];

			memcpy(buf + offsets[i] + ds_off, &e->data_src, 8);
			if (!e->daddr)
				memset(buf + offsets[i] + addr_off, 0, 8);
		}
		CHECK_INT(write_all(tmp, buf, len), ==, 0);

		/* ours: through the reader, as mmhitm import reads */
		r = perf_data_open(tmp, &pd, &err);
		CHECK_INT(r, ==, 0);
		if (r < 0)
			break;
		while (perf_data_next(pd, &rec) > 0)
			if (rec.type == PERF_RECORD_SAMPLE && rec.event) {
				mem_decode(rec.sample.data_src, rec.sample.addr, &mine);
				mine_nr++;
			}
		perf_data_free(pd);

		r = perf_c2c_report(tmp, vals, &nr);
		if (r < 0) {
			unlink(tmp);
			SKIP("perf c2c report cannot read %s here (%s)", fixture, strerror(-r));
		}
		rounds++;
		CHECK_INT(nr, ==, mine_nr);
		for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
			uint64_t want = lines[i].cls >= 0 ? mine.c[lines[i].cls] : lines[i].derive(&mine);

			test_current = lines[i].label;
			if (vals[i] != want)
				fprintf(stderr, "round %zu: %s: perf c2c %" PRIu64 ", ours %" PRIu64 "\n",
					rounds, lines[i].label, vals[i], want);
			CHECK_INT(vals[i], ==, want);
			compared++;
		}
	}
	printf("%zu encodings in %zu copies of %s, %zu totals compared with perf c2c report\n",
	       ARRAY_SIZE(mem_encodings), rounds, FIXTURE, compared);
	unlink(tmp);
	free(buf);
	free(orig);
	free(offsets);
	return test_exit();
}
