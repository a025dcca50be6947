/* Internal layout of the simulation world, shared by the sim sources only. */
#ifndef TELA_SIM_INTERNAL_H
#define TELA_SIM_INTERNAL_H

#include "sim/sim.h"

#include <cglm/vec3.h>
#include <cglm/vec4.h>
#include <cglm/quat.h>

#define SIM_NAME_MAX 64

/* Grid kernels work in whole blocks of SIM_BLOCK lanes and may read up to SIM_PLANE_TAIL
 * floats past the end of a plane; those tails are kept at zero. */
#define SIM_BLOCK 16
#define SIM_PLANE_TAIL 64

/* GCC on x86-64 builds each hot kernel marked SIM_VECTOR_CLONES three times (AVX-512,
 * AVX2, baseline) and picks one at load time.  All perform the same IEEE operations per
 * element in the same order (no contraction: -ffp-contract=off; sqrt and division are
 * correctly rounded everywhere), so the results are bit-identical whichever runs.
 * Sanitizer builds use the plain function (under ThreadSanitizer the clones' resolver,
 * instrumented, runs during relocation before the sanitizer's runtime and crashes). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) &&              \
    !defined(__SANITIZE_THREAD__)
#define SIM_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define SIM_VECTOR_CLONES
#endif

/* dst[i] += src[i] and dst[i] -= src[i] over one plane of floats (implicit.c): the
 * implicit solve and its multilevel preconditioner add and subtract planes alike. */
void sim_plane_add(float *restrict dst, const float *restrict src, int count);
void sim_plane_sub(float *restrict dst, const float *restrict src, int count);

/* Per-vertex constraint flags.  Any of them makes the vertex kinematic for the step:
 * inverse mass 0 and a velocity fixed by the constraint. */
enum {
	SIM_VERTEX_PINNED = 1u << 0,
	SIM_VERTEX_PRESCRIBED = 1u << 1,
	SIM_VERTEX_ATTACHED = 1u << 2,
};
#define SIM_VERTEX_CONSTRAINED (SIM_VERTEX_PINNED | SIM_VERTEX_PRESCRIBED | SIM_VERTEX_ATTACHED)

typedef struct sim_spring {
	int a, b;     /* world vertex indices */
	float rest;   /* rest length, m */
	float k;      /* stiffness, N/m */
	float kd;     /* damping along the spring, N s/m */
	int kind;     /* sim_spring_kind */
} sim_spring;

/* A grid object's springs come in six families, each a constant index offset
 * (di, dj) with one stiffness, damping and rest length: the force kernel walks them as
 * contiguous runs that the compiler vectorises, instead of scattering spring by spring. */
#define SIM_GRID_FAMILIES 6

typedef struct sim_grid_family {
	int di, dj;
	int kind;
	float k, kd, rest;
} sim_grid_family;

typedef struct sim_object {
	char name[SIM_NAME_MAX];
	int first_vertex, vertex_count;
	int first_triangle, triangle_count;
	int first_spring, spring_count;
	int springs_of_kind[SIM_SPRING_KIND_COUNT];
	sim_material material;
	int grid_nx, grid_ny; /* 0 for a mesh */
	sim_grid_family families[SIM_GRID_FAMILIES];
} sim_object;

typedef struct sim_velocity_block {
	double t;
	int vertex;    /* -1: the block sets an obstacle's velocity */
	int obstacle;
	vec3 velocity; /* NaN x ends the prescription */
} sim_velocity_block;

typedef struct sim_attachment {
	bool active;
	int vertex;
	float hertz, max_force;
	vec3 target, target_velocity;
	vec3 force; /* coupling force on the vertex in the last step */
} sim_attachment;

/* The implicit solver's scratch (see implicit.c). */
typedef struct sim_implicit sim_implicit;
/* The collision solver's state and scratch (see collide.c). */
typedef struct sim_collide sim_collide;
/* A bounding volume hierarchy over triangles (see bvh.c). */
typedef struct sim_bvh sim_bvh;

/* A rigid obstacle (see obstacle.c).  Boxes and meshes collide through their triangles
 * in the same pipeline as cloth (with infinite mass); planes, spheres and capsules
 * through their exact signed distance. */
