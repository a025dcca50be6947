/*
 * tela simulation library: mass-spring cloth and deformable objects.
 *
 * The world owns every particle of every object in one structure-of-arrays
 * block (positions with inverse mass in w, velocities), so an integrator sees
 * one system and a GPU backend can share the same buffers later.  Objects are
 * contiguous ranges of that block.
 *
 * Units: metres, kilograms, seconds.  World frame is y-up.
 *
 * The library depends on cglm and libm only: no files, no clocks, no GL.
 */
#ifndef TELA_SIM_H
#define TELA_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cglm/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- integrators ---------------------------------------------------------------------------- */

typedef enum sim_integrator {
	SIM_EULER,      /* explicit (forward) Euler */
	SIM_SYMPLECTIC, /* semi-implicit Euler: v first, then x with the new v */
	SIM_MIDPOINT,   /* explicit midpoint (RK2) */
	SIM_RK4,        /* classical fourth-order Runge-Kutta */
	SIM_VERLET,     /* position Verlet, optionally with the 1.99/0.99 drag form */
	SIM_IMPLICIT,   /* linearised implicit Euler after Baraff and Witkin 1998 */
	SIM_KANG,       /* Kang's approximate implicit update (one Jacobi sweep) */
	SIM_MRA,        /* seed 002 mass-spring-damper finite difference scheme */
	SIM_INTEGRATOR_COUNT
} sim_integrator;

/* Command-line name of an integrator ("euler", "symplectic", ...). */
const char *sim_integrator_name(sim_integrator integrator);
/* Parses a name; returns false for an unknown one. */
bool sim_integrator_from_name(const char *name, sim_integrator *out);

/* ---- materials and definitions ------------------------------------------------------------- */

typedef enum sim_spring_kind {
	SIM_SPRING_STRUCTURAL, /* grid edges / mesh edges */
	SIM_SPRING_SHEAR,      /* grid diagonals / across the shared edge of a quad */
	SIM_SPRING_BEND,       /* skip-one grid edges / across the shared edge of two triangles */
	SIM_SPRING_KIND_COUNT
} sim_spring_kind;

typedef struct sim_material {
	/* Mass: total_mass (kg) if > 0, otherwise areal_density (kg/m^2) times the area.  A
	 * grid gives every vertex the same share; a mesh spreads it by each vertex's share of
	 * the area (a third of each incident triangle). */
	float total_mass;
	float areal_density;
	float stiffness[SIM_SPRING_KIND_COUNT]; /* N/m */
	float damping[SIM_SPRING_KIND_COUNT];   /* N s/m, along the spring */
	/* Zero-length springs from every vertex to its rest position (the seed 002
	 * tetrahedron returns to rest this way); 0 disables them. */
	float anchor_stiffness; /* N/m */
	float anchor_damping;   /* N s/m */
	float thickness;        /* m, for the collision solver */
	float friction;         /* Coulomb coefficient, for the collision solver */
} sim_material;

/* Sensible cloth defaults: 0.2 kg/m^2, stiff structural springs, weak bending. */
sim_material sim_material_default(void);

/* ---- parallel work (after Box2D v3's task interface) ------------------------------------------ */

/* The library never creates threads.  It splits its parallel-safe loops into ranges of
 * items and hands each loop to the application, which runs task(start, end, worker,
 * task_context) over ranges covering [0, item_count) exactly once, each at least
 * min_range items long (except the last), on any of its worker_count workers (worker in
 * [0, worker_count)), in any order, possibly inline.  Results do not depend on the
 * worker count or the schedule: every range writes only its own items or its own
 * output, and outputs are merged in item order (docs/collisions.md, "Parallel work"). */
#define SIM_MAX_WORKERS 64
typedef void sim_task_fn(int start, int end, int worker, void *task_context);
/* Starts a loop; returns a handle for finish_task, or NULL when it ran the whole loop
 * before returning. */
typedef void *sim_enqueue_task_fn(sim_task_fn *task, int item_count, int min_range, void *task_context,
                                  void *user_context);
/* Waits until every range of the loop has run. */
typedef void sim_finish_task_fn(void *user_task, void *user_context);

