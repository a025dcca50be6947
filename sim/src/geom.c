/*
 * Geometry primitives for the collision solver, all in double precision.
 *
 * Three parts:
 *  - closest distances (point-triangle, segment-segment), plain floating point,
 *    robust to degenerate input by falling back to boundary cases;
 *  - exact orientation predicates (a floating-point filter, then exact expansion
 *    arithmetic after Shewchuk 1997 when the filter cannot decide) and a static
 *    triangle-triangle test built on them;
 *  - continuous collision detection by conservative inclusion and bisection over
 *    (t, u, v), in the spirit of Wang et al. 2021 (Tight-Inclusion).
 *
 * Why inclusion and not the coplanarity cubic: the cubic needs special cases for
 * coplanar-throughout and parallel motion, and every tolerance in it is a chance
 * for a false negative.  The inclusion search has one soundness argument that
 * covers every case: the distance vector F(t, u, v) between the two moving points
 * is multilinear, so its range over a box is spanned by its values at the box
 * corners, and those values are computed with a proven rounding-error bound.  A box
 * is discarded only when the bound proves F cannot reach the thickness ball in it,
 * so the exact earliest contact always stays inside some surviving box.
 */
#include "sim/sim_geom.h"

#include <float.h>
#include <math.h>
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

/* Squared distance from p to the segment a + s (b - a), s in [0, 1]. */
static double point_segment(const double p[3], const double a[3], const double b[3], double *s)
{
	double d[3], ap[3];
	sub3(b, a, d);
	sub3(p, a, ap);
	double dd = dot3(d, d);
	/* A zero-length segment is its first point; any s would do. */
	double t = dd > 0.0 ? clamp01(dot3(ap, d) / dd) : 0.0;
	double r[3] = {ap[0] - t * d[0], ap[1] - t * d[1], ap[2] - t * d[2]};
	*s = t;
	return dot3(r, r);
}

/* ---- closest distances ---------------------------------------------------------------------- */

/* Below this ratio of |n|^2 to |ab|^2 |ac|^2 (the squared sine of the corner angle)
 * the triangle is treated as degenerate: the interior solve would divide by almost
 * zero, and the boundary answer is then within the triangle's width of the truth. */
#define GEOM_DEGENERATE_SIN2 1e-14

double sim_geom_point_triangle(const double p[3], const double a[3], const double b[3],
                               const double c[3], double w[3])
{
	double ab[3], ac[3], ap[3];
	sub3(b, a, ab);
	sub3(c, a, ac);
	sub3(p, a, ap);
	double d00 = dot3(ab, ab), d01 = dot3(ab, ac), d11 = dot3(ac, ac);
	double den = d00 * d11 - d01 * d01;
	if (den > GEOM_DEGENERATE_SIN2 * d00 * d11) {
		double d20 = dot3(ap, ab), d21 = dot3(ap, ac);
		double v = (d11 * d20 - d01 * d21) / den;
		double s = (d00 * d21 - d01 * d20) / den;
		if (v >= 0.0 && s >= 0.0 && v + s <= 1.0) {
			double r[3];
			for (int i = 0; i < 3; i++)
				r[i] = ap[i] - v * ab[i] - s * ac[i];
			w[0] = 1.0 - v - s;
			w[1] = v;
			w[2] = s;
			return dot3(r, r);
		}
	}
	/* The projection is outside (or the triangle is flat): for a convex set the
	 * closest point is then on the boundary, so the three edges decide. */
	double s_ab, s_bc, s_ca;
	double d_ab = point_segment(p, a, b, &s_ab);
	double d_bc = point_segment(p, b, c, &s_bc);
	double d_ca = point_segment(p, c, a, &s_ca);
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

double sim_geom_segment_segment(const double p0[3], const double p1[3], const double q0[3],
                                const double q1[3], double *s_out, double *t_out)
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
	 * and zero-length segments without special cases. */
	double u, d;
	d = point_segment(p0, q0, q1, &u);
	if (d < best) { best = d; bs = 0.0; bt = u; }
	d = point_segment(p1, q0, q1, &u);
	if (d < best) { best = d; bs = 1.0; bt = u; }
	d = point_segment(q0, p0, p1, &u);
	if (d < best) { best = d; bs = u; bt = 0.0; }
	d = point_segment(q1, p0, p1, &u);
	if (d < best) { best = d; bs = u; bt = 1.0; }
	*s_out = bs;
	*t_out = bt;
	return best;
}