typedef struct sim_obstacle {
	sim_obstacle_def def;      /* as given; its pointers are redirected to the copies below */
	char name[SIM_NAME_MAX];
	int vertex_count, triangle_count;
	float *local_positions;    /* box: its 8 corners; mesh: a copy of the given vertices */
	int *local_triangles;      /* box: its 12 triangles; mesh: a copy */
	bool closed;               /* every edge shared by two triangles, opposite ways: a solid */
	vec3 position;             /* current pose: where it is at the world's current time */
	versor orientation;
} sim_obstacle;

/* What the last step recorded for sim_world_debug_pairs (see sim_world_set_debug). */
typedef struct sim_debug_log {
	sim_debug_pair *pairs;
	int count, capacity;
	bool truncated;
} sim_debug_log;

/* Appends a pair; past SIM_DEBUG_MAX_PAIRS (or out of memory) it is dropped and the log
 * marked truncated. */
void sim_debug_record(sim_debug_log *log, int stage, int kind, int a, int b, int c, int d);

struct sim_world {
	sim_world_def def;

	/* particles, structure of arrays */
	int n, capacity;
	vec4 *x;          /* position; w = inverse mass the integrator uses (0: kinematic) */
	vec4 *v;          /* velocity; w unused (0) */
	vec4 *x_prev;     /* position one integrator step ago (Verlet, MRA) */
	vec4 *rest;       /* anchor (rest) position; w = anchor stiffness */
	vec4 *ext_force;  /* constant point force; w unused */
	vec4 *vc;         /* constraint velocity of a kinematic vertex for this step */
	vec4 *presc_v;    /* velocity of the current prescription block (SIM_VERTEX_PRESCRIBED) */
	float *mass;      /* kg */
	float *inv_mass;  /* free inverse mass (1 / mass) */
	float *anchor_kd; /* damping of the anchor spring, N s/m */
	uint8_t *flags;   /* SIM_VERTEX_* */
	int *owner;       /* object index of each vertex */
	bool has_anchors;    /* some vertex has an anchor spring or anchor damping */
	bool has_point_forces; /* some vertex has had a point force set */
	bool constraints_dirty; /* flags changed: rebuild the constrained list and x.w */
	int constrained_count;
	int *constrained;    /* indices of vertices with SIM_VERTEX_CONSTRAINED flags */
	bool history_valid; /* x_prev matches the current state and history_h */
	float history_h;

	/* springs and triangles, world indices */
	int spring_count, spring_capacity;
	sim_spring *springs;
	int triangle_count, triangle_capacity;
	int *triangles;   /* 3 world indices per triangle */
	int *local_triangles; /* 3 object-local indices per triangle (API view) */

	int object_count, object_capacity;
	sim_object *objects;

	int obstacle_count, obstacle_capacity;
	sim_obstacle *obstacles;
	/* sim_world_set_pair_friction's entries, bodies as keys (an object's index, an
	 * obstacle's -1 - index), each pair once with a <= b; the revision counts changes */
	struct sim_pair_mu {
		int a, b;
		float mu;
	} *pair_mu;
	int pair_mu_count, pair_mu_capacity;
	unsigned pair_mu_revision;
	sim_collide *collide;
	vec4 *x_start;        /* positions at the start of the substep (collision pipeline) */
	vec4 *pose_save;      /* obstacle poses at the start of a step (position, orientation) */
	int pose_save_capacity;

	/* constraints */
	int block_count, block_capacity;
	sim_velocity_block *blocks; /* sorted by time (stable) */
	int block_cursor;           /* first block not yet applied */
	int attachment_count, attachment_capacity;
	sim_attachment *attachments;

	/* integrator scratch, sized to capacity */
	vec4 *f;              /* force accumulator */
	/* Grid kernel scratch: the kernel runs on structure-of-arrays copies (x, y, z, vx, vy,
	 * vz, fx, fy, fz; 9 planes of `capacity` floats), which it vectorises about five
	 * times better than the interleaved vec4 layout, plus one row of forces or lengths. */
	float *planes;        /* plane k starts at planes + k * plane_stride */
	int plane_stride;     /* capacity + SIM_PLANE_TAIL */
	float *row;           /* 3 * row_capacity floats */
	int row_capacity;
	float *worker_rows;   /* sim_forces_timed's grid rows on many workers: a ring per worker */
	size_t worker_rows_floats;
	vec4 *tmp_x, *tmp_v;  /* stage states for midpoint and RK4 */
	vec4 *acc_x, *acc_v;  /* RK4 accumulators */
	vec4 *kang_dv;        /* Kang: the last step's velocity change */
	float *kang_k;        /* Kang: sum of incident spring stiffness per vertex */
	float *kang_kd;       /* Kang: sum of incident spring damping per vertex */
	sim_implicit *implicit;

