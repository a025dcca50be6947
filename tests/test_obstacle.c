/* Rigid obstacles: definitions and validation, poses under constant velocities, and
 * signed distances with outward normals for every shape.  Expected values are worked out
 * by hand; the closed-mesh inside test is checked against the analytic box and
 * tetrahedron at many sample points, including lattice points that lie exactly in the
 * planes of faces and on the lines of edges (the cases that break naive ray parity). */
#include "sim_internal.h"

#include "test.h"

#include <cglm/quat.h>
#include <stdint.h>

/* Deterministic generator for the sampled checks (xorshift64*). */
static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static double rng_unit(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545f4914f6cdd1dull) >> 11) * 0x1p-53;
}

static void set3f(vec3 out, float x, float y, float z)
{
	out[0] = x;
	out[1] = y;
	out[2] = z;
}

/* Distance of p from o at its current pose. */
static float dist_at(const sim_obstacle *o, float x, float y, float z, vec3 n)
{
	vec3 p = {x, y, z};
	return sim_obstacle_distance(o, o->position, o->orientation, p, n);
}

#define CHECK_VEC3(v, x, y, z, tol)            \
	do {                                       \
		CHECK_NEAR((v)[0], (x), (tol));        \
		CHECK_NEAR((v)[1], (y), (tol));        \
		CHECK_NEAR((v)[2], (z), (tol));        \
	} while (0)

/* d and n of o at p against the expected values. */
#define CHECK_DIST(o, px, py, pz, d, nx, ny, nz)                  \
	do {                                                          \
		vec3 n_;                                                  \
		CHECK_NEAR(dist_at((o), (px), (py), (pz), n_), (d), 1e-6); \
		CHECK_VEC3(n_, (nx), (ny), (nz), 1e-6);                   \
	} while (0)

static void quat_axis(versor q, float angle, float x, float y, float z)
{
	vec3 axis = {x, y, z};
	glm_quatv(q, angle, axis);
}

static bool is_zeroed(const sim_obstacle *o)
{
	sim_obstacle zero;
	memset(&zero, 0, sizeof zero);
	return memcmp(o, &zero, sizeof zero) == 0;
}

/* ---- definitions ---------------------------------------------------------------------------- */

static void test_defaults(void)
{
	static const char *const names[] = {"plane", "sphere", "box", "capsule", "mesh"};
	for (int s = 0; s < SIM_SHAPE_COUNT; s++) {
		sim_obstacle_def d = sim_obstacle_def_default((sim_shape)s);
		CHECK(d.shape == (sim_shape)s);
		CHECK(strcmp(d.name, names[s]) == 0);
		CHECK_VEC3(d.orientation, 0.0f, 0.0f, 0.0f, 0.0);
		CHECK(d.orientation[3] == 1.0f);
		CHECK(d.friction == 0.3f);
		CHECK(d.thickness == 0.0f);
		CHECK_VEC3(d.velocity, 0.0f, 0.0f, 0.0f, 0.0);
		CHECK_VEC3(d.angular_velocity, 0.0f, 0.0f, 0.0f, 0.0);
		sim_obstacle o;
		bool ok = sim_obstacle_init(&o, &d);
		/* A mesh has no default triangles to collide with. */
		CHECK(ok == (s != SIM_SHAPE_MESH));
		if (ok) {
			/* a plane meets the collision pipeline as a 200 m square of two triangles */
			CHECK(sim_obstacle_has_triangles(&o) == (s == SIM_SHAPE_BOX || s == SIM_SHAPE_PLANE));
			if (s == SIM_SHAPE_PLANE)
				CHECK(o.vertex_count == 4 && o.triangle_count == 2);
			CHECK(strcmp(o.name, names[s]) == 0);
			CHECK(o.def.name == o.name);
		}
		sim_obstacle_fini(&o);
		CHECK(is_zeroed(&o));
	}
	CHECK(sim_obstacle_def_default(SIM_SHAPE_SPHERE).radius == 0.5f);
	sim_obstacle_def box = sim_obstacle_def_default(SIM_SHAPE_BOX);
	CHECK_VEC3(box.half_extents, 0.5f, 0.5f, 0.5f, 0.0);
	sim_obstacle_def cap = sim_obstacle_def_default(SIM_SHAPE_CAPSULE);
	CHECK(cap.radius == 0.1f && cap.half_height == 0.5f);
}

