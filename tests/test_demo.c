/* The demo driven through SDL events, offscreen: the mouse grabs a cloth corner and
 * drags it, and the corner ends where the drag put the pointer (the plane facing the
 * camera through the grabbed vertex, so N pixels of drag are N pixels' worth of metres
 * at that depth).  Once without the panel in a small window, once with it (on the right,
 * clear of the cloth) in a larger one. */
#define _POSIX_C_SOURCE 200809L
#include "test.h"

#include "demo.h"
#include "device_thread.h"

#include <SDL2/SDL.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TELA_TEST_DATA
#error "TELA_TEST_DATA must name tests/data"
#endif

#ifndef TELA_DEMO_DEVICE
static void push_motion(int x, int y, int dx, int dy, Uint32 buttons)
{
	SDL_Event e = {.type = SDL_MOUSEMOTION};
	e.motion.x = x, e.motion.y = y, e.motion.xrel = dx, e.motion.yrel = dy, e.motion.state = buttons;
	SDL_PushEvent(&e);
}
#endif

static void push_button(Uint32 type, int x, int y)
{
	SDL_Event e = {.type = type};
	e.button.button = SDL_BUTTON_LEFT, e.button.clicks = 1, e.button.x = x, e.button.y = y;
	e.button.state = type == SDL_MOUSEBUTTONDOWN ? SDL_PRESSED : SDL_RELEASED;
	SDL_PushEvent(&e);
}

/* demo_create refuses the options as the user's input error (exit code 3), before any
 * window opens, with a message that contains `want`. */
