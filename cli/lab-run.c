// SPDX-License-Identifier: GPL-2.0
/* `mmhitm lab run`: see lab-run.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "lab-run.h"
#include "log.h"
#include "util.h"

#define LAB_MAX_CONFIGS 64
#define FLUSH_WAIT_NS (30 * NSEC_PER_SEC)	/* a TCG guest's daemon is slow */

struct lab_config_row {
	int config;
	char args[512];
};

struct lab_state {
	sqlite3 *db;
	const struct lab_run_opts *o;
	int64_t lab_id;
	char reproducer[32];
	int runs, boots;
	struct lab_config_row configs[LAB_MAX_CONFIGS];
	size_t nconfigs;
	struct lab_boot_id boot;
	pid_t daemon;		/* 0: no flushes */
	size_t done, todo;	/* runs of this boot */
};

static volatile sig_atomic_t interrupted;
static volatile pid_t child;

static void on_signal(int sig)
{
	interrupted = sig;
	if (child > 0)
		kill(child, SIGINT);
}

int lab_this_boot(struct lab_boot_id *ret)
{
	struct utsname u;
	int r;

	r = read_line("/proc/sys/kernel/random/boot_id", ret->uuid, sizeof(ret->uuid));
	if (r < 0)
		return log_error_errno(r, "Failed to read /proc/sys/kernel/random/boot_id: %m");
	if (uname(&u) < 0)
		return log_error_errno(errno, "uname() failed: %m");
	snprintf(ret->release, sizeof(ret->release), "%s", u.release);
	snprintf(ret->version, sizeof(ret->version), "%s", u.version);
	return 0;
}

static int read_lab(struct lab_state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r, n = 0;

	r = db_prepare(s->db, &st, "SELECT lab_id, reproducer, runs, boots, name FROM labs "
				  "WHERE ?1 IS NULL OR name = ?1");
	if (r < 0)
		return log_error_errno(r, "Cannot read the labs: %s", db_error(r));
	sqlite3_bind_text(st, 1, s->o->name, -1, SQLITE_STATIC);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (n++)
			return log_error_errno(EINVAL, "%s holds several labs: name one (mmhitm lab status "
					       "lists them)", s->o->db_path);
		s->lab_id = sqlite3_column_int64(st, 0);
		snprintf(s->reproducer, sizeof(s->reproducer), "%s", sqlite3_column_text(st, 1));
		s->runs = sqlite3_column_int(st, 2);
		s->boots = sqlite3_column_int(st, 3);
	}
	if (r != SQLITE_DONE)
		return log_error_errno(db_step_failed(st, r), "Cannot read the labs: %s", db_error(-EIO));
	if (!n)
		return log_error_errno(ENOENT, "%s%s%s: no such lab in %s (mmhitm lab start makes one)",
				       s->o->name ? "'" : "", s->o->name ? s->o->name : "No lab",
				       s->o->name ? "'" : "", s->o->db_path);
	return 0;
}

static int read_configs(struct lab_state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(s->db, &st, "SELECT config, args FROM lab_configs WHERE lab_id = ?1 ORDER BY config");
	if (r < 0)
		return log_error_errno(r, "Cannot read the lab's configurations: %s", db_error(r));
	sqlite3_bind_int64(st, 1, s->lab_id);
	while ((r = sqlite3_step(st)) == SQLITE_ROW && s->nconfigs < LAB_MAX_CONFIGS) {
		struct lab_config_row *c = &s->configs[s->nconfigs++];

		c->config = sqlite3_column_int(st, 0);
		snprintf(c->args, sizeof(c->args), "%s", sqlite3_column_text(st, 1));
	}
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return log_error_errno(db_step_failed(st, r), "Cannot read the lab's configurations");
	return 0;
}

