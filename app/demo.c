/* The interactive demo's main thread: window events, camera, the mouse pointer and the
 * frame.  The simulation never waits for anything here: it reads the pointer before
 * each of its steps and publishes its state after, and this thread draws whatever state
 * is newest when a frame starts. */
#define _POSIX_C_SOURCE 200809L
#include "demo.h"

#include "png_io.h"

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

struct demo {
	demo_options options;
	SDL_Window *window;
	SDL_GLContext gl;
	scn_scene *scene;
	st_thread *sim;
	rd_renderer *renderer;
	const st_layout *layout;
	const st_snapshot *snapshot;
	cam_orbit camera;
	rd_style style;
	bool floor_grid;
	/* the pointer */
	float cursor[2];
	float pointer[3], pointer_velocity[3];
	float depth;        /* of the pointer plane, along the view direction, m */
	bool scripted;      /* demo_set_pointer took over from the cursor */
	int hover;
	int grabbed;
	/* mouse drags that are not grabs */
	bool orbiting, panning;
	uint64_t last_frame_ns;
	/* capture */
	bool recording, screenshot_requested;
	int record_index, screenshot_index;
	int frames;
	char title[256];
};

demo_options demo_options_default(void)
{
	return (demo_options){.width = 1280, .height = 800, .rate_scale = 1.0, .vsync = true};
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
	if (d->options.offscreen && !getenv("SDL_VIDEODRIVER"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	if (SDL_Init(SDL_INIT_VIDEO) != 0) {
		fail(error, error_size, "cannot open a display: %s", SDL_GetError());
		*exit_code = 4;
		return false;
	}
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 4);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, SDL_GL_CONTEXT_DEBUG_FLAG);
	SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
	SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
	Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | (d->options.offscreen ? SDL_WINDOW_HIDDEN : 0);
	d->window = SDL_CreateWindow("tela", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, d->options.width,
	                             d->options.height, flags);
	if (!d->window) {
		fail(error, error_size, "cannot open a window: %s", SDL_GetError());
		*exit_code = 4;
		return false;
	}
	d->gl = SDL_GL_CreateContext(d->window);
	if (!d->gl) {
		fail(error, error_size, "no OpenGL 4.3 core context: %s", SDL_GetError());
		*exit_code = 4;
		return false;
	}
	SDL_GL_SetSwapInterval(d->options.vsync ? 1 : 0);
	/* Debian's GLEW is a GLX build: under EGL (the offscreen driver) it reports "no GLX
	 * display" after loading every core entry point, so check the version instead. */
	glewExperimental = GL_TRUE;
	GLenum glew = glewInit();
	if ((glew != GLEW_OK && glew != GLEW_ERROR_NO_GLX_DISPLAY) || !GLEW_VERSION_4_3) {
		fail(error, error_size, "OpenGL 4.3 is not available (%s)", (const char *)glGetString(GL_VERSION));
		*exit_code = 4;
		return false;
	}
	while (glGetError() != GL_NO_ERROR) {
	}
	return true;
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
	d->hover = d->grabbed = -1;
	d->floor_grid = true;
	d->style = RD_SOLID;
	scn_error err = {0};
	if (scn_load(options->scene, &d->scene, &err) != SCN_OK) {
		fail(error, error_size, "%s", err.message);
		*exit_code = 3;
		demo_destroy(&d);
		return NULL;
	}
	if (!open_window(d, error, error_size, exit_code)) {
		demo_destroy(&d);
		return NULL;
	}
	st_options so = st_options_default();
	so.start_paused = options->start_paused;
	so.rate_scale = options->rate_scale;
	d->sim = st_start(d->scene, &so, &err);
	if (!d->sim) {
		fail(error, error_size, "%s", err.message);
		*exit_code = 3;
		demo_destroy(&d);
		return NULL;
	}
	d->layout = st_get_layout(d->sim);
	char log[1024] = "";
	d->renderer = rd_create(d->layout, log, sizeof log);
	if (!d->renderer) {
		fail(error, error_size, "the renderer could not start: %s", log);
		*exit_code = 4;
		demo_destroy(&d);
		return NULL;
	}
	cam_init(&d->camera, d->layout->camera_position, d->layout->camera_target, d->layout->camera_fov);
	d->depth = d->camera.distance;
	d->snapshot = st_latest(d->sim);
	d->last_frame_ns = now_ns();
	return d;
}