typedef struct sim_world_def {
	vec3 gravity;          /* m/s^2, default (0, -9.81, 0) */
	float air_damping;     /* 1/s: every particle feels -air_damping * m * v */
	vec3 wind;             /* m/s, wind velocity for the aerodynamic force */
	float air_density;     /* kg/m^3, default 1.2 */
	float drag_coefficient;
	float lift_coefficient;
	sim_integrator integrator;
	int substeps;          /* integrator steps per sim_world_step (>= 1) */
	bool verlet_drag;      /* Verlet uses x' = 1.99 x - 0.99 x_prev + h^2 a */
	/* Provot strain limiting of structural and shear springs. */
	bool strain_limit;
	float strain_tau;      /* maximum relative elongation, default 0.10 */
	int strain_iterations; /* cap on Gauss-Seidel sweeps, default 200 */
	/* Implicit Euler: relative residual tolerance and iteration cap of the CG solve. */
	float cg_tolerance;
	int cg_max_iterations;
	/* Blow-up detection: a step fails when any value is non-finite, a structural or
	 * shear spring is stretched beyond blowup_strain, or a particle moves faster than
	 * blowup_speed (m/s). */
	float blowup_strain;
	float blowup_speed;
	/* Collisions (Bridson, Fedkiw and Anderson 2002): cloth against obstacles, other
	 * cloth and itself.  Thickness and friction come from the materials. */
	bool collisions;           /* default true */
	bool self_collisions;      /* cloth against itself and other cloth, default true */
	int collision_iterations;  /* CCD impulse sweeps before the impact-zone fail-safe, default 8 */
	/* Parallel work: both callbacks or neither (then every loop runs inline on the
	 * caller), worker_count in [1, SIM_MAX_WORKERS] (default 1: inline). */
	int worker_count;
	sim_enqueue_task_fn *enqueue_task;
	sim_finish_task_fn *finish_task;
	void *user_task_context;   /* passed to both callbacks */
} sim_world_def;

sim_world_def sim_world_def_default(void);

/* A cloth as a rectangular grid of nx by ny vertices spanning size_x by size_y metres.
 * The grid lies in the plane through origin spanned by axis_u (nx direction) and
 * axis_v (ny direction); vertex (i, j) has index j * nx + i. */
typedef struct sim_grid_def {
	const char *name;
	int nx, ny;
	float size_x, size_y;
	vec3 origin;
	vec3 axis_u, axis_v; /* unit vectors; default x and -z (a horizontal sheet) */
	sim_material material;
} sim_grid_def;

sim_grid_def sim_grid_def_default(void);

/* A cloth from an indexed triangle mesh.  Two triangles whose opposite vertices are as
 * far apart as their shared edge is long form a near-rectangular quad: its two diagonals
 * (the shared edge and the opposite pair) become shear springs.  Every other edge is a
 * structural spring, and a bend spring joins the opposite vertices across every other
 * interior edge. */
typedef struct sim_mesh_def {
	const char *name;
	int vertex_count;
	const float *positions; /* 3 floats per vertex */
	int triangle_count;
	const int *triangles;   /* 3 indices per triangle */
	sim_material material;
} sim_mesh_def;

/* ---- results and diagnostics ---------------------------------------------------------------- */

typedef enum sim_result {
	SIM_OK = 0,
	SIM_ERROR_BLOWUP = -1,      /* the step diverged; the world was rolled back */
	SIM_ERROR_INVALID = -2,     /* bad argument (non-finite value, index out of range) */
	SIM_ERROR_OUT_OF_MEMORY = -3,
} sim_result;

const char *sim_result_string(sim_result result);

enum sim_stage {
	SIM_STAGE_FORCES,      /* force and Jacobian evaluation */
	SIM_STAGE_SOLVE,       /* integrator update and linear solve */
	SIM_STAGE_STRAIN,      /* Provot strain limiting */
	SIM_STAGE_CHECK,       /* blow-up check and diagnostics */
	SIM_STAGE_REFIT,       /* collision: bounding volume hierarchy refit or rebuild */
	SIM_STAGE_BROAD,       /* collision: candidate pairs from the hierarchy */
	SIM_STAGE_PROXIMITY,   /* collision: contact (repulsion and friction) impulses */
	SIM_STAGE_CCD,         /* collision: continuous detection and collision impulses */
	SIM_STAGE_FAILSAFE,    /* collision: rigid impact zones */
	SIM_STAGE_COUNT
};

