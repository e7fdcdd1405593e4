// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "util.h"

enum opt_type {
	OPT_PATH, OPT_OPTIONAL_PATH, OPT_STRING, OPT_DURATION, OPT_SIZE_KB, OPT_SIZE, OPT_U64,
	OPT_BOOL, OPT_LOGLEVEL, OPT_FRACTION,
};

struct option_def {
	struct config_option_info info;
	enum opt_type type;
	size_t off;
	const char *def;
	int64_t min, max;	/* durations in ns, sizes in KiB, numbers as is,
				 * fractions in parts per billion */
	int (*check)(const char *value, char *err, size_t errlen);
};

static int check_instance(const char *v, char *err, size_t errlen)
{
	/*
	 * Our instance name must say it is ours: at start we remove a stale
	 * instance of that name, and that must never be someone else's.
	 */
	if (!startswith(v, "mmhitm")) {
		snprintf(err, errlen, "instance name must start with \"mmhitm\"");
		return -EINVAL;
	}
	if (strlen(v) > 64) {
		snprintf(err, errlen, "instance name longer than 64 characters");
		return -EINVAL;
	}
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_.", *p)) {
			snprintf(err, errlen, "instance name may only have letters, digits, '-', '_', '.'");
			return -EINVAL;
		}
	return 0;
}

static int check_record_mode(const char *v, char *err, size_t errlen)
{
	if (strcmp(v, "windowed") && strcmp(v, "continuous")) {
		snprintf(err, errlen, "record_mode is \"windowed\" or \"continuous\"");
		return -EINVAL;
	}
	return 0;
}

/*
 * "0.05", "5%" or "0.2%": a fraction, kept in parts per billion so that
 * the option table's integer bounds apply.
 */
static int parse_fraction(const char *v, double *ret)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || d != d)
		return -EINVAL;
	while (*end == ' ')
		end++;
	if (*end == '%') {
		d /= 100;
		end++;
	}
	if (*end)
		return -EINVAL;
	*ret = d;
	return 0;
}

static int check_events(const char *v, char *err, size_t errlen)
{
	/* "sys:event sys:* ..." separated by spaces or commas. */
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, " ,\t");
		const char *colon = memchr(p, ':', n);

		if (n && (!colon || colon == p || colon == p + n - 1)) {
			snprintf(err, errlen, "event \"%.*s\" is not system:name", (int)n, p);
			return -EINVAL;
		}
		p += n;
		p += strspn(p, " ,\t");
	}
	return 0;
}

#define S 1000000000LL
#define OFF(f) offsetof(struct config, f)

