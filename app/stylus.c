/* The grabbing pointer's decisions (stylus.h).  Plain float and double maths, no cglm,
 * so that hand-computed tests see exactly these operations. */
#include "stylus.h"

#include <math.h>
#include <string.h>

sty_config sty_config_default(void)
{
	return (sty_config){.sphere_radius = 0.03f,
	                    .vertex_radius = 0.01f,
	                    .grab_radius = 0.02f,
	                    .gain = 1.0f,
	                    .jump_limit = 0.05f,
	                    .surface_margin = 0.002f};
}

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void sub3(const float a[3], const float b[3], double out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = (double)a[k] - (double)b[k];
}

static void cross3(const double a[3], const double b[3], double out[3])
{
	out[0] = a[1] * b[2] - a[2] * b[1];
	out[1] = a[2] * b[0] - a[0] * b[2];
	out[2] = a[0] * b[1] - a[1] * b[0];
}

void sty_init(sty_stylus *s, const sty_config *config)
{
	memset(s, 0, sizeof *s);
	s->config = config ? *config : sty_config_default();
	s->grabbed = -1;
}

void sty_drop(sty_stylus *s)
{
	s->grabbed = -1;
	memset(s->displacement, 0, sizeof s->displacement);
}

/* Entry parameter of the ray o + t d (d unit) into the sphere, with a ray starting
 * inside counting as a hit at 0 (the tip is already on the vertex). */
static bool ray_sphere(const double o[3], const double d[3], const double c[3], double r, double *t)
{
	double w[3] = {c[0] - o[0], c[1] - o[1], c[2] - o[2]};
	double tca = dot3(w, d);
	double d2 = dot3(w, w) - tca * tca;
	if (d2 > r * r)
		return false;
	double thc = sqrt(r * r - d2);
	if (tca + thc < 0.0)
		return false; /* behind the tip */
	*t = tca - thc > 0.0 ? tca - thc : 0.0;
	return true;
}

int sty_pick(const sty_config *cfg, const float tip[3], const float direction[3], const float (*positions)[4],
             const uint8_t *driven, int count)
{
	double o[3] = {tip[0], tip[1], tip[2]}, d[3] = {direction[0], direction[1], direction[2]};
	double dl = sqrt(dot3(d, d));
	bool have_ray = dl > 0.0 && isfinite(dl);
	if (have_ray)
		for (int k = 0; k < 3; k++)
			d[k] /= dl;
	double reach = (double)cfg->sphere_radius + (double)cfg->vertex_radius;
	double grab2 = (double)cfg->grab_radius * (double)cfg->grab_radius;
	int ray_best = -1, near_best = -1;
	double ray_t = INFINITY, near_d2 = INFINITY;
	for (int i = 0; i < count; i++) {
		if (!(positions[i][3] > 0.0f) || (driven && driven[i]))
			continue; /* pinned, scripted or constrained: cannot be pulled */
		double c[3] = {positions[i][0], positions[i][1], positions[i][2]};
		double w[3] = {c[0] - o[0], c[1] - o[1], c[2] - o[2]};
		double dist2 = dot3(w, w);
		/* the cheap test first, as the seed does */
		if (!(dist2 <= reach * reach))
			continue;
		double t;
		if (have_ray && ray_sphere(o, d, c, cfg->vertex_radius, &t) && t < ray_t)
			ray_best = i, ray_t = t;
		if (dist2 <= grab2 && dist2 < near_d2)
			near_best = i, near_d2 = dist2;
	}
	return ray_best >= 0 ? ray_best : near_best;
}

