#define _POSIX_C_SOURCE 200809L
#include "gpu_backend.h"
#include "gl_program.h"

#include <GL/glew.h>
#include <cglm/types.h>

#include <assert.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu_layout.h"
#include "shaders/shaders.h"

typedef struct gpu_params gpu_params;
typedef struct gpu_vertex gpu_vertex;
typedef struct gpu_spring gpu_spring;

/* The layout the shaders read (std430 storage blocks, the std140 parameter block):
 * vec4 members on 16-byte boundaries, scalars packed, structs whole rows of 16 bytes. */
static_assert(sizeof(vec4) == 16 && _Alignof(vec4) == 16, "cglm vec4 is a 16-byte aligned float[4]");
static_assert(sizeof(gpu_params) == 80, "gpu_params: 2 vec4 + 12 scalars");
static_assert(offsetof(gpu_params, gravity) == 0 && offsetof(gpu_params, wind) == 16, "gpu_params vec4s");
static_assert(offsetof(gpu_params, h) == 32 && offsetof(gpu_params, air_damping) == 36, "gpu_params h");
static_assert(offsetof(gpu_params, drag) == 40 && offsetof(gpu_params, lift) == 44, "gpu_params drag, lift");
static_assert(offsetof(gpu_params, verlet_d) == 48 && offsetof(gpu_params, vertex_count) == 52, "gpu_params counts");
static_assert(offsetof(gpu_params, triangle_count) == 56 && offsetof(gpu_params, wind_on) == 60, "gpu_params wind");
static_assert(offsetof(gpu_params, spring_count) == 64 && offsetof(gpu_params, strain_limit) == 68 &&
                  offsetof(gpu_params, strain_trigger) == 72,
              "gpu_params spring count and strain limit");
static_assert(sizeof(gpu_vertex) == 64, "gpu_vertex: 2 vec4 + 8 scalars");
static_assert(offsetof(gpu_vertex, rest) == 0 && offsetof(gpu_vertex, point_force) == 16, "gpu_vertex vec4s");
static_assert(offsetof(gpu_vertex, mass) == 32 && offsetof(gpu_vertex, anchor_kd) == 36, "gpu_vertex mass");
static_assert(offsetof(gpu_vertex, kang_k) == 40 && offsetof(gpu_vertex, kang_kd) == 44, "gpu_vertex Kang sums");
static_assert(offsetof(gpu_vertex, spring_first) == 48 && offsetof(gpu_vertex, spring_count) == 52, "springs");
static_assert(offsetof(gpu_vertex, tri_first) == 56 && offsetof(gpu_vertex, tri_count) == 60, "triangles");
static_assert(sizeof(gpu_spring) == 32, "gpu_spring: 8 scalars");
static_assert(offsetof(gpu_spring, a) == 0 && offsetof(gpu_spring, b) == 4 && offsetof(gpu_spring, rest) == 8 &&
                  offsetof(gpu_spring, k) == 12 && offsetof(gpu_spring, kd) == 16 && offsetof(gpu_spring, kind) == 20,
              "gpu_spring members");

enum {
	PROG_FORCES,
	PROG_WIND,
	PROG_EULER,
	PROG_SYMPLECTIC,
	PROG_MIDPOINT,
	PROG_RK4,
	PROG_VERLET,
	PROG_KANG,
	PROG_IMPLICIT,
	PROG_STRAIN,
	PROG_NORMALS,
	PROG_SMOOTH_NORMALS,
	PROG_COUNT
};

/* The state buffers, and where the world's arrays go in the mapped transfer buffers. */
enum { B_X, B_V, B_X_PREV, B_F, B_TMP_X, B_TMP_V, B_ACC_X, B_ACC_V, B_KANG_DV, B_STATE_COUNT };
/* x, v and x_prev travel; the rest stays on the GPU. */
#define TRANSFER_ARRAYS 3

struct gpu_backend {
	GLuint prog[PROG_COUNT];
	GLuint params, vertices, springs, adjacency, triangles, tri_force;
	GLuint impl_spring, impl_pre, partials; /* implicit Euler */
	GLuint counter;                         /* strain limiting: springs corrected in a sweep */
	GLuint strain_list;                     /* strain limiting: springs by colour */
	int colour_start[65];                   /* colour k: entries [start[k], start[k + 1]) */
	int colour_count;                       /* 0 when the springs could not be coloured */
	bool strain_on_gpu;
	bool normals_on;                        /* the normals pass after every step */
	bool normals_valid;                     /* normals and state[B_X] hold a world's state */
	GLuint normals;                         /* per vertex: unit normal (gpu_normals.comp) */
	GLuint smooth_normals;                  /* the draw buffer's: those smoothed as the renderer does */
	double *partial_host;                   /* one partial dot product per work group */
	int spring_count;
	GLuint state[B_STATE_COUNT];
	GLuint up, down;     /* transfer buffers: x | v | x_prev, n vec4 each */
	void *up_map, *down_map;
	bool persistent;
	int capacity;        /* vertices the state buffers hold */
	int n, triangle_count;
	const sim_world *world;
	uint64_t revision;
	bool uploaded;       /* constants and adjacency match world and revision */
	float params_h;      /* the substep in the parameter block */
	int64_t expect_steps; /* the world's step count after our last step (Kang's memory) */
	bool memory_fresh;   /* Kang's dv buffer holds this world's last substep */
	bool poison;         /* tests: scratch buffers filled with NaN before every substep */
	gpu_timing timing;
};

