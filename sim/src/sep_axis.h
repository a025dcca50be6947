/* Separating axes for kinetic boxes other than x, y and z (collide.c's broad phase).
 *
 * A vertex's kinetic box is a cube of half-width `reach` around a centre that moves
 * linearly over the window: s0 at tau = 0, s1 at tau = W (collide.c, vertex_box).  The
 * escape check (ball_holds) keeps the vertex inside the ball of that radius, which the
 * cube holds, so the cube's tests (x, y and z: the trees, kbox_overlap) stay valid and
 * the other axes can use the ball: its extent along m is s.m -/+ reach |m|_2, where the
 * cube's is s.m -/+ reach |m|_1, up to sqrt(3) times wider along a tilted axis.  Boxes
 * that overlap along x, y and z often do not along another axis: in a sheet that is not
 * aligned with the axes, a triangle's box holds the vertices across its edges, and the
 * boxes of triangles two rings apart meet.  Here the ball is kept as its two centres and
 * a radius, so that its extent along any axis m is a dot product. */
#ifndef TELA_SIM_SEP_AXIS_H
#define TELA_SIM_SEP_AXIS_H

#include <math.h>
#include <stdbool.h>

/* c0 and c1: the centres at the window's ends in lanes 0-2, and in lane 3 of both a
 * radius r such that the ball's extent along m, as apart_along computes it in float,
 * lies inside [s.m - r |m|_2, s.m + r |m|_2] of the exact projection. */
typedef struct vsphere {
	_Alignas(16) float c0[4];
	float c1[4];
} vsphere;

/* The largest coordinate of a ball's centres, by which its roundings scale. */
static inline float vsphere_size(const float s0[3], const float s1[3])
{
	float big = 0.0f; /* not fmaxf, a call into libm (its NaN rule): a NaN is no size */
	for (int k = 0; k < 3; k++) {
		float a = fabsf(s0[k]), b = fabsf(s1[k]);
		big = a > big ? a : big;
		big = b > big ? b : big;
	}
	return big;
}

/* The ball of radius reach around the exact centres (ball_holds keeps the vertex inside
 * it).  apart_along's float projection of a centre onto m is off by at most 4 u |s|
 * |m|_1 <= 7 u |s| |m|_2 (u = 2^-24: three products, three sums, then r |m|_2 and its
 * sum), and its r |m|_2 by at most 7 u r |m|_2 (axis_length's rounding, the product, the
 * sum): 2^-20 of |s| + reach, 16 u, covers both twice over, a micron at a metre from the
 * origin. */
static inline void vsphere_set(vsphere *v, const float s0[3], const float s1[3], float reach)
{
	for (int k = 0; k < 3; k++)
		v->c0[k] = s0[k], v->c1[k] = s1[k];
	v->c0[3] = v->c1[3] = reach + 0x1p-20f * (vsphere_size(s0, s1) + reach);
}

/* The radius that ball_holds checks against, 2^-19 (32 u) of |s| + reach under reach.
 * ball_holds's float arithmetic puts the centre within 8 u |s| of the exact one per
 * coordinate (14 u |s| in all) and the distance within 5 u of its own (the difference,
 * the squares and sums, the radius less the margin and its square): a point it holds
 * lies within reach - margin - 4 u (|s| + reach) of the exact centre.  The cube's
 * corners are fl(s -/+ reach) per axis, within u (|s| + reach) of the exact s -/+ reach,
 * so that point lies inside the float cube at that time (the cube's faces and the ball's
 * centre are both linear in time) and inside the ball of radius reach that vsphere_set's
 * radius is for. */
static inline float vsphere_ball(const float s0[3], const float s1[3], float reach)
{
	return reach - 0x1p-19f * (vsphere_size(s0, s1) + reach);
}

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__SSE2__)
/* ball_holds (below) for a point in lanes 0-2 of p; lane 3 is not read. */
static inline bool ball_holds_v(const vsphere *v, float rb, float f, __m128 p, float margin)
{
	const float r = rb - margin;
	const __m128 xyz = _mm_castsi128_ps(_mm_setr_epi32(-1, -1, -1, 0));
	__m128 c0 = _mm_load_ps(v->c0), c = _mm_add_ps(c0, _mm_mul_ps(_mm_set1_ps(f), _mm_sub_ps(_mm_load_ps(v->c1), c0)));
	__m128 d = _mm_and_ps(_mm_sub_ps(p, c), xyz);
	__m128 q = _mm_mul_ps(d, d);
	q = _mm_add_ps(q, _mm_movehl_ps(q, q)); /* (d0^2 + d2^2, d1^2 + 0) */
	q = _mm_add_ss(q, _mm_shuffle_ps(q, q, _MM_SHUFFLE(1, 1, 1, 1)));
	return r >= 0.0f && _mm_cvtss_f32(q) <= r * r;
}
#endif

