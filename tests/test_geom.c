/* Geometry primitives: closest distances, exact predicates, triangle-triangle
 * intersection and continuous collision detection.  Expected values are worked
 * out by hand; the randomised checks use small integer or dyadic coordinates so
 * that the truth is known exactly. */
#include "sim/sim_geom.h"

#include "test.h"

#include <stdint.h>

typedef double pts4[4][3];

/* Deterministic generator for the randomised checks (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* Integer in [lo, hi]. */
static int rng_int(int lo, int hi)
{
	return lo + (int)(rng_next() % (uint64_t)(hi - lo + 1));
}

static double rng_unit(void)
{
	return (double)(rng_next() >> 11) * 0x1p-53;
}

static void set3(double out[3], double x, double y, double z)
{
	out[0] = x;
	out[1] = y;
	out[2] = z;
}

static bool vf(const pts4 x0, const pts4 x1, double thickness, sim_ccd_hit *hit)
{
	return sim_ccd_vertex_face(x0, x1, thickness, hit);
}

static bool ee(const pts4 x0, const pts4 x1, double thickness, sim_ccd_hit *hit)
{
	return sim_ccd_edge_edge(x0, x1, thickness, hit);
}

/* ---- point-triangle -------------------------------------------------------------------------- */

static void check_point_triangle(double px, double py, double pz, double d2, double w0, double w1,
                                 double w2)
{
	const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0};
	double p[3] = {px, py, pz}, w[3];
	double got = sim_geom_point_triangle(p, a, b, c, w);
	CHECK_NEAR(got, d2, 1e-12);
	CHECK_NEAR(w[0], w0, 1e-12);
	CHECK_NEAR(w[1], w1, 1e-12);
	CHECK_NEAR(w[2], w2, 1e-12);
}

static void point_triangle_regions(void)
{
	check_point_triangle(0.25, 0.25, 2, 4, 0.5, 0.25, 0.25); /* face */
	check_point_triangle(-1, -1, 0, 2, 1, 0, 0);             /* vertex a */
	check_point_triangle(2, -1, 0, 2, 0, 1, 0);              /* vertex b */
	check_point_triangle(-1, 2, 1, 3, 0, 0, 1);              /* vertex c */
	check_point_triangle(0.5, -1, 1, 2, 0.5, 0.5, 0);        /* edge ab */
	check_point_triangle(1, 1, 0, 0.5, 0, 0.5, 0.5);         /* edge bc */
	check_point_triangle(-2, 0.5, 0, 4, 0.5, 0, 0.5);        /* edge ca */
	check_point_triangle(0.2, 0.3, 0, 0, 0.5, 0.2, 0.3);     /* on the face */
}

/* The least squared distance over a 2-D parameter domain, by brute force: a grid of
 * (2 half + 1)^2 points around the best so far, in four rounds each 16 times finer than
 * the last.  at() moves (s, t) onto the domain and returns the squared distance there. */
typedef double (*domain_fn)(double *s, double *t, const double *const x[4]);

static double refined_min(domain_fn at, const double *const x[4], double bs, double bt, int half)
{
	double best = INFINITY, step = 1.0 / 64;
	for (int round = 0; round < 4; round++) {
		double lo_s = bs - half * step, lo_t = bt - half * step, cs = bs, ct = bt;
		for (int i = 0; i <= 2 * half; i++)
			for (int j = 0; j <= 2 * half; j++) {
				double s = lo_s + i * step, t = lo_t + j * step, r2 = at(&s, &t, x);
				if (r2 < best)
					best = r2, cs = s, ct = t;
			}
		bs = cs, bt = ct, step /= 16;
	}
	return best;
}

/* x: the point, then the triangle's corners; the domain s, t >= 0, s + t <= 1 */
static double point_triangle_at(double *s, double *t, const double *const x[4])
{
	*s = fmax(0.0, *s), *t = fmax(0.0, *t);
	if (*s + *t > 1.0)
		*s /= *s + *t, *t = 1.0 - *s;
	double r2 = 0.0;
	for (int k = 0; k < 3; k++) {
		double r = x[0][k] - (x[1][k] + *s * (x[2][k] - x[1][k]) + *t * (x[3][k] - x[1][k]));
		r2 += r * r;
	}
	return r2;
}

static double brute_point_triangle(const double p[3], const double a[3], const double b[3], const double c[3])
{
	const double *const x[4] = {p, a, b, c};
	return refined_min(point_triangle_at, x, 1.0 / 3, 1.0 / 3, 64);
}

/* The contact search's variant: the hand-worked regions (each edge alone, each corner's
 * two edges), then random points and triangles against a brute-force minimum over the
 * triangle and against sim_geom_point_triangle (bit for bit, weights too, where the
 * closest point is inside the triangle).  Measuring an edge other than the one that holds
 * the closest point fails both. */
