/* The interactive demo: a window (or an offscreen surface), the renderer, the
 * simulation thread and the mouse pointer, wired together.  One demo_frame() call
 * handles the pending window events, updates the pointer and draws one frame; the
 * simulation runs on its own thread meanwhile. */
#ifndef TELA_DEMO_H
#define TELA_DEMO_H

#include "camera.h"
#include "panel.h"
#include "render.h"
#include "sim_thread.h"

#include <stdbool.h>

typedef struct demo_options {
	const char *scene;       /* built-in name, scene file or seed folder */
	bool offscreen;          /* SDL's offscreen video driver (no display needed) */
	int width, height;       /* window size, pixels */
	bool start_paused;
	double rate_scale;       /* simulation thread: 1 = real time, 0 = as fast as it can */
	bool vsync;
	bool panel;              /* the parameter panel and heads-up line (Dear ImGui); H and F1 hide them */
	/* A tracked stylus drives the pointer instead of the mouse (NULL: the mouse); it runs
	 * on a device thread of its own (device_thread.h), and the mouse keeps the camera. */
	const char *device;      /* dev_open's specification */
	const char *calibration; /* NULL: seed 002's mapping */
	const char *record;      /* records the device's raw traffic, or NULL */
	double gain;             /* the grab's displacement gain; 0: the stylus's default */
	double grab_radius;      /* m: a grab (mouse or stylus) holds the patch within it; 0: one vertex */
	/* The device's station that moves the camera (0: none; default 2): the view follows
	 * that sensor's calibrated pose relative to where it was first seen, on top of what
	 * the mouse does.  The stylus follows the first other station that reports. */
	int camera_station;
	/* Issue 8 (OpenXR): the device thread uses this open source (the session's controllers)
	 * instead of opening `device`, which then only names it; the caller closes it after
	 * demo_destroy.  And a calibration used instead of `calibration`'s file (the tracker
	 * or the controllers mapped into the world through the headset's stage). */
	struct dev_source *device_source;
	const struct trk_calibration *device_calibration;
	bool gpu;                /* issue 7: start with the GPU integrator (the panel's switch) */
} demo_options;

demo_options demo_options_default(void);

typedef struct demo demo;

/* Opens the window and the GL 4.3 context, reads the scene, starts the simulation
 * thread, the renderer and, with a device, the device thread.  NULL with a message in
 * `error` on failure; `exit_code` then says which of tela's exit codes fits (3 for a bad
 * scene file, device, calibration or recording path, 4 for no display or no OpenGL 4.3). */
demo *demo_create(const demo_options *options, char *error, int error_size, int *exit_code);
void demo_destroy(demo **d);

/* Handles pending events, moves the pointer, draws and presents one frame.  Returns
 * false once the user asked to quit. */
bool demo_frame(demo *d);

/* Draws the newest state into the back buffer without handling events or presenting
 * (for a screenshot of exactly that frame), with the panel if the demo has one. */
void demo_draw(demo *d);

/* Restarts the demo on another scene (a built-in name, a scene file or a seed folder) in
 * the same window: the simulation thread and the renderer start afresh.  On failure the
 * old scene keeps running (restarted) and `error` says why. */
bool demo_switch_scene(demo *d, const char *scene, char *error, int error_size);

/* The panel (NULL when the demo has none). */
panel *demo_panel(demo *d);
/* The model the demo hands the panel in a frame; demo_apply_panel turns the edits the
 * panel made in it into settings and simulation commands (ST_SET_DEF, ST_SET_MATERIAL,
 * play, step, reset, a scene switch), as every frame does after panel_build.  Tests edit
 * the model as the panel would.  False when it asks to quit. */
void demo_panel_model(demo *d, panel_model *model);
bool demo_apply_panel(demo *d, const panel_model *model);

/* For scripted use (the headless run and the tests). */
st_thread *demo_sim(demo *d);
const st_snapshot *demo_snapshot(demo *d);
/* The snapshot the last frame drew, without fetching a newer one (NULL before the first). */
const st_snapshot *demo_drawn_snapshot(const demo *d);
cam_orbit *demo_camera(demo *d);
/* Makes the home view (C) fit the scene as the newest state has it: the scene file's
 * direction of view, the cloth and the obstacles filling the part of the window beside
 * the panel.  A scene starts with it fitted to its first state. */
void demo_fit_view(demo *d);
void demo_window_size(const demo *d, int *width, int *height);
/* Pixel (origin top-left) where a world point appears. */
void demo_project(const demo *d, const float point[3], float *x, float *y);
/* Saves the last drawn frame as PNG; 0 or an errno-style code. */
int demo_screenshot(demo *d, const char *path);
/* Sets the pointer directly (scripted grabs); the next frame draws it there. */
void demo_set_pointer(demo *d, const float position[3]);
int demo_gl_errors(const demo *d);

/* The tracked stylus (false, and nothing written, without --device): its state as of
 * the last frame, and the line the heads-up line and the window title show for it. */
typedef struct dt_status dt_status;
bool demo_device_status(const demo *d, dt_status *status, char *line, int line_size);
/* The window title as last set (it is refreshed every 15 frames). */
const char *demo_title(const demo *d);
/* The message line (events.h) with the events that came since the last frame taken in:
 * what the next frame shows at the bottom of the view. */
const ev_line *demo_messages(demo *d);

/* ---- Head-mounted viewing (issue 8, app/xr.c) ------------------------------------------------ */

/* The renderer, and a frame of the newest state as the window would draw it (style,
 * floor grid, background and the pointer), for the caller to set its own view and
 * matrices and draw into its own framebuffer. */
rd_renderer *demo_renderer(demo *d);
void demo_eye_frame(demo *d, rd_frame *frame);
/* From now on the window shows this framebuffer's colour (width x height, scaled to the
 * window) under the panel, instead of its own camera's view: the headset's mirror.
 * 0 goes back to the camera. */
void demo_set_mirror(demo *d, unsigned framebuffer, int width, int height);

#endif