/* ---- exact predicates ----------------------------------------------------------------------- */

/* Error-free transformations (Knuth, Dekker; Shewchuk 1997).  They rely on
 * round-to-nearest double arithmetic without contraction, which the build
 * guarantees (-ffp-contract=off, no -ffast-math). */
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
	double top = e[n - 1];
	return (top > 0.0) - (top < 0.0);
}

/* Adds sign * x * y * z exactly to the expansion; x, y, z are plain doubles. */
static int grow_triple(double *e, int n, double sign, double x, double y, double z)
{
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
 * Both queries use one distance function over the box t, u, v in [0, 1]:
 *   vertex-face  F = p0 - (p1 + u (p2 - p1) + v (p3 - p1)),   u + v <= 1
 *   edge-edge    F = (p0 + u (p1 - p0)) - (p2 + v (p3 - p2))
 * with pk(t) = x0k + t (x1k - x0k).  Written as F = (w + u A) - v B with w, A, B
 * linear in t, F is linear in t for fixed (u, v) and linear in (u, v) for fixed t,
 * so over a box (clipped to u + v <= 1 for vertex-face) its range in each axis is
 * spanned by its values at t0, t1 times the corners of the (u, v) region.
 *
 * Rounding error of one such value, per axis i, with M the largest |coordinate|
 * along i over the 8 input points and eps = 2^-53 (first order, t, u, v in [0, 1]):
 *   d = x1 - x0                  |d| <= 2M,   error 2 eps M
 *   p = x0 + t d                 error 2 + 2 + 1 = 5 eps M
 *   w, A, B = p - p'             |.| <= 2M,   error 5 + 5 + 2 = 12 eps M
 *   u A                          error 12 + 2 = 14 eps M
 *   w + u A                      |.| <= 4M,   error 12 + 14 + 4 = 30 eps M
 *   (w + u A) - v B              |.| <= 6M,   error 30 + 14 + 6 = 50 eps M
 * We use 64 eps M; the slack covers the second-order terms many times over.  The
 * corner parameters are dyadic fractions of depth <= 40 (bisection of [0, 1]), so
 * t, u, v and 1 - u are exact.
 */
#define CCD_ERR_FACTOR 0x1p-47 /* 64 * 2^-53 */

/* A box is a leaf, reported as a contact, once F varies by less than this times the
 * coordinate magnitude over it in every axis.  It sets the false-positive gap
 * (near misses closer than about 2e-12 relative are reported as hits) and the
 * accuracy of the time of impact. */
#ifndef CCD_TOL_REL
#define CCD_TOL_REL 1e-12
#endif
#ifndef CCD_TOL_T
#define CCD_TOL_T 1e-6
#endif
/* Never bisect below this width (depth 40 per parameter), so that every corner
 * stays exact and the search depth, hence the stack, is bounded. */
#define CCD_MIN_WIDTH 0x1p-40
#define CCD_STACK 160 /* > 3 * 40 levels + 1 */
/* Budget of boxes per query.  Running out reports a contact at the earliest time
 * still open: conservative, never a false negative. */
#ifndef CCD_MAX_BOXES
#define CCD_MAX_BOXES 20000
#endif

typedef struct ccd_query {
	double x0[4][3], d[4][3];
	double err[3];   /* rounding bound of one corner value, per axis */
	double bound[3]; /* err + thickness, rounded up: per-axis exclusion threshold */
	double delta;    /* thickness */
	double delta2;   /* thickness^2, rounded up */
	double tol;      /* leaf size, absolute */
	bool vf;
} ccd_query;

typedef struct ccd_box {
	double t0, t1, u0, u1, v0, v1;
} ccd_box;

/* w, A, B of F = (w + u A) - v B at time t. */
static void ccd_frame(const ccd_query *q, double t, double w[3], double a[3], double b[3])
{
	double p[4][3];
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 3; i++)
			p[k][i] = q->x0[k][i] + t * q->d[k][i];
	if (q->vf) {
		sub3(p[0], p[1], w);
		sub3(p[1], p[2], a);
		sub3(p[3], p[1], b);
	} else {
		sub3(p[0], p[2], w);
		sub3(p[1], p[0], a);
		sub3(p[3], p[2], b);
	}
}

