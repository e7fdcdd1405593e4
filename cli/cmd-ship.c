// SPDX-License-Identifier: GPL-2.0
/* mmhitm ship: send what the cluster lacks of this host's database to ClickHouse. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "config.h"
#include "db.h"
#include "http.h"
#include "log.h"
#include "opts.h"
#include "ship.h"
#include "util.h"

#define SHIP_DEFAULT_BATCH_ROWS 500000
#define SHIP_TIMEOUT_S 300	/* per request: a large batch on a busy cluster */

void cmd_ship_help(void)
{
	printf("Usage: mmhitm ship [--db PATH] [--to URL] [--credentials FILE] [--init [--cluster NAME]]\n"
	       "                   [--batch-rows N] [--rollup DURATION] [--resend] [--config FILE]\n\n"
	       "Sends the rows of a host database that the ClickHouse cluster does not have\n"
	       "yet (hosts, boots, symbols, intervals, event counts, vmstat deltas, path rows\n"
	       "and attributed HITM lines of analyzed intervals) over ClickHouse's HTTP\n"
	       "interface, one insert per table and batch. A table's cursor (ship_cursors)\n"
	       "advances only after ClickHouse acknowledged its batch, and the cluster's tables\n"
	       "collapse a batch sent twice, so a crash or a down cluster loses and duplicates\n"
	       "nothing: the next run sends what is missing. It also sends the intervals summed\n"
	       "into buckets (interval_rollup, path_rollup: what mmhitm report --source\n"
	       "clickhouse:// reads), each bucket once the host moved past it.\n\n"
	       "  --db PATH          the database (default $MMHITM_DB or the daemon's)\n"
	       "  --to URL           http(s)://HOST:PORT[/?database=DB] (default: ship_url of\n"
	       "                     the configuration); the database defaults to mmhitm\n"
	       "  --credentials FILE USER:PASSWORD on one line, a file only its owner may read\n"
	       "                     (default: ship_credentials of the configuration)\n"
	       "  --init             create the cluster's tables (schema/clickhouse) on the\n"
	       "                     server of --to, and exit; run it on every server\n"
	       "  --cluster NAME     the cluster of the Distributed tables (default mmhitm)\n"
	       "  --batch-rows N     rows per insert, rounded up to whole intervals (default %d)\n"
	       "  --rollup DURATION  the roll-ups' bucket (default: ship_rollup of the\n"
	       "                     configuration, 10m); 0: no roll-ups\n"
	       "  --resend           send everything again (after mmhitm analyze --rebuild);\n"
	       "                     the newer rows replace the cluster's\n"
	       "  --config FILE      where ship_url and ship_credentials are read (default\n"
	       "                     %s)\n\n"
	       "Exit status: 0 everything sent, 1 a batch was not acknowledged (nothing is\n"
	       "lost: it waits for the next run), 2 usage.\n",
	       SHIP_DEFAULT_BATCH_ROWS, CONFIG_DEFAULT_PATH);
}

/*
 * The URL of every request: to without its database= (every statement
 * names its database, and --init must create it first, which ClickHouse
 * refuses while the URL names a database it lacks), plus
 * insert_distributed_sync=1: a Distributed insert then returns only once
 * every shard has its rows, so the 200 the cursor waits for means stored,
 * not queued on the node we talked to. Caller frees.
 */
static int ship_url(const char *to, char **ret)
{
	const char *q = strchr(to, '?'), *host = strstr(to, "://");
	_cleanup_free_ char *base = NULL;
	char *p;

	base = strndup(to, q ? (size_t)(q - to) : strlen(to));
	if (!base)
		return log_oom();
	host = host ? strstr(base, "://") + 3 : base;
	if (asprintf(&p, "%s%s?insert_distributed_sync=1", base, strchr(host, '/') ? "" : "/") < 0)
		return log_oom();
	for (const char *a = q; a && *a; a = strchr(a, '&')) {
		size_t n;
		char *np;

		a++;
		n = strcspn(a, "&#");
		if (n == 0 || startswith(a, "database="))
			continue;
		if (asprintf(&np, "%s&%.*s", p, (int)n, a) < 0) {
			free(p);
			return log_oom();
		}
		free(p);
		p = np;
	}
	*ret = p;
	return 0;
}

static void print_result(const struct ship_result *res)
{
	for (size_t i = 0; i < SHIP_RESULTS; i++) {
		const struct ship_table_result *t = &res->t[i];

		if (!t->table)
			continue;
		printf("%-15s %9" PRId64 " rows in %" PRId64 " batches", t->table, t->rows, t->batches);
		if (t->pending > 0)
			printf(", %" PRId64 " waiting", t->pending);
		printf("\n");
	}
	if (res->unanalyzed > 0)
		printf("%" PRId64 " intervals wait for mmhitm analyze before their path rows and lines"
		       " are sent\n", res->unanalyzed);
}

struct ship_args {
	const char *to, *cluster, *rollup;
	bool init;
	struct ship_options o;
};

