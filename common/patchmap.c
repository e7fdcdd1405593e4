// SPDX-License-Identifier: GPL-2.0
/* The patch map file: rules saying which kernels carry P1..P4. */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "patchmap.h"
#include "util.h"

/* The rules of reports/patches.conf; test-patchmap checks they agree. */
const char patch_map_default_text[] =
	"carries P4 ksym maybe_lru_add_drain\n";

enum match_kind {
	MATCH_RELEASE,
	MATCH_VERSION,
	MATCH_BUILD_ID,
	MATCH_KSYM,
};

static const char *const match_names[] = {
	[MATCH_RELEASE] = "release",
	[MATCH_VERSION] = "version",
	[MATCH_BUILD_ID] = "build-id",
	[MATCH_KSYM] = "ksym",
};

struct patch_line {
	enum patch_state state;
	unsigned int paths;		/* bit i: P(i+1) */
	enum match_kind kind;
	char *pattern;
	char *why;			/* "release 6.1.* (patches.conf:12)" */
};

struct patch_map {
	struct patch_line *rules;
	size_t nr_rules, alloc_rules;
	char **ksyms;			/* distinct ksym patterns */
	size_t nr_ksyms, alloc_ksyms;
};

struct patch_map *patch_map_new(void)
{
	return calloc(1, sizeof(struct patch_map));
}

void patch_map_free(struct patch_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_rules; i++) {
		free(m->rules[i].pattern);
		free(m->rules[i].why);
	}
	free(m->rules);
	for (size_t i = 0; i < m->nr_ksyms; i++)
		free(m->ksyms[i]);
	free(m->ksyms);
	free(m);
}

const char *patch_state_to_string(enum patch_state s)
{
	switch (s) {
	case PATCH_CARRIES: return "carries";
	case PATCH_LACKS: return "lacks";
	default: return "unknown";
	}
}

/* The index of a path id of the table, any case; -1 if none. */
static int id_index(const char *s, size_t len)
{
	for (int p = 0; p < paths_nr(); p++)
		if (strlen(path_get(p)->id) == len && strncasecmp(path_get(p)->id, s, len) == 0)
			return p;
	return -1;
}

/* "P1", "P1,P3", "P2-P4" (in table order), "all" into a bit mask; 0 when malformed. */
static unsigned int parse_paths(const char *s)
{
	unsigned int mask = 0;

	if (strcasecmp(s, "all") == 0)
		return (1u << paths_nr()) - 1;
	while (*s) {
		size_t item = strcspn(s, ","), dash = strcspn(s, "-,");
		int a, b;

		a = b = id_index(s, dash);
		if (dash < item)
			b = id_index(s + dash + 1, item - dash - 1);
		if (a < 0 || b < a)
			return 0;
		for (int i = a; i <= b; i++)
			mask |= 1u << i;
		s += item;
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			return 0;
	}
	return mask;
}

static int add_ksym(struct patch_map *m, const char *name)
{
	for (size_t i = 0; i < m->nr_ksyms; i++)
		if (strcmp(m->ksyms[i], name) == 0)
			return 0;
	if (grow_array((void **)&m->ksyms, &m->alloc_ksyms, sizeof(char *), m->nr_ksyms + 1) < 0)
		return -ENOMEM;
	m->ksyms[m->nr_ksyms] = strdup(name);
	if (!m->ksyms[m->nr_ksyms])
		return -ENOMEM;
	m->nr_ksyms++;
	return 0;
}

/* Splits off the next whitespace-separated word of *s. */
static char *next_word(char **s)
{
	char *p = *s, *w;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return NULL;
	w = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = '\0';
	*s = p;
	return w;
}

