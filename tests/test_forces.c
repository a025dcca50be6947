/* Forces and constraints against closed forms: springs with damping, wind drag and
 * lift, air damping, point forces, pins, prescribed velocity blocks, the attachment
 * coupling, the tetrahedron's return to rest, and input validation. */
#include "test.h"

#include "scenes/scenes.h"
#include "sim/sim.h"
#include "sim_internal.h"

/* One triangle (0,0,0), (1,0,0), (0,1,0) of 1 kg particles; springs all of kind
 * structural (a lone triangle has only boundary edges). */
static sim_world *triangle(float k, float kd, float anchor)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	sim_world *w = sim_world_create(&def);
	static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	static const int tri[3] = {0, 1, 2};
	sim_mesh_def m = {.name = "tri", .vertex_count = 3, .positions = pos, .triangle_count = 1, .triangles = tri};
	m.material = sim_material_default();
	m.material.total_mass = 3.0f;
	for (int i = 0; i < SIM_SPRING_KIND_COUNT; i++) {
		m.material.stiffness[i] = k;
		m.material.damping[i] = kd;
	}
	m.material.anchor_stiffness = anchor;
	if (w && sim_world_add_mesh(w, &m) != 0)
		sim_world_destroy(&w);
	return w;
}

/* Hooke's law with damping along the spring, computed independently in double. */
static void expected_spring(const double *xa, const double *xb, const double *va, const double *vb, double k,
                            double kd, double rest, double *out_on_a)
{
	double d[3], l = 0.0, rel = 0.0;
	for (int c = 0; c < 3; c++) {
		d[c] = xb[c] - xa[c];
		l += d[c] * d[c];
	}
	l = sqrt(l);
	for (int c = 0; c < 3; c++)
		rel += (vb[c] - va[c]) * d[c] / l;
	for (int c = 0; c < 3; c++)
		out_on_a[c] = (k * (l - rest) + kd * rel) * d[c] / l;
}

static void test_spring_forces(void)
{
	const float k = 40.0f, kd = 0.5f;
	sim_world *w = triangle(k, kd, 0.0f);
	REQUIRE(w);
	vec3 p1 = {1.5f, 0.2f, -0.1f}, v1 = {1.0f, -0.5f, 0.25f}, p2 = {0.0f, 1.0f, 0.0f}, v2 = {0.0f, 0.0f, 2.0f};
	REQUIRE(sim_world_set_vertex(w, 1, p1, v1) == SIM_OK);
	REQUIRE(sim_world_set_vertex(w, 2, p2, v2) == SIM_OK);
	vec4 f[3];
	sim_compute_forces(w, w->x, w->v, f);
	double x[3][3] = {{0, 0, 0}, {1.5, 0.2, -0.1}, {0, 1, 0}};
	double v[3][3] = {{0, 0, 0}, {1.0, -0.5, 0.25}, {0, 0, 2.0}};
	double rest[3][3] = {{0, 1, 1}, {1, 0, sqrt(2.0)}, {1, sqrt(2.0), 0}};
	for (int a = 0; a < 3; a++) {
		double total[3] = {0, 0, 0};
		for (int b = 0; b < 3; b++) {
			if (a == b)
				continue;
			double fab[3];
			expected_spring(x[a], x[b], v[a], v[b], k, kd, rest[a][b], fab);
			for (int c = 0; c < 3; c++)
				total[c] += fab[c];
		}
		for (int c = 0; c < 3; c++)
			CHECK_NEAR(f[a][c], total[c], 2e-5 * (1.0 + fabs(total[c])));
	}
	/* Newton's third law: the internal forces sum to zero. */
	for (int c = 0; c < 3; c++)
		CHECK_NEAR(f[0][c] + f[1][c] + f[2][c], 0.0, 1e-5);
	sim_world_destroy(&w);
}

/* Face-on wind on a horizontal triangle: drag = 1/2 rho C_d A |u|^2 along u, no lift.
 * At 45 degrees: drag carries cos(theta), lift cos(theta) sin(theta) along n's part
 * normal to u. */
