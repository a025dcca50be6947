/* The collision pipeline: no tunnelling of fast vertices and fast obstacles, contacts
 * keep their separation, friction, kinematic vertices, and the intersection check. */
#include "test.h"
#include "sim_fixtures.h"

#include "sim/sim.h"
#include "sim/sim_geom.h"
#include "sim_internal.h"
#include "sep_axis.h"

#include <cglm/quat.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>


static sim_world *zero_g_world(void)
{
	sim_world_def def = sim_world_def_default();
	def.gravity[1] = 0.0f;
	def.blowup_speed = 1e3f;
	return sim_world_create(&def);
}

/* A pinned triangle (the wall, object 0) and a small one above it (the dart, object 1)
 * flying down at `speed`. */
static sim_world *dart_world(float speed)
{
	sim_world *w = zero_g_world();
	if (!w)
		return NULL;
	static const float wall[9] = {-1, 0, -1, 1, 0, -1, 0, 0, 1};
	static const float dart[9] = {0.0f, 0.02f, 0.0f, 0.02f, 0.05f, 0.0f, -0.02f, 0.05f, 0.01f};
	const float vel[3] = {0.0f, -speed, 0.0f};
	if (add_triangle(w, "wall", wall, NULL) != 0 || add_triangle(w, "dart", dart, vel) != 1) {
		sim_world_destroy(&w);
		return NULL;
	}
	for (int i = 0; i < 3; i++)
		sim_world_pin(w, i, true);
	return w;
}

/* The dart at 60 m/s: 6 cm per 1 ms step, twenty times the cloth thickness, crossing the
 * wall within a single step.  It must not pass. */
static void test_fast_vertex_does_not_tunnel(void)
{
	sim_world *w = dart_world(60.0f);
	REQUIRE(w);
	for (int s = 0; s < 20; s++) {
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		int inter = -1;
		sim_world_check(w, &inter, NULL);
		CHECK_MSG(inter == 0, "step %d: %d intersections", s + 1, inter);
		for (int i = 3; i < 6; i++)
			CHECK_MSG(sim_world_positions(w)[i][1] > 0.0f, "step %d: dart vertex %d at y = %g", s + 1, i,
			          (double)sim_world_positions(w)[i][1]);
	}
	sim_world_destroy(&w);
}

/* A ball thrown at 20 m/s into a pinned cloth: no vertex ends inside it, and the cloth
 * is carried along rather than passed through. */
static void test_fast_sphere_does_not_tunnel(void)
{
	sim_world *w = zero_g_world();
	REQUIRE(w);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 12;
	g.size_x = g.size_y = 0.6f;
	g.origin[0] = -0.3f, g.origin[1] = 1.0f, g.origin[2] = -0.3f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.stiffness[0] = 100.0f, g.material.stiffness[1] = 50.0f, g.material.stiffness[2] = 2.0f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	for (int i = 0; i < 12; i++) {
		sim_world_pin(w, i, true);
		sim_world_pin(w, 132 + i, true);
	}
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 0.1f;
	ball.position[1] = 1.3f;
	ball.velocity[1] = -20.0f; /* 2 cm per step: 0.3 m to go, through the sheet in 15 steps */
	REQUIRE(sim_world_add_obstacle(w, &ball) == 0);
	for (int s = 0; s < 25; s++) {
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		int inside = -1;
		sim_world_check(w, NULL, &inside);
		CHECK_MSG(inside == 0, "step %d: %d vertices inside the ball", s + 1, inside);
	}
	vec3 p;
	versor q;
	REQUIRE(sim_world_obstacle_pose(w, 0, p, q) == SIM_OK);
	CHECK_NEAR(p[1], 1.3 - 20.0 * 0.025, 1e-4); /* the ball went on: it is kinematic */
	/* The vertex next to the middle (2.7 cm off in x and z) is on the ball's underside,
	 * well below its centre: carried along.  Had the ball passed, the cloth would be
	 * 0.2 m above the centre. */
	int mid = 6 * 12 + 6;
	CHECK_MSG(sim_world_positions(w)[mid][1] < p[1] - 0.05f, "cloth middle at %g, ball centre at %g",
	          (double)sim_world_positions(w)[mid][1], (double)p[1]);
	sim_world_destroy(&w);
}

/* A vertex whose straight path over a step cuts through a small cap of an obstacle at
 * rest, a ball or a capsule's side (1 mm deep, 3.2 cm long, in a 30 cm step that starts
 * and ends well outside): its path is turned off the obstacle, not let through.  The cap
 * lies between two of the coarse samples a search along the path might take (every 1/8
 * of the step). */
static void vertex_grazing_is_turned(sim_shape shape, float obstacle_speed)
{
	sim_world *w = zero_g_world();
	REQUIRE(w);
	sim_obstacle_def ob = sim_obstacle_def_default(shape);
	ob.radius = 0.05f;
	ob.half_height = 0.1f; /* a capsule's axis runs along y, across the path */
	ob.velocity[1] = obstacle_speed; /* along its axis: the same cap for the vertex */
	REQUIRE(sim_world_add_obstacle(w, &ob) == 0);
	const float x0 = -0.2062f; /* samples at t = 5/8 and 6/8 fall at x = -1.9 and +1.9 cm */
	const float p[9] = {x0, 0.0f, 0.049f, x0, 0.0f, 0.09f, x0, 0.02f, 0.09f};
	const float vel[3] = {300.0f, 0.0f, 0.0f};
	REQUIRE(add_triangle(w, "dart", p, vel) == 0);
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	/* the closest approach of vertex 0's straight path from start to end to the centre,
	 * relative to the centre (which moved 1e-3 obstacle_speed along y); for the capsule,
	 * to its axis (the path stays well within its half height) */
	const float *a = p, *b = sim_world_positions(w)[0];
	double ra[3] = {a[0], a[1], a[2]}, rb[3] = {b[0], (double)b[1] - 1e-3 * obstacle_speed, b[2]};
	if (shape == SIM_SHAPE_CAPSULE)
		ra[1] = rb[1] = 0.0;
	double d[3], ad = 0.0, dd = 0.0;
	for (int k = 0; k < 3; k++) {
		d[k] = rb[k] - ra[k];
		ad += ra[k] * d[k];
		dd += d[k] * d[k];
	}
	double t = dd > 0.0 ? -ad / dd : 0.0, closest = 0.0;
	t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
	for (int k = 0; k < 3; k++)
		closest += (ra[k] + t * d[k]) * (ra[k] + t * d[k]);
	closest = sqrt(closest);
	CHECK_MSG(closest >= 0.05, "%s at %g m/s: vertex 0 went from (%g, %g) to (%g, %g), %g m from the centre on the way",
	          sim_world_obstacle(w, 0)->name, (double)obstacle_speed, (double)a[0], (double)a[2], (double)b[0],
	          (double)b[2], closest);
	/* the two vertices that pass 4 cm beside it fly on (0.3 m) */
	for (int i = 1; i < 3; i++)
		CHECK_NEAR(sim_world_positions(w)[i][0], x0 + 0.3, 1e-3);
	sim_world_destroy(&w);
}

/* At rest, and moving along its axis at 2 m/s (the cap the path cuts is the same; a
 * moving obstacle takes another path through the code). */
static void test_vertex_grazing_ball_is_turned(void)
{
	vertex_grazing_is_turned(SIM_SHAPE_SPHERE, 0.0f);
	vertex_grazing_is_turned(SIM_SHAPE_SPHERE, 2.0f);
}