	/* vertex -> incident springs (CSR), rebuilt when springs are added */
	bool incidence_valid;
	int *inc_start;   /* n + 1 */
	int *inc_spring;  /* 2 * spring_count */

	/* rollback state: x and v always; constraint state only while blocks are pending */
	vec4 *save_x, *save_v, *save_presc_v;
	uint8_t *save_flags;

	double time;
	int64_t steps;
	uint64_t revision;  /* sim_world_revision: bumped when what an external integrator copies changes */
	sim_stats stats;
	bool stats_fresh;   /* energies and strains in stats describe the current state */
	sim_blowup blowup;

	/* debug recording (sim_world_set_debug) */
	unsigned debug;
	sim_debug_log debug_log;
	vec4 *debug_predicted;  /* n vec4, valid while debug_predicted_valid */
	int debug_predicted_capacity;
	bool debug_predicted_valid;
};

/* The clock installed with sim_set_clock, or 0 without one. */
int64_t sim_now_ns(void);

/* ---- forces.c ---- */

/* Total force on every particle for state (x, v): gravity, air damping, springs with
 * damping, anchors, wind and point forces.  f is overwritten. */
void sim_compute_forces(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f);
/* The same without anchor springs and air damping, which the MRA scheme treats in
 * closed form. */
void sim_compute_forces_no_anchor(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f);
/* sim_compute_forces, timed into stats.stage_us[SIM_STAGE_FORCES]: what the integrators
 * call, so the solve stage's time excludes force evaluation. */
void sim_forces_timed(sim_world *w, const vec4 *x, const vec4 *v, vec4 *f);
/* Aerodynamic force (drag and lift) from the wind, added to f. */
void sim_add_wind_forces(const sim_world *w, const vec4 *x, const vec4 *v, vec4 *f);
/* Force on one vertex for state (x, v), through the incidence table: everything
 * sim_compute_forces applies except wind, which acts on whole triangles. */
void sim_vertex_force(sim_world *w, int i, const vec4 *x, const vec4 *v, vec3 out);
/* Builds the vertex -> spring incidence table if springs changed. */
void sim_update_incidence(sim_world *w);

/* ---- integrate.c ---- */

/* One integrator step of length h.  Kinematic vertices (x.w == 0) move with their
 * velocity vc, unaffected by forces. */
void sim_integrate(sim_world *w, float h);
/* Resets the Verlet/MRA history from the current velocities: x_prev = x - h v. */
void sim_reset_history(sim_world *w, float h);

/* ---- implicit.c ---- */

sim_implicit *sim_implicit_create(void);
void sim_implicit_destroy(sim_implicit *im);
/* Linearised backward Euler step of length h after Baraff and Witkin 1998: builds the
 * sparse force Jacobians, solves (M - h dF/dv - h^2 dF/dx) dv = h (f0 + h dF/dx v0)
 * with modified preconditioned CG (kinematic vertices filtered to dv = vc - v), then
 * x += h (v + dv).  Fills stats->cg_iterations and stats->cg_residual. */
sim_result sim_implicit_step(sim_world *w, float h, sim_stats *stats);
/* Drops the warm-start guess (after a rollback, so a retried step starts afresh). */
void sim_implicit_forget(sim_implicit *im);

/* ---- strain.c ---- */

/* Provot's strain limiting on structural and shear springs, on the positions the
 * integrator produced; the velocities change by the correction / h.  Returns the
 * number of sweeps used. */
int sim_strain_limit(sim_world *w, float h);

/* ---- obstacle.c ---- */

/* Copies the definition (and tessellates a box into 8 vertices and 12 triangles);
 * false on invalid input or out of memory, leaving o empty. */
bool sim_obstacle_init(sim_obstacle *o, const sim_obstacle_def *def);
void sim_obstacle_fini(sim_obstacle *o);
/* True for the shapes that collide through triangles (plane, box, mesh); a plane's are
 * a 200 m square. */