static void test_validation(void)
{
	sim_obstacle o;
	sim_obstacle_def d;
	/* Every rejection leaves o zeroed, whatever it held before. */
#define REJECT(def_)                                    \
	do {                                                \
		memset(&o, 0xab, sizeof o);                     \
		CHECK(!sim_obstacle_init(&o, (def_)));           \
		CHECK(is_zeroed(&o));                           \
	} while (0)

	REJECT(NULL);
	d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	d.radius = NAN;
	REJECT(&d);
	d.radius = 0.0f;
	REJECT(&d);
	d.radius = -1.0f;
	REJECT(&d);
	d.radius = INFINITY;
	REJECT(&d);

	d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	glm_vec4_zero(d.orientation);
	REJECT(&d);
	d.orientation[3] = NAN;
	REJECT(&d);
	d.orientation[3] = INFINITY;
	REJECT(&d);

	d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	d.friction = -0.1f;
	REJECT(&d);
	d.friction = NAN;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	d.thickness = -1e-3f;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	d.position[1] = NAN;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	d.velocity[0] = INFINITY;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	d.angular_velocity[2] = NAN;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	d.shape = SIM_SHAPE_COUNT;
	REJECT(&d);

	d = sim_obstacle_def_default(SIM_SHAPE_BOX);
	d.half_extents[1] = 0.0f;
	REJECT(&d);
	d.half_extents[1] = NAN;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_CAPSULE);
	d.half_height = 0.0f;
	REJECT(&d);
	d = sim_obstacle_def_default(SIM_SHAPE_CAPSULE);
	d.radius = -0.1f;
	REJECT(&d);

	float xs[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	int tri[3] = {0, 1, 2};
	d = sim_obstacle_def_default(SIM_SHAPE_MESH);
	d.vertex_count = 3;
	d.positions = xs;
	d.triangle_count = 1;
	d.triangles = tri;
	CHECK(sim_obstacle_init(&o, &d));
	sim_obstacle_fini(&o);
	tri[2] = 3; /* out of range */
	REJECT(&d);
	tri[2] = -1;
	REJECT(&d);
	tri[2] = 1; /* repeated */
	REJECT(&d);
	tri[2] = 2;
	d.triangle_count = 0;
	REJECT(&d);
	d.triangle_count = 1;
	d.positions = NULL;
	REJECT(&d);
	d.positions = xs;
	xs[4] = NAN;
	REJECT(&d);
	xs[4] = 0.0f;
	CHECK(sim_obstacle_init(&o, &d));
	sim_obstacle_fini(&o);
#undef REJECT

	/* An unnormalised quaternion is accepted and stored normalised. */
	d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	glm_quat_init(d.orientation, 0.0f, 0.0f, 0.0f, 2.0f);
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK(o.def.orientation[3] == 1.0f && o.orientation[3] == 1.0f);
	sim_obstacle_fini(&o);
	glm_quat_init(d.orientation, 3.0f, 0.0f, 4.0f, 0.0f);
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK_NEAR(o.orientation[0], 0.6, 1e-7);
	CHECK_NEAR(o.orientation[2], 0.8, 1e-7);
	sim_obstacle_fini(&o);
}

static void test_copies(void)
{
	float xs[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
	int tris[6] = {0, 1, 2, 0, 2, 3};
	char long_name[100];
	memset(long_name, 'q', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_MESH);
	d.name = long_name;
	d.vertex_count = 4;
	d.positions = xs;
	d.triangle_count = 2;
	d.triangles = tris;
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK(strlen(o.name) == SIM_NAME_MAX - 1);
	CHECK(strncmp(o.name, long_name, SIM_NAME_MAX - 1) == 0);
	CHECK(o.def.name == o.name);
	CHECK(o.def.positions == o.local_positions && o.def.positions != xs);
	CHECK(o.def.triangles == o.local_triangles && o.def.triangles != tris);
	CHECK(o.vertex_count == 4 && o.triangle_count == 2);
	/* The caller's arrays may change or go away afterwards. */
	xs[3] = 7.0f;
	tris[1] = 3;
	CHECK(o.local_positions[3] == 1.0f && o.local_triangles[1] == 1);
	CHECK(memcmp(o.local_positions + 6, xs + 6, sizeof(float) * 6) == 0);
	sim_obstacle_fini(&o);

	/* No name: the shape's.  Shapes without triangles keep no arrays. */
	sim_obstacle_def s = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	s.name = NULL;
	s.positions = xs;
	s.vertex_count = 4;
	REQUIRE(sim_obstacle_init(&o, &s));
	CHECK(strcmp(o.def.name, "sphere") == 0);
	CHECK(o.def.positions == NULL && o.def.vertex_count == 0 && o.vertex_count == 0);
	sim_obstacle_fini(&o);
}

/* ---- analytic shapes ------------------------------------------------------------------------ */

static void test_plane(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	set3f(d.position, 0.0f, 1.0f, 0.0f);
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK_DIST(&o, 3.0f, 4.0f, -2.0f, 3.0, 0.0, 1.0, 0.0);
	CHECK_DIST(&o, 0.0f, 1.0f, 0.0f, 0.0, 0.0, 1.0, 0.0);
	CHECK_DIST(&o, 5.0f, 0.5f, 5.0f, -0.5, 0.0, 1.0, 0.0);
	sim_obstacle_fini(&o);

	/* 90 degrees about x takes local +y to world +z: a wall facing +z through z = 2. */
	d = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	set3f(d.position, 0.0f, 0.0f, 2.0f);
	quat_axis(d.orientation, GLM_PI_2f, 1.0f, 0.0f, 0.0f);
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK_DIST(&o, 1.0f, 1.0f, 5.0f, 3.0, 0.0, 0.0, 1.0);
	CHECK_DIST(&o, 0.0f, 7.0f, 1.0f, -1.0, 0.0, 0.0, 1.0);
	sim_obstacle_fini(&o);
}

static void test_sphere(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	set3f(d.position, 1.0f, 2.0f, 3.0f);
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK_DIST(&o, 1.0f, 2.0f, 5.0f, 1.5, 0.0, 0.0, 1.0);
	CHECK_DIST(&o, 4.0f, 6.0f, 3.0f, 4.5, 0.6, 0.8, 0.0);
	CHECK_DIST(&o, 1.5f, 2.0f, 3.0f, 0.0, 1.0, 0.0, 0.0);
	CHECK_DIST(&o, 1.0f, 1.75f, 3.0f, -0.25, 0.0, -1.0, 0.0);
	vec3 n;
	CHECK_NEAR(dist_at(&o, 1.0f, 2.0f, 3.0f, n), -0.5, 1e-7);
	CHECK_NEAR(glm_vec3_norm(n), 1.0, 1e-6);
	/* the distance alone (the obstacle pass's early test) is the full routine's value bit
	 * for bit with the identity frame, also on the centre's own coordinate planes (signed
	 * zeros); a turned frame only rounds differently, by far less than a micrometre */
	double id[3][3], turned[3][3];
	versor q0 = GLM_QUAT_IDENTITY_INIT, q1;
	sim_obstacle_frame(q0, id);
	glm_quatv(q1, 0.7f, (vec3){0.3f, 0.9f, -0.2f});
	glm_quat_normalize(q1);
	sim_obstacle_frame(q1, turned);
	unsigned seed = 12345u;
	int same = 0, close = 0;
	for (int k = 0; k < 1000; k++) {
		vec3 p;
		for (int j = 0; j < 3; j++) {
			seed = seed * 1664525u + 1013904223u;
			p[j] = d.position[j] + (k % 4 == j ? 0.0f : (float)((seed >> 8) & 0xffff) / 16384.0f - 2.0f);
		}
		float fast = sim_obstacle_sphere_distance(&o, d.position, p);
		float full = sim_obstacle_distance_in(&o, d.position, (const double(*)[3])id, p, n);
		float rot = sim_obstacle_distance_in(&o, d.position, (const double(*)[3])turned, p, n);
		same += memcmp(&fast, &full, sizeof fast) == 0;
		close += fabsf(fast - rot) <= 1e-6f;
	}
	CHECK_MSG(same == 1000, "%d of 1000 distances differ from the full routine's", 1000 - same);
	CHECK(close == 1000);
	sim_obstacle_fini(&o);
}

static void test_box(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_BOX);
	set3f(d.half_extents, 1.0f, 2.0f, 3.0f);
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	/* Inside: minus the distance to the nearest face, that face's normal. */
	CHECK_DIST(&o, 0.875f, 0.0f, 0.0f, -0.125, 1.0, 0.0, 0.0);
	CHECK_DIST(&o, 0.0f, -1.5f, 0.5f, -0.5, 0.0, -1.0, 0.0);
	CHECK_DIST(&o, 0.25f, 0.25f, -2.75f, -0.25, 0.0, 0.0, -1.0);
	CHECK_DIST(&o, 0.0f, 0.0f, 0.0f, -1.0, 1.0, 0.0, 0.0);
	/* On a face. */
	CHECK_DIST(&o, 1.0f, 0.5f, 0.5f, 0.0, 1.0, 0.0, 0.0);
	CHECK_DIST(&o, 0.5f, 0.5f, -3.0f, 0.0, 0.0, 0.0, -1.0);
	/* Outside a face, an edge and a corner: towards the closest point. */
	CHECK_DIST(&o, 1.5f, 0.0f, 0.0f, 0.5, 1.0, 0.0, 0.0);
	CHECK_DIST(&o, 1.3f, 2.4f, 0.0f, 0.5, 0.6, 0.8, 0.0);
	CHECK_DIST(&o, -1.0f, -2.3f, -3.4f, 0.5, 0.0, -0.6, -0.8);
	const double r3 = 1.0 / sqrt(3.0);
	CHECK_DIST(&o, 2.0f, 3.0f, 4.0f, sqrt(3.0), r3, r3, r3);
	CHECK_DIST(&o, -1.5f, 2.5f, -3.5f, sqrt(0.75), -r3, r3, -r3);
	sim_obstacle_fini(&o);

	/* 90 degrees about z takes (x, y) to (-y, x); moved to (10, 0, 0). */
	set3f(d.position, 10.0f, 0.0f, 0.0f);
	quat_axis(d.orientation, GLM_PI_2f, 0.0f, 0.0f, 1.0f);
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK_DIST(&o, 10.0f, 1.5f, 0.0f, 0.5, 0.0, 1.0, 0.0);  /* local (1.5, 0, 0) */
	CHECK_DIST(&o, 7.5f, 0.0f, 0.0f, 0.5, -1.0, 0.0, 0.0);  /* local (0, 2.5, 0) */
	CHECK_DIST(&o, 11.875f, 0.0f, 0.0f, -0.125, 1.0, 0.0, 0.0); /* local (0, -1.875, 0) */
	CHECK_DIST(&o, 7.6f, 1.3f, 0.0f, 0.5, -0.8, 0.6, 0.0);  /* local (1.3, 2.4, 0): an edge */
	sim_obstacle_fini(&o);
}

