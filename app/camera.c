/* Orbit camera and cursor rays.  The camera is kept as a target, a distance and two
 * angles rather than a matrix, so orbiting never accumulates roll and a reset or a seek
 * is a matter of recomputing three numbers. */
#include "camera.h"

#include <math.h>
#include <string.h>

static const float PITCH_LIMIT = 1.55f; /* just short of straight up or down, where yaw is undefined */
static const float MIN_DISTANCE = 0.05f, MAX_DISTANCE = 200.0f;

static void sub3(const float a[3], const float b[3], float out[3])
{
	for (int k = 0; k < 3; k++)
		out[k] = a[k] - b[k];
}

static float dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const float a[3], const float b[3], float out[3])
{
	float r[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
	memcpy(out, r, sizeof r);
}

static void normalize3(float v[3])
{
	float l = sqrtf(dot3(v, v));
	if (l > 0.0f)
		for (int k = 0; k < 3; k++)
			v[k] /= l;
}

/* Angles and distance that put the eye at `eye` looking at c->target. */
static void look_from(cam_orbit *c, const float eye[3])
{
	float d[3];
	sub3(eye, c->target, d);
	float dist = sqrtf(dot3(d, d));
	if (!(dist > MIN_DISTANCE)) {
		dist = MIN_DISTANCE;
		d[0] = 0.0f, d[1] = 0.0f, d[2] = dist;
	}
	c->distance = dist;
	float s = d[1] / dist;
	c->pitch = asinf(s < -1.0f ? -1.0f : s > 1.0f ? 1.0f : s);
	if (c->pitch > PITCH_LIMIT)
		c->pitch = PITCH_LIMIT;
	if (c->pitch < -PITCH_LIMIT)
		c->pitch = -PITCH_LIMIT;
	c->yaw = atan2f(d[0], d[2]);
}

void cam_init(cam_orbit *c, const float eye[3], const float target[3], float fov_degrees)
{
	memset(c, 0, sizeof *c);
	memcpy(c->home_eye, eye, sizeof c->home_eye);
	memcpy(c->home_target, target, sizeof c->home_target);
	c->fov_degrees = fov_degrees > 1.0f && fov_degrees < 170.0f ? fov_degrees : 45.0f;
	cam_reset(c);
}

void cam_reset(cam_orbit *c)
{
	memcpy(c->target, c->home_target, sizeof c->target);
	look_from(c, c->home_eye);
}

void cam_eye(const cam_orbit *c, float eye[3])
{
	float cp = cosf(c->pitch);
	eye[0] = c->target[0] + c->distance * cp * sinf(c->yaw);
	eye[1] = c->target[1] + c->distance * sinf(c->pitch);
	eye[2] = c->target[2] + c->distance * cp * cosf(c->yaw);
}

/* The camera's unit forward, right and up vectors. */
static void basis(const cam_orbit *c, float forward[3], float right[3], float up[3])
{
	float eye[3];
	cam_eye(c, eye);
	sub3(c->target, eye, forward);
	normalize3(forward);
	const float world_up[3] = {0.0f, 1.0f, 0.0f};
	cross3(forward, world_up, right);
	normalize3(right);
	cross3(right, forward, up);
}

void cam_rotate(cam_orbit *c, float dx, float dy)
{
	const float radians_per_pixel = 0.006f;
	c->yaw -= dx * radians_per_pixel;
	c->pitch += dy * radians_per_pixel;
	if (c->pitch > PITCH_LIMIT)
		c->pitch = PITCH_LIMIT;
	if (c->pitch < -PITCH_LIMIT)
		c->pitch = -PITCH_LIMIT;
}

void cam_pan(cam_orbit *c, float dx, float dy, int height)
{
	/* one pixel moves the target by the size of a pixel at the target's depth, so the
	 * point under the cursor stays under it */
	float metres_per_pixel =
	    2.0f * c->distance * tanf(0.5f * c->fov_degrees * 3.14159265f / 180.0f) / (float)(height > 0 ? height : 1);
	float f[3], r[3], u[3];
	basis(c, f, r, u);
	for (int k = 0; k < 3; k++)
		c->target[k] += (-dx * r[k] + dy * u[k]) * metres_per_pixel;
}

void cam_zoom(cam_orbit *c, float wheel_steps)
{
	c->distance *= powf(0.88f, wheel_steps);
	if (c->distance < MIN_DISTANCE)
		c->distance = MIN_DISTANCE;
	if (c->distance > MAX_DISTANCE)
		c->distance = MAX_DISTANCE;
}

void cam_seek(cam_orbit *c, const float point[3])
{
	float eye[3];
	cam_eye(c, eye);
	memcpy(c->target, point, sizeof c->target);
	look_from(c, eye);
}

void cam_ray(const cam_orbit *c, float x, float y, int width, int height, float origin[3], float direction[3])
{
	float f[3], r[3], u[3];
	basis(c, f, r, u);
	cam_eye(c, origin);
	float w = (float)(width > 0 ? width : 1), h = (float)(height > 0 ? height : 1);
	float t = tanf(0.5f * c->fov_degrees * 3.14159265f / 180.0f);
	float sx = (2.0f * x / w - 1.0f) * t * (w / h);
	float sy = (1.0f - 2.0f * y / h) * t;
	for (int k = 0; k < 3; k++)
		direction[k] = f[k] + sx * r[k] + sy * u[k];
	normalize3(direction);
}

int cam_pick_vertex(const float origin[3], const float direction[3], const float (*positions)[4], int count,
                    float radius, float *out_t)
{
	int best = -1;
	float best_t = INFINITY, r2 = radius * radius;
	for (int i = 0; i < count; i++) {
		float d[3];
		sub3(positions[i], origin, d);
		float t = dot3(d, direction);
		if (t <= 0.0f || t >= best_t)
			continue;
		/* |d x dir|^2, not |d|^2 - t^2, which cancels for far vertices */
		float m[3];
		cross3(d, direction, m);
		if (dot3(m, m) <= r2)
			best = i, best_t = t;
	}
	if (out_t)
		*out_t = best_t;
	return best;
}

int cam_pick_surface(const float origin[3], const float direction[3], const float (*positions)[4], int first_vertex,
                     const int *triangles, int triangle_count, float *out_t)
{
	int best = -1;
	float best_t = INFINITY;
	for (int i = 0; i < triangle_count; i++) {
		const int *tri = triangles + 3 * i;
		const float *a = positions[first_vertex + tri[0]], *b = positions[first_vertex + tri[1]],
		            *c = positions[first_vertex + tri[2]];
		/* Moller-Trumbore; both faces count, the cloth has no outside */
		float e1[3], e2[3], p[3], q[3], s[3];
		sub3(b, a, e1);
		sub3(c, a, e2);
		cross3(direction, e2, p);
		float det = dot3(e1, p);
		if (fabsf(det) < 1e-12f)
			continue;
		float inv = 1.0f / det;
		sub3(origin, a, s);
		float u = dot3(s, p) * inv;
		if (u < 0.0f || u > 1.0f)
			continue;
		cross3(s, e1, q);
		float v = dot3(direction, q) * inv;
		if (v < 0.0f || u + v > 1.0f)
			continue;
		float t = dot3(e2, q) * inv;
		if (t <= 0.0f || t >= best_t)
			continue;
		best_t = t;
		float hit[3], best_d2 = INFINITY;
		int corner = 0;
		for (int k = 0; k < 3; k++)
			hit[k] = origin[k] + t * direction[k];
		for (int k = 0; k < 3; k++) {
			float d[3];
			sub3(positions[first_vertex + tri[k]], hit, d);
			if (dot3(d, d) < best_d2)
				best_d2 = dot3(d, d), corner = k;
		}
		best = first_vertex + tri[corner];
	}
	if (out_t)
		*out_t = best_t;
	return best;
}
