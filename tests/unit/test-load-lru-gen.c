// SPDX-License-Identifier: GPL-2.0
/*
 * aging's view of the kernel: /sys/kernel/debug/lru_gen text, the memcg a
 * cgroup is charged to, and the aging command. The fixtures are printed
 * with the format strings of lru_gen_seq_show() (mm/vmscan.c, 6.1..6.12),
 * since this VM has no CONFIG_LRU_GEN to read a real one from.
 */
#include <errno.h>
#include <stdarg.h>

#include "lru-gen.h"
#include "test.h"
#include "util.h"

struct fixture {
	char buf[8192];
	size_t len;
};

static void fx_printf(struct fixture *fx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fx_printf(struct fixture *fx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fx->len += vsnprintf(fx->buf + fx->len, sizeof(fx->buf) - fx->len, fmt, ap);
	va_end(ap);
}

/* What lru_gen_seq_show() prints for one lruvec (non-full file). */
static void fx_lruvec(struct fixture *fx, int first_node, unsigned short id, const char *path,
		      int nid, unsigned long min_seq, unsigned long max_seq)
{
	if (nid == first_node)
		fx_printf(fx, "memcg %5hu %s\n", id, path);
	fx_printf(fx, " node %5d\n", nid);
	for (unsigned long seq = min_seq; seq <= max_seq; seq++) {
		fx_printf(fx, " %10lu %10u", seq, (unsigned int)(1000 * (max_seq - seq + 1)));
		fx_printf(fx, " %10lu%c", 100 + seq, ' ');	/* anon */
		fx_printf(fx, " %10lu%c", 10 + seq, ' ');	/* file */
		fx_printf(fx, "\n");
	}
}

static void test_parse_two_memcgs(void)
{
	struct fixture fx = {};
	struct lru_gen_state *st = NULL;
	const struct lru_gen_memcg *m;

	fx_lruvec(&fx, 0, 1, "/", 0, 5, 8);
	fx_lruvec(&fx, 0, 1, "/", 1, 2, 4);
	fx_lruvec(&fx, 0, 7, "/system.slice/with space.service", 0, 0, 3);
	fx_lruvec(&fx, 0, 7, "/system.slice/with space.service", 1, 0, 3);

	CHECK_INT(lru_gen_state_parse(fx.buf, &st), ==, 0);
	if (!st)
		return;
	CHECK_INT(st->nr_memcgs, ==, 2);
	m = lru_gen_state_find_id(st, 1);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->path, "/");
		CHECK_INT(m->nr_nodes, ==, 2);
		CHECK_INT(m->nodes[0].nid, ==, 0);
		CHECK_INT(m->nodes[0].min_seq, ==, 5);
		CHECK_INT(m->nodes[0].max_seq, ==, 8);
		CHECK_INT(m->nodes[0].nr_gens, ==, 4);
		CHECK_INT(m->nodes[0].anon_pages, ==, 105 + 106 + 107 + 108);
		CHECK_INT(m->nodes[0].file_pages, ==, 15 + 16 + 17 + 18);
		CHECK_INT(m->nodes[1].nid, ==, 1);
		CHECK_INT(m->nodes[1].max_seq, ==, 4);
	}
	m = lru_gen_state_find_id(st, 7);
	CHECK(m != NULL);
	if (m) {
		CHECK_STR(m->path, "/system.slice/with space.service");
		CHECK_INT(m->nr_nodes, ==, 2);
		CHECK_INT(m->nodes[1].max_seq, ==, 3);
	}
	CHECK(lru_gen_state_find_id(st, 2) == NULL);
	lru_gen_state_free(st);
}

static void test_find_memcg(void)
{
	struct fixture fx = {};
	struct lru_gen_state *st = NULL;
	const struct lru_gen_memcg *m;

	fx_lruvec(&fx, 0, 1, "/", 0, 0, 3);
	fx_lruvec(&fx, 0, 3, "/process_api", 0, 0, 3);
	fx_lruvec(&fx, 0, 9, "/user.slice/user-0.slice", 0, 0, 3);
	CHECK_INT(lru_gen_state_parse(fx.buf, &st), ==, 0);
	if (!st)
		return;

	m = lru_gen_state_find_path(st, "/user.slice/user-0.slice");
	CHECK(m && m->id == 9);
	/* No memory controller below /process_api: charged to it. */
	m = lru_gen_state_find_path(st, "/process_api/70bc7810ca8d0fbb38e0a9a0fddedb7f");
	CHECK(m && m->id == 3);
	m = lru_gen_state_find_path(st, "/user.slice/user-1.slice/session-3.scope");
	CHECK(m && m->id == 1);
	m = lru_gen_state_find_path(st, "/");
	CHECK(m && m->id == 1);
	/* A prefix of a name is not its parent. */
	m = lru_gen_state_find_path(st, "/process_api_other");
	CHECK(m && m->id == 1);
	lru_gen_state_free(st);

	/* Only a cgroup path that has no root listed finds nothing. */
	st = NULL;
	fx = (struct fixture){};
	fx_lruvec(&fx, 0, 3, "/a", 0, 0, 3);
	CHECK_INT(lru_gen_state_parse(fx.buf, &st), ==, 0);
	if (st)
		CHECK(lru_gen_state_find_path(st, "/b/c") == NULL);
	lru_gen_state_free(st);
}

