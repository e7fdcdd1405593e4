// SPDX-License-Identifier: GPL-2.0
/*
 * The report as JSON: every number the HTML shows, plus the per-host
 * details, enough to recompute every fleet number (docs/statistics.md).
 * Undefined numbers (NaN) are null; unbounded ones are the strings "inf"
 * and "-inf", which Python's float() reads back.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "report-model.h"
#include "util.h"

static void num(FILE *f, double v)
{
	json_num(f, v);
}

static void key(FILE *f, bool *first, const char *k)
{
	if (!*first)
		fputc(',', f);
	*first = false;
	json_puts(f, k);
	fputc(':', f);
}

static void kv_num(FILE *f, bool *first, const char *k, double v)
{
	key(f, first, k);
	num(f, v);
}

static void kv_int(FILE *f, bool *first, const char *k, int64_t v)
{
	key(f, first, k);
	fprintf(f, "%" PRId64, v);
}

static void kv_str(FILE *f, bool *first, const char *k, const char *v)
{
	key(f, first, k);
	json_puts(f, v);
}

static void kv_bool(FILE *f, bool *first, const char *k, bool v)
{
	key(f, first, k);
	fputs(v ? "true" : "false", f);
}

static void kv_time(FILE *f, bool *first, const char *k, int64_t ns)
{
	char buf[40], kns[64];

	fmt_time(buf, sizeof(buf), ns);
	kv_str(f, first, k, buf);
	snprintf(kns, sizeof(kns), "%s_ns", k);
	kv_int(f, first, kns, ns);
}

static void window_json(FILE *f, const struct window *w)
{
	bool first = true;

	fputc('{', f);
	kv_time(f, &first, "from", w->lo_ns);
	kv_time(f, &first, "to", w->hi_ns);
	kv_int(f, &first, "n", (int64_t)w->n);
	kv_num(f, &first, "median", w->median);
	kv_num(f, &first, "p25", w->p25);
	kv_num(f, &first, "p75", w->p75);
	kv_num(f, &first, "duty_cycle", w->duty);
	key(f, &first, "excluded");
	fprintf(f, "{\"warmup\":%zu,\"no_pmu\":%zu,\"idle\":%zu,\"not_analyzed\":%zu}",
		w->ex.warmup, w->ex.no_pmu, w->ex.idle, w->ex.not_analyzed);
	fputc('}', f);
}

/* A t interval on the log scale: what a reader needs to redo it. */
static void t_json(FILE *f, bool *first, const struct t_interval *t)
{
	kv_num(f, first, "log_change", t->estimate);
	kv_num(f, first, "log_se", t->se);
	kv_num(f, first, "df", t->df);
	kv_num(f, first, "p", t->p);
}

static void change_json(FILE *f, const struct fleet_change *c, bool did)
{
	bool first = true;

	if (!c->valid) {
		fputs("null", f);
		return;
	}
	fputc('{', f);
	kv_num(f, &first, "change", c->estimate);
	kv_num(f, &first, "ci_low", c->ci.lo);
	kv_num(f, &first, "ci_high", c->ci.hi);
	t_json(f, &first, &c->t);
	kv_int(f, &first, "hosts", (int64_t)c->n);
	if (did) {
		kv_int(f, &first, "control_measurements", (int64_t)c->n_controls);
		kv_int(f, &first, "cohorts", c->strata);
	}
	fputc('}', f);
}

