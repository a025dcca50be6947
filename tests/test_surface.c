/* The cloth's surface, not only its vertices, stays outside spheres, capsules and boxes.
 *
 * Coarse cloths (1 m, 5 x 5 and 9 x 9 vertices) fall onto obstacles much smaller than
 * their spacing, so that on a vertex-only scheme the obstacle comes up between the
 * vertices.  While they fall and after they settle, every triangle's distance to every
 * obstacle is measured here without the simulation's geometry: the distance from a point
 * to a convex solid is convex, so its minimum over a triangle is found by nested golden
 * section over the triangle's barycentric coordinates, and only point distances in
 * closed form (a ball, a segment, a box in its own frame) enter it.  And
 * sim_world_check_surface (tela run --check) against states it must fail: a ball through
 * the triangles between their vertices, a mesh poking through them. */
#include "sim/sim.h"

#include "test.h"

#include <cglm/quat.h>

/* The separation a cloth triangle keeps from an obstacle: half the cloth's thickness
 * (default 3 mm) plus the obstacle's (0 here). */
#define SEP 0.0015
/* What the test forgives below it: float end positions round by about 1e-7 m here, and
 * a pass that left its work unfinished would leave millimetres. */
#define TOL 1e-5

typedef struct solid {
	sim_shape shape;
	double c[3];     /* position */
	double m[3][3];  /* rotation, local to world: columns are the local axes */
	double r, hh;    /* radius; capsule half height */
	double he[3];    /* box half extents */
} solid;

static solid solid_of(const sim_world *w, int k)
{
	const sim_obstacle_def *d = sim_world_obstacle(w, k);
	vec3 p;
	versor q;
	sim_world_obstacle_pose(w, k, p, q);
	solid s = {.shape = d->shape, .r = d->radius, .hh = d->half_height};
	for (int a = 0; a < 3; a++) {
		s.c[a] = p[a];
		s.he[a] = d->half_extents[a];
	}
	double x = q[0], y = q[1], z = q[2], ww = q[3];
	double n = sqrt(x * x + y * y + z * z + ww * ww);
	x /= n, y /= n, z /= n, ww /= n;
	s.m[0][0] = 1 - 2 * (y * y + z * z), s.m[0][1] = 2 * (x * y - z * ww), s.m[0][2] = 2 * (x * z + y * ww);
	s.m[1][0] = 2 * (x * y + z * ww), s.m[1][1] = 1 - 2 * (x * x + z * z), s.m[1][2] = 2 * (y * z - x * ww);
	s.m[2][0] = 2 * (x * z - y * ww), s.m[2][1] = 2 * (y * z + x * ww), s.m[2][2] = 1 - 2 * (x * x + y * y);
	return s;
}

/* Distance from p to the solid (0 inside). */
static double point_solid(const solid *s, const double p[3])
{
	double d[3], l[3];
	for (int a = 0; a < 3; a++)
		d[a] = p[a] - s->c[a];
	for (int a = 0; a < 3; a++)
		l[a] = s->m[0][a] * d[0] + s->m[1][a] * d[1] + s->m[2][a] * d[2];
	double e = 0.0;
	switch (s->shape) {
	case SIM_SHAPE_SPHERE: e = sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]) - s->r; break;
	case SIM_SHAPE_CAPSULE: {
		double y = l[1] < -s->hh ? -s->hh : (l[1] > s->hh ? s->hh : l[1]);
		e = sqrt(l[0] * l[0] + (l[1] - y) * (l[1] - y) + l[2] * l[2]) - s->r;
		break;
	}
	case SIM_SHAPE_BOX:
		for (int a = 0; a < 3; a++) {
			double o = fabs(l[a]) - s->he[a];
			e += o > 0.0 ? o * o : 0.0;
		}
		e = sqrt(e);
		break;
	default: break;
	}
	return e > 0.0 ? e : 0.0;
}

static double at(const solid *s, const double t[3][3], double u, double v)
{
	double p[3];
	for (int a = 0; a < 3; a++)
		p[a] = t[0][a] + u * (t[1][a] - t[0][a]) + v * (t[2][a] - t[0][a]);
	return point_solid(s, p);
}

