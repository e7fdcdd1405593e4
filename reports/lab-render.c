// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's table as text (the postings' shape: a row per `at`, the
 * configuration and its control side by side), JSON and an HTML page.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "jsonw.h"
#include "lab.h"

static const char *side_name[2] = { "base", "patched" };

/* A row of the table: the configuration at `at` and its control. */
struct lab_row {
	const struct lab_config *c[2];	/* 0: the configuration, 1: its control */
};

static size_t lab_rows(const struct lab_table *t, struct lab_row *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nconfigs; i++) {
		const struct lab_config *c = &t->configs[i];
		size_t k;

		for (k = 0; k < n; k++) {
			const struct lab_config *o = rows[k].c[0] ? rows[k].c[0] : rows[k].c[1];

			if (o->at == c->at && !rows[k].c[c->control])
				break;
		}
		if (k == n)
			rows[n++] = (struct lab_row){};
		rows[k].c[c->control] = c;
	}
	return n;
}

static bool has_control(const struct lab_table *t)
{
	for (size_t i = 0; i < t->nconfigs; i++)
		if (t->configs[i].control)
			return true;
	return false;
}

static const char *verdict_word(const struct lab_table *t, const struct lab_change *ch)
{
	switch (ch->verdict) {
	case LAB_TOO_FEW:
		return "no interval";
	case LAB_NOT_SHOWN:
		return "not shown";
	case LAB_HIGHER:
		return t->higher_is_better ? "better" : "worse";
	case LAB_LOWER:
		return t->higher_is_better ? "worse" : "better";
	}
	return "";
}

static void value_text(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (fabs(v) >= 1000)
		snprintf(buf, size, "%.0f", v);
	else if (fabs(v) >= 10)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

static void pct_text(char *buf, size_t size, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%+.1f%%", 100 * v);
}

static void interval_text(char *buf, size_t size, const struct lab_change *ch)
{
	if (!ch->has_interval)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "[%+.1f, %+.1f]", 100 * ch->lo, 100 * ch->hi);
}

static void cell_text(FILE *f, const struct lab_table *t, const struct lab_config *c)
{
	char b[32], p[32], ch[32], iv[48];

	if (!c) {
		fprintf(f, "  %-60s", "");
		return;
	}
	value_text(b, sizeof(b), c->side[0].value);
	value_text(p, sizeof(p), c->side[1].value);
	pct_text(ch, sizeof(ch), c->change.change);
	interval_text(iv, sizeof(iv), &c->change);
	fprintf(f, "  %10s %10s %8s %-17s %-11s", b, p, ch, iv, verdict_word(t, &c->change));
}

static void header_text(FILE *f, const struct lab_table *t)
{
	fprintf(f, "Lab ");
	text_puts(f, t->name);
	fprintf(f, ": %s (mmhitm-load %s), %d run%s a boot, %d boot%s of each kernel\n", t->path,
		t->reproducer, t->runs, t->runs == 1 ? "" : "s", t->boots, t->boots == 1 ? "" : "s");
	for (int s = 0; s < 2; s++) {
		fprintf(f, "  %-8s ", side_name[s]);
		if (!t->release[s]) {
			fprintf(f, "(no boot yet)\n");
			continue;
		}
		text_puts(f, t->release[s]);
		fprintf(f, " (");
		text_puts(f, t->version[s]);
		fprintf(f, "): %d of %d boots done\n", t->boots_done[s], t->boots);
	}
	if (t->have_metric) {
		text_puts(f, t->metric);
		fprintf(f, " (");
		text_puts(f, t->unit);
		fprintf(f, ", %s is better): median of each boot's runs, averaged over the boots; the "
			"change patched / base - 1 and its %.0f %% interval with the boot as the unit\n",
			t->higher_is_better ? "higher" : "lower", 100 * LAB_LEVEL);
	}
}

