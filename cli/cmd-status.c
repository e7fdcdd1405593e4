// SPDX-License-Identifier: GPL-2.0
/* mmhitm status: what a database holds, per boot. */
#include <errno.h>
#include <stdlib.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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

void cmd_status_help(void)
{
	printf("Usage: mmhitm status [--source SRC]... [--json|--csv] [--check]\n"
	       "                     [--credentials FILE] [--config FILE] [DB...]\n\n"
	       "Prints each database's schema version, and per boot: the host, kernel,\n"
	       "PMU, LRU_GEN state, the recorded intervals and the totals of every\n"
	       "counted event and learned object. From a ClickHouse cluster: every\n"
	       "shipped host's boots, with their shipped intervals.\n\n"
	       "  --source SRC   a SQLite database, a glob of them (hosts/*.db), or one\n"
	       "                 cluster, clickhouse://HOST[:PORT]/DB (repeatable; --db\n"
	       "                 and arguments are the same; default $MMHITM_DB or the\n"
	       "                 daemon's database): one block per database\n"
	       "  --json         the same as one JSON object per database (an array of\n"
	       "                 them for several; schema: docs/json.md)\n"
	       "  --csv          one row per boot with its database, a header row first\n"
	       "                 (the per-event totals are --json's)\n"
	       "  --check        for monitoring: one line per database, and exit %d when\n"
	       "                 mmhitmd is not recording into one of them, its last\n"
	       "                 interval ended more than two intervals ago, or its last\n"
	       "                 hour lost events (SQLite databases only)\n"
	       "  --credentials FILE  the cluster's USER:PASSWORD (default: ship_credentials\n"
	       "                 of the configuration)\n"
	       "  --config FILE  where ship_credentials is read (default %s)\n",
	       EXIT_UNHEALTHY, CONFIG_DEFAULT_PATH);
}

/*
 * Column i of st for a terminal: every string here came from a host or a
 * perf.data file (an imported hostname), and an escape sequence in one
 * must not reach the terminal: control characters become '?'.
 */
static const char *safe(const char *s, const char *null, char *buf, size_t size)
{
	text_safe(buf, size, s ? s : null);
	return buf;
}

/* A boot's total of every counted event. */
static const char events_sql[] =
	"SELECT n.name, sum(c.count) FROM event_counts c"
	" JOIN intervals i USING (interval_id) JOIN event_names n USING (event_id)"
	" WHERE i.boot_id = ?1 GROUP BY n.name ORDER BY n.name";

/*
 * Counts scaled rather than counted: per event, the mean share of the
 * time its counter ran (event_counts.run_share) over the boot's last
 * MULTIPLEX_INTERVALS intervals, where it was below 1 in any of them.
 */
#define MULTIPLEX_INTERVALS 10
static const char multiplexed_sql[] =
	"SELECT n.name, avg(c.run_share) FROM event_counts c JOIN event_names n USING (event_id)"
	" WHERE c.interval_id IN (SELECT interval_id FROM intervals WHERE boot_id = ?1"
	"  ORDER BY end_ns DESC LIMIT ?2)"
	" GROUP BY n.name HAVING min(c.run_share) < 1 ORDER BY n.name";

/* The names of a boot's values, for JSON and CSV, in boots_sql's order. */
static const char *const boot_keys[] = {
	"boot_id", "hostname", "kernel_release", "kernel_build_id", "boot_uuid",
	"cpus", "source", "pmu", "pmu_detail", "lru_gen", "btf", "intervals",
	"seconds", "first", "last", "events_lost", "mm_structs", "mm_structs_live",
	"page_pairs", "lock_addresses",
};
#define NR_BOOT_KEYS ARRAY_SIZE(boot_keys)

/*
 * One boot as printed, whichever source it came from: a SQLite row or
 * the cluster's rows (which have no learned objects: null there).
 */
enum val_type { VAL_NULL, VAL_INT, VAL_NUM, VAL_STR };
struct val {
	enum val_type type;
	int64_t i;
	double d;
	const char *s;
};
/* A boot's event total, or a counter's run share: a name and its number. */
struct boot_number {
	char *name;
	union {
		int64_t count;		/* events */
		double share;		/* shares */
	};
};
struct boot_view {
	struct val v[NR_BOOT_KEYS];
	struct boot_number *events;
	size_t nr_events;
	bool has_shares;		/* false: not known (the cluster has no run_share) */
	struct boot_number *shares;	/* counters multiplexed lately */
	size_t nr_shares;
};