static const struct option_def options[] = {
	{ { "db", "PATH", "SQLite database to record into" },
	  OPT_PATH, OFF(db_path), CONFIG_DEFAULT_DB },
	{ { "interval", "DURATION", "length of one recording interval (one transaction)" },
	  OPT_DURATION, OFF(interval_ns), "60s", 1 * S, 3600 * S },
	{ { "duration", "DURATION", "stop after this long (0: run until stopped)" },
	  OPT_DURATION, OFF(duration_ns), "0", 0, 366 * 86400 * S },
	{ { "instance", "NAME", "tracefs instance to own (created and removed by mmhitmd)" },
	  OPT_STRING, OFF(instance), "mmhitm", 0, 0, check_instance },
	{ { "buffer_size_kb", "KIB", "per-CPU ring buffer for the learning events" },
	  OPT_SIZE_KB, OFF(buffer_size_kb), "1024", 64, 1024 * 1024 },
	{ { "drain_interval", "DURATION", "how often the learning events are read" },
	  OPT_DURATION, OFF(drain_ns), "1s", S / 100, 60 * S },
	{ { "page_pair_shift", "N", "learn the (folio, pfn) pair of 1 pfn in 2^N (vmemmap calibration)" },
	  OPT_U64, OFF(page_pair_shift), "8", 0, 20 },
	{ { "max_page_pairs", "N", "(folio, pfn) pairs kept per boot" },
	  OPT_U64, OFF(max_page_pairs), "4096", 0, 1 << 20 },
	{ { "max_locks", "N", "contended lock addresses kept in memory; the least recently contended go first" },
	  OPT_U64, OFF(max_locks), "65536", 16, 1 << 24 },
	{ { "max_held_records", "N", "learning records held between drains; more are dropped, counted as lost" },
	  OPT_U64, OFF(max_held_records), "131072", 1024, 1 << 24 },
	{ { "learn_mm", "BOOL", "learn mm_struct objects (kmem_cache, fork, exec, mmap_lock)" },
	  OPT_BOOL, OFF(learn_mm), "yes" },
	{ { "learn_pages", "BOOL", "learn (folio, pfn) pairs from pagemap events" },
	  OPT_BOOL, OFF(learn_pages), "yes" },
	{ { "learn_locks", "BOOL", "learn contended lock addresses (lock:contention_begin)" },
	  OPT_BOOL, OFF(learn_locks), "yes" },
	{ { "switch_sample", "DURATION", "sched_switch sample once per interval, after a window slice, for same-mm switches (0: none)" },
	  OPT_DURATION, OFF(switch_sample_ns), "20ms", 0, 10 * S },
	{ { "record_mode", "MODE", "windowed (armed only in short windows) or continuous (lab runs)" },
	  OPT_STRING, OFF(record_mode), "windowed", 0, 0, check_record_mode },
	{ { "window", "DURATION", "armed time per interval in windowed mode, split into window_slices" },
	  OPT_DURATION, OFF(window_ns), "1s", 10 * S / 1000, 3600 * S },
	{ { "window_slices", "N", "slices per interval, each at a random point of its share of the interval" },
	  OPT_U64, OFF(window_slices), "4", 1, 32 },
	{ { "overhead_budget", "PERCENT", "what all windows together may cost, % of the host's CPU time" },
	  OPT_FRACTION, OFF(overhead_budget), "0.2%", 1, 100LL * 10000000 },
	{ { "fleet_share", "FRACTION", "share of intervals this host takes windows in (fleets: e.g. 0.05)" },
	  OPT_FRACTION, OFF(fleet_share), "1", 0, 1000000000 },
	{ { "spike_check", "DURATION", "between windows, read the free counters this often for spikes (0: never)" },
	  OPT_DURATION, OFF(spike_check_ns), "1s", 0, 60 * S },
	{ { "spike_factor", "X", "a free counter's rate over X times its recent median opens an extra window (0: off)" },
	  OPT_U64, OFF(spike_factor), "8", 0, 1000000 },
	{ { "spike_min_rate", "N", "... and over N events/s per CPU" },
	  OPT_U64, OFF(spike_min_rate), "1000", 0, 1000000000 },
	{ { "spike_window", "DURATION", "length of the extra window a spike opens" },
	  OPT_DURATION, OFF(spike_window_ns), "250ms", 10 * S / 1000, 10 * S },
	{ { "spike_holdoff", "DURATION", "at most one spike window this often" },
	  OPT_DURATION, OFF(spike_holdoff_ns), "60s", 1 * S, 86400 * S },
	{ { "quiet_cpu", "PERCENT", "a host busy under this share of one CPU is quiet: no window, one learning slice every quiet_learn (0: never quiet)" },
	  OPT_FRACTION, OFF(quiet_cpu), "5%", 0, 1024LL * 1000000000 },
	{ { "quiet_learn", "DURATION", "a quiet host takes a window, one learning slice, this often" },
	  OPT_DURATION, OFF(quiet_learn_ns), "10m", 1 * S, 86400 * S },
	{ { "count_events", "EVENTS", "extra tracepoints to count, e.g. \"kmem:mm_page_alloc\"" },
	  OPT_STRING, OFF(count_events), "", 0, 0, check_events },
	{ { "retention_detail", "DURATION", "keep per-line and /proc detail this long (0: forever)" },
	  OPT_DURATION, OFF(retention_detail_ns), "14d", 0, 3650 * 86400 * S },
	{ { "retention_raw", "DURATION", "keep whole intervals this long, then hourly rollups (0: forever)" },
	  OPT_DURATION, OFF(retention_raw_ns), "35d", 0, 3650 * 86400 * S },
	{ { "retention_rollup", "DURATION", "keep hourly rollups this long (0: forever)" },
	  OPT_DURATION, OFF(retention_rollup_ns), "400d", 0, 3650 * 86400 * S },
	{ { "max_db_size", "SIZE", "database size budget, oldest data dropped first (0: none)" },
	  OPT_SIZE, OFF(max_db_size), "1G", 0, INT64_MAX },
	{ { "cpu_budget", "PERCENT", "warn when mmhitmd's own process uses more than this % of one CPU" },
	  OPT_U64, OFF(cpu_budget_pct), "1", 0, 100 },
	{ { "metrics_file", "PATH", "OpenMetrics textfile for node_exporter (empty: none)" },
	  OPT_OPTIONAL_PATH, OFF(metrics_file), "" },
	{ { "sample_events", "EVENTS", "memory-sampling events in perf syntax (empty: the PMU's, none: off)" },
	  OPT_STRING, OFF(sample_events), "" },
	{ { "sample_freq", "HZ", "samples per second per CPU while sampling" },
	  OPT_U64, OFF(sample_freq), "1000", 1, 100000 },
	{ { "sample_period", "N", "one sample every N events instead of sample_freq (0: use the frequency)" },
	  OPT_U64, OFF(sample_period), "0", 0, UINT32_MAX },
	{ { "sample_window", "DURATION", "sample this long in every sample_every" },
	  OPT_DURATION, OFF(sample_window_ns), "10s", S / 10, 3600 * S },
	{ { "sample_every", "DURATION", "the duty cycle's period" },
	  OPT_DURATION, OFF(sample_every_ns), "60s", S / 10, 3600 * S },
	{ { "sample_budget_ppm", "PPM", "CPU share the sampling may cost (windows shrink to fit)" },
	  OPT_U64, OFF(sample_budget_ppm), "5000", 1, 1000000 },
	{ { "keep_user_lines", "BOOL", "store user-space samples per cache line too" },
	  OPT_BOOL, OFF(keep_user_lines), "no" },
	{ { "analyze", "BOOL", "attribute new intervals after each one (as mmhitm analyze)" },
	  OPT_BOOL, OFF(analyze), "yes" },
	{ { "stop_retry", "DURATION", "on stop, keep retrying unwritten intervals this long (0: once)" },
	  OPT_DURATION, OFF(stop_retry_ns), "20s", 0, 3600 * S },
	{ { "snapshots", "BOOL", "flight recorder: the window's learning events kept for snapshots (SIGUSR1, mmhitm snapshot, lock storms)" },
	  OPT_BOOL, OFF(snapshots), "no" },
	{ { "snapshot_dir", "PATH", "where snapshots are saved as trace-cmd trace.dat files (empty: snapshots/ beside the database)" },
	  OPT_OPTIONAL_PATH, OFF(snapshot_dir), "" },
	{ { "snapshot_max_count", "N", "snapshots kept in snapshot_dir; the oldest are removed" },
	  OPT_U64, OFF(snapshot_max_count), "16", 1, 100000 },
	{ { "snapshot_max_size", "SIZE", "total size of the snapshots kept; the oldest are removed" },
	  OPT_SIZE, OFF(snapshot_max_size), "256M", 1 << 16, INT64_MAX },
	{ { "snapshot_buffer_kb", "KIB", "per-CPU ring of the flight recorder (overwritten when full)" },
	  OPT_SIZE_KB, OFF(snapshot_buffer_kb), "1024", 64, 1024 * 1024 },
	{ { "ship_url", "URL", "ClickHouse HTTP address mmhitm ship sends to, http(s)://HOST:PORT[/?database=DB] (empty: none)" },
	  OPT_STRING, OFF(ship_url), "" },
	{ { "ship_credentials", "PATH", "file with USER:PASSWORD for ship_url, readable only by its owner (empty: none)" },
	  OPT_OPTIONAL_PATH, OFF(ship_credentials), "" },
	{ { "ship_required", "BOOL", "retention keeps intervals mmhitm ship has not sent, unless max_db_size forces it" },
	  OPT_BOOL, OFF(ship_required), "no" },
	{ { "ship_rollup", "DURATION", "mmhitm ship also sends intervals summed into buckets this long, what report --source clickhouse:// reads (0: none)" },
	  OPT_DURATION, OFF(ship_rollup_ns), "10m", 0, 86400 * S },
	{ { "log_level", "LEVEL", "err, warning, notice, info or debug" },
	  OPT_LOGLEVEL, OFF(log_level), "info" },
};

