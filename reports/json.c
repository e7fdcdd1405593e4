// SPDX-License-Identifier: GPL-2.0
/*
 * The report as JSON: every number the HTML shows, plus the per-host
 * details, enough to recompute every fleet number (docs/statistics.md).
 * Written with the one JSON writer (common/jsonw.h): undefined numbers
 * (NaN) are null; unbounded ones are the strings "inf" and "-inf", which
 * Python's float() reads back.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "log.h"
#include "report-model.h"
#include "util.h"

/* "key": the UTC time, and "key_ns": the same in ns. */
static void time_kv(struct jsonw *w, const char *k, int64_t ns)
{
	char buf[40], kns[64];

	fmt_time(buf, sizeof(buf), ns);
	jsonw_str(w, k, buf);
	snprintf(kns, sizeof(kns), "%s_ns", k);
	jsonw_int(w, kns, ns);
}

static void window_json(struct jsonw *w, const char *k, const struct window *win)
{
	jsonw_object(w, k);
	time_kv(w, "from", win->lo_ns);
	time_kv(w, "to", win->hi_ns);
	jsonw_uint(w, "n", win->n);
	jsonw_num(w, "median", win->median);
	jsonw_num(w, "p25", win->p25);
	jsonw_num(w, "p75", win->p75);
	jsonw_num(w, "duty_cycle", win->duty);
	jsonw_object(w, "excluded");
	jsonw_uint(w, "warmup", win->ex.warmup);
	jsonw_uint(w, "no_pmu", win->ex.no_pmu);
	jsonw_uint(w, "idle", win->ex.idle);
	jsonw_uint(w, "not_analyzed", win->ex.not_analyzed);
	jsonw_end(w);
	jsonw_end(w);
}

/* A t interval on the log scale: what a reader needs to redo it. */
static void t_json(struct jsonw *w, const struct t_interval *t)
{
	jsonw_num(w, "log_change", t->estimate);
	jsonw_num(w, "log_se", t->se);
	jsonw_num(w, "df", t->df);
	jsonw_num(w, "p", t->p);
}

/* What the fleet took from a host's windows: levels, their log change, the covariates. */
static void fleet_input_json(struct jsonw *w, const struct fleet_input *fi)
{
	jsonw_object(w, "fleet");
	jsonw_num(w, "level_before", fi->level_before);
	jsonw_num(w, "level_after", fi->level_after);
	jsonw_num(w, "log_change", fi->log_change);
	if (fi->has_near) {
		jsonw_array(w, "near");
		for (int j = 0; j < STATS_MAX_COVARIATES; j++)
			jsonw_num(w, NULL, fi->near[j]);
		jsonw_end(w);
	} else {
		jsonw_null(w, "near");
	}
	jsonw_end(w);
}

static void adjustment_json(struct jsonw *w, const struct did_adjustment *a)
{
	jsonw_object(w, "adjustment");
	jsonw_bool(w, "applied", a->applied);
	for (int g = 0; g < 2; g++) {
		jsonw_array(w, g ? "gap" : "theta");
		for (size_t j = 0; a->applied && j < a->k; j++)
			jsonw_num(w, NULL, g ? a->gap[j] : a->theta[j]);
		jsonw_end(w);
	}
	jsonw_num(w, "residual_df", a->applied ? a->resid_df : NAN);
	jsonw_num(w, "theta_var", a->applied ? a->theta_var : NAN);
	jsonw_object(w, "unadjusted");
	t_json(w, &a->plain);
	jsonw_end(w);
	jsonw_end(w);
}

static void change_json(struct jsonw *w, const char *k, const struct fleet_change *c, bool did)
{
	if (!c->valid) {
		jsonw_null(w, k);
		return;
	}
	jsonw_object(w, k);
	jsonw_num(w, "change", c->estimate);
	jsonw_num(w, "ci_low", c->ci.lo);
	jsonw_num(w, "ci_high", c->ci.hi);
	jsonw_num(w, "eq_low", c->ci.eq_lo);
	jsonw_num(w, "eq_high", c->ci.eq_hi);
	t_json(w, &c->t);
	jsonw_uint(w, "hosts", c->n);
	if (did) {
		jsonw_uint(w, "control_measurements", c->n_controls);
		jsonw_int(w, "cohorts", c->strata);
		adjustment_json(w, &c->adj);
	}
	jsonw_end(w);
}

