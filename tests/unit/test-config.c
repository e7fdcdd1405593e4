// SPDX-License-Identifier: GPL-2.0
/* Config parsing: every option type, errors naming their line, flags. */
#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "test.h"
#include "util.h"

static char cfgpath[64], logpath[64];

static void write_cfg(const char *text)
{
	FILE *f = fopen(cfgpath, "w");

	fputs(text, f);
	fclose(f);
}

/* Runs config_load with stderr captured; returns its result, *log gets the text. */
static int load_capture(struct config *c, char **log)
{
	int saved = dup(2), fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0600), r;

	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	r = config_load(c, cfgpath, true);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	*log = NULL;
	read_file(logpath, log);
	return r;
}

static void test_defaults(void)
{
	struct config c;

	config_init(&c);
	CHECK_STR(c.db_path, "/var/lib/mmhitm/mmhitm.db");
	CHECK_INT(c.interval_ns, ==, 60 * NSEC_PER_SEC);
	CHECK_INT(c.duration_ns, ==, 0);
	CHECK_STR(c.instance, "mmhitm");
	CHECK_INT(c.buffer_size_kb, ==, 1024);
	CHECK_INT(c.drain_ns, ==, NSEC_PER_SEC);
	CHECK(c.learn_mm && c.learn_pages && c.learn_locks);
	CHECK_INT(c.log_level, ==, LOG_INFO);
	CHECK_INT(config_verify(&c), ==, 0);
	config_done(&c);
}

static void test_set_values(void)
{
	struct config c;
	char err[256];

	config_init(&c);
	CHECK_INT(config_set(&c, "interval", "5m", err, sizeof(err)), ==, 0);
	CHECK_INT(c.interval_ns, ==, 300 * NSEC_PER_SEC);
	CHECK_INT(config_set(&c, "interval", "500ms", err, sizeof(err)), ==, -EINVAL);
	CHECK(strstr(err, "out of range") != NULL);
	CHECK_INT(config_set(&c, "interval", "soon", err, sizeof(err)), ==, -EINVAL);
	CHECK(strstr(err, "not a duration") != NULL);
	CHECK_INT(c.interval_ns, ==, 300 * NSEC_PER_SEC);	/* unchanged by errors */

	CHECK_INT(config_set(&c, "buffer_size_kb", "2M", err, sizeof(err)), ==, 0);
	CHECK_INT(c.buffer_size_kb, ==, 2048);
	CHECK_INT(config_set(&c, "buffer_size_kb", "4096", err, sizeof(err)), ==, 0);
	CHECK_INT(c.buffer_size_kb, ==, 4096);
	CHECK_INT(config_set(&c, "buffer_size_kb", "1", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "buffer_size_kb", "-5", err, sizeof(err)), ==, -EINVAL);

	CHECK_INT(config_set(&c, "learn_locks", "no", err, sizeof(err)), ==, 0);
	CHECK(!c.learn_locks);
	CHECK_INT(config_set(&c, "learn_locks", "maybe", err, sizeof(err)), ==, -EINVAL);

	CHECK_INT(config_set(&c, "log_level", "debug", err, sizeof(err)), ==, 0);
	CHECK_INT(c.log_level, ==, LOG_DEBUG);
	CHECK_INT(config_set(&c, "log_level", "loud", err, sizeof(err)), ==, -EINVAL);

	CHECK_INT(config_set(&c, "page_pair_shift", "21", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "page_pair_shift", "0", err, sizeof(err)), ==, 0);

	/* the daemon's memory bounds: defaults, and no "unbounded" value */
	CHECK_INT(c.max_locks, ==, 65536);
	CHECK_INT(c.max_held_records, ==, 131072);
	CHECK_INT(config_set(&c, "max_locks", "1000", err, sizeof(err)), ==, 0);
	CHECK_INT(c.max_locks, ==, 1000);
	CHECK_INT(config_set(&c, "max_locks", "0", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "max_held_records", "0", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "max_held_records", "100000000", err, sizeof(err)), ==, -EINVAL);

	CHECK_INT(config_set(&c, "db", "relative/x.db", err, sizeof(err)), ==, 0);
	CHECK_INT(config_set(&c, "db", "", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "metrics_file", "", err, sizeof(err)), ==, 0);
	CHECK_INT(config_set(&c, "max_db_size", "64M", err, sizeof(err)), ==, 0);
	CHECK_INT(c.max_db_size, ==, 64 << 20);
	CHECK_INT(config_set(&c, "max_db_size", "lots", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "retention_raw", "0", err, sizeof(err)), ==, 0);
	CHECK_INT(c.retention_raw_ns, ==, 0);

	CHECK_INT(config_set(&c, "nosuch", "1", err, sizeof(err)), ==, -ENOENT);
	CHECK(strstr(err, "unknown option") != NULL);
	config_done(&c);
}