/* Möller-Trumbore on the segment a + s (b - a), s in [0, 1]; either side of the triangle. */
static bool segment_triangle(const double a[3], const double e[3], const float *p0, const float *p1, const float *p2,
                             double *s)
{
	double e1[3], e2[3], tv[3], pv[3], qv[3];
	sub3(p1, p0, e1);
	sub3(p2, p0, e2);
	cross3(e, e2, pv);
	double det = dot3(e1, pv);
	if (fabs(det) < 1e-18)
		return false; /* parallel, or a degenerate triangle */
	double inv = 1.0 / det;
	for (int k = 0; k < 3; k++)
		tv[k] = a[k] - (double)p0[k];
	double u = dot3(tv, pv) * inv;
	if (u < 0.0 || u > 1.0)
		return false;
	cross3(tv, e1, qv);
	double v = dot3(e, qv) * inv;
	if (v < 0.0 || u + v > 1.0)
		return false;
	double t = dot3(e2, qv) * inv;
	if (t < 0.0 || t > 1.0)
		return false;
	*s = t;
	return true;
}

/* Rotates v by the unit quaternion q (xyzw), or by its inverse. */
static void rotate(const double q[4], bool inverse, const double v[3], double out[3])
{
	double u[3] = {q[0], q[1], q[2]}, t[3], ut[3];
	if (inverse)
		u[0] = -u[0], u[1] = -u[1], u[2] = -u[2];
	/* v + 2 w (u x v) + 2 u x (u x v), with t = 2 (u x v) */
	cross3(u, v, t);
	for (int k = 0; k < 3; k++)
		t[k] *= 2.0;
	cross3(u, t, ut);
	for (int k = 0; k < 3; k++)
		out[k] = v[k] + q[3] * t[k] + ut[k];
}

/* The obstacle's position and unit orientation: its current pose when it has one. */
static void obstacle_frame(const sty_obstacle *ob, double position[3], double q[4])
{
	const float *x = ob->pose ? ob->pose : ob->position;
	const float *r = ob->pose ? ob->pose + 3 : ob->orientation;
	for (int k = 0; k < 3; k++)
		position[k] = x[k];
	double n = 0.0;
	for (int k = 0; k < 4; k++) {
		q[k] = r[k];
		n += q[k] * q[k];
	}
	n = sqrt(n);
	if (!(n > 0.0) || !isfinite(n)) {
		/* a zeroed orientation (a def filled by hand) means no rotation */
		q[0] = q[1] = q[2] = 0.0;
		q[3] = 1.0;
		return;
	}
	for (int k = 0; k < 4; k++)
		q[k] /= n;
}

/* Every solid test below answers one question about o + s e, s in [0, 1]: the first s at
 * which it goes into the solid's OPEN interior, from a start outside or on the surface.
 * A start inside is never a hit (the pointer may leave), and a segment that only touches
 * or slides along the surface does not enter it: so an obstacle that moved onto the
 * pointer cannot trap it, and a pointer stopped on a surface may slide along it. */

static bool enters_ball(const double o[3], const double e[3], const double c[3], double r, double *s)
{
	double w[3] = {o[0] - c[0], o[1] - c[1], o[2] - c[2]};
	double ee = dot3(e, e), cc = dot3(w, w) - r * r;
	if (cc < 0.0 || !(ee > 0.0))
		return false; /* inside: let it out */
	double b = dot3(w, e), disc = b * b - ee * cc;
	if (!(disc > 0.0))
		return false; /* the line misses, or only touches */
	double q = sqrt(disc);
	if (-b + q <= 0.0)
		return false; /* the interior lies behind the start */
	double s0 = (-b - q) / ee;
	if (s0 > 1.0)
		return false;
	*s = s0 > 0.0 ? s0 : 0.0;
	return true;
}

/* The plane's half-space, local y < 0. */
static bool enters_plane(const double o[3], const double e[3], double *s)
{
	if (o[1] < 0.0 || !(e[1] < 0.0))
		return false; /* under it already, or not going down */
	double s0 = -o[1] / e[1];
	if (s0 > 1.0)
		return false;
	*s = s0;
	return true;
}

