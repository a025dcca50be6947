/* Scene files and seed folders: what a file says is what the world gets (compared with
 * the same world built through sim's API by hand), coordinates written z-up land where
 * the y-up ones do, scripted motions follow their closed forms, and every kind of bad
 * input is refused with the file and line that caused it and nothing built. */
#include "test.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

#ifndef TELA_TEST_DATA
#error "TELA_TEST_DATA must name tests/data"
#endif

static scn_scene *parse(const char *text, scn_error *err)
{
	scn_scene *s = NULL;
	*err = (scn_error){0};
	scn_parse(text, strlen(text), "t.ini", &s, err);
	return s;
}

static sim_world *build(const char *text)
{
	scn_error err;
	scn_scene *s = parse(text, &err);
	CHECK_MSG(s != NULL, "%s", err.message);
	sim_world *w = NULL;
	if (s && scn_build(s, &w, &err) != SCN_OK)
		CHECK_MSG(false, "%s", err.message);
	scn_scene_free(&s);
	return w;
}

/* Every built-in scene parses, builds and names itself. */
static void test_builtins_build(void)
{
	const char *expected[] = {"tetrahedron", "hanging", "free-fall", "table", "sphere",
	                          "flag",        "curtain", "pile",      "twist", "two-cloths"};
	REQUIRE(scn_builtin_count() == 10);
	for (int i = 0; i < 10; i++) {
		const scn_info *info = scn_builtin_info(i);
		CHECK(strcmp(info->name, expected[i]) == 0);
		CHECK_MSG(info->description[0] && info->description[0] != '(', "%s: %s", info->name, info->description);
		CHECK(info->dt > 0.0f && info->seconds > 0.0);
		sim_world *w = scn_create(info->name);
		CHECK_MSG(w != NULL, "%s does not build", info->name);
		sim_world_destroy(&w);
	}
}

/* The grid section gives exactly the world sim's API gives for the same definition. */
static void test_grid_matches_api(void)
{
	sim_world *a = build("[world]\nair_damping = 0.25\n"
	                     "[grid sheet]\nresolution = 7 5\nsize = 0.6 0.4\ncenter = 0.1 1.2 -0.3\n"
	                     "structural = 120\nshear = 40\nbend = 3\ndensity = 0.3\npins = 0 6\n");
	REQUIRE(a);
	sim_world_def def = sim_world_def_default();
	def.air_damping = 0.25f;
	/* a scene file's default integrator, unlike the library's */
	def.integrator = SIM_IMPLICIT;
	sim_world *b = sim_world_create(&def);
	sim_grid_def g = sim_grid_def_default();
	g.name = "sheet";
	g.nx = 7, g.ny = 5, g.size_x = 0.6f, g.size_y = 0.4f;
	float u[3] = {1, 0, 0}, v[3] = {0, 0, 1};
	memcpy(g.axis_u, u, sizeof u);
	memcpy(g.axis_v, v, sizeof v);
	float c[3] = {0.1f, 1.2f, -0.3f};
	for (int k = 0; k < 3; k++)
		g.origin[k] = c[k] - 0.5f * g.size_x * u[k] - 0.5f * g.size_y * v[k];
	g.material.stiffness[SIM_SPRING_STRUCTURAL] = 120.0f;
	g.material.stiffness[SIM_SPRING_SHEAR] = 40.0f;
	g.material.stiffness[SIM_SPRING_BEND] = 3.0f;
	g.material.areal_density = 0.3f;
	REQUIRE(sim_world_add_grid(b, &g) == 0);
	sim_world_pin(b, 0, true);
	sim_world_pin(b, 6, true);
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	CHECK(sim_world_vertex_mass(a, 10) == sim_world_vertex_mass(b, 10));
	CHECK(sim_world_is_pinned(a, 6) && !sim_world_is_pinned(a, 7));
	for (int s = 0; s < 200; s++) {
		REQUIRE(sim_world_step(a, 1e-3f) == SIM_OK);
		REQUIRE(sim_world_step(b, 1e-3f) == SIM_OK);
	}
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	sim_world_destroy(&a);
	sim_world_destroy(&b);
}

