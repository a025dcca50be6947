/* The interactive demo's main thread: window events, camera, the mouse pointer and the
 * frame.  The simulation never waits for anything here: it reads the pointer before
 * each of its steps and publishes its state after, and this thread draws whatever state
 * is newest when a frame starts. */
#define _POSIX_C_SOURCE 200809L
#include "demo.h"
#include "demo_files.h"
#include "demo_gpu.h"

#include "device_thread.h"
#include "events.h"
#include "framing.h"
#include "gl_window.h"
#include "overlay.h"
#include "panel.h"
#include "png_io.h"
#include "stop.h"

#include <GL/glew.h>
#include <SDL2/SDL.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* A vertex is picked when the cursor ray passes within this many pixels of it. */
static const float PICK_PIXELS = 9.0f;
/* After the panel or a key changes the world settings, the panel shows what was sent for
 * this long instead of the snapshot's settings, which lag by up to a step (a long one
 * in slow motion) and would make a dragged slider jump back. */
static const uint64_t DEF_HOLD_NS = 300000000u;
/* The grab force drawn as a segment of this many metres per newton: the forces of a
 * hand-held pull (tenths of a newton to a few newtons) then span centimetres. */
static const float FORCE_METRES_PER_NEWTON = 0.05f;
/* Frames the GL may queue ahead of the picture.  Without vsync nothing else bounds the
 * queue, and a software rasterizer starved of CPU (Mesa's llvmpipe on a loaded machine)
 * let it grow to seconds of frames: each showed older state than the last, and the frame
 * that finally had to wait for them all froze the window, and the stylus with it, for
 * seconds (CI's test_stylus_window_slow_start saw one 3 s frame swallow a whole lift).
 * Two is what GPU drivers allow by default. */
enum { FRAMES_IN_FLIGHT = 2 };
/* A fence not reached in this long is given up on: the frame goes ahead rather than hang
 * the window on a lost context. */
static const uint64_t FRAME_FENCE_TIMEOUT_NS = 2000000000u;

struct demo {
	demo_gpu gpu; /* issue 7: the panel's GPU integrator */
	bool gpu_on;
	demo_files *files; /* scenes opened and saved from the window */
	demo_options options;
	SDL_Window *window;
	SDL_GLContext gl;
	scn_scene *scene;
	st_thread *sim;
	rd_renderer *renderer;
	const st_layout *layout;
	const st_snapshot *snapshot;
	char scene_name[512]; /* what options.scene points to after a scene switch */
	int gl_errors_before;   /* of renderers freed by scene switches */
	cam_orbit camera;
	rd_style style;
	bool floor_grid;
	/* the panel (NULL with --no-panel) and what it edits that is the demo's own */
	panel *panel;
	bool show_panel, show_hud;
	bool vertex_ids, velocity_arrows;
	bool debug_boxes, debug_broad, debug_narrow, debug_predicted;
	int depth_min, depth_max;
	float (*segments)[5]; /* debug view scratch, grown as needed */
	int segment_count, segment_capacity;
	float arrow_length, arrow_width;
	float pointer_length;  /* the cone, m, from the scene's size */
	int panel_frames;
	sim_world_def def;      /* as last sent; shown while DEF_HOLD_NS has not passed */
	uint64_t def_sent_ns;
	sim_material *materials; /* per cloth object, as last sent (snapshots carry no materials) */
	int object;              /* whose material the panel shows */
	panel_plots plots;
	int64_t plot_stats_steps;
	float (*arrows)[4];      /* overlay scratch, vertex_count each */
	float (*labels)[2];
	int *label_ids;
	/* render rate */
	uint64_t fps_since_ns;
	int fps_frames;
	double render_fps;
	/* the pointer */
	float cursor[2];
	bool cursor_seen;    /* a mouse event has placed the cursor (before one, it is no place) */
	float pointer[3], pointer_velocity[3];
	float depth;        /* of the pointer plane, along the view direction, m */
	bool scripted;      /* demo_set_pointer took over from the cursor */
	int hover;
	int grabbed;
	/* Without a stylus the mouse's pointer is a pose source like any device (a push
	 * source in the world frame): the pointer the simulation follows is what comes out of
	 * it, so that --record records exactly that and a replay repeats it. */
	dev_source *mouse;
	bool mouse_have_prev;
	int64_t mouse_prev_ns;
	float mouse_prev[3];
	/* the tracked stylus (NULL: the mouse drives the pointer) and its state this frame */
	dt_thread *device;
	dt_status device_status;
	char device_line[400];
	/* the camera station's motion (relative to its first pose) already applied to the
	 * view: each frame moves the view by what is new, so the mouse's changes stay */
	bool head_applied;
	uint64_t head_samples; /* the camera station's sample count when last applied */
	double head_position[3], head_rotation[4];
	/* mouse drags that are not grabs */
	bool orbiting, panning;
	uint64_t last_frame_ns;
	/* the headset's mirror (issue 8): a framebuffer shown instead of the camera's view */
	unsigned mirror;
	int mirror_width, mirror_height;
	/* capture */
	bool recording, screenshot_requested, exporting;
	int record_index, screenshot_index;
	int frames;
	/* Fences after the last FRAMES_IN_FLIGHT swaps (a ring; NULL where none yet) */
	GLsync frame_fences[FRAMES_IN_FLIGHT];
	int frame_fence_next;
	char title[768];
	/* what went wrong (events.h): shown in the message line, and said on stderr too,
	 * where it outlasts the line's few seconds */
	ev_line messages;
	ev_printer echo;
	bool said_record; /* the mouse recording's failure is in the queue */
};