/* The least of f over v in [0, hi] at fixed u (golden section: f is convex in v). */
static double inner_min(const solid *s, const double t[3][3], double u, double hi)
{
	const double g = 0.3819660112501051;
	double lo = 0.0, a = lo + g * (hi - lo), b = hi - g * (hi - lo);
	double fa = at(s, t, u, a), fb = at(s, t, u, b);
	for (int it = 0; it < 40; it++) {
		if (fa <= fb) {
			hi = b, b = a, fb = fa, a = lo + g * (hi - lo), fa = at(s, t, u, a);
		} else {
			lo = a, a = b, fa = fb, b = hi - g * (hi - lo), fb = at(s, t, u, b);
		}
	}
	double best = fmin(fa, fb);
	best = fmin(best, at(s, t, u, 0.0));
	return fmin(best, at(s, t, u, 1.0 - u));
}

/* The distance from the triangle to the solid: the least over u of the least over v,
 * itself convex in u. */
static double triangle_solid(const solid *s, const double t[3][3])
{
	const double g = 0.3819660112501051;
	double lo = 0.0, hi = 1.0, a = g, b = 1.0 - g;
	double fa = inner_min(s, t, a, 1.0 - a), fb = inner_min(s, t, b, 1.0 - b);
	for (int it = 0; it < 40; it++) {
		if (fa <= fb) {
			hi = b, b = a, fb = fa, a = lo + g * (hi - lo), fa = inner_min(s, t, a, 1.0 - a);
		} else {
			lo = a, a = b, fa = fb, b = hi - g * (hi - lo), fb = inner_min(s, t, b, 1.0 - b);
		}
	}
	double best = fmin(fa, fb);
	best = fmin(best, inner_min(s, t, 0.0, 1.0));
	return fmin(best, inner_min(s, t, 1.0, 0.0));
}

/* The least distance less the separation over every cloth triangle and every sphere,
 * capsule and box of the world, and the least over the vertices alone. */
static double least_clearance(const sim_world *w, double *vertices_only)
{
	const vec4 *x = sim_world_positions(w);
	const int *tris = sim_world_triangles(w);
	int nt = sim_world_triangle_total(w);
	double least = INFINITY, vleast = INFINITY;
	for (int k = 0; k < sim_world_obstacle_count(w); k++) {
		sim_shape shape = sim_world_obstacle(w, k)->shape;
		if (shape != SIM_SHAPE_SPHERE && shape != SIM_SHAPE_CAPSULE && shape != SIM_SHAPE_BOX)
			continue;
		solid s = solid_of(w, k);
		for (int t = 0; t < nt; t++) {
			double p[3][3];
			for (int v = 0; v < 3; v++)
				for (int a = 0; a < 3; a++)
					p[v][a] = x[tris[3 * t + v]][a];
			least = fmin(least, triangle_solid(&s, p) - SEP);
			for (int v = 0; v < 3; v++)
				vleast = fmin(vleast, point_solid(&s, p[v]) - SEP);
		}
	}
	if (vertices_only)
		*vertices_only = vleast;
	return least;
}

