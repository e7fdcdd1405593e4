// SPDX-License-Identifier: GPL-2.0
/* reports/: escaping of host strings, rollout detection, time arguments. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "report-model.h"
#include "report.h"
#include "rollout.h"
#include "stats.h"
#include "test.h"
#include "util.h"

static char *capture(void (*fn)(FILE *, const char *), const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fn(f, s);
	fclose(f);
	return buf;
}

#define CHECK_ESC(fn, in, want) do {						\
	char *_s = capture(fn, in);						\
	CHECK_STR(_s, want);							\
	free(_s);								\
} while (0)

static char *capture_num(double v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_num(f, v);
	fclose(f);
	return buf;
}

#define CHECK_NUM(v, want) do {							\
	char *_s = capture_num(v);						\
	CHECK_STR(_s, want);							\
	free(_s);								\
} while (0)

/* Unbounded interval ends keep their sign: strings, not null (docs/statistics.md). */
static void test_json_num(void)
{
	CHECK_NUM(INFINITY, "\"inf\"");
	CHECK_NUM(-INFINITY, "\"-inf\"");
	CHECK_NUM(NAN, "null");
	CHECK_NUM(0.1, "0.1");
	CHECK_NUM(0.95, "0.95");
	CHECK_NUM(1.0 / 3, "0.33333333333333331");	/* 15 digits would not read back */
	CHECK_NUM(-3, "-3");
}

static void test_html(void)
{
	CHECK_ESC(html_puts, "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;");
	CHECK_ESC(html_puts, "a&b \"c\" 'd'", "a&amp;b &quot;c&quot; &#39;d&#39;");
	CHECK_ESC(html_puts, "caf\xc3\xa9", "caf\xc3\xa9");
	CHECK_ESC(html_puts, "bad\xff\xfe", "bad\xef\xbf\xbd\xef\xbf\xbd");
	CHECK_ESC(html_puts, "esc\x1b[0m", "esc\xef\xbf\xbd[0m");
	CHECK_ESC(html_puts, "c1\xc2\x85", "c1\xef\xbf\xbd");		/* U+0085 */
	CHECK_ESC(html_puts, NULL, "");
}

static void test_json(void)
{
	CHECK_ESC(json_puts, "a\"b\\c\nd\te", "\"a\\\"b\\\\c\\nd\\te\"");
	CHECK_ESC(json_puts, "</script>", "\"\\u003c/script\\u003e\"");
	CHECK_ESC(json_puts, "x\x01y", "\"x\\u0001y\"");
	CHECK_ESC(json_puts, "\xe2\x80\xa8", "\"\\u2028\"");
	CHECK_ESC(json_puts, "\xc0\xaf", "\"\\ufffd\\ufffd\"");	/* overlong '/' */
	CHECK_ESC(json_puts, "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");	/* surrogate */
	CHECK_ESC(json_puts, "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");
	CHECK_ESC(json_puts, NULL, "null");
}

static void test_text(void)
{
	char buf[8];

	CHECK_ESC(text_puts, "red\x1b[31m\x7f", "red?[31m?");
	text_safe(buf, sizeof(buf), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	CHECK_STR(buf, "\xc3\xa9\xc3\xa9\xc3\xa9");	/* 6 bytes, never half a character */
	text_safe(buf, sizeof(buf), "a\nb");
	CHECK_STR(buf, "a?b");
}

static void test_kernel_same(void)
{
	CHECK(kernel_same("6.1", "#1", "aa", "6.1", "#1", "AA"));
	CHECK(!kernel_same("6.1", "#1", "aa", "6.1", "#1", "bb"));	/* rebuilt */
	CHECK(kernel_same("6.1", "#1", NULL, "6.1", "#1", "bb"));
	CHECK(!kernel_same("6.1", "#1", NULL, "6.1", "#2", NULL));
	CHECK_INT(patch_change_of(PATCH_LACKS, PATCH_CARRIES), ==, CHANGE_GAINED);
	CHECK_INT(patch_change_of(PATCH_UNKNOWN, PATCH_CARRIES), ==, CHANGE_GAINED);
	CHECK_INT(patch_change_of(PATCH_CARRIES, PATCH_UNKNOWN), ==, CHANGE_LOST);
	CHECK_INT(patch_change_of(PATCH_CARRIES, PATCH_CARRIES), ==, CHANGE_NONE);
	CHECK_INT(patch_change_of(PATCH_LACKS, PATCH_LACKS), ==, CHANGE_NONE);
	CHECK_INT(patch_change_of(PATCH_UNKNOWN, PATCH_LACKS), ==, CHANGE_UNKNOWN);
}

static void test_rollouts(void)
{
	/* K0 K0 K1 K0 K1 K2: a rollout, a rollback, a re-rollout, a new kernel. */
	struct kernel_info k[3] = {};
	struct boot_info b[6] = {};
	size_t seq[] = { 0, 0, 1, 0, 1, 2 };
	struct rollout *ro = NULL;
	ssize_t n;

	k[1].patches[0].state = PATCH_CARRIES;
	k[2].patches[0].state = PATCH_CARRIES;
	for (size_t i = 0; i < 6; i++)
		b[i] = (struct boot_info){ .boot_id = (int64_t)i, .start_ns = 100 * (int64_t)i, .kernel = seq[i] };
	n = rollouts_detect(b, 6, k, &ro);
	CHECK_INT(n, ==, 4);
	if (n != 4 || !ro)
		return;
	CHECK_INT(ro[0].t_ns, ==, 200);
	CHECK(!ro[0].rollback && ro[1].rollback && !ro[2].rollback && !ro[3].rollback);
	CHECK_INT(ro[0].change[0], ==, CHANGE_GAINED);
	CHECK_INT(ro[1].change[0], ==, CHANGE_LOST);
	CHECK_INT(ro[3].change[0], ==, CHANGE_NONE);
	CHECK_INT(ro[3].change[1], ==, CHANGE_UNKNOWN);
	CHECK(ro[0].prev_ns == INT64_MIN && ro[0].next_ns == 300);
	CHECK(ro[2].prev_ns == 300 && ro[2].next_ns == 500);
	CHECK(ro[3].next_ns == INT64_MAX);
	CHECK_INT(ro[1].boot_before, ==, 2);
	CHECK_INT(ro[1].boot_after, ==, 3);
	free(ro);
	CHECK_INT(rollouts_detect(b, 1, k, &ro), ==, 0);
	free(ro);
}

static bool same_values(const double *a, const double *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (isnan(a[i]) != isnan(b[i]) || (!isnan(a[i]) && a[i] != b[i]))
			return false;
	return true;
}

/* Bin b's q-quantile over hosts of group g (0: all), of the rate or the work: computed here, plainly. */
static double series_want(const struct report *r, int p, int g, bool work, double q, size_t b, double *buf)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host_path *hp = &r->hosts[i].path[p];
		float x;

		if (!hp->bin_rate || (g && hp->bin_state[b] != g))
			continue;
		x = work ? hp->bin_work[b] : hp->bin_rate[b];
		if (!isnan(x))
			buf[n++] = x;
	}
	stats_sort(buf, n);
	return n ? stats_quantile_sorted(buf, n, q) : NAN;
}