bool sim_obstacle_has_triangles(const sim_obstacle *o);
/* The pose t seconds after the current one, under the constant velocities (exact
 * rotation about the position). */
void sim_obstacle_pose_at(const sim_obstacle *o, float t, vec3 out_position, versor out_orientation);
/* Moves the current pose t seconds on. */
void sim_obstacle_advance(sim_obstacle *o, float t);
/* World positions of the obstacle's triangle vertices at a pose; w = 0 (infinite mass). */
void sim_obstacle_world_vertices(const sim_obstacle *o, const vec3 position, const versor orientation, vec4 *out);
/* Signed distance from p to the obstacle's surface at a pose (negative inside; for an
 * open mesh, the unsigned distance) and the outward unit normal at the closest point. */
float sim_obstacle_distance(const sim_obstacle *o, const vec3 position, const versor orientation, const vec3 p,
                            vec3 out_normal);
/* The same with the orientation's rotation matrix computed once (sim_obstacle_frame) for
 * many points: the same bits as sim_obstacle_distance. */
void sim_obstacle_frame(const versor orientation, double out_rotation[3][3]);
float sim_obstacle_distance_in(const sim_obstacle *o, const vec3 position, const double rotation[3][3], const vec3 p,
                               vec3 out_normal);
/* A sphere's signed distance to p alone: sim_obstacle_distance_in's value, bit for bit,
 * when the rotation is exactly the identity (a rotation only adds rounding to a sphere's
 * distance, and the identity adds none). */
float sim_obstacle_sphere_distance(const sim_obstacle *o, const vec3 position, const vec3 p);
/* Distance from the triangle tri (world, double) to a sphere's, capsule's or box's solid
 * at a pose (rotation from sim_obstacle_frame): negative down to minus the radius for a
 * sphere or capsule whose centre set the triangle comes closer to than the radius, 0
 * where it meets a box; INFINITY for other shapes.  out_w: the weights of the triangle's
 * nearest point; out_n: the unit direction from the obstacle to it (the face normal,
 * turned away from the obstacle's centre, where the two points coincide). */
double sim_obstacle_triangle_distance(const sim_obstacle *o, const vec3 position, const double rotation[3][3],
                                      const double tri[3][3], double out_w[3], double out_n[3]);
/* Velocity of the obstacle's material point at p (linear + angular x (p - position)). */
void sim_obstacle_point_velocity(const sim_obstacle *o, const vec3 position, const vec3 p, vec3 out);

/* ---- parallel work (world.c) ---- */

/* Runs task over [0, count) in ranges of at least min_range items through the world's
 * task callbacks, or inline on the caller without them (or with one worker). */
void sim_parallel_for(const sim_world *w, sim_task_fn *task, int count, int min_range, void *ctx);

/* ---- bvh.c ---- */

sim_bvh *sim_bvh_create(void);
void sim_bvh_destroy(sim_bvh *bvh);
/* Fits the hierarchy to triangles tris[0, count) (3 vertex indices each into x0 and
 * x1): every leaf box encloses its triangle at x0 and at x1, inflated by margin.  The
 * first call (or a different count) builds; later calls refit, and rebuild by
 * themselves once refitting has let the tree's quality degrade (the summed surface area
 * of the internal boxes grown past twice that of the last build).  false when out of
 * memory. */
bool sim_bvh_update(sim_bvh *bvh, const int *tris, int count, const vec4 *x0, const vec4 *x1, float margin);
/* The same with each triangle's box given (boxes[0, count)), inflated by margin.  With
 * tris (3 vertex indices per triangle), the tree also holds the triangles' vertices, and
 * its traversals (between two trees: when both hold them) and its queries given a
 * triangle's vertices leave out the pairs of triangles that share one. */
typedef struct sim_box {
	float lo[3], hi[3];
} sim_box;
bool sim_bvh_update_boxes(sim_bvh *bvh, const sim_box *boxes, const int *tris, int count, float margin);
/* The same, a refit's leaves split into fixed ranges through w's task callbacks (w NULL:
 * on the caller); the tree is the same whatever the split.  With groups (NULL: none), a
 * group per triangle: the pairs of two triangles with one non-negative group are never
 * reported by the tree's traversals with itself (collide.c's certified patches, which
 * cannot meet themselves); two trees' traversals and the queries ignore groups. */
