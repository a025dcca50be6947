/* Writing scenes back (scn_scene_write): a written scene reads into the same world, so
 * that stepping both gives bit-identical states, with or without changed settings; the
 * text of a scene saved, loaded and saved again is the same text; and a scene that cannot
 * be written says why and leaves no file. */
#define _XOPEN_SOURCE 700
#include "scratch.h"
#include "test.h"

#include "scenes/scenes.h"
#include "sim/sim.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

enum { STEPS = 150 };

static char tmp[256];

static void make_tmp(void)
{
	if (!tmp[0])
		snprintf(tmp, sizeof tmp, "%s", scratch("scene-write"));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strdup(buf);
}

/* Steps both worlds `steps` times with dt; false if a step failed. */
static bool step_both(sim_world *a, sim_world *b, float dt, int steps)
{
	for (int s = 0; s < steps; s++)
		if (sim_world_step(a, dt) != SIM_OK || sim_world_step(b, dt) != SIM_OK)
			return false;
	return true;
}

/* Saves `s` (with `o`) to `out`, reads it back, checks that saving that gives the same
 * text, and returns the reloaded scene. */
static scn_scene *save_and_reload(const scn_scene *s, const scn_overrides *o, const char *out)
{
	scn_error err = {0};
	if (scn_scene_write(s, o, out, &err) != SCN_OK) {
		fprintf(stderr, "write %s: %s\n", out, err.message);
		return NULL;
	}
	scn_scene *back = NULL;
	if (scn_load(out, &back, &err) != SCN_OK) {
		fprintf(stderr, "reload %s: %s\n", out, err.message);
		return NULL;
	}
	char *first = slurp(out);
	char *again = scn_scene_text(back, NULL, out, &err);
	bool same = first && again && strcmp(first, again) == 0;
	CHECK_MSG(same, "%s: saving the reloaded scene changed the text:\n--- first\n%s\n--- again\n%s", out,
	          first ? first : "(none)", again ? again : err.message);
	free(first);
	free(again);
	return back;
}

/* Every built-in scene, written and read back, steps to the same bits. */
static void test_builtins_same_run(void)
{
	make_tmp();
	for (int i = 0; i < scn_builtin_count(); i++) {
		const char *name = scn_builtin_info(i)->name;
		scn_scene *s = NULL, *back = NULL;
		scn_error err = {0};
		REQUIRE_MSG(scn_load(name, &s, &err) == SCN_OK, "%s", err.message);
		char out[512];
		snprintf(out, sizeof out, "%s/%s.ini", tmp, name);
		back = save_and_reload(s, NULL, out);
		CHECK_MSG(back, "%s", name);
		if (!back) {
			scn_scene_free(&s);
			continue;
		}
		CHECK(scn_scene_info(back)->dt == scn_scene_info(s)->dt);
		CHECK(scn_scene_info(back)->seconds == scn_scene_info(s)->seconds);
		float p0[3], t0[3], f0, p1[3], t1[3], f1;
		scn_scene_view(s, p0, t0, &f0);
		scn_scene_view(back, p1, t1, &f1);
		CHECK(memcmp(p0, p1, sizeof p0) == 0 && memcmp(t0, t1, sizeof t0) == 0 && f0 == f1);
		sim_world *a = NULL, *b = NULL;
		REQUIRE_MSG(scn_build(s, &a, &err) == SCN_OK, "%s", err.message);
		REQUIRE_MSG(scn_build(back, &b, &err) == SCN_OK, "%s", err.message);
		CHECK_MSG(sim_world_state_hash(a) == sim_world_state_hash(b), "%s: start", name);
		CHECK(memcmp(sim_world_get_def(a), sim_world_get_def(b), offsetof(sim_world_def, worker_count)) == 0);
		CHECK_MSG(step_both(a, b, scn_scene_info(s)->dt, STEPS), "%s", name);
		CHECK_MSG(sim_world_state_hash(a) == sim_world_state_hash(b), "%s: after %d steps", name, STEPS);
		sim_world_destroy(&a);
		sim_world_destroy(&b);
		scn_scene_free(&s);
		scn_scene_free(&back);
	}
}

/* The panel's changes (world settings, step, one cloth's material) saved: the reloaded
 * scene runs as the edited world does. */