/* The instance is removed at start if stale: the name must be ours. */
static void test_instance_names(void)
{
	struct config c;
	char err[256];

	config_init(&c);
	CHECK_INT(config_set(&c, "instance", "mmhitm-test-1", err, sizeof(err)), ==, 0);
	CHECK_INT(config_set(&c, "instance", "perf", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "instance", "mmhitm/../x", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "instance", "mmhitm x", err, sizeof(err)), ==, -EINVAL);
	CHECK_STR(c.instance, "mmhitm-test-1");
	config_done(&c);
}

static void test_events_list(void)
{
	struct config c;
	char err[256];

	config_init(&c);
	CHECK_INT(config_set(&c, "count_events", "kmem:mm_page_alloc, sched:*", err, sizeof(err)), ==, 0);
	CHECK_INT(config_set(&c, "count_events", "kmem", err, sizeof(err)), ==, -EINVAL);
	CHECK_INT(config_set(&c, "count_events", "kmem: x", err, sizeof(err)), ==, -EINVAL);
	config_done(&c);
}

static void test_file(void)
{
	struct config c;
	char *log = NULL;

	config_init(&c);
	write_cfg("# comment\n"
		  "\n"
		  "[mmhitmd]\n"
		  "interval = 30s\n"
		  "  db=/tmp/somewhere.db  \n"
		  "count_events = \"kmem:mm_page_alloc tlb:*\"\n"
		  "; another comment\n");
	CHECK_INT(load_capture(&c, &log), ==, 0);
	CHECK_INT(c.interval_ns, ==, 30 * NSEC_PER_SEC);
	CHECK_STR(c.db_path, "/tmp/somewhere.db");
	CHECK_STR(c.count_events, "kmem:mm_page_alloc tlb:*");
	free(log);
	config_done(&c);

	/* Every bad line is reported with its number; good lines still apply. */
	config_init(&c);
	write_cfg("interval = 30s\n"
		  "drain_interval = fast\n"
		  "no equals sign here\n"
		  "bogus_key = 1\n"
		  "duration = 10s\n"
		  "[other]\n"
		  "learn_mm = no\n");
	CHECK_INT(load_capture(&c, &log), ==, -EINVAL);
	CHECK(log && strstr(log, ":2: \"fast\" is not a duration"));
	CHECK(log && strstr(log, ":3: expected \"key = value\""));
	CHECK(log && strstr(log, ":4: unknown option \"bogus_key\""));
	CHECK(log && strstr(log, ":5: \"duration\" is a command-line option only"));
	CHECK(log && strstr(log, ":6: unknown section [other]"));
	CHECK(log && !strstr(log, ":1:") && !strstr(log, ":7:"));
	CHECK_INT(c.interval_ns, ==, 30 * NSEC_PER_SEC);
	CHECK(!c.learn_mm);
	free(log);
	config_done(&c);

	/* Cross-option check. */
	config_init(&c);
	write_cfg("interval = 2s\ndrain_interval = 5s\n");
	CHECK_INT(load_capture(&c, &log), ==, 0);
	CHECK_INT(config_verify(&c), ==, -EINVAL);
	free(log);
	config_done(&c);

	/* A missing file is fine unless it was asked for. */
	config_init(&c);
	unlink(cfgpath);
	CHECK_INT(config_load(&c, cfgpath, false), ==, 0);
	CHECK_INT(load_capture(&c, &log), ==, -ENOENT);
	free(log);
	config_done(&c);
}

/* What a file can hide: an escape sequence the error message would send
 * to the terminal, a NUL that cut the value short, a second value for a
 * key that silently won. Each is a bad line now, quoted safely. */
