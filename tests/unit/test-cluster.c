// SPDX-License-Identifier: GPL-2.0
/*
 * What top and status read from the cluster: ClickHouse's TabSeparated
 * answers split into cells, its escapes undone (a hostname with a tab or a
 * backslash comes back as the host wrote it), \N as NULL, and an answer
 * with a missing or extra cell refused rather than misread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "test.h"

static void test_tsv(void)
{
	char *body = strdup("h1\tweb\\t1\t42\n"
			    "h2\t\\N\t-7\n"
			    "h3\tback\\\\slash \\'q\\' nl\\n\t\n");
	struct tsv t;

	CHECK(body != NULL);
	CHECK_INT(tsv_parse(body, 3, &t), ==, 0);
	CHECK_INT(t.rows, ==, 3);
	CHECK_STR(tsv_get(&t, 0, 1), "web\t1");
	CHECK_INT(tsv_int(&t, 0, 2), ==, 42);
	CHECK(tsv_get(&t, 1, 1) == NULL);
	CHECK_INT(tsv_int(&t, 1, 2), ==, -7);
	CHECK_STR(tsv_get(&t, 2, 1), "back\\slash 'q' nl\n");
	CHECK_STR(tsv_get(&t, 2, 2), "");
	tsv_done(&t);

	body = strdup("");
	CHECK_INT(tsv_parse(body, 2, &t), ==, 0);
	CHECK_INT(t.rows, ==, 0);
	tsv_done(&t);

	/* a row short of a cell, and one with a cell too many */
	body = strdup("a\tb\nc\n");
	CHECK_INT(tsv_parse(body, 2, &t), ==, -EPROTO);
	free(body);
	body = strdup("a\tb\tc\n");
	CHECK_INT(tsv_parse(body, 2, &t), ==, -EPROTO);
	free(body);
}

int main(void)
{
	RUN(test_tsv);
	return test_exit();
}
