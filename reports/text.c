// SPDX-License-Identifier: GPL-2.0
/* The plain-text summary `mmhitm report` prints on stdout. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "escape.h"
#include "report-model.h"
#include "util.h"

static void quality_line(const struct report *r, FILE *f)
{
	size_t no_pmu = 0, gaps = 0, hosts = 0, lru_off = 0, not_analyzed = 0;
	int64_t lost = 0, gap_ns = 0;
	char d[32];

	for (size_t i = 0; i < r->nr_hosts; i++) {
		const struct host *h = &r->hosts[i];

		if (!h->q.boots)
			continue;
		hosts++;
		no_pmu += h->no_pmu;
		lru_off += h->lru_gen_off;
		gaps += h->q.gaps > 0;
		gap_ns += h->q.gap_ns;
		lost += h->q.events_lost + h->q.samples_lost;
		not_analyzed += h->q.not_analyzed;
	}
	fmt_duration(d, sizeof(d), gap_ns);
	fprintf(f, "data quality: %zu host%s with data; no PMU on %zu; LRU_GEN off or absent on %zu; "
		"%zu with gaps (%s in all); %lld events/samples lost; %zu interval%s not analyzed",
		hosts, hosts == 1 ? "" : "s", no_pmu, lru_off, gaps, d, (long long)lost, not_analyzed,
		not_analyzed == 1 ? "" : "s");
	if (r->nr_errors)
		fprintf(f, "; %zu database%s unreadable", r->nr_errors, r->nr_errors == 1 ? "" : "s");
	fputc('\n', f);
	for (size_t i = 0; i < r->nr_errors; i++) {
		fputs("  unreadable: ", f);
		text_puts(f, r->errors[i].db);
		fprintf(f, ": %s\n", r->errors[i].error);
	}
}

/* Where the numbers come from, the range, and the kernel changes in it. */
static void header_lines(const struct report *r, FILE *f)
{
	char a[40], b[40], w1[16], w2[16], w3[16];

	fmt_time(a, sizeof(a), r->o.since_ns);
	fmt_time(b, sizeof(b), r->o.until_ns);
	if (r->source && strcmp(r->source, "clickhouse") == 0)
		fprintf(f, "mmhitm report: %zu host%s from the cluster", r->nr_hosts, r->nr_hosts == 1 ? "" : "s");
	else
		fprintf(f, "mmhitm report: %zu host%s from %zu database%s",
			r->nr_hosts, r->nr_hosts == 1 ? "" : "s", r->nr_dbs, r->nr_dbs == 1 ? "" : "s");
	if (r->o.rollup_ns > 0) {
		fmt_duration(w1, sizeof(w1), r->o.rollup_ns);
		fprintf(f, " (rates per %s roll-up bucket)", w1);
	}
	fprintf(f, ", %s .. %s\n", a, b);
	fmt_duration(w1, sizeof(w1), r->o.before_ns);
	fmt_duration(w2, sizeof(w2), r->o.after_ns);
	fmt_duration(w3, sizeof(w3), r->o.warmup_ns);
	fprintf(f, "kernel changes in range: %zu on %zu host%s (%zu rollback%s), %zu cohort%s; "
		"windows %s before / %s after, warm-up %s\n",
		r->rollouts_in_range, r->hosts_rolled, r->hosts_rolled == 1 ? "" : "s",
		r->rollbacks_in_range, r->rollbacks_in_range == 1 ? "" : "s",
		r->nr_cohorts, r->nr_cohorts == 1 ? "" : "s", w1, w2, w3);
}

/* The ten most common kernel changes, with the patches each side carries. */
static int kernel_pair_lines(const struct report *r, FILE *f)
{
	struct kernel_pair *kp = NULL;
	size_t n = 0;

	if (report_kernel_pairs(r, &kp, &n) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n && i < 10; i++) {
		char lf[128], lt[128], cf[32], ct[32];

		kernel_label(lf, sizeof(lf), kp[i].from);
		kernel_label(lt, sizeof(lt), kp[i].to);
		patch_list(cf, sizeof(cf), kp[i].from, PATCH_CARRIES);
		patch_list(ct, sizeof(ct), kp[i].to, PATCH_CARRIES);
		fputs("  ", f);
		text_puts(f, lf);
		fprintf(f, " [carries %s] -> ", cf);
		text_puts(f, lt);
		fprintf(f, " [carries %s]: %zu host%s%s\n", ct, kp[i].hosts, kp[i].hosts == 1 ? "" : "s",
			kp[i].rollbacks ? " (rollback)" : "");
	}
	if (n > 10)
		fprintf(f, "  and %zu more kernel pairs\n", n - 10);
	fputc('\n', f);
	free(kp);
	return 0;
}

/* One row per path: verdict, fleet change and its interval, hosts compared. */
static void verdict_table(const struct report *r, FILE *f)
{
	char a[40], b[40], c[40];

	fprintf(f, "%-4s %-18s %9s  %-22s %6s\n", "path", "verdict", "change", "95% CI", "hosts");
	for (int p = 0; p < paths_nr(); p++) {
		const struct fleet_path *fp = &r->fleet[p];
		const struct fleet_change *ch = fp->basis && strstr(fp->basis, "difference") ?
						&fp->did : &fp->paired;
		char ci[96] = "-";

		if (ch->valid) {
			fmt_pct(a, sizeof(a), ch->estimate);
			fmt_pct(b, sizeof(b), ch->ci.lo);
			fmt_pct(c, sizeof(c), ch->ci.hi);
			snprintf(ci, sizeof(ci), "%s .. %s", b, c);
		} else {
			snprintf(a, sizeof(a), "-");
		}
		fprintf(f, "%-4s %-18s %9s  %-22s %6zu\n", path_get(p)->id, verdict_to_string(fp->verdict),
			a, ci, fp->nr_treated);
	}
	fputc('\n', f);
}

/* Each path's verdict in words, and what typed its HITM. */
static void reason_lines(const struct report *r, FILE *f)
{
	for (int p = 0; p < paths_nr(); p++) {
		char grades[160];

		grades_phrase(grades, sizeof(grades), &r->fleet[p]);
		fprintf(f, "%s %s: ", path_get(p)->id, verdict_to_string(r->fleet[p].verdict));
		text_puts(f, r->fleet[p].reason);
		fprintf(f, " (HITM typed by: %s)\n", grades);
	}
	fputc('\n', f);
}

int report_write_text(const struct report *r, FILE *f)
{
	header_lines(r, f);
	if (kernel_pair_lines(r, f) < 0)
		return -ENOMEM;
	verdict_table(r, f);
	reason_lines(r, f);
	quality_line(r, f);
	return ferror(f) ? -EIO : 0;
}
