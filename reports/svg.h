/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MMHITM_SVG_H
#define MMHITM_SVG_H

/*
 * Inline SVG charts for the HTML report: a plot area with axes, lines that
 * break at NaN, quantile bands, vertical markers, step histograms. Styling
 * is left to CSS classes the report's stylesheet defines. Every string
 * passed in is escaped.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct chart {
	FILE *f;			/* the plot, axes and marks: a buffer until chart_end() */
	FILE *out;			/* where chart_end() writes the <svg> */
	FILE *head;			/* the y-axis title and the legend (a buffer) */
	char *fbuf, *headbuf;
	size_t fsize, headsize;
	double legend_h;		/* title lines and legend rows past the first: the plot
					 * moves down */
	double bottom_h;		/* x title lines past the first, below the plot */
	const char *label;		/* the accessible name, until chart_end() */
	double w, h;			/* px */
	double ml, mr, mt, mb;		/* margins around the plot area */
	double x0, x1, y0, y1;		/* data range */
	bool xlog, ylog;
	bool xtime;			/* x is nanoseconds since the epoch */
	bool no_yticks;			/* rows, not values: no y grid */
};

/*
 * Which of a chart's two drawings chart_begin() makes. The HTML report
 * draws each chart twice, wide (a screen) and narrow (a phone), and its
 * stylesheet shows one: scaled down to a phone, a wide chart's text would
 * shrink to a third. CHART_ONE (the default) draws a chart once.
 */
enum chart_width { CHART_ONE, CHART_WIDE, CHART_NARROW };
#define CHART_NARROW_PX 340
void chart_set_width(enum chart_width w);
/* Whether a chart that draws nothing should say why: once, not per width. */
bool chart_says_why(void);

/* Starts a chart of w x h px (at most CHART_NARROW_PX wide when narrow);
 * label is its accessible name. Set the ranges before chart_axes(). */
void chart_begin(struct chart *c, FILE *f, double w, double h, const char *label);
/* Writes the <svg>: its height grows by the legend's extra rows. */
void chart_end(struct chart *c);

/* Grid, ticks and axis titles. */
void chart_axes(struct chart *c, const char *xlabel, const char *ylabel);

double chart_px(const struct chart *c, double x);
double chart_py(const struct chart *c, double y);

/* A line through (x[i], y[i]), broken where y is NaN. title: a tooltip, or NULL. */
void chart_line(struct chart *c, const double *x, const double *y, size_t n, const char *cls,
		const char *title);
/* The area between lo and hi, in pieces where both are defined. */
void chart_band(struct chart *c, const double *x, const double *lo, const double *hi, size_t n,
		const char *cls);
/* A histogram drawn as steps over bins [edge[i], edge[i+1]). */
void chart_steps(struct chart *c, const double *edge, const double *v, size_t n, const char *cls,
		 const char *title);
void chart_vline(struct chart *c, double x, const char *cls, const char *title);
void chart_hline(struct chart *c, double y, const char *cls);
void chart_rect(struct chart *c, double x0, double y0, double x1, double y1, const char *cls,
		const char *title);
void chart_dot(struct chart *c, double x, double y, const char *cls, const char *title);
/* Text at data coordinates; anchor "start", "middle" or "end". */
void chart_text(struct chart *c, double x, double y, const char *anchor, const char *cls,
		const char *s);
/* Legend swatches along the top edge, in as many rows as the width needs. */
void chart_legend(struct chart *c, const char *const *labels, const char *const *classes, size_t n);

/* Nice linear ticks (1, 2, 5 x 10^k) covering [lo, hi]; returns the count (<= max). */
size_t nice_ticks(double lo, double hi, size_t want, double *out, size_t max);

#endif
