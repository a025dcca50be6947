#define _POSIX_C_SOURCE 200809L
#include "gl_window.h"

#include <GL/glew.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool gl_window_open(gl_window *out, bool offscreen, int width, int height, bool vsync, char *error, int error_size)
{
	memset(out, 0, sizeof *out);
	if (offscreen && !getenv("SDL_VIDEODRIVER"))
		setenv("SDL_VIDEODRIVER", "offscreen", 1);
	if (SDL_Init(SDL_INIT_VIDEO) != 0) {
		snprintf(error, (size_t)error_size, "cannot open a display: %s", SDL_GetError());
		return false;
	}
	/* An extra reference to the GL library, never dropped: destroying the last window
	 * would otherwise unload Mesa, and LeakSanitizer cannot attribute what an unloaded
	 * library still held. */
	static bool library_held;
	if (!library_held && SDL_GL_LoadLibrary(NULL) == 0)
		library_held = true;
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 4);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 3);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, SDL_GL_CONTEXT_PROFILE_CORE);
	SDL_GL_SetAttribute(SDL_GL_CONTEXT_FLAGS, SDL_GL_CONTEXT_DEBUG_FLAG);
	SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1);
	SDL_GL_SetAttribute(SDL_GL_DEPTH_SIZE, 24);
	Uint32 flags = SDL_WINDOW_OPENGL | SDL_WINDOW_RESIZABLE | (offscreen ? SDL_WINDOW_HIDDEN : 0);
	out->window =
	    SDL_CreateWindow("tela", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, width, height, flags);
	if (!out->window) {
		snprintf(error, (size_t)error_size, "cannot open a window: %s", SDL_GetError());
		gl_window_close(out);
		return false;
	}
	out->context = SDL_GL_CreateContext(out->window);
	if (!out->context) {
		snprintf(error, (size_t)error_size, "no OpenGL 4.3 core context: %s", SDL_GetError());
		gl_window_close(out);
		return false;
	}
	SDL_GL_SetSwapInterval(vsync ? 1 : 0);
	/* Debian's GLEW is a GLX build: under EGL (the offscreen driver) it reports "no GLX
	 * display" after loading every core entry point, so check the version instead. */
	glewExperimental = GL_TRUE;
	GLenum glew = glewInit();
	if ((glew != GLEW_OK && glew != GLEW_ERROR_NO_GLX_DISPLAY) || !GLEW_VERSION_4_3) {
		const char *version = (const char *)glGetString(GL_VERSION);
		snprintf(error, (size_t)error_size, "OpenGL 4.3 is not available (%s)", version ? version : "no version");
		gl_window_close(out);
		return false;
	}
	while (glGetError() != GL_NO_ERROR) {
	}
	return true;
}

void gl_window_close(gl_window *w)
{
	if (w->context)
		SDL_GL_DeleteContext(w->context);
	if (w->window)
		SDL_DestroyWindow(w->window);
	/* No SDL_Quit, for the reason gl_window_open holds the GL library: the process exit
	 * frees what SDL and Mesa still hold. */
	memset(w, 0, sizeof *w);
}
