// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "util.h"

/* Writes and closes f; the first error wins. */
static int write_close(FILE *f, int (*write)(FILE *f, void *userdata), void *userdata)
{
	int r = write(f, userdata);

	if (fflush(f) != 0 && r >= 0)
		r = -errno;
	if (ferror(f) && r >= 0)
		r = -EIO;
	if (fclose(f) != 0 && r >= 0)
		r = -errno;
	return r;
}

static int write_in_place(const char *path, unsigned int flags,
			  int (*write)(FILE *f, void *userdata), void *userdata)
{
	int oflags = O_WRONLY | O_CLOEXEC | O_NOCTTY;
	FILE *f;
	int fd;

	if (flags & OUTPUT_NONBLOCK)
		oflags |= O_NONBLOCK;
	fd = open(path, oflags);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		int r = -errno;

		close(fd);
		return r;
	}
	return write_close(f, write, userdata);
}

static int write_replace(const char *path, int (*write)(FILE *f, void *userdata), void *userdata)
{
	_cleanup_free_ char *tmp = NULL;
	FILE *f;
	int fd, r;

	if (asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0)
		return -ENOMEM;
	/* A stale one of ours (a killed run with this PID) goes first; O_EXCL
	 * and O_NOFOLLOW: never write through something planted there. */
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlink(tmp);
		return r;
	}
	r = write_close(f, write, userdata);
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int output_write(const char *path, unsigned int flags, int (*write)(FILE *f, void *userdata),
		 void *userdata)
{
	_cleanup_free_ char *real = NULL;
	struct stat st, lst;
	int r;

	if (strcmp(path, "-") == 0) {
		r = write(stdout, userdata);
		if (fflush(stdout) != 0 && r >= 0)
			r = -errno;
		return r;
	}
	if (stat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		return write_replace(path, write, userdata);
	}
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return write_in_place(path, flags, write, userdata);
	/* A link to a regular file: replace the file it names, keep the link. */
	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		real = realpath(path, NULL);
		if (!real)
			return -errno;
		path = real;
	}
	return write_replace(path, write, userdata);
}