static void table_text(FILE *f, const struct lab_table *t, const struct lab_row *rows, size_t n)
{
	bool ctl = has_control(t);

	fprintf(f, "\n  %-9s  %-60s", lab_at_label(t->reproducer), lab_config_label(t->reproducer, false));
	if (ctl)
		fprintf(f, "  %s (control)", lab_config_label(t->reproducer, true));
	fprintf(f, "\n  %-9s", "");
	for (int k = 0; k <= ctl; k++)
		fprintf(f, "  %10s %10s %8s %-17s %-11s", "base", "patched", "change", "interval", "shown");
	fputc('\n', f);
	for (size_t i = 0; i < n; i++) {
		const struct lab_config *any = rows[i].c[0] ? rows[i].c[0] : rows[i].c[1];

		fprintf(f, "  %9d", any->at);
		for (int k = 0; k <= ctl; k++)
			cell_text(f, t, rows[i].c[k]);
		fputc('\n', f);
	}
}

/* The path's share of all HITM sampled in the runs, or "-". */
static void share_text(char *buf, size_t size, const struct lab_side *s)
{
	if (s->all_hitm > 0)
		snprintf(buf, size, "%.1f%%", 100 * s->hitm / s->all_hitm);
	else
		snprintf(buf, size, "-");
}

static void hitm_text(FILE *f, const struct lab_table *t)
{
	bool any = false;

	for (size_t i = 0; i < t->nconfigs; i++)
		any |= t->configs[i].side[0].sampled || t->configs[i].side[1].sampled;
	if (t->unanalyzed)
		fprintf(f, "\n%zu interval%s of the runs sampled memory but %s not analyzed: run "
			"`mmhitm analyze` first.", t->unanalyzed, t->unanalyzed == 1 ? "" : "s",
			t->unanalyzed == 1 ? "is" : "are");
	if (!any) {
		fprintf(f, "\nHITM: none sampled during the runs (no memory-sampling PMU, or no "
			"mmhitmd recording): the table above rests on the reproducer's metric alone.\n");
		return;
	}
	fprintf(f, "\nHITM on %s's lines per %g units of its work, over the runs' spans:\n", t->path,
		t->per_work_units);
	fprintf(f, "  %-9s %-12s %10s %10s %10s  %-20s %s\n", lab_at_label(t->reproducer), "",
		"base", "patched", "moved off", "share of all HITM", "unit");
	for (size_t i = 0; i < t->nconfigs; i++) {
		const struct lab_config *c = &t->configs[i];
		char b[32], p[32], m[32], sb[32], sp[32];

		value_text(b, sizeof(b), c->rate[0]);
		value_text(p, sizeof(p), c->rate[1]);
		pct_text(m, sizeof(m), c->moved_off);
		share_text(sb, sizeof(sb), &c->side[0]);
		share_text(sp, sizeof(sp), &c->side[1]);
		fprintf(f, "  %9d %-12s %10s %10s %10s  %8s -> %-8s ", c->at,
			lab_config_label(t->reproducer, c->control), b, p, c->hitm ? m : "-", sb, sp);
		text_puts(f, c->side[0].work_unit[0] ? c->side[0].work_unit : c->side[1].work_unit);
		fputc('\n', f);
	}
}

/* What the interval can and cannot show with these boots. */
static void notes_text(FILE *f, const struct lab_table *t)
{
	double widest = 0, df_hi = 0;
	size_t few = 0;

	for (size_t i = 0; i < t->nconfigs; i++) {
		const struct lab_change *ch = &t->configs[i].change;

		if (!ch->has_interval) {
			few++;
			continue;
		}
		widest = fmax(widest, ch->half_width);
		df_hi = fmax(df_hi, ch->df);
	}
	fputc('\n', f);
	if (few)
		fprintf(f, "%zu configuration%s without an interval: a side with one boot cannot "
			"tell the patch from that boot's own luck (layout, caches, frequency); run "
			"`mmhitm lab run` on more boots.\n", few, few == 1 ? "" : "s");
	if (widest > 0)
		fprintf(f, "The interval rests on the boot medians alone (their logs; Welch's standard "
			"error, %.0f degree%s of freedom, one fewer than the boots of the side with "
			"fewer): runs within a boot do not narrow it. A change smaller than its "
			"half-width (up to +-%.1f%% here) is not shown; \"not shown\" is not \"no "
			"change\".\n", df_hi, df_hi == 1 ? "" : "s", 100 * widest);
}

