// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
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
	char small[1024], *big = NULL, *buf = small;
	size_t n;

	sep(w);
	if (!s)
		return;
	/* text_safe() never lengthens: a long field (a report's reason) is
	 * written whole, cut at 1 KiB only when there is no memory for it */
	n = strlen(s) + 1;
	if (n > sizeof(small) && (big = malloc(n)))
		buf = big;
	text_safe(buf, big ? n : sizeof(small), s);
	if (!strpbrk(buf, ",\"\r\n")) {
		fputs(buf, w->f);
	} else {
		fputc('"', w->f);
		for (const char *p = buf; *p; p++) {
			if (*p == '"')
				fputc('"', w->f);
			fputc(*p, w->f);
		}
		fputc('"', w->f);
	}
	free(big);
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