static int parse_line(struct patch_map *m, char *line, const char *origin, unsigned int lineno)
{
	char *verb, *paths, *match, *pattern, *rest = line;
	struct patch_line rule = {};
	size_t i;
	int r;

	verb = next_word(&rest);
	if (!verb || verb[0] == '#')
		return 0;
	paths = next_word(&rest);
	match = next_word(&rest);
	pattern = strstrip(rest);
	if (!paths || !match || !*pattern)
		return log_error_errno(EINVAL, "%s:%u: expected 'carries|lacks PATHS MATCH PATTERN'",
				       origin, lineno);

	if (strcmp(verb, "carries") == 0)
		rule.state = PATCH_CARRIES;
	else if (strcmp(verb, "lacks") == 0)
		rule.state = PATCH_LACKS;
	else
		return log_error_errno(EINVAL, "%s:%u: unknown verb '%s' (carries or lacks)",
				       origin, lineno, verb);
	rule.paths = parse_paths(paths);
	if (!rule.paths)
		return log_error_errno(EINVAL, "%s:%u: bad paths '%s' (of %s: one, a list with "
				       "commas, a range FIRST-LAST, or all)", origin, lineno, paths,
				       paths_ids());
	for (i = 0; i < ARRAY_SIZE(match_names); i++)
		if (strcmp(match, match_names[i]) == 0)
			break;
	if (i == ARRAY_SIZE(match_names))
		return log_error_errno(EINVAL, "%s:%u: unknown match '%s' (release, version, build-id or ksym)",
				       origin, lineno, match);
	rule.kind = i;

	if (rule.kind == MATCH_BUILD_ID) {
		size_t n = strlen(pattern);

		for (size_t k = 0; k < n; k++)
			if (!isxdigit((unsigned char)pattern[k]))
				return log_error_errno(EINVAL, "%s:%u: build-id '%s' is not hex",
						       origin, lineno, pattern);
		if (n < 8)
			return log_error_errno(EINVAL, "%s:%u: build-id prefix '%s' is shorter than 8 digits",
					       origin, lineno, pattern);
	} else if (rule.kind != MATCH_VERSION && strpbrk(pattern, " \t")) {
		return log_error_errno(EINVAL, "%s:%u: %s pattern '%s' has a space",
				       origin, lineno, match, pattern);
	}

	if (grow_array((void **)&m->rules, &m->alloc_rules, sizeof(struct patch_line), m->nr_rules + 1) < 0)
		return log_oom();
	rule.pattern = strdup(pattern);
	if (asprintf(&rule.why, "%s %s (%s:%u)", match, pattern, origin, lineno) < 0)
		rule.why = NULL;
	if (!rule.pattern || !rule.why) {
		free(rule.pattern);
		free(rule.why);
		return log_oom();
	}
	if (rule.kind == MATCH_KSYM) {
		r = add_ksym(m, pattern);
		if (r < 0) {
			free(rule.pattern);
			free(rule.why);
			return log_oom();
		}
	}
	m->rules[m->nr_rules++] = rule;
	return 0;
}

int patch_map_parse(struct patch_map *m, const char *text, size_t len, const char *origin)
{
	unsigned int lineno = 0;
	size_t pos = 0;
	int r = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *line;

		lineno++;
		if (memchr(text + pos, '\0', n)) {
			r = log_error_errno(EINVAL, "%s:%u: NUL byte in line", origin, lineno);
			break;
		}
		line = strndup(text + pos, n);
		if (!line)
			return log_oom();
		r = parse_line(m, line, origin, lineno);
		free(line);
		if (r < 0)
			break;
		pos += n + 1;
	}
	return r;
}

int patch_map_load(struct patch_map *m, const char *path)
{
	_cleanup_free_ char *buf = NULL;
	const char *base = strrchr(path, '/');
	ssize_t n;

	n = read_file(path, &buf);
	if (n < 0)
		return log_error_errno(n, "Failed to read patch map %s: %m", path);
	return patch_map_parse(m, buf, n, base ? base + 1 : path);
}

int patch_map_load_default(struct patch_map *m)
{
	return patch_map_parse(m, patch_map_default_text, strlen(patch_map_default_text),
			       "built-in");
}

size_t patch_map_nr_rules(const struct patch_map *m)
{
	return m->nr_rules;
}

size_t patch_map_nr_ksyms(const struct patch_map *m)
{
	return m->nr_ksyms;
}

const char *patch_map_ksym(const struct patch_map *m, size_t i)
{
	return i < m->nr_ksyms ? m->ksyms[i] : NULL;
}

static bool patch_line_matches(const struct patch_line *rule, const struct kernel_desc *k)
{
	switch (rule->kind) {
	case MATCH_RELEASE:
		return k->release && fnmatch(rule->pattern, k->release, 0) == 0;
	case MATCH_VERSION:
		return k->version && fnmatch(rule->pattern, k->version, 0) == 0;
	case MATCH_BUILD_ID:
		return k->build_id && strlen(k->build_id) >= strlen(rule->pattern) &&
		       strncasecmp(k->build_id, rule->pattern, strlen(rule->pattern)) == 0;
	case MATCH_KSYM:
		for (size_t i = 0; i < k->nr_ksyms; i++)
			if (k->ksyms[i] && strcmp(k->ksyms[i], rule->pattern) == 0)
				return true;
		return false;
	}
	return false;
}

void patch_map_resolve(const struct patch_map *m, const struct kernel_desc *k,
		       struct patch_verdict ret[MAX_PATHS])
{
	for (int p = 0; p < paths_nr(); p++)
		ret[p] = (struct patch_verdict){ PATCH_UNKNOWN, NULL };
	for (size_t i = 0; i < m->nr_rules; i++) {
		const struct patch_line *rule = &m->rules[i];

		if (!patch_line_matches(rule, k))
			continue;
		for (int p = 0; p < paths_nr(); p++)
			if (rule->paths & (1u << p))
				ret[p] = (struct patch_verdict){ rule->state, rule->why };
	}
}