static void test_changed_settings_same_run(void)
{
	make_tmp();
	scn_scene *s = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load("two-cloths", &s, &err) == SCN_OK, "%s", err.message);
	sim_world *a = NULL;
	REQUIRE_MSG(scn_build(s, &a, &err) == SCN_OK, "%s", err.message);
	REQUIRE(sim_world_object_count(a) >= 2);
	sim_world_def def = *sim_world_get_def(a);
	def.integrator = SIM_IMPLICIT;
	def.substeps = 2;
	def.gravity[0] = 0.75f, def.gravity[1] = -7.25f, def.gravity[2] = 0.1f;
	def.wind[0] = 1.5f, def.wind[2] = -0.3f;
	def.air_damping = 0.03f;
	def.strain_limit = true;
	def.strain_tau = 0.0001f; /* the edge of the file's range */
	def.self_collisions = false;
	REQUIRE(sim_world_set_def(a, &def) == SIM_OK);
	int objects = sim_world_object_count(a);
	sim_material mats[8];
	REQUIRE(objects <= 8);
	for (int i = 0; i < objects; i++)
		mats[i] = *sim_world_object_material(a, i);
	mats[1].stiffness[SIM_SPRING_STRUCTURAL] = 812.5f;
	mats[1].damping[SIM_SPRING_SHEAR] = 0.1f / 3.0f; /* not a short decimal */
	mats[1].friction = 0.9f;
	mats[1].thickness = 0.004f;
	REQUIRE(sim_world_set_material(a, 1, &mats[1]) == SIM_OK);
	float dt = 0.7e-3f;
	scn_overrides o = {.def = &def, .dt = dt, .materials = mats, .material_count = objects};
	char out[512];
	snprintf(out, sizeof out, "%s/changed.ini", tmp);
	scn_scene *back = save_and_reload(s, &o, out);
	REQUIRE(back);
	CHECK(scn_scene_info(back)->dt == dt);
	sim_world *b = NULL;
	REQUIRE_MSG(scn_build(back, &b, &err) == SCN_OK, "%s", err.message);
	CHECK(memcmp(sim_world_get_def(a), sim_world_get_def(b), offsetof(sim_world_def, worker_count)) == 0);
	CHECK(memcmp(sim_world_object_material(b, 1), &mats[1], sizeof mats[1]) == 0);
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	CHECK(step_both(a, b, dt, STEPS));
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	/* and the changes mattered: the scene as it was runs differently */
	sim_world *c = NULL;
	REQUIRE(scn_build(s, &c, &err) == SCN_OK);
	for (int k = 0; k < STEPS; k++)
		REQUIRE(sim_world_step(c, dt) == SIM_OK);
	CHECK(sim_world_state_hash(c) != sim_world_state_hash(b));
	sim_world_destroy(&a);
	sim_world_destroy(&b);
	sim_world_destroy(&c);
	scn_scene_free(&s);
	scn_scene_free(&back);
}

/* What depends on which key was given: corner, unnormalised axes and normals, rate, a
 * box by its size, a capsule by its axis, long pin lists, materials with pair friction,
 * per-vertex velocities and a motion. */