void demo_destroy(demo **dp)
{
	demo *d = dp ? *dp : NULL;
	if (!d)
		return;
	st_stop(&d->sim); /* before the renderer: nothing reads its snapshots after this */
	rd_destroy(&d->renderer);
	if (d->gl)
		SDL_GL_DeleteContext(d->gl);
	if (d->window)
		SDL_DestroyWindow(d->window);
	if (SDL_WasInit(SDL_INIT_VIDEO))
		SDL_Quit();
	scn_scene_free(&d->scene);
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

void demo_project(const demo *d, const float point[3], float *x, float *y)
{
	int w, h;
	demo_window_size(d, &w, &h);
	float eye[3], f[3], right[3], up[3];
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
	float v[3] = {point[0] - eye[0], point[1] - eye[1], point[2] - eye[2]};
	float z = v[0] * f[0] + v[1] * f[1] + v[2] * f[2];
	float t = tanf(0.5f * d->camera.fov_degrees * 3.14159265f / 180.0f);
	float sx = (v[0] * right[0] + v[1] * right[1] + v[2] * right[2]) / (z * t * ((float)w / (float)h));
	float sy = (v[0] * up[0] + v[1] * up[1] + v[2] * up[2]) / (z * t);
	*x = (sx + 1.0f) * 0.5f * (float)w;
	*y = (1.0f - sy) * 0.5f * (float)h;
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
	int v = cam_pick_vertex(o, dir, (const float(*)[4])s->positions, s->vertex_count,
	                        PICK_PIXELS * pixel_size(d, d->camera.distance), &t);
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

static void set_integrator(demo *d, int index)
{
	if (index < 0 || index >= SIM_INTEGRATOR_COUNT)
		return;
	st_command c = {.kind = ST_SET_DEF, .def = d->snapshot->def};
	c.def.integrator = (sim_integrator)index;
	st_send(d->sim, &c);
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
	case SDLK_r:
		release(d);
		send(d, ST_RESET, -1);
		break;
	case SDLK_w: d->style = (rd_style)((d->style + 1) % RD_STYLE_COUNT); break;
	case SDLK_g: d->floor_grid = !d->floor_grid; break;
	case SDLK_HOME:
	case SDLK_c: cam_reset(&d->camera); break;
	case SDLK_p:
	case SDLK_F12: d->screenshot_requested = true; break; /* after the next draw */
	case SDLK_v:
		d->recording = !d->recording;
		if (d->recording && mkdir("tela-frames", 0777) != 0 && errno != EEXIST) {
			fprintf(stderr, "tela: tela-frames: %s\n", strerror(errno));
			d->recording = false;
		}
		fprintf(stderr, "tela: %s\n", d->recording ? "recording frames into tela-frames/" : "recording stopped");
		break;
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
	bool go_on = true;
	while (SDL_PollEvent(&e)) {
		switch (e.type) {
		case SDL_QUIT: go_on = false; break;
		case SDL_KEYDOWN: go_on &= key(d, e.key.keysym.sym); break;
		case SDL_MOUSEMOTION: {
			float dx = (float)e.motion.xrel, dy = (float)e.motion.yrel;
			d->cursor[0] = (float)e.motion.x, d->cursor[1] = (float)e.motion.y;
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

static void update_title(demo *d)
{
	const st_snapshot *s = d->snapshot;
	char grab_text[96] = "";
	if (s->grabbed_vertex >= 0)
		snprintf(grab_text, sizeof grab_text, " | grab v%d %.2f N", s->grabbed_vertex,
		         (double)sqrtf(s->grab_force[0] * s->grab_force[0] + s->grab_force[1] * s->grab_force[1] +
		                       s->grab_force[2] * s->grab_force[2]));
	snprintf(d->title, sizeof d->title, "tela %s | %s%s | sim %.0f/%.0f Hz%s | step p50 %.0f p99 %.0f us | %d vertices | contacts %d collisions %d%s",
	         d->layout->scene, sim_integrator_name(s->def.integrator), s->paused ? " (paused)" : "", s->achieved_hz,
	         s->target_hz, s->slow_motion ? " SLOW MOTION" : "", s->step_p50_us, s->step_p99_us, s->vertex_count,
	         s->stats.contacts, s->stats.collisions, grab_text);
	SDL_SetWindowTitle(d->window, d->title);
}

static void draw(demo *d)
{
	int w, h;
	demo_window_size(d, &w, &h);
	rd_frame f = {.snapshot = d->snapshot, .style = d->style, .floor_grid = d->floor_grid};
	f.background[0] = 0.16f, f.background[1] = 0.17f, f.background[2] = 0.19f;
	cam_eye(&d->camera, f.view.eye);
	memcpy(f.view.target, d->camera.target, sizeof f.view.target);
	f.view.up[1] = 1.0f;
	f.view.fov_degrees = d->camera.fov_degrees;
	f.view.width = w, f.view.height = h;
	f.pointer.visible = true;
	memcpy(f.pointer.position, d->pointer, sizeof f.pointer.position);
	float dir[3];
	forward(&d->camera, dir);
	for (int k = 0; k < 3; k++)
		f.pointer.direction[k] = -dir[k];
	f.pointer.radius = PICK_PIXELS * pixel_size(d, d->camera.distance);
	f.pointer.hover_vertex = d->hover;
	f.pointer.grabbed_vertex = d->snapshot->grabbed_vertex;
	glViewport(0, 0, w, h);
	rd_draw(d->renderer, &f);
}

void demo_draw(demo *d)
{
	d->snapshot = st_latest(d->sim);
	draw(d);
}

bool demo_frame(demo *d)
{
	uint64_t t = now_ns();
	float dt = (float)(t - d->last_frame_ns) * 1e-9f;
	d->last_frame_ns = t;
	if (!handle_events(d))
		return false;
	d->snapshot = st_latest(d->sim);
	if (d->grabbed < 0 && !d->scripted) {
		/* between grabs the pointer rests on the plane through the camera's target */
		d->depth = d->camera.distance;
		d->hover = pick(d, NULL);
	} else {
		d->hover = -1;
	}
	place_pointer(d, dt);
	st_set_pointer(d->sim, d->pointer, d->pointer_velocity);
	draw(d);
	if (d->screenshot_requested) {
		d->screenshot_requested = false;
		char path[64];
		next_capture_path(path, sizeof path, "tela-screenshot-", &d->screenshot_index);
		int rc = demo_screenshot(d, path);
		if (rc)
			fprintf(stderr, "tela: screenshot %s failed: %s\n", path, strerror(rc));
		else
			fprintf(stderr, "tela: saved %s\n", path);
	}
	if (d->recording) {
		char path[64];
		snprintf(path, sizeof path, "tela-frames/frame%06d.png", d->record_index++);
		if (demo_screenshot(d, path) != 0)
			d->recording = false;
	}
	if (d->frames++ % 15 == 0)
		update_title(d);
	SDL_GL_SwapWindow(d->window);
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
const st_snapshot *demo_snapshot(demo *d) { return d->snapshot = st_latest(d->sim); }
cam_orbit *demo_camera(demo *d) { return &d->camera; }
int demo_gl_errors(const demo *d) { return rd_gl_error_count(d->renderer); }
