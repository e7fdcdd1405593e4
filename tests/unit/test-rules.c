// SPDX-License-Identifier: GPL-2.0
/*
 * The shipped rules (analyzer/rules.conf) decide DESIGN.md's table, the
 * look-alikes do not land in a path (context-switch HITM on mm_count is not
 * P1, ...), and the format's parser and overrides behave as documented.
 */
#include <errno.h>

#include "log.h"
#include "rules.h"
#include "test.h"
#include "util.h"

static struct rules *defaults(void)
{
	struct rules *r = rules_new();

	CHECK(r != NULL);
	CHECK_INT(rules_load_defaults(r), ==, 0);
	return r;
}

/* Attributes one sample; chain is a NULL-terminated list of frame symbols
 * (innermost first), or NULL for no callchain. */
static const char *attr(const struct rules *r, const char *object, const char *field,
			const char *ip, const char *const *chain)
{
	static char path[64];
	size_t n = 0;

	while (chain && chain[n])
		n++;
	struct rule_input in = {
		.object = object, .field = field, .offset = object ? 8 : -1, .ip = ip,
		.chain = chain, .chain_n = n, .has_chain = n > 0,
	};
	rules_match(r, &in, path, sizeof(path));
	return path;
}

#define CHAIN(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The qspinlock slow path taken by folio_batch_move_lru() under
 * lru_add_drain() from MADV_DONTNEED (zap_page_range_single). */
static const char *const drain_chain[] = {
	"_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave", "folio_batch_move_lru",
	"lru_add_drain_cpu", "lru_add_drain", "zap_page_range_single", "madvise_vma_behavior",
	"do_madvise", "__x64_sys_madvise", "do_syscall_64", NULL
};

static void test_p1(void)
{
	struct rules *r = defaults();

	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "__schedule", NULL), "P1");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "lru_gen_use_mm", NULL), "P1");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", NULL, CHAIN("schedule", "do_sched_yield")), "P1");
	/* the walker's side of the same line */
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "iterate_mm_list", NULL), "P1");
	/* negative: the same context switch on other mm_struct fields */
	CHECK_STR(attr(r, "mm_struct", "mm_count", "__schedule", NULL), "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "membarrier_state", "__schedule", NULL), "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "cpu_bitmap", "switch_mm_irqs_off", CHAIN("__schedule")),
		  "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.list.next", "__schedule", NULL), "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "mmap_lock.count", "down_read_trylock", NULL), "other:mm_struct");
	/* an untyped address stays unresolved whatever the IP */
	CHECK_STR(attr(r, NULL, NULL, "__schedule", NULL), "unresolved");
	rules_free(r);
}

static void test_p2(void)
{
	struct rules *r = defaults();

	CHECK_STR(attr(r, "page", "flags", "folio_update_gen", NULL), "P2");
	CHECK_STR(attr(r, "page", "flags", "walk_pte_range", CHAIN("walk_pmd_range", "walk_pud_range")), "P2");
	CHECK_STR(attr(r, "page", "flags", NULL, CHAIN("walk_pte_range")), "P2");
	CHECK_STR(attr(r, "page", "flags", "folio_set_lru_refs", NULL), "P2");
	/* negative: the walk touching another word of the page */
	CHECK_STR(attr(r, "page", "_refcount", "walk_pte_range", NULL), "other:page");
	CHECK_STR(attr(r, "page", "flags", "folio_inc_gen", NULL), "other:page");
	rules_free(r);
}

static void test_p3(void)
{
	struct rules *r = defaults();

	CHECK_STR(attr(r, "page", "flags", "folio_activate", NULL), "P3");
	CHECK_STR(attr(r, "page", "flags", "__lru_cache_activate_folio", CHAIN("folio_mark_accessed")), "P3");
	CHECK_STR(attr(r, "page", "flags", "folio_mark_accessed", CHAIN("filemap_read")), "P3");
	CHECK_STR(attr(r, "lruvec", "nonresident_age", "workingset_age_nonresident", NULL), "P3");
	CHECK_STR(attr(r, "lruvec", "nonresident_age", "workingset_age_nonresident",
		       CHAIN("workingset_activation", "folio_mark_accessed")), "P3");
	/* negative: the same counter aged by eviction or refault */
	CHECK_STR(attr(r, "lruvec", "nonresident_age", "workingset_age_nonresident",
		       CHAIN("workingset_eviction", "__remove_mapping", "shrink_folio_list")),
		  "other:lruvec");
	CHECK_STR(attr(r, "lruvec", "nonresident_age", "workingset_age_nonresident",
		       CHAIN("workingset_refault", "filemap_add_folio")), "other:lruvec");
	/* negative: another field of the same line from the same function */
	CHECK_STR(attr(r, "lruvec", "refaults[0]", "workingset_age_nonresident", NULL), "other:lruvec");
	CHECK_STR(attr(r, "page", "_refcount", "folio_mark_accessed", NULL), "other:page");
	rules_free(r);
}