/* The side a kernel already has in the lab ("" if none) and its boots. */
static int kernel_in_lab(struct lab_state *s, char *side, size_t size, int *ret_boots)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	*side = 0;
	*ret_boots = 0;
	r = db_prepare(s->db, &st, "SELECT side, count(*) FROM lab_boots WHERE lab_id = ?1 AND "
				  "kernel_release = ?2 AND kernel_version = ?3 GROUP BY side");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, s->lab_id);
	sqlite3_bind_text(st, 2, s->boot.release, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->boot.version, -1, SQLITE_STATIC);
	if ((r = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(side, size, "%s", sqlite3_column_text(st, 0));
		*ret_boots = sqlite3_column_int(st, 1);
		return 0;
	}
	return r == SQLITE_DONE ? 0 : db_step_failed(st, r);
}

/* The release of the kernel on the other side, or "" when none yet. */
static int side_taken(struct lab_state *s, const char *side, char *release, size_t size)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	*release = 0;
	r = db_prepare(s->db, &st, "SELECT kernel_release FROM lab_boots WHERE lab_id = ?1 AND side = ?2");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, s->lab_id);
	sqlite3_bind_text(st, 2, side, -1, SQLITE_STATIC);
	if ((r = sqlite3_step(st)) == SQLITE_ROW)
		snprintf(release, size, "%s", sqlite3_column_text(st, 0));
	return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : db_step_failed(st, r);
}

/* The side of a kernel new to the lab: --side, else base first. */
static int new_kernel_side(struct lab_state *s, const char **ret)
{
	char base[128], patched[128];
	int r;

	r = side_taken(s, "base", base, sizeof(base));
	if (r >= 0)
		r = side_taken(s, "patched", patched, sizeof(patched));
	if (r < 0)
		return log_error_errno(r, "Cannot read the lab's boots: %s", db_error(r));
	if (*base && *patched)
		return log_error_errno(EEXIST, "The lab has its two kernels, %s (base) and %s (patched); "
				       "this boot runs %s", base, patched, s->boot.release);
	if (s->o->side) {
		if (*(strcmp(s->o->side, "base") == 0 ? base : patched))
			return log_error_errno(EEXIST, "The lab's %s kernel is %s already; this boot "
					       "runs %s", s->o->side, strcmp(s->o->side, "base") == 0 ?
					       base : patched, s->boot.release);
		*ret = s->o->side;
	} else {
		*ret = *base ? "patched" : "base";
	}
	return 0;
}

