/* Head-mounted viewing through OpenXR (issue 8): `tela --xr [SCENE]`.
 *
 * One OpenXR instance and session on the system's loader, with XR_KHR_opengl_enable on
 * Xlib/GLX: the demo's own window (an SDL2 X11 window with a GLX context) is the mirror
 * and its context renders both eyes with the demo's renderer into the runtime's
 * swapchains, at the runtime's predicted display times.  The controllers are a pose
 * source of the devices interface (a push source in the stage's frame): their grip pose
 * and select button go through the same tracker and stylus as a Polhemus's, and the
 * grabbing hand vibrates with the coupling force.  docs/vr.md. */
#ifndef TELA_XR_H
#define TELA_XR_H

#include <stdbool.h>

typedef struct xr_options {
	const char *scene;
	double seconds;          /* > 0: ask the runtime to end the session after this long */
	bool panel;              /* the panel over the mirror */
	bool paused;             /* the simulation starts paused */
	int width, height;       /* the mirror window */
	/* A tracked stylus instead of the controllers: its calibration maps the tracker
	 * into the stage, and the stage's mapping into the world follows. */
	const char *device, *calibration;
	const char *record;      /* the pointer's source's raw traffic (the controller's or the stylus's) */
	double gain;             /* 0: the stylus's default */
	double grab_radius;      /* m: a grab holds the patch within it; 0: one vertex */
	int hand;                /* the controller that grabs: 0 left, 1 right */
} xr_options;

/* Runs the session to its end; returns one of tela's exit codes (EXIT_TELA_XR when there
 * is no runtime or headset, with a message that says what is missing). */
int xr_run(const xr_options *options);

#endif
