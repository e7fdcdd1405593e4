// SPDX-License-Identifier: GPL-2.0
/* Reading the ClickHouse cluster: credentials, a client, a query's TabSeparated table. */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"
#include "config.h"
#include "http.h"
#include "log.h"
#include "source.h"
#include "tsv.h"
#include "util.h"

#define CLUSTER_TIMEOUT_S 600	/* per query: a fleet-wide scan on a busy cluster */

int cluster_open(const struct source *src, const char *cred_path, const char *config_path,
		 bool config_given, struct http **ret)
{
	_cleanup_free_ char *userpwd = NULL;
	struct config cfg;
	struct http *h;
	int r;

	if (!sql_identifier_valid(src->database))
		return log_error_errno(EINVAL, "%s: the database name must be letters, digits and '_'",
				       src->arg);
	config_init(&cfg);
	if (!cred_path) {
		r = config_load(&cfg, config_path, config_given);
		if (r < 0)
			goto out;
		if (cfg.ship_credentials && *cfg.ship_credentials)
			cred_path = cfg.ship_credentials;
	}
	if (cred_path) {
		r = http_read_credentials(cred_path, &userpwd);
		if (r < 0)
			goto out;
		/* clickhouse://USER@HOST/DB names the user; the file has the password */
		if (src->user && (strlen(src->user) != strcspn(userpwd, ":") ||
				  strncmp(userpwd, src->user, strcspn(userpwd, ":")) != 0)) {
			r = log_error_errno(EINVAL, "%s names user '%s', credentials %s another",
					    src->arg, src->user, cred_path);
			goto out;
		}
	} else if (src->user && asprintf(&userpwd, "%s:", src->user) < 0) {
		r = log_oom();
		goto out;
	}
	h = http_new(src->url, userpwd, CLUSTER_TIMEOUT_S);
	if (!h) {
		r = -EINVAL;
		goto out;
	}
	*ret = h;
	r = 0;
out:
	config_done(&cfg);
	return r;
}

int cluster_select(struct http *h, const char *what, const char *sql, size_t cols, struct tsv *ret)
{
	_cleanup_free_ char *q = NULL;
	char *body = NULL;
	int r;

	*ret = (struct tsv){};
	if (asprintf(&q, "%s FORMAT TabSeparated", sql) < 0)
		return log_oom();
	/* the statement as the body (an empty query= takes it from there): no URL limit */
	r = http_query(h, "", q, strlen(q), &body);
	if (r < 0) {
		free(body);
		return log_error_errno(-r, "ClickHouse did not answer the %s query: %s", what,
				       http_error(h));
	}
	r = tsv_parse(body, cols, ret);
	if (r == -ENOMEM) {
		free(body);
		return log_oom();
	}
	if (r < 0) {
		free(body);
		return log_error_errno(-r, "ClickHouse's answer to the %s query: a row has not %zu columns",
				       what, cols);
	}
	return 0;
}

int cluster_selectf(struct http *h, const char *what, size_t cols, struct tsv *ret, const char *fmt, ...)
{
	_cleanup_free_ char *q = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&q, fmt, ap);
	va_end(ap);
	if (n < 0)
		return log_oom();
	return cluster_select(h, what, q, cols, ret);
}