static void point_triangle_bound_cases(void)
{
	const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0};
	/* point, squared distance, weights: the regions of point_triangle_regions */
	const double cases[][7] = {
		{0.25, 0.25, 2, 4, 0.5, 0.25, 0.25}, /* face */
		{-1, -1, 0, 2, 1, 0, 0},             /* beyond ab and ca: vertex a */
		{2, -1, 0, 2, 0, 1, 0},              /* beyond ab and bc: vertex b */
		{-1, 2, 1, 3, 0, 0, 1},              /* beyond bc and ca: vertex c */
		{0.5, -1, 1, 2, 0.5, 0.5, 0},        /* beyond ab alone */
		{1, 1, 0, 0.5, 0, 0.5, 0.5},         /* beyond bc alone */
		{-2, 0.5, 0, 4, 0.5, 0, 0.5},        /* beyond ca alone */
		{3, -0.5, 0, 4.25, 0, 1, 0},         /* beyond ab and bc, nearest b */
		{-0.5, 3, 0, 4.25, 0, 0, 1},         /* beyond bc and ca, nearest c */
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		double w[3];
		CHECK_NEAR(sim_geom_point_triangle_bound(cases[k], a, b, c, w), cases[k][3], 1e-12);
		CHECK_NEAR(w[0], cases[k][4], 1e-12);
		CHECK_NEAR(w[1], cases[k][5], 1e-12);
		CHECK_NEAR(w[2], cases[k][6], 1e-12);
	}
	{ /* an obtuse triangle, the point beyond the long edge's line alone, nearest its middle */
		const double o[3] = {0, 0, 0}, q[3] = {4, 0, 0}, r[3] = {1, 0.5, 0}, p[3] = {2, -1, 1};
		double w[3];
		CHECK_NEAR(sim_geom_point_triangle_bound(p, o, q, r, w), 2, 1e-12);
		CHECK_NEAR(w[1], 0.5, 1e-12);
	}
	int inside = 0, off = 0;
	for (int n = 0; n < 2000; n++) {
		double x[4][3];
		/* quarter-unit coordinates in [-2, 2]: many points on edges' lines, at corners,
		 * and flat or collinear triangles */
		for (int k = 0; k < 4; k++)
			for (int i = 0; i < 3; i++)
				x[k][i] = rng_int(-8, 8) * 0.25;
		double w0[3], w1[3];
		double exact = sim_geom_point_triangle(x[0], x[1], x[2], x[3], w0);
		double d2 = sim_geom_point_triangle_bound(x[0], x[1], x[2], x[3], w1);
		double brute = brute_point_triangle(x[0], x[1], x[2], x[3]);
		CHECK_MSG(d2 <= brute + 1e-9 && d2 >= brute - 1e-6 * (1.0 + brute), "pair %d: %.17g, brute %.17g", n, d2,
		          brute);
		CHECK_MSG(fabs(d2 - exact) <= 1e-12 * (1.0 + exact), "pair %d: %.17g, exact %.17g", n, d2, exact);
		/* the weights give the point measured */
		double r2 = 0.0;
		for (int i = 0; i < 3; i++) {
			double r = x[0][i] - (w1[0] * x[1][i] + w1[1] * x[2][i] + w1[2] * x[3][i]);
			r2 += r * r;
		}
		CHECK_MSG(fabs(r2 - d2) <= 1e-12 * (1.0 + d2), "pair %d: weights give %.17g, not %.17g", n, r2, d2);
		if (w0[0] > 0 && w0[1] > 0 && w0[2] > 0) { /* the contact search uses these as they are */
			CHECK_MSG(d2 == exact && w1[0] == w0[0] && w1[1] == w0[1] && w1[2] == w0[2],
			          "pair %d: %.17g, exact %.17g", n, d2, exact);
			inside++;
		} else {
			off++;
		}
	}
	/* the draw covers both kinds */
	CHECK(inside > 100);
	CHECK(off > 100);
}

static void point_triangle_degenerate(void)
{
	/* Collinear triangle: the distance is to its longest edge. */
	const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {2, 0, 0};
	double p[3] = {1.5, 1, 0}, w[3];
	CHECK_NEAR(sim_geom_point_triangle(p, a, b, c, w), 1, 1e-12);
	CHECK_NEAR(w[0] * a[0] + w[1] * b[0] + w[2] * c[0], 1.5, 1e-12);
	CHECK_NEAR(w[0] + w[1] + w[2], 1, 1e-12);
	/* All three corners at one point. */
	double q[3] = {0, 3, 4};
	CHECK_NEAR(sim_geom_point_triangle(q, a, a, a, w), 25, 1e-12);
}

/* ---- segment-segment ------------------------------------------------------------------------- */

static double seg(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                  double *s, double *t)
{
	double d2 = sim_geom_segment_segment(p0, p1, q0, q1, s, t);
	/* The returned parameters must realise the returned distance. */
	double r2 = 0.0;
	for (int i = 0; i < 3; i++) {
		double r = (p0[i] + *s * (p1[i] - p0[i])) - (q0[i] + *t * (q1[i] - q0[i]));
		r2 += r * r;
	}
	CHECK_NEAR(r2, d2, 1e-12);
	CHECK(*s >= 0 && *s <= 1 && *t >= 0 && *t <= 1);
	return d2;
}

static void segment_segment_cases(void)
{
	double s, t;
	const double p0[3] = {-1, 0, 0}, p1[3] = {1, 0, 0};
	{ /* skew, crossing above */
		const double q0[3] = {0, -1, 1}, q1[3] = {0, 1, 1};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 1, 1e-12);
		CHECK_NEAR(s, 0.5, 1e-12);
		CHECK_NEAR(t, 0.5, 1e-12);
	}
	{ /* endpoint against interior */
		const double q0[3] = {2, -1, 0}, q1[3] = {2, 1, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 1, 1e-12);
		CHECK_NEAR(s, 1, 1e-12);
		CHECK_NEAR(t, 0.5, 1e-12);
	}
	{ /* endpoint against endpoint */
		const double q0[3] = {2, 1, 0}, q1[3] = {3, 5, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 2, 1e-12);
		CHECK_NEAR(s, 1, 1e-12);
		CHECK_NEAR(t, 0, 1e-12);
	}
	{ /* parallel, overlapping in x: any pair over the overlap */
		const double q0[3] = {0.5, 1, 0}, q1[3] = {1.5, 1, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 1, 1e-12);
	}
	{ /* parallel, not overlapping */
		const double q0[3] = {3, 1, 0}, q1[3] = {2, 1, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 2, 1e-12);
		CHECK_NEAR(s, 1, 1e-12);
		CHECK_NEAR(t, 1, 1e-12);
	}
	{ /* collinear, overlapping */
		const double q0[3] = {0, 0, 0}, q1[3] = {3, 0, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 0, 1e-12);
	}
	{ /* collinear, apart */
		const double q0[3] = {2, 0, 0}, q1[3] = {3, 0, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 1, 1e-12);
		CHECK_NEAR(s, 1, 1e-12);
		CHECK_NEAR(t, 0, 1e-12);
	}
	{ /* zero-length second segment */
		const double q0[3] = {0.5, 1, 0};
		CHECK_NEAR(seg(p0, p1, q0, q0, &s, &t), 1, 1e-12);
		CHECK_NEAR(s, 0.75, 1e-12);
	}
	{ /* both zero-length */
		CHECK_NEAR(seg(p0, p0, p1, p1, &s, &t), 4, 1e-12);
	}
	{ /* nearly parallel: still the right distance */
		const double q0[3] = {-1, 1, 0}, q1[3] = {1, 1 + 1e-9, 0};
		CHECK_NEAR(seg(p0, p1, q0, q1, &s, &t), 1, 1e-8);
	}
}