static void test_capsule(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_CAPSULE);
	d.radius = 0.25f;
	d.half_height = 1.0f;
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	/* Beside the cylinder. */
	CHECK_DIST(&o, 0.75f, 0.3f, 0.0f, 0.5, 1.0, 0.0, 0.0);
	CHECK_DIST(&o, 0.0f, 0.5f, -0.125f, -0.125, 0.0, 0.0, -1.0);
	CHECK_DIST(&o, 0.25f, 0.0f, 0.0f, 0.0, 1.0, 0.0, 0.0);
	/* Near the caps. */
	CHECK_DIST(&o, 0.0f, 1.75f, 0.0f, 0.5, 0.0, 1.0, 0.0);
	CHECK_DIST(&o, 0.3f, 1.4f, 0.0f, 0.25, 0.6, 0.8, 0.0);
	CHECK_DIST(&o, 0.0f, -1.125f, 0.0f, -0.125, 0.0, -1.0, 0.0);
	CHECK_DIST(&o, 0.0f, -1.25f, 0.0f, 0.0, 0.0, -1.0, 0.0);
	/* On the axis: any radial normal, unit and perpendicular to the axis. */
	vec3 n;
	CHECK_NEAR(dist_at(&o, 0.0f, 0.3f, 0.0f, n), -0.25, 1e-7);
	CHECK_NEAR(glm_vec3_norm(n), 1.0, 1e-6);
	CHECK_NEAR(n[1], 0.0, 1e-7);
	sim_obstacle_fini(&o);

	/* 90 degrees about x takes (y, z) to (-z, y): the axis along world z, at (0, 0, 5). */
	set3f(d.position, 0.0f, 0.0f, 5.0f);
	quat_axis(d.orientation, GLM_PI_2f, 1.0f, 0.0f, 0.0f);
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK_DIST(&o, 0.0f, 0.0f, 6.75f, 0.5, 0.0, 0.0, 1.0);
	CHECK_DIST(&o, 0.75f, 0.0f, 5.3f, 0.5, 1.0, 0.0, 0.0);
	CHECK_DIST(&o, 0.0f, -0.4f, 3.7f, 0.25, 0.0, -0.8, -0.6); /* local (0, -1.3, 0.4): bottom cap */
	sim_obstacle_fini(&o);
}