/* Slabs: the open interior is where every |local coordinate| < its half extent. */
static bool enters_box(const double o[3], const double e[3], const float half[3], double *s)
{
	bool inside = true;
	for (int k = 0; k < 3; k++)
		inside = inside && fabs(o[k]) < (double)half[k];
	if (inside)
		return false;
	double t0 = -INFINITY, t1 = INFINITY;
	for (int k = 0; k < 3; k++) {
		double h = half[k];
		if (e[k] == 0.0) {
			/* parallel to this slab: in it for good, or never (on its face is out) */
			if (!(fabs(o[k]) < h))
				return false;
			continue;
		}
		double ta = (-h - o[k]) / e[k], tb = (h - o[k]) / e[k];
		if (ta > tb) {
			double t = ta;
			ta = tb;
			tb = t;
		}
		t0 = fmax(t0, ta);
		t1 = fmin(t1, tb);
	}
	if (!(t0 < t1) || t1 <= 0.0 || t0 > 1.0)
		return false; /* an edge or a corner touched, or the box out of reach */
	*s = t0 > 0.0 ? t0 : 0.0;
	return true;
}

/* A point moving into a capsule is a ray against its cylinder (the side between the
 * caps) and against the two spheres of its caps; from outside, the first of those it
 * enters is where it enters the capsule (the cylinder's flat ends lie in the spheres). */
static bool enters_capsule(const double o[3], const double e[3], double r, double hh, double *s)
{
	if (hh < 0.0)
		hh = 0.0;
	double yc = fmin(fmax(o[1], -hh), hh);
	double dy = o[1] - yc;
	if (o[0] * o[0] + dy * dy + o[2] * o[2] < r * r)
		return false; /* inside: let it out */
	double best = INFINITY;
	double a = e[0] * e[0] + e[2] * e[2];
	if (a > 0.0) {
		double b = o[0] * e[0] + o[2] * e[2], c = o[0] * o[0] + o[2] * o[2] - r * r;
		double disc = b * b - a * c;
		if (disc > 0.0) {
			double q = sqrt(disc);
			double s0 = (-b - q) / a;
			if (-b + q > 0.0 && s0 <= 1.0) {
				/* a start in the side's infinite cylinder is beyond a cap: y rejects it */
				if (s0 < 0.0)
					s0 = 0.0;
				double y = o[1] + s0 * e[1];
				if (fabs(y) <= hh)
					best = s0;
			}
		}
	}
	for (int end = -1; end <= 1; end += 2) {
		double c[3] = {0.0, end * hh, 0.0}, s0;
		if (enters_ball(o, e, c, r, &s0) && s0 < best)
			best = s0;
	}
	if (!(best <= 1.0))
		return false;
	*s = best;
	return true;
}

/* A triangle counts only when crossed against its normal, i.e. from outside in (sim's
 * meshes are counter-clockwise seen from outside): that is the mesh's "start inside
 * may leave" rule, and it keeps a concave mesh stopping a pointer that re-enters it. */
static bool enters_mesh(const sty_obstacle *ob, const double o[3], const double e[3], double *s)
{
	if (!ob->positions || !ob->triangles)
		return false;
	double lo[3], hi[3];
	for (int k = 0; k < 3; k++) {
		lo[k] = fmin(o[k], o[k] + e[k]);
		hi[k] = fmax(o[k], o[k] + e[k]);
	}
	double best = INFINITY;
	for (int t = 0; t < ob->triangle_count; t++) {
		const int *tri = &ob->triangles[3 * t];
		if (tri[0] < 0 || tri[1] < 0 || tri[2] < 0 || tri[0] >= ob->vertex_count || tri[1] >= ob->vertex_count ||
		    tri[2] >= ob->vertex_count)
			continue;
		const float *p0 = ob->positions + 3 * tri[0], *p1 = ob->positions + 3 * tri[1],
		            *p2 = ob->positions + 3 * tri[2];
		bool apart = false;
		for (int k = 0; k < 3 && !apart; k++) {
			double tmin = fmin(p0[k], fmin(p1[k], p2[k])), tmax = fmax(p0[k], fmax(p1[k], p2[k]));
			apart = tmax < lo[k] || tmin > hi[k];
		}
		if (apart)
			continue;
		double e1[3], e2[3], n[3];
		sub3(p1, p0, e1);
		sub3(p2, p0, e2);
		cross3(e1, e2, n);
		if (!(dot3(e, n) < 0.0))
			continue; /* leaving, or sliding along it */
		double s0;
		if (segment_triangle(o, e, p0, p1, p2, &s0) && s0 < best)
			best = s0;
	}
	if (!(best <= 1.0))
		return false;
	*s = best;
	return true;
}

