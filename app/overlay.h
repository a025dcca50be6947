/* What of the debug views' labels and lines is drawn: a person reads a few dozen labels
 * and a few hundred lines at once, near where they look, and nothing drawn under the
 * panel or off the window helps.  Pure geometry in pixels (origin top-left), tested
 * without a window. */
#ifndef TELA_OVERLAY_H
#define TELA_OVERLAY_H

#include <stdbool.h>

/* Vertex ids drawn at most, and the least distance between two of them, pixels. */
enum { OV_LABEL_CAP = 40 };
#define OV_LABEL_SPACING 22.0f
/* Velocity arrows drawn at most, and the least distance between their bases, pixels: a
 * thinned field reads as a flow, an arrow at each of a thousand vertices as a smear. */
enum { OV_ARROW_CAP = 300 };
#define OV_ARROW_SPACING 12.0f
/* Debug segments drawn at most (the grab force comes on top). */
enum { OV_SEGMENT_CAP = 300 };

/* Whether (x, y) lies in the rectangle x, y, width, height. */
bool ov_inside(const float rect[4], float x, float y);

/* Chooses which of `count` label positions to write: those inside `rect`, nearest to
 * `focus` first, each at least `spacing` from every one already chosen, at most `cap`.
 * Writes the chosen indices, nearest first, into `chosen` (room for `cap`) and returns
 * how many. */
int ov_pick_labels(const float (*xy)[2], int count, const float rect[4], const float focus[2], int cap,
                   float spacing, int *chosen);

/* Keeps, in place and in their order, the segments (x0 y0 x1 y1 colour) that cross
 * `rect`, and of those the `cap` nearest to `focus`; returns how many are kept. */
int ov_pick_segments(float (*segments)[5], int count, const float rect[4], const float focus[2], int cap);

#endif
