/* The grabbing pointer (app/stylus.c) against hand-computed cases: picking (sphere, ray,
 * grab radius), the surface that stops the drawn pointer, grab and release on the
 * button's edges, the displacement gain and the jump limit.  The expected values are
 * worked out in the comments. */
#include "stylus.h"

#include "test.h"

#define TOL 1e-6

static sty_config config(void)
{
	sty_config c = sty_config_default();
	c.sphere_radius = 0.03f;
	c.vertex_radius = 0.01f;
	c.grab_radius = 0.02f;
	c.gain = 1.0f;
	c.jump_limit = 0.05f;
	c.surface_margin = 0.002f;
	return c;
}

static trk_pointer pointer_at(float x, float y, float z)
{
	trk_pointer p;
	memset(&p, 0, sizeof p);
	p.position[0] = x, p.position[1] = y, p.position[2] = z;
	p.orientation[3] = 1.0f;
	p.direction[0] = 1.0f; /* along +x */
	p.valid = true;
	return p;
}

static void check_vec3(const float got[3], double x, double y, double z, double tol)
{
	CHECK_NEAR(got[0], x, tol);
	CHECK_NEAR(got[1], y, tol);
	CHECK_NEAR(got[2], z, tol);
}

static void test_pick(void)
{
	sty_config c = config();
	float tip[3] = {0, 0, 0}, dir[3] = {1, 0, 0};
	/* reach of the sphere test: 0.03 + 0.01 = 0.04.
	 * A (0.035, 0.005, 0): |A| = 0.03536 in reach; off the ray by 0.005, enters it at
	 *   t = 0.035 - sqrt(0.01^2 - 0.005^2) = 0.02634.
	 * B (0.02, 0, 0.009): |B| = 0.02193; off by 0.009: t = 0.02 - sqrt(1e-4 - 8.1e-5) = 0.01564.
	 * C (0, 0.015, 0): |C| = 0.015, within the grab radius; off the ray by 0.015: a miss.
	 * D (0.1, 0, 0): on the ray but out of the sphere test's reach. */
	float v[4][4] = {{0.035f, 0.005f, 0, 1}, {0.02f, 0, 0.009f, 1}, {0, 0.015f, 0, 1}, {0.1f, 0, 0, 1}};
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, 4) == 1);
	v[1][3] = 0.0f; /* B pinned: A is next along the ray */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, 4) == 0);
	v[0][3] = 0.0f; /* the ray meets no candidate: C, the nearest within 0.02 */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, 4) == 2);
	v[2][1] = 0.025f; /* C beyond the grab radius; D is on the ray but too far */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, 4) == -1);
	c.sphere_radius = 0.1f; /* now D is a candidate: on the ray, t = 0.1 - 0.01 = 0.09 */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, 4) == 3);
	/* behind the tip: the ray misses; within the grab radius it is still picked */
	float back[1][4] = {{-0.015f, 0, 0, 1}};
	c = config();
	c.grab_radius = 0.0f;
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])back, 1) == -1);
	c.grab_radius = 0.02f;
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])back, 1) == 0);
	/* the tip inside a vertex's sphere: a hit at t = 0 */
	float inside[2][4] = {{0.03f, 0, 0, 1}, {0.005f, 0.005f, 0, 1}};
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])inside, 2) == 1);
}

/* One triangle in the plane y = 0 around the origin. */
static const float tri_positions[3][4] = {{-1, 0, -1, 1}, {1, 0, -1, 1}, {0, 0, 1, 1}};
static const int tri_indices[3] = {0, 1, 2};

