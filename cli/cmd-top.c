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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cluster.h"
#include "config.h"
#include "http.h"
#include "source.h"
#include "commands.h"
#include "csvw.h"
#include "db.h"
#include "escape.h"
#include "jsonw.h"
#include "log.h"
#include "opts.h"
#include "util.h"

void cmd_top_help(void)
{
	printf("Usage: mmhitm top [--source SRC]... [--since TIME] [--until TIME] [--limit N]\n"
	       "                  [--boot ID] [--all] [--no-detail] [--json|--csv] [--credentials FILE]\n"
	       "                  [DB...]\n\n"
	       "Prints the cache lines with the most HITM (local + remote, plus peer\n"
	       "transfers) in the time range, like perf c2c report --stdio, with what\n"
	       "'mmhitm analyze' made of them: object type, field, owning process (for\n"
	       "an mm_struct) or pfn (for a struct page), and path. Then, per line, the\n"
	       "sampled offsets with their field, symbol, path and rule. Each path says\n"
	       "what its typing rests on: object (a learned object), layout (the kernel's\n"
	       "memory layout and BTF) or path (the code path alone); an unresolved\n"
	       "offset says what would resolve it, once, in a note its rows refer to.\n"
	       "Lines without HITM are left out unless --all; an empty table says why in\n"
	       "every format (on stderr beside CSV). The text fits $COLUMNS or the\n"
	       "terminal: columns a reader misses least go first, rows are cut.\n\n"
	       "  --since, --until TIME  UTC 'YYYY-MM-DD[THH:MM[:SS]][Z]', '@EPOCH' seconds,\n"
	       "                         'now', a duration before now ('2h', '-30min', '7d'), an\n"
	       "                         ISO week's Monday ('2025-W12'), 'today', 'yesterday',\n"
	       "                         'this-week' or 'last-week' (their first midnight)\n"
	       "  --source SRC           a database, a glob of them (hosts/*.db), or one cluster,\n"
	       "                         clickhouse://HOST[:PORT]/DB (repeatable; --db and\n"
	       "                         arguments are the same): each database gets its own\n"
	       "                         table, a cluster one table of the fleet's lines, each\n"
	       "                         with its host (no page owners or unparsed records\n"
	       "                         there: the host's database has them)\n"
	       "  --json                 the line tables as one JSON object, one entry per\n"
	       "                         database (no per-offset detail; docs/json.md)\n"
	       "  --csv                  the line tables as CSV, one row per line with its\n"
	       "                         database and host, a header row first\n"
	       "  --limit N              lines to show (default 20)\n"
	       "  --boot ID              only this boot (see 'mmhitm status'; not with a cluster)\n"
	       "  --all                  lines without HITM too (sampled loads and stores only)\n"
	       "  --no-detail            only the line table\n"
	       "  --credentials FILE     the cluster's USER:PASSWORD (default: ship_credentials\n"
	       "                         of the configuration, --config FILE)\n");
}

struct range {
	int64_t since, until, boot;	/* boot 0: all */
	bool all;			/* lines without HITM too (--all) */
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
		return db_step_failed(st, rc);

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
		return db_step_failed(paths, rc);
	if (!k->object[0])
		snprintf(k->object, sizeof(k->object), "-");
	if (!k->fields[0])
		snprintf(k->fields, sizeof(k->fields), "-");
	if (!k->owner[0])
		snprintf(k->owner, sizeof(k->owner), "-");
	return 0;
}

static int term_width(void);

/* text after prefix, broken at spaces to width (0: one line), each further
 * line indented as far as prefix. */
static void print_wrapped(const char *prefix, const char *text, int width)
{
	int indent = (int)strlen(prefix), room = (width ? width : INT_MAX / 2) - indent;
	const char *p = text;

	if (room < 20)
		room = 20;
	fputs(prefix, stdout);
	while (*p) {
		int n = (int)strlen(p);

		if (n > room) {
			n = room;
			while (n > 0 && p[n] != ' ')
				n--;
			if (n == 0)	/* one word longer than the room */
				n = (int)strcspn(p, " ");
		}
		printf("%.*s\n", n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			printf("%*s", indent, "");
	}
}

/* The reasons an offset is unresolved: each printed once, at the end. */
struct top_notes {
	char *v[64];
	size_t n;
};

/* The number rows refer to for why; 0 when there is no room (printed in place). */
static size_t note_ref(struct top_notes *nt, const char *why)
{
	for (size_t i = 0; i < nt->n; i++)
		if (!strcmp(nt->v[i], why))
			return i + 1;
	if (nt->n == ARRAY_SIZE(nt->v) || !(nt->v[nt->n] = strdup(why)))
		return 0;
	return ++nt->n;
}

static void notes_print(struct top_notes *nt)
{
	int width = term_width();
	char prefix[32];

	if (nt->n)
		printf("#\n# Why offsets are unresolved (the rows' notes):\n");
	for (size_t i = 0; i < nt->n; i++) {
		snprintf(prefix, sizeof(prefix), "# [%zu] ", i + 1);
		print_wrapped(prefix, nt->v[i], width);
		free(nt->v[i]);
	}
	nt->n = 0;
}

/* The line's shares of each kind, for its rows' percentages. */
struct detail_totals {
	int64_t rmt, lcl, peer, stores;
};

/* One sampled offset of print_detail()'s statement, its chain and why, cut to width. */
static void print_detail_row(sqlite3_stmt *st, const struct detail_totals *t, int width,
			     struct top_notes *nt)
{
	char field[160], row[2048];

	if (sqlite3_column_type(st, 2) != SQLITE_NULL && sqlite3_column_int(st, 2))
		snprintf(field, sizeof(field), "%s+%d", sqlite3_column_text(st, 1),
			 sqlite3_column_int(st, 2));
	else
		snprintf(field, sizeof(field), "%s", sqlite3_column_text(st, 1));
	snprintf(row, sizeof(row), "  %7.2f%% %7.2f%% %7.2f%% %7.2f%% %6" PRId64
		 "  0x%02x  %-22s %-34s %-16s %s",
		 pct(sqlite3_column_int64(st, 6), t->rmt), pct(sqlite3_column_int64(st, 7), t->lcl),
		 pct(sqlite3_column_int64(st, 8), t->peer), pct(sqlite3_column_int64(st, 9), t->stores),
		 (int64_t)sqlite3_column_int64(st, 10), sqlite3_column_int(st, 0), field,
		 sqlite3_column_text(st, 3), sqlite3_column_text(st, 4), sqlite3_column_text(st, 5));
	printf("%.*s\n", width, row);
	if (*(const char *)sqlite3_column_text(st, 11)) {
		snprintf(row, sizeof(row), "  %48s chain: %s", "", sqlite3_column_text(st, 11));
		printf("%.*s\n", width, row);
	}
	if (startswith((const char *)sqlite3_column_text(st, 4), "unresolved") &&
	    sqlite3_column_text(st, 13)) {
		const char *why = (const char *)sqlite3_column_text(st, 13);
		size_t ref = note_ref(nt, why);

		if (ref)
			printf("  %48s why: note [%zu]\n", "", ref);
		else
			printf("  %48s why: %s\n", "", why);
	}
}

static int print_detail(sqlite3 *db, const struct range *rg, int idx, int64_t boot, int64_t line,
			const struct line_kind *k, struct top_notes *nt)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	struct detail_totals t = { 0 };
	int width = term_width() ?: INT_MAX;	/* rows cut there, as ps cuts them */
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
			if (pass == 1) {
				print_detail_row(st, &t, width, nt);
				continue;
			}
			t.rmt += sqlite3_column_int64(st, 6);
			t.lcl += sqlite3_column_int64(st, 7);
			t.peer += sqlite3_column_int64(st, 8);
			t.stores += sqlite3_column_int64(st, 9);
		}
		if (rc != SQLITE_DONE)
			return db_step_failed(st, rc);
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

