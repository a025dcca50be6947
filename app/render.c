/* The demo's OpenGL 4.3 core renderer (docs/rendering.md).
 *
 * Two programs draw everything: a lit one (shaders/mesh.*: Blinn-Phong, two-sided) for
 * the cloth, the obstacles, the pointer's cone and the vertex highlights, and an unlit
 * one (shaders/line.*) for the wireframe, the floor grid and the pointer's bounding
 * sphere.  Uniforms have fixed locations (layout(location = N) in the shaders), so there
 * are no look-ups and the C side and the GLSL side name them in one place each.
 *
 * The cloth's normals are recomputed on the CPU every frame from the snapshot: the
 * snapshot holds positions only, the cloth deforms every step, and a CPU pass over a
 * few thousand vertices costs less than the buffer upload it feeds.  When the GPU
 * integrator publishes the cloth in a buffer of its own with its normals beside it
 * (rd_frame.cloth_buffer, docs/gpu.md), the cloth is drawn straight from that instead,
 * through a second pair of vertex arrays whose attributes point into it.  Everything else
 * (obstacle meshes, the grid, the unit shapes) is built once in rd_create. */
#ifndef GLEW_NO_GLU
#define GLEW_NO_GLU /* app/CMakeLists.txt defines it too: the renderer needs no GLU */
#endif
#include <GL/glew.h>

#include "render.h"

#include "gl_program.h"

#include "shaders/shaders.h"

#include <cglm/cglm.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Uniform locations, as declared in the shaders. */
enum {
	LOC_MODEL = 0,
	LOC_VIEW = 1,
	LOC_PROJECTION = 2,
	LOC_NORMAL_MATRIX = 3, /* mesh */
	LOC_COLOR = 4,         /* mesh: vec3; line: vec4 */
	LOC_BACK_SHADE = 5,    /* mesh */
	LOC_FADE_CENTER = 5,   /* line */
	LOC_FADE_RANGE = 6,    /* line */
};

/* Clip planes, m.  The near plane is close because a user leans in to look at a fold;
 * a 24-bit depth buffer still resolves millimetres at a few metres. */
#define RD_NEAR 0.01f
#define RD_FAR 200.0f

#define PLANE_HALF 50.0f       /* the finite quad drawn for a plane obstacle, m */
#define GRID_SPACING 0.1f      /* m */
#define GRID_LINES 50          /* per side of the centre: the grid spans +-5 m */
#define GRID_MAJOR_EVERY 10    /* a brighter line every metre */
/* Fading, in m from the point under the view target: the dense minor lines go first,
 * before they crowd into moire, and the major ones are gone before the grid's edge. */
#define GRID_MINOR_FADE_START 1.0f
#define GRID_MINOR_FADE_END 3.0f
#define GRID_MAJOR_FADE_START 2.0f
#define GRID_MAJOR_FADE_END 4.9f
#define CONE_LENGTH 0.08f      /* the pointer, m */
#define CONE_RADIUS 0.02f
#define HIGHLIGHT_RADIUS 0.012f /* with a cone of CONE_LENGTH */
#define CIRCLE_SEGMENTS 64
#define SEEN_MAX 128

static const float HOVER_COLOR[3] = {1.0f, 0.85f, 0.1f};
static const float GRAB_COLOR[3] = {0.1f, 0.9f, 1.0f};
static const float CONE_COLOR[3] = {0.85f, 0.86f, 0.92f};

typedef struct rd_mesh {
	GLuint vao, vbo, ebo;
	GLsizei index_count;
} rd_mesh;

typedef struct rd_cloth {
	int first_vertex, vertex_count, triangle_count;
	unsigned *triangles; /* a copy: the layout need not outlive the renderer */
	float color[3];
	GLuint vbo, ebo_triangles, ebo_edges;
	GLuint vao_triangles, vao_edges;
	/* The same elements with the attributes in rd_frame.cloth_buffer (set per frame: the
	 * buffer changes with the slot the snapshot came in). */
	GLuint vao_gpu_triangles, vao_gpu_edges;
	GLsizei edge_index_count;
} rd_cloth;

typedef struct rd_obstacle {
	rd_mesh mesh;
	sim_shape shape;
	float color[3];
	vec3 position;
	versor orientation;
} rd_obstacle;

struct rd_renderer {
	GLuint mesh_program, line_program;
	rd_cloth *cloths;
	int cloth_count;
	rd_obstacle *obstacles;
	int obstacle_count;
	int plane; /* the first plane obstacle, which carries the grid; -1: none */
	rd_mesh sphere, cone;
	GLuint grid_vao, grid_vbo;
	GLint grid_minor_first, grid_major_first;
	GLsizei grid_minor_count, grid_major_count;
	GLuint circles_vao, circles_vbo;
	GLsizei circles_count;
	float *vertex_scratch; /* position and normal, 6 floats per vertex */
	vec3 *normal_scratch;
	int scratch_vertices;
	int64_t buffer_frames, upload_frames;
	int error_count;
	bool debug_callback;
	uint64_t seen[SEEN_MAX]; /* hashes of the debug messages already printed */
	int seen_count;
	bool seen_overflow;
};

static void set_error(char *error, int error_size, const char *format, ...)
{
	if (!error || error_size <= 0)
		return;
	va_list args;
	va_start(args, format);
	vsnprintf(error, (size_t)error_size, format, args);
	va_end(args);
}

/* ---- GL debug output ------------------------------------------------------------------ */

static const char *debug_type_name(GLenum type)
{
	switch (type) {
	case GL_DEBUG_TYPE_ERROR: return "error";
	case GL_DEBUG_TYPE_DEPRECATED_BEHAVIOR: return "deprecated";
	case GL_DEBUG_TYPE_UNDEFINED_BEHAVIOR: return "undefined behaviour";
	case GL_DEBUG_TYPE_PORTABILITY: return "portability";
	case GL_DEBUG_TYPE_PERFORMANCE: return "performance";
	default: return "other";
	}
}

static void GLAPIENTRY debug_callback(GLenum source, GLenum type, GLuint id, GLenum severity, GLsizei length,
                                      const GLchar *message, const void *user)
{
	rd_renderer *r = (rd_renderer *)(uintptr_t)user;
	if (!r || (severity != GL_DEBUG_SEVERITY_HIGH && severity != GL_DEBUG_SEVERITY_MEDIUM))
		return;
	/* Errors and undefined behaviour are bugs in the renderer; performance and
	 * portability remarks are printed but tolerated (llvmpipe makes some). */
	if (type == GL_DEBUG_TYPE_ERROR || type == GL_DEBUG_TYPE_UNDEFINED_BEHAVIOR)
		r->error_count++;
	/* A per-frame error would otherwise print sixty lines a second: each distinct
	 * message is printed once. */
	uint64_t hash = 1469598103934665603u ^ type;
	size_t n = length >= 0 ? (size_t)length : strlen(message);
	for (size_t i = 0; i < n; i++)
		hash = (hash ^ (unsigned char)message[i]) * 1099511628211u;
	for (int i = 0; i < r->seen_count; i++)
		if (r->seen[i] == hash)
			return;
	if (r->seen_count == SEEN_MAX) {
		if (!r->seen_overflow)
			fprintf(stderr, "tela: GL: further debug messages are not printed\n");
		r->seen_overflow = true;
		return;
	}
	r->seen[r->seen_count++] = hash;
	fprintf(stderr, "tela: GL %s (%s, id %u): %.*s\n", debug_type_name(type),
	        severity == GL_DEBUG_SEVERITY_HIGH ? "high" : "medium", id, (int)n, message);
}

