#include "svg_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* Colour-blind-safe palette (Okabe and Ito). */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                      "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
#define PALETTE_SIZE ((int)(sizeof palette / sizeof palette[0]))

enum { W = 900, H = 560, LEFT = 90, RIGHT = 220, TOP = 50, BOTTOM = 60 };

static void escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
}

static void header(FILE *f, const svg_chart *c)
{
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	           "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
	        W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">", (LEFT + W - RIGHT) / 2);
	escape(f, c->title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (LEFT + W - RIGHT) / 2, H - 15);
	escape(f, c->x_label);
	fprintf(f, "</text>\n<text transform=\"translate(14 %d) rotate(-90)\" text-anchor=\"middle\">", (TOP + H - BOTTOM) / 2);
	escape(f, c->y_label);
	fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", LEFT,
	        TOP, W - LEFT - RIGHT, H - TOP - BOTTOM);
}

static int finish(FILE *f)
{
	fputs("</svg>\n", f);
	bool bad = ferror(f) != 0;
	if (fclose(f) != 0 || bad)
		return errno ? errno : EIO;
	return 0;
}

typedef struct axis {
	double lo, hi;
	int ticks; /* intervals between labelled ticks */
	bool log;
	int p0, p1; /* pixel positions of lo and hi */
} axis;

static double axis_value(const axis *a, double v) { return a->log ? log10(v) : v; }

static double axis_pixel(const axis *a, double v)
{
	double t = (axis_value(a, v) - a->lo) / (a->hi - a->lo);
	return a->p0 + t * (a->p1 - a->p0);
}

static bool usable(const axis *a, double v) { return isfinite(v) && (!a->log || v > 0.0); }

/* Round bounds: decades on a log axis, a 1-2-5 step on a linear one (from 0). */
static void fit(axis *a, double lo, double hi)
{
	if (a->log) {
		a->lo = floor(log10(lo));
		a->hi = ceil(log10(hi));
		if (a->hi <= a->lo)
			a->hi = a->lo + 1.0;
		a->ticks = (int)(a->hi - a->lo);
		return;
	}
	(void)lo; /* linear axes start at 0: bars and rates are compared to nothing */
	a->lo = 0.0;
	double span = hi > 0.0 ? hi : 1.0;
	/* the smallest 1-2-5 step that covers the data in at most 6 intervals */
	double decade = pow(10.0, floor(log10(span / 6.0))), step = decade;
	static const double factors[] = {1.0, 2.0, 5.0, 10.0};
	for (int k = 0; k < 4; k++) {
		step = factors[k] * decade;
		if (span / step <= 6.0)
			break;
	}
	a->ticks = (int)ceil(span / step - 1e-9);
	a->hi = a->ticks * step;
}

static void ticks(FILE *f, const axis *a, bool vertical)
{
	int count = a->ticks;
	for (int k = 0; k <= count; k++) {
		double v = a->log ? pow(10.0, a->lo + k) : a->lo + (a->hi - a->lo) * k / count;
		double p = a->p0 + (double)k / count * (a->p1 - a->p0);
		if (vertical)
			fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			           "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
			        LEFT, W - RIGHT, p, p, LEFT - 6, p + 4, v);
		else
			fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
			           "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n",
			        p, p, TOP, H - BOTTOM, p, H - BOTTOM + 18, v);
	}
}