/* perf c2c's column headings; host: the cluster's Host column. */
static void print_columns(bool host)
{
	printf("#        ------------ Cacheline ------------  %s   Tot  ----- Load Hitm -----    Total    Total    Total\n",
	       host ? "                 " : "");
	printf("# Index             Address  %sBoot     Hitm    Hitm      Lcl      Rmt     Peer  records    Loads   Stores  %-10s %-28s %-22s %s\n",
	       host ? "Host              " : "", "Object", "Field(s)", "Owner", "Path");
}

/* One line of the table, from either source. */
struct top_line {
	int64_t boot, addr;
	int64_t hitm, lcl, rmt, peer, records, loads, stores;
	char host[64];
	struct line_kind k;
};

/* The line as text (host: the cluster's Host column), a JSON entry or a CSV row. */
static void emit_line(const struct top_line *l, int n, int64_t hitm, struct jsonw *w, struct csvw *cw,
		      const char *dbname, bool host)
{
	char addr[24], safe_host[64];

	snprintf(addr, sizeof(addr), "0x%016" PRIx64, (uint64_t)l->addr);
	if (cw) {
		csvw_str(cw, dbname);
		csvw_int(cw, n);
		csvw_str(cw, addr);
		csvw_int(cw, l->boot);
		csvw_num(cw, pct(l->hitm, hitm) / 100);
		csvw_int(cw, l->hitm);
		csvw_int(cw, l->lcl);
		csvw_int(cw, l->rmt);
		csvw_int(cw, l->peer);
		csvw_int(cw, l->records);
		csvw_int(cw, l->loads);
		csvw_int(cw, l->stores);
		csvw_str(cw, l->k.object);
		csvw_str(cw, l->k.fields);
		csvw_str(cw, l->k.owner);
		csvw_str(cw, l->k.paths);
		csvw_str(cw, l->host);
		csvw_end(cw);
		return;
	}
	if (w) {
		jsonw_object(w, NULL);
		jsonw_int(w, "index", n);
		jsonw_str(w, "address", addr);
		jsonw_str(w, "host", l->host);
		jsonw_int(w, "boot", l->boot);
		jsonw_num(w, "hitm_share", pct(l->hitm, hitm) / 100);
		jsonw_int(w, "hitm", l->hitm);
		jsonw_int(w, "lcl_hitm", l->lcl);
		jsonw_int(w, "rmt_hitm", l->rmt);
		jsonw_int(w, "peer", l->peer);
		jsonw_int(w, "records", l->records);
		jsonw_int(w, "loads", l->loads);
		jsonw_int(w, "stores", l->stores);
		jsonw_str(w, "object", l->k.object);
		jsonw_str(w, "fields", l->k.fields);
		jsonw_str(w, "owner", l->k.owner);
		jsonw_str(w, "paths", l->k.paths);
		jsonw_end(w);
		return;
	}
	if (host) {
		text_safe(safe_host, sizeof(safe_host), l->host);
		printf("  %5d  0x%016" PRIx64 "  %-16s", n, (uint64_t)l->addr, safe_host);
	} else
		printf("  %5d  0x%016" PRIx64, n, (uint64_t)l->addr);
	printf("  %4" PRId64 "  %6.2f%%  %6" PRId64 "  %7" PRId64 "  %7" PRId64 "  %7" PRId64 "  %7" PRId64
	       "  %7" PRId64 "  %7" PRId64 "  %-10s %-28s %-22s %s\n",
	       l->boot, pct(l->hitm, hitm), l->hitm, l->lcl, l->rmt, l->peer, l->records, l->loads,
	       l->stores, l->k.object, l->k.fields, l->k.owner, l->k.paths);
}


/* top's header, from either source: the range's totals, or why it has none. */
struct top_totals {
	int64_t hitm, lcl, rmt, peer, records, lines;
	int64_t t0, t1;		/* the first interval's start, the last's end */
	const char *label;	/* the cluster's name in the text's header; NULL: a database */
	bool none_shown;	/* records, but no line to show (none had HITM) */
	char why[512];		/* no records or no line shown: why, and what would give some */
};

/* No line to show though lines were sampled: none had HITM (--all lists them). */
static void none_with_hitm(struct top_totals *t)
{
	t->none_shown = true;
	snprintf(t->why, sizeof(t->why), "none of the %" PRId64 " lines sampled in this range had "
		 "HITM (--all lists them)", t->lines);
}

/*
 * The header: the JSON's keys with its "lines" array opened (and closed
 * again, with why, when empty), or the text's first lines; nothing in CSV.
 */