/* ---- exact predicates and triangle-triangle -------------------------------------------------- */

/* The contact search's variant: hand-worked cases, then random segments against a
 * brute-force minimum over a grid of (s, t) refined around its best cell, and against
 * sim_geom_segment_segment (bit for bit where the closest points are inside both). */
static double seg_bound(const double p0[3], const double p1[3], const double q0[3], const double q1[3],
                        double *s, double *t)
{
	double d2 = sim_geom_segment_segment_bound(p0, p1, q0, q1, s, t);
	double r2 = 0.0;
	for (int i = 0; i < 3; i++) {
		double r = (p0[i] + *s * (p1[i] - p0[i])) - (q0[i] + *t * (q1[i] - q0[i]));
		r2 += r * r;
	}
	CHECK_NEAR(r2, d2, 1e-12 * (1.0 + d2));
	CHECK(*s >= 0 && *s <= 1 && *t >= 0 && *t <= 1);
	return d2;
}

/* x: the two segments' ends; the domain the unit square */
static double segment_segment_at(double *s, double *t, const double *const x[4])
{
	*s = fmin(1.0, fmax(0.0, *s)), *t = fmin(1.0, fmax(0.0, *t));
	double r2 = 0.0;
	for (int k = 0; k < 3; k++) {
		double r = (x[0][k] + *s * (x[1][k] - x[0][k])) - (x[2][k] + *t * (x[3][k] - x[2][k]));
		r2 += r * r;
	}
	return r2;
}

static double brute_segment_segment(const double p0[3], const double p1[3], const double q0[3],
                                    const double q1[3])
{
	const double *const x[4] = {p0, p1, q0, q1};
	return refined_min(segment_segment_at, x, 0.5, 0.5, 32);
}

static void segment_segment_bound_cases(void)
{
	double s, t;
	const double p0[3] = {0, 0, 0}, p1[3] = {2, 0, 0};
	{ /* skew, crossing above: the interior answer */
		const double q0[3] = {1, -1, 1}, q1[3] = {1, 1, 1};
		CHECK_NEAR(seg_bound(p0, p1, q0, q1, &s, &t), 1, 1e-12);
		CHECK_NEAR(s, 0.5, 1e-12);
		CHECK_NEAR(t, 0.5, 1e-12);
	}
	{ /* the lines meet beyond p1 (s clamps to 1), at q0's height: (3, 1, 0) to (2, 0, 0) */
		const double q0[3] = {3, 1, 0}, q1[3] = {3, 1, 5};
		CHECK_NEAR(seg_bound(p0, p1, q0, q1, &s, &t), 2, 1e-12);
		CHECK_NEAR(s, 1, 1e-12);
		CHECK_NEAR(t, 0, 1e-12);
	}
	{ /* the stationary point is at t = -1 (t clamps to 0): q0 = (1, 1, 1) over s = 0.5 */
		const double q0[3] = {1, 1, 1}, q1[3] = {1, 1, 3};
		CHECK_NEAR(seg_bound(p0, p1, q0, q1, &s, &t), 2, 1e-12);
		CHECK_NEAR(s, 0.5, 1e-12);
		CHECK_NEAR(t, 0, 1e-12);
	}
	{ /* s clamps to 0, then t to 1: the corner p0 - q1, (0,0,0) to (-1, 0, 2)... */
		const double q0[3] = {-1, -3, 2}, q1[3] = {-1, 0, 2};
		CHECK_NEAR(seg_bound(p0, p1, q0, q1, &s, &t), 5, 1e-12);
		CHECK_NEAR(s, 0, 1e-12);
		CHECK_NEAR(t, 1, 1e-12);
	}
	{ /* parallel, not overlapping: all four ends compete, as in the exact routine */
		const double q0[3] = {4, 1, 0}, q1[3] = {3, 1, 0};
		CHECK_NEAR(seg_bound(p0, p1, q0, q1, &s, &t), 2, 1e-12);
		CHECK_NEAR(s, 1, 1e-12);
		CHECK_NEAR(t, 1, 1e-12);
	}
	{ /* zero-length second segment */
		const double q0[3] = {1, 2, 0};
		CHECK_NEAR(seg_bound(p0, p1, q0, q0, &s, &t), 4, 1e-12);
		CHECK_NEAR(s, 0.5, 1e-12);
	}
	int interior = 0, ends = 0;
	for (int n = 0; n < 2000; n++) {
		double x[4][3];
		/* quarter-unit coordinates in [-2, 2]: many touching, parallel and
		 * end-on-end pairs */
		for (int k = 0; k < 4; k++)
			for (int i = 0; i < 3; i++)
				x[k][i] = rng_int(-8, 8) * 0.25;
		double s0, t0, s1, t1;
		double exact = sim_geom_segment_segment(x[0], x[1], x[2], x[3], &s0, &t0);
		double d2 = seg_bound(x[0], x[1], x[2], x[3], &s1, &t1);
		double brute = brute_segment_segment(x[0], x[1], x[2], x[3]);
		CHECK_MSG(d2 <= brute + 1e-9 && d2 >= brute - 1e-6 * (1.0 + brute), "pair %d: %.17g, brute %.17g", n, d2,
		          brute);
		CHECK_MSG(fabs(d2 - exact) <= 1e-12 * (1.0 + exact), "pair %d: %.17g, exact %.17g", n, d2, exact);
		if (s1 > 0 && s1 < 1 && t1 > 0 && t1 < 1) { /* the contact search uses these */
			CHECK_MSG(d2 == exact && s1 == s0 && t1 == t0, "pair %d: %.17g %.17g %.17g, exact %.17g %.17g %.17g",
			          n, d2, s1, t1, exact, s0, t0);
			interior++;
		} else {
			ends++;
		}
	}
	/* the draw covers both kinds */
	CHECK(interior > 100);
	CHECK(ends > 100);
}