/* A named material, overridden key by key. */
static void test_material_inheritance(void)
{
	scn_error err;
	sim_world *w = build("[material silk]\ndensity = 0.1\nbend = 0.5\nfriction = 0.2\n"
	                     "[grid a]\nmaterial = silk\nresolution = 3 3\n"
	                     "[grid b]\nmaterial = silk\nresolution = 3 3\ncenter = 0 2 0\ndensity = 0.4\n");
	REQUIRE(w);
	/* 1 m^2 over 9 vertices */
	CHECK_NEAR(sim_world_vertex_mass(w, 0), 0.1f / 9.0f, 1e-7);
	CHECK_NEAR(sim_world_vertex_mass(w, 9), 0.4f / 9.0f, 1e-7);
	sim_world_destroy(&w);
	(void)err;
}

/* A scene file's defaults: implicit Euler, and a thickness of at most half the shortest
 * edge unless the section or its material gives one (docs/scene-format.md, "Defaults
 * that hold"). */
static void test_defaults_that_hold(void)
{
	sim_world *w = build("[material thick]\nthickness = 0.004\n"
	                     "[grid fine]\nresolution = 30 21\nsize = 0.1 0.2\n"
	                     "[grid coarse]\nresolution = 20 20\ncenter = 0 2 0\n"
	                     "[grid own]\nresolution = 30 30\nsize = 0.1 0.1\ncenter = 0 3 0\nthickness = 0.0025\n"
	                     "[grid inherited]\nmaterial = thick\nresolution = 30 30\nsize = 0.1 0.1\ncenter = 0 4 0\n");
	REQUIRE(w);
	CHECK(sim_world_get_def(w)->integrator == SIM_IMPLICIT);
	/* edges of 0.1 / 29 and 0.2 / 20 m: half the shorter */
	CHECK_NEAR(sim_world_object_material(w, 0)->thickness, 0.5 * 0.1 / 29.0, 1e-9);
	/* 1 / 19 m edges keep the 3 mm default */
	CHECK(sim_world_object_material(w, 1)->thickness == 0.003f);
	CHECK(sim_world_object_material(w, 2)->thickness == 0.0025f);
	CHECK(sim_world_object_material(w, 3)->thickness == 0.004f);
	sim_world_destroy(&w);
}

/* friction_with: a material stands for every cloth made of it, a cloth or an obstacle
 * for itself; the pairs it names get the coefficient, the others keep the geometric mean
 * of their own coefficients. */
static void test_pair_friction(void)
{
	sim_world *w = build("[material silk]\nfriction = 0.2\nfriction_with = ball 0.8\nfriction_with = silk 0.05\n"
	                     "[grid a]\nmaterial = silk\nresolution = 3 3\n"
	                     "[grid b]\nmaterial = silk\nresolution = 3 3\ncenter = 0 2 0\n"
	                     "[grid c]\nresolution = 3 3\ncenter = 0 4 0\nfriction = 0.5\nfriction_with = b 0.3\n"
	                     "[sphere ball]\nfriction = 0.45\n"
	                     "[plane floor]\nfriction = 0.2\nfriction_with = a 0.9\n");
	REQUIRE(w);
	const sim_body a = {false, 0}, b = {false, 1}, c = {false, 2}, ball = {true, 0}, floor = {true, 1};
	CHECK(sim_world_pair_friction(w, a, ball) == 0.8f);
	CHECK(sim_world_pair_friction(w, b, ball) == 0.8f);
	CHECK(sim_world_pair_friction(w, a, a) == 0.05f); /* silk with silk: itself and the other silk cloth */
	CHECK(sim_world_pair_friction(w, a, b) == 0.05f);
	CHECK(sim_world_pair_friction(w, b, b) == 0.05f);
	CHECK(sim_world_pair_friction(w, c, b) == 0.3f);
	CHECK(sim_world_pair_friction(w, a, floor) == 0.9f);
	CHECK_NEAR(sim_world_pair_friction(w, b, floor), 0.2, 1e-7);
	CHECK_NEAR(sim_world_pair_friction(w, c, ball), sqrt(0.5 * 0.45), 1e-6);
	CHECK_NEAR(sim_world_pair_friction(w, c, c), 0.5, 1e-7);
	CHECK_NEAR(sim_world_pair_friction(w, c, a), sqrt(0.5 * 0.2), 1e-6);
	sim_world_destroy(&w);
}