static void test_vertex_grazing_capsule_is_turned(void)
{
	vertex_grazing_is_turned(SIM_SHAPE_CAPSULE, 0.0f);
	vertex_grazing_is_turned(SIM_SHAPE_CAPSULE, 2.0f);
}

/* sim_stats' parts of the sweeps (docs/benchmarks.md).  On one thread every sweep is its
 * walk; with tick_clock each sweep reads the clock once before its (empty) pre-pass, once
 * between the two and once after its walk, so both read one microsecond a sweep, and
 * neither the pre-pass nor the walk can outgrow the stages that hold the sweeps. */
static void test_sweep_times_within_ccd(void)
{
	sim_world *w = dart_world(60.0f);
	REQUIRE(w);
	sim_set_clock(tick_clock);
	sim_result r = sim_world_step(w, 1e-3f);
	sim_set_clock(NULL);
	REQUIRE(r == SIM_OK);
	const sim_stats *st = sim_world_stats(w);
	CHECK_MSG(st->collisions > 0, "the dart never hit: the case tests nothing");
	CHECK_MSG(st->walk_us >= 2.0, "walk %g us: a hit needs a second sweep", st->walk_us);
	CHECK_MSG(st->prepass_us == st->walk_us, "pre-pass %g us, walk %g us", st->prepass_us, st->walk_us);
	CHECK(st->prepass_us + st->walk_us <= st->stage_us[SIM_STAGE_CCD] + st->stage_us[SIM_STAGE_FAILSAFE]);
	CHECK(st->coarse_us == 0.0); /* explicit integration: no multilevel cycle */
	/* without a clock the parts read 0 */
	REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	CHECK(st->prepass_us == 0.0 && st->walk_us == 0.0);
	sim_world_destroy(&w);
}

/* A triangle hovering just clear of a ball is struck within the step by a fast one from
 * above: the collision impulse drives it at the ball after the obstacle pass at the
 * step's start found it clear, so the obstacle pass after the sweeps must look at it
 * again (it may skip only vertices whose velocity nothing has changed since the last
 * pass).  A ball keeps every vertex at least its half thickness out at the end of each
 * step (collisions.md, steps 3 and 6). */
static void test_struck_vertex_kept_off_ball(void)
{
	sim_world *w = zero_g_world();
	REQUIRE(w);
	const float r = 5.0f;
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = r;
	ball.thickness = 0.0f;
	ball.position[0] = 0.027f, ball.position[1] = -r, ball.position[2] = 0.027f;
	REQUIRE(sim_world_add_obstacle(w, &ball) == 0);
	/* The top of the ball is y = 0, under the triangles (2 cm: their corners are 0.04 mm
	 * lower).  The striker's own path stays clear of the ball (it would end 1.7 mm above
	 * it, the hovering one 0.5 mm above its half thickness), so the first obstacle pass
	 * leaves both alone and only the collision sends the hovering one at the ball. */
	const float half = 0.5f * sim_material_default().thickness, ya = half + 0.0005f, yb = ya + 0.0035f;
	const float hover[9] = {0.02f, ya, 0.02f, 0.04f, ya, 0.02f, 0.02f, ya, 0.04f};
	const float striker[9] = {0.024f, yb, 0.024f, 0.032f, yb, 0.024f, 0.024f, yb, 0.032f};
	const float down[3] = {0.0f, -3.8f, 0.0f};
	REQUIRE(add_triangle(w, "hover", hover, NULL) == 0);
	REQUIRE(add_triangle(w, "striker", striker, down) == 1);
	int struck = 0;
	for (int s = 0; s < 5; s++) {
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		struck += sim_world_stats(w)->collisions;
		for (int i = 0; i < 6; i++) {
			const float *p = sim_world_positions(w)[i];
			double d = 0.0;
			for (int k = 0; k < 3; k++)
				d += ((double)p[k] - ball.position[k]) * ((double)p[k] - ball.position[k]);
			d = sqrt(d) - r;
			CHECK_MSG(d >= half - 1e-6, "step %d: vertex %d is %g from the ball, under %g", s + 1, i, d, (double)half);
		}
	}
	CHECK_MSG(struck > 0, "the striker never hit: the case tests nothing");
	sim_world_destroy(&w);
}

/* A sheet dropped flat on the floor comes to rest at its half thickness above it
 * (the separation the contacts keep), with no vertex inside. */
static void test_rests_at_thickness(void)
{
	sim_world_def def = sim_world_def_default();
	def.air_damping = 1.0f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_obstacle_def floor = sim_obstacle_def_default(SIM_SHAPE_PLANE);
	REQUIRE(sim_world_add_obstacle(w, &floor) == 0);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 8;
	g.size_x = g.size_y = 0.4f;
	g.origin[0] = -0.2f, g.origin[1] = 0.05f, g.origin[2] = -0.2f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.stiffness[0] = 50.0f, g.material.stiffness[1] = 20.0f, g.material.stiffness[2] = 1.0f;
	g.material.thickness = 0.004f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	for (int s = 0; s < 1500; s++)
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	for (int i = 0; i < sim_world_vertex_count(w); i++)
		CHECK_NEAR(sim_world_positions(w)[i][1], 0.002, 2e-4);
	CHECK(sim_world_stats(w)->kinetic < 1e-6);
	sim_world_destroy(&w);
}

/* A cloth pressed onto a ball at 1/90 s keeps its candidates.  At 40 g the integrator
 * sends every vertex about 50 mm into the ball at each step (g h^2), far beyond its
 * box's reach (1.7 mm), and the ball's pass (an exact-distance obstacle) stops it.  With that
 * pass before the broad phase the boxes are made from what is left, no motion, and stand
 * still, so no step needs a broad phase or a refresh.  With the pass after it, every
 * vertex left its box at every step and the sweeps' refresh ran a full broad phase. */
static void test_resting_cloth_keeps_its_boxes(void)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = SIM_IMPLICIT;
	def.self_collisions = true;
	def.gravity[1] = -40.0f * 9.81f;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	/* a ball of 10 m, its top at the origin: a 0.4 m sheet on it rests within 2 mm of
	 * flat, and sticks (mu 1 against a slope of 1 degree at most) */
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 10.0f;
	ball.position[1] = -10.0f;
	ball.friction = 1.0f;
	REQUIRE(sim_world_add_obstacle(w, &ball) == 0);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 17;
	g.size_x = g.size_y = 0.4f;
	g.origin[0] = -0.2f, g.origin[1] = 0.0015f, g.origin[2] = -0.2f; /* the half thickness up */
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.friction = 1.0f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	const float h = 1.0f / 90.0f;
	int full0 = 0, dirty0 = 0, full1 = 0, dirty1 = 0;
	for (int s = 0; s < 50; s++) {
		REQUIRE(sim_world_step(w, h) == SIM_OK);
		const sim_stats *st = sim_world_stats(w);
		*(s < 20 ? &full0 : &full1) += st->broad_phases;
		*(s < 20 ? &dirty0 : &dirty1) += st->refreshed_triangles;
	}
	printf("over 30 steps at rest: %d full broad phases, %d triangles refreshed (%d and %d before)\n", full1, dirty1,
	       full0, dirty0);
	CHECK(full0 >= 1); /* the counters count */
	CHECK(full1 == 0);
	CHECK(dirty1 == 0);
	/* at rest on the ball: no vertex closer than its separation (the half thickness),
	 * none far above (a vertex whose path meets the ball loses its whole approach for
	 * the step, so the ones the first steps stopped a little above stay there) */
	double lo = 1.0, hi = 0.0;
	for (int i = 0; i < sim_world_vertex_count(w); i++) {
		const float *p = sim_world_positions(w)[i];
		double r = sqrt((double)p[0] * p[0] + ((double)p[1] + 10.0) * ((double)p[1] + 10.0) + (double)p[2] * p[2]);
		lo = r - 10.0 < lo ? r - 10.0 : lo;
		hi = r - 10.0 > hi ? r - 10.0 : hi;
	}
	printf("heights above the ball %.6f to %.6f m, kinetic energy %g J\n", lo, hi, (double)sim_world_stats(w)->kinetic);
	CHECK(lo >= 0.0015 - 1e-5);
	CHECK(hi < 0.01);
	CHECK(sim_world_stats(w)->kinetic < 1e-9);
	sim_world_destroy(&w);
}