/* The measure itself: a triangle above a ball, its nearest point inside it. */
static void test_measure_is_exact(void)
{
	solid s = {.shape = SIM_SHAPE_SPHERE, .c = {0.1, 0.2, 0.3}, .r = 0.05};
	for (int a = 0; a < 3; a++)
		s.m[a][a] = 1.0;
	/* a flat triangle 0.07 above the centre, which is below its interior */
	double t[3][3] = {{-0.4, 0.27, 0.0}, {0.6, 0.27, 0.0}, {0.1, 0.27, 1.0}};
	CHECK_NEAR(triangle_solid(&s, t), 0.02, 1e-9);
	/* the ball reaching over its edge y = 0.27 - ... : an edge 0.03 from the centre */
	double e[3][3] = {{-0.5, 0.2, 0.33}, {0.5, 0.2, 0.33}, {0.0, 0.2, 1.0}};
	CHECK_NEAR(triangle_solid(&s, e), 0.0, 1e-9);
	double f[3][3] = {{-0.5, 0.2, 0.36}, {0.5, 0.2, 0.36}, {0.0, 0.2, 1.0}};
	CHECK_NEAR(triangle_solid(&s, f), 0.01, 1e-9);
	/* a box's corner below a triangle: the box [-1, 1]^3 turned so that a corner points
	 * up +y at sqrt(3) */
	solid b = {.shape = SIM_SHAPE_BOX, .he = {1.0, 1.0, 1.0}};
	versor q, qz, qx;
	glm_quatv(qz, (float)(GLM_PI / 4.0), (vec3){0.0f, 0.0f, 1.0f});
	glm_quatv(qx, (float)atan(1.0 / sqrt(2.0)), (vec3){1.0f, 0.0f, 0.0f});
	glm_quat_mul(qx, qz, q);
	double x = q[0], y = q[1], z = q[2], ww = q[3];
	b.m[0][0] = 1 - 2 * (y * y + z * z), b.m[0][1] = 2 * (x * y - z * ww), b.m[0][2] = 2 * (x * z + y * ww);
	b.m[1][0] = 2 * (x * y + z * ww), b.m[1][1] = 1 - 2 * (x * x + z * z), b.m[1][2] = 2 * (y * z - x * ww);
	b.m[2][0] = 2 * (x * z - y * ww), b.m[2][1] = 2 * (y * z + x * ww), b.m[2][2] = 1 - 2 * (x * x + y * y);
	double top = 1.8;
	double c[3][3] = {{-3.0, top, -1.0}, {3.0, top, -1.0}, {0.0, top, 3.0}};
	/* the highest point of the box is its corner, sqrt(3) up (float rotation: 1e-6) */
	CHECK_NEAR(triangle_solid(&b, c), top - sqrt(3.0), 1e-6);
}

typedef struct drop {
	const char *what;
	int n;               /* vertices a side */
	float dt;
	int substeps;
	float seconds;
	sim_integrator integrator;
} drop;

/* Steps the world, measuring every few steps and at the end; returns the least
 * clearance over the run, and the least over the vertices alone in *vertices. */
static double run_and_measure(sim_world *w, const drop *d, double *vertices, double *at_end)
{
	int steps = (int)lroundf(d->seconds / d->dt);
	double least = INFINITY, vleast = INFINITY;
	for (int i = 0; i < steps; i++) {
		if (sim_world_step(w, d->dt) != SIM_OK) {
			fprintf(stderr, "%s: step %d failed\n", d->what, i);
			return -INFINITY;
		}
		if (i % 10 == 9 || i == steps - 1) {
			double v;
			double c = least_clearance(w, &v);
			least = fmin(least, c);
			vleast = fmin(vleast, v);
			if (i == steps - 1)
				*at_end = c;
		}
	}
	*vertices = vleast;
	return least;
}

static sim_world *cloth_world(const drop *d, float height, float cx, float cz, bool floor)
{
	sim_world_def def = sim_world_def_default();
	def.integrator = d->integrator;
	def.substeps = d->substeps;
	def.air_damping = 0.1f;
	sim_world *w = sim_world_create(&def);
	if (!w)
		return NULL;
	if (floor) {
		sim_obstacle_def f = sim_obstacle_def_default(SIM_SHAPE_PLANE);
		if (sim_world_add_obstacle(w, &f) < 0)
			sim_world_destroy(&w);
	}
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = d->n;
	g.size_x = g.size_y = 1.0f;
	g.origin[0] = cx - 0.5f, g.origin[1] = height, g.origin[2] = cz + 0.5f;
	g.material.stiffness[0] = 100.0f, g.material.stiffness[1] = 50.0f, g.material.stiffness[2] = 2.0f;
	g.material.friction = 0.4f;
	if (w && sim_world_add_grid(w, &g) < 0)
		sim_world_destroy(&w);
	return w;
}