static void lines_json(FILE *f, const struct report *r, const struct top_line *top, size_t n)
{
	fputc('[', f);
	for (size_t i = 0; i < n; i++) {
		const struct top_line *l = &top[i];
		bool first = true;
		char addr[32];

		snprintf(addr, sizeof(addr), "0x%016" PRIx64, (uint64_t)l->line_addr);
		fputs(i ? ",{" : "{", f);
		kv_str(f, &first, "host", host_name(r, l->host));
		kv_str(f, &first, "path", l->path);
		kv_str(f, &first, "line", addr);
		kv_str(f, &first, "object_type", l->object_type);
		kv_str(f, &first, "field", l->field);
		kv_str(f, &first, "comm", l->comm);
		key(f, &first, "tgid");
		if (l->tgid < 0)
			fputs("null", f);
		else
			fprintf(f, "%" PRId64, l->tgid);
		kv_int(f, &first, "hitm", l->hitm);
		kv_int(f, &first, "lcl_hitm", l->lcl_hitm);
		kv_int(f, &first, "rmt_hitm", l->rmt_hitm);
		kv_int(f, &first, "peer", l->peer);
		kv_int(f, &first, "loads", l->loads);
		kv_int(f, &first, "stores", l->stores);
		kv_str(f, &first, "symbols", l->symbols);
		fputc('}', f);
	}
	fputc(']', f);
}