/* Coulomb friction on a tilted plane: with mu above tan(slope) a sheet placed on it stays,
 * below it slides. */
/* A small sheet placed on a slope of `slope` radians through the origin, downhill -x:
 * the tilted plane, or a ball of 10 m whose surface passes there at that slope (its
 * exact-distance path rather than the plane's triangles).  Cloth and obstacle have
 * friction mu; pair_mu >= 0 sets the pair's own coefficient.  Returns how far the
 * sheet's centre went downhill in 1 s. */
static double slide_on(sim_shape shape, float mu, float slope, float pair_mu)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NAN;
	float c = cosf(slope), s = sinf(slope);
	sim_obstacle_def ob = sim_obstacle_def_default(shape);
	ob.friction = mu;
	if (shape == SIM_SHAPE_SPHERE) {
		ob.radius = 10.0f;
		ob.position[0] = 10.0f * s, ob.position[1] = -10.0f * c;
	} else {
		glm_quatv(ob.orientation, slope, (vec3){0.0f, 0.0f, 1.0f}); /* tilted about z */
	}
	sim_world_add_obstacle(w, &ob);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 5;
	g.size_x = g.size_y = 0.2f;
	g.axis_u[0] = c, g.axis_u[1] = s, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	/* on the slope, lifted by the half thickness along its normal (-s, c, 0) */
	g.origin[0] = -0.1f * c - 0.0015f * s, g.origin[1] = -0.1f * s + 0.0015f * c, g.origin[2] = -0.1f;
	g.material.friction = mu;
	g.material.stiffness[0] = 50.0f, g.material.stiffness[1] = 20.0f, g.material.stiffness[2] = 1.0f;
	sim_world_add_grid(w, &g);
	if (pair_mu >= 0.0f &&
	    sim_world_set_pair_friction(w, (sim_body){false, 0}, (sim_body){true, 0}, pair_mu) != SIM_OK) {
		sim_world_destroy(&w);
		return NAN;
	}
	double x0 = sim_world_positions(w)[12][0];
	for (int i = 0; i < 1000; i++)
		if (sim_world_step(w, 1e-3f) != SIM_OK)
			break;
	double moved = x0 - sim_world_positions(w)[12][0];
	sim_world_destroy(&w);
	return moved;
}

static double slide(float mu, float slope) { return slide_on(SIM_SHAPE_PLANE, mu, slope, -1.0f); }

/* The same sheet on a larger pinned sheet lying on the slope (cloth on cloth, both of
 * friction mu, 3 mm apart: their two half thicknesses); pair_mu >= 0 sets the two cloth
 * objects' own coefficient. */
static double slide_on_cloth(float mu, float slope, float pair_mu)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NAN;
	float c = cosf(slope), s = sinf(slope);
	sim_grid_def g = sim_grid_def_default();
	g.axis_u[0] = c, g.axis_u[1] = s, g.axis_u[2] = 0.0f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	g.material.friction = mu;
	g.material.stiffness[0] = 50.0f, g.material.stiffness[1] = 20.0f, g.material.stiffness[2] = 1.0f;
	sim_grid_def base = g;
	base.nx = base.ny = 9;
	base.size_x = base.size_y = 2.0f;
	base.origin[0] = -1.0f * c, base.origin[1] = -1.0f * s, base.origin[2] = -1.0f;
	g.nx = g.ny = 5;
	g.size_x = g.size_y = 0.2f;
	g.origin[0] = -0.1f * c - 0.003f * s, g.origin[1] = -0.1f * s + 0.003f * c, g.origin[2] = -0.1f;
	if (sim_world_add_grid(w, &base) != 0 || sim_world_add_grid(w, &g) != 1) {
		sim_world_destroy(&w);
		return NAN;
	}
	for (int i = 0; i < 81; i++)
		sim_world_pin(w, i, true);
	if (pair_mu >= 0.0f &&
	    sim_world_set_pair_friction(w, (sim_body){false, 1}, (sim_body){false, 0}, pair_mu) != SIM_OK) {
		sim_world_destroy(&w);
		return NAN;
	}
	double x0 = sim_world_positions(w)[81 + 12][0];
	for (int i = 0; i < 1000; i++)
		if (sim_world_step(w, 1e-3f) != SIM_OK)
			break;
	double moved = x0 - sim_world_positions(w)[81 + 12][0];
	sim_world_destroy(&w);
	return moved;
}

static void test_friction(void)
{
	float slope = 0.3f; /* tan = 0.31 */
	double stick = slide(0.6f, slope), slip = slide(0.1f, slope);
	CHECK_MSG(fabs(stick) < 0.005, "mu 0.6 on a 0.31 slope moved %.4f m", stick);
	/* mu 0.1: a = g (sin - mu cos) = 1.96 m/s^2, 0.98 m in 1 s without drag */
	CHECK_MSG(slip > 0.5, "mu 0.1 slid only %.4f m", slip);
}

/* A pair's own coefficient wins over the two bodies' (whose geometric mean is then
 * theirs): on the plane (contacts with its triangles), on a ball (the exact-distance
 * pass) and on a pinned cloth, a slippery cloth on a slippery slope sticks with a pair coefficient of 0.9, and
 * a rough pair slides with 0.05 (a = g (sin - 0.05 cos) = 2.4 m/s^2). */
