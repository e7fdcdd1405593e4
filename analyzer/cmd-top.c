// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm top: the typed top cache lines, laid out like perf c2c report
 * --stdio's "Shared Data Cache Line Table" and "Shared Cache Line
 * Distribution Pareto", plus the object type, field, owning process and
 * path analyze gave each sampled offset.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "commands.h"
#include "csvw.h"
#include "db.h"
#include "escape.h"
#include "jsonw.h"
#include "log.h"
#include "util.h"

void cmd_top_help(void)
{
	printf("Usage: mmhitm top [--db PATH]... [--since TIME] [--until TIME] [--limit N]\n"
	       "                  [--boot ID] [--no-detail] [--json|--csv] [DB...]\n\n"
	       "Prints the cache lines with the most HITM (local + remote, plus peer\n"
	       "transfers) in the time range, like perf c2c report --stdio, with what\n"
	       "'mmhitm analyze' made of them: object type, field, owning process (for\n"
	       "an mm_struct) or pfn (for a struct page), and path. Then, per line, the\n"
	       "sampled offsets with their field, symbol, path and rule. Each path says\n"
	       "what its typing rests on: object (a learned object), layout (the kernel's\n"
	       "memory layout and BTF) or path (the code path alone); an unresolved\n"
	       "offset says what would resolve it.\n\n"
	       "  --since, --until TIME  UTC 'YYYY-MM-DD[THH:MM[:SS]][Z]', '@EPOCH' seconds,\n"
	       "                         'now', a duration before now ('2h', '-30min', '7d'), an\n"
	       "                         ISO week's Monday ('2025-W12'), 'today', 'yesterday',\n"
	       "                         'this-week' or 'last-week' (their first midnight)\n"
	       "  --db PATH              a database (repeatable, or as arguments): each gets\n"
	       "                         its own table\n"
	       "  --json                 the line tables as one JSON object, one entry per\n"
	       "                         database (no per-offset detail; docs/json.md)\n"
	       "  --csv                  the line tables as CSV, one row per line with its\n"
	       "                         database, a header row first\n"
	       "  --limit N              lines to show (default 20)\n"
	       "  --boot ID              only this boot (see 'mmhitm status')\n"
	       "  --no-detail            only the line table\n");
}

struct range {
	int64_t since, until, boot;	/* boot 0: all */
};

static void bind_range(sqlite3_stmt *st, const struct range *rg)
{
	sqlite3_bind_int64(st, 1, rg->since);
	sqlite3_bind_int64(st, 2, rg->until);
	sqlite3_bind_int64(st, 3, rg->boot);
}

#define RANGE_SQL " i.start_ns < ?2 AND i.end_ns > ?1 AND (?3 = 0 OR i.boot_id = ?3) "

static void fmt_time(int64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "?");
}