/* Whether the point p, with margin around it, lies in the ball of radius rb
 * (vsphere_ball) around the centre at the fraction f of the window.  The vector form and
 * the scalar one do the same float operations in the same order. */
static inline bool ball_holds(const vsphere *v, float rb, float f, const float p[3], float margin)
{
#if defined(__SSE2__)
	return ball_holds_v(v, rb, f, _mm_setr_ps(p[0], p[1], p[2], 0.0f), margin);
#else
	const float r = rb - margin;
	float d[3];
	for (int k = 0; k < 3; k++)
		d[k] = p[k] - (v->c0[k] + f * (v->c1[k] - v->c0[k]));
	return r >= 0.0f && (d[0] * d[0] + d[2] * d[2]) + (d[1] * d[1] + 0.0f) <= r * r;
#endif
}

/* |m|_2, by which the ball's radius scales along m; NaN, which separates nothing, for an
 * axis whose largest part is under 2^-40 or over 2^40: between those its squares neither
 * overflow nor lose more than 2^-46 of their sum to underflow. */
static inline float axis_length(const float m[3])
{
	float a = fabsf(m[0]), b = fabsf(m[1]), c = fabsf(m[2]);
	float big = a > b ? a : b;
	big = c > big ? c : big;
	if (!(big >= 0x1p-40f && big <= 0x1p40f))
		return NAN;
	return sqrtf(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
}

/* The farthest a ball end (centre and radius p) reaches along m, and the least. */
static inline float box_upper(const float *p, const float m[3], float len)
{
	return p[0] * m[0] + p[1] * m[1] + p[2] * m[2] + p[3] * len;
}

static inline float box_lower(const float *p, const float m[3], float len)
{
	return p[0] * m[0] + p[1] * m[1] + p[2] * m[2] - p[3] * len;
}

/* Whether the balls of vertices a[0, na) and those of b[0, nb) are apart along the axis m
 * (pointing from a's side to b's) at both ends of the window.  Along a fixed axis each
 * ball's extent is linear in tau, so the hull of a's balls reaches at most the
 * interpolation of its reach at the ends (a maximum of linear functions is convex) and
 * b's no less than theirs: apart at both ends, apart throughout, and so is every point of
 * the primitives these vertices span.  That is kbox_overlap's test along another axis: it
 * keeps the guarantee of the boxes, that a pair left out cannot meet while its vertices
 * stay in their balls (inside their boxes).  A zero, tiny, huge or NaN axis separates
 * nothing. */
static inline bool apart_along(const vsphere *vs, const int *a, int na, const int *b, int nb, const float m[3])
{
	const float len = axis_length(m);
	if (!(len >= 0.0f))
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
/* The axis as two vectors: (m, |m|_2) for a's balls and (m, -|m|_2) for b's, so that a
 * ball end's reach is one product and a sum of its lanes (a NaN length separates
 * nothing). */
static inline void axis_vectors(const float m[3], __m128 *up, __m128 *down)
{
	const float len = axis_length(m);
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

/* apart_along for four vertices v, the first na (1 or 2) of them a's, the others b's:
 * all four reaches at an end in one vector, then every a-lane against every b-lane. */
static inline bool apart_4(const vsphere *vs, const int v[4], int na, const float m[3])
{
	__m128 up, down;
	axis_vectors(m, &up, &down);
	int ok = 0xf;
	for (int e = 0; e < 2; e++) {
		__m128 s = lane_sums(_mm_mul_ps(end_of(&vs[v[0]], e), up), _mm_mul_ps(end_of(&vs[v[1]], e), na > 1 ? up : down),
		                     _mm_mul_ps(end_of(&vs[v[2]], e), down), _mm_mul_ps(end_of(&vs[v[3]], e), down));
		__m128 lhs = na > 1 ? _mm_shuffle_ps(s, s, _MM_SHUFFLE(1, 1, 0, 0)) : _mm_shuffle_ps(s, s, _MM_SHUFFLE(0, 0, 0, 0));
		__m128 rhs = na > 1 ? _mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 2, 3, 2)) : _mm_shuffle_ps(s, s, _MM_SHUFFLE(3, 2, 1, 1));
		ok &= _mm_movemask_ps(_mm_cmplt_ps(lhs, rhs));
	}
	return ok == 0xf;
}

/* ... for one vertex a against three b (a vertex and a triangle), two against two (two
 * edges) ... */
static inline bool apart_1_3(const vsphere *vs, int a, const int *b, const float m[3])
{
	const int v[4] = {a, b[0], b[1], b[2]};
	return apart_4(vs, v, 1, m);
}

static inline bool apart_2_2(const vsphere *vs, const int *a, const int *b, const float m[3])
{
	const int v[4] = {a[0], a[1], b[0], b[1]};
	return apart_4(vs, v, 2, m);
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
