// SPDX-License-Identifier: GPL-2.0
/* Inline SVG charts; see svg.h. */
#include <math.h>
#include <string.h>
#include <time.h>

#include "escape.h"
#include "svg.h"
#include "util.h"

/* How wide a character of the charts' 11 px text is, about (px). */
#define CHAR_PX 6.5

static enum chart_width width_mode = CHART_ONE;

void chart_set_width(enum chart_width w)
{
	width_mode = w;
}

bool chart_says_why(void)
{
	return width_mode != CHART_NARROW;
}

static void svg_open(const struct chart *c, double h)
{
	fprintf(c->out, "<svg class=\"chart%s\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
		"role=\"img\" aria-label=\"", width_mode == CHART_WIDE ? " wide" :
		width_mode == CHART_NARROW ? " narrow" : "", c->w, h, c->w, h);
	html_puts(c->out, c->label);
	fputs("\">", c->out);
}

void chart_begin(struct chart *c, FILE *f, double w, double h, const char *label)
{
	c->out = f;
	c->label = label;
	c->w = width_mode == CHART_NARROW && w > CHART_NARROW_PX ? CHART_NARROW_PX : w;
	c->h = h;
	if (!c->ml)
		c->ml = 64;
	if (!c->mr)
		c->mr = 16;
	if (!c->mt)
		c->mt = 24;
	if (!c->mb)
		c->mb = 40;
	/* Buffered: a legend that takes two rows makes the chart taller. */
	c->f = open_memstream(&c->fbuf, &c->fsize);
	c->head = c->f ? open_memstream(&c->headbuf, &c->headsize) : NULL;
	if (!c->head) {
		if (c->f)
			fclose(c->f);
		free(c->fbuf);
		c->fbuf = NULL;
		c->f = c->head = f;	/* drawn as it comes, the legend in one row */
		svg_open(c, h);
	}
}

void chart_end(struct chart *c)
{
	if (c->f != c->out) {
		fclose(c->f);
		fclose(c->head);
		svg_open(c, c->h + c->legend_h + c->bottom_h);
		fwrite(c->headbuf, 1, c->headsize, c->out);
		if (c->legend_h > 0)
			fprintf(c->out, "<g transform=\"translate(0 %.0f)\">", c->legend_h);
		fwrite(c->fbuf, 1, c->fsize, c->out);
		if (c->legend_h > 0)
			fputs("</g>", c->out);
		free(c->fbuf);
		free(c->headbuf);
		c->fbuf = c->headbuf = NULL;
		c->f = c->head = c->out;
	}
	fputs("</svg>\n", c->out);
}

static double tr(double v, bool lg)
{
	return lg ? log10(v > 0 ? v : 1e-300) : v;
}

double chart_px(const struct chart *c, double x)
{
	double a = tr(c->x0, c->xlog), b = tr(c->x1, c->xlog);

	if (b == a)
		b = a + 1;
	return c->ml + (tr(x, c->xlog) - a) / (b - a) * (c->w - c->ml - c->mr);
}

double chart_py(const struct chart *c, double y)
{
	double a = tr(c->y0, c->ylog), b = tr(c->y1, c->ylog), p;

	if (b == a)
		b = a + 1;
	p = c->h - c->mb - (tr(y, c->ylog) - a) / (b - a) * (c->h - c->mt - c->mb);
	/* Keep wild values near the frame instead of miles off the canvas. */
	if (p < c->mt - 4)
		p = c->mt - 4;
	if (p > c->h - c->mb + 4)
		p = c->h - c->mb + 4;
	return p;
}

static void title(FILE *f, const char *t)
{
	if (!t)
		return;
	fputs("<title>", f);
	html_puts(f, t);
	fputs("</title>", f);
}

