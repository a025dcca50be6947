/* Separating axes for kinetic boxes other than x, y and z (collide.c's broad phase).
 *
 * A vertex's kinetic box is a cube of half-width `reach` around a centre that moves
 * linearly over the window: s0 at tau = 0, s1 at tau = W (collide.c, vertex_box).  Boxes
 * that overlap along x, y and z often do not along another axis: in a sheet that is not
 * aligned with the axes, a triangle's box holds the vertices across its edges, and the
 * boxes of triangles two rings apart meet.  Here the same box is kept as its two centres
 * and a radius, so that its extent along any axis m is a dot product. */
#ifndef TELA_SIM_SEP_AXIS_H
#define TELA_SIM_SEP_AXIS_H

#include <math.h>
#include <stdbool.h>

/* c0 and c1: the centres at the window's ends in lanes 0-2, and in lane 3 of both a
 * radius r such that the box's extent along m, as apart_along computes it in float, lies
 * inside [s.m - r |m|_1, s.m + r |m|_1] of the exact projection. */
typedef struct vsphere {
	_Alignas(16) float c0[4];
	float c1[4];
} vsphere;

/* The box whose corners are fl(s -/+ reach) per axis at each end.  Those corners lie
 * within u (|s| + reach) of the exact s -/+ reach (u = 2^-24), and apart_along's float
 * projection of a centre onto m is off by at most about 4 u (|s| + r) |m|_1 (three
 * products and three sums, then r |m|_1 and its sum): 2^-20 of |s| + reach covers both
 * with room to spare, a micron at a metre from the origin. */
static inline void vsphere_set(vsphere *v, const float s0[3], const float s1[3], float reach)
{
	float big = 0.0f;
	for (int k = 0; k < 3; k++) {
		v->c0[k] = s0[k], v->c1[k] = s1[k];
		big = fmaxf(big, fmaxf(fabsf(s0[k]), fabsf(s1[k])));
	}
	v->c0[3] = v->c1[3] = reach + 0x1p-20f * (big + reach);
}

/* |m|_1, by which a radius scales along m (the cube's support). */
static inline float axis_length(const float m[3]) { return fabsf(m[0]) + fabsf(m[1]) + fabsf(m[2]); }

/* The farthest a box end (centre and radius p) reaches along m, and the least. */
static inline float box_upper(const float *p, const float m[3], float len)
{
	return p[0] * m[0] + p[1] * m[1] + p[2] * m[2] + p[3] * len;
}

static inline float box_lower(const float *p, const float m[3], float len)
{
	return p[0] * m[0] + p[1] * m[1] + p[2] * m[2] - p[3] * len;
}

/* Whether the boxes of vertices a[0, na) and those of b[0, nb) are apart along the axis m
 * (pointing from a's side to b's) at both ends of the window.  Along a fixed axis each
 * box's extent is linear in tau, so the hull of a's boxes reaches at most the
 * interpolation of its reach at the ends (a maximum of linear functions is convex) and
 * b's no less than theirs: apart at both ends, apart throughout, and so is every point of
 * the primitives these vertices span.  That is kbox_overlap's test along another axis: it
 * keeps the guarantee of the boxes, that a pair left out cannot meet while its vertices
 * stay in their boxes.  A zero, infinite or NaN axis separates nothing. */
static inline bool apart_along(const vsphere *vs, const int *a, int na, const int *b, int nb, const float m[3])
{
	const float len = axis_length(m);
	if (!(len < INFINITY))
		return false;
	for (int e = 0; e < 2; e++) {
		float reach_a = -INFINITY, reach_b = INFINITY;
		for (int j = 0; j < na; j++) {
			float d = box_upper(e ? vs[a[j]].c1 : vs[a[j]].c0, m, len);
			reach_a = d > reach_a ? d : reach_a;
		}
		for (int j = 0; j < nb; j++) {
			float d = box_lower(e ? vs[b[j]].c1 : vs[b[j]].c0, m, len);
			reach_b = d < reach_b ? d : reach_b;
		}
		if (!(reach_b > reach_a))
			return false;
	}
	return true;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* The axis as two vectors: (m, |m|_1) for a's boxes and (m, -|m|_1) for b's, so that a
 * box end's reach is one product and a sum of its lanes.  An infinite |m|_1 becomes NaN,
 * which separates nothing. */
static inline void axis_vectors(const float m[3], __m128 *up, __m128 *down)
{
	float len = axis_length(m);
	len = len < INFINITY ? len : NAN;
	*up = _mm_setr_ps(m[0], m[1], m[2], len);
	*down = _mm_setr_ps(m[0], m[1], m[2], -len);
}

/* Lane j: the sum of q_j's lanes in box_upper's order, ((x + y) + z) + w, so the same
 * floats as box_upper and box_lower give. */
static inline __m128 lane_sums(__m128 q0, __m128 q1, __m128 q2, __m128 q3)
{
	__m128 t0 = _mm_unpacklo_ps(q0, q1), t1 = _mm_unpackhi_ps(q0, q1);
	__m128 t2 = _mm_unpacklo_ps(q2, q3), t3 = _mm_unpackhi_ps(q2, q3);
	__m128 x = _mm_movelh_ps(t0, t2), y = _mm_movehl_ps(t2, t0);
	__m128 z = _mm_movelh_ps(t1, t3), w = _mm_movehl_ps(t3, t1);
	return _mm_add_ps(_mm_add_ps(_mm_add_ps(x, y), z), w);
}

static inline __m128 end_of(const vsphere *v, int e) { return _mm_load_ps(e ? v->c1 : v->c0); }

/* apart_along for one vertex a against three b (a vertex and a triangle), ... */
static inline bool apart_1_3(const vsphere *vs, int a, const int *b, const float m[3])
{
	__m128 up, down;
	axis_vectors(m, &up, &down);
	int ok = 0xf;
	for (int e = 0; e < 2; e++) {
		__m128 s = lane_sums(_mm_mul_ps(end_of(&vs[a], e), up), _mm_mul_ps(end_of(&vs[b[0]], e), down),
		                     _mm_mul_ps(end_of(&vs[b[1]], e), down), _mm_mul_ps(end_of(&vs[b[2]], e), down));
		__m128 lhs = _mm_shuffle_ps(s, s, _MM_SHUFFLE(0, 0, 0, 0)), rhs = _mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 2, 1, 1));
		ok &= _mm_movemask_ps(_mm_cmplt_ps(lhs, rhs));
	}
	return ok == 0xf;
}

