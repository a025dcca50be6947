/* `tela [SCENE]`: the interactive demo, or, with no display (or --headless), a short
 * scripted run offscreen that grabs and pulls the cloth, writes a picture and says what
 * it did. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "demo.h"
#include "device_thread.h"
#include "progress.h"
#include "stop.h"
#include "stylus_feed.h"
#include "xr.h"

#include <GL/glew.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct demo_args {
	const char *scene;
	bool headless;
	const char *out;
	double seconds; /* < 0: until the user quits (windowed) or the script's length */
	long width, height;
	bool paused;
	int panel; /* 1 --panel, 0 --no-panel, -1 neither: shown in a window, not in the headless picture */
	const char *device, *calibration, *record; /* the tracked stylus (NULL: the mouse) */
	double gain;                               /* 0: the stylus's default */
	double grab_radius;                        /* m; 0: one vertex */
	long camera_station;                       /* -1: not given (2); 0: none */
	bool xr;                                   /* --xr: in a headset (app/xr.c) */
	int hand;                                  /* --hand: -1 not given, 0 left, 1 right */
	bool gpu;                                  /* --backend gpu */
	bool quiet;                                /* --quiet: headless, no progress line or summary */
} demo_args;

static void demo_help(void)
{
	printf(
	    "usage: tela [demo] [SCENE] [options]\n"
	    "       tela --xr [SCENE] [options]\n"
	    "The interactive demo on SCENE (default: hanging; keys and mouse in\n"
	    "docs/user-guide.md).  With no display, or --headless, it runs offscreen: a scripted\n"
	    "grab pulls the cloth, then it writes FILE.png (default tela-SCENE.png) and a summary.\n"
	    "SCENE is a built-in name (tela scenes), a scene file or a seed simulator folder.\n"
	    "\n"
	    "options:\n"
	    "  --headless          no window even with a display: the scripted grab offscreen\n"
	    "  --out FILE.png      headless: the picture's file (default tela-SCENE.png)\n"
	    "  --quiet             headless: no progress line and no summary\n"
	    "  --seconds T         stop after T seconds (default: until closed; headless: 2.5 s\n"
	    "                      of scripted grab)\n"
	    "  --size WxH          the window's (or picture's) size (default 1280x800)\n"
	    "  --paused            start paused (Space plays)\n"
	    "  --panel, --no-panel show or hide the control panel (default: shown in a window, not\n"
	    "                      in the headless picture)\n"
	    "  --backend cpu|gpu   gpu: start with the panel's GPU integrator on (docs/gpu.md)\n"
	    "  --grab-radius R     a grab holds the cloth within R metres of the picked vertex\n"
	    "                      (default 0: the vertex alone)\n"
	    "  --device SPEC       a tracked stylus drives the pointer (in a window from a device\n"
	    "                      thread in real time, the mouse keeping the camera; headless in\n"
	    "                      lock step): polhemus[:BUS-ADDR],\n"
	    "                      synthetic:grab[+orbit][@HZ][,fast][,seconds=S],\n"
	    "                      replay:FILE[@SPEED] (docs/devices.md)\n"
	    "  --calibration FILE  with --device: the device-to-world calibration (with --xr: to\n"
	    "                      the headset's stage)\n"
	    "  --gain G            with --device: the stylus's displacement gain (default 1)\n"
	    "  --camera-station N  with --device, in a window: station N moves the camera\n"
	    "                      (default 2; 0: none)\n"
	    "  --record FILE       record the device's traffic or, without --device, the mouse's\n"
	    "                      pointer, for --device replay:FILE\n"
	    "  --xr                in an OpenXR headset (docs/vr.md): a controller's trigger grabs\n"
	    "                      and it vibrates with the pull; the window mirrors the left eye;\n"
	    "                      not with --headless, --out or --camera-station\n"
	    "  --hand left|right   with --xr and no --device: the controller that grabs (default\n"
	    "                      right)\n"
	    "  -h, --help          this text\n"
	    "\n"
	    "exit codes: 0 success; 2 bad command line; 3 a missing or malformed input file, an\n"
	    "unwritable picture, or a --device that cannot be opened (no tracker, its firmware not\n"
	    "loaded, a bad polhemus:BUS-ADDR); 4 no OpenGL 4.3 context, not even offscreen; 5 --xr:\n"
	    "no OpenXR runtime or headset, or the session was lost (tela --help has the full list).\n");
}

