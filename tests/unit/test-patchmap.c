// SPDX-License-Identifier: GPL-2.0
/* common/patchmap.c: the rule format, last-match-wins, and the shipped map. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "patchmap.h"
#include "test.h"
#include "util.h"

static struct patch_map *parse(const char *text)
{
	struct patch_map *m = patch_map_new();

	CHECK(m != NULL);
	if (m && patch_map_parse(m, text, strlen(text), "test") < 0) {
		patch_map_free(m);
		return NULL;
	}
	return m;
}

static void test_rules(void)
{
	static const char text[] =
		"# comment\n"
		"\n"
		"lacks   all      release  6.1.*\n"
		"carries P1,P2    release  6.12.*-mmfix*\n"
		"carries p3-P4    build-id 5A3C1E0F\n"
		"lacks   P3       version  #1 SMP PREEMPT_DYNAMIC Debian 6.12.38-1 *\n"
		"carries P4       ksym     maybe_lru_add_drain\n"
		"carries P4       ksym     maybe_lru_add_drain";	/* no final newline */
	struct patch_map *m = parse(text);
	struct patch_verdict v[MAX_PATHS];
	const char *syms[] = { "other", "maybe_lru_add_drain" };
	struct kernel_desc old = { "6.1.0-47-cloud-amd64", "#1 SMP Debian 6.1.158-1", NULL, NULL, 0 };
	struct kernel_desc fix = { "6.12.38-mmfix2", "#1 SMP PREEMPT_DYNAMIC Debian 6.12.38-1 (2025)",
				   "5a3c1e0f99", syms, 2 };
	struct kernel_desc other = { "5.15.0", NULL, NULL, NULL, 0 };

	CHECK(m != NULL);
	if (!m)
		return;
	CHECK_INT(patch_map_nr_rules(m), ==, 6);
	CHECK_INT(patch_map_nr_ksyms(m), ==, 1);	/* deduplicated */
	CHECK_STR(patch_map_ksym(m, 0), "maybe_lru_add_drain");

	patch_map_resolve(m, &old, v);
	for (int p = 0; p < paths_nr(); p++)
		CHECK_INT(v[p].state, ==, PATCH_LACKS);
	CHECK_STR(v[0].why, "release 6.1.* (test:3)");

	patch_map_resolve(m, &fix, v);
	CHECK_INT(v[0].state, ==, PATCH_CARRIES);
	CHECK_INT(v[1].state, ==, PATCH_CARRIES);
	CHECK_INT(v[2].state, ==, PATCH_LACKS);		/* the later version rule wins */
	CHECK_STR(v[2].why, "version #1 SMP PREEMPT_DYNAMIC Debian 6.12.38-1 * (test:6)");
	CHECK_INT(v[3].state, ==, PATCH_CARRIES);
	CHECK_STR(v[3].why, "ksym maybe_lru_add_drain (test:8)");

	patch_map_resolve(m, &other, v);
	for (int p = 0; p < paths_nr(); p++) {
		CHECK_INT(v[p].state, ==, PATCH_UNKNOWN);
		CHECK(v[p].why == NULL);
	}
	patch_map_free(m);
}

static void test_errors(void)
{
	static const char *const bad[] = {
		"carry P1 release x\n",
		"carries P5 release x\n",
		"carries P3-P1 release x\n",
		"carries P1; release x\n",
		"carries P1 kernel x\n",
		"carries P1 release\n",
		"carries P1 build-id 1234\n",
		"carries P1 build-id zzzzzzzzzz\n",
		"carries P1 ksym two words\n",
		"carries\n",
	};

	log_set_max_level(LOG_CRIT);	/* the errors are expected */
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct patch_map *m = patch_map_new();

		CHECK(m != NULL);
		if (!m)
			continue;
		if (patch_map_parse(m, bad[i], strlen(bad[i]), "bad") != -EINVAL)
			fprintf(stderr, "accepted: %s", bad[i]);
		CHECK_INT(patch_map_parse(m, bad[i], strlen(bad[i]), "bad"), ==, -EINVAL);
		patch_map_free(m);
	}
	{
		struct patch_map *m = patch_map_new();
		static const char nul[] = "carries P1 release a\0b\n";

		CHECK_INT(patch_map_parse(m, nul, sizeof(nul) - 1, "nul"), ==, -EINVAL);
		patch_map_free(m);
	}
	log_set_max_level(LOG_INFO);
	patch_map_free(NULL);
}

/* The shipped reports/patches.conf and the built-in default agree. */
static void test_shipped(void)
{
	_cleanup_free_ char *buf = NULL;
	const char *top = getenv("TOP");
	char path[4096];
	struct patch_map *file = patch_map_new(), *builtin = patch_map_new();
	const char *syms[] = { "maybe_lru_add_drain" };
	struct kernel_desc with = { "x", "y", NULL, syms, 1 }, without = { "x", "y", NULL, NULL, 0 };
	struct patch_verdict a[MAX_PATHS], b[MAX_PATHS];

	snprintf(path, sizeof(path), "%s/reports/patches.conf", top ? top : ".");
	CHECK_INT(patch_map_load(file, path), ==, 0);
	CHECK_INT(patch_map_load_default(builtin), ==, 0);
	CHECK_INT(patch_map_nr_rules(file), ==, patch_map_nr_rules(builtin));
	for (int k = 0; k < 2; k++) {
		patch_map_resolve(file, k ? &with : &without, a);
		patch_map_resolve(builtin, k ? &with : &without, b);
		for (int p = 0; p < paths_nr(); p++)
			CHECK_INT(a[p].state, ==, b[p].state);
	}
	CHECK_INT(a[3].state, ==, PATCH_CARRIES);
	patch_map_free(file);
	patch_map_free(builtin);
}

int main(void)
{
	RUN(test_rules);
	RUN(test_errors);
	RUN(test_shipped);
	return test_exit();
}
