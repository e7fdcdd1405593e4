// SPDX-License-Identifier: GPL-2.0
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "log.h"
#include "util.h"

struct http {
	CURL *curl;
	char *base;		/* the URL with its parameters, ready for "&query=" */
	char *userpwd;
	char error[CURL_ERROR_SIZE + 512];
};

struct sink {
	char *buf;
	size_t len, alloc;
};

static size_t sink_write(char *data, size_t size, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t add = size * n;

	if (grow_array((void **)&s->buf, &s->alloc, 1, s->len + add + 1) < 0)
		return 0;	/* curl fails the transfer: CURLE_WRITE_ERROR */
	memcpy(s->buf + s->len, data, add);
	s->len += add;
	s->buf[s->len] = '\0';
	return add;
}

struct http *http_new(const char *url, const char *userpwd, long timeout_s)
{
	struct http *h;
	size_t n;

	if (!startswith(url, "http://") && !startswith(url, "https://")) {
		log_error("'%s' is not an http:// or https:// URL", url);
		return NULL;
	}
	/* curl_global_init() is not thread-safe; mmhitm calls it once here. */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_error("Failed to initialize libcurl");
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		log_oom();
		return NULL;
	}
	n = strlen(url);
	h->base = malloc(n + 2);
	if (!h->base)
		goto oom;
	/* "http://h:8123" -> "http://h:8123/?", "http://h/?database=x" -> "...&" */
	memcpy(h->base, url, n + 1);
	if (strchr(url, '?'))
		strcat(h->base, url[n - 1] == '?' || url[n - 1] == '&' ? "" : "&");
	else if (strchr(strstr(url, "://") + 3, '/'))
		strcat(h->base, "?");
	else
		strcat(h->base, "/?");
	if (userpwd) {
		h->userpwd = strdup(userpwd);
		if (!h->userpwd)
			goto oom;
	}
	h->curl = curl_easy_init();
	if (!h->curl)
		goto oom;
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT, timeout_s);
	curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->error);
	/* ClickHouse compresses nothing unless asked; gzip saves the network. */
	curl_easy_setopt(h->curl, CURLOPT_ACCEPT_ENCODING, "");
	if (h->userpwd) {
		curl_easy_setopt(h->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(h->curl, CURLOPT_USERPWD, h->userpwd);
	}
	return h;
oom:
	log_oom();
	http_free(h);
	return NULL;
}

void http_free(struct http *h)
{
	if (!h)
		return;
	if (h->curl)
		curl_easy_cleanup(h->curl);
	if (h->userpwd) {
		/* The password should not outlive its use in a core dump. */
		explicit_bzero(h->userpwd, strlen(h->userpwd));
		free(h->userpwd);
	}
	free(h->base);
	free(h);
}

const char *http_error(const struct http *h)
{
	return h->error;
}

char *http_url_param(const char *url, const char *name)
{
	const char *p = strchr(url, '?');
	size_t n = strlen(name);

	while (p) {
		p++;
		if (strncmp(p, name, n) == 0 && p[n] == '=') {
			size_t len = strcspn(p + n + 1, "&#");
			int out = 0;
			char *dup = strndup(p + n + 1, len);
			char *v;

			if (!dup)
				return NULL;
			v = curl_easy_unescape(NULL, dup, (int)len, &out);
			free(dup);
			if (!v)
				return NULL;
			dup = strdup(v);
			curl_free(v);
			return dup;
		}
		p = strchr(p, '&');
	}
	return NULL;
}

/* The first line of ClickHouse's error text: "Code: 60, e.displayText() = ..." */
static void set_server_error(struct http *h, long status, const struct sink *s)
{
	size_t n = s->buf ? strcspn(s->buf, "\n") : 0;

	if (n > 400)
		n = 400;
	snprintf(h->error, sizeof(h->error), "HTTP %ld: %.*s", status, (int)n, s->buf ? s->buf : "");
}

/*
 * A finished transfer as an errno, its reason kept in h->error: curl's
 * failure, or the server's answer when it was not 200 (err holds its body).
 * 0 when the server answered 200.
 */