static void set_error(char *error, int size, const char *fmt, ...)
{
	if (!error || size <= 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(error, (size_t)size, fmt, ap);
	va_end(ap);
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

unsigned gpu_compile_compute(const char *name, const char *source, char *error, int error_size)
{
	const gl_stage stage = {GL_COMPUTE_SHADER, source, name};
	return gl_program_build(name, &stage, 1, error, error_size);
}

bool gpu_backend_supports(sim_integrator integrator)
{
	switch (integrator) {
	case SIM_EULER:
	case SIM_SYMPLECTIC:
	case SIM_MIDPOINT:
	case SIM_RK4:
	case SIM_VERLET:
	case SIM_KANG:
	case SIM_IMPLICIT: return true;
	case SIM_MRA:
	case SIM_INTEGRATOR_COUNT: break;
	}
	return false;
}

static GLuint make_buffer(GLsizeiptr bytes, const void *data);

gpu_backend *gpu_backend_create(char *error, int error_size)
{
	GLint major = 0, minor = 0, bindings = 0, blocks = 0;
	glGetIntegerv(GL_MAJOR_VERSION, &major);
	glGetIntegerv(GL_MINOR_VERSION, &minor);
	if (major * 10 + minor < 43) {
		set_error(error, error_size, "OpenGL 4.3 (compute shaders) is not available (the context is %d.%d)", major,
		          minor);
		return NULL;
	}
	glGetIntegerv(GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS, &bindings);
	glGetIntegerv(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS, &blocks);
	if (bindings < GPU_BIND_COUNT || blocks < GPU_MAX_BLOCKS) {
		set_error(error, error_size, "the GPU offers %d storage-buffer bindings and %d blocks per compute shader; "
		          "the integrator needs %d and %d", bindings, blocks, GPU_BIND_COUNT, GPU_MAX_BLOCKS);
		return NULL;
	}
	gpu_backend *g = calloc(1, sizeof *g);
	if (!g) {
		set_error(error, error_size, "out of memory");
		return NULL;
	}
	static const struct {
		const char *name;
		const char *const *source;
	} programs[PROG_COUNT] = {
	    [PROG_FORCES] = {"gpu_forces.comp", &tela_shader_gpu_forces_comp},
	    [PROG_WIND] = {"gpu_wind.comp", &tela_shader_gpu_wind_comp},
	    [PROG_EULER] = {"gpu_euler.comp", &tela_shader_gpu_euler_comp},
	    [PROG_SYMPLECTIC] = {"gpu_symplectic.comp", &tela_shader_gpu_symplectic_comp},
	    [PROG_MIDPOINT] = {"gpu_midpoint.comp", &tela_shader_gpu_midpoint_comp},
	    [PROG_RK4] = {"gpu_rk4.comp", &tela_shader_gpu_rk4_comp},
	    [PROG_VERLET] = {"gpu_verlet.comp", &tela_shader_gpu_verlet_comp},
	    [PROG_KANG] = {"gpu_kang.comp", &tela_shader_gpu_kang_comp},
	    [PROG_IMPLICIT] = {"gpu_implicit.comp", &tela_shader_gpu_implicit_comp},
	    [PROG_STRAIN] = {"gpu_strain.comp", &tela_shader_gpu_strain_comp},
	    [PROG_NORMALS] = {"gpu_normals.comp", &tela_shader_gpu_normals_comp},
	    [PROG_SMOOTH_NORMALS] = {"gpu_smooth_normals.comp", &tela_shader_gpu_smooth_normals_comp},
	};
	for (int p = 0; p < PROG_COUNT; p++) {
		g->prog[p] = gpu_compile_compute(programs[p].name, *programs[p].source, error, error_size);
		if (!g->prog[p]) {
			gpu_backend_destroy(&g);
			return NULL;
		}
	}
	/* Buffer storage with persistent, coherent maps is GL 4.4 (or ARB_buffer_storage);
	 * without it the transfers fall back to glBufferSubData and glGetBufferSubData. */
	g->persistent = (major * 10 + minor >= 44 || GLEW_ARB_buffer_storage) && glBufferStorage != NULL;
	g->timing.persistent = g->persistent;
	glGenBuffers(1, &g->params);
	glBindBuffer(GL_UNIFORM_BUFFER, g->params);
	glBufferData(GL_UNIFORM_BUFFER, sizeof(gpu_params), NULL, GL_DYNAMIC_DRAW);
	glBindBuffer(GL_UNIFORM_BUFFER, 0);
	g->counter = make_buffer(16, NULL);
	GLenum err = glGetError();
	if (err != GL_NO_ERROR) {
		set_error(error, error_size, "setting up the GPU integrator: GL error 0x%04x", err);
		gpu_backend_destroy(&g);
		return NULL;
	}
	g->expect_steps = -1;
	return g;
}

static void delete_buffer(GLuint *b)
{
	if (*b)
		glDeleteBuffers(1, b);
	*b = 0;
}

static void free_state(gpu_backend *g)
{
	for (int k = 0; k < B_STATE_COUNT; k++)
		delete_buffer(&g->state[k]);
	delete_buffer(&g->impl_pre);
	delete_buffer(&g->partials);
	delete_buffer(&g->normals);
	delete_buffer(&g->smooth_normals);
	g->normals_valid = false;
	free(g->partial_host);
	g->partial_host = NULL;
	if (g->up_map) {
		glBindBuffer(GL_COPY_WRITE_BUFFER, g->up);
		glUnmapBuffer(GL_COPY_WRITE_BUFFER);
		glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
	}
	if (g->down_map) {
		glBindBuffer(GL_COPY_READ_BUFFER, g->down);
		glUnmapBuffer(GL_COPY_READ_BUFFER);
		glBindBuffer(GL_COPY_READ_BUFFER, 0);
	}
	g->up_map = g->down_map = NULL;
	delete_buffer(&g->up);
	delete_buffer(&g->down);
	g->capacity = 0;
}

void gpu_backend_destroy(gpu_backend **gp)
{
	gpu_backend *g = *gp;
	if (!g)
		return;
	free_state(g);
	delete_buffer(&g->params);
	delete_buffer(&g->vertices);
	delete_buffer(&g->springs);
	delete_buffer(&g->adjacency);
	delete_buffer(&g->triangles);
	delete_buffer(&g->tri_force);
	delete_buffer(&g->impl_spring);
	delete_buffer(&g->strain_list);
	delete_buffer(&g->counter);
	for (int p = 0; p < PROG_COUNT; p++)
		if (g->prog[p])
			glDeleteProgram(g->prog[p]);
	free(g);
	*gp = NULL;
}

gpu_timing gpu_backend_timing(const gpu_backend *g) { return g->timing; }

/* A storage buffer of `bytes` (at least 16: GL refuses empty bindings), filled from data
 * when given, else with zeros.  glBufferData without data leaves the store "uninitialized
 * and thus undefined": llvmpipe's fresh stores read as zeros, the NVIDIA driver's may hold
 * another buffer's old contents.  No kernel should read what no pass wrote (the poison
 * test checks that), but zeros make such a slip the same on every driver rather than a
 * blow-up on one. */
static GLuint make_buffer(GLsizeiptr bytes, const void *data)
{
	GLuint b = 0;
	glGenBuffers(1, &b);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	glBufferData(GL_SHADER_STORAGE_BUFFER, bytes < 16 ? 16 : bytes, NULL, GL_DYNAMIC_DRAW);
	if (data && bytes > 0)
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, bytes, data);
	else /* glClearBufferData with no pattern fills with zeros (GL 4.3) */
		glClearBufferData(GL_SHADER_STORAGE_BUFFER, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, NULL);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
	return b;
}

/* Fills a buffer with the bits of a quiet NaN, which as a double (two of them) is a NaN
 * too and as a uint a count no sweep reaches. */
static void poison_buffer(GLuint b)
{
	const GLuint nan_bits = 0x7fc00000u;
	if (!b)
		return;
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, b);
	glClearBufferData(GL_SHADER_STORAGE_BUFFER, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, &nan_bits);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
}

