// SPDX-License-Identifier: GPL-2.0
/*
 * What top and status read from the cluster: ClickHouse's TabSeparated
 * answers split into cells, its escapes undone (a hostname with a tab or a
 * backslash comes back as the host wrote it), \N as NULL, and an answer
 * with a missing or extra cell refused rather than misread. And the codec
 * itself (clickhouse/tsv.c), which ship writes and report streams with:
 * every byte survives escape then unescape, ClickHouse's other escapes
 * read, a row cut anywhere by the network, a row with too many fields.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"
#include "log.h"
#include "tsv.h"
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

/* Every byte value written as a field reads back as itself. */
static void test_escape_roundtrip(void)
{
	struct strbuf b = {};
	char all[256];

	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	CHECK_INT(tsv_add_field(&b, all, sizeof(all)), ==, 0);
	CHECK(memchr(b.p, '\t', b.len) == NULL);
	CHECK(memchr(b.p, '\n', b.len) == NULL);
	CHECK(memchr(b.p, '\0', b.len) == NULL);
	CHECK(tsv_unescape(b.p) == b.p);
	CHECK(memcmp(b.p, all, sizeof(all)) == 0);
	strbuf_done(&b);

	CHECK_INT(tsv_add_field(&b, "a\tb\n\\\0c\r", 8), ==, 0);
	CHECK_STR(b.p, "a\\tb\\n\\\\\\0c\\r");
	strbuf_done(&b);
	/* \N is the field NULL, the escaped backslash before N a string */
	CHECK_INT(tsv_add_field(&b, "\\N", 2), ==, 0);
	CHECK_STR(b.p, "\\\\N");
	CHECK_STR(tsv_unescape(b.p), "\\N");
	strbuf_done(&b);
}

/* What ClickHouse writes besides: \' \a \v \e \xHH, and an unknown escape. */
static void test_unescape(void)
{
	char s1[] = "\\'\\a\\v\\e\\x41\\x4g\\q", s2[] = "\\N", s3[] = "\\N\\N", s4[] = "tail\\";

	CHECK_STR(tsv_unescape(s1), "'\a\v\x1b" "Ax4gq");
	CHECK(tsv_unescape(s2) == NULL);
	CHECK_STR(tsv_unescape(s3), "NN");
	CHECK_STR(tsv_unescape(s4), "tail\\");
}

static int rows_seen;

static int row_cb(char **f, size_t n, void *arg)
{
	char *out = arg;

	rows_seen++;
	for (size_t i = 0; i < n; i++) {
		strcat(out, f[i] ? f[i] : "NULL");
		strcat(out, i + 1 < n ? "|" : ";");
	}
	return 0;
}

/* The same answer cut at every place gives the same rows. */
static void test_reader(void)
{
	static const char body[] = "a\tb\\tc\n\\N\t\n\tlast\n";
	char out[256];

	log_set_max_level(LOG_CRIT);
	for (size_t cut = 0; cut <= strlen(body); cut++) {
		struct tsv_reader t = { .row = row_cb, .arg = out, .min_fields = 2 };

		out[0] = '\0';
		rows_seen = 0;
		CHECK_INT(tsv_reader_feed(body, cut, &t), ==, 0);
		CHECK_INT(tsv_reader_feed(body + cut, strlen(body) - cut, &t), ==, 0);
		CHECK_INT(tsv_reader_end(&t), ==, 0);
		CHECK_INT(rows_seen, ==, 3);
		/* a field split at the end of a row: the empty field after the tab */
		CHECK_STR(out, "a|b\tc;NULL|;|last;");
	}

	/* the answer ends inside a row */
	{
		struct tsv_reader t = { .row = row_cb, .arg = out, .min_fields = 1 };

		out[0] = '\0';
		CHECK_INT(tsv_reader_feed("x\ny", 3, &t), ==, 0);
		CHECK_INT(tsv_reader_end(&t), ==, -EPROTO);
	}
	/* too few fields */
	{
		struct tsv_reader t = { .row = row_cb, .arg = out, .min_fields = 3 };

		CHECK_INT(tsv_reader_feed("x\ty\n", 4, &t), ==, -EPROTO);
		tsv_reader_end(&t);
	}
}

/* A row of more fields than anyone asked for, and a long one in small pieces. */
static void test_long_rows(void)
{
	struct strbuf b = {};
	char *f[TSV_MAX_FIELDS];
	size_t n;

	for (int i = 0; i <= TSV_MAX_FIELDS; i++)
		CHECK_INT(strbuf_printf(&b, "%s%d", i ? "\t" : "", i), ==, 0);
	CHECK_INT(tsv_split(b.p, f, TSV_MAX_FIELDS, &n), ==, -EPROTO);
	strbuf_done(&b);

	{
		struct tsv_reader t = { .row = row_cb, .arg = NULL, .min_fields = 1 };

		for (int i = 0; i <= TSV_MAX_FIELDS; i++)
			CHECK_INT(strbuf_printf(&b, "%s%d", i ? "\t" : "", i), ==, 0);
		CHECK_INT(strbuf_add(&b, "\n", 1), ==, 0);
		CHECK_INT(tsv_reader_feed(b.p, b.len, &t), ==, -EPROTO);
		tsv_reader_end(&t);
		strbuf_done(&b);
	}
	{
		static char out[300000];
		struct tsv_reader t = { .row = row_cb, .arg = out, .min_fields = 2 };

		out[0] = '\0';
		rows_seen = 0;
		for (int i = 0; i < 100000; i++)
			CHECK_INT(strbuf_add(&b, "x", 1), ==, 0);
		CHECK_INT(strbuf_add(&b, "\ty\n", 3), ==, 0);
		for (size_t o = 0; o < b.len; o += 7)
			CHECK_INT(tsv_reader_feed(b.p + o, b.len - o < 7 ? b.len - o : 7, &t), ==, 0);
		CHECK_INT(tsv_reader_end(&t), ==, 0);
		CHECK_INT(rows_seen, ==, 1);
		CHECK_INT(strlen(out), ==, 100003);
		strbuf_done(&b);
	}
}

static void test_sql_text(void)
{
	struct strbuf b = {};

	CHECK_INT(sql_add_string(&b, "it's a \\ path"), ==, 0);
	CHECK_STR(b.p, "'it\\'s a \\\\ path'");
	strbuf_done(&b);
	CHECK(sql_identifier_valid("mmhitm_2"));
	CHECK(!sql_identifier_valid(""));
	CHECK(!sql_identifier_valid("a.b"));
	CHECK(!sql_identifier_valid("x; DROP"));
	CHECK(!sql_identifier_valid("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

int main(void)
{
	RUN(test_tsv);
	RUN(test_escape_roundtrip);
	RUN(test_unescape);
	RUN(test_reader);
	RUN(test_long_rows);
	RUN(test_sql_text);
	return test_exit();
}
