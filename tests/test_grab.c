/* The patch grab (app/grab.c) against exact geometry: which vertices a radius holds on a
 * flat grid, that a fold lying against the picked layer is not picked up, that pinned
 * vertices stay out, that the force cap is shared, and that the patch follows the pointer
 * as one piece. */
#include "test.h"

#include "grab.h"

#include <math.h>

/* An 11 x 11 grid, 1 m square, 0.1 m apart, in the x-z plane at height 1; gravity off so
 * that only the grab moves it. */
static sim_world *flat_world(void)
{
	sim_world_def wd = sim_world_def_default();
	wd.gravity[0] = wd.gravity[1] = wd.gravity[2] = 0.0f;
	sim_world *w = sim_world_create(&wd);
	sim_grid_def g = sim_grid_def_default();
	g.nx = g.ny = 11;
	g.size_x = g.size_y = 1.0f;
	g.origin[0] = 0.0f, g.origin[1] = 1.0f, g.origin[2] = 0.0f;
	if (w && sim_world_add_grid(w, &g) < 0)
		sim_world_destroy(&w);
	return w;
}

static float dist(const float *a, const float *b)
{
	return sqrtf((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static bool holds(const grab *g, int v)
{
	for (int i = 0; i < g->count; i++)
		if (g->vertices[i] == v)
			return true;
	return false;
}

/* On a flat cloth the patch is exactly the vertices within the radius. */
static void test_flat_patch_is_the_disc(void)
{
	sim_world *w = flat_world();
	REQUIRE(w);
	const vec4 *x = sim_world_positions(w);
	int n = sim_world_vertex_count(w);
	int centre = -1;
	for (int v = 0; v < n; v++)
		if (fabsf(x[v][0] - 0.5f) < 1e-4f && fabsf(x[v][2] + 0.5f) < 1e-4f)
			centre = v;
	if (centre < 0) /* the grid runs along +z instead */
		for (int v = 0; v < n; v++)
			if (fabsf(x[v][0] - 0.5f) < 1e-4f && fabsf(x[v][2] - 0.5f) < 1e-4f)
				centre = v;
	REQUIRE_MSG(centre >= 0, "no vertex at the centre");
	/* grid points within r of a grid point, spacing 0.1 (no radius on a ring: a float
	 * distance of 0.1 may fall either side of 0.1f) */
	const float radii[] = {0.0f, 0.05f, 0.12f, 0.15f, 0.25f};
	const int expected[] = {1, 1, 5, 9, 21};
	for (int k = 0; k < 5; k++) {
		grab g;
		grab_init(&g);
		int r = grab_start(&g, w, centre, radii[k], 0.0f, 0.0f);
		CHECK_MSG(r == expected[k], "radius %.2f holds %d vertices, expected %d", (double)radii[k], r, expected[k]);
		CHECK(g.vertices[0] == centre && g.vertex == centre);
		int inside = 0;
		for (int v = 0; v < n; v++) {
			bool in = dist(x[v], x[centre]) <= radii[k];
			inside += in;
			CHECK_MSG(holds(&g, v) == in, "radius %.2f: vertex %d at %.4f m %s", (double)radii[k], v,
			          (double)dist(x[v], x[centre]), in ? "left out" : "held");
		}
		CHECK(inside == expected[k]);
		for (int i = 0; i < g.count; i++)
			for (int c = 0; c < 3; c++)
				CHECK(g.offset[i][c] == x[g.vertices[i]][c] - x[centre][c]);
		grab_release(&g, w);
		CHECK(g.vertex == -1 && g.count == 0);
	}
	sim_world_destroy(&w);
}

/* A strip folded back over itself, the upper layer 1 cm above the lower: a grab on the
 * lower layer with a 15 cm radius holds lower-layer vertices only, although the upper
 * layer is well inside the sphere; a second cloth lying on it is not held either. */
static void test_fold_is_not_picked_up(void)
{
	sim_world_def wd = sim_world_def_default();
	wd.gravity[0] = wd.gravity[1] = wd.gravity[2] = 0.0f;
	sim_world *w = sim_world_create(&wd);
	REQUIRE(w);
	/* the strip's centre line runs out along x at y = 0 (columns 0..10) and back at
	 * y = 0.01 (columns 11..21, x from 1 back to 0), two vertices across (z 0 and 0.1) */
	enum { COLS = 22 };
	float p[COLS * 2 * 3];
	for (int c = 0; c < COLS; c++) {
		float xx = c <= 10 ? 0.1f * (float)c : 0.1f * (float)(21 - c);
		float yy = c <= 10 ? 0.0f : 0.01f;
		for (int r = 0; r < 2; r++) {
			float *q = p + 3 * (2 * c + r);
			q[0] = xx, q[1] = yy, q[2] = 0.1f * (float)r;
		}
	}
	/* the fold between columns 10 and 11 joins (1, 0) to (1, 0.01): a 1 cm quad */
	int tri[(COLS - 1) * 2 * 3];
	for (int c = 0; c < COLS - 1; c++) {
		int a = 2 * c, b = 2 * c + 1, d = 2 * c + 2, e = 2 * c + 3;
		int *t = tri + 6 * c;
		t[0] = a, t[1] = d, t[2] = b;
		t[3] = b, t[4] = d, t[5] = e;
	}
	sim_mesh_def m = {.name = "strip", .vertex_count = COLS * 2, .positions = p, .triangle_count = (COLS - 1) * 2,
	                  .triangles = tri, .material = sim_material_default()};
	REQUIRE(sim_world_add_mesh(w, &m) >= 0);
	float q[4 * 3] = {0.4f, 0.02f, 0.0f, 0.6f, 0.02f, 0.0f, 0.4f, 0.02f, 0.1f, 0.6f, 0.02f, 0.1f};
	int qt[6] = {0, 1, 2, 2, 1, 3};
	sim_mesh_def m2 = {.name = "lid", .vertex_count = 4, .positions = q, .triangle_count = 2, .triangles = qt,
	                   .material = sim_material_default()};
	REQUIRE(sim_world_add_mesh(w, &m2) >= 0);
	int picked = 2 * 5; /* (0.5, 0, 0) on the lower layer */
	const vec4 *x = sim_world_positions(w);
	REQUIRE(fabsf(x[picked][0] - 0.5f) < 1e-6f && x[picked][1] == 0.0f);
	grab g;
	grab_init(&g);
	int n = grab_start(&g, w, picked, 0.15f, 0.0f, 0.0f);
	/* lower layer, columns 4..6, both rows: (0.4|0.5|0.6, 0, 0|0.1) all within 0.15 */
	CHECK_MSG(n == 6, "%d vertices held", n);
	for (int i = 0; i < g.count; i++) {
		int v = g.vertices[i];
		CHECK_MSG(v < 2 * COLS && x[v][1] == 0.0f, "vertex %d at height %.3f held", v, (double)x[v][1]);
	}
	grab_release(&g, w);
	sim_world_destroy(&w);
}

/* The patch follows the pointer as one piece: with nothing else pulling (no gravity), the
 * whole cloth ends translated with it and every held vertex at its place in the patch. */
static void test_patch_follows(void)
{
	sim_world *w = flat_world();
	REQUIRE(w);
	const vec4 *x = sim_world_positions(w);
	int centre = sim_world_vertex_count(w) / 2; /* the middle of an odd grid */
	grab g;
	grab_init(&g);
	REQUIRE(grab_start(&g, w, centre, 0.15f, 0.0f, 0.0f) == 9);
	float start[GRAB_MAX_VERTICES][3];
	for (int i = 0; i < g.count; i++)
		for (int k = 0; k < 3; k++)
			start[i][k] = x[g.vertices[i]][k];
	float target[3] = {x[centre][0], x[centre][1] + 0.05f, x[centre][2]};
	grab_set_target(&g, w, target, NULL);
	for (int s = 0; s < 3000; s++)
		REQUIRE(sim_world_step(w, 0.001f) == SIM_OK);
	for (int i = 0; i < g.count; i++) {
		const float *p = x[g.vertices[i]];
		float want[3] = {start[i][0], start[i][1] + 0.05f, start[i][2]};
		CHECK_MSG(dist(p, want) < 0.001f, "held vertex %d is %.5f m from its place in the patch", g.vertices[i],
		          (double)dist(p, want));
	}
	grab_release(&g, w);
	sim_world_destroy(&w);
}

/* Pinned vertices stay out of a patch (and pinned); the coupling's cap is the grab's, not
 * each vertex's: pulling against a pin, the patch's total force never passes it. */
static void test_patch_shares_the_cap(void)
{
	sim_world *w = flat_world();
	REQUIRE(w);
	const vec4 *x = sim_world_positions(w);
	int n = sim_world_vertex_count(w);
	int centre = n / 2;
	int pinned = -1;
	for (int v = 0; v < n && pinned < 0; v++)
		if (v != centre && fabsf(dist(x[v], x[centre]) - 0.1f) < 1e-4f)
			pinned = v;
	REQUIRE(pinned >= 0);
	REQUIRE(sim_world_pin(w, pinned, true) == SIM_OK);
	grab g;
	grab_init(&g);
	const float max_force = 8.0f;
	int held = grab_start(&g, w, centre, 0.15f, 0.0f, max_force);
	CHECK_MSG(held == 8, "%d held (9 in the disc, one pinned)", held);
	CHECK(!holds(&g, pinned));
	float pinned_at[3] = {x[pinned][0], x[pinned][1], x[pinned][2]};
	float target[3] = {x[centre][0], x[centre][1] + 0.3f, x[centre][2]};
	grab_set_target(&g, w, target, NULL);
	float peak = 0.0f;
	for (int s = 0; s < 1000; s++) {
		REQUIRE(sim_world_step(w, 0.001f) == SIM_OK);
		float f[3];
		grab_force(&g, w, f);
		float m = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
		peak = m > peak ? m : peak;
	}
	CHECK_MSG(peak <= max_force * 1.0001f, "the grab pulled with %.3f N, over its cap %.3f N", (double)peak,
	          (double)max_force);
	/* 8 vertices at their 1 N caps, against the pin's springs: the cap is reached */
	CHECK_MSG(peak > 0.9f * max_force, "the grab pulled with %.3f N only", (double)peak);
	CHECK(dist(x[pinned], pinned_at) == 0.0f);
	grab_release(&g, w);
	sim_world_destroy(&w);
}

int main(int argc, char **argv)
{
	static const test_case cases[] = {
		TEST(test_flat_patch_is_the_disc),
		TEST(test_fold_is_not_picked_up),
		TEST(test_patch_follows),
		TEST(test_patch_shares_the_cap),
	};
	return test_run(argc, argv, cases, (int)(sizeof cases / sizeof cases[0]));
}
