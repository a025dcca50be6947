#include "demo_gpu.h"

#include <stdio.h>
#include <string.h>

static bool gpu_begin(void *user, char *message, int message_size)
{
	demo_gpu *g = user;
	if (!g->context) {
		snprintf(message, (size_t)message_size, "%s", g->why);
		return false;
	}
	if (SDL_GL_MakeCurrent(g->surface, g->context) != 0) {
		snprintf(message, (size_t)message_size, "the simulation thread's GL context: %s", SDL_GetError());
		SDL_TLSCleanup(); /* the error SDL kept for this thread */
		return false;
	}
	g->backend = gpu_backend_create(message, message_size);
	if (!g->backend) {
		SDL_GL_MakeCurrent(g->surface, NULL);
		SDL_TLSCleanup();
		return false;
	}
	return true;
}

static sim_result gpu_step(void *user, sim_world *world, float dt)
{
	demo_gpu *g = user;
	return gpu_backend_step(g->backend, world, dt);
}

static void gpu_end(void *user)
{
	demo_gpu *g = user;
	gpu_backend_destroy(&g->backend);
	SDL_GL_MakeCurrent(g->surface, NULL);
	/* SDL keeps the current window and context per thread; it frees that for its own
	 * threads only, and this one is the simulation thread's pthread */
	SDL_TLSCleanup();
}

void demo_gpu_init(demo_gpu *g, SDL_Window *window, SDL_GLContext window_context)
{
	memset(g, 0, sizeof *g);
	g->stepper = (st_stepper){.name = "GPU", .user = g, .begin = gpu_begin, .step = gpu_step, .end = gpu_end};
	/* made here, on the main thread: SDL windows belong to it, and SDL shares with the
	 * context current on the calling thread; creating a context makes it current, so the
	 * window's is made current again */
	g->surface = SDL_CreateWindow("tela GPU integrator", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED, 1, 1,
	                              SDL_WINDOW_OPENGL | SDL_WINDOW_HIDDEN);
	if (!g->surface) {
		snprintf(g->why, sizeof g->why, "no surface for a second OpenGL context: %s", SDL_GetError());
		return;
	}
	SDL_GL_SetAttribute(SDL_GL_SHARE_WITH_CURRENT_CONTEXT, 1);
	g->context = SDL_GL_CreateContext(g->surface);
	SDL_GL_SetAttribute(SDL_GL_SHARE_WITH_CURRENT_CONTEXT, 0);
	if (!g->context)
		snprintf(g->why, sizeof g->why, "no second OpenGL context: %s", SDL_GetError());
	SDL_GL_MakeCurrent(window, window_context);
}

void demo_gpu_fini(demo_gpu *g)
{
	if (g->context)
		SDL_GL_DeleteContext(g->context);
	if (g->surface)
		SDL_DestroyWindow(g->surface);
	g->context = NULL;
	g->surface = NULL;
}