#undef OFF
#undef S

const struct config_option_info *config_option_info(unsigned int i)
{
	return i < ARRAY_SIZE(options) ? &options[i].info : NULL;
}

struct option *config_longopts_new(const struct option *fixed, size_t n_fixed, int base)
{
	size_t n = ARRAY_SIZE(options);
	struct option *o;

	o = calloc(n_fixed + 2 * n + 1, sizeof(*o));
	if (!o)
		return NULL;
	memcpy(o, fixed, n_fixed * sizeof(*fixed));
	for (size_t i = 0; i < n; i++) {
		/* --buffer-size-kb and --buffer_size_kb both work. */
		struct option *dash = &o[n_fixed + 2 * i];
		struct option *under = dash + 1;
		char *name = strdup(options[i].info.key);

		if (!name) {
			config_longopts_free(o);
			return NULL;
		}
		for (char *p = name; *p; p++)
			if (*p == '_')
				*p = '-';
		*dash = (struct option){ name, required_argument, NULL, base + (int)i };
		*under = (struct option){ options[i].info.key, required_argument, NULL, base + (int)i };
	}
	return o;
}

static bool is_key_string(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (name == options[i].info.key)
			return true;
	return false;
}

void config_longopts_free(struct option *o)
{
	/* Our copies are the names right before their key's own entry (the
	 * table's string, same val): every key's, "db" as well as
	 * "buffer-size-kb" (freeing only the names with a '-' leaked 38
	 * bytes per SIGHUP). */
	for (struct option *p = o; p && p->name; p++)
		if (p[1].name && p[1].val == p->val && p[1].name != p->name && is_key_string(p[1].name))
			free((void *)(uintptr_t)p->name);
	free(o);
}

