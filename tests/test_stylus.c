/* The grabbing pointer (app/stylus.c) against hand-computed cases: picking (sphere, ray,
 * grab radius), the surfaces that stop the drawn pointer (cloth triangles and every
 * obstacle shape at its pose), grab and release on the
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
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, NULL, 4) == 1);
	/* B driven by the scene (pinned or scripted later) while w still shows it free, as
	 * before the first step: A is next along the ray */
	const uint8_t driven[4] = {0, 1, 0, 0};
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, driven, 4) == 0);
	v[1][3] = 0.0f; /* B pinned: A is next along the ray */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, NULL, 4) == 0);
	v[0][3] = 0.0f; /* the ray meets no candidate: C, the nearest within 0.02 */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, NULL, 4) == 2);
	v[2][1] = 0.025f; /* C beyond the grab radius; D is on the ray but too far */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, NULL, 4) == -1);
	c.sphere_radius = 0.1f; /* now D is a candidate: on the ray, t = 0.1 - 0.01 = 0.09 */
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])v, NULL, 4) == 3);
	/* behind the tip: the ray misses; within the grab radius it is still picked */
	float back[1][4] = {{-0.015f, 0, 0, 1}};
	c = config();
	c.grab_radius = 0.0f;
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])back, NULL, 1) == -1);
	c.grab_radius = 0.02f;
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])back, NULL, 1) == 0);
	/* the tip inside a vertex's sphere: a hit at t = 0 */
	float inside[2][4] = {{0.03f, 0, 0, 1}, {0.005f, 0.005f, 0, 1}};
	CHECK(sty_pick(&c, tip, dir, (const float(*)[4])inside, NULL, 2) == 1);
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

/* ---- obstacles: every shape, at its pose -------------------------------------------------- */

#define STOP_TOL 1e-5 /* m: the stop points are floats */

/* The drawn pointer after it was drawn at a and the device moved on to b. */
static bool move_drawn(const sty_scene *scene, const float a[3], const float b[3], float drawn[3])
{
	sty_config c = config();
	sty_stylus st;
	sty_init(&st, &c);
	sty_output out;
	trk_pointer p = pointer_at(a[0], a[1], a[2]);
	sty_update(&st, &p, scene, &out);
	p = pointer_at(b[0], b[1], b[2]);
	sty_update(&st, &p, scene, &out);
	memcpy(drawn, out.drawn, sizeof out.drawn);
	return out.blocked;
}

static sty_scene scene_of(const sty_obstacle *obstacle)
{
	return (sty_scene){.obstacles = obstacle, .obstacle_count = 1};
}

#define EXPECT_STOP(ob, ax, ay, az, bx, by, bz, x, y, z)                                             \
	do {                                                                                         \
		sty_scene sc_ = scene_of(ob);                                                            \
		float d_[3];                                                                             \
		CHECK(move_drawn(&sc_, (float[3]){ax, ay, az}, (float[3]){bx, by, bz}, d_));             \
		check_vec3(d_, x, y, z, STOP_TOL);                                                       \
	} while (0)

#define EXPECT_FREE(ob, ax, ay, az, bx, by, bz)                                                      \
	do {                                                                                         \
		sty_scene sc_ = scene_of(ob);                                                            \
		float d_[3], s_;                                                                         \
		CHECK(!move_drawn(&sc_, (float[3]){ax, ay, az}, (float[3]){bx, by, bz}, d_));            \
		check_vec3(d_, bx, by, bz, 0.0);                                                         \
		CHECK(!sty_obstacle_segment_hit(ob, (float[3]){ax, ay, az}, (float[3]){bx, by, bz}, &s_)); \
	} while (0)

/* sin and cos of 22.5 degrees: the half angle of a 45 degree turn */
#define S225 0.38268343236508977f
#define C225 0.92387953251128674f
#define R2 0.70710678118654752f /* sin and cos of 45 degrees */

