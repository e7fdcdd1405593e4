/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_JSONW_H
#define MMHITM_JSONW_H

/*
 * The one JSON writer: every program's JSON goes through it. It keeps
 * the nesting, so commas are never the caller's business, and it writes
 * strings through json_puts() (host-originated text is escaped, bad UTF-8
 * replaced). Numbers: a NaN is null; an infinity is the string "inf" or
 * "-inf" (JSON has no infinity; the report schema documents the strings).
 *
 * key is the member name inside an object and must be NULL inside an
 * array or at the top.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 32

struct jsonw {
	FILE *f;
	int depth;
	bool first[JSONW_MAX_DEPTH];
	char close[JSONW_MAX_DEPTH];	/* '}' or ']' per open level */
	bool overflow;		/* nested deeper than JSONW_MAX_DEPTH: a bug */
};

void jsonw_init(struct jsonw *w, FILE *f);
void jsonw_object(struct jsonw *w, const char *key);
void jsonw_array(struct jsonw *w, const char *key);
void jsonw_end(struct jsonw *w);	/* closes the innermost object or array */

void jsonw_str(struct jsonw *w, const char *key, const char *v);	/* NULL: null */
void jsonw_int(struct jsonw *w, const char *key, int64_t v);
void jsonw_uint(struct jsonw *w, const char *key, uint64_t v);
void jsonw_num(struct jsonw *w, const char *key, double v);	/* %.17g: round-trips */
void jsonw_numg(struct jsonw *w, const char *key, int digits, double v);	/* %.*g */
void jsonw_bool(struct jsonw *w, const char *key, bool v);
void jsonw_null(struct jsonw *w, const char *key);

/* After the outermost value: a newline; -EIO if the stream failed, -EINVAL
 * if the nesting was unbalanced. */
int jsonw_finish(struct jsonw *w);

#endif