static double pct(int64_t a, int64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* What one line is: its dominant object, fields, owner and paths. */
struct line_kind {
	char object[24];
	char fields[64];
	char owner[40];
	char paths[96];
};

/* Adds s to a comma-separated list unless it is there; "+" when full. */
static void append(char *buf, size_t size, const char *s)
{
	size_t len = strlen(buf), sl = strlen(s);

	for (const char *p = buf; *p;) {
		size_t tl = strcspn(p, ",");

		if (tl == sl && strncmp(p, s, sl) == 0)
			return;
		p += tl;
		if (*p == ',')
			p++;
	}
	if (len + sl + 2 >= size) {
		if (len + 2 < size && (!len || buf[len - 1] != '+'))
			strcat(buf, "+");
		return;
	}
	if (len)
		strcat(buf, ",");
	strcat(buf, s);
}

/* Who an object belongs to, from a line_kind row. */
static void line_owner(sqlite3_stmt *st, const char *obj, char *buf, size_t size)
{
	const char *comm = (const char *)sqlite3_column_text(st, 3);
	int64_t ref = sqlite3_column_int64(st, 4);

	if (strcmp(obj, "mm_struct") == 0 && sqlite3_column_type(st, 2) != SQLITE_NULL)
		snprintf(buf, size, "%d %s", sqlite3_column_int(st, 2), comm ? comm : "?");
	else if (strcmp(obj, "mm_struct") == 0)
		snprintf(buf, size, "mm #%" PRId64 " (owner unknown)", ref);
	else if (strcmp(obj, "page") == 0)
		snprintf(buf, size, "pfn 0x%" PRIx64, (uint64_t)ref);
	else if (strcmp(obj, "lruvec") == 0)
		snprintf(buf, size, "lruvec #%" PRId64, ref);
}

static int line_kind(sqlite3 *db, const struct range *rg, int64_t boot, int64_t line,
		     int64_t line_hitm, struct line_kind *k)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL, *paths = NULL;
	int r, rc;

	*k = (struct line_kind){};
	r = db_prepare(db, &st,
		       "SELECT coalesce(a.object_type, '-'), a.field, m.tgid, m.comm, a.object_ref,"
		       " sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS h,"
		       " sum(l.loads + l.stores + l.noparse) AS s"
		       " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		       " JOIN intervals i USING (interval_id)"
		       " LEFT JOIN mm_objects m ON a.object_type = 'mm_struct' AND m.mm_object_id = a.object_ref"
		       " WHERE" RANGE_SQL "AND i.boot_id = ?4 AND a.line_addr = ?5"
		       " GROUP BY 1, 2, 3, 4, 5 ORDER BY h DESC, s DESC");
	if (r >= 0)
		r = db_prepare(db, &paths,
			       "SELECT a.path || coalesce(' (' || group_concat(DISTINCT a.grade) || ')', ''),"
			       " sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS h,"
			       " sum(l.loads + l.stores + l.noparse) AS s"
			       " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
			       " JOIN intervals i USING (interval_id)"
			       " WHERE" RANGE_SQL "AND i.boot_id = ?4 AND a.line_addr = ?5"
			       " GROUP BY a.path ORDER BY h DESC, s DESC, a.path");
	if (r < 0)
		return r;
	bind_range(st, rg);
	sqlite3_bind_int64(st, 4, boot);
	sqlite3_bind_int64(st, 5, line);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *obj = (const char *)sqlite3_column_text(st, 0);
		const char *field = (const char *)sqlite3_column_text(st, 1);

		/* the object and owner of the hottest typed row; every type seen */
		if (strcmp(obj, "-") != 0) {
			if (!k->object[0])
				line_owner(st, obj, k->owner, sizeof(k->owner));
			append(k->object, sizeof(k->object), obj);
		}
		if (field)
			append(k->fields, sizeof(k->fields), field);
	}
	if (rc != SQLITE_DONE)
		return log_error_errno(db_errno(rc), "Failed to read line_attribution: %s", sqlite3_errmsg(db));

	bind_range(paths, rg);
	sqlite3_bind_int64(paths, 4, boot);
	sqlite3_bind_int64(paths, 5, line);
	while ((rc = sqlite3_step(paths)) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(paths, 0);
		int64_t h = sqlite3_column_int64(paths, 1);
		char buf[64];

		if (line_hitm && h < line_hitm)
			snprintf(buf, sizeof(buf), "%s %.0f%%", path, pct(h, line_hitm));
		else
			snprintf(buf, sizeof(buf), "%s", path);
		append(k->paths, sizeof(k->paths), buf);
	}
	if (rc != SQLITE_DONE)
		return log_error_errno(db_errno(rc), "Failed to read line_attribution: %s", sqlite3_errmsg(db));
	if (!k->object[0])
		snprintf(k->object, sizeof(k->object), "-");
	if (!k->fields[0])
		snprintf(k->fields, sizeof(k->fields), "-");
	if (!k->owner[0])
		snprintf(k->owner, sizeof(k->owner), "-");
	return 0;
}