static int parse_args(int argc, char **argv, demo_args *a)
{
	*a = (demo_args){
	    .scene = "hanging", .seconds = -1.0, .width = 1280, .height = 800, .panel = -1, .camera_station = -1,
	    .hand = -1};
	bool have_scene = false;
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(s, "--headless") == 0) {
			a->headless = true;
		} else if (strcmp(s, "--xr") == 0) {
			a->xr = true;
		} else if (strcmp(s, "--hand") == 0) {
			if (!val)
				return cli_usage_error("demo", "option %s needs a value", s);
			i++;
			if (strcmp(val, "left") != 0 && strcmp(val, "right") != 0)
				return cli_usage_error("demo", "--hand: '%s' is neither left nor right", val);
			a->hand = val[0] == 'r';
		} else if (strcmp(s, "--paused") == 0) {
			a->paused = true;
		} else if (strcmp(s, "--quiet") == 0) {
			a->quiet = true;
		} else if (strcmp(s, "--backend") == 0) {
			if (!val || (strcmp(val, "cpu") != 0 && strcmp(val, "gpu") != 0))
				return cli_usage_error("demo", "--backend: '%s' is neither cpu nor gpu", val ? val : "");
			a->gpu = strcmp(val, "gpu") == 0;
			i++;
		} else if (strcmp(s, "--panel") == 0 || strcmp(s, "--no-panel") == 0) {
			a->panel = s[2] == 'p';
		} else if (strcmp(s, "--device") == 0 || strcmp(s, "--calibration") == 0 || strcmp(s, "--record") == 0 ||
		           strcmp(s, "--gain") == 0) {
			if (!val)
				return cli_usage_error("demo", "option %s needs a value", s);
			i++;
			if (s[2] == 'd')
				a->device = val;
			else if (s[2] == 'c')
				a->calibration = val;
			else if (s[2] == 'r')
				a->record = val;
			else if (!cli_parse_double(val, &a->gain) || a->gain <= 0.0 || a->gain > 100.0)
				return cli_usage_error("demo", "--gain: '%s' is not a gain in (0, 100]", val);
		} else if (strcmp(s, "--grab-radius") == 0) {
			if (!val)
				return cli_usage_error("demo", "option %s needs a value", s);
			i++;
			if (!cli_parse_double(val, &a->grab_radius) || a->grab_radius < 0.0 || a->grab_radius > 1.0)
				return cli_usage_error("demo", "--grab-radius: '%s' is not a radius in [0, 1] m", val);
		} else if (strcmp(s, "--camera-station") == 0) {
			if (!val)
				return cli_usage_error("demo", "option %s needs a value", s);
			i++;
			/* a Polhemus numbers its stations 1 to 16 (docs/devices.md) */
			char *end;
			a->camera_station = strtol(val, &end, 10);
			if (end == val || *end || a->camera_station < 0 || a->camera_station > 16)
				return cli_usage_error("demo", "--camera-station: '%s' is not a station 1..16, or 0 for none", val);
		} else if (strcmp(s, "--out") == 0 || strcmp(s, "--seconds") == 0 || strcmp(s, "--size") == 0) {
			if (!val)
				return cli_usage_error("demo", "option %s needs a value", s);
			i++;
			if (s[2] == 'o') {
				a->out = val;
			} else if (s[2] == 's' && s[3] == 'e') {
				if (!cli_parse_double(val, &a->seconds) || a->seconds <= 0.0 || a->seconds > 1e6)
					return cli_usage_error("demo", "--seconds: '%s' is not a duration in (0, 1e6]", val);
			} else if (sscanf(val, "%ldx%ld", &a->width, &a->height) != 2 || a->width < 64 || a->height < 64 ||
			           a->width > 8192 || a->height > 8192) {
				return cli_usage_error("demo", "--size: '%s' is not WIDTHxHEIGHT within 64..8192", val);
			}
		} else if (s[0] == '-') {
			return cli_usage_error("demo", "unknown option '%s'", s);
		} else if (have_scene) {
			return cli_usage_error("demo", "more than one scene given ('%s' and '%s')", a->scene, s);
		} else {
			a->scene = s;
			have_scene = true;
		}
	}
	/* --record alone records the mouse's pointer (a window's) */
	if (!a->device && (a->calibration || a->gain > 0.0 || a->camera_station >= 0))
		return cli_usage_error("demo", "--calibration, --gain and --camera-station need --device");
	if (a->hand >= 0 && (!a->xr || a->device))
		return cli_usage_error("demo", "--hand needs --xr (and no --device: the stylus grabs then)");
	if (a->xr && (a->headless || a->out || a->camera_station >= 0))
		return cli_usage_error("demo", "--xr shows the scene in a headset: not with --headless, --out or "
		                               "--camera-station");
	return EXIT_TELA_OK;
}