void lab_print_text(FILE *f, const struct lab_table *t)
{
	struct lab_row *rows = calloc(t->nconfigs + 1, sizeof(*rows));

	header_text(f, t);
	if (rows)
		table_text(f, t, rows, lab_rows(t, rows));
	hitm_text(f, t);
	notes_text(f, t);
	free(rows);
}

/* --- JSON ------------------------------------------------------------------ */

static void side_json(struct jsonw *w, const char *key, const struct lab_side *s, double rate)
{
	jsonw_object(w, key);
	jsonw_num(w, "value", s->value);
	jsonw_array(w, "boots");
	for (size_t b = 0; b < s->nboots; b++) {
		jsonw_object(w, NULL);
		jsonw_int(w, "seq", s->seq[b]);
		jsonw_num(w, "median", s->median[b]);
		jsonw_uint(w, "runs", s->runs[b]);
		jsonw_end(w);
	}
	jsonw_end(w);
	if (s->sampled) {
		jsonw_num(w, "hitm", s->hitm);
		jsonw_num(w, "work", s->work);
		jsonw_num(w, "all_hitm", s->all_hitm);
		jsonw_str(w, "work_unit", s->work_unit[0] ? s->work_unit : NULL);
		jsonw_num(w, "hitm_per_work", rate);
	} else {
		jsonw_null(w, "hitm");
	}
	jsonw_end(w);
}

static void config_json(struct jsonw *w, const struct lab_table *t, const struct lab_config *c)
{
	static const char *verdicts[] = { "too few boots", "not shown", "higher", "lower" };

	jsonw_object(w, NULL);
	jsonw_int(w, "config", c->config);
	jsonw_int(w, "at", c->at);
	jsonw_bool(w, "control", c->control);
	jsonw_str(w, "args", c->args);
	side_json(w, "base", &c->side[0], c->rate[0]);
	side_json(w, "patched", &c->side[1], c->rate[1]);
	jsonw_num(w, "change", c->change.change);
	if (c->change.has_interval) {
		jsonw_array(w, "interval");
		jsonw_num(w, NULL, c->change.lo);
		jsonw_num(w, NULL, c->change.hi);
		jsonw_end(w);
		jsonw_num(w, "df", c->change.df);
	} else {
		jsonw_null(w, "interval");
	}
	jsonw_str(w, "shown", verdicts[c->change.verdict]);
	jsonw_str(w, "verdict", verdict_word(t, &c->change));
	jsonw_num(w, "hitm_moved_off", c->hitm ? c->moved_off : NAN);
	jsonw_end(w);
}

void lab_print_json(FILE *f, const struct lab_table *t)
{
	struct jsonw w;

	jsonw_init(&w, f);
	jsonw_object(&w, NULL);
	jsonw_str(&w, "lab", t->name);
	jsonw_str(&w, "path", t->path);
	jsonw_str(&w, "reproducer", t->reproducer);
	jsonw_int(&w, "runs", t->runs);
	jsonw_int(&w, "boots", t->boots);
	jsonw_num(&w, "level", LAB_LEVEL);
	jsonw_str(&w, "metric", t->metric);
	jsonw_str(&w, "unit", t->unit);
	jsonw_bool(&w, "higher_is_better", t->higher_is_better);
	jsonw_num(&w, "per_work_units", t->per_work_units > 0 ? t->per_work_units : NAN);
	jsonw_object(&w, "kernels");
	for (int s = 0; s < 2; s++) {
		jsonw_object(&w, side_name[s]);
		jsonw_str(&w, "release", t->release[s]);
		jsonw_str(&w, "version", t->version[s]);
		jsonw_int(&w, "boots_done", t->boots_done[s]);
		jsonw_end(&w);
	}
	jsonw_end(&w);
	jsonw_array(&w, "configs");
	for (size_t i = 0; i < t->nconfigs; i++)
		config_json(&w, t, &t->configs[i]);
	jsonw_end(&w);
	jsonw_end(&w);
	jsonw_finish(&w);
	fputc('\n', f);
}