static int print_detail(sqlite3 *db, const struct range *rg, int idx, int64_t boot, int64_t line,
			const struct line_kind *k)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t tot_rmt = 0, tot_lcl = 0, tot_peer = 0, tot_st = 0;
	int r, rc;

	r = db_prepare(db, &st,
		       "SELECT a.offset, coalesce(a.field, '-'), a.field_offset,"
		       " coalesce(a.symbol, printf('0x%016x', a.ip)),"
		       " a.path || coalesce('/' || a.grade, ''), coalesce(a.rule, '-'),"
		       " sum(l.rmt_hitm), sum(l.lcl_hitm), sum(l.lcl_peer + l.rmt_peer), sum(l.stores),"
		       " sum(l.loads + l.stores + l.noparse), coalesce(s.symbols, ''),"
		       " sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS h, a.reason"
		       " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		       " JOIN intervals i USING (interval_id)"
		       " LEFT JOIN callchain_symbols s ON s.callchain_id = a.callchain_id"
		       " WHERE" RANGE_SQL "AND i.boot_id = ?4 AND a.line_addr = ?5"
		       " GROUP BY a.offset, a.field, a.field_offset, a.ip, a.callchain_id, a.path, a.rule,"
		       " a.grade ORDER BY a.offset, h DESC");
	if (r < 0)
		return r;
	/* totals first: the columns are shares of the line, as c2c's Pareto */
	for (int pass = 0; pass < 2; pass++) {
		bind_range(st, rg);
		sqlite3_bind_int64(st, 4, boot);
		sqlite3_bind_int64(st, 5, line);
		if (pass == 1) {
			printf("  ----------------------------------------------------------------------\n");
			printf("  %5d  0x%016" PRIx64 "  boot %" PRId64 "  %s  %s  %s\n", idx,
			       (uint64_t)line, boot, k->object, k->owner, k->paths);
			printf("  ----------------------------------------------------------------------\n");
		}
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t rmt = sqlite3_column_int64(st, 6), lcl = sqlite3_column_int64(st, 7);
			int64_t peer = sqlite3_column_int64(st, 8), stores = sqlite3_column_int64(st, 9);
			char field[160];

			if (pass == 0) {
				tot_rmt += rmt;
				tot_lcl += lcl;
				tot_peer += peer;
				tot_st += stores;
				continue;
			}
			if (sqlite3_column_type(st, 2) != SQLITE_NULL && sqlite3_column_int(st, 2))
				snprintf(field, sizeof(field), "%s+%d", sqlite3_column_text(st, 1),
					 sqlite3_column_int(st, 2));
			else
				snprintf(field, sizeof(field), "%s", sqlite3_column_text(st, 1));
			printf("  %7.2f%% %7.2f%% %7.2f%% %7.2f%% %6" PRId64 "  0x%02x  %-22s %-34s %-16s %s\n",
			       pct(rmt, tot_rmt), pct(lcl, tot_lcl), pct(peer, tot_peer), pct(stores, tot_st),
			       (int64_t)sqlite3_column_int64(st, 10), sqlite3_column_int(st, 0), field,
			       sqlite3_column_text(st, 3), sqlite3_column_text(st, 4), sqlite3_column_text(st, 5));
			if (*(const char *)sqlite3_column_text(st, 11))
				printf("  %48s chain: %s\n", "", sqlite3_column_text(st, 11));
			if (startswith((const char *)sqlite3_column_text(st, 4), "unresolved") &&
			    sqlite3_column_text(st, 13))
				printf("  %48s why: %s\n", "", sqlite3_column_text(st, 13));
		}
		if (rc != SQLITE_DONE)
			return log_error_errno(db_errno(rc), "Failed to read line_attribution: %s",
					       sqlite3_errmsg(db));
		sqlite3_reset(st);
	}
	return 0;
}

/*
 * Why the range has no attributed kernel samples, and what would give
 * some: the first of no intervals at all, no memory samples (no PMU), only
 * user-space ones, samples not analyzed, kernel samples outside the range.
 */