bool sim_bvh_update_boxes_on(sim_bvh *bvh, const sim_box *boxes, const int *tris, const int *groups, int count,
                             float margin, const sim_world *w);
/* The in-place refresh's refit: as sim_bvh_update_boxes_on, for triangles whose boxes
 * or groups have changed since the last update only where marked[t] is set (same count,
 * margin and vertices): the tree is the one sim_bvh_update_boxes_on gives, but only the
 * leaves that hold a marked triangle are refitted (the internal nodes all are, for the
 * rebuild rule).  The tree is left marked as by sim_bvh_mark(marked), for
 * sim_bvh_marked_pairs. */
bool sim_bvh_update_marked(sim_bvh *bvh, const sim_box *boxes, const int *tris, const int *groups, int count,
                           float margin, const unsigned char *marked, const sim_world *w);
/* Pairs of triangle indices (a < b) of one tree whose leaf boxes overlap, and pairs (a
 * of tree p, b of tree q) of two trees; in a fixed, deterministic order. */
typedef void (*sim_bvh_pair_fn)(void *user, int a, int b);
void sim_bvh_self_pairs(const sim_bvh *bvh, sim_bvh_pair_fn fn, void *user);
void sim_bvh_pairs(const sim_bvh *p, const sim_bvh *q, sim_bvh_pair_fn fn, void *user);
/* The same traversals in pieces, for a parallel broad phase: sim_bvh_split writes up to
 * capacity jobs (scratch: room for as many), expanding the traversal's root level by
 * level until there are at least target or no more fit, and running every job with
 * sim_bvh_run_job, in job order, reports exactly the pairs of sim_bvh_self_pairs (q ==
 * p) or sim_bvh_pairs in the same order; jobs can run concurrently.  Returns the job
 * count (0: nothing to report). */
typedef struct sim_bvh_job {
	int i, j;
} sim_bvh_job;
int sim_bvh_split(const sim_bvh *p, const sim_bvh *q, sim_bvh_job *jobs, sim_bvh_job *scratch, int capacity,
                  int target);
void sim_bvh_run_job(const sim_bvh *p, const sim_bvh *q, sim_bvh_job job, sim_bvh_pair_fn fn, void *user);
/* The same job's pairs a leaf pair at a time: mask bit 4 i + k stands for the pair of
 * triangles ta[i] and tb[k], reported by sim_bvh_run_job (in the order of the bits, low
 * first) as (ta[i], tb[k]), or with sorted as the smaller index first; one call per
 * leaf pair (or leaf with itself) with a nonzero mask, so that the caller pays one call
 * for up to sixteen pairs. */
typedef void (*sim_bvh_mask_fn)(void *user, const int *ta, const int *tb, unsigned mask, bool sorted);
void sim_bvh_run_job_masks(const sim_bvh *p, const sim_bvh *q, sim_bvh_job job, sim_bvh_mask_fn fn, void *user);
/* The triangles whose leaf boxes overlap `box` inflated by margin, in a fixed order;
 * with verts (3 vertex indices) and a tree that holds its vertices, those that share
 * none of them. */
typedef void (*sim_bvh_hit_fn)(void *user, int t);
void sim_bvh_query(const sim_bvh *bvh, const sim_box *box, const int *verts, float margin, sim_bvh_hit_fn fn,
                   void *user);
/* The in-place refresh's traversal.  sim_bvh_mark flags the triangles t with marked[t]
 * (until the next call; a rebuild clears the flags) and returns whether any is;
 * sim_bvh_marked_pairs reports the pairs of sim_bvh_self_pairs (q == p) or sim_bvh_pairs
 * with at least one marked triangle, exactly those, in an order of its own, skipping
 * the node pairs of two unmarked subtrees. */
bool sim_bvh_mark(sim_bvh *bvh, const unsigned char *marked);
void sim_bvh_marked_pairs(const sim_bvh *p, const sim_bvh *q, sim_bvh_pair_fn fn, void *user);
/* The marked pairs of one job of sim_bvh_split(p, q): over the jobs, exactly the pairs of
 * sim_bvh_marked_pairs (in job order, in its order). */