static void test_file_hostile(void)
{
	static const char text[] =
		"interval = 30s\n"
		"db = /tmp/a.db\0/etc/passwd\n"			/* 2: NUL */
		"instance = mmhitm\x1b]2;owned\x07\n"		/* 3: OSC title */
		"\x1b[2Jbogus = 1\n"					/* 4: in the key */
		"[\x1b[31mred]\n"					/* 5: in a section */
		"interval = 45s\n"					/* 6: twice */
		"learn_mm = no\n";
	struct config c;
	char *log = NULL, err[256];
	FILE *f = fopen(cfgpath, "w");

	fwrite(text, 1, sizeof(text) - 1, f);
	fclose(f);
	config_init(&c);
	CHECK_INT(load_capture(&c, &log), ==, -EINVAL);
	CHECK(log && strstr(log, ":2: a NUL byte in the line"));
	CHECK(log && strstr(log, ":3: control character 0x1b in the line"));
	CHECK(log && strstr(log, ":4: control character 0x1b in the line"));
	CHECK(log && strstr(log, ":5: control character 0x1b in the line"));
	CHECK(log && strstr(log, ":6: \"interval\" is already set on line 1"));
	CHECK(log && !strchr(log, '\x1b') && !strchr(log, '\x07'));
	CHECK(log && !strstr(log, ":1:") && !strstr(log, ":7:"));
	CHECK_INT(c.interval_ns, ==, 30 * NSEC_PER_SEC);
	CHECK_STR(c.db_path, "/var/lib/mmhitm/mmhitm.db");	/* not "/tmp/a.db" */
	CHECK_STR(c.instance, "mmhitm");
	CHECK(!c.learn_mm);
	free(log);

	/* the same from a flag */
	CHECK_INT(config_set(&c, "metrics_file", "/tmp/x\x1b[0m", err, sizeof(err)), ==, -EINVAL);
	CHECK_STR(err, "control character 0x1b in the value");
	CHECK_INT(config_set(&c, "\x1b[0m", "1", err, sizeof(err)), ==, -EINVAL);
	CHECK_STR(err, "control character 0x1b in the key");
	CHECK_INT(config_set(&c, "count_events", "a:b\tc:d", err, sizeof(err)), ==, 0);
	config_done(&c);
}

/* mmhitmd builds this table at start and on every SIGHUP: every name it
 * copies must go (LeakSanitizer in the ASan run: "db", "instance" and
 * the other keys without '_' leaked 38 bytes per reload). */
static void test_longopts(void)
{
	static const struct option fixed[] = { { "config", required_argument, NULL, 'c' } };

	for (int round = 0; round < 3; round++) {
		struct option *o = config_longopts_new(fixed, 1, 0x200);
		bool dash = false, under = false, db = false;

		CHECK(o != NULL);
		if (!o)
			return;
		CHECK_STR(o[0].name, "config");
		for (struct option *p = o + 1; p->name; p++) {
			CHECK(p->val >= 0x200);
			dash |= strcmp(p->name, "buffer-size-kb") == 0;
			under |= strcmp(p->name, "buffer_size_kb") == 0;
			db |= strcmp(p->name, "db") == 0;
		}
		CHECK(dash && under && db);
		config_longopts_free(o);
	}
	config_longopts_free(NULL);
}

static void test_dump_roundtrip(void)
{
	struct config a, b;
	char *log = NULL;
	FILE *f;

	config_init(&a);
	config_init(&b);
	CHECK_INT(config_set(&a, "interval", "90s", (char[64]){}, 64), ==, 0);
	CHECK_INT(config_set(&a, "learn_pages", "off", (char[64]){}, 64), ==, 0);
	f = fopen(cfgpath, "w");
	config_dump(&a, f);
	fclose(f);
	CHECK_INT(load_capture(&b, &log), ==, 0);
	CHECK_INT(b.interval_ns, ==, a.interval_ns);
	CHECK(!b.learn_pages);
	CHECK_STR(b.db_path, a.db_path);
	free(log);
	config_done(&a);
	config_done(&b);
}

static void test_util_parsers(void)
{
	int64_t ns;
	uint64_t u;
	bool b;

	CHECK(parse_duration_ns("60", &ns) == 0 && ns == 60 * NSEC_PER_SEC);
	CHECK(parse_duration_ns("1.5s", &ns) == 0 && ns == 1500 * NSEC_PER_MSEC);
	CHECK(parse_duration_ns("2h", &ns) == 0 && ns == 7200 * NSEC_PER_SEC);
	CHECK(parse_duration_ns("-1s", &ns) == -EINVAL);
	CHECK(parse_duration_ns("1 s", &ns) == -EINVAL);
	CHECK(parse_size("64K", &u) == 0 && u == 65536);
	CHECK(parse_size("1GiB", &u) == 0 && u == 1ULL << 30);
	CHECK(parse_size("1X", &u) == -EINVAL);
	CHECK(parse_size("99999999999999999999", &u) < 0);
	CHECK(parse_u64("0x10", &u) == 0 && u == 16);
	CHECK(parse_u64("-1", &u) == -EINVAL);
	CHECK(parse_bool("On", &b) == 0 && b);
	CHECK(parse_bool("2", &b) == -EINVAL);
}

int main(void)
{
	snprintf(cfgpath, sizeof(cfgpath), "/tmp/mmhitm-test-config-%d.conf", getpid());
	snprintf(logpath, sizeof(logpath), "/tmp/mmhitm-test-config-%d.log", getpid());
	RUN(test_defaults);
	RUN(test_set_values);
	RUN(test_instance_names);
	RUN(test_events_list);
	RUN(test_file);
	RUN(test_file_hostile);
	RUN(test_longopts);
	RUN(test_dump_roundtrip);
	RUN(test_util_parsers);
	unlink(cfgpath);
	unlink(logpath);
	return test_exit();
}