static void test_pair_friction(void)
{
	float slope = 0.3f;
	const sim_shape shapes[2] = {SIM_SHAPE_PLANE, SIM_SHAPE_SPHERE};
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "ball" : "plane";
		double slip = slide_on(shapes[k], 0.1f, slope, -1.0f), held = slide_on(shapes[k], 0.1f, slope, 0.9f);
		double stick = slide_on(shapes[k], 0.9f, slope, -1.0f), freed = slide_on(shapes[k], 0.9f, slope, 0.05f);
		CHECK_MSG(slip > 0.5, "%s, mu 0.1: slid only %.4f m", name, slip);
		CHECK_MSG(fabs(held) < 0.005, "%s, mu 0.1 with the pair at 0.9: moved %.4f m", name, held);
		CHECK_MSG(fabs(stick) < 0.005, "%s, mu 0.9: moved %.4f m", name, stick);
		CHECK_MSG(freed > 0.5, "%s, mu 0.9 with the pair at 0.05: slid only %.4f m", name, freed);
	}
	double slip = slide_on_cloth(0.1f, slope, -1.0f), held = slide_on_cloth(0.1f, slope, 0.9f);
	double stick = slide_on_cloth(0.9f, slope, -1.0f), freed = slide_on_cloth(0.9f, slope, 0.05f);
	CHECK_MSG(slip > 0.5, "cloth, mu 0.1: slid only %.4f m", slip);
	CHECK_MSG(fabs(held) < 0.005, "cloth, mu 0.1 with the pair at 0.9: moved %.4f m", held);
	CHECK_MSG(fabs(stick) < 0.005, "cloth, mu 0.9: moved %.4f m", stick);
	CHECK_MSG(freed > 0.5, "cloth, mu 0.9 with the pair at 0.05: slid only %.4f m", freed);
	/* the table itself */
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_obstacle_def ob = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ob.friction = 0.4f;
	REQUIRE(sim_world_add_obstacle(w, &ob) == 0);
	REQUIRE(sim_world_add_obstacle(w, &ob) == 1);
	sim_grid_def g = sim_grid_def_default();
	g.material.friction = 0.9f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	const sim_body cloth = {false, 0}, ball = {true, 0}, other = {true, 1};
	CHECK_NEAR(sim_world_pair_friction(w, cloth, ball), 0.6, 1e-6); /* sqrt(0.9 * 0.4) */
	CHECK_NEAR(sim_world_pair_friction(w, cloth, cloth), 0.9, 1e-6);
	CHECK(sim_world_set_pair_friction(w, ball, cloth, 0.25f) == SIM_OK);
	CHECK(sim_world_pair_friction(w, cloth, ball) == 0.25f); /* either order */
	CHECK(sim_world_set_pair_friction(w, cloth, cloth, 0.7f) == SIM_OK);
	CHECK(sim_world_pair_friction(w, cloth, cloth) == 0.7f);
	CHECK_NEAR(sim_world_pair_friction(w, cloth, other), 0.6, 1e-6); /* untouched */
	CHECK(sim_world_set_pair_friction(w, cloth, ball, -1.0f) == SIM_OK); /* removed */
	CHECK_NEAR(sim_world_pair_friction(w, cloth, ball), 0.6, 1e-6);
	CHECK(sim_world_set_pair_friction(w, ball, other, 0.5f) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_pair_friction(w, cloth, (sim_body){true, 2}, 0.5f) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_pair_friction(w, (sim_body){false, 1}, ball, 0.5f) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_pair_friction(w, cloth, ball, NAN) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_pair_friction(w, cloth, ball, INFINITY) == SIM_ERROR_INVALID);
	CHECK(isnan(sim_world_pair_friction(w, ball, other)));
	sim_world_destroy(&w);
}

/* The pinned wall keeps its place while the dart lands on it and pushes. */
static void test_kinematic_vertices_unmoved(void)
{
	sim_world *w = dart_world(5.0f);
	REQUIRE(w);
	vec4 wall[3];
	memcpy(wall, sim_world_positions(w), sizeof wall);
	int impulses = 0;
	for (int s = 0; s < 30; s++) {
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		impulses += sim_world_stats(w)->collisions + sim_world_stats(w)->contacts;
	}
	CHECK_MSG(impulses > 0, "the dart never touched the wall");
	for (int i = 0; i < 3; i++)
		for (int k = 0; k < 3; k++)
			CHECK(sim_world_positions(w)[i][k] == wall[i][k]);
	sim_world_destroy(&w);
}

/* The check itself: two separate triangles, one piercing the other, count 1. */
static void test_check_counts(void)
{
	sim_world *w = zero_g_world();
	REQUIRE(w);
	sim_world_def def = *sim_world_get_def(w);
	def.collisions = false;
	REQUIRE(sim_world_set_def(w, &def) == SIM_OK);
	static const float a[9] = {-1, 0, -1, 1, 0, -1, 0, 0, 1};
	static const float b[9] = {0, -0.5f, 0, 0.2f, 0.5f, 0, -0.2f, 0.5f, 0.1f};
	REQUIRE(add_triangle(w, "a", a, NULL) == 0);
	REQUIRE(add_triangle(w, "b", b, NULL) == 1);
	int inter = -1, inside = -1;
	sim_world_check(w, &inter, &inside);
	CHECK(inter == 1);
	CHECK(inside == 0);
	sim_world_destroy(&w);
}


/* A 33 x 33 cloth released hanging above the floor, as the pile scene's: it folds onto
 * itself, so the vertices leave their broad-phase boxes at every step and the candidates
 * are refreshed in place, during the collision sweeps too. */
static sim_world *folding_cloth(void) { return hanging_pile(SIM_SYMPLECTIC, 33, 1.0f, 1.05f); }

/* The log's pairs of one stage, sorted; with `again`, only those recorded more than once
 * (the sweeps' candidates are recorded whole once, then each refresh's additions: a pair
 * recorded twice was dropped by an in-place refresh and found again). */
static pair_key *stage_keys(const sim_world *w, int stage, bool again, int *count)
{
	const sim_debug_pair *p = NULL;
	bool truncated = true;
	int n = sim_world_debug_pairs(w, &p, &truncated), m = 0;
	pair_key *k = malloc(sizeof(pair_key) * (size_t)(n ? n : 1));
	if (!k || truncated)
		return free(k), NULL;
	for (int i = 0; i < n; i++)
		if (p[i].stage == stage)
			k[m++] = pair_key_of(p[i].kind, p[i].v);
	qsort(k, (size_t)m, sizeof(pair_key), pair_key_cmp);
	if (again) {
		int r = 0;
		for (int i = 1; i < m; i++)
			if (pair_key_cmp(&k[i], &k[i - 1]) == 0 && (r == 0 || pair_key_cmp(&k[r - 1], &k[i]) != 0))
				k[r++] = k[i];
		m = r;
	}
	*count = m;
	return k;
}

/* Every candidate's start-distance bound is a lower bound on its primitives' distance at
 * the step's start (the contacts and the sweeps skip a pair by it): checked against the
 * exact distance of every cloth candidate after every step while the cloth folds.  And a
 * bound belongs to the pair, not to its boxes: a pair that an in-place refresh drops and
 * finds again keeps the bound it had, so after a step every candidate that the step's
 * contact search tested (and gave a bound) still has a positive one, also those the
 * collision sweeps' refreshes found again (which used to start again from none). */