static void lines_json(struct jsonw *w, const char *k, const struct report *r,
		       const struct top_line *top, size_t n)
{
	jsonw_array(w, k);
	for (size_t i = 0; i < n; i++) {
		const struct top_line *l = &top[i];
		char addr[32];

		snprintf(addr, sizeof(addr), "0x%016" PRIx64, (uint64_t)l->line_addr);
		jsonw_object(w, NULL);
		jsonw_str(w, "host", host_name(r, l->host));
		jsonw_str(w, "path", l->path);
		jsonw_str(w, "line", addr);
		jsonw_str(w, "object_type", l->object_type);
		jsonw_str(w, "field", l->field);
		jsonw_str(w, "comm", l->comm);
		if (l->tgid < 0)
			jsonw_null(w, "tgid");
		else
			jsonw_int(w, "tgid", l->tgid);
		jsonw_int(w, "hitm", l->hitm);
		jsonw_int(w, "lcl_hitm", l->lcl_hitm);
		jsonw_int(w, "rmt_hitm", l->rmt_hitm);
		jsonw_int(w, "peer", l->peer);
		jsonw_int(w, "loads", l->loads);
		jsonw_int(w, "stores", l->stores);
		jsonw_str(w, "symbols", l->symbols);
		jsonw_end(w);
	}
	jsonw_end(w);
}

static void nums_json(struct jsonw *w, const char *k, const double *v, size_t n)
{
	jsonw_array(w, k);
	for (size_t i = 0; i < n; i++)
		jsonw_num(w, NULL, v[i]);
	jsonw_end(w);
}

static int series_json(struct jsonw *w, const struct report *r, int p)
{
	static const char *const groups[] = { "all", "unknown", "lacks", "carries" };
	static const double q[] = { 0.25, 0.5, 0.75 };
	static const char *const qn[] = { "p25", "median", "p75" };
	double *v = malloc((r->nr_bins + 1) * sizeof(double));
	int ret = -ENOMEM;

	if (!v)
		return -ENOMEM;
	jsonw_object(w, "series");
	time_kv(w, "start", r->bins_lo_ns);
	jsonw_int(w, "bin_s", r->bin_ns / NSEC_PER_SEC);
	for (int g = 0; g < 4; g++) {
		jsonw_object(w, groups[g]);
		for (int k = 0; k < 3; k++) {
			if (report_series(r, p, g, false, q[k], v) < 0)
				goto out;
			nums_json(w, qn[k], v, r->nr_bins);
		}
		jsonw_end(w);
	}
	if (report_series(r, p, 0, true, 0.5, v) < 0)
		goto out;
	nums_json(w, "work_per_s_median", v, r->nr_bins);
	ret = 0;
out:
	jsonw_end(w);
	free(v);
	return ret;
}

static void hist_json(struct jsonw *w, const struct fleet_path *fp)
{
	size_t lo = HIST_BINS, hi = 0;

	for (size_t i = 0; i < HIST_BINS; i++)
		if (fp->hist_before[i] || fp->hist_after[i]) {
			if (i < lo)
				lo = i;
			hi = i + 1;
		}
	jsonw_object(w, "distribution");
	jsonw_array(w, "bin_edges");
	for (size_t i = lo; i <= hi && lo < HIST_BINS; i++)
		jsonw_numg(w, NULL, 6, hist_edge(i));
	jsonw_end(w);
	for (int k = 0; k < 2; k++) {
		const uint64_t *h = k ? fp->hist_after : fp->hist_before;

		jsonw_array(w, k ? "after" : "before");
		for (size_t i = lo; i < hi; i++)
			jsonw_uint(w, NULL, h[i]);
		jsonw_end(w);
	}
	jsonw_end(w);
}

static void blocks_json(struct jsonw *w, const struct comparison *c)
{
	if (!c->has_ci) {
		jsonw_null(w, "blocks");
		return;
	}
	jsonw_object(w, "blocks");
	for (int side = 0; side < 2; side++)
		nums_json(w, side ? "after_medians" : "before_medians",
			  side ? c->bc.block_after : c->bc.block_before, STATS_HOST_BLOCKS);
	jsonw_array(w, "first_block_days");
	jsonw_uint(w, NULL, stats_block_days(c->days_before));
	jsonw_uint(w, NULL, stats_block_days(c->days_after));
	jsonw_end(w);
	t_json(w, &c->bc.log);
	jsonw_end(w);
}

