/* Compiling GLSL stages and linking them into a program, with the driver's log in the
 * message: the renderer's shaders and the GPU integrator's compute kernels alike.  The
 * caller's GL context must be current. */
#ifndef TELA_GL_PROGRAM_H
#define TELA_GL_PROGRAM_H

typedef struct gl_stage {
	unsigned type;      /* GL_VERTEX_SHADER, GL_FRAGMENT_SHADER, GL_COMPUTE_SHADER, ... */
	const char *source; /* NUL-terminated GLSL */
	const char *name;   /* for messages: "mesh.vert" */
} gl_stage;

/* The linked program, or 0 with "compiling STAGE-NAME: LOG" or "linking NAME: LOG" in
 * `error` (nothing of it left behind in GL). */
unsigned gl_program_build(const char *name, const gl_stage *stages, int count, char *error, int error_size);

#endif
