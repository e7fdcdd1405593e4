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
		char lf[128], lt[128], cf[96], ct[96];

		kernel_label(lf, sizeof(lf), kp[i].from);
		kernel_label(lt, sizeof(lt), kp[i].to);
		patch_states(cf, sizeof(cf), kp[i].from);
		patch_states(ct, sizeof(ct), kp[i].to);
		fputs("  ", f);
		text_puts(f, lf);
		fprintf(f, " [%s] -> ", cf);
		text_puts(f, lt);
		fprintf(f, " [%s]: %zu host%s%s\n", ct, kp[i].hosts, kp[i].hosts == 1 ? "" : "s",
			kp[i].rollbacks ? " (rollback)" : "");
	}
	if (n > 10)
		fprintf(f, "  and %zu more kernel pairs\n", n - 10);
	free(kp);
	return 0;
}

/* One kernel's states by deciding rule ("P1 P2 lacks: release 6.1.* (patches.conf:2)"), and for
 * the paths no rule decides, the line to add. */
static void kernel_rules(const struct report *r, FILE *f, const struct kernel_info *k)
{
	unsigned int done = 0, unknown = patch_unknown_mask(k);
	char label[128], line[256];

	kernel_label(label, sizeof(label), k);
	fputs("  ", f);
	text_puts(f, label);
	fputc(':', f);
	for (int p = 0; p < paths_nr(); p++) {
		const struct patch_verdict *v = &k->patches[p];

		if ((done | unknown) & (1u << p))
			continue;
		fputs(done ? ";" : "", f);
		for (int q = p; q < paths_nr(); q++)
			if (k->patches[q].state == v->state && k->patches[q].why == v->why) {
				fprintf(f, " %s", path_get(q)->id);
				done |= 1u << q;
			}
		fprintf(f, " %s by ", patch_state_to_string(v->state));
		text_puts(f, v->why);
	}
	if (unknown) {
		patch_map_line(line, sizeof(line), k, unknown);
		fputs(done ? ";" : "", f);
		for (int p = 0; p < paths_nr(); p++)
			if (unknown & (1u << p))
				fprintf(f, " %s", path_get(p)->id);
		fputs(" unknown, no rule matches: add \"carries ", f);
		text_puts(f, line);
		fputs("\" (or \"lacks ...\") to ", f);
		text_puts(f, patch_map_file(r));
	}
	fputc('\n', f);
}

/* The patch map's word on every kernel in range: which rule of which file decided. */
static int patch_map_lines(const struct report *r, FILE *f)
{
	size_t n = 0;
	const struct kernel_info **k = report_range_kernels(r, &n);

	if (!k)
		return -ENOMEM;
	fputs("patch map: ", f);
	text_puts(f, r->o.patches_origin ? r->o.patches_origin : "built-in");
	if (r->o.patches_origin && strcmp(r->o.patches_origin, "built-in") == 0)
		fprintf(f, " (no %s)", patch_map_file(r));
	fprintf(f, "; %zu kernel%s in range\n", n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n && i < 10; i++)
		kernel_rules(r, f, k[i]);
	if (n > 10)
		fprintf(f, "  and %zu more kernels (the JSON has them all)\n", n - 10);
	fputc('\n', f);
	free(k);
	return 0;
}

/* The answer per path, first: the one host's own verdict, or the fleet's. */
static void answer_lines(const struct report *r, FILE *f)
{
	for (int p = 0; p < paths_nr(); p++) {
		const struct answer *a = &r->answer[p];
		char e[32], ci[80];

		fprintf(f, "%s %s", path_get(p)->id, verdict_to_string(a->verdict));
		if (!isnan(a->lo) && a->verdict != VERDICT_INSUFFICIENT) {
			fmt_pct(e, sizeof(e), a->change);
			fmt_ci(ci, sizeof(ci), a->lo, a->hi);
			fprintf(f, " %s (%.0f %% CI %s)", e, 100 * r->o.level, ci);
		}
		if (a->basis && a->verdict != VERDICT_INSUFFICIENT) {
			fputs(", by ", f);
			text_puts(f, a->basis);
		}
		if (a->verdict == VERDICT_INSUFFICIENT || a->verdict == VERDICT_NOT_APPLICABLE || a->caveat) {
			fputs(": ", f);
			text_puts(f, a->reason);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
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
	answer_lines(r, f);
	header_lines(r, f);
	if (kernel_pair_lines(r, f) < 0 || patch_map_lines(r, f) < 0)
		return -ENOMEM;
	if (r->nr_hosts != 1) {
		verdict_table(r, f);
		reason_lines(r, f);
	}
	quality_line(r, f);
	return ferror(f) ? -EIO : 0;
}