static void test_wind_drag_and_lift(void)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	def.air_density = 1.2f;
	def.drag_coefficient = 1.1f;
	def.lift_coefficient = 0.7f;
	def.wind[1] = -5.0f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 0, -1}; /* horizontal, area 0.5 */
	static const int tri[3] = {0, 1, 2};
	sim_mesh_def m = {.name = "kite", .vertex_count = 3, .positions = pos, .triangle_count = 1, .triangles = tri};
	m.material = sim_material_default();
	REQUIRE(sim_world_add_mesh(w, &m) == 0);
	vec4 f[3] = {{0}};
	sim_add_wind_forces(w, w->x, w->v, f);
	double q = 0.5 * 1.2 * 0.5 * 25.0; /* 1/2 rho A |u|^2 */
	double sum[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++)
		for (int c = 0; c < 3; c++)
			sum[c] += f[i][c];
	CHECK_NEAR(sum[0], 0.0, 1e-6);
	CHECK_NEAR(sum[1], -q * 1.1, 1e-4);
	CHECK_NEAR(sum[2], 0.0, 1e-6);
	CHECK_NEAR(f[0][1], f[1][1], 1e-6); /* a third each */

	/* 45 degrees: wind (5, -5, 0)/sqrt(2) * sqrt(2) = (5, -5, 0), |u| = 5 sqrt 2. */
	w->def.wind[0] = 5.0f;
	memset(f, 0, sizeof f);
	sim_add_wind_forces(w, w->x, w->v, f);
	double speed = 5.0 * sqrt(2.0), c45 = 1.0 / sqrt(2.0);
	double qq = 0.5 * 1.2 * 0.5 * speed * speed;
	double uhat[3] = {c45, -c45, 0.0};
	/* n oriented along u: (0, -1, 0); its part normal to u, normalised: (-1, -1, 0)/sqrt 2 */
	double lhat[3] = {-c45, -c45, 0.0};
	double drag = qq * 1.1 * c45, lift = qq * 0.7 * c45 * c45;
	for (int i = 0; i < 3; i++)
		for (int c = 0; c < 3; c++)
			sum[c] = (i == 0 ? 0.0 : sum[c]) + f[i][c];
	for (int c = 0; c < 3; c++)
		CHECK_NEAR(sum[c], drag * uhat[c] + lift * lhat[c], 1e-4);
	/* The cloth moving with the wind feels nothing. */
	for (int i = 0; i < 3; i++) {
		vec3 v = {5.0f, -5.0f, 0.0f};
		sim_world_set_vertex(w, i, w->x[i], v);
	}
	memset(f, 0, sizeof f);
	sim_add_wind_forces(w, w->x, w->v, f);
	for (int c = 0; c < 3; c++)
		CHECK_NEAR(f[0][c] + f[1][c] + f[2][c], 0.0, 1e-6);
	sim_world_destroy(&w);
}

/* a = -c v under symplectic Euler: v_n = v_0 (1 - c h)^n exactly. */
static void test_air_damping(void)
{
	sim_world *w = triangle(0.0f, 0.0f, 0.0f);
	REQUIRE(w);
	sim_world_def def = *sim_world_get_def(w);
	def.air_damping = 2.0f;
	REQUIRE(sim_world_set_def(w, &def) == SIM_OK);
	vec3 v = {1.0f, 0.0f, 0.0f};
	sim_world_set_vertex(w, 0, w->x[0], v);
	for (int i = 0; i < 200; i++)
		REQUIRE(sim_world_step(w, 0.01f) == SIM_OK);
	CHECK_NEAR(sim_world_velocities(w)[0][0], pow(1.0 - 2.0 * 0.01, 200), 1e-5);
	sim_world_destroy(&w);
}

/* A constant point force on a free 1 kg particle: v = F t, x = F h^2 n (n + 1) / 2. */
static void test_point_force(void)
{
	sim_world *w = triangle(0.0f, 0.0f, 0.0f);
	REQUIRE(w);
	vec3 force = {0.0f, 0.0f, 3.0f};
	REQUIRE(sim_world_set_point_force(w, 2, force) == SIM_OK);
	for (int i = 0; i < 100; i++)
		REQUIRE(sim_world_step(w, 0.01f) == SIM_OK);
	CHECK_NEAR(sim_world_velocities(w)[2][2], 3.0, 1e-5);
	CHECK_NEAR(sim_world_positions(w)[2][2], 3.0 * 1e-4 * 100 * 101 / 2, 1e-5);
	CHECK_NEAR(sim_world_positions(w)[0][2], 0.0, 0.0);
	vec3 bad = {NAN, 0.0f, 0.0f};
	CHECK(sim_world_set_point_force(w, 2, bad) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_point_force(w, 3, force) == SIM_ERROR_INVALID);
	sim_world_destroy(&w);
}