/* ---- shaders -------------------------------------------------------------------------- */

static GLuint link_program(const char *vertex_source, const char *fragment_source, const char *name, char *error,
                           int error_size)
{
	char vert[64], frag[64];
	snprintf(vert, sizeof vert, "%s.vert", name);
	snprintf(frag, sizeof frag, "%s.frag", name);
	const gl_stage stages[2] = {{GL_VERTEX_SHADER, vertex_source, vert}, {GL_FRAGMENT_SHADER, fragment_source, frag}};
	return gl_program_build(name, stages, 2, error, error_size);
}

/* ---- geometry built once -------------------------------------------------------------- */

/* A growing triangle mesh: position and normal per vertex, 32-bit indices. */
typedef struct geo {
	float *v;
	unsigned *i;
	int vertex_count, vertex_capacity;
	int index_count, index_capacity;
	bool failed;
} geo;

static bool grow(void **array, int *capacity, int needed, size_t item)
{
	if (needed <= *capacity)
		return true;
	int capacity2 = *capacity ? *capacity : 64;
	while (capacity2 < needed) {
		if (capacity2 > INT32_MAX / 2)
			return false;
		capacity2 *= 2;
	}
	void *p = realloc(*array, (size_t)capacity2 * item);
	if (!p)
		return false;
	*array = p;
	*capacity = capacity2;
	return true;
}

static unsigned geo_vertex(geo *g, const vec3 p, const vec3 n)
{
	if (g->failed || !grow((void **)&g->v, &g->vertex_capacity, g->vertex_count + 1, 6 * sizeof(float))) {
		g->failed = true;
		return 0;
	}
	float *out = g->v + 6 * (size_t)g->vertex_count;
	memcpy(out, p, 3 * sizeof(float));
	memcpy(out + 3, n, 3 * sizeof(float));
	return (unsigned)g->vertex_count++;
}

/* Counter-clockwise seen from the side the normals point to (the front face). */
static void geo_triangle(geo *g, unsigned a, unsigned b, unsigned c)
{
	if (g->failed || !grow((void **)&g->i, &g->index_capacity, g->index_count + 3, sizeof(unsigned))) {
		g->failed = true;
		return;
	}
	g->i[g->index_count++] = a;
	g->i[g->index_count++] = b;
	g->i[g->index_count++] = c;
}

/* The rectangle center +- u +- v, facing u x v. */
static void geo_quad(geo *g, const vec3 center, const vec3 u, const vec3 v)
{
	vec3 n, p[4];
	glm_vec3_crossn((float *)u, (float *)v, n);
	for (int k = 0; k < 4; k++) {
		float su = (k == 1 || k == 2) ? 1.0f : -1.0f;
		float sv = k >= 2 ? 1.0f : -1.0f;
		for (int c = 0; c < 3; c++)
			p[k][c] = center[c] + su * u[c] + sv * v[c];
	}
	unsigned a = geo_vertex(g, p[0], n), b = geo_vertex(g, p[1], n);
	unsigned c = geo_vertex(g, p[2], n), d = geo_vertex(g, p[3], n);
	geo_triangle(g, a, b, c);
	geo_triangle(g, a, c, d);
}

/* A capsule about local y (a sphere when half_height is 0): two hemispheres of rings
 * from pole to equator, the upper one lifted by half_height and the lower one lowered;
 * the band between the two equators is the cylinder. */
static void geo_capsule(geo *g, float radius, float half_height, int slices, int rings_per_half)
{
	unsigned first = (unsigned)g->vertex_count;
	int rings = 0;
	for (int half = 0; half < 2; half++) {
		for (int k = 0; k <= rings_per_half; k++) {
			/* A sphere would get the equator twice with nothing between. */
			if (half == 1 && k == 0 && half_height == 0.0f)
				continue;
			float t = (float)k / (float)rings_per_half;
			float latitude = half == 0 ? GLM_PI_2f * (1.0f - t) : -GLM_PI_2f * t;
			float y_offset = half == 0 ? half_height : -half_height;
			for (int s = 0; s <= slices; s++) {
				float longitude = 2.0f * GLM_PIf * (float)s / (float)slices;
				vec3 n = {cosf(latitude) * cosf(longitude), sinf(latitude), cosf(latitude) * sinf(longitude)};
				vec3 p = {radius * n[0], radius * n[1] + y_offset, radius * n[2]};
				geo_vertex(g, p, n);
			}
			rings++;
		}
	}
	/* Seen from outside, longitude grows to the left (at +x it turns toward +z), so
	 * (upper s, upper s+1, lower s) turns counter-clockwise. */
	unsigned row = (unsigned)slices + 1;
	for (int k = 0; k + 1 < rings; k++)
		for (unsigned s = 0; s < (unsigned)slices; s++) {
			unsigned a = first + (unsigned)k * row + s, b = a + 1, c = a + row, d = c + 1;
			geo_triangle(g, a, b, c);
			geo_triangle(g, b, d, c);
		}
}

/* Tip at the origin, axis +z, base of radius 1 at z = 1. */
static void geo_cone(geo *g, int slices)
{
	vec3 base_normal = {0.0f, 0.0f, 1.0f}, base_center = {0.0f, 0.0f, 1.0f};
	unsigned center = geo_vertex(g, base_center, base_normal);
	for (int s = 0; s < slices; s++) {
		float a0 = 2.0f * GLM_PIf * (float)s / (float)slices;
		float a1 = 2.0f * GLM_PIf * (float)(s + 1) / (float)slices;
		float am = 0.5f * (a0 + a1);
		vec3 p0 = {cosf(a0), sinf(a0), 1.0f}, p1 = {cosf(a1), sinf(a1), 1.0f}, tip = {0.0f, 0.0f, 0.0f};
		/* The side's normal leans back toward the tip by 45 degrees (a unit cone). */
		vec3 n0 = {cosf(a0), sinf(a0), -1.0f}, n1 = {cosf(a1), sinf(a1), -1.0f}, nm = {cosf(am), sinf(am), -1.0f};
		glm_vec3_normalize(n0);
		glm_vec3_normalize(n1);
		glm_vec3_normalize(nm);
		unsigned t = geo_vertex(g, tip, nm);
		unsigned b0 = geo_vertex(g, p0, n0), b1 = geo_vertex(g, p1, n1);
		geo_triangle(g, t, b1, b0);
		unsigned c0 = geo_vertex(g, p0, base_normal), c1 = geo_vertex(g, p1, base_normal);
		geo_triangle(g, center, c0, c1);
	}
}

