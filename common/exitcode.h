/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_EXITCODE_H
#define MMHITM_EXITCODE_H

#include <errno.h>
#include <stdlib.h>

/*
 * The exit statuses of mmhitm, mmhitmd and mmhitm-load; their man pages
 * list them. Beyond usage and the two gates, the values are sysexits.h's,
 * as mmhitmd's configuration error (78, EX_CONFIG) already was.
 */
#define EXIT_USAGE	2	/* a usage error, said with the option */
#define EXIT_UNHEALTHY	3	/* mmhitm status --check: not recording well */
#define EXIT_GATE	4	/* mmhitm report --fail-on: a path changed so */
#define EXIT_DATAERR	65	/* not an mmhitm database, a schema it cannot read, or damaged */
#define EXIT_NOINPUT	66	/* the database is missing, a directory, or not readable */
#define EXIT_IOERR	74	/* a write failed: stdout, an output file, the disk */
#define EXIT_CONFIG	78	/* mmhitm.conf or an option's value is wrong */

/* The exit status of a failure a program reports as -errno. */
static inline int exit_status(int r)
{
	switch (-r) {
	case ENOENT: case EISDIR: case ENOTDIR: case ENODATA:
		return EXIT_NOINPUT;
	case EMEDIUMTYPE: case EPROTONOSUPPORT: case EROFS: case EUCLEAN:
		return EXIT_DATAERR;
	case EIO: case ENOSPC: case EPIPE: case EFBIG: case EDQUOT:
		return EXIT_IOERR;
	default:
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
	}
}

/* ... of a failure to open the program's input (its database), where a
 * permission refused is the input's too; elsewhere (a credentials file,
 * a cluster's password) it is not. */
static inline int exit_status_input(int r)
{
	return r == -EACCES || r == -EPERM ? EXIT_NOINPUT : exit_status(r);
}

#endif
