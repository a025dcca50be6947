/* Selection of the debug overlays: nearest to the focus first, within the 3-D view. */
#include "overlay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool ov_inside(const float rect[4], float x, float y)
{
	return x >= rect[0] && y >= rect[1] && x < rect[0] + rect[2] && y < rect[1] + rect[3];
}

typedef struct keyed {
	float key;
	int index;
} keyed;

/* By key, then by index: the order is total, so every run picks the same. */
static int by_key(const void *pa, const void *pb)
{
	const keyed *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

int ov_pick_labels(const float (*xy)[2], int count, const float rect[4], const float focus[2], int cap,
                   float spacing, int *chosen)
{
	if (count <= 0 || cap <= 0)
		return 0;
	keyed *k = malloc(sizeof *k * (size_t)count);
	if (!k)
		return 0;
	int n = 0;
	for (int i = 0; i < count; i++) {
		if (!ov_inside(rect, xy[i][0], xy[i][1]))
			continue;
		float dx = xy[i][0] - focus[0], dy = xy[i][1] - focus[1];
		k[n++] = (keyed){dx * dx + dy * dy, i};
	}
	qsort(k, (size_t)n, sizeof *k, by_key);
	int picked = 0;
	for (int i = 0; i < n && picked < cap; i++) {
		const float *p = xy[k[i].index];
		bool clear = true;
		for (int j = 0; j < picked && clear; j++) {
			float dx = p[0] - xy[chosen[j]][0], dy = p[1] - xy[chosen[j]][1];
			clear = dx * dx + dy * dy >= spacing * spacing;
		}
		if (clear)
			chosen[picked++] = k[i].index;
	}
	free(k);
	return picked;
}

/* Whether the segment p q meets the rectangle (Liang-Barsky clipping). */
static bool crosses(const float rect[4], const float *g)
{
	float t0 = 0.0f, t1 = 1.0f, dx = g[2] - g[0], dy = g[3] - g[1];
	float p[4] = {-dx, dx, -dy, dy};
	float q[4] = {g[0] - rect[0], rect[0] + rect[2] - g[0], g[1] - rect[1], rect[1] + rect[3] - g[1]};
	for (int i = 0; i < 4; i++) {
		if (p[i] == 0.0f) {
			if (q[i] < 0.0f)
				return false;
			continue;
		}
		float t = q[i] / p[i];
		if (p[i] < 0.0f) {
			if (t > t1)
				return false;
			if (t > t0)
				t0 = t;
		} else {
			if (t < t0)
				return false;
			if (t < t1)
				t1 = t;
		}
	}
	return true;
}

/* Squared distance from f to the segment. */
static float distance2(const float *g, const float f[2])
{
	float dx = g[2] - g[0], dy = g[3] - g[1], l2 = dx * dx + dy * dy;
	float t = l2 > 0.0f ? ((f[0] - g[0]) * dx + (f[1] - g[1]) * dy) / l2 : 0.0f;
	t = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
	float ex = g[0] + t * dx - f[0], ey = g[1] + t * dy - f[1];
	return ex * ex + ey * ey;
}

int ov_pick_segments(float (*segments)[5], int count, const float rect[4], const float focus[2], int cap)
{
	int n = 0;
	for (int i = 0; i < count; i++)
		if (isfinite(segments[i][0]) && isfinite(segments[i][1]) && isfinite(segments[i][2]) &&
		    isfinite(segments[i][3]) && crosses(rect, segments[i]))
			memmove(segments[n++], segments[i], sizeof segments[i]);
	if (n <= cap)
		return n;
	if (cap <= 0)
		return 0;
	keyed *k = malloc(sizeof *k * (size_t)n);
	if (!k)
		return cap; /* the first ones, rather than none */
	for (int i = 0; i < n; i++)
		k[i] = (keyed){distance2(segments[i], focus), i};
	qsort(k, (size_t)n, sizeof *k, by_key);
	/* the cap nearest, marked, then compacted in their drawing order */
	float limit_key = k[cap - 1].key;
	int limit_index = k[cap - 1].index;
	int kept = 0;
	for (int i = 0; i < n; i++) {
		float key = distance2(segments[i], focus);
		if (key < limit_key || (key == limit_key && i <= limit_index))
			memmove(segments[kept++], segments[i], sizeof segments[i]);
	}
	free(k);
	return kept;
}