static void test_memcg_disabled(void)
{
	struct fixture fx = {};
	struct lru_gen_state *st = NULL;
	const struct lru_gen_memcg *m;

	/* cgroup_disable=memory: memcg is NULL, id 0, path "". */
	fx_lruvec(&fx, 0, 0, "", 0, 0, 3);
	CHECK_INT(lru_gen_state_parse(fx.buf, &st), ==, 0);
	if (!st)
		return;
	CHECK_INT(st->nr_memcgs, ==, 1);
	CHECK_STR(st->memcgs[0].path, "");
	m = lru_gen_state_find_path(st, "/whatever/cgroup");
	CHECK(m && m->id == 0);
	lru_gen_state_free(st);
}

static void test_parse_malformed(void)
{
	static const char *const bad[] = {
		/* a generation before any node */
		"memcg     1 /\n          0       1000        100         10 \n",
		/* a node before any memcg */
		" node     0\n",
		/* generations out of order */
		"memcg     1 /\n node     0\n          3       1000  1  1 \n          5  1  1  1 \n",
		/* too few columns */
		"memcg     1 /\n node     0\n          3       1000 \n",
		/* not numbers */
		"memcg     1 /\n node     0\n          3       1000        1x          1 \n",
		"memcg   abc /\n",
		"memcg 70000 /\n",
	};
	struct lru_gen_state *st = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = lru_gen_state_parse(bad[i], &st);

		if (r != -EINVAL)
			fprintf(stderr, "fixture %zu parsed: %d\n", i, r);
		CHECK_INT(r, ==, -EINVAL);
	}

	CHECK_INT(lru_gen_state_parse("", &st), ==, 0);
	if (st)
		CHECK_INT(st->nr_memcgs, ==, 0);
	lru_gen_state_free(st);
}

static void test_cgroup_memory_path(void)
{
	char *p = NULL;

	/* cgroup v1 with a memory hierarchy (this VM), and the v2 line too. */
	CHECK_INT(cgroup_memory_path("9:name=systemd:/\n8:pids:/\n"
				     "4:memory:/process_api/70bc\n2:cpuacct:/\n0::/\n", &p), ==, 0);
	CHECK_STR(p, "/process_api/70bc");
	free(p);

	CHECK_INT(cgroup_memory_path("0::/user.slice/user-0.slice/session-1.scope\n", &p), ==, 0);
	CHECK_STR(p, "/user.slice/user-0.slice/session-1.scope");
	free(p);

	/* memory co-mounted with others; no trailing newline. */
	CHECK_INT(cgroup_memory_path("3:cpu,memory,pids:/a b", &p), ==, 0);
	CHECK_STR(p, "/a b");
	free(p);

	/* "memory" only as a whole controller name. */
	CHECK_INT(cgroup_memory_path("5:net_cls,memory_x:/c\n0::/d\n", &p), ==, 0);
	CHECK_STR(p, "/d");
	free(p);

	/* Mounted nowhere (an initramfs: the file is empty): the root memcg. */
	CHECK_INT(cgroup_memory_path("1:name=systemd:/e\n", &p), ==, 0);
	CHECK_STR(p, "/");
	free(p);
	CHECK_INT(cgroup_memory_path("", &p), ==, 0);
	CHECK_STR(p, "/");
	free(p);
}

static void test_aging_command(void)
{
	char buf[64], tiny[8];

	CHECK_INT(lru_gen_aging_command(buf, sizeof(buf), 7, 1, 42), ==, (int)strlen("+ 7 1 42 1 1\n"));
	CHECK_STR(buf, "+ 7 1 42 1 1\n");
	CHECK_INT(lru_gen_aging_command(buf, sizeof(buf), 65535, 0, UINT64_MAX), >, 0);
	CHECK_STR(buf, "+ 65535 0 18446744073709551615 1 1\n");
	CHECK_INT(lru_gen_aging_command(tiny, sizeof(tiny), 7, 1, 42), ==, -ENOBUFS);
}

int main(void)
{
	RUN(test_parse_two_memcgs);
	RUN(test_find_memcg);
	RUN(test_memcg_disabled);
	RUN(test_parse_malformed);
	RUN(test_cgroup_memory_path);
	RUN(test_aging_command);
	return test_exit();
}
