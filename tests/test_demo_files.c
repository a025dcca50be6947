/* Scenes in and out of the window, offscreen: a scene file or seed folder dropped on the
 * window (SDL_DROPFILE) replaces the running scene; a bad one shows its file:line message
 * and the old scene keeps running; the panel opens a typed path and a recent scene (the
 * list kept under $XDG_CONFIG_HOME/tela/); "Save scene" writes the panel's settings into a
 * scene file that, opened again, runs with them. */
#define _XOPEN_SOURCE 700
#include "scratch.h"
#include "test.h"

#include "demo.h"
#include "demo_files.h"

#include "scenes/scenes.h"

#include <SDL2/SDL.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#ifndef TELA_TEST_DATA
#error "TELA_TEST_DATA must name tests/data"
#endif

static char tmp[256];

/* A scratch folder that is also the demo's config home, so no test touches the user's. */
static void make_tmp(void)
{
	if (tmp[0])
		return;
	snprintf(tmp, sizeof tmp, "%s", scratch("demo-files"));
	char config[300];
	snprintf(config, sizeof config, "%s/config", tmp);
	setenv("XDG_CONFIG_HOME", config, 1);
}

static demo *open_demo(const char *scene, bool paused)
{
	make_tmp();
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	demo_options o = demo_options_default();
	o.scene = scene;
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = 1000, o.height = 600;
	o.vsync = false;
	o.rate_scale = 1.0;
	o.start_paused = paused;
	char error[512];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	if (!d)
		fprintf(stderr, "demo_create: %s\n", error);
	return d;
}

static void frames(demo *d, int n)
{
	for (int i = 0; i < n; i++)
		demo_frame(d);
}

static void drop(const char *path)
{
	SDL_Event e = {.type = SDL_DROPFILE};
	e.drop.file = SDL_strdup(path);
	SDL_PushEvent(&e);
}

static const char *scene_name(demo *d) { return st_get_layout(demo_sim(d))->scene; }

static bool message_has(demo *d, const char *part, bool error)
{
	bool is_error;
	const char *m = demo_files_message(d, &is_error);
	if (!strstr(m, part) || is_error != error) {
		fprintf(stderr, "message: '%s' (%s), expected '%s' (%s)\n", m, is_error ? "error" : "fine", part,
		        error ? "error" : "fine");
		return false;
	}
	return true;
}

/* The first line of the recent-scenes file. */
static bool first_recent(char *out, size_t cap)
{
	char path[400];
	snprintf(path, sizeof path, "%s/config/tela/recent-scenes", tmp);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool ok = fgets(out, (int)cap, f) != NULL;
	fclose(f);
	out[strcspn(out, "\n")] = '\0';
	return ok;
}