/* Vertices of the box's (u, v) rectangle clipped to u + v <= 1 for vertex-face
 * (Sutherland-Hodgman against one half-plane; at most 5 vertices).  Returns 0 when
 * the rectangle lies outside the triangle. */
static int ccd_region(const ccd_query *q, const ccd_box *bx, double uv[5][2])
{
	const double c[4][2] = {{bx->u0, bx->v0}, {bx->u1, bx->v0}, {bx->u1, bx->v1}, {bx->u0, bx->v1}};
	if (!q->vf || bx->u1 + bx->v1 <= 1.0) {
		for (int i = 0; i < 4; i++) {
			uv[i][0] = c[i][0];
			uv[i][1] = c[i][1];
		}
		return 4;
	}
	int n = 0;
	for (int i = 0; i < 4; i++) {
		const double *p = c[i], *r = c[(i + 1) % 4];
		bool pin = p[0] + p[1] <= 1.0, rin = r[0] + r[1] <= 1.0;
		if (pin) {
			uv[n][0] = p[0];
			uv[n][1] = p[1];
			n++;
		}
		if (pin != rin) {
			if (p[1] == r[1]) { /* edge along u */
				uv[n][0] = 1.0 - p[1];
				uv[n][1] = p[1];
			} else {            /* edge along v */
				uv[n][0] = p[0];
				uv[n][1] = 1.0 - p[0];
			}
			n++;
		}
	}
	return n;
}

/* Encloses F over the box.  Returns false when the box provably holds no contact;
 * otherwise gives the largest spread of the computed values over the axes and how
 * much each parameter accounts for (to choose the bisection). */
static bool ccd_box_check(const ccd_query *q, const ccd_box *bx, double *spread, double var[3])
{
	double uv[5][2];
	int n = ccd_region(q, bx, uv);
	if (n == 0)
		return false;
	double w0[3], a0[3], b0[3], w1[3], a1[3], b1[3];
	ccd_frame(q, bx->t0, w0, a0, b0);
	ccd_frame(q, bx->t1, w1, a1, b1);
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	double vt = 0.0;
	for (int j = 0; j < n; j++) {
		double u = uv[j][0], v = uv[j][1];
		for (int i = 0; i < 3; i++) {
			double f0 = (w0[i] + u * a0[i]) - v * b0[i];
			double f1 = (w1[i] + u * a1[i]) - v * b1[i];
			double l = f0 < f1 ? f0 : f1, h = f0 < f1 ? f1 : f0;
			if (l < lo[i])
				lo[i] = l;
			if (h > hi[i])
				hi[i] = h;
			if (h - l > vt)
				vt = h - l;
		}
	}
	for (int i = 0; i < 3; i++)
		if (lo[i] > q->bound[i] || hi[i] < -q->bound[i])
			return false;
	if (q->delta > 0.0) {
		/* Each axis alone never exceeds the thickness here, but together they may:
		 * the gap per axis bounds |F|^2 from below. */
		double g2 = 0.0;
		for (int i = 0; i < 3; i++) {
			double g = lo[i] - q->err[i];
			if (-hi[i] - q->err[i] > g)
				g = -hi[i] - q->err[i];
			if (g > 0.0)
				g2 += g * g;
		}
		if (g2 > q->delta2)
			return false;
	}
	double s = 0.0, ma = 0.0, mb = 0.0;
	for (int i = 0; i < 3; i++) {
		if (hi[i] - lo[i] > s)
			s = hi[i] - lo[i];
		ma = fmax(ma, fmax(fabs(a0[i]), fabs(a1[i])));
		mb = fmax(mb, fmax(fabs(b0[i]), fabs(b1[i])));
	}
	*spread = s;
	var[0] = vt;
	var[1] = (bx->u1 - bx->u0) * ma;
	var[2] = (bx->v1 - bx->v0) * mb;
	return true;
}

