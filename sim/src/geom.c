/*
 * Geometry primitives for the collision solver, all in double precision.
 *
 * Three parts:
 *  - closest distances (point-triangle, segment-segment), plain floating point,
 *    robust to degenerate input by falling back to boundary cases;
 *  - exact orientation predicates (a floating-point filter, then exact expansion
 *    arithmetic after Shewchuk 1997 when the filter cannot decide) and a static
 *    triangle-triangle test built on them;
 *  - continuous collision detection by conservative inclusion and bisection in
 *    time, in the spirit of Wang et al. 2021 (Tight-Inclusion) but with
 *    separating directions instead of axis-aligned boxes in (u, v).
 *
 * Why inclusion and not the coplanarity cubic: the cubic needs special cases for
 * coplanar-throughout and parallel motion, and every tolerance in it is a chance
 * for a false negative.  The inclusion search has one soundness argument that
 * covers every case: the vector F(t, u, v) between the two moving points has
 * degree one in each parameter, so the range of any linear functional of it over
 * a time interval is bounded by values at the interval ends and the corners of the
 * (u, v) domain, and those values are computed with a proven rounding-error
 * bound.  A time interval is discarded only when that bound proves F cannot reach
 * the thickness ball in it, so the exact earliest contact always stays inside
 * some surviving interval.
 */
#include "sim/sim_geom.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

/* ---- small vector helpers ------------------------------------------------------------------- */

static inline void sub3(const double a[3], const double b[3], double out[3])
{
	out[0] = a[0] - b[0];
	out[1] = a[1] - b[1];
	out[2] = a[2] - b[2];
}

static inline double dot3(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double clamp01(double x)
{
	return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x);
}

/* Squared distance from the point a + ap to the segment a + s d, s in [0, 1], given
 * dd = |d|^2: the callers already have d, dd and often ap for their own tests, and
 * computed the same way (the same operations in the same order), so passing them
 * changes no bit of the result. */
static inline double point_on_segment(const double ap[3], const double d[3], double dd, double *s)
{
	/* A zero-length segment is its first point; any s would do. */
	double t = dd > 0.0 ? clamp01(dot3(ap, d) / dd) : 0.0;
	double r[3] = {ap[0] - t * d[0], ap[1] - t * d[1], ap[2] - t * d[2]};
	*s = t;
	return dot3(r, r);
}

/* Squared distance from p to the segment a + s (b - a), s in [0, 1]. */
static inline double point_segment(const double p[3], const double a[3], const double b[3], double *s)
{
	double d[3], ap[3];
	sub3(b, a, d);
	sub3(p, a, ap);
	return point_on_segment(ap, d, dot3(d, d), s);
}

/* ---- closest distances ---------------------------------------------------------------------- */

/* Below this ratio of |n|^2 to |ab|^2 |ac|^2 (the squared sine of the corner angle)
 * the triangle is treated as degenerate: the interior solve would divide by almost
 * zero, and the boundary answer is then within the triangle's width of the truth. */
#define GEOM_DEGENERATE_SIN2 1e-14

/* The point-triangle distance.  With edges (a constant at each call) and the projection
 * outside a triangle that is not degenerate, only the edges whose lines it lies beyond are
 * measured (see sim_geom_point_triangle_bound). */
static inline double point_triangle(const double p[3], const double a[3], const double b[3], const double c[3],
                                    double w[3], bool edges)
{
	double ab[3], ac[3], ap[3];
	sub3(b, a, ab);
	sub3(c, a, ac);
	sub3(p, a, ap);
	double d00 = dot3(ab, ab), d01 = dot3(ab, ac), d11 = dot3(ac, ac);
	double den = d00 * d11 - d01 * d01;
	/* each edge is measured when it may hold the closest point */
	bool on_ab = true, on_bc = true, on_ca = true;
	if (den > GEOM_DEGENERATE_SIN2 * d00 * d11) {
		double d20 = dot3(ap, ab), d21 = dot3(ap, ac);
		double v = (d11 * d20 - d01 * d21) / den;
		double s = (d00 * d21 - d01 * d20) / den;
		if (v >= 0.0 && s >= 0.0 && v + s <= 1.0) {
			double r[3];
			for (int i = 0; i < 3; i++)
				r[i] = ap[i] - v * ab[i] - s * ac[i];
			/* rounding could dip below 0; fmax(0.0, x) inline (x is never -0: 1 - v
			 * is not -0, and a - a is +0) */
			double w0 = 1.0 - v - s;
			w[0] = w0 > 0.0 ? w0 : 0.0;
			w[1] = v;
			w[2] = s;
			return dot3(r, r);
		}
		if (edges) {
			/* The projection is beyond the line of one edge or two (all three cannot
			 * be: the weights sum to 1).  For a convex polygon the closest point lies
			 * on an edge whose line the point is beyond (were it on another edge only,
			 * or at a corner of two others, the point would be beyond that edge's line
			 * or theirs), so only those edges compete. */
			on_ab = s < 0.0;
			on_bc = v + s > 1.0;
			on_ca = v < 0.0;
		}
	}
	/* The projection is outside (or the triangle is flat): for a convex set the
	 * closest point is then on the boundary, so the edges decide. */
	double s_ab = 0.0, s_bc = 0.0, s_ca = 0.0;
	double d_ab = on_ab ? point_on_segment(ap, ab, d00, &s_ab) : INFINITY;
	double d_bc = on_bc ? point_segment(p, b, c, &s_bc) : INFINITY;
	double d_ca = on_ca ? point_segment(p, c, a, &s_ca) : INFINITY;
	if (d_ab <= d_bc && d_ab <= d_ca) {
		w[0] = 1.0 - s_ab;
		w[1] = s_ab;
		w[2] = 0.0;
		return d_ab;
	}
	if (d_bc <= d_ca) {
		w[0] = 0.0;
		w[1] = 1.0 - s_bc;
		w[2] = s_bc;
		return d_bc;
	}
	w[0] = s_ca;
	w[1] = 0.0;
	w[2] = 1.0 - s_ca;
	return d_ca;
}