static void orientation_predicates(void)
{
	const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0};
	const double above[3] = {0.3, 0.3, 1}, below[3] = {0.3, 0.3, -1}, on[3] = {5, -7, 0};
	CHECK(sim_geom_orient3d(a, b, c, above) == -1);
	CHECK(sim_geom_orient3d(a, b, c, below) == 1);
	CHECK(sim_geom_orient3d(a, b, c, on) == 0);
	/* Just off the plane, by 2^-60. */
	const double tiny[3] = {0.1, 0.7, 0x1p-60};
	CHECK(sim_geom_orient3d(a, b, c, tiny) == -1);
	/* Collinear and nearly collinear 2-D points: the filter cannot decide these, the
	 * exact stage must. */
	const double p[2] = {0.5, 0.5}, q[2] = {12, 12}, r[2] = {24, 24};
	const double r2[2] = {24, 24 + 0x1p-48};
	CHECK(sim_geom_orient2d(p, q, r) == 0);
	CHECK(sim_geom_orient2d(p, q, r2) == 1);
	CHECK(sim_geom_orient2d(q, p, r2) == -1);
	/* Four coplanar points far from the origin, where the filter cannot decide. */
	const double e[3] = {1e6 + 0.5, 1e6, 3}, f[3] = {1e6, 1e6 + 0.5, 3}, g[3] = {1e6, 1e6, 3};
	const double h[3] = {1e6 + 0.125, 1e6 + 0.125, 3 + 0x1p-40};
	const double onplane[3] = {1e6 + 0.125, 1e6 + 0.375, 3}, far[3] = {-7, 0.1, 3};
	CHECK(sim_geom_orient3d(e, f, g, onplane) == 0);
	CHECK(sim_geom_orient3d(e, f, g, far) == 0);
	CHECK(sim_geom_orient3d(e, f, g, h) == -1);
	CHECK(sim_geom_orient3d(e, g, f, h) == 1);
}

static void tri(double t[3][3], double ax, double ay, double az, double bx, double by, double bz,
                double cx, double cy, double cz)
{
	set3(t[0], ax, ay, az);
	set3(t[1], bx, by, bz);
	set3(t[2], cx, cy, cz);
}

static void triangle_triangle_cases(void)
{
	double a[3][3], b[3][3];
	tri(a, 0, 0, 0, 2, 0, 0, 0, 2, 0);

	tri(b, 0.5, 0.5, -1, 0.5, 0.5, 1, 3, 3, 0); /* an edge pierces a */
	CHECK(sim_geom_triangles_intersect(a, b));
	CHECK(sim_geom_triangles_intersect(b, a));

	tri(b, 0.5, 0.5, 4, 0.5, 0.5, 6, 3, 3, 5); /* well above */
	CHECK(!sim_geom_triangles_intersect(a, b));

	tri(b, 0.5, 0.5, 0, 3, 0.5, 0, 0.5, 3, 0); /* coplanar, overlapping */
	CHECK(sim_geom_triangles_intersect(a, b));

	tri(b, 0.5, 0.5, 0, 0.7, 0.5, 0, 0.5, 0.7, 0); /* coplanar, inside */
	CHECK(sim_geom_triangles_intersect(a, b));
	CHECK(sim_geom_triangles_intersect(b, a));

	tri(b, 1.5, 1.5, 0, 3, 1, 0, 1, 3, 0); /* coplanar, boxes overlap, apart */
	CHECK(!sim_geom_triangles_intersect(a, b));

	tri(b, 1, 1, 0, 3, 1, 0, 1, 3, 0); /* coplanar, touching at one point */
	CHECK(sim_geom_triangles_intersect(a, b));

	tri(b, 2, 0, 0, 3, 0, 1, 3, 1, -1); /* sharing a vertex, otherwise apart */
	CHECK(sim_geom_triangles_intersect(a, b));

	tri(b, 0.5, 0.5, 0, 1, 0.5, 1, 0.5, 1, 1); /* vertex of b on the face of a */
	CHECK(sim_geom_triangles_intersect(a, b));

	tri(b, 0.5, 0.5, 0x1p-60, 1, 0.5, 1, 0.5, 1, 1); /* the same, lifted by 2^-60 */
	CHECK(!sim_geom_triangles_intersect(a, b));

	tri(b, 1, 0, -1, 1, 0, 1, 1, -1, 0); /* an edge of b crosses an edge of a */
	CHECK(sim_geom_triangles_intersect(a, b));

	tri(b, 1, -0x1p-60, -1, 1, -0x1p-60, 1, 1, -1, 0); /* just past that edge */
	CHECK(!sim_geom_triangles_intersect(a, b));

	tri(b, 0, 0, 1, 2, 0, 1, 4, 0, 1); /* b collinear (a segment), above */
	CHECK(!sim_geom_triangles_intersect(a, b));
	tri(b, 1, 0.5, -1, 1, 0.5, 1, 1, 0.5, 3); /* b collinear, piercing */
	CHECK(sim_geom_triangles_intersect(a, b));
	CHECK(sim_geom_triangles_intersect(b, a));
}

/* Exact "do the closed segments / point and triangle touch" via the triangle test
 * with degenerate triangles. */
static bool point_on_triangle(const double p[3], const double a[3], const double b[3],
                              const double c[3])
{
	double t[3][3], s[3][3];
	for (int i = 0; i < 3; i++) {
		t[0][i] = a[i];
		t[1][i] = b[i];
		t[2][i] = c[i];
		s[0][i] = s[1][i] = s[2][i] = p[i];
	}
	return sim_geom_triangles_intersect(s, t);
}

