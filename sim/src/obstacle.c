/*
 * Rigid obstacles: validation and ownership of their definitions, kinematic poses,
 * signed distances and surface velocities.
 *
 * Everything geometric is computed in double and rounded to float once at the end:
 * the collision pipeline compares these distances against cloth thicknesses of a few
 * millimetres, and a point far from the origin must not lose them to rounding in the
 * rotation.  The pose functions and the distance use the same rotation matrix (built in
 * double from the normalised quaternion), so a box's triangles and its analytic distance
 * describe the same solid.
 */
#include "sim_internal.h"
#include "sim/sim_geom.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Half the side of the square that stands for a plane in the collision pipeline (m). */
#define PLANE_HALF 100.0f

static const char *const shape_names[SIM_SHAPE_COUNT] = {"plane", "sphere", "box", "capsule", "mesh"};

static bool mesh_is_closed(const sim_obstacle *o) { return o->closed; }

/* ---- double helpers ------------------------------------------------------------------------- */

static inline double dot3d(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static inline void cross3d(const double a[3], const double b[3], double out[3])
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double len3d(const double a[3]) { return sqrt(dot3d(a, a)); }

static inline void to_double3(const float *f, double out[3])
{
	out[0] = f[0];
	out[1] = f[1];
	out[2] = f[2];
}

static bool finite3f(const float *p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

/* The rotation of q (normalised here, so a float quaternion a few ulps off unit length
 * still gives an orthonormal matrix).  A zero quaternion never reaches this point
 * (sim_obstacle_init rejects it); the identity keeps a caller's mistake harmless. */
static void rotation_matrix(const float q[4], double m[3][3])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];
	double n = sqrt(x * x + y * y + z * z + w * w);
	if (!(n > 0.0) || !isfinite(n)) {
		x = y = z = 0.0;
		w = 1.0;
	} else {
		x /= n;
		y /= n;
		z /= n;
		w /= n;
	}
	m[0][0] = 1.0 - 2.0 * (y * y + z * z);
	m[0][1] = 2.0 * (x * y - z * w);
	m[0][2] = 2.0 * (x * z + y * w);
	m[1][0] = 2.0 * (x * y + z * w);
	m[1][1] = 1.0 - 2.0 * (x * x + z * z);
	m[1][2] = 2.0 * (y * z - x * w);
	m[2][0] = 2.0 * (x * z - y * w);
	m[2][1] = 2.0 * (y * z + x * w);
	m[2][2] = 1.0 - 2.0 * (x * x + y * y);
}

static void rotate(const double m[3][3], const double v[3], double out[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2];
}

