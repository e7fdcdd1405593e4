// SPDX-License-Identifier: GPL-2.0
/*
 * Each path's answer, the report's headline (struct answer). A report on
 * one host answers with that host's own before/after verdict, which is
 * what one host's weekly report and a developer testing a patch on one
 * machine need, and when the host cannot be judged yet, says when it can;
 * a fleet answers with the fleet verdict. Also the words the writers
 * share for the path table's needs and for the patch map's missing rules.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report-model.h"
#include "util.h"

#define DAY_NS (24 * 3600 * NSEC_PER_SEC)

/* Appends to buf of size, *len its length so far; truncates, never overruns. */
static void bcat(char *buf, size_t size, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void bcat(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*len + 1 >= size)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len = *len + (size_t)k < size ? *len + (size_t)k : size - 1;
}

void needs_phrase(char *buf, size_t size, int p)
{
	const struct path_def *d = path_get(p);
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < d->nr_needs; i++) {
		const char *w = d->needs[i], *eq = strchr(w, '=');

		if (!eq)
			continue;
		bcat(buf, size, &len, "%s", len ? " and " : "");
		for (const char *c = w; c < eq; c++)
			bcat(buf, size, &len, "%c", toupper((unsigned char)*c));
		for (const char *s = eq + 1; *s; s += *s == ',') {
			size_t n = strcspn(s, ",");

			bcat(buf, size, &len, "%s%.*s", s == eq + 1 ? " " : " or ", (int)n, s);
			s += n;
		}
	}
}

void patch_map_line(char *buf, size_t size, const struct kernel_info *k, unsigned int mask)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int p = 0; p < paths_nr(); p++)
		if (mask & (1u << p))
			bcat(buf, size, &len, "%s%s", len ? "," : "", path_get(p)->id);
	if (!len)
		return;
	/* A release is the readable match; one a glob would misread needs the build-id. */
	if (k->build_id && strpbrk(k->release, "*?[ \t\\"))
		bcat(buf, size, &len, " build-id %s", k->build_id);
	else
		bcat(buf, size, &len, " release %s", k->release);
}

const char *patch_map_file(const struct report *r)
{
	return r->o.patches_file ? r->o.patches_file : "the patch map (--patches FILE)";
}

/* The interval that decided: the 90 % one for "no change" (two one-sided tests), else the report's. */
static void answer_interval(const struct report *r, struct answer *a, const struct rel_ci *ci)
{
	bool eq = a->verdict == VERDICT_NO_CHANGE;

	a->lo = eq ? ci->eq_lo : ci->lo;
	a->hi = eq ? ci->eq_hi : ci->hi;
	a->level = eq ? 2 * r->o.level - 1 : r->o.level;
}

void answer_parts(const struct answer *a, char *nums, size_t size, const char **basis,
		  const char **reason)
{
	bool decided = a->verdict != VERDICT_INSUFFICIENT;
	char e[32], ci[80];

	nums[0] = '\0';
	if (!isnan(a->lo) && decided) {
		fmt_pct(e, sizeof(e), a->change);
		fmt_ci(ci, sizeof(ci), a->lo, a->hi);
		snprintf(nums, size, " %s (%.0f %% CI %s)", e, 100 * a->level, ci);
	}
	*basis = decided ? a->basis : NULL;
	*reason = !decided || a->verdict == VERDICT_NOT_APPLICABLE || a->caveat ? a->reason : NULL;
}

/* The fleet's verdict, its interval and basis, as the headline. */
static int fleet_answer(const struct report *r, int p, struct answer *a)
{
	const struct fleet_path *f = &r->fleet[p];
	const struct fleet_change *c = f->basis && strstr(f->basis, "difference") ? &f->did : &f->paired;

	a->verdict = f->verdict;
	if (c->valid && f->verdict != VERDICT_NOT_APPLICABLE) {
		a->change = c->estimate;
		answer_interval(r, a, &c->ci);
	}
	if (f->basis && str_appendf(&a->basis, "", "%s over %zu compared host%s", f->basis, f->nr_treated,
			     f->nr_treated == 1 ? "" : "s") < 0)
		return -ENOMEM;
	return str_appendf(&a->reason, "", "%s", f->reason ? f->reason : "");
}

/* The comparison a host's answer rests on: the chosen one, else the last that gained the patch, else the last. */
static ssize_t telling(const struct host *h, int p)
{
	const struct host_path *hp = &h->path[p];
	ssize_t best = hp->nr_cmp ? (ssize_t)hp->nr_cmp - 1 : -1;

	if (hp->chosen >= 0)
		return hp->chosen;
	for (size_t i = 0; i < hp->nr_cmp; i++)
		if (h->rollouts[hp->cmp[i].rollout].change[p] == CHANGE_GAINED)
			best = (ssize_t)i;
	return best;
}