static void comparison_json(struct jsonw *w, const struct comparison *c)
{
	jsonw_object(w, NULL);
	jsonw_int(w, "rollout", (int64_t)c->rollout);
	window_json(w, "before", &c->before);
	window_json(w, "after", &c->after);
	jsonw_num(w, "change", c->change);
	jsonw_num(w, "log_change", c->before.median > 0 && c->after.median > 0 ?
		  log(c->after.median / c->before.median) : NAN);
	jsonw_int(w, "days_before", c->days_before);
	jsonw_int(w, "days_after", c->days_after);
	jsonw_int(w, "data_days_before", c->data_days_before);
	jsonw_int(w, "data_days_after", c->data_days_after);
	jsonw_bool(w, "too_short", c->too_short);
	jsonw_num(w, "ci_low", c->has_ci ? c->ci.lo : NAN);
	jsonw_num(w, "ci_high", c->has_ci ? c->ci.hi : NAN);
	jsonw_num(w, "eq_low", c->has_ci ? c->ci.eq_lo : NAN);
	jsonw_num(w, "eq_high", c->has_ci ? c->ci.eq_hi : NAN);
	blocks_json(w, c);
	fleet_input_json(w, &c->fi);
	jsonw_num(w, "mann_whitney_u", c->has_mwu ? c->mwu.u : NAN);
	jsonw_num(w, "mann_whitney_p", c->has_mwu ? c->mwu.p : NAN);
	jsonw_str(w, "verdict", verdict_to_string(c->verdict));
	jsonw_str(w, "reason", c->reason);
	jsonw_end(w);
}

static void kernels_json(struct jsonw *w, const struct host *h)
{
	jsonw_array(w, "kernels");
	for (size_t k = 0; k < h->nr_kernels; k++) {
		const struct kernel_info *ki = &h->kernels[k];

		jsonw_object(w, NULL);
		jsonw_str(w, "release", ki->release);
		jsonw_str(w, "version", ki->version);
		jsonw_str(w, "build_id", ki->build_id);
		jsonw_array(w, "markers");
		for (size_t m = 0; m < ki->nr_markers; m++)
			jsonw_str(w, NULL, ki->markers[m]);
		jsonw_end(w);
		jsonw_object(w, "patches");
		for (int p = 0; p < paths_nr(); p++) {
			jsonw_object(w, path_get(p)->id);
			jsonw_str(w, "state", patch_state_to_string(ki->patches[p].state));
			jsonw_str(w, "why", ki->patches[p].why);
			jsonw_end(w);
		}
		jsonw_end(w);
		jsonw_end(w);
	}
	jsonw_end(w);
}

static void boots_json(struct jsonw *w, const struct host *h)
{
	jsonw_array(w, "boots");
	for (size_t b = 0; b < h->nr_boots; b++) {
		const struct boot_info *bi = &h->boots[b];

		jsonw_object(w, NULL);
		jsonw_int(w, "boot_id", bi->boot_id);
		time_kv(w, "start", bi->start_ns);
		time_kv(w, "last_seen", bi->last_seen_ns);
		jsonw_int(w, "kernel", (int64_t)bi->kernel);
		jsonw_int(w, "cpus", bi->nr_cpus);
		jsonw_str(w, "pmu_kind", bi->pmu_kind);
		jsonw_str(w, "pmu_detail", bi->pmu_detail);
		jsonw_str(w, "lru_gen", bi->lru_gen);
		jsonw_end(w);
	}
	jsonw_end(w);
}

static void rollouts_json(struct jsonw *w, const struct host *h)
{
	jsonw_array(w, "rollouts");
	for (size_t i = 0; i < h->nr_rollouts; i++) {
		const struct rollout *ro = &h->rollouts[i];

		jsonw_object(w, NULL);
		time_kv(w, "time", ro->t_ns);
		jsonw_int(w, "from", (int64_t)ro->from);
		jsonw_int(w, "to", (int64_t)ro->to);
		jsonw_bool(w, "rollback", ro->rollback);
		jsonw_bool(w, "in_range", h->rollout_in_range[i]);
		jsonw_object(w, "patches");
		for (int p = 0; p < paths_nr(); p++)
			jsonw_str(w, path_get(p)->id, patch_change_to_string(ro->change[p]));
		jsonw_end(w);
		jsonw_end(w);
	}
	jsonw_end(w);
}

