// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

int parse_time_ns(const char *s, int64_t now, int64_t *ret)
{
	struct tm tm = {};
	const char *end;
	int64_t v;

	if (strcmp(s, "now") == 0) {
		*ret = now;
		return 0;
	}
	if (s[0] == '@') {
		if (parse_i64(s + 1, &v) < 0 || v < 0 || v > INT64_MAX / NSEC_PER_SEC)
			return -EINVAL;
		*ret = v * NSEC_PER_SEC;
		return 0;
	}
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
	v = (int64_t)timegm(&tm);
	if (v < 0)
		return -EINVAL;
	*ret = v * NSEC_PER_SEC;
	return 0;
}
