// SPDX-License-Identifier: GPL-2.0
/*
 * The report's answers as CSV (`mmhitm report --csv`): one row per path,
 * what the summary's first lines say, with the JSON's summary.paths keys
 * as the header so a script can read either. Every path has a row, an
 * empty report too: its reason says why there is no verdict.
 */
#include <errno.h>
#include <math.h>

#include "csvw.h"
#include "report-model.h"
#include "util.h"

static const char *const answer_cols[] = {
	"path", "scope", "verdict", "change", "ci_low", "ci_high", "ci_level", "basis", "reason",
	"judgeable_from", "judgeable_from_ns",
};

static void answer_row(struct csvw *w, int p, const struct answer *a)
{
	char when[40];

	csvw_str(w, path_get(p)->id);
	csvw_str(w, a->host ? "host" : "fleet");
	csvw_str(w, verdict_to_string(a->verdict));
	csvw_num(w, a->change);
	csvw_num(w, a->lo);
	csvw_num(w, a->hi);
	csvw_num(w, a->level);
	csvw_str(w, a->basis);
	csvw_str(w, a->reason);
	if (a->from_ns) {
		fmt_time(when, sizeof(when), a->from_ns);
		csvw_str(w, when);
		csvw_int(w, a->from_ns);
	} else {
		csvw_str(w, NULL);
		csvw_str(w, NULL);
	}
	csvw_end(w);
}

int report_write_csv(const struct report *r, FILE *f)
{
	struct csvw w;

	csvw_init(&w, f);
	for (size_t k = 0; k < ARRAY_SIZE(answer_cols); k++)
		csvw_str(&w, answer_cols[k]);
	csvw_end(&w);
	for (int p = 0; p < paths_nr(); p++)
		answer_row(&w, p, &r->answer[p]);
	return ferror(f) ? -EIO : 0;
}