/* up = z: every coordinate, gravity and axis turns from (x, y, z) to (x, z, -y). */
static void test_z_up(void)
{
	sim_world *y = build("[world]\ngravity = 0 -3 0\n[grid g]\nresolution = 4 3\nsize = 0.3 0.2\n"
	                     "corner = 0.1 0.5 -0.2\naxis_u = 0 0 -1\naxis_v = 1 0 0\nvelocity = 0 0.5 -1\n"
	                     "[sphere s]\nposition = 0 0.2 -0.7\nradius = 0.1\n");
	sim_world *z = build("[scene]\nup = z\n[world]\ngravity = 0 0 -3\n[grid g]\nresolution = 4 3\n"
	                     "size = 0.3 0.2\ncorner = 0.1 0.2 0.5\naxis_u = 0 1 0\naxis_v = 1 0 0\n"
	                     "velocity = 0 1 0.5\n[sphere s]\nposition = 0 0.7 0.2\nradius = 0.1\n");
	REQUIRE(y && z);
	CHECK(sim_world_state_hash(y) == sim_world_state_hash(z));
	const sim_world_def *dz = sim_world_get_def(z);
	CHECK(dz->gravity[0] == 0.0f && dz->gravity[1] == -3.0f && dz->gravity[2] == 0.0f);
	vec3 py, pz;
	versor qy, qz;
	sim_world_obstacle_pose(y, 0, py, qy);
	sim_world_obstacle_pose(z, 0, pz, qz);
	CHECK(memcmp(py, pz, sizeof py) == 0);
	sim_world_destroy(&y);
	sim_world_destroy(&z);
}

/* A plane's normal and a box's rotation become the obstacle's orientation. */
static void test_obstacle_orientation(void)
{
	sim_world *w = build("[plane ramp]\nnormal = 1 1 0\n[box b]\nrotate = 0 0 90\nsize = 0.2 0.4 0.6\n"
	                     "[capsule c]\naxis = 1 0 0\n");
	REQUIRE(w);
	REQUIRE(sim_world_obstacle_count(w) == 3);
	vec3 p;
	versor q;
	/* +y turned onto (1, 1, 0)/sqrt 2: 45 degrees about -z */
	sim_world_obstacle_pose(w, 0, p, q);
	CHECK_NEAR(q[0], 0.0, 1e-7);
	CHECK_NEAR(q[1], 0.0, 1e-7);
	CHECK_NEAR(q[2], -sin(PI / 8), 1e-6);
	CHECK_NEAR(q[3], cos(PI / 8), 1e-6);
	/* 90 degrees about z */
	sim_world_obstacle_pose(w, 1, p, q);
	CHECK_NEAR(q[2], sqrt(0.5), 1e-6);
	CHECK_NEAR(q[3], sqrt(0.5), 1e-6);
	const sim_obstacle_def *b = sim_world_obstacle(w, 1);
	CHECK_NEAR(b->half_extents[0], 0.1, 1e-7);
	CHECK_NEAR(b->half_extents[2], 0.3, 1e-7);
	/* +y onto +x: 90 degrees about -z */
	sim_world_obstacle_pose(w, 2, p, q);
	CHECK_NEAR(q[2], -sqrt(0.5), 1e-6);
	CHECK_NEAR(q[3], sqrt(0.5), 1e-6);
	sim_world_destroy(&w);
}

/* A motion turns a grid column about an axis while translating it: after the motion the
 * column sits where the closed form puts it (rotation by omega T about the moved pivot). */
static void test_motion_closed_form(void)
{
	const char *text = "[world]\ngravity = 0 0 0\n"
	                   "[grid g]\nresolution = 5 5\nsize = 1 1\ncenter = 0 1 0\nstructural = 1\nshear = 0\nbend = 0\n"
	                   "[motion m]\nobject = g\nvertices = column 0\nvelocity = 0.05 0 0\n"
	                   "angular_velocity = 0.7853981634 0 0\npivot = -0.5 1 0\nstart = 0\nstop = 2\nslot = 0.01\n";
	sim_world *w = build(text);
	REQUIRE(w);
	float before[5][3];
	const vec4 *x = sim_world_positions(w);
	for (int j = 0; j < 5; j++)
		memcpy(before[j], x[j * 5], sizeof before[j]);
	for (int s = 0; s < 2500; s++) {
		int rc = sim_world_step(w, 1e-3f);
		if (rc != SIM_OK) {
			const sim_blowup *b = sim_world_last_blowup(w);
			fprintf(stderr, "step %d: %s: object %d vertex %d %s %g\n", s, sim_result_string(rc), b->object, b->vertex,
			        b->reason, (double)b->value);
		}
		REQUIRE(rc == SIM_OK);
	}
	x = sim_world_positions(w);
	/* a quarter turn (pi/4 rad/s for 2 s) about x through the pivot, then held still */
	for (int j = 0; j < 5; j++) {
		double ry = before[j][1] - 1.0, rz = before[j][2];
		CHECK_NEAR(x[j * 5][0], before[j][0] + 0.1, 2e-4);
		CHECK_NEAR(x[j * 5][1], 1.0 - rz, 2e-3);
		CHECK_NEAR(x[j * 5][2], ry, 2e-3);
	}
	sim_world_destroy(&w);
}

