// SPDX-License-Identifier: GPL-2.0
/* Attribution rules: parser, matcher and digest (format: engine/rules.conf). */
#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "paths.h"
#include "rules.h"
#include "util.h"

/*
 * Bumped whenever object resolution or matching changes meaning, so the
 * digest stored with an analysis tells that old results are stale even
 * when the rules text did not change.
 */
#define RESOLVER_VERSION "mmhitm-resolver-2"

/* engine/rules.conf, compiled in by engine/gen-rules.sh. */
extern const char rules_default_text[];

enum cond_kind {
	COND_OBJECT, COND_FIELD, COND_OFFSET, COND_IP, COND_CALLER, COND_CHAIN,
	COND_STACK, COND_NOCHAIN, COND_HASCHAIN, COND_AS, COND_REGION,
};

static const struct {
	const char *key;
	enum cond_kind kind;
	bool for_anchor;	/* meaningful before the address is typed */
} cond_keys[] = {
	{ "object",   COND_OBJECT,   false },
	{ "field",    COND_FIELD,    false },
	{ "offset",   COND_OFFSET,   false },
	{ "ip",       COND_IP,       true },
	{ "caller",   COND_CALLER,   true },
	{ "chain",    COND_CHAIN,    true },
	{ "stack",    COND_STACK,    true },
	{ "nochain",  COND_NOCHAIN,  true },
	{ "haschain", COND_HASCHAIN, true },
	{ "as",       COND_AS,       false },
	{ "region",   COND_REGION,   false },
};

struct cond {
	enum cond_kind kind;
	char **set;		/* globs */
	size_t n;
	int64_t lo, hi;		/* offset= */
	bool yes;		/* haschain= */
};

struct rule {
	char *name;
	bool anchor;
	char *target;		/* rule: P1.., other, other:x, unresolved; anchor: struct.field */
	char *anchor_struct, *anchor_field;
	struct cond *conds;
	size_t n_conds;
	const struct cond *ip_cond;	/* for caller= */
	char *as_struct, *as_field;	/* as=STRUCT.FIELD */
	char origin[160];
	unsigned int gen;	/* which rules_parse() call defined it */
	char *canon;		/* canonical text, for the digest */
};

struct rules {
	struct rule *v;
	size_t n, alloc;
	size_t n_overrides;	/* override rules inserted at the front so far */
	unsigned int gen;	/* rules_parse() calls so far */
	char digest[17];
	bool digest_valid;
};

struct rules *rules_new(void)
{
	return calloc(1, sizeof(struct rules));
}

static void cond_done(struct cond *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->set[i]);
	free(c->set);
}

static void rule_done(struct rule *rule)
{
	for (size_t i = 0; i < rule->n_conds; i++)
		cond_done(&rule->conds[i]);
	free(rule->conds);
	free(rule->name);
	free(rule->target);
	free(rule->anchor_struct);
	free(rule->anchor_field);
	free(rule->as_struct);
	free(rule->as_field);
	free(rule->canon);
	memset(rule, 0, sizeof(*rule));
}

void rules_free(struct rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		rule_done(&r->v[i]);
	free(r->v);
	free(r);
}

size_t rules_count(const struct rules *r) { return r->n; }
const struct rule *rules_get(const struct rules *r, size_t i) { return i < r->n ? &r->v[i] : NULL; }
const char *rule_name(const struct rule *rule) { return rule->name; }
bool rule_is_anchor(const struct rule *rule) { return rule->anchor; }
const char *rule_origin(const struct rule *rule) { return rule->origin; }
const char *rule_anchor_struct(const struct rule *rule) { return rule->anchor_struct; }
const char *rule_anchor_field(const struct rule *rule) { return rule->anchor_field; }

bool rule_as(const struct rule *rule, const char **ret_struct, const char **ret_field)
{
	if (!rule->as_struct)
		return false;
	*ret_struct = rule->as_struct;
	*ret_field = rule->as_field;
	return true;
}

/* --- parsing --------------------------------------------------------------- */

static int parse_set(const char *v, struct cond *c)
{
	const char *p = v;

	if (!*v)
		return -EINVAL;
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char **n;

		if (len == 0)
			return -EINVAL;
		n = realloc(c->set, (c->n + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		c->set = n;
		c->set[c->n] = strndup(p, len);
		if (!c->set[c->n])
			return -ENOMEM;
		c->n++;
		p += len;
		if (*p == ',')
			p++;
		if (e && !*p)
			return -EINVAL;	/* trailing comma */
	}
	return 0;
}

static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("_-.:", *s))
			return false;
	return true;
}