static void geo_box(geo *g, const vec3 h)
{
	static const float faces[6][3][3] = {
		{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},  {{-1, 0, 0}, {0, 0, 1}, {0, 1, 0}},
		{{0, 1, 0}, {0, 0, 1}, {1, 0, 0}},  {{0, -1, 0}, {1, 0, 0}, {0, 0, 1}},
		{{0, 0, 1}, {1, 0, 0}, {0, 1, 0}},  {{0, 0, -1}, {0, 1, 0}, {1, 0, 0}},
	};
	for (int f = 0; f < 6; f++) {
		vec3 c, u, v;
		for (int k = 0; k < 3; k++) {
			c[k] = faces[f][0][k] * h[k];
			u[k] = faces[f][1][k] * h[k];
			v[k] = faces[f][2][k] * h[k];
		}
		geo_quad(g, c, u, v);
	}
}

/* Flat shaded: the mesh's own triangles, each with its face normal. */
static void geo_obstacle_mesh(geo *g, const sim_obstacle_def *def)
{
	for (int t = 0; t < def->triangle_count; t++) {
		vec3 p[3];
		for (int k = 0; k < 3; k++) {
			int index = def->triangles[3 * t + k];
			memcpy(p[k], def->positions + 3 * (size_t)index, sizeof(vec3));
		}
		vec3 e1, e2, n;
		glm_vec3_sub(p[1], p[0], e1);
		glm_vec3_sub(p[2], p[0], e2);
		glm_vec3_cross(e1, e2, n);
		float len = glm_vec3_norm(n);
		if (len > 0.0f)
			glm_vec3_scale(n, 1.0f / len, n);
		else
			glm_vec3_copy((vec3){0.0f, 1.0f, 0.0f}, n);
		unsigned a = geo_vertex(g, p[0], n), b = geo_vertex(g, p[1], n), c = geo_vertex(g, p[2], n);
		geo_triangle(g, a, b, c);
	}
}

static void vertex_layout(void)
{
	glEnableVertexAttribArray(0);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (const void *)0);
	glEnableVertexAttribArray(1);
	glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 6 * sizeof(float), (const void *)(3 * sizeof(float)));
}

static bool upload_mesh(geo *g, rd_mesh *mesh)
{
	if (g->failed)
		return false;
	glGenVertexArrays(1, &mesh->vao);
	glGenBuffers(1, &mesh->vbo);
	glGenBuffers(1, &mesh->ebo);
	glBindVertexArray(mesh->vao);
	glBindBuffer(GL_ARRAY_BUFFER, mesh->vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)g->vertex_count * 6 * (GLsizeiptr)sizeof(float), g->v, GL_STATIC_DRAW);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, mesh->ebo);
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)g->index_count * (GLsizeiptr)sizeof(unsigned), g->i,
	             GL_STATIC_DRAW);
	vertex_layout();
	glBindVertexArray(0);
	mesh->index_count = g->index_count;
	return true;
}

static void geo_free(geo *g)
{
	free(g->v);
	free(g->i);
	*g = (geo){0};
}

static void delete_mesh(rd_mesh *mesh)
{
	glDeleteVertexArrays(1, &mesh->vao);
	glDeleteBuffers(1, &mesh->vbo);
	glDeleteBuffers(1, &mesh->ebo);
	*mesh = (rd_mesh){0};
}

static bool obstacle_def_ok(const sim_obstacle_def *def, char *error, int error_size, int k)
{
	if ((unsigned)def->shape >= SIM_SHAPE_COUNT) {
		set_error(error, error_size, "obstacle %d: unknown shape %d", k, (int)def->shape);
		return false;
	}
	if (def->shape != SIM_SHAPE_MESH)
		return true;
	if (def->triangle_count < 0 || def->vertex_count < 0 ||
	    (def->triangle_count > 0 && (!def->triangles || !def->positions))) {
		set_error(error, error_size, "obstacle %d: mesh without vertices or triangles", k);
		return false;
	}
	for (int i = 0; i < 3 * def->triangle_count; i++)
		if (def->triangles[i] < 0 || def->triangles[i] >= def->vertex_count) {
			set_error(error, error_size, "obstacle %d: triangle index %d out of range", k, def->triangles[i]);
			return false;
		}
	return true;
}

static bool build_obstacle(rd_obstacle *o, const st_obstacle *src)
{
	const sim_obstacle_def *def = &src->def;
	geo g = {0};
	switch (def->shape) {
	case SIM_SHAPE_PLANE:
		geo_quad(&g, (vec3){0.0f, 0.0f, 0.0f}, (vec3){0.0f, 0.0f, PLANE_HALF}, (vec3){PLANE_HALF, 0.0f, 0.0f});
		break;
	case SIM_SHAPE_SPHERE: geo_capsule(&g, def->radius, 0.0f, 48, 12); break;
	case SIM_SHAPE_CAPSULE: geo_capsule(&g, def->radius, def->half_height, 48, 12); break;
	case SIM_SHAPE_BOX: geo_box(&g, def->half_extents); break;
	case SIM_SHAPE_MESH: geo_obstacle_mesh(&g, def); break;
	default: break;
	}
	bool ok = upload_mesh(&g, &o->mesh);
	geo_free(&g);
	o->shape = def->shape;
	memcpy(o->color, src->color, sizeof o->color);
	glm_vec3_copy((float *)def->position, o->position);
	glm_vec4_copy((float *)def->orientation, o->orientation);
	return ok;
}

/* The grid's lines in the plane's local xz: minor lines first, then the major ones. */
static bool build_grid(rd_renderer *r)
{
	int per_direction = 2 * GRID_LINES + 1;
	float *v = malloc((size_t)per_direction * 2 * 2 * 3 * sizeof(float));
	if (!v)
		return false;
	int count = 0;
	float extent = GRID_LINES * GRID_SPACING;
	for (int major = 0; major < 2; major++) {
		if (major)
			r->grid_major_first = count;
		for (int i = -GRID_LINES; i <= GRID_LINES; i++) {
			if ((i % GRID_MAJOR_EVERY == 0) != (major == 1))
				continue;
			float c = (float)i * GRID_SPACING;
			float lines[4][3] = {{c, 0, -extent}, {c, 0, extent}, {-extent, 0, c}, {extent, 0, c}};
			memcpy(v + 3 * (size_t)count, lines, sizeof lines);
			count += 4;
		}
		if (major)
			r->grid_major_count = count - r->grid_major_first;
		else
			r->grid_minor_count = count;
	}
	r->grid_minor_first = 0;
	glGenVertexArrays(1, &r->grid_vao);
	glGenBuffers(1, &r->grid_vbo);
	glBindVertexArray(r->grid_vao);
	glBindBuffer(GL_ARRAY_BUFFER, r->grid_vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)count * 3 * (GLsizeiptr)sizeof(float), v, GL_STATIC_DRAW);
	glEnableVertexAttribArray(0);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (const void *)0);
	glBindVertexArray(0);
	free(v);
	return true;
}

