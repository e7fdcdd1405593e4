/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CLUSTER_H
#define MMHITM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tsv.h"

/*
 * Reading the ClickHouse cluster a `--source clickhouse://...` names, for
 * the commands that read it as they read a SQLite file (top, status).
 */
struct http;
struct source;

/*
 * A client for the cluster src names. The password comes from cred_path
 * (http_read_credentials()), else from ship_credentials of the
 * configuration at config_path (which need not exist unless
 * config_given), else none (USER@ of the URL then names the user alone). The database name is
 * checked to be a plain identifier (sql_identifier_valid()), so queries can name it.
 * Logs; caller frees with http_free().
 */
int cluster_open(const struct source *src, const char *cred_path, const char *config_path,
		 bool config_given, struct http **ret);

/*
 * Runs sql (without FORMAT; TabSeparated is added) and splits the result
 * into rows of cols cells each. Logs the server's message on failure
 * (naming what), and returns -errno; a row with another number of cells
 * is -EPROTO. Caller frees with tsv_done().
 */
int cluster_select(struct http *h, const char *what, const char *sql, size_t cols, struct tsv *ret);
/* The same, the query made from fmt. */
int cluster_selectf(struct http *h, const char *what, size_t cols, struct tsv *ret, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

#endif
