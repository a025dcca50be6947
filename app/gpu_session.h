/* A headless GPU integrator for `tela run` and `tela bench gpu`: a hidden offscreen
 * OpenGL 4.3 context (SDL's offscreen driver, EGL, as `tela run --screenshot` uses) made
 * current on the calling thread, and the backend on it. */
#ifndef TELA_GPU_SESSION_H
#define TELA_GPU_SESSION_H

#include "gl_window.h"
#include "gpu_backend.h"

typedef struct gpu_session {
	gl_window window;
	gpu_backend *backend;
	char renderer[128]; /* GL_RENDERER, for reports */
} gpu_session;

/* false, with the reason, when no 4.3 context can be had or the shaders do not build. */
bool gpu_session_open(gpu_session *s, char *error, int error_size);
void gpu_session_close(gpu_session *s);

#endif