static const char *vstr(const struct boot_view *b, int i, const char *null, char *buf, size_t size)
{
	char num[32];

	switch (b->v[i].type) {
	case VAL_STR:
		return safe(b->v[i].s, null, buf, size);
	case VAL_INT:
		snprintf(num, sizeof(num), "%" PRId64, b->v[i].i);
		return safe(num, null, buf, size);
	case VAL_NUM:
		snprintf(num, sizeof(num), "%.0f", b->v[i].d);
		return safe(num, null, buf, size);
	default:
		return safe(NULL, null, buf, size);
	}
}

#define S(i, null) vstr(b, i, null, t[i], sizeof(t[i]))

static void print_boot(const struct boot_view *b)
{
	char t[NR_BOOT_KEYS][256];

	printf("boot %" PRId64 ": %s  kernel %s (%s)\n", b->v[0].i, S(1, "?"), S(2, "?"),
	       S(3, "no build-id"));
	printf("  boot id %s, %s CPUs, source %s\n", S(4, "?"), S(5, "?"), S(6, "?"));
	printf("  PMU %s%s%s, LRU_GEN %s, BTF %s\n", S(7, "?"),
	       b->v[8].type != VAL_NULL ? ": " : "", S(8, ""), S(9, "?"), S(10, "?"));
	printf("  %" PRId64 " intervals, %.0f s from %s to %s, %" PRId64 " lost events\n",
	       b->v[11].i, b->v[12].d, S(13, "-"), S(14, "-"), b->v[15].i);
	if (b->v[16].type == VAL_NULL)
		printf("  learned objects: not shipped (the host's database has them)\n");
	else
		printf("  learned: %" PRId64 " mm_struct (%" PRId64 " live), %" PRId64 " page pairs, %"
		       PRId64 " lock addresses\n", b->v[16].i, b->v[17].i, b->v[18].i, b->v[19].i);
	for (size_t k = 0; k < b->nr_events; k++)
		printf("    %-40s %15" PRId64 "\n", safe(b->events[k].name, "?", t[0], sizeof(t[0])),
		       b->events[k].count);
	for (size_t k = 0; k < b->nr_shares; k++)
		printf("  counters multiplexed: %s ran %.0f %% of the time (last %d intervals; "
		       "its counts are scaled)\n", safe(b->shares[k].name, "?", t[0], sizeof(t[0])),
		       100 * b->shares[k].share, MULTIPLEX_INTERVALS);
}

/* One row per boot, with its database (the per-event totals are JSON's). */
static void csv_boot(const struct boot_view *b, const char *dbname, struct csvw *w)
{
	csvw_str(w, dbname);
	for (size_t i = 0; i < NR_BOOT_KEYS; i++) {
		switch (b->v[i].type) {
		case VAL_INT: csvw_int(w, b->v[i].i); break;
		case VAL_NUM: csvw_num(w, b->v[i].d); break;
		case VAL_STR: csvw_str(w, b->v[i].s); break;
		default: csvw_str(w, NULL); break;
		}
	}
	csvw_end(w);
}

static void json_boot(const struct boot_view *b, struct jsonw *w)
{
	jsonw_object(w, NULL);
	for (size_t i = 0; i < NR_BOOT_KEYS; i++) {
		switch (b->v[i].type) {
		case VAL_INT: jsonw_int(w, boot_keys[i], b->v[i].i); break;
		case VAL_NUM: jsonw_num(w, boot_keys[i], b->v[i].d); break;
		case VAL_STR: jsonw_str(w, boot_keys[i], b->v[i].s); break;
		default: jsonw_null(w, boot_keys[i]); break;
		}
	}
	jsonw_object(w, "events");
	for (size_t k = 0; k < b->nr_events; k++)
		jsonw_int(w, b->events[k].name, b->events[k].count);
	jsonw_end(w);
	if (b->has_shares) {
		jsonw_object(w, "multiplexed");
		for (size_t k = 0; k < b->nr_shares; k++)
			jsonw_num(w, b->shares[k].name, b->shares[k].share);
		jsonw_end(w);
	} else {
		jsonw_null(w, "multiplexed");
	}
	jsonw_end(w);
}

enum status_format { FMT_TEXT, FMT_JSON, FMT_CSV };

struct status_out {
	enum status_format fmt;
	struct jsonw w;
	struct csvw cw;
};

static void emit_boot(struct status_out *o, const struct boot_view *b, const char *dbname)
{
	switch (o->fmt) {
	case FMT_TEXT: print_boot(b); break;
	case FMT_JSON: json_boot(b, &o->w); break;
	case FMT_CSV: csv_boot(b, dbname, &o->cw); break;
	}
}

