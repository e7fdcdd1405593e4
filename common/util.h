/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_UTIL_H
#define MMHITM_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL

/* __attribute__((cleanup)) is for freeing and closing only. */
static inline void freep(void *p) { free(*(void **)p); }
static inline void fclosep(FILE **f) { if (*f) fclose(*f); }
static inline void closep(int *fd) { if (*fd >= 0) close(*fd); }
#define _cleanup_free_ __attribute__((cleanup(freep)))
#define _cleanup_fclose_ __attribute__((cleanup(fclosep)))
#define _cleanup_close_ __attribute__((cleanup(closep)))

/*
 * Reads a whole (small, e.g. procfs or sysfs) file into a NUL-terminated
 * buffer. Caller frees *ret_buf. Returns the length or -errno.
 */
ssize_t read_file(const char *path, char **ret_buf);
/* Reads the first line of a file without its newline into buf. */
int read_line(const char *path, char *buf, size_t size);
/* Writes a string to an existing file (sysfs, tracefs). */
int write_file(const char *path, const char *s);

int parse_u64(const char *s, uint64_t *ret);
int parse_i64(const char *s, int64_t *ret);
/* "60", "60s", "5m", "1h", "500ms", "2d" into nanoseconds. */
int parse_duration_ns(const char *s, int64_t *ret);
/* The inverse, in the largest unit that divides it: "500ms", "1h", "7d". */
const char *format_duration(char *buf, size_t size, int64_t ns);
/*
 * A point in time, the one syntax of every command's --since/--until:
 * "now"; "@SECONDS" since the epoch; a duration before now ("7d", "-2h");
 * "YYYY-MM-DD", optionally followed by "T" or " " and "HH:MM[:SS]", and
 * an optional "Z" (always UTC; impossible dates such as 2025-02-30 are
 * refused); "YYYY-Www", the Monday starting that ISO week; "today",
 * "yesterday", "this-week", "last-week": the midnight (UTC) starting that
 * day or ISO week. Into ns since the epoch; -EINVAL.
 */
int parse_time_ns(const char *s, int64_t now_ns, int64_t *ret);
/* The forms parse_time_ns() takes, for error messages. */
#define TIME_FORMS "YYYY-MM-DD[THH:MM[:SS]][Z], @SECONDS, now, a duration before now " \
	"(7d, -2h), YYYY-Www, today, yesterday, this-week or last-week"
/* "64M", "1G", "4096", "512K" into bytes. */
int parse_size(const char *s, uint64_t *ret);
int parse_bool(const char *s, bool *ret);

int64_t now_ns(int clock_id);

/* Strips leading and trailing whitespace in place. */
char *strstrip(char *s);
/* Appends a printf'd text to *s (NULL: empty), after sep when *s holds any: 0 or -ENOMEM. */
int str_appendf(char **s, const char *sep, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool startswith(const char *s, const char *prefix);

/* Grows *array (of *size elements of elem bytes) to hold at least need. */
int grow_array(void **array, size_t *alloc, size_t elem, size_t need);
/* Gives back *array's room beyond n elements (alloc, when not NULL, follows); kept as is when realloc fails. */
void shrink_array(void **array, size_t *alloc, size_t elem, size_t n);

/* Values of a record at any alignment (perf.data, the sampler's ring):
 * memcpy, which the compiler makes a plain load where that is allowed. */
static inline uint16_t get16(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t get32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t get64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
