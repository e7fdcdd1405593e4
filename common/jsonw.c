// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "escape.h"
#include "jsonw.h"

void jsonw_init(struct jsonw *w, FILE *f)
{
	*w = (struct jsonw){ .f = f };
	w->first[0] = true;
}

/* The separator and the key before a value at the current depth. */
static void member(struct jsonw *w, const char *key)
{
	if (!w->first[w->depth])
		fputc(',', w->f);
	w->first[w->depth] = false;
	if (key) {
		json_puts(w->f, key);
		fputc(':', w->f);
	}
}

static void open_(struct jsonw *w, const char *key, char c)
{
	member(w, key);
	fputc(c, w->f);
	if (w->depth + 1 >= JSONW_MAX_DEPTH) {
		w->overflow = true;
		return;
	}
	w->first[++w->depth] = true;
	w->close[w->depth] = c == '{' ? '}' : ']';
}

void jsonw_object(struct jsonw *w, const char *key)
{
	open_(w, key, '{');
}

void jsonw_array(struct jsonw *w, const char *key)
{
	open_(w, key, '[');
}

void jsonw_end(struct jsonw *w)
{
	if (w->depth == 0) {
		w->overflow = true;
		return;
	}
	fputc(w->close[w->depth--], w->f);
}

void jsonw_str(struct jsonw *w, const char *key, const char *v)
{
	member(w, key);
	json_puts(w->f, v);
}

void jsonw_int(struct jsonw *w, const char *key, int64_t v)
{
	member(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void jsonw_uint(struct jsonw *w, const char *key, uint64_t v)
{
	member(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void jsonw_numg(struct jsonw *w, const char *key, int digits, double v)
{
	member(w, key);
	if (isnan(v))
		fputs("null", w->f);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", w->f);
	else
		fprintf(w->f, "%.*g", digits, v);
}

/* json_num(): the shortest form that reads back equal. */
void jsonw_num(struct jsonw *w, const char *key, double v)
{
	member(w, key);
	json_num(w->f, v);
}

void jsonw_bool(struct jsonw *w, const char *key, bool v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jsonw_null(struct jsonw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

int jsonw_finish(struct jsonw *w)
{
	fputc('\n', w->f);
	if (w->overflow || w->depth)
		return -EINVAL;
	return ferror(w->f) ? -EIO : 0;
}