/* A database's heading: its text line, or its JSON object opened. */
static void begin_db(struct status_out *o, const char *name, bool has_version, bool many)
{
	if (o->fmt == FMT_JSON) {
		jsonw_object(&o->w, NULL);
		jsonw_str(&o->w, "database", name);
		if (has_version)
			jsonw_uint(&o->w, "schema_version", db_schema_version());
		else
			jsonw_null(&o->w, "schema_version");
		jsonw_array(&o->w, "boots");
	} else if (o->fmt == FMT_TEXT) {
		if (many)
			printf("\n");
		if (has_version)
			printf("%s: schema version %u\n", name, db_schema_version());
		else
			printf("%s: a cluster\n", name);
	}
}


/* The columns of a boot, boot_keys' order, oldest first. */
static const char boots_sql[] =
	"SELECT b.boot_id, h.hostname, b.kernel_release, b.kernel_build_id, b.boot_uuid,"
	" b.nr_cpus_online, b.source, b.pmu_kind, b.pmu_detail, b.lru_gen, b.btf,"
	" (SELECT count(*) FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT coalesce(sum(end_ns - start_ns), 0) / 1e9 FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT strftime('%Y-%m-%dT%H:%M:%SZ', min(start_ns) / 1000000000, 'unixepoch') FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT strftime('%Y-%m-%dT%H:%M:%SZ', max(end_ns) / 1000000000, 'unixepoch') FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT coalesce(sum(events_lost), 0) FROM intervals i WHERE i.boot_id = b.boot_id),"
	" (SELECT count(*) FROM mm_objects m WHERE m.boot_id = b.boot_id),"
	" (SELECT count(*) FROM mm_objects m WHERE m.boot_id = b.boot_id AND free_ns IS NULL),"
	" (SELECT count(*) FROM page_pairs p WHERE p.boot_id = b.boot_id),"
	" (SELECT count(*) FROM lock_objects l WHERE l.boot_id = b.boot_id)"
	" FROM boots b JOIN hosts h USING (host_id) ORDER BY b.first_seen_ns";

/*
 * A boot's (name, number) rows of sql (events_sql: the count as an integer;
 * multiplexed_sql, with ?2 its window: the share as a double). Caller frees
 * the names and the array.
 */
static int sqlite_numbers(sqlite3 *db, const char *sql, int64_t boot_id, bool shares,
			  struct boot_number **ret, size_t *ret_n)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	struct boot_number *v = NULL;
	size_t n = 0, alloc = 0;
	int r, rc;

	*ret = NULL;
	*ret_n = 0;
	r = db_prepare(db, &st, sql);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	if (shares)
		sqlite3_bind_int(st, 2, MULTIPLEX_INTERVALS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow_array((void **)&v, &alloc, sizeof(*v), n + 1) < 0)
			goto oom;
		v[n].name = strdup((const char *)sqlite3_column_text(st, 0) ?: "?");
		if (!v[n].name)
			goto oom;
		if (shares)
			v[n++].share = sqlite3_column_double(st, 1);
		else
			v[n++].count = sqlite3_column_int64(st, 1);
	}
	if (rc != SQLITE_DONE) {
		r = db_step_failed(st, rc);
		goto fail;
	}
	*ret = v;
	*ret_n = n;
	return 0;
oom:
	r = log_oom();
fail:
	for (size_t k = 0; k < n; k++)
		free(v[k].name);
	free(v);
	return r;
}

/* An event list's and a share list's names and arrays, as sqlite_boot() made them. */
static void sqlite_boot_done(struct boot_view *v)
{
	for (size_t k = 0; k < v->nr_events; k++)
		free(v->events[k].name);
	free(v->events);
	for (size_t k = 0; k < v->nr_shares; k++)
		free(v->shares[k].name);
	free(v->shares);
	*v = (struct boot_view){};
}

/*
 * The current row of boots_sql (b) into v: its values, valid until the
 * next step, and (totals) its events and shares. Caller frees with
 * sqlite_boot_done().
 */
