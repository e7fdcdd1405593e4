// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <tracefs.h>
#include <unistd.h>

#include "db.h"
#include "flight.h"
#include "learn-source.h"
#include "log.h"
#include "tracedat.h"
#include "util.h"

/* A storm asks for one snapshot at most this often (ns): a storm that
 * lasts an hour must not fill the directory with copies of itself. */
#define STORM_MIN_GAP_NS	(600 * NSEC_PER_SEC)
/* A writer still running after this long is killed (ns). */
#define WRITER_TIMEOUT_NS	(120 * NSEC_PER_SEC)
/* Room a snapshot needs besides its ring: /proc/kallsyms in the file
 * (5 MiB on a 6.18 kernel), the formats and saved_cmdlines, and slack
 * (bytes). */
#define SNAPSHOT_OVERHEAD	(16 << 20)
/* File names: "flight-<UTC time>-<trigger>.dat". */
#define SNAPSHOT_PREFIX		"flight-"
#define SNAPSHOT_SUFFIX		".dat"

struct flight_event {
	const char *system, *name;
	char filter[512];
};

struct flight {
	/* Arming may come from the disarming thread (schedule.c), which ends
	 * the ring after the learning streams; the rest of the ring's state
	 * (instance, armed, child) changes under this lock too. */
	pthread_mutex_t lock;
	struct flight_config cfg;
	char name[96];			/* the instance */
	char *dir;
	struct tracefs_instance *inst;
	struct flight_event ev[16];
	int n_ev;
	bool armed;
	int64_t since_ns;		/* wall: the ring holds events from here on */
	int64_t last_storm_ns;		/* monotonic */
	bool storm_logged;
	/* the snapshot in progress */
	pid_t child;
	int64_t child_start;		/* monotonic */
	char trigger[32];
	char path[4096], tmp[4200], log[4200];
	int64_t snap_start_ns, snap_end_ns, snap_offset_ns;
};

static int instance_open(struct flight *f)
{
	char buf[32];

	/* A stale one (a killed daemon) goes first. */
	if (tracefs_instance_exists(f->name)) {
		struct tracefs_instance *old = tracefs_instance_alloc(NULL, f->name);

		if (old) {
			tracefs_instance_destroy(old);
			tracefs_instance_free(old);
		}
	}
	f->inst = tracefs_instance_create(f->name);
	if (!f->inst)
		return log_warning_errno(errno, "Failed to create tracefs instance %s: %m", f->name);
	/* CLOCK_BOOTTIME, as the streams: convertible to wall time. */
	if (tracefs_instance_file_write(f->inst, "trace_clock", "boot") < 0 ||
	    tracefs_option_enable(f->inst, TRACEFS_OPTION_OVERWRITE) < 0)
		return log_warning_errno(errno, "Failed to set up tracefs instance %s: %m", f->name);
	snprintf(buf, sizeof(buf), "%" PRIu64, f->cfg.buffer_size_kb);
	if (tracefs_instance_file_write(f->inst, "buffer_size_kb", buf) < 0)
		log_warning_errno(errno, "Failed to set buffer_size_kb=%s on %s: %m, ignoring", buf,
				  f->name);
	for (int i = 0; i < f->n_ev; i++)
		if (f->ev[i].filter[0] &&
		    tracefs_event_file_write(f->inst, f->ev[i].system, f->ev[i].name, "filter",
					     f->ev[i].filter) < 0)
			return log_warning_errno(errno, "Failed to set the filter of %s:%s in %s: %m",
						 f->ev[i].system, f->ev[i].name, f->name);
	f->armed = false;
	f->since_ns = 0;
	return 0;
}

static void instance_close(struct flight *f)
{
	if (!f->inst)
		return;
	if (tracefs_instance_destroy(f->inst) < 0 && tracefs_instance_exists(f->name))
		log_warning_errno(errno, "Failed to remove tracefs instance %s: %m, ignoring", f->name);
	tracefs_instance_free(f->inst);
	f->inst = NULL;
}

/*
 * What writers that died with their daemon left in dir: a partial file no
 * writer holds (a live one keeps its lock), and its log.
 */