/* A pinned corner does not move under any integrator, and unpinning frees it. */
static void test_pins(void)
{
	for (int k = 0; k < SIM_INTEGRATOR_COUNT; k++) {
		sim_world_def def = sim_world_def_default();
		def.integrator = (sim_integrator)k;
		sim_world *w = sim_world_create(&def);
		REQUIRE(w);
		sim_grid_def g = sim_grid_def_default();
		g.nx = g.ny = 6;
		g.material.stiffness[0] = 50.0f, g.material.stiffness[1] = 20.0f, g.material.stiffness[2] = 1.0f;
		REQUIRE(sim_world_add_grid(w, &g) == 0);
		REQUIRE(sim_world_pin(w, 0, true) == SIM_OK);
		REQUIRE(sim_world_pin(w, 5, true) == SIM_OK);
		CHECK(sim_world_is_pinned(w, 5) && !sim_world_is_pinned(w, 4));
		vec4 p0, p5;
		glm_vec4_copy((float *)sim_world_positions(w)[0], p0);
		glm_vec4_copy((float *)sim_world_positions(w)[5], p5);
		float dt = k == SIM_EULER ? 2e-4f : 1e-3f;
		for (int i = 0; i < (int)(0.3f / dt); i++)
			REQUIRE(sim_world_step(w, dt) == SIM_OK);
		for (int c = 0; c < 3; c++) {
			CHECK_MSG(sim_world_positions(w)[0][c] == p0[c], "%s moved a pin", sim_integrator_name(k));
			CHECK_MSG(sim_world_positions(w)[5][c] == p5[c], "%s moved a pin", sim_integrator_name(k));
		}
		CHECK_MSG(sim_world_positions(w)[35][1] < p0[1] - 0.05f, "%s: far corner at %.4f", sim_integrator_name(k),
		          (double)sim_world_positions(w)[35][1]); /* the far corner fell */
		REQUIRE(sim_world_pin(w, 0, false) == SIM_OK);
		for (int i = 0; i < 50; i++)
			REQUIRE(sim_world_step(w, dt) == SIM_OK);
		CHECK(sim_world_positions(w)[0][1] < p0[1]);
		sim_world_destroy(&w);
	}
}

/* Seed 000 blocks: from t = 0.1 s vertex 0 moves at 0.1 m/s along x; from t = 0.3 s the
 * prescription ends (NaN) and the vertex is free again. */
static void test_velocity_blocks(void)
{
	sim_world *w = triangle(0.0f, 0.0f, 0.0f);
	REQUIRE(w);
	vec3 v = {0.1f, 0.0f, 0.0f}, stop = {NAN, NAN, NAN}, still = {0.0f, 0.0f, 0.0f};
	REQUIRE(sim_world_add_velocity_block(w, 0.0, 0, still) == SIM_OK);
	REQUIRE(sim_world_add_velocity_block(w, 0.1, 0, v) == SIM_OK);
	REQUIRE(sim_world_add_velocity_block(w, 0.3, 0, stop) == SIM_OK);
	vec3 push = {0.0f, 0.0f, 1.0f};
	REQUIRE(sim_world_set_point_force(w, 0, push) == SIM_OK);
	for (int i = 0; i < 300; i++) /* 0.3 s at 1 ms */
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	/* prescribed: the point force could not move it along z */
	CHECK_NEAR(sim_world_positions(w)[0][0], 0.1 * 0.2, 1e-5);
	CHECK_NEAR(sim_world_positions(w)[0][2], 0.0, 0.0);
	for (int i = 0; i < 100; i++)
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	/* free again: it keeps its 0.1 m/s and the 1 N force accelerates its 1 kg along z */
	CHECK_NEAR(sim_world_velocities(w)[0][0], 0.1, 1e-6);
	CHECK_NEAR(sim_world_velocities(w)[0][2], 0.1, 1e-5);
	vec3 bad = {1.0f, INFINITY, 0.0f};
	CHECK(sim_world_add_velocity_block(w, 1.0, 0, bad) == SIM_ERROR_INVALID);
	CHECK(sim_world_add_velocity_block(w, 1.0, 7, v) == SIM_ERROR_INVALID);
	sim_world_destroy(&w);
}