/* Three unit great circles, as line segments: the pointer's bounding sphere. */
static void build_circles(rd_renderer *r)
{
	float v[3 * CIRCLE_SEGMENTS * 2][3];
	int count = 0;
	for (int axis = 0; axis < 3; axis++)
		for (int s = 0; s < CIRCLE_SEGMENTS; s++)
			for (int end = 0; end < 2; end++) {
				float a = 2.0f * GLM_PIf * (float)(s + end) / CIRCLE_SEGMENTS;
				float p[3] = {0.0f, 0.0f, 0.0f};
				p[(axis + 1) % 3] = cosf(a);
				p[(axis + 2) % 3] = sinf(a);
				memcpy(v[count++], p, sizeof p);
			}
	glGenVertexArrays(1, &r->circles_vao);
	glGenBuffers(1, &r->circles_vbo);
	glBindVertexArray(r->circles_vao);
	glBindBuffer(GL_ARRAY_BUFFER, r->circles_vbo);
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)sizeof v, v, GL_STATIC_DRAW);
	glEnableVertexAttribArray(0);
	glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), (const void *)0);
	glBindVertexArray(0);
	r->circles_count = count;
}

/* ---- cloth ---------------------------------------------------------------------------- */

static int compare_edges(const void *a, const void *b)
{
	const unsigned *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Every edge once, so the wireframe does not draw a shared edge twice (which would
 * also make its pixels depend on which triangle's line won). */
static unsigned *unique_edges(const unsigned *triangles, int triangle_count, int *out_count)
{
	size_t n = 3 * (size_t)triangle_count;
	unsigned *e = malloc((n ? n : 1) * 2 * sizeof(unsigned));
	if (!e)
		return NULL;
	for (size_t t = 0; t < (size_t)triangle_count; t++)
		for (int k = 0; k < 3; k++) {
			unsigned a = triangles[3 * t + (size_t)k], b = triangles[3 * t + (size_t)(k + 1) % 3];
			e[2 * (3 * t + (size_t)k)] = a < b ? a : b;
			e[2 * (3 * t + (size_t)k) + 1] = a < b ? b : a;
		}
	qsort(e, n, 2 * sizeof(unsigned), compare_edges);
	size_t unique = 0;
	for (size_t i = 0; i < n; i++)
		if (unique == 0 || e[2 * i] != e[2 * (unique - 1)] || e[2 * i + 1] != e[2 * (unique - 1) + 1]) {
			e[2 * unique] = e[2 * i];
			e[2 * unique + 1] = e[2 * i + 1];
			unique++;
		}
	*out_count = (int)(2 * unique);
	return e;
}

static bool build_cloth(rd_cloth *c, const st_object *src, char *error, int error_size, int index)
{
	c->first_vertex = src->first_vertex;
	c->vertex_count = src->vertex_count;
	c->triangle_count = src->triangles ? src->triangle_count : 0;
	memcpy(c->color, src->color, sizeof c->color);
	c->triangles = malloc(3 * (size_t)(c->triangle_count ? c->triangle_count : 1) * sizeof(unsigned));
	if (!c->triangles) {
		set_error(error, error_size, "out of memory");
		return false;
	}
	for (int i = 0; i < 3 * c->triangle_count; i++) {
		int v = src->triangles[i];
		if (v < 0 || v >= c->vertex_count) {
			set_error(error, error_size, "object %d (%s): triangle index %d out of range", index, src->name, v);
			return false;
		}
		c->triangles[i] = (unsigned)v;
	}
	int edge_count = 0;
	unsigned *edges = unique_edges(c->triangles, c->triangle_count, &edge_count);
	if (!edges) {
		set_error(error, error_size, "out of memory");
		return false;
	}
	c->edge_index_count = edge_count;

	glGenBuffers(1, &c->vbo);
	glGenBuffers(1, &c->ebo_triangles);
	glGenBuffers(1, &c->ebo_edges);
	glGenVertexArrays(1, &c->vao_triangles);
	glGenVertexArrays(1, &c->vao_edges);
	glGenVertexArrays(1, &c->vao_gpu_triangles);
	glGenVertexArrays(1, &c->vao_gpu_edges);
	glBindBuffer(GL_ARRAY_BUFFER, c->vbo);
	/* Filled every frame; DYNAMIC tells the driver so. */
	glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(c->vertex_count ? c->vertex_count : 1) * 6 * (GLsizeiptr)sizeof(float),
	             NULL, GL_DYNAMIC_DRAW);
	glBindVertexArray(c->vao_triangles);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, c->ebo_triangles);
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, 3 * (GLsizeiptr)c->triangle_count * (GLsizeiptr)sizeof(unsigned),
	             c->triangles, GL_STATIC_DRAW);
	vertex_layout();
	glBindVertexArray(c->vao_edges);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, c->ebo_edges);
	glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)edge_count * (GLsizeiptr)sizeof(unsigned), edges,
	             GL_STATIC_DRAW);
	vertex_layout();
	glBindVertexArray(c->vao_gpu_triangles);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, c->ebo_triangles);
	glBindVertexArray(c->vao_gpu_edges);
	glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, c->ebo_edges);
	glBindVertexArray(0);
	free(edges);
	return true;
}

/* Area-weighted vertex normals: the unnormalised cross product of a triangle's edges is
 * its normal scaled by twice its area, so summing them weights each face by its area
 * and a sliver triangle cannot tip a vertex's normal.  shaders/gpu_normals.comp repeats
 * this operation for operation (the sums in triangle order), so keep the two together. */
void rd_vertex_normals(const vec4 *positions, int vertex_count, const unsigned *triangles, int triangle_count,
                       vec3 *normals)
{
	memset(normals, 0, (size_t)vertex_count * sizeof(vec3));
	for (int t = 0; t < triangle_count; t++) {
		const unsigned *tri = triangles + 3 * (size_t)t;
		vec3 e1, e2, n;
		glm_vec3_sub((float *)positions[tri[1]], (float *)positions[tri[0]], e1);
		glm_vec3_sub((float *)positions[tri[2]], (float *)positions[tri[0]], e2);
		glm_vec3_cross(e1, e2, n);
		for (int k = 0; k < 3; k++)
			glm_vec3_add(normals[tri[k]], n, normals[tri[k]]);
	}
	for (int i = 0; i < vertex_count; i++) {
		float len = glm_vec3_norm(normals[i]);
		/* An isolated or fully degenerate vertex, or a non-finite state mid blow-up. */
		if (!(len > 1e-30f && isfinite(len))) {
			glm_vec3_copy((vec3){0.0f, 1.0f, 0.0f}, normals[i]);
			continue;
		}
		for (int k = 0; k < 3; k++)
			normals[i][k] = normals[i][k] / len;
	}
}

