/* An SDL window with an OpenGL 4.3 core context and GLEW loaded: the demo's window, or
 * a hidden offscreen one for pictures. */
#ifndef TELA_GL_WINDOW_H
#define TELA_GL_WINDOW_H

#include <SDL2/SDL.h>

#include <stdbool.h>

typedef struct gl_window {
	SDL_Window *window;
	SDL_GLContext context;
} gl_window;

/* offscreen: SDL's offscreen video driver (EGL; no display needed) unless the user chose
 * a driver.  Returns false with a message; *out is then closed already. */
bool gl_window_open(gl_window *out, bool offscreen, int width, int height, bool vsync, char *error, int error_size);
void gl_window_close(gl_window *w);

#endif