/* ---- bad input ----------------------------------------------------------------------------------- */

typedef struct bad_case {
	const char *text;
	const char *message; /* must appear in the error, starting with "t.ini:LINE:" */
} bad_case;

static void test_bad_scenes(void)
{
	static const bad_case cases[] = {
	    {"", "t.ini:1: empty scene file"},
	    {"[world]\ndt = 0.001\n", "t.ini: no objects"},
	    {"[grid g]\nresolutoin = 4 4\n", "t.ini:2: unknown key 'resolutoin' in [grid] (did you mean 'resolution'?)"},
	    {"[grid g]\nresolution = 4 4\n[spere s]\n", "t.ini:3: unknown section 'spere' (did you mean 'sphere'?)"},
	    {"[grid g]\nresolution = 4 4\nresolution = 5 5\n", "t.ini:3: 'resolution' given twice in this section (first at line 2)"},
	    {"[grid g]\nsize = nan 1\n", "t.ini:2: size: 'nan 1' is not 2 numbers"},
	    {"[grid g]\nsize = 1e30 1\n", "t.ini:2: size: '1e30 1' is not 2 numbers"},
	    {"[grid g]\nsize = 1x 1\n", "t.ini:2: size: '1x 1' is not 2 numbers"},
	    {"[grid g]\nresolution = 4\n", "t.ini:2: resolution: '4' is not two integers"},
	    {"[grid g]\nresolution = 1 4\n", "t.ini:2: resolution: '1 4' is not two integers in [2, 4096]"},
	    {"dt = 1\n[grid g]\n", "t.ini:1: 'dt' outside a section"},
	    {"[grid g]\nresolution = 4 4\npins = 0 16\n", "t.ini:3: pins: vertex 16 out of range ('g' has 16 vertices)"},
	    {"[grid g]\nresolution = 4 4\npins = row 4\n", "t.ini:3: pins: 'row' needs an index in [0, 3]"},
	    {"[grid g]\npins = corner\n", "t.ini:2: pins: 'corner' is not a vertex id"},
	    {"[grid g]\nmaterial = silk\n", "t.ini:2: unknown material 'silk'"},
	    {"[world]\ndt = 0.001\nrate = 500\n[grid g]\n", "t.ini:3: give dt or rate, not both (dt at line 2)"},
	    {"[world]\nintegrator = rk5\n", "t.ini:2: integrator: unknown integrator 'rk5' (did you mean 'rk4'?)"},
	    {"[grid g]\ncorner = 0 0 0\ncenter = 0 1 0\n", "t.ini:2: give corner or center, not both"},
	    {"[grid g]\naxis_u = 1 0 0\naxis_v = 1 1 0\n", "t.ini:3: axis_u and axis_v are not perpendicular"},
	    {"[grid g]\naxis_u = 1 0 0\n", "t.ini:2: give both axis_u and axis_v"},
	    {"[grid g]\nmass = 1\ndensity = 2\n", "t.ini:2: give mass or density, not both"},
	    {"[grid g]\n[grid g]\n", "t.ini:2: a second section named 'g' (the first is at line 1)"},
	    {"[world]\n[world]\n", "t.ini:2: second [world] section (the first is at line 1)"},
	    {"[grid]\n", "t.ini:1: [grid] needs one name"},
	    {"[grid g\n", "t.ini:1: section header without ']'"},
	    {"[grid g]\nthis is not a pair\n", "t.ini:2: not a 'key = value' line"},
	    {"[mesh m]\nfile = no-such.stl\n", "no-such.stl"},
	    {"[mesh m]\nresolution = 3 3\n", "t.ini:2: unknown key 'resolution' in [mesh]"},
	    {"[mesh m]\n", "t.ini:1: [mesh m] needs file = MESH.stl"},
	    {"[grid g]\nvelocities = no-such.vel\n", "no-such.vel"},
	    {"[grid g]\n[motion m]\nobject = h\nvertices = 0\nstop = 1\n", "t.ini:3: object: no cloth named 'h'"},
	    {"[grid g]\n[motion m]\nobject = g\nvertices = 0\nstart = 2\nstop = 1\n", "needs stop later than start"},
	    {"[grid g]\nvertex_velocity = 400 0 0 0\n", "t.ini:2: vertex_velocity: vertex 400 out of range"},
	    {"[world]\ngravity = 0 -9.81 0 # down\n[grid g]\n", "t.ini:2: gravity: '0 -9.81 0 # down' is not 3 numbers"},
	    {"[sphere s]\nradius = -1\n", "t.ini:2: radius: '-1' is not a number in"},
	    {"[scene]\nup = x\n[grid g]\n", "t.ini:2: up: 'x' is neither y nor z"},
	    {"[grid g]\nfriction_with = ball\n", "t.ini:2: friction_with: expected a material or body name and a coefficient"},
	    {"[grid g]\nfriction_with = ball 11\n[sphere ball]\n", "t.ini:2: friction_with: '11' is not a number in [0, 10]"},
	    {"[grid g]\nfriction_with = ball nan\n[sphere ball]\n", "t.ini:2: friction_with: 'nan' is not a number"},
	    {"[grid g]\nfriction_with = bal 0.5\n[sphere ball]\n",
	     "t.ini:2: friction_with: no material, cloth or obstacle section is named 'bal'"},
	    {"[sphere ball]\nfriction_with = floor 0.5\n[plane floor]\n",
	     "t.ini:2: friction_with: 'ball' and 'floor' are both obstacles, which never touch"},
	    {"[material g]\n[grid g]\n[sphere ball]\nfriction_with = g 0.5\n",
	     "t.ini:4: friction_with: 'g' names both a material (line 1) and an object (line 2)"},
	    {"[grid g]\nfriction_with = ball 0.5\n[sphere ball]\nfriction_with = g 0.7\n",
	     "t.ini:4: friction between 'ball' and 'g' given twice (first at line 2)"},
	    {"[grid g]\nfriction_with = g 0.5\nfriction_with = g 0.6\n",
	     "t.ini:3: friction between 'g' and 'g' given twice (first at line 2)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		scn_error err;
		scn_scene *s = parse(cases[i].text, &err);
		CHECK_MSG(s == NULL, "case %zu was accepted:\n%s", i, cases[i].text);
		CHECK_MSG(err.status != SCN_OK && strstr(err.message, cases[i].message), "case %zu: got '%s', want '%s'", i,
		          err.message, cases[i].message);
		scn_scene_free(&s);
	}
}

/* Bytes a text file does not hold, and lines inih would cut. */
static void test_bad_bytes(void)
{
	scn_error err = {0};
	scn_scene *s = NULL;
	const char nul[] = "[grid g]\nresolution = 4\0 4\n";
	CHECK(scn_parse(nul, sizeof nul - 1, "t.ini", &s, &err) == SCN_ERROR_PARSE && !s);
	CHECK_MSG(strstr(err.message, "t.ini:2: NUL byte"), "%s", err.message);
	char long_line[400];
	memset(long_line, ' ', sizeof long_line);
	memcpy(long_line, "[grid g]\nbend = 1", 17);
	long_line[sizeof long_line - 2] = '1';
	long_line[sizeof long_line - 1] = '\n';
	err = (scn_error){0};
	CHECK(scn_parse(long_line, sizeof long_line, "t.ini", &s, &err) == SCN_ERROR_PARSE && !s);
	CHECK_MSG(strstr(err.message, "t.ini:2: line longer than"), "%s", err.message);
}

/* Indented lines are keys, not continuations of the previous value. */
static void test_indented_keys(void)
{
	sim_world *w = build("[grid g]\n  resolution = 3 4\n  size = 1 2\n\t pins = 0\n");
	REQUIRE(w);
	CHECK(sim_world_vertex_count(w) == 12);
	CHECK(sim_world_is_pinned(w, 0));
	sim_world_destroy(&w);
}

/* ---- the seed folder ----------------------------------------------------------------------------- */

static void test_seed_folder(void)
{
	scn_scene *s = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(TELA_TEST_DATA "/seed/environment", &s, &err) == SCN_OK, "%s", err.message);
	const scn_info *info = scn_scene_info(s);
	CHECK_NEAR(info->dt, 0.01, 1e-9);
	sim_world *w = NULL;
	REQUIRE_MSG(scn_build(s, &w, &err) == SCN_OK, "%s", err.message);
	float rgb[3];
	scn_scene_cloth_color(s, 0, rgb);
	CHECK(rgb[0] == 0.0f && rgb[1] == 0.0f && rgb[2] == 0.9f);
	scn_scene_free(&s);
	CHECK(sim_world_get_def(w)->substeps == 10);
	/* the seed's soft cloth keeps symplectic Euler, not a scene file's default */
	CHECK(sim_world_get_def(w)->integrator == SIM_SYMPLECTIC);
	CHECK(sim_world_get_def(w)->gravity[1] == -9.81f);
	REQUIRE(sim_world_object_count(w) == 1 && sim_world_obstacle_count(w) == 1);
	/* 13 x 13 welded vertices, 288 triangles; mass from density 1 kg/m^2 over 0.36 m^2 */
	REQUIRE(sim_world_vertex_count(w) == 169);
	CHECK(sim_world_object_triangle_count(w, 0) == 288);
	double mass = 0.0;
	for (int i = 0; i < 169; i++)
		mass += sim_world_vertex_mass(w, i);
	CHECK_NEAR(mass, 0.36, 1e-5);
	/* z up: the seed's corner (0, -0.3, 0.75) is tela's (0, 0.75, 0.3) */
	const vec4 *x = sim_world_positions(w);
	CHECK_NEAR(x[0][0], 0.0, 1e-7);
	CHECK_NEAR(x[0][1], 0.75, 1e-7);
	CHECK_NEAR(x[0][2], 0.3, 1e-7);
	/* the table's top is at seed z = 0.7, tela y = 0.7 */
	const sim_obstacle_def *table = sim_world_obstacle(w, 0);
	REQUIRE(table->shape == SIM_SHAPE_MESH && table->triangle_count == 12);
	float top = -1.0f;
	for (int i = 0; i < table->vertex_count; i++)
		top = fmaxf(top, table->positions[3 * i + 1]);
	CHECK_NEAR(top, 0.7, 1e-7);
	/* vertex 0 is held for 1 s, then pulled along seed -x at 0.2 m/s for 1 s, then free */
	for (int k = 0; k < 100; k++)
		REQUIRE(sim_world_step(w, 0.01f) == SIM_OK);
	x = sim_world_positions(w);
	CHECK_NEAR(x[0][0], 0.0, 1e-6);
	CHECK_NEAR(x[0][1], 0.75, 1e-6);
	for (int k = 0; k < 100; k++)
		REQUIRE(sim_world_step(w, 0.01f) == SIM_OK);
	x = sim_world_positions(w);
	CHECK_NEAR(x[0][0], -0.2, 1e-5);
	CHECK_NEAR(x[0][1], 0.75, 1e-6);
	int intersections = -1, inside = -1;
	sim_world_check(w, &intersections, &inside);
	CHECK(intersections == 0 && inside == 0);
	/* free afterwards: it falls */
	for (int k = 0; k < 20; k++)
		REQUIRE(sim_world_step(w, 0.01f) == SIM_OK);
	CHECK(sim_world_positions(w)[0][1] < 0.74f);
	sim_world_destroy(&w);
}

