// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "csvw.h"
#include "escape.h"

void csvw_init(struct csvw *w, FILE *f)
{
	w->f = f;
	w->first = true;
}

static void sep(struct csvw *w)
{
	if (!w->first)
		fputc(',', w->f);
	w->first = false;
}

void csvw_str(struct csvw *w, const char *s)
{
	char buf[1024];

	sep(w);
	if (!s)
		return;
	text_safe(buf, sizeof(buf), s);
	if (!strpbrk(buf, ",\"\r\n")) {
		fputs(buf, w->f);
		return;
	}
	fputc('"', w->f);
	for (const char *p = buf; *p; p++) {
		if (*p == '"')
			fputc('"', w->f);
		fputc(*p, w->f);
	}
	fputc('"', w->f);
}

void csvw_int(struct csvw *w, int64_t v)
{
	sep(w);
	fprintf(w->f, "%" PRId64, v);
}

void csvw_num(struct csvw *w, double v)
{
	sep(w);
	if (!isnan(v))
		fprintf(w->f, "%.17g", v);
}

void csvw_end(struct csvw *w)
{
	fputc('\n', w->f);
	w->first = true;
}