static void test_refreshed_bounds_are_lower_bounds(void)
{
	sim_world *w = folding_cloth();
	REQUIRE(w);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS);
	const int n = sim_world_vertex_count(w), cap = 200000;
	vec4 *x = malloc(sizeof(vec4) * (size_t)n);
	int(*v)[4] = malloc(sizeof(int[4]) * (size_t)cap);
	double *lb = malloc(sizeof(double) * (size_t)cap);
	REQUIRE(x && v && lb);
	long checked = 0, above = 0, searched = 0, unbounded = 0, refound = 0;
	for (int s = 0; s < 700; s++) {
		memcpy(x, sim_world_positions(w), sizeof(vec4) * (size_t)n);
		sim_result r = sim_world_step(w, 1e-3f);
		REQUIRE_MSG(r == SIM_OK, "step %d: %s", s + 1, sim_result_string(r));
		int nvf = 0, count = sim_collide_debug_candidates(w->collide, v, lb, cap, &nvf);
		REQUIRE(count <= cap);
		int nprox = 0, nagain = 0;
		pair_key *prox = stage_keys(w, SIM_PAIR_BROAD_PROXIMITY, false, &nprox);
		pair_key *again = stage_keys(w, SIM_PAIR_BROAD_COLLISION, true, &nagain);
		REQUIRE(prox && again);
		for (int q = 0; q < count; q++) {
			if (v[q][0] >= n || v[q][1] >= n || v[q][2] >= n || v[q][3] >= n)
				continue; /* the floor's */
			double p[4][3], wts[3], uu, vv;
			for (int k = 0; k < 4; k++)
				for (int j = 0; j < 3; j++)
					p[k][j] = x[v[q][k]][j];
			double d = q < nvf ? sqrt(sim_geom_point_triangle(p[0], p[1], p[2], p[3], wts))
			                   : sqrt(sim_geom_segment_segment(p[0], p[1], p[2], p[3], &uu, &vv));
			checked++;
			if (lb[q] > d * (1.0 + 1e-9) + 1e-12 && above++ < 5)
				printf("step %d: candidate (%d %d %d %d): bound %.9g above the distance %.9g\n", s + 1, v[q][0],
				       v[q][1], v[q][2], v[q][3], lb[q], d);
			pair_key key = pair_key_of(q < nvf ? SIM_PAIR_VERTEX_TRIANGLE : SIM_PAIR_EDGE_EDGE, v[q]);
			if (d > 0.0 && bsearch(&key, prox, (size_t)nprox, sizeof key, pair_key_cmp)) {
				searched++;
				unbounded += !(lb[q] > 0.0);
				refound += bsearch(&key, again, (size_t)nagain, sizeof key, pair_key_cmp) != NULL;
			}
		}
		free(prox), free(again);
	}
	printf("%ld cloth candidates after the steps, %ld bounds above the distance; %ld were tested by the step's "
	       "contact search, %ld of them found again by a sweep's refresh, %ld without a bound\n",
	       checked, above, searched, refound, unbounded);
	CHECK(above == 0);
	CHECK(unbounded == 0);
	CHECK_MSG(refound > 20, "only %ld candidates found again by the sweeps' refreshes", refound);
	free(x), free(v), free(lb);
	sim_world_destroy(&w);
}

/* The broad phase a window's last substep starts and the next finishes misses nothing:
 * while a 13 x 13 cloth folds onto itself (1 ms steps, windows of four), at every step
 * each pair of its primitives that brute force finds closer than the separation at the
 * step's start (but for a relative 1e-6 at the border) is among the candidates the
 * contacts test, and most windows did start early. */
static void test_early_window_misses_nothing(void)
{
	sim_world *w = hanging_pile(SIM_SYMPLECTIC, 13, 0.4f, 0.45f);
	REQUIRE(w);
	sim_world_set_debug(w, SIM_DEBUG_PAIRS);
	const int n = sim_world_vertex_count(w), nt = sim_world_object_triangle_count(w, 0);
	const int *tri = sim_world_object_triangles(w, 0);
	const double sep = (double)sim_world_object_material(w, 0)->thickness, lo = sep * (1.0 - 1e-6);
	/* the cloth's edges, each once */
	int(*edges)[2] = malloc(sizeof(int[2]) * 3 * (size_t)nt);
	vec4 *x = malloc(sizeof(vec4) * (size_t)n);
	REQUIRE(edges && x && nt == 288);
	int ne = 0;
	for (int t = 0; t < nt; t++) {
		for (int j = 0; j < 3; j++) {
			int a = tri[3 * t + j], b = tri[3 * t + (j + 1) % 3], lo_v = a < b ? a : b, hi_v = a < b ? b : a, k = 0;
			while (k < ne && !(edges[k][0] == lo_v && edges[k][1] == hi_v))
				k++;
			if (k == ne)
				edges[ne][0] = lo_v, edges[ne][1] = hi_v, ne++;
		}
	}
	long close = 0, missed = 0;
	for (int s = 0; s < 600; s++) {
		memcpy(x, sim_world_positions(w), sizeof(vec4) * (size_t)n);
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
		int nprox = 0;
		pair_key *prox = stage_keys(w, SIM_PAIR_BROAD_PROXIMITY, false, &nprox);
		REQUIRE(prox);
		double p[4][3];
		for (int t = 0; t < nt; t++) {
			const int *tv = &tri[3 * t];
			for (int v = 0; v < n; v++) {
				if (v == tv[0] || v == tv[1] || v == tv[2])
					continue;
				int idx[4] = {v, tv[0], tv[1], tv[2]};
				for (int k = 0; k < 4; k++)
					for (int j = 0; j < 3; j++)
						p[k][j] = x[idx[k]][j];
				double wts[3];
				if (sim_geom_point_triangle(p[0], p[1], p[2], p[3], wts) >= lo * lo)
					continue;
				pair_key key = pair_key_of(SIM_PAIR_VERTEX_TRIANGLE, idx);
				close++;
				missed += !bsearch(&key, prox, (size_t)nprox, sizeof key, pair_key_cmp);
			}
		}
		for (int a = 0; a < ne; a++) {
			for (int b = a + 1; b < ne; b++) {
				if (edges[a][0] == edges[b][0] || edges[a][0] == edges[b][1] || edges[a][1] == edges[b][0] ||
				    edges[a][1] == edges[b][1])
					continue;
				int idx[4] = {edges[a][0], edges[a][1], edges[b][0], edges[b][1]};
				for (int k = 0; k < 4; k++)
					for (int j = 0; j < 3; j++)
						p[k][j] = x[idx[k]][j];
				double u, v;
				if (sim_geom_segment_segment(p[0], p[1], p[2], p[3], &u, &v) >= lo * lo)
					continue;
				pair_key key = pair_key_of(SIM_PAIR_EDGE_EDGE, idx);
				close++;
				missed += !bsearch(&key, prox, (size_t)nprox, sizeof key, pair_key_cmp);
			}
		}
		free(prox);
	}
	int early = sim_collide_debug_early_windows(w->collide);
	printf("%ld pairs of the cloth closer than %g m over the steps, %ld not candidates; %d windows started early\n",
	       close, sep, missed, early);
	CHECK(missed == 0);
	CHECK(close > 1000);
	CHECK_MSG(early > 20, "only %d windows started early", early);
	free(edges), free(x);
	sim_world_destroy(&w);
}

/* The bounds a broad phase carries over are those of the same pairs in the list it set
 * aside, whichever way carry_bounds finds them (its index, or the walk along the old
 * list's run of neighbour-list candidates): at every step of a 33 x 33 sheet falling
 * onto a ball at 1/90 s (a full broad phase at every step, refreshes in the sweeps),
 * carry_bounds' result for the candidates as they stand against a brute-force lookup of
 * every pair among the sorted old ones, bit for bit, and the run gave some of them (46:
 * the separating axes over the vertices' balls leave few neighbour-list pairs, where the
 * x, y and z tests alone left over 10 000, and the axes over cubes 191). */
static void test_carried_bounds_are_the_old_pairs(void)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = SIM_IMPLICIT;
	def.self_collisions = true;
	sim_world *w = sim_world_create(&def);
	REQUIRE(w);
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 0.12f;
	ball.position[1] = 0.12f;
	REQUIRE(sim_world_add_obstacle(w, &ball) == 0);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 33;
	g.size_x = g.size_y = 0.4f;
	g.origin[0] = -0.2f, g.origin[1] = 1.0f, g.origin[2] = -0.2f;
	g.axis_v[0] = 0.0f, g.axis_v[1] = 0.0f, g.axis_v[2] = 1.0f;
	REQUIRE(sim_world_add_grid(w, &g) == 0);
	long differ = 0, from_run = 0, checked = 0;
	int full = 0, refreshed = 0;
	for (int s = 0; s < 90; s++) {
		REQUIRE_MSG(sim_world_step(w, 1.0f / 90.0f) == SIM_OK, "step %d", s + 1);
		full += sim_world_stats(w)->broad_phases;
		refreshed += sim_world_stats(w)->refreshed_triangles;
		int run = 0, d = sim_collide_debug_carry(w->collide, w, &run);
		REQUIRE_MSG(d >= 0, "step %d: no set-aside list", s + 1);
		if (d > 0 && differ < 5)
			printf("step %d: %d candidates with another bound than their old pair's\n", s + 1, d);
		differ += d;
		from_run += run;
		checked++;
	}
	printf("%ld steps: %ld candidates with another bound, %ld old pairs found in the run; %d full broad phases, "
	       "%d triangles refreshed\n",
	       checked, differ, from_run, full, refreshed);
	CHECK(differ == 0);
	CHECK(from_run > 20);
	CHECK(full >= 60);
	sim_world_destroy(&w);
}


