/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_LOG_H
#define MMHITM_LOG_H

#include <stdarg.h>
#include <syslog.h>

/*
 * One logging contract for every program (systemd's): log once, at the
 * level that decides, and return the error so the caller can pass it up:
 *
 *	return log_error_errno(r, "Failed to open %s: %m", path);
 *
 * The *_errno variants set errno from the (negative or positive) error
 * before formatting, so "%m" prints it, and return -abs(error).
 * Under systemd (JOURNAL_STREAM set) lines get a "<N>" priority prefix so
 * journald keeps the levels; on a terminal they get the program name.
 */

void log_setup(const char *ident);
/* For a daemon that detached from its terminal. */
void log_use_syslog(void);
void log_set_max_level(int level);
/*
 * How many lines at error level or above were logged: main() says a
 * failure nobody below it said (the one line every failure gets).
 */
unsigned int log_errors_said(void);
int log_get_max_level(void);
/* Parses "err", "warning", "notice", "info", "debug" or 0..7. */
int log_level_from_string(const char *s);

int log_internal(int level, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int log_internalv(int level, int error, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#define log_full_errno(level, error, ...) log_internal((level), (error), __VA_ARGS__)

#define log_debug(...)		log_internal(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)		log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)		log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...)	log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)		log_internal(LOG_ERR, 0, __VA_ARGS__)

#define log_debug_errno(e, ...)		log_internal(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...)		log_internal(LOG_INFO, (e), __VA_ARGS__)
#define log_notice_errno(e, ...)	log_internal(LOG_NOTICE, (e), __VA_ARGS__)
#define log_warning_errno(e, ...)	log_internal(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...)		log_internal(LOG_ERR, (e), __VA_ARGS__)

/* Out of memory: logged where detected, returns -ENOMEM. */
#define log_oom() log_internal(LOG_ERR, 12, "Out of memory")

#endif