/* A seed folder with a broken file names that file and line; missing files name the path. */
static void test_seed_folder_errors(void)
{
	static const struct {
		const char *dir, *message;
	} cases[] = {
	    {"/seed-bad/nan-density", "bodies/par_cloth:6: density (kg/m^2): expected 1 number"},
	    {"/seed-bad/missing-vel", "bodies/vel_cloth: cannot open"},
	    {"/seed-bad/odd-list", "bodies/body_list:2: 'dpo_cloth' has no par_ and vel_ files after it"},
	    {"/seed-bad/no-fps", "world_parameters/world_parameters:3: missing framerate"},
	    {"/seed-bad/vertex-range", "bodies/vel_cloth:3: "},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char dir[512];
		snprintf(dir, sizeof dir, "%s%s", TELA_TEST_DATA, cases[i].dir);
		scn_scene *s = NULL;
		scn_error err = {0};
		CHECK_MSG(scn_load(dir, &s, &err) != SCN_OK && !s, "%s was accepted", dir);
		CHECK_MSG(strstr(err.message, cases[i].message), "%s: got '%s', want '%s'", cases[i].dir, err.message,
		          cases[i].message);
		scn_scene_free(&s);
	}
}

/* A rigid body's velocity file moves it by its vertex 0, block by block. */
static void test_obstacle_velocity_blocks(void)
{
	sim_world_def def = sim_world_def_default();
	sim_world *w = sim_world_create(&def);
	sim_obstacle_def o = sim_obstacle_def_default(SIM_SHAPE_SPHERE);
	REQUIRE(sim_world_add_obstacle(w, &o) == 0);
	vec3 a = {1.0f, 0.0f, 0.0f}, b = {0.0f, 0.0f, -2.0f};
	REQUIRE(sim_world_add_obstacle_velocity_block(w, 0.0, 0, a) == SIM_OK);
	REQUIRE(sim_world_add_obstacle_velocity_block(w, 0.5, 0, b) == SIM_OK);
	CHECK(sim_world_add_obstacle_velocity_block(w, 0.5, 3, b) == SIM_ERROR_INVALID);
	for (int k = 0; k < 1000; k++)
		REQUIRE(sim_world_step(w, 1e-3f) == SIM_OK);
	vec3 p;
	versor q;
	sim_world_obstacle_pose(w, 0, p, q);
	CHECK_NEAR(p[0], 0.5, 1e-5);
	CHECK_NEAR(p[2], -1.0, 1e-5);
	sim_world_destroy(&w);
}

