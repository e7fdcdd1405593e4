// SPDX-License-Identifier: GPL-2.0
/*
 * output_write(): what kind of file the target is decides how it is
 * written. A regular or missing file is replaced whole through a temporary
 * file (a new inode, nothing left behind, unchanged on failure); a device
 * or FIFO is written in place and stays what it was (as root, renaming
 * over it would have replaced the node with a regular file); a symlink to
 * a regular file stays a symlink; "-" is stdout.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "output.h"
#include "test.h"
#include "util.h"

static char dir[64];

static int write_text(FILE *f, void *userdata)
{
	fputs(userdata, f);
	return 0;
}

static int write_fail(FILE *f, void *userdata)
{
	fputs("half a report", f);
	return -EIO;
}

static char *slurp(const char *path)
{
	static char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && strcmp(e->d_name, ".."));
	if (d)
		closedir(d);
	return n;
}

static void test_regular(void)
{
	char path[128];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/r.json", dir);
	CHECK_INT(output_write(path, 0, write_text, "one\n"), ==, 0);
	CHECK_STR(slurp(path), "one\n");
	CHECK_INT(stat(path, &a), ==, 0);
	CHECK_INT(output_write(path, 0, write_text, "two\n"), ==, 0);
	CHECK_STR(slurp(path), "two\n");
	CHECK_INT(stat(path, &b), ==, 0);
	CHECK(S_ISREG(b.st_mode));
	CHECK(a.st_ino != b.st_ino);		/* replaced, not rewritten */
	/* a failing writer leaves the old content and no temporary file */
	CHECK_INT(output_write(path, 0, write_fail, NULL), ==, -EIO);
	CHECK_STR(slurp(path), "two\n");
	CHECK_INT(entries(), ==, 1);
	CHECK_INT(output_write(dir, 0, write_text, "x"), ==, -EISDIR);
	unlink(path);
}

static void test_symlink_to_regular(void)
{
	char path[128], link[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/target.prom", dir);
	snprintf(link, sizeof(link), "%s/link.prom", dir);
	CHECK_INT(output_write(path, 0, write_text, "old\n"), ==, 0);
	CHECK_INT(symlink("target.prom", link), ==, 0);
	CHECK_INT(output_write(link, 0, write_text, "new\n"), ==, 0);
	CHECK_INT(lstat(link, &st), ==, 0);
	CHECK(S_ISLNK(st.st_mode));
	CHECK_STR(slurp(path), "new\n");
	CHECK_INT(entries(), ==, 2);
	unlink(link);
	unlink(path);
}

static void test_fifo(void)
{
	char path[128], got[64] = "";
	struct stat st;
	int pipefd[2];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_INT(mkfifo(path, 0600), ==, 0);
	/* the daemon's way: no reader, no wait */
	CHECK_INT(output_write(path, OUTPUT_NONBLOCK, write_text, "x"), ==, -ENXIO);

	CHECK_INT(pipe(pipefd), ==, 0);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, got, sizeof(got) - 1);

		(void)!write(pipefd[1], got, n > 0 ? (size_t)n : 0);
		_exit(0);
	}
	close(pipefd[1]);
	/* blocks until the child opens it: the report's way */
	CHECK_INT(output_write(path, 0, write_text, "through the fifo\n"), ==, 0);
	CHECK(read(pipefd[0], got, sizeof(got) - 1) > 0);
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	CHECK_STR(got, "through the fifo\n");
	CHECK_INT(lstat(path, &st), ==, 0);
	CHECK(S_ISFIFO(st.st_mode));
	CHECK_INT(entries(), ==, 1);		/* no temporary file beside it */
	unlink(path);
}

/* As root a rename over a device node succeeds: that is the bug. */
static void test_devices(void)
{
	char path[128];
	struct stat st;

	if (geteuid() != 0) {
		printf("note: not root: device nodes not tried\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/null", dir);
	CHECK_INT(mknod(path, S_IFCHR | 0666, makedev(1, 3)), ==, 0);
	CHECK_INT(output_write(path, 0, write_text, "gone\n"), ==, 0);
	CHECK_INT(lstat(path, &st), ==, 0);
	CHECK(S_ISCHR(st.st_mode));
	CHECK_INT(major(st.st_rdev), ==, 1);
	CHECK_INT(entries(), ==, 1);
	unlink(path);

	CHECK_INT(output_write("/dev/null", 0, write_text, "gone\n"), ==, 0);
	CHECK_INT(stat("/dev/null", &st), ==, 0);
	CHECK(S_ISCHR(st.st_mode));
}

static void test_stdout(void)
{
	char path[128];
	int saved, fd;

	snprintf(path, sizeof(path), "%s/stdout", dir);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(saved >= 0 && fd >= 0);
	dup2(fd, STDOUT_FILENO);
	close(fd);
	CHECK_INT(output_write("-", 0, write_text, "to stdout\n"), ==, 0);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	CHECK_STR(slurp(path), "to stdout\n");
	CHECK_INT(access("-", F_OK), ==, -1);	/* no file named "-" */
	unlink(path);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);
	snprintf(dir, sizeof(dir), "/tmp/mmhitm-test-output-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	RUN(test_regular);
	RUN(test_symlink_to_regular);
	RUN(test_fifo);
	RUN(test_devices);
	RUN(test_stdout);
	rmdir(dir);
	return test_exit();
}