static int sqlite_boot(sqlite3 *db, sqlite3_stmt *b, bool totals, struct boot_view *v)
{
	int r;

	*v = (struct boot_view){ .has_shares = true };
	for (size_t i = 0; i < NR_BOOT_KEYS; i++) {
		struct val *x = &v->v[i];

		switch (sqlite3_column_type(b, (int)i)) {
		case SQLITE_NULL:
			x->type = VAL_NULL;
			break;
		case SQLITE_INTEGER:
			x->type = VAL_INT;
			x->i = sqlite3_column_int64(b, (int)i);
			x->d = (double)x->i;
			break;
		case SQLITE_FLOAT:
			x->type = VAL_NUM;
			x->d = sqlite3_column_double(b, (int)i);
			x->i = (int64_t)x->d;
			break;
		default:
			x->type = VAL_STR;
			x->s = (const char *)sqlite3_column_text(b, (int)i);
		}
	}
	if (!totals)
		return 0;
	r = sqlite_numbers(db, events_sql, v->v[0].i, false, &v->events, &v->nr_events);
	if (r >= 0)
		r = sqlite_numbers(db, multiplexed_sql, v->v[0].i, true, &v->shares, &v->nr_shares);
	if (r < 0)
		sqlite_boot_done(v);
	return r;
}

/*
 * What mmhitm ship sent of a database, and what the size budget deleted
 * before it could (retention with ship_required counts those).
 */
struct ship_view {
	bool shipped;			/* ship_cursors has the intervals' cursor */
	int64_t through;		/* ... the last interval_id sent */
	char at[24];			/* ... when ClickHouse acknowledged it */
	int64_t waiting;		/* intervals after it */
	int64_t deleted;		/* sum of retention_log.unshipped */
	char first[24], last[24];	/* the retention runs that deleted them */
};

/* A text column of the current row into buf ("" for NULL). */
static void column_text(sqlite3_stmt *st, int col, char *buf, size_t len)
{
	snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, col) ?: "");
}

static const char ship_sql[] =
	"SELECT last_key, strftime('%Y-%m-%dT%H:%M:%SZ', shipped_ns / 1000000000, 'unixepoch'),"
	" (SELECT count(*) FROM intervals WHERE interval_id > last_key)"
	" FROM ship_cursors WHERE tbl = 'intervals'";
static const char unshipped_sql[] =
	"SELECT coalesce(sum(unshipped), 0),"
	" strftime('%Y-%m-%dT%H:%M:%SZ', min(CASE WHEN unshipped > 0 THEN ts_ns END) / 1000000000, 'unixepoch'),"
	" strftime('%Y-%m-%dT%H:%M:%SZ', max(CASE WHEN unshipped > 0 THEN ts_ns END) / 1000000000, 'unixepoch')"
	" FROM retention_log";

/* A database's shipping; a database older than mmhitm ship has none (0). */
static int sqlite_ship(sqlite3 *db, struct ship_view *v)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL, *del = NULL;
	int rc;

	*v = (struct ship_view){};
	if (sqlite3_prepare_v2(db, ship_sql, -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, unshipped_sql, -1, &del, NULL) != SQLITE_OK)
		return 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		v->shipped = true;
		v->through = sqlite3_column_int64(st, 0);
		column_text(st, 1, v->at, sizeof(v->at));
		v->waiting = sqlite3_column_int64(st, 2);
	} else if (rc != SQLITE_DONE) {
		return db_step_failed(st, rc);
	}
	rc = sqlite3_step(del);
	if (rc != SQLITE_ROW)
		return db_step_failed(del, rc);
	v->deleted = sqlite3_column_int64(del, 0);
	column_text(del, 1, v->first, sizeof(v->first));
	column_text(del, 2, v->last, sizeof(v->last));
	return 0;
}

static void print_ship(const struct ship_view *v)
{
	if (v->shipped)
		printf("  shipped: intervals through %" PRId64 ", acknowledged %s; %" PRId64
		       " not sent yet\n", v->through, v->at, v->waiting);
	if (v->deleted)
		printf("  deleted unshipped: %" PRId64 " intervals (or their detail) that max_db_size "
		       "deleted before mmhitm ship sent them, %s to %s (retention_log.unshipped)\n",
		       v->deleted, v->first, v->last);
}

static void json_ship(const struct ship_view *v, struct jsonw *w)
{
	jsonw_object(w, "shipping");
	if (v->shipped) {
		jsonw_int(w, "shipped_through", v->through);
		jsonw_str(w, "acknowledged", v->at);
		jsonw_int(w, "intervals_not_sent", v->waiting);
	} else {
		jsonw_null(w, "shipped_through");
		jsonw_null(w, "acknowledged");
		jsonw_null(w, "intervals_not_sent");
	}
	jsonw_int(w, "deleted_unshipped", v->deleted);
	if (v->deleted) {
		jsonw_str(w, "deleted_unshipped_first", v->first);
		jsonw_str(w, "deleted_unshipped_last", v->last);
	} else {
		jsonw_null(w, "deleted_unshipped_first");
		jsonw_null(w, "deleted_unshipped_last");
	}
	jsonw_end(w);
}