static void rotate_transposed(const double m[3][3], const double v[3], double out[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = m[0][i] * v[0] + m[1][i] * v[1] + m[2][i] * v[2];
}

/* ---- definitions ---------------------------------------------------------------------------- */

sim_obstacle_def sim_obstacle_def_default(sim_shape shape)
{
	sim_obstacle_def d;
	memset(&d, 0, sizeof d);
	d.name = (unsigned)shape < SIM_SHAPE_COUNT ? shape_names[shape] : "obstacle";
	d.shape = shape;
	glm_quat_identity(d.orientation);
	d.friction = 0.3f;
	switch (shape) {
	case SIM_SHAPE_SPHERE: d.radius = 0.5f; break;
	case SIM_SHAPE_BOX: glm_vec3_fill(d.half_extents, 0.5f); break;
	case SIM_SHAPE_CAPSULE:
		d.radius = 0.1f;
		d.half_height = 0.5f;
		break;
	default: break;
	}
	return d;
}

/* Eight corners, corner i at (+-hx, +-hy, +-hz) with bit 0, 1, 2 of i choosing +, and two
 * triangles per face, counter-clockwise seen from outside so that the box and a closed
 * mesh agree on which side is out. */
static const int box_triangles[36] = {
	0, 4, 6, 0, 6, 2, /* -x */
	1, 3, 7, 1, 7, 5, /* +x */
	0, 1, 5, 0, 5, 4, /* -y */
	2, 6, 7, 2, 7, 3, /* +y */
	0, 2, 3, 0, 3, 1, /* -z */
	4, 5, 7, 4, 7, 6, /* +z */
};

typedef struct directed_edge {
	int lo, hi;
	int reversed; /* 0: the triangle runs lo -> hi, 1: hi -> lo */
} directed_edge;

static int edge_cmp(const void *pa, const void *pb)
{
	const directed_edge *a = pa, *b = pb;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return (a->reversed > b->reversed) - (a->reversed < b->reversed);
}

/* Closed and consistently oriented: every undirected edge is used by exactly two
 * triangles, once in each direction.  Only then does the winding number take the
 * values 0 and 1 off the surface; an open mesh encloses nothing.  -1: out of memory. */
static int triangles_closed(const int *tris, int count)
{
	directed_edge *e = malloc(sizeof(directed_edge) * 3 * (size_t)count);
	if (!e)
		return -1;
	for (int t = 0; t < count; t++)
		for (int k = 0; k < 3; k++) {
			int a = tris[3 * t + k], b = tris[3 * t + (k + 1) % 3];
			directed_edge *d = &e[3 * t + k];
			d->lo = a < b ? a : b;
			d->hi = a < b ? b : a;
			d->reversed = a > b;
		}
	/* The comparison is a total order on the whole key, so the sorted array does not
	 * depend on qsort's (unstable) algorithm. */
	qsort(e, 3 * (size_t)count, sizeof(directed_edge), edge_cmp);
	int closed = 1;
	int n = 3 * count;
	if (n % 2)
		closed = 0;
	for (int i = 0; closed && i < n; i += 2)
		if (i + 1 >= n || e[i].lo != e[i + 1].lo || e[i].hi != e[i + 1].hi || e[i].reversed != 0 ||
		    e[i + 1].reversed != 1)
			closed = 0;
	free(e);
	return closed;
}

/* sim_obstacle_init with the reason for a failure, for sim_world_add_obstacle. */
static sim_result obstacle_init(sim_obstacle *o, const sim_obstacle_def *def)
{
	memset(o, 0, sizeof *o);
	if (!def || (unsigned)def->shape >= SIM_SHAPE_COUNT)
		return SIM_ERROR_INVALID;
	bool ok = finite3f(def->position) && finite3f(def->velocity) && finite3f(def->angular_velocity) &&
	          isfinite(def->friction) && def->friction >= 0.0f && isfinite(def->thickness) &&
	          def->thickness >= 0.0f;
	switch (def->shape) {
	case SIM_SHAPE_SPHERE: ok = ok && isfinite(def->radius) && def->radius > 0.0f; break;
	case SIM_SHAPE_BOX:
		ok = ok && finite3f(def->half_extents) && def->half_extents[0] > 0.0f && def->half_extents[1] > 0.0f &&
		     def->half_extents[2] > 0.0f;
		break;
	case SIM_SHAPE_CAPSULE:
		ok = ok && isfinite(def->radius) && def->radius > 0.0f && isfinite(def->half_height) &&
		     def->half_height > 0.0f;
		break;
	case SIM_SHAPE_MESH:
		/* 3 * count indices must fit an int. */
		ok = ok && def->vertex_count > 0 && def->triangle_count > 0 && def->positions && def->triangles &&
		     def->vertex_count <= (INT_MAX - 1) / 3 && def->triangle_count <= (INT_MAX - 1) / 3;
		for (int i = 0; ok && i < 3 * def->vertex_count; i++)
			ok = isfinite(def->positions[i]);
		for (int t = 0; ok && t < def->triangle_count; t++) {
			const int *tri = &def->triangles[3 * t];
			for (int k = 0; k < 3; k++)
				ok = ok && tri[k] >= 0 && tri[k] < def->vertex_count;
			ok = ok && tri[0] != tri[1] && tri[1] != tri[2] && tri[0] != tri[2];
		}
		break;
	default: break;
	}
	/* Normalised in double: the pose keeps the quaternion at unit length, and a zero or
	 * non-finite one has no rotation to normalise to. */
	double q[4], qn = 0.0;
	for (int k = 0; k < 4; k++) {
		q[k] = def->orientation[k];
		qn += q[k] * q[k];
	}
	qn = sqrt(qn);
	ok = ok && isfinite(qn) && qn > 0.0;
	if (!ok)
		return SIM_ERROR_INVALID;

	sim_obstacle tmp;
	memset(&tmp, 0, sizeof tmp);
	tmp.def = *def;
	for (int k = 0; k < 4; k++)
		tmp.def.orientation[k] = (float)(q[k] / qn);
	const char *name = def->name && def->name[0] ? def->name : shape_names[def->shape];
	snprintf(tmp.name, sizeof tmp.name, "%s", name);

	if (def->shape == SIM_SHAPE_BOX) {
		tmp.vertex_count = 8;
		tmp.triangle_count = 12;
	} else if (def->shape == SIM_SHAPE_PLANE) {
		tmp.vertex_count = 4;
		tmp.triangle_count = 2;
	} else if (def->shape == SIM_SHAPE_MESH) {
		tmp.vertex_count = def->vertex_count;
		tmp.triangle_count = def->triangle_count;
	}
	if (tmp.vertex_count > 0) {
		tmp.local_positions = malloc(sizeof(float) * 3 * (size_t)tmp.vertex_count);
		tmp.local_triangles = malloc(sizeof(int) * 3 * (size_t)tmp.triangle_count);
		if (!tmp.local_positions || !tmp.local_triangles) {
			sim_obstacle_fini(&tmp);
			return SIM_ERROR_OUT_OF_MEMORY;
		}
		if (def->shape == SIM_SHAPE_BOX) {
			for (int i = 0; i < 8; i++)
				for (int k = 0; k < 3; k++)
					tmp.local_positions[3 * i + k] =
						(i >> k) & 1 ? def->half_extents[k] : -def->half_extents[k];
			memcpy(tmp.local_triangles, box_triangles, sizeof box_triangles);
			tmp.closed = true;
		} else if (def->shape == SIM_SHAPE_PLANE) {
			/* The collision pipeline meets a plane as a square of two triangles, PLANE_HALF
			 * from the origin each way, facing +y; its distance stays exact. */
			static const int plane_triangles[6] = {0, 3, 2, 0, 2, 1};
			for (int i = 0; i < 4; i++) {
				tmp.local_positions[3 * i + 0] = (i == 1 || i == 2) ? PLANE_HALF : -PLANE_HALF;
				tmp.local_positions[3 * i + 1] = 0.0f;
				tmp.local_positions[3 * i + 2] = (i >= 2) ? PLANE_HALF : -PLANE_HALF;
			}
			memcpy(tmp.local_triangles, plane_triangles, sizeof plane_triangles);
		} else {
			memcpy(tmp.local_positions, def->positions, sizeof(float) * 3 * (size_t)tmp.vertex_count);
			memcpy(tmp.local_triangles, def->triangles, sizeof(int) * 3 * (size_t)tmp.triangle_count);
			int closed = triangles_closed(tmp.local_triangles, tmp.triangle_count);
			if (closed < 0) {
				sim_obstacle_fini(&tmp);
				return SIM_ERROR_OUT_OF_MEMORY;
			}
			tmp.closed = closed != 0;
		}
	}
	/* The caller's arrays may not outlive the call, so the stored definition points at
	 * the owned copies (a box shows its tessellation there) and never at the caller's
	 * memory; shapes without triangles carry no arrays at all. */
	tmp.def.name = tmp.name;
	tmp.def.vertex_count = tmp.vertex_count;
	tmp.def.triangle_count = tmp.triangle_count;
	tmp.def.positions = tmp.local_positions;
	tmp.def.triangles = tmp.local_triangles;
	memcpy(tmp.position, tmp.def.position, sizeof tmp.position);
	memcpy(tmp.orientation, tmp.def.orientation, sizeof tmp.orientation);
	*o = tmp;
	/* The copy of the struct moved the name buffer; point at the one that stays. */
	o->def.name = o->name;
	return SIM_OK;
}

bool sim_obstacle_init(sim_obstacle *o, const sim_obstacle_def *def) { return obstacle_init(o, def) == SIM_OK; }

void sim_obstacle_fini(sim_obstacle *o)
{
	free(o->local_positions);
	free(o->local_triangles);
	memset(o, 0, sizeof *o);
}

bool sim_obstacle_has_triangles(const sim_obstacle *o)
{
	return o->def.shape == SIM_SHAPE_BOX || o->def.shape == SIM_SHAPE_MESH || o->def.shape == SIM_SHAPE_PLANE;
}

/* ---- poses ---------------------------------------------------------------------------------- */

void sim_obstacle_pose_at(const sim_obstacle *o, float t, vec3 out_position, versor out_orientation)
{
	const float *v = o->def.velocity, *wf = o->def.angular_velocity;
	double pos[3];
	for (int k = 0; k < 3; k++)
		pos[k] = (double)o->position[k] + (double)t * (double)v[k];

	/* dq = exp(t w / 2) = (sin(|w| t / 2) w / |w|, cos(|w| t / 2)).  sin(a |w|) / |w| stays
	 * accurate for tiny |w| (sin x ~ x), so only |w| = 0 needs its own case. */
	double w[3] = {wf[0], wf[1], wf[2]};
	double wl = len3d(w);
	double dq[4] = {0.0, 0.0, 0.0, 1.0};
	if (wl > 0.0) {
		double half = 0.5 * wl * (double)t;
		double s = sin(half) / wl;
		dq[0] = s * w[0];
		dq[1] = s * w[1];
		dq[2] = s * w[2];
		dq[3] = cos(half);
	}
	/* The angular velocity is in the world frame, so the increment multiplies from the
	 * left: q' = dq q (Hamilton product, the order glm_quat_mul(dq, q) uses).  Done in
	 * double so that the rounding of a long run of advances stays at float level. */
	double q[4] = {o->orientation[0], o->orientation[1], o->orientation[2], o->orientation[3]};
	double r[4];
	r[0] = dq[3] * q[0] + dq[0] * q[3] + dq[1] * q[2] - dq[2] * q[1];
	r[1] = dq[3] * q[1] - dq[0] * q[2] + dq[1] * q[3] + dq[2] * q[0];
	r[2] = dq[3] * q[2] + dq[0] * q[1] - dq[1] * q[0] + dq[2] * q[3];
	r[3] = dq[3] * q[3] - dq[0] * q[0] - dq[1] * q[1] - dq[2] * q[2];
	double n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3]);
	for (int k = 0; k < 3; k++)
		out_position[k] = (float)pos[k];
	for (int k = 0; k < 4; k++)
		out_orientation[k] = (float)(r[k] / n);
}

