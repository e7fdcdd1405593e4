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

int cmd_ship(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db",          required_argument, NULL, 'd' },
		{ "to",          required_argument, NULL, 't' },
		{ "credentials", required_argument, NULL, 'c' },
		{ "init",        no_argument,       NULL, 'I' },
		{ "cluster",     required_argument, NULL, 'C' },
		{ "batch-rows",  required_argument, NULL, 'b' },
		{ "resend",      no_argument,       NULL, 'R' },
		{ "rollup",      required_argument, NULL, 'U' },
		{ "config",      required_argument, NULL, 'f' },
		{ "help",        no_argument,       NULL, 'h' },
		{}
	};
	const char *path = default_db_path(), *to = NULL, *cred_path = NULL, *cluster = "mmhitm";
	const char *config_path = CONFIG_DEFAULT_PATH;
	_cleanup_free_ char *userpwd = NULL, *database = NULL, *url = NULL;
	struct ship_options o = { .batch_rows = SHIP_DEFAULT_BATCH_ROWS };
	struct ship_result res;
	struct config cfg;
	struct http *h = NULL;
	bool init = false, config_given = false;
	const char *rollup = NULL;
	int64_t grain;
	sqlite3 *db = NULL;
	uint64_t u;
	int c, r;

	while ((c = cli_getopt(argc, argv, "d:t:c:h", opts, "mmhitm ship")) != -1) {
		switch (c) {
		case 'd': path = optarg; break;
		case 't': to = optarg; break;
		case 'c': cred_path = optarg; break;
		case 'I': init = true; break;
		case 'C': cluster = optarg; break;
		case 'b':
			if (parse_u64(optarg, &u) < 0 || u == 0) {
				log_error("--batch-rows wants a positive number, not '%s'", optarg);
				return CMD_USAGE;
			}
			o.batch_rows = u;
			break;
		case 'R': o.resend = true; break;
		case 'U': rollup = optarg; break;
		case 'f': config_path = optarg; config_given = true; break;
		case 'h': cmd_ship_help(); return 0;
		default: return CMD_USAGE;
		}
	}
	if (optind < argc) {
		log_error("Unexpected argument '%s'; 'mmhitm ship --help' says more", argv[optind]);
		return CMD_USAGE;
	}

	/* The URL and credentials the hourly unit uses live in mmhitm.conf. */
	config_init(&cfg);
	r = config_load(&cfg, config_path, config_given);
	if (r < 0)
		goto out;
	if (!to)
		to = cfg.ship_url && *cfg.ship_url ? cfg.ship_url : NULL;
	if (!to) {
		log_error("No cluster to ship to: give --to URL or set ship_url in %s", config_path);
		r = CMD_USAGE;
		goto out;
	}
	grain = cfg.ship_rollup_ns;
	if (rollup && (parse_duration_ns(rollup, &grain) < 0 || grain < 0 || grain > 86400 * NSEC_PER_SEC)) {
		log_error("--rollup wants a duration up to 1d (0: none), not '%s'", rollup);
		r = CMD_USAGE;
		goto out;
	}
	if (grain > 0 && grain < NSEC_PER_SEC) {
		log_error("A roll-up bucket is whole seconds, at least 1s");
		r = CMD_USAGE;
		goto out;
	}
	o.rollup_ns = grain / NSEC_PER_SEC * NSEC_PER_SEC;
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
	o.database = database;
	r = ship_url(to, &url);
	if (r < 0)
		goto out;
	h = http_new(url, userpwd, SHIP_TIMEOUT_S);
	if (!h) {
		r = -EINVAL;
		goto out;
	}
	if (init) {
		r = ship_init(h, database, cluster);
		goto out;
	}

	/* A writer of ship_cursors only: short transactions beside mmhitmd. */
	r = db_open(path, DB_NO_CREATE, &db);
	if (r < 0)
		goto out;
	r = ship_run(db, h, &o, &res);
	print_result(&res);
out:
	db_close(db);
	http_free(h);
	config_done(&cfg);
	return r;
}