static void test_p4(void)
{
	struct rules *r = defaults();

	CHECK_STR(attr(r, "lruvec", "lru_lock", "native_queued_spin_lock_slowpath", drain_chain), "P4");
	CHECK_STR(attr(r, "lruvec", "lru_lock", "_raw_spin_lock_irqsave", drain_chain + 1), "P4");
	CHECK_STR(attr(r, "lruvec", "lists[4]", "lru_add", drain_chain + 2), "P4");
	/* negative: the lock taken by folio_batch_move_lru() not under a drain */
	CHECK_STR(attr(r, "lruvec", "lru_lock", "native_queued_spin_lock_slowpath",
		       CHAIN("_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave",
			     "folio_batch_move_lru", "folio_add_lru", "shmem_get_folio_gfp")),
		  "other:lruvec");
	/* negative: no callchain, nothing to say whose lock acquisition it was */
	CHECK_STR(attr(r, "lruvec", "lru_lock", "native_queued_spin_lock_slowpath", NULL), "other:lruvec");
	/* negative: a drain's chain but a field the path does not bounce */
	CHECK_STR(attr(r, "lruvec", "flags", "folio_batch_move_lru", drain_chain + 3), "other:lruvec");
	/* negative: a drain that touches page flags is not the lock */
	CHECK_STR(attr(r, "page", "flags", "folio_batch_move_lru", drain_chain + 3), "other:page");
	rules_free(r);
}

static void test_unknown_symbols(void)
{
	struct rules *r = defaults();

	/* IPs outside the boot's ksyms match no glob, "*" included */
	CHECK_STR(attr(r, "page", "flags", NULL, CHAIN((const char *)NULL)), "other:page");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", NULL, NULL), "P1");
	CHECK_STR(attr(r, "lruvec", "lru_lock", NULL, drain_chain + 1), "P4");
	/* compiler clones match by the function's name */
	CHECK_STR(attr(r, "page", "flags", "folio_activate.constprop.0", NULL), "P3");
	CHECK_STR(attr(r, "mm_struct", "cpu_bitmap", "x", CHAIN("finish_task_switch.isra.0")),
		  "other:mm_struct");
	CHECK_STR(attr(r, "page", "flags", "folio_activate_x.isra.0", NULL), "other:page");
	rules_free(r);
}

static void test_field_match(void)
{
	CHECK(rules_field_match("lists", "lists[4]"));
	CHECK(rules_field_match("lru_gen", "lru_gen.bitmap"));
	CHECK(rules_field_match("lru_gen.bitmap", "lru_gen.bitmap"));
	CHECK(rules_field_match("lru_gen.*", "lru_gen.bitmap"));
	CHECK(!rules_field_match("lru", "lru_gen.bitmap"));
	CHECK(!rules_field_match("lru_gen.bitmap", "lru_gen"));
	CHECK(!rules_field_match("flags", "flags_1"));
	CHECK(rules_field_match("flags", "flags"));
}

static void test_anchors(void)
{
	struct rules *r = defaults();
	const struct rule *lock = NULL, *age = NULL;
	struct rule_input in = { .offset = -1 };

	for (size_t i = 0; i < rules_count(r); i++) {
		const struct rule *x = rules_get(r, i);

		if (!rule_is_anchor(x))
			continue;
		if (strcmp(rule_anchor_field(x), "lru_lock") == 0)
			lock = x;
		if (strcmp(rule_anchor_field(x), "nonresident_age") == 0)
			age = x;
	}
	CHECK(lock && age);
	if (!lock || !age)
		goto out;
	CHECK_STR(rule_anchor_struct(lock), "lruvec");
	/* the lock's taker is the first frame past the lock primitives */
	in.ip = "native_queued_spin_lock_slowpath";
	in.chain = drain_chain;
	in.chain_n = 10;
	CHECK(rule_matches(lock, &in));
	in.ip = "_raw_spin_lock_irqsave";
	in.chain = drain_chain + 1;
	in.chain_n = 9;
	CHECK(rule_matches(lock, &in));
	/* negative: a spinlock taken by free_unref_folios (zone->lock) under
	 * the same drain is not an lru_lock */
	in.ip = "native_queued_spin_lock_slowpath";
	in.chain = CHAIN("_raw_spin_lock_irqsave", "free_unref_folios", "folios_put_refs",
			 "folio_batch_move_lru", "lru_add_drain_cpu");
	in.chain_n = 5;
	CHECK(!rule_matches(lock, &in));
	/* negative: not a lock primitive at all */
	in.ip = "folio_batch_move_lru";
	in.chain = drain_chain + 3;
	in.chain_n = 7;
	CHECK(!rule_matches(lock, &in));
	in = (struct rule_input){ .ip = "workingset_age_nonresident", .offset = -1 };
	CHECK(rule_matches(age, &in));
	in.ip = "workingset_activation";
	CHECK(!rule_matches(age, &in));
out:
	rules_free(r);
}

