/* The GPU integrator's buffers, written once for both sides: app/gpu_backend.c includes
 * this file as C (after <stdint.h> and cglm's types) and checks every size and offset
 * with static_assert; shaders/CMakeLists.txt puts it, with TELA_GLSL defined, between
 * "#version 430" and each gpu_*.comp body.  Only vec4 and 4-byte scalars appear, in
 * whole 16-byte rows, so std430 (the storage blocks) and std140 (the parameter block)
 * place them exactly as C does: no member needs padding the compiler would not add.
 * docs/gpu.md describes the buffers and the order of the dispatches. */
#ifndef TELA_GPU_LAYOUT_H
#define TELA_GPU_LAYOUT_H

#ifdef TELA_GLSL
#define GPU_UINT uint
#else
#define GPU_UINT uint32_t
#endif

/* Invocations per work group of every kernel (one per vertex or per triangle). */
#define GPU_GROUP 64

/* Storage-buffer binding points.  GPU_BIND_STATE_X/V are the state a force evaluation
 * reads: the backend binds x and v, or a midpoint/RK4 stage state, there. */
#define GPU_BIND_VERTICES 0
#define GPU_BIND_SPRINGS 1
#define GPU_BIND_ADJACENCY 2
#define GPU_BIND_TRIANGLES 3
#define GPU_BIND_TRI_FORCE 4
#define GPU_BIND_STATE_X 5
#define GPU_BIND_STATE_V 6
#define GPU_BIND_F 7
#define GPU_BIND_X 8
#define GPU_BIND_V 9
#define GPU_BIND_X_PREV 10
#define GPU_BIND_TMP_X 11
#define GPU_BIND_TMP_V 12
#define GPU_BIND_ACC_X 13
#define GPU_BIND_ACC_V 14
#define GPU_BIND_KANG_DV 15
/* Implicit Euler's own buffers (it reuses tmp_x, tmp_v, acc_x, acc_v and kang_dv as the
 * CG vectors r, s, c, q and dv). */
#define GPU_BIND_IMPL_SPRING 16 /* per spring: (w, beta) and g, two vec4 */
#define GPU_BIND_IMPL_PRE 17    /* per vertex: preconditioner block xx xy xz yy | yz zz d mask */
#define GPU_BIND_PARTIALS 18    /* per work group: a partial dot product, double */
#define GPU_BIND_COUNTER 19     /* strain limiting: springs corrected in a sweep (uint) */
#define GPU_BIND_STRAIN_LIST 20 /* strain limiting: structural and shear springs by colour (uint) */
#define GPU_BIND_NORMALS 21     /* per vertex: the cloth's unit normal, w 0 (gpu_normals.comp) */
#define GPU_BIND_SMOOTH_NORMALS 22 /* per vertex: those normals smoothed (gpu_smooth_normals.comp) */
#define GPU_BIND_COUNT 23
/* The most storage blocks one kernel uses (gpu_implicit.comp); GL 4.3 promises only 8 per
 * compute shader, so the backend checks GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS. */
#define GPU_MAX_BLOCKS 14
/* Uniform-buffer binding point of gpu_params. */
#define GPU_BIND_PARAMS 0

/* Explicit uniform locations of the per-dispatch values. */
#define GPU_LOC_STAGE 0  /* uint: which part of a multi-pass scheme runs */
#define GPU_LOC_WEIGHT 1 /* float: RK4 stage weight */
#define GPU_LOC_NEXT 2   /* float: RK4 next-stage fraction of h */
#define GPU_LOC_SCALAR 3 /* float: CG's alpha or beta */
#define GPU_LOC_FIRST 4  /* uint: strain limiting: the colour's first entry in the list */
#define GPU_LOC_COUNT 5  /* uint: strain limiting: the colour's springs */

/* What stays the same for a step: the world definition and the substep. */
struct gpu_params {
	vec4 gravity;          /* m/s^2, w 0 */
	vec4 wind;             /* m/s, w: 1/2 air density */
	float h;               /* substep, s */
	float air_damping;     /* 1/s */
	float drag;            /* drag coefficient */
	float lift;            /* lift coefficient */
	float verlet_d;        /* Verlet: 1, or 0.99 with the drag form */
	GPU_UINT vertex_count;
	GPU_UINT triangle_count;
	GPU_UINT wind_on;      /* 1 when the wind exerts a force at all */
	GPU_UINT spring_count;
	float strain_limit;    /* Provot: 1 + tau */
	float strain_trigger;  /* Provot: (1 + tau)(1 + 1e-5), the CPU's slack */
	GPU_UINT pad0;
};

/* Per-vertex constants and adjacency ranges into the adjacency buffer (spring indices
 * first, then triangle indices; each range in the world's order, so a gather adds in
 * the order the CPU scatters). */
struct gpu_vertex {
	vec4 rest;            /* anchor position, w: anchor stiffness */
	vec4 point_force;     /* N, w 0 */
	float mass;
	float anchor_kd;
	float kang_k;         /* sum of incident spring stiffness (Kang) */
	float kang_kd;        /* sum of incident spring damping (Kang) */
	GPU_UINT spring_first;
	GPU_UINT spring_count;
	GPU_UINT tri_first;
	GPU_UINT tri_count;
};

struct gpu_spring {
	GPU_UINT a, b;
	float rest, k, kd;
	GPU_UINT kind;
	GPU_UINT pad0, pad1;
};

#endif
