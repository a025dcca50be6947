/* Minimal SVG charts for the benchmarks' figures (docs/benchmarks.md shows them): a
 * line chart with optional logarithmic axes, and a grouped bar chart.  Plain text out,
 * no library. */
#ifndef TELA_SVG_PLOT_H
#define TELA_SVG_PLOT_H

#include <stdbool.h>

typedef struct svg_series {
	const char *label;
	const double *x, *y; /* count points; a non-finite or (log axis) non-positive y is a gap */
	int count;
	int color;           /* index into the palette */
	int dash;            /* 0 solid, 1 dashed, 2 dotted */
} svg_series;

typedef struct svg_chart {
	const char *title, *x_label, *y_label;
	bool log_x, log_y;
} svg_chart;

/* Returns 0 or errno. */
int svg_line_chart(const char *path, const svg_chart *c, const svg_series *series, int series_count);

/* groups x bars: values[g * bar_count + b]; non-finite values are left out. */
int svg_bar_chart(const char *path, const svg_chart *c, const char *const *group_labels, int group_count,
                  const char *const *bar_labels, int bar_count, const double *values);

#endif