static int transfer_result(struct http *h, CURLcode cc, const struct sink *err, long *ret_status)
{
	long status = 0;

	if (cc != CURLE_OK) {
		if (!h->error[0])
			snprintf(h->error, sizeof(h->error), "%s", curl_easy_strerror(cc));
		switch (cc) {
		case CURLE_COULDNT_CONNECT:	return -ECONNREFUSED;
		case CURLE_OPERATION_TIMEDOUT:	return -ETIMEDOUT;
		case CURLE_COULDNT_RESOLVE_HOST: return -EHOSTUNREACH;
		case CURLE_OUT_OF_MEMORY:	return -ENOMEM;
		default:			return -EIO;
		}
	}
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &status);
	if (ret_status)
		*ret_status = status;
	if (status == 200)
		return 0;
	set_server_error(h, status, err);
	/* ClickHouse 18.16 answers a bad password with 500 and code 193. */
	if (status == 401 || status == 403 ||
	    (err->buf && (strncmp(err->buf, "Code: 193,", 10) == 0 ||
			  strncmp(err->buf, "Code: 192,", 10) == 0 ||
			  strncmp(err->buf, "Code: 516,", 10) == 0)))
		return -EACCES;
	return -EPROTO;
}

int http_query(struct http *h, const char *query, const char *body, size_t len, char **ret_out)
{
	_cleanup_free_ char *url = NULL;
	struct sink s = {};
	char *esc;
	CURLcode cc;
	int r;

	h->error[0] = '\0';
	esc = curl_easy_escape(h->curl, query, 0);
	if (!esc)
		return -ENOMEM;
	if (asprintf(&url, "%squery=%s", h->base, esc) < 0) {
		curl_free(esc);
		return -ENOMEM;
	}
	curl_free(esc);
	curl_easy_setopt(h->curl, CURLOPT_URL, url);
	curl_easy_setopt(h->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body ? body : "");
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &s);
	cc = curl_easy_perform(h->curl);
	r = transfer_result(h, cc, &s, NULL);
	if (r < 0)
		goto out;
	if (ret_out) {
		*ret_out = s.buf ? s.buf : strdup("");
		s.buf = NULL;
		if (!*ret_out)
			return -ENOMEM;
	}
	r = 0;
out:
	free(s.buf);
	return r;
}

struct stream {
	struct http *h;
	int (*cb)(const char *data, size_t len, void *arg);
	void *arg;
	struct sink err;	/* the body of an error status */
	long status;
	int r;			/* cb's error */
};

static size_t stream_write(char *data, size_t size, size_t n, void *arg)
{
	struct stream *s = arg;
	size_t add = size * n;

	if (!s->status)
		curl_easy_getinfo(s->h->curl, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->status != 200)
		return sink_write(data, size, n, &s->err);
	s->r = s->cb(data, add, s->arg);
	return s->r < 0 ? 0 : add;
}

int http_query_stream(struct http *h, const char *query,
		      int (*cb)(const char *data, size_t len, void *arg), void *arg)
{
	_cleanup_free_ char *url = NULL;
	struct stream s = { .h = h, .cb = cb, .arg = arg };
	size_t n = strlen(h->base);
	CURLcode cc;
	int r;

	h->error[0] = '\0';
	/* the base without its trailing '?' or '&' */
	url = strndup(h->base, n && (h->base[n - 1] == '?' || h->base[n - 1] == '&') ? n - 1 : n);
	if (!url)
		return -ENOMEM;
	curl_easy_setopt(h->curl, CURLOPT_URL, url);
	curl_easy_setopt(h->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, query);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(query));
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &s);
	cc = curl_easy_perform(h->curl);
	if (s.r < 0) {
		r = s.r;
		if (!h->error[0])
			snprintf(h->error, sizeof(h->error), "the response could not be read: %s", strerror(-r));
		goto out;
	}
	r = transfer_result(h, cc, &s.err, &s.status);
	if (r < 0)
		goto out;
	r = 0;
out:
	free(s.err.buf);
	return r;
}

/*
 * Reads "user:password" from path, which must be a regular file no one
 * but its owner can read or write: a password readable by others is a
 * password leaked. Caller frees.
 */
int http_read_credentials(const char *path, char **ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat stb;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return log_error_errno(errno, "Failed to open credentials %s: %m", path);
	if (fstat(fd, &stb) < 0)
		return log_error_errno(errno, "Failed to stat %s: %m", path);
	if (!S_ISREG(stb.st_mode))
		return log_error_errno(-EINVAL, "Credentials %s: not a regular file", path);
	if (stb.st_mode & 0077)
		return log_error_errno(-EPERM, "Credentials %s: mode %04o lets others read or write it;"
				       " chmod 600 it", path, (unsigned)(stb.st_mode & 07777));
	buf = calloc(1, 4097);
	if (!buf)
		return log_oom();
	n = read(fd, buf, 4096);
	if (n < 0)
		return log_error_errno(errno, "Failed to read %s: %m", path);
	buf[strcspn(buf, "\r\n")] = '\0';
	if (!strchr(buf, ':'))
		return log_error_errno(-EINVAL, "Credentials %s: expected USER:PASSWORD on the first line", path);
	*ret = buf;
	buf = NULL;
	return 0;
}
