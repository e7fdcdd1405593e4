// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/*
 * Optimal string alignment distance: Levenshtein's insertions, deletions
 * and substitutions, and a swap of two neighbours as one edit ("tpo" is
 * one from "top", "--hmtl" one from "--html"). Three rows; names are short.
 */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), d;
	size_t *pprev = calloc(lb + 1, sizeof(*pprev)), *prev = calloc(lb + 1, sizeof(*prev));
	size_t *cur = calloc(lb + 1, sizeof(*cur));

	if (!pprev || !prev || !cur) {
		free(pprev);
		free(prev);
		free(cur);
		return (size_t)-1;
	}
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *t;

		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pprev[j - 2] + 1 < cur[j])
				cur[j] = pprev[j - 2] + 1;
		}
		t = pprev;
		pprev = prev;
		prev = cur;
		cur = t;
	}
	d = prev[lb];
	free(pprev);
	free(prev);
	free(cur);
	return d;
}

const char *cli_closest(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	for (size_t i = 0; i < n; i++) {
		size_t d = distance(s, names[i]), len = strlen(names[i]);
		size_t limit = len / 3 > 1 ? len / 3 : 1;

		/* a prefix of a longer name ("--lim") is closest to it too */
		if (strlen(s) >= 2 && strncmp(names[i], s, strlen(s)) == 0)
			d = 1;
		if (d <= limit && d < best_d) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}

static void unknown_long(const char *arg, const struct option *longopts, const char *prog)
{
	const char *names[256];
	char name[128];
	size_t n = 0;
	const char *hint;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	for (const struct option *o = longopts; o && o->name && n < 256; o++) {
		if (strcmp(o->name, name) == 0) {
			if (o->has_arg == required_argument)
				fprintf(stderr, "%s: option '--%s' needs a value\n", prog, name);
			else if (o->has_arg == no_argument)
				fprintf(stderr, "%s: option '--%s' takes no value\n", prog, name);
			return;
		}
		names[n++] = o->name;
	}
	/* getopt_long takes a unique prefix: several matched */
	for (const struct option *o = longopts; o && o->name; o++)
		if (*name && strncmp(o->name, name, strlen(name)) == 0 && strcmp(o->name, name) != 0) {
			bool many = false;

			for (const struct option *p = o + 1; p->name; p++)
				many |= strncmp(p->name, name, strlen(name)) == 0;
			if (many) {
				fprintf(stderr, "%s: option '--%s' is ambiguous; '%s --help' lists the options\n",
					prog, name, prog);
				return;
			}
		}
	hint = cli_closest(name, names, n);
	if (hint)
		fprintf(stderr, "%s: unknown option '--%s'; did you mean '--%s'?\n", prog, name, hint);
	else
		fprintf(stderr, "%s: unknown option '--%s'; '%s --help' lists the options\n", prog, name,
			prog);
}

int cli_getopt(int argc, char *const *argv, const char *shortopts, const struct option *longopts,
	       const char *prog)
{
	int prev = optind, c;

	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c != '?')
		return c;
	/* the word getopt stopped at: this one, or the one before */
	if (optind > prev && optind - 1 < argc && strncmp(argv[optind - 1], "--", 2) == 0 &&
	    argv[optind - 1][2]) {
		unknown_long(argv[optind - 1] + 2, longopts, prog);
	} else if (optopt && strchr(shortopts, optopt) && optopt != ':') {
		fprintf(stderr, "%s: option '-%c' needs a value\n", prog, optopt);
	} else if (optopt) {
		fprintf(stderr, "%s: unknown option '-%c'; '%s --help' lists the options\n", prog, optopt,
			prog);
	} else {
		fprintf(stderr, "%s: bad option '%s'; '%s --help' lists the options\n", prog,
			optind - 1 < argc ? argv[optind - 1] : "?", prog);
	}
	return c;
}

void cli_unknown_command(const char *prog, const char *name, const char *const *names, size_t n)
{
	const char *hint = cli_closest(name, names, n);

	if (hint)
		fprintf(stderr, "%s: Unknown command '%s'; did you mean '%s'?\n", prog, name, hint);
	else
		fprintf(stderr, "%s: Unknown command '%s'; '%s --help' lists them\n", prog, name, prog);
}
