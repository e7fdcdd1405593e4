// SPDX-License-Identifier: GPL-2.0
/*
 * The HTML report: one self-contained file. No script, no external asset,
 * and a Content-Security-Policy that forbids both, so a string a host sent
 * that escaped escaping still could not run or fetch anything.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "escape.h"
#include "paths.h"
#include "report-model.h"
#include "svg.h"
#include "util.h"

#define MAX_ROWS 200		/* per detail table; the JSON has all */

/*
 * A chart drawn twice, wide and narrow (svg.h: enum chart_width): the
 * stylesheet shows the one that fits the screen. What a chart says when it
 * has nothing to draw, it says once.
 */
#define BOTH_WIDTHS(ret, call)					\
	do {							\
		chart_set_width(CHART_WIDE);			\
		(ret) = (call);					\
		if ((ret) == 0) {				\
			chart_set_width(CHART_NARROW);		\
			(ret) = (call);				\
		}						\
		chart_set_width(CHART_ONE);			\
	} while (0)

static const char css[] =
	"body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:0 16px 40px;color:#1f2328}"
	"h1{font-size:22px;margin:18px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d0d7de}"
	"h3{font-size:15px;margin:16px 0 6px}nav a{margin-right:12px}"
	"table{border-collapse:collapse;margin:6px 0 12px;font-size:13px;display:block;max-width:100%;"
	"overflow-x:auto}#summary table{display:table;width:100%}"
	"th,td{border:1px solid #d0d7de;padding:3px 7px;text-align:left;vertical-align:top}"
	"th{background:#f6f8fa}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	".v{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;white-space:nowrap}"
	".v-improved{background:#dafbe1;color:#116329}.v-regressed{background:#ffebe9;color:#a40e26}"
	".v-no-change{background:#ddf4ff;color:#0a3069}.v-insufficient-data{background:#fff8c5;color:#7d4e00}"
	".v-not-applicable{background:#eaeef2;color:#424a53}"
	".muted{color:#656d76}.cap{flex-basis:100%;margin:0 0 10px;font-size:12px}.mono{font-family:ui-monospace,monospace;font-size:12px}"
	".charts{display:flex;flex-wrap:wrap;gap:8px}"
	"svg.chart{background:#fff;border:1px solid #eaeef2;max-width:100%;height:auto}svg.narrow{display:none}"
	"svg .frame{fill:none;stroke:#8c959f}svg .grid{stroke:#eaeef2}"
	"svg .tick,svg .legend{font-size:11px;fill:#57606a}svg .axis{font-size:11px;fill:#24292f}"
	"svg polyline{fill:none;stroke-width:1.6}svg polygon{stroke:none;opacity:.18}"
	"svg .s-carries{stroke:#1a7f37}svg .s-lacks{stroke:#bc4c00}svg .s-unknown{stroke:#6e7781}"
	"svg .s-work{stroke:#0969da}svg .s-before{stroke:#6e7781}svg .s-after{stroke:#0969da}"
	"svg rect.s-carries,svg polygon.s-carries{fill:#1a7f37}svg rect.s-lacks,svg polygon.s-lacks{fill:#bc4c00}"
	"svg rect.s-unknown,svg polygon.s-unknown{fill:#6e7781}svg rect.s-work{fill:#0969da}"
	"svg rect.s-before{fill:#6e7781}svg rect.s-after{fill:#0969da}"
	"svg rect.p0{fill:#0969da}svg rect.p1{fill:#1a7f37}svg rect.p2{fill:#bc4c00}svg rect.p3{fill:#8250df}"
	"svg rect.p4{fill:#bf3989}svg rect.p5{fill:#4d2d00}svg rect.p6{fill:#1b7c83}svg rect.p7{fill:#57606a}"
	"svg polyline.s-before,svg polyline.s-after{stroke-width:2}"
	"svg .v-range{stroke:#24292f;stroke-dasharray:4 3}"
	"svg .v-cohort{stroke:#8250df;stroke-width:1.5;stroke-dasharray:2 2}"
	"svg .v-zero{stroke:#24292f}svg .margin{fill:#ddf4ff;opacity:.6;stroke:none}"
	"svg .tickmark{fill:#8250df;opacity:.6}svg .ci{stroke:#0969da;stroke-width:1.5}"
	"svg .dot-improved{fill:#1a7f37}svg .dot-regressed{fill:#cf222e}svg .dot-other{fill:#6e7781}"
	/* a phone: the verdicts as stacked cards, each cell named, and no
	 * word wider than the screen; other tables scroll in their own box */
	"body{overflow-wrap:break-word}"
	"@media (max-width:640px){body{padding:0 8px 24px}svg.wide{display:none}svg.narrow{display:block}"
	"#summary table,#summary tbody,#summary tr,#summary td{display:block;width:auto}"
	"#summary tr:first-child{display:none}#summary tr{border:1px solid #d0d7de;margin:0 0 8px;padding:4px 8px}"
	"#summary td{border:none;padding:1px 0;text-align:left;white-space:normal}"
	"#summary td::before{font-weight:600;color:#656d76}"
	"#summary td:nth-of-type(2)::before{content:'Change: '}#summary td:nth-of-type(3)::before{content:'Verdict: '}"
	"#summary td:nth-of-type(4)::before{content:'Fleet change: '}"
	"#summary td:nth-of-type(5)::before{content:'Deciding interval: '}"
	"#summary td:nth-of-type(6)::before{content:'Basis: '}"
	"#summary td:nth-of-type(7)::before{content:'Hosts compared: '}"
	"#summary td:nth-of-type(8)::before{content:'HITM typed by: '}"
	"#summary td:nth-of-type(9)::before{content:'Why: '}}"
	"svg .bar{fill:#0969da;opacity:.7}svg .label{font-size:11px;fill:#24292f}"
	"svg .k0{fill:#0969da}svg .k1{fill:#1a7f37}svg .k2{fill:#bc4c00}svg .k3{fill:#8250df}"
	"svg .k4{fill:#bf3989}svg .k5{fill:#1b7c83}svg .k6{fill:#953800}svg .k7{fill:#8c959f}"
	"svg .area{opacity:.85;stroke:none}"
	"svg .p0{stroke:#0969da}svg .p1{stroke:#1a7f37}svg .p2{stroke:#bc4c00}svg .p3{stroke:#8250df}"
	"svg .p4{stroke:#bf3989}svg .p5{stroke:#4d2d00}svg .p6{stroke:#1b7c83}svg .p7{stroke:#57606a}"
	"details{margin:6px 0}summary{cursor:pointer;color:#0969da}"
	".methods p,.methods li{max-width:900px}";