/* The tests run in the obstacle's frame: a rigid motion keeps the fraction s. */
static bool obstacle_hit(const sty_obstacle *ob, const float a[3], const float b[3], double *s)
{
	double position[3], q[4], w[3], e[3], o[3], el[3];
	obstacle_frame(ob, position, q);
	for (int k = 0; k < 3; k++)
		w[k] = (double)a[k] - position[k];
	sub3(b, a, e);
	if (!(dot3(e, e) > 0.0))
		return false;
	rotate(q, true, w, o);
	rotate(q, true, e, el);
	switch (ob->shape) {
	case STY_SHAPE_PLANE:
		return enters_plane(o, el, s);
	case STY_SHAPE_SPHERE: {
		double c[3] = {0.0, 0.0, 0.0};
		return enters_ball(o, el, c, ob->radius, s);
	}
	case STY_SHAPE_BOX:
		return enters_box(o, el, ob->half_extents, s);
	case STY_SHAPE_CAPSULE:
		return enters_capsule(o, el, ob->radius, ob->half_height, s);
	case STY_SHAPE_MESH:
		return enters_mesh(ob, o, el, s);
	}
	return false;
}

bool sty_obstacle_segment_hit(const sty_obstacle *obstacle, const float a[3], const float b[3], float *out_s)
{
	double s;
	if (!obstacle || !obstacle_hit(obstacle, a, b, &s))
		return false;
	*out_s = (float)s;
	return true;
}

/* In double, so that sty_update places the stop point without the float rounding of s. */
static bool segment_hit(const sty_scene *scene, const float a[3], const float b[3], double *out_s)
{
	if (!scene)
		return false;
	double o[3] = {a[0], a[1], a[2]}, e[3];
	sub3(b, a, e);
	double lo[3], hi[3];
	for (int k = 0; k < 3; k++) {
		lo[k] = fmin(a[k], b[k]);
		hi[k] = fmax(a[k], b[k]);
	}
	double ee = dot3(e, e);
	if (!(ee > 0.0))
		return false;
	/* A segment that starts on a surface (the drawn pointer left on a vertex it let go
	 * of) is leaving or sliding along it, not crossing it. */
	double min_s = 1e-6 / sqrt(ee);
	double best = INFINITY;
	for (int m = 0; m < scene->mesh_count; m++) {
		const sty_mesh *mesh = &scene->meshes[m];
		for (int t = 0; t < mesh->triangle_count; t++) {
			const int *tri = &mesh->triangles[3 * t];
			const float *p0 = mesh->positions[tri[0]], *p1 = mesh->positions[tri[1]], *p2 = mesh->positions[tri[2]];
			/* the segment is short: most triangles fail this box test */
			bool apart = false;
			for (int k = 0; k < 3 && !apart; k++) {
				double tmin = fmin(p0[k], fmin(p1[k], p2[k])), tmax = fmax(p0[k], fmax(p1[k], p2[k]));
				apart = tmax < lo[k] || tmin > hi[k];
			}
			double s;
			if (!apart && segment_triangle(o, e, p0, p1, p2, &s) && s > min_s && s < best)
				best = s;
		}
	}
	for (int i = 0; i < scene->sphere_count; i++) {
		const sty_sphere *sp = &scene->spheres[i];
		double c[3] = {sp->center[0], sp->center[1], sp->center[2]}, s;
		if (enters_ball(o, e, c, sp->radius, &s) && s < best)
			best = s;
	}
	for (int i = 0; i < scene->obstacle_count; i++) {
		double s;
		if (obstacle_hit(&scene->obstacles[i], a, b, &s) && s < best)
			best = s;
	}
	if (!(best <= 1.0))
		return false;
	*out_s = best;
	return true;
}

bool sty_segment_hit(const sty_scene *scene, const float a[3], const float b[3], float *out_s)
{
	double s;
	if (!segment_hit(scene, a, b, &s))
		return false;
	*out_s = (float)s;
	return true;
}