static void test_obstacle_plane(void)
{
	/* the plane y = 0.5 (orientation all zero: the identity), solid below */
	sty_obstacle ob = {.shape = STY_SHAPE_PLANE, .position = {0, 0.5f, 0}};
	float s;
	/* from y = 1.5 to -0.5: crosses y = 0.5 half way; stops at y = 0.5 + 0.002 */
	CHECK(sty_obstacle_segment_hit(&ob, (float[3]){0.1f, 1.5f, 0.2f}, (float[3]){0.1f, -0.5f, 0.2f}, &s));
	CHECK_NEAR(s, 0.5, TOL);
	EXPECT_STOP(&ob, 0.1f, 1.5f, 0.2f, 0.1f, -0.5f, 0.2f, 0.1, 0.502, 0.2);
	/* short of it, and along it (on the surface: sliding is not entering) */
	EXPECT_FREE(&ob, 0, 1.5f, 0, 3, 0.6f, 0);
	EXPECT_FREE(&ob, 0, 0.5f, 0, 1, 0.5f, -1);
	/* from under it: out, and about under it, freely */
	EXPECT_FREE(&ob, 0, 0, 0, 0, 2, 0);
	EXPECT_FREE(&ob, 0, 0, 0, 1, 0.25f, 0);
	/* turned 90 degrees about z, its normal (local +y) is world -x: through (1, 0, 0),
	 * the solid is x > 1.  (0, 0, 0) to (2, 0, 0) stops at x = 1 - 0.002. */
	sty_obstacle turned = {.shape = STY_SHAPE_PLANE, .position = {1, 0, 0}, .orientation = {0, 0, R2, R2}};
	EXPECT_STOP(&turned, 0, 0, 0, 2, 0, 0, 0.998, 0, 0);
	EXPECT_FREE(&turned, 1.5f, 0, 0, 3, 0, 0);
	/* on the surface going in: stopped where it is (not trapped: it may go back) */
	EXPECT_STOP(&turned, 1, 0, 0, 1.5f, 0, 0, 1, 0, 0);
	EXPECT_FREE(&turned, 1, 0, 0, 0.5f, 0, 0);
}

