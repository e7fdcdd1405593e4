/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CSVW_H
#define MMHITM_CSVW_H

/*
 * CSV as RFC 4180 has it, for the commands' --csv: fields separated by
 * commas, a field with a comma, quote, CR or LF quoted with its quotes
 * doubled, records ending in LF (which every reader takes).
 * Control characters in host-originated text become '?' as on a terminal.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct csvw {
	FILE *f;
	bool first;	/* no field yet in this record */
};

void csvw_init(struct csvw *w, FILE *f);
void csvw_str(struct csvw *w, const char *s);	/* NULL: empty */
void csvw_int(struct csvw *w, int64_t v);
void csvw_num(struct csvw *w, double v);	/* NaN: empty */
void csvw_end(struct csvw *w);			/* ends the record */

#endif