void sim_obstacle_advance(sim_obstacle *o, float t)
{
	vec3 p;
	versor q;
	sim_obstacle_pose_at(o, t, p, q);
	memcpy(o->position, p, sizeof o->position);
	memcpy(o->orientation, q, sizeof o->orientation);
}

void sim_obstacle_world_vertices(const sim_obstacle *o, const vec3 position, const versor orientation, vec4 *out)
{
	double m[3][3];
	rotation_matrix(orientation, m);
	for (int i = 0; i < o->vertex_count; i++) {
		double l[3], r[3];
		to_double3(&o->local_positions[3 * i], l);
		rotate(m, l, r);
		for (int k = 0; k < 3; k++)
			out[i][k] = (float)(r[k] + (double)position[k]);
		out[i][3] = 0.0f;
	}
}

void sim_obstacle_point_velocity(const sim_obstacle *o, const vec3 position, const vec3 p, vec3 out)
{
	double r[3], w[3], c[3];
	for (int k = 0; k < 3; k++)
		r[k] = (double)p[k] - (double)position[k];
	to_double3(o->def.angular_velocity, w);
	cross3d(w, r, c);
	for (int k = 0; k < 3; k++)
		out[k] = (float)((double)o->def.velocity[k] + c[k]);
}

/* ---- signed distances, in the local frame --------------------------------------------------- */