static void host_paths_json(struct jsonw *w, const struct host *h)
{
	jsonw_object(w, "paths");
	for (int p = 0; p < paths_nr(); p++) {
		const struct host_path *hp = &h->path[p];

		jsonw_object(w, path_get(p)->id);
		jsonw_uint(w, "measured", hp->measured);
		jsonw_num(w, "median_rate", hp->median);
		jsonw_int(w, "hitm", hp->hitm);
		if (hp->chosen >= 0)
			jsonw_int(w, "chosen", hp->chosen);
		else
			jsonw_null(w, "chosen");
		jsonw_str(w, "excluded", hp->excluded_why);
		jsonw_array(w, "controls");
		for (size_t c = 0; c < h->nr_controls[p]; c++) {
			const struct control *ct = &h->controls[p][c];

			jsonw_object(w, NULL);
			jsonw_int(w, "cohort", ct->cohort);
			window_json(w, "before", &ct->before);
			window_json(w, "after", &ct->after);
			jsonw_num(w, "log_change", log(ct->after.median / ct->before.median));
			fleet_input_json(w, &ct->fi);
			jsonw_end(w);
		}
		jsonw_end(w);
		jsonw_array(w, "comparisons");
		for (size_t c = 0; c < hp->nr_cmp; c++)
			comparison_json(w, &hp->cmp[c]);
		jsonw_end(w);
		jsonw_end(w);
	}
	jsonw_end(w);
}

static void quality_json(struct jsonw *w, const struct quality *q)
{
	jsonw_object(w, "quality");
	jsonw_uint(w, "intervals", q->intervals);
	jsonw_num(w, "interval_s", q->interval_s);
	jsonw_uint(w, "partial", q->partial);
	jsonw_uint(w, "not_analyzed", q->not_analyzed);
	jsonw_uint(w, "gaps", q->gaps);
	jsonw_num(w, "gap_s", (double)q->gap_ns / 1e9);
	jsonw_num(w, "max_gap_s", (double)q->max_gap_ns / 1e9);
	jsonw_int(w, "events_lost", q->events_lost);
	jsonw_int(w, "samples_lost", q->samples_lost);
	jsonw_int(w, "throttled", q->throttled);
	jsonw_int(w, "dropped_intervals", q->dropped_intervals);
	jsonw_uint(w, "boots", q->boots);
	jsonw_uint(w, "boots_with_pmu", q->pmu_boots);
	jsonw_end(w);
}

static void host_json(struct jsonw *w, const struct report *r, const struct host *h)
{
	jsonw_object(w, NULL);
	jsonw_str(w, "hostname", h->hostname);
	jsonw_str(w, "machine_id", h->machine_id);
	jsonw_str(w, "db", h->db);
	jsonw_bool(w, "simulated", h->simulated);
	jsonw_bool(w, "no_pmu", h->no_pmu);
	jsonw_bool(w, "lru_gen_off", h->lru_gen_off);
	kernels_json(w, h);
	boots_json(w, h);
	rollouts_json(w, h);
	host_paths_json(w, h);
	quality_json(w, &h->q);
	jsonw_end(w);
}

/* Each path's answer, the headline: the one host's own verdict, or the fleet's. */
static void answers_json(struct jsonw *w, const struct report *r)
{
	jsonw_object(w, "paths");
	for (int p = 0; p < paths_nr(); p++) {
		const struct answer *a = &r->answer[p];

		jsonw_object(w, path_get(p)->id);
		jsonw_str(w, "scope", a->host ? "host" : "fleet");
		jsonw_str(w, "verdict", verdict_to_string(a->verdict));
		jsonw_num(w, "change", a->change);
		jsonw_num(w, "ci_low", a->lo);
		jsonw_num(w, "ci_high", a->hi);
		jsonw_num(w, "ci_level", a->level);
		jsonw_str(w, "basis", a->basis);
		jsonw_str(w, "reason", a->reason);
		if (a->from_ns) {
			time_kv(w, "judgeable_from", a->from_ns);
		} else {
			jsonw_null(w, "judgeable_from");
			jsonw_null(w, "judgeable_from_ns");
		}
		jsonw_end(w);
	}
	jsonw_end(w);
}