static bool valid_target(const char *t)
{
	/* a path of the path table (common/paths.conf), or not a path */
	if (path_index(t) >= 0 || strcmp(t, "other") == 0 || strcmp(t, "unresolved") == 0)
		return true;
	return startswith(t, "other:") && valid_name(t + 6);
}

static int parse_offset(const char *v, int64_t *lo, int64_t *hi)
{
	char buf[64], *dash;
	uint64_t a, b;

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_u64(buf, &a) < 0)
		return -EINVAL;
	b = a;
	if (dash && parse_u64(dash + 1, &b) < 0)
		return -EINVAL;
	if (b < a || b > INT64_MAX)
		return -EINVAL;
	*lo = (int64_t)a;
	*hi = (int64_t)b;
	return 0;
}

/* Appends s to the canonical text. */
static int canon_add(char **canon, const char *s)
{
	size_t old = *canon ? strlen(*canon) : 0;
	char *n = realloc(*canon, old + strlen(s) + 2);

	if (!n)
		return -ENOMEM;
	if (old)
		n[old++] = ' ';
	strcpy(n + old, s);
	*canon = n;
	return 0;
}

/* Logs "where: why" and returns -EINVAL. */
static int __attribute__((format(printf, 2, 3))) bad(const char *where, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("%s: %s", where, msg);
	return -EINVAL;
}

#define BAD(...) do { r = bad(where, __VA_ARGS__); goto out; } while (0)

/* The rule's head: keyword, name and target (an anchor's STRUCT.FIELD). */
static int parse_head(char **tok, size_t ntok, const char *where, struct rule *rule)
{
	int r = 0;

	rule->anchor = strcmp(tok[0], "anchor") == 0;
	if (ntok < 3)
		BAD("%s needs a name and a %s, then conditions", tok[0],
		    rule->anchor ? "STRUCT.FIELD" : "target");
	if (!valid_name(tok[1]))
		BAD("bad rule name '%s' (letters, digits, _ - . :)", tok[1]);
	rule->name = strdup(tok[1]);
	rule->target = strdup(tok[2]);
	if (!rule->name || !rule->target)
		return -ENOMEM;
	if (rule->anchor) {
		const char *dot = strchr(tok[2], '.');

		if (!dot || dot == tok[2] || !dot[1] || !valid_name(tok[2]))
			BAD("anchor '%s': '%s' is not STRUCT.FIELD", tok[1], tok[2]);
		rule->anchor_struct = strndup(tok[2], (size_t)(dot - tok[2]));
		rule->anchor_field = strdup(dot + 1);
		if (!rule->anchor_struct || !rule->anchor_field)
			return -ENOMEM;
	} else if (!valid_target(tok[2])) {
		BAD("rule '%s': bad target '%s' (%s, other, other:NAME, unresolved)",
		    tok[1], tok[2], paths_span());
	}
	r = canon_add(&rule->canon, tok[0]);
	if (r >= 0)
		r = canon_add(&rule->canon, tok[1]);
	if (r >= 0)
		r = canon_add(&rule->canon, tok[2]);
out:
	return r;
}

/* as=STRUCT.FIELD, v, of the rule whose head is head[0..2]. */
static int parse_as(const char *v, char **head, const char *where, struct rule *rule)
{
	const char *name = head[1];
	const char *dot = strchr(v, '.');
	int r = 0;

	if (rule->as_struct)
		BAD("rule '%s': more than one as=", name);
	if (!dot || dot == v || !dot[1] || !valid_name(v) || strpbrk(v, "*?[,"))
		BAD("rule '%s': as=%s is not STRUCT.FIELD", name, v);
	if (strcmp(head[2], "other") == 0)
		BAD("rule '%s': as= needs a target that names the result (%s, "
		    "other:NAME)", name, paths_span());
	rule->as_struct = strndup(v, (size_t)(dot - v));
	rule->as_field = strdup(dot + 1);
	if (!rule->as_struct || !rule->as_field)
		return -ENOMEM;
out:
	return r;
}

/* The value v of condition c (its KEY= known) of the rule whose head is head[0..2]. */
static int parse_value(const char *key, const char *v, char **head, const char *where,
		       struct rule *rule, struct cond *c)
{
	const char *name = head[1];
	int r = 0;