/* ---- triangles ------------------------------------------------------------------------------ */

static void test_box_tessellation(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_BOX);
	set3f(d.half_extents, 0.5f, 1.0f, 1.5f);
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	REQUIRE(o.vertex_count == 8 && o.triangle_count == 12);
	CHECK(o.def.vertex_count == 8 && o.def.triangle_count == 12);
	CHECK(o.def.positions == o.local_positions && o.def.triangles == o.local_triangles);
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 3; k++)
			CHECK(fabsf(o.local_positions[3 * i + k]) == d.half_extents[k]);
	/* Every corner distinct. */
	for (int i = 0; i < 8; i++)
		for (int j = i + 1; j < 8; j++)
			CHECK(memcmp(&o.local_positions[3 * i], &o.local_positions[3 * j], sizeof(float) * 3) != 0);
	double area = 0.0;
	for (int t = 0; t < 12; t++) {
		const float *a = &o.local_positions[3 * o.local_triangles[3 * t]];
		const float *b = &o.local_positions[3 * o.local_triangles[3 * t + 1]];
		const float *c = &o.local_positions[3 * o.local_triangles[3 * t + 2]];
		vec3 e1, e2, n, centroid;
		glm_vec3_sub((float *)b, (float *)a, e1);
		glm_vec3_sub((float *)c, (float *)a, e2);
		glm_vec3_cross(e1, e2, n);
		for (int k = 0; k < 3; k++)
			centroid[k] = (a[k] + b[k] + c[k]) / 3.0f;
		/* Outward: the normal points away from the centre, along one axis. */
		CHECK_MSG(glm_vec3_dot(n, centroid) > 0.0f, "triangle %d winds inwards", t);
		int axes = (n[0] != 0.0f) + (n[1] != 0.0f) + (n[2] != 0.0f);
		CHECK(axes == 1);
		area += 0.5 * glm_vec3_norm(n);
	}
	/* The twelve triangles tile the surface once: area 8 (hx hy + hx hz + hy hz). */
	CHECK_NEAR(area, 8.0 * (0.5 * 1.0 + 0.5 * 1.5 + 1.0 * 1.5), 1e-9);
	/* Closed and consistently oriented: each directed edge once, its reverse once. */
	for (int t = 0; t < 12; t++)
		for (int k = 0; k < 3; k++) {
			int a = o.local_triangles[3 * t + k], b = o.local_triangles[3 * t + (k + 1) % 3];
			int same = 0, reverse = 0;
			for (int u = 0; u < 12; u++)
				for (int m = 0; m < 3; m++) {
					int c = o.local_triangles[3 * u + m], e = o.local_triangles[3 * u + (m + 1) % 3];
					same += c == a && e == b;
					reverse += c == b && e == a;
				}
			CHECK(same == 1 && reverse == 1);
		}

	/* World vertices: rotated like cglm rotates, then moved; w = 0 (infinite mass). */
	vec3 pos = {1.0f, -2.0f, 3.0f};
	versor q;
	quat_axis(q, 0.7f, 1.0f, 2.0f, -0.5f);
	vec4 out[8];
	sim_obstacle_world_vertices(&o, pos, q, out);
	for (int i = 0; i < 8; i++) {
		vec3 r;
		glm_quat_rotatev(q, &o.local_positions[3 * i], r);
		CHECK_VEC3(out[i], r[0] + pos[0], r[1] + pos[1], r[2] + pos[2], 2e-6);
		CHECK(out[i][3] == 0.0f);
	}
	sim_obstacle_fini(&o);
}

/* A mesh obstacle with the triangles of a box obstacle. */
static bool mesh_from_box(const sim_obstacle *box, sim_obstacle *mesh)
{
	sim_obstacle_def d = box->def;
	d.shape = SIM_SHAPE_MESH;
	d.name = "box mesh";
	d.vertex_count = box->vertex_count;
	d.positions = box->local_positions;
	d.triangle_count = box->triangle_count;
	d.triangles = box->local_triangles;
	return sim_obstacle_init(mesh, &d);
}

