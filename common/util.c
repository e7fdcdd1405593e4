// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util.h"

ssize_t read_file(const char *path, char **ret_buf)
{
	_cleanup_close_ int fd = -1;
	size_t alloc = 4096, len = 0;
	char *buf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;

	buf = malloc(alloc);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len + 1 >= alloc) {
			char *nbuf = realloc(buf, alloc * 2);

			if (!nbuf) {
				free(buf);
				return -ENOMEM;
			}
			buf = nbuf;
			alloc *= 2;
		}
		n = read(fd, buf + len, alloc - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			free(buf);
			return n;
		}
		if (n == 0)
			break;
		len += n;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	return len;
}

int read_line(const char *path, char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, size, f))
		return ferror(f) ? -EIO : -ENODATA;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int write_file(const char *path, const char *s)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(s);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_i64(const char *s, int64_t *ret)
{
	long long v;
	char *end;

	if (!s || !*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_duration_ns(const char *s, int64_t *ret)
{
	static const struct { const char *suffix; int64_t mult; } units[] = {
		{ "",   NSEC_PER_SEC },	/* bare numbers are seconds */
		{ "s",  NSEC_PER_SEC },
		{ "ms", NSEC_PER_MSEC },
		{ "m",  60 * NSEC_PER_SEC },
		{ "min", 60 * NSEC_PER_SEC },
		{ "h",  3600 * NSEC_PER_SEC },
		{ "d",  86400 * NSEC_PER_SEC },
	};
	double v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v != v)
		return -EINVAL;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double ns = v * (double)units[i].mult;

			if (ns > 9.2e18)
				return -ERANGE;
			*ret = (int64_t)ns;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_size(const char *s, uint64_t *ret)
{
	static const char suffixes[] = "KMGT";
	uint64_t mult = 1;
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (*end) {
		const char *p = strchr(suffixes, toupper((unsigned char)*end));

		if (!p || !*p)
			return -EINVAL;
		for (const char *q = suffixes; q <= p; q++)
			mult *= 1024;
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -EINVAL;
	}
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*ret = v * mult;
	return 0;
}

int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

int64_t now_ns(int clock_id)
{
	struct timespec ts;

	clock_gettime(clock_id, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

int str_appendf(char **s, const char *sep, const char *fmt, ...)
{
	char *add = NULL, *n = NULL;
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vasprintf(&add, fmt, ap);
	va_end(ap);
	if (k < 0)
		return -ENOMEM;
	k = asprintf(&n, "%s%s%s", *s ? *s : "", *s && **s ? sep : "", add);
	free(add);
	if (k < 0)
		return -ENOMEM;
	free(*s);
	*s = n;
	return 0;
}

char *strstrip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int grow_array(void **array, size_t *alloc, size_t elem, size_t need)
{
	size_t n = *alloc ? *alloc : 16;
	void *p;

	if (need <= *alloc)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	p = realloc(*array, n * elem);
	if (!p)
		return -ENOMEM;
	*array = p;
	*alloc = n;
	return 0;
}

void shrink_array(void **array, size_t *alloc, size_t elem, size_t n)
{
	void *p;

	if (!*array || !n || (alloc && *alloc <= n))
		return;
	p = realloc(*array, n * elem);
	if (!p)
		return;		/* the larger block still holds it all */
	*array = p;
	if (alloc)
		*alloc = n;
}

/* Midnight UTC starting the day of t, and the Monday of its ISO week. */
static int64_t day_start(int64_t t_ns)
{
	int64_t day = 86400 * NSEC_PER_SEC;

	return t_ns - ((t_ns % day) + day) % day;
}

static int64_t week_start(int64_t t_ns)
{
	int64_t day = 86400 * NSEC_PER_SEC, d = day_start(t_ns) / day;

	/* 1970-01-01 was a Thursday: (d + 3) % 7 days after a Monday */
	return (d - ((d % 7 + 7 + 3) % 7)) * day;
}

/* "YYYY-Www": the Monday of ISO week ww, the week with the year's 4 January. */
static int parse_iso_week(const char *s, int64_t *ret)
{
	int year, week, n = 0;
	struct tm jan4 = { .tm_mday = 4 };
	int64_t w1;

	if (sscanf(s, "%4d-W%2d%n", &year, &week, &n) != 2 || s[n] || n != 8 || week < 1)
		return -EINVAL;
	jan4.tm_year = year - 1900;
	w1 = week_start((int64_t)timegm(&jan4) * NSEC_PER_SEC);
	/* 53 weeks when the next year's week 1 starts 53 weeks on */
	if (week == 53) {
		struct tm next = { .tm_mday = 4, .tm_year = year + 1 - 1900 };

		if (week_start((int64_t)timegm(&next) * NSEC_PER_SEC) - w1 < 53 * 7 * 86400 * NSEC_PER_SEC)
			return -EINVAL;
	} else if (week > 53) {
		return -EINVAL;
	}
	*ret = w1 + (int64_t)(week - 1) * 7 * 86400 * NSEC_PER_SEC;
	return *ret >= 0 ? 0 : -EINVAL;
}

int parse_time_ns(const char *s, int64_t now, int64_t *ret)
{
	static const struct { const char *name; int kind; int64_t back; } words[] = {
		{ "today", 'd', 0 }, { "yesterday", 'd', 1 },
		{ "this-week", 'w', 0 }, { "last-week", 'w', 1 },
	};
	struct tm tm = {}, back;
	const char *end;
	time_t t;
	int64_t v;

	if (!*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) {
		*ret = now;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strcmp(s, words[i].name) == 0) {
			*ret = words[i].kind == 'd' ?
				day_start(now) - words[i].back * 86400 * NSEC_PER_SEC :
				week_start(now) - words[i].back * 7 * 86400 * NSEC_PER_SEC;
			return 0;
		}
	if (s[0] == '@') {
		if (parse_i64(s + 1, &v) < 0 || v < 0 || v > INT64_MAX / NSEC_PER_SEC)
			return -EINVAL;
		*ret = v * NSEC_PER_SEC;
		return 0;
	}
	if (strstr(s, "-W"))
		return parse_iso_week(s, ret);
	/* a date has a '-' after its first digit; a duration none, or first */
	if (!strchr(s + 1, '-') || s[0] == '-') {
		if (parse_duration_ns(s[0] == '-' ? s + 1 : s, &v) < 0 || v < 0)
			return -EINVAL;
		*ret = now - v;
		return 0;
	}
	end = strptime(s, "%Y-%m-%d", &tm);
	if (!end)
		return -EINVAL;
	if (*end == 'T' || *end == ' ') {
		const char *e2 = strptime(end + 1, "%H:%M:%S", &tm);

		if (!e2)
			e2 = strptime(end + 1, "%H:%M", &tm);
		if (!e2)
			return -EINVAL;
		end = e2;
	}
	if (*end == 'Z')
		end++;
	if (*end)
		return -EINVAL;
	back = tm;
	t = timegm(&back);
	/* timegm() makes 30 February the 2nd of March: refuse what moved */
	if (t < 0 || back.tm_mday != tm.tm_mday || back.tm_mon != tm.tm_mon ||
	    back.tm_year != tm.tm_year || back.tm_hour != tm.tm_hour || back.tm_min != tm.tm_min ||
	    back.tm_sec != tm.tm_sec)
		return -EINVAL;
	*ret = (int64_t)t * NSEC_PER_SEC;
	return 0;
}

const char *format_duration(char *buf, size_t size, int64_t ns)
{
	static const struct { const char *unit; int64_t ns; } units[] = {
		{ "d", 86400 * NSEC_PER_SEC }, { "h", 3600 * NSEC_PER_SEC },
		{ "min", 60 * NSEC_PER_SEC }, { "s", NSEC_PER_SEC },
		{ "ms", NSEC_PER_MSEC }, { "us", 1000 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (ns && ns % units[i].ns == 0) {
			snprintf(buf, size, "%" PRId64 "%s", ns / units[i].ns, units[i].unit);
			return buf;
		}
	snprintf(buf, size, "%" PRId64 "ns", ns);
	return buf;
}
