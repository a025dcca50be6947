/* The demo's GPU integrator (issue 7): an st_stepper that steps the simulation thread's
 * world with the GPU backend, on a second GL context that shares the window's objects and
 * is current on the simulation thread only, over a hidden 1 x 1 window of its own (EGL
 * refuses one surface current in two threads).  The panel's "GPU integrator" switch
 * selects it (ST_SET_STEPPER).
 *
 * While it steps, every publication also leaves the cloth on the GPU for the window to
 * draw (st_stepper.publish): the final positions and their normals (the normals kernel)
 * copied into the draw buffer of the snapshot's slot, behind a fence.  The window says
 * when it is done with a slot's buffer (demo_gpu_drawn), so the simulation thread's
 * next copy into it waits (on the GL server) for those draws.  docs/gpu.md, "The demo
 * draws from the GPU", gives the reasoning. */
#ifndef TELA_DEMO_GPU_H
#define TELA_DEMO_GPU_H

#include "gpu_backend.h"
#include "sim_thread.h"

#include <SDL2/SDL.h>

typedef struct demo_gpu {
	SDL_Window *surface;   /* hidden, the simulation thread's drawable */
	SDL_GLContext context; /* shared with the window's; NULL when it could not be made */
	char why[160];         /* why there is no context */
	gpu_backend *backend;  /* the simulation thread's, between begin and end */
	st_stepper stepper;
	/* Per snapshot slot: the draw buffer (positions then normals, vec4 per vertex), the
	 * vertices it was sized for, the simulation thread's fence after its last copy into
	 * it, and the window's fence after its last draw from it.  drawn[k] is written by the
	 * window only while it holds slot k and read by the simulation thread only while it
	 * writes slot k; the triple buffer's exchange orders the two (sim_thread.h). */
	unsigned draw_buffer[ST_SLOTS];
	int draw_vertices[ST_SLOTS];
	void *written[ST_SLOTS];
	void *drawn[ST_SLOTS];
} demo_gpu;

/* On the main thread, with the window's context current (it stays current). */
void demo_gpu_init(demo_gpu *g, SDL_Window *window, SDL_GLContext window_context);
/* On the window's thread, before it lets go of a snapshot whose gpu_draw it may have
 * drawn (before the st_latest call after the one that returned it): fences everything
 * it queued so far, for the simulation thread to wait on before refilling that slot. */
void demo_gpu_drawn(demo_gpu *g, const st_gpu_draw *draw);

/* After the simulation thread stopped (its end released the backend); on the main
 * thread. */
void demo_gpu_fini(demo_gpu *g);

#endif