static int series_json(FILE *f, const struct report *r, int p)
{
	static const char *const groups[] = { "all", "unknown", "lacks", "carries" };
	double *v = malloc((r->nr_bins + 1) * sizeof(double));
	bool first = true;

	if (!v)
		return -ENOMEM;
	fputc('{', f);
	kv_time(f, &first, "start", r->bins_lo_ns);
	kv_int(f, &first, "bin_s", r->bin_ns / NSEC_PER_SEC);
	for (int g = 0; g < 4; g++) {
		key(f, &first, groups[g]);
		fputc('{', f);
		for (int k = 0; k < 3; k++) {
			static const double q[] = { 0.25, 0.5, 0.75 };
			static const char *const qn[] = { "p25", "median", "p75" };

			if (report_series(r, p, g, false, q[k], v) < 0) {
				free(v);
				return -ENOMEM;
			}
			fprintf(f, "%s\"%s\":[", k ? "," : "", qn[k]);
			for (size_t b = 0; b < r->nr_bins; b++) {
				if (b)
					fputc(',', f);
				num(f, v[b]);
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	if (report_series(r, p, 0, true, 0.5, v) < 0) {
		free(v);
		return -ENOMEM;
	}
	key(f, &first, "work_per_s_median");
	fputc('[', f);
	for (size_t b = 0; b < r->nr_bins; b++) {
		if (b)
			fputc(',', f);
		num(f, v[b]);
	}
	fputs("]}", f);
	free(v);
	return 0;
}

static void hist_json(FILE *f, const struct fleet_path *fp)
{
	size_t lo = HIST_BINS, hi = 0;
	bool first = true;

	for (size_t i = 0; i < HIST_BINS; i++)
		if (fp->hist_before[i] || fp->hist_after[i]) {
			if (i < lo)
				lo = i;
			hi = i + 1;
		}
	fputc('{', f);
	key(f, &first, "bin_edges");
	fputc('[', f);
	for (size_t i = lo; i <= hi && lo < HIST_BINS; i++)
		fprintf(f, "%s%.6g", i > lo ? "," : "", hist_edge(i));
	fputc(']', f);
	for (int k = 0; k < 2; k++) {
		const uint64_t *h = k ? fp->hist_after : fp->hist_before;

		key(f, &first, k ? "after" : "before");
		fputc('[', f);
		for (size_t i = lo; i < hi; i++)
			fprintf(f, "%s%" PRIu64, i > lo ? "," : "", h[i]);
		fputc(']', f);
	}
	fputc('}', f);
}

static void comparison_json(FILE *f, const struct comparison *c)
{
	bool first = true;

	fputc('{', f);
	kv_int(f, &first, "rollout", (int64_t)c->rollout);
	key(f, &first, "before");
	window_json(f, &c->before);
	key(f, &first, "after");
	window_json(f, &c->after);
	kv_num(f, &first, "change", c->change);
	kv_num(f, &first, "log_change", c->before.median > 0 && c->after.median > 0 ?
		log(c->after.median / c->before.median) : NAN);
	kv_int(f, &first, "days_before", c->days_before);
	kv_int(f, &first, "days_after", c->days_after);
	kv_int(f, &first, "data_days_before", c->data_days_before);
	kv_int(f, &first, "data_days_after", c->data_days_after);
	kv_bool(f, &first, "too_short", c->too_short);
	kv_num(f, &first, "ci_low", c->has_ci ? c->ci.lo : NAN);
	kv_num(f, &first, "ci_high", c->has_ci ? c->ci.hi : NAN);
	key(f, &first, "blocks");
	if (c->has_ci) {
		bool bf = true;

		fputc('{', f);
		for (int side = 0; side < 2; side++) {
			const double *m = side ? c->bc.block_after : c->bc.block_before;

			key(f, &bf, side ? "after_medians" : "before_medians");
			fputc('[', f);
			for (int k = 0; k < STATS_HOST_BLOCKS; k++) {
				if (k)
					fputc(',', f);
				num(f, m[k]);
			}
			fputc(']', f);
		}
		key(f, &bf, "first_block_days");
		fprintf(f, "[%u,%u]", stats_block_days(c->days_before), stats_block_days(c->days_after));
		t_json(f, &bf, &c->bc.log);
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	kv_num(f, &first, "mann_whitney_u", c->has_mwu ? c->mwu.u : NAN);
	kv_num(f, &first, "mann_whitney_p", c->has_mwu ? c->mwu.p : NAN);
	kv_str(f, &first, "verdict", verdict_to_string(c->verdict));
	kv_str(f, &first, "reason", c->reason);
	fputc('}', f);
}

static void host_json(FILE *f, const struct report *r, const struct host *h)
{
	bool first = true;

	fputc('{', f);
	kv_str(f, &first, "hostname", h->hostname);
	kv_str(f, &first, "machine_id", h->machine_id);
	kv_str(f, &first, "db", h->db);
	kv_bool(f, &first, "no_pmu", h->no_pmu);
	kv_bool(f, &first, "lru_gen_off", h->lru_gen_off);

	key(f, &first, "kernels");
	fputc('[', f);
	for (size_t k = 0; k < h->nr_kernels; k++) {
		const struct kernel_info *ki = &h->kernels[k];
		bool kf = true;

		fputs(k ? ",{" : "{", f);
		kv_str(f, &kf, "release", ki->release);
		kv_str(f, &kf, "version", ki->version);
		kv_str(f, &kf, "build_id", ki->build_id);
		key(f, &kf, "markers");
		fputc('[', f);
		for (size_t m = 0; m < ki->nr_markers; m++) {
			if (m)
				fputc(',', f);
			json_puts(f, ki->markers[m]);
		}
		fputc(']', f);
		key(f, &kf, "patches");
		fputc('{', f);
		for (int p = 0; p < NR_PATHS; p++) {
			bool pf = true, first_path = p == 0;

			key(f, &first_path, path_ids[p]);
			fputc('{', f);
			kv_str(f, &pf, "state", patch_state_to_string(ki->patches[p].state));
			kv_str(f, &pf, "why", ki->patches[p].why);
			fputc('}', f);
		}
		fputs("}}", f);
	}
	fputc(']', f);

	key(f, &first, "boots");
	fputc('[', f);
	for (size_t b = 0; b < h->nr_boots; b++) {
		const struct boot_info *bi = &h->boots[b];
		bool bf = true;

		fputs(b ? ",{" : "{", f);
		kv_int(f, &bf, "boot_id", bi->boot_id);
		kv_time(f, &bf, "start", bi->start_ns);
		kv_time(f, &bf, "last_seen", bi->last_seen_ns);
		kv_int(f, &bf, "kernel", (int64_t)bi->kernel);
		kv_int(f, &bf, "cpus", bi->nr_cpus);
		kv_str(f, &bf, "pmu_kind", bi->pmu_kind);
		kv_str(f, &bf, "pmu_detail", bi->pmu_detail);
		kv_str(f, &bf, "lru_gen", bi->lru_gen);
		fputc('}', f);
	}
	fputc(']', f);

	key(f, &first, "rollouts");
	fputc('[', f);
	for (size_t i = 0; i < h->nr_rollouts; i++) {
		const struct rollout *ro = &h->rollouts[i];
		bool rf = true;

		fputs(i ? ",{" : "{", f);
		kv_time(f, &rf, "time", ro->t_ns);
		kv_int(f, &rf, "from", (int64_t)ro->from);
		kv_int(f, &rf, "to", (int64_t)ro->to);
		kv_bool(f, &rf, "rollback", ro->rollback);
		kv_bool(f, &rf, "in_range", h->rollout_in_range[i]);
		key(f, &rf, "patches");
		fputc('{', f);
		for (int p = 0; p < NR_PATHS; p++)
			fprintf(f, "%s\"%s\":\"%s\"", p ? "," : "", path_ids[p],
				patch_change_to_string(ro->change[p]));
		fputs("}}", f);
	}
	fputc(']', f);

	key(f, &first, "paths");
	fputc('{', f);
	for (int p = 0; p < NR_PATHS; p++) {
		const struct host_path *hp = &h->path[p];
		bool pf = true, first_path = p == 0;

		key(f, &first_path, path_ids[p]);
		fputc('{', f);
		kv_int(f, &pf, "measured", (int64_t)hp->measured);
		kv_num(f, &pf, "median_rate", hp->median);
		kv_int(f, &pf, "hitm", hp->hitm);
		key(f, &pf, "chosen");
		if (hp->chosen >= 0)
			fprintf(f, "%zd", hp->chosen);
		else
			fputs("null", f);
		kv_str(f, &pf, "excluded", hp->excluded_why);
		key(f, &pf, "controls");
		fputc('[', f);
		for (size_t c = 0; c < h->nr_controls[p]; c++) {
			const struct control *ct = &h->controls[p][c];
			bool cf = true;

			fputs(c ? ",{" : "{", f);
			kv_int(f, &cf, "cohort", ct->cohort);
			key(f, &cf, "before");
			window_json(f, &ct->before);
			key(f, &cf, "after");
			window_json(f, &ct->after);
			kv_num(f, &cf, "log_change", ct->log_change);
			fputc('}', f);
		}
		fputc(']', f);
		key(f, &pf, "comparisons");
		fputc('[', f);
		for (size_t c = 0; c < hp->nr_cmp; c++) {
			if (c)
				fputc(',', f);
			comparison_json(f, &hp->cmp[c]);
		}
		fputs("]}", f);
	}
	fputc('}', f);

	key(f, &first, "quality");
	{
		const struct quality *q = &h->q;
		bool qf = true;

		fputc('{', f);
		kv_int(f, &qf, "intervals", (int64_t)q->intervals);
		kv_num(f, &qf, "interval_s", q->interval_s);
		kv_int(f, &qf, "partial", (int64_t)q->partial);
		kv_int(f, &qf, "not_analyzed", (int64_t)q->not_analyzed);
		kv_int(f, &qf, "gaps", (int64_t)q->gaps);
		kv_num(f, &qf, "gap_s", (double)q->gap_ns / 1e9);
		kv_num(f, &qf, "max_gap_s", (double)q->max_gap_ns / 1e9);
		kv_int(f, &qf, "events_lost", q->events_lost);
		kv_int(f, &qf, "samples_lost", q->samples_lost);
		kv_int(f, &qf, "throttled", q->throttled);
		kv_int(f, &qf, "dropped_intervals", q->dropped_intervals);
		kv_int(f, &qf, "boots", (int64_t)q->boots);
		kv_int(f, &qf, "boots_with_pmu", (int64_t)q->pmu_boots);
		fputc('}', f);
	}
	fputc('}', f);
}

int report_write_json(const struct report *r, FILE *f)
{
	bool first = true;

	fputc('{', f);
	kv_int(f, &first, "mmhitm_report", REPORT_VERSION);
	kv_time(f, &first, "generated", r->generated_ns);
	key(f, &first, "range");
	{
		bool rf = true;

		fputc('{', f);
		kv_time(f, &rf, "since", r->o.since_ns);
		kv_time(f, &rf, "until", r->o.until_ns);
		kv_time(f, &rf, "data_from", r->data_lo_ns);
		fputc('}', f);
	}
	key(f, &first, "parameters");
	{
		bool pf = true;

		fputc('{', f);
		kv_num(f, &pf, "before_s", (double)r->o.before_ns / 1e9);
		kv_num(f, &pf, "after_s", (double)r->o.after_ns / 1e9);
		kv_num(f, &pf, "warmup_s", (double)r->o.warmup_ns / 1e9);
		kv_num(f, &pf, "cohort_s", (double)r->o.cohort_ns / 1e9);
		kv_int(f, &pf, "host_blocks", STATS_HOST_BLOCKS);
		kv_num(f, &pf, "confidence_level", r->o.level);
		kv_num(f, &pf, "margin", r->o.margin);
		kv_int(f, &pf, "min_intervals", r->o.min_intervals);
		kv_int(f, &pf, "min_hosts", r->o.min_hosts);
		kv_str(f, &pf, "patch_map", r->o.patches_origin);
		fputc('}', f);
	}
	key(f, &first, "summary");
	{
		bool sf = true;

		fputc('{', f);
		kv_int(f, &sf, "databases", (int64_t)r->nr_dbs);
		kv_int(f, &sf, "unreadable", (int64_t)r->nr_errors);
		kv_int(f, &sf, "hosts", (int64_t)r->nr_hosts);
		kv_int(f, &sf, "hosts_rolled", (int64_t)r->hosts_rolled);
		kv_int(f, &sf, "kernel_changes", (int64_t)r->rollouts_in_range);
		kv_int(f, &sf, "rollbacks", (int64_t)r->rollbacks_in_range);
		kv_num(f, &sf, "seconds", r->seconds);
		fputc('}', f);
	}

	key(f, &first, "paths");
	fputc('[', f);
	for (int p = 0; p < NR_PATHS; p++) {
		const struct fleet_path *fp = &r->fleet[p];
		bool pf = true;

		fputs(p ? ",{" : "{", f);
		kv_str(f, &pf, "path", path_ids[p]);
		kv_str(f, &pf, "title", path_titles[p]);
		kv_str(f, &pf, "work_unit", path_units[p]);
		kv_num(f, &pf, "per", path_per[p]);
		kv_str(f, &pf, "verdict", verdict_to_string(fp->verdict));
		kv_str(f, &pf, "reason", fp->reason);
		kv_str(f, &pf, "basis", fp->basis);
		key(f, &pf, "paired");
		change_json(f, &fp->paired, false);
		if (fp->paired.valid) {
			kv_num(f, &pf, "wilcoxon_t", fp->has_wilcoxon ? fp->wilcoxon.t : NAN);
			kv_num(f, &pf, "wilcoxon_p", fp->has_wilcoxon ? fp->wilcoxon.p : NAN);
		}
		key(f, &pf, "did");
		change_json(f, &fp->did, true);
		kv_num(f, &pf, "median_host_change", fp->median_host_change);
		key(f, &pf, "hosts");
		fprintf(f, "{\"with_data\":%zu,\"gained_patch\":%zu,\"compared\":%zu,\"controls\":%zu,"
			"\"improved\":%zu,\"regressed\":%zu,\"unchanged\":%zu,\"inconclusive\":%zu,"
			"\"too_short\":%zu}",
			fp->hosts_measured, fp->candidates, fp->nr_treated, fp->controls_hosts,
			fp->improved, fp->regressed, fp->unchanged, fp->undecided, fp->too_short);
		key(f, &pf, "excluded");
		fprintf(f, "{\"no_pmu\":%zu,\"too_few_intervals\":%zu,\"zero_median\":%zu,"
			"\"patch_unknown\":%zu,\"patch_not_gained\":%zu}",
			fp->ex_no_pmu, fp->ex_few, fp->ex_zero, fp->ex_unknown_patch, fp->ex_not_gained);
		key(f, &pf, "distribution");
		hist_json(f, fp);
		key(f, &pf, "series");
		if (series_json(f, r, p) < 0)
			return -ENOMEM;
		key(f, &pf, "top_lines");
		lines_json(f, r, fp->top, fp->nr_top);
		fputc('}', f);
	}
	fputc(']', f);

	key(f, &first, "other_lines");
	lines_json(f, r, r->other_top, r->nr_other_top);
	key(f, &first, "hitm_by_path");
	fputc('[', f);
	for (size_t i = 0; i < r->nr_shares; i++) {
		fputs(i ? ",{\"path\":" : "{\"path\":", f);
		json_puts(f, r->shares[i].path);
		fprintf(f, ",\"hitm\":%" PRId64 ",\"samples\":%" PRId64 "}", r->shares[i].hitm,
			r->shares[i].samples);
	}
	fputc(']', f);

	key(f, &first, "kernel_changes");
	{
		struct kernel_pair *kp = NULL;
		size_t n = 0;

		if (report_kernel_pairs(r, &kp, &n) < 0)
			return -ENOMEM;
		fputc('[', f);
		for (size_t i = 0; i < n; i++) {
			bool kf = true;

			fputs(i ? ",{" : "{", f);
			kv_str(f, &kf, "from_release", kp[i].from->release);
			kv_str(f, &kf, "from_build_id", kp[i].from->build_id);
			kv_str(f, &kf, "to_release", kp[i].to->release);
			kv_str(f, &kf, "to_build_id", kp[i].to->build_id);
			key(f, &kf, "patches");
			fputc('{', f);
			for (int p = 0; p < NR_PATHS; p++)
				fprintf(f, "%s\"%s\":[\"%s\",\"%s\"]", p ? "," : "", path_ids[p],
					patch_state_to_string(kp[i].from->patches[p].state),
					patch_state_to_string(kp[i].to->patches[p].state));
			fputc('}', f);
			kv_int(f, &kf, "hosts", (int64_t)kp[i].hosts);
			kv_int(f, &kf, "changes", (int64_t)kp[i].changes);
			kv_int(f, &kf, "rollbacks", (int64_t)kp[i].rollbacks);
			fputc('}', f);
		}
		fputc(']', f);
		free(kp);
	}
	key(f, &first, "cohorts");
	fputc('[', f);
	for (size_t i = 0; i < r->nr_cohorts; i++) {
		bool cf = true;

		fputs(i ? ",{" : "{", f);
		kv_time(f, &cf, "reference", r->cohorts[i].ref_ns);
		kv_time(f, &cf, "first", r->cohorts[i].first_ns);
		kv_time(f, &cf, "last", r->cohorts[i].last_ns);
		kv_int(f, &cf, "kernel_changes", (int64_t)r->cohorts[i].rollouts);
		fputc('}', f);
	}
	fputc(']', f);

	key(f, &first, "unreadable");
	fputc('[', f);
	for (size_t i = 0; i < r->nr_errors; i++) {
		fputs(i ? ",{\"db\":" : "{\"db\":", f);
		json_puts(f, r->errors[i].db);
		fputs(",\"error\":", f);
		json_puts(f, r->errors[i].error);
		fputc('}', f);
	}
	fputc(']', f);

	key(f, &first, "hosts");
	fputc('[', f);
	for (size_t i = 0; i < r->nr_hosts; i++) {
		if (i)
			fputc(',', f);
		host_json(f, r, &r->hosts[i]);
	}
	fputs("]}\n", f);
	return ferror(f) ? -EIO : 0;
}
