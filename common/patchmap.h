/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_PATCHMAP_H
#define MMHITM_PATCHMAP_H

/*
 * The patch map: which kernels carry which of the P1..P4 changes, so a
 * report can say what a rollout changed. Rules come from a file (format in
 * reports/patches.conf, the shipped default) and match a kernel by release
 * or version glob, by build-id, or by a marker symbol the patch adds to
 * kallsyms (the daemon stores those per boot in ksyms).
 */

#include <stdbool.h>
#include <stddef.h>

#include "paths.h"

enum patch_state {
	PATCH_UNKNOWN = 0,	/* no rule matched */
	PATCH_LACKS,
	PATCH_CARRIES,
};

/* What is known of one kernel. Strings may be NULL. */
struct kernel_desc {
	const char *release;		/* uname -r */
	const char *version;		/* uname -v */
	const char *build_id;		/* hex */
	const char *const *ksyms;	/* marker symbols present */
	size_t nr_ksyms;
};

struct patch_verdict {
	enum patch_state state;
	/* "ksym maybe_lru_add_drain (patches.conf:21)": the deciding rule;
	 * NULL when unknown. Valid while the map lives. */
	const char *why;
};

struct patch_map;

/* Caller frees with patch_map_free(). NULL on allocation failure. */
struct patch_map *patch_map_new(void);
void patch_map_free(struct patch_map *m);

/*
 * Adds the rules in text (len bytes, need not be NUL-terminated); origin
 * names it in messages and in verdicts. A malformed line is logged with its
 * number and fails the whole text with -EINVAL (a report built on a
 * half-read map would be quietly wrong). -ENOMEM.
 */
int patch_map_parse(struct patch_map *m, const char *text, size_t len, const char *origin);
/* Reads and parses a file; -errno if it cannot be read. */
int patch_map_load(struct patch_map *m, const char *path);
/* The built-in rules, used when no map file exists (same as reports/patches.conf). */
int patch_map_load_default(struct patch_map *m);
extern const char patch_map_default_text[];

size_t patch_map_nr_rules(const struct patch_map *m);
/* The marker symbols ksym rules look for, to query per boot. */
size_t patch_map_nr_ksyms(const struct patch_map *m);
const char *patch_map_ksym(const struct patch_map *m, size_t i);

/* Per path P1..P4, the state set by the last matching rule. */
void patch_map_resolve(const struct patch_map *m, const struct kernel_desc *k,
		       struct patch_verdict ret[MAX_PATHS]);

const char *patch_state_to_string(enum patch_state s);

#endif
