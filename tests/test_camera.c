/* The orbit camera and cursor rays against cglm's own view and projection matrices: a
 * ray through the pixel where cglm projects a point passes through that point. */
#include "test.h"

#include "camera.h"

#include <cglm/cglm.h>
#include <math.h>

static void project(const cam_orbit *c, const float p[3], int w, int h, float *px, float *py)
{
	float eye[3];
	cam_eye(c, eye);
	mat4 view, proj, vp;
	vec3 up = {0.0f, 1.0f, 0.0f};
	glm_lookat(eye, (float *)c->target, up, view);
	glm_perspective(glm_rad(c->fov_degrees), (float)w / (float)h, 0.01f, 100.0f, proj);
	glm_mat4_mul(proj, view, vp);
	vec4 q = {p[0], p[1], p[2], 1.0f}, r;
	glm_mat4_mulv(vp, q, r);
	*px = (r[0] / r[3] * 0.5f + 0.5f) * (float)w;
	*py = (0.5f - r[1] / r[3] * 0.5f) * (float)h;
}

/* Distance from p to the ray, as |v x d| (|v|^2 - t^2 would cancel catastrophically). */
static float miss(const float o[3], const float d[3], const float p[3])
{
	float v[3] = {p[0] - o[0], p[1] - o[1], p[2] - o[2]};
	float c[3] = {v[1] * d[2] - v[2] * d[1], v[2] * d[0] - v[0] * d[2], v[0] * d[1] - v[1] * d[0]};
	return sqrtf(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
}

static void test_init_round_trip(void)
{
	cam_orbit c;
	float eye[3] = {1.0f, 2.0f, 3.0f}, target[3] = {0.5f, 0.25f, -0.5f}, e[3];
	cam_init(&c, eye, target, 50.0f);
	cam_eye(&c, e);
	for (int k = 0; k < 3; k++)
		CHECK_NEAR(e[k], eye[k], 1e-5);
	cam_rotate(&c, 120.0f, -40.0f);
	cam_eye(&c, e);
	float d[3] = {e[0] - target[0], e[1] - target[1], e[2] - target[2]};
	CHECK_NEAR(sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]), c.distance, 1e-5);
	cam_reset(&c);
	cam_eye(&c, e);
	for (int k = 0; k < 3; k++)
		CHECK_NEAR(e[k], eye[k], 1e-5);
}

/* Rays through the pixels cglm projects points to pass through the points. */
static void test_ray_matches_projection(void)
{
	cam_orbit c;
	float eye[3] = {0.3f, 1.4f, 2.5f}, target[3] = {0.0f, 0.8f, 0.0f};
	cam_init(&c, eye, target, 45.0f);
	const float points[3][3] = {{0.0f, 0.8f, 0.0f}, {0.4f, 1.1f, -0.3f}, {-0.6f, 0.2f, 0.5f}};
	for (int i = 0; i < 3; i++) {
		float px, py, o[3], d[3];
		project(&c, points[i], 640, 480, &px, &py);
		cam_ray(&c, px, py, 640, 480, o, d);
		CHECK_MSG(miss(o, d, points[i]) < 1e-4f, "point %d missed by %g m", i, (double)miss(o, d, points[i]));
	}
}

/* Panning by n pixels moves the target by n pixels' worth at its depth: the target
 * projects n pixels from the centre afterwards. */
static void test_pan_follows_cursor(void)
{
	cam_orbit c;
	float eye[3] = {0.0f, 1.0f, 3.0f}, target[3] = {0.0f, 1.0f, 0.0f};
	cam_init(&c, eye, target, 45.0f);
	float old_target[3] = {c.target[0], c.target[1], c.target[2]};
	cam_pan(&c, 50.0f, 0.0f, 480);
	float px, py;
	project(&c, old_target, 640, 480, &px, &py);
	CHECK_NEAR(px, 320.0f + 50.0f, 0.05);
	CHECK_NEAR(py, 240.0f, 0.05);
}

