/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_HTTP_H
#define MMHITM_HTTP_H

#include <stddef.h>

/*
 * A client of ClickHouse's HTTP interface, over libcurl: one keep-alive
 * connection per client, TLS when the URL says https://. The query goes in
 * the URL's query= parameter and the data in the POST body, so one request
 * is one statement.
 */
struct http;

/*
 * url is http(s)://HOST:PORT[/PATH][?PARAMS]; its parameters (database=,
 * settings) are kept on every request. userpwd is "user:password" for
 * basic authentication, or NULL. timeout_s bounds each request. Logs;
 * caller frees with http_free().
 */
struct http *http_new(const char *url, const char *userpwd, long timeout_s);
void http_free(struct http *h);

/* The value of the URL's parameter name (URL-decoded), or NULL. Caller frees. */
char *http_url_param(const char *url, const char *name);

/*
 * Runs query with body (len bytes, may be NULL) as its data and, when
 * ret_out is not NULL, returns the response body (NUL-terminated; caller
 * frees). 0 on HTTP 200. Nothing is logged here: on failure http_error()
 * says why (the server's message, or the transport's) and the return is
 * -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH or -EIO (transport), -EACCES
 * (HTTP 401/403) or -EPROTO (any other HTTP status).
 */
int http_query(struct http *h, const char *query, const char *body, size_t len, char **ret_out);
const char *http_error(const struct http *h);

/*
 * Runs query (sent as the POST body: a long IN list fits) and hands the
 * response to cb as it arrives, chunk by chunk, never holding all of it:
 * cb returns 0 to go on, or a negative errno to abort the transfer (then
 * returned). An error status's body goes to http_error(), not to cb.
 * Returns as http_query().
 */
int http_query_stream(struct http *h, const char *query,
		      int (*cb)(const char *data, size_t len, void *arg), void *arg);

/*
 * Reads "user:password" from path, which must be a regular file no one but
 * its owner may read or write. Logs; caller frees *ret.
 */
int http_read_credentials(const char *path, char **ret);

#endif