static void explain_empty(sqlite3 *db, const struct range *rg, char *buf, size_t size)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t iv = 0, kern = 0, user = 0, analyzed = 0, pmu_boots = 0, lo = 0, hi = 0;
	char a[32], b[32], pmu[200] = "";

	snprintf(buf, size, "nothing recorded in this range");
	if (db_prepare(db, &st,
		"SELECT (SELECT count(*) FROM intervals i WHERE" RANGE_SQL "),"
		" (SELECT count(*) FROM mem_lines l JOIN intervals i USING (interval_id) WHERE" RANGE_SQL
		"  AND l.kernel = 1),"
		" (SELECT count(*) FROM mem_lines l JOIN intervals i USING (interval_id) WHERE" RANGE_SQL
		"  AND l.kernel = 0),"
		" (SELECT count(*) FROM line_attribution a JOIN intervals i USING (interval_id) WHERE" RANGE_SQL "),"
		" (SELECT count(*) FROM boots WHERE pmu_kind != 'none'),"
		" (SELECT min(i.start_ns) FROM mem_lines l JOIN intervals i USING (interval_id) WHERE l.kernel = 1),"
		" (SELECT max(i.end_ns) FROM mem_lines l JOIN intervals i USING (interval_id) WHERE l.kernel = 1),"
		" (SELECT pmu_detail FROM boots ORDER BY last_seen_ns DESC LIMIT 1)") < 0)
		return;
	bind_range(st, rg);
	if (sqlite3_step(st) != SQLITE_ROW)
		return;
	iv = sqlite3_column_int64(st, 0);
	kern = sqlite3_column_int64(st, 1);
	user = sqlite3_column_int64(st, 2);
	analyzed = sqlite3_column_int64(st, 3);
	pmu_boots = sqlite3_column_int64(st, 4);
	lo = sqlite3_column_int64(st, 5);
	hi = sqlite3_column_int64(st, 6);
	if (sqlite3_column_text(st, 7))
		text_safe(pmu, sizeof(pmu), (const char *)sqlite3_column_text(st, 7));
	if (!iv && hi) {
		fmt_time(lo, a, sizeof(a));
		fmt_time(hi, b, sizeof(b));
		snprintf(buf, size, "no intervals in this range; the sampled ones run from %s to %s "
			 "(--since/--until)", a, b);
	} else if (!iv) {
		snprintf(buf, size, "no intervals in this range: is mmhitmd recording (mmhitm status "
			 "--check)?");
	} else if (!kern && !user && !pmu_boots) {
		snprintf(buf, size, "no memory samples: no boot here has a memory-sampling PMU (%s); "
			 "a host with Intel PEBS, AMD IBS or Arm SPE samples them, or import a "
			 "'perf c2c record' file from one (mmhitm import)", *pmu ? pmu : "none found");
	} else if (!kern && user) {
		snprintf(buf, size, "only user-space samples (%" PRId64 " lines): the kernel's lines are "
			 "what the paths are about", user);
	} else if (!kern) {
		snprintf(buf, size, "no kernel memory samples in this range, though a PMU samples: "
			 "little contention, or a range without load");
	} else if (!analyzed) {
		snprintf(buf, size, "%" PRId64 " kernel sample lines not analyzed yet: run 'mmhitm "
			 "analyze'", kern);
	}
}

/* perf c2c's table header; false when there is nothing to put under it. */
static bool print_header(sqlite3 *db, const struct range *rg, const char *a, const char *b,
			 int64_t nlines, int64_t samples, int64_t hitm, int64_t lcl, int64_t rmt,
			 int64_t peer)
{
	printf("=================================================\n"
	       "      Shared Data Cache Line Table (typed)\n"
	       "=================================================\n#\n");
	if (!samples) {
		char why[512];

		explain_empty(db, rg, why, sizeof(why));
		printf("# no attributed kernel samples in this range: %s\n", why);
		return false;
	}
	printf("# %s .. %s: %" PRId64 " lines, %" PRId64 " samples, HITM %" PRId64
	       " (lcl %" PRId64 ", rmt %" PRId64 ", peer %" PRId64 ")\n#\n", a, b, nlines, samples,
	       hitm, lcl, rmt, peer);
	printf("#        ------------ Cacheline ------------     Tot  ----- Load Hitm -----    Total    Total    Total\n");
	printf("# Index             Address  Boot     Hitm    Hitm      Lcl      Rmt     Peer  records    Loads   Stores  %-10s %-28s %-22s %s\n",
	       "Object", "Field(s)", "Owner", "Path");
	return true;
}

/*
 * The table of the top lines: as perf c2c report --stdio lays it out, or
 * into w or cw (no per-offset detail then) when one is not NULL.
 */
static int top(sqlite3 *db, const struct range *rg, int limit, bool detail, struct jsonw *w,
	       struct csvw *cw, const char *dbname)
{
	_cleanup_finalize_ sqlite3_stmt *tot = NULL, *lines = NULL, *pending = NULL;
	int64_t hitm = 0, lcl = 0, rmt = 0, peer = 0, samples = 0, nlines = 0, t0 = 0, t1 = 0;
	int64_t *boots = NULL, *addrs = NULL;
	struct line_kind *kinds = NULL;
	char a[32], b[32];
	int n = 0, r, rc;