static void remove_leftovers(const struct flight *f)
{
	static const char tmp_suffix[] = SNAPSHOT_SUFFIX ".tmp";
	struct dirent *de;
	DIR *d = opendir(f->dir);
	char p[4400];

	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int fd;

		if (!startswith(de->d_name, SNAPSHOT_PREFIX) || n < sizeof(tmp_suffix) ||
		    strcmp(de->d_name + n - (sizeof(tmp_suffix) - 1), tmp_suffix))
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, de->d_name);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (fd >= 0)
				close(fd);
			continue;	/* another daemon's writer at work */
		}
		log_info("Removing %s, a snapshot its daemon did not finish", p);
		unlink(p);
		memcpy(p + strlen(p) - 4, ".log", 4);
		unlink(p);
		close(fd);
	}
	if (d)
		closedir(d);
}

struct flight *flight_new(const struct flight_config *fc, const struct stream_config *sc)
{
	const struct learn_filter_config lfc = { .page_pair_shift = sc->page_pair_shift,
						 .mm_object_size = sc->mm_object_size,
						 .ksyms = sc->ksyms };
	struct tep_handle *tep = NULL;
	struct flight *f;

	f = calloc(1, sizeof(*f));
	if (!f) {
		log_oom();
		return NULL;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->cfg = *fc;
	if (fc->dir && *fc->dir) {
		f->dir = strdup(fc->dir);
	} else {
		/* beside the database: a test's temporary one keeps its own */
		const char *slash = fc->db_path ? strrchr(fc->db_path, '/') : NULL;

		if (asprintf(&f->dir, "%.*s/snapshots", slash ? (int)(slash - fc->db_path) : 1,
			     slash ? fc->db_path : ".") < 0)
			f->dir = NULL;
	}
	if (!f->dir) {
		log_oom();
		goto fail;
	}
	f->cfg.dir = f->dir;
	snprintf(f->name, sizeof(f->name), "%s-flight", fc->instance);

	tep = learn_formats_load();
	if (!tep) {
		log_warning_errno(errno, "Failed to read tracepoint formats for the flight recorder: %m");
		goto fail;
	}
	/* The stream's learning events (not its sched_switch samples). */
	for (size_t i = 0; i < learn_n_source_defs && f->n_ev < (int)ARRAY_SIZE(f->ev); i++) {
		const struct learn_source_def *d = &learn_source_defs[i];
		struct flight_event *e = &f->ev[f->n_ev];
		struct tep_event *te;
		char why[160];
		bool wanted;

		switch (d->type) {
		case LEARN_MM_ALLOC: case LEARN_MM_FREE: case LEARN_FORK: case LEARN_EXEC:
		case LEARN_MMAP_LOCK:	wanted = sc->learn_mm; break;
		case LEARN_PAGE:	wanted = sc->learn_pages; break;
		case LEARN_LOCK:	wanted = sc->learn_locks; break;
		default:		wanted = false; break;
		}
		te = wanted ? tep_find_event_by_name(tep, d->system, d->name) : NULL;
		if (!te || learn_source_filter(&lfc, d, te, e->filter, sizeof(e->filter), why,
					       sizeof(why)) < 0)
			continue;
		e->system = d->system;
		e->name = d->name;
		f->n_ev++;
	}
	tep_free(tep);
	tep = NULL;
	if (!f->n_ev) {
		log_warning("No learning events for the flight recorder on this kernel");
		goto fail;
	}
	if (instance_open(f) < 0)
		goto fail;
	remove_leftovers(f);
	log_info("Flight recorder: %d events in tracefs instance %s (%" PRIu64 " KiB per CPU), "
		 "snapshots in %s", f->n_ev, f->name, fc->buffer_size_kb, f->dir);
	return f;
fail:
	tep_free(tep);
	flight_free(f);
	return NULL;
}

static int arm_locked(struct flight *f, bool on)
{
	int r = 0;

	if (!f->inst || f->child || on == f->armed)
		return 0;
	/* before the first event can be recorded */
	if (on && !f->since_ns)
		f->since_ns = now_ns(CLOCK_REALTIME);
	for (int i = 0; i < f->n_ev; i++)
		if (tracefs_event_file_write(f->inst, f->ev[i].system, f->ev[i].name, "enable",
					     on ? "1" : "0") < 0 && r == 0)
			r = log_warning_errno(errno ?: EIO, "Failed to %s %s:%s in %s: %m, ignoring",
					      on ? "arm" : "disarm", f->ev[i].system, f->ev[i].name,
					      f->name);
	f->armed = on;
	return r;
}

int flight_arm(struct flight *f, bool on)
{
	int r;

	if (!f)
		return 0;
	pthread_mutex_lock(&f->lock);
	r = arm_locked(f, on);
	pthread_mutex_unlock(&f->lock);
	return r;
}

bool flight_busy(const struct flight *f)
{
	return f && f->child > 0;
}

static int mkdir_p(const char *path)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0750) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * The child: the ring and what reads it, as a trace.dat into f->tmp
 * (tracedat.c), with no other program; a failure is one line in f->log.
 */
