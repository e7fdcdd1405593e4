/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_SOURCE_H
#define MMHITM_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Where a command reads its data: `--source` (repeatable), with `--db PATH`
 * and positional arguments as aliases for a SQLite file. A source is
 *
 *   a SQLite file, or a glob of them (fleet/h*.db: expanded here, sorted;
 *     a glob matching nothing is an error, a plain path is kept as given);
 *   clickhouse://[USER@]HOST[:PORT]/DB[?PARAMS]   the cluster over HTTP
 *     (port 8123 by default), or clickhouses://... for HTTPS (port 8443);
 *     http(s)://HOST:PORT/?database=DB as `mmhitm ship --to` takes it is
 *     accepted too. The password never goes in the URL: it comes from a
 *     credentials file (USER:PASSWORD, readable by its owner only).
 *
 * One command reads either SQLite files or one cluster, never both.
 */
enum source_kind {
	SOURCE_SQLITE,
	SOURCE_CLICKHOUSE,
};

struct source {
	enum source_kind kind;
	char *arg;		/* as the user wrote it (for messages) */
	char *path;		/* SOURCE_SQLITE: the file */
	char *url;		/* SOURCE_CLICKHOUSE: http(s)://HOST:PORT/ for http_new() */
	char *database;		/* SOURCE_CLICKHOUSE: the database */
	char *user;		/* SOURCE_CLICKHOUSE: from USER@, or NULL */
};

struct sources {
	struct source *v;
	size_t n, alloc;
};

/*
 * Adds what arg names (several files for a glob). Logs and returns
 * -EINVAL for a malformed URL, a glob matching nothing, or a mix of
 * SQLite files and a cluster.
 */
int sources_add(struct sources *s, const char *arg);
/* True when the sources are one cluster. */
bool sources_clickhouse(const struct sources *s);
void sources_done(struct sources *s);

#endif
