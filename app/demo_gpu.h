/* The demo's GPU integrator (issue 7): an st_stepper that steps the simulation thread's
 * world with the GPU backend, on a second GL context that shares the window's objects and
 * is current on the simulation thread only, over a hidden 1 x 1 window of its own (EGL
 * refuses one surface current in two threads).  The panel's "GPU integrator" switch
 * selects it (ST_SET_STEPPER). */
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
} demo_gpu;

/* On the main thread, with the window's context current (it stays current). */
void demo_gpu_init(demo_gpu *g, SDL_Window *window, SDL_GLContext window_context);
/* After the simulation thread stopped (its end released the backend); on the main
 * thread. */
void demo_gpu_fini(demo_gpu *g);

#endif
