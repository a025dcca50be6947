/* The GPU integrator (issue 7): the integrators' updates and the force evaluations run as
 * OpenGL 4.3 compute shaders (shaders/gpu_*.comp) on a copy of the world's particles,
 * while everything else of the step (constraints, strain limiting, collisions, the
 * blow-up check and rollback) stays the sim library's, through sim_world_step_external.
 * Needs an OpenGL 4.3 core context current on the calling thread for every call.
 * docs/gpu.md describes the buffers, the dispatches and the hand-over. */
#ifndef TELA_GPU_BACKEND_H
#define TELA_GPU_BACKEND_H

#include "sim/sim.h"

#include <stdbool.h>
#include <stdint.h>

/* One backend holds one world's data at a time: stepping another world uploads that
 * world's constants (and restarts Kang's memory). */
typedef struct gpu_backend gpu_backend;

/* Compiles every compute program and checks the context's limits.  NULL on failure, with
 * a message (a shader's compile or link log, or the missing capability). */
gpu_backend *gpu_backend_create(char *error, int error_size);
/* With the creating context, or one sharing its objects, current: names are per share
 * group, so in an unrelated context the deletes and the unmapping would hit that
 * context's objects of the same names (or none: GL errors). */
void gpu_backend_destroy(gpu_backend **g);

/* Whether the GPU has the integrator (MRA, the seed's scheme, runs on the CPU only). */
bool gpu_backend_supports(sim_integrator integrator);

/* Provot strain limiting (when the world's definition asks for it) on the GPU, as
 * coloured Gauss-Seidel sweeps, instead of on the CPU between the GPU and the collisions;
 * off by default (docs/gpu.md). */
void gpu_backend_set_strain_on_gpu(gpu_backend *g, bool on);

/* One sim_world_step with the integrator's update on the GPU: per substep the
 * constrained state goes up, the scheme runs, the candidate state comes back and the sim
 * library finishes the substep.  SIM_ERROR_INVALID for an integrator the GPU lacks or a
 * GL error (the world is then rolled back). */
sim_result gpu_backend_step(gpu_backend *g, sim_world *w, float dt);

/* Runs `steps` steps of the current integrator entirely on the GPU, with no hand-over
 * between them (no collisions, constraints frozen as they are): the benchmark's measure
 * of the compute alone.  The world receives the final state but its time does not move;
 * for `tela bench gpu` only. */
sim_result gpu_backend_run_resident(gpu_backend *g, sim_world *w, float dt, int steps);

/* Per-vertex normals on the GPU (shaders/gpu_normals.comp), the renderer's formula and
 * order (rd_vertex_normals): with `on`, every gpu_backend_step ends with
 * gpu_backend_normals.  Off by default: the demo calls gpu_backend_normals itself, once
 * per published state rather than per step (app/demo_gpu.c). */
void gpu_backend_set_normals(gpu_backend *g, bool on);

/* Uploads the world's current positions and computes their normals on the GPU; false on
 * a GL error.  Afterwards the two buffers below hold them, one vec4 per vertex (normals:
 * unit, w 0), until the next step overwrites the positions' buffer. */
bool gpu_backend_normals(gpu_backend *g, const sim_world *w);
/* The GL names of those buffers; 0 when no normals pass succeeded since the buffers were
 * last made. */
unsigned gpu_backend_normals_buffer(const gpu_backend *g);
unsigned gpu_backend_positions_buffer(const gpu_backend *g);

/* The demo's draw buffer (docs/gpu.md, "The demo draws from the GPU"): the normals pass
 * for the world's current positions, then those positions and their normals copied into
 * `buffer` (at least 2 n vec4: n positions, then n normals).  Only queued; the caller
 * fences it.  false on a GL error. */
bool gpu_backend_fill_draw_buffer(gpu_backend *g, const sim_world *w, unsigned buffer);

/* Where the time of gpu_backend_step went, summed since creation (wall clock on the CPU):
 * writing the state into the mapped upload buffer, waiting for the GPU (copies and
 * dispatches), and reading the result back from the mapped download buffer. */
typedef struct gpu_timing {
	double upload_us, gpu_us, download_us;
	int64_t substeps;
	int cg_iterations; /* implicit Euler: iterations of the last solve */
	bool persistent; /* persistent mapped buffers (GL 4.4 buffer storage); else copies */
} gpu_timing;
gpu_timing gpu_backend_timing(const gpu_backend *g);

/* For tests: with `on`, before every substep each buffer the substep must write before
 * it reads (forces, stage states, accumulators, the wind's per-triangle forces, the CG
 * blocks and vectors, the partial sums, the strain counter) is filled with NaN, as a
 * driver may hand out a store holding another buffer's old contents (llvmpipe gives
 * zeros).  A kernel that reads what no pass of the substep wrote then shows as NaN. */
void gpu_backend_set_poison(gpu_backend *g, bool on);

/* Compiles and links one compute shader; 0 with "name: log" on failure.  (Exposed so that
 * the tests can check that a broken shader's log reaches the message.) */
unsigned gpu_compile_compute(const char *name, const char *source, char *error, int error_size);

#endif