/* The coupling is critically damped: a free particle reaches a target 0.1 m away
 * without overshoot, settling like (1 + w t) e^(-w t). */
static void test_attachment_critically_damped(void)
{
	sim_world *w = triangle(0.0f, 0.0f, 0.0f);
	REQUIRE(w);
	sim_attachment_def a = sim_attachment_def_default(0);
	a.hertz = 10.0f;
	a.max_force = 1e3f;
	int id = sim_world_attach(w, &a);
	REQUIRE(id >= 0);
	vec3 target = {0.1f, 0.0f, 0.0f}, zero = {0.0f, 0.0f, 0.0f};
	REQUIRE(sim_world_attachment_set_target(w, id, target, zero) == SIM_OK);
	double omega = 2.0 * 3.14159265358979 * 10.0, worst = 0.0;
	double prev = 0.0;
	bool monotonic = true;
	for (int i = 1; i <= 500; i++) {
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		double x = sim_world_positions(w)[0][0], t = i * 1e-3;
		double exact = 0.1 * (1.0 - (1.0 + omega * t) * exp(-omega * t));
		worst = fmax(worst, fabs(x - exact));
		monotonic = monotonic && x >= prev && x <= 0.1 + 1e-7;
		prev = x;
	}
	CHECK_MSG(monotonic, "overshoot or reversal");
	CHECK_MSG(worst < 0.1 * 0.08, "deviation from the critically damped curve %.5f m", worst);
	CHECK_NEAR(sim_world_positions(w)[0][0], 0.1, 1e-5);
	/* the others were not dragged along (no springs) */
	CHECK_NEAR(sim_world_positions(w)[1][0], 1.0, 0.0);
	REQUIRE(sim_world_detach(w, id) == SIM_OK);
	CHECK(sim_world_detach(w, id) == SIM_ERROR_INVALID);
	sim_world_destroy(&w);
}

/* Capped: with 0.05 N on 1 kg the vertex cannot accelerate faster than 0.05 m/s^2. */
static void test_attachment_force_cap(void)
{
	sim_world *w = triangle(0.0f, 0.0f, 0.0f);
	REQUIRE(w);
	sim_attachment_def a = sim_attachment_def_default(0);
	a.max_force = 0.05f;
	int id = sim_world_attach(w, &a);
	REQUIRE(id >= 0);
	vec3 target = {1.0f, 0.0f, 0.0f}, zero = {0.0f, 0.0f, 0.0f};
	REQUIRE(sim_world_attachment_set_target(w, id, target, zero) == SIM_OK);
	for (int i = 0; i < 1000; i++)
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	CHECK_NEAR(sim_world_positions(w)[0][0], 0.5 * 0.05 * 1.0 * 1.0, 1e-3);
	vec3 f;
	REQUIRE(sim_world_attachment_force(w, id, f) == SIM_OK);
	CHECK_NEAR(glm_vec3_norm(f), 0.05, 1e-6);
	sim_world_destroy(&w);
}

/* Holding a particle still against gravity takes its weight: the coupling force is
 * -m g once settled. */
static void test_attachment_holds_weight(void)
{
	sim_world *w = triangle(0.0f, 0.0f, 0.0f);
	REQUIRE(w);
	sim_world_def def = *sim_world_get_def(w);
	def.gravity[1] = -9.81f;
	REQUIRE(sim_world_set_def(w, &def) == SIM_OK);
	sim_attachment_def a = sim_attachment_def_default(1);
	int id = sim_world_attach(w, &a);
	REQUIRE(id >= 0);
	for (int i = 0; i < 1000; i++)
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	vec3 f;
	REQUIRE(sim_world_attachment_force(w, id, f) == SIM_OK);
	CHECK_NEAR(f[1], 9.81 * sim_world_vertex_mass(w, 1), 1e-3);
	CHECK_NEAR(sim_world_positions(w)[1][1], 0.0, 2e-3); /* held near the target */
	CHECK(sim_world_positions(w)[0][1] < -4.0f);          /* the free one fell */
	sim_world_destroy(&w);
}