double sim_geom_point_triangle(const double p[3], const double a[3], const double b[3],
                               const double c[3], double w[3])
{
	return point_triangle(p, a, b, c, w, false);
}

double sim_geom_point_triangle_bound(const double p[3], const double a[3], const double b[3],
                                     const double c[3], double w[3])
{
	return point_triangle(p, a, b, c, w, true);
}

/* The closest points of two segments.  With one_end (a constant at each call) and no
 * stationary point in the unit square, only the end whose distance is least in exact
 * arithmetic is worked out, by clamping (s first, then t, then s again); see
 * sim_geom_segment_segment_bound. */
static inline double segment_segment(const double p0[3], const double p1[3], const double q0[3],
                                     const double q1[3], double *s_out, double *t_out, bool one_end)
{
	double d1[3], d2[3], r[3];
	sub3(p1, p0, d1);
	sub3(q1, q0, d2);
	sub3(p0, q0, r);
	double a = dot3(d1, d1), e = dot3(d2, d2), b = dot3(d1, d2);
	double den = a * e - b * b;
	double best = INFINITY, bs = 0.0, bt = 0.0;
	if (den > GEOM_DEGENERATE_SIN2 * a * e) {
		/* Stationary point of |r + s d1 - t d2|^2; when it lies in the unit square it
		 * is the global minimum (the function is convex). */
		double c = dot3(d1, r), f = dot3(d2, r);
		double s = (b * f - c * e) / den;
		double t = (a * f - b * c) / den;
		if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
			double x[3];
			for (int i = 0; i < 3; i++)
				x[i] = r[i] + s * d1[i] - t * d2[i];
			best = dot3(x, x);
			bs = s;
			bt = t;
			/* Well-conditioned: done.  Nearly parallel: the solve may be off, so let
			 * the boundary candidates below compete. */
			if (den > 1e-6 * a * e) {
				*s_out = bs;
				*t_out = bt;
				return best;
			}
		}
	}
	/* Otherwise the minimum is on the boundary of the unit square: one of the four
	 * endpoints against the other segment.  This also covers parallel, collinear
	 * and zero-length segments without special cases.  The ends of the first
	 * segment against the second (p0 - q0 is r), then the ends of the second
	 * against the first, in this order: ties keep the earlier. */
	double ap[3], u, d;
	bool k;
	if (one_end && best == INFINITY && den > 1e-6 * a * e) {
		/* The square's least point is on its boundary (the function is convex): clamp
		 * s of the stationary point, take the best t for it, clamp, and the best s for
		 * that t.  That lands on the side of the square holding the least point; its
		 * end (t at 0 or 1, else s at 0 or 1) is then measured the same way as below.
		 * Only with the lines well apart in angle (the threshold above that trusts the
		 * interior solve): for nearly parallel ones the stationary point is too
		 * uncertain to pick a side by, and all four ends compete. */
		double c = dot3(d1, r), f = dot3(d2, r);
		double s = clamp01((b * f - c * e) / den);
		double t = (b * s + f) / e;
		if (t <= 0.0 || t >= 1.0) {
			t = t <= 0.0 ? 0.0 : 1.0;
			sub3(t == 0.0 ? q0 : q1, p0, ap);
			d = point_on_segment(ap, d1, a, &u);
			*s_out = u;
			*t_out = t;
			return d;
		}
		if (s == 0.0 || s == 1.0) {
			if (s == 0.0)
				d = point_on_segment(r, d2, e, &u);
			else {
				sub3(p1, q0, ap);
				d = point_on_segment(ap, d2, e, &u);
			}
			*s_out = s;
			*t_out = u;
			return d;
		}
		/* both inside by rounding: all four ends, as below */
	}
	/* selects rather than branches: which end wins is as good as random */
	d = point_on_segment(r, d2, e, &u);
	k = d < best;
	best = k ? d : best, bs = k ? 0.0 : bs, bt = k ? u : bt;
	sub3(p1, q0, ap);
	d = point_on_segment(ap, d2, e, &u);
	k = d < best;
	best = k ? d : best, bs = k ? 1.0 : bs, bt = k ? u : bt;
	sub3(q0, p0, ap);
	d = point_on_segment(ap, d1, a, &u);
	k = d < best;
	best = k ? d : best, bs = k ? u : bs, bt = k ? 0.0 : bt;
	sub3(q1, p0, ap);
	d = point_on_segment(ap, d1, a, &u);
	k = d < best;
	best = k ? d : best, bs = k ? u : bs, bt = k ? 1.0 : bt;
	*s_out = bs;
	*t_out = bt;
	return best;
}

double sim_geom_segment_segment(const double p0[3], const double p1[3], const double q0[3],
                                const double q1[3], double *s_out, double *t_out)
{
	return segment_segment(p0, p1, q0, q1, s_out, t_out, false);
}