typedef struct sim_stats {
	double kinetic;        /* J */
	double potential;      /* J: gravity (relative to y = 0) + springs + anchors */
	float max_strain;      /* over structural and shear springs, (l - L) / L */
	float mean_strain;
	int cg_iterations;     /* implicit Euler: iterations of the last solve */
	float cg_residual;     /* implicit Euler: relative residual of the last solve */
	int strain_iterations; /* Provot sweeps used in the last substep */
	int contacts;          /* proximity pairs that got a repulsion impulse (summed over substeps) */
	int collisions;        /* CCD pairs that got a collision impulse (summed over substeps) */
	int impact_zones;      /* fail-safe rigid impact zones formed (summed over substeps) */
	int self_contacts;     /* of contacts and collisions, those between cloth vertices only */
	int largest_zone;      /* vertices in the largest impact zone of the step */
	int candidates;        /* broad-phase pairs the contacts tested (summed over substeps) */
	int broad_phases;      /* full broad phases run (early ones included), and the */
	int refreshed_triangles; /* triangles the in-place refreshes redid (both summed over substeps) */
	int patches;           /* certified blocks of the grids' patches after the step, of */
	int patch_blocks;      /* the blocks there are (0 without self collisions or grids; docs/collisions.md) */
	double stage_us[SIM_STAGE_COUNT]; /* time per stage, summed over substeps */
	/* Parts of the stages above that decide how well a step uses several workers
	 * (docs/benchmarks.md): of the solve, the multilevel cycles' levels 2 and below, on
	 * the calling thread alone; of ccd and failsafe, the collision sweeps' parallel
	 * pre-pass and their in-order walk (the walk on the calling thread alone; on one
	 * thread the whole sweep is the walk). */
	double coarse_us, prepass_us, walk_us;
} sim_stats;

/* Where a blow-up happened. */
typedef struct sim_blowup {
	int object;           /* object index */
	int vertex;           /* vertex index within the object */
	const char *reason;   /* "non-finite position", "strain", "speed", ... */
	float value;          /* the offending value (strain, speed) */
} sim_blowup;

/* A monotonic clock for per-stage timings, in nanoseconds.  The library never reads
 * a clock by itself (timings are 0 without one); the application installs one. */
typedef int64_t (*sim_clock_fn)(void);
void sim_set_clock(sim_clock_fn clock);

/* ---- world ---------------------------------------------------------------------------------- */

typedef struct sim_world sim_world;

sim_world *sim_world_create(const sim_world_def *def);
void sim_world_destroy(sim_world **world);

const sim_world_def *sim_world_get_def(const sim_world *world);
/* Changes settings between steps.  Switching integrator keeps the state continuous. */
sim_result sim_world_set_def(sim_world *world, const sim_world_def *def);
sim_result sim_world_set_integrator(sim_world *world, sim_integrator integrator);

/* Adds objects; the return value is the object index, or a negative sim_result. */
int sim_world_add_grid(sim_world *world, const sim_grid_def *def);
int sim_world_add_mesh(sim_world *world, const sim_mesh_def *def);
/* The tetrahedron of seed 002: four vertices at the corners of a regular tetrahedron
 * with the given edge length, six edge springs (structural) and anchor springs to
 * the rest shape.  Vertex 3 is the apex above the base centred at `center`. */
int sim_world_add_tetrahedron(sim_world *world, const char *name, const vec3 center, float edge,
                              const sim_material *material);

int sim_world_object_count(const sim_world *world);
const char *sim_world_object_name(const sim_world *world, int object);
/* Range of the object's vertices in the world's particle arrays. */
int sim_world_object_first_vertex(const sim_world *world, int object);
int sim_world_object_vertex_count(const sim_world *world, int object);
int sim_world_object_triangle_count(const sim_world *world, int object);
/* Triangles of the object, as object-local vertex indices (3 per triangle). */
const int *sim_world_object_triangles(const sim_world *world, int object);
int sim_world_object_spring_count(const sim_world *world, int object, sim_spring_kind kind);
/* The object's material, and a live change of it (the demo's panel): spring stiffness
 * and damping per kind, anchors, thickness, friction and the total mass or density
 * (each vertex keeps its share of the mass). */