/* shaders/gpu_smooth_normals.comp gathers the same sums in the same triangle order for the
 * GPU's draw buffer, so keep the two together. */
void rd_smooth_normals(const unsigned *triangles, int triangle_count, const vec3 *normals, int vertex_count,
                       vec3 *smoothed)
{
	memset(smoothed, 0, (size_t)vertex_count * sizeof(vec3));
	for (int t = 0; t < triangle_count; t++) {
		const unsigned *tri = triangles + 3 * (size_t)t;
		vec3 s;
		glm_vec3_add((float *)normals[tri[0]], (float *)normals[tri[1]], s);
		glm_vec3_add(s, (float *)normals[tri[2]], s);
		for (int k = 0; k < 3; k++)
			glm_vec3_add(smoothed[tri[k]], s, smoothed[tri[k]]);
	}
	for (int i = 0; i < vertex_count; i++) {
		float len = glm_vec3_norm(smoothed[i]);
		/* opposite normals cancelling (a fold flat on itself) keep the unsmoothed one */
		if (!(len > 1e-6f && isfinite(len))) {
			glm_vec3_copy((float *)normals[i], smoothed[i]);
			continue;
		}
		for (int k = 0; k < 3; k++)
			smoothed[i][k] = smoothed[i][k] / len;
	}
}

static void cloth_vertices(rd_renderer *r, const rd_cloth *c, const vec4 *positions)
{
	vec3 *normals = r->normal_scratch, *smoothed = r->normal_scratch + r->scratch_vertices + 1;
	rd_vertex_normals(positions, c->vertex_count, c->triangles, c->triangle_count, normals);
	rd_smooth_normals(c->triangles, c->triangle_count, (const vec3 *)normals, c->vertex_count, smoothed);
	float *out = r->vertex_scratch;
	for (int i = 0; i < c->vertex_count; i++, out += 6) {
		memcpy(out, positions[i], 3 * sizeof(float));
		memcpy(out + 3, smoothed[i], 3 * sizeof(float));
	}
}

/* ---- creation ------------------------------------------------------------------------- */

rd_renderer *rd_create(const st_layout *layout, char *error, int error_size)
{
	set_error(error, error_size, "");
	if (!layout) {
		set_error(error, error_size, "no layout");
		return NULL;
	}
	/* GLEW is a GLX build on Debian: under EGL (SDL's offscreen driver) glewInit
	 * reports GLEW_ERROR_NO_GLX_DISPLAY after it has loaded the GL entry points, so that
	 * code is accepted and the version is checked here instead. */
	glewExperimental = GL_TRUE;
	GLenum glew = glewInit();
	if (glew != GLEW_OK && glew != GLEW_ERROR_NO_GLX_DISPLAY) {
		set_error(error, error_size, "glewInit failed (%u): is a GL context current?", (unsigned)glew);
		return NULL;
	}
	if (!GLEW_VERSION_4_3) {
		const char *version = (const char *)glGetString(GL_VERSION);
		set_error(error, error_size, "OpenGL 4.3 core is needed, the context has %s",
		          version ? version : "(no version)");
		return NULL;
	}
	while (glGetError() != GL_NO_ERROR) {
	}

	rd_renderer *r = calloc(1, sizeof *r);
	if (!r) {
		set_error(error, error_size, "out of memory");
		return NULL;
	}
	r->plane = -1;

	if (glDebugMessageCallback) {
		/* Outside a debug context, GL_DEBUG_OUTPUT still works on Mesa but may say
		 * less; synchronous output makes the message arrive inside the faulty call. */
		glEnable(GL_DEBUG_OUTPUT);
		glEnable(GL_DEBUG_OUTPUT_SYNCHRONOUS);
		glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DONT_CARE, 0, NULL, GL_TRUE);
		glDebugMessageControl(GL_DONT_CARE, GL_DONT_CARE, GL_DEBUG_SEVERITY_NOTIFICATION, 0, NULL, GL_FALSE);
		glDebugMessageCallback(debug_callback, r);
		r->debug_callback = true;
	}

	r->mesh_program = link_program(tela_shader_mesh_vert, tela_shader_mesh_frag, "mesh", error, error_size);
	r->line_program = r->mesh_program ? link_program(tela_shader_line_vert, tela_shader_line_frag, "line", error,
	                                                 error_size)
	                                  : 0;
	if (!r->line_program)
		goto fail;

	if (layout->object_count < 0 || layout->obstacle_count < 0 ||
	    (layout->object_count > 0 && !layout->objects) || (layout->obstacle_count > 0 && !layout->obstacles)) {
		set_error(error, error_size, "the layout has negative counts or missing arrays");
		goto fail;
	}
	r->cloths = calloc((size_t)layout->object_count + 1, sizeof *r->cloths);
	r->obstacles = calloc((size_t)layout->obstacle_count + 1, sizeof *r->obstacles);
	if (!r->cloths || !r->obstacles) {
		set_error(error, error_size, "out of memory");
		goto fail;
	}
	for (int o = 0; o < layout->object_count; o++) {
		const st_object *src = &layout->objects[o];
		if (src->first_vertex < 0 || src->vertex_count < 0 ||
		    src->first_vertex > layout->vertex_count - src->vertex_count || src->triangle_count < 0) {
			set_error(error, error_size, "object %d (%s): vertices %d + %d outside the layout's %d", o, src->name,
			          src->first_vertex, src->vertex_count, layout->vertex_count);
			goto fail;
		}
		r->cloth_count = o + 1;
		if (!build_cloth(&r->cloths[o], src, error, error_size, o))
			goto fail;
		if (src->vertex_count > r->scratch_vertices)
			r->scratch_vertices = src->vertex_count;
	}
	r->vertex_scratch = malloc((size_t)(r->scratch_vertices + 1) * 6 * sizeof(float));
	r->normal_scratch = malloc(2 * (size_t)(r->scratch_vertices + 1) * sizeof(vec3));
	if (!r->vertex_scratch || !r->normal_scratch) {
		set_error(error, error_size, "out of memory");
		goto fail;
	}
	for (int k = 0; k < layout->obstacle_count; k++) {
		if (!obstacle_def_ok(&layout->obstacles[k].def, error, error_size, k))
			goto fail;
		r->obstacle_count = k + 1;
		if (!build_obstacle(&r->obstacles[k], &layout->obstacles[k])) {
			set_error(error, error_size, "out of memory");
			goto fail;
		}
		if (r->plane < 0 && layout->obstacles[k].def.shape == SIM_SHAPE_PLANE)
			r->plane = k;
	}

	geo g = {0};
	geo_capsule(&g, 1.0f, 0.0f, 24, 8);
	bool ok = upload_mesh(&g, &r->sphere);
	geo_free(&g);
	geo_cone(&g, 32);
	ok = ok && upload_mesh(&g, &r->cone);
	geo_free(&g);
	if (!ok || !build_grid(r)) {
		set_error(error, error_size, "out of memory");
		goto fail;
	}
	build_circles(r);

	/* Setup is deterministic: an error here is a bug, whatever the debug output says. */
	GLenum gl_error = glGetError();
	if (gl_error != GL_NO_ERROR) {
		set_error(error, error_size, "OpenGL error 0x%04x while creating the renderer", (unsigned)gl_error);
		while (glGetError() != GL_NO_ERROR) {
		}
		goto fail;
	}
	return r;