/* A live material change gives the world that material would have built: the same
 * masses and, stepped on, the same state bit for bit. */
static void test_set_material_matches_built(void)
{
	const char *base = "[world]\ngravity = 0 -9.81 0\n[grid g]\nresolution = 6 5\nsize = 0.5 0.4\npins = 0 5\n";
	const char *built = "[world]\ngravity = 0 -9.81 0\n[grid g]\nresolution = 6 5\nsize = 0.5 0.4\npins = 0 5\n"
	                    "density = 0.5\nstructural = 80\nshear = 30\nbend = 1\nstructural_damping = 0.1\n"
	                    "friction = 0.6\nthickness = 0.004\n";
	sim_world *a = build(base), *b = build(built);
	REQUIRE(a && b);
	sim_material m = *sim_world_object_material(b, 0);
	CHECK(sim_world_set_material(a, 0, &m) == SIM_OK);
	for (int i = 0; i < 30; i++)
		CHECK_NEAR(sim_world_vertex_mass(a, i), sim_world_vertex_mass(b, i), 1e-9);
	CHECK(sim_world_object_material(a, 0)->friction == 0.6f);
	for (int k = 0; k < 300; k++) {
		REQUIRE(sim_world_step(a, 1e-3f) == SIM_OK);
		REQUIRE(sim_world_step(b, 1e-3f) == SIM_OK);
	}
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	m.stiffness[0] = -1.0f;
	CHECK(sim_world_set_material(a, 0, &m) == SIM_ERROR_INVALID);
	CHECK(sim_world_set_material(a, 3, sim_world_object_material(b, 0)) == SIM_ERROR_INVALID);
	sim_world_destroy(&a);
	sim_world_destroy(&b);
}

static const test_case tests[] = {
    TEST(test_set_material_matches_built),
    TEST(test_builtins_build),
    TEST(test_grid_matches_api),
    TEST(test_material_inheritance),
    TEST(test_defaults_that_hold),
    TEST(test_pair_friction),
    TEST(test_z_up),
    TEST(test_obstacle_orientation),
    TEST(test_motion_closed_form),
    TEST(test_bad_scenes),
    TEST(test_bad_bytes),
    TEST(test_indented_keys),
    TEST(test_seed_folder),
    TEST(test_seed_folder_errors),
    TEST(test_obstacle_velocity_blocks),
};

TEST_MAIN(tests)