static void test_key_choices_survive(void)
{
	make_tmp();
	char pins[200];
	snprintf(pins, sizeof pins, "pins = 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29");
	char text[4096];
	snprintf(text, sizeof text,
	         "[scene]\nname = choices\ndescription = every key choice; with a semicolon\nseconds = 0.3\n"
	         "[world]\nrate = 1000\nsubsteps = 2\ngravity = 0.1 -9 0.2\n"
	         "[material silk]\nmass = 0.5\nfriction = 0.2\nfriction_with = silk 0.05\nfriction_with = ball 0.8\n"
	         "[grid sheet]\nmaterial = silk\nresolution = 31 9\nsize = 0.9 0.3\ncorner = -0.4 1.1 0.2\n"
	         "axis_u = 0.8 0.15 2.1\naxis_v = 2.1 0 -0.8\n%s\npins = row 8\npins = column 30 31\n"
	         "vertex_velocity = 40 0 1 0\nvertex_velocity = 41 0.3 0 0\n"
	         "[tetrahedron tet]\ncenter = 0.5 1.6 0\nedge = 0.15\nanchor_stiffness = 30\nanchor_damping = 0.2\n"
	         "[sphere ball]\nposition = 0 0.4 0\nradius = 0.3\n"
	         "[plane floor]\nnormal = 0.1 0.25 0.3\nposition = 0 -0.1 0\nfriction = 0.5\n"
	         "[box crate]\nposition = 0.6 0.2 0.1\nsize = 0.3 0.2 0.25\nrotate = 10 20 30\n"
	         "[capsule rod]\nposition = -0.6 0.3 0\naxis = 0.9 0.75 0.3\nradius = 0.05\nhalf_height = 0.2\n"
	         "angular_velocity = 0 1 0\n"
	         "[motion lift]\nobject = sheet\nvertices = row 0\nvelocity = 0 0.5 0\nstop = 0.1\nthen = release\n",
	         pins);
	char src[512], out[512];
	snprintf(src, sizeof src, "%s/choices-src.ini", tmp);
	snprintf(out, sizeof out, "%s/choices.ini", tmp);
	FILE *f = fopen(src, "w");
	REQUIRE(f);
	fputs(text, f);
	fclose(f);
	scn_scene *s = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(src, &s, &err) == SCN_OK, "%s", err.message);
	scn_scene *back = save_and_reload(s, NULL, out);
	REQUIRE(back);
	CHECK(strcmp(scn_scene_info(back)->name, "choices") == 0);
	CHECK(strcmp(scn_scene_info(back)->description, "every key choice; with a semicolon") == 0);
	CHECK(scn_scene_info(back)->dt == scn_scene_info(s)->dt);
	sim_world *a = NULL, *b = NULL;
	REQUIRE_MSG(scn_build(s, &a, &err) == SCN_OK, "%s", err.message);
	REQUIRE_MSG(scn_build(back, &b, &err) == SCN_OK, "%s", err.message);
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	/* these axes change in the last bit when normalised twice: the file keeps them as given */
	REQUIRE(sim_world_obstacle_count(a) == 4 && sim_world_obstacle_count(b) == 4);
	for (int i = 0; i < 4; i++) {
		vec3 pa, pb;
		versor qa, qb;
		sim_world_obstacle_pose(a, i, pa, qa);
		sim_world_obstacle_pose(b, i, pb, qb);
		CHECK_MSG(memcmp(pa, pb, sizeof pa) == 0 && memcmp(qa, qb, sizeof qa) == 0, "obstacle %d", i);
	}
	CHECK(step_both(a, b, scn_scene_info(s)->dt, 60));
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	/* a long selection is split over lines the reader takes */
	char *written = slurp(out);
	REQUIRE(written);
	CHECK(strstr(written, "pins = 0 1 2") != NULL && strstr(written, "row 8") != NULL);
	for (char *line = written, *end; *line; line = end + 1) {
		end = strchr(line, '\n');
		REQUIRE(end);
		CHECK(end - line <= 198);
	}
	free(written);
	sim_world_destroy(&a);
	sim_world_destroy(&b);
	scn_scene_free(&s);
	scn_scene_free(&back);
}

/* A seed folder (z up, meshes and velocity files named by path) becomes a scene file
 * that runs the same, with a changed gravity written back into the file's axes. */
static void test_seed_folder_same_run(void)
{
	make_tmp();
	scn_scene *s = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(TELA_TEST_DATA "/seed/environment", &s, &err) == SCN_OK, "%s", err.message);
	sim_world *a = NULL;
	REQUIRE_MSG(scn_build(s, &a, &err) == SCN_OK, "%s", err.message);
	sim_world_def def = *sim_world_get_def(a);
	def.gravity[0] = 1.0f, def.gravity[1] = -8.0f, def.gravity[2] = 0.5f; /* world axes, y up */
	REQUIRE(sim_world_set_def(a, &def) == SIM_OK);
	scn_overrides o = {.def = &def};
	char out[512];
	snprintf(out, sizeof out, "%s/seed.ini", tmp);
	scn_scene *back = save_and_reload(s, &o, out);
	REQUIRE(back);
	char *written = slurp(out);
	REQUIRE(written);
	CHECK(strstr(written, "up = z\n") != NULL);
	CHECK(strstr(written, "gravity = 1 -0.5 -8\n") != NULL); /* (x, y, z) world is (x, -z, y) z-up */
	free(written);
	sim_world *b = NULL;
	REQUIRE_MSG(scn_build(back, &b, &err) == SCN_OK, "%s", err.message);
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	CHECK(step_both(a, b, scn_scene_info(s)->dt, 40));
	CHECK(sim_world_state_hash(a) == sim_world_state_hash(b));
	sim_world_destroy(&a);
	sim_world_destroy(&b);
	scn_scene_free(&s);
	scn_scene_free(&back);
}