/* A database's block closed: JSON's boots, then shipping (null for a cluster). */
static void end_db(struct status_out *o, const struct ship_view *ship)
{
	if (o->fmt == FMT_JSON) {
		jsonw_end(&o->w);
		if (ship)
			json_ship(ship, &o->w);
		else
			jsonw_null(&o->w, "shipping");	/* a cluster: the same keys */
		jsonw_end(&o->w);
	} else if (o->fmt == FMT_TEXT && ship) {
		print_ship(ship);
	}
}

/* One database's block; -errno (a failure to open said). */
static int status_db(struct status_out *o, const char *path, bool many)
{
	_cleanup_finalize_ sqlite3_stmt *b = NULL;
	struct ship_view ship;
	sqlite3 *db = NULL;
	int r, rc;

	/* a reader: never migrates, writes or creates a file */
	r = cli_db_open(path, DB_READONLY | DB_NO_CREATE, &db);
	if (r < 0)
		return r;
	begin_db(o, path, true, many);
	r = db_prepare(db, &b, boots_sql);
	if (r < 0)
		goto out;
	while ((rc = sqlite3_step(b)) == SQLITE_ROW) {
		struct boot_view v;

		r = sqlite_boot(db, b, o->fmt != FMT_CSV, &v);
		if (r < 0)
			goto out;
		emit_boot(o, &v, path);
		sqlite_boot_done(&v);
	}
	if (rc != SQLITE_DONE)
		r = db_step_failed(b, rc);
	if (r >= 0)
		r = sqlite_ship(db, &ship);
out:
	end_db(o, r >= 0 ? &ship : NULL);
	db_finalize(b);
	b = NULL;
	db_close(db);
	return r;
}