const sim_material *sim_world_object_material(const sim_world *world, int object);
sim_result sim_world_set_material(sim_world *world, int object, const sim_material *material);

int sim_world_vertex_count(const sim_world *world);
/* Particle state, one vec4 per vertex: positions (xyz, w = inverse mass as the
 * integrator saw it in the last step: 0 for constrained vertices) and velocities. */
const vec4 *sim_world_positions(const sim_world *world);
const vec4 *sim_world_velocities(const sim_world *world);
float sim_world_vertex_mass(const sim_world *world, int vertex);
double sim_world_time(const sim_world *world);
int64_t sim_world_step_count(const sim_world *world);

/* Sets a vertex state directly (tests, scene set-up); vertex is a world index. */
sim_result sim_world_set_vertex(sim_world *world, int vertex, const vec3 position, const vec3 velocity);

/* ---- forces and constraints ----------------------------------------------------------------- */

/* A constant external force on a vertex (N), until changed; zero removes it. */
sim_result sim_world_set_point_force(sim_world *world, int vertex, const vec3 force);

/* Pins a vertex where it is (velocity 0) or releases it. */
sim_result sim_world_pin(sim_world *world, int vertex, bool pinned);
bool sim_world_is_pinned(const sim_world *world, int vertex);
/* Sets out[i] (sim_world_vertex_count entries) to 1 for every vertex that something other
 * than the forces moves, now or at any time of the script: pinned, attached, or named by
 * a velocity block (before its prescription starts as well as after it ends), else 0.
 * Unlike w of sim_world_positions, which describes the last step (before the first step
 * every vertex shows its free inverse mass), this holds from the moment the world is
 * built.  A pointer's grab is meant for the other vertices. */
void sim_world_driven_vertices(const sim_world *world, uint8_t *out);

/* Prescribed velocities in blocks (the seed 000 format): from time t on, vertex moves
 * with velocity v until the next block that names it.  Blocks must be added in
 * non-decreasing time order per vertex.  A block with a NaN velocity ends the
 * prescription and returns the vertex to free motion. */
sim_result sim_world_add_velocity_block(sim_world *world, double t, int vertex, const vec3 velocity);
void sim_world_clear_velocity_blocks(sim_world *world);

/* Attachment: drives a vertex toward a moving target with a critically damped coupling
 * of the given natural frequency, capped at max_force.  The vertex acts as a velocity
 * constraint (infinite mass) for the step. */
typedef struct sim_attachment_def {
	int vertex;
	float hertz;     /* natural frequency of the coupling, default 20 Hz */
	float max_force; /* N, default 50 */
} sim_attachment_def;

sim_attachment_def sim_attachment_def_default(int vertex);
/* Returns an attachment id (>= 0) or a negative sim_result. */
int sim_world_attach(sim_world *world, const sim_attachment_def *def);
sim_result sim_world_attachment_set_target(sim_world *world, int attachment, const vec3 position,
                                           const vec3 velocity);
/* Force the coupling exerted on the vertex in the last step (what the pointer feels,
 * negated), in N. */
sim_result sim_world_attachment_force(const sim_world *world, int attachment, vec3 out_force);
sim_result sim_world_detach(sim_world *world, int attachment);

/* ---- obstacles ------------------------------------------------------------------------------ */

/* Rigid obstacles have infinite mass.  A kinematic one moves with a constant linear and
 * angular velocity (about its position) until changed; a static one has both zero. */
typedef enum sim_shape {
	SIM_SHAPE_PLANE,   /* half-space below the plane through position with normal local +y */
	SIM_SHAPE_SPHERE,  /* radius */
	SIM_SHAPE_BOX,     /* half_extents, in the local frame */
	SIM_SHAPE_CAPSULE, /* radius around the segment from -half_height to +half_height on local y */
	SIM_SHAPE_MESH,    /* a rigid triangle mesh (a closed one encloses a solid) */
	SIM_SHAPE_COUNT
} sim_shape;