/* Frames until the simulation has stepped `steps` more times. */
static bool runs_on(demo *d, int64_t steps)
{
	int64_t until = demo_snapshot(d)->steps + steps;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		demo_frame(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (demo_snapshot(d)->steps < until && t.tv_sec - t0.tv_sec < 60);
	return demo_snapshot(d)->steps >= until;
}

static void test_drop_opens_scene(void)
{
	demo *d = open_demo("tetrahedron", false);
	REQUIRE(d);
	frames(d, 2);
	REQUIRE(demo_snapshot(d)->vertex_count == 4);

	drop(TELA_SCENES_DIR "/hanging.ini");
	CHECK(demo_frame(d));
	CHECK_MSG(strcmp(scene_name(d), "hanging") == 0, "scene %s", scene_name(d));
	CHECK(demo_snapshot(d)->vertex_count == 400);
	CHECK(message_has(d, "opened", false));
	char real[PATH_MAX], recent[PATH_MAX + 2];
	REQUIRE(realpath(TELA_SCENES_DIR "/hanging.ini", real));
	CHECK(first_recent(recent, sizeof recent) && strcmp(recent, real) == 0);

	drop(TELA_TEST_DATA "/seed/environment");
	CHECK(demo_frame(d));
	CHECK_MSG(strcmp(scene_name(d), "environment") == 0, "scene %s", scene_name(d));
	CHECK(demo_snapshot(d)->vertex_count == 169);

	/* a bad file: its file:line message, and the seed scene runs on */
	drop(TELA_TEST_DATA "/scenes/bad-line.ini");
	CHECK(demo_frame(d));
	CHECK(message_has(d, "bad-line.ini:6: size: '1 one' is not 2 numbers", true));
	CHECK(strcmp(scene_name(d), "environment") == 0);
	CHECK(demo_snapshot(d)->vertex_count == 169);
	CHECK(runs_on(d, 5));
	drop(TELA_TEST_DATA "/scenes/no-such.ini");
	CHECK(demo_frame(d));
	CHECK(message_has(d, "no-such.ini: no such file or folder", true));
	CHECK(strcmp(scene_name(d), "environment") == 0);
	/* the failures are not recent scenes */
	REQUIRE(realpath(TELA_TEST_DATA "/seed/environment", real));
	CHECK(first_recent(recent, sizeof recent) && strcmp(recent, real) == 0);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void test_panel_opens_path_and_recent(void)
{
	make_tmp();
	char real[PATH_MAX], seed[PATH_MAX], list[400];
	REQUIRE(realpath(TELA_SCENES_DIR "/hanging.ini", real));
	REQUIRE(realpath(TELA_TEST_DATA "/seed/environment", seed));
	snprintf(list, sizeof list, "%s/config", tmp);
	mkdir(list, 0777);
	snprintf(list, sizeof list, "%s/config/tela", tmp);
	mkdir(list, 0777);
	snprintf(list, sizeof list, "%s/config/tela/recent-scenes", tmp);
	FILE *f = fopen(list, "w");
	REQUIRE(f);
	fprintf(f, "%s\n%s\n", seed, real);
	fclose(f);
	demo *d = open_demo("tetrahedron", false);
	REQUIRE(d);
	frames(d, 2);
	panel_model m;
	demo_panel_model(d, &m);
	REQUIRE(m.open_path && m.save_path);
	REQUIRE(m.recent_count == 2);
	CHECK(strcmp(m.recent[0], seed) == 0);
	CHECK(strcmp(m.recent[1], real) == 0);
	m.open_recent = 1;
	CHECK(demo_apply_panel(d, &m));
	frames(d, 2);
	CHECK_MSG(strcmp(scene_name(d), "hanging") == 0, "scene %s", scene_name(d));
	demo_panel_model(d, &m);
	CHECK(strcmp(m.recent[0], real) == 0); /* it moved to the front */

	snprintf(m.open_path, PANEL_PATH_SIZE, "%s", TELA_TEST_DATA "/scenes/grab.ini");
	m.open_requested = true;
	CHECK(demo_apply_panel(d, &m));
	frames(d, 2);
	CHECK_MSG(strcmp(scene_name(d), "grab") == 0, "scene %s", scene_name(d));
	int vertices = demo_snapshot(d)->vertex_count;

	demo_panel_model(d, &m);
	CHECK(strstr(m.open_path, "grab.ini") != NULL); /* the field keeps what was typed */
	snprintf(m.open_path, PANEL_PATH_SIZE, "%s", TELA_TEST_DATA "/scenes/bad-line.ini");
	m.open_requested = true;
	CHECK(demo_apply_panel(d, &m));
	frames(d, 2);
	CHECK(strcmp(scene_name(d), "grab") == 0 && demo_snapshot(d)->vertex_count == vertices);
	demo_panel_model(d, &m);
	CHECK(m.files_error && strstr(m.files_message, "bad-line.ini:6:") != NULL);
	CHECK(runs_on(d, 5));
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static bool same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static void test_save_scene_keeps_settings(void)
{
	demo *d = open_demo("hanging", true);
	REQUIRE(d);
	frames(d, 2);
	panel_model m;
	demo_panel_model(d, &m);
	m.def.integrator = SIM_IMPLICIT;
	m.def.substeps = 3;
	m.def.gravity[0] = 0.5f, m.def.gravity[1] = -7.0f;
	m.def.wind[2] = 2.5f;
	m.def.strain_limit = true;
	m.def.strain_tau = 0.07f;
	m.def_changed = true;
	m.material.stiffness[SIM_SPRING_STRUCTURAL] = 321.0f;
	m.material.friction = 0.65f;
	m.material_changed = true;
	m.dt = 0.0008f;
	m.dt_changed = true;
	CHECK(demo_apply_panel(d, &m));
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		demo_frame(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((demo_snapshot(d)->dt != 0.0008f || demo_snapshot(d)->def.integrator != SIM_IMPLICIT) &&
	         t.tv_sec - t0.tv_sec < 30);
	REQUIRE(demo_snapshot(d)->dt == 0.0008f);

	char out[400];
	snprintf(out, sizeof out, "%s/saved.ini", tmp);
	demo_panel_model(d, &m);
	snprintf(m.save_path, PANEL_PATH_SIZE, "%s", out);
	m.save_requested = true;
	CHECK(demo_apply_panel(d, &m));
	CHECK(message_has(d, "saved", false));

	/* the file holds what the panel set */
	scn_scene *s = NULL;
	sim_world *w = NULL;
	scn_error err = {0};
	REQUIRE_MSG(scn_load(out, &s, &err) == SCN_OK, "%s", err.message);
	REQUIRE_MSG(scn_build(s, &w, &err) == SCN_OK, "%s", err.message);
	CHECK(same_float(scn_scene_info(s)->dt, 0.0008f));
	const sim_world_def *def = sim_world_get_def(w);
	CHECK(def->integrator == SIM_IMPLICIT && def->substeps == 3 && def->strain_limit);
	CHECK(same_float(def->gravity[0], 0.5f) && same_float(def->gravity[1], -7.0f));
	CHECK(same_float(def->wind[2], 2.5f) && same_float(def->strain_tau, 0.07f));
	const sim_material *mat = sim_world_object_material(w, 0);
	CHECK(same_float(mat->stiffness[SIM_SPRING_STRUCTURAL], 321.0f) && same_float(mat->friction, 0.65f));
	CHECK(sim_world_vertex_count(w) == 400);
	sim_world_destroy(&w);
	scn_scene_free(&s);

	/* opened again, it runs with them */
	drop(out);
	CHECK(demo_frame(d));
	CHECK_MSG(strcmp(scene_name(d), "saved") == 0, "scene %s", scene_name(d));
	CHECK(demo_snapshot(d)->def.integrator == SIM_IMPLICIT);
	CHECK(same_float(demo_snapshot(d)->dt, 0.0008f));

	/* a folder that is not there: the message says so, the scene runs on */
	demo_panel_model(d, &m);
	snprintf(m.save_path, PANEL_PATH_SIZE, "%s/no-such-folder/x.ini", tmp);
	m.save_requested = true;
	CHECK(demo_apply_panel(d, &m));
	CHECK(message_has(d, "no-such-folder/x.ini", true));
	CHECK(strcmp(scene_name(d), "saved") == 0);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

/* A corrupt recent-scenes file costs nothing: the demo starts, lists what it can. */
static void test_corrupt_recent_file(void)
{
	make_tmp();
	char path[400];
	snprintf(path, sizeof path, "%s/config", tmp);
	mkdir(path, 0777);
	snprintf(path, sizeof path, "%s/config/tela", tmp);
	mkdir(path, 0777);
	snprintf(path, sizeof path, "%s/config/tela/recent-scenes", tmp);
	FILE *f = fopen(path, "wb");
	REQUIRE(f);
	static const char junk[] = "\x7f" "ELF\0\0\n/ok/one.ini\nrelative\n\xff\xfe\n";
	fwrite(junk, 1, sizeof junk - 1, f);
	fclose(f);
	demo *d = open_demo("tetrahedron", true);
	REQUIRE(d);
	frames(d, 2);
	panel_model m;
	demo_panel_model(d, &m);
	CHECK(m.recent_count == 1 && strcmp(m.recent[0], "/ok/one.ini") == 0);
	demo_destroy(&d);
}

static const test_case tests[] = {
    TEST(test_drop_opens_scene),
    TEST(test_panel_opens_path_and_recent),
    TEST(test_save_scene_keeps_settings),
    TEST(test_corrupt_recent_file),
};

TEST_MAIN(tests)