void gpu_backend_set_poison(gpu_backend *g, bool on) { g->poison = on; }

/* Before a substep: every buffer the substep must write before it reads gets NaN, as a
 * driver's recycled memory might hold garbage.  Kept: the state the substep starts from
 * (x, v; Verlet's x_prev), Kang's memory when the scheme will read it, and the
 * constants.  The normals are not a substep's. */
static void poison_scratch(gpu_backend *g, sim_integrator integ, bool memory_valid)
{
	/* the clears must not overtake the previous substep's shader writes (resident runs
	 * queue substeps back to back): glMemoryBarrier, GL_BUFFER_UPDATE_BARRIER_BIT */
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	for (int k = 0; k < B_STATE_COUNT; k++) {
		bool input = k == B_X || k == B_V || (k == B_X_PREV && integ == SIM_VERLET) ||
		             (k == B_KANG_DV && integ == SIM_KANG && memory_valid);
		if (!input)
			poison_buffer(g->state[k]);
	}
	poison_buffer(g->tri_force);
	poison_buffer(g->impl_spring);
	poison_buffer(g->impl_pre);
	poison_buffer(g->partials);
	poison_buffer(g->counter);
}

static bool reserve_state(gpu_backend *g, int n)
{
	if (n <= g->capacity)
		return true;
	free_state(g);
	GLsizeiptr bytes = (GLsizeiptr)sizeof(vec4) * n;
	for (int k = 0; k < B_STATE_COUNT; k++)
		g->state[k] = make_buffer(bytes, NULL);
	g->impl_pre = make_buffer(2 * bytes, NULL);
	g->normals = make_buffer(bytes, NULL);
	g->smooth_normals = make_buffer(bytes, NULL);
	int groups = (n + GPU_GROUP - 1) / GPU_GROUP;
	g->partials = make_buffer((GLsizeiptr)sizeof(double) * groups, NULL);
	g->partial_host = malloc(sizeof(double) * (size_t)groups);
	if (!g->partial_host) {
		free_state(g);
		return false;
	}
	GLsizeiptr transfer = bytes * TRANSFER_ARRAYS;
	glGenBuffers(1, &g->up);
	glGenBuffers(1, &g->down);
	if (g->persistent) {
		/* Mapped once for the backend's life: the CPU writes the state straight into the
		 * upload buffer and reads the result straight out of the download buffer; a fence
		 * per substep says when the GPU is done with both. */
		GLbitfield flags = GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
		glBindBuffer(GL_COPY_WRITE_BUFFER, g->up);
		glBufferStorage(GL_COPY_WRITE_BUFFER, transfer, NULL, flags | GL_MAP_WRITE_BIT);
		g->up_map = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, transfer, flags | GL_MAP_WRITE_BIT);
		glBindBuffer(GL_COPY_READ_BUFFER, g->down);
		glBufferStorage(GL_COPY_READ_BUFFER, transfer, NULL, flags | GL_MAP_READ_BIT);
		g->down_map = glMapBufferRange(GL_COPY_READ_BUFFER, 0, transfer, flags | GL_MAP_READ_BIT);
		glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
		glBindBuffer(GL_COPY_READ_BUFFER, 0);
		if (!g->up_map || !g->down_map) {
			free_state(g);
			return false;
		}
	} else {
		glBindBuffer(GL_COPY_WRITE_BUFFER, g->up);
		glBufferData(GL_COPY_WRITE_BUFFER, transfer, NULL, GL_STREAM_DRAW);
		glBindBuffer(GL_COPY_WRITE_BUFFER, g->down);
		glBufferData(GL_COPY_WRITE_BUFFER, transfer, NULL, GL_STREAM_READ);
		glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
	}
	g->capacity = n;
	return glGetError() == GL_NO_ERROR;
}