static void test_obstacle_box(void)
{
	sty_obstacle ob = {.shape = STY_SHAPE_BOX, .orientation = {0, 0, 0, 1}, .half_extents = {0.1f, 0.2f, 0.3f}};
	float s;
	/* along -x into the face x = 0.1: s = 0.4 / 0.5 = 0.8, stop at x = 0.102 */
	CHECK(sty_obstacle_segment_hit(&ob, (float[3]){0.5f, 0, 0}, (float[3]){0, 0, 0}, &s));
	CHECK_NEAR(s, 0.8, TOL);
	EXPECT_STOP(&ob, 0.5f, 0, 0, 0, 0, 0, 0.102, 0, 0);
	/* down onto the top y = 0.2 off centre: stop at y = 0.202 */
	EXPECT_STOP(&ob, 0.05f, 1, -0.25f, 0.05f, 0, -0.25f, 0.05, 0.202, -0.25);
	/* over it (y = 0.25 > 0.2): a miss; along its top face: grazing */
	EXPECT_FREE(&ob, 0.5f, 0.25f, 0, -0.5f, 0.25f, 0);
	EXPECT_FREE(&ob, 0.5f, 0.2f, 0, -0.5f, 0.2f, 0);
	/* through its edge (0.25, 0.5) only: x = 0.75 - s, y = s meet it at s = 0.5, inside
	 * neither before (y < 0.5 but x > 0.25) nor after */
	sty_obstacle edge = {.shape = STY_SHAPE_BOX, .half_extents = {0.25f, 0.5f, 0.25f}};
	EXPECT_FREE(&edge, 0.75f, 0, 0, -0.25f, 1, 0);

	/* 45 degrees about y, at (1, 0, 0), cube of half side 0.1: the local corner
	 * (0.1, y, 0.1) turns to world offset (0.1 (cos + sin), y, 0.1 (cos - sin)) =
	 * (0.1 sqrt 2, y, 0): a vertical edge facing +x.  Head-on at that edge from x = 1.5:
	 * stop at 1 + 0.1 sqrt 2 + 0.002 = 1.14342136 */
	sty_obstacle rot = {.shape = STY_SHAPE_BOX,
	                    .position = {1, 0, 0},
	                    .orientation = {0, S225, 0, C225},
	                    .half_extents = {0.1f, 0.1f, 0.1f}};
	EXPECT_STOP(&rot, 1.5f, 0.05f, 0, 1, 0.05f, 0, 1.1434213562373094, 0.05, 0);
	/* world (1, 0, 1) / sqrt 2 is local +z: a face 0.1 from the centre; coming in along
	 * that diagonal stops at 0.102 from it: 1 + 0.102 / sqrt 2, 0, 0.102 / sqrt 2 */
	EXPECT_STOP(&rot, 1.4f, 0, 0.4f, 1, 0, 0, 1.0721248916810278, 0, 0.07212489168102784);
	/* along z at x = 1.15: beyond the edge (at most 1.1414), a miss; at x = 1.12 the
	 * turned cube's faces x' = 1.12 - 1 meet |z| <= 0.1 sqrt 2 - 0.12, and along -z from
	 * z = 0.5 it is entered at z = 0.0214214, stop at 0.0234214 */
	EXPECT_FREE(&rot, 1.15f, 0, 0.5f, 1.15f, 0, -0.5f);
	EXPECT_STOP(&rot, 1.12f, 0, 0.5f, 1.12f, 0, -0.5f, 1.12, 0, 0.0234213562373095);
	/* started inside: out freely */
	EXPECT_FREE(&rot, 1, 0, 0, 1.5f, 0, 0);
}

static void test_obstacle_capsule(void)
{
	/* axis y from 0.8 to 1.2 around (0, 1, 0), radius 0.1 */
	sty_obstacle ob = {.shape = STY_SHAPE_CAPSULE, .position = {0, 1, 0}, .radius = 0.1f, .half_height = 0.2f};
	/* the side: along -x at y = 1.1, stop at x = 0.102 */
	EXPECT_STOP(&ob, 0.5f, 1.1f, 0, 0, 1.1f, 0, 0.102, 1.1, 0);
	/* the top cap, on the axis: the sphere at y = 1.2 entered at 1.3, stop at 1.302 */
	EXPECT_STOP(&ob, 0, 1.8f, 0, 0, 1, 0, 0, 1.302, 0);
	/* the top cap off the axis by 0.05: y = 1.2 + sqrt(0.01 - 0.0025) + 0.002 */
	EXPECT_STOP(&ob, 0.05f, 1.6f, 0, 0.05f, 1, 0, 0.05, 1.2886025403784438, 0);
	/* the bottom cap from below */
	EXPECT_STOP(&ob, 0, 0, 0, 0, 1, 0, 0, 0.698, 0);
	/* a tangent to the side (x = radius, along z): grazing; beside it: a miss */
	EXPECT_FREE(&ob, 0.1f, 1, -0.5f, 0.1f, 1, 0.5f);
	EXPECT_FREE(&ob, 0.5f, 1.35f, 0, -0.5f, 1.35f, 0);
	/* from its axis out: free */
	EXPECT_FREE(&ob, 0, 1, 0, 0.5f, 1, 0);
	/* turned 90 degrees about z, the axis is world x (-0.2 to 0.2 about (0, 1, 0)): the
	 * cap along -x from x = 0.6 stops at 0.302, the side from above at y = 1.102 */
	sty_obstacle turned = ob;
	turned.orientation[2] = R2, turned.orientation[3] = R2;
	EXPECT_STOP(&turned, 0.6f, 1, 0, 0, 1, 0, 0.302, 1, 0);
	EXPECT_STOP(&turned, 0.15f, 1.5f, 0, 0.15f, 1, 0, 0.15, 1.102, 0);
}