static bool ccd_run(const ccd_query *q, sim_ccd_hit *hit)
{
	ccd_box stack[CCD_STACK];
	int top = 0;
	stack[top++] = (ccd_box){0.0, 1.0, 0.0, 1.0, 0.0, 1.0};
	double best = INFINITY, bu = 0.0, bv = 0.0;
	int boxes = 0;
	/* Depth first, earlier half in t first, so the first leaf is usually the earliest
	 * contact; after that only boxes that start earlier are worth opening (branch and
	 * bound), which makes the reported time the earliest leaf's. */
	while (top > 0) {
		ccd_box bx = stack[--top];
		if (bx.t0 >= best - CCD_TOL_T)
			continue;
		if (boxes >= CCD_MAX_BOXES || top + 2 > CCD_STACK) {
			double t = bx.t0;
			for (int i = 0; i < top; i++)
				if (stack[i].t0 < t)
					t = stack[i].t0;
			if (t < best) {
				best = t;
				bu = 0.5 * (bx.u0 + bx.u1);
				bv = 0.5 * (bx.v0 + bx.v1);
			}
			break;
		}
		boxes++;
		double spread, var[3];
		if (!ccd_box_check(q, &bx, &spread, var))
			continue;
		double width[3] = {bx.t1 - bx.t0, bx.u1 - bx.u0, bx.v1 - bx.v0};
		int dim = -1;
		if (spread > q->tol) {
			double vmax = -1.0;
			for (int k = 0; k < 3; k++) {
				if (width[k] > CCD_MIN_WIDTH && var[k] > vmax) {
					vmax = var[k];
					dim = k;
				}
			}
		}
		if (dim < 0) {
			best = bx.t0;
			bu = 0.5 * (bx.u0 + bx.u1);
			bv = 0.5 * (bx.v0 + bx.v1);
			continue;
		}
		ccd_box lo = bx, hi = bx;
		if (dim == 0) {
			double m = 0.5 * (bx.t0 + bx.t1);
			lo.t1 = m;
			hi.t0 = m;
		} else if (dim == 1) {
			double m = 0.5 * (bx.u0 + bx.u1);
			lo.u1 = m;
			hi.u0 = m;
		} else {
			double m = 0.5 * (bx.v0 + bx.v1);
			lo.v1 = m;
			hi.v0 = m;
		}
		stack[top++] = hi;
		stack[top++] = lo;
	}
	if (hit)
		hit->boxes = boxes;
	if (best > 1.0)
		return false;
	if (hit) {
		if (q->vf && bu + bv > 1.0) {
			double s = bu + bv;
			bu /= s;
			bv /= s;
		}
		hit->toi = best > CCD_TOL_T ? best - CCD_TOL_T : 0.0;
		hit->u = bu;
		hit->v = bv;
	}
	return true;
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
		q.err[i] = m * CCD_ERR_FACTOR + DBL_MIN; /* DBL_MIN: room for underflow */
		q.bound[i] = (q.err[i] + q.delta) * (1.0 + 0x1p-50);
		scale = fmax(scale, m);
	}
	if (!finite || scale > 1e150) {
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