/* What the patch map says of the change: nothing when it added the patch. */
static int patch_why(const struct report *r, const struct host *h, int p, const struct rollout *ro, char **s)
{
	const struct kernel_info *from = &h->kernels[ro->from], *to = &h->kernels[ro->to];
	char line[256];

	if (ro->change[p] == CHANGE_GAINED)
		return 0;
	if (ro->change[p] == CHANGE_UNKNOWN) {
		const struct kernel_info *k = to->patches[p].state == PATCH_UNKNOWN ? to : from;

		patch_map_line(line, sizeof(line), k, 1u << p);
		return str_appendf(s, "; ", "the patch map does not say whether %s carries %s: add \"carries %s\" "
			    "to %s if it does", k->release, path_get(p)->id, line, patch_map_file(r));
	}
	return str_appendf(s, "; ", "the change %s -> %s did not add %s's patch (the patch map: %s, then %s)",
		    from->release, to->release, path_get(p)->id, patch_state_to_string(from->patches[p].state),
		    patch_state_to_string(to->patches[p].state));
}

/* "0.4 days of P1 rates", "P1 rates on 1 whole day", "no P1 rates (12m)": what a side holds. */
static void side_held(char *buf, size_t size, int p, const struct window *win, unsigned int days,
		      unsigned int data_days, int64_t span)
{
	char d[32];

	fmt_duration(d, sizeof(d), span > 0 ? span : 0);
	if (!win->n)
		snprintf(buf, size, "no %s rates in a window of %s", path_get(p)->id, d);
	else if (days)
		snprintf(buf, size, "%s rates on %u whole day%s", path_get(p)->id, data_days,
			 data_days == 1 ? "" : "s");
	else if (span >= DAY_NS / 10)
		snprintf(buf, size, "%.1f days of %s rates", (double)span / DAY_NS, path_get(p)->id);
	else
		snprintf(buf, size, "%s of %s rates", d, path_get(p)->id);
}

/*
 * The before side, which waiting cannot lengthen: 0 when it is long enough
 * or a longer --before would do (a condition), 1 when this change cannot be
 * judged.
 */
static int before_side(const struct report *r, const struct comparison *c, int p, char **why, char **cond)
{
	char held[64];

	if (c->data_days_before >= STATS_HOST_BLOCKS && c->before.n >= r->o.min_intervals)
		return 0;
	side_held(held, sizeof(held), p, &c->before, c->days_before, c->data_days_before,
		  c->before.hi_ns - c->before.lo_ns);
	if (str_appendf(why, "; ", "the before-window holds %s", held) < 0)
		return -ENOMEM;
	if (r->o.before_ns < STATS_HOST_BLOCKS * DAY_NS)
		return str_appendf(cond, ", ", "--before %dd or more", STATS_HOST_BLOCKS);
	return 1;
}

/*
 * The after side: when it will hold STATS_HOST_BLOCKS whole days and
 * min_intervals rates, given the recording continues (*ret_ns), or 1 when
 * the host's next kernel change ends it before.
 */
static int after_side(const struct report *r, const struct host *h, const struct comparison *c, int p,
		      char **why, char **cond, int64_t *ret_ns)
{
	const struct rollout *ro = &h->rollouts[c->rollout];
	int64_t t = ro->t_ns, from = t + STATS_HOST_BLOCKS * DAY_NS;
	char held[64];

	if (c->data_days_after >= STATS_HOST_BLOCKS && c->after.n >= r->o.min_intervals)
		return 0;
	side_held(held, sizeof(held), p, &c->after, c->days_after, c->data_days_after,
		  (h->last_ns < c->after.hi_ns ? h->last_ns : c->after.hi_ns) - t);
	if (str_appendf(why, "; ", "the after-window holds %s", held) < 0)
		return -ENOMEM;
	if (ro->next_ns < from)
		return 1;
	if (c->after.n < r->o.min_intervals && h->q.interval_s > 0) {
		int64_t more = h->last_ns + (int64_t)((r->o.min_intervals - c->after.n) * h->q.interval_s * 1e9);

		from = more > from ? more : from;
	}
	*ret_ns = from;
	if (r->o.after_ns < STATS_HOST_BLOCKS * DAY_NS)
		return str_appendf(cond, ", ", "--after %dd or more", STATS_HOST_BLOCKS);
	if (r->until_given && r->o.until_ns < from)
		return str_appendf(cond, ", ", "a later --until");
	return 0;
}

/* Why a host's comparison gives no verdict yet, and when it can: into a. */
static int not_yet(const struct report *r, const struct host *h, int p, const struct comparison *c,
		   struct answer *a)
{
	_cleanup_free_ char *why = NULL, *cond = NULL;
	char when[40] = "", need[64];
	int64_t from = 0;
	int b, n;