typedef struct sim_obstacle_def {
	const char *name;
	sim_shape shape;
	vec3 position;
	versor orientation;     /* cglm quaternion x, y, z, w; default identity */
	vec3 half_extents;      /* box */
	float radius;           /* sphere, capsule */
	float half_height;      /* capsule */
	int vertex_count;       /* mesh, in the local frame */
	const float *positions; /* 3 floats per vertex */
	int triangle_count;
	const int *triangles;   /* 3 indices per triangle, counter-clockwise seen from outside */
	vec3 velocity;          /* m/s */
	vec3 angular_velocity;  /* rad/s, about position */
	float friction;         /* Coulomb coefficient; a cloth pair uses sqrt(mu_cloth mu_obstacle), or
	                         * its own (sim_world_set_pair_friction) */
	float thickness;        /* m, added to the cloth's own */
} sim_obstacle_def;

sim_obstacle_def sim_obstacle_def_default(sim_shape shape);
/* Returns the obstacle index (>= 0) or a negative sim_result. */
int sim_world_add_obstacle(sim_world *world, const sim_obstacle_def *def);
int sim_world_obstacle_count(const sim_world *world);
const sim_obstacle_def *sim_world_obstacle(const sim_world *world, int obstacle);
sim_result sim_world_set_obstacle_motion(sim_world *world, int obstacle, const vec3 velocity,
                                         const vec3 angular_velocity);
/* A schedule of linear velocities (the seed's rigid bodies, driven by one constrained
 * vertex): from time t on the obstacle moves with `velocity` until its next block.  Its
 * angular velocity is left as it is. */
sim_result sim_world_add_obstacle_velocity_block(sim_world *world, double t, int obstacle, const vec3 velocity);
/* The obstacle's current pose (it moves with its velocities as the world steps). */
sim_result sim_world_obstacle_pose(const sim_world *world, int obstacle, vec3 out_position, versor out_orientation);

/* A body the collision solver meets: a cloth object or an obstacle, by index. */
typedef struct sim_body {
	bool obstacle;
	int index;
} sim_body;

/* The friction coefficient of one pair of bodies: a cloth object with itself (its
 * self-contacts), with another cloth object, or with an obstacle.  For that pair it
 * replaces the geometric mean of the two bodies' own coefficients (the material's
 * friction, the obstacle's), in contacts, collisions and against spheres and capsules
 * alike.  mu >= 0 and finite; a negative mu removes the pair's entry.
 * SIM_ERROR_INVALID for an unknown body, two obstacles (they never touch) or a NaN. */
sim_result sim_world_set_pair_friction(sim_world *world, sim_body a, sim_body b, float mu);
/* The coefficient a pair uses: its entry, or else the geometric mean; NAN for a pair
 * sim_world_set_pair_friction refuses. */
float sim_world_pair_friction(const sim_world *world, sim_body a, sim_body b);

/* Counts, for the current state, pairs of cloth triangles that share no vertex and
 * intersect (exact predicates), and cloth vertices inside an obstacle (deeper than
 * 1e-6 m below its surface).  Either pointer may be NULL.  Costs a hierarchy traversal:
 * a check for tests and `tela run --check`, not for every frame. */
void sim_world_check(const sim_world *world, int *out_intersections, int *out_vertices_inside);
/* Counts, for the current state, cloth triangles that come closer to a sphere, capsule or
 * box than their separation (half the cloth's thickness plus the obstacle's) less
 * tolerance, measured from the whole triangle (its nearest point, not its vertices), or
 * that cross a triangle of a mesh obstacle (exact predicates); planes need no more than
 * sim_world_check's vertices.  out_min_clearance (may be NULL): the least distance less
 * separation over the triangles and obstacles measured, INFINITY without any.  -1 out of
 * memory. */
int sim_world_check_surface(const sim_world *world, double tolerance, double *out_min_clearance);

/* ---- stepping ------------------------------------------------------------------------------- */

