#ifndef GLEW_NO_GLU
#define GLEW_NO_GLU /* app/CMakeLists.txt defines it too */
#endif
#include <GL/glew.h>

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

static void delete_fence(void **fence)
{
	if (*fence)
		glDeleteSync((GLsync)*fence);
	*fence = NULL;
}

/* On the simulation thread, after a GPU step, into slot `slot`, which the window does not
 * hold now (sim_thread.h).  It may still have draws from it queued, though: its fence
 * drawn[slot] (set before it let go of the slot, so visible here) makes the GL server
 * hold our copies back until those draws are done.  The CPU waits for nothing. */
static bool gpu_publish(void *user, const sim_world *world, int slot, st_gpu_draw *out)
{
	demo_gpu *g = user;
	int n = sim_world_vertex_count(world);
	if (slot < 0 || slot >= ST_SLOTS || n <= 0)
		return false;
	if (g->drawn[slot]) {
		glWaitSync((GLsync)g->drawn[slot], 0, GL_TIMEOUT_IGNORED);
		delete_fence(&g->drawn[slot]);
	}
	/* the window has waited on it, or never will: a deleted fence another context still
	 * waits on lives until that wait is over */
	delete_fence(&g->written[slot]);
	if (g->draw_vertices[slot] != n) {
		GLsizeiptr bytes = (GLsizeiptr)sizeof(vec4) * n;
		if (!g->draw_buffer[slot])
			glGenBuffers(1, &g->draw_buffer[slot]);
		glBindBuffer(GL_COPY_WRITE_BUFFER, g->draw_buffer[slot]);
		glBufferData(GL_COPY_WRITE_BUFFER, 2 * bytes, NULL, GL_DYNAMIC_COPY);
		glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
		g->draw_vertices[slot] = n;
	}
	if (!gpu_backend_fill_draw_buffer(g->backend, world, g->draw_buffer[slot]))
		return false;
	GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
	/* another context's wait on an unflushed fence may never end */
	glFlush();
	if (!fence || glGetError() != GL_NO_ERROR) {
		if (fence)
			glDeleteSync(fence);
		return false;
	}
	g->written[slot] = fence;
	*out = (st_gpu_draw){.slot = slot, .buffer = g->draw_buffer[slot], .fence = fence};
	return true;
}

void demo_gpu_drawn(demo_gpu *g, const st_gpu_draw *draw)
{
	if (!draw || !draw->buffer || draw->slot < 0 || draw->slot >= ST_SLOTS)
		return;
	GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
	glFlush(); /* the simulation thread's context waits on it */
	/* an earlier frame's fence of the same slot: the new one covers it */
	delete_fence(&g->drawn[draw->slot]);
	g->drawn[draw->slot] = fence;
}

static void gpu_end(void *user)
{
	demo_gpu *g = user;
	/* The window holds no snapshot of this thread any more (st_stop joins us after it
	 * stopped reading), and its last fences were written before st_stop. */
	for (int k = 0; k < ST_SLOTS; k++) {
		delete_fence(&g->drawn[k]);
		delete_fence(&g->written[k]);
		if (g->draw_buffer[k])
			glDeleteBuffers(1, &g->draw_buffer[k]);
		g->draw_buffer[k] = 0;
		g->draw_vertices[k] = 0;
	}
	gpu_backend_destroy(&g->backend);
	SDL_GL_MakeCurrent(g->surface, NULL);
	/* SDL keeps the current window and context per thread; it frees that for its own
	 * threads only, and this one is the simulation thread's pthread */
	SDL_TLSCleanup();
}

void demo_gpu_init(demo_gpu *g, SDL_Window *window, SDL_GLContext window_context)
{
	memset(g, 0, sizeof *g);
	g->stepper = (st_stepper){.name = "GPU", .user = g, .begin = gpu_begin, .step = gpu_step, .end = gpu_end,
	                        .publish = gpu_publish};
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
