// SPDX-License-Identifier: GPL-2.0
/*
 * mmhitm snapshot: asks the running mmhitmd to save its flight recorder
 * (daemon/flight.c) as a trace.dat. The daemon of a database holds an
 * exclusive flock on "<db>.lock" and writes its PID into it; the request
 * is SIGUSR1 with a value (sigqueue), which the daemon lists as trigger
 * 'request' (a bare kill -USR1 is 'SIGUSR1'). --wait reads the database
 * until the snapshot is listed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "config.h"
#include "db.h"
#include "log.h"
#include "opts.h"
#include "util.h"

void cmd_snapshot_help(void)
{
	printf("Usage: mmhitm snapshot [--db PATH] [--wait SECONDS]\n\n"
	       "Asks the mmhitmd recording into the database to save its flight recorder\n"
	       "(the last windows' learning events) as a trace-cmd trace.dat in its\n"
	       "snapshot_dir; it is listed in table snapshots (trigger 'request').\n\n"
	       "  --db PATH       the daemon's database (default $MMHITM_DB or %s)\n"
	       "  --wait SECONDS  wait until it is listed, and print its path (0: do not wait)\n",
	       default_db_path());
}

static int max_snapshot(const char *db_path, int64_t *ret)
{
	sqlite3 *db = NULL;
	int r;

	r = cli_db_open(db_path, DB_READONLY | DB_NO_CREATE, &db);
	if (r < 0)
		return r;
	r = db_query_int(db, ret, "SELECT coalesce(max(snapshot_id), 0) FROM snapshots");
	db_close(db);
	return r;
}

static int snapshot_option(int opt, const char *arg, void *userdata)
{
	uint64_t *wait_s = userdata;

	if (opt != 'w')
		return -EINVAL;
	if (parse_u64(arg, wait_s) < 0 || *wait_s > 3600) {
		log_error("Invalid --wait '%s': seconds, 0 to 3600", arg);
		return -EINVAL;
	}
	return 0;
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "wait",	required_argument, NULL, 'w' },
		{}
	};
	int64_t before = 0, after = 0, deadline;
	uint64_t wait_s = 0;
	const char *db_path;
	struct cli_opts co;
	pid_t pid;
	int r;

	r = cli_opts_parse(argc, argv, &(const struct cmd_options){
		.prog = "mmhitm snapshot", .sets = OPTS_DB, .opts = opts, .shortopts = "w:",
		.parse = snapshot_option, .userdata = &wait_s, .help = cmd_snapshot_help }, &co);
	if (r != 0)
		return r == 1 ? 0 : r;
	db_path = co.db;
	if (optind != argc) {
		log_error("Usage: mmhitm snapshot [--db PATH] [--wait SECONDS]");
		return EXIT_USAGE;
	}

	r = db_daemon_pid(db_path, &pid);
	if (r == -ESRCH)
		return log_error_errno(ESRCH, "No mmhitmd records into %s (nobody holds %s.lock)",
				       db_path, db_path);
	if (r == -EBADMSG)
		return log_error_errno(EINVAL, "%s.lock holds no PID", db_path);
	if (r < 0)
		return log_error_errno(r, "Failed to read %s.lock: %m", db_path);
	if (wait_s && max_snapshot(db_path, &before) < 0)
		return -EIO;
	if (sigqueue(pid, SIGUSR1, (union sigval){ .sival_int = FLIGHT_REQUEST_MAGIC }) < 0)
		return log_error_errno(errno, "Failed to signal mmhitmd (PID %d): %m", (int)pid);
	if (!wait_s) {
		printf("Asked mmhitmd (PID %d) for a snapshot; it is listed in table snapshots "
		       "once saved\n", (int)pid);
		return 0;
	}
	deadline = now_ns(CLOCK_MONOTONIC) + (int64_t)wait_s * NSEC_PER_SEC;
	while (now_ns(CLOCK_MONOTONIC) < deadline) {
		usleep(100 * 1000);
		if (max_snapshot(db_path, &after) == 0 && after > before) {
			sqlite3 *db = NULL;
			_cleanup_finalize_ sqlite3_stmt *st = NULL;

			if (db_open(db_path, DB_READONLY | DB_NO_CREATE, &db) == 0 &&
			    db_prepare(db, &st, "SELECT path, bytes FROM snapshots WHERE snapshot_id = ?1") == 0) {
				sqlite3_bind_int64(st, 1, after);
				if (sqlite3_step(st) == SQLITE_ROW)
					printf("%s (%" PRId64 " bytes)\n", sqlite3_column_text(st, 0),
					       (int64_t)sqlite3_column_int64(st, 1));
			}
			db_finalize(st);
			st = NULL;
			db_close(db);
			return 0;
		}
	}
	return log_error_errno(ETIMEDOUT, "mmhitmd (PID %d) listed no snapshot within %" PRIu64
			       " s (its log says why: snapshots = no, a snapshot already being saved, "
			       "trace-cmd missing)", (int)pid, wait_s);
}