/* Advances the world by dt seconds in def.substeps equal integrator steps.  dt must be
 * the same fixed step every call for a real-time loop; it is never frame-varying.
 * On SIM_ERROR_BLOWUP the world is rolled back to its state before the call and
 * sim_world_last_blowup() says where; on SIM_ERROR_OUT_OF_MEMORY (the implicit solver's
 * scratch could not grow) it is rolled back too. */
sim_result sim_world_step(sim_world *world, float dt);

const sim_stats *sim_world_stats(const sim_world *world);
const sim_blowup *sim_world_last_blowup(const sim_world *world);

/* Computes energies and strains of the current state without stepping. */
void sim_world_measure(const sim_world *world, sim_stats *out);

/* Recovery after a blow-up: zeroes the velocities of the object that failed so the
 * simulation can continue from the last good state. */
void sim_world_recover(sim_world *world, int object);

/* FNV-1a hash of positions and velocities (bit patterns), for determinism checks. */
uint64_t sim_world_state_hash(const sim_world *world);

/* ---- an integrator that runs outside the library (the GPU backend) --------------------------- */

/* What the external integrator gets for one substep: the world's own arrays, already
 * through step 1 (velocity constraints: x.w is the inverse mass the integrator must use,
 * 0 for a kinematic vertex, whose v is its constraint velocity) and step 2 (Verlet: x_prev
 * rebuilt as x - h v when the history was invalid).  It must overwrite x and v (xyz;
 * keep x.w) with the candidate end-of-substep state and, for Verlet, x_prev with the
 * start positions, exactly as the built-in scheme of def.integrator would.  When
 * def.strain_limit is on it may also limit the strain itself (Provot's rule, def.strain_tau,
 * v += the correction / h) and say so in strain_limited; the library then skips its own
 * pass for this substep. */
typedef struct sim_external_state {
	vec4 *x, *v, *x_prev;
	int n;
	int substep;        /* 0 .. def.substeps - 1 */
	bool history_valid; /* false: a multistep memory (Kang's last dv) must restart */
	bool strain_limited;    /* out: strain limiting done (stats.strain_iterations = strain_iterations) */
	int strain_iterations;  /* out */
} sim_external_state;

typedef sim_result (*sim_external_integrator)(void *user, sim_external_state *state, float h);

/* sim_world_step with def.integrator's update done by `integrate` instead: constraints,
 * history, strain limiting, collisions, the blow-up check, rollback and commit are
 * sim_world_step's own, so only the update itself can differ.  A result other than
 * SIM_OK from `integrate` rolls the step back and is returned. */
sim_result sim_world_step_external(sim_world *world, float dt, sim_external_integrator integrate, void *user);

/* Changes whenever what an external integrator copies once changes: objects, springs,
 * materials, masses, point forces, the world definition.  Unique in the process: no
 * other world ever has the same revision. */
uint64_t sim_world_revision(const sim_world *world);

typedef struct sim_spring_desc {
	int a, b; /* world vertex indices */
	float rest, k, kd;
	sim_spring_kind kind;
} sim_spring_desc;

/* Every spring of every object in the world's order (the order the forces add in);
 * out holds sim_world_spring_total entries. */
int sim_world_spring_total(const sim_world *world);
void sim_world_get_springs(const sim_world *world, sim_spring_desc *out);
/* Every triangle, 3 world vertex indices each, in the order wind forces add in. */
int sim_world_triangle_total(const sim_world *world);
const int *sim_world_triangles(const sim_world *world);

typedef struct sim_vertex_params {
	vec4 rest;        /* anchor position in xyz, anchor stiffness in w */
	vec4 point_force; /* N, w 0 */
	float mass;
	float anchor_damping;
} sim_vertex_params;

/* Per-vertex constants of the force model; out holds sim_world_vertex_count entries. */
void sim_world_get_vertex_params(const sim_world *world, sim_vertex_params *out);

/* ---- debug data of the collision pipeline ---------------------------------------------------- */

/* What sim_world_step records of its collision work, for the demo's debug views.  Off by
 * default; while off the pipeline only tests a flag once per stage (and on the paths
 * that apply an impulse), so its cost does not change.  docs/collisions.md, "Debug
 * data", says what each stage means and what recording costs. */