fail:
	rd_destroy(&r);
	return NULL;
}

void rd_destroy(rd_renderer **renderer)
{
	if (!renderer || !*renderer)
		return;
	rd_renderer *r = *renderer;
	if (r->debug_callback) {
		/* Another renderer may have installed its own callback since. */
		const void *user = NULL;
		glGetPointerv(GL_DEBUG_CALLBACK_USER_PARAM, (void **)&user);
		if (user == r)
			glDebugMessageCallback(NULL, NULL);
	}
	for (int o = 0; o < r->cloth_count; o++) {
		rd_cloth *c = &r->cloths[o];
		glDeleteVertexArrays(1, &c->vao_triangles);
		glDeleteVertexArrays(1, &c->vao_edges);
		glDeleteVertexArrays(1, &c->vao_gpu_triangles);
		glDeleteVertexArrays(1, &c->vao_gpu_edges);
		glDeleteBuffers(1, &c->vbo);
		glDeleteBuffers(1, &c->ebo_triangles);
		glDeleteBuffers(1, &c->ebo_edges);
		free(c->triangles);
	}
	for (int k = 0; k < r->obstacle_count; k++)
		delete_mesh(&r->obstacles[k].mesh);
	delete_mesh(&r->sphere);
	delete_mesh(&r->cone);
	glDeleteVertexArrays(1, &r->grid_vao);
	glDeleteBuffers(1, &r->grid_vbo);
	glDeleteVertexArrays(1, &r->circles_vao);
	glDeleteBuffers(1, &r->circles_vbo);
	glDeleteProgram(r->mesh_program);
	glDeleteProgram(r->line_program);
	free(r->cloths);
	free(r->obstacles);
	free(r->vertex_scratch);
	free(r->normal_scratch);
	free(r);
	*renderer = NULL;
}

int64_t rd_cloth_buffer_frames(const rd_renderer *renderer) { return renderer ? renderer->buffer_frames : 0; }
int64_t rd_cloth_upload_frames(const rd_renderer *renderer) { return renderer ? renderer->upload_frames : 0; }

int rd_gl_error_count(const rd_renderer *renderer)
{
	return renderer ? renderer->error_count : 0;
}

/* ---- drawing -------------------------------------------------------------------------- */

typedef struct draw_ctx {
	mat4 view, projection;
} draw_ctx;

void rd_view_matrices(const rd_view *view, mat4 out_view, mat4 out_projection)
{
	vec3 eye, target, up, forward;
	memcpy(eye, view->eye, sizeof eye);
	memcpy(target, view->target, sizeof target);
	memcpy(up, view->up, sizeof up);
	glm_vec3_sub(target, eye, forward);
	/* Guards against a camera that glm_lookat would turn into NaNs. */
	if (glm_vec3_norm(forward) < 1e-6f) {
		target[2] -= 1.0f;
		glm_vec3_sub(target, eye, forward);
	}
	vec3 side;
	glm_vec3_cross(forward, up, side);
	if (glm_vec3_norm(side) < 1e-6f * glm_vec3_norm(forward)) {
		bool y_like = fabsf(forward[1]) < 0.9f * glm_vec3_norm(forward);
		glm_vec3_copy(y_like ? (vec3){0.0f, 1.0f, 0.0f} : (vec3){0.0f, 0.0f, -1.0f}, up);
	}
	glm_lookat(eye, target, up, out_view);
	float aspect = view->width > 0 && view->height > 0 ? (float)view->width / (float)view->height : 1.0f;
	float fov = view->fov_degrees > 1.0f && view->fov_degrees < 179.0f ? view->fov_degrees : 45.0f;
	glm_perspective(glm_rad(fov), aspect, RD_NEAR, RD_FAR, out_projection);
}

static void use_program(const draw_ctx *d, GLuint program)
{
	glUseProgram(program);
	glUniformMatrix4fv(LOC_VIEW, 1, GL_FALSE, (const float *)d->view);
	glUniformMatrix4fv(LOC_PROJECTION, 1, GL_FALSE, (const float *)d->projection);
}

/* Sets the mesh program's model and normal matrices. */
static void set_model(const draw_ctx *d, mat4 model)
{
	mat4 model_view;
	mat3 normal;
	glm_mat4_mul((vec4 *)d->view, model, model_view);
	glm_mat4_pick3(model_view, normal);
	glm_mat3_inv(normal, normal);
	glm_mat3_transpose(normal);
	glUniformMatrix4fv(LOC_MODEL, 1, GL_FALSE, (const float *)model);
	glUniformMatrix3fv(LOC_NORMAL_MATRIX, 1, GL_FALSE, (const float *)normal);
}

static void pose_matrix(const float position[3], const float quaternion[4], mat4 out)
{
	versor q = {quaternion[0], quaternion[1], quaternion[2], quaternion[3]};
	float len = glm_vec4_norm(q);
	if (len > 1e-12f && isfinite(len))
		glm_vec4_scale(q, 1.0f / len, q);
	else
		glm_quat_identity(q);
	glm_quat_mat4(q, out);
	out[3][0] = position[0];
	out[3][1] = position[1];
	out[3][2] = position[2];
}

static void obstacle_pose(const rd_renderer *r, const st_snapshot *s, int k, mat4 out)
{
	if (s && s->obstacle_pose && k < s->obstacle_count)
		pose_matrix(s->obstacle_pose[k], s->obstacle_pose[k] + 3, out);
	else
		pose_matrix(r->obstacles[k].position, r->obstacles[k].orientation, out);
}

static void draw_mesh(const rd_mesh *mesh)
{
	glBindVertexArray(mesh->vao);
	glDrawElements(GL_TRIANGLES, mesh->index_count, GL_UNSIGNED_INT, (const void *)0);
}