/* How many hosts were generated, not recorded, and by what. */
static void simulated_json(struct jsonw *w, const struct report *r)
{
	jsonw_object(w, "simulated");
	jsonw_uint(w, "hosts", r->nr_simulated);
	if (r->nr_simulated)
		jsonw_str(w, "generated_by", r->simulated_by);
	else
		jsonw_null(w, "generated_by");
	jsonw_end(w);
}

static void head_json(struct jsonw *w, const struct report *r)
{
	jsonw_int(w, "mmhitm_report", REPORT_VERSION);
	time_kv(w, "generated", r->generated_ns);
	simulated_json(w, r);
	jsonw_object(w, "range");
	time_kv(w, "since", r->o.since_ns);
	time_kv(w, "until", r->o.until_ns);
	time_kv(w, "data_from", r->data_lo_ns);
	jsonw_end(w);

	jsonw_object(w, "parameters");
	jsonw_num(w, "before_s", (double)r->o.before_ns / 1e9);
	jsonw_num(w, "after_s", (double)r->o.after_ns / 1e9);
	jsonw_num(w, "warmup_s", (double)r->o.warmup_ns / 1e9);
	jsonw_num(w, "cohort_s", (double)r->o.cohort_ns / 1e9);
	jsonw_int(w, "host_blocks", STATS_HOST_BLOCKS);
	jsonw_num(w, "confidence_level", r->o.level);
	jsonw_num(w, "margin", r->o.margin);
	jsonw_int(w, "min_intervals", r->o.min_intervals);
	jsonw_int(w, "min_hosts", r->o.min_hosts);
	jsonw_str(w, "patch_map", r->o.patches_origin);
	jsonw_str(w, "source", r->source ? r->source : "sqlite");
	if (r->o.rollup_ns > 0)
		jsonw_int(w, "rollup_s", r->o.rollup_ns / NSEC_PER_SEC);
	else
		jsonw_null(w, "rollup_s");
	jsonw_end(w);

	jsonw_object(w, "summary");
	jsonw_uint(w, "databases", r->nr_dbs);
	jsonw_uint(w, "unreadable", r->nr_errors);
	jsonw_uint(w, "hosts", r->nr_hosts);
	jsonw_uint(w, "hosts_rolled", r->hosts_rolled);
	jsonw_uint(w, "kernel_changes", r->rollouts_in_range);
	jsonw_uint(w, "rollbacks", r->rollbacks_in_range);
	jsonw_num(w, "seconds", r->seconds);
	answers_json(w, r);
	jsonw_end(w);
}

static int fleet_path_json(struct jsonw *w, const struct report *r, int p)
{
	const struct fleet_path *fp = &r->fleet[p];

	jsonw_object(w, NULL);
	jsonw_str(w, "path", path_get(p)->id);
	jsonw_str(w, "title", path_get(p)->title);
	jsonw_str(w, "work_unit", path_get(p)->unit);
	jsonw_num(w, "per", path_get(p)->per);
	jsonw_str(w, "verdict", verdict_to_string(fp->verdict));
	jsonw_str(w, "reason", fp->reason);
	jsonw_str(w, "basis", fp->basis);
	change_json(w, "paired", &fp->paired, false);
	if (fp->paired.valid) {
		jsonw_num(w, "wilcoxon_t", fp->has_wilcoxon ? fp->wilcoxon.t : NAN);
		jsonw_num(w, "wilcoxon_p", fp->has_wilcoxon ? fp->wilcoxon.p : NAN);
	}
	change_json(w, "did", &fp->did, true);
	jsonw_num(w, "median_host_change", fp->median_host_change);
	/* what the verdict rests on: the path's HITM by how it was typed */
	jsonw_object(w, "grades");
	for (int g = 0; g < NR_GRADES; g++)
		jsonw_int(w, grade_names[g], fp->grade_hitm[g]);
	jsonw_end(w);

	jsonw_object(w, "hosts");
	jsonw_uint(w, "with_data", fp->hosts_measured);
	jsonw_uint(w, "gained_patch", fp->candidates);
	jsonw_uint(w, "compared", fp->nr_treated);
	jsonw_uint(w, "controls", fp->controls_hosts);
	jsonw_uint(w, "improved", fp->improved);
	jsonw_uint(w, "regressed", fp->regressed);
	jsonw_uint(w, "unchanged", fp->unchanged);
	jsonw_uint(w, "inconclusive", fp->undecided);
	jsonw_uint(w, "too_short", fp->too_short);
	jsonw_end(w);

	jsonw_object(w, "excluded");
	jsonw_uint(w, "no_pmu", fp->ex_no_pmu);
	jsonw_uint(w, "too_few_intervals", fp->ex_few);
	jsonw_uint(w, "zero_median", fp->ex_zero);
	jsonw_uint(w, "patch_unknown", fp->ex_unknown_patch);
	jsonw_uint(w, "patch_not_gained", fp->ex_not_gained);
	jsonw_uint(w, "not_applicable", fp->ex_not_applicable);
	jsonw_end(w);

	hist_json(w, fp);
	if (series_json(w, r, p) < 0)
		return -ENOMEM;
	lines_json(w, "top_lines", r, fp->top, fp->nr_top);
	jsonw_end(w);
	return 0;
}

