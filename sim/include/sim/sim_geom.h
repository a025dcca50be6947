/*
 * Double-precision geometry for the collision solver: closest distances,
 * continuous collision detection (CCD) and a static triangle-triangle test.
 *
 * Points are plain double[3].  Everything here is pure (no allocation, no
 * global state), so it can be called from several threads at once.
 *
 * CCD contract: no false negatives.  A query reports a hit whenever the
 * linearly moving primitives come within `thickness` of each other at some
 * time in the closed interval [0, 1], touching included, also for degenerate,
 * coplanar and parallel motion.  It may also report a hit for pairs that only come
 * very close (gaps of about 1e-9 of the coordinate magnitude or less; see geom.c),
 * never the other way round.
 */
#ifndef TELA_SIM_GEOM_H
#define TELA_SIM_GEOM_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- closest distances ---------------------------------------------------------------------- */

/* Squared distance from p to the closed triangle (a, b, c).  w receives the
 * barycentric weights of the closest point, w[0] a + w[1] b + w[2] c, with every
 * weight in [0, 1] and summing to 1.  Degenerate (collinear or point)
 * triangles are handled as the union of their edges. */
double sim_geom_point_triangle(const double p[3], const double a[3], const double b[3],
                               const double c[3], double w[3]);

/* sim_geom_point_triangle for a contact search that needs the exact answer only for
 * pairs within their separation: the same results, bit for bit, where the point's
 * projection onto the plane is inside the triangle (and for degenerate triangles);
 * otherwise only the one or two edges whose lines the projection lies beyond are
 * measured (as sim_geom_point_triangle measures them), which hold the closest point in
 * exact arithmetic.  Where the projection is within rounding of an edge's line this may
 * leave out the edge sim_geom_point_triangle would choose, so the distance may exceed
 * its answer by the rounding of a distance (a relative 1e-15 or so); w is then the
 * weights of the point measured, with a 0 among them.  One or two edges are measured
 * instead of three. */
double sim_geom_point_triangle_bound(const double p[3], const double a[3], const double b[3],
                                     const double c[3], double w[3]);

/* Squared distance between the closed segments p0p1 and q0q1.  *s and *t receive
 * the parameters of the closest points p0 + s (p1 - p0) and q0 + t (q1 - q0), both in
 * [0, 1].  Parallel, collinear and zero-length segments are fine; when the closest
 * points are not unique one of them is returned. */
double sim_geom_segment_segment(const double p0[3], const double p1[3], const double q0[3],
                                const double q1[3], double *s, double *t);

/* sim_geom_segment_segment for a contact search that needs the closest points only
 * where they are inside both segments: the same results, bit for bit, where the
 * segments' lines have their closest points inside both (and wherever a segment has
 * zero length); otherwise one end of a segment against the other segment, the end
 * that is closest in exact arithmetic, measured as sim_geom_segment_segment measures
 * it.  Where two ends are equally close (within rounding) it may report the other
 * one, so the distance may differ from sim_geom_segment_segment's by the rounding of
 * a distance (a relative 1e-15 or so), and *s or *t is still 0 or 1.  One end is
 * measured instead of four. */
double sim_geom_segment_segment_bound(const double p0[3], const double p1[3], const double q0[3],
                                      const double q1[3], double *s, double *t);

/* ---- exact predicates ----------------------------------------------------------------------- */

/* Exact sign of (a - d) . ((b - d) x (c - d)): +1, 0 or -1.  Positive when d lies below
 * the plane through a, b, c seen with a, b, c counter-clockwise from above.  Exact for
 * finite coordinates with |x| <= 1e80 and no nonzero |x| below 1e-80 (beyond that,
 * overflow or underflow in the intermediate products may spoil it). */
int sim_geom_orient3d(const double a[3], const double b[3], const double c[3], const double d[3]);

/* Exact sign of (a - c) x (b - c) in 2-D: +1 when a, b, c turn counter-clockwise. */
int sim_geom_orient2d(const double a[2], const double b[2], const double c[2]);

/* True when the closed triangles a and b share at least one point, touching
 * included.  Exact for the given doubles (exact predicates, no tolerance).
 * Degenerate triangles are allowed.  Skipping pairs that share a vertex or an
 * edge is the caller's job. */
bool sim_geom_triangles_intersect(const double a[3][3], const double b[3][3]);

/* ---- continuous collision detection --------------------------------------------------------- */

typedef struct sim_ccd_hit {
	/* Earliest time of impact in [0, 1].  Conservative: never later than the exact
	 * earliest time; the points move less than about 1e-9 of the coordinate
	 * magnitude between it and the exact time. */
	double toi;
	/* Closest points at toi.  Vertex-face: the face point is
	 * (1 - u - v) f0 + u f1 + v f2.  Edge-edge: a0 + u (a1 - a0) and b0 + v (b1 - b0). */
	double u, v;
	/* Boxes examined by the root finder, for profiling. */
	int boxes;
} sim_ccd_hit;

/* Vertex-face CCD.  x0 holds the positions at t = 0 and x1 those at t = 1 of
 * {vertex, f0, f1, f2}; every point moves linearly in between.  Returns true when
 * the vertex comes within `thickness` (>= 0) of the closed triangle at some time in
 * [0, 1].  hit may be NULL; otherwise it is filled on a hit (boxes always). */
bool sim_ccd_vertex_face(const double x0[4][3], const double x1[4][3], double thickness,
                         sim_ccd_hit *hit);

/* Edge-edge CCD for the closed segments a0a1 and b0b1; x0 and x1 hold
 * {a0, a1, b0, b1} at t = 0 and t = 1.  Same contract as sim_ccd_vertex_face. */
bool sim_ccd_edge_edge(const double x0[4][3], const double x1[4][3], double thickness,
                       sim_ccd_hit *hit);

#ifdef __cplusplus
}
#endif

#endif
