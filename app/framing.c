/* The default view fitted to the scene.  A scene file's camera was placed by hand for one
 * window shape and one stage of the motion; the box is what has to show, whatever the
 * aspect and whatever part of the window the panel leaves. */
#include "framing.h"

#include <math.h>
#include <string.h>

static void grow(float lo[3], float hi[3], const float p[3])
{
	for (int k = 0; k < 3; k++) {
		if (p[k] < lo[k])
			lo[k] = p[k];
		if (p[k] > hi[k])
			hi[k] = p[k];
	}
}

/* v rotated by the unit quaternion q (x y z w). */
static void rotate(const float q[4], const float v[3], float out[3])
{
	float c[3] = {q[1] * v[2] - q[2] * v[1], q[2] * v[0] - q[0] * v[2], q[0] * v[1] - q[1] * v[0]};
	float cc[3] = {q[1] * c[2] - q[2] * c[1], q[2] * c[0] - q[0] * c[2], q[0] * c[1] - q[1] * c[0]};
	for (int k = 0; k < 3; k++)
		out[k] = v[k] + 2.0f * (q[3] * c[k] + cc[k]);
}

/* Grows the box by a local point of the obstacle, placed by its pose. */
static void grow_local(float lo[3], float hi[3], const sim_obstacle_def *o, const float local[3])
{
	float w[3];
	rotate(o->orientation, local, w);
	for (int k = 0; k < 3; k++)
		w[k] += o->position[k];
	grow(lo, hi, w);
}

static void grow_obstacle(float lo[3], float hi[3], const sim_obstacle_def *o)
{
	switch (o->shape) {
	case SIM_SHAPE_SPHERE:
		for (int c = 0; c < 8; c++) {
			float p[3] = {c & 1 ? o->radius : -o->radius, c & 2 ? o->radius : -o->radius,
			              c & 4 ? o->radius : -o->radius};
			grow_local(lo, hi, o, p);
		}
		break;
	case SIM_SHAPE_BOX:
		for (int c = 0; c < 8; c++) {
			float p[3] = {c & 1 ? o->half_extents[0] : -o->half_extents[0],
			              c & 2 ? o->half_extents[1] : -o->half_extents[1],
			              c & 4 ? o->half_extents[2] : -o->half_extents[2]};
			grow_local(lo, hi, o, p);
		}
		break;
	case SIM_SHAPE_CAPSULE: {
		float h = o->half_height + o->radius, r = o->radius;
		for (int c = 0; c < 8; c++) {
			float p[3] = {c & 1 ? r : -r, c & 2 ? h : -h, c & 4 ? r : -r};
			grow_local(lo, hi, o, p);
		}
		break;
	}
	case SIM_SHAPE_MESH:
		for (int i = 0; i < o->vertex_count; i++)
			grow_local(lo, hi, o, &o->positions[3 * i]);
		break;
	default: break;
	}
}

/* The obstacle's definition at its pose in `poses` (the definition's own without). */
static sim_obstacle_def posed(const st_layout *layout, const float (*poses)[7], int i)
{
	sim_obstacle_def o = layout->obstacles[i].def;
	if (poses) {
		memcpy(o.position, poses[i], 3 * sizeof(float));
		memcpy(o.orientation, poses[i] + 3, 4 * sizeof(float));
	}
	return o;
}

bool frame_scene_bounds(const st_layout *layout, const float (*positions)[4], int vertex_count,
                        const float (*poses)[7], const float gravity[3], float lo[3], float hi[3])
{
	for (int k = 0; k < 3; k++)
		lo[k] = INFINITY, hi[k] = -INFINITY;
	for (int i = 0; i < vertex_count; i++)
		if (isfinite(positions[i][0]) && isfinite(positions[i][1]) && isfinite(positions[i][2]))
			grow(lo, hi, positions[i]);
	for (int i = 0; i < layout->obstacle_count; i++) {
		sim_obstacle_def o = posed(layout, poses, i);
		grow_obstacle(lo, hi, &o);
	}
	if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2])) {
		memset(lo, 0, 3 * sizeof(float));
		memset(hi, 0, 3 * sizeof(float));
		return false;
	}
	/* a floor under the scene, with gravity pulling down onto it: cloth dropped, draped or
	 * sliding off a table ends there */
	for (int i = 0; i < layout->obstacle_count; i++) {
		sim_obstacle_def o = posed(layout, poses, i);
		if (o.shape != SIM_SHAPE_PLANE)
			continue;
		float n[3];
		rotate(o.orientation, (const float[3]){0.0f, 1.0f, 0.0f}, n);
		float g = gravity[0] * n[0] + gravity[1] * n[1] + gravity[2] * n[2];
		if (n[1] > 0.99f && g < 0.0f && o.position[1] < lo[1])
			lo[1] = o.position[1];
	}
	return true;
}