static bool wind_active(const sim_world_def *d)
{
	return (d->wind[0] != 0.0f || d->wind[1] != 0.0f || d->wind[2] != 0.0f) && d->air_density > 0.0f &&
	       (d->drag_coefficient != 0.0f || d->lift_coefficient != 0.0f);
}

/* Greedy colouring of the structural and shear springs (those strain limiting touches), in
 * the world's order: each spring takes the lowest colour neither end has yet, so no two
 * springs of a colour share a vertex.  The list holds the springs colour by colour; a grid
 * needs 8 to 10 colours.  Past 64 (a vertex with more than 32 such springs) the GPU does
 * not limit strain and the CPU does (colour_count 0). */
static GLuint colour_springs(gpu_backend *g, const sim_spring_desc *sd, int ns, int n)
{
	uint64_t *used = calloc((size_t)(n ? n : 1), sizeof *used);
	uint8_t *colour = malloc((size_t)(ns ? ns : 1));
	uint32_t *list = malloc(sizeof(uint32_t) * (size_t)(ns ? ns : 1));
	int counts[65] = {0};
	g->colour_count = 0;
	bool ok = used && colour && list;
	for (int s = 0; s < ns && ok; s++) {
		colour[s] = 255;
		if (sd[s].kind == SIM_SPRING_BEND)
			continue;
		uint64_t taken = used[sd[s].a] | used[sd[s].b];
		int c = 0;
		while (c < 64 && (taken >> c) & 1u)
			c++;
		if (c == 64) {
			ok = false;
			break;
		}
		colour[s] = (uint8_t)c;
		used[sd[s].a] |= 1ull << c;
		used[sd[s].b] |= 1ull << c;
		counts[c]++;
		g->colour_count = c + 1 > g->colour_count ? c + 1 : g->colour_count;
	}
	GLuint buffer = 0;
	if (ok) {
		g->colour_start[0] = 0;
		for (int c = 0; c < g->colour_count; c++)
			g->colour_start[c + 1] = g->colour_start[c] + counts[c];
		int fill[64];
		memcpy(fill, g->colour_start, sizeof fill);
		for (int s = 0; s < ns; s++)
			if (colour[s] != 255)
				list[fill[colour[s]]++] = (uint32_t)s;
		buffer = make_buffer((GLsizeiptr)(sizeof(uint32_t) * (size_t)g->colour_start[g->colour_count]), list);
	} else {
		g->colour_count = 0;
		buffer = make_buffer(16, NULL);
	}
	free(used);
	free(colour);
	free(list);
	return buffer;
}

/* The world's constants and the per-vertex adjacency: for vertex i, the springs that
 * touch it and then the triangles that touch it, each in the world's order, which is the
 * order in which the CPU's scatter adds their forces to i. */