/* ---- separating axes over kinetic boxes (sep_axis.h) ------------------------------------------ */

static uint64_t axis_rng = 0x9e3779b97f4a7c15ull;

static double axis_rand(void) /* uniform in [0, 1) */
{
	axis_rng = axis_rng * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(axis_rng >> 11) * 0x1p-53;
}

/* A vertex's ball as collide.c's vertex_box writes it: float centres at the window's
 * ends and the radius reach. */
typedef struct test_ball {
	float s[2][3], reach;
} test_ball;

static void make_ball(test_ball *b, vsphere *v, const float s0[3], const float s1[3], float reach)
{
	for (int k = 0; k < 3; k++)
		b->s[0][k] = s0[k], b->s[1][k] = s1[k];
	b->reach = reach;
	vsphere_set(v, s0, s1, reach);
}

/* |m|_2 in long double: the float parts' squares are exact (48 bits of 64), their sum
 * and root are off by a few 2^-64, far below the margins tested. */
static long double exact_length(const float m[3])
{
	return sqrtl((long double)m[0] * m[0] + (long double)m[1] * m[1] + (long double)m[2] * m[2]);
}

/* The exact gap along m at end e between the hull of balls a and that of balls b (each
 * s.m -/+ reach |m|_2): the centres' products with the axis are exact in long double
 * (24 + 24 bits), and their sums lose nothing that matters at the margins tested. */
static long double exact_gap(const test_ball *bx, const int *a, int na, const int *b, int nb, const float m[3], int e)
{
	const long double len = exact_length(m);
	long double top = -INFINITY, bottom = INFINITY;
	for (int j = 0; j < na; j++) {
		long double d = (long double)bx[a[j]].reach * len;
		for (int k = 0; k < 3; k++)
			d += (long double)bx[a[j]].s[e][k] * m[k];
		top = d > top ? d : top;
	}
	for (int j = 0; j < nb; j++) {
		long double d = -(long double)bx[b[j]].reach * len;
		for (int k = 0; k < 3; k++)
			d += (long double)bx[b[j]].s[e][k] * m[k];
		bottom = d < bottom ? d : bottom;
	}
	return bottom - top;
}

/* apart_along (and its vector forms for a vertex against a triangle and an edge against
 * an edge) says apart only when the balls' hulls are apart along the axis at both ends,
 * exactly: random balls a metre, a millimetre or a kilometre from the origin, with b
 * shifted along the axis so that the exact gap is within a few roundings of zero (most
 * trials) or anything, along random axes, the centroids' axis, and axes along x, y or z
 * or the diagonals (where |m|_1 and |m|_2 differ most).  And it is not uselessly
 * cautious: a gap above 2^-16 of the coordinates' size is always found.  Planting an
 * error in vsphere_set's rounding allowance (2^-20 of the size, set to 0) makes it say
 * apart where the hulls overlap (random trials do not reach the worst case the allowance
 * is for: 2^-22 passes). */
static void test_separating_axes_are_exact(void)
{
	long trials = 0, apart = 0, near = 0, wrong = 0, missed = 0, differ = 0;
	for (int trial = 0; trial < 200000; trial++) {
		const double scales[3] = {1e-3, 1.0, 1e3};
		const double scale = scales[trial % 3];
		const int shape = (trial / 3) % 3;          /* 1-3, 2-2, 3-3 vertices */
		const int na = shape == 0 ? 1 : shape == 1 ? 2 : 3, nb = shape == 0 ? 3 : shape == 1 ? 2 : 3;
		const float reach = (trial / 9) % 4 == 0 ? 0.0f : (float)(scale * 1e-2 * axis_rand());
		test_ball bx[6];
		vsphere vs[6];
		int a[3], b[3];
		for (int j = 0; j < na; j++)
			a[j] = j;
		for (int j = 0; j < nb; j++)
			b[j] = na + j;
		/* centres: a cluster around o, b around o + 3 spread along a random direction */
		double o[3], dir[3], spread = scale * (0.01 + axis_rand());
		for (int k = 0; k < 3; k++)
			o[k] = scale * (2.0 * axis_rand() - 1.0), dir[k] = 2.0 * axis_rand() - 1.0;
		float c[6][2][3];
		for (int j = 0; j < na + nb; j++)
			for (int e = 0; e < 2; e++)
				for (int k = 0; k < 3; k++)
					c[j][e][k] = (float)(o[k] + (j >= na ? 3.0 * spread * dir[k] : 0.0) +
					                     spread * (2.0 * axis_rand() - 1.0) + (e ? spread * 0.3 * axis_rand() : 0.0));
		for (int j = 0; j < na + nb; j++)
			make_ball(&bx[j], &vs[j], c[j][0], c[j][1], reach);
		float m[3];
		const int kind = (trial / 36) % 4;
		if (kind == 0)
			centroid_axis(vs, a, na, b, nb, m);
		else if (kind == 1)
			for (int k = 0; k < 3; k++)
				m[k] = (float)(2.0 * axis_rand() - 1.0);
		else /* an axis (kind 2) or a diagonal (kind 3), either way */
			for (int k = 0; k < 3; k++)
				m[k] = (kind == 3 || k == trial % 3 ? 1.0f : 0.0f) * (axis_rand() < 0.5 ? -1.0f : 1.0f);
		/* most trials: move b along m until the smaller exact gap of the two ends is a
		 * few roundings of the coordinates either side of zero */
		const double len = (double)exact_length(m);
		if (trial % 8 != 0) {
			double mm = len * len;
			long double g0 = exact_gap(bx, a, na, b, nb, m, 0), g1 = exact_gap(bx, a, na, b, nb, m, 1);
			double g = (double)(g0 < g1 ? g0 : g1);
			double target = (2.0 * axis_rand() - 1.0) * 64.0 * 0x1p-24 * (scale + reach) * len;
			for (int j = na; j < na + nb; j++) {
				for (int e = 0; e < 2; e++)
					for (int k = 0; k < 3; k++)
						c[j][e][k] = (float)(c[j][e][k] + (target - g) * m[k] / mm);
				make_ball(&bx[j], &vs[j], c[j][0], c[j][1], reach);
			}
			near++;
		}
		bool said = apart_along(vs, a, na, b, nb, m);
		if (shape == 0)
			differ += apart_1_3(vs, a[0], b, m) != said;
		else if (shape == 1)
			differ += apart_2_2(vs, a, b, m) != said;
		else
			differ += apart_3_3(vs, a, b, m) != said;
		long double g0 = exact_gap(bx, a, na, b, nb, m, 0), g1 = exact_gap(bx, a, na, b, nb, m, 1);
		trials++;
		apart += said;
		if (said && !(g0 > 0.0L && g1 > 0.0L)) {
			if (wrong < 5)
				fprintf(stderr, "trial %d: apart, but exact gaps %Lg and %Lg\n", trial, g0, g1);
			wrong++;
		}
		double clear = 0x1p-16 * ((double)scale * 4.0 + (double)reach) * len;
		missed += !said && g0 > (long double)clear && g1 > (long double)clear;
	}
	printf("%ld trials (%ld near the border): %ld apart, %ld wrongly, %ld clear gaps missed, %ld vector forms "
	       "differing\n",
	       trials, near, apart, wrong, missed, differ);
	CHECK(wrong == 0);
	CHECK(missed == 0);
	CHECK(differ == 0);
	CHECK(apart > trials / 10 && apart < trials - trials / 10); /* both answers, often */
	/* an axis too short or too long to square in float separates nothing */
	{
		test_ball bx[2];
		vsphere vs[2];
		const float s0[3] = {0.0f, 0.0f, 0.0f}, s1[3] = {1.0f, 0.0f, 0.0f};
		make_ball(&bx[0], &vs[0], s0, s0, 0.1f);
		make_ball(&bx[1], &vs[1], s1, s1, 0.1f);
		int ia = 0, ib = 1;
		const float fine[3] = {1.0f, 0.0f, 0.0f}, tiny[3] = {0x1p-41f, 0.0f, 0.0f}, huge[3] = {0x1p41f, 0.0f, 0.0f};
		CHECK(apart_along(vs, &ia, 1, &ib, 1, fine));
		CHECK(!apart_along(vs, &ia, 1, &ib, 1, tiny));
		CHECK(!apart_along(vs, &ia, 1, &ib, 1, huge));
	}
}

