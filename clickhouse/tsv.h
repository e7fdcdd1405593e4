/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_TSV_H
#define MMHITM_TSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The one codec for ClickHouse's text: a growable buffer, TabSeparated
 * fields escaped for an INSERT and split and unescaped from an answer
 * (whole, or streamed as libcurl hands it over), and the two pieces of SQL
 * text the queries build (a string literal, an identifier).
 */

/* A growing string, always NUL-terminated once anything was added.
 * Caller frees with strbuf_done(). */
struct strbuf {
	char *p;
	size_t len, alloc;
};

int strbuf_add(struct strbuf *b, const char *s, size_t n);
int strbuf_puts(struct strbuf *b, const char *s);
int strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_done(struct strbuf *b);

/*
 * Appends s (n bytes, NUL bytes too) as one TabSeparated field:
 * backslash, tab, newline, carriage return, backspace, form feed and NUL
 * escaped as ClickHouse writes them. -ENOMEM.
 */
int tsv_add_field(struct strbuf *b, const char *s, size_t n);
/* A string literal for ClickHouse SQL: 'quotes' and backslashes escaped. */
int sql_add_string(struct strbuf *b, const char *s);
/* Letters, digits and '_', 1 to 64 of them: safe to name in SQL unquoted. */
bool sql_identifier_valid(const char *s);

/*
 * Undoes TabSeparated's escapes in place (\t \n \r \b \f \a \v \e \0 \\ \'
 * \xHH; any other escaped character stands for itself). Returns s, or NULL
 * for ClickHouse's NULL (the field "\N" alone).
 */
char *tsv_unescape(char *s);
/*
 * Splits one row (without its newline) at its tabs into at most max
 * fields, each unescaped (tsv_unescape()). -EPROTO for more than max.
 */
int tsv_split(char *row, char **ret_fields, size_t max, size_t *ret_n);

/*
 * A streamed answer, row by row: feed it the bytes as they come
 * (tsv_reader_feed() is http_query_stream()'s callback); row() gets each
 * complete row's fields, unescaped. A row of more than TSV_MAX_FIELDS or
 * fewer than min_fields fields is -EPROTO (logged).
 */
#define TSV_MAX_FIELDS 16

struct tsv_reader {
	int (*row)(char **fields, size_t n, void *arg);
	void *arg;
	size_t min_fields;
	struct strbuf pend;	/* a row not complete yet */
};

int tsv_reader_feed(const char *data, size_t len, void *reader);
/* -EPROTO (logged) when the answer ended inside a row; frees the reader's buffer. */
int tsv_reader_end(struct tsv_reader *t);

/*
 * A whole answer as a table: cell (row, col) is a NUL-terminated string,
 * or NULL for ClickHouse's \N.
 */
struct tsv {
	char *body;
	char **cells;
	size_t rows, cols;
};

/*
 * Splits body (unescaped in place; t takes it and frees it) into rows of
 * cols cells. -EPROTO for a row with another number of cells, -ENOMEM;
 * nothing logged, and body stays the caller's then.
 */
int tsv_parse(char *body, size_t cols, struct tsv *ret);
char *tsv_get(const struct tsv *t, size_t row, size_t col);
/* The cell as a number; 0 for NULL. */
int64_t tsv_int(const struct tsv *t, size_t row, size_t col);
double tsv_num(const struct tsv *t, size_t row, size_t col);
void tsv_done(struct tsv *t);

#endif