static void run_writer(const struct flight *f)
{
	struct tracedat_event ev[ARRAY_SIZE(f->ev)];
	char what[256];
	int fd, out, r;

	/* A daemon killed (or stopped) mid-save takes its writer along. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(1);
	fd = open(f->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
	if (fd >= 0)
		dup2(fd, STDERR_FILENO);
	for (int i = 0; i < f->n_ev; i++)
		ev[i] = (struct tracedat_event){ f->ev[i].system, f->ev[i].name };
	out = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	/* held while it writes: remove_leftovers() knows a live writer's file */
	if (out < 0 || flock(out, LOCK_EX) < 0) {
		fprintf(stderr, "cannot create %s: %m\n", f->tmp);
		_exit(1);
	}
	r = tracedat_write(out, f->inst, ev, (size_t)f->n_ev, what, sizeof(what));
	if (r == 0 && fdatasync(out) < 0)
		r = -errno, snprintf(what, sizeof(what), "writing");
	if (r < 0) {
		fprintf(stderr, "%s%s%s\n", what, *what ? ": " : "", strerror(-r));
		_exit(1);
	}
	_exit(close(out) < 0 ? 1 : 0);
}

/*
 * Lock storms come in bursts: a storm snapshot soon after the last one
 * would hold the same storm again. True when this one is refused.
 */
static bool storm_too_soon(struct flight *f, int64_t mono)
{
	if (f->last_storm_ns && mono - f->last_storm_ns < STORM_MIN_GAP_NS) {
		if (!f->storm_logged)
			log_info("Lock contention storm: the last storm snapshot is recent, "
				 "not taking another");
		f->storm_logged = true;
		return true;
	}
	f->last_storm_ns = mono;
	f->storm_logged = false;
	return false;
}

/* Where its file cannot fit, the writer is not even started. */
static int snapshot_fits(const struct flight *f, const char *trigger)
{
	struct statvfs vfs;
	uint64_t need = f->cfg.buffer_size_kb * 1024 * (uint64_t)sysconf(_SC_NPROCESSORS_CONF) +
			SNAPSHOT_OVERHEAD;

	if (statvfs(f->dir, &vfs) < 0)
		return log_warning_errno(errno, "Snapshot (%s) not taken: %s: %m, ignoring",
					 trigger, f->dir);
	if ((uint64_t)vfs.f_bavail * vfs.f_frsize < need)
		return log_warning_errno(ENOSPC, "Snapshot (%s) not taken: %" PRIu64 " KiB free "
					 "in %s, a snapshot may need %" PRIu64 " KiB, ignoring",
					 trigger, (uint64_t)vfs.f_bavail * vfs.f_frsize / 1024,
					 f->dir, need / 1024);
	return 0;
}

/* The snapshot's file and its companions, named after its time and trigger. */
static int snapshot_paths(struct flight *f, int64_t wall, const char *trigger)
{
	char stamp[32];
	struct tm tm;
	time_t s = wall / NSEC_PER_SEC;

	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&s, &tm));
	if (snprintf(f->path, sizeof(f->path), "%s/" SNAPSHOT_PREFIX "%s-%03d-%s" SNAPSHOT_SUFFIX,
		     f->dir, stamp, (int)(wall / NSEC_PER_MSEC % 1000), trigger) >= (int)sizeof(f->path))
		return log_warning_errno(ENAMETOOLONG, "Snapshot (%s) not taken: %s is too long a "
					 "directory name, ignoring", trigger, f->dir);
	snprintf(f->tmp, sizeof(f->tmp), "%s.tmp", f->path);
	snprintf(f->log, sizeof(f->log), "%s.log", f->path);
	return 0;
}