/* This boot's row in lab_boots: found, or made for a boot the lab needs. */
static int enter_boot(struct lab_state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	const char *side = NULL;
	char have[16];
	int r, n;

	r = db_prepare(s->db, &st, "SELECT side FROM lab_boots WHERE lab_id = ?1 AND boot_uuid = ?2");
	if (r < 0)
		return log_error_errno(r, "Cannot read the lab's boots: %s", db_error(r));
	sqlite3_bind_int64(st, 1, s->lab_id);
	sqlite3_bind_text(st, 2, s->boot.uuid, -1, SQLITE_STATIC);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		return 0;
	if (r != SQLITE_DONE)
		return log_error_errno(db_step_failed(st, r), "Cannot read the lab's boots");
	r = kernel_in_lab(s, have, sizeof(have), &n);
	if (r < 0)
		return log_error_errno(r, "Cannot read the lab's boots: %s", db_error(r));
	if (*have && n >= s->boots)
		return log_error_errno(EALREADY, "Kernel %s has had its %d boot%s in the lab: boot the "
				       "other kernel", s->boot.release, s->boots, s->boots == 1 ? "" : "s");
	if (*have)
		side = strcmp(have, "base") == 0 ? "base" : "patched";
	else if ((r = new_kernel_side(s, &side)) < 0)
		return r;
	db_finalize(st);
	st = NULL;
	r = db_prepare(s->db, &st, "INSERT INTO lab_boots (lab_id, boot_uuid, kernel_release, "
				  "kernel_version, side, seq, started_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
	if (r < 0)
		return log_error_errno(r, "Cannot write the lab's boot: %s", db_error(r));
	sqlite3_bind_int64(st, 1, s->lab_id);
	sqlite3_bind_text(st, 2, s->boot.uuid, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, s->boot.release, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, s->boot.version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, side, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 6, n + 1);
	sqlite3_bind_int64(st, 7, now_ns(CLOCK_REALTIME));
	r = db_step_done(s->db, st);
	if (r < 0)
		return log_error_errno(r, "Cannot write the lab's boot: %s", db_error(r));
	log_info("Boot %d of %d of kernel %s, the %s side", n + 1, s->boots, s->boot.release, side);
	return 0;
}

/* --- mmhitmd's interval edges ------------------------------------------------ */

static int64_t last_interval_end(struct lab_state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int64_t end = 0;

	if (db_prepare(s->db, &st, "SELECT max(i.end_ns) FROM intervals i JOIN boots b USING (boot_id) "
				   "WHERE b.boot_uuid = ?1") < 0)
		return -1;
	sqlite3_bind_text(st, 1, s->boot.uuid, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		end = sqlite3_column_int64(st, 0);
	return end;
}

static void find_daemon(struct lab_state *s)
{
	int r;

	if (s->o->no_flush)
		return;
	r = db_daemon_pid(s->o->db_path, &s->daemon);
	if (r == -ESRCH)
		log_warning("No mmhitmd records into %s: the runs get no HITM or work beside them",
			    s->o->db_path);
	else if (r < 0)
		log_warning("%s.lock names no PID: the runs' edges are not cut into mmhitmd's intervals",
			    s->o->db_path);
}

/*
 * Asks mmhitmd to write its partial interval now (SIGUSR2) and waits for
 * the row, so that an edge of a run is an edge of an interval.
 */
static void cut_interval(struct lab_state *s)
{
	int64_t asked = now_ns(CLOCK_REALTIME), deadline = now_ns(CLOCK_MONOTONIC) + FLUSH_WAIT_NS;

	if (!s->daemon)
		return;
	if (kill(s->daemon, SIGUSR2) < 0) {
		log_warning_errno(errno, "Cannot signal mmhitmd (PID %d): %m; the runs' edges are not "
				  "cut into its intervals", (int)s->daemon);
		s->daemon = 0;
		return;
	}
	while (now_ns(CLOCK_MONOTONIC) < deadline && !interrupted) {
		if (last_interval_end(s) >= asked)
			return;
		usleep(20 * 1000);
	}
	if (!interrupted)
		log_warning("mmhitmd (PID %d) wrote no interval within %lld s of SIGUSR2: the runs' "
			    "edges are no longer cut", (int)s->daemon, FLUSH_WAIT_NS / NSEC_PER_SEC);
	s->daemon = 0;
}

/* --- one run ------------------------------------------------------------------ */

struct run_result {
	int64_t start_ns, end_ns;
	double value;
	bool ok, interrupted;
	char metric[64], unit[32], error[256];
	bool higher_is_better;
};

/* The string or number after "key": in mmhitm-load's one-line JSON. */
static const char *json_at(const char *json, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	return p ? p + strlen(pat) : NULL;
}

static void json_string(const char *json, const char *key, char *buf, size_t size)
{
	const char *p = json_at(json, key);
	size_t n = 0;

	*buf = 0;
	if (!p || *p++ != '"')
		return;
	while (p[n] && p[n] != '"' && n + 1 < size)
		n++;
	memcpy(buf, p, n);
	buf[n] = 0;
}

static void parse_result(const char *out, const char *err, int status, struct run_result *res)
{
	const char *v = json_at(out, "value"), *intr = json_at(out, "interrupted");
	const char *hib = json_at(out, "higher_is_better");
	char *end;

	res->interrupted = intr && strncmp(intr, "true", 4) == 0;
	json_string(out, "metric", res->metric, sizeof(res->metric));
	json_string(out, "unit", res->unit, sizeof(res->unit));
	res->higher_is_better = hib && strncmp(hib, "true", 4) == 0;
	res->value = v ? strtod(v, &end) : 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		const char *last = err, *nl;

		/* the reproducer's last line says why */
		while ((nl = strchr(last, '\n')) && nl[1])
			last = nl + 1;
		snprintf(res->error, sizeof(res->error), "mmhitm-load %s: %.*s",
			 WIFEXITED(status) ? "failed" : "was killed", (int)strcspn(last, "\n"), last);
	} else if (res->interrupted) {
		snprintf(res->error, sizeof(res->error), "interrupted");
	} else if (!v || end == v) {
		snprintf(res->error, sizeof(res->error), "mmhitm-load printed no value");
	} else {
		res->ok = true;
	}
}

/* The contents of a memfd, NUL-terminated; "" when it cannot be read. */
static char *memfd_text(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = malloc(n > 0 ? (size_t)n + 1 : 1);

	if (!buf)
		return NULL;
	if (n <= 0 || pread(fd, buf, (size_t)n, 0) != n)
		n = 0;
	buf[n] = 0;
	return buf;
}

static void exec_load(const char *load, const char *reproducer, const char *args, int out, int err)
{
	char *argv[64], *copy = strdup(args), *save = NULL;
	int n = 0;

	/* the child's own copies: execvp() takes char *const[] */
	argv[n++] = strdup(load);
	argv[n++] = strdup(reproducer);
	for (char *w = strtok_r(copy, " ", &save); w && n < 61; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n++] = strdup("--json");
	argv[n] = NULL;
	dup2(out, STDOUT_FILENO);
	dup2(err, STDERR_FILENO);
	execvp(load, argv);
	fprintf(stderr, "cannot run %s: %s\n", load, strerror(errno));
	_exit(127);
}

static int run_load(struct lab_state *s, const char *load, const char *args, struct run_result *res)
{
	_cleanup_close_ int out = memfd_create("lab-out", MFD_CLOEXEC);
	_cleanup_close_ int err = memfd_create("lab-err", MFD_CLOEXEC);
	_cleanup_free_ char *o = NULL, *e = NULL;
	int status = 0;
	pid_t pid;

	if (out < 0 || err < 0)
		return log_error_errno(errno, "memfd_create() failed: %m");
	if (interrupted) {	/* while the interval was cut: start nothing */
		res->interrupted = true;
		return 0;
	}
	res->start_ns = now_ns(CLOCK_REALTIME);
	pid = fork();
	if (pid < 0)
		return log_error_errno(errno, "fork() failed: %m");
	if (pid == 0)
		exec_load(load, s->reproducer, args, out, err);
	child = pid;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	child = 0;
	res->end_ns = now_ns(CLOCK_REALTIME);
	o = memfd_text(out);
	e = memfd_text(err);
	if (!o || !e)
		return log_oom();
	parse_result(o, e, status, res);
	return 0;
}

static int store_run(struct lab_state *s, int config, int run, const struct run_result *res)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(s->db, &st, "INSERT OR REPLACE INTO lab_runs (lab_id, boot_uuid, config, run, "
				  "start_ns, end_ns, value, metric, unit, higher_is_better, error) "
				  "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, s->lab_id);
	sqlite3_bind_text(st, 2, s->boot.uuid, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, config);
	sqlite3_bind_int(st, 4, run);
	sqlite3_bind_int64(st, 5, res->start_ns);
	sqlite3_bind_int64(st, 6, res->end_ns);
	if (res->ok)
		sqlite3_bind_double(st, 7, res->value);
	sqlite3_bind_text(st, 8, res->metric[0] ? res->metric : NULL, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, res->unit[0] ? res->unit : NULL, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 10, res->higher_is_better);
	if (!res->ok)
		sqlite3_bind_text(st, 11, res->error, -1, SQLITE_STATIC);
	return db_step_done(s->db, st);
}

static int run_done(struct lab_state *s, int config, int run)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;

	if (db_prepare(s->db, &st, "SELECT 1 FROM lab_runs WHERE lab_id = ?1 AND boot_uuid = ?2 AND "
				   "config = ?3 AND run = ?4 AND value IS NOT NULL") < 0)
		return -EIO;
	sqlite3_bind_int64(st, 1, s->lab_id);
	sqlite3_bind_text(st, 2, s->boot.uuid, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 3, config);
	sqlite3_bind_int(st, 4, run);
	return sqlite3_step(st) == SQLITE_ROW;
}