void sty_update(sty_stylus *s, const trk_pointer *p, const sty_scene *scene, sty_output *out)
{
	memset(out, 0, sizeof *out);
	out->hover = -1;
	out->released = -1;
	if (!p->valid) {
		out->grabbed = s->grabbed;
		memcpy(out->target, s->target, sizeof out->target);
		return;
	}
	const sty_config *cfg = &s->config;

	/* The jump limit, on the step since the previous update whether or not that one was
	 * kept: a spike out and back drops both steps, a lasting offset only its first. */
	bool moved_ok = !p->frozen;
	double step[3] = {0.0, 0.0, 0.0};
	if (s->have_last) {
		sub3(p->position, s->last_position, step);
		double len = sqrt(dot3(step, step));
		if (cfg->jump_limit > 0.0f && !(len <= (double)cfg->jump_limit)) {
			moved_ok = false;
			out->jump_ignored = true;
			s->ignored_jumps++;
		}
	}
	memcpy(s->last_position, p->position, sizeof s->last_position);
	s->have_last = true;

	/* Release first, so that a release and a press in one update regrab cleanly. */
	if (s->grabbed >= 0 && p->released_edge) {
		out->release = true;
		out->released = s->grabbed;
		s->grabbed = -1;
		/* the drawn pointer resumes from where the vertex was led */
		memcpy(s->drawn, s->target, sizeof s->drawn);
	}

	if (s->grabbed >= 0) {
		if (moved_ok)
			for (int k = 0; k < 3; k++)
				s->displacement[k] += step[k];
		for (int k = 0; k < 3; k++) {
			s->target[k] = (float)((double)s->grab_origin[k] + (double)cfg->gain * s->displacement[k]);
			out->target_velocity[k] = moved_ok ? cfg->gain * p->velocity[k] : 0.0f;
		}
		/* the grabbed cloth's own triangles would stop the pointer: it shows the target */
		memcpy(s->drawn, s->target, sizeof s->drawn);
		s->have_drawn = true;
	} else if (!s->have_drawn) {
		memcpy(s->drawn, p->position, sizeof s->drawn);
		s->have_drawn = true;
	} else if (!p->frozen) {
		double hit;
		if (segment_hit(scene, s->drawn, p->position, &hit)) {
			double e[3];
			sub3(p->position, s->drawn, e);
			double len = sqrt(dot3(e, e));
			double f = len > 0.0 ? hit - (double)cfg->surface_margin / len : 0.0;
			if (f < 0.0)
				f = 0.0;
			float stop[3];
			for (int k = 0; k < 3; k++)
				stop[k] = (float)((double)s->drawn[k] + f * e[k]);
			/* At a grazing angle the margin along the segment is a hair across it, and
			 * rounding to float could put the stop point inside a solid, from where it
			 * would be let out and so through: then the pointer stays where it was. */
			double again;
			if (!segment_hit(scene, s->drawn, stop, &again))
				memcpy(s->drawn, stop, sizeof s->drawn);
			out->blocked = true;
		} else {
			memcpy(s->drawn, p->position, sizeof s->drawn);
		}
	}

	if (scene && s->grabbed < 0)
		out->hover = sty_pick(cfg, s->drawn, p->direction, scene->positions, scene->driven, scene->vertex_count);

	/* A press on a picked vertex grabs it; a click within one update (pressed and
	 * released) does not, nor a press while the clutch holds the pointer. */
	if (s->grabbed < 0 && p->pressed_edge && p->pressed && !p->clutched && !p->frozen && out->hover >= 0) {
		s->grabbed = out->hover;
		out->grab = true;
		memcpy(s->grab_origin, scene->positions[out->hover], sizeof s->grab_origin);
		memset(s->displacement, 0, sizeof s->displacement);
		memcpy(s->target, s->grab_origin, sizeof s->target);
		memcpy(s->drawn, s->target, sizeof s->drawn);
	}
	out->grabbed = s->grabbed;
	memcpy(out->drawn, s->drawn, sizeof out->drawn);
	memcpy(out->target, s->target, sizeof out->target);
}