static const char *verdict_class(enum verdict v)
{
	switch (v) {
	case VERDICT_IMPROVED: return "v-improved";
	case VERDICT_REGRESSED: return "v-regressed";
	case VERDICT_NO_CHANGE: return "v-no-change";
	case VERDICT_NOT_APPLICABLE: return "v-not-applicable";
	default: return "v-insufficient-data";
	}
}

static void badge(FILE *f, enum verdict v)
{
	fprintf(f, "<span class=\"v %s\">%s</span>", verdict_class(v), verdict_to_string(v));
}

static void td_pct(FILE *f, double v)
{
	char b[32];

	fmt_pct(b, sizeof(b), v);
	fprintf(f, "<td class=\"n\">%s</td>", b);
}

static void td_rate(FILE *f, double v)
{
	char b[32];

	fmt_rate(b, sizeof(b), v);
	fprintf(f, "<td class=\"n\">%s</td>", b);
}

static void td_time(FILE *f, int64_t ns)
{
	char b[40];

	fmt_time(b, sizeof(b), ns);
	fprintf(f, "<td>%s</td>", b);
}

static void td_text(FILE *f, const char *s)
{
	fputs("<td>", f);
	html_puts(f, s);
	fputs("</td>", f);
}

static const struct fleet_change *fleet_basis(const struct fleet_path *fp)
{
	return fp->basis && strstr(fp->basis, "difference") ? &fp->did : &fp->paired;
}

/* --- header and summary ------------------------------------------------------ */

static void write_head(const struct report *r, FILE *f)
{
	char a[40], b[40];

	fmt_date(a, sizeof(a), r->o.since_ns);
	fmt_date(b, sizeof(b), r->o.until_ns);
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		"style-src 'unsafe-inline'; img-src data:\">"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		"<title>mmhitm report %s .. %s</title><style>%s</style></head><body>\n", a, b, css);
}

/* A banner no reader can miss when hosts were generated, not recorded. */
static void simulated_banner(const struct report *r, FILE *f)
{
	if (!r->nr_simulated)
		return;
	fputs("<p class=\"simulated\" style=\"background:#fff8c5;border:1px solid #d4a72c;border-radius:6px;"
	      "padding:6px 10px;font-weight:600\">Simulated data: ", f);
	if (r->nr_simulated < r->nr_hosts)
		fprintf(f, "%zu of %zu hosts generated by ", r->nr_simulated, r->nr_hosts);
	else
		fputs("generated by ", f);
	html_puts(f, r->simulated_by);
	fputs(", not a recording.</p>", f);
}

static void write_header(const struct report *r, FILE *f)
{
	char a[40], b[40], g[40];

	fmt_time(a, sizeof(a), r->o.since_ns);
	fmt_time(b, sizeof(b), r->o.until_ns);
	fmt_time(g, sizeof(g), r->generated_ns);
	fprintf(f, "<header><h1>mmhitm: did the patched kernels stop the mm cache-line bouncing?</h1>"
		"<p class=\"muted\">Range %s .. %s (UTC) &middot; %zu host%s from ", a, b, r->nr_hosts,
		r->nr_hosts == 1 ? "" : "s");
	if (r->source && strcmp(r->source, "clickhouse") == 0)
		fputs("the ClickHouse cluster", f);
	else
		fprintf(f, "%zu database%s", r->nr_dbs, r->nr_dbs == 1 ? "" : "s");
	if (r->o.rollup_ns > 0) {
		char gr[32];

		fmt_duration(gr, sizeof(gr), r->o.rollup_ns);
		fprintf(f, " (rates per %s roll-up bucket)", gr);
	}
	if (r->nr_errors)
		fprintf(f, " (%zu unreadable)", r->nr_errors);
	fprintf(f, " &middot; %zu kernel change%s on %zu host%s &middot; generated %s in %.1f s</p>",
		r->rollouts_in_range, r->rollouts_in_range == 1 ? "" : "s", r->hosts_rolled,
		r->hosts_rolled == 1 ? "" : "s", g, r->seconds);
	simulated_banner(r, f);
	fputs("</header>\n", f);
	fputs("<nav><a href=\"#answer\">Answer</a><a href=\"#summary\">Verdicts</a><a href=\"#rollouts\">Rollouts</a>", f);
	for (int p = 0; p < paths_nr(); p++)
		fprintf(f, "<a href=\"#path-%s\">%s</a>", path_get(p)->id, path_get(p)->id);
	fputs("<a href=\"#hitm-share\">All HITM</a><a href=\"#hosts\">Hosts</a>"
	      "<a href=\"#quality\">Data quality</a><a href=\"#methods\">Methods</a></nav>\n", f);
}

/* The headline: per path the answer, the one host's own verdict or the fleet's. */
static void write_answers(const struct report *r, FILE *f)
{
	fprintf(f, "<section id=\"answer\"><h2>%s</h2><ul>",
		r->nr_hosts == 1 ? "This host's answer" : "The fleet's answer");
	for (int p = 0; p < paths_nr(); p++) {
		const char *basis, *reason;
		char nums[128];

		answer_parts(&r->answer[p], nums, sizeof(nums), &basis, &reason);
		fprintf(f, "<li><b><a href=\"#path-%s\">%s</a></b> ", path_get(p)->id, path_get(p)->id);
		badge(f, r->answer[p].verdict);
		fputs(nums, f);
		if (basis) {
			fputs(", by ", f);
			html_puts(f, basis);
		}
		if (reason) {
			fputs(": ", f);
			html_puts(f, reason);
		}
		fputs("</li>", f);
	}
	fputs("</ul>", f);
	if (r->nr_hosts == 1)
		fprintf(f, "<p class=\"muted\">One host: the fleet verdicts below need %u compared hosts "
			"(--min-hosts).</p>", r->o.min_hosts);
	fputs("</section>\n", f);
}