static double sphere_distance(double radius, const double p[3], double n[3])
{
	double l = len3d(p);
	if (l > 0.0) {
		for (int k = 0; k < 3; k++)
			n[k] = p[k] / l;
	} else {
		/* The centre is equally far from every surface point; any direction is right. */
		n[0] = 0.0;
		n[1] = 1.0;
		n[2] = 0.0;
	}
	return l - radius;
}

static double box_distance(const float h[3], const double p[3], double n[3])
{
	double q[3], c[3];
	bool outside = false;
	for (int k = 0; k < 3; k++) {
		double hk = h[k];
		q[k] = fabs(p[k]) - hk;
		c[k] = p[k] < -hk ? -hk : (p[k] > hk ? hk : p[k]);
		outside = outside || q[k] > 0.0;
	}
	if (outside) {
		double d[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
		double l = len3d(d);
		for (int k = 0; k < 3; k++)
			n[k] = d[k] / l;
		return l;
	}
	/* Inside or on the surface: the nearest face is the one with the largest (least
	 * negative) q; ties go to the lowest axis so the choice is deterministic. */
	int axis = 0;
	for (int k = 1; k < 3; k++)
		if (q[k] > q[axis])
			axis = k;
	n[0] = n[1] = n[2] = 0.0;
	n[axis] = p[axis] < 0.0 ? -1.0 : 1.0;
	return q[axis];
}

static double capsule_distance(double radius, double half_height, const double p[3], double n[3])
{
	double y = p[1] < -half_height ? -half_height : (p[1] > half_height ? half_height : p[1]);
	double d[3] = {p[0], p[1] - y, p[2]};
	double l = len3d(d);
	if (l > 0.0) {
		for (int k = 0; k < 3; k++)
			n[k] = d[k] / l;
	} else {
		/* On the axis segment: every radial direction is nearest; pick local +x. */
		n[0] = 1.0;
		n[1] = 0.0;
		n[2] = 0.0;
	}
	return l - radius;
}

/* Solid angle of triangle (a, b, c) seen from p, after Van Oosterom and Strackee 1983:
 * tan(omega / 2) = a.(b x c) / (|a||b||c| + (a.b)|c| + (b.c)|a| + (c.a)|b|) with a, b, c
 * relative to p.  The sign of the numerator decides which side p is on; near the plane
 * its rounding could flip it and move omega by 4 pi (p over the triangle, denominator
 * negative), so there the exact orientation predicate supplies the sign. */
static double solid_angle(const double pa[3], const double pb[3], const double pc[3], const double p[3])
{
	double a[3], b[3], c[3], bc[3];
	for (int k = 0; k < 3; k++) {
		a[k] = pa[k] - p[k];
		b[k] = pb[k] - p[k];
		c[k] = pc[k] - p[k];
	}
	double la = len3d(a), lb = len3d(b), lc = len3d(c);
	cross3d(b, c, bc);
	double num = dot3d(a, bc);
	double den = la * lb * lc + dot3d(a, b) * lc + dot3d(b, c) * la + dot3d(c, a) * lb;
	/* The triple product's rounding error is below about 1e-15 |a||b||c|; a margin of
	 * a thousand keeps the exact predicate for the cases that need it. */
	if (fabs(num) <= 1e-12 * la * lb * lc) {
		int s = sim_geom_orient3d(pa, pb, pc, p);
		/* Exactly coplanar: outside the triangle the angle is 0, and on it the point is
		 * on the surface, where the caller has already answered without the sign. */
		if (s == 0)
			return 0.0;
		double mag = fabs(num) > 0.0 ? fabs(num) : 1e-300;
		num = s > 0 ? mag : -mag;
	}
	return 2.0 * atan2(num, den);
}

static double mesh_distance(const sim_obstacle *o, const double p[3], double n[3])
{
	const float *xs = o->local_positions;
	const int *tris = o->local_triangles;
	double best = INFINITY, best_w[3] = {0.0, 0.0, 0.0};
	double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
	int best_t = 0;
	for (int t = 0; t < o->triangle_count; t++) {
		double a[3], b[3], c[3], w[3];
		to_double3(&xs[3 * tris[3 * t]], a);
		to_double3(&xs[3 * tris[3 * t + 1]], b);
		to_double3(&xs[3 * tris[3 * t + 2]], c);
		for (int k = 0; k < 3; k++) {
			lo[k] = fmin(lo[k], fmin(a[k], fmin(b[k], c[k])));
			hi[k] = fmax(hi[k], fmax(a[k], fmax(b[k], c[k])));
		}
		double d2 = sim_geom_point_triangle(p, a, b, c, w);
		/* Strictly smaller: the first of equally near triangles wins, whatever the data. */
		if (d2 < best) {
			best = d2;
			best_t = t;
			memcpy(best_w, w, sizeof best_w);
		}
	}
	double a[3], b[3], c[3], e1[3], e2[3], fn[3], cp[3], diff[3];
	to_double3(&xs[3 * tris[3 * best_t]], a);
	to_double3(&xs[3 * tris[3 * best_t + 1]], b);
	to_double3(&xs[3 * tris[3 * best_t + 2]], c);
	for (int k = 0; k < 3; k++) {
		e1[k] = b[k] - a[k];
		e2[k] = c[k] - a[k];
		cp[k] = best_w[0] * a[k] + best_w[1] * b[k] + best_w[2] * c[k];
		diff[k] = p[k] - cp[k];
	}
	cross3d(e1, e2, fn);
	double fl = len3d(fn);
	double dist = sqrt(best);

	/* dir: unit direction from the surface towards p.  Over a face's interior that is
	 * the face normal up to sign, which is more accurate than the difference of two
	 * nearly equal points; at an edge or a vertex it is the difference itself. */
	double dir[3];
	bool interior = best_w[0] > 0.0 && best_w[1] > 0.0 && best_w[2] > 0.0;
	if (fl > 0.0 && (interior || !(dist > 0.0))) {
		double s = dot3d(diff, fn) < 0.0 ? -1.0 : 1.0;
		for (int k = 0; k < 3; k++)
			dir[k] = s * fn[k] / fl;
	} else if (dist > 0.0) {
		for (int k = 0; k < 3; k++)
			dir[k] = diff[k] / dist;
	} else {
		/* On a zero-area triangle: no direction is preferred. */
		dir[0] = 0.0;
		dir[1] = 1.0;
		dir[2] = 0.0;
	}

	if (!(dist > 0.0)) {
		/* On the surface: the face's own outward normal, and no inside test, which is
		 * undefined exactly on the surface. */
		if (fl > 0.0)
			for (int k = 0; k < 3; k++)
				n[k] = fn[k] / fl;
		else
			memcpy(n, dir, sizeof dir);
		return 0.0;
	}
	memcpy(n, dir, sizeof dir);
	if (!mesh_is_closed(o))
		return dist;
	/* Outside the bounding box nothing is enclosed: most queries (cloth far from the
	 * mesh) skip the per-triangle arc tangents below. */
	for (int k = 0; k < 3; k++)
		if (p[k] < lo[k] || p[k] > hi[k])
			return dist;

	/* Generalised winding number (Jacobson et al. 2013): the solid angles of a closed,
	 * consistently oriented mesh sum to 4 pi times an integer off the surface, 1 inside
	 * for counter-clockwise-from-outside winding.  Unlike ray parity it needs no care
	 * for rays through edges or vertices.  The magnitude test accepts a mesh wound the
	 * other way round too. */
	double omega = 0.0;
	for (int t = 0; t < o->triangle_count; t++) {
		double ta[3], tb[3], tc[3];
		to_double3(&xs[3 * tris[3 * t]], ta);
		to_double3(&xs[3 * tris[3 * t + 1]], tb);
		to_double3(&xs[3 * tris[3 * t + 2]], tc);
		omega += solid_angle(ta, tb, tc, p);
	}
	double winding = omega / (4.0 * GLM_PI);
	if (fabs(winding) > 0.5) {
		for (int k = 0; k < 3; k++)
			n[k] = -dir[k];
		return -dist;
	}
	return dist;
}

void sim_obstacle_frame(const versor orientation, double out_rotation[3][3]) { rotation_matrix(orientation, out_rotation); }

float sim_obstacle_distance(const sim_obstacle *o, const vec3 position, const versor orientation, const vec3 p,
                            vec3 out_normal)
{
	double m[3][3];
	rotation_matrix(orientation, m);
	return sim_obstacle_distance_in(o, position, (const double(*)[3])m, p, out_normal);
}

float sim_obstacle_distance_in(const sim_obstacle *o, const vec3 position, const double m[3][3], const vec3 p,
                               vec3 out_normal)
{
	double d[3], l[3], n[3] = {0.0, 1.0, 0.0}, dist = 0.0;
	for (int k = 0; k < 3; k++)
		d[k] = (double)p[k] - (double)position[k];
	rotate_transposed(m, d, l);
	switch (o->def.shape) {
	case SIM_SHAPE_PLANE: dist = l[1]; break;
	case SIM_SHAPE_SPHERE: dist = sphere_distance(o->def.radius, l, n); break;
	case SIM_SHAPE_BOX: dist = box_distance(o->def.half_extents, l, n); break;
	case SIM_SHAPE_CAPSULE: dist = capsule_distance(o->def.radius, o->def.half_height, l, n); break;
	case SIM_SHAPE_MESH: dist = mesh_distance(o, l, n); break;
	default: break;
	}
	double wn[3];
	rotate(m, n, wn);
	for (int k = 0; k < 3; k++)
		out_normal[k] = (float)wn[k];
	return (float)dist;
}

float sim_obstacle_sphere_distance(const sim_obstacle *o, const vec3 position, const vec3 p)
{
	double d[3];
	for (int k = 0; k < 3; k++)
		d[k] = (double)p[k] - (double)position[k];
	return (float)(len3d(d) - o->def.radius);
}

/* ---- world API ------------------------------------------------------------------------------ */

static sim_obstacle *obstacle_at(const sim_world *w, int obstacle)
{
	return obstacle >= 0 && obstacle < w->obstacle_count ? &w->obstacles[obstacle] : NULL;
}

int sim_world_add_obstacle(sim_world *w, const sim_obstacle_def *def)
{
	sim_obstacle o;
	sim_result r = obstacle_init(&o, def);
	if (r != SIM_OK)
		return r;
	if (w->obstacle_count >= w->obstacle_capacity) {
		int cap = w->obstacle_capacity ? w->obstacle_capacity : 4;
		while (cap <= w->obstacle_count)
			cap *= 2;
		sim_obstacle *grown = realloc(w->obstacles, sizeof(sim_obstacle) * (size_t)cap);
		if (!grown) {
			sim_obstacle_fini(&o);
			return SIM_ERROR_OUT_OF_MEMORY;
		}
		w->obstacles = grown;
		w->obstacle_capacity = cap;
	}
	int index = w->obstacle_count++;
	w->obstacles[index] = o;
	/* def.name points at the name buffer inside each struct, and realloc may have moved
	 * them all. */
	for (int i = 0; i <= index; i++)
		w->obstacles[i].def.name = w->obstacles[i].name;
	return index;
}

int sim_world_obstacle_count(const sim_world *w) { return w->obstacle_count; }

const sim_obstacle_def *sim_world_obstacle(const sim_world *w, int obstacle)
{
	const sim_obstacle *o = obstacle_at(w, obstacle);
	return o ? &o->def : NULL;
}

sim_result sim_world_set_obstacle_motion(sim_world *w, int obstacle, const vec3 velocity, const vec3 angular_velocity)
{
	sim_obstacle *o = obstacle_at(w, obstacle);
	if (!o || !velocity || !angular_velocity || !finite3f(velocity) || !finite3f(angular_velocity))
		return SIM_ERROR_INVALID;
	memcpy(o->def.velocity, velocity, sizeof o->def.velocity);
	memcpy(o->def.angular_velocity, angular_velocity, sizeof o->def.angular_velocity);
	return SIM_OK;
}

/* ---- pair friction -------------------------------------------------------------------------- */

static bool body_key(const sim_world *w, sim_body b, int *key)
{
	if (b.obstacle ? b.index < 0 || b.index >= w->obstacle_count : b.index < 0 || b.index >= w->object_count)
		return false;
	*key = b.obstacle ? -1 - b.index : b.index;
	return true;
}

/* The pair's keys in order (a <= b), or false when the pair has no friction to set. */
static bool pair_keys(const sim_world *w, sim_body a, sim_body b, int *ka, int *kb)
{
	int x, y;
	if (!body_key(w, a, &x) || !body_key(w, b, &y) || (a.obstacle && b.obstacle))
		return false;
	*ka = x < y ? x : y;
	*kb = x < y ? y : x;
	return true;
}

static int find_pair_mu(const sim_world *w, int ka, int kb)
{
	for (int i = 0; i < w->pair_mu_count; i++)
		if (w->pair_mu[i].a == ka && w->pair_mu[i].b == kb)
			return i;
	return -1;
}

sim_result sim_world_set_pair_friction(sim_world *w, sim_body a, sim_body b, float mu)
{
	int ka, kb;
	if (!pair_keys(w, a, b, &ka, &kb) || isnan(mu) || isinf(mu))
		return SIM_ERROR_INVALID;
	int i = find_pair_mu(w, ka, kb);
	if (mu < 0.0f) {
		if (i >= 0) {
			w->pair_mu[i] = w->pair_mu[--w->pair_mu_count];
			w->pair_mu_revision++;
		}
		return SIM_OK;
	}
	if (i < 0) {
		if (w->pair_mu_count == w->pair_mu_capacity) {
			int cap = w->pair_mu_capacity ? 2 * w->pair_mu_capacity : 8;
			struct sim_pair_mu *grown = realloc(w->pair_mu, sizeof *grown * (size_t)cap);
			if (!grown)
				return SIM_ERROR_OUT_OF_MEMORY;
			w->pair_mu = grown;
			w->pair_mu_capacity = cap;
		}
		i = w->pair_mu_count++;
	}
	w->pair_mu[i] = (struct sim_pair_mu){ka, kb, mu};
	w->pair_mu_revision++;
	return SIM_OK;
}

float sim_world_pair_friction(const sim_world *w, sim_body a, sim_body b)
{
	int ka, kb;
	if (!pair_keys(w, a, b, &ka, &kb))
		return NAN;
	int i = find_pair_mu(w, ka, kb);
	if (i >= 0)
		return w->pair_mu[i].mu;
	float fa = a.obstacle ? w->obstacles[a.index].def.friction : w->objects[a.index].material.friction;
	float fb = b.obstacle ? w->obstacles[b.index].def.friction : w->objects[b.index].material.friction;
	return (float)sqrt((double)fa * (double)fb);
}

sim_result sim_world_obstacle_pose(const sim_world *w, int obstacle, vec3 out_position, versor out_orientation)
{
	const sim_obstacle *o = obstacle_at(w, obstacle);
	if (!o)
		return SIM_ERROR_INVALID;
	/* Plain copies: the caller's arrays need not have cglm's 16-byte alignment. */
	memcpy(out_position, o->position, sizeof o->position);
	memcpy(out_orientation, o->orientation, sizeof o->orientation);
	return SIM_OK;
}

/* ---- a triangle against a convex obstacle --------------------------------------------------- */

static void local_point(const double m[3][3], const vec3 position, const double p[3], double out[3])
{
	double d[3];
	for (int k = 0; k < 3; k++)
		d[k] = p[k] - (double)position[k];
	rotate_transposed(m, d, out);
}

/* Whether the closed segment s0 s1 crosses the triangle's interior or boundary: the ends
 * strictly on opposite sides of its plane, and the segment's line through the triangle
 * (the three orientations about it agree).  Exact, so a segment grazing an edge cannot be
 * taken for one that misses. */
static bool segment_crosses_triangle(const double s0[3], const double s1[3], const double t[3][3], double out_w[3])
{
	int o0 = sim_geom_orient3d(t[0], t[1], t[2], s0), o1 = sim_geom_orient3d(t[0], t[1], t[2], s1);
	if (o0 == 0 || o1 == 0 || o0 == o1)
		return false;
	int e0 = sim_geom_orient3d(s0, s1, t[1], t[2]), e1 = sim_geom_orient3d(s0, s1, t[2], t[0]),
	    e2 = sim_geom_orient3d(s0, s1, t[0], t[1]);
	if ((e0 < 0 || e1 < 0 || e2 < 0) && (e0 > 0 || e1 > 0 || e2 > 0))
		return false;
	/* where it crosses: the line's point in the plane, as the triangle's weights */
	double n[3], ab[3], ac[3], d[3];
	for (int k = 0; k < 3; k++) {
		ab[k] = t[1][k] - t[0][k];
		ac[k] = t[2][k] - t[0][k];
		d[k] = s1[k] - s0[k];
	}
	cross3d(ab, ac, n);
	double den = dot3d(n, d), s = 0.0;
	if (den != 0.0) {
		double a0[3] = {t[0][0] - s0[0], t[0][1] - s0[1], t[0][2] - s0[2]};
		s = dot3d(n, a0) / den;
		s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
	}
	double p[3];
	for (int k = 0; k < 3; k++)
		p[k] = s0[k] + s * d[k];
	sim_geom_point_triangle(p, t[0], t[1], t[2], out_w);
	return true;
}

/* Closest points of the segment s0 s1 and the triangle t: their distance, the triangle's
 * point as weights and the segment's point.  0 where they cross. */
static double segment_triangle(const double s0[3], const double s1[3], const double t[3][3], double w[3],
                               double q[3])
{
	if (segment_crosses_triangle(s0, s1, t, w)) {
		for (int k = 0; k < 3; k++)
			q[k] = w[0] * t[0][k] + w[1] * t[1][k] + w[2] * t[2][k];
		return 0.0;
	}
	double best = INFINITY, wt[3];
	const double *ends[2] = {s0, s1};
	for (int e = 0; e < 2; e++) {
		double d2 = sim_geom_point_triangle(ends[e], t[0], t[1], t[2], wt);
		if (d2 < best) {
			best = d2;
			memcpy(w, wt, sizeof wt);
			memcpy(q, ends[e], sizeof(double) * 3);
		}
	}
	for (int e = 0; e < 3; e++) {
		int i = e, j = (e + 1) % 3;
		double s, u;
		double d2 = sim_geom_segment_segment(s0, s1, t[i], t[j], &s, &u);
		if (d2 < best) {
			best = d2;
			w[0] = w[1] = w[2] = 0.0;
			w[i] = 1.0 - u;
			w[j] = u;
			for (int k = 0; k < 3; k++)
				q[k] = s0[k] + s * (s1[k] - s0[k]);
		}
	}
	return sqrt(best);
}

/* Whether the closed segment meets the box |x_k| <= h_k (slabs, in double). */
static bool segment_meets_box(const float h[3], const double a[3], const double b[3])
{
	double lo = 0.0, hi = 1.0;
	for (int k = 0; k < 3; k++) {
		double d = b[k] - a[k], hk = h[k];
		if (d == 0.0) {
			if (a[k] < -hk || a[k] > hk)
				return false;
			continue;
		}
		double t0 = (-hk - a[k]) / d, t1 = (hk - a[k]) / d;
		if (t0 > t1) {
			double s = t0;
			t0 = t1;
			t1 = s;
		}
		lo = t0 > lo ? t0 : lo;
		hi = t1 < hi ? t1 : hi;
		if (lo > hi)
			return false;
	}
	return true;
}

static void box_clamp(const float h[3], const double p[3], double out[3])
{
	for (int k = 0; k < 3; k++) {
		double hk = h[k];
		out[k] = p[k] < -hk ? -hk : (p[k] > hk ? hk : p[k]);
	}
}

/* Closest points of the box |x_k| <= h_k and the triangle t (local frame): the
 * distance, the triangle's point as weights, the box's point; 0 where they meet.  Two
 * disjoint convex polyhedra are nearest at a vertex of one against the other or at two
 * edges, so the triangle's corners against the box, the box's corners against the
 * triangle and the edge pairs cover it; they meet exactly when a corner of the triangle is
 * in the box, an edge of the triangle meets it, or an edge of the box crosses the
 * triangle. */
static double box_triangle(const float h[3], const double t[3][3], double w[3], double q[3])
{
	double corner[8][3];
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 3; k++)
			corner[i][k] = (i >> k) & 1 ? (double)h[k] : -(double)h[k];
	for (int e = 0; e < 3; e++) {
		const double *a = t[e], *b = t[(e + 1) % 3];
		if (segment_meets_box(h, a, b)) {
			/* a point of the edge in the box: its clamp onto the segment's slab interval is
			 * not needed for a distance of 0; the weights of the nearer end do */
			w[0] = w[1] = w[2] = 0.0;
			w[e] = 1.0;
			box_clamp(h, a, q);
			return 0.0;
		}
	}
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 3; k++) {
			int j = i ^ (1 << k);
			if (j < i)
				continue;
			if (segment_crosses_triangle(corner[i], corner[j], t, w)) {
				for (int a = 0; a < 3; a++)
					q[a] = w[0] * t[0][a] + w[1] * t[1][a] + w[2] * t[2][a];
				return 0.0;
			}
		}
	double best = INFINITY, wt[3];
	for (int e = 0; e < 3; e++) {
		double c[3];
		box_clamp(h, t[e], c);
		double d[3] = {t[e][0] - c[0], t[e][1] - c[1], t[e][2] - c[2]};
		double d2 = dot3d(d, d);
		if (d2 < best) {
			best = d2;
			w[0] = w[1] = w[2] = 0.0;
			w[e] = 1.0;
			memcpy(q, c, sizeof c);
		}
	}
	for (int i = 0; i < 8; i++) {
		double d2 = sim_geom_point_triangle(corner[i], t[0], t[1], t[2], wt);
		if (d2 < best) {
			best = d2;
			memcpy(w, wt, sizeof wt);
			memcpy(q, corner[i], sizeof(double) * 3);
		}
	}
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 3; k++) {
			int j = i ^ (1 << k);
			if (j < i)
				continue;
			for (int e = 0; e < 3; e++) {
				int a = e, b = (e + 1) % 3;
				double s, u;
				double d2 = sim_geom_segment_segment(corner[i], corner[j], t[a], t[b], &s, &u);
				if (d2 < best) {
					best = d2;
					w[0] = w[1] = w[2] = 0.0;
					w[a] = 1.0 - u;
					w[b] = u;
					for (int m = 0; m < 3; m++)
						q[m] = corner[i][m] + s * (corner[j][m] - corner[i][m]);
				}
			}
		}
	return sqrt(best);
}