	r = db_prepare(db, &tot,
		       "SELECT sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer), sum(l.lcl_hitm),"
		       " sum(l.rmt_hitm), sum(l.lcl_peer + l.rmt_peer), sum(l.loads + l.stores + l.noparse),"
		       " count(DISTINCT i.boot_id || ':' || a.line_addr), min(i.start_ns), max(i.end_ns)"
		       " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		       " JOIN intervals i USING (interval_id) WHERE" RANGE_SQL);
	if (r < 0)
		return r;
	bind_range(tot, rg);
	if (sqlite3_step(tot) == SQLITE_ROW) {
		hitm = sqlite3_column_int64(tot, 0);
		lcl = sqlite3_column_int64(tot, 1);
		rmt = sqlite3_column_int64(tot, 2);
		peer = sqlite3_column_int64(tot, 3);
		samples = sqlite3_column_int64(tot, 4);
		nlines = sqlite3_column_int64(tot, 5);
		t0 = sqlite3_column_int64(tot, 6);
		t1 = sqlite3_column_int64(tot, 7);
	}

	/* Sampled intervals analyze has not seen are not silently missing. */
	r = db_prepare(db, &pending,
		       "SELECT count(*) FROM intervals i WHERE" RANGE_SQL
		       " AND EXISTS (SELECT 1 FROM mem_lines l WHERE l.interval_id = i.interval_id AND l.kernel = 1)"
		       " AND NOT EXISTS (SELECT 1 FROM line_attribution a WHERE a.interval_id = i.interval_id)");
	if (r < 0)
		return r;
	bind_range(pending, rg);
	if (sqlite3_step(pending) == SQLITE_ROW && sqlite3_column_int64(pending, 0))
		log_warning("%" PRId64 " sampled intervals in this range are not analyzed yet: "
			    "run 'mmhitm analyze'", (int64_t)sqlite3_column_int64(pending, 0));

	r = db_prepare(db, &lines,
		       "SELECT i.boot_id, a.line_addr,"
		       " sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS h, sum(l.lcl_hitm),"
		       " sum(l.rmt_hitm), sum(l.lcl_peer + l.rmt_peer), sum(l.loads + l.stores + l.noparse) AS s,"
		       " sum(l.loads), sum(l.stores)"
		       " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		       " JOIN intervals i USING (interval_id) WHERE" RANGE_SQL
		       " GROUP BY i.boot_id, a.line_addr ORDER BY h DESC, s DESC, a.line_addr LIMIT ?4");
	if (r < 0)
		return r;
	bind_range(lines, rg);
	sqlite3_bind_int(lines, 4, limit);

	fmt_time(t0, a, sizeof(a));
	fmt_time(t1, b, sizeof(b));
	if (w) {
		jsonw_str(w, "from", samples ? a : NULL);
		jsonw_str(w, "to", samples ? b : NULL);
		jsonw_int(w, "lines_total", nlines);
		jsonw_int(w, "records", samples);
		jsonw_int(w, "hitm", hitm);
		jsonw_int(w, "lcl_hitm", lcl);
		jsonw_int(w, "rmt_hitm", rmt);
		jsonw_int(w, "peer", peer);
		jsonw_array(w, "lines");
	}
	if (w && !samples) {
		char why[512];

		jsonw_end(w);
		explain_empty(db, rg, why, sizeof(why));
		jsonw_str(w, "empty_because", why);
		return 0;
	}
	if (cw && !samples)
		return 0;
	if (!w && !cw && !print_header(db, rg, a, b, nlines, samples, hitm, lcl, rmt, peer))
		return 0;

	boots = calloc((size_t)limit, sizeof(*boots));
	addrs = calloc((size_t)limit, sizeof(*addrs));
	kinds = calloc((size_t)limit, sizeof(*kinds));
	if (!boots || !addrs || !kinds) {
		r = log_oom();
		goto out;
	}
	while ((rc = sqlite3_step(lines)) == SQLITE_ROW && n < limit) {
		int64_t h = sqlite3_column_int64(lines, 2);

		boots[n] = sqlite3_column_int64(lines, 0);
		addrs[n] = sqlite3_column_int64(lines, 1);
		r = line_kind(db, rg, boots[n], addrs[n], h, &kinds[n]);
		if (r < 0)
			goto out;
		if (cw) {
			char addr[24];

			snprintf(addr, sizeof(addr), "0x%016" PRIx64, (uint64_t)addrs[n]);
			csvw_str(cw, dbname);
			csvw_int(cw, n);
			csvw_str(cw, addr);
			csvw_int(cw, boots[n]);
			csvw_num(cw, pct(h, hitm) / 100);
			csvw_int(cw, h);
			for (int k = 3; k <= 8; k++)
				csvw_int(cw, sqlite3_column_int64(lines, k));
			csvw_str(cw, kinds[n].object);
			csvw_str(cw, kinds[n].fields);
			csvw_str(cw, kinds[n].owner);
			csvw_str(cw, kinds[n].paths);
			csvw_end(cw);
			n++;
			continue;
		}
		if (w) {
			char addr[24];

			snprintf(addr, sizeof(addr), "0x%016" PRIx64, (uint64_t)addrs[n]);
			jsonw_object(w, NULL);
			jsonw_int(w, "index", n);
			jsonw_str(w, "address", addr);
			jsonw_int(w, "boot", boots[n]);
			jsonw_num(w, "hitm_share", pct(h, hitm) / 100);
			jsonw_int(w, "hitm", h);
			jsonw_int(w, "lcl_hitm", sqlite3_column_int64(lines, 3));
			jsonw_int(w, "rmt_hitm", sqlite3_column_int64(lines, 4));
			jsonw_int(w, "peer", sqlite3_column_int64(lines, 5));
			jsonw_int(w, "records", sqlite3_column_int64(lines, 6));
			jsonw_int(w, "loads", sqlite3_column_int64(lines, 7));
			jsonw_int(w, "stores", sqlite3_column_int64(lines, 8));
			jsonw_str(w, "object", kinds[n].object);
			jsonw_str(w, "fields", kinds[n].fields);
			jsonw_str(w, "owner", kinds[n].owner);
			jsonw_str(w, "paths", kinds[n].paths);
			jsonw_end(w);
			n++;
			continue;
		}
		printf("  %5d  0x%016" PRIx64 "  %4" PRId64 "  %6.2f%%  %6" PRId64 "  %7" PRId64 "  %7"
		       PRId64 "  %7" PRId64 "  %7" PRId64 "  %7" PRId64 "  %7" PRId64 "  %-10s %-28s %-22s %s\n",
		       n, (uint64_t)addrs[n], boots[n], pct(h, hitm), h,
		       (int64_t)sqlite3_column_int64(lines, 3), (int64_t)sqlite3_column_int64(lines, 4),
		       (int64_t)sqlite3_column_int64(lines, 5), (int64_t)sqlite3_column_int64(lines, 6),
		       (int64_t)sqlite3_column_int64(lines, 7), (int64_t)sqlite3_column_int64(lines, 8),
		       kinds[n].object, kinds[n].fields, kinds[n].owner, kinds[n].paths);
		n++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		r = log_error_errno(db_errno(rc), "Failed to read lines: %s", sqlite3_errmsg(db));
		goto out;
	}
	if (w)
		jsonw_end(w);
	if (detail && !w && !cw) {
		printf("\n=================================================\n"
		       "      Shared Cache Line Distribution Pareto (typed)\n"
		       "=================================================\n#\n");
		printf("#  ------- HITM -------  -- Store --  Total\n");
		printf("#   RmtHitm   LclHitm     Peer   Stores records  Off   %-22s %-34s %-16s %s\n",
		       "Field", "Symbol", "Path", "Rule");
		for (int i = 0; i < n; i++) {
			r = print_detail(db, rg, i, boots[i], addrs[i], &kinds[i]);
			if (r < 0)
				goto out;
		}
	}
	r = 0;
out:
	free(boots);
	free(addrs);
	free(kinds);
	return r;
}

/* One database's top lines, text or into w; -errno (said). */
static int top_db(const char *path, const struct range *rg, int limit, bool detail, bool many,
		  struct jsonw *w, struct csvw *cw)
{
	sqlite3 *db = NULL;
	int r;

