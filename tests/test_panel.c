/* The demo's panel (Dear ImGui), offscreen or under Xvfb: frames with the panel, the
 * heads-up line and the debug overlays raise no GL errors; the panel claims the mouse
 * over itself and nowhere else; its edits, turned into commands the way every frame
 * turns them, reach the simulation; H and F1 hide it; a scene chosen in it restarts the
 * demo in the same window; the message line shows events (a blow-up among them). */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

#include "demo.h"
#include "overlay.h"

#include "devices/device.h"
#include "devices/polhemus.h"

#include <SDL2/SDL.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TELA_TEST_DATA
#error "TELA_TEST_DATA must name tests/data"
#endif

static demo *open_demo_sized(const char *scene, double rate_scale, int width, int height)
{
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	demo_options o = demo_options_default();
	o.scene = scene;
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = width, o.height = height;
	o.vsync = false;
	o.rate_scale = rate_scale;
	char error[512];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	if (!d)
		fprintf(stderr, "demo_create: %s\n", error);
	return d;
}

static demo *open_demo(const char *scene, double rate_scale) { return open_demo_sized(scene, rate_scale, 1000, 600); }

static void frames(demo *d, int n)
{
	for (int i = 0; i < n; i++)
		demo_frame(d);
}

/* Frames until the simulation has taken `steps` more steps (it runs unpaced). */
static const st_snapshot *run_steps(demo *d, int64_t steps)
{
	int64_t until = demo_snapshot(d)->steps + steps;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	const st_snapshot *s;
	do {
		demo_frame(d);
		s = demo_snapshot(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (s->steps < until && t.tv_sec - t0.tv_sec < 120);
	return s;
}

static SDL_Event button(Uint32 type, int x, int y)
{
	SDL_Event e = {.type = type};
	e.button.button = SDL_BUTTON_LEFT, e.button.clicks = 1, e.button.x = x, e.button.y = y;
	e.button.state = type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED;
	return e;
}

static SDL_Event motion(int x, int y, int dx, int dy, Uint32 buttons)
{
	SDL_Event e = {.type = SDL_MOUSEMOTION};
	e.motion.x = x, e.motion.y = y, e.motion.xrel = dx, e.motion.yrel = dy, e.motion.state = buttons;
	return e;
}

static void push_key(SDL_Keycode key)
{
	SDL_Event e = {.type = SDL_KEYDOWN};
	e.key.keysym.sym = key;
	e.key.state = SDL_PRESSED;
	SDL_PushEvent(&e);
	e.type = SDL_KEYUP;
	e.key.state = SDL_RELEASED;
	SDL_PushEvent(&e);
}

/* A left drag of 10 steps of (dx, dy) pixels from (x, y), pushed as events. */
static void push_drag(demo *d, int x, int y, int dx, int dy)
{
	SDL_Event e = motion(x, y, 0, 0, 0);
	SDL_PushEvent(&e);
	e = button(SDL_MOUSEBUTTONDOWN, x, y);
	SDL_PushEvent(&e);
	frames(d, 1);
	for (int k = 1; k <= 10; k++) {
		e = motion(x + k * dx, y + k * dy, dx, dy, SDL_BUTTON_LMASK);
		SDL_PushEvent(&e);
		frames(d, 1);
	}
	e = button(SDL_MOUSEBUTTONUP, x + 10 * dx, y + 10 * dy);
	SDL_PushEvent(&e);
	frames(d, 1);
}

static void test_panel_frames_without_gl_errors(void)
{
	demo *d = open_demo("hanging", 1.0);
	REQUIRE(d != NULL);
	REQUIRE_MSG(demo_panel(d) != NULL, "the panel did not start");
	/* the debug overlays on as well: vertex ids and velocity arrows while the cloth falls */
	panel_model m;
	demo_panel_model(d, &m);
	m.vertex_ids = m.velocity_arrows = true;
	m.arrow_length = 0.2f, m.arrow_width = 2.0f;
	m.style = RD_SOLID_WIREFRAME;
	CHECK(demo_apply_panel(d, &m));
	frames(d, 30);
	demo_panel_model(d, &m);
	CHECK(m.vertex_ids && m.velocity_arrows && m.style == RD_SOLID_WIREFRAME);
	CHECK_MSG(m.overlay.label_count > 0 && m.overlay.label_count <= OV_LABEL_CAP, "%d vertex ids on screen",
	          m.overlay.label_count);
	CHECK_MSG(m.overlay.arrow_count > 0, "no velocity arrows");
	CHECK_MSG(m.plots->count > 0, "the plots were not fed");
	float r[4];
	CHECK(panel_rect(demo_panel(d), r));
	/* the overlays' view ends where the panel begins */
	CHECK_NEAR(m.overlay.clip[0] + m.overlay.clip[2], r[0], 0.5);
	CHECK_MSG(r[0] > 500.0f && r[0] + r[2] <= 1000.0f && r[2] > 100.0f && r[3] > 300.0f,
	          "panel at %.0f %.0f, %.0f x %.0f: not on the right half", (double)r[0], (double)r[1], (double)r[2],
	          (double)r[3]);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void test_panel_claims_only_its_own_clicks(void)
{
	demo *d = open_demo(TELA_TEST_DATA "/scenes/grab.ini", 1.0);
	REQUIRE(d != NULL);
	panel *p = demo_panel(d);
	REQUIRE(p != NULL);
	frames(d, 3);
	float r[4];
	REQUIRE(panel_rect(p, r));
	int px = (int)(r[0] + 0.5f * r[2]), py = (int)(r[1] + 0.5f * r[3]);
	/* the cloth's centre vertex (40), on screen left of the panel */
	float cx, cy;
	demo_project(d, demo_snapshot(d)->positions[40], &cx, &cy);
	CHECK_MSG(cx < r[0], "the cloth (x %.0f) is under the panel (from x %.0f)", (double)cx, (double)r[0]);

	SDL_Event e = button(SDL_MOUSEBUTTONDOWN, px, py);
	CHECK(panel_handle_event(p, &e));
	e = motion(px - 200, py, -200, 0, SDL_BUTTON_LMASK);
	CHECK_MSG(panel_handle_event(p, &e), "a drag that began on the panel is the panel's");
	e = button(SDL_MOUSEBUTTONUP, px - 200, py);
	CHECK(panel_handle_event(p, &e));

	e = button(SDL_MOUSEBUTTONDOWN, (int)cx, (int)cy);
	CHECK(!panel_handle_event(p, &e));
	e = motion(px, py, 300, 0, SDL_BUTTON_LMASK);
	CHECK_MSG(!panel_handle_event(p, &e), "a drag that began on the cloth is the demo's, also over the panel");
	e = button(SDL_MOUSEBUTTONUP, px, py);
	CHECK(!panel_handle_event(p, &e));

	e = motion(px, py, 0, 0, 0);
	panel_handle_event(p, &e);
	SDL_Event wheel = {.type = SDL_MOUSEWHEEL};
	wheel.wheel.y = 1;
	CHECK_MSG(panel_handle_event(p, &wheel), "the wheel over the panel scrolls the panel");
	e = motion((int)cx, (int)cy, 0, 0, 0);
	panel_handle_event(p, &e);
	CHECK_MSG(!panel_handle_event(p, &wheel), "the wheel over the cloth zooms");

	/* through the event queue: a drag on the panel leaves the camera alone, one on empty
	 * space (top left, below the heads-up line) orbits it */
	cam_orbit before = *demo_camera(d);
	push_drag(d, px, py, -15, 5);
	CHECK_MSG(demo_camera(d)->yaw == before.yaw && demo_camera(d)->pitch == before.pitch,
	          "a drag on the panel moved the camera");
	CHECK(demo_snapshot(d)->grabbed_vertex == -1);
	/* empty space: left of the cloth's projection, well beyond the pick's radius (the view
	 * fits the scene, so the cloth may come near the window's edge; then below or above it) */
	const st_snapshot *snap = demo_snapshot(d);
	float lo[2] = {1e9f, 1e9f}, hi[2] = {-1e9f, -1e9f};
	for (int v = 0; v < snap->vertex_count; v++) {
		float x, y;
		demo_project(d, snap->positions[v], &x, &y);
		lo[0] = fminf(lo[0], x), lo[1] = fminf(lo[1], y), hi[0] = fmaxf(hi[0], x), hi[1] = fmaxf(hi[1], y);
	}
	int ex = (int)(0.5f * lo[0]), ey = (int)(0.5f * (lo[1] + hi[1]));
	if (lo[0] < 30.0f)
		ex = (int)(0.5f * (lo[0] + hi[0])), ey = hi[1] < 540.0f ? (int)hi[1] + 30 : (int)lo[1] - 30;
	REQUIRE_MSG(ex >= 10 && ey > 60 && ey < 570, "no empty space around the cloth (%.0f..%.0f x %.0f..%.0f)",
	            (double)lo[0], (double)hi[0], (double)lo[1], (double)hi[1]);
	push_drag(d, ex, ey, 5, 3);
	CHECK_MSG(demo_camera(d)->yaw != before.yaw, "a drag on empty space (%d, %d) did not orbit", ex, ey);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void test_panel_edits_reach_simulation(void)
{
	/* the weightless square pinned at its centre vertex, unpaced so that it settles fast */
	demo *d = open_demo(TELA_TEST_DATA "/scenes/grab.ini", 0.0);
	REQUIRE(d != NULL);
	frames(d, 2);
	panel_model m;
	demo_panel_model(d, &m);
	CHECK_NEAR(m.def.gravity[1], 0.0, 1e-6);
	REQUIRE(m.layout->object_count == 1);
	m.def.gravity[1] = -9.81f;
	m.def.integrator = SIM_IMPLICIT;
	m.def.strain_limit = false;
	m.def_changed = true;
	CHECK(demo_apply_panel(d, &m));
	/* the panel keeps showing what was sent, not the lagging snapshot */
	demo_panel_model(d, &m);
	CHECK_NEAR(m.def.gravity[1], -9.81, 1e-6);
	const st_snapshot *s = run_steps(d, 4000);
	CHECK_NEAR(s->def.gravity[1], -9.81, 1e-6);
	CHECK_MSG(s->def.integrator == SIM_IMPLICIT, "integrator %s", sim_integrator_name(s->def.integrator));
	CHECK(!s->def.strain_limit);
	/* the lower half now hangs from the centre pin: its corner (vertex 80, at y 0.8) sank
	 * (by some 5 mm: the springs are stiff for its weight) */
	CHECK_MSG(s->positions[80][1] < 0.798f, "corner at y %.4f: gravity did not act", (double)s->positions[80][1]);
	float inverse_mass = s->positions[0][3];
	float strain = s->stats.max_strain;
	REQUIRE(inverse_mass > 0.0f && strain > 0.0f);

	/* twice the density: half the inverse mass, exactly as the world stepped it */
	demo_panel_model(d, &m);
	REQUIRE(m.material.total_mass == 0.0f);
	float density = m.material.areal_density * 2.0f;
	m.material.areal_density = density;
	m.material_changed = true;
	CHECK(demo_apply_panel(d, &m));
	s = run_steps(d, 3000);
	CHECK_NEAR(s->positions[0][3], 0.5 * inverse_mass, 1e-3 * inverse_mass);
	float heavier = s->stats.max_strain;

	/* a fifth of the stiffness: the hanging cloth stretches several times more */
	demo_panel_model(d, &m);
	CHECK_NEAR(m.material.areal_density, density, 0.0); /* the panel shows the material as sent */
	for (int k = 0; k < SIM_SPRING_KIND_COUNT; k++)
		m.material.stiffness[k] /= 5.0f;
	m.material_changed = true;
	CHECK(demo_apply_panel(d, &m));
	s = run_steps(d, 4000);
	CHECK_MSG(s->stats.max_strain > 2.0f * heavier, "max strain %.4f at a fifth of the stiffness, %.4f before",
	          (double)s->stats.max_strain, (double)heavier);
	printf("max strain: %.4f, twice as dense %.4f, then a fifth as stiff %.4f\n", (double)strain, (double)heavier,
	       (double)s->stats.max_strain);

	/* reset brings the scene's settings and material back */
	demo_panel_model(d, &m);
	m.action = PANEL_RESET;
	CHECK(demo_apply_panel(d, &m));
	run_steps(d, 10);
	demo_panel_model(d, &m);
	CHECK_NEAR(m.def.gravity[1], 0.0, 1e-6);
	CHECK_NEAR(m.material.stiffness[SIM_SPRING_STRUCTURAL], m.layout->objects[0].material.stiffness[SIM_SPRING_STRUCTURAL],
	           1e-6);

	/* the quit button ends the demo */
	m.action = PANEL_QUIT;
	CHECK(!demo_apply_panel(d, &m));
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void test_keys_hide_panel_and_hud(void)
{
	demo *d = open_demo(TELA_TEST_DATA "/scenes/grab.ini", 1.0);
	REQUIRE(d != NULL);
	frames(d, 2);
	float r[4];
	CHECK(panel_rect(demo_panel(d), r));
	push_key(SDLK_h);
	frames(d, 2);
	CHECK_MSG(!panel_rect(demo_panel(d), r), "H did not hide the panel");
	panel_model m;
	demo_panel_model(d, &m);
	CHECK(!m.show_panel && m.show_hud);
	push_key(SDLK_F1);
	push_key(SDLK_h);
	frames(d, 2);
	demo_panel_model(d, &m);
	CHECK(m.show_panel && !m.show_hud);
	CHECK(panel_rect(demo_panel(d), r));
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void test_scene_switch_keeps_window(void)
{
	demo *d = open_demo(TELA_TEST_DATA "/scenes/grab.ini", 1.0);
	REQUIRE(d != NULL);
	frames(d, 2);
	int tetrahedron = -1;
	for (int i = 0; i < scn_builtin_count(); i++)
		if (strcmp(scn_builtin_info(i)->name, "tetrahedron") == 0)
			tetrahedron = i;
	REQUIRE(tetrahedron >= 0);
	panel_model m;
	demo_panel_model(d, &m);
	CHECK(m.scene == -1); /* a scene file, not a built-in one */
	m.scene = tetrahedron;
	m.scene_changed = true;
	CHECK(demo_apply_panel(d, &m));
	frames(d, 5);
	CHECK_MSG(strcmp(st_get_layout(demo_sim(d))->scene, "tetrahedron") == 0, "scene %s",
	          st_get_layout(demo_sim(d))->scene);
	CHECK(demo_snapshot(d)->vertex_count == 4);
	demo_panel_model(d, &m);
	CHECK(m.scene == tetrahedron);
	char error[256];
	CHECK(!demo_switch_scene(d, "no-such-scene", error, sizeof error));
	frames(d, 2);
	CHECK_MSG(demo_snapshot(d)->vertex_count == 4, "a failed switch left the old scene");
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

/* The seed's debug views through the panel: once the cloth lies on the floor the thread
 * publishes boxes, contact pairs and the predicted state, and each becomes segments on
 * screen; turned off, nothing is recorded or drawn. */
static void test_debug_views(void)
{
	demo *d = open_demo("two-cloths", 0.0);
	REQUIRE(d != NULL);
	panel_model m;
	demo_panel_model(d, &m);
	CHECK(m.overlay.segment_count == 0);
	m.debug_boxes = m.debug_broad = m.debug_narrow = m.debug_predicted = true;
	m.depth_min = 0, m.depth_max = 1;
	m.debug_changed = true;
	CHECK(demo_apply_panel(d, &m));
	const st_snapshot *s = run_steps(d, 600);
	frames(d, 2);
	s = demo_snapshot(d);
	CHECK_MSG(s->debug_box_count > 0 && s->debug_pair_count > 0 && s->debug_predicted,
	          "boxes %d, pairs %d, predicted %s", s->debug_box_count, s->debug_pair_count,
	          s->debug_predicted ? "yes" : "no");
	/* roots and their children only: a tree per cloth and one for the floor */
	for (int i = 0; i < s->debug_box_count; i++)
		CHECK(s->debug_boxes[i][6] >= 0.0f && s->debug_boxes[i][6] <= 1.0f);
	demo_panel_model(d, &m);
	CHECK_MSG(m.overlay.segment_count > 12 * s->debug_box_count, "%d segments for %d boxes and %d pairs",
	          m.overlay.segment_count, s->debug_box_count, s->debug_pair_count);
	CHECK(m.tree_depth > 1);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	m.debug_boxes = m.debug_broad = m.debug_narrow = m.debug_predicted = false;
	m.debug_changed = true;
	CHECK(demo_apply_panel(d, &m));
	run_steps(d, 5);
	frames(d, 2);
	s = demo_snapshot(d);
	CHECK(s->debug_box_count == 0 && s->debug_pair_count == 0 && !s->debug_predicted);
	demo_panel_model(d, &m);
	CHECK(m.overlay.segment_count == 0);
	demo_destroy(&d);
}

/* How many lines of the message line hold `first` (and `second`, unless NULL). */
static int message_lines_with(const panel *p, const char *first, const char *second)
{
	int n = 0;
	for (int i = 0; panel_message(p, i); i++)
		if (strstr(panel_message(p, i), first) && (!second || strstr(panel_message(p, i), second)))
			n++;
	return n;
}

/* The message line shows what is posted, with its time, newest last and a repeat
 * counted; and a blow-up on the simulation thread reaches it on its own. */
static void test_message_line(void)
{
	demo *d = open_demo("hanging", 0.0);
	REQUIRE(d);
	panel *p = demo_panel(d);
	REQUIRE(p);
	frames(d, 2);
	ev_post(EV_WARNING, 1.5, "test-a", "first test event");
	ev_post(EV_INFO, 2.0, "test-b", "second test event");
	ev_post(EV_INFO, 2.25, "test-b", "second test event");
	frames(d, 1);
	int first = -1, second = -1;
	for (int i = 0; panel_message(p, i); i++) {
		if (strcmp(panel_message(p, i), "first test event (at t = 1.500 s)") == 0)
			first = i;
		if (strcmp(panel_message(p, i), "second test event (at t = 2.250 s; 2 times)") == 0)
			second = i;
	}
	CHECK_MSG(first >= 0 && second == first + 1, "lines %d and %d; line 0: %s", first, second,
	          panel_message(p, 0) ? panel_message(p, 0) : "(none)");
	/* still there while the window is drawn again (they fade after seconds, not frames) */
	frames(d, 3);
	CHECK(message_lines_with(p, "first test event", NULL) == 1);
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);

	/* a step far beyond explicit Euler's limit blows up at every step, and is recovered */
	d = open_demo(TELA_TEST_DATA "/scenes/blow-up.ini", 0.0);
	REQUIRE(d);
	p = demo_panel(d);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		demo_frame(d);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (message_lines_with(p, "blow-up in 'cloth' vertex", "times)") == 0 && t.tv_sec - t0.tv_sec < 60);
	CHECK_MSG(message_lines_with(p, "blow-up in 'cloth' vertex", "; recovered; to keep it stable try") == 1,
	          "line 0: %s", panel_message(p, 0) ? panel_message(p, 0) : "(none)");
	CHECK(message_lines_with(p, "blow-up in 'cloth' vertex", "times)") == 1);
	demo_destroy(&d);
}

/* Frames until a message line holds `text`, or a minute has passed. */
static bool frames_until_message(demo *d, const char *text)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		demo_frame(d);
		if (message_lines_with(demo_panel(d), text, NULL) > 0)
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 60);
	return false;
}

/* A device that goes away and comes back says so in the message line (the device
 * thread's events), from a push source the test drives the way the headset's
 * controllers are driven. */
static void test_message_line_device(void)
{
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	char error[512];
	dev_source *src = dev_open_push("test", DEV_FRAME_WORLD, error, sizeof error);
	REQUIRE_MSG(src, "%s", error);
	demo_options o = demo_options_default();
	o.scene = "hanging";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = 1000, o.height = 600;
	o.vsync = false;
	o.rate_scale = 0.0;
	o.device = "push:test";
	o.device_source = src;
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	if (!d) {
		dev_close(&src);
		REQUIRE_MSG(d, "%s", error);
	}
	dev_sample sample = {.sensor = 1, .position = {0.0f, 2.0f, 0.0f}, .orientation = {0.0f, 0.0f, 0.0f, 1.0f}};
	CHECK(dev_push(src, &sample));
	frames(d, 2);
	dev_push_set_state(src, DEV_DISCONNECTED, "unplugged for the test");
	CHECK_MSG(frames_until_message(d, "device lost: "), "line 0: %s",
	          panel_message(demo_panel(d), 0) ? panel_message(demo_panel(d), 0) : "(none)");
	CHECK(message_lines_with(demo_panel(d), "device lost: ", "unplugged for the test") == 1);
	/* the frozen pointer says why in words the user acts on, in the panel and the
	 * heads-up line alike */
	char line[512] = "";
	frames(d, 2);
	CHECK(demo_device_status(d, NULL, line, sizeof line));
	CHECK_MSG(strstr(line, "; pointer frozen: unplugged") != NULL, "stylus: %s", line);
	/* a push makes the source stream again */
	CHECK(dev_push(src, &sample));
	CHECK(frames_until_message(d, "device back: "));
	/* both shown, newest last */
	const panel *p = demo_panel(d);
	int lost = -1, back = -1;
	for (int i = 0; panel_message(p, i); i++) {
		if (strstr(panel_message(p, i), "device lost: "))
			lost = i;
		if (strstr(panel_message(p, i), "device back: "))
			back = i;
	}
	CHECK_MSG(lost >= 0 && back > lost, "lost at line %d, back at %d", lost, back);
	demo_destroy(&d);
	dev_close(&src);
}

/* One chunk of a recording (docs/devices.md, "Recording format"), little-endian. */
static void put_chunk(FILE *f, int64_t t_ns, const uint8_t *bytes, uint32_t count)
{
	uint8_t head[12];
	for (int i = 0; i < 8; i++)
		head[i] = (uint8_t)((uint64_t)t_ns >> (8 * i));
	for (int i = 0; i < 4; i++)
		head[8 + i] = (uint8_t)(count >> (8 * i));
	fwrite(head, 1, sizeof head, f);
	fwrite(bytes, 1, count, f);
}

/* A tracker's error record, a burst of garbage and lost frames reach the message line as
 * counted events, from a recording of them replayed in real time. */
static void test_message_line_tracker_errors(void)
{
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	char path[512], spec[600];
	snprintf(path, sizeof path, "%s/tela-test-faults-%d.rec", test_tmpdir(), (int)getpid());
	FILE *f = fopen(path, "wb");
	REQUIRE(f);
	fputs("tela-rec 1 synthetic-samples\n", f);
	/* 60 records 10 ms apart: the 21st flagged (error 49), 7 bytes of garbage after the
	 * 40th, and the frame counter then jumping from 40 to 44 (3 frames lost) */
	for (int i = 0; i < 60; i++) {
		int64_t t = 1000000000LL + (int64_t)i * 10000000;
		if (i == 40) {
			static const uint8_t garbage[7] = {0x00, 0x13, 'x', 'y', 'z', 0xff, 0x0d};
			put_chunk(f, t - 5000000, garbage, sizeof garbage);
		}
		dev_sample s = {.sensor = 1, .position = {0.0f, 0.0f, -0.3f}, .orientation = {0.0f, 0.0f, 0.0f, 1.0f},
		                .frame = (uint32_t)(i < 40 ? i + 1 : i + 4)};
		uint8_t rec[POL_RECORD_BYTES];
		pol_encode(&s, rec);
		if (i == 20)
			rec[4] = 49; /* the error byte */
		put_chunk(f, t, rec, sizeof rec);
	}
	REQUIRE(fclose(f) == 0);
	snprintf(spec, sizeof spec, "replay:%s", path);
	demo_options o = demo_options_default();
	o.scene = "hanging";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = 1000, o.height = 600;
	o.vsync = false;
	o.rate_scale = 0.0;
	o.device = spec;
	char error[512];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	if (!d)
		remove(path);
	REQUIRE_MSG(d, "%s", error);
	CHECK(frames_until_message(d, "device ended: "));
	const panel *p = demo_panel(d);
	for (int i = 0; panel_message(p, i); i++)
		printf("  message %d: %s\n", i, panel_message(p, i));
	CHECK(message_lines_with(p, "tracker: 1 error record (1 so far)", NULL) == 1);
	CHECK(message_lines_with(p, "tracker: 1 resync, 7 bytes skipped (1 so far)", NULL) == 1);
	CHECK(message_lines_with(p, "tracker: 3 dropped frames (3 so far)", NULL) == 1);
	demo_destroy(&d);
	remove(path);
}

/* The window's default size, 1280 x 800, on the 1,089-vertex pile with the debug views
 * open: the panel stays inside the window and scrolls what does not fit; the cloth starts
 * framed beside it; vertex ids and proximity lines stay few and inside the 3-D view. */
static void test_panel_fits_default_window(void)
{
	demo *d = open_demo_sized("pile", 0.0, 1280, 800);
	REQUIRE(d != NULL);
	panel *p = demo_panel(d);
	REQUIRE(p != NULL);
	frames(d, 2);
	float r[4], sc[3];
	REQUIRE(panel_rect(p, r));
	CHECK_MSG(r[0] > 0.0f && r[1] >= 0.0f && r[0] + r[2] <= 1280.0f && r[1] + r[3] <= 800.0f,
	          "panel at %.0f %.0f, %.0f x %.0f: not inside the window", (double)r[0], (double)r[1], (double)r[2],
	          (double)r[3]);
	/* the home view: every vertex of the cloth left of the panel, inside the window */
	const st_snapshot *s = demo_snapshot(d);
	int hidden = 0;
	for (int v = 0; v < s->vertex_count; v++) {
		float x, y;
		demo_project(d, s->positions[v], &x, &y);
		hidden += !(x >= 0.0f && x < r[0] && y >= 0.0f && y < 800.0f);
	}
	CHECK_MSG(hidden == 0, "%d of %d vertices under the panel or off the window", hidden, s->vertex_count);

	/* with the last section, "Display and debug views", open the content is taller than
	 * the panel, which keeps its place and size and scrolls */
	REQUIRE(panel_scroll(p, sc));
	float before = sc[2];
	panel_open_debug_views(p);
	frames(d, 2);
	REQUIRE(panel_scroll(p, sc));
	CHECK_MSG(sc[2] > before + 150.0f, "the section did not open: content %.0f px, was %.0f", (double)sc[2],
	          (double)before);
	float r2[4];
	REQUIRE(panel_rect(p, r2));
	CHECK(memcmp(r, r2, sizeof r) == 0);
	CHECK_MSG(sc[1] > 0.0f && sc[2] > r[3], "content %.0f px in a %.0f px panel, scroll range %.0f", (double)sc[2],
	          (double)r[3], (double)sc[1]);

	/* vertex ids and every pair view on, once the cloth lies on the floor */
	panel_model m;
	demo_panel_model(d, &m);
	m.vertex_ids = m.velocity_arrows = true;
	m.debug_broad = m.debug_narrow = true;
	m.debug_changed = true;
	CHECK(demo_apply_panel(d, &m));
	run_steps(d, 1500);
	frames(d, 2);
	s = demo_snapshot(d);
	demo_panel_model(d, &m);
	CHECK_MSG(s->debug_pair_count > OV_SEGMENT_CAP, "%d pairs: too few to need the cap", s->debug_pair_count);
	CHECK_MSG(m.overlay.label_count > 0 && m.overlay.label_count <= OV_LABEL_CAP, "%d vertex ids",
	          m.overlay.label_count);
	CHECK_MSG(m.overlay.segment_count > 0 && m.overlay.segment_count <= OV_SEGMENT_CAP + 1, "%d segments",
	          m.overlay.segment_count);
	const float *c = m.overlay.clip;
	CHECK(c[0] == 0.0f && c[1] == 0.0f && c[3] == 800.0f && c[2] <= r[0] + 0.5f);
	for (int i = 0; i < m.overlay.label_count; i++) {
		const float *l = m.overlay.labels[i];
		CHECK(l[0] >= c[0] && l[0] < c[0] + c[2] && l[1] >= c[1] && l[1] < c[1] + c[3]);
		for (int j = 0; j < i; j++)
			CHECK(hypotf(l[0] - m.overlay.labels[j][0], l[1] - m.overlay.labels[j][1]) >= OV_LABEL_SPACING);
	}
	CHECK_MSG(m.overlay.arrow_count > 0 && m.overlay.arrow_count <= OV_ARROW_CAP, "%d arrows",
	          m.overlay.arrow_count);
	for (int i = 0; i < m.overlay.arrow_count; i++) {
		const float *a = m.overlay.arrows[i];
		CHECK(a[0] >= c[0] && a[0] < c[0] + c[2] && a[1] >= c[1] && a[1] < c[1] + c[3]);
		for (int j = 0; j < i; j++)
			CHECK(hypotf(a[0] - m.overlay.arrows[j][0], a[1] - m.overlay.arrows[j][1]) >= OV_ARROW_SPACING);
	}
	/* a kept segment is not off the view entirely (both ends beyond one side) */
	for (int i = 0; i < m.overlay.segment_count; i++) {
		const float *g = m.overlay.segments[i];
		CHECK(!(g[0] < c[0] && g[2] < c[0]) && !(g[0] >= c[0] + c[2] && g[2] >= c[0] + c[2]) &&
		      !(g[1] < c[1] && g[3] < c[1]) && !(g[1] >= c[1] + c[3] && g[3] >= c[1] + c[3]));
	}
	const char *dump = getenv("TELA_PANEL_DUMP");
	if (dump) {
		char path[512];
		snprintf(path, sizeof path, "%s/pile-debug-views.png", dump);
		CHECK(demo_screenshot(d, path) == 0);
	}
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static const test_case tests[] = {
    TEST(test_message_line),
    TEST(test_message_line_device),
    TEST(test_message_line_tracker_errors),
    TEST(test_debug_views),
    TEST(test_panel_frames_without_gl_errors),
    TEST(test_panel_claims_only_its_own_clicks),
    TEST(test_panel_edits_reach_simulation),
    TEST(test_keys_hide_panel_and_hud),
    TEST(test_scene_switch_keeps_window),
    TEST(test_panel_fits_default_window),
};

TEST_MAIN(tests)