/* The writer in a child, which flight_poll() waits for. */
static int start_writer(struct flight *f, const char *trigger, int64_t mono)
{
	fflush(NULL);
	f->child = fork();
	if (f->child < 0) {
		f->child = 0;
		return log_warning_errno(errno, "Snapshot (%s) not taken: fork: %m, ignoring", trigger);
	}
	if (f->child == 0)
		run_writer(f);
	f->child_start = mono;
	log_info("Snapshot (%s): saving the flight recorder to %s", trigger, f->path);
	return 0;
}

static int request_locked(struct flight *f, const char *trigger)
{
	int64_t wall, mono;
	int r;

	if (f->child)
		return log_notice_errno(EBUSY, "Snapshot (%s) not taken: one is being written", trigger);
	mono = now_ns(CLOCK_MONOTONIC);
	if (!strcmp(trigger, "lock-storm") && storm_too_soon(f, mono))
		return -EAGAIN;
	if (!f->inst)
		return log_warning_errno(ENOENT, "Snapshot (%s) not taken: no flight recorder instance",
					 trigger);
	/* What the ring holds stays as it is while it is saved. */
	arm_locked(f, false);
	wall = now_ns(CLOCK_REALTIME);
	f->snap_end_ns = wall;
	f->snap_start_ns = f->since_ns ?: wall;
	f->snap_offset_ns = wall - now_ns(CLOCK_BOOTTIME);
	snprintf(f->trigger, sizeof(f->trigger), "%s", trigger);

	r = mkdir_p(f->dir);
	if (r < 0)
		return log_warning_errno(r, "Snapshot (%s) not taken: failed to create %s: %m, ignoring",
					 trigger, f->dir);
	r = snapshot_fits(f, trigger);
	if (r >= 0)
		r = snapshot_paths(f, wall, trigger);
	if (r < 0)
		return r;
	return start_writer(f, trigger, mono);
}

int flight_request(struct flight *f, const char *trigger)
{
	int r;

	if (!f)
		return -ENOENT;
	pthread_mutex_lock(&f->lock);
	r = request_locked(f, trigger);
	pthread_mutex_unlock(&f->lock);
	return r;
}

struct snap_file {
	char name[256];
	int64_t mtime_ns;
	uint64_t bytes;
};

static int cmp_snap(const void *a, const void *b)
{
	const struct snap_file *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Keeps the directory within max_count files and max_bytes, removing the
 * oldest snapshots first (the newest too if it alone is over the size).
 * Removed paths are marked in the database.
 */
static void trim_dir(struct flight *f, sqlite3 *db, int64_t now)
{
	struct snap_file *v = NULL;
	size_t n = 0, alloc = 0, first = 0;
	uint64_t total = 0;
	struct dirent *de;
	DIR *dir;

	dir = opendir(f->dir);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char p[4400];
		struct stat st;

		if (!startswith(de->d_name, SNAPSHOT_PREFIX) || len < sizeof(SNAPSHOT_SUFFIX) ||
		    strcmp(de->d_name + len - strlen(SNAPSHOT_SUFFIX), SNAPSHOT_SUFFIX) != 0 ||
		    len >= sizeof(v->name))
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, de->d_name);
		if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (grow_array((void **)&v, &alloc, sizeof(*v), n + 1) < 0)
			break;
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].mtime_ns = (int64_t)st.st_mtim.tv_sec * NSEC_PER_SEC + st.st_mtim.tv_nsec;
		v[n].bytes = (uint64_t)st.st_size;
		total += v[n].bytes;
		n++;
	}
	closedir(dir);
	qsort(v, n, sizeof(*v), cmp_snap);
	while (first < n && (n - first > f->cfg.max_count ||
			     (f->cfg.max_bytes && total > f->cfg.max_bytes))) {
		_cleanup_finalize_ sqlite3_stmt *st = NULL;
		char p[4400];

		snprintf(p, sizeof(p), "%s/%s", f->dir, v[first].name);
		if (unlink(p) < 0 && errno != ENOENT) {
			log_warning_errno(errno, "Failed to remove old snapshot %s: %m, ignoring", p);
			break;
		}
		log_info("Removed snapshot %s (snapshot_max_count %" PRIu64 ", snapshot_max_size "
			 "%" PRIu64 ")", p, f->cfg.max_count, f->cfg.max_bytes);
		total -= v[first].bytes;
		first++;
		if (db && db_prepare(db, &st, "UPDATE snapshots SET removed_ns = ?1"
					      " WHERE path = ?2 AND removed_ns IS NULL") == 0) {
			sqlite3_bind_int64(st, 1, now);
			sqlite3_bind_text(st, 2, p, -1, SQLITE_STATIC);
			if (db_step_done(db, st) < 0)
				log_warning("Failed to mark snapshot %s removed, ignoring", p);
		}
	}
	free(v);
}