static const char *load_program(const struct lab_run_opts *o, char *buf, size_t size)
{
	char self[PATH_MAX - 16];
	ssize_t n;

	if (o->load)
		return o->load;
	if (getenv("MMHITM_LOAD"))
		return getenv("MMHITM_LOAD");
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(buf, size, "%s/mmhitm-load", self);
			if (access(buf, X_OK) == 0)
				return buf;
		}
	}
	return "mmhitm-load";
}

/* One run of one configuration, between two interval edges, kept at once. */
static int one_run(struct lab_state *s, const char *load, const struct lab_config_row *c, int run)
{
	struct run_result res = {};
	int r;

	cut_interval(s);
	r = run_load(s, load, c->args, &res);
	if (r < 0)
		return r;
	cut_interval(s);
	if (interrupted || res.interrupted)
		return log_error_errno(EINTR, "Interrupted: run %d of %s %s not kept; `mmhitm lab run` "
				       "goes on from there", run, s->reproducer, c->args);
	r = store_run(s, c->config, run, &res);
	if (r < 0)
		return log_error_errno(r, "Cannot keep the run: %s", db_error(r));
	s->done++;
	if (!res.ok)
		return log_error_errno(ECHILD, "Run %d of %s %s: %s", run, s->reproducer, c->args, res.error);
	log_info("[%zu/%zu] %s %s, run %d: %.6g %s", s->done, s->todo, s->reproducer, c->args, run,
		 res.value, res.unit);
	return 0;
}

