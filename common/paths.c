// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "paths.h"
#include "util.h"

/* common/paths.conf, compiled in (common/gen-blob.sh). */
extern const unsigned char paths_conf[];
extern const size_t paths_conf_len;

static struct path_def table[MAX_PATHS];
static size_t nr_paths;
static char *text_copy;		/* the parsed table's strings point into it */
static char ids[MAX_PATHS * 8];
static char span[64];
static bool loaded;

static void load(void);

/* The index of id among the paths parsed so far, or -1. */
static int find(const char *id)
{
	for (size_t i = 0; id && i < nr_paths; i++)
		if (table[i].id && strcmp(table[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* Splits value into words, in place, into v[]; -E2BIG past the end. */
static int words(char *value, const char **v, size_t *n)
{
	for (char *w = strtok(value, " \t"); w; w = strtok(NULL, " \t")) {
		if (*n == PATH_MAX_LIST)
			return -E2BIG;
		v[(*n)++] = w;
	}
	return 0;
}

/* The states a feature can be in, per feature the boots record. */
static const char *const lru_gen_states[] = { "on", "off", "absent", NULL };

static const char *const *feature_states(const char *feature, size_t len)
{
	return len == strlen("lru_gen") && strncmp(feature, "lru_gen", len) == 0 ? lru_gen_states : NULL;
}

/* Whether state (len bytes) is one of the feature's states. */
static bool state_known(const char *const *states, const char *state, size_t len)
{
	for (size_t i = 0; states[i]; i++)
		if (strlen(states[i]) == len && strncmp(states[i], state, len) == 0)
			return true;
	return false;
}

/* `needs`: FEATURE=STATE,... words, each feature and state known. */
static int needs_words(char *value, struct path_def *p)
{
	int r = words(value, p->needs, &p->nr_needs);

	for (size_t i = 0; r == 0 && i < p->nr_needs; i++) {
		const char *w = p->needs[i], *s = strchr(w, '=');
		const char *const *states = s ? feature_states(w, (size_t)(s - w)) : NULL;

		if (!states || !s[1])
			return -EINVAL;
		for (s++; *s; s += *s == ',') {
			size_t n = strcspn(s, ",");

			if (!state_known(states, s, n))
				return -EINVAL;
			s += n;
		}
	}
	return r;
}

/* "unit_of SOURCE UNIT...": what a work source other than the first counts. */
static int unit_of(struct path_def *p, char *value)
{
	char *unit = value + strcspn(value, " \t");

	if (p->nr_unit_of == PATH_MAX_LIST)
		return -E2BIG;
	if (*unit)
		*unit++ = '\0';
	unit = strstrip(unit);
	if (!*value || !*unit)
		return -EINVAL;
	p->unit_of_source[p->nr_unit_of] = value;
	p->unit_of[p->nr_unit_of++] = unit;
	return 0;
}

static const char *const free_files[NR_PATH_FREE_FILES] = {
	[PATH_FREE_STAT] = "stat",
	[PATH_FREE_VMSTAT] = "vmstat",
	[PATH_FREE_INTERRUPTS] = "interrupts",
};

const char *path_free_file_name(enum path_free_file f)
{
	return f < NR_PATH_FREE_FILES ? free_files[f] : "?";
}

/*
 * Whether mmhitmd reads this free counter every interval (the sys
 * snapshot: /proc/stat's ctxt and processes, all of /proc/vmstat, the
 * TLB row of /proc/interrupts), as an exact one's interval count needs.
 */
bool path_free_read_every_interval(const struct path_free *f)
{
	switch (f->file) {
	case PATH_FREE_STAT:
		return strcmp(f->field, "ctxt") == 0 || strcmp(f->field, "processes") == 0;
	case PATH_FREE_VMSTAT:
		return true;
	case PATH_FREE_INTERRUPTS:
		return strcmp(f->field, "TLB") == 0;
	default:
		return false;
	}
}

/* "free SOURCE FILE:FIELD [exact]": FILE one of free_files[], FIELD a word. */
static int free_key(struct path_def *p, char *value, unsigned int line)
{
	const char *w[PATH_MAX_LIST];
	size_t n = 0, file;
	bool exact;
	char *field;

	if (words(value, w, &n) < 0 || n < 2 || n > 3 || p->nr_free == PATH_MAX_LIST)
		return -EINVAL;
	exact = n == 3;
	if (exact && strcmp(w[2], "exact") != 0)
		return -EINVAL;
	field = strchr(w[1], ':');
	if (!field || !field[1])
		return -EINVAL;
	*field++ = '\0';
	for (const char *c = field; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return -EINVAL;
	for (file = 0; file < NR_PATH_FREE_FILES && strcmp(w[1], free_files[file]) != 0; file++)
		;
	if (file == NR_PATH_FREE_FILES)
		return -EINVAL;
	p->free[p->nr_free] = (struct path_free){ w[0], (enum path_free_file)file, field, line, exact };
	/* An exact counter stands in for its tracepoint's count. */
	if (exact && (!strchr(w[0], ':') || startswith(w[0], "derived:") ||
		      !path_free_read_every_interval(&p->free[p->nr_free])))
		return -EINVAL;
	p->nr_free++;
	return 0;
}

static int set_key(struct path_def *p, const char *key, char *value, unsigned int line)
{
	static const struct {
		const char *key;
		size_t off;
	} texts[] = {
		{ "title", offsetof(struct path_def, title) },
		{ "patch", offsetof(struct path_def, patch) },
		{ "unit", offsetof(struct path_def, unit) },
		{ "reproducer", offsetof(struct path_def, reproducer) },
		{ "metric", offsetof(struct path_def, metric) },
		{ "needs_why", offsetof(struct path_def, needs_why) },
	};
	char *end;

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++)
		if (strcmp(key, texts[i].key) == 0) {
			*(const char **)((char *)p + texts[i].off) = value;
			return 0;
		}
	if (strcmp(key, "per") == 0) {
		p->per = strtod(value, &end);
		return *end || !(p->per > 0) ? -EINVAL : 0;
	}
	if (strcmp(key, "objects") == 0)
		return words(value, p->objects, &p->nr_objects);
	if (strcmp(key, "functions") == 0)
		return words(value, p->functions, &p->nr_functions);
	if (strcmp(key, "work") == 0)
		return words(value, p->work, &p->nr_work);
	if (strcmp(key, "needs") == 0)
		return needs_words(value, p);
	if (strcmp(key, "unit_of") == 0)
		return unit_of(p, value);
	if (strcmp(key, "free") == 0)
		return free_key(p, value, line);
	return -ENOENT;
}

/*
 * Each work source's unit: `unit` is the first one's, `unit_of` names the
 * others' (a rate per all switches is not one per same-mm switches, so a
 * source without its own unit would borrow a wrong one).
 */
static int resolve_units(struct path_def *p, const char *origin)
{
	p->work_unit[0] = p->unit;
	for (size_t k = 0; k < p->nr_unit_of; k++) {
		size_t i = 1;

		while (i < p->nr_work && strcmp(p->work[i], p->unit_of_source[k]) != 0)
			i++;
		if (i == p->nr_work)
			return log_error_errno(EINVAL, "%s: path %s: unit_of %s names none of its work "
					       "sources after the first", origin, p->id, p->unit_of_source[k]);
		p->work_unit[i] = p->unit_of[k];
	}
	for (size_t i = 1; i < p->nr_work; i++)
		if (!p->work_unit[i])
			return log_error_errno(EINVAL, "%s: path %s lacks a unit_of for its work source %s",
					       origin, p->id, p->work[i]);
	return 0;
}

/*
 * Each `free` names a work source of its path, one free counter per
 * source (the spike watch and the counting read the same one), and the
 * table holds at most PATHS_MAX_FREE (the spike watch reads them all);
 * *total counts the table's so far.
 */
static int check_free(const struct path_def *p, const char *origin, size_t *total)
{
	for (size_t k = 0; k < p->nr_free; k++) {
		const struct path_free *f = &p->free[k];
		size_t i = 0;

		while (i < p->nr_work && strcmp(p->work[i], f->source) != 0)
			i++;
		if (i == p->nr_work)
			return log_error_errno(EINVAL, "%s:%u: free %s: not a work source of path %s",
					       origin, f->line, f->source, p->id);
		if (path_work_free(p, f->source) != f)
			return log_error_errno(EINVAL, "%s:%u: a second free for %s", origin, f->line,
					       f->source);
		if (++*total > PATHS_MAX_FREE)
			return log_error_errno(EINVAL, "%s:%u: more than %d free counters in the table",
					       origin, f->line, PATHS_MAX_FREE);
	}
	return 0;
}

/* What every path must have for its users not to trip over a NULL. */
static int check_complete(struct path_def *p, const char *origin, size_t *nr_free)
{
	if (!p->title || !p->unit || !p->per || !p->nr_work)
		return log_error_errno(EINVAL, "%s: path %s lacks %s", origin, p->id,
				       !p->title ? "a title" : !p->unit ? "a unit" :
				       !p->per ? "per" : "work");
	if (p->nr_needs && !p->needs_why)
		return log_error_errno(EINVAL, "%s: path %s has needs but no needs_why", origin, p->id);
	return check_free(p, origin, nr_free) ?: resolve_units(p, origin);
}

int paths_parse(const char *text, size_t len, const char *origin)
{
	struct path_def *cur = NULL;
	unsigned int lineno = 0;
	char *copy = strndup(text, len), *line, *next;
	size_t n = 0, nr_free = 0;
	int r;

	if (!copy)
		return log_oom();
	memset(table, 0, sizeof(table));
	for (line = copy; line; line = next) {
		char *key, *value;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		key = strstrip(line);
		if (!*key || *key == '#')
			continue;
		value = key + strcspn(key, " \t");
		if (*value)
			*value++ = '\0';
		value = strstrip(value);
		if (strcmp(key, "path") == 0) {
			if (cur && (r = check_complete(cur, origin, &nr_free)) < 0)
				goto fail;
			if (!*value || strchr(value, ' ') || strchr(value, '\t') || n == MAX_PATHS ||
			    find(value) >= 0) {
				r = log_error_errno(EINVAL, "%s:%u: bad path id '%s' (one word, unique, at most "
						    "%d paths)", origin, lineno, value, MAX_PATHS);
				goto fail;
			}
			cur = &table[n++];
			cur->id = value;
			nr_paths = n;	/* path_index() sees the ids so far */
			continue;
		}
		if (!cur) {
			r = log_error_errno(EINVAL, "%s:%u: '%s' before the first 'path'", origin, lineno, key);
			goto fail;
		}
		r = set_key(cur, key, value, lineno);
		if (r < 0) {
			log_error_errno(EINVAL, "%s:%u: %s '%s'", origin, lineno,
					r == -ENOENT ? "unknown key" :
					r == -E2BIG ? "too many words in" : "bad value for", key);
			r = -EINVAL;
			goto fail;
		}
	}
	if (!cur) {
		r = log_error_errno(EINVAL, "%s: no path", origin);
		goto fail;
	}
	r = check_complete(cur, origin, &nr_free);
	if (r < 0)
		goto fail;
	free(text_copy);
	text_copy = copy;
	nr_paths = n;
	ids[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), "%s%s", i ? " " : "", table[i].id);
	if (n == 1)
		snprintf(span, sizeof(span), "%s", table[0].id);
	else
		snprintf(span, sizeof(span), "%s..%s", table[0].id, table[n - 1].id);
	loaded = true;
	return 0;
fail:
	free(copy);
	memset(table, 0, sizeof(table));
	nr_paths = 0;
	return r;
}

int paths_load(void)
{
	const char *path = getenv("MMHITM_PATHS");
	_cleanup_free_ char *buf = NULL;
	ssize_t n;

	if (loaded)
		return 0;
	if (path && *path) {
		n = read_file(path, &buf);
		if (n < 0)
			return log_error_errno((int)n, "Failed to read the path table %s (MMHITM_PATHS): %m",
					       path);
		return paths_parse(buf, (size_t)n, path);	/* the text stays, copied */
	}
	return paths_parse((const char *)paths_conf, paths_conf_len, "paths.conf (built in)");
}

/* A program's main() has loaded the table (paths_load()); a test or a
 * benchmark that did not gets it here. A table that does not load here is
 * a main() that did not check. */
static void load(void)
{
	if (!loaded && paths_load() < 0)
		abort();
}

size_t paths_count(void)
{
	load();
	return nr_paths;
}

const struct path_def *path_get(size_t i)
{
	load();
	return i < nr_paths ? &table[i] : NULL;
}

int path_index(const char *id)
{
	load();
	return find(id);
}

const char *path_work_unit(const struct path_def *p, const char *source)
{
	for (size_t i = 0; i < p->nr_work; i++)
		if (strcmp(p->work[i], source) == 0)
			return p->work_unit[i];
	return NULL;
}

const struct path_free *path_work_free(const struct path_def *p, const char *source)
{
	for (size_t i = 0; i < p->nr_free; i++)
		if (strcmp(p->free[i].source, source) == 0)
			return &p->free[i];
	return NULL;
}

bool path_work_exact_free(const char *source)
{
	for (size_t p = 0; p < paths_count(); p++) {
		const struct path_free *f = path_work_free(path_get(p), source);

		if (f && f->exact)
			return true;
	}
	return false;
}

const char *paths_ids(void)
{
	load();
	return ids;
}

const char *paths_span(void)
{
	load();
	return span;
}

bool path_runs_with(const struct path_def *p, const char *feature, const char *state)
{
	size_t flen = strlen(feature);

	if (!state || !feature_states(feature, flen) || !state_known(feature_states(feature, flen), state,
								       strlen(state)))
		return true;
	for (size_t i = 0; i < p->nr_needs; i++) {
		const char *w = p->needs[i];

		if (strncmp(w, feature, flen) || w[flen] != '=')
			continue;
		for (const char *s = w + flen + 1; *s; s += *s == ',') {
			size_t n = strcspn(s, ",");

			if (n == strlen(state) && strncmp(s, state, n) == 0)
				return true;
			s += n;
		}
		return false;
	}
	return true;
}