	if (w) {
		jsonw_object(w, NULL);
		jsonw_str(w, "database", path);
	} else if (many && !cw) {
		printf("\n== %s\n", path);
	}
	r = db_open(path, DB_READONLY | DB_NO_CREATE, &db);
	if (r >= 0)
		r = top(db, rg, limit, detail, w, cw, path);
	db_close(db);
	if (w) {
		if (r < 0)
			jsonw_str(w, "error", strerror(-r));
		jsonw_end(w);
	}
	return r;
}

int cmd_top(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db",        required_argument, NULL, 'd' },
		{ "since",     required_argument, NULL, 's' },
		{ "until",     required_argument, NULL, 'u' },
		{ "limit",     required_argument, NULL, 'n' },
		{ "boot",      required_argument, NULL, 'b' },
		{ "no-detail", no_argument,       NULL, 'D' },
		{ "json",      no_argument,       NULL, 'j' },
		{ "csv",       no_argument,       NULL, 'c' },
		{ "help",      no_argument,       NULL, 'h' },
		{}
	};
	struct range rg = { .since = 0, .until = INT64_MAX };
	_cleanup_free_ const char **dbs = calloc((size_t)argc + 1, sizeof(char *));
	static const char *const csv_cols[] = {
		"database", "index", "address", "boot", "hitm_share", "hitm", "lcl_hitm", "rmt_hitm",
		"peer", "records", "loads", "stores", "object", "fields", "owner", "paths",
	};
	bool detail = true, json = false, csv = false;
	struct csvw cw;
	size_t nr_dbs = 0;
	int64_t limit = 20;
	struct jsonw w;
	int c, r = 0;