static void test_overrides(void)
{
	struct rules *r = defaults();
	char d0[32];

	snprintf(d0, sizeof(d0), "%s", rules_digest(r));
	CHECK_INT(strlen(d0), ==, 16);
	/* same rules, same digest */
	{
		struct rules *r2 = defaults();

		CHECK_STR(rules_digest(r2), d0);
		rules_free(r2);
	}
	/* A rule named like a default replaces it where it stands: here the
	 * walker's reads of the bitmap become other:mm_struct. */
	CHECK_INT(rules_parse(r, "rule p1-bitmap-reader other object=mm_struct field=lru_gen.bitmap\n",
			      "t1", RULES_OVERRIDE), ==, 0);
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "iterate_mm_list", NULL), "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "__schedule", NULL), "P1");
	CHECK(strcmp(rules_digest(r), d0) != 0);
	/* A new name is tried before every default. */
	CHECK_INT(rules_parse(r, "# by offset, for a kernel that names the field differently\n"
			      "rule my-p1 P1 object=mm_struct offset=0x520-0x527 ip=__schedule\n",
			      "t2", RULES_OVERRIDE), ==, 0);
	CHECK_STR(rules_get(r, 0) ? rule_name(rules_get(r, 0)) : NULL, "my-p1");
	{
		struct rule_input in = { .object = "mm_struct", .field = "x", .offset = 0x524,
					 .ip = "__schedule" };
		char path[64];

		CHECK_STR(rule_name(rules_match(r, &in, path, sizeof(path))), "my-p1");
		CHECK_STR(path, "P1");
		in.offset = 0x528;
		CHECK_STR(rule_name(rules_match(r, &in, path, sizeof(path))), "mm-switch-other");
	}
	/* disable drops a rule: then nothing but the catch-all types it */
	CHECK_INT(rules_parse(r, "disable p4-drain-lock\n", "t3", RULES_OVERRIDE), ==, 0);
	CHECK_STR(attr(r, "lruvec", "lru_lock", "native_queued_spin_lock_slowpath", drain_chain),
		  "other:lruvec");
	CHECK_STR(attr(r, NULL, NULL, NULL, NULL), "unresolved");
	rules_free(r);
}

static void test_parse_errors(void)
{
	static const char *const bad[] = {
		"rule a P5 object=page\n",				/* no such path */
		"rule a P1 object=page bogus=1\n",			/* unknown condition */
		"rule a P1 object=page field\n",			/* not KEY=VALUE */
		"rule a P1 object=page ip=a,,b\n",			/* empty glob */
		"rule a P1 object=page ip=a,\n",			/* trailing comma */
		"rule a P1 offset=9-3\n",				/* backwards */
		"rule a P1 offset=x\n",					/* not a number */
		"rule a P1 haschain=maybe\n",
		"rule a P1\nrule a P2\n",				/* same name twice */
		"rule a\n",						/* no target */
		"anchor x lruvec ip=a\n",				/* not STRUCT.FIELD */
		"anchor x lruvec.lru_lock field=lru_lock\n",		/* typed conditions */
		"anchor x lruvec.lru_lock ip=a ip=b\n",			/* two ip= */
		"frobnicate a b\n",					/* unknown keyword */
		"disable p1-bitmap-switch\n",				/* only in overrides */
		"rule a other:bad/name\n",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct rules *r = rules_new();

		if (rules_parse(r, bad[i], "bad", 0) != -EINVAL) {
			test_failures++;
			fprintf(stderr, "accepted: %s", bad[i]);
		}
		test_checks++;
		rules_free(r);
	}
	/* a disable of a name that does not exist is an error too */
	struct rules *r = defaults();

	CHECK_INT(rules_parse(r, "disable nosuch\n", "o", RULES_OVERRIDE), ==, -EINVAL);
	/* comments and blank lines; '#' inside a word is not a comment */
	CHECK_INT(rules_parse(r, "\n  # c\nrule x P1 object=page ip=a#b # trailing\n\n", "o",
			      RULES_OVERRIDE), ==, 0);
	CHECK_STR(rule_name(rules_get(r, 0)), "x");
	CHECK_STR(rule_origin(rules_get(r, 0)), "o:3");
	CHECK_STR(attr(r, "page", "_refcount", "a#b", NULL), "P1");
	rules_free(r);
}

int main(void)
{
	log_set_max_level(LOG_CRIT);	/* the parse errors are expected */
	RUN(test_p1);
	RUN(test_p2);
	RUN(test_p3);
	RUN(test_p4);
	RUN(test_unknown_symbols);
	RUN(test_field_match);
	RUN(test_anchors);
	RUN(test_overrides);
	RUN(test_parse_errors);
	return test_exit();
}