static const struct option_def *option_find(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (strcmp(options[i].info.key, key) == 0)
			return &options[i];
	return NULL;
}

static int set_string(void *field, const struct option_def *o, const char *v,
		      char *err, size_t errlen)
{
	char *s;
	int r;

	if (o->check) {
		r = o->check(v, err, errlen);
		if (r < 0)
			return r;
	}
	s = strdup(v);
	if (!s)
		return -ENOMEM;
	free(*(char **)field);
	*(char **)field = s;
	return 0;
}

static int set_path(void *field, const struct option_def *o, const char *v,
		    char *err, size_t errlen)
{
	if (!*v) {
		snprintf(err, errlen, "a path is required");
		return -EINVAL;
	}
	return set_string(field, o, v, err, errlen);
}

static int set_duration(void *field, const struct option_def *o, const char *v,
			char *err, size_t errlen)
{
	char lo[32], hi[32];
	int64_t d;

	if (parse_duration_ns(v, &d) < 0) {
		snprintf(err, errlen, "\"%s\" is not a duration (e.g. 60s, 5m, 1h)", v);
		return -EINVAL;
	}
	if (d < o->min || d > o->max) {
		snprintf(err, errlen, "\"%s\" is out of range (%s to %s)", v,
			 format_duration(lo, sizeof(lo), o->min), format_duration(hi, sizeof(hi), o->max));
		return -EINVAL;
	}
	*(int64_t *)field = d;
	return 0;
}

