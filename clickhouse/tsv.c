// SPDX-License-Identifier: GPL-2.0
/* ClickHouse's TabSeparated, both ways, and the SQL text the queries build. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "tsv.h"
#include "util.h"

int strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (grow_array((void **)&b->p, &b->alloc, 1, b->len + n + 1) < 0)
		return -ENOMEM;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int strbuf_puts(struct strbuf *b, const char *s)
{
	return strbuf_add(b, s, strlen(s));
}

int strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
	_cleanup_free_ char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	return strbuf_add(b, s, (size_t)n);
}

void strbuf_done(struct strbuf *b)
{
	free(b->p);
	*b = (struct strbuf){};
}

int tsv_add_field(struct strbuf *b, const char *s, size_t n)
{
	size_t start = 0;

	for (size_t i = 0; i < n; i++) {
		const char *e;

		switch (s[i]) {
		case '\\': e = "\\\\"; break;
		case '\t': e = "\\t"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\0': e = "\\0"; break;
		default: continue;
		}
		if (strbuf_add(b, s + start, i - start) < 0 || strbuf_add(b, e, 2) < 0)
			return -ENOMEM;
		start = i + 1;
	}
	return strbuf_add(b, s + start, n - start);
}

int sql_add_string(struct strbuf *b, const char *s)
{
	if (strbuf_add(b, "'", 1) < 0)
		return -ENOMEM;
	for (; *s; s++) {
		if ((*s == '\'' || *s == '\\') && strbuf_add(b, "\\", 1) < 0)
			return -ENOMEM;
		if (strbuf_add(b, s, 1) < 0)
			return -ENOMEM;
	}
	return strbuf_add(b, "'", 1);
}

bool sql_identifier_valid(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

	return n > 0 && n <= 64 && s[n] == '\0';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

char *tsv_unescape(char *s)
{
	char *w = s;

	if (strcmp(s, "\\N") == 0)
		return NULL;
	for (char *p = s; *p; p++) {
		if (*p != '\\' || !p[1]) {
			*w++ = *p;
			continue;
		}
		p++;
		switch (*p) {
		case 't': *w++ = '\t'; break;
		case 'n': *w++ = '\n'; break;
		case 'r': *w++ = '\r'; break;
		case 'b': *w++ = '\b'; break;
		case 'f': *w++ = '\f'; break;
		case 'a': *w++ = '\a'; break;
		case 'v': *w++ = '\v'; break;
		case 'e': *w++ = '\x1b'; break;
		case '0': *w++ = '\0'; break;
		case 'x':
			if (p[1] && p[2] && hex_digit(p[1]) >= 0 && hex_digit(p[2]) >= 0) {
				*w++ = (char)(hex_digit(p[1]) << 4 | hex_digit(p[2]));
				p += 2;
				break;
			}
			*w++ = *p;
			break;
		default: *w++ = *p; break;
		}
	}
	*w = '\0';
	return s;
}

int tsv_split(char *row, char **ret_fields, size_t max, size_t *ret_n)
{
	size_t n = 0;

	for (char *p = row;;) {
		char *tab = strchr(p, '\t');

		if (n == max)
			return -EPROTO;
		if (tab)
			*tab = '\0';
		ret_fields[n++] = tsv_unescape(p);
		if (!tab)
			break;
		p = tab + 1;
	}
	*ret_n = n;
	return 0;
}

static int reader_row(struct tsv_reader *t, char *row)
{
	char *f[TSV_MAX_FIELDS];
	size_t n;

	if (tsv_split(row, f, TSV_MAX_FIELDS, &n) < 0)
		return log_error_errno(EPROTO, "The cluster answered more columns than asked");
	if (n < t->min_fields)
		return log_error_errno(EPROTO, "The cluster answered %zu columns, %zu expected", n,
				       t->min_fields);
	return t->row(f, n, t->arg);
}

int tsv_reader_feed(const char *data, size_t len, void *reader)
{
	struct tsv_reader *t = reader;
	size_t start = 0;
	int r;

	if (strbuf_add(&t->pend, data, len) < 0)
		return log_oom();
	for (char *nl; (nl = memchr(t->pend.p + start, '\n', t->pend.len - start));) {
		*nl = '\0';
		r = reader_row(t, t->pend.p + start);
		if (r < 0)
			return r;
		start = (size_t)(nl - t->pend.p) + 1;
	}
	memmove(t->pend.p, t->pend.p + start, t->pend.len - start);
	t->pend.len -= start;
	return 0;
}

int tsv_reader_end(struct tsv_reader *t)
{
	bool torn = t->pend.len > 0;

	strbuf_done(&t->pend);
	if (torn)
		return log_error_errno(EPROTO, "The cluster's answer ended inside a row");
	return 0;
}

int tsv_parse(char *body, size_t cols, struct tsv *ret)
{
	struct tsv t = { .body = body, .cols = cols };
	size_t alloc = 0, n;
	char *line, *next;
	int r;

	*ret = t;
	for (line = body; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (grow_array((void **)&t.cells, &alloc, sizeof(char *), (t.rows + 1) * cols) < 0) {
			r = -ENOMEM;
			goto fail;
		}
		r = tsv_split(line, t.cells + t.rows * cols, cols, &n);
		if (r >= 0 && n != cols)
			r = -EPROTO;
		if (r < 0)
			goto fail;
		t.rows++;
	}
	*ret = t;
	return 0;
fail:
	free(t.cells);
	*ret = (struct tsv){};
	return r;
}

char *tsv_get(const struct tsv *t, size_t row, size_t col)
{
	return t->cells[row * t->cols + col];
}

int64_t tsv_int(const struct tsv *t, size_t row, size_t col)
{
	const char *s = tsv_get(t, row, col);

	return s ? strtoll(s, NULL, 10) : 0;
}

double tsv_num(const struct tsv *t, size_t row, size_t col)
{
	const char *s = tsv_get(t, row, col);

	return s ? strtod(s, NULL) : 0.0;
}

void tsv_done(struct tsv *t)
{
	free(t->body);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}
