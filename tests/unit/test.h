/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_TEST_H
#define MMHITM_TEST_H

/*
 * A minimal harness: each test-*.c is one program that runs its cases and
 * exits 0 (all passed), 1 (a check failed) or 77 (cannot run here, skipped:
 * the reason is printed). tests/run counts the results.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;
static const char *test_current = "";

#define CHECK(cond) do {							\
	test_checks++;								\
	if (!(cond)) {								\
		test_failures++;						\
		fprintf(stderr, "%s:%d: %s: check failed: %s\n",		\
			__FILE__, __LINE__, test_current, #cond);		\
	}									\
} while (0)

#define CHECK_INT(a, op, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);			\
	test_checks++;								\
	if (!(_a op _b)) {							\
		test_failures++;						\
		fprintf(stderr, "%s:%d: %s: check failed: %s %s %s (%lld vs %lld)\n", \
			__FILE__, __LINE__, test_current, #a, #op, #b, _a, _b);	\
	}									\
} while (0)

#define CHECK_STR(a, b) do {							\
	const char *_a = (a), *_b = (b);					\
	test_checks++;								\
	if (!_a || !_b || strcmp(_a, _b) != 0) {				\
		test_failures++;						\
		fprintf(stderr, "%s:%d: %s: check failed: %s == %s (\"%s\" vs \"%s\")\n", \
			__FILE__, __LINE__, test_current, #a, #b,		\
			_a ? _a : "(null)", _b ? _b : "(null)");		\
	}									\
} while (0)

#define RUN(fn) do {								\
	test_current = #fn;							\
	fn();									\
} while (0)

#define SKIP(...) do {								\
	printf("SKIP: ");							\
	printf(__VA_ARGS__);							\
	printf("\n");								\
	exit(77);								\
} while (0)

/*
 * Where the real recordings are (tests/fixtures/real, see
 * tests/fixtures/PROVENANCE): $MMHITM_FIXTURES when set, else the
 * repository's copy, found from $TOP (tests/run exports it) or from the
 * current directory, the repository root under tests/run and make check.
 * They ship with the repository, so a test that misses one fails: a skip
 * here would hide a broken checkout.
 */
static inline const char *test_fixtures_dir(void)
{
	static char buf[4096];
	const char *env = getenv("MMHITM_FIXTURES"), *top = getenv("TOP");

	if (env && *env)
		return env;
	if (!top || !*top)
		return "tests/fixtures/real";
	snprintf(buf, sizeof(buf), "%s/tests/fixtures/real", top);
	return buf;
}

static inline int test_exit(void)
{
	if (test_failures) {
		fprintf(stderr, "%d of %d checks failed\n", test_failures, test_checks);
		return 1;
	}
	printf("%d checks passed\n", test_checks);
	return 0;
}

#endif