/* ... and for two against two (two edges). */
static inline bool apart_2_2(const vsphere *vs, const int *a, const int *b, const float m[3])
{
	__m128 up, down;
	axis_vectors(m, &up, &down);
	int ok = 0xf;
	for (int e = 0; e < 2; e++) {
		__m128 s = lane_sums(_mm_mul_ps(end_of(&vs[a[0]], e), up), _mm_mul_ps(end_of(&vs[a[1]], e), up),
		                     _mm_mul_ps(end_of(&vs[b[0]], e), down), _mm_mul_ps(end_of(&vs[b[1]], e), down));
		__m128 lhs = _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 1, 0, 0)), rhs = _mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 2, 3, 2));
		ok &= _mm_movemask_ps(_mm_cmplt_ps(lhs, rhs));
	}
	return ok == 0xf;
}
/* ... and for three against three (two triangles): lanes a0 a1 a2 b0, then b1 b2 (the
 * last two lanes repeat b2). */
static inline bool apart_3_3(const vsphere *vs, const int *a, const int *b, const float m[3])
{
	__m128 up, down;
	axis_vectors(m, &up, &down);
	int ok = 1;
	for (int e = 0; e < 2 && ok; e++) {
		__m128 b2 = _mm_mul_ps(end_of(&vs[b[2]], e), down);
		__m128 s = lane_sums(_mm_mul_ps(end_of(&vs[a[0]], e), up), _mm_mul_ps(end_of(&vs[a[1]], e), up),
		                     _mm_mul_ps(end_of(&vs[a[2]], e), up), _mm_mul_ps(end_of(&vs[b[0]], e), down));
		__m128 t = lane_sums(_mm_mul_ps(end_of(&vs[b[1]], e), down), b2, b2, b2);
		/* the largest of a's three (lanes 0-2 of s) below the least of b's (lane 3 of s, t) */
		__m128 top = _mm_max_ps(_mm_max_ps(s, _mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 0, 2, 1))),
		                        _mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 1, 0, 2)));
		__m128 low = _mm_min_ps(_mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 3, 3, 3)),
		                        _mm_min_ps(t, _mm_shuffle_ps(t, t, _MM_SHUFFLE(0, 0, 0, 1))));
		ok = _mm_movemask_ps(_mm_cmplt_ss(top, low)) & 1;
	}
	return ok;
}
#else
static inline bool apart_3_3(const vsphere *vs, const int *a, const int *b, const float m[3])
{
	return apart_along(vs, a, 3, b, 3, m);
}

static inline bool apart_1_3(const vsphere *vs, int a, const int *b, const float m[3])
{
	return apart_along(vs, &a, 1, b, 3, m);
}

static inline bool apart_2_2(const vsphere *vs, const int *a, const int *b, const float m[3])
{
	return apart_along(vs, a, 2, b, 2, m);
}
#endif

/* nb times the sum of a's centres at tau = 0 subtracted from na times b's: the direction
 * from a's centroid to b's, an axis that separates most pairs that are apart. */
static inline void centroid_axis(const vsphere *vs, const int *a, int na, const int *b, int nb, float m[3])
{
	for (int k = 0; k < 3; k++) {
		float sa = 0.0f, sb = 0.0f;
		for (int j = 0; j < na; j++)
			sa += vs[a[j]].c0[k];
		for (int j = 0; j < nb; j++)
			sb += vs[b[j]].c0[k];
		m[k] = (float)na * sb - (float)nb * sa;
	}
}

#endif