static float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

bool frame_fit(const float lo[3], const float hi[3], float fov_degrees, int width, int height, const float rect[4],
               float margin, float eye[3], float target[3])
{
	if (!(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]) || width <= 0 || height <= 0 || !(rect[2] > 1.0f) ||
	    !(rect[3] > 1.0f) || !(fov_degrees > 1.0f && fov_degrees < 170.0f))
		return false;
	/* the scene camera's direction, with the orbit camera's basis (world up) */
	float f[3] = {target[0] - eye[0], target[1] - eye[1], target[2] - eye[2]};
	float fl = sqrtf(dot3(f, f));
	if (!(fl > 1e-6f))
		f[0] = 0.0f, f[1] = 0.0f, f[2] = -1.0f, fl = 1.0f;
	for (int k = 0; k < 3; k++)
		f[k] /= fl;
	if (fabsf(f[1]) > 0.9995f) /* straight up or down: the orbit camera cannot look so */
		f[0] = 0.0f, f[1] = f[1] > 0.0f ? 0.9995f : -0.9995f, f[2] = -sqrtf(1.0f - 0.9995f * 0.9995f);
	float r[3] = {-f[2], 0.0f, f[0]}; /* f x (0, 1, 0) */
	float rl = sqrtf(dot3(r, r));
	for (int k = 0; k < 3; k++)
		r[k] /= rl;
	float u[3] = {r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]};
	float ty = tanf(0.5f * fov_degrees * 3.14159265f / 180.0f), tx = ty * (float)width / (float)height;
	/* the rectangle in normalised device coordinates: centre c, half size h (y up) */
	float cx = 2.0f * (rect[0] + 0.5f * rect[2]) / (float)width - 1.0f;
	float cy = 1.0f - 2.0f * (rect[1] + 0.5f * rect[3]) / (float)height;
	float hx = (1.0f - margin) * rect[2] / (float)width, hy = (1.0f - margin) * rect[3] / (float)height;
	float center[3] = {0.5f * (lo[0] + hi[0]), 0.5f * (lo[1] + hi[1]), 0.5f * (lo[2] + hi[2])};
	/* The eye sits at distance d behind the centre along f and moves sideways so the centre
	 * projects to (cx, cy).  A corner p (from the centre: pr, pu, pf) at depth d + pf is then
	 * inside when |pr - cx tx pf| <= hx tx (d + pf), and likewise upwards: solved for d. */
	float d = 0.0f;
	for (int c = 0; c < 8; c++) {
		float p[3] = {(c & 1 ? hi[0] : lo[0]) - center[0], (c & 2 ? hi[1] : lo[1]) - center[1],
		              (c & 4 ? hi[2] : lo[2]) - center[2]};
		float pr = dot3(p, r), pu = dot3(p, u), pf = dot3(p, f);
		float need_x = fabsf(pr - cx * tx * pf) / (hx * tx) - pf;
		float need_y = fabsf(pu - cy * ty * pf) / (hy * ty) - pf;
		if (need_x > d)
			d = need_x;
		if (need_y > d)
			d = need_y;
	}
	/* a point-sized box still needs the eye outside it, beyond the near plane */
	float radius = 0.5f * sqrtf((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
	                            (hi[2] - lo[2]) * (hi[2] - lo[2]));
	if (d < radius + 0.05f)
		d = radius + 0.05f;
	float sx = -cx * tx * d, sy = -cy * ty * d; /* the eye's sideways shift */
	for (int k = 0; k < 3; k++) {
		eye[k] = center[k] - d * f[k] + sx * r[k] + sy * u[k];
		target[k] = eye[k] + d * f[k];
	}
	return true;
}

float frame_pointer_length(const float lo[3], const float hi[3])
{
	float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
	float l = 0.05f * sqrtf(dx * dx + dy * dy + dz * dz);
	if (!(l > 0.005f))
		return 0.005f;
	return l < 0.08f ? l : 0.08f;
}
