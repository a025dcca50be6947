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

int sty_pick(const sty_config *cfg, const float tip[3], const float direction[3], const float (*positions)[4], int count)
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
		if (!(positions[i][3] > 0.0f))
			continue; /* pinned or constrained: cannot be pulled */
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

bool sty_segment_hit(const sty_scene *scene, const float a[3], const float b[3], float *out_s)
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
	/* A segment that starts on a surface (the drawn pointer left on a vertex it let go
	 * of) is leaving or sliding along it, not crossing it. */
	double min_s = ee > 0.0 ? 1e-6 / sqrt(ee) : INFINITY;
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
	for (int i = 0; i < scene->sphere_count && ee > 0.0; i++) {
		const sty_sphere *sp = &scene->spheres[i];
		double w[3];
		sub3(a, sp->center, w);
		double r2 = (double)sp->radius * sp->radius;
		double c = dot3(w, w) - r2;
		if (c <= 0.0)
			continue; /* starting inside: let it out */
		double bq = dot3(w, e), disc = bq * bq - ee * c;
		if (disc < 0.0)
			continue;
		double s = (-bq - sqrt(disc)) / ee;
		if (s >= 0.0 && s <= 1.0 && s < best)
			best = s;
	}
	if (!(best <= 1.0))
		return false;
	*out_s = (float)best;
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
		float hit;
		if (sty_segment_hit(scene, s->drawn, p->position, &hit)) {
			double e[3];
			sub3(p->position, s->drawn, e);
			double len = sqrt(dot3(e, e));
			double f = len > 0.0 ? (double)hit - (double)cfg->surface_margin / len : 0.0;
			if (f < 0.0)
				f = 0.0;
			for (int k = 0; k < 3; k++)
				s->drawn[k] = (float)((double)s->drawn[k] + f * e[k]);
			out->blocked = true;
		} else {
			memcpy(s->drawn, p->position, sizeof s->drawn);
		}
	}

	if (scene && s->grabbed < 0)
		out->hover = sty_pick(cfg, s->drawn, p->direction, scene->positions, scene->vertex_count);

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