/* The row of t whose first two cells are (a, b); t sorted by them. -1: none. */
static ssize_t tsv_find2(const struct tsv *t, const char *a, const char *b)
{
	size_t lo = 0, hi = t->rows;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(tsv_get(t, mid, 0) ?: "", a);

		if (c == 0)
			c = strcmp(tsv_get(t, mid, 1) ?: "", b);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The cluster's boots, in the order they are printed: host, then oldest first. */
struct cboot {
	size_t row;		/* in the boots result */
	const char *hostname;
	int64_t ordinal;	/* the host's boots numbered oldest first, from 1 */
};

static const struct tsv *cmp_boots_tsv;

static int cmp_cboot(const void *x, const void *y)
{
	const struct cboot *a = x, *b = y;
	int c = strcmp(a->hostname, b->hostname);

	if (c == 0)
		c = strcmp(tsv_get(cmp_boots_tsv, a->row, 0), tsv_get(cmp_boots_tsv, b->row, 0));
	if (c == 0)
		c = a->ordinal < b->ordinal ? -1 : a->ordinal > b->ordinal;
	return c;
}

/* status from the cluster: what the queries answered, and the boots made of them. */
struct cstatus {
	struct http *h;
	const char *d;		/* the cluster's database, an identifier */
	struct tsv hosts, boots, iv, ev;
	struct cboot *cb;	/* the boots in their order */
	struct boot_number *evs; /* one boot's events; NULL: none asked for (CSV) */
	char iso[2][32];	/* one boot's first and last, as SQLite writes them */
};

static void cstatus_done(struct cstatus *c)
{
	free(c->cb);
	free(c->evs);
	tsv_done(&c->hosts);
	tsv_done(&c->boots);
	tsv_done(&c->iv);
	tsv_done(&c->ev);
	http_free(c->h);
}

/* The hosts, their boots, the boots' intervals and (events) their events' totals. */
static int cstatus_fetch(struct cstatus *c, bool events)
{
	const char *d = c->d;
	int r;

	r = cluster_selectf(c->h, "hosts", 2, &c->hosts,
		"SELECT machine_id, hostname FROM %s.hosts FINAL WHERE 1 ORDER BY machine_id", d);
	if (r >= 0)
		r = cluster_selectf(c->h, "boots", 11, &c->boots,
			"SELECT machine_id, boot_uuid, kernel_release, kernel_build_id, nr_cpus_online,"
			" source, pmu_kind, pmu_detail, lru_gen, btf, first_seen_ns"
			" FROM %s.boots FINAL WHERE 1 ORDER BY machine_id, first_seen_ns, boot_uuid", d);
	if (r >= 0)
		r = cluster_selectf(c->h, "intervals", 7, &c->iv,
			"SELECT machine_id, boot_uuid, count(), sum(end_ns - start_ns) / 1e9,"
			" toString(toDateTime(intDiv(min(start_ns), 1000000000), 'UTC')),"
			" toString(toDateTime(intDiv(max(end_ns), 1000000000), 'UTC')), sum(events_lost)"
			" FROM %s.intervals FINAL GROUP BY machine_id, boot_uuid"
			" ORDER BY machine_id, boot_uuid", d);
	if (r < 0 || !events)
		return r;
	r = cluster_selectf(c->h, "event_counts", 4, &c->ev,
		"SELECT machine_id, boot_uuid, event, sum(count) FROM %s.event_counts FINAL"
		" GROUP BY machine_id, boot_uuid, event ORDER BY machine_id, boot_uuid, event", d);
	if (r < 0)
		return r;
	c->evs = calloc(c->ev.rows + 1, sizeof(*c->evs));
	return c->evs ? 0 : log_oom();
}

/* The boots in their order: each with its host's name and its number on the host. */
static int cstatus_order(struct cstatus *c)
{
	const struct tsv *boots = &c->boots, *hosts = &c->hosts;

	c->cb = calloc(boots->rows + 1, sizeof(*c->cb));
	if (!c->cb)
		return log_oom();
	for (size_t i = 0; i < boots->rows; i++) {
		struct cboot *b = &c->cb[i];
		const char *mid = tsv_get(boots, i, 0);
		size_t lo = 0, hi = hosts->rows;

		b->row = i;
		b->ordinal = i > 0 && strcmp(tsv_get(boots, i - 1, 0), mid) == 0 ? c->cb[i - 1].ordinal + 1 : 1;
		b->hostname = "?";
		while (lo < hi) {
			size_t m = (lo + hi) / 2;
			int cmp = strcmp(tsv_get(hosts, m, 0), mid);

			if (cmp == 0) {
				b->hostname = tsv_get(hosts, m, 1) ?: "?";
				break;
			}
			if (cmp < 0)
				lo = m + 1;
			else
				hi = m;
		}
	}
	cmp_boots_tsv = boots;
	qsort(c->cb, boots->rows, sizeof(*c->cb), cmp_cboot);
	return 0;
}

/* The events of the boot (mid, uuid) into v, from c->evs. */
static void cstatus_events(struct cstatus *c, const char *mid, const char *uuid, struct boot_view *v)
{
	const struct tsv *ev = &c->ev;
	size_t lo = 0, hi = ev->rows, ne = 0;

	/* the first event row of this boot */
	while (lo < hi) {
		size_t m = (lo + hi) / 2;
		int cmp = strcmp(tsv_get(ev, m, 0), mid);

		if (cmp == 0)
			cmp = strcmp(tsv_get(ev, m, 1), uuid);
		if (cmp < 0)
			lo = m + 1;
		else
			hi = m;
	}
	for (size_t e = lo; e < ev->rows && strcmp(tsv_get(ev, e, 0), mid) == 0 &&
	     strcmp(tsv_get(ev, e, 1), uuid) == 0; e++)
		c->evs[ne++] = (struct boot_number){ .name = tsv_get(ev, e, 2) ?: "?",
						     .count = tsv_int(ev, e, 3) };
	v->events = c->evs;
	v->nr_events = ne;
}

/* The k-th boot in order, as SQLite's boots_sql gives it; valid until the next. */
static void cstatus_boot(struct cstatus *c, size_t k, struct boot_view *v)
{
	/* the cluster's columns for boot_keys[2..10] */
	static const int from[] = { -1, -1, 2, 3, 1, 4, 5, 6, 7, 8, 9 };
	const struct tsv *boots = &c->boots, *iv = &c->iv;
	size_t i = c->cb[k].row;
	const char *mid = tsv_get(boots, i, 0), *uuid = tsv_get(boots, i, 1);
	ssize_t j = tsv_find2(iv, mid, uuid);

	*v = (struct boot_view){};
	v->v[0] = (struct val){ .type = VAL_INT, .i = c->cb[k].ordinal };
	v->v[1] = (struct val){ .type = VAL_STR, .s = c->cb[k].hostname };
	for (int col = 2; col <= 10; col++) {
		const char *s = tsv_get(boots, i, (size_t)from[col]);

		if (col == 5)
			v->v[col] = (struct val){ .type = VAL_INT, .i = tsv_int(boots, i, 4) };
		else
			v->v[col] = (struct val){ .type = s ? VAL_STR : VAL_NULL, .s = s };
	}
	v->v[11] = (struct val){ .type = VAL_INT, .i = j >= 0 ? tsv_int(iv, (size_t)j, 2) : 0 };
	v->v[12] = (struct val){ .type = VAL_NUM, .d = j >= 0 ? tsv_num(iv, (size_t)j, 3) : 0 };
	for (int col = 13; col <= 14; col++) {
		/* ISO 8601 as SQLite's strftime writes it: "YYYY-MM-DDTHH:MM:SSZ" */
		const char *s = j >= 0 ? tsv_get(iv, (size_t)j, (size_t)col - 9) : NULL;
		char *iso = c->iso[col - 13];

		if (s && strlen(s) == 19 && s[10] == ' ') {
			snprintf(iso, sizeof(c->iso[0]), "%.10sT%sZ", s, s + 11);
			v->v[col] = (struct val){ .type = VAL_STR, .s = iso };
		}
	}
	v->v[15] = (struct val){ .type = VAL_INT, .i = j >= 0 ? tsv_int(iv, (size_t)j, 6) : 0 };
	/* 16..19: learned objects stay in the host's database */
	if (c->evs)
		cstatus_events(c, mid, uuid, v);
}

/*
 * The cluster's block: every shipped host's boots with the same values as
 * from SQLite, read with FINAL (exact before ReplacingMergeTree merges).
 * Four plain queries joined here rather than JOINs in SQL: 18.16 has one
 * JOIN per SELECT, and a Distributed table on a JOIN's right side would be
 * queried from every shard. "FINAL WHERE 1 ORDER BY": 18.16 fails FINAL
 * with ORDER BY and no WHERE on a Distributed table ("Cannot find column
 * batch in source stream").
 */
static int status_cluster(struct status_out *o, const struct source *src, const char *cred,
			  const char *config_path, bool config_given)
{
	struct cstatus c = { .d = src->database };
	int r;

	r = cluster_open(src, cred, config_path, config_given, &c.h);
	if (r >= 0)
		r = cstatus_fetch(&c, o->fmt != FMT_CSV);
	if (r >= 0)
		r = cstatus_order(&c);
	if (r < 0)
		goto out;
	begin_db(o, src->arg, false, false);
	for (size_t k = 0; k < c.boots.rows; k++) {
		struct boot_view v;

		cstatus_boot(&c, k, &v);
		emit_boot(o, &v, src->arg);
	}
	end_db(o, NULL);
out:
	cstatus_done(&c);
	return r;
}

/*
 * --check: the newest live boot's last interval and its health. The
 * interval length is the longest of the last five rows (a partial row at
 * a restart is shorter).
 */
static int check(sqlite3 *db, const char *path)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t now = now_ns(CLOCK_REALTIME), last_end, len, lost;
	int active = db_daemon_active(path);
	const char *host;
	int r;

	r = db_prepare(db, &st,
		"WITH b AS (SELECT boot_id, host_id FROM boots WHERE source = 'live'"
		"           ORDER BY last_seen_ns DESC LIMIT 1),"
		" last AS (SELECT * FROM intervals WHERE boot_id = (SELECT boot_id FROM b)"
		"          ORDER BY end_ns DESC LIMIT 5)"
		" SELECT (SELECT hostname FROM hosts WHERE host_id = (SELECT host_id FROM b)),"
		"  (SELECT max(end_ns) FROM last), (SELECT max(end_ns - start_ns) FROM last),"
		"  (SELECT coalesce(sum(events_lost), 0) FROM intervals"
		"   WHERE boot_id = (SELECT boot_id FROM b) AND end_ns > ?1)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, now - 3600 * NSEC_PER_SEC);
	if (sqlite3_step(st) != SQLITE_ROW || sqlite3_column_type(st, 1) == SQLITE_NULL) {
		printf("UNHEALTHY: %s holds no interval recorded by mmhitmd\n", path);
		return EXIT_UNHEALTHY;
	}
	host = (const char *)sqlite3_column_text(st, 0);
	last_end = sqlite3_column_int64(st, 1);
	len = sqlite3_column_int64(st, 2);
	lost = sqlite3_column_int64(st, 3);
	if (active <= 0) {
		printf("UNHEALTHY: mmhitmd is not recording into %s (no daemon holds %s.lock); "
		       "its last interval ended %.0f s ago\n", path, path, (now - last_end) / 1e9);
		return EXIT_UNHEALTHY;
	}
	if (now - last_end > 2 * len) {
		printf("UNHEALTHY: the last interval of %s ended %.0f s ago, over two intervals "
		       "(%.0f s each): mmhitmd runs but does not write\n", host ?: "?",
		       (now - last_end) / 1e9, len / 1e9);
		return EXIT_UNHEALTHY;
	}
	if (lost) {
		printf("UNHEALTHY: %s lost %" PRId64 " learning events in the last hour "
		       "(raise buffer_size_kb)\n", host ?: "?", lost);
		return EXIT_UNHEALTHY;
	}
	printf("OK: mmhitmd records %s into %s, last interval ended %.0f s ago\n", host ?: "?", path,
	       (now - last_end) / 1e9);
	return 0;
}

static int status_option(int opt, const char *arg, void *userdata)
{
	(void)arg;
	if (opt != 'C')
		return -EINVAL;
	*(bool *)userdata = true;
	return 0;
}

/* The options: 0, 1 after --help, EXIT_USAGE (said). */
static int status_parse(int argc, char **argv, struct cli_opts *o, bool *ret_health)
{
	static const struct option opts[] = {
		{ "check", no_argument, NULL, 'C' },
		{}
	};
	const struct cmd_options c = {
		.prog = "mmhitm status", .sets = OPTS_SOURCES | OPTS_FORMAT | OPTS_CLUSTER,
		.opts = opts, .parse = status_option, .userdata = ret_health, .help = cmd_status_help,
	};
	int r;

	*ret_health = false;
	r = cli_opts_parse(argc, argv, &c, o);
	if (r != 0)
		return r;
	if (*ret_health && sources_clickhouse(&o->src)) {
		log_error("--check tests a host's own database (the daemon's lock on it); the cluster's"
			  " status lists each host's last shipped interval");
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_status(int argc, char **argv)
{
	static const struct status_out zero_out;
	struct status_out *o = NULL;
	struct cli_opts opt;
	bool health, many;
	int r;

	r = status_parse(argc, argv, &opt, &health);
	if (r != 0)
		goto out;
	/* every database, each on its own; one unhealthy makes the exit's */
	if (health) {
		for (size_t i = 0; i < opt.src.n; i++) {
			const char *path = opt.src.v[i].path;
			sqlite3 *db = NULL;
			int k;

			k = db_open(path, DB_READONLY | DB_NO_CREATE, &db);
			if (k < 0) {
				printf("UNHEALTHY: %s cannot be read: %s\n", path, db_open_error());
				k = EXIT_UNHEALTHY;
			} else {
				k = check(db, path);
			}
			db_close(db);
			if (k != 0 && r == 0)
				r = k < 0 ? EXIT_UNHEALTHY : k;
		}
		goto out;
	}

	o = malloc(sizeof(*o));
	if (!o) {
		r = log_oom();
		goto out;
	}
	*o = zero_out;
	o->fmt = opt.format == FORMAT_JSON ? FMT_JSON : opt.format == FORMAT_CSV ? FMT_CSV : FMT_TEXT;
	many = opt.src.n > 1;
	if (o->fmt == FMT_CSV) {
		csvw_init(&o->cw, stdout);
		csvw_str(&o->cw, "database");
		for (size_t k = 0; k < NR_BOOT_KEYS; k++)
			csvw_str(&o->cw, boot_keys[k]);
		csvw_end(&o->cw);
	} else if (o->fmt == FMT_JSON) {
		jsonw_init(&o->w, stdout);
		if (many)
			jsonw_array(&o->w, NULL);
	}
	for (size_t i = 0; i < opt.src.n; i++) {
		unsigned int said = log_errors_said();
		int k;

		if (opt.src.v[i].kind == SOURCE_CLICKHOUSE) {
			k = status_cluster(o, &opt.src.v[i], opt.credentials, opt.config, opt.config_given);
		} else {
			k = status_db(o, opt.src.v[i].path, many && i > 0);
			if (k < 0 && many)
				cli_many_failed("status", opt.src.v[i].path, k, said);
		}
		if (k < 0 && r == 0)
			r = k;
	}
	if (o->fmt == FMT_JSON) {
		if (many)
			jsonw_end(&o->w);
		if (jsonw_finish(&o->w) < 0 && r >= 0)
			r = log_error_errno(EIO, "Failed to write the JSON");
	}
out:
	free(o);
	cli_opts_done(&opt);
	return r == 1 ? 0 : r;
}
