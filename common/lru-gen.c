// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/lru_gen, as lru_gen_seq_show() in mm/vmscan.c prints it
 * (the same from 6.1 to 6.12):
 *
 *	memcg %5hu %s			mem_cgroup_id() and cgroup path ("" without memcg)
 *	 node %5d
 *	 %10lu %10u %10lu  %10lu 	seq, age in ms, anon pages, file pages
 *
 * one generation line per seq from min_seq[anon] to max_seq. An aging pass
 * is the command "+ memcg_id node_id max_seq [can_swap [force_scan]]", and
 * only creates generation max_seq + 1 when max_seq is the current one
 * (a stale seq is silently ignored; a future one is -EINVAL).
 *
 * lru_gen_full adds tier and mm-walk lines; it is not parsed here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lru-gen.h"
#include "util.h"

void lru_gen_state_free(struct lru_gen_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->nr_memcgs; i++) {
		free(st->memcgs[i].path);
		free(st->memcgs[i].nodes);
	}
	free(st->memcgs);
	free(st);
}

/* Parses an unsigned decimal that ends at whitespace or the end: 0 or -EINVAL. */
static int parse_token_u64(const char **p, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	if (*s && *s != ' ' && *s != '\t' && *s != '\n')
		return -EINVAL;
	*p = s;
	*ret = v;
	return 0;
}

static int parse_memcg(struct lru_gen_state *st, size_t *alloc, const char *line)
{
	const char *p = line + strlen("memcg");
	struct lru_gen_memcg *m;
	uint64_t id;
	int r;

	r = parse_token_u64(&p, &id);
	if (r < 0 || id > UINT16_MAX)	/* printed with %hu */
		return -EINVAL;
	if (*p == ' ')
		p++;	/* the one space before the path, which may be empty */
	r = grow_array((void **)&st->memcgs, alloc, sizeof(*st->memcgs), st->nr_memcgs + 1);
	if (r < 0)
		return r;
	m = &st->memcgs[st->nr_memcgs];
	*m = (struct lru_gen_memcg){ .id = id };
	m->path = strndup(p, strcspn(p, "\n"));
	if (!m->path)
		return -ENOMEM;
	st->nr_memcgs++;
	return 0;
}

static int parse_node(struct lru_gen_memcg *m, size_t *alloc, const char *line)
{
	const char *p = strstr(line, "node") + strlen("node");
	struct lru_gen_node *n;
	uint64_t nid;
	int r;

	r = parse_token_u64(&p, &nid);
	if (r < 0 || nid > INT32_MAX)
		return -EINVAL;
	r = grow_array((void **)&m->nodes, alloc, sizeof(*m->nodes), m->nr_nodes + 1);
	if (r < 0)
		return r;
	n = &m->nodes[m->nr_nodes++];
	*n = (struct lru_gen_node){ .nid = nid };
	return 0;
}

static int parse_generation(struct lru_gen_node *n, const char *line)
{
	const char *p = line;
	uint64_t seq, age_ms, anon, file;

	if (parse_token_u64(&p, &seq) < 0 || parse_token_u64(&p, &age_ms) < 0 ||
	    parse_token_u64(&p, &anon) < 0 || parse_token_u64(&p, &file) < 0)
		return -EINVAL;
	if (n->nr_gens == 0)
		n->min_seq = seq;
	else if (seq != n->max_seq + 1)	/* the kernel prints them in order */
		return -EINVAL;
	n->max_seq = seq;
	n->nr_gens++;
	n->anon_pages += anon;
	n->file_pages += file;
	return 0;
}