/* Each case: the whole run and the settled end keep every triangle at least the
 * separation (less TOL) from the obstacle, measured every 10 steps.  (Where the cloth rests, the vertices alone
 * stay centimetres away: the obstacle stands between them, which a vertex-only scheme
 * lets through the triangles.) */
static void expect_surface_kept(sim_world *w, const drop *d)
{
	double vertices = 0.0, end = 0.0;
	double least = run_and_measure(w, d, &vertices, &end);
	printf("%s: least clearance %.3g m (vertices alone %.3g m), at the end %.3g m\n", d->what, least, vertices, end);
	CHECK_MSG(least >= -TOL, "%s: a triangle came %.6g m inside the separation", d->what, -least);
	CHECK_MSG(end >= -TOL, "%s: settled %.6g m inside the separation", d->what, -end);
}

static void test_small_balls(void)
{
	/* a 5 x 5 cloth (spacing 0.25 m) onto a 5 cm ball on the floor; a 9 x 9 (0.125 m)
	 * onto a 4 cm ball under a triangle's interior, off every grid line */
	const drop cases[] = {
		{"5x5 on a 5 cm ball", 5, 0.001f, 1, 2.0f, SIM_SYMPLECTIC},
		{"9x9 on a 4 cm ball", 9, 0.001f, 1, 2.0f, SIM_SYMPLECTIC},
		{"9x9 on a 4 cm ball, implicit at 1/90 s", 9, 1.0f / 90.0f, 1, 2.0f, SIM_IMPLICIT},
	};
	for (int k = 0; k < 3; k++) {
		const drop *d = &cases[k];
		float r = d->n == 5 ? 0.05f : 0.04f;
		sim_world *w = cloth_world(d, 0.4f, 0.0f, 0.0f, true);
		REQUIRE(w);
		sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
		ball.radius = r;
		ball.position[0] = d->n == 5 ? 0.1f : 0.047f;
		ball.position[1] = r;
		ball.position[2] = d->n == 5 ? -0.08f : -0.031f;
		REQUIRE(sim_world_add_obstacle(w, &ball) >= 0);
		expect_surface_kept(w, d);
		sim_world_destroy(&w);
	}
}

static void test_capsule(void)
{
	/* a capsule of radius 3 cm lying along x on the floor, between two grid rows */
	const drop d = {"9x9 on a lying capsule", 9, 0.001f, 1, 2.0f, SIM_SYMPLECTIC};
	sim_world *w = cloth_world(&d, 0.3f, 0.0f, 0.0f, true);
	REQUIRE(w);
	sim_obstacle_def cap = sim_obstacle_def_default(SIM_SHAPE_CAPSULE);
	cap.radius = 0.03f;
	cap.half_height = 0.3f;
	cap.position[1] = 0.03f;
	cap.position[2] = 0.06f;
	glm_quatv(cap.orientation, (float)(GLM_PI / 2.0), (vec3){0.0f, 0.0f, 1.0f});
	REQUIRE(sim_world_add_obstacle(w, &cap) >= 0);
	expect_surface_kept(w, &d);
	sim_world_destroy(&w);
}

static void test_box_edge_and_corner(void)
{
	/* a 10 cm cube on its edge (turned 45 degrees about z: the top edge runs along z),
	 * and one on its corner (turned again so that a diagonal stands up), held up off the
	 * floor so that the cloth hangs over them */
	const drop d[2] = {{"9x9 over a box's edge", 9, 0.001f, 1, 1.5f, SIM_SYMPLECTIC},
	                   {"5x5 over a box's corner", 5, 0.001f, 1, 1.5f, SIM_SYMPLECTIC}};
	for (int k = 0; k < 2; k++) {
		sim_world *w = cloth_world(&d[k], 0.4f, 0.0f, 0.0f, true);
		REQUIRE(w);
		sim_obstacle_def box = sim_obstacle_def_default(SIM_SHAPE_BOX);
		glm_vec3_fill(box.half_extents, 0.05f);
		box.position[0] = 0.03f;
		box.position[1] = 0.2f;
		box.position[2] = 0.02f;
		versor qz, qx;
		glm_quatv(qz, (float)(GLM_PI / 4.0), (vec3){0.0f, 0.0f, 1.0f});
		if (k == 0) {
			glm_quat_copy(qz, box.orientation);
		} else {
			glm_quatv(qx, (float)atan(1.0 / sqrt(2.0)), (vec3){1.0f, 0.0f, 0.0f});
			glm_quat_mul(qx, qz, box.orientation);
		}
		REQUIRE(sim_world_add_obstacle(w, &box) >= 0);
		expect_surface_kept(w, &d[k]);
		sim_world_destroy(&w);
	}
}

