// SPDX-License-Identifier: GPL-2.0
/*
 * The shipped rules (engine/rules.conf) decide docs/design.md's table, the
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
	/* field AND path: the IP's function unknown, a reader elsewhere */
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", NULL, CHAIN("schedule", "do_sched_yield")),
		  "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "try_to_inc_max_seq", NULL), "other:mm_struct");
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "lru_gen_add_mm", CHAIN("copy_process")),
		  "other:mm_struct");
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
	/* the activate batch's own move under lru_lock (the batch was full):
	 * P3, told from P4's drain by the callchain */
	CHECK_STR(attr(r, "lruvec", "lru_lock", "native_queued_spin_lock_slowpath",
		       CHAIN("_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave",
			     "folio_batch_move_lru", "folio_activate", "folio_mark_accessed",
			     "filemap_read")), "P3");
	CHECK_STR(attr(r, "lruvec", "lru_lock", "_raw_spin_lock_irqsave",
		       CHAIN("folio_lruvec_lock_irqsave", "folio_batch_move_lru",
			     "__folio_batch_add_and_move", "folio_activate", "mark_page_accessed")),
		  "P3");
	CHECK_STR(attr(r, "lruvec", "lists[1]", "lru_activate",
		       CHAIN("folio_batch_move_lru", "folio_activate", "folio_mark_accessed")), "P3");
	/* the activate batch drained by lru_add_drain() is P4's route */
	CHECK_STR(attr(r, "lruvec", "lru_lock", "native_queued_spin_lock_slowpath",
		       CHAIN("_raw_spin_lock_irqsave", "folio_lruvec_lock_irqsave",
			     "folio_batch_move_lru", "lru_add_drain_cpu", "lru_add_drain",
			     "folio_mark_accessed")), "P4");
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
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", NULL, NULL), "other:mm_struct");
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
	 * walker's reads of the bitmap become P1 too. */
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "iterate_mm_list", NULL), "other:mm_struct");
	CHECK_INT(rules_parse(r, "rule p1-bitmap-switch P1 object=mm_struct field=lru_gen.bitmap "
			      "stack=__schedule,iterate_mm_list\n", "t1", RULES_OVERRIDE), ==, 0);
	CHECK_STR(attr(r, "mm_struct", "lru_gen.bitmap", "iterate_mm_list", NULL), "P1");
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

/* The field an untyped address's line offset fits, for as=: one only. */
static const char *fits_field_name;
static bool fits_one(void *ctx, const char *st, const char *field)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%s.%s", st, field);
	return fits_field_name && strcmp(buf, fits_field_name) == 0;
}

/* An untyped kernel address whose line offset fits `fits` only. */
static const char *attr_untyped(const struct rules *r, const char *fits, const char *ip,
				const char *const *chain, const struct rule **ret_rule)
{
	static char path[64];
	size_t n = 0;
	const struct rule *rule;

	while (chain && chain[n])
		n++;
	fits_field_name = fits;
	struct rule_input in = {
		.offset = -1, .ip = ip, .chain = chain, .chain_n = n, .has_chain = n > 0,
		.region = "kernel", .fits = fits_one,
	};
	rule = rules_match(r, &in, path, sizeof(path));
	if (ret_rule)
		*ret_rule = rule;
	return path;
}

/* Typed by the code path: the IP's function and the line offset. */
static void test_by_path(void)
{
	struct rules *r = defaults();
	const struct rule *rule;
	const char *st, *field;

	/* P1: __schedule, where lru_gen_use_mm() is inlined, at the bitmap */
	CHECK_STR(attr_untyped(r, "mm_struct.lru_gen.bitmap", "__schedule", CHAIN("schedule"), &rule),
		  "P1");
	CHECK(rule_as(rule, &st, &field));
	CHECK_STR(st, "mm_struct");
	CHECK_STR(field, "lru_gen.bitmap");
	CHECK_STR(attr_untyped(r, "mm_struct.lru_gen.bitmap", "lru_gen_use_mm", CHAIN("__schedule"),
			       NULL), "P1");
	/* negatives: the switch at mm_count's or membarrier_state's offset, a
	 * callee of __schedule at the bitmap's, a reader elsewhere */
	CHECK_STR(attr_untyped(r, "mm_struct.mm_count", "__schedule", CHAIN("schedule"), NULL),
		  "unresolved");
	CHECK_STR(attr_untyped(r, "mm_struct.membarrier_state", "finish_task_switch.isra.0",
			       CHAIN("__schedule"), NULL), "unresolved");
	CHECK_STR(attr_untyped(r, "mm_struct.lru_gen.bitmap", "switch_mm_irqs_off",
			       CHAIN("__schedule"), NULL), "unresolved");
	CHECK_STR(attr_untyped(r, "mm_struct.lru_gen.bitmap", "try_to_inc_max_seq",
			       CHAIN("lru_gen_age_node"), NULL), "unresolved");
	/* P2 and P3's page side */
	CHECK_STR(attr_untyped(r, "page.flags", "folio_update_gen", CHAIN("walk_pmd_range_locked"),
			       NULL), "P2");
	CHECK_STR(attr_untyped(r, "page.flags", "folio_mark_accessed", CHAIN("filemap_read"), NULL),
		  "P3");
	CHECK_STR(attr_untyped(r, "page.flags", "folio_activate", CHAIN("folio_mark_accessed"), NULL),
		  "P3");
	/* not the walk itself (it reads PTEs at any offset), not a drain */
	CHECK_STR(attr_untyped(r, "page.flags", "walk_pmd_range_locked", NULL, NULL), "unresolved");
	CHECK_STR(attr_untyped(r, "page.flags", "folio_batch_move_lru", CHAIN("lru_add_drain_cpu"),
			       NULL), "unresolved");
	/* as= never applies to a typed address */
	CHECK_STR(attr(r, "lruvec", "lru_lock", "__schedule", NULL), "other:lruvec");
	rules_free(r);
}

/* Static data and user space are typed, never a path. */
static void test_regions(void)
{
	struct rules *r = defaults();
	struct rule_input in = { .object = "root_user", .offset = 8, .ip = "free_uid",
				 .region = "static" };
	char path[64];

	CHECK_STR(rule_name(rules_match(r, &in, path, sizeof(path))), "static-data");
	CHECK_STR(path, "other:root_user");
	in = (struct rule_input){ .object = "user", .offset = 0, .ip = "rep_movs_alternative",
				  .region = "user" };
	CHECK_STR(rule_name(rules_match(r, &in, path, sizeof(path))), "user-space");
	CHECK_STR(path, "other:user");
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
	/* the longest line read, 64 words, is a rule; one word more is an
	 * error, never a line quietly skipped */
	char line[1024] = "rule long P1";
	struct rules *lr = rules_new();

	for (int w = 3; w < 64; w++)
		strcat(line, " object=page");
	strcat(line, "\n");
	CHECK_INT(rules_parse(lr, line, "long", 0), ==, 0);
	CHECK_INT(rules_count(lr), ==, 1);
	line[strlen(line) - 1] = '\0';
	strcat(line, " object=page\n");
	CHECK_INT(rules_parse(lr, line, "longer", RULES_OVERRIDE), ==, -EINVAL);
	rules_free(lr);

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
	RUN(test_by_path);
	RUN(test_regions);
	RUN(test_parse_errors);
	return test_exit();
}