double sim_geom_segment_segment_bound(const double p0[3], const double p1[3], const double q0[3],
                                      const double q1[3], double *s_out, double *t_out)
{
	return segment_segment(p0, p1, q0, q1, s_out, t_out, true);
}

/* ---- exact predicates ----------------------------------------------------------------------- */

/* Error-free transformations (Knuth, Dekker; Shewchuk 1997).  They rely on
 * round-to-nearest double arithmetic without contraction, which the build
 * guarantees (-ffp-contract=off, no fast-math). */
static inline void two_sum(double a, double b, double *x, double *y)
{
	double s = a + b;
	double bv = s - a;
	double av = s - bv;
	*y = (a - av) + (b - bv);
	*x = s;
}

static inline void two_diff(double a, double b, double *x, double *y)
{
	double s = a - b;
	double bv = a - s;
	double av = s + bv;
	*y = (a - av) + (bv - b);
	*x = s;
}

static inline void split(double a, double *hi, double *lo)
{
	double c = 134217729.0 * a; /* 2^27 + 1 */
	double big = c - a;
	*hi = c - big;
	*lo = a - *hi;
}

static inline void two_prod(double a, double b, double *x, double *y)
{
	double p = a * b;
	double ah, al, bh, bl;
	split(a, &ah, &al);
	split(b, &bh, &bl);
	double e1 = p - ah * bh;
	double e2 = e1 - al * bh;
	double e3 = e2 - ah * bl;
	*y = al * bl - e3;
	*x = p;
}

/* Adds b to the nonoverlapping expansion e[0..n) in place (Grow-Expansion with
 * zero elimination); returns the new length.  In place is safe because each
 * output index never passes the input index being read. */
static int grow(double *e, int n, double b)
{
	double q = b;
	int m = 0;
	for (int i = 0; i < n; i++) {
		double h;
		two_sum(q, e[i], &q, &h);
		if (h != 0.0)
			e[m++] = h;
	}
	if (q != 0.0 || m == 0)
		e[m++] = q;
	return m;
}

/* Sign of a nonoverlapping expansion: that of its largest component, the last. */
static int expansion_sign(const double *e, int n)
{
	if (n == 0)
		return 0;
	double top = e[n - 1];
	return (top > 0.0) - (top < 0.0);
}

/* Adds sign * x * y * z exactly to the expansion; x, y, z are plain doubles. */
static int grow_triple(double *e, int n, double sign, double x, double y, double z)
{
	/* Most differences are exact, so their low parts are zero: skip those terms. */
	if (x == 0.0 || y == 0.0 || z == 0.0)
		return n;
	double p, q, r0, r1, r2, r3;
	two_prod(x, y, &p, &q);
	two_prod(p, z, &r0, &r1);
	two_prod(q, z, &r2, &r3);
	n = grow(e, n, sign * r0);
	n = grow(e, n, sign * r1);
	n = grow(e, n, sign * r2);
	return grow(e, n, sign * r3);
}

/* Shewchuk's first-stage error bounds, with epsilon = 2^-53. */
#define GEOM_EPS 0x1p-53
#define CCW_ERR_A ((3.0 + 16.0 * GEOM_EPS) * GEOM_EPS)
#define O3D_ERR_A ((7.0 + 56.0 * GEOM_EPS) * GEOM_EPS)

static int orient2d_exact(const double a[2], const double b[2], const double c[2])
{
	/* Each difference is exact as a two-term expansion, so the determinant is a sum
	 * of 16 exact products. */
	double ax[2], ay[2], bx[2], by[2];
	two_diff(a[0], c[0], &ax[0], &ax[1]);
	two_diff(a[1], c[1], &ay[0], &ay[1]);
	two_diff(b[0], c[0], &bx[0], &bx[1]);
	two_diff(b[1], c[1], &by[0], &by[1]);
	double e[40];
	int n = 0;
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 2; j++) {
			double p, q;
			if ((ax[i] == 0.0 || by[j] == 0.0) && (ay[i] == 0.0 || bx[j] == 0.0))
				continue;
			two_prod(ax[i], by[j], &p, &q);
			n = grow(e, n, p);
			n = grow(e, n, q);
			two_prod(ay[i], bx[j], &p, &q);
			n = grow(e, n, -p);
			n = grow(e, n, -q);
		}
	}
	return expansion_sign(e, n);
}

int sim_geom_orient2d(const double a[2], const double b[2], const double c[2])
{
	double left = (a[0] - c[0]) * (b[1] - c[1]);
	double right = (a[1] - c[1]) * (b[0] - c[0]);
	double det = left - right;
	double bound = CCW_ERR_A * (fabs(left) + fabs(right));
	if (det > bound)
		return 1;
	if (-det > bound)
		return -1;
	return orient2d_exact(a, b, c);
}