static void draw_obstacles(const rd_renderer *r, const draw_ctx *d, const st_snapshot *s)
{
	use_program(d, r->mesh_program);
	glUniform1f(LOC_BACK_SHADE, 0.0f);
	for (int k = 0; k < r->obstacle_count; k++) {
		const rd_obstacle *o = &r->obstacles[k];
		if (o->mesh.index_count == 0)
			continue;
		mat4 model;
		obstacle_pose(r, s, k, model);
		set_model(d, model);
		glUniform3fv(LOC_COLOR, 1, o->color);
		/* A floor sits behind the grid lines and the cloth lying on it. */
		bool plane = o->shape == SIM_SHAPE_PLANE;
		if (plane) {
			glEnable(GL_POLYGON_OFFSET_FILL);
			glPolygonOffset(1.0f, 2.0f);
		}
		draw_mesh(&o->mesh);
		if (plane)
			glDisable(GL_POLYGON_OFFSET_FILL);
	}
}

/* Points a cloth's GPU vertex arrays into `buffer`: positions from the cloth's first
 * vertex on, normals from `vertex_count` vec4 later (the layout of st_gpu_draw). */
static void gpu_vertex_layout(const rd_cloth *c, GLuint buffer, int vertex_count)
{
	const GLuint vaos[2] = {c->vao_gpu_triangles, c->vao_gpu_edges};
	size_t stride = 4 * sizeof(float);
	size_t positions = (size_t)c->first_vertex * stride;
	size_t normals = ((size_t)vertex_count + (size_t)c->first_vertex) * stride;
	glBindBuffer(GL_ARRAY_BUFFER, buffer);
	for (int k = 0; k < 2; k++) {
		glBindVertexArray(vaos[k]);
		glEnableVertexAttribArray(0);
		glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, (GLsizei)stride, (const void *)positions);
		glEnableVertexAttribArray(1);
		glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, (GLsizei)stride, (const void *)normals);
	}
	glBindVertexArray(0);
}

static void draw_cloths(rd_renderer *r, const draw_ctx *d, const rd_frame *f, rd_style style)
{
	const st_snapshot *s = f->snapshot;
	if (!s || !s->positions)
		return;
	bool from_gpu = f->cloth_buffer != 0;
	if (from_gpu) {
		/* The simulation thread's context wrote the buffer; its fence orders that before
		 * our reads without blocking this thread (the GL server waits, not the CPU). */
		if (f->cloth_fence)
			glWaitSync((GLsync)f->cloth_fence, 0, GL_TIMEOUT_IGNORED);
		r->buffer_frames++;
	} else {
		r->upload_frames++;
	}
	mat4 identity = GLM_MAT4_IDENTITY_INIT;
	for (int o = 0; o < r->cloth_count; o++) {
		const rd_cloth *c = &r->cloths[o];
		if (c->vertex_count == 0 || c->triangle_count == 0 || c->first_vertex > s->vertex_count - c->vertex_count)
			continue;
		GLuint vao_triangles = c->vao_triangles, vao_edges = c->vao_edges;
		if (from_gpu) {
			gpu_vertex_layout(c, f->cloth_buffer, s->vertex_count);
			vao_triangles = c->vao_gpu_triangles, vao_edges = c->vao_gpu_edges;
		} else {
			cloth_vertices(r, c, s->positions + c->first_vertex);
			glBindBuffer(GL_ARRAY_BUFFER, c->vbo);
			glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)c->vertex_count * 6 * (GLsizeiptr)sizeof(float),
			                r->vertex_scratch);
		}
		if (style != RD_WIREFRAME) {
			use_program(d, r->mesh_program);
			set_model(d, identity);
			glUniform3fv(LOC_COLOR, 1, c->color);
			glUniform1f(LOC_BACK_SHADE, 1.0f);
			/* Pushes the surface back so the lines over it win the depth test. */
			if (style == RD_SOLID_WIREFRAME) {
				glEnable(GL_POLYGON_OFFSET_FILL);
				glPolygonOffset(1.0f, 1.0f);
			}
			glBindVertexArray(vao_triangles);
			glDrawElements(GL_TRIANGLES, 3 * c->triangle_count, GL_UNSIGNED_INT, (const void *)0);
			glDisable(GL_POLYGON_OFFSET_FILL);
		}
		if (style != RD_SOLID) {
			use_program(d, r->line_program);
			glUniformMatrix4fv(LOC_MODEL, 1, GL_FALSE, (const float *)identity);
			/* Alone, the lines carry the cloth's colour; over the surface, a dark
			 * shade of it shows the mesh without hiding the shading. */
			float k = style == RD_WIREFRAME ? 1.0f : 0.25f;
			glUniform4f(LOC_COLOR, k * c->color[0], k * c->color[1], k * c->color[2], 1.0f);
			glUniform2f(LOC_FADE_RANGE, 0.0f, 0.0f);
			glBindVertexArray(vao_edges);
			glDrawElements(GL_LINES, c->edge_index_count, GL_UNSIGNED_INT, (const void *)0);
		}
	}
}

static void draw_sphere_at(const rd_renderer *r, const draw_ctx *d, const float center[3], float radius,
                           const float color[3])
{
	mat4 model = GLM_MAT4_IDENTITY_INIT;
	glm_translate(model, (float *)center);
	glm_scale_uni(model, radius);
	set_model(d, model);
	glUniform3fv(LOC_COLOR, 1, color);
	draw_mesh(&r->sphere);
}

static void draw_pointer_solids(const rd_renderer *r, const draw_ctx *d, const rd_frame *f)
{
	const st_snapshot *s = f->snapshot;
	const rd_pointer *p = &f->pointer;
	use_program(d, r->mesh_program);
	glUniform1f(LOC_BACK_SHADE, 0.0f);
	/* a pointer sized to the scene: an 8 cm cone would hide a 20 cm tetrahedron */
	float scale = p->length > 0.0f && isfinite(p->length) ? p->length / CONE_LENGTH : 1.0f;
	if (s && s->positions) {
		int grabbed = p->grabbed_vertex >= 0 ? p->grabbed_vertex : s->grabbed_vertex;
		if (p->hover_vertex >= 0 && p->hover_vertex < s->vertex_count && p->hover_vertex != grabbed)
			draw_sphere_at(r, d, s->positions[p->hover_vertex], scale * HIGHLIGHT_RADIUS, HOVER_COLOR);
		if (grabbed >= 0 && grabbed < s->vertex_count)
			draw_sphere_at(r, d, s->positions[grabbed], 1.25f * scale * HIGHLIGHT_RADIUS, GRAB_COLOR);
	}
	if (!p->visible)
		return;
	vec3 axis = {p->direction[0], p->direction[1], p->direction[2]};
	float len = glm_vec3_norm(axis);
	if (!(len > 1e-6f && isfinite(len)))
		glm_vec3_copy((vec3){0.0f, 0.0f, 1.0f}, axis);
	else
		glm_vec3_scale(axis, 1.0f / len, axis);
	vec3 helper, x, y;
	glm_vec3_copy(fabsf(axis[0]) < 0.9f ? (vec3){1.0f, 0.0f, 0.0f} : (vec3){0.0f, 1.0f, 0.0f}, helper);
	glm_vec3_crossn(helper, axis, x);
	glm_vec3_cross(axis, x, y);
	mat4 model = GLM_MAT4_IDENTITY_INIT;
	for (int k = 0; k < 3; k++) {
		model[0][k] = scale * CONE_RADIUS * x[k];
		model[1][k] = scale * CONE_RADIUS * y[k];
		model[2][k] = scale * CONE_LENGTH * axis[k];
		model[3][k] = p->position[k];
	}
	set_model(d, model);
	glUniform3fv(LOC_COLOR, 1, CONE_COLOR);
	draw_mesh(&r->cone);
}