static bool upload_world(gpu_backend *g, const sim_world *w)
{
	int n = sim_world_vertex_count(w), ns = sim_world_spring_total(w), nt = sim_world_triangle_total(w);
	const int *tris = sim_world_triangles(w);
	sim_spring_desc *sd = malloc(sizeof *sd * (size_t)(ns ? ns : 1));
	sim_vertex_params *vp = malloc(sizeof *vp * (size_t)n);
	gpu_vertex *gv = calloc((size_t)n, sizeof *gv);
	gpu_spring *gs = calloc((size_t)(ns ? ns : 1), sizeof *gs);
	uint32_t *adj = malloc(sizeof(uint32_t) * (size_t)(2 * ns + 3 * nt + 1));
	uint32_t *fill = calloc((size_t)n, sizeof(uint32_t));
	bool ok = sd && vp && gv && gs && adj && fill && reserve_state(g, n);
	if (ok) {
		sim_world_get_springs(w, sd);
		sim_world_get_vertex_params(w, vp);
		for (int s = 0; s < ns; s++) {
			gs[s] = (gpu_spring){.a = (uint32_t)sd[s].a, .b = (uint32_t)sd[s].b, .rest = sd[s].rest, .k = sd[s].k,
			                     .kd = sd[s].kd, .kind = (uint32_t)sd[s].kind};
			gv[sd[s].a].spring_count++;
			gv[sd[s].b].spring_count++;
		}
		for (int t = 0; t < 3 * nt; t++)
			gv[tris[t]].tri_count++;
		uint32_t at = 0;
		for (int i = 0; i < n; i++) {
			gv[i].spring_first = at;
			at += gv[i].spring_count;
		}
		for (int i = 0; i < n; i++) {
			gv[i].tri_first = at;
			at += gv[i].tri_count;
		}
		for (int s = 0; s < ns; s++) {
			int ends[2] = {sd[s].a, sd[s].b};
			for (int e = 0; e < 2; e++) {
				int i = ends[e];
				adj[gv[i].spring_first + fill[i]++] = (uint32_t)s;
				/* Kang's per-vertex sums, added in incidence order as sim/src/forces.c does */
				gv[i].kang_k += sd[s].k;
				gv[i].kang_kd += sd[s].kd;
			}
		}
		memset(fill, 0, sizeof(uint32_t) * (size_t)n);
		for (int t = 0; t < nt; t++)
			for (int j = 0; j < 3; j++) {
				int i = tris[3 * t + j];
				adj[gv[i].tri_first + fill[i]++] = (uint32_t)t;
			}
		for (int i = 0; i < n; i++) {
			memcpy(gv[i].rest, vp[i].rest, sizeof(vec4));
			memcpy(gv[i].point_force, vp[i].point_force, sizeof(vec4));
			gv[i].mass = vp[i].mass;
			gv[i].anchor_kd = vp[i].anchor_damping;
		}
		delete_buffer(&g->vertices);
		delete_buffer(&g->springs);
		delete_buffer(&g->adjacency);
		delete_buffer(&g->triangles);
		delete_buffer(&g->tri_force);
		delete_buffer(&g->impl_spring);
		g->impl_spring = make_buffer((GLsizeiptr)(2 * sizeof(vec4) * (size_t)ns), NULL);
		delete_buffer(&g->strain_list);
		g->strain_list = colour_springs(g, sd, ns, n);
		g->spring_count = ns;
		g->vertices = make_buffer((GLsizeiptr)(sizeof *gv * (size_t)n), gv);
		g->springs = make_buffer((GLsizeiptr)(sizeof *gs * (size_t)ns), gs);
		g->adjacency = make_buffer((GLsizeiptr)(sizeof(uint32_t) * (size_t)(2 * ns + 3 * nt)), adj);
		g->triangles = make_buffer((GLsizeiptr)(sizeof(int) * 3 * (size_t)nt), tris);
		g->tri_force = make_buffer((GLsizeiptr)(sizeof(vec4) * (size_t)nt), NULL);
		g->n = n;
		g->triangle_count = nt;
		g->world = w;
		g->revision = sim_world_revision(w);
		g->params_h = -1.0f;
		g->uploaded = glGetError() == GL_NO_ERROR;
		ok = g->uploaded;
	}
	free(sd);
	free(vp);
	free(gv);
	free(gs);
	free(adj);
	free(fill);
	return ok;
}

static void upload_params(gpu_backend *g, const sim_world *w, float h)
{
	const sim_world_def *d = sim_world_get_def(w);
	gpu_params p;
	memset(&p, 0, sizeof p);
	memcpy(p.gravity, d->gravity, sizeof(float) * 3);
	memcpy(p.wind, d->wind, sizeof(float) * 3);
	p.wind[3] = 0.5f * d->air_density;
	p.h = h;
	p.air_damping = d->air_damping;
	p.drag = d->drag_coefficient;
	p.lift = d->lift_coefficient;
	p.verlet_d = d->verlet_drag ? 0.99f : 1.0f;
	p.vertex_count = (uint32_t)g->n;
	p.triangle_count = (uint32_t)g->triangle_count;
	p.wind_on = wind_active(d) ? 1u : 0u;
	p.spring_count = (uint32_t)g->spring_count;
	p.strain_limit = 1.0f + d->strain_tau;
	p.strain_trigger = p.strain_limit * (1.0f + 1e-5f); /* sim/src/strain.c's slack */
	glBindBuffer(GL_UNIFORM_BUFFER, g->params);
	glBufferSubData(GL_UNIFORM_BUFFER, 0, sizeof p, &p);
	glBindBuffer(GL_UNIFORM_BUFFER, 0);
	g->params_h = h;
}

static void bind_all(gpu_backend *g)
{
	glBindBufferBase(GL_UNIFORM_BUFFER, GPU_BIND_PARAMS, g->params);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_VERTICES, g->vertices);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_SPRINGS, g->springs);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_ADJACENCY, g->adjacency);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_TRIANGLES, g->triangles);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_TRI_FORCE, g->tri_force);
	static const int binding[B_STATE_COUNT] = {
	    [B_X] = GPU_BIND_X,         [B_V] = GPU_BIND_V,         [B_X_PREV] = GPU_BIND_X_PREV,
	    [B_F] = GPU_BIND_F,         [B_TMP_X] = GPU_BIND_TMP_X, [B_TMP_V] = GPU_BIND_TMP_V,
	    [B_ACC_X] = GPU_BIND_ACC_X, [B_ACC_V] = GPU_BIND_ACC_V, [B_KANG_DV] = GPU_BIND_KANG_DV,
	};
	for (int k = 0; k < B_STATE_COUNT; k++)
		glBindBufferBase(GL_SHADER_STORAGE_BUFFER, (GLuint)binding[k], g->state[k]);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_IMPL_SPRING, g->impl_spring);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_IMPL_PRE, g->impl_pre);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_PARTIALS, g->partials);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_COUNTER, g->counter);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_STRAIN_LIST, g->strain_list);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_NORMALS, g->normals);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_SMOOTH_NORMALS, g->smooth_normals);
}