static bool segments_touch(const double p0[3], const double p1[3], const double q0[3],
                           const double q1[3])
{
	double t[3][3], s[3][3];
	for (int i = 0; i < 3; i++) {
		t[0][i] = p0[i];
		t[1][i] = t[2][i] = p1[i];
		s[0][i] = q0[i];
		s[1][i] = s[2][i] = q1[i];
	}
	return sim_geom_triangles_intersect(s, t);
}

typedef long long ivec3[3];

static void icross(const ivec3 a, const ivec3 b, ivec3 out)
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

static long long idot(const ivec3 a, const ivec3 b)
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* Integer-exact: segment pq crosses the plane of triangle t at a single point that
 * lies in the closed triangle.  Independent of the library's predicates. */
static bool pierces(const double pd[3], const double qd[3], const double td[3][3])
{
	ivec3 p, q, t[3], e1, e2, n, pa, qa;
	for (int i = 0; i < 3; i++) {
		p[i] = (long long)pd[i];
		q[i] = (long long)qd[i];
		for (int k = 0; k < 3; k++)
			t[k][i] = (long long)td[k][i];
		e1[i] = t[1][i] - t[0][i];
		e2[i] = t[2][i] - t[0][i];
		pa[i] = p[i] - t[0][i];
		qa[i] = q[i] - t[0][i];
	}
	icross(e1, e2, n);
	long long dp = idot(n, pa), dq = idot(n, qa);
	if ((dp > 0 && dq > 0) || (dp < 0 && dq < 0) || (dp == 0 && dq == 0))
		return false;
	/* D x = D p + dp (q - p), D = dp - dq: the crossing point scaled by D. */
	long long d = dp - dq;
	ivec3 x;
	for (int i = 0; i < 3; i++)
		x[i] = d * p[i] + dp * (q[i] - p[i]);
	int pos = 0, neg = 0;
	for (int k = 0; k < 3; k++) {
		ivec3 e, r, c;
		for (int i = 0; i < 3; i++) {
			e[i] = t[(k + 1) % 3][i] - t[k][i];
			r[i] = x[i] - d * t[k][i];
		}
		icross(e, r, c);
		long long side = idot(n, c) * (d > 0 ? 1 : -1);
		pos += side > 0;
		neg += side < 0;
	}
	return pos == 0 || neg == 0;
}

/* Small integer coordinates make degenerate configurations common and keep every
 * nonzero distance far above rounding.  Two triangles meet when a vertex-face or
 * edge-edge pair touches (float distances) or an edge pierces the other face
 * (integer arithmetic); the exact test must agree. */
static void triangle_triangle_random_vs_distances(void)
{
	int disagreements = 0, hits = 0;
	for (int n = 0; n < 20000; n++) {
		double a[3][3], b[3][3];
		int range = n % 2 ? 1 : 2;
		for (int k = 0; k < 3; k++) {
			for (int i = 0; i < 3; i++) {
				a[k][i] = rng_int(-range, range);
				b[k][i] = rng_int(-range, range);
			}
		}
		if (n % 3 == 0) /* force coplanar pairs */
			for (int k = 0; k < 3; k++)
				a[k][2] = b[k][2] = 0;
		double best = INFINITY, w[3], s, t;
		bool pierce = false;
		for (int k = 0; k < 3; k++) {
			best = fmin(best, sim_geom_point_triangle(a[k], b[0], b[1], b[2], w));
			best = fmin(best, sim_geom_point_triangle(b[k], a[0], a[1], a[2], w));
			for (int j = 0; j < 3; j++)
				best = fmin(best, sim_geom_segment_segment(a[k], a[(k + 1) % 3], b[j],
				                                          b[(j + 1) % 3], &s, &t));
			pierce = pierce || pierces(a[k], a[(k + 1) % 3], b) || pierces(b[k], b[(k + 1) % 3], a);
		}
		CHECK(best < 1e-18 || best > 1e-6);
		bool touch = best < 1e-18 || pierce;
		bool got = sim_geom_triangles_intersect(a, b);
		hits += got;
		if (got != touch || got != sim_geom_triangles_intersect(b, a))
			disagreements++;
	}
	CHECK_MSG(disagreements == 0, "%d of 20000 disagree", disagreements);
	CHECK(hits > 2000 && hits < 18000);
}

/* ---- continuous collision detection ---------------------------------------------------------- */

/* Unit triangle in z = 0, static. */
static void face_static(pts4 x0, pts4 x1)
{
	set3(x0[1], 0, 0, 0);
	set3(x0[2], 1, 0, 0);
	set3(x0[3], 0, 1, 0);
	for (int k = 1; k < 4; k++)
		for (int i = 0; i < 3; i++)
			x1[k][i] = x0[k][i];
}

static void ccd_vertex_through_face(void)
{
	pts4 x0, x1;
	face_static(x0, x1);
	set3(x0[0], 0.2, 0.3, 1);
	set3(x1[0], 0.2, 0.3, -1);
	sim_ccd_hit hit;
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi <= 0.5);
	CHECK_NEAR(hit.toi, 0.5, 1e-6);
	CHECK_NEAR(hit.u, 0.2, 1e-6);
	CHECK_NEAR(hit.v, 0.3, 1e-6);

	/* Non-dyadic time of impact: z = 0.3 - t. */
	set3(x0[0], 0.2, 0.3, 0.3);
	set3(x1[0], 0.2, 0.3, -0.7);
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi <= 0.3);
	CHECK_NEAR(hit.toi, 0.3, 1e-6);

	/* The face moves up into a static vertex: z_face = -1 + 1.6 t meets 0.2 at 0.75. */
	for (int k = 1; k < 4; k++) {
		x0[k][2] = -1;
		x1[k][2] = 0.6;
	}
	set3(x0[0], 0.1, 0.1, 0.2);
	set3(x1[0], 0.1, 0.1, 0.2);
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi <= 0.75);
	CHECK_NEAR(hit.toi, 0.75, 1e-6);
}