static void test_segment_hit(void)
{
	sty_mesh mesh = {.positions = tri_positions, .triangles = tri_indices, .triangle_count = 1};
	sty_sphere sphere = {.center = {5, 0, 0}, .radius = 0.5f};
	sty_scene scene = {.meshes = &mesh, .mesh_count = 1, .spheres = &sphere, .sphere_count = 1};
	float s = -1.0f;
	/* (0, 1, 0) to (0, -1, 0) crosses y = 0 half way */
	CHECK(sty_segment_hit(&scene, (float[3]){0, 1, 0}, (float[3]){0, -1, 0}, &s));
	CHECK_NEAR(s, 0.5, TOL);
	/* from below, too: either side stops it */
	CHECK(sty_segment_hit(&scene, (float[3]){0, -1, 0}, (float[3]){0, 3, 0}, &s));
	CHECK_NEAR(s, 0.25, TOL);
	/* short of the plane, or beside the triangle */
	CHECK(!sty_segment_hit(&scene, (float[3]){0, 1, 0}, (float[3]){0, 0.5f, 0}, &s));
	CHECK(!sty_segment_hit(&scene, (float[3]){2, 1, 0}, (float[3]){2, -1, 0}, &s));
	/* the sphere at x = 5, radius 0.5: from y = 2 to y = -2 it is entered at y = 0.5,
	 * 1.5 of the 4 m: s = 0.375 */
	CHECK(sty_segment_hit(&scene, (float[3]){5, 2, 0}, (float[3]){5, -2, 0}, &s));
	CHECK_NEAR(s, 0.375, TOL);
	/* starting inside the sphere: it may leave */
	CHECK(!sty_segment_hit(&scene, (float[3]){5, 0, 0}, (float[3]){5, 2, 0}, &s));
	/* starting on the triangle: leaving it is not a crossing */
	CHECK(!sty_segment_hit(&scene, (float[3]){0, 0, 0}, (float[3]){0, -1, 0}, &s));
}

static void test_surface_stops_pointer(void)
{
	sty_config c = config();
	sty_stylus st;
	sty_init(&st, &c);
	sty_mesh mesh = {.positions = tri_positions, .triangles = tri_indices, .triangle_count = 1};
	sty_scene scene = {.meshes = &mesh, .mesh_count = 1};
	sty_output out;
	trk_pointer p = pointer_at(0, 1, 0);
	sty_update(&st, &p, &scene, &out);
	check_vec3(out.drawn, 0, 1, 0, TOL);
	CHECK(!out.blocked);
	/* to (0, -1, 0): the plane at s = 0.5 of 2 m; 2 mm short of it is s = 0.499: y = 0.002 */
	p = pointer_at(0, -1, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(out.blocked);
	check_vec3(out.drawn, 0, 0.002, 0, TOL);
	/* the device goes on down; the drawn pointer stays */
	p = pointer_at(0, -2, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(out.blocked);
	check_vec3(out.drawn, 0, 0.002, 0, TOL);
	/* back above the surface: it follows again */
	p = pointer_at(0.1f, 0.5f, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.blocked);
	check_vec3(out.drawn, 0.1, 0.5, 0, TOL);
	/* beside the triangle it passes */
	p = pointer_at(2, -1, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.blocked);
	check_vec3(out.drawn, 2, -1, 0, TOL);
}

static void test_grab_gain_jump_release(void)
{
	sty_config c = config();
	c.gain = 0.5f; /* seed 002's */
	sty_stylus st;
	sty_init(&st, &c);
	float v[1][4] = {{0, 0, 0, 1}};
	sty_scene scene = {.positions = (const float(*)[4])v, .vertex_count = 1};
	sty_output out;
	/* 5 mm above the vertex, pointing along +x: the ray starts inside its sphere */
	trk_pointer p = pointer_at(0, 0.005f, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(out.hover == 0 && out.grabbed == -1 && !out.grab);
	CHECK(sty_near_object(&out));
	p.pressed = p.pressed_edge = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.grab && out.grabbed == 0 && !out.release);
	check_vec3(out.target, 0, 0, 0, 0.0);
	check_vec3(out.drawn, 0, 0, 0, 0.0);
	/* +2 cm at 1 m/s: the target moves half of it, at half the speed */
	p = pointer_at(0.02f, 0.005f, 0);
	p.pressed = true;
	p.velocity[0] = 1.0f;
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.grab && out.grabbed == 0 && !out.jump_ignored);
	check_vec3(out.target, 0.01, 0, 0, TOL);
	check_vec3(out.target_velocity, 0.5, 0, 0, TOL);
	check_vec3(out.drawn, 0.01, 0, 0, TOL);
	/* a 10 cm jump (over the 5 cm limit) is dropped: the target stays, at rest */
	p = pointer_at(0.12f, 0.005f, 0);
	p.pressed = true;
	p.velocity[0] = 10.0f;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.jump_ignored);
	CHECK(st.ignored_jumps == 1);
	check_vec3(out.target, 0.01, 0, 0, TOL);
	check_vec3(out.target_velocity, 0, 0, 0, 0.0);
	/* the next 2 cm counts from where the jump landed: 0.01 + 0.5 * 0.02 = 0.02 */
	p = pointer_at(0.14f, 0.005f, 0);
	p.pressed = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.jump_ignored);
	check_vec3(out.target, 0.02, 0, 0, TOL);
	/* a frozen pointer holds the target even if its pose moved */
	p = pointer_at(0.16f, 0.005f, 0);
	p.pressed = true;
	p.frozen = true;
	p.velocity[1] = 3.0f;
	sty_update(&st, &p, &scene, &out);
	check_vec3(out.target, 0.02, 0, 0, TOL);
	check_vec3(out.target_velocity, 0, 0, 0, 0.0);
	CHECK(out.grabbed == 0);
	/* release */
	p = pointer_at(0.16f, 0.005f, 0);
	p.released_edge = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.release && out.released == 0 && out.grabbed == -1 && !out.grab);
}