static int count_todo(struct lab_state *s)
{
	for (int run = 1; run <= s->runs; run++)
		for (size_t i = 0; i < s->nconfigs; i++) {
			int d = run_done(s, s->configs[i].config, run);

			if (d < 0)
				return log_error_errno(d, "Cannot read the lab's runs");
			s->todo += !d;
		}
	return 0;
}

static int finish_boot(struct lab_state *s)
{
	_cleanup_finalize_ sqlite3_stmt *st = NULL;
	int r;

	r = db_prepare(s->db, &st, "UPDATE lab_boots SET done_ns = ?3 WHERE lab_id = ?1 AND "
				  "boot_uuid = ?2 AND done_ns IS NULL");
	if (r >= 0) {
		sqlite3_bind_int64(st, 1, s->lab_id);
		sqlite3_bind_text(st, 2, s->boot.uuid, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, now_ns(CLOCK_REALTIME));
		r = db_step_done(s->db, st);
	}
	if (r < 0)
		return log_error_errno(r, "Cannot mark the boot done: %s", db_error(r));
	return 0;
}

static int run_all(struct lab_state *s)
{
	char buf[PATH_MAX];
	const char *load = load_program(s->o, buf, sizeof(buf));
	int r;

	for (int run = 1; run <= s->runs; run++)
		for (size_t i = 0; i < s->nconfigs; i++) {
			r = run_done(s, s->configs[i].config, run);
			if (r < 0)
				return log_error_errno(r, "Cannot read the lab's runs");
			if (r)
				continue;
			r = one_run(s, load, &s->configs[i], run);
			if (r < 0)
				return r;
		}
	return 0;
}

int lab_run(sqlite3 *db, const struct lab_run_opts *o)
{
	struct lab_state s = { .db = db, .o = o };
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	int r;

	r = lab_this_boot(&s.boot);
	if (r >= 0)
		r = read_lab(&s);
	if (r >= 0)
		r = read_configs(&s);
	if (r >= 0)
		r = enter_boot(&s);
	if (r >= 0)
		r = count_todo(&s);
	if (r < 0)
		return r;
	if (!s.todo) {
		log_info("Nothing left to run on this boot (%s)", s.boot.release);
		return finish_boot(&s);
	}
	find_daemon(&s);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	r = run_all(&s);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (r < 0)
		return r;
	return finish_boot(&s);
}