/* --- HTML ------------------------------------------------------------------ */

static void td_html(FILE *f, const char *s)
{
	fputs("<td class=n>", f);
	html_puts(f, s);
	fputs("</td>", f);
}

static void cell_html(FILE *f, const struct lab_table *t, const struct lab_config *c)
{
	char b[32], p[32], ch[32], iv[48];

	if (!c) {
		fputs("<td></td><td></td><td></td><td></td><td></td>", f);
		return;
	}
	value_text(b, sizeof(b), c->side[0].value);
	value_text(p, sizeof(p), c->side[1].value);
	pct_text(ch, sizeof(ch), c->change.change);
	interval_text(iv, sizeof(iv), &c->change);
	td_html(f, b);
	td_html(f, p);
	td_html(f, ch);
	td_html(f, iv);
	fprintf(f, "<td>%s</td>", verdict_word(t, &c->change));
}

static void table_html(FILE *f, const struct lab_table *t, const struct lab_row *rows, size_t n)
{
	bool ctl = has_control(t);

	fprintf(f, "<table><tr><th rowspan=2>%s</th><th colspan=5>", lab_at_label(t->reproducer));
	html_puts(f, lab_config_label(t->reproducer, false));
	fputs("</th>", f);
	if (ctl)
		fprintf(f, "<th colspan=5>%s (control)</th>", lab_config_label(t->reproducer, true));
	fputs("</tr><tr>", f);
	for (int k = 0; k <= ctl; k++)
		fputs("<th>base</th><th>patched</th><th>change</th><th>95 % interval</th><th>shown</th>", f);
	fputs("</tr>\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct lab_config *any = rows[i].c[0] ? rows[i].c[0] : rows[i].c[1];

		fprintf(f, "<tr><td class=n>%d</td>", any->at);
		for (int k = 0; k <= ctl; k++)
			cell_html(f, t, rows[i].c[k]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The HITM table and the notes, as the text has them, preformatted. */
static void notes_html(FILE *f, const struct lab_table *t)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *m = open_memstream(&buf, &size);

	if (!m)
		return;
	hitm_text(m, t);
	notes_text(m, t);
	if (fclose(m) == 0) {
		fputs("<pre>", f);
		html_puts(f, buf);
		fputs("</pre>\n", f);
	}
	free(buf);
}

void lab_print_html(FILE *f, const struct lab_table *t)
{
	struct lab_row *rows = calloc(t->nconfigs + 1, sizeof(*rows));

	/* self-contained, as the report's: nothing a name could bring in runs or loads */
	fputs("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8><meta http-equiv="
	      "\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
	      "<title>mmhitm lab ", f);
	html_puts(f, t->name);
	fputs("</title><style>body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;"
	      "padding:0 16px 40px}table{border-collapse:collapse}th,td{border:1px solid #d0d7de;"
	      "padding:3px 7px}td.n{text-align:right;font-variant-numeric:tabular-nums}"
	      "pre{font-size:12px;background:#f6f8fa;padding:8px;overflow-x:auto}</style></head><body>\n"
	      "<section id=lab><h2>Lab ", f);
	html_puts(f, t->name);
	fprintf(f, ": %s</h2>\n<p>", t->path);
	for (int s = 0; s < 2; s++) {
		fprintf(f, "%s: ", side_name[s]);
		html_puts(f, t->release[s] ? t->release[s] : "(no boot yet)");
		fprintf(f, ", %d of %d boots done. ", t->boots_done[s], t->boots);
	}
	fputs("</p>\n<p>", f);
	if (t->have_metric) {
		html_puts(f, t->metric);
		fputs(" (", f);
		html_puts(f, t->unit);
		fprintf(f, ", %s is better): median of each boot's runs, averaged over the boots.",
			t->higher_is_better ? "higher" : "lower");
	}
	fputs("</p>\n", f);
	if (rows)
		table_html(f, t, rows, lab_rows(t, rows));
	free(rows);
	notes_html(f, t);
	fputs("</section>\n</body></html>\n", f);
}