static void test_no_grab(void)
{
	sty_config c = config();
	sty_stylus st;
	sty_init(&st, &c);
	float v[1][4] = {{0, 0, 0, 1}};
	sty_scene scene = {.positions = (const float(*)[4])v, .vertex_count = 1};
	sty_output out;
	/* a click within one update */
	trk_pointer p = pointer_at(0, 0.005f, 0);
	p.pressed_edge = p.released_edge = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.hover == 0 && !out.grab && out.grabbed == -1);
	/* a press while the clutch holds the pointer */
	p = pointer_at(0, 0.005f, 0);
	p.pressed = p.pressed_edge = p.clutched = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.grab);
	/* a press away from every vertex */
	p = pointer_at(0.3f, 0.005f, 0);
	p.released_edge = true;
	sty_update(&st, &p, &scene, &out);
	p = pointer_at(0.3f, 0.005f, 0);
	p.pressed = p.pressed_edge = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.hover == -1 && !out.grab && !sty_near_object(&out));
	/* no pose yet: nothing */
	sty_init(&st, &c);
	p = pointer_at(0, 0.005f, 0);
	p.valid = false;
	p.pressed = p.pressed_edge = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.hover == -1 && !out.grab);
	/* the gain of 1 keeps the vertex under the pointer */
	sty_init(&st, &c);
	p = pointer_at(0, 0.005f, 0);
	p.pressed = p.pressed_edge = true;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.grab);
	p = pointer_at(0.01f, 0.045f, -0.02f);
	p.pressed = true;
	sty_update(&st, &p, &scene, &out);
	check_vec3(out.target, 0.01, 0.04, -0.02, TOL);
	/* a release and a press in one update: let go, and grab what is picked again */
	p.released_edge = p.pressed_edge = true;
	v[0][0] = 0.01f, v[0][1] = 0.04f, v[0][2] = -0.02f;
	sty_update(&st, &p, &scene, &out);
	CHECK(out.release && out.released == 0);
	CHECK(out.grab && out.grabbed == 0);
	sty_drop(&st);
	CHECK(st.grabbed == -1);
}

int main(void)
{
	test_pick();
	test_segment_hit();
	test_surface_stops_pointer();
	test_grab_gain_jump_release();
	test_no_grab();
	if (test_failures_) {
		fprintf(stderr, "%d checks failed\n", test_failures_);
		return 1;
	}
	printf("test_stylus: all passed\n");
	return 0;
}