/* Files the scene names are written relative to the new file's folder when they lie
 * under it, and by absolute path otherwise. */
static void test_file_names(void)
{
	make_tmp();
	char dir[600], mesh[700], src[600], path[700];
	snprintf(dir, sizeof dir, "%s/meshes", tmp);
	REQUIRE(mkdir(dir, 0777) == 0 || access(dir, F_OK) == 0);
	sim_world *g = scn_create("hanging");
	REQUIRE(g);
	snprintf(mesh, sizeof mesh, "%s/sheet.stl", dir);
	REQUIRE(scn_write_stl(g, 0, mesh) == 0);
	sim_world_destroy(&g);
	snprintf(src, sizeof src, "%s/mesh.ini", tmp);
	FILE *f = fopen(src, "w");
	REQUIRE(f);
	fputs("[mesh m]\nfile = meshes/sheet.stl\npins = 0\n", f);
	fclose(f);
	scn_scene *s = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(src, &s, &err) == SCN_OK, "%s", err.message);
	char *text = scn_scene_text(s, NULL, src, &err);
	REQUIRE(text);
	CHECK(strstr(text, "\nfile = meshes/sheet.stl\n") != NULL);
	free(text);
	snprintf(path, sizeof path, "%s/inside.ini", dir);
	text = scn_scene_text(s, NULL, path, &err);
	REQUIRE(text);
	CHECK(strstr(text, "\nfile = sheet.stl\n") != NULL);
	free(text);
	text = scn_scene_text(s, NULL, "/elsewhere.ini", &err);
	REQUIRE(text);
	char real[4096];
	REQUIRE(realpath(mesh, real));
	char expect[4200];
	snprintf(expect, sizeof expect, "\nfile = %s\n", real);
	CHECK(strstr(text, expect) != NULL);
	free(text);
	/* the mesh gone: the scene cannot be written, and the message names the file */
	REQUIRE(remove(mesh) == 0);
	snprintf(path, sizeof path, "%s/gone.ini", tmp);
	memset(&err, 0, sizeof err);
	CHECK(scn_scene_write(s, NULL, path, &err) == SCN_ERROR_IO);
	CHECK_MSG(strstr(err.message, "sheet.stl") != NULL, "%s", err.message);
	CHECK(access(path, F_OK) != 0);
	scn_scene_free(&s);
}

/* A folder that is not there: an I/O error naming the path, and nothing written.  A
 * setting beyond what a scene file takes: refused with the reader's message, nothing
 * written. */
static void test_write_errors(void)
{
	make_tmp();
	scn_scene *s = NULL;
	REQUIRE(scn_load("hanging", &s, NULL) == SCN_OK);
	char path[600];
	snprintf(path, sizeof path, "%s/no-such-folder/x.ini", tmp);
	scn_error err = {0};
	CHECK(scn_scene_write(s, NULL, path, &err) == SCN_ERROR_IO);
	CHECK_MSG(strstr(err.message, "no-such-folder/x.ini") != NULL, "%s", err.message);
	CHECK(access(path, F_OK) != 0);

	sim_world_def def = sim_world_def_default();
	def.air_damping = 5000.0f; /* the file takes [0, 1000] */
	scn_overrides o = {.def = &def};
	snprintf(path, sizeof path, "%s/too-damped.ini", tmp);
	memset(&err, 0, sizeof err);
	CHECK(scn_scene_text(s, &o, path, &err) == NULL);
	CHECK(scn_scene_write(s, &o, path, &err) == SCN_ERROR_PARSE);
	CHECK_MSG(strstr(err.message, "would not read back") && strstr(err.message, "air_damping: '5000'"), "%s",
	          err.message);
	CHECK(access(path, F_OK) != 0);
	scn_scene_free(&s);
}

static const test_case tests[] = {
    TEST(test_builtins_same_run),
    TEST(test_changed_settings_same_run),
    TEST(test_key_choices_survive),
    TEST(test_seed_folder_same_run),
    TEST(test_file_names),
    TEST(test_write_errors),
};

TEST_MAIN(tests)