int svg_line_chart(const char *path, const svg_chart *c, const svg_series *series, int series_count)
{
	axis ax = {.log = c->log_x, .p0 = LEFT, .p1 = W - RIGHT}, ay = {.log = c->log_y, .p0 = H - BOTTOM, .p1 = TOP};
	double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	for (int s = 0; s < series_count; s++)
		for (int i = 0; i < series[s].count; i++) {
			double x = series[s].x[i], y = series[s].y[i];
			if (!usable(&ax, x) || !usable(&ay, y))
				continue;
			xlo = fmin(xlo, x), xhi = fmax(xhi, x), ylo = fmin(ylo, y), yhi = fmax(yhi, y);
		}
	if (!(xlo <= xhi))
		xlo = 1.0, xhi = 10.0, ylo = 1.0, yhi = 10.0;
	fit(&ax, xlo, xhi);
	fit(&ay, ylo, yhi);
	FILE *f = fopen(path, "w");
	if (!f)
		return errno;
	header(f, c);
	ticks(f, &ax, false);
	ticks(f, &ay, true);
	static const char *const dashes[] = {"", " stroke-dasharray=\"8 4\"", " stroke-dasharray=\"2 3\""};
	for (int s = 0; s < series_count; s++) {
		const svg_series *se = &series[s];
		const char *col = palette[se->color % PALETTE_SIZE];
		const char *dash = dashes[se->dash >= 0 && se->dash < 3 ? se->dash : 0];
		bool open = false;
		for (int i = 0; i < se->count; i++) {
			if (!usable(&ax, se->x[i]) || !usable(&ay, se->y[i])) {
				if (open)
					fputs("\"/>\n", f);
				open = false;
				continue;
			}
			if (!open)
				fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"", col, dash);
			fprintf(f, "%.1f,%.1f ", axis_pixel(&ax, se->x[i]), axis_pixel(&ay, se->y[i]));
			open = true;
		}
		if (open)
			fputs("\"/>\n", f);
		for (int i = 0; i < se->count; i++)
			if (usable(&ax, se->x[i]) && usable(&ay, se->y[i]))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", axis_pixel(&ax, se->x[i]),
				        axis_pixel(&ay, se->y[i]), col);
		int ly = TOP + 10 + 18 * s;
		fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
		           "<text x=\"%d\" y=\"%d\">",
		        W - RIGHT + 12, W - RIGHT + 42, ly, ly, col, dash, W - RIGHT + 48, ly + 4);
		escape(f, se->label);
		fputs("</text>\n", f);
	}
	return finish(f);
}

int svg_bar_chart(const char *path, const svg_chart *c, const char *const *group_labels, int group_count,
                  const char *const *bar_labels, int bar_count, const double *values)
{
	axis ay = {.log = c->log_y, .p0 = H - BOTTOM, .p1 = TOP};
	double lo = INFINITY, hi = -INFINITY;
	for (int i = 0; i < group_count * bar_count; i++)
		if (usable(&ay, values[i]))
			lo = fmin(lo, values[i]), hi = fmax(hi, values[i]);
	if (!(lo <= hi))
		lo = 1.0, hi = 10.0;
	fit(&ay, lo, hi);
	FILE *f = fopen(path, "w");
	if (!f)
		return errno;
	header(f, c);
	ticks(f, &ay, true);
	double group_w = (double)(W - LEFT - RIGHT) / (group_count > 0 ? group_count : 1);
	double bar_w = group_w * 0.8 / (bar_count > 0 ? bar_count : 1);
	double base = ay.log ? ay.p0 : axis_pixel(&ay, 0.0);
	for (int g = 0; g < group_count; g++) {
		double gx = LEFT + g * group_w;
		for (int b = 0; b < bar_count; b++) {
			double v = values[g * bar_count + b];
			if (!usable(&ay, v))
				continue;
			double top = axis_pixel(&ay, v);
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%g</title></rect>\n",
			        gx + group_w * 0.1 + b * bar_w, fmin(top, base), bar_w * 0.95, fabs(base - top),
			        palette[b % PALETTE_SIZE], v);
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", gx + group_w / 2, H - BOTTOM + 18);
		escape(f, group_labels[g]);
		fputs("</text>\n", f);
	}
	for (int b = 0; b < bar_count; b++) {
		int ly = TOP + 10 + 18 * b;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"24\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">",
		        W - RIGHT + 12, ly - 5, palette[b % PALETTE_SIZE], W - RIGHT + 42, ly + 4);
		escape(f, bar_labels[b]);
		fputs("</text>\n", f);
	}
	return finish(f);
}