	switch (c->kind) {
	case COND_OFFSET:
		if (parse_offset(v, &c->lo, &c->hi) < 0)
			BAD("rule '%s': offset=%s is not LO[-HI] bytes", name, v);
		break;
	case COND_HASCHAIN:
		if (parse_bool(v, &c->yes) < 0)
			BAD("rule '%s': haschain=%s is not yes or no", name, v);
		break;
	case COND_AS:
		return parse_as(v, head, where, rule);
	default:
		r = parse_set(v, c);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			BAD("rule '%s': %s=%s is not a comma-separated list", name, key, v);
		break;
	}
out:
	return r;
}

/* One KEY=VALUE condition, tok, of the rule whose head is head[0..2]. */
static int parse_cond(char *tok, char **head, const char *where, struct rule *rule)
{
	char *eq = strchr(tok, '=');
	struct cond *c = &rule->conds[rule->n_conds];
	size_t k;
	int r = 0;

	if (!eq)
		BAD("rule '%s': '%s' is not KEY=VALUE", head[1], tok);
	*eq = '\0';
	for (k = 0; k < ARRAY_SIZE(cond_keys); k++)
		if (strcmp(tok, cond_keys[k].key) == 0)
			break;
	if (k == ARRAY_SIZE(cond_keys))
		BAD("rule '%s': unknown condition '%s'", head[1], tok);
	if (rule->anchor && !cond_keys[k].for_anchor)
		BAD("anchor '%s': '%s=' cannot apply before the address is typed", head[1], tok);
	c->kind = cond_keys[k].kind;
	rule->n_conds++;
	r = parse_value(tok, eq + 1, head, where, rule, c);
	if (r < 0)
		return r;
	if (c->kind == COND_IP) {
		if (rule->ip_cond)
			BAD("rule '%s': more than one ip=", head[1]);
		rule->ip_cond = c;
	}
	*eq = '=';
	r = canon_add(&rule->canon, tok);
out:
	return r;
}

/* Parses one non-empty line's tokens into *rule. */
static int parse_rule(char **tok, size_t ntok, const char *where, struct rule *rule)
{
	int r;

	r = parse_head(tok, ntok, where, rule);
	if (r < 0)
		return r;
	rule->conds = calloc(ntok, sizeof(*rule->conds));
	if (!rule->conds)
		return -ENOMEM;
	for (size_t i = 3; i < ntok; i++) {
		r = parse_cond(tok[i], tok, where, rule);
		if (r < 0)
			return r;
	}
	return 0;
}

static struct rule *rules_find(struct rules *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->v[i].name, name) == 0)
			return &r->v[i];
	return NULL;
}

static int rules_insert(struct rules *r, size_t at, struct rule *rule)
{
	int ret = grow_array((void **)&r->v, &r->alloc, sizeof(*r->v), r->n + 1);

	if (ret < 0)
		return ret;
	memmove(&r->v[at + 1], &r->v[at], (r->n - at) * sizeof(*r->v));
	r->v[at] = *rule;
	r->n++;
	/* conds moved with the struct; ip_cond points into them still */
	return 0;
}

static int rules_disable(struct rules *r, const char *name, const char *where)
{
	for (size_t i = 0; i < r->n; i++) {
		if (strcmp(r->v[i].name, name) != 0)
			continue;
		rule_done(&r->v[i]);
		memmove(&r->v[i], &r->v[i + 1], (r->n - i - 1) * sizeof(*r->v));
		r->n--;
		if (i < r->n_overrides)
			r->n_overrides--;
		return 0;
	}
	log_error("%s: disable: no rule named '%s'", where, name);
	return -EINVAL;
}

/*
 * Splits line (its comment cut) into at most max words. Returns the number
 * of words; 0 when there are more (logged: the line is ignored, ret_error
 * set).
 */
