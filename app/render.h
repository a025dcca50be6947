/* The OpenGL 4.3 core renderer of the demo: cloth drawn two-sided with normals
 * recomputed every frame and Blinn-Phong lighting, in the seed's three styles (solid,
 * wireframe, wireframe over solid); obstacles, a floor grid, and the pointer as a cone
 * with its bounding sphere.  It needs a current GL context and knows nothing of SDL or
 * threads: the caller hands it a layout once and a snapshot every frame. */
#ifndef TELA_RENDER_H
#define TELA_RENDER_H

#include "sim_thread.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum rd_style { RD_SOLID, RD_WIREFRAME, RD_SOLID_WIREFRAME, RD_STYLE_COUNT } rd_style;

typedef struct rd_view {
	float eye[3], target[3], up[3];
	float fov_degrees; /* vertical */
	int width, height; /* pixels */
} rd_view;

typedef struct rd_pointer {
	bool visible;
	float position[3];  /* the cone's tip */
	float direction[3]; /* unit, from the tip back along the cone */
	float radius;       /* the bounding sphere, m */
	float length;       /* the cone's length, m, sized to the scene (0: 8 cm); its base is a
	                     * quarter of that across, the vertex highlights scale with it */
	int hover_vertex;   /* -1: none; highlighted */
	int grabbed_vertex; /* -1: none */
} rd_pointer;

typedef struct rd_frame {
	const st_snapshot *snapshot;
	rd_view view;
	rd_style style;
	bool floor_grid;
	rd_pointer pointer;
	float background[3];
	/* A head-mounted eye (issue 8): these matrices (cglm's column-major order) are used
	 * instead of those `view` gives, for the headset's pose and its asymmetric field of
	 * view; `view` still gives the viewport size and the point the floor grid follows. */
	bool use_matrices;
	float view_matrix[16], projection_matrix[16];
	/* Issue 7: the snapshot's cloth as the GPU integrator left it (snapshot->gpu_draw):
	 * non-zero, a GL buffer of the current context's share group holding every vertex's
	 * position and then every vertex's normal (vec4 each); rd_draw makes the GL server
	 * wait for cloth_fence (a GLsync; no CPU stall) and sources the cloth's vertices from
	 * it instead of uploading snapshot->positions with normals computed on the CPU. */
	unsigned cloth_buffer;
	void *cloth_fence;
} rd_frame;

typedef struct rd_renderer rd_renderer;

/* Compiles the shaders and builds the static buffers for the layout.  NULL with a
 * message (the GL info log) in `error` on failure. */
rd_renderer *rd_create(const st_layout *layout, char *error, int error_size);
void rd_destroy(rd_renderer **renderer);

/* Draws one frame into the current framebuffer (viewport 0, 0, width, height). */
void rd_draw(rd_renderer *renderer, const rd_frame *frame);

/* The view and projection matrices rd_draw uses for `view` (cglm, column-major), so
 * that picking and projecting points agree with the image to the pixel.  The clip
 * planes are fixed: near 0.01 m, far 200 m. */
void rd_view_matrices(const rd_view *view, mat4 out_view, mat4 out_projection);

/* Reads the current framebuffer as RGBA8, top row first (for PNG files). */
bool rd_read_rgba(int width, int height, uint8_t *rgba);

/* The cloth's per-vertex normals as rd_draw computes them from a snapshot: the sum of the
 * incident triangles' unnormalised normals (e1 x e2, so area-weighted), in triangle
 * order, normalised; (0, 1, 0) where the sum vanishes or is not finite.  The GPU's
 * normals kernel (gpu_backend_normals) is checked against this. */
void rd_vertex_normals(const vec4 *positions, int vertex_count, const unsigned *triangles, int triangle_count,
                       vec3 *normals);
/* One pass of smoothing over each vertex's triangles: every triangle adds the sum of its
 * three vertices' normals to each of them, and the sums are normalised.  It removes the
 * zig-zag that folds one element wide draw along the alternating grid diagonals. */
void rd_smooth_normals(const unsigned *triangles, int triangle_count, const vec3 *normals, int vertex_count,
                       vec3 *smoothed);

/* Frames whose cloth rd_draw sourced from rd_frame.cloth_buffer, and frames it uploaded
 * from the snapshot, since rd_create. */
int64_t rd_cloth_buffer_frames(const rd_renderer *renderer);
int64_t rd_cloth_upload_frames(const rd_renderer *renderer);

/* Number of GL debug messages of high or medium severity since rd_create (the tests
 * require none). */
int rd_gl_error_count(const rd_renderer *renderer);

#endif