/* Seed 002's tetrahedron is pushed and returns to its rest shape. */
static void test_tetrahedron_returns_to_rest(void)
{
	sim_world *w = scn_create("tetrahedron");
	REQUIRE(w);
	REQUIRE(sim_world_vertex_count(w) == 4);
	CHECK(sim_world_object_spring_count(w, 0, SIM_SPRING_STRUCTURAL) == 6);
	CHECK(sim_world_object_triangle_count(w, 0) == 4);
	vec4 rest[4];
	memcpy(rest, sim_world_positions(w), sizeof rest);
	double moved = 0.0;
	for (int i = 0; i < 10000; i++) {
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		for (int v = 0; v < 4; v++)
			moved = fmax(moved, glm_vec3_distance(rest[v], (float *)sim_world_positions(w)[v]));
	}
	CHECK_MSG(moved > 0.01, "the push moved it only %.4f m", moved);
	for (int v = 0; v < 4; v++)
		CHECK_NEAR(glm_vec3_distance(rest[v], (float *)sim_world_positions(w)[v]), 0.0, 1e-4);
	/* edges are all 0.2 m at rest */
	const vec4 *x = sim_world_positions(w);
	for (int a = 0; a < 4; a++)
		for (int b = a + 1; b < 4; b++)
			CHECK_NEAR(glm_vec3_distance((float *)x[a], (float *)x[b]), 0.2, 1e-4);
	sim_world_destroy(&w);
}

static void test_rejects_bad_input(void)
{
	sim_world_def def = sim_world_def_default();
	def.substeps = 0;
	CHECK(sim_world_create(&def) == NULL);
	def = sim_world_def_default();
	def.gravity[0] = NAN;
	CHECK(sim_world_create(&def) == NULL);
	def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = 1;
	CHECK(sim_world_add_grid(w, &g) == SIM_ERROR_INVALID);
	g = sim_grid_def_default();
	g.material.stiffness[1] = -1.0f;
	CHECK(sim_world_add_grid(w, &g) == SIM_ERROR_INVALID);
	g = sim_grid_def_default();
	g.size_x = INFINITY;
	CHECK(sim_world_add_grid(w, &g) == SIM_ERROR_INVALID);
	static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
	static const int bad_tri[3] = {0, 1, 3};
	sim_mesh_def m = {.name = "bad", .vertex_count = 3, .positions = pos, .triangle_count = 1, .triangles = bad_tri};
	m.material = sim_material_default();
	CHECK(sim_world_add_mesh(w, &m) == SIM_ERROR_INVALID);
	CHECK(sim_world_vertex_count(w) == 0 && sim_world_object_count(w) == 0); /* nothing partial */
	CHECK(sim_world_step(w, 0.0f) == SIM_ERROR_INVALID);
	CHECK(sim_world_step(w, NAN) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_integrator(w, SIM_INTEGRATOR_COUNT) == SIM_ERROR_INVALID);
	vec3 p = {0, 0, 0};
	CHECK(sim_world_set_vertex(w, 0, p, p) == SIM_ERROR_INVALID);
	sim_world_destroy(&w);
	CHECK(w == NULL);
}

/* A scheduler without threads for sim's task callbacks: every loop in ranges of exactly
 * min_range items, last range first, each under its own worker index (as test_parallel's). */
typedef struct backwards {
	int workers;
	long loops;
	int largest;
} backwards;

static void *backwards_enqueue(sim_task_fn *task, int count, int min_range, void *task_ctx, void *user)
{
	backwards *b = user;
	b->loops++;
	b->largest = count > b->largest ? count : b->largest;
	int ranges = (count + min_range - 1) / min_range;
	for (int r = ranges - 1; r >= 0; r--) {
		int start = r * min_range, end = start + min_range < count ? start + min_range : count;
		task(start, end, r % b->workers, task_ctx);
	}
	return b;
}