/* A cube of half side 0.1 about its origin, counter-clockwise seen from outside: vertex
 * i is at (+-0.1, +-0.1, +-0.1) with bit 0 for +x, bit 1 for +y, bit 2 for +z. */
static const float cube_positions[8 * 3] = {-0.1f, -0.1f, -0.1f, 0.1f, -0.1f, -0.1f, -0.1f, 0.1f, -0.1f,
                                            0.1f,  0.1f,  -0.1f, -0.1f, -0.1f, 0.1f, 0.1f, -0.1f, 0.1f,
                                            -0.1f, 0.1f,  0.1f,  0.1f,  0.1f,  0.1f};
static const int cube_triangles[12 * 3] = {1, 3, 7, 1, 7, 5, 0, 4, 6, 0, 6, 2, 2, 6, 7, 2, 7, 3,
                                           0, 1, 5, 0, 5, 4, 4, 5, 7, 4, 7, 6, 0, 2, 3, 0, 3, 1};

static void test_obstacle_mesh(void)
{
	/* the fixture's triangles all face out */
	for (int t = 0; t < 12; t++) {
		const float *p[3];
		for (int k = 0; k < 3; k++)
			p[k] = cube_positions + 3 * cube_triangles[3 * t + k];
		double e1[3], e2[3], c[3];
		for (int k = 0; k < 3; k++) {
			e1[k] = p[1][k] - p[0][k];
			e2[k] = p[2][k] - p[0][k];
			c[k] = p[0][k] + p[1][k] + p[2][k];
		}
		double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
		CHECK(n[0] * c[0] + n[1] * c[1] + n[2] * c[2] > 0.0);
	}
	sty_obstacle ob = {.shape = STY_SHAPE_MESH,
	                   .position = {0, 0.5f, 0},
	                   .orientation = {0, 0, 0, 1},
	                   .vertex_count = 8,
	                   .positions = cube_positions,
	                   .triangle_count = 12,
	                   .triangles = cube_triangles};
	/* into the face z = 0.1 (world y 0.5 + 0.02): stop at z = 0.102 */
	EXPECT_STOP(&ob, 0.03f, 0.52f, 0.5f, 0.03f, 0.52f, 0, 0.03, 0.52, 0.102);
	/* down onto the top (world y 0.6): stop at 0.602 */
	EXPECT_STOP(&ob, -0.05f, 1, 0.07f, -0.05f, 0.5f, 0.07f, -0.05, 0.602, 0.07);
	/* beside it, and from inside out through the face z = 0.1 */
	EXPECT_FREE(&ob, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, -0.5f);
	EXPECT_FREE(&ob, 0, 0.5f, 0, 0, 0.5f, 0.5f);
	/* sliding along the top face (parallel to its triangles) */
	EXPECT_FREE(&ob, -0.05f, 0.6f, 0.5f, -0.05f, 0.6f, -0.5f);
	/* turned like the box: the same edge, the same stop as a box */
	sty_obstacle rot = ob;
	rot.position[0] = 1, rot.position[1] = 0;
	rot.orientation[1] = S225, rot.orientation[3] = C225;
	EXPECT_STOP(&rot, 1.5f, 0.05f, 0, 1, 0.05f, 0, 1.1434213562373094, 0.05, 0);
	/* through it from inside: out through one face, in again through none */
	EXPECT_FREE(&rot, 1, 0, 0, 1, 0, 0.5f);
}

/* The pose the snapshot holds, not the def's position, is where the obstacle is; an
 * obstacle that moves onto the pointer lets it out, and stops it once it is out. */