static int store(struct flight *f, sqlite3 *db, int64_t boot_id, uint64_t bytes)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	if (!db)
		return -ENOENT;
	r = db_prepare(db, &st, "INSERT INTO snapshots (boot_id, trigger, start_ns, end_ns,"
			     " trace_offset_ns, path, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, boot_id);
	sqlite3_bind_text(st, 2, f->trigger, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, f->snap_start_ns);
	sqlite3_bind_int64(st, 4, f->snap_end_ns);
	sqlite3_bind_int64(st, 5, f->snap_offset_ns);
	sqlite3_bind_text(st, 6, f->path, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, (int64_t)bytes);
	return db_step_done(db, st);
}

/*
 * The first line the writer wrote that is not blank and, with needle,
 * holds it, for the failure message; false: none.
 */
static bool log_line(const char *path, const char *needle, char *buf, size_t len)
{
	FILE *fp = fopen(path, "re");
	bool found = false;

	buf[0] = '\0';
	if (!fp)
		return false;
	while (!found && fgets(buf, (int)len, fp))
		found = strstrip(buf)[0] && (!needle || strstr(buf, needle));
	if (!found)
		buf[0] = '\0';
	fclose(fp);
	return found;
}

int flight_poll(struct flight *f, sqlite3 *db, int64_t boot_id, bool armed, bool wait)
{
	struct stat st;
	char msg[256];
	int status, r = 1;
	pid_t p;

	if (!f || !f->child)
		return 0;
	p = waitpid(f->child, &status, wait ? 0 : WNOHANG);
	if (p == 0) {
		if (now_ns(CLOCK_MONOTONIC) - f->child_start < WRITER_TIMEOUT_NS)
			return 0;
		log_warning("Snapshot (%s): its writer still runs after %" PRId64 " s, killing it",
			    f->trigger, (int64_t)(WRITER_TIMEOUT_NS / NSEC_PER_SEC));
		kill(f->child, SIGKILL);
		p = waitpid(f->child, &status, 0);
	}
	if (p < 0 && errno == EINTR)
		return 0;
	pthread_mutex_lock(&f->lock);
	f->child = 0;
	log_line(f->log, NULL, msg, sizeof(msg));
	if (p < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(f->tmp, &st) < 0 ||
	    st.st_size == 0) {
		log_warning("Snapshot (%s) failed: %s%s%s, ignoring", f->trigger,
			    p < 0 ? "its writer could not be waited for" :
			    WIFSIGNALED(status) ? "its writer was killed" :
			    WIFEXITED(status) && WEXITSTATUS(status) != 0 ? "the trace.dat was not written" :
			    "the writer wrote nothing", msg[0] ? ": " : "", msg);
		unlink(f->tmp);
		r = 0;
	} else if (rename(f->tmp, f->path) < 0) {
		log_warning_errno(errno, "Snapshot (%s): failed to rename %s: %m, ignoring", f->trigger,
				  f->tmp);
		unlink(f->tmp);
		r = 0;
	}
	unlink(f->log);
	/* A fresh ring for the next snapshot, also where a failed writer
	 * left part of this one. */
	instance_close(f);
	if (instance_open(f) < 0)
		instance_close(f);
	else if (armed)
		arm_locked(f, true);
	pthread_mutex_unlock(&f->lock);
	if (r == 0)
		return 0;
	log_notice("Snapshot (%s) saved: %s (%lld bytes)", f->trigger, f->path, (long long)st.st_size);
	r = store(f, db, boot_id, (uint64_t)st.st_size);
	if (r < 0)
		log_warning_errno(r, "Failed to list snapshot %s in the database, ignoring", f->path);
	trim_dir(f, db, now_ns(CLOCK_REALTIME));
	return r < 0 ? r : 1;
}

void flight_free(struct flight *f)
{
	if (!f)
		return;
	if (f->child) {
		kill(f->child, SIGKILL);
		waitpid(f->child, NULL, 0);
		unlink(f->tmp);
		unlink(f->log);
	}
	instance_close(f);
	pthread_mutex_destroy(&f->lock);
	free(f->dir);
	free(f);
}