static int orient3d_exact(const double a[3], const double b[3], const double c[3],
                          const double d[3])
{
	double ad[3][2], bd[3][2], cd[3][2];
	for (int i = 0; i < 3; i++) {
		two_diff(a[i], d[i], &ad[i][0], &ad[i][1]);
		two_diff(b[i], d[i], &bd[i][0], &bd[i][1]);
		two_diff(c[i], d[i], &cd[i][0], &cd[i][1]);
	}
	/* (a-d).((b-d)x(c-d)) as six signed triple products of two-term differences:
	 * 6 * 8 * 4 = 192 exact terms at most. */
	double e[200];
	int n = 0;
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 2; j++) {
			for (int k = 0; k < 2; k++) {
				n = grow_triple(e, n, 1.0, ad[2][i], bd[0][j], cd[1][k]);
				n = grow_triple(e, n, -1.0, ad[2][i], cd[0][j], bd[1][k]);
				n = grow_triple(e, n, 1.0, bd[2][i], cd[0][j], ad[1][k]);
				n = grow_triple(e, n, -1.0, bd[2][i], ad[0][j], cd[1][k]);
				n = grow_triple(e, n, 1.0, cd[2][i], ad[0][j], bd[1][k]);
				n = grow_triple(e, n, -1.0, cd[2][i], bd[0][j], ad[1][k]);
			}
		}
	}
	return expansion_sign(e, n);
}

int sim_geom_orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
	double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
	double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
	double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
	double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
	double cdxady = cdx * ady, adxcdy = adx * cdy;
	double adxbdy = adx * bdy, bdxady = bdx * ady;
	double det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady);
	double perm = (fabs(bdxcdy) + fabs(cdxbdy)) * fabs(adz) +
	              (fabs(cdxady) + fabs(adxcdy)) * fabs(bdz) +
	              (fabs(adxbdy) + fabs(bdxady)) * fabs(cdz);
	double bound = O3D_ERR_A * perm;
	if (det > bound)
		return 1;
	if (-det > bound)
		return -1;
	return orient3d_exact(a, b, c, d);
}

/* ---- triangle-triangle intersection --------------------------------------------------------- */

/* Drops coordinate k: exact, and injective on any plane whose normal has a nonzero
 * k component. */
static inline void project(const double p[3], int k, double out[2])
{
	out[0] = p[k == 0 ? 1 : 0];
	out[1] = p[k == 2 ? 1 : 2];
}

static inline bool in_box2(const double p[2], const double q[2], const double x[2])
{
	return x[0] >= fmin(p[0], q[0]) && x[0] <= fmax(p[0], q[0]) &&
	       x[1] >= fmin(p[1], q[1]) && x[1] <= fmax(p[1], q[1]);
}

/* Closed 2-D segments pq and rs share a point.  Zero-length segments work: a
 * collinear point inside the bounding box of a segment is on it. */
static bool segments_meet_2d(const double p[2], const double q[2], const double r[2],
                             const double s[2])
{
	int o1 = sim_geom_orient2d(p, q, r), o2 = sim_geom_orient2d(p, q, s);
	int o3 = sim_geom_orient2d(r, s, p), o4 = sim_geom_orient2d(r, s, q);
	if (o1 * o2 < 0 && o3 * o4 < 0)
		return true;
	return (o1 == 0 && in_box2(p, q, r)) || (o2 == 0 && in_box2(p, q, s)) ||
	       (o3 == 0 && in_box2(r, s, p)) || (o4 == 0 && in_box2(r, s, q));
}

/* Closed 2-D triangle abc (not degenerate) contains x. */
static bool triangle_contains_2d(const double a[2], const double b[2], const double c[2],
                                 const double x[2])
{
	int o1 = sim_geom_orient2d(a, b, x), o2 = sim_geom_orient2d(b, c, x);
	int o3 = sim_geom_orient2d(c, a, x);
	return (o1 >= 0 && o2 >= 0 && o3 >= 0) || (o1 <= 0 && o2 <= 0 && o3 <= 0);
}

/* Closed 3-D segments pq and rs share a point; any degeneracy allowed. */
static bool segments_meet_3d(const double p[3], const double q[3], const double r[3],
                             const double s[3])
{
	if (sim_geom_orient3d(p, q, r, s) != 0)
		return false;
	const double *pts[4] = {p, q, r, s};
	/* Coplanar.  If some triple is not collinear its plane is the plane of all four,
	 * and an axis where that triple projects to a nonzero area is faithful. */
	for (int k = 0; k < 3; k++) {
		double x[4][2];
		for (int i = 0; i < 4; i++)
			project(pts[i], k, x[i]);
		if (sim_geom_orient2d(x[0], x[1], x[2]) != 0 || sim_geom_orient2d(x[0], x[1], x[3]) != 0 ||
		    sim_geom_orient2d(x[0], x[2], x[3]) != 0 || sim_geom_orient2d(x[1], x[2], x[3]) != 0)
			return segments_meet_2d(x[0], x[1], x[2], x[3]);
	}
	/* All four collinear: compare intervals along an axis where the line does not
	 * collapse, which is any axis where two of the points differ. */
	for (int k = 0; k < 3; k++) {
		double lo = fmin(p[k], q[k]), hi = fmax(p[k], q[k]);
		double lo2 = fmin(r[k], s[k]), hi2 = fmax(r[k], s[k]);
		if (lo != hi || lo2 != hi2 || lo != lo2)
			return lo <= hi2 && lo2 <= hi;
	}
	return true; /* all four points coincide */
}