static size_t split_words(char *line, char **tok, size_t max, const char *where, int *ret_error)
{
	size_t ntok = 0;
	char *p;

	for (p = line; *p; p++) {
		if (*p == '#' && (p == line || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			break;
		}
	}
	for (p = strtok_r(line, " \t\r", &line); p; p = strtok_r(NULL, " \t\r", &line)) {
		if (ntok == max) {
			log_error("%s: more than %zu words", where, max);
			*ret_error = -EINVAL;
			return 0;	/* the line is refused whole */
		}
		tok[ntok++] = p;
	}
	return ntok;
}

/*
 * Adds a parsed rule (ownership passes: freed on failure). One of a name
 * already defined replaces it in an override file and is an error
 * elsewhere. Returns 0, -EINVAL (logged) or -ENOMEM.
 */
static int rules_add(struct rules *r, struct rule *rule, const char *where, unsigned int flags)
{
	struct rule *old = rules_find(r, rule->name);
	int rr;

	if (old && (!(flags & RULES_OVERRIDE) || old->gen == r->gen)) {
		log_error("%s: rule name '%s' used twice (first at %s)", where, rule->name,
			  old->origin);
		rule_done(rule);
		return -EINVAL;
	}
	if (old) {
		rule_done(old);
		*old = *rule;
		return 0;
	}
	if (flags & RULES_OVERRIDE)
		rr = rules_insert(r, r->n_overrides++, rule);
	else
		rr = rules_insert(r, r->n, rule);
	if (rr < 0) {
		rule_done(rule);
		return -ENOMEM;
	}
	return 0;
}

/* One line's words: a disable, or a rule or anchor added to r. Returns 0,
 * -EINVAL (logged) or -ENOMEM. */
static int parse_line(struct rules *r, char **tok, size_t ntok, const char *where,
		      unsigned int flags)
{
	struct rule rule = {};
	int rr;

	if (strcmp(tok[0], "disable") == 0) {
		if (!(flags & RULES_OVERRIDE) || ntok != 2) {
			log_error("%s: 'disable NAME' belongs in an override file", where);
			return -EINVAL;
		}
		return rules_disable(r, tok[1], where) < 0 ? -EINVAL : 0;
	}
	if (strcmp(tok[0], "rule") != 0 && strcmp(tok[0], "anchor") != 0) {
		log_error("%s: unknown keyword '%s' (rule, anchor, disable)", where, tok[0]);
		return -EINVAL;
	}
	rr = parse_rule(tok, ntok, where, &rule);
	if (rr < 0) {
		rule_done(&rule);
		return rr;
	}
	snprintf(rule.origin, sizeof(rule.origin), "%s", where);
	rule.gen = r->gen;
	return rules_add(r, &rule, where, flags);
}

int rules_parse(struct rules *r, const char *text, const char *origin, unsigned int flags)
{
	_cleanup_free_ char *copy = strdup(text);
	char *line, *save = NULL;
	unsigned int lineno = 0;
	int ret = 0;

	if (!copy)
		return log_oom();
	r->gen++;
	/* strtok_r would merge empty lines and break the numbering. */
	for (line = copy; line; line = save) {
		char *tok[64], where[160];
		size_t ntok;
		int rr;

		save = strchr(line, '\n');
		if (save)
			*save++ = '\0';
		lineno++;
		snprintf(where, sizeof(where), "%s:%u", origin, lineno);
		ntok = split_words(line, tok, ARRAY_SIZE(tok), where, &ret);
		if (ntok == 0)
			continue;
		rr = parse_line(r, tok, ntok, where, flags);
		if (rr == -ENOMEM)
			return log_oom();
		if (rr < 0)
			ret = rr;
	}
	/* ip_cond pointers survive moves: they point into the conds arrays,
	 * which are heap blocks owned by each rule, not into r->v. */
	r->digest_valid = false;
	return ret;
}

int rules_load_defaults(struct rules *r)
{
	return rules_parse(r, rules_default_text, "rules.conf (built in)", 0);
}

int rules_load_file(struct rules *r, const char *path)
{
	_cleanup_free_ char *text = NULL;
	ssize_t n = read_file(path, &text);

	if (n < 0)
		return log_error_errno((int)n, "Failed to read rules %s: %m", path);
	return rules_parse(r, text, path, RULES_OVERRIDE);
}

/* --- digest ---------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

const char *rules_digest(const struct rules *rc)
{
	struct rules *r = (struct rules *)(uintptr_t)rc;	/* a cache, not state */
	uint64_t h = 0xcbf29ce484222325ULL;

	if (r->digest_valid)
		return r->digest;
	h = fnv1a(h, RESOLVER_VERSION, strlen(RESOLVER_VERSION) + 1);
	for (size_t i = 0; i < r->n; i++)
		h = fnv1a(h, r->v[i].canon, strlen(r->v[i].canon) + 1);
	snprintf(r->digest, sizeof(r->digest), "%016llx", (unsigned long long)h);
	r->digest_valid = true;
	return r->digest;
}

/* --- matching -------------------------------------------------------------- */