static void ccd_vertex_touching_at_ends(void)
{
	pts4 x0, x1;
	face_static(x0, x1);
	sim_ccd_hit hit;
	/* On the face at t = 0, leaving. */
	set3(x0[0], 0.25, 0.25, 0);
	set3(x1[0], 0.25, 0.25, 1);
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi == 0.0);
	/* Arriving exactly at t = 1. */
	set3(x0[0], 0.25, 0.25, 1);
	set3(x1[0], 0.25, 0.25, 0);
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi <= 1.0);
	CHECK_NEAR(hit.toi, 1.0, 1e-6);
	/* Arriving exactly at a corner of the face at t = 1. */
	set3(x0[0], 1, 0, 1);
	set3(x1[0], 1, 0, 0);
	CHECK(vf(x0, x1, 0, NULL));
	/* Resting on an edge for the whole step. */
	set3(x0[0], 0.5, 0.5, 0);
	set3(x1[0], 0.5, 0.5, 0);
	CHECK(vf(x0, x1, 0, NULL));
	/* Stopping just short. */
	set3(x0[0], 0.25, 0.25, 1);
	set3(x1[0], 0.25, 0.25, 1e-7);
	CHECK(!vf(x0, x1, 0, NULL));
}

static void ccd_vertex_coplanar_motion(void)
{
	pts4 x0, x1;
	face_static(x0, x1);
	sim_ccd_hit hit;
	/* In the face's plane throughout, crossing edge ca (x = 0) at t = 0.5. */
	set3(x0[0], -1, 0.25, 0);
	set3(x1[0], 1, 0.25, 0);
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi <= 0.5);
	CHECK_NEAR(hit.toi, 0.5, 1e-6);
	/* In the plane, passing outside the face. */
	set3(x0[0], -1, 2, 0);
	set3(x1[0], 2, 2, 0);
	CHECK(!vf(x0, x1, 0, NULL));
	/* In the plane, grazing past corner c at a distance of 1e-7. */
	set3(x0[0], -1, 1 + 1e-7, 0);
	set3(x1[0], 1, 1 + 1e-7, 0);
	CHECK(!vf(x0, x1, 0, NULL));
	/* In the plane, sliding along edge ab (on it): touching throughout. */
	set3(x0[0], -1, 0, 0);
	set3(x1[0], 2, 0, 0);
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK_NEAR(hit.toi, 1.0 / 3.0, 1e-6);
	/* The whole face slides in its own plane onto the vertex. */
	face_static(x0, x1);
	set3(x0[0], 3, 0.1, 0);
	set3(x1[0], 3, 0.1, 0);
	for (int k = 1; k < 4; k++)
		x1[k][0] += 4;
	/* Edge bc (x - 4t + y = 1) reaches (3, 0.1) when 4t = 2.1. */
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK(hit.toi <= 0.525);
	CHECK_NEAR(hit.toi, 0.525, 1e-6);
}

static void ccd_vertex_degenerate_face(void)
{
	pts4 x0, x1;
	/* A face collapsed to a segment on the x axis; the vertex drops through it. */
	set3(x0[1], 0, 0, 0);
	set3(x0[2], 1, 0, 0);
	set3(x0[3], 2, 0, 0);
	for (int k = 1; k < 4; k++)
		for (int i = 0; i < 3; i++)
			x1[k][i] = x0[k][i];
	set3(x0[0], 1.5, 0, 1);
	set3(x1[0], 1.5, 0, -1);
	sim_ccd_hit hit;
	REQUIRE(vf(x0, x1, 0, &hit));
	CHECK_NEAR(hit.toi, 0.5, 1e-6);
	/* ... and one that drops beside it. */
	set3(x0[0], 1.5, 1e-6, 1);
	set3(x1[0], 1.5, 1e-6, -1);
	CHECK(!vf(x0, x1, 0, NULL));
	/* Everything at one point. */
	for (int k = 0; k < 4; k++) {
		set3(x0[k], 1, 2, 3);
		set3(x1[k], 1, 2, 3);
	}
	CHECK(vf(x0, x1, 0, NULL));
	CHECK(ee(x0, x1, 0, NULL));
}

static void ccd_vertex_near_misses(void)
{
	pts4 x0, x1;
	face_static(x0, x1);
	/* Passing beside the face, 1e-7 outside edge bc (x + y = 1), crossing its plane. */
	double d = 1e-7 * sqrt(0.5);
	set3(x0[0], 0.5 + d, 0.5 + d, 1);
	set3(x1[0], 0.5 + d, 0.5 + d, -1);
	CHECK(!vf(x0, x1, 0, NULL));
	/* Flying over the face at height 1e-7, parallel to it. */
	set3(x0[0], -1, 0.2, 1e-7);
	set3(x1[0], 2, 0.2, 1e-7);
	CHECK(!vf(x0, x1, 0, NULL));
	/* Far away. */
	set3(x0[0], 5, 5, 5);
	set3(x1[0], 6, 5, 5);
	CHECK(!vf(x0, x1, 0, NULL));
}

static void ccd_vertex_thickness(void)
{
	pts4 x0, x1;
	face_static(x0, x1);
	sim_ccd_hit hit;
	/* Flying over at height 0.1. */
	set3(x0[0], -1, 0.2, 0.1);
	set3(x1[0], 2, 0.2, 0.1);
	CHECK(!vf(x0, x1, 0, NULL));
	CHECK(!vf(x0, x1, 0.09, NULL));
	CHECK(vf(x0, x1, 0.1, NULL)); /* within means <= */
	/* Over the face from t = 1/3 on; beside it before: within 0.11 at the edge. */
	REQUIRE(vf(x0, x1, 0.11, &hit));
	double reach = sqrt(0.11 * 0.11 - 0.01); /* horizontal distance at contact */
	CHECK(hit.toi <= (1 - reach) / 3);
	CHECK_NEAR(hit.toi, (1 - reach) / 3, 1e-6);
	/* Falling straight down: distance 1 - 2t reaches 0.2 at t = 0.4. */
	set3(x0[0], 0.25, 0.25, 1);
	set3(x1[0], 0.25, 0.25, -1);
	REQUIRE(vf(x0, x1, 0.2, &hit));
	CHECK(hit.toi <= 0.4);
	CHECK_NEAR(hit.toi, 0.4, 1e-6);
	/* Diagonal beyond corner b: distance to it is the Euclidean one, not per axis. */
	set3(x0[0], 1.3, -0.3, 0.3);
	set3(x1[0], 1.3, -0.3, 0.3);
	double dist = sqrt(0.27);
	CHECK(!vf(x0, x1, dist * 0.999, NULL));
	CHECK(vf(x0, x1, dist * 1.001, NULL));
}

