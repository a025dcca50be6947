/* GLSL programs from source (gl_program.h). */
#include "gl_program.h"

#include <GL/glew.h>

#include <stdio.h>

static GLuint compile(const gl_stage *s, char *error, int error_size)
{
	GLuint shader = glCreateShader(s->type);
	if (!shader) {
		snprintf(error, (size_t)error_size, "compiling %s: glCreateShader failed", s->name);
		return 0;
	}
	glShaderSource(shader, 1, &s->source, NULL);
	glCompileShader(shader);
	GLint ok = GL_FALSE;
	glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
	if (!ok) {
		char log[2048] = "";
		glGetShaderInfoLog(shader, (GLsizei)sizeof log, NULL, log);
		snprintf(error, (size_t)error_size, "compiling %s: %s", s->name, log);
		glDeleteShader(shader);
		return 0;
	}
	return shader;
}

unsigned gl_program_build(const char *name, const gl_stage *stages, int count, char *error, int error_size)
{
	enum { MAX_STAGES = 6 };
	GLuint shaders[MAX_STAGES];
	if (count < 1 || count > MAX_STAGES) {
		snprintf(error, (size_t)error_size, "linking %s: %d stages", name, count);
		return 0;
	}
	for (int i = 0; i < count; i++) {
		shaders[i] = compile(&stages[i], error, error_size);
		if (!shaders[i]) {
			while (i-- > 0)
				glDeleteShader(shaders[i]);
			return 0;
		}
	}
	GLuint program = glCreateProgram();
	for (int i = 0; i < count; i++)
		glAttachShader(program, shaders[i]);
	glLinkProgram(program);
	/* the program keeps the compiled stages; the shader objects are no longer needed */
	for (int i = 0; i < count; i++) {
		glDetachShader(program, shaders[i]);
		glDeleteShader(shaders[i]);
	}
	GLint ok = GL_FALSE;
	glGetProgramiv(program, GL_LINK_STATUS, &ok);
	if (!ok) {
		char log[2048] = "";
		glGetProgramInfoLog(program, (GLsizei)sizeof log, NULL, log);
		snprintf(error, (size_t)error_size, "linking %s: %s", name, log);
		glDeleteProgram(program);
		return 0;
	}
	return program;
}