size_t nice_ticks(double lo, double hi, size_t want, double *out, size_t max)
{
	double span = hi - lo, step, mag, first;
	size_t n = 0;

	if (!(span > 0) || !isfinite(span) || want == 0)
		return 0;
	step = span / (double)want;
	mag = pow(10, floor(log10(step)));
	if (step / mag >= 5)
		step = 5 * mag;
	else if (step / mag >= 2)
		step = 2 * mag;
	else
		step = mag;
	first = ceil(lo / step) * step;
	for (double v = first; v <= hi + step * 1e-9 && n < max; v += step)
		out[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

static void fmt_tick(char *buf, size_t size, double v)
{
	double a = fabs(v);

	if (a >= 1e6 || (a > 0 && a < 1e-3))
		snprintf(buf, size, "%.0e", v);
	else if (a >= 100 || v == floor(v))
		snprintf(buf, size, "%.0f", v);
	else if (a >= 1)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.3g", v);
}

/* A time tick's label at a step of step_s: full dates, as a report is
 * read long after, and across New Year. */
static void fmt_time(char *buf, size_t size, int64_t step_s, const struct tm *tm)
{
	if (step_s >= 86400)
		strftime(buf, size, "%Y-%m-%d", tm);
	else if (step_s >= 60)
		strftime(buf, size, "%Y-%m-%d %H:%M", tm);
	else
		strftime(buf, size, "%Y-%m-%d %H:%M:%S", tm);
}

static void time_ticks(struct chart *c)
{
	static const int64_t steps_s[] = {
		1, 2, 5, 10, 15, 30, 60, 2 * 60, 5 * 60, 10 * 60, 15 * 60, 30 * 60,
		3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 28 * 86400,
	};
	int64_t span = (int64_t)(c->x1 - c->x0), step = steps_s[ARRAY_SIZE(steps_s) - 1] * NSEC_PER_SEC;
	double bottom = c->h - c->mb;

	/* The finest step whose labels fit side by side, at most 8 of them. */
	for (size_t i = 0; i < ARRAY_SIZE(steps_s); i++) {
		const struct tm epoch = { .tm_year = 70, .tm_mday = 1 };
		char sample[32];
		int64_t most;

		fmt_time(sample, sizeof(sample), steps_s[i], &epoch);
		most = (int64_t)((c->w - c->ml - c->mr) / (CHAR_PX * (double)strlen(sample) + 20));
		most = most > 8 ? 8 : most < 2 ? 2 : most;
		if (span / (steps_s[i] * NSEC_PER_SEC) < most) {
			step = steps_s[i] * NSEC_PER_SEC;
			break;
		}
	}
	for (int64_t t = ((int64_t)c->x0 + step - 1) / step * step; t <= (int64_t)c->x1; t += step) {
		time_t s = (time_t)(t / NSEC_PER_SEC);
		struct tm tm;
		char buf[32];
		double x = chart_px(c, (double)t), half;
		const char *anchor;

		if (!gmtime_r(&s, &tm))
			continue;
		fmt_time(buf, sizeof(buf), step / NSEC_PER_SEC, &tm);
		/* a label that would cross the chart's edge ends (or starts) at its tick */
		half = CHAR_PX / 2 * (double)strlen(buf);
		anchor = x + half > c->w ? "end" : x - half < 0 ? "start" : "middle";
		fprintf(c->f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>",
			x, x, c->mt, bottom, x, bottom + 14, anchor, buf);
	}
}

/*
 * Writes s as axis text at (x, *y), broken at spaces into lines of at most
 * width px, each 13 px below the last; *y ends at the last line. Returns
 * the number of lines.
 */
static int text_lines(FILE *f, const char *s, double width, double x, double *y, const char *anchor)
{
	size_t most = width < 10 * CHAR_PX ? 10 : width > 1e6 ? SIZE_MAX : (size_t)(width / CHAR_PX);
	size_t len = strlen(s);
	int n = 0;

	while (len) {
		size_t take = len;
		char line[256];

		if (len > most) {
			take = most;
			while (take > 0 && s[take] != ' ')
				take--;
			if (take == 0)	/* one word wider than the chart */
				take = most;
		}
		if (take >= sizeof(line))
			take = sizeof(line) - 1;
		memcpy(line, s, take);
		line[take] = '\0';
		if (n)
			*y += 13;
		fprintf(f, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", x, *y,
			anchor);
		html_puts(f, line);
		fputs("</text>", f);
		n++;
		s += take;
		len -= take;
		while (*s == ' ') {
			s++;
			len--;
		}
	}
	return n;
}

void chart_axes(struct chart *c, const char *xlabel, const char *ylabel)
{
	double ticks[32], left = c->ml, right = c->w - c->mr, top = c->mt, bottom = c->h - c->mb, width;
	size_t n;
	char buf[32];

	fprintf(c->f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>",
		left, top, right - left, bottom - top);
	/* y */
	if (c->no_yticks) {
		/* the caller labels the rows */
	} else if (c->ylog) {
		for (double e = floor(log10(c->y0)); e <= ceil(log10(c->y1)); e++) {
			double v = pow(10, e), y;

			if (v < c->y0 || v > c->y1)
				continue;
			y = chart_py(c, v);
			fmt_tick(buf, sizeof(buf), v);
			fprintf(c->f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
				left, right, y, y, left - 4, y + 4, buf);
		}
	} else {
		n = nice_ticks(c->y0, c->y1, 5, ticks, ARRAY_SIZE(ticks));
		for (size_t i = 0; i < n; i++) {
			double y = chart_py(c, ticks[i]);

			fmt_tick(buf, sizeof(buf), ticks[i]);
			fprintf(c->f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
				left, right, y, y, left - 4, y + 4, buf);
		}
	}
	/* x */
	if (c->xtime) {
		time_ticks(c);
	} else if (c->xlog) {
		for (double e = ceil(log10(c->x0)); e <= floor(log10(c->x1)); e++) {
			double x = chart_px(c, pow(10, e));

			fmt_tick(buf, sizeof(buf), pow(10, e));
			fprintf(c->f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
				x, x, top, bottom, x, bottom + 14, buf);
		}
	} else {
		n = nice_ticks(c->x0, c->x1, (c->w - c->ml - c->mr) < 400 ? 3 : 6, ticks, ARRAY_SIZE(ticks));
		for (size_t i = 0; i < n; i++) {
			double x = chart_px(c, ticks[i]);

			fmt_tick(buf, sizeof(buf), ticks[i]);
			fprintf(c->f, "<line class=\"grid\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
				"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
				x, x, top, bottom, x, bottom + 14, buf);
		}
	}
	/* Titles wider than the chart (a narrow one) take more lines: below
	 * the chart for x, above the legend for y. */
	width = c->head != c->out ? c->w - 8 : 1e9;	/* drawn as it comes: one line */
	if (xlabel) {
		double y = c->h - 6;
		int lines = text_lines(c->f, xlabel, width, (left + right) / 2, &y, "middle");

		c->bottom_h += 13 * (lines - 1);
	}
	if (ylabel) {
		double y = 12;
		int lines = text_lines(c->head, ylabel, width, 4, &y, "start");

		c->legend_h += 13 * (lines - 1);
	}
}

void chart_line(struct chart *c, const double *x, const double *y, size_t n, const char *cls,
		const char *t)
{
	size_t i = 0;

	while (i < n) {
		size_t k;

		while (i < n && (isnan(y[i]) || isnan(x[i])))
			i++;
		if (i >= n)
			break;
		fprintf(c->f, "<polyline class=\"%s\" points=\"", cls);
		for (k = i; k < n && !isnan(y[k]) && !isnan(x[k]); k++)
			fprintf(c->f, "%s%.1f,%.1f", k > i ? " " : "", chart_px(c, x[k]), chart_py(c, y[k]));
		/* A lone point still shows. */
		if (k == i + 1)
			fprintf(c->f, " %.1f,%.1f", chart_px(c, x[i]) + 1.5, chart_py(c, y[i]));
		fputs("\">", c->f);
		title(c->f, t);
		fputs("</polyline>", c->f);
		i = k;
	}
}

void chart_band(struct chart *c, const double *x, const double *lo, const double *hi, size_t n,
		const char *cls)
{
	size_t i = 0;

	while (i < n) {
		size_t k;

		while (i < n && (isnan(lo[i]) || isnan(hi[i])))
			i++;
		if (i >= n)
			break;
		for (k = i; k < n && !isnan(lo[k]) && !isnan(hi[k]); k++)
			;
		fprintf(c->f, "<polygon class=\"%s\" points=\"", cls);
		for (size_t j = i; j < k; j++)
			fprintf(c->f, "%.1f,%.1f ", chart_px(c, x[j]), chart_py(c, hi[j]));
		for (size_t j = k; j > i; j--)
			fprintf(c->f, "%.1f,%.1f ", chart_px(c, x[j - 1]), chart_py(c, lo[j - 1]));
		fputs("\"/>", c->f);
		i = k;
	}
}

void chart_steps(struct chart *c, const double *edge, const double *v, size_t n, const char *cls,
		 const char *t)
{
	if (n == 0)
		return;
	fprintf(c->f, "<polyline class=\"%s\" points=\"%.1f,%.1f", cls, chart_px(c, edge[0]),
		chart_py(c, 0));
	for (size_t i = 0; i < n; i++)
		fprintf(c->f, " %.1f,%.1f %.1f,%.1f", chart_px(c, edge[i]), chart_py(c, v[i]),
			chart_px(c, edge[i + 1]), chart_py(c, v[i]));
	fprintf(c->f, " %.1f,%.1f\">", chart_px(c, edge[n]), chart_py(c, 0));
	title(c->f, t);
	fputs("</polyline>", c->f);
}

void chart_vline(struct chart *c, double x, const char *cls, const char *t)
{
	double px = chart_px(c, x);

	/* (a marker outside the data drawn, such as a range's start before it) */
	if (px < c->ml - 0.5 || px > c->w - c->mr + 0.5)
		return;
	fprintf(c->f, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\">", cls,
		px, px, c->mt, c->h - c->mb);
	title(c->f, t);
	fputs("</line>", c->f);
}

void chart_hline(struct chart *c, double y, const char *cls)
{
	double py = chart_py(c, y);

	fprintf(c->f, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", cls,
		c->ml, c->w - c->mr, py, py);
}

void chart_rect(struct chart *c, double x0, double y0, double x1, double y1, const char *cls,
		const char *t)
{
	double a = chart_px(c, x0), b = chart_px(c, x1), p = chart_py(c, y0), q = chart_py(c, y1);

	fprintf(c->f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">", cls,
		a < b ? a : b, p < q ? p : q, fabs(b - a), fabs(q - p));
	title(c->f, t);
	fputs("</rect>", c->f);
}

void chart_dot(struct chart *c, double x, double y, const char *cls, const char *t)
{
	fprintf(c->f, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\">", cls, chart_px(c, x),
		chart_py(c, y));
	title(c->f, t);
	fputs("</circle>", c->f);
}

void chart_text(struct chart *c, double x, double y, const char *anchor, const char *cls,
		const char *s)
{
	fprintf(c->f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", cls,
		chart_px(c, x), chart_py(c, y), anchor);
	html_puts(c->f, s);
	fputs("</text>", c->f);
}

void chart_legend(struct chart *c, const char *const *labels, const char *const *classes, size_t n)
{
	double x = c->ml + 4, row = 0;

	for (size_t i = 0; i < n; i++) {
		double wid = 24 + CHAR_PX * (double)strlen(labels[i]);	/* 24: swatch and gap */

		if (x > c->ml + 4 && x + wid - 8 > c->w - c->mr && c->head != c->out) {
			row++;
			x = c->ml + 4;
		}
		fprintf(c->head, "<rect class=\"%s swatch\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\"/>"
			"<text class=\"legend\" x=\"%.1f\" y=\"%.1f\">", classes[i], x,
			c->legend_h + c->mt - 12 + 14 * row, x + 16, c->legend_h + c->mt - 8 + 14 * row);
		html_puts(c->head, labels[i]);
		fputs("</text>", c->head);
		x += wid;
	}
	c->legend_h += 14 * row;
}