static void test_seek_keeps_eye(void)
{
	cam_orbit c;
	float eye[3] = {1.0f, 1.0f, 2.0f}, target[3] = {0.0f, 0.5f, 0.0f}, point[3] = {0.3f, 0.2f, -0.1f}, e[3];
	cam_init(&c, eye, target, 45.0f);
	cam_seek(&c, point);
	cam_eye(&c, e);
	for (int k = 0; k < 3; k++) {
		CHECK_NEAR(e[k], eye[k], 1e-5);
		CHECK_NEAR(c.target[k], point[k], 0.0);
	}
}

static void test_pick_nearest_along_ray(void)
{
	const float pts[4][4] = {{0.0f, 0.0f, -2.0f, 1.0f}, {0.0f, 0.004f, -1.0f, 1.0f}, {0.0f, 0.0f, 1.0f, 1.0f},
	                         {0.05f, 0.0f, -0.5f, 1.0f}};
	float o[3] = {0.0f, 0.0f, 0.0f}, d[3] = {0.0f, 0.0f, -1.0f}, t;
	/* vertex 2 is behind the eye, 3 misses by 5 cm, 1 is 4 mm off the ray and nearer than 0 */
	CHECK(cam_pick_vertex(o, d, pts, 4, 0.01f, &t) == 1);
	CHECK_NEAR(t, 1.0, 1e-6);
	CHECK(cam_pick_vertex(o, d, pts, 4, 0.003f, &t) == 0);
	float up[3] = {0.0f, 1.0f, 0.0f};
	CHECK(cam_pick_vertex(o, up, pts, 4, 0.01f, &t) == -1);
}

/* Two unit squares of two triangles each, facing the eye at z = -1 and z = -3: the ray
 * meets the nearer one between its vertices, and the vertex nearest the hit comes back. */
static void test_pick_surface_between_vertices(void)
{
	const float pts[8][4] = {
	    {0.0f, 0.0f, -3.0f, 1.0f}, {1.0f, 0.0f, -3.0f, 1.0f}, {1.0f, 1.0f, -3.0f, 1.0f}, {0.0f, 1.0f, -3.0f, 1.0f},
	    {0.0f, 0.0f, -1.0f, 1.0f}, {1.0f, 0.0f, -1.0f, 1.0f}, {1.0f, 1.0f, -1.0f, 1.0f}, {0.0f, 1.0f, -1.0f, 1.0f},
	};
	const int tris[] = {0, 1, 2, 0, 2, 3};
	float o[3] = {0.7f, 0.4f, 0.0f}, d[3] = {0.0f, 0.0f, -1.0f}, t;
	/* hit (0.7, 0.4): nearest corner is (1, 0), local 1, of the square from vertex 4 */
	CHECK(cam_pick_surface(o, d, pts, 4, tris, 2, &t) == 5);
	CHECK_NEAR(t, 1.0, 1e-6);
	CHECK(cam_pick_surface(o, d, pts, 0, tris, 2, &t) == 1);
	CHECK_NEAR(t, 3.0, 1e-6);
	/* (0.2, 0.9) lies in the second triangle, nearest its corner (0, 1), local 3 */
	float o2[3] = {0.2f, 0.9f, 0.0f};
	CHECK(cam_pick_surface(o2, d, pts, 4, tris, 2, &t) == 7);
	/* from behind the squares, pointing away; and beside them */
	float back[3] = {0.0f, 0.0f, 1.0f}, o3[3] = {0.1f, 0.2f, -4.0f};
	CHECK(cam_pick_surface(o, back, pts, 4, tris, 2, &t) == -1);
	CHECK(cam_pick_surface(o3, back, pts, 4, tris, 2, &t) == 4);
	CHECK_NEAR(t, 3.0, 1e-6);
	float o4[3] = {1.5f, 0.5f, 0.0f};
	CHECK(cam_pick_surface(o4, d, pts, 4, tris, 2, &t) == -1);
	/* the vertex pick misses this point between vertices: the surface pick is the fix */
	CHECK(cam_pick_vertex(o, d, pts, 8, 0.01f, &t) == -1);
}

static const test_case tests[] = {
    TEST(test_init_round_trip),  TEST(test_ray_matches_projection), TEST(test_pan_follows_cursor),
    TEST(test_seek_keeps_eye),   TEST(test_pick_nearest_along_ray), TEST(test_pick_surface_between_vertices),
};

TEST_MAIN(tests)