static void check_refused(const demo_options *o, const char *want)
{
	char error[512];
	int code;
	demo *d = demo_create(o, error, sizeof error, &code);
	CHECK(d == NULL);
	CHECK(code == 3);
	CHECK_MSG(strstr(error, want) != NULL, "\"%s\" lacks \"%s\"", error, want);
	demo_destroy(&d);
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

#ifndef TELA_DEMO_DEVICE
/* ---- the mouse (label render) ---- */

/* record: the mouse's recording goes there (NULL: none); held: the corner's last
 * position while grabbed (may be NULL). */
static void grab_pulls_corner(int width, int height, bool with_panel, const char *record, float *held)
{
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/grab.ini";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = width, o.height = height;
	o.vsync = false;
	o.panel = with_panel;
	o.record = record;
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
	/* the camera looks along -z (the scene file's direction; the start view only moves the
	 * eye along it and sideways to fit the scene) with 45 degrees over `height` pixels: at
	 * the corner's depth a pixel is 2 * depth * tan(22.5 deg) / height m */
	float eye[3];
	cam_eye(demo_camera(d), eye);
	CHECK(fabsf(demo_camera(d)->yaw) < 1e-6f && fabsf(demo_camera(d)->pitch) < 1e-6f);
	double pixel = 2.0 * ((double)eye[2] - start[2]) * tan(22.5 * 3.14159265358979 / 180.0) / height;
	const float *p = s->positions[corner];
	CHECK_MSG(fabs(p[0] - (start[0] - 60.0 * pixel)) < 0.004, "x %.4f, expected %.4f", (double)p[0],
	          start[0] - 60.0 * pixel);
	CHECK_MSG(fabs(p[1] - (start[1] + 40.0 * pixel)) < 0.004, "y %.4f, expected %.4f", (double)p[1],
	          start[1] + 40.0 * pixel);
	CHECK_NEAR(p[2], 0.0, 0.004);
	if (held)
		memcpy(held, p, 3 * sizeof *held);
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

static void test_mouse_grab_pulls_corner(void) { grab_pulls_corner(400, 300, false, NULL, NULL); }
static void test_mouse_grab_with_panel(void) { grab_pulls_corner(1000, 600, true, NULL, NULL); }

/* The mouse is a pose source like a tracker: `--record` records its pointer ("world-samples",
 * docs/devices.md), and replaying the recording as a device, through the tracker and the
 * stylus with no calibration and a gain of 1, grabs the same corner and holds it where the
 * mouse held it. */
static void test_mouse_recording_replays(void)
{
	char path[300];
	snprintf(path, sizeof path, "%.200s/tela-mouse-%d.rec", test_tmpdir(), (int)getpid());
	float mouse_held[3];
	grab_pulls_corner(400, 300, false, path, mouse_held);
	FILE *f = fopen(path, "rb");
	REQUIRE_MSG(f, "no recording at %s", path);
	char line[64] = {0};
	CHECK(fgets(line, sizeof line, f) && strcmp(line, "tela-rec 1 world-samples\n") == 0);
	fclose(f);

	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/grab.ini";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = 400, o.height = 300;
	o.vsync = false;
	o.panel = false;
	char spec[320];
	snprintf(spec, sizeof spec, "replay:%s", path);
	o.device = spec;
	char error[512];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	REQUIRE_MSG(d != NULL, "%s", error);
	float held[3] = {0};
	bool grabbed = false;
	dt_status ds;
	char status[512];
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		demo_frame(d);
		const st_snapshot *s = demo_snapshot(d);
		if (s->grabbed_vertex == 80) {
			grabbed = true;
			memcpy(held, s->positions[80], sizeof held);
		}
		demo_device_status(d, &ds, status, sizeof status);
		clock_gettime(CLOCK_MONOTONIC, &t);
		double elapsed = (double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec);
		if ((ds.state == DEV_ENDED && s->grabbed_vertex < 0) || elapsed > 10.0)
			break;
	}
	CHECK_MSG(ds.state == DEV_ENDED, "the replay did not end: %s", status);
	CHECK_MSG(grabbed, "the replay never grabbed the corner (%d grabs): %s", ds.grabs, status);
	CHECK(ds.grabs == 1 && ds.releases == 1);
	for (int k = 0; k < 3; k++)
		CHECK_MSG(fabsf(held[k] - mouse_held[k]) < 0.004f, "axis %d: the replay held the corner at %.4f, the mouse at %.4f",
		          k, (double)held[k], (double)mouse_held[k]);
	demo_destroy(&d);
	remove(path);
}

/* --record without a device records the mouse; a file that cannot be written is the
 * user's input error before any window opens. */
static void test_mouse_record_bad_path(void)
{
	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/grab.ini";
	o.offscreen = true;
	o.record = "/nonexistent-dir/mouse.rec";
	check_refused(&o, "the mouse: cannot record to /nonexistent-dir/mouse.rec");
}

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
	char dir[200];
	snprintf(dir, sizeof dir, "%.150s/tela-demo-XXXXXX", test_tmpdir());
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

#endif

#ifdef TELA_DEMO_DEVICE
/* ---- the tracked stylus in a window (label device): real time, on the device thread ---- */

#include "device_thread.h"
#include "device_internal.h" /* dev_synthetic_pose: the orbit script's pose, for the prediction */

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static int force_segments(demo *d)
{
	panel_model m;
	demo_panel_model(d, &m);
	int n = 0;
	for (int i = 0; i < m.overlay.segment_count; i++)
		n += (int)m.overlay.segments[i][4] == PANEL_COLOR_FORCE;
	return n;
}

static double distance3(const float a[3], const float b[3])
{
	double d0 = (double)a[0] - b[0], d1 = (double)a[1] - b[1], d2 = (double)a[2] - b[2];
	return sqrt(d0 * d0 + d1 * d1 + d2 * d2);
}

/* The camera station against its prediction, once a frame: the newest camera sample is
 * the orbit script's pose for its frame, and the eye has moved from the scene's start
 * view by exactly the calibrated displacement since the first sample. */
typedef struct camera_check {
	trk_calibration cal;
	float eye0[3];
	double worst_eye, worst_script, moved, predicted_chord;
	int frames;
} camera_check;

static void check_camera(camera_check *k, demo *d, const dt_status *ds)
{
	const dt_camera *c = &ds->camera;
	if (c->samples == 0)
		return;
	dev_sample script;
	REQUIRE(dev_synthetic_pose("orbit", c->newest_sample.frame / 60.0, &script));
	double off = 0.0;
	for (int i = 0; i < 3; i++)
		off = fmax(off, fabs((double)script.position[i] - c->newest_sample.position[i]));
	for (int i = 0; i < 4; i++)
		off = fmax(off, fabs((double)script.orientation[i] - c->newest_sample.orientation[i]));
	k->worst_script = fmax(k->worst_script, off);
	trk_pose first, now;
	trk_calibrate(&k->cal, &c->first_sample, &first);
	trk_calibrate(&k->cal, &c->newest_sample, &now);
	float expected[3], eye[3];
	for (int i = 0; i < 3; i++)
		expected[i] = k->eye0[i] + (now.position[i] - first.position[i]);
	cam_eye(demo_camera(d), eye);
	k->worst_eye = fmax(k->worst_eye, distance3(eye, expected));
	k->moved = distance3(eye, k->eye0);
	/* the orbit (10 cm radius at 0.1 Hz) from its start at frame 0 */
	double a = 2.0 * 3.14159265358979 * 0.1 * (c->newest_sample.frame - c->first_sample.frame) / 60.0;
	k->predicted_chord = 2.0 * 0.10 * sin(0.5 * a);
	k->frames++;
}

/* The grab script (approach for 1 s, press, lift 10 cm over 1 s, hold 0.5 s, release,
 * end at 3 s) through the window's device thread: vertex 80, the free corner, is grabbed
 * and lifted by 10 cm (looser than the lock-step test's 5 mm: the simulation and the
 * source each keep their own real time), the coupling pulls on it, a mouse press does not
 * grab while the stylus drives, and the device line says streaming and then why the
 * pointer froze.  With "+orbit" station 2 circles meanwhile: at camera_station 2 it moves
 * the camera as predicted, at 0 the camera stays put and the stylus ignores it. */
static void stylus_lifts_corner_camera(const char *spec, int camera_station, double setup_s)
{
	if (!getenv("DISPLAY"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/stylus-corner.ini";
	o.offscreen = getenv("DISPLAY") == NULL;
	o.width = 640, o.height = 400;
	o.vsync = false;
	o.panel = true;
	o.device = spec;
	o.calibration = TELA_TEST_DATA "/tracking/stylus-corner.cal";
	o.camera_station = camera_station;
	bool two_stations = strstr(spec, "+orbit") != NULL;
	char error[512];
	int code;
	camera_check k = {0};
	REQUIRE_MSG(trk_calibration_load(o.calibration, &k.cal, error, sizeof error), "%s", error);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	demo *d = demo_create(&o, error, sizeof error, &code);
	REQUIRE_MSG(d != NULL, "%s", error);
	if (setup_s > 0.0) { /* a window slow to show its first frame */
		struct timespec nap = {(time_t)setup_s, (long)((setup_s - (double)(time_t)setup_s) * 1e9)};
		nanosleep(&nap, NULL);
	}
	cam_eye(demo_camera(d), k.eye0);
	float forward0[3], target0[3];
	memcpy(target0, demo_camera(d)->target, sizeof target0);
	for (int i = 0; i < 3; i++)
		forward0[i] = target0[i] - k.eye0[i];
	const int corner = 80;
	float y0 = demo_snapshot(d)->positions[corner][1];
	CHECK_NEAR(y0, 1.0, 1e-3);
	dt_status ds;
	char line[512];
	bool streaming = false, mouse_tried = false, mouse_grabbed = false, title_line = false;
	bool grabbed = false, ended = false;
	float lift = -1.0f, force = 0.0f;
	int segments = 0, held_frames = 0;
	double longest_frame = 0.0;
	while (since(&t0) < 30.0) { /* ends with the source; the cap only bounds a broken run */
		double frame_start = since(&t0);
		demo_frame(d);
		longest_frame = fmax(longest_frame, since(&t0) - frame_start);
		REQUIRE(demo_device_status(d, &ds, line, sizeof line));
		check_camera(&k, d, &ds);
		const st_snapshot *s = demo_snapshot(d);
		streaming |= strncmp(line, "streaming: ", 11) == 0 && !ds.pointer.frozen;
		title_line |= strstr(demo_title(d), "| stylus: ") != NULL;
		if (!mouse_tried && since(&t0) > 0.3) {
			/* at the corner, before the stylus comes down: the mouse only orbits now */
			float px, py;
			demo_project(d, s->positions[corner], &px, &py);
			push_button(SDL_MOUSEBUTTONDOWN, (int)lroundf(px), (int)lroundf(py));
			frames(d, 0.05);
			/* On a slow machine the stylus's own press can land meanwhile: a grab it had
			 * not made by then is the mouse's.  The frame refreshes the device's status
			 * after the snapshot was read, so a stylus grab that snapshot shows is counted. */
			bool sim_grabbed = demo_snapshot(d)->grabbed_vertex >= 0;
			demo_frame(d);
			REQUIRE(demo_device_status(d, &ds, line, sizeof line));
			mouse_grabbed = sim_grabbed && ds.grabs == 0;
			push_button(SDL_MOUSEBUTTONUP, (int)lroundf(px), (int)lroundf(py));
			mouse_tried = true;
			s = demo_snapshot(d); /* the frames since handed the older one back */
		}
		if (s->grabbed_vertex == corner) {
			grabbed = true;
			held_frames++;
			float dy = s->positions[corner][1] - y0;
			lift = fmaxf(lift, dy);
			if (dy > 0.05f) {
				force = fmaxf(force, sqrtf(s->grab_force[0] * s->grab_force[0] +
				                           s->grab_force[1] * s->grab_force[1] +
				                           s->grab_force[2] * s->grab_force[2]));
				segments += force_segments(d);
			}
		}
		if (ds.state == DEV_ENDED && ds.pointer.frozen && s->grabbed_vertex < 0) {
			ended = true;
			break;
		}
	}
	/* the frames that saw the corner held and the longest one, to tell a slow machine's
	 * sparse look at the lift from a lift that fell short */
	printf("%s after %.2f s: line \"%s\", %llu samples, %d grabs, %d releases, lift %.4f m, force %.3f N, "
	       "%d frames held, longest frame %.3f s\n",
	       spec, since(&t0), line, (unsigned long long)ds.samples, ds.grabs, ds.releases, (double)lift, (double)force,
	       held_frames, longest_frame);
	CHECK_MSG(streaming, "the device line never said streaming");
	CHECK_MSG(title_line, "the window title has no stylus line: %s", demo_title(d));
	CHECK(mouse_tried);
	CHECK_MSG(!mouse_grabbed, "the mouse grabbed while the stylus drives the pointer");
	CHECK_MSG(grabbed, "the stylus never grabbed the corner");
	CHECK_MSG(fabsf(lift - 0.1f) < 0.015f, "the corner rose %.4f m, expected 0.1", (double)lift);
	CHECK_MSG(force > 0.0f, "no coupling force while lifted");
	CHECK_MSG(segments > 0, "no force segment in the overlay while lifted");
	CHECK_MSG(ended, "the source never ended, or the pointer was not frozen: %s", line);
	CHECK_MSG(strstr(line, "ended") && strstr(line, "frozen"), "line: %s", line);
	/* the heads-up line shows the same line, in its warning colours once frozen */
	panel_model m;
	demo_panel_model(d, &m);
	CHECK_MSG(m.device_line && strcmp(m.device_line, line) == 0, "HUD: %s", m.device_line ? m.device_line : "(none)");
	CHECK(m.device_frozen);
	CHECK(ds.samples == 180);
	CHECK(ds.grabs == 1 && ds.releases == 1);
	CHECK(ds.stylus_station == 1);
	float eye[3];
	cam_eye(demo_camera(d), eye);
	if (two_stations && camera_station == 2) {
		printf("camera: %llu samples, %d frames checked, moved %.4f m (orbit chord %.4f), worst %.2g m off "
		       "the prediction, script %.2g\n",
		       (unsigned long long)ds.camera.samples, k.frames, k.moved, k.predicted_chord, k.worst_eye,
		       k.worst_script);
		CHECK(ds.camera.station == 2);
		CHECK_MSG(ds.camera.samples == 180, "%llu camera samples", (unsigned long long)ds.camera.samples);
		CHECK(ds.other_samples == 0);
		CHECK(k.frames > 10);
		CHECK_MSG(k.worst_script < 1e-6, "the camera samples are %.3g off the orbit script", k.worst_script);
		CHECK_MSG(k.worst_eye < 2e-4, "the eye was %.3g m off the calibrated motion", k.worst_eye);
		/* 3 s at 0.1 Hz: 108 degrees of a 10 cm circle, a 16 cm chord, all of it seen */
		CHECK_MSG(k.predicted_chord > 0.15 && fabs(k.moved - k.predicted_chord) < 2e-3,
		          "the eye moved %.4f m, the orbit %.4f m", k.moved, k.predicted_chord);
		/* the view turned with the sensor: the start view's direction turned by the
		 * sensor's calibrated rotation since its first sample (r = q1 q0^-1) */
		trk_pose first, now;
		trk_calibrate(&k.cal, &ds.camera.first_sample, &first);
		trk_calibrate(&k.cal, &ds.camera.newest_sample, &now);
		const float *a = now.orientation, *b = first.orientation;
		double bx = -b[0], by = -b[1], bz = -b[2], bw = b[3];
		double r[4] = {a[3] * bx + a[0] * bw + a[1] * bz - a[2] * by, a[3] * by - a[0] * bz + a[1] * bw + a[2] * bx,
		               a[3] * bz + a[0] * by - a[1] * bx + a[2] * bw, a[3] * bw - a[0] * bx - a[1] * by - a[2] * bz};
		double sensor_turn = 2.0 * acos(fmin(1.0, fabs(r[3])));
		/* v + 2 w (u x v) + 2 u x (u x v) */
		double v[3] = {forward0[0], forward0[1], forward0[2]};
		double c[3] = {r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2], r[0] * v[1] - r[1] * v[0]};
		double cc[3] = {r[1] * c[2] - r[2] * c[1], r[2] * c[0] - r[0] * c[2], r[0] * c[1] - r[1] * c[0]};
		double expected[3], forward[3];
		for (int i = 0; i < 3; i++) {
			expected[i] = v[i] + 2.0 * (r[3] * c[i] + cc[i]);
			forward[i] = (double)demo_camera(d)->target[i] - eye[i];
		}
		double dot = 0.0, ne = 0.0, nf = 0.0, dot0 = 0.0, n0 = 0.0;
		for (int i = 0; i < 3; i++) {
			dot += expected[i] * forward[i], ne += expected[i] * expected[i], nf += forward[i] * forward[i];
			dot0 += v[i] * forward[i], n0 += v[i] * v[i];
		}
		double off = acos(fmin(1.0, dot / sqrt(ne * nf))), view_turn = acos(fmin(1.0, dot0 / sqrt(n0 * nf)));
		printf("camera: the sensor turned %.4f rad, the view %.4f rad, %.2g rad off the prediction\n",
		       sensor_turn, view_turn, off);
		CHECK_MSG(sensor_turn > 0.05 && view_turn > 0.05, "the orbit script barely turned: %.4f, the view %.4f",
		          sensor_turn, view_turn);
		CHECK_MSG(off < 1e-4, "the view's direction is %.3g rad off the sensor's turn", off);
	} else {
		CHECK(ds.camera.station == camera_station);
		CHECK(ds.camera.samples == 0);
		CHECK_MSG(distance3(eye, k.eye0) == 0.0, "the camera moved %.3g m without a camera station",
		          distance3(eye, k.eye0));
		CHECK(distance3(demo_camera(d)->target, target0) == 0.0);
		if (two_stations)
			CHECK_MSG(ds.other_samples == 180, "%llu samples of station 2 ignored",
			          (unsigned long long)ds.other_samples);
	}
	CHECK_MSG(demo_gl_errors(d) == 0, "%d GL errors", demo_gl_errors(d));
	demo_destroy(&d);
}

static void stylus_lifts_corner(const char *spec) { stylus_lifts_corner_camera(spec, 2, 0.0); }

static void test_stylus_window_synthetic(void) { stylus_lifts_corner("synthetic:grab,seconds=3"); }
static void test_stylus_window_replay(void) { stylus_lifts_corner("replay:" TELA_TEST_DATA "/sessions/grab.rec"); }
/* Station 2 circles slowly while station 1 grabs: the camera follows station 2. */
static void test_stylus_window_camera_station(void) { stylus_lifts_corner_camera("synthetic:grab+orbit,seconds=3", 2, 0.0); }
/* --camera-station 0: station 2 moves nothing, and the stylus stays on station 1. */
static void test_stylus_window_camera_off(void) { stylus_lifts_corner_camera("synthetic:grab+orbit,seconds=3", 0, 0.0); }
/* The first frame 1.5 s after the device opened, later than the script's press at 1 s
 * (a loaded machine compiling shaders): the script starts with the scene, and grabs. */
static void test_stylus_window_slow_start(void) { stylus_lifts_corner_camera("synthetic:grab,seconds=3", 2, 1.5); }

/* A device that cannot open is the user's input error, before any window opens. */
static void test_stylus_window_bad_device(void)
{
	demo_options o = demo_options_default();
	o.scene = TELA_TEST_DATA "/scenes/stylus-corner.ini";
	o.offscreen = true;
	o.device = "nosuch";
	check_refused(&o, "--device nosuch");
}

static const test_case tests[] = {
    TEST(test_stylus_window_bad_device),
    TEST(test_stylus_window_synthetic),
    TEST(test_stylus_window_replay),
    TEST(test_stylus_window_camera_station),
    TEST(test_stylus_window_camera_off),
    TEST(test_stylus_window_slow_start),
};
#else
static const test_case tests[] = {
    TEST(test_export_key),
    TEST(test_mouse_grab_pulls_corner),
    TEST(test_mouse_grab_with_panel),
    TEST(test_mouse_recording_replays),
    TEST(test_mouse_record_bad_path),
};
#endif

TEST_MAIN(tests)
