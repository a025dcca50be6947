#include "gpu_session.h"

#include <GL/glew.h>

#include <stdio.h>
#include <string.h>

bool gpu_session_open(gpu_session *s, char *error, int error_size)
{
	memset(s, 0, sizeof *s);
	if (!gl_window_open(&s->window, true, 16, 16, false, error, error_size))
		return false;
	const char *r = (const char *)glGetString(GL_RENDERER);
	snprintf(s->renderer, sizeof s->renderer, "%s", r ? r : "unknown renderer");
	s->backend = gpu_backend_create(error, error_size);
	if (!s->backend) {
		gl_window_close(&s->window);
		return false;
	}
	return true;
}

void gpu_session_close(gpu_session *s)
{
	gpu_backend_destroy(&s->backend);
	gl_window_close(&s->window);
}