demo_options demo_options_default(void)
{
	return (demo_options){
	    .width = 1280, .height = 800, .rate_scale = 1.0, .vsync = true, .panel = true, .camera_station = 2};
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(char *error, int size, const char *fmt, const char *detail)
{
	snprintf(error, (size_t)size, fmt, detail);
}

static bool open_window(demo *d, char *error, int error_size, int *exit_code)
{
	gl_window w;
	if (!gl_window_open(&w, d->options.offscreen, d->options.width, d->options.height, d->options.vsync, error,
	                    error_size)) {
		*exit_code = 4;
		return false;
	}
	d->window = w.window;
	d->gl = w.context;
	demo_gpu_init(&d->gpu, d->window, d->gl);
	return true;
}

/* ---- scenes ------------------------------------------------------------------------------------ */

static void reset_materials(demo *d)
{
	for (int i = 0; i < d->layout->object_count; i++)
		d->materials[i] = d->layout->objects[i].material;
}

static void clear_plots(demo *d)
{
	memset(&d->plots, 0, sizeof d->plots);
	d->plot_stats_steps = -1;
}

/* Starts the simulation thread and the renderer on d->scene, with the view, pointer and
 * panel state of a fresh start. */
static void send_debug(demo *d);

/* The camera's home: the scene file's direction of view, fitted to the scene's box in
 * the part of the window the panel leaves free (as the newest snapshot has the cloth);
 * the pointer sized to the box. */
static void home_view(demo *d)
{
	const st_layout *l = d->layout;
	float eye[3], target[3], lo[3], hi[3];
	memcpy(eye, l->camera_position, sizeof eye);
	memcpy(target, l->camera_target, sizeof target);
	d->pointer_length = 0.0f;
	const st_snapshot *s = d->snapshot;
	if (frame_scene_bounds(l, (const float(*)[4])s->positions, s->vertex_count,
	                       (const float(*)[7])s->obstacle_pose, s->def.gravity, lo, hi)) {
		int w, h;
		demo_window_size(d, &w, &h);
		float rect[4] = {0.0f, 0.0f, (float)w, (float)h};
		if (d->options.panel && d->show_panel)
			rect[2] = fmaxf(0.25f * (float)w, (float)w - panel_reserved_width((float)w));
		frame_fit(lo, hi, l->camera_fov, w, h, rect, 0.08f, eye, target);
		d->pointer_length = frame_pointer_length(lo, hi);
	}
	cam_init(&d->camera, eye, target, l->camera_fov);
}

static bool start_scene(demo *d, char *error, int error_size, int *exit_code)
{
	st_options so = st_options_default();
	so.start_paused = d->options.start_paused;
	so.rate_scale = d->options.rate_scale;
	so.grab_radius = (float)d->options.grab_radius;
	so.stepper = &d->gpu.stepper;
	scn_error err = {0};
	d->sim = st_start(d->scene, &so, &err);
	if (!d->sim) {
		fail(error, error_size, "%s", err.message);
		*exit_code = 3;
		return false;
	}
	if (d->gpu_on) { /* a new thread starts on the CPU */
		st_command c = {.kind = ST_SET_STEPPER, .use_stepper = true};
		st_send(d->sim, &c);
	}
	d->layout = st_get_layout(d->sim);
	char log[1024] = "";
	d->renderer = rd_create(d->layout, log, sizeof log);
	if (!d->renderer) {
		fail(error, error_size, "the renderer could not start: %s", log);
		*exit_code = 4;
		return false;
	}
	size_t n = d->layout->vertex_count > 0 ? (size_t)d->layout->vertex_count : 1;
	size_t objects = d->layout->object_count > 0 ? (size_t)d->layout->object_count : 1;
	d->materials = calloc(objects, sizeof *d->materials);
	d->arrows = malloc(n * sizeof *d->arrows);
	d->labels = malloc(n * sizeof *d->labels);
	d->label_ids = malloc(n * sizeof *d->label_ids);
	if (!d->materials || !d->arrows || !d->labels || !d->label_ids) {
		fail(error, error_size, "%s", "out of memory");
		*exit_code = 3;
		return false;
	}
	reset_materials(d);
	d->object = 0;
	d->hover = d->grabbed = -1;
	d->scripted = d->orbiting = d->panning = false;
	d->snapshot = st_latest(d->sim);
	home_view(d);
	d->depth = d->camera.distance;
	d->def = d->snapshot->def;
	d->def_sent_ns = 0;
	clear_plots(d);
	if (d->debug_boxes || d->debug_broad || d->debug_narrow || d->debug_predicted)
		send_debug(d); /* a new thread starts with the views off */
	if (d->device)
		dt_attach(d->device, d->sim, d->layout);
	return true;
}

/* Undoes start_scene, also a partial one. */
static void stop_scene(demo *d)
{
	if (d->device)
		dt_attach(d->device, NULL, NULL); /* before st_stop: the device thread sends to it */
	st_stop(&d->sim); /* before the renderer: nothing reads its snapshots after this */
	if (d->renderer)
		d->gl_errors_before += rd_gl_error_count(d->renderer);
	rd_destroy(&d->renderer);
	free(d->materials);
	free(d->arrows);
	free(d->labels);
	free(d->label_ids);
	d->materials = NULL, d->arrows = NULL, d->labels = NULL, d->label_ids = NULL;
	d->layout = NULL;
	d->snapshot = NULL;
}

demo *demo_create(const demo_options *options, char *error, int error_size, int *exit_code)
{
	*exit_code = 0;
	demo *d = calloc(1, sizeof *d);
	if (!d) {
		fail(error, error_size, "%s", "out of memory");
		*exit_code = 3;
		return NULL;
	}
	d->options = *options;
	d->gpu_on = options->gpu;
	snprintf(d->scene_name, sizeof d->scene_name, "%s", options->scene);
	d->options.scene = d->scene_name;
	d->hover = d->grabbed = -1;
	d->floor_grid = true;
	d->style = RD_SOLID;
	d->show_panel = d->show_hud = true;
	d->arrow_length = 0.05f;
	d->depth_max = 2;
	d->arrow_width = 1.5f;
	d->files = demo_files_create();
	ev_printer_init(&d->echo, stderr, "tela");
	scn_error err = {0};
	if (scn_load(options->scene, &d->scene, &err) != SCN_OK) {
		fail(error, error_size, "%s", err.message);
		*exit_code = 3;
		demo_destroy(&d);
		return NULL;
	}
	if (options->device) {
		sty_feed_options fo = {.spec = options->device, .calibration = options->calibration,
		                       .record = options->record, .stylus = sty_config_default(),
		                       .source = options->device_source, .calibration_value = options->device_calibration};
		if (options->gain > 0.0)
			fo.stylus.gain = (float)options->gain;
		char why[512];
		d->device = dt_start(&fo, options->camera_station, why, sizeof why);
		if (!d->device) {
			snprintf(error, (size_t)error_size, "--device %s: %s", options->device, why);
			*exit_code = 3;
			demo_destroy(&d);
			return NULL;
		}
		dt_get_status(d->device, &d->device_status);
	} else {
		char why[512];
		d->mouse = dev_open_push("mouse", DEV_FRAME_WORLD, why, sizeof why);
		if (!d->mouse || (options->record && !dev_record(d->mouse, options->record, why, sizeof why))) {
			snprintf(error, (size_t)error_size, "the mouse: %s", why);
			*exit_code = 3;
			demo_destroy(&d);
			return NULL;
		}
	}
	if (!open_window(d, error, error_size, exit_code) || !start_scene(d, error, error_size, exit_code)) {
		demo_destroy(&d);
		return NULL;
	}
	if (options->panel) {
		d->panel = panel_create(d->window, d->gl);
		if (!d->panel)
			fprintf(stderr, "tela: the panel (Dear ImGui) could not start; running without it\n");
	}
	d->last_frame_ns = d->fps_since_ns = now_ns();
	return d;
}

bool demo_switch_scene(demo *d, const char *scene, char *error, int error_size)
{
	d->exporting = false; /* the new scene's thread starts without an export */
	char name[sizeof d->scene_name];
	snprintf(name, sizeof name, "%s", scene); /* `scene` may be d->scene_name itself */
	scn_scene *next = NULL;
	scn_error err = {0};
	if (scn_load(name, &next, &err) != SCN_OK) {
		fail(error, error_size, "%s", err.message);
		return false;
	}
	/* the new scene starts as the old one was: running or paused */
	d->options.start_paused = d->snapshot && d->snapshot->paused;
	stop_scene(d);
	scn_scene *previous = d->scene;
	d->scene = next;
	int code;
	if (!start_scene(d, error, error_size, &code)) {
		stop_scene(d);
		scn_scene_free(&d->scene);
		d->scene = previous;
		char again[256];
		if (!start_scene(d, again, sizeof again, &code))
			stop_scene(d); /* demo_frame then reports the end */
		return false;
	}
	scn_scene_free(&previous);
	snprintf(d->scene_name, sizeof d->scene_name, "%s", name);
	return true;
}

demo_files *demo_files_of(const demo *d) { return d->files; }
const scn_scene *demo_scene(const demo *d) { return d->scene; }

static const sim_world_def *current_def(const demo *d);

void demo_settings(const demo *d, sim_world_def *def, float *dt, const sim_material **materials, int *material_count)
{
	*def = *current_def(d);
	*dt = d->snapshot->dt > 0.0f ? d->snapshot->dt : d->layout->dt;
	*materials = d->materials;
	*material_count = d->layout->object_count;
}

void demo_destroy(demo **dp)
{
	demo *d = dp ? *dp : NULL;
	if (!d)
		return;
	ev_printer_flush(&d->echo);
	panel_destroy(&d->panel); /* while its GL context is still there */
	for (int i = 0; i < FRAMES_IN_FLIGHT; i++)
		if (d->frame_fences[i])
			glDeleteSync(d->frame_fences[i]);
	stop_scene(d);
	demo_gpu_fini(&d->gpu); /* the simulation thread released it */
	dt_stop(&d->device);
	dev_close(&d->mouse);
	gl_window w = {d->window, d->gl};
	gl_window_close(&w);
	free(d->segments);
	scn_scene_free(&d->scene);
	demo_files_destroy(&d->files);
	free(d);
	*dp = NULL;
}

/* ---- geometry of the view ---------------------------------------------------------------------- */

void demo_window_size(const demo *d, int *width, int *height)
{
	SDL_GL_GetDrawableSize(d->window, width, height);
	if (*width <= 0 || *height <= 0)
		*width = d->options.width, *height = d->options.height;
}

static void forward(const cam_orbit *c, float f[3])
{
	float eye[3];
	cam_eye(c, eye);
	float l = 0.0f;
	for (int k = 0; k < 3; k++) {
		f[k] = c->target[k] - eye[k];
		l += f[k] * f[k];
	}
	l = sqrtf(l);
	for (int k = 0; k < 3; k++)
		f[k] /= l;
}

/* The camera's frame, computed once for projecting many points. */
typedef struct view_basis {
	float eye[3], f[3], right[3], up[3];
	float t; /* tan of half the vertical field of view */
	int w, h;
} view_basis;

static void get_view_basis(const demo *d, view_basis *b)
{
	demo_window_size(d, &b->w, &b->h);
	float *eye = b->eye, *f = b->f, *right = b->right, *up = b->up;
	cam_eye(&d->camera, eye);
	forward(&d->camera, f);
	const float world_up[3] = {0.0f, 1.0f, 0.0f};
	right[0] = f[1] * world_up[2] - f[2] * world_up[1];
	right[1] = f[2] * world_up[0] - f[0] * world_up[2];
	right[2] = f[0] * world_up[1] - f[1] * world_up[0];
	float rl = sqrtf(right[0] * right[0] + right[1] * right[1] + right[2] * right[2]);
	for (int k = 0; k < 3; k++)
		right[k] /= rl;
	up[0] = right[1] * f[2] - right[2] * f[1];
	up[1] = right[2] * f[0] - right[0] * f[2];
	up[2] = right[0] * f[1] - right[1] * f[0];
	b->t = tanf(0.5f * d->camera.fov_degrees * 3.14159265f / 180.0f);
}

/* False for a point behind the renderer's near plane (its pixel would be meaningless). */
static bool project(const view_basis *b, const float point[3], float *x, float *y)
{
	float v[3] = {point[0] - b->eye[0], point[1] - b->eye[1], point[2] - b->eye[2]};
	float z = v[0] * b->f[0] + v[1] * b->f[1] + v[2] * b->f[2];
	float sx = (v[0] * b->right[0] + v[1] * b->right[1] + v[2] * b->right[2]) / (z * b->t * ((float)b->w / (float)b->h));
	float sy = (v[0] * b->up[0] + v[1] * b->up[1] + v[2] * b->up[2]) / (z * b->t);
	*x = (sx + 1.0f) * 0.5f * (float)b->w;
	*y = (1.0f - sy) * 0.5f * (float)b->h;
	return z > 0.01f;
}

void demo_project(const demo *d, const float point[3], float *x, float *y)
{
	view_basis b;
	get_view_basis(d, &b);
	project(&b, point, x, y);
}

/* The metres one pixel spans at the given depth. */
static float pixel_size(const demo *d, float depth)
{
	int w, h;
	demo_window_size(d, &w, &h);
	return 2.0f * depth * tanf(0.5f * d->camera.fov_degrees * 3.14159265f / 180.0f) / (float)h;
}

/* The pointer sits where the cursor ray meets the plane facing the camera at `depth`. */
static void place_pointer(demo *d, float dt)
{
	if (d->scripted)
		return;
	int w, h;
	demo_window_size(d, &w, &h);
	float o[3], dir[3], f[3];
	cam_ray(&d->camera, d->cursor[0], d->cursor[1], w, h, o, dir);
	forward(&d->camera, f);
	float along = dir[0] * f[0] + dir[1] * f[1] + dir[2] * f[2];
	float s = d->depth / (along > 0.05f ? along : 0.05f);
	float p[3];
	for (int k = 0; k < 3; k++)
		p[k] = o[k] + s * dir[k];
	for (int k = 0; k < 3; k++) {
		d->pointer_velocity[k] = dt > 0.0f ? (p[k] - d->pointer[k]) / dt : 0.0f;
		d->pointer[k] = p[k];
	}
}

/* The rotation that turns +x (the stylus's boresight, trk_tip_direction) onto the unit
 * vector f, as x y z w: the mouse's pointer points along the view. */
static void boresight_to(const float f[3], float q[4])
{
	float c = f[0]; /* cos of the angle from +x */
	if (c < -0.999999f) {
		q[0] = 0.0f, q[1] = 0.0f, q[2] = 1.0f, q[3] = 0.0f; /* half a turn about z */
		return;
	}
	/* q = (x cross f, 1 + x . f), normalised: the half-angle form */
	q[0] = 0.0f, q[1] = -f[2], q[2] = f[1], q[3] = 1.0f + c;
	float l = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	for (int k = 0; k < 4; k++)
		q[k] /= l;
}

/* Pushes the pointer into the mouse source and hands the simulation what comes out. */
static void feed_mouse(demo *d)
{
	float f[3];
	forward(&d->camera, f);
	dev_sample in = {.t_ns = (int64_t)now_ns(), .sensor = 1, .buttons = d->grabbed >= 0 ? 1u : 0u};
	memcpy(in.position, d->pointer, sizeof in.position);
	boresight_to(f, in.orientation);
	dev_push(d->mouse, &in);
	dev_sample out[16];
	int n, got = 0;
	dev_sample newest = in;
	while ((n = dev_poll(d->mouse, out, 16, 0)) > 0) {
		newest = out[n - 1];
		got += n;
	}
	if (got == 0)
		return;
	float v[3] = {0.0f, 0.0f, 0.0f};
	double span = (double)(newest.t_ns - d->mouse_prev_ns) * 1e-9;
	if (d->mouse_have_prev && span > 0.0)
		for (int k = 0; k < 3; k++)
			v[k] = (float)((double)(newest.position[k] - d->mouse_prev[k]) / span);
	d->mouse_have_prev = true;
	d->mouse_prev_ns = newest.t_ns;
	memcpy(d->mouse_prev, newest.position, sizeof d->mouse_prev);
	st_set_pointer(d->sim, newest.position, v);
}

void demo_set_pointer(demo *d, const float position[3])
{
	d->scripted = true;
	memset(d->pointer_velocity, 0, sizeof d->pointer_velocity);
	memcpy(d->pointer, position, sizeof d->pointer);
	st_set_pointer(d->sim, d->pointer, d->pointer_velocity);
}

/* The vertex under the cursor (seed 002's pick spheres, sized in pixels at the depth of
 * the camera's target), or -1. */
static int pick(demo *d, float *depth)
{
	int w, h;
	demo_window_size(d, &w, &h);
	float o[3], dir[3], t;
	cam_ray(&d->camera, d->cursor[0], d->cursor[1], w, h, o, dir);
	const st_snapshot *s = d->snapshot;
	const float(*positions)[4] = (const float(*)[4])s->positions;
	int v = cam_pick_vertex(o, dir, positions, s->vertex_count, PICK_PIXELS * pixel_size(d, d->camera.distance), &t);
	/* a press on the cloth between vertices (one that moved away under the cursor) grabs
	 * the surface there rather than orbiting the camera */
	for (int i = 0; i < d->layout->object_count; i++) {
		const st_object *ob = &d->layout->objects[i];
		float ts;
		int vs = cam_pick_surface(o, dir, positions, ob->first_vertex, ob->triangles, ob->triangle_count, &ts);
		if (vs >= 0 && ts < t)
			v = vs, t = ts;
	}
	if (v >= 0 && depth) {
		float f[3];
		forward(&d->camera, f);
		*depth = t * (dir[0] * f[0] + dir[1] * f[1] + dir[2] * f[2]);
	}
	return v;
}

/* ---- input ------------------------------------------------------------------------------------- */

static void send(demo *d, st_command_kind kind, int vertex)
{
	st_command c = {.kind = kind, .vertex = vertex};
	st_send(d->sim, &c);
}

static void grab(demo *d)
{
	float depth;
	int v = pick(d, &depth);
	if (v < 0)
		return;
	d->depth = depth;
	d->grabbed = v;
	d->scripted = false;
	place_pointer(d, 0.0f);
	memset(d->pointer_velocity, 0, sizeof d->pointer_velocity);
	st_set_pointer(d->sim, d->pointer, d->pointer_velocity);
	send(d, ST_GRAB, v);
}

static void release(demo *d)
{
	if (d->grabbed < 0)
		return;
	d->grabbed = -1;
	send(d, ST_RELEASE, -1);
}

/* A point for seek: the vertex under the cursor, or where the ray meets the floor. */
static void seek(demo *d)
{
	const st_snapshot *s = d->snapshot;
	int v = pick(d, NULL);
	if (v >= 0) {
		cam_seek(&d->camera, s->positions[v]);
		return;
	}
	int w, h;
	demo_window_size(d, &w, &h);
	float o[3], dir[3];
	cam_ray(&d->camera, d->cursor[0], d->cursor[1], w, h, o, dir);
	if (dir[1] < -1e-3f) {
		float t = -o[1] / dir[1], p[3] = {o[0] + t * dir[0], 0.0f, o[2] + t * dir[2]};
		cam_seek(&d->camera, p);
	}
}

/* The world settings as the user last set them: the snapshot's lag behind a change. */
static const sim_world_def *current_def(const demo *d)
{
	if (d->def_sent_ns != 0 && now_ns() - d->def_sent_ns < DEF_HOLD_NS)
		return &d->def;
	return &d->snapshot->def;
}

static void send_def(demo *d, const sim_world_def *def)
{
	d->def = *def;
	d->def_sent_ns = now_ns();
	st_command c = {.kind = ST_SET_DEF, .def = *def};
	st_send(d->sim, &c);
}

static void set_integrator(demo *d, int index)
{
	if (index < 0 || index >= SIM_INTEGRATOR_COUNT)
		return;
	sim_world_def def = *current_def(d);
	def.integrator = (sim_integrator)index;
	send_def(d, &def);
}

/* The scene's own settings and materials come back with the world (the seed's rewind). */
static void reset(demo *d)
{
	release(d);
	if (d->device) {
		st_command c = {.kind = ST_RESET};
		dt_drop(d->device, &c);
	} else {
		send(d, ST_RESET, -1);
	}
	reset_materials(d);
	d->def_sent_ns = 0;
	clear_plots(d);
}

static void next_capture_path(char *out, size_t cap, const char *stem, int *index)
{
	struct stat st;
	do
		snprintf(out, cap, "%s%04d.png", stem, (*index)++);
	while (stat(out, &st) == 0 && *index < 100000);
}

static bool key(demo *d, SDL_Keycode k)
{
	switch (k) {
	case SDLK_ESCAPE:
	case SDLK_q: return false;
	case SDLK_SPACE: send(d, d->snapshot->paused ? ST_PLAY : ST_PAUSE, -1); break;
	case SDLK_PERIOD:
	case SDLK_s: send(d, ST_STEP, -1); break;
	case SDLK_r: reset(d); break;
	case SDLK_w: d->style = (rd_style)((d->style + 1) % RD_STYLE_COUNT); break;
	case SDLK_g: d->floor_grid = !d->floor_grid; break;
	case SDLK_h: d->show_panel = !d->show_panel; break;
	case SDLK_F1: d->show_hud = !d->show_hud; break;
	case SDLK_HOME:
	case SDLK_c: cam_reset(&d->camera); break;
	case SDLK_p:
	case SDLK_F12: d->screenshot_requested = true; break; /* after the next draw */
	case SDLK_v:
		d->recording = !d->recording;
		if (d->recording && mkdir("tela-frames", 0777) != 0 && errno != EEXIST) {
			ev_post(EV_ERROR, d->snapshot->time, NULL, "cannot record frames: tela-frames: %s", strerror(errno));
			d->recording = false;
		} else {
			ev_post(EV_INFO, d->snapshot->time, NULL, "%s",
			        d->recording ? "recording frames into tela-frames/" : "recording stopped");
		}
		break;
	case SDLK_e: {
		/* every simulation step's meshes, written by the simulation thread so none is missed */
		st_command c = {.kind = ST_EXPORT};
		d->exporting = !d->exporting;
		if (d->exporting && mkdir("tela-meshes", 0777) != 0 && errno != EEXIST) {
			ev_post(EV_ERROR, d->snapshot->time, NULL, "cannot export meshes: tela-meshes: %s", strerror(errno));
			d->exporting = false;
		}
		if (d->exporting)
			snprintf(c.path, sizeof c.path, "tela-meshes");
		/* the simulation thread says that it exports, or that it stopped */
		st_send(d->sim, &c);
		break;
	}
	default:
		if (k >= SDLK_1 && k <= SDLK_8)
			set_integrator(d, (int)(k - SDLK_1));
		break;
	}
	return true;
}

static bool handle_events(demo *d)
{
	SDL_Event e;
	bool go_on = !stop_requested(); /* SIGINT, SIGTERM: as if the window were closed */
	while (SDL_PollEvent(&e)) {
		/* what the panel claims (a press on it, a drag that began on it, typing into it)
		 * must not also orbit, grab or act as a key */
		if (d->panel && e.type != SDL_QUIT && panel_handle_event(d->panel, &e))
			continue;
		switch (e.type) {
		case SDL_QUIT: go_on = false; break;
		case SDL_DROPFILE: /* a scene file or a seed folder */
			demo_open_scene(d, e.drop.file);
			SDL_free(e.drop.file);
			if (!d->sim)
				return false; /* the old scene could not restart either */
			break;
		case SDL_DROPTEXT: SDL_free(e.drop.file); break;
		case SDL_KEYDOWN: go_on &= key(d, e.key.keysym.sym); break;
		case SDL_MOUSEMOTION: {
			float dx = (float)e.motion.xrel, dy = (float)e.motion.yrel;
			d->cursor[0] = (float)e.motion.x, d->cursor[1] = (float)e.motion.y;
			d->cursor_seen = true;
			d->scripted = d->scripted && d->grabbed < 0 && !(e.motion.state & SDL_BUTTON_LMASK);
			if (d->orbiting)
				cam_rotate(&d->camera, dx, dy);
			if (d->panning) {
				int w, h;
				demo_window_size(d, &w, &h);
				cam_pan(&d->camera, dx, dy, h);
			}
			break;
		}
		case SDL_MOUSEBUTTONDOWN:
			d->cursor[0] = (float)e.button.x, d->cursor[1] = (float)e.button.y;
			if (e.button.button == SDL_BUTTON_LEFT && e.button.clicks >= 2)
				seek(d);
			else if (e.button.button == SDL_BUTTON_LEFT) {
				d->scripted = false;
				/* the stylus alone grabs while it drives the pointer: two pointers
				 * pulling one vertex would fight; the mouse keeps the camera */
				if (!d->device)
					grab(d);
				d->orbiting = d->grabbed < 0;
			} else if (e.button.button == SDL_BUTTON_RIGHT)
				d->panning = true;
			else if (e.button.button == SDL_BUTTON_MIDDLE)
				seek(d);
			break;
		case SDL_MOUSEBUTTONUP:
			if (e.button.button == SDL_BUTTON_LEFT) {
				release(d);
				d->orbiting = false;
			} else if (e.button.button == SDL_BUTTON_RIGHT) {
				d->panning = false;
			}
			break;
		case SDL_MOUSEWHEEL: {
			float steps = e.wheel.preciseY != 0.0f ? e.wheel.preciseY : (float)e.wheel.y;
			/* While grabbing (or with shift) the wheel pushes the pointer away or pulls
			 * it closer; otherwise it zooms. */
			if (d->grabbed >= 0 || (SDL_GetModState() & KMOD_SHIFT))
				d->depth = fmaxf(0.05f, d->depth * powf(1.06f, -steps));
			else
				cam_zoom(&d->camera, steps);
			break;
		}
		default: break;
		}
	}
	return go_on;
}

/* ---- the frame --------------------------------------------------------------------------------- */

/* Takes the newest snapshot, and feeds the plots when its statistics are new. */
static void latest(demo *d)
{
	/* This call may hand the current snapshot's slot back to the simulation thread,
	 * which then refills its GPU draw buffer: first fence what was drawn from it. */
	if (d->snapshot)
		demo_gpu_drawn(&d->gpu, &d->snapshot->gpu_draw);
	d->snapshot = st_latest(d->sim);
	const st_snapshot *s = d->snapshot;
	if (s->stats_steps == d->plot_stats_steps)
		return;
	d->plot_stats_steps = s->stats_steps;
	panel_plots *p = &d->plots;
	p->energy[p->next] = (float)(s->stats.kinetic + s->stats.potential);
	p->strain[p->next] = s->stats.max_strain;
	p->step_us[p->next] = (float)s->step_p50_us;
	p->next = (p->next + 1) % PANEL_PLOT_LENGTH;
	if (p->count < PANEL_PLOT_LENGTH)
		p->count++;
}

static bool cursor_over_panel(const demo *d)
{
	float r[4];
	return d->panel && d->show_panel && panel_rect(d->panel, r) && d->cursor[0] >= r[0] && d->cursor[1] >= r[1] &&
	       d->cursor[0] < r[0] + r[2] && d->cursor[1] < r[1] + r[3];
}

/* The 3-D view's rectangle: the window less the panel beside it. */
static void view_rect(const demo *d, float rect[4])
{
	int w, h;
	demo_window_size(d, &w, &h);
	rect[0] = 0.0f, rect[1] = 0.0f, rect[2] = (float)w, rect[3] = (float)h;
	float r[4];
	if (d->panel && d->show_panel)
		rect[2] = panel_rect(d->panel, r) ? fmaxf(0.0f, r[0]) : fmaxf(0.0f, (float)w - panel_reserved_width((float)w));
}

/* Where the user looks: the pointer when a stylus or a script moves it, else the cursor
 * over the 3-D view, else the view's centre. */
static void overlay_focus(const demo *d, const view_basis *b, const float rect[4], float focus[2])
{
	if (d->device || d->scripted) {
		const float *p = d->device ? d->device_status.output.drawn : d->pointer;
		if (project(b, p, &focus[0], &focus[1]) && ov_inside(rect, focus[0], focus[1]))
			return;
	} else if (d->cursor_seen && ov_inside(rect, d->cursor[0], d->cursor[1])) {
		focus[0] = d->cursor[0], focus[1] = d->cursor[1];
		return;
	}
	focus[0] = rect[0] + 0.5f * rect[2], focus[1] = rect[1] + 0.5f * rect[3];
}

/* Keeps the arrows whose bases ov_pick_labels chooses (nearest the focus, apart, capped). */
static int thin_arrows(float (*arrows)[4], int count, const float rect[4], const float focus[2])
{
	float(*bases)[2] = malloc(sizeof *bases * (size_t)(count > 0 ? count : 1));
	if (!bases)
		return count < OV_ARROW_CAP ? count : OV_ARROW_CAP;
	for (int i = 0; i < count; i++)
		bases[i][0] = arrows[i][0], bases[i][1] = arrows[i][1];
	int chosen[OV_ARROW_CAP];
	float kept[OV_ARROW_CAP][4];
	int n = ov_pick_labels((const float(*)[2])bases, count, rect, focus, OV_ARROW_CAP, OV_ARROW_SPACING, chosen);
	for (int i = 0; i < n; i++)
		memcpy(kept[i], arrows[chosen[i]], sizeof kept[i]);
	memcpy(arrows, kept, sizeof kept[0] * (size_t)n);
	free(bases);
	return n;
}

/* The debug views' vertex ids and velocity arrows, projected to pixels, in the 3-D view:
 * the few ids and the thinned arrows nearest the focus that stay legible. */
static void fill_overlay(demo *d, panel_overlay *o)
{
	*o = (panel_overlay){.arrows = (const float(*)[4])d->arrows, .arrow_width = d->arrow_width,
	                     .labels = (const float(*)[2])d->labels, .label_ids = d->label_ids};
	view_rect(d, o->clip);
	if (!d->vertex_ids && !d->velocity_arrows)
		return;
	const st_snapshot *s = d->snapshot;
	view_basis b;
	get_view_basis(d, &b);
	int labels = 0, arrows = 0;
	for (int v = 0; v < s->vertex_count; v++) {
		float x, y;
		if (!project(&b, s->positions[v], &x, &y) || !ov_inside(o->clip, x, y))
			continue;
		if (d->vertex_ids) {
			d->labels[labels][0] = x, d->labels[labels][1] = y;
			d->label_ids[labels++] = v;
		}
		if (d->velocity_arrows) {
			float tip[3], tx, ty;
			for (int k = 0; k < 3; k++)
				tip[k] = s->positions[v][k] + d->arrow_length * s->velocities[v][k];
			if (project(&b, tip, &tx, &ty)) {
				float *a = d->arrows[arrows++];
				a[0] = x, a[1] = y, a[2] = tx, a[3] = ty;
			}
		}
	}
	float focus[2];
	overlay_focus(d, &b, o->clip, focus);
	if (arrows > 0)
		arrows = thin_arrows(d->arrows, arrows, o->clip, focus);
	if (labels > 0) {
		float xy[OV_LABEL_CAP][2];
		int chosen[OV_LABEL_CAP], ids[OV_LABEL_CAP];
		int n = ov_pick_labels((const float(*)[2])d->labels, labels, o->clip, focus, OV_LABEL_CAP, OV_LABEL_SPACING,
		                       chosen);
		for (int i = 0; i < n; i++)
			xy[i][0] = d->labels[chosen[i]][0], xy[i][1] = d->labels[chosen[i]][1], ids[i] = d->label_ids[chosen[i]];
		memcpy(d->labels, xy, sizeof xy[0] * (size_t)n);
		memcpy(d->label_ids, ids, sizeof ids[0] * (size_t)n);
		labels = n;
	}
	o->label_count = labels;
	o->arrow_count = arrows;
}

/* ---- the seed's debug views ------------------------------------------------------------------ */

enum { MAX_SEGMENTS = 400000 }; /* beyond this a debug view is unreadable anyway */

static void segment(demo *d, const view_basis *b, const float p[3], const float q[3], int color)
{
	if (d->segment_count == d->segment_capacity) {
		if (d->segment_capacity >= MAX_SEGMENTS)
			return;
		int cap = d->segment_capacity ? 2 * d->segment_capacity : 4096;
		float(*grown)[5] = realloc(d->segments, sizeof *grown * (size_t)cap);
		if (!grown)
			return;
		d->segments = grown, d->segment_capacity = cap;
	}
	float *g = d->segments[d->segment_count];
	if (!project(b, p, &g[0], &g[1]) || !project(b, q, &g[2], &g[3]))
		return;
	g[4] = (float)color;
	d->segment_count++;
}

/* World position of a pair member: a cloth vertex, or a triangle obstacle's vertex. */
static const float *pair_point(const st_snapshot *s, int id)
{
	if (id < s->vertex_count)
		return s->positions[id];
	id -= s->vertex_count;
	return id < s->debug_obstacle_vertex_count ? s->debug_obstacle_vertices[id] : s->positions[0];
}

static void centroid(const st_snapshot *s, const int *ids, int n, float out[3])
{
	for (int k = 0; k < 3; k++) {
		out[k] = 0.0f;
		for (int i = 0; i < n; i++)
			out[k] += pair_point(s, ids[i])[k] / (float)n;
	}
}

static void pair_segments(demo *d, const view_basis *b)
{
	const st_snapshot *s = d->snapshot;
	for (int i = 0; i < s->debug_pair_count; i++) {
		const sim_debug_pair *p = &s->debug_pairs[i];
		bool broad = p->stage == SIM_PAIR_BROAD_PROXIMITY || p->stage == SIM_PAIR_BROAD_COLLISION;
		if (broad ? !d->debug_broad : !d->debug_narrow)
			continue;
		int color = p->stage == SIM_PAIR_BROAD_PROXIMITY ? PANEL_COLOR_BROAD_PROXIMITY
		            : p->stage == SIM_PAIR_PROXIMITY     ? PANEL_COLOR_PROXIMITY
		            : p->stage == SIM_PAIR_BROAD_COLLISION ? PANEL_COLOR_BROAD_COLLISION
		                                                   : PANEL_COLOR_COLLISION;
		float a[3], c[3];
		if (p->kind == SIM_PAIR_VERTEX_TRIANGLE) {
			/* the vertex to the triangle's centre, and the triangle itself */
			centroid(s, p->v + 1, 3, c);
			segment(d, b, pair_point(s, p->v[0]), c, color);
			for (int k = 0; k < 3; k++)
				segment(d, b, pair_point(s, p->v[1 + k]), pair_point(s, p->v[1 + (k + 1) % 3]), color);
		} else if (p->kind == SIM_PAIR_EDGE_EDGE) {
			centroid(s, p->v, 2, a);
			centroid(s, p->v + 2, 2, c);
			segment(d, b, pair_point(s, p->v[0]), pair_point(s, p->v[1]), color);
			segment(d, b, pair_point(s, p->v[2]), pair_point(s, p->v[3]), color);
			segment(d, b, a, c, color);
		} else {
			/* against a sphere or capsule: a small cross at the vertex */
			const float *v = pair_point(s, p->v[0]);
			float r = 0.01f;
			for (int k = 0; k < 3; k++) {
				float lo[3] = {v[0], v[1], v[2]}, hi[3] = {v[0], v[1], v[2]};
				lo[k] -= r, hi[k] += r;
				segment(d, b, lo, hi, color);
			}
		}
	}
}

static void box_segments(demo *d, const view_basis *b)
{
	const st_snapshot *s = d->snapshot;
	for (int i = 0; i < s->debug_box_count; i++) {
		const float *x = s->debug_boxes[i];
		int color = PANEL_COLOR_BOX + (int)x[6];
		/* the twelve edges: corners differ in one coordinate */
		for (int c = 0; c < 8; c++)
			for (int k = 0; k < 3; k++) {
				if (c & (1 << k))
					continue;
				int e = c | (1 << k);
				float p[3], q[3];
				for (int j = 0; j < 3; j++) {
					p[j] = (c & (1 << j)) ? x[3 + j] : x[j];
					q[j] = (e & (1 << j)) ? x[3 + j] : x[j];
				}
				segment(d, b, p, q, color);
			}
	}
}

static void predicted_segments(demo *d, const view_basis *b)
{
	const st_snapshot *s = d->snapshot;
	if (!s->debug_predicted)
		return;
	for (int o = 0; o < d->layout->object_count; o++) {
		const st_object *ob = &d->layout->objects[o];
		for (int t = 0; t < ob->triangle_count; t++) {
			const int *tri = &ob->triangles[3 * t];
			for (int k = 0; k < 3; k++)
				segment(d, b, s->debug_predicted[ob->first_vertex + tri[k]],
				        s->debug_predicted[ob->first_vertex + tri[(k + 1) % 3]], PANEL_COLOR_PREDICTED);
		}
	}
}

static void debug_segments(demo *d, panel_overlay *o)
{
	d->segment_count = 0;
	if (d->debug_boxes || d->debug_broad || d->debug_narrow || d->debug_predicted) {
		view_basis b;
		get_view_basis(d, &b);
		if (d->debug_boxes)
			box_segments(d, &b);
		if (d->debug_broad || d->debug_narrow)
			pair_segments(d, &b);
		if (d->debug_predicted)
			predicted_segments(d, &b);
		/* hundreds of pairs drawn at once are a blot: the nearest to where the user looks */
		float rect[4], focus[2];
		view_rect(d, rect);
		overlay_focus(d, &b, rect, focus);
		d->segment_count = ov_pick_segments(d->segments, d->segment_count, rect, focus, OV_SEGMENT_CAP);
	}
	o->segments = (const float(*)[5])d->segments;
	o->segment_count = d->segment_count;
}

/* The coupling force on the grabbed vertex, from the vertex along the force the pointer
 * feels (-grab_force): what a force-rendering device would push back with. */
static void force_segment(demo *d, panel_overlay *o)
{
	const st_snapshot *s = d->snapshot;
	int v = s->grabbed_vertex;
	if (v < 0 || v >= s->vertex_count)
		return;
	float tip[3];
	for (int k = 0; k < 3; k++)
		tip[k] = s->positions[v][k] - FORCE_METRES_PER_NEWTON * s->grab_force[k];
	view_basis b;
	get_view_basis(d, &b);
	segment(d, &b, s->positions[v], tip, PANEL_COLOR_FORCE);
	o->segments = (const float(*)[5])d->segments;
	o->segment_count = d->segment_count;
}

static void send_debug(demo *d)
{
	st_command c = {.kind = ST_SET_DEBUG, .debug_depth_min = d->depth_min, .debug_depth_max = d->depth_max};
	if (d->debug_boxes)
		c.debug_flags |= ST_DEBUG_BOXES;
	if (d->debug_broad || d->debug_narrow)
		c.debug_flags |= ST_DEBUG_PAIRS;
	if (d->debug_predicted)
		c.debug_flags |= ST_DEBUG_PREDICTED;
	st_send(d->sim, &c);
}

static int builtin_index(const char *name)
{
	for (int i = 0; i < scn_builtin_count(); i++)
		if (strcmp(scn_builtin_info(i)->name, name) == 0)
			return i;
	return -1;
}

void demo_panel_model(demo *d, panel_model *m)
{
	*m = (panel_model){.layout = d->layout, .snapshot = d->snapshot, .render_fps = d->render_fps, .plots = &d->plots};
	fill_overlay(d, &m->overlay);
	debug_segments(d, &m->overlay);
	force_segment(d, &m->overlay);
	if (d->device) {
		m->device_line = d->device_line;
		m->device_frozen = d->device_status.pointer.frozen;
	}
	m->debug_boxes = d->debug_boxes, m->debug_broad = d->debug_broad;
	m->debug_narrow = d->debug_narrow, m->debug_predicted = d->debug_predicted;
	m->depth_min = d->depth_min, m->depth_max = d->depth_max;
	m->tree_depth = d->snapshot->debug_tree_depth;
	m->show_panel = d->show_panel, m->show_hud = d->show_hud;
	m->scene = builtin_index(d->options.scene);
	m->def = *current_def(d);
	m->dt = d->snapshot->dt > 0.0f ? d->snapshot->dt : d->layout->dt;
	m->object = d->object;
	if (d->layout->object_count > 0)
		m->material = d->materials[d->object];
	m->style = d->style, m->floor_grid = d->floor_grid;
	m->vertex_ids = d->vertex_ids, m->velocity_arrows = d->velocity_arrows;
	m->arrow_length = d->arrow_length, m->arrow_width = d->arrow_width;
	m->gpu = d->gpu_on;
	demo_files_fill_model(d, m);
	m->messages = &d->messages;
	m->now_ns = ev_now_ns();
}

bool demo_apply_panel(demo *d, const panel_model *m)
{
	d->show_panel = m->show_panel, d->show_hud = m->show_hud;
	d->style = m->style, d->floor_grid = m->floor_grid;
	d->vertex_ids = m->vertex_ids, d->velocity_arrows = m->velocity_arrows;
	d->arrow_length = m->arrow_length, d->arrow_width = m->arrow_width;
	if (m->debug_changed) {
		d->debug_boxes = m->debug_boxes, d->debug_broad = m->debug_broad;
		d->debug_narrow = m->debug_narrow, d->debug_predicted = m->debug_predicted;
		d->depth_min = m->depth_min < m->depth_max ? m->depth_min : m->depth_max;
		d->depth_max = m->depth_max;
		send_debug(d);
	}
	if (m->def_changed)
		send_def(d, &m->def);
	if (m->gpu_changed) {
		d->gpu_on = m->gpu;
		st_command c = {.kind = ST_SET_STEPPER, .use_stepper = m->gpu};
		st_send(d->sim, &c);
	}
	if (m->dt_changed) {
		st_command c = {.kind = ST_SET_DT, .dt = m->dt};
		st_send(d->sim, &c);
	}
	bool valid_object = m->object >= 0 && m->object < d->layout->object_count;
	if (m->object_changed && valid_object) {
		d->object = m->object;
	} else if (m->material_changed && valid_object) {
		d->materials[m->object] = m->material;
		st_command c = {.kind = ST_SET_MATERIAL, .object = m->object, .material = m->material};
		st_send(d->sim, &c);
	}
	switch (m->action) {
	case PANEL_NONE: break;
	case PANEL_PLAY: send(d, ST_PLAY, -1); break;
	case PANEL_PAUSE: send(d, ST_PAUSE, -1); break;
	case PANEL_STEP: send(d, ST_STEP, -1); break;
	case PANEL_RESET: reset(d); break;
	case PANEL_QUIT: return false;
	}
	if (m->scene_changed && m->scene >= 0 && m->scene < scn_builtin_count()) {
		char error[512];
		if (!demo_switch_scene(d, scn_builtin_info(m->scene)->name, error, sizeof error))
			ev_post(EV_ERROR, -1.0, NULL, "%s", error);
	}
	if (d->sim)
		demo_files_apply(d, m);
	return d->sim != NULL;
}

static const char *state_name(dev_state state)
{
	switch (state) {
	case DEV_STREAMING: return "streaming";
	case DEV_WAITING: return "waiting";
	case DEV_DISCONNECTED: return "disconnected";
	case DEV_ENDED: return "ended";
	case DEV_FAILED: return "failed";
	}
	return "?";
}

/* The stylus's state for this frame and its line: the source's state and description,
 * and, when the pointer is frozen, why (unless the description says it already). */
static void refresh_device(demo *d)
{
	dt_get_status(d->device, &d->device_status);
	const dt_status *s = &d->device_status;
	const trk_pointer *p = &s->pointer;
	/* the reason the user can act on: a generic "no sample for N ms" (the tracker's
	 * timeout comes first) would hide a pulled cable */
	if (p->frozen && s->state == DEV_DISCONNECTED)
		snprintf(d->device_line, sizeof d->device_line, "%s: %s; pointer frozen: unplugged", state_name(s->state),
		         s->line);
	else if (p->frozen && strcmp(p->reason, s->line) != 0)
		snprintf(d->device_line, sizeof d->device_line, "%s: %s; pointer frozen: %s", state_name(s->state), s->line,
		         p->reason);
	else if (p->frozen)
		snprintf(d->device_line, sizeof d->device_line, "%s: %s; pointer frozen", state_name(s->state), s->line);
	else if (!p->valid)
		snprintf(d->device_line, sizeof d->device_line, "%s: %s; no sample yet", state_name(s->state), s->line);
	else
		snprintf(d->device_line, sizeof d->device_line, "%s: %s", state_name(s->state), s->line);
}

/* Quaternions x y z w, in double: the view's small changes add up over many frames. */
static void quat_mul(const double a[4], const double b[4], double out[4])
{
	double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
	               a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
	               a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
	               a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
	memcpy(out, r, sizeof r);
}

static void quat_rotate(const double q[4], const double v[3], double out[3])
{
	/* v + 2 w (u x v) + 2 u x (u x v), u the vector part */
	double c[3] = {q[1] * v[2] - q[2] * v[1], q[2] * v[0] - q[0] * v[2], q[0] * v[1] - q[1] * v[0]};
	double cc[3] = {q[1] * c[2] - q[2] * c[1], q[2] * c[0] - q[0] * c[2], q[0] * c[1] - q[1] * c[0]};
	for (int k = 0; k < 3; k++)
		out[k] = v[k] + 2.0 * (q[3] * c[k] + cc[k]);
}

/* The camera station moves the view as if the camera were fixed to that sensor: the
 * eye by the sensor's calibrated displacement since its first sample, the direction of
 * view turned about the eye by its rotation since then.  Only the change since the last
 * frame is applied, so an orbit, pan, zoom or C reset by the mouse meanwhile is kept and
 * the head moves the view from there.  The orbit camera has no roll: turning the head
 * sideways tilts nothing, the view stays upright. */
static void follow_camera_station(demo *d)
{
	const dt_camera *c = &d->device_status.camera;
	/* no new pose: redoing the angles from the eye would only add rounding */
	if (c->samples == 0 || (d->head_applied && c->samples == d->head_samples))
		return;
	double position[3], rotation[4], first_inverse[4] = {-c->first.orientation[0], -c->first.orientation[1],
	                                                     -c->first.orientation[2], c->first.orientation[3]};
	double now[4] = {c->pose.orientation[0], c->pose.orientation[1], c->pose.orientation[2], c->pose.orientation[3]};
	for (int k = 0; k < 3; k++)
		position[k] = (double)c->pose.position[k] - (double)c->first.position[k];
	quat_mul(now, first_inverse, rotation);
	if (!d->head_applied) {
		memset(d->head_position, 0, sizeof d->head_position);
		d->head_rotation[0] = d->head_rotation[1] = d->head_rotation[2] = 0.0, d->head_rotation[3] = 1.0;
		d->head_applied = true;
	}
	double applied_inverse[4] = {-d->head_rotation[0], -d->head_rotation[1], -d->head_rotation[2], d->head_rotation[3]};
	double turn[4];
	quat_mul(rotation, applied_inverse, turn);
	float eye[3];
	cam_eye(&d->camera, eye);
	double view[3], turned[3];
	for (int k = 0; k < 3; k++)
		view[k] = (double)d->camera.target[k] - (double)eye[k];
	quat_rotate(turn, view, turned);
	float new_eye[3], new_target[3];
	for (int k = 0; k < 3; k++) {
		new_eye[k] = (float)((double)eye[k] + position[k] - d->head_position[k]);
		new_target[k] = (float)((double)new_eye[k] + turned[k]);
	}
	/* cam_init turns an eye and a target into the orbit's angles; the home view stays */
	cam_orbit moved;
	cam_init(&moved, new_eye, new_target, d->camera.fov_degrees);
	memcpy(d->camera.target, moved.target, sizeof d->camera.target);
	d->camera.distance = moved.distance;
	d->camera.yaw = moved.yaw;
	d->camera.pitch = moved.pitch;
	memcpy(d->head_position, position, sizeof d->head_position);
	memcpy(d->head_rotation, rotation, sizeof d->head_rotation);
	d->head_samples = c->samples;
}

bool demo_device_status(const demo *d, dt_status *status, char *line, int line_size)
{
	if (!d->device)
		return false;
	if (status)
		*status = d->device_status;
	if (line)
		snprintf(line, (size_t)line_size, "%s", d->device_line);
	return true;
}

const char *demo_title(const demo *d) { return d->title; }

static void update_title(demo *d)
{
	const st_snapshot *s = d->snapshot;
	char grab_text[96] = "";
	/* the title is the only place the device line shows without the panel */
	if (s->grabbed_vertex >= 0)
		snprintf(grab_text, sizeof grab_text, " | grab v%d %.2f N", s->grabbed_vertex,
		         (double)sqrtf(s->grab_force[0] * s->grab_force[0] + s->grab_force[1] * s->grab_force[1] +
		                       s->grab_force[2] * s->grab_force[2]));
	snprintf(d->title, sizeof d->title, "tela %s | %s%s | sim %.0f/%.0f Hz%s | render %.0f fps | step p50 %.0f p99 %.0f us | %d vertices | contacts %d collisions %d%s%s%s",
	         d->layout->scene, sim_integrator_name(s->def.integrator), s->paused ? " (paused)" : "", s->achieved_hz,
	         s->target_hz, s->slow_motion ? " SLOW MOTION" : "", d->render_fps, s->step_p50_us, s->step_p99_us,
	         s->vertex_count, s->stats.contacts, s->stats.collisions, grab_text, d->device ? " | stylus: " : "",
	         d->device ? d->device_line : "");
	SDL_SetWindowTitle(d->window, d->title);
}

/* Everything of a frame but the view. */
static void fill_frame(demo *d, rd_frame *out)
{
	rd_frame f = {.snapshot = d->snapshot, .style = d->style, .floor_grid = d->floor_grid};
	f.background[0] = 0.16f, f.background[1] = 0.17f, f.background[2] = 0.19f;
	cam_eye(&d->camera, f.view.eye);
	memcpy(f.view.target, d->camera.target, sizeof f.view.target);
	f.view.up[1] = 1.0f;
	f.view.fov_degrees = d->camera.fov_degrees;
	demo_window_size(d, &f.view.width, &f.view.height);
	if (d->device) {
		/* where the stylus's pointer stopped at a surface, the cone along the stylus */
		const dt_status *ds = &d->device_status;
		f.pointer.visible = ds->pointer.valid;
		memcpy(f.pointer.position, ds->output.drawn, sizeof f.pointer.position);
		for (int k = 0; k < 3; k++)
			f.pointer.direction[k] = -ds->pointer.direction[k];
		f.pointer.radius = ds->sphere_radius;
		f.pointer.hover_vertex = ds->output.hover;
	} else {
		f.pointer.visible = true;
		memcpy(f.pointer.position, d->pointer, sizeof f.pointer.position);
		float dir[3];
		forward(&d->camera, dir);
		for (int k = 0; k < 3; k++)
			f.pointer.direction[k] = -dir[k];
		f.pointer.radius = PICK_PIXELS * pixel_size(d, d->camera.distance);
		f.pointer.hover_vertex = d->hover;
	}
	f.pointer.length = d->pointer_length;
	f.pointer.grabbed_vertex = d->snapshot->grabbed_vertex;
	/* issue 7: the GPU integrator left this state in a buffer of its own */
	f.cloth_buffer = d->snapshot->gpu_draw.buffer;
	f.cloth_fence = d->snapshot->gpu_draw.fence;
	*out = f;
}

/* The headset's eye, scaled into the whole window. */
static void draw_mirror(demo *d)
{
	int w, h;
	demo_window_size(d, &w, &h);
	glBindFramebuffer(GL_READ_FRAMEBUFFER, d->mirror);
	glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
	glDisable(GL_SCISSOR_TEST);
	glClearColor(0.0f, 0.0f, 0.0f, 1.0f);
	glClear(GL_COLOR_BUFFER_BIT);
	/* letterboxed: the eye's aspect kept */
	float s = fminf((float)w / (float)d->mirror_width, (float)h / (float)d->mirror_height);
	int mw = (int)((float)d->mirror_width * s), mh = (int)((float)d->mirror_height * s);
	int x = (w - mw) / 2, y = (h - mh) / 2;
	glBlitFramebuffer(0, 0, d->mirror_width, d->mirror_height, x, y, x + mw, y + mh, GL_COLOR_BUFFER_BIT, GL_LINEAR);
	glBindFramebuffer(GL_FRAMEBUFFER, 0);
	glViewport(0, 0, w, h);
}

static void draw(demo *d)
{
	if (d->mirror) {
		draw_mirror(d);
		return;
	}
	rd_frame f;
	fill_frame(d, &f);
	glViewport(0, 0, f.view.width, f.view.height);
	rd_draw(d->renderer, &f);
}

rd_renderer *demo_renderer(demo *d) { return d->renderer; }

void demo_eye_frame(demo *d, rd_frame *frame)
{
	latest(d);
	fill_frame(d, frame);
}

void demo_set_mirror(demo *d, unsigned framebuffer, int width, int height)
{
	bool valid = framebuffer != 0 && width > 0 && height > 0;
	d->mirror = valid ? framebuffer : 0;
	d->mirror_width = valid ? width : 0, d->mirror_height = valid ? height : 0;
}

/* Builds the panel for this frame and applies what the user changed in it; false when
 * the user quit through it. */
static bool build_panel(demo *d, bool apply)
{
	panel_begin_frame(d->panel);
	panel_model m;
	demo_panel_model(d, &m);
	panel_build(d->panel, &m);
	d->panel_frames++;
	return !apply || demo_apply_panel(d, &m);
}

/* The events that came since the last frame, into the message line and onto stderr. */
static void take_events(demo *d)
{
	if (d->mouse && !d->said_record && dev_record_error(d->mouse)[0]) {
		ev_post(EV_ERROR, d->snapshot->time, NULL, "%s", dev_record_error(d->mouse));
		d->said_record = true;
	}
	ev_event batch[16];
	int n;
	do {
		n = ev_drain(batch, 16, NULL);
		for (int i = 0; i < n; i++) {
			ev_line_add(&d->messages, &batch[i]);
			ev_printer_add(&d->echo, &batch[i]);
		}
	} while (n == 16);
	ev_line_expire(&d->messages, ev_now_ns());
}

const ev_line *demo_messages(demo *d)
{
	take_events(d);
	return &d->messages;
}

void demo_draw(demo *d)
{
	latest(d);
	take_events(d);
	/* ImGui sizes an auto-fitting window (the heads-up line) in its first frame and shows
	 * it from the second: a first picture needs a frame before it */
	int passes = d->panel && d->panel_frames == 0 ? 2 : 1;
	for (int i = 0; i < passes; i++) {
		if (d->panel)
			build_panel(d, false); /* nothing can have been edited without events */
		draw(d);
		if (d->panel)
			panel_render(d->panel);
	}
}

/* Waits until the frame FRAMES_IN_FLIGHT swaps ago is drawn; before the frame reads its
 * input, so that what it shows is as fresh as the queue allows. */
static void wait_frame_slot(demo *d)
{
	GLsync *f = &d->frame_fences[d->frame_fence_next];
	if (!*f)
		return;
	GLenum r = glClientWaitSync(*f, GL_SYNC_FLUSH_COMMANDS_BIT, FRAME_FENCE_TIMEOUT_NS);
	if (r == GL_TIMEOUT_EXPIRED || r == GL_WAIT_FAILED)
		fprintf(stderr, "tela: a frame's fence %s; not waiting for it\n",
		        r == GL_WAIT_FAILED ? "failed" : "was not reached in time");
	glDeleteSync(*f);
	*f = NULL;
}

static void end_frame_slot(demo *d)
{
	d->frame_fences[d->frame_fence_next] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
	d->frame_fence_next = (d->frame_fence_next + 1) % FRAMES_IN_FLIGHT;
}

bool demo_frame(demo *d)
{
	if (!d->sim)
		return false; /* a scene switch failed and the old scene could not restart */
	wait_frame_slot(d);
	uint64_t t = now_ns();
	float dt = (float)(t - d->last_frame_ns) * 1e-9f;
	d->last_frame_ns = t;
	d->fps_frames++;
	if (t - d->fps_since_ns >= 500000000u) {
		d->render_fps = (double)d->fps_frames * 1e9 / (double)(t - d->fps_since_ns);
		d->fps_frames = 0;
		d->fps_since_ns = t;
	}
	if (!handle_events(d))
		return false;
	latest(d);
	take_events(d);
	if (d->device) {
		/* the device thread feeds the simulation itself; it needs only what the pointer
		 * meets, and the display its state */
		dt_set_scene(d->device, d->snapshot);
		refresh_device(d);
		follow_camera_station(d);
		d->hover = d->device_status.output.hover;
	} else {
		if (d->grabbed < 0 && !d->scripted) {
			/* between grabs the pointer rests on the plane through the camera's target */
			d->depth = d->camera.distance;
			d->hover = cursor_over_panel(d) ? -1 : pick(d, NULL);
		} else {
			d->hover = -1;
		}
		place_pointer(d, dt);
		feed_mouse(d);
	}
	if (d->panel && !build_panel(d, true)) {
		panel_render(d->panel); /* ImGui wants every frame it began ended */
		return false;
	}
	draw(d);
	if (d->panel)
		panel_render(d->panel);
	if (d->screenshot_requested) {
		d->screenshot_requested = false;
		char path[64];
		next_capture_path(path, sizeof path, "tela-screenshot-", &d->screenshot_index);
		int rc = demo_screenshot(d, path);
		if (rc)
			ev_post(EV_ERROR, d->snapshot->time, NULL, "screenshot %s failed: %s", path, strerror(rc));
		else
			ev_post(EV_INFO, d->snapshot->time, NULL, "saved %s", path);
	}
	if (d->recording) {
		char path[64];
		snprintf(path, sizeof path, "tela-frames/frame%06d.png", d->record_index++);
		int rc = demo_screenshot(d, path);
		if (rc != 0) {
			ev_post(EV_ERROR, d->snapshot->time, "frames", "recording frames stopped: %s: %s", path, strerror(rc));
			d->recording = false;
		}
	}
	if (d->frames++ % 15 == 0)
		update_title(d);
	SDL_GL_SwapWindow(d->window);
	end_frame_slot(d);
	return true;
}

int demo_screenshot(demo *d, const char *path)
{
	int w, h;
	demo_window_size(d, &w, &h);
	uint8_t *rgba = malloc((size_t)w * (size_t)h * 4);
	if (!rgba)
		return ENOMEM;
	int rc = rd_read_rgba(w, h, rgba) ? png_write_rgba(path, w, h, rgba) : EIO;
	free(rgba);
	return rc;
}

st_thread *demo_sim(demo *d) { return d->sim; }
const st_snapshot *demo_snapshot(demo *d)
{
	latest(d);
	return d->snapshot;
}
const st_snapshot *demo_drawn_snapshot(const demo *d) { return d->snapshot; }
cam_orbit *demo_camera(demo *d) { return &d->camera; }
void demo_fit_view(demo *d)
{
	latest(d);
	home_view(d);
}
panel *demo_panel(demo *d) { return d->panel; }
int demo_gl_errors(const demo *d) { return d->gl_errors_before + rd_gl_error_count(d->renderer); }