static int kernel_changes_json(struct jsonw *w, const struct report *r)
{
	struct kernel_pair *kp = NULL;
	size_t n = 0;

	if (report_kernel_pairs(r, &kp, &n) < 0)
		return -ENOMEM;
	jsonw_array(w, "kernel_changes");
	for (size_t i = 0; i < n; i++) {
		jsonw_object(w, NULL);
		jsonw_str(w, "from_release", kp[i].from->release);
		jsonw_str(w, "from_build_id", kp[i].from->build_id);
		jsonw_str(w, "to_release", kp[i].to->release);
		jsonw_str(w, "to_build_id", kp[i].to->build_id);
		jsonw_object(w, "patches");
		for (int p = 0; p < paths_nr(); p++) {
			jsonw_array(w, path_get(p)->id);
			jsonw_str(w, NULL, patch_state_to_string(kp[i].from->patches[p].state));
			jsonw_str(w, NULL, patch_state_to_string(kp[i].to->patches[p].state));
			jsonw_end(w);
		}
		jsonw_end(w);
		jsonw_uint(w, "hosts", kp[i].hosts);
		jsonw_uint(w, "changes", kp[i].changes);
		jsonw_uint(w, "rollbacks", kp[i].rollbacks);
		jsonw_end(w);
	}
	jsonw_end(w);
	free(kp);
	return 0;
}

static void tail_json(struct jsonw *w, const struct report *r)
{
	lines_json(w, "other_lines", r, r->other_top, r->nr_other_top);
	jsonw_array(w, "hitm_by_path");
	for (size_t i = 0; i < r->nr_shares; i++) {
		jsonw_object(w, NULL);
		jsonw_str(w, "path", r->shares[i].path);
		jsonw_int(w, "hitm", r->shares[i].hitm);
		jsonw_int(w, "samples", r->shares[i].samples);
		jsonw_end(w);
	}
	jsonw_end(w);
}

int report_write_json(const struct report *r, FILE *f)
{
	struct jsonw w;
	int ret;

	jsonw_init(&w, f);
	jsonw_object(&w, NULL);
	head_json(&w, r);
	jsonw_array(&w, "paths");
	for (int p = 0; p < paths_nr(); p++)
		if (fleet_path_json(&w, r, p) < 0)
			return -ENOMEM;
	jsonw_end(&w);
	tail_json(&w, r);
	if (kernel_changes_json(&w, r) < 0)
		return -ENOMEM;

	jsonw_array(&w, "cohorts");
	for (size_t i = 0; i < r->nr_cohorts; i++) {
		jsonw_object(&w, NULL);
		time_kv(&w, "reference", r->cohorts[i].ref_ns);
		time_kv(&w, "first", r->cohorts[i].first_ns);
		time_kv(&w, "last", r->cohorts[i].last_ns);
		jsonw_uint(&w, "kernel_changes", r->cohorts[i].rollouts);
		jsonw_end(&w);
	}
	jsonw_end(&w);

	jsonw_array(&w, "unreadable");
	for (size_t i = 0; i < r->nr_errors; i++) {
		jsonw_object(&w, NULL);
		jsonw_str(&w, "db", r->errors[i].db);
		jsonw_str(&w, "error", r->errors[i].error);
		jsonw_end(&w);
	}
	jsonw_end(&w);

	jsonw_array(&w, "hosts");
	for (size_t i = 0; i < r->nr_hosts; i++)
		host_json(&w, r, &r->hosts[i]);
	jsonw_end(&w);
	jsonw_end(&w);
	ret = jsonw_finish(&w);
	return ret == -EINVAL ? log_error_errno(EINVAL, "Report JSON nested wrongly: a bug") : ret;
}