static int set_size_kb(void *field, const struct option_def *o, const char *v,
		       char *err, size_t errlen)
{
	uint64_t u;

	if (parse_size(v, &u) < 0) {
		snprintf(err, errlen, "\"%s\" is not a size", v);
		return -EINVAL;
	}
	/* A bare number is KiB, as in tracefs' buffer_size_kb. */
	if (!isdigit((unsigned char)v[strlen(v) - 1]))
		u /= 1024;
	if ((int64_t)u < o->min || (int64_t)u > o->max) {
		snprintf(err, errlen, "\"%s\" is out of range (%" PRId64 " to %" PRId64 " KiB)",
			 v, o->min, o->max);
		return -EINVAL;
	}
	*(uint64_t *)field = u;
	return 0;
}

static int set_size(void *field, const struct option_def *o, const char *v,
		    char *err, size_t errlen)
{
	uint64_t u;

	if (parse_size(v, &u) < 0) {
		snprintf(err, errlen, "\"%s\" is not a size (e.g. 512M, 2G)", v);
		return -EINVAL;
	}
	*(uint64_t *)field = u;
	return 0;
}

static int set_u64(void *field, const struct option_def *o, const char *v,
		   char *err, size_t errlen)
{
	uint64_t u;

	if (parse_u64(v, &u) < 0) {
		snprintf(err, errlen, "\"%s\" is not a non-negative integer", v);
		return -EINVAL;
	}
	if ((int64_t)u < o->min || (int64_t)u > o->max) {
		snprintf(err, errlen, "%s is out of range (%" PRId64 " to %" PRId64 ")",
			 v, o->min, o->max);
		return -EINVAL;
	}
	*(uint64_t *)field = u;
	return 0;
}

static int set_bool(void *field, const struct option_def *o, const char *v,
		    char *err, size_t errlen)
{
	bool b;

	if (parse_bool(v, &b) < 0) {
		snprintf(err, errlen, "\"%s\" is not a boolean (yes/no)", v);
		return -EINVAL;
	}
	*(bool *)field = b;
	return 0;
}

static int set_fraction(void *field, const struct option_def *o, const char *v,
			char *err, size_t errlen)
{
	double f;

	if (parse_fraction(v, &f) < 0) {
		snprintf(err, errlen, "\"%s\" is not a fraction (e.g. 0.05 or 5%%)", v);
		return -EINVAL;
	}
	/* The bounds are in parts per billion; half a part either way is rounding. */
	if (f * 1e9 < o->min - 0.5 || f * 1e9 > o->max + 0.5) {
		snprintf(err, errlen, "\"%s\" is out of range (%g%% to %g%%)", v,
			 o->min / 1e7, o->max / 1e7);
		return -EINVAL;
	}
	*(double *)field = f;
	return 0;
}

static int set_loglevel(void *field, const struct option_def *o, const char *v,
			char *err, size_t errlen)
{
	int level = log_level_from_string(v);

	if (level < 0) {
		snprintf(err, errlen, "\"%s\" is not a log level", v);
		return -EINVAL;
	}
	*(int *)field = level;
	return 0;
}

/* Each parses v, checks it against o's bounds and stores it in field. */
static int (*const option_setters[])(void *field, const struct option_def *o, const char *v,
				     char *err, size_t errlen) = {
	[OPT_PATH] = set_path,
	[OPT_OPTIONAL_PATH] = set_string,
	[OPT_STRING] = set_string,
	[OPT_DURATION] = set_duration,
	[OPT_SIZE_KB] = set_size_kb,
	[OPT_SIZE] = set_size,
	[OPT_U64] = set_u64,
	[OPT_BOOL] = set_bool,
	[OPT_LOGLEVEL] = set_loglevel,
	[OPT_FRACTION] = set_fraction,
};

static int option_set(struct config *c, const struct option_def *o, const char *v,
		      char *err, size_t errlen)
{
	if ((size_t)o->type >= ARRAY_SIZE(option_setters) || !option_setters[o->type])
		return -EINVAL;
	return option_setters[o->type]((char *)c + o->off, o, v, err, errlen);
}

/* The first control character of s (tab allowed), or 0. */
static int control_char(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return (unsigned char)*s;
	return 0;
}

