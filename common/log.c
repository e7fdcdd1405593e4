// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "mmhitm";
static int log_max_level = LOG_INFO;
static int log_prefix_priority;		/* stderr goes to journald */
static int log_to_syslog;		/* a daemon without a terminal */
static unsigned int log_errors;		/* lines at LOG_ERR or above */

void log_setup(const char *ident)
{
	const char *lvl;

	if (ident)
		log_ident = ident;
	/* systemd sets JOURNAL_STREAM when stderr is connected to journald. */
	log_prefix_priority = getenv("JOURNAL_STREAM") != NULL;
	lvl = getenv("MMHITM_LOG_LEVEL");
	if (lvl && log_level_from_string(lvl) >= 0)
		log_max_level = log_level_from_string(lvl);
}

void log_use_syslog(void)
{
	openlog(log_ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_to_syslog = 1;
}

void log_set_max_level(int level)
{
	log_max_level = level;
}

int log_get_max_level(void)
{
	return log_max_level;
}

int log_level_from_string(const char *s)
{
	static const char *const names[] = {
		"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
	};

	for (int i = 0; i < 8; i++)
		if (strcasecmp(s, names[i]) == 0)
			return i;
	if (strcasecmp(s, "error") == 0)
		return LOG_ERR;
	if (s[0] >= '0' && s[0] <= '7' && s[1] == '\0')
		return s[0] - '0';
	return -EINVAL;
}

unsigned int log_errors_said(void)
{
	return log_errors;
}

int log_internalv(int level, int error, const char *fmt, va_list ap)
{
	int saved = errno;
	int err = error < 0 ? -error : error;
	char buf[2048];
	int rc;

	if (level > log_max_level)
		return -err;
	if (level <= LOG_ERR)
		log_errors++;

	/* Let "%m" print the error we were handed, not a stale errno. */
	errno = err;
	vsnprintf(buf, sizeof(buf), fmt, ap);

	if (log_to_syslog) {
		syslog(level, "%s", buf);
	} else {
		errno = 0;
		if (log_prefix_priority)
			rc = fprintf(stderr, "<%d>%s\n", level, buf);
		else
			rc = fprintf(stderr, "%s: %s\n", log_ident, buf);
		/* Whoever read our stderr left (`mmhitmd -f 2>&1 | head -1`,
		 * SIGPIPE ignored): syslog, which the journal also reads,
		 * takes this line and the rest, without a word about it. */
		if (rc < 0 && errno == EPIPE) {
			log_use_syslog();
			syslog(level, "%s", buf);
		}
	}

	errno = saved;
	return -err;
}

int log_internal(int level, int error, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = log_internalv(level, error, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * libtraceevent and libtracefs report through a weak tep_vprint(); route
 * them into our log. They cannot know whether a failure matters (a missing
 * event is normal on some kernels), so their messages are debug output and
 * we log what decides at the call site.
 */
#include <traceevent/event-parse.h>
#include <traceevent/event-utils.h>

int tep_vprint(const char *name, enum tep_loglevel level, bool print_err,
	       const char *fmt, va_list ap)
{
	char buf[1024];
	int saved = errno;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	if (print_err && saved)
		log_internal(level <= TEP_LOG_CRITICAL ? LOG_WARNING : LOG_DEBUG, saved,
			     "%s: %s: %m", name ?: "lib", buf);
	else
		log_internal(level <= TEP_LOG_CRITICAL ? LOG_WARNING : LOG_DEBUG, 0,
			     "%s: %s", name ?: "lib", buf);
	errno = saved;
	return 0;
}