/* One pass over `count` items; the barrier makes its writes visible to the next pass. */
static void dispatch(gpu_backend *g, int prog, int count, GLuint stage)
{
	glUseProgram(g->prog[prog]);
	if (prog == PROG_MIDPOINT || prog == PROG_RK4 || prog == PROG_KANG || prog == PROG_IMPLICIT || prog == PROG_STRAIN)
		glUniform1ui(GPU_LOC_STAGE, stage);
	glDispatchCompute((GLuint)(count + GPU_GROUP - 1) / GPU_GROUP, 1, 1);
	glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

/* f for the state in buffers sx, sv: the wind per triangle first, then every vertex. */
static void forces(gpu_backend *g, const sim_world *w, int sx, int sv)
{
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_STATE_X, g->state[sx]);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_STATE_V, g->state[sv]);
	if (g->triangle_count > 0 && wind_active(sim_world_get_def(w)))
		dispatch(g, PROG_WIND, g->triangle_count, 0);
	dispatch(g, PROG_FORCES, g->n, 0);
}

static void rk4_stage(gpu_backend *g, GLuint stage, float weight, float next)
{
	glUseProgram(g->prog[PROG_RK4]);
	glUniform1f(GPU_LOC_WEIGHT, weight);
	glUniform1f(GPU_LOC_NEXT, next);
	dispatch(g, PROG_RK4, g->n, stage);
}

/* The sum of the work groups' partial dot products, in group order on the CPU (so a run
 * repeats to the bit).  Reading it back waits for the GPU: one wait per CG half-step,
 * which is what the host-driven loop costs (docs/gpu.md). */
static double read_partials(gpu_backend *g)
{
	int groups = (g->n + GPU_GROUP - 1) / GPU_GROUP;
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->partials);
	glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(sizeof(double) * (size_t)groups), g->partial_host);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
	double sum = 0.0;
	for (int k = 0; k < groups; k++)
		sum += g->partial_host[k];
	return sum;
}

static void implicit_scalar(gpu_backend *g, GLuint stage, float value)
{
	glUseProgram(g->prog[PROG_IMPLICIT]);
	glUniform1f(GPU_LOC_SCALAR, value);
	dispatch(g, PROG_IMPLICIT, g->n, stage);
}

/* Baraff and Witkin's modified preconditioned CG, as sim/src/implicit.c runs it, with the
 * vector work on the GPU (gpu_implicit.comp) and the scalars here.  Starts from dv = 0
 * (the CPU may start from its previous solution, which only saves iterations: the
 * convergence test is relative to the same starting residual). */
static void implicit_solve(gpu_backend *g, const sim_world *w)
{
	const sim_world_def *d = sim_world_get_def(w);
	if (g->spring_count > 0)
		dispatch(g, PROG_IMPLICIT, g->spring_count, 0);
	dispatch(g, PROG_IMPLICIT, g->n, 1);
	const double delta_ref = read_partials(g);
	double delta = delta_ref;
	const double target = (double)d->cg_tolerance * (double)d->cg_tolerance * delta_ref;
	const int max_iterations = d->cg_max_iterations > 0 ? d->cg_max_iterations : 0;
	int iterations = 0;
	if (iterations < max_iterations && delta > target) {
		for (;;) {
			dispatch(g, PROG_IMPLICIT, g->n, 2);
			const double quad = read_partials(g);
			if (!(quad > 0.0))
				break;
			implicit_scalar(g, 3, (float)(delta / quad));
			const double delta_new = read_partials(g);
			const float beta = (float)(delta_new / delta);
			delta = delta_new;
			iterations++;
			if (iterations >= max_iterations || !(delta > target))
				break;
			implicit_scalar(g, 4, beta);
		}
	}
	dispatch(g, PROG_IMPLICIT, g->n, 5);
	g->timing.cg_iterations = iterations;
}

/* Provot's limit as coloured Gauss-Seidel sweeps (gpu_strain.comp): per sweep one
 * dispatch per colour, forwards on even sweeps and backwards on odd ones, until a sweep
 * corrects nothing or def.strain_iterations sweeps ran; then v += correction / h.
 * Returns the sweeps that corrected something, as the CPU does. */
static int strain_solve(gpu_backend *g, const sim_world *w)
{
	dispatch(g, PROG_STRAIN, g->n, 0);
	int sweeps = 0;
	const int max_sweeps = sim_world_get_def(w)->strain_iterations;
	for (; sweeps < max_sweeps; sweeps++) {
		const GLuint zero = 0;
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->counter);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof zero, &zero);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
		glUseProgram(g->prog[PROG_STRAIN]);
		for (int k = 0; k < g->colour_count; k++) {
			int c = sweeps % 2 == 0 ? k : g->colour_count - 1 - k;
			int count = g->colour_start[c + 1] - g->colour_start[c];
			glUniform1ui(GPU_LOC_FIRST, (GLuint)g->colour_start[c]);
			glUniform1ui(GPU_LOC_COUNT, (GLuint)count);
			dispatch(g, PROG_STRAIN, count, 1);
		}
		GLuint corrected = 0;
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->counter);
		glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof corrected, &corrected);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
		if (corrected == 0)
			break;
	}
	dispatch(g, PROG_STRAIN, g->n, 2);
	return sweeps;
}

void gpu_backend_set_strain_on_gpu(gpu_backend *g, bool on) { g->strain_on_gpu = on; }