static void write_summary(const struct report *r, FILE *f)
{
	write_answers(r, f);
	fputs("<section id=\"summary\"><h2>Fleet verdicts</h2><table><tr><th>Path</th><th>Change</th>"
	      "<th>Verdict</th><th>Fleet change</th><th>Deciding interval</th><th>Basis</th>"
	      "<th>Hosts compared</th><th>HITM typed by</th><th>Why</th></tr>\n", f);
	for (int p = 0; p < paths_nr(); p++) {
		const struct fleet_path *fp = &r->fleet[p];
		const struct fleet_change *c = fleet_basis(fp);
		char ci[80], grades[160];

		fprintf(f, "<tr><td><a href=\"#path-%s\">%s</a></td>", path_get(p)->id, path_get(p)->id);
		td_text(f, path_get(p)->title);
		fputs("<td>", f);
		badge(f, fp->verdict);
		fputs("</td>", f);
		if (c->valid) {
			/* "No change" is decided by the 90 % interval (two one-sided tests). */
			bool eq = fp->verdict == VERDICT_NO_CHANGE;

			td_pct(f, c->estimate);
			fmt_ci(ci, sizeof(ci), eq ? c->ci.eq_lo : c->ci.lo, eq ? c->ci.eq_hi : c->ci.hi);
			fprintf(f, "<td class=\"n\">%s (%.0f %%)</td>", ci,
				100 * (eq ? 2 * r->o.level - 1 : r->o.level));
		} else {
			fputs("<td class=\"n\">-</td><td class=\"n\">-</td>", f);
		}
		td_text(f, fp->basis ? fp->basis : "-");
		fprintf(f, "<td class=\"n\">%zu</td>", fp->nr_treated);
		grades_phrase(grades, sizeof(grades), fp);
		td_text(f, grades);
		td_text(f, fp->reason);
		fputs("</tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

/* --- rollouts ------------------------------------------------------------------ */

/* One column header per path of the table, and the row's end. */
static void path_headers(FILE *f)
{
	for (int p = 0; p < paths_nr(); p++) {
		fputs("<th>", f);
		html_puts(f, path_get(p)->id);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
}

/* The state and the rule that decided it, in plain sight. */
static void patch_cell(FILE *f, const struct patch_verdict *v)
{
	fprintf(f, "<td>%s<br><span class=\"muted mono\">", patch_state_to_string(v->state));
	html_puts(f, v->why ? v->why : "no rule matches");
	fputs("</span></td>", f);
}

/* Per kernel the patch map does not know for some path, the rule to add and where. */
static void patch_map_missing(const struct report *r, FILE *f, const struct fleet_kernel *fk, size_t nk)
{
	for (size_t i = 0; i < nk; i++) {
		unsigned int unknown = patch_unknown_mask(fk[i].k);
		char label[128], line[256];

		if (!unknown)
			continue;
		kernel_label(label, sizeof(label), fk[i].k);
		patch_map_line(line, sizeof(line), fk[i].k, unknown);
		fputs("<p>", f);
		html_puts(f, label);
		fputs(": no rule matches; add <code>carries ", f);
		html_puts(f, line);
		fputs("</code> (or <code>lacks ...</code>) to <code>", f);
		html_puts(f, patch_map_file(r));
		fputs("</code>.</p>\n", f);
	}
}

/* Each (from, to) pair of kernels the hosts changed between, and the patches either side carries. */
static int kernel_pairs_table(const struct report *r, FILE *f)
{
	struct kernel_pair *kp = NULL;
	size_t n = 0;

	if (report_kernel_pairs(r, &kp, &n) < 0)
		return -ENOMEM;
	fputs("<h3>What the kernel changes changed</h3><table><tr><th>From</th><th>Carries</th>"
	      "<th>To</th><th>Carries</th><th>Hosts</th><th>Changes</th><th>Rollbacks</th></tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		char a[128], b[32];

		fputs("<tr>", f);
		kernel_label(a, sizeof(a), kp[i].from);
		td_text(f, a);
		patch_list(b, sizeof(b), kp[i].from, PATCH_CARRIES);
		td_text(f, b);
		kernel_label(a, sizeof(a), kp[i].to);
		td_text(f, a);
		patch_list(b, sizeof(b), kp[i].to, PATCH_CARRIES);
		td_text(f, b);
		fprintf(f, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td></tr>\n",
			kp[i].hosts, kp[i].changes, kp[i].rollbacks);
	}
	if (!n)
		fputs("<tr><td colspan=\"7\" class=\"muted\">none</td></tr>", f);
	fputs("</table>\n", f);
	free(kp);
	return 0;
}

/* Every kernel in the fleet, its markers, and the patch map's state per path. */
static void kernels_table(const struct report *r, FILE *f, const struct fleet_kernel *fk, size_t nk)
{
	fputs("<h3>Kernels and the patches they carry</h3><p>Patch map: <code>", f);
	html_puts(f, r->o.patches_origin ? r->o.patches_origin : "built-in");
	fputs("</code>", f);
	if (r->o.patches_origin && strcmp(r->o.patches_origin, "built-in") == 0) {
		fputs(" (there is no <code>", f);
		html_puts(f, patch_map_file(r));
		fputs("</code>)", f);
	}
	fputs("; for each path the last matching rule decides.</p><table><tr><th>Release</th>"
	      "<th>Version</th><th>Build-id</th><th>Hosts</th><th>Markers</th>", f);
	path_headers(f);
	for (size_t i = 0; i < nk; i++) {
		const struct kernel_info *k = fk[i].k;

		fputs("<tr>", f);
		td_text(f, k->release);
		td_text(f, k->version);
		fputs("<td class=\"mono\">", f);
		html_puts(f, k->build_id ? k->build_id : "-");
		fprintf(f, "</td><td class=\"n\">%zu</td><td class=\"mono\">", fk[i].hosts);
		for (size_t m = 0; m < k->nr_markers; m++) {
			if (m)
				fputs(", ", f);
			html_puts(f, k->markers[m]);
		}
		fputs("</td>", f);
		for (int p = 0; p < paths_nr(); p++)
			patch_cell(f, &k->patches[p]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
	patch_map_missing(r, f, fk, nk);
}

/* Every kernel change in the range, host by host, folded away when there are many. */
static void changes_table(const struct report *r, FILE *f)
{
	size_t rows = 0;

	fprintf(f, "<details%s><summary>Every kernel change in the range (%zu)</summary>",
		r->rollouts_in_range <= 20 ? " open" : "", r->rollouts_in_range);
	fputs("<table><tr><th>Host</th><th>Time</th><th>From</th><th>To</th><th>Kind</th>", f);
	path_headers(f);
	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		for (size_t k = 0; k < h->nr_rollouts; k++) {
			const struct rollout *ro = &h->rollouts[k];
			char a[128], b[128];

			if (!h->rollout_in_range[k])
				continue;
			if (++rows > MAX_ROWS)
				continue;
			fputs("<tr>", f);
			td_text(f, h->hostname);
			td_time(f, ro->t_ns);
			kernel_label(a, sizeof(a), &h->kernels[ro->from]);
			kernel_label(b, sizeof(b), &h->kernels[ro->to]);
			td_text(f, a);
			td_text(f, b);
			td_text(f, ro->rollback ? "rollback" : "rollout");
			for (int p = 0; p < paths_nr(); p++)
				td_text(f, patch_change_to_string(ro->change[p]));
			fputs("</tr>\n", f);
		}
	}
	if (!rows)
		fputs("<tr><td colspan=\"9\" class=\"muted\">none</td></tr>", f);
	fputs("</table>", f);
	if (rows > MAX_ROWS)
		fprintf(f, "<p class=\"muted\">%zu more in the JSON.</p>", rows - MAX_ROWS);
	fputs("</details>", f);
}

static int write_rollouts(const struct report *r, FILE *f)
{
	size_t nk = 0;
	struct fleet_kernel *fk = fleet_kernels(r, &nk);
	int ret;

	if (!fk)
		return -ENOMEM;
	fprintf(f, "<section id=\"rollouts\"><h2>Rollouts</h2><p>%zu kernel change%s on %zu host%s in the range, "
		"%zu of them rollback%s (back to a kernel the host ran before); %zu cohort%s "
		"(changes on the same day) for the difference in differences.</p>\n",
		r->rollouts_in_range, r->rollouts_in_range == 1 ? "" : "s", r->hosts_rolled,
		r->hosts_rolled == 1 ? "" : "s", r->rollbacks_in_range, r->rollbacks_in_range == 1 ? "" : "s",
		r->nr_cohorts, r->nr_cohorts == 1 ? "" : "s");
	fputs("<div class=\"charts\">", f);
	if (r->nr_hosts) {
		BOTH_WIDTHS(ret, progress_chart(r, f, fk, nk));
		if (ret == 0)
			BOTH_WIDTHS(ret, coverage_chart(r, f));
		if (ret < 0)
			goto out;
	}
	fputs("</div>\n", f);
	ret = kernel_pairs_table(r, f);
	if (ret < 0)
		goto out;
	kernels_table(r, f, fk, nk);
	changes_table(r, f);
	fputs("</section>\n", f);
out:
	free(fk);
	return ret;
}

/* --- per path ---------------------------------------------------------------- */

static void stats_table(const struct report *r, FILE *f, int p)
{
	const struct fleet_path *fp = &r->fleet[p];
	char ci[80], a[32];

	fputs("<table><tr><th>Estimate</th><th>Change</th><th>95 % CI</th><th>n</th><th>Notes</th></tr>", f);
	fputs("<tr><td>Paired: geometric mean of per-host ratios</td>", f);
	if (fp->paired.valid) {
		td_pct(f, fp->paired.estimate);
		fmt_ci(ci, sizeof(ci), fp->paired.ci.lo, fp->paired.ci.hi);
		fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%zu hosts</td>", ci, fp->paired.n);
		if (fp->has_wilcoxon)
			fprintf(f, "<td>Wilcoxon signed-rank T = %.1f, p = %.3g</td>", fp->wilcoxon.t, fp->wilcoxon.p);
		else
			fputs("<td>-</td>", f);
	} else {
		fputs("<td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">0</td><td>no compared host</td>", f);
	}
	fputs("</tr><tr><td>Difference in differences</td>", f);
	if (fp->did.valid) {
		td_pct(f, fp->did.estimate);
		fmt_ci(ci, sizeof(ci), fp->did.ci.lo, fp->did.ci.hi);
		fprintf(f, "<td class=\"n\">%s</td><td class=\"n\">%zu + %zu</td>"
			"<td>%zu rolled hosts against %zu measurements on %zu hosts that kept their kernel, "
			"%u cohort%s</td>", ci, fp->did.n, fp->did.n_controls, fp->did.n, fp->did.n_controls,
			fp->controls_hosts, fp->did.strata, fp->did.strata == 1 ? "" : "s");
	} else {
		fputs("<td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-</td>"
		      "<td>no host kept its kernel around the changes</td>", f);
	}
	fmt_pct(a, sizeof(a), fp->median_host_change);
	fprintf(f, "</tr><tr><td>Median per-host change</td><td class=\"n\">%s</td><td class=\"n\">-</td>"
		"<td class=\"n\">%zu</td><td>per host: %zu improved, %zu regressed, %zu unchanged, %zu inconclusive "
		"(%zu too short for a drift-robust interval)</td></tr>"
		"</table>\n", a, fp->nr_treated, fp->improved, fp->regressed, fp->unchanged, fp->undecided,
		fp->too_short);
	fprintf(f, "<p class=\"muted\">Hosts: %zu with measured %s rates; %zu changed to a kernel carrying %s; "
		"%zu compared. Hosts with kernel changes left out: %zu without PMU, %zu with too few "
		"measured intervals, %zu with a median of 0, %zu whose kernels the patch map does not know, "
		"%zu whose kernel changes did not add %s.</p>\n",
		fp->hosts_measured, path_get(p)->id, fp->candidates, path_get(p)->id, fp->nr_treated, fp->ex_no_pmu,
		fp->ex_few, fp->ex_zero, fp->ex_unknown_patch, fp->ex_not_gained, path_get(p)->id);
}

static void comparisons_table(const struct report *r, FILE *f, int p)
{
	size_t rows = 0;

	fputs("<details><summary>Per-host comparisons</summary><table><tr><th>Host</th><th>Change at</th>"
	      "<th>Patch</th><th>n before</th><th>n after</th><th>Median before</th><th>Median after</th>"
	      "<th>Change</th><th>95 % CI</th><th>Mann-Whitney p</th><th>Verdict</th><th>Why</th></tr>\n", f);
	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];
		const struct host_path *hp = &h->path[p];

		for (size_t k = 0; k < hp->nr_cmp; k++) {
			const struct comparison *c = &hp->cmp[k];
			const struct rollout *ro = &h->rollouts[c->rollout];
			char ci[80];

			if (++rows > MAX_ROWS)
				continue;
			fprintf(f, "<tr%s>", (ssize_t)k == hp->chosen ? " class=\"chosen\"" : "");
			td_text(f, h->hostname);
			td_time(f, ro->t_ns);
			td_text(f, patch_change_to_string(ro->change[p]));
			fprintf(f, "<td class=\"n\">%zu</td><td class=\"n\">%zu</td>", c->before.n, c->after.n);
			td_rate(f, c->before.median);
			td_rate(f, c->after.median);
			td_pct(f, c->change);
			fmt_ci(ci, sizeof(ci), c->has_ci ? c->ci.lo : NAN, c->has_ci ? c->ci.hi : NAN);
			fprintf(f, "<td class=\"n\">%s</td>", ci);
			if (c->has_mwu)
				fprintf(f, "<td class=\"n\">%.3g</td>", c->mwu.p);
			else
				fputs("<td class=\"n\">-</td>", f);
			fputs("<td>", f);
			badge(f, c->verdict);
			fputs("</td>", f);
			td_text(f, (ssize_t)k == hp->chosen ? c->reason :
				hp->excluded_why && ro->change[p] == CHANGE_GAINED ? hp->excluded_why : c->reason);
			fputs("</tr>\n", f);
		}
	}
	fputs("</table>", f);
	if (rows > MAX_ROWS)
		fprintf(f, "<p class=\"muted\">%zu more in the JSON.</p>", rows - MAX_ROWS);
	fputs("</details>\n", f);
}

static void lines_table(const struct report *r, FILE *f, const struct top_line *top, size_t n)
{
	if (!n) {
		fputs("<p class=\"muted\">No typed HITM lines in the range.</p>", f);
		return;
	}
	fputs("<table><tr><th>Host</th><th>Path</th><th>Cache line</th><th>Object</th><th>Field</th>"
	      "<th>Process (tgid)</th><th>HITM</th><th>local</th><th>remote</th><th>peer</th>"
	      "<th>loads</th><th>stores</th><th>Symbols</th></tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct top_line *l = &top[i];

		fputs("<tr>", f);
		td_text(f, host_name(r, l->host));
		td_text(f, l->path);
		fprintf(f, "<td class=\"mono\">0x%016" PRIx64 "</td>", (uint64_t)l->line_addr);
		td_text(f, l->object_type ? l->object_type : "unknown");
		td_text(f, l->field ? l->field : "-");
		fputs("<td>", f);
		if (l->comm)
			html_puts(f, l->comm);
		else
			fputs("-", f);
		if (l->tgid >= 0)
			fprintf(f, " (%" PRId64 ")", l->tgid);
		fprintf(f, "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64 "</td>"
			"<td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64
			"</td><td class=\"n\">%" PRId64 "</td>", l->hitm, l->lcl_hitm, l->rmt_hitm, l->peer,
			l->loads, l->stores);
		fputs("<td class=\"mono\">", f);
		html_puts(f, l->symbols ? l->symbols : "-");
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* What a kernel needs to run the path (the path table's needs), and why. */
static void needs_line(FILE *f, int p)
{
	char needs[64];

	needs_phrase(needs, sizeof(needs), p);
	if (!*needs) {
		fputs(" Runs on any kernel.", f);
		return;
	}
	fputs(" Runs only with ", f);
	html_puts(f, needs);
	fputs(": ", f);
	html_puts(f, path_get(p)->needs_why);
	fputs("; other hosts are not applicable.", f);
}

static int write_path(const struct report *r, FILE *f, int p)
{
	const struct fleet_path *fp = &r->fleet[p];
	int ret;

	fprintf(f, "<section id=\"path-%s\" class=\"path\"><h2>%s: ", path_get(p)->id, path_get(p)->id);
	html_puts(f, path_get(p)->title);
	fputs("</h2><p>", f);
	badge(f, fp->verdict);
	fputs(" ", f);
	html_puts(f, fp->reason);
	fprintf(f, "</p><p class=\"muted\">Rate: HITM (local + remote + peer) per %g %s, per interval.",
		path_get(p)->per, path_get(p)->unit);
	needs_line(f, p);
	fputs("</p>\n", f);
	stats_table(r, f, p);
	/* The event study first: each host against itself. The raw medians
	 * over time mix hosts: a host joins "carry" when it changes kernel,
	 * with its own level, so that median can rise while every host's
	 * rate falls. Each chart says what its marks are, under it. */
	fputs("<div class=\"charts\">", f);
	BOTH_WIDTHS(ret, event_chart(r, f, p));
	if (ret == 0)
		fputs("<p class=\"muted cap\">Each compared host against its own rate before its kernel "
		      "change (0 %: no change); the controls, hosts that kept their kernel, around their "
		      "cohort's reference time. Line: the median over hosts; band: the quartiles.</p>", f);
	if (ret >= 0)
		BOTH_WIDTHS(ret, series_chart(r, f, p));
	if (ret == 0) {
		fputs("<p class=\"muted cap\">Per time bin, the median rate of the hosts whose kernel "
		      "then carries, lacks or is unknown to the patch (band: quartiles). A host moves "
		      "between these groups when it changes kernel, with its own level: read the change "
		      "from the event study above, not from these medians. Ticks along the bottom: a "
		      "host's kernel change; dashed purple lines: the cohorts' reference times.</p>", f);
		BOTH_WIDTHS(ret, work_chart(r, f, p));
	}
	if (ret < 0)
		return ret;
	BOTH_WIDTHS(ret, (distribution_chart(r, f, p), 0));
	BOTH_WIDTHS(ret, host_change_chart(r, f, p));
	if (ret < 0)
		return ret;
	fputs("</div>\n", f);
	comparisons_table(r, f, p);
	fprintf(f, "<h3>Top %s cache lines</h3>", path_get(p)->id);
	lines_table(r, f, fp->top, fp->nr_top);
	fputs("</section>\n", f);
	return 0;
}

/* --- everything else --------------------------------------------------------------- */

static void write_shares(const struct report *r, FILE *f)
{
	int64_t total = 0;

	for (size_t i = 0; i < r->nr_shares; i++)
		total += r->shares[i].hitm;
	fputs("<section id=\"hitm-share\"><h2>All HITM, including what is not ", f);
	html_puts(f, paths_span());
	fputs("</h2><table><tr><th>Attributed to</th><th>HITM</th><th>Share</th><th>Samples</th></tr>\n", f);
	for (size_t i = 0; i < r->nr_shares; i++) {
		fputs("<tr>", f);
		td_text(f, r->shares[i].path);
		fprintf(f, "<td class=\"n\">%" PRId64 "</td><td class=\"n\">%.1f %%</td><td class=\"n\">%" PRId64
			"</td></tr>\n", r->shares[i].hitm,
			total ? 100.0 * (double)r->shares[i].hitm / (double)total : 0.0, r->shares[i].samples);
	}
	fputs("</table><h3>Top cache lines outside ", f);
	html_puts(f, paths_span());
	fputs("</h3>", f);
	lines_table(r, f, r->other_top, r->nr_other_top);
	fputs("</section>\n", f);
}

static void write_hosts(const struct report *r, FILE *f)
{
	fputs("<section id=\"hosts\"><h2>Hosts</h2><details><summary>Every host</summary><table><tr><th>Host</th>"
	      "<th>Database</th><th>Kernel now</th><th>PMU</th><th>LRU_GEN</th><th>Intervals</th>", f);
	for (int p = 0; p < paths_nr(); p++)
		fprintf(f, "<th>%s median</th><th>%s change</th>", path_get(p)->id, path_get(p)->id);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < r->nr_hosts && i < 10 * MAX_ROWS; i++) {
		const struct host *h = &r->hosts[i];
		const struct boot_info *last = h->nr_boots ? &h->boots[h->nr_boots - 1] : NULL;
		char k[128];

		fputs("<tr>", f);
		td_text(f, h->hostname);
		td_text(f, h->db);
		if (last) {
			kernel_label(k, sizeof(k), &h->kernels[last->kernel]);
			td_text(f, k);
			fputs("<td title=\"", f);
			html_puts(f, last->pmu_detail ? last->pmu_detail : "");
			fputs("\">", f);
			html_puts(f, last->pmu_kind);
			fputs("</td>", f);
			td_text(f, last->lru_gen);
		} else {
			fputs("<td>-</td><td>-</td><td>-</td>", f);
		}
		fprintf(f, "<td class=\"n\">%zu</td>", h->q.intervals);
		for (int p = 0; p < paths_nr(); p++) {
			const struct host_path *hp = &h->path[p];

			td_rate(f, hp->median);
			if (hp->chosen >= 0) {
				fputs("<td>", f);
				{
					char pc[32];

					fmt_pct(pc, sizeof(pc), hp->cmp[hp->chosen].change);
					fprintf(f, "%s ", pc);
				}
				badge(f, hp->cmp[hp->chosen].verdict);
				fputs("</td>", f);
			} else {
				td_text(f, hp->excluded_why ? hp->excluded_why : "-");
			}
		}
		fputs("</tr>\n", f);
	}
	fputs("</table></details></section>\n", f);
}

static int cmp_size_desc(const void *a, const void *b)
{
	int64_t x = ((const int64_t *)a)[0], y = ((const int64_t *)b)[0];

	return (x < y) - (x > y);
}

/* The hosts with the most of something, as "name (value)" pairs. */
static void worst_hosts(const struct report *r, FILE *f, int64_t (*get)(const struct host *), bool seconds)
{
	int64_t (*v)[2] = malloc((r->nr_hosts + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return;
	for (size_t i = 0; i < r->nr_hosts; i++) {
		int64_t x = get(&r->hosts[i]);

		if (x > 0) {
			v[n][0] = x;
			v[n++][1] = (int64_t)i;
		}
	}
	qsort(v, n, sizeof(*v), cmp_size_desc);
	for (size_t i = 0; i < n && i < 10; i++) {
		char d[32];

		if (i)
			fputs(", ", f);
		html_puts(f, r->hosts[v[i][1]].hostname);
		if (seconds)
			fmt_duration(d, sizeof(d), v[i][0]);
		else
			snprintf(d, sizeof(d), "%" PRId64, v[i][0]);
		fprintf(f, " (%s)", d);
	}
	if (n > 10)
		fprintf(f, " and %zu more", n - 10);
	if (!n)
		fputs("none", f);
	free(v);
}

static int64_t get_lost(const struct host *h) { return h->q.events_lost + h->q.samples_lost; }
static int64_t get_gap(const struct host *h) { return h->q.gap_ns; }
static int64_t get_dropped(const struct host *h) { return h->q.dropped_intervals; }
static int64_t get_not_analyzed(const struct host *h) { return (int64_t)h->q.not_analyzed; }
static int64_t get_throttled(const struct host *h) { return h->q.throttled; }

/* The hosts without a PMU and why, the first 20 of them. */
static void no_pmu_hosts(const struct report *r, FILE *f, size_t no_pmu)
{
	size_t shown = 0;

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];
		const struct boot_info *b = h->nr_boots ? &h->boots[h->nr_boots - 1] : NULL;

		if (!h->no_pmu || !b)
			continue;
		if (shown++ == 20) {
			fprintf(f, " and %zu more", no_pmu - 20);
			break;
		}
		if (shown > 1)
			fputs("; ", f);
		html_puts(f, h->hostname);
		fputs(": ", f);
		html_puts(f, b->pmu_detail ? b->pmu_detail : "no detail");
	}
}

/* A sampler that ran longer after the change sees more HITM per unit of work. */
static size_t duty_changes(const struct report *r)
{
	size_t duty = 0;

	for (size_t i = 0; i < r->nr_hosts; i++)
		for (int p = 0; p < paths_nr(); p++) {
			const struct host_path *hp = &r->hosts[i].path[p];
			const struct comparison *c;

			if (hp->chosen < 0)
				continue;
			c = &hp->cmp[hp->chosen];
			if (c->before.duty > 0 && c->after.duty > 0 &&
			    fabs(c->after.duty / c->before.duty - 1) > 0.2)
				duty++;
		}
	return duty;
}

/* Per path, the hosts left out because their kernels cannot run it, and what it needs. */
static void not_applicable_hosts(const struct report *r, FILE *f)
{
	bool any = false;

	for (int p = 0; p < paths_nr(); p++) {
		char needs[64];

		if (!r->fleet[p].ex_not_applicable)
			continue;
		needs_phrase(needs, sizeof(needs), p);
		fprintf(f, "%s%zu not applicable to ", any ? "; " : "", r->fleet[p].ex_not_applicable);
		html_puts(f, path_get(p)->id);
		fputs(" (it needs ", f);
		html_puts(f, needs);
		fputs(")", f);
		any = true;
	}
}

static void write_quality(const struct report *r, FILE *f)
{
	size_t hosts = 0, no_pmu = 0, lru_off = 0;
	int64_t lost = 0, samples_lost = 0, gap = 0, dropped = 0, partial = 0, na = 0;
	char d[32];

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		if (!h->q.boots)
			continue;
		hosts++;
		no_pmu += h->no_pmu;
		lru_off += h->lru_gen_off;
		lost += h->q.events_lost;
		samples_lost += h->q.samples_lost;
		gap += h->q.gap_ns;
		dropped += h->q.dropped_intervals;
		partial += (int64_t)h->q.partial;
		na += (int64_t)h->q.not_analyzed;
	}
	fprintf(f, "<section id=\"quality\"><h2>Data quality</h2><table>"
		"<tr><th>Hosts with data in the range</th><td class=\"n\">%zu</td><td></td></tr>", hosts);
	fprintf(f, "<tr><th>Hosts without PMU (HITM not measured)</th><td class=\"n\">%zu</td><td>", no_pmu);
	no_pmu_hosts(r, f, no_pmu);
	fprintf(f, "</td></tr><tr><th>Hosts without LRU_GEN on</th><td class=\"n\">%zu</td><td>", lru_off);
	not_applicable_hosts(r, f);
	fputs("</td></tr>", f);
	fprintf(f, "<tr><th>Ring-buffer events lost</th><td class=\"n\">%" PRId64 "</td><td rowspan=\"2\">", lost);
	worst_hosts(r, f, get_lost, false);
	fprintf(f, "</td></tr><tr><th>Memory samples lost</th><td class=\"n\">%" PRId64 "</td></tr>", samples_lost);
	fputs("<tr><th>Sampling throttled</th><td class=\"n\"></td><td>", f);
	worst_hosts(r, f, get_throttled, false);
	fmt_duration(d, sizeof(d), gap);
	fprintf(f, "</td></tr><tr><th>Gaps in recording (inside a boot)</th><td class=\"n\">%s</td><td>", d);
	worst_hosts(r, f, get_gap, true);
	fprintf(f, "</td></tr><tr><th>Intervals the daemon could not store</th><td class=\"n\">%" PRId64
		"</td><td>", dropped);
	worst_hosts(r, f, get_dropped, false);
	fprintf(f, "</td></tr><tr><th>Partial intervals</th><td class=\"n\">%" PRId64
		"</td><td></td></tr>", partial);
	fprintf(f, "<tr><th>Intervals not analyzed (run mmhitm analyze)</th><td class=\"n\">%" PRId64
		"</td><td>", na);
	worst_hosts(r, f, get_not_analyzed, false);
	fputs("</td></tr>", f);
	fprintf(f, "<tr><th>Comparisons whose sampling duty cycle changed by more than 20 %%</th>"
		"<td class=\"n\">%zu</td><td>HITM counts scale with the time sampling was on</td></tr>",
		duty_changes(r));
	fprintf(f, "<tr><th>Unreadable databases</th><td class=\"n\">%zu</td><td>", r->nr_errors);
	for (size_t i = 0; i < r->nr_errors; i++) {
		if (i)
			fputs("; ", f);
		html_puts(f, r->errors[i].db);
		fputs(": ", f);
		html_puts(f, r->errors[i].error);
	}
	fputs("</td></tr></table></section>\n", f);
}

static void write_methods(const struct report *r, FILE *f)
{
	char b[32], a[32], w[32], co[32];

	fmt_duration(b, sizeof(b), r->o.before_ns);
	fmt_duration(a, sizeof(a), r->o.after_ns);
	fmt_duration(w, sizeof(w), r->o.warmup_ns);
	fmt_duration(co, sizeof(co), r->o.cohort_ns);
	fputs("<section id=\"methods\" class=\"methods\"><h2>How each number was computed</h2><ul>", f);
	fputs("<li><b>Rate.</b> Per recording interval and path, the analyzer's "
	      "<code>path_rates.hitm_per_work</code>: "
	      "HITM samples (local + remote + peer) attributed to the path, per unit of the path's own work (", f);
	for (int p = 0; p < paths_nr(); p++) {
		fprintf(f, "%s%s: per %g ", p ? ", " : "", path_get(p)->id, path_get(p)->per);
		html_puts(f, path_get(p)->unit);
	}
	fputs("). Intervals with HITM not measured (no PMU) or without work are not rates, and "
	      "are counted, not used.", f);
	if (r->o.rollup_ns > 0) {
		char g[32];

		fmt_duration(g, sizeof(g), r->o.rollup_ns);
		fprintf(f, " <b>Granularity:</b> every rate here is one %s roll-up bucket of a boot (its "
			"intervals' HITM over their work, summed), read from %s; an &ldquo;interval&rdquo; below "
			"is such a bucket.", g, r->source && strcmp(r->source, "clickhouse") == 0 ?
			"the ClickHouse cluster" : "the host databases");
	} else {
		fputs(" <b>Granularity:</b> the intervals as recorded.", f);
	}
	fputs("</li>", f);
	fputs("<li><b>Rollouts.</b> Consecutive boots of a host on different kernels (different build-ids, or "
	      "release and version when a build-id is missing); the change happens when the later boot begins. "
	      "A change back to a kernel the host ran before the one it leaves is a rollback. The patch map (", f);
	html_puts(f, r->o.patches_origin ? r->o.patches_origin : "none");
	fputs(") says per kernel which of the paths' patches it carries; a host enters a path's verdict with a change "
	      "to a kernel carrying the patch from one that does not or may not.</li>", f);
	fprintf(f, "<li><b>Windows.</b> Before: up to %s before the change; after: up to %s after it, both cut at "
		"the host's previous and next kernel change and the end of the range, and cut to whole days "
		"when longer than a day so a daily load cycle weighs the same on both sides. Intervals starting "
		"within %s of a boot are left out (warm-up). A side needs %u measured intervals.</li>",
		b, a, w, r->o.min_intervals);
	fprintf(f, "<li><b>Per host.</b> Medians of the rates on each side (numpy's definition), the relative "
		"change median(after) / median(before) &minus; 1, and the two-sided Mann&ndash;Whitney U test "
		"(normal approximation with tie and continuity corrections, as scipy's method=\"asymptotic\"). "
		"The %.0f %% interval of the change allows for day-to-day drift: each side is cut into %d blocks "
		"of whole days, and the standard error of the log change is Welch's from the blocks' log "
		"medians, with Student's t at the Welch&ndash;Satterthwaite degrees of freedom. A side shorter "
		"than %d whole days gives no interval and no verdict (\"too short for a drift-robust "
		"interval\").</li>", 100 * r->o.level, STATS_HOST_BLOCKS, STATS_HOST_BLOCKS);
	fprintf(f, "<li><b>Fleet, paired.</b> Per compared host the log ratio of its levels (10 %% trimmed means); their mean gives the "
		"geometric-mean change, with Student's t interval over hosts (n &minus; 1 degrees of freedom), "
		"and the Wilcoxon signed-rank test (zeros dropped, tie-corrected, normal approximation). When a "
		"host has several qualifying changes, the one with the most measured intervals on its thinner "
		"side is used.</li>");
	fprintf(f, "<li><b>Fleet, difference in differences.</b> Each change within %s of the previous one joins "
		"its cohort; every host that did not change kernel within the windows around a cohort's median "
		"change time is a control for it, its log ratio measured over the same windows. The estimate is "
		"the mean over rolled hosts of (their log ratio &minus; the mean log ratio of their cohort's "
		"controls); its standard error uses each group's variance within cohorts, with "
		"Welch&ndash;Satterthwaite degrees of freedom. This removes fleet-wide load changes that a "
		"before/after comparison alone would credit to the kernel; large enough, it is "
		"regression-adjusted for the days next to the change (docs/statistics.md).</li>", co);
	fprintf(f, "<li><b>Verdicts.</b> Difference in differences when at least %u rolled hosts and "
		"%u control hosts that kept their kernel exist, else the paired estimate; fewer than %u "
		"compared hosts is insufficient data. Improved (regressed): the %.0f %% interval "
		"excludes 0 and the change is at least %.0f %% "
		"down (up). No change: the %.0f %% interval lies inside &plusmn;%.0f %% (two one-sided tests). Anything else is "
		"insufficient data: the interval is too wide to tell. Per-host verdicts use the same rule on "
		"their own interval. The intervals' calibration on simulated fleets of 5 to 40 hosts is in "
		"docs/statistics.md.</li>",
		r->o.min_hosts, r->o.min_hosts, r->o.min_hosts, 100 * r->o.level, 100 * r->o.margin,
		100 * (2 * r->o.level - 1), 100 * r->o.margin);
	fputs("<li><b>Charts.</b> Time series: per time bin, each host's median rate, then the median and "
	      "quartiles over hosts, split by whether the kernel a host ran then carries the patch; ticks mark "
	      "each host's kernel change, dashed purple lines the cohorts. Distributions: per-interval rates of "
	      "the compared windows, pooled over hosts, on log-spaced bins. Data quality: gaps are holes of an "
	      "interval or more between consecutive intervals of one boot.</li>", f);
	fputs("</ul></section>\n", f);
}

int report_write_html(const struct report *r, FILE *f)
{
	int ret;

	write_head(r, f);
	write_header(r, f);
	write_summary(r, f);
	ret = write_rollouts(r, f);
	if (ret < 0)
		return ret;
	for (int p = 0; p < paths_nr(); p++) {
		ret = write_path(r, f, p);
		if (ret < 0)
			return ret;
	}
	write_shares(r, f);
	write_hosts(r, f);
	write_quality(r, f);
	write_methods(r, f);
	fputs("<footer class=\"muted\"><p>mmhitm report, JSON layout version 1. The same numbers are in the "
	      "JSON output (--json).</p></footer></body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
