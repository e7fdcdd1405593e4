/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_RULES_H
#define MMHITM_RULES_H

/*
 * Attribution rules as data (engine/rules.conf documents the format):
 * "rule" lines map a typed sample (object type, field, offset in the
 * object, IP symbol, callchain symbols) to P1..P4, other:<object> or
 * unresolved, first match wins; "anchor" lines say which sample contexts
 * prove that an address is a given field of an object the daemon cannot
 * learn directly (lruvec.lru_lock, lruvec.nonresident_age).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rules;
struct rule;

/* What the rules see of one sampled (address, IP, callchain). */
struct rule_input {
	const char *object;		/* "mm_struct", "page", "lruvec"; NULL: unresolved */
	const char *field;		/* resolved field ("lru_gen.bitmap", "lists[4]"); NULL: none */
	int64_t offset;			/* byte offset in the object; < 0: unknown */
	const char *ip;			/* the IP's symbol; NULL: not in the boot's ksyms */
	const char *const *chain;	/* callchain symbols, innermost first; NULL entries: unknown */
	size_t chain_n;
	bool has_chain;			/* a callchain was captured (it may still be empty) */
	const char *region;		/* where the address lies: "kernel", "static", "user" */
	/*
	 * For as=STRUCT.FIELD on an untyped address: whether the address's
	 * offset in its cache line is inside that field, for a struct the
	 * kernel allocates line-aligned (BTF offset modulo the line size).
	 * NULL: never.
	 */
	bool (*fits)(void *ctx, const char *st, const char *field);
	void *fits_ctx;
};

/* An empty rule set. NULL on ENOMEM. Caller frees with rules_free(). */
struct rules *rules_new(void);
void rules_free(struct rules *r);

enum {
	RULES_OVERRIDE = 1 << 0,	/* same name replaces, new names go first */
};

/*
 * Parses rules text; origin names it in messages ("rules.conf"). Without
 * RULES_OVERRIDE the rules are appended in order. With it, a rule named
 * like an existing one replaces it in place, new rules are tried before
 * every earlier one, and "disable NAME" drops a rule. Returns 0 or
 * -EINVAL (each bad line logged as origin:line: why).
 */
int rules_parse(struct rules *r, const char *text, const char *origin, unsigned int flags);
/* The shipped defaults (engine/rules.conf, compiled in). */
int rules_load_defaults(struct rules *r);
/* An override file (--rules FILE). */
int rules_load_file(struct rules *r, const char *path);
/*
 * The built-in defaults, then the host's overrides in
 * SYSCONFDIR/mmhitm/rules.conf when that file exists: what both the daemon
 * and `mmhitm analyze` attribute with, so they agree on the digest.
 */
int rules_load_system(struct rules *r);

size_t rules_count(const struct rules *r);
const struct rule *rules_get(const struct rules *r, size_t i);

/*
 * Hex FNV-1a 64 over the effective rules in canonical form and the
 * analyzer's resolution version: equal digests mean equal attribution.
 * Not cryptographic; it only detects change.
 */
const char *rules_digest(const struct rules *r);

/*
 * The first "rule" that matches; *ret_path gets its target with "other"
 * completed to "other:<object>" (or "unresolved" when the address is).
 * NULL when nothing matches (then the caller says "unresolved").
 */
const struct rule *rules_match(const struct rules *r, const struct rule_input *in,
			       char *ret_path, size_t size);

/* One rule's pieces. */
const char *rule_name(const struct rule *rule);
bool rule_is_anchor(const struct rule *rule);
const char *rule_origin(const struct rule *rule);	/* "rules.conf:12" */
/* Anchors: the struct and field the matching samples' addresses are in. */
const char *rule_anchor_struct(const struct rule *rule);
const char *rule_anchor_field(const struct rule *rule);
/* A rule's as=STRUCT.FIELD: the type it gives an untyped address it
 * matches (by the code path alone); false when it has none. */
bool rule_as(const struct rule *rule, const char **ret_struct, const char **ret_field);
/* Whether one anchor's conditions (IP, callchain) hold. */
bool rule_matches(const struct rule *rule, const struct rule_input *in);

/* fnmatch() against a field, also accepting a prefix that ends at a '.'
 * or '[' of the field: "lists" matches "lists[4]", "lru_gen" matches
 * "lru_gen.bitmap". Exposed for tests. */
bool rules_field_match(const char *pattern, const char *field);

#endif