static void test_closed_mesh_matches_box(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_BOX);
	set3f(d.half_extents, 0.5f, 0.75f, 1.0f);
	set3f(d.position, 0.3f, -1.2f, 2.0f);
	quat_axis(d.orientation, 0.7f, 1.0f, 1.0f, 0.3f);
	sim_obstacle box, mesh;
	REQUIRE(sim_obstacle_init(&box, &d));
	REQUIRE(mesh_from_box(&box, &mesh));
	int sign_mismatch = 0, value_mismatch = 0, normal_mismatch = 0, inside = 0, compared = 0;
	for (int i = 0; i < 4000; i++) {
		vec3 p, nb, nm;
		for (int k = 0; k < 3; k++)
			p[k] = d.position[k] + (float)(4.0 * rng_unit() - 2.0);
		float db = sim_obstacle_distance(&box, box.position, box.orientation, p, nb);
		float dm = sim_obstacle_distance(&mesh, mesh.position, mesh.orientation, p, nm);
		if (fabsf(db) < 1e-6f)
			continue;
		compared++;
		inside += db < 0.0f;
		sign_mismatch += (db < 0.0f) != (dm < 0.0f);
		value_mismatch += fabsf(db - dm) > 1e-6f;
		/* Outside, the closest point is unique, so the normals agree. */
		if (db > 0.0f)
			normal_mismatch += glm_vec3_dot(nb, nm) < 0.99999f;
	}
	CHECK_MSG(sign_mismatch == 0, "%d of %d signs differ", sign_mismatch, compared);
	CHECK_MSG(value_mismatch == 0, "%d of %d distances differ", value_mismatch, compared);
	CHECK_MSG(normal_mismatch == 0, "%d of %d normals differ", normal_mismatch, compared);
	CHECK(inside > 100 && compared - inside > 100);

	/* Close to corners and edges, where the solid angles of neighbouring triangles are
	 * large and nearly cancel: offsets of 1e-5 to 1e-2 from a corner or an edge midpoint. */
	vec4 corners[8];
	sim_obstacle_world_vertices(&box, box.position, box.orientation, corners);
	sign_mismatch = value_mismatch = compared = 0;
	for (int i = 0; i < 4000; i++) {
		int a = i % 8, b = (i / 8) % 8;
		float along = i % 3 == 0 ? 0.5f : 0.0f; /* a third at the midpoint of corners a, b */
		double scale = pow(10.0, -5.0 + 3.0 * rng_unit());
		vec3 p, nb, nm;
		for (int k = 0; k < 3; k++)
			p[k] = corners[a][k] + along * (corners[b][k] - corners[a][k]) +
			       (float)(scale * (2.0 * rng_unit() - 1.0));
		float db = sim_obstacle_distance(&box, box.position, box.orientation, p, nb);
		float dm = sim_obstacle_distance(&mesh, mesh.position, mesh.orientation, p, nm);
		if (fabsf(db) < 1e-6f)
			continue;
		compared++;
		sign_mismatch += (db < 0.0f) != (dm < 0.0f);
		value_mismatch += fabsf(db - dm) > 1e-6f;
	}
	CHECK_MSG(sign_mismatch == 0, "%d of %d near-surface signs differ", sign_mismatch, compared);
	CHECK_MSG(value_mismatch == 0, "%d of %d near-surface distances differ", value_mismatch, compared);
	CHECK(compared > 2000);
	sim_obstacle_fini(&mesh);
	sim_obstacle_fini(&box);

	/* Lattice points in the planes of faces and on the lines of edges and through
	 * corners: degenerate rays for a parity test, nothing special for the winding
	 * number.  Identity pose, so the local coordinates are exact. */
	d = sim_obstacle_def_default(SIM_SHAPE_BOX);
	REQUIRE(sim_obstacle_init(&box, &d));
	REQUIRE(mesh_from_box(&box, &mesh));
	sign_mismatch = value_mismatch = compared = 0;
	for (int i = -6; i <= 6; i++)
		for (int j = -6; j <= 6; j++)
			for (int k = -6; k <= 6; k++) {
				vec3 nb, nm;
				float db = dist_at(&box, 0.25f * i, 0.25f * j, 0.25f * k, nb);
				float dm = dist_at(&mesh, 0.25f * i, 0.25f * j, 0.25f * k, nm);
				if (db == 0.0f) {
					/* On the surface both say 0. */
					CHECK(dm == 0.0f);
					continue;
				}
				compared++;
				sign_mismatch += (db < 0.0f) != (dm < 0.0f);
				value_mismatch += fabsf(db - dm) > 1e-7f;
			}
	CHECK_MSG(sign_mismatch == 0, "%d of %d lattice signs differ", sign_mismatch, compared);
	CHECK_MSG(value_mismatch == 0, "%d of %d lattice distances differ", value_mismatch, compared);
	sim_obstacle_fini(&mesh);
	sim_obstacle_fini(&box);
}

static void test_tetrahedron(void)
{
	static const float xs[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
	static const int tris[12] = {1, 2, 3, 0, 2, 1, 0, 1, 3, 0, 3, 2};
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_MESH);
	d.vertex_count = 4;
	d.positions = xs;
	d.triangle_count = 4;
	d.triangles = tris;
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	const double r3 = 1.0 / sqrt(3.0);
	CHECK_DIST(&o, 0.1f, 0.2f, 0.3f, -0.1, -1.0, 0.0, 0.0);
	CHECK_DIST(&o, 0.2f, 0.1f, 0.3f, -0.1, 0.0, -1.0, 0.0);
	CHECK_DIST(&o, 0.1f, 0.2f, -0.5f, 0.5, 0.0, 0.0, -1.0);
	CHECK_DIST(&o, 1.0f, 1.0f, 1.0f, 2.0 * r3, r3, r3, r3);
	CHECK_DIST(&o, -1.0f, -1.0f, -1.0f, sqrt(3.0), -r3, -r3, -r3);
	CHECK_DIST(&o, 0.25f, 0.25f, 0.25f, -0.25 * r3, r3, r3, r3);
	CHECK_DIST(&o, 0.25f, 0.25f, 0.0f, 0.0, 0.0, 0.0, -1.0);
	/* Outside past an edge: (0.5, 0.5, 0) is the closest point of edge 1-2. */
	CHECK_DIST(&o, 0.8f, 0.8f, -0.3f * sqrtf(2.0f), 0.6, 0.5, 0.5, -sqrt(0.5));

	/* Inside iff every coordinate is positive and they sum below 1. */
	int mismatch = 0, inside = 0, compared = 0;
	for (int i = 0; i < 4000; i++) {
		vec3 p, n;
		for (int k = 0; k < 3; k++)
			p[k] = (float)(2.0 * rng_unit() - 0.5);
		double planes[4] = {-p[0], -p[1], -p[2], (p[0] + p[1] + p[2] - 1.0) * r3};
		double top = planes[0], near = fabs(planes[0]);
		for (int k = 1; k < 4; k++) {
			top = fmax(top, planes[k]);
			near = fmin(near, fabs(planes[k]));
		}
		/* Near a face plane the truth depends on rounding; skip those points. */
		if (near < 1e-6)
			continue;
		float dm = sim_obstacle_distance(&o, o.position, o.orientation, p, n);
		compared++;
		inside += top < 0.0;
		mismatch += (top < 0.0) != (dm < 0.0f);
		if (top < 0.0)
			mismatch += fabs(dm - top) > 1e-6; /* convex: inside, the nearest plane */
	}
	CHECK_MSG(mismatch == 0, "%d of %d points disagree", mismatch, compared);
	CHECK(inside > 50);
	sim_obstacle_fini(&o);

	/* The same solid wound the other way round still reads as closed with its inside
	 * inside (only its surface normals on the faces flip). */
	static const int flipped[12] = {1, 3, 2, 0, 1, 2, 0, 3, 1, 0, 2, 3};
	d.triangles = flipped;
	REQUIRE(sim_obstacle_init(&o, &d));
	vec3 n;
	CHECK_NEAR(dist_at(&o, 0.1f, 0.2f, 0.3f, n), -0.1, 1e-6);
	CHECK_VEC3(n, -1.0, 0.0, 0.0, 1e-6);
	CHECK_NEAR(dist_at(&o, 1.0f, 1.0f, 1.0f, n), 2.0 * r3, 1e-6);
	sim_obstacle_fini(&o);
}