/*
 * The series quartiles the writers get, from the cache (one sort per bin,
 * filled on first use) and without it, equal those computed here: every
 * patch state group, ties, hosts without a value, a host without bins,
 * and a bin no host of a group has.
 */
static void test_series_cache(void)
{
	enum { BINS = 7, HOSTS = 301, CALLS = 4 * 3 + 1 };
	struct report r = { .nr_bins = BINS, .nr_hosts = HOSTS };
	double want[CALLS][BINS], got[CALLS][BINS], buf[HOSTS];
	unsigned int seed = 7;
	size_t groups[4] = {};

	r.hosts = calloc(HOSTS, sizeof(*r.hosts));
	if (!r.hosts)
		return;
	for (size_t i = 0; i < HOSTS; i++) {
		struct host_path *hp = &r.hosts[i].path[1];

		if (i == 5)
			continue;	/* no bins at all */
		hp->bin_rate = malloc(BINS * sizeof(float));
		hp->bin_work = malloc(BINS * sizeof(float));
		hp->bin_state = calloc(BINS, 1);
		if (!hp->bin_rate || !hp->bin_work || !hp->bin_state)
			goto out;
		for (size_t b = 0; b < BINS; b++) {
			hp->bin_rate[b] = rand_r(&seed) % 9 == 0 ? NAN : (float)(rand_r(&seed) % 50) / 7.0f;
			hp->bin_work[b] = rand_r(&seed) % 5 == 0 ? NAN : (float)(rand_r(&seed) % 1000);
			/* Bin 3 has no host in group 2. */
			hp->bin_state[b] = (uint8_t)(rand_r(&seed) % 4);
			if (b == 3 && hp->bin_state[b] == 2)
				hp->bin_state[b] = 1;
			groups[hp->bin_state[b]]++;
		}
	}
	CHECK(groups[0] && groups[1] && groups[2] && groups[3]);
	for (size_t b = 0; b < BINS; b++) {
		for (int g = 0; g < 4; g++)
			for (int k = 0; k < 3; k++)
				want[g * 3 + k][b] = series_want(&r, 1, g, false, 0.25 * (k + 1), b, buf);
		want[CALLS - 1][b] = series_want(&r, 1, 0, true, 0.5, b, buf);
	}
	CHECK(isnan(want[2 * 3 + 1][3]));	/* group 2, bin 3: nobody */
	CHECK(!isnan(want[1][3]));
	for (int pass = 0; pass < 2; pass++) {
		/* Without the cache (before report_end()), then with it. */
		if (pass) {
			r.series = calloc(MAX_PATHS, sizeof(*r.series));
			if (!r.series)
				goto out;
		}
		for (int g = 0; g < 4; g++)
			for (int k = 0; k < 3; k++)
				CHECK_INT(report_series(&r, 1, g, false, 0.25 * (k + 1), got[g * 3 + k]), ==, 0);
		CHECK_INT(report_series(&r, 1, 0, true, 0.5, got[CALLS - 1]), ==, 0);
		for (int c = 0; c < CALLS; c++)
			CHECK(same_values(want[c], got[c], BINS));
	}
	CHECK(r.series && r.series[1] != NULL);
out:
	for (size_t i = 0; i < HOSTS; i++) {
		free(r.hosts[i].path[1].bin_rate);
		free(r.hosts[i].path[1].bin_work);
		free(r.hosts[i].path[1].bin_state);
	}
	if (r.series)
		free(r.series[1]);
	free(r.series);
	free(r.hosts);
}

int main(void)
{
	RUN(test_html);
	RUN(test_json);
	RUN(test_json_num);
	RUN(test_text);
	RUN(test_kernel_same);
	RUN(test_rollouts);
	RUN(test_series_cache);
	return test_exit();
}