int config_set(struct config *c, const char *key, const char *value, char *err, size_t errlen)
{
	const struct option_def *o;
	int ch;

	/* Refused before any message quotes them. */
	if ((ch = control_char(key)) || (ch = control_char(value))) {
		snprintf(err, errlen, "control character 0x%02x in the %s", ch,
			 control_char(key) ? "key" : "value");
		return -EINVAL;
	}
	o = option_find(key);
	if (!o) {
		snprintf(err, errlen, "unknown option \"%s\"", key);
		return -ENOENT;
	}
	return option_set(c, o, value, err, errlen);
}

void config_init(struct config *c)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		int r = option_set(c, &options[i], options[i].def, err, sizeof(err));

		/* The defaults are ours; a bad one is a bug caught by the tests. */
		if (r < 0)
			log_error("BUG: default of %s: %s", options[i].info.key, err);
	}
}

void config_done(struct config *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].type == OPT_PATH || options[i].type == OPT_OPTIONAL_PATH ||
		    options[i].type == OPT_STRING) {
			char **p = (char **)((char *)c + options[i].off);

			free(*p);
			*p = NULL;
		}
}

/*
 * A "key = value" line of path: 0 when set, -ENOMEM, or -EINVAL once
 * logged. set_on[] holds the line each option was set on.
 */
static int config_assign(struct config *c, const char *path, unsigned int lineno, char *p,
			 unsigned int *set_on)
{
	const struct option_def *o;
	char err[256], *key, *value, *eq;
	int r;

	eq = strchr(p, '=');
	if (!eq) {
		log_error("%s:%u: expected \"key = value\"", path, lineno);
		return -EINVAL;
	}
	*eq = '\0';
	key = strstrip(p);
	value = strstrip(eq + 1);
	/* Optional quotes around values with spaces. */
	if (value[0] == '"' && strlen(value) >= 2 && value[strlen(value) - 1] == '"') {
		value[strlen(value) - 1] = '\0';
		value++;
	}
	if (strcmp(key, "duration") == 0) {
		log_error("%s:%u: \"duration\" is a command-line option only", path, lineno);
		return -EINVAL;
	}
	/* The last one would win without a word: say which lines. */
	o = option_find(key);
	if (o && set_on[o - options]) {
		log_error("%s:%u: \"%s\" is already set on line %u", path, lineno, key,
			  set_on[o - options]);
		return -EINVAL;
	}
	r = config_set(c, key, value, err, sizeof(err));
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		log_error("%s:%u: %s", path, lineno, err);
		return -EINVAL;
	}
	set_on[o - options] = lineno;
	return 0;
}

/* One line of path, len bytes as read: returns as config_assign(). */
static int config_line(struct config *c, const char *path, unsigned int lineno, char *line,
		       size_t len, unsigned int *set_on)
{
	char *p;
	int ch;

	/* C strings would end the value there, silently. */
	if (memchr(line, '\0', len)) {
		log_error("%s:%u: a NUL byte in the line", path, lineno);
		return -EINVAL;
	}
	p = strstrip(line);
	if (!*p || *p == '#' || *p == ';')
		return 0;
	/* Never echoed: a terminal would act on an escape sequence. */
	ch = control_char(p);
	if (ch) {
		log_error("%s:%u: control character 0x%02x in the line", path, lineno, ch);
		return -EINVAL;
	}
	if (*p == '[') {
		/* One section for now; accepted so files can grow. */
		if (strcmp(p, "[mmhitmd]") != 0) {
			log_error("%s:%u: unknown section %s", path, lineno, p);
			return -EINVAL;
		}
		return 0;
	}
	return config_assign(c, path, lineno, p, set_on);
}