static void test_moving_ball(void)
{
	/* a kinematic 4 cm ball rising at 0.5 m/s into a 9 x 9 cloth falling onto it, at
	 * 1 ms and at 1/90 s (where it moves 5.6 mm a step); no floor: the ball carries it */
	const drop d[2] = {{"9x9 on a rising ball", 9, 0.001f, 1, 1.5f, SIM_SYMPLECTIC},
	                   {"9x9 on a rising ball at 1/90 s", 9, 1.0f / 90.0f, 1, 1.5f, SIM_IMPLICIT}};
	for (int k = 0; k < 2; k++) {
		sim_world *w = cloth_world(&d[k], 0.5f, 0.0f, 0.0f, false);
		REQUIRE(w);
		sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
		ball.radius = 0.04f;
		ball.position[0] = 0.047f;
		ball.position[1] = 0.3f;
		ball.position[2] = -0.031f;
		ball.velocity[1] = 0.5f;
		REQUIRE(sim_world_add_obstacle(w, &ball) >= 0);
		expect_surface_kept(w, &d[k]);
		sim_world_destroy(&w);
	}
}

/* A ball fast enough to pass through a coarse cloth's triangle within one step: at
 * 1/90 s, 8 m/s up is 8.9 cm a step, more than the 5 cm ball's radius plus the
 * separation, and the ball starts just below the cloth, under a triangle's interior (no
 * vertex in its path).  Were only the ends of the step looked at, the ball would be
 * clear below at the start and clear above at the end; it must carry the cloth up. */
static void test_fast_ball_does_not_pass(void)
{
	const drop d = {"5x5 hit by a ball at 8 m/s", 5, 1.0f / 90.0f, 1, 0.25f, SIM_IMPLICIT};
	sim_world *w = cloth_world(&d, 0.3f, 0.0f, 0.0f, false);
	REQUIRE(w);
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 0.05f;
	ball.position[0] = 0.1f, ball.position[1] = 0.3f - 0.05f - 0.01f, ball.position[2] = -0.08f;
	ball.velocity[1] = 8.0f;
	REQUIRE(sim_world_add_obstacle(w, &ball) >= 0);
	int steps = (int)lroundf(d.seconds / d.dt);
	double least = INFINITY;
	for (int i = 0; i < steps; i++) {
		REQUIRE(sim_world_step(w, d.dt) == SIM_OK);
		least = fmin(least, least_clearance(w, NULL));
	}
	vec3 c;
	versor q;
	sim_world_obstacle_pose(w, 0, c, q);
	const vec4 *x = sim_world_positions(w);
	double above = 0.0;
	int n = sim_world_vertex_count(w);
	for (int i = 0; i < n; i++)
		above += (x[i][1] > c[1]) ? 1.0 : 0.0;
	printf("%s: least clearance %.3g m; the ball at %.3f m, %.0f of %d vertices above its centre\n", d.what, least,
	       (double)c[1], above, n);
	CHECK_MSG(least >= -TOL, "a triangle came %.6g m inside the separation", -least);
	/* the ball has risen 2 m: the cloth rides on it, its middle above the centre */
	CHECK(c[1] > 2.0f);
	CHECK_MSG(above >= 1.0, "the ball went through the cloth");
	sim_world_destroy(&w);
}

/* sim_world_check_surface agrees with the measure here on a state it must fail: a flat
 * cloth laid through a ball between its vertices. */
