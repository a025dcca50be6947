/* The demo driven through SDL events, offscreen: the mouse grabs a cloth corner and
 * drags it, and the corner ends where the drag put the pointer (the plane facing the
 * camera through the grabbed vertex, so N pixels of drag are N pixels' worth of metres
 * at that depth).  Once without the panel in a small window, once with it (on the right,
 * clear of the cloth) in a larger one. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

#include "demo.h"

#include <SDL2/SDL.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TELA_TEST_DATA
#error "TELA_TEST_DATA must name tests/data"
#endif

static void push_motion(int x, int y, int dx, int dy, Uint32 buttons)
{
	SDL_Event e = {.type = SDL_MOUSEMOTION};
	e.motion.x = x, e.motion.y = y, e.motion.xrel = dx, e.motion.yrel = dy, e.motion.state = buttons;
	SDL_PushEvent(&e);
}

static void push_button(Uint32 type, int x, int y)
{
	SDL_Event e = {.type = type};
	e.button.button = SDL_BUTTON_LEFT, e.button.clicks = 1, e.button.x = x, e.button.y = y;
	e.button.state = type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED;
	SDL_PushEvent(&e);
}

/* Frames for about `seconds` of wall time. */
static void frames(demo *d, double seconds)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		demo_frame(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) < seconds);
}

static void grab_pulls_corner(int width, int height, bool with_panel)
{
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/grab.ini";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = width, o.height = height;
	o.vsync = false;
	o.panel = with_panel;
	char error[512];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	REQUIRE_MSG(d != NULL, "%s", error);
	CHECK((demo_panel(d) != NULL) == with_panel);
	frames(d, 0.2);
	/* vertex 80 is the corner at (0.2, 0.8, 0): bottom right as seen from the camera */
	const int corner = 80;
	const st_snapshot *s = demo_snapshot(d);
	float start[3];
	memcpy(start, s->positions[corner], sizeof start);
	CHECK_NEAR(start[0], 0.2, 1e-3);
	CHECK_NEAR(start[1], 0.8, 1e-3);
	float px, py;
	demo_project(d, start, &px, &py);
	int x = (int)lroundf(px), y = (int)lroundf(py);
	push_motion(x, y, 0, 0, 0);
	frames(d, 0.05);
	push_button(SDL_MOUSEBUTTONDOWN, x, y);
	frames(d, 0.05);
	CHECK(demo_snapshot(d)->grabbed_vertex == corner);
	/* drag 60 pixels left and 40 up in steps */
	for (int k = 1; k <= 10; k++) {
		push_motion(x - 6 * k, y - 4 * k, -6, -4, SDL_BUTTON_LMASK);
		frames(d, 0.03);
	}
	frames(d, 1.5);
	s = demo_snapshot(d);
	/* the camera looks along -z from z = 1.5 with 45 degrees over `height` pixels: at the
	 * corner's depth (1.5 m) a pixel is 2 * 1.5 * tan(22.5 deg) / height m */
	double pixel = 2.0 * 1.5 * tan(22.5 * 3.14159265358979 / 180.0) / height;
	const float *p = s->positions[corner];
	CHECK_MSG(fabs(p[0] - (start[0] - 60.0 * pixel)) < 0.004, "x %.4f, expected %.4f", (double)p[0],
	          start[0] - 60.0 * pixel);
	CHECK_MSG(fabs(p[1] - (start[1] + 40.0 * pixel)) < 0.004, "y %.4f, expected %.4f", (double)p[1],
	          start[1] + 40.0 * pixel);
	CHECK_NEAR(p[2], 0.0, 0.004);
	float f = sqrtf(s->grab_force[0] * s->grab_force[0] + s->grab_force[1] * s->grab_force[1] +
	                s->grab_force[2] * s->grab_force[2]);
	CHECK_MSG(f > 0.0f, "the coupling holds the stretched corner (force %g N)", (double)f);
	push_button(SDL_MOUSEBUTTONUP, x - 60, y - 40);
	frames(d, 0.1);
	CHECK(demo_snapshot(d)->grabbed_vertex == -1);
	CHECK(demo_snapshot(d)->achieved_hz > 0.0);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void test_mouse_grab_pulls_corner(void) { grab_pulls_corner(400, 300, false); }
static void test_mouse_grab_with_panel(void) { grab_pulls_corner(1000, 600, true); }

static void push_key(SDL_Keycode k)
{
	SDL_Event e = {.type = SDL_KEYDOWN};
	e.key.keysym.sym = k;
	e.key.state = SDL_PRESSED;
	SDL_PushEvent(&e);
}

/* E starts and stops the export of every step's meshes: the files run from one step to
 * the next without a gap, each a whole mesh of the square's 128 triangles. */
static void test_export_key(void)
{
	char dir[] = "/tmp/tela-demo-XXXXXX";
	REQUIRE(mkdtemp(dir) != NULL);
	char here[1024];
	REQUIRE(getcwd(here, sizeof here) != NULL);
	REQUIRE(chdir(dir) == 0);
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/grab.ini";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = 320, o.height = 240;
	o.vsync = false;
	o.panel = false;
	char error[512];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	REQUIRE_MSG(d != NULL, "%s", error);
	frames(d, 0.05);
	push_key(SDLK_e);
	frames(d, 0.3);
	push_key(SDLK_e);
	frames(d, 0.1);
	demo_destroy(&d);
	int first = -1, last = -1, count = 0;
	for (int step = 0; step < 100000; step++) {
		char path[64];
		snprintf(path, sizeof path, "tela-meshes/frame%06d_square.stl", step);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		int facets = 0;
		char line[256];
		while (fgets(line, sizeof line, f))
			facets += strstr(line, "facet normal") != NULL;
		fclose(f);
		CHECK_MSG(facets == 128, "%s: %d facets", path, facets);
		if (first < 0)
			first = step;
		last = step;
		count++;
		remove(path);
	}
	rmdir("tela-meshes");
	REQUIRE(chdir(here) == 0);
	rmdir(dir);
	CHECK_MSG(count > 10, "%d meshes exported", count);
	CHECK_MSG(count == last - first + 1, "steps %d..%d but %d files: a step was missed", first, last, count);
}

static const test_case tests[] = {
    TEST(test_export_key),
    TEST(test_mouse_grab_pulls_corner),
    TEST(test_mouse_grab_with_panel),
};

TEST_MAIN(tests)
