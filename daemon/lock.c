// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lock.h"
#include "log.h"

struct daemon_locks {
	int db_fd;
	int instance_fd;
};

static int read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return atoi(buf);
}

/*
 * Opens and locks path exclusively, then writes our PID into it. The file
 * is never removed: unlinking a lock file races with the next daemon that
 * opened it before the unlink and locks an orphan.
 */
static int lock_take(const char *path, const char *what, int *ret_fd, int *ret_holder)
{
	char buf[32];
	int fd, n;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = errno == EWOULDBLOCK ? -EBUSY : -errno;

		*ret_holder = read_pid(fd);
		close(fd);
		return r;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		log_warning_errno(errno, "Failed to write our PID into %s (%s lock): %m, ignoring",
				  path, what);
	*ret_fd = fd;
	return 0;
}

static void lock_release(int fd)
{
	if (fd < 0)
		return;
	/* An empty file says nobody holds it, to a human reading it. */
	(void)!ftruncate(fd, 0);
	close(fd);
}

/* /run/mmhitm/<instance>.lock, or under $RUNTIME_DIRECTORY (systemd's
 * RuntimeDirectory=mmhitm) when /run can't be written here. */
static int instance_lock_path(const char *instance, char *buf, size_t len)
{
	const char *rt = getenv("RUNTIME_DIRECTORY");

	if (mkdir(LOCK_RUN_DIR, 0755) == 0 || errno == EEXIST) {
		if (access(LOCK_RUN_DIR, W_OK) == 0 || !rt || !*rt) {
			snprintf(buf, len, "%s/%s.lock", LOCK_RUN_DIR, instance);
			return 0;
		}
	} else if (!rt || !*rt) {
		return log_error_errno(errno, "Failed to create %s for the instance lock: %m",
				       LOCK_RUN_DIR);
	}
	/* RUNTIME_DIRECTORY may list several, separated by ':'. */
	snprintf(buf, len, "%.*s/%s.lock", (int)strcspn(rt, ":"), rt, instance);
	return 0;
}

int daemon_locks_acquire(const char *db_path, const char *instance, struct daemon_locks **ret)
{
	struct daemon_locks *l;
	char path[4200];
	int holder = 0, r;

	l = calloc(1, sizeof(*l));
	if (!l)
		return log_oom();
	l->db_fd = l->instance_fd = -1;

	snprintf(path, sizeof(path), "%s.lock", db_path);
	r = lock_take(path, "database", &l->db_fd, &holder);
	if (r == -EBUSY) {
		log_error("Another mmhitmd (PID %d) is recording into %s (it holds %s); refusing to start",
			  holder, db_path, path);
		goto fail;
	}
	if (r < 0) {
		log_error_errno(r, "Failed to lock %s: %m", path);
		goto fail;
	}

	r = instance_lock_path(instance, path, sizeof(path));
	if (r < 0)
		goto fail;
	r = lock_take(path, "instance", &l->instance_fd, &holder);
	if (r == -EBUSY) {
		log_error("Another mmhitmd (PID %d) owns the tracefs instance %s (it holds %s); "
			  "refusing to start", holder, instance, path);
		goto fail;
	}
	if (r < 0) {
		log_error_errno(r, "Failed to lock %s: %m", path);
		goto fail;
	}
	*ret = l;
	return 0;
fail:
	daemon_locks_free(l);
	return r;
}

void daemon_locks_free(struct daemon_locks *l)
{
	if (!l)
		return;
	lock_release(l->instance_fd);
	lock_release(l->db_fd);
	free(l);
}