/* A unit cube whose top face is pushed in to a pyramid with its apex at the centre:
 * non-convex, so points inside the bounding box but above the dent are outside. */
static void test_concave_mesh(void)
{
	float xs[27];
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 3; k++)
			xs[3 * i + k] = (i >> k) & 1 ? 0.5f : -0.5f;
	xs[24] = xs[25] = xs[26] = 0.0f;
	/* The box's triangles without its +y face, and four down to the apex (vertex 8)
	 * running around the rim the way the +y face did. */
	static const int tris[42] = {
		0, 4, 6, 0, 6, 2, 1, 3, 7, 1, 7, 5, 0, 1, 5, 0, 5, 4, 0, 2, 3, 0, 3, 1, 4, 5, 7, 4, 7, 6,
		2, 6, 8, 6, 7, 8, 7, 3, 8, 3, 2, 8,
	};
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_MESH);
	d.vertex_count = 9;
	d.positions = xs;
	d.triangle_count = 14;
	d.triangles = tris;
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	/* In the dent, above the apex: outside, nearest the +x slanted face (plane y = x),
	 * whose foot (0.15, 0.15, 0) lies inside that triangle. */
	CHECK_DIST(&o, 0.05f, 0.25f, 0.0f, 0.2 / sqrt(2.0), -sqrt(0.5), sqrt(0.5), 0.0);
	/* Below the apex: inside, the apex nearest (the slanted faces' feet fall outside
	 * their triangles), so the normal points from p to the apex. */
	CHECK_DIST(&o, 0.0f, -0.2f, 0.0f, -0.2, 0.0, 1.0, 0.0);
	/* Under the +x slanted face: inside, 0.2 below it vertically, 0.2 / sqrt 2 across. */
	CHECK_DIST(&o, 0.3f, 0.1f, 0.0f, -0.2 / sqrt(2.0), -sqrt(0.5), sqrt(0.5), 0.0);
	vec3 n;
	int mismatch = 0, inside = 0, outside_in_box = 0, compared = 0;
	for (int i = 0; i < 4000; i++) {
		vec3 p;
		for (int k = 0; k < 3; k++)
			p[k] = (float)(1.4 * rng_unit() - 0.7);
		double m = fmax(fabs(p[0]), fabs(p[2]));
		double faces = fmin(fmin(fabs(fabs(p[0]) - 0.5), fabs(fabs(p[2]) - 0.5)),
		                    fmin(fabs(p[1] + 0.5), fabs(p[1] - m)));
		if (faces < 1e-5)
			continue;
		bool in_cube = fabs(p[0]) < 0.5 && fabs(p[1]) < 0.5 && fabs(p[2]) < 0.5;
		bool truth = in_cube && p[1] < m;
		compared++;
		inside += truth;
		outside_in_box += in_cube && !truth;
		mismatch += truth != (sim_obstacle_distance(&o, o.position, o.orientation, p, n) < 0.0f);
	}
	CHECK_MSG(mismatch == 0, "%d of %d points disagree", mismatch, compared);
	CHECK(inside > 200 && outside_in_box > 50);
	sim_obstacle_fini(&o);
}

static void test_open_mesh(void)
{
	/* One quad in y = 0, counter-clockwise seen from +y. */
	static const float xs[12] = {-1, 0, -1, 1, 0, -1, 1, 0, 1, -1, 0, 1};
	static const int tris[6] = {0, 3, 2, 0, 2, 1};
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_MESH);
	d.vertex_count = 4;
	d.positions = xs;
	d.triangle_count = 2;
	d.triangles = tris;
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	CHECK(sim_obstacle_has_triangles(&o));
	/* Unsigned on both sides, the normal towards p. */
	CHECK_DIST(&o, 0.2f, 0.5f, 0.3f, 0.5, 0.0, 1.0, 0.0);
	CHECK_DIST(&o, 0.2f, -0.5f, 0.3f, 0.5, 0.0, -1.0, 0.0);
	CHECK_DIST(&o, 0.0f, 1.0f, 0.0f, 1.0, 0.0, 1.0, 0.0); /* over the shared diagonal */
	/* On the surface: the face normal. */
	CHECK_DIST(&o, 0.2f, 0.0f, 0.3f, 0.0, 0.0, 1.0, 0.0);
	/* Past an edge and a corner. */
	CHECK_DIST(&o, 1.3f, 0.4f, 0.0f, 0.5, 0.6, 0.8, 0.0);
	CHECK_DIST(&o, -1.3f, -0.4f, 0.0f, 0.5, -0.6, -0.8, 0.0);
	CHECK_DIST(&o, 2.0f, 2.0f, 3.0f, 3.0, 1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0);
	int negative = 0;
	for (int i = 0; i < 1000; i++) {
		vec3 p, n;
		for (int k = 0; k < 3; k++)
			p[k] = (float)(4.0 * rng_unit() - 2.0);
		negative += sim_obstacle_distance(&o, o.position, o.orientation, p, n) < 0.0f;
	}
	CHECK(negative == 0);
	sim_obstacle_fini(&o);
}

