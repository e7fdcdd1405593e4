/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_OUTPUT_H
#define MMHITM_OUTPUT_H

#include <stdio.h>

enum {
	/* a FIFO without a reader, or one that stops reading, fails with
	 * -ENXIO / -EAGAIN instead of blocking (the daemon's main loop) */
	OUTPUT_NONBLOCK	= 1 << 0,
};

/*
 * Writes a whole output file with write(f, userdata), which returns 0 or
 * -errno. "-" is stdout. A regular file (through a symlink too: the link
 * stays) or a path that does not exist yet is written to PATH.tmp.PID in
 * the same directory and renamed over it, so a reader never sees half of
 * it. Anything else that exists (/dev/null, a FIFO, a terminal) is opened
 * and written in place: renaming over it would replace a device node with
 * a regular file. Returns 0 or -errno; logs nothing, the caller decides.
 */
int output_write(const char *path, unsigned int flags, int (*write)(FILE *f, void *userdata),
		 void *userdata);

#endif