static void emit_totals(const struct top_totals *t, struct jsonw *w, struct csvw *cw)
{
	char a[32], b[32];

	fmt_time(t->t0, a, sizeof(a));
	fmt_time(t->t1, b, sizeof(b));
	if (w) {
		jsonw_str(w, "from", t->records ? a : NULL);
		jsonw_str(w, "to", t->records ? b : NULL);
		jsonw_int(w, "lines_total", t->lines);
		jsonw_int(w, "records", t->records);
		jsonw_int(w, "hitm", t->hitm);
		jsonw_int(w, "lcl_hitm", t->lcl);
		jsonw_int(w, "rmt_hitm", t->rmt);
		jsonw_int(w, "peer", t->peer);
		jsonw_array(w, "lines");
		if (!t->records || t->none_shown) {
			jsonw_end(w);
			jsonw_str(w, "empty_because", t->why);
		}
		return;
	}
	if (cw) {
		/* stdout is CSV; the reason a table has no row goes beside it */
		if (!t->records || t->none_shown)
			log_notice("No lines%s%s: %s", t->label ? " in " : "", t->label ?: "", t->why);
		return;
	}
	printf("=================================================\n"
	       "      Shared Data Cache Line Table (typed)\n"
	       "=================================================\n#\n");
	if (!t->records) {
		printf("# no attributed kernel samples in this range:\n");
		print_wrapped("#   ", t->why, term_width());
		return;
	}
	printf("# ");
	if (t->label)
		printf("%s: ", t->label);
	printf("%s .. %s:\n# %" PRId64 " lines, %" PRId64 " samples, HITM %" PRId64
	       " (lcl %" PRId64 ", rmt %" PRId64 ", peer %" PRId64 ")\n#\n", a, b, t->lines,
	       t->records, t->hitm, t->lcl, t->rmt, t->peer);
	if (t->none_shown) {
		printf("# no line to show:\n");
		print_wrapped("#   ", t->why, term_width());
	}
}

/* The per-offset detail's heading, before the lines' blocks. */
static void print_detail_header(void)
{
	printf("\n=================================================\n"
	       "      Shared Cache Line Distribution Pareto (typed)\n"
	       "=================================================\n#\n");
	char row[256];
	int width = term_width() ?: INT_MAX;

	printf("#  ------- HITM -------  -- Store --  Total\n");
	snprintf(row, sizeof(row), "#   RmtHitm   LclHitm     Peer   Stores records  Off   %-22s %-34s %-16s %s",
		 "Field", "Symbol", "Path", "Rule");
	printf("%.*s\n", width, row);
}

/* --- a table that fits the terminal ---------------------------------------- */

/* The text's width: $COLUMNS, else the terminal's; 0 (no limit) for a pipe. */
static int term_width(void)
{
	const char *c = getenv("COLUMNS");
	struct winsize ws;
	int64_t v;

	if (c && parse_i64(c, &v) >= 0 && v >= 40 && v <= 10000)
		return (int)v;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	return 0;
}

/*
 * The line table's columns after the address, as printed when the table is
 * too wide for the terminal: one heading line, and the columns a reader
 * misses least dropped first (drop order; 0: kept), the rest cut to width.
 */
enum { C_HOST, C_BOOT, C_SHARE, C_HITM, C_LCL, C_RMT, C_PEER, C_RECORDS, C_LOADS, C_STORES,
       C_OBJECT, C_FIELDS, C_OWNER, C_PATH, NR_COLS };
static const struct {
	const char *name;
	int width, drop;
} top_cols[NR_COLS] = {
	[C_HOST] = { "Host", 16, 7 },	[C_BOOT] = { "Boot", 4, 5 },
	[C_SHARE] = { "Hitm%", 7, 0 },	[C_HITM] = { "Hitm", 7, 0 },
	[C_LCL] = { "Lcl", 7, 4 },	[C_RMT] = { "Rmt", 7, 4 },
	[C_PEER] = { "Peer", 7, 3 },	[C_RECORDS] = { "Records", 7, 2 },
	[C_LOADS] = { "Loads", 7, 1 },	[C_STORES] = { "Stores", 7, 1 },
	[C_OBJECT] = { "Object", 10, 0 }, [C_FIELDS] = { "Field(s)", 20, 8 },
	[C_OWNER] = { "Owner", 16, 6 },	[C_PATH] = { "Path", 0, 0 },
};

/* Line l's cell c, as text. */
static void top_cell(const struct top_line *l, int64_t hitm, int c, char *buf, size_t size)
{
	const int64_t v[NR_COLS] = { [C_BOOT] = l->boot, [C_HITM] = l->hitm, [C_LCL] = l->lcl,
		[C_RMT] = l->rmt, [C_PEER] = l->peer, [C_RECORDS] = l->records,
		[C_LOADS] = l->loads, [C_STORES] = l->stores };

	switch (c) {
	case C_HOST:	text_safe(buf, size, l->host); break;
	case C_SHARE:	snprintf(buf, size, "%.2f%%", pct(l->hitm, hitm)); break;
	case C_OBJECT:	snprintf(buf, size, "%s", l->k.object); break;
	case C_FIELDS:	snprintf(buf, size, "%s", l->k.fields); break;
	case C_OWNER:	snprintf(buf, size, "%s", l->k.owner); break;
	case C_PATH:	snprintf(buf, size, "%s", l->k.paths); break;
	default:	snprintf(buf, size, "%" PRId64, v[c]); break;
	}
}

/* The columns that fit width (a mask), dropping in top_cols[]' order. */
static unsigned int top_fit(const struct top_line *tl, size_t n, bool host, int width)
{
	unsigned int keep = ((1u << NR_COLS) - 1) & ~(host ? 0 : 1u << C_HOST);
	int path = 4, used;

	for (size_t i = 0; i < n; i++)
		if ((int)strlen(tl[i].k.paths) > path)
			path = (int)strlen(tl[i].k.paths);
	for (int order = 1;; order++) {
		used = 2 + 5 + 2 + 18;	/* "  Index  Address" */
		for (int c = 0; c < NR_COLS; c++)
			if (keep & (1u << c))
				used += 2 + (c == C_PATH ? path : top_cols[c].width);
		if (used <= width || order > 8)
			return keep;
		for (int c = 0; c < NR_COLS; c++)
			if (top_cols[c].drop == order)
				keep &= ~(1u << c);
	}
}

/* The line table in the columns keep leaves, each row cut to width. */
static void emit_fitted(const struct top_line *tl, size_t n, int64_t hitm, unsigned int keep,
			int width)
{
	char row[1024], cell[128];
	int len;

	len = snprintf(row, sizeof(row), "# Index  %-18s", "Address");
	for (int c = 0; c < NR_COLS; c++)
		if (keep & (1u << c))
			len += snprintf(row + len, sizeof(row) - (size_t)len, "  %*s", c >= C_OBJECT ?
					-top_cols[c].width : top_cols[c].width, top_cols[c].name);
	printf("%.*s\n", width, row);
	for (size_t i = 0; i < n; i++) {
		len = snprintf(row, sizeof(row), "  %5zu  0x%016" PRIx64, i, (uint64_t)tl[i].addr);
		for (int c = 0; c < NR_COLS && len < (int)sizeof(row); c++) {
			int w = top_cols[c].width;

			if (!(keep & (1u << c)))
				continue;
			top_cell(&tl[i], hitm, c, cell, sizeof(cell));
			if (c == C_PATH)
				len += snprintf(row + len, sizeof(row) - (size_t)len, "  %s", cell);
			else
				len += snprintf(row + len, sizeof(row) - (size_t)len, "  %*.*s",
						c >= C_OBJECT ? -w : w, w, cell);
		}
		printf("%.*s\n", width, row);
	}
}

