// SPDX-License-Identifier: GPL-2.0
/*
 * --source: SQLite files (and globs of them) or one ClickHouse cluster.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "source.h"
#include "util.h"

static void source_done(struct source *src)
{
	free(src->arg);
	free(src->path);
	free(src->url);
	free(src->database);
	free(src->user);
}

static struct source *source_push(struct sources *s, enum source_kind kind, const char *arg)
{
	struct source *src;

	if (s->n > 0 && (s->v[0].kind != kind || kind == SOURCE_CLICKHOUSE)) {
		log_error("%s: a command reads SQLite files or one cluster, not both (already: %s)",
			  arg, s->v[0].arg);
		errno = EINVAL;
		return NULL;
	}
	if (grow_array((void **)&s->v, &s->alloc, sizeof(*src), s->n + 1) < 0) {
		log_oom();
		errno = ENOMEM;
		return NULL;
	}
	src = &s->v[s->n];
	memset(src, 0, sizeof(*src));
	src->kind = kind;
	src->arg = strdup(arg);
	if (!src->arg) {
		log_oom();
		errno = ENOMEM;
		return NULL;
	}
	s->n++;
	return src;
}

/*
 * clickhouse://[USER@]HOST[:PORT]/DB[?PARAMS] and clickhouses://...;
 * http(s)://HOST:PORT/?database=DB[&PARAMS] as ship's --to.
 */
static int parse_url(struct source *src, const char *arg)
{
	const char *rest, *slash, *at, *q;
	bool tls;
	_cleanup_free_ char *hostport = NULL;
	int r;

	if (startswith(arg, "clickhouse://") || startswith(arg, "clickhouses://")) {
		tls = arg[10] == 's';
		rest = arg + (tls ? 14 : 13);
		slash = strchr(rest, '/');
		at = strchr(rest, '@');
		if (at && (!slash || at < slash)) {
			src->user = strndup(rest, (size_t)(at - rest));
			if (!src->user)
				return log_oom();
			rest = at + 1;
		}
		if (!slash || slash[1] == '\0' || slash[1] == '?' || slash == rest)
			return log_error_errno(EINVAL, "%s: expected clickhouse://[USER@]HOST[:PORT]/DATABASE",
					       arg);
		q = strchr(slash, '?');
		src->database = strndup(slash + 1, q ? (size_t)(q - slash - 1) : strlen(slash + 1));
		hostport = strndup(rest, (size_t)(slash - rest));
		if (!src->database || !hostport)
			return log_oom();
		if (strchr(src->database, '/'))
			return log_error_errno(EINVAL, "%s: a database name has no '/'", arg);
		r = asprintf(&src->url, "%s://%s%s/%s", tls ? "https" : "http", hostport,
			     strchr(hostport, ':') ? "" : tls ? ":8443" : ":8123", q ? q : "");
		if (r < 0)
			return log_oom();
		return 0;
	}
	/* http(s)://HOST:PORT/?database=DB, the form ship's --to takes. */
	q = strchr(arg, '?');
	if (q) {
		const char *d = strstr(q, "database=");

		if (d && (d[-1] == '?' || d[-1] == '&')) {
			src->database = strndup(d + 9, strcspn(d + 9, "&#"));
			if (!src->database)
				return log_oom();
		}
	}
	if (!src->database || !*src->database)
		return log_error_errno(EINVAL, "%s: name the database (?database=DB)", arg);
	src->url = strdup(arg);
	return src->url ? 0 : log_oom();
}

int sources_add(struct sources *s, const char *arg)
{
	glob_t g = {};
	struct source *src;
	int r;

	if (strstr(arg, "://")) {
		if (!startswith(arg, "clickhouse://") && !startswith(arg, "clickhouses://") &&
		    !startswith(arg, "http://") && !startswith(arg, "https://"))
			return log_error_errno(EINVAL, "%s: a source is a SQLite file, a glob of them, or"
					       " clickhouse://HOST:PORT/DATABASE", arg);
		src = source_push(s, SOURCE_CLICKHOUSE, arg);
		if (!src)
			return -errno;
		return parse_url(src, arg);
	}
	if (!strpbrk(arg, "*?[")) {
		src = source_push(s, SOURCE_SQLITE, arg);
		if (!src)
			return -errno;
		src->path = strdup(arg);
		return src->path ? 0 : log_oom();
	}
	r = glob(arg, GLOB_ERR, NULL, &g);
	if (r == GLOB_NOMATCH) {
		globfree(&g);
		return log_error_errno(EINVAL, "%s: no file matches", arg);
	}
	if (r != 0) {
		globfree(&g);
		return log_error_errno(r == GLOB_NOSPACE ? ENOMEM : EIO, "%s: could not expand", arg);
	}
	for (size_t i = 0; i < g.gl_pathc; i++) {
		src = source_push(s, SOURCE_SQLITE, g.gl_pathv[i]);
		if (!src) {
			globfree(&g);
			return -errno;
		}
		src->path = strdup(g.gl_pathv[i]);
		if (!src->path) {
			globfree(&g);
			return log_oom();
		}
	}
	globfree(&g);
	return 0;
}

bool sources_clickhouse(const struct sources *s)
{
	return s->n > 0 && s->v[0].kind == SOURCE_CLICKHOUSE;
}

void sources_done(struct sources *s)
{
	for (size_t i = 0; i < s->n; i++)
		source_done(&s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