/* ball_holds, the escape check, holds a point (with its margin) only where it is inside
 * the ball of radius reach around the exact centre at that time, and inside the float
 * cube there (fl(s -/+ reach) per axis at each end, interpolated exactly), which the
 * trees and kbox_overlap rely on: random centres a millimetre, a metre or a kilometre
 * from the origin, moving or not, at the times the escape check uses (tau / W and
 * (tau + 1) / W), points at the ball's border within a few roundings, along random
 * directions, the axes (where the ball touches the cube) and the diagonals.  And it is
 * not uselessly cautious: a point 2^-16 of the coordinates' size inside is always held.
 * Planting an error in vsphere_ball's allowance (2^-19 of the size, set to 0) makes it
 * hold points outside the ball and the cube (2^-23 passes: random points do not reach
 * the worst case). */
static void test_ball_check_is_exact(void)
{
	long trials = 0, held = 0, outside_ball = 0, outside_cube = 0, missed = 0;
	for (int trial = 0; trial < 400000; trial++) {
		const double scales[3] = {1e-3, 1.0, 1e3};
		const double scale = scales[trial % 3];
		const float reach = (float)(scale * 1e-2 * (0.01 + axis_rand()));
		float s[2][3];
		const bool still = (trial / 3) % 4 == 0;
		for (int k = 0; k < 3; k++) {
			s[0][k] = (float)(scale * (2.0 * axis_rand() - 1.0));
			s[1][k] = still ? s[0][k] : (float)(s[0][k] + scale * 1e-2 * (2.0 * axis_rand() - 1.0));
		}
		vsphere v;
		vsphere_set(&v, s[0], s[1], reach);
		const float rb = vsphere_ball(s[0], s[1], reach);
		const int window = 1 + (int)(16.0 * axis_rand()), tau = (int)((window + (still ? 2 : 1)) * axis_rand());
		const float f = (float)tau / (float)window; /* as escape_range computes it */
		const long double fx = (long double)tau / (long double)window;
		const float margin = (trial / 12) % 3 == 0 ? 0.0f : (float)(reach * axis_rand());
		/* the exact centre at that time, and the float cube's faces there */
		long double cx[3], lo[3], hi[3];
		for (int k = 0; k < 3; k++) {
			float lo0 = s[0][k] - reach, lo1 = s[1][k] - reach, hi0 = s[0][k] + reach, hi1 = s[1][k] + reach;
			cx[k] = (long double)s[0][k] + fx * ((long double)s[1][k] - (long double)s[0][k]);
			lo[k] = (long double)lo0 + fx * ((long double)lo1 - (long double)lo0);
			hi[k] = (long double)hi0 + fx * ((long double)hi1 - (long double)hi0);
		}
		/* a direction: random, an axis or a diagonal */
		double dir[3], dn = 0.0;
		const int kind = (trial / 36) % 3;
		for (int k = 0; k < 3; k++) {
			double sign = axis_rand() < 0.5 ? -1.0 : 1.0;
			dir[k] = kind == 0 ? 2.0 * axis_rand() - 1.0 : kind == 1 ? (k == trial % 3 ? sign : 0.0) : sign;
			dn += dir[k] * dir[k];
		}
		dn = sqrt(dn);
		const double big = scale + reach;
		const double rho = (double)reach - (double)margin + (2.0 * axis_rand() - 1.0) * 64.0 * 0x1p-24 * big;
		float p[3];
		for (int k = 0; k < 3; k++)
			p[k] = (float)((double)cx[k] + rho * dir[k] / dn);
		const bool said = ball_holds(&v, rb, f, p, margin);
		long double d2 = 0.0L, r = (long double)reach - (long double)margin;
		bool in_cube = true;
		for (int k = 0; k < 3; k++) {
			long double d = (long double)p[k] - cx[k];
			d2 += d * d;
			in_cube &= (long double)p[k] - margin >= lo[k] && (long double)p[k] + margin <= hi[k];
		}
		trials++;
		held += said;
		outside_ball += said && !(r >= 0.0L && d2 <= r * r);
		if (said && !in_cube) {
			if (outside_cube < 5)
				fprintf(stderr, "trial %d: held, but outside the cube\n", trial);
			outside_cube++;
		}
		long double inner = r - 0x1p-16L * (long double)big;
		missed += !said && inner > 0.0L && d2 <= inner * inner;
	}
	printf("%ld points near the balls' borders: %ld held, %ld outside the ball, %ld outside the cube, %ld well "
	       "inside missed\n",
	       trials, held, outside_ball, outside_cube, missed);
	CHECK(outside_ball == 0);
	CHECK(outside_cube == 0);
	CHECK(missed == 0);
	CHECK(held > trials / 10 && held < trials - trials / 10);
}

/* A flat sheet at rest, tilted against every axis, at 1/90 s (the drape's windows of one
 * step, whose boxes reach 1.7 mm) and at 1 ms (windows of four, whose slack makes them
 * reach 2.8 mm): its triangles' boxes meet those two rings away and its neighbours'
 * boxes meet, but no two of its primitives that share no vertex come within 6.6 mm of
 * each other (a vertex across a diagonal), so the separating axes over the vertices'
 * balls leave no candidate at all (x, y and z alone left 1 606 of them at 1/90 s, 547
 * vertex-face pairs).  Over cubes (|m|_1 for |m|_2, with the cubes' slack of 3/8: a
 * reach of 2.6 mm) the 1 ms windows kept 6 016: such a cube reaches past 3.3 mm along
 * most tilted axes, a ball of 2.8 mm does not. */
