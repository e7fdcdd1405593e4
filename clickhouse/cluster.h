/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CLUSTER_H
#define MMHITM_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * checked to be a plain identifier ([A-Za-z0-9_]), so queries can name it.
 * Logs; caller frees with http_free().
 */
int cluster_open(const struct source *src, const char *cred_path, const char *config_path,
		 bool config_given, struct http **ret);

/*
 * A query's TabSeparated result, unescaped: cell (row, col) is a
 * NUL-terminated string, or NULL for ClickHouse's \N.
 */
struct tsv {
	char *body;
	char **cells;
	size_t rows, cols;
};

/*
 * Runs sql (without FORMAT; TabSeparated is added) and splits the result
 * into rows of cols cells each. Logs the server's message on failure
 * (naming what), and returns -errno; a row with another number of cells
 * is -EPROTO. Caller frees with tsv_done().
 */
int cluster_select(struct http *h, const char *what, const char *sql, size_t cols, struct tsv *ret);
/*
 * Splits body (ClickHouse's TabSeparated, unescaped in place; t takes it
 * and frees it) into rows of cols cells. -EPROTO for a row with another
 * number of cells, -ENOMEM; nothing logged, and body stays the caller's.
 */
int tsv_parse(char *body, size_t cols, struct tsv *ret);
char *tsv_get(const struct tsv *t, size_t row, size_t col);
/* The cell as a number; 0 for NULL. */
int64_t tsv_int(const struct tsv *t, size_t row, size_t col);
double tsv_num(const struct tsv *t, size_t row, size_t col);
void tsv_done(struct tsv *t);

#endif
