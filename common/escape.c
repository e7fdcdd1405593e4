// SPDX-License-Identifier: GPL-2.0
/* Escaping host-originated strings for HTML, JSON and terminals, and JSON numbers. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

size_t utf8_decode(const unsigned char *s, unsigned int *ret_cp)
{
	unsigned int cp, min;
	size_t n;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2; cp = s[0] & 0x1f; min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3; cp = s[0] & 0x0f; min = 0x800;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4; cp = s[0] & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		/* A NUL terminator fails this test, so we never read past it. */
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, UTF-16 surrogates and beyond U+10FFFF are invalid. */
	if (cp < min || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	*ret_cp = cp;
	return n;
}

void html_puts(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	while (*s) {
		unsigned int cp;
		size_t n = utf8_decode(s, &cp);

		if (n == 0) {
			fputs("\xef\xbf\xbd", f);
			s++;
			continue;
		}
		switch (cp) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((cp < 0x20 && cp != '\t' && cp != '\n') || cp == 0x7f ||
			    (cp >= 0x80 && cp < 0xa0))
				fputs("\xef\xbf\xbd", f);
			else
				fwrite(s, 1, n, f);
		}
		s += n;
	}
}

/*
 * The shortest of %.15g and %.17g that reads back as v: 0.95, not
 * 0.94999999999999996 (15 significant digits always survive a round trip
 * through a double; 17 always read back equal).
 */
void json_num(FILE *f, double v)
{
	char buf[32];

	if (isnan(v)) {
		fputs("null", f);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, f);
}

void json_puts(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		unsigned int cp;
		size_t n = utf8_decode(s, &cp);

		if (n == 0) {
			fputs("\\ufffd", f);
			s++;
			continue;
		}
		switch (cp) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		/* Safe to drop into HTML or a <script> block as well. */
		case '<': case '>': case '&': case '\'':
		case 0x2028: case 0x2029:
			fprintf(f, "\\u%04x", cp);
			break;
		default:
			if (cp < 0x20 || cp == 0x7f)
				fprintf(f, "\\u%04x", cp);
			else
				fwrite(s, 1, n, f);
		}
		s += n;
	}
	fputc('"', f);
}

static bool text_ok(unsigned int cp)
{
	return !(cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0));
}

void text_puts(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	while (*s) {
		unsigned int cp;
		size_t n = utf8_decode(s, &cp);

		if (n == 0 || !text_ok(cp)) {
			fputc('?', f);
			s += n ? n : 1;
			continue;
		}
		fwrite(s, 1, n, f);
		s += n;
	}
}

void text_safe(char *buf, size_t size, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t used = 0;

	if (size == 0)
		return;
	while (*s) {
		unsigned int cp;
		size_t n = utf8_decode(s, &cp);

		if (n == 0 || !text_ok(cp)) {
			if (used + 1 >= size)
				break;
			buf[used++] = '?';
			s += n ? n : 1;
			continue;
		}
		if (used + n >= size)
			break;
		memcpy(buf + used, s, n);
		used += n;
		s += n;
	}
	buf[used] = '\0';
}