/*
 * The lines (host: the cluster's Host column), then the JSON's "lines"
 * array closed. The text is perf c2c's layout where the terminal is wide
 * enough (or a pipe), else the columns that fit.
 */
static void emit_lines(const struct top_line *tl, size_t n, int64_t hitm, struct jsonw *w,
		       struct csvw *cw, const char *dbname, bool host)
{
	int width = w || cw ? 0 : term_width();
	unsigned int keep = width ? top_fit(tl, n, host, width) : 0;
	unsigned int all = ((1u << NR_COLS) - 1) & ~(host ? 0 : 1u << C_HOST);

	if (width && keep != all) {
		emit_fitted(tl, n, hitm, keep, width);
		return;
	}
	if (!w && !cw)
		print_columns(host);
	for (size_t i = 0; i < n; i++)
		emit_line(&tl[i], (int)i, hitm, w, cw, dbname, host);
	if (w)
		jsonw_end(w);
}

/*
 * The range's totals (why they are none, when none), and a warning for
 * the sampled intervals analyze has not seen: they are not silently missing.
 */
static int top_fetch_totals(sqlite3 *db, const struct range *rg, struct top_totals *t)
{
	_cleanup_finalize_ sqlite3_stmt *tot = NULL, *pending = NULL;
	int r;

	*t = (struct top_totals){};
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
		t->hitm = sqlite3_column_int64(tot, 0);
		t->lcl = sqlite3_column_int64(tot, 1);
		t->rmt = sqlite3_column_int64(tot, 2);
		t->peer = sqlite3_column_int64(tot, 3);
		t->records = sqlite3_column_int64(tot, 4);
		t->lines = sqlite3_column_int64(tot, 5);
		t->t0 = sqlite3_column_int64(tot, 6);
		t->t1 = sqlite3_column_int64(tot, 7);
	}
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
	if (!t->records)
		explain_empty(db, rg, t->why, sizeof(t->why));
	return 0;
}

/* The top lines, each with its kind. Caller frees *ret. */
static int top_fetch_lines(sqlite3 *db, const struct range *rg, int limit, struct top_line **ret,
			   size_t *ret_n)
{
	_cleanup_finalize_ sqlite3_stmt *lines = NULL;
	struct top_line *tl;
	size_t n = 0;
	int r, rc;

	r = db_prepare(db, &lines,
		       "SELECT i.boot_id, a.line_addr,"
		       " sum(l.lcl_hitm + l.rmt_hitm + l.lcl_peer + l.rmt_peer) AS h, sum(l.lcl_hitm),"
		       " sum(l.rmt_hitm), sum(l.lcl_peer + l.rmt_peer), sum(l.loads + l.stores + l.noparse) AS s,"
		       " sum(l.loads), sum(l.stores),"
		       " (SELECT hostname FROM boots JOIN hosts USING (host_id) WHERE boot_id = i.boot_id)"
		       " FROM line_attribution a JOIN mem_lines l USING (interval_id, line_addr, offset, ip, callchain_id)"
		       " JOIN intervals i USING (interval_id) WHERE" RANGE_SQL
		       " GROUP BY i.boot_id, a.line_addr HAVING ?5 OR h > 0"
		       " ORDER BY h DESC, s DESC, a.line_addr LIMIT ?4");
	if (r < 0)
		return r;
	bind_range(lines, rg);
	sqlite3_bind_int(lines, 4, limit);
	sqlite3_bind_int(lines, 5, rg->all);
	tl = calloc((size_t)limit, sizeof(*tl));
	if (!tl)
		return log_oom();
	while ((rc = sqlite3_step(lines)) == SQLITE_ROW && n < (size_t)limit) {
		struct top_line *l = &tl[n];

		*l = (struct top_line){
			.boot = sqlite3_column_int64(lines, 0), .addr = sqlite3_column_int64(lines, 1),
			.hitm = sqlite3_column_int64(lines, 2), .lcl = sqlite3_column_int64(lines, 3),
			.rmt = sqlite3_column_int64(lines, 4), .peer = sqlite3_column_int64(lines, 5),
			.records = sqlite3_column_int64(lines, 6), .loads = sqlite3_column_int64(lines, 7),
			.stores = sqlite3_column_int64(lines, 8),
		};
		snprintf(l->host, sizeof(l->host), "%s", sqlite3_column_text(lines, 9) ?: (const unsigned char *)"?");
		r = line_kind(db, rg, l->boot, l->addr, l->hitm, &l->k);
		if (r < 0)
			goto fail;
		n++;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		r = db_step_failed(lines, rc);
		goto fail;
	}
	*ret = tl;
	*ret_n = n;
	return 0;
fail:
	free(tl);
	return r;
}

/*
 * The table of the top lines: as perf c2c report --stdio lays it out, or
 * into w or cw (no per-offset detail then) when one is not NULL. What is
 * read is read first, then written.
 */
static int top(sqlite3 *db, const struct range *rg, int limit, bool detail, struct jsonw *w,
	       struct csvw *cw, const char *dbname)
{
	_cleanup_free_ struct top_line *tl = NULL;
	struct top_notes nt = { .n = 0 };
	struct top_totals t;
	size_t n = 0;
	int r;

	r = top_fetch_totals(db, rg, &t);
	if (r >= 0 && t.records)
		r = top_fetch_lines(db, rg, limit, &tl, &n);
	if (r < 0)
		return r;
	if (t.records && !n)
		none_with_hitm(&t);
	emit_totals(&t, w, cw);
	if (!t.records || t.none_shown)
		return 0;
	emit_lines(tl, n, t.hitm, w, cw, dbname, false);
	if (!detail || w || cw)
		return 0;
	print_detail_header();
	for (size_t i = 0; i < n && r >= 0; i++)
		r = print_detail(db, rg, (int)i, tl[i].boot, tl[i].addr, &tl[i].k, &nt);
	notes_print(&nt);
	return r;
}