static void ee_edges(pts4 x0, pts4 x1, const double a0[3], const double a1[3], const double b0s[3],
                     const double b1s[3], const double b0e[3], const double b1e[3])
{
	for (int i = 0; i < 3; i++) {
		x0[0][i] = x1[0][i] = a0[i];
		x0[1][i] = x1[1][i] = a1[i];
		x0[2][i] = b0s[i];
		x0[3][i] = b1s[i];
		x1[2][i] = b0e[i];
		x1[3][i] = b1e[i];
	}
}

static void ccd_edge_crossing(void)
{
	pts4 x0, x1;
	sim_ccd_hit hit;
	const double a0[3] = {-1, 0, 0}, a1[3] = {1, 0, 0};
	{ /* z = 0.3 - t */
		const double b0s[3] = {0, -1, 0.3}, b1s[3] = {0, 1, 0.3};
		const double b0e[3] = {0, -1, -0.7}, b1e[3] = {0, 1, -0.7};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK(hit.toi <= 0.3);
		CHECK_NEAR(hit.toi, 0.3, 1e-6);
		CHECK_NEAR(hit.u, 0.5, 1e-6);
		CHECK_NEAR(hit.v, 0.5, 1e-6);
	}
	{ /* the same motion 1e-7 past the end of a: a near miss */
		const double b0s[3] = {1 + 1e-7, -1, 0.3}, b1s[3] = {1 + 1e-7, 1, 0.3};
		const double b0e[3] = {1 + 1e-7, -1, -0.7}, b1e[3] = {1 + 1e-7, 1, -0.7};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		CHECK(!ee(x0, x1, 0, NULL));
		CHECK(ee(x0, x1, 2e-7, NULL)); /* with thickness it is a hit */
	}
	{ /* exactly through the end point of a */
		const double b0s[3] = {1, -1, 0.3}, b1s[3] = {1, 1, 0.3};
		const double b0e[3] = {1, -1, -0.7}, b1e[3] = {1, 1, -0.7};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		CHECK(ee(x0, x1, 0, NULL));
	}
	{ /* touching at t = 0, separating */
		const double b0s[3] = {0, -1, 0}, b1s[3] = {0, 1, 0};
		const double b0e[3] = {0, -1, 1}, b1e[3] = {0, 1, 1};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK(hit.toi == 0.0);
	}
	{ /* arriving at t = 1 */
		const double b0s[3] = {0, -1, 1}, b1s[3] = {0, 1, 1};
		const double b0e[3] = {0, -1, 0}, b1e[3] = {0, 1, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK_NEAR(hit.toi, 1.0, 1e-6);
	}
	{ /* coplanar throughout: b sweeps in the z = 0 plane across a at t = 0.5 */
		const double b0s[3] = {0.5, 1, 0}, b1s[3] = {0.5, 2, 0};
		const double b0e[3] = {0.5, -1, 0}, b1e[3] = {0.5, 0, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK_NEAR(hit.toi, 0.5, 1e-6);
	}
	{ /* coplanar throughout, passing beyond the end of a */
		const double b0s[3] = {1.5, 1, 0}, b1s[3] = {1.5, 2, 0};
		const double b0e[3] = {1.5, -2, 0}, b1e[3] = {1.5, -1, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		CHECK(!ee(x0, x1, 0, NULL));
	}
}

static void ccd_edge_parallel(void)
{
	pts4 x0, x1;
	sim_ccd_hit hit;
	const double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0};
	{ /* collinear, b slides along the line into a: b0 = 2 - 1.5 t reaches 1 at 2/3 */
		const double b0s[3] = {2, 0, 0}, b1s[3] = {3, 0, 0};
		const double b0e[3] = {0.5, 0, 0}, b1e[3] = {1.5, 0, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK(hit.toi <= 2.0 / 3.0);
		CHECK_NEAR(hit.toi, 2.0 / 3.0, 1e-6);
	}
	{ /* parallel, overlapping in x, coming down onto a: contact at t = 0.5 */
		const double b0s[3] = {0.5, 0.5, 0}, b1s[3] = {1.5, 0.5, 0};
		const double b0e[3] = {0.5, -0.5, 0}, b1e[3] = {1.5, -0.5, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK_NEAR(hit.toi, 0.5, 1e-6);
	}
	{ /* parallel, sliding along x at a height of 1e-7: no contact */
		const double b0s[3] = {-3, 1e-7, 0}, b1s[3] = {-2, 1e-7, 0};
		const double b0e[3] = {3, 1e-7, 0}, b1e[3] = {4, 1e-7, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		CHECK(!ee(x0, x1, 0, NULL));
	}
	{ /* collinear, stopping 1e-7 short */
		const double b0s[3] = {2, 0, 0}, b1s[3] = {3, 0, 0};
		const double b0e[3] = {1 + 1e-7, 0, 0}, b1e[3] = {2 + 1e-7, 0, 0};
		ee_edges(x0, x1, a0, a1, b0s, b1s, b0e, b1e);
		CHECK(!ee(x0, x1, 0, NULL));
	}
	{ /* a zero-length edge (a point) crossing the other */
		const double b0s[3] = {0.5, 0, 1}, b0e[3] = {0.5, 0, -1};
		ee_edges(x0, x1, a0, a1, b0s, b0s, b0e, b0e);
		REQUIRE(ee(x0, x1, 0, &hit));
		CHECK_NEAR(hit.toi, 0.5, 1e-6);
	}
}

/* Random exact contacts: positions at a dyadic time t* are built so that the
 * primitives touch exactly, then swept back and forth with integer velocities
 * (all exact in double).  Every one must be a hit no later than t*. */
static void ccd_random_exact_contacts(void)
{
	static const double times[] = {0, 0.25, 0.5, 0.75, 1};
	int misses = 0, late = 0;
	for (int n = 0; n < 20000; n++) {
		bool is_vf = n % 2 == 0;
		bool flat = n % 5 == 0; /* everything in z = 0: coplanar throughout */
		bool shared_v = n % 7 == 0; /* all points move together or in pairs */
		double ts = times[rng_int(0, 4)];
		double at[4][3], vel[4][3];
		for (int k = 0; k < 4; k++) {
			for (int i = 0; i < 3; i++) {
				at[k][i] = rng_int(-3, 3);
				vel[k][i] = rng_int(-2, 2);
				if (flat && i == 2)
					at[k][i] = vel[k][i] = 0;
			}
		}
		if (shared_v)
			for (int k = 1; k < 4; k++)
				for (int i = 0; i < 3; i++)
					vel[k][i] = vel[k % 2][i];
		double u = rng_int(0, 4) * 0.25, v = rng_int(0, 4) * 0.25;
		if (is_vf) {
			if (u + v > 1)
				v = 1 - u;
			for (int i = 0; i < 3; i++)
				at[0][i] = (1 - u - v) * at[1][i] + u * at[2][i] + v * at[3][i];
		} else {
			if (v == 0)
				v = 0.5;
			/* b1 such that b0 + v (b1 - b0) is the point of a at u. */
			for (int i = 0; i < 3; i++) {
				double c = at[0][i] + u * (at[1][i] - at[0][i]);
				at[3][i] = at[2][i] + (c - at[2][i]) / v;
			}
		}
		pts4 x0, x1;
		for (int k = 0; k < 4; k++) {
			for (int i = 0; i < 3; i++) {
				x0[k][i] = at[k][i] - ts * vel[k][i];
				x1[k][i] = at[k][i] + (1 - ts) * vel[k][i];
			}
		}
		sim_ccd_hit hit;
		bool got = is_vf ? vf(x0, x1, 0, &hit) : ee(x0, x1, 0, &hit);
		if (!got)
			misses++;
		else if (hit.toi > ts)
			late++;
	}
	CHECK_MSG(misses == 0, "%d false negatives", misses);
	CHECK_MSG(late == 0, "%d times of impact after the contact", late);
}

/* Without motion the CCD answer must be exactly "do they touch", which the exact
 * triangle test decides; small integers keep every nonzero gap large. */
static void ccd_static_matches_exact(void)
{
	int wrong = 0, hits = 0;
	for (int n = 0; n < 20000; n++) {
		pts4 x;
		int range = n % 3 == 0 ? 1 : 2;
		for (int k = 0; k < 4; k++)
			for (int i = 0; i < 3; i++)
				x[k][i] = rng_int(-range, range);
		if (n % 4 == 0)
			for (int k = 0; k < 4; k++)
				x[k][2] = 0;
		bool is_vf = n % 2 == 0;
		bool truth = is_vf ? point_on_triangle(x[0], x[1], x[2], x[3])
		                   : segments_touch(x[0], x[1], x[2], x[3]);
		bool got = is_vf ? vf(x, x, 0, NULL) : ee(x, x, 0, NULL);
		hits += truth;
		if (got != truth)
			wrong++;
	}
	CHECK_MSG(wrong == 0, "%d of 20000 static queries wrong", wrong);
	CHECK(hits > 500);
}

/* Generic random motion: whenever the CCD says "no contact", sampled distances
 * along the motion must all be clearly positive. */
static void ccd_random_misses_are_misses(void)
{
	int bad = 0, hits = 0;
	for (int n = 0; n < 3000; n++) {
		pts4 x0, x1;
		for (int k = 0; k < 4; k++) {
			for (int i = 0; i < 3; i++) {
				x0[k][i] = 2 * rng_unit() - 1;
				x1[k][i] = 2 * rng_unit() - 1;
			}
		}
		bool is_vf = n % 2 == 0;
		bool got = is_vf ? vf(x0, x1, 0, NULL) : ee(x0, x1, 0, NULL);
		hits += got;
		if (got)
			continue;
		for (int s = 0; s <= 200; s++) {
			double t = s / 200.0, p[4][3], w[3], a, b, d2;
			for (int k = 0; k < 4; k++)
				for (int i = 0; i < 3; i++)
					p[k][i] = x0[k][i] + t * (x1[k][i] - x0[k][i]);
			d2 = is_vf ? sim_geom_point_triangle(p[0], p[1], p[2], p[3], w)
			           : sim_geom_segment_segment(p[0], p[1], p[2], p[3], &a, &b);
			if (d2 < 1e-20)
				bad++;
		}
	}
	CHECK_MSG(bad == 0, "%d samples touch where the CCD saw no contact", bad);
	CHECK(hits > 100);
}

static void ccd_nonfinite_is_conservative(void)
{
	pts4 x0, x1;
	face_static(x0, x1);
	set3(x0[0], NAN, 0, 1);
	set3(x1[0], 0, 0, -1);
	CHECK(vf(x0, x1, 0, NULL));
}

static const test_case tests[] = {
	TEST(point_triangle_regions),
	TEST(point_triangle_degenerate),
	TEST(point_triangle_bound_cases),
	TEST(segment_segment_cases),
	TEST(segment_segment_bound_cases),
	TEST(orientation_predicates),
	TEST(triangle_triangle_cases),
	TEST(triangle_triangle_random_vs_distances),
	TEST(ccd_vertex_through_face),
	TEST(ccd_vertex_touching_at_ends),
	TEST(ccd_vertex_coplanar_motion),
	TEST(ccd_vertex_degenerate_face),
	TEST(ccd_vertex_near_misses),
	TEST(ccd_vertex_thickness),
	TEST(ccd_edge_crossing),
	TEST(ccd_edge_parallel),
	TEST(ccd_random_exact_contacts),
	TEST(ccd_static_matches_exact),
	TEST(ccd_random_misses_are_misses),
	TEST(ccd_nonfinite_is_conservative),
};

TEST_MAIN(tests)