/* The dispatches of one substep of the scheme, on the state already in x, v, x_prev. */
static void integrate(gpu_backend *g, const sim_world *w, sim_integrator integ, bool memory_valid)
{
	int n = g->n;
	if (g->poison)
		poison_scratch(g, integ, memory_valid);
	forces(g, w, B_X, B_V);
	switch (integ) {
	case SIM_EULER: dispatch(g, PROG_EULER, n, 0); break;
	case SIM_SYMPLECTIC: dispatch(g, PROG_SYMPLECTIC, n, 0); break;
	case SIM_MIDPOINT:
		dispatch(g, PROG_MIDPOINT, n, 0);
		forces(g, w, B_TMP_X, B_TMP_V);
		dispatch(g, PROG_MIDPOINT, n, 1);
		break;
	case SIM_RK4:
		rk4_stage(g, 0, 1.0f, 0.5f);
		forces(g, w, B_TMP_X, B_TMP_V);
		rk4_stage(g, 1, 2.0f, 0.5f);
		forces(g, w, B_TMP_X, B_TMP_V);
		rk4_stage(g, 1, 2.0f, 1.0f);
		forces(g, w, B_TMP_X, B_TMP_V);
		rk4_stage(g, 1, 1.0f, 0.0f);
		dispatch(g, PROG_RK4, n, 2);
		break;
	case SIM_VERLET: dispatch(g, PROG_VERLET, n, 0); break;
	case SIM_KANG:
		dispatch(g, PROG_KANG, n, memory_valid ? 1 : 0);
		dispatch(g, PROG_KANG, n, 2);
		break;
	case SIM_IMPLICIT: implicit_solve(g, w); break;
	case SIM_MRA:
	case SIM_INTEGRATOR_COUNT: break;
	}
}

static bool prepare(gpu_backend *g, const sim_world *w, float h)
{
	if (!g->uploaded || g->world != w || g->revision != sim_world_revision(w) || g->n != sim_world_vertex_count(w)) {
		if (!upload_world(g, w))
			return false;
		g->memory_fresh = false;
	}
	if (g->params_h != h)
		upload_params(g, w, h);
	bind_all(g);
	return true;
}

/* Waits for everything issued so far; false when the GPU did not finish within a
 * minute (a lost context), which the step reports as an error. */
static bool wait_gpu(void)
{
	GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
	if (!fence)
		return false;
	GLenum r = glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 60000000000ull);
	glDeleteSync(fence);
	return r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED;
}

typedef struct substep_ctx {
	gpu_backend *g;
	const sim_world *w;
	sim_integrator integ;
} substep_ctx;

static sim_result gpu_substep(void *user, sim_external_state *st, float h)
{
	substep_ctx *c = user;
	gpu_backend *g = c->g;
	if (!prepare(g, c->w, h))
		return SIM_ERROR_INVALID;
	size_t bytes = sizeof(vec4) * (size_t)st->n;
	int arrays = c->integ == SIM_VERLET ? 3 : 2;
	vec4 *host[TRANSFER_ARRAYS] = {st->x, st->v, st->x_prev};
	static const int target[TRANSFER_ARRAYS] = {B_X, B_V, B_X_PREV};
	double t0 = now_us();
	/* up: the constrained start state (the GPU finished reading the upload buffer at the
	 * previous substep's fence) */
	glBindBuffer(GL_COPY_READ_BUFFER, g->up);
	for (int a = 0; a < arrays; a++) {
		if (g->persistent)
			memcpy((char *)g->up_map + (size_t)a * bytes, host[a], bytes);
		else
			glBufferSubData(GL_COPY_READ_BUFFER, (GLintptr)((size_t)a * bytes), (GLsizeiptr)bytes, host[a]);
		glBindBuffer(GL_COPY_WRITE_BUFFER, g->state[target[a]]);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)((size_t)a * bytes), 0,
		                    (GLsizeiptr)bytes);
	}
	double t1 = now_us();
	integrate(g, c->w, c->integ, st->history_valid && g->memory_fresh);
	if (g->strain_on_gpu && g->colour_count > 0 && sim_world_get_def(c->w)->strain_limit) {
		st->strain_iterations = strain_solve(g, c->w);
		st->strain_limited = true;
	}
	/* down: the candidate end state */
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT | (g->persistent ? GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT : 0));
	glBindBuffer(GL_COPY_WRITE_BUFFER, g->down);
	for (int a = 0; a < arrays; a++) {
		glBindBuffer(GL_COPY_READ_BUFFER, g->state[target[a]]);
		glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, (GLintptr)((size_t)a * bytes),
		                    (GLsizeiptr)bytes);
	}
	glBindBuffer(GL_COPY_READ_BUFFER, 0);
	bool done = !g->persistent || wait_gpu();
	double t2 = now_us();
	if (done) {
		for (int a = 0; a < arrays; a++) {
			if (g->persistent)
				memcpy(host[a], (const char *)g->down_map + (size_t)a * bytes, bytes);
			else
				glGetBufferSubData(GL_COPY_WRITE_BUFFER, (GLintptr)((size_t)a * bytes), (GLsizeiptr)bytes, host[a]);
		}
	}
	glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
	double t3 = now_us();
	g->timing.upload_us += t1 - t0;
	g->timing.gpu_us += t2 - t1;
	g->timing.download_us += t3 - t2;
	g->timing.substeps++;
	g->memory_fresh = c->integ == SIM_KANG;
	GLenum err = glGetError();
	return done && err == GL_NO_ERROR ? SIM_OK : SIM_ERROR_INVALID;
}

