/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_CLI_H
#define MMHITM_CLI_H

/*
 * Command-line errors a user can act on, the same in every program: an
 * unknown option or command names the closest known one, a missing value
 * names the option that wants it.
 */

#include <getopt.h>
#include <stddef.h>

/*
 * getopt_long() that prints its own errors: on '?' the message (with prog,
 * e.g. "mmhitm top", and a did-you-mean) is already on stderr.
 */
int cli_getopt(int argc, char *const *argv, const char *shortopts, const struct option *longopts,
	       const char *prog);

/* The name in names[0..n) closest to s by edit distance, if close enough
 * to be a typo of it (at most a third of its length, at least 1); else NULL. */
const char *cli_closest(const char *s, const char *const *names, size_t n);

/* "Unknown command 'x'; did you mean 'y'?" (or where the list is), on stderr. */
void cli_unknown_command(const char *prog, const char *name, const char *const *names, size_t n);

#endif