	if (patch_why(r, h, p, &h->rollouts[c->rollout], &why) < 0)
		return -ENOMEM;
	if (why && str_appendf(&cond, ", ", "that patch-map rule") < 0)
		return -ENOMEM;
	if (h->no_pmu && (str_appendf(&why, "; ", "HITM not measured (no PMU on this host)") < 0 ||
			  str_appendf(&cond, ", ", "a PMU") < 0))
		return -ENOMEM;
	b = before_side(r, c, p, &why, &cond);
	n = b < 0 ? b : after_side(r, h, c, p, &why, &cond, &from);
	if (b < 0 || n < 0)
		return -ENOMEM;
	snprintf(need, sizeof(need), "a verdict needs %d whole days a side", STATS_HOST_BLOCKS);
	if (b || n)
		return str_appendf(&a->reason, "", "%s; %s, which %s: no verdict for this kernel change", why, need,
			    b ? "the recording before the change cannot reach" :
			    "the host's next kernel change cuts off");
	if (!from && !cond)	/* the windows hold enough: the interval is what is undecided */
		return str_appendf(&a->reason, "", "%s%s%s", why ? why : "", why ? "; " : "", c->reason);
	if (from)
		fmt_time(when, sizeof(when), from);
	if (from && !cond)
		a->from_ns = from;
	return str_appendf(&a->reason, "", "%s; %s%s%s%s%s", why, need, from ? ", from " : "", from ? when : "",
		    cond ? " with " : "", cond ? cond : "");
}

/* The one host's own verdict on path p, or why there is none and when there can be. */
static int host_answer(const struct report *r, const struct host *h, int p, struct answer *a)
{
	const struct host_path *hp = &h->path[p];
	ssize_t i = telling(h, p);
	const struct comparison *c;

	a->host = true;
	if (hp->na_why) {
		a->verdict = VERDICT_NOT_APPLICABLE;
		return str_appendf(&a->reason, "", "%s", hp->na_why);
	}
	a->verdict = VERDICT_INSUFFICIENT;
	if (i < 0)
		return str_appendf(&a->reason, "", "%s", h->q.boots ? "no kernel change in the range" :
			    "no data in the range");
	c = &hp->cmp[i];
	a->verdict = c->verdict;
	a->change = c->change;
	if (c->has_ci)
		answer_interval(r, a, &c->ci);
	if (str_appendf(&a->basis, "", "the host's own before/after: %u days before the kernel change, %u after, "
		 "in %d day blocks a side", c->days_before, c->days_after, STATS_HOST_BLOCKS) < 0)
		return -ENOMEM;
	if (c->verdict == VERDICT_INSUFFICIENT)
		return not_yet(r, h, p, c, a);
	/* The host changed, whether or not the change was the patch: say which. */
	if (hp->chosen < 0 && patch_why(r, h, p, &h->rollouts[c->rollout], &a->reason) < 0)
		return -ENOMEM;
	a->caveat = a->reason != NULL;
	return a->caveat ? 0 : str_appendf(&a->reason, "", "%s", c->reason);
}

int report_answers(struct report *r)
{
	for (int p = 0; p < paths_nr(); p++) {
		struct answer *a = &r->answer[p];
		int ret;

		free(a->basis);
		free(a->reason);
		*a = (struct answer){ .verdict = VERDICT_INSUFFICIENT, .change = NAN, .lo = NAN, .hi = NAN,
					 .level = NAN };
		if (r->nr_hosts == 1)
			ret = host_answer(r, &r->hosts[0], p, a);
		else
			ret = fleet_answer(r, p, a);
		if (ret < 0)
			return -ENOMEM;
	}
	return 0;
}

/* --- the patch map in words ---------------------------------------------------- */

void patch_states(char *buf, size_t size, const struct kernel_info *k)
{
	static const enum patch_state order[] = { PATCH_CARRIES, PATCH_LACKS, PATCH_UNKNOWN };
	size_t len = 0;

	buf[0] = '\0';
	for (size_t s = 0; s < ARRAY_SIZE(order); s++) {
		bool first = true;

		for (int p = 0; p < paths_nr(); p++) {
			if (k->patches[p].state != order[s])
				continue;
			if (first)
				bcat(buf, size, &len, "%s%s", len ? "; " : "", patch_state_to_string(order[s]));
			bcat(buf, size, &len, " %s", path_get(p)->id);
			first = false;
		}
	}
}

unsigned int patch_unknown_mask(const struct kernel_info *k)
{
	unsigned int mask = 0;

	for (int p = 0; p < paths_nr(); p++)
		if (k->patches[p].state == PATCH_UNKNOWN)
			mask |= 1u << p;
	return mask;
}

static bool boot_in_range(const struct report *r, const struct boot_info *b)
{
	return b->last_seen_ns >= r->data_lo_ns && b->start_ns < r->o.until_ns;
}

const struct kernel_info **report_range_kernels(const struct report *r, size_t *ret_n)
{
	const struct kernel_info **v = NULL;
	size_t n = 0, alloc = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		for (size_t b = 0; b < h->nr_boots; b++) {
			const struct kernel_info *k = &h->kernels[h->boots[b].kernel];
			size_t j;

			if (!boot_in_range(r, &h->boots[b]))
				continue;
			for (j = 0; j < n; j++)
				if (kernel_same(v[j]->release, v[j]->version, v[j]->build_id, k->release, k->version,
						k->build_id))
					break;
			if (j < n)
				continue;
			if (grow_array((void **)&v, &alloc, sizeof(*v), n + 1) < 0) {
				free(v);
				return NULL;
			}
			v[n++] = k;
		}
	}
	*ret_n = n;
	return v ? v : calloc(1, sizeof(*v));
}