sim_result gpu_backend_step(gpu_backend *g, sim_world *w, float dt)
{
	sim_integrator integ = sim_world_get_def(w)->integrator;
	if (!gpu_backend_supports(integ))
		return SIM_ERROR_INVALID;
	/* Kang's memory on the GPU is this world's only if we made its last step. */
	if (g->world != w || g->expect_steps != sim_world_step_count(w))
		g->memory_fresh = false;
	substep_ctx c = {g, w, integ};
	sim_result r = sim_world_step_external(w, dt, gpu_substep, &c);
	g->expect_steps = sim_world_step_count(w);
	/* After a failed step too: the world was rolled back, and the normals follow it. */
	if (g->normals_on && !gpu_backend_normals(g, w) && r == SIM_OK)
		r = SIM_ERROR_INVALID;
	glUseProgram(0);
	return r;
}

void gpu_backend_set_normals(gpu_backend *g, bool on) { g->normals_on = on; }

/* The substep's collisions and constraints ran on the CPU, so the GPU's x is only the
 * candidate: the final positions go up once more (one copy, no wait) before the pass. */
bool gpu_backend_normals(gpu_backend *g, const sim_world *w)
{
	g->normals_valid = false;
	int n = sim_world_vertex_count(w);
	/* the pass reads no step size: keep whatever the last step set */
	float h = g->params_h > 0.0f ? g->params_h : 1e-3f;
	if (n <= 0 || !prepare(g, w, h))
		return false;
	/* a write by glBufferSubData waits for earlier shader writes to the same store only
	 * behind a GL_BUFFER_UPDATE_BARRIER_BIT barrier (glMemoryBarrier); after a step the
	 * fence already did that, but the pass may follow other dispatches */
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->state[B_X]);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)(sizeof(vec4) * (size_t)n), sim_world_positions(w));
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
	glBindBufferBase(GL_SHADER_STORAGE_BUFFER, GPU_BIND_STATE_X, g->state[B_X]);
	dispatch(g, PROG_NORMALS, n, 0);
	glUseProgram(0);
	g->normals_valid = glGetError() == GL_NO_ERROR;
	return g->normals_valid;
}

/* The step's final positions are the CPU's (its collisions and constraints corrected the
 * GPU's candidate): the normals pass uploads them into X and computes their normals, the
 * smoothing pass smooths those as the renderer does on the CPU, and the positions and the
 * smoothed normals are copied from there. */
bool gpu_backend_fill_draw_buffer(gpu_backend *g, const sim_world *w, unsigned buffer)
{
	if (!buffer || !gpu_backend_normals(g, w))
		return false;
	GLsizeiptr bytes = (GLsizeiptr)sizeof(vec4) * sim_world_vertex_count(w);
	dispatch(g, PROG_SMOOTH_NORMALS, sim_world_vertex_count(w), 0); /* after the normals' barrier */
	glUseProgram(0);
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT); /* the kernels' writes, before the copy reads */
	glBindBuffer(GL_COPY_READ_BUFFER, g->state[B_X]);
	glBindBuffer(GL_COPY_WRITE_BUFFER, buffer);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, bytes);
	glBindBuffer(GL_COPY_READ_BUFFER, g->smooth_normals);
	glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, bytes, bytes);
	glBindBuffer(GL_COPY_READ_BUFFER, 0);
	glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
	return glGetError() == GL_NO_ERROR;
}

unsigned gpu_backend_normals_buffer(const gpu_backend *g) { return g->normals_valid ? g->normals : 0; }

unsigned gpu_backend_positions_buffer(const gpu_backend *g) { return g->normals_valid ? g->state[B_X] : 0; }

sim_result gpu_backend_run_resident(gpu_backend *g, sim_world *w, float dt, int steps)
{
	sim_integrator integ = sim_world_get_def(w)->integrator;
	if (!gpu_backend_supports(integ) || steps < 0)
		return SIM_ERROR_INVALID;
	float h = dt / (float)sim_world_get_def(w)->substeps;
	if (!prepare(g, w, h))
		return SIM_ERROR_INVALID;
	int n = sim_world_vertex_count(w);
	size_t bytes = sizeof(vec4) * (size_t)n;
	glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT); /* as in gpu_backend_normals */
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->state[B_X]);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, sim_world_positions(w));
	glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->state[B_V]);
	glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, sim_world_velocities(w));
	vec4 *x = malloc(bytes), *v = malloc(bytes);
	if (!x || !v) {
		free(x);
		free(v);
		return SIM_ERROR_OUT_OF_MEMORY;
	}
	if (integ == SIM_VERLET) { /* the history the CPU would start from: x - h v */
		const vec4 *x0 = sim_world_positions(w), *v0 = sim_world_velocities(w);
		for (int i = 0; i < n; i++) {
			for (int k = 0; k < 3; k++)
				x[i][k] = x0[i][k] - h * v0[i][k];
			x[i][3] = x0[i][3];
		}
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->state[B_X_PREV]);
		glBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, x);
	}
	int substeps = steps * sim_world_get_def(w)->substeps;
	for (int s = 0; s < substeps; s++)
		integrate(g, w, integ, s > 0);
	bool ok = true;
	{
		glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->state[B_X]);
		glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, x);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, g->state[B_V]);
		glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, v);
		glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
		for (int i = 0; i < n && ok; i++)
			ok = sim_world_set_vertex(w, i, x[i], v[i]) == SIM_OK;
	}
	free(x);
	free(v);
	glUseProgram(0);
	g->memory_fresh = false;
	return ok && glGetError() == GL_NO_ERROR ? SIM_OK : SIM_ERROR_INVALID;
}