int lru_gen_state_parse(const char *text, struct lru_gen_state **ret)
{
	struct lru_gen_state *st = calloc(1, sizeof(*st));
	size_t memcgs_alloc = 0, nodes_alloc = 0;
	struct lru_gen_memcg *m = NULL;
	struct lru_gen_node *n = NULL;
	int r = 0;

	if (!st)
		return -ENOMEM;
	for (const char *line = text; line && *line;) {
		const char *next = strchr(line, '\n');
		const char *s = line;

		while (*s == ' ')
			s++;
		if (startswith(line, "memcg ")) {
			r = parse_memcg(st, &memcgs_alloc, line);
			m = r < 0 ? NULL : &st->memcgs[st->nr_memcgs - 1];
			n = NULL;
			nodes_alloc = 0;
		} else if (startswith(s, "node ")) {
			if (!m) {
				r = -EINVAL;
				break;
			}
			r = parse_node(m, &nodes_alloc, line);
			n = r < 0 ? NULL : &m->nodes[m->nr_nodes - 1];
		} else if (*s && *s != '\n') {
			if (!n) {
				r = -EINVAL;
				break;
			}
			r = parse_generation(n, s);
		}
		if (r < 0)
			break;
		line = next ? next + 1 : NULL;
	}
	if (r < 0) {
		lru_gen_state_free(st);
		return r;
	}
	*ret = st;
	return 0;
}

const struct lru_gen_memcg *lru_gen_state_find_id(const struct lru_gen_state *st,
						  unsigned int id)
{
	for (size_t i = 0; i < st->nr_memcgs; i++)
		if (st->memcgs[i].id == id)
			return &st->memcgs[i];
	return NULL;
}

const struct lru_gen_memcg *lru_gen_state_find_path(const struct lru_gen_state *st,
						    const char *path)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return NULL;
	/* Without memcg there is one entry, id 0 and no path: everything is in it. */
	if (st->nr_memcgs == 1 && st->memcgs[0].id == 0 && !st->memcgs[0].path[0])
		return &st->memcgs[0];
	/*
	 * A cgroup without the memory controller enabled is charged to the
	 * nearest ancestor that has it: walk up.
	 */
	for (;;) {
		char *slash;

		for (size_t i = 0; i < st->nr_memcgs; i++)
			if (strcmp(st->memcgs[i].path, p) == 0)
				return &st->memcgs[i];
		slash = strrchr(p, '/');
		if (!slash || (slash == p && !p[1]))
			return NULL;
		if (slash == p)
			p[1] = '\0';	/* "/a" -> "/" */
		else
			*slash = '\0';
	}
}

int cgroup_memory_path(const char *proc_self_cgroup, char **ret_path)
{
	const char *v2 = NULL, *v1 = NULL;

	/* "hierarchy-id:controllers:path" lines; v1 "memory" wins over v2 "0::". */
	for (const char *line = proc_self_cgroup; line && *line;) {
		const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *eol = strchr(line, '\n');

		if (c2 && (!eol || c2 < eol)) {
			if (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0) {
				v2 = c2 + 1;
			} else {
				for (const char *t = c1 + 1; t < c2;) {
					size_t len = strcspn(t, ",:");

					if (len == strlen("memory") && strncmp(t, "memory", len) == 0)
						v1 = c2 + 1;
					t += len + (t[len] == ',');
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	/*
	 * Neither: the memory controller is on no mounted hierarchy (an
	 * initramfs mounts none, and then the file is empty), so every task
	 * is in the root memcg.
	 */
	if (!v1 && !v2)
		v2 = "/";
	*ret_path = strndup(v1 ? v1 : v2, strcspn(v1 ? v1 : v2, "\n"));
	return *ret_path ? 0 : -ENOMEM;
}

int lru_gen_aging_command(char *buf, size_t size, unsigned int memcg_id, int nid,
			  uint64_t max_seq)
{
	/*
	 * can_swap=1: tmpfs folios are swap-backed, on the anon LRU, and with
	 * no swap they would not be scanned. force_scan=1: walk every mm of
	 * the memcg, which is the walk P2 is about.
	 */
	int n = snprintf(buf, size, "+ %u %d %" PRIu64 " 1 1\n", memcg_id, nid, max_seq);

	return n < 0 || (size_t)n >= size ? -ENOBUFS : n;
}