void sim_bvh_run_marked_job(const sim_bvh *p, const sim_bvh *q, sim_bvh_job job, sim_bvh_pair_fn fn, void *user);
/* Builds since creation (refits do not count), for the benchmark. */
int sim_bvh_build_count(const sim_bvh *bvh);
/* The tree's node boxes with depth (root 0; a leaf's triangle boxes one below it) in
 * [depth_min, depth_max], in pre-order, written from out[filled] while below capacity;
 * returns filled plus how many there are. */
int sim_bvh_debug_boxes(const sim_bvh *bvh, int depth_min, int depth_max, float (*out)[7], int capacity, int filled);
/* The depth of the deepest triangle box, -1 for an empty tree. */
int sim_bvh_debug_depth(const sim_bvh *bvh);

/* ---- collide.c ---- */

sim_collide *sim_collide_create(void);
void sim_collide_destroy(sim_collide *c);
/* The collision pipeline for one substep of length h: the particles moved from
 * w->x_start to w->x (velocities w->v) under internal dynamics; obstacles move from their
 * current pose over h.  Contact impulses at the start, then continuous collision
 * impulses, then rigid impact zones until the end of the substep is free of the
 * collisions it can detect; x and v are corrected in place.  Adds its counts and stage
 * timings to st.  SIM_ERROR_OUT_OF_MEMORY when a buffer could not grow. */
sim_result sim_collide_substep(sim_world *w, float h, sim_stats *st);
/* Debug views: the hierarchies' boxes with depth in [depth_min, depth_max] (see
 * sim_world_debug_boxes), and the deepest level. */
int sim_collide_debug_boxes(const sim_collide *c, int depth_min, int depth_max, float (*out)[7], int capacity);
int sim_collide_debug_depth(const sim_collide *c);
/* For tests: the candidates as they stand (vertex-face pairs, then edge-edge pairs), each
 * as its four collision vertices (the vertex then the triangle's, or the two edges', as
 * the debug log names them) with its lower bound on the primitives' distance at the
 * last contact search's start (0: none); at most capacity are written, the count is
 * returned and the vertex-face pairs' in vertex_faces. */
int sim_collide_debug_candidates(const sim_collide *c, int (*v)[4], double *lb, int capacity, int *vertex_faces);
/* For tests: how many broad phases were started early, by a window's last substep
 * (collide.c, early_broad_phase), and finished by the next. */
int sim_collide_debug_early_windows(const sim_collide *c);
/* For tests: the leaf pairs the trees reported (a call each, with up to 16 triangle
 * pairs) and the neighbour-list entries tested in the last full broad phase that ran on
 * the caller's substep (an early one adds its share to the next). */
long sim_collide_debug_tested(const sim_collide *c);
/* For tests: the chunks after the first that the parallel sweeps were cut into, in all
 * (collide.c, sweep). */
long sim_collide_debug_sweep_chunks(const sim_collide *c);
/* For tests: gives the candidates as they stand the bounds of the same pairs in the list
 * the last broad phase or refresh set aside, once as carry_bounds does (collide.c) and
 * once by brute force (sorted old pairs), and returns how many differ (-1: that list is
 * gone, or out of memory); *from_run: the pairs found in the set-aside list's run of
 * neighbour-list candidates.  Only while the topology is the one both lists were made
 * for. */
int sim_collide_debug_carry(sim_collide *c, const sim_world *w, int *from_run);

/* ---- measure (world.c) ---- */
float sim_spring_strain(const sim_spring *s, const vec4 *x);

/* Splits vec4s into three planes of n floats (x, y, z). */
void sim_to_planes(const vec4 *restrict src, float *restrict px, float *restrict py, float *restrict pz, int n);

/* Spring potential energy, maximum strain and sum of |strain| over the structural and
 * shear springs (count in *counted), for every object; grids through the row kernel. */
void sim_measure_springs(const sim_world *w, const vec4 *x, double *energy, float *max_strain, double *sum_strain,
                         int *counted);
/* What the blow-up check needs, in one cheap pass: a sum of every position and speed^2
 * (non-finite iff some value is), the largest v^2, and the largest (l / L)^2 over the
 * structural and shear springs (no square root per spring). */
typedef struct sim_probe {
	float sum, top_v2, top_stretch2;
} sim_probe;
sim_probe sim_probe_state(const sim_world *w);

#endif