static bool set_match(const struct cond *c, const char *s)
{
	const char *dot;
	char base[128];

	if (!s)
		return false;	/* an unknown symbol matches nothing */
	for (size_t i = 0; i < c->n; i++)
		if (fnmatch(c->set[i], s, 0) == 0)
			return true;
	/* GCC's clones keep the function's name before a dot
	 * (finish_task_switch.isra.0, foo.constprop.0, foo.cold) */
	dot = strchr(s, '.');
	if (!dot || dot == s || (size_t)(dot - s) >= sizeof(base))
		return false;
	memcpy(base, s, (size_t)(dot - s));
	base[dot - s] = '\0';
	for (size_t i = 0; i < c->n; i++)
		if (fnmatch(c->set[i], base, 0) == 0)
			return true;
	return false;
}

bool rules_field_match(const char *pattern, const char *field)
{
	char buf[256];
	size_t len = strlen(field);

	if (fnmatch(pattern, field, 0) == 0)
		return true;
	if (len >= sizeof(buf))
		return false;
	for (size_t i = 1; i < len; i++) {
		if (field[i] != '.' && field[i] != '[')
			continue;
		memcpy(buf, field, i);
		buf[i] = '\0';
		if (fnmatch(pattern, buf, 0) == 0)
			return true;
	}
	return false;
}

static bool chain_any(const struct cond *c, const struct rule_input *in)
{
	for (size_t i = 0; i < in->chain_n; i++)
		if (set_match(c, in->chain[i]))
			return true;
	return false;
}

/* The first frame, from the IP outward, that is not itself one of ip=:
 * for a spinlock slow path, the function that took the lock. */
static const char *caller_of(const struct rule *rule, const struct rule_input *in)
{
	for (size_t i = 0; i < in->chain_n; i++)
		if (!rule->ip_cond || !set_match(rule->ip_cond, in->chain[i]))
			return in->chain[i];
	return NULL;
}

static bool cond_match(const struct rule *rule, const struct cond *c, const struct rule_input *in)
{
	switch (c->kind) {
	case COND_OBJECT:
		for (size_t i = 0; i < c->n; i++) {
			if (strcmp(c->set[i], "none") == 0 ? !in->object :
			    strcmp(c->set[i], "any") == 0 ? !!in->object :
			    in->object && fnmatch(c->set[i], in->object, 0) == 0)
				return true;
		}
		return false;
	case COND_FIELD:
		if (!in->field)
			return false;
		for (size_t i = 0; i < c->n; i++)
			if (rules_field_match(c->set[i], in->field))
				return true;
		return false;
	case COND_OFFSET:
		return in->offset >= 0 && in->offset >= c->lo && in->offset <= c->hi;
	case COND_IP:
		return set_match(c, in->ip);
	case COND_CALLER:
		return set_match(c, caller_of(rule, in));
	case COND_CHAIN:
		return chain_any(c, in);
	case COND_STACK:
		return set_match(c, in->ip) || chain_any(c, in);
	case COND_NOCHAIN:
		return !chain_any(c, in);
	case COND_HASCHAIN:
		return in->has_chain == c->yes;
	case COND_AS:
		/* only an address nothing else typed, and only when its offset
		 * in the line is the field's */
		return !in->object && in->fits && rule->as_struct &&
		       in->fits(in->fits_ctx, rule->as_struct, rule->as_field);
	case COND_REGION:
		return set_match(c, in->region);
	}
	return false;
}

bool rule_matches(const struct rule *rule, const struct rule_input *in)
{
	for (size_t i = 0; i < rule->n_conds; i++)
		if (!cond_match(rule, &rule->conds[i], in))
			return false;
	return true;
}

const struct rule *rules_match(const struct rules *r, const struct rule_input *in,
			       char *ret_path, size_t size)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *rule = &r->v[i];

		if (rule->anchor || !rule_matches(rule, in))
			continue;
		if (strcmp(rule->target, "other") == 0 && in->object)
			snprintf(ret_path, size, "other:%s", in->object);
		else if (strcmp(rule->target, "other") == 0)
			snprintf(ret_path, size, "unresolved");
		else
			snprintf(ret_path, size, "%s", rule->target);
		return rule;
	}
	snprintf(ret_path, size, "unresolved");
	return NULL;
}

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

int rules_load_system(struct rules *r)
{
	const char *path = SYSCONFDIR "/mmhitm/rules.conf";
	int ret;

	ret = rules_load_defaults(r);
	if (ret < 0)
		return log_error_errno(ret, "The built-in rules do not parse: this build is broken");
	if (access(path, F_OK) != 0)
		return 0;
	return rules_load_file(r, path);
}