static void test_obstacle_pose(void)
{
	float pose[7] = {0, 0, 0, 0, 0, 0, 1};
	sty_obstacle ob = {.shape = STY_SHAPE_BOX,
	                   .pose = pose,
	                   .position = {3, 3, 3}, /* the scene's initial position: ignored */
	                   .half_extents = {0.1f, 0.1f, 0.1f}};
	sty_scene scene = scene_of(&ob);
	sty_config c = config();
	sty_stylus st;
	sty_init(&st, &c);
	sty_output out;
	trk_pointer p = pointer_at(1, 0, 0);
	sty_update(&st, &p, &scene, &out);
	/* the box at the origin: to x = 0.5 freely */
	p = pointer_at(0.5f, 0, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.blocked);
	check_vec3(out.drawn, 0.5, 0, 0, 0.0);
	/* it moves onto the pointer (x from 0.4 to 0.6): the pointer gets out, this way or that */
	pose[0] = 0.5f;
	p = pointer_at(0.55f, 0, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.blocked);
	check_vec3(out.drawn, 0.55, 0, 0, TOL);
	p = pointer_at(0.8f, 0, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.blocked);
	check_vec3(out.drawn, 0.8, 0, 0, TOL);
	/* out, it cannot go back in: stopped at x = 0.6 + 0.002 */
	p = pointer_at(0.5f, 0, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(out.blocked);
	check_vec3(out.drawn, 0.602, 0, 0, STOP_TOL);
	/* turned 45 degrees about y where it is: its edge now reaches 0.5 + 0.1 sqrt 2,
	 * beyond the drawn pointer at 0.602, which is inside and may leave along +x */
	pose[4] = S225, pose[6] = C225;
	p = pointer_at(0.7f, 0, 0);
	sty_update(&st, &p, &scene, &out);
	CHECK(!out.blocked);
	check_vec3(out.drawn, 0.7, 0, 0, TOL);
	/* a sphere at its pose: the def's centre is ignored; tangent is grazing */
	float at[7] = {5, 0, 0, 0, 0, 0, 1};
	sty_obstacle ball = {.shape = STY_SHAPE_SPHERE, .pose = at, .radius = 0.5f};
	EXPECT_STOP(&ball, 5, 2, 0, 5, -2, 0, 5, 0.502, 0);
	EXPECT_FREE(&ball, 0, 2, 0, 0, -2, 0);
	EXPECT_FREE(&ball, 4, 0.5f, 0, 6, 0.5f, 0);
}

/* The first surface of several stops it: a cloth triangle, a legacy sphere and obstacles. */
static void test_obstacles_together(void)
{
	sty_mesh mesh = {.positions = tri_positions, .triangles = tri_indices, .triangle_count = 1};
	sty_obstacle obs[2] = {{.shape = STY_SHAPE_PLANE, .position = {0, -0.5f, 0}},
	                       {.shape = STY_SHAPE_BOX, .position = {0, 0.6f, 0}, .half_extents = {0.1f, 0.1f, 0.1f}}};
	sty_scene scene = {.meshes = &mesh, .mesh_count = 1, .obstacles = obs, .obstacle_count = 2};
	float d[3];
	/* from y = 1 down: the box top at 0.7 first */
	CHECK(move_drawn(&scene, (float[3]){0, 1, 0}, (float[3]){0, -1, 0}, d));
	check_vec3(d, 0, 0.702, 0, STOP_TOL);
	/* from between box and cloth: the cloth at y = 0 */
	CHECK(move_drawn(&scene, (float[3]){0, 0.3f, 0}, (float[3]){0, -1, 0}, d));
	check_vec3(d, 0, 0.002, 0, STOP_TOL);
	/* beside the cloth: the plane at -0.5 */
	CHECK(move_drawn(&scene, (float[3]){2, 0.3f, 0}, (float[3]){2, -1, 0}, d));
	check_vec3(d, 2, -0.498, 0, STOP_TOL);
}

/* The decision chain the device thread and `tela run` run per sample: the tracker (with
 * the stylus's previous hover as near_object) and then the stylus. */
static void feed_sample(trk_tracker *tr, sty_stylus *st, sty_output *out, const sty_scene *scene, int64_t t_ns,
                        float x, float y, float z, uint32_t buttons)
{
	/* world frame: the calibration is the identity */
	dev_sample s = {.t_ns = t_ns, .sensor = 1, .position = {x, y, z}, .orientation = {0, 0, 0, 1}, .buttons = buttons};
	trk_pointer p;
	trk_tracker_update(tr, &s, 1, sty_near_object(out), t_ns, &p);
	sty_update(st, &p, scene, out);
}

/* Pressed while the tracker was unplugged, over a vertex it was not near before: the
 * first sample back, button down, grabs that vertex (the clutch stays off). */
static void test_press_across_unplug_grabs(void)
{
	static trk_tracker tr; /* 20 KB */
	trk_tracker_config tc = trk_tracker_config_default();
	tc.calibration = (trk_calibration){.rotation = {0, 0, 0, 1}, .scale = 1.0f};
	sty_config c = config();
	for (int gap = 0; gap < 2; gap++) {
		trk_tracker_init(&tr, &tc);
		sty_stylus st;
		sty_init(&st, &c);
		sty_output out = {.hover = -1, .grabbed = -1, .released = -1};
		float v[2][4] = {{0, 0, 0, 1}, {0.5f, 0, 0, 1}};
		sty_scene scene = {.positions = (const float(*)[4])v, .vertex_count = 2};
		int64_t ms = 1000000;
		/* 30 cm from vertex 0 and 20 cm from vertex 1: nothing picked */
		feed_sample(&tr, &st, &out, &scene, 10 * ms, 0.3f, 0.0f, 0.0f, 0);
		feed_sample(&tr, &st, &out, &scene, 20 * ms, 0.3f, 0.01f, 0.0f, 0);
		CHECK(out.hover == -1 && !sty_near_object(&out));
		int64_t back = 20 * ms + 16 * ms;
		if (gap == 0) {
			/* unplugged: the device thread freezes the pointer with the source's line */
			trk_pointer p;
			trk_tracker_freeze(&tr, "unplugged; waiting for it to return");
			trk_tracker_update(&tr, NULL, 0, sty_near_object(&out), 500 * ms, &p);
			CHECK(p.frozen);
			back = 2000 * ms;
		} else {
			/* or just a silence longer than the tracker's timeout */
			back = 20 * ms + tc.timeout_ns + ms;
		}
		/* back 5 mm above vertex 0 with the button already down */
		feed_sample(&tr, &st, &out, &scene, back, 0.0f, 0.005f, 0.0f, 1);
		CHECK_MSG(out.grab && out.grabbed == 0, "gap %d: the press after the gap did not grab (grab %d, grabbed %d, "
		                                        "hover %d, clutched %d)",
		          gap, out.grab, out.grabbed, out.hover, tr.clutch.engaged);
		CHECK(!tr.clutch.engaged);
		/* and pulls it: the target follows the hand */
		feed_sample(&tr, &st, &out, &scene, back + 16 * ms, 0.0f, 0.025f, 0.0f, 1);
		CHECK(out.grabbed == 0 && !tr.clutch.engaged);
		check_vec3(out.target, 0.0, 0.02, 0.0, TOL);
		feed_sample(&tr, &st, &out, &scene, back + 32 * ms, 0.0f, 0.025f, 0.0f, 0);
		CHECK(out.release && out.released == 0);
	}
}

int main(void)
{
	test_pick();
	test_segment_hit();
	test_surface_stops_pointer();
	test_grab_gain_jump_release();
	test_no_grab();
	test_obstacle_plane();
	test_obstacle_box();
	test_obstacle_capsule();
	test_obstacle_mesh();
	test_obstacle_pose();
	test_obstacles_together();
	test_press_across_unplug_grabs();
	if (test_failures_) {
		fprintf(stderr, "%d checks failed\n", test_failures_);
		return 1;
	}
	printf("test_stylus: all passed\n");
	return 0;
}