/* Closed segment pq meets the closed triangle t (any degeneracy allowed). */
static bool segment_meets_triangle(const double p[3], const double q[3], const double t[3][3])
{
	int axis = -1;
	for (int k = 0; k < 3 && axis < 0; k++) {
		double a[2], b[2], c[2];
		project(t[0], k, a);
		project(t[1], k, b);
		project(t[2], k, c);
		if (sim_geom_orient2d(a, b, c) != 0)
			axis = k;
	}
	if (axis < 0) /* collinear or a point: the triangle is the union of its edges */
		return segments_meet_3d(p, q, t[0], t[1]) || segments_meet_3d(p, q, t[1], t[2]) ||
		       segments_meet_3d(p, q, t[2], t[0]);
	int sp = sim_geom_orient3d(t[0], t[1], t[2], p);
	int sq = sim_geom_orient3d(t[0], t[1], t[2], q);
	if (sp * sq > 0)
		return false;
	if (sp == 0 && sq == 0) {
		double a[2], b[2], c[2], x[2], y[2];
		project(t[0], axis, a);
		project(t[1], axis, b);
		project(t[2], axis, c);
		project(p, axis, x);
		project(q, axis, y);
		return triangle_contains_2d(a, b, c, x) || triangle_contains_2d(a, b, c, y) ||
		       segments_meet_2d(x, y, a, b) || segments_meet_2d(x, y, b, c) ||
		       segments_meet_2d(x, y, c, a);
	}
	/* The segment meets the plane in exactly one point; it is in the triangle when
	 * the line pq passes on the same side of all three directed edges. */
	int o1 = sim_geom_orient3d(p, q, t[0], t[1]);
	int o2 = sim_geom_orient3d(p, q, t[1], t[2]);
	int o3 = sim_geom_orient3d(p, q, t[2], t[0]);
	return (o1 >= 0 && o2 >= 0 && o3 >= 0) || (o1 <= 0 && o2 <= 0 && o3 <= 0);
}

bool sim_geom_triangles_intersect(const double a[3][3], const double b[3][3])
{
	for (int k = 0; k < 3; k++) {
		double alo = fmin(a[0][k], fmin(a[1][k], a[2][k]));
		double ahi = fmax(a[0][k], fmax(a[1][k], a[2][k]));
		double blo = fmin(b[0][k], fmin(b[1][k], b[2][k]));
		double bhi = fmax(b[0][k], fmax(b[1][k], b[2][k]));
		if (ahi < blo || bhi < alo)
			return false;
	}
	/* The intersection of two convex sets, when not empty, has a point on the
	 * boundary of one of them (an end of the intersection segment, or for coplanar
	 * triangles a vertex of the overlap), so the six edge-triangle tests decide. */
	for (int i = 0; i < 3; i++) {
		if (segment_meets_triangle(b[i], b[(i + 1) % 3], a) ||
		    segment_meets_triangle(a[i], a[(i + 1) % 3], b))
			return true;
	}
	return false;
}

/* ---- continuous collision detection --------------------------------------------------------- */

/*
 * Both queries look at the vector F(t, u, v) from a point of the second primitive
 * to a point of the first:
 *   vertex-face  F = p0 - (p1 + u (p2 - p1) + v (p3 - p1)),   u, v >= 0, u + v <= 1
 *   edge-edge    F = (p0 + u (p1 - p0)) - (p2 + v (p3 - p2)),  u, v in [0, 1]
 * with pk(t) = x0k + t (x1k - x0k).  F has degree one in each of t, u, v, so over
 * [t0, t1] times the whole (u, v) domain every linear functional of F (its
 * coordinates, or n . F for any fixed vector n) takes its extremes at t0 or t1 and
 * at a vertex of the (u, v) domain.  Those corner values are plain differences of
 * two interpolated points: vertex minus face vertex, or edge end minus edge end.
 *
 * Rounding error of one corner value, per axis, with M the largest |coordinate|
 * along that axis over the 8 input points and eps = 2^-53 (first order, t in [0, 1]):
 *   d = x1 - x0          |d| <= 2M   error 2 eps M
 *   p = x0 + t d                     error 2 + 2 + 1 = 5 eps M
 *   F = p - p'                       error 5 + 5 + 2 = 12 eps M
 * and for n . F with computed F, K = sum |n_i| M_i:
 *   sum |n_i| 12 eps M_i + 3 eps sum |n_i| |F_i| <= (12 + 6) eps K = 18 eps K.
 * We use 32 eps M and 32 eps K; the slack covers second-order terms and the
 * rounding of K itself.  Box ends t are dyadic (bisection of [0, 1]), so exact.
 *
 * The search bisects t only ("boxes" below are time intervals times the whole
 * (u, v) domain), depth first with the earlier half first, so the first box that
 * survives and is small enough is the earliest contact.  A box is discarded when
 * one coordinate of F, or F projected on a direction built from the closest
 * features at the box's middle time (turning with the primitives across the box,
 * see ccd_separates), provably stays away from zero, beyond the thickness.  Such a
 * direction separates the primitives at that time by their full distance, so a
 * non-contact at distance g is discarded once the motion inside the box is below
 * about g.  Axis-aligned enclosures over (u, v) sub-boxes, as in Tight-Inclusion,
 * need boxes as small as the gap in every parameter, which costs thousands of
 * boxes on the near-degenerate benchmark queries instead of tens.
 */
#define CCD_ERR_FACTOR 0x1p-48 /* 32 * 2^-53 */

/* A box that cannot be discarded is reported as a contact once F moves by less than
 * this times the coordinate magnitude inside it.  Near misses closer than about
 * that are reported as hits, and the time of impact is that accurate. */