	if (!dbs)
		return log_oom();
	while ((c = cli_getopt(argc, argv, "d:n:h", opts, "mmhitm top")) != -1) {
		switch (c) {
		case 'd': dbs[nr_dbs++] = optarg; break;
		case 's':
		case 'u':
			if (parse_time_ns(optarg, now_ns(CLOCK_REALTIME), c == 's' ? &rg.since : &rg.until) < 0) {
				log_error("Invalid --%s '%s': " TIME_FORMS, c == 's' ? "since" : "until",
					  optarg);
				return CMD_USAGE;
			}
			break;
		case 'n':
			if (parse_i64(optarg, &limit) < 0 || limit < 1 || limit > 100000) {
				log_error("Invalid --limit '%s': 1 to 100000", optarg);
				return CMD_USAGE;
			}
			break;
		case 'b':
			if (parse_i64(optarg, &rg.boot) < 0 || rg.boot < 1) {
				log_error("Invalid --boot '%s': a boot id (mmhitm status lists them)", optarg);
				return CMD_USAGE;
			}
			break;
		case 'D': detail = false; break;
		case 'j': json = true; break;
		case 'c': csv = true; break;
		case 'h': cmd_top_help(); return 0;
		default: return CMD_USAGE;
		}
	}
	while (optind < argc)
		dbs[nr_dbs++] = argv[optind++];
	if (!nr_dbs)
		dbs[nr_dbs++] = default_db_path();
	if (rg.since >= rg.until) {
		log_error("--since must be before --until");
		return CMD_USAGE;
	}
	if (json && csv) {
		log_error("--json or --csv, not both");
		return CMD_USAGE;
	}
	if (json) {
		jsonw_init(&w, stdout);
		jsonw_object(&w, NULL);
		jsonw_array(&w, "databases");
	}
	if (csv) {
		csvw_init(&cw, stdout);
		for (size_t k = 0; k < ARRAY_SIZE(csv_cols); k++)
			csvw_str(&cw, csv_cols[k]);
		csvw_end(&cw);
	}
	/* every database, each on its own; the first error is the exit's */
	for (size_t i = 0; i < nr_dbs; i++) {
		int k = top_db(dbs[i], &rg, (int)limit, detail, nr_dbs > 1, json ? &w : NULL,
			       csv ? &cw : NULL);

		if (k < 0 && r == 0)
			r = k;
	}
	if (json) {
		jsonw_end(&w);
		jsonw_end(&w);
		if (jsonw_finish(&w) < 0 && r == 0)
			r = log_error_errno(EIO, "Failed to write the JSON");
	}
	return r;
}