/* One database's top lines, text or into w; -errno (a failure to open said). */
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
	r = cli_db_open(path, DB_READONLY | DB_NO_CREATE, &db);
	if (r >= 0)
		r = top(db, rg, limit, detail, w, cw, path);
	db_close(db);
	if (w) {
		if (r < 0)
			jsonw_str(w, "error", db_error(r));
		jsonw_end(w);
	}
	return r;
}

/* --- from the cluster ------------------------------------------------------ */

/*
 * The cluster's rows in the range, as a condition on hitm_lines (or any
 * table keyed by host, boot and interval start): the intervals overlapping
 * [since, until), as SQLite's RANGE_SQL. The subquery reads each shard's
 * own intervals_local: a host's rows are all on one shard (sharded by
 * host), so a local IN is exact and no shard asks the others.
 */
static int cluster_range(const char *d, const struct range *rg, char **ret)
{
	if (rg->since == 0 && rg->until == INT64_MAX)
		return (*ret = strdup("")) ? 0 : log_oom();
	if (asprintf(ret, " AND (machine_id, boot_uuid, start_ns) IN (SELECT machine_id, boot_uuid, start_ns"
		     " FROM %s.intervals_local FINAL WHERE start_ns < %" PRId64 " AND end_ns > %" PRId64 ")",
		     d, rg->until, rg->since) < 0)
		return log_oom();
	return 0;
}

/* Why the cluster has no attributed lines in the range, and what would give some. */
static void cluster_explain_empty(struct http *h, const char *d, const struct range *rg, char *buf,
				  size_t size)
{
	_cleanup_free_ char *q = NULL;
	struct tsv t = {};
	char a[32], b[32];

	snprintf(buf, size, "nothing shipped in this range");
	if (asprintf(&q, "SELECT (SELECT count() FROM %s.intervals FINAL WHERE start_ns < %" PRId64
		     " AND end_ns > %" PRId64 "), (SELECT count() FROM %s.intervals),"
		     " (SELECT min(start_ns) FROM %s.intervals), (SELECT max(end_ns) FROM %s.intervals),"
		     " (SELECT count() FROM %s.boots FINAL WHERE pmu_kind != 'none')",
		     d, rg->until, rg->since, d, d, d, d) < 0 ||
	    cluster_select(h, "why", q, 5, &t) < 0 || t.rows != 1)
		goto out;
	if (!tsv_int(&t, 0, 0) && tsv_int(&t, 0, 1)) {
		fmt_time(tsv_int(&t, 0, 2), a, sizeof(a));
		fmt_time(tsv_int(&t, 0, 3), b, sizeof(b));
		snprintf(buf, size, "no intervals in this range; the cluster's run from %s to %s "
			 "(--since/--until)", a, b);
	} else if (!tsv_int(&t, 0, 0)) {
		snprintf(buf, size, "the cluster holds no intervals: have the hosts shipped (mmhitm ship)?");
	} else if (!tsv_int(&t, 0, 4)) {
		snprintf(buf, size, "no memory samples: no shipped boot has a memory-sampling PMU; "
			 "a host with Intel PEBS, AMD IBS or Arm SPE samples them");
	} else {
		snprintf(buf, size, "no attributed lines shipped in this range: ship sends a host's "
			 "lines once 'mmhitm analyze' has typed them there");
	}
out:
	tsv_done(&t);
}

/* Orders line indices by key: host, boot, address (arg: the lines). */
static int cmp_line_key(const void *x, const void *y, void *arg)
{
	const struct tsv *lines = arg;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int c = strcmp(tsv_get(lines, a, 0), tsv_get(lines, b, 0));
	int64_t la, lb;

	if (c == 0)
		c = strcmp(tsv_get(lines, a, 1), tsv_get(lines, b, 1));
	if (c != 0)
		return c;
	la = tsv_int(lines, a, 2);
	lb = tsv_int(lines, b, 2);
	return la < lb ? -1 : la > lb;
}

/*
 * Which of the top lines row r of t (host, boot, address first) is about:
 * a binary search of order (the lines sorted by key); -1 for none (each
 * shard's own top lines are asked for: a superset of the fleet's).
 */
static ssize_t find_line(const struct tsv *lines, const size_t *order, const struct tsv *t, size_t r)
{
	const char *mid = tsv_get(t, r, 0) ?: "", *uuid = tsv_get(t, r, 1) ?: "";
	int64_t addr = tsv_int(t, r, 2);
	size_t lo = 0, hi = lines->rows;

	while (lo < hi) {
		size_t m = (lo + hi) / 2, i = order[m];
		int c = strcmp(tsv_get(lines, i, 0), mid);

		if (c == 0)
			c = strcmp(tsv_get(lines, i, 1), uuid);
		if (c == 0)
			c = tsv_int(lines, i, 2) < addr ? -1 : tsv_int(lines, i, 2) > addr;
		if (c == 0)
			return (ssize_t)i;
		if (c < 0)
			lo = m + 1;
		else
			hi = m;
	}
	return -1;
}