static void backwards_finish(void *handle, void *user) { CHECK(handle == user); }

/* A large grid's forces in ranges of rows (sim_forces_timed with task callbacks, each
 * range recomputing the springs of the two rows before it) are those of the grid in one
 * pass (sim_compute_forces), bit for bit, for any number of ranges; and near the ranges'
 * first rows, where the springs ending there come from the recomputed rows, they are
 * the forces summed spring by spring over the incidence list (sim_vertex_force). */
static void test_grid_forces_in_row_ranges(void)
{
	sim_world_def def = sim_world_def_default();
	def.air_damping = 0.3f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = 97, g.ny = 71; /* 6887 vertices: split */
	g.material.stiffness[0] = 80.0f, g.material.stiffness[1] = 30.0f, g.material.stiffness[2] = 3.0f;
	g.material.damping[0] = 0.2f, g.material.damping[1] = 0.1f, g.material.damping[2] = 0.05f;
	g.material.anchor_stiffness = 2.0f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	const int n = sim_world_vertex_count(w);
	uint32_t seed = 12345u;
	for (int i = 0; i < n; i++) {
		vec3 p, v;
		for (int c = 0; c < 3; c++) {
			seed = seed * 1664525u + 1013904223u;
			p[c] = w->x[i][c] + 0.004f * ((float)(seed >> 8) / 16777216.0f - 0.5f);
			seed = seed * 1664525u + 1013904223u;
			v[c] = (float)(seed >> 8) / 16777216.0f - 0.5f;
		}
		REQUIRE(sim_world_set_vertex(w, i, p, v) == SIM_OK);
	}
	REQUIRE(sim_world_set_point_force(w, 3 * g.nx + 5, (vec3){0.5f, -1.0f, 0.25f}) == SIM_OK);
	static vec4 ref[97 * 71], f[97 * 71];
	sim_compute_forces(w, w->x, w->v, ref);
	for (int workers = 2; workers <= 5; workers++) {
		backwards b = {.workers = workers};
		sim_world_def d = *sim_world_get_def(w);
		d.worker_count = workers;
		d.enqueue_task = backwards_enqueue;
		d.finish_task = backwards_finish;
		d.user_task_context = &b;
		REQUIRE(sim_world_set_def(w, &d) == SIM_OK);
		memset(f, 0xff, sizeof f);
		sim_forces_timed(w, w->x, w->v, f);
		CHECK_MSG(memcmp(f, ref, sizeof f) == 0, "%d workers: the split forces differ", workers);
		CHECK_MSG(b.loops >= 2 && b.largest == n, "%d workers: %ld loops, largest %d", workers, b.loops, b.largest);
		/* each range's first two rows, against the spring-by-spring sum */
		const int rows = (g.ny + workers - 1) / workers;
		for (int j0 = rows; j0 < g.ny; j0 += rows)
			for (int j = j0; j < j0 + 2 && j < g.ny; j++)
				for (int i = 0; i < g.nx; i++) {
					const int a = j * g.nx + i;
					vec3 e;
					sim_vertex_force(w, a, w->x, w->v, e);
					for (int c = 0; c < 3; c++)
						CHECK_MSG(fabsf(f[a][c] - e[c]) <= 1e-4f * (1.0f + fabsf(e[c])), "%d workers, vertex %d: %g, %g",
						          workers, a, (double)f[a][c], (double)e[c]);
				}
	}
	sim_world_destroy(&w);
}

static const test_case tests[] = {
	TEST(test_spring_forces),
	TEST(test_wind_drag_and_lift),
	TEST(test_air_damping),
	TEST(test_point_force),
	TEST(test_pins),
	TEST(test_velocity_blocks),
	TEST(test_attachment_critically_damped),
	TEST(test_attachment_force_cap),
	TEST(test_attachment_holds_weight),
	TEST(test_tetrahedron_returns_to_rest),
	TEST(test_rejects_bad_input),
	TEST(test_grid_forces_in_row_ranges),
};
TEST_MAIN(tests)