int config_load(struct config *c, const char *path, bool must_exist)
{
	_cleanup_fclose_ FILE *f = NULL;
	char *line = NULL;
	size_t alloc = 0;
	unsigned int lineno = 0, set_on[ARRAY_SIZE(options)] = { 0 };
	ssize_t len;
	int bad = 0, r;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		return log_error_errno(errno, "Failed to open config %s: %m", path);
	}

	while ((len = getline(&line, &alloc, f)) >= 0) {
		r = config_line(c, path, ++lineno, line, (size_t)len, set_on);
		if (r == -ENOMEM) {
			free(line);
			return log_oom();
		}
		if (r < 0)
			bad++;
	}
	free(line);
	if (ferror(f))
		return log_error_errno(EIO, "Failed to read config %s", path);
	return bad ? -EINVAL : 0;
}

int config_verify(const struct config *c)
{

	if (c->switch_sample_ns >= c->interval_ns)
		return log_error_errno(EINVAL, "switch_sample (%.3gs) must be shorter than interval (%.3gs)",
				       c->switch_sample_ns / 1e9, c->interval_ns / 1e9);
	if (c->sample_window_ns > c->sample_every_ns)
		return log_error_errno(EINVAL, "sample_window (%.3gs) must not exceed sample_every (%.3gs)",
				       c->sample_window_ns / 1e9, c->sample_every_ns / 1e9);
	if (c->drain_ns > c->interval_ns)
		return log_error_errno(EINVAL, "drain_interval (%.3gs) must not exceed interval (%.3gs)",
				       c->drain_ns / 1e9, c->interval_ns / 1e9);
	return 0;
}

/* The largest unit that says it exactly: 14d, 90s, 500ms. */
static void print_duration(FILE *f, int64_t ns)
{
	static const struct { int64_t ns; const char *unit; } units[] = {
		{ 86400 * NSEC_PER_SEC, "d" }, { 3600 * NSEC_PER_SEC, "h" },
		{ 60 * NSEC_PER_SEC, "m" }, { NSEC_PER_SEC, "s" }, { NSEC_PER_MSEC, "ms" },
	};

	for (size_t i = 0; ns && i < ARRAY_SIZE(units); i++)
		if (ns % units[i].ns == 0) {
			fprintf(f, "%" PRId64 "%s\n", ns / units[i].ns, units[i].unit);
			return;
		}
	fprintf(f, "%gs\n", ns / 1e9);
}

static void print_size(FILE *f, uint64_t bytes)
{
	static const char units[] = "TGMK";

	for (int i = 0; bytes && i < 4; i++) {
		uint64_t u = 1ULL << (10 * (4 - i));

		if (bytes % u == 0) {
			fprintf(f, "%" PRIu64 "%c\n", bytes / u, units[i]);
			return;
		}
	}
	fprintf(f, "%" PRIu64 "\n", bytes);
}

void config_dump(const struct config *c, FILE *f)
{
	fputs("# mmhitmd configuration: \"key = value\"; every key is also a\n"
	      "# command-line flag (--key). See mmhitm.conf(5).\n", f);
	static const char *const levels[] = {
		"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
	};

	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct option_def *o = &options[i];
		const void *field = (const char *)c + o->off;

		if (strcmp(o->info.key, "duration") == 0)
			continue;
		fprintf(f, "\n# %s\n%s = ", o->info.help, o->info.key);
		switch (o->type) {
		case OPT_PATH:
		case OPT_OPTIONAL_PATH:
		case OPT_STRING:	fprintf(f, "%s\n", *(char *const *)field ?: ""); break;
		case OPT_DURATION:	print_duration(f, *(const int64_t *)field); break;
		case OPT_SIZE:		print_size(f, *(const uint64_t *)field); break;
		case OPT_SIZE_KB:
		case OPT_U64:		fprintf(f, "%" PRIu64 "\n", *(const uint64_t *)field); break;
		case OPT_BOOL:		fprintf(f, "%s\n", *(const bool *)field ? "yes" : "no"); break;
		case OPT_LOGLEVEL:	fprintf(f, "%s\n", levels[*(const int *)field & 7]); break;
		case OPT_FRACTION:	fprintf(f, "%g%%\n", *(const double *)field * 100); break;
		}
	}
}

const char *default_db_path(void)
{
	const char *p = getenv("MMHITM_DB");

	return p && *p ? p : CONFIG_DEFAULT_DB;
}