#ifndef CCD_TOL_REL
#define CCD_TOL_REL 1e-9
#endif
/* Smallest box: bounds the depth (and the stack) and keeps box ends exact. */
#define CCD_MIN_WIDTH 0x1p-40
#define CCD_STACK 48 /* > 40 levels + 2 knots */
/* Budget of boxes per query; running out reports a contact at the earliest time
 * still open, which is conservative. */
#define CCD_MAX_BOXES 10000

typedef struct ccd_query {
	double x0[4][3], d[4][3];
	double m[3];     /* largest |coordinate| per axis */
	double err[3];   /* rounding bound of one corner value, per axis */
	double bound[3]; /* err + thickness, rounded up: per-axis exclusion threshold */
	double delta;    /* thickness */
	double delta2;   /* thickness^2, rounded up */
	double tol;      /* leaf size, absolute */
	bool vf;
} ccd_query;

static void ccd_points(const ccd_query *q, double t, double p[4][3])
{
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 3; i++)
			p[k][i] = q->x0[k][i] + t * q->d[k][i];
}

/* Corner values of F at one time: 3 for vertex-face, 4 for edge-edge. */
static int ccd_corners(const ccd_query *q, const double p[4][3], double f[][3])
{
	if (q->vf) {
		sub3(p[0], p[1], f[0]);
		sub3(p[0], p[2], f[1]);
		sub3(p[0], p[3], f[2]);
		return 3;
	}
	sub3(p[0], p[2], f[0]);
	sub3(p[0], p[3], f[1]);
	sub3(p[1], p[2], f[2]);
	sub3(p[1], p[3], f[3]);
	return 4;
}

static inline void cross3(const double a[3], const double b[3], double out[3])
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

/* e x (r x e): the part of r perpendicular to e, as a cross product with e so that
 * it stays perpendicular to e to full relative precision even when r is nearly
 * parallel to e. */
static void perp_to(const double e[3], const double r[3], double out[3])
{
	double c[3];
	cross3(r, e, c);
	cross3(e, c, out);
}

/* How to build a separating direction from the four points; evaluated at both
 * ends of a box so that the direction turns with the primitives. */
typedef enum ccd_dir_kind {
	CCD_DIR_NORMAL,    /* face normal (vertex-face), or a x b (edge-edge) */
	CCD_DIR_IN_PLANE,  /* vertex-face: in the face plane, across face edge i-j */
	CCD_DIR_EDGE_PERP, /* from the line through points i, j to the other primitive's point */
	CCD_DIR_POINTS,    /* between two fixed points (a vertex, or edge points at s, t) */
} ccd_dir_kind;

typedef struct ccd_dir {
	ccd_dir_kind kind;
	int i, j;
	double s, t; /* edge-edge: parameters of the closest points */
} ccd_dir;

/* The point of edge a (points 0, 1) at s minus that of edge b (points 2, 3) at t. */
static void ee_gap(const double p[4][3], double s, double t, double r[3])
{
	for (int i = 0; i < 3; i++)
		r[i] = (p[0][i] + s * (p[1][i] - p[0][i])) - (p[2][i] + t * (p[3][i] - p[2][i]));
}

static void ccd_dir_eval(const ccd_query *q, const ccd_dir *d, const double p[4][3], double out[3])
{
	double e[3], r[3], n[3];
	switch (d->kind) {
	case CCD_DIR_NORMAL:
		if (q->vf) {
			sub3(p[2], p[1], e);
			sub3(p[3], p[1], r);
		} else {
			sub3(p[1], p[0], e);
			sub3(p[3], p[2], r);
		}
		cross3(e, r, out);
		return;
	case CCD_DIR_IN_PLANE:
		sub3(p[2], p[1], e);
		sub3(p[3], p[1], r);
		cross3(e, r, n);
		sub3(p[d->j], p[d->i], e);
		cross3(n, e, out);
		return;
	case CCD_DIR_EDGE_PERP:
		sub3(p[d->j], p[d->i], e);
		if (q->vf)
			sub3(p[0], p[d->i], r);
		else
			ee_gap(p, d->s, d->t, r);
		perp_to(e, r, out);
		return;
	case CCD_DIR_POINTS:
		if (q->vf)
			sub3(p[0], p[d->i], out);
		else
			ee_gap(p, d->s, d->t, out);
		return;
	}
}

/* Up to three directions in which to look for a separation, chosen from the closest
 * features at positions p (the middle of a box), best first.  The first joins the
 * closest points, but is built from the closest features with cross products: a
 * direction computed as a difference of nearly equal points has an angular error
 * of about eps / gap, which over a long edge or a wide face would swamp a small gap,
 * while a cross product with the edge or face is perpendicular to it to full
 * precision. */