static void test_tilted_sheet_has_no_candidates(void)
{
	const float steps[2] = {1.0f / 90.0f, 1e-3f};
	for (int run = 0; run < 2; run++) {
		sim_world_def def = sim_world_def_default();
		def.integrator = SIM_IMPLICIT;
		def.gravity[1] = 0.0f;
		def.self_collisions = true;
		sim_world *w = sim_world_create(&def);
		REQUIRE(w);
		sim_grid_def g = sim_grid_def_default();
		g.nx = g.ny = 33;
		g.size_x = g.size_y = 0.3f; /* edges of 9.4 mm, as the 129 x 129 drape's */
		const float u[3] = {0.8f, 0.6f, 0.0f}, v[3] = {-0.36f, 0.48f, 0.8f}; /* orthonormal */
		for (int k = 0; k < 3; k++)
			g.origin[k] = 0.0f, g.axis_u[k] = u[k], g.axis_v[k] = v[k];
		REQUIRE(sim_world_add_grid(w, &g) == 0);
		REQUIRE(sim_world_step(w, steps[run]) == SIM_OK);
		const sim_stats *st = sim_world_stats(w);
		printf("tilted 33 x 33 sheet at %g s: %ld candidates, %ld full broad phases\n", (double)steps[run],
		       (long)st->candidates, (long)st->broad_phases);
		CHECK(st->broad_phases == 1);
		CHECK(st->candidates == 0);
		sim_world_destroy(&w);
	}
}

/* A 33 x 33 sheet, flat or folded back on itself across x = 0.15 with its layers 2.5 mm
 * apart (under the 3 mm separation), at rest without gravity, one implicit step of 1/90 s. */
static sim_world *sheet(bool folded)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = SIM_IMPLICIT;
	def.gravity[1] = 0.0f;
	def.self_collisions = true;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 33;
	g.size_x = g.size_y = 0.3f;
	for (int k = 0; k < 3; k++)
		g.origin[k] = 0.0f, g.axis_u[k] = k == 0, g.axis_v[k] = k == 2;
	if (sim_world_add_grid(w, &g) != 0) {
		sim_world_destroy(&w);
		return NULL;
	}
	const float crease = 0.15f, gap = 0.0025f, arc = 3.14159265f * 0.5f * gap, zero[3] = {0.0f, 0.0f, 0.0f};
	for (int i = 0; folded && i < 33 * 33; i++) {
		const float *x = sim_world_positions(w)[i];
		float u = x[0], p[3] = {u, 0.0f, x[2]};
		if (u > crease + arc)
			p[0] = crease - (u - crease - arc), p[1] = gap;
		else if (u > crease)
			p[0] = crease + 0.5f * gap * sinf((u - crease) / (0.5f * gap)),
			p[1] = 0.5f * gap * (1.0f - cosf((u - crease) / (0.5f * gap)));
		sim_world_set_vertex(w, i, p, zero);
	}
	return w;
}

/* Patches (docs/collisions.md): a flat sheet is one, and its broad phase tests no
 * triangle pair and no neighbour-list entry at all; folded back on itself, the blocks
 * across the fold are not certified, their pairs are tested, and the two layers' contacts
 * are all found (as many as without patches: the contacts of a pair in a patch would be
 * impossible). */
static void test_flat_sheet_is_one_patch(void)
{
	sim_world *flat = sheet(false), *fold = sheet(true);
	REQUIRE(flat && fold);
	REQUIRE(sim_world_step(flat, 1.0f / 90.0f) == SIM_OK);
	REQUIRE(sim_world_step(fold, 1.0f / 90.0f) == SIM_OK);
	const sim_stats *a = sim_world_stats(flat), *b = sim_world_stats(fold);
	long ta = sim_collide_debug_tested(flat->collide), tb = sim_collide_debug_tested(fold->collide);
	printf("flat sheet: %d of %d blocks certified, %ld pairs tested; folded: %d certified, %ld tested, %d contacts\n",
	       a->patches, a->patch_blocks, ta, b->patches, tb, b->contacts);
	CHECK(a->patch_blocks == 256 + 64 + 16 + 4 + 1 && a->patches == a->patch_blocks);
	CHECK(ta == 0 && a->candidates == 0 && a->contacts == 0);
	CHECK(b->patch_blocks == a->patch_blocks && b->patches > b->patch_blocks / 2 && b->patches < b->patch_blocks);
	CHECK(tb > 10000);
	/* every vertex of the folded layer over the flat one is within 2.5 mm of it, and the
	 * contacts' impulses push the layers to the separation */
	CHECK(b->contacts > 500);
	float lowest = 1.0f;
	for (int i = 0; i < 33 * 33; i++) {
		const float *x = sim_world_positions(fold)[i];
		if (x[0] < 0.14f && x[1] > 0.001f)
			lowest = fminf(lowest, x[1]);
	}
	CHECK_MSG(lowest > 0.0025f, "the upper layer came down to %g m", (double)lowest);
	sim_world_destroy(&flat);
	sim_world_destroy(&fold);
}

/* A sheet crumpled at the scale of its mesh (every vertex 0 to 8 mm off the plane, at
 * random) has almost no patch: after a full broad phase that certified under a third of
 * its level-1 blocks, the next seven go without patches (they would cost more than they
 * save), and the eighth certifies again (by then the springs have smoothed it out: well).
 * The sheet lies still, no gravity, 1/90 s: a full broad phase every step. */
static void test_crumpled_sheet_rests_its_patches(void)
{
	sim_world *w = sheet(false);
	REQUIRE(w);
	uint64_t r = 12345;
	const float zero[3] = {0.0f, 0.0f, 0.0f};
	for (int i = 0; i < 33 * 33; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		const float *x = sim_world_positions(w)[i];
		float p[3] = {x[0], 0.008f * (float)(r >> 40) / (float)(1 << 24), x[2]};
		sim_world_set_vertex(w, i, p, zero);
	}
	int pattern[10];
	for (int s = 0; s < 10; s++) {
		REQUIRE(sim_world_step(w, 1.0f / 90.0f) == SIM_OK);
		const sim_stats *st = sim_world_stats(w);
		CHECK(st->broad_phases == 1);
		pattern[s] = st->patch_blocks > 0 ? 1 + (3 * st->patches < st->patch_blocks) : 0;
	}
	printf("crumpled sheet, patches by step (0: none, 1: certified, 2: certified poorly):");
	for (int s = 0; s < 10; s++)
		printf(" %d", pattern[s]);
	printf("\n");
	CHECK(pattern[0] == 2 && pattern[8] != 0);
	for (int s = 1; s < 8; s++)
		CHECK(pattern[s] == 0);
	sim_world_destroy(&w);
}

static const test_case tests[] = {
	TEST(test_fast_vertex_does_not_tunnel),
	TEST(test_fast_sphere_does_not_tunnel),
	TEST(test_vertex_grazing_ball_is_turned),
	TEST(test_vertex_grazing_capsule_is_turned),
	TEST(test_rests_at_thickness),
	TEST(test_resting_cloth_keeps_its_boxes),
	TEST(test_struck_vertex_kept_off_ball),
	TEST(test_sweep_times_within_ccd),
	TEST(test_friction),
	TEST(test_pair_friction),
	TEST(test_kinematic_vertices_unmoved),
	TEST(test_check_counts),
	TEST(test_refreshed_bounds_are_lower_bounds),
	TEST(test_early_window_misses_nothing),
	TEST(test_carried_bounds_are_the_old_pairs),
	TEST(test_separating_axes_are_exact),
	TEST(test_ball_check_is_exact),
	TEST(test_tilted_sheet_has_no_candidates),
	TEST(test_flat_sheet_is_one_patch),
	TEST(test_crumpled_sheet_rests_its_patches),
};
TEST_MAIN(tests)