enum {
	SIM_DEBUG_PAIRS = 1u << 0,     /* every stage's pairs (sim_world_debug_pairs) */
	SIM_DEBUG_PREDICTED = 1u << 1, /* positions before collision response (sim_world_debug_predicted) */
};

/* Which test produced a pair. */
enum {
	SIM_PAIR_BROAD_PROXIMITY, /* candidate from the hierarchies for the contact test */
	SIM_PAIR_PROXIMITY,       /* within the separation at the start: got a repulsion impulse */
	SIM_PAIR_BROAD_COLLISION, /* candidate for continuous detection */
	SIM_PAIR_COLLISION,       /* continuous detection found a hit and applied an impulse */
	SIM_PAIR_STAGE_COUNT
};

/* What a pair's v[] holds. */
enum {
	SIM_PAIR_VERTEX_TRIANGLE, /* v[0] the vertex, v[1..3] the triangle */
	SIM_PAIR_EDGE_EDGE,       /* v[0] v[1] one edge, v[2] v[3] the other */
	SIM_PAIR_VERTEX_OBSTACLE, /* v[0] the vertex, v[1] the obstacle index (sphere, capsule); v[2] = v[3] = -1 */
	SIM_PAIR_KIND_COUNT
};

/* Vertex ids below sim_world_vertex_count are world vertices.  Plane, box and mesh
 * obstacles collide through their triangles, and their vertices follow: id
 * vertex_count + k is the k-th vertex of those obstacles taken in obstacle order, each
 * in its own vertex order (sim_world_debug_vertices gives their positions). */
typedef struct sim_debug_pair {
	uint8_t stage; /* SIM_PAIR_BROAD_PROXIMITY ... */
	uint8_t kind;  /* SIM_PAIR_VERTEX_TRIANGLE ... */
	int v[4];
} sim_debug_pair;

/* At most this many pairs are kept per step; the rest are dropped and reported. */
#define SIM_DEBUG_MAX_PAIRS 200000

/* Turns recording on or off (flags 0); takes effect from the next step.  Turning a kind
 * off drops what it recorded. */
void sim_world_set_debug(sim_world *world, unsigned flags);
unsigned sim_world_get_debug(const sim_world *world);
/* The pairs recorded by the last sim_world_step, even one that failed and was rolled
 * back (every substep, stage by stage in the order the pipeline ran them; a pair
 * appears each time a stage meets it).  *truncated
 * (may be NULL) says whether pairs were dropped at SIM_DEBUG_MAX_PAIRS.  0 and NULL when
 * not recorded. */
int sim_world_debug_pairs(const sim_world *world, const sim_debug_pair **out, bool *truncated);
/* Positions (w: inverse mass) after the integrator and strain limiting, before any
 * collision response, in the last substep of the last step; NULL when not recorded. */
const vec4 *sim_world_debug_predicted(const sim_world *world);
/* Number of vertex ids pairs can name: world vertices, then triangle-obstacle vertices. */
int sim_world_debug_vertex_count(const sim_world *world);
/* Positions of the triangle obstacles' vertices, ids sim_world_vertex_count on, at
 * their obstacle's current pose (w = 0); out[k] is id vertex_count + k.  Fills while
 * there is room (an obstacle's vertices all or none); returns how many there are. */
int sim_world_debug_obstacle_vertices(const sim_world *world, vec4 *out, int capacity);
/* The bounding boxes of the collision hierarchies (one per cloth object, then one per
 * plane, box or mesh obstacle) as last fitted by the pipeline: over each vertex's path
 * extrapolated to the end of the broad phase's window, padded by the separation and a
 * slack.  Depth 0 is a tree's root;
 * below its leaves (up to four triangles each) come the triangles' own boxes, one level
 * deeper.  Writes those with depth in [depth_min, depth_max] as {min x, y, z, max x, y,
 * z, depth}, tree by tree, each in pre-order (a parent before its children), up to
 * capacity; returns how many there are.  0 while the pipeline has not run. */
int sim_world_debug_boxes(const sim_world *world, int depth_min, int depth_max, float (*out)[7], int capacity);
/* The deepest level sim_world_debug_boxes can return (-1: no hierarchy). */
int sim_world_debug_tree_depth(const sim_world *world);

#ifdef __cplusplus
}
#endif

#endif