static int ccd_directions(const ccd_query *q, const double p[4][3], ccd_dir dir[3])
{
	int n = 0;
	if (q->vf) {
		double w[3];
		sim_geom_point_triangle(p[0], p[1], p[2], p[3], w);
		int inside = (w[0] > 0.0) + (w[1] > 0.0) + (w[2] > 0.0);
		if (inside == 2) {
			int i = w[0] > 0.0 ? 1 : 2, j = w[2] > 0.0 ? 3 : 2;
			dir[n++] = (ccd_dir){CCD_DIR_EDGE_PERP, i, j, 0.0, 0.0};
			dir[n++] = (ccd_dir){CCD_DIR_IN_PLANE, i, j, 0.0, 0.0};
		} else if (inside == 1) {
			int i = w[0] > 0.0 ? 1 : (w[1] > 0.0 ? 2 : 3);
			dir[n++] = (ccd_dir){CCD_DIR_POINTS, i, 0, 0.0, 0.0};
		}
		dir[n++] = (ccd_dir){CCD_DIR_NORMAL, 0, 0, 0.0, 0.0};
	} else {
		double s, t;
		sim_geom_segment_segment(p[0], p[1], p[2], p[3], &s, &t);
		bool s_in = s > 0.0 && s < 1.0, t_in = t > 0.0 && t < 1.0;
		if (s_in) /* also right for (nearly) parallel edges, where a x b fails */
			dir[n++] = (ccd_dir){CCD_DIR_EDGE_PERP, 0, 1, s, t};
		else if (t_in)
			dir[n++] = (ccd_dir){CCD_DIR_EDGE_PERP, 2, 3, s, t};
		else
			dir[n++] = (ccd_dir){CCD_DIR_POINTS, 0, 0, s, t};
		dir[n++] = (ccd_dir){CCD_DIR_NORMAL, 0, 0, 0.0, 0.0};
	}
	return n;
}

/* Closest points at positions p: contact parameters for the caller. */
static void ccd_closest(const ccd_query *q, const double p[4][3], double *u, double *v)
{
	if (q->vf) {
		double w[3];
		sim_geom_point_triangle(p[0], p[1], p[2], p[3], w);
		*u = w[1];
		*v = w[2];
	} else {
		sim_geom_segment_segment(p[0], p[1], p[2], p[3], u, v);
	}
}

/* A bisection point in time with the data both boxes around it need. */
typedef struct ccd_knot {
	double t;
	double p[4][3]; /* the four points at t */
	double f[4][3]; /* corner values of F at t (3 used for vertex-face) */
} ccd_knot;

static void ccd_knot_at(const ccd_query *q, double t, ccd_knot *k)
{
	k->t = t;
	ccd_points(q, t, k->p);
	ccd_corners(q, k->p, k->f);
}

static double ccd_k_sum(const ccd_query *q, const double n[3])
{
	return fabs(n[0]) * q->m[0] + fabs(n[1]) * q->m[1] + fabs(n[2]) * q->m[2];
}

/*
 * True when G = n(t) . F provably stays beyond the thickness over the box from knot
 * a to knot b, where n turns linearly from n0 (at a) to n1 (at b).  For fixed
 * (u, v), with s the position in the box, n and F are both linear in s, so G is a
 * quadratic with Bernstein coefficients n0.F0, (n0.F1 + n1.F0) / 2 and n1.F1, and
 * lies between the smallest and largest of them; it is linear (edge-edge: bilinear)
 * in (u, v), so the corners of the (u, v) domain bound it.  If F vanished (or came
 * within the thickness) somewhere in the box, G would too (|n| <= max(|n0|, |n1|)),
 * so a G that stays on one side proves the box empty.  A turning direction loses
 * only second-order terms to the rotation of the primitives inside the box, where
 * a fixed one loses first-order terms; that matters for grazing contacts, whose
 * gap closes quadratically.
 *
 * Rounding: each dot product n . F carries at most 18 eps K (see above) with
 * K = sum |n_i| M_i, the middle coefficient 10 eps (K0 + K1); 32 eps (K0 + K1)
 * covers all three.
 */
static bool ccd_separates(const ccd_query *q, const double n0[3], const double n1[3],
                          const ccd_knot *a, const ccd_knot *b)
{
	double k = ccd_k_sum(q, n0) + ccd_k_sum(q, n1);
	if (!(k > 0.0) || !isfinite(k))
		return false;
	double thr = k * CCD_ERR_FACTOR + DBL_MIN;
	if (q->delta > 0.0)
		thr += q->delta * sqrt(fmax(dot3(n0, n0), dot3(n1, n1))) * (1.0 + 0x1p-40);
	thr *= 1.0 + 0x1p-50;
	int nc = q->vf ? 3 : 4;
	double lo = INFINITY, hi = -INFINITY;
	for (int c = 0; c < nc; c++) {
		double g0 = dot3(n0, a->f[c]), g1 = dot3(n1, b->f[c]);
		double gm = 0.5 * (dot3(n0, b->f[c]) + dot3(n1, a->f[c]));
		lo = fmin(lo, fmin(g0, fmin(g1, gm)));
		hi = fmax(hi, fmax(g0, fmax(g1, gm)));
		if (lo <= thr && hi >= -thr)
			return false;
	}
	return lo > thr || hi < -thr;
}

/* Coordinate test over the box between knots a and b: false when some axis of F
 * provably stays beyond the thickness; otherwise *motion gets the largest change
 * of a corner coordinate across the box. */
static bool ccd_axes_check(const ccd_query *q, const ccd_knot *a, const ccd_knot *b,
                           double *motion)
{
	int n = q->vf ? 3 : 4;
	double lo[3], hi[3], mv = 0.0;
	for (int i = 0; i < 3; i++) {
		lo[i] = hi[i] = a->f[0][i];
		for (int c = 0; c < n; c++) {
			double fa = a->f[c][i], fb = b->f[c][i];
			double l = fa < fb ? fa : fb, h = fa < fb ? fb : fa;
			lo[i] = l < lo[i] ? l : lo[i];
			hi[i] = h > hi[i] ? h : hi[i];
			mv = h - l > mv ? h - l : mv;
		}
		if (lo[i] > q->bound[i] || hi[i] < -q->bound[i])
			return false;
	}
	if (q->delta > 0.0) {
		/* Each axis alone stays within the thickness, but together they may not:
		 * the per-axis gaps bound |F|^2 from below. */
		double g2 = 0.0;
		for (int i = 0; i < 3; i++) {
			double g = fmax(lo[i] - q->err[i], -hi[i] - q->err[i]);
			if (g > 0.0)
				g2 += g * g;
		}
		if (g2 > q->delta2)
			return false;
	}
	*motion = mv;
	return true;
}