/* ---- motion --------------------------------------------------------------------------------- */

static void test_pose_at(void)
{
	/* A one-triangle mesh with vertices on the x and z axes and y. */
	static const float xs[9] = {1, 0, 0, 0, 0, 1, 0, 1, 0};
	static const int tri[3] = {0, 1, 2};
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_MESH);
	d.vertex_count = 3;
	d.positions = xs;
	d.triangle_count = 1;
	d.triangles = tri;
	set3f(d.position, 1.0f, 2.0f, 3.0f);
	set3f(d.velocity, 0.5f, 0.0f, -1.0f);
	set3f(d.angular_velocity, 0.0f, 0.8f, 0.0f);
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	const float t = 0.7f;
	vec3 p;
	versor q;
	sim_obstacle_pose_at(&o, t, p, q);
	CHECK_VEC3(p, 1.0 + 0.5 * t, 2.0, 3.0 - t, 1e-6);
	/* Rotation about y by a: (x, z) -> (x cos a + z sin a, -x sin a + z cos a). */
	double a = 0.8 * (double)t, c = cos(a), s = sin(a);
	vec4 out[3];
	sim_obstacle_world_vertices(&o, p, q, out);
	CHECK_VEC3(out[0], p[0] + c, p[1], p[2] - s, 1e-6);
	CHECK_VEC3(out[1], p[0] + s, p[1], p[2] + c, 1e-6);
	CHECK_VEC3(out[2], p[0], p[1] + 1.0, p[2], 1e-6);
	CHECK_NEAR(glm_quat_norm(q), 1.0, 1e-6);
	/* The current pose is untouched until advanced. */
	CHECK_VEC3(o.position, 1.0, 2.0, 3.0, 0.0);
	CHECK(o.orientation[3] == 1.0f);
	/* Zero time: the current pose. */
	sim_obstacle_pose_at(&o, 0.0f, p, q);
	CHECK_VEC3(p, 1.0, 2.0, 3.0, 0.0);
	CHECK_VEC3(q, 0.0, 0.0, 0.0, 0.0);
	CHECK(q[3] == 1.0f);
	sim_obstacle_fini(&o);

	/* Composition: advancing by t1 and then asking for t2 is asking for t1 + t2, from a
	 * rotated start, about a general axis. */
	set3f(d.angular_velocity, 0.3f, -1.1f, 0.7f);
	set3f(d.velocity, -0.2f, 0.4f, 1.5f);
	quat_axis(d.orientation, 1.1f, -0.3f, 0.5f, 0.8f);
	REQUIRE(sim_obstacle_init(&o, &d));
	const float t1 = 0.37f, t2 = 0.81f;
	vec3 p_once, p_twice;
	versor q_once, q_twice;
	sim_obstacle_pose_at(&o, t1 + t2, p_once, q_once);
	sim_obstacle_advance(&o, t1);
	sim_obstacle_pose_at(&o, t2, p_twice, q_twice);
	CHECK_VEC3(p_twice, p_once[0], p_once[1], p_once[2], 1e-6);
	for (int k = 0; k < 4; k++)
		CHECK_NEAR(q_twice[k], q_once[k], 1e-6);
	/* The world frame angular velocity multiplies from the left, as glm_quat_mul(dq, q)
	 * does: check against cglm directly. */
	versor q0, dq, expected;
	glm_vec4_copy(o.def.orientation, q0);
	vec3 w = {0.3f, -1.1f, 0.7f};
	glm_quatv(dq, glm_vec3_norm(w) * (t1 + t2), w);
	glm_quat_mul(dq, q0, expected);
	for (int k = 0; k < 4; k++)
		CHECK_NEAR(q_once[k], expected[k], 1e-6);
	sim_obstacle_fini(&o);

	/* A thousand small steps land where one big one does. */
	REQUIRE(sim_obstacle_init(&o, &d));
	sim_obstacle_pose_at(&o, 1.0f, p_once, q_once);
	for (int i = 0; i < 1000; i++)
		sim_obstacle_advance(&o, 1e-3f);
	CHECK_VEC3(o.position, p_once[0], p_once[1], p_once[2], 1e-4);
	for (int k = 0; k < 4; k++)
		CHECK_NEAR(o.orientation[k], q_once[k], 1e-4);
	CHECK_NEAR(glm_quat_norm(o.orientation), 1.0, 1e-6);
	sim_obstacle_fini(&o);
}

static void test_point_velocity(void)
{
	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	set3f(d.velocity, 1.0f, 2.0f, 3.0f);
	set3f(d.angular_velocity, 0.0f, 0.0f, 2.0f);
	sim_obstacle o;
	REQUIRE(sim_obstacle_init(&o, &d));
	vec3 pos = {1.0f, 1.0f, 0.0f}, p = {2.0f, 1.0f, 5.0f}, v;
	/* r = (1, 0, 5), w x r = (0, 2, 0). */
	sim_obstacle_point_velocity(&o, pos, p, v);
	CHECK_VEC3(v, 1.0, 4.0, 3.0, 1e-6);
	set3f(o.def.angular_velocity, 1.0f, -2.0f, 0.5f);
	set3f(p, 1.5f, 2.0f, -1.0f);
	/* r = (0.5, 1, -1), w x r = (2 - 0.5, 0.25 + 1, 1 + 1). */
	sim_obstacle_point_velocity(&o, pos, p, v);
	CHECK_VEC3(v, 2.5, 3.25, 5.0, 1e-6);
	/* At the position itself only the linear part remains. */
	sim_obstacle_point_velocity(&o, pos, pos, v);
	CHECK_VEC3(v, 1.0, 2.0, 3.0, 0.0);
	sim_obstacle_fini(&o);
}

/* ---- world API ------------------------------------------------------------------------------ */