/* The first row of t whose first cell is s, t sorted by it; t->rows when none. */
static size_t first_row(const struct tsv *t, const char *s)
{
	size_t lo = 0, hi = t->rows;

	while (lo < hi) {
		size_t m = (lo + hi) / 2;

		if (strcmp(tsv_get(t, m, 0) ?: "", s) < 0)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < t->rows && strcmp(tsv_get(t, lo, 0) ?: "", s) == 0 ? lo : t->rows;
}

/* top from the cluster: what the queries answered, and the lines made of them. */
struct ctop {
	struct http *h;
	const char *d;		/* the cluster's database, an identifier */
	char *rng;		/* the range as a condition (cluster_range()) */
	char *keys;		/* the top lines' keys, as each shard's subquery */
	int limit;
	bool all;		/* lines without HITM too */
	struct tsv tot, lines, kinds, paths, hosts, boots, det;
	size_t *order;		/* the lines by key, for find_line() */
	struct top_line *tl;
	struct top_totals t;
};

static void ctop_done(struct ctop *c)
{
	free(c->rng);
	free(c->keys);
	free(c->order);
	free(c->tl);
	tsv_done(&c->tot);
	tsv_done(&c->lines);
	tsv_done(&c->kinds);
	tsv_done(&c->paths);
	tsv_done(&c->hosts);
	tsv_done(&c->boots);
	tsv_done(&c->det);
	http_free(c->h);
}

#define H "(lcl_hitm + rmt_hitm + lcl_peer + rmt_peer)"

/* The totals, as top's header (emit_totals()), and why they are none when none. */
static int ctop_totals(struct ctop *c, const struct source *src, const struct range *rg)
{
	const struct tsv *tot = &c->tot;
	struct top_totals *t = &c->t;
	int r;

	*t = (struct top_totals){ .label = src->arg };
	r = cluster_selectf(c->h, "hitm_lines totals", 8, &c->tot,
		"SELECT sum(" H "), sum(lcl_hitm), sum(rmt_hitm), sum(lcl_peer + rmt_peer),"
		" sum(loads + stores), uniqExact(machine_id, boot_uuid, line_addr), min(start_ns),"
		" (SELECT max(end_ns) FROM %s.intervals FINAL WHERE start_ns < %" PRId64
		"   AND end_ns > %" PRId64 " AND (machine_id, boot_uuid, start_ns) IN"
		"   (SELECT machine_id, boot_uuid, start_ns FROM %s.hitm_lines_local))"
		" FROM %s.hitm_lines FINAL WHERE 1%s", c->d, rg->until, rg->since, c->d, c->d, c->rng);
	if (r < 0)
		return r;
	if (tot->rows == 1) {
		t->hitm = tsv_int(tot, 0, 0);
		t->lcl = tsv_int(tot, 0, 1);
		t->rmt = tsv_int(tot, 0, 2);
		t->peer = tsv_int(tot, 0, 3);
		t->records = tsv_int(tot, 0, 4);
		t->lines = tsv_int(tot, 0, 5);
		t->t0 = tsv_int(tot, 0, 6);
		t->t1 = tsv_int(tot, 0, 7);
	}
	if (!t->records)
		cluster_explain_empty(c->h, c->d, rg, t->why, sizeof(t->why));
	return 0;
}

/* The top lines, and what is known of them: objects, paths, hosts, boots. */
static int ctop_fetch(struct ctop *c)
{
	const char *d = c->d, *rng = c->rng;
	int r;

	r = cluster_selectf(c->h, "hitm_lines", 10, &c->lines,
		"SELECT machine_id, boot_uuid, line_addr, sum(" H ") AS h, sum(lcl_hitm),"
		" sum(rmt_hitm), sum(lcl_peer + rmt_peer), sum(loads + stores) AS s, sum(loads), sum(stores)"
		" FROM %s.hitm_lines FINAL WHERE 1%s GROUP BY machine_id, boot_uuid, line_addr%s"
		" ORDER BY h DESC, s DESC, line_addr, machine_id LIMIT %d", d, rng,
		c->all ? "" : " HAVING h > 0", c->limit);
	if (r < 0)
		return r;
	/*
	 * The top lines again, as a subquery each shard answers from its own
	 * hosts (a host's rows are all on one shard): each shard's top lines
	 * include the fleet's that are there, and the query stays small
	 * however long --limit is (a list of keys would be max_query_size's).
	 */
	if (asprintf(&c->keys, "(SELECT machine_id, boot_uuid, line_addr FROM %s.hitm_lines_local FINAL"
		     " WHERE 1%s GROUP BY machine_id, boot_uuid, line_addr%s ORDER BY sum(" H ") DESC,"
		     " sum(loads + stores) DESC, line_addr, machine_id LIMIT %d)", d, rng,
		     c->all ? "" : " HAVING sum(" H ") > 0", c->limit) < 0)
		return log_oom();
	c->order = calloc(c->lines.rows + 1, sizeof(*c->order));
	if (!c->order)
		return log_oom();
	for (size_t i = 0; i < c->lines.rows; i++)
		c->order[i] = i;
	qsort_r(c->order, c->lines.rows, sizeof(*c->order), cmp_line_key, &c->lines);
	r = cluster_selectf(c->h, "hitm_lines objects", 9, &c->kinds,
		"SELECT machine_id, boot_uuid, line_addr, ifNull(object_type, '-'), field, tgid,"
		" comm, sum(" H ") AS h, sum(loads + stores) AS s FROM %s.hitm_lines FINAL"
		" WHERE (machine_id, boot_uuid, line_addr) IN %s%s"
		" GROUP BY machine_id, boot_uuid, line_addr, object_type, field, tgid, comm"
		" ORDER BY machine_id, boot_uuid, line_addr, h DESC, s DESC", d, c->keys, rng);
	/* a path with the grades its typing rests on, as from SQLite (sorted here) */
	if (r >= 0)
		r = cluster_selectf(c->h, "hitm_lines paths", 6, &c->paths,
			"SELECT machine_id, boot_uuid, line_addr, concat(path, if(empty(g), '',"
			" concat(' (', g, ')'))), h, s FROM (SELECT machine_id, boot_uuid, line_addr, path,"
			" arrayStringConcat(arraySort(groupUniqArrayIf(assumeNotNull(grade), isNotNull(grade))),"
			" ',') AS g, sum(" H ") AS h, sum(loads + stores) AS s FROM %s.hitm_lines FINAL"
			" WHERE (machine_id, boot_uuid, line_addr) IN %s%s"
			" GROUP BY machine_id, boot_uuid, line_addr, path)"
			" ORDER BY machine_id, boot_uuid, line_addr, h DESC, s DESC, path", d, c->keys, rng);
	/* hostnames, and each host's boots oldest first for their numbers */
	if (r >= 0)
		r = cluster_selectf(c->h, "hosts", 2, &c->hosts,
			"SELECT machine_id, hostname FROM %s.hosts FINAL WHERE machine_id IN"
			" (SELECT machine_id FROM %s) ORDER BY machine_id", d, c->keys);
	if (r >= 0)
		r = cluster_selectf(c->h, "boots", 2, &c->boots,
			"SELECT machine_id, boot_uuid FROM %s.boots FINAL WHERE machine_id IN"
			" (SELECT machine_id FROM %s) ORDER BY machine_id, first_seen_ns, boot_uuid", d, c->keys);
	return r;
}

/* Line i's counts, host name and boot number (the host's boots, oldest first). */
static void ctop_line(struct ctop *c, size_t i)
{
	struct top_line *l = &c->tl[i];
	const struct tsv *lines = &c->lines, *hosts = &c->hosts, *boots = &c->boots;
	const char *mid = tsv_get(lines, i, 0), *uuid = tsv_get(lines, i, 1);
	int64_t ord = 0;
	size_t k;

	l->addr = tsv_int(lines, i, 2);
	l->hitm = tsv_int(lines, i, 3);
	l->lcl = tsv_int(lines, i, 4);
	l->rmt = tsv_int(lines, i, 5);
	l->peer = tsv_int(lines, i, 6);
	l->records = tsv_int(lines, i, 7);
	l->loads = tsv_int(lines, i, 8);
	l->stores = tsv_int(lines, i, 9);
	k = first_row(hosts, mid);
	snprintf(l->host, sizeof(l->host), "%s", k < hosts->rows ? tsv_get(hosts, k, 1) ?: mid : mid);
	for (k = first_row(boots, mid); k < boots->rows && strcmp(tsv_get(boots, k, 0), mid) == 0; k++) {
		ord++;
		if (strcmp(tsv_get(boots, k, 1), uuid) == 0) {
			l->boot = ord;
			break;
		}
	}
}

/* Each line's kind: the object and owner of its hottest typed row, every type seen, its paths. */
static void ctop_kinds(struct ctop *c)
{
	const struct tsv *kinds = &c->kinds, *paths = &c->paths;

	for (size_t k = 0; k < kinds->rows; k++) {
		ssize_t i = find_line(&c->lines, c->order, kinds, k);
		const char *obj = tsv_get(kinds, k, 3), *field = tsv_get(kinds, k, 4);
		struct line_kind *lk;

		if (i < 0)
			continue;
		lk = &c->tl[i].k;
		if (strcmp(obj, "-") != 0) {
			if (!lk->object[0] && strcmp(obj, "mm_struct") == 0) {
				if (tsv_get(kinds, k, 5))
					snprintf(lk->owner, sizeof(lk->owner), "%" PRId64 " %s",
						 tsv_int(kinds, k, 5), tsv_get(kinds, k, 6) ?: "?");
				else
					snprintf(lk->owner, sizeof(lk->owner), "mm (owner unknown)");
			}
			append(lk->object, sizeof(lk->object), obj);
		}
		if (field)
			append(lk->fields, sizeof(lk->fields), field);
	}
	for (size_t k = 0; k < paths->rows; k++) {
		ssize_t i = find_line(&c->lines, c->order, paths, k);
		int64_t ph = tsv_int(paths, k, 4);
		char buf[64];

		if (i < 0)
			continue;
		if (c->tl[i].hitm && ph < c->tl[i].hitm)
			snprintf(buf, sizeof(buf), "%s %.0f%%", tsv_get(paths, k, 3), pct(ph, c->tl[i].hitm));
		else
			snprintf(buf, sizeof(buf), "%s", tsv_get(paths, k, 3));
		append(c->tl[i].k.paths, sizeof(c->tl[i].k.paths), buf);
	}
}

/* The lines from the answers, as emit_lines() takes them. */
static int ctop_lines(struct ctop *c)
{
	c->tl = calloc(c->lines.rows + 1, sizeof(*c->tl));
	if (!c->tl)
		return log_oom();
	for (size_t i = 0; i < c->lines.rows; i++)
		ctop_line(c, i);
	ctop_kinds(c);
	for (size_t i = 0; i < c->lines.rows; i++) {
		struct top_line *l = &c->tl[i];

		if (!l->k.object[0])
			snprintf(l->k.object, sizeof(l->k.object), "-");
		if (!l->k.fields[0])
			snprintf(l->k.fields, sizeof(l->k.fields), "-");
		if (!l->k.owner[0])
			snprintf(l->k.owner, sizeof(l->k.owner), "-");
	}
	return 0;
}

/* Line i's per-offset rows det[k0, k1), as print_detail() prints a host's. */
static void ctop_print_detail(const struct ctop *c, size_t i, size_t k0, size_t k1)
{
	const struct tsv *det = &c->det;
	const struct top_line *l = &c->tl[i];
	int64_t trmt = 0, tlcl = 0, tpeer = 0, tst = 0;
	int width = term_width() ?: INT_MAX;
	char host[64], row[1024];

	for (size_t k = k0; k < k1; k++) {
		trmt += tsv_int(det, k, 8);
		tlcl += tsv_int(det, k, 9);
		tpeer += tsv_int(det, k, 10);
		tst += tsv_int(det, k, 11);
	}
	text_safe(host, sizeof(host), l->host);
	printf("  ----------------------------------------------------------------------\n");
	printf("  %5zu  0x%016" PRIx64 "  %s boot %" PRId64 "  %s  %s  %s\n", i, (uint64_t)l->addr,
	       host, l->boot, l->k.object, l->k.owner, l->k.paths);
	printf("  ----------------------------------------------------------------------\n");
	for (size_t k = k0; k < k1; k++) {
		char field[80], sym[80];

		text_safe(field, sizeof(field), tsv_get(det, k, 4));
		text_safe(sym, sizeof(sym), tsv_get(det, k, 5));
		snprintf(row, sizeof(row), "  %7.2f%% %7.2f%% %7.2f%% %7.2f%% %6" PRId64 "  0x%02" PRIx64
			 "  %-22s %-34s %-16s %s",
			 pct(tsv_int(det, k, 8), trmt), pct(tsv_int(det, k, 9), tlcl),
			 pct(tsv_int(det, k, 10), tpeer), pct(tsv_int(det, k, 11), tst),
			 tsv_int(det, k, 12), tsv_int(det, k, 3), field, sym, tsv_get(det, k, 6),
			 tsv_get(det, k, 7));
		printf("%.*s\n", width, row);
	}
}

/* The per-offset detail, as from a host's database, less the chains' symbols. */
static int ctop_fetch_detail(struct ctop *c)
{
	return cluster_selectf(c->h, "hitm_lines detail", 14, &c->det,
		"SELECT machine_id, boot_uuid, line_addr, `offset`, ifNull(field, '-'),"
		" ifNull(symbol, concat('0x', lower(hex(toUInt64(ip))))),"
		" concat(path, if(isNull(grade), '', concat('/', assumeNotNull(grade)))), ifNull(rule, '-'),"
		" sum(rmt_hitm), sum(lcl_hitm), sum(lcl_peer + rmt_peer), sum(stores),"
		" sum(loads + stores), sum(" H ") AS h FROM %s.hitm_lines FINAL"
		" WHERE (machine_id, boot_uuid, line_addr) IN %s%s"
		" GROUP BY machine_id, boot_uuid, line_addr, `offset`, field, symbol, ip, path, grade, rule"
		" ORDER BY machine_id, boot_uuid, line_addr, `offset`, h DESC", c->d, c->keys, c->rng);
}

/* The per-offset detail's blocks, one per line, as print_detail() prints a host's. */
static int ctop_print_details(const struct ctop *c)
{
	_cleanup_free_ size_t *first = NULL, *n = NULL;

	print_detail_header();
	/* a line's rows are consecutive (ordered by its key) */
	first = calloc(c->lines.rows + 1, sizeof(*first));
	n = calloc(c->lines.rows + 1, sizeof(*n));
	if (!first || !n)
		return log_oom();
	for (size_t k = 0; k < c->det.rows; k++) {
		ssize_t i = find_line(&c->lines, c->order, &c->det, k);

		if (i < 0)
			continue;
		if (!n[i])
			first[i] = k;
		n[i]++;
	}
	for (size_t i = 0; i < c->lines.rows; i++)
		ctop_print_detail(c, i, first[i], first[i] + n[i]);
	return 0;
}

#undef H

/*
 * top from the cluster: the fleet's lines ranked together, each with its
 * host (the cluster has many), from hitm_lines with FINAL. A line's boot
 * is the host's boots numbered oldest first, as boot_id numbers them in a
 * host's database. What the cluster does not have: the samples that did
 * not parse (records = loads + stores), the owners of struct page and
 * lruvec lines ("-") and callchains' symbols.
 */
static int top_cluster(const struct source *src, const struct range *rg, int limit, bool detail,
		       struct jsonw *w, struct csvw *cw, const char *cred, const char *config_path,
		       bool config_given)
{
	struct ctop c = { .d = src->database, .limit = limit, .all = rg->all };
	bool text_detail = detail && !w && !cw;
	int r;

	if (w) {
		jsonw_object(w, NULL);
		jsonw_str(w, "database", src->arg);
	}
	r = cluster_open(src, cred, config_path, config_given, &c.h);
	if (r >= 0)
		r = cluster_range(c.d, rg, &c.rng);
	if (r >= 0)
		r = ctop_totals(&c, src, rg);
	if (r >= 0 && c.t.records)
		r = ctop_fetch(&c);
	if (r >= 0 && c.t.records)
		r = ctop_lines(&c);
	if (r >= 0 && c.t.records && text_detail && c.lines.rows)
		r = ctop_fetch_detail(&c);
	if (r < 0)
		goto out;
	if (c.t.records && !c.lines.rows)
		none_with_hitm(&c.t);
	emit_totals(&c.t, w, cw);
	if (!c.t.records || c.t.none_shown)
		goto out;
	emit_lines(c.tl, c.lines.rows, c.t.hitm, w, cw, src->arg, true);
	if (text_detail && c.lines.rows)
		r = ctop_print_details(&c);
out:
	if (w) {
		if (r < 0)
			jsonw_str(w, "error", strerror(-r));
		jsonw_end(w);
	}
	ctop_done(&c);
	return r;
}

struct top_args {
	struct range rg;
	int64_t limit;
	bool detail;
};

static int top_option(int opt, const char *arg, void *userdata)
{
	struct top_args *a = userdata;

	switch (opt) {
	case 's':
	case 'u':
		if (parse_time_ns(arg, now_ns(CLOCK_REALTIME), opt == 's' ? &a->rg.since : &a->rg.until) < 0) {
			log_error("Invalid --%s '%s': " TIME_FORMS, opt == 's' ? "since" : "until", arg);
			return -EINVAL;
		}
		return 0;
	case 'n':
		if (parse_i64(arg, &a->limit) < 0 || a->limit < 1 || a->limit > 100000) {
			log_error("Invalid --limit '%s': 1 to 100000", arg);
			return -EINVAL;
		}
		return 0;
	case 'b':
		if (parse_i64(arg, &a->rg.boot) < 0 || a->rg.boot < 1) {
			log_error("Invalid --boot '%s': a boot id (mmhitm status lists them)", arg);
			return -EINVAL;
		}
		return 0;
	case 'D':
		a->detail = false;
		return 0;
	case 'A':
		a->rg.all = true;
		return 0;
	}
	return -EINVAL;
}

/* The options: 0, 1 after --help, EXIT_USAGE (said). */
static int top_parse(int argc, char **argv, struct cli_opts *o, struct top_args *a)
{
	static const struct option opts[] = {
		{ "since",     required_argument, NULL, 's' },
		{ "until",     required_argument, NULL, 'u' },
		{ "limit",     required_argument, NULL, 'n' },
		{ "boot",      required_argument, NULL, 'b' },
		{ "no-detail", no_argument,       NULL, 'D' },
		{ "all",       no_argument,       NULL, 'A' },
		{}
	};
	const struct cmd_options c = {
		.prog = "mmhitm top", .sets = OPTS_SOURCES | OPTS_FORMAT | OPTS_CLUSTER,
		.opts = opts, .shortopts = "n:", .parse = top_option, .userdata = a,
		.help = cmd_top_help,
	};
	int r;

	*a = (struct top_args){ .rg = { .since = 0, .until = INT64_MAX }, .limit = 20, .detail = true };
	r = cli_opts_parse(argc, argv, &c, o);
	if (r != 0)
		return r;
	if (a->rg.since >= a->rg.until) {
		log_error("--since must be before --until");
		return EXIT_USAGE;
	}
	if (a->rg.boot && sources_clickhouse(&o->src)) {
		log_error("--boot names a boot of one database; from a cluster, choose with --since/--until");
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_top(int argc, char **argv)
{
	static const char *const csv_cols[] = {
		"database", "index", "address", "boot", "hitm_share", "hitm", "lcl_hitm", "rmt_hitm",
		"peer", "records", "loads", "stores", "object", "fields", "owner", "paths", "host",
	};
	struct cli_opts o;
	struct top_args a;
	bool json, csv;
	struct csvw cw;
	struct jsonw w;
	int r;

	r = top_parse(argc, argv, &o, &a);
	if (r != 0)
		goto out;
	json = o.format == FORMAT_JSON;
	csv = o.format == FORMAT_CSV;
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
	for (size_t i = 0; i < o.src.n; i++) {
		unsigned int said = log_errors_said();
		int k;

		if (o.src.v[i].kind == SOURCE_CLICKHOUSE) {
			k = top_cluster(&o.src.v[i], &a.rg, (int)a.limit, a.detail, json ? &w : NULL,
					csv ? &cw : NULL, o.credentials, o.config, o.config_given);
		} else {
			k = top_db(o.src.v[i].path, &a.rg, (int)a.limit, a.detail, o.src.n > 1,
				   json ? &w : NULL, csv ? &cw : NULL);
			if (k < 0 && o.src.n > 1)
				cli_many_failed("top", o.src.v[i].path, k, said);
		}

		if (k < 0 && r == 0)
			r = k;
	}
	if (json) {
		jsonw_end(&w);
		jsonw_end(&w);
		if (jsonw_finish(&w) < 0 && r == 0)
			r = log_error_errno(EIO, "Failed to write the JSON");
	}
out:
	cli_opts_done(&o);
	return r == 1 ? 0 : r;
}