static void draw_grid(const rd_renderer *r, const draw_ctx *d, const rd_frame *f)
{
	mat4 plane = GLM_MAT4_IDENTITY_INIT;
	if (r->plane >= 0)
		obstacle_pose(r, f->snapshot, r->plane, plane);
	/* The grid follows the view target in whole metres, so it seems endless while its
	 * major lines stay put; it fades around the point under the target. */
	mat4 inverse;
	glm_mat4_inv(plane, inverse);
	vec4 target = {f->view.target[0], f->view.target[1], f->view.target[2], 1.0f}, local, center;
	glm_mat4_mulv(inverse, target, local);
	float spacing = GRID_SPACING * GRID_MAJOR_EVERY;
	vec3 snapped = {roundf(local[0] / spacing) * spacing, 0.0f, roundf(local[2] / spacing) * spacing};
	if (!isfinite(snapped[0]) || !isfinite(snapped[2]))
		glm_vec3_zero(snapped);
	mat4 model;
	glm_translate_to(plane, snapped, model);
	vec4 foot = {isfinite(local[0]) ? local[0] : 0.0f, 0.0f, isfinite(local[2]) ? local[2] : 0.0f, 1.0f};
	glm_mat4_mulv(plane, foot, center);

	/* Light lines on a dark ground, dark ones on a light ground. */
	const float *ground = r->plane >= 0 ? r->obstacles[r->plane].color : f->background;
	float luminance = 0.299f * ground[0] + 0.587f * ground[1] + 0.114f * ground[2];
	float shade = luminance > 0.5f ? 0.0f : 1.0f;

	use_program(d, r->line_program);
	glUniformMatrix4fv(LOC_MODEL, 1, GL_FALSE, (const float *)model);
	glUniform3f(LOC_FADE_CENTER, center[0], center[1], center[2]);
	glBindVertexArray(r->grid_vao);
	glUniform2f(LOC_FADE_RANGE, GRID_MINOR_FADE_START, GRID_MINOR_FADE_END);
	glUniform4f(LOC_COLOR, shade, shade, shade, 0.18f);
	glDrawArrays(GL_LINES, r->grid_minor_first, r->grid_minor_count);
	glUniform2f(LOC_FADE_RANGE, GRID_MAJOR_FADE_START, GRID_MAJOR_FADE_END);
	glUniform4f(LOC_COLOR, shade, shade, shade, 0.40f);
	glDrawArrays(GL_LINES, r->grid_major_first, r->grid_major_count);
}

static void draw_bounding_sphere(const rd_renderer *r, const draw_ctx *d, const rd_pointer *p)
{
	if (!p->visible || !(p->radius > 0.0f))
		return;
	mat4 model = GLM_MAT4_IDENTITY_INIT;
	glm_translate(model, (float *)p->position);
	glm_scale_uni(model, p->radius);
	use_program(d, r->line_program);
	glUniformMatrix4fv(LOC_MODEL, 1, GL_FALSE, (const float *)model);
	glUniform4f(LOC_COLOR, 1.0f, 1.0f, 1.0f, 0.45f);
	glUniform2f(LOC_FADE_RANGE, 0.0f, 0.0f);
	glBindVertexArray(r->circles_vao);
	glDrawArrays(GL_LINES, 0, r->circles_count);
}

void rd_draw(rd_renderer *renderer, const rd_frame *frame)
{
	if (!renderer || !frame || frame->view.width <= 0 || frame->view.height <= 0)
		return;
	rd_renderer *r = renderer;
	draw_ctx d;
	if (frame->use_matrices) {
		memcpy(d.view, frame->view_matrix, sizeof d.view);
		memcpy(d.projection, frame->projection_matrix, sizeof d.projection);
	} else {
		rd_view_matrices(&frame->view, d.view, d.projection);
	}

	/* Whatever drew last (a panel) may have left its state: set every bit we rely on. */
	glViewport(0, 0, frame->view.width, frame->view.height);
	glDisable(GL_SCISSOR_TEST);
	glDisable(GL_STENCIL_TEST);
	glDisable(GL_CULL_FACE);
	glDisable(GL_BLEND);
	glDisable(GL_POLYGON_OFFSET_FILL);
	glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
	glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
	glDepthMask(GL_TRUE);
	glEnable(GL_DEPTH_TEST);
	/* Lines drawn exactly on a surface pass where the surface was pushed back. */
	glDepthFunc(GL_LEQUAL);
	glClearColor(frame->background[0], frame->background[1], frame->background[2], 1.0f);
	glClearDepth(1.0);
	glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

	rd_style style = (unsigned)frame->style < RD_STYLE_COUNT ? frame->style : RD_SOLID;
	draw_obstacles(r, &d, frame->snapshot);
	draw_cloths(r, &d, frame, style);
	draw_pointer_solids(r, &d, frame);

	/* Translucent lines last, over the finished depth buffer and without writing it.
	 * Destination alpha stays 1 so a screenshot is opaque. */
	glEnable(GL_BLEND);
	glBlendEquation(GL_FUNC_ADD);
	glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
	glDepthMask(GL_FALSE);
	if (frame->floor_grid)
		draw_grid(r, &d, frame);
	draw_bounding_sphere(r, &d, &frame->pointer);
	glDepthMask(GL_TRUE);
	glDisable(GL_BLEND);

	glBindVertexArray(0);
	glUseProgram(0);
}

bool rd_read_rgba(int width, int height, uint8_t *rgba)
{
	if (width <= 0 || height <= 0 || !rgba)
		return false;
	while (glGetError() != GL_NO_ERROR) {
	}
	glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
	glPixelStorei(GL_PACK_ALIGNMENT, 1);
	glPixelStorei(GL_PACK_ROW_LENGTH, 0);
	glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
	if (glGetError() != GL_NO_ERROR)
		return false;
	/* GL's rows run bottom to top; images run top to bottom. */
	size_t stride = 4 * (size_t)width;
	for (int y = 0; y < height / 2; y++) {
		uint8_t *a = rgba + stride * (size_t)y, *b = rgba + stride * (size_t)(height - 1 - y);
		for (size_t i = 0; i < stride; i++) {
			uint8_t t = a[i];
			a[i] = b[i];
			b[i] = t;
		}
	}
	return true;
}