static void test_check_counts_triangles(void)
{
	const drop d = {"check", 5, 0.001f, 1, 0.0f, SIM_SYMPLECTIC};
	sim_world *w = cloth_world(&d, 0.2f, 0.0f, 0.0f, false);
	REQUIRE(w);
	sim_obstacle_def ball = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	ball.radius = 0.05f;
	ball.position[0] = 0.125f, ball.position[1] = 0.17f, ball.position[2] = -0.125f + 0.04f;
	REQUIRE(sim_world_add_obstacle(w, &ball) >= 0);
	int inter = -1, inside = -1;
	sim_world_check(w, &inter, &inside);
	CHECK(inside == 0); /* no vertex is inside: the ball is between them */
	double least = 0.0;
	int bad = sim_world_check_surface(w, 1e-4, &least);
	/* (the measure here stops at the surface: a triangle into the solid is at 0) */
	CHECK_NEAR(least_clearance(w, NULL), -SEP, 1e-9);
	/* the sheet 3 cm above the centre of a ball of 5 cm: 2 cm in; the quad's diagonal,
	 * either one, passes 2.8 cm from the centre's projection, 4.1 cm from the centre, so
	 * both triangles of the quad over it are in, and no other */
	CHECK_NEAR(least, 0.03 - 0.05 - SEP, 1e-6);
	CHECK(bad == 2);
	/* raised clear, nothing */
	ball.position[1] = 0.2f - 0.05f - 0.0016f;
	sim_world_destroy(&w);
	w = cloth_world(&d, 0.2f, 0.0f, 0.0f, false);
	REQUIRE(w);
	REQUIRE(sim_world_add_obstacle(w, &ball) >= 0);
	CHECK(sim_world_check_surface(w, 1e-4, &least) == 0);
	CHECK_NEAR(least, 0.0001, 1e-6);
	sim_world_destroy(&w);
}

/* A mesh obstacle has no distance to a triangle here: a cloth triangle that crosses one
 * of its triangles is what the check counts.  An upright triangle poking up through the
 * cloth between its vertices, 10 cm in from a quad's corner. */
static void test_check_counts_mesh_crossings(void)
{
	const drop d = {"mesh", 5, 0.001f, 1, 0.0f, SIM_SYMPLECTIC};
	for (int up = 0; up < 2; up++) {
		sim_world *w = cloth_world(&d, 0.2f, 0.0f, 0.0f, false);
		REQUIRE(w);
		float y = up ? 0.5f : 0.0f; /* raised clear of the cloth: nothing */
		const float p[9] = {0.1f, 0.1f + y, -0.1f, 0.15f, 0.3f + y, -0.1f, 0.2f, 0.1f + y, -0.1f};
		static const int t[3] = {0, 1, 2};
		sim_obstacle_def m = sim_obstacle_def_default(SIM_SHAPE_MESH);
		m.vertex_count = 3, m.positions = p, m.triangle_count = 1, m.triangles = t;
		REQUIRE(sim_world_add_obstacle(w, &m) >= 0);
		int inter = -1, inside = -1;
		sim_world_check(w, &inter, &inside);
		CHECK(inter == 0 && inside == 0);
		double least = 0.0;
		int bad = sim_world_check_surface(w, 1e-5, &least);
		/* the crossing segment (y = 0.2, x from 0.125 to 0.175, z = -0.1) lies in the quad
		 * x, z in [0, 0.25] x [-0.25, 0], across one of its triangles or both */
		if (up)
			CHECK(bad == 0);
		else
			CHECK_MSG(bad == 1 || bad == 2, "%d cloth triangles cross the mesh", bad);
		CHECK(isinf(least)); /* no sphere, capsule or box measured */
		sim_world_destroy(&w);
	}
}

static const test_case tests[] = {
	TEST(test_check_counts_mesh_crossings),
	TEST(test_measure_is_exact),
	TEST(test_check_counts_triangles),
	TEST(test_small_balls),
	TEST(test_capsule),
	TEST(test_box_edge_and_corner),
	TEST(test_moving_ball),
	TEST(test_fast_ball_does_not_pass),
};

TEST_MAIN(tests)