double sim_obstacle_triangle_distance(const sim_obstacle *o, const vec3 position, const double m[3][3],
                                      const double tri[3][3], double out_w[3], double out_n[3])
{
	double t[3][3], w[3] = {1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0}, q[3] = {0.0, 0.0, 0.0}, dist = INFINITY, r = 0.0;
	for (int v = 0; v < 3; v++)
		local_point(m, position, tri[v], t[v]);
	switch (o->def.shape) {
	case SIM_SHAPE_SPHERE: {
		double centre[3] = {0.0, 0.0, 0.0};
		dist = sqrt(sim_geom_point_triangle(centre, t[0], t[1], t[2], w));
		r = o->def.radius;
		break;
	}
	case SIM_SHAPE_CAPSULE: {
		double s0[3] = {0.0, -(double)o->def.half_height, 0.0}, s1[3] = {0.0, (double)o->def.half_height, 0.0};
		dist = segment_triangle(s0, s1, t, w, q);
		r = o->def.radius;
		break;
	}
	case SIM_SHAPE_BOX: dist = box_triangle(o->def.half_extents, t, w, q); break;
	default:
		/* planes and meshes meet triangles through the triangle pipeline */
		out_w[0] = out_w[1] = out_w[2] = 1.0 / 3.0;
		out_n[0] = 0.0, out_n[1] = 1.0, out_n[2] = 0.0;
		return INFINITY;
	}
	/* from the obstacle's nearest point to the triangle's; where they coincide (the
	 * triangle reaches the centre, the axis or into the box) the face normal, turned
	 * away from the obstacle's centre */
	double p[3], d[3], n[3];
	for (int k = 0; k < 3; k++) {
		p[k] = w[0] * t[0][k] + w[1] * t[1][k] + w[2] * t[2][k];
		d[k] = p[k] - q[k];
	}
	double l = len3d(d);
	if (dist > 0.0 && l > 0.0) {
		for (int k = 0; k < 3; k++)
			n[k] = d[k] / l;
	} else {
		double ab[3], ac[3], fn[3];
		for (int k = 0; k < 3; k++) {
			ab[k] = t[1][k] - t[0][k];
			ac[k] = t[2][k] - t[0][k];
		}
		cross3d(ab, ac, fn);
		double fl = len3d(fn), centroid[3];
		for (int k = 0; k < 3; k++)
			centroid[k] = (t[0][k] + t[1][k] + t[2][k]) / 3.0;
		if (fl > 0.0) {
			double s = dot3d(fn, centroid) < 0.0 ? -1.0 : 1.0;
			for (int k = 0; k < 3; k++)
				n[k] = s * fn[k] / fl;
		} else {
			n[0] = 0.0, n[1] = 1.0, n[2] = 0.0;
		}
	}
	rotate(m, n, out_n);
	memcpy(out_w, w, sizeof w);
	return dist - r;
}