static int ship_option(int opt, const char *arg, void *userdata)
{
	struct ship_args *a = userdata;
	uint64_t u;

	switch (opt) {
	case 't': a->to = arg; return 0;
	case 'I': a->init = true; return 0;
	case 'C': a->cluster = arg; return 0;
	case 'b':
		if (parse_u64(arg, &u) < 0 || u == 0) {
			log_error("--batch-rows wants a positive number, not '%s'", arg);
			return -EINVAL;
		}
		a->o.batch_rows = u;
		return 0;
	case 'R': a->o.resend = true; return 0;
	case 'U': a->rollup = arg; return 0;
	}
	return -EINVAL;
}

/* The options: 0, 1 after --help, EXIT_USAGE (said). */
static int ship_parse(int argc, char **argv, struct cli_opts *co, struct ship_args *a)
{
	static const struct option opts[] = {
		{ "to",          required_argument, NULL, 't' },
		{ "init",        no_argument,       NULL, 'I' },
		{ "cluster",     required_argument, NULL, 'C' },
		{ "batch-rows",  required_argument, NULL, 'b' },
		{ "resend",      no_argument,       NULL, 'R' },
		{ "rollup",      required_argument, NULL, 'U' },
		{}
	};
	const struct cmd_options c = {
		.prog = "mmhitm ship", .sets = OPTS_DB | OPTS_CLUSTER, .opts = opts, .shortopts = "t:",
		.parse = ship_option, .userdata = a, .help = cmd_ship_help,
	};
	int r;

	*a = (struct ship_args){ .cluster = "mmhitm", .o = { .batch_rows = SHIP_DEFAULT_BATCH_ROWS } };
	r = cli_opts_parse(argc, argv, &c, co);
	if (r != 0)
		return r;
	if (optind < argc) {
		log_error("Unexpected argument '%s'; 'mmhitm ship --help' says more", argv[optind]);
		return EXIT_USAGE;
	}
	return 0;
}

/* The cluster's grain: --rollup, else ship_rollup. 0 or EXIT_USAGE (said). */
static int ship_grain(const struct ship_args *a, const struct config *cfg, int64_t *ret)
{
	int64_t grain = cfg->ship_rollup_ns;

	if (a->rollup && (parse_duration_ns(a->rollup, &grain) < 0 || grain < 0 ||
			  grain > 86400 * NSEC_PER_SEC)) {
		log_error("--rollup wants a duration up to 1d (0: none), not '%s'", a->rollup);
		return EXIT_USAGE;
	}
	if (grain > 0 && grain < NSEC_PER_SEC) {
		log_error("A roll-up bucket is whole seconds, at least 1s");
		return EXIT_USAGE;
	}
	*ret = grain / NSEC_PER_SEC * NSEC_PER_SEC;
	return 0;
}

int cmd_ship(int argc, char **argv)
{
	_cleanup_free_ char *userpwd = NULL, *database = NULL, *url = NULL;
	const char *to, *cred_path;
	struct ship_result res;
	struct ship_args a;
	struct cli_opts co;
	struct config cfg;
	struct http *h = NULL;
	sqlite3 *db = NULL;
	int r;

	r = ship_parse(argc, argv, &co, &a);
	if (r != 0) {
		cli_opts_done(&co);
		return r == 1 ? 0 : r;
	}
	to = a.to;
	cred_path = co.credentials;

	/* The URL and credentials the hourly unit uses live in mmhitm.conf. */
	config_init(&cfg);
	r = config_load(&cfg, co.config, co.config_given);
	if (r < 0)
		goto out;
	if (!to)
		to = cfg.ship_url && *cfg.ship_url ? cfg.ship_url : NULL;
	if (!to) {
		log_error("No cluster to ship to: give --to URL or set ship_url in %s", co.config);
		r = EXIT_USAGE;
		goto out;
	}
	r = ship_grain(&a, &cfg, &a.o.rollup_ns);
	if (r != 0)
		goto out;
	if (!cred_path && cfg.ship_credentials && *cfg.ship_credentials)
		cred_path = cfg.ship_credentials;
	if (cred_path) {
		r = http_read_credentials(cred_path, &userpwd);
		if (r < 0)
			goto out;
	}
	database = http_url_param(to, "database");
	if (!database || !*database) {
		free(database);
		database = strdup("mmhitm");
		if (!database) {
			r = log_oom();
			goto out;
		}
	}
	a.o.database = database;
	r = ship_url(to, &url);
	if (r < 0)
		goto out;
	h = http_new(url, userpwd, SHIP_TIMEOUT_S);
	if (!h) {
		r = -EINVAL;
		goto out;
	}
	if (a.init) {
		r = ship_init(h, database, a.cluster);
		goto out;
	}

	/* A writer of ship_cursors only: short transactions beside mmhitmd. */
	r = cli_db_open(co.db, DB_NO_CREATE, &db);
	if (r < 0)
		goto out;
	r = ship_run(db, h, &a.o, &res);
	print_result(&res);
out:
	db_close(db);
	http_free(h);
	config_done(&cfg);
	cli_opts_done(&co);
	return r;
}
