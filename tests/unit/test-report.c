// SPDX-License-Identifier: GPL-2.0
/* reports/: escaping of host strings, rollout detection, time arguments. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "report.h"
#include "rollout.h"
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

int main(void)
{
	RUN(test_html);
	RUN(test_json);
	RUN(test_json_num);
	RUN(test_text);
	RUN(test_kernel_same);
	RUN(test_rollouts);
	return test_exit();
}