static bool ccd_run(const ccd_query *q, sim_ccd_hit *hit)
{
	/* Depth-first bisection of t, earlier half first.  The boxes still to visit
	 * always tile [current t0, 1], so the stack holds their end points: the top
	 * knot is the current box's start, the one below its end. */
	ccd_knot knots[CCD_STACK];
	int top = 1, boxes = 0;
	ccd_knot_at(q, 1.0, &knots[0]);
	ccd_knot_at(q, 0.0, &knots[1]);
	while (top > 0) {
		ccd_knot *a = &knots[top], *b = &knots[top - 1];
		double motion;
		/* Boxes are visited in increasing time, so the first one that cannot be
		 * discarded and cannot (or need not) be split is the earliest contact. */
		bool leaf = boxes >= CCD_MAX_BOXES;
		if (!leaf) {
			boxes++;
			if (!ccd_axes_check(q, a, b, &motion)) {
				top--;
				continue;
			}
			/* Directions chosen at the middle of the box (whose knot the split needs
			 * anyway), each evaluated at both ends. */
			ccd_knot mid;
			ccd_knot_at(q, 0.5 * (a->t + b->t), &mid);
			ccd_dir dir[3];
			int nd = ccd_directions(q, (const double(*)[3])mid.p, dir);
			bool separated = false;
			for (int j = 0; j < nd && !separated; j++) {
				double n0[3], n1[3];
				ccd_dir_eval(q, &dir[j], (const double(*)[3])a->p, n0);
				ccd_dir_eval(q, &dir[j], (const double(*)[3])b->p, n1);
				/* Unit length at both ends: a length that changes fast across the box
				 * (it follows the gap for some directions) would make the blend turn
				 * at the wrong pace and cost a first-order term.  Opposite signs
				 * would let the blend pass through zero. */
				double l0 = sqrt(dot3(n0, n0)), l1 = sqrt(dot3(n1, n1));
				if (!(l0 > 0.0 && l1 > 0.0) || !isfinite(l0 + l1))
					continue;
				if (dot3(n0, n1) < 0.0)
					l1 = -l1;
				for (int i = 0; i < 3; i++) {
					n0[i] /= l0;
					n1[i] /= l1;
				}
				separated = ccd_separates(q, n0, n1, a, b);
			}
			if (separated) {
				top--;
				continue;
			}
			leaf = motion <= q->tol || b->t - a->t <= CCD_MIN_WIDTH || top + 1 >= CCD_STACK;
			if (!leaf) {
				knots[top + 1] = knots[top];
				knots[top] = mid;
				top++;
				continue;
			}
		}
		if (hit) {
			ccd_closest(q, (const double(*)[3])a->p, &hit->u, &hit->v);
			hit->toi = a->t;
			hit->boxes = boxes;
		}
		return true;
	}
	if (hit)
		hit->boxes = boxes;
	return false;
}

static bool ccd(const double x0[4][3], const double x1[4][3], double thickness, bool vf,
                sim_ccd_hit *hit)
{
	ccd_query q;
	q.vf = vf;
	/* NaN or negative thickness would silently disable the exclusion margin. */
	q.delta = thickness > 0.0 ? thickness : 0.0;
	double scale = 0.0;
	bool finite = isfinite(q.delta);
	for (int i = 0; i < 3; i++) {
		double m = 0.0;
		for (int k = 0; k < 4; k++) {
			q.x0[k][i] = x0[k][i];
			q.d[k][i] = x1[k][i] - x0[k][i];
			m = fmax(m, fmax(fabs(x0[k][i]), fabs(x1[k][i])));
			finite = finite && isfinite(x0[k][i]) && isfinite(x1[k][i]);
		}
		q.m[i] = m;
		q.err[i] = m * CCD_ERR_FACTOR + DBL_MIN; /* DBL_MIN: room for underflow */
		q.bound[i] = (q.err[i] + q.delta) * (1.0 + 0x1p-50);
		scale = fmax(scale, m);
	}
	if (!finite || scale > 1e60) {
		/* Nothing can be proven: report a contact at the start, the safe answer. */
		if (hit)
			*hit = (sim_ccd_hit){0.0, 0.0, 0.0, 0};
		return true;
	}
	q.delta2 = q.delta * q.delta * (1.0 + 0x1p-40);
	q.tol = fmax(CCD_TOL_REL * scale, DBL_MIN);
	return ccd_run(&q, hit);
}

bool sim_ccd_vertex_face(const double x0[4][3], const double x1[4][3], double thickness,
                         sim_ccd_hit *hit)
{
	return ccd(x0, x1, thickness, true, hit);
}

bool sim_ccd_edge_edge(const double x0[4][3], const double x1[4][3], double thickness,
                       sim_ccd_hit *hit)
{
	return ccd(x0, x1, thickness, false, hit);
}
