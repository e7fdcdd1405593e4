// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "analysis.h"
#include "analyze.h"
#include "db.h"
#include "log.h"
#include "paths.h"
#include "rules.h"
#include "util.h"

struct analysis {
	struct rules *rules;
	struct path_totals totals;
	int64_t last_interval_id;	/* path rows added up to here */
};

int analysis_new(struct analysis **ret)
{
	struct analysis *a = calloc(1, sizeof(*a));
	int r;

	if (!a)
		return log_oom();
	a->rules = rules_new();
	if (!a->rules) {
		free(a);
		return log_oom();
	}
	r = rules_load_system(a->rules);
	if (r < 0) {
		analysis_free(a);
		return r;
	}
	*ret = a;
	return 0;
}

void analysis_free(struct analysis *a)
{
	if (!a)
		return;
	rules_free(a->rules);
	free(a);
}

const struct path_totals *analysis_totals(const struct analysis *a)
{
	return &a->totals;
}

static int add_totals(struct analysis *a, sqlite3 *db, int64_t boot_id)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	struct path_totals *t = &a->totals;
	int r, rc;

	r = db_prepare(db, &st,
		       "SELECT p.interval_id, p.path, p.lcl_hitm, p.rmt_hitm, p.peer, p.samples, p.work"
		       " FROM path_intervals p JOIN intervals i USING (interval_id)"
		       " WHERE i.boot_id = ?1 AND p.interval_id > ?2"
		       " ORDER BY p.interval_id");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_int64(st, 2, a->last_interval_id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int k = path_index((const char *)sqlite3_column_text(st, 1));

		if (k < 0)	/* other: and unresolved */
			continue;
		a->last_interval_id = sqlite3_column_int64(st, 0);
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			t->measured[k] = true;
			t->lcl_hitm[k] += sqlite3_column_int64(st, 2);
			t->rmt_hitm[k] += sqlite3_column_int64(st, 3);
			t->peer[k] += sqlite3_column_int64(st, 4);
			t->samples[k] += sqlite3_column_int64(st, 5);
		}
		t->work[k] += sqlite3_column_double(st, 6);
	}
	/* not ignored: analysis_step() fails, and mmhitmd says so once */
	if (rc != SQLITE_DONE)
		return db_step_failed(st, rc);
	return 0;
}

int analysis_step(struct analysis *a, sqlite3 *db, int64_t boot_id)
{
	struct analyze_stats st;
	int r;

	/* Incremental: a quiet interval costs a few queries. */
	r = analyze_db(db, a->rules, 0, &st);
	if (r < 0)
		return r;
	return add_totals(a, db, boot_id);
}