/* Frees the world's obstacles and leaves none behind, so sim_world_destroy finds nothing
 * to free whether or not it frees obstacles itself. */
static void release_obstacles(sim_world *w)
{
	for (int i = 0; i < w->obstacle_count; i++)
		sim_obstacle_fini(&w->obstacles[i]);
	free(w->obstacles);
	w->obstacles = NULL;
	w->obstacle_count = w->obstacle_capacity = 0;
}

static void test_world(void)
{
	sim_world_def wd = sim_world_def_default();
	sim_world *w = sim_world_create(&wd);
	REQUIRE(w);
	CHECK(sim_world_obstacle_count(w) == 0);
	CHECK(sim_world_obstacle(w, 0) == NULL);

	sim_obstacle_def d = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	set3f(d.position, 0.0f, 1.0f, 0.0f);
	CHECK(sim_world_add_obstacle(w, &d) == 0);
	CHECK(sim_world_obstacle_count(w) == 1);

	/* Rejected adds leave the world as it was. */
	sim_obstacle_def bad = d;
	bad.radius = NAN;
	CHECK(sim_world_add_obstacle(w, &bad) == SIM_ERROR_INVALID);
	bad = d;
	glm_vec4_zero(bad.orientation);
	CHECK(sim_world_add_obstacle(w, &bad) == SIM_ERROR_INVALID);
	bad = d;
	bad.friction = -1.0f;
	CHECK(sim_world_add_obstacle(w, &bad) == SIM_ERROR_INVALID);
	float xs[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	int tri[3] = {0, 1, 5};
	bad = sim_obstacle_def_default(SIM_SHAPE_MESH);
	bad.vertex_count = 3;
	bad.positions = xs;
	bad.triangle_count = 1;
	bad.triangles = tri;
	CHECK(sim_world_add_obstacle(w, &bad) == SIM_ERROR_INVALID);
	CHECK(sim_world_add_obstacle(w, NULL) == SIM_ERROR_INVALID);
	CHECK(sim_world_obstacle_count(w) == 1);

	/* Enough to make the array grow several times; earlier entries survive the moves. */
	tri[2] = 2;
	char name[32];
	for (int i = 1; i < 40; i++) {
		sim_obstacle_def e = sim_obstacle_def_default(i % 2 ? SIM_SHAPE_BOX : SIM_SHAPE_MESH);
		if (e.shape == SIM_SHAPE_MESH) {
			e.vertex_count = 3;
			e.positions = xs;
			e.triangle_count = 1;
			e.triangles = tri;
		}
		snprintf(name, sizeof name, "obstacle %d", i);
		e.name = name;
		e.position[0] = (float)i;
		CHECK(sim_world_add_obstacle(w, &e) == i);
	}
	REQUIRE(sim_world_obstacle_count(w) == 40);
	for (int i = 1; i < 40; i++) {
		const sim_obstacle_def *e = sim_world_obstacle(w, i);
		REQUIRE(e);
		snprintf(name, sizeof name, "obstacle %d", i);
		CHECK(strcmp(e->name, name) == 0);
		CHECK(e->position[0] == (float)i);
		CHECK(e->shape == (i % 2 ? SIM_SHAPE_BOX : SIM_SHAPE_MESH));
		CHECK(e->positions == w->obstacles[i].local_positions && e->positions != xs);
	}
	const sim_obstacle_def *s = sim_world_obstacle(w, 0);
	REQUIRE(s);
	CHECK(strcmp(s->name, "sphere") == 0 && s->radius == 0.5f);
	CHECK(sim_world_obstacle(w, -1) == NULL && sim_world_obstacle(w, 40) == NULL);

	/* Motion. */
	vec3 v = {1.0f, 0.0f, 0.0f}, om = {0.0f, 2.0f, 0.0f}, nan_v = {0.0f, NAN, 0.0f};
	CHECK(sim_world_set_obstacle_motion(w, 0, v, om) == SIM_OK);
	CHECK_VEC3(s->velocity, 1.0, 0.0, 0.0, 0.0);
	CHECK_VEC3(s->angular_velocity, 0.0, 2.0, 0.0, 0.0);
	CHECK(sim_world_set_obstacle_motion(w, 0, nan_v, om) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_obstacle_motion(w, 0, v, nan_v) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_obstacle_motion(w, 40, v, om) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_obstacle_motion(w, -1, v, om) == SIM_ERROR_INVALID);
	CHECK_VEC3(s->velocity, 1.0, 0.0, 0.0, 0.0);

	/* Pose: where it was put, until the world moves it. */
	vec3 p;
	versor q;
	CHECK(sim_world_obstacle_pose(w, 0, p, q) == SIM_OK);
	CHECK_VEC3(p, 0.0, 1.0, 0.0, 0.0);
	CHECK_VEC3(q, 0.0, 0.0, 0.0, 0.0);
	CHECK(q[3] == 1.0f);
	sim_obstacle_advance(&w->obstacles[0], 0.5f);
	CHECK(sim_world_obstacle_pose(w, 0, p, q) == SIM_OK);
	CHECK_VEC3(p, 0.5, 1.0, 0.0, 1e-7);
	CHECK_NEAR(q[1], sin(0.5), 1e-6);
	CHECK(sim_world_obstacle_pose(w, 40, p, q) == SIM_ERROR_INVALID);

	release_obstacles(w);
	sim_world_destroy(&w);
}

static const test_case tests[] = {
	TEST(test_defaults),
	TEST(test_validation),
	TEST(test_copies),
	TEST(test_plane),
	TEST(test_sphere),
	TEST(test_box),
	TEST(test_capsule),
	TEST(test_box_tessellation),
	TEST(test_closed_mesh_matches_box),
	TEST(test_tetrahedron),
	TEST(test_concave_mesh),
	TEST(test_open_mesh),
	TEST(test_pose_at),
	TEST(test_point_velocity),
	TEST(test_world),
};

TEST_MAIN(tests)