static bool have_display(void)
{
	const char *x = getenv("DISPLAY"), *wl = getenv("WAYLAND_DISPLAY");
	return (x && *x) || (wl && *wl);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static int run_windowed(const demo_args *a, bool *fall_back)
{
	demo_options o = demo_options_default();
	o.scene = a->scene;
	o.width = (int)a->width, o.height = (int)a->height;
	o.start_paused = a->paused;
	o.panel = a->panel != 0;
	o.gpu = a->gpu;
	o.device = a->device, o.calibration = a->calibration, o.record = a->record, o.gain = a->gain;
	o.grab_radius = a->grab_radius;
	if (a->camera_station >= 0)
		o.camera_station = (int)a->camera_station;
	char error[1024];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	if (!d) {
		fprintf(stderr, "tela: %s\n", error);
		*fall_back = code == 4;
		return code == 3 ? EXIT_TELA_INPUT : EXIT_TELA_DISPLAY;
	}
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* The simulation thread publishes after every step it makes: a running one that has
	 * not published for long is stuck in a step, and could not be joined.  (Checked here,
	 * between frames, so that a window whose frames the system holds back is not taken
	 * for a stuck simulation.) */
	uint64_t serial = 0;
	struct timespec since = t0;
	while (demo_frame(d)) {
		const st_snapshot *s = demo_drawn_snapshot(d);
		if (!s || s->paused || s->serial != serial) {
			serial = s ? s->serial : 0;
			clock_gettime(CLOCK_MONOTONIC, &since);
		} else if (seconds_since(&since) >= STOP_STALL_SECONDS) {
			fflush(stdout);
			fprintf(stderr, "tela: the simulation made no progress for %.0f s (stuck after %lld steps); giving up\n",
			        STOP_STALL_SECONDS, (long long)s->steps);
			_exit(EXIT_TELA_STALL);
		}
		if (a->seconds > 0.0 && seconds_since(&t0) >= a->seconds)
			break;
	}
	dt_status ds;
	char line[512];
	if (demo_device_status(d, &ds, line, sizeof line))
		printf("stylus: %s | %llu samples, %d grabs, %d releases, %llu jumps ignored\n", line,
		       (unsigned long long)ds.samples, ds.grabs, ds.releases, (unsigned long long)ds.ignored_jumps);
	int errors = demo_gl_errors(d);
	demo_destroy(&d);
	if (errors)
		fprintf(stderr, "tela: %d OpenGL errors were reported during the run\n", errors);
	return EXIT_TELA_OK;
}

/* ---- the headless run ----------------------------------------------------------------------------- */

/* The headless run's commands to the simulation thread, counted: the run waits for each
 * step until the thread has handled everything sent (st_snapshot.commands). */
typedef struct headless_stylus {
	demo *d;
	uint64_t sent;
	int grabs, releases;
	float peak_force;
} headless_stylus;

static void headless_send(headless_stylus *h, st_command_kind kind, int vertex)
{
	st_command c = {.kind = kind, .vertex = vertex};
	st_send(demo_sim(h->d), &c);
	h->sent++;
}

/* Steps the paused simulation thread once and waits for the step's snapshot: in lock
 * step the script is deterministic.  It waits for the command to be handled, not for the
 * step count, which a blow-up's rollback leaves behind; a signal ends the wait, and the
 * watchdog (stop.h) a thread that never answers. */
static const st_snapshot *step_once(headless_stylus *h)
{
	headless_send(h, ST_STEP, -1);
	const st_snapshot *s = demo_snapshot(h->d);
	struct timespec nap = {0, 20000};
	while (s->commands < h->sent && !stop_requested()) {
		nanosleep(&nap, NULL);
		s = demo_snapshot(h->d);
	}
	return s;
}

static void headless_on_sample(void *context, const dev_sample *sample, const trk_pointer *pointer,
                               const sty_output *out)
{
	(void)sample, (void)pointer;
	headless_stylus *h = context;
	if (out->release) {
		headless_send(h, ST_RELEASE, -1);
		h->releases++;
	}
	if (out->grab) {
		headless_send(h, ST_GRAB, out->grabbed);
		h->grabs++;
	}
	demo_set_pointer(h->d, out->drawn);
	if (out->grabbed >= 0)
		st_set_pointer(demo_sim(h->d), out->target, out->target_velocity);
}

static float smoothstep(float u) { return u <= 0.0f ? 0.0f : u >= 1.0f ? 1.0f : u * u * (3.0f - 2.0f * u); }

static int run_headless(const demo_args *a, bool forced)
{
	if (a->record && !a->device) {
		fprintf(stderr, "tela: --record without --device records the mouse, and a headless run has none; "
		                "give a --device to record it, or run in a window\n");
		return EXIT_TELA_USAGE;
	}
	demo_options o = demo_options_default();
	o.scene = a->scene;
	o.offscreen = true;
	o.width = a->width == 1280 ? 960 : (int)a->width;
	o.height = a->height == 800 ? 600 : (int)a->height;
	o.start_paused = true;
	o.rate_scale = 0.0;
	o.grab_radius = a->grab_radius;
	o.vsync = false;
	/* the headless picture is of the cloth, unless the panel is asked for */
	o.panel = a->panel == 1;
	o.gpu = a->gpu;
	char error[1024];
	int code;
	demo *d = demo_create(&o, error, sizeof error, &code);
	if (!d) {
		fprintf(stderr, "tela: headless: %s\n", error);
		return code == 3 ? EXIT_TELA_INPUT : EXIT_TELA_DISPLAY;
	}
	const st_layout *l = st_get_layout(demo_sim(d));
	const st_snapshot *s = demo_snapshot(d);
	double seconds = a->seconds > 0.0 ? a->seconds : 2.5;
	int64_t steps = (int64_t)llround(seconds / l->dt);
	int64_t grab_at = (int64_t)llround(0.2 * seconds / l->dt), release_at = (int64_t)llround(0.8 * seconds / l->dt);
	int64_t pull_steps = (release_at - grab_at) * 3 / 4;
	sty_feed feed;
	bool have_feed = false;
	headless_stylus hs = {.d = d};
	sty_mesh *meshes = NULL;
	sty_obstacle *obstacles = NULL;
	if (a->device) {
		sty_feed_options fo = {.spec = a->device, .calibration = a->calibration, .record = a->record,
		                       .stylus = sty_config_default()};
		if (a->gain > 0.0)
			fo.stylus.gain = (float)a->gain;
		meshes = calloc((size_t)l->object_count + 1, sizeof *meshes);
		obstacles = calloc((size_t)l->obstacle_count + 1, sizeof *obstacles);
		if (!meshes || !obstacles || !sty_feed_open(&feed, &fo, error, sizeof error)) {
			fprintf(stderr, "tela: --device %s: %s\n", a->device, meshes && obstacles ? error : "out of memory");
			free(meshes);
			free(obstacles);
			demo_destroy(&d);
			return EXIT_TELA_INPUT;
		}
		have_feed = true;
	}
	/* with a device the stylus grabs, not the script */
	int vertex = have_feed ? -1 : st_pick_free_corner(l, s->positions);
	float start[3] = {0.0f, 0.0f, 0.0f}, pull[3] = {0.0f, 0.0f, 0.0f}, moved = 0.0f;
	progress prog;
	progress_start(&prog, "tela", (double)steps * (double)l->dt, a->quiet);
	bool said_record = false;
	bool grabbed = false, released = false;
	bool watched = stop_watch_start("demo --headless", NULL);
	for (int64_t k = 0; k < steps && !stop_requested(); k++) {
		stop_watch_progress(k);
		if (have_feed) {
			/* lock step: every sample due at or before this step's start */
			sty_scene sc;
			sty_scene_from_layout(l, (const float(*)[4])s->positions, (const float(*)[7])s->obstacle_pose, meshes,
			                      obstacles, &sc);
			sty_feed_advance(&feed, (double)k * (double)l->dt, &sc, headless_on_sample, &hs);
			/* the source goes on without its recording: said once, when it stops */
			if (!said_record && dev_record_error(feed.source)[0]) {
				ev_post(EV_ERROR, (double)k * (double)l->dt, NULL, "--record: %s", dev_record_error(feed.source));
				said_record = true;
			}
			float f2 = s->grab_force[0] * s->grab_force[0] + s->grab_force[1] * s->grab_force[1] +
			           s->grab_force[2] * s->grab_force[2];
			if (s->grabbed_vertex >= 0 && sqrtf(f2) > hs.peak_force)
				hs.peak_force = sqrtf(f2);
		}
		if (vertex >= 0 && k == grab_at) {
			memcpy(start, s->positions[vertex], sizeof start);
			/* up and towards the camera, 30 cm in all */
			float eye[3];
			cam_eye(demo_camera(d), eye);
			float h[3] = {eye[0] - start[0], 0.0f, eye[2] - start[2]};
			float hl = sqrtf(h[0] * h[0] + h[2] * h[2]);
			pull[0] = hl > 0.0f ? 0.15f * h[0] / hl : 0.0f;
			pull[1] = 0.26f;
			pull[2] = hl > 0.0f ? 0.15f * h[2] / hl : 0.0f;
			demo_set_pointer(d, start);
			headless_send(&hs, ST_GRAB, vertex);
			grabbed = true;
		}
		if (vertex >= 0 && k >= grab_at && k < release_at) {
			float u = smoothstep((float)(k - grab_at) / (float)(pull_steps > 0 ? pull_steps : 1));
			float p[3] = {start[0] + u * pull[0], start[1] + u * pull[1], start[2] + u * pull[2]};
			demo_set_pointer(d, p);
		}
		if (vertex >= 0 && k == release_at) {
			const float *p = s->positions[vertex];
			float dx = p[0] - start[0], dy = p[1] - start[1], dz = p[2] - start[2];
			moved = sqrtf(dx * dx + dy * dy + dz * dz);
			headless_send(&hs, ST_RELEASE, -1);
			released = true;
		}
		s = step_once(&hs);
		progress_update(&prog, s->time);
	}
	if (have_feed)
		sty_feed_flush_events(&feed, s->time);
	progress_end(&prog);
	if (watched)
		stop_watch_end();
	char out[512];
	if (a->out)
		snprintf(out, sizeof out, "%s", a->out);
	else
		snprintf(out, sizeof out, "tela-%s.png", l->scene);
	/* stopped by a signal: no picture of a script cut short, and none half-written */
	bool stopped = stop_requested();
	int rc = 0;
	if (!stopped) {
		/* the picture is of the end: framed where the cloth went, not where it started */
		demo_fit_view(d);
		demo_draw(d);
		rc = demo_screenshot(d, out);
	}
	int w, h;
	demo_window_size(d, &w, &h);
	int errors = demo_gl_errors(d);
	if (a->quiet)
		goto done;
	printf("tela: %s, so the demo ran headless (offscreen OpenGL: %s)\n",
	       forced ? "--headless given" : "no display found", (const char *)glGetString(GL_RENDERER));
	printf("scene %s: %lld steps (%.3f s simulated) with %s\n", l->scene, (long long)s->steps, s->time,
	       sim_integrator_name(s->def.integrator));
	if (released)
		printf("scripted grab: vertex %d grabbed at %.2f s, pointer pulled %.2f m, the vertex followed %.3f m, "
		       "released at %.2f s\n",
		       vertex, (double)grab_at * l->dt, (double)sqrtf(pull[0] * pull[0] + pull[1] * pull[1] + pull[2] * pull[2]),
		       (double)moved, (double)release_at * l->dt);
	else if (grabbed)
		printf("scripted grab: vertex %d grabbed at %.2f s, still held when stopped\n", vertex,
		       (double)grab_at * l->dt);
	if (have_feed) {
		printf("stylus: %s: %llu samples, %d grabs, %d releases, peak coupling force %.3f N%s%s\n",
		       dev_describe(feed.source), (unsigned long long)feed.delivered, hs.grabs, hs.releases,
		       (double)hs.peak_force, feed.pointer.frozen ? "; pointer frozen: " : "",
		       feed.pointer.frozen ? feed.pointer.reason : "");
	}
	printf("kinetic %.6g J, max strain %.4f, contacts %d, collisions %d%s%s\n", s->stats.kinetic,
	       (double)s->stats.max_strain, s->stats.contacts, s->stats.collisions, s->message[0] ? "; " : "", s->message);
	if (errors)
		printf("OpenGL reported %d errors\n", errors);
done:
	if (have_feed) {
		sty_feed_close(&feed);
		free(meshes);
		free(obstacles);
	}
	demo_destroy(&d);
	if (rc != 0) {
		fprintf(stderr, "tela: %s: %s\n", out, strerror(rc));
		return EXIT_TELA_IO;
	}
	if (stopped) {
		printf("picture: none, stopped by %s\n", stop_signal_name());
		return stop_exit_code();
	}
	if (!a->quiet)
		printf("picture: %s (%dx%d)\n", out, w, h);
	return EXIT_TELA_OK;
}

int cmd_demo(int argc, char **argv)
{
	if (cli_wants_help(argc, argv, 0)) {
		demo_help();
		return EXIT_TELA_OK;
	}
	demo_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc != EXIT_TELA_OK)
		return rc;
	/* refused before a window opens or a step runs */
	if ((a.out && (rc = cli_check_output("demo", "--out", a.out, CLI_OUT_FILE))) ||
	    (a.record && (rc = cli_check_output("demo", "--record", a.record, CLI_OUT_FILE))))
		return rc;
	if (a.xr) {
		xr_options x = {.scene = a.scene, .seconds = a.seconds, .panel = a.panel != 0, .width = (int)a.width,
		                .height = (int)a.height, .device = a.device, .calibration = a.calibration,
		                .record = a.record, .gain = a.gain, .hand = a.hand == 0 ? 0 : 1,
		                .paused = a.paused, .grab_radius = a.grab_radius};
		return xr_run(&x);
	}
	if (a.headless || !have_display())
		return run_headless(&a, a.headless);
	bool fall_back = false;
	rc = run_windowed(&a, &fall_back);
	if (fall_back) {
		fprintf(stderr, "tela: running headless instead\n");
		return run_headless(&a, false);
	}
	return rc;
}
